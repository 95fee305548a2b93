/*
 * One multicast group's tree (routing/mctree.h).
 *
 * The member end ports' switches (a CA port: the switch it is cabled to
 * by a usable link; a switch's port 0: that switch) are the member rows.
 * Of the switch graph's components, the one holding most member ports is
 * served (ties: the one of the lowest row); members elsewhere are ignored.  The
 * root is the switch of that component with the least maximum hop count
 * to the member rows, then the least total, then the lowest node GUID
 * (OpenSM's osm_mcast_mgr.c:mcast_mgr_find_optimal_switch takes the
 * least maximum -- mcast_mgr_compute_max_hops, +1 to reach a CA member
 * -- and the first switch in GUID order on ties; the total between them
 * picks the shallower tree on average).  A BFS from the root over switch-to-switch links
 * in port order (the lowest port of parallel cables) gives every switch
 * a parent; the tree is the union of the member rows' paths up to the
 * root, so it is loop-free and holds no switch it need not cross.
 */
#include "routing/mctree.h"

#include <stdlib.h>
#include <string.h>

#include "routing/graph.h"

/* The member row and MFT port of end port pi; -1 when it has none. */
static int member_attach(const struct fabric *f, const struct lft_tables *t,
			 uint32_t pi, uint32_t *row, uint8_t *port)
{
	if (pi >= f->n_ports || !(f->ports[pi].flags & FPORT_PRESENT) ||
	    !fabric_is_endport(f, pi))
		return -1;
	const struct fab_port *p = &f->ports[pi];
	if (f->nodes[p->node].type == FAB_SWITCH) {
		*row = t->row_of_node[p->node];
		*port = 0;
		return *row == FAB_NONE ? -1 : 0;
	}
	if (!graph_link_up(f, pi) || !graph_peer_is_switch(f, pi))
		return -1;
	const struct fab_port *r = &f->ports[p->remote];
	*row = t->row_of_node[r->node];
	*port = r->num;
	return *row == FAB_NONE ? -1 : 0;
}

/* comp[row]: its component's lowest row (BFS in row order). */
static void components(const struct sw_graph *g, uint32_t *comp,
		       uint32_t *queue)
{
	for (uint32_t r = 0; r < g->n; r++)
		comp[r] = FAB_NONE;
	for (uint32_t s = 0; s < g->n; s++) {
		if (comp[s] != FAB_NONE)
			continue;
		uint32_t head = 0, tail = 0;
		comp[s] = s;
		queue[tail++] = s;
		while (head < tail) {
			uint32_t u = queue[head++];
			for (uint32_t k = g->off[u]; k < g->off[u + 1]; k++)
				if (comp[g->nbr[k]] == FAB_NONE) {
					comp[g->nbr[k]] = s;
					queue[tail++] = g->nbr[k];
				}
		}
	}
}

/* The component with most member ports (nmem[row]), lowest on ties. */
static uint32_t best_component(const struct sw_graph *g, const uint32_t *comp,
			       const uint32_t *nmem, uint32_t *count)
{
	uint32_t best = FAB_NONE;
	memset(count, 0, (size_t)g->n * sizeof(*count));
	for (uint32_t r = 0; r < g->n; r++)
		count[comp[r]] += nmem[r];
	for (uint32_t r = 0; r < g->n; r++)
		if (count[r] && (best == FAB_NONE || count[r] > count[best]))
			best = r;
	return best;
}

/* The hop counts from row m, from the cache or one BFS. NULL on ENOMEM. */
static const uint16_t *hops_from(struct mcast_work *w, uint32_t m)
{
	uint32_t ns = w->g.n;
	if (w->hops[m])
		return w->hops[m];
	uint16_t *h = malloc((size_t)ns * sizeof(*h));
	if (!h)
		return NULL;
	uint32_t *dist = w->buf + 2 * (size_t)ns, *queue = w->buf + ns;
	sw_graph_bfs(&w->g, &m, 1, dist, queue);
	w->bfs_runs++;
	for (uint32_t r = 0; r < ns; r++)
		h[r] = dist[r] >= UINT16_MAX ? UINT16_MAX : (uint16_t)dist[r];
	return w->hops[m] = h;
}

/*
 * The root: least maximum hops to the member rows of component c, then
 * least total, then lowest node GUID.  FAB_NONE on ENOMEM.
 */
static uint32_t pick_root(struct mcast_work *w, uint32_t c)
{
	const struct fabric *f = w->f;
	const struct lft_tables *t = w->t;
	uint32_t ns = w->g.n, *comp = w->buf, *maxd = w->buf + 3 * (size_t)ns;
	uint64_t *sumd = w->sumd;
	memset(maxd, 0, (size_t)ns * sizeof(*maxd));
	memset(sumd, 0, (size_t)ns * sizeof(*sumd));
	for (uint32_t m = 0; m < ns; m++) {
		if (!w->is_member[m] || comp[m] != c)
			continue;
		const uint16_t *h = hops_from(w, m);
		if (!h)
			return FAB_NONE;
		for (uint32_t r = 0; r < ns; r++)
			if (comp[r] == c) {
				if (h[r] > maxd[r])
					maxd[r] = h[r];
				sumd[r] += h[r];
			}
	}
	uint32_t root = FAB_NONE;
	for (uint32_t r = 0; r < ns; r++) {
		if (comp[r] != c)
			continue;
		if (root == FAB_NONE || maxd[r] < maxd[root] ||
		    (maxd[r] == maxd[root] &&
		     (sumd[r] < sumd[root] ||
		      (sumd[r] == sumd[root] &&
		       f->nodes[t->sw_node[r]].guid < f->nodes[t->sw_node[root]].guid))))
			root = r;
	}
	return root;
}

