/*
 * The VM migration patterns of the vSwitch paper's routing-quality study
 * (Section 7.2, Table 4, Fig. 8), on an abstract placement: n_hyp
 * hypervisors of vfs VFs each, slot h * vfs + k the k-th VF of
 * hypervisor h, hypervisors in fabric order (the "left side" is index
 * 0).  Where the paper leaves a choice open, the one made here:
 *
 *  - random: 2 * n_hyp migrations; each draws a free VF uniformly, then
 *    a VM uniformly among those on other hypervisors, and moves it there.
 *  - consolidate: "packs all the VMs to the left side ... on the least
 *    number of hosts": hypervisors 0 .. T-2 full, T-1 the rest (T =
 *    ceil(VMs / vfs)), none beyond.  While a hypervisor holds more than
 *    that, the VM in the highest VF of the highest such hypervisor moves
 *    to the lowest free VF of the lowest hypervisor below its share.
 *  - grouping: "two randomly chosen VM groups are consolidated and
 *    isolated on neighboring hypervisors": two disjoint groups of
 *    max(1, VMs / 4) VMs each, drawn at random; group A's block is
 *    ceil(g / vfs) hypervisors from a random first one, B's the as many
 *    next.  First every VM in a block that is not of its group leaves it
 *    (a VM of the other group to a free VF of its own block if one is
 *    free, any other to the lowest free VF outside both blocks); then
 *    every VM of A, then of B, outside its block moves to the block's
 *    lowest free VF.
 *  - to-uniform: while the fullest hypervisor holds two VMs more than
 *    the emptiest, a VM of the fullest (lowest index on ties; its
 *    highest VF) moves to the emptiest (lowest index; its lowest free
 *    VF).
 *
 * Initial placements: random (VMs on VFs drawn uniformly without
 * repetition) or uniform (VM i on hypervisor i mod n_hyp).
 */
#ifndef IBSMD_MIGPATTERN_H
#define IBSMD_MIGPATTERN_H

#include <stddef.h>
#include <stdint.h>

enum migpat { MIGPAT_RANDOM, MIGPAT_CONSOLIDATE, MIGPAT_GROUPING,
	      MIGPAT_TO_UNIFORM };

#define MIGPAT_FREE UINT32_MAX
#define MIGPAT_POPULATION_MAX 100	/* percent of the VFs */	/* a slot without a VM */

struct migpat_place {
	uint32_t n_hyp, vfs;
	uint32_t *slot;		/* n_hyp * vfs: the VM's number, or MIGPAT_FREE */
	uint32_t n_vm;		/* VMs 0 .. n_vm - 1 */
};

struct migpat_move {
	uint32_t vm, from, to;	/* slots */
};

/* -1 when unknown. */
int migpat_parse(const char *s);
const char *migpat_name(int pattern);

/*
 * p with n_hyp * vfs free slots, then n_vm VMs placed at random (seed) or
 * uniformly; 0, or -1 (ENOMEM, or more VMs than VFs).
 */
int migpat_place_init(struct migpat_place *p, uint32_t n_hyp, uint32_t vfs,
		      uint32_t n_vm, int uniform, uint64_t seed);
void migpat_place_free(struct migpat_place *p);
/* VMs on hypervisor h. */
uint32_t migpat_load(const struct migpat_place *p, uint32_t h);
/* The move applied to p. */
void migpat_apply(struct migpat_place *p, const struct migpat_move *m);

/*
 * The pattern's migrations from placement p (not changed), in order, into
 * *mv (malloc'd, *n of them; none is possible: *n = 0).  0, or -1 with
 * err (ENOMEM; random: no VM can move; grouping: no free VF outside the
 * blocks, or the blocks do not fit).
 */
int migpat_plan(int pattern, const struct migpat_place *p, uint64_t seed,
		struct migpat_move **mv, uint32_t *n, char *err, size_t errlen);

#endif
