/*
 * One host against the SA (sm/sa/sa_server.c, sm/sa/sa_budget.c,
 * mad/rmpp.c) on the emulator: ibsmd is the SM of the 12-host tree
 * (emu_tree_text) on H0, a raw host on H1 floods it, well-behaved SA
 * clients on other hosts ask what hosts ask meanwhile.
 *
 *   gettable_flood: bursts of GetTable PathRecord with no component
 *     (every path, 324 records, 104 segments each), 2,000 every 200 ms,
 *     never ACKed, for 3 s.  The SA holds at most the requester's share of answers
 *     (sa.max_answers_per_requester 16, sa.max_answer_bytes_per_requester
 *     1 MiB here), answers the rest Busy, and the process's RSS grows by
 *     less than RSS_BOUND (RSS: the whole test process, the emulator and
 *     the hosts included, so it is judged in the plain build only --
 *     ASan's quarantine keeps freed memory; the SA's own count of the
 *     bytes it holds is judged in both).  Meanwhile another host's 50
 *     NodeRecord and 20 PathRecord GetTables are all answered, a third
 *     host's ClassPortInfo Gets are answered within CPI_BOUND_MS, and the
 *     answers the flooder does not ACK are resent on schedule (RMPP
 *     timeout 200 ms) and then dropped, freeing their room.
 *   flood_trap: during the same flood, right behind a burst of 2,000
 *     requests, a leaf-spine cable is pulled: the switches' trap 128 is
 *     checked and its heavy sweep starts within TRAP_BOUND_MS (the
 *     emulator's turns are bounded by time as the daemon's pump is, and
 *     the flood's requests cost little once refused).
 *   halfopen_flood: bursts of RMPP DATA first segments announcing a
 *     request of two segments (never sent on) and of one-segment
 *     requests, 10,000 a second for 3 s: two other hosts' GetTables (50
 *     NodeRecord, 20 PathRecord each, no retry) are all answered (the SA
 *     takes no request longer than one segment, and the answers' send
 *     slots are not the receive slots).  On ef5243e the one table of
 *     4,096 transfers filled and 16 of each host's 70 were lost.
 */
#include <check.h>
#include <infiniband/mad.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/rmpp.h"
#include "mad/sa.h"
#include "sm/base/clock.h"
#include "sm/sa/sa_budget.h"
#include "sm/sa/sa_server.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "emu_testlib.h"

#define FLOOD_MS	3000
#define BURST_MS	200
#define FLOOD_BURST	2000		/* requests a burst: 10,000 a second */
#define MAX_TIDS	200000
#define RSS_BOUND	(32u << 20)	/* plain build: RSS growth during the flood */
#define CPI_BOUND_MS	150
#define TRAP_BOUND_MS	50
#define RESEND_SLACK_MS	150		/* over the SA's RMPP timeout, 200 ms */
#define SA_RMPP_TIMEOUT_MS 200
#define N_NODES		18		/* the tree: 12 hosts, 6 switches */

/* ---- the flooding host: raw MADs, never an ACK ---- */

enum flood_kind { FLOOD_GETTABLE, FLOOD_HALFOPEN };

struct flooder {
	struct mad_transport t;
	struct event *ev;
	enum flood_kind kind;
	unsigned burst;
	uint64_t guid;
	uint32_t lid, sm_lid;
	uint64_t until_ms;
	uint64_t next_tid, sent;
	uint64_t busy, other_status, data, aborts, acks, stops, resent;
	double first_ms[MAX_TIDS], last_ms[MAX_TIDS];
	unsigned arrivals[MAX_TIDS];
	double max_gap_ms;		/* between a DATA segment 1 and its resend */
};

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void flooder_recv(void *arg, const uint8_t *mad, size_t len,
			 const struct mad_addr *from, int status)
{
	struct flooder *f = arg;
	(void)from;
	if (status || len < SA_HDR_SIZE || mad[1] != SA_CLASS)
		return;
	if (!(mad[26] & RMPP_FLAG_ACTIVE)) {
		if (mad_status(mad) == MAD_STS_BUSY)
			f->busy++;
		else
			f->other_status++;
		return;
	}
	switch (rmpp_type(mad)) {
	case RMPP_TYPE_DATA: {
		f->data++;
		uint64_t k = mad_tid(mad) & 0xffffffffu;
		if (rmpp_seg(mad) != 1 || k >= MAX_TIDS)
			break;
		double t = now_ms();
		if (f->arrivals[k]++) {
			f->resent++;
			if (f->arrivals[k] == 2 && t - f->first_ms[k] > f->max_gap_ms)
				f->max_gap_ms = t - f->first_ms[k];
		} else {
			f->first_ms[k] = t;
		}
		f->last_ms[k] = t;
		break;
	}
	case RMPP_TYPE_ABORT: f->aborts++; break;
	case RMPP_TYPE_STOP: f->stops++; break;
	case RMPP_TYPE_ACK: f->acks++; break;
	}
}

