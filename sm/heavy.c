/*
 * The heavy sweep (see heavy.h): discover, elect (sm/smstate.c), LIDs,
 * extended LIDs, routes on a worker thread, the write plan, the writes,
 * the SA's view, the notices, the watcher told.
 */
#include "sm/heavy.h"

#include "mad/txn.h"
#include "sm/errors.h"
#include "sm/jobs.h"
#include "sm/smstate.h"
#include "sm/sweeper.h"
#include "sm/daemon.h"
#include "sm/dftree.h"
#include "sm/perfmgr.h"
#include <errno.h>
#include <stdarg.h>
#include <infiniband/mad.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include "sm/sa/notices.h"
#include "sm/discover/changes.h"
#include "sm/hookevents.h"
#include "sm/base/log.h"
#include "sm/ctl/metrics.h"
#include "sm/sa/paths.h"
#include "sm/route.h"
#include "sm/sa/sa_server.h"
#include "sm/sdnotify.h"
#include "sm/model/vswitch.h"
#include "sm/discover/xlid_sm.h"
#include "sm/write/mkeytake.h"
#include "routing/xlft.h"
#include "sm/base/clock.h"
#include "sm/apply.h"
#include "sm/ctl/control.h"

static void route_and_program(struct sm *sm, int first,
			      const struct fabric *prev, int adopted);

/* ---- finishing ---- */

void sm_print_summary(const struct sweep_summary *s, const char *state)
{
	printf("subnet up: switches=%u cas=%u ports=%u lids=%u max_lid=%u routing=%s "
	       "sweep_ms=%llu route_ms=%llu mads_sent=%llu mad_timeouts=%llu "
	       "mad_retries=%llu mad_errors=%llu unresponsive=%u lft_blocks=%u "
	       "portinfo_sets=%u state=%s xlid=%s vlids=%u\n",
	       s->switches, s->cas, s->ports, s->lids, s->max_lid,
	       s->routing ? s->routing : "none",
	       (unsigned long long)s->sweep_ms, (unsigned long long)s->route_ms,
	       (unsigned long long)s->mads_sent,
	       (unsigned long long)s->mad_timeouts,
	       (unsigned long long)s->mad_retries,
	       (unsigned long long)s->mad_errors, s->unresponsive,
	       s->prog.lft_blocks, s->prog.portinfo_sets, state,
	       s->xlid_mode ? "extended" : "legacy", s->vlids);
	fflush(stdout);
}

static void sweep_counters(struct sm *sm, struct sweep_summary *s)
{
	const struct txn_stats *st = txn_get_stats(sm->txn);
	s->mads_sent = st->all.sent - sm->sweep.sweep_base.sent;
	s->mad_timeouts = st->all.timeouts - sm->sweep.sweep_base.timeouts;
	s->mad_retries = st->all.retries - sm->sweep.sweep_base.retries;
	s->mad_errors = st->all.errors - sm->sweep.sweep_base.errors;
	s->sweep_ms = clock_ms() - sm->sweep.sweep_start_ms;
}

/* ---- heavy sweep ---- */

void sm_sweep_abandon(struct sm *sm)
{
	xprobe_abandon(sm->sweep.xprobe);
	sm->sweep.xprobe = NULL;
	sm->sweep.xprobed = 0;
	mktake_abandon(sm->sweep.mktake);
	sm->sweep.mktake = NULL;
	sm->sweep.mktaken = 0;
	subnet_building(&sm->sub, NULL);
	discovery_free(sm->sweep.disc);
	sm->sweep.disc = NULL;
	sm->sw.activity = SM_IDLE;
	jobs_abandon(sm);	/* no longer master: the jobs are the next master's */
}

/*
 * When to try again a sweep that ports with another SM's M_Key stopped
 * (sm/model/mkeyrec.h): at the sweep interval, or when the first of their
 * protections should end if that is sooner (without light sweeps: then);
 * at least a second (sweeper_retry_in), as any failed sweep.
 */
static uint64_t mkey_retry_ms(const struct sm *sm)
{
	uint64_t first, ms = sm->cfg.sweep_interval_s > 0 ?
			     (uint64_t)sm->cfg.sweep_interval_s * 1000 : 0;
	if (!mkrec_refusing(&sm->sub.rec, &first, NULL))
		return 0;
	uint64_t now = clock_ms();
	if (first > now && (!ms || first - now < ms))
		ms = first - now;
	return ms;
}

/* A heavy sweep that cannot go on: the last model stays; retried in 1 s
 * (mkey_retry_ms() when ports refuse the SM's keys) unless the watcher
 * ends the run. */
