/* Graph helpers shared by the engines and the verifier (see graph.h). */
#include "routing/graph.h"

#include <stdlib.h>
#include <string.h>

void sw_graph_free(struct sw_graph *g)
{
	free(g->off);
	free(g->nbr);
	free(g->port);
	free(g->has_ca);
	memset(g, 0, sizeof(*g));
}

int sw_graph_build(struct sw_graph *g, const struct fabric *f,
		   const struct lft_tables *t)
{
	uint32_t m = 0;
	memset(g, 0, sizeof(*g));
	g->n = t->n_sw;
	g->off = calloc((size_t)g->n + 1, sizeof(*g->off));
	g->has_ca = calloc((size_t)g->n + 1, 1);
	if (!g->off || !g->has_ca)
		goto fail;
	for (uint32_t r = 0; r < g->n; r++) {
		const struct fab_node *n = &f->nodes[t->sw_node[r]];
		for (int p = 1; p <= n->nports; p++) {
			uint32_t pi = n->first_port + p;
			if (!graph_link_up(f, pi))
				continue;
			if (graph_peer_is_switch(f, pi))
				m++;
			else
				g->has_ca[r] = 1;
		}
	}
	g->nbr = malloc(((size_t)m + 1) * sizeof(*g->nbr));
	g->port = malloc((size_t)m + 1);
	if (!g->nbr || !g->port)
		goto fail;
	m = 0;
	for (uint32_t r = 0; r < g->n; r++) {
		const struct fab_node *n = &f->nodes[t->sw_node[r]];
		g->off[r] = m;
		for (int p = 1; p <= n->nports; p++) {
			uint32_t pi = n->first_port + p;
			if (!graph_link_up(f, pi) || !graph_peer_is_switch(f, pi))
				continue;
			g->nbr[m] = t->row_of_node[f->ports[f->ports[pi].remote].node];
			g->port[m] = (uint8_t)p;
			m++;
		}
	}
	g->off[g->n] = m;
	return 0;
fail:
	sw_graph_free(g);
	return -1;
}

void sw_graph_bfs(const struct sw_graph *g, const uint32_t *src,
		  uint32_t nsrc, uint32_t *dist, uint32_t *queue)
{
	uint32_t qh = 0, qt = 0;
	for (uint32_t i = 0; i < g->n; i++)
		dist[i] = UINT32_MAX;
	for (uint32_t i = 0; i < nsrc; i++) {
		if (dist[src[i]] == UINT32_MAX) {
			dist[src[i]] = 0;
			queue[qt++] = src[i];
		}
	}
	while (qh < qt) {
		uint32_t u = queue[qh++];
		for (uint32_t e = g->off[u]; e < g->off[u + 1]; e++) {
			uint32_t v = g->nbr[e];
			if (dist[v] == UINT32_MAX) {
				dist[v] = dist[u] + 1;
				queue[qt++] = v;
			}
		}
	}
}

int graph_lid_attach(const struct fabric *f, const struct lft_tables *t,
		     uint32_t lid, uint32_t *row, uint8_t *port)
{
	uint32_t pi = f->lid_port[lid];
	if (pi == FAB_NONE)
		return -1;
	const struct fab_port *p = &f->ports[pi];
	if (f->nodes[p->node].type == FAB_SWITCH) {
		*row = t->row_of_node[p->node];
		*port = 0;
		return 0;
	}
	if (!graph_link_up(f, pi) || !graph_peer_is_switch(f, pi))
		return -1;
	*row = t->row_of_node[f->ports[p->remote].node];
	*port = f->ports[p->remote].num;
	return 0;
}

/* VLCap -> data VLs: 1, 2, 4, 8, 15 (0: unknown) */
static unsigned vlcap_data_vls(unsigned cap)
{
	static const unsigned n[] = { 15, 1, 2, 4, 8, 15 };
	return cap < sizeof(n) / sizeof(n[0]) ? n[cap] : 15;
}

unsigned graph_data_vls(const struct fabric *f, unsigned cap)
{
	unsigned vls = cap && cap < 15 ? cap : 15;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (!graph_link_up(f, pi) || !p->vl_cap || !f->ports[p->remote].vl_cap)
			continue;
		unsigned n = vlcap_data_vls(p->vl_cap);
		if (n < vls)
			vls = n;
	}
	return vls ? vls : 1;
}

int sw_links_build(struct sw_links *k, const struct sw_graph *g,
		   const struct fabric *f, const struct lft_tables *t)
{
	memset(k, 0, sizeof(*k));
	k->n_links = g->off[g->n];
	k->stride = 1;
	for (uint32_t r = 0; r < g->n; r++)
		if (f->nodes[t->sw_node[r]].nports + 1u > k->stride)
			k->stride = f->nodes[t->sw_node[r]].nports + 1u;
	size_t nl = (size_t)k->n_links + 1, nr = (size_t)g->n + 1;
	k->tail = malloc(nl * sizeof(*k->tail));
	k->rev = malloc(nl * sizeof(*k->rev));
	k->link_at = malloc(nr * k->stride * sizeof(*k->link_at));
	k->n_src = calloc(nr, sizeof(*k->n_src));
	if (!k->tail || !k->rev || !k->link_at || !k->n_src)
		return -1;
	for (size_t i = 0; i < (size_t)g->n * k->stride; i++)
		k->link_at[i] = GRAPH_NONE;
	for (uint32_t r = 0; r < g->n; r++)
		for (uint32_t e = g->off[r]; e < g->off[r + 1]; e++) {
			k->link_at[(size_t)r * k->stride + g->port[e]] = e;
			k->tail[e] = r;
		}
	for (uint32_t r = 0; r < g->n; r++) {
		const struct fab_node *nd = &f->nodes[t->sw_node[r]];
		for (uint32_t e = g->off[r]; e < g->off[r + 1]; e++) {
			const struct fab_port *q = &f->ports[f->ports[nd->first_port + g->port[e]].remote];
			k->rev[e] = k->link_at[(size_t)g->nbr[e] * k->stride + q->num];
		}
		for (int p = 1; p <= nd->nports; p++) {
			uint32_t pi = nd->first_port + (uint32_t)p;
			if (graph_link_up(f, pi) && !graph_peer_is_switch(f, pi))
				k->n_src[r]++;
		}
		k->p += k->n_src[r];
	}
	return 0;
}

void sw_links_free(struct sw_links *k)
{
	free(k->tail);
	free(k->rev);
	free(k->link_at);
	free(k->n_src);
	memset(k, 0, sizeof(*k));
}

uint32_t graph_next_hop(const struct fabric *f, const struct lft_tables *t,
			uint32_t in, uint32_t lid)
{
	uint32_t node = f->ports[in].node;
	uint32_t row = t->row_of_node[node];
	if (row == FAB_NONE || lid == 0 || lid > t->max_lid)
		return FAB_NONE;
	uint8_t out = lft_row(t, row)[lid];
	if (out == LFT_DROP || out == 0 || out > f->nodes[node].nports)
		return FAB_NONE;
	uint32_t pi = fabric_port(f, node, out);
	return graph_link_up(f, pi) ? pi : FAB_NONE;
}
