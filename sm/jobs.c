/*
 * Jobs on the loop: see jobs.h.
 */
#include "sm/jobs.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include "reconfig/migrate.h"
#include "routing/jobs/jobroute.h"
#include "sm/apply.h"
#include "sm/base/clock.h"
#include "sm/base/log.h"
#include "sm/base/nodemap.h"
#include "sm/base/wfile.h"
#include "sm/ctl/control.h"
#include "sm/ctl/metrics.h"
#include "sm/daemon.h"
#include "sm/model/hostlist.h"
#include "sm/model/jobfile.h"
#include "sm/write/plan_jobs.h"
#include "sm/write/program.h"

#define JOBS_FILE "jobs"
#define JOB_END_WAIT_S 25	/* a job end answers within the client's 30 s */
#define JOB_WAIT_MAX_S 3600	/* --timeout's bound */
#define JOB_WAIT_DEFAULT_S 60	/* --wait without --timeout (ibsmctl's too) */
#define JOB_TEXT_MAX CONTROL_MAX_LINE	/* a pattern file's text: one request line */

enum job_refusal {
	REF_OFF, REF_NOT_MASTER, REF_BUSY, REF_NO_TREE, REF_BAD_REQUEST,
	REF_UNKNOWN_NODE, REF_NODE_BUSY, REF_DUPLICATE, REF_NO_SUCH_JOB, REF_N
};
static const char *const refusal_names[REF_N] = {
	"off", "not_master", "busy", "no_tree", "bad_request", "unknown_node",
	"node_in_job", "duplicate_id", "no_such_job",
};

struct job {
	struct job_spec s;
	int routed;		/* r holds its route, its load is in loads */
	int written;		/* its entries are answered on the switches */
	int ending;		/* job end asked: restored, then dropped */
	int in_batch;		/* in the writes running */
	uint32_t missing;	/* ranks whose port is not in the fabric */
	struct job_flow *fl;	/* its flows (hosts of the tree) */
	size_t n_fl;
	struct job_route r;
	uint64_t t_start;	/* clock_ms of its start command */
	uint64_t ready_ms;	/* start to ready */
	uint32_t sets;		/* LFT blocks its writes took */
};

struct job_waiter {
	struct job_waiter *next;
	struct jobs *js;
	uint64_t reply;		/* control_defer's id */
	char id[JOB_ID_LEN];
	int end;		/* waits for the end's writes */
	struct event *timer;
};

struct jobs {
	struct sm *sm;
	struct job **v;		/* live, in start order */
	size_t n, cap;
	uint64_t next_order;
	int loaded;		/* the file read since we became master */
	struct lft_tables base;	/* the heavy sweep's tables before any job */
	struct job_tree *tr;
	struct job_loads *ld;
	char tree_err[256];
	/* the writes running */
	int running, drop_after;
	struct plan plan;
	struct program *pr;
	struct lft_tables t;
	struct program_stats st;
	struct plan_jobs_count pc;
	uint64_t t0;
	struct event *ev_done;
	struct job_waiter *waiters;
	/* counters */
	uint64_t starts, ends, write_batches, write_failures;
	uint64_t refused[REF_N];
};

/* ---- the jobs ---- */

static void job_free(struct job *jb)
{
	if (!jb)
		return;
	job_spec_free(&jb->s);
	free(jb->fl);
	if (jb->routed)
		job_route_free(&jb->r);
	free(jb);
}

static struct job *find_job(const struct jobs *js, const char *id)
{
	for (size_t i = 0; i < js->n; i++)
		if (!strcmp(js->v[i]->s.id, id))
			return js->v[i];
	return NULL;
}

static void drop_job(struct jobs *js, struct job *jb)
{
	for (size_t i = 0; i < js->n; i++)
		if (js->v[i] == jb) {
			memmove(&js->v[i], &js->v[i + 1], (js->n - i - 1) * sizeof(*js->v));
			js->n--;
			break;
		}
	job_free(jb);
}

static int add_job(struct jobs *js, struct job *jb)
{
	if (js->n == js->cap) {
		size_t cap = js->cap ? js->cap * 2 : 16;
		struct job **v = realloc(js->v, cap * sizeof(*v));
		if (!v)
			return -1;
		js->v = v;
		js->cap = cap;
	}
	js->v[js->n++] = jb;
	return 0;
}

static void save(struct jobs *js)
{
	char path[4200], err[512];
	struct job_spec **s = calloc(js->n + 1, sizeof(*s));
	size_t k = 0;
	if (!s) {
		log_err("jobs: out of memory saving the jobs");
		return;
	}
	for (size_t i = 0; i < js->n; i++)
		if (!js->v[i]->ending)
			s[k++] = &js->v[i]->s;
	snprintf(path, sizeof(path), "%s/%s", js->sm->cfg.state_dir, JOBS_FILE);
	if (jobfile_save(path, s, k, err, sizeof(err)) < 0)
		log_limited(LOG_ERROR, "jobs: %s", err);
	free(s);
}

/* The file's jobs become the live ones (as master, once). */
static void load(struct jobs *js)
{
	char path[4200], err[512];
	struct job_spec *v;
	size_t n;
	js->loaded = 1;
	snprintf(path, sizeof(path), "%s/%s", js->sm->cfg.state_dir, JOBS_FILE);
	int rc = jobfile_load(path, &v, &n, err, sizeof(err));
	if (rc == -2) {
		char aside[4300];
		log_err("jobs: %s; set aside, no job re-applied", err);
		if (wfile_set_aside(path, aside, sizeof(aside)) == 0)
			log_err("jobs: the file is now %s", aside);
		return;
	}
	if (rc < 0) {
		log_err("jobs: %s", err);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct job *jb = calloc(1, sizeof(*jb));
		if (find_job(js, v[i].id) || !jb || add_job(js, jb) < 0) {
			if (jb)
				log_err("jobs: job %s: %s", v[i].id, find_job(js, v[i].id) ?
					"twice in the file" : "out of memory");
			free(jb);
			job_spec_free(&v[i]);
			continue;
		}
		jb->s = v[i];
		jb->t_start = clock_ms();
		if (jb->s.order >= js->next_order)
			js->next_order = jb->s.order + 1;
	}
	free(v);
	/* start order, as they were routed */
	for (size_t i = 1; i < js->n; i++)
		for (size_t k = i; k > 0 && js->v[k - 1]->s.order > js->v[k]->s.order; k--) {
			struct job *x = js->v[k];
			js->v[k] = js->v[k - 1];
			js->v[k - 1] = x;
		}
	if (js->n)
		log_notice("jobs: %zu live jobs read from %s", js->n, path);
}

