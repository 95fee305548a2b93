/*
 * The path-record distinguisher (traps/prd.c) and the signalling rounds
 * (traps/repath.c).  Every PRD answer is checked against a brute force:
 * path_resolve() of every pair, old and new, compared field by field.
 *
 *   - a switch-link failure that moves pairs onto a narrower link changes
 *     exactly those pairs' rate; the same failure on a uniform fabric
 *     changes nothing a host sees (the thesis's "fault one");
 *   - a link that only degrades, a host link, a LID that moves, a hole in
 *     the tables (unpath), an SL table, a changed parameter;
 *   - random fabrics with mixed rates and random failures;
 *   - the notices per mode for one fault;
 *   - the golden 68/69 notices of ibsmd(8), section NOTICES, decoded,
 *     the lane order (flag LANE) among them, byte by byte.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconfig/repair.h"
#include "routing/path.h"
#include "routing_testlib.h"
#include "traps/notice.h"
#include "traps/prd.h"
#include "traps/repath.h"

extern const struct routing_engine ftree_engine;
extern const struct routing_engine minhop_engine;

static const struct prd_params PP = { .pkey = 0xffff, .ltv = 18 };

/* Both ends of the link between a and b get this width. */
static void set_width(struct fabric *f, const char *a, const char *b,
		      uint8_t width)
{
	uint32_t pa = fabric_port(f, node_named(f, a), port_to(f, a, b));
	f->ports[pa].width_active = width;
	f->ports[f->ports[pa].remote].width_active = width;
}

/* A fault: old and new model, old and new tables (repaired as the daemon does). */
struct fault {
	struct fabric of, nf;
	struct lft_tables ot, nt;
	struct guid_map lids;
};

static void fault_free(struct fault *x)
{
	fabric_free(&x->of);
	fabric_free(&x->nf);
	lft_tables_free(&x->ot);
	lft_tables_free(&x->nt);
	guid_map_free(&x->lids);
}

/* narrow: the link n1-n2 is 1x in both models (NULL: none). */
static void fault_make(struct fault *x, const struct routing_engine *e,
		       const struct tb *before, const struct tb *after,
		       const char *n1, const char *n2)
{
	memset(x, 0, sizeof(*x));
	tb_build_kept(&x->of, before, NULL, NULL);
	ck_assert_int_eq(lids_record(&x->of, &x->lids), 0);
	tb_build_kept(&x->nf, after, NULL, &x->lids);
	if (n1) {
		set_width(&x->of, n1, n2, TOPO_WIDTH_1X);
		set_width(&x->nf, n1, n2, TOPO_WIDTH_1X);
	}
	tb_route(e, &x->of, &x->ot);
	tb_route(e, &x->nf, &x->nt);
	struct repair_stats rs;
	if (repair_compare(&x->of, &x->nf, NULL, 0) == REPAIR_LOSS)
		ck_assert_int_eq(repair_routes(&x->of, &x->ot, &x->nf, &x->nt, &rs), 0);
}

/* --- the brute force --- */

struct pair {
	uint64_t src_guid;
	uint32_t dlid;
	uint8_t kind;
};

static int pair_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	if (x->src_guid != y->src_guid)
		return x->src_guid < y->src_guid ? -1 : 1;
	if (x->dlid != y->dlid)
		return x->dlid < y->dlid ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

static uint32_t old_of(const struct fabric *of, const struct fabric *nf,
		       uint32_t pn)
{
	uint32_t o = fabric_find_node(of, nf->nodes[nf->ports[pn].node].guid);
	return o == FAB_NONE ? FAB_NONE : fabric_port(of, o, nf->ports[pn].num);
}

static int is_ca_end(const struct fabric *f, uint32_t pi)
{
	return fabric_is_endport(f, pi) && f->nodes[f->ports[pi].node].type != FAB_SWITCH &&
	       f->ports[pi].lid;
}

/* Every pair, resolved old and new; *n pairs that changed. */
static struct pair *brute(const struct fabric *of, const struct lft_tables *ot,
			  const struct prd_params *opp,
			  const struct fabric *nf, const struct lft_tables *nt,
			  const struct prd_params *npp, size_t *n)
{
	size_t cap = 1024;
	struct pair *v = malloc(cap * sizeof(*v));
	*n = 0;
	for (uint32_t s = 0; s < nf->n_ports; s++) {
		uint32_t os = old_of(of, nf, s);
		if (!is_ca_end(nf, s) || os == FAB_NONE || !is_ca_end(of, os))
			continue;
		for (uint32_t l = 1; l <= nf->max_lid; l++) {
			uint32_t d = nf->lid_port[l];
			if (d == FAB_NONE || d == s || !is_ca_end(nf, d))
				continue;
			uint32_t od = old_of(of, nf, d);
			if (od == FAB_NONE || !is_ca_end(of, od))
				continue;
			uint32_t ol = of->ports[od].lid + (l - nf->ports[d].lid);
			if (ol > of->max_lid || of->lid_port[ol] != od)
				continue;
			struct path_facts a, b;
			int ro = path_resolve(of, ot, os, ol, &a) == 0;
			int rn = path_resolve(nf, nt, s, l, &b) == 0;
			uint8_t kind = 0;
			if (ro && !rn)
				kind = PRD_UNPATH;
			else if (rn && (!ro || a.slid != b.slid || a.dlid != b.dlid ||
					a.sl != b.sl || a.mtu != b.mtu || a.rate != b.rate ||
					opp->pkey != npp->pkey ||
					path_packet_life(of, &a, os, opp->ltv) !=
					path_packet_life(nf, &b, s, npp->ltv)))
				kind = PRD_REPATH;
			if (!kind)
				continue;
			if (*n == cap)
				v = realloc(v, (cap *= 2) * sizeof(*v));
			v[(*n)++] = (struct pair){ nf->ports[s].guid, l, kind };
		}
	}
	qsort(v, *n, sizeof(*v), pair_cmp);
	return v;
}

