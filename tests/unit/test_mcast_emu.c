/*
 * Multicast trees written by the SM on the in-process emulator: groups made
 * and joined through sm/model/mcgroups.h as the SA does, the MFTs read back
 * from the emulated switches (emu_mft_entry) and judged by the multicast
 * verifier (routing/verify/verify_mcast.h) against the fabric the test
 * parsed, never against the SM's trees.  The tree of emu_testlib.h: leaves
 * L0..L3 (GUIDs 0x100..0x103; ports 1-3 hosts, 7 to S0, 8 to S1), spines S0,
 * S1 (0x200, 0x201; port l + 1 to leaf l).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mad/emu/emu.h"
#include "mad/sa.h"
#include "routing/mctree.h"
#include "routing/verify/verify_mcast.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/mcast/ipoib.h"
#include "sm/mcast/mcast_sm.h"
#include "sm/write/program.h"

#include "emu_testlib.h"

struct run {
	struct emu_run w;
	struct mc_group *g;
};

/* top_cap: every switch advertises HasMulticastFDBTop */
static void setup(struct run *r, int top_cap)
{
	struct emu_run *w = &r->w;
	memset(r, 0, sizeof(*r));
	emu_run_open(w, &(struct emu_world_opts){ .name = "mcemu", .seed = 5 });
	for (uint32_t i = 0; top_cap && i < w->topo.n_nodes; i++)
		if (w->topo.nodes[i].type == FAB_SWITCH)
			ck_assert_int_eq(emu_set_mft_top_cap(w->e, w->topo.nodes[i].guid), 0);
	w->sm = emu_sm_new(w->state, 20);
	/* no IPoIB broadcast group: the test's groups alone, from 0xC000 */
	w->sm->cfg.mc_default_ipoib = 0;
	mcast_ipoib_sync(w->sm, 0);
	emu_sm_start(w->sm, w->base, w->e);
}

static int settled(const void *arg)
{
	const struct emu_sweeps *w = arg;
	return emu_sweeps_done(w) && !mcast_sm_pending(w->sm);
}

/* Until n heavy sweeps are done and no MFT write is due or going. */
static void run_settled(struct run *r, uint32_t n)
{
	struct emu_sweeps w = { r->w.sm, n };
	ck_assert_msg(emu_run_while(r->w.base, settled, &w, 10000),
		      "not settled: %u heavy sweeps, waiting for %u",
		      r->w.sm->sweep.heavy_sweeps, n);
}

static uint64_t mft_sets(const struct run *r)
{
	struct emu_counters c;
	emu_get_counters(r->w.e, &c);
	return c.mft_sets;
}

static void make_group(struct run *r)
{
	struct mc_group want = { .qkey = 0x0b1b, .pkey = 0xffff, .mtu = 4,
				 .rate = 3, .scope = 2 };
	const char *err = NULL;
	mc_ipoib_mgid(0xffff, want.mgid);
	r->g = mc_create(&r->w.sm->mc, &want, &err);
	ck_assert_ptr_nonnull(r->g);
	ck_assert_uint_eq(r->g->mlid, MC_MLID_BASE);
}

static void join(struct run *r, int h)
{
	ck_assert_int_eq(mc_join(&r->w.sm->mc, r->g, emu_host_guid(h),
				 MC_JOIN_FULL, 0), 1);
}

/* The emulated switches' entries of the group's MLID, by row of t. */
static void read_masks(struct run *r, const struct lft_tables *t, uint64_t *mask)
{
	memset(mask, 0, (size_t)t->n_sw * MCAST_MASK_WORDS * sizeof(*mask));
	for (uint32_t row = 0; row < t->n_sw; row++) {
		uint64_t guid = r->w.topo.nodes[t->sw_node[row]].guid;
		ck_assert_int_eq(emu_mft_entry(r->w.e, guid, r->g->mlid,
					       &mask[row * MCAST_MASK_WORDS]), 0);
	}
}

/* The entry a switch holds for the group (ports 0..63). */
static uint64_t entry_of(struct run *r, uint64_t sw)
{
	uint64_t m;
	ck_assert_int_eq(emu_mft_entry(r->w.e, sw, r->g->mlid, &m), 0);
	return m;
}

/*
 * The devices' trees judged on the test's own model of the fabric
 * (topo, links taken down marked so), members hosts[0..n).
 */
