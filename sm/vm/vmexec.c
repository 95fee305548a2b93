/*
 * A VM's writes on the live fabric: see vmexec.h.
 */
#include "sm/vm/vmexec.h"
#include "routing/xlft.h"

#include <event2/event.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/mcast/mcast_sm.h"
#include "sm/write/migcount.h"
#include "sm/write/plan_lft.h"
#include "sm/write/plan_sweep.h"
#include "sm/write/program.h"
#include "sm/discover/xlid_sm.h"
#include "sm/base/clock.h"
#include "sm/apply.h"

struct vmexec {
	struct sm *sm;
	struct plan plan;
	struct program *pr;
	struct program_params pp;
	struct migration m;
	struct lft_tables t;
	struct vm_port_set ps[VMEXEC_MAX_PORTS];
	unsigned n_ps;
	int last_wave;		/* the activation follows it; -1: none */
	vmexec_done_fn done;
	void *arg;
	struct program_stats pst;
	int finished;
	uint64_t t0;
	struct event *ev;	/* done, from the loop */
};

int vmexec_busy(const struct sm *sm)
{
	return sm->vmexec != NULL;
}

unsigned vmexec_port_sets(const struct migration *m, struct vm_port_set *ps)
{
	switch (m->kind) {
	case MIG_BOOT:
		ps[0] = (struct vm_port_set){ m->vm_pi, m->vm_lid, 1, 0 };
		return 1;
	case MIG_DROP:
		if (m->vm_pi == FAB_NONE)
			return 0;
		ps[0] = (struct vm_port_set){ m->vm_pi, 0, 0, 0 };
		return 1;
	default:
		break;
	}
	/*
	 * The destination VF's LID before any switch sends the VM's LID
	 * towards it (wave 0, the LFT order from 1); the source's after
	 * the last switch that may send it there (src_wave).
	 */
	if (m->scheme == MIG_DYNAMIC) {
		ps[0] = (struct vm_port_set){ m->dst_pi, m->vm_lid, 1, 0 };
		ps[1] = (struct vm_port_set){ m->vm_pi, 0, 0, m->src_wave };
	} else {
		ps[0] = (struct vm_port_set){ m->dst_pi, m->vm_lid, 0, 0 };
		ps[1] = (struct vm_port_set){ m->vm_pi, m->dst_lid, 0, m->src_wave };
	}
	return 2;
}

static void vx_free(struct vmexec *vx)
{
	if (vx->ev)
		event_free(vx->ev);
	program_free(vx->pr);
	plan_free(&vx->plan);
	migration_free(&vx->m);
	lft_tables_free(&vx->t);
	free(vx);
}

/* A port's LID in the model; lid 0 makes it an idle VF (no LID). */
static void set_port_lid(struct fabric *f, uint32_t pi, uint32_t lid)
{
	f->ports[pi].lid = lid;
	if (lid)
		f->ports[pi].flags &= (uint8_t)~FPORT_NOLID;
	else
		f->ports[pi].flags |= FPORT_NOLID;
}

/* The end of the run: the model follows on success; done last. */
static void vx_finish(struct vmexec *vx)
{
	struct sm *sm = vx->sm;
	const struct program_stats *s = &vx->pst;
	struct vmexec_stats st = {
		.switches_marked = vx->m.switches_marked,
		.switches_written = vx->m.switches_written,
		.lft_blocks = vx->m.lft_blocks,
		.vswitch_blocks = vx->m.vswitch_blocks,
		.xlft_blocks = vx->m.xlft_blocks,
		.other_smps = s->portinfo_sets + s->switchinfo_sets,
		.failed = s->failed,
		.stopped = s->stopped,
		.plan_us = vx->m.plan_us,
		.commit_us = clock_us() - vx->t0,
		.order = vx->m.order,
	};
	int ok = vx->finished && !s->failed && !s->stopped && !s->cancelled;
	vmexec_done_fn done = vx->done;
	void *arg = vx->arg;

	if (ok) {
		struct fabric *f = &sm->sub.model->f;
		lft_tables_free(&sm->sub.lft);
		sm->sub.lft = vx->t;
		memset(&vx->t, 0, sizeof(vx->t));
		for (unsigned i = 0; i < vx->n_ps; i++)
			set_port_lid(f, vx->ps[i].pi, vx->ps[i].lid);
		if (fabric_index_lids(f) < 0)
			log_err("out of memory indexing the LIDs after a VM's writes");
		sm_qos_apply(sm);	/* a LID that moved: its new leaf's SLs */
		mcast_sm_forget_trees(sm);	/* a VM's port may have moved: */
		mcast_sm_changed(sm);		/* its groups' trees follow it */
	}
	log_notice("VM writes %s: %u LFT blocks on %u switches, %u on vSwitches,"
		   " %u other SMPs, %u failed%s, %llu us",
		   ok ? "done" : "FAILED", st.lft_blocks, st.switches_written,
		   st.vswitch_blocks, st.other_smps, st.failed,
		   st.stopped ? " (stopped)" : "",
		   (unsigned long long)st.commit_us);
	sm->vmexec = NULL;
	vx_free(vx);
	done(sm, arg, ok, &st);
	/* a heavy sweep that waited for us (daemon.c) goes now */
	if (sm->sw.heavy_wanted && !sm->vmexec)
		sweeper_request_heavy(sm, sm->sw.heavy_reason);
}

