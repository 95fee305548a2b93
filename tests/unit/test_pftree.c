/*
 * pftree (routing/engines/pftree.c): the worked examples of the pFTree
 * paper on their fabrics, with the partitions resolved by part_resolve()
 * from a filled struct config: Fig. 4 (two partitions, two disjoint
 * halves), Fig. 12 (pFTree-Wt: the heavy node alone on its link), Figs 5
 * and 6 (pFTree shares, phy-isolation does not), Fig. 3b (full isolation
 * at full balance, where ftree shares), strict failing and best-effort
 * warning on three phy partitions over two roots; every LID routed on
 * every switch, determinism, and ftree's tables exactly without tenants.
 * Route counts are read from the tables: a host's main path is the root
 * another leaf sends its LID to, shared links are found by following the
 * routes between the members of each partition.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engine.h"
#include "sm/model/config.h"
#include "sm/model/part_resolve.h"
#include "routing_testlib.h"

extern const struct routing_engine pftree_engine, ftree_engine;

/*
 * nleaf leaves "L1".. with nh hosts on ports 1..nh and one up link to each
 * of the nroot roots "R1".. (ports nh + 1..); R1 has the highest GUID.
 * Hosts are named by names[] leaf by leaf.
 */
static struct tb *two_level(int nleaf, int nh, int nroot, const char *const *names)
{
	struct tb *b = tb_new();
	int L[8], R[8];
	for (int l = 0; l < nleaf; l++)
		L[l] = tb_node(b, 1, nh + nroot, 0x100 + (uint64_t)l, "L%d", l + 1);
	for (int r = 0; r < nroot; r++)
		R[r] = tb_node(b, 1, nleaf, 0x300 - (uint64_t)r, "R%d", r + 1);
	for (int l = 0; l < nleaf; l++) {
		for (int h = 0; h < nh; h++)
			tb_link(b, L[l], h + 1,
				tb_node(b, 0, 1, 0x1000 + 0x10 * (uint64_t)(l * nh + h),
					"%s", names[l * nh + h]), 1);
		for (int r = 0; r < nroot; r++)
			tb_link(b, L[l], nh + 1 + r, R[r], l + 1);
	}
	return b;
}

static struct config *cfg_new(int strict)
{
	struct config *c = calloc(1, sizeof(*c));
	ck_assert_ptr_nonnull(c);
	config_defaults(c);
	c->isolation_strict = strict;
	return c;
}

/* A partition with the hosts named in the space-separated list. */
static void add_part(struct config *c, const char *name, uint16_t pkey,
		     int policy, const char *hosts)
{
	struct cfg_partition *p = &c->parts[c->n_parts++];
	char buf[256], *save = NULL;
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->pkey = pkey;
	p->policy = policy;
	p->sl = -1;
	p->first = c->n_members;
	snprintf(buf, sizeof(buf), "%s", hosts);
	for (char *h = strtok_r(buf, " ", &save); h; h = strtok_r(NULL, " ", &save)) {
		struct cfg_member *m = &c->members[c->n_members++];
		snprintf(m->node, sizeof(m->node), "%s", h);
		m->full = 1;
		p->n++;
	}
}

static void add_weight(struct config *c, const char *node, uint32_t w)
{
	struct cfg_weight *x = &c->weights[c->n_weights++];
	snprintf(x->node, sizeof(x->node), "%s", node);
	x->weight = w;
}

/* Routes f with pftree and the partitions of c; returns the engine's rc. */
static int route_parts(const struct fabric *f, const struct config *c,
		       struct part_model *m, struct lft_tables *t, char *err,
		       size_t errlen, char *warn, size_t warnlen)
{
	struct route_opts o = { .parts = m, .warn = warn, .warn_len = warnlen };
	ck_assert_int_eq(part_resolve(c, f, NULL, 0, m), 0);
	ck_assert_int_eq(lft_tables_alloc(t, f), 0);
	if (warn)
		warn[0] = '\0';
	return pftree_engine.route(f, &o, t, err, errlen);
}

