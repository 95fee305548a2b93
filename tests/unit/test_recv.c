/*
 * The receive path (mad/dispatch.c) with the SM's own registrations
 * (sm/recv.c, the real handlers on a minimal SM) against a fake transport:
 * every (class, method) an SM port can receive -- all 256 classes, every
 * method the spec names and garbage ones, bad base and class versions,
 * truncated and oversized MADs -- gets exactly the response the spec
 * prescribes, or none, and each drop is counted by its reason.  Each MAD
 * is handed over in a buffer of exactly its length, so that ASan sees a
 * read past it.
 */
#include <check.h>
#include <event2/event.h>
#include <infiniband/mad.h>
#include <stdlib.h>
#include <string.h>

#include "mad/dispatch.h"
#include "mad/smp.h"
#include "mad/txn.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/recv.h"
#include "tests/unit/fakes.h"

#define ATTR_NODE_INFO	IB_ATTR_NODE_INFO
#define ATTR_VENDOR	0xff23
#define FROM_LID	17

struct rig {
	struct fake_net *fn;
	struct sm sm;
	struct mad_dispatch *d;
};

/* The election's hooks: nothing sweeps here. */
static void no_sweep(struct sm *sm) { (void)sm; }
static void no_answer(struct sm *sm, const char *why) { (void)sm; (void)why; }
static const struct smstate_hooks no_hooks = {
	.configure = no_sweep, .abandon = no_sweep, .light_answer = no_answer,
};

static void rig_up(struct rig *r)
{
	memset(r, 0, sizeof(*r));
	log_set_level(LOG_ERROR);
	r->fn = fake_net_new(0);
	r->sm.tr = r->fn->t;
	r->sm.tr.port_guid = 0x1234;
	r->sm.base = event_base_new();
	ck_assert_ptr_nonnull(r->sm.base);
	ck_assert_int_eq(smstate_init(&r->sm, &no_hooks), 0);
	r->sm.state = SMS_DISCOVERING;	/* handlers that change nothing */
	struct txn_params p = { .timeout_ms = 100, .retries = 0, .window = 8,
				.window_per_node = 8 };
	r->sm.txn = txn_new(&p, &r->sm.tr, fake_clock, r->fn);
	ck_assert_ptr_nonnull(r->sm.txn);
	r->sm.disp = sm_recv_new(&r->sm, &r->sm.tr);
	ck_assert_ptr_nonnull(r->sm.disp);
	r->d = r->sm.disp;
}

static void rig_down(struct rig *r)
{
	mad_dispatch_free(r->sm.disp);
	smstate_free(&r->sm);
	event_base_free(r->sm.base);
	txn_free(r->sm.txn);
	free(r->fn);
}

/* A request as a host would send it: 256 bytes, class version per class. */
static void build(uint8_t *m, uint8_t cls, uint8_t method, uint16_t attr)
{
	memset(m, 0, MAD_SIZE);
	m[0] = MAD_BASE_VERSION;
	m[1] = cls;
	m[2] = cls == IB_SA_CLASS || cls == IB_CM_CLASS || cls == IB_CC_CLASS ? 2 : 1;
	m[3] = method;
	mad_set_field64(m, 0, IB_MAD_TRID_F, 0x0000beef00000042ULL);
	mad_set_field(m, 0, IB_MAD_ATTRID_F, attr);
	mad_set_field(m, 0, IB_MAD_ATTRMOD_F, 0x5a);
	if (cls == IB_SMI_DIRECT_CLASS) {
		mad_set_field(m, 0, IB_DRSMP_HOPCNT_F, 2);
		mad_set_field(m, 0, IB_DRSMP_DRSLID_F, 0xffff);
		mad_set_field(m, 0, IB_DRSMP_DRDLID_F, 0xffff);
		m[128 + 1] = 3;
		m[128 + 2] = 7;
	}
}

static const struct mad_addr *from_host(uint8_t cls)
{
	static struct mad_addr smp = { .lid = FROM_LID };
	static struct mad_addr gmp = { .lid = FROM_LID, .qpn = 1,
				       .qkey = IB_DEFAULT_QP1_QKEY };
	return cls == IB_SMI_CLASS || cls == IB_SMI_DIRECT_CLASS ? &smp : &gmp;
}

