/*
 * RMPP, IBA vol. 1 §13.6, for the SA class on 256-byte MADs.
 *
 * The wire layout is the one Linux's and OpenSM's RMPP use for the SA:
 * every segment carries the 56-byte header (common, RMPP, SA header)
 * followed by up to SA_DATA_SIZE bytes of data, so the RMPP payload of a
 * segment is SA_RMPP_PAYLOAD (220) bytes, the SA header included.  The
 * first segment's PayloadLength is the whole payload, 20 * segments +
 * data bytes; the last segment's is 20 + its data bytes.  A receiver
 * sizes the message from the number of segments and the last one.
 *
 * One transfer per (peer LID, TID) and direction, in a small hash table;
 * the key also holds what was asked (a digest of the request): another
 * request with a TID in use (a new process numbers its TIDs from 1) is
 * answered anew, not taken for a retry (rmpp_answer_take()).
 * Each has one timer: the sender's ACK timeout, the receiver's idle
 * timeout, or, once finished, the time it lingers to absorb duplicates
 * (a receiver re-ACKs a repeated last segment whose ACK was lost; a
 * sender counts a late ACK as an ACK, not as garbage).
 *
 * The slots (rmpp.h): transfers in progress are counted per direction
 * and per (direction, peer LID) in a second small hash table, and a new
 * one past its pool or its peer's share is refused -- a receiver STOPs it
 * (resources exhausted), a sender fails with EAGAIN.  Lingering
 * transfers are on a list, oldest first; past max_linger the oldest is
 * forgotten (a duplicate of it is then taken for a new message, or
 * dropped as a segment of nothing known).
 */
#include "mad/rmpp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sm/base/fabric.h"
#include "sm/base/log.h"
#include "mad/sa.h"
#include "sm/base/clock.h"

#define RMPP_BUCKETS	256
#define RMPP_NO_RESPTIME 0x1f		/* RRespTime: no time value given */

/* RMPPStatus of a STOP or ABORT (vol. 1 Table 177) */
#define RMPP_ST_RESX	1	/* STOP: resources exhausted */
#define RMPP_ST_T2L	118	/* total time too long */
#define RMPP_ST_LAST	119	/* inconsistent Last and PayloadLength */
#define RMPP_ST_FIRST	120	/* inconsistent First and SegmentNumber */
#define RMPP_ST_BADT	121	/* bad RMPPType */
#define RMPP_ST_W2S	122	/* NewWindowLast too small */
#define RMPP_ST_S2B	123	/* SegmentNumber too big */
#define RMPP_ST_UNV	125	/* unsupported version */
#define RMPP_ST_TMR	126	/* too many retries */
#define RMPP_ST_UNSPEC	127

enum { X_ACTIVE, X_LINGER };

struct xfer {
	struct xfer *next;
	struct xfer *lprev, *lnext;	/* the lingering list */
	struct rmpp *r;
	struct event *ev;
	int sender;
	int state;
	uint32_t lid;
	uint64_t tid;
	struct mad_addr peer;
	uint64_t deadline;		/* ms: the whole transfer */
	uint64_t digest;		/* sender: the request answered (0: not said);
					 * receiver: a one-segment message's */
	uint8_t hdr[SA_HDR_SIZE];	/* sender: the message's; receiver: segment 1's */
	uint8_t *data;
	size_t len;			/* bytes of data (sender: all; receiver: so far) */
	size_t cap;
	/* sender */
	uint32_t nseg, last_ack, wl, next_seg;
	unsigned tries;
	rmpp_done_fn done;
	void *arg;
	/* receiver */
	uint32_t expect, nwl;
};

/* Transfers in progress with one peer LID, per direction. */
struct peer_use {
	struct peer_use *next;
	uint32_t lid;
	unsigned n[2];
};

struct rmpp {
	struct event_base *base;
	struct mad_transport *t;
	struct rmpp_params p;
	rmpp_msg_fn recv;
	void *recv_arg;
	struct xfer *tab[RMPP_BUCKETS];
	unsigned n_xfers, n_active;
	unsigned n_dir[2];			/* in progress, per direction */
	struct peer_use *peers[RMPP_BUCKETS];
	struct xfer *lhead, *ltail;		/* lingering, oldest first */
	unsigned n_linger;
	struct rmpp_stats st;
};

