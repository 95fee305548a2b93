/*
 * The local rebalance: the smallest sub-tree the moves touched, routed
 * again inside itself (see rblocal.h).
 */
#include "reconfig/rblocal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/engines/ftree.h"
#include "routing/graph.h"
#include "sm/base/clock.h"
#include "sm/base/nodemap.h"

static int physical(const struct fabric *f, uint32_t node)
{
	return f->nodes[node].type == FAB_SWITCH && !fabric_is_vswitch(f, node);
}

/* The physical switch at the other end of pi's usable link, else FAB_NONE. */
static uint32_t sw_peer(const struct fabric *f, uint32_t pi)
{
	if (!graph_sw_link(f, pi))
		return FAB_NONE;
	uint32_t peer = f->ports[f->ports[pi].remote].node;
	return physical(f, peer) ? peer : FAB_NONE;
}

/*
 * The neighbours of the rows set[0..n) at rank want, once each (stamp[row]
 * == mark): into out, their count.
 */
static uint32_t step(const struct fabric *f, const struct lft_tables *t,
		     const uint32_t *rank, const uint32_t *set, uint32_t n,
		     uint32_t want, uint32_t *out, uint32_t *stamp, uint32_t mark)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t node = t->sw_node[set[i]];
		for (unsigned p = 1; p <= f->nodes[node].nports; p++) {
			uint32_t peer = sw_peer(f, fabric_port(f, node, p));
			if (peer == FAB_NONE)
				continue;
			uint32_t r = t->row_of_node[peer];
			if (r == FAB_NONE || rank[r] != want || stamp[r] == mark)
				continue;
			stamp[r] = mark;
			out[k++] = r;
		}
	}
	return k;
}

struct walk {
	uint32_t *rank, *stamp, *a, *b, *set;	/* n_sw each, set n * n_sw */
	uint32_t *cnt;				/* per leaf: its set's size */
	uint32_t mark;
};

static void walk_free(struct walk *w)
{
	free(w->rank);
	free(w->stamp);
	free(w->a);
	free(w->b);
	free(w->set);
	free(w->cnt);
}

/* The sets of all leaves equal to leaf 0's. */
static int sets_equal(struct walk *w, uint32_t n, uint32_t n_sw)
{
	uint32_t m = ++w->mark;
	for (uint32_t i = 0; i < w->cnt[0]; i++)
		w->stamp[w->set[i]] = m;
	for (uint32_t k = 1; k < n; k++) {
		if (w->cnt[k] != w->cnt[0])
			return 0;
		for (uint32_t i = 0; i < w->cnt[k]; i++)
			if (w->stamp[w->set[(size_t)k * n_sw + i]] != m)
				return 0;
	}
	return 1;
}

