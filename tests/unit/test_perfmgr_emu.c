/*
 * The performance manager on the in-process emulator (sm/perfmgr.c): the
 * emulated PMAs (mad/emu/emu_pma.c, their own codec) answer ClassPortInfo,
 * PortCounters and PortCountersExtended.  A sweep reads every cabled
 * switch port and every CA port of the tree (2 spines, 4 leaves, 12
 * hosts: 28 + 12 ports, 18 agents), ClassPortInfo once per agent, through
 * its own transaction table (the SM's SMP table sends nothing for it);
 * error counters set on a switch port and a CA port make exactly those
 * ports unhealthy, their reset healthy again; a PMA without the extended
 * counters gets its PortCounters cleared before they saturate, and the
 * totals go on across the clear; a cable pulled drops its ports; the
 * emulator's traffic shows in the data and wait counters it reads.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu.h"
#include "mad/pma.h"
#include "sm/daemon.h"
#include "sm/perfmgr.h"

#include "emu_testlib.h"

#define N_PORTS	40	/* 4 leaves x 5 cabled + 2 spines x 4 + 12 hosts */
#define N_PMAS	18
#define LEAF1	0x101
#define HOST5	(0x1000 + 4 * 5)

struct run {
	EMU_RUN;
};

static int idle(const void *arg)
{
	const struct sm *sm = arg;
	return sm->sweep.heavy_sweeps >= 1 && sm->sw.activity == SM_IDLE &&
	       !sm->sw.heavy_wanted;
}

static void setup(struct run *r, int metrics_all)
{
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "pmemu",
		     .text = emu_tree_text(), .seed = 27 });
	r->sm = emu_sm_new(r->state, 20);
	r->sm->cfg.pm_interval_s = 0;	/* sweeps asked by the test */
	if (metrics_all)
		r->sm->cfg.pm_metrics = CFG_PM_METRICS_ALL;
	emu_sm_start(r->sm, r->base, r->e);
	ck_assert_msg(emu_run_while(r->base, idle, r->sm, 10000),
		      "the SM did not configure the fabric");
}

static void teardown(struct run *r)
{
	ck_assert_uint_eq(emu_violations(r->e), 0);
	emu_run_free(&r->run);
}

static json_t *ctl(struct run *r, const char *cmd, const char *op)
{
	char err[256] = "";
	json_t *req = op ? json_pack("{s:s, s:s}", "cmd", cmd, "op", op) :
			   json_pack("{s:s}", "cmd", cmd);
	json_t *res = sm_control(r->sm, cmd, req, err, sizeof(err));
	json_decref(req);
	ck_assert_msg(res != NULL, "%s: %s", cmd, err);
	return res;
}

static int swept(const void *arg)
{
	struct run *r = (struct run *)arg;
	json_t *s = perfmgr_to_ctl(r->sm);
	int running = json_is_true(json_object_get(s, "running"));
	json_decref(s);
	return !running;
}

/* One sweep asked and run to its end; its "last" figures (caller frees). */
static json_t *sweep(struct run *r)
{
	json_t *res = ctl(r, "perfmgr", "sweep");
	json_decref(res);
	ck_assert_msg(emu_run_while(r->base, swept, r, 10000), "the sweep did not end");
	json_t *s = perfmgr_to_ctl(r->sm);
	json_t *last = json_incref(json_object_get(s, "last"));
	json_decref(s);
	ck_assert_ptr_nonnull(last);
	return last;
}

static long long field(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	ck_assert_msg(json_is_integer(v), "no integer %s", k);
	return json_integer_value(v);
}

START_TEST(every_port_own_table)
{
	struct run r;
	setup(&r, 0);
	uint64_t smps = txn_get_stats(r.sm->txn)->all.sent;
	uint64_t gets = emu_pma_gets(r.e);
	json_t *last = sweep(&r);
	ck_assert_int_eq(field(last, "ports"), N_PORTS);
	ck_assert_int_eq(field(last, "read"), N_PORTS);
	/* ClassPortInfo per agent, PortCounters and the extended per port */
	ck_assert_int_eq(field(last, "gmps"), N_PMAS + 2 * N_PORTS);
	ck_assert_uint_eq(emu_pma_gets(r.e) - gets, N_PMAS + 2 * N_PORTS);
	ck_assert_uint_eq(txn_get_stats(r.sm->txn)->all.sent, smps);
	json_decref(last);
	/* ClassPortInfo is known now */
	last = sweep(&r);
	ck_assert_int_eq(field(last, "gmps"), 2 * N_PORTS);
	json_decref(last);
	teardown(&r);
}
END_TEST

