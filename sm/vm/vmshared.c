/*
 * Shared-LID VMs and Paper VI signalling (see vmshared.h).
 */
#include "sm/vm/vmshared.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/sa.h"
#include "traps/notify.h"
#include "traps/repath.h"
#include "traps/vguid.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/mcast/mcast_sm.h"
#include "sm/sa/sa_server.h"
#include "sm/vm/vmsave.h"

#define HYP_MAX 4096	/* registered hypervisors told per migration */

struct vmshared {
	struct vguid_table t;
	struct vmsave *save;	/* the registry's file, once per burst, off the loop */
};

static struct vmshared *get(struct sm *sm)
{
	if (!sm->vmshared) {
		sm->vmshared = calloc(1, sizeof(*sm->vmshared));
		if (!sm->vmshared)
			return NULL;
		vguid_table_init(&sm->vmshared->t, VGUID_TTL_DEFAULT_S);
	}
	return sm->vmshared;
}

static struct vguid_table *table(struct sm *sm)
{
	struct vmshared *s = get(sm);
	return s ? &s->t : NULL;
}

static uint64_t now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

int vmshared_save(struct sm *sm, char *err, size_t errlen)
{
	if (sm->vmshared && sm->vmshared->save)
		return vmsave_now(sm->vmshared->save, err, errlen);
	return vm_registry_save(&sm->vms, err, errlen);
}

/* The registry changed: its file follows (at once without a loop). */
static void save_soon(struct sm *sm)
{
	struct vmshared *s = get(sm);
	if (s && !s->save && sm->base)
		s->save = vmsave_new(sm->base, &sm->vms, &sm->errs);
	if (s && s->save) {
		vmsave_soon(s->save);
		return;
	}
	char err[512];
	if (vmshared_save(sm, err, sizeof(err)) < 0) {
		log_err("cannot save the VM registry: %s", err);
		errors_set(&sm->errs, SM_ERR_STATE, "cannot save the VM registry: %s", err);
	}
}

void vmshared_free(struct sm *sm)
{
	if (!sm->vmshared)
		return;
	vmsave_free(sm->vmshared->save);
	vguid_table_free(&sm->vmshared->t);
	free(sm->vmshared);
	sm->vmshared = NULL;
}

/* ---- registered hypervisors ---- */

struct hyp_walk {
	const struct fabric *f;
	const struct guid_map *ports;	/* end ports by GUID */
	uint32_t *pi;
	size_t n, max;
};

static void hyp_one(void *arg, const uint8_t gid[16], uint16_t enum_id,
		    const uint8_t ii[36])
{
	struct hyp_walk *w = arg;
	const struct fabric *f = w->f;
	(void)enum_id;
	uint16_t trap = sa_get16(ii + 26);
	if (!ii[22] || (trap != 69 && trap != 0xffff))	/* generic 69, or all */
		return;
	uint32_t pi = guid_map_get(w->ports, sa_get64(gid + 8));
	if (pi == FAB_NONE)
		return;
	int vf;
	uint32_t vs = fabric_vswitch_of(f, pi, &vf);
	if (vs == FAB_NONE || vf != -1 || !f->ports[pi].lid)
		return;		/* not a hypervisor's PF: a host, a VM */
	for (size_t k = 0; k < w->n && k < w->max; k++)
		if (w->pi[k] == pi)
			return;	/* two subscriptions, one hypervisor */
	if (w->n < w->max)
		w->pi[w->n] = pi;
	w->n++;
}

/*
 * The registered hypervisors' PF ports in the model (up to max); how many
 * there are.
 */
static size_t vmshared_hypervisors(struct sm *sm, uint32_t *pi, size_t max)
{
	if (!sm->notify || !sm->sub.model)
		return 0;
	struct guid_map ports;
	if (fabric_endport_map(&sm->sub.model->f, 0, &ports) < 0) {
		log_err("out of memory finding the registered hypervisors; none is told");
		return 0;
	}
	struct hyp_walk w = { &sm->sub.model->f, &ports, pi, 0, max };
	notifier_foreach(sm->notify, hyp_one, &w);
	guid_map_free(&ports);
	if (w.n > max)
		log_warn("%zu registered hypervisors; only %zu are told of a vGUID's move",
			 w.n, max);
	return w.n < max ? w.n : max;
}

