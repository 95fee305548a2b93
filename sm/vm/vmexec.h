/*
 * A VM's writes on the live fabric: the LFT writes of a plan made by
 * reconfig/migrate.c (migrate_plan_vm, _boot, _drop) and the PortInfo
 * Sets of the VF ports whose LID changes, run by the plan executor
 * (program.h) with stop_on_failure, one VM operation at a time.
 *
 * The plan, in executor waves: the migration's waves 0..m->waves - 1
 * (LFT blocks by switch in the LFT order, reconfig/migorder.h; a block
 * written before all its changed entries are due carries the others as
 * before; LID-less directed route); a SwitchInfo LinearFDBTop raise on
 * every switch (physical or vSwitch) whose top is below the new tables'
 * highest LID, in the wave of its first block (wave 0 when it has none),
 * before its blocks; each vm_port_set's PortInfo (the port's new LID; a
 * port in INIT that now has a LID, and its vSwitch port, go ARMED) in its
 * wave; then, when any set asks for activation, one more wave: ACTIVE on
 * the ports that are ARMED (plan_sweep_activation).
 *
 * On success the tables t become sm->sub.lft, the model's port LIDs are
 * the sets' (lid 0: FPORT_NOLID) and its LID index is rebuilt; the device
 * cache knows every write that succeeded either way.  On failure
 * sm->sub.lft and the model's LIDs stay the old ones: a heavy sweep then
 * puts back what differs (the caller asks for it).
 */
#ifndef IBSMD_VMEXEC_H
#define IBSMD_VMEXEC_H

#include <stddef.h>
#include <stdint.h>

#include "reconfig/migrate.h"
#include "routing/engine.h"

struct sm;

#define VMEXEC_MAX_PORTS 8	/* port sets a run takes */

/* One VF port's PortInfo: its LID (0: none), and whether to activate it. */
struct vm_port_set {
	uint32_t pi;		/* port index in sm->sub.model */
	uint32_t lid;
	int activate;		/* an idle VF gets a VM: ARMED -> ACTIVE after */
	uint8_t wave;		/* 0 .. MIG_MAX_WAVES - 1 */
};

struct vmexec_stats {
	uint32_t switches_marked;	/* the plan's (migration.h) */
	uint32_t switches_written;	/* physical switches with LFT blocks */
	uint32_t lft_blocks;		/* LFT blocks to physical switches */
	uint32_t vswitch_blocks;	/* LFT blocks to vSwitches */
	uint32_t xlft_blocks;		/* secondary-LFT blocks (extended LIDs) */
	uint32_t other_smps;		/* PortInfo and SwitchInfo Sets sent */
	uint32_t failed;		/* writes that never succeeded */
	int stopped;			/* stop_on_failure ended it early */
	uint64_t plan_us;		/* the migration's planning */
	uint64_t commit_us;		/* vmexec_start to the last answer */
	struct lft_order_stats order;	/* how the LFT writes were ordered */
};

/* ok: every write succeeded (then sm->sub.lft is the new tables). */
typedef void (*vmexec_done_fn)(struct sm *sm, void *arg, int ok,
			       const struct vmexec_stats *st);

/*
 * Runs m (planned on t, a copy of sm->sub.lft made with
 * migrate_tables_copy) and the port sets ps[0..n_ps-1] (n_ps <=
 * VMEXEC_MAX_PORTS).  On 0, m's
 * contents and t are taken (both zeroed; t moved into sm->sub.lft on
 * success, freed otherwise) and done runs once, later, from the event
 * loop -- never before vmexec_start returns.  On -1 (err: busy, not
 * master, no model, ENOMEM) nothing was taken and done never runs.
 */
int vmexec_start(struct sm *sm, struct migration *m, struct lft_tables *t,
		 const struct vm_port_set *ps, unsigned n_ps,
		 vmexec_done_fn done, void *arg, char *err, size_t errlen);
/*
 * One at a time; a heavy sweep waits while this is 1 (daemon.c: the run
 * writes through sm->sub.model and its cache).  After done, a heavy
 * sweep wanted meanwhile is requested again (sweeper_request_heavy).
 */
int vmexec_busy(const struct sm *sm);
/*
 * The port sets a plan implies (ps has room for 2), from m->vm_pi,
 * m->dst_pi and the LIDs: migrate_plan_vm dynamic: the destination VF
 * gets the VM's LID (wave 0, before the LFT order's waves, activated),
 * the source VF none (m->src_wave, after them); prepopulated: the
 * destination VF the VM's LID (wave 0), the source VF the destination's
 * old LID (m->src_wave); migrate_plan_boot: the VF the LID
 * (wave 0, activated); migrate_plan_drop: the VF none.  Returns how many.
 */
unsigned vmexec_port_sets(const struct migration *m, struct vm_port_set *ps);
/*
 * Ends a run (mastership lost, shutdown), after txn_cancel_all (the
 * executor must have every answer, cancelled ones included): done runs
 * with ok = 0 before this returns, the tables are freed.  A no-op when
 * idle.
 */
void vmexec_abort(struct sm *sm);

#endif
