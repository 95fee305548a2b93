/*
 * A VM's writes on the emulator (sm/vm/vmexec.c): the SM brings up the
 * hypervisor fabric of vswitch_testlib.h, its model's "V-*" switches are
 * marked vSwitches, and vmexec_start runs a plan of reconfig/migrate.c.
 * Judged from the emulated devices, not the SM's memory:
 *  - a prepopulated migration to another leaf: from every switch the
 *    VM's LID reaches the destination VF and the swapped LID the source
 *    VF; the two VF ports hold the swapped LIDs; the SM's tables and
 *    model follow; one operation at a time;
 *  - a dynamic boot on a LID above every switch's LinearFDBTop: the tops
 *    are raised, the LID reaches the VF from every switch, the model's
 *    max_lid follows;
 *  - a dynamic boot on an idle VF: VF and vSwitch port go ACTIVE;
 *  - a destination vSwitch that does not answer: the run stops after its
 *    wave (nothing of the later waves is written), done says it failed,
 *    the SM keeps its tables and LIDs.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu.h"
#include "reconfig/migrate.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/base/topo.h"
#include "sm/vm/vmexec.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "emu_testlib.h"
#include "vmop_testlib.h"
#include "vswitch_testlib.h"

struct run {
	EMU_RUN;
	int done, ok;
	struct vmexec_stats st;
};

static void on_done(struct sm *sm, void *arg, int ok,
		    const struct vmexec_stats *st)
{
	struct run *r = arg;
	ck_assert_ptr_eq(sm, r->sm);
	ck_assert_int_eq(vmexec_busy(sm), 0);
	r->done++;
	r->ok = ok;
	r->st = *st;
}

static void setup_with(struct run *r, int scheme)
{
	memset(r, 0, sizeof(*r));
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "vmexec",
		     .text = hv_text(), .seed = 7 });
	r->sm = vmop_sm_new(r->state, scheme);
	emu_sm_start(r->sm, r->base, r->e);
	emu_sm_settle(r->base, r->sm, 20000);
	ck_assert_int_eq(r->sm->state, SMS_MASTER);
	hv_mark(&r->sm->sub.model->f);
}

static void setup(struct run *r)
{
	setup_with(r, MIG_PREPOPULATED);
}

static void teardown(struct run *r)
{
	ck_assert_int_eq(vmexec_busy(r->sm), 0);
	emu_run_free(&r->run);
}

/*
 * The port GUID where a packet for lid ends, following the emulated
 * switches' LFTs from switch sw of the topology; 0 when it is dropped,
 * loops, or falls above a switch's LinearFDBTop.
 */
static uint64_t walk(const struct run *r, uint32_t sw, uint32_t lid)
{
	const struct fabric *f = &r->topo;
	for (int hops = 0; hops < 16; hops++) {
		uint64_t g = f->nodes[sw].guid;
		int p = emu_lft_entry(r->e, g, lid);
		if ((int)lid > emu_lft_top(r->e, g) || p <= 0 || p == 0xff ||
		    p > f->nodes[sw].nports)
			return 0;
		uint32_t rem = fabric_portp(f, sw, (unsigned)p)->remote;
		if (rem == FAB_NONE)
			return 0;
		if (f->nodes[f->ports[rem].node].type != FAB_SWITCH)
			return f->ports[rem].guid;
		sw = f->ports[rem].node;
	}
	return 0;
}

/* Every switch of the topology sends lid to port guid g. */
static void reaches(const struct run *r, uint32_t lid, uint64_t g)
{
	for (uint32_t n = 0; n < r->topo.n_nodes; n++)
		if (r->topo.nodes[n].type == FAB_SWITCH && walk(r, n, lid) != g)
			ck_abort_msg("%s: LID %u goes to 0x%llx, not 0x%llx",
				     r->topo.nodes[n].desc, lid,
				     (unsigned long long)walk(r, n, lid),
				     (unsigned long long)g);
}

/* The SM's tables say what the devices hold, for lid. */
static void tables_match(const struct run *r, uint32_t lid)
{
	const struct lft_tables *t = &r->sm->sub.lft;
	const struct fabric *f = &r->sm->sub.model->f;
	for (uint32_t row = 0; row < t->n_sw; row++) {
		uint64_t g = f->nodes[t->sw_node[row]].guid;
		ck_assert_int_eq(lft_row(t, row)[lid], emu_lft_entry(r->e, g, lid));
	}
}

/* The LID and state the device of topology port pi holds. */
static int dev_lid(const struct run *r, uint32_t pi)
{
	const struct fab_port *p = &r->topo.ports[pi];
	return emu_port_lid(r->e, r->topo.nodes[p->node].guid, p->num);
}

