/*
 * The VM commands end to end on the emulator (sm/vm/vmops.c over
 * sm/vm/vmexec.c): the SM brings up the hypervisor fabric of
 * vswitch_testlib.h with virtualization.vswitches ["V-*"], then VMs are
 * created, migrated and destroyed as ibsmctl vm does it.  Judged from the
 * emulated devices (LFT walks, port LIDs and states) and the state files,
 * not the SM's memory:
 *  - dynamic: idle VFs have no LID and stay INIT after bring-up, and that
 *    is no failure; a created VM's LID reaches its VF from every switch;
 *    a migration to another leaf moves it (same LID), no other LID's
 *    entry changes, the heavy sweep after writes no LFT block; the
 *    registry and guid2lid say where it is; a destroy drops the LID;
 *  - prepopulated: a VM takes its VF's LID with no write; a migration
 *    swaps the LIDs of the two VF ports on the devices;
 *  - refusals: a taken VF, a commit without prepare, an unknown
 *    hypervisor, a second VM of that name;
 *  - a restart keeps the VM (registry and LID).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu.h"
#include "reconfig/migrate.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/model/mcgroups.h"
#include "sm/mcast/mcast_sm.h"
#include "sm/base/topo.h"
#include "sm/vm/vmops.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "emu_testlib.h"
#include "vmop_testlib.h"
#include "vswitch_testlib.h"

#define MAXLID 80

struct run {
	EMU_RUN;
	struct vmop_wait w;
};

static int sweeping(const void *sm)
{
	return ((const struct sm *)sm)->sw.activity == SM_HEAVY_SWEEP;
}

static void settle(struct run *r)
{
	vmop_settle(r->base, r->sm);
}

static void sm_up(struct run *r, int scheme)
{
	r->sm = vmop_sm_new(r->state, scheme);
	emu_sm_start(r->sm, r->base, r->e);
	settle(r);
	ck_assert_int_eq(r->sm->state, SMS_MASTER);
}

static void setup(struct run *r, int scheme)
{
	memset(r, 0, sizeof(*r));
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "vmemu",
		     .text = hv_text(), .seed = 11 });
	hv_mark(&r->topo);	/* for fabric_vswitch_* on the topology */
	sm_up(r, scheme);
}

static void teardown(struct run *r)
{
	emu_run_stop_sm(&r->run);
	ck_assert_uint_eq(emu_violations(r->e), 0);
	emu_run_free(&r->run);
}

/* Runs a VM command to its end; returns its result (ok or not). */
static const struct vmop_result *vm_cmd(struct run *r, int kind, const char *name,
					const char *hyp, int vf)
{
	return vmop_run(r->base, r->sm, &r->w, kind, name, hyp, vf);
}

static uint64_t walk(const struct run *r, uint32_t sw, uint32_t lid)
{
	return hv_walk(r->e, &r->topo, sw, lid);
}

static void reaches(const struct run *r, uint32_t lid, uint64_t g)
{
	hv_reaches(r->e, &r->topo, lid, g);
}

/* Every switch's LFT entries for LIDs 1..MAXLID, from the devices. */
static void snapshot(const struct run *r, int *out)
{
	for (uint32_t n = 0; n < r->topo.n_nodes; n++)
		for (uint32_t lid = 1; lid <= MAXLID; lid++)
			out[n * (MAXLID + 1) + lid] = r->topo.nodes[n].type == FAB_SWITCH ?
				emu_lft_entry(r->e, r->topo.nodes[n].guid, lid) : 0;
}

/* Entries that differ, except for LIDs skip_a, skip_b. */
static int moved(const struct run *r, const int *a, const int *b,
		 uint32_t skip_a, uint32_t skip_b)
{
	int n = 0;
	for (uint32_t i = 0; i < r->topo.n_nodes; i++)
		for (uint32_t lid = 1; lid <= MAXLID; lid++)
			if (lid != skip_a && lid != skip_b &&
			    a[i * (MAXLID + 1) + lid] != b[i * (MAXLID + 1) + lid])
				n++;
	return n;
}

static const struct fab_port *vf_port(const struct run *r, int l, int i, int k)
{
	return &r->topo.ports[hv_vf_port(&r->topo, l, i, k)];
}

static int dev_lid(const struct run *r, const struct fab_port *p)
{
	return emu_port_lid(r->e, r->topo.nodes[p->node].guid, p->num);
}

