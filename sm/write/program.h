/*
 * The executor of write plans (plan.h): sends each wave's writes through
 * the transaction table's window, skips what the device cache says the
 * device holds, records in the cache and in the fabric model what the
 * answers confirm, re-sends what got no answer (extra rounds), and starts
 * a wave only when the previous one is over.  It decides no write of its
 * own but the reads that find out where a refused port state change
 * stands and what an inferred port really is.
 *
 * Failures: a write that never succeeded counts in failed, its port (a
 * node's port 0 for switch-wide attributes) in failed_ports, and no
 * later wave writes to that port.  The plan goes on to the next wave
 * unless plan->stop_on_failure, which ends it after the wave that failed
 * (stopped is set): migration wants that, the sweep wants the rest done.
 */
#ifndef IBSMD_PROGRAM_H
#define IBSMD_PROGRAM_H

#include <stdint.h>

#include "mad/txn.h"
#include "routing/engine.h"
#include "sm/write/devcache.h"
#include "sm/write/plan.h"
#include "sm/write/plan_lft.h"
#include "sm/write/plan_sweep.h"
#include "sm/discover/sweep.h"

struct program_stats {
	uint32_t portinfo_sets, switchinfo_sets, pkey_sets, lft_blocks;
	uint32_t other_sets;	/* SL2VL, VLArb, MFT, vendor */
	uint32_t sl2vl_sets, vlarb_sets;	/* of other_sets: the QoS tables */
	uint32_t mft_sets;	/* of other_sets: MulticastForwardingTable blocks */
	uint32_t activations;
	uint32_t unchanged;	/* writes left out: the device holds them */
	uint32_t held;		/* writes left out: their port failed earlier */
	uint32_t failed;	/* writes that never succeeded */
	uint32_t failed_ports;	/* distinct ports left unconfigured */
	uint32_t waves;		/* waves begun */
	int stopped;		/* stop_on_failure ended the plan early */
	int cancelled;		/* the transaction table was cancelled */
	int unrouted;		/* no tables came: ports armed, nothing activated */
	struct lft_order_stats order;	/* the sweep's LFT writes: their waves and why */
};

struct program;
typedef void (*program_done_fn)(void *arg, const struct program_stats *s);

struct program_hooks {
	void *arg;
	/*
	 * Every answer of this wave is in and the wave is closed: the
	 * planner may add later waves (and close or seal) before the
	 * executor looks for the next one.
	 */
	void (*wave_done)(void *arg, struct program *pr, int wave);
	/* A port is not what the model said (an inferred port): plan it again. */
	void (*replan_port)(void *arg, struct program *pr, uint32_t pi, int wave);
};

/*
 * Runs plan p, whose ops name nodes of d's fabric, against cache c.  d,
 * p and c must stay valid until done() runs; d's port states, LIDs and
 * LinearFDBTop are updated as writes succeed, so that d keeps describing
 * the devices.  hooks may be NULL.  done() runs once, from an answer,
 * from program_kick() or before program_run returns when the plan is
 * sealed and nothing needs writing.  Returns NULL on ENOMEM.
 */
struct program *program_run(struct txn_engine *txn, struct discovery *d,
			    struct plan *p, struct devcache *c, int extra_rounds,
			    const struct program_hooks *hooks,
			    program_done_fn done, void *arg);
/* The plan grew, or a wave was closed: send what can go. */
void program_kick(struct program *pr);
const struct program_stats *program_get_stats(const struct program *pr);
/* What the caller hangs on pr: freed by program_free with owner_free. */
void program_set_owner(struct program *pr, void *owner,
		       void (*owner_free)(void *));
void *program_owner(const struct program *pr);
void program_free(struct program *pr);

/*
 * The heavy sweep's configuration (plan_sweep.c): plans with
 * plan_sweep.h and runs the plan.  t may be NULL while the routes are
 * still being computed: the ports are configured meanwhile, and the
 * switches (SwitchInfo, LFTs) and the activation wait for
 * program_set_tables().
 */
struct program *program_start(struct txn_engine *txn,
			      struct discovery *d,
			      const struct lft_tables *t, struct devcache *c,
			      const struct program_params *p,
			      program_done_fn done, void *arg);
/* The routes, or NULL if routing failed: then nothing is activated. */
void program_set_tables(struct program *pr, const struct lft_tables *t);

#endif
