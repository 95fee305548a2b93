/*
 * virtualization.rebalance.local end to end on the emulator: the SM
 * brings up the 3-level XGFT of tests/unit/data/rblocal (two pods of two
 * leaves under two pod spines, 4 roots, 3 hypervisors of 4 VFs per
 * leaf) with routing.engine vswitch-ftree, one VM on every hypervisor,
 * routed afresh; then a consolidation inside pod 0: the VMs of leaf
 * L0-S1 move one by one onto VF 1 of leaf L0-S0's hypervisors, and
 * after_migrations 3 makes a rebalance due at the third.  The tables are
 * read back from the emulated switches before and after it:
 *  - local: true: the level-1 sub-tree of pod 0 is routed again; only
 *    pod 0's leaves are written, no entry of another switch and none for
 *    a destination outside pod 0 changes, and the balance is a fresh
 *    vswitch-ftree's again (1000/1000); the blocks went out in the LFT
 *    order's waves (the reroute's planner); status and metrics say so;
 *    a heavy sweep afterwards keeps those tables (writes nothing);
 *  - local: false (the same moves): a full reroute, which writes more
 *    switches, to the same balance;
 *  - local: true with a move across the pods: the whole fabric,
 *    rerouted, counted as such.
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

#define NET "tests/unit/data/rblocal/xgft-3-2-2-vf4.net"
#define HYPS 12
#define PER_LEAF 3

struct run {
	EMU_RUN;
	struct vmop_wait w;
};

static char *net_text(void)
{
	FILE *fp = fopen(NET, "r");
	ck_assert_ptr_nonnull(fp);
	char *t = calloc(1, 1 << 16);
	ck_assert_ptr_nonnull(t);
	size_t n = fread(t, 1, (1 << 16) - 1, fp);
	ck_assert_uint_gt(n, 0);
	ck_assert_uint_lt(n, (1 << 16) - 1);
	fclose(fp);
	return t;
}

static void mark(struct fabric *f)
{
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (!strncmp(f->nodes[i].desc, "V-", 2))
			f->nodes[i].flags |= FNODE_VSWITCH;
}

static void settle(struct run *r)
{
	vmop_settle(r->base, r->sm);
}

static void vm_ok(struct run *r, int kind, const char *name, const char *hyp, int vf)
{
	const struct vmop_result *res = vmop_run(r->base, r->sm, &r->w, kind, name, hyp, vf);
	ck_assert_msg(res->ok, "%s %s: %s", name, hyp, res->err);
}

/* The SM's tables with every row read from the emulated switches. */
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

static int device_quality(const struct run *r)
{
	struct lft_tables t;
	struct rebalance_quality q;
	char err[256] = "";
	device_tables(r, &t);
	ck_assert_msg(rebalance_quality(&r->sm->sub.model->f, &t, &q, err,
					sizeof(err)) == 0, "%s", err);
	lft_tables_free(&t);
	return q.permille;
}

static void setup(struct run *r, int local)
{
	char yaml[512];
	memset(r, 0, sizeof(*r));
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "rblemu",
		     .text = net_text(), .seed = 7 });
	mark(&r->topo);
	r->sm = vmop_sm_new(r->state, MIG_DYNAMIC);
	snprintf(yaml, sizeof(yaml), "routing:\n  engine: vswitch-ftree\n"
		 "virtualization:\n  vswitches: [\"V-*\"]\n  rebalance:\n"
		 "    after_migrations: 3\n    local: %s\n", local ? "true" : "false");
	emu_sm_policy(r->sm, yaml);
	emu_sm_start(r->sm, r->base, r->e);
	settle(r);
	ck_assert_int_eq(r->sm->state, SMS_MASTER);
	/* a VM "vm-H" on VF 0 of every hypervisor, then a fresh reroute */
	char name[32], hyp[32], err[256];
	for (int h = 0; h < HYPS; h++) {
		snprintf(name, sizeof(name), "vm-%d", h);
		snprintf(hyp, sizeof(hyp), "V-%d", h);
		vm_ok(r, VMOP_CREATE, name, hyp, 0);
		settle(r);
	}
	ck_assert_int_eq(sweeper_request_reroute(r->sm, err, sizeof(err)), 0);
	settle(r);
	ck_assert_int_eq(device_quality(r), REBAL_PERMILLE);
}

