/*
 * Job-aware routing on an XGFT over a D-mod-K base ("Enhancing
 * InfiniBand with OpenFlow-Style SDN Capability", Lee et al.: per job,
 * each logical communication on the shortest path whose largest link load
 * is the smallest, the load released when the job ends).  Pure: a fabric
 * model with LIDs, its D-mod-K tables, and jobs as flows between hosts;
 * no MADs, no clock.
 *
 * On standard IB a route is chosen per destination LID, not per flow: in
 * an XGFT a path s -> d is fixed by the LFT entries for d's LID at the
 * switches where it goes up (the way down from any ancestor of d's leaf
 * is unique and stays D-mod-K's).  A job therefore owns the up entries
 * for its own hosts' base LIDs (hosts are allocated to one job at a
 * time), and only those:
 *
 *   - flows are routed in order of destination host, then source host;
 *   - a flow s -> d starts at s's leaf; at a switch that is not above d's
 *     leaf it takes the up port this job already fixed there for d's LID
 *     if any (one output per switch and LID), else each up port in turn
 *     -- D-mod-K's first, then by port number -- and the candidate whose
 *     largest channel load (this and every other job's, host channels
 *     included) is the smallest wins, the first of equals (so D-mod-K's
 *     when it is as good: no write);
 *   - the guard: when the job's largest channel load routed so is not
 *     below what it would be on the D-mod-K routes (same other jobs), the
 *     job keeps D-mod-K (no entry changes) and says so;
 *   - loads are directed channels (a switch port's output, and each
 *     host's injection into its leaf) in fixed point: JOB_LOAD_ONE is a
 *     fully loaded channel; a flow's weight is min(1/out-degree(s),
 *     1/in-degree(d)) within its job (rounded to the unit, exact for
 *     degrees dividing 720720: every degree up to 16);
 *   - with LMC > 0 only each destination's base LID is job-routed; its
 *     other LIDs keep D-mod-K.
 *
 * The tree is inferred from the fabric: leaves are the switches with CA
 * ports, a switch's level is one more than its children's, every cable
 * joins adjacent levels, the switches above a leaf form a tree of
 * unique ways down (parallel cables aside), and the base tables route
 * every host LID down from its ancestors.  Anything else is refused with
 * the reason.
 */
#ifndef IBSMD_JOBROUTE_H
#define IBSMD_JOBROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "routing/engine.h"
#include "sm/base/fabric.h"

#define JOB_LOAD_ONE 720720000000LL	/* fixed point: 1.0 */
#define JOB_MAX_FLOWS (1u << 22)	/* a job's flows (alltoall of 2,048 ranks) */

/* ---- the tree ---- */

struct job_tree;

/*
 * The XGFT view of f with its D-mod-K tables base (kept by reference:
 * both must outlive the tree, unchanged).  NULL with the reason in err
 * (not a tree this engine understands, or no memory).
 */
struct job_tree *job_tree_new(const struct fabric *f,
			      const struct lft_tables *base, char *err,
			      size_t errlen);
void job_tree_free(struct job_tree *tr);
/*
 * Hosts: the CA ports with a base LID, grouped by subtree as D-mod-K
 * numbers its destinations: by their top-most pod (keyed by its lowest
 * leaf GUID), ..., by leaf GUID, then by port number.
 */
uint32_t job_tree_hosts(const struct job_tree *tr);
/* Host h's fabric port index; the host of fabric port pi, or -1. */
uint32_t job_tree_host_port(const struct job_tree *tr, uint32_t h);
int32_t job_tree_host_of_port(const struct job_tree *tr, uint32_t pi);
/* Switch levels: 1 (the leaves) .. job_tree_levels() (the tops). */
uint32_t job_tree_levels(const struct job_tree *tr);
/*
 * The subtree of host h at level lv (1: its leaf; 2: its pod, the leaves
 * below the same level-2 switches; ...; the top level: 0 for all),
 * numbered from 0 in host order: hosts of one subtree are consecutive.
 */
uint32_t job_tree_group(const struct job_tree *tr, uint32_t h, uint32_t lv);
/*
 * Channels: 0 .. job_tree_channels() - 1, each a switch port's output or
 * a host's injection into its leaf.  Its node and port (for a host: the
 * CA's node and port).
 */
