/*
 * Multicast forwarding trees: pure functions from the fabric
 * model (and its unicast tables, for the rows) to MFT port masks.  No
 * MADs: sm/write/plan_mcast.c turns the masks into MulticastForwardingTable
 * blocks (32 MLIDs x 16 ports, the position in the modifier).
 *
 * One group's tree: for every switch row of t, the set of its ports the
 * group's packets leave by, as MCAST_MASK_WORDS 64-bit words (bit p of
 * word p / 64 = port p; port 0 only where a switch's own port 0 is a
 * member: it delivers to the switch).  A member's switch port toward the
 * member's end port is in the set of the switch it is cabled to; the
 * tree between switches is loop-free (a tree over the switches, every
 * link used in both directions), reaches every member's switch and no
 * switch it need not cross.
 */
#ifndef IBSMD_MCAST_TREE_H
#define IBSMD_MCAST_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "routing/engine.h"
#include "routing/graph.h"

#define MCAST_MASK_WORDS 4	/* ports 0..255 */

static inline void mcast_mask_set(uint64_t *m, unsigned port)
{
	m[port / 64] |= 1ull << (port % 64);
}
static inline int mcast_mask_has(const uint64_t *m, unsigned port)
{
	return (int)((m[port / 64] >> (port % 64)) & 1);
}

/*
 * The tree of the group whose member end ports are ports[0..n) (port
 * indices of f; non-end ports and ports no switch reaches are ignored):
 * mask[row * MCAST_MASK_WORDS ..] for every row of t (zeroed here), the
 * switch the tree is rooted at in *root_row (FAB_NONE when no member is
 * reachable).  Returns 0, or -1 (no memory).
 */
int mcast_tree(const struct fabric *f, const struct lft_tables *t,
	       const uint32_t *ports, uint32_t n, uint64_t *mask,
	       uint32_t *root_row);

/*
 * The same for many groups of one fabric and tables: the switch graph
 * and its components built once (mcast_work_init: 0, or -1 on ENOMEM),
 * then one mcast_tree_w() per group (f and t must not change between).
 * What groups share is computed once and kept until mcast_work_free:
 * the hop counts from each member row (a join storm's groups mostly have
 * their members on the same leaves) and the BFS parents of each root.
 */
struct mcast_root {		/* the BFS from one root row */
	uint32_t *parent;
	uint8_t *up_port, *down_port;
};
struct mcast_work {
	const struct fabric *f;
	const struct lft_tables *t;
	struct sw_graph g;
	uint32_t *buf;		/* 5 x n_sw: comp, queue, dist, maxd, count/nmem */
	uint64_t *sumd;
	uint8_t *is_member;	/* n_sw */
	uint16_t **hops;	/* per row: hops from it (UINT16_MAX: unreached), or NULL */
	struct mcast_root *roots;	/* per row: its BFS, parent NULL until needed */
	uint32_t bfs_runs;	/* BFS runs so far (hops and roots) */
};
int mcast_work_init(struct mcast_work *w, const struct fabric *f,
		    const struct lft_tables *t);
void mcast_work_free(struct mcast_work *w);
int mcast_tree_w(struct mcast_work *w, const uint32_t *ports, uint32_t n,
		 uint64_t *mask, uint32_t *root_row);

#endif