static void flood_one(struct flooder *f)
{
	uint8_t m[MAD_SIZE];
	struct mad_addr to = { .lid = f->sm_lid, .qpn = 1, .qkey = IB_DEFAULT_QP1_QKEY };
	uint64_t tid = ++f->next_tid;
	if (f->kind == FLOOD_GETTABLE) {
		sa_init_request(m, SA_METHOD_GET_TABLE, tid, SA_ATTR_PATH_REC, 0, 0, NULL, 0);
	} else if (tid % 3) {
		/* the first of two segments, the second never sent */
		sa_init_request(m, SA_METHOD_GET_TABLE, tid, SA_ATTR_NODE_REC, 0, 0, NULL, 0);
		m[24] = RMPP_VERSION;
		m[25] = RMPP_TYPE_DATA;
		m[26] = (uint8_t)(0x1f << 3 | RMPP_FLAG_ACTIVE | RMPP_FLAG_FIRST);
		sa_put32(m + 28, 1);
		sa_put32(m + 32, 2 * SA_RMPP_PAYLOAD);
	} else {
		/* a whole request in one segment (an attribute nobody serves) */
		sa_init_request(m, SA_METHOD_GET_TABLE, tid, 0x00ee, 0, 0, NULL, 0);
		m[24] = RMPP_VERSION;
		m[25] = RMPP_TYPE_DATA;
		m[26] = (uint8_t)(0x1f << 3 | RMPP_FLAG_ACTIVE | RMPP_FLAG_FIRST | RMPP_FLAG_LAST);
		sa_put32(m + 28, 1);
		sa_put32(m + 32, SA_RMPP_PAYLOAD - SA_DATA_SIZE + 64);
	}
	if (mad_transport_send(&f->t, m, MAD_SIZE, &to) == 0)
		f->sent++;
}

static void flooder_burst(evutil_socket_t fd, short what, void *arg)
{
	struct flooder *f = arg;
	(void)fd;
	(void)what;
	if (clock_ms() >= f->until_ms) {
		event_del(f->ev);
		return;
	}
	for (unsigned i = 0; i < f->burst; i++)
		flood_one(f);
}