static int dev_state(const struct run *r, const struct fab_port *p)
{
	return emu_port_state(r->e, r->topo.nodes[p->node].guid, p->num);
}

/* Does file DIR/name hold a line with both a and b? */
static int file_has(const struct run *r, const char *name, const char *a,
		    const char *b)
{
	char path[128], line[512];
	snprintf(path, sizeof(path), "%s/%s", r->state, name);
	FILE *fp = fopen(path, "r");
	int found = 0;
	if (!fp)
		return 0;
	while (!found && fgets(line, sizeof(line), fp))
		found = strstr(line, a) && strstr(line, b);
	fclose(fp);
	return found;
}

START_TEST(t_dynamic)
{
	struct run r;
	static int before[128 * (MAXLID + 1)], after[128 * (MAXLID + 1)];
	setup(&r, MIG_DYNAMIC);
	ck_assert_uint_le(r.topo.n_nodes, 128);
	/* idle VFs: no LID, INIT, and no failure for it */
	for (int k = 0; k < HV_VFS; k++) {
		ck_assert_int_eq(dev_lid(&r, vf_port(&r, 0, 0, k)), 0);
		ck_assert_int_eq(dev_state(&r, vf_port(&r, 0, 0, k)), PORT_INIT);
	}
	ck_assert_uint_eq(r.sm->sweep.last.unresponsive, 0);
	ck_assert_uint_eq(r.sm->sweep.last.lids_rep.exhausted, 0);

	const struct vmop_result *res = vm_cmd(&r, VMOP_CREATE, "a", "V-0-0", -1);
	ck_assert_msg(res->ok, "%s", res->err);
	uint32_t lid = res->vm.lid;
	ck_assert_uint_gt(lid, 0);
	ck_assert_int_eq(res->vm.vf, 0);
	ck_assert_uint_gt(res->st.lft_blocks, 0);
	const struct fab_port *src = vf_port(&r, 0, 0, 0);
	reaches(&r, lid, src->guid);
	ck_assert_int_eq(dev_lid(&r, src), (int)lid);
	settle(&r);	/* the check sweep */
	ck_assert_int_eq(dev_state(&r, src), PORT_ACTIVE);
	ck_assert_uint_eq(r.sm->sweep.last.prog.lft_blocks, 0);
	ck_assert_uint_eq(r.sm->sweep.last.prog.portinfo_sets, 0);
	char l[32], g[32];
	snprintf(l, sizeof(l), "lid=%u ", lid);
	snprintf(g, sizeof(g), "vf_guid=0x%016llx", (unsigned long long)src->guid);
	ck_assert(file_has(&r, "vms", l, g));

	/* a second VM on that hypervisor takes the next VF; the taken one refused */
	res = vm_cmd(&r, VMOP_CREATE, "b", "V-0-0", 0);
	ck_assert(!res->ok);
	ck_assert_ptr_nonnull(strstr(res->err, "taken"));
	res = vm_cmd(&r, VMOP_CREATE, "a", "V-1-0", -1);
	ck_assert(!res->ok);
	res = vm_cmd(&r, VMOP_CREATE, "b", "V-9-9", -1);
	ck_assert(!res->ok);
	ck_assert_ptr_nonnull(strstr(res->err, "no hypervisor"));
	res = vm_cmd(&r, VMOP_MIGRATE, "a", NULL, -1);
	ck_assert(!res->ok);	/* no --to */

	/* to another leaf, by the PF's name */
	snapshot(&r, before);
	struct vmop_req q;
	memset(&q, 0, sizeof(q));
	q.kind = VMOP_MIGRATE;
	q.commit = 1;
	snprintf(q.name, sizeof(q.name), "a");
	ck_assert_int_eq(vmop_start(r.sm, &q, vmop_wait_done, &r.w, &r.w.r), -1);
	ck_assert_ptr_nonnull(strstr(r.w.r.err, "prepared"));	/* commit without prepare */
	res = vm_cmd(&r, VMOP_MIGRATE, "a", "P-2-1", 2);
	ck_assert_msg(res->ok, "%s", res->err);
	ck_assert_uint_eq(res->vm.lid, lid);
	const struct fab_port *dst = vf_port(&r, 2, 1, 2);
	reaches(&r, lid, dst->guid);
	ck_assert_int_eq(dev_lid(&r, dst), (int)lid);
	snapshot(&r, after);
	ck_assert_int_eq(moved(&r, before, after, lid, lid), 0);
	settle(&r);
	ck_assert_uint_eq(r.sm->sweep.last.prog.lft_blocks, 0);
	ck_assert_uint_eq(r.sm->sweep.last.prog.portinfo_sets, 0);
	ck_assert_int_eq(dev_state(&r, dst), PORT_ACTIVE);
	/* the VF the VM left is reset: LID 0, back in INIT; no LID twice */
	ck_assert_int_eq(dev_lid(&r, src), 0);
	ck_assert_int_eq(dev_state(&r, src), PORT_INIT);
	snprintf(g, sizeof(g), "vf_guid=0x%016llx", (unsigned long long)dst->guid);
	ck_assert(file_has(&r, "vms", l, g));
	snprintf(g, sizeof(g), "0x%016llx %u ", (unsigned long long)dst->guid, lid);
	ck_assert(file_has(&r, "guid2lid", g, ""));
	snprintf(g, sizeof(g), "0x%016llx ", (unsigned long long)src->guid);
	ck_assert(!file_has(&r, "guid2lid", g, ""));

	/* the same after a restart: the registry's VM keeps its LID */
	emu_run_stop_sm(&r.run);
	sm_up(&r, MIG_DYNAMIC);
	ck_assert_uint_eq(r.sm->vms.n, 1);
	reaches(&r, lid, dst->guid);
	ck_assert_uint_eq(r.sm->sub.model->f.ports[vm_port(&r.sm->vms.v[0],
				&r.sm->sub.model->f)].lid, lid);

	/* destroy: nowhere */
	res = vm_cmd(&r, VMOP_DESTROY, "a", NULL, -1);
	ck_assert_msg(res->ok, "%s", res->err);
	for (uint32_t n = 0; n < r.topo.n_nodes; n++)
		if (r.topo.nodes[n].type == FAB_SWITCH)
			ck_assert_uint_eq(walk(&r, n, lid), 0);
	settle(&r);
	ck_assert_int_eq(dev_lid(&r, dst), 0);
	ck_assert_int_eq(dev_state(&r, dst), PORT_INIT);
	ck_assert_uint_eq(r.sm->vms.n, 0);
	ck_assert(!file_has(&r, "vms", l, ""));
	teardown(&r);
}
END_TEST