static unsigned bucket(uint32_t lid, uint64_t tid)
{
	uint64_t h = (tid ^ ((uint64_t)lid << 40)) * 0x9e3779b97f4a7c15ULL;
	return (unsigned)(h >> 56) % RMPP_BUCKETS;
}

static struct peer_use **peer_slot(struct rmpp *r, uint32_t lid)
{
	struct peer_use **pp = &r->peers[(lid * 0x9e3779b1u) >> 24];
	while (*pp && (*pp)->lid != lid)
		pp = &(*pp)->next;
	return pp;
}

/* Forgets lid's entry when nothing is in progress with it. */
static void peer_tidy(struct rmpp *r, uint32_t lid)
{
	struct peer_use **pp = peer_slot(r, lid), *u = *pp;
	if (u && !u->n[RMPP_RECV] && !u->n[RMPP_SEND]) {
		*pp = u->next;
		free(u);
	}
}

/* Counts a transfer in progress of x's direction and peer in (+1) or out (-1). */
static void count_active(struct xfer *x, int d)
{
	struct rmpp *r = x->r;
	int dir = x->sender ? RMPP_SEND : RMPP_RECV;
	struct peer_use *u = *peer_slot(r, x->lid);
	r->n_active += (unsigned)d;
	r->n_dir[dir] += (unsigned)d;
	if (u)
		u->n[dir] += (unsigned)d;
	peer_tidy(r, x->lid);
}

/* Room for one more transfer with lid in direction dir?  Counts a refusal. */
static int have_slot(struct rmpp *r, int dir, uint32_t lid)
{
	unsigned pool = dir == RMPP_SEND ? r->p.send_slots : r->p.recv_slots;
	unsigned share = dir == RMPP_SEND ? r->p.send_per_peer : r->p.recv_per_peer;
	const struct peer_use *u = *peer_slot(r, lid);
	if (r->n_dir[dir] >= pool || (u && u->n[dir] >= share)) {
		r->st.refused_slots[dir]++;
		return 0;
	}
	return 1;
}

static void linger_unlink(struct xfer *x)
{
	struct rmpp *r = x->r;
	*(x->lprev ? &x->lprev->lnext : &r->lhead) = x->lnext;
	*(x->lnext ? &x->lnext->lprev : &r->ltail) = x->lprev;
	x->lprev = x->lnext = NULL;
	r->n_linger--;
}

static struct xfer *find(struct rmpp *r, int sender, uint32_t lid, uint64_t tid)
{
	for (struct xfer *x = r->tab[bucket(lid, tid)]; x; x = x->next)
		if (x->sender == sender && x->lid == lid && x->tid == tid)
			return x;
	return NULL;
}

static void xfer_free(struct xfer *x)
{
	struct rmpp *r = x->r;
	struct xfer **pp = &r->tab[bucket(x->lid, x->tid)];
	while (*pp && *pp != x)
		pp = &(*pp)->next;
	if (*pp)
		*pp = x->next;
	if (x->state == X_ACTIVE)
		count_active(x, -1);
	else
		linger_unlink(x);
	r->n_xfers--;
	event_free(x->ev);
	free(x->data);
	free(x);
}

static void arm(struct xfer *x, unsigned ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };
	evtimer_add(x->ev, &tv);
}

static unsigned linger_ms(const struct rmpp *r)
{
	return r->p.timeout_ms * (r->p.retries + 2);
}

/*
 * What a MAD asks, its TID and RMPP header aside (FNV-1a): two requests
 * with one TID from one LID are the same request, retried, only when
 * this is equal.  Never 0 (0 says "not known").
 */
static uint64_t digest_of(const uint8_t *m, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < len; i++) {
		if ((i >= 8 && i < 16) || (i >= 24 && i < MAD_RMPP_HDR_END))
			continue;
		h = (h ^ m[i]) * 0x100000001b3ULL;
	}
	return h ? h : 1;
}

/* Done: keep the key a while for duplicates, drop the data. */
static void linger(struct xfer *x)
{
	struct rmpp *r = x->r;
	if (x->state != X_ACTIVE)
		return;
	count_active(x, -1);
	x->state = X_LINGER;
	free(x->data);
	x->data = NULL;
	x->cap = 0;
	x->lprev = r->ltail;
	*(r->ltail ? &r->ltail->lnext : &r->lhead) = x;
	r->ltail = x;
	r->n_linger++;
	arm(x, linger_ms(r));
	if (r->n_linger > r->p.max_linger && r->lhead != x) {
		r->st.evicted++;
		xfer_free(r->lhead);
	}
}