/* Feeds len bytes of m in a buffer of exactly that size. */
static void feed(struct rig *r, const uint8_t *m, size_t len,
		 const struct mad_addr *from, int status)
{
	uint8_t *buf = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(buf);
	memcpy(buf, m, len < MAD_SIZE ? len : MAD_SIZE);
	if (len > MAD_SIZE)
		memset(buf + MAD_SIZE, 0xa5, len - MAD_SIZE);
	mad_dispatch_input(r->d, buf, len, from, status);
	free(buf);
}

/* What the spec (and ibsmd's choices) say a request gets. */
struct expect {
	int reply;		/* a response is sent */
	uint8_t method;		/* its method */
	int status;		/* its status */
	int drop;		/* else: the drop reason counted */
	int unsup;		/* the unsupported kind counted, or -1 */
};

static int served(uint8_t cls, uint8_t method, uint16_t attr)
{
	size_t n;
	const struct sm_recv_entry *t = sm_recv_table(&n);
	for (size_t i = 0; i < n; i++)
		if (t[i].mgmt_class == cls && t[i].method == method && t[i].attr == attr)
			return 1;
	return 0;
}

static int method_served(uint8_t cls, uint8_t method)
{
	size_t n;
	const struct sm_recv_entry *t = sm_recv_table(&n);
	for (size_t i = 0; i < n; i++)
		if (t[i].mgmt_class == cls && t[i].method == method)
			return 1;
	return 0;
}

static int is_smp(uint8_t cls)
{
	return cls == IB_SMI_CLASS || cls == IB_SMI_DIRECT_CLASS;
}

static struct expect expected(uint8_t cls, uint8_t method, uint16_t attr)
{
	struct expect x = { .unsup = -1 };
	if (method & IB_MAD_RESPONSE) {
		x.drop = MAD_DROP_UNMATCHED;	/* nobody asked: no answer */
		return x;
	}
	if (served(cls, method, attr)) {	/* the SM's own handlers */
		x.reply = 1;
		x.method = method == IB_MAD_METHOD_TRAP ? IB_MAD_METHOD_TRAP_REPRESS :
			   IB_MAD_METHOD_GET_RESPONSE;
		x.status = 0;
		/*
		 * These requests are zeroed: an SMInfo Set with modifier 0 from
		 * a NOTACTIVE SM is no legal Set (sm/smstate.c): invalid value.
		 */
		if (attr == IB_ATTR_SMINFO && method == IB_MAD_METHOD_SET)
			x.status = IB_MAD_STS_INV_ATTR_VALUE;
		return x;
	}
	if (!is_smp(cls))
		x.unsup = MAD_UNSUP_CLASS;
	else if (method_served(cls, method))
		x.unsup = MAD_UNSUP_ATTR;
	else
		x.unsup = MAD_UNSUP_METHOD;
	switch (method) {
	case IB_MAD_METHOD_SEND:
	case IB_MAD_METHOD_TRAP:
		x.drop = MAD_DROP_NO_RESPONSE;
		x.unsup = -1;
		return x;
	case IB_MAD_METHOD_TRAP_REPRESS:
		x.drop = MAD_DROP_TRAP_REPRESS;
		x.unsup = -1;
		return x;
	case IB_MAD_METHOD_GET:
	case IB_MAD_METHOD_SET:
		x.method = IB_MAD_METHOD_GET_RESPONSE;
		break;
	default:	/* Report, GetTable, Delete, ..., and garbage */
		x.method = method | IB_MAD_RESPONSE;
	}
	x.reply = 1;
	x.status = x.unsup == MAD_UNSUP_CLASS ? IB_MAD_STS_BAD_BASE_VER_OR_CLASS :
		   x.unsup == MAD_UNSUP_ATTR ? IB_MAD_STS_METHOD_ATTR_NOT_SUPPORTED :
		   IB_MAD_STS_METHOD_NOT_SUPPORTED;
	return x;
}

