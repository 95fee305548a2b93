/*
 * The SA's MCMemberRecord family (sm/sa/sa_mcmember.c) and the IPoIB
 * broadcast groups (sm/mcast/ipoib.c), on the partition fabric of
 * sa_parttestlib.h: joins, leaves, creates (MGID 0 too), proxy joins,
 * Get/GetTable, and a table of malformed requests each with its status,
 * the group database unchanged after each (run under ASan too).
 */
#include "sa_parttestlib.h"
#include "sm/base/log.h"
#include "sm/mcast/ipoib.h"

#define MCM	52
#define M(b)	((uint64_t)1 << (b))
#define M_MGID	M(0)
#define M_PGID	M(1)
#define M_QKEY	M(2)
#define M_MLID	M(3)
#define M_MTUS	M(4)
#define M_MTU	M(5)
#define M_TCLASS M(6)
#define M_PKEY	M(7)
#define M_RATES	M(8)
#define M_RATE	M(9)
#define M_SL	M(12)
#define M_FLOW	M(13)
#define M_JOIN	M(16)
#define JOIN	(M_MGID | M_PGID | M_JOIN)
#define CREATE	(JOIN | M_QKEY | M_TCLASS | M_PKEY | M_FLOW | M_SL)

#define ST_NONE	0xffff		/* no answer at all */

/* A site-local group (flags 1, scope 5) of tenantA */
static const uint8_t G_A[16] = { 0xff, 0x15, 0x12, 0x34, 0, 0, 0, 0,
				 0, 0, 0, 0, 0, 0, 0, 0xaa };
/* IPv6 all-nodes of tenantA over IPoIB */
static const uint8_t G_V6A[16] = { 0xff, 0x12, 0x60, 0x1b, 0x80, 0x01, 0, 0,
				   0, 0, 0, 0, 0, 0, 0, 1 };
static const uint8_t G_NEW[16] = { 0xff, 0x15, 0x12, 0x34, 0, 0, 0, 0,
				   0, 0, 0, 0, 0, 0, 0, 0xbb };

static uint64_t guid(struct env *e, const char *host)
{
	return fabric_portp(&e->f, node_named(&e->f, host), 1)->guid;
}

/* A join record: mgid, port of host, JoinState js, P_Key, Q_Key. */
static void rec(struct env *e, uint8_t *r, const uint8_t *mgid, const char *host,
		uint8_t js, uint16_t pkey, uint32_t qkey)
{
	memset(r, 0, MCM);
	if (mgid)
		memcpy(r, mgid, 16);
	sa_put64(r + 16, 0xfe80000000000000ull);
	sa_put64(r + 24, host ? guid(e, host) : 0);
	sa_put32(r + 32, qkey);
	sa_put16(r + 40, pkey);
	r[48] = (uint8_t)(0x50 | js);
}

/* The request's status (ST_NONE: none sent), the answer in e->w.mad[0]. */
static unsigned send_key(struct env *e, const char *who, uint8_t method,
			 uint64_t mask, const uint8_t *r, uint64_t key)
{
	uint8_t mad[MAD_SIZE];
	sa_init_request(mad, method, next_tid++, SA_ATTR_MCMEMBER_REC, 0, mask, r, MCM);
	sa_put64(mad + 36, key);
	struct mad_addr from = { .lid = who ? lid(e, who) : 999, .qpn = 1 };
	e->w.n = 0;
	mad_dispatch_input(e->sm->disp, mad, MAD_SIZE, &from, 0);
	return e->w.n ? mad_status(e->w.mad[0]) : ST_NONE;
}

static unsigned ask_mc(struct env *e, const char *who, uint8_t method,
		     uint64_t mask, const uint8_t *r)
{
	return send_key(e, who, method, mask, r, 0);
}

static const uint8_t *answer(struct env *e)
{
	return e->w.mad[0] + SA_HDR_SIZE;
}

/* tenantA's group G_A made by H2 (full), MTU exactly 4, Q_Key 0x11. */
static struct mc_group *make_g_a(struct env *e)
{
	uint8_t r[MCM];
	rec(e, r, G_A, "H2", MC_JOIN_FULL, 0x8001, 0x11);
	r[38] = 0x80 | 4;
	ck_assert_uint_eq(ask_mc(e, "H2", SA_METHOD_SET, CREATE | M_MTUS | M_MTU, r), 0);
	struct mc_group *g = mc_find_mgid(&e->sm->mc, G_A);
	ck_assert_ptr_nonnull(g);
	return g;
}

