/*
 * The SM's context and its life: SM state (DISCOVERING, STANDBY, MASTER),
 * heavy sweeps (discover -> elect -> LIDs -> route -> program), light
 * sweeps, traps, SMInfo, and the control-socket commands.  Everything runs
 * on one libevent loop.  The owners it holds keep their own state (the
 * election, the sweeper, the SA, ...); the node-name map, the log's level
 * and the CPU placement are process-wide (ARCHITECTURE.md, "Owners").
 */
#ifndef IBSMD_DAEMON_H
#define IBSMD_DAEMON_H

#include <event2/event.h>
#include <stdint.h>

#include "mad/smp.h"
#include "mad/transport.h"
#include "mad/txn.h"
#include "routing/engine.h"
#include "traps/trapin.h"
#include "sm/model/config.h"
#include "sm/base/fabric.h"
#include "sm/model/lids.h"
#include "sm/model/mcgroups.h"
#include "sm/model/part_resolve.h"
#include "sm/ctl/partition_ctl.h"
#include "sm/discover/adopt.h"
#include "sm/write/program.h"
#include "sm/errors.h"
#include "sm/smstate.h"
#include "sm/sweeper.h"
#include "sm/subnet.h"
#include "sm/discover/sweep.h"
#include "sm/model/vm.h"

/* IBSMD_VERSION: the top-level VERSION file, passed by the Makefile (-D). */

struct control;
struct mad_dispatch;
struct metrics;
struct sa;
struct notifier;
struct sm_notices;
struct sm_paths;
struct vmexec;
struct vmop;
struct vmshared;
struct ctl_verify;
struct topo_job;
struct wlearn;
struct mcast_sm;
struct scrub;
struct evhook;
struct jobs;

struct sweep_summary {
	uint32_t switches, cas, ports, lids, max_lid;
	uint32_t unresponsive;
	uint64_t sweep_ms, route_ms;
	uint64_t mads_sent, mad_timeouts, mad_retries, mad_errors;
	const char *routing;
	struct program_stats prog;
	struct lid_report lids_rep;
	int xlid_mode;			/* 1: extended LIDs (sm/discover/xlid_sm.h) */
	uint32_t vlids;			/* VF ports holding a vLID */
	uint32_t xlid_lacking;		/* devices asked that lack the extension */
	int valid;
	uint64_t when;			/* wall clock, seconds: when it ended */
};

/*
 * Whoever watches the daemon (the one-shot run, sm/oneshot.h): told when
 * a heavy sweep configured the subnet, when another SM is in charge, and
 * when a heavy sweep failed.  A callback that returns 1 has ended the run
 * (sm_stop) or asked for what comes next: the daemon does no more.
 */
struct program_stats;
struct sm_watcher {
	int (*up)(struct sm *sm, const struct program_stats *ps, void *arg);
	int (*standby)(struct sm *sm, const struct sm_ev *master, void *arg);
	int (*failed)(struct sm *sm, void *arg);
	void *arg;
	int one_shot;		/* the run ends after one: no light sweeps,
				   no metrics server */
};

/*
 * The sweeps' own state (sm/heavy.c, sm/light.c): the discovery being
 * built, the routing job and the writes under way, the adoption of what
 * another SM left, the extended-LID probe, and the record of the sweeps
 * done.  Only the sweeps change it; the control commands, the metrics and
 * the watcher read the record.
 */
struct sweep_state {
	struct discovery *disc;		/* being built */
	struct route_job *route_job;	/* routing on its thread, or NULL */
	struct program *prog;		/* the writes */
	uint64_t sweep_start_ms;
	struct txn_counters sweep_base;	/* the MAD counts at its start */
	uint64_t route_ms;
	int trap_resweep;		/* a 128/144 came while the first sweep ran */
	uint32_t light_pending, light_changes;
	int ever_master;
	int adopt_tables;		/* next configuration: read the LFTs first */
	struct adopt *adopt;		/* reading them */
	int lft_first;
	/* extended LIDs (sm/discover/xlid_sm.h): the devices asked at a heavy sweep */
	struct xprobe *xprobe;
	int xprobed;			/* the discovery in disc was asked */
	/* ports with another SM's M_Key taken over (sm/write/mkeytake.h) */
	struct mktake *mktake;
	int mktaken;			/* done for the discovery in disc */
	int xlid_decided;		/* -1 until the first configuration */
	char xlid_lacking[512];		/* the devices lacking it, named */
	/* legacy LID space full: VF ports left without a LID, last warned of */
	uint32_t vf_shared_warned;
	/* light sweeps reading back what was written (sm/write/scrub.h) */
	struct scrub *scrub;
	/* the record */
	uint32_t heavy_sweeps, light_sweeps;
	uint32_t heavy_failed;		/* heavy sweeps that failed (the log
					   says a few a minute, then a count) */
	uint64_t last_sweep_time;	/* wall clock, seconds */
	struct sweep_summary last;
};

