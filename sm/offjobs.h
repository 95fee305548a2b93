/*
 * ibsmd --offline TOPO --jobs TRACE: the job replay's driver (the replay
 * itself is sm/jobsim/replay.h), called by sm/offline.c once the fabric
 * is routed.
 */
#ifndef IBSMD_OFFJOBS_H
#define IBSMD_OFFJOBS_H

#include <stdint.h>

#include "routing/engine.h"
#include "sm/base/fabric.h"

struct offjobs_opts {
	const char *trace;		/* --jobs FILE: its name */
	const char *text;		/* ... and its text */
	const char *pattern;		/* --pattern, NULL: 3dnn */
	uint32_t first;			/* --first N, 0: every job */
	uint32_t cpus_per_node;		/* --cpus-per-node C, 0: 1 */
	uint64_t seed;			/* --seed S */
};

/*
 * Replays the trace on f routed by D-mod-K into t (engine: the engine
 * that routed them); prints the trace:, swml:, job: and jobs: lines.
 * The exit status: 0, or 1 (said why).
 */
int offjobs_run(const struct fabric *f, const struct lft_tables *t,
		const char *engine, const struct offjobs_opts *o);

#endif
