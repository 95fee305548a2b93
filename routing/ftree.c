/*
 * ftree: fat-tree routing after OpenSM's ftree engine.
 *
 * The tree is found from the fabric alone: the leaves are the switches
 * with CAs; the roots are the routing roots given (node descriptions or
 * "0x" GUIDs) or else, per connected component, the switches farthest from
 * every leaf; a switch's rank is its BFS distance from the roots (0 = root).
 * Links between switches of one rank are not used.  Every switch gets a
 * tuple as in OpenSM (BFS from the first leaf, one index varying per
 * level); tuples give the fixed order of leaves and of port groups.
 *
 * Destinations are routed leaf by leaf in tuple order, the CA ports of a
 * leaf in port order (and with LMC > 0 the n-th LID of every port in the
 * n-th round).  For one destination LID on leaf A:
 *   - the main path goes up from A, at each switch over the up link
 *     whose downward counter is lowest (ties: tuple order): the switches
 *     on it route the LID down that link, and the counter is raised;
 *   - every other switch that can reach A going only down (A's ancestors)
 *     routes it down, every switch that cannot routes it up, always over a
 *     link that keeps the route shortest among up*-then-down* routes, and
 *     among those the one whose route joins the main path soonest (ties:
 *     the link carrying the fewest CA-to-CA routes so far, then tuple
 *     order).  Traffic to one destination thus converges on its own path
 *     through the tree, as in OpenSM's down-going-by-going-up /
 *     up-going-by-going-down recursion, and the main paths are spread by
 *     the counters.  Every switch that has such a route gets an entry.
 *   - the number of CA ports behind each switch is then pushed along the
 *     chosen links, which keeps the per-link route counts the tie-breaks
 *     use.
 * Leaves with fewer CA ports than the fullest leaf route dummy
 * destinations (counters only), as OpenSM does, to keep the levels even.
 * Switch LIDs follow, with the same rules but without counting.  Last,
 * a switch that has no up*-down* route to a LID (a spine to a spine in a
 * 3-level tree, or any switch of a damaged tree) gets the route it has to
 * the last leaf, whose own route then takes over: only switch-originated
 * traffic can take such a turn, and all of it turns at that one leaf.
 *
 * Routes are up*-then-down* on strictly ranked links, so CA-to-CA traffic
 * has no channel dependency cycle; on a fat tree they are also shortest.
 * A fabric that is not a clean fat tree (links missing, leaves with fewer
 * up links, CAs on spines) is routed the same way, less evenly.  The
 * engine fails only when there is no leaf, when a routing root is
 * unknown, or when some leaf has no up*-down* route to some CA port of its
 * component (not a tree, e.g. a ring or mesh of switches with CAs).
 *
 * Cost: one O(switch links) pass per destination over candidate lists
 * computed once per destination switch; plain arrays throughout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define FT_INF		UINT16_MAX
#define FT_TUPLE_LEN	8
#define FT_TUPLE_FREE	0xff

struct ft_link {
	uint32_t row;		/* the switch at the other end */
	uint8_t port;		/* local port */
	uint8_t rport;		/* the other end's port */
};

struct ft {
	const struct fabric *f;
	struct lft_tables *t;
	uint32_t n;		/* switches (rows) */
	uint32_t stride;	/* widest switch's ports + 1 */

	/* usable switch-to-switch links: all, then up (rank - 1) and down */
	uint32_t *adj_off, *up_off, *dn_off;
	struct ft_link *adj, *up, *dn;
	/* CA (and router) end ports cabled to each switch, in port order */
	uint32_t *ca_off, *ca_pi;
	uint8_t *ca_lport;

	uint32_t *comp;		/* row -> component */
	uint32_t n_comp;
	uint64_t *comp_guid;	/* component -> lowest switch GUID */
	uint32_t *comp_leaves;	/* component -> switches with CAs */
	uint32_t *fill_row;	/* component -> last leaf, FAB_NONE */
	uint8_t *is_root;
	uint32_t *rank;
	uint8_t *tuple;		/* row * FT_TUPLE_LEN */
	uint32_t *key;		/* row -> position in the fixed order */
	uint32_t *sorted;	/* position -> row */
	uint32_t *by_rank;	/* rows by rank */
	uint32_t *queue;

	/* per destination switch */
	uint16_t *h;		/* up*-down* hops to it, FT_INF: none */
	uint8_t *inset;		/* reaches it going only down */
	uint32_t *order;	/* rows with a route, by h */
	uint32_t n_order;
	uint32_t *cand_off;	/* per order position */
	struct ft_link *cand;
	uint32_t *hcount;

