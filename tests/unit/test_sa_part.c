/*
 * The SA within partitions (sm/sa.c, sa_path.c, sa_node.c; issue 16):
 * the policy's partitions filled into the config as helper A's parser
 * will, resolved by sa_publish() against the SA's own copy, and requests
 * sent in through the receive path from a chosen requester's LID.
 *
 * Fabric: leaves L1 (H1 H2 H3) and L2 (H4 H5 H6) under spines S1, S2;
 * H1 holds the SM (IsSM: a full member of the default partition).
 *   tenantA 0x0001: H2, H4 full
 *   tenantB 0x0002: H3, H5 full, H2 limited (SL 5 from lft part_sl)
 *   tenantC 0x0003: H4, H5 limited (two limited members share nothing
 *                   in it), H1 (the SM) full; the policy's sl 7
 *   H6: in no tenant (a limited member of the default only)
 */
#include "routing_testlib.h"
#include "sa_testlib.h"
#include "sm/log.h"
#include "traps/notify.h"
#include "traps/repath.h"

struct env {
	struct sm *sm;
	struct wire w;
	struct fabric f;
	struct lft_tables t;
	struct tb *b;
};

static struct tb *fabric_text(void)
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

static void member(struct config *c, const char *node, int full)
{
	struct cfg_member *m = &c->members[c->n_members++];
	memset(m, 0, sizeof(*m));
	snprintf(m->node, sizeof(m->node), "%s", node);
	m->full = full;
	c->parts[c->n_parts - 1].n++;
}

static void partition(struct config *c, const char *name, uint16_t pkey)
{
	struct cfg_partition *p = &c->parts[c->n_parts++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->pkey = pkey;
	p->sl = -1;
	p->first = c->n_members;
}

static void policy(struct config *c)
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

/* tenants: with the policy above, else none (every port a full member) */
static void env_up(struct env *e, int tenants)
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
	ck_assert_int_eq(lft_tables_alloc(&e->t, &e->f), 0);
	ck_assert_int_eq(routing_engine_find("minhop")->route(&e->f, NULL, &e->t,
							       err, sizeof(err)), 0);
	/* tenantB's SL (the partition VL assignment's), the others none */
	e->t.n_part_sl = 4;
	e->t.part_sl = malloc(4);
	memcpy(e->t.part_sl, (uint8_t[]){ 0xff, 0xff, 5, 0xff }, 4);
	struct sm *sm = e->sm = sa_test_sm(&e->w, lid_of(&e->f, "H1"),
					   tenants ? policy : NULL);
	struct notify_params np = { .max_failures = 3, .min_resp_ms = 100 };
	sm->notify = notifier_new(sm->base, &sm->tr, &np, err, sizeof(err));
	ck_assert_msg(sm->notify, "%s", err);
	sa_publish(sm, &e->f, &e->t);
	ck_assert_ptr_nonnull(sa_get_view(sm));
	ck_assert_ptr_nonnull(sa_get_view(sm)->parts);
	lft_tables_free(&e->t);	/* the SA keeps its own copy, part_sl too */
}

static void env_down(struct env *e)
{
	notifier_free(e->sm->notify);
	sa_test_sm_free(e->sm);
	fabric_free(&e->f);
	free(e->b);
}

static uint32_t lid(struct env *e, const char *name)
{
	return lid_of(&e->f, name);
}

static uint64_t next_tid = 0x5000;

/* A request from the LID of node `who`; returns the answers' count. */
static int ask(struct env *e, const char *who, uint8_t method, uint16_t attr,
	       uint64_t mask, const uint8_t *rec, size_t rlen)
{
	uint8_t mad[MAD_SIZE];
	sa_init_request(mad, method, next_tid++, attr, 0, mask, rec, rlen);
	struct mad_addr from = { .lid = who ? lid(e, who) : 999, .qpn = 1 };
	e->w.n = 0;
	mad_dispatch_input(e->sm->disp, mad, MAD_SIZE, &from, 0);
	return e->w.n;
}

/*
 * The records of a GetTable answer, from its first RMPP segment's
 * PayloadLength: 20 bytes of SA header per segment of 200 data bytes.
 */
static int records(struct env *e, size_t stride)
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

#define PR_MASK_DLID	(1ull << 4)
#define PR_MASK_SLID	(1ull << 5)
#define PR_MASK_PKEY	(1ull << 13)
#define PR_MASK_SL	(1ull << 15)

