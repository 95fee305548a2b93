/*
 * Multicast trees (routing/mctree.c) and the multicast verifier
 * (routing/verify/verify_mcast.c) on a two-level and a three-level fat tree.
 */
#include <check.h>
#include <infiniband/mad.h>
#include <stdlib.h>
#include <string.h>

#include "routing/mctree.h"
#include "routing/verify/verify_mcast.h"
#include "sm/write/devcache.h"
#include "sm/write/plan_mcast.h"
#include "routing_testlib.h"

struct mt {
	struct fabric f;
	struct lft_tables t;
	struct tb *b;
	uint64_t *mask;
	uint32_t ports[32], n, root;
};

static void mt_open(struct mt *x, struct tb *b)
{
	memset(x, 0, sizeof(*x));
	x->b = b;
	tb_build(&x->f, b, NULL, 0);
	tb_route(routing_engine_find("minhop"), &x->f, &x->t);
	x->mask = calloc((size_t)x->t.n_sw * MCAST_MASK_WORDS, sizeof(*x->mask));
	ck_assert_ptr_nonnull(x->mask);
}

static void mt_close(struct mt *x)
{
	free(x->mask);
	free_all(&x->f, &x->t, x->b);
}

static void member(struct mt *x, const char *host)
{
	x->ports[x->n++] = fabric_port(&x->f, node_named(&x->f, host), 1);
}

/* Computes the tree; checks it with the verifier. */
static void tree(struct mt *x)
{
	char why[256];
	ck_assert_int_eq(mcast_tree(&x->f, &x->t, x->ports, x->n, x->mask,
				    &x->root), 0);
	ck_assert_msg(mcast_verify(&x->f, &x->t, x->ports, x->n, x->mask, why,
				   sizeof(why)) == 0, "%s", why);
}

static const uint64_t *row_mask(const struct mt *x, const char *sw)
{
	return x->mask + (size_t)x->t.row_of_node[node_named(&x->f, sw)] *
			 MCAST_MASK_WORDS;
}

static int has(const struct mt *x, const char *sw, const char *to)
{
	return mcast_mask_has(row_mask(x, sw), port_to(&x->f, sw, to));
}

static unsigned ports_in(const struct mt *x, const char *sw)
{
	unsigned c = 0;
	for (int w = 0; w < MCAST_MASK_WORDS; w++)
		c += (unsigned)__builtin_popcountll(row_mask(x, sw)[w]);
	return c;
}

/* Switches with a mask, and the links between them counted once. */
static void shape(const struct mt *x, unsigned *sws, unsigned *links)
{
	*sws = *links = 0;
	for (uint32_t r = 0; r < x->t.n_sw; r++) {
		const struct fab_node *n = &x->f.nodes[x->t.sw_node[r]];
		unsigned any = 0;
		for (unsigned p = 1; p <= n->nports; p++) {
			if (!mcast_mask_has(x->mask + (size_t)r * MCAST_MASK_WORDS, p))
				continue;
			any = 1;
			uint32_t pi = fabric_port(&x->f, x->t.sw_node[r], p);
			uint32_t rn = x->f.ports[x->f.ports[pi].remote].node;
			if (x->f.nodes[rn].type == FAB_SWITCH)
				(*links)++;
		}
		*sws += any;
	}
	*links /= 2;
}

static const char *root_name(const struct mt *x)
{
	ck_assert_uint_ne(x->root, FAB_NONE);
	return x->f.nodes[x->t.sw_node[x->root]].desc;
}

START_TEST(one_leaf_no_links)
{
	struct mt x;
	mt_open(&x, tb_two_leaves(1));
	member(&x, "H1");
	member(&x, "H2");
	tree(&x);
	ck_assert_str_eq(root_name(&x), "L1");
	ck_assert(has(&x, "L1", "H1") && has(&x, "L1", "H2"));
	ck_assert_uint_eq(ports_in(&x, "L1"), 2);
	unsigned sws, links;
	shape(&x, &sws, &links);
	ck_assert_uint_eq(sws, 1);
	ck_assert_uint_eq(links, 0);
	mt_close(&x);
}
END_TEST