/* ---- the waiters of job start --wait and job end ---- */

static void waiter_unlink(struct jobs *js, struct job_waiter *w)
{
	for (struct job_waiter **p = &js->waiters; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	if (w->timer)
		event_free(w->timer);
	free(w);
}

static void on_wait_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct job_waiter *w = arg;
	struct jobs *js = w->js;
	char msg[256];
	(void)fd;
	(void)what;
	snprintf(msg, sizeof(msg), "job %s: timed out; it stays and is still being %s",
		 w->id, w->end ? "restored" : "written");
	log_limited(LOG_WARN, "%s", msg);
	if (js->sm->ctl)
		control_reply(js->sm->ctl, w->reply, NULL, msg);
	waiter_unlink(js, w);
}

/*
 * Defers the reply to the request being handled until the job's writes:
 * 0; 1 when there is no control socket to answer later (a request made
 * on the loop by the daemon itself): answer now; -1 on ENOMEM.
 */
static int wait_for(struct jobs *js, const char *id, int end, int timeout_s)
{
	if (!js->sm->ctl)
		return 1;
	struct job_waiter *w = calloc(1, sizeof(*w));
	if (!w)
		goto fail;
	w->js = js;
	w->end = end;
	snprintf(w->id, sizeof(w->id), "%s", id);
	w->timer = evtimer_new(js->sm->base, on_wait_timeout, w);
	if (!w->timer)
		goto fail;
	w->reply = control_defer(js->sm->ctl);
	if (!w->reply)
		goto fail;
	timer_in_ms(w->timer, (uint64_t)timeout_s * 1000);
	w->next = js->waiters;
	js->waiters = w;
	return 0;
fail:
	if (w && w->timer)
		event_free(w->timer);
	free(w);
	return -1;
}

static json_t *load_json(int64_t v)
{
	return json_real((double)v / (double)JOB_LOAD_ONE);
}

static json_t *ready_json(const struct jobs *js, const struct job *jb)
{
	return json_pack("{s:b,s:s,s:i,s:I,s:o,s:o,s:b}", "ready", 1,
			 "job", jb->s.id, "lft_sets", (int)jb->sets,
			 "ms", (json_int_t)jb->ready_ms,
			 "max_load", load_json(jb->routed ?
					       job_route_max_now(js->ld, &jb->r) : 0),
			 "dmodk_max_load", load_json(jb->routed ? jb->r.dmodk_max : 0),
			 "guarded", jb->routed && jb->r.guarded);
}

/* Answers the waiters of job id (end: the end's), ok or with err. */
static void answer(struct jobs *js, const struct job *jb, const char *id, int end,
		   const char *err)
{
	struct job_waiter *w = js->waiters, *next;
	for (; w; w = next) {
		next = w->next;
		if (w->end != end || strcmp(w->id, id))
			continue;
		if (js->sm->ctl) {
			json_t *res = err ? NULL : end ?
				json_pack("{s:s}", "ended", id) : ready_json(js, jb);
			control_reply(js->sm->ctl, w->reply, res, err ? err : "out of memory");
		}
		waiter_unlink(js, w);
	}
}

static void answer_all(struct jobs *js, const char *err)
{
	while (js->waiters) {
		struct job_waiter *w = js->waiters;
		if (js->sm->ctl)
			control_reply(js->sm->ctl, w->reply, NULL, err);
		waiter_unlink(js, w);
	}
}

/* ---- routing ---- */

/* Port index of each CA port GUID of f: a map the caller frees. */
static int port_map(const struct fabric *f, struct guid_map *m)
{
	if (guid_map_init(m, 64) < 0)
		return -1;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct fab_node *nd = &f->nodes[n];
		if (nd->type != FAB_CA)
			continue;
		for (uint32_t k = 1; k <= nd->nports; k++) {
			const struct fab_port *p = &f->ports[nd->first_port + k];
			if ((p->flags & FPORT_PRESENT) && p->guid &&
			    guid_map_get(m, p->guid) == FAB_NONE &&
			    guid_map_put(m, p->guid, nd->first_port + k) < 0) {
				guid_map_free(m);
				return -1;
			}
		}
	}
	return 0;
}

/*
 * The flows of jb among its ranks present in the tree (a missing rank's
 * flows left out), weighted; -1 with err.
 */