/* Checks one response the rig sent against the request and x. */
static void check_reply(const struct rig *r, int k, const uint8_t *req,
			const struct expect *x, const char *what)
{
	const uint8_t *m = r->fn->sent[k];
	const struct mad_addr *to = &r->fn->sent_to[k];
	uint8_t cls = req[1];
	ck_assert_msg(r->fn->sent_len[k] == MAD_SIZE, "%s: %zu bytes sent", what,
		      r->fn->sent_len[k]);
	ck_assert_msg(m[3] == x->method, "%s: method 0x%02x, want 0x%02x", what,
		      m[3], x->method);
	ck_assert_msg(smp_status(m) == x->status, "%s: status 0x%04x, want 0x%04x",
		      what, smp_status(m), x->status);
	ck_assert_msg(m[1] == cls && !memcmp(m + 8, req + 8, 16),
		      "%s: class, TID, attribute or modifier not echoed", what);
	if (cls == IB_SMI_DIRECT_CLASS) {
		ck_assert_msg(mad_get_field((void *)m, 0, IB_DRSMP_DIRECTION_F) == 1,
			      "%s: D bit not set", what);
		ck_assert_msg(to->lid == 0xffff, "%s: not sent along the return path", what);
		ck_assert_msg(!memcmp(m + 128, req + 128, 64), "%s: path changed", what);
	} else {
		ck_assert_msg(to->lid == FROM_LID, "%s: sent to LID %u", what, to->lid);
		ck_assert_msg(to->qpn == from_host(cls)->qpn, "%s: sent to QP %u", what,
			      to->qpn);
	}
}

/* One request in; exactly what x says comes out, and is counted. */
static void one(struct rig *r, const uint8_t *m, size_t len,
		const struct expect *x, const char *what)
{
	struct mad_dispatch_stats before = *mad_dispatch_get_stats(r->d);
	int sent = r->fn->n_sent;
	feed(r, m, len, from_host(m[1]), 0);
	const struct mad_dispatch_stats *after = mad_dispatch_get_stats(r->d);
	ck_assert_uint_eq(after->received, before.received + 1);
	if (!x->reply) {
		ck_assert_msg(r->fn->n_sent == sent, "%s: answered (method 0x%02x)",
			      what, r->fn->sent[sent][3]);
		ck_assert_msg(after->dropped[x->drop] == before.dropped[x->drop] + 1,
			      "%s: not counted as %s", what, mad_drop_name(x->drop));
		return;
	}
	ck_assert_msg(r->fn->n_sent == sent + 1, "%s: %d responses", what,
		      r->fn->n_sent - sent);
	check_reply(r, sent, m, x, what);
	if (x->unsup >= 0)
		ck_assert_msg(after->unsupported[x->unsup] == before.unsupported[x->unsup] + 1,
			      "%s: not counted as %s", what, mad_unsup_name(x->unsup));
	/* no ping-pong: the response fed back is dropped, unanswered */
	uint8_t back[MAD_SIZE];
	memcpy(back, r->fn->sent[sent], MAD_SIZE);
	r->fn->n_sent = sent;	/* keep the record small */
	feed(r, back, MAD_SIZE, from_host(back[1]), 0);
	ck_assert_msg(r->fn->n_sent == sent, "%s: the response was answered", what);
}

static const uint8_t methods[] = {
	IB_MAD_METHOD_GET, IB_MAD_METHOD_SET, IB_MAD_METHOD_GET_RESPONSE,
	IB_MAD_METHOD_SEND, IB_MAD_METHOD_TRAP, IB_MAD_METHOD_REPORT,
	IB_MAD_METHOD_REPORT_RESPONSE, IB_MAD_METHOD_TRAP_REPRESS,
	IB_MAD_METHOD_GET_TABLE, IB_MAD_METHOD_GET_TABLE_RESPONSE,
	IB_MAD_METHOD_GET_TRACE_TABLE, IB_MAD_METHOD_GETMULTI,
	IB_MAD_METHOD_DELETE, IB_MAD_METHOD_DELETE_RESPONSE,
	/* garbage */
	0x00, 0x04, 0x08, 0x11, 0x16, 0x7f, 0x80, 0x87, 0xff,
};

static const uint16_t attrs[] = {
	IB_ATTR_SMINFO, MAD_ATTR_NOTICE, ATTR_NODE_INFO, MAD_ATTR_CLASS_PORT_INFO,
	ATTR_VENDOR,
};

START_TEST(t_every_class_and_method)
{
	struct rig r;
	rig_up(&r);
	uint8_t cls = (uint8_t)_i;
	for (size_t mi = 0; mi < sizeof(methods); mi++) {
		for (size_t ai = 0; ai < sizeof(attrs) / sizeof(attrs[0]); ai++) {
			uint8_t m[MAD_SIZE];
			char what[96];
			build(m, cls, methods[mi], attrs[ai]);
			snprintf(what, sizeof(what), "class 0x%02x method 0x%02x attr 0x%04x",
				 cls, methods[mi], attrs[ai]);
			struct expect x = expected(cls, methods[mi], attrs[ai]);
			one(&r, m, MAD_SIZE, &x, what);
		}
	}
	rig_down(&r);
}
END_TEST

