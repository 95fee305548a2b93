/* Runs the configured routing engines in order, falling back with a reason. */
#ifndef IBSMD_ROUTE_H
#define IBSMD_ROUTE_H

#include <stdint.h>

#include "../routing/engine.h"
#include "config.h"

/*
 * Routes f (LIDs assigned) with the engine list of c, or with override
 * ("a,b" as -R takes it) when not NULL.  Fills t, *used and *ms (the
 * engine's time).  Returns 0, or -1 when every engine failed.
 */
int sm_route(const struct config *c, const char *override,
	     const struct fabric *f, struct lft_tables *t, const char **used,
	     uint64_t *ms);

#endif