static void judge(struct run *r, const int *hosts, int n)
{
	struct lft_tables t;
	char why[256];
	uint32_t ports[12];
	ck_assert_int_eq(lft_tables_alloc(&t, &r->w.topo), 0);
	uint64_t *mask = calloc((size_t)t.n_sw * MCAST_MASK_WORDS, sizeof(*mask));
	ck_assert_ptr_nonnull(mask);
	for (int i = 0; i < n; i++)
		ports[i] = fabric_port(&r->w.topo, fabric_find_node(&r->w.topo,
					emu_host_guid(hosts[i]) - 1), 1);
	read_masks(r, &t, mask);
	ck_assert_msg(mcast_verify(&r->w.topo, &t, ports, (uint32_t)n, mask, why,
				   sizeof(why)) == 0, "%s", why);
	free(mask);
	lft_tables_free(&t);
}

/* The test's model loses the link of switch sw's port too. */
static void model_link_down(struct run *r, uint64_t sw, int port)
{
	uint32_t pi = fabric_port(&r->w.topo, fabric_find_node(&r->w.topo, sw), (unsigned)port);
	r->w.topo.ports[pi].phys_state = 2;
	r->w.topo.ports[r->w.topo.ports[pi].remote].phys_state = 2;
}

START_TEST(join_leave_relink)
{
	struct run r;
	setup(&r, 0);
	run_settled(&r, 1);
	uint64_t sets0 = mft_sets(&r);
	ck_assert_uint_eq(r.w.sm->sweep.last.prog.mft_sets, 0);	/* no group yet */

	/* H0 (L0), H3 (L1), H6 (L2): S0 is 1 hop from each, the lowest GUID */
	make_group(&r);
	join(&r, 0);
	join(&r, 3);
	join(&r, 6);
	mcast_sm_changed(r.w.sm);
	mcast_sm_changed(r.w.sm);		/* coalesced with the first */
	run_settled(&r, 1);
	int three[] = { 0, 3, 6 };
	judge(&r, three, 3);
	ck_assert_uint_eq(entry_of(&r, 0x100), 1u << 1 | 1u << 7);
	ck_assert_uint_eq(entry_of(&r, 0x200), 1u << 1 | 1u << 2 | 1u << 3);
	ck_assert_uint_eq(entry_of(&r, 0x201), 0);
	ck_assert_uint_eq(entry_of(&r, 0x103), 0);
	/* the tree's four switches (one position, one block each); L3 and
	 * S1, off the tree, are left as they are until a heavy sweep */
	ck_assert_uint_eq(mft_sets(&r) - sets0, 4);
	ck_assert_uint_eq(mcast_sm_last(r.w.sm)->mft_sets, 4);

	/* H6 leaves: L2 is cleared, S0 stops sending to it */
	uint64_t sets1 = mft_sets(&r);
	ck_assert_int_eq(mc_leave(&r.w.sm->mc, r.g, emu_host_guid(6), MC_JOIN_FULL), 1);
	mcast_sm_changed(r.w.sm);
	run_settled(&r, 1);
	int two[] = { 0, 3 };
	judge(&r, two, 2);
	ck_assert_uint_eq(entry_of(&r, 0x102), 0);
	ck_assert_uint_eq(entry_of(&r, 0x200), 1u << 1 | 1u << 2);
	ck_assert_uint_eq(mft_sets(&r) - sets1, 2);

	/*
	 * a heavy sweep of an unchanged fabric: L3 and S1, which the joins
	 * left alone, get their block's zeros once; the next writes nothing
	 */
	uint64_t sets2 = mft_sets(&r);
	sweeper_request_heavy(r.w.sm, "test");
	run_settled(&r, 2);
	ck_assert_uint_eq(mft_sets(&r) - sets2, 2);
	sets2 = mft_sets(&r);
	sweeper_request_heavy(r.w.sm, "test");
	run_settled(&r, 3);
	ck_assert_uint_eq(mft_sets(&r) - sets2, 0);
	ck_assert_uint_eq(r.w.sm->sweep.last.prog.mft_sets, 0);

	/* L0[7]-S0 goes: the tree moves to S1 (L0, L1 up-ports; S0 off, S1 on) */
	uint64_t sets3 = mft_sets(&r);
	uint32_t sweeps = r.w.sm->sweep.heavy_sweeps;
	ck_assert_int_eq(emu_link_down(r.w.e, 0x100, 7), 0);
	model_link_down(&r, 0x100, 7);
	sweeper_request_heavy(r.w.sm, "test: link down");
	run_settled(&r, sweeps + 1);
	judge(&r, two, 2);
	ck_assert_uint_eq(entry_of(&r, 0x100), 1u << 1 | 1u << 8);
	ck_assert_uint_eq(entry_of(&r, 0x101), 1u << 1 | 1u << 8);
	ck_assert_uint_eq(entry_of(&r, 0x200), 0);
	ck_assert_uint_eq(entry_of(&r, 0x201), 1u << 1 | 1u << 2);
	ck_assert_uint_eq(mft_sets(&r) - sets3, 4);
	ck_assert_uint_eq(emu_violations(r.w.e), 0);
	/* --verify's multicast section over the SM's own trees */
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(mcast_sm_verify(r.w.sm, fp), 0);
	fclose(fp);
	ck_assert_str_eq(text, "multicast: 1 groups checked, 0 wrong\n");
	free(text);
	emu_run_free(&r.w);
}
END_TEST

