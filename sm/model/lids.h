/*
 * LID assignment: a pure function of the fabric, the persisted GUID->LID
 * table and the LMC.  In order of precedence: the persisted LID of a port,
 * the LID the port already holds, then the lowest free aligned range, each
 * pass in port-GUID order so that the result does not depend on the order
 * discovery ran in.  Persisted LIDs of absent ports stay reserved until
 * present ports need them: when the free space is gone, the reservation
 * of the GUID seen longest ago is taken back first (present ports win).
 * An idle VF (FPORT_NOLID) gets no LID, is not counted and its old entry
 * is neither kept nor reserved.
 */
#ifndef IBSMD_LIDS_H
#define IBSMD_LIDS_H

#include "sm/base/fabric.h"

#define LID_UCAST_MAX (FAB_MLID_BASE - 1)	/* 0xBFFF */

struct lid_report {
	uint32_t kept_persisted;	/* from the state file */
	uint32_t kept_existing;		/* already on the port */
	uint32_t assigned;		/* newly given */
	uint32_t conflicts;		/* persisted or existing LIDs not honoured */
	uint32_t reclaimed;		/* absent ports' reservations taken back */
	uint32_t exhausted;		/* ports left without a LID (lid 0) */
	uint32_t vf_shared;		/* VF ports left without one when the
					 * space ran out (they go last): shared-
					 * LID VF slots, not counted above */
};
/*
 * Sets ports[].lid for every end port, f->lmc, and rebuilds the LID
 * index.  persisted may be NULL.  Returns 0 or -1 (ENOMEM).
 */
int lids_assign(struct fabric *f, const struct guid_map *persisted,
		uint8_t lmc, struct lid_report *rep);
/*
 * A LID for a VM created on the idle VF pi under the dynamic scheme: the
 * lowest free aligned range in f (the LIDs its end ports hold) that no
 * absent port reserves in persisted (may be NULL).  0: no room (or ENOMEM).
 * Nothing is recorded: the caller puts the VF's new LID in the model.
 */
uint32_t lids_alloc_vm(const struct fabric *f, const struct guid_map *persisted,
		       uint32_t pi);
/*
 * Adds every end port's GUID -> LID to m, with now (seconds since the
 * epoch) as its last-seen time in m's second value.  Entries of absent
 * ports stay, but those whose LID a present port now holds (reclaimed) are
 * dropped and logged.  Returns 0 or -1 (ENOMEM).
 */
int lids_record_at(const struct fabric *f, struct guid_map *m, uint32_t now);
/* lids_record_at() with the current time. */
int lids_record(const struct fabric *f, struct guid_map *m);

#endif
