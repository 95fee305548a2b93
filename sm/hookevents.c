/* The fabric events' variables for the event hook (see hookevents.h). */
#include "sm/hookevents.h"

#include <inttypes.h>
#include <stdio.h>

#include "mad/smp.h"
#include "sm/base/nodemap.h"
#include "sm/ctl/evhook.h"

/* One end: its node's GUID, name and kind, and the port number. */
struct end_text {
	char guid[24], port[8];
	const char *name, *type;
};

static void end_of(const struct fabric *f, uint32_t node, unsigned port,
		   struct end_text *t)
{
	const struct fab_node *n = &f->nodes[node];
	snprintf(t->guid, sizeof(t->guid), "0x%016" PRIx64, n->guid);
	snprintf(t->port, sizeof(t->port), "%u", port);
	t->name = fabric_node_name(f, node);
	if (!t->name[0])
		t->name = t->guid;
	t->type = n->type == FAB_SWITCH ? "switch" : n->type == FAB_ROUTER ?
		  "router" : "ca";
}

static void on_link(void *arg, const struct fabric *f, uint32_t pi, int lost)
{
	const struct fab_port *a = &f->ports[pi], *b = &f->ports[a->remote];
	uint64_t ga = f->nodes[a->node].guid, gb = f->nodes[b->node].guid;
	if (gb < ga || (gb == ga && b->num < a->num)) {
		const struct fab_port *t = a;
		a = b;
		b = t;
	}
	struct end_text x, y;
	end_of(f, a->node, a->num, &x);
	end_of(f, b->node, b->num, &y);
	const struct evhook_var v[] = {
		{ "IBSM_NODE_GUID", x.guid }, { "IBSM_NODE", x.name },
		{ "IBSM_PORT", x.port }, { "IBSM_REMOTE_GUID", y.guid },
		{ "IBSM_REMOTE_NODE", y.name }, { "IBSM_REMOTE_PORT", y.port },
	};
	evhook_emit(arg, lost ? "link_lost" : "link_found", v, sizeof(v) / sizeof(v[0]));
}

static void on_node(void *arg, const struct fabric *f, uint32_t node, int lost)
{
	struct end_text x;
	end_of(f, node, 0, &x);
	const struct evhook_var v[] = {
		{ "IBSM_NODE_GUID", x.guid }, { "IBSM_NODE", x.name },
		{ "IBSM_NODE_TYPE", x.type },
	};
	evhook_emit(arg, lost ? "node_lost" : "node_found", v, sizeof(v) / sizeof(v[0]));
}

void hookev_sink(struct fabric_change_sink *s, struct evhook *h)
{
	s->link = on_link;
	s->node = on_node;
	s->arg = h;
}

void hookev_routing_failed(struct evhook *h, const char *reason)
{
	const struct evhook_var v[] = { { "IBSM_REASON", reason } };
	evhook_emit(h, "routing_failed", v, 1);
}

void hookev_master_changed(struct evhook *h, int state, uint64_t master_guid)
{
	char g[24];
	snprintf(g, sizeof(g), "0x%016" PRIx64, master_guid);
	const struct evhook_var v[] = {
		{ "IBSM_STATE", sm_state_name(state) }, { "IBSM_MASTER_GUID", g },
	};
	evhook_emit(h, "master_changed", v, 2);
}

void hookev_rogue_sm(struct evhook *h, uint64_t port_guid, const char *reason)
{
	char g[24];
	snprintf(g, sizeof(g), "0x%016" PRIx64, port_guid);
	const struct evhook_var v[] = {
		{ "IBSM_NODE_GUID", g }, { "IBSM_REASON", reason },
	};
	evhook_emit(h, "rogue_sm", v, 2);
}

void hookev_port_health(struct evhook *h, const struct hookev_port *p,
			int unhealthy, const char *reason, const char *counters)
{
	char g[24], rg[24], pn[8], rpn[8];
	snprintf(g, sizeof(g), "0x%016" PRIx64, p->guid);
	snprintf(rg, sizeof(rg), "0x%016" PRIx64, p->remote_guid);
	snprintf(pn, sizeof(pn), "%u", p->port);
	snprintf(rpn, sizeof(rpn), "%u", p->remote_port);
	const struct evhook_var v[] = {
		{ "IBSM_NODE_GUID", g }, { "IBSM_NODE", p->name }, { "IBSM_PORT", pn },
		{ "IBSM_REMOTE_GUID", rg }, { "IBSM_REMOTE_NODE", p->remote_name },
		{ "IBSM_REMOTE_PORT", rpn }, { "IBSM_REASON", reason },
		{ "IBSM_COUNTERS", counters },
	};
	evhook_emit(h, unhealthy ? "port_unhealthy" : "port_recovered", v,
		    sizeof(v) / sizeof(v[0]));
}

void hookev_mkey_violation(struct evhook *h, const struct fabric *f, uint32_t pi,
			   const struct mkey_trap256 *d)
{
	struct end_text x;
	char lid[8], method[8], attr[8], mod[12], key[24];
	end_of(f, f->ports[pi].node, f->ports[pi].num, &x);
	snprintf(lid, sizeof(lid), "%u", d->lid);
	snprintf(method, sizeof(method), "0x%02x", d->method);
	snprintf(attr, sizeof(attr), "0x%04x", d->attr_id);
	snprintf(mod, sizeof(mod), "0x%08" PRIx32, d->attr_mod);
	snprintf(key, sizeof(key), "0x%016" PRIx64, d->mkey);
	const struct evhook_var v[] = {
		{ "IBSM_NODE_GUID", x.guid }, { "IBSM_NODE", x.name },
		{ "IBSM_PORT", x.port }, { "IBSM_LID", lid },
		{ "IBSM_METHOD", method }, { "IBSM_ATTRIBUTE", attr },
		{ "IBSM_MODIFIER", mod }, { "IBSM_MKEY", key },
	};
	evhook_emit(h, "mkey_violation", v, sizeof(v) / sizeof(v[0]));
}