START_TEST(two_leaves_one_spine)
{
	struct mt x;
	mt_open(&x, tb_two_leaves(1));
	member(&x, "H1");
	member(&x, "H3");
	tree(&x);
	/* the spines are 1 hop from both leaves, the leaves 2; S1's GUID */
	ck_assert_str_eq(root_name(&x), "S1");
	ck_assert(has(&x, "L1", "H1") && has(&x, "L1", "S1"));
	ck_assert(has(&x, "S1", "L1") && has(&x, "S1", "L2"));
	ck_assert(has(&x, "L2", "H3") && has(&x, "L2", "S1"));
	ck_assert(!has(&x, "L1", "H2") && !has(&x, "L2", "H4"));
	ck_assert_uint_eq(ports_in(&x, "S2"), 0);
	unsigned sws, links;
	shape(&x, &sws, &links);
	ck_assert_uint_eq(sws, 3);
	ck_assert_uint_eq(links, 2);
	mt_close(&x);
}
END_TEST

START_TEST(three_levels_everywhere)
{
	struct mt x;
	mt_open(&x, xgft3());
	char h[16];
	for (int i = 0; i < 16; i++) {
		snprintf(h, sizeof(h), "H%d", i);
		member(&x, h);
	}
	tree(&x);
	/* a top is 2 hops from every leaf; an aggregation switch 3 from others */
	ck_assert_int_eq(root_name(&x)[0], 'T');
	unsigned sws, links;
	shape(&x, &sws, &links);
	ck_assert_uint_eq(links, sws - 1);
	/* every leaf, one aggregation switch per pod, the root */
	ck_assert_uint_eq(sws, 8 + 4 + 1);
	for (int i = 0; i < 16; i++) {
		snprintf(h, sizeof(h), "H%d", i);
		char leaf[16];
		snprintf(leaf, sizeof(leaf), "L%d%d", i / 4, (i / 2) % 2);
		ck_assert(has(&x, leaf, h));
	}
	mt_close(&x);
}
END_TEST

/*
 * Many groups through one mcast_work (as a run plans them): every tree is
 * the one mcast_tree computes alone, and the hop counts and root BFSs are
 * shared -- groups whose members sit on the same leaves cost no new BFS.
 */
START_TEST(shared_work_same_trees)
{
	struct mt x;
	mt_open(&x, xgft3());
	struct mcast_work w;
	ck_assert_int_eq(mcast_work_init(&w, &x.f, &x.t), 0);
	size_t words = (size_t)x.t.n_sw * MCAST_MASK_WORDS;
	uint64_t *shared = calloc(words, sizeof(*shared));
	ck_assert_ptr_nonnull(shared);
	char h[16];
	/* 40 groups: 8 whose members are every second host (leaves of every
	 * pod, the same leaves each time), then 32 pseudo-random ones */
	unsigned seed = 7, after_same = 0;
	for (int gi = 0; gi < 40; gi++) {
		x.n = 0;
		for (int i = 0; i < 16; i++) {
			seed = seed * 1103515245u + 12345u;
			int in = gi < 8 ? i % 2 == gi % 2 : (seed >> 16) % 3 == 0;
			if (in) {
				snprintf(h, sizeof(h), "H%d", i);
				member(&x, h);
			}
		}
		uint32_t root_w, root_1;
		ck_assert_int_eq(mcast_tree_w(&w, x.ports, x.n, shared, &root_w), 0);
		tree(&x);
		root_1 = x.root;
		ck_assert_uint_eq(root_w, root_1);
		ck_assert_msg(!memcmp(shared, x.mask, words * sizeof(*shared)),
			      "group %d: the shared work's tree differs", gi);
		if (gi == 1)
			after_same = w.bfs_runs;
		if (gi == 7)	/* groups 2..7 repeat groups 0 and 1 */
			ck_assert_uint_eq(w.bfs_runs, after_same);
	}
	/* 8 leaves hold members: at most 8 hop BFSs and one per root row */
	ck_assert_uint_le(w.bfs_runs, 8 + x.t.n_sw);
	ck_assert_uint_gt(w.bfs_runs, 0);
	free(shared);
	mcast_work_free(&w);
	mt_close(&x);
}
END_TEST