/* The flooder on H<host>, IsSM cleared: settle the SM before flooder_go(). */
static struct flooder *flooder_attach(struct emu_run *r, int host, enum flood_kind kind,
				      unsigned burst)
{
	char err[256] = "";
	struct flooder *f = calloc(1, sizeof(*f));
	ck_assert_ptr_nonnull(f);
	f->guid = emu_host_guid(host);
	f->kind = kind;
	f->burst = burst;
	ck_assert_msg(emu_attach(r->e, r->base, f->guid, &f->t, flooder_recv, f,
				 err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(emu_set_issm(r->e, f->guid, 0), 0);
	f->lid = f->t.lid;
	f->sm_lid = f->t.sm_lid;
	ck_assert_uint_gt(f->sm_lid, 0);
	f->ev = event_new(r->base, -1, EV_PERSIST, flooder_burst, f);
	ck_assert_ptr_nonnull(f->ev);
	return f;
}

/* A burst every BURST_MS for ms. */
static void flooder_go(struct flooder *f, unsigned ms)
{
	struct timeval tv = { 0, BURST_MS * 1000 };
	f->until_ms = clock_ms() + ms;
	ck_assert_int_eq(event_add(f->ev, &tv), 0);
	flooder_burst(-1, 0, f);
}

/* Runs the loop to the flood's end and ms more. */
static void flood_end(struct emu_run *r, const struct flooder *f, unsigned ms)
{
	uint64_t now = clock_ms();
	emu_sm_run(r->base, r->sm, (unsigned)(f->until_ms > now ? f->until_ms - now : 0) + ms, 0);
}

static void flooder_free(struct flooder *f)
{
	event_free(f->ev);
	f->t.close(f->t.ctx);
	free(f);
}

/* ---- well-behaved hosts ---- */

#define ASK_NODES	50
#define ASK_PATHS	20
#define ASK_AT_ONCE	8

struct asker {
	struct emu_sahost h;
	int asked, answered, bad;
	size_t want_nodes, want_paths;
};

static void on_table(void *arg, int status, const uint8_t *recs, size_t n,
		     size_t stride, const uint8_t *hdr);

/* The next of ASK_NODES NodeRecord, then ASK_PATHS PathRecord (from the host) GetTables. */
static void ask_next(struct asker *a)
{
	uint8_t pr[SA_SIZE_PATH_REC];
	if (a->asked >= ASK_NODES + ASK_PATHS)
		return;
	memset(pr, 0, sizeof(pr));
	sa_put16(pr + 42, (uint16_t)a->h.lid);		/* SLID */
	if (a->asked++ < ASK_NODES)
		ck_assert_int_eq(saclient_query(a->h.c, SA_METHOD_GET_TABLE, SA_ATTR_NODE_REC,
						0, 0, NULL, 0, on_table, a), 0);
	else
		ck_assert_int_eq(saclient_query(a->h.c, SA_METHOD_GET_TABLE, SA_ATTR_PATH_REC,
						0, (uint64_t)1 << 5, pr, sizeof(pr),
						on_table, a), 0);
}

static void on_table(void *arg, int status, const uint8_t *recs, size_t n,
		     size_t stride, const uint8_t *hdr)
{
	struct asker *a = arg;
	(void)recs;
	(void)stride;
	a->answered++;
	if (status || !hdr ||
	    n != (mad_attr_id(hdr) == SA_ATTR_NODE_REC ? a->want_nodes : a->want_paths))
		a->bad++;
	ask_next(a);
}

/* The GetTables, ASK_AT_ONCE at a time, as a host's tools ask. */
static void ask_tables(struct asker *a)
{
	for (int i = 0; i < ASK_AT_ONCE; i++)
		ask_next(a);
}

static int all_answered(const void *arg)
{
	const struct asker *a = arg;
	return a->answered == ASK_NODES + ASK_PATHS;
}

/* ClassPortInfo Gets every 20 ms from a host: the slowest answer. */
struct cpi {
	struct emu_sahost h;
	struct event *ev;
	double sent_ms, max_ms;
	int out, answered, failed;
};

static void on_cpi(void *arg, int status, const uint8_t *recs, size_t n,
		   size_t stride, const uint8_t *hdr)
{
	struct cpi *c = arg;
	(void)recs;
	(void)stride;
	(void)hdr;
	double ms = now_ms() - c->sent_ms;
	c->out = 0;
	c->answered++;
	if (status || n != 1)
		c->failed++;
	if (ms > c->max_ms)
		c->max_ms = ms;
}

static void cpi_tick(evutil_socket_t fd, short what, void *arg)
{
	struct cpi *c = arg;
	(void)fd;
	(void)what;
	if (c->out) {
		/* still waiting: the wait so far counts */
		if (now_ms() - c->sent_ms > c->max_ms)
			c->max_ms = now_ms() - c->sent_ms;
		return;
	}
	c->out = 1;
	c->sent_ms = now_ms();
	ck_assert_int_eq(saclient_query(c->h.c, SA_METHOD_GET, SA_ATTR_CLASS_PORT_INFO,
					0, 0, NULL, 0, on_cpi, c), 0);
}

/* One query's status. */
static void on_status(void *arg, int status, const uint8_t *recs, size_t n,
		      size_t stride, const uint8_t *hdr)
{
	int *st = arg;
	(void)recs;
	(void)n;
	(void)stride;
	(void)hdr;
	*st = status;
}

/* ---- the run ---- */

struct run {
	EMU_RUN;
	struct emu_net net;	/* the hosts' view: base, emulator, SM LID */
	struct event *rss_ev;
	long rss0, rss_max;
};

static long rss_bytes(void)
{
	long pages = 0, rss = 0;
	FILE *fp = fopen("/proc/self/statm", "r");
	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(fscanf(fp, "%ld %ld", &pages, &rss), 2);
	fclose(fp);
	return rss * sysconf(_SC_PAGESIZE);
}

static void rss_tick(evutil_socket_t fd, short what, void *arg)
{
	struct run *r = arg;
	(void)fd;
	(void)what;
	long v = rss_bytes();
	if (v > r->rss_max)
		r->rss_max = v;
}

static void run_up(struct run *r)
{
	memset(r, 0, sizeof(*r));
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "saflood", .seed = 25 });
	r->sm = emu_sm_new(r->state, 50);
	emu_sm_start(r->sm, r->base, r->e);
	emu_sm_settle(r->base, r->sm, 10000);
	ck_assert_ptr_nonnull(sa_get_view(r->sm));
	r->sm->cfg.sa_max_answers_per_requester = 16;
	r->sm->cfg.sa_max_answer_bytes_per_requester = 1u << 20;
	r->net.e = r->e;
	r->net.base = r->base;
	r->net.sm_lid = (uint32_t)emu_port_lid(r->e, 0x1000, 1);
	r->rss_ev = event_new(r->base, -1, EV_PERSIST, rss_tick, r);
	ck_assert_ptr_nonnull(r->rss_ev);
}

