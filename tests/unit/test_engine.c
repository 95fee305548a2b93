/*
 * The routing engine table (routing/engine.c): every engine is found by
 * its name, the default list and the verifier's deadlock promise come from
 * it, the -R error lists it, and each engine keeps the promises the table
 * makes for it on a fat tree and on a mesh.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engine.h"
#include "routing/verify/verify.h"
#include "sm/model/config.h"
#include "routing_testlib.h"

START_TEST(t_table_complete)
{
	const struct routing_engine *e;
	char names[256], want[256] = "";
	size_t n;

	for (n = 0; (e = routing_engine_at(n)) != NULL; n++) {
		ck_assert_ptr_nonnull(e->name);
		ck_assert_ptr_nonnull(e->route);
		ck_assert_ptr_nonnull(e->summary);
		ck_assert_ptr_nonnull(e->topologies);
		ck_assert_ptr_eq(routing_engine_find(e->name), e);
		strcat(want, n ? "|" : "");
		strcat(want, e->name);
	}
	ck_assert_uint_ge(n, 4);
	routing_engine_names(names, sizeof(names), "|");
	ck_assert_str_eq(names, want);
	ck_assert_ptr_null(routing_engine_find("nosuch"));
	ck_assert_ptr_null(routing_engine_find(""));
	/* a short buffer is cut, never overrun, always terminated */
	routing_engine_names(names, 5, "|");
	ck_assert_uint_eq(strlen(names), 4);
}
END_TEST

START_TEST(t_defaults_from_table)
{
	const struct routing_engine *e;
	struct config c;
	size_t i;

	config_defaults(&c);
	for (i = 0; (e = routing_engine_default(i)) != NULL; i++) {
		ck_assert_ptr_eq(routing_engine_find(e->name), e);
		ck_assert_int_lt((int)i, c.n_engines);
		ck_assert_str_eq(c.engines[i], e->name);
	}
	ck_assert_uint_ge(i, 1);
	ck_assert_int_eq(c.n_engines, (int)i);
}
END_TEST

START_TEST(t_verifier_reads_table)
{
	const struct routing_engine *e;

	for (size_t i = 0; (e = routing_engine_at(i)) != NULL; i++)
		ck_assert_int_eq(verify_engine_deadlock_free(e->name),
				 e->deadlock_free);
	ck_assert_int_eq(verify_engine_deadlock_free(NULL), 0);
	ck_assert_int_eq(verify_engine_deadlock_free("nosuch"), 0);
}
END_TEST

/* -R and routing.engine name every engine of the table when refusing one. */
START_TEST(t_unknown_engine_lists_table)
{
	struct config c;
	char err[256], names[128], want[256];

	config_defaults(&c);
	routing_engine_names(names, sizeof(names), " ");
	snprintf(want, sizeof(want),
		 "unknown routing engine 'nosuch' (known: %s)", names);
	ck_assert_int_eq(config_set_engines(&c, "ftree,nosuch", err,
					    sizeof(err)), -1);
	ck_assert_str_eq(err, want);
	/* every name of the table is accepted, all of them at once too */
	routing_engine_names(names, sizeof(names), ",");
	ck_assert_int_eq(config_set_engines(&c, names, err, sizeof(err)), 0);
}
END_TEST

static int route_with(const struct routing_engine *e, struct fabric *f,
		      struct lft_tables *t)
{
	char err[256];

	ck_assert_int_eq(lft_tables_alloc(t, f), 0);
	return e->route(f, NULL, t, err, sizeof(err));
}

/*
 * Whether an engine of the table says it routes fat trees, or meshes
 * (its topologies: "any topology", or naming them).
 */
static int routes(const struct routing_engine *e, const char *kind)
{
	return !strncmp(e->topologies, "any topology", 12) || strstr(e->topologies, kind);
}

/*
 * Deadlock freedom as the engine promises it: no cycle on one VL, or,
 * for an engine with SLs of its own, none on any VL of its tables.
 */
static int deadlock_free(const struct routing_engine *e, const struct fabric *f,
			 const struct lft_tables *t)
{
	unsigned vls;
	return e->own_sls ? !vl_cdg_cycle(f, t, &vls) : !cdg_has_cycle(f, t);
}

/*
 * A fat tree: every engine that says it routes fat trees does, loop-free;
 * the deadlock-free ones without a dependency cycle.
 */
START_TEST(t_fat_tree_promises)
{
	const struct routing_engine *e;

	for (size_t i = 0; (e = routing_engine_at(i)) != NULL; i++) {
		struct tb *b = xgft3();
		struct fabric f;
		struct lft_tables t;

		tb_build(&f, b, NULL, 0);
		if (!routes(e, "fat trees")) {
			ck_assert_msg(route_with(e, &f, &t) == -1, "%s routed a fat tree", e->name);
			free_all(&f, &t, b);
			continue;
		}
		ck_assert_msg(route_with(e, &f, &t) == 0, "%s", e->name);
		ck_assert_int_gt(check_reach(&f, &t, 1), 0);
		if (e->deadlock_free)
			ck_assert_msg(deadlock_free(e, &f, &t), "%s", e->name);
		/* no QoS mode: SLs and SL-to-VL tables only from an engine of its own SLs */
		ck_assert_msg((t.sl != NULL) == (e->own_sls != 0), "%s", e->name);
		ck_assert_msg((t.sl2vl != NULL) == (e->own_sls != 0), "%s", e->name);
		free_all(&f, &t, b);
	}
}
END_TEST