static void sweep_failed(struct sm *sm, const char *why)
{
	/* retried every second: a few lines a minute, then a count */
	log_limited_by(3, 60000, LOG_ERROR, "%s", why);
	sm->sweep.heavy_failed++;
	sm_sweep_abandon(sm);
	if (sm->watch && sm->watch->failed && sm->watch->failed(sm, sm->watch->arg))
		return;
	uint64_t cut_ms = election_cut_retry_ms(sm);	/* M_Key cut short: the sweep interval */
	if (cut_ms)
		sweeper_retry_after(sm, cut_ms);
	else
		sweeper_retry_in(sm, mkey_retry_ms(sm));
}

/* Ports refusing the SM's keys: a few lines a minute. */
static void mkey_report(const struct sm *sm)
{
	uint64_t first, last;
	uint32_t n = mkrec_refusing(&sm->sub.rec, &first, &last);
	if (!n)
		return;
	uint64_t now = clock_ms();
	if (!last)
		log_limited_by(4, 60000, LOG_WARN, "M_Key: %u port%s refuse%s the SM's SMPs "
			       "(another SM's key) with a lease of 0: never manageable until "
			       "reset (ibsmctl status: m_key)", n, n == 1 ? "" : "s",
			       n == 1 ? "s" : "");
	else
		log_limited_by(4, 60000, LOG_WARN, "M_Key: %u port%s refuse%s the SM's SMPs "
			       "(another SM's key): left out until their lease ends, in about "
			       "%llu s (ibsmctl status: m_key)", n, n == 1 ? "" : "s",
			       n == 1 ? "s" : "",
			       (unsigned long long)(last > now ? (last - now + 999) / 1000 : 0));
}

static void on_discovered(void *arg, struct discovery *d)
{
	struct sm *sm = arg;
	if (d->cancelled) {
		return;
	}
	if (d->failed) {
		/*
		 * With M_Key: most likely its key (levels 2 and 3 drop the
		 * Get).  An SM that follows the master its port names is done
		 * (smstate_own_port_refused); else, the first time, the ports
		 * beyond get a Get each to start their leases with its own.
		 */
		int followed = smstate_own_port_refused(sm);
		if (sm->sub.mk.have_secret && !followed) {
			int first = !mkrec_is_refusing(&sm->sub.rec, sm->sub.local_guid);
			mkrec_refused(&sm->sub.rec, sm->sub.local_guid, 2, clock_ms(),
				      (uint64_t)sm->sub.mk.lease_s * 1000);
			if (first)
				mkprobe_local(sm->txn, &sm->sub.nbrs, &sm->sub.mk, &sm->sub.rec,
					      sm->sub.local_guid);
		}
		mkey_report(sm);
		if (!followed)
			sweep_failed(sm, "discovery failed: the local port does not answer");
		return;
	}
	log_info("discovery: %u nodes, %u MADs in %llu ms", d->f.n_nodes,
		 d->mads, (unsigned long long)(clock_ms() - sm->sweep.sweep_start_ms));
	if (discovery_compact(d) < 0) {
		log_err("out of memory after discovery");
		sm_stop(sm, SM_EXIT_RESOURCES);
		return;
	}
	if (d->f.sm_node == FAB_NONE ||
	    !(d->f.ports[fabric_port(&d->f, d->f.sm_node, d->f.sm_port)].flags & FPORT_PRESENT)) {
		/* no election, no configuration without our own port */
		if (!smstate_own_port_refused(sm))
			sweep_failed(sm, "heavy sweep failed: the SM's own port did not answer");
		return;
	}
	smstate_discovered(sm);
}

void finish_sweep(struct sm *sm)
{
	sm->sweep.last_sweep_time = (uint64_t)time(NULL);
	metrics_sweep_done(sm->metrics);
	sweeper_resume(sm);
}