START_TEST(create_join_leave)
{
	struct env e;
	uint8_t r[MCM];
	env_up(&e, 1);
	struct mc_group *g = make_g_a(&e);
	const uint8_t *a = answer(&e);
	ck_assert_int_eq(memcmp(a, G_A, 16), 0);
	ck_assert_uint_eq(sa_get64(a + 24), guid(&e, "H2"));
	ck_assert_uint_eq(sa_get16(a + 36), 0xc000);
	ck_assert_uint_eq(a[38], 0x80 | 4);		/* exactly 2048 */
	ck_assert_uint_eq(a[42], 0x80 | 7);		/* the port's 40 Gb/s */
	ck_assert_uint_eq(sa_get16(a + 40), 0x8001);
	ck_assert_uint_eq(sa_get32(a + 32), 0x11);
	ck_assert_uint_eq(a[48], 0x50 | MC_JOIN_FULL);	/* scope 5 of the MGID */
	ck_assert_uint_eq(g->mlid, 0xc000);
	/* H4 joins as a non-member with the join components only */
	rec(&e, r, G_A, "H4", MC_JOIN_NON, 0, 0);
	ck_assert_uint_eq(ask_mc(&e, "H4", SA_METHOD_SET, JOIN, r), 0);
	ck_assert_uint_eq(answer(&e)[48] & 0xf, MC_JOIN_NON);
	ck_assert_uint_eq(sa_get32(answer(&e) + 32), 0x11);	/* the group's */
	ck_assert_uint_eq(g->n_members, 2);
	/* and as a full member: the states add up */
	rec(&e, r, G_A, "H4", MC_JOIN_FULL, 0, 0);
	ck_assert_uint_eq(ask_mc(&e, "H4", SA_METHOD_SET, JOIN, r), 0);
	ck_assert_uint_eq(answer(&e)[48] & 0xf, MC_JOIN_FULL | MC_JOIN_NON);
	/* H2 leaves: H4 is still a full member, the group stays */
	rec(&e, r, G_A, "H2", MC_JOIN_FULL, 0, 0);
	ck_assert_uint_eq(ask_mc(&e, "H2", SA_METHOD_DELETE, JOIN, r), 0);
	ck_assert_uint_eq(answer(&e)[48] & 0xf, 0);
	ck_assert_ptr_eq(mc_find_mgid(&e.sm->mc, G_A), g);
	ck_assert_ptr_null(mc_member_of(g, guid(&e, "H2")));
	/* H4 drops its full state: no full member, the group goes */
	rec(&e, r, G_A, "H4", MC_JOIN_FULL, 0, 0);
	ck_assert_uint_eq(ask_mc(&e, "H4", SA_METHOD_DELETE, JOIN, r), 0);
	ck_assert_uint_eq(answer(&e)[48] & 0xf, MC_JOIN_NON);
	ck_assert_ptr_null(mc_find_mgid(&e.sm->mc, G_A));
	ck_assert_uint_eq(e.sm->mc.deleted, 1);
	/* its MLID is free again */
	make_g_a(&e);
	ck_assert_uint_eq(sa_get16(answer(&e) + 36), 0xc000);
	env_down(&e);
}
END_TEST

START_TEST(mgid_zero_is_assigned)
{
	struct env e;
	uint8_t r[MCM], m1[16];
	env_up(&e, 1);
	rec(&e, r, NULL, "H2", MC_JOIN_FULL, 0x8001, 0x22);
	ck_assert_uint_eq(ask_mc(&e, "H2", SA_METHOD_SET, CREATE, r), 0);
	memcpy(m1, answer(&e), 16);
	ck_assert_uint_eq(sa_get32(m1), 0xff12a01b);	/* link-local, SA-assigned */
	ck_assert_uint_eq(sa_get16(answer(&e) + 36), 0xc000);
	ck_assert_ptr_nonnull(mc_find_mgid(&e.sm->mc, m1));
	ck_assert_uint_eq(ask_mc(&e, "H2", SA_METHOD_SET, CREATE, r), 0);
	ck_assert_int_ne(memcmp(m1, answer(&e), 16), 0);
	ck_assert_uint_eq(sa_get16(answer(&e) + 36), 0xc001);
	/* the scope asked for */
	r[48] = 0x80 | MC_JOIN_FULL;
	ck_assert_uint_eq(ask_mc(&e, "H2", SA_METHOD_SET, CREATE | M(15), r), 0);
	ck_assert_uint_eq(sa_get32(answer(&e)), 0xff18a01b);
	ck_assert_uint_eq(e.sm->mc.n, 3);
	env_down(&e);
}
END_TEST

/* Rows of malformed requests against G_A (H2 its full member). */
struct bad {
	const char *name, *who;
	uint8_t method;
	uint64_t mask;
	const uint8_t *mgid;
	const char *port;
	uint8_t js;
	uint16_t pkey;
	uint32_t qkey;
	int tweak;		/* see tweak() */
	unsigned status;
};

enum { T_NONE, T_MTU_EQ5, T_MTU_GT4, T_MTU_BAD, T_RATE_BAD, T_MTU_GT5,
       T_RATE_GT7, T_PREFIX, T_GUID, T_PROXY, T_MGID_FE, T_MGID_A01B_LL,
       T_MGID_FLAGS };

static void tweak(struct env *e, uint8_t *r, int t)
{
	switch (t) {
	case T_MTU_EQ5: r[38] = 0x80 | 5; break;
	case T_MTU_GT4: r[38] = 0x00 | 4; break;
	case T_MTU_BAD: r[38] = 0x80 | 7; break;
	case T_RATE_BAD: r[42] = 0x80 | 0; break;
	case T_MTU_GT5: r[38] = 0x00 | 5; break;
	case T_RATE_GT7: r[42] = 0x00 | 7; break;
	case T_PREFIX: sa_put64(r + 16, 0xfec0000000000000ull); break;
	case T_GUID: sa_put64(r + 24, 0x123456789ull); break;
	case T_PROXY: r[49] = 0x80; break;
	case T_MGID_FE: r[0] = 0xfe; break;
	case T_MGID_A01B_LL: memcpy(r, (uint8_t[]){ 0xff, 0x12, 0xa0, 0x1b }, 4); break;
	case T_MGID_FLAGS: r[1] = 0x35; break;
	}
}

