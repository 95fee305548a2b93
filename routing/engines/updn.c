/*
 * updn: up*-down* routing for any topology.
 *
 * Switches are ranked by BFS distance from root switches (routing.roots,
 * or chosen here: in a tree the switches farthest from the CAs, otherwise
 * the most central switch).  A link goes "up" towards the lower rank, and
 * between equal ranks towards the lower GUID: a total order of the
 * switches, so the up links form an acyclic graph.  A route is any number
 * of up hops followed by any number of down hops; as no route ever turns
 * from down to up, the channel dependencies follow the order and cannot
 * form a cycle: deadlock-free on one VL.
 *
 * Every pair of switches has a legal path only when the order has a single
 * minimum (each switch's up hops lead to it).  Several roots that are not
 * joined by up links would each be a minimum (two spines of a fat tree
 * cannot reach each other without turning up again), so in that case the
 * switches on shortest paths from the lowest-GUID root to the other roots
 * ("connectors") are ordered before all others, by their distance from that
 * root.  Routes between CAs of a fat tree keep their shortest paths.
 *
 * Routes take, per destination switch, the shortest path that is legal and
 * consistent with destination-based tables: a switch entered by a down hop
 * must itself go down.  Among equal candidates, the port with the fewest
 * LIDs routed through it so far (ties: lowest port), as in minhop; with
 * LMC > 0 the fewest of the LID's offset, each end port's offsets on
 * different ways first (routing/engines/offsets.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "routing/engines.h"
#include "routing/graph.h"

#define INF UINT32_MAX

/* The same graph by position in the order: up neighbours first. */
struct ograph {
	uint32_t n;
	uint32_t *row;		/* position -> row */
	uint32_t *off;		/* n + 1 */
	uint32_t *mid;		/* first down neighbour of each position */
	uint32_t *nbr;		/* neighbour position */
	uint8_t *port;
};

struct sortkey {
	uint32_t k[3];
	uint64_t guid;
	uint32_t row;
};