/*
 * The BFS from root (cached): parent row and the ports of the link on
 * both sides.  NULL on ENOMEM.
 */
static const struct mcast_root *bfs_parents(struct mcast_work *w, uint32_t root)
{
	const struct fabric *f = w->f;
	const struct lft_tables *t = w->t;
	const struct sw_graph *g = &w->g;
	struct mcast_root *R = &w->roots[root];
	if (R->parent)
		return R;
	R->parent = malloc((size_t)g->n * sizeof(*R->parent));
	R->up_port = malloc((size_t)g->n * 2);
	if (!R->parent || !R->up_port) {
		free(R->parent);
		free(R->up_port);
		R->parent = NULL;
		R->up_port = NULL;
		return NULL;
	}
	R->down_port = R->up_port + g->n;
	uint32_t *parent = R->parent, *queue = w->buf + g->n, head = 0, tail = 0;
	for (uint32_t r = 0; r < g->n; r++)
		parent[r] = FAB_NONE;
	parent[root] = root;
	queue[tail++] = root;
	while (head < tail) {
		uint32_t u = queue[head++];
		for (uint32_t k = g->off[u]; k < g->off[u + 1]; k++) {
			uint32_t v = g->nbr[k];
			if (parent[v] != FAB_NONE)
				continue;
			uint32_t pi = fabric_port(f, t->sw_node[u], g->port[k]);
			parent[v] = u;
			R->down_port[v] = g->port[k];	/* u's port towards v */
			R->up_port[v] = f->ports[f->ports[pi].remote].num;
			queue[tail++] = v;
		}
	}
	w->bfs_runs++;
	return R;
}

int mcast_work_init(struct mcast_work *w, const struct fabric *f,
		    const struct lft_tables *t)
{
	uint32_t ns = t->n_sw;
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->t = t;
	if (sw_graph_build(&w->g, f, t) < 0)
		return -1;
	w->buf = calloc((size_t)ns * 5 + 1, sizeof(*w->buf));
	w->sumd = calloc((size_t)ns + 1, sizeof(*w->sumd));
	w->is_member = calloc((size_t)ns + 1, 1);
	w->hops = calloc((size_t)ns + 1, sizeof(*w->hops));
	w->roots = calloc((size_t)ns + 1, sizeof(*w->roots));
	if (!w->buf || !w->sumd || !w->is_member || !w->hops || !w->roots) {
		mcast_work_free(w);
		return -1;
	}
	components(&w->g, w->buf, w->buf + ns);	/* comp: once for every group */
	return 0;
}

void mcast_work_free(struct mcast_work *w)
{
	for (uint32_t r = 0; r < w->g.n; r++) {
		if (w->hops)
			free(w->hops[r]);
		if (w->roots) {
			free(w->roots[r].parent);
			free(w->roots[r].up_port);
		}
	}
	sw_graph_free(&w->g);
	free(w->buf);
	free(w->sumd);
	free(w->is_member);
	free(w->hops);
	free(w->roots);
	memset(w, 0, sizeof(*w));
}

int mcast_tree_w(struct mcast_work *w, const uint32_t *ports, uint32_t n,
		 uint64_t *mask, uint32_t *root_row)
{
	const struct fabric *f = w->f;
	const struct lft_tables *t = w->t;
	uint32_t ns = t->n_sw;
	*root_row = FAB_NONE;
	memset(mask, 0, (size_t)ns * MCAST_MASK_WORDS * sizeof(*mask));
	if (!ns || !n)
		return 0;
	uint32_t *comp = w->buf, *nmem = w->buf + 4 * (size_t)ns;
	uint8_t *is_member = w->is_member;
	memset(is_member, 0, ns);
	memset(nmem, 0, (size_t)ns * sizeof(*nmem));
	for (uint32_t i = 0; i < n; i++) {
		uint32_t row;
		uint8_t port;
		if (member_attach(f, t, ports[i], &row, &port) == 0) {
			is_member[row] = 1;
			nmem[row]++;
		}
	}
	uint32_t c = best_component(&w->g, comp, nmem, w->buf + 3 * (size_t)ns);
	if (c == FAB_NONE)
		return 0;
	uint32_t root = pick_root(w, c);
	const struct mcast_root *R = root == FAB_NONE ? NULL : bfs_parents(w, root);
	if (!R)
		return -1;
	/* every member row's path up to the root, until a row already in */
	uint8_t *in = (uint8_t *)(w->buf + 3 * (size_t)ns);	/* maxd is done with */
	memset(in, 0, ns);
	in[root] = 1;
	for (uint32_t m = 0; m < ns; m++) {
		for (uint32_t v = m; is_member[m] && comp[m] == c && !in[v];
		     v = R->parent[v]) {
			in[v] = 1;
			mcast_mask_set(mask + (size_t)v * MCAST_MASK_WORDS, R->up_port[v]);
			mcast_mask_set(mask + (size_t)R->parent[v] * MCAST_MASK_WORDS,
				       R->down_port[v]);
		}
	}
	/* the members' own ports, on the served component's switches */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t row;
		uint8_t port;
		if (member_attach(f, t, ports[i], &row, &port) == 0 && comp[row] == c)
			mcast_mask_set(mask + (size_t)row * MCAST_MASK_WORDS, port);
	}
	*root_row = root;
	return 0;
}

int mcast_tree(const struct fabric *f, const struct lft_tables *t,
	       const uint32_t *ports, uint32_t n, uint64_t *mask,
	       uint32_t *root_row)
{
	struct mcast_work w;
	*root_row = FAB_NONE;
	if (mcast_work_init(&w, f, t) < 0)
		return -1;
	int rc = mcast_tree_w(&w, ports, n, mask, root_row);
	mcast_work_free(&w);
	return rc;
}