#define REQ	SA_STS_REQ_INVALID
#define INSUF	SA_STS_INSUFFICIENT_COMPONENTS
#define SET	SA_METHOD_SET
#define DEL	SA_METHOD_DELETE
#define FULL	MC_JOIN_FULL

static const struct bad bad_rows[] = {
	{ "no JoinState in the mask", "H4", SET, M_MGID | M_PGID, G_A, "H4", FULL, 0, 0, 0, INSUF },
	{ "no PortGID in the mask", "H4", SET, M_MGID | M_JOIN, G_A, "H4", FULL, 0, 0, 0, INSUF },
	{ "JoinState 0", "H4", SET, JOIN, G_A, "H4", 0, 0, 0, 0, REQ },
	{ "a bit past the record", "H4", SET, JOIN | M(19), G_A, "H4", FULL, 0, 0, 0, REQ },
	{ "create without a full bit", "H4", SET, CREATE, G_NEW, "H4", MC_JOIN_NON, 0x8001, 1, 0, REQ },
	{ "create without Q_Key", "H4", SET, CREATE & ~M_QKEY, G_NEW, "H4", FULL, 0x8001, 1, 0, INSUF },
	{ "create with P_Key 0", "H4", SET, CREATE, G_NEW, "H4", FULL, 0x8000, 1, 0, REQ },
	{ "create in a partition not held", "H4", SET, CREATE, G_NEW, "H4", FULL, 0x8002, 1, 0, REQ },
	{ "create MTU > the port's", "H4", SET, CREATE | M_MTUS | M_MTU, G_NEW, "H4", FULL, 0x8001, 1, T_MTU_GT5, REQ },
	{ "create rate > the port's", "H4", SET, CREATE | M_RATES | M_RATE, G_NEW, "H4", FULL, 0x8001, 1, T_RATE_GT7, REQ },
	{ "create MGID not 0xff", "H4", SET, CREATE, G_NEW, "H4", FULL, 0x8001, 1, T_MGID_FE, REQ },
	{ "create a01b link-local", "H4", SET, CREATE, G_NEW, "H4", FULL, 0x8001, 1, T_MGID_A01B_LL, REQ },
	{ "create reserved flags", "H4", SET, CREATE, G_NEW, "H4", FULL, 0x8001, 1, T_MGID_FLAGS, REQ },
	{ "IPoIB group, no broadcast group", "H2", SET, CREATE, G_V6A, "H2", FULL, 0x8001, 1, 0, REQ },
	{ "Q_Key not the group's", "H4", SET, JOIN | M_QKEY, G_A, "H4", FULL, 0, 0x12, 0, REQ },
	{ "P_Key not the group's", "H4", SET, JOIN | M_PKEY, G_A, "H4", FULL, 0x8002, 0, 0, REQ },
	{ "limited P_Key, full group: joins", "H4", SET, JOIN | M_PKEY, G_A, "H4", FULL, 0x0001, 0, 0, 0 },
	{ "P_Key not held: as an unknown MGID", "H3", SET, JOIN, G_A, "H3", FULL, 0, 0, 0, INSUF },
	{ "P_Key not held, not full: as an unknown MGID", "H3", SET, JOIN, G_A, "H3", MC_JOIN_NON, 0, 0, 0, REQ },
	{ "P_Key not held, a create: the MGID is taken", "H3", SET, CREATE, G_A, "H3", FULL, 0x8002, 1, 0, REQ },
	{ "MTU exactly 4096, group 2048", "H4", SET, JOIN | M_MTUS | M_MTU, G_A, "H4", FULL, 0, 0, T_MTU_EQ5, REQ },
	{ "MTU greater than 2048", "H4", SET, JOIN | M_MTUS | M_MTU, G_A, "H4", FULL, 0, 0, T_MTU_GT4, REQ },
	{ "MTU code 7", "H4", SET, JOIN | M_MTUS | M_MTU, G_A, "H4", FULL, 0, 0, T_MTU_BAD, REQ },
	{ "rate code 0", "H4", SET, JOIN | M_RATES | M_RATE, G_A, "H4", FULL, 0, 0, T_RATE_BAD, REQ },
	{ "PortGID of another subnet", "H4", SET, JOIN, G_A, "H4", FULL, 0, 0, T_PREFIX, SA_STS_INVALID_GID },
	{ "PortGID of no port", "H4", SET, JOIN, G_A, "H4", FULL, 0, 0, T_GUID, REQ },
	{ "join for another port", "H4", SET, JOIN, G_A, "H2", FULL, 0, 0, 0, REQ },
	{ "ProxyJoin, no shared partition", "H6", SET, JOIN, G_A, "H4", FULL, 0, 0, T_PROXY, REQ },
	{ "from a LID no port holds", NULL, SET, JOIN, G_A, "H4", FULL, 0, 0, 0, ST_NONE },
	{ "leave an unknown group", "H2", DEL, JOIN, G_NEW, "H2", FULL, 0, 0, 0, REQ },
	{ "leave a state not held", "H2", DEL, JOIN, G_A, "H2", MC_JOIN_NON, 0, 0, 0, REQ },
	{ "leave more than held", "H2", DEL, JOIN, G_A, "H2", FULL | MC_JOIN_NON, 0, 0, 0, REQ },
	{ "leave for another port", "H4", DEL, JOIN, G_A, "H2", FULL, 0, 0, 0, REQ },
	{ "leave without JoinState", "H2", DEL, M_MGID | M_PGID, G_A, "H2", FULL, 0, 0, 0, INSUF },
	{ "leave of a non-member", "H4", DEL, JOIN, G_A, "H4", FULL, 0, 0, 0, REQ },
	{ "Get of no group", "H2", SA_METHOD_GET, M_MGID, G_NEW, NULL, 0, 0, 0, 0, SA_STS_NO_RECORDS },
	{ "Get with MTU code 0", "H2", SA_METHOD_GET, M_MGID | M_MTUS | M_MTU, G_A, NULL, 0, 0, 0, T_MTU_BAD, REQ },
};