static int dev_state(const struct run *r, uint32_t pi)
{
	const struct fab_port *p = &r->topo.ports[pi];
	return emu_port_state(r->e, r->topo.nodes[p->node].guid, p->num);
}

static void run_vm(struct run *r, struct migration *m, struct lft_tables *t)
{
	char err[256] = "";
	struct vm_port_set ps[2];
	unsigned n = vmexec_port_sets(m, ps);
	ck_assert_msg(vmexec_start(r->sm, m, t, ps, n, on_done, r, err,
				   sizeof(err)) == 0, "%s", err);
	ck_assert_ptr_null(t->port);	/* taken */
	ck_assert_ptr_null(m->w);
	ck_assert_int_eq(r->done, 0);	/* never before it returns */
	ck_assert_int_eq(vmexec_busy(r->sm), 1);
	/* one at a time */
	struct migration m2 = { 0 };
	struct lft_tables t2 = { 0 };
	ck_assert_int_eq(vmexec_start(r->sm, &m2, &t2, NULL, 0, on_done, r, err,
				      sizeof(err)), -1);
	emu_run_until(r->base, &r->done, 5000);
	ck_assert_int_eq(r->done, 1);
}

START_TEST(t_move_prepopulated)
{
	struct run r;
	struct migration m;
	struct lft_tables t;
	char err[256] = "";
	setup(&r);
	struct fabric *f = &r.sm->sub.model->f;
	uint32_t src = hv_vf_port(f, 0, 0, 0), dst = hv_vf_port(f, 2, 1, 1);
	uint32_t a = f->ports[src].lid, b = f->ports[dst].lid;
	uint64_t sg = f->ports[src].guid, dg = f->ports[dst].guid;
	uint32_t tsrc = hv_vf_port(&r.topo, 0, 0, 0), tdst = hv_vf_port(&r.topo, 2, 1, 1);

	ck_assert_uint_gt(a, 0);
	ck_assert_uint_gt(b, 0);
	reaches(&r, a, sg);
	ck_assert_int_eq(migrate_tables_copy(&t, &r.sm->sub.lft, f, 0), 0);
	ck_assert_msg(migrate_plan_vm(f, &t, src, dst, MIG_PREPOPULATED, MIG_ITRC,
				      NULL, &m, err, sizeof(err)) == 0, "%s", err);
	uint32_t blocks = m.lft_blocks, vblocks = m.vswitch_blocks;
	ck_assert_uint_gt(vblocks, 0);
	run_vm(&r, &m, &t);
	ck_assert_int_eq(r.ok, 1);
	ck_assert_uint_eq(r.st.failed, 0);
	ck_assert_uint_eq(r.st.lft_blocks, blocks);
	ck_assert_uint_eq(r.st.vswitch_blocks, vblocks);
	ck_assert_uint_ge(r.st.other_smps, 2);	/* the two VF ports' PortInfo */
	/* the devices: LIDs swapped on the ports, routes follow */
	ck_assert_int_eq(dev_lid(&r, tdst), (int)a);
	ck_assert_int_eq(dev_lid(&r, tsrc), (int)b);
	reaches(&r, a, dg);
	reaches(&r, b, sg);
	/* the SM: its tables and model */
	tables_match(&r, a);
	tables_match(&r, b);
	ck_assert_uint_eq(f->ports[dst].lid, a);
	ck_assert_uint_eq(f->ports[src].lid, b);
	ck_assert_uint_eq(f->lid_port[a], dst);
	ck_assert_uint_eq(emu_violations(r.e), 0);
	teardown(&r);
}
END_TEST

/*
 * A dynamic VM booted on VF k of hypervisor (l, i) with the LID above
 * the model's highest: the device's VF and its vSwitch port ACTIVE with
 * it, every switch routes it there, the SM's tables and model follow.
 */
static void boot(struct run *r, int l, int i, int k)
{
	struct migration m;
	struct lft_tables t;
	char err[256] = "";
	struct fabric *f = &r->sm->sub.model->f;
	uint32_t vf = hv_vf_port(f, l, i, k), tvf = hv_vf_port(&r->topo, l, i, k);
	uint32_t lid = f->max_lid + 1;

	ck_assert_int_eq(migrate_tables_copy(&t, &r->sm->sub.lft, f, lid), 0);
	ck_assert_msg(migrate_plan_boot(f, &t, vf, lid, &m, err, sizeof(err)) == 0,
		      "%s", err);
	run_vm(r, &m, &t);
	ck_assert_int_eq(r->ok, 1);
	ck_assert_int_eq(dev_lid(r, tvf), (int)lid);
	ck_assert_int_eq(dev_state(r, tvf), PORT_ACTIVE);
	ck_assert_int_eq(dev_state(r, r->topo.ports[tvf].remote), PORT_ACTIVE);
	reaches(r, lid, f->ports[vf].guid);
	tables_match(r, lid);
	ck_assert_uint_eq(r->sm->sub.lft.max_lid, lid);
	ck_assert_uint_eq(f->max_lid, lid);
	ck_assert_uint_eq(f->lid_port[lid], vf);
	ck_assert_uint_eq(f->ports[vf].lid, lid);
	ck_assert_int_eq(f->ports[vf].flags & FPORT_NOLID, 0);
	ck_assert_uint_eq(emu_violations(r->e), 0);
}