/* The SM's own answers carry its SMInfo. */
START_TEST(t_sminfo_answered)
{
	struct rig r;
	rig_up(&r);
	uint8_t m[MAD_SIZE];
	build(m, IB_SMI_DIRECT_CLASS, IB_MAD_METHOD_GET, IB_ATTR_SMINFO);
	feed(&r, m, MAD_SIZE, from_host(m[1]), 0);
	ck_assert_int_eq(r.fn->n_sent, 1);
	struct smp_sminfo info;
	smp_decode_sminfo(r.fn->sent[0] + SMP_DATA_OFFS, &info);
	ck_assert_uint_eq(info.guid, 0x1234);
	ck_assert_uint_eq(info.state, SMS_DISCOVERING);
	ck_assert_uint_eq(mad_dispatch_get_stats(r.d)->handled, 1);
	rig_down(&r);
}
END_TEST

/* Bad base version: "bad version" to a request, nothing to the rest. */
START_TEST(t_bad_base_version)
{
	static const uint8_t versions[] = { 0, 2, 0x80, 0xff };
	static const uint8_t classes[] = { IB_SMI_CLASS, IB_SMI_DIRECT_CLASS,
					   IB_SA_CLASS, IB_PERFORMANCE_CLASS, 0x32, 0xff };
	struct rig r;
	rig_up(&r);
	for (size_t v = 0; v < sizeof(versions); v++) {
		for (size_t c = 0; c < sizeof(classes); c++) {
			for (size_t mi = 0; mi < sizeof(methods); mi++) {
				uint8_t m[MAD_SIZE];
				char what[96];
				build(m, classes[c], methods[mi], IB_ATTR_SMINFO);
				m[0] = versions[v];
				snprintf(what, sizeof(what), "base version %u class 0x%02x method 0x%02x",
					 versions[v], classes[c], methods[mi]);
				struct expect x = expected(classes[c], methods[mi], IB_ATTR_SMINFO);
				if (x.reply || x.drop == MAD_DROP_NO_RESPONSE ||
				    x.drop == MAD_DROP_TRAP_REPRESS) {
					if (x.reply) {
						x.status = IB_MAD_STS_BAD_BASE_VER_OR_CLASS;
						x.method = mad_response_method(methods[mi]);
					}
					x.unsup = MAD_UNSUP_BASE_VERSION;
				}
				if (!x.reply)
					x.unsup = -1;
				one(&r, m, MAD_SIZE, &x, what);
			}
		}
	}
	rig_down(&r);
}
END_TEST

/* A served class in another class version: "bad version". */
START_TEST(t_bad_class_version)
{
	struct rig r;
	rig_up(&r);
	static const uint8_t classes[] = { IB_SMI_CLASS, IB_SMI_DIRECT_CLASS };
	for (size_t c = 0; c < sizeof(classes); c++) {
		for (unsigned v = 0; v < 256; v++) {
			if (v == 1)
				continue;
			uint8_t m[MAD_SIZE];
			char what[64];
			build(m, classes[c], IB_MAD_METHOD_GET, IB_ATTR_SMINFO);
			m[2] = (uint8_t)v;
			snprintf(what, sizeof(what), "class 0x%02x version %u", classes[c], v);
			struct expect x = { .reply = 1, .method = IB_MAD_METHOD_GET_RESPONSE,
					    .status = IB_MAD_STS_BAD_BASE_VER_OR_CLASS,
					    .unsup = MAD_UNSUP_CLASS_VERSION };
			one(&r, m, MAD_SIZE, &x, what);
		}
	}
	ck_assert_uint_eq(mad_dispatch_get_stats(r.d)->handled, 0);
	rig_down(&r);
}
END_TEST

/*
 * Lengths: shorter than a header, or than the class needs (an SMP is 256
 * bytes, an SA MAD 56, vendor range 2 40), is dropped as truncated; longer
 * than MAD_SIZE as oversized; a short GMP of a class with no more needs is
 * answered, padded to 256 bytes.
 */