static int job_flows(struct jobs *js, struct job *jb, char *err, size_t errlen)
{
	const struct fabric *f = &js->sm->sub.model->f;
	struct guid_map m;
	uint32_t *hosts = malloc(((size_t)jb->s.n + 1) * sizeof(*hosts));
	struct job_flow *fl = NULL;
	size_t nf = 0;
	int rc;
	free(jb->fl);
	jb->fl = NULL;
	jb->n_fl = 0;
	if (!hosts || port_map(f, &m) < 0) {
		free(hosts);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	jb->missing = 0;
	for (uint32_t r = 0; r < jb->s.n; r++) {
		uint32_t pi = guid_map_get(&m, jb->s.guid[r]);
		int32_t h = pi == FAB_NONE ? -1 : job_tree_host_of_port(js->tr, pi);
		hosts[r] = h < 0 ? UINT32_MAX : (uint32_t)h;
		jb->missing += h < 0;
	}
	guid_map_free(&m);
	if (!strcmp(jb->s.pattern, "file"))
		rc = job_pattern_text(jb->s.text ? jb->s.text : "", hosts, jb->s.n, &fl,
				      &nf, err, errlen);
	else
		rc = job_pattern(jb->s.pattern, hosts, jb->s.n, jb->s.seed, &fl, &nf,
				 err, errlen);
	free(hosts);
	if (rc < 0)
		return -1;
	/* a missing rank's flows left out; the others keep the pattern's weights */
	size_t k = 0;
	for (size_t i = 0; i < nf; i++)
		if (fl[i].src != UINT32_MAX && fl[i].dst != UINT32_MAX)
			fl[k++] = fl[i];
	jb->fl = fl;
	jb->n_fl = k;
	return 0;
}

/* Routes jb on the loads (its flows first); -1 with the reason logged. */
static int route_one(struct jobs *js, struct job *jb)
{
	char err[256];
	if (jb->routed)
		return 0;
	if (job_flows(js, jb, err, sizeof(err)) < 0 ||
	    job_route(js->tr, js->ld, jb->fl, jb->n_fl, JOB_ROUTE_GUARDED, &jb->r) < 0) {
		log_limited(LOG_ERROR, "job %s: not routed: %s", jb->s.id,
			    jb->fl ? "out of memory" : err);
		return -1;
	}
	jb->routed = 1;
	if (jb->missing)
		log_limited(LOG_WARN, "job %s: %u of its %u nodes are not in the fabric; "
			    "their flows are left out until they return", jb->s.id,
			    jb->missing, jb->s.n);
	return 0;
}

static void unroute_one(struct jobs *js, struct job *jb, struct lft_tables *t)
{
	if (!jb->routed)
		return;
	for (size_t i = 0; t && i < jb->r.n_e; i++) {
		const struct job_entry *e = &jb->r.e[i];
		if (e->row < t->n_sw && e->row < js->base.n_sw &&
		    e->lid <= t->max_lid && e->lid <= js->base.max_lid)
			lft_row(t, e->row)[e->lid] = lft_row(&js->base, e->row)[e->lid];
	}
	job_unroute(js->ld, &jb->r);
	job_route_free(&jb->r);
	jb->routed = 0;
}

static void forget_routes(struct jobs *js)
{
	for (size_t i = 0; i < js->n; i++) {
		if (js->v[i]->routed)
			job_route_free(&js->v[i]->r);
		js->v[i]->routed = 0;
	}
	job_loads_free(js->ld);
	job_tree_free(js->tr);
	js->ld = NULL;
	js->tr = NULL;
}

void jobs_model_changed(struct sm *sm)
{
	struct jobs *js = sm->jobs;
	if (!js)
		return;
	/* the tree and the loads are the old model's: routed again at jobs_rebase */
	forget_routes(js);
	lft_tables_free(&js->base);
	js->tree_err[0] = '\0';
}

void jobs_rebase(struct sm *sm)
{
	struct jobs *js = sm->jobs;
	if (!js || sm->cfg.routing_jobs == JOBS_OFF || !sm->sub.model)
		return;
	if (!js->loaded)
		load(js);
	forget_routes(js);
	const struct fabric *f = &sm->sub.model->f;
	lft_tables_free(&js->base);
	if (migrate_tables_copy(&js->base, &sm->sub.lft, f, sm->sub.lft.max_lid) < 0) {
		snprintf(js->tree_err, sizeof(js->tree_err), "out of memory");
		log_err("jobs: out of memory copying the base tables");
		return;
	}
	js->tr = job_tree_new(f, &js->base, js->tree_err, sizeof(js->tree_err));
	if (js->tr && !(js->ld = job_loads_new(js->tr))) {
		job_tree_free(js->tr);
		js->tr = NULL;
		snprintf(js->tree_err, sizeof(js->tree_err), "out of memory");
	}
	if (!js->tr) {
		log_limited(LOG_ERROR, "jobs: the fabric is not a tree job routing "
			    "understands: %s%s", js->tree_err,
			    js->n ? "; the live jobs keep the base routes" : "");
		return;
	}
	js->tree_err[0] = '\0';
	uint32_t entries = 0;
	for (size_t i = 0; i < js->n; i++) {
		struct job *jb = js->v[i];
		jb->written = 0;
		if (jb->ending || route_one(js, jb) < 0)
			continue;
		job_apply(&sm->sub.lft, &jb->r, 1);
		entries += (uint32_t)jb->r.n_e;
	}
	if (js->n)
		log_info("jobs: %zu live jobs routed again on the new base: %u entries",
			 js->n, entries);
}

/*
 * Writes answered: the jobs ended are dropped, those routed become
 * ready, their waiters answered (batch: only the jobs of the writes
 * that ran, sets their LFT blocks).
 */
static void settle(struct jobs *js, int batch, uint32_t sets)
{
	int dropped = 0;
	for (size_t i = 0; i < js->n;) {
		struct job *jb = js->v[i];
		int mine = !batch || jb->in_batch;
		jb->in_batch = 0;
		if (mine && jb->ending && !jb->routed) {
			char id[JOB_ID_LEN];
			snprintf(id, sizeof(id), "%s", jb->s.id);
			drop_job(js, jb);
			answer(js, NULL, id, 1, NULL);
			dropped = 1;
			continue;
		}
		if (mine && jb->routed && !jb->written) {
			jb->written = 1;
			if (sets)
				jb->sets = sets;
			if (!jb->ready_ms)
				jb->ready_ms = clock_ms() - jb->t_start;
			answer(js, jb, jb->s.id, 0, NULL);
		}
		i++;
	}
	if (dropped)
		save(js);
}

void jobs_programmed(struct sm *sm, int ok)
{
	if (sm->jobs && ok)
		settle(sm->jobs, 0, 0);
}

/* ---- the writes ---- */

static void clear_all(struct jobs *js)
{
	forget_routes(js);
	for (size_t i = 0; i < js->n; i++)
		job_free(js->v[i]);
	js->n = 0;
	lft_tables_free(&js->base);
	js->loaded = 0;
}

void jobs_abandon(struct sm *sm)
{
	struct jobs *js = sm->jobs;
	if (!js || sm->state == SMS_MASTER)
		return;
	answer_all(js, "ibsmd is no longer master; the master re-applies the jobs");
	if (js->running) {
		js->drop_after = 1;	/* the executor still holds the plan */
		return;
	}
	clear_all(js);
}

static void batch_free(struct jobs *js)
{
	program_free(js->pr);
	js->pr = NULL;
	plan_free(&js->plan);
	lft_tables_free(&js->t);
	js->running = 0;
}

static void batch_finish(struct jobs *js)
{
	struct sm *sm = js->sm;
	const struct program_stats *s = &js->st;
	int ok = !s->failed && !s->stopped && !s->cancelled;
	uint64_t us = clock_us() - js->t0;
	if (ok) {
		lft_tables_free(&sm->sub.lft);
		sm->sub.lft = js->t;
		memset(&js->t, 0, sizeof(js->t));
	} else {
		js->write_failures++;
	}
	log_notice("job writes %s: %u LFT blocks on %u switches in %u waves, %u failed, %llu us",
		   ok ? "done" : "FAILED", js->pc.blocks, js->pc.switches, js->pc.waves,
		   s->failed, (unsigned long long)us);
	batch_free(js);
	if (ok)
		settle(js, 1, js->pc.blocks);
	for (size_t i = 0; i < js->n; i++)
		js->v[i]->in_batch = 0;
	if (js->drop_after) {
		js->drop_after = 0;
		clear_all(js);
	}
	if (!ok && sm->state == SMS_MASTER)
		sweeper_request_heavy(sm, "some job writes failed");
	sweeper_resume(sm);
}

static void on_batch_event(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	batch_finish(arg);
}

static void on_batch_done(void *arg, const struct program_stats *s)
{
	struct jobs *js = arg;
	struct timeval zero = { 0, 0 };
	js->st = *s;
	if (event_add(js->ev_done, &zero) < 0)
		log_err("job writes: cannot schedule the end of the run");
}

/* Whether a job waits for writes the loop can do. */
static int work_waiting(const struct jobs *js)
{
	for (size_t i = 0; i < js->n; i++) {
		const struct job *jb = js->v[i];
		if (jb->ending || (!jb->routed && js->tr))
			return 1;
	}
	return 0;
}

/*
 * Starts the writes of what waits: the ends first (their entries back to
 * the base, their load off), then the starts in start order.  1 when the
 * writes run (SM_JOB_WRITES), 0 when nothing could start.
 */
static int batch_start(struct jobs *js)
{
	struct sm *sm = js->sm;
	if (js->running || !work_waiting(js) || sm->sw.activity != SM_IDLE ||
	    sm->state != SMS_MASTER || !sm->sub.model || !sm->txn || sm->stopping)
		return 0;
	const struct fabric *f = &sm->sub.model->f;
	if (migrate_tables_copy(&js->t, &sm->sub.lft, f, sm->sub.lft.max_lid) < 0) {
		log_err("job writes: out of memory");
		return 0;
	}
	for (size_t i = 0; i < js->n; i++) {
		struct job *jb = js->v[i];
		if (!jb->ending)
			continue;
		unroute_one(js, jb, &js->t);
		jb->in_batch = 1;
	}
	for (size_t i = 0; js->tr && i < js->n; i++) {
		struct job *jb = js->v[i];
		if (jb->ending || jb->routed || route_one(js, jb) < 0)
			continue;
		job_apply(&js->t, &jb->r, 1);
		jb->in_batch = 1;
	}
	plan_init(&js->plan);
	js->plan.stop_on_failure = 1;
	if (plan_jobs_build(&js->plan, f, &sm->sub.lft, &js->t, &js->pc) < 0) {
		log_err("job writes: out of memory planning");
		batch_free(js);
		sweeper_request_heavy(sm, "job writes could not be planned");
		return 0;
	}
	struct program_params pp;
	sm_program_params(sm, 0, &pp);
	js->running = 1;
	js->t0 = clock_us();
	js->write_batches++;
	sm->sw.activity = SM_JOB_WRITES;
	js->pr = program_run(sm->txn, sm->sub.model, &js->plan, sm->sub.cache,
			     pp.extra_rounds, NULL, on_batch_done, js);
	if (!js->pr) {
		log_err("job writes: out of memory");
		batch_free(js);
		sm->sw.activity = SM_IDLE;
		sweeper_request_heavy(sm, "job writes could not start");
		return 0;
	}
	char how[256];
	lft_order_describe(&js->pc.order, how, sizeof(how));
	log_info("job writes: %u LFT blocks on %u switches: %s",
		 js->pc.blocks, js->pc.switches, how);
	return 1;
}

int jobs_resume(struct sm *sm)
{
	return sm->jobs ? batch_start(sm->jobs) : 0;
}

int jobs_live(const struct sm *sm)
{
	return sm->jobs && sm->jobs->n;
}

/* ---- the commands ---- */

static json_t *refuse(struct jobs *js, enum job_refusal why, char *err,
		      size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static json_t *refuse(struct jobs *js, enum job_refusal why, char *err,
		      size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	js->refused[why]++;
	log_limited(LOG_NOTICE, "job command refused: %s", err);
	return NULL;
}

/* A command that changes jobs may run now; NULL, or the refusal. */
static const char *can_change(const struct sm *sm, enum job_refusal *why)
{
	*why = REF_OFF;
	if (sm->cfg.routing_jobs == JOBS_OFF)
		return "job-aware routing is off (routing.jobs: off in the policy)";
	*why = REF_NOT_MASTER;
	if (sm->state != SMS_MASTER || !sm->sub.model)
		return "not the master of a configured subnet";
	*why = REF_BUSY;
	if (sm->sw.activity == SM_HANDOVER_WAIT)
		return "handing the subnet over to another SM";
	return NULL;
}

/* The CA node named name (node-name map or NodeDescription), FAB_NONE. */
static uint32_t node_named(const struct fabric *f, const char *name)
{
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (f->nodes[n].type == FAB_CA &&
		    (!strcmp(fabric_node_name(f, n), name) || !strcmp(f->nodes[n].desc, name)))
			return n;
	return FAB_NONE;
}

/*
 * The host port of CA node n: its first port with a LID cabled to a
 * switch (the tree's hosts are such ports; the tree itself may be being
 * rebuilt by a heavy sweep), FAB_NONE.
 */
static uint32_t host_port(const struct fabric *f, uint32_t n)
{
	const struct fab_node *nd = &f->nodes[n];
	for (uint32_t k = 1; k <= nd->nports; k++) {
		const struct fab_port *p = &f->ports[nd->first_port + k];
		if ((p->flags & FPORT_PRESENT) && p->lid && p->remote != FAB_NONE &&
		    f->nodes[f->ports[p->remote].node].type == FAB_SWITCH)
			return nd->first_port + k;
	}
	return FAB_NONE;
}

/* The live job holding port GUID g, or NULL. */
static const struct job *job_of_guid(const struct jobs *js, uint64_t g)
{
	for (size_t i = 0; i < js->n; i++)
		for (uint32_t r = 0; !js->v[i]->ending && r < js->v[i]->s.n; r++)
			if (js->v[i]->s.guid[r] == g)
				return js->v[i];
	return NULL;
}

static uint64_t id_seed(const char *id)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */
	for (; *id; id++)
		h = (h ^ (uint8_t)*id) * 0x100000001b3ULL;
	return h;
}

/* The nodes of hostlist into s (GUIDs and names); NULL, or the refusal. */
static json_t *resolve_nodes(struct jobs *js, const char *list, struct job_spec *s,
			     char *err, size_t errlen)
{
	const struct fabric *f = &js->sm->sub.model->f;
	struct hostlist h;
	char why[256];
	if (hostlist_expand(list, &h, why, sizeof(why)) < 0)
		return refuse(js, REF_BAD_REQUEST, err, errlen, "job start: --nodes: %s", why);
	s->guid = calloc(h.n + 1, sizeof(*s->guid));
	s->name = calloc(h.n + 1, sizeof(*s->name));
	if (!s->guid || !s->name) {
		hostlist_free(&h);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < h.n; i++) {
		uint32_t n = node_named(f, h.name[i]);
		uint32_t pi = n == FAB_NONE ? FAB_NONE : host_port(f, n);
		const struct job *other;
		s->name[i] = h.name[i];
		h.name[i] = NULL;
		s->n = (uint32_t)i + 1;
		if (pi == FAB_NONE) {
			hostlist_free(&h);
			return refuse(js, REF_UNKNOWN_NODE, err, errlen,
				      "job start: no host named '%s' in the fabric%s",
				      s->name[i], n == FAB_NONE ? "" :
				      " (a node of that name, but no port of it with a LID on a switch)");
		}
		s->guid[i] = f->ports[pi].guid;
		for (size_t k = 0; k < i; k++)
			if (s->guid[k] == s->guid[i]) {
				hostlist_free(&h);
				return refuse(js, REF_BAD_REQUEST, err, errlen,
					      "job start: host '%s' is listed twice",
					      s->name[i]);
			}
		if ((other = job_of_guid(js, s->guid[i]))) {
			hostlist_free(&h);
			return refuse(js, REF_NODE_BUSY, err, errlen,
				      "job start: host '%s' is in running job %s",
				      s->name[i], other->s.id);
		}
	}
	hostlist_free(&h);
	return json_true();
}

/* The pattern of the request into s; NULL, or the refusal. */
static json_t *take_pattern(struct jobs *js, const json_t *req, struct job_spec *s,
			    char *err, size_t errlen)
{
	const char *pat = json_string_value(json_object_get(req, "pattern"));
	const char *text = json_string_value(json_object_get(req, "text"));
	char why[256];
	if (pat && text)
		return refuse(js, REF_BAD_REQUEST, err, errlen,
			      "job start: a pattern name or a pattern file, not both");
	if (text) {
		if (strlen(text) > JOB_TEXT_MAX)
			return refuse(js, REF_BAD_REQUEST, err, errlen,
				      "job start: the pattern file is over %d bytes", JOB_TEXT_MAX);
		snprintf(s->pattern, sizeof(s->pattern), "file");
		if (!(s->text = strdup(text))) {
			snprintf(err, errlen, "out of memory");
			return NULL;
		}
	} else {
		if (!pat)
			pat = "ring";
		if (strlen(pat) >= sizeof(s->pattern) || !strcmp(pat, "file"))
			return refuse(js, REF_BAD_REQUEST, err, errlen,
				      "job start: unknown pattern '%s'", pat);
		snprintf(s->pattern, sizeof(s->pattern), "%s", pat);
	}
	/* the pattern checked on ranks alone: the hosts do not matter */
	uint32_t *ranks = malloc(((size_t)s->n + 1) * sizeof(*ranks));
	struct job_flow *fl = NULL;
	size_t nf = 0;
	int rc;
	if (!ranks) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (uint32_t r = 0; r < s->n; r++)
		ranks[r] = r;
	rc = s->text ? job_pattern_text(s->text, ranks, s->n, &fl, &nf, why, sizeof(why)) :
		       job_pattern(s->pattern, ranks, s->n, s->seed, &fl, &nf, why,
				   sizeof(why));
	free(ranks);
	free(fl);
	if (rc < 0)
		return refuse(js, REF_BAD_REQUEST, err, errlen, "job start: --pattern: %s", why);
	return json_true();
}

static json_t *cmd_start(struct jobs *js, const json_t *req, char *err, size_t errlen)
{
	const char *id = json_string_value(json_object_get(req, "id"));
	const char *nodes = json_string_value(json_object_get(req, "nodes"));
	int wait = json_is_true(json_object_get(req, "wait"));
	const json_t *to = json_object_get(req, "timeout");
	json_int_t timeout = to ? json_integer_value(to) : JOB_WAIT_DEFAULT_S;
	if (!id || !job_id_ok(id))
		return refuse(js, REF_BAD_REQUEST, err, errlen,
			      "job start: a job ID (1..%d letters, digits, '.', '_', '-') first",
			      JOB_ID_LEN - 1);
	if (!nodes)
		return refuse(js, REF_BAD_REQUEST, err, errlen, "job start %s: --nodes HOSTLIST", id);
	if (to && (!wait || timeout < 1 || timeout > JOB_WAIT_MAX_S))
		return refuse(js, REF_BAD_REQUEST, err, errlen,
			      "job start: --timeout S (1..%d) with --wait", JOB_WAIT_MAX_S);
	if (!js->tr && js->tree_err[0])
		return refuse(js, REF_NO_TREE, err, errlen,
			      "job start: the fabric is not a tree job routing understands: %s",
			      js->tree_err);
	const struct job *old = find_job(js, id);
	if (old)
		return refuse(js, REF_DUPLICATE, err, errlen, "job start: job %s is %s", id,
			      old->ending ? "ending" : "running");
	struct job *jb = calloc(1, sizeof(*jb));
	if (!jb) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(jb->s.id, sizeof(jb->s.id), "%s", id);
	jb->s.seed = id_seed(id);
	json_t *ok = resolve_nodes(js, nodes, &jb->s, err, errlen);
	if (ok)
		ok = take_pattern(js, req, &jb->s, err, errlen);
	if (!ok || add_job(js, jb) < 0) {
		if (ok)
			snprintf(err, errlen, "out of memory");
		job_free(jb);
		return NULL;
	}
	json_decref(ok);
	jb->s.order = js->next_order++;
	jb->s.started = (uint64_t)time(NULL);
	jb->t_start = clock_ms();
	js->starts++;
	save(js);
	log_notice("job %s: started on %u nodes, pattern %s", id, jb->s.n, jb->s.pattern);
	int deferred = wait ? wait_for(js, id, 0, (int)timeout) : 1;
	if (deferred < 0) {
		snprintf(err, errlen, "out of memory (job %s is started)", id);
		return NULL;
	}
	batch_start(js);
	if (deferred == 0)
		return NULL;	/* the reply when the writes are answered */
	return json_pack("{s:s,s:s,s:i,s:s}", "job", id, "state",
			 jb->written ? "ready" : "writing", "nodes", (int)jb->s.n,
			 "pattern", jb->s.pattern);
}

static json_t *cmd_end(struct jobs *js, const json_t *req, char *err, size_t errlen)
{
	const char *id = json_string_value(json_object_get(req, "id"));
	struct job *jb = id ? find_job(js, id) : NULL;
	if (!id)
		return refuse(js, REF_BAD_REQUEST, err, errlen, "usage: job end ID");
	if (!jb)
		return refuse(js, REF_NO_SUCH_JOB, err, errlen, "job end: no job %s", id);
	if (!jb->ending) {
		jb->ending = 1;
		js->ends++;
		save(js);
		log_notice("job %s: ended", id);
	}
	if (!js->tr && js->tree_err[0] && !jb->routed) {
		/* no tree: the base routes are all the switches have of it */
		json_t *res = json_pack("{s:s}", "ended", id);
		drop_job(js, jb);
		save(js);
		return res;
	}
	int deferred = wait_for(js, id, 1, JOB_END_WAIT_S);
	if (deferred < 0) {
		snprintf(err, errlen, "out of memory (job %s is ending)", id);
		return NULL;
	}
	batch_start(js);
	return deferred ? json_pack("{s:s}", "ended", id) : NULL;
}

static const char *job_state(const struct jobs *js, const struct job *jb)
{
	if (jb->ending)
		return "ending";
	if (jb->written)
		return jb->missing ? "degraded" : "ready";	/* nodes left the fabric */
	return js->tr || !js->tree_err[0] ? "writing" : "held";
}

static json_t *job_json(const struct jobs *js, const struct job *jb)
{
	const struct fabric *f = js->sm->sub.model ? &js->sm->sub.model->f : NULL;
	struct guid_map m;
	int have_map = f && port_map(f, &m) == 0;
	json_t *nodes = json_array(), *missing = json_array();
	for (uint32_t r = 0; r < jb->s.n; r++) {
		json_array_append_new(nodes, json_string(jb->s.name[r]));
		if (!have_map || guid_map_get(&m, jb->s.guid[r]) == FAB_NONE)
			json_array_append_new(missing, json_string(jb->s.name[r]));
	}
	if (have_map)
		guid_map_free(&m);
	json_t *o = json_pack("{s:s,s:s,s:I,s:o,s:s,s:o,s:o*,s:o}",
			      "id", jb->s.id, "state", job_state(js, jb),
			      "order", (json_int_t)jb->s.order,
			      "started", control_time_json(jb->s.started),
			      "pattern", jb->s.pattern, "nodes", nodes,
			      "missing", missing,
			      "guarded", json_boolean(jb->routed && jb->r.guarded));
	if (o && jb->routed) {
		json_object_set_new(o, "flows", json_integer((json_int_t)jb->r.n_flows));
		json_object_set_new(o, "entries", json_integer((json_int_t)jb->r.n_e));
		json_object_set_new(o, "max_load", load_json(job_route_max_now(js->ld, &jb->r)));
	}
	if (o && jb->written)
		json_object_set_new(o, "ready_ms", json_integer((json_int_t)jb->ready_ms));
	return o;
}

static json_t *cmd_list(struct jobs *js)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < js->n; i++)
		json_array_append_new(a, job_json(js, js->v[i]));
	return json_pack("{s:o*}", "jobs", a);
}

