/*
 * The updn routing engine (routing/engines/updn.c) on small fabrics built from
 * net-file text: every switch reaches every LID it is connected to, no
 * loops, no route turns from down to up (against ranks this test computes
 * itself), the channel dependency graph is acyclic where minhop's is not,
 * roots by description, by GUID, chosen automatically, unknown roots
 * refused, and the tables do not depend on record order.
 */

#include "routing_testlib.h"

extern const struct routing_engine updn_engine;

/* --- more fabrics as net text --- */

/* A 2-level fat tree: leaves L0.., spines S0.., hosts H0.. */
static struct tb *fat_tree(int leaves, int spines, int hosts)
{
	struct tb *b = tb_new();
	int l0 = b->nn;
	for (int i = 0; i < leaves; i++)
		tb_node(b, 1, hosts + spines, 0x100 + i, "L%d", i);
	int s0 = b->nn;
	for (int i = 0; i < spines; i++)
		tb_node(b, 1, leaves, 0x200 + i, "S%d", i);
	for (int i = 0; i < leaves; i++)
		for (int h = 0; h < hosts; h++)
			tb_link(b, l0 + i, h + 1,
				tb_node(b, 0, 1, 0x10000 + 0x10 * (i * hosts + h),
					"H%d", i * hosts + h), 1);
	for (int i = 0; i < leaves; i++)
		for (int j = 0; j < spines; j++)
			tb_link(b, l0 + i, hosts + 1 + j, s0 + j, i + 1);
	return b;
}

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

/* A random connected fabric: a random spanning tree plus extra links. */
static struct tb *random_fabric(uint32_t seed, int nsw, int radix, int extra,
				int hosts)
{
	struct tb *b = tb_new();
	int used[MAXN] = { 0 };
	for (int i = 0; i < nsw; i++)
		tb_node(b, 1, radix, 0x100 + 0x11 * (uint64_t)((i * 7) % nsw), "X%d", i);
	for (int i = 1; i < nsw; i++) {
		int t;
		do
			t = (int)(lcg(&seed) % (uint32_t)i);
		while (used[t] >= radix - 2);
		tb_link(b, i, ++used[i], t, ++used[t]);
	}
	for (int tries = 0; extra > 0 && tries < 1000; tries++) {
		int x = (int)(lcg(&seed) % (uint32_t)nsw);
		int y = (int)(lcg(&seed) % (uint32_t)nsw);
		if (x == y || used[x] >= radix - 1 || used[y] >= radix - 1)
			continue;
		tb_link(b, x, ++used[x], y, ++used[y]);
		extra--;
	}
	for (int h = 0; h < hosts; h++) {
		int x = (int)(lcg(&seed) % (uint32_t)nsw);
		if (used[x] >= radix)
			continue;
		tb_link(b, x, ++used[x],
			tb_node(b, 0, 1, 0x10000 + 0x10 * (uint64_t)h, "H%d", h), 1);
	}
	return b;
}

/* --- routing and checks --- */

static int route_roots(const struct fabric *f, struct lft_tables *t,
		       const char *const *roots, int n, char *err, size_t errlen)
{
	char (*r)[64] = calloc((size_t)n + 1, sizeof(*r));
	ck_assert_ptr_nonnull(r);
	for (int i = 0; i < n; i++)
		snprintf(r[i], sizeof(r[i]), "%s", roots[i]);
	struct route_opts o = { .n_roots = n, .roots = (const char (*)[64])r };
	ck_assert_int_eq(lft_tables_alloc(t, f), 0);
	err[0] = '\0';
	int rc = updn_engine.route(f, &o, t, err, errlen);
	free(r);
	return rc;
}

static void route(const struct fabric *f, struct lft_tables *t)
{
	char err[256];
	if (route_roots(f, t, NULL, 0, err, sizeof(err)) != 0)
		ck_abort_msg("route: %s", err);
}

/*
 * Ranks by BFS from the named roots; no route to a LID in lids_ok (NULL:
 * all) goes down and then up.  Down = to a higher rank, or to a higher
 * GUID at the same rank.
 */