static int cmp_key(const void *a, const void *b)
{
	const struct sortkey *x = a, *y = b;
	for (int i = 0; i < 3; i++)
		if (x->k[i] != y->k[i])
			return x->k[i] < y->k[i] ? -1 : 1;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

static uint64_t row_guid(const struct fabric *f, const struct lft_tables *t,
			 uint32_t r)
{
	return f->nodes[t->sw_node[r]].guid;
}

/* The rows of the switch a root entry names; -1 if none. */
static int resolve_root(const struct fabric *f, const struct lft_tables *t,
			const char *name, uint8_t *is_root, char *err,
			size_t errlen)
{
	int found = 0;
	if (!strncasecmp(name, "0x", 2) && name[2]) {
		char *end;
		unsigned long long g = strtoull(name + 2, &end, 16);
		if (!*end && strlen(name + 2) <= 16) {
			for (uint32_t r = 0; r < t->n_sw; r++) {
				uint32_t node = t->sw_node[r];
				if (f->nodes[node].guid == g ||
				    fabric_portp(f, node, 0)->guid == g) {
					is_root[r] = 1;
					found = 1;
				}
			}
			if (!found && fabric_find_node(f, g) != FAB_NONE) {
				snprintf(err, errlen, "routing root %s is not a switch",
					 name);
				return -1;
			}
		}
	}
	for (uint32_t r = 0; r < t->n_sw && !found; r++) {
		if (!strcmp(f->nodes[t->sw_node[r]].desc, name)) {
			/* every switch of that description */
			for (uint32_t q = r; q < t->n_sw; q++)
				if (!strcmp(f->nodes[t->sw_node[q]].desc, name))
					is_root[q] = 1;
			found = 1;
		}
	}
	if (!found) {
		snprintf(err, errlen, "unknown routing root '%s' (no switch "
			 "with that description or GUID)", name);
		return -1;
	}
	return 0;
}

/*
 * Automatic roots of one component (members in GUID order).  When ranks
 * from the CA-facing switches make every link join adjacent ranks and
 * every switch below the top rank has a neighbour above it, the fabric is
 * a tree and the top rank is the root set; otherwise the switch of least
 * eccentricity (lowest GUID on ties).
 */
static void auto_roots(const struct sw_graph *g, const uint32_t *mem,
		       uint32_t nmem, uint8_t *is_root, uint32_t *dist,
		       uint32_t *queue, uint32_t *leaves)
{
	uint32_t nl = 0;
	for (uint32_t i = 0; i < nmem; i++)
		if (g->has_ca[mem[i]])
			leaves[nl++] = mem[i];
	if (nl > 0) {
		sw_graph_bfs(g, leaves, nl, dist, queue);
		uint32_t maxr = 0;
		for (uint32_t i = 0; i < nmem; i++)
			if (dist[mem[i]] > maxr)
				maxr = dist[mem[i]];
		int tree = 1;
		for (uint32_t i = 0; i < nmem && tree; i++) {
			uint32_t u = mem[i];
			int above = dist[u] == maxr;
			for (uint32_t e = g->off[u]; e < g->off[u + 1]; e++) {
				if (dist[g->nbr[e]] == dist[u])
					tree = 0;
				if (dist[g->nbr[e]] == dist[u] + 1)
					above = 1;
			}
			if (!above)
				tree = 0;
		}
		if (tree) {
			for (uint32_t i = 0; i < nmem; i++)
				if (dist[mem[i]] == maxr)
					is_root[mem[i]] = 1;
			return;
		}
	}
	uint32_t best = INF, root = mem[0];
	for (uint32_t i = 0; i < nmem; i++) {
		/* BFS from mem[i], abandoned once it cannot beat best */
		uint32_t qh = 0, qt = 0, ecc = 0, u = mem[i];
		for (uint32_t j = 0; j < nmem; j++)
			dist[mem[j]] = INF;
		dist[u] = 0;
		queue[qt++] = u;
		while (qh < qt && ecc < best) {
			u = queue[qh++];
			for (uint32_t e = g->off[u]; e < g->off[u + 1]; e++) {
				uint32_t v = g->nbr[e];
				if (dist[v] == INF) {
					dist[v] = dist[u] + 1;
					ecc = dist[v];
					queue[qt++] = v;
				}
			}
		}
		if (ecc < best) {
			best = ecc;
			root = mem[i];
		}
	}
	is_root[root] = 1;
}

/*
 * The order of the switches: pos[row].  Roots come from o (unknown name:
 * -1), else per connected component from auto_roots.
 */
static int updn_order(const struct fabric *f, const struct lft_tables *t,
		      const struct sw_graph *g, const struct route_opts *o,
		      uint32_t *pos, char *err, size_t errlen)
{
	uint32_t n = g->n;
	struct sortkey *key = malloc(((size_t)n + 1) * sizeof(*key));
	uint32_t *comp = malloc(((size_t)n + 1) * sizeof(*comp));
	uint32_t *mem = malloc(((size_t)n + 1) * sizeof(*mem));
	uint32_t *cstart = malloc(((size_t)n + 2) * sizeof(*cstart));
	uint32_t *rank = malloc(((size_t)n + 1) * sizeof(*rank));
	uint32_t *dist = malloc(((size_t)n + 1) * sizeof(*dist));
	uint32_t *queue = malloc(((size_t)n + 1) * sizeof(*queue));
	uint32_t *tmp = malloc(((size_t)n + 1) * sizeof(*tmp));
	uint8_t *is_root = calloc((size_t)n + 1, 1);
	uint8_t *cls_a = calloc((size_t)n + 1, 1);
	uint8_t *walked = calloc((size_t)n + 1, 1);
	int rc = -1;
	if (!key || !comp || !mem || !cstart || !rank || !dist || !queue ||
	    !tmp || !is_root || !cls_a || !walked) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	/* rows in GUID order */
	for (uint32_t r = 0; r < n; r++)
		key[r] = (struct sortkey){ { 0, 0, 0 }, row_guid(f, t, r), r };
	qsort(key, n, sizeof(*key), cmp_key);
	/* components, each member list in GUID order */
	uint32_t ncomp = 0;
	for (uint32_t r = 0; r < n; r++)
		comp[r] = INF;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = key[i].row;
		if (comp[s] != INF)
			continue;
		uint32_t qh = 0, qt = 0;
		comp[s] = ncomp;
		queue[qt++] = s;
		while (qh < qt) {
			uint32_t u = queue[qh++];
			for (uint32_t e = g->off[u]; e < g->off[u + 1]; e++)
				if (comp[g->nbr[e]] == INF) {
					comp[g->nbr[e]] = ncomp;
					queue[qt++] = g->nbr[e];
				}
		}
		ncomp++;
	}
	memset(cstart, 0, ((size_t)ncomp + 1) * sizeof(*cstart));
	for (uint32_t r = 0; r < n; r++)
		cstart[comp[r] + 1]++;
	for (uint32_t c = 0; c < ncomp; c++)
		cstart[c + 1] += cstart[c];
	for (uint32_t c = 0; c <= ncomp; c++)
		tmp[c] = cstart[c];
	for (uint32_t i = 0; i < n; i++)
		mem[tmp[comp[key[i].row]]++] = key[i].row;
	/* roots */
	for (int i = 0; o && i < o->n_roots; i++)
		if (resolve_root(f, t, o->roots[i], is_root, err, errlen) < 0)
			goto out;
	for (uint32_t c = 0; c < ncomp; c++) {
		int any = 0;
		for (uint32_t i = cstart[c]; i < cstart[c + 1]; i++)
			any |= is_root[mem[i]];
		if (!any)
			auto_roots(g, mem + cstart[c], cstart[c + 1] - cstart[c],
				   is_root, dist, queue, tmp);
	}
	uint32_t nroot = 0;
	for (uint32_t r = 0; r < n; r++)
		if (is_root[r])
			tmp[nroot++] = r;
	sw_graph_bfs(g, tmp, nroot, rank, queue);
	/*
	 * A component whose order by (rank, GUID) has several minima (roots
	 * with no lower-GUID root next to them) gets connectors.
	 */
	for (uint32_t c = 0; c < ncomp; c++) {
		uint32_t sinks = 0, rstar = INF;
		for (uint32_t i = cstart[c]; i < cstart[c + 1]; i++) {
			uint32_t u = mem[i];
			if (!is_root[u])
				continue;
			if (rstar == INF)
				rstar = u;
			int lower = 0;
			for (uint32_t e = g->off[u]; e < g->off[u + 1]; e++)
				if (is_root[g->nbr[e]] &&
				    row_guid(f, t, g->nbr[e]) < row_guid(f, t, u))
					lower = 1;
			sinks += !lower;
		}
		if (sinks <= 1)
			continue;
		sw_graph_bfs(g, &rstar, 1, dist, queue);
		cls_a[rstar] = walked[rstar] = 1;
		for (uint32_t i = cstart[c]; i < cstart[c + 1]; i++) {
			uint32_t v = mem[i];
			if (!is_root[v])
				continue;
			cls_a[v] = 1;
			while (!walked[v]) {
				walked[v] = 1;
				/* parent: the lowest-GUID neighbour one hop nearer */
				uint32_t p = INF;
				for (uint32_t e = g->off[v]; e < g->off[v + 1]; e++) {
					uint32_t u = g->nbr[e];
					if (dist[u] + 1 == dist[v] &&
					    (p == INF || row_guid(f, t, u) < row_guid(f, t, p)))
						p = u;
				}
				cls_a[p] = 1;
				v = p;
			}
		}
		for (uint32_t i = cstart[c]; i < cstart[c + 1]; i++)
			rank[mem[i]] = cls_a[mem[i]] ? dist[mem[i]] : rank[mem[i]];
	}
	for (uint32_t r = 0; r < n; r++)
		key[r] = (struct sortkey){ { comp[r], !cls_a[r], rank[r] },
					   row_guid(f, t, r), r };
	qsort(key, n, sizeof(*key), cmp_key);
	for (uint32_t i = 0; i < n; i++)
		pos[key[i].row] = i;
	rc = 0;
out:
	free(key);
	free(comp);
	free(mem);
	free(cstart);
	free(rank);
	free(dist);
	free(queue);
	free(tmp);
	free(is_root);
	free(cls_a);
	free(walked);
	return rc;
}

