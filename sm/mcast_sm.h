/*
 * The daemon's side of multicast (issue 17): what the SA's
 * MCMemberRecord family calls after it changed the group database
 * (sm/mcast.h).
 */
#ifndef IBSMD_MCAST_SM_H
#define IBSMD_MCAST_SM_H

#include "mcast.h"

struct sm;

/*
 * The groups changed (a join, a leave, a group created or deleted): the
 * trees and MFT writes follow, coalesced with other changes and never
 * before the SA has answered (sm/mcast_sm.c).
 */
void mcast_sm_changed(struct sm *sm);

/*
 * Group g was created (created 1) or is about to be deleted (0):
 * notices 66/67 to the subscribers (sm/mcast_events.c).
 */
void mcast_sm_group_event(struct sm *sm, const struct mc_group *g, int created);

#endif