START_TEST(t_lengths)
{
	static const size_t lens[] = { 0, 1, 23, 24, 39, 55, 255, 257, 4096 };
	static const uint8_t classes[] = { IB_SMI_CLASS, IB_SMI_DIRECT_CLASS, IB_SA_CLASS,
					   IB_PERFORMANCE_CLASS, 0x32, 0x80, 0x02 };
	struct rig r;
	rig_up(&r);
	for (size_t c = 0; c < sizeof(classes); c++) {
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			uint8_t m[MAD_SIZE];
			char what[64];
			size_t len = lens[l];
			build(m, classes[c], IB_MAD_METHOD_GET, IB_ATTR_SMINFO);
			snprintf(what, sizeof(what), "class 0x%02x, %zu bytes", classes[c], len);
			struct expect x = expected(classes[c], IB_MAD_METHOD_GET, IB_ATTR_SMINFO);
			if (len > MAD_SIZE) {
				x = (struct expect){ .drop = MAD_DROP_OVERSIZED, .unsup = -1 };
			} else if (len < MAD_HDR_SIZE || len < mad_class_min_len(classes[c])) {
				x = (struct expect){ .drop = MAD_DROP_TRUNCATED, .unsup = -1 };
			}
			one(&r, m, len, &x, what);
			if (x.reply)	/* padded with zeros, not with what lay beyond */
				for (size_t i = len; i < MAD_SIZE; i++)
					ck_assert_uint_eq(r.fn->sent[r.fn->n_sent][i], 0);
		}
	}
	/* the thresholds themselves */
	ck_assert_uint_eq(mad_class_min_len(IB_SMI_CLASS), MAD_SIZE);
	ck_assert_uint_eq(mad_class_min_len(IB_SA_CLASS), IB_SA_DATA_OFFS);
	ck_assert_uint_eq(mad_class_min_len(0x32), IB_VENDOR_RANGE2_DATA_OFFS);
	ck_assert_uint_eq(mad_class_min_len(IB_PERFORMANCE_CLASS), MAD_HDR_SIZE);
	rig_down(&r);
}
END_TEST

/* MADs with a transport status: ours bounced go to the transactions, others are counted. */
START_TEST(t_bounced_and_answers)
{
	struct rig r;
	rig_up(&r);
	uint8_t m[MAD_SIZE];
	struct mad_addr to;
	smp_init_dr(m, IB_MAD_METHOD_GET, ATTR_NODE_INFO, 0, (uint8_t[]){ 0, 1 }, 1);
	smp_dr_address(&to);
	struct done_rec rec;
	memset(&rec, 0, sizeof(rec));
	ck_assert_int_eq(txn_submit(r.sm.txn, m, MAD_SIZE, &to, TXN_NO_DEST,
				    done_record, &rec), 0);
	ck_assert_int_eq(r.fn->n_sent, 1);
	/* a bounce that is not ours, then a forged answer: both counted */
	build(m, IB_SMI_DIRECT_CLASS, IB_MAD_METHOD_GET, ATTR_NODE_INFO);
	feed(&r, m, MAD_SIZE, &to, 110);
	uint8_t resp[MAD_SIZE];
	fake_response(r.fn, 0, resp);
	mad_set_field(resp, 0, IB_MAD_ATTRMOD_F, 9);
	feed(&r, resp, MAD_SIZE, &to, 0);
	const struct mad_dispatch_stats *st = mad_dispatch_get_stats(r.d);
	ck_assert_uint_eq(st->dropped[MAD_DROP_BOUNCED], 1);
	ck_assert_uint_eq(st->dropped[MAD_DROP_UNMATCHED], 1);
	ck_assert_int_eq(rec.calls, 0);
	ck_assert_int_eq(r.fn->n_sent, 1);
	/* the real answer */
	fake_response(r.fn, 0, resp);
	feed(&r, resp, MAD_SIZE, &to, 0);
	ck_assert_uint_eq(st->answers, 1);
	ck_assert_int_eq(rec.calls, 1);
	ck_assert_int_eq(rec.status, TXN_OK);
	rig_down(&r);
}
END_TEST