/* The root host X's main path turns at: where another leaf sends it. */
static uint32_t main_root(const struct fabric *f, const struct lft_tables *t,
			  const char *x)
{
	uint32_t lid = lid_of(f, x), home = attach_of(f, lid);
	for (uint32_t r = 0; r < t->n_sw; r++) {
		uint32_t n = t->sw_node[r];
		if (n == home || f->nodes[n].desc[0] != 'L')
			continue;
		return peer_switch(f, fabric_port(f, n, lft_row(t, r)[lid]));
	}
	ck_abort_msg("no other leaf");
	return FAB_NONE;
}

/* Main paths of the hosts in the list down root -> their leaf. */
static int down_routes(const struct fabric *f, const struct lft_tables *t,
		       const char *root, const char *leaf, const char *const *hosts,
		       int n)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		if (attach_of(f, lid_of(f, hosts[i])) == node_named(f, leaf) &&
		    main_root(f, t, hosts[i]) == node_named(f, root))
			k++;
	return k;
}

/* Every down link of the 2 roots x 2 leaves fabric carries want routes. */
static void each_down_link(const struct fabric *f, const struct lft_tables *t,
			   const char *const *hosts, int n, int want)
{
	static const char *const roots[] = { "R1", "R2" }, *const leaves[] = { "L1", "L2" };
	for (int r = 0; r < 2; r++)
		for (int l = 0; l < 2; l++)
			ck_assert_int_eq(down_routes(f, t, roots[r], leaves[l], hosts, n),
					 want);
}

/*
 * Directed switch-to-switch links that flows of two partitions cross
 * (flows: ordered pairs of members of one tenant partition, one full),
 * down (from a root) and up; with must, only those partition must's flows
 * cross.
 */
static void shared_with(const struct fabric *f, const struct lft_tables *t,
			const struct part_model *m, uint32_t must, int *down,
			int *up)
{
	size_t n = (size_t)f->n_nodes * 64;
	uint64_t *parts = calloc(n, sizeof(*parts));
	*down = *up = 0;
	for (uint32_t q = 1; q < m->n_parts; q++)
		for (uint32_t s = 0; s < m->n_ports; s++)
			for (uint32_t d = 0; d < m->n_ports; d++) {
				int fs = -1, fd = -1;
				for (uint32_t e = m->mem_off[s]; e < m->mem_off[s + 1]; e++)
					if (PART_IDX(m->mem[e]) == q)
						fs = !!(m->mem[e] & PART_FULL);
				for (uint32_t e = m->mem_off[d]; e < m->mem_off[d + 1]; e++)
					if (PART_IDX(m->mem[e]) == q)
						fd = !!(m->mem[e] & PART_FULL);
				if (s == d || fs < 0 || fd < 0 || (!fs && !fd))
					continue;
				uint32_t lid = f->ports[d].lid;
				uint32_t cur = peer_switch(f, s);
				for (int hops = 0; cur != FAB_NONE && hops < 8; hops++) {
					uint8_t p = lft_row(t, t->row_of_node[cur])[lid];
					parts[(size_t)cur * 64 + p] |= 1ull << q;
					cur = peer_switch(f, fabric_port(f, cur, p));
				}
			}
	for (uint32_t i = 0; i < f->n_nodes; i++)
		for (unsigned p = 1; p < 64 && f->nodes[i].type == FAB_SWITCH; p++) {
			uint64_t b = parts[(size_t)i * 64 + p];
			if (!(b & (b - 1)) || (must && !(b >> must & 1)) ||
			    peer_switch(f, fabric_port(f, i, p)) == FAB_NONE)
				continue;
			if (f->nodes[i].desc[0] == 'R' || f->nodes[i].desc[0] == 'T')
				(*down)++;
			else
				(*up)++;
		}
	free(parts);
}

static void shared_links(const struct fabric *f, const struct lft_tables *t,
			 const struct part_model *m, int *down, int *up)
{
	shared_with(f, t, m, 0, down, up);
}

static void done(struct fabric *f, struct lft_tables *t, struct tb *b,
		 struct part_model *m, struct config *c)
{
	part_model_free(m);
	free(c);
	free_all(f, t, b);
}

/* A two-level fabric routed by pftree with the partitions of c. */
struct fx {
	struct tb *b;
	struct fabric f;
	struct lft_tables t;
	struct part_model m;
	struct config *c;
	char err[256], warn[512];
	int down, up;		/* shared links (shared_links()) */
};