static void on_programmed(void *arg, const struct program_stats *ps)
{
	struct sm *sm = arg;
	struct sweep_summary *s = &sm->sweep.last;
	if (ps->cancelled)
		return;
	if (ps->unrouted) {	/* sm_route said why; nothing was activated */
		sdn_status(NULL, "routing failed: nothing activated (see the log)");
		if (!sm->watch || !sm->watch->failed ||
		    !sm->watch->failed(sm, sm->watch->arg))
			finish_sweep(sm);
		return;
	}
	/* sm->sweep.prog is freed when the next one starts: we may be inside program_start */
	s->prog = *ps;
	s->unresponsive = sm->sub.model->unresponsive + ps->failed_ports;
	sweep_counters(sm, s);
	s->valid = 1;
	s->when = (uint64_t)time(NULL);
	sm->sweep.heavy_sweeps++;
	jobs_programmed(sm, !ps->failed);
	sa_publish(sm, &sm->sub.model->f, &sm->sub.lft);
	metrics_heavy_sweep_done(sm->metrics);
	sa_mcast_prune(sm);
	sm_print_summary(s, sm_state_name(sm->state));
	log_notice("heavy sweep done in %llu ms: %u LFT blocks, %u PortInfo, %u SwitchInfo, %u P_Key writes, %u SL2VL, %u VLArb, %u MFT, %u ports activated%s",
		   (unsigned long long)s->sweep_ms, ps->lft_blocks,
		   ps->portinfo_sets, ps->switchinfo_sets, ps->pkey_sets,
		   ps->sl2vl_sets, ps->vlarb_sets, ps->mft_sets,
		   ps->activations, ps->failed ? " (some writes failed)" : "");
	sdn_state(&sm->notified_ready, "MASTER", sm->sweep.heavy_sweeps, &sm->sweep.last);
	if (sm->watch && sm->watch->up && sm->watch->up(sm, ps, sm->watch->arg)) {
		sm->sw.activity = SM_IDLE;	/* a sweep it asked for may start */
		return;
	}
	notices_programmed(sm);
	sm_paths_rerouted(sm);
	if (ps->failed_ports)
		sweeper_request_heavy(sm, "some writes failed");
	if (sm->sweep.trap_resweep) {
		/* it may have read that port before it changed (an SM's IsSM) */
		sm->sweep.trap_resweep = 0;
		sweeper_request_heavy(sm, "a trap 128/144 came during the first sweep");
	}
	finish_sweep(sm);
}

static void on_adopted(void *arg, int rc, struct lft_tables *t,
		       const struct adopt_stats *st);
static void on_xprobed(void *arg, struct xprobe *x);

/* The devices answered what the configuration waited for: it goes on. */
static void configure_resume(struct sm *sm)
{
	if (sm->stopping || !sm->sweep.disc)
		return;
	if (sm->state != SMS_MASTER) {
		/* mastership went while the devices answered: nothing to configure */
		sm_sweep_abandon(sm);
		return;
	}
	sm_configure(sm);
}
static int xlid_mode(struct sm *sm, struct fabric *f);

/* The devices answered XLIDCap (or never will): configure. */
static void on_xprobed(void *arg, struct xprobe *x)
{
	struct sm *sm = arg;
	const struct xprobe_stats *st = xprobe_stats(x);
	log_info("extended LIDs: %u devices asked, %u known, %u capable, %u not",
		 st->asked, st->known, st->capable, st->lacking);
	sm->sweep.xprobe = NULL;
	xprobe_free(x);
	configure_resume(sm);
}

/*
 * Decides (first configuration) or keeps the LID mode; reports devices
 * lacking the extension.  -1: extended_lids on and a device lacks it
 * (logged, the SM stops with SM_EXIT_FAILURE).
 */
static int xlid_mode(struct sm *sm, struct fabric *f)
{
	char why[768];
	uint32_t k = 0;
	int was = sm->sweep.xlid_decided;
	if (sm->cfg.extended_lids == TRI_OFF) {
		sm->sweep.xlid_decided = 0;
		f->xlid_mode = 0;
		return 0;
	}
	if (xlid_decide(f, sm->cfg.extended_lids, &sm->sweep.xlid_decided,
			sm->sweep.xlid_lacking, sizeof(sm->sweep.xlid_lacking), &k, why,
			sizeof(why)) < 0) {
		log_err("%s", why);
		return -1;
	}
	sm->sweep.last.xlid_lacking = k;
	if (was < 0 && !f->xlid_mode && k)
		log_notice("extended LIDs: legacy 16-bit mode: %u device%s lack%s the extension: %s",
			   k, k == 1 ? "" : "s", k == 1 ? "s" : "", sm->sweep.xlid_lacking);
	else if (was < 0 && f->xlid_mode)
		log_notice("extended LIDs: every device can: VMs get vLIDs from 0x%x",
			   FAB_VLID_BASE);
	else if (f->xlid_mode && k)
		log_warn("extended LIDs: %u device%s without the extension (VMs behind them stay on pLIDs): %s",
			 k, k == 1 ? "" : "s", sm->sweep.xlid_lacking);
	return 0;
}

/*
 * What the take-over did, in the log; x freed.  Links it found with a
 * guessed key are saved in the map and seen by a heavy sweep after this
 * one.
 */
