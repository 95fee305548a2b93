/*
 * The VM commands on the daemon's side (see vmops.h).
 */
#include "sm/vm/vmops.h"
#include "routing/xlft.h"
#include "sm/discover/xlid_sm.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconfig/migrate.h"
#include "reconfig/rblocal.h"
#include "reconfig/rebalance.h"
#include "sm/base/clock.h"
#include "sm/heavy.h"
#include "sm/daemon.h"
#include "sm/model/lids.h"
#include "sm/base/log.h"
#include "sm/sa/paths.h"
#include "sm/sa/sa_server.h"
#include "sm/model/state.h"
#include "sm/vm/vmshared.h"
#include "sm/write/plan_lft.h"
#include "traps/vguid.h"
#include "sm/apply.h"

#define VGUID_LOCAL 0x0200000000000000ULL	/* the default vGUID's mark */

struct vmop {
	struct vmop_req q;
	vmop_done_fn done;
	void *arg;
	int running;		/* vmexec has it */
	struct vmop_result r;
	/* what the completion needs, found before the writes */
	uint32_t vf_pi, src_pi;
	uint64_t dst_hyp;
	int dst_vf;
	uint32_t lid;
};

static int parse_guid(const char *s, uint64_t *g)
{
	char *end;
	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !s[2])
		return -1;
	*g = strtoull(s + 2, &end, 16);
	return *end || !*g ? -1 : 0;
}

/* A CA port that is a PF: its vSwitch, else FAB_NONE. */
static uint32_t pf_vswitch(const struct fabric *f, uint32_t pi)
{
	int vf;
	uint32_t vs = fabric_vswitch_of(f, pi, &vf);
	return vs != FAB_NONE && vf == -1 ? vs : FAB_NONE;
}

/*
 * The hypervisor named h in f: a vSwitch by node description or node
 * GUID, or the vSwitch of a PF named by node description, node GUID or
 * port GUID.  FAB_NONE with err.
 */
static uint32_t vmops_find_hypervisor(const struct fabric *f, const char *h,
				      char *err, size_t errlen)
{
	uint64_t g = 0;
	int by_guid = parse_guid(h, &g) == 0;
	uint32_t found = FAB_NONE;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		const struct fab_node *n = &f->nodes[p->node];
		uint32_t vs = FAB_NONE;
		if (n->type == FAB_SWITCH) {
			if (p->num == 0 && fabric_is_vswitch(f, p->node) &&
			    (by_guid ? n->guid == g : !strcmp(n->desc, h)))
				vs = p->node;
		} else if (p->num && (by_guid ? n->guid == g || p->guid == g :
				      !strcmp(n->desc, h))) {
			vs = pf_vswitch(f, pi);
		}
		if (vs == FAB_NONE || vs == found)
			continue;
		if (found != FAB_NONE) {
			snprintf(err, errlen, "'%s' names more than one hypervisor", h);
			return FAB_NONE;
		}
		found = vs;
	}
	if (found == FAB_NONE)
		snprintf(err, errlen, "no hypervisor '%s' (a vSwitch the policy names, or its PF, by node description or GUID)",
			 h);
	return found;
}

/*
 * The VF for a VM on vSwitch vs: --vf N, or the lowest free; a VF a VM
 * runs on is taken, and under prepopulated one without a LID is unusable.
 */
static int pick_vf(const struct sm *sm, const struct fabric *f, uint32_t vs,
		   int want, const char *hname, int *vf, uint32_t *pi,
		   char *err, size_t errlen)
{
	unsigned n = fabric_vswitch_nvf(f, vs);
	uint64_t hg = f->nodes[vs].guid;
	if (want >= 0) {
		if ((unsigned)want >= n) {
			snprintf(err, errlen, "hypervisor '%s' has no VF %d (it has %u)",
				 hname, want, n);
			return -1;
		}
		const struct vm *o = vm_find_vf(&sm->vms, hg, want);
		if (o) {
			snprintf(err, errlen, "VF %d of '%s' is taken by VM '%s'",
				 want, hname, o->name);
			return -1;
		}
		*vf = want;
		*pi = fabric_vswitch_vf(f, vs, (unsigned)want, NULL);
		return 0;
	}
	for (unsigned k = 0; k < n; k++) {
		uint32_t p = fabric_vswitch_vf(f, vs, k, NULL);
		if (vm_find_vf(&sm->vms, hg, (int)k) ||
		    (sm->cfg.lid_scheme == MIG_PREPOPULATED && !f->ports[p].lid))
			continue;
		*vf = (int)k;
		*pi = p;
		return 0;
	}
	snprintf(err, errlen, "no free VF on hypervisor '%s' (%u VFs)", hname, n);
	return -1;
}

static int guid_in_fabric(const struct fabric *f, uint64_t g)
{
	for (uint32_t i = 0; i < f->n_ports; i++)
		if (f->ports[i].guid == g && fabric_is_endport(f, i))
			return 1;
	return 0;
}

/* The default vGUID: the VF's port GUID marked locally administered. */
static uint64_t default_vguid(const struct sm *sm, const struct fabric *f,
			      uint64_t vf_guid)
{
	uint64_t g = vf_guid | VGUID_LOCAL;
	while (vm_find_vguid(&sm->vms, g) || guid_in_fabric(f, g))
		g++;
	return g;
}