static void on_timer(evutil_socket_t fd, short what, void *arg);

/* A transfer in progress; NULL: errno EAGAIN (no slot, counted) or ENOMEM. */
static struct xfer *xfer_new(struct rmpp *r, int sender, const struct mad_addr *peer,
			     uint64_t tid)
{
	if (!have_slot(r, sender ? RMPP_SEND : RMPP_RECV, peer->lid)) {
		errno = EAGAIN;
		return NULL;
	}
	struct peer_use **pp = peer_slot(r, peer->lid);
	if (!*pp && !(*pp = calloc(1, sizeof(**pp)))) {
		errno = ENOMEM;
		return NULL;
	}
	(*pp)->lid = peer->lid;
	struct xfer *x = calloc(1, sizeof(*x));
	if (!x) {
		peer_tidy(r, peer->lid);
		errno = ENOMEM;
		return NULL;
	}
	x->ev = evtimer_new(r->base, on_timer, x);
	if (!x->ev) {
		free(x);
		peer_tidy(r, peer->lid);
		errno = ENOMEM;
		return NULL;
	}
	x->r = r;
	x->sender = sender;
	x->state = X_ACTIVE;
	x->lid = peer->lid;
	x->tid = tid;
	x->peer = *peer;
	x->peer.qkey = peer->qpn ? 0x80010000u : 0;
	x->deadline = clock_ms() + r->p.total_ms;
	unsigned b = bucket(x->lid, tid);
	x->next = r->tab[b];
	r->tab[b] = x;
	r->n_xfers++;
	count_active(x, +1);
	return x;
}

/* ---- sending control MADs ---- */

static void set_rmpp(uint8_t *m, uint8_t type, uint8_t flags, uint8_t status,
		     uint32_t d1, uint32_t d2)
{
	m[24] = RMPP_VERSION;
	m[25] = type;
	m[26] = (uint8_t)(RMPP_NO_RESPTIME << 3 | flags);
	m[27] = status;
	sa_put32(m + 28, d1);
	sa_put32(m + 32, d2);
}

/*
 * An ACK, STOP or ABORT about the transfer of `about` (a MAD of it, whose
 * common header is reused with the response bit flipped, as the peer's
 * stack expects of an answer to its DATA or ACK).
 */
static int send_ctl(struct rmpp *r, const uint8_t *about, const struct mad_addr *to,
		    uint8_t type, uint8_t status, uint32_t d1, uint32_t d2)
{
	uint8_t m[MAD_SIZE];
	memset(m, 0, sizeof(m));
	memcpy(m, about, MAD_HDR_SIZE);
	m[3] ^= 0x80;
	sa_put16(m + 4, 0);
	set_rmpp(m, type, RMPP_FLAG_ACTIVE, status, d1, d2);
	struct mad_addr a = *to;
	a.qkey = a.qpn ? 0x80010000u : 0;
	return mad_transport_send(r->t, m, MAD_SIZE, &a);
}

static void send_ack(struct rmpp *r, const uint8_t *about, const struct mad_addr *to,
		     uint32_t seg, uint32_t nwl)
{
	if (send_ctl(r, about, to, RMPP_TYPE_ACK, 0, seg, nwl) == 0)
		r->st.acks_sent++;
}

static void send_abort(struct rmpp *r, const uint8_t *about, const struct mad_addr *to,
		       uint8_t status)
{
	if (send_ctl(r, about, to, RMPP_TYPE_ABORT, status, 0, 0) == 0)
		r->st.aborts_sent++;
}

/* ---- the sender ---- */

static size_t seg_bytes(const struct xfer *x, uint32_t seg)
{
	size_t off = (size_t)(seg - 1) * SA_DATA_SIZE;
	size_t n = x->len - off;
	return n > SA_DATA_SIZE ? SA_DATA_SIZE : n;
}

