/*
 * Route repair (reconfig/repair.c): after a link is lost, every entry
 * whose old path did not cross it is kept, the repaired tables still
 * reach every LID without loops (and without a dependency cycle for
 * ftree), a gained link, a new node or a LID that changed hands refuses
 * the repair, and an unchanged fabric read in another order is told
 * apart as the same and keeps its tables entry for entry.  A dead switch
 * moves only the routes that went through it.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconfig/repair.h"
#include "routing_testlib.h"

extern const struct routing_engine ftree_engine;
extern const struct routing_engine minhop_engine;

static uint8_t old_entry(const struct fabric *of, const struct lft_tables *ot,
			 uint64_t sw_guid, uint32_t lid)
{
	uint32_t n = fabric_find_node(of, sw_guid);
	ck_assert_uint_ne(n, FAB_NONE);
	return lft_row(ot, ot->row_of_node[n])[lid];
}

/*
 * Does the old route from switch s to lid (in of, by ot) cross the link
 * between node GUIDs ga and gb?  Followed independently of repair.c.
 */
static int crosses(const struct fabric *of, const struct lft_tables *ot,
		   uint32_t s, uint32_t lid, uint64_t ga, uint64_t gb)
{
	for (uint32_t hops = 0; hops <= ot->n_sw; hops++) {
		uint8_t p = lft_row(ot, ot->row_of_node[s])[lid];
		if (p == 0 || p == LFT_DROP)
			return 0;
		uint32_t r = fabric_portp(of, s, p)->remote;
		ck_assert_uint_ne(r, FAB_NONE);
		uint32_t n = of->ports[r].node;
		uint64_t g1 = of->nodes[s].guid, g2 = of->nodes[n].guid;
		if ((g1 == ga && g2 == gb) || (g1 == gb && g2 == ga))
			return 1;
		if (of->nodes[n].type != FAB_SWITCH)
			return 0;
		s = n;
	}
	ck_abort_msg("old route loops");
	return 0;
}

struct pair {
	struct tb *b, *cut;
	struct fabric of, nf;
	struct lft_tables ot, t;
	struct guid_map lids;
};

/* old: b routed by e; new: b without x-y, same LIDs, fresh tables by e. */
/*
 * old: b routed by e; new: after (records in perm order, NULL: as added),
 * same LIDs, fresh tables by e.  The pair owns b and after.
 */
static void setup_pair(struct pair *p, struct tb *b, struct tb *after,
		       const int *perm, const struct routing_engine *e)
{
	memset(p, 0, sizeof(*p));
	p->b = b;
	p->cut = after;
	tb_build_kept(&p->of, b, NULL, NULL);
	ck_assert_int_eq(lids_record(&p->of, &p->lids), 0);
	tb_route(e, &p->of, &p->ot);
	tb_build_kept(&p->nf, after, perm, &p->lids);
	tb_route(e, &p->nf, &p->t);
}

/* old: b; new: b without the link x-y. */
static void setup(struct pair *p, struct tb *b, const char *x, const char *y,
		  const struct routing_engine *e)
{
	setup_pair(p, b, tb_cut(b, x, y), NULL, e);
}

static void teardown_pair(struct pair *p)
{
	lft_tables_free(&p->ot);
	lft_tables_free(&p->t);
	fabric_free(&p->of);
	fabric_free(&p->nf);
	guid_map_free(&p->lids);
	free(p->b);
	free(p->cut);
}

/* Every entry whose old route missed the lost link is the old one. */
static uint64_t check_kept(const struct pair *p, const char *x, const char *y)
{
	uint64_t ga = p->of.nodes[node_named(&p->of, x)].guid;
	uint64_t gb = p->of.nodes[node_named(&p->of, y)].guid;
	uint64_t kept = 0, crossing = 0;
	for (uint32_t r = 0; r < p->t.n_sw; r++) {
		uint32_t n = p->t.sw_node[r];
		uint64_t g = p->nf.nodes[n].guid;
		uint32_t on = fabric_find_node(&p->of, g);
		for (uint32_t lid = 1; lid <= p->nf.max_lid; lid++) {
			if (p->nf.lid_port[lid] == FAB_NONE)
				continue;
			if (crosses(&p->of, &p->ot, on, lid, ga, gb)) {
				crossing++;
				continue;
			}
			ck_assert_msg(lft_row(&p->t, r)[lid] == old_entry(&p->of, &p->ot, g, lid),
				      "%s LID %u: %u, was %u", p->nf.nodes[n].desc, lid,
				      lft_row(&p->t, r)[lid], old_entry(&p->of, &p->ot, g, lid));
			kept++;
		}
	}
	ck_assert_uint_gt(crossing, 0);	/* the cut link carried routes */
	return kept;
}