/*
 * The registry's file (and with lids guid2lid) written before the command
 * answers; the SA's shared-LID changes go in bursts (sm/vm/vmsave.h).
 */
static void save_state(struct sm *sm, int lids)
{
	char err[512];
	int vms_bad = vmshared_save(sm, err, sizeof(err)) < 0;
	if (lids)
		sm_save_lids(sm);	/* sets or clears SM_ERR_STATE */
	if (vms_bad) {
		log_err("cannot save the VM registry: %s", err);
		errors_set(&sm->errs, SM_ERR_STATE, "cannot save the VM registry: %s", err);
	}
}

/* A move by its method; a boot copies the PF's column, a drop clears one. */
static void fill_stats_from_plan(struct vmop_result *r, const struct migration *m)
{
	r->method = m->kind == MIG_BOOT ? "boot" : m->kind == MIG_DROP ? "drop" :
		    mig_method_name(m->method);
}

static void finish(struct sm *sm, struct vmop *op)
{
	sm->vmop = NULL;
	if (op->done)
		op->done(sm, op->arg, &op->r);
	free(op);
}

static void rebalance_policy_of(const struct config *c, struct rebalance_policy *p)
{
	p->after_migrations = (uint32_t)c->rb_after_migrations;
	p->balance_drop = c->rb_balance_drop;
	p->interval_s = (uint32_t)c->rb_interval_s;
	p->local = c->rb_local;
}

/* A move to another leaf: within one, no route above the leaf changes. */
static int moved_leaf(const struct fabric *f, uint32_t src_pi, uint32_t dst_pi)
{
	uint32_t a = fabric_vswitch_of(f, src_pi, NULL);
	uint32_t b = fabric_vswitch_of(f, dst_pi, NULL);
	return a == FAB_NONE || b == FAB_NONE ||
	       fabric_vswitch_leaf(f, a) != fabric_vswitch_leaf(f, b);
}

/*
 * The leaves a move to another leaf touched, for a local rebalance
 * (reconfig/rblocal.h).  Without memory for them the next one takes the
 * whole fabric: the roots stand for every leaf.
 */
static void touch_leaves(struct sm *sm, const struct fabric *f, uint32_t src_pi,
			 uint32_t dst_pi)
{
	uint32_t pis[2] = { src_pi, dst_pi };
	for (int i = 0; i < 2; i++) {
		uint32_t vs = fabric_vswitch_of(f, pis[i], NULL);
		uint32_t leaf = vs != FAB_NONE ? fabric_vswitch_leaf(f, vs) : FAB_NONE;
		if (leaf == FAB_NONE || rebalance_touch(&sm->vms.rb, f->nodes[leaf].guid) < 0)
			sm->vms.rb.touch_lost = 1;
	}
}

/*
 * A VM command's writes ended and the model has its weights: counts a
 * move, measures the balance when virtualization.rebalance.balance_drop
 * asks (one vswitch-ftree routing of the model, on the loop), and marks
 * a reroute due for vmops_resume.
 */
static void rebalance_after(struct sm *sm, const struct vmop *op)
{
	struct rebalance_policy p;
	struct fabric *f = &sm->sub.model->f;
	int permille = -1;
	rebalance_policy_of(&sm->cfg, &p);
	if (p.balance_drop > 0) {
		struct rebalance_quality q;
		char err[256];
		if (rebalance_quality(f, &sm->sub.lft, &q, err, sizeof(err)) < 0) {
			log_limited(LOG_WARN, "rebalance: the balance was not measured: %s",
				    err);
		} else if (q.permille >= 0) {
			permille = q.permille;
			log_info("rebalance: balance %d/1000 of a fresh vswitch-ftree's "
				 "(heaviest link %llu, fresh %llu; %u VMs)", permille,
				 (unsigned long long)q.now.max_load,
				 (unsigned long long)q.fresh.max_load, q.now.vms);
		}
	}
	int moved = op->q.kind == VMOP_MIGRATE && moved_leaf(f, op->src_pi, op->vf_pi);
	if (moved)
		touch_leaves(sm, f, op->src_pi, op->vf_pi);
	int was = sm->vms.rb.pending;
	int why = rebalance_after_vm(&p, &sm->vms.rb, moved, permille);
	if (why && !was)
		log_notice("rebalance: a reroute is due (%s: %u moves since the last, "
			   "balance %d/1000 of a fresh vswitch-ftree's)",
			   rebalance_reason_name(why), sm->vms.rb.migrations, permille);
}

/*
 * virtualization.rebalance.local: the smallest sub-tree holding the leaves
 * the moves touched routed again (reconfig/rblocal.h) and written as a
 * reroute's tables are (heavy_write_tables: the LFT order).  1 when it
 * started, 0 when it could not start now, -1 when the whole fabric is to
 * be rerouted (said why).
 */
