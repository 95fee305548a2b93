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

#include "../reconfig/migrate.h"
#include "../routing/engine.h"
#include "fabric.h"

struct mig_count {
	uint32_t lft_blocks;	/* LinearForwardingTable Sets handed over */
	uint32_t switches;	/* distinct switches they went to */
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
