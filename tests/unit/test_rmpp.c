/*
 * RMPP (mad/rmpp.c) sender and receiver against each other over the
 * emulator: two hosts of a fabric ibsmd brought up, multi-segment
 * messages, lost DATA and lost ACKs (one chosen packet, and the seeded
 * loss model), out-of-window and malformed segments from a raw host,
 * ABORT after the retries, the total timeout, ABORT and STOP from the
 * receiver.  The assertions are on what arrives and on the counters.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/rmpp.h"
#include "mad/sa.h"

#include "emu_testlib.h"

#define BIG 51200	/* 50 KB: 256 segments */

/* A transport in front of a host's that loses chosen RMPP packets once. */
struct lossy {
	struct mad_transport t;
	struct mad_transport *real;
	uint8_t type;		/* RMPP type to lose (0: none) */
	uint32_t seg;		/* its SegmentNumber */
	int lost;
};

static int lossy_send(void *ctx, const uint8_t *mad, size_t len,
		      const struct mad_addr *to)
{
	struct lossy *l = ctx;
	if (l->type && !l->lost && rmpp_type(mad) == l->type && rmpp_seg(mad) == l->seg) {
		l->lost = 1;
		return 0;	/* gone on the wire */
	}
	return mad_transport_send(l->real, mad, len, to);
}

/* A host that speaks RMPP. */
struct peer {
	struct emu_host h;
	struct lossy wire;
	struct rmpp *r;
	int msgs;
	uint8_t hdr[SA_HDR_SIZE];
	uint8_t *msg;
	size_t len;
	uint32_t from;
};

static void on_msg(void *arg, const uint8_t *hdr, const uint8_t *payload,
		   size_t len, const struct mad_addr *from)
{
	struct peer *p = arg;
	p->msgs++;
	memcpy(p->hdr, hdr, SA_HDR_SIZE);
	free(p->msg);
	p->msg = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(p->msg);
	memcpy(p->msg, payload, len);
	p->len = len;
	p->from = from->lid;
}

struct sent {
	int done;
	int result;
};

static void on_done(void *arg, int result)
{
	struct sent *s = arg;
	s->done++;
	s->result = result;
}

static void peer_up(struct emu_net *n, struct peer *p, int host,
		    const struct rmpp_params *par)
{
	emu_hosts_attach(n, &p->h, host, 1);
	p->wire.real = &p->h.t;
	p->wire.t = p->h.t;
	p->wire.t.ctx = &p->wire;
	p->wire.t.send = lossy_send;
	p->r = rmpp_new(n->base, &p->wire.t, par);
	ck_assert_ptr_nonnull(p->r);
	rmpp_set_receiver(p->r, on_msg, p);
	mad_dispatch_set_rmpp(p->h.d, rmpp_hook, p->r);
}

static void peer_down(struct peer *p)
{
	rmpp_free(p->r);
	emu_hosts_detach(&p->h, 1);
	free(p->msg);
}

static uint8_t *pattern(size_t len, unsigned seed)
{
	uint8_t *b = malloc(len);
	ck_assert_ptr_nonnull(b);
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(i * 31 + seed + (i >> 8));
	return b;
}

static void make_hdr(uint8_t *hdr, uint64_t tid)
{
	sa_init_request(hdr, SA_METHOD_GET_TABLE_RESP, tid, SA_ATTR_PATH_REC, 0, 0,
			NULL, 0);
	sa_put16(hdr + 44, SA_SIZE_PATH_REC / 8);
}

static const struct rmpp_params fast = { .window = 32, .timeout_ms = 30,
					 .retries = 4, .total_ms = 5000 };

/* A sends len bytes to B; returns the sender's result. */
static int transfer(struct emu_net *n, struct peer *a, struct peer *b,
		    const uint8_t *data, size_t len, uint64_t tid, unsigned ms)
{
	uint8_t hdr[MAD_SIZE];
	struct sent s = { 0, 0 };
	struct mad_addr to = { .lid = b->h.lid, .qpn = 1 };
	make_hdr(hdr, tid);
	ck_assert_int_eq(rmpp_send(a->r, hdr, data, len, &to, on_done, &s), 0);
	ck_assert_int_eq(emu_run_until(n->base, &s.done, ms), 1);
	ck_assert_int_eq(s.done, 1);
	return s.result;
}

static void assert_delivered(const struct peer *a, const struct peer *b,
			     const uint8_t *data, size_t len, uint64_t tid)
{
	ck_assert_int_eq(b->msgs, 1);
	ck_assert_uint_eq(b->len, len);
	ck_assert_int_eq(memcmp(b->msg, data, len), 0);
	ck_assert_uint_eq(mad_tid(b->hdr), tid);
	ck_assert_uint_eq(mad_method(b->hdr), SA_METHOD_GET_TABLE_RESP);
	ck_assert_uint_eq(mad_attr_id(b->hdr), SA_ATTR_PATH_REC);
	ck_assert_uint_eq(b->from, a->h.lid);
}