/* Above every switch's LinearFDBTop: raised, one SwitchInfo each. */
START_TEST(t_boot_dynamic)
{
	struct run r;
	setup(&r);
	uint32_t lid = r.sm->sub.model->f.max_lid + 1;
	for (uint32_t n = 0; n < r.topo.n_nodes; n++)
		if (r.topo.nodes[n].type == FAB_SWITCH)
			ck_assert_int_lt(emu_lft_top(r.e, r.topo.nodes[n].guid), (int)lid);
	boot(&r, 1, 0, 2);
	/* every switch's top raised, and the VF's PortInfo */
	ck_assert_uint_ge(r.st.other_smps, r.sm->sub.lft.n_sw + 1);
	for (uint32_t n = 0; n < r.topo.n_nodes; n++)
		if (r.topo.nodes[n].type == FAB_SWITCH)
			ck_assert_int_ge(emu_lft_top(r.e, r.topo.nodes[n].guid), (int)lid);
	teardown(&r);
}
END_TEST

/*
 * Dynamic scheme: a VM on an idle VF.  Where the SM leaves idle VFs
 * without a LID (sm/model/lids.c, FPORT_NOLID) the VF and its vSwitch port
 * are in INIT before; after the boot both are ACTIVE.
 */
START_TEST(t_boot_idle)
{
	struct run r;
	setup_with(&r, MIG_DYNAMIC);
	struct fabric *f = &r.sm->sub.model->f;
	uint32_t vf = hv_vf_port(f, 2, 2, 3), tvf = hv_vf_port(&r.topo, 2, 2, 3);
	if (f->ports[vf].flags & FPORT_NOLID) {
		ck_assert_int_eq(dev_state(&r, tvf), PORT_INIT);
		ck_assert_int_eq(dev_state(&r, r.topo.ports[tvf].remote), PORT_INIT);
	}
	boot(&r, 2, 2, 3);
	teardown(&r);
}
END_TEST

START_TEST(t_stop_on_failure)
{
	struct run r;
	struct migration m;
	struct lft_tables t;
	char err[256] = "";
	setup(&r);
	struct fabric *f = &r.sm->sub.model->f;
	uint32_t src = hv_vf_port(f, 0, 0, 0), dst = hv_vf_port(f, 3, 2, 0);
	uint32_t a = f->ports[src].lid;
	uint32_t svs = hv_find(&r.topo, "V-0-0");

	/* the destination vSwitch (the first LFT wave) answers nothing */
	ck_assert_int_eq(emu_set_dead(r.e, r.topo.nodes[hv_find(&r.topo, "V-3-2")].guid,
				      0, 1), 0);
	ck_assert_int_eq(migrate_tables_copy(&t, &r.sm->sub.lft, f, 0), 0);
	ck_assert_msg(migrate_plan_vm(f, &t, src, dst, MIG_DYNAMIC, MIG_ITRC,
				      NULL, &m, err, sizeof(err)) == 0, "%s", err);
	uint8_t old = lft_row(&r.sm->sub.lft,
			      r.sm->sub.lft.row_of_node[hv_find(f, "V-0-0")])[a];
	run_vm(&r, &m, &t);
	ck_assert_int_eq(r.ok, 0);
	ck_assert_uint_gt(r.st.failed, 0);
	ck_assert_int_eq(r.st.stopped, 1);
	/* the source vSwitch (the last LFT wave: it waits for its leaf) was never told */
	ck_assert_int_eq(emu_lft_entry(r.e, r.topo.nodes[svs].guid, a), old);
	/* the SM kept its tables and LIDs */
	ck_assert_uint_eq(f->ports[src].lid, a);
	ck_assert_uint_eq(f->lid_port[a], src);
	ck_assert_uint_eq(lft_row(&r.sm->sub.lft,
				  r.sm->sub.lft.row_of_node[hv_find(f, "V-0-0")])[a], old);
	teardown(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vmexec_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, t_move_prepopulated);
	tcase_add_test(tc, t_boot_dynamic);
	tcase_add_test(tc, t_boot_idle);
	tcase_add_test(tc, t_stop_on_failure);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
