/*
 * The IPoIB broadcast groups and the partitions' own groups
 * (sm/mcast/ipoib.h): the SM makes them, as OpenSM does for
 * partitions.conf's `ipoib` flag and mgid= lines (osm_prtn.c), so that
 * `saquery -g` lists them before any host joins.
 */
#include <stdlib.h>
#include <string.h>

#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/mcast/ipoib.h"
#include "sm/mcast/mcast_sm.h"

#define IPOIB_MAX (CFG_MAX_PARTS + 1 + CFG_MAX_MGROUPS + CFG_MAX_DEF_MGROUPS)

/* The broadcast group the policy asks for partition pkey15. */
static void wanted_group(const struct config *c, const struct cfg_partition *cp,
			 uint16_t pkey15, struct mc_group *g)
{
	memset(g, 0, sizeof(*g));
	g->pkey = (uint16_t)(pkey15 | 0x8000);
	mc_ipoib_mgid(g->pkey, g->mgid);
	g->mtu = (uint8_t)(cp && cp->mtu ? cp->mtu : c->mc_mtu);
	g->rate = (uint8_t)(cp && cp->rate ? cp->rate : c->mc_rate);
	g->qkey = (uint32_t)(cp && cp->qkey >= 0 ? cp->qkey : c->mc_qkey);
	g->sl = (uint8_t)(cp && cp->sl >= 0 ? cp->sl : c->mc_sl);
	g->scope = 2;			/* link-local: HopLimit 0 */
	g->plt = (uint8_t)c->subnet_timeout;
	g->well_known = 1;
}

/*
 * A group partitions[].mgroups (or default_partition.mgroups) asks for,
 * of the partition pkey15 whose SL is psl (-1: none).  Its MGID's P_Key
 * bits were put in when the policy was read (config.c).
 */
static void wanted_mgroup(const struct config *c, const struct cfg_mgroup *mg,
			  uint16_t pkey15, int psl, struct mc_group *g)
{
	memset(g, 0, sizeof(*g));
	memcpy(g->mgid, mg->mgid, sizeof(g->mgid));
	g->pkey = (uint16_t)(pkey15 | 0x8000);
	g->mtu = (uint8_t)(mg->mtu ? mg->mtu : c->mc_mtu);
	g->rate = (uint8_t)(mg->rate ? mg->rate : c->mc_rate);
	/* OpenSM's: IPoIB's Q_Key for IP groups, 0 for others */
	g->qkey = (uint32_t)(mg->qkey >= 0 ? mg->qkey :
			     mc_is_ipoib_mgid(mg->mgid) ? c->mc_qkey : 0);
	g->sl = (uint8_t)(mg->sl >= 0 ? mg->sl : psl >= 0 ? psl : c->mc_sl);
	g->scope = mg->mgid[1] & 0x0f;
	g->plt = (uint8_t)c->subnet_timeout;
	g->well_known = 1;
}

static int same_params(const struct mc_group *a, const struct mc_group *b)
{
	return a->mtu == b->mtu && a->rate == b->rate && a->qkey == b->qkey &&
	       a->sl == b->sl && a->plt == b->plt && a->pkey == b->pkey;
}

static int create(struct sm *sm, const struct mc_group *w, int notify)
{
	const char *err;
	char s[48];
	mc_mgid_str(w->mgid, s, sizeof(s));
	struct mc_group *g = mc_create(&sm->mc, w, &err);
	if (!g) {
		log_err("multicast: group %s not created: %s", s, err);
		return -1;
	}
	log_info("multicast: group %s, MLID 0x%04x, P_Key 0x%04x",
		 s, g->mlid, g->pkey);
	if (notify)
		mcast_sm_group_event(sm, g, 1);
	return 1;
}

/* Makes or keeps one wanted group; 1 when something changed. */
static int sync_one(struct sm *sm, const struct mc_group *w, int notify)
{
	struct mc_group *g = mc_find_mgid(&sm->mc, w->mgid);
	if (!g)
		return create(sm, w, notify) > 0;
	g->well_known = 1;	/* a host may have made it first: ours now */
	if (same_params(g, w))
		return 0;
	if (g->n_members) {
		char s[48];
		mc_mgid_str(g->mgid, s, sizeof(s));
		log_warn("multicast: group %s has members; its new parameters apply once it is empty",
			 s);
		return 0;
	}
	if (notify)
		mcast_sm_group_event(sm, g, 0);
	mc_delete(&sm->mc, g);
	return create(sm, w, notify) >= 0;
}

void mcast_ipoib_sync(struct sm *sm, int notify)
{
	const struct config *c = &sm->cfg;
	struct mc_group *want = calloc(IPOIB_MAX, sizeof(*want));
	uint32_t n = 0;
	int changed = 0;

	if (!want) {
		log_err("multicast: no memory for the policy's groups; kept as they are");
		return;
	}
	if (c->mc_default_ipoib)
		wanted_group(c, NULL, PART_DEFAULT_PKEY, &want[n++]);
	for (uint32_t i = 0; i < c->n_def_mgroups && n < IPOIB_MAX; i++)
		wanted_mgroup(c, &c->def_mgroups[i], PART_DEFAULT_PKEY, -1, &want[n++]);
	for (int i = 0; i < c->n_parts && n < IPOIB_MAX; i++) {
		const struct cfg_partition *cp = &c->parts[i];
		if (cp->ipoib)
			wanted_group(c, cp, cp->pkey, &want[n++]);
		for (uint32_t j = 0; j < cp->mg_n && n < IPOIB_MAX &&
		     cp->mg_first + j < c->n_mgroups; j++)
			wanted_mgroup(c, &c->mgroups[cp->mg_first + j], cp->pkey,
				      cp->sl, &want[n++]);
	}
	for (uint32_t i = 0; i < n; i++)
		changed |= sync_one(sm, &want[i], notify);
	/* broadcast groups the policy no longer asks for: the hosts' now */
	for (uint32_t i = sm->mc.n; i-- > 0;) {
		struct mc_group *g = sm->mc.g[i];
		uint32_t k = 0;
		while (k < n && memcmp(want[k].mgid, g->mgid, 16))
			k++;
		if (!g->well_known || k < n)
			continue;
		g->well_known = 0;
		if (mc_has_full_member(g))
			continue;
		if (notify)
			mcast_sm_group_event(sm, g, 0);
		mc_delete(&sm->mc, g);
		changed = 1;
	}
	free(want);
	if (changed && notify)
		mcast_sm_changed(sm);
}