START_TEST(t_big_clean)
{
	struct emu_net n;
	struct peer a = { 0 }, b = { 0 };
	emu_net_up(&n);
	peer_up(&n, &a, 3, &fast);
	peer_up(&n, &b, 10, &fast);
	uint8_t *data = pattern(BIG, 1);
	ck_assert_int_eq(transfer(&n, &a, &b, data, BIG, 0x1234, 3000), 0);
	assert_delivered(&a, &b, data, BIG, 0x1234);
	const struct rmpp_stats *sa = rmpp_get_stats(a.r), *sb = rmpp_get_stats(b.r);
	ck_assert_uint_eq(sa->sent_msgs, 1);
	ck_assert_uint_eq(sa->sent_segs, BIG / SA_DATA_SIZE);
	ck_assert_uint_eq(sa->resent_segs, 0);
	ck_assert_uint_eq(sa->completed, 1);
	ck_assert_uint_eq(sb->completed, 1);
	/* an ACK after segment 1, one per window of 32, one for the last */
	ck_assert_uint_eq(sb->acks_sent, 1 + (BIG / SA_DATA_SIZE - 1) / 32 + 1);
	ck_assert_uint_eq(sa->acks_recv, sb->acks_sent);
	ck_assert_uint_eq(sa->dropped + sb->dropped, 0);
	ck_assert_uint_eq(rmpp_active(a.r) + rmpp_active(b.r), 0);
	ck_assert_uint_eq(emu_violations(n.e), 0);
	/* an odd size and an empty one */
	ck_assert_int_eq(transfer(&n, &a, &b, data, 4321, 0x1235, 3000), 0);
	ck_assert_int_eq(b.msgs, 2);
	ck_assert_uint_eq(b.len, 4321);
	ck_assert_int_eq(memcmp(b.msg, data, 4321), 0);
	ck_assert_int_eq(transfer(&n, &a, &b, NULL, 0, 0x1236, 3000), 0);
	ck_assert_int_eq(emu_run_until(n.base, &(int){ 0 }, 50), 0);
	ck_assert_int_eq(b.msgs, 3);
	ck_assert_uint_eq(b.len, 0);
	free(data);
	peer_down(&a);
	peer_down(&b);
	emu_net_down(&n);
}
END_TEST

START_TEST(t_lost_data_segment)
{
	struct emu_net n;
	struct peer a = { 0 }, b = { 0 };
	emu_net_up(&n);
	peer_up(&n, &a, 3, &fast);
	peer_up(&n, &b, 10, &fast);
	a.wire.type = RMPP_TYPE_DATA;
	a.wire.seg = 40;
	uint8_t *data = pattern(BIG, 2);
	ck_assert_int_eq(transfer(&n, &a, &b, data, BIG, 77, 3000), 0);
	ck_assert_int_eq(a.wire.lost, 1);
	assert_delivered(&a, &b, data, BIG, 77);
	const struct rmpp_stats *sa = rmpp_get_stats(a.r), *sb = rmpp_get_stats(b.r);
	/* segments 34..65 were out after the ACK of 33: 40..65 again */
	ck_assert_uint_eq(sa->resent_segs, 65 - 34 + 1);
	ck_assert_uint_eq(sb->dropped, 65 - 40);	/* the gap after 40 */
	ck_assert_uint_eq(sa->completed, 1);
	free(data);
	peer_down(&a);
	peer_down(&b);
	emu_net_down(&n);
}
END_TEST

static void lost_ack(uint32_t seg, uint64_t resent)
{
	struct emu_net n;
	struct peer a = { 0 }, b = { 0 };
	emu_net_up(&n);
	peer_up(&n, &a, 3, &fast);
	peer_up(&n, &b, 10, &fast);
	b.wire.type = RMPP_TYPE_ACK;
	b.wire.seg = seg;
	uint8_t *data = pattern(BIG, 3);
	ck_assert_int_eq(transfer(&n, &a, &b, data, BIG, 99, 3000), 0);
	ck_assert_int_eq(b.wire.lost, 1);
	/* the receiver lingers: run on so that a duplicate would show */
	ck_assert_int_eq(emu_run_until(n.base, &(int){ 0 }, 100), 0);
	assert_delivered(&a, &b, data, BIG, 99);
	const struct rmpp_stats *sa = rmpp_get_stats(a.r), *sb = rmpp_get_stats(b.r);
	ck_assert_uint_eq(sa->resent_segs, resent);
	ck_assert_uint_eq(sb->acks_sent, 1 + (BIG / SA_DATA_SIZE - 1) / 32 + 1 + 1);
	ck_assert_uint_eq(sb->completed, 1);
	free(data);
	peer_down(&a);
	peer_down(&b);
	emu_net_down(&n);
}

