/*
 * An HTTP server on the event loop with bounds a client cannot stretch
 * (httpd.c): libevent's evhttp, plus a cap on connections, a deadline
 * per request, and a listener that pauses when accept() fails.  The
 * metrics' server (metrics_out.c) is its user.
 */
#ifndef IBSMD_HTTPD_H
#define IBSMD_HTTPD_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct evhttp;
struct evhttp_request;

/* A failed accept() (out of descriptors or memory) pauses the listener this long. */
#define HTTPD_ACCEPT_PAUSE_MS	1000

/* What the servers did, counted by their owner (kept across a rebind). */
struct httpd_stats {
	uint64_t closed_cap;		/* for a newcomer past max_conns */
	uint64_t closed_deadline;	/* no complete request (or its answer
					   not taken) by the deadline */
	uint64_t accept_errors;		/* accept() failed: each a pause */
};

struct httpd;

/* Every complete request, as evhttp_set_gencb's callback. */
typedef void (*httpd_cb)(struct evhttp_request *req, void *arg);

/*
 * Binds host:port and serves: cb answers each request (synchronously or
 * not).  At most max_conns connections; each gets deadline_ms to send a
 * complete request (from its start, or from the last answer when kept
 * alive) and as long again for the answer to be taken.  st is counted
 * into.  NULL with err.  The evhttp (httpd_evhttp) is there for its
 * sizes and methods; its general callback and bufferevent callback are
 * ours.
 */
struct httpd *httpd_new(struct event_base *base, const char *host, uint16_t port,
			unsigned max_conns, int deadline_ms, httpd_cb cb, void *arg,
			struct httpd_stats *st, char *err, size_t errlen);
struct evhttp *httpd_evhttp(const struct httpd *d);
/* A new cap: connections past it are closed now, as for a newcomer. */
void httpd_set_max(struct httpd *d, unsigned max_conns);
/* Connections open now. */
unsigned httpd_connections(const struct httpd *d);
/*
 * Answers req with code and body (len bytes; HEAD: the headers only),
 * Content-Type type, and the headers every answer of the listener
 * carries: X-Content-Type-Options nosniff and, csp not NULL, that
 * Content-Security-Policy.  Out of memory: 500.
 */
void httpd_reply(struct evhttp_request *req, int code, const char *reason,
		 const char *type, const char *csp, const char *body, size_t len);
/* Closes every connection and the listener. */
void httpd_free(struct httpd *d);

#endif