static void free_ograph(struct ograph *g)
{
	free(g->row);
	free(g->off);
	free(g->mid);
	free(g->nbr);
	free(g->port);
}

static int build_ograph(const struct sw_graph *rg, const uint32_t *pos,
			struct ograph *g)
{
	uint32_t m = rg->off[rg->n];
	g->n = rg->n;
	g->row = malloc(((size_t)g->n + 1) * sizeof(*g->row));
	g->off = malloc(((size_t)g->n + 1) * sizeof(*g->off));
	g->mid = malloc(((size_t)g->n + 1) * sizeof(*g->mid));
	g->nbr = malloc(((size_t)m + 1) * sizeof(*g->nbr));
	g->port = malloc((size_t)m + 1);
	if (!g->row || !g->off || !g->mid || !g->nbr || !g->port)
		return -1;
	for (uint32_t r = 0; r < g->n; r++)
		g->row[pos[r]] = r;
	m = 0;
	for (uint32_t i = 0; i < g->n; i++) {
		uint32_t r = g->row[i];
		g->off[i] = m;
		for (int up = 1; up >= 0; up--) {
			if (!up)
				g->mid[i] = m;
			for (uint32_t e = rg->off[r]; e < rg->off[r + 1]; e++) {
				uint32_t j = pos[rg->nbr[e]];
				if ((j < i) == up) {
					g->nbr[m] = j;
					g->port[m] = rg->port[e];
					m++;
				}
			}
		}
	}
	g->off[g->n] = m;
	return 0;
}

