/*
 * VOQsw (the VOQsw paper; routing/qos/voqsw.c and its rules 1-5): a
 * hand-worked example (a line of three switches, two hosts each: the SL of
 * every path, 24 tuples, full VOQ in 4 SLs, S0's (1, 3) table, the 2- and
 * 3-SL cut-offs), and on random irregular fabrics (the paper's: 8-port
 * switches, 4 hosts each, a 4-regular switch graph, up-down routing): every
 * path through a considered tuple finds at that switch the VL of its output
 * port at the next switch, the ranking and the report recomputed here
 * independently, every table entry a data VL of its link, full VOQ at or
 * above the per-(source, first port) lower bound, the same result twice and
 * from a fabric described in another order, and the VL grouping (8 ports on 8
 * VLs: one each; on 4 VLs: two each).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "routing/qos/voqsw.h"
#include "routing_testlib.h"

/* ---- walking the LFTs, independently of routing/qos/voqsw.c ---- */

struct hop {
	uint32_t sw;
	unsigned ip, op, nop;
};

/* The switch node CA port pi is cabled to. */
static uint32_t sw_of(const struct fabric *f, uint32_t pi)
{
	return f->ports[f->ports[pi].remote].node;
}

/*
 * The tuples of the path from CA port src to LID d (rule 2), into h;
 * their count, -1 when the route does not deliver.
 */
static int path_of(const struct fabric *f, const struct lft_tables *t,
		   uint32_t src, uint32_t d, struct hop *h)
{
	uint32_t sw = sw_of(f, src);
	unsigned ip = f->ports[f->ports[src].remote].num;
	int n = 0;
	for (int guard = 0; guard < 64; guard++) {
		unsigned op = lft_row(t, t->row_of_node[sw])[d];
		if (op == 0 || op > f->nodes[sw].nports)
			return -1;
		uint32_t r = fabric_portp(f, sw, op)->remote;
		uint32_t nsw = f->ports[r].node;
		if (f->nodes[nsw].type != FAB_SWITCH)
			return r == f->lid_port[d] ? n : -1;
		h[n] = (struct hop){ sw, ip, op,
				     lft_row(t, t->row_of_node[nsw])[d] };
		n++;
		sw = nsw;
		ip = f->ports[r].num;
	}
	return -1;
}

/* CA ports with a LID, by LID (LMC 0 in these tests). */
static int end_ports(const struct fabric *f, uint32_t *ep)
{
	int n = 0;
	for (uint32_t l = 1; l <= f->max_lid; l++) {
		uint32_t pi = f->lid_port[l];
		if (pi != FAB_NONE && f->nodes[f->ports[pi].node].type == FAB_CA)
			ep[n++] = pi;
	}
	return n;
}

/* ---- the hand example ---- */

/*
 * S0: p1=h0 p2=h1 p3-S1.p3; S1: p1=h2 p2=h3 p3-S0 p4-S2.p3;
 * S2: p1=h4 p2=h5 p3-S1; host GUIDs (hence LIDs) in host order.
 */
static struct tb *line3(void)
{
	struct tb *b = tb_new();
	int s0 = tb_node(b, 1, 3, 0x10, "S0");
	int s1 = tb_node(b, 1, 4, 0x11, "S1");
	int s2 = tb_node(b, 1, 3, 0x12, "S2");
	int sw[6] = { s0, s0, s1, s1, s2, s2 };
	for (int h = 0; h < 6; h++)
		tb_link(b, sw[h], 1 + h % 2,
			tb_node(b, 0, 1, 0x1000 + 0x10 * (uint64_t)h, "h%d", h), 1);
	tb_link(b, s0, 3, s1, 3);
	tb_link(b, s1, 4, s2, 3);
	return b;
}

static void open_line3_lmc(struct fabric *f, struct lft_tables *t,
			   struct tb **b, uint8_t lmc)
{
	*b = line3();
	tb_build(f, *b, NULL, lmc);
	tb_route(routing_engine_find("minhop"), f, t);
	for (int h = 1; h < 6; h++) {
		char a[16], z[16];
		snprintf(a, sizeof(a), "h%d", h - 1);
		snprintf(z, sizeof(z), "h%d", h);
		ck_assert_uint_lt(lid_of(f, a), lid_of(f, z));
	}
}

