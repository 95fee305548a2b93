/*
 * The host-side SA client (traps/host/saclient.c) on an emulated host against a
 * stand-in SA on the SM's port (H0): Get, GetTable as one MAD and as RMPP
 * (with loss), error statuses, timeouts and retries, the in-flight limit,
 * InformInfo, Reports answered with ReportResp once per TID, cancelling.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/rmpp.h"
#include "mad/sa.h"
#include "traps/host/saclient.h"

#include "emu_testlib.h"
#include "tests/tools/saload.h"

#define NODE_STRIDE 112		/* NodeRecord 108 bytes, AttributeOffset 14 */
#define PIR_STRIDE 64

/* ---- the stand-in SA ---- */

struct fakesa {
	struct emu_host h;
	struct rmpp *r;
	int gets, silent, sets;
	uint8_t inform[SA_INFORM_SIZE];
	int report_resps;
	uint8_t last_resp[MAD_SIZE];
};

static void answer_hdr(uint8_t *hdr, const uint8_t *req, uint16_t stride)
{
	memcpy(hdr, req, SA_HDR_SIZE);
	mad_make_response(hdr, 0);
	sa_put16(hdr + 44, stride / 8);
}

static int sa_get_path(void *ctx, const uint8_t *mad, size_t len,
		       const struct mad_addr *from)
{
	struct fakesa *s = ctx;
	uint8_t buf[MAD_SIZE];
	s->gets++;
	if (mad_attr_mod(mad) == 1)
		return SA_STS_NO_RECORDS;
	memcpy(buf, mad, MAD_SIZE);
	answer_hdr(buf, mad, SA_SIZE_PATH_REC);
	buf[SA_HDR_SIZE + 63] = 0xab;
	ck_assert_int_eq(mad_send_response(&s->h.t, buf, from), 0);
	return MAD_DONE;
}

static int sa_silent(void *ctx, const uint8_t *mad, size_t len,
		     const struct mad_addr *from)
{
	struct fakesa *s = ctx;
	s->silent++;
	return MAD_DONE;
}

/* NodeRecords 0..attr_mod-1 over RMPP, record i filled with i. */
static int sa_nodes(void *ctx, const uint8_t *mad, size_t len,
		    const struct mad_addr *from)
{
	struct fakesa *s = ctx;
	uint32_t n = mad_attr_mod(mad);
	uint8_t hdr[SA_HDR_SIZE], *recs = calloc(n ? n : 1, NODE_STRIDE);
	ck_assert_ptr_nonnull(recs);
	for (uint32_t i = 0; i < n; i++) {
		memset(recs + i * NODE_STRIDE, (int)(i & 0xff), SA_SIZE_NODE_REC);
		sa_put32(recs + i * NODE_STRIDE, i);
	}
	answer_hdr(hdr, mad, NODE_STRIDE);
	struct mad_addr to = { .lid = from->lid, .qpn = from->qpn };
	ck_assert_int_eq(rmpp_send(s->r, hdr, recs, (size_t)n * NODE_STRIDE, &to,
				   NULL, NULL), 0);
	free(recs);
	return MAD_DONE;
}

/* PortInfoRecords in one plain MAD of 56 + n * 64 bytes. */
static int sa_pirs(void *ctx, const uint8_t *mad, size_t len,
		   const struct mad_addr *from)
{
	struct fakesa *s = ctx;
	uint32_t n = mad_attr_mod(mad);
	uint8_t buf[MAD_SIZE];
	memset(buf, 0, sizeof(buf));
	answer_hdr(buf, mad, PIR_STRIDE);
	for (uint32_t i = 0; i < n; i++)
		buf[SA_HDR_SIZE + i * PIR_STRIDE] = (uint8_t)(0x40 + i);
	struct mad_addr to = { .lid = from->lid, .qpn = from->qpn, .qkey = 0x80010000 };
	ck_assert_int_eq(mad_transport_send(&s->h.t, buf, SA_HDR_SIZE + n * PIR_STRIDE,
					    &to), 0);
	return MAD_DONE;
}

static int sa_inform(void *ctx, const uint8_t *mad, size_t len,
		     const struct mad_addr *from)
{
	struct fakesa *s = ctx;
	s->sets++;
	memcpy(s->inform, sa_data(mad), SA_INFORM_SIZE);
	return 0;	/* echoed in the GetResp */
}