static int send_seg(struct xfer *x, uint32_t seg)
{
	uint8_t m[MAD_SIZE];
	size_t n = seg_bytes(x, seg);
	uint8_t flags = RMPP_FLAG_ACTIVE;
	uint32_t paylen = 0;
	memset(m, 0, sizeof(m));
	memcpy(m, x->hdr, SA_HDR_SIZE);
	if (seg == 1) {
		flags |= RMPP_FLAG_FIRST;
		paylen = (uint32_t)(x->nseg * (SA_RMPP_PAYLOAD - SA_DATA_SIZE) + x->len);
	}
	if (seg == x->nseg) {
		flags |= RMPP_FLAG_LAST;
		paylen = (uint32_t)((SA_RMPP_PAYLOAD - SA_DATA_SIZE) + n);
	}
	set_rmpp(m, RMPP_TYPE_DATA, flags, 0, seg, paylen);
	if (n)
		memcpy(m + SA_HDR_SIZE, x->data + (size_t)(seg - 1) * SA_DATA_SIZE, n);
	/* the last segment as long as its data; the empty table a whole MAD
	 * (a shorter one is what no SA sends: saquery under ibsim faults on it) */
	size_t len = seg == x->nseg && n ? SA_HDR_SIZE + n : MAD_SIZE;
	return mad_transport_send(x->r->t, m, len, &x->peer);
}

/* Sends what the window allows and has not gone out yet. */
static void send_window(struct xfer *x)
{
	while (x->next_seg <= x->wl && x->next_seg <= x->nseg) {
		if (send_seg(x, x->next_seg) < 0)
			break;	/* the timer resends */
		x->r->st.sent_segs++;
		x->next_seg++;
	}
}

static void sender_end(struct xfer *x, int result)
{
	struct rmpp *r = x->r;
	rmpp_done_fn done = x->done;
	void *arg = x->arg;
	if (result == 0)
		r->st.completed++;
	else
		r->st.failed++;
	linger(x);
	if (done)
		done(arg, result);
}

static void sender_timeout(struct xfer *x)
{
	struct rmpp *r = x->r;
	uint8_t m[SA_HDR_SIZE];
	memcpy(m, x->hdr, SA_HDR_SIZE);
	m[3] ^= 0x80;	/* send_ctl flips it back: the ABORT carries our method */
	if (clock_ms() >= x->deadline) {
		send_abort(r, m, &x->peer, RMPP_ST_T2L);
		log_debug("rmpp: transfer to LID %u TID 0x%llx: total time out",
			  x->lid, (unsigned long long)x->tid);
		sender_end(x, -ETIMEDOUT);
		return;
	}
	if (++x->tries > r->p.retries) {
		send_abort(r, m, &x->peer, RMPP_ST_TMR);
		log_debug("rmpp: transfer to LID %u TID 0x%llx: no ACK after %u retries",
			  x->lid, (unsigned long long)x->tid, r->p.retries);
		sender_end(x, -ETIMEDOUT);
		return;
	}
	/* everything unacknowledged in the window again */
	for (uint32_t s = x->last_ack + 1; s < x->next_seg; s++)
		if (send_seg(x, s) == 0)
			r->st.resent_segs++;
	send_window(x);
	arm(x, r->p.timeout_ms);
}

static void sender_ack(struct xfer *x, const uint8_t *mad)
{
	struct rmpp *r = x->r;
	uint32_t seg = rmpp_seg(mad), nwl = rmpp_len(mad);
	r->st.acks_recv++;
	if (x->state != X_ACTIVE)
		return;
	if (seg > x->nseg || seg >= x->next_seg) {
		send_abort(r, mad, &x->peer, RMPP_ST_S2B);
		sender_end(x, RMPP_ST_S2B);
		return;
	}
	if (nwl < seg) {
		send_abort(r, mad, &x->peer, RMPP_ST_W2S);
		sender_end(x, RMPP_ST_W2S);
		return;
	}
	if (seg < x->last_ack)
		return;		/* an old ACK */
	if (clock_ms() >= x->deadline) {
		send_abort(r, mad, &x->peer, RMPP_ST_T2L);
		sender_end(x, -ETIMEDOUT);
		return;
	}
	if (seg > x->last_ack)
		x->tries = 0;
	x->last_ack = seg;
	if (nwl > x->nseg)
		nwl = x->nseg;
	if (nwl > x->wl)
		x->wl = nwl;
	if (x->last_ack == x->nseg) {
		sender_end(x, 0);
		return;
	}
	send_window(x);
	arm(x, r->p.timeout_ms);
}