START_TEST(t_lost_ack)
{
	/* the ACK of 33 (granting 34..65): 2..33 go again, one re-ACK */
	lost_ack(33, 32);
}
END_TEST

START_TEST(t_lost_last_ack)
{
	/* the final ACK: the last window (226..256) again, re-ACKed once */
	lost_ack(BIG / SA_DATA_SIZE, BIG / SA_DATA_SIZE - 226 + 1);
}
END_TEST

START_TEST(t_seeded_loss)
{
	struct emu_net n;
	struct peer a = { 0 }, b = { 0 };
	struct rmpp_params par = fast;
	par.retries = 20;
	emu_net_up(&n);
	peer_up(&n, &a, 3, &par);
	peer_up(&n, &b, 10, &par);
	emu_set_seed(n.e, 7);
	emu_set_loss(n.e, 3.0);
	ck_assert_int_eq(emu_set_port_loss(n.e, b.h.guid, 0, 5.0), 0);
	uint8_t *data = pattern(BIG, 4);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(transfer(&n, &a, &b, data, BIG, 500 + i, 20000), 0);
		ck_assert_int_eq(b.msgs, i + 1);
		ck_assert_uint_eq(b.len, BIG);
		ck_assert_int_eq(memcmp(b.msg, data, BIG), 0);
	}
	struct emu_counters c;
	emu_get_counters(n.e, &c);
	ck_assert_uint_gt(c.dropped_fault, 10);
	ck_assert_uint_gt(rmpp_get_stats(a.r)->resent_segs, 0);
	ck_assert_uint_eq(rmpp_get_stats(a.r)->failed, 0);
	ck_assert_uint_eq(emu_violations(n.e), 0);
	free(data);
	peer_down(&a);
	peer_down(&b);
	emu_net_down(&n);
}
END_TEST

/* A sends 1000 bytes to H7, which has a LID and nobody attached. */
static const struct rmpp_stats *to_nobody(struct emu_net *n, struct peer *a,
					  const struct rmpp_params *par, int busy)
{
	uint8_t hdr[MAD_SIZE], data[1000] = { 1 };
	struct sent s = { 0, 0 };
	emu_net_up(n);
	peer_up(n, a, 3, par);
	struct mad_addr to = { .lid = (uint32_t)emu_port_lid(n->e, 0x101c, 1), .qpn = 1 };
	make_hdr(hdr, 5);
	ck_assert_int_eq(rmpp_send(a->r, hdr, data, sizeof(data), &to, on_done, &s), 0);
	ck_assert_int_eq(rmpp_active(a->r), 1);
	if (busy) {
		/* the same answer again while it is in transfer: refused */
		ck_assert_int_eq(rmpp_send(a->r, hdr, data, sizeof(data), &to, on_done, &s), -1);
		ck_assert_int_eq(errno, EBUSY);
	}
	ck_assert_int_eq(emu_run_until(n->base, &s.done, 2000), 1);
	ck_assert_int_eq(s.result, -ETIMEDOUT);
	ck_assert_uint_eq(rmpp_active(a->r), 0);
	return rmpp_get_stats(a->r);
}

START_TEST(t_abort_after_retries)
{
	struct emu_net n;
	struct peer a = { 0 };
	struct rmpp_params par = { .window = 8, .timeout_ms = 20, .retries = 2,
				   .total_ms = 10000 };
	const struct rmpp_stats *sa = to_nobody(&n, &a, &par, 1);
	ck_assert_uint_eq(sa->sent_segs, 1);	/* the window is 1 until an ACK */
	ck_assert_uint_eq(sa->resent_segs, 2);
	ck_assert_uint_eq(sa->aborts_sent, 1);
	ck_assert_uint_eq(sa->failed, 1);
	peer_down(&a);
	emu_net_down(&n);
}
END_TEST

START_TEST(t_total_timeout)
{
	struct emu_net n;
	struct peer a = { 0 };
	struct rmpp_params par = { .window = 8, .timeout_ms = 10, .retries = 1000,
				   .total_ms = 60 };
	const struct rmpp_stats *sa = to_nobody(&n, &a, &par, 0);
	ck_assert_uint_ge(sa->resent_segs, 3);
	ck_assert_uint_le(sa->resent_segs, 8);
	ck_assert_uint_eq(sa->aborts_sent, 1);
	peer_down(&a);
	emu_net_down(&n);
}
END_TEST

