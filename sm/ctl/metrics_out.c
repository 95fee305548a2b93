/*
 * Where the metrics go besides `ibsmctl metrics`: an HTTP server on the
 * event loop (libevent's evhttp) answering GET /metrics the way
 * Prometheus scrapes, and the node_exporter textfile collector's file,
 * DIR/ibsmd.prom, replaced atomically (sm/base/wfile.h) after every sweep and
 * every METRICS_TEXTFILE_PERIOD_S seconds, and removed when the daemon
 * stops.
 *
 * The server never blocks the loop: evhttp reads and writes without
 * blocking, a request's headers are bounded (a longer one gets 413), a
 * request with a body is refused, and httpd.c bounds the rest: at most
 * metrics.max_connections connections, HTTP_TIMEOUT_S for each request
 * however slowly its bytes come, accept() paused when it fails.  It
 * changes nothing in the daemon: every request only renders the text.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "sm/daemon.h"
#include "sm/base/fdlimit.h"
#include "sm/base/log.h"
#include "sm/ctl/control.h"
#include "sm/ctl/httpd.h"
#include "sm/ctl/metrics.h"
#include "sm/ctl/statuspage.h"
#include "sm/ctl/webui.h"
#include "sm/model/config.h"
#include "sm/base/wfile.h"

#define HTTP_TIMEOUT_S		10
#define HTTP_MAX_HEADERS	8192
#define HTTP_MAX_BODY		1024

struct metrics {
	struct sm *sm;			/* rendered (metrics.c), not read here */
	struct event_base *base;
	uint64_t start_time;		/* wall clock, seconds */
	int serve;			/* 0 (--once): metrics.listen ignored */
	struct httpd *http;		/* NULL: not serving */
	struct webui *web;		/* what it serves besides /metrics */
	char listen[sizeof(((struct config *)0)->metrics_listen)];
	int max_conns;			/* metrics.max_connections */
	struct httpd_stats http_st;	/* of every server this daemon had */
	struct event *textfile_timer;
	char textfile_dir[sizeof(((struct config *)0)->metrics_textfile_dir)];
	char last_err[512];		/* the textfile's last error, logged once */
	int written;			/* the textfile is there, ours */
};

char *metrics_text(const struct metrics *m, size_t *len)
{
	return metrics_render(m->sm, m->start_time, len);
}

/* ---- HTTP: GET (and HEAD) /metrics; the rest is webui.c's ---- */

static void send_plain(struct evhttp_request *req, int code, const char *reason,
		       const char *body)
{
	httpd_reply(req, code, reason, "text/plain; charset=utf-8", STATUSPAGE_CSP,
		    body, strlen(body));
}

static void on_request(struct evhttp_request *req, void *arg)
{
	struct metrics *m = arg;
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;

	if (path && webui_serve(m->web, req, path))
		return;
	if (!path || strcmp(path, "/metrics") != 0) {
		send_plain(req, HTTP_NOTFOUND, "Not Found",
			   "not found: try /, /fabric.svg, /api/status, /api/health or /metrics\n");
		return;
	}
	if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "GET, HEAD");
		send_plain(req, 405, "Method Not Allowed", "only GET and HEAD\n");
		return;
	}
	size_t len;
	char *text = metrics_text(m, &len);
	if (!text) {
		evhttp_send_error(req, HTTP_INTERNAL, "out of memory");
		return;
	}
	httpd_reply(req, HTTP_OK, "OK", METRICS_CONTENT_TYPE, STATUSPAGE_CSP, text, len);
	free(text);
}

/*
 * The descriptors the daemon may need at once: the HTTP connections, the
 * control socket's clients with a topology worker's eventfd each, and
 * its own (DAEMON_FDS: the standard streams, the loop's epoll, the stop
 * pipes, the umad and issm devices with umad2sim's socket, the umad
 * watcher's and the workers' eventfds, the listeners, a state file being
 * written, the journal's socket), with room to spare.
 * etc/ibsmd.service.in's LimitNOFILE is this for CFG_MAX_HTTP_CONNS.
 */
#define DAEMON_FDS	64

