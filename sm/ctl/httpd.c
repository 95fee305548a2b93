/*
 * An HTTP server on the event loop (httpd.h): libevent's evhttp, with
 * the bounds evhttp 2.1 (Debian 12 ships 2.1.12) does not have.
 * evhttp_set_timeout is a timeout per read: a client that sends one
 * header line every few seconds keeps its connection for ever, and
 * nothing caps the connections, so enough such clients take every
 * descriptor the process has; the listener's accept() then fails with
 * EMFILE on every turn of the loop, each failure logged by libevent, and
 * whatever else needs a descriptor (a state file, the routing thread's
 * eventfd, the control socket's next client) fails too.  Here:
 *
 * - at most max_conns connections: a newcomer past the cap takes the
 *   place of the connection that has waited longest for its request,
 *   i.e. the one nearest its deadline (a scraper's request comes in one
 *   packet: it is never the one waiting longest); a connection whose
 *   answer is going out is never closed for a newcomer;
 * - a deadline per request, whatever the bytes' pace: deadline_ms from
 *   the connection's start (or from its last answer, kept alive) to a
 *   complete request, and as long again to hand the answer over;
 * - accept() failing (EMFILE, ENFILE, ENOBUFS, ENOMEM: any error
 *   libevent does not retry) pauses the listener for
 *   HTTPD_ACCEPT_PAUSE_MS instead of spinning on it; counted, and logged
 *   rate-limited.
 *
 * How connections are known: evhttp 2.1 tells of a new connection only
 * through the bufferevent callback (evhttp_set_bevcb), which runs before
 * the connection exists.  The bufferevent made there gets one more
 * reference, and an event of ours is made active (adopt).  It runs
 * before the loop polls again, so before any I/O of the new connection:
 * by then evhttp has made the connection the bufferevent's callback
 * argument (evhttp_connection_base_bufferevent_new), or freed it, which
 * cleared its callbacks; our reference kept it readable either way, and
 * is dropped there.  The connection then gets a close callback, which
 * is how its end is known, however evhttp ends it.  With the listener
 * disabled from the bufferevent callback once past the cap, at most one
 * connection over it exists at a time.  libevent 2.2 has
 * evhttp_set_max_connections and evhttp_set_newreqcb for this.
 *
 * A failed accept()'s callback is given the listener's argument, which
 * evhttp sets to its struct evhttp: the servers are listed (servers) to
 * find ours.
 */
#include "sm/ctl/httpd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/queue.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "sm/base/log.h"

struct conn {
	TAILQ_ENTRY(conn) entry;	/* the server's, in deadline order */
	struct httpd *d;
	struct bufferevent *bev;	/* our reference, until adopted */
	struct evhttp_connection *evcon;	/* NULL: not adopted yet */
	struct event *deadline;
	int answering;			/* its request's answer is going out */
};
TAILQ_HEAD(conn_list, conn);

struct httpd {
	struct event_base *base;
	struct evhttp *http;
	struct evconnlistener *lev;	/* evhttp's, of the bound socket */
	struct event *adopt;		/* made active when evhttp made a connection */
	struct event *resume;		/* ends a pause of accept() */
	struct conn_list conns;
	unsigned n, max;
	int deadline_ms;
	int paused;			/* accept() failed: listener off until resume */
	httpd_cb cb;
	void *arg;
	struct httpd_stats *st;
	struct httpd *next;		/* servers */
};

/* The servers alive, for the accept error callback (see above). */
static struct httpd *servers;

/* ---- connections ---- */

static void conn_free(struct conn *c)
{
	TAILQ_REMOVE(&c->d->conns, c, entry);
	c->d->n--;
	event_free(c->deadline);
	free(c);
}

/* A new deadline: the connection goes to the end of the order. */
static void conn_arm(struct conn *c)
{
	struct timeval tv = { c->d->deadline_ms / 1000, (c->d->deadline_ms % 1000) * 1000 };
	TAILQ_INSERT_TAIL(&c->d->conns, c, entry);
	evtimer_add(c->deadline, &tv);
}

static void conn_restart(struct conn *c)
{
	TAILQ_REMOVE(&c->d->conns, c, entry);
	conn_arm(c);
}

