/*
 * A PathRecord load on one saclient: single-record PathRecord Gets (SLID
 * and DLID given) with K in flight, for T seconds or N queries, and the
 * result as one line of JSON.  Or, with table_attr, GetTables of every
 * record of that attribute, each to hold want_recs records.  Header-only: saperf (umad, under ibsim or
 * on hardware) and in-process emulator tests use the same loop.
 */
#ifndef IBSMD_SALOAD_H
#define IBSMD_SALOAD_H

#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mad/sa.h"
#include "mad/umad.h"
#include "traps/host/saclient.h"

#define SALOAD_PR_DLID	(1ULL << 4)	/* PathRecord ComponentMask */
#define SALOAD_PR_SLID	(1ULL << 5)
#define SALOAD_PR_DLID_OFF 40		/* PathRecord: DLID, SLID */
#define SALOAD_PR_SLID_OFF 42

struct saload {
	/* in */
	struct saclient *c;
	struct event_base *base;
	unsigned inflight;		/* K */
	uint64_t max_queries;		/* N; 0: until the time is up */
	double seconds;			/* T; 0: until N were answered */
	uint32_t slid;
	const uint32_t *dlids;		/* cycled through */
	size_t n_dlids;
	uint16_t table_attr;		/* 0: PathRecord Gets */
	size_t want_recs;		/* a GetTable's records (0: any) */
	/* out */
	uint64_t sent, ok, errors, timeouts, refused, bad;
	double elapsed, lat_sum_ms, lat_max_ms;
	/* running */
	uint64_t next;
	double t0;
	int stop;
	unsigned out;
	struct event *tick;
};

static inline double saload_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void saload__tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

/* Runs the loop until cond(arg) or ms pass (1 ms ticks); returns cond(arg). */
static inline int saload_run_until(struct event_base *base,
				   int (*cond)(void *), void *arg, double ms)
{
	double t0 = saload_now() * 1000.0;
	struct event *ev = evtimer_new(base, saload__tick, base);
	if (!ev)
		return 0;
	while (!cond(arg) && saload_now() * 1000.0 - t0 < ms) {
		struct timeval tv = { 0, 1000 };
		evtimer_add(ev, &tv);
		event_base_loop(base, EVLOOP_ONCE);
	}
	event_free(ev);
	return cond(arg);
}

struct saload_q {
	struct saload *l;
	double t;
	uint32_t dlid;
};

static void saload_issue(struct saload *l);

static inline void saload_done(void *arg, int status, const uint8_t *recs,
			       size_t n, size_t stride, const uint8_t *hdr)
{
	struct saload_q *q = arg;
	struct saload *l = q->l;
	double ms = (saload_now() - q->t) * 1000.0;
	l->out--;
	if (l->table_attr ? status == 0 && n && (!l->want_recs || n == l->want_recs) :
	    status == 0 && n == 1 && stride >= 44 &&
	    sa_get16(recs + SALOAD_PR_DLID_OFF) == q->dlid) {
		l->ok++;
		l->lat_sum_ms += ms;
		if (ms > l->lat_max_ms)
			l->lat_max_ms = ms;
	} else if (status == 0) {
		l->bad++;	/* answered, but not the record asked for */
	} else if (status == -ETIMEDOUT) {
		l->timeouts++;
	} else {
		l->errors++;
	}
	free(q);
	saload_issue(l);
	if (l->stop && !l->out)
		event_base_loopbreak(l->base);
}