/*
 * Runs the PRD from (of, ot) to (nf, nt) and checks it against the brute
 * force; returns the number of changed pairs.
 */
static size_t check_prd(const struct fabric *of, const struct lft_tables *ot,
			const struct prd_params *opp,
			const struct fabric *nf, const struct lft_tables *nt,
			const struct prd_params *npp, struct prd_stats *st_out)
{
	struct prd *p = prd_new();
	struct prd_change *ch;
	size_t n, nb;
	struct prd_stats st;
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(prd_diff(p, of, ot, opp, &ch, &n, &st), 0);
	ck_assert_int_eq(st.first, 1);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(prd_commit(p, of, ot, opp), 0);
	ck_assert_uint_gt(prd_state_bytes(p), 0);
	ck_assert_int_eq(prd_diff(p, nf, nt, npp, &ch, &n, &st), 0);
	ck_assert_int_eq(st.first, 0);
	ck_assert_int_eq(st.overflow, 0);
	ck_assert_uint_eq(st.repath + st.unpath, n);
	struct pair *want = brute(of, ot, opp, nf, nt, npp, &nb);
	struct pair *got = malloc((n + 1) * sizeof(*got));
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(nf->lid_port[ch[i].dlid], ch[i].dst);
		ck_assert_uint_eq(nf->ports[ch[i].src].lid, ch[i].slid);
		got[i] = (struct pair){ nf->ports[ch[i].src].guid, ch[i].dlid,
					ch[i].kind };
	}
	qsort(got, n, sizeof(*got), pair_cmp);
	for (size_t i = 0; i < n && i < nb; i++)
		ck_assert_msg(!pair_cmp(&got[i], &want[i]),
			      "pair %zu: prd 0x%llx->%u kind %u, brute 0x%llx->%u kind %u",
			      i, (unsigned long long)got[i].src_guid, got[i].dlid,
			      got[i].kind, (unsigned long long)want[i].src_guid,
			      want[i].dlid, want[i].kind);
	ck_assert_uint_eq(n, nb);
	/* the same again: nothing changed since */
	ck_assert_int_eq(prd_commit(p, nf, nt, npp), 0);
	free(ch);
	ck_assert_int_eq(prd_diff(p, nf, nt, npp, &ch, &n, &st), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(st.dirty_columns, 0);
	if (st_out)
		ck_assert_int_eq(prd_diff(p, nf, nt, npp, &ch, &n, st_out), 0);
	free(ch);
	free(want);
	free(got);
	prd_free(p);
	return nb;
}

/*
 * Two leaves, two spines, four hosts a leaf: L1-S1, L1-S2, L2-S1, L2-S2.
 */
static struct tb *two_spines(void)
{
	struct tb *b = tb_new();
	int l1 = tb_node(b, 1, 8, 0x101, "L1"), l2 = tb_node(b, 1, 8, 0x102, "L2");
	int s1 = tb_node(b, 1, 4, 0x201, "S1"), s2 = tb_node(b, 1, 4, 0x202, "S2");
	for (int h = 0; h < 8; h++)
		tb_link(b, h < 4 ? l1 : l2, h % 4 + 1,
			tb_node(b, 0, 1, 0x10000 + 0x10 * (uint64_t)h, "H%d", h), 1);
	tb_link(b, l1, 5, s1, 1);
	tb_link(b, l1, 6, s2, 1);
	tb_link(b, l2, 5, s1, 2);
	tb_link(b, l2, 6, s2, 2);
	return b;
}

/* The rate code of the pair H<a> -> H<b>. */
static int rate_of(const struct fabric *f, const struct lft_tables *t,
		   int a, int b)
{
	char na[8], nb[8];
	struct path_facts pf;
	snprintf(na, sizeof(na), "H%d", a);
	snprintf(nb, sizeof(nb), "H%d", b);
	uint32_t src = fabric_port(f, node_named(f, na), 1);
	if (path_resolve(f, t, src, lid_of(f, nb), &pf) < 0)
		return -1;
	return pf.rate;
}

