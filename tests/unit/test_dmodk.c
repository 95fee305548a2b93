/*
 * The dmodk routing engine (routing/dmodk.c) on small fat trees built from
 * net-file text: each entry towards a CA is the one the D-mod-K formula
 * gives (destination index computed here from leaf GUIDs and port ranks,
 * up links from parent GUIDs, whatever the port numbers), the hand-checked
 * example of seed 004 section 2.2, LMC offsets, parallel cables, every
 * switch reaches every LID with an acyclic channel dependency graph, and
 * fabrics that are no fat tree are refused.
 */
#include <check.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engine.h"
#include "sm/fabric.h"
#include "sm/lids.h"
#include "sm/topo.h"

extern const struct routing_engine dmodk_engine;

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

static struct tb *tb_new(void)
{
	struct tb *b = calloc(1, sizeof(*b));
	ck_assert_ptr_nonnull(b);
	return b;
}

static int tb_node(struct tb *b, int sw, int nports, uint64_t guid,
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

static void tb_link(struct tb *b, int x, int px, int y, int py)
{
	ck_assert_int_lt(b->nl, MAXL);
	b->la[b->nl] = x;
	b->pa[b->nl] = px;
	b->lb[b->nl] = y;
	b->pb[b->nl] = py;
	b->nl++;
}

/* Net text, records in the order perm gives (NULL: as added). */
static char *tb_text(const struct tb *b, const int *perm)
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

static void tb_build(struct fabric *f, const struct tb *b, const int *perm,
		     uint8_t lmc)
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
 * XGFT(3; 2,2,4; 1,2,2): 8 leaves L<p><l>, 8 aggregation switches A<p><j>,
 * 4 tops T<j><k>, 16 hosts.
 */
static struct tb *xgft3(void)
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

/* An x by y mesh: M<j*x+i+1>, GUID 0x100 * index, a host on each. */
static struct tb *mesh(int x, int y)
{
	struct tb *b = tb_new();
	for (int k = 1; k <= x * y; k++)
		tb_node(b, 1, 5, 0x100 * (uint64_t)k, "M%d", k);
	for (int k = 1; k <= x * y; k++)
		tb_link(b, k - 1, 5, tb_node(b, 0, 1, 0x1000 * (uint64_t)k, "H%d", k), 1);
	for (int j = 0; j < y; j++)
		for (int i = 0; i < x; i++) {
			if (i + 1 < x)
				tb_link(b, j * x + i, 1, j * x + i + 1, 2);
			if (j + 1 < y)
				tb_link(b, j * x + i, 3, (j + 1) * x + i, 4);
		}
	return b;
}

/* --- routing and checks --- */

static int try_route(const struct fabric *f, struct lft_tables *t, char *err,
		     size_t errlen)
{
	ck_assert_int_eq(lft_tables_alloc(t, f), 0);
	err[0] = '\0';
	return dmodk_engine.route(f, NULL, t, err, errlen);
}

static void route(const struct fabric *f, struct lft_tables *t)
{
	char err[256];
	if (try_route(f, t, err, sizeof(err)) != 0)
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

static uint32_t lid_of(const struct fabric *f, const char *name)
{
	uint32_t n = node_named(f, name);
	uint32_t lid = fabric_portp(f, n, f->nodes[n].type == FAB_SWITCH ? 0 : 1)->lid;
	ck_assert_uint_ne(lid, 0);
	return lid;
}

static uint8_t entry(const struct fabric *f, const struct lft_tables *t,
		     const char *sw, uint32_t lid)
{
	return lft_row(t, t->row_of_node[node_named(f, sw)])[lid];
}

/* The port of switch a cabled to node b. */
static uint8_t port_to(const struct fabric *f, const char *a, const char *b)
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

static uint32_t peer_switch(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	if (p->remote == FAB_NONE || p->phys_state != PHYS_LINKUP ||
	    f->ports[p->remote].phys_state != PHYS_LINKUP)
		return FAB_NONE;
	uint32_t rn = f->ports[p->remote].node;
	return f->nodes[rn].type == FAB_SWITCH ? rn : FAB_NONE;
}

/* Switch hop counts from the nodes in src (UINT32_MAX: unreachable). */
static void hops_from(const struct fabric *f, const uint32_t *src, int nsrc,
		      uint32_t *dist)
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

static uint32_t attach_of(const struct fabric *f, uint32_t lid)
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
static int check_reach(const struct fabric *f, const struct lft_tables *t,
		       int ca_shortest)
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
static int cdg_has_cycle(const struct fabric *f, const struct lft_tables *t)
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

static void free_all(struct fabric *f, struct lft_tables *t, struct tb *b)
{
	lft_tables_free(t);
	fabric_free(f);
	free(b);
}


/*
 * A 2-level tree: 4 leaves, 3 spines, par cables per leaf-spine pair, 2
 * hosts a leaf on ports 1 and 3 * par + 2 (port 3 * par + 3 free).  The
 * GUIDs run against the names (leaf i: 0x100 + 3i mod 4, spine j:
 * 0x202 - j) and leaf i's cables to spine j start at port
 * 2 + ((i + j) mod 3) * par, so neither names nor ports give the order.
 */
static struct tb *tree2(int par)
{
	struct tb *b = tb_new();
	int L[4], S[3];
	for (int i = 0; i < 4; i++)
		L[i] = tb_node(b, 1, 3 * par + 3, 0x100 + (uint64_t)((3 * i) % 4),
			       "L%d", i);
	for (int j = 0; j < 3; j++)
		S[j] = tb_node(b, 1, 4 * par, 0x202 - (uint64_t)j, "S%d", j);
	for (int i = 0; i < 4; i++) {
		tb_link(b, L[i], 1, tb_node(b, 0, 1, 0x1000 + 0x10 * (uint64_t)i,
					     "H%da", i), 1);
		tb_link(b, L[i], 3 * par + 2,
			tb_node(b, 0, 1, 0x2000 + 0x10 * (uint64_t)i, "H%db", i), 1);
		for (int j = 0; j < 3; j++)
			for (int k = 0; k < par; k++)
				tb_link(b, L[i], 2 + ((i + j) % 3) * par + k,
					S[j], i * par + k + 1);
	}
	return b;
}

/* Insertion sort of node indices by GUID. */
static void sort_by_guid(const struct fabric *f, uint32_t *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && f->nodes[v[j - 1]].guid > f->nodes[v[j]].guid; j--) {
			uint32_t x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
}

static int has_ca(const struct fabric *f, uint32_t sw)
{
	for (unsigned p = 1; p <= f->nodes[sw].nports; p++) {
		uint32_t r = fabric_portp(f, sw, p)->remote;
		if (r != FAB_NONE && f->nodes[f->ports[r].node].type != FAB_SWITCH)
			return 1;
	}
	return 0;
}

/* The k-th (from 0) port of switch a cabled to node b. */
static uint8_t kth_port(const struct fabric *f, uint32_t a, uint32_t b, int k)
{
	for (unsigned p = 1; p <= f->nodes[a].nports; p++) {
		uint32_t r = fabric_portp(f, a, p)->remote;
		if (r != FAB_NONE && f->ports[r].node == b && k-- == 0)
			return (uint8_t)p;
	}
	ck_abort_msg("%s: no cable %d to %s", f->nodes[a].desc, k, f->nodes[b].desc);
	return 0;
}

/*
 * Every CA LID's entry on every switch of a 2-level tree against the
 * formula: d = (leaf index by GUID) * 2 + (rank of the host's port on its
 * leaf); a leaf not holding d takes up link u = (d + o) mod (3 par), i.e.
 * spine u / par in GUID order, its (u mod par)-th cable; a spine takes
 * its ((d + o) mod par)-th cable to d's leaf.  Returns entries checked.
 */
static int check_two_level(const struct fabric *f, const struct lft_tables *t,
			   int par)
{
	uint32_t leaves[8], spines[8];
	int nl = 0, ns = 0, checked = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		if (f->nodes[i].type != FAB_SWITCH)
			continue;
		if (has_ca(f, i))
			leaves[nl++] = i;
		else
			spines[ns++] = i;
	}
	ck_assert_int_eq(nl, 4);
	ck_assert_int_eq(ns, 3);
	sort_by_guid(f, leaves, nl);
	sort_by_guid(f, spines, ns);
	for (int li = 0; li < nl; li++) {
		uint32_t x = leaves[li];
		int rank = 0;
		for (unsigned hp = 1; hp <= f->nodes[x].nports; hp++) {
			uint32_t ca = fabric_portp(f, x, hp)->remote;
			if (ca == FAB_NONE || f->nodes[f->ports[ca].node].type == FAB_SWITCH)
				continue;
			uint32_t d = (uint32_t)(li * 2 + rank++);
			for (uint32_t o = 0; o < (1u << f->lmc); o++) {
				uint32_t lid = f->ports[ca].lid + o;
				for (int k = 0; k < nl; k++) {
					uint32_t u = (d + o) % (3u * (uint32_t)par);
					uint8_t want = leaves[k] == x ? (uint8_t)hp :
						kth_port(f, leaves[k], spines[u / (uint32_t)par],
							 (int)(u % (uint32_t)par));
					uint8_t got = lft_row(t, t->row_of_node[leaves[k]])[lid];
					if (got != want)
						ck_abort_msg("d=%u o=%u at %s: port %u, want %u",
							     d, o, f->nodes[leaves[k]].desc, got, want);
					checked++;
				}
				for (int k = 0; k < ns; k++) {
					uint8_t want = kth_port(f, spines[k], x,
								(int)((d + o) % (uint32_t)par));
					ck_assert_uint_eq(lft_row(t, t->row_of_node[spines[k]])[lid],
							  want);
					checked++;
				}
			}
		}
	}
	return checked;
}

/* --- tests --- */

START_TEST(t_engine_registered)
{
	ck_assert_ptr_eq(routing_engine_find("dmodk"), &dmodk_engine);
	ck_assert_str_eq(dmodk_engine.name, "dmodk");
}
END_TEST

START_TEST(t_two_level_formula)
{
	struct fabric f;
	struct lft_tables t;
	struct tb *b = tree2(1);
	tb_build(&f, b, NULL, 0);
	route(&f, &t);
	ck_assert_int_eq(check_two_level(&f, &t, 1), 8 * 7);
	/* by hand: L3 has the second lowest GUID (0x101): H3a is d = 2, up
	 * link 2 mod 3 = 2: S0 (the highest GUID); H1b (L1 = 0x103, d = 7)
	 * leaves L0 for spine 7 mod 3 = 1: S1 */
	ck_assert_uint_eq(entry(&f, &t, "L0", lid_of(&f, "H3a")), port_to(&f, "L0", "S0"));
	ck_assert_uint_eq(entry(&f, &t, "L0", lid_of(&f, "H1b")), port_to(&f, "L0", "S1"));
	ck_assert_int_eq(check_reach(&f, &t, 1), 7 * 15);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	free_all(&f, &t, b);
}
END_TEST

START_TEST(t_parallel_cables)
{
	struct fabric f;
	struct lft_tables t;
	struct tb *b = tree2(2);
	tb_build(&f, b, NULL, 0);
	route(&f, &t);
	ck_assert_int_eq(check_two_level(&f, &t, 2), 8 * 7);
	ck_assert_int_eq(check_reach(&f, &t, 1), 7 * 15);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	free_all(&f, &t, b);
}
END_TEST

/* LID offset o adds o before the mod: offset 0 is plain D-mod-K. */
START_TEST(t_lmc_offsets)
{
	struct fabric f;
	struct lft_tables t;
	struct tb *b = tree2(1);
	tb_build(&f, b, NULL, 1);
	ck_assert_uint_eq(f.lmc, 1);
	route(&f, &t);
	ck_assert_int_eq(check_two_level(&f, &t, 1), 2 * 8 * 7);
	/* the two LIDs of a host leave a remote leaf by different up links */
	uint32_t h = lid_of(&f, "H2b");
	ck_assert_uint_ne(entry(&f, &t, "L0", h), entry(&f, &t, "L0", h + 1));
	/* 7 switch LIDs + 8 hosts x 2 */
	ck_assert_int_eq(check_reach(&f, &t, 1), 7 * 23);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	free_all(&f, &t, b);
}
END_TEST

/*
 * Seed 004 section 2.2's example, XGFT(3;2,2,4;1,2,2): destination d goes
 * up to A(p, j) with j = d mod 2 and on to T(j, k) with k = (d / 2) mod 2,
 * (0,0),(1,0),(0,1),(1,1) repeating; flows 0->4 and 1->6 both leave L00
 * by j = 0.
 */
START_TEST(t_xgft3_example)
{
	struct fabric f;
	struct lft_tables t;
	struct tb *b = xgft3();
	tb_build(&f, b, NULL, 0);
	route(&f, &t);
	int checked = 0;
	for (int d = 0; d < 16; d++) {
		char h[32], nm[32], to[32];
		int p = d / 4, l = (d / 2) % 2, j = d % 2, k = (d / 2) % 2;
		snprintf(h, sizeof(h), "H%d", d);
		uint32_t lid = lid_of(&f, h);
		for (int q = 0; q < 4; q++)
			for (int x = 0; x < 2; x++) {
				snprintf(nm, sizeof(nm), "L%d%d", q, x);
				if (q == p && x == l)
					snprintf(to, sizeof(to), "%s", h);
				else
					snprintf(to, sizeof(to), "A%d%d", q, j);
				ck_assert_uint_eq(entry(&f, &t, nm, lid), port_to(&f, nm, to));
				/* aggregation: down in d's pod, else up to T(x, k) */
				snprintf(nm, sizeof(nm), "A%d%d", q, x);
				if (q == p)
					snprintf(to, sizeof(to), "L%d%d", p, l);
				else
					snprintf(to, sizeof(to), "T%d%d", x, k);
				ck_assert_uint_eq(entry(&f, &t, nm, lid), port_to(&f, nm, to));
				checked += 2;
			}
		for (int x = 0; x < 2; x++)
			for (int y = 0; y < 2; y++) {
				snprintf(nm, sizeof(nm), "T%d%d", x, y);
				snprintf(to, sizeof(to), "A%d%d", p, x);
				ck_assert_uint_eq(entry(&f, &t, nm, lid), port_to(&f, nm, to));
				checked++;
			}
	}
	ck_assert_int_eq(checked, 16 * 20);
	ck_assert_uint_eq(entry(&f, &t, "L00", lid_of(&f, "H4")), port_to(&f, "L00", "A00"));
	ck_assert_uint_eq(entry(&f, &t, "L00", lid_of(&f, "H6")), port_to(&f, "L00", "A00"));
	/* every switch (switch LIDs too), minimal CA routes, no cycle */
	ck_assert_int_eq(check_reach(&f, &t, 1), 20 * 36);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	free_all(&f, &t, b);
}
END_TEST

START_TEST(t_dual_port_ca)
{
	struct fabric f;
	struct lft_tables t;
	struct tb *b = tree2(1);
	int hd = tb_node(b, 0, 2, 0x9000, "HD");
	tb_link(b, hd, 1, 0, 6);	/* L0 */
	tb_link(b, hd, 2, 2, 6);	/* L2 */
	tb_build(&f, b, NULL, 0);
	route(&f, &t);
	ck_assert_int_eq(check_reach(&f, &t, 1), 7 * 17);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	free_all(&f, &t, b);
}
END_TEST

START_TEST(t_refuses_mesh)
{
	struct fabric f;
	struct lft_tables t;
	char err[256];
	struct tb *b = mesh(3, 2);
	tb_build(&f, b, NULL, 0);
	ck_assert_int_eq(try_route(&f, &t, err, sizeof(err)), -1);
	/* M1 and M2 both have a host: a link within level 1 */
	ck_assert_ptr_nonnull(strstr(err, "both at level 1: not a fat tree"));
	free_all(&f, &t, b);
}
END_TEST

/* One leaf-spine cable missing, or one that is not up: refused. */
START_TEST(t_refuses_missing_link)
{
	struct fabric f;
	struct lft_tables t;
	char err[256];
	struct tb *b = tree2(1);
	tb_build(&f, b, NULL, 0);
	struct fab_port *p = fabric_portp(&f, node_named(&f, "L1"),
					  port_to(&f, "L1", "S2"));
	p->phys_state = 2;
	f.ports[p->remote].phys_state = 2;
	ck_assert_int_eq(try_route(&f, &t, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "unequal up links"));
	lft_tables_free(&t);
	fabric_free(&f);
	/* the same with the cable left out of the file */
	for (int i = 0; i < b->nl; i++)
		if (!strcmp(b->name[b->la[i]], "L1") && !strcmp(b->name[b->lb[i]], "S2")) {
			b->la[i] = b->la[b->nl - 1];
			b->pa[i] = b->pa[b->nl - 1];
			b->lb[i] = b->lb[b->nl - 1];
			b->pb[i] = b->pb[b->nl - 1];
			b->nl--;
		}
	tb_build(&f, b, NULL, 0);
	ck_assert_int_eq(try_route(&f, &t, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "unequal up links"));
	free_all(&f, &t, b);
}
END_TEST

/* The same fabric, records in another order: the same entries. */
START_TEST(t_order_independent)
{
	struct tb *b = xgft3();
	int *fwd = malloc(sizeof(int) * (size_t)b->nn);
	int *mix = malloc(sizeof(int) * (size_t)b->nn);
	for (int i = 0; i < b->nn; i++) {
		fwd[i] = i;
		mix[i] = (i * 11 + 3) % b->nn;	/* 11 is prime to 36 */
	}
	ck_assert_int_eq(b->nn, 36);
	struct fabric f, g;
	struct lft_tables x, y;
	tb_build(&f, b, fwd, 0);
	tb_build(&g, b, mix, 0);
	route(&f, &x);
	route(&g, &y);
	ck_assert_uint_eq(x.max_lid, y.max_lid);
	int compared = 0;
	for (uint32_t r = 0; r < x.n_sw; r++) {
		uint64_t guid = f.nodes[x.sw_node[r]].guid;
		uint32_t gr = y.row_of_node[fabric_find_node(&g, guid)];
		for (uint32_t lid = 1; lid <= x.max_lid; lid++, compared++) {
			ck_assert_uint_eq(f.ports[f.lid_port[lid]].guid,
					  g.ports[g.lid_port[lid]].guid);
			if (lft_row(&x, r)[lid] != lft_row(&y, gr)[lid])
				ck_abort_msg("switch 0x%llx LID %u: port %u vs %u",
					     (unsigned long long)guid, lid,
					     lft_row(&x, r)[lid], lft_row(&y, gr)[lid]);
		}
	}
	ck_assert_int_eq(compared, 20 * 36);
	lft_tables_free(&x);
	lft_tables_free(&y);
	fabric_free(&f);
	fabric_free(&g);
	free(fwd);
	free(mix);
	free(b);
}
END_TEST

START_TEST(t_deterministic)
{
	struct fabric f;
	struct lft_tables a, c;
	struct tb *b = xgft3();
	tb_build(&f, b, NULL, 0);
	route(&f, &a);
	route(&f, &c);
	ck_assert_mem_eq(a.port, c.port, (size_t)a.n_sw * (a.max_lid + 1));
	lft_tables_free(&c);
	free_all(&f, &a, b);
}
END_TEST

static Suite *dmodk_suite(void)
{
	Suite *s = suite_create("dmodk");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, t_engine_registered);
	tcase_add_test(tc, t_two_level_formula);
	tcase_add_test(tc, t_parallel_cables);
	tcase_add_test(tc, t_lmc_offsets);
	tcase_add_test(tc, t_xgft3_example);
	tcase_add_test(tc, t_dual_port_ca);
	tcase_add_test(tc, t_refuses_mesh);
	tcase_add_test(tc, t_refuses_missing_link);
	tcase_add_test(tc, t_order_independent);
	tcase_add_test(tc, t_deterministic);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(dmodk_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
