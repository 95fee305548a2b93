/*
 * Multicast trees and MFT writes after the group database changed
 * (sm/mcast_sm.h).  SEAM: filled by the multicast-trees work of issue 17;
 * until then a change is only recorded in db->gen.
 */
#include "daemon.h"
#include "mcast_sm.h"

void mcast_sm_changed(struct sm *sm)
{
	(void)sm;
}