	/* per destination LID */
	uint16_t *dj;		/* hops to the main path */
	uint32_t *cstamp, stamp;	/* on the main path when == stamp */
	uint32_t *cnext;
	uint8_t *cport;
	uint32_t *nrow;
	uint8_t *nport;
	uint32_t *w;

	uint32_t *cdown;	/* main paths per directed link (sender, port) */
	uint64_t *load;		/* CA-to-CA routes per directed link */
};

static int usable_link(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	if (!(p->flags & FPORT_PRESENT) || p->remote == FAB_NONE)
		return 0;
	const struct fab_port *r = &f->ports[p->remote];
	return (r->flags & FPORT_PRESENT) && p->phys_state == PHYS_LINKUP &&
	       r->phys_state == PHYS_LINKUP;
}

static const struct fab_node *row_node(const struct ft *ft, uint32_t row)
{
	return &ft->f->nodes[ft->t->sw_node[row]];
}

/* Switch links and attached CA ports. */
static int ft_links(struct ft *ft)
{
	const struct fabric *f = ft->f;
	uint32_t m = 0, c = 0;

	ft->adj_off = calloc((size_t)ft->n + 1, sizeof(*ft->adj_off));
	ft->ca_off = calloc((size_t)ft->n + 1, sizeof(*ft->ca_off));
	if (!ft->adj_off || !ft->ca_off)
		return -1;
	for (int pass = 0; pass < 2; pass++) {
		m = c = 0;
		for (uint32_t r = 0; r < ft->n; r++) {
			const struct fab_node *nd = row_node(ft, r);
			ft->adj_off[r] = m;
			ft->ca_off[r] = c;
			for (unsigned p = 1; p <= nd->nports; p++) {
				uint32_t pi = nd->first_port + p;
				if (!usable_link(f, pi))
					continue;
				const struct fab_port *rp = &f->ports[f->ports[pi].remote];
				const struct fab_node *rn = &f->nodes[rp->node];
				if (rn->type == FAB_SWITCH) {
					if (pass) {
						ft->adj[m].row = ft->t->row_of_node[rp->node];
						ft->adj[m].port = (uint8_t)p;
						ft->adj[m].rport = rp->num;
					}
					m++;
				} else if (rp->num != 0) {
					if (pass) {
						ft->ca_pi[c] = f->ports[pi].remote;
						ft->ca_lport[c] = (uint8_t)p;
					}
					c++;
				}
			}
		}
		ft->adj_off[ft->n] = m;
		ft->ca_off[ft->n] = c;
		if (!pass) {
			ft->adj = malloc(((size_t)m + 1) * sizeof(*ft->adj));
			ft->up = malloc(((size_t)m + 1) * sizeof(*ft->up));
			ft->dn = malloc(((size_t)m + 1) * sizeof(*ft->dn));
			ft->cand = malloc(((size_t)m + 1) * sizeof(*ft->cand));
			ft->ca_pi = malloc(((size_t)c + 1) * sizeof(*ft->ca_pi));
			ft->ca_lport = malloc((size_t)c + 1);
			if (!ft->adj || !ft->up || !ft->dn || !ft->cand ||
			    !ft->ca_pi || !ft->ca_lport)
				return -1;
		}
	}
	return 0;
}

static uint32_t n_ca(const struct ft *ft, uint32_t r)
{
	return ft->ca_off[r + 1] - ft->ca_off[r];
}

/* Connected components of the switch graph, each with its lowest GUID. */
static int ft_components(struct ft *ft)
{
	uint32_t *comp = ft->comp;
	for (uint32_t r = 0; r < ft->n; r++)
		comp[r] = FAB_NONE;
	ft->n_comp = 0;
	for (uint32_t s = 0; s < ft->n; s++) {
		if (comp[s] != FAB_NONE)
			continue;
		uint32_t qh = 0, qt = 0;
		comp[s] = ft->n_comp;
		ft->queue[qt++] = s;
		while (qh < qt) {
			uint32_t u = ft->queue[qh++];
			for (uint32_t e = ft->adj_off[u]; e < ft->adj_off[u + 1]; e++) {
				uint32_t v = ft->adj[e].row;
				if (comp[v] == FAB_NONE) {
					comp[v] = ft->n_comp;
					ft->queue[qt++] = v;
				}
			}
		}
		ft->n_comp++;
	}
	ft->comp_guid = malloc(((size_t)ft->n_comp + 1) * sizeof(*ft->comp_guid));
	ft->comp_leaves = calloc((size_t)ft->n_comp + 1, sizeof(*ft->comp_leaves));
	ft->fill_row = malloc(((size_t)ft->n_comp + 1) * sizeof(*ft->fill_row));
	if (!ft->comp_guid || !ft->comp_leaves || !ft->fill_row)
		return -1;
	for (uint32_t c = 0; c < ft->n_comp; c++) {
		ft->comp_guid[c] = UINT64_MAX;
		ft->fill_row[c] = FAB_NONE;
	}
	for (uint32_t r = 0; r < ft->n; r++) {
		uint64_t g = row_node(ft, r)->guid;
		if (g < ft->comp_guid[comp[r]])
			ft->comp_guid[comp[r]] = g;
		if (n_ca(ft, r))
			ft->comp_leaves[comp[r]]++;
	}
	return 0;
}

