/*
 * Helpers shared by the routing engine unit tests: small fabrics described
 * in memory (struct tb) and turned into net-file text, parsed and given
 * LIDs; two stock fabrics (a three-level XGFT and a mesh); look-ups by node
 * description; and the checks every engine's tables must pass (each switch
 * reaches each LID connected to it without loops, and whether the channel
 * dependency graph has a cycle).  Everything is static inline so a test
 * that uses only some of it still builds with -Werror.
 */
#ifndef ROUTING_TESTLIB_H
#define ROUTING_TESTLIB_H

#include <check.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engine.h"
#include "sm/base/fabric.h"
#include "sm/model/lids.h"
#include "sm/base/topo.h"

/* --- fabrics as net text --- */

#define MAXN 160
#define MAXL 640

struct tb {
	int nn, nl;
	char name[MAXN][16];
	int sw[MAXN], nports[MAXN];
	uint64_t guid[MAXN];
	int la[MAXL], pa[MAXL], lb[MAXL], pb[MAXL];
};

static inline struct tb *tb_new(void)
{
	struct tb *b = calloc(1, sizeof(*b));
	ck_assert_ptr_nonnull(b);
	return b;
}

static inline int tb_node(struct tb *b, int sw, int nports, uint64_t guid,
			  const char *fmt, ...)
{
	va_list ap;
	ck_assert_int_lt(b->nn, MAXN);
	va_start(ap, fmt);
	vsnprintf(b->name[b->nn], sizeof(b->name[0]), fmt, ap);
	va_end(ap);
	b->sw[b->nn] = sw;
	b->nports[b->nn] = nports;
	b->guid[b->nn] = guid;
	return b->nn++;
}

static inline void tb_link(struct tb *b, int x, int px, int y, int py)
{
	ck_assert_int_lt(b->nl, MAXL);
	b->la[b->nl] = x;
	b->pa[b->nl] = px;
	b->lb[b->nl] = y;
	b->pb[b->nl] = py;
	b->nl++;
}

/* Net text, records in the order perm gives (NULL: as added). */
static inline char *tb_text(const struct tb *b, const int *perm)
{
	size_t cap = 1 << 20, len = 0;
	char *s = malloc(cap);
	ck_assert_ptr_nonnull(s);
#define PUT(...) do { \
	len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__); \
	ck_assert_uint_lt(len, cap); \
} while (0)
	for (int k = 0; k < b->nn; k++) {
		int i = perm ? perm[k] : k;
		PUT("%s=0x%llx\n", b->sw[i] ? "switchguid" : "caguid",
		    (unsigned long long)b->guid[i]);
		PUT("%s\t%d \"%s\"\n", b->sw[i] ? "Switch" : "Hca", b->nports[i],
		    b->name[i]);
		for (int j = 0; j < b->nl; j++) {
			if (b->la[j] == i)
				PUT("[%d]\t\"%s\"[%d]\n", b->pa[j], b->name[b->lb[j]], b->pb[j]);
			if (b->lb[j] == i)
				PUT("[%d]\t\"%s\"[%d]\n", b->pb[j], b->name[b->la[j]], b->pa[j]);
		}
		PUT("\n");
	}
#undef PUT
	return s;
}

static inline void tb_build(struct fabric *f, const struct tb *b,
			    const int *perm, uint8_t lmc)
{
	char err[256] = "";
	struct lid_report rep;
	char *text = tb_text(b, perm);
	fabric_init(f);
	if (topo_parse_string(f, text, "test.net", err, sizeof(err)) != 0)
		ck_abort_msg("parse: %s\n%s", err, text);
	free(text);
	ck_assert_int_eq(lids_assign(f, NULL, lmc, &rep), 0);
	ck_assert_uint_eq(rep.exhausted, 0);
}

/*
 * b without its links between nodes named x and y (y NULL: every link of
 * x, leaving x isolated); at least one must go.
 */
