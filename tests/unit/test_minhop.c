/*
 * The minhop routing engine (routing/engines/minhop.c) on small fabrics built from
 * net-file text: every route is a shortest one and loop-free, the local
 * entries are right, load is spread over equal paths, runs repeat.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engine.h"
#include "sm/base/fabric.h"
#include "sm/model/lids.h"
#include "sm/base/topo.h"

struct tnode {
	const char *name;
	int sw;
	int nports;
	uint64_t guid;
};

struct tlink {
	const char *a;
	int pa;
	const char *b;
	int pb;
};

/* An ibsim net file with both ends of every link written out. */
static char *net_text(const struct tnode *n, int nn, const struct tlink *l,
		      int nl)
{
	size_t cap = 65536, len = 0;
	char *s = malloc(cap);
	ck_assert_ptr_nonnull(s);
#define PUT(...) do { \
	len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__); \
	ck_assert_uint_lt(len, cap); \
} while (0)
	for (int i = 0; i < nn; i++) {
		PUT("%s=0x%llx\n", n[i].sw ? "switchguid" : "caguid",
		    (unsigned long long)n[i].guid);
		PUT("%s\t%d \"%s\"\n", n[i].sw ? "Switch" : "Hca", n[i].nports,
		    n[i].name);
		for (int j = 0; j < nl; j++) {
			if (!strcmp(l[j].a, n[i].name))
				PUT("[%d]\t\"%s\"[%d]\n", l[j].pa, l[j].b, l[j].pb);
			if (!strcmp(l[j].b, n[i].name))
				PUT("[%d]\t\"%s\"[%d]\n", l[j].pb, l[j].a, l[j].pa);
		}
		PUT("\n");
	}
#undef PUT
	return s;
}

static void build(struct fabric *f, const struct tnode *n, int nn,
		  const struct tlink *l, int nl, uint8_t lmc)
{
	char err[256] = "";
	struct lid_report rep;
	char *text = net_text(n, nn, l, nl);
	fabric_init(f);
	if (topo_parse_string(f, text, "test.net", err, sizeof(err)) != 0)
		ck_abort_msg("parse: %s\n%s", err, text);
	free(text);
	ck_assert_int_eq(lids_assign(f, NULL, lmc, &rep), 0);
	ck_assert_uint_eq(rep.exhausted, 0);
}

static void route(const struct fabric *f, struct lft_tables *t)
{
	char err[256] = "";
	const struct routing_engine *eng = routing_engine_find("minhop");
	ck_assert_ptr_nonnull(eng);
	ck_assert_int_eq(lft_tables_alloc(t, f), 0);
	if (eng->route(f, NULL, t, err, sizeof(err)) != 0)
		ck_abort_msg("route: %s", err);
}

static uint32_t node_named(const struct fabric *f, const char *name)
{
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (!strcmp(f->nodes[i].desc, name))
			return i;
	ck_abort_msg("no node %s", name);
	return FAB_NONE;
}

static uint32_t lid_of_node(const struct fabric *f, const char *name)
{
	uint32_t n = node_named(f, name);
	unsigned p = f->nodes[n].type == FAB_SWITCH ? 0 : 1;
	uint32_t lid = fabric_portp(f, n, p)->lid;
	ck_assert_uint_ne(lid, 0);
	return lid;
}

static uint8_t entry(const struct fabric *f, const struct lft_tables *t,
		     const char *sw, uint32_t lid)
{
	uint32_t row = t->row_of_node[node_named(f, sw)];
	ck_assert_uint_ne(row, FAB_NONE);
	return lft_row(t, row)[lid];
}

/* The test's own view of a usable link, and the peer switch behind it. */
static uint32_t peer_switch(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	if (p->remote == FAB_NONE || p->phys_state != PHYS_LINKUP ||
	    f->ports[p->remote].phys_state != PHYS_LINKUP)
		return FAB_NONE;
	uint32_t rn = f->ports[p->remote].node;
	return f->nodes[rn].type == FAB_SWITCH ? rn : FAB_NONE;
}

