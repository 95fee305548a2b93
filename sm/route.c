#include "sm/route.h"

#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "routing/qos/pvl.h"
#include "routing/verify/verify.h"
#include "sm/base/log.h"
#include "sm/base/worker.h"
#include "sm/base/clock.h"
#include "sm/base/nodemap.h"

int sm_route(const struct config *c, const char *override,
	     const struct fabric *f, const struct part_model *parts,
	     struct lft_tables *t, const char **used, uint64_t *ms)
{
	struct config tmp;
	const struct config *use = c;
	char err[256];
	if (override) {
		tmp = *c;
		if (config_set_engines(&tmp, override, err, sizeof(err)) < 0) {
			log_err("routing: %s", err);
			return -1;
		}
		use = &tmp;
	}
	char warn[1024];
	/* ports.max_op_vls: OperationalVLs e runs VL0 .. 2^(e-1)-1, 15 at 5 */
	unsigned op_vls = use->max_op_vls >= 5 ? 15 : 1u << (use->max_op_vls - 1);
	struct route_opts o = { .n_roots = use->n_roots, .roots = use->roots,
				.parts = parts, .warn = warn,
				.warn_len = sizeof(warn), .max_vls = op_vls,
				.dor = { .ndims = use->dor_ndims,
					 .no_dateline = !use->dor_dateline } };
	_Static_assert(CFG_DOR_DIMS == ROUTE_DOR_DIMS, "routing.dor.dimensions");
	memcpy(o.dor.size, use->dor_size, sizeof(o.dor.size));
	for (int i = 0; i < use->n_engines; i++) {
		const struct routing_engine *e = routing_engine_find(use->engines[i]);
		if (!e) {
			char have[128];
			routing_engine_names(have, sizeof(have), " ");
			log_warn("routing: engine '%s' is not available (have: %s)%s",
				 use->engines[i], have,
				 i + 1 < use->n_engines ? "; trying the next" : "");
			continue;
		}
		lft_tables_free(t);
		if (lft_tables_alloc(t, f) < 0) {
			log_err("routing: out of memory");
			return -1;
		}
		uint64_t t0 = clock_us();
		err[0] = '\0';
		warn[0] = '\0';
		int rc = e->route(f, &o, t, err, sizeof(err));
		*ms = (clock_us() - t0 + 500) / 1000;
		if (rc == 0) {
			if (warn[0])
				log_warn("routing: %s: %s", e->name, warn);
			*used = e->name;
			return 0;
		}
		/* the same failure every sweep: a few lines per 10 minutes */
		log_limited_by(3, 600000, LOG_WARN, "routing: %s failed: %s%s", e->name, err,
			 i + 1 < use->n_engines ? "; trying the next" : "");
	}
	log_limited_by(3, 600000, LOG_ERROR, "routing: no engine could route the fabric");
	return -1;
}

struct route_job {
	struct fabric snap;	/* the thread's own copy */
	struct fabric prev_f;	/* the previous model, if prev_t */
	struct lft_tables prev_t;
	const char *prev_engine;	/* the engine that made prev_t */
	int has_prev;
	int adopted;		/* prev_t was read from the switches */
	struct config cfg;
	struct part_weights lw;	/* the job's copy of the learned weights */
	struct part_model parts;	/* cfg's partitions resolved on snap */
	int has_parts;
	char override[512];
	int has_override;
	struct route_result res;
	struct worker w;	/* route_thread, then on_routed */
	route_done_fn done;
	void *arg;
};

static int route_fresh(struct route_job *j)
{
	struct route_result *r = &j->res;
	r->rc = sm_route(&j->cfg, j->has_override ? j->override : NULL,
			 &j->snap, j->has_parts ? &j->parts : NULL, &r->t,
			 &r->used, &r->ms);
	return r->rc;
}

/* Keeps the old entries that still work; see route.h. */
static void try_repair(struct route_job *j)
{
	struct route_result *r = &j->res;
	uint64_t t0 = clock_us();
	if (repair_routes(&j->prev_f, &j->prev_t, &j->snap, &r->t, &r->rs) < 0) {
		snprintf(r->note, sizeof(r->note), "full reroute: no memory to repair");
		return;
	}
	if ((r->rs.fresh || j->adopted) && verify_engine_deadlock_free(r->used)) {
		struct verify_opts vo = { .deadlock_free_required = 1 };
		struct verify_report vr;
		int vrc = route_verify(&j->snap, &r->t, &vo, &vr);
		/*
		 * Judged on delivery and cycles: the kept entries' balance
		 * per LID offset (an error of --verify) is the old tables'.
		 */
		if (vrc < 0 || vr.errors > (vr.offsets_unbalanced != 0)) {
			snprintf(r->note, sizeof(r->note),
				 "full reroute: the repaired tables failed the check (%s)",
				 vrc < 0 ? "no memory to check them" :
				 vr.cycle ? "a dependency cycle" : "undelivered routes");
			route_fresh(j);
			return;
		}
	}
	r->repaired = 1;
	r->repair_ms = (clock_us() - t0 + 500) / 1000;
}