static int rebalance_local(struct sm *sm, int why, uint64_t now)
{
	struct rebalance_state *rb = &sm->vms.rb;
	const struct fabric *f = &sm->sub.model->f;
	char err[256] = "", desc[256];
	if (sm->sw.activity != SM_IDLE)
		return 0;
	if (!sm->sub.engine || strcmp(sm->sub.engine, "vswitch-ftree")) {
		snprintf(err, sizeof(err), "the tables are %s's, not vswitch-ftree's",
			 sm->sub.engine ? sm->sub.engine : "no engine");
		goto whole;
	}
	if (rb->touch_lost || !rb->n_touched) {
		snprintf(err, sizeof(err), "the leaves the moves touched are not known");
		goto whole;
	}
	uint32_t *leaves = malloc(rb->n_touched * sizeof(*leaves));
	if (!leaves) {
		snprintf(err, sizeof(err), "out of memory");
		goto whole;
	}
	for (uint32_t i = 0; i < rb->n_touched; i++)
		leaves[i] = fabric_find_node(f, rb->touched[i]);
	struct lft_tables t = { 0 };
	struct rblocal_result res = { 0 };
	int rc = migrate_tables_copy(&t, &sm->sub.lft, f, sm->sub.lft.max_lid);
	if (rc < 0)
		snprintf(err, sizeof(err), "out of memory");
	else
		rc = rblocal_route(f, &t, leaves, rb->n_touched, &res, err, sizeof(err));
	free(leaves);
	if (rc == 0 && res.st.whole)
		snprintf(err, sizeof(err), "the smallest sub-tree holding the %u leaves the moves touched is the whole fabric",
			 rb->n_touched);
	if (rc < 0 || res.st.whole) {
		lft_tables_free(&t);
		goto whole;
	}
	rblocal_describe(f, &res.st, desc, sizeof(desc));
	uint32_t moves = rb->migrations;
	rb->last_local = res;
	rb->last_local_top = f->nodes[res.st.top_node].guid;
	rb->local++;
	rebalance_rerouted(rb, why, now);
	log_notice("rebalance: local (%s; %u moves since the last reroute): the %s routed "
		   "again in %llu us, %u LIDs, %u switches and %llu entries change",
		   rebalance_reason_name(why), moves, desc,
		   (unsigned long long)res.route_us, res.lids, res.switches_changed,
		   (unsigned long long)res.entries_changed);
	if (heavy_write_tables(sm, &t, res.route_us / 1000) < 0)
		return 0;
	return 1;
whole:
	rb->local_whole++;
	log_notice("rebalance: local asked, the whole fabric rerouted: %s", err);
	return -1;
}

/*
 * The loop is free: the reroute virtualization.rebalance made due, as
 * ibsmctl reroute asks for it.  1 when it started.
 */
static int rebalance_start(struct sm *sm)
{
	struct rebalance_policy p;
	rebalance_policy_of(&sm->cfg, &p);
	uint64_t now = clock_ms();
	int why = rebalance_due(&p, &sm->vms.rb, now);
	if (!why || sm->state != SMS_MASTER || !sm->sub.model)
		return 0;
	char err[256];
	uint32_t moves = sm->vms.rb.migrations;
	if (p.local) {
		int rc = rebalance_local(sm, why, now);
		if (rc >= 0)
			return rc;
	}
	if (sweeper_request_reroute(sm, err, sizeof(err)) < 0) {
		log_limited(LOG_WARN, "rebalance: reroute not started: %s", err);
		return 0;
	}
	log_notice("rebalance: rerouting the fabric (%s; %u moves since the last reroute, "
		   "last balance %d/1000 of a fresh vswitch-ftree's)",
		   rebalance_reason_name(why), moves, sm->vms.rb.last_permille);
	rebalance_rerouted(&sm->vms.rb, why, now);
	return 1;
}

/* The writes are over: the registry and the rest follow, or not. */
static void on_exec_done(struct sm *sm, void *arg, int ok,
			 const struct vmexec_stats *st)
{
	struct vmop *op = arg;
	struct fabric *f = &sm->sub.model->f;
	op->running = 0;
	op->r.wrote = 1;
	op->r.st = *st;
	if (sm->sw.activity == SM_VM_WRITES)
		sm->sw.activity = SM_IDLE;
	if (!ok) {
		op->r.ok = 0;
		snprintf(op->r.err, sizeof(op->r.err),
			 "%u writes failed%s; the registry is unchanged, a heavy sweep puts the fabric back",
			 st->failed, st->stopped ? " (stopped there)" : "");
		log_err("vm %s '%s': %s", op->q.kind == VMOP_CREATE ? "create" :
			op->q.kind == VMOP_DESTROY ? "destroy" : "migrate",
			op->q.name, op->r.err);
		sweeper_request_heavy(sm, "a VM's writes failed");
		finish(sm, op);
		return;
	}
	op->r.ok = 1;
	struct vm *v = vm_find(&sm->vms, op->q.name);
	switch (op->q.kind) {
	case VMOP_CREATE:
		v = vm_add(&sm->vms, &op->r.vm);
		if (!v) {	/* checked unique before: ENOMEM */
			op->r.ok = 0;
			snprintf(op->r.err, sizeof(op->r.err), "out of memory");
			break;
		}
		f->ports[op->vf_pi].vm_weight = v->weight;
		break;
	case VMOP_DESTROY:
		if (v) {
			guid_map_del(&sm->sub.guid2lid, v->vf_guid);
			vm_del(&sm->vms, v);
		}
		f->ports[op->vf_pi].vm_weight = 0;
		break;
	case VMOP_MIGRATE:
		if (!v)
			break;
		/* dynamic: the source VF is idle, its entry goes with the LID */
		if (sm->cfg.lid_scheme == MIG_DYNAMIC)
			guid_map_del(&sm->sub.guid2lid, v->vf_guid);
		f->ports[op->src_pi].vm_weight = 0;
		f->ports[op->vf_pi].vm_weight = v->weight;
		vm_move(&sm->vms, v, op->dst_hyp);
		v->vf = op->dst_vf;
		v->vf_guid = f->ports[op->vf_pi].guid;
		v->prepared = 0;
		v->to_hyp_guid = 0;
		v->to_vf = 0;
		op->r.vm = *v;
		break;
	}
	char how[256];
	lft_order_describe(&st->order, how, sizeof(how));
	if (op->q.kind == VMOP_DESTROY)
		log_notice("vm destroy '%s': LID %u dropped (%u LFT blocks, %u vSwitch blocks; %s)",
			   op->q.name, op->lid, st->lft_blocks, st->vswitch_blocks, how);
	else
		log_notice("vm %s '%s': LID %u on VF %d of 0x%016" PRIx64 " (%u switches marked, %u written, %u LFT blocks, %u vSwitch blocks, %u other SMPs, commit %" PRIu64 " us; %s)",
			   op->q.kind == VMOP_CREATE ? "create" : "migrate",
			   op->q.name, op->r.vm.lid, op->r.vm.vf, op->r.vm.hyp_guid,
			   st->switches_marked, st->switches_written,
			   st->lft_blocks, st->vswitch_blocks, st->other_smps,
			   st->commit_us, how);
	save_state(sm, 1);
	sa_publish(sm, f, &sm->sub.lft);
	if (op->q.kind == VMOP_MIGRATE)
		sm_paths_rerouted(sm);
	rebalance_after(sm, op);
	/* it must find nothing to change: the model, tables and cache are the fabric's */
	sweeper_request_heavy(sm, "check after a VM's writes");
	finish(sm, op);
}