/* Multi-source BFS over all switch links from the rows in queue[0..qt). */
static void bfs_from(struct ft *ft, uint32_t qt, uint32_t *dist)
{
	uint32_t qh = 0;
	while (qh < qt) {
		uint32_t u = ft->queue[qh++];
		for (uint32_t e = ft->adj_off[u]; e < ft->adj_off[u + 1]; e++) {
			uint32_t v = ft->adj[e].row;
			if (dist[v] == UINT32_MAX) {
				dist[v] = dist[u] + 1;
				ft->queue[qt++] = v;
			}
		}
	}
}

/* Does the text name this switch: "0x..." GUID or node description? */
static int root_matches(const struct fab_node *nd, const char *name)
{
	if ((name[0] == '0') && (name[1] == 'x' || name[1] == 'X')) {
		char *end;
		unsigned long long g = strtoull(name + 2, &end, 16);
		if (end != name + 2 && *end == '\0')
			return nd->guid == (uint64_t)g;
	}
	return !strcmp(nd->desc, name);
}

/* Roots (given, or the switches farthest from the leaves), then ranks. */
static int ft_rank(struct ft *ft, const struct route_opts *o, char *err,
		   size_t errlen)
{
	uint32_t *dist = ft->rank;	/* distance from the leaves first */
	uint32_t qt = 0;
	uint8_t *has_root = calloc((size_t)ft->n_comp + 1, 1);
	uint32_t *far = calloc((size_t)ft->n_comp + 1, sizeof(*far));
	if (!has_root || !far) {
		free(has_root);
		free(far);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memset(ft->is_root, 0, ft->n);
	for (int i = 0; o && i < o->n_roots; i++) {
		char name[65];
		int found = 0;
		memcpy(name, o->roots[i], 64);
		name[64] = '\0';
		for (uint32_t r = 0; r < ft->n; r++) {
			if (root_matches(row_node(ft, r), name)) {
				ft->is_root[r] = 1;
				has_root[ft->comp[r]] = 1;
				found = 1;
			}
		}
		if (!found) {
			snprintf(err, errlen, "routing root '%s' is not a switch "
				 "of this fabric", name);
			free(has_root);
			free(far);
			return -1;
		}
	}
	for (uint32_t r = 0; r < ft->n; r++) {
		dist[r] = UINT32_MAX;
		if (n_ca(ft, r)) {
			dist[r] = 0;
			ft->queue[qt++] = r;
		}
	}
	bfs_from(ft, qt, dist);
	for (uint32_t r = 0; r < ft->n; r++)
		if (dist[r] != UINT32_MAX && dist[r] > far[ft->comp[r]])
			far[ft->comp[r]] = dist[r];
	for (uint32_t r = 0; r < ft->n; r++) {
		uint32_t c = ft->comp[r];
		if (has_root[c])
			continue;
		if (ft->comp_leaves[c])
			ft->is_root[r] = dist[r] == far[c];
		else	/* no CA at all: its lowest GUID switch */
			ft->is_root[r] = row_node(ft, r)->guid == ft->comp_guid[c];
	}
	free(has_root);
	free(far);
	qt = 0;
	for (uint32_t r = 0; r < ft->n; r++) {
		ft->rank[r] = UINT32_MAX;
		if (ft->is_root[r]) {
			ft->rank[r] = 0;
			ft->queue[qt++] = r;
		}
	}
	bfs_from(ft, qt, ft->rank);
	return 0;
}

/* Up and down links by rank; links within a rank are left out. */
static void ft_split(struct ft *ft)
{
	uint32_t nu = 0, nd = 0;
	for (uint32_t r = 0; r < ft->n; r++) {
		ft->up_off[r] = nu;
		ft->dn_off[r] = nd;
		for (uint32_t e = ft->adj_off[r]; e < ft->adj_off[r + 1]; e++) {
			uint32_t v = ft->adj[e].row;
			if (ft->rank[v] + 1 == ft->rank[r])
				ft->up[nu++] = ft->adj[e];
			else if (ft->rank[v] == ft->rank[r] + 1)
				ft->dn[nd++] = ft->adj[e];
		}
	}
	ft->up_off[ft->n] = nu;
	ft->dn_off[ft->n] = nd;
}

/* --- tuples --- */

struct tuple_set {
	uint64_t *keys;		/* packed tuples */
	uint32_t *comp;
	uint8_t *used;
	uint32_t mask;
};

static uint64_t tuple_pack(const uint8_t *t)
{
	uint64_t v = 0;
	for (int i = 0; i < FT_TUPLE_LEN; i++)
		v = v << 8 | t[i];
	return v;
}

static uint32_t tuple_hash(uint64_t v, uint32_t comp, uint32_t mask)
{
	v ^= (uint64_t)comp * 0x9e3779b97f4a7c15ull;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 29;
	return (uint32_t)v & mask;
}

/* Adds the tuple (or only tests); returns 0 when it was already there. */
static int tuple_add(struct tuple_set *s, const uint8_t *t, uint32_t comp,
		     int only_test)
{
	uint64_t v = tuple_pack(t);
	for (uint32_t i = tuple_hash(v, comp, s->mask);; i = (i + 1) & s->mask) {
		if (!s->used[i]) {
			if (!only_test) {
				s->keys[i] = v;
				s->comp[i] = comp;
				s->used[i] = 1;
			}
			return 1;
		}
		if (s->keys[i] == v && s->comp[i] == comp)
			return 0;
	}
}

/*
 * OpenSM's indexing: the first leaf is (rank, 0, ..., 0); a switch found
 * going down from rank r gets its parent's tuple with rank r + 1 and the
 * lowest free value at position r + 1; going up, rank r - 1 and position
 * r.  Returns -1 when a tuple does not fit (very deep or wide trees).
 */
static int ft_tuples(struct ft *ft, const uint32_t *first)
{
	struct tuple_set s = { 0 };
	uint32_t cap = 16;
	int rc = -1;
	while (cap < 2 * ft->n + 2)
		cap <<= 1;
	s.keys = calloc(cap, sizeof(*s.keys));
	s.comp = calloc(cap, sizeof(*s.comp));
	s.used = calloc(cap, 1);
	uint8_t *done = calloc((size_t)ft->n + 1, 1);
	if (!s.keys || !s.comp || !s.used || !done)
		goto out;
	s.mask = cap - 1;
	memset(ft->tuple, FT_TUPLE_FREE, (size_t)ft->n * FT_TUPLE_LEN);
	for (uint32_t c = 0; c < ft->n_comp; c++) {
		uint32_t qh = 0, qt = 0, r0 = first[c];
		uint8_t *t0 = ft->tuple + (size_t)r0 * FT_TUPLE_LEN;
		if (ft->rank[r0] >= FT_TUPLE_LEN)
			goto out;
		t0[0] = (uint8_t)ft->rank[r0];
		for (uint32_t i = 1; i <= ft->rank[r0]; i++)
			t0[i] = 0;
		tuple_add(&s, t0, c, 0);
		done[r0] = 1;
		ft->queue[qt++] = r0;
		while (qh < qt) {
			uint32_t u = ft->queue[qh++];
			const uint8_t *tu = ft->tuple + (size_t)u * FT_TUPLE_LEN;
			for (int dir = 0; dir < 2; dir++) {
				const uint32_t *off = dir ? ft->up_off : ft->dn_off;
				const struct ft_link *l = dir ? ft->up : ft->dn;
				for (uint32_t e = off[u]; e < off[u + 1]; e++) {
					uint32_t v = l[e].row;
					if (done[v])
						continue;
					uint8_t tv[FT_TUPLE_LEN];
					unsigned var = dir ? tu[0] : tu[0] + 1u;
					if (var < 1 || var >= FT_TUPLE_LEN)
						goto out;
					memcpy(tv, tu, FT_TUPLE_LEN);
					tv[0] = (uint8_t)(dir ? tu[0] - 1 : tu[0] + 1);
					unsigned i;
					for (i = 0; i < FT_TUPLE_FREE; i++) {
						tv[var] = (uint8_t)i;
						if (tuple_add(&s, tv, c, 1))
							break;
					}
					if (i == FT_TUPLE_FREE)
						goto out;
					tuple_add(&s, tv, c, 0);
					memcpy(ft->tuple + (size_t)v * FT_TUPLE_LEN, tv,
					       FT_TUPLE_LEN);
					done[v] = 1;
					ft->queue[qt++] = v;
				}
			}
		}
	}
	rc = 0;
out:
	free(s.keys);
	free(s.comp);
	free(s.used);
	free(done);
	return rc;
}

struct sort_ent {
	uint64_t a, b, c;
	uint32_t row;
};

static int sort_ent_cmp(const void *x, const void *y)
{
	const struct sort_ent *p = x, *q = y;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	if (p->c != q->c)
		return p->c < q->c ? -1 : 1;
	return 0;
}

/*
 * The fixed order of switches: by component (lowest GUID), then tuple
 * (rank first), then GUID; by component, rank, GUID when tuples do not
 * fit.  Nothing depends on the order of the fabric's arrays.
 */
static int ft_order(struct ft *ft)
{
	uint32_t *first = malloc(((size_t)ft->n_comp + 1) * sizeof(*first));
	struct sort_ent *se = malloc(((size_t)ft->n + 1) * sizeof(*se));
	if (!first || !se) {
		free(first);
		free(se);
		return -1;
	}
	/* the tuple BFS starts at a component's lowest GUID leaf */
	for (uint32_t c = 0; c < ft->n_comp; c++)
		first[c] = FAB_NONE;
	for (uint32_t r = 0; r < ft->n; r++) {
		uint32_t c = ft->comp[r];
		if (!n_ca(ft, r) && ft->comp_leaves[c])
			continue;
		if (first[c] == FAB_NONE ||
		    row_node(ft, r)->guid < row_node(ft, first[c])->guid)
			first[c] = r;
	}
	int tuples = ft_tuples(ft, first) == 0;
	for (uint32_t r = 0; r < ft->n; r++) {
		se[r].a = ft->comp_guid[ft->comp[r]];
		se[r].b = tuples ? tuple_pack(ft->tuple + (size_t)r * FT_TUPLE_LEN)
				 : ft->rank[r];
		se[r].c = row_node(ft, r)->guid;
		se[r].row = r;
	}
	qsort(se, ft->n, sizeof(*se), sort_ent_cmp);
	for (uint32_t i = 0; i < ft->n; i++) {
		ft->sorted[i] = se[i].row;
		ft->key[se[i].row] = i;
	}
	/* rows by rank, for the hop counts */
	for (uint32_t r = 0; r < ft->n; r++) {
		se[r].a = ft->rank[r];
		se[r].b = ft->key[r];
		se[r].c = 0;
		se[r].row = r;
	}
	qsort(se, ft->n, sizeof(*se), sort_ent_cmp);
	for (uint32_t i = 0; i < ft->n; i++)
		ft->by_rank[i] = se[i].row;
	free(first);
	free(se);
	/* the last leaf of each component takes the turns of filled routes */
	for (uint32_t i = 0; i < ft->n; i++) {
		uint32_t r = ft->sorted[i];
		if (n_ca(ft, r))
			ft->fill_row[ft->comp[r]] = r;
	}
	return 0;
}

/* Port groups in the fixed order: by the remote switch, then port. */
static void sort_links(const struct ft *ft, struct ft_link *l, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		struct ft_link x = l[i];
		uint64_t kx = (uint64_t)ft->key[x.row] << 8 | x.port;
		uint32_t j = i;
		while (j > 0 && ((uint64_t)ft->key[l[j - 1].row] << 8 |
				 l[j - 1].port) > kx) {
			l[j] = l[j - 1];
			j--;
		}
		l[j] = x;
	}
}

