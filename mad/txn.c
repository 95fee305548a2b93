#include "mad/txn.h"

#include <infiniband/mad.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "mad/dispatch.h"

/* Byte offsets of what an answer is matched on (IBA vol. 1 13.4.3, 14.2.1.2). */
#define OFF_CLASS	1
#define OFF_METHOD	3
#define OFF_DR_STATUS	4	/* bit 7: D, the direction of a directed-route SMP */
#define OFF_DR_HOPCNT	7
#define OFF_ATTR	16
#define OFF_MOD		20
#define OFF_MKEY	24	/* an SMP's M_Key (14.2.1.1) */
#define OFF_DR_LIDS	32	/* DrSLID, DrDLID */
#define OFF_DR_PATH	128	/* initial path; byte 0 unused */
#define DR_DIRECTION	0x80

enum { T_FREE, T_QUEUED, T_INFLIGHT };

struct txn {
	uint8_t mad[MAD_SIZE];
	uint32_t len;
	uint32_t dest;		/* index into dests[] (0 = unlimited) */
	struct mad_addr to;
	txn_done_fn done;
	void *arg;
	uint64_t deadline;
	uint32_t tid;
	uint32_t next, prev;	/* queue or in-flight list links */
	uint8_t state;
	uint8_t tries;
	uint8_t keyed;		/* the M_Key its builder wrote: never stamped */
};

struct dest_q {
	uint32_t head, tail;	/* queued transactions */
	uint32_t inflight;
	uint32_t ready_next;
	uint8_t ready;
};

#define NIL UINT32_MAX

struct txn_engine {
	struct txn_params p;
	struct mad_transport *t;
	txn_clock_fn clock;
	void *clock_arg;
	txn_arm_fn arm;
	void *arm_arg;
	int64_t armed;
	txn_stamp_fn stamp;	/* an SMP's M_Key, or NULL */
	void *stamp_arg;

	struct txn *pool;
	uint32_t pool_cap, free_head;
	struct dest_q *dests;
	uint32_t n_dests;
	uint32_t ready_head, ready_tail;
	uint32_t fl_head, fl_tail;	/* in flight, oldest deadline first */
	uint32_t n_inflight, n_queued;

	uint32_t *tid_slot;	/* tid & mask -> pool index */
	uint32_t tid_mask;
	uint32_t next_tid;

	struct txn_stats stats;
	int cancelling;

	/*
	 * The window in force: the configured one is a ceiling.  A timeout
	 * halves it, at most once per timeout period (one loss event); every
	 * answer adds 1/window, so a clean window's worth of answers adds one.
	 */
	uint32_t cwnd;		/* in 1/256 MADs */
	uint64_t cut_at;	/* when it was last halved */
	int cut_once;
};

#define CWND_ONE 256u

static uint32_t window_now(const struct txn_engine *e)
{
	uint32_t w = e->cwnd / CWND_ONE;
	if (w < 1)
		w = 1;
	return w < (uint32_t)e->p.window ? w : (uint32_t)e->p.window;
}

static void window_open(struct txn_engine *e)
{
	uint32_t ceil = (uint32_t)e->p.window * CWND_ONE;
	if (e->cwnd >= ceil)
		return;
	uint32_t w = e->cwnd / CWND_ONE ? e->cwnd / CWND_ONE : 1;
	e->cwnd += CWND_ONE / w ? CWND_ONE / w : 1;	/* 1/w of a MAD */
	if (e->cwnd > ceil)
		e->cwnd = ceil;
	e->stats.window = window_now(e);
}

static void window_cut(struct txn_engine *e, uint64_t t)
{
	if (e->cut_once && t - e->cut_at < (uint64_t)e->p.timeout_ms)
		return;
	e->cut_once = 1;
	e->cut_at = t;
	e->cwnd = e->cwnd / 2 > CWND_ONE ? e->cwnd / 2 : CWND_ONE;
	e->stats.window = window_now(e);
	e->stats.window_cuts++;
}

static void dispatch(struct txn_engine *e);