/*
 * Every routed job's flows walked through the tables the switches hold:
 * the load of each output port (total, and jb's share), by port index.
 */
static int walk_loads(const struct jobs *js, const struct job *only, int64_t *tot,
		      int64_t *mine)
{
	const struct sm *sm = js->sm;
	const struct fabric *f = &sm->sub.model->f;
	const struct lft_tables *t = &sm->sub.lft;
	for (size_t i = 0; i < js->n; i++) {
		const struct job *jb = js->v[i];
		if (!jb->routed)
			continue;
		for (size_t k = 0; k < jb->n_fl; k++) {
			uint32_t pi = job_tree_host_port(js->tr, jb->fl[k].src);
			uint32_t dpi = job_tree_host_port(js->tr, jb->fl[k].dst);
			uint32_t lid = f->ports[dpi].lid;
			for (int hop = 0; pi != FAB_NONE && hop <= FAB_MAX_HOPS; hop++) {
				tot[pi] += jb->fl[k].w;
				if (jb == only)
					mine[pi] += jb->fl[k].w;
				uint32_t rp = f->ports[pi].remote;
				if (rp == FAB_NONE || rp == dpi)
					break;
				uint32_t node = f->ports[rp].node;
				uint32_t row = t->row_of_node[node];
				if (row == FAB_NONE || lid > t->max_lid ||
				    lft_row(t, row)[lid] > f->nodes[node].nports)
					return -1;
				pi = fabric_port(f, node, lft_row(t, row)[lid]);
			}
		}
	}
	return 0;
}