/* PayloadLength is 32 bits: 20 bytes per segment and the data. */
static int too_long(size_t len)
{
	uint64_t nseg = (len + SA_DATA_SIZE - 1) / SA_DATA_SIZE;
	return nseg * (SA_RMPP_PAYLOAD - SA_DATA_SIZE) + len > UINT32_MAX;
}

/*
 * An answer to `to` with this TID is still in transfer.  The same request
 * again (digest equal, or not known): its retry, which that transfer
 * serves.  Another request (a new process that reused the TID, or a
 * requester that gave up and asks something else): the old answer goes
 * to no one any more; it ends without a word on the wire (an ABORT with
 * this TID would reach the new requester as its answer) and counts as
 * superseded.  1: the request is a retry.
 */
static int retry_of(struct xfer *old, uint64_t digest)
{
	if (!digest || !old->digest || digest == old->digest)
		return 1;
	old->r->st.superseded++;
	log_debug("rmpp: answer to LID %u TID 0x%llx superseded by another request with its TID",
		  old->lid, (unsigned long long)old->tid);
	sender_end(old, -ECANCELED);
	return 0;
}

int rmpp_answer_take(struct rmpp *r, const uint8_t *req, size_t req_len,
		     const uint8_t *hdr, uint8_t *payload, size_t len,
		     const struct mad_addr *to, rmpp_done_fn done, void *arg)
{
	uint64_t tid = mad_tid(hdr);
	uint64_t digest = req ? digest_of(req, req_len) : 0;
	if (too_long(len) || (len && !payload)) {
		free(payload);
		errno = EINVAL;
		return -1;
	}
	struct xfer *old = find(r, 1, to->lid, tid);
	if (old && old->state == X_ACTIVE && retry_of(old, digest)) {
		free(payload);
		errno = EBUSY;	/* the same answer is still in transfer */
		return -1;
	}
	if (old)
		xfer_free(old);
	struct xfer *x = xfer_new(r, 1, to, tid);
	if (!x) {
		free(payload);
		return -1;	/* errno: xfer_new's */
	}
	x->digest = digest;
	memcpy(x->hdr, hdr, SA_HDR_SIZE);
	x->data = len ? payload : NULL;
	if (!len)
		free(payload);
	x->len = len;
	x->nseg = len ? (uint32_t)((len + SA_DATA_SIZE - 1) / SA_DATA_SIZE) : 1;
	x->wl = 1;	/* until the receiver's first ACK grants a window */
	x->next_seg = 1;
	x->done = done;
	x->arg = arg;
	if (send_seg(x, 1) < 0) {
		xfer_free(x);
		errno = EIO;
		return -1;
	}
	r->st.sent_msgs++;
	r->st.sent_segs++;
	x->next_seg = 2;
	if (x->nseg == 1) {
		/*
		 * One segment is not retried: a lost answer is the
		 * requester's retry, and ibsim returns no ACK at all.
		 * done() still comes from the loop.
		 */
		arm(x, 0);
		return 0;
	}
	arm(x, r->p.timeout_ms);
	return 0;
}

int rmpp_send(struct rmpp *r, const uint8_t *hdr, const uint8_t *payload,
	      size_t len, const struct mad_addr *to, rmpp_done_fn done,
	      void *arg)
{
	uint8_t *copy = NULL;
	if (len && payload) {
		if (!(copy = malloc(len))) {
			errno = ENOMEM;
			return -1;
		}
		memcpy(copy, payload, len);
	}
	return rmpp_answer_take(r, NULL, 0, hdr, copy, len, to, done, arg);
}

/* ---- the receiver ---- */

/* Longer than a sender with our parameters waits before it resends. */
static unsigned idle_ms(const struct rmpp *r)
{
	return r->p.timeout_ms * (r->p.retries + 2);
}

static void recv_fail(struct xfer *x, const uint8_t *mad, uint8_t status)
{
	if (mad)
		send_abort(x->r, mad, &x->peer, status);
	x->r->st.failed++;
	linger(x);
}

static void recv_complete(struct xfer *x, const uint8_t *mad)
{
	struct rmpp *r = x->r;
	uint8_t hdr[SA_HDR_SIZE];
	uint8_t *data = x->data;
	size_t len = x->len;
	struct mad_addr from = x->peer;
	send_ack(r, mad, &x->peer, x->expect - 1, x->expect - 1);
	memcpy(hdr, x->hdr, sizeof(hdr));
	x->data = NULL;
	r->st.completed++;
	linger(x);
	if (r->recv)
		r->recv(r->recv_arg, hdr, data ? data : (const uint8_t *)"", len, &from);
	free(data);
}

