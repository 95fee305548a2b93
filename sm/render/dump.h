/*
 * Text dumps of the model in the formats of infiniband-diags, so that the
 * usual tools and scripts (and topo_load) can read them.
 */
#ifndef IBSMD_DUMP_H
#define IBSMD_DUMP_H

#include <stdio.h>

#include "sm/base/fabric.h"
#include "sm/base/topo.h"	/* dump_topology() */
#include "routing/engine.h"

/*
 * Every switch's unicast LFT in the format of `dump_fts -n`: LIDs 0 to
 * t->max_lid, entries whose port is beyond the switch's ports (LFT_DROP)
 * left out.  The header names the node's directed route when dr_len > 0,
 * else its LID.  Returns 0, or -1 when writing failed.
 */
int dump_lfts(const struct fabric *f, const struct lft_tables *t, FILE *out);

#endif
