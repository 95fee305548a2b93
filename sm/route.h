/* Runs the configured routing engines in order, falling back with a reason. */
#ifndef IBSMD_ROUTE_H
#define IBSMD_ROUTE_H

#include <stdint.h>

#include "routing/engine.h"
#include "reconfig/repair.h"
#include "sm/model/config.h"
#include "sm/model/part_resolve.h"
#include "sm/model/qos.h"

/*
 * Routes f (LIDs assigned) with the engine list of c, or with override
 * ("a,b" as -R takes it) when not NULL, in the partitions parts resolved
 * against f (NULL: none).  Fills t, *used and *ms (the
 * engine's time).  Returns 0, or -1 when every engine failed.
 */
int sm_route(const struct config *c, const char *override,
	     const struct fabric *f, const struct part_model *parts,
	     struct lft_tables *t, const char **used, uint64_t *ms);

/*
 * Routing off the event loop: a worker thread routes a snapshot of the
 * fabric while the loop goes on configuring ports; done runs on the loop
 * with the result.
 *
 * Given the previous sweep's fabric and tables, the worker also tries a
 * repair (reconfig/repair.h): when the fabric only lost links or nodes,
 * entries whose old path still works are kept, so that only the LFT
 * blocks with a broken entry need writing.  Repaired tables that fail the
 * route check (a dependency cycle for an engine that promises none) are
 * dropped for a fresh routing.
 */
struct route_result {
	int rc;			/* 0, or -1: no engine could route */
	struct lft_tables t;	/* moved to the callee (zero it to keep them) */
	const char *used;	/* the engine that routed */
	uint64_t ms;		/* its time */
	int repaired;		/* the old tables were kept (where intact) */
	struct repair_stats rs;
	uint64_t repair_ms;	/* the repair and its check */
	char note[192];		/* why no repair, when one was possible */
	/*
	 * The QoS mode (sm/model/qos.c) run on the thread over t, so that VOQsw's
	 * stages (seconds on thousands of hosts) never hold the loop:
	 * qos_ran 0 when the policy has none or no engine routed.
	 */
	int qos_ran;
	int qos_rc;		/* qos_apply()'s */
	struct qos_report qos;
	uint64_t qos_ms;
};

struct event_base;
struct route_job;
typedef void (*route_done_fn)(void *arg, struct route_result *r);

/*
 * prev_f/prev_t/prev_engine: the previous model, its tables and the engine
 * that made them, or NULL.  prev_f is copied; prev_t is moved into the
 * job (zeroed in the caller).  When the fabric is the same (nodes, links,
 * LIDs) the old tables are kept and no engine runs: r->ms is 0.
 * adopted: prev_t was read from the switches (a new master), not made by
 * an engine: the engine routes and every old entry whose path still works
 * is kept, even when the fabric is the same.
 * lw: the learned pFTree-Wt weights (copied), NULL: none.  The job
 * resolves c's partitions against its own copy of f (sm/model/part_resolve.h).
 */
struct route_job *route_job_start(struct event_base *base,
				  const struct config *c, const char *override,
				  const struct fabric *f,
				  const struct fabric *prev_f,
				  struct lft_tables *prev_t,
				  const char *prev_engine, int adopted,
				  const struct part_weights *lw,
				  route_done_fn done, void *arg);
/* Waits for the thread and drops the result; done is not called. */
void route_job_cancel(struct route_job *j);

#endif
