/*
 * The SA within partitions (sm/sa/sa_server.c, sa_path.c, sa_node.c): the
 * policy's partitions filled into the config as the policy parser
 * (sm/model/config.c) fills them, resolved by sa_publish() against the SA's
 * own copy, and requests sent in through the receive path from a chosen
 * requester's LID.
 *
 * Fabric and policy: sa_parttestlib.h.
 */
#include <jansson.h>

#include "sa_parttestlib.h"
#include "sm/base/log.h"
#include "traps/repath.h"

#define PR_MASK_DLID	(1ull << 4)
#define PR_MASK_SLID	(1ull << 5)
#define PR_MASK_PKEY	(1ull << 13)
#define PR_MASK_SL	(1ull << 15)

/*
 * PathRecords from s to d as `who` asks them (GetTable by SLID and DLID,
 * plus the extra mask bits and fields pkey / sl): the records' count, or
 * -1 for NO_RECORDS (a LID no port holds, or a port outside the
 * requester's partitions); the first record's P_Key and SL in *pkey, *sl.
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
	if (mad_status(e->w.mad[0]) == SA_STS_NO_RECORDS)
		return -1;
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
	/* tenants apart (H4 A and C limited, H5 B and C limited): none, H5's
	   LID as no port's */
	ck_assert_int_eq(paths(&e, "H4", "H4", "H5", 0, 0, 0, &pk, &sl), -1);
	/* a host in no tenant: no host but itself... not even itself
	   (limited at 0x7FFF), as OpenSM; the SM's port: the default */
	ck_assert_int_eq(paths(&e, "H6", "H6", "H2", 0, 0, 0, &pk, &sl), -1);
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
	ck_assert_int_eq(paths(&e, "H6", "H2", "H4", 0, 0, 0, &pk, &sl), -1);
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
	/* everyone a full default member, as with no partitions in the policy */
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
	ck_assert_int_eq(e.w.len[0], SA_EMPTY_TABLE_LEN);	/* the empty table */
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

/* InformInfo Set from `who`: trap 64 of the port of GUID guid (gid 1) or
   of the LID range [l, l] (gid 0); the status. */
static unsigned inform_answer(struct env *e, const char *who, int by_gid,
			      uint64_t guid, uint32_t l)
{
	uint8_t ii[SA_SIZE_INFORM_INFO] = { 0 };
	if (by_gid) {
		sa_put64(ii, 0xfe80000000000000ull);
		sa_put64(ii + 8, guid);
	} else {
		sa_put16(ii + II_LID_BEGIN, (uint16_t)l);
	}
	ii[II_IS_GENERIC] = 1;
	ii[II_SUBSCRIBE] = 1;
	sa_put16(ii + II_TYPE, 0xffff);
	sa_put16(ii + II_TRAP, 64);
	ck_assert_int_eq(ask(e, who, SA_METHOD_SET, SA_ATTR_INFORM_INFO, 0, ii, sizeof(ii)), 1);
	return mad_status(e->w.mad[0]);
}

/* InformInfo Set from `who`: trap 64 of the one LID of node `of`; the status. */
static int subscribe(struct env *e, const char *who, const char *of)
{
	return (int)inform_answer(e, who, 0, 0, lid(e, of));
}

/*
 * The device-table records and SMInfoRecord answer within the requester's
 * partitions as the others: H6 (no tenant) learns nothing of H2's
 * tables, H4 (tenant A with H2) does; of L1's ports H6 sees port 0 and
 * those facing H1 and the spines; the SM's SMInfoRecord every host sees.
 */
