/*
 * The ftree routing engine (routing/engines/ftree.c) on small fat trees built from
 * net-file text: every CA reaches every LID over a shortest up*-then-down*
 * route, every switch has an entry for every LID, the all-to-all load is
 * even, runs repeat and do not depend on the order of the records, a
 * damaged tree is still routed, LMC ranges take different paths, and a
 * fabric that is not a tree is refused with a reason.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engine.h"
#include "sm/base/fabric.h"
#include "sm/model/lids.h"
#include "sm/base/topo.h"

/* A direct reference, so that a static link pulls the engine in. */
extern const struct routing_engine ftree_engine;

/* --- fabrics as lists of nodes and cables --- */

#define TF_NODES 1024
#define TF_LINKS 4096

struct tnode {
	char name[24];
	int sw, nports;
	uint64_t guid;
};

struct tlink {
	int a, pa, b, pb;
};

struct tfab {
	int nn, nl;
	struct tnode n[TF_NODES];
	struct tlink l[TF_LINKS];
};

static struct tfab *tf_new(void)
{
	struct tfab *t = calloc(1, sizeof(*t));
	ck_assert_ptr_nonnull(t);
	return t;
}

static int tf_node(struct tfab *t, int sw, int nports, uint64_t guid,
		   const char *fmt, int i)
{
	ck_assert_int_lt(t->nn, TF_NODES);
	struct tnode *n = &t->n[t->nn];
	snprintf(n->name, sizeof(n->name), fmt, i);
	n->sw = sw;
	n->nports = nports;
	n->guid = guid;
	return t->nn++;
}

static void tf_link(struct tfab *t, int a, int pa, int b, int pb)
{
	ck_assert_int_lt(t->nl, TF_LINKS);
	t->l[t->nl++] = (struct tlink){ a, pa, b, pb };
}

/* Removes the cable between the named nodes (the first one found). */
static void tf_unlink(struct tfab *t, const char *a, const char *b)
{
	for (int i = 0; i < t->nl; i++) {
		const char *x = t->n[t->l[i].a].name, *y = t->n[t->l[i].b].name;
		if ((!strcmp(x, a) && !strcmp(y, b)) || (!strcmp(x, b) && !strcmp(y, a))) {
			t->l[i] = t->l[--t->nl];
			return;
		}
	}
	ck_abort_msg("no cable %s - %s", a, b);
}

/* Net-file text, records in the order perm gives (NULL: as added). */
static char *tf_text(const struct tfab *t, const int *perm)
{
	size_t cap = 1 << 20, len = 0;
	char *s = malloc(cap);
	ck_assert_ptr_nonnull(s);
#define PUT(...) do { \
	len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__); \
	ck_assert_uint_lt(len, cap); \
} while (0)
	for (int k = 0; k < t->nn; k++) {
		const struct tnode *n = &t->n[perm ? perm[k] : k];
		int me = (int)(n - t->n);
		PUT("%s=0x%llx\n%s\t%d \"%s\"\n", n->sw ? "switchguid" : "caguid",
		    (unsigned long long)n->guid, n->sw ? "Switch" : "Hca",
		    n->nports, n->name);
		for (int j = 0; j < t->nl; j++) {
			const struct tlink *l = &t->l[perm ? t->nl - 1 - j : j];
			if (l->a == me)
				PUT("[%d]\t\"%s\"[%d]\n", l->pa, t->n[l->b].name, l->pb);
			if (l->b == me)
				PUT("[%d]\t\"%s\"[%d]\n", l->pb, t->n[l->a].name, l->pa);
		}
		PUT("\n");
	}
#undef PUT
	return s;
}

/* 2-level: leaves L<i> with h hosts each, spines S<j>, par cables a pair. */
static struct tfab *tree2(int leaves, int spines, int hosts, int par)
{
	struct tfab *t = tf_new();
	int ln[64], sn[64], nh = 0;
	for (int i = 0; i < leaves; i++)
		ln[i] = tf_node(t, 1, hosts + spines * par, 0x100 + i, "L%d", i);
	for (int j = 0; j < spines; j++)
		sn[j] = tf_node(t, 1, leaves * par, 0x200 + j, "S%d", j);
	for (int i = 0; i < leaves; i++) {
		for (int k = 0; k < hosts; k++, nh++)
			tf_link(t, ln[i], k + 1,
				tf_node(t, 0, 1, 0x10000 + 4 * nh, "H%d", nh), 1);
		for (int j = 0; j < spines; j++)
			for (int p = 0; p < par; p++)
				tf_link(t, ln[i], hosts + j * par + p + 1, sn[j],
					i * par + p + 1);
	}
	return t;
}

