/*
 * nue: routes computed on the channel-dependency graph, deadlock-free on
 * one VL for any topology (after Domke, Hoefler, Matsuoka, "Routing on the
 * Dependency Graph: A New Approach to Deadlock-Free High-Performance
 * Routing", HPDC 2016; one layer, as OpenSM's nue runs by default,
 * nue_max_num_vls 1).
 *
 * The graph of dependencies between directed switch-to-switch links is
 * kept acyclic the whole time, with a topological order of the links
 * maintained as dependencies are added (Pearce and Kelly, "A Dynamic
 * Topological Sort Algorithm for Directed Acyclic Graphs", JEA 2007):
 * a dependency that agrees with the order costs nothing, one that does not
 * searches only the links between its two ends in the order.
 *
 * The graph only grows from one destination to the next (resolve_impasse()
 * takes out only what its own destination added), so a dependency found
 * to close a cycle stays refused: the verdict is kept and never searched
 * again, and a link whose dependency is known refused is not offered.
 * On the 1,024-switch Dragonfly this took the routing from 119 s to under
 * 5 s (tests/RESULTS.md, "nue at scale"): the same failing searches had
 * been repeated for every destination.
 *
 * Escape paths: a spanning tree from the most central switch (the least
 * eccentricity, then the lowest GUID); every turn a route inside the tree
 * can take (up then up, up then down, down then down) is in the graph
 * from the start.  Those turns close no cycle (no route goes down then up),
 * so a destination can always be routed on the tree.
 *
 * Routes: per destination LID, the CA ports' first, a Dijkstra from its
 * switch over the links weighted as dfsssp's (P^2 plus the CA ports
 * routed across), where a switch takes a link only if the dependency
 * between that link and its neighbour's next link is in the graph or can
 * be added without a cycle (a switch's best offer waits in the heap;
 * when its dependency is refused, its next best among its settled
 * neighbours takes its place).  The switches no allowed path reaches (an
 * impasse) take the escape tree, with what that forces on the others
 * (resolve_impasse()).  As dfsssp, every CA port's LID is routed a second
 * time, against the loads of the first round and in a graph that holds
 * the first round's dependencies (measured against one round in
 * tests/RESULTS.md, "nue beside OpenSM's").  Every
 * route's consecutive links are dependencies of the graph, which has no
 * cycle: the routes are free of deadlock on VL 0 alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/graph.h"
#include "routing/heap.h"

#define NUE_NONE GRAPH_NONE
#define NUE_INF UINT64_MAX
#define NUE_SCAN_PER_LINK 16	/* dep_add: read the order, rather than sort, up to this span per link moved */
#define NUE_ROUNDS 2	/* the second against the first's loads and dependencies */
/* a dependency's byte in dep */
#define DEP_IN 1		/* in the graph */
#define DEP_USED 2	/* still used by the destination's routes (resolve_impasse) */
#define DEP_BLOCKED 4	/* would close a cycle with the graph as it is */

struct u32_list {
	uint32_t *v, n, cap;
};

struct nue {
	const struct fabric *f;
	struct lft_tables *t;
	struct sw_graph g;
	struct sw_links k;	/* owns tail, rev, link_at, n_src below */
	uint32_t n, n_links, stride;
	uint32_t *tail, *rev, *link_at;
	uint32_t *n_src;
	uint64_t *w;
	uint32_t *cand;		/* per row: its best offer's link (dist) */
	uint64_t *through;	/* per row: the sources routed through it (route_lid) */
	/* the dependency graph: dep[link * stride + port of the next link] */
	uint8_t *dep;
	uint32_t *ord, *at;	/* topological position of each link, and back */
	uint32_t *stamp_of, stamp;
	uint32_t *fw, *bw, n_fw, n_bw;	/* the reorder's two sets */
	uint32_t *pool;
	uint64_t *keys;		/* sort scratch */
	/* the escape tree */
	uint32_t *parent;	/* per row: the link up to its parent, NUE_NONE at the root */
	uint32_t *down;		/* per row: the link down towards the destination's branch */
	uint8_t *anc;
	uint32_t *tnh;		/* per row: its next hop on the tree to the destination */
	uint8_t *forced;	/* per row: it takes the tree (an impasse) */
	/* a destination's Dijkstra */
	uint64_t *dist;
	uint32_t *nh;
	uint8_t *done;
	uint32_t *settled;
	struct heap heap;
	struct u32_list added;	/* dependencies this destination added: link * stride + port */
	struct u32_list blocked;	/* dependencies this destination found blocked */
	uint64_t impasses;
};

