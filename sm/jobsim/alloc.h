/*
 * The offline job replay's node allocator, after Slurm's topology/tree
 * plugin: a job goes into the lowest subtree with enough free nodes and
 * is packed best-fit over that subtree's leaf switches.  Pure.
 *
 * Hosts are numbered 0..n_hosts-1 (the job tree's order, D-mod-K's
 * destinations); each is on a leaf switch, each leaf in a pod (the leaves
 * that share a parent switch, transitively); the system is every pod.
 * The exact rule for a job of `need` nodes:
 *
 *   1. the subtree: the leaf with free >= need and the fewest free nodes;
 *      else the pod with free >= need and the fewest free; else the whole
 *      system when it has need free nodes; else the job is not placed.
 *      Ties: the lowest leaf or pod number.
 *   2. over that subtree's leaves, until need nodes are taken: when a
 *      leaf has free >= the nodes still needed, the one with the fewest
 *      free such (lowest number of equals) gives them and it ends; else
 *      the leaf with the most free nodes (lowest number of equals) gives
 *      all of them.
 *   3. on a leaf, its lowest-numbered free hosts are taken.
 *
 * The job's hosts come out in ascending order (rank r is the r-th).
 */
#ifndef IBSMD_JOBSIM_ALLOC_H
#define IBSMD_JOBSIM_ALLOC_H

#include <stdint.h>

struct alloc;

/*
 * An allocator with every host free.  leaf_of[h] < n_leaves is host h's
 * leaf, pod_of[l] < n_pods leaf l's pod.  NULL: no memory or a number out
 * of range.
 */
struct alloc *alloc_new(uint32_t n_hosts, const uint32_t *leaf_of,
			uint32_t n_leaves, const uint32_t *pod_of,
			uint32_t n_pods);
void alloc_free(struct alloc *a);
/* Free hosts now. */
uint32_t alloc_free_hosts(const struct alloc *a);
/* need >= 1 hosts into hosts[0..need), ascending: 0, or -1 (not enough free). */
int alloc_take(struct alloc *a, uint32_t need, uint32_t *hosts);
/* Gives back hosts a job took (every one of them taken). */
void alloc_release(struct alloc *a, const uint32_t *hosts, uint32_t n);

#endif