static void check_updown(const struct fabric *f, const struct lft_tables *t,
			 const char *const *roots, int nroots, int ca_only)
{
	uint32_t src[16], *rank = malloc(f->n_nodes * sizeof(*rank));
	for (int i = 0; i < nroots; i++)
		src[i] = node_named(f, roots[i]);
	hops_from(f, src, nroots, rank);
	int checked = 0;
	for (uint32_t lid = 1; lid <= f->max_lid; lid++) {
		uint32_t owner = f->lid_port[lid];
		if (owner == FAB_NONE ||
		    (ca_only && f->nodes[f->ports[owner].node].type == FAB_SWITCH))
			continue;
		for (uint32_t r = 0; r < t->n_sw; r++) {
			uint32_t s = t->sw_node[r];
			uint8_t p = lft_row(t, r)[lid];
			if (p == LFT_DROP || p == 0)
				continue;
			uint32_t n = peer_switch(f, fabric_port(f, s, p));
			if (n == FAB_NONE)
				continue;
			uint8_t q = lft_row(t, t->row_of_node[n])[lid];
			if (q == LFT_DROP || q == 0)
				continue;
			uint32_t m = peer_switch(f, fabric_port(f, n, q));
			if (m == FAB_NONE)
				continue;
			int down = rank[n] > rank[s] ||
				   (rank[n] == rank[s] && f->nodes[n].guid > f->nodes[s].guid);
			int up = rank[m] < rank[n] ||
				 (rank[m] == rank[n] && f->nodes[m].guid < f->nodes[n].guid);
			if (down && up)
				ck_abort_msg("LID %u: %s -> %s goes down, then up to %s",
					     lid, f->nodes[s].desc, f->nodes[n].desc,
					     f->nodes[m].desc);
			checked++;
		}
	}
	ck_assert_int_gt(checked, 0);
	free(rank);
}

/* Switch hops from switch s along the tables to the switch LID lid attaches to. */
static uint32_t route_hops(const struct fabric *f, const struct lft_tables *t,
			   uint32_t s, uint32_t lid, uint32_t attach)
{
	uint32_t hops = 0;
	while (s != attach) {
		uint8_t p = lft_row(t, t->row_of_node[s])[lid];
		ck_assert_uint_ne(p, LFT_DROP);
		s = peer_switch(f, fabric_port(f, s, p));
		ck_assert_uint_ne(s, FAB_NONE);
		ck_assert_uint_le(++hops, t->n_sw);
	}
	return hops;
}

/*
 * Every route is as short as the shortest legal (up*, then down*) path
 * under the ranks from the named root, computed here: all-down distances
 * by relaxation, then up hops in (rank, GUID) order.
 */
