/*
 * Internal to routing/: each engine's entry point, as listed in the engine
 * table (routing/engine.c), and what the engines share with each other.
 * Outside routing/ use routing_engine_find() (engine.h) instead.
 */
#ifndef IBSMD_ENGINES_H
#define IBSMD_ENGINES_H

#include "routing/engine.h"

/* The engines, one file each; see engine.c for what each promises. */
int minhop_route(const struct fabric *f, const struct route_opts *o,
		 struct lft_tables *t, char *err, size_t errlen);
int updn_route(const struct fabric *f, const struct route_opts *o,
	       struct lft_tables *t, char *err, size_t errlen);
int ftree_route(const struct fabric *f, const struct route_opts *o,
		struct lft_tables *t, char *err, size_t errlen);
int vswitch_ftree_route(const struct fabric *f, const struct route_opts *o,
			struct lft_tables *t, char *err, size_t errlen);
int pftree_route(const struct fabric *f, const struct route_opts *o,
		 struct lft_tables *t, char *err, size_t errlen);
int dmodk_route(const struct fabric *f, const struct route_opts *o,
		struct lft_tables *t, char *err, size_t errlen);
int dfsssp_route(const struct fabric *f, const struct route_opts *o,
		 struct lft_tables *t, char *err, size_t errlen);
int dor_route(const struct fabric *f, const struct route_opts *o,
	      struct lft_tables *t, char *err, size_t errlen);
int nue_route(const struct fabric *f, const struct route_opts *o,
	      struct lft_tables *t, char *err, size_t errlen);

/*
 * In updn.c, used by dmodk.c for switch LIDs: routes the LIDs with
 * want[lid] set (all when want is NULL) up*-down* under the switch order
 * pos[row].
 */
int updn_route_order(const struct fabric *f, struct lft_tables *t,
		     const uint32_t *pos, const uint8_t *want, char *err,
		     size_t errlen);

/*
 * LID offsets (routing/engines/offsets.c): each offset of the LMC ranges
 * spread over a switch's candidate ports on counts of its own, the
 * offsets of one end port on different ways where they can be.
 */
struct lid_spread {
	const struct fabric *f;
	const struct lft_tables *t;
	uint32_t stride;	/* the widest switch's ports + 1 */
	uint32_t n_off;		/* LIDs per end port: 1 << LMC */
	size_t per_off;		/* counts per offset: n_sw * stride */
	uint32_t *load;		/* LIDs routed per (offset, row, port) */
	uint8_t *off;		/* per LID: its offset in its end port's range */
};

/* 0, or -1 (ENOMEM; lid_spread_free() still safe). */
int lid_spread_init(struct lid_spread *sp, const struct fabric *f,
		    const struct lft_tables *t);
void lid_spread_free(struct lid_spread *sp);
/*
 * At switch row s, whose LFT row is row, routes each of lids[0..n)
 * (ascending) out of one of the candidate ports cand[0..nc): a switch
 * the end port's earlier offsets do not go to from here first, then a
 * port they do not take, then the fewest LIDs of the LID's offset so
 * far, then the lowest port; and counts it.
 */
void lid_spread_pick(struct lid_spread *sp, uint32_t s, uint8_t *row,
		     const uint8_t *cand, uint32_t nc, const uint32_t *lids,
		     uint32_t n);

/*
 * pftree's hooks into ftree (routing/engines/pftree.c): ftree calls them where it
 * has a choice, and does everything else (ranks, tuples, secondary
 * routes, switch LIDs, vSwitches) as it always does.  Without hooks
 * (ftree_route()) none of this runs.
 */
struct ft_up_cand {
	uint32_t node;		/* the switch the up link leads to */
	uint64_t guid;		/* its GUID */
	uint64_t load;		/* main paths (or weights) down that link */
	/*
	 * Ties between equal loads: the lower first (0 for all but a LID
	 * offset above 0, whose links start after its predecessor's).
	 */
	uint32_t after;
};

struct ft_hooks {
	void *ctx;
	/*
	 * The CA end ports ca_pi[0..n) of leaf node (port order) in routing
	 * order: perm[k] is the k-th to route; n_up: the leaf's up links.
	 */
	void (*order)(void *ctx, uint32_t leaf, const uint32_t *ca_pi,
		      uint32_t n, uint32_t n_up, uint32_t *perm);
	/* What routing end port pi adds to the load of its main path. */
	uint64_t (*weight)(void *ctx, uint32_t pi);
	/*
	 * The main path of end port pi (FAB_NONE: a dummy path) leaves
	 * switch node over one of the up links c[0..n): the index chosen,
	 * or -1 when the engine must fail (the hook wrote why).
	 */
	int (*up)(void *ctx, uint32_t pi, uint32_t node,
		  const struct ft_up_cand *c, uint32_t n);
};

/* ftree with the hooks hk (routing/engines/ftree.c). */
int ftree_route_hooked(const struct fabric *f, const struct route_opts *o,
		       struct lft_tables *t, const struct ft_hooks *hk,
		       char *err, size_t errlen);

#endif