START_TEST(test_narrow_alternative)
{
	struct tb *b = two_spines();
	struct tb *cut = tb_cut(b, "L1", "S1");
	const struct routing_engine *eng[] = { &ftree_engine, &minhop_engine };
	for (int e = 0; e < 2; e++) {
		struct fault x;
		fault_make(&x, eng[e], b, cut, "L2", "S2");
		/* which L1->L2 pairs went over S1 before: they move to the 1x link */
		int moved = 0;
		for (int s = 0; s < 4; s++)
			for (int d = 4; d < 8; d++) {
				int ro = rate_of(&x.of, &x.ot, s, d);
				int rn = rate_of(&x.nf, &x.nt, s, d);
				ck_assert_int_eq(rn, 2);	/* 1x SDR: 2.5 Gb/s */
				ck_assert(ro == 2 || ro == 3);	/* 4x SDR: 10 Gb/s */
				moved += ro == 3;
			}
		ck_assert_int_gt(moved, 0);
		ck_assert_int_lt(moved, 16);
		size_t n = check_prd(&x.of, &x.ot, &PP, &x.nf, &x.nt, &PP, NULL);
		/* both directions of the moved pairs; nothing inside a leaf */
		ck_assert_uint_ge(n, (size_t)moved);
		ck_assert_uint_le(n, 32);
		fault_free(&x);
	}
	free(b);
	free(cut);
}
END_TEST

/* Paper II's fault one: the routes move, no field a host sees changes. */
START_TEST(test_fault_one)
{
	struct tb *b = two_spines();
	struct tb *cut = tb_cut(b, "L1", "S1");
	struct fault x;
	fault_make(&x, &ftree_engine, b, cut, NULL, NULL);
	uint64_t differ = 0;
	for (uint32_t r = 0; r < x.nt.n_sw; r++) {
		uint32_t o = fabric_find_node(&x.of, x.nf.nodes[x.nt.sw_node[r]].guid);
		const uint8_t *a = lft_row(&x.nt, r), *c = lft_row(&x.ot, x.ot.row_of_node[o]);
		for (uint32_t l = 1; l <= x.nt.max_lid; l++)
			differ += a[l] != c[l];
	}
	ck_assert_uint_gt(differ, 0);
	struct prd_stats st;
	ck_assert_uint_eq(check_prd(&x.of, &x.ot, &PP, &x.nf, &x.nt, &PP, NULL), 0);
	/* and the distinguisher looked at the columns that moved, no more */
	struct prd *p = prd_new();
	struct prd_change *ch;
	size_t n;
	ck_assert_int_eq(prd_commit(p, &x.of, &x.ot, &PP), 0);
	ck_assert_int_eq(prd_diff(p, &x.nf, &x.nt, &PP, &ch, &n, &st), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_gt(st.dirty_columns, 0);
	ck_assert_uint_lt(st.dirty_columns, st.columns);
	ck_assert_uint_eq(st.dirty_sources, 0);
	/* a comparison asked to stop stops */
	int stop = 1;
	struct prd_params pc = PP;
	pc.cancel = &stop;
	ck_assert_int_eq(prd_diff(p, &x.nf, &x.nt, &pc, &ch, &n, &st), -1);
	/* the state moved in without a copy is the same state */
	struct fabric cf;
	struct lft_tables ct;
	ck_assert_int_eq(prd_copy(&cf, &ct, &x.nf, &x.nt), 0);
	prd_commit_move(p, &cf, &ct, &PP);
	ck_assert_ptr_null(ct.port);
	ck_assert_int_eq(prd_diff(p, &x.nf, &x.nt, &PP, &ch, &n, &st), 0);
	ck_assert_uint_eq(st.dirty_columns, 0);
	ck_assert_uint_eq(n, 0);
	prd_free(p);
	fault_free(&x);
	free(b);
	free(cut);
}
END_TEST

/* A detour through more switches: the same rate, a longer PacketLifeTime. */
START_TEST(test_longer_path)
{
	struct tb *b = mesh(3, 3);
	struct tb *cut = tb_cut(b, "M1", "M2");
	struct fault x;
	fault_make(&x, &minhop_engine, b, cut, NULL, NULL);
	struct path_facts a, c;
	uint32_t s = fabric_port(&x.of, node_named(&x.of, "H1"), 1);
	uint32_t sn = fabric_port(&x.nf, node_named(&x.nf, "H1"), 1);
	ck_assert_int_eq(path_resolve(&x.of, &x.ot, s, lid_of(&x.of, "H2"), &a), 0);
	ck_assert_int_eq(path_resolve(&x.nf, &x.nt, sn, lid_of(&x.nf, "H2"), &c), 0);
	ck_assert_int_eq(a.rate, c.rate);
	ck_assert_int_eq(a.mtu, c.mtu);
	ck_assert_int_lt(path_packet_life(&x.of, &a, s, 18),
			 path_packet_life(&x.nf, &c, sn, 18));
	ck_assert_uint_gt(check_prd(&x.of, &x.ot, &PP, &x.nf, &x.nt, &PP, NULL), 0);
	fault_free(&x);
	free(b);
	free(cut);
}
END_TEST

/* No reroute: a link degrades, a host link degrades, an MTU shrinks. */
START_TEST(test_link_changes)
{
	struct tb *b = xgft3();
	struct fault x;
	fault_make(&x, &ftree_engine, b, b, NULL, NULL);
	/* a spine link to 1x: the pairs crossing it */
	set_width(&x.nf, "A00", "T00", TOPO_WIDTH_1X);
	size_t n1 = check_prd(&x.of, &x.ot, &PP, &x.nf, &x.nt, &PP, NULL);
	ck_assert_uint_gt(n1, 0);
	ck_assert_uint_lt(n1, 16 * 15);
	/* a host link to 1x as well: all of that host's pairs, both ways */
	set_width(&x.nf, "L00", "H0", TOPO_WIDTH_1X);
	size_t n2 = check_prd(&x.of, &x.ot, &PP, &x.nf, &x.nt, &PP, NULL);
	ck_assert_uint_ge(n2, 30);
	/* an MTU: the pairs over it */
	set_width(&x.nf, "L00", "H0", TOPO_WIDTH_4X);
	set_width(&x.nf, "A00", "T00", TOPO_WIDTH_4X);
	uint32_t p = fabric_port(&x.nf, node_named(&x.nf, "A11"), port_to(&x.nf, "A11", "T11"));
	x.nf.ports[p].mtu_cap = 3;
	size_t n3 = check_prd(&x.of, &x.ot, &PP, &x.nf, &x.nt, &PP, NULL);
	ck_assert_uint_gt(n3, 0);
	fault_free(&x);
	free(b);
}
END_TEST

/* A hole in the new tables: unpath for the pairs it cuts. */
START_TEST(test_unpath)
{
	struct tb *b = xgft3();
	struct fault x;
	fault_make(&x, &ftree_engine, b, b, NULL, NULL);
	uint32_t lid = lid_of(&x.nf, "H5");
	/* at H5's leaf: every other host loses H5 */
	lft_row(&x.nt, x.nt.row_of_node[node_named(&x.nf, "L10")])[lid] = LFT_DROP;
	struct prd *p = prd_new();
	struct prd_change *ch;
	size_t n;
	struct prd_stats st;
	ck_assert_int_eq(prd_commit(p, &x.of, &x.ot, &PP), 0);
	ck_assert_int_eq(prd_diff(p, &x.nf, &x.nt, &PP, &ch, &n, &st), 0);
	ck_assert_uint_eq(n, 15);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(ch[i].kind, PRD_UNPATH);
		ck_assert_uint_eq(ch[i].dlid, lid);
	}
	ck_assert_uint_eq(st.unpath, n);
	free(ch);
	prd_free(p);
	ck_assert_uint_eq(check_prd(&x.of, &x.ot, &PP, &x.nf, &x.nt, &PP, NULL), n);
	/* and back: a repath for each */
	ck_assert_uint_eq(check_prd(&x.nf, &x.nt, &PP, &x.of, &x.ot, &PP, NULL), n);
	fault_free(&x);
	free(b);
}
END_TEST