static inline void saload_issue(struct saload *l)
{
	while (!l->stop && l->out < l->inflight) {
		if (l->max_queries && l->sent >= l->max_queries) {
			l->stop = 1;
			break;
		}
		if (l->seconds > 0 && saload_now() - l->t0 >= l->seconds) {
			l->stop = 1;
			break;
		}
		uint8_t rec[SA_SIZE_PATH_REC];
		struct saload_q *q = calloc(1, sizeof(*q));
		if (!q) {
			l->stop = 1;
			break;
		}
		q->l = l;
		q->t = saload_now();
		q->dlid = l->dlids[l->next++ % l->n_dlids];
		memset(rec, 0, sizeof(rec));
		sa_put16(rec + SALOAD_PR_DLID_OFF, (uint16_t)q->dlid);
		sa_put16(rec + SALOAD_PR_SLID_OFF, (uint16_t)l->slid);
		int rc = l->table_attr ?
			saclient_query(l->c, SA_METHOD_GET_TABLE, l->table_attr, 0, 0,
				       NULL, 0, saload_done, q) :
			saclient_query(l->c, SA_METHOD_GET, SA_ATTR_PATH_REC, 0,
				       SALOAD_PR_DLID | SALOAD_PR_SLID, rec, sizeof(rec),
				       saload_done, q);
		if (rc < 0) {
			free(q);
			l->refused++;
			l->stop = 1;
			break;
		}
		l->sent++;
		l->out++;
	}
}

static inline void saload_tick(evutil_socket_t fd, short what, void *arg)
{
	struct saload *l = arg;
	(void)fd;
	(void)what;
	if (l->seconds > 0 && saload_now() - l->t0 >= l->seconds)
		l->stop = 1;
	if (l->stop && !l->out)
		event_base_loopbreak(l->base);
}

/* Runs the load on the loop; 0, or -1 (bad parameters, no memory). */
static inline int saload_run(struct saload *l)
{
	if (!l->inflight || !l->n_dlids || (!l->max_queries && !(l->seconds > 0)))
		return -1;
	l->sent = l->ok = l->errors = l->timeouts = l->refused = l->bad = 0;
	l->elapsed = l->lat_sum_ms = l->lat_max_ms = 0;
	l->next = 0;
	l->stop = 0;
	l->out = 0;
	l->tick = event_new(l->base, -1, EV_PERSIST, saload_tick, l);
	if (!l->tick)
		return -1;
	struct timeval tv = { 0, 50000 };
	event_add(l->tick, &tv);
	l->t0 = saload_now();
	saload_issue(l);
	if (l->out)
		event_base_dispatch(l->base);
	l->elapsed = saload_now() - l->t0;
	event_free(l->tick);
	l->tick = NULL;
	return 0;
}

static inline void saload_json(const struct saload *l, FILE *f)
{
	double qps = l->elapsed > 0 ? (double)l->ok / l->elapsed : 0;
	fprintf(f, "{\"queries\":%llu,\"ok\":%llu,\"errors\":%llu,\"timeouts\":%llu,"
		"\"bad\":%llu,\"refused\":%llu,\"inflight\":%u,\"seconds\":%.3f,"
		"\"qps\":%.1f,\"latency_ms_avg\":%.3f,\"latency_ms_max\":%.3f}\n",
		(unsigned long long)l->sent, (unsigned long long)l->ok,
		(unsigned long long)l->errors, (unsigned long long)l->timeouts,
		(unsigned long long)l->bad, (unsigned long long)l->refused,
		l->inflight, l->elapsed, qps,
		l->ok ? l->lat_sum_ms / (double)l->ok : 0, l->lat_max_ms);
}

static inline int saload_pending(void *arg)
{
	return saclient_inflight(arg) > 0;
}

/*
 * A host tool's SA client on its umad port (hardware, or ibsim under
 * libumad2sim.so): the loop in *base, the transport in *t.  Returns the
 * client, or NULL after saying why on stderr as prog (no memory, no port,
 * no SM LID yet).
 */
static inline struct saclient *saload_open_umad(const char *prog,
						const struct umad_port_sel *sel,
						const struct saclient_params *p,
						struct event_base **base,
						struct mad_transport *t)
{
	char err[256] = "";
	memset(t, 0, sizeof(*t));
	*base = event_base_new();
	struct saclient *sc = *base ? saclient_new(*base, t, p) : NULL;
	if (!sc) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return NULL;
	}
	if (umad_transport_open(t, *base, sel, saclient_recv, sc, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return NULL;
	}
	umad_transport_set_pending(t, saload_pending, sc);
	if (!t->sm_lid) {
		fprintf(stderr, "%s: the port has no SM LID (is an SM running?)\n", prog);
		return NULL;
	}
	return sc;
}

#endif