/* The MFT entry of mlid on the vSwitch a VF port hangs from, and that port. */
static uint64_t vf_mft(const struct run *r, const struct fab_port *vf,
		       uint16_t mlid, unsigned *port)
{
	const struct fab_port *up = &r->topo.ports[vf->remote];
	uint64_t m = 0;
	ck_assert_int_eq(emu_mft_entry(r->e, r->topo.nodes[up->node].guid, mlid, &m), 0);
	*port = up->num;
	return m;
}

static int mcast_idle(const void *arg)
{
	return vmop_sm_idle(arg) && !mcast_sm_pending(arg);
}

/*
 * A VM that joined a group by its vGUID (as the SA takes it, sm/
 * sa_mcmember.c) is on the group's tree at its VF, and after a
 * migration at its new VF: the VM's writes re-plan the trees, the VF it
 * left gets no more of the group's packets.
 */
START_TEST(t_multicast_follows_vm)
{
	struct run r;
	unsigned port;
	setup(&r, MIG_DYNAMIC);
	const struct vmop_result *res = vm_cmd(&r, VMOP_CREATE, "m", "V-0-0", -1);
	ck_assert_msg(res->ok, "%s", res->err);
	uint64_t vguid = res->vm.vguid;
	const struct fab_port *src = vf_port(&r, 0, 0, res->vm.vf);
	settle(&r);
	struct mc_group want = { .qkey = 0x0b1b, .pkey = 0xffff, .mtu = 4,
				 .rate = 3, .scope = 2 };
	const char *err = NULL;
	want.mgid[0] = 0xff;
	want.mgid[1] = 0x12;
	want.mgid[2] = 0xe0;
	want.mgid[15] = 7;
	struct mc_group *g = mc_create(&r.sm->mc, &want, &err);
	ck_assert_ptr_nonnull(g);
	uint16_t mlid = g->mlid;
	const struct fab_port *host = &r.topo.ports[hv_vf_port(&r.topo, 3, 0, 0)];
	ck_assert_int_eq(mc_join(&r.sm->mc, g, vguid, MC_JOIN_FULL, 0), 1);
	ck_assert_int_eq(mc_join(&r.sm->mc, g, host->guid, MC_JOIN_FULL, 0), 1);
	mcast_sm_changed(r.sm);
	ck_assert(emu_run_while(r.base, mcast_idle, r.sm, 5000));
	uint64_t m = vf_mft(&r, src, mlid, &port);
	ck_assert_msg(m >> port & 1, "the VM's vSwitch does not send MLID 0x%x to its VF", mlid);

	res = vm_cmd(&r, VMOP_MIGRATE, "m", "V-2-1", -1);
	ck_assert_msg(res->ok, "%s", res->err);
	const struct fab_port *dst = vf_port(&r, 2, 1, res->vm.vf);
	ck_assert(emu_run_while(r.base, mcast_idle, r.sm, 5000));
	m = vf_mft(&r, dst, mlid, &port);
	ck_assert_msg(m >> port & 1, "after the move, V-2-1 does not send MLID 0x%x to the VM", mlid);
	m = vf_mft(&r, src, mlid, &port);
	ck_assert_msg(!(m >> port & 1), "after the move, V-0-0 still sends MLID 0x%x to the VF left", mlid);
	teardown(&r);
}
END_TEST

