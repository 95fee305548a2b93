/*
 * The transaction table (mad/txn.c) against a fake transport and a fake
 * clock: windows, TID matching, timeouts and retries, bounced requests,
 * cancellation, the arm callback and the counters.
 */
#include <check.h>
#include <infiniband/mad.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mad/smp.h"
#include "mad/txn.h"
#include "tests/unit/fakes.h"

#define ATTR_NI 0x0011
#define ATTR_PI 0x0015

/* Where directed-route answers come from (ibsim: the permissive LID). */
static const struct mad_addr dr_from = { .lid = 0xffff };

static struct txn_engine *mk(struct fake_net *fn, int window, int per_node,
			     int timeout_ms, int retries)
{
	struct txn_params p = {
		.timeout_ms = timeout_ms,
		.retries = retries,
		.window = window,
		.window_per_node = per_node,
	};
	struct txn_engine *e = txn_new(&p, &fn->t, fake_clock, fn);
	ck_assert_ptr_nonnull(e);
	return e;
}

/* A directed-route request whose attribute modifier tags it. */
static void submit(struct txn_engine *e, int method, uint16_t attr,
		   uint32_t tag, uint32_t dest, struct done_rec *r)
{
	uint8_t mad[MAD_SIZE];
	uint8_t path[2] = { 0, 1 };
	struct mad_addr to;
	smp_init_dr(mad, method, attr, tag, path, 1);
	smp_dr_address(&to);
	ck_assert_int_eq(txn_submit(e, mad, MAD_SIZE, &to, dest, done_record, r),
			 0);
}

static uint64_t tid_of(const uint8_t *mad)
{
	return mad_get_field64((void *)mad, 0, IB_MAD_TRID_F);
}

static uint32_t tag_of(const struct fake_net *fn, int k)
{
	return smp_attr_mod(fn->sent[k]);
}

static const struct txn_counters *attr_counters(const struct txn_engine *e,
						uint16_t attr)
{
	const struct txn_stats *s = txn_get_stats(e);
	for (int i = 0; i < s->n_attrs; i++)
		if (s->attrs[i].attr == attr)
			return &s->attrs[i].c;
	return NULL;
}

START_TEST(t_global_window)
{
	struct fake_net *fn = fake_net_new(1000);
	struct txn_engine *e = mk(fn, 4, 256, 100, 2);
	struct done_rec r[10];
	memset(r, 0, sizeof(r));
	for (uint32_t i = 0; i < 10; i++)
		submit(e, IB_MAD_METHOD_GET, ATTR_NI, i, TXN_NO_DEST, &r[i]);
	ck_assert_int_eq(fn->n_sent, 4);
	ck_assert_uint_eq(txn_inflight(e), 4);
	ck_assert_uint_eq(txn_queued(e), 6);
	for (int k = 0; k < 4; k++) {
		ck_assert_uint_eq(tag_of(fn, k), (uint32_t)k);
		ck_assert_uint_ne(tid_of(fn->sent[k]) & 0xffffffff, 0);
		for (int j = 0; j < k; j++)
			ck_assert_uint_ne(tid_of(fn->sent[k]), tid_of(fn->sent[j]));
	}
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(r[i].calls, 0);	/* never from submit */

	uint8_t resp[MAD_SIZE];
	fake_response(fn, 1, resp);
	ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 1);
	ck_assert_int_eq(r[1].calls, 1);
	ck_assert_int_eq(r[1].status, TXN_OK);
	ck_assert_uint_eq(r[1].len, MAD_SIZE);
	ck_assert_mem_eq(r[1].resp, resp, MAD_SIZE);
	ck_assert_int_eq(r[0].calls + r[2].calls + r[3].calls, 0);
	/* the oldest queued request took the freed slot */
	ck_assert_int_eq(fn->n_sent, 5);
	ck_assert_uint_eq(tag_of(fn, 4), 4);
	ck_assert_uint_eq(txn_inflight(e), 4);
	ck_assert_uint_eq(txn_queued(e), 5);

	/* answering everything drains the queue in order */
	for (int k = 0; k < fn->n_sent; k++) {
		if (k == 1)
			continue;
		fake_response(fn, k, resp);
		ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 1);
		ck_assert_uint_le(txn_inflight(e), 4);
	}
	ck_assert_int_eq(fn->n_sent, 10);
	for (int i = 0; i < 10; i++) {
		ck_assert_int_eq(r[i].calls, 1);
		ck_assert_int_eq(r[i].status, TXN_OK);
		ck_assert_uint_eq(tag_of(fn, i), (uint32_t)i);
	}
	ck_assert_uint_eq(txn_inflight(e), 0);
	ck_assert_uint_eq(txn_queued(e), 0);
	txn_free(e);
	free(fn);
}
END_TEST

START_TEST(t_per_dest_window)
{
	struct fake_net *fn = fake_net_new(0);
	struct txn_engine *e = mk(fn, 16, 2, 100, 2);
	struct done_rec a[5], b[5], c[3];
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	memset(c, 0, sizeof(c));
	for (uint32_t i = 0; i < 5; i++)
		submit(e, IB_MAD_METHOD_GET, ATTR_NI, i, 7, &a[i]);
	for (uint32_t i = 0; i < 5; i++)
		submit(e, IB_MAD_METHOD_GET, ATTR_NI, 100 + i, 3, &b[i]);
	ck_assert_int_eq(fn->n_sent, 4);
	int to_a = 0, to_b = 0;
	for (int k = 0; k < fn->n_sent; k++) {
		if (tag_of(fn, k) < 100)
			to_a++;
		else
			to_b++;
	}
	ck_assert_int_eq(to_a, 2);
	ck_assert_int_eq(to_b, 2);
	ck_assert_uint_eq(txn_queued(e), 6);

	/* requests with no destination are limited by the global window only */
	for (uint32_t i = 0; i < 3; i++)
		submit(e, IB_MAD_METHOD_GET, ATTR_NI, 200 + i, TXN_NO_DEST, &c[i]);
	ck_assert_int_eq(fn->n_sent, 7);

	/* an answer from A lets the next request to A go, and only that */
	uint8_t resp[MAD_SIZE];
	int k0 = tag_of(fn, 0) < 100 ? 0 : 1;
	ck_assert_uint_eq(tag_of(fn, k0), 0);
	fake_response(fn, k0, resp);
	ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 1);
	ck_assert_int_eq(a[0].calls, 1);
	ck_assert_int_eq(fn->n_sent, 8);
	ck_assert_uint_eq(tag_of(fn, 7), 2);
	txn_free(e);
	free(fn);
}
END_TEST