/* Hands a plan to the executor; 0 running, -1 with op->r.err. */
static int exec(struct sm *sm, struct vmop *op, struct migration *m,
		struct lft_tables *t)
{
	struct vm_port_set ps[2];
	unsigned n = vmexec_port_sets(m, ps);
	fill_stats_from_plan(&op->r, m);
	if (vmexec_start(sm, m, t, ps, n, on_exec_done, op, op->r.err,
			 sizeof(op->r.err)) < 0) {
		migration_free(m);
		lft_tables_free(t);
		return -1;
	}
	op->running = 1;
	sm->sw.activity = SM_VM_WRITES;	/* no sweep while the fabric is half-written */
	return 0;
}

static void shared_result(struct vmop_result *r, const struct vmshared_result *sr)
{
	r->shared = 1;
	r->notices = sr->notices;
	r->hypervisors = sr->hypervisors;
	r->vguid_action = sr->action < 0 ? NULL :
			  vguid_action_name((enum vguid_action)sr->action);
}

/*
 * vm create --shared-lid: the registry and Paper VI's table, no writes.
 * auto: made shared because no LID is left for it (legacy mode, LID space
 * full): a --vf naming a VF slot without a LID is then no error.
 */
static int create_shared(struct sm *sm, struct vmop *op, uint32_t vs, int auto_)
{
	struct fabric *f = &sm->sub.model->f;
	struct vmop_req *q = &op->q;
	struct vm *v = &op->r.vm;
	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), "%s", q->name);
	v->hyp_guid = f->nodes[vs].guid;
	v->weight = (uint16_t)(q->weight ? q->weight : 1);
	if (q->vf >= 0 && !auto_) {
		snprintf(op->r.err, sizeof(op->r.err), "a shared-LID VM has no VF: --vf makes no sense with --shared-lid");
		return -1;
	}
	if (q->vguid) {
		const struct vm *o = vm_find_vguid(&sm->vms, q->vguid);
		if (o || guid_in_fabric(f, q->vguid)) {
			snprintf(op->r.err, sizeof(op->r.err), "vGUID 0x%016" PRIx64 " is %s",
				 q->vguid, o ? "another VM's" : "a port GUID in the fabric");
			return -1;
		}
		v->vguid = q->vguid;
	} else {
		/* the PF's port GUID marked local, then the next free */
		uint32_t pf = fabric_vswitch_pf(f, vs);
		v->vguid = default_vguid(sm, f, pf != FAB_NONE ? f->ports[pf].guid :
					 v->hyp_guid);
	}
	struct vmshared_result sr;
	if (vmshared_create(sm, v, &sr, op->r.err, sizeof(op->r.err)) < 0)
		return -1;
	save_state(sm, 0);
	shared_result(&op->r, &sr);
	op->r.method = "none";
	log_notice("vm create '%s': shared LID %u of 0x%016" PRIx64 ", vGUID 0x%016" PRIx64 " (no writes)",
		   v->name, v->lid, v->hyp_guid, v->vguid);
	op->r.ok = 1;
	return 1;
}

/*
 * Prepopulated scheme, legacy mode: the VM would land on a VF slot left
 * without a LID when the LID space ran out (lids.h, vf_shared) -- the VF
 * named (want >= 0), or, none named, every free VF of vs is such a slot
 * and one is there.  Such a VM is made a shared-LID VM.
 */