/* 3-level like fabgen's ftree3: k pods of k/2 edges and k/2 aggregations. */
static struct tfab *tree3(int k)
{
	struct tfab *t = tf_new();
	int h = k / 2, e[16][8], g[16][8], c[64], nh = 0;
	for (int p = 0; p < k; p++)
		for (int j = 0; j < h; j++)
			e[p][j] = tf_node(t, 1, k, 0x1000 + p * h + j, "E%d", p * h + j);
	for (int p = 0; p < k; p++)
		for (int i = 0; i < h; i++)
			g[p][i] = tf_node(t, 1, k, 0x2000 + p * h + i, "A%d", p * h + i);
	for (int x = 0; x < h * h; x++)
		c[x] = tf_node(t, 1, k, 0x3000 + x, "C%d", x);
	for (int p = 0; p < k; p++) {
		for (int j = 0; j < h; j++)
			for (int q = 0; q < h; q++, nh++)
				tf_link(t, e[p][j], q + 1,
					tf_node(t, 0, 1, 0x100000 + 4 * nh, "H%d", nh), 1);
		for (int j = 0; j < h; j++)
			for (int i = 0; i < h; i++)
				tf_link(t, e[p][j], h + i + 1, g[p][i], j + 1);
		for (int i = 0; i < h; i++)
			for (int x = 0; x < h; x++)
				tf_link(t, g[p][i], h + x + 1, c[i * h + x], p + 1);
	}
	return t;
}

/* n switches in a ring, a host on each. */
static struct tfab *ring(int n)
{
	struct tfab *t = tf_new();
	int r[16];
	for (int i = 0; i < n; i++)
		r[i] = tf_node(t, 1, 4, 0x100 + i, "R%d", i);
	for (int i = 0; i < n; i++) {
		tf_link(t, r[i], 1, tf_node(t, 0, 1, 0x1000 + 4 * i, "H%d", i), 1);
		tf_link(t, r[i], 2, r[(i + 1) % n], 3);
	}
	return t;
}

static void build(struct fabric *f, const struct tfab *t, const int *perm,
		  uint8_t lmc)
{
	char err[256] = "";
	struct lid_report rep;
	char *text = tf_text(t, perm);
	fabric_init(f);
	if (topo_parse_string(f, text, "test.net", err, sizeof(err)) != 0)
		ck_abort_msg("parse: %s", err);
	free(text);
	ck_assert_int_eq(lids_assign(f, NULL, lmc, &rep), 0);
	ck_assert_uint_eq(rep.exhausted, 0);
}

static int try_route(const struct fabric *f, const struct route_opts *o,
		     struct lft_tables *t, char *err, size_t errlen)
{
	ck_assert_int_eq(lft_tables_alloc(t, f), 0);
	return ftree_engine.route(f, o, t, err, errlen);
}

static void route(const struct fabric *f, const struct route_opts *o,
		  struct lft_tables *t)
{
	char err[256] = "";
	if (try_route(f, o, t, err, sizeof(err)) != 0)
		ck_abort_msg("route: %s", err);
}

static uint32_t node_named(const struct fabric *f, const char *name)
{
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (!strcmp(f->nodes[i].desc, name))
			return i;
	ck_abort_msg("no node %s", name);
	return FAB_NONE;
}

static uint32_t host_lid(const struct fabric *f, const char *name)
{
	uint32_t lid = fabric_portp(f, node_named(f, name), 1)->lid;
	ck_assert_uint_ne(lid, 0);
	return lid;
}

static uint8_t entry(const struct fabric *f, const struct lft_tables *t,
		     const char *sw, uint32_t lid)
{
	return lft_row(t, t->row_of_node[node_named(f, sw)])[lid];
}

/* --- the test's own view of the fabric --- */

static uint32_t peer_switch(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	if (p->remote == FAB_NONE || p->phys_state != PHYS_LINKUP ||
	    f->ports[p->remote].phys_state != PHYS_LINKUP)
		return FAB_NONE;
	uint32_t rn = f->ports[p->remote].node;
	return f->nodes[rn].type == FAB_SWITCH ? rn : FAB_NONE;
}

