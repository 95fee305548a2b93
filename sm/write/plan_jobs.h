/*
 * The LFT writes of a job's start or end (sm/jobs.c): the blocks where
 * the new tables differ from those the switches hold, in waves from the
 * top of the tree down.  A job changes only up entries of its own hosts'
 * LIDs (routing/jobs/jobroute.h); a switch's level is one more than the
 * lowest of the switches below it (leaves, the switches with CA ports,
 * are level 1), and a wave holds one level, the highest first.  So a
 * switch whose entry for a LID changes writes it only after every switch
 * above it has its new entry: the new next hop already forwards on the
 * new route, and a packet meets old entries above new ones only, which
 * in a tree routed up then down never loop (each old or new up entry
 * climbs, each ancestor's way down is unchanged).
 */
#ifndef IBSMD_PLAN_JOBS_H
#define IBSMD_PLAN_JOBS_H

#include <stdint.h>

#include "routing/engine.h"
#include "sm/base/fabric.h"
#include "sm/write/plan.h"

struct plan_jobs_count {
	uint32_t blocks;	/* LFT blocks planned */
	uint32_t switches;	/* switches they go to */
	uint32_t waves;		/* waves used */
};

/*
 * Plans into p (empty, its tables set to to) every 64-LID block of to
 * that differs from from (same rows and switches; from may have a
 * smaller max_lid: the rest counts as different), each switch's blocks
 * in the wave of its level, the highest level in wave 0.  0, or -1 on
 * ENOMEM.
 */
int plan_jobs_build(struct plan *p, const struct fabric *f,
		    const struct lft_tables *from, const struct lft_tables *to,
		    struct plan_jobs_count *c);

#endif
