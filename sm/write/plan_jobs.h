/*
 * The LFT writes of a job's start or end (sm/jobs.c): the blocks where
 * the new tables differ from those the switches hold, in the waves of the
 * LFT order (sm/write/plan_lft.h, reconfig/order.h): a switch changes a
 * LID's entry only once its new next hop forwards on the new route.  A
 * job changes only up entries of its own hosts' LIDs
 * (routing/jobs/jobroute.h), so on a tree that is from the top down, and
 * only where an upper switch's entry changes too.
 */
#ifndef IBSMD_PLAN_JOBS_H
#define IBSMD_PLAN_JOBS_H

#include <stdint.h>

#include "routing/engine.h"
#include "sm/base/fabric.h"
#include "sm/write/plan.h"
#include "sm/write/plan_lft.h"

struct plan_jobs_count {
	uint32_t blocks;	/* LFT blocks planned */
	uint32_t switches;	/* switches they go to */
	uint32_t waves;		/* waves used */
	struct lft_order_stats order;	/* how they were ordered */
};

/*
 * Plans into p (empty, its tables set to to) every 64-LID block of to
 * that differs from from (same rows and switches; from may have a
 * smaller max_lid: the rest counts as different), in the LFT order's
 * waves, and seals it.  0, or -1 on ENOMEM.
 */
int plan_jobs_build(struct plan *p, const struct fabric *f,
		    const struct lft_tables *from, const struct lft_tables *to,
		    struct plan_jobs_count *c);

#endif
