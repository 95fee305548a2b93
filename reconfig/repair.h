/*
 * Route repair after a loss: when links or ports went away and nothing
 * was added, keep every forwarding entry whose old path still reaches its
 * destination, and take the freshly computed entry only where the old
 * path is broken.  The switches then need only the LFT blocks that hold
 * a broken entry, instead of every block a full reroute reshuffles
 * (ftree rebalances all destinations when one link goes).
 *
 * A switch's old path to a LID is intact when following the old entries
 * from it, over links that still exist, reaches the LID's port.  Intact
 * paths are closed under suffix, so a repaired path is a prefix of the
 * fresh path (through switches whose old path broke) followed by an old
 * path: it reaches its destination and has no loop whenever the fresh
 * tables do.  Deadlock freedom of the mix is not promised here: the
 * caller checks the channel dependencies when the engine promises it.
 *
 * Pure functions over the fabric model and the tables; no I/O.
 */
#ifndef IBSMD_REPAIR_H
#define IBSMD_REPAIR_H

#include <stddef.h>
#include <stdint.h>

#include "routing/engine.h"
#include "sm/base/fabric.h"

struct repair_stats {
	uint32_t columns;	/* LIDs whose old routes were followed */
	uint32_t broken;	/* of those, LIDs some switch's old path lost */
	uint64_t kept;		/* entries taken from the old tables */
	uint64_t fresh;		/* entries taken from the fresh tables */
	uint64_t moved;		/* entries that differ from the old tables */
	uint64_t fresh_moved;	/* what the fresh tables alone would have moved */
};

enum repair_change {
	REPAIR_GAIN,	/* something new: route from scratch */
	REPAIR_LOSS,	/* only losses: repair_routes() */
	REPAIR_SAME,	/* the same nodes, links and LIDs: repair_keep() */
};

/*
 * Compares the fabrics: REPAIR_GAIN, with the first new thing in why,
 * when new_f has a node (GUID, type, ports), a link (between those ports)
 * or a LID (naming a port) that old_f did not have -- a link or node that
 * came back should carry traffic again; else REPAIR_SAME when nothing was
 * lost either, else REPAIR_LOSS.
 */
enum repair_change repair_compare(const struct fabric *old_f,
				  const struct fabric *new_f,
				  char *why, size_t whylen);

/*
 * For REPAIR_SAME: the old tables, row by row (by switch GUID), for
 * new_f's node numbering.  Returns 0, or -1 on ENOMEM.
 */
int repair_keep(const struct fabric *old_f, const struct lft_tables *old_t,
		const struct fabric *new_f, struct lft_tables *t);

/*
 * t holds fresh tables for new_f (LIDs indexed); every entry whose old
 * path (old_t on old_f) is intact in new_f is replaced by the old one.
 * Returns 0, or -1 on ENOMEM with t unchanged.
 */
int repair_routes(const struct fabric *old_f, const struct lft_tables *old_t,
		  const struct fabric *new_f, struct lft_tables *t,
		  struct repair_stats *st);

#endif
