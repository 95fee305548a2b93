/*
 * The fabric events the event hook is told of (sm/ctl/evhook.h), each
 * with its variables as ibsmd(8) documents them ("EVENT HOOK"): one
 * place names them, the sweeps and the election only say what happened.
 * Nodes are named by fabric_node_name() (the node-name map, else the
 * NodeDescription), GUIDs as 0x and 16 hex digits.
 */
#ifndef IBSMD_HOOKEVENTS_H
#define IBSMD_HOOKEVENTS_H

#include <stdint.h>

#include "mad/mkey.h"
#include "sm/discover/changes.h"

struct evhook;

/*
 * A sink for fabric_report_changes(): link_lost / link_found (the end of
 * the lower node GUID, then the lower port, is IBSM_NODE), node_lost /
 * node_found.
 */
void hookev_sink(struct fabric_change_sink *s, struct evhook *h);
/* routing_failed: IBSM_REASON. */
void hookev_routing_failed(struct evhook *h, const char *reason);
/* master_changed: IBSM_STATE (our new SM state), IBSM_MASTER_GUID (0: none known). */
void hookev_master_changed(struct evhook *h, int state, uint64_t master_guid);
/* rogue_sm: IBSM_NODE_GUID (the rogue's port GUID), IBSM_REASON. */
void hookev_rogue_sm(struct evhook *h, uint64_t port_guid, const char *reason);
/* One port and its link's other end, as the performance manager knows them. */
struct hookev_port {
	uint64_t guid, remote_guid;	/* node GUIDs */
	const char *name, *remote_name;
	unsigned port, remote_port;
};
/*
 * port_unhealthy (unhealthy 1) / port_recovered: the port's variables,
 * IBSM_REASON and IBSM_COUNTERS ("Name=value ..." of its error counters).
 */
void hookev_port_health(struct evhook *h, const struct hookev_port *p,
			int unhealthy, const char *reason, const char *counters);
/*
 * mkey_violation: a trap 256 (Bad M_Key) from port pi of f.  The port
 * that raised it: IBSM_NODE_GUID, IBSM_NODE, IBSM_PORT; the SMP that
 * carried the wrong key (its DataDetails, d): IBSM_LID (LIDADDR),
 * IBSM_METHOD, IBSM_ATTRIBUTE, IBSM_MODIFIER, IBSM_MKEY.
 */
void hookev_mkey_violation(struct evhook *h, const struct fabric *f, uint32_t pi,
			   const struct mkey_trap256 *d);

#endif
