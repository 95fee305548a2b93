/* The offline job replay's event simulation (sm/jobsim/replay.h). */
#include "sm/jobsim/replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/jobsim/alloc.h"

/* The paper's dynamic mix: Random8 is left out of it. */
static const char *const DYNAMIC_MIX[] = { "ring", "2dnn", "3dnn", "random:4" };
#define N_DYNAMIC (sizeof(DYNAMIC_MIX) / sizeof(DYNAMIC_MIX[0]))
/* A pattern's check before the replay: this many ranks. */
#define CHECK_RANKS 4

enum { EV_END = 0, EV_START = 1 };	/* ends first at equal times */

struct event {
	int64_t t;
	int kind;
	int64_t id;
	size_t job;
};

struct run {
	uint32_t *hosts;
	struct job_route dk;		/* on D-mod-K's routes */
	struct job_route jr;		/* the job routing's */
	int64_t pjml_dmodk, pjml_jobs;
	const char *pattern;
	size_t n_flows;
	int placed;
	size_t slot;			/* in the running list */
};

/* splitmix64: a job's draws from the seed and its number alone. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static int cmp_event(const void *x, const void *y)
{
	const struct event *a = x, *b = y;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind - b->kind;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->job < b->job ? -1 : a->job > b->job;
}

/* The pod level: 2 in a tree of three or more levels, else the top. */
#define POD_LEVEL 2

/*
 * The allocator of tr's hosts: leaves and pods as the tree numbers its
 * subtrees (job_tree_group()); in a tree of one or two levels the pod is
 * the whole system.
 */
static struct alloc *tree_alloc(const struct job_tree *tr)
{
	uint32_t nh = job_tree_hosts(tr), levels = job_tree_levels(tr);
	uint32_t *leaf_of = malloc(((size_t)nh + 1) * sizeof(*leaf_of));
	uint32_t *pod_of = malloc(((size_t)nh + 1) * sizeof(*pod_of));
	struct alloc *a = NULL;
	if (!leaf_of || !pod_of)
		goto out;
	uint32_t n_leaves = 0, n_pods = 0;
	for (uint32_t h = 0; h < nh; h++) {
		uint32_t l = job_tree_group(tr, h, 1);
		uint32_t p = levels > POD_LEVEL ? job_tree_group(tr, h, POD_LEVEL) : 0;
		leaf_of[h] = l;
		pod_of[l] = p;		/* hosts of a subtree are consecutive */
		if (l + 1 > n_leaves)
			n_leaves = l + 1;
		if (p + 1 > n_pods)
			n_pods = p + 1;
	}
	a = alloc_new(nh, leaf_of, n_leaves, pod_of, n_pods);
out:
	free(leaf_of);
	free(pod_of);
	return a;
}

static int check_pattern(const struct replay_opts *o, char *err, size_t errlen)
{
	static const uint32_t ranks[CHECK_RANKS] = { 0, 1, 2, 3 };
	struct job_flow *fl = NULL;
	size_t n;
	char why[256];
	if (!strcmp(o->pattern, REPLAY_DYNAMIC))
		return 0;
	if (job_pattern(o->pattern, ranks, CHECK_RANKS, o->seed, &fl, &n, why,
			sizeof(why)) < 0) {
		snprintf(err, errlen, "pattern %s: %s", o->pattern, why);
		return -1;
	}
	free(fl);
	return 0;
}

struct state {
	const struct job_tree *tr;
	const struct replay_opts *o;
	const struct replay_sink *sink;
	struct alloc *alloc;
	struct job_loads *lj;		/* the job routing's loads */
	struct job_loads *ld;		/* D-mod-K's */
	struct run *runs;
	size_t *running, n_running;
	struct replay_summary *s;
};

/* A job's flows, both sides routed and loaded.  0, or -1 with err. */
static int load_job(struct state *st, const struct swf_job *j, struct run *r,
		    char *err, size_t errlen)
{
	uint64_t draw = mix(st->o->seed ^ mix((uint64_t)j->id));
	struct job_flow *fl = NULL;
	size_t nfl = 0;
	char why[256];
	r->pattern = st->o->pattern;
	if (!strcmp(r->pattern, REPLAY_DYNAMIC))
		r->pattern = DYNAMIC_MIX[draw % N_DYNAMIC];
	if (job_pattern(r->pattern, r->hosts, j->nodes, mix(draw), &fl, &nfl,
			why, sizeof(why)) < 0) {
		snprintf(err, errlen, "job %lld: pattern %s: %s", (long long)j->id,
			 r->pattern, why);
		return -1;
	}
	r->n_flows = nfl;
	int rc = 0;
	if (job_route(st->tr, st->ld, fl, nfl, JOB_ROUTE_DMODK, &r->dk) < 0) {
		rc = -1;
	} else if (job_route(st->tr, st->lj, fl, nfl, JOB_ROUTE_GUARDED,
			     &r->jr) < 0) {
		job_unroute(st->ld, &r->dk);
		job_route_free(&r->dk);
		rc = -1;
	}
	if (rc < 0)
		snprintf(err, errlen, "out of memory");
	free(fl);
	return rc;
}