static void on_event(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	vx_finish(arg);
}

/* The executor is done (maybe before program_run returned): finish from the loop. */
static void on_done(void *arg, const struct program_stats *s)
{
	struct vmexec *vx = arg;
	struct timeval zero = { 0, 0 };
	vx->pst = *s;
	vx->finished = 1;
	if (!vx->ev || event_add(vx->ev, &zero) < 0)
		log_err("VM writes: cannot schedule the end of the run");
}

/*
 * The last wave of writes is over: ACTIVE on what went ARMED, encoded
 * with the sets' LIDs in the model for the time of the encoding (the
 * model keeps the old ones until the run succeeds).
 */
static void on_wave(void *arg, struct program *pr, int wave)
{
	struct vmexec *vx = arg;
	struct fabric *f = &vx->sm->sub.model->f;
	if (wave != vx->last_wave || vx->plan.sealed)
		return;
	if (!program_get_stats(pr)->failed) {
		struct fab_port *p;
		uint32_t lid[VMEXEC_MAX_PORTS];	/* the old LIDs and flags */
		uint8_t flags[VMEXEC_MAX_PORTS];
		unsigned n = vx->n_ps;
		for (unsigned i = 0; i < n; i++) {
			p = &f->ports[vx->ps[i].pi];
			lid[i] = p->lid;
			flags[i] = p->flags;
			set_port_lid(f, vx->ps[i].pi, vx->ps[i].lid);
		}
		if (plan_sweep_activation(&vx->plan, wave + 1, vx->sm->sub.model,
					  &vx->pp) < 0)
			log_err("out of memory planning a VF's activation");
		while (n--) {
			p = &f->ports[vx->ps[n].pi];
			p->lid = lid[n];
			p->flags = flags[n];
		}
	}
	plan_seal(&vx->plan);
}

/*
 * The PortInfo of ps's port (and, when it is to be activated, of the
 * vSwitch port across the link), encoded from the model with the new LID
 * in place for the time of the encoding: the model keeps the old LID
 * until the run succeeds.
 */
static int plan_port_set(struct vmexec *vx, const struct vm_port_set *ps)
{
	struct sm *sm = vx->sm;
	struct discovery *d = sm->sub.model;
	struct fab_port *p = &d->f.ports[ps->pi];
	uint32_t lid = p->lid;
	uint8_t flags = p->flags;
	int rc;

	set_port_lid(&d->f, ps->pi, ps->lid);
	rc = plan_sweep_port(&vx->plan, ps->wave, d, sm->sub.cache, &vx->pp,
			     ps->pi);
	/* extended LIDs: the VF answers to its new vLID, or to none */
	if (rc == 0 && d->f.xlid_mode && (fabric_is_vlid(lid) || fabric_is_vlid(ps->lid)) &&
	    xlid_port_ok(&d->f, ps->pi))
		rc = plan_xlid_port(&vx->plan, ps->wave, &d->f, ps->pi,
				    fabric_is_vlid(ps->lid) ? ps->lid : 0);
	if (rc == 0 && ps->activate && p->remote != FAB_NONE)
		rc = plan_sweep_port(&vx->plan, ps->wave, d, sm->sub.cache,
				     &vx->pp, p->remote);
	p->lid = lid;
	p->flags = flags;
	return rc;
}

/*
 * Extended LIDs: m's secondary-LFT writes (migrate_plan_x*), in their
 * waves, after every capable switch's XLIDCap in wave 0 (a vSwitch given
 * its first vLID, or tables grown past Top, need a new one; the device
 * cache leaves out the others).
 */
static int plan_x(struct vmexec *vx, const struct lft_tables *t,
		  const struct migration *m)
{
	const struct fabric *f = &vx->sm->sub.model->f;
	if (!m->n_xw)
		return 0;
	for (uint32_t r = 0; r < t->n_sw; r++)
		if (plan_xlid_cap(&vx->plan, 0, f, t, t->sw_node[r]) < 0)
			return -1;
	for (uint32_t i = 0; i < m->n_xw; i++) {
		const struct mig_write *x = &m->xw[i];
		const uint8_t *blk = xlft_block(t, x->row, x->block);
		uint8_t mix[SMP_DATA_SIZE];
		if (!x->mixed || !blk) {
			if (plan_xlid_block(&vx->plan, x->wave, t, x->row, x->block) < 0)
				return -1;
			continue;
		}
		migrate_payload(m, x, blk, mix);	/* entries not yet due as before */
		if (plan_xlid_data(&vx->plan, x->wave, t->sw_node[x->row], x->block, mix) < 0)
			return -1;
	}
	return 0;
}

