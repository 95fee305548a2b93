/*
 * Notices 64/65 end to end on the emulator: the SM (the daemon's code)
 * configures the tree; a host attached to a CA port as a plain host
 * (IsSM off) subscribes with an SA InformInfo Set; another host's link
 * goes down (the switch's trap 128 starts the heavy sweep) and the
 * listener gets a Report of notice 65 with that port's GID, answers it,
 * and gets 64 when the link comes back.  Then a restart of the SM with
 * the same state directory: the subscription is still there.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu.h"
#include "mad/sa.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/mcast/mcast_sm.h"
#include "sm/base/topo.h"
#include "traps/notice.h"
#include "traps/notify.h"

#include "emu_testlib.h"

#define PREFIX 0xfe80000000000000ULL

/* A plain host on a CA port: what it got. */
struct host {
	struct mad_transport t;
	uint64_t guid;
	int set_answers, set_status;
	uint8_t set_echo[36];
	int reports;
	uint16_t traps[16];
	uint8_t gids[16][16];
	int answer_reports;	/* send ReportResp */
	int iir_answers, iir_status;
	size_t iir_len;
	uint8_t iir[MAD_SIZE];
};

static void host_recv(void *arg, const uint8_t *mad, size_t len,
		      const struct mad_addr *from, int status)
{
	struct host *h = arg;
	if (status || len < SA_HDR_SIZE || mad[1] != SA_CLASS)
		return;
	if (mad_method(mad) == SA_METHOD_GET_RESP &&
	    mad_attr_id(mad) == SA_ATTR_INFORM_INFO) {
		h->set_answers++;
		h->set_status = mad_status(mad);
		memcpy(h->set_echo, sa_data(mad), 36);
		return;
	}
	if (mad_method(mad) == SA_METHOD_GET_TABLE_RESP &&
	    mad_attr_id(mad) == SA_ATTR_INFORM_INFO_REC) {
		h->iir_answers++;
		h->iir_status = mad_status(mad);
		h->iir_len = len;
		memcpy(h->iir, mad, len);
		return;
	}
	if (mad_method(mad) != SA_METHOD_REPORT || mad_attr_id(mad) != SA_ATTR_NOTICE ||
	    len < SA_HDR_SIZE + NOTICE_SIZE)
		return;
	struct notice nt;
	notice_decode(sa_data(mad), &nt);
	if (h->reports < 16) {
		h->traps[h->reports] = nt.trap;
		notice_get_gid(&nt, h->gids[h->reports]);
	}
	h->reports++;
	if (!h->answer_reports)
		return;
	uint8_t resp[MAD_SIZE];
	memcpy(resp, mad, MAD_SIZE);
	resp[3] = SA_METHOD_REPORT_RESP;
	struct mad_addr to = *from;
	to.qpn = 1;
	to.qkey = 0x80010000;
	ck_assert_int_eq(mad_transport_send(&h->t, resp, MAD_SIZE, &to), 0);
}

struct run {
	EMU_RUN;
	void (*policy)(struct config *);	/* NULL: the defaults */
};

static void start_sm(struct run *r)
{
	r->sm = emu_sm_new(r->state, 20);
	if (r->policy)
		r->policy(&r->sm->cfg);
	emu_sm_start(r->sm, r->base, r->e);
}

static void setup_policy(struct run *r, void (*policy)(struct config *))
{
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "notemu", .seed = 7,
		     .debug_env = "NOTIFY_DEBUG", .debug_level = LOG_INFO });
	r->policy = policy;
	start_sm(r);
}

static void setup(struct run *r)
{
	setup_policy(r, NULL);
}

struct wait {
	struct run *r;
	int (*done)(struct run *, void *);
	void *arg;
	int ticks, timed_out;
};

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct wait *w = arg;
	if (w->done(w->r, w->arg))
		event_base_loopbreak(w->r->base);
	else if (++w->ticks > 5000) {	/* 10 s */
		w->timed_out = 1;
		event_base_loopbreak(w->r->base);
	}
}

static void run_until(struct run *r, int (*done)(struct run *, void *),
		      void *arg, const char *what)
{
	struct wait w = { .r = r, .done = done, .arg = arg };
	struct timeval two_ms = { 0, 2000 };
	struct event *ev = event_new(r->base, -1, EV_PERSIST, on_tick, &w);
	ck_assert_ptr_nonnull(ev);
	event_add(ev, &two_ms);
	ck_assert_int_eq(event_base_dispatch(r->base), 0);
	event_free(ev);
	ck_assert_msg(!w.timed_out, "timed out waiting for %s", what);
}

