/*
 * Rebalancing's pure part (reconfig/rebalance.c): the triggers of
 * virtualization.rebalance, and the balance on the hypervisor fabric of
 * vswitch_testlib.h (4 leaves L0..L3 with 3 hypervisors each, spines S0
 * and S1; every VF with a LID), with tables written by hand where the
 * loads are known.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconfig/rebalance.h"
#include "routing/engine.h"
#include "routing/engines.h"
#include "sm/base/fabric.h"
#include "sm/model/lids.h"
#include "sm/base/topo.h"
#include "vswitch_testlib.h"

/* ---- the triggers ---- */

START_TEST(t_off)
{
	struct rebalance_policy p = { 0 };
	struct rebalance_state s;
	rebalance_init(&s, 1000);
	ck_assert(!rebalance_enabled(&p));
	for (int i = 0; i < 100; i++)
		ck_assert_int_eq(rebalance_after_vm(&p, &s, 1, 10), REBAL_NONE);
	ck_assert_uint_eq(s.migrations, 100);
	ck_assert_int_eq(rebalance_due(&p, &s, 1000 + 86400000ull), REBAL_NONE);
}
END_TEST

START_TEST(t_after_migrations)
{
	struct rebalance_policy p = { .after_migrations = 3 };
	struct rebalance_state s;
	rebalance_init(&s, 0);
	ck_assert_int_eq(rebalance_after_vm(&p, &s, 1, -1), REBAL_NONE);
	ck_assert_int_eq(rebalance_after_vm(&p, &s, 0, -1), REBAL_NONE);	/* not a move */
	ck_assert_int_eq(rebalance_after_vm(&p, &s, 1, -1), REBAL_NONE);
	ck_assert_int_eq(rebalance_due(&p, &s, 5), REBAL_NONE);
	ck_assert_int_eq(rebalance_after_vm(&p, &s, 1, -1), REBAL_MIGRATIONS);
	ck_assert_int_eq(rebalance_due(&p, &s, 5), REBAL_MIGRATIONS);
	struct rebalance_policy off = { 0 };	/* a reload turned it off */
	ck_assert_int_eq(rebalance_due(&off, &s, 5), REBAL_NONE);
	rebalance_rerouted(&s, REBAL_MIGRATIONS, 7);
	ck_assert_uint_eq(s.fired[REBAL_MIGRATIONS], 1);
	ck_assert_uint_eq(s.migrations, 0);
	ck_assert_int_eq(rebalance_due(&p, &s, 8), REBAL_NONE);
	/* another reroute (ibsmctl reroute, weights) starts the count again */
	rebalance_after_vm(&p, &s, 1, -1);
	rebalance_after_vm(&p, &s, 1, -1);
	rebalance_rerouted(&s, REBAL_NONE, 9);
	ck_assert_int_eq(rebalance_after_vm(&p, &s, 1, -1), REBAL_NONE);
	ck_assert_uint_eq(s.fired[REBAL_MIGRATIONS], 1);
	ck_assert_uint_eq(s.fired[REBAL_NONE], 0);
}
END_TEST

START_TEST(t_balance)
{
	struct rebalance_policy p = { .balance_drop = 0.1 };
	struct rebalance_state s;
	rebalance_init(&s, 0);
	ck_assert_int_eq(s.last_permille, -1);
	ck_assert_int_eq(rebalance_after_vm(&p, &s, 1, -1), REBAL_NONE);
	ck_assert_int_eq(rebalance_after_vm(&p, &s, 1, 1000), REBAL_NONE);
	ck_assert_int_eq(rebalance_after_vm(&p, &s, 1, 900), REBAL_NONE);
	ck_assert_int_eq(rebalance_after_vm(&p, &s, 0, 899), REBAL_BALANCE);	/* a create too */
	ck_assert_uint_eq(s.checks, 3);
	ck_assert_int_eq(s.last_permille, 899);
	/* due until rerouted, whatever comes meanwhile */
	ck_assert_int_eq(rebalance_after_vm(&p, &s, 1, 1000), REBAL_BALANCE);
	ck_assert_int_eq(rebalance_due(&p, &s, 1), REBAL_BALANCE);
	rebalance_rerouted(&s, REBAL_BALANCE, 2);
	ck_assert_uint_eq(s.fired[REBAL_BALANCE], 1);
	ck_assert_int_eq(rebalance_due(&p, &s, 3), REBAL_NONE);
}
END_TEST

START_TEST(t_interval)
{
	struct rebalance_policy p = { .interval_s = 60 };
	struct rebalance_state s;
	rebalance_init(&s, 1000);
	/* nothing moved: nothing to restore */
	ck_assert_int_eq(rebalance_due(&p, &s, 1000 + 120000), REBAL_NONE);
	ck_assert_int_eq(rebalance_after_vm(&p, &s, 1, -1), REBAL_NONE);
	ck_assert_int_eq(rebalance_due(&p, &s, 1000 + 59999), REBAL_NONE);
	ck_assert_int_eq(rebalance_due(&p, &s, 1000 + 60000), REBAL_INTERVAL);
	rebalance_rerouted(&s, REBAL_INTERVAL, 61000);
	ck_assert_uint_eq(s.fired[REBAL_INTERVAL], 1);
	rebalance_after_vm(&p, &s, 1, -1);
	ck_assert_int_eq(rebalance_due(&p, &s, 61000 + 59999), REBAL_NONE);
	ck_assert_int_eq(rebalance_due(&p, &s, 61000 + 60000), REBAL_INTERVAL);
	ck_assert_str_eq(rebalance_reason_name(REBAL_INTERVAL), "interval");
	ck_assert_str_eq(rebalance_reason_name(REBAL_MIGRATIONS), "migrations");
	ck_assert_str_eq(rebalance_reason_name(REBAL_BALANCE), "balance");
	ck_assert_str_eq(rebalance_reason_name(42), "none");
}
END_TEST

