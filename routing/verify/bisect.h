/*
 * The routing quality of the vSwitch paper's Fig. 8 (Section 7.2: the
 * ORCS "bisect" pattern): the end ports given are shuffled and split
 * into two halves of equal size, the i-th of the first half sends one
 * flow to the i-th of the second (an odd one out sends nothing); every
 * flow follows the tables from its port to the destination's base LID;
 * a directed channel crossed by k flows gives each of them 1/k of it,
 * and a flow gets the share of its most loaded channel (a flow the
 * tables drop or loop gets 0).  A run's value is the mean share over
 * its flows; the quality is the mean over the runs: 1 when no two flows
 * ever share a channel, lower as they do.  The runs draw their halves
 * from seed alone, so two tables measured with the same seed see the
 * same flows (paired comparison).
 */
#ifndef IBSMD_BISECT_H
#define IBSMD_BISECT_H

#include <stdint.h>

#include "routing/engine.h"
#include "sm/base/fabric.h"

struct bisect_result {
	double quality;		/* mean over runs of the mean flow share */
	double worst_run;	/* the lowest run's value */
	uint32_t runs, flows;	/* runs, flows a run */
	uint64_t unrouted;	/* flows dropped or looping, over all runs */
};

/*
 * The quality of tables t on f for the end ports ep[0..n-1] (n >= 2,
 * each with a base LID), runs runs (>= 1) from seed.  0, or -1 on
 * ENOMEM or bad arguments.
 */
int bisect_quality(const struct fabric *f, const struct lft_tables *t,
		   const uint32_t *ep, uint32_t n, uint32_t runs,
		   uint64_t seed, struct bisect_result *r);

#endif
