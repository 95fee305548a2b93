/*
 * Notices 66/67 (multicast group created / deleted) (sm/mcast_sm.h).
 * SEAM: filled by the notices work of issue 17.
 */
#include "daemon.h"
#include "mcast_sm.h"

void mcast_sm_group_event(struct sm *sm, const struct mc_group *g, int created)
{
	(void)sm;
	(void)g;
	(void)created;
}
