/* ibsmd --offline --jobs: the job replay's driver (sm/offjobs.h). */
#include "sm/offjobs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/jobs/jobroute.h"
#include "sm/base/clock.h"
#include "sm/jobsim/replay.h"
#include "sm/jobsim/swf.h"

#define DEFAULT_PATTERN "3dnn"
#define BASE_ENGINE "dmodk"

static double load(int64_t v)
{
	return (double)v / (double)JOB_LOAD_ONE;
}

static void on_swml(void *ctx, int64_t t, int64_t dmodk, int64_t jobs)
{
	(void)ctx;
	printf("swml: t=%" PRId64 " dmodk=%.3f jobs=%.3f\n", t, load(dmodk),
	       load(jobs));
}

static void on_job(void *ctx, const struct replay_job *j)
{
	(void)ctx;
	printf("job: id=%" PRId64 " nodes=%u pjml_dmodk=%.3f pjml_jobs=%.3f"
	       " pattern=%s flows=%zu guarded=%d\n", j->id, j->nodes,
	       load(j->pjml_dmodk), load(j->pjml_jobs), j->pattern, j->n_flows,
	       j->guarded);
}

static void on_skipped(void *ctx, const struct swf_job *j, uint32_t free_hosts)
{
	(void)ctx;
	printf("skip: id=%" PRId64 " nodes=%u free=%u\n", j->id, j->nodes,
	       free_hosts);
}

static double avg(int64_t sum, size_t n)
{
	return n ? load(sum) / (double)n : 0.0;
}

int offjobs_run(const struct fabric *f, const struct lft_tables *t,
		const char *engine, const struct offjobs_opts *o)
{
	char err[1024];
	if (strcmp(engine, BASE_ENGINE) != 0) {
		fprintf(stderr, "ibsmd: --jobs: the job routing works over %s's tables;"
			" this fabric was routed by %s (-R %s)\n", BASE_ENGINE,
			engine, BASE_ENGINE);
		return 1;
	}
	struct job_tree *tr = job_tree_new(f, t, err, sizeof(err));
	if (!tr) {
		fprintf(stderr, "ibsmd: --jobs: %s\n", err);
		return 1;
	}
	const struct swf_filter flt = {
		.system_nodes = job_tree_hosts(tr),
		.cpus_per_node = o->cpus_per_node ? o->cpus_per_node : 1,
		.first = o->first,
	};
	struct swf_job *jobs = NULL;
	size_t n = 0;
	struct swf_stats ss;
	int rc = 1;
	if (swf_parse(o->text, o->trace, &flt, &jobs, &n, &ss, err,
		      sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: --jobs: %s\n", err);
		goto out;
	}
	printf("trace: %s records=%zu kept=%zu dropped_status=%zu dropped_run=%zu"
	       " dropped_time=%zu dropped_procs=%zu dropped_size=%zu hosts=%u"
	       " cpus_per_node=%u\n", o->trace, ss.records, n, ss.dropped_status,
	       ss.dropped_run, ss.dropped_time, ss.dropped_procs, ss.dropped_size,
	       flt.system_nodes, flt.cpus_per_node);
	const struct replay_opts ro = {
		.pattern = o->pattern ? o->pattern : DEFAULT_PATTERN,
		.seed = o->seed,
	};
	const struct replay_sink sink = {
		.swml = on_swml, .job = on_job, .skipped = on_skipped,
	};
	struct replay_summary s;
	uint64_t t0 = clock_us();
	if (replay_run(tr, jobs, n, &ro, &sink, &s, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: --jobs: %s\n", err);
		goto out;
	}
	uint64_t us = clock_us() - t0;
	printf("jobs: n=%zu avg_pjml_dmodk=%.3f max_pjml_dmodk=%.3f"
	       " avg_pjml_jobs=%.3f max_pjml_jobs=%.3f skipped=%zu guarded=%zu"
	       " max_swml_dmodk=%.3f max_swml_jobs=%.3f pattern=%s replay_ms=%"
	       PRIu64 "\n", s.n, avg(s.sum_dmodk, s.n), load(s.max_dmodk),
	       avg(s.sum_jobs, s.n), load(s.max_jobs), s.skipped, s.guarded,
	       load(s.swml_dmodk), load(s.swml_jobs), ro.pattern, us / 1000);
	rc = 0;
out:
	free(jobs);
	job_tree_free(tr);
	return rc;
}
