#include "sm/discover/changes.h"

#include <stdio.h>
#include <string.h>

#include "sm/base/log.h"
#include "sm/base/nodemap.h"


/* A node's name for a line: the map's or NodeDescription, else its GUID. */
static const char *name_of(const struct fabric *f, uint32_t node, char *buf,
			   size_t len)
{
	const char *name = fabric_node_name(f, node);
	if (name[0])
		return name;
	snprintf(buf, len, "0x%016llx", (unsigned long long)f->nodes[node].guid);
	return buf;
}

/* The node of f with the GUID of a's node, FAB_NONE. */
static uint32_t same_node(const struct fabric *a, uint32_t node,
			  const struct fabric *f)
{
	return fabric_find_node(f, a->nodes[node].guid);
}

int fabric_link_in(const struct fabric *a, uint32_t pi, const struct fabric *b)
{
	const struct fab_port *p = &a->ports[pi], *r = &a->ports[p->remote];
	uint32_t nb = same_node(a, p->node, b);
	if (nb == FAB_NONE || p->num > b->nodes[nb].nports)
		return 0;
	uint32_t rb = fabric_portp(b, nb, p->num)->remote;
	return rb != FAB_NONE &&
	       b->nodes[b->ports[rb].node].guid == a->nodes[r->node].guid &&
	       b->ports[rb].num == r->num;
}

static void log_link(const struct fabric *f, uint32_t pi, const char *what)
{
	const struct fab_port *p = &f->ports[pi], *r = &f->ports[p->remote];
	char b1[24], b2[24];
	log_limited_by(FABEV_BURST, FABEV_WINDOW_MS, LOG_NOTICE,
		       "link %s: \"%s\" port %u - \"%s\" port %u", what,
		       name_of(f, p->node, b1, sizeof(b1)), p->num,
		       name_of(f, r->node, b2, sizeof(b2)), r->num);
}

/* Links between two nodes both in a and in b that a has and b lacks. */
static unsigned links_only_in(const struct fabric *a, const struct fabric *b,
			      const char *what, const struct fabric_change_sink *sink,
			      int lost)
{
	unsigned n = 0;
	for (uint32_t pi = 0; pi < a->n_ports; pi++) {
		const struct fab_port *p = &a->ports[pi];
		if (p->remote == FAB_NONE || p->remote < pi ||
		    same_node(a, p->node, b) == FAB_NONE ||
		    same_node(a, a->ports[p->remote].node, b) == FAB_NONE ||
		    fabric_link_in(a, pi, b))
			continue;
		log_link(a, pi, what);
		if (sink && sink->link)
			sink->link(sink->arg, a, pi, lost);
		n++;
	}
	return n;
}

/*
 * A host (CA or router) of a whose every link goes to nodes that b lacks
 * too: lost with its switch (or found with it), said on the switch's line.
 */
static int goes_with_switch(const struct fabric *a, uint32_t node,
			    const struct fabric *b)
{
	const struct fab_node *n = &a->nodes[node];
	int linked = 0;
	if (n->type == FAB_SWITCH)
		return 0;
	for (unsigned num = 1; num <= n->nports; num++) {
		uint32_t r = fabric_portp(a, node, num)->remote;
		if (r == FAB_NONE)
			continue;
		if (a->nodes[a->ports[r].node].type != FAB_SWITCH ||
		    same_node(a, a->ports[r].node, b) != FAB_NONE)
			return 0;
		linked = 1;
	}
	return linked;
}

static void log_node(const struct fabric *a, uint32_t node,
		     const struct fabric *b, const char *what)
{
	const struct fab_node *n = &a->nodes[node];
	const char *kind = n->type == FAB_SWITCH ? "switch" :
			   n->type == FAB_ROUTER ? "router" : "host";
	char b1[24], b2[24], where[160] = "";
	unsigned links = 0, hosts = 0;
	for (unsigned num = 1; num <= n->nports; num++) {
		const struct fab_port *p = fabric_portp(a, node, num);
		if (p->remote == FAB_NONE)
			continue;
		uint32_t peer = a->ports[p->remote].node;
		hosts += n->type == FAB_SWITCH && goes_with_switch(a, peer, b);
		if (!links++ && n->type != FAB_SWITCH)
			snprintf(where, sizeof(where), ", port %u on \"%s\" port %u",
				 num, name_of(a, peer, b2, sizeof(b2)),
				 a->ports[p->remote].num);
	}
	if (n->type == FAB_SWITCH)
		snprintf(where, sizeof(where), ", %u links, %u hosts %s with it",
			 links, hosts, what);
	log_limited_by(FABEV_BURST, FABEV_WINDOW_MS, LOG_NOTICE,
		       "%s %s: \"%s\" (GUID 0x%016llx%s)", kind, what,
		       name_of(a, node, b1, sizeof(b1)),
		       (unsigned long long)n->guid, where);
}

/* Nodes of a that b lacks (hosts that go with a switch are counted on its line). */
static unsigned nodes_only_in(const struct fabric *a, const struct fabric *b,
			      const char *what, const struct fabric_change_sink *sink,
			      int lost)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < a->n_nodes; i++)
		if (same_node(a, i, b) == FAB_NONE) {
			if (!goes_with_switch(a, i, b))
				log_node(a, i, b, what);
			if (sink && sink->node)
				sink->node(sink->arg, a, i, lost);
			n++;
		}
	return n;
}

/* End ports in both models with a LID in both, and not the same one. */
static unsigned lid_changes(const struct fabric *old, const struct fabric *f)
{
	unsigned n = 0;
	char b[24];
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		uint32_t o = same_node(f, i, old);
		if (o == FAB_NONE)
			continue;
		for (unsigned num = 0; num <= f->nodes[i].nports &&
		     num <= old->nodes[o].nports; num++) {
			uint32_t pi = fabric_port(f, i, num), po = fabric_port(old, o, num);
			uint32_t was = old->ports[po].lid, now = f->ports[pi].lid;
			if (!fabric_is_endport(f, pi) || !fabric_is_endport(old, po) ||
			    !was || !now || was == now)
				continue;
			log_limited_by(FABEV_BURST, FABEV_WINDOW_MS, LOG_NOTICE,
				       "LID change: \"%s\" port %u (GUID 0x%016llx) LID %u -> %u",
				       name_of(f, i, b, sizeof(b)), num,
				       (unsigned long long)f->ports[pi].guid, was, now);
			n++;
		}
	}
	return n;
}

void fabric_log_changes(const struct fabric *old, const struct fabric *f,
			struct fabric_changes *c)
{
	fabric_report_changes(old, f, c, NULL);
}

void fabric_report_changes(const struct fabric *old, const struct fabric *f,
			   struct fabric_changes *c,
			   const struct fabric_change_sink *sink)
{
	struct fabric_changes none;
	if (!c)
		c = &none;
	memset(c, 0, sizeof(*c));
	if (!old)
		return;
	c->nodes_lost = nodes_only_in(old, f, "lost", sink, 1);
	c->nodes_found = nodes_only_in(f, old, "found", sink, 0);
	c->links_lost = links_only_in(old, f, "lost", sink, 1);
	c->links_back = links_only_in(f, old, "returned", sink, 0);
	c->lids_changed = lid_changes(old, f);
}
