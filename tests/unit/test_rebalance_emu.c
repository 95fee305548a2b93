/*
 * virtualization.rebalance end to end on the emulator: the SM brings up
 * the hypervisor fabric of vswitch_testlib.h (4 leaves of 3 hypervisors
 * with 4 VFs, 2 spines) with routing.engine vswitch-ftree, one VM on
 * every hypervisor, routed afresh; then a consolidation: the VMs of
 * leaves 1..3 move, one by one, onto the free VFs of leaf 0's
 * hypervisors (the vSwitch paper's "consolidate" pattern, Section 7.1).
 * Each move is FTreeMinRC's (the moved VM takes its new PF's routes).
 * The balance is measured on the tables read back from the emulated
 * switches, against a fresh vswitch-ftree of the same placement
 * (reconfig/rebalance.h):
 *  - without the policy it falls below 0.9 and stays there;
 *  - with balance_drop 0.1 each fall below 0.9 starts a full reroute
 *    once the move's check sweep is over, and the tables the switches
 *    then hold are as good as a fresh vswitch-ftree's (1000/1000); the
 *    switches whose LFT that reroute changed are counted;
 *  - with after_migrations 3 the third move to another leaf starts one
 *    (a move within a leaf does not count).
 * The figures go to stderr.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu.h"
#include "reconfig/migrate.h"
#include "reconfig/rebalance.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/base/topo.h"
#include "sm/vm/vmops.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "emu_testlib.h"
#include "vmop_testlib.h"
#include "vswitch_testlib.h"

#define LIMIT 900	/* 1000 * (1 - balance_drop) */

struct run {
	EMU_RUN;
	struct vmop_wait w;
};

static void settle(struct run *r)
{
	vmop_settle(r->base, r->sm);
}

static void setup(struct run *r, const char *rebalance)
{
	char yaml[512];
	memset(r, 0, sizeof(*r));
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "rbemu",
		     .text = hv_text(), .seed = 5 });
	hv_mark(&r->topo);
	r->sm = vmop_sm_new(r->state, MIG_DYNAMIC);
	snprintf(yaml, sizeof(yaml), "routing:\n  engine: vswitch-ftree\n"
		 "virtualization:\n  vswitches: [\"V-*\"]\n%s", rebalance);
	emu_sm_policy(r->sm, yaml);
	emu_sm_start(r->sm, r->base, r->e);
	settle(r);
	ck_assert_int_eq(r->sm->state, SMS_MASTER);
}

static void teardown(struct run *r)
{
	emu_run_stop_sm(&r->run);
	ck_assert_uint_eq(emu_violations(r->e), 0);
	emu_run_free(&r->run);
}

/* The SM's tables with every physical and vSwitch row read from the emulated switches. */
static void device_tables(const struct run *r, struct lft_tables *t)
{
	const struct fabric *f = &r->sm->sub.model->f;
	memset(t, 0, sizeof(*t));
	ck_assert_int_eq(migrate_tables_copy(t, &r->sm->sub.lft, f, 0), 0);
	for (uint32_t row = 0; row < t->n_sw; row++) {
		uint64_t g = f->nodes[t->sw_node[row]].guid;
		for (uint32_t lid = 1; lid <= t->max_lid; lid++)
			lft_row(t, row)[lid] = (uint8_t)emu_lft_entry(r->e, g, lid);
	}
}

/* The balance of what the switches hold, in thousandths of a fresh vswitch-ftree's. */
static int device_quality(const struct run *r, struct rebalance_quality *q)
{
	struct lft_tables t;
	char err[256] = "";
	device_tables(r, &t);
	ck_assert_msg(rebalance_quality(&r->sm->sub.model->f, &t, q, err,
					sizeof(err)) == 0, "%s", err);
	lft_tables_free(&t);
	return q->permille;
}

/* Switches (physical and vSwitches) whose LFT differs between a and b. */
static unsigned switches_changed(const struct lft_tables *a, const struct lft_tables *b)
{
	unsigned n = 0;
	ck_assert_uint_eq(a->n_sw, b->n_sw);
	for (uint32_t row = 0; row < a->n_sw; row++) {
		uint32_t top = a->max_lid < b->max_lid ? a->max_lid : b->max_lid;
		n += memcmp(lft_row(a, row), lft_row(b, row), top + 1) != 0;
	}
	return n;
}