/* A LID-routed request from LID 0 has nowhere to go back to. */
START_TEST(t_no_return_address)
{
	struct rig r;
	rig_up(&r);
	static const struct mad_addr lid0 = { .lid = 0, .qpn = 1 };
	uint8_t m[MAD_SIZE];
	build(m, IB_PERFORMANCE_CLASS, IB_MAD_METHOD_GET, MAD_ATTR_CLASS_PORT_INFO);
	feed(&r, m, MAD_SIZE, &lid0, 0);
	ck_assert_int_eq(r.fn->n_sent, 0);
	ck_assert_uint_eq(mad_dispatch_get_stats(r.d)->dropped[MAD_DROP_NO_ADDRESS], 1);
	/* a directed-route one goes back along its path */
	build(m, IB_SMI_DIRECT_CLASS, IB_MAD_METHOD_GET, ATTR_NODE_INFO);
	feed(&r, m, MAD_SIZE, &lid0, 0);
	ck_assert_int_eq(r.fn->n_sent, 1);
	rig_down(&r);
}
END_TEST

/* ---- the dispatcher's API, with test handlers ---- */

struct calls {
	int n;
	int ret;
	size_t len;
};

static int test_handler(void *ctx, const uint8_t *mad, size_t len,
			const struct mad_addr *from)
{
	struct calls *c = ctx;
	c->n++;
	c->len = len;
	return c->ret;
}

START_TEST(t_register_rules)
{
	struct fake_net *fn = fake_net_new(0);
	struct mad_dispatch *d = mad_dispatch_new(&fn->t);
	struct calls c = { .ret = MAD_DONE };
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(mad_dispatch_register(d, IB_SA_CLASS, 2, IB_MAD_METHOD_GET,
					       0x0011, test_handler, &c), 0);
	/* the same key twice, another class version, a response method, no handler */
	ck_assert_int_eq(mad_dispatch_register(d, IB_SA_CLASS, 2, IB_MAD_METHOD_GET,
					       0x0011, test_handler, &c), -1);
	ck_assert_int_eq(mad_dispatch_register(d, IB_SA_CLASS, 1, IB_MAD_METHOD_GET,
					       0x0012, test_handler, &c), -1);
	ck_assert_int_eq(mad_dispatch_register(d, IB_SA_CLASS, 2,
					       IB_MAD_METHOD_GET_RESPONSE, 0x0012,
					       test_handler, &c), -1);
	ck_assert_int_eq(mad_dispatch_register(d, IB_SA_CLASS, 2, IB_MAD_METHOD_SET,
					       0x0012, NULL, &c), -1);
	/* many: the table grows and every one is still found */
	for (unsigned a = 0x100; a < 0x400; a++)
		ck_assert_int_eq(mad_dispatch_register(d, IB_SA_CLASS, 2,
						       IB_MAD_METHOD_GET_TABLE, (uint16_t)a,
						       test_handler, &c), 0);
	static const struct mad_addr from = { .lid = 5, .qpn = 1 };
	uint8_t m[MAD_SIZE];
	for (unsigned a = 0x100; a < 0x400; a += 97) {
		build(m, IB_SA_CLASS, IB_MAD_METHOD_GET_TABLE, (uint16_t)a);
		mad_dispatch_input(d, m, MAD_SIZE, &from, 0);
	}
	ck_assert_int_eq(c.n, 8);
	ck_assert_int_eq(fn->n_sent, 0);
	mad_dispatch_free(d);
	free(fn);
}
END_TEST

