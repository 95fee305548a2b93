/*
 * The sweeper: what the SM is doing on its loop (one activity at a time)
 * and the sweeps asked for.  Anyone asks for a sweep here; the request is
 * queued on the loop and runs when the SM is idle.  The sweeps themselves
 * (sm/heavy.c, sm/light.c) are given to sweeper_init() as hooks, so that
 * no module asking for work calls back into them.
 */
#ifndef IBSMD_SWEEPER_H
#define IBSMD_SWEEPER_H

#include <stddef.h>
#include <stdint.h>

struct sm;
struct event;

/* What the SM is doing on the loop. */
enum sm_activity {
	SM_IDLE,
	SM_HEAVY_SWEEP,		/* discover, elect, LIDs, route, program */
	SM_LIGHT_SWEEP,		/* SwitchInfo and SMInfo polls */
	SM_VM_WRITES,		/* a VM command's writes (sm/vm/vmops.c) */
	SM_MFT_WRITES,		/* multicast tables after joins (sm/mcast/mcast_sm.c) */
	SM_JOB_WRITES,		/* a job's start or end written (sm/jobs.c) */
	SM_HANDOVER_WAIT,	/* a HANDOVER sent: the successor's answer */
};

struct sweeper_hooks {
	void (*heavy)(struct sm *sm);	/* start the heavy sweep asked for */
	void (*light)(struct sm *sm);	/* start a light sweep */
	void (*reroute)(struct sm *sm);	/* route the model again, write */
	/* the loop is free: 1 when work that waited for it took it */
	int (*waited)(struct sm *sm);
};

struct sweeper {
	enum sm_activity activity;
	int heavy_wanted;
	char heavy_reason[128];
	struct event *kick;		/* deferred: start a requested sweep */
	struct event *timer;		/* the next light sweep, or a retry */
	struct sweeper_hooks h;
};

int sweeper_init(struct sm *sm, const struct sweeper_hooks *h);
void sweeper_free(struct sm *sm);

/* A heavy sweep, as soon as the SM is idle; why is logged when it starts. */
void sweeper_request_heavy(struct sm *sm, const char *why);
/* A light sweep now, if idle and MASTER of a configured subnet. */
void sweeper_request_light(struct sm *sm);
/*
 * Routes the current model again without rediscovery and writes what
 * changed; 0, or -1 with the reason in err (not MASTER, or not idle).
 */
int sweeper_request_reroute(struct sm *sm, char *err, size_t errlen);
/*
 * The loop is free again (a sweep, or the writes between sweeps, ended):
 * deferred traps, work that waited or a heavy sweep asked for go on, else
 * the next light sweep is scheduled.
 */
void sweeper_resume(struct sm *sm);
/* A heavy sweep that could not go on: another in ms, at least a second
 * (logged as one line a few times a minute). */
void sweeper_retry_in(struct sm *sm, uint64_t ms);
/* The same after exactly ms (an SM held back by M_Key retries at the sweep interval). */
void sweeper_retry_after(struct sm *sm, uint64_t ms);
/* Drops a heavy sweep asked for and not started (a retry no longer due). */
void sweeper_cancel_heavy(struct sm *sm);
/* Whether the heavy sweep starting is such a retry. */
int sweeper_is_retry(const struct sm *sm);

/* "heavy", "light", "vm", "multicast", "jobs" for the sweeps and writes; "no" else. */
const char *sm_activity_sweep_name(enum sm_activity a);

/*
 * Exit statuses of a stop that is not asked for (ibsmd(8), EXIT STATUS):
 * the daemon cannot go on, or a --once run failed; and, as sysexits'
 * EX_OSERR, it ran out of memory, descriptors or threads.  Both make
 * systemd's Restart=on-failure start it again.
 */
#define SM_EXIT_FAILURE		1
#define SM_EXIT_RESOURCES	71

/* Ends the loop with code as the exit status. */
void sm_stop(struct sm *sm, int code);

#endif