static void open_line3(struct fabric *f, struct lft_tables *t, struct tb **b)
{
	open_line3_lmc(f, t, b, 0);
}

static unsigned sl_between(const struct fabric *f, const struct lft_tables *t,
			   int a, int z)
{
	char na[16], nz[16];
	snprintf(na, sizeof(na), "h%d", a);
	snprintf(nz, sizeof(nz), "h%d", z);
	return lft_sl(t, lid_of(f, na), lid_of(f, nz));
}

/* The hand-worked SL from h0..h5 (rows) to h0..h5 (the diagonal unused). */
static const unsigned want[6][6] = {
	{ 0, 0, 0, 1, 2, 3 },
	{ 0, 0, 0, 1, 2, 3 },
	{ 0, 1, 0, 0, 0, 1 },
	{ 0, 1, 0, 0, 0, 1 },
	{ 0, 1, 2, 3, 0, 0 },
	{ 0, 1, 2, 3, 0, 0 },
};

/* Full VOQ: 24 tuples, 4 SLs, the hand-worked SL of every path. */
START_TEST(t_hand_full)
{
	struct tb *b;
	struct fabric f;
	struct lft_tables t;
	struct voqsw_report r;
	unsigned sls;
	open_line3(&f, &t, &b);
	ck_assert_int_eq(voqsw_full_sls(&f, &t, &sls, &r), 0);
	ck_assert_uint_eq(sls, 4);
	ck_assert_uint_eq(r.tuples, 24);
	ck_assert_uint_eq(r.paths, 30);

	/* 16 SLs hold full VOQ: the same greedy assignment */
	struct voqsw_params p = { .n_sls = 16, .n_vls = 8 };
	ck_assert_int_eq(voqsw_apply(&f, &t, &p, &r), 0);
	ck_assert_uint_eq(r.considered, 24);
	ck_assert_uint_eq(r.tuples, 24);
	ck_assert_uint_eq(r.paths_covered, 30);
	ck_assert_uint_eq(r.sls_used, 4);
	ck_assert_uint_eq(r.weight_considered, r.weight);
	for (int a = 0; a < 6; a++)
		for (int z = 0; z < 6; z++)
			if (a != z)
				ck_assert_msg(sl_between(&f, &t, a, z) == want[a][z],
					      "h%d -> h%d: SL %u, want %u", a, z,
					      sl_between(&f, &t, a, z), want[a][z]);
	/* switch LIDs: SL 0 */
	ck_assert_uint_eq(lft_sl(&t, lid_of(&f, "h0"), lid_of(&f, "S2")), 0);

	/* S0 (in 1, out 3): SL0->VL0 SL1->VL1 SL2->VL3 SL3->VL3 (VL = port - 1) */
	const uint8_t *v = lft_sl2vl(&t, node_named(&f, "S0"), 1, 3);
	ck_assert_ptr_nonnull(v);
	ck_assert_uint_eq(v[0], 0);
	ck_assert_uint_eq(v[1], 1);
	ck_assert_uint_eq(v[2], 3);
	ck_assert_uint_eq(v[3], 3);
	/* the SLs the tuples did not take: uniform, SL s -> VL s mod 8 */
	for (unsigned s = 4; s < 16; s++)
		ck_assert_uint_eq(v[s], s % 8);
	/* S1 (in 3, out 4): h0/h1 -> h4 on SL 2 (VL 0), -> h5 on SL 3 (VL 1) */
	v = lft_sl2vl(&t, node_named(&f, "S1"), 3, 4);
	ck_assert_uint_eq(v[2], 0);
	ck_assert_uint_eq(v[3], 1);
	/* a CA port: uniform */
	v = lft_sl2vl(&t, node_named(&f, "h0"), 1, 1);
	ck_assert_ptr_nonnull(v);
	for (unsigned s = 0; s < 16; s++)
		ck_assert_uint_eq(v[s], s % 8);
	free_all(&f, &t, b);
}
END_TEST