static void fx_route(struct fx *x, int nleaf, int nh, const char *const *names,
		     struct config *c)
{
	x->b = two_level(nleaf, nh, 2, names);
	x->c = c;
	tb_build(&x->f, x->b, NULL, 0);
	ck_assert_msg(route_parts(&x->f, c, &x->m, &x->t, x->err, sizeof(x->err),
				  x->warn, sizeof(x->warn)) == 0, "%s", x->err);
	check_reach(&x->f, &x->t, 1);
	ck_assert(!cdg_has_cycle(&x->f, &x->t));
	shared_links(&x->f, &x->t, &x->m, &x->down, &x->up);
}

static void fx_done(struct fx *x)
{
	done(&x->f, &x->t, x->b, &x->m, x->c);
}

static const char *const fig4_hosts[] = { "a", "b", "c", "d", "e", "f", "g", "h" };

/* Fig. 4 fabric with Fig. 4's partitions (all def-isolation). */
static struct config *fig4_cfg(void)
{
	struct config *c = cfg_new(0);
	add_part(c, "P1", 0x0001, PART_DEF, "a d g h");
	add_part(c, "P2", 0x0002, PART_DEF, "b c e f");
	return c;
}

START_TEST(t_registered)
{
	ck_assert_ptr_eq(routing_engine_find("pftree"), &pftree_engine);
	ck_assert_int_eq(pftree_engine.deadlock_free, ftree_engine.deadlock_free);
	ck_assert_str_eq(pftree_engine.topologies, "fat trees");
}
END_TEST

START_TEST(t_fig4)
{
	struct fx x;
	fx_route(&x, 2, 4, fig4_hosts, fig4_cfg());
	struct fabric *f = &x.f;
	/* P1 all via one root, P2 all via the other; a first: R1 (GUID) */
	uint32_t r1 = main_root(f, &x.t, "a"), r2 = main_root(f, &x.t, "b");
	ck_assert_uint_eq(r1, node_named(f, "R1"));
	ck_assert_uint_eq(r2, node_named(f, "R2"));
	for (const char *const *h = (const char *const[]){ "d", "g", "h", NULL }; *h; h++)
		ck_assert_uint_eq(main_root(f, &x.t, *h), r1);
	for (const char *const *h = (const char *const[]){ "c", "e", "f", NULL }; *h; h++)
		ck_assert_uint_eq(main_root(f, &x.t, *h), r2);
	/* every down link exactly 2 routes, no link shared */
	each_down_link(f, &x.t, fig4_hosts, 8, 2);
	ck_assert_int_eq(x.down, 0);
	ck_assert_int_eq(x.up, 0);
	fx_done(&x);
}
END_TEST

START_TEST(t_fig12_weights)
{
	struct fx x;
	struct config *c = fig4_cfg();
	add_weight(c, "a", 100);
	fx_route(&x, 2, 4, fig4_hosts, c);
	struct fabric *f = &x.f;
	ck_assert(x.m.weighted);
	uint32_t ra = main_root(f, &x.t, "a");
	const char *ran = f->nodes[ra].desc, *other = strcmp(ran, "R1") ? "R1" : "R2";
	/* L1: a alone on its root's link, b, c, d on the other */
	ck_assert_int_eq(down_routes(f, &x.t, ran, "L1", fig4_hosts, 8), 1);
	ck_assert_int_eq(down_routes(f, &x.t, other, "L1", fig4_hosts, 8), 3);
	/* L2: P1 and P2 on separate roots, two each */
	ck_assert_uint_eq(main_root(f, &x.t, "g"), main_root(f, &x.t, "h"));
	ck_assert_uint_eq(main_root(f, &x.t, "e"), main_root(f, &x.t, "f"));
	ck_assert_uint_ne(main_root(f, &x.t, "e"), main_root(f, &x.t, "g"));
	/* exactly one shared down link: b, c (P2) with d (P1) */
	ck_assert_int_eq(x.down, 1);
	printf("fig12: shared down links %d, up links %d\n", x.down, x.up);
	fx_done(&x);
}
END_TEST

static const char *const fig5_hosts[] = { "A", "B", "C", "D", "E", "F", "G", "H", "I" };

static struct config *fig5_cfg(int p1_policy, int strict)
{
	struct config *c = cfg_new(strict);
	add_part(c, "P1", 0x0001, p1_policy, "A E");
	add_part(c, "P2", 0x0002, PART_DEF, "B F H I");
	add_part(c, "P3", 0x0003, PART_DEF, "C D G");
	return c;
}