/* A raw host: what it receives, unparsed. */
struct raw {
	struct emu_host h;
	int n;
	uint8_t got[32][MAD_SIZE];
};

static void raw_recv(void *arg, const uint8_t *mad, size_t len,
		     const struct mad_addr *from, int status)
{
	struct raw *r = arg;
	(void)from;
	(void)status;
	if (r->n < 32)
		memcpy(r->got[r->n], mad, len < MAD_SIZE ? len : MAD_SIZE);
	r->n++;
}

static void raw_up(struct emu_net *n, struct raw *r, int host)
{
	char err[256] = "";
	memset(r, 0, sizeof(*r));
	r->h.guid = emu_host_guid(host);
	ck_assert_int_eq(emu_attach(n->e, n->base, r->h.guid, &r->h.t, raw_recv, r,
				    err, sizeof(err)), 0);
	ck_assert_int_eq(emu_set_issm(n->e, r->h.guid, 0), 0);
	r->h.lid = r->h.t.lid;
}

static void raw_seg(uint8_t *m, uint64_t tid, uint8_t ver, uint8_t type,
		    uint8_t flags, uint32_t seg, uint32_t len)
{
	make_hdr(m, tid);
	m[24] = ver;
	m[25] = type;
	m[26] = (uint8_t)(0x1f << 3 | flags);
	sa_put32(m + 28, seg);
	sa_put32(m + 32, len);
}

/* Sends one crafted segment to b, runs the loop; the raw host's new MADs. */
static int poke(struct emu_net *n, struct raw *c, struct peer *b, uint64_t tid,
		uint8_t ver, uint8_t type, uint8_t flags, uint32_t seg, uint32_t len)
{
	uint8_t m[MAD_SIZE];
	struct mad_addr to = { .lid = b->h.lid, .qpn = 1 };
	int before = c->n;
	raw_seg(m, tid, ver, type, flags, seg, len);
	ck_assert_int_eq(mad_transport_send(&c->h.t, m, MAD_SIZE, &to), 0);
	emu_run_until(n->base, &(int){ 0 }, 20);
	return c->n - before;
}

static void assert_got(const struct raw *c, int i, uint8_t type, uint8_t status,
		       uint64_t tid)
{
	ck_assert_int_lt(i, c->n);
	ck_assert_uint_eq(rmpp_type(c->got[i]), type);
	ck_assert_uint_eq(rmpp_status(c->got[i]), status);
	ck_assert_uint_eq(mad_tid(c->got[i]), tid);
	ck_assert_uint_eq(rmpp_flags(c->got[i]), RMPP_FLAG_ACTIVE);
	/* an answer to a response carries the request's method */
	ck_assert_uint_eq(mad_method(c->got[i]), SA_METHOD_GET_TABLE);
}