static int sa_answers(void *arg, const uint8_t *mad, size_t len,
		      const struct mad_addr *from, int status)
{
	struct fakesa *s = arg;
	if (mad_method(mad) != SA_METHOD_REPORT_RESP)
		return 0;
	s->report_resps++;
	memcpy(s->last_resp, mad, len);
	return 1;
}

static void fakesa_up(struct emu_net *n, struct fakesa *s)
{
	memset(s, 0, sizeof(*s));
	emu_hosts_attach(n, &s->h, 0, 1);
	ck_assert_uint_eq(s->h.lid, n->sm_lid);
	s->r = rmpp_new(n->base, &s->h.t, &(struct rmpp_params){ .timeout_ms = 30,
		.retries = 5 });
	ck_assert_ptr_nonnull(s->r);
	mad_dispatch_set_rmpp(s->h.d, rmpp_hook, s->r);
	mad_dispatch_set_answers(s->h.d, sa_answers, s);
	struct { uint8_t m; uint16_t a; mad_handler_fn fn; } rows[] = {
		{ SA_METHOD_GET, SA_ATTR_PATH_REC, sa_get_path },
		{ SA_METHOD_GET, SA_ATTR_LINK_REC, sa_silent },
		{ SA_METHOD_GET_TABLE, SA_ATTR_NODE_REC, sa_nodes },
		{ SA_METHOD_GET_TABLE, SA_ATTR_PORTINFO_REC, sa_pirs },
		{ SA_METHOD_SET, SA_ATTR_INFORM_INFO, sa_inform },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		ck_assert_int_eq(mad_dispatch_register(s->h.d, SA_CLASS, SA_CLASS_VERSION,
						       rows[i].m, rows[i].a, rows[i].fn, s), 0);
}

static void fakesa_down(struct fakesa *s)
{
	rmpp_free(s->r);
	emu_hosts_detach(&s->h, 1);
}

/* ---- the host ---- */

struct result {
	int done, status;
	size_t n, stride;
	uint8_t *recs;
	uint8_t hdr[SA_HDR_SIZE];
};

static void on_done(void *arg, int status, const uint8_t *recs, size_t n,
		    size_t stride, const uint8_t *hdr)
{
	struct result *r = arg;
	r->done++;
	r->status = status;
	r->n = n;
	r->stride = stride;
	free(r->recs);
	r->recs = NULL;
	if (n) {
		r->recs = malloc(n * stride);
		ck_assert_ptr_nonnull(r->recs);
		memcpy(r->recs, recs, n * stride);
	}
	if (hdr)
		memcpy(r->hdr, hdr, SA_HDR_SIZE);
}

static const struct saclient_params fast = { .timeout_ms = 40, .retries = 2,
	.rmpp = { .timeout_ms = 30, .retries = 5 } };

struct fixture {
	struct emu_net n;
	struct fakesa sa;
	struct emu_sahost h;
	struct result r;
	int reports;
	uint8_t notice[SA_SIZE_NOTICE];
};

static void on_report(void *arg, const uint8_t *notice, const struct mad_addr *from)
{
	struct fixture *r = arg;
	r->reports++;
	memcpy(r->notice, notice, SA_SIZE_NOTICE);
}

static void up(struct fixture *f, const struct saclient_params *p)
{
	memset(f, 0, sizeof(*f));
	emu_net_up(&f->n);
	fakesa_up(&f->n, &f->sa);
	emu_sahosts_attach(&f->n, &f->h, 9, 1, p);
	saclient_set_report(f->h.c, on_report, f);
}

static void down(struct fixture *f)
{
	emu_sahosts_detach(&f->h, 1);
	fakesa_down(&f->sa);
	ck_assert_uint_eq(emu_violations(f->n.e), 0);
	emu_net_down(&f->n);
	free(f->r.recs);
}

static void run(struct fixture *f, unsigned ms)
{
	ck_assert_int_eq(emu_run_until(f->n.base, &f->r.done, ms), 1);
}

START_TEST(t_get)
{
	struct fixture f;
	uint8_t rec[SA_SIZE_PATH_REC] = { 0 };
	up(&f, &fast);
	rec[0] = 0x11;
	ck_assert_int_eq(saclient_query(f.h.c, SA_METHOD_GET, SA_ATTR_PATH_REC, 0, 0x30,
					rec, sizeof(rec), on_done, &f.r), 0);
	ck_assert_uint_eq(saclient_inflight(f.h.c), 1);
	run(&f, 1000);
	ck_assert_int_eq(f.r.status, 0);
	ck_assert_uint_eq(f.r.n, 1);
	ck_assert_uint_eq(f.r.stride, SA_SIZE_PATH_REC);
	ck_assert_uint_eq(f.r.recs[0], 0x11);
	ck_assert_uint_eq(f.r.recs[63], 0xab);
	ck_assert_uint_eq(sa_comp_mask(f.r.hdr), 0x30);
	ck_assert_uint_eq(saclient_inflight(f.h.c), 0);
	/* the SA has no such record: its status, no records */
	f.r.done = 0;
	ck_assert_int_eq(saclient_query(f.h.c, SA_METHOD_GET, SA_ATTR_PATH_REC, 1, 0,
					rec, sizeof(rec), on_done, &f.r), 0);
	run(&f, 1000);
	ck_assert_int_eq(f.r.status, SA_STS_NO_RECORDS);
	ck_assert_uint_eq(f.r.n, 0);
	const struct saclient_stats *st = saclient_get_stats(f.h.c);
	ck_assert_uint_eq(st->queries, 2);
	ck_assert_uint_eq(st->answers, 2);
	ck_assert_uint_eq(st->errors, 1);
	ck_assert_uint_eq(st->retries, 0);
	ck_assert_int_eq(f.sa.gets, 2);
	down(&f);
}
END_TEST

static void get_nodes(struct fixture *f, uint32_t count)
{
	f->r.done = 0;
	ck_assert_int_eq(saclient_query(f->h.c, SA_METHOD_GET_TABLE, SA_ATTR_NODE_REC,
					count, 0, NULL, 0, on_done, &f->r), 0);
	run(f, 20000);
	ck_assert_int_eq(f->r.status, 0);
	ck_assert_uint_eq(f->r.n, count);
	ck_assert_uint_eq(f->r.stride, NODE_STRIDE);
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *p = f->r.recs + i * NODE_STRIDE;
		ck_assert_uint_eq(sa_get32(p), i);
		ck_assert_uint_eq(p[SA_SIZE_NODE_REC - 1], i & 0xff);
	}
}