/*
 * PathRecords from s to d as `who` asks them (GetTable by SLID and DLID,
 * plus the extra mask bits and fields pkey / sl): the records' count;
 * the first record's P_Key and SL in *pkey, *sl.
 */
static int paths(struct env *e, const char *who, const char *s, const char *d,
		 uint64_t extra, uint16_t want_pkey, uint8_t want_sl,
		 uint16_t *pkey, uint8_t *sl)
{
	uint8_t rec[64] = { 0 };
	sa_put16(rec + 40, (uint16_t)lid(e, d));
	sa_put16(rec + 42, (uint16_t)lid(e, s));
	sa_put16(rec + 50, want_pkey);
	sa_put16(rec + 52, want_sl);
	ck_assert_int_eq(ask(e, who, SA_METHOD_GET_TABLE, SA_ATTR_PATH_REC,
			     PR_MASK_DLID | PR_MASK_SLID | extra, rec, sizeof(rec)), 1);
	int n = records(e, 64);
	if (n) {
		*pkey = sa_get16(e->w.mad[0] + 56 + 50);
		*sl = e->w.mad[0][56 + 53] & 0xf;
	}
	return n;
}

START_TEST(path_partitions)
{
	struct env e;
	uint16_t pk = 0;
	uint8_t sl = 0;
	env_up(&e, 1);
	/* tenantA, both full: the tenant's P_Key with the full bit, the
	   routing's SL (0: no QoS) */
	ck_assert_int_eq(paths(&e, "H2", "H2", "H4", 0, 0, 0, &pk, &sl), 1);
	ck_assert_uint_eq(pk, 0x8001);
	ck_assert_uint_eq(sl, 0);
	/* tenantB: the source's entry (H2 limited, H3 full), SL 5 */
	ck_assert_int_eq(paths(&e, "H2", "H2", "H3", 0, 0, 0, &pk, &sl), 1);
	ck_assert_uint_eq(pk, 0x0002);
	ck_assert_uint_eq(sl, 5);
	ck_assert_int_eq(paths(&e, "H2", "H3", "H2", 0, 0, 0, &pk, &sl), 1);
	ck_assert_uint_eq(pk, 0x8002);
	/* tenants apart (H4 A and C limited, H5 B and C limited): none */
	ck_assert_int_eq(paths(&e, "H4", "H4", "H5", 0, 0, 0, &pk, &sl), 0);
	/* a host in no tenant: no host but itself... not even itself
	   (limited at 0x7FFF), as OpenSM; the SM's port: the default */
	ck_assert_int_eq(paths(&e, "H6", "H6", "H2", 0, 0, 0, &pk, &sl), 0);
	ck_assert_int_eq(paths(&e, "H6", "H6", "H6", 0, 0, 0, &pk, &sl), 0);
	ck_assert_int_eq(paths(&e, "H6", "H6", "H1", 0, 0, 0, &pk, &sl), 1);
	ck_assert_uint_eq(pk, 0x7fff);
	ck_assert_int_eq(paths(&e, "H6", "H1", "H6", 0, 0, 0, &pk, &sl), 1);
	ck_assert_uint_eq(pk, 0xffff);
	/* H4 and the SM share tenantC and the default: the tenant, SL the
	   policy's (no part_sl), the source's entry */
	ck_assert_int_eq(paths(&e, "H4", "H4", "H1", 0, 0, 0, &pk, &sl), 1);
	ck_assert_uint_eq(pk, 0x0003);
	ck_assert_uint_eq(sl, 7);
	ck_assert_int_eq(paths(&e, "H4", "H1", "H4", 0, 0, 0, &pk, &sl), 1);
	ck_assert_uint_eq(pk, 0x8003);
	ck_assert_int_eq(paths(&e, "H4", "H4", "H1", PR_MASK_PKEY, 0x7fff, 0, &pk, &sl), 1);
	ck_assert_uint_eq(pk, 0x7fff);
	ck_assert_uint_eq(sl, 0);
	/* a P_Key asked for: that partition only, answered as asked */
	ck_assert_int_eq(paths(&e, "H2", "H2", "H4", PR_MASK_PKEY, 0x0001, 0, &pk, &sl), 1);
	ck_assert_uint_eq(pk, 0x0001);
	ck_assert_int_eq(paths(&e, "H2", "H2", "H4", PR_MASK_PKEY, 0x8001, 0, &pk, &sl), 1);
	ck_assert_uint_eq(pk, 0x8001);
	ck_assert_int_eq(paths(&e, "H2", "H2", "H4", PR_MASK_PKEY, 0x8002, 0, &pk, &sl), 0);
	ck_assert_int_eq(paths(&e, "H2", "H2", "H4", PR_MASK_PKEY, 0xffff, 0, &pk, &sl), 0);
	ck_assert_int_eq(paths(&e, "H2", "H2", "H1", PR_MASK_PKEY, 0xffff, 0, &pk, &sl), 1);
	ck_assert_uint_eq(pk, 0xffff);
	/* an SL asked for must be the partition's */
	ck_assert_int_eq(paths(&e, "H2", "H2", "H3", PR_MASK_SL, 0, 5, &pk, &sl), 1);
	ck_assert_int_eq(paths(&e, "H2", "H2", "H3", PR_MASK_SL, 0, 0, &pk, &sl), 0);
	/* the requester must share with both ends: H6 does not with H2 */
	ck_assert_int_eq(paths(&e, "H6", "H2", "H4", 0, 0, 0, &pk, &sl), 0);
	ck_assert_int_eq(paths(&e, "H1", "H2", "H4", 0, 0, 0, &pk, &sl), 1);
	ck_assert_int_eq(paths(&e, "H5", "H2", "H3", 0, 0, 0, &pk, &sl), 1);
	/* a Get of a pair that shares none: NO_RECORDS */
	uint8_t rec[64] = { 0 };
	sa_put16(rec + 40, (uint16_t)lid(&e, "H5"));
	sa_put16(rec + 42, (uint16_t)lid(&e, "H4"));
	ck_assert_int_eq(ask(&e, "H4", SA_METHOD_GET, SA_ATTR_PATH_REC,
			     PR_MASK_DLID | PR_MASK_SLID, rec, sizeof(rec)), 1);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_NO_RECORDS);
	/* every path from H2 (SLID only): to H1, H2 (itself, full in A),
	   H3, H4, H5 (tenantB, H5 full) and the 4 switches; not H6 */
	memset(rec, 0, sizeof(rec));
	sa_put16(rec + 42, (uint16_t)lid(&e, "H2"));
	ck_assert_int_eq(ask(&e, "H2", SA_METHOD_GET_TABLE, SA_ATTR_PATH_REC,
			     PR_MASK_SLID, rec, sizeof(rec)), 1);
	ck_assert_int_eq(records(&e, 64), 9);
	env_down(&e);
}
END_TEST

