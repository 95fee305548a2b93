/*
 * The local rebalance (virtualization.rebalance.local; the vSwitch
 * paper, Section 6.2: paths inside a sub-tree of a fat tree depend on no
 * other sub-tree, so the sub-tree alone can be routed again): the
 * smallest sub-tree holding every leaf the VM moves since the last
 * rebalance touched, routed again inside itself.  Pure computation over
 * the fabric model and the tables.
 *
 * A sub-tree of level l (an XGFT sub-tree: the leaves sharing a tuple
 * prefix, ftree's ranks, 0 = the roots) is a set of level-l switches T
 * that are exactly the level-l ancestors of each of its leaves, and
 * every switch below them.  The smallest one holding the leaves touched
 * is found going up from them level by level until their ancestor sets
 * at one level are the same set (in a fat tree two such sets are equal
 * or disjoint): FTreeMinRC's common ancestors.  Level 0 is the whole
 * fabric: the caller reroutes it all.
 *
 * Inside it, for every destination LID attached below it (CA ports, PFs,
 * VFs and the vSwitches' own LIDs; not the physical switches' LIDs), the
 * entries of its physical switches below T become those a fresh
 * vswitch-ftree of the sub-tree alone sets: the sub-tree cut from the
 * fabric (T's up links gone, so T are its roots), with its hosts, VMs
 * and their weights.  Everything else is kept:
 *  - T's entries (to a destination below them there is one way down in
 *    a fat tree, the same in both routings), so paths entering the
 *    sub-tree -- from a source outside to a destination inside -- come
 *    down through the same top switch as before and follow the unique
 *    way down from it;
 *  - every entry of a switch outside, and every entry for a destination
 *    outside (paths leaving the sub-tree go up as before);
 *  - every vSwitch row (a VF's LID to its port, the rest up its uplink)
 *    and the physical switches' LIDs.
 * What the local routing balances is therefore the traffic between two
 * end nodes of the sub-tree: its counters start at zero and count only
 * the sub-tree's own destinations' main paths, as vswitch-ftree counts
 * them; the sub-tree's links also carry entering traffic (down from T,
 * unchanged) and leaving traffic (up to T, unchanged), which it neither
 * counts nor moves.  Every new route is up*-then-down* inside the
 * sub-tree, so the tables stay free of loops and channel-dependency
 * cycles as a fat tree's are.
 */
#ifndef IBSMD_RBLOCAL_H
#define IBSMD_RBLOCAL_H

#include <stddef.h>
#include <stdint.h>

#include "routing/engine.h"
#include "sm/base/fabric.h"

struct rblocal_subtree {
	uint32_t level;		/* the top switches' rank; 0: the whole fabric */
	uint32_t leaf_level;	/* the leaves' rank */
	uint32_t tops;		/* top switches (T) */
	uint32_t switches;	/* physical switches in it, T included */
	uint32_t leaves;	/* leaf switches in it */
	uint32_t end_nodes;	/* CAs and vSwitches cabled to its leaves */
	uint32_t top_node;	/* the top switch of lowest node GUID: its name */
	int whole;		/* level 0: the whole fabric */
};

struct rblocal_result {
	struct rblocal_subtree st;
	uint32_t lids;		/* destination LIDs routed again */
	uint32_t switches_changed;	/* rows of t an entry of which changed */
	uint64_t entries_changed;
	uint64_t route_us;	/* the sub-tree's routing and the merge */
};

/*
 * The smallest sub-tree holding the leaf switches leaves[0..n) (node
 * indices of f; n >= 1).  member (t->n_sw, may be NULL) is set to 1 for
 * its physical switches.  0, or -1 with err: f is not a fat tree
 * ftree_levels() ranks, a node is no leaf switch, or ENOMEM.
 */
int rblocal_subtree(const struct fabric *f, const struct lft_tables *t,
		    const uint32_t *leaves, uint32_t n,
		    struct rblocal_subtree *s, uint8_t *member,
		    char *err, size_t errlen);

/*
 * Routes the smallest sub-tree holding leaves[0..n) again in t (f's
 * tables, as vswitch-ftree made them; changed in place).  When it is the
 * whole fabric, t is not touched and r->st.whole is 1.  0, or -1 with
 * err (as rblocal_subtree(), or vswitch-ftree cannot route the
 * sub-tree); t is then unchanged.
 */
int rblocal_route(const struct fabric *f, struct lft_tables *t,
		  const uint32_t *leaves, uint32_t n, struct rblocal_result *r,
		  char *err, size_t errlen);

/* "level-L sub-tree of NAME (T top switches, S switches, N leaves)" for the log. */
void rblocal_describe(const struct fabric *f, const struct rblocal_subtree *s,
		      char *buf, size_t len);

#endif
