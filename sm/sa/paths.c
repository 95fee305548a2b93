/*
 * Repath / unpath signalling after a reroute (see paths.h).
 *
 * Once the LFTs of a reroute are programmed (so the notices never precede
 * the tables they describe), the loop copies the model and the tables
 * and a worker thread runs the distinguisher against what was last
 * signalled (tens of milliseconds after a link failure at 11664 hosts,
 * about a second when a fresh routing moved every LID): the loop goes on.
 * The thread's end wakes the loop, which sends the round's notices and
 * makes the copies the state signalled.  The two trap 128s of one failed
 * link make one heavy sweep (traps/trapin.c coalesces them), so one round.
 */
#include "sm/sa/paths.h"

#include <stdlib.h>
#include <string.h>

#include "routing/path.h"
#include "traps/notify.h"
#include "traps/prd.h"
#include "traps/repath.h"
#include "sm/daemon.h"
#include "sm/model/lanes.h"
#include "sm/base/log.h"
#include "sm/sa/sa_server.h"
#include "sm/base/worker.h"

/* Pairs a round lists; beyond it repath-only and hybrid-affected act as hybrid. */
#define PRD_MAX_CHANGES 1000000

struct paths_job {
	struct sm *sm;
	struct fabric f;		/* copies of what was programmed */
	struct lft_tables t;
	struct part_model parts;	/* resolved on f: the records' P_Keys */
	int has_parts;
	struct prd_params pp;
	int cancel;			/* set by the loop, read by the thread */
	int rc;
	struct prd_change *ch;
	size_t n;
	struct prd_stats st;
	struct worker w;		/* job_thread, then on_compared */
};

struct sm_paths {
	struct prd *prd;		/* the routes last signalled */
	struct paths_job *job;		/* comparing, or NULL */
};

static int publish(void *ctx, const struct notice *nt, uint32_t src)
{
	return notifier_publish(ctx, nt, src);
}

static int publish_to(void *ctx, uint32_t lid, const struct notice *nt,
		      uint32_t src)
{
	return notifier_publish_to(ctx, lid, nt, src);
}

static void job_free(struct paths_job *j)
{
	if (!j)
		return;
	if (j->w.started) {
		__atomic_store_n(&j->cancel, 1, __ATOMIC_RELAXED);
		worker_join(&j->w);
	}
	worker_free(&j->w);
	fabric_free(&j->f);
	lft_tables_free(&j->t);
	part_model_free(&j->parts);
	free(j->ch);
	free(j);
}

static void job_thread(void *arg)
{
	struct paths_job *j = arg;
	j->rc = prd_diff(j->sm->paths->prd, &j->f, &j->t, &j->pp, &j->ch, &j->n,
			 &j->st);
}

/*
 * The P_Key and SL of a pair's record: the SA's (sa_path_part(), then
 * the lanes' SL towards dst, sm/model/lanes.h), on the loop.
 */
static void pair_part(void *ctx, uint32_t src, uint32_t dst, uint16_t *pkey,
		      uint8_t *sl)
{
	struct paths_job *j = ctx;
	sa_path_part(j->has_parts ? &j->parts : NULL, &j->t, src, dst, pkey, sl);
	uint32_t lid = dst < j->f.n_ports ? j->f.ports[dst].lid : 0;
	*sl = lanes_path_sl(&j->sm->sub.lanes, lid, lid, *sl);
}

/* The loop: the comparison is done; the round's notices. */
static void on_compared(void *arg)
{
	struct paths_job *j = arg;
	struct sm *sm = j->sm;
	struct sm_paths *ps = sm->paths;
	ps->job = NULL;
	if (j->rc < 0) {
		log_err("paths: out of memory comparing the routes; no notices");
		job_free(j);
		return;
	}
	struct repath_params rp = {
		.mode = (enum repath_mode)sm->cfg.events_signalling,
		.sm_lid = (uint16_t)sm->sub.sm_lid,
		.subnet_prefix = sm->cfg.subnet_prefix,
		.pkey = j->pp.pkey,
		.ltv = j->pp.ltv,
		.part = pair_part,
		.part_ctx = j,
	};
	for (int i = 0; i < 8; i++) {
		rp.sm_gid[i] = (uint8_t)(sm->cfg.subnet_prefix >> (56 - 8 * i));
		rp.sm_gid[8 + i] = (uint8_t)(sm->tr.port_guid >> (56 - 8 * i));
	}
	struct repath_stats rs = { 0 };
	struct repath_out o = { sm->notify, publish, publish_to };
	if (sm->notify)
		repath_round(&rp, &j->f, &j->t, j->ch, j->n, &j->st, &o, &rs);
	if (j->st.first)
		log_info("paths: first routes noted (%s): %u notices, %llu Reports queued",
			 repath_mode_names[rp.mode], rs.notices,
			 (unsigned long long)rs.reports);
	else
		log_info("paths: %llu repath, %llu unpath%s in %llu us (%u of %u destinations, %u sources, %llu pairs resolved); %s: %u notices, %llu Reports queued%s",
			 (unsigned long long)j->st.repath,
			 (unsigned long long)j->st.unpath,
			 j->st.overflow ? " (list cut)" : "",
			 (unsigned long long)j->st.us, j->st.dirty_columns,
			 j->st.columns, j->st.dirty_sources,
			 (unsigned long long)j->st.pairs_resolved,
			 repath_mode_names[rp.mode], rs.notices,
			 (unsigned long long)rs.reports,
			 rs.fell_back ? " (sent as hybrid)" : "");
	j->pp.cancel = NULL;
	prd_commit_move(ps->prd, &j->f, &j->t, &j->pp);
	job_free(j);
}

