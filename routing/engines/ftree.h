/*
 * What the ftree engine knows of a fat tree's shape, for those that
 * reason about it without routing (reconfig/migrate.c): each switch's
 * level, ranked exactly as ftree ranks it (0 = root, BFS distance from
 * the roots; the leaves hold the CAs).
 */
#ifndef IBSMD_FTREE_H
#define IBSMD_FTREE_H

#include <stddef.h>
#include <stdint.h>

#include "routing/engine.h"

/*
 * rank[row] for every LFT row of t (t->n_sw entries).  Returns 0 when f
 * is a fat tree as the marking of a minimal reconfiguration needs one:
 * one component, every switch ranked, every switch-to-switch link
 * between adjacent ranks, every switch with a CA at the deepest rank.
 * Else -1 with the reason in err (rank then holds what was found).
 * A vSwitch (FNODE_VSWITCH) is an end node of its leaf, as ftree routes
 * it: it is not a switch of the tree, and its rank is its leaf's + 1.
 */
int ftree_levels(const struct fabric *f, const struct lft_tables *t,
		 uint32_t *rank, char *err, size_t errlen);

#endif