START_TEST(t_tid_low_32_bits)
{
	struct fake_net *fn = fake_net_new(0);
	struct txn_engine *e = mk(fn, 8, 8, 100, 1);
	struct done_rec r;
	memset(&r, 0, sizeof(r));
	uint8_t mad[MAD_SIZE];
	struct mad_addr to;
	smp_init_dr(mad, IB_MAD_METHOD_GET, ATTR_NI, 0, (uint8_t[]){ 0, 1 }, 1);
	mad_set_field64(mad, 0, IB_MAD_TRID_F, 0x1234567812345678ULL);
	smp_dr_address(&to);
	ck_assert_int_eq(txn_submit(e, mad, MAD_SIZE, &to, TXN_NO_DEST,
				    done_record, &r), 0);
	ck_assert_int_eq(fn->n_sent, 1);
	uint64_t tid = tid_of(fn->sent[0]);
	ck_assert_uint_ne(tid, 0x1234567812345678ULL);	/* overwritten */

	/* ibsim rewrites the upper half: still ours */
	uint8_t resp[MAD_SIZE];
	fake_response(fn, 0, resp);
	mad_set_field64(resp, 0, IB_MAD_TRID_F,
			0xdeadbeef00000000ULL | (tid & 0xffffffff));
	ck_assert_uint_ne(tid_of(resp), tid);
	ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 1);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, TXN_OK);
	txn_free(e);
	free(fn);
}
END_TEST

START_TEST(t_wrong_attr_or_request_not_matched)
{
	struct fake_net *fn = fake_net_new(0);
	struct txn_engine *e = mk(fn, 8, 8, 100, 1);
	struct done_rec r;
	memset(&r, 0, sizeof(r));
	submit(e, IB_MAD_METHOD_GET, ATTR_NI, 0, TXN_NO_DEST, &r);

	uint8_t m[MAD_SIZE];
	fake_response(fn, 0, m);
	mad_set_field(m, 0, IB_MAD_ATTRID_F, ATTR_PI);
	ck_assert_int_eq(txn_recv(e, m, MAD_SIZE, &dr_from, 0), 0);
	/* our own request (no response bit) looped back */
	memcpy(m, fn->sent[0], MAD_SIZE);
	ck_assert_int_eq(txn_recv(e, m, MAD_SIZE, &dr_from, 0), 0);
	/* a response whose low TID bits differ */
	fake_response(fn, 0, m);
	mad_set_field64(m, 0, IB_MAD_TRID_F, tid_of(m) ^ 0x10000);
	ck_assert_int_eq(txn_recv(e, m, MAD_SIZE, &dr_from, 0), 0);
	ck_assert_int_eq(r.calls, 0);
	ck_assert_uint_eq(txn_inflight(e), 1);
	ck_assert_uint_eq(txn_get_stats(e)->unsolicited, 3);

	fake_response(fn, 0, m);
	ck_assert_int_eq(txn_recv(e, m, MAD_SIZE, &dr_from, 0), 1);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, TXN_OK);
	txn_free(e);
	free(fn);
}
END_TEST

/*
 * An answer must match its request in everything a forger could get
 * wrong: class, response method, attribute, modifier, and where it comes
 * from (the directed route's hop count, path, DrLIDs and D bit; a
 * LID-routed request's DLID as the answer's SLID).  Each forgery is
 * refused and counted by reason, and the request stays in flight for
 * its real answer.
 */
struct forgery {
	const char *what;
	int reason;
	void (*spoil)(uint8_t *m, struct mad_addr *from);
};

static void f_class(uint8_t *m, struct mad_addr *f) { m[1] = IB_SMI_CLASS; }
static void f_method_get(uint8_t *m, struct mad_addr *f) { m[3] = IB_MAD_METHOD_GET; }
static void f_method_setresp(uint8_t *m, struct mad_addr *f)
{
	m[3] = IB_MAD_METHOD_SET | IB_MAD_RESPONSE;
}
static void f_method_report(uint8_t *m, struct mad_addr *f)
{
	m[3] = IB_MAD_METHOD_REPORT_RESPONSE;
}
static void f_attr(uint8_t *m, struct mad_addr *f)
{
	mad_set_field(m, 0, IB_MAD_ATTRID_F, ATTR_NI);
}
static void f_mod(uint8_t *m, struct mad_addr *f)
{
	mad_set_field(m, 0, IB_MAD_ATTRMOD_F, 7);
}
static void f_hops(uint8_t *m, struct mad_addr *f)
{
	mad_set_field(m, 0, IB_DRSMP_HOPCNT_F, 0);
}
static void f_path(uint8_t *m, struct mad_addr *f) { m[128 + 2] = 9; }
static void f_direction(uint8_t *m, struct mad_addr *f)
{
	mad_set_field(m, 0, IB_DRSMP_DIRECTION_F, 0);
}
static void f_drslid(uint8_t *m, struct mad_addr *f)
{
	mad_set_field(m, 0, IB_DRSMP_DRSLID_F, 5);
}