START_TEST(three_levels_one_pod)
{
	struct mt x;
	mt_open(&x, xgft3());
	member(&x, "H0");	/* L00 */
	member(&x, "H2");	/* L01 */
	tree(&x);
	/* A00 and A01 are 1 hop from both leaves; A00's GUID is lower */
	ck_assert_str_eq(root_name(&x), "A00");
	unsigned sws, links;
	shape(&x, &sws, &links);
	ck_assert_uint_eq(sws, 3);
	ck_assert_uint_eq(links, 2);
	ck_assert(has(&x, "L00", "A00") && has(&x, "L01", "A00"));
	mt_close(&x);
}
END_TEST

START_TEST(island_member_ignored)
{
	struct tb *b = tb_two_leaves(1), *c = tb_cut(b, "L2", "S1");
	struct tb *d = tb_cut(c, "L2", "S2");
	free(b);
	free(c);
	struct mt x;
	mt_open(&x, d);
	member(&x, "H1");
	member(&x, "H2");
	member(&x, "H3");	/* on L2, cut off from L1 */
	tree(&x);
	ck_assert_str_eq(root_name(&x), "L1");
	ck_assert_uint_eq(ports_in(&x, "L2"), 0);
	ck_assert_uint_eq(ports_in(&x, "S1") + ports_in(&x, "S2"), 0);
	mt_close(&x);
}
END_TEST

START_TEST(no_member_no_tree)
{
	struct mt x;
	mt_open(&x, tb_two_leaves(1));
	tree(&x);
	ck_assert_uint_eq(x.root, FAB_NONE);
	unsigned sws, links;
	shape(&x, &sws, &links);
	ck_assert_uint_eq(sws, 0);
	mt_close(&x);
}
END_TEST

static void set(struct mt *x, const char *sw, const char *to)
{
	uint32_t r = x->t.row_of_node[node_named(&x->f, sw)];
	mcast_mask_set(x->mask + (size_t)r * MCAST_MASK_WORDS, port_to(&x->f, sw, to));
}

static int verify_fails(struct mt *x, const char *what)
{
	char why[256];
	int rc = mcast_verify(&x->f, &x->t, x->ports, x->n, x->mask, why, sizeof(why));
	ck_assert_msg(rc != 1 || strstr(why, what), "%s", why);
	return rc;
}

START_TEST(verifier_catches)
{
	struct mt x;
	mt_open(&x, tb_two_leaves(1));
	member(&x, "H1");
	member(&x, "H3");
	tree(&x);
	/* a loop: L1-S2-L2 beside L1-S1-L2 */
	set(&x, "L1", "S2");
	set(&x, "S2", "L1");
	set(&x, "S2", "L2");
	set(&x, "L2", "S2");
	ck_assert_int_eq(verify_fails(&x, "loop"), 1);
	/* to a non-member host */
	tree(&x);
	set(&x, "L1", "H2");
	ck_assert_int_eq(verify_fails(&x, "non-member"), 1);
	/* a one-way link */
	tree(&x);
	set(&x, "L2", "S2");
	ck_assert_int_eq(verify_fails(&x, "no way back"), 1);
	/* a member left out */
	tree(&x);
	uint32_t r = x.t.row_of_node[node_named(&x.f, "L2")];
	x.mask[(size_t)r * MCAST_MASK_WORDS] &= ~(1ull << port_to(&x.f, "L2", "H3"));
	ck_assert_int_eq(verify_fails(&x, "not reached"), 1);
	mt_close(&x);
}
END_TEST

