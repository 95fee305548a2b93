/*
 * The LFT writes of a job's start or end: see plan_jobs.h.
 */
#include "sm/write/plan_jobs.h"

#include <stdlib.h>
#include <string.h>

#define LEVEL_MAX 250	/* beyond any tree's height; a wave per level */

/*
 * Per row of t, its level (1: a leaf); 0 for a switch no leaf reaches.
 * lvl has t->n_sw entries.  Returns the highest level, -1 on ENOMEM.
 */
static int plan_jobs_levels(const struct fabric *f, const struct lft_tables *t,
		     uint8_t *lvl)
{
	uint32_t *queue = malloc(((size_t)t->n_sw + 1) * sizeof(*queue));
	uint32_t head = 0, tail = 0;
	int top = 0;
	if (!queue)
		return -1;
	memset(lvl, 0, t->n_sw);
	for (uint32_t r = 0; r < t->n_sw; r++) {
		const struct fab_node *n = &f->nodes[t->sw_node[r]];
		for (uint32_t k = 1; k <= n->nports; k++) {
			uint32_t rp = f->ports[n->first_port + k].remote;
			if (rp != FAB_NONE && f->nodes[f->ports[rp].node].type == FAB_CA) {
				lvl[r] = 1;
				queue[tail++] = r;
				break;
			}
		}
	}
	/* breadth first from the leaves: a level is the fewest hops up, plus 1 */
	while (head < tail) {
		uint32_t r = queue[head++];
		const struct fab_node *n = &f->nodes[t->sw_node[r]];
		if (lvl[r] > top)
			top = lvl[r];
		for (uint32_t k = 1; k <= n->nports; k++) {
			uint32_t rp = f->ports[n->first_port + k].remote;
			if (rp == FAB_NONE)
				continue;
			uint32_t rr = t->row_of_node[f->ports[rp].node];
			if (rr == FAB_NONE || lvl[rr] || lvl[r] >= LEVEL_MAX)
				continue;
			lvl[rr] = (uint8_t)(lvl[r] + 1);
			queue[tail++] = rr;
		}
	}
	free(queue);
	return top;
}

int plan_jobs_build(struct plan *p, const struct fabric *f,
		    const struct lft_tables *from, const struct lft_tables *to,
		    struct plan_jobs_count *c)
{
	uint8_t *lvl = malloc((size_t)to->n_sw + 1);
	int top;
	memset(c, 0, sizeof(*c));
	if (!lvl || (top = plan_jobs_levels(f, to, lvl)) < 0) {
		free(lvl);
		return -1;
	}
	plan_set_tables(p, to);
	uint32_t blocks = (to->max_lid + FAB_LFT_BLOCK) / FAB_LFT_BLOCK;
	uint8_t used[LEVEL_MAX + 2] = { 0 };
	for (uint32_t r = 0; r < to->n_sw; r++) {
		const uint8_t *a = lft_row(from, r), *b = lft_row(to, r);
		int wave = lvl[r] ? top - lvl[r] : top;	/* unreached: with the leaves */
		int any = 0;
		for (uint32_t k = 0; k < blocks; k++) {
			uint32_t lo = k * FAB_LFT_BLOCK;
			uint32_t hi = lo + FAB_LFT_BLOCK - 1 > to->max_lid ? to->max_lid :
				      lo + FAB_LFT_BLOCK - 1;
			int differs = hi > from->max_lid;
			for (uint32_t l = lo; !differs && l <= hi; l++)
				differs = a[l] != b[l];
			if (!differs)
				continue;
			if (!plan_add_lft_row(p, wave, to->sw_node[r], r, k, 1)) {
				free(lvl);
				return -1;
			}
			c->blocks++;
			any = 1;
			used[wave] = 1;
		}
		c->switches += any;
	}
	for (int w = 0; w <= top; w++)
		c->waves += used[w];
	free(lvl);
	plan_seal(p);
	return 0;
}