START_TEST(t_forged_dr_answers_rejected)
{
	static const struct forgery forged[] = {
		{ "class", TXN_MM_CLASS, f_class },
		{ "method Get", TXN_MM_METHOD, f_method_get },
		{ "method SetResp", TXN_MM_METHOD, f_method_setresp },
		{ "method ReportResp", TXN_MM_METHOD, f_method_report },
		{ "attribute", TXN_MM_ATTR, f_attr },
		{ "modifier", TXN_MM_MOD, f_mod },
		{ "hop count", TXN_MM_ADDR, f_hops },
		{ "path", TXN_MM_ADDR, f_path },
		{ "D bit", TXN_MM_ADDR, f_direction },
		{ "DrSLID", TXN_MM_ADDR, f_drslid },
	};
	struct fake_net *fn = fake_net_new(0);
	struct txn_engine *e = mk(fn, 8, 8, 100, 1);
	struct done_rec r;
	memset(&r, 0, sizeof(r));
	uint8_t mad[MAD_SIZE];
	struct mad_addr to;
	smp_init_dr(mad, IB_MAD_METHOD_SET, ATTR_PI, 3, (uint8_t[]){ 0, 1, 4, 2 }, 3);
	smp_dr_address(&to);
	ck_assert_int_eq(txn_submit(e, mad, MAD_SIZE, &to, TXN_NO_DEST,
				    done_record, &r), 0);
	uint64_t before[TXN_MM_N];
	memcpy(before, txn_get_stats(e)->mismatch, sizeof(before));
	for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
		uint8_t m[MAD_SIZE];
		struct mad_addr from = dr_from;
		fake_response(fn, 0, m);
		forged[i].spoil(m, &from);
		ck_assert_msg(txn_recv(e, m, MAD_SIZE, &from, 0) == 0,
			      "forged %s taken", forged[i].what);
		before[forged[i].reason]++;
		ck_assert_msg(txn_get_stats(e)->mismatch[forged[i].reason] ==
			      before[forged[i].reason], "forged %s not counted as %s",
			      forged[i].what, txn_mismatch_name(forged[i].reason));
	}
	/* a truncated SMP answer */
	uint8_t m[MAD_SIZE];
	fake_response(fn, 0, m);
	ck_assert_int_eq(txn_recv(e, m, MAD_SIZE - 1, &dr_from, 0), 0);
	ck_assert_uint_eq(txn_get_stats(e)->mismatch[TXN_MM_LENGTH], 1);
	ck_assert_int_eq(r.calls, 0);
	ck_assert_uint_eq(txn_inflight(e), 1);
	/* the real answer to a Set is a GetResp, and it is still taken */
	fake_response(fn, 0, m);
	ck_assert_uint_eq(m[3], IB_MAD_METHOD_GET_RESPONSE);
	ck_assert_int_eq(txn_recv(e, m, MAD_SIZE, &dr_from, 0), 1);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, TXN_OK);
	txn_free(e);
	free(fn);
}
END_TEST

START_TEST(t_lid_routed_answer_from_its_dlid)
{
	struct fake_net *fn = fake_net_new(0);
	struct txn_engine *e = mk(fn, 8, 8, 100, 1);
	struct done_rec r;
	memset(&r, 0, sizeof(r));
	uint8_t mad[MAD_SIZE], m[MAD_SIZE];
	struct mad_addr to = { .lid = 42 }, from = { .lid = 43 };
	smp_init_lid(mad, IB_MAD_METHOD_GET, ATTR_NI, 0);
	ck_assert_int_eq(txn_submit(e, mad, MAD_SIZE, &to, TXN_NO_DEST,
				    done_record, &r), 0);
	fake_response(fn, 0, m);
	ck_assert_int_eq(txn_recv(e, m, MAD_SIZE, &from, 0), 0);
	ck_assert_int_eq(txn_recv(e, m, MAD_SIZE, &dr_from, 0), 0);
	ck_assert_uint_eq(txn_get_stats(e)->mismatch[TXN_MM_ADDR], 2);
	/* a GMP-sized answer to an SMP */
	from.lid = 42;
	ck_assert_int_eq(txn_recv(e, m, 64, &from, 0), 0);
	ck_assert_uint_eq(txn_get_stats(e)->mismatch[TXN_MM_LENGTH], 1);
	ck_assert_int_eq(txn_recv(e, m, MAD_SIZE, &from, 0), 1);
	ck_assert_int_eq(r.status, TXN_OK);
	txn_free(e);
	free(fn);
}
END_TEST

/* A bounced request must be ours unchanged, not a forged "bounce". */
START_TEST(t_forged_bounce_rejected)
{
	struct fake_net *fn = fake_net_new(0);
	struct txn_engine *e = mk(fn, 8, 8, 100, 0);
	struct done_rec r;
	memset(&r, 0, sizeof(r));
	submit(e, IB_MAD_METHOD_GET, ATTR_NI, 5, TXN_NO_DEST, &r);
	uint8_t m[MAD_SIZE];
	memcpy(m, fn->sent[0], MAD_SIZE);
	mad_set_field(m, 0, IB_MAD_ATTRMOD_F, 6);
	ck_assert_int_eq(txn_recv(e, m, MAD_SIZE, &dr_from, 110), 0);
	ck_assert_int_eq(r.calls, 0);
	memcpy(m, fn->sent[0], MAD_SIZE);
	ck_assert_int_eq(txn_recv(e, m, MAD_SIZE, &dr_from, 110), 1);
	ck_assert_int_eq(r.status, TXN_ERROR);
	txn_free(e);
	free(fn);
}
END_TEST