static int has_ca(const struct fabric *f, uint32_t sw)
{
	for (unsigned p = 1; p <= f->nodes[sw].nports; p++) {
		const struct fab_port *fp = fabric_portp(f, sw, p);
		if (fp->remote != FAB_NONE &&
		    f->nodes[f->ports[fp->remote].node].type != FAB_SWITCH)
			return 1;
	}
	return 0;
}

/* Switch hops from the switches where seed() holds (UINT32_MAX: none). */
static void hops_from(const struct fabric *f, const uint8_t *seed,
		      uint32_t *dist)
{
	uint32_t *q = malloc(f->n_nodes * sizeof(*q));
	uint32_t qh = 0, qt = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		dist[i] = UINT32_MAX;
		if (seed[i]) {
			dist[i] = 0;
			q[qt++] = i;
		}
	}
	while (qh < qt) {
		uint32_t u = q[qh++];
		for (unsigned p = 1; p <= f->nodes[u].nports; p++) {
			uint32_t v = peer_switch(f, fabric_port(f, u, p));
			if (v != FAB_NONE && dist[v] == UINT32_MAX) {
				dist[v] = dist[u] + 1;
				q[qt++] = v;
			}
		}
	}
	free(q);
}

/* Level of each switch: hops from the switches with CAs (up = higher). */
static uint32_t *leaf_levels(const struct fabric *f)
{
	uint8_t *seed = calloc(f->n_nodes, 1);
	uint32_t *lv = malloc(f->n_nodes * sizeof(*lv));
	for (uint32_t i = 0; i < f->n_nodes; i++)
		seed[i] = f->nodes[i].type == FAB_SWITCH && has_ca(f, i);
	hops_from(f, seed, lv);
	free(seed);
	return lv;
}

/* Level: the highest hops from the named roots, minus the hops. */
static uint32_t *root_levels(const struct fabric *f, const char **roots, int n)
{
	uint8_t *seed = calloc(f->n_nodes, 1);
	uint32_t *lv = malloc(f->n_nodes * sizeof(*lv)), max = 0;
	for (int i = 0; i < n; i++)
		seed[node_named(f, roots[i])] = 1;
	hops_from(f, seed, lv);
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (lv[i] != UINT32_MAX && lv[i] > max)
			max = lv[i];
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (lv[i] != UINT32_MAX)
			lv[i] = max - lv[i];
	free(seed);
	return lv;
}

struct chk {
	int full;		/* every switch must have an entry for every LID */
	int minimal;		/* routes from switches with CAs are shortest */
	int ca_lids_only;	/* ... and up*-down*: only those to CA LIDs */
	uint64_t routed;	/* (switch, LID) entries followed */
};

/*
 * Every (switch, LID) entry: followed link by link it reaches the LID's
 * owner without a loop, or it is LFT_DROP (only allowed without full).
 * From a switch with CAs (where CA traffic enters) the route never goes
 * down then up, nor sideways, by the levels lv, and is shortest when
 * minimal is set; with ca_lids_only, only when the LID is a CA's.
 */
