/*
 * The partition SA tests' fabric and policy (test_sa_part.c,
 * test_mcmember.c): leaves L1 (H1 H2 H3) and L2 (H4 H5 H6) under spines
 * S1, S2; H1 holds the SM (IsSM: a full member of the default
 * partition).
 *   tenantA 0x0001: H2, H4 full
 *   tenantB 0x0002: H3, H5 full, H2 limited (SL 5 from lft part_sl)
 *   tenantC 0x0003: H4, H5 limited (two limited members share nothing
 *                   in it), H1 (the SM) full; the policy's sl 7
 *   H6: in no tenant (a limited member of the default only)
 * Links 4x QDR (rate 7), MTUCap 4096 (5).  The SM has the group
 * database (sm/model/mcgroups.h) and a notifier; requests go in through the
 * receive path from a chosen requester's LID.
 */
#ifndef SA_PARTTESTLIB_H
#define SA_PARTTESTLIB_H

#include "routing_testlib.h"
#include "sa_testlib.h"
#include "sm/mcast/mcast_sm.h"
#include "traps/notify.h"

struct env {
	struct sm *sm;
	struct wire w;
	struct fabric f;
	struct lft_tables t;
	struct tb *b;
	uint64_t key;		/* the SM_Key ask() sends in the SA header */
};

static inline struct tb *fabric_text(void)
{
	struct tb *b = tb_new();
	int l1 = tb_node(b, 1, 5, 0x101, "L1");
	int l2 = tb_node(b, 1, 5, 0x102, "L2");
	int s1 = tb_node(b, 1, 2, 0x201, "S1");
	int s2 = tb_node(b, 1, 2, 0x202, "S2");
	for (int h = 0; h < 6; h++)
		tb_link(b, h < 3 ? l1 : l2, 1 + h % 3,
			tb_node(b, 0, 1, 0x1000 + 0x10 * (uint64_t)h, "H%d", h + 1), 1);
	tb_link(b, l1, 4, s1, 1);
	tb_link(b, l1, 5, s2, 1);
	tb_link(b, l2, 4, s1, 2);
	tb_link(b, l2, 5, s2, 2);
	return b;
}

static inline void member(struct config *c, const char *node, int full)
{
	struct cfg_member *m = &c->members[c->n_members++];
	memset(m, 0, sizeof(*m));
	snprintf(m->node, sizeof(m->node), "%s", node);
	m->full = full;
	c->parts[c->n_parts - 1].n++;
}

static inline void partition(struct config *c, const char *name, uint16_t pkey)
{
	struct cfg_partition *p = &c->parts[c->n_parts++];
	c->default_full = 0;	/* tenants apart: hosts limited in the default */
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->pkey = pkey;
	p->sl = -1;
	p->qkey = -1;
	p->first = c->n_members;
}

static inline void policy(struct config *c)
{
	partition(c, "tenantA", 0x0001);
	member(c, "H2", 1);
	member(c, "H4", 1);
	partition(c, "tenantB", 0x0002);
	member(c, "H3", 1);
	member(c, "H5", 1);
	member(c, "H2", 0);
	partition(c, "tenantC", 0x0003);
	member(c, "H[45]", 0);
	member(c, "H1", 1);
	c->parts[2].sl = 7;	/* the policy's sl: no part_sl for tenantC */
}

/* A test's own keys, after the partitions (NULL: none). */
static void (*env_more)(struct config *);
static int env_tenants;

static inline void env_policy(struct config *c)
{
	if (env_tenants)
		policy(c);
	if (env_more)
		env_more(c);
}

