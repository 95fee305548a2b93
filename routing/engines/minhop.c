/*
 * minhop: shortest paths over switch-to-switch links; among the ports on
 * a shortest path, the one with the fewest LIDs routed through it so far
 * (ties: the lowest port number).  With LMC > 0, the fewest LIDs of the
 * same offset, each end port's offsets on different ways first
 * (routing/engines/offsets.c).  Like OpenSM's, it is not deadlock-free
 * on fabrics with cycles (meshes, tori).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/graph.h"

int minhop_route(const struct fabric *f, const struct route_opts *o,
		 struct lft_tables *t, char *err, size_t errlen)
{
	struct sw_graph g = { 0 };
	struct lid_spread sp = { 0 };
	uint32_t *dist = malloc(((size_t)t->n_sw + 1) * sizeof(*dist));
	uint32_t *queue = malloc(((size_t)t->n_sw + 1) * sizeof(*queue));
	/* LIDs grouped by the switch they attach to: one BFS per switch */
	uint32_t *first = malloc(((size_t)t->n_sw + 1) * sizeof(*first));
	uint32_t *next = malloc(((size_t)t->max_lid + 1) * sizeof(*next));
	uint8_t *aport = malloc((size_t)t->max_lid + 1);
	uint32_t *order = malloc(((size_t)t->n_sw + 1) * sizeof(*order));
	uint32_t *cand_off = malloc(((size_t)t->n_sw + 1) * sizeof(*cand_off));
	uint8_t *cand = NULL;
	uint32_t *lids = malloc(((size_t)t->max_lid + 1) * sizeof(*lids));
	int rc = -1;
	if (!dist || !queue || lid_spread_init(&sp, f, t) < 0 || !first || !next || !aport || !order ||
	    !cand_off || !lids || sw_graph_build(&g, f, t) < 0 ||
	    !(cand = malloc((size_t)g.off[g.n] + 1))) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (uint32_t r = 0; r < t->n_sw; r++)
		first[r] = UINT32_MAX;
	for (uint32_t lid = t->max_lid; lid >= 1; lid--) {
		uint32_t row;
		if (graph_lid_attach(f, t, lid, &row, &aport[lid]) < 0)
			continue;
		next[lid] = first[row];
		first[row] = lid;
	}
	/*
	 * Destinations in LID order, one switch at a time (its LIDs share a
	 * BFS): the balance then depends on the LIDs, not on the order the
	 * switches were discovered in.
	 */
	uint32_t n_dest = 0;
	for (uint32_t lid = 1; lid <= t->max_lid; lid++) {
		uint32_t row;
		uint8_t port;
		if (graph_lid_attach(f, t, lid, &row, &port) == 0 && first[row] == lid)
			order[n_dest++] = row;
	}
	for (uint32_t k = 0; k < n_dest; k++) {
		uint32_t d = order[k];
		sw_graph_bfs(&g, &d, 1, dist, queue);
		/* the ports on a shortest path towards d, per switch, once for all its LIDs */
		uint32_t m = 0;
		for (uint32_t s = 0; s < t->n_sw; s++) {
			cand_off[s] = m;
			if (s == d || dist[s] == UINT32_MAX)
				continue;
			for (uint32_t e = g.off[s]; e < g.off[s + 1]; e++)
				if (dist[g.nbr[e]] + 1 == dist[s])
					cand[m++] = g.port[e];
		}
		cand_off[t->n_sw] = m;
		/*
		 * Switch by switch, then d's LIDs in order: each switch's loads
		 * only see its own choices, so this is the same as LID by LID,
		 * and it writes each row's entries together.
		 */
		uint32_t nl = 0;
		for (uint32_t lid = first[d]; lid != UINT32_MAX; lid = next[lid]) {
			lft_row(t, d)[lid] = aport[lid];
			lids[nl++] = lid;
		}
		for (uint32_t s = 0; s < t->n_sw; s++)
			if (cand_off[s] != cand_off[s + 1])
				lid_spread_pick(&sp, s, lft_row(t, s),
						cand + cand_off[s],
						cand_off[s + 1] - cand_off[s],
						lids, nl);
	}
	rc = 0;
out:
	sw_graph_free(&g);
	free(dist);
	free(queue);
	lid_spread_free(&sp);
	free(first);
	free(next);
	free(aport);
	free(order);
	free(cand_off);
	free(cand);
	free(lids);
	return rc;
}
