/*
 * Partitions resolved against a fabric model: the policy's partitions
 * (sm/model/config.h) and weights matched to ports, into the partition
 * model of routing/partition.h.
 */
#ifndef IBSMD_PART_RESOLVE_H
#define IBSMD_PART_RESOLVE_H

#include "routing/partition.h"

struct config;

/*
 * Resolves the policy's partitions and weights (c) against f, with the
 * learned weights lw (NULL: none).  Members that match no port are
 * logged as warnings when warn is set (once per sweep, on the loop).
 * Returns 0, or -1 (no memory; m is left empty).
 */
int part_resolve(const struct config *c, const struct fabric *f,
		 const struct part_weights *lw, int warn,
		 struct part_model *m);

#endif