START_TEST(t_get_table_rmpp)
{
	struct fixture f;
	up(&f, &fast);
	get_nodes(&f, 500);	/* 56000 bytes, 280 segments */
	const struct rmpp_stats *rs = saclient_rmpp_stats(f.h.c);
	ck_assert_uint_eq(rs->completed, 1);
	ck_assert_uint_gt(rs->acks_sent, 8);
	ck_assert_uint_eq(rmpp_get_stats(f.sa.r)->completed, 1);
	ck_assert_uint_eq(rmpp_get_stats(f.sa.r)->resent_segs, 0);
	/* one record, and none: a single RMPP segment each */
	get_nodes(&f, 1);
	get_nodes(&f, 0);
	ck_assert_uint_eq(saclient_get_stats(f.h.c)->retries, 0);
	down(&f);
}
END_TEST

START_TEST(t_get_table_lossy)
{
	struct fixture f;
	struct saclient_params p = fast;
	p.timeout_ms = 400;
	p.retries = 5;
	up(&f, &p);
	emu_set_seed(f.n.e, 11);
	emu_set_loss(f.n.e, 2.0);
	ck_assert_int_eq(emu_set_port_loss(f.n.e, emu_host_guid(9), 0, 3.0), 0);
	for (int i = 0; i < 3; i++)
		get_nodes(&f, 400);
	struct emu_counters c;
	emu_get_counters(f.n.e, &c);
	ck_assert_uint_gt(c.dropped_fault, 5);
	ck_assert_uint_gt(rmpp_get_stats(f.sa.r)->resent_segs, 0);
	down(&f);
}
END_TEST

START_TEST(t_get_table_one_mad)
{
	struct fixture f;
	up(&f, &fast);
	ck_assert_int_eq(saclient_query(f.h.c, SA_METHOD_GET_TABLE, SA_ATTR_PORTINFO_REC,
					2, 0, NULL, 0, on_done, &f.r), 0);
	run(&f, 1000);
	ck_assert_int_eq(f.r.status, 0);
	/* counted from the received length: 56 + 2 * 64, no phantom third */
	ck_assert_uint_eq(f.r.n, 2);
	ck_assert_uint_eq(f.r.stride, PIR_STRIDE);
	for (int i = 0; i < 2; i++)
		ck_assert_uint_eq(f.r.recs[i * PIR_STRIDE], 0x40 + i);
	down(&f);
}
END_TEST