static uint64_t now(struct txn_engine *e)
{
	return e->clock(e->clock_arg);
}

static void rearm(struct txn_engine *e)
{
	int64_t d = txn_next_deadline(e);
	if (d != e->armed) {
		e->armed = d;
		if (e->arm)
			e->arm(e->arm_arg, d);
	}
}

static int grow_pool(struct txn_engine *e)
{
	uint32_t cap = e->pool_cap ? e->pool_cap * 2 : 1024;
	struct txn *p = realloc(e->pool, (size_t)cap * sizeof(*p));
	if (!p)
		return -1;
	for (uint32_t i = e->pool_cap; i < cap; i++) {
		p[i].state = T_FREE;
		p[i].next = i + 1 < cap ? i + 1 : e->free_head;
	}
	e->free_head = e->pool_cap;
	e->pool = p;
	e->pool_cap = cap;
	return 0;
}

static int size_tid_table(struct txn_engine *e)
{
	uint32_t n = 64;
	while (n < (uint32_t)e->p.window * 4)
		n <<= 1;
	if (n <= e->tid_mask + 1)
		return 0;
	uint32_t *s = malloc(n * sizeof(*s));
	if (!s)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		s[i] = NIL;
	/* re-home what is in flight */
	for (uint32_t i = e->fl_head; i != NIL; i = e->pool[i].next)
		s[e->pool[i].tid & (n - 1)] = i;
	free(e->tid_slot);
	e->tid_slot = s;
	e->tid_mask = n - 1;
	return 0;
}

/* A random first TID: a host that sees none of ours cannot guess them. */
static uint32_t first_tid(void)
{
	uint32_t tid;
	if (getrandom(&tid, sizeof(tid), GRND_NONBLOCK) != (ssize_t)sizeof(tid)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		tid = (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec * 2654435761u ^
		      (uint32_t)getpid() << 16;
	}
	return tid ? tid : 1;
}

struct txn_engine *txn_new(const struct txn_params *p,
			   struct mad_transport *t, txn_clock_fn clock,
			   void *clock_arg)
{
	struct txn_engine *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->p = *p;
	e->cwnd = (uint32_t)p->window * CWND_ONE;
	e->stats.window = (uint32_t)p->window;
	e->t = t;
	e->clock = clock;
	e->clock_arg = clock_arg;
	e->armed = -1;
	e->free_head = NIL;
	e->ready_head = e->ready_tail = NIL;
	e->fl_head = e->fl_tail = NIL;
	e->next_tid = first_tid();
	e->tid_mask = 0;
	e->dests = calloc(1, sizeof(*e->dests));
	if (!e->dests || grow_pool(e) < 0 || size_tid_table(e) < 0) {
		txn_free(e);
		return NULL;
	}
	e->dests[0].head = e->dests[0].tail = NIL;
	e->n_dests = 1;
	return e;
}

void txn_free(struct txn_engine *e)
{
	if (!e)
		return;
	free(e->pool);
	free(e->dests);
	free(e->tid_slot);
	free(e);
}

void txn_set_arm(struct txn_engine *e, txn_arm_fn arm, void *arg)
{
	e->arm = arm;
	e->arm_arg = arg;
	e->armed = -1;
	rearm(e);
}

void txn_set_stamp(struct txn_engine *e, txn_stamp_fn fn, void *arg)
{
	e->stamp = fn;
	e->stamp_arg = arg;
}

/* Writes the M_Key the hook gives into an SMP (big-endian, bytes 24-31). */
uint64_t txn_stamp_of(const struct txn_engine *e, const uint8_t *mad,
		      const struct mad_addr *to)
{
	return e->stamp ? e->stamp(e->stamp_arg, mad, to) : 0;
}

static void stamp_mkey(struct txn_engine *e, struct txn *x)
{
	uint8_t cls = x->mad[OFF_CLASS];
	if (!e->stamp || x->keyed || (cls != IB_SMI_CLASS && cls != IB_SMI_DIRECT_CLASS) ||
	    x->len < OFF_MKEY + 8)
		return;
	uint64_t key = e->stamp(e->stamp_arg, x->mad, &x->to);
	for (int b = 7; b >= 0; b--, key >>= 8)
		x->mad[OFF_MKEY + b] = (uint8_t)key;
}

void txn_set_params(struct txn_engine *e, const struct txn_params *p)
{
	e->p = *p;
	e->cwnd = (uint32_t)p->window * CWND_ONE;	/* a new ceiling: start there */
	e->cut_once = 0;
	e->stats.window = (uint32_t)p->window;
	size_tid_table(e);
	dispatch(e);
	rearm(e);
}

static struct txn_attr_stats *attr_stats(struct txn_engine *e, uint16_t attr)
{
	struct txn_stats *s = &e->stats;
	for (int i = 0; i < s->n_attrs; i++)
		if (s->attrs[i].attr == attr)
			return &s->attrs[i];
	if (s->n_attrs < TXN_MAX_ATTRS) {
		s->attrs[s->n_attrs].attr = attr;
		memset(&s->attrs[s->n_attrs].c, 0, sizeof(s->attrs[0].c));
		return &s->attrs[s->n_attrs++];
	}
	s->attrs[TXN_MAX_ATTRS].attr = 0xffff;
	return &s->attrs[TXN_MAX_ATTRS];
}

static uint16_t mad_attr(const uint8_t *mad)
{
	return (uint16_t)mad_get_field((void *)mad, 0, IB_MAD_ATTRID_F);
}

#define COUNT(e, mad, field) do { \
	(e)->stats.all.field++; \
	attr_stats((e), mad_attr(mad))->c.field++; \
} while (0)