/*
 * Distances: FAR (and anything above it) is "no path"; FAR + a few hops
 * stays far below overflow, so the passes add 1 without testing.
 */
#define FAR (UINT32_MAX / 2)

struct dest_work {
	uint32_t *dd;		/* shortest all-down path to the destination */
	uint32_t *du;		/* shortest legal path */
	uint32_t *eff;		/* length of the route chosen */
	uint8_t *forced;	/* entered by a down hop: must go down */
	uint32_t *cand_off;	/* n + 1 */
	uint8_t *cand;		/* candidate ports */
	uint32_t *cand_nbr;	/* their neighbour position (FAR: up hop) */
};

static uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/*
 * Candidate ports of every switch towards destination position d.
 *
 * dd: all-down distances (down hops go to higher positions, so one pass in
 * decreasing position).  du: shortest legal distances (up hops go to lower
 * positions: one pass in increasing position).  Then, in increasing
 * position (every switch that can enter s by a down hop comes before s):
 * a forced switch takes the down hops on a shortest all-down path; any
 * other takes the shortest of its up hops and of the down hops into
 * switches that lose nothing by being forced (dd == du), and forces the
 * latter.  Only the order's minimum may need to force a switch that loses
 * by it.
 */
static void dest_candidates(const struct ograph *g, uint32_t d,
			    struct dest_work *w)
{
	uint32_t n = g->n, m = 0;
	uint32_t *dd = w->dd, *du = w->du, *eff = w->eff;
	for (uint32_t i = 0; i < n; i++) {
		dd[i] = FAR;
		w->forced[i] = 0;
	}
	dd[d] = 0;
	for (uint32_t i = d; i-- > 0;) {
		uint32_t best = FAR;
		for (uint32_t e = g->mid[i]; e < g->off[i + 1]; e++)
			best = min32(best, dd[g->nbr[e]] + 1);
		dd[i] = best;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t best = dd[i];
		for (uint32_t e = g->off[i]; e < g->mid[i]; e++)
			best = min32(best, du[g->nbr[e]] + 1);
		du[i] = min32(best, FAR);
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t best = FAR, start = m;
		w->cand_off[i] = m;
		if (i == d) {
			eff[i] = 0;
			continue;
		}
		if (w->forced[i]) {
			best = dd[i];
			for (uint32_t e = g->mid[i]; e < g->off[i + 1]; e++)
				if (dd[g->nbr[e]] + 1 == best) {
					w->cand_nbr[m] = g->nbr[e];
					w->cand[m++] = g->port[e];
				}
		} else {
			/* the list restarts whenever a shorter way shows up */
			for (uint32_t e = g->off[i]; e < g->mid[i]; e++) {
				uint32_t v = eff[g->nbr[e]] + 1;
				if (v > best)
					continue;
				if (v < best) {
					best = v;
					m = start;
				}
				w->cand_nbr[m] = FAR;
				w->cand[m++] = g->port[e];
			}
			for (uint32_t e = g->mid[i]; e < g->off[i + 1]; e++) {
				uint32_t j = g->nbr[e], v = dd[j] + 1;
				if (v > best || dd[j] != du[j])
					continue;
				if (v < best) {
					best = v;
					m = start;
				}
				w->cand_nbr[m] = j;
				w->cand[m++] = g->port[e];
			}
			if (best >= FAR && dd[i] < FAR) {
				/* the minimum: forcing is the only way */
				m = start;
				best = dd[i];
				for (uint32_t e = g->mid[i]; e < g->off[i + 1]; e++)
					if (dd[g->nbr[e]] + 1 == best) {
						w->cand_nbr[m] = g->nbr[e];
						w->cand[m++] = g->port[e];
					}
			}
		}
		if (best >= FAR) {
			eff[i] = FAR;
			m = start;
			continue;
		}
		eff[i] = best;
		for (uint32_t c = start; c < m; c++)
			if (w->cand_nbr[c] != FAR)
				w->forced[w->cand_nbr[c]] = 1;
	}
	w->cand_off[n] = m;
}

