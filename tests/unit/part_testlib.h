/*
 * A two-level fat tree for the partition tests (test_pverify, test_pvl):
 * leaves L0, L1 (ports 1-2 hosts, 3 to S0, 4 to S1), spines S0, S1 (port
 * 1 to L0, 2 to L1), hosts H0, H1 on L0 and H2, H3 on L1; LFTs set by
 * hand; partitions from a config filled in C (the policy's YAML is
 * sm/model/config.c's), resolved by part_resolve().
 */
#ifndef PART_TESTLIB_H
#define PART_TESTLIB_H

#include "routing_testlib.h"
#include "sm/model/config.h"
#include "sm/model/part_resolve.h"

static inline void pt_fabric(struct fabric *f)
{
	struct tb *b = tb_new();
	int L0 = tb_node(b, 1, 4, 0x10, "L0"), L1 = tb_node(b, 1, 4, 0x11, "L1");
	int S0 = tb_node(b, 1, 2, 0x20, "S0"), S1 = tb_node(b, 1, 2, 0x21, "S1");
	for (int h = 0; h < 4; h++) {
		int n = tb_node(b, 0, 1, 0x100 + (uint64_t)h, "H%d", h);
		tb_link(b, n, 1, h < 2 ? L0 : L1, h % 2 + 1);
	}
	tb_link(b, L0, 3, S0, 1);
	tb_link(b, L0, 4, S1, 1);
	tb_link(b, L1, 3, S0, 2);
	tb_link(b, L1, 4, S1, 2);
	tb_build(f, b, NULL, 0);
	free(b);
}

static inline void pt_set(const struct fabric *f, struct lft_tables *t,
			  const char *sw, const char *host, uint8_t port)
{
	uint32_t row = t->row_of_node[node_named(f, sw)];
	lft_row(t, row)[lid_of(f, host)] = port;
}

/*
 * LFTs: hosts down from their leaf and from each spine; a leaf's up
 * port to host k of the other leaf is up[k] (3: S0, 4: S1), for L0
 * towards H2, H3 then L1 towards H0, H1.
 */
static inline void pt_lfts(const struct fabric *f, struct lft_tables *t,
			   const uint8_t up[4])
{
	static const char *const h[4] = { "H0", "H1", "H2", "H3" };
	ck_assert_int_eq(lft_tables_alloc(t, f), 0);
	for (int k = 0; k < 4; k++) {
		pt_set(f, t, k < 2 ? "L0" : "L1", h[k], (uint8_t)(k % 2 + 1));
		pt_set(f, t, k < 2 ? "L1" : "L0", h[k], up[(k + 2) % 4]);
		pt_set(f, t, "S0", h[k], k < 2 ? 1 : 2);
		pt_set(f, t, "S1", h[k], k < 2 ? 1 : 2);
	}
}

/* Two shared up links: every cross-leaf route through S0. */
static const uint8_t PT_SHARED[4] = { 3, 3, 3, 3 };
/* tenantA (H0, H2) on S0, tenantB (H1, H3) on S1. */
static const uint8_t PT_APART[4] = { 3, 4, 3, 4 };

/*
 * Adds partition name with members "Hx" (a leading '-': limited) to c;
 * c from config_defaults().
 */
static inline void pt_part(struct config *c, const char *name, int policy,
			   int sl, const char *const *members)
{
	struct cfg_partition *p = &c->parts[c->n_parts];
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->pkey = (uint16_t)(c->n_parts + 1);
	p->policy = policy;
	p->sl = sl;
	p->first = c->n_members;
	for (; *members; members++) {
		struct cfg_member *m = &c->members[c->n_members++];
		const char *s = *members;
		m->full = s[0] != '-';
		snprintf(m->node, sizeof(m->node), "%s", s + (s[0] == '-'));
		p->n++;
	}
	c->n_parts++;
}

static inline struct config *pt_config(int strict)
{
	struct config *c = calloc(1, sizeof(*c));
	ck_assert_ptr_nonnull(c);
	config_defaults(c);
	c->default_full = 0;	/* tenants apart: hosts limited in the default */
	c->isolation_strict = strict;
	return c;
}

static inline void pt_resolve(const struct config *c, const struct fabric *f,
			      struct part_model *m)
{
	ck_assert_int_eq(part_resolve(c, f, NULL, 0, m), 0);
}

#endif