static int ensure_dest(struct txn_engine *e, uint32_t d)
{
	if (d < e->n_dests)
		return 0;
	uint32_t n = e->n_dests;
	while (n <= d)
		n *= 2;
	struct dest_q *q = realloc(e->dests, (size_t)n * sizeof(*q));
	if (!q)
		return -1;
	for (uint32_t i = e->n_dests; i < n; i++) {
		memset(&q[i], 0, sizeof(q[i]));
		q[i].head = q[i].tail = NIL;
	}
	e->dests = q;
	e->n_dests = n;
	return 0;
}

static int dest_has_room(const struct txn_engine *e, uint32_t d)
{
	return d == 0 || e->dests[d].inflight < (uint32_t)e->p.window_per_node;
}

static void make_ready(struct txn_engine *e, uint32_t d)
{
	struct dest_q *q = &e->dests[d];
	if (q->ready || q->head == NIL || !dest_has_room(e, d))
		return;
	q->ready = 1;
	q->ready_next = NIL;
	if (e->ready_tail == NIL)
		e->ready_head = d;
	else
		e->dests[e->ready_tail].ready_next = d;
	e->ready_tail = d;
}

static uint32_t pop_ready(struct txn_engine *e)
{
	uint32_t d = e->ready_head;
	if (d == NIL)
		return NIL;
	e->ready_head = e->dests[d].ready_next;
	if (e->ready_head == NIL)
		e->ready_tail = NIL;
	e->dests[d].ready = 0;
	return d;
}

static void fl_append(struct txn_engine *e, uint32_t i)
{
	struct txn *x = &e->pool[i];
	x->next = NIL;
	x->prev = e->fl_tail;
	if (e->fl_tail == NIL)
		e->fl_head = i;
	else
		e->pool[e->fl_tail].next = i;
	e->fl_tail = i;
}

static void fl_remove(struct txn_engine *e, uint32_t i)
{
	struct txn *x = &e->pool[i];
	if (x->prev == NIL)
		e->fl_head = x->next;
	else
		e->pool[x->prev].next = x->next;
	if (x->next == NIL)
		e->fl_tail = x->prev;
	else
		e->pool[x->next].prev = x->prev;
}