/* --- per destination switch --- */

/*
 * Up*-down* hop counts to row a, the rows that have a route in order of
 * hops, and each one's candidate links (those on a shortest legal route).
 */
static void ft_dest(struct ft *ft, uint32_t a)
{
	uint16_t *h = ft->h;
	uint32_t qh = 0, qt = 0, maxh = 0;

	for (uint32_t r = 0; r < ft->n; r++) {
		h[r] = FT_INF;
		ft->inset[r] = 0;
	}
	h[a] = 0;
	ft->inset[a] = 1;
	ft->queue[qt++] = a;
	while (qh < qt) {
		uint32_t u = ft->queue[qh++];
		for (uint32_t e = ft->up_off[u]; e < ft->up_off[u + 1]; e++) {
			uint32_t v = ft->up[e].row;
			if (!ft->inset[v]) {
				ft->inset[v] = 1;
				h[v] = (uint16_t)(h[u] + 1);
				ft->queue[qt++] = v;
			}
		}
	}
	for (uint32_t i = 0; i < ft->n; i++) {
		uint32_t s = ft->by_rank[i];
		if (ft->inset[s])
			continue;
		uint16_t m = FT_INF;
		for (uint32_t e = ft->up_off[s]; e < ft->up_off[s + 1]; e++)
			if (h[ft->up[e].row] < m)
				m = h[ft->up[e].row];
		h[s] = m == FT_INF ? FT_INF : (uint16_t)(m + 1);
	}
	/* counting sort by hops; the order within one hop count is free */
	for (uint32_t r = 0; r < ft->n; r++)
		if (h[r] != FT_INF && h[r] > maxh)
			maxh = h[r];
	memset(ft->hcount, 0, ((size_t)maxh + 2) * sizeof(*ft->hcount));
	for (uint32_t r = 0; r < ft->n; r++)
		if (h[r] != FT_INF && r != a)
			ft->hcount[h[r] + 1]++;
	for (uint32_t k = 1; k <= maxh + 1; k++)
		ft->hcount[k] += ft->hcount[k - 1];
	ft->n_order = ft->hcount[maxh + 1];
	for (uint32_t i = 0; i < ft->n; i++) {
		uint32_t r = ft->sorted[i];
		if (h[r] != FT_INF && r != a)
			ft->order[ft->hcount[h[r]]++] = r;
	}
	uint32_t m = 0;
	for (uint32_t i = 0; i < ft->n_order; i++) {
		uint32_t s = ft->order[i];
		ft->cand_off[i] = m;
		if (ft->inset[s]) {
			for (uint32_t e = ft->dn_off[s]; e < ft->dn_off[s + 1]; e++)
				if (ft->inset[ft->dn[e].row])
					ft->cand[m++] = ft->dn[e];
		} else {
			for (uint32_t e = ft->up_off[s]; e < ft->up_off[s + 1]; e++)
				if (h[ft->up[e].row] + 1 == h[s])
					ft->cand[m++] = ft->up[e];
		}
	}
	ft->cand_off[ft->n_order] = m;
}