/* A host's LID moves: every pair to it and from it (DLID, SLID). */
START_TEST(test_lid_moves)
{
	struct tb *b = xgft3();
	struct fault x;
	fault_make(&x, &ftree_engine, b, b, NULL, NULL);
	fabric_free(&x.nf);
	lft_tables_free(&x.nt);
	/* H3 gets a LID past the others */
	uint32_t h3 = node_named(&x.of, "H3");
	uint64_t g = fabric_portp(&x.of, h3, 1)->guid;
	ck_assert_int_eq(guid_map_put(&x.lids, g, x.of.max_lid + 5), 0);
	tb_build_kept(&x.nf, b, NULL, &x.lids);
	ck_assert_uint_eq(lid_of(&x.nf, "H3"), x.of.max_lid + 5);
	tb_route(&ftree_engine, &x.nf, &x.nt);
	size_t n = check_prd(&x.of, &x.ot, &PP, &x.nf, &x.nt, &PP, NULL);
	ck_assert_uint_ge(n, 2 * 15);
	fault_free(&x);
	free(b);
}
END_TEST

/* SL tables (QoS) and the parameters every record carries. */
START_TEST(test_sl_and_params)
{
	struct tb *b = xgft3();
	struct fault x;
	fault_make(&x, &ftree_engine, b, b, NULL, NULL);
	size_t cols = (size_t)x.nt.max_lid + 1;
	/* one source class, H1's; H1 -> H9 on SL 3 */
	x.nt.n_sl_class = 1;
	x.nt.sl = calloc(cols, 1);
	x.nt.sl_class = malloc(cols * sizeof(*x.nt.sl_class));
	ck_assert(x.nt.sl && x.nt.sl_class);
	for (size_t l = 0; l < cols; l++)
		x.nt.sl_class[l] = LFT_SL_NOCLASS;
	uint32_t s = lid_of(&x.nf, "H1"), d = lid_of(&x.nf, "H9");
	x.nt.sl_class[s] = 0;
	x.nt.sl[d] = 3;
	struct prd_stats st;
	ck_assert_uint_eq(check_prd(&x.of, &x.ot, &PP, &x.nf, &x.nt, &PP, &st), 1);
	lft_tables_free_qos(&x.nt);
	struct prd_params pp2 = PP;
	pp2.ltv = 19;
	ck_assert_uint_eq(check_prd(&x.of, &x.ot, &PP, &x.nf, &x.nt, &pp2, NULL),
			  16 * 15);
	fault_free(&x);
	free(b);
}
END_TEST