static int no_lid_left(struct sm *sm, const struct fabric *f, uint32_t vs,
		       int want)
{
	if (f->xlid_mode || sm->cfg.lid_scheme != MIG_PREPOPULATED)
		return 0;
	unsigned n = fabric_vswitch_nvf(f, vs), slots = 0;
	uint64_t hg = f->nodes[vs].guid;
	for (unsigned k = 0; k < n; k++) {
		if ((want >= 0 && (unsigned)want != k) || vm_find_vf(&sm->vms, hg, (int)k))
			continue;
		uint32_t p = fabric_vswitch_vf(f, vs, k, NULL);
		if (p == FAB_NONE)
			continue;
		if (f->ports[p].lid)
			return 0;	/* a VF with a LID is free: it takes that */
		slots++;
	}
	return slots > 0;
}

static int do_create(struct sm *sm, struct vmop *op)
{
	struct fabric *f = &sm->sub.model->f;
	struct vmop_req *q = &op->q;
	char *err = op->r.err;
	size_t errlen = sizeof(op->r.err);
	if (vm_find(&sm->vms, q->name)) {
		snprintf(err, errlen, "a VM named '%s' exists", q->name);
		return -1;
	}
	if (!q->hyp[0]) {
		snprintf(err, errlen, "vm create needs --hypervisor H");
		return -1;
	}
	uint32_t vs = vmops_find_hypervisor(f, q->hyp, err, errlen);
	if (vs != FAB_NONE &&
	    vmshared_room(sm, f->nodes[vs].guid, 1, 0, 0, err, errlen) < 0)
		return -1;
	if (vs != FAB_NONE && q->shared)
		return create_shared(sm, op, vs, 0);
	if (vs != FAB_NONE && no_lid_left(sm, f, vs, q->vf)) {
		log_warn("vm create '%s' on '%s': no LID left for it (LID space exhausted): a shared-LID VM",
			 q->name, q->hyp);
		return create_shared(sm, op, vs, 1);
	}
	int vf;
	if (vs == FAB_NONE ||
	    pick_vf(sm, f, vs, q->vf, q->hyp, &vf, &op->vf_pi, err, errlen) < 0)
		return -1;
	struct vm *v = &op->r.vm;
	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), "%s", q->name);
	v->hyp_guid = f->nodes[vs].guid;
	v->vf = vf;
	v->vf_guid = f->ports[op->vf_pi].guid;
	v->weight = (uint16_t)(q->weight ? q->weight : 1);
	if (q->vguid) {
		const struct vm *o = vm_find_vguid(&sm->vms, q->vguid);
		if (o || guid_in_fabric(f, q->vguid)) {
			snprintf(err, errlen, "vGUID 0x%016" PRIx64 " is %s", q->vguid,
				 o ? "another VM's" : "a port GUID in the fabric");
			return -1;
		}
		v->vguid = q->vguid;
	} else {
		v->vguid = default_vguid(sm, f, v->vf_guid);
	}
	if (sm->cfg.lid_scheme == MIG_PREPOPULATED) {
		/* the VF has its LID from bring-up: nothing to write */
		v->lid = f->ports[op->vf_pi].lid;
		if (!vm_add(&sm->vms, v)) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		f->ports[op->vf_pi].vm_weight = v->weight;
		save_state(sm, 1);
		sa_publish(sm, f, &sm->sub.lft);
		/*
		 * No writes, so no check sweep: a round of its own makes the
		 * routes signalled name the VF by the VM (sm/sa/paths.c), or the
		 * VM's first migration would be told as its VF's LID moving.
		 */
		sm_paths_rerouted(sm);
		log_notice("vm create '%s': LID %u of VF %d of 0x%016" PRIx64 " (prepopulated: no writes)",
			   v->name, v->lid, vf, v->hyp_guid);
		op->r.ok = 1;
		return 1;
	}
	/* extended LIDs: a vLID where the VF and its vSwitch can take one */
	int x = xlid_port_ok(f, op->vf_pi);
	f->lid_limit = sm->lid_limit;
	uint32_t lid = x ? xlid_alloc_vlid(f, &sm->sub.guid2lid) :
		       lids_alloc_vm(f, &sm->sub.guid2lid, op->vf_pi);
	if (!lid && !x) {
		/* legacy mode, LID space full: the VM shares its PF's LID */
		log_warn("vm create '%s' on '%s': no free LID (LID space exhausted): a shared-LID VM",
			 q->name, q->hyp);
		return create_shared(sm, op, vs, 1);
	}
	if (!lid) {
		snprintf(err, errlen, "no free LID for the VM");
		return -1;
	}
	v->lid = op->lid = lid;
	struct lft_tables t = { 0 };
	struct migration m;
	memset(&m, 0, sizeof(m));
	if (migrate_tables_copy(&t, &sm->sub.lft, f, x ? 0 : lid) < 0 ||
	    xlft_copy(&t, &sm->sub.lft) < 0) {
		lft_tables_free(&t);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if ((x ? migrate_plan_xboot(f, &t, op->vf_pi, lid, &m, err, errlen) :
	     migrate_plan_boot(f, &t, op->vf_pi, lid, &m, err, errlen)) < 0) {
		lft_tables_free(&t);
		return -1;
	}
	return exec(sm, op, &m, &t);
}