/* Fig. 5: plain pFTree makes A share R->L1 with C and E R->L2 with F. */
START_TEST(t_fig5_shares)
{
	struct fx x;
	fx_route(&x, 3, 3, fig5_hosts, fig5_cfg(PART_DEF, 0));
	ck_assert_uint_eq(main_root(&x.f, &x.t, "A"), main_root(&x.f, &x.t, "C"));
	ck_assert_uint_eq(main_root(&x.f, &x.t, "E"), main_root(&x.f, &x.t, "F"));
	ck_assert_int_gt(x.down, 0);
	printf("fig5: shared down links %d, up links %d\n", x.down, x.up);
	fx_done(&x);
}
END_TEST

/* Fig. 6: P1 phy-isolation takes a root of its own; strict holds. */
START_TEST(t_fig6_phy)
{
	struct fx x, y;
	fx_route(&x, 3, 3, fig5_hosts, fig5_cfg(PART_PHY, 1));
	struct fabric *f = &x.f;
	ck_assert_str_eq(x.warn, "");
	uint32_t own = main_root(f, &x.t, "A");
	ck_assert_uint_eq(main_root(f, &x.t, "E"), own);
	for (int i = 0; i < 9; i++)
		if (strcmp(fig5_hosts[i], "A") && strcmp(fig5_hosts[i], "E"))
			ck_assert_uint_ne(main_root(f, &x.t, fig5_hosts[i]), own);
	const char *pr = f->nodes[own].desc, *rest = strcmp(pr, "R1") ? "R1" : "R2";
	ck_assert_int_eq(down_routes(f, &x.t, rest, "L3", fig5_hosts, 9), 3);
	ck_assert_int_eq(down_routes(f, &x.t, pr, "L3", fig5_hosts, 9), 0);
	/* P2 and P3 share the other root's links */
	ck_assert_int_gt(x.down, 0);
	printf("fig6: %s->L3 3 routes, %s->L3 0; shared down %d up %d\n", rest,
	       pr, x.down, x.up);
	fx_done(&x);
	/* with P2 and P3 one partition: nothing shares at all */
	struct config *c1 = cfg_new(1);
	add_part(c1, "P1", 0x0001, PART_PHY, "A E");
	add_part(c1, "P2", 0x0002, PART_DEF, "B F H I C D G");
	fx_route(&y, 3, 3, fig5_hosts, c1);
	ck_assert_int_eq(y.down + y.up, 0);
	fx_done(&y);
}
END_TEST

/* Fig. 3b: each leaf P1 P1 P2 P2: pftree isolates at n/u per link. */
START_TEST(t_fig3b_isolation)
{
	static const char *const h[] = { "a", "b", "c", "d", "e", "f", "g", "h" };
	struct fx x;
	struct config *c = cfg_new(0);
	add_part(c, "P1", 0x0011, PART_DEF, "a b e f");
	add_part(c, "P2", 0x0012, PART_DEF, "c d g h");
	fx_route(&x, 2, 4, h, c);
	ck_assert_int_eq(x.down + x.up, 0);
	each_down_link(&x.f, &x.t, h, 8, 4 / 2);
	/* ftree, oblivious, puts a and b on different roots: shared links */
	struct lft_tables t2;
	int down, up;
	tb_route(&ftree_engine, &x.f, &t2);
	shared_links(&x.f, &t2, &x.m, &down, &up);
	ck_assert_int_gt(down, 0);
	printf("fig3b: pftree shares 0 links, ftree %d down %d up\n", down, up);
	lft_tables_free(&t2);
	fx_done(&x);
}
END_TEST

/*
 * Routes b with the partitions add() makes, strict then best-effort:
 * strict fails with want in its error, best-effort routes every LID and
 * warns with want (the warnings left in warn).
 */
