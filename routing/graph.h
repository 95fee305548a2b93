/*
 * Graph helpers shared by the routing engines and the verifier: which
 * links carry traffic, the switch-to-switch graph by LFT row, hop counts,
 * and where a LID attaches to a switch.  Pure functions of the fabric
 * model; no I/O.
 */
#ifndef IBSMD_GRAPH_H
#define IBSMD_GRAPH_H

#include <stdint.h>

#include "routing/engine.h"

/*
 * Switches by LFT row and their usable switch-to-switch links, neighbours
 * of row r in port order: nbr[off[r] .. off[r + 1]) with the local port
 * towards each in port[] (parallel cables appear once per cable).
 */
struct sw_graph {
	uint32_t n;		/* switches (rows) */
	uint32_t *off;		/* n + 1 offsets into nbr[] and port[] */
	uint32_t *nbr;		/* neighbour row */
	uint8_t *port;		/* local port towards it */
	uint8_t *has_ca;	/* per row: a CA or router is cabled to it */
};

/* Port pi has a link both of whose ends are present and LinkUp. */
static inline int graph_link_up(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	if (!(p->flags & FPORT_PRESENT) || p->remote == FAB_NONE)
		return 0;
	const struct fab_port *r = &f->ports[p->remote];
	return (r->flags & FPORT_PRESENT) && p->phys_state == PHYS_LINKUP &&
	       r->phys_state == PHYS_LINKUP;
}

/* The node at the far end of port pi (which has a link) is a switch. */
static inline int graph_peer_is_switch(const struct fabric *f, uint32_t pi)
{
	return f->nodes[f->ports[f->ports[pi].remote].node].type == FAB_SWITCH;
}

/* Port pi is a switch port sending on a usable switch-to-switch link. */
static inline int graph_sw_link(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	return p->num != 0 && f->nodes[p->node].type == FAB_SWITCH &&
	       graph_link_up(f, pi) && graph_peer_is_switch(f, pi);
}

/*
 * One hop of a route to lid that enters a switch at port in: the port
 * it leaves by, over a usable link, or FAB_NONE when in is no switch's,
 * the LFT drops lid or names a port the switch lacks, or the link is not
 * usable.
 */
uint32_t graph_next_hop(const struct fabric *f, const struct lft_tables *t,
			uint32_t in, uint32_t lid);

/* Builds g from f's usable links; 0, or -1 on ENOMEM with g emptied. */
int sw_graph_build(struct sw_graph *g, const struct fabric *f,
		   const struct lft_tables *t);
void sw_graph_free(struct sw_graph *g);
/*
 * Hop counts from the rows src[0..nsrc) (a multi-source BFS): dist[row],
 * UINT32_MAX where unreached.  dist and queue hold g->n entries.
 */
void sw_graph_bfs(const struct sw_graph *g, const uint32_t *src,
		  uint32_t nsrc, uint32_t *dist, uint32_t *queue);

/*
 * The switch row and port where LID lid's port attaches: a switch's own
 * LID at port 0, a CA port at the switch port it is cabled to by a usable
 * link.  0, or -1 when the LID is unassigned or attached to no switch.
 */
int graph_lid_attach(const struct fabric *f, const struct lft_tables *t,
		     uint32_t lid, uint32_t *row, uint8_t *port);

/*
 * The directed switch-to-switch links of g for the engines that route on
 * links (dfsssp, nue): link e leaves row tail[e] by port g->port[e] for
 * row g->nbr[e]; rev[e] is the same cable the other way (GRAPH_NONE: no
 * link back); link_at[row * stride + port] is the link out of that port
 * (GRAPH_NONE); n_src[row] the CA ports cabled to the row, p all of them.
 */
#define GRAPH_NONE UINT32_MAX
struct sw_links {
	uint32_t n_links, stride;	/* stride: the widest switch's ports + 1 */
	uint32_t *tail, *rev, *link_at, *n_src;
	uint64_t p;
};

/* 0, or -1 (ENOMEM; sw_links_free() still safe). */
int sw_links_build(struct sw_links *k, const struct sw_graph *g,
		   const struct fabric *f, const struct lft_tables *t);
void sw_links_free(struct sw_links *k);

/*
 * The data VLs every usable link offers: the fewer of its ends' VLCap
 * (PortInfo, IBA 14.2.5.6: 1, 2, 4, 8 or 15 VLs), links whose VLCap is
 * unknown (offline) bounding nothing, at most cap (0: 15), at least 1.
 */
unsigned graph_data_vls(const struct fabric *f, unsigned cap);

#endif
