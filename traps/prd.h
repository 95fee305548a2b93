/*
 * The path-record distinguisher (PRD, the thesis's Paper II): after a
 * reroute, which pairs of CA ports now get a different PathRecord from
 * the SA than what was last published -- DLID, SLID, SL, MTU, rate,
 * PacketLifeTime, P_Key -- and which lost their path.  Pure logic over
 * the model and the tables (routing/path.h gives a pair's facts); no
 * MADs, no notices (traps/repath.h sends them).
 *
 * What was last published is kept as a snapshot: a copy of the model and
 * of the tables of the last round (about the size of the tables the
 * daemon already holds; no per-pair state).  A round does not compare
 * every pair: it works from what changed between the snapshot and the
 * new tables --
 *   - a LID whose owner moved, an LFT entry that differs (rows matched
 *     by switch GUID), a switch port whose link is gone, came, or changed
 *     width, speed, MTU or state (then every LID the old row sent out of
 *     that port): the destination's column is dirty;
 *   - a CA port whose own link or LID changed: the source is dirty;
 *   - QoS SL tables that differ: the column is dirty;
 *   - a changed P_Key or switch lifetime (path_switch_ltv()): everything.
 * In a dirty column each switch's path facts to that LID are computed
 * once, old and new (a memoised walk: the least MTU, the set of link
 * rates and the hops on the way); a leaf whose facts are the same in both for every
 * source behind it is skipped whole, and only the sources behind a leaf
 * whose facts differ are resolved with path_resolve(), old and new, and
 * compared field by field.
 *
 * Pairs are (source CA port, destination LID of a CA port), both present
 * in the snapshot and now; a port that came or went is told by trap 64 /
 * 65, not here.  A pair reachable before and not now is an unpath; one
 * whose fields differ, or that was unreachable and is reachable again, a
 * repath.
 */
#ifndef IBSMD_PRD_H
#define IBSMD_PRD_H

#include <stddef.h>
#include <stdint.h>

#include "routing/engine.h"
#include "sm/base/fabric.h"

/* What the SA's records depend on besides the paths. */
struct prd_params {
	uint16_t pkey;		/* P_Key of every PathRecord (no partitions yet) */
	uint8_t ltv;		/* for PacketLifeTime: path_packet_life() */
	uint32_t max_changes;	/* pairs kept in the list (0: no limit) */
	const int *cancel;	/* NULL, or a flag another thread may set:
				   prd_diff() then stops and returns -1 */
};

enum prd_kind {
	PRD_REPATH = 1,		/* a field differs, or the path came back */
	PRD_UNPATH = 2,		/* the destination is in the subnet, not reached */
};

struct prd_change {
	uint32_t src;		/* source end port (index in the new model) */
	uint32_t dst;		/* destination end port (index in the new model) */
	uint32_t slid, dlid;	/* in the new model */
	uint8_t kind;		/* enum prd_kind */
};

struct prd_stats {
	uint32_t columns;	/* destination LIDs of CA ports */
	uint32_t dirty_columns;	/* of those, where something changed */
	uint32_t dirty_sources;	/* CA ports whose own link or LID changed */
	uint32_t leaves_compared;	/* (dirty column, leaf) facts compared */
	uint64_t pairs_resolved;	/* pairs resolved old and new */
	uint64_t repath, unpath;	/* all of them, listed or not */
	int overflow;		/* more than max_changes: the list is cut */
	int first;		/* no snapshot yet: nothing compared */
	uint64_t us;		/* the round's time */
	size_t state_bytes;	/* the snapshot kept */
};

struct prd;

struct prd *prd_new(void);
void prd_free(struct prd *p);

/*
 * Compares (f, t, pp) with the snapshot; *out (malloc'd, freed by the
 * caller; NULL when empty) gets the changed pairs, *n their number (at
 * most pp->max_changes), st the figures.  Without a snapshot nothing is
 * reported (st->first).  The snapshot is not touched: prd_commit() makes
 * (f, t) the published state.  Returns 0, or -1 on ENOMEM or when
 * pp->cancel was set.  Reads p, f and t only: it may run on another
 * thread while nothing changes them.
 */
int prd_diff(struct prd *p, const struct fabric *f, const struct lft_tables *t,
	     const struct prd_params *pp, struct prd_change **out, size_t *n,
	     struct prd_stats *st);
/* Makes a copy of (f, t, pp) the published state.  0, or -1 on ENOMEM. */
int prd_commit(struct prd *p, const struct fabric *f,
	       const struct lft_tables *t, const struct prd_params *pp);
/*
 * A copy of f and t as the distinguisher keeps them (the tables without
 * their SL-to-VL tables), for a caller that runs prd_diff() on another
 * thread and then prd_commit_move()s them.  0, or -1 on ENOMEM (nothing
 * to free).
 */
int prd_copy(struct fabric *df, struct lft_tables *dt, const struct fabric *f,
	     const struct lft_tables *t);
/* The same without the copy: f and t move into p (and are zeroed). */
void prd_commit_move(struct prd *p, struct fabric *f, struct lft_tables *t,
		     const struct prd_params *pp);
/* Bytes of the snapshot. */
size_t prd_state_bytes(const struct prd *p);

#endif