/*
 * LMC 1: a path per (source port, destination LID), the source's LIDs
 * one class.  On the line both LIDs of a host route alike, so each
 * second-LID path crosses the tuples of the first and takes its SL: the
 * same SLs from every LID to every LID, twice the weight, 4 SLs still.
 */
START_TEST(t_hand_lmc)
{
	struct tb *b;
	struct fabric f;
	struct lft_tables t;
	struct voqsw_report r, r0;
	unsigned sls;
	open_line3_lmc(&f, &t, &b, 1);
	struct voqsw_params p = { .n_sls = 16, .n_vls = 8 };
	ck_assert_int_eq(voqsw_apply(&f, &t, &p, &r), 0);
	ck_assert_uint_eq(r.paths, 60);
	ck_assert_uint_eq(r.tuples, 24);
	ck_assert_uint_eq(r.considered, 24);
	ck_assert_uint_eq(r.sls_used, 4);
	for (int a = 0; a < 6; a++)
		for (int z = 0; z < 6; z++) {
			if (a == z)
				continue;
			char na[16], nz[16];
			snprintf(na, sizeof(na), "h%d", a);
			snprintf(nz, sizeof(nz), "h%d", z);
			for (uint32_t i = 0; i < 2; i++)
				for (uint32_t k = 0; k < 2; k++)
					ck_assert_uint_eq(lft_sl(&t, lid_of(&f, na) + i,
								 lid_of(&f, nz) + k),
							  want[a][z]);
		}
	ck_assert_int_eq(voqsw_full_sls(&f, &t, &sls, &r), 0);
	ck_assert_uint_eq(sls, 4);
	free_all(&f, &t, b);
	/* twice the weight of LMC 0 */
	open_line3(&f, &t, &b);
	ck_assert_int_eq(voqsw_apply(&f, &t, &p, &r0), 0);
	ck_assert_uint_eq(r.weight, 2 * r0.weight);
	free_all(&f, &t, b);
}
END_TEST

/*
 * With 1 to 4 SLs.  A linear search (x = 1, 2, ... up to the
 * first failure) stops at x = 8 with SLmax 2 and x = 9 with SLmax 3.
 * Rule 4 bisects instead (ComputeSLs' success is not monotone in x, so
 * the two could differ: the bisection keeps the last x it saw succeed);
 * here it gives the same 8 and 9, 3 with one SL (the three heaviest
 * tuples, weight 4 each, have no neighbour among them), and full VOQ
 * (24) with 4.
 */
START_TEST(t_hand_cutoffs)
{
	struct tb *b;
	struct fabric f;
	struct lft_tables t;
	struct voqsw_report r;
	open_line3(&f, &t, &b);
	static const struct {
		unsigned sls;
		uint32_t x;
	} cut[] = { { 1, 3 }, { 2, 8 }, { 3, 9 }, { 4, 24 } };
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		struct voqsw_params p = { .n_sls = cut[i].sls, .n_vls = 8 };
		ck_assert_int_eq(voqsw_apply(&f, &t, &p, &r), 0);
		ck_assert_msg(r.considered == cut[i].x, "SLmax %u: x = %u, want %u",
			      cut[i].sls, r.considered, cut[i].x);
		ck_assert_uint_eq(r.tuples, 24);
		ck_assert_uint_le(r.sls_used, cut[i].sls);
		for (int a = 0; a < 6; a++)
			for (int z = 0; z < 6; z++)
				ck_assert_uint_lt(sl_between(&f, &t, a, z),
						  cut[i].sls);
	}
	free_all(&f, &t, b);
}
END_TEST

