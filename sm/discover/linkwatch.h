/*
 * Failed and degraded links, kept between heavy sweeps.
 *
 * A link of the previous configured model that the new one lacks, both
 * its nodes still in the subnet, is remembered as failed (with both ends'
 * GUIDs, port numbers and names, and the time it was missed) until one of
 * its two ports is cabled again (the link returned, or the port was
 * recabled) or an operator forgets it (ibsmctl forget LINK).  ibsmctl
 * topology lists them (state "failed", DOT dashed red); status and the
 * metrics count them.
 *
 * A degraded link is an up link with an end running below the width or
 * speed it is enabled for and supports (fabric_port_degraded()): counted
 * at each configured model, and named in the log once, when first seen
 * so (again only after it was not degraded for a sweep).
 */
#ifndef IBSMD_LINKWATCH_H
#define IBSMD_LINKWATCH_H

#include <stddef.h>
#include <stdint.h>

#include "sm/base/fabric.h"

/*
 * Failed links remembered at most; past it, the loss is logged and
 * counted (dropped) but not listed.  A fabric that loses this many links
 * between two sweeps has a power or cabling event the log already shows.
 */
#define LINKWATCH_MAX 4096

struct lost_link {
	uint64_t guid[2];		/* the ends' node GUIDs */
	uint8_t port[2];		/* and port numbers */
	char name[2][FAB_DESC_LEN + 1];	/* names as ibsmctl topology prints them */
	uint64_t since;			/* seconds since the epoch it was missed */
};

/* one end of a link said degraded in the log: the node GUID and port */
struct link_end {
	uint64_t guid;
	uint8_t port;
};

struct link_watch {
	struct lost_link *lost;
	uint32_t n_lost, cap;
	uint64_t dropped;	/* lost links not listed (over LINKWATCH_MAX) */
	uint64_t forgotten;	/* removed by ibsmctl forget */
	uint32_t n_degraded;	/* degraded links of the last configured model */
	struct link_end *said;	/* the degraded links already logged, sorted */
	uint32_t n_said;
};

void linkwatch_init(struct link_watch *w);
void linkwatch_free(struct link_watch *w);
/*
 * A heavy sweep configured f after old (NULL: the first): the failed
 * links updated, the degraded ones counted and the new ones logged.  now:
 * seconds since the epoch.  Returns 0, or -1 on ENOMEM (the sets are
 * left as they were, the loss logged).
 */
int linkwatch_update(struct link_watch *w, const struct fabric *old,
		     const struct fabric *f, uint64_t now);
/*
 * ibsmctl forget LINK: removes the failed links LINK names.  LINK is
 * one end "NAME[PORT]" or both "NAME[PORT]--NAME[PORT]" (spaces and
 * double quotes around NAME allowed, as ibsmctl topology prints links);
 * NAME is the node's name as printed or its GUID (0x...).  Returns the
 * number removed (>= 1), or -1 with err: nothing matches, LINK is not of
 * that form, or one end matches more than one failed link.
 */
int linkwatch_forget(struct link_watch *w, const char *link, char *err,
		     size_t errlen);

#endif
