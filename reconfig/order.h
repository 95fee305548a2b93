/*
 * Ordered LFT transitions: in which wave each changed LFT block is
 * written so that no state the switches pass through -- after any wave,
 * and after any of a wave's Sets in any order -- forwards a LID in a loop.
 *
 * The rule, per destination LID: a switch takes its new entry only once
 * the new route from its new next hop is in place, i.e. every switch
 * along it that changes has been written in an earlier wave.  A packet
 * then follows old entries until it meets a switch already changed, and
 * new ones from there on: a prefix of an old route and a suffix of a new
 * one, each loop-free, and the suffix never leads back to a switch not
 * yet changed.  A switch that drops the LID now (its entry LFT_DROP, as
 * held) may change before its new next hop: until it changes it forwards
 * nothing, afterwards it is in place.  So the first configuration of
 * fresh switches (every entry dropped) is one wave.
 *
 * Blocks: a block's 64 entries are written by one Set, so a block goes in
 * the latest wave any of its changed entries needs, and the switches that
 * wait for one of its entries wait for that wave.  When the blocks of two
 * switches wait for each other (one LID's new route runs through a
 * switch towards the other, another LID's the other way round), no wave
 * per block exists: each changed entry then gets the earliest wave its
 * route allows, and a block whose entries fall in several waves is written
 * once per wave, each time with the entries due by then and the others as
 * held (dropped where unknown).
 *
 * An entry the SM does not know the switch holds (no record) is taken as
 * changed and as forwarding somewhere: the safe assumption for loops.
 *
 * Deadlock: a packet that meets a changed switch after unchanged ones
 * turns from an old route onto a new one, a dependency that neither table
 * has.  For every wave, the dependencies that any mix of what its
 * switches may hold can make (before their wave: as held; after: as
 * wanted; during: either) are put together, every VL taken as one; where
 * they close a cycle, the LIDs that make a dependency on it are drained:
 * wave 0 drops their changing entries, wave 1 writes them.  While their
 * drop lands a packet to such a LID follows held entries until one drops
 * it; from wave 1 on, wanted ones until one drops it: the old tables'
 * dependencies or the new tables', never a mix, at the cost of the
 * packets to those LIDs dropped between the two waves.  The order is
 * computed again without them and checked again, up to DRAIN_ROUNDS
 * rounds; then, or once half the changing LIDs are drained, all are.
 * Entries not known count as dropping for this check.  When the held or
 * the wanted tables themselves have a cycle with every VL taken as one --
 * an engine that breaks cycles with VLs (dfsssp, dor on tori) or promises
 * nothing (minhop) -- the check cannot tell, and the order (free of
 * loops) is kept.
 *
 * Pure functions over the fabric model and the tables; no I/O.
 */
#ifndef IBSMD_ORDER_H
#define IBSMD_ORDER_H

#include <stdint.h>

#include "routing/engine.h"
#include "sm/base/fabric.h"

#define ORDER_MAX_WAVES 200	/* waves of LFT writes at most (a plan has 256) */

/* What a switch holds, as far as the SM knows: per row, t's layout. */
struct order_held {
	const uint8_t *port;		/* n_sw * (max_lid + 1) entries as held */
	const uint8_t *known;		/* per row * blocks: 1 when the block is known */
	uint32_t blocks;		/* blocks per row in known[] */
};

enum order_how {
	ORDER_W_WHOLE,		/* the block as t has it */
	ORDER_W_MIX,		/* entries due later as held or dropped: order_payload() */
};

struct order_write {
	uint32_t row, block;
	uint16_t wave;
	uint8_t how;		/* enum order_how */
};

struct order_result {
	struct order_write *w;	/* by wave, then row, then block */
	uint32_t n_w;
	uint32_t waves;		/* 0 when nothing changes */
	uint64_t entries;	/* entries that change */
	uint32_t blocks;	/* blocks that change */
	uint32_t split;		/* blocks written in more than one wave */
	uint32_t deepest_lid;	/* a LID whose routes needed the most waves */
	uint8_t *entry_wave;	/* per entry: the wave it is written in (changing ones) */
	uint8_t *drained_lid;	/* per LID: drained (above) */
	int dep_checked;	/* the dependency check could say (see above) */
	int drained;		/* some LIDs were drained */
	uint32_t drained_lids;	/* how many */
	uint32_t cycle_wave;	/* drained: the wave where a cycle was found first */
	uint32_t max_lid;
};

/*
 * Orders the change from what the switches hold (h; NULL: nothing known)
 * to t.  Blocks 0..top/64 of each row are compared, top = t->max_lid.
 * 0, or -1 on ENOMEM or when more than ORDER_MAX_WAVES would be needed
 * (r empty).
 */
int order_lft(const struct fabric *f, const struct lft_tables *t,
	      const struct order_held *h, struct order_result *r);
/*
 * The 64 entries write i carries: t's (ORDER_W_WHOLE); or t's where the
 * entry's wave is at most the write's, else LFT_DROP for a drained LID
 * and as held (LFT_DROP where unknown) for the others (ORDER_W_MIX).
 */
void order_payload(const struct lft_tables *t, const struct order_held *h,
		   const struct order_result *r, uint32_t i, uint8_t *out /* [64] */);
void order_result_free(struct order_result *r);

/* How the last change was ordered: for the log and ibsmctl status and vm. */
struct lft_order_stats {
	uint32_t waves;		/* waves of LFT writes (0: nothing changed) */
	uint32_t blocks;	/* blocks that change */
	uint32_t writes;	/* LFT Sets planned (a split or drained block: more than one) */
	uint64_t entries;	/* entries that change */
	uint32_t split;		/* blocks written in more than one wave */
	uint32_t deepest_lid;	/* a LID whose routes needed the most waves */
	uint32_t drained;	/* LIDs drained: without, a wave could close a cycle */
	uint32_t cycle_wave;	/* drained: the first such wave found */
	int dep_checked;	/* the dependency check could tell */
	uint64_t plan_us;	/* planning: what is held read, ordered, planned (a VM: its whole plan) */
};

/* What r says of the change, for the log and ibsmctl (writes: r->n_w). */
void order_stats(const struct order_result *r, struct lft_order_stats *st);

#endif
