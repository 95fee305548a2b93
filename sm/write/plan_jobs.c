/*
 * The LFT writes of a job's start or end: see plan_jobs.h.
 */
#include "sm/write/plan_jobs.h"

#include <stdlib.h>
#include <string.h>

#include "sm/write/plan_lft.h"

int plan_jobs_build(struct plan *p, const struct fabric *f,
		    const struct lft_tables *from, const struct lft_tables *to,
		    struct plan_jobs_count *c)
{
	struct lft_order_stats st;
	memset(c, 0, sizeof(*c));
	if (plan_lft_change(p, 0, f, from, to, &st) < 0)
		return -1;
	c->blocks = st.writes;
	c->waves = st.waves;
	c->order = st;
	/* the switches written */
	uint8_t *seen = calloc((size_t)to->n_sw + 1, 1);
	if (!seen)
		return -1;
	for (uint32_t w = 0; w < p->n_waves; w++)
		for (uint32_t i = 0; i < p->waves[w].n; i++) {
			uint32_t r = to->row_of_node[p->waves[w].ops[i].node];
			if (r != FAB_NONE && !seen[r]) {
				seen[r] = 1;
				c->switches++;
			}
		}
	free(seen);
	plan_seal(p);
	return 0;
}
