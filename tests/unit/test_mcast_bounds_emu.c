/*
 * What hosts may make the SM hold in multicast groups, on the emulator
 * (the tree of emu_testlib.h: leaves L0..L3 0x100..0x103, spines 0x200,
 * 0x201), through the SA from hosts' SA clients (MCMemberRecord Set and
 * Delete, as IPoIB and mcjoin send them):
 *   - a fabric whose leaf L3 holds 32 MLIDs (MulticastFDBCap 32, the
 *     others 1,024): the broadcast group and 31 creates take them, the
 *     next create is refused with ERR_NO_RESOURCES (0x0100), and 2.2 s of
 *     refused creates from two hosts log at most one line a second,
 *     counted in the metrics;
 *   - multicast.max_groups_per_port 4: a host's fifth create is refused,
 *     another host's is not, and a group it made that goes gives it
 *     room again;
 *   - L3 cabled only after 40 groups were made: ibsmctl status's
 *     last_error says how many groups have no tree, and clears when they
 *     are gone.
 * The policy comes as YAML through config_load, as the daemon reads it.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mad/emu/emu.h"
#include "mad/sa.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "traps/host/saclient.h"

#include "emu_testlib.h"

#define MCR_SIZE	52
#define CM_JOIN		((1ULL << 0) | (1ULL << 1) | (1ULL << 16))	/* MGID, PortGID, JoinState */
#define CM_CREATE	(CM_JOIN | (1ULL << 2) | (1ULL << 6) | (1ULL << 7) | \
			 (1ULL << 12) | (1ULL << 13))	/* Q_Key, TClass, P_Key, SL, FlowLabel */
#define L3		0x103
#define SMALL_CAP	32
#define NHOST		3	/* SA clients on H1, H2, H3 (H0 is the SM) */

struct run {
	EMU_RUN;
	struct emu_sahost h[NHOST];
	struct emu_sa_answer a;
	uint16_t mlid;		/* of the last create */
};

static void small_l3(struct fabric *topo)
{
	uint32_t n = fabric_find_node(topo, L3);
	ck_assert_uint_ne(n, FAB_NONE);
	topo->nodes[n].mft_cap = SMALL_CAP;
}

/* An SM on the tree (L3 of cap 32 when small), hosts H1..H3 with SA clients. */
static void setup(struct run *r, int small, const char *yaml, int l3_down)
{
	memset(r, 0, sizeof(*r));
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "mcbounds",
		     .tweak = small ? small_l3 : NULL, .seed = 11 });
	if (l3_down) {
		ck_assert_int_eq(emu_link_down(r->e, L3, 7), 0);
		ck_assert_int_eq(emu_link_down(r->e, L3, 8), 0);
	}
	r->sm = emu_sm_new(r->state, 20);
	if (yaml)
		emu_sm_policy(r->sm, yaml);
	emu_sm_start(r->sm, r->base, r->e);
	emu_sm_settle(r->base, r->sm, 10000);
	struct saclient_params p = { .timeout_ms = 500, .retries = 1, .max_inflight = 16 };
	struct emu_net n = { .e = r->e, .base = r->base };
	emu_sahosts_attach(&n, r->h, 1, NHOST, &p);
	emu_sm_settle(r->base, r->sm, 10000);
}

static void teardown(struct run *r)
{
	emu_sahosts_detach(r->h, NHOST);
	emu_run_free(&r->run);
}

/* Host h creates (leave 0) or leaves (1) group number k as a full member; the status. */
static int group(struct run *r, int h, uint32_t k, int leave)
{
	uint8_t rec[MCR_SIZE];
	memset(rec, 0, sizeof(rec));
	rec[0] = 0xff;
	rec[1] = 0x15;			/* flags 1, site-local */
	sa_put16(rec + 2, 0x1234);
	sa_put32(rec + 12, k + 1);
	sa_put64(rec + 16, 0xfe80000000000000ull);
	sa_put64(rec + 24, r->h[h].guid);
	sa_put32(rec + 32, 0x11);	/* Q_Key */
	sa_put16(rec + 40, 0xffff);	/* P_Key */
	rec[48] = 0x50 | MC_JOIN_FULL;
	memset(&r->a, 0, sizeof(r->a));
	ck_assert_int_eq(saclient_query(r->h[h].c, leave ? SA_METHOD_DELETE : SA_METHOD_SET,
					SA_ATTR_MCMEMBER_REC, 0, leave ? CM_JOIN : CM_CREATE,
					rec, sizeof(rec), emu_sa_answered, &r->a), 0);
	ck_assert(emu_run_until(r->base, &r->a.done, 3000));
	r->mlid = r->a.status == 0 && r->a.n ? sa_get16(r->a.rec + 36) : 0;
	return r->a.status;
}

/* ibsmctl status's last_error: its kind and message ("" for none). */
static void last_error(struct run *r, char *kind, char *msg, size_t len)
{
	json_t *o = json_object();
	errors_to_ctl(&r->sm->errs, o);
	json_t *e = json_object_get(o, "last_error");
	snprintf(kind, len, "%s", json_is_object(e) ?
		 json_string_value(json_object_get(e, "kind")) : "");
	snprintf(msg, len, "%s", json_is_object(e) ?
		 json_string_value(json_object_get(e, "message")) : "");
	json_decref(o);
}