START_TEST(tables_within_partitions)
{
	struct env e;
	env_up(&e, 1);
	e.sm->tr.port_guid = fabric_portp(&e.f, node_named(&e.f, "H1"), 1)->guid;
	e.sm->cfg.sa_key = e.key = 0x5a;	/* P_KeyTableRecords: trusted only */
	const struct { uint16_t attr; size_t stride; int per_port; } fam[] = {
		{ SA_ATTR_PKEY_REC, 72, 1 },	/* PartitionCap 0: one block */
		{ SA_ATTR_SL2VL_REC, 16, 1 },
		{ SA_ATTR_VLARB_REC, 72, 4 },
	};
	uint8_t rec[72] = { 0 };
	for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) {
		sa_put16(rec, (uint16_t)lid(&e, "H2"));
		ck_assert_int_eq(ask(&e, "H6", SA_METHOD_GET_TABLE, fam[i].attr, 1, rec,
				     fam[i].stride), 1);
		ck_assert_msg(e.w.len[0] == SA_EMPTY_TABLE_LEN, "0x%04x of H2 shown to H6",
			      fam[i].attr);
		ck_assert_int_eq(ask(&e, "H4", SA_METHOD_GET_TABLE, fam[i].attr, 1, rec,
				     fam[i].stride), 1);
		ck_assert_int_eq(records(&e, fam[i].stride), fam[i].per_port);
	}
	/* L1's P_Key tables from H6: ports 0, 1 (H1), 4 and 5 (spines) */
	sa_put16(rec, (uint16_t)lid(&e, "L1"));
	ck_assert_int_eq(ask(&e, "H6", SA_METHOD_GET_TABLE, SA_ATTR_PKEY_REC, 1, rec, 72), 1);
	ck_assert_int_eq(records(&e, 72), 4);
	ck_assert_int_eq(ask(&e, "H2", SA_METHOD_GET_TABLE, SA_ATTR_PKEY_REC, 1, rec, 72), 1);
	ck_assert_int_eq(records(&e, 72), 6);
	/* SMInfoRecord: the SM's port is a full default member */
	ck_assert_int_eq(ask(&e, "H6", SA_METHOD_GET, SA_ATTR_SMINFO_REC, 0, rec, 25), 1);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
	ck_assert_uint_eq(sa_get16(e.w.mad[0] + 56), lid(&e, "H1"));
	env_down(&e);
}
END_TEST

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

/* ---- a host outside a tenant learns nothing of it ---- */

#define PR_MASK_DGID	(1ull << 2)
#define PR_MASK_SGID	(1ull << 3)
#define NOBODY_GUID	0x0002c9ffdeadbeefull	/* no port's */
#define NOBODY_LID	0x40			/* no port's */
#define TABLE		0x10000		/* answer_of(): records of a table */

static uint64_t port_guid(struct env *e, const char *host)
{
	return fabric_portp(&e->f, node_named(&e->f, host), 1)->guid;
}

/*
 * What a request's answer says: its status, or for a success TABLE plus
 * the records (a Get's one record: TABLE + 1).
 */
static unsigned answer_of(struct env *e, const char *who, uint8_t method,
			  uint16_t attr, uint64_t mask, const uint8_t *rec,
			  size_t len, size_t stride)
{
	ck_assert_int_eq(ask(e, who, method, attr, mask, rec, len), 1);
	unsigned st = mad_status(e->w.mad[0]);
	if (st)
		return st;
	return TABLE + (method == SA_METHOD_GET_TABLE ? (unsigned)records(e, stride) : 1);
}

/*
 * PathRecord asked by `who` with an end named `how` (the source or the
 * destination, by GID or LID; Get or GetTable) as the port of GUID guid
 * at LID lid; the other end, if named, is the requester itself.
 */
enum pr_how { PR_GET_GIDS, PR_TABLE_DGID, PR_TABLE_SGID, PR_GET_LIDS,
	      PR_TABLE_DLID, PR_TABLE_SLID, PR_HOWS };

