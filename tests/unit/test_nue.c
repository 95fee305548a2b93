/*
 * The nue routing engine (routing/engines/nue.c): on one VL, every switch
 * reaches every LID with no loop and the channel-dependency graph of the
 * tables has no cycle, on a ring, tori, a mesh, a fat tree and random
 * irregular fabrics (where impasses send some destinations onto the
 * escape tree); no SLs of its own; its busiest link carries fewer routes
 * than updn's, which funnels through its root, on a torus.
 */

#include "routing_testlib.h"

extern const struct routing_engine nue_engine, updn_engine;

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

/* A random connected fabric of nsw switches of 8 ports, 2 hosts each. */
static struct tb *irregular(uint32_t seed, int nsw)
{
	struct tb *b = tb_new();
	int used[MAXN] = { 0 };
	for (int i = 0; i < nsw; i++)
		tb_node(b, 1, 8, 0x100 + (uint64_t)i, "X%d", i);
	for (int i = 1; i < nsw; i++) {
		int t;
		do
			t = (int)(lcg(&seed) % (uint32_t)i);
		while (used[t] >= 5);
		tb_link(b, i, ++used[i], t, ++used[t]);
	}
	for (int tries = 0; tries < 200; tries++) {
		int x = (int)(lcg(&seed) % (uint32_t)nsw), y = (int)(lcg(&seed) % (uint32_t)nsw);
		if (x != y && used[x] < 6 && used[y] < 6)
			tb_link(b, x, ++used[x], y, ++used[y]);
	}
	for (int i = 0, h = 0; i < nsw; i++)
		for (int k = 0; k < 2; k++, h++)
			tb_link(b, i, 7 + k, tb_node(b, 0, 1, 0x10000 + 0x10 * (uint64_t)h, "H%d", h), 1);
	return b;
}

static void routes_deadlock_free(struct tb *b)
{
	struct fabric f;
	struct lft_tables t = { 0 };
	tb_build(&f, b, NULL, 0);
	tb_route(&nue_engine, &f, &t);
	check_reach(&f, &t, 0);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	ck_assert_ptr_null(t.sl);
	ck_assert_ptr_null(t.sl2vl);
	free_all(&f, &t, b);
}

START_TEST(ring_and_tori)
{
	/* on one VL, where shortest paths alone would cycle */
	routes_deadlock_free(ring(6));
	routes_deadlock_free(torus(4, 4));
	routes_deadlock_free(torus(5, 3));
	routes_deadlock_free(mesh(3, 5));
	routes_deadlock_free(fat2(4, 2, 2));
}
END_TEST

START_TEST(irregular_fabrics)
{
	for (uint32_t seed = 1; seed <= 12; seed++)
		routes_deadlock_free(irregular(seed, 24));
}
END_TEST

START_TEST(beats_updn)
{
	struct fabric f;
	struct lft_tables t = { 0 }, u = { 0 };
	struct tb *b = torus(4, 4);
	tb_build(&f, b, NULL, 0);
	tb_route(&nue_engine, &f, &t);
	tb_route(&updn_engine, &f, &u);
	uint32_t mn = max_link_routes(&f, &t), mu = max_link_routes(&f, &u);
	ck_assert_msg(mn < mu, "nue: max %u routes on a link, updn %u", mn, mu);
	lft_tables_free(&u);
	free_all(&f, &t, b);
}
END_TEST

static Suite *nue_suite(void)
{
	Suite *s = suite_create("nue");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ring_and_tori);
	tcase_add_test(tc, irregular_fabrics);
	tcase_add_test(tc, beats_updn);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(nue_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