static uint64_t fired(const struct run *r, int why)
{
	return r->sm->vms.rb.fired[why];
}

static void vm_ok(struct run *r, int kind, const char *name, const char *hyp, int vf)
{
	const struct vmop_result *res = vmop_run(r->base, r->sm, &r->w, kind, name, hyp, vf);
	ck_assert_msg(res->ok, "%s %s: %s", name, hyp, res->err);
}

/* One VM "vm-L-I" on VF 0 of every hypervisor, then a fresh reroute. */
static void populate(struct run *r)
{
	char name[32], hyp[32], err[256];
	for (int l = 0; l < HV_LEAVES; l++)
		for (int i = 0; i < HV_PER_LEAF; i++) {
			snprintf(name, sizeof(name), "vm-%d-%d", l, i);
			snprintf(hyp, sizeof(hyp), "V-%d-%d", l, i);
			vm_ok(r, VMOP_CREATE, name, hyp, 0);
			settle(r);
		}
	ck_assert_int_eq(sweeper_request_reroute(r->sm, err, sizeof(err)), 0);
	settle(r);
	struct rebalance_quality q;
	ck_assert_int_eq(device_quality(r, &q), REBAL_PERMILLE);
	ck_assert_uint_eq(q.now.vms, HV_LEAVES * HV_PER_LEAF);
}

/*
 * Consolidation: vm-L-I of leaves 1..3 to leaf 0's hypervisors, VF 1..3
 * in turn.  Returns the lowest quality a move left; with the policy on,
 * checks every reroute it started and sums the switches they changed.
 */
static int consolidate(struct run *r, int policy, unsigned *rebalances,
		       unsigned *switches, int *last)
{
	int lowest = REBAL_PERMILLE;
	int slot = 0;
	*rebalances = *switches = 0;
	for (int l = 1; l < HV_LEAVES; l++)
		for (int i = 0; i < HV_PER_LEAF; i++, slot++) {
			char name[32], hyp[32];
			snprintf(name, sizeof(name), "vm-%d-%d", l, i);
			snprintf(hyp, sizeof(hyp), "V-0-%d", slot / (HV_VFS - 1));
			uint64_t before_fired = fired(r, REBAL_BALANCE);
			vm_ok(r, VMOP_MIGRATE, name, hyp, 1 + slot % (HV_VFS - 1));
			struct rebalance_quality q, qm;
			int after_move = device_quality(r, &qm);
			struct lft_tables before;
			device_tables(r, &before);
			settle(r);	/* the check sweep, then a rebalance if due */
			struct lft_tables after;
			device_tables(r, &after);
			unsigned changed = switches_changed(&before, &after);
			int now = device_quality(r, &q);
			fprintf(stderr, "move %d (%s to %s): balance %d/1000 "
				"(heaviest link %.2f, fresh %.2f vSwitch units)",
				slot + 1, name, hyp, after_move,
				(double)qm.now.max_load / REBAL_UNIT,
				(double)qm.fresh.max_load / REBAL_UNIT);
			if (after_move < lowest)
				lowest = after_move;
			if (fired(r, REBAL_BALANCE) > before_fired) {
				ck_assert(policy);
				ck_assert_int_lt(after_move, LIMIT);
				ck_assert_int_eq(now, REBAL_PERMILLE);
				ck_assert_uint_gt(changed, 0);
				(*rebalances)++;
				*switches += changed;
				fprintf(stderr, "; rebalanced: %d/1000, %u switches written",
					now, changed);
			} else {
				/* no reroute: the check sweep wrote nothing */
				ck_assert_uint_eq(changed, 0);
				if (policy)
					ck_assert_int_ge(after_move, LIMIT);
			}
			fprintf(stderr, "\n");
			*last = now;
			lft_tables_free(&before);
			lft_tables_free(&after);
		}
	return lowest;
}

START_TEST(t_consolidate_unbalances)
{
	struct run r;
	unsigned n, sw;
	int last;
	setup(&r, "");
	populate(&r);
	int lowest = consolidate(&r, 0, &n, &sw, &last);
	fprintf(stderr, "no rebalance: lowest %d/1000, last %d/1000\n", lowest, last);
	ck_assert_int_lt(lowest, LIMIT);
	ck_assert_int_lt(last, LIMIT);
	ck_assert_uint_eq(n, 0);
	teardown(&r);
}
END_TEST