/* rblocal_subtree(), the ranks kept in rank (t->n_sw) when not NULL. */
static int subtree(const struct fabric *f, const struct lft_tables *t,
		   const uint32_t *leaves, uint32_t n,
		   struct rblocal_subtree *s, uint8_t *member, uint32_t *rank,
		   char *err, size_t errlen)
{
	uint32_t n_sw = t->n_sw;
	struct walk w = { 0 };
	int rc = -1;
	memset(s, 0, sizeof(*s));
	s->top_node = FAB_NONE;
	w.rank = malloc(((size_t)n_sw + 1) * sizeof(*w.rank));
	w.stamp = calloc((size_t)n_sw + 1, sizeof(*w.stamp));
	w.a = malloc(((size_t)n_sw + 1) * sizeof(*w.a));
	w.b = malloc(((size_t)n_sw + 1) * sizeof(*w.b));
	w.set = malloc(((size_t)n * n_sw + 1) * sizeof(*w.set));
	w.cnt = calloc((size_t)n + 1, sizeof(*w.cnt));
	if (!w.rank || !w.stamp || !w.a || !w.b || !w.set || !w.cnt) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (!n) {
		snprintf(err, errlen, "no leaf to start from");
		goto out;
	}
	if (ftree_levels(f, t, w.rank, err, errlen) < 0)
		goto out;
	uint32_t leaf_rank = 0;
	for (uint32_t r = 0; r < n_sw; r++)
		if (physical(f, t->sw_node[r]) && w.rank[r] > leaf_rank)
			leaf_rank = w.rank[r];
	for (uint32_t k = 0; k < n; k++) {
		uint32_t r = leaves[k] < f->n_nodes ? t->row_of_node[leaves[k]] : FAB_NONE;
		if (r == FAB_NONE || !physical(f, leaves[k]) || w.rank[r] != leaf_rank) {
			snprintf(err, errlen, "node %u is no leaf switch of the fat tree",
				 leaves[k]);
			goto out;
		}
		w.set[(size_t)k * n_sw] = r;
		w.cnt[k] = 1;
	}
	/* up, level by level, until every leaf's ancestors are one set */
	uint32_t level = leaf_rank;
	while (!sets_equal(&w, n, n_sw) && level > 0) {
		level--;
		for (uint32_t k = 0; k < n; k++) {
			uint32_t *mine = &w.set[(size_t)k * n_sw];
			w.cnt[k] = step(f, t, w.rank, mine, w.cnt[k], level, w.a,
					w.stamp, ++w.mark);
			memcpy(mine, w.a, w.cnt[k] * sizeof(*mine));
		}
	}
	if (!sets_equal(&w, n, n_sw) || !w.cnt[0]) {
		snprintf(err, errlen, "the leaves have no common ancestors");
		goto out;
	}
	s->level = level;
	s->leaf_level = leaf_rank;
	s->whole = level == 0;
	s->tops = w.cnt[0];
	/* T and every switch below: down level by level */
	uint32_t nb = w.cnt[0], m = ++w.mark;
	memcpy(w.b, w.set, nb * sizeof(*w.b));
	for (uint32_t i = 0; i < nb; i++) {
		uint32_t node = t->sw_node[w.b[i]];
		if (s->top_node == FAB_NONE || f->nodes[node].guid < f->nodes[s->top_node].guid)
			s->top_node = node;
	}
	for (uint32_t l = level;; l++) {
		for (uint32_t i = 0; i < nb; i++) {
			uint32_t r = w.b[i], node = t->sw_node[r];
			s->switches++;
			if (member)
				member[r] = 1;
			if (l != leaf_rank)
				continue;
			s->leaves++;
			for (unsigned p = 1; p <= f->nodes[node].nports; p++) {
				uint32_t pi = fabric_port(f, node, p);
				if (graph_link_up(f, pi) && sw_peer(f, pi) == FAB_NONE)
					s->end_nodes++;
			}
		}
		if (l == leaf_rank)
			break;
		nb = step(f, t, w.rank, w.b, nb, l + 1, w.a, w.stamp, m);
		memcpy(w.b, w.a, nb * sizeof(*w.b));
	}
	if (rank)
		memcpy(rank, w.rank, n_sw * sizeof(*rank));
	rc = 0;
out:
	walk_free(&w);
	return rc;
}

int rblocal_subtree(const struct fabric *f, const struct lft_tables *t,
		    const uint32_t *leaves, uint32_t n,
		    struct rblocal_subtree *s, uint8_t *member,
		    char *err, size_t errlen)
{
	return subtree(f, t, leaves, n, s, member, NULL, err, errlen);
}

/*
 * sub: the sub-tree's physical switches (member rows of t), the vSwitches
 * and CAs cabled to its leaves, and the vSwitches' CAs, with their ports
 * and the links among them; map[node of f] = its node in sub, FAB_NONE.
 */
static int cut(const struct fabric *f, const struct lft_tables *t,
	       const uint8_t *member, struct fabric *sub, uint32_t *map)
{
	fabric_init(sub);
	for (uint32_t i = 0; i < f->n_nodes; i++)
		map[i] = FAB_NONE;
	/* in: member switches; then what hangs below them, twice (vSwitch, its CAs) */
	uint8_t *in = calloc((size_t)f->n_nodes + 1, 1);
	if (!in)
		return -1;
	for (uint32_t r = 0; r < t->n_sw; r++)
		if (member[r])
			in[t->sw_node[r]] = 1;
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t pi = 0; pi < f->n_ports; pi++) {
			const struct fab_port *p = &f->ports[pi];
			if (!in[p->node] || p->remote == FAB_NONE || !graph_link_up(f, pi))
				continue;
			uint32_t peer = f->ports[p->remote].node;
			if (!physical(f, peer))
				in[peer] = 1;
		}
	int rc = 0;
	for (uint32_t i = 0; i < f->n_nodes && rc == 0; i++) {
		if (!in[i])
			continue;
		const struct fab_node *src = &f->nodes[i];
		uint32_t k = fabric_add_node(sub, src->type, src->nports, src->guid);
		if (k == FAB_NONE) {
			rc = -1;
			break;
		}
		uint32_t first = sub->nodes[k].first_port;
		sub->nodes[k] = *src;
		sub->nodes[k].first_port = first;
		for (unsigned p = 0; p <= src->nports; p++) {
			struct fab_port *d = &sub->ports[first + p];
			*d = f->ports[src->first_port + p];
			d->node = k;
			d->remote = FAB_NONE;
		}
		map[i] = k;
	}
	for (uint32_t pi = 0; pi < f->n_ports && rc == 0; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (p->remote == FAB_NONE || p->remote < pi || map[p->node] == FAB_NONE)
			continue;
		const struct fab_port *q = &f->ports[p->remote];
		if (map[q->node] == FAB_NONE)
			continue;	/* T's up links, and nothing else */
		fabric_link(sub, fabric_port(sub, map[p->node], p->num),
			    fabric_port(sub, map[q->node], q->num));
	}
	free(in);
	sub->xlid_mode = f->xlid_mode;
	sub->lmc = f->lmc;
	sub->lid_limit = f->lid_limit;
	sub->sm_node = FAB_NONE;
	if (rc == 0)
		rc = fabric_index_lids(sub);
	return rc;
}