/* Switch-to-switch hop counts from node src (UINT32_MAX: unreachable). */
static void hops_from(const struct fabric *f, uint32_t src, uint32_t *dist)
{
	uint32_t *q = malloc(f->n_nodes * sizeof(*q));
	uint32_t qh = 0, qt = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++)
		dist[i] = UINT32_MAX;
	dist[src] = 0;
	q[qt++] = src;
	while (qh < qt) {
		uint32_t u = q[qh++];
		for (unsigned p = 1; p <= f->nodes[u].nports; p++) {
			uint32_t v = peer_switch(f, fabric_port(f, u, p));
			if (v != FAB_NONE && dist[v] == UINT32_MAX) {
				dist[v] = dist[u] + 1;
				q[qt++] = v;
			}
		}
	}
	free(q);
}

/*
 * For every switch and every LID: the entry leads, link by link, to the
 * LID's owner in the minimum number of switch hops, or is LFT_DROP when
 * the owner cannot be reached.  Returns the number of routed entries.
 */
static int check_routes(const struct fabric *f, const struct lft_tables *t)
{
	int routed = 0;
	uint32_t *dist = malloc(f->n_nodes * sizeof(*dist));
	ck_assert_uint_eq(t->max_lid, f->max_lid);
	for (uint32_t lid = 1; lid <= f->max_lid; lid++) {
		uint32_t owner = f->lid_port[lid];
		uint32_t attach = FAB_NONE;
		if (owner != FAB_NONE) {
			const struct fab_port *op = &f->ports[owner];
			if (f->nodes[op->node].type == FAB_SWITCH)
				attach = op->node;
			else
				attach = peer_switch(f, owner);
		}
		if (attach != FAB_NONE)
			hops_from(f, attach, dist);
		for (uint32_t r = 0; r < t->n_sw; r++) {
			uint32_t cur = t->sw_node[r];
			uint8_t p = lft_row(t, r)[lid];
			if (attach == FAB_NONE || dist[cur] == UINT32_MAX) {
				if (p != LFT_DROP)
					ck_abort_msg("LID %u unreachable from %s but "
						     "routed to port %u", lid,
						     f->nodes[cur].desc, p);
				continue;
			}
			uint32_t hops = 0;
			for (;;) {
				p = lft_row(t, t->row_of_node[cur])[lid];
				if (p == LFT_DROP || p > f->nodes[cur].nports)
					ck_abort_msg("LID %u: %s has port %u", lid,
						     f->nodes[cur].desc, p);
				if (p == 0) {
					ck_assert_uint_eq(fabric_port(f, cur, 0), owner);
					break;
				}
				uint32_t pi = fabric_port(f, cur, p);
				uint32_t next = peer_switch(f, pi);
				if (next == FAB_NONE) {
					/* must be the owner itself, over a live link */
					ck_assert_uint_eq(f->ports[pi].remote, owner);
					ck_assert_uint_eq(attach, cur);
					break;
				}
				cur = next;
				if (++hops > t->n_sw)
					ck_abort_msg("LID %u loops", lid);
			}
			if (hops != dist[t->sw_node[r]])
				ck_abort_msg("LID %u from %s: %u hops, shortest %u",
					     lid, f->nodes[t->sw_node[r]].desc, hops,
					     dist[t->sw_node[r]]);
			routed++;
		}
	}
	free(dist);
	return routed;
}

/* Own LIDs go to port 0, attached hosts' LIDs to their port. */
static void check_local(const struct fabric *f, const struct lft_tables *t)
{
	uint32_t span = 1u << f->lmc;
	for (uint32_t r = 0; r < t->n_sw; r++) {
		uint32_t sw = t->sw_node[r];
		uint32_t own = fabric_portp(f, sw, 0)->lid;
		uint32_t own_span = 1u << fabric_port_lmc(f, fabric_port(f, sw, 0));
		for (uint32_t k = 0; k < own_span; k++)
			ck_assert_uint_eq(lft_row(t, r)[own + k], 0);
		for (unsigned p = 1; p <= f->nodes[sw].nports; p++) {
			const struct fab_port *fp = fabric_portp(f, sw, p);
			if (fp->remote == FAB_NONE ||
			    f->nodes[f->ports[fp->remote].node].type == FAB_SWITCH)
				continue;
			uint32_t hl = f->ports[fp->remote].lid;
			for (uint32_t k = 0; k < span; k++)
				ck_assert_uint_eq(lft_row(t, r)[hl + k], p);
		}
	}
}