static uint32_t rnd_state;
static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

/* Random rates, random cuts, both engines: always the brute force's answer. */
START_TEST(test_random)
{
	static const uint8_t widths[] = { TOPO_WIDTH_1X, TOPO_WIDTH_4X, TOPO_WIDTH_12X };
	static const uint8_t speeds[] = { TOPO_SPEED_SDR, TOPO_SPEED_QDR, TOPO_SPEED_EDR };
	struct tb *b = xgft3();
	rnd_state = 7;
	for (int round = 0; round < 24; round++) {
		/* a switch-to-switch link to cut */
		int j;
		do
			j = (int)(rnd() % (uint32_t)b->nl);
		while (!b->sw[b->la[j]] || !b->sw[b->lb[j]]);
		struct tb *cut = tb_cut(b, b->name[b->la[j]], b->name[b->lb[j]]);
		struct fault x;
		fault_make(&x, round % 2 ? &minhop_engine : &ftree_engine, b, cut,
			   NULL, NULL);
		/* the same random link attributes in both models */
		for (uint32_t p = 0; p < x.of.n_ports; p++) {
			struct fab_port *po = &x.of.ports[p];
			if (po->remote == FAB_NONE || p > po->remote)
				continue;
			uint8_t w = widths[rnd() % 3], sp = speeds[rnd() % 3];
			uint8_t mtu = (uint8_t)(3 + rnd() % 3);
			struct fab_port *q[2] = { po, &x.of.ports[po->remote] };
			for (int k = 0; k < 2; k++) {
				q[k]->width_active = w;
				q[k]->speed_active = sp;
				q[k]->mtu_cap = mtu;
				uint32_t n = fabric_find_node(&x.nf, x.of.nodes[q[k]->node].guid);
				struct fab_port *pn = fabric_portp(&x.nf, n, q[k]->num);
				pn->width_active = w;
				pn->speed_active = sp;
				pn->mtu_cap = mtu;
			}
		}
		/* now and then a link degrades as well */
		if (round % 3 == 0) {
			uint32_t p;
			do
				p = rnd() % x.nf.n_ports;
			while (x.nf.ports[p].remote == FAB_NONE);
			x.nf.ports[p].width_active = TOPO_WIDTH_1X;
		}
		check_prd(&x.of, &x.ot, &PP, &x.nf, &x.nt, &PP, NULL);
		fault_free(&x);
		free(cut);
	}
	free(b);
}
END_TEST

/* --- signalling rounds through a recording notifier --- */

struct rec {
	uint8_t sub[4096];	/* LIDs that subscribed */
	unsigned n_sub;
	unsigned publish, publish_to;	/* calls */
	uint64_t reports;
	struct notice last;
	unsigned to_lid[4096];	/* Reports per LID */
};

static int rec_publish(void *ctx, const struct notice *nt, uint32_t src)
{
	struct rec *r = ctx;
	r->publish++;
	r->last = *nt;
	for (unsigned l = 0; l < 4096; l++)
		if (r->sub[l])
			r->to_lid[l]++;
	r->reports += r->n_sub;
	return (int)r->n_sub;
}

static int rec_publish_to(void *ctx, uint32_t lid, const struct notice *nt,
			  uint32_t src)
{
	struct rec *r = ctx;
	r->publish_to++;
	r->last = *nt;
	if (lid >= 4096 || !r->sub[lid])
		return 0;
	r->to_lid[lid]++;
	r->reports++;
	return 1;
}

/* One round in mode m; the subscribers are every host. */
static void round_in(enum repath_mode m, const struct fault *x,
		     struct rec *r, struct repath_stats *rs, size_t *changed)
{
	struct prd *p = prd_new();
	struct prd_change *ch;
	size_t n;
	struct prd_stats st;
	memset(r, 0, sizeof(*r));
	for (uint32_t i = 0; i < x->nf.n_ports; i++)
		if (is_ca_end(&x->nf, i)) {
			r->sub[x->nf.ports[i].lid] = 1;
			r->n_sub++;
		}
	ck_assert_int_eq(prd_commit(p, &x->of, &x->ot, &PP), 0);
	ck_assert_int_eq(prd_diff(p, &x->nf, &x->nt, &PP, &ch, &n, &st), 0);
	struct repath_params rp = {
		.mode = m, .sm_lid = 1, .subnet_prefix = 0xfe80000000000000ull,
		.pkey = PP.pkey, .ltv = PP.ltv,
	};
	struct repath_out o = { r, rec_publish, rec_publish_to };
	ck_assert_int_eq(repath_round(&rp, &x->nf, &x->nt, ch, n, &st, &o, rs), 0);
	*changed = n;
	free(ch);
	prd_free(p);
}

