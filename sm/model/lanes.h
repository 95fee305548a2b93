/*
 * dFtree's two lanes (congestion.mode dftree, ibsmd.yaml(5)): the
 * hot-spot set and the SL a path answer carries.  The heavy sweep writes
 * two data VLs once (sm/model/qos.c): SL fast_sl on VL fast_sl, SL
 * slow_sl on VL slow_sl, every other SL on the fast VL.  No table is
 * written at run time: a flow moves lanes by its SL alone.  While a
 * destination is a hot-spot, PathRecords and MultiPathRecords towards it
 * answer slow_sl, so that a new flow to it goes slow too (sm/sa/sa_path.c);
 * otherwise fast_sl.  The dFtree loop (which finds the hot-spots from
 * the PMA counters) marks and clears them with lanes_set_hot().
 *
 * Kept in struct subnet (sm/subnet.h); read and changed on the event
 * loop only.
 */
#ifndef IBSMD_LANES_H
#define IBSMD_LANES_H

#include <stdint.h>

#include "sm/model/config.h"

struct lanes {
	int on;			/* congestion.mode dftree, as last applied */
	uint8_t fast_sl, slow_sl;
	uint32_t *hot;		/* hot-spot LIDs, ascending, each once */
	uint32_t n_hot, cap;
	/* the last QoS apply: ports whose link cannot run the higher lane's
	   VL (they carry every SL on the fast VL: sm/model/qos.c) */
	uint32_t ports_refused;
};

/*
 * Takes congestion.mode, fast_sl and slow_sl from c (the heavy sweep,
 * with the tables it writes); a mode turned off forgets the hot-spots.
 */
void lanes_configure(struct lanes *l, const struct config *c);
void lanes_free(struct lanes *l);

/*
 * Marks (on) or clears LID lid as a hot-spot.  Returns 1 when the set
 * changed, 0 when it already was so, -1 when out of memory (not marked).
 */
int lanes_set_hot(struct lanes *l, uint32_t lid, int on);
int lanes_is_hot(const struct lanes *l, uint32_t lid);

/*
 * The SL of a path answer towards dlid, whose port's base LID is
 * base_lid: slow_sl while either is a hot-spot, fast_sl otherwise, when
 * the lanes are on; sl (the routing's) when they are off or l is NULL.
 */
uint8_t lanes_path_sl(const struct lanes *l, uint32_t dlid, uint32_t base_lid,
		      uint8_t sl);

#endif
