/*
 * The SA client: queries with their own TIDs and timers, RMPP answers
 * through mad/rmpp.c, Reports answered with ReportResp.  See saclient.h.
 */
#include "traps/host/saclient.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "mad/dispatch.h"
#include "mad/sa.h"
#include "sm/base/fabric.h"
#include "sm/base/log.h"

#define QKEY_GSI	0x80010000u
#define SEEN_REPORTS	64		/* (LID, TID) of recent Reports */
#define GID_PREFIX	0xfe80000000000000ULL

struct query {
	struct saclient *c;
	struct event *ev;
	int used;
	uint32_t tid;
	uint32_t dest;
	uint8_t resp_method;
	unsigned tries;
	saclient_done_fn done;
	void *arg;
	uint8_t mad[MAD_SIZE];
};

struct saclient {
	struct event_base *base;
	struct mad_transport *t;
	struct saclient_params p;
	struct mad_dispatch *d;
	struct rmpp *r;
	uint32_t next_tid;
	struct query *q;		/* p.max_inflight slots */
	unsigned n_q;
	saclient_report_fn report;
	void *report_arg;
	struct { uint32_t lid, tid; } seen[SEEN_REPORTS];
	unsigned n_seen;
	struct saclient_stats st;
};

static void arm(struct query *q, unsigned ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };
	evtimer_add(q->ev, &tv);
}

/* Ends a query: the slot is free before done() runs (it may query again). */
static void finish(struct query *q, int status, const uint8_t *recs, size_t n,
		   size_t stride, const uint8_t *hdr)
{
	struct saclient *c = q->c;
	saclient_done_fn done = q->done;
	void *arg = q->arg;
	evtimer_del(q->ev);
	q->used = 0;
	c->n_q--;
	if (status == -ETIMEDOUT)
		c->st.timeouts++;
	else if (status)
		c->st.errors++;
	if (done)
		done(arg, status, recs, n, stride, hdr);
}

static int send_query(struct query *q)
{
	struct mad_addr to = { .lid = q->dest, .qpn = 1, .qkey = QKEY_GSI };
	if (mad_transport_send(q->c->t, q->mad, MAD_SIZE, &to) < 0)
		return -1;
	q->c->st.sent++;
	return 0;
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct query *q = arg;
	struct saclient *c = q->c;
	(void)fd;
	(void)what;
	if (rmpp_receiving(c->r, q->dest, q->tid)) {
		arm(q, c->p.timeout_ms);	/* the answer is coming in */
		return;
	}
	if (q->tries >= c->p.retries) {
		finish(q, -ETIMEDOUT, NULL, 0, 0, NULL);
		return;
	}
	q->tries++;
	c->st.retries++;
	send_query(q);		/* a failed send is one more timeout */
	arm(q, c->p.timeout_ms);
}

static struct query *find_query(struct saclient *c, uint32_t tid)
{
	for (unsigned i = 0; i < c->p.max_inflight; i++)
		if (c->q[i].used && c->q[i].tid == tid)
			return &c->q[i];
	return NULL;
}

/*
 * An answer (one MAD, or an RMPP message: hdr + data).  Returns 1 when it
 * ended one of our queries.
 */
static int answer(struct saclient *c, const uint8_t *hdr, const uint8_t *data,
		  size_t len, const struct mad_addr *from)
{
	struct query *q = find_query(c, (uint32_t)mad_tid(hdr));
	if (!q || hdr[1] != SA_CLASS || mad_method(hdr) != q->resp_method ||
	    from->lid != q->dest) {
		c->st.unmatched++;
		return 0;
	}
	c->st.answers++;
	int status = mad_status(hdr);
	if (status == MAD_STS_BUSY) {
		/* discarded, not refused (IBA vol. 1 13.4.7): the query's
		 * timer sends it again, as after a loss */
		c->st.busy++;
		return 1;
	}
	if (status) {
		finish(q, status, NULL, 0, 0, hdr);
		return 1;
	}
	size_t stride = (size_t)sa_attr_offset(hdr) * 8;
	size_t n;
	if (q->resp_method == SA_METHOD_GET_TABLE_RESP) {
		n = stride ? len / stride : 0;
		if (!stride && len) {
			/* records with no spacing: unreadable */
			finish(q, -EPROTO, NULL, 0, 0, hdr);
			return 1;
		}
	} else {
		/* a GetResp, SetResp, DeleteResp: the one record */
		if (!stride || stride > len)
			stride = len;
		n = len ? 1 : 0;
	}
	finish(q, 0, data, n, stride, hdr);
	return 1;
}

/* The dispatcher's answer hook: responses of one MAD. */
static int on_answer(void *arg, const uint8_t *mad, size_t len,
		     const struct mad_addr *from, int status)
{
	struct saclient *c = arg;
	if (status || mad[1] != SA_CLASS || len < SA_HDR_SIZE)
		return 0;	/* bounced: the timer resends */
	return answer(c, mad, sa_data(mad), len - SA_HDR_SIZE, from);
}