/* The ports of h's list, as "NAME[PORT]" joined by spaces, sorted by the JSON. */
static void names(const json_t *list, char *buf, size_t len)
{
	size_t used = 0;
	size_t i;
	const json_t *p;
	buf[0] = '\0';
	json_array_foreach(list, i, p) {
		used += (size_t)snprintf(buf + used, len - used, "%s%s[%lld]", used ? " " : "",
					 json_string_value(json_object_get(p, "node")),
					 json_integer_value(json_object_get(p, "port")));
	}
}

START_TEST(errors_then_reset)
{
	struct run r;
	char got[256];
	setup(&r, 0);
	json_decref(sweep(&r));		/* the baseline */
	ck_assert_int_eq(emu_set_port_counter(r.e, LEAF1, 7, PMC_SYMBOL_ERR, 50), 0);
	ck_assert_int_eq(emu_set_port_counter(r.e, HOST5, 1, PMC_RCV_ERR, 20), 0);
	ck_assert_int_eq(emu_set_port_counter(r.e, HOST5, 1, PMC_XMIT_DISCARDS, 5), 0);
	json_t *last = sweep(&r);
	ck_assert_int_eq(field(last, "unhealthy"), 2);
	json_decref(last);
	json_t *h = ctl(&r, "health", NULL);
	json_t *u = json_object_get(h, "unhealthy");
	names(u, got, sizeof(got));
	/* worst first: 50 of 10 before 20 of 10 */
	ck_assert_str_eq(got, "L1[7] H5[1]");
	json_t *c = json_object_get(json_array_get(u, 1), "counters");
	ck_assert_int_eq(field(c, "PortRcvErrors"), 20);
	ck_assert_int_eq(field(c, "PortXmitDiscards"), 5);	/* as read, under its threshold */
	ck_assert_uint_eq(json_object_size(c), 2);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(
		json_array_get(u, 0), "reasons"), 0)),
		"SymbolErrorCounter: 50 in the last hour (threshold 10)");
	json_decref(h);
	/* cleared by someone else: healthy at the next sweep */
	ck_assert_int_eq(emu_set_port_counter(r.e, LEAF1, 7, PMC_SYMBOL_ERR, 0), 0);
	ck_assert_int_eq(emu_set_port_counter(r.e, HOST5, 1, PMC_RCV_ERR, 0), 0);
	last = sweep(&r);
	ck_assert_int_eq(field(last, "unhealthy"), 0);
	json_decref(last);
	teardown(&r);
}
END_TEST

/* The per-port series of the metrics for node[port] and a counter. */
static unsigned long long series(struct run *r, const char *metric,
				 const char *node, int port)
{
	size_t len;
	char *text = metrics_render(r->sm, 0, &len), pat[128];
	ck_assert_ptr_nonnull(text);
	snprintf(pat, sizeof(pat), "node=\"%s\",port=\"%d\"", node, port);
	unsigned long long v = ~0ull;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n"))
		if (!strncmp(l, metric, strlen(metric)) && l[strlen(metric)] == '{' &&
		    strstr(l, pat))
			v = strtoull(strrchr(l, ' ') + 1, NULL, 10);
	free(text);
	ck_assert_msg(v != ~0ull, "no %s of %s[%d]", metric, node, port);
	return v;
}