int vmexec_start(struct sm *sm, struct migration *m, struct lft_tables *t,
		 const struct vm_port_set *ps, unsigned n_ps,
		 vmexec_done_fn done, void *arg, char *err, size_t errlen)
{
	struct vmexec *vx;
	int activate = 0;

	if (sm->vmexec) {
		snprintf(err, errlen, "another VM operation is being written");
		return -1;
	}
	if (sm->state != SMS_MASTER || !sm->sub.model || !sm->txn) {
		snprintf(err, errlen, "not the master of a configured subnet");
		return -1;
	}
	if (sm->sw.activity == SM_HEAVY_SWEEP) {
		snprintf(err, errlen, "a heavy sweep is running; try again");
		return -1;
	}
	if (sm->sw.activity == SM_HANDOVER_WAIT) {
		snprintf(err, errlen, "handing the subnet over to another SM");
		return -1;
	}
	if (t->n_sw != sm->sub.lft.n_sw) {
		snprintf(err, errlen, "the tables are not the subnet's");
		return -1;
	}
	if (n_ps > VMEXEC_MAX_PORTS) {
		snprintf(err, errlen, "%u port sets, at most %u", n_ps,
			 VMEXEC_MAX_PORTS);
		return -1;
	}
	for (unsigned i = 0; i < n_ps; i++) {
		if (ps[i].pi >= sm->sub.model->f.n_ports ||
		    ps[i].wave >= MIG_MAX_WAVES) {
			snprintf(err, errlen, "port set %u: no such port or wave", i);
			return -1;
		}
		activate |= ps[i].activate;
	}
	if (!(vx = calloc(1, sizeof(*vx))))
		goto nomem;
	vx->sm = sm;
	vx->done = done;
	vx->arg = arg;
	vx->last_wave = -1;
	vx->t0 = clock_us();
	sm_program_params(sm, 0, &vx->pp);
	plan_init(&vx->plan);
	vx->plan.stop_on_failure = 1;
	vx->ev = event_new(sm->base, -1, 0, on_event, vx);
	if (!vx->ev)
		goto nomem_vx;
	memcpy(vx->ps, ps, (size_t)n_ps * sizeof(*ps));
	vx->n_ps = n_ps;
	if (sm->cfg.lft_unordered)
		migrate_one_wave(m);	/* the tests' writer before the order */
	/* the plan points to t: t's arrays move into vx now, not later */
	if (mig_plan_build(&vx->plan, sm->sub.model, sm->sub.cache, t, m,
			   MIGPLAN_RAISE_TOP) < 0)
		goto nomem_vx;
	if (plan_x(vx, t, m) < 0)
		goto nomem_vx;
	for (unsigned i = 0; i < n_ps; i++)
		if (plan_port_set(vx, &ps[i]) < 0)
			goto nomem_vx;
	vx->t = *t;
	vx->m = *m;
	plan_set_tables(&vx->plan, &vx->t);
	memset(t, 0, sizeof(*t));
	memset(m, 0, sizeof(*m));
	if (activate && vx->plan.n_waves) {
		vx->last_wave = (int)vx->plan.n_waves - 1;
		plan_close_wave(&vx->plan, vx->last_wave);
	} else {
		plan_seal(&vx->plan);
	}
	sm->vmexec = vx;
	const struct program_hooks h = { .arg = vx, .wave_done = on_wave };
	vx->pr = program_run(sm->txn, sm->sub.model, &vx->plan, sm->sub.cache,
			     vx->pp.extra_rounds, &h, on_done, vx);
	if (!vx->pr) {
		/* nothing was sent: give back what was taken */
		*t = vx->t;
		*m = vx->m;
		memset(&vx->t, 0, sizeof(vx->t));
		memset(&vx->m, 0, sizeof(vx->m));
		sm->vmexec = NULL;
		goto nomem_vx;
	}
	char how[256];
	lft_order_describe(&vx->m.order, how, sizeof(how));
	log_info("VM writes: %u LFT blocks (%u on vSwitches), %u secondary, %u port sets; %s",
		 vx->m.lft_blocks + vx->m.vswitch_blocks, vx->m.vswitch_blocks,
		 vx->m.xlft_blocks, n_ps, how);
	return 0;
nomem_vx:
	vx_free(vx);
nomem:
	snprintf(err, errlen, "out of memory");
	return -1;
}

void vmexec_abort(struct sm *sm)
{
	struct vmexec *vx = sm->vmexec;
	if (!vx)
		return;
	if (!vx->finished)	/* the answers never came: what was sent stays unknown */
		vx->pst = *program_get_stats(vx->pr);
	vx->pst.cancelled = 1;
	vx_finish(vx);
}