static int u32_push(struct u32_list *l, uint32_t v)
{
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? 2 * l->cap : 1024;
		void *p = realloc(l->v, (size_t)cap * sizeof(*l->v));
		if (!p)
			return -1;
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n++] = v;
	return 0;
}

static uint32_t head_of(const struct nue *x, uint32_t l)
{
	return x->g.nbr[l];
}

/* ---- the dependency graph, acyclic, in topological order ---- */

static uint8_t *dep_at(const struct nue *x, uint32_t a, uint32_t b)
{
	return &x->dep[(size_t)a * x->stride + x->g.port[b]];
}

/* Forward from y through links placed before hi; 1 if it meets target. */
static int search_fw(struct nue *x, uint32_t y, uint32_t target, uint32_t hi)
{
	uint32_t top = 0;
	x->pool[top++] = y;
	x->stamp_of[y] = x->stamp;
	x->n_fw = 0;
	while (top) {
		uint32_t a = x->pool[--top], v = head_of(x, a);
		x->fw[x->n_fw++] = a;
		for (uint32_t e = x->g.off[v]; e < x->g.off[v + 1]; e++) {
			if (!(*dep_at(x, a, e) & DEP_IN))
				continue;
			if (e == target)
				return 1;
			if (x->stamp_of[e] != x->stamp && x->ord[e] < hi) {
				x->stamp_of[e] = x->stamp;
				x->pool[top++] = e;
			}
		}
	}
	return 0;
}

/* Backward from a through links placed after lo (marked stamp + 1). */
static void search_bw(struct nue *x, uint32_t a, uint32_t lo)
{
	uint32_t top = 0, mark = x->stamp + 1;
	x->pool[top++] = a;
	x->stamp_of[a] = mark;
	x->n_bw = 0;
	while (top) {
		uint32_t b = x->pool[--top], u = x->tail[b];
		x->bw[x->n_bw++] = b;
		/* the links into u, each the reverse of one of u's */
		for (uint32_t e = x->g.off[u]; e < x->g.off[u + 1]; e++) {
			uint32_t p = x->rev[e];
			if (p == NUE_NONE || !(*dep_at(x, p, b) & DEP_IN))
				continue;
			if (x->stamp_of[p] != mark && x->ord[p] > lo) {
				x->stamp_of[p] = mark;
				x->pool[top++] = p;
			}
		}
	}
}