/* RMPP: a reassembled message. */
static void on_rmpp_msg(void *arg, const uint8_t *hdr, const uint8_t *payload,
			size_t len, const struct mad_addr *from)
{
	struct saclient *c = arg;
	if (!(mad_method(hdr) & MAD_METHOD_RESPONSE)) {
		c->st.unmatched++;	/* a multi-MAD request: not for a host */
		return;
	}
	answer(c, hdr, payload, len, from);
}

/* Report(Notice): hand it on once, answer every time (the dispatcher). */
static int on_report(void *arg, const uint8_t *mad, size_t len,
		     const struct mad_addr *from)
{
	struct saclient *c = arg;
	uint8_t notice[SA_SIZE_NOTICE];
	uint32_t tid = (uint32_t)mad_tid(mad);
	memset(notice, 0, sizeof(notice));
	memcpy(notice, sa_data(mad), len - SA_HDR_SIZE < sizeof(notice) ?
	       len - SA_HDR_SIZE : sizeof(notice));
	for (unsigned i = 0; i < SEEN_REPORTS && i < c->n_seen; i++)
		if (c->seen[i].lid == from->lid && c->seen[i].tid == tid) {
			c->st.report_dups++;
			return 0;
		}
	c->seen[c->n_seen % SEEN_REPORTS].lid = from->lid;
	c->seen[c->n_seen % SEEN_REPORTS].tid = tid;
	c->n_seen++;
	c->st.reports++;
	if (c->report)
		c->report(c->report_arg, notice, from);
	return 0;	/* the dispatcher sends the ReportResp, notice echoed */
}

struct saclient *saclient_new(struct event_base *base, struct mad_transport *t,
			      const struct saclient_params *p)
{
	struct saclient *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->base = base;
	c->t = t;
	if (p)
		c->p = *p;
	if (!c->p.timeout_ms)
		c->p.timeout_ms = SACLIENT_DEFAULT_TIMEOUT_MS;
	if (!p)
		c->p.retries = SACLIENT_DEFAULT_RETRIES;
	if (!c->p.max_inflight)
		c->p.max_inflight = SACLIENT_DEFAULT_MAX_INFLIGHT;
	if (!c->p.rmpp.timeout_ms && !c->p.rmpp.retries)
		c->p.rmpp.retries = SACLIENT_DEFAULT_RETRIES;
	if (getrandom(&c->next_tid, sizeof(c->next_tid), GRND_NONBLOCK) !=
	    sizeof(c->next_tid))
		c->next_tid = 0x5ac11e00u;
	c->q = calloc(c->p.max_inflight, sizeof(*c->q));
	c->d = mad_dispatch_new(t);
	c->r = rmpp_new(base, t, &c->p.rmpp);
	if (!c->q || !c->d || !c->r)
		goto fail;
	for (unsigned i = 0; i < c->p.max_inflight; i++) {
		c->q[i].c = c;
		if (!(c->q[i].ev = evtimer_new(base, on_timeout, &c->q[i])))
			goto fail;
	}
	mad_dispatch_set_answers(c->d, on_answer, c);
	mad_dispatch_set_rmpp(c->d, rmpp_hook, c->r);
	rmpp_set_receiver(c->r, on_rmpp_msg, c);
	if (mad_dispatch_register(c->d, SA_CLASS, SA_CLASS_VERSION, SA_METHOD_REPORT,
				  SA_ATTR_NOTICE, on_report, c) < 0)
		goto fail;
	return c;
fail:
	saclient_free(c);
	return NULL;
}

void saclient_free(struct saclient *c)
{
	if (!c)
		return;
	for (unsigned i = 0; c->q && i < c->p.max_inflight; i++)
		if (c->q[i].used)
			finish(&c->q[i], -ECANCELED, NULL, 0, 0, NULL);
	for (unsigned i = 0; c->q && i < c->p.max_inflight; i++)
		if (c->q[i].ev)
			event_free(c->q[i].ev);
	free(c->q);
	rmpp_free(c->r);
	mad_dispatch_free(c->d);
	free(c);
}

void saclient_recv(void *arg, const uint8_t *mad, size_t len,
		   const struct mad_addr *from, int status)
{
	struct saclient *c = arg;
	mad_dispatch_input(c->d, mad, len, from, status);
}

void saclient_set_report(struct saclient *c, saclient_report_fn fn, void *arg)
{
	c->report = fn;
	c->report_arg = arg;
}

static uint8_t response_of(uint8_t method)
{
	switch (method) {
	case SA_METHOD_GET:
	case SA_METHOD_SET:
		return SA_METHOD_GET_RESP;
	case SA_METHOD_GET_TABLE:
		return SA_METHOD_GET_TABLE_RESP;
	case SA_METHOD_DELETE:
		return SA_METHOD_DELETE_RESP;
	case SA_METHOD_GET_MULTI:	/* one MAD's request; its records' first */
		return SA_METHOD_GET_MULTI_RESP;
	}
	return 0;
}