START_TEST(joins_past_mft_cap)
{
	struct run r;
	setup(&r, 1, NULL, 0);
	/* the broadcast group holds 0xC000: 31 more fit L3's 32 MLIDs */
	for (uint32_t k = 0; k < SMALL_CAP - 1; k++)
		ck_assert_msg(group(&r, 0, k, 0) == 0, "create %u: status 0x%x", k, r.a.status);
	ck_assert_uint_eq(r.mlid, 0xc000 + SMALL_CAP - 1);
	ck_assert_int_eq(group(&r, 0, SMALL_CAP, 0), SA_STS_NO_RESOURCES);
	/* a refusal flood from two hosts: every one refused, one line a second */
	struct emu_log log;
	emu_log_capture(&log, LOG_NOTICE);
	double t0 = emu_now_s();
	int refused = 1, other = 0;
	for (uint32_t k = 100; emu_now_s() - t0 < 2.2; k++) {
		int st = group(&r, k % 2, k, 0);
		refused += st == SA_STS_NO_RESOURCES;
		other += st != SA_STS_NO_RESOURCES;
	}
	double secs = emu_now_s() - t0;
	int lines = emu_log_lines(&log, "]: SA: multicast group not created");
	ck_assert_int_eq(other, 0);
	ck_assert_int_gt(refused, 200);
	ck_assert_msg(lines >= 1 && lines <= (int)secs + 1,
		      "%d refusal lines for %d refusals in %.1f s", lines, refused, secs);
	printf("joins_past_mft_cap: %d creates refused in %.1f s, %d log lines\n",
	       refused, secs, lines);
	ck_assert(emu_metric(r.sm, "ibsmd_mcast_creates_refused_total{bound=\"mlids\"}") == refused);
	ck_assert(emu_metric(r.sm, "ibsmd_mcast_mlid_limit") == SMALL_CAP);
	ck_assert(emu_metric(r.sm, "ibsmd_mcast_groups") == SMALL_CAP);
	/* a group that goes frees its MLID for the next */
	ck_assert_int_eq(group(&r, 0, 3, 1), 0);
	ck_assert_int_eq(group(&r, 1, 500, 0), 0);
	ck_assert_uint_eq(r.mlid, 0xc004);
	teardown(&r);
}
END_TEST

START_TEST(per_port_bound)
{
	struct run r;
	setup(&r, 0, "multicast: {max_groups_per_port: 4}\n", 0);
	for (uint32_t k = 0; k < 4; k++)
		ck_assert_int_eq(group(&r, 0, k, 0), 0);
	ck_assert_int_eq(group(&r, 0, 4, 0), SA_STS_NO_RESOURCES);
	/* another host creates; joining a group another made is no create */
	ck_assert_int_eq(group(&r, 1, 10, 0), 0);
	ck_assert_int_eq(group(&r, 0, 10, 0), 0);
	/* a group the first host made goes when it leaves: room for one more */
	ck_assert_int_eq(group(&r, 0, 1, 1), 0);
	ck_assert_int_eq(group(&r, 0, 5, 0), 0);
	ck_assert_int_eq(group(&r, 0, 6, 0), SA_STS_NO_RESOURCES);
	ck_assert(emu_metric(r.sm, "ibsmd_mcast_creates_refused_total{bound=\"per_port\"}") == 2);
	teardown(&r);
}
END_TEST

START_TEST(switch_with_smaller_mft_comes)
{
	struct run r;
	char kind[256], msg[256];
	setup(&r, 1, NULL, 1);
	/* L3 away: every switch holds 1,024 MLIDs; 40 groups and the broadcast one */
	for (uint32_t k = 0; k < 40; k++)
		ck_assert_int_eq(group(&r, 0, k, 0), 0);
	last_error(&r, kind, msg, sizeof(msg));
	ck_assert_str_eq(kind, "");
	uint32_t sweeps = r.sm->sweep.heavy_sweeps;
	ck_assert_int_eq(emu_link_up(r.e, L3, 7), 0);
	ck_assert_int_eq(emu_link_up(r.e, L3, 8), 0);
	sweeper_request_heavy(r.sm, "test: L3 cabled");
	emu_run_sweeps(&r.run, sweeps + 1);
	emu_sm_settle(r.base, r.sm, 10000);
	/* MLIDs 0xC020..0xC028 are past L3's MFT */
	last_error(&r, kind, msg, sizeof(msg));
	ck_assert_str_eq(kind, "multicast");
	ck_assert_msg(strstr(msg, "9 multicast groups have no tree") && strstr(msg, "0xc020"),
		      "%s", msg);
	ck_assert(emu_metric(r.sm, "ibsmd_mcast_groups_without_tree") == 9);
	ck_assert_int_eq(group(&r, 0, 50, 0), SA_STS_NO_RESOURCES);
	/* the groups past it go: the condition clears */
	for (uint32_t k = 31; k < 40; k++)
		ck_assert_int_eq(group(&r, 0, k, 1), 0);
	last_error(&r, kind, msg, sizeof(msg));
	ck_assert_str_eq(kind, "");
	teardown(&r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("mcast_bounds_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, joins_past_mft_cap);
	tcase_add_test(tc, per_port_bound);
	tcase_add_test(tc, switch_with_smaller_mft_comes);
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
