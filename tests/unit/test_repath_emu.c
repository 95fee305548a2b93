/*
 * Repath signalling end to end on the emulator: the SM (the daemon's
 * code) configures the tree of emu_testlib.h, whose spine S1 has only 1x
 * links; two plain hosts with the SA client (traps/host/saclient.h), H1
 * behind leaf L0 and H7 behind L2 (the SM is on H0), subscribe with an SA
 * InformInfo Set.  The link L0-S0 fails (trap 128, heavy
 * sweep, repair): the pairs that went over S0 now cross S1 and their
 * rate drops.  What reaches the hosts, per events.signalling mode:
 *   repath-only  one 69 per changed pair the host is an end of, each
 *                with the new record (rate 2.5 Gb/s, the host's LID);
 *   hybrid       one wildcard 69 each;
 *   wildcard     one wildcard 69 each per heavy sweep.
 * The same failure with every link 4x changes nothing a host sees
 * (fault one): nothing in repath-only and hybrid, a wildcard per sweep
 * in wildcard mode.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu.h"
#include "mad/sa.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/base/topo.h"
#include "traps/notice.h"
#include "traps/notify.h"
#include "traps/repath.h"
#include "traps/host/saclient.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "emu_testlib.h"

struct run {
	EMU_RUN;
	struct emu_subscriber h[2];
};

/* Runs the loop for ms, or until the SM is idle when until_idle. */
static void run_for(struct run *r, unsigned ms, int until_idle)
{
	static const int never = 0;
	if (!until_idle)
		emu_run_until(r->base, &never, ms);
	else
		emu_sm_settle(r->base, r->sm, ms);
}

/* S1's links are 1x. */
static void narrow_s1(struct fabric *topo)
{
	uint32_t s1 = fabric_find_node(topo, 0x201);
	for (unsigned p = 1; p <= 4; p++) {
		struct fab_port *a = fabric_portp(topo, s1, p);
		a->width_active = TOPO_WIDTH_1X;
		topo->ports[a->remote].width_active = TOPO_WIDTH_1X;
	}
}

/* narrow: S1's links are 1x.  Returns with both hosts subscribed. */
static void setup(struct run *r, int narrow, enum repath_mode mode)
{
	memset(r, 0, sizeof(*r));
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "repath",
		     .tweak = narrow ? narrow_s1 : NULL, .seed = 11 });
	r->sm = emu_sm_new(r->state, 20);
	r->sm->cfg.events_signalling = mode;
	emu_sm_start(r->sm, r->base, r->e);
	run_for(r, 10000, 1);
	emu_subscribe(r->e, r->base, &r->h[0], emu_host_guid(1));
	emu_subscribe(r->e, r->base, &r->h[1], emu_host_guid(7));
	/* the hosts' IsSM change (trap 144) sweeps too: let it pass */
	run_for(r, 200, 0);
	run_for(r, 10000, 1);
	for (int i = 0; i < 2; i++)
		emu_subscriber_reset(&r->h[i]);
}

/* L0[7]-S0[1] fails; returns the heavy sweeps it caused. */
static uint32_t fail_link(struct run *r)
{
	uint32_t before = r->sm->sweep.heavy_sweeps;
	ck_assert_int_eq(emu_link_down(r->e, 0x100, 7), 0);
	run_for(r, 300, 0);
	run_for(r, 10000, 1);
	run_for(r, 200, 0);	/* Reports on their way, a late second sweep */
	run_for(r, 10000, 1);
	uint32_t n = r->sm->sweep.heavy_sweeps - before;
	ck_assert_uint_ge(n, 1);
	return n;
}

static void teardown(struct run *r)
{
	for (int i = 0; i < 2; i++)
		emu_subscriber_free(&r->h[i]);
	emu_run_stop_sm(&r->run);
	ck_assert_uint_eq(emu_violations(r->e), 0);
	emu_run_free(&r->run);
}

START_TEST(t_repath_only)
{
	struct run r;
	setup(&r, 1, REPATH_ONLY);
	fail_link(&r);
	for (int i = 0; i < 2; i++) {
		struct emu_subscriber *h = &r.h[i];
		ck_assert_int_gt(h->repath, 0);
		ck_assert_int_le(h->repath, EMU_SUB_MAXREC);
		ck_assert_int_eq(h->unpath, 0);
		ck_assert_int_eq(h->other, 0);
		for (int k = 0; k < h->repath; k++) {
			const struct notice_path *p = &h->rec[k];
			ck_assert_int_eq(p->flags & (NPATH_WILDCARD | NPATH_GIDS), NPATH_GIDS);
			ck_assert_int_eq(p->rate, 2);	/* 1x SDR now */
			ck_assert_int_eq(p->mtu, 5);
			ck_assert_int_eq(p->pkey, 0xffff);
			ck_assert(p->slid == h->t.lid || p->dlid == h->t.lid);
			for (int j = 0; j < k; j++)	/* no pair twice */
				ck_assert(h->rec[j].slid != p->slid || h->rec[j].dlid != p->dlid);
		}
	}
	/* H1 <-> H7 itself moved onto S1 one way or the other: both heard of it */
	const struct notify_stats *st = notifier_get_stats(r.sm->notify);
	ck_assert_uint_ge(st->reports_sent, (uint64_t)(r.h[0].repath + r.h[1].repath));
	teardown(&r);
}
END_TEST

START_TEST(t_hybrid)
{
	struct run r;
	setup(&r, 1, REPATH_HYBRID);
	fail_link(&r);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(r.h[i].repath, 1);
		ck_assert_int_eq(r.h[i].rec[0].flags, NPATH_WILDCARD);
		ck_assert_int_eq(r.h[i].unpath + r.h[i].other, 0);
	}
	teardown(&r);
}
END_TEST

START_TEST(t_wildcard)
{
	struct run r;
	setup(&r, 0, REPATH_WILDCARD);
	uint32_t sweeps = fail_link(&r);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(r.h[i].repath, (int)sweeps);
		ck_assert_int_eq(r.h[i].rec[0].flags, NPATH_WILDCARD);
	}
	teardown(&r);
}
END_TEST

/* Fault one: the routes move, nothing a host sees changes: silence. */
START_TEST(t_fault_one)
{
	enum repath_mode modes[] = { REPATH_HYBRID, REPATH_ONLY, REPATH_HYBRID_AFFECTED };
	for (int m = 0; m < 3; m++) {
		struct run r;
		setup(&r, 0, modes[m]);
		fail_link(&r);
		for (int i = 0; i < 2; i++)
			ck_assert_int_eq(r.h[i].repath + r.h[i].unpath + r.h[i].other, 0);
		teardown(&r);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("repath_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, t_repath_only);
	tcase_add_test(tc, t_hybrid);
	tcase_add_test(tc, t_wildcard);
	tcase_add_test(tc, t_fault_one);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	srunner_run_all(r, CK_NORMAL);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
