/*
 * SMInfoRecord (sm/sa/sa_sminfo.c) with another SM on the fabric, on the
 * in-process emulator: a stand-in SM on H3 (IsSM, answering SMInfo as a
 * STANDBY of priority 5), ibsmd the master (priority 10); a host's SA client asks for
 * every SMInfoRecord and gets ibsmd's own first, then the standby as the
 * sweep read it, under H3's LID -- OpenSM's list of the SMs it knows.
 */
#include <check.h>
#include <infiniband/mad.h>

#include "emu_testlib.h"
#include "mad/sa.h"
#include "mad/smp.h"
#include "sm/sa/sa_server.h"
#include "traps/host/saclient.h"

#define SM1_PRIORITY	10
#define SM2_PRIORITY	5
#define SMIR_STRIDE	32
#define MAX_RECS	4

/* The stand-in SM: answers SMInfo Gets, ignores the rest. */
struct sm2 {
	struct mad_transport t;
	uint64_t guid;
	int asked;
};

static void sm2_rx(void *arg, const uint8_t *mad, size_t len,
		   const struct mad_addr *from, int status)
{
	struct sm2 *s = arg;
	(void)len;
	(void)status;
	if (sa_get16(mad + 16) != IB_ATTR_SMINFO || mad[3] != SA_METHOD_GET)
		return;
	s->asked++;
	uint8_t m[MAD_SIZE];
	memcpy(m, mad, MAD_SIZE);
	smp_make_response(m, 0);
	struct smp_sminfo me = { .guid = s->guid, .act_count = 7,
				 .priority = SM2_PRIORITY, .state = SMS_STANDBY };
	smp_encode_sminfo(smp_data(m), &me);
	struct mad_addr to = *from;
	ck_assert_int_eq(s->t.send(s->t.ctx, m, MAD_SIZE, &to), 0);
}

struct answer {
	int done, status;
	size_t n;
	uint8_t rec[MAX_RECS][SMIR_STRIDE];
};

static void answered(void *arg, int status, const uint8_t *recs, size_t n,
		     size_t stride, const uint8_t *hdr)
{
	struct answer *a = arg;
	(void)hdr;
	a->done = 1;
	a->status = status;
	a->n = n;
	for (size_t i = 0; !status && i < n && i < MAX_RECS; i++)
		memcpy(a->rec[i], recs + i * stride, stride < SMIR_STRIDE ? stride : SMIR_STRIDE);
}

START_TEST(sminfo_lists_the_other_sm)
{
	struct emu_run r;
	char err[256] = "";
	struct sm2 s2 = { .guid = emu_host_guid(3) };
	emu_run_open(&r, &(struct emu_world_opts){ .name = "sminfo", .seed = 5 });
	ck_assert_msg(emu_attach(r.e, r.base, s2.guid, &s2.t, sm2_rx, &s2, err,
				 sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(emu_set_issm(r.e, s2.guid, 1), 0);
	r.sm = emu_sm_new(r.state, 20);
	r.sm->cfg.sm_priority = SM1_PRIORITY;	/* above the standby: no handover */
	emu_sm_start(r.sm, r.base, r.e);
	emu_sm_settle(r.base, r.sm, 10000);
	ck_assert_int_ge(s2.asked, 1);
	ck_assert_int_eq(r.sm->state, SMS_MASTER);

	struct emu_sahost h;
	struct saclient_params p = { .timeout_ms = 500, .retries = 1, .max_inflight = 4 };
	struct emu_net n = { .e = r.e, .base = r.base };
	emu_sahosts_attach(&n, &h, 1, 1, &p);
	struct answer a = { 0 };
	ck_assert_int_eq(saclient_query(h.c, SA_METHOD_GET_TABLE, SA_ATTR_SMINFO_REC, 0, 0,
					NULL, 0, answered, &a), 0);
	ck_assert(emu_run_until(r.base, &a.done, 5000));
	ck_assert_int_eq(a.status, 0);
	ck_assert_uint_eq(a.n, 2);
	/* ibsmd first: its port, MASTER */
	ck_assert_uint_eq(sa_get64(a.rec[0] + 4), r.sm->tr.port_guid);
	ck_assert_uint_eq(a.rec[0][24], SM1_PRIORITY << 4 | SMS_MASTER);
	ck_assert_uint_eq(sa_get64(a.rec[0] + 12), 0);		/* SM_Key never told */
	/* then the standby, under H3's LID */
	ck_assert_uint_eq(sa_get16(a.rec[1]), (uint32_t)emu_port_lid(r.e, s2.guid - 1, 1));
	ck_assert_uint_eq(sa_get64(a.rec[1] + 4), s2.guid);
	ck_assert_uint_eq(a.rec[1][24], SM2_PRIORITY << 4 | SMS_STANDBY);
	ck_assert_uint_eq(sa_get32(a.rec[1] + 20), 7);		/* its ActCount */
	/* by the standby's LID alone */
	uint8_t rec[25] = { 0 };
	sa_put16(rec, sa_get16(a.rec[1]));
	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(saclient_query(h.c, SA_METHOD_GET, SA_ATTR_SMINFO_REC, 0, 1,
					rec, sizeof(rec), answered, &a), 0);
	ck_assert(emu_run_until(r.base, &a.done, 5000));
	ck_assert_int_eq(a.status, 0);
	ck_assert_uint_eq(a.n, 1);
	ck_assert_uint_eq(sa_get64(a.rec[0] + 4), s2.guid);
	emu_sahosts_detach(&h, 1);
	s2.t.close(s2.t.ctx);
	emu_run_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sminfo_emu");
	TCase *tc = tcase_create("sminfo_emu");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, sminfo_lists_the_other_sm);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