START_TEST(t_prepopulated)
{
	struct run r;
	setup(&r, MIG_PREPOPULATED);
	const struct fab_port *src = vf_port(&r, 1, 0, 1), *dst = vf_port(&r, 3, 2, 0);
	int src_lid = dev_lid(&r, src), dst_lid = dev_lid(&r, dst);
	ck_assert_int_gt(src_lid, 0);
	ck_assert_int_gt(dst_lid, 0);
	const struct vmop_result *res = vm_cmd(&r, VMOP_CREATE, "p", "V-1-0", 1);
	ck_assert_msg(res->ok, "%s", res->err);
	ck_assert_int_eq((int)res->vm.lid, src_lid);
	ck_assert_int_eq(res->wrote, 0);
	res = vm_cmd(&r, VMOP_MIGRATE, "p", "V-3-2", 0);
	ck_assert_msg(res->ok, "%s", res->err);
	ck_assert_int_eq(dev_lid(&r, dst), src_lid);
	ck_assert_int_eq(dev_lid(&r, src), dst_lid);
	reaches(&r, (uint32_t)src_lid, dst->guid);
	reaches(&r, (uint32_t)dst_lid, src->guid);
	settle(&r);
	ck_assert_uint_eq(r.sm->sweep.last.prog.lft_blocks, 0);
	ck_assert_uint_eq(r.sm->sweep.last.prog.portinfo_sets, 0);
	ck_assert_int_eq(dev_lid(&r, dst), src_lid);

	/*
	 * A command during a heavy sweep waits for its end, then runs.  The
	 * sweep may take under a millisecond: look after each loop turn.
	 */
	unsigned sweeps = r.sm->sweep.heavy_sweeps;
	sweeper_request_heavy(r.sm, "test");
	ck_assert(emu_run_while(r.base, sweeping, r.sm, 1000));
	res = vm_cmd(&r, VMOP_CREATE, "q", "V-0-0", 3);
	ck_assert_msg(res->ok, "%s", res->err);
	ck_assert_uint_gt(r.sm->sweep.heavy_sweeps, sweeps);	/* the sweep ended first */
	ck_assert_int_eq((int)res->vm.lid, dev_lid(&r, vf_port(&r, 0, 0, 3)));
	settle(&r);
	teardown(&r);
}
END_TEST

/* vm migrate NAME --to HYP --vf VF with --prepare, or --commit; its result. */
static const struct vmop_result *migrate_step(struct run *r, const char *name,
					      const char *hyp, int vf, int prepare,
					      double *ms)
{
	struct vmop_req q;
	memset(&q, 0, sizeof(q));
	q.kind = VMOP_MIGRATE;
	q.prepare = prepare;
	q.commit = !prepare;
	q.vf = vf;
	snprintf(q.name, sizeof(q.name), "%s", name);
	snprintf(q.hyp, sizeof(q.hyp), "%s", hyp);
	r->w.done = 0;
	double t0 = emu_now_s();
	int rc = vmop_start(r->sm, &q, vmop_wait_done, &r->w, &r->w.r);
	if (rc == 0)
		emu_run_until(r->base, &r->w.done, 5000);
	*ms = (emu_now_s() - t0) * 1000;
	ck_assert_msg(r->w.r.ok, "%s: %s", name, r->w.r.err);
	return &r->w.r;
}