/* ---- the balance ---- */

struct hvf {
	struct fabric f;
	struct lft_tables t;
};

static void hvf_build(struct hvf *h)
{
	char err[256] = "", *text = hv_text();
	struct lid_report rep;
	fabric_init(&h->f);
	if (topo_parse_string(&h->f, text, "hv.net", err, sizeof(err)) != 0)
		ck_abort_msg("parse: %s", err);
	free(text);
	hv_mark(&h->f);
	ck_assert_int_eq(lids_assign(&h->f, NULL, 0, &rep), 0);
	memset(&h->t, 0, sizeof(h->t));
}

static void hvf_route(struct hvf *h)
{
	char err[256] = "";
	struct route_opts o = { 0 };
	lft_tables_free(&h->t);
	ck_assert_int_eq(lft_tables_alloc(&h->t, &h->f), 0);
	if (vswitch_ftree_route(&h->f, &o, &h->t, err, sizeof(err)) != 0)
		ck_abort_msg("vswitch-ftree: %s", err);
}

static void hvf_free(struct hvf *h)
{
	lft_tables_free(&h->t);
	fabric_free(&h->f);
}

static uint32_t vf(const struct hvf *h, int l, int i, int k)
{
	return hv_vf_port(&h->f, l, i, k);
}

/* Every leaf but L0 sends lid up to spine s, s sends it down to L0. */
static void all_via(struct hvf *h, uint32_t lid, int s)
{
	char name[16];
	for (int l = 1; l < HV_LEAVES; l++) {
		snprintf(name, sizeof(name), "L%d", l);
		lft_row(&h->t, h->t.row_of_node[hv_find(&h->f, name)])[lid] =
			(uint8_t)(7 + s);
	}
	snprintf(name, sizeof(name), "S%d", s);
	lft_row(&h->t, h->t.row_of_node[hv_find(&h->f, name)])[lid] = 1;	/* to L0 */
}

START_TEST(t_measure)
{
	struct hvf h;
	struct rebalance_balance b;
	struct rebalance_quality q;
	char err[128];
	hvf_build(&h);
	hvf_route(&h);
	/* no VMs: nothing measured, no quality */
	ck_assert_int_eq(rebalance_measure(&h.f, &h.t, &b, err, sizeof(err)), 0);
	ck_assert_uint_eq(b.vms, 0);
	ck_assert_uint_eq(b.max_load, 0);
	ck_assert_int_eq(rebalance_quality(&h.f, &h.t, &q, err, sizeof(err)), 0);
	ck_assert_int_eq(q.permille, -1);

	/* one VM: its route from L1..L3 up to one spine and down to L0, 4 links */
	h.f.ports[vf(&h, 0, 0, 0)].vm_weight = 1;
	hvf_route(&h);
	ck_assert_int_eq(rebalance_measure(&h.f, &h.t, &b, err, sizeof(err)), 0);
	ck_assert_uint_eq(b.vms, 1);
	ck_assert_uint_eq(b.links, 4);
	ck_assert_uint_eq(b.max_load, REBAL_UNIT);
	ck_assert_int_eq(rebalance_quality(&h.f, &h.t, &q, err, sizeof(err)), 0);
	ck_assert_int_eq(q.permille, REBAL_PERMILLE);

	/* a second VM on another vSwitch of L0: vswitch-ftree takes the other spine */
	uint32_t a = vf(&h, 0, 0, 0), c = vf(&h, 0, 1, 0);
	h.f.ports[c].vm_weight = 1;
	hvf_route(&h);
	ck_assert_int_eq(rebalance_measure(&h.f, &h.t, &b, err, sizeof(err)), 0);
	ck_assert_uint_eq(b.links, 8);
	ck_assert_uint_eq(b.max_load, REBAL_UNIT);
	/* both over S0: 4 links carry both vSwitches */
	all_via(&h, h.f.ports[a].lid, 0);
	all_via(&h, h.f.ports[c].lid, 0);
	ck_assert_int_eq(rebalance_measure(&h.f, &h.t, &b, err, sizeof(err)), 0);
	ck_assert_uint_eq(b.links, 4);
	ck_assert_uint_eq(b.max_load, 2 * REBAL_UNIT);
	ck_assert_int_eq(rebalance_quality(&h.f, &h.t, &q, err, sizeof(err)), 0);
	ck_assert_uint_eq(q.fresh.max_load, REBAL_UNIT);
	ck_assert_int_eq(q.permille, 500);

	/* two VMs of weights 1 and 3 on one vSwitch: shares 1/4 and 3/4 of it */
	h.f.ports[c].vm_weight = 0;
	uint32_t d = vf(&h, 0, 0, 1);
	h.f.ports[d].vm_weight = 3;
	all_via(&h, h.f.ports[a].lid, 0);
	all_via(&h, h.f.ports[d].lid, 1);
	ck_assert_int_eq(rebalance_measure(&h.f, &h.t, &b, err, sizeof(err)), 0);
	ck_assert_uint_eq(b.vms, 2);
	ck_assert_uint_eq(b.links, 8);
	ck_assert_uint_eq(b.max_load, 3 * REBAL_UNIT / 4);
	all_via(&h, h.f.ports[d].lid, 0);
	ck_assert_int_eq(rebalance_measure(&h.f, &h.t, &b, err, sizeof(err)), 0);
	ck_assert_uint_eq(b.max_load, REBAL_UNIT);
	hvf_free(&h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rebalance");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, t_off);
	tcase_add_test(tc, t_after_migrations);
	tcase_add_test(tc, t_balance);
	tcase_add_test(tc, t_interval);
	tcase_add_test(tc, t_measure);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