/*
 * Hosts know a VM by its vGUID, not by the VF it runs on: in the copy
 * the distinguisher compares, a VF carrying a VM (with the VM's LID) is
 * named by the VM's vGUID (node and port GUID).  A migration then maps
 * the VM onto itself -- its paths are compared, and 68/69 notices name
 * its GID -- and a VF without a VM is a port of its own that no round
 * compares with the VM.  The copy is committed as the next round's old
 * snapshot, so both sides of a comparison are named the same way.
 */
static void name_vms(const struct vm_registry *r, struct fabric *f)
{
	for (uint32_t i = 0; i < r->n; i++) {
		const struct vm *v = &r->v[i];
		uint32_t pi = vm_port(v, f);
		if (pi == FAB_NONE || f->ports[pi].lid != v->lid ||
		    fabric_find_node(f, v->vguid) != FAB_NONE)
			continue;
		struct fab_node *n = &f->nodes[f->ports[pi].node];
		uint32_t ni = f->ports[pi].node;
		guid_map_del(&f->node_by_guid, n->guid);
		n->guid = v->vguid;
		f->ports[pi].guid = v->vguid;
		if (guid_map_put(&f->node_by_guid, n->guid, ni) < 0)
			log_warn("paths: out of memory naming VM %s", v->name);
	}
}

void sm_paths_rerouted(struct sm *sm)
{
	const struct fabric *f = &sm->sub.model->f;
	const struct lft_tables *t = &sm->sub.lft;
	if (!t->port)
		return;
	if (!sm->paths) {
		sm->paths = calloc(1, sizeof(*sm->paths));
		if (sm->paths && !(sm->paths->prd = prd_new())) {
			free(sm->paths);
			sm->paths = NULL;
		}
		if (!sm->paths) {
			log_err("paths: out of memory");
			return;
		}
	}
	struct sm_paths *ps = sm->paths;
	job_free(ps->job);	/* superseded: this round covers it */
	ps->job = NULL;
	struct paths_job *j = calloc(1, sizeof(*j));
	if (!j) {
		log_err("paths: out of memory; no notices this round");
		return;
	}
	j->sm = sm;
	worker_init(&j->w);
	j->pp = (struct prd_params){
		.pkey = 0xffff,
		.ltv = path_switch_ltv(f, (uint8_t)sm->cfg.subnet_timeout),
		.max_changes = PRD_MAX_CHANGES,
		.cancel = &j->cancel,
	};
	if (prd_copy(&j->f, &j->t, f, t) < 0) {
		log_err("paths: out of memory; no notices this round");
		job_free(j);
		return;
	}
	/* the partitions by the ports' own GUIDs, as the SA's view */
	j->has_parts = part_resolve(&sm->cfg, &j->f, &sm->learned, 0, &j->parts) == 0;
	name_vms(&sm->vms, &j->f);
	if (worker_start(&j->w, sm->base, job_thread, on_compared, j) < 0) {
		log_err("paths: cannot start the comparison (no thread or eventfd); no notices this round");
		job_free(j);
		return;
	}
	ps->job = j;
}

void sm_paths_free(struct sm *sm)
{
	if (!sm->paths)
		return;
	job_free(sm->paths->job);
	prd_free(sm->paths->prd);
	free(sm->paths);
	sm->paths = NULL;
}

int sm_paths_busy(const struct sm *sm)
{
	return sm->paths && sm->paths->job;
}