static json_t *port_name(const struct fabric *f, uint32_t pi)
{
	char b[FAB_DESC_LEN + 16];
	snprintf(b, sizeof(b), "%s[%u]", fabric_node_name(f, f->ports[pi].node),
		 f->ports[pi].num);
	return json_string(b);
}

/* The links of jb with their load, all jobs' and its own. */
static json_t *links_json(const struct jobs *js, const struct job *jb)
{
	if (!js->sm->sub.lft.port || js->sm->sw.activity == SM_HEAVY_SWEEP)
		return json_null();	/* the tables are being routed again */
	const struct fabric *f = &js->sm->sub.model->f;
	int64_t *tot = calloc((size_t)f->n_ports + 1, sizeof(*tot));
	int64_t *mine = calloc((size_t)f->n_ports + 1, sizeof(*mine));
	json_t *a = NULL;
	if (tot && mine && walk_loads(js, jb, tot, mine) == 0) {
		a = json_array();
		for (uint32_t pi = 0; a && pi < f->n_ports; pi++) {
			if (!mine[pi])
				continue;
			uint32_t rp = f->ports[pi].remote;
			json_array_append_new(a, json_pack("{s:o,s:o,s:o,s:o}",
				"from", port_name(f, pi),
				"to", rp == FAB_NONE ? json_null() : port_name(f, rp),
				"load", load_json(tot[pi]), "job_load", load_json(mine[pi])));
		}
	}
	free(tot);
	free(mine);
	return a ? a : json_null();
}

