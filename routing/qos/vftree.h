/*
 * vFtree (the thesis's Paper III, "vFtree - A Fat-tree Routing Algorithm
 * using Virtual Lanes to Alleviate Congestion", Section V.A): spreads the
 * (source leaf, destination leaf) pairs of a fat tree over the data VLs,
 * SL = VL.  Pure: no I/O, no MADs.
 */
#ifndef IBSMD_VFTREE_H
#define IBSMD_VFTREE_H

#include "routing/engine.h"

/* The most data VLs vFtree spreads over (IB has VL 0..14). */
#define VFTREE_MAX_VLS 15

/*
 * Fills t's QoS fields (routing/engine.h), replacing any there, after
 * routing: the leaves (switches with a CA port, or the physical switch
 * above a vSwitch, for the ports behind it) numbered in ascending node
 * GUID order; Algorithm 1 over max_vls VLs gives VL[leaf][leaf]; each
 * CA port's LIDs get their leaf as source class, and SL = VL for every
 * (source, destination) pair of CA port LIDs (0 within a leaf and to
 * non-CA LIDs).  SL-to-VL tables: SL i -> VL i for i < max_vls, VL 0
 * for the others, on every CA port and every switch (in, out) pair,
 * port 0 included.  max_vls is clamped by the caller to what the links
 * run; here 1..VFTREE_MAX_VLS.  Returns 0, or -1 (max_vls out of range,
 * ENOMEM: t's QoS fields are then cleared).
 */
int vftree_apply(const struct fabric *f, struct lft_tables *t,
		 unsigned max_vls);

/*
 * Algorithm 1 alone: vl[s * n_leaves + d] for n_leaves leaves over
 * maxvl VLs (1..VFTREE_MAX_VLS).  For the tests and vftree_apply().
 */
void vftree_assign_vls(uint8_t *vl, uint32_t n_leaves, unsigned maxvl);

#endif