static uint32_t alloc_tid(struct txn_engine *e)
{
	for (;;) {
		uint32_t tid = e->next_tid++;
		if (!tid)
			continue;
		if (e->tid_slot[tid & e->tid_mask] == NIL)
			return tid;
	}
}

static void send_one(struct txn_engine *e, uint32_t i)
{
	struct txn *x = &e->pool[i];
	mad_set_field64(x->mad, 0, IB_MAD_TRID_F, x->tid);
	x->state = T_INFLIGHT;
	x->deadline = now(e) + (uint64_t)e->p.timeout_ms;
	fl_append(e, i);
	e->n_inflight++;
	e->dests[x->dest].inflight++;
	COUNT(e, x->mad, sent);
	if (x->tries == 0 &&
	    mad_get_field(x->mad, 0, IB_MAD_METHOD_F) == IB_MAD_METHOD_SET)
		e->stats.sets++;
	if (x->tries > 0)
		COUNT(e, x->mad, retries);
	x->tries++;
	stamp_mkey(e, x);
	/*
	 * A send that fails at once is treated like a lost MAD: the timer
	 * retries it, so a transient transport error costs one timeout.
	 */
	if (mad_transport_send(e->t, x->mad, x->len, &x->to) < 0)
		COUNT(e, x->mad, errors);
}

static void dispatch(struct txn_engine *e)
{
	while (e->n_inflight < window_now(e)) {
		uint32_t d = pop_ready(e);
		if (d == NIL)
			break;
		struct dest_q *q = &e->dests[d];
		uint32_t i = q->head;
		q->head = e->pool[i].next;
		if (q->head == NIL)
			q->tail = NIL;
		e->n_queued--;
		struct txn *x = &e->pool[i];
		x->tid = alloc_tid(e);
		e->tid_slot[x->tid & e->tid_mask] = i;
		send_one(e, i);
		make_ready(e, d);
	}
}

static int submit(struct txn_engine *e, const uint8_t *mad, size_t len,
		  const struct mad_addr *to, uint32_t dest, txn_done_fn done,
		  void *arg, int keyed)
{
	if (len < MAD_HDR_SIZE || len > MAD_SIZE || e->cancelling)
		return -1;
	uint32_t d = dest == TXN_NO_DEST ? 0 : dest + 1;
	if (ensure_dest(e, d) < 0)
		return -1;
	if (e->free_head == NIL && grow_pool(e) < 0)
		return -1;
	uint32_t i = e->free_head;
	struct txn *x = &e->pool[i];
	e->free_head = x->next;
	memcpy(x->mad, mad, len);
	memset(x->mad + len, 0, MAD_SIZE - len);
	x->len = (uint32_t)len;
	x->to = *to;
	x->dest = d;
	x->done = done;
	x->arg = arg;
	x->tries = 0;
	x->keyed = (uint8_t)keyed;
	x->tid = 0;
	x->state = T_QUEUED;
	x->next = NIL;
	struct dest_q *q = &e->dests[d];
	if (q->tail == NIL)
		q->head = i;
	else
		e->pool[q->tail].next = i;
	q->tail = i;
	e->n_queued++;
	make_ready(e, d);
	dispatch(e);
	rearm(e);
	return 0;
}

int txn_submit(struct txn_engine *e, const uint8_t *mad, size_t len,
	       const struct mad_addr *to, uint32_t dest, txn_done_fn done,
	       void *arg)
{
	return submit(e, mad, len, to, dest, done, arg, 0);
}

int txn_submit_keyed(struct txn_engine *e, const uint8_t *mad, size_t len,
		     const struct mad_addr *to, uint32_t dest, txn_done_fn done,
		     void *arg)
{
	return submit(e, mad, len, to, dest, done, arg, 1);
}