/* Leaves of a's component without a route to a, or FAB_NONE. */
static uint32_t unreached_leaf(const struct ft *ft, uint32_t a)
{
	uint32_t reached = n_ca(ft, a) ? 1 : 0;
	for (uint32_t i = 0; i < ft->n_order; i++)
		reached += n_ca(ft, ft->order[i]) != 0;
	if (reached == ft->comp_leaves[ft->comp[a]])
		return FAB_NONE;
	for (uint32_t i = 0; i < ft->n; i++) {
		uint32_t r = ft->sorted[i];
		if (ft->comp[r] == ft->comp[a] && n_ca(ft, r) && ft->h[r] == FT_INF)
			return r;
	}
	return FAB_NONE;
}

/*
 * The main path up from a: at each switch the up link with the lowest
 * downward counter (ties: the fixed order).  Marks it with a new stamp.
 */
static void ft_main_path(struct ft *ft, uint32_t a, int count)
{
	uint32_t u = a, s = ++ft->stamp;
	while (ft->up_off[u] != ft->up_off[u + 1]) {
		const struct ft_link *best = NULL;
		uint32_t bc = UINT32_MAX;
		for (uint32_t e = ft->up_off[u]; e < ft->up_off[u + 1]; e++) {
			const struct ft_link *l = &ft->up[e];
			uint32_t c = ft->cdown[(size_t)l->row * ft->stride + l->rport];
			if (c < bc) {
				bc = c;
				best = l;
			}
		}
		ft->cstamp[best->row] = s;
		ft->cnext[best->row] = u;
		ft->cport[best->row] = best->rport;
		if (count)
			ft->cdown[(size_t)best->row * ft->stride + best->rport]++;
		u = best->row;
	}
}

