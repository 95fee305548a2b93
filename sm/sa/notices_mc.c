/*
 * Notices 66/67 (multicast group created / deleted) (sm/mcast/mcast_sm.h),
 * as OpenSM sends them (osm_multicast.c, osm_inform.c): a generic notice
 * of type 3 from the SA (producer 4), issued by the SM's LID and GID,
 * the group's MGID in the GID field of its data (IBA 14.2.5.1).  A
 * subscription naming a GID matches the MGID; a LID range, the issuer
 * (the SM's LID).  Only subscribers whose port holds the group's P_Key,
 * as a full or a limited member, are told (o13-17.1.1): the SA's view
 * of the partitions decides; without one every subscriber is.
 */
#include <string.h>

#include "mad/sa.h"
#include "traps/notify.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/mcast/mcast_sm.h"
#include "sm/model/part_resolve.h"
#include "sm/sa/sa_server.h"

#define MAX_PKEYS 64	/* a port's P_Key table entries looked at */

struct may_see {
	const struct sa_view *v;
	uint16_t pkey;		/* the group's, 15 bits */
};

/* The subscriber's port holds the group's P_Key (or nothing can tell). */
static int holds_group_pkey(void *ctx, uint32_t lid)
{
	const struct may_see *m = ctx;
	/* an invalid P_Key (0) checks nothing, as OpenSM's osm_physp_has_pkey */
	if (!m->v || !m->v->parts || !m->v->f || !m->pkey)
		return 1;
	uint32_t pi = fabric_lid_port(m->v->f, lid);
	if (pi == FAB_NONE)
		return 0;	/* not in the subnet as the SA sees it */
	uint16_t keys[MAX_PKEYS];
	unsigned n = part_pkeys(m->v->parts, m->v->f, pi, keys, MAX_PKEYS);
	for (unsigned k = 0; k < n; k++)
		if ((keys[k] & 0x7fff) == m->pkey)
			return 1;
	return 0;
}

void mcast_sm_group_event(struct sm *sm, const struct mc_group *g, int created)
{
	if (!sm->notify || !g)
		return;
	uint16_t trap = created ? TRAP_MC_CREATED : TRAP_MC_DELETED;
	struct notice nt;
	uint8_t sm_gid[16];
	sa_put64(sm_gid, sm->cfg.subnet_prefix);
	sa_put64(sm_gid + 8, sm->tr.port_guid);
	notice_init_sm(&nt, trap, (uint16_t)sm->sub.sm_lid, sm_gid);
	notice_set_gid(&nt, g->mgid);
	struct may_see m = { .v = sa_get_view(sm), .pkey = g->pkey & 0x7fff };
	int q = notifier_publish_if(sm->notify, &nt, holds_group_pkey, &m);
	char mgid[40];
	mc_mgid_str(g->mgid, mgid, sizeof(mgid));
	log_info("notice %u: multicast group %s (MLID 0x%04x, P_Key 0x%04x) %s: %d Reports queued",
		 trap, mgid, g->mlid, g->pkey, created ? "created" : "deleted", q);
}