/* Takes i out of flight and frees it; returns the callback to run. */
static void finish(struct txn_engine *e, uint32_t i, int status,
		   const uint8_t *resp, size_t len)
{
	struct txn *x = &e->pool[i];
	fl_remove(e, i);
	e->n_inflight--;
	e->dests[x->dest].inflight--;
	e->tid_slot[x->tid & e->tid_mask] = NIL;
	txn_done_fn done = x->done;
	void *arg = x->arg;
	uint32_t d = x->dest;
	x->state = T_FREE;
	x->next = e->free_head;
	e->free_head = i;
	if (status != TXN_OK)
		e->stats.failed++;
	make_ready(e, d);
	dispatch(e);
	rearm(e);
	done(arg, status, resp, len);
}

/* A failed attempt: retry at once if the budget allows, else fail. */
static void attempt_failed(struct txn_engine *e, uint32_t i, int status)
{
	struct txn *x = &e->pool[i];
	if (x->tries <= e->p.retries) {
		fl_remove(e, i);
		e->n_inflight--;
		e->dests[x->dest].inflight--;
		send_one(e, i);
		rearm(e);
		return;
	}
	finish(e, i, status, NULL, 0);
}

static int same(const uint8_t *a, const uint8_t *b, size_t off, size_t n)
{
	return memcmp(a + off, b + off, n) == 0;
}

/*
 * Does mad answer request x?  TXN_MM_N when it does, else why not.  The
 * TID matched already.  A bounced request must be ours unchanged.
 */
static int mismatch(const struct txn *x, const uint8_t *mad, size_t len,
		    const struct mad_addr *from, int bounced)
{
	const uint8_t *req = x->mad;
	if (mad[OFF_CLASS] != req[OFF_CLASS])
		return TXN_MM_CLASS;
	if (len < mad_class_min_len(mad[OFF_CLASS]))
		return TXN_MM_LENGTH;	/* an SMP answer is a whole MAD */
	uint8_t want = bounced ? req[OFF_METHOD] : mad_response_method(req[OFF_METHOD]);
	if (!want || mad[OFF_METHOD] != want)
		return TXN_MM_METHOD;
	if (!same(mad, req, OFF_ATTR, 2))
		return TXN_MM_ATTR;
	if (!same(mad, req, OFF_MOD, 4))
		return TXN_MM_MOD;
	if (bounced)
		return TXN_MM_N;
	if (req[OFF_CLASS] == IB_SMI_DIRECT_CLASS) {
		unsigned hops = req[OFF_DR_HOPCNT];
		if (!(mad[OFF_DR_STATUS] & DR_DIRECTION) ||
		    mad[OFF_DR_HOPCNT] != hops || hops >= IB_SUBNET_PATH_HOPS_MAX ||
		    !same(mad, req, OFF_DR_LIDS, 4) ||
		    !same(mad, req, OFF_DR_PATH + 1, hops))
			return TXN_MM_ADDR;
	} else if (!from || from->lid != x->to.lid) {
		return TXN_MM_ADDR;
	}
	return TXN_MM_N;
}

int txn_recv(void *engine, const uint8_t *mad, size_t len,
	     const struct mad_addr *from, int status)
{
	struct txn_engine *e = engine;
	if (len < MAD_HDR_SIZE || len > MAD_SIZE)
		return 0;
	uint32_t tid = (uint32_t)mad_get_field64((void *)mad, 0, IB_MAD_TRID_F);
	uint32_t i = e->tid_slot[tid & e->tid_mask];
	if (!tid || i == NIL || e->pool[i].tid != tid ||
	    e->pool[i].state != T_INFLIGHT) {
		e->stats.unsolicited++;
		e->stats.mismatch[TXN_MM_TID]++;
		return 0;
	}
	struct txn *x = &e->pool[i];
	/*
	 * Only the answer to the request, from where it was sent, answers;
	 * a request with our TID, or a forged answer, is not for us.
	 */
	int why = mismatch(x, mad, len, from, status != 0);
	if (why != TXN_MM_N) {
		e->stats.unsolicited++;
		e->stats.mismatch[why]++;
		return 0;
	}
	/* Our own request bounced back by the transport (status 110 &c.). */
	if (status) {
		COUNT(e, x->mad, errors);
		attempt_failed(e, i, TXN_ERROR);
		return 1;
	}
	COUNT(e, x->mad, recv);
	window_open(e);
	finish(e, i, TXN_OK, mad, len);
	return 1;
}