static void strict_then_best_effort(struct tb *b, void (*add)(struct config *),
				    const char *want, char *warn, size_t len)
{
	struct fabric f;
	struct lft_tables t;
	struct part_model m;
	char err[256] = "";

	tb_build(&f, b, NULL, 0);
	for (int strict = 1; strict >= 0; strict--) {
		struct config *c = cfg_new(strict);
		add(c);
		int rc = route_parts(&f, c, &m, &t, err, sizeof(err), warn, len);
		if (strict) {
			ck_assert_int_eq(rc, -1);
			ck_assert_msg(strstr(err, want), "%s", err);
		} else {
			ck_assert_msg(rc == 0, "%s", err);
			ck_assert_msg(strstr(warn, want), "%s", warn);
			check_reach(&f, &t, 1);
		}
		part_model_free(&m);
		lft_tables_free(&t);
		free(c);
	}
	fabric_free(&f);
	free(b);
}

static void three_phy(struct config *c)
{
	add_part(c, "X", 0x0021, PART_PHY, "x1 x2");
	add_part(c, "Y", 0x0022, PART_PHY, "y1 y2");
	add_part(c, "Z", 0x0023, PART_PHY, "z1 z2");
}

/* Three phy partitions on every leaf, two roots: cannot be met. */
START_TEST(t_strict_fails)
{
	static const char *const h[] = { "x1", "y1", "z1", "x2", "y2", "z2" };
	char warn[512];

	strict_then_best_effort(two_level(2, 3, 2, h), three_phy,
				"partition Z (pkey 0x0023): phy-isolation cannot "
				"be satisfied: every up link of L1", warn, sizeof(warn));
	/* warned once for Z */
	ck_assert_ptr_null(strstr(strstr(warn, "partition Z") + 1, "partition Z"));
	printf("best-effort: %s\n", warn);
}
END_TEST

static void two_phy_one_def(struct config *c)
{
	add_part(c, "X", 0x0021, PART_PHY, "x1 x2");
	add_part(c, "Y", 0x0022, PART_PHY, "y1 y2");
	add_part(c, "D", 0x0024, PART_DEF, "z1 z2");
}

/* Two phy partitions take both roots: the def one must break one. */
START_TEST(t_def_breaks_phy)
{
	static const char *const h[] = { "x1", "y1", "z1", "x2", "y2", "z2" };
	char warn[512];

	strict_then_best_effort(two_level(2, 3, 2, h), two_phy_one_def,
				"partition X (pkey 0x0021): phy-isolation cannot "
				"be satisfied: partition D must go up from L1",
				warn, sizeof(warn));
}
END_TEST

static void phy_and_def(struct config *c)
{
	add_part(c, "P1", 0x0001, PART_PHY, "A E");
	add_part(c, "P2", 0x0002, PART_DEF, "A B F H I");
}

/*
 * The check on the tables: A is in phy P1 and in def P2, so P2's flows
 * to A take P1's links although every choice was P1's own.
 */
START_TEST(t_check_on_tables)
{
	char warn[512];
	strict_then_best_effort(two_level(3, 3, 2, fig5_hosts), phy_and_def,
				"partition P1 (pkey 0x0001): phy-isolation cannot "
				"be satisfied: partition P2 shares the link from",
				warn, sizeof(warn));
}
END_TEST

/*
 * A partition whose members all hang off one leaf (phy, strict) claims
 * nothing: its ports route exactly as ports in no partition.
 */
START_TEST(t_single_leaf)
{
	struct tb *b = two_level(2, 4, 2, fig4_hosts);
	struct fabric f;
	struct lft_tables t, t2;
	struct part_model m, m2;
	struct config *c = cfg_new(1), *c2 = cfg_new(1);
	char err[256] = "", warn[256];

	add_part(c, "P1", 0x0001, PART_DEF, "d g h");
	add_part(c, "P2", 0x0002, PART_DEF, "c e f");
	add_part(c2, "P1", 0x0001, PART_DEF, "d g h");
	add_part(c2, "P2", 0x0002, PART_DEF, "c e f");
	add_part(c2, "local", 0x0031, PART_PHY, "a b");
	tb_build(&f, b, NULL, 0);
	ck_assert_int_eq(route_parts(&f, c, &m, &t, err, sizeof(err), NULL, 0), 0);
	ck_assert_msg(route_parts(&f, c2, &m2, &t2, err, sizeof(err), warn,
				  sizeof(warn)) == 0, "%s", err);
	ck_assert_str_eq(warn, "");
	ck_assert_int_eq(memcmp(t.port, t2.port, (size_t)t.n_sw * (t.max_lid + 1)), 0);
	part_model_free(&m2);
	lft_tables_free(&t2);
	free(c2);
	done(&f, &t, b, &m, c);
}
END_TEST

