/*
 * The SA's table records (sm/sa/sa_tables.c, sa_sminfo.c): PKeyTableRecord,
 * SLtoVLMappingTableRecord, VLArbitrationTableRecord,
 * MulticastForwardingTableRecord and SMInfoRecord, in process on
 * tb_two_leaves() routed with minhop, the device cache holding what a
 * sweep would have written.  A table of malformed requests for each
 * (bad component masks, short MADs, unserved methods, attribute
 * modifiers, RMPP abuse) gets its status or nothing, then the records
 * themselves: which, in which order, with what the cache holds.  Under
 * ASan in unit-san: no crash, no leak.
 */
#include "routing_testlib.h"
#include "sa_testlib.h"
#include "mad/rmpp.h"
#include "sm/base/log.h"
#include "sm/write/devcache.h"

struct env {
	struct sm *sm;
	struct wire w;
	struct fabric f;
	struct lft_tables t;
	struct tb *b;
	uint64_t key;		/* the SM_Key ask() sends (TABLES_SA_KEY: trusted) */
};

#define TABLES_SA_KEY	0x77	/* sa.sa_key: P_KeyTableRecords are for the trusted */

#define CA_PKEY_CAP	64	/* two P_Key blocks */
#define SW_PKEY_CAP	32
#define SW_MFT_CAP	1024

static void cache_put(struct env *e, int kind, const char *node, uint8_t port,
		      uint32_t mod, const uint8_t *data)
{
	struct plan_op op = { .node = node_named(&e->f, node), .port = port,
			      .kind = (uint8_t)kind };
	devcache_record(e->sm->sub.cache, &e->f, &op, mod, data);
}

static void env_up(struct env *e)
{
	char err[256] = "";
	memset(e, 0, sizeof(*e));
	e->b = tb_two_leaves(0x10);
	tb_build(&e->f, e->b, NULL, 0);
	for (uint32_t i = 0; i < e->f.n_nodes; i++) {
		struct fab_node *n = &e->f.nodes[i];
		n->partition_cap = n->type == FAB_SWITCH ? SW_PKEY_CAP : CA_PKEY_CAP;
		n->partition_enf_cap = n->type == FAB_SWITCH ? SW_PKEY_CAP : 0;
		n->mft_cap = n->type == FAB_SWITCH ? SW_MFT_CAP : 0;
	}
	for (uint32_t i = 0; i < e->f.n_ports; i++)
		if (e->f.ports[i].remote != FAB_NONE)
			e->f.ports[i].state = PORT_ACTIVE;
	ck_assert_int_eq(lft_tables_alloc(&e->t, &e->f), 0);
	ck_assert_int_eq(routing_engine_find("minhop")->route(&e->f, NULL, &e->t,
							       err, sizeof(err)), 0);
	struct sm *sm = e->sm = sa_test_sm(&e->w, lid_of(&e->f, "H1"), NULL);
	sm->tr.port_guid = fabric_portp(&e->f, node_named(&e->f, "H1"), 1)->guid;
	sm->cfg.sa_key = e->key = TABLES_SA_KEY;
	ck_assert_ptr_nonnull(sm->sub.cache = devcache_new());
	uint8_t d[SMP_DATA_SIZE] = { 0 };
	/* H2's P_Key block 0: 0xFFFF, 0x8001; L1 port 3's: 0x7fff */
	sa_put16(d, 0xffff);
	sa_put16(d + 2, 0x8001);
	cache_put(e, PLAN_PKEY, "H2", 1, 0, d);
	memset(d, 0, sizeof(d));
	sa_put16(d, 0x7fff);
	cache_put(e, PLAN_PKEY, "L1", 3, 3u << 16, d);
	/* SL2VL: H2's SL i -> VL i % 4; L1 every pair SL i -> VL 1 */
	memset(d, 0, sizeof(d));
	for (int i = 0; i < 8; i++)
		d[i] = (uint8_t)((2 * i % 4) << 4 | (2 * i + 1) % 4);
	cache_put(e, PLAN_SL2VL, "H2", 1, 0, d);
	memset(d, 0x11, 8);
	cache_put(e, PLAN_SL2VL, "L1", 0, SL2VL_ALL_IN | SL2VL_ALL_OUT, d);
	/* VLArb: H2 low block, VL 0 weight 64 */
	memset(d, 0, sizeof(d));
	d[1] = 64;
	cache_put(e, PLAN_VLARB, "H2", 1, 1u << 16 | 1, d);
	/* MFT: L2 block 0 position 0, MLID 0xC001 to ports 1 and 3 */
	memset(d, 0, sizeof(d));
	sa_put16(d + 2, 1 << 1 | 1 << 3);
	cache_put(e, PLAN_MFT, "L2", 0, 0, d);
	/* and block 3 left all zero (its group gone): not in use */
	memset(d, 0, sizeof(d));
	cache_put(e, PLAN_MFT, "L2", 0, 3, d);
	sa_publish(sm, &e->f, &e->t);
	ck_assert_ptr_nonnull(sa_get_view(sm));
	lft_tables_free(&e->t);
}

