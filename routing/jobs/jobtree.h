/*
 * Internal to routing/jobs/: the tree jobroute.h's functions share
 * (jobtree.c builds it, jobroute.c routes on it).
 */
#ifndef IBSMD_JOBTREE_H
#define IBSMD_JOBTREE_H

#include "routing/jobs/jobroute.h"

#define JT_NONE UINT32_MAX

struct job_tree {
	const struct fabric *f;
	const struct lft_tables *base;
	uint32_t n_sw, stride;	/* channel of (row, port): row * stride + port */
	uint32_t *lev;		/* per row: 1 = leaf */
	uint32_t height;
	uint32_t *leaf_idx;	/* per row: its leaf index, JT_NONE above */
	uint32_t n_leaves;
	uint32_t *upoff;	/* n_sw + 1, into up_port / up_row */
	uint8_t *up_port;
	uint32_t *up_row;
	uint64_t *below;	/* per row, words bits: the leaves below it */
	uint32_t words;
	uint32_t n_hosts, cap_hosts;
	uint32_t *host_port;	/* fabric port index */
	uint32_t *host_leaf;	/* its leaf's row */
	uint8_t *host_down;	/* the leaf's port to it */
	uint32_t *host_lid;	/* its base LID */
	uint32_t *group;	/* height * cap_hosts: subtree per level */
	int32_t *host_of;	/* per fabric port: its host, -1 */
	uint32_t n_ch;		/* n_sw * stride + n_hosts (injection) */
};

static inline uint8_t jt_base_port(const struct job_tree *tr, uint32_t row,
				   uint32_t lid)
{
	return tr->base->port[(size_t)row * (tr->base->max_lid + 1) + lid];
}

/* Whether row r is above (or is) leaf row leaf. */
static inline int jt_above(const struct job_tree *tr, uint32_t r, uint32_t leaf)
{
	uint32_t i = tr->leaf_idx[leaf];
	return (tr->below[(size_t)r * tr->words + i / 64] >> (i % 64)) & 1;
}

static inline uint32_t jt_inject(const struct job_tree *tr, uint32_t h)
{
	return tr->n_sw * tr->stride + h;
}

#endif
