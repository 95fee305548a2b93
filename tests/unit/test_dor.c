/*
 * The dor routing engine (routing/engines/dor.c) on tori and meshes cabled
 * by dimension (ports 1 +x, 2 -x, 3 +y, 4 -y): routes in dimension order
 * on shortest paths; on one VL a torus's rings close cycles, and the
 * datelines' SLs and SL-to-VL tables leave none on any VL (checked from
 * the tables alone); a pair whose x segment wraps from 3 to 0 has SL bit
 * 0 set, one that does not has it clear; a ring broken once is routed the
 * long way round, twice is refused naming it; a mesh needs one VL; a
 * fabric not cabled by dimension, or a torus on one VL, is refused.
 */

#include "routing_testlib.h"

extern const struct routing_engine dor_engine;

static int route(const struct fabric *f, struct lft_tables *t, unsigned max_vls,
		 char *err, size_t errlen)
{
	struct route_opts o = { .max_vls = max_vls };
	ck_assert_int_eq(lft_tables_alloc(t, f), 0);
	return dor_engine.route(f, &o, t, err, errlen);
}

START_TEST(torus_datelines)
{
	struct fabric f;
	struct lft_tables t = { 0 };
	struct tb *b = torus(4, 4);
	char err[256] = "";
	unsigned vls;
	tb_build(&f, b, NULL, 0);
	ck_assert_msg(route(&f, &t, 0, err, sizeof(err)) == 0, "%s", err);
	check_reach(&f, &t, 1);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 1);	/* the rings, on one VL */
	ck_assert_int_eq(vl_cdg_cycle(&f, &t, &vls), 0);
	ck_assert_uint_eq(vls, 2);
	/* T0 (0,0) to T5 (1,1): x first, out of its +x port */
	ck_assert_uint_eq(entry(&f, &t, "T0", lid_of(&f, "H5")), 1);
	/* and T5 back to T0: x first, -x */
	ck_assert_uint_eq(entry(&f, &t, "T5", lid_of(&f, "H0")), 2);
	/* T3 (3,0) to T0 (0,0): the short way is +x, across the dateline 3 -> 0 */
	ck_assert_uint_eq(entry(&f, &t, "T3", lid_of(&f, "H0")), 1);
	ck_assert_uint_eq(lft_sl(&t, lid_of(&f, "H3"), lid_of(&f, "H0")) & 1, 1);
	ck_assert_uint_eq(lft_sl(&t, lid_of(&f, "H0"), lid_of(&f, "H1")), 0);
	/* T0 (0,0) to T12 (0,3): -y, across the y dateline: bit 1 */
	ck_assert_uint_eq(lft_sl(&t, lid_of(&f, "H0"), lid_of(&f, "H12")), 2);
	ck_assert_uint_eq(t.engine_sls, 1);
	free_all(&f, &t, b);
}
END_TEST

START_TEST(ring_broken)
{
	struct fabric f;
	struct lft_tables t = { 0 };
	struct tb *torus44 = torus(4, 4);
	struct tb *b = tb_cut(torus44, "T1", "T2");	/* the row y=0 broken once */
	char err[256] = "";
	unsigned vls;
	tb_build(&f, b, NULL, 0);
	ck_assert_msg(route(&f, &t, 0, err, sizeof(err)) == 0, "%s", err);
	check_reach(&f, &t, 0);
	ck_assert_int_eq(vl_cdg_cycle(&f, &t, &vls), 0);
	/* T1 to T2: the long way, -x through T0 and T3 */
	ck_assert_uint_eq(entry(&f, &t, "T1", lid_of(&f, "H2")), 2);
	ck_assert_uint_eq(entry(&f, &t, "T0", lid_of(&f, "H2")), 2);
	lft_tables_free(&t);
	fabric_free(&f);
	/* twice: no way round between T1 and T3 */
	struct tb *b2 = tb_cut(b, "T3", "T0");
	tb_build(&f, b2, NULL, 0);
	ck_assert_int_eq(route(&f, &t, 0, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "ring in dimension 0") && strstr(err, "no way round"), "%s", err);
	ck_assert_ptr_null(t.sl);
	free_all(&f, &t, b2);
	free(b);
	free(torus44);
}
END_TEST

START_TEST(mesh_one_vl)
{
	struct fabric f;
	struct lft_tables t = { 0 };
	struct tb *b = mesh(3, 4);
	char err[256] = "";
	unsigned vls;
	tb_build(&f, b, NULL, 0);
	ck_assert_msg(route(&f, &t, 1, err, sizeof(err)) == 0, "%s", err);
	check_reach(&f, &t, 1);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	ck_assert_int_eq(vl_cdg_cycle(&f, &t, &vls), 0);
	ck_assert_uint_eq(vls, 1);
	free_all(&f, &t, b);
}
END_TEST

START_TEST(refused)
{
	struct fabric f;
	struct lft_tables t = { 0 };
	char err[256] = "";
	/* a torus on one VL: its datelines need two */
	struct tb *b = torus(3, 3);
	tb_build(&f, b, NULL, 0);
	ck_assert_int_eq(route(&f, &t, 1, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "needs 2 data VLs"), "%s", err);
	free_all(&f, &t, b);
	/* a fat tree is not cabled by dimension */
	b = fat2(4, 2, 2);
	tb_build(&f, b, NULL, 0);
	ck_assert_int_eq(route(&f, &t, 0, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "not a mesh or torus cable"), "%s", err);
	free_all(&f, &t, b);
}
END_TEST

static Suite *dor_suite(void)
{
	Suite *s = suite_create("dor");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, torus_datelines);
	tcase_add_test(tc, ring_broken);
	tcase_add_test(tc, mesh_one_vl);
	tcase_add_test(tc, refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(dor_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
