/*
 * Test doubles shared by the unit tests: a MAD transport that records
 * what is sent instead of sending it, a clock the test moves by hand, and
 * a recorder for transaction completions.  Header-only (static functions)
 * so that each test program stays a single translation unit.
 */
#ifndef IBSMD_TEST_FAKES_H
#define IBSMD_TEST_FAKES_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mad/dispatch.h"
#include "mad/transport.h"

#define FAKE_MAX_SENT 256

struct fake_net {
	struct mad_transport t;
	uint8_t sent[FAKE_MAX_SENT][MAD_SIZE];
	size_t sent_len[FAKE_MAX_SENT];
	struct mad_addr sent_to[FAKE_MAX_SENT];
	int n_sent;
	int fail_sends;		/* the next n sends fail with -1 */
	uint64_t now_ms;	/* the fake clock */
	int64_t armed;		/* last deadline the arm callback reported */
	int n_armed;		/* how many times it was called */
};

static inline int fake_send(void *ctx, const uint8_t *mad, size_t len,
			    const struct mad_addr *to)
{
	struct fake_net *fn = ctx;
	ck_assert_int_lt(fn->n_sent, FAKE_MAX_SENT);
	ck_assert_uint_le(len, MAD_SIZE);
	memcpy(fn->sent[fn->n_sent], mad, len);
	fn->sent_len[fn->n_sent] = len;
	fn->sent_to[fn->n_sent] = *to;
	fn->n_sent++;
	if (fn->fail_sends > 0) {
		fn->fail_sends--;
		return -1;
	}
	return 0;
}

static inline uint64_t fake_clock(void *arg)
{
	return ((struct fake_net *)arg)->now_ms;
}

static inline void fake_arm(void *arg, int64_t deadline_ms)
{
	struct fake_net *fn = arg;
	fn->armed = deadline_ms;
	fn->n_armed++;
}

static inline struct fake_net *fake_net_new(uint64_t start_ms)
{
	struct fake_net *fn = calloc(1, sizeof(*fn));
	ck_assert_ptr_nonnull(fn);
	fn->t.ctx = fn;
	fn->t.send = fake_send;
	fn->now_ms = start_ms;
	fn->armed = -1;
	return fn;
}

/* One completion callback's record. */
struct done_rec {
	int calls;
	int status;
	int seq;		/* order of completion, from *counter */
	int *counter;
	uint8_t resp[MAD_SIZE];
	size_t len;
};

static inline void done_record(void *arg, int status,
			       const uint8_t *resp, size_t len)
{
	struct done_rec *r = arg;
	r->calls++;
	r->status = status;
	r->len = len;
	if (resp)
		memcpy(r->resp, resp, len < MAD_SIZE ? len : MAD_SIZE);
	if (r->counter)
		r->seq = ++*r->counter;
}

/* A response to sent MAD k, as a responder would send it back. */
static inline void fake_response(const struct fake_net *fn, int k,
				 uint8_t *out)
{
	ck_assert_int_lt(k, fn->n_sent);
	memcpy(out, fn->sent[k], MAD_SIZE);
	mad_make_response(out, 0);
}

#endif