/* Every switch's MulticastFDBTop is top. */
static void all_tops(struct run *r, int top)
{
	for (uint32_t i = 0; i < r->w.topo.n_nodes; i++)
		if (r->w.topo.nodes[i].type == FAB_SWITCH)
			ck_assert_int_eq(emu_mft_top(r->w.e, r->w.topo.nodes[i].guid), top);
}

START_TEST(mft_top_where_advertised)
{
	struct run r;
	setup(&r, 1);
	run_settled(&r, 1);
	all_tops(&r, 0xbfff);	/* no group: no entry valid */
	make_group(&r);
	join(&r, 0);
	join(&r, 3);
	mcast_sm_changed(r.w.sm);
	run_settled(&r, 1);
	all_tops(&r, 0xc01f);	/* the first block */
	ck_assert_uint_eq(mcast_sm_last(r.w.sm)->switchinfo_sets, 6);
	int two[] = { 0, 3 };
	judge(&r, two, 2);
	/*
	 * a heavy sweep with nothing changed: no SwitchInfo; the group's
	 * block on the three switches off its tree, not known to hold
	 * nothing, cleared once (what an earlier SM left there goes); the next
	 * heavy sweep writes no MFT
	 */
	sweeper_request_heavy(r.w.sm, "test");
	run_settled(&r, 2);
	ck_assert_uint_eq(r.w.sm->sweep.last.prog.switchinfo_sets, 0);
	ck_assert_uint_eq(r.w.sm->sweep.last.prog.mft_sets, 6 - 3);	/* off the tree */
	sweeper_request_heavy(r.w.sm, "test");
	run_settled(&r, 3);
	ck_assert_uint_eq(r.w.sm->sweep.last.prog.switchinfo_sets, 0);
	ck_assert_uint_eq(r.w.sm->sweep.last.prog.mft_sets, 0);
	/* the group goes: entries cleared, the tops back */
	mc_delete(&r.w.sm->mc, r.g);
	r.g = NULL;
	mcast_sm_changed(r.w.sm);
	run_settled(&r, 2);
	all_tops(&r, 0xbfff);
	uint64_t m;
	ck_assert_int_eq(emu_mft_entry(r.w.e, 0x100, 0xc000, &m), 0);
	ck_assert_uint_eq(m, 0);
	ck_assert_uint_eq(emu_violations(r.w.e), 0);
	emu_run_free(&r.w);
}
END_TEST

/*
 * A small join storm: hosts H1..H11 (H0 is the SM's) each send, from its
 * own port and all at once, the MCMemberRecord Sets of 3 groups
 * (ff12:e001::1..3, made by the first join of each).
 */
#define STORM_HOSTS 11
#define STORM_GROUPS 3

struct storm {
	struct run *r;
	uint64_t mft0;		/* the emulator's MFT Sets before */
	uint64_t mft_at_last;	/* ... when the last join was answered */
	int answered, failed;
};

static void storm_mgid(int gi, uint8_t mgid[16])
{
	/* not IPoIB's 401b/601b: those want the partition's broadcast group */
	static const uint8_t base[16] = { 0xff, 0x12, 0xe0, 0x01 };
	memcpy(mgid, base, 16);
	sa_put32(mgid + 12, (uint32_t)gi + 1);
}

static void on_join(void *arg, int status, const uint8_t *recs, size_t n,
		    size_t stride, const uint8_t *hdr)
{
	struct storm *s = arg;
	(void)recs;
	(void)stride;
	(void)hdr;
	s->failed += status || n != 1;
	if (++s->answered == STORM_HOSTS * STORM_GROUPS)
		s->mft_at_last = mft_sets(s->r);
}

static int storm_answered(const void *arg)
{
	return ((const struct storm *)arg)->answered == STORM_HOSTS * STORM_GROUPS;
}

