/*
 * LMC > 0 and the engines (routing/engines/offsets.c, ftree.c, dmodk.c):
 * a host picks one LID of a destination's range (MPI the base LID), so
 * each LID offset alone must spread over the links as the LMC 0 routes
 * of the same fabric do.  For every engine, on a two-level tree (4
 * leaves of 4 hosts, 4 spines: 16 hosts, as the tree OpenSM balances
 * 12 / 12) and a three-level XGFT, with LMC 1 and 2: the CA-to-CA routes
 * per switch-to-switch link towards the LIDs base + k, for each k, are
 * within 1 of the LMC 0 routes' max and min; and the routes to a port's
 * first two LIDs share no switch-to-switch link (the point of LMC).
 * Counted here by walking the tables, not by the verifier, which
 * test_verify.c checks on its own.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engine.h"
#include "routing/graph.h"
#include "sm/base/fabric.h"

#include "routing_testlib.h"

#define MAX_HOPS 16

/* The switch node a CA port is cabled to, or FAB_NONE. */
static uint32_t ca_switch(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	if (f->nodes[p->node].type == FAB_SWITCH || p->num == 0 ||
	    !graph_link_up(f, pi) || !graph_peer_is_switch(f, pi))
		return FAB_NONE;
	return f->ports[p->remote].node;
}

/*
 * The switch-to-switch ports (sending side) the route from CA port src
 * to lid crosses, into path[]; their number.  Aborts unless the route
 * ends at CA port dst.
 */
static uint32_t walk(const struct fabric *f, const struct lft_tables *t,
		     uint32_t src, uint32_t dst, uint32_t lid, uint32_t *path)
{
	uint32_t cur = ca_switch(f, src), n = 0;
	for (uint32_t hops = 0; hops < MAX_HOPS; hops++) {
		uint8_t p = lft_row(t, t->row_of_node[cur])[lid];
		ck_assert_msg(p != LFT_DROP && p != 0 && p <= f->nodes[cur].nports,
			      "LID %u dropped at %s", lid, f->nodes[cur].desc);
		uint32_t pi = fabric_port(f, cur, p);
		ck_assert(graph_link_up(f, pi));
		if (!graph_peer_is_switch(f, pi)) {
			ck_assert_uint_eq(f->ports[pi].remote, dst);
			return n;
		}
		path[n++] = pi;
		cur = f->ports[f->ports[pi].remote].node;
	}
	ck_abort_msg("LID %u: a loop", lid);
	return 0;
}

/*
 * Calls fn for every ordered pair of CA ports cabled to different
 * switches.
 */
static void each_pair(const struct fabric *f,
		      void (*fn)(void *arg, uint32_t src, uint32_t dst),
		      void *arg)
{
	for (uint32_t a = 0; a < f->n_ports; a++) {
		if (ca_switch(f, a) == FAB_NONE)
			continue;
		for (uint32_t d = 0; d < f->n_ports; d++)
			if (ca_switch(f, d) != FAB_NONE &&
			    ca_switch(f, d) != ca_switch(f, a))
				fn(arg, a, d);
	}
}

struct walk_ctx {
	const struct fabric *f;
	const struct lft_tables *t;
	uint32_t k;		/* the LID offset */
	uint64_t *load;		/* per sending switch port */
	uint32_t shared;	/* pairs whose offsets 0 and 1 share a link */
};

static void count_route(void *arg, uint32_t src, uint32_t dst)
{
	struct walk_ctx *w = arg;
	uint32_t path[MAX_HOPS];
	uint32_t n = walk(w->f, w->t, src, dst, w->f->ports[dst].lid + w->k, path);
	for (uint32_t i = 0; i < n; i++)
		w->load[path[i]]++;
}

static void count_shared(void *arg, uint32_t src, uint32_t dst)
{
	struct walk_ctx *w = arg;
	uint32_t p0[MAX_HOPS], p1[MAX_HOPS];
	uint32_t n0 = walk(w->f, w->t, src, dst, w->f->ports[dst].lid, p0);
	uint32_t n1 = walk(w->f, w->t, src, dst, w->f->ports[dst].lid + 1, p1);
	int any = 0;
	for (uint32_t i = 0; i < n0; i++)
		for (uint32_t j = 0; j < n1; j++)
			any |= p0[i] == p1[j];
	w->shared += any;
}

struct spread {
	uint64_t max, min;
};

/*
 * CA-to-CA routes per switch-to-switch link towards offset k of every
 * CA port on another switch.
 */
static struct spread offset_spread(const struct fabric *f,
				   const struct lft_tables *t, uint32_t k)
{
	struct walk_ctx w = { .f = f, .t = t, .k = k,
			      .load = calloc(f->n_ports + 1, sizeof(uint64_t)) };
	struct spread s = { 0, UINT64_MAX };
	ck_assert_ptr_nonnull(w.load);
	each_pair(f, count_route, &w);
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (f->nodes[p->node].type != FAB_SWITCH || p->num == 0 ||
		    !graph_link_up(f, pi) || !graph_peer_is_switch(f, pi))
			continue;
		if (w.load[pi] > s.max)
			s.max = w.load[pi];
		if (w.load[pi] < s.min)
			s.min = w.load[pi];
	}
	free(w.load);
	return s;
}

/* Pairs whose routes to the destination's LIDs base and base + 1 share a link. */
static uint32_t sharing_pairs(const struct fabric *f, const struct lft_tables *t)
{
	struct walk_ctx w = { .f = f, .t = t };
	each_pair(f, count_shared, &w);
	return w.shared;
}

static void check_engine(const char *name, const struct tb *b)
{
	const struct routing_engine *e = routing_engine_find(name);
	struct fabric f0, f;
	struct lft_tables t0, t;
	ck_assert_ptr_nonnull(e);
	tb_build(&f0, b, NULL, 0);
	tb_route(e, &f0, &t0);
	struct spread ref = offset_spread(&f0, &t0, 0);
	ck_assert_uint_gt(ref.max, 0);
	for (uint8_t lmc = 1; lmc <= 2; lmc++) {
		tb_build(&f, b, NULL, lmc);
		tb_route(e, &f, &t);
		for (uint32_t k = 0; k < (1u << lmc); k++) {
			struct spread s = offset_spread(&f, &t, k);
			ck_assert_msg(s.max <= ref.max + 1 && s.min + 1 >= ref.min,
				      "%s, LMC %u, offset %u: routes per link max %llu, min %llu; "
				      "LMC 0: max %llu, min %llu", name, lmc, k,
				      (unsigned long long)s.max, (unsigned long long)s.min,
				      (unsigned long long)ref.max, (unsigned long long)ref.min);
		}
		ck_assert_msg(sharing_pairs(&f, &t) == 0,
			      "%s, LMC %u: %u pairs' base and base + 1 routes share a link",
			      name, lmc, sharing_pairs(&f, &t));
		lft_tables_free(&t);
		fabric_free(&f);
	}
	lft_tables_free(&t0);
	fabric_free(&f0);
}

static const char *const engines[] = {
	"minhop", "updn", "ftree", "dmodk", "pftree", "vswitch-ftree",
};

START_TEST(test_two_level)
{
	struct tb *b = fat2(4, 4, 4);
	check_engine(engines[_i], b);
	free(b);
}
END_TEST

START_TEST(test_three_level)
{
	struct tb *b = xgft3();
	check_engine(engines[_i], b);
	free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lmc");
	TCase *tc = tcase_create("core");
	int n = (int)(sizeof(engines) / sizeof(engines[0]));
	tcase_add_loop_test(tc, test_two_level, 0, n);
	tcase_add_loop_test(tc, test_three_level, 0, n);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