/*
 * Would a message with len bytes so far, this segment's n more, be
 * longer than the owner takes?  A segment that is not the last one
 * promises more data (no sender ends a message with an empty segment),
 * so one that reaches the limit already passes it.
 */
static int over_max(const struct rmpp *r, size_t len, size_t n, int last)
{
	return len + n > r->p.max_msg || (!last && len + n >= r->p.max_msg);
}

static void refuse_long(struct rmpp *r, const struct mad_addr *from)
{
	r->st.refused_long++;
	log_limited(LOG_NOTICE, "rmpp: a message from LID %u is longer than the %zu bytes taken; refused",
		    from->lid, r->p.max_msg);
}

/* Appends a segment's data; 0, or an RMPP status to ABORT/STOP with. */
static int recv_append(struct xfer *x, const uint8_t *mad, size_t len, size_t n)
{
	if (!n)
		return 0;
	if (x->len + n > x->cap) {
		size_t cap = x->cap ? x->cap : 8 * SA_DATA_SIZE;
		while (cap < x->len + n)
			cap *= 2;
		uint8_t *p = realloc(x->data, cap);
		if (!p)
			return RMPP_ST_RESX;
		x->data = p;
		x->cap = cap;
	}
	size_t have = len > SA_HDR_SIZE ? len - SA_HDR_SIZE : 0;
	if (have > n)
		have = n;
	memcpy(x->data + x->len, mad + SA_HDR_SIZE, have);
	memset(x->data + x->len + have, 0, n - have);
	x->len += n;
	return 0;
}

/*
 * A first segment with the TID of a finished message from the same LID:
 * a duplicate (its ACK was lost: ACK again, deliver nothing) only when
 * that message was this one segment, and the answer to it is still in
 * transfer.  A first segment is never a duplicate of a longer message,
 * whose sender saw our ACK of it; other contents are another request
 * (a new process reuses TIDs from 1); and once the answer's transfer
 * ended, the same request again is asked again -- swallowed, its
 * requester would wait for an answer that never comes.
 */
static int one_seg_dup(struct rmpp *r, const struct xfer *x, const uint8_t *mad,
		       size_t len)
{
	if (x->expect != 2 || x->digest != digest_of(mad, len < MAD_SIZE ? len : MAD_SIZE))
		return 0;
	const struct xfer *ans = find(r, 1, x->lid, x->tid);
	return ans && ans->state == X_ACTIVE;
}

