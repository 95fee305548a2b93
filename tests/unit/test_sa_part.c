/*
 * The SA within partitions (sm/sa/sa_server.c, sa_path.c, sa_node.c; issue 16):
 * the policy's partitions filled into the config as helper A's parser
 * will, resolved by sa_publish() against the SA's own copy, and requests
 * sent in through the receive path from a chosen requester's LID.
 *
 * Fabric and policy: sa_parttestlib.h.
 */
#include "sa_parttestlib.h"
#include "sm/base/log.h"
#include "traps/repath.h"

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