START_TEST(path_no_tenants)
{
	struct env e;
	uint16_t pk = 0;
	uint8_t sl = 0;
	env_up(&e, 0);
	/* everyone a full default member, as before issue 16 */
	ck_assert_int_eq(paths(&e, "H6", "H4", "H5", 0, 0, 0, &pk, &sl), 1);
	ck_assert_uint_eq(pk, 0xffff);
	ck_assert_uint_eq(sl, 0);	/* part_sl[0] unset: the routing's */
	ck_assert_int_eq(paths(&e, "H6", "H4", "H5", PR_MASK_PKEY, 0x7fff, 0, &pk, &sl), 1);
	ck_assert_uint_eq(pk, 0x7fff);
	ck_assert_int_eq(paths(&e, "H6", "H4", "H5", PR_MASK_PKEY, 0x8001, 0, &pk, &sl), 0);
	/* a LID no port holds: answered all the same (no partitions) */
	uint8_t rec[8] = { 0 };
	ck_assert_int_eq(ask(&e, NULL, SA_METHOD_GET_TABLE, SA_ATTR_NODE_REC, 0,
			     rec, sizeof(rec)), 1);
	ck_assert_int_eq(records(&e, 112), 10);
	env_down(&e);
}
END_TEST

/* NodeRecords `who` gets in a GetTable of all: the count; *has_h6 set
   when a Get of H6's by LID finds it. */
static int node_recs(struct env *e, const char *who, int *has_h6)
{
	uint8_t rec[8] = { 0 };
	sa_put16(rec, (uint16_t)lid(e, "H6"));
	ck_assert_int_eq(ask(e, who, SA_METHOD_GET, SA_ATTR_NODE_REC, 1,
			     rec, sizeof(rec)), 1);
	*has_h6 = mad_status(e->w.mad[0]) == 0;
	memset(rec, 0, sizeof(rec));
	ck_assert_int_eq(ask(e, who, SA_METHOD_GET_TABLE, SA_ATTR_NODE_REC, 0,
			     rec, sizeof(rec)), 1);
	return records(e, 112);
}