static void check_routes(const struct fabric *f, const struct lft_tables *t,
			 const uint32_t *lv, struct chk *c)
{
	uint32_t *dist = malloc(f->n_nodes * sizeof(*dist));
	uint8_t *seed = calloc(f->n_nodes, 1);
	ck_assert_uint_eq(t->max_lid, f->max_lid);
	for (uint32_t lid = 1; lid <= f->max_lid; lid++) {
		uint32_t owner = f->lid_port[lid];
		if (owner == FAB_NONE)
			continue;
		const struct fab_port *op = &f->ports[owner];
		int to_sw = f->nodes[op->node].type == FAB_SWITCH;
		uint32_t attach = to_sw ? op->node : peer_switch(f, owner);
		if (attach == FAB_NONE) {	/* a CA without a cable */
			for (uint32_t r = 0; r < t->n_sw; r++)
				ck_assert_uint_eq(lft_row(t, r)[lid], LFT_DROP);
			continue;
		}
		seed[attach] = 1;
		hops_from(f, seed, dist);
		seed[attach] = 0;
		for (uint32_t r = 0; r < t->n_sw; r++) {
			uint32_t cur = t->sw_node[r], hops = 0;
			int ca_src = has_ca(f, cur) && !(to_sw && c->ca_lids_only);
			int down = 0;
			uint8_t p = lft_row(t, r)[lid];
			if (p == LFT_DROP) {
				if (c->full)
					ck_abort_msg("%s has no entry for LID %u",
						     f->nodes[cur].desc, lid);
				continue;
			}
			for (;;) {
				p = lft_row(t, t->row_of_node[cur])[lid];
				if (p == LFT_DROP || p > f->nodes[cur].nports)
					ck_abort_msg("LID %u from %s: %s has port %u",
						     lid, f->nodes[t->sw_node[r]].desc,
						     f->nodes[cur].desc, p);
				if (p == 0) {
					ck_assert_uint_eq(fabric_port(f, cur, 0), owner);
					break;
				}
				uint32_t pi = fabric_port(f, cur, p);
				uint32_t next = peer_switch(f, pi);
				if (next == FAB_NONE) {
					ck_assert_uint_eq(f->ports[pi].remote, owner);
					break;
				}
				if (ca_src) {
					if (lv[next] == lv[cur] || (down && lv[next] > lv[cur]))
						ck_abort_msg("LID %u from %s: %s -> %s goes "
							     "%s", lid,
							     f->nodes[t->sw_node[r]].desc,
							     f->nodes[cur].desc,
							     f->nodes[next].desc,
							     down ? "up after down" : "sideways");
					down |= lv[next] < lv[cur];
				}
				cur = next;
				if (++hops > t->n_sw)
					ck_abort_msg("LID %u loops", lid);
			}
			if (ca_src && c->minimal && hops != dist[t->sw_node[r]])
				ck_abort_msg("LID %u from %s: %u hops, shortest %u",
					     lid, f->nodes[t->sw_node[r]].desc, hops,
					     dist[t->sw_node[r]]);
			c->routed++;
		}
	}
	free(dist);
	free(seed);
}

/*
 * Traffic to one destination converges, as in OpenSM's ftree: for every
 * host, the routes from all hosts on other leaves enter its leaf over one
 * link, and cross one top switch (names starting with top); the hosts of
 * one leaf (no more than its up links) enter it over different links.
 */
static void check_converge(const struct fabric *f, const struct lft_tables *t,
			   char top)
{
	uint32_t *seen = calloc(f->n_ports, sizeof(*seen));
	uint32_t hosts = 0;
	for (uint32_t d = 0; d < f->n_ports; d++) {
		const struct fab_port *dp = &f->ports[d];
		if (f->nodes[dp->node].type == FAB_SWITCH || !dp->num ||
		    !dp->lid || dp->remote == FAB_NONE)
			continue;
		uint32_t leaf = f->ports[dp->remote].node;
		uint32_t in = FAB_NONE, via_top = FAB_NONE;
		hosts++;
		for (uint32_t s = 0; s < f->n_ports; s++) {
			const struct fab_port *sp = &f->ports[s];
			if (f->nodes[sp->node].type == FAB_SWITCH || !sp->num ||
			    sp->remote == FAB_NONE || f->ports[sp->remote].node == leaf)
				continue;
			uint32_t cur = f->ports[sp->remote].node, last = FAB_NONE;
			uint32_t tops = FAB_NONE;
			while (cur != leaf) {
				uint8_t p = lft_row(t, t->row_of_node[cur])[dp->lid];
				last = fabric_port(f, cur, p);
				cur = peer_switch(f, last);
				ck_assert_uint_ne(cur, FAB_NONE);
				if (f->nodes[cur].desc[0] == top)
					tops = cur;
			}
			if (in == FAB_NONE)
				in = last;
			if (last != in)
				ck_abort_msg("LID %u enters %s over two links", dp->lid,
					     f->nodes[leaf].desc);
			if (tops != FAB_NONE) {
				if (via_top == FAB_NONE)
					via_top = tops;
				if (tops != via_top)
					ck_abort_msg("LID %u crosses %s and %s", dp->lid,
						     f->nodes[via_top].desc,
						     f->nodes[tops].desc);
			}
		}
		ck_assert_uint_ne(in, FAB_NONE);
		ck_assert_uint_ne(via_top, FAB_NONE);
		if (seen[in])
			ck_abort_msg("LID %u enters %s over the link of LID %u",
				     dp->lid, f->nodes[leaf].desc, seen[in]);
		seen[in] = dp->lid;
	}
	ck_assert_uint_gt(hosts, 0);
	free(seen);
}