START_TEST(test_modes)
{
	struct tb *b = two_spines();
	struct tb *cut = tb_cut(b, "L1", "S1");
	struct fault narrow, plain;
	fault_make(&narrow, &ftree_engine, b, cut, "L2", "S2");
	fault_make(&plain, &ftree_engine, b, cut, NULL, NULL);
	struct rec r;
	struct repath_stats rs;
	size_t m, m0;
	const unsigned hosts = 8;

	/* wildcard: one notice, every subscriber, changed or not */
	round_in(REPATH_WILDCARD, &narrow, &r, &rs, &m);
	ck_assert_uint_eq(r.publish, 1);
	ck_assert_uint_eq(r.reports, hosts);
	round_in(REPATH_WILDCARD, &plain, &r, &rs, &m0);
	ck_assert_uint_eq(m0, 0);
	ck_assert_uint_eq(r.publish, 1);
	ck_assert_uint_eq(r.reports, hosts);
	struct notice_path np;
	notice_get_path(&r.last, &np);
	ck_assert_int_eq(r.last.trap, TRAP_REPATH);
	ck_assert_int_eq(np.flags, NPATH_WILDCARD);

	/* hybrid: the same when something changed, nothing otherwise */
	round_in(REPATH_HYBRID, &narrow, &r, &rs, &m);
	ck_assert_uint_eq(r.publish, 1);
	ck_assert_uint_eq(r.reports, hosts);
	round_in(REPATH_HYBRID, &plain, &r, &rs, &m0);
	ck_assert_uint_eq(r.publish + r.publish_to, 0);

	/* repath-only: one per changed pair to each end */
	round_in(REPATH_ONLY, &narrow, &r, &rs, &m);
	ck_assert_uint_gt(m, 0);
	ck_assert_uint_eq(r.publish, 0);
	ck_assert_uint_eq(r.publish_to, 2 * m);
	ck_assert_uint_eq(r.reports, 2 * m);
	ck_assert_uint_eq(rs.notices, m);
	notice_get_path(&r.last, &np);
	ck_assert_int_eq(r.last.trap, TRAP_REPATH);
	ck_assert_int_eq(np.flags & NPATH_GIDS, NPATH_GIDS);
	ck_assert_int_eq(np.rate, 2);
	ck_assert_int_eq(np.packet_life, 18 + 2);	/* three switches */
	ck_assert_int_eq(np.pkey, 0xffff);
	round_in(REPATH_ONLY, &plain, &r, &rs, &m0);
	ck_assert_uint_eq(r.publish + r.publish_to, 0);

	/* hybrid-affected: once to each end of a changed pair; here every
	 * host of both leaves is one */
	round_in(REPATH_HYBRID_AFFECTED, &narrow, &r, &rs, &m);
	ck_assert_uint_eq(r.publish, 0);
	ck_assert_uint_le(r.reports, hosts);
	ck_assert_uint_gt(r.reports, 0);
	for (unsigned l = 0; l < 4096; l++)
		ck_assert_uint_le(r.to_lid[l], 1);
	round_in(REPATH_HYBRID_AFFECTED, &plain, &r, &rs, &m0);
	ck_assert_uint_eq(r.publish + r.publish_to, 0);

	/* a cut list: repath-only sends what hybrid sends */
	struct prd_stats st = { .repath = 5, .overflow = 1 };
	struct repath_params rp = { .mode = REPATH_ONLY };
	struct repath_out o = { &r, rec_publish, rec_publish_to };
	memset(&r, 0, sizeof(r));
	r.n_sub = 3;
	ck_assert_int_eq(repath_round(&rp, &narrow.nf, &narrow.nt, NULL, 0, &st, &o, &rs), 0);
	ck_assert_int_eq(rs.fell_back, 1);
	ck_assert_uint_eq(r.publish, 1);
	fault_free(&narrow);
	fault_free(&plain);
	free(b);
	free(cut);
}
END_TEST

/* --- the golden notices of ibsmd(8) --- */

/* The hex bytes after the line holding tag in ibsmd.8, up to ".Ed". */
static void man_vector(const char *tag, uint8_t out[NOTICE_SIZE])
{
	FILE *fp = fopen("man/ibsmd.8", "r");
	ck_assert_msg(fp != NULL, "man/ibsmd.8 (run from the top directory)");
	char line[256];
	int in = 0, n = 0;
	while (fgets(line, sizeof(line), fp)) {
		/* the display (.Bd ... .Ed) after the paragraph naming tag */
		if (in < 2) {
			if (!in)
				in = strstr(line, tag) != NULL;
			else if (!strncmp(line, ".Bd", 3))
				in = 2;
			continue;
		}
		if (!strncmp(line, ".Ed", 3))
			break;
		char *s = line;
		/* "0000: 83 00 00 04 ..." */
		char *colon = strchr(s, ':');
		if (colon)
			s = colon + 1;
		unsigned v;
		int used;
		while (sscanf(s, " %2x%n", &v, &used) == 1) {
			ck_assert_int_lt(n, NOTICE_SIZE);
			out[n++] = (uint8_t)v;
			s += used;
		}
	}
	fclose(fp);
	ck_assert_msg(in == 2, "no %s display in man/ibsmd.8", tag);
	ck_assert_int_eq(n, NOTICE_SIZE);
}