static int reports_in(struct run *r, void *arg)
{
	(void)r;
	struct host *h = arg;
	return h->reports >= h->answer_reports;	/* answer_reports doubles as the goal */
}

/* A counter of answers is no longer 0. */
static int answered(struct run *r, void *arg)
{
	(void)r;
	return *(const int *)arg > 0;
}

static int report_sent(struct run *r, void *arg)
{
	(void)arg;
	return notifier_get_stats(r->sm->notify)->reports_sent > 0;
}

static int no_subscriptions(struct run *r, void *arg)
{
	(void)arg;
	return notifier_count(r->sm->notify) == 0;
}

/* Host H<h> (port GUID: its node GUID + 1), attached as a plain host. */
static void host_attach(struct run *r, struct host *h, int idx)
{
	char err[256] = "";
	memset(h, 0, sizeof(*h));
	h->guid = 0x1000 + 4 * (uint64_t)idx + 1;
	ck_assert_msg(emu_attach(r->e, r->base, h->guid, &h->t, host_recv, h,
				 err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(emu_set_issm(r->e, h->guid, 0), 0);
}

/* Subscribes to every generic notice with an SA InformInfo Set. */
static void host_subscribe(struct run *r, struct host *h)
{
	uint8_t ii[36], mad[MAD_SIZE];
	ck_assert_int_eq(emu_transport_refresh(&h->t), 0);
	ck_assert_uint_gt(h->t.lid, 0);
	ck_assert_uint_gt(h->t.sm_lid, 0);
	memset(ii, 0, sizeof(ii));
	sa_put16(ii + 16, 0xffff);	/* LIDRangeBegin: all */
	ii[22] = 1;			/* IsGeneric */
	ii[23] = 1;			/* Subscribe */
	sa_put16(ii + 24, 0xffff);	/* Type */
	sa_put16(ii + 26, 0xffff);	/* TrapNumber */
	sa_put32(ii + 28, 1u << 8 | 18);	/* QPN 1, RespTimeValue 18 (1 s) */
	ii[33] = ii[34] = ii[35] = 0xff;	/* ProducerType */
	sa_init_request(mad, SA_METHOD_SET, 0x1234, SA_ATTR_INFORM_INFO, 0, 0,
			ii, sizeof(ii));
	struct mad_addr to = { .lid = h->t.sm_lid, .qpn = 1, .qkey = 0x80010000 };
	h->set_answers = 0;
	ck_assert_int_eq(mad_transport_send(&h->t, mad, MAD_SIZE, &to), 0);
	run_until(r, answered, &h->set_answers, "the InformInfo Set's answer");
	ck_assert_int_eq(h->set_status, 0);
	ck_assert_mem_eq(h->set_echo, ii, 36);
}

/* InformInfoRecord GetTable, by SubscriberGID when gid_guid is not 0: the records. */
static int host_list(struct run *r, struct host *h, uint64_t gid_guid)
{
	uint8_t rec[64], mad[MAD_SIZE];
	memset(rec, 0, sizeof(rec));
	sa_put64(rec, PREFIX);
	sa_put64(rec + 8, gid_guid);
	sa_init_request(mad, SA_METHOD_GET_TABLE, 0x4321, SA_ATTR_INFORM_INFO_REC,
			0, gid_guid ? 1 : 0, rec, sizeof(rec));
	struct mad_addr to = { .lid = h->t.sm_lid, .qpn = 1, .qkey = 0x80010000 };
	h->iir_answers = 0;
	ck_assert_int_eq(mad_transport_send(&h->t, mad, MAD_SIZE, &to), 0);
	run_until(r, answered, &h->iir_answers, "the InformInfoRecord answer");
	ck_assert_int_eq(h->iir_status, 0);
	ck_assert_uint_ge(h->iir_len, SA_HDR_SIZE);
	size_t n = (h->iir_len - SA_HDR_SIZE) / 64;
	ck_assert_uint_eq(h->iir_len, SA_HDR_SIZE + n * 64);
	for (size_t k = 0; k < n; k++) {
		const uint8_t *x = h->iir + SA_HDR_SIZE + 64 * k;
		if (gid_guid)
			ck_assert_uint_eq(sa_get64(x + 8), gid_guid);
		ck_assert_int_eq(x[24 + 23], 1);		/* Subscribe */
		ck_assert_uint_eq(sa_get32(x + 24 + 28) >> 8, 0);	/* QPN hidden */
	}
	return (int)n;
}

static void want_gid_report(const struct host *h, int k, uint16_t trap,
			    uint64_t port_guid)
{
	uint8_t gid[16];
	sa_put64(gid, PREFIX);
	sa_put64(gid + 8, port_guid);
	ck_assert_int_eq(h->traps[k], trap);
	ck_assert_mem_eq(h->gids[k], gid, 16);
}

START_TEST(t_gid_out_and_in_of_service)
{
	struct run r;
	struct host h1, h2;
	setup(&r);
	emu_run_sweeps(&r.run, 1);
	host_attach(&r, &h1, 1);
	host_attach(&r, &h2, 7);
	host_subscribe(&r, &h1);
	host_subscribe(&r, &h2);
	host_subscribe(&r, &h1);	/* the same again: one subscription */
	ck_assert_uint_eq(notifier_count(r.sm->notify), 2);
	ck_assert_int_eq(host_list(&r, &h2, 0), 2);
	ck_assert_int_eq(host_list(&r, &h2, h1.guid), 1);
	h1.answer_reports = 1;
	h2.answer_reports = 1;

	/* H5's cable (leaf L1 port 3) is pulled: trap 128, sweep, 65 */
	ck_assert_int_eq(emu_link_down(r.e, 0x101, 3), 0);
	run_until(&r, reports_in, &h1, "notice 65 at H1");
	run_until(&r, reports_in, &h2, "notice 65 at H7");
	want_gid_report(&h1, 0, TRAP_GID_OUT_OF_SERVICE, 0x1000 + 4 * 5 + 1);
	want_gid_report(&h2, 0, TRAP_GID_OUT_OF_SERVICE, 0x1000 + 4 * 5 + 1);
	emu_run_sweeps(&r.run, 2);

	/* plugged back: 64 once it is active */
	h1.answer_reports = 2;
	h2.answer_reports = 2;
	ck_assert_int_eq(emu_link_up(r.e, 0x101, 3), 0);
	run_until(&r, reports_in, &h1, "notice 64 at H1");
	run_until(&r, reports_in, &h2, "notice 64 at H7");
	want_gid_report(&h1, 1, TRAP_GID_IN_SERVICE, 0x1000 + 4 * 5 + 1);
	want_gid_report(&h2, 1, TRAP_GID_IN_SERVICE, 0x1000 + 4 * 5 + 1);
	emu_run_sweeps(&r.run, 3);
	ck_assert_int_eq(emu_port_state(r.e, 0x101, 3), PORT_ACTIVE);
	/* every Report answered at once: none sent twice, none lost */
	const struct notify_stats *st = notifier_get_stats(r.sm->notify);
	ck_assert_uint_eq(st->reports_sent, 4);
	ck_assert_uint_eq(st->report_resps, 4);
	ck_assert_uint_eq(st->reports_resent, 0);
	ck_assert_int_eq(h1.reports, 2);
	ck_assert_int_eq(h2.reports, 2);

	/* the SM restarts on the same state directory: still subscribed */
	emu_run_stop_sm(&r.run);
	start_sm(&r);
	emu_run_sweeps(&r.run, 1);
	ck_assert_uint_eq(notifier_count(r.sm->notify), 2);
	h1.answer_reports = 3;
	ck_assert_int_eq(emu_link_down(r.e, 0x101, 3), 0);
	run_until(&r, reports_in, &h1, "notice 65 at H1 after the restart");
	want_gid_report(&h1, 2, TRAP_GID_OUT_OF_SERVICE, 0x1000 + 4 * 5 + 1);
	ck_assert_uint_eq(emu_violations(r.e), 0);
	h1.t.close(h1.t.ctx);
	h2.t.close(h2.t.ctx);
	emu_run_free(&r.run);
}
END_TEST

/*
 * The 65 goes out on the switch's trap, before the heavy sweep is done; a
 * cable plugged back at once gets its 64, and neither is sent twice.
 */
START_TEST(t_early_out_of_service_and_back)
{
	struct run r;
	struct host h1;
	setup(&r);
	emu_run_sweeps(&r.run, 1);
	host_attach(&r, &h1, 1);
	host_subscribe(&r, &h1);
	h1.answer_reports = 1;
	/* 1 ms a packet: a sweep takes many round trips, the early 65 three */
	emu_set_latency(r.e, 1000, 0);
	uint32_t before = r.sm->sweep.heavy_sweeps;
	ck_assert_int_eq(emu_link_down(r.e, 0x101, 3), 0);
	run_until(&r, report_sent, NULL, "the Report of notice 65");
	/* sent on the trap: the heavy sweep it asked for has not finished */
	ck_assert_uint_eq(r.sm->sweep.heavy_sweeps, before);
	run_until(&r, reports_in, &h1, "notice 65 at H1");
	want_gid_report(&h1, 0, TRAP_GID_OUT_OF_SERVICE, 0x1000 + 4 * 5 + 1);
	ck_assert_int_eq(emu_link_up(r.e, 0x101, 3), 0);
	h1.answer_reports = 2;
	run_until(&r, reports_in, &h1, "notice 64 at H1");
	want_gid_report(&h1, 1, TRAP_GID_IN_SERVICE, 0x1000 + 4 * 5 + 1);
	emu_run_sweeps(&r.run, before + 1);	/* one or two, as the traps fell */
	ck_assert_int_eq(emu_port_state(r.e, 0x101, 3), PORT_ACTIVE);
	ck_assert_int_eq(h1.reports, 2);
	ck_assert_uint_eq(notifier_get_stats(r.sm->notify)->reports_sent, 2);
	ck_assert_uint_eq(emu_violations(r.e), 0);
	h1.t.close(h1.t.ctx);
	emu_run_free(&r.run);
}
END_TEST

/* A listener that never answers is dropped after max_report_failures. */
START_TEST(t_silent_listener_dropped)
{
	struct run r;
	struct host h1;
	setup(&r);
	emu_run_sweeps(&r.run, 1);
	host_attach(&r, &h1, 1);
	host_subscribe(&r, &h1);
	ck_assert_uint_eq(notifier_count(r.sm->notify), 1);
	/* its RespTimeValue (1 s) is long: a shorter one, to keep the test short */
	uint8_t ii[36], mad[MAD_SIZE];
	memcpy(ii, h1.set_echo, 36);
	ii[31] = (uint8_t)((ii[31] & ~0x1f) | 10);	/* 4 ms: the floor, 20 ms */
	sa_init_request(mad, SA_METHOD_SET, 0x1235, SA_ATTR_INFORM_INFO, 0, 0,
			ii, sizeof(ii));
	struct mad_addr to = { .lid = h1.t.sm_lid, .qpn = 1, .qkey = 0x80010000 };
	h1.set_answers = 0;
	ck_assert_int_eq(mad_transport_send(&h1.t, mad, MAD_SIZE, &to), 0);
	run_until(&r, answered, &h1.set_answers, "the second Set's answer");
	ck_assert_uint_eq(notifier_count(r.sm->notify), 1);
	h1.answer_reports = 0;
	ck_assert_int_eq(emu_link_down(r.e, 0x101, 3), 0);
	emu_run_sweeps(&r.run, 2);
	/* 4 sends (max_report_failures 4), then the subscription goes */
	run_until(&r, no_subscriptions, NULL, "the subscription dropped");
	ck_assert_uint_eq(notifier_count(r.sm->notify), 0);
	ck_assert_int_eq(h1.reports, 4);
	ck_assert_uint_eq(notifier_get_stats(r.sm->notify)->dropped_subscriptions, 1);
	h1.t.close(h1.t.ctx);
	emu_run_free(&r.run);
}
END_TEST

/* Partition tenantA (P_Key 0x0001): H1 a full member, H7 in none. */
static void tenant_h1(struct config *c)
{
	struct cfg_partition *p = &c->parts[0];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "tenantA");
	p->pkey = 0x0001;
	p->sl = -1;
	p->first = 0;
	p->n = 1;
	memset(&c->members[0], 0, sizeof(c->members[0]));
	snprintf(c->members[0].node, sizeof(c->members[0].node), "H1");
	c->members[0].full = 1;
	c->n_parts = 1;
	c->n_members = 1;
}

static struct mc_group *group_of(struct run *r, uint16_t pkey)
{
	struct mc_group want;
	const char *err;
	memset(&want, 0, sizeof(want));
	mc_ipoib_mgid(pkey, want.mgid);
	want.pkey = pkey;
	want.qkey = 0x0b1b;
	want.mtu = 4;
	want.rate = 3;
	struct mc_group *g = mc_create(&r->sm->mc, &want, &err);
	ck_assert_msg(g != NULL, "%s", err);
	return g;
}

static void want_mgid_report(const struct host *h, int k, uint16_t trap,
			     uint16_t pkey)
{
	uint8_t mgid[16];
	mc_ipoib_mgid(pkey, mgid);
	ck_assert_int_eq(h->traps[k], trap);
	ck_assert_mem_eq(h->gids[k], mgid, 16);
}

/*
 * Notices 66/67: a group created in the default partition reaches both
 * subscribers, one in tenantA only H1 (H7 does not hold its P_Key); the
 * deletions likewise.  Groups are made in the database directly, as the
 * SA's MCMemberRecord code would, and announced with
 * mcast_sm_group_event().
 */
START_TEST(t_group_created_deleted)
{
	struct run r;
	struct host h1, h7;
	setup_policy(&r, tenant_h1);
	/* the default partition's IPoIB broadcast group exists from the start */
	uint64_t created0 = r.sm->mc.created, deleted0 = r.sm->mc.deleted;
	emu_run_sweeps(&r.run, 1);
	host_attach(&r, &h1, 1);
	host_attach(&r, &h7, 7);
	host_subscribe(&r, &h1);
	host_subscribe(&r, &h7);
	const struct notify_stats *st = notifier_get_stats(r.sm->notify);

	struct mc_group *all = group_of(&r, 0xffff);
	ck_assert_int_eq(mc_join(&r.sm->mc, all, h1.guid, MC_JOIN_FULL, 0), 1);
	mcast_sm_group_event(r.sm, all, 1);
	h1.answer_reports = h7.answer_reports = 1;
	run_until(&r, reports_in, &h1, "notice 66 at H1");
	run_until(&r, reports_in, &h7, "notice 66 at H7");
	want_mgid_report(&h1, 0, TRAP_MC_CREATED, 0xffff);
	want_mgid_report(&h7, 0, TRAP_MC_CREATED, 0xffff);
	ck_assert_uint_eq(st->not_allowed, 0);

	struct mc_group *ta = group_of(&r, 0x8001);
	ck_assert_int_eq(mc_join(&r.sm->mc, ta, h1.guid, MC_JOIN_FULL, 0), 1);
	mcast_sm_group_event(r.sm, ta, 1);
	ck_assert_uint_eq(st->reports_sent, 3);	/* not to H7 */
	ck_assert_uint_eq(st->not_allowed, 1);
	h1.answer_reports = 2;
	run_until(&r, reports_in, &h1, "tenantA's 66 at H1");
	want_mgid_report(&h1, 1, TRAP_MC_CREATED, 0x8001);

	/* the last full member leaves: 67, then the group goes */
	ck_assert_int_eq(mc_leave(&r.sm->mc, ta, h1.guid, MC_JOIN_FULL), 1);
	ck_assert_int_eq(mc_has_full_member(ta), 0);
	mcast_sm_group_event(r.sm, ta, 0);
	mc_delete(&r.sm->mc, ta);
	ck_assert_uint_eq(st->not_allowed, 2);
	h1.answer_reports = 3;
	run_until(&r, reports_in, &h1, "tenantA's 67 at H1");
	want_mgid_report(&h1, 2, TRAP_MC_DELETED, 0x8001);

	mcast_sm_group_event(r.sm, all, 0);
	mc_delete(&r.sm->mc, all);
	h1.answer_reports = 4;
	h7.answer_reports = 2;
	run_until(&r, reports_in, &h1, "notice 67 at H1");
	run_until(&r, reports_in, &h7, "notice 67 at H7");
	want_mgid_report(&h1, 3, TRAP_MC_DELETED, 0xffff);
	want_mgid_report(&h7, 1, TRAP_MC_DELETED, 0xffff);
	ck_assert_int_eq(h1.reports, 4);
	ck_assert_int_eq(h7.reports, 2);
	ck_assert_uint_eq(st->reports_sent, 6);
	ck_assert_uint_eq(st->report_resps, 6);
	ck_assert_uint_eq(r.sm->mc.created - created0, 2);
	ck_assert_uint_eq(r.sm->mc.deleted - deleted0, 2);
	ck_assert_uint_eq(emu_violations(r.e), 0);
	h1.t.close(h1.t.ctx);
	h7.t.close(h7.t.ctx);
	emu_run_free(&r.run);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("notify_on_emulator");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_gid_out_and_in_of_service);
	tcase_add_test(tc, t_early_out_of_service_and_back);
	tcase_add_test(tc, t_silent_listener_dropped);
	tcase_add_test(tc, t_group_created_deleted);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