START_TEST(t_consolidate_rebalances)
{
	struct run r;
	unsigned n, sw;
	int last;
	setup(&r, "  rebalance:\n    balance_drop: 0.1\n");
	populate(&r);
	uint64_t checks = r.sm->vms.rb.checks;
	int lowest = consolidate(&r, 1, &n, &sw, &last);
	fprintf(stderr, "balance_drop 0.1: %u rebalances, %u switches written in all, "
		"lowest %d/1000 before one, last %d/1000\n", n, sw, lowest, last);
	ck_assert_uint_ge(n, 1);
	ck_assert_int_ge(last, LIMIT);
	ck_assert_uint_eq(r.sm->vms.rb.checks - checks, 9);	/* one per move */
	/* status and metrics say so */
	json_t *o = json_object();
	vms_to_ctl(r.sm, o);
	json_t *b = json_object_get(json_object_get(o, "vms"), "rebalance");
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(b, "rerouted"),
							    "balance")), (json_int_t)n);
	json_decref(o);
	ck_assert(emu_metric(r.sm, "ibsmd_vm_rebalances_total{reason=\"balance\"}") == n);
	teardown(&r);
}
END_TEST

START_TEST(t_after_migrations)
{
	struct run r;
	setup(&r, "  rebalance:\n    after_migrations: 3\n");
	populate(&r);
	uint64_t heavy = fired(&r, REBAL_MIGRATIONS);
	/* within leaf 1: not counted */
	vm_ok(&r, VMOP_MIGRATE, "vm-1-0", "V-1-1", 1);
	settle(&r);
	ck_assert_uint_eq(r.sm->vms.rb.migrations, 0);
	vm_ok(&r, VMOP_MIGRATE, "vm-1-1", "V-0-0", 1);
	settle(&r);
	vm_ok(&r, VMOP_MIGRATE, "vm-1-2", "V-0-0", 2);
	settle(&r);
	ck_assert_uint_eq(r.sm->vms.rb.migrations, 2);
	ck_assert_uint_eq(fired(&r, REBAL_MIGRATIONS), heavy);
	vm_ok(&r, VMOP_MIGRATE, "vm-2-0", "V-0-0", 3);
	settle(&r);
	ck_assert_uint_eq(fired(&r, REBAL_MIGRATIONS), heavy + 1);
	ck_assert_uint_eq(r.sm->vms.rb.migrations, 0);
	struct rebalance_quality q;
	ck_assert_int_eq(device_quality(&r, &q), REBAL_PERMILLE);
	teardown(&r);
}
END_TEST

static int interval_fired(const void *arg)
{
	return ((const struct sm *)arg)->vms.rb.fired[REBAL_INTERVAL] > 0;
}

/*
 * interval_s 1 with light sweeps every second: nothing while no VM moved
 * since the last reroute; after a move to another leaf, a reroute once a
 * sweep ends a second or more after the last one.
 */
START_TEST(t_interval)
{
	struct run r;
	setup(&r, "  rebalance:\n    interval_s: 1\n");
	populate(&r);
	r.sm->cfg.sweep_interval_s = 1;
	sweeper_request_light(r.sm);
	ck_assert(!emu_run_while(r.base, interval_fired, r.sm, 2500));
	vm_ok(&r, VMOP_MIGRATE, "vm-1-0", "V-0-0", 1);
	ck_assert_uint_eq(r.sm->vms.rb.migrations, 1);
	ck_assert(emu_run_while(r.base, interval_fired, r.sm, 5000));
	ck_assert_uint_eq(r.sm->vms.rb.migrations, 0);
	r.sm->cfg.sweep_interval_s = 0;
	settle(&r);
	struct rebalance_quality q;
	ck_assert_int_eq(device_quality(&r, &q), REBAL_PERMILLE);
	teardown(&r);
}
END_TEST

int main(void)
{
	log_set_level(LOG_ERROR);
	Suite *s = suite_create("rebalance_emu");
	TCase *tc = tcase_create("consolidate");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, t_consolidate_unbalances);
	tcase_add_test(tc, t_consolidate_rebalances);
	tcase_add_test(tc, t_after_migrations);
	tcase_add_test(tc, t_interval);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
