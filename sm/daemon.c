/*
 * The daemon's wiring (see daemon.h): the owners made and given to each
 * other -- the receive path, the SA, the notices, the election and the
 * sweeper with the sweeps as their hooks -- the transport opened, the
 * first heavy sweep asked for, and everything stopped in order.  The
 * sweeps themselves are sm/heavy.c and sm/light.c.
 */
#include "sm/daemon.h"
#include "sm/write/mkeytake.h"

#include <errno.h>
#include <stdarg.h>
#include <infiniband/mad.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "mad/dispatch.h"
#include "mad/emu/emu.h"
#include "mad/smp.h"
#include "mad/txn.h"
#include "mad/umad.h"
#include "sm/base/clock.h"
#include "sm/base/cpu.h"
#include "sm/base/log.h"
#include "sm/ctl/ctltopo.h"
#include "sm/ctl/evhook.h"
#include "sm/ctl/metrics.h"
#include "sm/discover/xlid_sm.h"
#include "sm/heavy.h"
#include "sm/jobs.h"
#include "sm/light.h"
#include "sm/mcast/ipoib.h"
#include "sm/mcast/mcast_sm.h"
#include "sm/model/state.h"
#include "sm/recv.h"
#include "sm/route.h"
#include "sm/sa/notices.h"
#include "sm/sa/paths.h"
#include "sm/sa/sa_server.h"
#include "sm/smstate.h"
#include "sm/sweeper.h"
#include "sm/vm/vmops.h"
#include "sm/vm/vmshared.h"
#include "sm/weights.h"
#include "sm/dftree.h"
#include "sm/perfmgr.h"
#include "sm/write/scrub.h"

static uint64_t clock_cb(void *arg)
{
	(void)arg;
	return clock_ms();
}

/* ---- transaction timer ---- */

static void on_txn_timer(evutil_socket_t fd, short what, void *arg)
{
	struct sm *sm = arg;
	txn_expire(sm->txn);
}

static void arm_txn(void *arg, int64_t deadline)
{
	struct sm *sm = arg;
	if (deadline < 0) {
		event_del(sm->txn_timer);
		return;
	}
	uint64_t now = clock_ms();
	timer_in_ms(sm->txn_timer, (uint64_t)deadline > now ? (uint64_t)deadline - now : 0);
}

/* ---- MADs that are not answers to our requests ---- */

/* Every MAD goes through the receive path: answers, then the handlers. */
static void on_mad(void *arg, const uint8_t *mad, size_t len,
		   const struct mad_addr *from, int status)
{
	struct sm *sm = arg;
	if (log_get_level() >= LOG_DEBUG && len >= MAD_HDR_SIZE)
		log_debug("recv: class 0x%02x method 0x%02x attr 0x%04x tid 0x%016llx status %d len %zu",
			  smp_class(mad), smp_method(mad), smp_attr(mad),
			  (unsigned long long)mad_get_field64((void *)mad, 0, IB_MAD_TRID_F),
			  status, len);
	if (election_sa_input(sm, mad, len, from, status))
		return;	/* the neighbour map from the master's SA */
	if (sm->disp)
		mad_dispatch_input(sm->disp, mad, len, from, status);
}

/* ---- set-up ---- */

static void on_log_tick(evutil_socket_t fd, short what, void *arg)
{
	log_rl_flush(0);
}

/*
 * The state directory, before the fabric is touched (no MAD is sent yet):
 * writable, temporary files of a kill removed, the VM registry and the
 * LID table read.  A corrupt or truncated file stops the start, set aside
 * as NAME.corrupt.TIMESTAMP (state_prepare refuses the next starts too):
 * starting without it would give new LIDs to every port that lost its
 * own (a fabric power-cycled with ibsmd) and forget the VMs, which the
 * operator must decide, not a restart loop.
 */
