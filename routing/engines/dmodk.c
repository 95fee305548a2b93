/*
 * dmodk: D-mod-K routing for fat trees (XGFT), the destination-based
 * baseline of Zahavi's PGFT and Rodriguez et al.
 *
 * Levels: the switches with CAs are level 1, the others one more than
 * their distance from the nearest such switch.  The fabric must be a
 * connected fat tree: every link joins adjacent levels, all switches of a
 * level have the same number w(l+1) of up links, every top switch lies
 * above every leaf, and the way down from a switch to a leaf below it is
 * unique (parallel cables to the same child aside).  Otherwise -1.
 *
 * Destinations: CA ports numbered d = leaf index * m1 + rank of the port
 * among the leaf's CA ports (port order), m1 the most CA ports of any
 * leaf; leaves ordered pod by pod (a pod at level l is the set of leaves
 * with the same level-l ancestors, keyed by their lowest GUID), then by
 * GUID.  A switch at level l that is not above d's leaf takes up link
 *
 *	u_l(d) = floor(d / (w2 * ... * w_l)) mod w(l+1)
 *
 * its up links ordered by the lowest top-switch GUID above the parent,
 * then the parent's GUID, then port; a switch above d takes the unique way
 * down (among parallel cables: d mod their number).  LID offset o of an
 * LMC range adds o before each mod, so offset 0 is plain D-mod-K and the
 * offsets leave a leaf by different up links.
 *
 * Switch LIDs, which D-mod-K does not define, are routed by
 * updn_route_order (routing/engines/updn.c) under an order of the switches in
 * which every CA route above goes up then down: the lowest-GUID leaf B
 * first, then the switches above B by level, then the others from the
 * top down.  B is the order's single minimum, so every switch reaches
 * every other, and the tables stay free of channel-dependency cycles.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/graph.h"

#define NONE UINT32_MAX
#define MAX_LEVELS 16

struct tree {
	uint32_t n;
	struct sw_graph g;	/* switch links by row, which have CAs */
	uint32_t *lev;		/* 1 = leaf */
	uint32_t *upoff;	/* n + 1, into up/upn: up links in D-mod-K order */
	uint8_t *up;
	uint32_t *upn;		/* parent row of each up link */
	uint32_t height;	/* top level */
	uint32_t ntop;
	uint64_t w[MAX_LEVELS + 2];	/* w[l]: up links of a level l-1 switch */
};

static uint64_t guid_of(const struct fabric *f, const struct lft_tables *t,
			uint32_t r)
{
	return f->nodes[t->sw_node[r]].guid;
}

static const char *desc_of(const struct fabric *f, const struct lft_tables *t,
			   uint32_t r)
{
	return f->nodes[t->sw_node[r]].desc;
}

static void free_tree(struct tree *tr)
{
	sw_graph_free(&tr->g);
	free(tr->lev);
	free(tr->upoff);
	free(tr->up);
	free(tr->upn);
}

/*
 * Levels and the fat-tree checks.  queue needs n entries.
 */
