/*
 * Jobs (routing.jobs least-max-load): the owner of the live jobs on the
 * loop.  A job is an ID, its nodes' port GUIDs in rank order and a
 * communication pattern; it is routed by the pure core
 * (routing/jobs/jobroute.h) over the XGFT view of the fabric and a copy
 * of the base tables the last heavy sweep routed (D-mod-K's, before any
 * job), on top of the loads of the jobs started before it, and its
 * entries are written between sweeps (SM_JOB_WRITES), the highest
 * switches first (sm/write/plan_jobs.h).  A job's end puts the base
 * entries back and takes its load off.
 *
 * The jobs are saved in STATE_DIR/jobs (sm/model/jobfile.h) at every
 * start and end, read when ibsmd configures the subnet as master for the
 * first time since it became master; every heavy sweep routes them again
 * on its fresh base, in start order, and writes them with its tables.  A
 * job whose nodes left the fabric keeps them, reported, and their flows
 * are left out until they return.
 */
#ifndef IBSMD_JOBS_H
#define IBSMD_JOBS_H

#include <stddef.h>

struct sm;
struct json_t;
struct mtext;

/* sm->jobs; 0, or -1 with err (no memory, a -R list other than dmodk). */
int jobs_init(struct sm *sm, char *err, size_t errlen);
void jobs_free(struct sm *sm);

/*
 * A heavy sweep took a new model (subnet_take): the tree, the loads and
 * the base copy, the old model's, go until jobs_rebase(); the jobs stay.
 */
void jobs_model_changed(struct sm *sm);
/*
 * The heavy sweep routed sm->sub.lft: keep a copy as the base, build the
 * tree and the loads again, route the live jobs in start order and
 * apply their entries to sm->sub.lft, which the sweep then writes.
 */
void jobs_rebase(struct sm *sm);
/* The heavy sweep's writes are answered (ok: none failed). */
void jobs_programmed(struct sm *sm, int ok);
/* The SM is no longer master: the jobs are the next master's (the file). */
void jobs_abandon(struct sm *sm);
/* The loop is free (the sweeper's waited hook): 1 when writes started. */
int jobs_resume(struct sm *sm);
/* Whether jobs are live (a reload may not turn routing.jobs off then). */
int jobs_live(const struct sm *sm);

/* ibsmctl job start|end|list|loads. */
struct json_t *jobs_ctl(struct sm *sm, const struct json_t *req, char *err,
			size_t errlen);
/* status's "jobs", /metrics' ibsmd_jobs and ibsmd_job_max_load. */
struct json_t *jobs_to_ctl(const struct sm *sm);
void jobs_metrics(const struct sm *sm, struct mtext *t);

#endif