/*
 * A 3x3 mesh: the engines for any topology or meshes route it, and a
 * cycle shows up exactly where the table says the engine is not
 * deadlock-free; the fat-tree engines refuse it.
 */
START_TEST(t_mesh_promises)
{
	const struct routing_engine *e;

	for (size_t i = 0; (e = routing_engine_at(i)) != NULL; i++) {
		struct tb *b = mesh(3, 3);
		struct fabric f;
		struct lft_tables t;
		int rc;

		tb_build(&f, b, NULL, 0);
		rc = route_with(e, &f, &t);
		if (!routes(e, "meshes")) {
			ck_assert_msg(rc == -1, "%s routed a mesh", e->name);
		} else {
			ck_assert_msg(rc == 0, "%s", e->name);
			check_reach(&f, &t, 0);
			ck_assert_msg(deadlock_free(e, &f, &t) == e->deadlock_free,
				      "%s", e->name);
		}
		free_all(&f, &t, b);
	}
}
END_TEST

/* The QoS room: SL 0 when absent, read back when set, freed with the rest. */
START_TEST(t_qos_room)
{
	struct tb *b = xgft3();
	struct fabric f;
	struct lft_tables t;
	uint32_t w;

	tb_build(&f, b, NULL, 0);
	ck_assert_int_eq(lft_tables_alloc(&t, &f), 0);
	ck_assert_ptr_null(t.sl);
	ck_assert_ptr_null(t.sl2vl);
	ck_assert_uint_eq(t.sl2vl_nodes, 0);
	ck_assert_uint_eq(lft_sl(&t, 1, 2), 0);
	ck_assert_ptr_null(lft_sl2vl(&t, 0, 1, 1));
	w = t.max_lid + 1;
	/* two source classes; LID 1 in class 1, LID 2 in none */
	t.n_sl_class = 2;
	t.sl_class = malloc(w * sizeof(*t.sl_class));
	t.sl = calloc((size_t)2 * w, 1);
	ck_assert(t.sl && t.sl_class);
	for (uint32_t l = 0; l < w; l++)
		t.sl_class[l] = LFT_SL_NOCLASS;
	t.sl_class[1] = 1;
	t.sl[1 * w + 2] = 7;
	ck_assert_uint_eq(lft_sl(&t, 1, 2), 7);
	ck_assert_uint_eq(lft_sl(&t, 2, 1), 0);	/* no class: SL 0 */
	ck_assert_uint_eq(lft_sl(&t, w, 1), 0);	/* out of range */
	ck_assert_uint_eq(lft_sl(&t, 1, w), 0);
	/* one node with 2 ports: 9 slots, (in, out) = (2, 1) is slot 7;
	 * two distinct tables, slot 7 on table 1 */
	t.sl2vl_nodes = 1;
	t.sl2vl_n = 2;
	t.sl2vl_first = malloc(sizeof(*t.sl2vl_first));
	t.sl2vl_width = malloc(1);
	t.sl2vl_idx = calloc(9, sizeof(*t.sl2vl_idx));
	t.sl2vl = calloc(2 * QOS_SLS, 1);
	ck_assert(t.sl2vl_first && t.sl2vl_width && t.sl2vl_idx && t.sl2vl);
	t.sl2vl_first[0] = 0;
	t.sl2vl_width[0] = 3;
	t.sl2vl_idx[7] = 1;
	t.sl2vl[1 * QOS_SLS + 3] = 3;
	ck_assert_uint_eq(lft_sl2vl(&t, 0, 2, 1)[3], 3);
	ck_assert_uint_eq(lft_sl2vl(&t, 0, 1, 2)[3], 0);
	ck_assert_ptr_null(lft_sl2vl(&t, 0, 3, 1));	/* no port 3 */
	ck_assert_ptr_null(lft_sl2vl(&t, 1, 1, 1));	/* no node 1 */
	free_all(&f, &t, b);		/* ASan: nothing leaks */
	ck_assert_ptr_null(t.sl);
	ck_assert_ptr_null(t.sl_class);
	ck_assert_ptr_null(t.sl2vl);
	ck_assert_ptr_null(t.sl2vl_first);
	ck_assert_ptr_null(t.sl2vl_idx);
}
END_TEST

static Suite *engine_suite(void)
{
	Suite *s = suite_create("engine");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, t_table_complete);
	tcase_add_test(tc, t_defaults_from_table);
	tcase_add_test(tc, t_verifier_reads_table);
	tcase_add_test(tc, t_unknown_engine_lists_table);
	tcase_add_test(tc, t_fat_tree_promises);
	tcase_add_test(tc, t_mesh_promises);
	tcase_add_test(tc, t_qos_room);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(engine_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