/* CA-to-CA routes (base LIDs) per directed switch-to-switch link. */
static uint32_t *link_loads(const struct fabric *f, const struct lft_tables *t)
{
	uint32_t *load = calloc(f->n_ports, sizeof(*load));
	for (uint32_t s = 0; s < f->n_ports; s++) {
		const struct fab_port *sp = &f->ports[s];
		if (f->nodes[sp->node].type == FAB_SWITCH || !sp->num ||
		    sp->remote == FAB_NONE)
			continue;
		uint32_t first = f->ports[sp->remote].node;
		for (uint32_t d = 0; d < f->n_ports; d++) {
			const struct fab_port *dp = &f->ports[d];
			if (d == s || f->nodes[dp->node].type == FAB_SWITCH ||
			    !dp->num || !dp->lid)
				continue;
			uint32_t cur = first;
			for (int hops = 0;; hops++) {
				ck_assert_int_lt(hops, 64);
				uint8_t p = lft_row(t, t->row_of_node[cur])[dp->lid];
				uint32_t pi = fabric_port(f, cur, p);
				uint32_t next = peer_switch(f, pi);
				if (next == FAB_NONE)
					break;
				load[pi]++;
				cur = next;
			}
		}
	}
	return load;
}

static void load_range(const struct fabric *f, const uint32_t *load,
		       uint32_t *min, uint32_t *max)
{
	*min = UINT32_MAX;
	*max = 0;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (f->nodes[p->node].type != FAB_SWITCH || !p->num ||
		    peer_switch(f, pi) == FAB_NONE)
			continue;
		if (load[pi] < *min)
			*min = load[pi];
		if (load[pi] > *max)
			*max = load[pi];
	}
}

/* --- tests --- */

START_TEST(t_registered)
{
	ck_assert_str_eq(ftree_engine.name, "ftree");
	ck_assert_ptr_eq(routing_engine_find("ftree"), &ftree_engine);
}
END_TEST