static int sm_load_state(struct sm *sm, char *err, size_t errlen)
{
	const char *dir = sm->cfg.state_dir;
	if (state_prepare(dir, err, errlen) < 0)
		return -1;
	int rc = vm_registry_load(&sm->vms, dir, err, errlen);
	if (rc == -2)
		state_set_aside(dir, "vms", err, errlen);
	if (rc < 0)
		return -1;
	if (sm->vms.n)
		log_notice("%u VMs in %s", sm->vms.n, sm->vms.path);
	if (weights_load_state(sm, err, errlen) < 0)
		return -1;
	rc = subnet_init(&sm->sub, dir, err, errlen);
	if (rc == -2)
		state_set_aside(dir, "guid2lid", err, errlen);
	if (rc < 0)
		return -1;
	return subnet_mkeys_configure(&sm->sub, &sm->cfg, 1, err, errlen);
}

/* The loop is free: a VM command that waited, else the jobs' writes. */
static int loop_waited(struct sm *sm)
{
	return vmops_resume(sm) || jobs_resume(sm);
}

/* The performance manager's hot links changed: the picture again. */
static void redraw_picture(void *metrics)
{
	metrics_heavy_sweep_done(metrics);
}

int sm_init(struct sm *sm, struct event_base *base, char *err, size_t errlen)
{
	sm->base = base;
	sm->start_time = (uint64_t)time(NULL);
	sm->sweep.xlid_decided = -1;	/* the first configuration decides */
	sm->txn_timer = evtimer_new(base, on_txn_timer, sm);
	sm->log_tick = event_new(base, -1, EV_PERSIST, on_log_tick, sm);
	static const struct smstate_hooks election = {
		.configure = sm_configure, .abandon = sm_sweep_abandon,
		.light_answer = light_answer,
	};
	static const struct sweeper_hooks sweeps = {
		.heavy = heavy_start, .light = light_start, .reroute = heavy_reroute,
		.waited = loop_waited,
	};
	if (!sm->txn_timer || !sm->log_tick || sweeper_init(sm, &sweeps) < 0 ||
	    smstate_init(sm, &election) < 0 || weights_init(sm) < 0 ||
	    perfmgr_init(sm) < 0 || dftree_init(sm) < 0 ||
	    mc_db_init(&sm->mc) < 0 || !(sm->hook = evhook_new(base))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (jobs_init(sm, err, errlen) < 0)
		return -1;
	mcast_ipoib_sync(sm, 0);
	evhook_configure(sm->hook, sm->cfg.events_exec, sm->cfg.events_exec_timeout_s,
			 sm->cfg.events_exec_max);
	struct timeval second = { 1, 0 };
	event_add(sm->log_tick, &second);
	if (sm_load_state(sm, err, errlen) < 0)
		return -1;
	/* --once ends before anyone would scrape: no HTTP server then */
	sm->metrics = metrics_new(sm, base, &sm->cfg, !(sm->watch && sm->watch->one_shot),
				  sm_control, err, errlen);
	if (!sm->metrics)
		return -1;
	perfmgr_set_redraw(sm, redraw_picture, sm->metrics);
	return 0;
}

/* The transport is open: create the transaction table and sweep. */
static int sm_begin(struct sm *sm, char *err, size_t errlen)
{
	sm->have_transport = 1;
	evhook_set_sm_guid(sm->hook, sm->tr.port_guid);
	log_notice("bound to %s port %d (GUID 0x%016llx), priority %d",
		   sm->tr.ca_name, sm->tr.port_num,
		   (unsigned long long)sm->tr.port_guid, sm->cfg.sm_priority);
	if (sm->cfg.n_parts && sm->cfg.default_full)
		log_notice("partitions: %d tenants; every end port is a full member of "
			   "the default partition, so hosts of different tenants reach "
			   "each other over P_Key 0xFFFF (default_partition.membership: "
			   "limited keeps them apart)", sm->cfg.n_parts);
	struct txn_params tp = {
		.timeout_ms = sm->cfg.mad_timeout_ms,
		.retries = sm->cfg.mad_retries,
		.window = sm->cfg.mad_window,
		.window_per_node = sm->cfg.mad_window_per_node,
	};
	sm->txn = txn_new(&tp, &sm->tr, clock_cb, NULL);
	if (!sm->txn) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	txn_set_arm(sm->txn, arm_txn, sm);
	sm->sub.local_guid = sm->tr.port_guid;
	txn_set_stamp(sm->txn, subnet_mkey_stamp, &sm->sub);
	if (sm->sub.mk.protect)
		log_notice("M_Key protection level %d, lease %d s", sm->sub.mk.protect,
			   sm->sub.mk.lease_s);
	if (perfmgr_begin(sm, err, errlen) < 0)
		return -1;
	sm->disp = sm_recv_new(sm, &sm->tr);
	if (!sm->disp || sa_init(sm, sa_families, sa_n_families) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (notices_init(sm, err, errlen) < 0)
		return -1;
	sweeper_request_heavy(sm, "start-up");
	return 0;
}

/* Answers are due while transactions are in flight. */
static int answers_due(void *arg)
{
	struct sm *sm = arg;
	return sm->txn && txn_inflight(sm->txn) > 0;
}

int sm_start(struct sm *sm, char *err, size_t errlen)
{
	struct umad_port_sel sel = {
		.ca = sm->cfg.port_ca[0] ? sm->cfg.port_ca : NULL,
		.port = sm->cfg.port_num,
		.guid = sm->cfg.port_guid,
	};
	if (umad_transport_open(&sm->tr, sm->base, &sel, on_mad, sm, err, errlen) < 0)
		return -1;
	umad_transport_set_pending(&sm->tr, answers_due, sm);
	if (sm->cfg.mad_one_cpu == TRI_ON ||
	    (sm->cfg.mad_one_cpu == TRI_AUTO && umad_transport_simulated(&sm->tr))) {
		char why[128];
		int cpu = cpu_keep_together(why, sizeof(why));
		if (cpu < 0)
			log_warn("mad.one_cpu: %s; threads left where they are", why);
		else
			log_info("MAD path kept on CPU %d (mad.one_cpu)", cpu);
	}
	return sm_begin(sm, err, errlen);
}

int sm_start_emulated(struct sm *sm, struct emu *e, char *err, size_t errlen)
{
	if (emu_attach(e, sm->base, sm->cfg.port_guid, &sm->tr, on_mad, sm,
		       err, errlen) < 0)
		return -1;
	if (emu_set_issm(e, sm->tr.port_guid, 1) < 0)
		log_warn("emulator: cannot set IsSM on the SM's port");
	return sm_begin(sm, err, errlen);
}

void sm_shutdown(struct sm *sm)
{
	if (sm->txn) {
		txn_set_arm(sm->txn, NULL, NULL);
		txn_cancel_all(sm->txn);
	}
	route_job_cancel(sm->sweep.route_job);
	sm->sweep.route_job = NULL;
	ctl_topology_cancel_all(sm);
	vmops_free(sm);
	jobs_free(sm);
	vmshared_free(sm);
	program_free(sm->sweep.prog);
	discovery_free(sm->sweep.disc);
	subnet_free(&sm->sub);
	part_model_free(&sm->parts);
	mcast_sm_free(sm);
	mc_db_free(&sm->mc);	/* the groups live as long as the daemon */
	weights_free(sm);
	dftree_free(sm);
	perfmgr_free(sm);
	pkey_violations_free(&sm->pkey_viol);
	free(sm->learned.guid);
	free(sm->learned.weight);
	memset(&sm->learned, 0, sizeof(sm->learned));
	vm_registry_free(&sm->vms);
	adopt_free(sm->sweep.adopt);
	scrub_free(sm->sweep.scrub);	/* its reads were cancelled above */
	sm->sweep.scrub = NULL;
	xprobe_abandon(sm->sweep.xprobe);	/* nothing due after txn_cancel_all() */
	mktake_abandon(sm->sweep.mktake);
	smstate_free(sm);
	sa_free(sm);
	notices_free(sm);
	sm_paths_free(sm);
	mad_dispatch_free(sm->disp);
	sm->disp = NULL;
	txn_free(sm->txn);
	if (sm->have_transport && sm->tr.close)
		sm->tr.close(sm->tr.ctx);
	if (sm->txn_timer)
		event_free(sm->txn_timer);
	sweeper_free(sm);
	metrics_free(sm->metrics);
	sm->metrics = NULL;
	evhook_free(sm->hook);
	sm->hook = NULL;
	if (sm->log_tick)
		event_free(sm->log_tick);
	log_rl_flush(1);
}