static unsigned pr_answer(struct env *e, const char *who, enum pr_how how,
			  uint64_t guid, uint32_t l)
{
	uint8_t rec[64] = { 0 };
	uint64_t mask = 0;
	uint8_t method = how == PR_GET_GIDS || how == PR_GET_LIDS ?
			 SA_METHOD_GET : SA_METHOD_GET_TABLE;
	int src = how == PR_TABLE_SGID || how == PR_TABLE_SLID;
	sa_put64(rec + 8, 0xfe80000000000000ull);
	sa_put64(rec + 24, 0xfe80000000000000ull);
	if (how == PR_GET_GIDS || how == PR_TABLE_DGID || how == PR_TABLE_SGID) {
		sa_put64(rec + (src ? 32 : 16), guid);
		mask |= src ? PR_MASK_SGID : PR_MASK_DGID;
		if (how == PR_GET_GIDS) {
			sa_put64(rec + 32, port_guid(e, who));
			mask |= PR_MASK_SGID;
		}
	} else {
		sa_put16(rec + (src ? 42 : 40), (uint16_t)l);
		mask |= src ? PR_MASK_SLID : PR_MASK_DLID;
		if (how == PR_GET_LIDS) {
			sa_put16(rec + 42, (uint16_t)lid(e, who));
			mask |= PR_MASK_SLID;
		}
	}
	return answer_of(e, who, method, SA_ATTR_PATH_REC, mask, rec, sizeof(rec), 64);
}

/*
 * Every way of naming a port in a PathRecord or an InformInfo: the same
 * answer to `who` for `hidden` (a port of a partition it is not in) as
 * for a GID and a LID no port has; `seen` (a port it shares one with)
 * is answered.
 */
static void same_as_nobody(struct env *e, const char *who, const char *hidden,
			   const char *seen)
{
	for (int how = 0; how < PR_HOWS; how++) {
		unsigned h = pr_answer(e, who, how, port_guid(e, hidden), lid(e, hidden));
		unsigned n = pr_answer(e, who, how, NOBODY_GUID, NOBODY_LID);
		unsigned s = pr_answer(e, who, how, port_guid(e, seen), lid(e, seen));
		ck_assert_msg(h == n, "PathRecord (%d) by %s: %s answered 0x%x, no port 0x%x",
			      how, who, hidden, h, n);
		ck_assert_msg(s > TABLE, "PathRecord (%d) by %s: %s answered 0x%x", how,
			      who, seen, s);
	}
	for (int by_gid = 0; by_gid < 2; by_gid++) {
		unsigned h = inform_answer(e, who, by_gid, port_guid(e, hidden), lid(e, hidden));
		unsigned n = inform_answer(e, who, by_gid, NOBODY_GUID, NOBODY_LID);
		ck_assert_msg(h == n, "InformInfo (by %s) by %s: %s answered 0x%x, no port 0x%x",
			      by_gid ? "GID" : "LID", who, hidden, h, n);
		ck_assert_uint_eq(inform_answer(e, who, by_gid, port_guid(e, seen),
						lid(e, seen)), 0);
	}
}

/* InformInfoRecords `who` gets in a GetTable (or, with SubscriberGID
   guid, a Get): the count, or the status of a failed Get. */
static unsigned iir_answer(struct env *e, const char *who, uint64_t guid)
{
	uint8_t rec[64] = { 0 };
	sa_put64(rec, 0xfe80000000000000ull);
	sa_put64(rec + 8, guid);
	return answer_of(e, who, guid ? SA_METHOD_GET : SA_METHOD_GET_TABLE,
			 SA_ATTR_INFORM_INFO_REC, guid ? 1 : 0, rec, sizeof(rec), 64);
}

/* Whether the last answer's MADs name the GUID anywhere past their header. */
static int table_names(struct env *e, uint64_t guid)
{
	for (int m = 0; m < e->w.n; m++)
		for (size_t i = 56; i + 8 <= e->w.len[m]; i++)
			if (sa_get64(e->w.mad[m] + i) == guid)
				return 1;
	return 0;
}