static const char *conn_peer(struct conn *c)
{
	char *addr = NULL;
	ev_uint16_t port = 0;
	evhttp_connection_get_peer(c->evcon, &addr, &port);
	return addr ? addr : "?";
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	if (!c->evcon) {	/* on_adopt always runs first; never spin */
		conn_restart(c);
		return;
	}
	c->d->st->closed_deadline++;
	log_limited(LOG_WARN, "metrics: HTTP connection from %s closed: %s within %d ms",
		    conn_peer(c), c->answering ? "its answer not taken" : "no complete request",
		    c->d->deadline_ms);
	evhttp_connection_free(c->evcon);	/* on_closed frees c */
}

static void on_closed(struct evhttp_connection *evcon, void *arg)
{
	conn_free(arg);
}

static struct conn *conn_of(struct httpd *d, struct evhttp_connection *evcon)
{
	struct conn *c;
	TAILQ_FOREACH(c, &d->conns, entry)
		if (c->evcon == evcon)
			return c;
	return NULL;
}

/* ---- the cap and the pauses ---- */

static void pause_accept(struct httpd *d, int e)
{
	struct timeval tv = { HTTPD_ACCEPT_PAUSE_MS / 1000, (HTTPD_ACCEPT_PAUSE_MS % 1000) * 1000 };
	evconnlistener_disable(d->lev);
	d->paused = 1;
	evtimer_add(d->resume, &tv);
	log_limited(LOG_WARN, "metrics: HTTP accept: %s; not accepting for %d ms",
		    strerror(e), HTTPD_ACCEPT_PAUSE_MS);
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	struct httpd *d = arg;
	d->paused = 0;
	if (d->n <= d->max)
		evconnlistener_enable(d->lev);
}

static void on_accept_error(struct evconnlistener *lev, void *http)
{
	int e = EVUTIL_SOCKET_ERROR();
	struct httpd *d = servers;
	while (d && d->http != http)
		d = d->next;
	if (!d) {		/* not ours: never spin on it */
		evconnlistener_disable(lev);
		return;
	}
	d->st->accept_errors++;
	pause_accept(d, e);
}

/* Down to the cap: the connection waiting longest for its request goes. */
static void make_room(struct httpd *d)
{
	while (d->n > d->max) {
		struct conn *c;
		TAILQ_FOREACH(c, &d->conns, entry)
			if (c->evcon && !c->answering)
				break;
		if (!c)
			return;	/* every one is answered now: they end soon */
		d->st->closed_cap++;
		log_limited(LOG_WARN, "metrics.max_connections (%u) reached: the HTTP"
			    " connection from %s waiting longest for its request closed for"
			    " a new one", d->max, conn_peer(c));
		evhttp_connection_free(c->evcon);	/* on_closed frees c */
	}
}

/*
 * The connections evhttp made since the last turn: each now has its
 * evhttp_connection as its bufferevent's callback argument, or none
 * (evhttp freed it already).
 */
static void on_adopt(evutil_socket_t fd, short what, void *arg)
{
	struct httpd *d = arg;
	struct conn *c, *next;
	for (c = TAILQ_FIRST(&d->conns); c; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->evcon)
			continue;
		void *evcon = NULL;
		bufferevent_getcb(c->bev, NULL, NULL, NULL, &evcon);
		bufferevent_decref(c->bev);
		c->bev = NULL;
		if (!evcon) {
			conn_free(c);
			continue;
		}
		c->evcon = evcon;
		evhttp_connection_set_closecb(c->evcon, on_closed, c);
	}
	make_room(d);
	if (!d->paused && d->n <= d->max)
		evconnlistener_enable(d->lev);
}

/* evhttp_set_bevcb's: a connection is being made (see above). */
static struct bufferevent *on_connection(struct event_base *base, void *arg)
{
	struct httpd *d = arg;
	struct conn *c = calloc(1, sizeof(*c));
	/* what evhttp makes when given none */
	struct bufferevent *bev = c ? bufferevent_socket_new(base, -1, 0) : NULL;
	struct event *t = bev ? evtimer_new(base, on_deadline, c) : NULL;
	if (!t) {
		if (bev)
			bufferevent_free(bev);
		free(c);
		/* evhttp makes its own, unwatched: no more of them for a while */
		pause_accept(d, ENOMEM);
		return NULL;
	}
	bufferevent_incref(bev);
	c->d = d;
	c->bev = bev;
	c->deadline = t;
	conn_arm(c);
	if (++d->n > d->max)
		evconnlistener_disable(d->lev);	/* until on_adopt made room */
	event_active(d->adopt, EV_TIMEOUT, 0);
	return bev;
}