static int do_destroy(struct sm *sm, struct vmop *op)
{
	struct fabric *f = &sm->sub.model->f;
	struct vm *v = vm_find(&sm->vms, op->q.name);
	if (!v) {
		snprintf(op->r.err, sizeof(op->r.err), "no VM named '%s'", op->q.name);
		return -1;
	}
	op->r.vm = *v;
	op->lid = v->lid;
	if (v->shared) {	/* nothing written: the PF keeps its LID */
		vmshared_remove(sm, v);
		save_state(sm, 0);
		op->r.shared = 1;
		op->r.ok = 1;
		return 1;
	}
	op->vf_pi = vm_port(v, f);
	if (sm->cfg.lid_scheme == MIG_PREPOPULATED || op->vf_pi == FAB_NONE) {
		/* prepopulated: the VF keeps the LID, idle; absent: nothing there */
		if (op->vf_pi != FAB_NONE)
			f->ports[op->vf_pi].vm_weight = 0;
		if (sm->cfg.lid_scheme == MIG_DYNAMIC)
			guid_map_del(&sm->sub.guid2lid, v->vf_guid);
		vm_del(&sm->vms, v);
		save_state(sm, 1);
		sa_publish(sm, f, &sm->sub.lft);
		log_notice("vm destroy '%s': registry only (%s)", op->q.name,
			   op->vf_pi == FAB_NONE ? "its VF is not in the fabric" :
			   "prepopulated: the VF keeps its LID");
		op->r.ok = 1;
		return 1;
	}
	struct lft_tables t = { 0 };
	struct migration m;
	memset(&m, 0, sizeof(m));
	if (migrate_tables_copy(&t, &sm->sub.lft, f, 0) < 0 ||
	    xlft_copy(&t, &sm->sub.lft) < 0) {
		lft_tables_free(&t);
		snprintf(op->r.err, sizeof(op->r.err), "out of memory");
		return -1;
	}
	if ((fabric_is_vlid(op->lid) ?
	     migrate_plan_xdrop(f, &t, op->lid, &m, op->r.err, sizeof(op->r.err)) :
	     migrate_plan_drop(f, &t, op->lid, &m, op->r.err, sizeof(op->r.err))) < 0) {
		lft_tables_free(&t);
		return -1;
	}
	return exec(sm, op, &m, &t);
}

/* Forgets the prepared move's plan, if any. */
static void prep_drop(struct sm *sm)
{
	if (!sm->vms.prep)
		return;
	mig_prepared_free(sm->vms.prep);
	free(sm->vms.prep);
	sm->vms.prep = NULL;
	sm->vms.prep_name[0] = '\0';
}

/*
 * vm migrate --prepare: the move planned now (FTreeMinRC's ranking and
 * marking, the new entries, the writes), kept for the commit.  A plan
 * that cannot be made is only logged: the commit plans again and says why.
 */
static void prep_plan(struct sm *sm, struct vmop *op, const struct vm *v)
{
	struct fabric *f = &sm->sub.model->f;
	char err[256];
	prep_drop(sm);
	if (fabric_is_vlid(v->lid))
		return;	/* secondary tables: planned at commit */
	struct mig_prepared *p = calloc(1, sizeof(*p));
	if (!p || mig_prepare_vm(f, &sm->sub.lft, op->src_pi, op->vf_pi,
				 sm->cfg.lid_scheme, MIG_FTREEMINRC, p, err,
				 sizeof(err)) < 0) {
		log_warn("vm migrate '%s' --prepare: not planned ahead (%s); the commit plans it",
			 v->name, p ? err : "out of memory");
		free(p);
		return;
	}
	sm->vms.prep = p;
	snprintf(sm->vms.prep_name, sizeof(sm->vms.prep_name), "%s", v->name);
	op->r.planned_at_prepare = 1;
	op->r.method = mig_method_name(p->m.method);
	op->r.st.switches_marked = p->m.switches_marked;
	op->r.st.switches_written = p->m.switches_written;
	op->r.st.lft_blocks = p->m.lft_blocks;
	op->r.st.vswitch_blocks = p->m.vswitch_blocks;
	op->r.st.plan_us = p->prepare_us;
	op->r.st.order = p->m.order;
	char how[256];
	lft_order_describe(&p->m.order, how, sizeof(how));
	log_info("vm migrate '%s' --prepare: %u switches marked, %u LFT blocks and %u vSwitch blocks to write, planned in %" PRIu64 " us; %s",
		 v->name, p->m.switches_marked, p->m.lft_blocks, p->m.vswitch_blocks,
		 p->prepare_us, how);
}

/*
 * vm migrate --commit: the prepared plan into m and t if it still holds
 * (1), else 0 (logged: planned again); -1 on ENOMEM (err).
 */
static int prep_take(struct sm *sm, const struct vmop *op, struct migration *m,
		     struct lft_tables *t, char *err, size_t errlen)
{
	struct fabric *f = &sm->sub.model->f;
	char why[160] = "another VM's move was prepared since";
	int rc = 0;
	if (sm->vms.prep && !strcmp(sm->vms.prep_name, op->q.name)) {
		if (sm->vms.prep->m.scheme != sm->cfg.lid_scheme)
			snprintf(why, sizeof(why), "the LID scheme changed");
		else
			rc = mig_prepared_take(sm->vms.prep, f, &sm->sub.lft, op->src_pi,
					       op->vf_pi, t, m, why, sizeof(why));
		if (rc == 1 && xlft_copy(t, &sm->sub.lft) < 0) {
			migration_free(m);
			lft_tables_free(t);
			rc = -1;
		}
	}
	prep_drop(sm);
	if (rc < 0)
		snprintf(err, errlen, "out of memory");
	else if (rc == 0)
		log_info("vm migrate '%s' --commit: the plan made at prepare no longer holds (%s): planned now",
			 op->q.name, why);
	return rc;
}