/*
 * 3 levels, partitions and weights: complete, acyclic, deterministic
 * (tables and warnings); the engine's check of the phy partition agrees
 * with the links this test finds shared with it.
 */
START_TEST(t_xgft3_deterministic)
{
	struct tb *b = xgft3();
	struct fabric f;
	struct lft_tables t, t2;
	struct part_model m, m2;
	struct config *c = cfg_new(0);
	char err[256] = "", warn[512], warn2[512];
	int down, up;

	add_part(c, "even", 0x0041, PART_PHY, "H0 H2 H4 H6 H8 H10");
	add_part(c, "odd", 0x0042, PART_VLANE, "H1 H3 H5 H7 H9");
	add_part(c, "rest", 0x0043, PART_DEF, "H11 H12 H13 H14");
	add_weight(c, "H3", 50);
	tb_build(&f, b, NULL, 0);
	ck_assert_msg(route_parts(&f, c, &m, &t, err, sizeof(err), warn,
				  sizeof(warn)) == 0, "%s", err);
	ck_assert_msg(route_parts(&f, c, &m2, &t2, err, sizeof(err), warn2,
				  sizeof(warn2)) == 0, "%s", err);
	ck_assert_int_eq(check_reach(&f, &t, 1), (int)(t.n_sw * f.n_nodes));
	ck_assert(!cdg_has_cycle(&f, &t));
	ck_assert_int_eq(memcmp(t.port, t2.port, (size_t)t.n_sw * (t.max_lid + 1)), 0);
	ck_assert_str_eq(warn, warn2);
	shared_with(&f, &t, &m, 1, &down, &up);
	ck_assert_int_eq(strstr(warn, "partition even") != NULL, down + up > 0);
	printf("xgft3: links the phy partition shares %d; %s\n", down + up,
	       warn[0] ? warn : "no warning");
	part_model_free(&m2);
	lft_tables_free(&t2);
	done(&f, &t, b, &m, c);
}
END_TEST

/* No tenant partitions (none given, or none resolved): ftree's tables. */
START_TEST(t_ftree_without_partitions)
{
	static const char *const h[] = { "a", "b", "c", "d", "e", "f", "g", "h", "i" };
	struct tb *fabs[] = { xgft3(), tb_two_leaves(1), two_level(3, 3, 2, h) };
	for (int k = 0; k < 3; k++) {
		for (uint8_t lmc = 0; lmc <= 1; lmc++) {
			struct fabric f;
			struct lft_tables t, t2, t3;
			struct part_model m;
			struct config *c = cfg_new(1);
			char err[256] = "";
			tb_build(&f, fabs[k], NULL, lmc);
			tb_route(&ftree_engine, &f, &t);
			tb_route(&pftree_engine, &f, &t2);	/* parts NULL */
			ck_assert_int_eq(route_parts(&f, c, &m, &t3, err, sizeof(err),
						     NULL, 0), 0);
			size_t n = (size_t)t.n_sw * (t.max_lid + 1);
			ck_assert_int_eq(memcmp(t.port, t2.port, n), 0);
			ck_assert_int_eq(memcmp(t.port, t3.port, n), 0);
			part_model_free(&m);
			free(c);
			lft_tables_free(&t2);
			lft_tables_free(&t3);
			lft_tables_free(&t);
			fabric_free(&f);
		}
		free(fabs[k]);
	}
}
END_TEST

static Suite *pftree_suite(void)
{
	Suite *s = suite_create("pftree");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_registered);
	tcase_add_test(tc, t_fig4);
	tcase_add_test(tc, t_fig12_weights);
	tcase_add_test(tc, t_fig5_shares);
	tcase_add_test(tc, t_fig6_phy);
	tcase_add_test(tc, t_fig3b_isolation);
	tcase_add_test(tc, t_strict_fails);
	tcase_add_test(tc, t_def_breaks_phy);
	tcase_add_test(tc, t_check_on_tables);
	tcase_add_test(tc, t_single_leaf);
	tcase_add_test(tc, t_xgft3_deterministic);
	tcase_add_test(tc, t_ftree_without_partitions);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(pftree_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
