/*
 * The daemon's metrics in the Prometheus text exposition format (0.0.4):
 * one renderer (metrics.c) for the three outputs -- `ibsmctl metrics`,
 * HTTP GET /metrics when metrics.listen names an address, and the file
 * ibsmd.prom in metrics.textfile_dir for node_exporter's textfile
 * collector (metrics_out.c).  Every name starts with ibsmd_ and carries
 * its unit; counters end in _total.
 */
#ifndef IBSMD_METRICS_H
#define IBSMD_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "sm/ctl/webui.h"

struct sm;
struct config;

/* The content type of the format, for the HTTP answer. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
/* The file in metrics.textfile_dir. */
#define METRICS_TEXTFILE "ibsmd.prom"
/* metrics.textfile_dir is rewritten at least this often, and after every sweep. */
#define METRICS_TEXTFILE_PERIOD_S 60

/* ---- the renderer (metrics.c) ---- */

/* A growing text; oom set once an allocation failed (then text is lost). */
struct mtext {
	char *buf;
	size_t len, cap;
	int oom;
};

/*
 * Escapes in for the exposition format into out (NUL-terminated, cut
 * to outlen): backslash and newline always, the double quote in a label
 * value (label != 0) but not in a HELP text.  Returns the length the
 * whole escaped text needs, as snprintf does.
 */
size_t metrics_escape(char *out, size_t outlen, const char *in, int label);
/* "# HELP name help" and "# TYPE name type" (type: counter, gauge). */
void mtext_family(struct mtext *t, const char *name, const char *type,
		  const char *help);
/* "name v" or "name{label="value"} v"; label NULL for none. */
void mtext_sample(struct mtext *t, const char *name, const char *label,
		  const char *value, double v);
/* printf into t. */
void mtext_printf(struct mtext *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* in escaped as a label value (label) or HELP text, malloc'd; NULL: ENOMEM. */
char *mtext_escaped(const char *in, int label);
/* "name{labels} v": labels already "k=\"v\",..." (values escaped). */
void mtext_labelled(struct mtext *t, const char *name, const char *labels,
		    uint64_t v);
/*
 * The daemon's metrics, a malloc'd NUL-terminated text (*len without the
 * NUL), or NULL when out of memory.  start_time: the daemon's start,
 * wall clock seconds.
 */
char *metrics_render(const struct sm *sm, uint64_t start_time, size_t *len);

/* ---- the outputs (metrics_out.c) ---- */

struct metrics;

/*
 * Starts what cfg asks for (listen unless serve is 0), for sm's metrics;
 * NULL with err.  control answers the status page's commands
 * (sm_control(), sm/ctl/webui.h; NULL: the page says there is none).
 */
struct event_base;
struct metrics *metrics_new(struct sm *sm, struct event_base *base,
			    const struct config *cfg, int serve,
			    webui_control_fn control, char *err, size_t errlen);
/*
 * A reloaded policy c (not yet sm->cfg): binds a changed metrics.listen,
 * starts or stops the textfile.  -1 with err when the new address cannot
 * be bound, and then the old one is kept.
 */
int metrics_reconfigure(struct metrics *m, const struct config *c,
			char *err, size_t errlen);
/* A sweep ended: rewrites the textfile (if any). */
void metrics_sweep_done(struct metrics *m);
/*
 * A heavy sweep configured the subnet, its tables in place, or the
 * performance manager found hot links: the status page's picture is
 * drawn again (sm/ctl/webui.h).
 */
void metrics_heavy_sweep_done(struct metrics *m);
/*
 * The HTTP server's figures (connections open, closed by the daemon,
 * failed accepts) into t; m NULL: none.  metrics_render's part.
 */
void metrics_http_render(const struct metrics *m, struct mtext *t);
/* The text of metrics_render() for this daemon (NULL on ENOMEM). */
char *metrics_text(const struct metrics *m, size_t *len);
void metrics_free(struct metrics *m);

#endif