static void settle(struct run *r)
{
	/* IsSM cleared on the new hosts: capability changes, a sweep */
	emu_sm_run(r->base, r->sm, 300, 0);
	emu_sm_settle(r->base, r->sm, 10000);
}

static void rss_watch(struct run *r)
{
	struct timeval tv = { 0, 2000 };
	r->rss0 = r->rss_max = rss_bytes();
	ck_assert_int_eq(event_add(r->rss_ev, &tv), 0);
}

static void run_down(struct run *r)
{
	event_free(r->rss_ev);
	ck_assert_uint_eq(emu_violations(r->e), 0);
	emu_run_free(&r->run);
}

static const struct saclient_params polite = { .timeout_ms = 1000, .retries = 1,
					       .max_inflight = 128 };
/* no second chance: an answer the SA could not send is a lost query */
static const struct saclient_params once = { .timeout_ms = 1000, .retries = 0,
					     .max_inflight = 128 };

START_TEST(t_gettable_flood)
{
	struct run r;
	struct asker a;
	struct cpi c;
	run_up(&r);
	memset(&a, 0, sizeof(a));
	memset(&c, 0, sizeof(c));
	emu_sahosts_attach(&r.net, &a.h, 2, 1, &polite);
	emu_sahosts_attach(&r.net, &c.h, 5, 1, &polite);
	a.want_nodes = N_NODES;
	a.want_paths = N_NODES;
	struct flooder *f = flooder_attach(&r.run, 1, FLOOD_GETTABLE, FLOOD_BURST);
	settle(&r);
	rss_watch(&r);
	flooder_go(f, FLOOD_MS);
	c.ev = event_new(r.base, -1, EV_PERSIST, cpi_tick, &c);
	ck_assert_ptr_nonnull(c.ev);
	ck_assert_int_eq(event_add(c.ev, &(struct timeval){ 0, 20000 }), 0);
	emu_sm_run(r.base, r.sm, 500, 0);	/* the flood is on */
	ask_tables(&a);
	int in_time = emu_run_while(r.base, all_answered, &a, FLOOD_MS);
	int answered = a.answered;
	flood_end(&r.run, f, 100);
	event_del(c.ev);
	event_del(r.rss_ev);
	const struct sa_budget_stats *b = sa_get_budget_stats(r.sm);
	fprintf(stderr, "gettable flood: sent %llu, busy %llu, answers begun %llu, resent %llu, "
		"longest first resend %.0f ms; rss +%ld KB; SA held at most %llu bytes; "
		"ClassPortInfo %d answered, slowest %.1f ms; GetTables %d/%d answered, %d wrong\n",
		(unsigned long long)f->sent, (unsigned long long)f->busy,
		(unsigned long long)(f->data - f->resent), (unsigned long long)f->resent,
		f->max_gap_ms, (r.rss_max - r.rss0) / 1024, (unsigned long long)b->bytes_peak,
		c.answered, c.max_ms, a.answered, a.asked, a.bad);
	ck_assert_msg(in_time, "%d of %d GetTables answered during the flood", answered,
		      ASK_NODES + ASK_PATHS);
	ck_assert_int_eq(a.bad, 0);
	ck_assert_int_eq(c.failed, 0);
	ck_assert_int_gt(c.answered, FLOOD_MS / 40);
	ck_assert_msg(c.max_ms < CPI_BOUND_MS, "a ClassPortInfo took %.1f ms", c.max_ms);
	ck_assert_uint_gt(f->resent, 0);
	ck_assert_msg(f->max_gap_ms < SA_RMPP_TIMEOUT_MS + RESEND_SLACK_MS,
		      "an answer's first resend came %.0f ms after it", f->max_gap_ms);
#ifndef __SANITIZE_ADDRESS__
	ck_assert_msg(r.rss_max - r.rss0 < (long)RSS_BOUND, "RSS grew by %ld KB",
		      (r.rss_max - r.rss0) / 1024);
#endif
	ck_assert_uint_le(b->bytes_peak, 1u << 20);
	ck_assert_uint_gt(f->busy, f->sent / 2);
	/* what was never ACKed is dropped after the RMPP retries: room again */
	emu_sm_run(r.base, r.sm, SA_RMPP_TIMEOUT_MS * 5 + 200, 0);
	ck_assert_uint_eq(b->answers, 0);
	ck_assert_uint_eq(b->bytes, 0);
	ck_assert_uint_gt(f->aborts, 0);
	/* an answer longer than a requester may hold at all: ERR_NO_RESOURCES */
	r.sm->cfg.sa_max_answer_bytes_per_requester = 4096;
	int st = -1;
	ck_assert_int_eq(saclient_query(a.h.c, SA_METHOD_GET_TABLE, SA_ATTR_PATH_REC, 0, 0,
					NULL, 0, on_status, &st), 0);
	emu_run_while(r.base, emu_flag_set, &(int){ 0 }, 200);
	ck_assert_int_eq(st, SA_STS_NO_RESOURCES);
	ck_assert_uint_eq(sa_get_stats(r.sm)->refused_too_long, 1);
	event_free(c.ev);
	flooder_free(f);
	emu_sahosts_detach(&c.h, 1);
	emu_sahosts_detach(&a.h, 1);
	run_down(&r);
}
END_TEST