static void env_down(struct env *e)
{
	devcache_free(e->sm->sub.cache);
	sa_test_sm_free(e->sm);
	fabric_free(&e->f);
	free(e->b);
}

static uint32_t lid(struct env *e, const char *name)
{
	return lid_of(&e->f, name);
}

/* A request of len bytes from H2's LID; the answers' count. */
static int ask(struct env *e, const uint8_t *mad, size_t len)
{
	uint8_t m[MAD_SIZE];
	memcpy(m, mad, len < sizeof(m) ? len : sizeof(m));
	if (len >= SA_HDR_SIZE)
		sa_put64(m + 36, e->key);
	return sa_test_ask(e->sm, &e->w, lid(e, "H2"), m, len);
}

#define req sa_test_req

/*
 * The answer's records: a Get's 1 (0 for an error), a GetTable's from the
 * first segment's PayloadLength (20 per segment, and the data; a
 * segment carries up to 200 data bytes, so 220 per segment at most).
 */
static uint32_t n_records(const uint8_t *m, uint32_t stride)
{
	if (mad_method(m) != SA_METHOD_GET_TABLE_RESP)
		return mad_status(m) ? 0 : 1;
	uint32_t len = rmpp_len(m);
	uint32_t segs = (len + 20 + SA_DATA_SIZE - 1) / (20 + SA_DATA_SIZE);
	return (len - 20 * segs) / stride;
}

struct bad {
	const char *what;
	uint8_t method;
	uint16_t attr;
	uint64_t mask;
	uint32_t attr_mod;
	size_t len;
	int rmpp;		/* RMPP flags to set (0: none) */
	int status;		/* -1: no answer */
};

#define GT SA_METHOD_GET_TABLE
#define G SA_METHOD_GET

