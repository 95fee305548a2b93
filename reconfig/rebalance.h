/*
 * Rebalancing after VM moves (the vSwitch paper, Section 7.2: FTreeMinRC
 * copies the PF's routes for a moved VM, so the balance vswitch-ftree
 * gave slowly decays; the paper re-routes "from time to time").  Pure
 * computation over the fabric model and the tables: the balance of the
 * installed routes, the same of a fresh vswitch-ftree on the same VM
 * placement, and when a full reroute is due (virtualization.rebalance,
 * ibsmd.yaml(5)).  The owner on the loop (sm/vm/vmops.c) asks for the
 * reroute through the sweeper, as ibsmctl reroute does.
 *
 * Balance: every VM LID d (a VF port with a VM weight) weighs its share
 * of its vSwitch, REBAL_UNIT * weight / (the vSwitch's VM weights), as
 * vswitch-ftree's VM pass counts it (every vSwitch with VMs weighs the
 * same).  A directed switch-to-switch link (vSwitch links aside) carries
 * d's weight when the route to d from some physical switch with end
 * nodes crosses it (counted once per d, however many routes share it).
 * The balance is the heaviest such link's load: lower is better.  A
 * link's load is vswitch-ftree's Up or Dwn counter of that link (the
 * up-port of a lower switch, the down-port of an upper one).  Only pLIDs
 * are measured (vLIDs' secondary tables copy a PF's column).
 */
#ifndef IBSMD_REBALANCE_H
#define IBSMD_REBALANCE_H

#include <stddef.h>
#include <stdint.h>

#include "reconfig/rblocal.h"
#include "routing/engine.h"
#include "sm/base/fabric.h"

/* The fixed-point unit of a vSwitch's VM weights: lcm(1..16), as vswitch-ftree's. */
#define REBAL_UNIT	720720u
/* quality: the fresh balance over the installed one, in thousandths */
#define REBAL_PERMILLE	1000

struct rebalance_balance {
	uint64_t max_load;	/* the heaviest link's load, REBAL_UNIT a vSwitch */
	uint32_t links;		/* directed switch-to-switch links with a load */
	uint32_t vms;		/* VM LIDs measured */
};

/*
 * The balance of the routes t holds for f's VMs.  0, or -1 with err
 * (ENOMEM).  No VMs: b is zero.
 */
int rebalance_measure(const struct fabric *f, const struct lft_tables *t,
		      struct rebalance_balance *b, char *err, size_t errlen);

struct rebalance_quality {
	struct rebalance_balance now, fresh;
	/* fresh.max_load * 1000 / now.max_load: 1000 as good as a fresh
	 * vswitch-ftree, below it worse; -1 when not measured (no VMs) */
	int permille;
};

/*
 * Routes f afresh with vswitch-ftree (the engine's own tables, t is not
 * touched) and compares both balances.  0, or -1 with err (the fabric
 * is no fat tree vswitch-ftree routes, ENOMEM).
 */
int rebalance_quality(const struct fabric *f, const struct lft_tables *t,
		      struct rebalance_quality *q, char *err, size_t errlen);

/* Why a reroute is due, the index of rebalance_state.fired. */
enum rebalance_reason {
	REBAL_NONE,
	REBAL_MIGRATIONS,	/* after_migrations moves since the last reroute */
	REBAL_BALANCE,		/* the balance fell balance_drop below a fresh one */
	REBAL_INTERVAL,		/* interval_s since the last reroute, a move since */
	REBAL_REASONS
};

/* virtualization.rebalance; 0 turns a trigger off. */
struct rebalance_policy {
	uint32_t after_migrations;
	double balance_drop;
	uint32_t interval_s;
	int local;		/* only the sub-tree the moves touched (reconfig/rblocal.h) */
};

/* The owner's counters (in the VM registry, sm/model/vm.h). */
struct rebalance_state {
	uint32_t migrations;	/* VM moves since the last full reroute */
	uint64_t since_ms;	/* when that reroute was (or the start) */
	int pending;		/* enum rebalance_reason: due, not yet asked for */
	int last_permille;	/* the last quality measured, -1: none */
	uint64_t checks;	/* qualities measured */
	uint64_t fired[REBAL_REASONS];	/* reroutes asked for, by reason */
	/* the leaf switches moves to another leaf touched since (node GUIDs) */
	uint64_t *touched;
	uint32_t n_touched, cap_touched;
	int touch_lost;		/* one was not recorded (no memory): the whole fabric */
	/* local: rebalances done in a sub-tree, and those that took the whole fabric */
	uint64_t local, local_whole;
	struct rblocal_result last_local;	/* the last done in a sub-tree */
	uint64_t last_local_top;	/* its top switch's node GUID, 0: none yet */
};

/* Starts the counters at now_ms (clock_ms()). */
void rebalance_init(struct rebalance_state *s, uint64_t now_ms);
void rebalance_free(struct rebalance_state *s);
/* A move touched leaf switch guid (once each until the next reroute); 0 or -1 (ENOMEM). */
int rebalance_touch(struct rebalance_state *s, uint64_t guid);
/*
 * A VM command's writes ended: moved (a migration, counted), permille
 * (the quality after it, or -1 when not measured).  Sets s->pending to
 * the reason a reroute is now due, if any, and returns it.
 */
int rebalance_after_vm(const struct rebalance_policy *p,
		       struct rebalance_state *s, int moved, int permille);
/*
 * The loop is free at now_ms: the reason a reroute is due (pending, or
 * the interval), REBAL_NONE if none or p has no trigger on.  Nothing changes; see
 * rebalance_rerouted.
 */
int rebalance_due(const struct rebalance_policy *p,
		  const struct rebalance_state *s, uint64_t now_ms);
/* A reroute (full or local) began at now_ms (by reason, REBAL_NONE: another cause). */
void rebalance_rerouted(struct rebalance_state *s, int reason, uint64_t now_ms);

/* "migrations", "balance", "interval"; "none". */
const char *rebalance_reason_name(int reason);
/* A policy with a trigger on. */
int rebalance_enabled(const struct rebalance_policy *p);

#endif