static void check_shortest_legal(const struct fabric *f,
				 const struct lft_tables *t, const char *root)
{
	uint32_t n = f->n_nodes, src = node_named(f, root);
	uint32_t *rank = malloc(n * sizeof(*rank)), *dd = malloc(n * sizeof(*dd));
	uint32_t *du = malloc(n * sizeof(*du)), *ord = malloc(n * sizeof(*ord));
	uint32_t ns = 0;
	hops_from(f, &src, 1, rank);
	for (uint32_t i = 0; i < n; i++)
		if (f->nodes[i].type == FAB_SWITCH)
			ord[ns++] = i;
	/* insertion sort by (rank, GUID): "a before b" means b -> a is up */
	for (uint32_t i = 1; i < ns; i++)
		for (uint32_t j = i; j > 0; j--) {
			uint32_t a = ord[j - 1], b = ord[j];
			if (rank[a] < rank[b] || (rank[a] == rank[b] &&
						  f->nodes[a].guid < f->nodes[b].guid))
				break;
			ord[j - 1] = b;
			ord[j] = a;
		}
	uint32_t *at = malloc(n * sizeof(*at));
	for (uint32_t i = 0; i < ns; i++)
		at[ord[i]] = i;
	for (uint32_t lid = 1; lid <= f->max_lid; lid++) {
		uint32_t d = attach_of(f, lid);
		if (d == FAB_NONE)
			continue;
		for (uint32_t i = 0; i < n; i++)
			dd[i] = du[i] = UINT32_MAX / 2;
		dd[d] = 0;
		for (uint32_t k = ns; k-- > 0;) {	/* down hops go later */
			uint32_t u = ord[k];
			for (unsigned p = 1; p <= f->nodes[u].nports; p++) {
				uint32_t v = peer_switch(f, fabric_port(f, u, p));
				if (v != FAB_NONE && at[v] > at[u] && dd[v] + 1 < dd[u])
					dd[u] = dd[v] + 1;
			}
		}
		for (uint32_t k = 0; k < ns; k++) {	/* up hops go earlier */
			uint32_t u = ord[k];
			du[u] = dd[u];
			for (unsigned p = 1; p <= f->nodes[u].nports; p++) {
				uint32_t v = peer_switch(f, fabric_port(f, u, p));
				if (v != FAB_NONE && at[v] < at[u] && du[v] + 1 < du[u])
					du[u] = du[v] + 1;
			}
		}
		for (uint32_t k = 0; k < ns; k++) {
			uint32_t u = ord[k];
			if (rank[u] == UINT32_MAX || rank[d] == UINT32_MAX)
				continue;
			uint32_t h = route_hops(f, t, u, lid, d);
			if (h != du[u])
				ck_abort_msg("LID %u from %s: %u hops, shortest legal %u",
					     lid, f->nodes[u].desc, h, du[u]);
		}
	}
	free(rank);
	free(dd);
	free(du);
	free(ord);
	free(at);
}

/* --- tests --- */

START_TEST(t_engine_registered)
{
	ck_assert_ptr_eq(routing_engine_find("updn"), &updn_engine);
	ck_assert_str_eq(updn_engine.name, "updn");
}
END_TEST

/* On a ring minhop's shortest paths chase each other round; updn's do not. */
START_TEST(t_ring_no_cycle)
{
	struct fabric f;
	struct lft_tables t, m;
	char err[256];
	struct tb *b = ring(5);
	tb_build(&f, b, NULL, 0);
	ck_assert_int_eq(lft_tables_alloc(&m, &f), 0);
	ck_assert_int_eq(routing_engine_find("minhop")->route(&f, NULL, &m, err,
							      sizeof(err)), 0);
	ck_assert_int_eq(cdg_has_cycle(&f, &m), 1);	/* the check can fail */
	route(&f, &t);
	ck_assert_int_eq(check_reach(&f, &t, 0), 5 * 10);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	/* every switch has a host: no tree, all equally central: R1 */
	const char *root[] = { "R1" };
	check_updown(&f, &t, root, 1, 0);
	lft_tables_free(&m);
	free_all(&f, &t, b);
}
END_TEST

START_TEST(t_mesh)
{
	struct fabric f;
	struct lft_tables t, m;
	char err[256];
	struct tb *b = mesh(3, 2);
	tb_build(&f, b, NULL, 0);
	ck_assert_int_eq(lft_tables_alloc(&m, &f), 0);
	ck_assert_int_eq(routing_engine_find("minhop")->route(&f, NULL, &m, err,
							      sizeof(err)), 0);
	ck_assert_int_eq(cdg_has_cycle(&f, &m), 1);
	route(&f, &t);
	ck_assert_int_eq(check_reach(&f, &t, 0), 6 * 12);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	/* M2 and M5 have eccentricity 2, M2 the lower GUID */
	const char *root[] = { "M2" };
	check_updown(&f, &t, root, 1, 0);
	/* M5 to H3: through M2 (up), never M6 (down, then up to M3) */
	ck_assert_uint_eq(entry(&f, &t, "M5", lid_of(&f, "H3")), port_to(&f, "M5", "M2"));
	lft_tables_free(&m);
	free_all(&f, &t, b);
}
END_TEST