static void mkey_taken(struct sm *sm, struct mktake *x)
{
	const struct mktake_stats *st = mktake_stats(x);
	if (st->taken || st->refused || st->silent || st->probed || st->link_tries)
		log_info("M_Key: %u ports taken over, %u refused the Set, %u never answered, "
			 "%u probed beyond them; %u links found in %u tries", st->taken,
			 st->refused, st->silent, st->probed, st->links, st->link_tries);
	if (st->links) {
		char err[512];
		if (sm->cfg.state_dir[0] &&
		    nbr_save(&sm->sub.nbrs, sm->cfg.state_dir, err, sizeof(err)) < 0)
			log_limited_by(2, 60000, LOG_WARN, "neighbour map not saved: %s", err);
		sweeper_request_heavy(sm, "M_Key: a new link found with its device's key");
	}
	mktake_free(x);
}

static void on_mktaken(void *arg, struct mktake *x)
{
	struct sm *sm = arg;
	sm->sweep.mktake = NULL;
	mkey_taken(sm, x);
	mkey_report(sm);
	configure_resume(sm);
}

/* Ports with another SM's key taken over, or left out; 1 while it runs. */
static int mkey_take(struct sm *sm)
{
	if (sm->sweep.mktaken)
		return 0;
	sm->sweep.mktaken = 1;
	struct mktake *x = mktake_start(sm->txn, sm->sweep.disc, &sm->sub.mk, &sm->sub.rec,
					&sm->sub.nbrs, (uint64_t)sm->sub.mk.lease_s * 1000,
					on_mktaken, sm);
	if (!x) {
		log_err("out of memory taking ports over");
		sm_stop(sm, SM_EXIT_RESOURCES);
		return 1;
	}
	if (!mktake_finished(x)) {
		sm->sweep.mktake = x;	/* on_mktaken() goes on */
		return 1;
	}
	mkey_taken(sm, x);
	return 0;
}

