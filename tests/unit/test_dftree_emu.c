/*
 * dFtree's loop on the in-process emulator with its traffic model
 * (sm/dftree.c, mad/emu/emu_flow.c): the dFtree paper's Exp I on an
 * approximation of its non-oversubscribed testbed
 * (tests/tools/emuflow/testbed-3a.net: three leaves, one root, 4X DDR).
 * The victim 2-3 runs alone, then the contributors 1-5, 3-5 and 6-5 join
 * towards H5, which takes 12.9 Gb/s of its 16 Gb/s link.  Without dFtree
 * the victim stays held back behind the hot-spot's congestion tree; with
 * it, the SM reads the counters the traffic makes, finds H5 a hot-spot,
 * sends lane orders (69, slow SL 1) to the ports over the threshold below
 * half their link (the contributors, and the victim, which has nothing to
 * move), the hosts move their flows to H5 onto SL 1 (Algorithm 2), and
 * the victim gets back at least half of what it lost within two
 * intervals; the SA's PathRecord to H5 answers SL 1 meanwhile.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu.h"
#include "sm/daemon.h"
#include "sm/model/lanes.h"

#include "emu_testlib.h"

#define GBPS (1e9 / 8)
#define TESTBED "tests/tools/emuflow/testbed-3a.net"

struct run {
	EMU_RUN;
	struct emu_traffic *t;
	struct emu_subscriber sub[4];	/* H1, H3, H6, H2 */
	int seen[4];
};

static const char *const hosts[4] = { "H1", "H3", "H6", "H2" };

static char *file_text(const char *path)
{
	FILE *fp = fopen(path, "r");
	ck_assert_msg(fp != NULL, "%s", path);
	char *t = calloc(1, 65536);
	ck_assert_ptr_nonnull(t);
	size_t n = fread(t, 1, 65535, fp);
	ck_assert_uint_gt(n, 0);
	fclose(fp);
	return t;
}

/* The port GUID and the LID of host NAME's port 1. */
static uint64_t port_guid(struct run *r, const char *name)
{
	for (uint32_t i = 0; i < r->topo.n_nodes; i++)
		if (!strcmp(r->topo.nodes[i].desc, name))
			return r->topo.ports[fabric_port(&r->topo, i, 1)].guid;
	ck_abort_msg("no host %s", name);
	return 0;
}

static uint32_t lid(struct run *r, const char *name)
{
	const struct fab_node *nd = NULL;
	for (uint32_t i = 0; i < r->topo.n_nodes; i++)
		if (!strcmp(r->topo.nodes[i].desc, name))
			nd = &r->topo.nodes[i];
	ck_assert_ptr_nonnull(nd);
	int l = emu_port_lid(r->e, nd->guid, 1);
	ck_assert_int_gt(l, 0);
	return (uint32_t)l;
}

static int idle(const void *arg)
{
	const struct sm *sm = arg;
	return sm->sweep.heavy_sweeps >= 1 && sm->sw.activity == SM_IDLE &&
	       !sm->sw.heavy_wanted;
}

static void setup(struct run *r, int dftree)
{
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "dftemu",
		     .text = file_text(TESTBED), .seed = 28 });
	r->sm = emu_sm_new(r->state, 20);
	struct config *c = &r->sm->cfg;
	c->port_guid = port_guid(r, "H4");
	c->pm_interval_s = 0;
	if (dftree) {
		c->cong_mode = CONG_DFTREE;
		c->cong_fast_sl = 0;
		c->cong_slow_sl = 1;
		c->cong_interval_s = 1;
	}
	emu_sm_start(r->sm, r->base, r->e);
	ck_assert_msg(emu_run_while(r->base, idle, r->sm, 10000), "no bring-up");
	for (int i = 0; i < 4; i++)
		emu_subscribe(r->e, r->base, &r->sub[i], port_guid(r, hosts[i]));
	r->t = emu_traffic_new(r->e);
	ck_assert_ptr_nonnull(r->t);
	ck_assert_int_eq(emu_traffic_run(r->t, r->base, 10), 0);
}