static inline struct tb *tb_cut(const struct tb *b, const char *x,
				const char *y)
{
	struct tb *c = tb_new();
	*c = *b;
	c->nl = 0;
	for (int j = 0; j < b->nl; j++) {
		const char *a = b->name[b->la[j]], *z = b->name[b->lb[j]];
		int ends_x = !strcmp(a, x) || !strcmp(z, x);
		int ends_y = !y || !strcmp(a, y) || !strcmp(z, y);
		if (ends_x && ends_y)
			continue;
		c->la[c->nl] = b->la[j];
		c->pa[c->nl] = b->pa[j];
		c->lb[c->nl] = b->lb[j];
		c->pb[c->nl] = b->pb[j];
		c->nl++;
	}
	ck_assert_msg(c->nl < b->nl, "no link %s-%s", x, y ? y : "*");
	return c;
}

/* Parses b (records in perm order) and gives it the LIDs in m (if any). */
static inline void tb_build_kept(struct fabric *f, const struct tb *b,
				 const int *perm, const struct guid_map *m)
{
	char err[256] = "";
	struct lid_report rep;
	char *text = tb_text(b, perm);
	fabric_init(f);
	if (topo_parse_string(f, text, "test.net", err, sizeof(err)) != 0)
		ck_abort_msg("parse: %s", err);
	free(text);
	ck_assert_int_eq(lids_assign(f, m, 0, &rep), 0);
}

/* Routes f with engine e into t (allocated here); aborts if it cannot. */
static inline void tb_route(const struct routing_engine *e,
			    const struct fabric *f, struct lft_tables *t)
{
	char err[256] = "";
	struct route_opts o = { 0 };
	ck_assert_int_eq(lft_tables_alloc(t, f), 0);
	if (e->route(f, &o, t, err, sizeof(err)) != 0)
		ck_abort_msg("%s: %s", e->name, err);
}

/*
 * XGFT(3; 2,2,4; 1,2,2): 8 leaves L<p><l>, 8 aggregation switches A<p><j>,
 * 4 tops T<j><k>, 16 hosts.
 */
static inline struct tb *xgft3(void)
{
	struct tb *b = tb_new();
	int L[4][2], A[4][2], T[2][2];
	for (int p = 0; p < 4; p++)
		for (int l = 0; l < 2; l++)
			L[p][l] = tb_node(b, 1, 4, 0x100 + p * 2 + l, "L%d%d", p, l);
	for (int p = 0; p < 4; p++)
		for (int j = 0; j < 2; j++)
			A[p][j] = tb_node(b, 1, 4, 0x200 + p * 2 + j, "A%d%d", p, j);
	for (int j = 0; j < 2; j++)
		for (int k = 0; k < 2; k++)
			T[j][k] = tb_node(b, 1, 4, 0x300 + j * 2 + k, "T%d%d", j, k);
	for (int p = 0; p < 4; p++)
		for (int l = 0; l < 2; l++) {
			for (int h = 0; h < 2; h++) {
				int d = p * 4 + l * 2 + h;
				tb_link(b, L[p][l], h + 1,
					tb_node(b, 0, 1, 0x10000 + 0x10 * d, "H%d", d), 1);
			}
			for (int j = 0; j < 2; j++)
				tb_link(b, L[p][l], 3 + j, A[p][j], 1 + l);
		}
	for (int p = 0; p < 4; p++)
		for (int j = 0; j < 2; j++)
			for (int k = 0; k < 2; k++)
				tb_link(b, A[p][j], 3 + k, T[j][k], 1 + p);
	return b;
}

/*
 * fat2: two levels, leaves L<i> with h hosts H<n> on ports 1..h, spines S<j>
 * on the ports after (leaf i on spine port i + 1).
 */