static void teardown(struct run *r)
{
	emu_run_stop_sm(&r->run);
	ck_assert_uint_eq(emu_violations(r->e), 0);
	emu_run_free(&r->run);
}

/* "L<lev>-S<i>": its pod (roots: -1) and level; vSwitches: pod -2. */
static int switch_pod(const struct fabric *f, uint32_t n, int *lev)
{
	int l, i;
	if (fabric_is_vswitch(f, n))
		return -2;
	ck_assert_int_eq(sscanf(f->nodes[n].desc, "L%d-S%d", &l, &i), 2);
	*lev = l;
	return l == 2 ? -1 : i / 2;
}

/* The pod of a LID's end node, -1 for a physical switch's. */
static int lid_pod(const struct fabric *f, uint32_t lid)
{
	uint32_t n = f->ports[f->lid_port[lid]].node;
	int h;
	if (sscanf(f->nodes[n].desc, "V-%d", &h) == 1 ||
	    sscanf(f->nodes[n].desc, "P-%d", &h) == 1 ||
	    sscanf(f->nodes[n].desc, "F-%d", &h) == 1)
		return h / (2 * PER_LEAF);
	return -1;
}

struct diff {
	unsigned switches;	/* rows with an entry changed */
	unsigned outside;	/* of them, rows not of pod 0's leaves */
	unsigned lids_outside;	/* entries changed for a destination outside pod 0 */
};

static void diff(const struct run *r, const struct lft_tables *a,
		 const struct lft_tables *b, struct diff *d)
{
	const struct fabric *f = &r->sm->sub.model->f;
	memset(d, 0, sizeof(*d));
	ck_assert_uint_eq(a->n_sw, b->n_sw);
	for (uint32_t row = 0; row < a->n_sw; row++) {
		int lev = -1, pod = switch_pod(f, a->sw_node[row], &lev);
		int changed = 0;
		for (uint32_t lid = 1; lid <= a->max_lid && lid <= b->max_lid; lid++) {
			if (lft_row(a, row)[lid] == lft_row(b, row)[lid])
				continue;
			changed = 1;
			d->lids_outside += lid_pod(f, lid) != 0;
		}
		d->switches += changed;
		d->outside += changed && !(pod == 0 && lev == 0);
	}
}

/*
 * vm-3..5 (leaf L0-S1) to VF 1 of V-0..2 (leaf L0-S0), or with across
 * vm-6 (pod 1) first; the rebalance comes at the third move.  d: what it
 * wrote, read back.
 */
static void moves(struct run *r, int across, struct diff *d)
{
	char name[32], hyp[32];
	uint64_t fired = r->sm->vms.rb.fired[REBAL_MIGRATIONS];
	for (int i = 0; i < 3; i++) {
		int from = across && i == 0 ? 2 * PER_LEAF : PER_LEAF + i;
		snprintf(name, sizeof(name), "vm-%d", from);
		snprintf(hyp, sizeof(hyp), "V-%d", i);
		vm_ok(r, VMOP_MIGRATE, name, hyp, 1);
		struct lft_tables before, after;
		device_tables(r, &before);
		int q = device_quality(r);
		settle(r);	/* the check sweep, then the rebalance at the third */
		device_tables(r, &after);
		diff(r, &before, &after, d);
		fprintf(stderr, "%s move %d (%s to %s): balance %d/1000 after it",
			across ? "across:" : "in pod 0:", i + 1, name, hyp, q);
		if (i < 2) {
			ck_assert_uint_eq(d->switches, 0);	/* nothing due yet */
			fprintf(stderr, "\n");
		} else {
			ck_assert_int_lt(q, REBAL_PERMILLE);
			fprintf(stderr, "; rebalanced: %u switches written (%u outside pod 0's leaves, "
				"%u entries for destinations outside pod 0), balance %d/1000\n",
				d->switches, d->outside, d->lids_outside, device_quality(r));
		}
		lft_tables_free(&before);
		lft_tables_free(&after);
	}
	ck_assert_uint_eq(r->sm->vms.rb.fired[REBAL_MIGRATIONS], fired + 1);
	ck_assert_int_eq(device_quality(r), REBAL_PERMILLE);
}