START_TEST(test_golden)
{
	static const uint8_t sm_gid[16] = {
		0xfe, 0x80, 0, 0, 0, 0, 0, 0,
		0x00, 0x02, 0xc9, 0x02, 0x00, 0x00, 0x00, 0x01,
	};
	uint8_t raw[NOTICE_SIZE], again[NOTICE_SIZE];
	struct notice nt;
	struct notice_path np;

	man_vector("Golden repath", raw);
	notice_decode(raw, &nt);
	ck_assert_int_eq(nt.generic, 1);
	ck_assert_int_eq(nt.type, NOTICE_TYPE_SM);
	ck_assert_uint_eq(nt.producer, NOTICE_PRODUCER_CM);
	ck_assert_int_eq(nt.trap, TRAP_REPATH);
	ck_assert_int_eq(nt.issuer_lid, 1);
	ck_assert_int_eq(nt.toggle, 0);
	ck_assert_int_eq(nt.count, 0);
	ck_assert_mem_eq(nt.issuer_gid, sm_gid, 16);
	notice_get_path(&nt, &np);
	ck_assert_int_eq(np.flags, NPATH_GIDS | NPATH_REVERSIBLE);
	ck_assert_int_eq(np.sl, 0);
	ck_assert_int_eq(np.mtu, 5);		/* 4096 */
	ck_assert_int_eq(np.rate, 2);		/* 2.5 Gb/s */
	ck_assert_int_eq(np.pkey, 0xffff);
	ck_assert_int_eq(np.packet_life, 18);
	ck_assert_uint_eq(np.slid, 2);
	ck_assert_uint_eq(np.dlid, 7);
	static const uint8_t sgid[16] = {
		0xfe, 0x80, 0, 0, 0, 0, 0, 0,
		0x00, 0x02, 0xc9, 0x02, 0x00, 0x00, 0x00, 0x05,
	};
	static const uint8_t dgid[16] = {
		0xfe, 0x80, 0, 0, 0, 0, 0, 0,
		0x00, 0x02, 0xc9, 0x02, 0x00, 0x00, 0x00, 0x19,
	};
	ck_assert_mem_eq(np.sgid, sgid, 16);
	ck_assert_mem_eq(np.dgid, dgid, 16);
	/* and the encoder writes the same bytes */
	struct notice mine;
	notice_init_sm(&mine, TRAP_REPATH, 1, sm_gid);
	notice_set_path(&mine, &np);
	notice_encode(&mine, again);
	ck_assert_mem_eq(again, raw, NOTICE_SIZE);

	man_vector("Golden wildcard", raw);
	notice_decode(raw, &nt);
	ck_assert_int_eq(nt.trap, TRAP_REPATH);
	ck_assert_int_eq(nt.issuer_lid, 1);
	notice_get_path(&nt, &np);
	ck_assert_int_eq(np.flags, NPATH_WILDCARD);
	ck_assert_uint_eq(np.slid, 0);
	ck_assert_uint_eq(np.dlid, 0);
	ck_assert_int_eq(np.rate, 0);
	for (int i = 0; i < NOTICE_DATA_SIZE; i++)
		ck_assert_int_eq(nt.data[i], i == 0 ? NPATH_WILDCARD : 0);
	notice_init_sm(&mine, TRAP_REPATH, 1, sm_gid);
	memset(&np, 0, sizeof(np));
	np.flags = NPATH_WILDCARD;
	notice_set_path(&mine, &np);
	notice_encode(&mine, again);
	ck_assert_mem_eq(again, raw, NOTICE_SIZE);
}
END_TEST

/*
 * The lane order of ibsmd(8), NOTICES: flags, SL, LMC, SLID and DLID at
 * their documented offsets (DataDetails starts at byte 10 of the Notice),
 * every other byte of DataDetails 0; the encoder the SM calls writes the
 * same 80 bytes, the 68 differs in TrapNumber and SL only, and nothing
 * else decodes as a lane order.
 */