/* --- fabrics --- */

static const struct tnode LINE_N[] = {
	{ "S1", 1, 4, 0x100 }, { "S2", 1, 4, 0x200 }, { "S3", 1, 4, 0x300 },
	{ "H1", 0, 1, 0x1000 }, { "H2", 0, 1, 0x2000 }, { "H3", 0, 1, 0x3000 },
	{ "HX", 0, 1, 0x4000 },			/* no cable */
	{ "SX", 1, 4, 0x500 }, { "HY", 0, 1, 0x5000 },	/* an island */
};
static const struct tlink LINE_L[] = {
	{ "S1", 1, "H1", 1 }, { "S2", 1, "H2", 1 }, { "S3", 2, "H3", 1 },
	{ "S1", 4, "S2", 3 }, { "S2", 4, "S3", 3 },
	{ "SX", 1, "HY", 1 },
};

static const struct tnode FT_N[] = {
	{ "L1", 1, 4, 0x110 }, { "L2", 1, 4, 0x120 }, { "L3", 1, 4, 0x130 },
	{ "L4", 1, 4, 0x140 }, { "P1", 1, 4, 0x210 }, { "P2", 1, 4, 0x220 },
	{ "H1", 0, 1, 0x1000 }, { "H2", 0, 1, 0x1100 }, { "H3", 0, 1, 0x1200 },
	{ "H4", 0, 1, 0x1300 }, { "H5", 0, 1, 0x1400 }, { "H6", 0, 1, 0x1500 },
	{ "H7", 0, 1, 0x1600 }, { "H8", 0, 1, 0x1700 },
};
static const struct tlink FT_L[] = {
	{ "L1", 1, "H1", 1 }, { "L1", 2, "H2", 1 },
	{ "L2", 1, "H3", 1 }, { "L2", 2, "H4", 1 },
	{ "L3", 1, "H5", 1 }, { "L3", 2, "H6", 1 },
	{ "L4", 1, "H7", 1 }, { "L4", 2, "H8", 1 },
	{ "L1", 3, "P1", 1 }, { "L1", 4, "P2", 1 },
	{ "L2", 3, "P1", 2 }, { "L2", 4, "P2", 2 },
	{ "L3", 3, "P1", 3 }, { "L3", 4, "P2", 3 },
	{ "L4", 3, "P1", 4 }, { "L4", 4, "P2", 4 },
};

static const struct tnode RING_N[] = {
	{ "R1", 1, 4, 0x100 }, { "R2", 1, 4, 0x200 }, { "R3", 1, 4, 0x300 },
	{ "R4", 1, 4, 0x400 },
	{ "H1", 0, 1, 0x1000 }, { "H2", 0, 1, 0x2000 }, { "H3", 0, 1, 0x3000 },
	{ "H4", 0, 1, 0x4000 },
};
static const struct tlink RING_L[] = {
	{ "R1", 1, "H1", 1 }, { "R2", 1, "H2", 1 }, { "R3", 1, "H3", 1 },
	{ "R4", 1, "H4", 1 },
	{ "R1", 2, "R2", 3 }, { "R2", 2, "R3", 3 }, { "R3", 2, "R4", 3 },
	{ "R4", 2, "R1", 3 },
};

static const struct tnode PAR_N[] = {
	{ "A", 1, 8, 0x100 }, { "B", 1, 8, 0x200 },
	{ "HA1", 0, 1, 0x1000 }, { "HA2", 0, 1, 0x1100 },
	{ "HB1", 0, 1, 0x2000 }, { "HB2", 0, 1, 0x2100 },
	{ "HB3", 0, 1, 0x2200 }, { "HB4", 0, 1, 0x2300 },
};
static const struct tlink PAR_L[] = {
	{ "A", 1, "HA1", 1 }, { "A", 2, "HA2", 1 },
	{ "B", 1, "HB1", 1 }, { "B", 2, "HB2", 1 },
	{ "B", 3, "HB3", 1 }, { "B", 4, "HB4", 1 },
	{ "A", 5, "B", 5 }, { "A", 6, "B", 6 },
};

#define BUILD(f, N, L, lmc) \
	build((f), N, (int)(sizeof(N) / sizeof(N[0])), L, \
	      (int)(sizeof(L) / sizeof(L[0])), (lmc))