int saclient_query(struct saclient *c, uint8_t method, uint16_t attr,
		   uint32_t attr_mod, uint64_t comp_mask, const void *rec,
		   size_t rec_len, saclient_done_fn done, void *arg)
{
	uint8_t resp = response_of(method);
	uint32_t dest = c->t->sm_lid;
	if (!resp || rec_len > SA_DATA_SIZE || (rec_len && !rec)) {
		errno = EINVAL;
		return -1;
	}
	if (!dest || dest >= FAB_MLID_BASE) {
		errno = ENOTCONN;
		return -1;
	}
	if (c->n_q >= c->p.max_inflight) {
		errno = EAGAIN;
		return -1;
	}
	struct query *q = NULL;
	for (unsigned i = 0; i < c->p.max_inflight && !q; i++)
		if (!c->q[i].used)
			q = &c->q[i];
	uint32_t tid;
	do
		tid = c->next_tid++;
	while (!tid || find_query(c, tid));
	q->tid = tid;
	q->dest = dest;
	q->resp_method = resp;
	q->tries = 0;
	q->done = done;
	q->arg = arg;
	sa_init_request(q->mad, method, tid, attr, attr_mod, comp_mask, rec, rec_len);
	sa_put64(q->mad + 36, c->p.sa_key);
	sa_put16(q->mad + 44, (uint16_t)((rec_len + 7) / 8));
	if (send_query(q) < 0) {
		errno = EIO;
		return -1;
	}
	q->used = 1;
	c->n_q++;
	c->st.queries++;
	arm(q, c->p.timeout_ms);
	return 0;
}

/* ---- subscriptions ---- */

void saclient_inform_default(struct saclient_inform *ii, uint16_t trap)
{
	memset(ii, 0, sizeof(*ii));
	ii->lid_begin = SACLIENT_ALL;
	ii->lid_end = 0;
	ii->type = SACLIENT_ALL;
	ii->trap = trap;
	ii->producer = SACLIENT_ALL_PRODUCERS;
	ii->qpn = 1;
	ii->resp_time = 18;	/* about 1 s */
}

static void saclient_inform_encode(const struct saclient_inform *ii,
				   int subscribe, uint8_t out[SA_INFORM_SIZE])
{
	memset(out, 0, SA_INFORM_SIZE);
	memcpy(out, ii->gid, 16);
	sa_put16(out + II_LID_BEGIN, ii->lid_begin);
	sa_put16(out + II_LID_END, ii->lid_end);
	out[II_IS_GENERIC] = 1;				/* IsGeneric */
	out[II_SUBSCRIBE] = subscribe ? 1 : 0;
	sa_put16(out + II_TYPE, ii->type);
	sa_put16(out + II_TRAP, ii->trap);		/* TrapNumber */
	sa_put32(out + II_QPN_RESP, (ii->qpn & 0xffffff) << 8 | (ii->resp_time & 0x1f));
	sa_put32(out + II_PRODUCER - 1, ii->producer & 0xffffff);
}

int saclient_inform(struct saclient *c, const struct saclient_inform *ii,
		    int subscribe, saclient_done_fn done, void *arg)
{
	uint8_t rec[SA_INFORM_SIZE];
	saclient_inform_encode(ii, subscribe, rec);
	return saclient_query(c, SA_METHOD_SET, SA_ATTR_INFORM_INFO, 0, 0, rec,
			      sizeof(rec), done, arg);
}

int saclient_alias_guids(struct saclient *c, int del, const uint64_t *g,
			 unsigned n, saclient_done_fn done, void *arg)
{
	uint8_t rec[SA_GUIDINFO_REC_SIZE];
	if (!n || n > 7) {
		errno = EINVAL;
		return -1;
	}
	memset(rec, 0, sizeof(rec));
	sa_put16(rec, (uint16_t)c->t->lid);	/* LID: the port's own */
	uint64_t mask = 1 | 2;			/* LID, BlockNum (block 0) */
	for (unsigned k = 0; k < n; k++) {	/* GUID1.., GUID0 is the port's */
		sa_put64(rec + 8 + 8 * (k + 1), g[k]);
		mask |= 1ull << (5 + k);
	}
	return saclient_query(c, del ? SA_METHOD_DELETE : SA_METHOD_SET,
			      SA_ATTR_GUIDINFO_REC, 0, mask, rec, sizeof(rec),
			      done, arg);
}

void saclient_port_gid(const struct saclient *c, uint8_t gid[16])
{
	sa_put64(gid, GID_PREFIX);
	sa_put64(gid + 8, c->t->port_guid);
}

int saclient_subscriptions(struct saclient *c, saclient_done_fn done, void *arg)
{
	/* InformInfoRecord: SubscriberGID (bit 0), Enum, InformInfo; 64 bytes */
	uint8_t rec[64];
	memset(rec, 0, sizeof(rec));
	saclient_port_gid(c, rec);
	return saclient_query(c, SA_METHOD_GET_TABLE, SA_ATTR_INFORM_INFO_REC, 0,
			      1, rec, sizeof(rec), done, arg);
}

const struct saclient_stats *saclient_get_stats(const struct saclient *c)
{
	return &c->st;
}

const struct rmpp_stats *saclient_rmpp_stats(const struct saclient *c)
{
	return rmpp_get_stats(c->r);
}

unsigned saclient_inflight(const struct saclient *c)
{
	return c->n_q;
}
