/*
 * The dor routing engine (routing/engines/dor.c) on tori and meshes cabled
 * by dimension (ports 1 +x, 2 -x, 3 +y, 4 -y): routes in dimension order
 * on shortest paths; on one VL a torus's rings close cycles, and the
 * datelines' SLs and SL-to-VL tables leave none on any VL (checked from
 * the tables alone); a pair whose x segment wraps from 3 to 0 has SL bit
 * 0 set, one that does not has it clear; a ring broken once is routed the
 * long way round, twice is refused naming it; a mesh needs one VL; a
 * fabric not cabled by dimension, or a torus on one VL, is refused.
 * The policy's grid (route_opts.dor): sizes that differ from the cables'
 * are refused naming the dimension and both sizes, sizes that match route
 * as without them, a ring broken in every line is a ring of the given
 * size; without datelines a torus is routed on one VL, its wrap-around
 * cables unused.
 */

#include "routing_testlib.h"

extern const struct routing_engine dor_engine;

/* dor on f with the policy's grid (NULL: none). */
static int route_grid(const struct fabric *f, struct lft_tables *t, unsigned max_vls,
		      const struct dor_opts *grid, char *err, size_t errlen)
{
	struct route_opts o = { .max_vls = max_vls };
	if (grid)
		o.dor = *grid;
	ck_assert_int_eq(lft_tables_alloc(t, f), 0);
	return dor_engine.route(f, &o, t, err, errlen);
}