static int by_key(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Sorts links[0..n) by their topological position (keys: scratch of n). */
static void sort_by_ord(const struct nue *x, uint32_t *links, uint32_t n, uint64_t *keys)
{
	for (uint32_t i = 0; i < n; i++)
		keys[i] = (uint64_t)x->ord[links[i]] << 32 | links[i];
	qsort(keys, n, sizeof(*keys), by_key);
	for (uint32_t i = 0; i < n; i++)
		links[i] = (uint32_t)keys[i];
}

/*
 * Adds dependency a -> b (b leaves a's head): 0, or -1 when it would
 * close a cycle (nothing changed).  Recorded in x->added when new.
 *
 * The graph only grows from one destination to the next, so a dependency
 * that would close a cycle stays blocked: the verdict is kept (DEP_BLOCKED)
 * and the search not repeated.  Only resolve_impasse() takes dependencies
 * out again, those its own destination added; the verdicts found since
 * that destination began are dropped with them.
 */
static int dep_add(struct nue *x, uint32_t a, uint32_t b)
{
	uint8_t *d = dep_at(x, a, b);
	if (*d & DEP_IN)
		return 0;
	if (*d & DEP_BLOCKED)
		return -1;
	if (x->ord[a] > x->ord[b]) {
		if (x->stamp >= UINT32_MAX - 2) {
			memset(x->stamp_of, 0, ((size_t)x->n_links + 1) * sizeof(*x->stamp_of));
			x->stamp = 0;
		}
		x->stamp += 2;	/* the forward set's mark, and the backward's */
		if (search_fw(x, b, a, x->ord[a])) {
			if (u32_push(&x->blocked, (uint32_t)(d - x->dep)) == 0)
				*d |= DEP_BLOCKED;
			return -1;
		}
		search_bw(x, a, x->ord[b]);
		/*
		 * The backward set goes first, then the forward set, each in
		 * its own order, into the positions both held (ascending).  A
		 * short stretch of the order is read off directly; a long one
		 * sorts the two sets and merges their positions.
		 */
		uint32_t *pos = x->pool, i = 0, j = 0, n = 0;
		uint32_t lo = x->ord[b], hi = x->ord[a];
		if (hi - lo < NUE_SCAN_PER_LINK * (x->n_fw + x->n_bw)) {
			x->n_fw = x->n_bw = 0;
			for (uint32_t p = lo; p <= hi; p++) {
				uint32_t l = x->at[p];
				if (x->stamp_of[l] == x->stamp)
					x->fw[x->n_fw++] = l;
				else if (x->stamp_of[l] == x->stamp + 1)
					x->bw[x->n_bw++] = l;
				else
					continue;
				pos[n++] = p;
			}
		} else {
			sort_by_ord(x, x->fw, x->n_fw, x->keys);
			sort_by_ord(x, x->bw, x->n_bw, x->keys);
			while (i < x->n_bw || j < x->n_fw) {
				uint32_t pb = i < x->n_bw ? x->ord[x->bw[i]] : UINT32_MAX;
				uint32_t pf = j < x->n_fw ? x->ord[x->fw[j]] : UINT32_MAX;
				pos[n++] = pb < pf ? (i++, pb) : (j++, pf);
			}
		}
		n = 0;
		for (i = 0; i < x->n_bw; i++, n++) {
			x->ord[x->bw[i]] = pos[n];
			x->at[pos[n]] = x->bw[i];
		}
		for (j = 0; j < x->n_fw; j++, n++) {
			x->ord[x->fw[j]] = pos[n];
			x->at[pos[n]] = x->fw[j];
		}
	}
	if (u32_push(&x->added, (uint32_t)(d - x->dep)) < 0)
		return -1;
	*d = DEP_IN;
	return 0;
}

/* ---- the escape tree ---- */

/* Breadth-first distances from row r; the largest (the eccentricity). */
static uint32_t eccentricity(struct nue *x, uint32_t r, uint32_t *q, uint32_t *dist)
{
	for (uint32_t i = 0; i < x->n; i++)
		dist[i] = UINT32_MAX;
	uint32_t qh = 0, qt = 0, far = 0;
	dist[r] = 0;
	q[qt++] = r;
	while (qh < qt) {
		uint32_t v = q[qh++];
		if (dist[v] > far)
			far = dist[v];
		for (uint32_t e = x->g.off[v]; e < x->g.off[v + 1]; e++)
			if (dist[head_of(x, e)] == UINT32_MAX) {
				dist[head_of(x, e)] = dist[v] + 1;
				q[qt++] = head_of(x, e);
			}
	}
	return far;
}

/* The tree from the most central switch; its turns into the graph. */
static int escape_tree(struct nue *x)
{
	uint32_t *q = malloc(((size_t)x->n + 1) * sizeof(*q));
	uint32_t *dist = malloc(((size_t)x->n + 1) * sizeof(*dist));
	if (!q || !dist) {
		free(q);
		free(dist);
		return -1;
	}
	uint32_t root = 0, best = UINT32_MAX;
	for (uint32_t r = 0; r < x->n; r++) {
		uint32_t e = eccentricity(x, r, q, dist);
		uint64_t g = x->f->nodes[x->t->sw_node[r]].guid;
		if (e < best || (e == best && g < x->f->nodes[x->t->sw_node[root]].guid)) {
			best = e;
			root = r;
		}
	}
	eccentricity(x, root, q, dist);
	for (uint32_t r = 0; r < x->n; r++) {
		x->parent[r] = NUE_NONE;
		if (r == root || dist[r] == UINT32_MAX)
			continue;
		/* up to a neighbour one hop nearer the root, the lowest port */
		for (uint32_t e = x->g.off[r]; e < x->g.off[r + 1]; e++)
			if (dist[head_of(x, e)] + 1 == dist[r]) {
				x->parent[r] = e;
				break;
			}
	}
	free(q);
	free(dist);
	/* the turns at each switch v: up (in from a child, out to the parent),
	 * up then down, down then down; never down then up */
	for (uint32_t v = 0; v < x->n; v++)
		for (uint32_t e = x->g.off[v]; e < x->g.off[v + 1]; e++) {
			uint32_t in = x->rev[e];	/* into v from head(e) */
			if (in == NUE_NONE)
				continue;
			int in_up = x->parent[head_of(x, e)] == in;	/* from a child */
			int in_down = x->parent[v] == e;		/* from the parent */
			if (!in_up && !in_down)
				continue;
			for (uint32_t o = x->g.off[v]; o < x->g.off[v + 1]; o++) {
				if (o == e)
					continue;	/* no turn back */
				int out_up = x->parent[v] == o;
				int out_down = x->parent[head_of(x, o)] == x->rev[o];
				if ((out_up && in_up) || (out_down && (in_up || in_down)))
					if (dep_add(x, in, o) < 0)
						return -1;
			}
		}
	x->added.n = 0;	/* the tree's turns stay */
	return 0;
}

/* Switch d's next hops on the tree (tnh): up to the branch holding d, then down. */
static void tree_hops(struct nue *x, uint32_t d)
{
	memset(x->anc, 0, x->n);
	for (uint32_t v = d, hops = 0; hops <= x->n; hops++) {
		x->anc[v] = 1;
		uint32_t up = x->parent[v];
		if (up == NUE_NONE)
			break;
		x->down[head_of(x, up)] = x->rev[up];
		v = head_of(x, up);
	}
	for (uint32_t r = 0; r < x->n; r++)
		x->tnh[r] = r == d ? NUE_NONE : x->anc[r] ? x->down[r] : x->parent[r];
}

/* Row v and the rows on its tree path to d take their tree next hops. */
static void force_tree(struct nue *x, uint32_t v, uint32_t d)
{
	for (uint32_t hops = 0; v != d && v != NUE_NONE && hops <= x->n; hops++) {
		if (x->forced[v])
			return;	/* the rest of the path is forced already */
		x->forced[v] = 1;
		x->nh[v] = x->tnh[v];
		v = x->tnh[v] == NUE_NONE ? NUE_NONE : head_of(x, x->tnh[v]);
	}
}

/*
 * An impasse: the switches the Dijkstra did not reach take the tree, and
 * so does every switch on their tree paths (a switch forwards a LID one
 * way: a tree path is whole or not at all; its turns are in the graph).
 * A reached switch whose next switch now goes by the tree keeps its link
 * if the dependency between the two can be added, else it takes the tree
 * too; until nothing changes (at worst every switch on the tree).  The
 * dependencies the Dijkstra added that no route uses any more go.
 */
static void resolve_impasse(struct nue *x, uint32_t d)
{
	tree_hops(x, d);
	memset(x->forced, 0, x->n);
	for (uint32_t r = 0; r < x->n; r++)
		if (r != d && !x->done[r] && x->tnh[r] != NUE_NONE)
			force_tree(x, r, d);
	for (int changed = 1; changed;) {
		changed = 0;
		for (uint32_t r = 0; r < x->n; r++) {
			if (r == d || x->forced[r] || x->nh[r] == NUE_NONE)
				continue;
			uint32_t w = head_of(x, x->nh[r]);
			if (w == d || !x->forced[w] || dep_add(x, x->nh[r], x->nh[w]) == 0)
				continue;
			force_tree(x, r, d);
			changed = 1;
		}
	}
	/* the dependencies still used */
	for (uint32_t r = 0; r < x->n; r++) {
		if (r == d || x->nh[r] == NUE_NONE || head_of(x, x->nh[r]) == d)
			continue;
		*dep_at(x, x->nh[r], x->nh[head_of(x, x->nh[r])]) |= DEP_USED;
	}
	uint32_t removed = 0;
	for (uint32_t i = 0; i < x->added.n; i++)
		if (!(x->dep[x->added.v[i]] & DEP_USED)) {
			x->dep[x->added.v[i]] = 0;
			removed++;
		}
	for (uint32_t r = 0; r < x->n; r++) {
		if (r == d || x->nh[r] == NUE_NONE || head_of(x, x->nh[r]) == d)
			continue;
		*dep_at(x, x->nh[r], x->nh[head_of(x, x->nh[r])]) &= ~DEP_USED;
	}
	/* a verdict may rest on a dependency just taken out */
	if (removed)
		for (uint32_t i = 0; i < x->blocked.n; i++)
			x->dep[x->blocked.v[i]] &= ~DEP_BLOCKED;
}

/* ---- routes ---- */

/* Whether u may take link l into settled v: the dependency not known blocked. */
static int may_take(const struct nue *x, uint32_t l, uint32_t d)
{
	uint32_t v = head_of(x, l);
	return x->done[v] && (v == d || !(*dep_at(x, l, x->nh[v]) & DEP_BLOCKED));
}

/* Whether taking link l (into settled v) adds no dependency to the graph. */
static int dep_known(const struct nue *x, uint32_t l, uint32_t d)
{
	uint32_t v = head_of(x, l);
	return v == d || (*dep_at(x, l, x->nh[v]) & DEP_IN);
}

/*
 * Offers switch u the link l into a settled switch at distance key: kept
 * (in the heap) when it is u's best so far, or as good and its dependency
 * already in the graph where the best's is not (the graph stays small, so
 * later destinations find fewer dependencies refused; measured in
 * tests/RESULTS.md, "nue at scale").  An offer refused for its dependency
 * is replaced by u's next best (reoffer()).
 */
static int offer(struct nue *x, uint32_t l, uint64_t key, uint32_t d)
{
	uint32_t u = x->tail[l];
	if (x->done[u] || key > x->dist[u] || !may_take(x, l, d))
		return 0;
	if (key == x->dist[u] && (!dep_known(x, l, d) || dep_known(x, x->cand[u], d)))
		return 0;
	x->dist[u] = key;
	x->cand[u] = l;
	return heap_push(&x->heap, key, l);
}

/* u's best link into a settled switch that is not known blocked, offered. */
static int reoffer(struct nue *x, uint32_t u, uint32_t d)
{
	uint64_t best = NUE_INF;
	uint32_t l = NUE_NONE;
	for (uint32_t e = x->g.off[u]; e < x->g.off[u + 1]; e++)
		if (may_take(x, e, d) && x->dist[head_of(x, e)] + x->w[e] < best) {
			best = x->dist[head_of(x, e)] + x->w[e];
			l = e;
		}
	x->dist[u] = NUE_INF;
	return l == NUE_NONE ? 0 : offer(x, l, best, d);
}

/*
 * The Dijkstra of switch d's LID over the allowed dependencies: nh per
 * row; the rows settled.  1 if every switch reachable from d was settled.
 */
static int dijkstra(struct nue *x, uint32_t d, uint32_t *n_settled, int *ok)
{
	for (uint32_t s = 0; s < x->n; s++) {
		x->dist[s] = NUE_INF;
		x->nh[s] = NUE_NONE;
		x->done[s] = 0;
	}
	x->heap.n = 0;
	x->done[d] = 1;
	x->dist[d] = 0;
	uint32_t k = 0;
	x->settled[k++] = d;
	for (uint32_t e = x->g.off[d]; e < x->g.off[d + 1]; e++)
		if (x->rev[e] != NUE_NONE && offer(x, x->rev[e], x->w[x->rev[e]], d) < 0)
			return -1;
	while (x->heap.n) {
		struct heap_item it = heap_pop(&x->heap);
		uint32_t u = x->tail[it.val], v = head_of(x, it.val);
		if (x->done[u] || it.key != x->dist[u])
			continue;	/* settled, or a better offer came since */
		if (v != d && dep_add(x, it.val, x->nh[v]) < 0) {
			if (reoffer(x, u, d) < 0)	/* not this way: its next best */
				return -1;
			continue;
		}
		x->done[u] = 1;
		x->nh[u] = it.val;
		x->settled[k++] = u;
		for (uint32_t e = x->g.off[u]; e < x->g.off[u + 1]; e++) {
			uint32_t in = x->rev[e];	/* head(e) -> u */
			if (in != NUE_NONE && offer(x, in, it.key + x->w[in], d) < 0)
				return -1;
		}
	}
	*n_settled = k;
	*ok = 1;
	/* the switches the graph reaches from d must all be settled */
	for (uint32_t i = 0; i < k; i++)
		for (uint32_t e = x->g.off[x->settled[i]]; e < x->g.off[x->settled[i] + 1]; e++)
			if (!x->done[head_of(x, e)])
				*ok = 0;
	return 0;
}

/* Routes LID lid (at row d, port dport) and adds its routes to the weights. */
static int route_lid(struct nue *x, uint32_t lid, uint32_t d, uint8_t dport)
{
	uint32_t k;
	int ok;
	x->added.n = 0;
	x->blocked.n = 0;
	if (dijkstra(x, d, &k, &ok) < 0)
		return -1;
	if (!ok) {
		x->impasses++;
		resolve_impasse(x, d);
	}
	for (uint32_t s = 0; s < x->n; s++)
		lft_row(x->t, s)[lid] = s == d ? dport :
					x->nh[s] == NUE_NONE ? LFT_DROP : x->g.port[x->nh[s]];
	/*
	 * The weights: each switch's CA ports along its whole route.  Without
	 * an impasse a switch was settled after its next hop: the settled
	 * order backwards adds each switch's sources, and those routed
	 * through it, to its link once.
	 */
	if (ok) {
		uint64_t *through = x->through;
		for (uint32_t i = k; i-- > 1;) {
			uint32_t u = x->settled[i], l = x->nh[u];
			through[u] += x->n_src[u];
			x->w[l] += through[u];
			through[head_of(x, l)] += through[u];
			through[u] = 0;
		}
		through[d] = 0;
		return 0;
	}
	for (uint32_t s = 0; s < x->n; s++) {
		if (!x->n_src[s])
			continue;
		for (uint32_t v = s, hops = 0; v != d && hops <= x->n; hops++) {
			uint32_t l = x->nh[v];
			if (l == NUE_NONE)
				break;
			x->w[l] += x->n_src[s];
			v = head_of(x, l);
		}
	}
	return 0;
}

static int nue_alloc(struct nue *x)
{
	const struct fabric *f = x->f;
	struct lft_tables *t = x->t;
	if (sw_graph_build(&x->g, f, t) < 0 || sw_links_build(&x->k, &x->g, f, t) < 0)
		return -1;
	x->n = x->g.n;
	x->n_links = x->k.n_links;
	x->stride = x->k.stride;
	x->tail = x->k.tail;
	x->rev = x->k.rev;
	x->link_at = x->k.link_at;
	x->n_src = x->k.n_src;
	size_t nl = (size_t)x->n_links + 1, nr = (size_t)x->n + 1;
	x->w = malloc(nl * sizeof(*x->w));
	x->through = calloc(nr, sizeof(*x->through));
	x->cand = calloc(nr, sizeof(*x->cand));
	x->dep = calloc(nl * x->stride, 1);
	x->ord = malloc(nl * sizeof(*x->ord));
	x->at = malloc(nl * sizeof(*x->at));
	x->stamp_of = calloc(nl, sizeof(*x->stamp_of));
	x->fw = malloc(nl * sizeof(*x->fw));
	x->bw = malloc(nl * sizeof(*x->bw));
	x->pool = malloc(2 * nl * sizeof(*x->pool));
	x->keys = malloc(nl * sizeof(*x->keys));
	x->parent = malloc(nr * sizeof(*x->parent));
	x->down = malloc(nr * sizeof(*x->down));
	x->anc = malloc(nr);
	x->tnh = malloc(nr * sizeof(*x->tnh));
	x->forced = malloc(nr);
	x->dist = malloc(nr * sizeof(*x->dist));
	x->nh = malloc(nr * sizeof(*x->nh));
	x->done = malloc(nr);
	x->settled = malloc(nr * sizeof(*x->settled));
	if (!x->w || !x->through || !x->cand || !x->dep || !x->ord ||
	    !x->at || !x->stamp_of || !x->fw || !x->bw || !x->pool || !x->keys || !x->parent || !x->down ||
	    !x->anc || !x->tnh || !x->forced || !x->dist || !x->nh || !x->done || !x->settled)
		return -1;
	uint64_t p = x->k.p;
	for (uint32_t l = 0; l < x->n_links; l++) {
		x->w[l] = p ? p * p : 1;
		x->ord[l] = x->at[l] = l;
	}
	return 0;
}

static void nue_free(struct nue *x)
{
	sw_graph_free(&x->g);
	sw_links_free(&x->k);
	free(x->w);
	free(x->through);
	free(x->cand);
	free(x->dep);
	free(x->ord);
	free(x->at);
	free(x->stamp_of);
	free(x->fw);
	free(x->bw);
	free(x->pool);
	free(x->keys);
	free(x->parent);
	free(x->down);
	free(x->anc);
	free(x->tnh);
	free(x->forced);
	free(x->dist);
	free(x->nh);
	free(x->done);
	free(x->settled);
	heap_free(&x->heap);
	free(x->added.v);
	free(x->blocked.v);
}

int nue_route(const struct fabric *f, const struct route_opts *o,
	      struct lft_tables *t, char *err, size_t errlen)
{
	struct nue x = { .f = f, .t = t };
	int rc = -1;
	(void)o;
	if (nue_alloc(&x) < 0 || escape_tree(&x) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	/*
	 * The CA ports' LIDs first, then the switches'; the CA ports' twice
	 * (above).  A switch's LID carries management traffic only: routing
	 * it again would balance nothing.
	 */
	for (int round = 0; round < NUE_ROUNDS; round++)
		for (int sw = 0; sw < (round == 0 ? 2 : 1); sw++)
			for (uint32_t lid = 1; lid <= t->max_lid; lid++) {
				uint32_t row;
				uint8_t port;
				if (graph_lid_attach(f, t, lid, &row, &port) < 0 ||
				    (port == 0) != sw)
					continue;
				if (route_lid(&x, lid, row, port) < 0) {
					snprintf(err, errlen, "out of memory");
					goto out;
				}
			}
	if (x.impasses && o && o->warn)
		snprintf(o->warn, o->warn_len, "nue: %llu LIDs routed on the escape tree (impasses)",
			 (unsigned long long)x.impasses);
	rc = 0;
out:
	nue_free(&x);
	return rc;
}