static int levels(const struct fabric *f, const struct lft_tables *t,
		  struct tree *tr, const uint8_t *has_ca, uint32_t *queue,
		  char *err, size_t errlen)
{
	uint32_t n = tr->n, qh = 0, qt = 0;
	for (uint32_t r = 0; r < n; r++) {
		tr->lev[r] = has_ca[r] ? 1 : NONE;
		if (has_ca[r])
			queue[qt++] = r;
	}
	if (qt == 0) {
		snprintf(err, errlen, "no switch has a CA");
		return -1;
	}
	while (qh < qt) {
		uint32_t u = queue[qh++];
		for (uint32_t e = tr->g.off[u]; e < tr->g.off[u + 1]; e++)
			if (tr->lev[tr->g.nbr[e]] == NONE) {
				tr->lev[tr->g.nbr[e]] = tr->lev[u] + 1;
				queue[qt++] = tr->g.nbr[e];
			}
	}
	tr->height = 1;
	for (uint32_t r = 0; r < n; r++) {
		if (tr->lev[r] == NONE) {
			snprintf(err, errlen, "switch %s (0x%016llx) is not "
				 "connected to any CA: not a fat tree",
				 desc_of(f, t, r),
				 (unsigned long long)guid_of(f, t, r));
			return -1;
		}
		if (tr->lev[r] > tr->height)
			tr->height = tr->lev[r];
	}
	if (tr->height > MAX_LEVELS) {
		snprintf(err, errlen, "%u switch levels (at most %d)",
			 tr->height, MAX_LEVELS);
		return -1;
	}
	/* first switch (GUID order) of each level sets its up-link count */
	uint32_t first[MAX_LEVELS + 1];
	for (uint32_t l = 0; l <= MAX_LEVELS; l++)
		first[l] = NONE;
	for (uint32_t r = 0; r < n; r++) {
		uint32_t nup = 0, l = tr->lev[r];
		for (uint32_t e = tr->g.off[r]; e < tr->g.off[r + 1]; e++) {
			uint32_t v = tr->g.nbr[e];
			if (tr->lev[v] == l) {
				snprintf(err, errlen, "link between %s and %s, "
					 "both at level %u: not a fat tree",
					 desc_of(f, t, r), desc_of(f, t, v), l);
				return -1;
			}
			nup += tr->lev[v] == l + 1;
		}
		if (first[l] == NONE || guid_of(f, t, r) < guid_of(f, t, first[l])) {
			first[l] = r;
			tr->w[l + 1] = nup;
		}
	}
	for (uint32_t r = 0; r < n; r++) {
		uint32_t nup = 0, l = tr->lev[r];
		for (uint32_t e = tr->g.off[r]; e < tr->g.off[r + 1]; e++)
			nup += tr->lev[tr->g.nbr[e]] == l + 1;
		if (nup != tr->w[l + 1]) {
			snprintf(err, errlen, "level %u switches have unequal up "
				 "links (%s: %llu, %s: %u): not a fat tree", l,
				 desc_of(f, t, first[l]),
				 (unsigned long long)tr->w[l + 1],
				 desc_of(f, t, r), nup);
			return -1;
		}
	}
	tr->ntop = 0;
	for (uint32_t r = 0; r < n; r++)
		tr->ntop += tr->lev[r] == tr->height;
	return 0;
}

struct upkey {
	uint64_t top, guid;
	uint32_t port, row;
};

static int cmp_upkey(const void *a, const void *b)
{
	const struct upkey *x = a, *y = b;
	if (x->top != y->top)
		return x->top < y->top ? -1 : 1;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return (x->port > y->port) - (x->port < y->port);
}

/*
 * Up links of every switch in D-mod-K order.  topkey[r]: lowest GUID of
 * a top switch above r (rows processed from the top level down).
 */
static int up_links(const struct fabric *f, const struct lft_tables *t,
		    struct tree *tr, uint64_t *topkey)
{
	uint32_t n = tr->n, m = 0, maxup = 0;
	for (uint32_t l = tr->height; l >= 1; l--)
		for (uint32_t r = 0; r < n; r++) {
			if (tr->lev[r] != l)
				continue;
			topkey[r] = l == tr->height ? guid_of(f, t, r) : UINT64_MAX;
			for (uint32_t e = tr->g.off[r]; e < tr->g.off[r + 1]; e++) {
				uint32_t v = tr->g.nbr[e];
				if (tr->lev[v] == l + 1 && topkey[v] < topkey[r])
					topkey[r] = topkey[v];
			}
		}
	for (uint32_t r = 0; r < n; r++) {
		uint32_t nup = (uint32_t)tr->w[tr->lev[r] + 1];
		m += nup;
		if (nup > maxup)
			maxup = nup;
	}
	tr->upoff = malloc(((size_t)n + 1) * sizeof(*tr->upoff));
	tr->up = malloc((size_t)m + 1);
	tr->upn = malloc(((size_t)m + 1) * sizeof(*tr->upn));
	struct upkey *k = malloc(((size_t)maxup + 1) * sizeof(*k));
	if (!tr->upoff || !tr->up || !tr->upn || !k) {
		free(k);
		return -1;
	}
	m = 0;
	for (uint32_t r = 0; r < n; r++) {
		uint32_t c = 0;
		tr->upoff[r] = m;
		for (uint32_t e = tr->g.off[r]; e < tr->g.off[r + 1]; e++) {
			uint32_t v = tr->g.nbr[e];
			if (tr->lev[v] == tr->lev[r] + 1)
				k[c++] = (struct upkey){ topkey[v], guid_of(f, t, v),
							 tr->g.port[e], v };
		}
		qsort(k, c, sizeof(*k), cmp_upkey);
		for (uint32_t i = 0; i < c; i++, m++) {
			tr->up[m] = (uint8_t)k[i].port;
			tr->upn[m] = k[i].row;
		}
	}
	tr->upoff[n] = m;
	free(k);
	return 0;
}