static void teardown(struct run *r)
{
	emu_traffic_run(r->t, r->base, 0);
	for (int i = 0; i < 4; i++)
		emu_subscriber_free(&r->sub[i]);
	emu_traffic_free(r->t);
	emu_run_free(&r->run);
}

/*
 * The hosts' agents: every lane order a host got since the last call
 * moves its flows to that DLID onto the order's SL (Algorithm 2).
 */
static int agents(struct run *r)
{
	int moved = 0;
	for (int i = 0; i < 4; i++) {
		struct emu_subscriber *s = &r->sub[i];
		int n = s->repath + s->unpath;
		for (; r->seen[i] < n && r->seen[i] < EMU_SUB_MAXREC; r->seen[i]++) {
			const struct notice_path *p = &s->rec[r->seen[i]];
			if (p->flags & NPATH_LANE)
				moved += emu_flow_move(r->t, s->guid, p->dlid, p->sl);
		}
	}
	return moved;
}

/* Runs the loop for ms with the agents working; the victim's rate, Gb/s. */
static double run_ms(struct run *r, unsigned ms, int victim)
{
	static const int never = 0;
	for (unsigned el = 0; el < ms; el += 50) {
		emu_run_until(r->base, &never, 50);
		agents(r);
	}
	return emu_flow_rate(r->t, victim) / GBPS;
}

static void exp1(int dftree, double *alone, double *with, double *after,
		 int *orders, int *pr_sl)
{
	struct run r;
	memset(&r, 0, sizeof(r));
	setup(&r, dftree);
	uint32_t h5 = lid(&r, "H5");
	ck_assert_int_eq(emu_flow_set_sink(r.t, port_guid(&r, "H5"), 12.9 * GBPS), 0);
	int v = emu_flow_add(r.t, port_guid(&r, "H2"), lid(&r, "H3"), 12.9 * GBPS, 0);
	ck_assert_int_ge(v, 0);
	*alone = run_ms(&r, 1000, v);
	static const char *const from[] = { "H1", "H3", "H6" };
	for (int i = 0; i < 3; i++)
		ck_assert_int_ge(emu_flow_add(r.t, port_guid(&r, from[i]), h5,
					      12.9 * GBPS, 0), 0);
	*with = run_ms(&r, 300, v);	/* before any round could see it */
	/* two intervals and a round's GMPs */
	*after = run_ms(&r, 2600, v);
	*orders = 0;
	for (int i = 0; i < 4; i++)
		*orders += r.sub[i].repath;
	*pr_sl = lanes_path_sl(&r.sm->sub.lanes, h5, h5, 0);
	teardown(&r);
}

START_TEST(exp1_without)
{
	double alone, with, after;
	int orders, sl;
	exp1(0, &alone, &with, &after, &orders, &sl);
	ck_assert_msg(alone > 12.5, "the victim alone: %.2f Gb/s", alone);
	ck_assert_msg(with < 6, "with the contributors: %.2f Gb/s", with);
	ck_assert_msg(after < 6, "without dFtree the victim stays held back: %.2f Gb/s", after);
	ck_assert_int_eq(orders, 0);
}
END_TEST

START_TEST(exp1_with)
{
	double alone, with, after;
	int orders, sl;
	exp1(1, &alone, &with, &after, &orders, &sl);
	ck_assert_msg(alone > 12.5, "the victim alone: %.2f Gb/s", alone);
	ck_assert_msg(with < 6, "with the contributors: %.2f Gb/s", with);
	ck_assert_msg(after - with >= (alone - with) / 2,
		      "the victim got back %.2f of the %.2f Gb/s it lost (%.2f -> %.2f -> %.2f)",
		      after - with, alone - with, alone, with, after);
	/* the three contributors and the victim, each once */
	ck_assert_int_eq(orders, 4);
	ck_assert_int_eq(sl, 1);
	printf("Exp I (emulated testbed 3a): victim 2-3 %.1f Gb/s alone, %.1f with the "
	       "contributors, %.1f with dFtree (thesis: 12.9, 3, 7.5)\n", alone, with, after);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dftree_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, exp1_without);
	tcase_add_test(tc, exp1_with);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