static void recv_data(struct rmpp *r, const uint8_t *mad, size_t len,
		      const struct mad_addr *from)
{
	uint64_t tid = mad_tid(mad);
	uint32_t seg = rmpp_seg(mad);
	uint8_t flags = rmpp_flags(mad);
	struct xfer *x = find(r, 0, from->lid, tid);

	if (((flags & RMPP_FLAG_FIRST) != 0) != (seg == 1)) {
		/* a first segment that is not number 1, or the reverse */
		if (x && x->state == X_ACTIVE)
			recv_fail(x, mad, RMPP_ST_FIRST);
		else
			send_abort(r, mad, from, RMPP_ST_FIRST);
		r->st.dropped++;
		return;
	}
	if (x && x->state == X_LINGER && seg == 1 && !one_seg_dup(r, x, mad, len)) {
		/* a new message with a finished one's TID */
		xfer_free(x);
		x = NULL;
	}
	if (x && x->state == X_LINGER) {
		/* finished: the sender missed our last ACK */
		if (x->expect && seg < x->expect && seg == x->expect - 1)
			send_ack(r, mad, from, x->expect - 1, x->expect - 1);
		else
			r->st.dropped++;
		return;
	}
	if (!x) {
		if (seg != 1) {
			r->st.dropped++;	/* a segment of nothing we know */
			return;
		}
		/* the whole length, 20 bytes a segment included (0: not said) */
		uint64_t said = rmpp_len(mad);
		uint64_t segs = (said + SA_RMPP_PAYLOAD - 1) / SA_RMPP_PAYLOAD;
		if (said > segs * (SA_RMPP_PAYLOAD - SA_DATA_SIZE) &&
		    over_max(r, 0, said - segs * (SA_RMPP_PAYLOAD - SA_DATA_SIZE), 1)) {
			refuse_long(r, from);
			send_abort(r, mad, from, RMPP_ST_UNSPEC);
			return;
		}
		if (!(flags & RMPP_FLAG_LAST) && over_max(r, 0, SA_DATA_SIZE, 0)) {
			refuse_long(r, from);
			send_abort(r, mad, from, RMPP_ST_UNSPEC);
			return;
		}
		x = xfer_new(r, 0, from, tid);
		if (!x) {
			if (send_ctl(r, mad, from, RMPP_TYPE_STOP, RMPP_ST_RESX, 0, 0) == 0)
				r->st.aborts_sent++;
			r->st.dropped++;
			return;
		}
		memcpy(x->hdr, mad, SA_HDR_SIZE);
		x->expect = 1;
		x->nwl = 1;
	}
	if (clock_ms() >= x->deadline) {
		recv_fail(x, mad, RMPP_ST_T2L);
		return;
	}
	if (seg < x->expect) {
		if (seg == x->expect - 1)	/* its ACK was lost */
			send_ack(r, mad, from, x->expect - 1, x->nwl);
		return;
	}
	if (seg > x->nwl) {
		recv_fail(x, mad, RMPP_ST_S2B);
		r->st.dropped++;
		return;
	}
	if (seg > x->expect) {
		r->st.dropped++;	/* a gap: the sender resends on timeout */
		return;
	}
	size_t n = SA_DATA_SIZE;
	if (flags & RMPP_FLAG_LAST) {
		uint32_t pl = rmpp_len(mad);
		if (pl < SA_RMPP_PAYLOAD - SA_DATA_SIZE || pl > SA_RMPP_PAYLOAD) {
			recv_fail(x, mad, RMPP_ST_LAST);
			r->st.dropped++;
			return;
		}
		n = pl - (SA_RMPP_PAYLOAD - SA_DATA_SIZE);
	}
	if (over_max(r, x->len, n, flags & RMPP_FLAG_LAST)) {
		refuse_long(r, from);
		recv_fail(x, mad, RMPP_ST_UNSPEC);
		return;
	}
	int st = recv_append(x, mad, len, n);
	if (st) {
		if (st == RMPP_ST_RESX) {
			if (send_ctl(r, mad, from, RMPP_TYPE_STOP, st, 0, 0) == 0)
				r->st.aborts_sent++;
			recv_fail(x, NULL, 0);
		} else {
			recv_fail(x, mad, (uint8_t)st);
		}
		return;
	}
	x->expect = seg + 1;
	if (flags & RMPP_FLAG_LAST) {
		if (seg == 1)
			x->digest = digest_of(mad, len < MAD_SIZE ? len : MAD_SIZE);
		recv_complete(x, mad);
		return;
	}
	if (seg == x->nwl) {
		x->nwl = seg + r->p.window;
		send_ack(r, mad, from, seg, x->nwl);
	}
	arm(x, idle_ms(r));
}

static void recv_timeout(struct xfer *x)
{
	uint8_t m[SA_HDR_SIZE];
	memcpy(m, x->hdr, sizeof(m));
	log_debug("rmpp: transfer from LID %u TID 0x%llx: no segment for %u ms",
		  x->lid, (unsigned long long)x->tid, idle_ms(x->r));
	recv_fail(x, m, RMPP_ST_T2L);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct xfer *x = arg;
	(void)fd;
	(void)what;
	if (x->state == X_LINGER) {
		xfer_free(x);
		return;
	}
	if (x->sender && x->nseg == 1) {
		sender_end(x, 0);	/* a single segment, sent */
		return;
	}
	if (x->sender)
		sender_timeout(x);
	else
		recv_timeout(x);
}

/* ---- input ---- */