START_TEST(t_roots_by_name_and_guid)
{
	struct fabric f;
	struct lft_tables t;
	char err[256];
	struct tb *b = ring(4);
	tb_build(&f, b, NULL, 0);
	uint32_t h4 = lid_of(&f, "H4");
	/* automatic: R1 (all equally central, lowest GUID) */
	route(&f, &t);
	ck_assert_uint_eq(entry(&f, &t, "R2", h4), port_to(&f, "R2", "R1"));
	lft_tables_free(&t);
	const char *by_name[] = { "R3" };
	ck_assert_int_eq(route_roots(&f, &t, by_name, 1, err, sizeof(err)), 0);
	ck_assert_uint_eq(entry(&f, &t, "R2", h4), port_to(&f, "R2", "R3"));
	check_updown(&f, &t, by_name, 1, 0);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	lft_tables_free(&t);
	const char *by_guid[] = { "0x300" };
	ck_assert_int_eq(route_roots(&f, &t, by_guid, 1, err, sizeof(err)), 0);
	ck_assert_uint_eq(entry(&f, &t, "R2", h4), port_to(&f, "R2", "R3"));
	lft_tables_free(&t);
	const char *by_guid1[] = { "0x0000000000000100" };
	ck_assert_int_eq(route_roots(&f, &t, by_guid1, 1, err, sizeof(err)), 0);
	ck_assert_uint_eq(entry(&f, &t, "R2", h4), port_to(&f, "R2", "R1"));
	ck_assert_uint_eq(entry(&f, &t, "R4", lid_of(&f, "H2")), port_to(&f, "R4", "R1"));
	free_all(&f, &t, b);
}
END_TEST