void txn_expire(struct txn_engine *e)
{
	uint64_t t = now(e);
	while (e->fl_head != NIL && e->pool[e->fl_head].deadline <= t) {
		uint32_t i = e->fl_head;
		COUNT(e, e->pool[i].mad, timeouts);
		window_cut(e, t);
		attempt_failed(e, i, TXN_TIMEOUT);
	}
	e->armed = -2;	/* the timer fired: always arm it again */
	rearm(e);
}

int64_t txn_next_deadline(const struct txn_engine *e)
{
	if (e->fl_head == NIL)
		return -1;
	return (int64_t)e->pool[e->fl_head].deadline;
}

void txn_cancel_all(struct txn_engine *e)
{
	/*
	 * Detach everything first: the callbacks may look at the engine, and
	 * while cancelling it accepts no new request.
	 */
	uint32_t list = NIL;
	e->cancelling = 1;
	for (uint32_t d = 0; d < e->n_dests; d++) {
		struct dest_q *q = &e->dests[d];
		while (q->head != NIL) {
			uint32_t i = q->head;
			q->head = e->pool[i].next;
			e->pool[i].next = list;
			list = i;
		}
		q->tail = NIL;
		q->ready = 0;
		q->inflight = 0;
	}
	e->ready_head = e->ready_tail = NIL;
	e->n_queued = 0;
	while (e->fl_head != NIL) {
		uint32_t i = e->fl_head;
		fl_remove(e, i);
		e->tid_slot[e->pool[i].tid & e->tid_mask] = NIL;
		e->pool[i].next = list;
		list = i;
	}
	e->n_inflight = 0;
	while (list != NIL) {
		uint32_t i = list;
		struct txn *x = &e->pool[i];
		list = x->next;
		txn_done_fn done = x->done;
		void *arg = x->arg;
		x->state = T_FREE;
		x->next = e->free_head;
		e->free_head = i;
		done(arg, TXN_CANCELLED, NULL, 0);
	}
	e->cancelling = 0;
	rearm(e);
}

uint32_t txn_inflight(const struct txn_engine *e)
{
	return e->n_inflight;
}

uint32_t txn_queued(const struct txn_engine *e)
{
	return e->n_queued;
}

const struct txn_stats *txn_get_stats(const struct txn_engine *e)
{
	return &e->stats;
}

void txn_reset_stats(struct txn_engine *e)
{
	memset(&e->stats, 0, sizeof(e->stats));
	e->stats.window = window_now(e);
}

const char *txn_mismatch_name(int reason)
{
	static const char *const names[TXN_MM_N] = {
		[TXN_MM_TID] = "tid",
		[TXN_MM_CLASS] = "class",
		[TXN_MM_LENGTH] = "length",
		[TXN_MM_METHOD] = "method",
		[TXN_MM_ATTR] = "attribute",
		[TXN_MM_MOD] = "modifier",
		[TXN_MM_ADDR] = "address",
	};
	return reason >= 0 && reason < TXN_MM_N ? names[reason] : "?";
}

const char *txn_attr_name(uint16_t attr)
{
	switch (attr) {
	case 0x0002: return "Notice";
	case 0x0010: return "NodeDescription";
	case 0x0011: return "NodeInfo";
	case 0x0012: return "SwitchInfo";
	case 0x0014: return "GUIDInfo";
	case 0x0015: return "PortInfo";
	case 0x0016: return "P_KeyTable";
	case 0x0017: return "SLtoVLMappingTable";
	case 0x0018: return "VLArbitrationTable";
	case 0x0019: return "LinearForwardingTable";
	case 0x001b: return "MulticastForwardingTable";
	case 0x001d: return "PortCountersExtended";	/* PerfMgt, sm/weights.c */
	case 0x0020: return "SMInfo";
	case 0xffff: return "other";
	}
	return "vendor";
}