/* MASTER: LIDs, routes, writes on the discovery just made. */
void sm_configure(struct sm *sm)
{
	int fresh = !sm->sweep.mktaken;
	if (mkey_take(sm))
		return;
	if (fresh)
		mkey_report(sm);
	struct discovery *d = sm->sweep.disc;
	struct fabric *f = &d->f;
	/*
	 * Our own port left out of the model (it stopped answering during
	 * the sweep): nothing can be configured from it.  The sweep fails,
	 * the model and the subnet stay as they were, a new sweep follows.
	 */
	if (f->sm_node == FAB_NONE ||
	    !(f->ports[fabric_port(f, f->sm_node, f->sm_port)].flags & FPORT_PRESENT)) {
		sweep_failed(sm, "heavy sweep failed: the SM's own port did not answer");
		return;
	}
	/*
	 * Extended LIDs: the vSwitches marked, the devices that matter are
	 * asked (XLIDCap) before anything else; the configuration resumes
	 * from on_xprobed().
	 */
	struct vswitch_report vr0;
	if (!sm->sweep.xprobed && sm->cfg.extended_lids != TRI_OFF &&
	    (vswitch_mark(f, &sm->cfg, &vr0), xlid_probe_wanted(f, sm->cfg.extended_lids))) {
		xprobe_abandon(sm->sweep.xprobe);
		sm->sweep.xprobe = NULL;
		sm->sweep.xprobed = 1;
		/* plain hosts too unless legacy is decided: the SA's answer */
		struct xprobe *x = xprobe_start(sm->txn, f, sm->sub.model ?
						&sm->sub.model->f : NULL,
						sm->sweep.xlid_decided != 0, on_xprobed, sm);
		if (!x) {
			log_err("out of memory asking for extended LIDs");
			sm_stop(sm, SM_EXIT_RESOURCES);
			return;
		}
		if (!xprobe_finished(x)) {
			sm->sweep.xprobe = x;		/* on_xprobed() goes on */
			return;
		}
		xprobe_free(x);
	}
	sm->sweep.xprobed = 0;
	sm->sweep.mktaken = 0;
	int first = !sm->sweep.ever_master;
	sm->sweep.ever_master = 1;
	/* the new model replaces the old one, which the routing may repair from */
	struct discovery *old = subnet_take(&sm->sub, d);
	sm->sweep.disc = NULL;
	jobs_model_changed(sm);
	struct sweep_summary *s = &sm->sweep.last;
	memset(s, 0, sizeof(*s));
	/*
	 * vSwitches and VMs before the LIDs: idle VFs get none (dynamic), a
	 * VM's VF gets the VM's LID, the routing sees the VMs' weights.
	 */
	struct vswitch_report vr;
	vswitch_mark(f, &sm->cfg, &vr);
	uint32_t vms_here = vm_apply(&sm->vms, f, sm->cfg.lid_scheme);
	if (vr.marked || sm->vms.n)
		log_info("%u vSwitches, %u of %u VMs in the fabric", vr.marked,
			 vms_here, sm->vms.n);
	char why[512];
	/* the VMs read at start against the first subnet: nothing written yet */
	if (first && vm_registry_live_conflict(&sm->vms, f, &sm->sub.guid2lid, why,
					       sizeof(why))) {
		log_err("%s", why);
		discovery_free(old);
		sm_stop(sm, 1);
		return;
	}
	if (xlid_mode(sm, f) < 0) {
		discovery_free(old);
		sm_stop(sm, SM_EXIT_FAILURE);
		return;
	}
	uint8_t *xmark = NULL;
	uint32_t x_exhausted = 0;
	f->lid_limit = sm->lid_limit;
	if (vm_registry_lids(&sm->vms, &sm->sub.guid2lid) < 0 ||
	    (f->xlid_mode && !(xmark = xlid_lids_prepare(f, &sm->sub.guid2lid))) ||
	    lids_assign(f, &sm->sub.guid2lid, (uint8_t)sm->cfg.lmc, &s->lids_rep) < 0 ||
	    (xmark && xlid_lids_finish(f, &sm->sub.guid2lid, xmark, &s->vlids,
				       &x_exhausted) < 0)) {
		log_err("LID assignment: out of memory");
		discovery_free(old);
		sm_stop(sm, SM_EXIT_RESOURCES);
		return;
	}
	s->xlid_mode = f->xlid_mode;
	if (x_exhausted)
		log_err("vLID space exhausted: %u VF ports have no vLID", x_exhausted);
	if (s->lids_rep.reclaimed)
		log_notice("%u LIDs reserved for absent ports given to present ones, oldest first",
			   s->lids_rep.reclaimed);
	if (s->lids_rep.exhausted)
		log_err("LID space exhausted: %u ports have no LID", s->lids_rep.exhausted);
	/* one warning, again only when the count changes, not every sweep */
	if (s->lids_rep.vf_shared != sm->sweep.vf_shared_warned && s->lids_rep.vf_shared)
		log_warn("LID space exhausted: %u VF ports left without a LID are shared-LID slots (a VM created on one shares its hypervisor's PF LID); LIDs already given are kept",
			 s->lids_rep.vf_shared);
	sm->sweep.vf_shared_warned = s->lids_rep.vf_shared;
	sm_save_lids(sm);
	subnet_save_neighbors(&sm->sub, sm->cfg.state_dir);
	uint32_t own = fabric_port(f, f->sm_node, f->sm_port);
	sm->sub.sm_lid = f->ports[own].lid;
	struct fabric_change_sink hook;
	hookev_sink(&hook, sm->hook);
	fabric_report_changes(old ? &old->f : NULL, f, NULL, &hook);
	sm->sub.configured_at = (uint64_t)time(NULL);
	linkwatch_update(&sm->sub.links, old ? &old->f : NULL, f, sm->sub.configured_at);
	perfmgr_configured(sm);
	dftree_reconfigure(sm);
	notices_configured(sm, old ? &old->f : NULL, f, sm->sweep.adopt_tables);
	fabric_counts(f, &s->switches, &s->cas, &s->ports);
	s->max_lid = f->max_lid;
	for (uint32_t l = 1; l <= f->max_lid; l++)
		if (f->lid_port[l] != FAB_NONE)
			s->lids++;
	if (sm->sweep.adopt_tables) {
		/*
		 * A subnet some SM configured before us (a handover, a failover,
		 * a restart): what the switches hold is the old routing, kept
		 * where it still works, and what the device cache starts from.
		 */
		sm->sweep.adopt_tables = 0;
		discovery_free(old);
		subnet_forget_devices(&sm->sub);
		adopt_free(sm->sweep.adopt);
		sm->sweep.lft_first = first;
		/* the partitions on this model: which P_Key blocks to read */
		struct part_model pm;
		int have_pm = part_resolve(&sm->cfg, &d->f, &sm->learned, 0, &pm) == 0;
		sm->sweep.adopt = adopt_start(sm->txn, d, sm->sub.cache, have_pm ? &pm : NULL,
					on_adopted, sm);
		if (have_pm)
			part_model_free(&pm);
		if (!sm->sweep.adopt) {
			log_err("out of memory reading the switches' tables");
			sm_stop(sm, SM_EXIT_RESOURCES);
		}
		return;
	}
	route_and_program(sm, first, old ? &old->f : NULL, 0);
	discovery_free(old);
}