/* Marks mark[] = stamp on every switch above row x (x included); returns how many tops. */
static uint32_t mark_above(const struct tree *tr, uint32_t x, uint32_t *mark,
			   uint32_t stamp, uint32_t *queue, uint32_t *nq)
{
	uint32_t qh = 0, qt = 0, tops = 0;
	mark[x] = stamp;
	queue[qt++] = x;
	while (qh < qt) {
		uint32_t u = queue[qh++];
		tops += tr->lev[u] == tr->height;
		for (uint32_t e = tr->upoff[u]; e < tr->upoff[u + 1]; e++)
			if (mark[tr->upn[e]] != stamp) {
				mark[tr->upn[e]] = stamp;
				queue[qt++] = tr->upn[e];
			}
	}
	*nq = qt;
	return tops;
}

struct key3 {
	uint32_t a, b;
	uint64_t guid;
	uint32_t row;
};

static int cmp_key3(const void *pa, const void *pb)
{
	const struct key3 *x = pa, *y = pb;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return (x->row > y->row) - (x->row < y->row);
}

/*
 * The order for switch LIDs (see the top comment): pos[row].  Fails when
 * the lowest-GUID leaf does not reach every top, or when a switch above it
 * has two children above it (a CA route could then turn there against the
 * order).
 */
static int switch_order(const struct fabric *f, const struct lft_tables *t,
			const struct tree *tr, uint32_t *pos, uint32_t *mark,
			uint32_t *queue, char *err, size_t errlen)
{
	uint32_t n = tr->n, b = NONE, nq;
	for (uint32_t r = 0; r < n; r++)
		if (tr->lev[r] == 1 && (b == NONE || guid_of(f, t, r) < guid_of(f, t, b)))
			b = r;
	for (uint32_t r = 0; r < n; r++)
		mark[r] = 0;
	if (mark_above(tr, b, mark, 1, queue, &nq) != tr->ntop) {
		snprintf(err, errlen, "leaf %s does not reach every top switch: "
			 "not a fat tree", desc_of(f, t, b));
		return -1;
	}
	for (uint32_t i = 0; i < nq; i++) {
		uint32_t v = queue[i], kids = 0, kid = NONE;
		for (uint32_t e = tr->g.off[v]; e < tr->g.off[v + 1]; e++) {
			uint32_t c = tr->g.nbr[e];
			if (mark[c] && tr->lev[c] + 1 == tr->lev[v] && c != kid) {
				kid = c;
				kids++;
			}
		}
		if (kids > 1) {
			snprintf(err, errlen, "switch %s has two children above "
				 "leaf %s: not an XGFT", desc_of(f, t, v),
				 desc_of(f, t, b));
			return -1;
		}
	}
	struct key3 *k = malloc(((size_t)n + 1) * sizeof(*k));
	if (!k) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (uint32_t r = 0; r < n; r++)
		k[r] = mark[r] ? (struct key3){ 0, tr->lev[r], guid_of(f, t, r), r }
			       : (struct key3){ 1, tr->height - tr->lev[r],
						guid_of(f, t, r), r };
	qsort(k, n, sizeof(*k), cmp_key3);
	for (uint32_t i = 0; i < n; i++)
		pos[k[i].row] = i;
	free(k);
	return 0;
}