static int do_migrate(struct sm *sm, struct vmop *op)
{
	struct fabric *f = &sm->sub.model->f;
	struct vmop_req *q = &op->q;
	char *err = op->r.err;
	size_t errlen = sizeof(op->r.err);
	struct vm *v = vm_find(&sm->vms, q->name);
	if (!v) {
		snprintf(err, errlen, "no VM named '%s'", q->name);
		return -1;
	}
	uint32_t vs;
	int vf;
	char hname[40];
	if (v->shared) {
		/* a new hypervisor, a new LID, no LFT written: Paper VI */
		if (q->prepare || q->commit || q->vf >= 0) {
			snprintf(err, errlen, "VM '%s' has a shared LID: it moves in one step, to a hypervisor, with no VF (no --prepare, --commit or --vf)",
				 q->name);
			return -1;
		}
		if (!q->hyp[0]) {
			snprintf(err, errlen, "vm migrate needs --to H");
			return -1;
		}
		vs = vmops_find_hypervisor(f, q->hyp, err, errlen);
		if (vs == FAB_NONE)
			return -1;
		if (f->nodes[vs].guid == v->hyp_guid) {
			snprintf(err, errlen, "VM '%s' runs on that hypervisor", q->name);
			return -1;
		}
		if (vmshared_room(sm, f->nodes[vs].guid, 0, 1, 0, err, errlen) < 0)
			return -1;
		struct vmshared_result sr;
		if (vmshared_move(sm, v, f->nodes[vs].guid, &sr, err, errlen) < 0)
			return -1;
		save_state(sm, 0);
		op->r.vm = *v;
		shared_result(&op->r, &sr);
		op->r.ok = 1;
		return 1;
	}
	if (q->commit && !q->prepare) {
		if (!v->prepared) {
			snprintf(err, errlen, "VM '%s' has no prepared migration (vm migrate %s --to H --prepare first)",
				 q->name, q->name);
			return -1;
		}
		snprintf(hname, sizeof(hname), "0x%016" PRIx64, v->to_hyp_guid);
		vs = fabric_find_node(f, v->to_hyp_guid);
		if (q->hyp[0]) {
			uint32_t named = vmops_find_hypervisor(f, q->hyp, err, errlen);
			if (named == FAB_NONE)
				return -1;
			if (named != vs || (q->vf >= 0 && q->vf != v->to_vf)) {
				snprintf(err, errlen, "VM '%s' was prepared for VF %d of %s, not that",
					 q->name, v->to_vf, hname);
				return -1;
			}
		}
		if (vs == FAB_NONE || !fabric_is_vswitch(f, vs)) {
			snprintf(err, errlen, "the prepared hypervisor %s is not in the fabric",
				 hname);
			return -1;
		}
		if (pick_vf(sm, f, vs, v->to_vf, hname, &vf, &op->vf_pi, err, errlen) < 0)
			return -1;
	} else {
		if (!q->hyp[0]) {
			snprintf(err, errlen, "vm migrate needs --to H");
			return -1;
		}
		vs = vmops_find_hypervisor(f, q->hyp, err, errlen);
		if (vs == FAB_NONE ||
		    pick_vf(sm, f, vs, q->vf, q->hyp, &vf, &op->vf_pi, err, errlen) < 0)
			return -1;
	}
	if (f->nodes[vs].guid != v->hyp_guid &&
	    vmshared_room(sm, f->nodes[vs].guid, 0, 1, 0, err, errlen) < 0)
		return -1;
	op->src_pi = vm_port(v, f);
	if (op->src_pi == FAB_NONE) {
		snprintf(err, errlen, "VM '%s' is not in the fabric (its VF 0x%016" PRIx64 " was not found)",
			 q->name, v->vf_guid);
		return -1;
	}
	op->dst_hyp = f->nodes[vs].guid;
	op->dst_vf = vf;
	if (q->prepare) {
		v->prepared = 1;
		v->to_hyp_guid = op->dst_hyp;
		v->to_vf = vf;
		op->r.vm = *v;
		op->r.prepared = 1;
		prep_plan(sm, op, v);
		save_state(sm, 0);
		op->r.ok = 1;
		return 1;
	}
	op->r.vm = *v;
	struct lft_tables t = { 0 };
	struct migration m;
	memset(&m, 0, sizeof(m));
	if (q->commit && !q->prepare) {
		int took = prep_take(sm, op, &m, &t, err, errlen);
		if (took < 0)
			return -1;
		if (took) {
			op->r.planned_at_prepare = 1;
			return exec(sm, op, &m, &t);
		}
	}
	if (migrate_tables_copy(&t, &sm->sub.lft, f, 0) < 0 ||
	    xlft_copy(&t, &sm->sub.lft) < 0) {
		lft_tables_free(&t);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* a VM on a vLID: secondary entries only (extended LIDs) */
	if ((fabric_is_vlid(v->lid) ?
	     migrate_plan_xvm(f, &t, op->src_pi, op->vf_pi, sm->cfg.lid_scheme,
			      MIG_FTREEMINRC, NULL, &m, err, errlen) :
	     migrate_plan_vm(f, &t, op->src_pi, op->vf_pi, sm->cfg.lid_scheme,
			     MIG_FTREEMINRC, NULL, &m, err, errlen)) < 0) {
		lft_tables_free(&t);
		return -1;
	}
	return exec(sm, op, &m, &t);
}

/* -1 refused (r.err), 0 running, 1 done at once. */
static int run(struct sm *sm, struct vmop *op)
{
	op->r.scheme = mig_scheme_name(sm->cfg.lid_scheme);
	op->r.method = "none";
	if (sm->state != SMS_MASTER || !sm->sub.model) {
		snprintf(op->r.err, sizeof(op->r.err),
			 "not MASTER of a configured subnet (state %s)",
			 sm_state_name(sm->state));
		return -1;
	}
	switch (op->q.kind) {
	case VMOP_CREATE:
		return do_create(sm, op);
	case VMOP_DESTROY:
		return do_destroy(sm, op);
	default:
		return do_migrate(sm, op);
	}
}

int vmop_start(struct sm *sm, const struct vmop_req *q, vmop_done_fn done,
	       void *arg, struct vmop_result *r)
{
	memset(r, 0, sizeof(*r));
	if (sm->vmop) {
		snprintf(r->err, sizeof(r->err),
			 "another VM command is running; try again when it is done");
		return -1;
	}
	/* not queued: a handover that succeeds ends in STANDBY, no resume */
	if (sm->sw.activity == SM_HANDOVER_WAIT) {
		snprintf(r->err, sizeof(r->err), "handing the subnet over to another SM");
		return -1;
	}
	struct vmop *op = calloc(1, sizeof(*op));
	if (!op) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		return -1;
	}
	op->q = *q;
	op->done = done;
	op->arg = arg;
	sm->vmop = op;
	if (sm->sw.activity != SM_IDLE) {	/* a sweep: the command waits for its end */
		log_info("vm command for '%s' waits for the sweep", q->name);
		return 0;
	}
	int rc = run(sm, op);
	if (rc == 0)
		return 0;
	*r = op->r;
	sm->vmop = NULL;
	free(op);
	return rc;
}