/* The LFT entries jb sets: switch GUID and name, LID, port. */
static json_t *entries_json(const struct jobs *js, const struct job *jb)
{
	const struct fabric *f = &js->sm->sub.model->f;
	json_t *a = json_array();
	for (size_t i = 0; a && i < jb->r.n_e; i++) {
		const struct job_entry *e = &jb->r.e[i];
		uint32_t node = js->base.sw_node[e->row];
		json_array_append_new(a, json_pack("{s:o,s:s,s:i,s:i}",
			"switch", control_guid_json(f->nodes[node].guid),
			"name", fabric_node_name(f, node), "lid", (int)e->lid,
			"port", (int)e->port));
	}
	return a;
}

static json_t *loads_one(const struct jobs *js, const struct job *jb, int links)
{
	json_t *o = json_pack("{s:s,s:s,s:b}", "id", jb->s.id, "state", job_state(js, jb),
			      "routed", jb->routed);
	if (!o || !jb->routed)
		return o;
	int64_t now = job_route_max_now(js->ld, &jb->r);
	json_object_set_new(o, "max_load", load_json(now));
	json_object_set_new(o, "max_load_units", json_integer((json_int_t)now));
	json_object_set_new(o, "routed_max_load", load_json(jb->r.max_load));
	json_object_set_new(o, "dmodk_max_load", load_json(jb->r.dmodk_max));
	json_object_set_new(o, "guarded", json_boolean(jb->r.guarded));
	json_object_set_new(o, "flows", json_integer((json_int_t)jb->r.n_flows));
	json_object_set_new(o, "entries", json_integer((json_int_t)jb->r.n_e));
	if (links) {
		json_object_set_new(o, "links", links_json(js, jb));
		json_object_set_new(o, "lft_entries", entries_json(js, jb));
	}
	return o;
}