START_TEST(malformed_requests)
{
	struct env e;
	uint8_t r[MCM];
	env_up(&e, 1);
	for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
		const struct bad *b = &bad_rows[i];
		struct mc_group *g = make_g_a(&e);
		uint64_t gen = e.sm->mc.gen;
		rec(&e, r, b->mgid, b->port, b->js, b->pkey, b->qkey);
		tweak(&e, r, b->tweak);
		unsigned st = ask_mc(&e, b->who, b->method, b->mask, r);
		ck_assert_msg(st == b->status, "%s: status 0x%04x, expected 0x%04x",
			      b->name, st, b->status);
		if (b->status) {
			ck_assert_msg(e.sm->mc.gen == gen && e.sm->mc.n == 1 &&
				      g->n_members == 1 && mc_member_of(g, guid(&e, "H2")),
				      "%s: the groups changed", b->name);
		}
		mc_delete(&e.sm->mc, g);
		ck_assert_uint_eq(e.sm->mc.n, 0);
	}
	env_down(&e);
}
END_TEST

/*
 * OpenSM's osmtest "Create given MGID=0 (o15.0.1.4)": MGID 0 with
 * PacketLifeTime "greater than 0".  The group gets an SA-assigned MGID
 * and a lifetime its selector accepts (the subnet's), not 0; each such
 * create a new MGID; another port joins it asking the same; the
 * per-port and MLID bounds apply to these creates too.
 */
START_TEST(mgid_zero_plt_greater)
{
	struct env e;
	uint8_t r[MCM], m1[16];
	const uint64_t plt = M(10) | M(11);	/* PacketLifeTime selector, value */
	env_up(&e, 1);
	e.sm->cfg.mc_max_groups_per_port = 2;
	rec(&e, r, NULL, "H2", FULL, 0x8001, 0x22);
	r[43] = 0;			/* selector 0 (greater than), 0 */
	ck_assert_uint_eq(ask_mc(&e, "H2", SET, CREATE | plt, r), 0);
	memcpy(m1, answer(&e), 16);
	ck_assert_uint_eq(sa_get32(m1), 0xff12a01b);
	ck_assert_uint_eq(answer(&e)[43], 0x80 | e.sm->cfg.subnet_timeout);
	ck_assert_uint_gt(e.sm->cfg.subnet_timeout, 0);
	struct mc_group *g = mc_find_mgid(&e.sm->mc, m1);
	ck_assert_ptr_nonnull(g);
	/* less than: below it; exactly: it; less than 0: none */
	rec(&e, r, NULL, "H4", FULL, 0x8001, 0x22);
	r[43] = 0x40 | 5;
	ck_assert_uint_eq(ask_mc(&e, "H4", SET, CREATE | plt, r), 0);
	ck_assert_uint_eq(answer(&e)[43], 0x80 | 4);
	ck_assert_int_ne(memcmp(m1, answer(&e), 16), 0);
	rec(&e, r, NULL, "H4", FULL, 0x8001, 0x22);
	r[43] = 0x40;
	ck_assert_uint_eq(ask_mc(&e, "H4", SET, CREATE | plt, r), REQ);
	/* H4 joins H2's group asking "greater than 0" */
	rec(&e, r, m1, "H4", MC_JOIN_NON, 0, 0);
	ck_assert_uint_eq(ask_mc(&e, "H4", SET, JOIN | plt, r), 0);
	ck_assert_int_eq(memcmp(answer(&e), m1, 16), 0);
	ck_assert_uint_eq(g->n_members, 2);
	/* a second by H2: another MGID; a third: its bound */
	rec(&e, r, NULL, "H2", FULL, 0x8001, 0x22);
	ck_assert_uint_eq(ask_mc(&e, "H2", SET, CREATE | plt, r), 0);
	ck_assert_int_ne(memcmp(m1, answer(&e), 16), 0);
	ck_assert_uint_eq(sa_get32(answer(&e)), 0xff12a01b);
	ck_assert_uint_eq(ask_mc(&e, "H2", SET, CREATE | plt, r), SA_STS_NO_RESOURCES);
	ck_assert_uint_eq(e.sm->mc.refused_port, 1);
	/* no MLID left: refused, counted */
	memset(e.sm->mc.mlid_used, 0xff, MC_MLIDS / 8 + 1);
	rec(&e, r, NULL, "H4", FULL, 0x8001, 0x22);
	ck_assert_uint_eq(ask_mc(&e, "H4", SET, CREATE | plt, r), SA_STS_NO_RESOURCES);
	ck_assert_uint_eq(e.sm->mc.refused_mlids, 1);
	ck_assert_uint_eq(e.sm->mc.n, 3);
	env_down(&e);
}
END_TEST

