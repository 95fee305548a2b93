/*
 * The route verifier (routing/verify/verify.c): clean minhop tables pass, link
 * loads on a small tree match a count by hand, and each kind of broken
 * table written by hand is found: a dropped entry, a hole, a loop, a
 * route longer than the shortest, a channel dependency cycle (an error
 * only when the engine promises deadlock freedom).  With SL-to-VL tables
 * written by hand: the graph over (link, VL) loses or keeps a cycle as
 * the SLs and tables say, routes per (link, VL), and a pair on VL 15 or
 * on a VL its link does not run is an error.  With LMC 1 on the 16-host
 * two-level tree: tables that put every base LID on two of the four
 * spines and the other offsets on the other two (balanced in sum, as
 * ibsmd's engines wrote them before offsets had counts of their own)
 * fail per LID offset; the offsets in turn pass.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engine.h"
#include "routing/verify/verify.h"
#include "sm/base/fabric.h"
#include "sm/model/lids.h"
#include "sm/base/topo.h"

#include "routing_testlib.h"

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

static char *net_text(const struct tnode *n, int nn, const struct tlink *l,
		      int nl)
{
	size_t cap = 65536, len = 0;
	char *s = malloc(cap);
	ck_assert_ptr_nonnull(s);
	for (int i = 0; i < nn; i++) {
		len += (size_t)snprintf(s + len, cap - len, "%s=0x%llx\n%s\t%d \"%s\"\n",
					n[i].sw ? "switchguid" : "caguid",
					(unsigned long long)n[i].guid,
					n[i].sw ? "Switch" : "Hca", n[i].nports, n[i].name);
		for (int j = 0; j < nl; j++) {
			if (!strcmp(l[j].a, n[i].name))
				len += (size_t)snprintf(s + len, cap - len, "[%d]\t\"%s\"[%d]\n",
							l[j].pa, l[j].b, l[j].pb);
			if (!strcmp(l[j].b, n[i].name))
				len += (size_t)snprintf(s + len, cap - len, "[%d]\t\"%s\"[%d]\n",
							l[j].pb, l[j].a, l[j].pa);
		}
		len += (size_t)snprintf(s + len, cap - len, "\n");
		ck_assert_uint_lt(len, cap);
	}
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

static void set_entry(const struct fabric *f, struct lft_tables *t,
		      const char *sw, uint32_t lid, uint8_t port)
{
	uint32_t row = t->row_of_node[node_named(f, sw)];
	ck_assert_uint_ne(row, FAB_NONE);
	lft_row(t, row)[lid] = port;
}

static void verify(const struct fabric *f, const struct lft_tables *t,
		   int dlf, struct verify_report *r)
{
	struct verify_opts o = { .deadlock_free_required = dlf };
	ck_assert_int_eq(route_verify(f, t, &o, r), 0);
}

/* The report as text; its last line. */
static char *report_text(const struct verify_report *r, char *last, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(verify_print(r, fp), 0);
	fclose(fp);
	ck_assert_uint_gt(len, 0);
	ck_assert_int_eq(buf[len - 1], '\n');
	buf[len - 1] = '\0';
	const char *nl = strrchr(buf, '\n');
	snprintf(last, n, "%s", nl ? nl + 1 : buf);
	buf[len - 1] = '\n';
	return buf;
}

/* Two leaves with two hosts each under one spine; port 4 of L1 is empty. */
static const struct tnode TREE_N[] = {
	{ "L1", 1, 4, 0x100 }, { "L2", 1, 4, 0x101 }, { "SP", 1, 4, 0x102 },
	{ "H1", 0, 1, 0x200 }, { "H2", 0, 1, 0x210 },
	{ "H3", 0, 1, 0x220 }, { "H4", 0, 1, 0x230 },
};
static const struct tlink TREE_L[] = {
	{ "L1", 1, "H1", 1 }, { "L1", 2, "H2", 1 },
	{ "L2", 1, "H3", 1 }, { "L2", 2, "H4", 1 },
	{ "L1", 3, "SP", 1 }, { "L2", 3, "SP", 2 },
};
#define TREE build(&f, TREE_N, 7, TREE_L, 6, 0)

