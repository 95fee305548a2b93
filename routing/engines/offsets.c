/*
 * LID offsets for the engines that spread LIDs over a switch's equal
 * candidate ports (minhop, updn; see engines.h).
 *
 * With LMC > 0 an end port has 2^LMC LIDs, base + k.  A host uses one
 * of them for a connection (MPI libraries take the base LID unless told
 * otherwise), so each offset k must be spread over the links on its own:
 * a switch counts the LIDs it routed per (offset, port), and a LID of
 * offset k goes out of the candidate port with the fewest LIDs of offset
 * k so far.  The LIDs of one end port should still take different ways
 * (the point of LMC): a candidate that leads to a switch no earlier
 * offset of the same port goes to from here comes first, then one on
 * another port (parallel cables), then the counts, then the ports in
 * turn from the one after the previous offset's.  OpenSM's minhop and
 * updn do the same by routing all base LIDs first, then each further
 * offset, on shared counts, preferring a system and node the port's
 * earlier LIDs do not go to and starting the search after the port of
 * the LID before (osm_ucast_mgr.c, osm_switch.c); counting per offset
 * gives each offset the routes it would get alone without reordering
 * the destinations.  With LMC 0 this is the least count, ties to the
 * lowest port, as before.
 */
#include <stdlib.h>

#include "routing/engines.h"

int lid_spread_init(struct lid_spread *sp, const struct fabric *f,
		    const struct lft_tables *t)
{
	sp->f = f;
	sp->t = t;
	sp->stride = 1;
	for (uint32_t r = 0; r < t->n_sw; r++)
		if (f->nodes[t->sw_node[r]].nports + 1u > sp->stride)
			sp->stride = f->nodes[t->sw_node[r]].nports + 1u;
	sp->n_off = 1u << f->lmc;
	sp->per_off = (size_t)t->n_sw * sp->stride;
	sp->load = calloc(sp->n_off * sp->per_off + 1, sizeof(*sp->load));
	sp->off = calloc((size_t)t->max_lid + 1, 1);
	if (!sp->load || !sp->off)
		return -1;
	for (uint32_t lid = 1; lid <= t->max_lid && sp->n_off > 1; lid++) {
		uint32_t pi = lid <= f->max_lid ? f->lid_port[lid] : FAB_NONE;
		uint32_t base = pi == FAB_NONE ? 0 : f->ports[pi].lid;
		if (base && base <= lid && lid - base < sp->n_off)
			sp->off[lid] = (uint8_t)(lid - base);
	}
	return 0;
}

void lid_spread_free(struct lid_spread *sp)
{
	free(sp->load);
	free(sp->off);
	sp->load = NULL;
	sp->off = NULL;
}

/* The node port p of switch node leads to (FAB_NONE: no link). */
static uint32_t peer_node(const struct fabric *f, uint32_t node, uint8_t p)
{
	uint32_t pi = fabric_port(f, node, p);
	if (pi == FAB_NONE || f->ports[pi].remote == FAB_NONE)
		return FAB_NONE;
	return f->ports[f->ports[pi].remote].node;
}

void lid_spread_pick(struct lid_spread *sp, uint32_t s, uint8_t *row,
		     const uint8_t *cand, uint32_t nc, const uint32_t *lids,
		     uint32_t n)
{
	const struct fabric *f = sp->f;
	uint32_t node = sp->t->sw_node[s];

	for (uint32_t j = 0; j < n; j++) {
		uint32_t lid = lids[j], k = sp->off[lid], base = lid - k;
		uint32_t *ld = sp->load + k * sp->per_off + (size_t)s * sp->stride;
		uint64_t best = UINT64_MAX;
		uint8_t bp = LFT_DROP;
		if (!k) {
			/* a base LID: the fewest, ties to the lowest port */
			for (uint32_t c = 0; c < nc; c++) {
				uint64_t key = (uint64_t)ld[cand[c]] << 8 | cand[c];
				if (key < best) {
					best = key;
					bp = cand[c];
				}
			}
			row[lid] = bp;
			ld[bp]++;
			continue;
		}
		/* ties: the ports in turn after the previous offset's */
		uint32_t prev = row[lid - 1] != LFT_DROP ? row[lid - 1] :
				sp->stride - 1;
		for (uint32_t c = 0; c < nc; c++) {
			uint8_t p = cand[c];
			uint32_t to = peer_node(f, node, p);
			uint64_t other_sw = 0, other_port = 0;
			/* the port's earlier offsets, routed just before */
			for (uint32_t b = base; b < lid; b++) {
				uint8_t q = row[b];
				if (q == p)
					other_port = 1;
				if (q != LFT_DROP && peer_node(f, node, q) == to)
					other_sw = 1;
			}
			uint64_t key = other_sw << 62 | other_port << 61 |
				       (uint64_t)ld[p] << 8 |
				       (p + sp->stride - prev - 1) % sp->stride;
			if (key < best) {
				best = key;
				bp = p;
			}
		}
		row[lid] = bp;
		ld[bp]++;
	}
}