static json_t *cmd_loads(struct jobs *js, const json_t *req, char *err, size_t errlen)
{
	const char *id = json_string_value(json_object_get(req, "id"));
	const struct job *one = id ? find_job(js, id) : NULL;
	if (id && !one)
		return refuse(js, REF_NO_SUCH_JOB, err, errlen, "job loads: no job %s", id);
	json_t *a = json_array();
	for (size_t i = 0; a && i < js->n; i++)
		if (!one || js->v[i] == one)
			json_array_append_new(a, loads_one(js, js->v[i], one != NULL &&
							   js->sm->sub.model != NULL));
	return json_pack("{s:o*,s:o,s:I}", "jobs", a, "max_link_load",
			 load_json(js->ld ? job_loads_max(js->ld) : 0), "load_one",
			 (json_int_t)JOB_LOAD_ONE);
}

json_t *jobs_ctl(struct sm *sm, const json_t *req, char *err, size_t errlen)
{
	static const char usage[] = "job start ID --nodes HOSTLIST [--pattern P|FILE] "
				    "[--wait [--timeout S]] | end ID | list | loads [ID]";
	struct jobs *js = sm->jobs;
	const char *op = json_string_value(json_object_get(req, "op"));
	enum job_refusal why;
	const char *no;
	if (!op) {
		snprintf(err, errlen, "usage: %s", usage);
		return NULL;
	}
	if (!strcmp(op, "list"))
		return cmd_list(js);
	if (!strcmp(op, "loads"))
		return cmd_loads(js, req, err, errlen);
	if (strcmp(op, "start") && strcmp(op, "end")) {
		snprintf(err, errlen, "unknown job command '%s' (usage: %s)", op, usage);
		return NULL;
	}
	if ((no = can_change(sm, &why)))
		return refuse(js, why, err, errlen, "job %s: %s", op, no);
	return !strcmp(op, "start") ? cmd_start(js, req, err, errlen) :
	       cmd_end(js, req, err, errlen);
}