static void fd_budget(const char *listen, int max_conns)
{
	int http = listen[0] ? max_conns : 0;
	unsigned long need = (unsigned long)http + 2 * CONTROL_MAX_CLIENTS + DAEMON_FDS;
	unsigned long have;
	if (fdlimit_raise(need, &have) < 0)
		log_warn("the descriptor limit is %lu, below the %lu that %d HTTP connections"
			 " (metrics.max_connections), %d control clients and the daemon's own"
			 " may need (LimitNOFILE): past it, accept() pauses and a sweep may"
			 " stop the daemon", have, need, http, CONTROL_MAX_CLIENTS);
}

static struct httpd *http_start(struct metrics *m, const char *listen, int max_conns,
				char *err, size_t errlen)
{
	char host[256], why[256];
	uint16_t port;

	if (config_parse_listen(listen, host, sizeof(host), &port, err, errlen) < 0)
		return NULL;
	struct httpd *d = httpd_new(m->base, host, port, (unsigned)max_conns,
				    HTTP_TIMEOUT_S * 1000, on_request, m, &m->http_st,
				    why, sizeof(why));
	if (!d) {
		snprintf(err, errlen, "cannot listen on %s: %s", listen, why);
		return NULL;
	}
	struct evhttp *http = httpd_evhttp(d);
	/* every method reaches on_request, which answers 405 (not evhttp's 501) */
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
		EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
		EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT |
		EVHTTP_REQ_PATCH);
	evhttp_set_max_headers_size(http, HTTP_MAX_HEADERS);
	evhttp_set_max_body_size(http, HTTP_MAX_BODY);
	evhttp_set_timeout(http, HTTP_TIMEOUT_S);
	return d;
}

void metrics_http_render(const struct metrics *m, struct mtext *t)
{
	static const struct httpd_stats none;
	const struct httpd_stats *st = m ? &m->http_st : &none;

	mtext_family(t, "ibsmd_http_connections", "gauge",
		     "HTTP connections open on metrics.listen");
	mtext_sample(t, "ibsmd_http_connections", NULL, NULL,
		     m && m->http ? httpd_connections(m->http) : 0);
	mtext_family(t, "ibsmd_http_connections_closed_total", "counter",
		     "HTTP connections the daemon closed: for a newcomer past"
		     " metrics.max_connections, or without a complete request in time");
	mtext_sample(t, "ibsmd_http_connections_closed_total", "reason",
		     "max_connections", (double)st->closed_cap);
	mtext_sample(t, "ibsmd_http_connections_closed_total", "reason",
		     "deadline", (double)st->closed_deadline);
	mtext_family(t, "ibsmd_http_accept_errors_total", "counter",
		     "HTTP accept() failures (out of descriptors or memory), each"
		     " pausing the listener for a second");
	mtext_sample(t, "ibsmd_http_accept_errors_total", NULL, NULL,
		     (double)st->accept_errors);
}

/* ---- the textfile collector's file ---- */

static void textfile_write(struct metrics *m)
{
	char path[4096], err[512];
	struct wfile w;
	size_t len;

	if (!m->textfile_dir[0])
		return;
	snprintf(path, sizeof(path), "%s/%s", m->textfile_dir, METRICS_TEXTFILE);
	char *text = metrics_text(m, &len);
	if (!text) {
		snprintf(err, sizeof(err), "out of memory");
	} else if (wfile_open(&w, path, err, sizeof(err)) == 0) {
		if (fwrite(text, 1, len, w.fp) != len) {
			snprintf(err, sizeof(err), "cannot write %.200s: %s", w.tmp, strerror(errno));
			wfile_abort(&w);
		} else if (wfile_commit(&w, err, sizeof(err)) == 0) {
			err[0] = '\0';
			m->written = 1;
		}
	}
	free(text);
	if (err[0] && strcmp(err, m->last_err) != 0)	/* once per new reason */
		log_warn("metrics.textfile_dir: %s", err);
	else if (!err[0] && m->last_err[0])
		log_notice("metrics.textfile_dir: %s written again", path);
	snprintf(m->last_err, sizeof(m->last_err), "%s", err);
}

static void on_textfile_timer(evutil_socket_t fd, short what, void *arg)
{
	textfile_write(arg);
}

/*
 * A daemon's file goes with it (a reload turning it off or moving it, the
 * end), so that node_exporter exports no stale figures; --once's stays.
 */