/*
 * vm migrate --prepare plans the move (FTreeMinRC's marking and the
 * writes) and --commit writes that plan: the VM reaches its new VF from
 * every switch, no other LID's entry moved, the check sweep writes
 * nothing.  A plan another VM's prepare replaced, or one whose LIDs'
 * routes changed since (a full reroute over new weights), is planned
 * again at commit, with the same outcome.
 */
START_TEST(t_prepare_plans)
{
	struct run r;
	static int before[128 * (MAXLID + 1)], after[128 * (MAXLID + 1)];
	double ms, commit_prepared = 0, commit_unprepared = 0;
	setup(&r, MIG_DYNAMIC);
	const struct vmop_result *res = vm_cmd(&r, VMOP_CREATE, "a", "V-0-0", 0);
	ck_assert_msg(res->ok, "%s", res->err);
	uint32_t a = res->vm.lid;
	res = vm_cmd(&r, VMOP_CREATE, "b", "V-1-0", 0);
	ck_assert_msg(res->ok, "%s", res->err);
	uint32_t b = res->vm.lid;
	settle(&r);

	/* prepared, then committed: the plan of the prepare is written */
	res = migrate_step(&r, "a", "V-3-1", 1, 1, &ms);
	ck_assert(res->prepared);
	ck_assert(res->planned_at_prepare);
	ck_assert_uint_gt(res->st.switches_marked, 0);
	uint32_t marked = res->st.switches_marked;
	snapshot(&r, before);
	res = migrate_step(&r, "a", "", -1, 0, &commit_prepared);
	ck_assert(!res->prepared);
	ck_assert(res->planned_at_prepare);
	ck_assert_uint_eq(res->st.switches_marked, marked);
	reaches(&r, a, vf_port(&r, 3, 1, 1)->guid);
	snapshot(&r, after);
	ck_assert_int_eq(moved(&r, before, after, a, a), 0);
	settle(&r);
	ck_assert_uint_eq(r.sm->sweep.last.prog.lft_blocks, 0);
	ck_assert_uint_eq(r.sm->sweep.last.prog.portinfo_sets, 0);

	/* a's plan replaced by b's: a's commit plans again; b's writes its own */
	migrate_step(&r, "a", "V-2-0", 2, 1, &ms);
	migrate_step(&r, "b", "V-0-1", 3, 1, &ms);
	res = migrate_step(&r, "a", "", -1, 0, &commit_unprepared);
	ck_assert(!res->planned_at_prepare);
	reaches(&r, a, vf_port(&r, 2, 0, 2)->guid);
	settle(&r);
	ck_assert_uint_eq(r.sm->sweep.last.prog.lft_blocks, 0);
	res = migrate_step(&r, "b", "", -1, 0, &ms);
	ck_assert(!res->planned_at_prepare);	/* a's commit dropped it */
	reaches(&r, b, vf_port(&r, 0, 1, 3)->guid);
	settle(&r);

	/* routes of the destination's PF changed after the prepare: planned again */
	migrate_step(&r, "b", "V-2-2", 0, 1, &ms);
	uint32_t pf = fabric_vswitch_pf(&r.sm->sub.model->f,
					hv_find(&r.sm->sub.model->f, "V-2-2"));
	uint32_t row = r.sm->sub.lft.row_of_node[hv_find(&r.sm->sub.model->f, "L1")];
	uint32_t pf_lid = r.sm->sub.model->f.ports[pf].lid;
	uint8_t *e = &lft_row(&r.sm->sub.lft, row)[pf_lid];
	uint8_t keep = *e;
	ck_assert(keep == 7 || keep == 8);
	*e = keep == 7 ? 8 : 7;	/* L1 up the other spine, as a reroute could */
	res = migrate_step(&r, "b", "", -1, 0, &ms);
	ck_assert(!res->planned_at_prepare);
	lft_row(&r.sm->sub.lft, row)[pf_lid] = keep;	/* the tables are the commit's now */
	reaches(&r, b, vf_port(&r, 2, 2, 0)->guid);
	fprintf(stderr, "vm migrate --commit: %.3f ms with the plan made at prepare, "
		"%.3f ms planned at commit (%u switches marked)\n",
		commit_prepared, commit_unprepared, marked);
	settle(&r);
	teardown(&r);
}
END_TEST

static Suite *vm_emu_suite(void)
{
	Suite *s = suite_create("vm_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_dynamic);
	tcase_add_test(tc, t_prepopulated);
	tcase_add_test(tc, t_multicast_follows_vm);
	tcase_add_test(tc, t_prepare_plans);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(vm_emu_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