START_TEST(t_malformed)
{
	struct emu_net n;
	struct peer b = { 0 };
	struct raw c;
	const uint8_t A = RMPP_FLAG_ACTIVE, F = RMPP_FLAG_FIRST, L = RMPP_FLAG_LAST;
	emu_net_up(&n);
	peer_up(&n, &b, 10, &fast);
	raw_up(&n, &c, 4);
	/* a middle segment of nothing: dropped, no answer */
	ck_assert_int_eq(poke(&n, &c, &b, 1, 1, RMPP_TYPE_DATA, A, 2, 0), 0);
	/* a first segment: ACKed with a window; then one far out of it */
	ck_assert_int_eq(poke(&n, &c, &b, 2, 1, RMPP_TYPE_DATA, A | F, 1, 660), 1);
	assert_got(&c, 0, RMPP_TYPE_ACK, 0, 2);
	ck_assert_uint_eq(rmpp_seg(c.got[0]), 1);
	ck_assert_uint_eq(rmpp_len(c.got[0]), 33);
	ck_assert_int_eq(poke(&n, &c, &b, 2, 1, RMPP_TYPE_DATA, A, 40, 0), 1);
	assert_got(&c, 1, RMPP_TYPE_ABORT, 123, 2);
	/* a bad version, a bad type, First on segment 3, Last with length 300 */
	ck_assert_int_eq(poke(&n, &c, &b, 3, 2, RMPP_TYPE_DATA, A | F, 1, 0), 1);
	assert_got(&c, 2, RMPP_TYPE_ABORT, 125, 3);
	ck_assert_int_eq(poke(&n, &c, &b, 4, 1, 9, A | F, 1, 0), 1);
	assert_got(&c, 3, RMPP_TYPE_ABORT, 121, 4);
	ck_assert_int_eq(poke(&n, &c, &b, 5, 1, RMPP_TYPE_DATA, A | F, 3, 0), 1);
	assert_got(&c, 4, RMPP_TYPE_ABORT, 120, 5);
	ck_assert_int_eq(poke(&n, &c, &b, 6, 1, RMPP_TYPE_DATA, A | F | L, 1, 300), 1);
	assert_got(&c, 5, RMPP_TYPE_ABORT, 119, 6);
	/* an ACK, a STOP, an ABORT of nothing: dropped without a word */
	ck_assert_int_eq(poke(&n, &c, &b, 7, 1, RMPP_TYPE_ACK, A, 1, 5), 0);
	ck_assert_int_eq(poke(&n, &c, &b, 7, 1, RMPP_TYPE_ABORT, A, 0, 0), 0);
	ck_assert_int_eq(poke(&n, &c, &b, 7, 1, RMPP_TYPE_STOP, A, 0, 0), 0);
	/* a one-segment message with a good length: delivered, ACKed */
	ck_assert_int_eq(poke(&n, &c, &b, 8, 1, RMPP_TYPE_DATA, A | F | L, 1, 20 + 64), 1);
	assert_got(&c, 6, RMPP_TYPE_ACK, 0, 8);
	ck_assert_int_eq(b.msgs, 1);
	ck_assert_uint_eq(b.len, 64);
	/* and again with no answer to it in transfer: ACKed, and asked
	 * again (t_reused_tid) */
	ck_assert_int_eq(poke(&n, &c, &b, 8, 1, RMPP_TYPE_DATA, A | F | L, 1, 20 + 64), 1);
	assert_got(&c, 7, RMPP_TYPE_ACK, 0, 8);
	ck_assert_int_eq(b.msgs, 2);
	/* too short for an SA header, and not active: not taken or taken */
	uint8_t m[MAD_SIZE];
	struct mad_addr from = { .lid = c.h.lid, .qpn = 1 };
	raw_seg(m, 9, 1, RMPP_TYPE_DATA, A | F, 1, 0);
	uint64_t dropped = rmpp_get_stats(b.r)->dropped;
	ck_assert_int_eq(rmpp_input(b.r, m, 40, &from), 1);
	ck_assert_uint_eq(rmpp_get_stats(b.r)->dropped, dropped + 1);
	ck_assert_int_eq(rmpp_input(b.r, m, 20, &from), 0);
	m[26] = 0;
	ck_assert_int_eq(rmpp_input(b.r, m, MAD_SIZE, &from), 0);
	/* from LID 0: nowhere to answer */
	raw_seg(m, 9, 1, RMPP_TYPE_DATA, A | F, 1, 0);
	from.lid = 0;
	ck_assert_int_eq(rmpp_input(b.r, m, MAD_SIZE, &from), 1);
	/* a first segment and then silence: the receiver gives up, ABORT T2L */
	int before = c.n;
	ck_assert_int_eq(poke(&n, &c, &b, 10, 1, RMPP_TYPE_DATA, A | F, 1, 660), 1);
	ck_assert_int_eq(rmpp_active(b.r), 1);
	ck_assert_int_eq(emu_run_until(n.base, &(int){ 0 },
				       fast.timeout_ms * (fast.retries + 2) + 100), 0);
	ck_assert_int_eq(c.n, before + 2);
	assert_got(&c, before + 1, RMPP_TYPE_ABORT, 118, 10);
	ck_assert_int_eq(rmpp_active(b.r), 0);
	ck_assert_int_eq(b.msgs, 2);
	const struct rmpp_stats *sb = rmpp_get_stats(b.r);
	ck_assert_uint_eq(sb->aborts_sent, 6);
	ck_assert_uint_eq(sb->failed, 3);
	ck_assert_uint_eq(sb->completed, 2);
	ck_assert_uint_eq(sb->aborts_recv, 1);
	ck_assert_uint_eq(sb->stops_recv, 1);
	c.h.t.close(c.h.t.ctx);
	peer_down(&b);
	emu_net_down(&n);
}
END_TEST