static inline struct tb *fat2(int leaves, int spines, int hosts)
{
	struct tb *b = tb_new();
	int ln[16], sn[16], nh = 0;
	ck_assert_int_le(leaves, 16);
	ck_assert_int_le(spines, 16);
	for (int i = 0; i < leaves; i++)
		ln[i] = tb_node(b, 1, hosts + spines, 0x100 + (uint64_t)i, "L%d", i);
	for (int j = 0; j < spines; j++)
		sn[j] = tb_node(b, 1, leaves, 0x200 + (uint64_t)j, "S%d", j);
	for (int i = 0; i < leaves; i++) {
		for (int k = 0; k < hosts; k++, nh++)
			tb_link(b, ln[i], k + 1,
				tb_node(b, 0, 1, 0x10000 + 4 * (uint64_t)nh, "H%d", nh), 1);
		for (int j = 0; j < spines; j++)
			tb_link(b, ln[i], hosts + j + 1, sn[j], i + 1);
	}
	return b;
}

/*
 * An x by y mesh: M<j*x+i+1>, GUID 0x100 * index, a host on each, H<index>
 * with GUID host_base + host_step * index.
 */
static inline struct tb *mesh_guids(int x, int y, uint64_t host_base, uint64_t host_step)
{
	struct tb *b = tb_new();
	for (int k = 1; k <= x * y; k++)
		tb_node(b, 1, 5, 0x100 * (uint64_t)k, "M%d", k);
	for (int k = 1; k <= x * y; k++)
		tb_link(b, k - 1, 5, tb_node(b, 0, 1, host_base + host_step * (uint64_t)k,
					     "H%d", k), 1);
	for (int j = 0; j < y; j++)
		for (int i = 0; i < x; i++) {
			if (i + 1 < x)
				tb_link(b, j * x + i, 1, j * x + i + 1, 2);
			if (j + 1 < y)
				tb_link(b, j * x + i, 3, (j + 1) * x + i, 4);
		}
	return b;
}

/* The mesh above, hosts' GUIDs 0x1000 * index (at most 15 switches). */
static inline struct tb *mesh(int x, int y)
{
	return mesh_guids(x, y, 0, 0x1000);
}

/* A ring of n switches R1..Rn (GUID 0x100 * i), a host on each (port 1), ports 2 and 3 around. */
static inline struct tb *ring(int n)
{
	struct tb *b = tb_new();
	for (int i = 1; i <= n; i++)
		tb_node(b, 1, 4, 0x100 * (uint64_t)i, "R%d", i);
	for (int i = 1; i <= n; i++)
		tb_link(b, i - 1, 1, tb_node(b, 0, 1, 0x1000 * (uint64_t)i, "H%d", i), 1);
	for (int i = 0; i < n; i++)
		tb_link(b, i, 2, (i + 1) % n, 3);
	return b;
}

/* An x by y torus: T<index>, ports 1 +x, 2 -x, 3 +y, 4 -y, a host on 5. */
static inline struct tb *torus(int x, int y)
{
	struct tb *b = tb_new();
	for (int k = 0; k < x * y; k++)
		tb_node(b, 1, 5, 0x100 * (uint64_t)(k + 1), "T%d", k);
	for (int k = 0; k < x * y; k++)
		tb_link(b, k, 5, tb_node(b, 0, 1, 0x10000 + 0x10 * (uint64_t)k, "H%d", k), 1);
	for (int j = 0; j < y; j++)
		for (int i = 0; i < x; i++) {
			tb_link(b, j * x + i, 1, j * x + (i + 1) % x, 2);
			tb_link(b, j * x + i, 3, ((j + 1) % y) * x + i, 4);
		}
	return b;
}

/* --- look-ups and checks --- */

static inline uint32_t node_named(const struct fabric *f, const char *name)
{
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (!strcmp(f->nodes[i].desc, name))
			return i;
	ck_abort_msg("no node %s", name);
	return FAB_NONE;
}