/* Routes one LID attached to row a at port aport; counts CA routes. */
static void ft_route_lid(struct ft *ft, uint32_t a, uint32_t lid,
			 uint8_t aport, int count)
{
	struct lft_tables *t = ft->t;
	uint32_t s;

	ft_main_path(ft, a, count);
	s = ft->stamp;
	lft_row(t, a)[lid] = aport;
	ft->dj[a] = 0;
	for (uint32_t i = 0; i < ft->n_order; i++) {
		uint32_t r = ft->order[i];
		uint32_t nr;
		uint8_t np;
		if (ft->cstamp[r] == s) {
			nr = ft->cnext[r];
			np = ft->cport[r];
			ft->dj[r] = 0;
		} else {
			const uint64_t *ld = ft->load + (size_t)r * ft->stride;
			uint16_t best = FT_INF;
			uint64_t bl = UINT64_MAX;
			nr = FAB_NONE;
			np = LFT_DROP;
			for (uint32_t c = ft->cand_off[i]; c < ft->cand_off[i + 1]; c++) {
				const struct ft_link *l = &ft->cand[c];
				uint16_t d = ft->dj[l->row];
				if (d < best || (d == best && ld[l->port] < bl)) {
					best = d;
					bl = ld[l->port];
					nr = l->row;
					np = l->port;
				}
			}
			ft->dj[r] = (uint16_t)(best + 1);
		}
		ft->nrow[r] = nr;
		ft->nport[r] = np;
		lft_row(t, r)[lid] = np;
	}
	if (!count)
		return;
	/* CA ports behind each switch, pushed towards a */
	for (uint32_t i = ft->n_order; i-- > 0;) {
		uint32_t r = ft->order[i];
		uint32_t w = ft->w[r] + n_ca(ft, r);
		ft->w[r] = 0;
		if (!w)
			continue;
		ft->load[(size_t)r * ft->stride + ft->nport[r]] += w;
		ft->w[ft->nrow[r]] += w;
	}
	ft->w[a] = 0;
}

