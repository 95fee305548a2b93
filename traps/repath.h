/*
 * Repath (69) and unpath (68) signalling after a reroute, in the modes of
 * the thesis's Paper II (policy events.signalling, ibsmd.yaml(5)):
 *
 *   wildcard         one wildcard 69 to every subscriber after every
 *                    reroute, whether anything changed or not (method A)
 *   repath-only      for every pair the distinguisher (prd.h) reports,
 *                    one 69 (or 68) carrying that pair's record to each
 *                    of its two endpoints that subscribed (method B)
 *   hybrid           if any pair changed, one wildcard 69 to every
 *                    subscriber, which re-queries the SA (method C)
 *   hybrid-affected  as hybrid, but only to the subscribers that are an
 *                    endpoint of a changed pair
 *
 * A round where no pair changed sends nothing except in wildcard mode.
 * When the distinguisher's list was cut (more changes than it keeps),
 * repath-only and hybrid-affected send what hybrid sends.
 *
 * Knows notices and the model; sends through two callbacks (the daemon
 * gives notifier_publish / notifier_publish_to, the tests a recorder).
 */
#ifndef IBSMD_REPATH_H
#define IBSMD_REPATH_H

#include <stddef.h>
#include <stdint.h>

#include "routing/engine.h"
#include "sm/base/fabric.h"
#include "traps/notice.h"
#include "traps/prd.h"

enum repath_mode {	/* in the order of the policy's names */
	REPATH_HYBRID,
	REPATH_WILDCARD,
	REPATH_ONLY,
	REPATH_HYBRID_AFFECTED,
};

struct repath_out {
	void *ctx;
	/* to every matching subscription; returns the Reports queued */
	int (*publish)(void *ctx, const struct notice *nt, uint32_t source_lid);
	/* only to the subscriptions of the port at lid */
	int (*publish_to)(void *ctx, uint32_t lid, const struct notice *nt,
			  uint32_t source_lid);
};

struct repath_params {
	enum repath_mode mode;
	uint16_t sm_lid;
	uint8_t sm_gid[16];
	uint64_t subnet_prefix;
	uint16_t pkey;		/* as the SA gives (prd_params) */
	uint8_t ltv;		/* for PacketLifeTime (prd_params) */
	/*
	 * Partitions: the P_Key and SL of the record of the path from port
	 * src to port dst as the SA answers it, over pkey and the routing's
	 * SL (given in *sl); NULL: pkey for every pair.
	 */
	void (*part)(void *ctx, uint32_t src, uint32_t dst, uint16_t *pkey,
		     uint8_t *sl);
	void *part_ctx;
};

struct repath_stats {
	uint32_t notices;	/* notices built and handed to the notifier */
	uint64_t reports;	/* Reports the notifier queued for them */
	int wildcard;		/* a wildcard went out */
	int fell_back;		/* the list was cut: sent as hybrid */
};

/*
 * One signalling round for the reroute that made (f, t): ch[0..n) and ps
 * from prd_diff() on them.  Returns 0.
 */
int repath_round(const struct repath_params *rp, const struct fabric *f,
		 const struct lft_tables *t, const struct prd_change *ch,
		 size_t n, const struct prd_stats *ps,
		 const struct repath_out *o, struct repath_stats *st);

/*
 * The record of one changed pair as a 68/69 notice carries it: the new
 * facts of the path for a repath, the pair alone (SLID, DLID, GIDs) for an
 * unpath.
 */
void repath_record(const struct repath_params *rp, const struct fabric *f,
		   const struct lft_tables *t, const struct prd_change *c,
		   struct notice_path *np);

/* The policy's names, indexed by enum repath_mode, NULL-terminated. */
extern const char *const repath_mode_names[];

#endif