uint32_t job_tree_channels(const struct job_tree *tr);
void job_tree_channel(const struct job_tree *tr, uint32_t ch, uint32_t *node,
		      uint8_t *port);

/* ---- patterns ---- */

/* One logical communication between hosts (tree indices), its weight. */
struct job_flow {
	uint32_t src, dst;
	int64_t w;		/* JOB_LOAD_ONE units: min(1/out-degree(src),
				 * 1/in-degree(dst)) within the job */
};

/*
 * The flows of pattern spec among n ranks (rank r is hosts[r]; the caller
 * maps), rank pairs deduplicated, no self pairs:
 *   ring         r -> r+1 and r -> r-1 (wrapping; n = 2: one peer)
 *   2dnn, 3dnn   ranks row-major on a ceil(sqrt n)^2 / ceil(cbrt n)^3
 *                grid, each to its 4 / 6 neighbours with wrap-around over
 *                the whole grid; a neighbour on an empty point is skipped
 *   random:K     each rank to K distinct others drawn with seed (all
 *                others when n - 1 <= K)
 *   alltoall     every ordered pair
 * Each flow weighs min(1/out-degree(src), 1/in-degree(dst)).  0, or -1 with err (unknown pattern, bad
 * K, more than JOB_MAX_FLOWS flows, no memory).  *out is malloc'd (NULL
 * when there are no flows).
 */
int job_pattern(const char *spec, const uint32_t *hosts, uint32_t n,
		uint64_t seed, struct job_flow **out, size_t *n_out,
		char *err, size_t errlen);
/*
 * Explicit flows: text of lines "SRC DST" (rank numbers, 0-based; '#'
 * comments), each to hosts[rank].  As job_pattern().
 */
int job_pattern_text(const char *text, const uint32_t *hosts, uint32_t n,
		     struct job_flow **out, size_t *n_out, char *err,
		     size_t errlen);

/* ---- loads and routes ---- */

/* The load of every channel, all jobs together. */
struct job_loads;
struct job_loads *job_loads_new(const struct job_tree *tr);
void job_loads_free(struct job_loads *l);
/* The largest channel load of the fabric (SWML); channel ch's. */
int64_t job_loads_max(const struct job_loads *l);
int64_t job_loads_get(const struct job_loads *l, uint32_t ch);

/* One LFT entry a job sets: switch row, LID, output port. */
struct job_entry {
	uint32_t row;
	uint32_t lid;
	uint8_t port;		/* the job's; the base's is base->port[...] */
};

/* A routed job: its entries and what it adds to the loads. */
struct job_route {
	struct job_entry *e;	/* differing from the base, by (row, lid) */
	size_t n_e;
	uint32_t *ch;		/* channels its flows load ... */
	int64_t *chw;		/* ... and by how much, n_ch each */
	size_t n_ch;
	size_t n_flows;
	int64_t max_load;	/* its largest channel load when routed */
	int64_t dmodk_max;	/* what D-mod-K would have given it */
	int guarded;		/* 1: D-mod-K kept by the guard (no entries) */
};

/* job_route()'s mode */
enum {
	JOB_ROUTE_GUARDED,	/* least-max-load, D-mod-K when not better */
	JOB_ROUTE_GREEDY,	/* least-max-load whatever D-mod-K gives */
	JOB_ROUTE_DMODK,	/* D-mod-K's routes: the baseline's loads */
};

/*
 * Routes the flows fl[0..n) of one job (weights set) on top of the loads
 * l in mode, adds its load to l and fills r (which job_route_free()
 * frees).  0, or -1 (no memory; l unchanged).
 */
int job_route(const struct job_tree *tr, struct job_loads *l,
	      const struct job_flow *fl, size_t n, int mode,
	      struct job_route *r);
/* Takes r's load off l, exactly (the job ended). */
void job_unroute(struct job_loads *l, const struct job_route *r);
/* The largest current load of a channel r loads (its PJML now). */
int64_t job_route_max_now(const struct job_loads *l, const struct job_route *r);
void job_route_free(struct job_route *r);

/*
 * t = base with every entry of r[0..n) applied (t and base the same shape;
 * t may be a copy of base the caller made).  Entries are the jobs' own
 * LIDs, so jobs never overwrite each other.
 */
void job_apply(struct lft_tables *t, const struct job_route *r, size_t n);

#endif
