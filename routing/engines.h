/*
 * Internal to routing/: each engine's entry point, as listed in the engine
 * table (routing/engine.c), and what the engines share with each other.
 * Outside routing/ use routing_engine_find() (engine.h) instead.
 */
#ifndef IBSMD_ENGINES_H
#define IBSMD_ENGINES_H

#include "engine.h"

/* The engines, one file each; see engine.c for what each promises. */
int minhop_route(const struct fabric *f, const struct route_opts *o,
		 struct lft_tables *t, char *err, size_t errlen);
int updn_route(const struct fabric *f, const struct route_opts *o,
	       struct lft_tables *t, char *err, size_t errlen);
int ftree_route(const struct fabric *f, const struct route_opts *o,
		struct lft_tables *t, char *err, size_t errlen);
int vswitch_ftree_route(const struct fabric *f, const struct route_opts *o,
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

#endif
