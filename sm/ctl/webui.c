/*
 * The status page, the picture and the JSON endpoints (see webui.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>

#include "sm/base/clock.h"
#include "sm/base/log.h"
#include "sm/ctl/ctltopo.h"
#include "sm/ctl/httpd.h"
#include "sm/ctl/statuspage.h"
#include "sm/ctl/webui.h"

#define JSON_TYPE	"application/json"
#define HTML_TYPE	"text/html; charset=utf-8"
#define SVG_TYPE	"image/svg+xml"
#define TEXT_TYPE	"text/plain; charset=utf-8"

struct webui {
	struct sm *sm;		/* for control and ctl_topology_draw() only */
	webui_control_fn control;
	char *svg;		/* the last picture drawn, or NULL */
	size_t svg_len;
	int drawing;		/* a worker draws */
	uint64_t draw_start_ms;	/* since when (clock_ms()) */
	int again;		/* another heavy sweep came meanwhile */
	char why[160];		/* the last draw's failure, or "" */
};

struct webui *webui_new(struct sm *sm, webui_control_fn control)
{
	struct webui *w = calloc(1, sizeof(*w));
	if (w) {
		w->sm = sm;
		w->control = control;
	}
	return w;
}

void webui_free(struct webui *w)
{
	if (!w)
		return;
	free(w->svg);
	free(w);
}

static void draw(struct webui *w, int settled);

static void on_drawn(void *arg, char *svg, size_t len, const char *err)
{
	struct webui *w = arg;

	w->drawing = 0;
	if (svg) {
		log_info("the fabric's picture drawn in %llu ms (%zu KB of SVG)",
			 (unsigned long long)(clock_ms() - w->draw_start_ms), len / 1024);
		free(w->svg);
		w->svg = svg;
		w->svg_len = len;
		w->why[0] = '\0';
	} else {
		if (strcmp(w->why, err ? err : "?"))
			log_warn("the fabric's picture: %s", err ? err : "?");
		snprintf(w->why, sizeof(w->why), "%s", err ? err : "?");
	}
	if (w->again) {		/* another heavy sweep ended meanwhile; one may run now */
		w->again = 0;
		draw(w, 0);
	}
}

/*
 * Starts a draw (or asks for one more after the one under way); settled:
 * at a heavy sweep's end (ctl_topology_draw).
 */
static void draw(struct webui *w, int settled)
{
	char err[160];

	if (w->drawing) {
		w->again = 1;
		return;
	}
	if (ctl_topology_draw(w->sm, settled, on_drawn, w, err, sizeof(err)) < 0) {
		snprintf(w->why, sizeof(w->why), "%s", err);
		return;
	}
	w->drawing = 1;
	w->draw_start_ms = clock_ms();
}

void webui_heavy_sweep_done(struct webui *w)
{
	if (w)
		draw(w, 1);
}

/* The JSON of a control command; NULL with err. */
static json_t *command(struct webui *w, const char *cmd, char *err, size_t errlen)
{
	json_t *req = json_pack("{s:s}", "cmd", cmd);
	json_t *res = req && w->control ? w->control(w->sm, cmd, req, err, errlen) : NULL;
	if (!req)
		snprintf(err, errlen, "out of memory");
	else if (!w->control)
		snprintf(err, errlen, "no control commands here");
	json_decref(req);
	return res;
}

static void reply_text(struct evhttp_request *req, int code, const char *reason,
		       const char *text)
{
	httpd_reply(req, code, reason, TEXT_TYPE, STATUSPAGE_CSP, text, strlen(text));
}

/* GET /api/status, /api/health: the command's JSON, or 503 and why not. */
static void serve_json(struct webui *w, struct evhttp_request *req, const char *cmd)
{
	char err[256];
	json_t *res = command(w, cmd, err, sizeof(err));
	if (!res) {
		json_t *e = json_pack("{s:s}", "error", err);
		char *s = e ? json_dumps(e, JSON_COMPACT) : NULL;
		json_decref(e);
		if (s)
			httpd_reply(req, 503, "Service Unavailable", JSON_TYPE, STATUSPAGE_CSP,
				    s, strlen(s));
		else
			evhttp_send_error(req, HTTP_INTERNAL, "out of memory");
		free(s);
		return;
	}
	char *s = json_dumps(res, JSON_INDENT(2));
	json_decref(res);
	if (!s) {
		evhttp_send_error(req, HTTP_INTERNAL, "out of memory");
		return;
	}
	httpd_reply(req, HTTP_OK, "OK", JSON_TYPE, STATUSPAGE_CSP, s, strlen(s));
	free(s);
}

/* Why there is no picture; a draw is started when none is under way. */
static const char *no_picture(struct webui *w)
{
	if (!w->drawing)
		draw(w, 0);
	return w->drawing ? "being drawn: reload in a few seconds" : w->why;
}

static void serve_svg(struct webui *w, struct evhttp_request *req)
{
	if (w->svg) {
		httpd_reply(req, HTTP_OK, "OK", SVG_TYPE, STATUSPAGE_CSP, w->svg, w->svg_len);
		return;
	}
	const char *why = no_picture(w);
	char retry[16];
	snprintf(retry, sizeof(retry), "%d", WEBUI_RETRY_S);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", retry);
	reply_text(req, 503, "Service Unavailable", why);
}

static void serve_page(struct webui *w, struct evhttp_request *req)
{
	char serr[256], herr[256];
	json_t *status = command(w, "status", serr, sizeof(serr));
	json_t *health = command(w, "health", herr, sizeof(herr));
	const struct statuspage_in in = {
		.status = status, .status_err = serr,
		.health = health, .health_err = herr,
		.svg = w->svg, .svg_note = w->svg ? NULL : no_picture(w),
	};
	size_t len;
	char *html = statuspage_html(&in, &len);
	json_decref(status);
	json_decref(health);
	if (!html) {
		evhttp_send_error(req, HTTP_INTERNAL, "out of memory");
		return;
	}
	httpd_reply(req, HTTP_OK, "OK", HTML_TYPE, STATUSPAGE_CSP, html, len);
	free(html);
}

int webui_serve(struct webui *w, struct evhttp_request *req, const char *path)
{
	static const char *const paths[] = { "/", "/fabric.svg", "/api/status", "/api/health" };
	size_t i = 0;
	while (i < sizeof(paths) / sizeof(paths[0]) && strcmp(path, paths[i]))
		i++;
	if (!w || i == sizeof(paths) / sizeof(paths[0]))
		return 0;
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "GET, HEAD");
		reply_text(req, 405, "Method Not Allowed", "read-only: only GET and HEAD\n");
		return 1;
	}
	switch (i) {
	case 0: serve_page(w, req); break;
	case 1: serve_svg(w, req); break;
	case 2: serve_json(w, req, "status"); break;
	default: serve_json(w, req, "health"); break;
	}
	return 1;
}
