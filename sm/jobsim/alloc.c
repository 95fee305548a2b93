/* The Slurm-tree-like node allocator (sm/jobsim/alloc.h). */
#include "sm/jobsim/alloc.h"

#include <stdlib.h>
#include <string.h>

#define NO_LEAF UINT32_MAX

struct alloc {
	uint32_t n_hosts, n_leaves, n_pods;
	uint32_t *leaf_off;	/* n_leaves + 1, into leaf_host */
	uint32_t *leaf_host;	/* hosts by leaf, ascending */
	uint32_t *leaf_of;	/* host -> leaf */
	uint32_t *pod_of;	/* leaf -> pod */
	uint32_t *leaf_free, *pod_free;
	uint32_t free_total;
	uint8_t *busy;		/* per host */
};

void alloc_free(struct alloc *a)
{
	if (!a)
		return;
	free(a->leaf_off);
	free(a->leaf_host);
	free(a->leaf_of);
	free(a->pod_of);
	free(a->leaf_free);
	free(a->pod_free);
	free(a->busy);
	free(a);
}

struct alloc *alloc_new(uint32_t n_hosts, const uint32_t *leaf_of,
			uint32_t n_leaves, const uint32_t *pod_of,
			uint32_t n_pods)
{
	struct alloc *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->n_hosts = n_hosts;
	a->n_leaves = n_leaves;
	a->n_pods = n_pods;
	a->leaf_off = calloc((size_t)n_leaves + 1, sizeof(uint32_t));
	a->leaf_host = calloc((size_t)n_hosts + 1, sizeof(uint32_t));
	a->leaf_of = calloc((size_t)n_hosts + 1, sizeof(uint32_t));
	a->pod_of = calloc((size_t)n_leaves + 1, sizeof(uint32_t));
	a->leaf_free = calloc((size_t)n_leaves + 1, sizeof(uint32_t));
	a->pod_free = calloc((size_t)n_pods + 1, sizeof(uint32_t));
	a->busy = calloc((size_t)n_hosts + 1, 1);
	if (!a->leaf_off || !a->leaf_host || !a->leaf_of || !a->pod_of ||
	    !a->leaf_free || !a->pod_free || !a->busy)
		goto bad;
	for (uint32_t l = 0; l < n_leaves; l++) {
		if (pod_of[l] >= n_pods)
			goto bad;
		a->pod_of[l] = pod_of[l];
	}
	for (uint32_t h = 0; h < n_hosts; h++) {
		if (leaf_of[h] >= n_leaves)
			goto bad;
		a->leaf_of[h] = leaf_of[h];
		a->leaf_free[leaf_of[h]]++;
		a->pod_free[pod_of[leaf_of[h]]]++;
	}
	for (uint32_t l = 0; l < n_leaves; l++)
		a->leaf_off[l + 1] = a->leaf_off[l] + a->leaf_free[l];
	uint32_t *fill = calloc((size_t)n_leaves + 1, sizeof(uint32_t));
	if (!fill)
		goto bad;
	for (uint32_t h = 0; h < n_hosts; h++) {
		uint32_t l = leaf_of[h];
		a->leaf_host[a->leaf_off[l] + fill[l]++] = h;
	}
	free(fill);
	a->free_total = n_hosts;
	return a;
bad:
	alloc_free(a);
	return NULL;
}

uint32_t alloc_free_hosts(const struct alloc *a)
{
	return a->free_total;
}

/* Is leaf l in the subtree (pod, or every leaf when pod is n_pods)? */
static int in_subtree(const struct alloc *a, uint32_t l, uint32_t pod)
{
	return pod == a->n_pods || a->pod_of[l] == pod;
}

/* Step 1 at the pod level: the best-fit pod, n_pods for the system. */
static uint32_t pick_pod(const struct alloc *a, uint32_t need)
{
	uint32_t best = a->n_pods;
	for (uint32_t p = 0; p < a->n_pods; p++)
		if (a->pod_free[p] >= need &&
		    (best == a->n_pods || a->pod_free[p] < a->pod_free[best]))
			best = p;
	return best;
}

/* Step 2's leaf: the best fit for need, else the fullest of free nodes. */
static uint32_t pick_leaf(const struct alloc *a, uint32_t need, uint32_t pod)
{
	uint32_t fit = NO_LEAF, most = NO_LEAF;
	for (uint32_t l = 0; l < a->n_leaves; l++) {
		uint32_t fr = a->leaf_free[l];
		if (!fr || !in_subtree(a, l, pod))
			continue;
		if (fr >= need && (fit == NO_LEAF || fr < a->leaf_free[fit]))
			fit = l;
		if (most == NO_LEAF || fr > a->leaf_free[most])
			most = l;
	}
	return fit != NO_LEAF ? fit : most;
}

/* Up to k of leaf l's lowest free hosts into out; how many. */
static uint32_t take_leaf(struct alloc *a, uint32_t l, uint32_t k, uint32_t *out)
{
	uint32_t got = 0;
	for (uint32_t i = a->leaf_off[l]; i < a->leaf_off[l + 1] && got < k; i++) {
		uint32_t h = a->leaf_host[i];
		if (a->busy[h])
			continue;
		a->busy[h] = 1;
		out[got++] = h;
	}
	a->leaf_free[l] -= got;
	a->pod_free[a->pod_of[l]] -= got;
	a->free_total -= got;
	return got;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return a < b ? -1 : a > b;
}

int alloc_take(struct alloc *a, uint32_t need, uint32_t *hosts)
{
	if (!need || need > a->free_total)
		return -1;
	/* step 1: a leaf that fits (step 2 over every leaf then takes the
	 * best-fit one), else the best-fit pod, else the system */
	uint32_t pod = a->n_pods;
	if (a->leaf_free[pick_leaf(a, need, a->n_pods)] < need)
		pod = pick_pod(a, need);
	uint32_t got = 0;
	while (got < need) {
		uint32_t l = pick_leaf(a, need - got, pod);
		got += take_leaf(a, l, need - got, hosts + got);
	}
	qsort(hosts, need, sizeof(*hosts), cmp_u32);
	return 0;
}

void alloc_release(struct alloc *a, const uint32_t *hosts, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t h = hosts[i], l = a->leaf_of[h];
		if (!a->busy[h])
			continue;
		a->busy[h] = 0;
		a->leaf_free[l]++;
		a->pod_free[a->pod_of[l]]++;
		a->free_total++;
	}
}