static inline uint32_t lid_of(const struct fabric *f, const char *name)
{
	uint32_t n = node_named(f, name);
	uint32_t lid = fabric_portp(f, n, f->nodes[n].type == FAB_SWITCH ? 0 : 1)->lid;
	ck_assert_uint_ne(lid, 0);
	return lid;
}

static inline uint8_t entry(const struct fabric *f,
			    const struct lft_tables *t, const char *sw,
			    uint32_t lid)
{
	return lft_row(t, t->row_of_node[node_named(f, sw)])[lid];
}

/* The port of switch a cabled to node b. */
static inline uint8_t port_to(const struct fabric *f, const char *a,
			      const char *b)
{
	uint32_t na = node_named(f, a), nb = node_named(f, b);
	for (unsigned p = 1; p <= f->nodes[na].nports; p++) {
		uint32_t r = fabric_portp(f, na, p)->remote;
		if (r != FAB_NONE && f->ports[r].node == nb)
			return (uint8_t)p;
	}
	ck_abort_msg("%s is not cabled to %s", a, b);
	return 0;
}

static inline uint32_t peer_switch(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	if (p->remote == FAB_NONE || p->phys_state != PHYS_LINKUP ||
	    f->ports[p->remote].phys_state != PHYS_LINKUP)
		return FAB_NONE;
	uint32_t rn = f->ports[p->remote].node;
	return f->nodes[rn].type == FAB_SWITCH ? rn : FAB_NONE;
}