/* A LID of an end port, when it is one of its range, else 0. */
static uint32_t port_lid(const struct fabric *f, uint32_t pi, uint32_t k)
{
	uint32_t base = f->ports[pi].lid;
	if (!base || k >= (1u << fabric_port_lmc(f, pi)) || base + k > f->max_lid ||
	    f->lid_port[base + k] != pi)
		return 0;
	return base + k;
}

static int ft_route_cas(struct ft *ft, char *err, size_t errlen)
{
	const struct fabric *f = ft->f;
	uint32_t max_ca = 0;
	for (uint32_t r = 0; r < ft->n; r++)
		if (n_ca(ft, r) > max_ca)
			max_ca = n_ca(ft, r);
	for (uint32_t k = 0; k < (1u << f->lmc); k++) {
		for (uint32_t i = 0; i < ft->n; i++) {
			uint32_t a = ft->sorted[i];
			if (!n_ca(ft, a))
				continue;
			ft_dest(ft, a);
			uint32_t miss = unreached_leaf(ft, a);
			if (miss != FAB_NONE) {
				snprintf(err, errlen, "not a fat tree: no up*/down* "
					 "route from switch %s (0x%016llx) to the "
					 "CAs on %s (0x%016llx)",
					 row_node(ft, miss)->desc,
					 (unsigned long long)row_node(ft, miss)->guid,
					 row_node(ft, a)->desc,
					 (unsigned long long)row_node(ft, a)->guid);
				return -1;
			}
			for (uint32_t c = ft->ca_off[a]; c < ft->ca_off[a + 1]; c++) {
				uint32_t lid = port_lid(f, ft->ca_pi[c], k);
				if (lid)
					ft_route_lid(ft, a, lid, ft->ca_lport[c], 1);
			}
			/* dummies keep every leaf's share of the upper links */
			for (uint32_t d = n_ca(ft, a); d < max_ca; d++)
				ft_main_path(ft, a, 1);
		}
	}
	return 0;
}

static void ft_route_switches(struct ft *ft)
{
	const struct fabric *f = ft->f;
	for (uint32_t i = 0; i < ft->n; i++) {
		uint32_t w = ft->sorted[i];
		uint32_t pi = fabric_port(f, ft->t->sw_node[w], 0);
		if (!port_lid(f, pi, 0))
			continue;
		ft_dest(ft, w);
		for (uint32_t k = 0; k < (1u << fabric_port_lmc(f, pi)); k++) {
			uint32_t lid = port_lid(f, pi, k);
			if (lid)
				ft_route_lid(ft, w, lid, 0, 0);
		}
	}
}

/*
 * Entries still empty where the switch reaches its component's last leaf
 * and that leaf reaches the LID: the route to the leaf, then the leaf's.
 */
static void ft_fill(struct ft *ft)
{
	const struct fabric *f = ft->f;
	struct lft_tables *t = ft->t;
	for (uint32_t r = 0; r < ft->n; r++) {
		uint32_t x = ft->fill_row[ft->comp[r]];
		if (x == FAB_NONE || x == r)
			continue;
		uint32_t xl = port_lid(f, fabric_port(f, t->sw_node[x], 0), 0);
		uint8_t *row = lft_row(t, r);
		const uint8_t *xrow = lft_row(t, x);
		if (!xl || row[xl] == LFT_DROP)
			continue;
		for (uint32_t lid = 1; lid <= t->max_lid; lid++)
			if (row[lid] == LFT_DROP && xrow[lid] != LFT_DROP)
				row[lid] = row[xl];
	}
}

