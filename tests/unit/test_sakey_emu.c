/*
 * Trusted and untrusted SA requests (sm/sa/sa_server.h, sa_trusted;
 * ibsmd(8), "Trusted requests") on the emulator: ibsmd is the SM of the
 * 12-host tree (emu_tree_text) on H0, its policy sm.sm_key SM_KEY and
 * sa.sa_key SA_KEY; SA clients (traps/host/saclient.h) on H1..H4 send in
 * the SA header's SM_Key field (IBA vol. 1 §15.2.1.1) SA_KEY (trusted),
 * 0 (untrusted), SM_KEY (the SM's key, not the SA's) and BAD_KEY:
 *
 *   bad_keys: the last two are never answered (C15-0.1.5), counted in the
 *     SA's status (sa.dropped.sm_key) and metrics (ibsmd_sa_bad_key_total),
 *     logged; the first two are answered.
 *   pkey_records: a GetTable of P_KeyTableRecords is answered to the
 *     trusted host, refused ERR_REQ_INVALID to the untrusted one
 *     (C15-0.1.18), counted (sa.untrusted, ibsmd_sa_untrusted_total) and
 *     logged.
 *   security_traps: an InformInfo Set subscribing to trap 256 (Bad M_Key)
 *     is refused ERR_REQ_INVALID to the untrusted host, counted, and
 *     accepted from the trusted one (C15-0.2-1.16); trap 128 is for anyone.
 *   inform_records: the InformInfoRecord of the trusted host's
 *     subscription carries its QPN to the trusted host, 0 to the
 *     untrusted one (C15-0.2-1.16).
 */
#include <check.h>
#include <errno.h>
#include <infiniband/mad.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu.h"
#include "mad/sa.h"
#include "sm/ctl/metrics.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/sa/sa_server.h"
#include "sm/base/topo.h"
#include "traps/host/saclient.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "emu_testlib.h"

#define SM_KEY		0x5111000000000001ULL
#define SA_KEY		0x5a5a000000000002ULL
#define BAD_KEY		0x0badULL
#define ASK_TIMEOUT_MS	150	/* a dropped request: no answer in this */
#define PKTR_SIZE	72
#define IIR_SIZE	60	/* SubscriberGID, Enum, reserved, InformInfo */
#define IIR_QPN		(24 + 28)	/* InformInfo's QPN: 24 bits */
#define TRAP_BAD_MKEY	256
#define TRAP_PORT_STATE	128

enum asker { TRUSTED, UNTRUSTED, SMKEY, BADKEY, N_ASKERS };

static const uint64_t asker_key[N_ASKERS] = { SA_KEY, 0, SM_KEY, BAD_KEY };

struct run {
	struct emu_net net;
	struct sm *sm;
	struct emu_sahost h[N_ASKERS];	/* H1 .. H4 */
};

static void run_up(struct run *r)
{
	struct emu_net *n = &r->net;
	memset(r, 0, sizeof(*r));
	emu_world_open(&n->topo, &n->e, &n->base, n->state, sizeof(n->state),
		       &(struct emu_world_opts){ .name = "sakey", .seed = 3 });
	r->sm = emu_sm_new(n->state, 50);
	r->sm->cfg.port_guid = emu_host_guid(0);
	emu_sm_policy(r->sm, "sm:\n  sm_key: 0x5111000000000001\n"
			     "sa:\n  sa_key: 0x5a5a000000000002\n");
	ck_assert_uint_eq(r->sm->cfg.sa_key, SA_KEY);
	emu_sm_start(r->sm, n->base, n->e);
	emu_sm_run(n->base, r->sm, 30000, 1);
	n->sm_lid = r->sm->sub.sm_lid;
	for (int i = 0; i < N_ASKERS; i++) {
		struct saclient_params p = { .timeout_ms = ASK_TIMEOUT_MS, .retries = 0,
					     .sa_key = asker_key[i] };
		emu_sahosts_attach(n, &r->h[i], 1 + i, 1, &p);
	}
	/* IsSM cleared is a capability change (trap 144): let its sweep pass */
	emu_sm_run(n->base, r->sm, 200, 0);
	emu_sm_run(n->base, r->sm, 30000, 1);
}