START_TEST(t_flood_trap)
{
	struct run r;
	run_up(&r);
	struct flooder *f = flooder_attach(&r.run, 1, FLOOD_GETTABLE, FLOOD_BURST);
	settle(&r);
	flooder_go(f, FLOOD_MS);
	emu_sm_run(r.base, r.sm, 600, 0);	/* the flood is on */
	ck_assert(emu_sm_idle(r.sm));
	uint32_t sweeps = r.sm->sweep.heavy_sweeps;
	/* right behind a burst, L3 port 7 to S0 goes down: both switches
	 * send trap 128, queued behind the burst's requests */
	flooder_burst(-1, 0, f);
	ck_assert_int_eq(emu_link_down(r.e, 0x103, 7), 0);
	double t0 = now_ms();
	struct emu_sweeps w = { r.sm, sweeps + 1 };
	int swept = 0;
	while (now_ms() - t0 < FLOOD_MS && !swept) {
		emu_run_until(r.base, &(int){ 0 }, 1);
		swept = r.sm->sw.activity == SM_HEAVY_SWEEP || r.sm->sweep.heavy_sweeps > sweeps;
	}
	double ms = now_ms() - t0;
	fprintf(stderr, "flood trap: heavy sweep began %.1f ms after the link went down "
		"(flood: %llu sent, %llu busy)\n", ms, (unsigned long long)f->sent,
		(unsigned long long)f->busy);
	ck_assert_msg(swept && ms < TRAP_BOUND_MS, "the heavy sweep began %.1f ms after the trap", ms);
	ck_assert_msg(emu_run_while(r.base, emu_sweeps_done, &w, 10000), "the sweep did not end");
	flood_end(&r.run, f, 1200);
	flooder_free(f);
	run_down(&r);
}
END_TEST

START_TEST(t_halfopen_flood)
{
	struct run r;
	struct asker a[2];
	run_up(&r);
	memset(a, 0, sizeof(a));
	for (int i = 0; i < 2; i++) {
		emu_sahosts_attach(&r.net, &a[i].h, 2 + 4 * i, 1, &once);
		a[i].want_nodes = a[i].want_paths = N_NODES;
	}
	struct flooder *f = flooder_attach(&r.run, 1, FLOOD_HALFOPEN, FLOOD_BURST);
	settle(&r);
	flooder_go(f, FLOOD_MS);
	emu_sm_run(r.base, r.sm, 1200, 0);	/* the flood is on */
	for (int i = 0; i < 2; i++)
		ask_tables(&a[i]);
	for (int i = 0; i < 2; i++)
		emu_run_while(r.base, all_answered, &a[i], FLOOD_MS);
	fprintf(stderr, "half-open flood: sent %llu (stops %llu, aborts %llu, acks %llu); "
		"GetTables answered %d/%d and %d/%d, wrong or lost %d and %d\n",
		(unsigned long long)f->sent, (unsigned long long)f->stops,
		(unsigned long long)f->aborts, (unsigned long long)f->acks,
		a[0].answered, a[0].asked, a[1].answered, a[1].asked, a[0].bad, a[1].bad);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(a[i].answered, ASK_NODES + ASK_PATHS);
		ck_assert_int_eq(a[i].bad, 0);
	}
	/* every first segment of two refused at once, none held */
	ck_assert_uint_ge(f->aborts, f->sent / 2);
	flood_end(&r.run, f, 100);
	flooder_free(f);
	for (int i = 0; i < 2; i++)
		emu_sahosts_detach(&a[i].h, 1);
	run_down(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("saflood_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_gettable_flood);
	tcase_add_test(tc, t_flood_trap);
	tcase_add_test(tc, t_halfopen_flood);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
