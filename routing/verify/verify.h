/*
 * Route verification: a pure function from the fabric model and a set of
 * forwarding tables (computed by an engine, or read back from switches)
 * to a report.  No I/O but verify_print().
 *
 * Sources are the CA (and router) ports cabled to a switch; destinations
 * are every assigned LID whose port is reachable at all (a switch's port
 * 0, or a CA port cabled to a switch).  For every (source, LID) pair the
 * route is followed through the LFTs: delivered, dropped (LFT_DROP, a port
 * the switch lacks, port 0 of another switch), run into a hole (a port
 * with no usable link, or cabled to another CA), or caught in a loop.
 * Routes are resolved once per (switch, LID), not per pair.
 *
 * Also: hops against the shortest switch path, routes per directed
 * switch-to-switch link over all CA-to-CA pairs (base LIDs; split up/down
 * by switch rank, the BFS distance from the nearest switch with a CA),
 * the same per LID offset when the LMC gives CA ports several LIDs,
 * and a cycle check of the channel dependency graph: nodes are directed
 * switch-to-switch links, a -> b when a route taken by some CA's traffic
 * leaves a switch by link a and the next one by link b.
 *
 * With SL-to-VL tables (t->sl2vl, a QoS mode) the graph is over (link,
 * VL): the pair's SL is lft_sl(source port's LID, LID); the CA port sends
 * on its own table's VL for it, each switch on its (in, out) table's.
 * Then also: routes per (switch-to-switch link, VL) and the VLs in use,
 * and a check that no route takes VL 15 or a VL at or above the link's
 * data VLs (VLCap of both ends, capped by max_op_vls; a link whose VLCap
 * is unknown bounds nothing but VL 15).
 *
 * Errors: an undelivered pair (which includes loops); a pair on a VL its
 * link lacks; a dependency cycle when deadlock freedom is required; an
 * unbalanced LID offset (below).  A cycle is otherwise a warning.
 *
 * LID offsets: a host picks one LID of a destination's LMC range (MPI
 * libraries take the base LID unless told otherwise), so each offset
 * must spread over the links on its own.  Offset k is unbalanced when,
 * over the links of a class (all, up, down) that carry CA-to-CA routes,
 * the spread of its routes per link (max - min) exceeds twice the spread
 * of the routes of all offsets together, counted per offset, plus a
 * slack of a quarter of its mean (at least 2): an engine that puts the
 * base LIDs on some links and the other offsets on the others passes
 * the sum and fails here.
 */
#ifndef IBSMD_VERIFY_H
#define IBSMD_VERIFY_H

#include <stdint.h>
#include <stdio.h>

#include "routing/engine.h"

#define VERIFY_EXAMPLES 5
#define VERIFY_CYCLE_SHOW 8
#define VERIFY_VLS 15	/* data VLs 0..14 */
#define VERIFY_OFFSETS 128	/* LIDs of an LMC range: 1 << 7 at most */

enum verify_fail {
	VERIFY_DROP = 1,	/* LFT_DROP, no such port, port 0 of another switch */
	VERIFY_HOLE,		/* a port without a usable link, or to another CA */
	VERIFY_LOOP,
};

struct verify_opts {
	int deadlock_free_required;
	int max_op_vls;		/* OperationalVLs ceiling 1..5 (0: 5, VL0-14) */
};

/* One undelivered pair. */
struct verify_example {
	uint64_t src_guid;		/* the source CA port's GUID */
	uint8_t src_port;		/* and its number */
	char src_desc[FAB_DESC_LEN + 1];
	uint32_t lid;
	uint8_t kind;			/* enum verify_fail */
	uint64_t at_guid;		/* the switch where it failed */
	char at_desc[FAB_DESC_LEN + 1];
	uint8_t at_port;		/* its LFT entry there */
};

/* A pair on a VL its link lacks. */
struct verify_vl_example {
	uint64_t src_guid;		/* the source CA port */
	uint8_t src_port;
	char src_desc[FAB_DESC_LEN + 1];
	uint32_t lid;
	uint8_t sl, vl;
	unsigned link_vls;		/* the link's data VLs */
	uint64_t at_guid;		/* the sending node */
	char at_desc[FAB_DESC_LEN + 1];
	uint8_t at_port;
};

struct verify_load {
	uint32_t links;			/* directed links in this class */
	uint64_t max, min, total;	/* routes per link */
};

/* Routes per link of one LID offset, by link class. */
struct verify_offset {
	struct verify_load all, up, down;
	uint8_t unbalanced;		/* mask: 1 all, 2 up, 4 down */
};