static void run_down(struct run *r)
{
	emu_sahosts_detach(r->h, N_ASKERS);
	ck_assert_uint_eq(emu_violations(r->net.e), 0);
	sm_shutdown(r->sm);
	free(r->sm);
	emu_net_down(&r->net);
}

/* One query from asker who, run to its end; returns its status. */
static int ask(struct run *r, enum asker who, uint8_t method, uint16_t attr,
	       uint64_t mask, const void *rec, size_t len, struct emu_sa_answer *a)
{
	memset(a, 0, sizeof(*a));
	ck_assert_int_eq(saclient_query(r->h[who].c, method, attr, 0, mask, rec, len,
					emu_sa_answered, a), 0);
	ck_assert_msg(emu_run_until(r->net.base, &a->done, 5000), "no end to the query");
	return a->status;
}

/* A subscription (Subscribe 1) to trap from asker who; returns its status. */
static int subscribe(struct run *r, enum asker who, uint16_t trap)
{
	struct saclient_inform ii;
	struct emu_sa_answer a = { 0 };
	saclient_inform_default(&ii, trap);
	ck_assert_int_eq(saclient_inform(r->h[who].c, &ii, 1, emu_sa_answered, &a), 0);
	ck_assert_msg(emu_run_until(r->net.base, &a.done, 5000), "no end to the Set");
	return a.status;
}

/* The SA's counter name under "sa" (and "sa.dropped" when dropped) of the status. */
static json_int_t status_count(const struct run *r, const char *name, int dropped)
{
	json_t *o = json_object();
	sa_to_ctl(r->sm, o);
	json_t *sa = json_object_get(o, "sa");
	ck_assert_ptr_nonnull(sa);
	json_t *v = json_object_get(dropped ? json_object_get(sa, "dropped") : sa, name);
	ck_assert_msg(json_is_integer(v), "no sa%s.%s in the status", dropped ? ".dropped" : "",
		      name);
	json_int_t n = json_integer_value(v);
	json_decref(o);
	return n;
}

START_TEST(bad_keys)
{
	struct run r;
	run_up(&r);
	struct emu_log log;
	struct emu_sa_answer a;
	uint8_t rec[8] = { 0 };
	emu_log_capture(&log, LOG_NOTICE);
	for (int i = 0; i < N_ASKERS; i++) {
		sa_put16(rec, (uint16_t)r.h[i].lid);
		int st = ask(&r, (enum asker)i, SA_METHOD_GET, SA_ATTR_NODE_REC, 1, rec,
			     sizeof(rec), &a);
		if (i == TRUSTED || i == UNTRUSTED) {
			ck_assert_msg(st == 0 && a.n == 1, "asker %d: status %d, %zu records",
				      i, st, a.n);
			ck_assert_uint_eq(sa_get64(a.rec + 4 + 20), r.h[i].guid);	/* NodeInfo.PortGUID */
		} else {
			ck_assert_msg(st == -ETIMEDOUT, "asker %d (SM_Key 0x%llx): status %d", i,
				      (unsigned long long)asker_key[i], st);
		}
	}
	ck_assert_int_eq(emu_log_lines(&log, "neither 0 nor sa.sa_key; ignored"), 2);
	ck_assert_int_eq(status_count(&r, "sm_key", 1), 2);
	ck_assert_int_eq(status_count(&r, "untrusted", 0), 0);
	ck_assert(emu_metric(r.sm, "ibsmd_sa_bad_key_total") == 2);
	run_down(&r);
}
END_TEST