/* A receiver that ACKs nonsense: the sender ABORTs (W2S, S2B). */
static void bad_ack(uint32_t seg, uint32_t nwl, int want)
{
	struct emu_net n;
	struct peer a = { 0 };
	struct raw c;
	emu_net_up(&n);
	peer_up(&n, &a, 3, &fast);
	raw_up(&n, &c, 4);
	uint8_t hdr[MAD_SIZE], m[MAD_SIZE], data[1000] = { 0 };
	struct sent s = { 0, 0 };
	struct mad_addr to = { .lid = c.h.lid, .qpn = 1 };
	struct mad_addr back = { .lid = a.h.lid, .qpn = 1 };
	make_hdr(hdr, 0x88);
	ck_assert_int_eq(rmpp_send(a.r, hdr, data, sizeof(data), &to, on_done, &s), 0);
	emu_run_until(n.base, &(int){ 0 }, 5);
	ck_assert_int_eq(c.n, 1);	/* segment 1 of 5, the window is 1 */
	ck_assert_uint_eq(rmpp_seg(c.got[0]), 1);
	ck_assert_uint_eq(rmpp_flags(c.got[0]), RMPP_FLAG_ACTIVE | RMPP_FLAG_FIRST);
	ck_assert_uint_eq(rmpp_len(c.got[0]), 5 * 20 + 1000);
	raw_seg(m, 0x88, 1, RMPP_TYPE_ACK, RMPP_FLAG_ACTIVE, seg, nwl);
	m[3] = SA_METHOD_GET_TABLE;
	ck_assert_int_eq(mad_transport_send(&c.h.t, m, MAD_SIZE, &back), 0);
	ck_assert_int_eq(emu_run_until(n.base, &s.done, 1000), 1);
	ck_assert_int_eq(s.result, want);
	emu_run_until(n.base, &(int){ 0 }, 5);
	ck_assert_int_eq(c.n, 2);
	ck_assert_uint_eq(rmpp_type(c.got[1]), RMPP_TYPE_ABORT);
	ck_assert_uint_eq(rmpp_status(c.got[1]), want);
	ck_assert_uint_eq(mad_method(c.got[1]), SA_METHOD_GET_TABLE_RESP);
	ck_assert_uint_eq(rmpp_get_stats(a.r)->aborts_sent, 1);
	c.h.t.close(c.h.t.ctx);
	peer_down(&a);
	emu_net_down(&n);
}

/*
 * The slots: one peer's half-open transfers fill its share of the
 * receive pool (STOP, resources exhausted) and not another peer's; a
 * message longer than max_msg is ABORTed at its first segment, holding
 * nothing; the send pool is the senders' own and has shares per peer;
 * lingering transfers past max_linger are forgotten oldest first.
 */
START_TEST(t_pools)
{
	struct emu_net n;
	struct peer b = { 0 };
	struct raw c, d;
	const uint8_t A = RMPP_FLAG_ACTIVE, F = RMPP_FLAG_FIRST, L = RMPP_FLAG_LAST;
	const struct rmpp_params pools = { .window = 32, .timeout_ms = 300, .retries = 4,
		.total_ms = 5000, .max_msg = 1000, .recv_slots = 8, .recv_per_peer = 3,
		.send_slots = 4, .send_per_peer = 2, .max_linger = 5 };
	emu_net_up(&n);
	peer_up(&n, &b, 10, &pools);
	raw_up(&n, &c, 4);
	raw_up(&n, &d, 5);
	/* c's three half-open transfers are ACKed, its fourth STOPped */
	for (uint64_t tid = 1; tid <= 3; tid++) {
		ck_assert_int_eq(poke(&n, &c, &b, tid, 1, RMPP_TYPE_DATA, A | F, 1, 440), 1);
		assert_got(&c, (int)tid - 1, RMPP_TYPE_ACK, 0, tid);
	}
	ck_assert_int_eq(poke(&n, &c, &b, 4, 1, RMPP_TYPE_DATA, A | F, 1, 440), 1);
	assert_got(&c, 3, RMPP_TYPE_STOP, 1, 4);
	ck_assert_uint_eq(rmpp_get_stats(b.r)->refused_slots[RMPP_RECV], 1);
	ck_assert_uint_eq(rmpp_active_peer(b.r, RMPP_RECV, c.h.lid), 3);
	/* d still has its share */
	ck_assert_int_eq(poke(&n, &d, &b, 1, 1, RMPP_TYPE_DATA, A | F, 1, 440), 1);
	assert_got(&d, 0, RMPP_TYPE_ACK, 0, 1);
	/* longer than max_msg, said in the first segment (6 segments, 1200
	 * bytes), or shown by a segment that is not the last at the limit */
	ck_assert_int_eq(poke(&n, &d, &b, 2, 1, RMPP_TYPE_DATA, A | F, 1, 6 * 220), 1);
	assert_got(&d, 1, RMPP_TYPE_ABORT, 127, 2);
	ck_assert_int_eq(poke(&n, &d, &b, 3, 1, RMPP_TYPE_DATA, A | F, 1, 0), 1);
	assert_got(&d, 2, RMPP_TYPE_ACK, 0, 3);
	for (uint32_t seg = 2; seg <= 4; seg++)
		ck_assert_int_eq(poke(&n, &d, &b, 3, 1, RMPP_TYPE_DATA, A, seg, 0), 0);
	ck_assert_int_eq(poke(&n, &d, &b, 3, 1, RMPP_TYPE_DATA, A, 5, 0), 1);
	assert_got(&d, 3, RMPP_TYPE_ABORT, 127, 3);
	ck_assert_uint_eq(rmpp_get_stats(b.r)->refused_long, 2);
	ck_assert_uint_eq(rmpp_active_dir(b.r, RMPP_RECV), 4);
	/* seven one-segment messages from d: delivered, at most five remembered */
	for (uint64_t tid = 200; tid < 207; tid++)
		ck_assert_int_eq(poke(&n, &d, &b, tid, 1, RMPP_TYPE_DATA, A | F | L, 1, 20 + 64), 1);
	ck_assert_int_eq(b.msgs, 7);
	ck_assert_uint_le(rmpp_lingering(b.r), 5);
	ck_assert_uint_ge(rmpp_get_stats(b.r)->evicted, 2);
	/* sends: two to c's LID, the third refused; the pool of four */
	uint8_t hdr[MAD_SIZE], data[600];
	struct mad_addr to_c = { .lid = c.h.lid, .qpn = 1 }, to_d = { .lid = d.h.lid, .qpn = 1 };
	memset(data, 7, sizeof(data));
	for (uint64_t tid = 100; tid < 102; tid++) {
		make_hdr(hdr, tid);
		ck_assert_int_eq(rmpp_send(b.r, hdr, data, sizeof(data), &to_c, NULL, NULL), 0);
	}
	make_hdr(hdr, 102);
	errno = 0;
	ck_assert_int_eq(rmpp_send(b.r, hdr, data, sizeof(data), &to_c, NULL, NULL), -1);
	ck_assert_int_eq(errno, EAGAIN);
	for (uint64_t tid = 103; tid < 105; tid++) {
		make_hdr(hdr, tid);
		ck_assert_int_eq(rmpp_send(b.r, hdr, data, sizeof(data), &to_d, NULL, NULL), 0);
	}
	make_hdr(hdr, 105);
	ck_assert_int_eq(rmpp_send(b.r, hdr, data, sizeof(data), &to_d, NULL, NULL), -1);
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert_uint_eq(rmpp_get_stats(b.r)->refused_slots[RMPP_SEND], 2);
	ck_assert_uint_eq(rmpp_active_dir(b.r, RMPP_SEND), 4);
	ck_assert_uint_eq(rmpp_active_dir(b.r, RMPP_RECV), 4);
	c.h.t.close(c.h.t.ctx);
	d.h.t.close(d.h.t.ctx);
	peer_down(&b);
	emu_net_down(&n);
}
END_TEST