/* Plans db's MFT blocks against c; returns the ops, each recorded as held. */
static uint32_t plan_and_hold(struct mt *x, struct devcache *c,
			      const struct mc_db *db)
{
	struct plan p;
	plan_init(&p);
	ck_assert_int_eq(plan_mcast(&p, 0, &x->f, c, &x->t, db, NULL, NULL, 1, NULL), 0);
	uint32_t n = p.n_waves ? p.waves[0].n : 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct plan_op *o = &p.waves[0].ops[i];
		ck_assert_int_eq(o->kind, PLAN_MFT);
		ck_assert_uint_eq(o->mod, 0);	/* block 0, position 0 */
		devcache_record(c, &x->f, o, o->mod, p.waves[0].data[o->data]);
	}
	plan_free(&p);
	return n;
}

START_TEST(plan_blocks_known_and_unknown)
{
	struct mt x;
	struct mc_db db;
	struct mc_group want = { .qkey = 1 };
	const char *err;
	mt_open(&x, tb_two_leaves(1));
	for (uint32_t i = 0; i < x.f.n_nodes; i++)
		if (x.f.nodes[i].type == FAB_SWITCH)
			x.f.nodes[i].mft_cap = 1024;
	struct devcache *c = devcache_new();
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(mc_db_init(&db), 0);
	struct mc_group *g = mc_create(&db, &want, &err);
	ck_assert_ptr_nonnull(g);
	uint64_t h1 = x.f.ports[fabric_port(&x.f, node_named(&x.f, "H1"), 1)].guid;
	uint64_t h3 = x.f.ports[fabric_port(&x.f, node_named(&x.f, "H3"), 1)].guid;
	ck_assert_int_eq(mc_join(&db, g, h1, MC_JOIN_FULL, 0), 1);
	ck_assert_int_eq(mc_join(&db, g, h3, MC_JOIN_FULL, 0), 1);
	/* nothing known: every switch, S2 with zeros (an earlier SM's go) */
	uint32_t s2 = node_named(&x.f, "S2");
	ck_assert(!devcache_holds_attr(c, &x.f, s2, 0, IB_ATTR_MULTICASTFORWTBL));
	ck_assert_uint_eq(plan_and_hold(&x, c, &db), 4);
	ck_assert(devcache_holds_attr(c, &x.f, s2, 0, IB_ATTR_MULTICASTFORWTBL));
	ck_assert(!devcache_holds_attr(c, &x.f, s2, 0, IB_ATTR_LINEARFORWTBL));
	/* H3 leaves: L1's entry changes, S1 and L2 are cleared, S2 stays out */
	ck_assert_int_eq(mc_leave(&db, g, h3, MC_JOIN_FULL), 1);
	ck_assert_uint_eq(plan_and_hold(&x, c, &db), 3);
	/* the group goes: the blocks still holding entries (L1) are cleared */
	mc_delete(&db, g);
	ck_assert_uint_eq(plan_and_hold(&x, c, &db), 1);
	ck_assert_uint_eq(plan_and_hold(&x, c, &db), 0);
	mc_db_free(&db);
	devcache_free(c);
	mt_close(&x);
}
END_TEST

static Suite *mcast_tree_suite(void)
{
	Suite *s = suite_create("mcast_tree");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, one_leaf_no_links);
	tcase_add_test(tc, two_leaves_one_spine);
	tcase_add_test(tc, three_levels_everywhere);
	tcase_add_test(tc, shared_work_same_trees);
	tcase_add_test(tc, three_levels_one_pod);
	tcase_add_test(tc, island_member_ignored);
	tcase_add_test(tc, no_member_no_tree);
	tcase_add_test(tc, verifier_catches);
	tcase_add_test(tc, plan_blocks_known_and_unknown);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(mcast_tree_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