int rmpp_input(struct rmpp *r, const uint8_t *mad, size_t len,
	       const struct mad_addr *from)
{
	if (len < MAD_RMPP_HDR_END || mad[1] != SA_CLASS ||
	    !(rmpp_flags(mad) & RMPP_FLAG_ACTIVE))
		return 0;
	if (len < SA_HDR_SIZE || !from->lid || from->lid >= FAB_MLID_BASE) {
		r->st.dropped++;
		return 1;
	}
	uint8_t type = rmpp_type(mad);
	if (mad[24] != RMPP_VERSION) {
		if (type != RMPP_TYPE_ABORT && type != RMPP_TYPE_STOP)
			send_abort(r, mad, from, RMPP_ST_UNV);
		r->st.dropped++;
		return 1;
	}
	uint64_t tid = mad_tid(mad);
	struct xfer *x;
	switch (type) {
	case RMPP_TYPE_DATA:
		recv_data(r, mad, len, from);
		return 1;
	case RMPP_TYPE_ACK:
		x = find(r, 1, from->lid, tid);
		if (x)
			sender_ack(x, mad);
		else
			r->st.dropped++;
		return 1;
	case RMPP_TYPE_STOP:
	case RMPP_TYPE_ABORT:
		if (type == RMPP_TYPE_STOP)
			r->st.stops_recv++;
		else
			r->st.aborts_recv++;
		if ((x = find(r, 1, from->lid, tid)) && x->state == X_ACTIVE) {
			sender_end(x, rmpp_status(mad) ? rmpp_status(mad) : RMPP_ST_UNSPEC);
		} else if ((x = find(r, 0, from->lid, tid)) && x->state == X_ACTIVE) {
			recv_fail(x, NULL, 0);
		} else {
			r->st.dropped++;
		}
		return 1;
	default:
		send_abort(r, mad, from, RMPP_ST_BADT);
		r->st.dropped++;
		return 1;
	}
}

int rmpp_hook(void *r, const uint8_t *mad, size_t len, const struct mad_addr *from)
{
	return rmpp_input(r, mad, len, from);
}

/* ---- life cycle ---- */

struct rmpp *rmpp_new(struct event_base *base, struct mad_transport *t,
		      const struct rmpp_params *p)
{
	struct rmpp *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->base = base;
	r->t = t;
	if (p)
		r->p = *p;
	if (!r->p.window)
		r->p.window = RMPP_DEFAULT_WINDOW;
	if (!r->p.timeout_ms)
		r->p.timeout_ms = RMPP_DEFAULT_TIMEOUT_MS;
	if (!r->p.total_ms)
		r->p.total_ms = RMPP_DEFAULT_TOTAL_MS;
	if (!r->p.max_msg)
		r->p.max_msg = RMPP_DEFAULT_MAX_MSG;
	if (!r->p.recv_slots)
		r->p.recv_slots = RMPP_DEFAULT_SLOTS;
	if (!r->p.send_slots)
		r->p.send_slots = RMPP_DEFAULT_SLOTS;
	if (!r->p.recv_per_peer)
		r->p.recv_per_peer = r->p.recv_slots;
	if (!r->p.send_per_peer)
		r->p.send_per_peer = r->p.send_slots;
	if (!r->p.max_linger)
		r->p.max_linger = RMPP_DEFAULT_LINGER;
	return r;
}

void rmpp_free(struct rmpp *r)
{
	if (!r)
		return;
	for (unsigned b = 0; b < RMPP_BUCKETS; b++)
		while (r->tab[b])
			xfer_free(r->tab[b]);
	free(r);
}

void rmpp_set_receiver(struct rmpp *r, rmpp_msg_fn fn, void *arg)
{
	r->recv = fn;
	r->recv_arg = arg;
}

const struct rmpp_stats *rmpp_get_stats(const struct rmpp *r)
{
	return &r->st;
}

unsigned rmpp_active(const struct rmpp *r)
{
	return r->n_active;
}

unsigned rmpp_active_dir(const struct rmpp *r, int dir)
{
	return r->n_dir[dir == RMPP_SEND];
}

unsigned rmpp_active_peer(const struct rmpp *r, int dir, uint32_t lid)
{
	const struct peer_use *u = *peer_slot((struct rmpp *)r, lid);
	return u ? u->n[dir == RMPP_SEND] : 0;
}

unsigned rmpp_lingering(const struct rmpp *r)
{
	return r->n_linger;
}

int rmpp_receiving(const struct rmpp *r, uint32_t lid, uint32_t tid)
{
	for (unsigned b = 0; b < RMPP_BUCKETS; b++)
		for (const struct xfer *x = r->tab[b]; x; x = x->next)
			if (!x->sender && x->state == X_ACTIVE && x->lid == lid &&
			    (uint32_t)x->tid == tid)
				return 1;
	return 0;
}