struct leafkey {
	uint64_t k[MAX_LEVELS];	/* lowest ancestor GUID, top level first */
	uint64_t guid;
	uint32_t row;
};

static int cmp_leafkey(const void *a, const void *b)
{
	const struct leafkey *x = a, *y = b;
	for (int i = 0; i < MAX_LEVELS; i++)
		if (x->k[i] != y->k[i])
			return x->k[i] < y->k[i] ? -1 : 1;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return (x->row > y->row) - (x->row < y->row);
}

/* Leaf rows in destination order; returns how many. */
static uint32_t leaf_order(const struct fabric *f, const struct lft_tables *t,
			   const struct tree *tr, struct leafkey *lk,
			   uint32_t *mark, uint32_t *queue)
{
	uint32_t nl = 0, nq;
	for (uint32_t r = 0; r < tr->n; r++)
		mark[r] = NONE;
	for (uint32_t r = 0; r < tr->n; r++) {
		if (tr->lev[r] != 1)
			continue;
		struct leafkey *k = &lk[nl++];
		memset(k, 0, sizeof(*k));
		k->guid = guid_of(f, t, r);
		k->row = r;
		for (uint32_t l = 2; l < tr->height; l++)
			k->k[tr->height - 1 - l] = UINT64_MAX;
		mark_above(tr, r, mark, r, queue, &nq);
		for (uint32_t i = 0; i < nq; i++) {
			uint32_t v = queue[i], l = tr->lev[v];
			if (l >= 2 && l < tr->height &&
			    guid_of(f, t, v) < k->k[tr->height - 1 - l])
				k->k[tr->height - 1 - l] = guid_of(f, t, v);
		}
	}
	qsort(lk, nl, sizeof(*lk), cmp_leafkey);
	return nl;
}

/*
 * D-mod-K entries towards the CAs of leaf x (destination indices from
 * base).  mark/stamp: the switches above x; down[]: per such switch the
 * first port towards x's side and the number of parallel ports.
 */
static int route_leaf(const struct fabric *f, struct lft_tables *t,
		      const struct tree *tr, uint32_t x, uint64_t base,
		      uint32_t *mark, uint32_t stamp, uint32_t *queue,
		      uint32_t *dstart, uint8_t *dnpar, uint8_t *dbuf,
		      char *err, size_t errlen)
{
	uint32_t nq;
	if (mark_above(tr, x, mark, stamp, queue, &nq) != tr->ntop) {
		snprintf(err, errlen, "leaf %s does not reach every top "
			 "switch: not a fat tree", desc_of(f, t, x));
		return -1;
	}
	/* the way down from every switch above x: its ports to one child */
	uint32_t m = 0;
	for (uint32_t i = 1; i < nq; i++) {
		uint32_t v = queue[i], kid = NONE;
		dstart[v] = m;
		dnpar[v] = 0;
		for (uint32_t e = tr->g.off[v]; e < tr->g.off[v + 1]; e++) {
			uint32_t c = tr->g.nbr[e];
			if (mark[c] != stamp || tr->lev[c] + 1 != tr->lev[v])
				continue;
			if (kid != NONE && c != kid) {
				snprintf(err, errlen, "two ways down from %s to "
					 "leaf %s: not an XGFT",
					 desc_of(f, t, v), desc_of(f, t, x));
				return -1;
			}
			kid = c;
			dbuf[m++] = tr->g.port[e];
			dnpar[v]++;
		}
	}
	const struct fab_node *xn = &f->nodes[t->sw_node[x]];
	uint64_t rank = 0;
	for (int p = 1; p <= xn->nports; p++) {
		uint32_t pi = xn->first_port + p;
		if (!graph_link_up(f, pi) || graph_peer_is_switch(f, pi))
			continue;
		uint32_t ca = f->ports[pi].remote;
		uint64_t d = base + rank++;
		uint32_t lid0 = f->ports[ca].lid;
		uint32_t span = 1u << fabric_port_lmc(f, ca);
		for (uint32_t o = 0; o < span; o++) {
			uint32_t lid = lid0 + o;
			if (lid0 == 0 || lid > t->max_lid || f->lid_port[lid] != ca)
				continue;
			uint32_t u[MAX_LEVELS + 1];
			uint64_t prod = 1;
			for (uint32_t l = 1; l < tr->height; l++) {
				u[l] = (uint32_t)((d / prod + o) % tr->w[l + 1]);
				prod *= tr->w[l + 1];
				if (prod > ((uint64_t)1 << 40))
					prod = (uint64_t)1 << 40;
			}
			for (uint32_t s = 0; s < tr->n; s++) {
				uint8_t out;
				if (s == x)
					out = (uint8_t)p;
				else if (mark[s] == stamp)
					out = dbuf[dstart[s] + (d + o) % dnpar[s]];
				else
					out = tr->up[tr->upoff[s] + u[tr->lev[s]]];
				lft_row(t, s)[lid] = out;
			}
		}
	}
	return 0;
}