START_TEST(test_ftree_link_lost)
{
	struct pair p;
	char why[128] = "";
	setup(&p, xgft3(), "L00", "A00", &ftree_engine);
	ck_assert_int_eq(repair_compare(&p.of, &p.nf, why, sizeof(why)), REPAIR_LOSS);

	/* the fresh tables move more than the cut forces */
	uint64_t fresh_moved = 0;
	for (uint32_t r = 0; r < p.t.n_sw; r++)
		for (uint32_t lid = 1; lid <= p.nf.max_lid; lid++)
			if (lft_row(&p.t, r)[lid] !=
			    old_entry(&p.of, &p.ot, p.nf.nodes[p.t.sw_node[r]].guid, lid))
				fresh_moved++;

	struct repair_stats st;
	ck_assert_int_eq(repair_routes(&p.of, &p.ot, &p.nf, &p.t, &st), 0);
	uint64_t kept = check_kept(&p, "L00", "A00");
	ck_assert_uint_eq(st.kept, kept);	/* intact = did not cross the cut */
	ck_assert_uint_gt(st.broken, 0);
	ck_assert_uint_eq(st.fresh_moved, fresh_moved);
	ck_assert_uint_le(st.moved, fresh_moved);
	ck_assert_uint_gt(st.moved, 0);
	check_reach(&p.nf, &p.t, 0);
	ck_assert_int_eq(cdg_has_cycle(&p.nf, &p.t), 0);
	teardown_pair(&p);
}
END_TEST

/* A lost link repaired: the untouched entries kept, everything reached. */
static void lost_link_case(struct tb *b, const char *x, const char *y,
			   const struct routing_engine *e, int deadlock_free)
{
	struct pair p;
	char why[128] = "";
	setup(&p, b, x, y, e);
	ck_assert_int_eq(repair_compare(&p.of, &p.nf, why, sizeof(why)), REPAIR_LOSS);
	struct repair_stats st;
	ck_assert_int_eq(repair_routes(&p.of, &p.ot, &p.nf, &p.t, &st), 0);
	ck_assert_uint_eq(st.kept, check_kept(&p, x, y));
	check_reach(&p.nf, &p.t, 0);
	if (deadlock_free)
		ck_assert_int_eq(cdg_has_cycle(&p.nf, &p.t), 0);
	teardown_pair(&p);
}

START_TEST(test_ftree_top_link_lost)
{
	lost_link_case(xgft3(), "A11", "T10", &ftree_engine, 1);
	lost_link_case(xgft3(), "L31", "A31", &ftree_engine, 1);
}
END_TEST

START_TEST(test_mesh_minhop_link_lost)
{
	lost_link_case(mesh(3, 3), "M5", "M6", &minhop_engine, 0);
}
END_TEST

/*
 * A top switch dies: every route through it moves, no other entry does,
 * its own LID is dropped everywhere, the rest is reached without a cycle.
 */
START_TEST(test_switch_lost)
{
	struct pair p;
	char why[128] = "";
	struct tb *b = xgft3();
	setup_pair(&p, b, tb_cut(b, "T00", NULL), NULL, &minhop_engine);
	const struct fabric *of = &p.of, *nf = &p.nf;
	const struct lft_tables *ot = &p.ot;
	struct lft_tables *t = &p.t;
	ck_assert_int_eq(repair_compare(of, nf, why, sizeof(why)), REPAIR_LOSS);
	struct repair_stats st;
	ck_assert_int_eq(repair_routes(of, ot, nf, t, &st), 0);
	uint32_t t00 = node_named(of, "T00");
	uint32_t dead_lid = fabric_portp(of, t00, 0)->lid;
	for (uint32_t r = 0; r < t->n_sw; r++) {
		uint32_t n = t->sw_node[r];
		uint64_t g = nf->nodes[n].guid;
		uint32_t on = fabric_find_node(of, g);
		if (g == of->nodes[t00].guid)
			continue;
		for (uint32_t lid = 1; lid <= nf->max_lid; lid++) {
			uint8_t now = lft_row(t, r)[lid], was = old_entry(of, ot, g, lid);
			if (lid == dead_lid) {
				ck_assert_uint_eq(now, LFT_DROP);
				continue;
			}
			/* through T00 = its next hop, or a later one, is T00 */
			int through = 0;
			uint32_t cur = on;
			for (int h = 0; h < 8 && !through; h++) {
				uint8_t port = lft_row(ot, ot->row_of_node[cur])[lid];
				if (port == 0 || port == LFT_DROP)
					break;
				uint32_t rn = of->ports[fabric_portp(of, cur, port)->remote].node;
				if (rn == t00)
					through = 1;
				else if (of->nodes[rn].type != FAB_SWITCH)
					break;
				cur = rn;
			}
			if (!through)
				ck_assert_msg(now == was, "%s LID %u moved: %u -> %u",
					      nf->nodes[n].desc, lid, was, now);
		}
	}
	ck_assert_uint_gt(st.broken, 0);
	check_reach(nf, t, 0);
	teardown_pair(&p);
}
END_TEST

