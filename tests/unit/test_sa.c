/*
 * The SA (sm/sa/sa_server.c, sa_node.c, sa_path.c) in process: a model built from
 * net text and routed with minhop, published to an SA whose transport
 * records what it sends; requests go in through the receive path
 * (mad_dispatch_input) as they do in the daemon.  Table-driven malformed
 * requests get their status (or, where none is due, nothing); record
 * contents are checked byte by byte against the spec's layouts.
 */
#include <infiniband/mad.h>

#include "routing_testlib.h"
#include "sa_testlib.h"
#include "mad/smp.h"
#include "sm/base/log.h"
#include "sm/discover/sweep.h"

struct env {
	struct sm *sm;
	struct wire w;
	struct fabric f;
	struct lft_tables t;
	struct tb *b;
};

/* L1, L2 leaves (hosts H1, H2 on L1; H3, H4 on L2) under spines S1, S2;
 * L2's uplinks 1x, everything else 4x QDR */
static struct tb *fabric_text(void)
{
	return tb_two_leaves(0x10);
}

/*
 * The model as env_up() builds it; with d, published as a sweep's, with
 * d->pi_raw and d->si_raw (one zeroed PortInfo per port and SwitchInfo
 * per node) filled by fill() first.
 */
static void env_up_with(struct env *e, struct discovery *d,
			void (*fill)(struct discovery *d));

static void env_up(struct env *e)
{
	env_up_with(e, NULL, NULL);
}

static void env_up_with(struct env *e, struct discovery *d,
			void (*fill)(struct discovery *d))
{
	char err[256] = "";
	memset(e, 0, sizeof(*e));
	e->b = fabric_text();
	tb_build(&e->f, e->b, NULL, 0);
	for (uint32_t i = 0; i < e->f.n_ports; i++) {
		struct fab_port *p = &e->f.ports[i];
		p->mtu_cap = 5;
		if (p->remote == FAB_NONE)
			continue;
		int narrow = !strcmp(e->f.nodes[p->node].desc, "L2") && p->num >= 3;
		int far = e->f.nodes[e->f.ports[p->remote].node].desc[0] == 'L' &&
			  !strcmp(e->f.nodes[e->f.ports[p->remote].node].desc, "L2") &&
			  e->f.nodes[p->node].desc[0] == 'S';
		p->width_active = narrow || far ? TOPO_WIDTH_1X : TOPO_WIDTH_4X;
		p->speed_active = TOPO_SPEED_QDR;
		p->state = PORT_ACTIVE;
	}
	/* H1 holds the SM: IsSM */
	fabric_portp(&e->f, node_named(&e->f, "H1"), 1)->capmask = 0x0200084a;
	ck_assert_int_eq(lft_tables_alloc(&e->t, &e->f), 0);
	ck_assert_int_eq(routing_engine_find("minhop")->route(&e->f, NULL, &e->t,
							       err, sizeof(err)), 0);
	struct sm *sm = e->sm = sa_test_sm(&e->w, lid_of(&e->f, "H1"), NULL);
	if (d) {	/* the same arrays: e->f frees them */
		memset(d, 0, sizeof(*d));
		d->f = e->f;
		d->pi_raw = calloc(e->f.n_ports, SMP_DATA_SIZE);
		d->si_raw = calloc(e->f.n_nodes, SMP_DATA_SIZE);
		ck_assert(d->pi_raw && d->si_raw);
		fill(d);
		sm->sub.model = d;
		sa_publish(sm, &d->f, &e->t);
		sm->sub.model = NULL;
		free(d->pi_raw);
		free(d->si_raw);
	} else {
		sa_publish(sm, &e->f, &e->t);
	}
	ck_assert_ptr_nonnull(sa_get_view(sm));
	/* the SA keeps its own copy: the model may go */
	lft_tables_free(&e->t);
}

static void env_down(struct env *e)
{
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
	return sa_test_ask(e->sm, &e->w, lid(e, "H2"), mad, len);
}

#define req sa_test_req

/* ---- malformed and unsupported requests ---- */

struct bad {
	const char *what;
	uint8_t method;
	uint16_t attr;
	uint64_t mask;
	size_t len;
	int status;		/* -1: no answer at all */
	uint8_t resp_method;
};