int vmops_resume(struct sm *sm)
{
	struct vmop *op = sm->vmop;
	if (!op)
		return rebalance_start(sm);
	if (op->running)
		return 0;
	int rc = run(sm, op);
	if (rc == 0)
		return 1;
	finish(sm, op);
	return 0;
}

/* The last local rebalance's sub-tree and what it changed; null: none yet. */
static json_t *last_local_json(const struct rebalance_state *rb)
{
	if (!rb->last_local_top)
		return json_null();
	const struct rblocal_result *r = &rb->last_local;
	char top[32];
	snprintf(top, sizeof(top), "0x%016" PRIx64, rb->last_local_top);
	return json_pack("{s:i,s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:I,s:I}",
		"level", (int)r->st.level, "top_guid", top,
		"top_switches", (int)r->st.tops, "switches", (int)r->st.switches,
		"leaves", (int)r->st.leaves, "end_nodes", (int)r->st.end_nodes,
		"lids", (int)r->lids, "switches_written", (int)r->switches_changed,
		"entries_written", (json_int_t)r->entries_changed,
		"route_us", (json_int_t)r->route_us);
}

void vms_to_ctl(const struct sm *sm, json_t *o)
{
	const struct vm_registry *r = &sm->vms;
	json_object_set_new(o, "vms", json_pack("{s:I,s:I,s:I,s:{s:I,s:I}}",
		"count", (json_int_t)r->n,
		"max", (json_int_t)sm->cfg.vm_max,
		"max_per_hypervisor", (json_int_t)sm->cfg.vm_max_per_hyp,
		"refused",
		"max_vms", (json_int_t)r->refused_total,
		"per_hypervisor", (json_int_t)r->refused_hyp));
	const struct rebalance_state *rb = &r->rb;
	json_t *b = json_pack("{s:i,s:f,s:i,s:I,s:s,s:I,s:{s:I,s:I,s:I}}",
		"after_migrations", sm->cfg.rb_after_migrations,
		"balance_drop", sm->cfg.rb_balance_drop,
		"interval_s", sm->cfg.rb_interval_s,
		"migrations_since_reroute", (json_int_t)rb->migrations,
		"due", rebalance_reason_name(rb->pending),
		"balance_checks", (json_int_t)rb->checks,
		"rerouted",
		"migrations", (json_int_t)rb->fired[REBAL_MIGRATIONS],
		"balance", (json_int_t)rb->fired[REBAL_BALANCE],
		"interval", (json_int_t)rb->fired[REBAL_INTERVAL]);
	if (b) {
		json_object_set_new(b, "last_balance_permille", rb->last_permille < 0 ?
				    json_null() : json_integer(rb->last_permille));
		json_object_set_new(b, "local", json_boolean(sm->cfg.rb_local));
		json_object_set_new(b, "local_rebalances", json_integer((json_int_t)rb->local));
		json_object_set_new(b, "local_whole", json_integer((json_int_t)rb->local_whole));
		json_object_set_new(b, "last_local", last_local_json(rb));
	}
	json_object_set_new(json_object_get(o, "vms"), "rebalance", b);
}

void vmops_free(struct sm *sm)
{
	struct vmop *op = sm->vmop;
	if (!op)
		return;
	if (op->running) {
		vmexec_abort(sm);	/* done runs: on_exec_done finishes op */
		if (sm->vmop != op)
			return;
	}
	op->r.ok = 0;
	snprintf(op->r.err, sizeof(op->r.err), "ibsmd is stopping");
	finish(sm, op);
}