START_TEST(no_mlid_left)
{
	struct env e;
	uint8_t r[MCM];
	env_up(&e, 1);
	memset(e.sm->mc.mlid_used, 0xff, MC_MLIDS / 8 + 1);
	rec(&e, r, G_A, "H2", FULL, 0x8001, 1);
	ck_assert_uint_eq(ask_mc(&e, "H2", SET, CREATE, r), SA_STS_NO_RESOURCES);
	ck_assert_uint_eq(e.sm->mc.n, 0);
	env_down(&e);
}
END_TEST

START_TEST(proxy_join)
{
	struct env e;
	uint8_t r[MCM];
	env_up(&e, 1);
	/* tenantB's group by H3; H3 joins H5 (both in B) with ProxyJoin */
	rec(&e, r, G_NEW, "H3", FULL, 0x8002, 7);
	ck_assert_uint_eq(ask_mc(&e, "H3", SET, CREATE, r), 0);
	rec(&e, r, G_NEW, "H5", FULL, 0, 0);
	ck_assert_uint_eq(ask_mc(&e, "H3", SET, JOIN, r), REQ);	/* no bit */
	r[49] = 0x80;
	ck_assert_uint_eq(ask_mc(&e, "H3", SET, JOIN, r), 0);
	ck_assert_uint_eq(answer(&e)[49], 0x80);
	struct mc_group *g = mc_find_mgid(&e.sm->mc, G_NEW);
	ck_assert_uint_eq(mc_member_of(g, guid(&e, "H5"))->proxy, 1);
	/* a proxy member: another port of the partition may leave for it */
	r[49] = 0;
	ck_assert_uint_eq(ask_mc(&e, "H3", DEL, JOIN, r), 0);
	ck_assert_ptr_null(mc_member_of(g, guid(&e, "H5")));
	env_down(&e);
}
END_TEST

/* GetTable records of the last answer (stride 56). */
static int table(struct env *e)
{
	return records(e, 56);
}

START_TEST(get_and_get_table)
{
	struct env e;
	uint8_t r[MCM];
	env_up(&e, 1);
	mcast_ipoib_sync(e.sm, 1);	/* the default partition's group */
	make_g_a(&e);
	rec(&e, r, G_A, "H4", MC_JOIN_NON, 0, 0);
	ck_assert_uint_eq(ask_mc(&e, "H4", SET, JOIN, r), 0);
	/* untrusted, no mask: a record per group whose P_Key one holds */
	memset(r, 0, sizeof(r));
	ck_assert_uint_eq(ask_mc(&e, "H2", SA_METHOD_GET_TABLE, 0, r), 0);
	ck_assert_int_eq(table(&e), 2);
	ck_assert_uint_eq(ask_mc(&e, "H6", SA_METHOD_GET_TABLE, 0, r), 0);
	ck_assert_int_eq(table(&e), 1);		/* the broadcast group only */
	const uint8_t *a = e.w.mad[0] + SA_HDR_SIZE;
	ck_assert_uint_eq(sa_get32(a), 0xff12401b);
	ck_assert_uint_eq(sa_get16(a + 4), 0xffff);
	ck_assert_uint_eq(sa_get32(a + 32), 0x0b1b);
	ck_assert_uint_eq(a[38], 0x80 | 4);
	ck_assert_uint_eq(a[42], 0x80 | 3);
	ck_assert_uint_eq(sa_get16(a + 40), 0xffff);
	/* one member by MGID and PortGID: found, but untrusted it shows no
	   member fields */
	rec(&e, r, G_A, "H4", 0, 0, 0);
	ck_assert_uint_eq(ask_mc(&e, "H4", SA_METHOD_GET, M_MGID | M_PGID, r), 0);
	ck_assert_uint_eq(sa_get64(answer(&e) + 24), 0);
	ck_assert_uint_eq(answer(&e)[48], 0x50);
	rec(&e, r, G_A, "H5", 0, 0, 0);
	ck_assert_uint_eq(ask_mc(&e, "H4", SA_METHOD_GET, M_MGID | M_PGID, r),
			  SA_STS_NO_RECORDS);
	/* trusted (the SM_Key): a record per member, with its JoinState */
	e.sm->cfg.sa_key = 0x1234;
	memset(r, 0, sizeof(r));
	memcpy(r, G_A, 16);
	ck_assert_uint_eq(send_key(&e, "H2", SA_METHOD_GET_TABLE, M_MGID, r, 0x1234), 0);
	ck_assert_int_eq(table(&e), 2);
	a = e.w.mad[0] + SA_HDR_SIZE;
	ck_assert_uint_eq(sa_get64(a + 24), guid(&e, "H2"));
	ck_assert_uint_eq(a[48] & 0xf, FULL);
	ck_assert_uint_eq(sa_get64(a + 56 + 24), guid(&e, "H4"));
	ck_assert_uint_eq(a[56 + 48] & 0xf, MC_JOIN_NON);
	/* ... and by JoinState */
	r[48] = MC_JOIN_NON;
	ck_assert_uint_eq(send_key(&e, "H2", SA_METHOD_GET_TABLE, M_MGID | M_JOIN, r, 0x1234), 0);
	ck_assert_int_eq(table(&e), 1);
	env_down(&e);
}
END_TEST