/* ---- status and metrics ---- */

json_t *jobs_to_ctl(const struct sm *sm)
{
	const struct jobs *js = sm->jobs;
	uint32_t ready = 0, writing = 0, ending = 0, missing = 0;
	static const char *const modes[] = { "off", "least-max-load" };
	if (!js)
		return json_null();
	for (size_t i = 0; i < js->n; i++) {
		const struct job *jb = js->v[i];
		ready += !jb->ending && jb->written;
		writing += !jb->ending && !jb->written;
		ending += jb->ending;
		missing += jb->missing;
	}
	json_t *ref = json_object();
	for (int i = 0; ref && i < REF_N; i++)
		json_object_set_new(ref, refusal_names[i], json_integer((json_int_t)js->refused[i]));
	return json_pack("{s:s,s:I,s:i,s:i,s:i,s:i,s:o,s:s,s:I,s:I,s:I,s:I,s:o*}",
		"mode", modes[sm->cfg.routing_jobs == JOBS_OFF ? 0 : 1],
		"live", (json_int_t)js->n, "ready", (int)ready, "writing", (int)writing,
		"ending", (int)ending, "nodes_missing", (int)missing,
		"max_link_load", load_json(js->ld ? job_loads_max(js->ld) : 0),
		"tree", js->tr ? "xgft" : js->tree_err[0] ? js->tree_err : "none yet",
		"starts", (json_int_t)js->starts, "ends", (json_int_t)js->ends,
		"write_batches", (json_int_t)js->write_batches,
		"write_failures", (json_int_t)js->write_failures, "refused", ref);
}

void jobs_metrics(const struct sm *sm, struct mtext *t)
{
	const struct jobs *js = sm->jobs;
	if (!js || sm->cfg.routing_jobs == JOBS_OFF)
		return;
	mtext_family(t, "ibsmd_jobs", "gauge", "Live jobs (routing.jobs)");
	mtext_sample(t, "ibsmd_jobs", NULL, NULL, (double)js->n);
	mtext_family(t, "ibsmd_jobs_max_link_load", "gauge",
		     "The largest channel load of all jobs' flows (1: a fully loaded link)");
	mtext_sample(t, "ibsmd_jobs_max_link_load", NULL, NULL,
		     js->ld ? (double)job_loads_max(js->ld) / (double)JOB_LOAD_ONE : 0);
	mtext_family(t, "ibsmd_job_max_load", "gauge",
		     "A job's largest channel load now, every job's flows counted");
	for (size_t i = 0; i < js->n; i++)
		if (js->v[i]->routed)
			mtext_sample(t, "ibsmd_job_max_load", "job", js->v[i]->s.id,
				     (double)job_route_max_now(js->ld, &js->v[i]->r) /
				     (double)JOB_LOAD_ONE);
	mtext_family(t, "ibsmd_job_refusals_total", "counter",
		     "Job commands refused, by reason");
	for (int i = 0; i < REF_N; i++)
		mtext_sample(t, "ibsmd_job_refusals_total", "reason", refusal_names[i],
			     (double)js->refused[i]);
}

/* ---- life ---- */

int jobs_init(struct sm *sm, char *err, size_t errlen)
{
	if (sm->cfg.routing_jobs != JOBS_OFF && sm->routing_override &&
	    strcmp(sm->routing_override, "dmodk")) {
		snprintf(err, errlen, "routing.jobs least-max-load needs the dmodk engine "
			 "alone; -R %s is refused", sm->routing_override);
		return -1;
	}
	struct jobs *js = calloc(1, sizeof(*js));
	if (!js || !(js->ev_done = event_new(sm->base, -1, 0, on_batch_event, js))) {
		free(js);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	js->sm = sm;
	js->next_order = 1;
	sm->jobs = js;
	return 0;
}

void jobs_free(struct sm *sm)
{
	struct jobs *js = sm->jobs;
	if (!js)
		return;
	answer_all(js, "ibsmd is stopping");
	if (js->running) {
		js->st = *program_get_stats(js->pr);
		batch_free(js);
	}
	clear_all(js);
	free(js->v);
	event_free(js->ev_done);
	free(js);
	sm->jobs = NULL;
}