static void route_thread(void *arg)
{
	struct route_job *j = arg;
	/* a reload on the loop may free the map: names from the copy alone */
	nodemap_thread_bypass();
	struct route_result *r = &j->res;
	enum repair_change ch = REPAIR_GAIN;
	char why[128] = "";
	j->has_parts = part_resolve(&j->cfg, &j->snap, &j->lw, 0, &j->parts) == 0;
	if (j->has_prev)
		ch = repair_compare(&j->prev_f, &j->snap, why, sizeof(why));
	if (j->adopted && ch == REPAIR_SAME)
		ch = REPAIR_LOSS;	/* check every entry read, keep what works */
	/*
	 * An engine with SLs of its own (dfsssp) routes again: the kept or
	 * repaired entries would have no SLs, and a new path may close a
	 * cycle only its layers break.
	 */
	const struct routing_engine *pe = j->prev_engine ?
		routing_engine_find(j->prev_engine) : NULL;
	int layered = pe && pe->own_sls;
	if (layered && ch != REPAIR_GAIN)
		snprintf(why, sizeof(why), "%s recomputes its VL layers", pe->name);
	if (layered && ch == REPAIR_LOSS)
		ch = REPAIR_GAIN;
	if (ch == REPAIR_SAME && !layered &&
	    repair_keep(&j->prev_f, &j->prev_t, &j->snap, &r->t) == 0) {
		/* nothing came or went: the old routes, no engine */
		r->rc = 0;
		r->used = j->prev_engine;
		r->repaired = 1;
	} else if (route_fresh(j) == 0 && j->has_prev) {
		if (ch == REPAIR_LOSS)
			try_repair(j);
		else
			snprintf(r->note, sizeof(r->note), "full reroute: %s", why);
	}
	if (r->rc == 0 && (config_qos_tables(&j->cfg) ||
			   (j->has_parts && pvl_needed(&j->parts)))) {
		uint64_t t0 = clock_us();
		r->qos_rc = qos_apply(&j->cfg, &j->snap,
				      j->has_parts ? &j->parts : NULL, &r->t,
				      &r->qos);
		r->qos_ms = (clock_us() - t0 + 500) / 1000;
		r->qos_ran = 1;
	}
}

static void job_free(struct route_job *j)
{
	worker_free(&j->w);
	fabric_free(&j->snap);
	part_model_free(&j->parts);
	free(j->lw.guid);
	free(j->lw.weight);
	fabric_free(&j->prev_f);
	lft_tables_free(&j->prev_t);
	lft_tables_free(&j->res.t);
	free(j);
}

static void on_routed(void *arg)
{
	struct route_job *j = arg;
	route_done_fn done = j->done;
	void *darg = j->arg;
	struct route_result res = j->res;
	memset(&j->res.t, 0, sizeof(j->res.t));
	job_free(j);
	done(darg, &res);
	lft_tables_free(&res.t);	/* unless done took them */
}

struct route_job *route_job_start(struct event_base *base,
				  const struct config *c, const char *override,
				  const struct fabric *f,
				  const struct fabric *prev_f,
				  struct lft_tables *prev_t,
				  const char *prev_engine, int adopted,
				  const struct part_weights *lw,
				  route_done_fn done, void *arg)
{
	struct route_job *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	worker_init(&j->w);
	j->cfg = *c;
	if (override) {
		snprintf(j->override, sizeof(j->override), "%s", override);
		j->has_override = 1;
	}
	j->done = done;
	j->arg = arg;
	if (lw && lw->n) {
		j->lw.guid = malloc((size_t)lw->n * sizeof(*lw->guid));
		j->lw.weight = malloc((size_t)lw->n * sizeof(*lw->weight));
		if (!j->lw.guid || !j->lw.weight) {
			job_free(j);
			return NULL;
		}
		memcpy(j->lw.guid, lw->guid, (size_t)lw->n * sizeof(*lw->guid));
		memcpy(j->lw.weight, lw->weight, (size_t)lw->n * sizeof(*lw->weight));
		j->lw.n = lw->n;
	}
	if (fabric_clone(&j->snap, f) < 0) {
		job_free(j);
		return NULL;
	}
	if (prev_f && prev_t && prev_t->port && prev_engine) {
		if (fabric_clone(&j->prev_f, prev_f) == 0) {
			j->prev_t = *prev_t;
			j->prev_engine = prev_engine;
			memset(prev_t, 0, sizeof(*prev_t));
			j->has_prev = 1;
			j->adopted = adopted;
		}	/* else: no repair, a fresh routing */
	}
	if (worker_start(&j->w, base, route_thread, on_routed, j) < 0) {
		int e = errno;
		job_free(j);
		errno = e;
		return NULL;
	}
	return j;
}

void route_job_cancel(struct route_job *j)
{
	if (!j)
		return;
	worker_join(&j->w);
	job_free(j);
}