/* TIDs start at a random value: not 1, not the same in two engines. */
START_TEST(t_tids_start_random)
{
	uint32_t first[4];
	int differ = 0;
	for (int i = 0; i < 4; i++) {
		struct fake_net *fn = fake_net_new(0);
		struct txn_engine *e = mk(fn, 8, 8, 100, 0);
		struct done_rec r;
		memset(&r, 0, sizeof(r));
		submit(e, IB_MAD_METHOD_GET, ATTR_NI, 0, TXN_NO_DEST, &r);
		first[i] = (uint32_t)tid_of(fn->sent[0]);
		ck_assert_uint_ne(first[i], 0);
		if (i && first[i] != first[0])
			differ = 1;
		txn_free(e);
		free(fn);
	}
	ck_assert_msg(first[0] != 1 || first[1] != 1, "TIDs start at 1");
	ck_assert_msg(differ, "four engines started at the same TID 0x%x", first[0]);
}
END_TEST

START_TEST(t_timeout_and_retries)
{
	struct fake_net *fn = fake_net_new(1000);
	struct txn_engine *e = mk(fn, 8, 8, 100, 2);
	struct done_rec r;
	memset(&r, 0, sizeof(r));
	submit(e, IB_MAD_METHOD_GET, ATTR_NI, 0, 5, &r);
	ck_assert_int_eq(fn->n_sent, 1);
	ck_assert_int_eq(txn_next_deadline(e), 1100);

	fn->now_ms = 1099;
	txn_expire(e);
	ck_assert_int_eq(fn->n_sent, 1);
	for (int attempt = 1; attempt <= 2; attempt++) {
		fn->now_ms = 1000 + 100 * (uint64_t)attempt;
		txn_expire(e);
		ck_assert_int_eq(fn->n_sent, attempt + 1);
		ck_assert_int_eq(r.calls, 0);
		/* a retry is the same transaction: same TID */
		ck_assert_uint_eq(tid_of(fn->sent[attempt]), tid_of(fn->sent[0]));
		ck_assert_int_eq(txn_next_deadline(e), (int64_t)fn->now_ms + 100);
	}
	fn->now_ms = 1300;
	txn_expire(e);
	ck_assert_int_eq(fn->n_sent, 3);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, TXN_TIMEOUT);
	ck_assert_uint_eq(r.len, 0);
	ck_assert_uint_eq(txn_inflight(e), 0);
	ck_assert_int_eq(txn_next_deadline(e), -1);

	const struct txn_stats *s = txn_get_stats(e);
	ck_assert_uint_eq(s->all.sent, 3);
	ck_assert_uint_eq(s->all.timeouts, 3);
	ck_assert_uint_eq(s->all.retries, 2);
	ck_assert_uint_eq(s->all.recv, 0);
	ck_assert_uint_eq(s->all.errors, 0);
	ck_assert_uint_eq(s->failed, 1);
	const struct txn_counters *c = attr_counters(e, ATTR_NI);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->timeouts, 3);
	ck_assert_uint_eq(c->retries, 2);

	/* three loss events, a timeout period apart: the window went 8, 4, 2, 1 */
	ck_assert_uint_eq(s->window, 1);
	ck_assert_uint_eq(s->window_cuts, 3);

	/* the destination's window slot was given back: all 8 go, one at a time */
	struct done_rec r2[8];
	memset(r2, 0, sizeof(r2));
	for (uint32_t i = 0; i < 8; i++)
		submit(e, IB_MAD_METHOD_GET, ATTR_NI, i, 5, &r2[i]);
	ck_assert_int_eq(fn->n_sent, 3 + 1);
	uint8_t resp[MAD_SIZE];
	for (int k = 3; k < fn->n_sent; k++) {
		fake_response(fn, k, resp);
		ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 1);
	}
	ck_assert_int_eq(fn->n_sent, 3 + 8);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(r2[i].status, TXN_OK);
	txn_free(e);
	free(fn);
}
END_TEST

/*
 * The window in force: timeouts at the same moment are one loss event and
 * halve it once; answers open it by one per window's worth, up to the
 * configured ceiling, which a new ceiling resets to.
 */
START_TEST(t_window_adapts)
{
	struct fake_net *fn = fake_net_new(0);
	struct txn_engine *e = mk(fn, 16, 256, 100, 5);
	struct done_rec r[120];
	memset(r, 0, sizeof(r));
	for (uint32_t i = 0; i < 120; i++)
		submit(e, IB_MAD_METHOD_GET, ATTR_NI, i, TXN_NO_DEST, &r[i]);
	ck_assert_int_eq(fn->n_sent, 16);
	ck_assert_uint_eq(txn_get_stats(e)->window, 16);

	/* all 16 time out at once: one cut, to 8 (the 16 are resent at once) */
	fn->now_ms = 100;
	txn_expire(e);
	ck_assert_uint_eq(txn_get_stats(e)->window_cuts, 1);
	ck_assert_uint_eq(txn_get_stats(e)->window, 8);
	ck_assert_int_eq(fn->n_sent, 32);
	/* answers free slots, but no new request goes while 8 or more fly */
	uint8_t resp[MAD_SIZE];
	for (int k = 16; k < 23; k++) {
		fake_response(fn, k, resp);
		ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 1);
	}
	ck_assert_int_eq(fn->n_sent, 32);
	ck_assert_uint_eq(txn_inflight(e), 9);
	/* the 8th answer since the cut opens the window to 9: one more goes */
	fake_response(fn, 23, resp);
	ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 1);
	ck_assert_uint_eq(txn_get_stats(e)->window, 9);
	ck_assert_int_eq(fn->n_sent, 33);
	/* from here the window grows by one per window's worth of answers */
	int next = 24;
	while (next < fn->n_sent) {
		fake_response(fn, next++, resp);
		ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 1);
		ck_assert_uint_le(txn_inflight(e), txn_get_stats(e)->window);
	}
	ck_assert_int_eq(fn->n_sent, 16 + 120);
	for (int i = 0; i < 120; i++)
		ck_assert_int_eq(r[i].status, TXN_OK);
	uint32_t w = txn_get_stats(e)->window;
	ck_assert_uint_gt(w, 8);
	ck_assert_uint_le(w, 16);
	/* a second loss within the timeout period of the first is the same event */
	txn_free(e);

	e = mk(fn, 16, 256, 100, 5);
	fn->now_ms = 0;
	for (uint32_t i = 0; i < 16; i++)
		submit(e, IB_MAD_METHOD_GET, ATTR_NI, i, TXN_NO_DEST, &r[i]);
	fn->now_ms = 100;
	txn_expire(e);
	fn->now_ms = 150;	/* nothing due yet; then the retries time out at 200 */
	txn_expire(e);
	fn->now_ms = 199;
	txn_expire(e);
	ck_assert_uint_eq(txn_get_stats(e)->window_cuts, 1);
	fn->now_ms = 200;
	txn_expire(e);
	ck_assert_uint_eq(txn_get_stats(e)->window_cuts, 2);
	ck_assert_uint_eq(txn_get_stats(e)->window, 4);
	struct txn_params p = { .timeout_ms = 100, .retries = 5, .window = 32,
				.window_per_node = 256 };
	txn_set_params(e, &p);
	ck_assert_uint_eq(txn_get_stats(e)->window, 32);
	txn_free(e);
	free(fn);
}
END_TEST

