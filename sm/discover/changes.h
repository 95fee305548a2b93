/*
 * What a heavy sweep found changed, in the operator's words, one notice
 * line per event (not per port side): a link lost or returned, named by
 * both ends' names (sm/base/nodemap.h) and port numbers; a switch or a host
 * lost or found (a switch's line counts the hosts lost or found with it,
 * which get no line of their own); an end port whose LID changed.  Each kind is rate
 * limited (sm/base/log.h): a flapping link or half a fabric going away gives a
 * few lines and a count.
 */
#ifndef IBSMD_FABEVENTS_H
#define IBSMD_FABEVENTS_H

#include "sm/base/fabric.h"

/* Lines per kind of event, and the window they are counted in: a
 * flapping link says so a few times a minute, then a count. */
#define FABEV_BURST	10
#define FABEV_WINDOW_MS	60000

struct fabric_changes {
	unsigned links_lost, links_back;
	unsigned nodes_lost, nodes_found;
	unsigned lids_changed;
};

/*
 * Compares the previous model (NULL: the first sweep, nothing said) with
 * the new one (LIDs assigned), logs the changes and counts them in *c
 * (may be NULL).
 */
void fabric_log_changes(const struct fabric *old, const struct fabric *f,
			struct fabric_changes *c);
/*
 * Who else hears of the changes (the event hook, sm/fabevents.h): each
 * link lost or returned between two nodes in both models, given as the
 * port index pi of the model that has it (old when lost, f when
 * returned), and each node lost or found, hosts that go with a switch
 * included (they have no log line of their own).
 */
struct fabric_change_sink {
	void (*link)(void *arg, const struct fabric *f, uint32_t pi, int lost);
	void (*node)(void *arg, const struct fabric *f, uint32_t node, int lost);
	void *arg;
};
/* fabric_log_changes, and each change told to sink (may be NULL). */
void fabric_report_changes(const struct fabric *old, const struct fabric *f,
			   struct fabric_changes *c,
			   const struct fabric_change_sink *sink);
/* Is a's link at port index pi (linked) a link of b too (same nodes, same ports)? */
int fabric_link_in(const struct fabric *a, uint32_t pi, const struct fabric *b);

#endif