START_TEST(t_unknown_root)
{
	struct fabric f;
	struct lft_tables t;
	char err[256];
	struct tb *b = ring(4);
	tb_build(&f, b, NULL, 0);
	const char *bad[] = { "R1", "nosuch" };
	ck_assert_int_eq(route_roots(&f, &t, bad, 2, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "nosuch"));
	lft_tables_free(&t);
	const char *badguid[] = { "0x999" };
	ck_assert_int_eq(route_roots(&f, &t, badguid, 1, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "0x999"));
	lft_tables_free(&t);
	/* a CA is no root */
	const char *ca[] = { "0x1000" };
	ck_assert_int_eq(route_roots(&f, &t, ca, 1, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not a switch"));
	free_all(&f, &t, b);
}
END_TEST

/* Roots found automatically in a tree: the spines; spine to spine works. */
START_TEST(t_fat_tree)
{
	struct fabric f;
	struct lft_tables t;
	struct tb *b = fat_tree(4, 3, 2);
	tb_build(&f, b, NULL, 0);
	route(&f, &t);
	/* 7 switches + 8 hosts, every switch to every LID */
	ck_assert_int_eq(check_reach(&f, &t, 1), 7 * 15);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	const char *spines[] = { "S0", "S1", "S2" };
	check_updown(&f, &t, spines, 3, 1);
	/* remote hosts spread over the 3 up links of a leaf (6 hosts + 3 spines
	 * + 3 leaves = 12 LIDs up) */
	for (int i = 0; i < 4; i++) {
		char leaf[16];
		int c[3] = { 0, 0, 0 };
		snprintf(leaf, sizeof(leaf), "L%d", i);
		uint32_t row = t.row_of_node[node_named(&f, leaf)];
		for (uint32_t lid = 1; lid <= f.max_lid; lid++) {
			uint8_t p = lft_row(&t, row)[lid];
			if (p >= 3 && p <= 5)
				c[p - 3]++;
		}
		ck_assert_int_eq(c[0] + c[1] + c[2], 12);
		ck_assert_int_eq(c[0], 4);
		ck_assert_int_eq(c[1], 4);
		ck_assert_int_eq(c[2], 4);
	}
	free_all(&f, &t, b);
}
END_TEST

/* Four tops as roots: CA routes stay shortest, all switches connected. */
START_TEST(t_xgft3)
{
	struct fabric f;
	struct lft_tables t;
	struct tb *b = xgft3();
	tb_build(&f, b, NULL, 0);
	route(&f, &t);
	ck_assert_int_eq(check_reach(&f, &t, 1), 20 * 36);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	const char *tops[] = { "T00", "T01", "T10", "T11" };
	check_updown(&f, &t, tops, 4, 1);
	free_all(&f, &t, b);
}
END_TEST

/* Parallel links, a dual-port CA and LMC 1. */
START_TEST(t_parallel_dual_lmc)
{
	struct fabric f;
	struct lft_tables t;
	struct tb *b = tb_new();
	int A = tb_node(b, 1, 8, 0x100, "A"), B = tb_node(b, 1, 8, 0x200, "B");
	int C = tb_node(b, 1, 8, 0x300, "C");
	tb_link(b, A, 5, B, 5);
	tb_link(b, A, 6, B, 6);
	tb_link(b, B, 7, C, 7);
	tb_link(b, C, 5, A, 7);
	int d = tb_node(b, 0, 2, 0x5000, "HD");
	tb_link(b, d, 1, A, 1);
	tb_link(b, d, 2, C, 1);
	tb_link(b, tb_node(b, 0, 1, 0x6000, "HB"), 1, B, 1);
	tb_link(b, tb_node(b, 0, 1, 0x7000, "HB2"), 1, B, 2);
	tb_build(&f, b, NULL, 1);
	ck_assert_uint_eq(f.lmc, 1);
	route(&f, &t);
	/* 4 CA ports x 2 LIDs + 3 switch LIDs */
	ck_assert_int_eq(check_reach(&f, &t, 0), 3 * 11);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	/* A sends B's 5 LIDs (B + 2 hosts x 2) over ports 5 and 6 */
	int c5 = 0, c6 = 0;
	uint32_t row = t.row_of_node[node_named(&f, "A")];
	for (uint32_t lid = 1; lid <= f.max_lid; lid++) {
		c5 += lft_row(&t, row)[lid] == 5;
		c6 += lft_row(&t, row)[lid] == 6;
	}
	ck_assert_int_eq(c5 + c6, 5);
	ck_assert_int_gt(c5, 1);
	ck_assert_int_gt(c6, 1);
	free_all(&f, &t, b);
}
END_TEST

/* An island is routed on its own; nothing crosses. */
START_TEST(t_islands)
{
	struct fabric f;
	struct lft_tables t;
	struct tb *b = ring(4);
	int x = tb_node(b, 1, 4, 0x50, "X1"), y = tb_node(b, 1, 4, 0x60, "X2");
	tb_link(b, x, 1, y, 1);
	tb_link(b, x, 2, tb_node(b, 0, 1, 0x9000, "HX"), 1);
	tb_node(b, 0, 1, 0xa000, "HNC");	/* no cable */
	tb_build(&f, b, NULL, 0);
	route(&f, &t);
	ck_assert_int_eq(check_reach(&f, &t, 0), 4 * 8 + 2 * 3);
	ck_assert_uint_eq(entry(&f, &t, "X2", lid_of(&f, "HX")), 1);
	ck_assert_uint_eq(entry(&f, &t, "R1", lid_of(&f, "HX")), LFT_DROP);
	free_all(&f, &t, b);
}
END_TEST

/* Random irregular fabrics: connected, acyclic, never down then up. */
START_TEST(t_random_irregular)
{
	for (uint32_t seed = 1; seed <= 12; seed++) {
		struct fabric f;
		struct lft_tables t;
		struct tb *b = random_fabric(seed, 16, 8, 10, 32);
		tb_build(&f, b, NULL, seed % 3 == 0);
		route(&f, &t);
		int lids = 0;
		for (uint32_t lid = 1; lid <= f.max_lid; lid++)
			lids += f.lid_port[lid] != FAB_NONE;
		/* all connected: every switch reaches every LID */
		ck_assert_int_eq(check_reach(&f, &t, 0), 16 * lids);
		if (cdg_has_cycle(&f, &t))
			ck_abort_msg("seed %u: dependency cycle", seed);
		free_all(&f, &t, b);
	}
}
END_TEST

/* The same with a root given: legal and as short as legal paths go. */
START_TEST(t_random_rooted)
{
	char err[256];
	for (uint32_t seed = 1; seed <= 40; seed++) {
		struct fabric f;
		struct lft_tables t;
		struct tb *b = random_fabric(seed, 16, 6, 12, 24);
		const char *root[] = { seed % 2 ? "X3" : "X10" };
		tb_build(&f, b, NULL, 0);
		ck_assert_int_eq(route_roots(&f, &t, root, 1, err, sizeof(err)), 0);
		check_updown(&f, &t, root, 1, 0);
		check_shortest_legal(&f, &t, root[0]);
		ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
		free_all(&f, &t, b);
	}
}
END_TEST

/* The same fabric, records in another order: the same entries. */
static void same_tables(struct tb *b)
{
	int *fwd = malloc(sizeof(int) * (size_t)b->nn);
	int *mix = malloc(sizeof(int) * (size_t)b->nn);
	int step = 7;
	while (b->nn % step == 0 || step % b->nn == 0)
		step += 2;
	for (int i = 0; i < b->nn; i++) {
		fwd[i] = i;
		mix[i] = (i * step + 3) % b->nn;
	}
	struct fabric f, g;
	struct lft_tables x, y;
	tb_build(&f, b, fwd, 0);
	tb_build(&g, b, mix, 0);
	route(&f, &x);
	route(&g, &y);
	ck_assert_uint_eq(x.max_lid, y.max_lid);
	for (uint32_t lid = 1; lid <= f.max_lid; lid++)
		ck_assert_uint_eq(f.ports[f.lid_port[lid]].guid,
				  g.ports[g.lid_port[lid]].guid);
	int compared = 0;
	for (uint32_t r = 0; r < x.n_sw; r++) {
		uint64_t guid = f.nodes[x.sw_node[r]].guid;
		uint32_t gr = y.row_of_node[fabric_find_node(&g, guid)];
		for (uint32_t lid = 1; lid <= x.max_lid; lid++, compared++)
			if (lft_row(&x, r)[lid] != lft_row(&y, gr)[lid])
				ck_abort_msg("switch 0x%llx LID %u: port %u vs %u",
					     (unsigned long long)guid, lid,
					     lft_row(&x, r)[lid], lft_row(&y, gr)[lid]);
	}
	ck_assert_int_gt(compared, 0);
	lft_tables_free(&x);
	lft_tables_free(&y);
	fabric_free(&f);
	fabric_free(&g);
	free(fwd);
	free(mix);
	free(b);
}

START_TEST(t_order_independent)
{
	same_tables(random_fabric(5, 16, 8, 10, 32));
	same_tables(mesh(3, 3));
	same_tables(xgft3());
}
END_TEST

START_TEST(t_deterministic)
{
	struct fabric f;
	struct lft_tables a, c;
	struct tb *b = random_fabric(9, 16, 8, 10, 32);
	tb_build(&f, b, NULL, 0);
	route(&f, &a);
	route(&f, &c);
	ck_assert_mem_eq(a.port, c.port, (size_t)a.n_sw * (a.max_lid + 1));
	lft_tables_free(&c);
	free_all(&f, &a, b);
}
END_TEST

static Suite *updn_suite(void)
{
	Suite *s = suite_create("updn");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_engine_registered);
	tcase_add_test(tc, t_ring_no_cycle);
	tcase_add_test(tc, t_mesh);
	tcase_add_test(tc, t_roots_by_name_and_guid);
	tcase_add_test(tc, t_unknown_root);
	tcase_add_test(tc, t_fat_tree);
	tcase_add_test(tc, t_xgft3);
	tcase_add_test(tc, t_parallel_dual_lmc);
	tcase_add_test(tc, t_islands);
	tcase_add_test(tc, t_random_irregular);
	tcase_add_test(tc, t_random_rooted);
	tcase_add_test(tc, t_order_independent);
	tcase_add_test(tc, t_deterministic);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(updn_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