/*
 * A one-segment message again with a finished one's TID from the same
 * LID (a new process reuses TIDs from 1): delivered when its contents
 * differ, and when they are the same but no answer to it is in transfer
 * (that answer ended: swallowed, the request would never be answered);
 * only the same message while our answer with its TID is still going
 * is a duplicate (ACKed again, not delivered).
 */
struct poke_wait {
	const struct raw *c;
	int before;
};

static int poke_answered(const void *arg)
{
	const struct poke_wait *w = arg;
	return w->c->n > w->before;
}

static int poke_body(struct emu_net *n, struct raw *c, struct peer *b, uint64_t tid,
		     uint8_t body)
{
	uint8_t m[MAD_SIZE];
	struct mad_addr to = { .lid = b->h.lid, .qpn = 1 };
	int before = c->n;
	raw_seg(m, tid, 1, RMPP_TYPE_DATA, RMPP_FLAG_ACTIVE | RMPP_FLAG_FIRST | RMPP_FLAG_LAST,
		1, 20 + 64);
	memset(m + SA_HDR_SIZE, body, 64);
	ck_assert_int_eq(mad_transport_send(&c->h.t, m, MAD_SIZE, &to), 0);
	/* the first answer however slow the machine, then 20 ms for any other */
	struct poke_wait w = { c, before };
	emu_run_while(n->base, poke_answered, &w, 2000);
	emu_run_until(n->base, &(int){ 0 }, 20);
	return c->n - before;
}