START_TEST(test_gain_refused)
{
	struct pair p;
	char why[128] = "";
	setup(&p, xgft3(), "L00", "A00", &ftree_engine);
	/* the link comes back: old is the cut fabric, new the whole one */
	ck_assert_int_eq(repair_compare(&p.nf, &p.of, why, sizeof(why)), REPAIR_GAIN);
	ck_assert_msg(strstr(why, "is new"), "%s", why);
	teardown_pair(&p);
}
END_TEST

START_TEST(test_new_node_refused)
{
	struct tb *small = mesh(2, 2), *big = mesh(2, 2);
	/* a host more, on M1's free port 2 */
	tb_link(big, 0, 2, tb_node(big, 0, 1, 0xabc000, "Hnew"), 1);
	struct fabric a, b;
	struct guid_map m = { 0 };
	char why[128] = "";
	tb_build_kept(&a, small, NULL, NULL);
	ck_assert_int_eq(lids_record(&a, &m), 0);
	tb_build_kept(&b, big, NULL, &m);
	ck_assert_int_eq(repair_compare(&a, &b, why, sizeof(why)), REPAIR_GAIN);
	ck_assert_msg(strstr(why, "is new"), "%s", why);	/* its node or its link */
	fabric_free(&a);
	fabric_free(&b);
	guid_map_free(&m);
	free(small);
	free(big);
}
END_TEST

START_TEST(test_lid_moved_refused)
{
	struct tb *b = mesh(2, 2);
	struct fabric x, y;
	char why[128] = "";
	tb_build_kept(&x, b, NULL, NULL);
	tb_build_kept(&y, b, NULL, NULL);
	/* swap the LIDs of two hosts */
	uint32_t h1 = fabric_port(&y, node_named(&y, "H1"), 1);
	uint32_t h2 = fabric_port(&y, node_named(&y, "H2"), 1);
	uint32_t l = y.ports[h1].lid;
	y.ports[h1].lid = y.ports[h2].lid;
	y.ports[h2].lid = l;
	ck_assert_int_eq(fabric_index_lids(&y), 0);
	ck_assert_int_eq(repair_compare(&x, &y, why, sizeof(why)), REPAIR_GAIN);
	ck_assert_msg(strstr(why, "changed hands"), "%s", why);
	fabric_free(&x);
	fabric_free(&y);
	free(b);
}
END_TEST

START_TEST(test_unchanged_other_order)
{
	struct pair p;
	char why[128] = "";
	struct tb *b = xgft3(), *same = tb_new();
	int perm[MAXN];
	*same = *b;
	for (int i = 0; i < b->nn; i++)
		perm[i] = b->nn - 1 - i;
	setup_pair(&p, b, same, perm, &ftree_engine);
	const struct fabric *of = &p.of, *nf = &p.nf;
	const struct lft_tables *ot = &p.ot;
	struct lft_tables *t = &p.t;
	ck_assert_int_eq(repair_compare(of, nf, why, sizeof(why)), REPAIR_SAME);
	/* kept as they were, in the new node numbering */
	struct lft_tables kt;
	ck_assert_int_eq(repair_keep(of, ot, nf, &kt), 0);
	for (uint32_t r = 0; r < kt.n_sw; r++)
		for (uint32_t lid = 1; lid <= nf->max_lid; lid++)
			ck_assert_uint_eq(lft_row(&kt, r)[lid],
					  old_entry(of, ot, nf->nodes[kt.sw_node[r]].guid, lid));
	lft_tables_free(&kt);
	struct repair_stats st;
	ck_assert_int_eq(repair_routes(of, ot, nf, t, &st), 0);
	ck_assert_uint_eq(st.broken, 0);
	ck_assert_uint_eq(st.moved, 0);
	ck_assert_uint_eq(st.fresh, 0);
	for (uint32_t r = 0; r < t->n_sw; r++)
		for (uint32_t lid = 1; lid <= nf->max_lid; lid++)
			ck_assert_uint_eq(lft_row(t, r)[lid],
					  old_entry(of, ot, nf->nodes[t->sw_node[r]].guid, lid));
	teardown_pair(&p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("repair");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_ftree_link_lost);
	tcase_add_test(tc, test_ftree_top_link_lost);
	tcase_add_test(tc, test_mesh_minhop_link_lost);
	tcase_add_test(tc, test_switch_lost);
	tcase_add_test(tc, test_gain_refused);
	tcase_add_test(tc, test_new_node_refused);
	tcase_add_test(tc, test_lid_moved_refused);
	tcase_add_test(tc, test_unchanged_other_order);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
