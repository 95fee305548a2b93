/*
 * The dmodk routing engine (routing/engines/dmodk.c) on small fat trees built from
 * net-file text: each entry towards a CA is the one the D-mod-K formula
 * gives (destination index computed here from leaf GUIDs and port ranks,
 * up links from parent GUIDs, whatever the port numbers), the hand-checked
 * example XGFT(3;2,2,4;1,2,2), LMC offsets, parallel cables, every
 * switch reaches every LID with an acyclic channel dependency graph, and
 * fabrics that are no fat tree are refused.
 */

#include "routing_testlib.h"

extern const struct routing_engine dmodk_engine;

/* --- routing and checks --- */

static int try_route(const struct fabric *f, struct lft_tables *t, char *err,
		     size_t errlen)
{
	ck_assert_int_eq(lft_tables_alloc(t, f), 0);
	err[0] = '\0';
	return dmodk_engine.route(f, NULL, t, err, errlen);
}

static void route(const struct fabric *f, struct lft_tables *t)
{
	char err[256];
	if (try_route(f, t, err, sizeof(err)) != 0)
		ck_abort_msg("route: %s", err);
}

/*
 * A 2-level tree: 4 leaves, 3 spines, par cables per leaf-spine pair, 2
 * hosts a leaf on ports 1 and 3 * par + 2 (port 3 * par + 3 free).  The
 * GUIDs run against the names (leaf i: 0x100 + 3i mod 4, spine j:
 * 0x202 - j) and leaf i's cables to spine j start at port
 * 2 + ((i + j) mod 3) * par, so neither names nor ports give the order.
 */
static struct tb *tree2(int par)
{
	struct tb *b = tb_new();
	int L[4], S[3];
	for (int i = 0; i < 4; i++)
		L[i] = tb_node(b, 1, 3 * par + 3, 0x100 + (uint64_t)((3 * i) % 4),
			       "L%d", i);
	for (int j = 0; j < 3; j++)
		S[j] = tb_node(b, 1, 4 * par, 0x202 - (uint64_t)j, "S%d", j);
	for (int i = 0; i < 4; i++) {
		tb_link(b, L[i], 1, tb_node(b, 0, 1, 0x1000 + 0x10 * (uint64_t)i,
					     "H%da", i), 1);
		tb_link(b, L[i], 3 * par + 2,
			tb_node(b, 0, 1, 0x2000 + 0x10 * (uint64_t)i, "H%db", i), 1);
		for (int j = 0; j < 3; j++)
			for (int k = 0; k < par; k++)
				tb_link(b, L[i], 2 + ((i + j) % 3) * par + k,
					S[j], i * par + k + 1);
	}
	return b;
}

/* Insertion sort of node indices by GUID. */
static void sort_by_guid(const struct fabric *f, uint32_t *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && f->nodes[v[j - 1]].guid > f->nodes[v[j]].guid; j--) {
			uint32_t x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
}

static int has_ca(const struct fabric *f, uint32_t sw)
{
	for (unsigned p = 1; p <= f->nodes[sw].nports; p++) {
		uint32_t r = fabric_portp(f, sw, p)->remote;
		if (r != FAB_NONE && f->nodes[f->ports[r].node].type != FAB_SWITCH)
			return 1;
	}
	return 0;
}

/* The k-th (from 0) port of switch a cabled to node b. */
static uint8_t kth_port(const struct fabric *f, uint32_t a, uint32_t b, int k)
{
	for (unsigned p = 1; p <= f->nodes[a].nports; p++) {
		uint32_t r = fabric_portp(f, a, p)->remote;
		if (r != FAB_NONE && f->ports[r].node == b && k-- == 0)
			return (uint8_t)p;
	}
	ck_abort_msg("%s: no cable %d to %s", f->nodes[a].desc, k, f->nodes[b].desc);
	return 0;
}

/*
 * Every CA LID's entry on every switch of a 2-level tree against the
 * formula: d = (leaf index by GUID) * 2 + (rank of the host's port on its
 * leaf); a leaf not holding d takes up link u = (d + o) mod (3 par), i.e.
 * spine u / par in GUID order, its (u mod par)-th cable; a spine takes
 * its ((d + o) mod par)-th cable to d's leaf.  Returns entries checked.
 */