/* Switch hop counts from the nodes in src (UINT32_MAX: unreachable). */
static inline void hops_from(const struct fabric *f, const uint32_t *src,
			     int nsrc, uint32_t *dist)
{
	uint32_t *q = malloc(f->n_nodes * sizeof(*q));
	uint32_t qh = 0, qt = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++)
		dist[i] = UINT32_MAX;
	for (int i = 0; i < nsrc; i++) {
		dist[src[i]] = 0;
		q[qt++] = src[i];
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

static inline uint32_t attach_of(const struct fabric *f, uint32_t lid)
{
	uint32_t owner = f->lid_port[lid];
	if (owner == FAB_NONE)
		return FAB_NONE;
	if (f->nodes[f->ports[owner].node].type == FAB_SWITCH)
		return f->ports[owner].node;
	return peer_switch(f, owner);
}

/*
 * Every switch reaches every LID connected to it, loop-free, and has
 * LFT_DROP for the others.  With ca_shortest, routes to CA LIDs take the
 * fewest switch hops.  Returns the number of routed entries.
 */
static inline int check_reach(const struct fabric *f,
			      const struct lft_tables *t, int ca_shortest)
{
	int routed = 0;
	uint32_t *dist = malloc(f->n_nodes * sizeof(*dist));
	for (uint32_t lid = 1; lid <= f->max_lid; lid++) {
		uint32_t owner = f->lid_port[lid], attach = attach_of(f, lid);
		if (attach != FAB_NONE)
			hops_from(f, &attach, 1, dist);
		for (uint32_t r = 0; r < t->n_sw; r++) {
			uint32_t cur = t->sw_node[r];
			if (attach == FAB_NONE || dist[cur] == UINT32_MAX) {
				if (lft_row(t, r)[lid] != LFT_DROP)
					ck_abort_msg("LID %u unreachable from %s but routed",
						     lid, f->nodes[cur].desc);
				continue;
			}
			uint32_t hops = 0;
			for (;;) {
				uint8_t p = lft_row(t, t->row_of_node[cur])[lid];
				if (p == LFT_DROP || p > f->nodes[cur].nports)
					ck_abort_msg("LID %u: %s has port %u", lid,
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
				cur = next;
				if (++hops > t->n_sw)
					ck_abort_msg("LID %u loops", lid);
			}
			uint32_t want = dist[t->sw_node[r]];
			if (ca_shortest && f->nodes[f->ports[owner].node].type != FAB_SWITCH &&
			    hops != want)
				ck_abort_msg("LID %u from %s: %u hops, shortest %u", lid,
					     f->nodes[t->sw_node[r]].desc, hops, want);
			routed++;
		}
	}
	free(dist);
	return routed;
}

/*
 * The channel dependency graph of the tables: a channel is a switch port
 * cabled to a switch; a route entering switch n by channel a and leaving it
 * by channel b makes a depend on b.  Returns 1 if it has a cycle.
 */
static inline int cdg_has_cycle(const struct fabric *f,
				const struct lft_tables *t)
{
	uint32_t np = f->n_ports;
	uint8_t *dep = calloc((size_t)np * np, 1);
	uint32_t *indeg = calloc(np, sizeof(*indeg));
	uint32_t *q = malloc(np * sizeof(*q));
	uint8_t *is_ch = calloc(np, 1);
	ck_assert(dep && indeg && q && is_ch);
	for (uint32_t lid = 1; lid <= f->max_lid; lid++)
		for (uint32_t r = 0; r < t->n_sw; r++) {
			uint32_t s = t->sw_node[r];
			uint8_t p = lft_row(t, r)[lid];
			if (p == LFT_DROP || p == 0)
				continue;
			uint32_t a = fabric_port(f, s, p), n = peer_switch(f, a);
			if (n == FAB_NONE)
				continue;
			is_ch[a] = 1;
			uint8_t q2 = lft_row(t, t->row_of_node[n])[lid];
			if (q2 == LFT_DROP || q2 == 0)
				continue;
			uint32_t b = fabric_port(f, n, q2);
			if (peer_switch(f, b) == FAB_NONE)
				continue;
			is_ch[b] = 1;
			if (!dep[(size_t)a * np + b]) {
				dep[(size_t)a * np + b] = 1;
				indeg[b]++;
			}
		}
	/* Kahn: a cycle leaves channels that never reach in-degree 0 */
	uint32_t qh = 0, qt = 0, nch = 0, done = 0;
	for (uint32_t c = 0; c < np; c++) {
		nch += is_ch[c];
		if (is_ch[c] && indeg[c] == 0)
			q[qt++] = c;
	}
	while (qh < qt) {
		uint32_t c = q[qh++];
		done++;
		for (uint32_t d = 0; d < np; d++)
			if (dep[(size_t)c * np + d] && --indeg[d] == 0)
				q[qt++] = d;
	}
	free(dep);
	free(indeg);
	free(q);
	free(is_ch);
	return done != nch;
}

/*
 * Does some switch forward some LID in a loop?  Each switch's entry
 * followed to a CA port, a switch's own LID, a drop or a port without a
 * switch behind it; more hops than switches is a loop.
 */
static inline int lft_has_loop(const struct fabric *f, const struct lft_tables *t)
{
	for (uint32_t lid = 1; lid <= t->max_lid; lid++)
		for (uint32_t r = 0; r < t->n_sw; r++) {
			uint32_t v = r, hops = 0;
			for (; hops <= t->n_sw; hops++) {
				uint8_t p = lft_row(t, v)[lid];
				if (p == LFT_DROP || p == 0 || p > f->nodes[t->sw_node[v]].nports)
					break;
				uint32_t n = peer_switch(f, fabric_port(f, t->sw_node[v], p));
				if (n == FAB_NONE)
					break;
				v = t->row_of_node[n];
			}
			if (hops > t->n_sw)
				return 1;
		}
	return 0;
}

/* The VL a packet of SL sl takes out of port out of node n (entered by in). */
static inline unsigned sl2vl_of(const struct lft_tables *t, uint32_t n, unsigned in,
		      unsigned out, uint8_t sl)
{
	const uint8_t *tab = lft_sl2vl(t, n, in, out);
	ck_assert_ptr_nonnull(tab);
	return tab[sl];
}

/*
 * The channel-dependency graph over (switch-to-switch port, VL) of every
 * CA-to-LID route: 1 if it has a cycle.  *vls: the VLs used (highest + 1).
 */
static inline int vl_cdg_cycle(const struct fabric *f, const struct lft_tables *t,
			unsigned *vls)
{
	uint32_t nch = f->n_ports * 16;
	uint8_t *dep = calloc((size_t)nch * nch, 1);
	uint32_t *indeg = calloc(nch, sizeof(*indeg)), *q = malloc(nch * sizeof(*q));
	uint8_t *used = calloc(nch, 1);
	ck_assert(dep && indeg && q && used);
	*vls = 0;
	for (uint32_t s = 1; s <= f->max_lid; s++) {
		uint32_t sp = f->lid_port[s];
		if (sp == FAB_NONE || f->nodes[f->ports[sp].node].type == FAB_SWITCH)
			continue;
		for (uint32_t d = 1; d <= f->max_lid; d++) {
			if (d == s || f->lid_port[d] == FAB_NONE)
				continue;
			uint8_t sl = lft_sl(t, s, d);
			uint32_t cur = peer_switch(f, sp), prev_ch = FAB_NONE;
			unsigned in = f->ports[f->ports[sp].remote].num;
			for (uint32_t hops = 0; cur != FAB_NONE && hops <= t->n_sw; hops++) {
				uint8_t p = lft_row(t, t->row_of_node[cur])[d];
				ck_assert_uint_ne(p, LFT_DROP);
				uint32_t pi = fabric_port(f, cur, p);
				uint32_t next = p ? peer_switch(f, pi) : FAB_NONE;
				if (next == FAB_NONE)
					break;
				unsigned vl = sl2vl_of(t, cur, in, p, sl);
				ck_assert_uint_lt(vl, 15);
				if (vl + 1 > *vls)
					*vls = vl + 1;
				uint32_t ch = pi * 16 + vl;
				used[ch] = 1;
				if (prev_ch != FAB_NONE && !dep[(size_t)prev_ch * nch + ch]) {
					dep[(size_t)prev_ch * nch + ch] = 1;
					indeg[ch]++;
				}
				prev_ch = ch;
				in = f->ports[f->ports[pi].remote].num;
				cur = next;
			}
		}
	}
	uint32_t qh = 0, qt = 0, n = 0, done = 0;
	for (uint32_t c = 0; c < nch; c++) {
		n += used[c];
		if (used[c] && !indeg[c])
			q[qt++] = c;
	}
	while (qh < qt) {
		uint32_t c = q[qh++];
		done++;
		for (uint32_t e = 0; e < nch; e++)
			if (dep[(size_t)c * nch + e] && --indeg[e] == 0)
				q[qt++] = e;
	}
	free(dep);
	free(indeg);
	free(q);
	free(used);
	return done != n;
}

/* Routes per switch-to-switch port over CA-to-CA pairs: the largest. */
static inline uint32_t max_link_routes(const struct fabric *f, const struct lft_tables *t)
{
	uint32_t *n = calloc(f->n_ports, sizeof(*n)), max = 0;
	ck_assert_ptr_nonnull(n);
	for (uint32_t s = 1; s <= f->max_lid; s++) {
		uint32_t sp = f->lid_port[s];
		if (sp == FAB_NONE || f->nodes[f->ports[sp].node].type == FAB_SWITCH)
			continue;
		for (uint32_t d = 1; d <= f->max_lid; d++) {
			uint32_t dp = f->lid_port[d];
			if (d == s || dp == FAB_NONE || f->nodes[f->ports[dp].node].type == FAB_SWITCH)
				continue;
			uint32_t cur = peer_switch(f, sp);
			for (uint32_t hops = 0; cur != FAB_NONE && hops <= t->n_sw; hops++) {
				uint8_t p = lft_row(t, t->row_of_node[cur])[d];
				uint32_t pi = fabric_port(f, cur, p);
				uint32_t next = peer_switch(f, pi);
				if (next == FAB_NONE)
					break;
				if (++n[pi] > max)
					max = n[pi];
				cur = next;
			}
		}
	}
	free(n);
	return max;
}

static inline void free_all(struct fabric *f, struct lft_tables *t,
			    struct tb *b)
{
	lft_tables_free(t);
	fabric_free(f);
	free(b);
}

/*
 * Two leaves L1, L2 (ports 1-2 hosts, 3-4 up) under two spines S1, S2,
 * hosts H1, H2 on L1 and H3, H4 on L2, host n's GUID 0x1000 + n * step.
 */
static inline struct tb *tb_two_leaves(uint64_t step)
{
	struct tb *b = tb_new();
	int l1 = tb_node(b, 1, 4, 0x101, "L1");
	int l2 = tb_node(b, 1, 4, 0x102, "L2");
	int s1 = tb_node(b, 1, 2, 0x201, "S1");
	int s2 = tb_node(b, 1, 2, 0x202, "S2");
	for (int h = 0; h < 4; h++)
		tb_link(b, h < 2 ? l1 : l2, 1 + h % 2,
			tb_node(b, 0, 1, 0x1000 + step * (uint64_t)h, "H%d", h + 1), 1);
	tb_link(b, l1, 3, s1, 1);
	tb_link(b, l1, 4, s2, 1);
	tb_link(b, l2, 3, s1, 2);
	tb_link(b, l2, 4, s2, 2);
	return b;
}

/*
 * A hypervisor as ibsim models one, cabled to port lport of leaf: a
 * switch "V-<tag>" (port 1 up, port 2 the PF, ports 3.. the VFs), the PF
 * "P-<tag>" with GUID pf_guid, and nvf VFs "F-<tag>-<k>" with GUIDs from
 * vf_guid up, 0x10 apart.  Returns the vSwitch; the model marks it
 * FNODE_VSWITCH only through tb_mark_vswitches() (the policy's part).
 */
static inline int tb_hypervisor(struct tb *b, int leaf, int lport,
				uint64_t vs_guid, uint64_t pf_guid,
				uint64_t vf_guid, int nvf, const char *tag)
{
	int v = tb_node(b, 1, 2 + nvf, vs_guid, "V-%s", tag);
	tb_link(b, leaf, lport, v, 1);
	tb_link(b, v, 2, tb_node(b, 0, 1, pf_guid, "P-%s", tag), 1);
	for (int k = 0; k < nvf; k++)
		tb_link(b, v, 3 + k, tb_node(b, 0, 1, vf_guid + 0x10 * (uint64_t)k,
					     "F-%s-%d", tag, k), 1);
	return v;
}

/* Marks the switches named "V-..." as vSwitches, as sm/model/vswitch.c would. */
static inline unsigned tb_mark_vswitches(struct fabric *f)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (f->nodes[i].type == FAB_SWITCH &&
		    !strncmp(f->nodes[i].desc, "V-", 2)) {
			f->nodes[i].flags |= FNODE_VSWITCH;
			n++;
		}
	return n;
}

/* VF k's CA port on the vSwitch named vs. */
static inline uint32_t vf_port(const struct fabric *f, const char *vs,
			       unsigned k)
{
	uint32_t pi = fabric_vswitch_vf(f, node_named(f, vs), k, NULL);
	ck_assert_uint_ne(pi, FAB_NONE);
	return pi;
}

/* An idle VF under the dynamic scheme: no LID (FPORT_NOLID). */
static inline void vf_drop_lid(struct fabric *f, uint32_t pi)
{
	struct fab_port *p = &f->ports[pi];
	if (p->lid)
		f->lid_port[p->lid] = FAB_NONE;
	p->lid = 0;
	p->flags |= FPORT_NOLID;
}

#endif /* ROUTING_TESTLIB_H */