START_TEST(malformed_table)
{
	struct env e;
	env_up(&e);
	const struct bad cases[] = {
		{ "unknown attribute", SA_METHOD_GET, 0x0099, 0, MAD_SIZE,
		  MAD_STS_METHOD_ATTR_UNSUPPORTED, SA_METHOD_GET_RESP },
		{ "unserved attribute (MultiPathRecord GetTable)", SA_METHOD_GET_TABLE, SA_ATTR_MULTIPATH_REC, 0,
		  MAD_SIZE, MAD_STS_METHOD_ATTR_UNSUPPORTED, SA_METHOD_GET_TABLE_RESP },
		{ "unknown method", 0x07 | 0x10, SA_ATTR_NODE_REC, 0, MAD_SIZE,
		  MAD_STS_METHOD_UNSUPPORTED, 0x97 },
		/* Delete is served (GUIDInfoRecord), not for NodeRecord */
		{ "Delete of a NodeRecord", SA_METHOD_DELETE, SA_ATTR_NODE_REC, 0, MAD_SIZE,
		  MAD_STS_METHOD_ATTR_UNSUPPORTED, SA_METHOD_DELETE_RESP },
		{ "GetTable of ClassPortInfo", SA_METHOD_GET_TABLE, SA_ATTR_CLASS_PORT_INFO, 0,
		  MAD_SIZE, MAD_STS_METHOD_ATTR_UNSUPPORTED, SA_METHOD_GET_TABLE_RESP },
		{ "NodeRecord mask bit 15", SA_METHOD_GET_TABLE, SA_ATTR_NODE_REC, 1ull << 15,
		  MAD_SIZE, SA_STS_REQ_INVALID, SA_METHOD_GET_TABLE_RESP },
		{ "NodeRecord all-ones mask", SA_METHOD_GET, SA_ATTR_NODE_REC, ~0ull,
		  MAD_SIZE, SA_STS_REQ_INVALID, SA_METHOD_GET_RESP },
		{ "PathRecord mask bit 23", SA_METHOD_GET_TABLE, SA_ATTR_PATH_REC, 1ull << 23,
		  MAD_SIZE, SA_STS_REQ_INVALID, SA_METHOD_GET_TABLE_RESP },
		{ "LinkRecord mask bit 5", SA_METHOD_GET_TABLE, SA_ATTR_LINK_REC, 1ull << 5,
		  MAD_SIZE, SA_STS_REQ_INVALID, SA_METHOD_GET_TABLE_RESP },
		{ "PathRecord half a ServiceID", SA_METHOD_GET_TABLE, SA_ATTR_PATH_REC, 1,
		  MAD_SIZE, SA_STS_INSUFFICIENT_COMPONENTS, SA_METHOD_GET_TABLE_RESP },
		{ "Get of every NodeRecord", SA_METHOD_GET, SA_ATTR_NODE_REC, 0, MAD_SIZE,
		  SA_STS_TOO_MANY_RECORDS, SA_METHOD_GET_RESP },
		{ "Get of every PortInfoRecord", SA_METHOD_GET, SA_ATTR_PORTINFO_REC, 0, MAD_SIZE,
		  SA_STS_TOO_MANY_RECORDS, SA_METHOD_GET_RESP },
		{ "Get of every LFTRecord", SA_METHOD_GET, SA_ATTR_LFT_REC, 0, MAD_SIZE,
		  SA_STS_TOO_MANY_RECORDS, SA_METHOD_GET_RESP },
		{ "Get of every LinkRecord", SA_METHOD_GET, SA_ATTR_LINK_REC, 0, MAD_SIZE,
		  SA_STS_TOO_MANY_RECORDS, SA_METHOD_GET_RESP },
		{ "Get of every SwitchInfoRecord", SA_METHOD_GET, SA_ATTR_SWITCHINFO_REC, 0,
		  MAD_SIZE, SA_STS_TOO_MANY_RECORDS, SA_METHOD_GET_RESP },
		{ "Get of every GUIDInfoRecord", SA_METHOD_GET, SA_ATTR_GUIDINFO_REC, 0,
		  MAD_SIZE, SA_STS_TOO_MANY_RECORDS, SA_METHOD_GET_RESP },
		{ "Get of every PathRecord", SA_METHOD_GET, SA_ATTR_PATH_REC, 0, MAD_SIZE,
		  SA_STS_TOO_MANY_RECORDS, SA_METHOD_GET_RESP },
		{ "a GetResp", SA_METHOD_GET_RESP, SA_ATTR_NODE_REC, 0, MAD_SIZE, -1, 0 },
		{ "a GetTableResp", SA_METHOD_GET_TABLE_RESP, SA_ATTR_NODE_REC, 0, MAD_SIZE, -1, 0 },
		{ "a TrapRepress", 0x07, SA_ATTR_NOTICE, 0, MAD_SIZE, -1, 0 },
		{ "a Report to the SA", SA_METHOD_REPORT, SA_ATTR_NOTICE, 0, MAD_SIZE,
		  MAD_STS_METHOD_UNSUPPORTED, SA_METHOD_REPORT_RESP },
		{ "shorter than the SA header", SA_METHOD_GET, SA_ATTR_NODE_REC, 0, 48, -1, 0 },
		{ "shorter than the RMPP header", SA_METHOD_GET, SA_ATTR_NODE_REC, 0, 30, -1, 0 },
		{ "shorter than a MAD header", SA_METHOD_GET, SA_ATTR_NODE_REC, 0, 12, -1, 0 },
		{ "longer than a MAD", SA_METHOD_GET, SA_ATTR_NODE_REC, 0, MAD_SIZE + 1, -1, 0 },
	};
	uint8_t mad[MAD_SIZE + 8];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad *c = &cases[i];
		memset(mad, 0, sizeof(mad));
		req(mad, c->method, c->attr, c->mask, NULL, 0);
		int n = ask(&e, mad, c->len);
		if (c->status < 0) {
			ck_assert_msg(n == 0, "%s: %d answers", c->what, n);
			continue;
		}
		ck_assert_msg(n == 1, "%s: %d answers", c->what, n);
		ck_assert_msg(mad_status(e.w.mad[0]) == c->status, "%s: status 0x%04x, want 0x%04x",
			      c->what, mad_status(e.w.mad[0]), c->status);
		ck_assert_msg(mad_method(e.w.mad[0]) == c->resp_method, "%s: method 0x%02x",
			      c->what, mad_method(e.w.mad[0]));
		ck_assert_uint_eq(mad_tid(e.w.mad[0]), mad_tid(mad));
		ck_assert_uint_eq(sa_sm_key(e.w.mad[0]), 0);
	}
	env_down(&e);
}
END_TEST