START_TEST(t_two_level)
{
	struct fabric f;
	struct lft_tables t;
	struct tfab *tf = tree2(6, 4, 4, 1);
	build(&f, tf, NULL, 0);
	route(&f, NULL, &t);
	uint32_t *lv = leaf_levels(&f);
	struct chk c = { .full = 1, .minimal = 1 };
	check_routes(&f, &t, lv, &c);
	/* 10 switches, 24 hosts: every switch routes every LID */
	ck_assert_uint_eq(c.routed, 10 * 34);
	/* each leaf sends the 20 remote hosts up its 4 spines, 5 each */
	for (int i = 0; i < 6; i++) {
		char name[16];
		int per[5] = { 0 };
		snprintf(name, sizeof(name), "L%d", i);
		for (int h = 0; h < 24; h++) {
			char hn[16];
			snprintf(hn, sizeof(hn), "H%d", h);
			uint8_t p = entry(&f, &t, name, host_lid(&f, hn));
			if (h / 4 == i)
				ck_assert_uint_eq(p, h % 4 + 1);
			else
				per[p - 5]++;
		}
		for (int j = 0; j < 4; j++)
			if (per[j] < 4 || per[j] > 6)
				ck_abort_msg("%s up port %d carries %d hosts", name,
					     j + 5, per[j]);
	}
	/* a spine reaches a host through the host's leaf */
	ck_assert_uint_eq(entry(&f, &t, "S2", host_lid(&f, "H13")), 4);
	check_converge(&f, &t, 'S');
	uint32_t min, max, *ld = link_loads(&f, &t);
	load_range(&f, ld, &min, &max);
	/* 4 hosts x 20 remote hosts over 4 up links; 20 x 4 back down */
	ck_assert_uint_eq(max, 20);
	ck_assert_uint_eq(min, 20);
	free(ld);
	free(lv);
	free(tf);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

START_TEST(t_three_level)
{
	struct fabric f;
	struct lft_tables t;
	struct tfab *tf = tree3(6);	/* 54 hosts, 45 switches */
	build(&f, tf, NULL, 0);
	route(&f, NULL, &t);
	uint32_t *lv = leaf_levels(&f);
	struct chk c = { .full = 1, .minimal = 1 };
	check_routes(&f, &t, lv, &c);
	ck_assert_uint_eq(c.routed, 45 * (54 + 45));
	check_converge(&f, &t, 'C');
	/*
	 * Every leaf sends 3 x 51 routes up 3 links: 51 is the least the
	 * busiest link can carry; a core link down to a pod carries the 5
	 * other pods' 45 hosts to one host, the lightest.
	 */
	uint32_t min, max, *ld = link_loads(&f, &t);
	load_range(&f, ld, &min, &max);
	ck_assert_uint_eq(max, 51);
	ck_assert_uint_eq(min, 45);
	free(ld);
	free(lv);
	free(tf);
	lft_tables_free(&t);
	fabric_free(&f);

	/* uneven leaves: still shortest, up*-down*, converging */
	tf = tree3(6);
	static const char *const gone[][2] = {
		{ "E0", "H1" }, { "E0", "H2" }, { "E4", "H13" }, { "E10", "H30" },
		{ "E10", "H31" }, { "E10", "H32" }, { "E17", "H52" },
	};
	for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
		tf_unlink(tf, gone[i][0], gone[i][1]);
	build(&f, tf, NULL, 0);
	route(&f, NULL, &t);
	/* E10 has no host left: no CA route may turn there */
	static const char *cores[] = {
		"C0", "C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8",
	};
	lv = root_levels(&f, cores, 9);
	ck_assert_uint_eq(lv[node_named(&f, "E10")], 0);
	struct chk c2 = { .full = 1, .minimal = 1 };
	check_routes(&f, &t, lv, &c2);
	check_converge(&f, &t, 'C');
	free(lv);
	free(tf);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

/* Parallel cables between a leaf and a spine share the load. */
START_TEST(t_parallel)
{
	struct fabric f;
	struct lft_tables t;
	struct tfab *tf = tree2(4, 2, 4, 2);
	build(&f, tf, NULL, 0);
	route(&f, NULL, &t);
	uint32_t *lv = leaf_levels(&f);
	struct chk c = { .full = 1, .minimal = 1 };
	check_routes(&f, &t, lv, &c);
	uint32_t min, max, *ld = link_loads(&f, &t);
	load_range(&f, ld, &min, &max);
	/* 4 hosts x 12 remote hosts over 4 cables up */
	ck_assert_uint_eq(max, 12);
	ck_assert_uint_eq(min, 12);
	free(ld);
	free(lv);
	free(tf);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

START_TEST(t_deterministic)
{
	struct fabric f;
	struct lft_tables a, b;
	struct tfab *tf = tree3(4);
	build(&f, tf, NULL, 0);
	route(&f, NULL, &a);
	route(&f, NULL, &b);
	ck_assert_uint_eq(a.n_sw, b.n_sw);
	ck_assert_mem_eq(a.port, b.port, (size_t)a.n_sw * (a.max_lid + 1));
	free(tf);
	lft_tables_free(&a);
	lft_tables_free(&b);
	fabric_free(&f);
}
END_TEST

/* The same fabric listed in another order: the same entries. */
START_TEST(t_order_independent)
{
	struct tfab *tf = tree3(6);
	int *perm = malloc(tf->nn * sizeof(*perm));
	for (int i = 0; i < tf->nn; i++)
		perm[i] = (int)(((long)i * 37 + 11) % tf->nn);	/* 37 is prime to 99 */
	struct fabric f, g;
	struct lft_tables a, b;
	build(&f, tf, NULL, 0);
	build(&g, tf, perm, 0);
	/* the arrays really are in another order */
	ck_assert_uint_ne(f.nodes[0].guid, g.nodes[0].guid);
	route(&f, NULL, &a);
	route(&g, NULL, &b);
	ck_assert_uint_eq(a.max_lid, b.max_lid);
	uint32_t compared = 0;
	for (uint32_t r = 0; r < a.n_sw; r++) {
		uint64_t guid = f.nodes[a.sw_node[r]].guid;
		uint32_t gr = b.row_of_node[fabric_find_node(&g, guid)];
		for (uint32_t lid = 1; lid <= a.max_lid; lid++, compared++) {
			/* the LIDs name the same ports in both */
			ck_assert_uint_eq(f.ports[f.lid_port[lid]].guid,
					  g.ports[g.lid_port[lid]].guid);
			if (lft_row(&a, r)[lid] != lft_row(&b, gr)[lid])
				ck_abort_msg("switch 0x%llx LID %u: port %u vs %u",
					     (unsigned long long)guid, lid,
					     lft_row(&a, r)[lid], lft_row(&b, gr)[lid]);
		}
	}
	ck_assert_uint_eq(compared, 45 * 99);
	free(perm);
	free(tf);
	lft_tables_free(&a);
	lft_tables_free(&b);
	fabric_free(&f);
	fabric_free(&g);
}
END_TEST

/*
 * One spine-to-leaf cable missing: still routed, every pair, up*-down*.
 * Cut at the last leaf too: that leaf then lacks a route to the spine's
 * own LID, so it cannot be the one empty entries are filled through.
 */
START_TEST(t_degraded_two_level)
{
	static const char *const cut[][2] = { { "L2", "S1" }, { "L5", "S1" } };
	for (int k = 0; k < 2; k++) {
		struct fabric f;
		struct lft_tables t;
		struct tfab *tf = tree2(6, 4, 4, 1);
		tf_unlink(tf, cut[k][0], cut[k][1]);
		build(&f, tf, NULL, 0);
		route(&f, NULL, &t);
		uint32_t *lv = leaf_levels(&f);
		/* from the leaf, S1's own LID has no up*-down* route */
		struct chk c = { .full = 1, .minimal = 1, .ca_lids_only = 1 };
		check_routes(&f, &t, lv, &c);
		ck_assert_uint_eq(c.routed, 10 * 34);
		free(lv);
		free(tf);
		lft_tables_free(&t);
		fabric_free(&f);
	}
}
END_TEST

START_TEST(t_degraded_three_level)
{
	static const char *const cut[][2] = {
		{ "E4", "A3" },		/* leaf to aggregation */
		{ "A7", "C4" },		/* aggregation to core */
	};
	for (int k = 0; k < 2; k++) {
		struct fabric f;
		struct lft_tables t;
		struct tfab *tf = tree3(6);
		tf_unlink(tf, cut[k][0], cut[k][1]);
		build(&f, tf, NULL, 0);
		route(&f, NULL, &t);
		uint32_t *lv = leaf_levels(&f);
		/*
		 * Every switch still has an entry for every LID, but from
		 * a leaf some switch LIDs have no up*-down* route left.
		 */
		struct chk c = { .full = 1, .minimal = 1, .ca_lids_only = 1 };
		check_routes(&f, &t, lv, &c);
		ck_assert_uint_eq(c.routed, 45 * 99);
		free(lv);
		free(tf);
		lft_tables_free(&t);
		fabric_free(&f);
	}
}
END_TEST

/*
 * A CA cabled to a spine: that spine is still a root (ranked from the
 * leaves alone), and the CA's routes are shortest up*-down* ones too.
 */
START_TEST(t_ca_on_spine)
{
	struct fabric f;
	struct lft_tables t;
	struct tfab *tf = tree2(4, 3, 3, 1);
	tf->n[4].nports = 6;	/* S0 */
	ck_assert_str_eq(tf->n[4].name, "S0");
	tf_link(tf, 4, 5, tf_node(tf, 0, 1, 0x90000, "HS", 0), 1);
	build(&f, tf, NULL, 0);
	route(&f, NULL, &t);
	static const char *roots[] = { "S0", "S1", "S2" };
	uint32_t *lv = root_levels(&f, roots, 3);
	/* S0 has no up*-down* route to the other spines' own LIDs */
	struct chk c = { .full = 1, .minimal = 1, .ca_lids_only = 1 };
	check_routes(&f, &t, lv, &c);
	ck_assert_uint_eq(entry(&f, &t, "S0", host_lid(&f, "HS")), 5);
	/* S0 carries its share of leaf-to-leaf traffic: L0 port 4 */
	int via_s0 = 0;
	for (int h = 3; h < 12; h++) {
		char hn[16];
		snprintf(hn, sizeof(hn), "H%d", h);
		via_s0 += entry(&f, &t, "L0", host_lid(&f, hn)) == 4;
	}
	ck_assert_int_eq(via_s0, 3);
	free(lv);
	free(tf);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

/* A small switch with CAs hanging off a leaf is a leaf below that leaf. */
START_TEST(t_switch_below_leaf)
{
	struct fabric f;
	struct lft_tables t;
	struct tfab *tf = tree2(4, 2, 3, 1);
	ck_assert_str_eq(tf->n[0].name, "L0");
	tf->n[0].nports = 6;
	int m = tf_node(tf, 1, 3, 0x900, "M%d", 0);
	tf_link(tf, 0, 6, m, 1);
	tf_link(tf, m, 2, tf_node(tf, 0, 1, 0x90000, "HM%d", 0), 1);
	tf_link(tf, m, 3, tf_node(tf, 0, 1, 0x90004, "HM%d", 1), 1);
	build(&f, tf, NULL, 0);
	route(&f, NULL, &t);
	static const char *roots[] = { "S0", "S1" };
	uint32_t *lv = root_levels(&f, roots, 2);
	struct chk c = { .full = 1, .minimal = 1 };
	check_routes(&f, &t, lv, &c);
	ck_assert_uint_eq(entry(&f, &t, "M0", host_lid(&f, "H5")), 1);
	ck_assert_uint_eq(entry(&f, &t, "L3", host_lid(&f, "HM1")) >= 4, 1);
	free(lv);
	free(tf);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

/* LMC 1: both LIDs of a host routed, over different spines. */
START_TEST(t_lmc)
{
	struct fabric f;
	struct lft_tables t;
	struct tfab *tf = tree2(4, 2, 2, 1);
	build(&f, tf, NULL, 1);
	ck_assert_uint_eq(f.lmc, 1);
	route(&f, NULL, &t);
	uint32_t *lv = leaf_levels(&f);
	struct chk c = { .full = 1, .minimal = 1 };
	check_routes(&f, &t, lv, &c);
	/* 8 hosts x 2 LIDs + 6 switches */
	ck_assert_uint_eq(c.routed, 6 * 22);
	for (int h = 0; h < 8; h++) {
		char hn[16], ln[16];
		snprintf(hn, sizeof(hn), "H%d", h);
		uint32_t lid = host_lid(&f, hn);
		for (int l = 0; l < 4; l++) {
			if (l == h / 2)
				continue;
			snprintf(ln, sizeof(ln), "L%d", l);
			ck_assert_uint_ne(entry(&f, &t, ln, lid),
					  entry(&f, &t, ln, lid + 1));
		}
	}
	free(lv);
	free(tf);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

START_TEST(t_roots_given)
{
	struct fabric f;
	struct lft_tables a, b;
	char err[256] = "";
	struct tfab *tf = tree3(4);
	build(&f, tf, NULL, 0);
	route(&f, NULL, &a);
	/* the cores by name and GUID: the same tables as found alone */
	static const char roots[4][64] = { "C0", "0x3001", "C2", "0X3003" };
	struct route_opts o = { .n_roots = 4, .roots = roots };
	route(&f, &o, &b);
	ck_assert_mem_eq(a.port, b.port, (size_t)a.n_sw * (a.max_lid + 1));
	lft_tables_free(&b);
	static const char bad[1][64] = { "nosuch" };
	struct route_opts ob = { .n_roots = 1, .roots = bad };
	ck_assert_int_eq(try_route(&f, &ob, &b, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "nosuch"));
	free(tf);
	lft_tables_free(&a);
	lft_tables_free(&b);
	fabric_free(&f);
}
END_TEST

START_TEST(t_not_a_tree)
{
	struct fabric f;
	struct lft_tables t;
	char err[256] = "";
	struct tfab *tf = ring(4);
	build(&f, tf, NULL, 0);
	ck_assert_int_eq(try_route(&f, NULL, &t, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not a fat tree"));
	lft_tables_free(&t);
	fabric_free(&f);
	free(tf);

	/* switches without any CA */
	tf = tf_new();
	int a = tf_node(tf, 1, 4, 0x100, "X%d", 0);
	int b = tf_node(tf, 1, 4, 0x200, "X%d", 1);
	tf_link(tf, a, 1, b, 1);
	build(&f, tf, NULL, 0);
	err[0] = '\0';
	ck_assert_int_eq(try_route(&f, NULL, &t, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "no switch has a CA"));
	lft_tables_free(&t);
	fabric_free(&f);
	free(tf);
}
END_TEST

static Suite *ftree_suite(void)
{
	Suite *s = suite_create("ftree");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_registered);
	tcase_add_test(tc, t_two_level);
	tcase_add_test(tc, t_three_level);
	tcase_add_test(tc, t_parallel);
	tcase_add_test(tc, t_deterministic);
	tcase_add_test(tc, t_order_independent);
	tcase_add_test(tc, t_degraded_two_level);
	tcase_add_test(tc, t_degraded_three_level);
	tcase_add_test(tc, t_ca_on_spine);
	tcase_add_test(tc, t_switch_below_leaf);
	tcase_add_test(tc, t_lmc);
	tcase_add_test(tc, t_roots_given);
	tcase_add_test(tc, t_not_a_tree);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ftree_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
