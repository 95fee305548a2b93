/*
 * Repath / unpath signalling after a reroute (see paths.h).  Runs on the
 * loop, once per reroute, after the LFTs are programmed: the notices never
 * precede the tables they describe.  The two trap 128s of one failed link
 * make one heavy sweep (sm/recv.c debounces them), so one round.
 */
#include "paths.h"

#include <stdlib.h>

#include "../routing/path.h"
#include "../traps/notify.h"
#include "../traps/prd.h"
#include "../traps/repath.h"
#include "daemon.h"
#include "log.h"

/* Pairs a round lists; beyond it repath-only and hybrid-affected act as hybrid. */
#define PRD_MAX_CHANGES 1000000

static int publish(void *ctx, const struct notice *nt, uint32_t src)
{
	return notifier_publish(ctx, nt, src);
}

static int publish_to(void *ctx, uint32_t lid, const struct notice *nt,
		      uint32_t src)
{
	return notifier_publish_to(ctx, lid, nt, src);
}

void sm_paths_rerouted(struct sm *sm)
{
	const struct fabric *f = &sm->sub.model->f;
	const struct lft_tables *t = &sm->sub.lft;
	if (!t->port)
		return;
	if (!sm->prd && !(sm->prd = prd_new())) {
		log_err("paths: out of memory");
		return;
	}
	struct prd_params pp = {
		.pkey = 0xffff,
		.ltv = path_switch_ltv(f, (uint8_t)sm->cfg.subnet_timeout),
		.max_changes = PRD_MAX_CHANGES,
	};
	struct prd_change *ch;
	size_t n;
	struct prd_stats st;
	if (prd_diff(sm->prd, f, t, &pp, &ch, &n, &st) < 0) {
		log_err("paths: out of memory comparing the routes; no notices");
		return;
	}
	struct repath_params rp = {
		.mode = (enum repath_mode)sm->cfg.events_signalling,
		.sm_lid = (uint16_t)sm->sub.sm_lid,
		.subnet_prefix = sm->cfg.subnet_prefix,
		.pkey = pp.pkey,
		.ltv = pp.ltv,
	};
	for (int i = 0; i < 8; i++) {
		rp.sm_gid[i] = (uint8_t)(sm->cfg.subnet_prefix >> (56 - 8 * i));
		rp.sm_gid[8 + i] = (uint8_t)(sm->tr.port_guid >> (56 - 8 * i));
	}
	struct repath_stats rs = { 0 };
	if (sm->notify)
		repath_round(&rp, f, t, ch, n, &st, &(struct repath_out){
			sm->notify, publish, publish_to }, &rs);
	free(ch);
	if (st.first)
		log_info("paths: first routes noted (%s): %u notices, %llu Reports queued",
			 repath_mode_names[rp.mode], rs.notices,
			 (unsigned long long)rs.reports);
	else
		log_info("paths: %llu repath, %llu unpath%s in %llu us (%u of %u destinations, %u sources, %llu pairs resolved); %s: %u notices, %llu Reports queued%s",
			 (unsigned long long)st.repath, (unsigned long long)st.unpath,
			 st.overflow ? " (list cut)" : "", (unsigned long long)st.us,
			 st.dirty_columns, st.columns, st.dirty_sources,
			 (unsigned long long)st.pairs_resolved,
			 repath_mode_names[rp.mode], rs.notices,
			 (unsigned long long)rs.reports,
			 rs.fell_back ? " (sent as hybrid)" : "");
	if (prd_commit(sm->prd, f, t, &pp) < 0) {
		/* the next round compares with nothing rather than with stale routes */
		log_err("paths: out of memory keeping the routes signalled");
		prd_free(sm->prd);
		sm->prd = NULL;
	}
}

void sm_paths_free(struct sm *sm)
{
	prd_free(sm->prd);
	sm->prd = NULL;
}