START_TEST(outsider_learns_nothing)
{
	struct env e;
	env_up(&e, 1);
	/* H6 (no tenant), H4 (A full, C limited), H2 (A full, B limited) */
	same_as_nobody(&e, "H6", "H2", "H1");
	same_as_nobody(&e, "H4", "H5", "H2");	/* C: both limited */
	same_as_nobody(&e, "H4", "H3", "H2");
	same_as_nobody(&e, "H2", "H6", "H3");
	/* the SM's port sees every port: a LID range over no port's LID is
	   taken as before */
	ck_assert_uint_eq(inform_answer(&e, "H1", 0, 0, NOBODY_LID), 0);
	/* counted, for the operator (ibsmctl status's sa.outside_partitions):
	   of each of the 4 rounds, 6 PathRecords and 2 InformInfos naming
	   the hidden port, and the LID range over no port's LID (to a
	   requester that does not see every port) */
	json_t *o = json_object();
	sa_to_ctl(e.sm, o);
	json_t *n = json_object_get(json_object_get(o, "sa"), "outside_partitions");
	ck_assert_msg(n && json_integer_value(n) == 4 * 9, "sa.outside_partitions: %lld",
		      n ? (long long)json_integer_value(n) : -1LL);
	json_decref(o);
	env_down(&e);

	/* subscriptions (on a fresh SM): H3 to every LID, H2 to H3's GID
	   and to every LID, H6 to every LID */
	env_up(&e, 1);
	ck_assert_uint_eq(inform_answer(&e, "H3", 0, 0, 0xffff), 0);
	ck_assert_uint_eq(inform_answer(&e, "H2", 1, port_guid(&e, "H3"), 0), 0);
	ck_assert_uint_eq(inform_answer(&e, "H2", 0, 0, 0xffff), 0);
	ck_assert_uint_eq(inform_answer(&e, "H6", 0, 0, 0xffff), 0);
	unsigned all = (unsigned)notifier_count(e.sm->notify);
	/* H6 sees its own only; nothing of H2's or H3's, not their GIDs */
	ck_assert_uint_eq(iir_answer(&e, "H6", 0), TABLE + 1);
	ck_assert(!table_names(&e, port_guid(&e, "H2")) &&
		  !table_names(&e, port_guid(&e, "H3")));
	ck_assert_uint_eq(iir_answer(&e, "H6", port_guid(&e, "H3")),
			  iir_answer(&e, "H6", NOBODY_GUID));
	ck_assert_uint_eq(iir_answer(&e, "H6", port_guid(&e, "H3")), SA_STS_NO_RECORDS);
	/* H4 (A with H2) sees H2's subscription to every LID, not the one to
	   H3's GID (B), nor H3's, nor H6's */
	ck_assert_uint_eq(iir_answer(&e, "H4", 0), TABLE + 1);
	ck_assert(table_names(&e, port_guid(&e, "H2")) && !table_names(&e, port_guid(&e, "H3")));
	/* the tenant's own: H3 sees its own and H2's two (B), H2 its two and
	   H3's; the SM's port every one */
	ck_assert_uint_eq(iir_answer(&e, "H3", 0), TABLE + 3);
	ck_assert_uint_eq(iir_answer(&e, "H2", 0), TABLE + 3);
	ck_assert_uint_eq(iir_answer(&e, "H1", 0), TABLE + all);
	ck_assert_uint_eq(iir_answer(&e, "H2", port_guid(&e, "H3")), TABLE + 1);
	env_down(&e);
}
END_TEST

/* Without tenant partitions nothing is hidden: the answers of before. */
START_TEST(no_tenants_nothing_hidden)
{
	struct env e;
	env_up(&e, 0);
	ck_assert_uint_gt(pr_answer(&e, "H6", PR_TABLE_DGID, port_guid(&e, "H2"), 0), TABLE);
	ck_assert_uint_eq(pr_answer(&e, "H6", PR_TABLE_DGID, NOBODY_GUID, 0),
			  SA_STS_INVALID_GID);
	ck_assert_uint_eq(inform_answer(&e, "H6", 0, 0, NOBODY_LID), 0);
	ck_assert_uint_eq(inform_answer(&e, "H6", 1, port_guid(&e, "H2"), 0), 0);
	ck_assert_uint_eq(inform_answer(&e, "H3", 0, 0, 0xffff), 0);
	ck_assert_uint_eq(iir_answer(&e, "H6", 0), TABLE + 3);
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
	tcase_add_test(tc, tables_within_partitions);
	tcase_add_test(tc, subscriptions_within_partitions);
	tcase_add_test(tc, outsider_learns_nothing);
	tcase_add_test(tc, no_tenants_nothing_hidden);
	tcase_add_test(tc, repath_records_carry_the_partition);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