/* ---- signalling ---- */

struct sig {
	struct sm *sm;
	const uint32_t *hyp;
	uint32_t dst_pi;
	struct repath_params rp;
};

static void gid_of(uint64_t prefix, uint64_t guid, uint8_t gid[16])
{
	sa_put64(gid, prefix);
	sa_put64(gid + 8, guid);
}

/* One repath 69 to hypervisor h: the path from its PF to the VM's new LID. */
static int sig_notify(void *ctx, size_t h, uint64_t vguid, uint32_t lid)
{
	struct sig *s = ctx;
	struct sm *sm = s->sm;
	const struct fabric *f = &sm->sub.model->f;
	uint32_t src = s->hyp[h];
	struct prd_change c = { .src = src, .dst = s->dst_pi,
				.slid = f->ports[src].lid, .dlid = lid,
				.kind = PRD_REPATH };
	struct notice_path np;
	repath_record(&s->rp, f, &sm->sub.lft, &c, &np);
	gid_of(s->rp.subnet_prefix, vguid, np.dgid);	/* the VM, not its PF */
	np.flags |= NPATH_VGUID;
	struct notice nt;
	notice_init_sm(&nt, TRAP_REPATH, s->rp.sm_lid, s->rp.sm_gid);
	notice_set_path(&nt, &np);
	return notifier_publish_to(sm->notify, f->ports[src].lid, &nt, 0);
}

/* The P_Key and SL of a record: the SA's, on the daemon's model. */
static void sig_part(void *ctx, uint32_t src, uint32_t dst, uint16_t *pkey,
		     uint8_t *sl)
{
	struct sm *sm = ctx;
	const struct fabric *f = &sm->sub.model->f;
	int fits = sm->parts.n_parts && sm->parts.n_ports == f->n_ports;
	sa_path_part(fits ? &sm->parts : NULL, &sm->sub.lft, src, dst, pkey, sl);
}

/* set_guid (vguid at LID lid on PF port dst_pi) and its notices. */
static void set_guid(struct sm *sm, uint64_t vguid, uint32_t lid,
		     uint32_t dst_pi, struct vmshared_result *res)
{
	struct vguid_table *t = table(sm);
	memset(res, 0, sizeof(*res));
	res->action = -1;
	if (!t)
		return;
	uint32_t *hyp = calloc(HYP_MAX, sizeof(*hyp));
	size_t n = hyp ? vmshared_hypervisors(sm, hyp, HYP_MAX) : 0;
	struct sig s = { .sm = sm, .hyp = hyp, .dst_pi = dst_pi };
	s.rp.mode = REPATH_ONLY;
	s.rp.sm_lid = (uint16_t)sm->sub.sm_lid;
	s.rp.subnet_prefix = sm->cfg.subnet_prefix;
	s.rp.pkey = 0xffff;	/* the default partition, as the SA answers; */
	s.rp.part = sig_part;	/* with partitions, the pair's */
	s.rp.part_ctx = sm;
	const struct sa_view *view = sa_get_view(sm);
	s.rp.ltv = view ? view->ltv : (uint8_t)sm->cfg.subnet_timeout;
	gid_of(sm->cfg.subnet_prefix, sm->tr.port_guid, s.rp.sm_gid);
	struct vguid_out o = { &s, sig_notify };
	struct vguid_stats st = { 0 };
	res->action = vguid_set_signal(t, vguid, lid, now_s(),
				       sm->notify ? n : 0, &o, &st);
	res->notices = st.notices;
	res->reports = st.reports;
	res->hypervisors = (uint32_t)n;
	free(hyp);
	log_notice("vGUID 0x%016" PRIx64 " at LID %u: %s; %u repath notices to %zu registered hypervisors (%" PRIu64 " Reports)",
		   vguid, lid, vguid_action_name((enum vguid_action)res->action),
		   res->notices, n, res->reports);
}