/* What a handler returns: done, a status to answer with, or a refusal. */
START_TEST(t_handler_returns)
{
	struct fake_net *fn = fake_net_new(0);
	struct mad_dispatch *d = mad_dispatch_new(&fn->t);
	struct calls c = { .ret = MAD_DONE };
	ck_assert_int_eq(mad_dispatch_register(d, 0x32, 1, IB_MAD_METHOD_GET, 0,
					       test_handler, &c), 0);
	static const struct mad_addr from = { .lid = 5, .qpn = 1 };
	uint8_t m[MAD_SIZE];
	build(m, 0x32, IB_MAD_METHOD_GET, 0);
	mad_dispatch_input(d, m, 100, &from, 0);
	ck_assert_int_eq(c.n, 1);
	ck_assert_uint_eq(c.len, 100);
	ck_assert_int_eq(fn->n_sent, 0);
	c.ret = IB_MAD_STS_INV_ATTR_VALUE;
	mad_dispatch_input(d, m, MAD_SIZE, &from, 0);
	ck_assert_int_eq(fn->n_sent, 1);
	ck_assert_uint_eq(fn->sent[0][3], IB_MAD_METHOD_GET_RESPONSE);
	ck_assert_int_eq(smp_status(fn->sent[0]), IB_MAD_STS_INV_ATTR_VALUE);
	ck_assert_uint_eq(fn->sent_to[0].qkey, IB_DEFAULT_QP1_QKEY);
	ck_assert_uint_eq(mad_dispatch_get_stats(d)->status_replies, 1);
	c.ret = MAD_DROP;
	mad_dispatch_input(d, m, MAD_SIZE, &from, 0);
	ck_assert_int_eq(fn->n_sent, 1);
	ck_assert_uint_eq(mad_dispatch_get_stats(d)->dropped[MAD_DROP_REFUSED], 1);
	/* a failing transport is counted */
	c.ret = 0;
	fn->fail_sends = 1;
	mad_dispatch_input(d, m, MAD_SIZE, &from, 0);
	ck_assert_uint_eq(mad_dispatch_get_stats(d)->dropped[MAD_DROP_SEND_FAILED], 1);
	/* Set on the class: method not supported; Get of another attribute: attribute */
	build(m, 0x32, IB_MAD_METHOD_SET, 0);
	mad_dispatch_input(d, m, MAD_SIZE, &from, 0);
	ck_assert_int_eq(smp_status(fn->sent[fn->n_sent - 1]), IB_MAD_STS_METHOD_NOT_SUPPORTED);
	build(m, 0x32, IB_MAD_METHOD_GET, 1);
	mad_dispatch_input(d, m, MAD_SIZE, &from, 0);
	ck_assert_int_eq(smp_status(fn->sent[fn->n_sent - 1]),
			 IB_MAD_STS_METHOD_ATTR_NOT_SUPPORTED);
	/* unregistered: the class is unsupported again */
	ck_assert_int_eq(mad_dispatch_unregister(d, 0x32, IB_MAD_METHOD_GET, 0), 0);
	ck_assert_int_eq(mad_dispatch_unregister(d, 0x32, IB_MAD_METHOD_GET, 0), -1);
	build(m, 0x32, IB_MAD_METHOD_GET, 0);
	mad_dispatch_input(d, m, MAD_SIZE, &from, 0);
	ck_assert_int_eq(smp_status(fn->sent[fn->n_sent - 1]),
			 IB_MAD_STS_BAD_BASE_VER_OR_CLASS);
	ck_assert_int_eq(c.n, 4);
	mad_dispatch_free(d);
	free(fn);
}
END_TEST

/* A response's RMPP header is cleared; the OUI of vendor range 2 stays. */
START_TEST(t_make_response_rmpp)
{
	uint8_t m[MAD_SIZE];
	build(m, IB_SA_CLASS, IB_MAD_METHOD_GET_TABLE, 0x0011);
	memset(m + MAD_HDR_SIZE, 0xee, MAD_RMPP_HDR_END - MAD_HDR_SIZE + 4);
	mad_make_response(m, IB_MAD_STS_INV_ATTR_VALUE);
	ck_assert_uint_eq(m[3], IB_MAD_METHOD_GET_TABLE_RESPONSE);
	for (int i = MAD_HDR_SIZE; i < MAD_RMPP_HDR_END; i++)
		ck_assert_uint_eq(m[i], 0);
	ck_assert_uint_eq(m[MAD_RMPP_HDR_END], 0xee);
	ck_assert_uint_eq(mad_response_method(IB_MAD_METHOD_DELETE),
			  IB_MAD_METHOD_DELETE_RESPONSE);
	ck_assert_uint_eq(mad_response_method(IB_MAD_METHOD_REPORT),
			  IB_MAD_METHOD_REPORT_RESPONSE);
	ck_assert_uint_eq(mad_response_method(IB_MAD_METHOD_SEND), 0);
	ck_assert_uint_eq(mad_response_method(IB_MAD_METHOD_TRAP_REPRESS), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("recv");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, t_every_class_and_method, 0, 256);
	tcase_add_test(tc, t_sminfo_answered);
	tcase_add_test(tc, t_bad_base_version);
	tcase_add_test(tc, t_bad_class_version);
	tcase_add_test(tc, t_lengths);
	tcase_add_test(tc, t_bounced_and_answers);
	tcase_add_test(tc, t_no_return_address);
	tcase_add_test(tc, t_register_rules);
	tcase_add_test(tc, t_handler_returns);
	tcase_add_test(tc, t_make_response_rmpp);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
