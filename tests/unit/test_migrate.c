/*
 * Minimal reconfiguration on migration (reconfig/migrate.c) on XGFTs
 * generated here in the paper's notation (roots level 0, hosts level n,
 * m_i children per level-(i-1) node, w_i parents per level-i node):
 * FTreeMinRC marks as many switches as the closed form of the skyline (the
 * vSwitch paper, Section 6.2) says (computed here from the leaves' digits,
 * not by walking), the digest's table among them; a same-leaf migration
 * writes one block (dynamic) or at most two (prepopulated) on one switch; no
 * migration writes more than 2 x switches blocks; full writes every block of
 * every switch; the new tables take the VM's LID to the destination from
 * every switch and leave every other LID's entries as they were; a fabric
 * that is not a fat tree falls back to ItRC.
 *
 * On a hypervisor fabric (vSwitches "V-*" with a PF and 4 VFs under the
 * leaves of a 2-level tree): migrate_plan_vm writes the physical and the
 * vSwitch blocks apart, a same-leaf move 1 physical block (dynamic) or at
 * most 2 (prepopulated) on the leaf, a move between VFs of one vSwitch no
 * physical block, never more than 2 x physical switches; the VM's LID
 * reaches the destination VF from every switch, vSwitches included;
 * migrate_plan_boot copies the PF's column exactly and writes only what
 * differs; migrate_plan_drop drops the LID everywhere; the counting
 * transport gets every block with the tables' payload.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconfig/migrate.h"
#include "sm/write/migcount.h"
#include "routing/engine.h"
#include "sm/base/fabric.h"
#include "sm/model/lids.h"
#include "sm/base/topo.h"
#include "vswitch_testlib.h"

extern const struct routing_engine ftree_engine;

#define XMAX 6

struct xgft {
	int n, m[XMAX + 1], w[XMAX + 1];	/* 1-based as in the paper */
};

/* Nodes at level l (0 = roots, n = hosts). */
static long level_count(const struct xgft *x, int l)
{
	long c = 1;
	for (int i = 1; i <= x->n; i++)
		c *= i <= l ? x->m[i] : x->w[i];
	return c;
}

static int radix(const struct xgft *x, int l, int i)
{
	return i <= l ? x->m[i] : x->w[i];
}

static void decode(const struct xgft *x, int l, long idx, int *d)
{
	for (int i = x->n; i >= 1; i--) {
		d[i] = (int)(idx % radix(x, l, i));
		idx /= radix(x, l, i);
	}
}

static long encode(const struct xgft *x, int l, const int *d)
{
	long idx = 0;
	for (int i = 1; i <= x->n; i++)
		idx = idx * radix(x, l, i) + d[i];
	return idx;
}

static void node_name(const struct xgft *x, int l, long idx, char *buf,
		      size_t len)
{
	if (l == x->n)
		snprintf(buf, len, "H%ld", idx);
	else
		snprintf(buf, len, "S%d-%ld", l, idx);
}

/* Net text of x: switch at level l: ports 1..m_{l+1} down, then w_l up. */
static char *xgft_text(const struct xgft *x)
{
	size_t cap = 1 << 16, len = 0;
	char *s = malloc(cap), a[32], b[32];
	int d[XMAX + 1], e[XMAX + 1];

	ck_assert_ptr_nonnull(s);
#define PUT(...) do { \
	while (len + 256 > cap) { \
		cap *= 2; \
		s = realloc(s, cap); \
		ck_assert_ptr_nonnull(s); \
	} \
	len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__); \
} while (0)
	for (int l = 0; l <= x->n; l++) {
		for (long i = 0; i < level_count(x, l); i++) {
			int host = l == x->n;
			int down = host ? 0 : x->m[l + 1], up = l ? x->w[l] : 0;
			node_name(x, l, i, a, sizeof(a));
			PUT("%s=0x%llx\n%s\t%d \"%s\"\n", host ? "caguid" : "switchguid",
			    (unsigned long long)((host ? 0x100000000ull :
					(uint64_t)(l + 1) << 24) + (uint64_t)i),
			    host ? "Hca" : "Switch", down + up, a);
			decode(x, l, i, d);
			for (int c = 0; c < down; c++) {
				memcpy(e, d, sizeof(e));
				e[l + 1] = c;
				node_name(x, l + 1, encode(x, l + 1, e), b, sizeof(b));
				/* the child's port up to us: our digit l + 1 */
				int cdown = l + 1 == x->n ? 0 : x->m[l + 2];
				PUT("[%d]\t\"%s\"[%d]\n", 1 + c, b, cdown + 1 + d[l + 1]);
			}
			for (int p = 0; p < up; p++) {
				memcpy(e, d, sizeof(e));
				e[l] = p;
				node_name(x, l - 1, encode(x, l - 1, e), b, sizeof(b));
				PUT("[%d]\t\"%s\"[%d]\n", down + 1 + p, b, 1 + d[l]);
			}
			PUT("\n");
		}
	}