static void delete_guid(struct sm *sm, uint64_t vguid, uint32_t lid)
{
	struct vguid_table *t = table(sm);
	if (!t || vguid_delete(t, vguid, lid, now_s()) < 0)
		log_err("vGUID 0x%016" PRIx64 ": out of memory; its next set sends no notice",
			vguid);
}

/*
 * Shared-LID VM vguid was created or moved to hypervisor hyp_guid, or
 * went (hyp_guid 0): the file follows (save_soon), the SA's view at once
 * (one VM, not a publish of the model), and the multicast trees when the
 * vGUID is a group's member (it is at its new PF, or gone); otherwise
 * only the trees' map of members to ports is rebuilt, at the next run.
 */
static void changed(struct sm *sm, uint64_t vguid, uint64_t hyp_guid)
{
	save_soon(sm);
	if (hyp_guid)
		sa_shared_vm_set(sm, vguid, hyp_guid);
	else
		sa_shared_vm_drop(sm, vguid);
	if (!mc_is_member(&sm->mc, vguid)) {
		mcast_sm_forget_ports(sm);
		return;
	}
	mcast_sm_forget_trees(sm);
	mcast_sm_changed(sm);
}

/* The PF port of vSwitch hyp_guid in the model, with a LID; FAB_NONE with err. */
static uint32_t pf_of(struct sm *sm, uint64_t hyp_guid, char *err, size_t errlen)
{
	const struct fabric *f = &sm->sub.model->f;
	uint32_t vs = fabric_find_node(f, hyp_guid);
	uint32_t pf = vs != FAB_NONE && fabric_is_vswitch(f, vs) ?
		      fabric_vswitch_pf(f, vs) : FAB_NONE;
	if (pf == FAB_NONE || !f->ports[pf].lid) {
		snprintf(err, errlen, "hypervisor 0x%016" PRIx64 " has no PF with a LID",
			 hyp_guid);
		return FAB_NONE;
	}
	return pf;
}

int vmshared_create(struct sm *sm, struct vm *v, struct vmshared_result *res,
		    char *err, size_t errlen)
{
	uint32_t pf = pf_of(sm, v->hyp_guid, err, errlen);
	if (pf == FAB_NONE)
		return -1;
	v->shared = 1;
	v->vf = -1;
	v->vf_guid = 0;
	v->prepared = 0;
	v->lid = sm->sub.model->f.ports[pf].lid;
	if (!vm_add(&sm->vms, v)) {
		snprintf(err, errlen, "a VM of that name or vGUID exists, or out of memory");
		return -1;
	}
	changed(sm, v->vguid, v->hyp_guid);
	set_guid(sm, v->vguid, v->lid, pf, res);
	return 0;
}

int vmshared_move(struct sm *sm, struct vm *v, uint64_t dst_hyp,
		  struct vmshared_result *res, char *err, size_t errlen)
{
	uint32_t pf = pf_of(sm, dst_hyp, err, errlen);
	if (pf == FAB_NONE)
		return -1;
	delete_guid(sm, v->vguid, v->lid);
	vm_move(&sm->vms, v, dst_hyp);
	v->lid = sm->sub.model->f.ports[pf].lid;
	uint64_t vguid = v->vguid;
	uint32_t lid = v->lid;
	changed(sm, vguid, dst_hyp);
	set_guid(sm, vguid, lid, pf, res);
	return 0;
}

void vmshared_remove(struct sm *sm, struct vm *v)
{
	delete_guid(sm, v->vguid, v->lid);
	log_notice("vm '%s' (shared LID %u, vGUID 0x%016" PRIx64 ") removed",
		   v->name, v->lid, v->vguid);
	uint64_t vguid = v->vguid;
	vm_del(&sm->vms, v);
	changed(sm, vguid, 0);
}

int vmshared_room(struct sm *sm, uint64_t hyp_guid, unsigned add, unsigned moved,
		  uint64_t who, char *err, size_t errlen)
{
	struct vm_limits lim = { (uint32_t)sm->cfg.vm_max,
				 (uint32_t)sm->cfg.vm_max_per_hyp };
	char why[160];
	if (vm_room(&sm->vms, hyp_guid, add, moved, &lim, why, sizeof(why)) == 0)
		return 0;
	snprintf(err, errlen, "refused: %s", why);
	log_limited_by(1, 1000, LOG_NOTICE,
		       "VM create or move from 0x%016" PRIx64 " refused: %s (%" PRIu64 " refused so far)",
		       who, why, sm->vms.refused_total + sm->vms.refused_hyp);
	return -1;
}

