/*
 * A migration's writes against a counting transport (ibsmd --offline
 * --migrate): the writes of reconfig/migrate.c become a write plan, run
 * by the plan executor (program.c) through a transaction table whose
 * transport answers every Set with success at once and counts what it
 * was handed.  The same executor and MADs as on a fabric; no device.
 */
#ifndef IBSMD_MIGCOUNT_H
#define IBSMD_MIGCOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "reconfig/migrate.h"
#include "routing/engine.h"
#include "sm/write/devcache.h"
#include "sm/base/fabric.h"
#include "sm/write/plan.h"
#include "sm/discover/sweep.h"

/* mig_plan_build flags */
#define MIGPLAN_LID_ROUTED 0x01	/* LFT Sets LID-routed to the switch, not DR */
#define MIGPLAN_RAISE_TOP  0x02	/* SwitchInfo LinearFDBTop raises (d->si_raw) */

/*
 * The one translation of a migration into a write plan, for the counting
 * transport below and for the live fabric (vmexec.c): m's writes (rows of
 * t, the new tables, which the plan points to) as LFT block ops in m's
 * waves, switch by switch.  With MIGPLAN_RAISE_TOP every switch of d
 * whose LinearFDBTop is below t->max_lid first gets a SwitchInfo with
 * t->max_lid as its top, in the wave of its first block (wave 0 when it
 * has none), before the blocks.  c (for the raises) may be NULL otherwise.
 * Returns 0, or -1 on ENOMEM.
 */
int mig_plan_build(struct plan *p, const struct discovery *d,
		   struct devcache *c, const struct lft_tables *t,
		   const struct migration *m, unsigned flags);

struct mig_count {
	uint32_t lft_blocks;	/* LinearForwardingTable Sets handed over */
	uint32_t vswitch_blocks;	/* of them, to vSwitches */
	uint32_t switches;	/* distinct physical switches they went to */
	uint32_t vswitches;	/* distinct vSwitches */
	uint32_t other_smps;	/* any other SMP */
	uint32_t waves;		/* waves the executor began */
	uint32_t failed;	/* writes the executor counts failed (0) */
	uint64_t run_us;	/* from the first write to the last answer */
};

/*
 * Runs m's writes (rows of t, the new tables) on f; each LFT Set's
 * payload is checked against t.  LFT Sets are LID-routed to the switch.
 * Returns 0, or -1 with err (ENOMEM, a payload that is not the table's).
 */
int migcount_run(struct fabric *f, const struct lft_tables *t,
		 const struct migration *m, struct mig_count *out, char *err,
		 size_t errlen);

#endif