START_TEST(test_golden_lane)
{
	static const uint8_t sm_gid[16] = {
		0xfe, 0x80, 0, 0, 0, 0, 0, 0,
		0x00, 0x02, 0xc9, 0x02, 0x00, 0x00, 0x00, 0x01,
	};
	const struct notice_lane want = { .slid = 5, .dlid = 12, .lmc = 2, .sl = 1 };
	uint8_t raw[NOTICE_SIZE], mine[NOTICE_SIZE], other[NOTICE_SIZE];
	struct notice nt, enc;
	struct notice_lane got;
	struct notice_path np;

	man_vector("Golden lane order", raw);
	/* the documented offsets, read off the bytes themselves */
	ck_assert_int_eq(raw[0], 0x83);			/* generic, type 3 */
	ck_assert_int_eq(raw[3], NOTICE_PRODUCER_CM);
	ck_assert_int_eq(raw[4] << 8 | raw[5], TRAP_REPATH);
	ck_assert_int_eq(raw[6] << 8 | raw[7], 1);	/* IssuerLID */
	ck_assert_int_eq(raw[10 + 0], NPATH_LANE);	/* flags */
	ck_assert_int_eq(raw[10 + 1], 1);		/* SL */
	ck_assert_int_eq(raw[10 + 7], 2);		/* LMC */
	ck_assert_uint_eq((uint32_t)raw[18] << 24 | (uint32_t)raw[19] << 16 |
			  (uint32_t)raw[20] << 8 | raw[21], 5);	/* SLID */
	ck_assert_uint_eq((uint32_t)raw[22] << 24 | (uint32_t)raw[23] << 16 |
			  (uint32_t)raw[24] << 8 | raw[25], 12);	/* DLID */
	for (int i = 10; i < 64; i++)
		if (i != 10 && i != 11 && i != 17 && (i < 18 || i > 25))
			ck_assert_msg(raw[i] == 0, "Notice byte %d is 0x%02x", i, raw[i]);
	ck_assert_mem_eq(raw + 64, sm_gid, 16);

	notice_decode(raw, &nt);
	ck_assert_int_eq(notice_get_lane(&nt, &got), 0);
	ck_assert_uint_eq(got.slid, want.slid);
	ck_assert_uint_eq(got.dlid, want.dlid);
	ck_assert_int_eq(got.lmc, want.lmc);
	ck_assert_int_eq(got.sl, want.sl);
	notice_get_path(&nt, &np);		/* a host reading it as a path sees LANE */
	ck_assert_int_eq(np.flags, NPATH_LANE);

	notice_lane(&enc, TRAP_REPATH, 1, sm_gid, &want);
	notice_encode(&enc, mine);
	ck_assert_mem_eq(mine, raw, NOTICE_SIZE);

	/* back to the fast lane: TrapNumber 68 and SL 0, nothing else */
	const struct notice_lane fast = { .slid = 5, .dlid = 12, .lmc = 2, .sl = 0 };
	notice_lane(&enc, TRAP_UNPATH, 1, sm_gid, &fast);
	notice_encode(&enc, mine);
	for (int i = 0; i < NOTICE_SIZE; i++)
		if (i != 5 && i != 11)
			ck_assert_int_eq(mine[i], raw[i]);
	ck_assert_int_eq(mine[5], TRAP_UNPATH);
	ck_assert_int_eq(mine[11], 0);
	notice_decode(mine, &nt);
	ck_assert_int_eq(notice_get_lane(&nt, &got), 0);
	ck_assert_int_eq(got.sl, 0);

	/* not lane orders: a path, a wildcard, LANE with another flag, LANE in 64 */
	man_vector("Golden repath", other);
	notice_decode(other, &nt);
	ck_assert_int_eq(notice_get_lane(&nt, &got), -1);
	man_vector("Golden wildcard", other);
	notice_decode(other, &nt);
	ck_assert_int_eq(notice_get_lane(&nt, &got), -1);
	memcpy(other, raw, NOTICE_SIZE);
	other[10] = NPATH_LANE | NPATH_GIDS;
	notice_decode(other, &nt);
	ck_assert_int_eq(notice_get_lane(&nt, &got), -1);
	memcpy(other, raw, NOTICE_SIZE);
	other[5] = TRAP_GID_IN_SERVICE;
	notice_decode(other, &nt);
	ck_assert_int_eq(notice_get_lane(&nt, &got), -1);
	/* and a path cannot pose as one: notice_set_path drops LANE */
	memset(&np, 0, sizeof(np));
	np.flags = NPATH_LANE;
	np.dlid = 12;
	notice_init_sm(&enc, TRAP_REPATH, 1, sm_gid);
	notice_set_path(&enc, &np);
	ck_assert_int_eq(enc.data[0], 0);
	ck_assert_int_eq(notice_get_lane(&enc, &got), -1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("prd");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_narrow_alternative);
	tcase_add_test(tc, test_fault_one);
	tcase_add_test(tc, test_longer_path);
	tcase_add_test(tc, test_link_changes);
	tcase_add_test(tc, test_unpath);
	tcase_add_test(tc, test_lid_moves);
	tcase_add_test(tc, test_sl_and_params);
	tcase_add_test(tc, test_random);
	tcase_add_test(tc, test_modes);
	tcase_add_test(tc, test_golden);
	tcase_add_test(tc, test_golden_lane);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	srunner_run_all(r, CK_NORMAL);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