START_TEST(malformed)
{
	struct env e;
	env_up(&e);
	const uint16_t attrs[] = { SA_ATTR_PKEY_REC, SA_ATTR_SL2VL_REC, SA_ATTR_VLARB_REC,
				   SA_ATTR_MFT_REC, SA_ATTR_SMINFO_REC };
	/* the first component mask bit past each record's fields */
	const unsigned past[] = { 5, 5, 5, 6, 7 };
	for (size_t a = 0; a < sizeof(attrs) / sizeof(attrs[0]); a++) {
		const struct bad cases[] = {
			{ "mask past the fields", GT, attrs[a], 1ull << past[a], 0, MAD_SIZE, 0,
			  SA_STS_REQ_INVALID },
			{ "mask bit 63", G, attrs[a], 1ull << 63, 0, MAD_SIZE, 0, SA_STS_REQ_INVALID },
			{ "all-ones mask", GT, attrs[a], ~0ull, 0, MAD_SIZE, 0, SA_STS_REQ_INVALID },
			{ "Set", SA_METHOD_SET, attrs[a], 0, 0, MAD_SIZE, 0,
			  MAD_STS_METHOD_ATTR_UNSUPPORTED },
			{ "Delete", SA_METHOD_DELETE, attrs[a], 0, 0, MAD_SIZE, 0,
			  MAD_STS_METHOD_ATTR_UNSUPPORTED },
			{ "shorter than the SA header", GT, attrs[a], 0, 0, 50, 0, -1 },
			{ "a MAD header alone", G, attrs[a], 0, 0, 24, 0, -1 },
			{ "a response", SA_METHOD_GET_TABLE_RESP, attrs[a], 0, 0, MAD_SIZE, 0, -1 },
			{ "RMPP ACK of nothing", GT, attrs[a], 0, 0, MAD_SIZE,
			  RMPP_FLAG_ACTIVE | RMPP_TYPE_ACK << 8, -1 },
			{ "RMPP ABORT of nothing", GT, attrs[a], 0, 0, MAD_SIZE,
			  RMPP_FLAG_ACTIVE | RMPP_TYPE_ABORT << 8, -1 },
			{ "RMPP DATA cut short", GT, attrs[a], 0, 0, 40,
			  RMPP_FLAG_ACTIVE | RMPP_FLAG_FIRST | RMPP_TYPE_DATA << 8, -1 },
		};
		uint8_t mad[MAD_SIZE + 8];
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			const struct bad *c = &cases[i];
			memset(mad, 0, sizeof(mad));
			req(mad, c->method, c->attr, c->mask, NULL, 0);
			sa_put32(mad + 20, c->attr_mod);
			if (c->rmpp) {
				mad[24] = RMPP_VERSION;
				mad[25] = (uint8_t)(c->rmpp >> 8);
				mad[26] = (uint8_t)c->rmpp;
				sa_put32(mad + 28, 1);
			}
			int n = ask(&e, mad, c->len);
			if (c->status < 0) {
				ck_assert_msg(n == 0, "0x%04x %s: %d answers", c->attr, c->what, n);
				continue;
			}
			ck_assert_msg(n == 1, "0x%04x %s: %d answers", c->attr, c->what, n);
			ck_assert_msg(mad_status(e.w.mad[0]) == c->status,
				      "0x%04x %s: status 0x%04x, want 0x%04x", c->attr, c->what,
				      mad_status(e.w.mad[0]), c->status);
			ck_assert_uint_eq(mad_tid(e.w.mad[0]), mad_tid(mad));
		}
	}
	/* the attribute modifier is not the SA's: answered as 0 */
	uint8_t mad[MAD_SIZE], rec[72] = { 0 };
	sa_put16(rec, (uint16_t)lid(&e, "H2"));
	req(mad, G, SA_ATTR_SL2VL_REC, 1, rec, 16);
	sa_put32(mad + 20, 0xffffffffu);
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
	/* an RMPP request longer than the SA takes: ABORTed at its first segment */
	req(mad, GT, SA_ATTR_PKEY_REC, 0, NULL, 0);
	mad[24] = RMPP_VERSION;
	mad[25] = RMPP_TYPE_DATA;
	mad[26] = RMPP_FLAG_ACTIVE | RMPP_FLAG_FIRST;
	sa_put32(mad + 28, 1);
	sa_put32(mad + 32, 20 * 4 + 3 * SA_DATA_SIZE);
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(e.w.mad[0][25], RMPP_TYPE_ABORT);
	/* P_KeyTableRecords: a request without sa.sa_key is untrusted */
	e.key = 0;
	req(mad, G, SA_ATTR_PKEY_REC, 1, rec, 72);
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_REQ_INVALID);
	ck_assert_uint_eq(sa_get_stats(e.sm)->untrusted, 1);
	/* ... and sm.sm_key is not the SA's key (IBA 1.2.1): dropped */
	e.sm->cfg.sm_key = 0x99;
	e.key = 0x99;
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 0);
	e.key = TABLES_SA_KEY;
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_TOO_MANY_RECORDS);	/* 2 blocks */
	ck_assert_uint_eq(sa_sm_key(e.w.mad[0]), 0);
	env_down(&e);
}
END_TEST

