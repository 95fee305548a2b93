/*
 * The multicast verifier: one group's MFT port masks (as
 * routing/mctree.h computes them, or as read back from the switches)
 * against its member end ports.
 */
#ifndef IBSMD_VERIFY_MCAST_H
#define IBSMD_VERIFY_MCAST_H

#include <stddef.h>
#include <stdint.h>

#include "routing/engine.h"

/*
 * mask[row * MCAST_MASK_WORDS ..] for every row of t, members ports[0..n)
 * (port indices of f).  Checks that every port in a mask leads over a
 * usable link to a member end port or to a switch whose mask holds the
 * way back (port 0: the switch itself is a member); that the switches
 * with a mask and the links between them form a tree (connected, links =
 * switches - 1: no loop); and that every member attached to a switch of
 * the tree's component is reached.  0 when all hold, else 1 with the
 * first failure in why.  -1: no memory.
 */
int mcast_verify(const struct fabric *f, const struct lft_tables *t,
		 const uint32_t *ports, uint32_t n, const uint64_t *mask,
		 char *why, size_t len);

#endif