static void on_adopted(void *arg, int rc, struct lft_tables *t,
		       const struct adopt_stats *st)
{
	struct sm *sm = arg;
	if (rc < 0 || sm->stopping || !st->blocks) {
		lft_tables_free(t);
		if (rc < 0 || sm->stopping)
			return;
		/* fresh switches: nothing to keep */
		route_and_program(sm, sm->sweep.lft_first, NULL, 0);
		return;
	}
	log_notice("adopted what the devices hold: %u LFT blocks of %u switches, %u P_Key blocks, %u PortInfo (%u reads did not come)",
		   st->blocks, st->switches, st->pkeys, st->portinfos, st->failed);
	sm->sub.lft = *t;
	memset(t, 0, sizeof(*t));
	route_and_program(sm, sm->sweep.lft_first, &sm->sub.model->f, 1);
}

/*
 * sm->sub.lft holds the new base tables (qos: the QoS mode already run
 * over them on the routing thread, else run here): the live jobs, the
 * secondary LFTs and the QoS over them, then written.
 */
static void tables_routed(struct sm *sm, const struct qos_report *qos,
			  int qos_rc, uint64_t qos_ms, const char *used,
			  uint64_t ms)
{
	jobs_rebase(sm);	/* the live jobs' entries over the base just routed */
	if (sm->sub.model->f.xlid_mode) {
		/* vLIDs: secondary tables copied from the PF columns just routed */
		struct xlft_report xr;
		if (xlft_fill(&sm->sub.model->f, &sm->sub.lft, &xr) < 0)
			log_err("out of memory filling the secondary LFTs");
		else if (xr.unrouted)
			log_warn("%u of %u vLIDs have no PF route to copy", xr.unrouted,
				 xr.vlids);
	}
	if (qos) {	/* on the routing thread */
		sm_lanes_applied(sm, qos);
		if (qos_rc == 0)
			qos_log(qos);
		log_info("qos: %llu ms on the routing thread",
			 (unsigned long long)qos_ms);
	} else {
		sm_qos_apply(sm);
	}
	sm->sub.engine = used;
	sm->sweep.last.routing = used;
	sm->sweep.last.route_ms = ms;
	program_set_tables(sm->sweep.prog, &sm->sub.lft);
}

static void on_routed(void *arg, struct route_result *r)
{
	struct sm *sm = arg;
	sm->sweep.route_job = NULL;
	if (r->rc < 0) {
		char tried[256] = "";
		for (int i = 0; i < sm->cfg.n_engines; i++)
			snprintf(tried + strlen(tried), sizeof(tried) - strlen(tried),
				 "%s%s", i ? ", " : "", sm->cfg.engines[i]);
		errors_set(&sm->errs, SM_ERR_ROUTING, "no engine could route the fabric (tried: %s)",
			     sm->routing_override ? sm->routing_override : tried);
		hookev_routing_failed(sm->hook, sm->errs.e[SM_ERR_ROUTING].msg);
		program_set_tables(sm->sweep.prog, NULL);
		return;
	}
	if (r->qos_ran && r->qos_rc < 0 && r->qos.fail[0]) {
		/* strict isolation not met: the devices keep their tables */
		errors_set(&sm->errs, SM_ERR_ROUTING, "%s", r->qos.fail);
		hookev_routing_failed(sm->hook, r->qos.fail);
		program_set_tables(sm->sweep.prog, NULL);
		return;
	}
	errors_clear(&sm->errs, SM_ERR_ROUTING);
	log_info("routing: %s in %llu ms", r->used, (unsigned long long)r->ms);
	if (r->repaired && r->rs.broken)
		log_notice("routes repaired in %llu ms: %u of %u LIDs lost a path; %llu entries changed where a full reroute changes %llu",
			   (unsigned long long)r->repair_ms, r->rs.broken, r->rs.columns,
			   (unsigned long long)r->rs.moved,
			   (unsigned long long)r->rs.fresh_moved);
	else if (r->repaired)
		log_info("routes kept: every old path still works");
	else if (r->note[0])
		log_info("routing: %s", r->note);
	sm->sub.lft = r->t;
	memset(&r->t, 0, sizeof(r->t));
	tables_routed(sm, r->qos_ran ? &r->qos : NULL, r->qos_rc, r->qos_ms,
		      r->used, r->ms);
}

/*
 * Routes the current model and writes what differs.  The routes are
 * computed on a thread while the loop configures the ports.  Given the
 * previous model (a heavy sweep), the routing keeps the old entries that
 * still work when the fabric only lost something; without it (a reroute
 * asked for by hand), it routes from scratch.
 */