START_TEST(t_local_vs_full)
{
	struct run r;
	struct diff local, full;
	setup(&r, 1);
	moves(&r, 0, &local);
	ck_assert_uint_gt(local.switches, 0);
	ck_assert_uint_le(local.switches, 2);
	ck_assert_uint_eq(local.outside, 0);
	ck_assert_uint_eq(local.lids_outside, 0);
	const struct rebalance_state *rb = &r.sm->vms.rb;
	ck_assert_uint_eq(rb->local, 1);
	ck_assert_uint_eq(rb->local_whole, 0);
	ck_assert_uint_eq(rb->last_local.st.level, 1);
	ck_assert_uint_eq(rb->last_local.st.leaves, 2);
	ck_assert_uint_eq(rb->last_local.switches_changed, local.switches);
	/* written by the reroute's planner: the LFT order's waves, its blocks */
	const struct lft_order_stats *os = &r.sm->sweep.last.prog.order;
	ck_assert_uint_ge(os->waves, 1);
	ck_assert_uint_ge(os->blocks, local.switches);
	ck_assert_uint_eq(r.sm->sweep.last.prog.lft_blocks, os->writes);
	json_t *o = json_object();
	vms_to_ctl(r.sm, o);
	json_t *b = json_object_get(json_object_get(o, "vms"), "rebalance");
	ck_assert(json_is_true(json_object_get(b, "local")));
	ck_assert_int_eq(json_integer_value(json_object_get(b, "local_rebalances")), 1);
	json_t *ll = json_object_get(b, "last_local");
	ck_assert_int_eq(json_integer_value(json_object_get(ll, "level")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(ll, "leaves")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(ll, "switches_written")),
			 (json_int_t)local.switches);
	json_decref(o);
	ck_assert(emu_metric(r.sm, "ibsmd_vm_local_rebalances_total") == 1);
	ck_assert(emu_metric(r.sm, "ibsmd_vm_rebalances_total{reason=\"migrations\"}") == 1);
	/* a heavy sweep afterwards keeps the rebalanced tables: nothing written */
	struct lft_tables held, again;
	struct diff d;
	device_tables(&r, &held);
	sweeper_request_heavy(r.sm, "test: after the local rebalance");
	settle(&r);
	device_tables(&r, &again);
	diff(&r, &held, &again, &d);
	ck_assert_uint_eq(d.switches, 0);
	ck_assert_uint_eq(r.sm->sweep.last.prog.lft_blocks, 0);
	lft_tables_free(&held);
	lft_tables_free(&again);
	teardown(&r);

	setup(&r, 0);
	moves(&r, 0, &full);
	ck_assert_uint_eq(r.sm->vms.rb.local, 0);
	fprintf(stderr, "pod 0's consolidation: local rebalance %u switches, full reroute %u\n",
		local.switches, full.switches);
	ck_assert_uint_lt(local.switches, full.switches);
	teardown(&r);
}
END_TEST

START_TEST(t_across_pods_whole)
{
	struct run r;
	struct diff d;
	setup(&r, 1);
	moves(&r, 1, &d);
	ck_assert_uint_eq(r.sm->vms.rb.local, 0);
	ck_assert_uint_eq(r.sm->vms.rb.local_whole, 1);
	ck_assert_uint_gt(d.outside, 0);
	ck_assert(emu_metric(r.sm, "ibsmd_vm_local_rebalances_total") == 0);
	teardown(&r);
}
END_TEST

int main(void)
{
	log_set_level(LOG_ERROR);
	Suite *s = suite_create("rblocal_emu");
	TCase *tc = tcase_create("local");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, t_local_vs_full);
	tcase_add_test(tc, t_across_pods_whole);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