/* tenants: with the policy above, else none (every port a full member) */
static inline void env_up(struct env *e, int tenants)
{
	char err[256] = "";
	memset(e, 0, sizeof(*e));
	e->b = fabric_text();
	tb_build(&e->f, e->b, NULL, 0);
	for (uint32_t i = 0; i < e->f.n_ports; i++) {
		struct fab_port *p = &e->f.ports[i];
		p->mtu_cap = 5;
		p->width_active = TOPO_WIDTH_4X;
		p->speed_active = TOPO_SPEED_QDR;
		p->state = PORT_ACTIVE;
	}
	struct fab_port *sm_port = fabric_portp(&e->f, node_named(&e->f, "H1"), 1);
	sm_port->capmask = 0x0200084a;
	sm_port->flags |= FPORT_ISSM;
	e->f.sm_node = sm_port->node;	/* the SA's own port */
	e->f.sm_port = sm_port->num;
	ck_assert_int_eq(lft_tables_alloc(&e->t, &e->f), 0);
	ck_assert_int_eq(routing_engine_find("minhop")->route(&e->f, NULL, &e->t,
							       err, sizeof(err)), 0);
	/* tenantB's SL (the partition VL assignment's), the others none */
	e->t.n_part_sl = 4;
	e->t.part_sl = malloc(4);
	memcpy(e->t.part_sl, (uint8_t[]){ 0xff, 0xff, 5, 0xff }, 4);
	env_tenants = tenants;
	struct sm *sm = e->sm = sa_test_sm(&e->w, lid_of(&e->f, "H1"), env_policy);
	struct notify_params np = { .max_failures = 3, .min_resp_ms = 100 };
	sm->notify = notifier_new(sm->base, &sm->tr, &np, err, sizeof(err));
	ck_assert_msg(sm->notify, "%s", err);
	ck_assert_int_eq(mc_db_init(&sm->mc), 0);
	sa_publish(sm, &e->f, &e->t);
	ck_assert_ptr_nonnull(sa_get_view(sm));
	ck_assert_ptr_nonnull(sa_get_view(sm)->parts);
	lft_tables_free(&e->t);	/* the SA keeps its own copy, part_sl too */
}

static inline void env_down(struct env *e)
{
	notifier_free(e->sm->notify);
	mcast_sm_free(e->sm);	/* the MFT run a group change scheduled */
	mc_db_free(&e->sm->mc);
	sa_test_sm_free(e->sm);
	fabric_free(&e->f);
	free(e->b);
}

static inline uint32_t lid(struct env *e, const char *name)
{
	return lid_of(&e->f, name);
}

static uint64_t next_tid = 0x5000;

/* A request of len bytes from the LID of node `who`; the answers' count. */
static inline int ask_len(struct env *e, const char *who, uint8_t method, uint16_t attr,
			  uint64_t mask, const uint8_t *rec, size_t rlen, size_t len)
{
	uint8_t mad[MAD_SIZE];
	sa_init_request(mad, method, next_tid++, attr, 0, mask, rec, rlen);
	sa_put64(mad + 36, e->key);
	struct mad_addr from = { .lid = who ? lid(e, who) : 999, .qpn = 1 };
	e->w.n = 0;
	mad_dispatch_input(e->sm->disp, mad, len, &from, 0);
	return e->w.n;
}

/* A request from the LID of node `who`; returns the answers' count. */
static inline int ask(struct env *e, const char *who, uint8_t method, uint16_t attr,
	       uint64_t mask, const uint8_t *rec, size_t rlen)
{
	return ask_len(e, who, method, attr, mask, rec, rlen, MAD_SIZE);
}

/* One case of a malformed-request table: status, or no answer (-1). */
static inline void expect_status(struct env *e, const char *what, int status, int n)
{
	if (status < 0) {
		ck_assert_msg(n == 0, "%s: answered", what);
		return;
	}
	ck_assert_msg(n == 1, "%s: %d answers", what, n);
	ck_assert_msg(mad_status(e->w.mad[0]) == status, "%s: status 0x%04x, not 0x%04x",
		      what, mad_status(e->w.mad[0]), status);
}

/*
 * The records of a GetTable answer, from its first RMPP segment's
 * PayloadLength: 20 bytes of SA header per segment of 200 data bytes.
 */
static inline int records(struct env *e, size_t stride)
{
	ck_assert_int_eq(e->w.n, 1);
	ck_assert_uint_eq(mad_status(e->w.mad[0]), 0);
	uint32_t len = rmpp_len(e->w.mad[0]);
	for (int n = 0; n < 1000; n++) {
		size_t data = (size_t)n * stride;
		if (20 * (data ? (data + 199) / 200 : 1) + data == len)
			return n;
	}
	ck_abort_msg("PayloadLength %u is no count of %zu-byte records", len, stride);
	return -1;
}

#endif