#undef PUT
	return s;
}

struct fx {
	struct xgft x;
	struct fabric f;
	struct lft_tables t;
};

static void fx_build(struct fx *z, const struct xgft *x)
{
	char err[256] = "";
	struct lid_report rep;
	struct route_opts o = { 0 };
	char *text = xgft_text(x);

	z->x = *x;
	fabric_init(&z->f);
	if (topo_parse_string(&z->f, text, "xgft.net", err, sizeof(err)) != 0)
		ck_abort_msg("parse: %s", err);
	free(text);
	ck_assert_int_eq(lids_assign(&z->f, NULL, 0, &rep), 0);
	ck_assert_int_eq(lft_tables_alloc(&z->t, &z->f), 0);
	if (ftree_engine.route(&z->f, &o, &z->t, err, sizeof(err)) != 0)
		ck_abort_msg("ftree: %s", err);
	uint32_t sw = 0;
	for (int l = 0; l < x->n; l++)
		sw += (uint32_t)level_count(x, l);
	ck_assert_uint_eq(z->t.n_sw, sw);
}

static void fx_free(struct fx *z)
{
	lft_tables_free(&z->t);
	fabric_free(&z->f);
}

/* Host h's end port. */
static uint32_t host_port(const struct fx *z, long h)
{
	char name[32];
	snprintf(name, sizeof(name), "H%ld", h);
	for (uint32_t i = 0; i < z->f.n_nodes; i++)
		if (!strcmp(z->f.nodes[i].desc, name))
			return fabric_port(&z->f, i, 1);
	ck_abort_msg("no host %s", name);
	return FAB_NONE;
}

/*
 * The skyline's size in closed form (the vSwitch paper, Section 6.2: the top
 * switches of every sub-tree the migration crosses, up to the common
 * ancestors) from the two hosts' digits: leaf level L = n - 1, c = common
 * prefix of the leaves' a-digits.
 */
static uint32_t closed_form(const struct xgft *x, long h1, long h2)
{
	int d1[XMAX + 1], d2[XMAX + 1], L = x->n - 1, c = 0;
	decode(x, x->n, h1, d1);
	decode(x, x->n, h2, d2);
	while (c < L && d1[c + 1] == d2[c + 1])
		c++;
	if (c == L)
		return 1;
	uint32_t sum = 2, p;
	for (int l = c + 1; l <= L - 1; l++) {
		p = 1;
		for (int i = l + 1; i <= L; i++)
			p *= (uint32_t)x->w[i];
		sum += 2 * p;
	}
	p = 1;
	for (int i = c + 1; i <= L; i++)
		p *= (uint32_t)x->w[i];
	return sum + p;
}

/* The port where following t from switch row r for lid ends (a CA port). */
static uint32_t follow(const struct fabric *f, const struct lft_tables *t,
		       uint32_t r, uint32_t lid)
{
	for (uint32_t hops = 0; hops <= t->n_sw; hops++) {
		uint32_t node = t->sw_node[r];
		uint8_t p = lft_row(t, r)[lid];
		if (p == 0 || p == LFT_DROP)
			return FAB_NONE;
		uint32_t rem = fabric_portp(f, node, p)->remote;
		if (rem == FAB_NONE)
			return FAB_NONE;
		if (f->nodes[f->ports[rem].node].type != FAB_SWITCH)
			return rem;
		r = t->row_of_node[f->ports[rem].node];
	}
	return FAB_NONE;
}

/*
 * After a move from end port sp to dp (tables old -> nt): the VM's LID
 * reaches dp from every switch (and, prepopulated, the destination's LID
 * sp); nothing else changed; every change is in a written block flagged
 * as its row is (vSwitch or not), on a marked row when marked.
 * (plain ifs: a ck_assert per entry costs a write to check's pipe)
 */