/* The SM's runs and trees computed so far. */
static void runs_trees(const struct sm *sm, uint32_t *runs, uint64_t *trees)
{
	const struct mcast_sm_stats *st = mcast_sm_stats(sm);
	*runs = st ? st->runs : 0;
	*trees = st ? st->trees_computed : 0;
}

/* Every storm group's tree on the devices, members hosts[0..n). */
static void judge_storm(struct run *r, const int *hosts, int n)
{
	for (int gi = 0; gi < STORM_GROUPS; gi++) {
		uint8_t mgid[16];
		storm_mgid(gi, mgid);
		r->g = mc_find_mgid(&r->w.sm->mc, mgid);
		ck_assert_ptr_nonnull(r->g);
		judge(r, hosts, n);
	}
}

START_TEST(join_storm)
{
	struct run r;
	struct emu_sahost h[STORM_HOSTS];
	struct saclient_params p = { .timeout_ms = 2000, .max_inflight = 16 };
	setup(&r, 0);
	run_settled(&r, 1);
	struct emu_net n = { .e = r.w.e, .base = r.w.base };
	emu_sahosts_attach(&n, h, 1, STORM_HOSTS, &p);
	run_settled(&r, 1);
	uint32_t runs0, runs1, runs2;
	uint64_t trees0, trees1, trees2;
	runs_trees(r.w.sm, &runs0, &trees0);
	struct storm s = { .r = &r, .mft0 = mft_sets(&r) };
	for (int i = 0; i < STORM_HOSTS; i++)
		for (int gi = 0; gi < STORM_GROUPS; gi++) {
			uint8_t rec[52] = { 0 };
			storm_mgid(gi, rec);
			saclient_port_gid(h[i].c, rec + 16);
			sa_put32(rec + 32, 0x0b1b);	/* Q_Key */
			sa_put16(rec + 40, 0xffff);	/* P_Key */
			rec[48] = 1;			/* FullMember */
			/* MGID, PortGID, Q_Key, TClass, P_Key, SL, FlowLabel, JoinState */
			uint64_t cm = 1 | 1 << 1 | 1 << 2 | 1 << 6 | 1 << 7 | 1 << 12 |
				      1 << 13 | 1 << 16;
			ck_assert_int_eq(saclient_query(h[i].c, SA_METHOD_SET,
							SA_ATTR_MCMEMBER_REC, 0, cm, rec,
							sizeof(rec), on_join, &s), 0);
		}
	ck_assert(emu_run_while(r.w.base, storm_answered, &s, 5000));
	ck_assert_int_eq(s.failed, 0);
	/* answered at once: no MFT block written before the last answer */
	ck_assert_uint_eq(s.mft_at_last, s.mft0);
	ck_assert(mcast_sm_pending(r.w.sm));
	run_settled(&r, 1);
	/* one coalesced run, one tree per group, the writes done */
	runs_trees(r.w.sm, &runs1, &trees1);
	ck_assert_uint_eq(runs1 - runs0, 1);
	ck_assert_uint_eq(trees1 - trees0, STORM_GROUPS);
	ck_assert_uint_gt(mft_sets(&r), s.mft0);
	int all[STORM_HOSTS];
	for (int i = 0; i < STORM_HOSTS; i++)
		all[i] = i + 1;
	judge_storm(&r, all, STORM_HOSTS);

	/* H1 leaves the second group: that tree alone is computed again */
	uint8_t mgid[16];
	storm_mgid(1, mgid);
	r.g = mc_find_mgid(&r.w.sm->mc, mgid);
	ck_assert_int_eq(mc_leave(&r.w.sm->mc, r.g, emu_host_guid(1), MC_JOIN_FULL), 1);
	mcast_sm_changed(r.w.sm);
	run_settled(&r, 1);
	runs_trees(r.w.sm, &runs2, &trees2);
	ck_assert_uint_eq(runs2 - runs1, 1);
	ck_assert_uint_eq(trees2 - trees1, 1);
	judge(&r, all + 1, STORM_HOSTS - 1);
	ck_assert_uint_eq(entry_of(&r, 0x100) >> 2 & 1, 0);	/* H1: L0 port 2 */

	/* after a heavy sweep (a new model) the next run computes them all */
	sweeper_request_heavy(r.w.sm, "test");
	run_settled(&r, 2);
	ck_assert_int_eq(mc_leave(&r.w.sm->mc, r.g, emu_host_guid(2), MC_JOIN_FULL), 1);
	mcast_sm_changed(r.w.sm);
	run_settled(&r, 2);
	runs_trees(r.w.sm, &runs1, &trees1);
	ck_assert_uint_eq(trees1 - trees2, STORM_GROUPS);
	judge(&r, all + 2, STORM_HOSTS - 2);

	/*
	 * every group goes between sweeps, after a run that planned every
	 * group (the runs skip blocks with no group and no kept tree): their
	 * block has no group left, and its entries are cleared on every
	 * switch that held them
	 */
	uint16_t gone = r.g->mlid;
	static const uint64_t sws[] = { 0x100, 0x101, 0x102, 0x103, 0x200, 0x201 };
	uint64_t m;
	int held = 0;
	for (size_t i = 0; i < sizeof(sws) / sizeof(sws[0]); i++) {
		ck_assert_int_eq(emu_mft_entry(r.w.e, sws[i], gone, &m), 0);
		held += m != 0;
	}
	ck_assert_int_gt(held, 0);
	while (r.w.sm->mc.n)
		mc_delete(&r.w.sm->mc, r.w.sm->mc.g[0]);
	r.g = NULL;
	mcast_sm_changed(r.w.sm);
	run_settled(&r, 2);
	for (size_t i = 0; i < sizeof(sws) / sizeof(sws[0]); i++) {
		ck_assert_int_eq(emu_mft_entry(r.w.e, sws[i], gone, &m), 0);
		ck_assert_msg(m == 0, "switch 0x%llx still sends MLID 0x%x to 0x%llx",
			      (unsigned long long)sws[i], gone, (unsigned long long)m);
	}
	ck_assert_uint_eq(emu_violations(r.w.e), 0);
	emu_sahosts_detach(h, STORM_HOSTS);
	emu_run_free(&r.w);
}
END_TEST

