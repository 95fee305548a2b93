/*
 * Receiver contention and inter-partition interference: the static
 * metrics the pFTree paper evaluates pFTree-Wt by (Section 7.1, Figs.
 * 13-15), a pure function of a fabric, its forwarding tables, the
 * resolved partitions and a set of receivers.  No I/O but
 * contention_print() (verify_print.c).
 *
 * Flows are the ordered pairs (s, d) of CA ports cabled to a switch,
 * with a LID, that may talk: both members of a tenant partition, one of
 * them full (IBA 10.9.3), one flow per common tenant partition as the
 * partition section of --verify counts them (pverify.h); without tenant
 * partitions every pair, in one partition.  A flow follows the LFTs from
 * s's switch to d's base LID; only its directed switch-to-switch links
 * count.  A link is up when it leads to a switch of higher rank (hops
 * from the nearest switch with a CA), down when to a lower one; links
 * between switches of one rank (none in a fat tree) are neither.
 *
 * Contention (the paper's Section 7.1): a link is contended when the
 * routes of flows towards more than one receiver cross it; R receivers
 * give it R - 1.  Total contention is the sum over the links, reported
 * with the number of contended links, up and down apart.
 *
 * Interference (Section 7.1, Fig. 15, "the number of occurrences when a
 * traffic flow ... belonging to one partition, shares a link with any
 * other flow of a different partition", both directions): the paper does
 * not say whether it counts flows, flow pairs or (flow, link) incidences.
 * Here the total is the (flow, link) occurrences: for every link whose
 * flows belong to two tenant partitions or more, the flows crossing it.
 * The flows that share at least one link so are counted beside it.
 * VLs are not looked at: a shared link is shared on any VL.
 *
 * Exposure of a tenant partition p, the other reading of Fig. 15: every
 * ordered pair of flow ends has a route in the LFTs (all-to-all, as the
 * paper keeps it for management traffic, footnote 3), whether
 * partitions let it carry data or not; p's exposure is the number of
 * those routes that cross a link where a flow of p meets a route that is
 * not one of p's flows.  For the paper's victim partition under pFTree
 * this is the 192 of Fig. 15 at 32 nodes (tests/RESULTS.md).
 */
#ifndef IBSMD_CONTENTION_H
#define IBSMD_CONTENTION_H

#include <stdint.h>
#include <stdio.h>

#include "routing/engine.h"

struct contention_dir {
	uint32_t links;		/* directed switch-to-switch links */
	uint32_t contended;	/* of them, crossed towards >= 2 receivers */
	uint64_t total;		/* sum of (receivers - 1) over those */
	uint32_t max;		/* the most receivers - 1 on one link */
};

struct contention_report {
	uint32_t receivers;	/* CA ports among the flow ends */
	uint64_t flows;		/* (pair, partition) */
	uint64_t undelivered;	/* flows t does not deliver */
	struct contention_dir up, down;
	uint32_t lateral;	/* links between switches of one rank */
	uint32_t shared_links;	/* links with flows of >= 2 tenants */
	uint64_t interference;	/* (flow, link) occurrences on them */
	uint64_t interfered;	/* flows crossing at least one */
	uint32_t n_parts;	/* m's partitions, with tenants; else 0 */
	uint64_t *exposed;	/* [p], p >= 1: p's exposure */
};

/*
 * A flow end: a CA (or router) port with a LID, cabled to a switch by a
 * usable link.
 */
int contention_flow_end(const struct fabric *f, uint32_t pi);

/*
 * Fills r from f, t, m (resolved against f; NULL or no tenants: one
 * partition) and recv[pi] != 0 for the receivers (f->n_ports entries);
 * contention_free() after.  0, or -1 on ENOMEM.
 */
int contention_measure(const struct fabric *f, const struct lft_tables *t,
		       const struct part_model *m, const uint8_t *recv,
		       struct contention_report *r);
void contention_free(struct contention_report *r);

/*
 * "verify: ..." lines: the receivers (what names them), contention,
 * interference, and each tenant partition's exposure (names from m).
 */
void contention_print(const struct contention_report *r,
		      const struct part_model *m, const char *what, FILE *fp);

#endif