static void check_moved(const struct fabric *f, const struct lft_tables *old,
			const struct lft_tables *nt, const struct migration *m,
			int scheme, uint32_t sp, uint32_t dp, int marked)
{
	for (uint32_t r = 0; r < nt->n_sw; r++) {
		if (follow(f, nt, r, m->vm_lid) != dp)
			ck_abort_msg("row %u (%s): VM LID %u does not reach the destination",
				     r, f->nodes[nt->sw_node[r]].desc, m->vm_lid);
		if (scheme == MIG_PREPOPULATED && follow(f, nt, r, m->dst_lid) != sp)
			ck_abort_msg("row %u: LID %u does not reach the source", r,
				     m->dst_lid);
	}
	for (uint32_t r = 0; r < nt->n_sw; r++) {
		uint8_t vs = (uint8_t)fabric_is_vswitch(f, nt->sw_node[r]);
		for (uint32_t lid = 0; lid <= nt->max_lid; lid++) {
			uint8_t a = lft_row(old, r)[lid], b = lft_row(nt, r)[lid];
			int moved = lid == m->vm_lid ||
				    (scheme == MIG_PREPOPULATED && lid == m->dst_lid);
			if (!moved && a != b)
				ck_abort_msg("row %u LID %u: %u became %u", r, lid, a, b);
			if (a == b)
				continue;
			if (marked && !m->marked[r])
				ck_abort_msg("row %u changed, not marked", r);
			int found = 0;
			for (uint32_t i = 0; i < m->n_w; i++)
				found |= m->w[i].row == r && m->w[i].block == lid / 64 &&
					 m->w[i].vswitch == vs;
			if (!found)
				ck_abort_msg("row %u LID %u changed, block not written", r, lid);
		}
	}
}

/*
 * Migrates h1 to h2 on a copy of z's tables and checks everything that
 * must hold of any migration; returns the migration (caller frees).
 */
static void check_one(const struct fx *z, long h1, long h2, int scheme,
		      int method, struct migration *m)
{
	char err[256] = "";
	struct lft_tables nt = z->t;
	size_t sz = (size_t)z->t.n_sw * (z->t.max_lid + 1);
	uint32_t sp = host_port(z, h1), dp = host_port(z, h2);

	nt.port = malloc(sz);
	ck_assert_ptr_nonnull(nt.port);
	memcpy(nt.port, z->t.port, sz);
	if (migrate_plan(&z->f, &nt, sp, dp, scheme, method, NULL, m, err,
			 sizeof(err)) != 0)
		ck_abort_msg("migrate_plan: %s", err);
	ck_assert_uint_eq(m->vm_lid, z->f.ports[sp].lid);
	ck_assert_uint_eq(m->dst_lid, z->f.ports[dp].lid);
	ck_assert_uint_le(m->lft_blocks, method == MIG_FULL ?
			  z->t.n_sw * (z->t.max_lid / 64 + 1) + m->order.split :
			  2 * z->t.n_sw + m->order.split);
	ck_assert_uint_le(m->switches_written, m->switches_marked);
	check_moved(&z->f, &z->t, &nt, m, scheme, sp, dp, 1);
	/*
	 * writes in wave order, no (row, block) twice but a block split by
	 * the order (its entries due in two waves: first mixed, then whole)
	 */
	for (uint32_t i = 1; i < m->n_w; i++)
		if (m->w[i - 1].wave > m->w[i].wave)
			ck_abort_msg("write %u: wave %u after wave %u", i, m->w[i].wave,
				     m->w[i - 1].wave);
	for (uint32_t i = 0; i < m->n_w; i++)
		for (uint32_t j = i + 1; j < m->n_w && method != MIG_FULL; j++)
			if (m->w[i].row == m->w[j].row &&
			    m->w[i].block == m->w[j].block &&
			    (!m->w[i].mixed || m->w[i].wave >= m->w[j].wave))
				ck_abort_msg("row %u block %u written twice",
					     m->w[i].row, m->w[i].block);
	free(nt.port);
}

/* Every listed pair, both schemes, FTreeMinRC: marked = the closed form. */
static void check_marks(const struct xgft *x, const long (*pairs)[2], int np,
			const uint32_t *want)
{
	struct fx z;
	fx_build(&z, x);
	for (int i = 0; i < np; i++)
		for (int s = 0; s < 2; s++) {
			struct migration m;
			check_one(&z, pairs[i][0], pairs[i][1], s, MIG_FTREEMINRC, &m);
			ck_assert_int_eq(m.method, MIG_FTREEMINRC);
			ck_assert_uint_eq(m.switches_marked,
					  closed_form(x, pairs[i][0], pairs[i][1]));
			if (want)
				ck_assert_uint_eq(m.switches_marked, want[i]);
			migration_free(&m);
		}
	fx_free(&z);
}

/* 324 hosts, 18 leaves x 18, 18 spines: XGFT(2; 18,18; 18,1). */
START_TEST(t_324)
{
	struct xgft x = { 2, { 0, 18, 18 }, { 0, 18, 1 } };
	const long pairs[][2] = { { 0, 323 }, { 0, 1 }, { 17, 18 }, { 40, 300 } };
	const uint32_t want[] = { 20, 1, 20, 20 };
	check_marks(&x, pairs, 4, want);
}
END_TEST

