/*
 * The offline job replay (ibsmd --offline TOPO --jobs TRACE, ibsmd(8)):
 * a filtered SWF trace's jobs started and ended at the trace's times on
 * an XGFT routed by D-mod-K, each job placed by the tree allocator
 * (sm/jobsim/alloc.h), given a communication pattern, and its flows
 * loaded twice (routing/jobs/jobroute.h): on D-mod-K's routes, and by the
 * job routing with its guard, each side with loads of its own.  Pure:
 * results go to the sink.
 *
 * Events: a job's start at its start time and its end at its end time,
 * in time order; at equal times ends before starts, then by job number,
 * then by trace order.  After every event each side's SWML (its largest
 * channel load) goes to the sink; after a start every running job's PJML
 * (the largest current load of any channel it loads, its own and other
 * jobs' flows together) is raised to what it is now, and at its end the
 * job's PJMLs go to the sink.  A job with no flows (one node) has PJML 0.
 * A job finding fewer free nodes than it needs (the trace's machine
 * differs, or nodes rounded up) is skipped and said so.
 *
 * Patterns: the spec given (job_pattern(): ring, 2dnn, 3dnn, random:K,
 * alltoall) for every job, or "dynamic": each job one of ring, 2dnn,
 * 3dnn and random:4 with equal chances, drawn from the seed and the job
 * number.  Random patterns draw from the seed and the job number too, so
 * a job's pattern does not depend on the jobs before it.  Ranks are the
 * job's hosts in ascending order.
 */
#ifndef IBSMD_JOBSIM_REPLAY_H
#define IBSMD_JOBSIM_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "routing/jobs/jobroute.h"
#include "sm/jobsim/swf.h"

#define REPLAY_DYNAMIC "dynamic"

struct replay_opts {
	const char *pattern;	/* a job_pattern() spec or REPLAY_DYNAMIC */
	uint64_t seed;
};

/* A job's outcome, at its end. */
struct replay_job {
	int64_t id;
	uint32_t nodes;
	const char *pattern;		/* its spec */
	size_t n_flows;
	int64_t pjml_dmodk, pjml_jobs;	/* JOB_LOAD_ONE units */
	int guarded;			/* it has flows and the job routing kept
				 * D-mod-K for it (the guard) */
};

struct replay_sink {
	void (*swml)(void *ctx, int64_t t, int64_t dmodk, int64_t jobs);
	void (*job)(void *ctx, const struct replay_job *j);
	void (*skipped)(void *ctx, const struct swf_job *j, uint32_t free_hosts);
	void *ctx;
};

struct replay_summary {
	size_t n;			/* jobs placed */
	size_t skipped, guarded;
	int64_t sum_dmodk, max_dmodk;	/* PJML over the placed jobs */
	int64_t sum_jobs, max_jobs;
	int64_t swml_dmodk, swml_jobs;	/* the largest SWML of each side */
};

/*
 * Replays jobs[0..n) on the tree tr (a fabric and its D-mod-K tables).
 * 0, or -1 with err (a bad pattern, no memory).
 */
int replay_run(const struct job_tree *tr, const struct swf_job *jobs, size_t n,
	       const struct replay_opts *o, const struct replay_sink *sink,
	       struct replay_summary *s, char *err, size_t errlen);

#endif