/* Min-heap of packed (load, port) keys. */
static void sift_down(uint64_t *h, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		if (l < n && h[l] < h[m])
			m = l;
		if (l + 1 < n && h[l + 1] < h[m])
			m = l + 1;
		if (m == i)
			return;
		uint64_t x = h[i];
		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

/*
 * Routes the LIDs with want[lid] set (every LID when want is NULL) under
 * the order pos[row] (0 first; a hop to a lower position goes up), which
 * must have a single minimum in each connected component for every switch
 * to reach every LID there.  Destination switches in the order of their
 * lowest LID, so that the balance does not depend on discovery order.
 */
int updn_route_order(const struct fabric *f, struct lft_tables *t,
		     const uint32_t *pos, const uint8_t *want, char *err,
		     size_t errlen)
{
	struct sw_graph rg = { 0 };
	struct ograph g = { 0 };
	struct dest_work w = { 0 };
	struct lid_spread sp = { 0 };
	uint32_t n = t->n_sw, nl = t->max_lid + 1;
	uint32_t *first = malloc(((size_t)n + 1) * sizeof(*first));
	uint32_t *next = malloc((size_t)nl * sizeof(*next));
	uint8_t *aport = malloc(nl);
	uint32_t *order = malloc(((size_t)n + 1) * sizeof(*order));
	uint32_t *lids = malloc((size_t)nl * sizeof(*lids));
	uint64_t key[256];
	w.dd = malloc(((size_t)n + 1) * sizeof(*w.dd));
	w.du = malloc(((size_t)n + 1) * sizeof(*w.du));
	w.eff = malloc(((size_t)n + 1) * sizeof(*w.eff));
	w.forced = malloc((size_t)n + 1);
	w.cand_off = malloc(((size_t)n + 1) * sizeof(*w.cand_off));
	int rc = -1;
	if (lid_spread_init(&sp, f, t) < 0 || !first || !next || !aport || !order || !lids || !w.dd ||
	    !w.du || !w.eff || !w.forced || !w.cand_off ||
	    sw_graph_build(&rg, f, t) < 0 || build_ograph(&rg, pos, &g) < 0 ||
	    !(w.cand = malloc((size_t)g.off[n] + 1)) ||
	    !(w.cand_nbr = malloc(((size_t)g.off[n] + 1) * sizeof(*w.cand_nbr)))) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	/* LIDs grouped by the switch (position) they attach to */
	for (uint32_t i = 0; i < n; i++)
		first[i] = INF;
	for (uint32_t lid = t->max_lid; lid >= 1; lid--) {
		uint32_t row;
		if ((want && !want[lid]) ||
		    graph_lid_attach(f, t, lid, &row, &aport[lid]) < 0)
			continue;
		next[lid] = first[pos[row]];
		first[pos[row]] = lid;
	}
	/* destination switches in the order of their lowest LID */
	uint32_t n_dest = 0;
	for (uint32_t lid = 1; lid <= t->max_lid; lid++) {
		uint32_t row;
		uint8_t port;
		if ((!want || want[lid]) &&
		    graph_lid_attach(f, t, lid, &row, &port) == 0 &&
		    first[pos[row]] == lid)
			order[n_dest++] = pos[row];
	}
	for (uint32_t k = 0; k < n_dest; k++) {
		uint32_t d = order[k], cnt = 0;
		for (uint32_t lid = first[d]; lid != INF; lid = next[lid]) {
			lft_row(t, g.row[d])[lid] = aport[lid];
			lids[cnt++] = lid;
		}
		dest_candidates(&g, d, &w);
		for (uint32_t i = 0; i < n; i++) {
			uint32_t c0 = w.cand_off[i], c1 = w.cand_off[i + 1];
			if (c0 == c1)
				continue;
			uint8_t *row = lft_row(t, g.row[i]);
			uint32_t nc = c1 - c0;
			if (sp.n_off > 1) {
				lid_spread_pick(&sp, g.row[i], row, w.cand + c0,
						nc, lids, cnt);
				continue;
			}
			/* one LID per port: (load, port) packed, the least key wins */
			uint32_t *ld = sp.load + (size_t)g.row[i] * sp.stride;
			for (uint32_t c = 0; c < nc; c++)
				key[c] = (uint64_t)ld[w.cand[c0 + c]] << 8 | w.cand[c0 + c];
			if (cnt == 1) {
				uint32_t b = 0;
				for (uint32_t c = 1; c < nc; c++)
					if (key[c] < key[b])
						b = c;
				uint64_t x = key[0];
				key[0] = key[b];
				key[b] = x;
			} else {
				for (uint32_t c = nc / 2; c-- > 0;)
					sift_down(key, nc, c);
			}
			for (uint32_t j = 0; j < cnt; j++) {
				row[lids[j]] = (uint8_t)key[0];
				key[0] += 1u << 8;
				sift_down(key, nc, 0);
			}
			for (uint32_t c = 0; c < nc; c++)
				ld[(uint8_t)key[c]] = (uint32_t)(key[c] >> 8);
		}
	}
	rc = 0;
out:
	sw_graph_free(&rg);
	free_ograph(&g);
	lid_spread_free(&sp);
	free(first);
	free(next);
	free(aport);
	free(order);
	free(lids);
	free(w.dd);
	free(w.du);
	free(w.eff);
	free(w.forced);
	free(w.cand_off);
	free(w.cand);
	free(w.cand_nbr);
	return rc;
}

int updn_route(const struct fabric *f, const struct route_opts *o,
	       struct lft_tables *t, char *err, size_t errlen)
{
	struct sw_graph g = { 0 };
	uint32_t *pos = malloc(((size_t)t->n_sw + 1) * sizeof(*pos));
	int rc = -1;
	if (!pos || sw_graph_build(&g, f, t) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (updn_order(f, t, &g, o, pos, err, errlen) == 0)
		rc = updn_route_order(f, t, pos, NULL, err, errlen);
out:
	sw_graph_free(&g);
	free(pos);
	return rc;
}