START_TEST(pkey_records)
{
	struct env e;
	env_up(&e);
	uint8_t mad[MAD_SIZE], rec[72] = { 0 };
	/* H2, block 0: as the cache holds it */
	sa_put16(rec, (uint16_t)lid(&e, "H2"));
	req(mad, G, SA_ATTR_PKEY_REC, 1 | 2, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	const uint8_t *r = e.w.mad[0] + 56;
	ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
	ck_assert_uint_eq(sa_attr_offset(e.w.mad[0]), 72 / 8);
	ck_assert_uint_eq(sa_get16(r), lid(&e, "H2"));
	ck_assert_uint_eq(r[4], 1);
	ck_assert_uint_eq(sa_get16(r + 8), 0xffff);
	ck_assert_uint_eq(sa_get16(r + 10), 0x8001);
	/* H2 whole: both blocks of its PartitionCap, the second all zero */
	req(mad, GT, SA_ATTR_PKEY_REC, 1, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(n_records(e.w.mad[0], 72), 2);
	r = e.w.mad[0] + 56 + 72;
	ck_assert_uint_eq(sa_get16(r + 2), 1);
	ck_assert_uint_eq(sa_get16(r + 8), 0);
	/* a block past the cap: none; H3 (not in the cache): the reset default */
	sa_put16(rec + 2, 2);
	req(mad, GT, SA_ATTR_PKEY_REC, 1 | 2, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(e.w.len[0], SA_EMPTY_TABLE_LEN);
	ck_assert_uint_eq(sa_attr_offset(e.w.mad[0]), 0);
	sa_put16(rec, (uint16_t)lid(&e, "H3"));
	sa_put16(rec + 2, 0);
	req(mad, G, SA_ATTR_PKEY_REC, 1 | 2, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(sa_get16(e.w.mad[0] + 56 + 8), 0xffff);
	ck_assert_uint_eq(sa_get16(e.w.mad[0] + 56 + 10), 0);
	/* L1 port 3 (the switch's LID, PortNum 3) */
	sa_put16(rec, (uint16_t)lid(&e, "L1"));
	rec[4] = 3;
	req(mad, G, SA_ATTR_PKEY_REC, 1 | 4, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
	ck_assert_uint_eq(e.w.mad[0][56 + 4], 3);
	ck_assert_uint_eq(sa_get16(e.w.mad[0] + 56 + 8), 0x7fff);
	/* L1 whole: ports 0-4, one block each */
	req(mad, GT, SA_ATTR_PKEY_REC, 1, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(n_records(e.w.mad[0], 72), 5);
	/* a LID nobody holds: an empty table, a Get NO_RECORDS */
	sa_put16(rec, 999);
	req(mad, G, SA_ATTR_PKEY_REC, 1, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_NO_RECORDS);
	env_down(&e);
}
END_TEST

START_TEST(sl2vl_and_vlarb_records)
{
	struct env e;
	env_up(&e);
	uint8_t mad[MAD_SIZE], rec[72] = { 0 };
	/* a CA port: one record, in and out 0, the table as the cache holds it */
	sa_put16(rec, (uint16_t)lid(&e, "H2"));
	req(mad, GT, SA_ATTR_SL2VL_REC, 1, rec, 16);
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(n_records(e.w.mad[0], 16), 1);
	const uint8_t *r = e.w.mad[0] + 56;
	ck_assert_uint_eq(sa_get16(r), lid(&e, "H2"));
	ck_assert_uint_eq(r[2], 0);
	ck_assert_uint_eq(r[3], 0);
	ck_assert_uint_eq(r[8], 0x01);
	ck_assert_uint_eq(r[9], 0x23);
	/* a switch: (in, out) for every in and out 0-4, out the outer loop */
	sa_put16(rec, (uint16_t)lid(&e, "L1"));
	req(mad, GT, SA_ATTR_SL2VL_REC, 1, rec, 16);
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(n_records(e.w.mad[0], 16), 25);
	r = e.w.mad[0] + 56 + 16;	/* the second: in 1, out 0 */
	ck_assert_uint_eq(r[2], 1);
	ck_assert_uint_eq(r[3], 0);
	ck_assert_uint_eq(r[8], 0x11);
	/* one pair by InputPortNum and OutputPortNum */
	rec[2] = 2;
	rec[3] = 4;
	req(mad, G, SA_ATTR_SL2VL_REC, 1 | 2 | 4, rec, 16);
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
	ck_assert_uint_eq(e.w.mad[0][56 + 2], 2);
	ck_assert_uint_eq(e.w.mad[0][56 + 3], 4);
	rec[3] = 9;	/* no port 9 */
	req(mad, G, SA_ATTR_SL2VL_REC, 1 | 2 | 4, rec, 16);
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_NO_RECORDS);
	/* VLArb of a CA port: blocks 1-4 of its own port */
	memset(rec, 0, sizeof(rec));
	sa_put16(rec, (uint16_t)lid(&e, "H2"));
	req(mad, GT, SA_ATTR_VLARB_REC, 1, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(n_records(e.w.mad[0], 72), 4);
	r = e.w.mad[0] + 56;
	ck_assert_uint_eq(sa_get16(r), lid(&e, "H2"));
	ck_assert_uint_eq(r[2], 1);
	ck_assert_uint_eq(r[3], 1);
	ck_assert_uint_eq(r[9], 64);
	rec[3] = 3;	/* block 3 alone */
	req(mad, G, SA_ATTR_VLARB_REC, 1 | 4, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
	ck_assert_uint_eq(e.w.mad[0][56 + 3], 3);
	rec[3] = 5;	/* no block 5 */
	req(mad, G, SA_ATTR_VLARB_REC, 1 | 4, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_NO_RECORDS);
	/* a switch: 5 ports x 4 blocks */
	sa_put16(rec, (uint16_t)lid(&e, "S1"));
	req(mad, GT, SA_ATTR_VLARB_REC, 1, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(n_records(e.w.mad[0], 72), 3 * 4);
	env_down(&e);
}
END_TEST

START_TEST(mft_and_sminfo_records)
{
	struct env e;
	env_up(&e);
	uint8_t mad[MAD_SIZE], rec[72] = { 0 };
	/* only L2 has a block with ports: one record, block 0 position 0 */
	req(mad, GT, SA_ATTR_MFT_REC, 0, NULL, 0);
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(n_records(e.w.mad[0], 72), 1);
	const uint8_t *r = e.w.mad[0] + 56;
	ck_assert_uint_eq(sa_get16(r), lid(&e, "L2"));
	ck_assert_uint_eq(sa_get16(r + 2), 0);
	ck_assert_uint_eq(sa_get16(r + 10), 1 << 1 | 1 << 3);
	/* by LID: L1 has none */
	sa_put16(rec, (uint16_t)lid(&e, "L1"));
	req(mad, G, SA_ATTR_MFT_REC, 1, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_NO_RECORDS);
	/* block 1 of L2: past the blocks in use */
	sa_put16(rec, (uint16_t)lid(&e, "L2"));
	sa_put16(rec + 2, 1);
	req(mad, G, SA_ATTR_MFT_REC, 1 | 8, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_NO_RECORDS);
	/* position 1 of a 4-port switch: none */
	sa_put16(rec + 2, 1 << 12);
	req(mad, G, SA_ATTR_MFT_REC, 1 | 2, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_NO_RECORDS);
	/* SMInfoRecord: this SM, at H1's LID, MASTER, SM_Key never told */
	e.sm->cfg.sm_key = 0x1234;
	e.sm->cfg.sm_priority = 5;
	memset(rec, 0, sizeof(rec));
	req(mad, G, SA_ATTR_SMINFO_REC, 0, NULL, 0);
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
	ck_assert_uint_eq(sa_attr_offset(e.w.mad[0]), 32 / 8);
	r = e.w.mad[0] + 56;
	ck_assert_uint_eq(sa_get16(r), lid(&e, "H1"));
	ck_assert_uint_eq(sa_get64(r + 4), e.sm->tr.port_guid);
	ck_assert_uint_eq(sa_get64(r + 12), 0);
	ck_assert_uint_eq(r[24], 5 << 4 | SMS_MASTER);
	/* by GUID (bit 2) and state (bit 6): another GUID, another state: none */
	sa_put64(rec + 4, 0x999);
	req(mad, G, SA_ATTR_SMINFO_REC, 1 << 2, rec, 25);
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_NO_RECORDS);
	rec[24] = SMS_STANDBY;
	req(mad, G, SA_ATTR_SMINFO_REC, 1 << 6, rec, 25);
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_NO_RECORDS);
	/* by another LID: none */
	sa_put16(rec, (uint16_t)lid(&e, "H3"));
	req(mad, GT, SA_ATTR_SMINFO_REC, 1, rec, 25);
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(e.w.len[0], SA_EMPTY_TABLE_LEN);
	env_down(&e);
}
END_TEST

/*
 * A new client that reuses the TID of a table still in transfer (no ACK
 * came: ibsim, or a client gone) gets its own answer, not the old one's
 * segments; the same request again while its answer goes is dropped.
 */
START_TEST(tid_reused)
{
	struct env e;
	env_up(&e);
	uint8_t mad[MAD_SIZE], rec[16] = { 0 };
	sa_put16(rec, (uint16_t)lid(&e, "L1"));
	sa_init_request(mad, GT, 0x77, SA_ATTR_SL2VL_REC, 0, 1, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(n_records(e.w.mad[0], 16), 25);
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 0);	/* a retry: still going */
	sa_put16(rec, (uint16_t)lid(&e, "H2"));
	sa_init_request(mad, GT, 0x77, SA_ATTR_SL2VL_REC, 0, 1, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(n_records(e.w.mad[0], 16), 1);
	ck_assert_uint_eq(sa_get16(e.w.mad[0] + 56), lid(&e, "H2"));
	env_down(&e);
}
END_TEST

int main(void)
{
	log_set_level(LOG_ERROR);
	Suite *s = suite_create("sa_tables");
	TCase *tc = tcase_create("sa_tables");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, malformed);
	tcase_add_test(tc, pkey_records);
	tcase_add_test(tc, sl2vl_and_vlarb_records);
	tcase_add_test(tc, mft_and_sminfo_records);
	tcase_add_test(tc, tid_reused);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
