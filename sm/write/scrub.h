/*
 * The scrub: each light sweep reads back a share of the blocks the SM
 * wrote -- LFT blocks, P_Key blocks, SL-to-VL tables and MFT blocks, as
 * the device cache (devcache.h) holds them -- and rewrites, through a
 * write plan, every block a device no longer holds.  Without it a table
 * changed behind the SM's back (an SMP Set from a host, a device that
 * dropped a write) stays wrong: the cache says the device holds what
 * was written, so no sweep writes it again.
 *
 * The share rotates through the cache: with B blocks held and a budget
 * of S blocks a light sweep, every block is read within ceil(B / S)
 * light sweeps.  At most SCRUB_INFLIGHT reads are outstanding at a
 * time, so a MAD of real work (a trap's check, a heavy sweep) never
 * queues behind more than those; before each read the yield hook is
 * asked, and a round it stops ends at once (the reads still out are
 * dropped when they come).  A block is judged only when the cache still
 * holds what it held when the read was sent: a block being written is
 * not.
 */
#ifndef IBSMD_SCRUB_H
#define IBSMD_SCRUB_H

#include <stdint.h>

#include "mad/txn.h"
#include "sm/write/devcache.h"
#include "sm/discover/sweep.h"

#define SCRUB_INFLIGHT 8

struct scrub_stats {
	uint64_t rounds;	/* rounds begun */
	uint64_t reads;		/* blocks read back and compared */
	uint64_t read_failed;	/* reads with no answer (or an error status) */
	uint64_t skipped;	/* answers not judged: the block was written meanwhile */
	uint64_t tampered;	/* blocks found differing from what the SM wrote */
	uint64_t repaired;	/* of them, written again and confirmed */
	uint64_t yielded;	/* rounds cut short for real work */
	uint64_t passes;	/* passes over every block held, completed */
	uint32_t held;		/* blocks the cache held at the last round's start */
};

/* What one round did. */
struct scrub_round {
	uint32_t read, found, repaired, failed;
	int yielded;		/* cut short: nothing was repaired */
	int pass_over;		/* the round reached the end of the cache */
	int pass_clean;		/* ... and the pass it ended found nothing */
};

struct scrub_hooks {
	void *arg;
	/* 1: stop reading now (a heavy sweep was asked for, the SM stops) */
	int (*yield)(void *arg);
	/* the round is over, repairs written; the scrub may be started again */
	void (*done)(void *arg, const struct scrub_round *r);
};

struct scrub;

struct scrub *scrub_new(void);
/* After txn_cancel_all (no read may still be out). */
void scrub_free(struct scrub *s);
/*
 * Starts a round of at most budget reads of d's devices against c; d
 * and c must stay valid until done runs (the light sweep holds the
 * loop).  done may run before this returns.  extra_rounds: the
 * executor's, for the repairs.  -1 (ENOMEM): nothing started.
 */
int scrub_start(struct scrub *s, struct txn_engine *txn, struct discovery *d,
		struct devcache *c, uint32_t budget, int extra_rounds,
		const struct scrub_hooks *h);
const struct scrub_stats *scrub_get_stats(const struct scrub *s);

#endif