int dmodk_route(const struct fabric *f, const struct route_opts *o,
		struct lft_tables *t, char *err, size_t errlen)
{
	struct tree tr = { 0 };
	uint32_t n = t->n_sw;
	uint32_t *queue = malloc(((size_t)n + 1) * sizeof(*queue));
	uint32_t *mark = malloc(((size_t)n + 1) * sizeof(*mark));
	uint32_t *pos = malloc(((size_t)n + 1) * sizeof(*pos));
	uint64_t *topkey = malloc(((size_t)n + 1) * sizeof(*topkey));
	struct leafkey *lk = malloc(((size_t)n + 1) * sizeof(*lk));
	uint32_t *dstart = malloc(((size_t)n + 1) * sizeof(*dstart));
	uint8_t *dnpar = malloc((size_t)n + 1);
	uint8_t *dbuf = NULL;
	uint8_t *want = calloc((size_t)t->max_lid + 1, 1);
	int rc = -1;
	tr.lev = malloc(((size_t)n + 1) * sizeof(*tr.lev));
	tr.n = n;
	if (!queue || !mark || !pos || !topkey || !lk || !dstart ||
	    !dnpar || !want || !tr.lev || sw_graph_build(&tr.g, f, t) < 0 ||
	    !(dbuf = malloc((size_t)tr.g.off[n] + 1))) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (n == 0) {
		rc = 0;
		goto out;
	}
	if (levels(f, t, &tr, tr.g.has_ca, queue, err, errlen) < 0)
		goto out;
	if (up_links(f, t, &tr, topkey) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (switch_order(f, t, &tr, pos, mark, queue, err, errlen) < 0)
		goto out;
	uint32_t nl = leaf_order(f, t, &tr, lk, mark, queue);
	uint64_t m1 = 0;
	for (uint32_t i = 0; i < nl; i++) {
		uint32_t r = lk[i].row, c = 0;
		const struct fab_node *xn = &f->nodes[t->sw_node[r]];
		for (int p = 1; p <= xn->nports; p++)
			c += graph_link_up(f, xn->first_port + p) &&
			     !graph_peer_is_switch(f, xn->first_port + p);
		if (c > m1)
			m1 = c;
	}
	for (uint32_t r = 0; r < n; r++)
		mark[r] = NONE;
	for (uint32_t i = 0; i < nl; i++)
		if (route_leaf(f, t, &tr, lk[i].row, i * m1, mark, lk[i].row,
			       queue, dstart, dnpar, dbuf, err, errlen) < 0)
			goto out;
	for (uint32_t lid = 1; lid <= t->max_lid; lid++) {
		uint32_t pi = f->lid_port[lid];
		want[lid] = pi != FAB_NONE &&
			    f->nodes[f->ports[pi].node].type == FAB_SWITCH;
	}
	rc = updn_route_order(f, t, pos, want, err, errlen);
out:
	free_tree(&tr);
	free(queue);
	free(mark);
	free(pos);
	free(topkey);
	free(lk);
	free(dstart);
	free(dnpar);
	free(dbuf);
	free(want);
	return rc;
}