static int route(const struct fabric *f, struct lft_tables *t, unsigned max_vls,
		 char *err, size_t errlen)
{
	return route_grid(f, t, max_vls, NULL, err, errlen);
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

/* dor with grid on b must fail, its message holding want. */
static void grid_refused(struct tb *b, const struct dor_opts *grid, const char *want)
{
	struct fabric f;
	struct lft_tables t = { 0 };
	char err[256] = "";
	tb_build(&f, b, NULL, 0);
	ck_assert_int_eq(route_grid(&f, &t, 0, grid, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, want), "'%s' lacks '%s'", err, want);
	ck_assert_ptr_null(t.sl);
	free_all(&f, &t, b);
}

START_TEST(grid_mismatch)
{
	grid_refused(torus(4, 4), &(struct dor_opts){ .ndims = 2, .size = { 4, 5 } },
		     "dimension 1 is a ring of 4 switches, routing.dor.dimensions gives 5");
	grid_refused(torus(4, 4), &(struct dor_opts){ .ndims = 1, .size = { 4 } },
		     "the cables run in 2 dimensions, routing.dor.dimensions gives 1");
	/* a 3x4 mesh given as 3x5: its row y=4 gone */
	grid_refused(mesh(3, 4), &(struct dor_opts){ .ndims = 2, .size = { 3, 5 } },
		     "dimension 1 spans 4 switches, routing.dor.dimensions gives 5");
	grid_refused(mesh(3, 4), &(struct dor_opts){ .ndims = 3, .size = { 3, 4, 2 } },
		     "dimension 2 spans 1 switch, routing.dor.dimensions gives 2");
}
END_TEST

/* Tables and SLs of a and b (the same fabric) entry for entry. */
static void same_tables(const struct lft_tables *a, const struct lft_tables *b)
{
	ck_assert_uint_eq(a->n_sw, b->n_sw);
	ck_assert_uint_eq(a->max_lid, b->max_lid);
	size_t nlid = (size_t)a->max_lid + 1;
	ck_assert_mem_eq(a->port, b->port, a->n_sw * nlid);
	ck_assert_mem_eq(a->sl, b->sl, a->n_sl_class * nlid);
	ck_assert_uint_eq(a->sl2vl_n, b->sl2vl_n);
	ck_assert_mem_eq(a->sl2vl, b->sl2vl, a->sl2vl_n * QOS_SLS);
}

START_TEST(grid_matches)
{
	struct tb *tb[2] = { torus(4, 3), mesh(3, 4) };
	const struct dor_opts grid[2] = { { .ndims = 2, .size = { 4, 3 } },
					  { .ndims = 2, .size = { 3, 4 } } };
	for (int i = 0; i < 2; i++) {
		struct fabric f;
		struct lft_tables t = { 0 }, g = { 0 };
		char err[256] = "";
		tb_build(&f, tb[i], NULL, 0);
		ck_assert_msg(route(&f, &t, 0, err, sizeof(err)) == 0, "%s", err);
		ck_assert_msg(route_grid(&f, &g, 0, &grid[i], err, sizeof(err)) == 0, "%s", err);
		same_tables(&t, &g);
		lft_tables_free(&g);
		free_all(&f, &t, tb[i]);
	}
}
END_TEST

/*
 * A 4x4 torus whose every x ring is broken, each at another cable: the
 * cables alone close no x ring (refused, as the coordinates do not fit a
 * mesh), nor do they fit rings of 5; given 4x4, x is a ring of 4 routed
 * the long way round each break.
 */
START_TEST(grid_rings_broken_everywhere)
{
	static const char *const cut[4][2] = {
		{ "T1", "T2" }, { "T7", "T4" }, { "T8", "T9" }, { "T14", "T15" } };
	struct tb *b = torus(4, 4);
	for (int i = 0; i < 4; i++) {
		struct tb *c = tb_cut(b, cut[i][0], cut[i][1]);
		free(b);
		b = c;
	}
	struct fabric f;
	struct lft_tables t = { 0 };
	char err[256] = "";
	unsigned vls;
	tb_build(&f, b, NULL, 0);
	ck_assert_int_eq(route(&f, &t, 0, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "does not lead one step"), "%s", err);
	lft_tables_free(&t);
	ck_assert_int_eq(route_grid(&f, &t, 0, &(struct dor_opts){ .ndims = 2, .size = { 5, 4 } },
				    err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "dimension 0: the cables close no ring of 5 switches"), "%s", err);
	lft_tables_free(&t);
	ck_assert_msg(route_grid(&f, &t, 0, &(struct dor_opts){ .ndims = 2, .size = { 4, 4 } }, err,
				 sizeof(err)) == 0, "%s", err);
	check_reach(&f, &t, 0);
	ck_assert_int_eq(vl_cdg_cycle(&f, &t, &vls), 0);
	/* T1 to T2 (row 0 broken between them): -x, through T0 and T3 */
	ck_assert_uint_eq(entry(&f, &t, "T1", lid_of(&f, "H2")), 2);
	ck_assert_uint_eq(entry(&f, &t, "T3", lid_of(&f, "H2")), 2);
	/* T6 (2,1) to T4 (0,1), a tie: + is broken at T7-T4 (the wrap), so -x */
	ck_assert_uint_eq(entry(&f, &t, "T6", lid_of(&f, "H4")), 2);
	/* T5 (1,1) to T7 (3,1), a tie, + whole: +x */
	ck_assert_uint_eq(entry(&f, &t, "T5", lid_of(&f, "H7")), 1);
	free_all(&f, &t, b);
}
END_TEST

/*
 * Without datelines a torus on one VL: no SL but 0, every route on VL 0
 * with no dependency cycle, no wrap-around cable (x 3 -> 0, y 3 -> 0)
 * used; paths longer than the shortest.
 */
START_TEST(no_dateline)
{
	struct fabric f;
	struct lft_tables t = { 0 };
	struct tb *b = torus(4, 4);
	char err[256] = "";
	unsigned vls;
	tb_build(&f, b, NULL, 0);
	ck_assert_int_eq(route(&f, &t, 1, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "routing.dor.dateline false"), "%s", err);
	lft_tables_free(&t);
	ck_assert_msg(route_grid(&f, &t, 1, &(struct dor_opts){ .no_dateline = 1 }, err,
				 sizeof(err)) == 0, "%s", err);
	check_reach(&f, &t, 0);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	ck_assert_int_eq(vl_cdg_cycle(&f, &t, &vls), 0);
	ck_assert_uint_eq(vls, 1);
	size_t nlid = (size_t)t.max_lid + 1;
	for (size_t i = 0; i < (size_t)t.n_sl_class * nlid; i++)
		ck_assert_uint_eq(t.sl[i], 0);
	for (int k = 0; k < 16; k++) {
		char name[16];
		snprintf(name, sizeof(name), "T%d", k);
		const uint8_t *row = lft_row(&t, t.row_of_node[node_named(&f, name)]);
		for (uint32_t lid = 1; lid <= t.max_lid; lid++) {
			ck_assert_msg(!(k % 4 == 3 && row[lid] == 1) && !(k % 4 == 0 && row[lid] == 2),
				      "%s sends LID %u over the x wrap-around", name, lid);
			ck_assert_msg(!(k / 4 == 3 && row[lid] == 3) && !(k / 4 == 0 && row[lid] == 4),
				      "%s sends LID %u over the y wrap-around", name, lid);
		}
	}
	/* T3 (3,0) to T0 (0,0): the long way, -x */
	ck_assert_uint_eq(entry(&f, &t, "T3", lid_of(&f, "H0")), 2);
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
	tcase_add_test(tc, grid_mismatch);
	tcase_add_test(tc, grid_matches);
	tcase_add_test(tc, grid_rings_broken_everywhere);
	tcase_add_test(tc, no_dateline);
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