/*
 * t's entries for the LIDs attached below the sub-tree (not a physical
 * switch's), on its switches below T, set as st (the tables of sub) has
 * them.  0, or -1 on ENOMEM (t unchanged).
 */
static int merge(const struct fabric *f, struct lft_tables *t,
		  const uint8_t *member, const uint32_t *rank,
		  const struct rblocal_subtree *s, const uint32_t *map,
		  const struct fabric *sub, const struct lft_tables *st,
		  struct rblocal_result *r)
{
	uint8_t *changed = calloc((size_t)t->n_sw + 1, 1);
	uint32_t *rows = malloc(((size_t)s->switches + 1) * 2 * sizeof(*rows));
	uint32_t n_rows = 0;
	uint32_t top = t->max_lid < st->max_lid ? t->max_lid : st->max_lid;
	if (!changed || !rows) {
		free(changed);
		free(rows);
		return -1;
	}
	/* the rows written: the sub-tree's below T, with their rows in st */
	for (uint32_t row = 0; row < t->n_sw; row++)
		if (member[row] && rank[row] != s->level) {
			rows[2 * n_rows] = row;
			rows[2 * n_rows + 1] = st->row_of_node[map[t->sw_node[row]]];
			n_rows++;
		}
	for (uint32_t lid = 1; lid <= top && lid <= f->max_lid; lid++) {
		uint32_t pi = f->lid_port ? f->lid_port[lid] : FAB_NONE;
		if (pi == FAB_NONE || physical(f, f->ports[pi].node) ||
		    map[f->ports[pi].node] == FAB_NONE)
			continue;
		if (sub->lid_port[lid] == FAB_NONE)
			continue;	/* not attached inside: not routed there */
		r->lids++;
		for (uint32_t i = 0; i < n_rows; i++) {
			uint32_t row = rows[2 * i];
			uint8_t *e = &lft_row(t, row)[lid];
			uint8_t v = lft_row(st, rows[2 * i + 1])[lid];
			if (*e == v)
				continue;
			*e = v;
			r->entries_changed++;
			if (!changed[row]) {
				changed[row] = 1;
				r->switches_changed++;
			}
		}
	}
	free(changed);
	free(rows);
	return 0;
}

int rblocal_route(const struct fabric *f, struct lft_tables *t,
		  const uint32_t *leaves, uint32_t n, struct rblocal_result *r,
		  char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	uint64_t t0 = clock_us();
	uint8_t *member = calloc((size_t)t->n_sw + 1, 1);
	uint32_t *rank = malloc(((size_t)t->n_sw + 1) * sizeof(*rank));
	uint32_t *map = malloc(((size_t)f->n_nodes + 1) * sizeof(*map));
	struct fabric sub;
	struct lft_tables st = { 0 };
	int rc = -1;
	fabric_init(&sub);
	if (!member || !rank || !map) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (subtree(f, t, leaves, n, &r->st, member, rank, err, errlen) < 0)
		goto out;
	if (r->st.whole || r->st.level == r->st.leaf_level) {
		rc = 0;		/* the caller's (whole), or nothing below T (one leaf) */
		goto out;
	}
	if (cut(f, t, member, &sub, map) < 0 || lft_tables_alloc(&st, &sub) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	struct route_opts none = { 0 };
	char why[200] = "";
	if (vswitch_ftree_route(&sub, &none, &st, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "vswitch-ftree cannot route the sub-tree: %s", why);
		goto out;
	}
	if (merge(f, t, member, rank, &r->st, map, &sub, &st, r) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	rc = 0;
out:
	r->route_us = clock_us() - t0;
	lft_tables_free(&st);
	fabric_free(&sub);
	free(member);
	free(rank);
	free(map);
	return rc;
}

void rblocal_describe(const struct fabric *f, const struct rblocal_subtree *s,
		      char *buf, size_t len)
{
	snprintf(buf, len, "level-%u sub-tree of %s (%u top switches, %u switches, %u leaves, %u end nodes)",
		 s->level, s->top_node != FAB_NONE ? fabric_node_name(f, s->top_node) : "?",
		 s->tops, s->switches, s->leaves, s->end_nodes);
}