START_TEST(clear_before_saturation)
{
	struct run r;
	setup(&r, 1);
	/* H5's PMA: PortCounters only (32-bit data counters) */
	ck_assert_int_eq(emu_set_pma_capmask(r.e, HOST5, PMA_CAP_XMIT_WAIT), 0);
	ck_assert_int_eq(emu_set_port_counter(r.e, HOST5, 1, PMC_XMIT_DATA, 0x10000000), 0);
	json_decref(sweep(&r));
	ck_assert_uint_eq(series(&r, "ibsmd_port_xmit_data_total", "H5", 1), 0x10000000);
	ck_assert_int_eq(emu_set_port_counter(r.e, HOST5, 1, PMC_XMIT_DATA, 0xD0000000u), 0);
	json_t *s = perfmgr_to_ctl(r.sm);
	long long clears = field(s, "clears");
	json_decref(s);
	json_decref(sweep(&r));
	s = perfmgr_to_ctl(r.sm);
	ck_assert_int_eq(field(s, "clears"), clears + 1);	/* at 3/4 of 2^32 */
	json_decref(s);
	ck_assert_uint_eq(series(&r, "ibsmd_port_xmit_data_total", "H5", 1), 0xD0000000u);
	/* after the clear the counter grows from 0: the total goes on */
	ck_assert_int_eq(emu_set_port_counter(r.e, HOST5, 1, PMC_XMIT_DATA, 0x100), 0);
	json_decref(sweep(&r));
	ck_assert_uint_eq(series(&r, "ibsmd_port_xmit_data_total", "H5", 1), 0xD0000100ull);
	teardown(&r);
}
END_TEST

/*
 * Traffic (mad/emu/emu_flow.c) read by the performance manager as it
 * reads hardware: H3, H4 (leaf L1) and H6 send 10^9 bytes/s each to H5,
 * whose host takes 3/4 of that; two emulated seconds make H3's
 * PortXmitData 2 x 2.5e8 / 4 and L1 port 3 (facing H5) idle with data a
 * quarter of its 4 ns ticks: 0.25 x 2 x 2.5e8 PortXmitWait.
 */
START_TEST(traffic_counted)
{
	struct run r;
	setup(&r, 1);
	struct emu_traffic *t = emu_traffic_new(r.e);
	ck_assert_ptr_nonnull(t);
	int h5 = emu_port_lid(r.e, HOST5 + 1, 0);
	ck_assert_int_gt(h5, 0);
	ck_assert_int_eq(emu_flow_set_sink(t, HOST5 + 1, 7.5e8), 0);
	for (int h = 3; h <= 6; h++)
		if (h != 5)
			ck_assert_int_ge(emu_flow_add(t, 0x1000 + 4 * h + 1,
						      (uint32_t)h5, 1e9, 0), 0);
	ck_assert_int_eq(emu_flow_advance(t, 2.0), 0);
	json_decref(sweep(&r));
	ck_assert_uint_eq(series(&r, "ibsmd_port_xmit_data_total", "H3", 1), 125000000);
	ck_assert_uint_eq(series(&r, "ibsmd_port_xmit_wait_total", "L1", 3), 125000000);
	ck_assert_uint_eq(series(&r, "ibsmd_port_xmit_wait_total", "H3", 1), 375000000);
	ck_assert_uint_eq(series(&r, "ibsmd_port_xmit_wait_total", "L1", 1), 0);
	emu_traffic_free(t);
	teardown(&r);
}
END_TEST

START_TEST(pulled_cable_dropped)
{
	struct run r;
	setup(&r, 0);
	json_decref(sweep(&r));
	uint32_t sweeps = r.sm->sweep.heavy_sweeps;
	ck_assert_int_eq(emu_link_down(r.e, HOST5, 1), 0);
	sweeper_request_heavy(r.sm, "test");
	struct emu_sweeps w = { r.sm, sweeps + 1 };
	ck_assert(emu_run_while(r.base, emu_sweeps_done, &w, 10000));
	json_t *last = sweep(&r);
	/* H5's port and the leaf's port facing it */
	ck_assert_int_eq(field(last, "ports"), N_PORTS - 2);
	ck_assert_int_eq(field(last, "read"), N_PORTS - 2);
	json_decref(last);
	teardown(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("perfmgr_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, every_port_own_table);
	tcase_add_test(tc, errors_then_reset);
	tcase_add_test(tc, clear_before_saturation);
	tcase_add_test(tc, pulled_cable_dropped);
	tcase_add_test(tc, traffic_counted);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