START_TEST(t_timeout_retries)
{
	struct fixture f;
	up(&f, &fast);
	ck_assert_int_eq(saclient_query(f.h.c, SA_METHOD_GET, SA_ATTR_LINK_REC, 0, 0,
					NULL, 0, on_done, &f.r), 0);
	run(&f, 2000);
	ck_assert_int_eq(f.r.status, -ETIMEDOUT);
	ck_assert_int_eq(f.sa.silent, 1 + (int)fast.retries);
	const struct saclient_stats *st = saclient_get_stats(f.h.c);
	ck_assert_uint_eq(st->retries, fast.retries);
	ck_assert_uint_eq(st->timeouts, 1);
	ck_assert_uint_eq(st->sent, 1 + fast.retries);
	/* an unknown method is refused at once */
	ck_assert_int_eq(saclient_query(f.h.c, 0x7f, SA_ATTR_LINK_REC, 0, 0, NULL, 0,
					on_done, &f.r), -1);
	ck_assert_int_eq(errno, EINVAL);
	down(&f);
}
END_TEST

START_TEST(t_inflight_limit_and_cancel)
{
	struct fixture f;
	struct saclient_params p = fast;
	struct result r[5];
	memset(r, 0, sizeof(r));
	p.max_inflight = 4;
	up(&f, &p);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(saclient_query(f.h.c, SA_METHOD_GET, SA_ATTR_LINK_REC, 0, 0,
						NULL, 0, on_done, &r[i]), 0);
	ck_assert_int_eq(saclient_query(f.h.c, SA_METHOD_GET, SA_ATTR_LINK_REC, 0, 0,
					NULL, 0, on_done, &r[4]), -1);
	ck_assert_int_eq(errno, EAGAIN);
	saclient_free(f.h.c);
	f.h.c = NULL;	/* down() detaches before the loop runs again */
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(r[i].done, 1);
		ck_assert_int_eq(r[i].status, -ECANCELED);
	}
	ck_assert_int_eq(r[4].done, 0);
	down(&f);
}
END_TEST

START_TEST(t_inform)
{
	struct fixture f;
	struct saclient_inform ii;
	up(&f, &fast);
	saclient_inform_default(&ii, 64);
	ck_assert_int_eq(saclient_inform(f.h.c, &ii, 1, on_done, &f.r), 0);
	run(&f, 1000);
	ck_assert_int_eq(f.r.status, 0);
	ck_assert_int_eq(f.sa.sets, 1);
	const uint8_t *p = f.sa.inform;
	ck_assert_uint_eq(sa_get16(p + 16), 0xffff);	/* LIDRangeBegin: all */
	ck_assert_uint_eq(p[22], 1);			/* IsGeneric */
	ck_assert_uint_eq(p[23], 1);			/* Subscribe */
	ck_assert_uint_eq(sa_get16(p + 24), 0xffff);	/* Type */
	ck_assert_uint_eq(sa_get16(p + 26), 64);	/* TrapNumber */
	ck_assert_uint_eq(sa_get32(p + 28) >> 8, 1);	/* QPN */
	ck_assert_uint_eq(p[31] & 0x1f, 18);		/* RespTimeValue */
	ck_assert_uint_eq(sa_get32(p + 32), 0xffffff);	/* ProducerType */
	/* echoed: the record handed back is the one sent */
	ck_assert_uint_eq(f.r.n, 1);
	ck_assert_int_eq(memcmp(f.r.recs, p, SA_INFORM_SIZE), 0);
	f.r.done = 0;
	ck_assert_int_eq(saclient_inform(f.h.c, &ii, 0, on_done, &f.r), 0);
	run(&f, 1000);
	ck_assert_uint_eq(f.sa.inform[23], 0);
	uint8_t gid[16];
	saclient_port_gid(f.h.c, gid);
	ck_assert_uint_eq(sa_get64(gid), 0xfe80000000000000ULL);
	ck_assert_uint_eq(sa_get64(gid + 8), emu_host_guid(9));
	down(&f);
}
END_TEST