/* A site-local MGID as G_A's, with another last byte. */
static void site_mgid(uint8_t last, uint8_t *m)
{
	memcpy(m, G_A, 16);
	m[15] = last;
}

/* The status of a request about mgid (and the port of host, or of GUID
   guid when host is NULL); a GetTable's success as 0x10000 + records. */
static unsigned mc_answer(struct env *e, const char *who, uint8_t method,
			  uint64_t mask, const uint8_t *mgid, const char *host,
			  uint64_t guid_, uint8_t js)
{
	uint8_t r[MCM];
	rec(e, r, mgid, host, js, 0, 0);
	if (!host)
		sa_put64(r + 24, guid_);
	unsigned st = ask_mc(e, who, method, mask, r);
	return st || method != SA_METHOD_GET_TABLE ? st : 0x10000 + (unsigned)table(e);
}

/*
 * A host learns nothing of the groups and members of partitions it is
 * not in: a group whose P_Key it does not hold is answered as an MGID
 * no group has, a member it shares no partition with as a port that is
 * no member.
 */
START_TEST(outsider_learns_nothing_of_groups)
{
	struct env e;
	uint8_t r[MCM], g_b[16], g_c[16], g_none[16];
	site_mgid(0xcb, g_b);		/* tenantB's */
	site_mgid(0xcc, g_c);		/* tenantC's */
	site_mgid(0xdd, g_none);	/* no group's */
	env_up(&e, 1);
	rec(&e, r, g_b, "H3", FULL, 0x8002, 7);		/* tenantB's, by H3 */
	ck_assert_uint_eq(ask_mc(&e, "H3", SET, CREATE, r), 0);
	const uint64_t masks[] = { JOIN, JOIN, M_MGID };
	const uint8_t methods[] = { SET, SET, SA_METHOD_GET };
	const uint8_t states[] = { FULL, MC_JOIN_NON, 0 };
	for (int k = 0; k < 3; k++) {
		unsigned b = mc_answer(&e, "H6", methods[k], masks[k], g_b, "H6", 0, states[k]);
		unsigned n = mc_answer(&e, "H6", methods[k], masks[k], g_none, "H6", 0, states[k]);
		ck_assert_msg(b == n && b, "request %d from H6: tenantB's group 0x%04x, none 0x%04x",
			      k, b, n);
	}
	ck_assert_uint_eq(mc_answer(&e, "H6", SA_METHOD_GET_TABLE, M_MGID, g_b, NULL, 0, 0),
			  0x10000);
	/* H2, a limited member of tenantB, joins it */
	ck_assert_uint_eq(mc_answer(&e, "H2", SET, JOIN, g_b, "H2", 0, MC_JOIN_NON), 0);
	ck_assert_ptr_nonnull(mc_find_mgid(&e.sm->mc, g_b));

	/* tenantC's group by the SM's port, H4 in it and H5 by proxy: H4
	   and H5 are both limited members of C and share nothing */
	rec(&e, r, g_c, "H1", FULL, 0x8003, 7);
	ck_assert_uint_eq(ask_mc(&e, "H1", SET, CREATE, r), 0);
	ck_assert_uint_eq(mc_answer(&e, "H4", SET, JOIN, g_c, "H4", 0, FULL), 0);
	rec(&e, r, g_c, "H5", FULL, 0, 0);
	r[49] = 0x80;
	ck_assert_uint_eq(ask_mc(&e, "H1", SET, JOIN, r), 0);
	unsigned h = mc_answer(&e, "H4", SA_METHOD_GET, M_MGID | M_PGID, g_c, "H5", 0, 0);
	unsigned n = mc_answer(&e, "H4", SA_METHOD_GET, M_MGID | M_PGID, g_c, NULL,
			       0x0002c9ffdeadbeefull, 0);
	ck_assert_msg(h == n, "H4 asks for H5 in tenantC's group: 0x%04x, for no port 0x%04x",
		      h, n);
	ck_assert_uint_eq(mc_answer(&e, "H1", SA_METHOD_GET, M_MGID | M_PGID, g_c, "H5", 0, 0), 0);
	/* nor may H4 take H5 out of it, as it could not a non-member */
	rec(&e, r, g_c, "H5", FULL, 0, 0);
	ck_assert_uint_eq(ask_mc(&e, "H4", DEL, JOIN, r), REQ);
	ck_assert_ptr_nonnull(mc_member_of(mc_find_mgid(&e.sm->mc, g_c), guid(&e, "H5")));
	env_down(&e);
}
END_TEST

static void ipoib_policy(struct config *c)
{
	policy(c);
	c->parts[0].ipoib = 1;		/* tenantA */
	c->parts[0].mtu = 5;
	c->parts[1].ipoib = 1;		/* tenantB: multicast.*'s */
	c->mc_qkey = 0x55;
}

