/*
 * A job's channel loads on the base tables as they are (system-wide
 * D-mod-K in the offline job replay): every flow s -> d walked from s's
 * port along the LFT entries for d's base LID, its weight added to each
 * directed channel it leaves by -- s's injection into its leaf and each
 * switch output port -- until d's port.  A channel is the fabric port
 * index of the port it leaves by.  Pure.
 */
#ifndef IBSMD_JOBSIM_BASELOAD_H
#define IBSMD_JOBSIM_BASELOAD_H

#include <stddef.h>
#include <stdint.h>

#include "routing/engine.h"
#include "routing/jobs/jobroute.h"
#include "sm/base/fabric.h"

/* The channels a job loads and by how much (JOB_LOAD_ONE units). */
struct chload {
	uint32_t *ch;
	int64_t *chw;
	size_t n;
};

/*
 * The loads of flows fl[0..n) (tree hosts, weights set) on t into c
 * (chload_free() frees).  0, or -1 with err (a hole, a loop or a wrong
 * arrival in the tables; no memory).
 */
int chload_walk(const struct fabric *f, const struct lft_tables *t,
		const struct job_tree *tr, const struct job_flow *fl, size_t n,
		struct chload *c, char *err, size_t errlen);
void chload_free(struct chload *c);
/* loads[ch] += sign * w for each channel of c (loads: f->n_ports). */
void chload_add(int64_t *loads, const struct chload *c, int sign);
/* The largest loads[ch] over c's channels (0 when it has none). */
int64_t chload_max(const int64_t *loads, const struct chload *c);

#endif