/* Four switches in a ring, one host each: port 2 to the next, 3 to the previous. */
static const struct tnode RING_N[] = {
	{ "S0", 1, 4, 0x100 }, { "S1", 1, 4, 0x101 },
	{ "S2", 1, 4, 0x102 }, { "S3", 1, 4, 0x103 },
	{ "H0", 0, 1, 0x200 }, { "H1", 0, 1, 0x210 },
	{ "H2", 0, 1, 0x220 }, { "H3", 0, 1, 0x230 },
};
static const struct tlink RING_L[] = {
	{ "S0", 1, "H0", 1 }, { "S1", 1, "H1", 1 },
	{ "S2", 1, "H2", 1 }, { "S3", 1, "H3", 1 },
	{ "S0", 2, "S1", 3 }, { "S1", 2, "S2", 3 },
	{ "S2", 2, "S3", 3 }, { "S3", 2, "S0", 3 },
};
#define RING build(&f, RING_N, 8, RING_L, 8, 0)

START_TEST(t_clean_tree)
{
	struct fabric f;
	struct lft_tables t;
	struct verify_report r;
	char last[512];
	TREE;
	route(&f, &t);
	verify(&f, &t, 1, &r);
	ck_assert_uint_eq(r.switches, 3);
	ck_assert_uint_eq(r.sources, 4);
	ck_assert_uint_eq(r.lids, 7);
	ck_assert_uint_eq(r.unattached_lids, 0);
	/* 4 sources x 7 LIDs, less each host's own */
	ck_assert_uint_eq(r.pairs, 4 * 7 - 4);
	ck_assert_uint_eq(r.unreachable, 0);
	ck_assert_uint_eq(r.loops, 0);
	ck_assert_uint_eq(r.n_examples, 0);
	ck_assert_uint_eq(r.nonminimal, 0);
	/* H1 -> L1 -> SP -> L2 -> H3 */
	ck_assert_uint_eq(r.max_hops, 4);
	ck_assert_int_eq(r.cycle, 0);
	ck_assert_uint_eq(r.errors, 0);
	ck_assert_uint_eq(r.warnings, 0);
	char *text = report_text(&r, last, sizeof(last));
	ck_assert_msg(!strncmp(last, "verify: OK", 10), "last line: %s", last);
	free(text);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

/* By hand: each leaf's up link carries its 2 hosts to the other leaf's 2. */
START_TEST(t_link_loads_tree)
{
	struct fabric f;
	struct lft_tables t;
	struct verify_report r;
	TREE;
	route(&f, &t);
	verify(&f, &t, 1, &r);
	ck_assert_uint_eq(r.ca_pairs, 4 * 3);
	ck_assert_uint_eq(r.max_rank, 1);
	ck_assert_uint_eq(r.all.links, 4);
	ck_assert_uint_eq(r.up.links, 2);
	ck_assert_uint_eq(r.up.max, 4);
	ck_assert_uint_eq(r.up.min, 4);
	ck_assert_uint_eq(r.up.total, 8);
	ck_assert_uint_eq(r.down.links, 2);
	ck_assert_uint_eq(r.down.max, 4);
	ck_assert_uint_eq(r.down.min, 4);
	ck_assert_uint_eq(r.lateral.links, 0);
	/* each up link depends on the other leaf's down link only */
	ck_assert_uint_eq(r.cdg_nodes, 4);
	ck_assert_uint_eq(r.cdg_edges, 2);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

START_TEST(t_dropped_entry)
{
	struct fabric f;
	struct lft_tables t;
	struct verify_report r;
	char last[512];
	TREE;
	route(&f, &t);
	/* H1 and H2 lose H3; the spine's own LID goes to port 0 of L2 */
	set_entry(&f, &t, "L1", lid_of(&f, "H3"), LFT_DROP);
	set_entry(&f, &t, "L2", lid_of(&f, "SP"), 0);
	verify(&f, &t, 0, &r);
	ck_assert_uint_eq(r.drops, 2 + 2);
	ck_assert_uint_eq(r.unreachable, 4);
	ck_assert_uint_eq(r.holes, 0);
	ck_assert_uint_eq(r.loops, 0);
	ck_assert_uint_eq(r.errors, 1);
	ck_assert_uint_eq(r.n_examples, 2);
	int seen_l1 = 0, seen_l2 = 0;
	for (uint32_t i = 0; i < r.n_examples; i++) {
		ck_assert_uint_eq(r.ex[i].kind, VERIFY_DROP);
		if (r.ex[i].at_guid == 0x100) {
			ck_assert_uint_eq(r.ex[i].at_port, LFT_DROP);
			ck_assert_uint_eq(r.ex[i].lid, lid_of(&f, "H3"));
			ck_assert_uint_eq(r.ex[i].src_guid, 0x201);	/* H1 port 1 */
			seen_l1 = 1;
		} else {
			ck_assert_uint_eq(r.ex[i].at_guid, 0x101);
			ck_assert_uint_eq(r.ex[i].at_port, 0);
			ck_assert_uint_eq(r.ex[i].src_guid, 0x221);	/* H3 port 1 */
			seen_l2 = 1;
		}
	}
	ck_assert(seen_l1 && seen_l2);
	char *text = report_text(&r, last, sizeof(last));
	ck_assert_msg(!strncmp(last, "verify: FAILED", 14), "last line: %s", last);
	ck_assert_ptr_nonnull(strstr(text, "dropped at \"L1\""));
	free(text);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

START_TEST(t_hole)
{
	struct fabric f;
	struct lft_tables t;
	struct verify_report r;
	TREE;
	route(&f, &t);
	/* port 4 of L1 has no cable; port 1 of L2 leads to H3, not H4 */
	set_entry(&f, &t, "L1", lid_of(&f, "H4"), 4);
	set_entry(&f, &t, "L2", lid_of(&f, "H4"), 1);
	verify(&f, &t, 0, &r);
	/* H1, H2 into L1's hole; H3 into L2's wrong CA (H4's own pair excepted) */
	ck_assert_uint_eq(r.holes, 3);
	ck_assert_uint_eq(r.unreachable, 3);
	ck_assert_uint_eq(r.drops, 0);
	ck_assert_uint_eq(r.errors, 1);
	ck_assert_uint_eq(r.ex[0].kind, VERIFY_HOLE);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

START_TEST(t_two_switch_loop)
{
	struct fabric f;
	struct lft_tables t;
	struct verify_report r;
	TREE;
	route(&f, &t);
	/* the spine sends H3 back down to L1, which sends it up again */
	set_entry(&f, &t, "SP", lid_of(&f, "H3"), 1);
	verify(&f, &t, 0, &r);
	ck_assert_uint_eq(r.loops, 2);		/* from H1 and H2 */
	ck_assert_uint_eq(r.unreachable, 2);
	ck_assert_uint_eq(r.drops + r.holes, 0);
	ck_assert_uint_eq(r.errors, 1);
	ck_assert_uint_eq(r.ex[0].kind, VERIFY_LOOP);
	ck_assert_uint_eq(r.ex[0].lid, lid_of(&f, "H3"));
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

START_TEST(t_longer_than_shortest)
{
	struct fabric f;
	struct lft_tables t;
	struct verify_report r;
	RING;
	route(&f, &t);
	verify(&f, &t, 0, &r);
	ck_assert_uint_eq(r.nonminimal, 0);
	ck_assert_uint_eq(r.max_hops, 4);
	/* S0 -> S3 -> S2 -> S1 instead of S0 -> S1 */
	uint32_t h1 = lid_of(&f, "H1");
	set_entry(&f, &t, "S0", h1, 3);
	set_entry(&f, &t, "S3", h1, 3);
	set_entry(&f, &t, "S2", h1, 3);
	verify(&f, &t, 0, &r);
	ck_assert_uint_eq(r.unreachable, 0);
	/* from H0 (3 hops, not 1) and H3 (2 either way) */
	ck_assert_uint_eq(r.nonminimal, 1);
	ck_assert_uint_eq(r.max_excess, 2);
	ck_assert_uint_eq(r.max_hops, 5);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

START_TEST(t_ring_cycle)
{
	struct fabric f;
	struct lft_tables t;
	struct verify_report r;
	char last[512];
	RING;
	route(&f, &t);
	/* minhop on a ring: all delivered on shortest paths, but a cycle */
	verify(&f, &t, 0, &r);
	ck_assert_uint_eq(r.unreachable, 0);
	ck_assert_uint_eq(r.nonminimal, 0);
	ck_assert_int_eq(r.cycle, 1);
	ck_assert_uint_eq(r.cycle_len, 4);
	ck_assert_uint_eq(r.errors, 0);
	ck_assert_uint_eq(r.warnings, 1);
	ck_assert_uint_eq(r.lateral.links, 8);
	ck_assert_uint_eq(r.up.links + r.down.links, 0);
	char *text = report_text(&r, last, sizeof(last));
	ck_assert_msg(!strncmp(last, "verify: OK", 10), "last line: %s", last);
	ck_assert_ptr_nonnull(strstr(text, "warning"));
	free(text);
	verify(&f, &t, 1, &r);
	ck_assert_int_eq(r.cycle, 1);
	ck_assert_uint_eq(r.errors, 1);
	ck_assert_uint_eq(r.warnings, 0);
	text = report_text(&r, last, sizeof(last));
	ck_assert_msg(!strncmp(last, "verify: FAILED", 14), "last line: %s", last);
	free(text);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

/* The ring routed one way round only for the opposite switches: no cycle. */
START_TEST(t_ring_broken_cycle)
{
	struct fabric f;
	struct lft_tables t;
	struct verify_report r;
	RING;
	route(&f, &t);
	/*
	 * Opposite pairs (S0,S2) and (S1,S3) and their switch LIDs: no route
	 * may turn S3 -> S0 -> S1, and none S0 -> S1 -> S2 ... Route every
	 * two-hop path through S1 or S2 so that the link S3-S0 is never a
	 * middle hop and S0 -> S1 -> S2 / S2 -> S1 -> S0 are the only turns
	 * at S1, like up/down routing with S1, S2 as roots.
	 */
	const char *sw[4] = { "S0", "S1", "S2", "S3" };
	const char *host[4] = { "H0", "H1", "H2", "H3" };
	for (int k = 0; k < 2; k++) {
		const char *const *names = k ? host : sw;
		set_entry(&f, &t, "S0", lid_of(&f, names[2]), 2);	/* via S1 */
		set_entry(&f, &t, "S2", lid_of(&f, names[0]), 3);	/* via S1 */
		set_entry(&f, &t, "S1", lid_of(&f, names[3]), 2);	/* via S2 */
		set_entry(&f, &t, "S3", lid_of(&f, names[1]), 3);	/* via S2 */
	}
	verify(&f, &t, 1, &r);
	ck_assert_uint_eq(r.unreachable, 0);
	ck_assert_uint_eq(r.nonminimal, 0);
	ck_assert_int_eq(r.cycle, 0);
	ck_assert_uint_eq(r.errors, 0);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

/* Host H5's second port is not cabled: its LID counts apart, no error. */
START_TEST(t_lmc_and_uncabled_port)
{
	static const struct tnode n[] = {
		{ "L1", 1, 4, 0x100 }, { "L2", 1, 4, 0x101 }, { "SP", 1, 4, 0x102 },
		{ "H1", 0, 1, 0x200 }, { "H2", 0, 1, 0x210 },
		{ "H3", 0, 1, 0x220 }, { "H5", 0, 2, 0x230 },
	};
	static const struct tlink l[] = {
		{ "L1", 1, "H1", 1 }, { "L1", 2, "H2", 1 },
		{ "L2", 1, "H3", 1 }, { "L2", 2, "H5", 1 },
		{ "L1", 3, "SP", 1 }, { "L2", 3, "SP", 2 },
	};
	struct fabric f;
	struct lft_tables t;
	struct verify_report r;
	build(&f, n, 7, l, 6, 1);
	route(&f, &t);
	verify(&f, &t, 1, &r);
	ck_assert_uint_eq(r.sources, 4);
	/* 4 cabled CA ports x 2 LIDs, 3 switches x 1 */
	ck_assert_uint_eq(r.lids, 4 * 2 + 3);
	ck_assert_uint_eq(r.unattached_lids, 2);
	ck_assert_uint_eq(r.pairs, 4 * 11 - 4 * 2);
	ck_assert_uint_eq(r.unreachable, 0);
	ck_assert_uint_eq(r.errors, 0);
	/* loads over base LIDs only */
	ck_assert_uint_eq(r.ca_pairs, 4 * 3);
	ck_assert_uint_eq(r.up.max, 4);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

/*
 * The fat2(4, 4, 4) of routing_testlib.h, LMC 1, its leaves' entries
 * towards remote hosts written by hand: host h's offset k leaves over
 * spine (h % 2 + 2k) % 4 when split, (h + k) % 4 when not.
 */
static void lmc_tables(int split, struct verify_report *r)
{
	struct tb *b = fat2(4, 4, 4);
	struct fabric f;
	struct lft_tables t;
	tb_build(&f, b, NULL, 1);
	free(b);
	route(&f, &t);
	for (int h = 0; h < 16; h++) {
		char host[16], leaf[16];
		snprintf(host, sizeof(host), "H%d", h);
		for (int i = 0; i < 4; i++) {
			if (i == h / 4)
				continue;
			snprintf(leaf, sizeof(leaf), "L%d", i);
			for (int k = 0; k < 2; k++) {
				int spine = split ? (h % 2 + 2 * k) % 4 : (h + k) % 4;
				set_entry(&f, &t, leaf, lid_of(&f, host) + (uint32_t)k,
					  (uint8_t)(4 + spine + 1));
			}
		}
	}
	verify(&f, &t, 1, r);
	ck_assert_uint_eq(r->unreachable, 0);
	ck_assert_uint_eq(r->n_offsets, 2);
	lft_tables_free(&t);
	fabric_free(&f);
}

START_TEST(t_lmc_offsets_split)
{
	struct verify_report r;
	char last[512];
	lmc_tables(1, &r);
	/* in sum 12 routes on every link, as the offsets in turn */
	ck_assert_uint_eq(r.sum_up.max, 24);
	ck_assert_uint_eq(r.sum_up.min, 24);
	for (int k = 0; k < 2; k++) {
		ck_assert_uint_eq(r.off[k].up.max, 24);
		ck_assert_uint_eq(r.off[k].up.min, 0);
		ck_assert_uint_eq(r.off[k].unbalanced, 1 | 2 | 4);
	}
	ck_assert_uint_eq(r.offsets_unbalanced, 2);
	ck_assert_uint_eq(r.errors, 1);
	char *text = report_text(&r, last, sizeof(last));
	ck_assert_msg(strstr(text, "    offset 0: all max 24, min 0; up max 24, min 0; "
			     "down max 24, min 0: UNBALANCED (all, up, down)\n"), "%s", text);
	ck_assert_msg(strstr(last, "verify: FAILED") &&
		      strstr(last, ", 2 LID offsets unbalanced"), "%s", last);
	free(text);

	lmc_tables(0, &r);
	for (int k = 0; k < 2; k++) {
		ck_assert_uint_eq(r.off[k].up.max, 12);
		ck_assert_uint_eq(r.off[k].up.min, 12);
		ck_assert_uint_eq(r.off[k].unbalanced, 0);
	}
	ck_assert_uint_eq(r.errors, 0);
}
END_TEST

/*
 * QoS fields by hand: SL src_sl[source LID] to every LID (one source
 * class per LID); every CA port's slot on table ca_tab, every switch
 * (in, out) pair's on sw_tab.
 */
static void hand_qos(const struct fabric *f, struct lft_tables *t,
		     const uint8_t *src_sl, const uint8_t *ca_tab,
		     const uint8_t *sw_tab)
{
	size_t cols = (size_t)t->max_lid + 1, slots = 0;
	t->sl_class = malloc(cols * sizeof(*t->sl_class));
	t->sl = malloc(cols * cols);
	t->sl2vl = malloc(2 * QOS_SLS);
	t->sl2vl_first = malloc(f->n_nodes * sizeof(*t->sl2vl_first));
	t->sl2vl_width = malloc(f->n_nodes);
	ck_assert(t->sl_class && t->sl && t->sl2vl && t->sl2vl_first && t->sl2vl_width);
	t->n_sl_class = (uint32_t)cols;
	for (size_t c = 0; c < cols; c++) {
		t->sl_class[c] = (uint16_t)c;
		memset(t->sl + c * cols, src_sl[c], cols);
	}
	memcpy(t->sl2vl, ca_tab, QOS_SLS);
	memcpy(t->sl2vl + QOS_SLS, sw_tab, QOS_SLS);
	t->sl2vl_n = 2;
	t->sl2vl_nodes = f->n_nodes;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		unsigned w = f->nodes[i].nports + 1u;
		t->sl2vl_width[i] = (uint8_t)w;
		t->sl2vl_first[i] = (uint32_t)slots;
		slots += (size_t)w * w;
	}
	t->sl2vl_idx = malloc(slots * sizeof(*t->sl2vl_idx));
	ck_assert_ptr_nonnull(t->sl2vl_idx);
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		unsigned w = t->sl2vl_width[i];
		for (unsigned k = 0; k < w * w; k++)
			t->sl2vl_idx[t->sl2vl_first[i] + k] =
				f->nodes[i].type == FAB_SWITCH;
	}
}

static const uint8_t IDENTITY[QOS_SLS] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
static const uint8_t ALL_VL0[QOS_SLS] = { 0 };

/*
 * The ring with every two-hop route clockwise: one dependency per source
 * switch, S(i) -> S(i+1) -> S(i+2), four in a cycle on one VL.  H0's
 * traffic on SL 1: with SL i -> VL i everywhere its dependency moves to
 * VL 1 and VL 0 has a chain, no cycle; with the switches mapping every
 * SL to VL 0 (the CA ports still SL 1 -> VL 1) the cycle is back on VL 0.
 */
START_TEST(t_ring_cycle_per_vl)
{
	struct fabric f;
	struct lft_tables t;
	struct verify_report r;
	char last[512];
	RING;
	route(&f, &t);
	const char *sw[4] = { "S0", "S1", "S2", "S3" };
	const char *host[4] = { "H0", "H1", "H2", "H3" };
	for (int i = 0; i < 4; i++) {
		set_entry(&f, &t, sw[i], lid_of(&f, sw[(i + 2) % 4]), 2);
		set_entry(&f, &t, sw[i], lid_of(&f, host[(i + 2) % 4]), 2);
	}
	verify(&f, &t, 1, &r);
	ck_assert_uint_eq(r.unreachable, 0);
	ck_assert_int_eq(r.cycle, 1);
	ck_assert_int_eq(r.qos, 0);

	uint8_t *src_sl = calloc(t.max_lid + 1, 1);
	ck_assert_ptr_nonnull(src_sl);
	src_sl[lid_of(&f, "H0")] = 1;
	hand_qos(&f, &t, src_sl, IDENTITY, IDENTITY);
	verify(&f, &t, 1, &r);
	ck_assert_int_eq(r.qos, 1);
	ck_assert_uint_eq(r.n_vls, 15);	/* the identity gives VL 14 */
	ck_assert_uint_eq(r.unreachable, 0);
	ck_assert_uint_eq(r.vl_bad, 0);
	ck_assert_int_eq(r.cycle, 0);
	ck_assert_uint_eq(r.errors, 0);
	/* 8 links on VL 0; S0 -> S1 -> S2 on VL 1 as well */
	ck_assert_uint_eq(r.cdg_nodes, 10);
	ck_assert_uint_eq(r.vls_used, 0x3);
	char *text = report_text(&r, last, sizeof(last));
	ck_assert_msg(!strncmp(last, "verify: OK", 10), "last line: %s", last);
	ck_assert_ptr_nonnull(strstr(text, "over (link, VL)"));
	free(text);

	lft_tables_free_qos(&t);
	hand_qos(&f, &t, src_sl, IDENTITY, ALL_VL0);
	verify(&f, &t, 1, &r);
	ck_assert_int_eq(r.cycle, 1);
	ck_assert_uint_eq(r.cycle_len, 4);
	for (uint32_t i = 0; i < r.cycle_len; i++)
		ck_assert_uint_eq(r.cycle_vl[i], 0);
	ck_assert_uint_eq(r.errors, 1);
	ck_assert_uint_eq(r.vls_used, 0x1);
	text = report_text(&r, last, sizeof(last));
	ck_assert_msg(!strncmp(last, "verify: FAILED", 14), "last line: %s", last);
	ck_assert_ptr_nonnull(strstr(text, "/VL0"));
	free(text);
	free(src_sl);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

/*
 * The tree, H1 on SL 3, SL i -> VL i: routes per (link, VL) by hand; then
 * the link L1 - SP runs 2 data VLs (VLCap VL0-1), and H1's four pairs up
 * that link (H3, H4, SP, L2) are on a VL it lacks; a ceiling of VL0 only
 * spoils all six of H1's pairs, the switches sending SL 3 on VL 15 all
 * but the one to L1 itself.
 */
/*
 * A VL that only routes to a switch's LID take is a VL used: H1 sends to
 * SP (the spine's own LID) on SL 3, everything else on SL 0.
 */
START_TEST(t_vl_used_towards_a_switch)
{
	struct fabric f;
	struct lft_tables t;
	struct verify_report r;
	TREE;
	route(&f, &t);
	uint8_t *src_sl = calloc(t.max_lid + 1, 1);
	ck_assert_ptr_nonnull(src_sl);
	hand_qos(&f, &t, src_sl, IDENTITY, IDENTITY);
	size_t cols = (size_t)t.max_lid + 1;
	t.sl[lid_of(&f, "H1") * cols + lid_of(&f, "SP")] = 3;
	verify(&f, &t, 1, &r);
	ck_assert_uint_eq(r.errors, 0);
	ck_assert_uint_eq(r.vls_used, (1u << 0) | (1u << 3));
	free(src_sl);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

START_TEST(t_vl_beyond_link)
{
	struct fabric f;
	struct lft_tables t;
	struct verify_report r;
	char last[512];
	TREE;
	route(&f, &t);
	uint8_t *src_sl = calloc(t.max_lid + 1, 1);
	ck_assert_ptr_nonnull(src_sl);
	src_sl[lid_of(&f, "H1")] = 3;
	hand_qos(&f, &t, src_sl, IDENTITY, IDENTITY);
	verify(&f, &t, 1, &r);
	ck_assert_uint_eq(r.vl_bad, 0);
	ck_assert_uint_eq(r.errors, 0);
	ck_assert_uint_eq(r.vls_used, (1u << 0) | (1u << 3));
	/* 4 switch links x 2 VLs; H1 -> H3, H4 over L1 -> SP and SP -> L2 */
	ck_assert_uint_eq(r.vl_all.links, 8);
	ck_assert_uint_eq(r.per_vl[3].total, 4);
	ck_assert_uint_eq(r.per_vl[3].max, 2);
	ck_assert_uint_eq(r.per_vl[3].min, 0);
	ck_assert_uint_eq(r.per_vl[0].total + r.per_vl[3].total, r.all.total);

	fabric_portp(&f, node_named(&f, "L1"), 3)->vl_cap = 2;	/* VL0-1 */
	verify(&f, &t, 1, &r);
	ck_assert_uint_eq(r.vl_bad, 4);
	ck_assert_uint_eq(r.errors, 1);
	ck_assert_uint_eq(r.vl_ex.vl, 3);
	ck_assert_uint_eq(r.vl_ex.link_vls, 2);
	ck_assert_uint_eq(r.vl_ex.at_guid, 0x100);
	ck_assert_uint_eq(r.vl_ex.at_port, 3);
	char *text = report_text(&r, last, sizeof(last));
	ck_assert_msg(!strncmp(last, "verify: FAILED", 14), "last line: %s", last);
	ck_assert_ptr_nonnull(strstr(text, "4 pairs on VL 15 or a VL their link lacks"));
	free(text);

	struct verify_opts o = { .max_op_vls = 1 };	/* VL0 only */
	ck_assert_int_eq(route_verify(&f, &t, &o, &r), 0);
	ck_assert_uint_eq(r.vl_bad, 6);

	uint8_t to15[QOS_SLS];
	memcpy(to15, IDENTITY, sizeof(to15));
	to15[3] = 15;
	lft_tables_free_qos(&t);
	hand_qos(&f, &t, src_sl, IDENTITY, to15);
	fabric_portp(&f, node_named(&f, "L1"), 3)->vl_cap = 0;	/* unknown */
	verify(&f, &t, 1, &r);
	ck_assert_uint_eq(r.vl_bad, 5);		/* H1 -> L1 leaves no switch */
	ck_assert_uint_eq(r.vl_ex.vl, 15);
	free(src_sl);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

START_TEST(t_engine_names)
{
	ck_assert_int_eq(verify_engine_deadlock_free("updn"), 1);
	ck_assert_int_eq(verify_engine_deadlock_free("ftree"), 1);
	ck_assert_int_eq(verify_engine_deadlock_free("dmodk"), 1);
	ck_assert_int_eq(verify_engine_deadlock_free("minhop"), 0);
	ck_assert_int_eq(verify_engine_deadlock_free(NULL), 0);
}
END_TEST

static Suite *verify_suite(void)
{
	Suite *s = suite_create("verify");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, t_clean_tree);
	tcase_add_test(tc, t_link_loads_tree);
	tcase_add_test(tc, t_dropped_entry);
	tcase_add_test(tc, t_hole);
	tcase_add_test(tc, t_two_switch_loop);
	tcase_add_test(tc, t_longer_than_shortest);
	tcase_add_test(tc, t_ring_cycle);
	tcase_add_test(tc, t_ring_broken_cycle);
	tcase_add_test(tc, t_lmc_and_uncabled_port);
	tcase_add_test(tc, t_lmc_offsets_split);
	tcase_add_test(tc, t_engine_names);
	tcase_add_test(tc, t_ring_cycle_per_vl);
	tcase_add_test(tc, t_vl_beyond_link);
	tcase_add_test(tc, t_vl_used_towards_a_switch);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(verify_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