static int check_two_level(const struct fabric *f, const struct lft_tables *t,
			   int par)
{
	uint32_t leaves[8], spines[8];
	int nl = 0, ns = 0, checked = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		if (f->nodes[i].type != FAB_SWITCH)
			continue;
		if (has_ca(f, i))
			leaves[nl++] = i;
		else
			spines[ns++] = i;
	}
	ck_assert_int_eq(nl, 4);
	ck_assert_int_eq(ns, 3);
	sort_by_guid(f, leaves, nl);
	sort_by_guid(f, spines, ns);
	for (int li = 0; li < nl; li++) {
		uint32_t x = leaves[li];
		int rank = 0;
		for (unsigned hp = 1; hp <= f->nodes[x].nports; hp++) {
			uint32_t ca = fabric_portp(f, x, hp)->remote;
			if (ca == FAB_NONE || f->nodes[f->ports[ca].node].type == FAB_SWITCH)
				continue;
			uint32_t d = (uint32_t)(li * 2 + rank++);
			for (uint32_t o = 0; o < (1u << f->lmc); o++) {
				uint32_t lid = f->ports[ca].lid + o;
				for (int k = 0; k < nl; k++) {
					uint32_t u = (d + o) % (3u * (uint32_t)par);
					uint8_t want = leaves[k] == x ? (uint8_t)hp :
						kth_port(f, leaves[k], spines[u / (uint32_t)par],
							 (int)(u % (uint32_t)par));
					uint8_t got = lft_row(t, t->row_of_node[leaves[k]])[lid];
					if (got != want)
						ck_abort_msg("d=%u o=%u at %s: port %u, want %u",
							     d, o, f->nodes[leaves[k]].desc, got, want);
					checked++;
				}
				for (int k = 0; k < ns; k++) {
					uint8_t want = kth_port(f, spines[k], x,
								(int)((d + o) % (uint32_t)par));
					ck_assert_uint_eq(lft_row(t, t->row_of_node[spines[k]])[lid],
							  want);
					checked++;
				}
			}
		}
	}
	return checked;
}

/* --- tests --- */

START_TEST(t_engine_registered)
{
	ck_assert_ptr_eq(routing_engine_find("dmodk"), &dmodk_engine);
	ck_assert_str_eq(dmodk_engine.name, "dmodk");
}
END_TEST

START_TEST(t_two_level_formula)
{
	struct fabric f;
	struct lft_tables t;
	struct tb *b = tree2(1);
	tb_build(&f, b, NULL, 0);
	route(&f, &t);
	ck_assert_int_eq(check_two_level(&f, &t, 1), 8 * 7);
	/* by hand: L3 has the second lowest GUID (0x101): H3a is d = 2, up
	 * link 2 mod 3 = 2: S0 (the highest GUID); H1b (L1 = 0x103, d = 7)
	 * leaves L0 for spine 7 mod 3 = 1: S1 */
	ck_assert_uint_eq(entry(&f, &t, "L0", lid_of(&f, "H3a")), port_to(&f, "L0", "S0"));
	ck_assert_uint_eq(entry(&f, &t, "L0", lid_of(&f, "H1b")), port_to(&f, "L0", "S1"));
	ck_assert_int_eq(check_reach(&f, &t, 1), 7 * 15);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	free_all(&f, &t, b);
}
END_TEST

START_TEST(t_parallel_cables)
{
	struct fabric f;
	struct lft_tables t;
	struct tb *b = tree2(2);
	tb_build(&f, b, NULL, 0);
	route(&f, &t);
	ck_assert_int_eq(check_two_level(&f, &t, 2), 8 * 7);
	ck_assert_int_eq(check_reach(&f, &t, 1), 7 * 15);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	free_all(&f, &t, b);
}
END_TEST