START_TEST(t_reused_tid)
{
	struct emu_net n;
	struct peer b = { 0 };
	struct raw c;
	emu_net_up(&n);
	peer_up(&n, &b, 10, &fast);
	raw_up(&n, &c, 4);
	ck_assert_int_eq(poke_body(&n, &c, &b, 3, 0x11), 1);	/* ACKed */
	ck_assert_int_eq(b.msgs, 1);
	ck_assert_uint_eq(b.msg[0], 0x11);
	/* other contents, the same TID, within the linger: a new request */
	ck_assert_int_eq(poke_body(&n, &c, &b, 3, 0x22), 1);
	ck_assert_int_eq(b.msgs, 2);
	ck_assert_uint_eq(b.msg[0], 0x22);
	/* the same again, nothing answering it: asked again */
	ck_assert_int_eq(poke_body(&n, &c, &b, 3, 0x22), 1);
	ck_assert_int_eq(b.msgs, 3);
	/* an answer with its TID in transfer (c never ACKs): now the same
	 * message is a retry, which that transfer serves */
	uint8_t hdr[MAD_SIZE], data[1000] = { 0 };
	struct mad_addr to = { .lid = c.h.lid, .qpn = 1 };
	make_hdr(hdr, 3);
	ck_assert_int_eq(rmpp_send(b.r, hdr, data, sizeof(data), &to, NULL, NULL), 0);
	emu_run_until(n.base, &(int){ 0 }, 5);
	int acks = c.n, got = poke_body(&n, &c, &b, 3, 0x22), n_ack = 0;
	/*
	 * one ACK; besides it only that answer's own segments, sent again
	 * when its 30 ms pass unACKed (a loaded machine's poke can last that
	 * long)
	 */
	for (int i = acks; i < acks + got; i++) {
		ck_assert_uint_eq(mad_tid(c.got[i]), 3);
		if (rmpp_type(c.got[i]) == RMPP_TYPE_ACK) {
			assert_got(&c, i, RMPP_TYPE_ACK, 0, 3);
			n_ack++;
		} else {
			ck_assert_uint_eq(rmpp_type(c.got[i]), RMPP_TYPE_DATA);
		}
	}
	ck_assert_int_eq(n_ack, 1);
	ck_assert_int_eq(b.msgs, 3);
	c.h.t.close(c.h.t.ctx);
	peer_down(&b);
	emu_net_down(&n);
}
END_TEST

START_TEST(t_bad_acks)
{
	bad_ack(1, 0, 122);	/* NewWindowLast below the segment */
	bad_ack(3, 8, 123);	/* an ACK of a segment never sent */
}
END_TEST

/* The receiver (or anyone from its LID) stops or aborts the transfer. */
static void stopped(uint8_t type, uint8_t status, uint64_t want)
{
	struct emu_net n;
	struct peer a = { 0 }, b = { 0 };
	emu_net_up(&n);
	peer_up(&n, &a, 3, &fast);
	peer_up(&n, &b, 10, &fast);
	uint8_t hdr[MAD_SIZE], m[MAD_SIZE], *data = pattern(BIG, 5);
	struct sent s = { 0, 0 };
	struct mad_addr to = { .lid = b.h.lid, .qpn = 1 };
	struct mad_addr back = { .lid = a.h.lid, .qpn = 1 };
	make_hdr(hdr, 0x77);
	ck_assert_int_eq(rmpp_send(a.r, hdr, data, BIG, &to, on_done, &s), 0);
	raw_seg(m, 0x77, 1, type, RMPP_FLAG_ACTIVE, 0, 0);
	m[3] = SA_METHOD_GET_TABLE;
	m[27] = status;
	ck_assert_int_eq(mad_transport_send(&b.h.t, m, MAD_SIZE, &back), 0);
	ck_assert_int_eq(emu_run_until(n.base, &s.done, 2000), 1);
	ck_assert_uint_eq((uint64_t)s.result, want);
	const struct rmpp_stats *sa = rmpp_get_stats(a.r);
	ck_assert_uint_eq(type == RMPP_TYPE_STOP ? sa->stops_recv : sa->aborts_recv, 1);
	ck_assert_uint_eq(sa->failed, 1);
	ck_assert_uint_lt(sa->sent_segs, BIG / SA_DATA_SIZE);
	ck_assert_int_eq(b.msgs, 0);
	free(data);
	peer_down(&a);
	peer_down(&b);
	emu_net_down(&n);
}

START_TEST(t_stop)
{
	stopped(RMPP_TYPE_STOP, 1, 1);
}
END_TEST

START_TEST(t_abort)
{
	stopped(RMPP_TYPE_ABORT, 127, 127);
}
END_TEST

static Suite *rmpp_suite(void)
{
	Suite *s = suite_create("rmpp");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_big_clean);
	tcase_add_test(tc, t_lost_data_segment);
	tcase_add_test(tc, t_lost_ack);
	tcase_add_test(tc, t_lost_last_ack);
	tcase_add_test(tc, t_seeded_loss);
	tcase_add_test(tc, t_abort_after_retries);
	tcase_add_test(tc, t_total_timeout);
	tcase_add_test(tc, t_malformed);
	tcase_add_test(tc, t_pools);
	tcase_add_test(tc, t_bad_acks);
	tcase_add_test(tc, t_reused_tid);
	tcase_add_test(tc, t_stop);
	tcase_add_test(tc, t_abort);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(rmpp_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