START_TEST(t_answer_after_retry)
{
	struct fake_net *fn = fake_net_new(0);
	struct txn_engine *e = mk(fn, 8, 8, 50, 3);
	struct done_rec r;
	memset(&r, 0, sizeof(r));
	submit(e, IB_MAD_METHOD_GET, ATTR_PI, 9, TXN_NO_DEST, &r);
	fn->now_ms = 50;
	txn_expire(e);
	ck_assert_int_eq(fn->n_sent, 2);
	uint8_t resp[MAD_SIZE];
	fake_response(fn, 1, resp);
	ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 1);
	ck_assert_int_eq(r.status, TXN_OK);
	ck_assert_int_eq(r.calls, 1);
	fn->now_ms = 1000;
	txn_expire(e);
	ck_assert_int_eq(fn->n_sent, 2);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_uint_eq(txn_get_stats(e)->failed, 0);
	txn_free(e);
	free(fn);
}
END_TEST

START_TEST(t_bounce_is_error)
{
	struct fake_net *fn = fake_net_new(0);
	struct txn_engine *e = mk(fn, 8, 8, 100, 2);
	struct done_rec r;
	memset(&r, 0, sizeof(r));
	submit(e, IB_MAD_METHOD_GET, ATTR_NI, 0, 1, &r);
	for (int k = 0; k < 3; k++) {
		uint8_t m[MAD_SIZE];
		memcpy(m, fn->sent[k], MAD_SIZE);	/* the request itself */
		ck_assert_int_eq(txn_recv(e, m, MAD_SIZE, &dr_from, 110), 1);
		if (k < 2) {
			/* retried at once, no timeout needed */
			ck_assert_int_eq(fn->n_sent, k + 2);
			ck_assert_uint_eq(tid_of(fn->sent[k + 1]),
					  tid_of(fn->sent[0]));
			ck_assert_int_eq(r.calls, 0);
		}
	}
	ck_assert_int_eq(fn->n_sent, 3);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, TXN_ERROR);
	ck_assert_uint_eq(txn_inflight(e), 0);
	const struct txn_stats *s = txn_get_stats(e);
	ck_assert_uint_eq(s->all.errors, 3);
	ck_assert_uint_eq(s->all.retries, 2);
	ck_assert_uint_eq(s->all.timeouts, 0);
	ck_assert_uint_eq(s->failed, 1);
	ck_assert_int_eq(txn_next_deadline(e), -1);
	txn_free(e);
	free(fn);
}
END_TEST

START_TEST(t_failed_send_retried_by_timer)
{
	struct fake_net *fn = fake_net_new(0);
	struct txn_engine *e = mk(fn, 8, 8, 100, 1);
	struct done_rec r;
	memset(&r, 0, sizeof(r));
	fn->fail_sends = 1;
	submit(e, IB_MAD_METHOD_GET, ATTR_NI, 0, TXN_NO_DEST, &r);
	ck_assert_int_eq(r.calls, 0);
	ck_assert_uint_eq(txn_get_stats(e)->all.errors, 1);
	fn->now_ms = 100;
	txn_expire(e);
	ck_assert_int_eq(fn->n_sent, 2);
	uint8_t resp[MAD_SIZE];
	fake_response(fn, 1, resp);
	ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 1);
	ck_assert_int_eq(r.status, TXN_OK);
	txn_free(e);
	free(fn);
}
END_TEST


/* A callback that tries to submit again while everything is cancelled. */
struct resubmitter {
	struct txn_engine *e;
	int calls, rc;
};

static void resubmit_cb(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct resubmitter *r = arg;
	uint8_t mad[MAD_SIZE];
	uint8_t path[2] = { 0, 1 };
	struct mad_addr to;
	r->calls++;
	smp_init_dr(mad, IB_MAD_METHOD_GET, ATTR_NI, 99, path, 1);
	smp_dr_address(&to);
	r->rc = txn_submit(r->e, mad, MAD_SIZE, &to, 0, resubmit_cb, r);
}