/* LID offset o adds o before the mod: offset 0 is plain D-mod-K. */
START_TEST(t_lmc_offsets)
{
	struct fabric f;
	struct lft_tables t;
	struct tb *b = tree2(1);
	tb_build(&f, b, NULL, 1);
	ck_assert_uint_eq(f.lmc, 1);
	route(&f, &t);
	ck_assert_int_eq(check_two_level(&f, &t, 1), 2 * 8 * 7);
	/* the two LIDs of a host leave a remote leaf by different up links */
	uint32_t h = lid_of(&f, "H2b");
	ck_assert_uint_ne(entry(&f, &t, "L0", h), entry(&f, &t, "L0", h + 1));
	/* 7 switch LIDs + 8 hosts x 2 */
	ck_assert_int_eq(check_reach(&f, &t, 1), 7 * 23);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	free_all(&f, &t, b);
}
END_TEST

/*
 * A hand-checked example, XGFT(3;2,2,4;1,2,2): destination d goes
 * up to A(p, j) with j = d mod 2 and on to T(j, k) with k = (d / 2) mod 2,
 * (0,0),(1,0),(0,1),(1,1) repeating; flows 0->4 and 1->6 both leave L00
 * by j = 0.
 */
START_TEST(t_xgft3_example)
{
	struct fabric f;
	struct lft_tables t;
	struct tb *b = xgft3();
	tb_build(&f, b, NULL, 0);
	route(&f, &t);
	int checked = 0;
	for (int d = 0; d < 16; d++) {
		char h[32], nm[32], to[32];
		int p = d / 4, l = (d / 2) % 2, j = d % 2, k = (d / 2) % 2;
		snprintf(h, sizeof(h), "H%d", d);
		uint32_t lid = lid_of(&f, h);
		for (int q = 0; q < 4; q++)
			for (int x = 0; x < 2; x++) {
				snprintf(nm, sizeof(nm), "L%d%d", q, x);
				if (q == p && x == l)
					snprintf(to, sizeof(to), "%s", h);
				else
					snprintf(to, sizeof(to), "A%d%d", q, j);
				ck_assert_uint_eq(entry(&f, &t, nm, lid), port_to(&f, nm, to));
				/* aggregation: down in d's pod, else up to T(x, k) */
				snprintf(nm, sizeof(nm), "A%d%d", q, x);
				if (q == p)
					snprintf(to, sizeof(to), "L%d%d", p, l);
				else
					snprintf(to, sizeof(to), "T%d%d", x, k);
				ck_assert_uint_eq(entry(&f, &t, nm, lid), port_to(&f, nm, to));
				checked += 2;
			}
		for (int x = 0; x < 2; x++)
			for (int y = 0; y < 2; y++) {
				snprintf(nm, sizeof(nm), "T%d%d", x, y);
				snprintf(to, sizeof(to), "A%d%d", p, x);
				ck_assert_uint_eq(entry(&f, &t, nm, lid), port_to(&f, nm, to));
				checked++;
			}
	}
	ck_assert_int_eq(checked, 16 * 20);
	ck_assert_uint_eq(entry(&f, &t, "L00", lid_of(&f, "H4")), port_to(&f, "L00", "A00"));
	ck_assert_uint_eq(entry(&f, &t, "L00", lid_of(&f, "H6")), port_to(&f, "L00", "A00"));
	/* every switch (switch LIDs too), minimal CA routes, no cycle */
	ck_assert_int_eq(check_reach(&f, &t, 1), 20 * 36);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	free_all(&f, &t, b);
}
END_TEST

START_TEST(t_dual_port_ca)
{
	struct fabric f;
	struct lft_tables t;
	struct tb *b = tree2(1);
	int hd = tb_node(b, 0, 2, 0x9000, "HD");
	tb_link(b, hd, 1, 0, 6);	/* L0 */
	tb_link(b, hd, 2, 2, 6);	/* L2 */
	tb_build(&f, b, NULL, 0);
	route(&f, &t);
	ck_assert_int_eq(check_reach(&f, &t, 1), 7 * 17);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	free_all(&f, &t, b);
}
END_TEST

START_TEST(t_refuses_mesh)
{
	struct fabric f;
	struct lft_tables t;
	char err[256];
	struct tb *b = mesh(3, 2);
	tb_build(&f, b, NULL, 0);
	ck_assert_int_eq(try_route(&f, &t, err, sizeof(err)), -1);
	/* M1 and M2 both have a host: a link within level 1 */
	ck_assert_ptr_nonnull(strstr(err, "both at level 1: not a fat tree"));
	free_all(&f, &t, b);
}
END_TEST

