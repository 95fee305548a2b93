/*
 * The daemon's side of multicast: what the SA's
 * MCMemberRecord family calls after it changed the group database
 * (sm/model/mcgroups.h).
 */
#ifndef IBSMD_MCAST_SM_H
#define IBSMD_MCAST_SM_H

#include <stdio.h>

#include "sm/model/mcgroups.h"
#include "sm/write/plan_mcast.h"

struct sm;
struct program_stats;

/*
 * The groups changed (a join, a leave, a group created or deleted): the
 * trees and MFT writes follow, coalesced with other changes and never
 * before the SA has answered (sm/mcast/mcast_sm.c).
 */
void mcast_sm_changed(struct sm *sm);
/* A run is scheduled or its writes are going (tests wait for 0). */
int mcast_sm_pending(const struct sm *sm);
/*
 * The database gen the MFTs hold: a group whose gen is above it changed
 * after the last MFT writes that are over, and its entries are being
 * written or about to be (ibsmctl verify does not judge them).
 */
uint64_t mcast_sm_settled_gen(const struct sm *sm);
/* The last run's executor statistics (mft_sets ...), NULL before any. */
const struct program_stats *mcast_sm_last(const struct sm *sm);
/* The runs between sweeps, timed (tests/tools/emumc.c reports them). */
struct mcast_sm_stats {
	uint32_t runs;			/* plans made and started */
	uint64_t trees_computed;	/* over all runs (the rest were kept) */
	double plan_ms_last, plan_ms_total;	/* plan_mcast_kept() alone */
	struct mcast_plan_stats last;	/* the last run's */
};
const struct mcast_sm_stats *mcast_sm_stats(const struct sm *sm);
/*
 * The trees kept are forgotten: the next run computes every tree (a VM's
 * writes moved ports without a heavy sweep, and a VM that joined by its
 * vGUID is a member at its new port; a heavy sweep's new model is seen
 * by the run itself).
 */
void mcast_sm_forget_trees(struct sm *sm);
/*
 * VMs came or went but no group member among them: the trees stay, only
 * the map of member GUIDs to ports is built again by the next run (a VM
 * that joins later is found at its port).
 */
void mcast_sm_forget_ports(struct sm *sm);
/*
 * on 0: every run recomputes every tree (emumc -A measures the kept
 * trees against it); 1, the default: trees kept.  0, or -1 (ENOMEM).
 */
int mcast_sm_keep_trees(struct sm *sm, int on);
/*
 * --verify: every group's tree as the SM computes it, checked by
 * routing/verify/verify_mcast.h; a line per failure and a summary on out.
 * Returns the groups that failed, -1 on ENOMEM.
 */
int mcast_sm_verify(struct sm *sm, FILE *out);
void mcast_sm_free(struct sm *sm);
/*
 * Into ibsmctl status's object o: "multicast", the groups, the MLIDs a
 * new group may take (the switches' smallest MulticastFDBCap), the
 * groups past it (no tree) and the creates refused, by bound.
 */
struct json_t;
void mcast_to_ctl(const struct sm *sm, struct json_t *o);

/*
 * Group g was created (created 1) or is about to be deleted (0):
 * notices 66/67 to the subscribers (sm/sa/notices_mc.c).
 */
void mcast_sm_group_event(struct sm *sm, const struct mc_group *g, int created);

#endif
