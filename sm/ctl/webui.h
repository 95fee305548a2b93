/*
 * What the HTTP listener serves besides /metrics (metrics_out.c hands
 * it every other path): the status page GET / (statuspage.h), the
 * fabric's picture GET /fabric.svg (drawn on a worker after each heavy
 * sweep and cached: ctl_topology_draw()), and the JSON of the control
 * commands "status" and "health" at GET /api/status and /api/health.
 * Read-only: GET and HEAD, anything else 405.
 */
#ifndef IBSMD_WEBUI_H
#define IBSMD_WEBUI_H

#include <stddef.h>

#include <jansson.h>

struct sm;
struct evhttp_request;
struct webui;

/* The control commands' handler (sm_control(), sm/daemon.h). */
typedef json_t *(*webui_control_fn)(void *ctx, const char *cmd, json_t *req,
				    char *err, size_t errlen);

/* Seconds a client is told to wait for a picture being drawn. */
#define WEBUI_RETRY_S	5

/* NULL on ENOMEM.  sm is only handed to control and ctl_topology_draw(). */
struct webui *webui_new(struct sm *sm, webui_control_fn control);
/* A heavy sweep configured the subnet, its tables in place: drawn again. */
void webui_heavy_sweep_done(struct webui *w);
/* Answers req when path is one of the webui's: 1, else 0 (not answered). */
int webui_serve(struct webui *w, struct evhttp_request *req, const char *path);
/* After ctl_topology_cancel_all(): no draw calls back any more. */
void webui_free(struct webui *w);

#endif