START_TEST(ipoib_broadcast_groups)
{
	struct env e;
	uint8_t r[MCM], mg_a[16], mg_d[16];
	env_up(&e, 1);
	ipoib_policy(&e.sm->cfg);
	e.sm->cfg.n_parts = 3;
	mcast_ipoib_sync(e.sm, 1);
	ck_assert_uint_eq(e.sm->mc.n, 3);
	mc_ipoib_mgid(0xffff, mg_d);
	mc_ipoib_mgid(0x8001, mg_a);
	struct mc_group *d = mc_find_mgid(&e.sm->mc, mg_d);
	struct mc_group *a = mc_find_mgid(&e.sm->mc, mg_a);
	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(d->mlid, 0xc000);
	ck_assert_uint_eq(d->qkey, 0x55);
	ck_assert_uint_eq(d->mtu, 4);
	ck_assert_uint_eq(d->rate, 3);
	ck_assert_uint_eq(d->pkey, 0xffff);
	ck_assert_uint_eq(d->well_known, 1);
	ck_assert_uint_eq(a->mtu, 5);
	ck_assert_uint_eq(a->pkey, 0x8001);
	/* the same policy again: nothing changes */
	uint64_t gen = e.sm->mc.gen;
	mcast_ipoib_sync(e.sm, 1);
	ck_assert_uint_eq(e.sm->mc.gen, gen);
	/* hosts join with the IPoIB components; H6 is not in tenantA */
	rec(&e, r, mg_a, "H2", FULL, 0x8001, 0x55);
	ck_assert_uint_eq(ask_mc(&e, "H2", SET, JOIN | M_QKEY | M_PKEY, r), 0);
	ck_assert_uint_eq(sa_get16(answer(&e) + 36), a->mlid);
	rec(&e, r, mg_a, "H6", FULL, 0, 0);
	ck_assert_uint_eq(ask_mc(&e, "H6", SET, JOIN, r), INSUF);	/* no group to H6 */
	rec(&e, r, mg_d, "H6", FULL, 0, 0);
	ck_assert_uint_eq(ask_mc(&e, "H6", SET, JOIN, r), 0);
	/* another IPoIB group of tenantA: with the broadcast group's
	   components only */
	rec(&e, r, G_V6A, "H2", FULL, 0x8001, 0x56);
	ck_assert_uint_eq(ask_mc(&e, "H2", SET, CREATE, r), REQ);
	rec(&e, r, G_V6A, "H2", FULL, 0x8001, 0x55);
	ck_assert_uint_eq(ask_mc(&e, "H2", SET, CREATE, r), 0);
	ck_assert_uint_eq(ask_mc(&e, "H2", DEL, JOIN, r), 0);
	ck_assert_ptr_null(mc_find_mgid(&e.sm->mc, G_V6A));
	rec(&e, r, mg_d, "H6", FULL, 0, 0);
	/* a well-known group stays when its last full member leaves */
	ck_assert_uint_eq(ask_mc(&e, "H6", DEL, JOIN, r), 0);
	ck_assert_ptr_eq(mc_find_mgid(&e.sm->mc, mg_d), d);
	/* the policy drops them: an empty one goes, one with a full member
	   stays (the hosts') until that member leaves */
	e.sm->cfg.mc_default_ipoib = 0;
	e.sm->cfg.parts[0].ipoib = 0;
	mcast_ipoib_sync(e.sm, 1);
	ck_assert_ptr_null(mc_find_mgid(&e.sm->mc, mg_d));
	ck_assert_ptr_eq(mc_find_mgid(&e.sm->mc, mg_a), a);
	ck_assert_uint_eq(a->well_known, 0);
	rec(&e, r, mg_a, "H2", FULL, 0, 0);
	ck_assert_uint_eq(ask_mc(&e, "H2", DEL, JOIN, r), 0);
	ck_assert_ptr_null(mc_find_mgid(&e.sm->mc, mg_a));
	ck_assert_uint_eq(e.sm->mc.n, 1);	/* tenantB's */
	env_down(&e);
}
END_TEST

/*
 * The partitions' own groups (partitions[].mgroups, default_partition.
 * mgroups: partitions.conf's mgid= lines): made at once with their
 * partition's P_Key, IPoIB's Q_Key for an IP group and 0 for another,
 * the scope of their MGID, the partition's SL unless given; joined by
 * the partition's members only; gone with the policy when empty.
 */