START_TEST(keys_state_and_rmpp)
{
	struct env e;
	env_up(&e);
	uint8_t mad[MAD_SIZE], rec[8] = { 0 };
	sa_put16(rec, (uint16_t)lid(&e, "H3"));
	req(mad, SA_METHOD_GET, SA_ATTR_NODE_REC, 1, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	/* an SM_Key neither 0 nor sa.sa_key: ignored, sm.sm_key's too; sa.sa_key: answered */
	sa_put64(mad + 36, 0x99);
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 0);
	e.sm->cfg.sm_key = 0x99;
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 0);
	ck_assert_uint_eq(sa_get_stats(e.sm)->dropped_key, 2);
	e.sm->cfg.sa_key = 0x99;
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(sa_sm_key(e.w.mad[0]), 0);
	sa_put64(mad + 36, 0);
	/* not master: nothing */
	e.sm->state = SMS_STANDBY;
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 0);
	e.sm->state = SMS_MASTER;
	/* an RMPP ACK and ABORT of no transfer: nothing */
	uint8_t ack[MAD_SIZE];
	req(ack, SA_METHOD_GET_TABLE, SA_ATTR_NODE_REC, 0, NULL, 0);
	ack[24] = RMPP_VERSION;
	ack[25] = RMPP_TYPE_ACK;
	ack[26] = RMPP_FLAG_ACTIVE;
	ck_assert_int_eq(ask(&e, ack, MAD_SIZE), 0);
	ack[25] = RMPP_TYPE_ABORT;
	ck_assert_int_eq(ask(&e, ack, MAD_SIZE), 0);
	ack[3] = SA_METHOD_GET_TABLE_RESP;
	ck_assert_int_eq(ask(&e, ack, MAD_SIZE), 0);
	/* truncated RMPP DATA: no crash, nothing */
	ack[3] = SA_METHOD_GET_TABLE;
	ack[25] = RMPP_TYPE_DATA;
	ck_assert_int_eq(ask(&e, ack, 40), 0);
	/* a request that comes as one RMPP DATA segment is answered */
	req(mad, SA_METHOD_GET_TABLE, SA_ATTR_NODE_REC, 1, rec, sizeof(rec));
	mad[24] = RMPP_VERSION;
	mad[25] = RMPP_TYPE_DATA;
	mad[26] = RMPP_FLAG_ACTIVE | RMPP_FLAG_FIRST | RMPP_FLAG_LAST;
	sa_put32(mad + 28, 1);
	sa_put32(mad + 32, 20 + 8);
	/* RMPP's ACK of the segment, then the answer */
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 2);
	ck_assert_uint_eq(e.w.mad[0][25], RMPP_TYPE_ACK);
	ck_assert_uint_eq(mad_method(e.w.mad[1]), SA_METHOD_GET_TABLE_RESP);
	ck_assert_uint_eq(e.w.len[1], 56 + 112);
	env_down(&e);
}
END_TEST