/* a change every 2 ms while left > 0 (a stream of joins that never pauses) */
struct stream {
	struct sm *sm;
	struct event *ev;
	int left;
};

static void stream_tick(evutil_socket_t fd, short what, void *arg)
{
	struct stream *st = arg;
	struct timeval tv = { 0, 2000 };
	(void)fd;
	(void)what;
	mcast_sm_changed(st->sm);
	if (--st->left > 0)
		event_add(st->ev, &tv);
}

static int stream_over(const void *arg)
{
	return ((const struct stream *)arg)->left <= 0;
}

/*
 * Runs are coalesced: one change runs a few ms later; a stream of
 * changes that never pauses runs every 100 ms or so (not at every
 * change, not only once it ends), and once it ends, one last run.
 */
START_TEST(runs_coalesced_and_capped)
{
	struct run r;
	uint32_t runs0, runs1, runs2, runs3;
	uint64_t trees;
	setup(&r, 0);
	run_settled(&r, 1);
	make_group(&r);
	join(&r, 0);
	runs_trees(r.w.sm, &runs0, &trees);
	mcast_sm_changed(r.w.sm);
	emu_run_while(r.w.base, emu_never, NULL, 60);
	runs_trees(r.w.sm, &runs1, &trees);
	ck_assert_uint_eq(runs1 - runs0, 1);	/* a pause: at once */
	struct stream st = { .sm = r.w.sm, .left = 150 };	/* ~300 ms */
	st.ev = evtimer_new(r.w.base, stream_tick, &st);
	ck_assert_ptr_nonnull(st.ev);
	struct timeval zero = { 0, 0 };
	struct timespec a, b;
	event_add(st.ev, &zero);
	clock_gettime(CLOCK_MONOTONIC, &a);
	ck_assert(emu_run_while(r.w.base, stream_over, &st, 5000));
	clock_gettime(CLOCK_MONOTONIC, &b);
	runs_trees(r.w.sm, &runs2, &trees);
	/* one run per 100 ms cap, whatever a loaded machine made of 2 ms ticks
	 * (not one per change, nor none until the end) */
	long ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	ck_assert_msg(ms >= 250 && runs2 - runs1 >= 1 &&
		      runs2 - runs1 <= (uint32_t)(ms / 100 + 1),
		      "%u runs during a stream of 150 changes over %ld ms", runs2 - runs1, ms);
	emu_run_while(r.w.base, emu_never, NULL, 150);
	runs_trees(r.w.sm, &runs3, &trees);
	ck_assert_uint_eq(runs3 - runs2, 1);	/* the stream's end */
	event_free(st.ev);
	emu_run_free(&r.w);
}
END_TEST

static Suite *mcast_emu_suite(void)
{
	Suite *s = suite_create("mcast_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, join_leave_relink);
	tcase_add_test(tc, runs_coalesced_and_capped);
	tcase_add_test(tc, mft_top_where_advertised);
	tcase_add_test(tc, join_storm);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(mcast_emu_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