START_TEST(node_port_link_within_partitions)
{
	struct env e;
	int h6;
	env_up(&e, 1);
	/* H2 (A full, B limited) sees H1 (SM), itself, H3, H4, H5 and the
	   4 switches; H6 (no tenant) sees H1, itself and the switches; the
	   SM sees all 10 */
	ck_assert_int_eq(node_recs(&e, "H2", &h6), 9);
	ck_assert_int_eq(h6, 0);
	ck_assert_int_eq(node_recs(&e, "H6", &h6), 6);
	ck_assert_int_eq(h6, 1);
	ck_assert_int_eq(node_recs(&e, "H1", &h6), 10);
	/* H4 (A full, C limited) sees H1, itself, H2 (A) and the switches:
	   not H5 (C both limited), H3 (B), H6 */
	ck_assert_int_eq(node_recs(&e, "H4", &h6), 7);
	/* a Get of H3's NodeRecord by LID from H6: NO_RECORDS */
	uint8_t rec[72] = { 0 };
	sa_put16(rec, (uint16_t)lid(&e, "H3"));
	ck_assert_int_eq(ask(&e, "H6", SA_METHOD_GET, SA_ATTR_NODE_REC, 1, rec, 8), 1);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_NO_RECORDS);
	ck_assert_int_eq(ask(&e, "H2", SA_METHOD_GET, SA_ATTR_NODE_REC, 1, rec, 8), 1);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
	/* PortInfoRecords of L1 (ports 0-5) from H6: port 0, the ports
	   facing H1 and the two spines; not those facing H2, H3 */
	sa_put16(rec, (uint16_t)lid(&e, "L1"));
	ck_assert_int_eq(ask(&e, "H6", SA_METHOD_GET_TABLE, SA_ATTR_PORTINFO_REC, 1,
			     rec, sizeof(rec)), 1);
	int n = records(&e, 72);
	ck_assert_int_eq(n, 4);
	for (int i = 0; i < 2; i++) {	/* the first segment's two records */
		uint8_t num = e.w.mad[0][56 + 72 * i + 2];
		ck_assert_msg(num == 0 || num == 1 || num == 4 || num == 5,
			      "L1 port %u shown to H6", num);
	}
	ck_assert_int_eq(ask(&e, "H2", SA_METHOD_GET_TABLE, SA_ATTR_PORTINFO_REC, 1,
			     rec, sizeof(rec)), 1);
	ck_assert_int_eq(records(&e, 72), 6);
	/* H2's own PortInfoRecord: not to H6 */
	sa_put16(rec, (uint16_t)lid(&e, "H2"));
	ck_assert_int_eq(ask(&e, "H6", SA_METHOD_GET_TABLE, SA_ATTR_PORTINFO_REC, 1,
			     rec, sizeof(rec)), 1);
	ck_assert_int_eq(e.w.len[0], 56);	/* the empty table */
	/* LinkRecords from L1: H6 sees the links to H1 and the spines (3),
	   H2 all 5 */
	memset(rec, 0, sizeof(rec));
	sa_put16(rec, (uint16_t)lid(&e, "L1"));
	ck_assert_int_eq(ask(&e, "H6", SA_METHOD_GET_TABLE, SA_ATTR_LINK_REC, 1, rec, 8), 1);
	ck_assert_int_eq(records(&e, 8), 3);
	ck_assert_int_eq(ask(&e, "H2", SA_METHOD_GET_TABLE, SA_ATTR_LINK_REC, 1, rec, 8), 1);
	ck_assert_int_eq(records(&e, 8), 5);
	/* switches are full members: every SwitchInfoRecord to H6 */
	ck_assert_int_eq(ask(&e, "H6", SA_METHOD_GET_TABLE, SA_ATTR_SWITCHINFO_REC, 0,
			     rec, 24), 1);
	ck_assert_int_eq(records(&e, 24), 4);
	/* a request from a LID no port holds: not answered, as OpenSM */
	ck_assert_int_eq(ask(&e, NULL, SA_METHOD_GET_TABLE, SA_ATTR_NODE_REC, 0, rec, 8), 0);
	ck_assert_uint_eq(sa_get_stats(e.sm)->dropped_requester, 1);
	env_down(&e);
}
END_TEST