static void route_and_program(struct sm *sm, int first, const struct fabric *prev,
			      int adopted)
{
	struct fabric *f = &sm->sub.model->f;
	struct program_params pp;
	/* the partitions of this model: P_Key tables now, the SA at publish */
	part_model_free(&sm->parts);
	if (part_resolve(&sm->cfg, f, &sm->learned, 1, &sm->parts) < 0)
		log_err("partitions: out of memory; P_Key tables not planned");
	sm_program_params(sm, first, &pp);
	program_free(sm->sweep.prog);
	sm->sweep.prog = NULL;
	route_job_cancel(sm->sweep.route_job);
	if (sm->sub.lft_gen != sm->sub.route_gen && !adopted)
		prev = NULL;	/* a new routing policy: from scratch */
	if (sm->cfg.routing_jobs != JOBS_OFF) {
		/*
		 * Jobs' entries are in the old tables (and in what another SM
		 * left): D-mod-K from scratch is the base, a function of the
		 * fabric and its LIDs, so a job's end restores it exactly.
		 */
		prev = NULL;
		adopted = 0;
	}
	sm->sub.lft_gen = sm->sub.route_gen;
	/* the old tables go to the job, or away: the writes are diffed against the cache */
	sm->sweep.route_job = route_job_start(sm->base, &sm->cfg, sm->routing_override,
					f, prev, prev ? &sm->sub.lft : NULL,
					adopted ? "adopted" : sm->sub.engine,
					adopted, &sm->learned, on_routed, sm);
	int route_errno = errno;
	lft_tables_free(&sm->sub.lft);
	if (!sm->sweep.route_job) {
		/* a thread and its eventfd: out of memory, threads or descriptors */
		log_err("cannot start the routing: %s", strerror(route_errno));
		sm_stop(sm, SM_EXIT_RESOURCES);
		return;
	}
	sm->sweep.prog = program_start(sm->txn, sm->sub.model, NULL, sm->sub.cache, &pp,
				 on_programmed, sm);
	if (!sm->sweep.prog) {
		log_err("out of memory planning the writes");
		sm_stop(sm, SM_EXIT_RESOURCES);
	}
}

void heavy_start(struct sm *sm)
{
	if (sm->state == SMS_NOTACTIVE) {
		log_notice("NOTACTIVE: no sweep until an SM sets us STANDBY");
		sm->sw.heavy_wanted = 0;
		return;
	}
	sm->sw.heavy_wanted = 0;
	sm->sw.activity = SM_HEAVY_SWEEP;
	event_del(sm->sw.timer);
	if (sweeper_is_retry(sm))
		log_limited_by(3, 60000, LOG_NOTICE, "heavy sweep: %s", sm->sw.heavy_reason);
	else
		log_notice("heavy sweep: %s", sm->sw.heavy_reason[0] ? sm->sw.heavy_reason : "start");
	sm->sw.heavy_reason[0] = '\0';
	const struct txn_stats *st = txn_get_stats(sm->txn);
	sm->sweep.sweep_base = st->all;
	sm->sweep.sweep_start_ms = clock_ms();
	subnet_building(&sm->sub, NULL);
	discovery_free(sm->sweep.disc);
	sm->sweep.mktaken = 0;
	/* the last model, for what it can spare asking: ours only as master */
	const struct discovery *prev = sm->state == SMS_MASTER ? sm->sub.model : NULL;
	sm->sweep.disc = discovery_start(sm->txn, SM_EXTRA_ROUNDS, prev, on_discovered, sm);
	subnet_building(&sm->sub, sm->sweep.disc);
	if (!sm->sweep.disc) {
		log_err("out of memory starting discovery");
		sm_stop(sm, SM_EXIT_RESOURCES);
		return;
	}
	discovery_spare_keyless(sm->sweep.disc, smstate_spare_keyless(sm));
}

/* The sweeper's reroute: the model routed again from scratch, written. */
void heavy_reroute(struct sm *sm)
{
	sm->sweep.sweep_base = txn_get_stats(sm->txn)->all;
	sm->sweep.sweep_start_ms = clock_ms();
	sm->sub.model->unresponsive = 0;
	/* a full reroute: what VM moves unbalanced is routed afresh */
	rebalance_rerouted(&sm->vms.rb, REBAL_NONE, clock_ms());
	route_and_program(sm, 0, NULL, 0);
}