/* Parameters out of range: -1, and no QoS left in t. */
START_TEST(t_bad_params)
{
	struct tb *b;
	struct fabric f;
	struct lft_tables t;
	struct voqsw_report r;
	open_line3(&f, &t, &b);
	struct voqsw_params p = { .n_sls = 4, .n_vls = 8 };
	ck_assert_int_eq(voqsw_apply(&f, &t, &p, &r), 0);
	ck_assert_ptr_nonnull(t.sl);
	p.n_sls = 17;
	ck_assert_int_eq(voqsw_apply(&f, &t, &p, &r), -1);
	ck_assert_ptr_null(t.sl);
	ck_assert_ptr_null(t.sl2vl);
	p.n_sls = 0;
	ck_assert_int_eq(voqsw_apply(&f, &t, &p, &r), -1);
	p.n_sls = 4;
	p.n_vls = 16;
	ck_assert_int_eq(voqsw_apply(&f, &t, &p, &r), -1);
	p.n_vls = 0;
	ck_assert_int_eq(voqsw_apply(&f, &t, &p, &r), -1);
	free_all(&f, &t, b);
}
END_TEST

/* ---- random irregular fabrics ---- */

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

/*
 * n 8-port switches "W<i>" (GUIDs in a seed-dependent order), hosts
 * "H<i>_<j>" on ports 1-4, ports 5-8 a random connected 4-regular
 * simple graph (pairings of 4 stubs a switch, drawn until one fits).
 */
static struct tb *irregular(int n, uint32_t seed)
{
	int stub[4 * 32], adj[32][4], deg[32];
	ck_assert_int_le(n, 32);
	for (;;) {
		int k = 0, ok = 1;
		for (int i = 0; i < n; i++)
			for (int j = 0; j < 4; j++)
				stub[k++] = i;
		for (int i = k - 1; i > 0; i--) {
			int j = (int)(lcg(&seed) % (uint32_t)(i + 1));
			int x = stub[i];
			stub[i] = stub[j];
			stub[j] = x;
		}
		memset(deg, 0, sizeof(deg));
		for (int i = 0; i < k && ok; i += 2) {
			int a = stub[i], z = stub[i + 1];
			ok = a != z;
			for (int j = 0; j < deg[a] && ok; j++)
				ok = adj[a][j] != z;
			if (ok) {
				adj[a][deg[a]++] = z;
				adj[z][deg[z]++] = a;
			}
		}
		/* connected: grow from switch 0 */
		int seen[32] = { 1 }, todo[32] = { 0 }, nt = 1, ns = 1;
		while (ok && nt) {
			int u = todo[--nt];
			for (int j = 0; j < 4; j++)
				if (!seen[adj[u][j]]) {
					seen[adj[u][j]] = 1;
					todo[nt++] = adj[u][j];
					ns++;
				}
		}
		if (ok && ns == n)
			break;
	}
	struct tb *b = tb_new();
	int w[32];
	for (int i = 0; i < n; i++)
		w[i] = tb_node(b, 1, 8, 0x100 + (uint64_t)(n - 1 - (i + (int)seed) % n),
			       "W%d", i);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < 4; j++)
			tb_link(b, w[i], 1 + j,
				tb_node(b, 0, 1, 0x10000 + 0x10 * (uint64_t)(i * 4 + j),
					"H%d_%d", i, j), 1);
	int used[32] = { 0 };
	for (int a = 0; a < n; a++)
		for (int j = 0; j < 4; j++) {
			int z = adj[a][j];
			if (z < a)
				continue;
			tb_link(b, w[a], 5 + used[a]++, w[z], 5 + used[z]++);
		}
	return b;
}

static void open_irregular(struct fabric *f, struct lft_tables *t,
			   struct tb **b, int n, uint32_t seed)
{
	*b = irregular(n, seed);
	tb_build(f, *b, NULL, 0);
	tb_route(routing_engine_find("updn"), f, t);
	ck_assert_int_gt(check_reach(f, t, 0), 0);
}

/* A tuple of an 8-port fabric as one number. */
static uint32_t key_of(const struct hop *h)
{
	return ((h->sw * 9 + h->ip) * 9 + h->op) * 9 + h->nop;
}

struct ranked {
	uint32_t key;
	uint64_t guid;
	uint32_t w;
	struct hop h;
};