/* Fig. 4/5: XGFT(4; 2,2,2,2; 2,2,2,1), leaves 3.0.0.0 and 3.0.1.1: 10. */
START_TEST(t_fig5)
{
	struct xgft x = { 4, { 0, 2, 2, 2, 2 }, { 0, 2, 2, 2, 1 } };
	/* host digits a1 a2 a3 a4: leaf 000 -> H0, leaf 011 -> 0110b = H6 */
	const long pairs[][2] = { { 0, 6 }, { 0, 1 }, { 0, 15 }, { 3, 2 }, { 4, 2 } };
	const uint32_t want[] = { 10, 1, 2 + 8 + 4 + 8, 1, 2 + 4 + 4 };
	check_marks(&x, pairs, 5, want);
}
END_TEST

/* 4-ary-2-full XGFT(2; 8,4; 4,1): 6 of 12; 8-ary-3: 82; 16-ary-2: 18. */
START_TEST(t_kary)
{
	struct xgft a = { 2, { 0, 8, 4 }, { 0, 4, 1 } };
	struct xgft b = { 3, { 0, 8, 8, 8 }, { 0, 8, 8, 1 } };
	struct xgft c = { 2, { 0, 16, 16 }, { 0, 16, 1 } };
	struct xgft d = { 3, { 0, 8, 4, 4 }, { 0, 4, 4, 1 } };	/* 4-ary-3-full */
	const long pa[][2] = { { 0, 31 }, { 5, 6 } };
	const uint32_t wa[] = { 6, 1 };
	const long pb[][2] = { { 0, 511 }, { 0, 63 }, { 9, 10 } };
	const uint32_t wb[] = { 82, 2 + 8, 1 };
	const long pc[][2] = { { 0, 255 } };
	const uint32_t wc[] = { 18 };
	const long pd[][2] = { { 0, 127 } };
	const uint32_t wd[] = { 26 };
	check_marks(&a, pa, 2, wa);
	check_marks(&b, pb, 3, wb);
	check_marks(&c, pc, 1, wc);
	check_marks(&d, pd, 1, wd);
}
END_TEST

/* 11664 hosts: XGFT(3; 36,18,18; 18,18,1), 1620 switches. */
START_TEST(t_11664)
{
	struct xgft x = { 3, { 0, 36, 18, 18 }, { 0, 18, 18, 1 } };
	const long pairs[][2] = { { 0, 11663 }, { 0, 323 }, { 0, 17 } };
	const uint32_t want[] = { 362, 20, 1 };
	check_marks(&x, pairs, 3, want);
}
END_TEST

/* Same leaf: one block on one switch (dynamic), at most two (prepopulated). */
START_TEST(t_same_leaf)
{
	struct xgft x = { 2, { 0, 18, 18 }, { 0, 18, 1 } };
	struct fx z;
	fx_build(&z, &x);
	for (int method = MIG_FTREEMINRC; method <= MIG_FTREEMINRC; method++)
		for (long h = 0; h < 324; h += 37) {
			long g = h - h % 18 + (h + 5) % 18;	/* same leaf */
			struct migration m;
			check_one(&z, h, g, MIG_DYNAMIC, method, &m);
			ck_assert_uint_eq(m.lft_blocks, 1);
			ck_assert_uint_eq(m.switches_written, 1);
			ck_assert_uint_eq(m.w[0].row, m.src_leaf);
			migration_free(&m);
			check_one(&z, h, g, MIG_PREPOPULATED, method, &m);
			ck_assert_uint_le(m.lft_blocks, 2);
			ck_assert_uint_ge(m.lft_blocks, 1);
			ck_assert_uint_eq(m.switches_written, 1);
			ck_assert_uint_eq(m.lft_blocks,
					  1u + (m.vm_lid / 64 != m.dst_lid / 64));
			migration_free(&m);
		}
	fx_free(&z);
}
END_TEST

/*
 * Full: every block of every switch.  ItRC prepopulated across leaves on
 * a 2-level tree, hosts at different positions of their leaves and LIDs
 * in different blocks: every switch differs, 2 x switches.  The
 * destination leaf is written before the source leaf.
 */
START_TEST(t_full_itrc)
{
	struct xgft x = { 2, { 0, 18, 18 }, { 0, 18, 1 } };
	struct fx z;
	struct migration m;
	fx_build(&z, &x);
	uint32_t blocks = z.t.max_lid / 64 + 1;
	ck_assert_uint_eq(z.t.max_lid, 360);
	check_one(&z, 0, 300, MIG_PREPOPULATED, MIG_FULL, &m);
	ck_assert_uint_eq(m.lft_blocks, 36 * blocks);
	ck_assert_uint_eq(m.lft_blocks, 216);
	migration_free(&m);
	check_one(&z, 0, 300, MIG_PREPOPULATED, MIG_ITRC, &m);
	ck_assert_uint_ne(m.vm_lid / 64, m.dst_lid / 64);
	ck_assert_uint_eq(m.lft_blocks, 72);
	uint32_t first_src = UINT32_MAX, first_dst = UINT32_MAX;
	for (uint32_t i = 0; i < m.n_w; i++) {
		if (m.w[i].row == m.src_leaf && first_src == UINT32_MAX)
			first_src = i;
		if (m.w[i].row == m.dst_leaf && first_dst == UINT32_MAX)
			first_dst = i;
	}
	ck_assert_uint_eq(first_dst, 0);
	ck_assert_uint_lt(first_dst, first_src);
	migration_free(&m);
	fx_free(&z);
}
END_TEST