START_TEST(partition_mgroups)
{
	static const uint8_t ip4[16] = { 0xff, 0x12, 0x40, 0x1b, 0x80, 0x01, 0, 0,
					 0, 0, 0, 0, 0, 0, 0, 0x16 };
	static const uint8_t other[16] = { 0xff, 0x15, 0, 0, 0, 0, 0, 0,
					   0, 0, 0, 0, 0, 0, 0, 0x01 };
	static const uint8_t def6[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0,
					  0, 0, 0, 0, 0, 0, 0, 0x02 };
	struct env e;
	uint8_t r[MCM];
	env_up(&e, 1);
	struct config *c = &e.sm->cfg;
	c->mc_default_ipoib = 0;
	c->parts[0].sl = 4;			/* tenantA */
	c->parts[0].mg_first = 0;
	c->parts[0].mg_n = 2;
	c->mgroups[0] = (struct cfg_mgroup){ .sl = -1, .qkey = -1 };
	memcpy(c->mgroups[0].mgid, ip4, 16);
	c->mgroups[1] = (struct cfg_mgroup){ .mtu = 2, .sl = 3, .qkey = 0xdead };
	memcpy(c->mgroups[1].mgid, other, 16);
	c->n_mgroups = 2;
	c->def_mgroups[0] = (struct cfg_mgroup){ .rate = 6, .sl = -1, .qkey = -1 };
	memcpy(c->def_mgroups[0].mgid, def6, 16);
	c->n_def_mgroups = 1;
	mcast_ipoib_sync(e.sm, 1);
	ck_assert_uint_eq(e.sm->mc.n, 3);
	struct mc_group *a = mc_find_mgid(&e.sm->mc, ip4);
	struct mc_group *o = mc_find_mgid(&e.sm->mc, other);
	struct mc_group *d = mc_find_mgid(&e.sm->mc, def6);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(o);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(a->pkey, 0x8001);
	ck_assert_uint_eq(a->qkey, c->mc_qkey);
	ck_assert_uint_eq(a->sl, 4);
	ck_assert_uint_eq(a->scope, 2);
	ck_assert_uint_eq(a->well_known, 1);
	ck_assert_uint_eq(o->pkey, 0x8001);
	ck_assert_uint_eq(o->qkey, 0xdead);
	ck_assert_uint_eq(o->mtu, 2);
	ck_assert_uint_eq(o->sl, 3);
	ck_assert_uint_eq(o->scope, 5);
	ck_assert_uint_eq(d->pkey, 0xffff);
	ck_assert_uint_eq(d->qkey, c->mc_qkey);
	ck_assert_uint_eq(d->rate, 6);
	ck_assert_uint_eq(d->sl, c->mc_sl);
	/* tenantA's H2 joins its group; H6, in no tenant with it, cannot */
	rec(&e, r, other, "H2", FULL, 0, 0);
	ck_assert_uint_eq(ask_mc(&e, "H2", SET, JOIN, r), 0);
	rec(&e, r, other, "H6", FULL, 0, 0);
	ck_assert_uint_eq(ask_mc(&e, "H6", SET, JOIN, r), INSUF);
	/* the policy drops them: the empty ones go, H2's stays (the hosts') */
	c->n_mgroups = 0;
	c->parts[0].mg_n = 0;
	c->n_def_mgroups = 0;
	mcast_ipoib_sync(e.sm, 1);
	ck_assert_ptr_null(mc_find_mgid(&e.sm->mc, ip4));
	ck_assert_ptr_null(mc_find_mgid(&e.sm->mc, def6));
	ck_assert_ptr_eq(mc_find_mgid(&e.sm->mc, other), o);
	ck_assert_uint_eq(o->well_known, 0);
	env_down(&e);
}
END_TEST

/* A port gone from the fabric at a publish leaves its groups. */
START_TEST(gone_ports_leave)
{
	struct env e;
	uint8_t r[MCM];
	char err[256];
	struct lft_tables t;
	env_up(&e, 1);
	mcast_ipoib_sync(e.sm, 1);
	make_g_a(&e);
	rec(&e, r, G_A, "H4", MC_JOIN_NON, 0, 0);
	ck_assert_uint_eq(ask_mc(&e, "H4", SET, JOIN, r), 0);
	rec(&e, r, NULL, "H2", FULL, 0, 0);
	mc_ipoib_mgid(0xffff, r);
	ck_assert_uint_eq(ask_mc(&e, "H2", SET, JOIN, r), 0);
	/* nothing gone: nothing changes */
	uint64_t gen = e.sm->mc.gen;
	sa_mcast_prune(e.sm);
	ck_assert_uint_eq(e.sm->mc.gen, gen);
	/* H2 replaced by another host (another GUID) */
	fabric_portp(&e.f, node_named(&e.f, "H2"), 1)->guid = 0x77;
	ck_assert_int_eq(lft_tables_alloc(&t, &e.f), 0);
	ck_assert_int_eq(routing_engine_find("minhop")->route(&e.f, NULL, &t, err,
							       sizeof(err)), 0);
	sa_publish(e.sm, &e.f, &t);
	lft_tables_free(&t);
	sa_mcast_prune(e.sm);
	/* G_A lost its only full member: gone; the broadcast group stays,
	   empty */
	ck_assert_ptr_null(mc_find_mgid(&e.sm->mc, G_A));
	mc_ipoib_mgid(0xffff, r);
	struct mc_group *d = mc_find_mgid(&e.sm->mc, r);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(d->n_members, 0);
	env_down(&e);
}
END_TEST

int main(void)
{
	log_set_level(LOG_ERROR);
	Suite *s = suite_create("mcmember");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, create_join_leave);
	tcase_add_test(tc, mgid_zero_is_assigned);
	tcase_add_test(tc, mgid_zero_plt_greater);
	tcase_add_test(tc, malformed_requests);
	tcase_add_test(tc, no_mlid_left);
	tcase_add_test(tc, proxy_join);
	tcase_add_test(tc, get_and_get_table);
	tcase_add_test(tc, ipoib_broadcast_groups);
	tcase_add_test(tc, partition_mgroups);
	tcase_add_test(tc, gone_ports_leave);
	tcase_add_test(tc, outsider_learns_nothing_of_groups);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