static void textfile_remove(const struct metrics *m)
{
	char path[4096];

	if (!m->serve || !m->written)
		return;
	snprintf(path, sizeof(path), "%s/%s", m->textfile_dir, METRICS_TEXTFILE);
	if (unlink(path) < 0 && errno != ENOENT)
		log_warn("metrics.textfile_dir: cannot remove %s: %s", path, strerror(errno));
}

/* Starts or stops the periodic write for dir ("" stops). */
static int textfile_set(struct metrics *m, const char *dir)
{
	textfile_remove(m);
	m->written = 0;
	snprintf(m->textfile_dir, sizeof(m->textfile_dir), "%s", dir);
	m->last_err[0] = '\0';
	if (!dir[0]) {
		if (m->textfile_timer)
			event_del(m->textfile_timer);
		return 0;
	}
	if (!m->textfile_timer) {
		m->textfile_timer = event_new(m->base, -1, EV_PERSIST,
					      on_textfile_timer, m);
		if (!m->textfile_timer)
			return -1;
	}
	struct timeval tv = { .tv_sec = METRICS_TEXTFILE_PERIOD_S };
	event_add(m->textfile_timer, &tv);
	textfile_write(m);
	return 0;
}

void metrics_sweep_done(struct metrics *m)
{
	if (m)
		textfile_write(m);
}

void metrics_heavy_sweep_done(struct metrics *m)
{
	if (m && m->http)
		webui_heavy_sweep_done(m->web);
}

/* ---- life ---- */

struct metrics *metrics_new(struct sm *sm, struct event_base *base,
			    const struct config *cfg, int serve,
			    webui_control_fn control, char *err, size_t errlen)
{
	struct metrics *m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	m->sm = sm;
	m->base = base;
	m->start_time = (uint64_t)time(NULL);
	m->serve = serve;
	m->max_conns = cfg->metrics_max_conns;
	if (serve)
		fd_budget(cfg->metrics_listen, m->max_conns);
	if (serve && !(m->web = webui_new(sm, control))) {
		snprintf(err, errlen, "out of memory");
		free(m);
		return NULL;
	}
	if (serve && cfg->metrics_listen[0]) {
		m->http = http_start(m, cfg->metrics_listen, m->max_conns, err, errlen);
		if (!m->http) {
			webui_free(m->web);
			free(m);
			return NULL;
		}
		snprintf(m->listen, sizeof(m->listen), "%s", cfg->metrics_listen);
		log_notice("metrics served at http://%s/metrics, the status page at http://%s/",
			   m->listen, m->listen);
	}
	if (textfile_set(m, cfg->metrics_textfile_dir) < 0) {
		snprintf(err, errlen, "out of memory");
		metrics_free(m);
		return NULL;
	}
	return m;
}

int metrics_reconfigure(struct metrics *m, const struct config *c, char *err,
			size_t errlen)
{
	if (m->serve && (strcmp(c->metrics_listen, m->listen) != 0 ||
			 c->metrics_max_conns != m->max_conns))
		fd_budget(c->metrics_listen, c->metrics_max_conns);
	if (m->serve && strcmp(c->metrics_listen, m->listen) != 0) {
		struct httpd *http = NULL;
		if (c->metrics_listen[0] &&
		    !(http = http_start(m, c->metrics_listen, c->metrics_max_conns,
					err, errlen)))
			return -1;
		httpd_free(m->http);
		m->http = http;
		snprintf(m->listen, sizeof(m->listen), "%s", c->metrics_listen);
		log_notice("metrics.listen: %s", m->listen[0] ? m->listen : "off");
	} else if (m->http && c->metrics_max_conns != m->max_conns) {
		httpd_set_max(m->http, (unsigned)c->metrics_max_conns);
		log_notice("metrics.max_connections: %d", c->metrics_max_conns);
	}
	m->max_conns = c->metrics_max_conns;
	if (strcmp(c->metrics_textfile_dir, m->textfile_dir) != 0 &&
	    textfile_set(m, c->metrics_textfile_dir) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	httpd_free(m->http);
	webui_free(m->web);
	if (m->textfile_timer)
		event_free(m->textfile_timer);
	textfile_remove(m);
	free(m);
}