/* A ring of switches is no fat tree: ftreeminrc falls back to itrc. */
START_TEST(t_fallback)
{
	const char *text =
		"switchguid=0x10\nSwitch\t3 \"A\"\n[1]\t\"B\"[2]\n[2]\t\"C\"[1]\n[3]\t\"HA\"[1]\n\n"
		"switchguid=0x20\nSwitch\t3 \"B\"\n[1]\t\"C\"[2]\n[2]\t\"A\"[1]\n[3]\t\"HB\"[1]\n\n"
		"switchguid=0x30\nSwitch\t3 \"C\"\n[1]\t\"A\"[2]\n[2]\t\"B\"[1]\n[3]\t\"HC\"[1]\n\n"
		"caguid=0x100\nHca\t1 \"HA\"\n[1]\t\"A\"[3]\n\n"
		"caguid=0x200\nHca\t1 \"HB\"\n[1]\t\"B\"[3]\n\n"
		"caguid=0x300\nHca\t1 \"HC\"\n[1]\t\"C\"[3]\n\n";
	char err[256] = "";
	struct fabric f;
	struct lft_tables t;
	struct lid_report rep;
	struct route_opts o = { 0 };
	struct migration m;
	extern const struct routing_engine minhop_engine;

	fabric_init(&f);
	ck_assert_int_eq(topo_parse_string(&f, text, "ring.net", err, sizeof(err)), 0);
	ck_assert_int_eq(lids_assign(&f, NULL, 0, &rep), 0);
	ck_assert_int_eq(lft_tables_alloc(&t, &f), 0);
	ck_assert_int_eq(minhop_engine.route(&f, &o, &t, err, sizeof(err)), 0);
	uint32_t ha = FAB_NONE, hc = FAB_NONE;
	for (uint32_t i = 0; i < f.n_nodes; i++) {
		if (!strcmp(f.nodes[i].desc, "HA"))
			ha = fabric_port(&f, i, 1);
		if (!strcmp(f.nodes[i].desc, "HC"))
			hc = fabric_port(&f, i, 1);
	}
	ck_assert_int_eq(migrate_plan(&f, &t, ha, hc, MIG_DYNAMIC, MIG_FTREEMINRC,
				      NULL, &m, err, sizeof(err)), 0);
	ck_assert_int_eq(m.fallback, 1);
	ck_assert_int_eq(m.method, MIG_ITRC);
	ck_assert_str_ne(m.note, "");
	ck_assert_uint_eq(m.switches_marked, 3);
	ck_assert_uint_eq(m.switches_written, 3);
	migration_free(&m);
	/* a port without a LID is refused */
	ck_assert_int_eq(migrate_plan(&f, &t, fabric_port(&f, 0, 1), hc, MIG_DYNAMIC,
				      MIG_ITRC, NULL, &m, err, sizeof(err)), -1);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

/* ---- vSwitch fabrics ---- */

struct hv {
	struct fabric f;
	struct lft_tables t;
	uint32_t *rank;		/* per row: spines 0, leaves 1, vSwitches 2 */
	uint32_t phys;		/* physical switches */
};

static void hv_build(struct hv *h)
{
	char err[256] = "", *text = hv_text();
	struct lid_report rep;
	struct route_opts o = { 0 };

	fabric_init(&h->f);
	if (topo_parse_string(&h->f, text, "hv.net", err, sizeof(err)) != 0)
		ck_abort_msg("parse: %s", err);
	free(text);
	hv_mark(&h->f);
	ck_assert_int_eq(lids_assign(&h->f, NULL, 0, &rep), 0);
	ck_assert_uint_gt(h->f.max_lid, 64);	/* two LFT blocks */
	ck_assert_int_eq(lft_tables_alloc(&h->t, &h->f), 0);
	if (ftree_engine.route(&h->f, &o, &h->t, err, sizeof(err)) != 0)
		ck_abort_msg("ftree: %s", err);
	h->rank = malloc(h->t.n_sw * sizeof(*h->rank));
	ck_assert_ptr_nonnull(h->rank);
	h->phys = 0;
	for (uint32_t r = 0; r < h->t.n_sw; r++) {
		char c = h->f.nodes[h->t.sw_node[r]].desc[0];
		h->rank[r] = c == 'S' ? 0 : c == 'L' ? 1 : 2;
		h->phys += c != 'V';
	}
	ck_assert_uint_eq(h->phys, 2 + HV_LEAVES);
}

static void hv_free(struct hv *h)
{
	free(h->rank);
	lft_tables_free(&h->t);
	fabric_free(&h->f);
}

static uint32_t hv_node(const struct hv *h, const char *name)
{
	return hv_find(&h->f, name);
}

static uint32_t hv_vf(const struct hv *h, int l, int i, int k)
{
	return hv_vf_port(&h->f, l, i, k);
}

static int is_vs_row(const struct hv *h, uint32_t r)
{
	return fabric_is_vswitch(&h->f, h->t.sw_node[r]);
}

/*
 * Plans moving the VM on src to dst on a copy of h's tables, checks what
 * must hold of any such move, and counts it on the counting transport.
 */
static void check_vm(struct hv *h, uint32_t src, uint32_t dst, int scheme,
		     int method, struct migration *m)
{
	char err[256] = "";
	struct lft_tables nt;
	struct mig_count k;
	int vf = -1;
	uint32_t dvs = fabric_vswitch_of(&h->f, dst, &vf);

	ck_assert_int_eq(migrate_tables_copy(&nt, &h->t, &h->f, 0), 0);
	if (migrate_plan_vm(&h->f, &nt, src, dst, scheme, method, h->rank, m,
			    err, sizeof(err)) != 0)
		ck_abort_msg("migrate_plan_vm: %s", err);
	ck_assert_int_eq(m->kind, MIG_MOVE);
	ck_assert_uint_eq(m->vm_lid, h->f.ports[src].lid);
	ck_assert_uint_eq(m->dst_lid, scheme == MIG_DYNAMIC ?
			  h->f.ports[fabric_vswitch_pf(&h->f, dvs)].lid :
			  h->f.ports[dst].lid);
	ck_assert_uint_le(m->lft_blocks, 2 * h->phys + m->order.split);
	ck_assert_uint_le(m->switches_written, h->phys);
	if (method != MIG_FULL)
		ck_assert_uint_le(m->vswitches_written, 2);
	ck_assert_uint_eq(m->lft_blocks + m->vswitch_blocks, m->n_w);
	check_moved(&h->f, &h->t, &nt, m, scheme, src, dst, 0);
	int dvs_first = 0;
	for (uint32_t i = 0; i < m->n_w; i++) {
		if (m->w[i].vswitch != is_vs_row(h, m->w[i].row))
			ck_abort_msg("write %u: vswitch flag %u on row %u", i,
				     m->w[i].vswitch, m->w[i].row);
		if (i && m->w[i - 1].wave > m->w[i].wave)
			ck_abort_msg("write %u: wave %u after wave %u", i,
				     m->w[i].wave, m->w[i - 1].wave);
		/*
		 * the destination vSwitch in the first LFT wave (its next hop
		 * is the VF), after the VF's PortInfo (wave 0); every write
		 * before the source VF's (src_wave)
		 */
		if (m->w[i].vswitch && h->t.sw_node[m->w[i].row] == dvs &&
		    m->w[i].wave == m->lft_first)
			dvs_first = 1;
		if (m->w[i].wave < 1 || m->w[i].wave >= m->src_wave)
			ck_abort_msg("write %u in wave %u: the VF PortInfos go in 0 and %u",
				     i, m->w[i].wave, m->src_wave);
	}
	ck_assert_msg(dvs_first, "the destination vSwitch not in the first LFT wave");
	ck_assert_uint_eq(m->ord_lid[0], m->vm_lid);
	ck_assert_uint_eq(m->ord_wave[(size_t)h->t.row_of_node[dvs] * m->ord_n], m->lft_first);
	/* the same writes through the executor, payloads checked */
	if (migcount_run(&h->f, &nt, m, &k, err, sizeof(err)) != 0)
		ck_abort_msg("migcount_run: %s", err);
	ck_assert_uint_eq(k.lft_blocks, m->lft_blocks + m->vswitch_blocks);
	ck_assert_uint_eq(k.vswitch_blocks, m->vswitch_blocks);
	ck_assert_uint_eq(k.switches, m->switches_written);
	ck_assert_uint_eq(k.vswitches, m->vswitches_written);
	ck_assert_uint_eq(k.failed, 0);
	lft_tables_free(&nt);
}

START_TEST(t_vm_same_leaf)
{
	struct hv h;
	struct migration m;
	hv_build(&h);
	uint32_t src = hv_vf(&h, 0, 0, 0), dst = hv_vf(&h, 0, 1, 2);
	uint32_t leaf = h.t.row_of_node[hv_node(&h, "L0")];

	check_vm(&h, src, dst, MIG_DYNAMIC, MIG_FTREEMINRC, &m);
	ck_assert_uint_eq(m.switches_marked, 1);
	ck_assert_uint_eq(m.lft_blocks, 1);
	ck_assert_uint_eq(m.switches_written, 1);
	for (uint32_t i = 0; i < m.n_w; i++)
		if (!m.w[i].vswitch)
			ck_assert_uint_eq(m.w[i].row, leaf);
	/* both vSwitches, one block each: the VM's LID down, and up */
	ck_assert_uint_eq(m.vswitch_blocks, 2);
	ck_assert_uint_eq(m.vswitches_written, 2);
	migration_free(&m);

	check_vm(&h, src, dst, MIG_PREPOPULATED, MIG_FTREEMINRC, &m);
	ck_assert_uint_ge(m.lft_blocks, 1);
	ck_assert_uint_le(m.lft_blocks, 2);
	ck_assert_uint_eq(m.switches_written, 1);
	ck_assert_uint_eq(m.lft_blocks, m.vm_lid / 64 == m.dst_lid / 64 ? 1 : 2);
	/*
	 * each vSwitch's block twice when the LIDs share it: its entry to
	 * the VF at once, the one up after the leaf (which waits for both)
	 */
	ck_assert_uint_eq(m.order.split, m.vm_lid / 64 == m.dst_lid / 64 ? 2 : 0);
	ck_assert_uint_eq(m.vswitch_blocks, 2 * m.lft_blocks + m.order.split);
	migration_free(&m);

	/* VF to VF on one vSwitch: the leaf already sends both LIDs there */
	check_vm(&h, src, hv_vf(&h, 0, 0, 3), MIG_DYNAMIC, MIG_FTREEMINRC, &m);
	ck_assert_uint_eq(m.lft_blocks, 0);
	ck_assert_uint_eq(m.vswitch_blocks, 1);
	migration_free(&m);
	check_vm(&h, src, hv_vf(&h, 0, 0, 3), MIG_PREPOPULATED, MIG_FTREEMINRC, &m);
	ck_assert_uint_eq(m.lft_blocks, 0);
	ck_assert_uint_eq(m.vswitches_written, 1);
	migration_free(&m);
	hv_free(&h);
}
END_TEST

START_TEST(t_vm_any)
{
	struct hv h;
	struct migration m;
	hv_build(&h);
	uint32_t nblocks = h.t.max_lid / 64 + 1;
	for (int l = 0; l < HV_LEAVES; l++)
		for (int i = 0; i < HV_PER_LEAF; i++)
			for (int s = 0; s < 2; s++)
				for (int me = 0; me < 2; me++) {
					uint32_t src = hv_vf(&h, 0, 0, 0);
					uint32_t dst = hv_vf(&h, l, i, 1);
					check_vm(&h, src, dst, s,
						 me ? MIG_ITRC : MIG_FTREEMINRC, &m);
					if (l)	/* another leaf: both leaves, the spines */
						ck_assert_uint_eq(m.switches_marked,
								  me ? h.phys : 4);
					migration_free(&m);
				}
	/* full: every block of every switch, the vSwitches' apart */
	check_vm(&h, hv_vf(&h, 0, 0, 0), hv_vf(&h, 3, 2, 3), MIG_DYNAMIC,
		 MIG_FULL, &m);
	ck_assert_uint_eq(m.lft_blocks, h.phys * nblocks);
	ck_assert_uint_eq(m.vswitch_blocks, (h.t.n_sw - h.phys) * nblocks);
	migration_free(&m);
	/* not VFs: refused */
	char err[128];
	uint32_t host = fabric_port(&h.f, hv_node(&h, "H1"), 1);
	struct lft_tables nt;
	ck_assert_int_eq(migrate_tables_copy(&nt, &h.t, &h.f, 0), 0);
	ck_assert_int_eq(migrate_plan_vm(&h.f, &nt, host, hv_vf(&h, 0, 0, 0),
					 MIG_DYNAMIC, MIG_ITRC, NULL, &m, err,
					 sizeof(err)), -1);
	ck_assert_int_eq(migrate_plan_vm(&h.f, &nt, hv_vf(&h, 0, 0, 0),
					 fabric_port(&h.f, hv_node(&h, "P-1-1"), 1),
					 MIG_DYNAMIC, MIG_ITRC, NULL, &m, err,
					 sizeof(err)), -1);
	ck_assert(memcmp(nt.port, h.t.port, (size_t)nt.n_sw * (nt.max_lid + 1)) == 0);
	lft_tables_free(&nt);
	hv_free(&h);
}
END_TEST

START_TEST(t_vm_boot_drop)
{
	struct hv h;
	struct migration m;
	struct lft_tables nt;
	struct mig_count k;
	char err[256] = "";
	hv_build(&h);
	uint32_t vf = hv_vf(&h, 2, 1, 3), lid = h.f.max_lid + 1;
	uint32_t vs = hv_node(&h, "V-2-1");
	uint32_t pf = h.f.ports[fabric_vswitch_pf(&h.f, vs)].lid;

	/* a dynamic VM on an idle VF takes a new LID above the tables */
	ck_assert_int_eq(migrate_tables_copy(&nt, &h.t, &h.f, lid), 0);
	ck_assert_uint_eq(nt.max_lid, lid);
	for (uint32_t r = 0; r < nt.n_sw; r++) {
		ck_assert(memcmp(lft_row(&nt, r), lft_row(&h.t, r), h.t.max_lid + 1) == 0);
		ck_assert_uint_eq(lft_row(&nt, r)[lid], LFT_DROP);
	}
	ck_assert_int_eq(migrate_plan_boot(&h.f, &nt, vf, lid, &m, err, sizeof(err)), 0);
	ck_assert_int_eq(m.kind, MIG_BOOT);
	ck_assert_uint_eq(m.dst_lid, pf);
	for (uint32_t r = 0; r < nt.n_sw; r++) {
		uint32_t node = nt.sw_node[r];
		uint8_t want = !is_vs_row(&h, r) ? lft_row(&nt, r)[pf] :
			       node == vs ? h.f.ports[h.f.ports[vf].remote].num :
			       h.f.ports[fabric_vswitch_uplink(&h.f, node)].num;
		ck_assert_uint_eq(lft_row(&nt, r)[lid], want);
		ck_assert(memcmp(lft_row(&nt, r), lft_row(&h.t, r), h.t.max_lid + 1) == 0);
	}
	/* every switch had LFT_DROP there: one block each */
	ck_assert_uint_eq(m.lft_blocks, h.phys);
	ck_assert_uint_eq(m.switches_written, h.phys);
	ck_assert_uint_eq(m.vswitch_blocks, h.t.n_sw - h.phys);
	/* the tables grew past the model's max_lid: LID-route to switches only */
	if (migcount_run(&h.f, &nt, &m, &k, err, sizeof(err)) != 0)
		ck_abort_msg("migcount_run: %s", err);
	ck_assert_uint_eq(k.lft_blocks, m.lft_blocks + m.vswitch_blocks);
	migration_free(&m);
	/* again: nothing differs, nothing written */
	ck_assert_int_eq(migrate_plan_boot(&h.f, &nt, vf, lid, &m, err, sizeof(err)), 0);
	ck_assert_uint_eq(m.n_w, 0);
	migration_free(&m);
	/* the PF's LID, a LID the tables lack, a PF port: refused */
	ck_assert_int_eq(migrate_plan_boot(&h.f, &nt, vf, pf, &m, err, sizeof(err)), -1);
	ck_assert_int_eq(migrate_plan_boot(&h.f, &nt, vf, lid + 1, &m, err, sizeof(err)), -1);
	ck_assert_int_eq(migrate_plan_boot(&h.f, &nt, fabric_vswitch_pf(&h.f, vs), lid,
					   &m, err, sizeof(err)), -1);

	/* destroyed: dropped everywhere, every switch written once */
	ck_assert_int_eq(migrate_plan_drop(&h.f, &nt, lid, &m, err, sizeof(err)), 0);
	ck_assert_int_eq(m.kind, MIG_DROP);
	for (uint32_t r = 0; r < nt.n_sw; r++)
		ck_assert_uint_eq(lft_row(&nt, r)[lid], LFT_DROP);
	ck_assert_uint_eq(m.lft_blocks, h.phys);
	ck_assert_uint_eq(m.vswitch_blocks, h.t.n_sw - h.phys);
	migration_free(&m);
	ck_assert_int_eq(migrate_plan_drop(&h.f, &nt, lid, &m, err, sizeof(err)), 0);
	ck_assert_uint_eq(m.n_w, 0);
	migration_free(&m);
	lft_tables_free(&nt);
	hv_free(&h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("migrate");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, t_324);
	tcase_add_test(tc, t_fig5);
	tcase_add_test(tc, t_kary);
	tcase_add_test(tc, t_11664);
	tcase_add_test(tc, t_same_leaf);
	tcase_add_test(tc, t_full_itrc);
	tcase_add_test(tc, t_fallback);
	tcase_add_test(tc, t_vm_same_leaf);
	tcase_add_test(tc, t_vm_any);
	tcase_add_test(tc, t_vm_boot_drop);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