static int by_rank(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	if (x->h.ip != y->h.ip)
		return x->h.ip < y->h.ip ? -1 : 1;
	if (x->h.op != y->h.op)
		return x->h.op < y->h.op ? -1 : 1;
	return (x->h.nop > y->h.nop) - (x->h.nop < y->h.nop);
}

/* The VL the paper's grouping gives port nop of an 8-port switch. */
static unsigned want_vl(unsigned nop, unsigned n_vls)
{
	if (n_vls >= 8)
		return nop - 1;		/* one VL a port */
	ck_assert_uint_eq(n_vls, 4);
	return (nop - 1) / 2;		/* ports 1-2 VL 0, 3-4 VL 1, ... */
}

/*
 * Everything about one voqsw_apply() over f: rule 3's ranking and the
 * report recomputed, each path's SL in the budget, each considered
 * tuple's table entry for the SL of each path through it the VL of the
 * next port, every entry of every table a data VL of its link.
 */
static void check_apply(const struct fabric *f, struct lft_tables *t,
			unsigned n_sls, unsigned n_vls)
{
	struct voqsw_params p = { .n_sls = n_sls, .n_vls = n_vls };
	struct voqsw_report r;
	ck_assert_int_eq(voqsw_apply(f, t, &p, &r), 0);

	size_t nkeys = (size_t)f->n_nodes * 729;
	uint32_t *w = calloc(nkeys, sizeof(*w));
	int32_t *rank = malloc(nkeys * sizeof(*rank));
	uint32_t *ep = malloc(f->n_ports * sizeof(*ep));
	struct hop *h = malloc(64 * sizeof(*h));
	ck_assert(w && rank && ep && h);
	int n_ep = end_ports(f, ep);
	uint64_t paths = 0, total = 0;
	/* stage 2: weights */
	for (int a = 0; a < n_ep; a++)
		for (int z = 0; z < n_ep; z++) {
			if (a == z)
				continue;
			int n = path_of(f, t, ep[a], f->ports[ep[z]].lid, h);
			ck_assert_int_ge(n, 0);
			paths++;
			for (int k = 0; k < n; k++)
				w[key_of(&h[k])]++;
		}
	ck_assert_uint_eq(r.paths, paths);
	/* stage 3: the ranking */
	struct ranked *rk = malloc(nkeys * sizeof(*rk));
	uint32_t nt = 0;
	for (size_t k = 0; k < nkeys; k++) {
		rank[k] = -1;
		if (!w[k])
			continue;
		uint32_t v = (uint32_t)k;
		struct hop hh = { .nop = v % 9, .op = v / 9 % 9,
				  .ip = v / 81 % 9, .sw = v / 729 };
		rk[nt++] = (struct ranked){ (uint32_t)k, f->nodes[hh.sw].guid,
					    w[k], hh };
		total += w[k];
	}
	qsort(rk, nt, sizeof(*rk), by_rank);
	for (uint32_t i = 0; i < nt; i++)
		rank[rk[i].key] = (int32_t)i;
	ck_assert_uint_eq(r.tuples, nt);
	ck_assert_uint_eq(r.weight, total);
	ck_assert_uint_le(r.considered, nt);
	uint64_t wc = 0;
	for (uint32_t i = 0; i < r.considered; i++)
		wc += rk[i].w;
	ck_assert_uint_eq(r.weight_considered, wc);

	/* stage 4/5: each path */
	uint64_t covered = 0;
	unsigned seen = 0;
	for (int a = 0; a < n_ep; a++)
		for (int z = 0; z < n_ep; z++) {
			if (a == z)
				continue;
			uint32_t sl = lft_sl(t, f->ports[ep[a]].lid,
					     f->ports[ep[z]].lid);
			ck_assert_uint_lt(sl, n_sls);
			seen |= 1u << sl;
			int n = path_of(f, t, ep[a], f->ports[ep[z]].lid, h);
			int all = 1, any = 0;
			for (int k = 0; k < n; k++) {
				if (rank[key_of(&h[k])] >= (int32_t)r.considered) {
					all = 0;
					continue;
				}
				any = 1;
				const uint8_t *v = lft_sl2vl(t, h[k].sw, h[k].ip,
							     h[k].op);
				ck_assert_ptr_nonnull(v);
				ck_assert_msg(v[sl] == want_vl(h[k].nop, n_vls),
					      "%s in %u out %u SL %u: VL %u, next port %u",
					      f->nodes[h[k].sw].desc, h[k].ip,
					      h[k].op, sl, v[sl], h[k].nop);
			}
			if (!any)
				ck_assert_uint_eq(sl, 0);
			covered += (uint64_t)all;
		}
	ck_assert_uint_eq(r.paths_covered, covered);
	ck_assert_uint_eq(r.sls_used, (unsigned)__builtin_popcount(seen));

	/* no entry 15 or at/above the VLs (8 on every link here, n_vls) */
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		unsigned np = f->nodes[i].nports;
		for (unsigned in = 0; in <= np; in++)
			for (unsigned out = 0; out <= np; out++) {
				if (f->nodes[i].type != FAB_SWITCH &&
				    (in != out || in == 0))
					continue;
				const uint8_t *v = lft_sl2vl(t, i, in, out);
				ck_assert_ptr_nonnull(v);
				for (unsigned s = 0; s < QOS_SLS; s++) {
					ck_assert_uint_lt(v[s], n_vls);
					if (s >= n_sls)
						ck_assert_uint_eq(v[s], 0);
				}
			}
	}
	free(w);
	free(rank);
	free(ep);
	free(h);
	free(rk);
}