/* A request handed over: the connection, kept alive, waits for the next. */
static void on_answered(struct evhttp_request *req, void *arg)
{
	struct conn *c = arg;
	c->answering = 0;
	conn_restart(c);
}

static void on_request(struct evhttp_request *req, void *arg)
{
	struct httpd *d = arg;
	struct conn *c = conn_of(d, evhttp_request_get_connection(req));
	if (c) {
		c->answering = 1;
		conn_restart(c);
		/* called when evhttp has written the answer: set before it */
		evhttp_request_set_on_complete_cb(req, on_answered, c);
	}
	d->cb(req, d->arg);
}

/* ---- life ---- */

struct httpd *httpd_new(struct event_base *base, const char *host, uint16_t port,
			unsigned max_conns, int deadline_ms, httpd_cb cb, void *arg,
			struct httpd_stats *st, char *err, size_t errlen)
{
	struct httpd *d = calloc(1, sizeof(*d));
	if (!d || !(d->http = evhttp_new(base)) ||
	    !(d->adopt = event_new(base, -1, 0, on_adopt, d)) ||
	    !(d->resume = evtimer_new(base, on_resume, d))) {
		snprintf(err, errlen, "out of memory");
		httpd_free(d);
		return NULL;
	}
	TAILQ_INIT(&d->conns);
	d->base = base;
	d->max = max_conns;
	d->deadline_ms = deadline_ms;
	d->cb = cb;
	d->arg = arg;
	d->st = st;
	errno = 0;
	struct evhttp_bound_socket *bound = evhttp_bind_socket_with_handle(d->http, host, port);
	if (!bound) {
		snprintf(err, errlen, "%s", errno ? strerror(errno) : "bad address");
		httpd_free(d);
		return NULL;
	}
	d->lev = evhttp_bound_socket_get_listener(bound);
	evconnlistener_set_error_cb(d->lev, on_accept_error);
	evhttp_set_bevcb(d->http, on_connection, d);
	evhttp_set_gencb(d->http, on_request, d);
	d->next = servers;
	servers = d;
	return d;
}

struct evhttp *httpd_evhttp(const struct httpd *d)
{
	return d->http;
}

void httpd_set_max(struct httpd *d, unsigned max_conns)
{
	d->max = max_conns;
	make_room(d);
}

unsigned httpd_connections(const struct httpd *d)
{
	return d->n;
}

void httpd_free(struct httpd *d)
{
	struct conn *c;
	if (!d)
		return;
	for (struct httpd **p = &servers; *p; p = &(*p)->next)
		if (*p == d) {
			*p = d->next;
			break;
		}
	if (d->http)
		evhttp_free(d->http);	/* on_closed for the adopted ones */
	while ((c = TAILQ_FIRST(&d->conns)) != NULL) {
		if (c->bev)
			bufferevent_decref(c->bev);	/* evhttp freed its side */
		conn_free(c);
	}
	if (d->adopt)
		event_free(d->adopt);
	if (d->resume)
		event_free(d->resume);
	free(d);
}

void httpd_reply(struct evhttp_request *req, int code, const char *reason,
		 const char *type, const char *csp, const char *body, size_t len)
{
	struct evbuffer *b = evbuffer_new();
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);

	if (!b || evbuffer_add(b, body, len) < 0) {
		if (b)
			evbuffer_free(b);
		evhttp_send_error(req, HTTP_INTERNAL, "out of memory");
		return;
	}
	evhttp_add_header(h, "Content-Type", type);
	evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
	if (csp)
		evhttp_add_header(h, "Content-Security-Policy", csp);
	evhttp_send_reply(req, code, reason, b);	/* HEAD: evhttp sends the headers only */
	evbuffer_free(b);
}