/* InformInfo Set from `who`: trap 64 of the one LID of node `of`; the status. */
static int subscribe(struct env *e, const char *who, const char *of)
{
	uint8_t ii[SA_SIZE_INFORM_INFO] = { 0 };
	sa_put16(ii + II_LID_BEGIN, (uint16_t)lid(e, of));
	ii[II_IS_GENERIC] = 1;
	ii[II_SUBSCRIBE] = 1;
	sa_put16(ii + II_TYPE, 0xffff);
	sa_put16(ii + II_TRAP, 64);
	ck_assert_int_eq(ask(e, who, SA_METHOD_SET, SA_ATTR_INFORM_INFO, 0, ii, sizeof(ii)), 1);
	return mad_status(e->w.mad[0]);
}

START_TEST(subscriptions_within_partitions)
{
	struct env e;
	env_up(&e, 1);
	/* a LID range the subscriber shares no partition with: refused */
	ck_assert_int_eq(subscribe(&e, "H6", "H2"), SA_STS_REQ_INVALID);
	ck_assert_int_eq(subscribe(&e, "H4", "H5"), SA_STS_REQ_INVALID);
	ck_assert_int_eq(subscribe(&e, "H4", "H2"), 0);
	ck_assert_int_eq(subscribe(&e, "H6", "L1"), 0);
	ck_assert_uint_eq(notifier_count(e.sm->notify), 2);
	env_down(&e);
	env_up(&e, 0);
	ck_assert_int_eq(subscribe(&e, "H6", "H2"), 0);
	env_down(&e);
}
END_TEST

static void view_part(void *ctx, uint32_t src, uint32_t dst, uint16_t *pkey,
		      uint8_t *sl)
{
	const struct sa_view *v = ctx;
	sa_path_part(v->parts, v->lft, src, dst, pkey, sl);
}

/* The repath notice's record of the path from a to b (its P_Key, SL). */
static void repath_of(const struct sa_view *v, int with_part, const char *a,
		      const char *b, uint16_t *pkey, uint8_t *sl)
{
	uint32_t pa = fabric_port(v->f, node_named(v->f, a), 1);
	uint32_t pb = fabric_port(v->f, node_named(v->f, b), 1);
	struct repath_params rp = { .pkey = 0xffff, .ltv = 18 };
	if (with_part) {
		rp.part = view_part;
		rp.part_ctx = (void *)v;
	}
	struct prd_change c = { .src = pa, .dst = pb, .slid = v->f->ports[pa].lid,
				.dlid = v->f->ports[pb].lid, .kind = PRD_REPATH };
	struct notice_path np;
	repath_record(&rp, v->f, v->lft, &c, &np);
	*pkey = np.pkey;
	*sl = np.sl;
}

START_TEST(repath_records_carry_the_partition)
{
	struct env e;
	uint16_t pk, pk2;
	uint8_t sl, sl2;
	env_up(&e, 1);
	const struct sa_view *v = sa_get_view(e.sm);
	/* the notice's record is the PathRecord the SA answers */
	repath_of(v, 1, "H4", "H1", &pk, &sl);
	ck_assert_int_eq(paths(&e, "H4", "H4", "H1", 0, 0, 0, &pk2, &sl2), 1);
	ck_assert_uint_eq(pk, 0x0003);
	ck_assert_uint_eq(pk, pk2);
	ck_assert_uint_eq(sl, 7);
	ck_assert_uint_eq(sl, sl2);
	repath_of(v, 1, "H3", "H2", &pk, &sl);
	ck_assert_uint_eq(pk, 0x8002);
	ck_assert_uint_eq(sl, 5);
	/* without the partitions: the one P_Key, the routing's SL */
	repath_of(v, 0, "H3", "H2", &pk, &sl);
	ck_assert_uint_eq(pk, 0xffff);
	ck_assert_uint_eq(sl, 0);
	env_down(&e);
}
END_TEST

int main(void)
{
	log_set_level(LOG_ERROR);
	Suite *s = suite_create("sa_part");
	TCase *tc = tcase_create("sa_part");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, path_partitions);
	tcase_add_test(tc, path_no_tenants);
	tcase_add_test(tc, node_port_link_within_partitions);
	tcase_add_test(tc, subscriptions_within_partitions);
	tcase_add_test(tc, repath_records_carry_the_partition);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
