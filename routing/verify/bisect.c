/*
 * The bisection quality of a set of tables: see bisect.h.
 */
#include "routing/verify/bisect.h"

#include <stdlib.h>
#include <string.h>

#include "sm/base/rng.h"

/* A path longer than this loops (a fat tree's longest is 2 * levels + 2). */
#define BISECT_MAX_HOPS	FAB_MAX_HOPS

/*
 * The channels (the output port index of each hop) of the flow from end
 * port src to LID dlid into ch; their count, or 0 when the tables drop
 * the flow or it loops.
 */
static uint32_t trace(const struct fabric *f, const struct lft_tables *t,
		      uint32_t src, uint32_t dlid, uint32_t *ch)
{
	uint32_t n = 0, out = src;
	for (;;) {
		uint32_t in = f->ports[out].remote;
		if (n == BISECT_MAX_HOPS || in == FAB_NONE)
			return 0;
		ch[n++] = out;
		uint32_t node = f->ports[in].node;
		if (f->nodes[node].type != FAB_SWITCH) {
			uint32_t dp = dlid <= f->max_lid ? f->lid_port[dlid] : FAB_NONE;
			return dp == in ? n : 0;
		}
		uint32_t row = t->row_of_node[node];
		if (row == FAB_NONE || dlid > t->max_lid)
			return 0;
		uint8_t port = lft_row(t, row)[dlid];
		if (port == LFT_DROP || port == 0 || port > f->nodes[node].nports)
			return 0;	/* port 0: the switch itself, not an end port */
		out = fabric_port(f, node, port);
	}
}

int bisect_quality(const struct fabric *f, const struct lft_tables *t,
		   const uint32_t *ep, uint32_t n, uint32_t runs,
		   uint64_t seed, struct bisect_result *r)
{
	memset(r, 0, sizeof(*r));
	if (n < 2 || runs < 1)
		return -1;
	uint32_t flows = n / 2;
	uint32_t *order = malloc((size_t)n * sizeof(*order));
	uint32_t *load = calloc(f->n_ports, sizeof(*load));
	uint32_t *ch = malloc((size_t)flows * BISECT_MAX_HOPS * sizeof(*ch));
	uint32_t *len = malloc((size_t)flows * sizeof(*len));
	if (!order || !load || !ch || !len) {
		free(order);
		free(load);
		free(ch);
		free(len);
		return -1;
	}
	uint64_t x = seed;
	double sum = 0;
	r->worst_run = 1;
	for (uint32_t run = 0; run < runs; run++) {
		memcpy(order, ep, (size_t)n * sizeof(*order));
		for (uint32_t i = n - 1; i > 0; i--) {	/* Fisher-Yates */
			uint32_t j = rng_below(&x, i + 1), s = order[i];
			order[i] = order[j];
			order[j] = s;
		}
		for (uint32_t i = 0; i < flows; i++) {
			uint32_t *c = ch + (size_t)i * BISECT_MAX_HOPS;
			len[i] = trace(f, t, order[i], f->ports[order[flows + i]].lid, c);
			for (uint32_t k = 0; k < len[i]; k++)
				load[c[k]]++;
		}
		double share = 0;
		for (uint32_t i = 0; i < flows; i++) {
			const uint32_t *c = ch + (size_t)i * BISECT_MAX_HOPS;
			uint32_t worst = 0;
			for (uint32_t k = 0; k < len[i]; k++)
				worst = load[c[k]] > worst ? load[c[k]] : worst;
			if (worst)
				share += 1.0 / worst;
			else
				r->unrouted++;
		}
		for (uint32_t i = 0; i < flows; i++)
			for (uint32_t k = 0; k < len[i]; k++)
				load[ch[(size_t)i * BISECT_MAX_HOPS + k]] = 0;
		share /= flows;
		sum += share;
		if (share < r->worst_run)
			r->worst_run = share;
	}
	r->quality = sum / runs;
	r->runs = runs;
	r->flows = flows;
	free(order);
	free(load);
	free(ch);
	free(len);
	return 0;
}