static int ft_alloc(struct ft *ft)
{
	size_t n = (size_t)ft->n + 1;
	ft->up_off = malloc(n * sizeof(uint32_t));
	ft->dn_off = malloc(n * sizeof(uint32_t));
	ft->comp = malloc(n * sizeof(uint32_t));
	ft->is_root = malloc(n);
	ft->rank = malloc(n * sizeof(uint32_t));
	ft->tuple = malloc(n * FT_TUPLE_LEN);
	ft->key = malloc(n * sizeof(uint32_t));
	ft->sorted = malloc(n * sizeof(uint32_t));
	ft->by_rank = malloc(n * sizeof(uint32_t));
	ft->queue = malloc(n * sizeof(uint32_t));
	ft->h = malloc(n * sizeof(uint16_t));
	ft->inset = malloc(n);
	ft->order = malloc(n * sizeof(uint32_t));
	ft->cand_off = malloc(n * sizeof(uint32_t));
	ft->hcount = malloc((n + 2) * sizeof(uint32_t));
	ft->dj = malloc(n * sizeof(uint16_t));
	ft->cstamp = calloc(n, sizeof(uint32_t));
	ft->cnext = malloc(n * sizeof(uint32_t));
	ft->cport = malloc(n);
	ft->nrow = malloc(n * sizeof(uint32_t));
	ft->nport = malloc(n);
	ft->w = calloc(n, sizeof(uint32_t));
	ft->cdown = calloc(n * ft->stride, sizeof(uint32_t));
	ft->load = calloc(n * ft->stride, sizeof(uint64_t));
	return ft->up_off && ft->dn_off && ft->comp && ft->is_root && ft->rank &&
	       ft->tuple && ft->key && ft->sorted && ft->by_rank && ft->queue &&
	       ft->h && ft->inset && ft->order && ft->cand_off && ft->hcount &&
	       ft->dj && ft->cstamp && ft->cnext && ft->cport && ft->nrow &&
	       ft->nport && ft->w && ft->cdown && ft->load ? 0 : -1;
}

static void ft_free(struct ft *ft)
{
	void *p[] = {
		ft->adj_off, ft->up_off, ft->dn_off, ft->adj, ft->up, ft->dn,
		ft->ca_off, ft->ca_pi, ft->ca_lport, ft->comp, ft->comp_guid,
		ft->comp_leaves, ft->fill_row, ft->is_root, ft->rank, ft->tuple,
		ft->key, ft->sorted, ft->by_rank, ft->queue, ft->h, ft->inset,
		ft->order, ft->cand_off, ft->cand, ft->hcount, ft->dj, ft->cstamp,
		ft->cnext, ft->cport, ft->nrow, ft->nport, ft->w, ft->cdown,
		ft->load,
	};
	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		free(p[i]);
}

static int ftree_route(const struct fabric *f, const struct route_opts *o,
		       struct lft_tables *t, char *err, size_t errlen)
{
	struct ft ft = { .f = f, .t = t, .n = t->n_sw, .stride = 1 };
	int rc = -1;

	for (uint32_t r = 0; r < t->n_sw; r++)
		if (f->nodes[t->sw_node[r]].nports + 1u > ft.stride)
			ft.stride = f->nodes[t->sw_node[r]].nports + 1u;
	memset(t->port, LFT_DROP, (size_t)t->n_sw * (t->max_lid + 1));
	if (ft_alloc(&ft) < 0 || ft_links(&ft) < 0 || ft_components(&ft) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	uint32_t leaves = 0;
	for (uint32_t c = 0; c < ft.n_comp; c++)
		leaves += ft.comp_leaves[c];
	if (!leaves) {
		snprintf(err, errlen, "not a fat tree: no switch has a CA");
		goto out;
	}
	if (ft_rank(&ft, o, err, errlen) < 0)
		goto out;
	ft_split(&ft);
	if (ft_order(&ft) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (uint32_t r = 0; r < ft.n; r++) {
		sort_links(&ft, ft.up + ft.up_off[r], ft.up_off[r + 1] - ft.up_off[r]);
		sort_links(&ft, ft.dn + ft.dn_off[r], ft.dn_off[r + 1] - ft.dn_off[r]);
	}
	if (ft_route_cas(&ft, err, errlen) < 0)
		goto out;
	ft_route_switches(&ft);
	ft_fill(&ft);
	rc = 0;
out:
	ft_free(&ft);
	return rc;
}

const struct routing_engine ftree_engine = {
	.name = "ftree",
	.route = ftree_route,
};