START_TEST(node_records)
{
	struct env e;
	env_up(&e);
	uint8_t mad[MAD_SIZE], rec[8] = { 0 };
	uint32_t h3 = lid(&e, "H3");
	sa_put16(rec, (uint16_t)h3);
	req(mad, SA_METHOD_GET, SA_ATTR_NODE_REC, 1, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	const uint8_t *r = e.w.mad[0] + 56;
	ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
	ck_assert_uint_eq(mad_method(e.w.mad[0]), SA_METHOD_GET_RESP);
	ck_assert_uint_eq(sa_attr_offset(e.w.mad[0]), 112 / 8);
	ck_assert_uint_eq(sa_get16(r), h3);
	ck_assert_uint_eq(r[4], 1);		/* BaseVersion */
	ck_assert_uint_eq(r[6], FAB_CA);	/* NodeType */
	ck_assert_uint_eq(r[7], 1);		/* NumPorts */
	ck_assert_uint_eq(sa_get64(r + 16), 0x1020);	/* NodeGUID */
	ck_assert_uint_eq(r[40], 1);		/* LocalPortNum */
	ck_assert_str_eq((const char *)r + 44, "H3");
	/* GetTable by LID: 56 + one stride, RMPP DATA First|Last */
	req(mad, SA_METHOD_GET_TABLE, SA_ATTR_NODE_REC, 1, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(e.w.len[0], 56 + 112);
	ck_assert_uint_eq(e.w.mad[0][25], RMPP_TYPE_DATA);
	ck_assert_uint_eq(e.w.mad[0][26] & 7, 7);
	ck_assert_uint_eq(rmpp_len(e.w.mad[0]), 20 + 112);
	/* nothing matches: the header alone */
	sa_put16(rec, 999);
	req(mad, SA_METHOD_GET_TABLE, SA_ATTR_NODE_REC, 1, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(e.w.len[0], SA_EMPTY_TABLE_LEN);
	ck_assert_uint_eq(sa_attr_offset(e.w.mad[0]), 0);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
	req(mad, SA_METHOD_GET, SA_ATTR_NODE_REC, 1, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_NO_RECORDS);
	/* by NodeType (bit 4): the 4 switches, each by its port 0 */
	memset(rec, 0, sizeof(rec));
	rec[6] = FAB_SWITCH;
	uint8_t big[112] = { 0 };
	big[6] = FAB_SWITCH;
	req(mad, SA_METHOD_GET_TABLE, SA_ATTR_NODE_REC, 1 << 4, big, sizeof(big));
	/* 448 bytes: three segments, the first alone until an ACK */
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(e.w.len[0], MAD_SIZE);
	ck_assert_uint_eq(e.w.mad[0][26] & 7, RMPP_FLAG_ACTIVE | RMPP_FLAG_FIRST);
	ck_assert_uint_eq(rmpp_len(e.w.mad[0]), 20 * 3 + 4 * 112);
	ck_assert_uint_eq(sa_attr_offset(e.w.mad[0]), 112 / 8);
	/* all 8 end ports: 896 bytes, five segments */
	req(mad, SA_METHOD_GET_TABLE, SA_ATTR_NODE_REC, 0, NULL, 0);
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(rmpp_len(e.w.mad[0]), 20 * 5 + 8 * 112);
	env_down(&e);
}
END_TEST

START_TEST(port_and_switch_records)
{
	struct env e;
	env_up(&e);
	uint8_t mad[MAD_SIZE], rec[72] = { 0 };
	/* saquery -s: CapabilityMask IsSM (bit 1) matched bitwise */
	sa_put32(rec + 4 + 20, 0x2);
	req(mad, SA_METHOD_GET_TABLE, SA_ATTR_PORTINFO_REC, 1ull << 7, rec, sizeof(rec));
	sa_put32(mad + 20, 0x80000000u);
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(e.w.len[0], 56 + 72);
	ck_assert_uint_eq(sa_get16(e.w.mad[0] + 56), lid(&e, "H1"));
	/* without bit 31, an exact match: nobody has capmask 2 */
	req(mad, SA_METHOD_GET_TABLE, SA_ATTR_PORTINFO_REC, 1ull << 7, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(e.w.len[0], SA_EMPTY_TABLE_LEN);
	/* a switch's ports under its LID: L1 has ports 0-4 */
	memset(rec, 0, sizeof(rec));
	sa_put16(rec, (uint16_t)lid(&e, "L1"));
	req(mad, SA_METHOD_GET_TABLE, SA_ATTR_PORTINFO_REC, 1, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(rmpp_len(e.w.mad[0]), 20 * 2 + 5 * 72);
	/* one port: LinkWidthActive of L2's uplink is 1x */
	sa_put16(rec, (uint16_t)lid(&e, "L2"));
	rec[2] = 3;
	req(mad, SA_METHOD_GET, SA_ATTR_PORTINFO_REC, 3, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
	ck_assert_uint_eq(e.w.mad[0][56 + 4 + 31], TOPO_WIDTH_1X);
	/* SwitchInfoRecord by LID */
	memset(rec, 0, sizeof(rec));
	sa_put16(rec, (uint16_t)lid(&e, "S1"));
	req(mad, SA_METHOD_GET, SA_ATTR_SWITCHINFO_REC, 1, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
	ck_assert_uint_eq(sa_attr_offset(e.w.mad[0]), 3);
	ck_assert_uint_eq(sa_get16(e.w.mad[0] + 56 + 4), 0xc000);	/* LinearFDBCap */
	/* LinkRecord from H3: to L2 port 1 */
	sa_put16(rec, (uint16_t)lid(&e, "H3"));
	req(mad, SA_METHOD_GET, SA_ATTR_LINK_REC, 1, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	const uint8_t *r = e.w.mad[0] + 56;
	ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
	ck_assert_uint_eq(r[2], 1);
	ck_assert_uint_eq(r[3], 1);
	ck_assert_uint_eq(sa_get16(r + 4), lid(&e, "L2"));
	/* LFTRecord: L1 block 0, H1's entry is port 1, its own LID port 0 */
	sa_put16(rec, (uint16_t)lid(&e, "L1"));
	sa_put16(rec + 2, 0);
	req(mad, SA_METHOD_GET, SA_ATTR_LFT_REC, 3, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	r = e.w.mad[0] + 56;
	ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
	ck_assert_uint_eq(r[8 + lid(&e, "H1")], 1);
	ck_assert_uint_eq(r[8 + lid(&e, "L1")], 0);
	ck_assert_uint_eq(r[8 + 63], LFT_DROP);
	/* GUIDInfoRecord: GUID0 is the port GUID */
	sa_put16(rec, (uint16_t)lid(&e, "H4"));
	req(mad, SA_METHOD_GET, SA_ATTR_GUIDINFO_REC, 1, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(sa_get64(e.w.mad[0] + 56 + 8),
			  fabric_portp(&e.f, node_named(&e.f, "H4"), 1)->guid);
	/* ClassPortInfo */
	req(mad, SA_METHOD_GET, SA_ATTR_CLASS_PORT_INFO, 0, NULL, 0);
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(e.w.mad[0][56], 1);
	ck_assert_uint_eq(e.w.mad[0][57], 2);
	ck_assert_uint_eq(sa_get16(e.w.mad[0] + 58), 0x2000);
	/* CapabilityMask2: IsMulticastFDBTopSupported (bit 3), above RespTimeValue */
	ck_assert_uint_eq(sa_get32(e.w.mad[0] + 60) >> 5, 0x8);
	env_down(&e);
}
END_TEST

static uint8_t *raw_port(struct discovery *d, const char *node, uint32_t num)
{
	uint32_t ni = node_named(&d->f, node);
	return d->pi_raw[d->f.nodes[ni].first_port + num];
}

/* What the sweep read: L1's port 2 entered by port 4, H3 without GUIDs. */
static void as_read(struct discovery *d)
{
	fabric_portp(&d->f, node_named(&d->f, "L1"), 0)->capmask = 0x48;
	smp_pi_set(raw_port(d, "L1", 0), IB_PORT_CAPMASK_F, 0x48);
	smp_pi_set(raw_port(d, "L1", 0), IB_PORT_LOCAL_PORT_F, 4);
	smp_pi_set(raw_port(d, "L1", 2), IB_PORT_LOCAL_PORT_F, 4);
	smp_pi_set(raw_port(d, "L1", 2), IB_PORT_HOQ_LIFE_F, 16);
	smp_pi_set(raw_port(d, "H4", 1), IB_PORT_GUID_CAP_F, 32);
	smp_pi_set(raw_port(d, "H3", 1), IB_PORT_GUID_CAP_F, 0);
}

/*
 * A switch port's PortInfoRecord as the port said it (LocalPortNum: the
 * port the SMP came in by; CapabilityMask, defined for end ports only;
 * HOQLife as the SM's Set left it), as OpenSM; every GUIDInfo block of a
 * port's GUIDCap, none for GUIDCap 0.
 */
START_TEST(records_as_read)
{
	struct env e;
	struct discovery d;
	uint8_t mad[MAD_SIZE], rec[72] = { 0 };
	env_up_with(&e, &d, as_read);
	sa_put16(rec, (uint16_t)lid(&e, "L1"));
	rec[2] = 2;
	req(mad, SA_METHOD_GET, SA_ATTR_PORTINFO_REC, 3, rec, 68);
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
	const uint8_t *pi = e.w.mad[0] + 56 + 4;
	ck_assert_uint_eq(smp_pi_get(pi, IB_PORT_LOCAL_PORT_F), 4);
	ck_assert_uint_eq(smp_pi_get(pi, IB_PORT_CAPMASK_F), 0);
	ck_assert_uint_eq(smp_pi_get(pi, IB_PORT_HOQ_LIFE_F), 16);
	rec[2] = 0;		/* port 0: its own CapabilityMask */
	req(mad, SA_METHOD_GET, SA_ATTR_PORTINFO_REC, 3, rec, 68);
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(smp_pi_get(e.w.mad[0] + 56 + 4, IB_PORT_CAPMASK_F), 0x48);
	ck_assert_uint_eq(smp_pi_get(e.w.mad[0] + 56 + 4, IB_PORT_LOCAL_PORT_F), 4);
	/* GUIDCap 32: blocks 0-3 */
	memset(rec, 0, sizeof(rec));
	sa_put16(rec, (uint16_t)lid(&e, "H4"));
	req(mad, SA_METHOD_GET_TABLE, SA_ATTR_GUIDINFO_REC, 1, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
	ck_assert_uint_eq(rmpp_len(e.w.mad[0]), 20 * 2 + 4 * 72);
	/* GUIDCap 0: none */
	sa_put16(rec, (uint16_t)lid(&e, "H3"));
	req(mad, SA_METHOD_GET_TABLE, SA_ATTR_GUIDINFO_REC, 1, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(e.w.len[0], SA_EMPTY_TABLE_LEN);
	env_down(&e);
}
END_TEST

/* A PathRecord GetTable from src to dst LID as saquery --src-to-dst asks it. */
static const uint8_t *path(struct env *e, uint32_t s, uint32_t d)
{
	uint8_t mad[MAD_SIZE], rec[64] = { 0 };
	sa_put16(rec + 40, (uint16_t)d);
	sa_put16(rec + 42, (uint16_t)s);
	rec[49] = 0x7f;
	req(mad, SA_METHOD_GET_TABLE, SA_ATTR_PATH_REC,
	    1 << 4 | 1 << 5 | 1 << 12, rec, sizeof(rec));
	ck_assert_int_eq(ask(e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(mad_status(e->w.mad[0]), 0);
	ck_assert_uint_eq(e->w.len[0], 56 + 64);
	return e->w.mad[0] + 56;
}

START_TEST(path_records)
{
	struct env e;
	env_up(&e);
	uint32_t h1 = lid(&e, "H1"), h2 = lid(&e, "H2"), h3 = lid(&e, "H3");
	const uint8_t *r = path(&e, h1, h2);
	ck_assert_uint_eq(sa_get16(r + 40), h2);
	ck_assert_uint_eq(sa_get16(r + 42), h1);
	ck_assert_uint_eq(r[55], 0x80 | 7);	/* 4x QDR */
	ck_assert_uint_eq(r[54], 0x80 | 5);
	ck_assert_uint_eq(r[49], 0x80);		/* reversible */
	ck_assert_uint_eq(sa_get16(r + 50), 0xffff);
	ck_assert_uint_eq(r[53] & 0xf, 0);	/* SL */
	ck_assert_uint_eq(r[56], 0x80 | 18);	/* one switch, LTV 18 */
	ck_assert_uint_eq(sa_get64(r + 16), 0x1011);	/* DGID GUID: H2's port */
	r = path(&e, h1, h3);
	ck_assert_uint_eq(r[55], 0x80 | 3);	/* the 1x QDR uplink: 10 Gb/s */
	ck_assert_uint_eq(r[56], 0x80 | 20);	/* three switches */
	r = path(&e, h3, h1);
	ck_assert_uint_eq(r[55], 0x80 | 3);
	/* Get by DGID and SGID */
	uint8_t mad[MAD_SIZE], rec[64] = { 0 };
	sa_put64(rec + 8, 0xfe80000000000000ull);
	sa_put64(rec + 16, 0x1031);
	sa_put64(rec + 24, 0xfe80000000000000ull);
	sa_put64(rec + 32, 0x1001);
	req(mad, SA_METHOD_GET, SA_ATTR_PATH_REC, 1 << 2 | 1 << 3, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
	ck_assert_uint_eq(sa_get16(e.w.mad[0] + 56 + 40), lid(&e, "H4"));
	/* a GUID nobody has, another subnet's prefix: INVALID_GID */
	sa_put64(rec + 16, 0x7777);
	req(mad, SA_METHOD_GET, SA_ATTR_PATH_REC, 1 << 2 | 1 << 3, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_INVALID_GID);
	sa_put64(rec + 16, 0x1031);
	sa_put64(rec + 8, 0x1234000000000000ull);
	req(mad, SA_METHOD_GET, SA_ATTR_PATH_REC, 1 << 2 | 1 << 3, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_INVALID_GID);
	/* a DLID nobody holds: NO_RECORDS; GID and LID naming two ports: REQ_INVALID */
	memset(rec, 0, sizeof(rec));
	sa_put16(rec + 40, 900);
	sa_put16(rec + 42, (uint16_t)h1);
	req(mad, SA_METHOD_GET, SA_ATTR_PATH_REC, 1 << 4 | 1 << 5, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_NO_RECORDS);
	sa_put16(rec + 40, (uint16_t)h3);
	sa_put64(rec + 8, 0xfe80000000000000ull);
	sa_put64(rec + 16, 0x1001);
	req(mad, SA_METHOD_GET, SA_ATTR_PATH_REC, 1 << 2 | 1 << 4, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_REQ_INVALID);
	/* rate selector "greater than 10 Gb/s" across the 1x link: none */
	memset(rec, 0, sizeof(rec));
	sa_put16(rec + 40, (uint16_t)h3);
	sa_put16(rec + 42, (uint16_t)h1);
	rec[55] = 0 << 6 | 3;
	req(mad, SA_METHOD_GET_TABLE, SA_ATTR_PATH_REC, 1 << 4 | 1 << 5 | 1 << 18 | 1 << 19,
	    rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(e.w.len[0], SA_EMPTY_TABLE_LEN);
	rec[55] = 1 << 6 | 7;	/* less than 40 Gb/s: the 10 Gb/s path */
	req(mad, SA_METHOD_GET_TABLE, SA_ATTR_PATH_REC, 1 << 4 | 1 << 5 | 1 << 18 | 1 << 19,
	    rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(e.w.len[0], 56 + 64);
	/* a bad MTU code with its selector: REQ_INVALID */
	rec[54] = 2 << 6 | 9;
	req(mad, SA_METHOD_GET_TABLE, SA_ATTR_PATH_REC, 1 << 4 | 1 << 5 | 1 << 16 | 1 << 17,
	    rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_REQ_INVALID);
	/* all paths from H1: 8 end ports, 8 records of 64: segments */
	memset(rec, 0, sizeof(rec));
	sa_put16(rec + 42, (uint16_t)h1);
	req(mad, SA_METHOD_GET_TABLE, SA_ATTR_PATH_REC, 1 << 5, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(rmpp_len(e.w.mad[0]), 20 * 3 + 8 * 64);
	/* NumbPath 0 in a GetTable: nothing */
	sa_put16(rec + 40, (uint16_t)h3);
	req(mad, SA_METHOD_GET_TABLE, SA_ATTR_PATH_REC, 1 << 4 | 1 << 5 | 1 << 12, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(e.w.len[0], SA_EMPTY_TABLE_LEN);
	env_down(&e);
}
END_TEST

/* Runs the SA's loop for ms (RMPP's timers); what it sent meanwhile is in e->w. */
static void run_for(struct env *e, unsigned ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };
	e->w.n = 0;
	event_base_loopexit(e->sm->base, &tv);
	event_base_dispatch(e->sm->base);
}

/*
 * A TID used again for another request while the answer to the first is
 * still in transfer (nothing ACKs it, as under ibsim): a new osmtest
 * process numbers its TIDs from 1 as the one before did.  The new request
 * gets its own answer and the old one stops; the same request again is a
 * retry, which the transfer going serves; once that transfer ended, the
 * same request is answered again.
 */
START_TEST(reused_tid)
{
	struct env e;
	env_up(&e);
	uint8_t mad[MAD_SIZE], rec[64] = { 0 };
	const uint64_t tid = 3;
	/* every NodeRecord: more than one segment */
	sa_init_request(mad, SA_METHOD_GET_TABLE, tid, SA_ATTR_NODE_REC, 0, 0, NULL, 0);
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(mad_attr_id(e.w.mad[0]), SA_ATTR_NODE_REC);
	ck_assert_uint_eq(rmpp_flags(e.w.mad[0]) & RMPP_FLAG_LAST, 0);
	/* the same request again: its retry, no second answer */
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 0);
	/* another request with that TID: every PathRecord from H1 */
	sa_put16(rec + 42, (uint16_t)lid(&e, "H1"));
	sa_init_request(mad, SA_METHOD_GET_TABLE, tid, SA_ATTR_PATH_REC, 0, 1 << 5, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(mad_attr_id(e.w.mad[0]), SA_ATTR_PATH_REC);
	ck_assert_uint_eq(mad_tid(e.w.mad[0]), tid);
	ck_assert_uint_eq(rmpp_len(e.w.mad[0]), 20 * 3 + 8 * 64);
	/* what is resent from now on is the PathRecords, never the old table */
	run_for(&e, 450);
	ck_assert_int_ge(e.w.n, 2);
	for (int i = 0; i < e.w.n && i < MAX_OUT; i++)
		ck_assert_uint_eq(mad_attr_id(e.w.mad[i]), SA_ATTR_PATH_REC);
	/* that transfer gives up (no ACK); the same request is then asked anew */
	run_for(&e, 1500);
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(mad_attr_id(e.w.mad[0]), SA_ATTR_PATH_REC);
	ck_assert_uint_eq(rmpp_flags(e.w.mad[0]) & RMPP_FLAG_FIRST, RMPP_FLAG_FIRST);
	env_down(&e);
}
END_TEST

/*
 * osmtest's PathRecords by GID pair ("-f v", osmtest_validate_against_db):
 * a port's GUID under a link-local prefix other than fe80:: (FE80::/10)
 * names the port; a multicast DGID names no port: no record, not
 * INVALID_GID; a site-local prefix of no subnet of ours: INVALID_GID.
 */
START_TEST(path_gid_pairs)
{
	struct env e;
	env_up(&e);
	uint8_t mad[MAD_SIZE], rec[64] = { 0 };
	const uint64_t mask = 1 << 2 | 1 << 3 | 1 << 12;	/* DGID, SGID, NumbPath */
	sa_put64(rec + 24, 0xfe80000000000000ull);
	sa_put64(rec + 32, 0x1011);			/* H2's port: the requester */
	rec[49] = 0x7f;
	/* fe80:0:0:ff::H4 */
	sa_put64(rec + 8, 0xfe800000000000ffull);
	sa_put64(rec + 16, 0x1031);
	req(mad, SA_METHOD_GET_TABLE, SA_ATTR_PATH_REC, mask, rec, sizeof(rec));
	ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
	ck_assert_uint_eq(e.w.len[0], 56 + 64);
	ck_assert_uint_eq(sa_get16(e.w.mad[0] + 56 + 40), lid(&e, "H4"));
	/* the same under the SGID */
	sa_put64(rec + 8, 0xfe80000000000000ull);
	sa_put64(rec + 24, 0xfebf0000000000ffull);
	req(mad, SA_METHOD_GET_TABLE, SA_ATTR_PATH_REC, mask, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
	ck_assert_uint_eq(e.w.len[0], 56 + 64);
	ck_assert_uint_eq(sa_get16(e.w.mad[0] + 56 + 42), lid(&e, "H2"));
	sa_put64(rec + 24, 0xfe80000000000000ull);
	/* IPoIB's broadcast MGID, link-local and site-local: an empty table */
	static const uint64_t mgids[][2] = {
		{ 0xff12401bffff0000ull, 0x00000000ffffffffull },
		{ 0xff15401bffff0000ull, 0x00000000ffffffffull },
	};
	for (size_t i = 0; i < 2; i++) {
		sa_put64(rec + 8, mgids[i][0]);
		sa_put64(rec + 16, mgids[i][1]);
		req(mad, SA_METHOD_GET_TABLE, SA_ATTR_PATH_REC, mask, rec, sizeof(rec));
		ck_assert_int_eq(ask(&e, mad, MAD_SIZE), 1);
		ck_assert_uint_eq(mad_status(e.w.mad[0]), 0);
		ck_assert_uint_eq(e.w.len[0], SA_EMPTY_TABLE_LEN);
		req(mad, SA_METHOD_GET, SA_ATTR_PATH_REC, mask, rec, sizeof(rec));
		ask(&e, mad, MAD_SIZE);
		ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_NO_RECORDS);
	}
	/* fec0::H4, site-local, no router: INVALID_GID */
	sa_put64(rec + 8, 0xfec0000000000000ull);
	sa_put64(rec + 16, 0x1031);
	req(mad, SA_METHOD_GET_TABLE, SA_ATTR_PATH_REC, mask, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_INVALID_GID);
	env_down(&e);
}
END_TEST

START_TEST(publish_replaces)
{
	struct env e;
	env_up(&e);
	const struct sa_view *v = sa_get_view(e.sm);
	uint64_t gen = v->gen;
	/* a second publish of another routing: answers follow it */
	struct lft_tables t;
	char err[256];
	ck_assert_int_eq(lft_tables_alloc(&t, &e.f), 0);
	ck_assert_int_eq(routing_engine_find("minhop")->route(&e.f, NULL, &t, err, sizeof(err)), 0);
	uint32_t l1 = node_named(&e.f, "L1"), h1 = lid(&e, "H1");
	lft_row(&t, t.row_of_node[l1])[h1] = 2;	/* H1's LID sent to H2 */
	sa_publish(e.sm, &e.f, &t);
	lft_tables_free(&t);
	ck_assert_uint_eq(sa_get_view(e.sm)->gen, gen + 1);
	uint8_t mad[MAD_SIZE], rec[64] = { 0 };
	sa_put16(rec + 40, (uint16_t)h1);
	sa_put16(rec + 42, (uint16_t)lid(&e, "H2"));
	req(mad, SA_METHOD_GET, SA_ATTR_PATH_REC, 1 << 4 | 1 << 5, rec, sizeof(rec));
	ask(&e, mad, MAD_SIZE);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_NO_RECORDS);
	env_down(&e);
}
END_TEST

int main(void)
{
	log_set_level(LOG_ERROR);
	Suite *s = suite_create("sa");
	TCase *tc = tcase_create("sa");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, malformed_table);
	tcase_add_test(tc, keys_state_and_rmpp);
	tcase_add_test(tc, node_records);
	tcase_add_test(tc, port_and_switch_records);
	tcase_add_test(tc, records_as_read);
	tcase_add_test(tc, path_records);
	tcase_add_test(tc, publish_replaces);
	tcase_add_test(tc, reused_tid);
	tcase_add_test(tc, path_gid_pairs);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
