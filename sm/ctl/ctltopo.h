/*
 * ibsmctl topology: the subnet the SM configured last, as nodes and links
 * with the routes each link carries (JSON), or as Graphviz DOT (--dot,
 * sm/render/dot.h), or as SVG (--svg, sm/render/svg.h).  ibsmctl renders
 * the JSON as text (sm/ibsmctl/ctlrender.c).
 */
#ifndef IBSMD_CTLTOPO_H
#define IBSMD_CTLTOPO_H

#include <stdio.h>

#include <jansson.h>

#include "routing/engine.h"
#include "sm/base/fabric.h"

struct sm;

/*
 * The control command; NULL with err filled on a refusal.  Under the
 * daemon the routes per link are counted on a worker thread and the
 * reply is deferred (NULL returned, control_defer); the worker's copies
 * are freed, its thread joined, by ctl_topology_cancel_all() at shutdown.
 */
json_t *ctl_topology(struct sm *sm, const json_t *req, char *err, size_t errlen);
void ctl_topology_cancel_all(struct sm *sm);

/*
 * The picture of the status page: the SVG of `topology --svg`, drawn on
 * a worker over copies; drawn(arg, svg, len, NULL) follows on the loop
 * (svg malloc'd, the callee's), or drawn(arg, NULL, 0, why).  0 when
 * started, -1 with err (no subnet yet, no thread).  A draw cancelled by
 * ctl_topology_cancel_all() never calls drawn.  settled: called at a
 * heavy sweep's end, the tables are the model's (else, in a heavy
 * sweep, the links are drawn without their routes, as topology does).
 */
typedef void (*topo_drawn_cb)(void *arg, char *svg, size_t len, const char *err);
int ctl_topology_draw(struct sm *sm, int settled, topo_drawn_cb drawn, void *arg,
		      char *err, size_t errlen);

#endif
