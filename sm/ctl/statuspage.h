/*
 * The status page (GET / on the HTTP listener, sm/ctl/webui.c): one
 * self-contained HTML document rendered from the JSON of the control
 * commands "status" and "health" and the fabric's picture (SVG,
 * sm/render/svg.h).  Pure: no daemon, no I/O; every text is
 * HTML-escaped, for node descriptions are set by the hosts.
 */
#ifndef IBSMD_STATUSPAGE_H
#define IBSMD_STATUSPAGE_H

#include <stddef.h>

#include <jansson.h>

/* The headers that go with the page (and every answer of the listener). */
#define STATUSPAGE_CSP "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

struct statuspage_in {
	const json_t *status;	/* `ibsmctl --json status`, or NULL */
	const char *status_err;	/* why there is none */
	const json_t *health;	/* `ibsmctl --json health`, or NULL */
	const char *health_err;	/* why there is none */
	const char *svg;	/* the picture, or NULL */
	const char *svg_note;	/* why there is none (being drawn, ...) */
};

/* The page, NUL-terminated and malloc'd, its length in *len; NULL on ENOMEM. */
char *statuspage_html(const struct statuspage_in *in, size_t *len);

#endif
