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

/*
 * In updn.c, used by dmodk.c for switch LIDs: routes the LIDs with
 * want[lid] set (all when want is NULL) up*-down* under the switch order
 * pos[row].
 */
int updn_route_order(const struct fabric *f, struct lft_tables *t,
		     const uint32_t *pos, const uint8_t *want, char *err,
		     size_t errlen);

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