START_TEST(t_cancel_refuses_new_work)
{
	struct fake_net *fn = fake_net_new(0);
	struct txn_engine *e = mk(fn, 1, 1, 100, 2);
	struct resubmitter r[3];
	memset(r, 0, sizeof(r));
	for (int i = 0; i < 3; i++) {
		uint8_t mad[MAD_SIZE];
		uint8_t path[2] = { 0, 1 };
		struct mad_addr to;
		r[i].e = e;
		smp_init_dr(mad, IB_MAD_METHOD_GET, ATTR_NI, (uint32_t)i, path, 1);
		smp_dr_address(&to);
		ck_assert_int_eq(txn_submit(e, mad, MAD_SIZE, &to, 0, resubmit_cb,
					    &r[i]), 0);
	}
	txn_cancel_all(e);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(r[i].calls, 1);
		ck_assert_int_eq(r[i].rc, -1);	/* refused while cancelling */
	}
	ck_assert_uint_eq(txn_queued(e), 0);
	ck_assert_uint_eq(txn_inflight(e), 0);
	/* the destination is usable again: a new request goes out at once */
	int sent = fn->n_sent;
	struct done_rec z;
	memset(&z, 0, sizeof(z));
	submit(e, IB_MAD_METHOD_GET, ATTR_NI, 7, 0, &z);
	ck_assert_int_eq(fn->n_sent, sent + 1);
	ck_assert_uint_eq(txn_inflight(e), 1);
	txn_free(e);
	free(fn);
}
END_TEST

START_TEST(t_cancel_all)
{
	struct fake_net *fn = fake_net_new(0);
	struct txn_engine *e = mk(fn, 3, 2, 100, 2);
	txn_set_arm(e, fake_arm, fn);
	struct done_rec r[7];
	memset(r, 0, sizeof(r));
	for (uint32_t i = 0; i < 7; i++)
		submit(e, IB_MAD_METHOD_GET, ATTR_NI, i, i < 4 ? 0 : TXN_NO_DEST,
		       &r[i]);
	ck_assert_int_eq(fn->n_sent, 3);
	ck_assert_int_eq(fn->armed, 100);
	txn_cancel_all(e);
	for (int i = 0; i < 7; i++) {
		ck_assert_int_eq(r[i].calls, 1);
		ck_assert_int_eq(r[i].status, TXN_CANCELLED);
	}
	ck_assert_int_eq(fn->n_sent, 3);	/* queued ones never went */
	ck_assert_uint_eq(txn_inflight(e), 0);
	ck_assert_uint_eq(txn_queued(e), 0);
	ck_assert_int_eq(txn_next_deadline(e), -1);
	ck_assert_int_eq(fn->armed, -1);
	/* a late answer to a cancelled request matches nothing */
	uint8_t resp[MAD_SIZE];
	fake_response(fn, 0, resp);
	ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 0);
	/* and the table still works afterwards */
	struct done_rec z;
	memset(&z, 0, sizeof(z));
	submit(e, IB_MAD_METHOD_GET, ATTR_NI, 50, 0, &z);
	ck_assert_int_eq(fn->n_sent, 4);
	fake_response(fn, 3, resp);
	ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 1);
	ck_assert_int_eq(z.status, TXN_OK);
	txn_free(e);
	free(fn);
}
END_TEST

START_TEST(t_arm_reports_earliest_deadline)
{
	struct fake_net *fn = fake_net_new(500);
	struct txn_engine *e = mk(fn, 8, 8, 100, 0);
	txn_set_arm(e, fake_arm, fn);
	ck_assert_int_eq(fn->armed, -1);
	struct done_rec a, b;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	submit(e, IB_MAD_METHOD_GET, ATTR_NI, 0, TXN_NO_DEST, &a);
	ck_assert_int_eq(fn->armed, 600);
	int n = fn->n_armed;
	fn->now_ms = 550;
	submit(e, IB_MAD_METHOD_GET, ATTR_NI, 1, TXN_NO_DEST, &b);
	ck_assert_int_eq(fn->armed, 600);	/* A still expires first */
	ck_assert_int_eq(fn->n_armed, n);	/* and nothing changed */
	ck_assert_int_eq(txn_next_deadline(e), 600);
	uint8_t resp[MAD_SIZE];
	fake_response(fn, 0, resp);
	ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 1);
	ck_assert_int_eq(fn->armed, 650);
	fn->now_ms = 650;
	txn_expire(e);		/* retries = 0: B fails at once */
	ck_assert_int_eq(b.calls, 1);
	ck_assert_int_eq(b.status, TXN_TIMEOUT);
	ck_assert_int_eq(fn->armed, -1);
	txn_free(e);
	free(fn);
}
END_TEST

START_TEST(t_stats_per_attribute)
{
	struct fake_net *fn = fake_net_new(0);
	struct txn_engine *e = mk(fn, 16, 16, 100, 1);
	struct done_rec r[5];
	memset(r, 0, sizeof(r));
	for (uint32_t i = 0; i < 3; i++)
		submit(e, IB_MAD_METHOD_GET, ATTR_NI, i, TXN_NO_DEST, &r[i]);
	for (uint32_t i = 3; i < 5; i++)
		submit(e, IB_MAD_METHOD_GET, ATTR_PI, i, TXN_NO_DEST, &r[i]);
	uint8_t resp[MAD_SIZE];
	for (int k = 0; k < 4; k++) {	/* the last PortInfo times out */
		fake_response(fn, k, resp);
		ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 1);
	}
	fn->now_ms = 100;
	txn_expire(e);
	fn->now_ms = 200;
	txn_expire(e);
	ck_assert_int_eq(r[4].status, TXN_TIMEOUT);

	const struct txn_counters *ni = attr_counters(e, ATTR_NI);
	const struct txn_counters *pi = attr_counters(e, ATTR_PI);
	ck_assert_ptr_nonnull(ni);
	ck_assert_ptr_nonnull(pi);
	ck_assert_uint_eq(ni->sent, 3);
	ck_assert_uint_eq(ni->recv, 3);
	ck_assert_uint_eq(ni->timeouts, 0);
	ck_assert_uint_eq(ni->retries, 0);
	ck_assert_uint_eq(pi->sent, 3);
	ck_assert_uint_eq(pi->recv, 1);
	ck_assert_uint_eq(pi->timeouts, 2);
	ck_assert_uint_eq(pi->retries, 1);
	const struct txn_stats *s = txn_get_stats(e);
	ck_assert_int_eq(s->n_attrs, 2);
	ck_assert_uint_eq(s->all.sent, 6);
	ck_assert_uint_eq(s->all.recv, 4);
	ck_assert_str_eq(txn_attr_name(ATTR_NI), "NodeInfo");
	ck_assert_str_eq(txn_attr_name(ATTR_PI), "PortInfo");

	txn_reset_stats(e);
	ck_assert_uint_eq(txn_get_stats(e)->all.sent, 0);
	ck_assert_int_eq(txn_get_stats(e)->n_attrs, 0);
	txn_free(e);
	free(fn);
}
END_TEST