static int start_job(struct state *st, const struct swf_job *j, size_t ji,
		     char *err, size_t errlen)
{
	struct run *r = &st->runs[ji];
	r->hosts = malloc(((size_t)j->nodes + 1) * sizeof(*r->hosts));
	if (!r->hosts) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (alloc_take(st->alloc, j->nodes, r->hosts) < 0) {
		st->s->skipped++;
		if (st->sink->skipped)
			st->sink->skipped(st->sink->ctx, j,
					  alloc_free_hosts(st->alloc));
		free(r->hosts);
		r->hosts = NULL;
		return 0;
	}
	if (load_job(st, j, r, err, errlen) < 0)
		return -1;
	r->placed = 1;
	r->slot = st->n_running;
	st->running[st->n_running++] = ji;
	for (size_t i = 0; i < st->n_running; i++) {
		struct run *q = &st->runs[st->running[i]];
		int64_t d = job_route_max_now(st->ld, &q->dk);
		int64_t g = job_route_max_now(st->lj, &q->jr);
		if (d > q->pjml_dmodk)
			q->pjml_dmodk = d;
		if (g > q->pjml_jobs)
			q->pjml_jobs = g;
	}
	return 0;
}

static void end_job(struct state *st, const struct swf_job *j, struct run *r)
{
	struct replay_summary *s = st->s;
	const struct replay_job out = {
		.id = j->id, .nodes = j->nodes, .pattern = r->pattern,
		.n_flows = r->n_flows, .pjml_dmodk = r->pjml_dmodk,
		.pjml_jobs = r->pjml_jobs,
		.guarded = r->n_flows && r->jr.guarded,
	};
	if (st->sink->job)
		st->sink->job(st->sink->ctx, &out);
	s->n++;
	s->guarded += (size_t)out.guarded;
	s->sum_dmodk += r->pjml_dmodk;
	s->sum_jobs += r->pjml_jobs;
	if (r->pjml_dmodk > s->max_dmodk)
		s->max_dmodk = r->pjml_dmodk;
	if (r->pjml_jobs > s->max_jobs)
		s->max_jobs = r->pjml_jobs;
	job_unroute(st->ld, &r->dk);
	job_unroute(st->lj, &r->jr);
	job_route_free(&r->dk);
	job_route_free(&r->jr);
	alloc_release(st->alloc, r->hosts, j->nodes);
	free(r->hosts);
	r->hosts = NULL;
	size_t last = st->running[--st->n_running];
	st->running[r->slot] = last;
	st->runs[last].slot = r->slot;
	r->placed = 0;
}

static void free_state(struct state *st, size_t n)
{
	for (size_t i = 0; st->runs && i < n; i++) {
		struct run *r = &st->runs[i];
		job_route_free(&r->jr);
		job_route_free(&r->dk);
		free(r->hosts);
	}
	free(st->runs);
	free(st->running);
	job_loads_free(st->ld);
	job_loads_free(st->lj);
	alloc_free(st->alloc);
}

int replay_run(const struct job_tree *tr, const struct swf_job *jobs, size_t n,
	       const struct replay_opts *o, const struct replay_sink *sink,
	       struct replay_summary *s, char *err, size_t errlen)
{
	struct state st = {
		.tr = tr, .o = o, .sink = sink, .s = s,
	};
	memset(s, 0, sizeof(*s));
	if (check_pattern(o, err, errlen) < 0)
		return -1;
	struct event *ev = malloc((2 * n + 1) * sizeof(*ev));
	st.alloc = tree_alloc(tr);
	st.lj = job_loads_new(tr);
	st.ld = job_loads_new(tr);
	st.runs = calloc(n + 1, sizeof(*st.runs));
	st.running = calloc(n + 1, sizeof(*st.running));
	int rc = -1;
	if (!ev || !st.alloc || !st.lj || !st.ld || !st.runs || !st.running) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		ev[2 * i] = (struct event){ jobs[i].start, EV_START, jobs[i].id, i };
		ev[2 * i + 1] = (struct event){ jobs[i].end, EV_END, jobs[i].id, i };
	}
	qsort(ev, 2 * n, sizeof(*ev), cmp_event);
	for (size_t e = 0; e < 2 * n; e++) {
		size_t ji = ev[e].job;
		if (ev[e].kind == EV_START) {
			if (start_job(&st, &jobs[ji], ji, err, errlen) < 0)
				goto out;
			if (!st.runs[ji].placed)
				continue;
		} else if (st.runs[ji].placed) {
			end_job(&st, &jobs[ji], &st.runs[ji]);
		} else {
			continue;
		}
		int64_t d = job_loads_max(st.ld), g = job_loads_max(st.lj);
		if (d > s->swml_dmodk)
			s->swml_dmodk = d;
		if (g > s->swml_jobs)
			s->swml_jobs = g;
		if (sink->swml)
			sink->swml(sink->ctx, ev[e].t, d, g);
	}
	rc = 0;
out:
	free(ev);
	free_state(&st, n);
	return rc;
}