static void send_report(struct fixture *f, uint64_t tid, uint16_t trap)
{
	uint8_t m[MAD_SIZE], notice[SA_SIZE_NOTICE] = { 0x80 | 3 };
	sa_put16(notice + 4, trap);
	sa_init_request(m, SA_METHOD_REPORT, tid, SA_ATTR_NOTICE, 0, 0, notice,
			sizeof(notice));
	struct mad_addr to = { .lid = f->h.lid, .qpn = 1, .qkey = 0x80010000 };
	ck_assert_int_eq(mad_transport_send(&f->sa.h.t, m, MAD_SIZE, &to), 0);
	emu_run_until(f->n.base, &(int){ 0 }, 20);
}

START_TEST(t_reports)
{
	struct fixture f;
	up(&f, &fast);
	send_report(&f, 0x500, 65);
	ck_assert_int_eq(f.reports, 1);
	ck_assert_uint_eq(sa_get16(f.notice + 4), 65);
	ck_assert_int_eq(f.sa.report_resps, 1);
	ck_assert_uint_eq(mad_tid(f.sa.last_resp), 0x500);
	ck_assert_uint_eq(mad_attr_id(f.sa.last_resp), SA_ATTR_NOTICE);
	ck_assert_uint_eq(mad_status(f.sa.last_resp), 0);
	ck_assert_uint_eq(sa_get16(sa_data(f.sa.last_resp) + 4), 65);	/* echoed */
	/* its ReportResp was lost: the SA resends; answered, not handed on */
	send_report(&f, 0x500, 65);
	ck_assert_int_eq(f.reports, 1);
	ck_assert_int_eq(f.sa.report_resps, 2);
	send_report(&f, 0x501, 64);
	ck_assert_int_eq(f.reports, 2);
	ck_assert_uint_eq(sa_get16(f.notice + 4), 64);
	const struct saclient_stats *st = saclient_get_stats(f.h.c);
	ck_assert_uint_eq(st->reports, 2);
	ck_assert_uint_eq(st->report_dups, 1);
	/* an answer to nothing of ours */
	uint8_t m[MAD_SIZE];
	sa_init_request(m, SA_METHOD_GET_RESP, 0x4242, SA_ATTR_PATH_REC, 0, 0, NULL, 0);
	struct mad_addr to = { .lid = f.h.lid, .qpn = 1, .qkey = 0x80010000 };
	ck_assert_int_eq(mad_transport_send(&f.sa.h.t, m, MAD_SIZE, &to), 0);
	emu_run_until(f.n.base, &(int){ 0 }, 20);
	ck_assert_uint_eq(st->unmatched, 1);
	down(&f);
}
END_TEST

/* saperf's loop (tests/tools/saload.h) on an emulated host. */
START_TEST(t_saload)
{
	struct fixture f;
	uint32_t dlids[3];
	up(&f, &fast);
	for (int i = 0; i < 3; i++)
		dlids[i] = (uint32_t)emu_port_lid(f.n.e, 0x1000 + 4 * (uint64_t)(i + 1), 1);
	struct saload l = { .c = f.h.c, .base = f.n.base, .inflight = 8,
			    .max_queries = 300, .slid = f.h.lid, .dlids = dlids,
			    .n_dlids = 3 };
	ck_assert_int_eq(saload_run(&l), 0);
	ck_assert_uint_eq(l.sent, 300);
	ck_assert_uint_eq(l.ok, 300);
	ck_assert_uint_eq(l.errors + l.timeouts + l.bad + l.refused, 0);
	ck_assert_int_eq(f.sa.gets, 300);
	ck_assert_uint_eq(saclient_inflight(f.h.c), 0);
	/* by time: stops issuing after T, waits for what is out */
	struct saload t = l;
	t.max_queries = 0;
	t.seconds = 0.1;
	ck_assert_int_eq(saload_run(&t), 0);
	ck_assert_uint_gt(t.ok, 0);
	ck_assert_uint_eq(t.ok, t.sent);
	ck_assert(t.elapsed >= 0.1 && t.elapsed < 2.0);
	down(&f);
}
END_TEST

static Suite *saclient_suite(void)
{
	Suite *s = suite_create("saclient");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_get);
	tcase_add_test(tc, t_get_table_rmpp);
	tcase_add_test(tc, t_get_table_lossy);
	tcase_add_test(tc, t_get_table_one_mad);
	tcase_add_test(tc, t_timeout_retries);
	tcase_add_test(tc, t_inflight_limit_and_cancel);
	tcase_add_test(tc, t_inform);
	tcase_add_test(tc, t_reports);
	tcase_add_test(tc, t_saload);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(saclient_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