struct sm {
	struct config cfg;
	char config_path[4096];
	struct event_base *base;
	struct mad_transport tr;
	int have_transport;
	struct txn_engine *txn;
	struct mad_dispatch *disp;	/* the receive path (sm/recv.c) */
	struct sa *sa;			/* the subnet administrator (sm/sa/sa_server.c) */
	struct notifier *notify;	/* SA event subscriptions (sm/sa/notices.c) */
	struct sm_notices *notices;
	struct sm_paths *paths;		/* repath signalling (sm/sa/paths.c) */
	struct event *txn_timer;
	struct event *log_tick;		/* 1 s: rate-limited log counts (sm/base/log.h) */
	struct control *ctl;
	struct metrics *metrics;	/* HTTP /metrics, the textfile (sm/ctl/metrics.h) */
	const char *socket_path;
	const char *routing_override;
	int log_level_override;		/* --log-level, or -1 */

	int state;			/* enum sm_state */
	const struct sm_watcher *watch;	/* told of subnet up, standby, failure */
	int exit_code;
	int stopping;

	struct election *el;		/* master, handover, polls (sm/smstate.c) */
	struct sweeper sw;		/* the activity, the sweeps asked for (sm/sweeper.h) */
	struct sweep_state sweep;	/* the sweeps' own (sm/heavy.c, sm/light.c) */

	/* the subnet kept between sweeps: model, routes, LIDs, device cache */
	struct subnet sub;
	/* the VM registry (sm/model/vm.c), persisted in the state directory */
	struct vm_registry vms;
	uint32_t lid_limit;		/* the highest unicast LID given, 0:
					   0xBFFF (tests lower it) */
	struct vmexec *vmexec;		/* a VM's writes running (sm/vm/vmexec.c) */
	struct vmop *vmop;		/* a VM command running or waiting for
					 * the sweep's end (sm/vm/vmops.c) */
	struct vmshared *vmshared;	/* Paper VI's repath-trap table
					 * (sm/vm/vmshared.c) */

	struct trapin traps;		/* traps in (traps/trapin.h, sm/traphooks.c) */
	/*
	 * Partitions (sm/model/part_resolve.h) resolved against sub.model's fabric at
	 * each heavy sweep and reload; the pFTree-Wt weights learned from PMA
	 * counters (sm/weights.c), by port GUID.
	 */
	struct part_model parts;
	struct part_weights learned;
	/* multicast groups (sm/model/mcgroups.h): the SA's MCMemberRecords */
	struct mc_db mc;
	struct mcast_sm *mcsm;		/* MFT writes between sweeps (sm/mcast/mcast_sm.c) */
	struct wlearn *wlearn;		/* reading the counters (sm/weights.c) */
	struct perfmgr *pm;		/* every port's counters (sm/perfmgr.c) */
	struct dftree *dft;		/* hot-spot slow lanes (sm/dftree.c) */
	struct pkey_violations pkey_viol;	/* traps 257 (sm/ctl/partition_ctl.h) */
	int notified_ready;		/* systemd has had READY=1 (sdnotify.h) */
	uint64_t start_time;		/* wall clock, seconds: sm_init */
	struct ctl_verify *ctl_verify;	/* ibsmctl verify reading (ctlroutes.c) */
	struct topo_job *topo_jobs;	/* ibsmctl topology workers (ctltopo.c) */
	struct sm_errors errs;		/* conditions until they clear (sm/errors.h) */
	struct evhook *hook;		/* events.exec, the recent events (sm/ctl/evhook.h) */
	struct jobs *jobs;		/* routing.jobs: the live jobs (sm/jobs.h) */
};




int sm_init(struct sm *sm, struct event_base *base, char *err, size_t errlen);
/* Opens the local port and starts the first heavy sweep. */
int sm_start(struct sm *sm, char *err, size_t errlen);
/*
 * The same on an in-process emulated fabric: binds to the port of GUID
 * cfg.port_guid, or to the first CA port of the topology when it is 0.
 */
struct emu;
int sm_start_emulated(struct sm *sm, struct emu *e, char *err, size_t errlen);
/* The control-socket command handler (sm/ctl/ctlcmds.c). */
struct json_t;
struct json_t *sm_control(void *ctx, const char *cmd, struct json_t *req,
			  char *err, size_t errlen);
void sm_shutdown(struct sm *sm);

/*
 * Between the daemon's orchestration (daemon.c) and the SM state machine
 * (smstate.c), nothing else.
 */
/* Traps in: the daemon's side of traps/trapin.h (sm/traphooks.c). */
void sm_traps_init(struct sm *sm);


#endif