START_TEST(pkey_records)
{
	struct run r;
	run_up(&r);
	struct emu_log log;
	struct emu_sa_answer a;
	uint8_t rec[PKTR_SIZE] = { 0 };
	sa_put16(rec, (uint16_t)r.h[TRUSTED].lid);
	emu_log_capture(&log, LOG_NOTICE);
	ck_assert_int_eq(ask(&r, UNTRUSTED, SA_METHOD_GET_TABLE, SA_ATTR_PKEY_REC, 1, rec,
			     sizeof(rec), &a), SA_STS_REQ_INVALID);
	ck_assert_int_eq(emu_log_lines(&log, "without the SA key (sa.sa_key)"), 1);
	ck_assert_int_eq(status_count(&r, "untrusted", 0), 1);
	ck_assert(emu_metric(r.sm, "ibsmd_sa_untrusted_total") == 1);
	ck_assert_int_eq(ask(&r, TRUSTED, SA_METHOD_GET_TABLE, SA_ATTR_PKEY_REC, 1, rec,
			     sizeof(rec), &a), 0);
	ck_assert_uint_ge(a.n, 1);
	ck_assert_uint_eq(sa_get16(a.rec), r.h[TRUSTED].lid);
	ck_assert_uint_eq(sa_get16(a.rec + 8) & 0x7fff, 0x7fff);	/* the default P_Key */
	ck_assert_int_eq(status_count(&r, "untrusted", 0), 1);
	run_down(&r);
}
END_TEST

START_TEST(security_traps)
{
	struct run r;
	run_up(&r);
	ck_assert_int_eq(subscribe(&r, UNTRUSTED, TRAP_BAD_MKEY), SA_STS_REQ_INVALID);
	ck_assert_int_eq(status_count(&r, "untrusted", 0), 1);
	ck_assert_int_eq(subscribe(&r, UNTRUSTED, TRAP_PORT_STATE), 0);
	ck_assert_int_eq(subscribe(&r, TRUSTED, TRAP_BAD_MKEY), 0);
	ck_assert_int_eq(status_count(&r, "untrusted", 0), 1);
	ck_assert(emu_metric(r.sm, "ibsmd_sa_untrusted_total") == 1);
	run_down(&r);
}
END_TEST

START_TEST(inform_records)
{
	struct run r;
	run_up(&r);
	struct emu_sa_answer a;
	ck_assert_int_eq(subscribe(&r, TRUSTED, TRAP_BAD_MKEY), 0);
	uint8_t rec[IIR_SIZE] = { 0 };
	saclient_port_gid(r.h[TRUSTED].c, rec);
	ck_assert_int_eq(ask(&r, TRUSTED, SA_METHOD_GET_TABLE, SA_ATTR_INFORM_INFO_REC, 1, rec,
			     sizeof(rec), &a), 0);
	ck_assert_uint_eq(a.n, 1);
	ck_assert_uint_eq(sa_get16(a.rec + 24 + 26), TRAP_BAD_MKEY);
	uint32_t qpn = (uint32_t)a.rec[IIR_QPN] << 16 | (uint32_t)a.rec[IIR_QPN + 1] << 8 |
		       a.rec[IIR_QPN + 2];
	ck_assert_uint_eq(qpn, 1);	/* the subscriber's: QP1 */
	ck_assert_int_eq(ask(&r, UNTRUSTED, SA_METHOD_GET_TABLE, SA_ATTR_INFORM_INFO_REC, 1, rec,
			     sizeof(rec), &a), 0);
	ck_assert_uint_eq(a.n, 1);
	ck_assert_uint_eq(sa_get16(a.rec + 24 + 26), TRAP_BAD_MKEY);
	ck_assert_uint_eq(a.rec[IIR_QPN] | a.rec[IIR_QPN + 1] | a.rec[IIR_QPN + 2], 0);
	run_down(&r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sakey_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, bad_keys);
	tcase_add_test(tc, pkey_records);
	tcase_add_test(tc, security_traps);
	tcase_add_test(tc, inform_records);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
