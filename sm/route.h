/* Runs the configured routing engines in order, falling back with a reason. */
#ifndef IBSMD_ROUTE_H
#define IBSMD_ROUTE_H

#include <stdint.h>

#include "../routing/engine.h"
#include "config.h"

/*
 * Routes f (LIDs assigned) with the engine list of c, or with override
 * ("a,b" as -R takes it) when not NULL.  Fills t, *used and *ms (the
 * engine's time).  Returns 0, or -1 when every engine failed.
 */
int sm_route(const struct config *c, const char *override,
	     const struct fabric *f, struct lft_tables *t, const char **used,
	     uint64_t *ms);

/*
 * Routing off the event loop: a worker thread routes a snapshot of the
 * fabric while the loop goes on configuring ports; done runs on the loop
 * with the tables (moved to the callee on success).
 */
struct event_base;
struct route_job;
typedef void (*route_done_fn)(void *arg, int rc, struct lft_tables *t,
			      const char *used, uint64_t ms);

struct route_job *route_job_start(struct event_base *base,
				  const struct config *c, const char *override,
				  const struct fabric *f, route_done_fn done,
				  void *arg);
/* Waits for the thread and drops the result; done is not called. */
void route_job_cancel(struct route_job *j);

#endif