struct verify_report {
	uint32_t switches;
	uint32_t sources;		/* CA ports cabled to a switch */
	uint32_t lids;			/* destination LIDs */
	uint32_t unattached_lids;	/* assigned, but on a port no switch reaches */
	uint64_t pairs;			/* (source, LID) pairs, a port's own LIDs excepted */

	uint64_t unreachable;		/* = drops + holes + loops */
	uint64_t drops, holes, loops;
	uint32_t n_examples;
	struct verify_example ex[VERIFY_EXAMPLES];

	/* delivered pairs; hops count links from the source CA port */
	uint32_t max_hops;
	uint64_t nonminimal;		/* longer than the shortest path */
	uint32_t max_excess;		/* links more than the shortest */

	/* routes per directed switch-to-switch link, CA-to-CA pairs */
	uint64_t ca_pairs;
	uint32_t max_rank;		/* 0 for switches with CAs */
	struct verify_load all, up, down, lateral;

	/*
	 * Per LID offset of the CA ports' LMC ranges (n_offsets = 1 << LMC;
	 * 1: nothing here): routes per link towards the LIDs base + k, and
	 * the routes of all offsets together (sum_*: per link, summed).
	 */
	uint32_t n_offsets;
	struct verify_offset off[VERIFY_OFFSETS];
	struct verify_load sum_all, sum_up, sum_down;
	uint32_t offsets_unbalanced;

	/* QoS: t had SL-to-VL tables; the figures below are per VL */
	int qos;
	uint32_t n_vls;			/* the graph's VLs: 0 .. n_vls - 1 */
	uint16_t vls_used;		/* mask: VLs carrying CA-to-CA routes */
	struct verify_load vl_all;	/* routes per (link, VL in use) */
	struct verify_load per_vl[VERIFY_VLS];
	uint64_t vl_bad;		/* pairs on VL 15 or beyond a link's */
	struct verify_vl_example vl_ex;	/* the first of them */

	/* channel dependency graph, VL0 (QoS: over (link, VL)) */
	uint32_t cdg_nodes;		/* directed switch-to-switch links
					 * (QoS: (link, VL) channels in use) */
	uint64_t cdg_edges;
	int cycle;
	uint32_t cycle_len;		/* links in the cycle found */
	uint64_t cycle_guid[VERIFY_CYCLE_SHOW];	/* its first links: switch, */
	uint8_t cycle_port[VERIFY_CYCLE_SHOW];	/* output port, */
	uint8_t cycle_vl[VERIFY_CYCLE_SHOW];	/* VL (0 without QoS) */

	int deadlock_free_required;
	uint32_t errors, warnings;
	uint64_t elapsed_ms;		/* the caller's, printed when non-zero */
};

/*
 * Checks t against f (LIDs assigned, f->lid_port indexed).  Returns 0 with
 * *r filled (r->errors says whether the routes are acceptable), or -1 on
 * ENOMEM.
 */
int route_verify(const struct fabric *f, const struct lft_tables *t,
		 const struct verify_opts *o, struct verify_report *r);
/*
 * Routes per directed switch-to-switch link between the end ports
 * ports[0..n) (CA port indices; each to every other's base LID, followed
 * through t from the switch it is cabled to): load[pi] for the sending
 * switch port pi, f->n_ports entries, zeroed here.  Returns the pairs
 * not delivered (0: all were).
 */
int64_t verify_pair_loads(const struct fabric *f, const struct lft_tables *t,
			  const uint32_t *ports, uint32_t n, uint64_t *load);
/* Whether the engine of that name promises deadlock freedom on one VL. */
int verify_engine_deadlock_free(const char *engine);
/*
 * Writes the report, several lines, the last one "verify: OK ..." or
 * "verify: FAILED ...".  Returns 0 or -1 on a write error.
 */
int verify_print(const struct verify_report *r, FILE *fp);
struct part_model;
/*
 * --verify: checks t against f (routes, then the partitions' section
 * when parts is given, then what extra checks, its errors counted in),
 * prints "checking WHAT (engine E)" and the report to fp.  1 when it
 * found an error, 0 when not, -1 out of memory.
 */
int verify_tables(FILE *fp, const struct fabric *f, const struct lft_tables *t,
		  const struct part_model *parts, const char *engine,
		  const char *what, int max_op_vls,
		  int (*extra)(void *arg, FILE *fp), void *arg);

#endif