START_TEST(t_sets_counted_once)
{
	struct fake_net *fn = fake_net_new(0);
	struct txn_engine *e = mk(fn, 8, 8, 100, 2);
	struct done_rec set, get;
	memset(&set, 0, sizeof(set));
	memset(&get, 0, sizeof(get));
	submit(e, IB_MAD_METHOD_SET, ATTR_PI, 1, TXN_NO_DEST, &set);
	submit(e, IB_MAD_METHOD_GET, ATTR_PI, 2, TXN_NO_DEST, &get);
	for (int t = 1; t <= 3; t++) {
		fn->now_ms = 100 * (uint64_t)t;
		txn_expire(e);
	}
	ck_assert_int_eq(set.status, TXN_TIMEOUT);
	ck_assert_int_eq(get.status, TXN_TIMEOUT);
	ck_assert_int_eq(fn->n_sent, 6);
	ck_assert_uint_eq(txn_get_stats(e)->sets, 1);
	ck_assert_uint_eq(txn_get_stats(e)->all.sent, 6);
	txn_free(e);
	free(fn);
}
END_TEST

START_TEST(t_late_response)
{
	struct fake_net *fn = fake_net_new(0);
	struct txn_engine *e = mk(fn, 8, 8, 100, 0);
	struct done_rec a, b;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	submit(e, IB_MAD_METHOD_GET, ATTR_NI, 0, TXN_NO_DEST, &a);
	submit(e, IB_MAD_METHOD_GET, ATTR_NI, 1, TXN_NO_DEST, &b);
	uint8_t resp[MAD_SIZE];
	fake_response(fn, 0, resp);
	ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 1);
	/* a duplicate of the same answer */
	ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 0);
	ck_assert_int_eq(a.calls, 1);
	/* an answer after the transaction timed out */
	fn->now_ms = 100;
	txn_expire(e);
	ck_assert_int_eq(b.status, TXN_TIMEOUT);
	fake_response(fn, 1, resp);
	ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 0);
	ck_assert_int_eq(b.calls, 1);
	/* and after its slot was reused by a new transaction */
	struct done_rec c;
	memset(&c, 0, sizeof(c));
	submit(e, IB_MAD_METHOD_GET, ATTR_NI, 2, TXN_NO_DEST, &c);
	ck_assert_uint_ne(tid_of(fn->sent[2]), tid_of(fn->sent[0]));
	ck_assert_uint_ne(tid_of(fn->sent[2]), tid_of(fn->sent[1]));
	fake_response(fn, 0, resp);
	ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 0);
	ck_assert_int_eq(c.calls, 0);
	ck_assert_uint_eq(txn_get_stats(e)->unsolicited, 3);
	txn_free(e);
	free(fn);
}
END_TEST

/* A completion that submits a follow-up, as discovery does. */
struct chain {
	struct txn_engine *e;
	int left;
	int done;
};

static void chain_done(void *arg, int status, const uint8_t *resp,
		       size_t len)
{
	struct chain *c = arg;
	uint8_t mad[MAD_SIZE];
	struct mad_addr to;
	ck_assert_int_eq(status, TXN_OK);
	c->done++;
	if (c->left-- <= 0)
		return;
	smp_init_dr(mad, IB_MAD_METHOD_GET, ATTR_NI, 0, (uint8_t[]){ 0, 1 }, 1);
	smp_dr_address(&to);
	ck_assert_int_eq(txn_submit(c->e, mad, MAD_SIZE, &to, 0, chain_done, c),
			 0);
}

START_TEST(t_submit_from_callback)
{
	struct fake_net *fn = fake_net_new(0);
	struct txn_engine *e = mk(fn, 1, 1, 100, 0);
	struct chain c = { e, 5, 0 };
	uint8_t mad[MAD_SIZE], resp[MAD_SIZE];
	struct mad_addr to;
	smp_init_dr(mad, IB_MAD_METHOD_GET, ATTR_NI, 0, (uint8_t[]){ 0, 1 }, 1);
	smp_dr_address(&to);
	ck_assert_int_eq(txn_submit(e, mad, MAD_SIZE, &to, 0, chain_done, &c), 0);
	for (int k = 0; k < 6; k++) {
		ck_assert_int_eq(fn->n_sent, k + 1);
		fake_response(fn, k, resp);
		ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 1);
	}
	ck_assert_int_eq(c.done, 6);
	ck_assert_uint_eq(txn_inflight(e), 0);
	txn_free(e);
	free(fn);
}
END_TEST

/* Enough traffic to grow the pool past its first allocation. */
START_TEST(t_many)
{
	struct fake_net *fn = fake_net_new(0);
	struct txn_engine *e = mk(fn, 64, 4, 100, 0);
	enum { N = 3000 };
	struct done_rec *r = calloc(N, sizeof(*r));
	ck_assert_ptr_nonnull(r);
	for (uint32_t i = 0; i < N; i++)
		submit(e, IB_MAD_METHOD_GET, ATTR_NI, i, i % 50, &r[i]);
	ck_assert_uint_eq(txn_inflight(e), 64);
	ck_assert_uint_eq(txn_queued(e), N - 64);
	int answered = 0;
	uint8_t resp[MAD_SIZE];
	while (fn->n_sent > 0) {
		/* answer the newest in flight, then forget the record */
		int k = fn->n_sent - 1;
		fake_response(fn, k, resp);
		fn->n_sent--;
		ck_assert_int_eq(txn_recv(e, resp, MAD_SIZE, &dr_from, 0), 1);
		answered++;
	}
	ck_assert_int_eq(answered, N);
	for (uint32_t i = 0; i < N; i++)
		ck_assert_int_eq(r[i].calls, 1);
	free(r);
	txn_free(e);
	free(fn);
}
END_TEST