/* ---- the SA front end (GUIDInfoRecord Set / Delete) ---- */

static int guid_is_port(const struct fabric *f, uint64_t g)
{
	for (uint32_t i = 0; i < f->n_ports; i++)
		if (f->ports[i].guid == g && fabric_is_endport(f, i))
			return 1;
	return 0;
}

int vmshared_sa_request(struct sm *sm, uint64_t port_guid, const uint64_t *g,
			unsigned n, int del, char *err, size_t errlen)
{
	if (!sm->sub.model || sm->sw.activity != SM_IDLE || sm->vmop) {
		/*
		 * A sweep may have the routes on its thread and replace the
		 * model; a VM command holds the registry: the host asks again
		 * (ibsm-listen does at its next check).
		 */
		snprintf(err, errlen, "busy (a sweep or a VM command): ask again");
		return MAD_STS_BUSY;	/* IBA 13.4.7: busy, to be sent again */
	}
	const struct fabric *f = &sm->sub.model->f;
	uint32_t pf = FAB_NONE;
	for (uint32_t i = 0; i < f->n_ports && pf == FAB_NONE; i++)
		if (f->ports[i].guid == port_guid && fabric_is_endport(f, i))
			pf = i;
	int vf;
	uint32_t vs = pf != FAB_NONE ? fabric_vswitch_of(f, pf, &vf) : FAB_NONE;
	if (vs == FAB_NONE || vf != -1) {
		snprintf(err, errlen, "0x%016" PRIx64 " is no hypervisor's PF", port_guid);
		return SA_STS_REQ_INVALID;
	}
	uint64_t hyp = f->nodes[vs].guid;
	/* all or nothing: every vGUID checked before any changes */
	unsigned mine = 0, fresh = 0, moving = 0;
	for (unsigned k = 0; k < n; k++) {
		const struct vm *v = vm_find_vguid(&sm->vms, g[k]);
		if (v && !v->shared) {
			snprintf(err, errlen, "vGUID 0x%016" PRIx64 " is VM '%s''s, which has a LID of its own",
				 g[k], v->name);
			return SA_STS_REQ_INVALID;
		}
		if (!v && !del && guid_is_port(f, g[k])) {
			snprintf(err, errlen, "0x%016" PRIx64 " is a port GUID", g[k]);
			return SA_STS_REQ_INVALID;
		}
		mine += v && v->hyp_guid == hyp;
		/* a vGUID twice in one Set counts twice: refused early, never late */
		fresh += !v;
		moving += v && v->hyp_guid != hyp;
	}
	if (del && !mine) {
		snprintf(err, errlen, "none of those vGUIDs is on this hypervisor");
		return SA_STS_NO_RECORDS;
	}
	if (!del && (fresh || moving) &&
	    vmshared_room(sm, hyp, fresh, moving, port_guid, err, errlen) < 0)
		return SA_STS_NO_RESOURCES;
	for (unsigned k = 0; k < n; k++) {
		struct vm *v = vm_find_vguid(&sm->vms, g[k]);
		struct vmshared_result res;
		if (del) {
			if (v && v->hyp_guid == hyp)
				vmshared_remove(sm, v);
		} else if (!v) {
			struct vm nv;
			memset(&nv, 0, sizeof(nv));
			snprintf(nv.name, sizeof(nv.name), "vg-%016" PRIx64, g[k]);
			nv.vguid = g[k];
			nv.hyp_guid = hyp;
			nv.weight = 1;
			if (vmshared_create(sm, &nv, &res, err, errlen) < 0)
				return SA_STS_NO_RESOURCES;	/* a name clash, or ENOMEM */
		} else if (v->hyp_guid != hyp) {
			if (vmshared_move(sm, v, hyp, &res, err, errlen) < 0)
				return SA_STS_NO_RESOURCES;
		}
	}
	return 0;
}