int heavy_write_tables(struct sm *sm, struct lft_tables *t, uint64_t ms)
{
	struct fabric *f = &sm->sub.model->f;
	struct program_params pp;
	sm->sw.activity = SM_HEAVY_SWEEP;
	event_del(sm->sw.timer);
	sm->sweep.sweep_base = txn_get_stats(sm->txn)->all;
	sm->sweep.sweep_start_ms = clock_ms();
	sm->sub.model->unresponsive = 0;
	part_model_free(&sm->parts);
	if (part_resolve(&sm->cfg, f, &sm->learned, 1, &sm->parts) < 0)
		log_err("partitions: out of memory; P_Key tables not planned");
	sm_program_params(sm, 0, &pp);
	program_free(sm->sweep.prog);
	route_job_cancel(sm->sweep.route_job);
	sm->sweep.route_job = NULL;
	lft_tables_free(&sm->sub.lft);
	sm->sub.lft = *t;
	memset(t, 0, sizeof(*t));
	sm->sweep.prog = program_start(sm->txn, sm->sub.model, NULL, sm->sub.cache, &pp,
				 on_programmed, sm);
	if (!sm->sweep.prog) {
		log_err("out of memory planning the writes");
		sm_stop(sm, SM_EXIT_RESOURCES);
		return -1;
	}
	tables_routed(sm, NULL, 0, 0, sm->sub.engine, ms);
	return 0;
}

void sweeps_to_ctl(const struct sm *sm, json_t *o)
{
	json_object_set_new(o, "sweeping", json_string(sm_activity_sweep_name(sm->sw.activity)));
	json_object_set_new(o, "heavy_sweeps", json_integer(sm->sweep.heavy_sweeps));
	json_object_set_new(o, "light_sweeps", json_integer(sm->sweep.light_sweeps));
	json_object_set_new(o, "heavy_failed", json_integer(sm->sweep.heavy_failed));
	json_object_set_new(o, "last_sweep_time", json_integer((json_int_t)sm->sweep.last_sweep_time));
	json_object_set_new(o, "last_sweep_date", control_time_json(sm->sweep.last_sweep_time));
}

void last_sweep_to_ctl(const struct sm *sm, json_t *o)
{
	const struct sweep_summary *s = &sm->sweep.last;
	if (s->valid) {
		json_t *l = json_pack("{s:i,s:i,s:i,s:i,s:i,s:s,s:I,s:I,s:I,s:I,s:I,s:i,s:i,s:i}",
			"switches", s->switches, "cas", s->cas, "ports", s->ports,
			"lids", s->lids, "max_lid", s->max_lid,
			"routing", s->routing ? s->routing : "none",
			"sweep_ms", (json_int_t)s->sweep_ms,
			"route_ms", (json_int_t)s->route_ms,
			"mads_sent", (json_int_t)s->mads_sent,
			"mad_timeouts", (json_int_t)s->mad_timeouts,
			"mad_retries", (json_int_t)s->mad_retries,
			"unresponsive", s->unresponsive,
			"lft_blocks", s->prog.lft_blocks,
			"portinfo_sets", s->prog.portinfo_sets);
		json_object_set_new(l, "time", control_time_json(s->when));
		json_object_set_new(l, "lft_order", lft_order_to_ctl(&s->prog.order));
		json_object_set_new(o, "last_heavy_sweep", l);
	}
	/* extended LIDs (sm/discover/xlid_sm.h): the mode and the devices lacking it */
	static const char *const xset[] = { "auto", "on", "off" };
	json_object_set_new(o, "extended_lids", json_pack("{s:s,s:s,s:i,s:i,s:s,s:i}",
		"setting", xset[sm->cfg.extended_lids],
		"mode", sm->sweep.xlid_decided < 0 ? "undecided" :
			sm->sweep.xlid_decided ? "extended" : "legacy",
		"vlids", s->valid ? (int)s->vlids : 0,
		"lacking", s->valid ? (int)s->xlid_lacking : 0,
		"lacking_devices", sm->sweep.xlid_lacking,
		/* LID space full: VF ports left without a LID (lids.h) */
		"shared_lid_slots", s->valid ? (int)s->lids_rep.vf_shared : 0));
	/* congestion.mode dftree's lanes as the last heavy sweep wrote them
	   (sm/model/lanes.h): ports whose link cannot run the slow lane */
	const struct lanes *ln = &sm->sub.lanes;
	if (ln->on)
		json_object_set_new(o, "lanes", json_pack("{s:i,s:i,s:I,s:I}",
			"fast_sl", ln->fast_sl, "slow_sl", ln->slow_sl,
			"ports_one_lane", (json_int_t)ln->ports_refused,
			"hotspots", (json_int_t)ln->n_hot));
}