/*
 * The M_Key stamp: every SMP (directed-route and LID-routed) is sent with
 * the key the hook gives for its target, on the first attempt and on every
 * retry (asked again: a key learnt meanwhile is used); a GMP is left
 * alone; without a hook the builder's 0 goes out.
 */
struct stamp_rec {
	uint64_t key;
	int calls;
	uint8_t last_hops;
	uint32_t last_lid;
};

static uint64_t stamp_key(void *arg, const uint8_t *mad,
			  const struct mad_addr *to)
{
	struct stamp_rec *s = arg;
	s->calls++;
	s->last_hops = mad[7];
	s->last_lid = to->lid;
	return s->key;
}

static uint64_t mkey_of(const uint8_t *mad)
{
	uint64_t v = 0;
	for (int i = 24; i < 32; i++)
		v = v << 8 | mad[i];
	return v;
}

START_TEST(t_mkey_stamp)
{
	struct fake_net *fn = fake_net_new(0);
	struct txn_engine *e = mk(fn, 8, 8, 100, 1);
	struct done_rec r[4];
	memset(r, 0, sizeof(r));

	submit(e, IB_MAD_METHOD_GET, ATTR_NI, 0, 0, &r[0]);
	ck_assert_uint_eq(mkey_of(fn->sent[0]), 0);	/* no hook */

	struct stamp_rec st = { .key = 0x0123456789abcdefULL };
	txn_set_stamp(e, stamp_key, &st);
	submit(e, IB_MAD_METHOD_SET, ATTR_PI, 1, 1, &r[1]);
	ck_assert_int_eq(fn->n_sent, 2);
	ck_assert_int_eq(st.calls, 1);
	ck_assert_uint_eq(st.last_hops, 1);	/* the path is final when asked */
	ck_assert_uint_eq(mkey_of(fn->sent[1]), 0x0123456789abcdefULL);
	ck_assert_uint_eq(fn->sent[1][24], 0x01);	/* big-endian */

	/* a retry asks again */
	st.key = 0x1111222233334444ULL;
	fn->now_ms = 100;
	txn_expire(e);
	ck_assert_int_eq(fn->n_sent, 4);	/* both retried */
	ck_assert_int_eq(st.calls, 3);
	ck_assert_uint_eq(mkey_of(fn->sent[2]), 0x1111222233334444ULL);
	ck_assert_uint_eq(mkey_of(fn->sent[3]), 0x1111222233334444ULL);

	/* LID-routed SMP: stamped, the hook sees the DLID */
	uint8_t mad[MAD_SIZE];
	struct mad_addr to = { .lid = 7 };
	smp_init_lid(mad, IB_MAD_METHOD_GET, ATTR_PI, 1);
	ck_assert_int_eq(txn_submit(e, mad, MAD_SIZE, &to, 2, done_record, &r[2]), 0);
	ck_assert_int_eq(fn->n_sent, 5);
	ck_assert_uint_eq(st.last_lid, 7);
	ck_assert_uint_eq(mkey_of(fn->sent[4]), 0x1111222233334444ULL);

	/* a GMP (PerfMgt) is not an SMP: bytes 24-31 are its own */
	memcpy(mad, fn->sent[4], MAD_SIZE);
	mad[1] = IB_PERFORMANCE_CLASS;
	memset(mad + 24, 0xa5, 8);
	int calls = st.calls;
	ck_assert_int_eq(txn_submit(e, mad, MAD_SIZE, &to, 3, done_record, &r[3]), 0);
	ck_assert_int_eq(fn->n_sent, 6);
	ck_assert_int_eq(st.calls, calls);
	ck_assert_uint_eq(mkey_of(fn->sent[5]), 0xa5a5a5a5a5a5a5a5ULL);
	txn_cancel_all(e);
	txn_free(e);
	free(fn);
}
END_TEST

static Suite *txn_suite(void)
{
	Suite *s = suite_create("txn");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, t_global_window);
	tcase_add_test(tc, t_per_dest_window);
	tcase_add_test(tc, t_tid_low_32_bits);
	tcase_add_test(tc, t_wrong_attr_or_request_not_matched);
	tcase_add_test(tc, t_forged_dr_answers_rejected);
	tcase_add_test(tc, t_lid_routed_answer_from_its_dlid);
	tcase_add_test(tc, t_forged_bounce_rejected);
	tcase_add_test(tc, t_tids_start_random);
	tcase_add_test(tc, t_timeout_and_retries);
	tcase_add_test(tc, t_window_adapts);
	tcase_add_test(tc, t_answer_after_retry);
	tcase_add_test(tc, t_bounce_is_error);
	tcase_add_test(tc, t_failed_send_retried_by_timer);
	tcase_add_test(tc, t_cancel_all);
	tcase_add_test(tc, t_cancel_refuses_new_work);
	tcase_add_test(tc, t_arm_reports_earliest_deadline);
	tcase_add_test(tc, t_stats_per_attribute);
	tcase_add_test(tc, t_sets_counted_once);
	tcase_add_test(tc, t_late_response);
	tcase_add_test(tc, t_submit_from_callback);
	tcase_add_test(tc, t_many);
	tcase_add_test(tc, t_mkey_stamp);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(txn_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