/* --- tests --- */

START_TEST(t_engine_lookup)
{
	ck_assert_ptr_nonnull(routing_engine_find("minhop"));
	ck_assert_str_eq(routing_engine_find("minhop")->name, "minhop");
	ck_assert_ptr_null(routing_engine_find("nosuch"));
}
END_TEST

START_TEST(t_line)
{
	struct fabric f;
	struct lft_tables t;
	BUILD(&f, LINE_N, LINE_L, 0);
	route(&f, &t);
	ck_assert_uint_eq(t.n_sw, 4);
	int routed = check_routes(&f, &t);
	/* S1..S3 reach 6 LIDs (3 switches + 3 hosts), SX its own 2 */
	ck_assert_int_eq(routed, 3 * 6 + 2);
	check_local(&f, &t);
	ck_assert_uint_eq(entry(&f, &t, "S1", lid_of_node(&f, "H3")), 4);
	ck_assert_uint_eq(entry(&f, &t, "S3", lid_of_node(&f, "H1")), 3);
	ck_assert_uint_eq(entry(&f, &t, "S2", lid_of_node(&f, "H3")), 4);
	ck_assert_uint_eq(entry(&f, &t, "S2", lid_of_node(&f, "S1")), 3);
	ck_assert_uint_eq(entry(&f, &t, "S3", lid_of_node(&f, "H3")), 2);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

START_TEST(t_unreachable_dropped)
{
	struct fabric f;
	struct lft_tables t;
	BUILD(&f, LINE_N, LINE_L, 0);
	route(&f, &t);
	/* HX has a LID but no cable; HY and SX are on an island */
	uint32_t hx = lid_of_node(&f, "HX"), hy = lid_of_node(&f, "HY");
	uint32_t sx = lid_of_node(&f, "SX");
	for (uint32_t r = 0; r < t.n_sw; r++)
		ck_assert_uint_eq(lft_row(&t, r)[hx], LFT_DROP);
	const char *main_sw[] = { "S1", "S2", "S3" };
	for (int i = 0; i < 3; i++) {
		ck_assert_uint_eq(entry(&f, &t, main_sw[i], hy), LFT_DROP);
		ck_assert_uint_eq(entry(&f, &t, main_sw[i], sx), LFT_DROP);
		ck_assert_uint_eq(entry(&f, &t, "SX",
					lid_of_node(&f, main_sw[i])), LFT_DROP);
	}
	ck_assert_uint_eq(entry(&f, &t, "SX", hy), 1);
	ck_assert_uint_eq(entry(&f, &t, "SX", sx), 0);
	/* LID 0 is never routed */
	for (uint32_t r = 0; r < t.n_sw; r++)
		ck_assert_uint_eq(lft_row(&t, r)[0], LFT_DROP);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

/* Remote LIDs a leaf sends up each of its two up-ports. */
static void leaf_split(const struct fabric *f, const struct lft_tables *t,
		       const char *leaf, int *up3, int *up4)
{
	*up3 = *up4 = 0;
	uint32_t row = t->row_of_node[node_named(f, leaf)];
	for (uint32_t lid = 1; lid <= f->max_lid; lid++) {
		uint8_t p = lft_row(t, row)[lid];
		*up3 += p == 3;
		*up4 += p == 4;
	}
}

START_TEST(t_fat_tree)
{
	struct fabric f;
	struct lft_tables t;
	BUILD(&f, FT_N, FT_L, 0);
	route(&f, &t);
	ck_assert_int_eq(check_routes(&f, &t), 6 * 14);
	check_local(&f, &t);
	const char *leaves[] = { "L1", "L2", "L3", "L4" };
	for (int i = 0; i < 4; i++) {
		int a, b;
		leaf_split(&f, &t, leaves[i], &a, &b);
		/* 14 LIDs - own - 2 hosts = 11 go up */
		ck_assert_int_eq(a + b, 11);
		if (abs(a - b) > 1)
			ck_abort_msg("%s: up-ports carry %d and %d LIDs",
				     leaves[i], a, b);
	}
	/* a spine reaches a host in one hop, through the host's leaf */
	ck_assert_uint_eq(entry(&f, &t, "P1", lid_of_node(&f, "H5")), 3);
	ck_assert_uint_eq(entry(&f, &t, "P2", lid_of_node(&f, "H8")), 4);
	/* spine LIDs have a single shortest path from a leaf */
	ck_assert_uint_eq(entry(&f, &t, "L2", lid_of_node(&f, "P1")), 3);
	ck_assert_uint_eq(entry(&f, &t, "L2", lid_of_node(&f, "P2")), 4);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

START_TEST(t_link_not_up_unused)
{
	struct fabric f;
	struct lft_tables t;
	BUILD(&f, FT_N, FT_L, 0);
	/* L1 port 3 (to P1) trained down on both ends */
	struct fab_port *p = fabric_portp(&f, node_named(&f, "L1"), 3);
	p->phys_state = 2;
	f.ports[p->remote].phys_state = 2;
	route(&f, &t);
	ck_assert_int_eq(check_routes(&f, &t), 6 * 14);
	int a, b;
	leaf_split(&f, &t, "L1", &a, &b);
	ck_assert_int_eq(a, 0);
	ck_assert_int_eq(b, 11);
	/* P1 now reaches H1 through another leaf and P2: 3 hops */
	uint8_t out = entry(&f, &t, "P1", lid_of_node(&f, "H1"));
	ck_assert(out >= 2 && out <= 4);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

START_TEST(t_ring)
{
	struct fabric f;
	struct lft_tables t;
	BUILD(&f, RING_N, RING_L, 0);
	route(&f, &t);
	ck_assert_int_eq(check_routes(&f, &t), 4 * 8);
	check_local(&f, &t);
	/* neighbours directly, the opposite switch either way */
	ck_assert_uint_eq(entry(&f, &t, "R1", lid_of_node(&f, "H2")), 2);
	ck_assert_uint_eq(entry(&f, &t, "R1", lid_of_node(&f, "H4")), 3);
	uint8_t o = entry(&f, &t, "R1", lid_of_node(&f, "H3"));
	ck_assert(o == 2 || o == 3);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

START_TEST(t_parallel_links_split)
{
	struct fabric f;
	struct lft_tables t;
	BUILD(&f, PAR_N, PAR_L, 0);
	route(&f, &t);
	ck_assert_int_eq(check_routes(&f, &t), 2 * 8);
	check_local(&f, &t);
	/* A sends B's 5 LIDs over ports 5 and 6; B sends A's 3 back */
	const char *sw[] = { "A", "B" };
	const int remote[] = { 5, 3 };
	for (int i = 0; i < 2; i++) {
		uint32_t row = t.row_of_node[node_named(&f, sw[i])];
		int c5 = 0, c6 = 0;
		for (uint32_t lid = 1; lid <= f.max_lid; lid++) {
			c5 += lft_row(&t, row)[lid] == 5;
			c6 += lft_row(&t, row)[lid] == 6;
		}
		ck_assert_int_eq(c5 + c6, remote[i]);
		ck_assert_int_gt(c5, 0);
		ck_assert_int_gt(c6, 0);
		ck_assert_int_le(abs(c5 - c6), 1);
	}
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

START_TEST(t_lmc_ranges_routed)
{
	struct fabric f;
	struct lft_tables t;
	BUILD(&f, PAR_N, PAR_L, 1);
	ck_assert_uint_eq(f.lmc, 1);
	route(&f, &t);
	/* 6 CA ports with 2 LIDs each, 2 base switch ports 0 with one: 14 LIDs */
	ck_assert_int_eq(check_routes(&f, &t), 2 * 14);
	check_local(&f, &t);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

START_TEST(t_deterministic)
{
	struct fabric f;
	struct lft_tables a, b;
	BUILD(&f, FT_N, FT_L, 0);
	route(&f, &a);
	route(&f, &b);
	ck_assert_uint_eq(a.n_sw, b.n_sw);
	ck_assert_uint_eq(a.max_lid, b.max_lid);
	ck_assert_mem_eq(a.port, b.port, (size_t)a.n_sw * (a.max_lid + 1));
	lft_tables_free(&a);
	lft_tables_free(&b);
	fabric_free(&f);
}
END_TEST


/* A 2-level tree of 6 leaves, 4 spines, 3 hosts a leaf, as net text; perm orders the records. */
static char *tree_text(const int *perm)
{
	enum { L = 6, S = 4, H = 3, N = L + S + L * H };
	size_t cap = 65536, len = 0;
	char *t = malloc(cap);
	ck_assert_ptr_nonnull(t);
	for (int k = 0; k < N; k++) {
		int i = perm[k];
		if (i < L) {
			len += (size_t)snprintf(t + len, cap - len,
				"switchguid=0x%x\nSwitch\t8 \"L%d\"\n", 0x100 + i, i);
			for (int h = 0; h < H; h++)
				len += (size_t)snprintf(t + len, cap - len,
					"[%d]\t\"H%d\"[1]\n", h + 1, i * H + h);
			for (int sp = 0; sp < S; sp++)
				len += (size_t)snprintf(t + len, cap - len,
					"[%d]\t\"S%d\"[%d]\n", H + 1 + sp, sp, i + 1);
		} else if (i < L + S) {
			int sp = i - L;
			len += (size_t)snprintf(t + len, cap - len,
				"switchguid=0x%x\nSwitch\t8 \"S%d\"\n", 0x200 + sp, sp);
			for (int l = 0; l < L; l++)
				len += (size_t)snprintf(t + len, cap - len,
					"[%d]\t\"L%d\"[%d]\n", l + 1, l, H + 1 + sp);
		} else {
			int h = i - L - S;
			len += (size_t)snprintf(t + len, cap - len,
				"caguid=0x%x\nHca\t1 \"H%d\"\n[1]\t\"L%d\"[%d]\n",
				0x1000 + 4 * h, h, h / H, h % H + 1);
		}
		len += (size_t)snprintf(t + len, cap - len, "\n");
		ck_assert_uint_lt(len, cap);
	}
	return t;
}

static void build_text(struct fabric *f, char *text)
{
	char err[256] = "";
	struct lid_report rep;
	fabric_init(f);
	if (topo_parse_string(f, text, "tree.net", err, sizeof(err)) != 0)
		ck_abort_msg("parse: %s", err);
	free(text);
	ck_assert_int_eq(lids_assign(f, NULL, 0, &rep), 0);
}

/* The same fabric listed in another order gives the same tables, entry by entry. */
START_TEST(t_order_independent)
{
	enum { N = 6 + 4 + 18 };
	int fwd[N], mixed[N];
	for (int i = 0; i < N; i++) {
		fwd[i] = i;
		mixed[i] = (i * 11 + 5) % N;	/* 11 is prime to 28: a permutation */
	}
	struct fabric f, g;
	struct lft_tables a, b;
	build_text(&f, tree_text(fwd));
	build_text(&g, tree_text(mixed));
	route(&f, &a);
	route(&g, &b);
	ck_assert_uint_eq(a.max_lid, b.max_lid);
	int compared = 0;
	for (uint32_t r = 0; r < a.n_sw; r++) {
		uint64_t guid = f.nodes[a.sw_node[r]].guid;
		uint32_t gn = fabric_find_node(&g, guid);
		ck_assert_uint_ne(gn, FAB_NONE);
		uint32_t gr = b.row_of_node[gn];
		for (uint32_t lid = 1; lid <= a.max_lid; lid++, compared++)
			if (lft_row(&a, r)[lid] != lft_row(&b, gr)[lid])
				ck_abort_msg("switch 0x%llx LID %u: port %u vs %u",
					     (unsigned long long)guid, lid,
					     lft_row(&a, r)[lid], lft_row(&b, gr)[lid]);
	}
	ck_assert_int_eq(compared, 10 * 28);
	lft_tables_free(&a);
	lft_tables_free(&b);
	fabric_free(&f);
	fabric_free(&g);
}
END_TEST

static Suite *minhop_suite(void)
{
	Suite *s = suite_create("minhop");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, t_engine_lookup);
	tcase_add_test(tc, t_line);
	tcase_add_test(tc, t_unreachable_dropped);
	tcase_add_test(tc, t_fat_tree);
	tcase_add_test(tc, t_link_not_up_unused);
	tcase_add_test(tc, t_ring);
	tcase_add_test(tc, t_parallel_links_split);
	tcase_add_test(tc, t_lmc_ranges_routed);
	tcase_add_test(tc, t_deterministic);
	tcase_add_test(tc, t_order_independent);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(minhop_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