START_TEST(t_irregular_property)
{
	static const int sizes[] = { 5, 8, 12, 16 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (uint32_t seed = 1; seed <= 2; seed++) {
			struct tb *b;
			struct fabric f;
			struct lft_tables t;
			open_irregular(&f, &t, &b, sizes[i], seed);
			check_apply(&f, &t, 8, 8);
			check_apply(&f, &t, 4, 8);
			check_apply(&f, &t, 4, 4);
			check_apply(&f, &t, 16, 4);
			check_apply(&f, &t, 1, 8);
			free_all(&f, &t, b);
		}
}
END_TEST

/*
 * Full VOQ: at least, for every source and first output port, as many
 * SLs as destinations behind that port (their paths share the injection
 * triple and part somewhere: pairwise neighbours); and it is what
 * voqsw_apply() reaches: x = x_max with that many SLs, not with one less.
 */
START_TEST(t_full_voq_bound)
{
	for (uint32_t seed = 1; seed <= 3; seed++) {
		struct tb *b;
		struct fabric f;
		struct lft_tables t;
		struct voqsw_report r;
		unsigned sls, bound = 0;
		uint32_t ep[160];
		open_irregular(&f, &t, &b, 5 + (int)seed, seed);
		ck_assert_int_eq(voqsw_full_sls(&f, &t, &sls, &r), 0);
		ck_assert_uint_eq(r.considered, r.tuples);
		int n_ep = end_ports(&f, ep);
		for (int a = 0; a < n_ep; a++) {
			unsigned per_port[9] = { 0 };
			uint32_t sw = sw_of(&f, ep[a]);
			for (int z = 0; z < n_ep; z++)
				if (sw_of(&f, ep[z]) != sw)
					per_port[lft_row(&t, t.row_of_node[sw])
						 [f.ports[ep[z]].lid]]++;
			for (int k = 0; k < 9; k++)
				if (per_port[k] > bound)
					bound = per_port[k];
		}
		ck_assert_uint_ge(sls, bound);
		ck_assert_uint_gt(bound, 1);
		if (sls <= QOS_SLS) {
			struct voqsw_params p = { .n_sls = sls, .n_vls = 8 };
			ck_assert_int_eq(voqsw_apply(&f, &t, &p, &r), 0);
			ck_assert_uint_eq(r.considered, r.tuples);
			p.n_sls = sls - 1;
			ck_assert_int_eq(voqsw_apply(&f, &t, &p, &r), 0);
			ck_assert_uint_lt(r.considered, r.tuples);
		}
		free_all(&f, &t, b);
	}
}
END_TEST

/* The SL per (LID, LID) and the table per (node GUID, in, out) agree. */
static void same_result(const struct fabric *f1, const struct lft_tables *t1,
			const struct fabric *f2, const struct lft_tables *t2)
{
	ck_assert_uint_eq(f1->max_lid, f2->max_lid);
	for (uint32_t a = 1; a <= f1->max_lid; a++)
		for (uint32_t z = 1; z <= f1->max_lid; z++)
			ck_assert_uint_eq(lft_sl(t1, a, z), lft_sl(t2, a, z));
	for (uint32_t i = 0; i < f1->n_nodes; i++) {
		uint32_t j = fabric_find_node(f2, f1->nodes[i].guid);
		ck_assert_uint_ne(j, FAB_NONE);
		unsigned np = f1->nodes[i].nports;
		for (unsigned in = 0; in <= np; in++)
			for (unsigned out = 0; out <= np; out++) {
				const uint8_t *v1 = lft_sl2vl(t1, i, in, out);
				const uint8_t *v2 = lft_sl2vl(t2, j, in, out);
				ck_assert((v1 == NULL) == (v2 == NULL));
				if (v1)
					ck_assert_mem_eq(v1, v2, QOS_SLS);
			}
	}
}

START_TEST(t_deterministic)
{
	struct tb *b;
	struct fabric f, g;
	struct lft_tables t, u;
	struct voqsw_report r1, r2;
	struct voqsw_params p = { .n_sls = 8, .n_vls = 8 };
	open_irregular(&f, &t, &b, 12, 7);
	ck_assert_int_eq(voqsw_apply(&f, &t, &p, &r1), 0);
	/* twice on the same tables */
	tb_build(&g, b, NULL, 0);
	tb_route(routing_engine_find("updn"), &g, &u);
	ck_assert_int_eq(voqsw_apply(&g, &u, &p, &r2), 0);
	ck_assert_mem_eq(&r1, &r2, sizeof(r1));
	ck_assert_uint_eq(t.n_sl_class, u.n_sl_class);
	ck_assert_mem_eq(t.sl, u.sl, (size_t)t.n_sl_class * (t.max_lid + 1));
	same_result(&f, &t, &g, &u);
	lft_tables_free(&u);
	fabric_free(&g);
	/* the records in reverse: other node indices, same GUIDs and LFTs */
	int perm[MAXN];
	for (int i = 0; i < b->nn; i++)
		perm[i] = b->nn - 1 - i;
	tb_build(&g, b, perm, 0);
	ck_assert_int_eq(lft_tables_alloc(&u, &g), 0);
	for (uint32_t i = 0; i < f.n_nodes; i++) {
		if (f.nodes[i].type != FAB_SWITCH)
			continue;
		uint32_t j = fabric_find_node(&g, f.nodes[i].guid);
		memcpy(lft_row(&u, u.row_of_node[j]), lft_row(&t, t.row_of_node[i]),
		       t.max_lid + 1);
	}
	ck_assert_int_eq(voqsw_apply(&g, &u, &p, &r2), 0);
	ck_assert_mem_eq(&r1, &r2, sizeof(r1));
	same_result(&f, &t, &g, &u);
	lft_tables_free(&u);
	fabric_free(&g);
	free_all(&f, &t, b);
}
END_TEST

/*
 * VL grouping on 8-port switches: with 8 VLs each next port its own VL
 * (port p on VL p - 1), with 4 VLs two ports a VL; seen in the tables
 * of considered tuples (the property test checks every path; here the
 * VLs the tables use are counted).
 */
START_TEST(t_vl_grouping)
{
	struct tb *b;
	struct fabric f;
	struct lft_tables t;
	struct voqsw_report r;
	open_irregular(&f, &t, &b, 8, 3);
	for (unsigned n = 4; n <= 8; n += 4) {
		struct voqsw_params p = { .n_sls = 16, .n_vls = n };
		ck_assert_int_eq(voqsw_apply(&f, &t, &p, &r), 0);
		ck_assert_uint_gt(r.considered, 0);
		unsigned vls = 0;
		for (uint32_t i = 0; i < f.n_nodes; i++) {
			if (f.nodes[i].type != FAB_SWITCH)
				continue;
			for (unsigned in = 1; in <= 8; in++)
				for (unsigned out = 5; out <= 8; out++) {
					const uint8_t *v = lft_sl2vl(&t, i, in, out);
					for (unsigned s = 0; s < 16; s++)
						vls |= 1u << v[s];
				}
		}
		ck_assert_uint_eq(vls, (1u << n) - 1);
		check_apply(&f, &t, 16, n);
	}
	free_all(&f, &t, b);
}
END_TEST

/*
 * The 324-host two-level tree (fabgen ftree2 --radix 36: 18 leaves of 18
 * hosts, 18 spines): well under a second, and its figures.
 */
START_TEST(t_ftree324_speed)
{
	struct fabric f;
	struct lft_tables t;
	struct voqsw_report r;
	/* too many nodes for struct tb (MAXN): a net text of its own */
	size_t cap = 1 << 20, len = 0;
	char *s = malloc(cap);
	ck_assert_ptr_nonnull(s);
	for (int l = 0; l < 18; l++) {
		len += (size_t)snprintf(s + len, cap - len,
					"switchguid=0x%x\nSwitch\t36 \"L%d\"\n",
					0x100 + l, l);
		for (int h = 0; h < 18; h++)
			len += (size_t)snprintf(s + len, cap - len,
						"[%d]\t\"H%d_%d\"[1]\n", h + 1, l, h);
		for (int k = 0; k < 18; k++)
			len += (size_t)snprintf(s + len, cap - len,
						"[%d]\t\"S%d\"[%d]\n", 19 + k, k, l + 1);
		len += (size_t)snprintf(s + len, cap - len, "\n");
	}
	for (int k = 0; k < 18; k++) {
		len += (size_t)snprintf(s + len, cap - len,
					"switchguid=0x%x\nSwitch\t36 \"S%d\"\n",
					0x200 + k, k);
		for (int l = 0; l < 18; l++)
			len += (size_t)snprintf(s + len, cap - len,
						"[%d]\t\"L%d\"[%d]\n", l + 1, l, 19 + k);
		len += (size_t)snprintf(s + len, cap - len, "\n");
	}
	for (int l = 0; l < 18; l++)
		for (int h = 0; h < 18; h++)
			len += (size_t)snprintf(s + len, cap - len,
						"caguid=0x%x\nHca\t1 \"H%d_%d\"\n[1]\t\"L%d\"[%d]\n\n",
						0x10000 + l * 32 + h, l, h, l, h + 1);
	ck_assert_uint_lt(len, cap);
	char err[256] = "";
	struct lid_report rep;
	fabric_init(&f);
	if (topo_parse_string(&f, s, "ftree324.net", err, sizeof(err)) != 0)
		ck_abort_msg("parse: %s", err);
	free(s);
	ck_assert_int_eq(lids_assign(&f, NULL, 0, &rep), 0);
	tb_route(routing_engine_find("ftree"), &f, &t);
	struct voqsw_params p = { .n_sls = 8, .n_vls = 8 };
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(voqsw_apply(&f, &t, &p, &r), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
		    (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	ck_assert_uint_eq(r.paths, 324u * 323u);
	ck_assert_uint_gt(r.considered, 0);
	/* sanitizers slow it several times: the bound is for both builds */
	ck_assert_msg(ms < 1000.0, "324 hosts: %.0f ms", ms);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("voqsw");
	TCase *tc = tcase_create("voqsw");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, t_hand_full);
	tcase_add_test(tc, t_hand_cutoffs);
	tcase_add_test(tc, t_hand_lmc);
	tcase_add_test(tc, t_bad_params);
	tcase_add_test(tc, t_irregular_property);
	tcase_add_test(tc, t_full_voq_bound);
	tcase_add_test(tc, t_deterministic);
	tcase_add_test(tc, t_vl_grouping);
	tcase_add_test(tc, t_ftree324_speed);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