/* One leaf-spine cable missing, or one that is not up: refused. */
START_TEST(t_refuses_missing_link)
{
	struct fabric f;
	struct lft_tables t;
	char err[256];
	struct tb *b = tree2(1);
	tb_build(&f, b, NULL, 0);
	struct fab_port *p = fabric_portp(&f, node_named(&f, "L1"),
					  port_to(&f, "L1", "S2"));
	p->phys_state = 2;
	f.ports[p->remote].phys_state = 2;
	ck_assert_int_eq(try_route(&f, &t, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "unequal up links"));
	lft_tables_free(&t);
	fabric_free(&f);
	/* the same with the cable left out of the file */
	for (int i = 0; i < b->nl; i++)
		if (!strcmp(b->name[b->la[i]], "L1") && !strcmp(b->name[b->lb[i]], "S2")) {
			b->la[i] = b->la[b->nl - 1];
			b->pa[i] = b->pa[b->nl - 1];
			b->lb[i] = b->lb[b->nl - 1];
			b->pb[i] = b->pb[b->nl - 1];
			b->nl--;
		}
	tb_build(&f, b, NULL, 0);
	ck_assert_int_eq(try_route(&f, &t, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "unequal up links"));
	free_all(&f, &t, b);
}
END_TEST

/* The same fabric, records in another order: the same entries. */
START_TEST(t_order_independent)
{
	struct tb *b = xgft3();
	int *fwd = malloc(sizeof(int) * (size_t)b->nn);
	int *mix = malloc(sizeof(int) * (size_t)b->nn);
	for (int i = 0; i < b->nn; i++) {
		fwd[i] = i;
		mix[i] = (i * 11 + 3) % b->nn;	/* 11 is prime to 36 */
	}
	ck_assert_int_eq(b->nn, 36);
	struct fabric f, g;
	struct lft_tables x, y;
	tb_build(&f, b, fwd, 0);
	tb_build(&g, b, mix, 0);
	route(&f, &x);
	route(&g, &y);
	ck_assert_uint_eq(x.max_lid, y.max_lid);
	int compared = 0;
	for (uint32_t r = 0; r < x.n_sw; r++) {
		uint64_t guid = f.nodes[x.sw_node[r]].guid;
		uint32_t gr = y.row_of_node[fabric_find_node(&g, guid)];
		for (uint32_t lid = 1; lid <= x.max_lid; lid++, compared++) {
			ck_assert_uint_eq(f.ports[f.lid_port[lid]].guid,
					  g.ports[g.lid_port[lid]].guid);
			if (lft_row(&x, r)[lid] != lft_row(&y, gr)[lid])
				ck_abort_msg("switch 0x%llx LID %u: port %u vs %u",
					     (unsigned long long)guid, lid,
					     lft_row(&x, r)[lid], lft_row(&y, gr)[lid]);
		}
	}
	ck_assert_int_eq(compared, 20 * 36);
	lft_tables_free(&x);
	lft_tables_free(&y);
	fabric_free(&f);
	fabric_free(&g);
	free(fwd);
	free(mix);
	free(b);
}
END_TEST

START_TEST(t_deterministic)
{
	struct fabric f;
	struct lft_tables a, c;
	struct tb *b = xgft3();
	tb_build(&f, b, NULL, 0);
	route(&f, &a);
	route(&f, &c);
	ck_assert_mem_eq(a.port, c.port, (size_t)a.n_sw * (a.max_lid + 1));
	lft_tables_free(&c);
	free_all(&f, &a, b);
}
END_TEST

static Suite *dmodk_suite(void)
{
	Suite *s = suite_create("dmodk");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, t_engine_registered);
	tcase_add_test(tc, t_two_level_formula);
	tcase_add_test(tc, t_parallel_cables);
	tcase_add_test(tc, t_lmc_offsets);
	tcase_add_test(tc, t_xgft3_example);
	tcase_add_test(tc, t_dual_port_ca);
	tcase_add_test(tc, t_refuses_mesh);
	tcase_add_test(tc, t_refuses_missing_link);
	tcase_add_test(tc, t_order_independent);
	tcase_add_test(tc, t_deterministic);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(dmodk_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
