/*
 * The fabric as a Graphviz DOT graph: a pure renderer from the fabric
 * model and its routes to text (ibsmd --offline --dot, ibsmctl topology
 * --dot).
 *
 * Switches by rank, one "rank=same" group per level: rank 0 the switches
 * with hosts (leaves), then the BFS distance from them; higher ranks are
 * drawn on top.  A leaf with more than fold_hosts hosts shows them as one
 * box ("L0-S3: 18 hosts").  Switch-to-switch links are coloured by the
 * routes they carry between the hosts (verify_pair_loads(), the busier
 * direction), darker and wider with more; a failed link is dashed red:
 * a linked port whose physical link is not up, or, with expect_active,
 * one whose PortState is not Active (the daemon's configured subnet;
 * --offline leaves ports in Init, where the SM would activate them), and
 * each of opts' lost links (ibsmctl topology: sm/discover/linkwatch.h).
 * A degraded link (fabric_port_degraded() at an end) is orange; a hot
 * one (opts' hot flag at an end, the performance manager's verdict) is
 * bold red, its tooltip "hot: port A -- port B".  Every element has a class for the
 * SVG (sm/render/svg.h): nodes "switch", "host" or "hosts" (a folded
 * leaf's), links "failed", "degraded" or "hot".
 */
#ifndef IBSMD_DOT_H
#define IBSMD_DOT_H

#include <stdint.h>
#include <stdio.h>

#include "routing/engine.h"
#include "sm/base/fabric.h"

#define DOT_FOLD_HOSTS 8	/* default: more hosts on a leaf fold */

/* A link the model no longer has, drawn failed: its ends' node indexes in f. */
struct dot_lost {
	uint32_t node[2];
	uint8_t port[2];
};

struct dot_opts {
	unsigned fold_hosts;	/* fold a leaf's hosts above this many */
	int expect_active;	/* a linked port not Active is a failed link */
	const char *title;	/* the graph's caption, or NULL */
	const struct dot_lost *lost;	/* links lost since last seen up */
	uint32_t n_lost;
	const uint8_t *hot;	/* per f->ports index: a hot port, or NULL: none */
};

/* Counts of what was drawn (for callers and tests). */
struct dot_stats {
	uint32_t switches, hosts, folded_leaves;
	uint32_t links, failed_links, degraded_links, hot_links;
	uint64_t max_load;	/* routes on the busiest switch link direction */
	int64_t undelivered;	/* pairs verify_pair_loads() could not follow */
};

/*
 * The rank of every switch (ranks[node], FAB_NONE for CAs and switches
 * no host reaches); returns the highest rank, or -1 on ENOMEM.
 */
int dot_switch_ranks(const struct fabric *f, uint32_t *ranks);
/*
 * Writes f as DOT; t (may be NULL or empty: no colours) the routes of f.
 * Returns 0, or -1 on ENOMEM or a write error.  st may be NULL.
 */
int dot_write(FILE *fp, const struct fabric *f, const struct lft_tables *t,
	      const struct dot_opts *o, struct dot_stats *st);
/*
 * Routes per sending port (f->n_ports entries, malloc'd) over every pair
 * of host ports cabled to a switch (verify_pair_loads()); *undelivered the
 * pairs not followed to the end.  NULL on ENOMEM.
 */
uint64_t *dot_link_loads(const struct fabric *f, const struct lft_tables *t,
			 int64_t *undelivered);
/* Whether the link at port pi (linked) is failed in the sense above. */
int dot_link_failed(const struct fabric *f, uint32_t pi, int expect_active);

#endif
