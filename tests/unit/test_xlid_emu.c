/*
 * Extended LIDs, the SM's side, on the emulator (sm/discover/xlid_sm.c): the
 * hypervisor fabric of vswitch_testlib.h with virtualization.vswitches
 * ["V-*"], every device asked XLIDCap at bring-up.
 *  - stock emulator (no device has the extension, like ibsim): auto
 *    falls back to legacy and counts every device asked as lacking it;
 *  - one vSwitch lacking it: auto falls back naming it; on refuses (the
 *    --once SM exits 1);
 *  - every device capable: auto selects extended mode; under the
 *    prepopulated scheme every VF port gets a vLID >= 0x10000 (PFs and
 *    hosts keep pLIDs), its PortInfo LID stays 0 (16 bits cannot hold
 *    it) and its port goes Active.
 * Capability is the emulator's own extension (mad/emu/emu_xlid.c),
 * switched on for the devices the test chooses.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu.h"
#include "mad/xlid.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/sa/sa_server.h"
#include "mad/sa.h"
#include "sm/base/topo.h"
#include "sm/vm/vmops.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "emu_testlib.h"
#include "vmop_testlib.h"
#include "vswitch_testlib.h"

struct run {
	EMU_RUN;
	struct mad_transport t;	/* a client on H1 (LID-routed MADs) */
	struct rec { int got; uint8_t mad[MAD_SIZE]; struct mad_addr from; } got;
	int attached;
};

static void rec_cb(void *arg, const uint8_t *mad, size_t len,
		   const struct mad_addr *from, int status)
{
	struct rec *g = arg;
	(void)status;
	g->got = 1;
	memcpy(g->mad, mad, len < MAD_SIZE ? len : MAD_SIZE);
	g->from = *from;
}

static void setup(struct run *r, int capable, const char *lacking)
{
	memset(r, 0, sizeof(*r));
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "xlid",
		     .text = hv_text(), .seed = 5,
		     .debug_env = "XDBG", .debug_level = LOG_DEBUG });
	hv_mark(&r->topo);
	/* the emulator's own extension (mad/emu/emu_xlid.c): off unless asked */
	if (capable)
		ck_assert_int_eq(emu_xlid_all(r->e, 4096), 0);
	if (lacking)
		ck_assert_int_eq(emu_xlid_set(r->e, r->topo.nodes[hv_find(&r->topo,
				 lacking)].guid, EMU_XLID_OFF), 0);
}

static void teardown(struct run *r)
{
	if (r->attached)
		r->t.close(r->t.ctx);
	emu_run_stop_sm(&r->run);
	ck_assert_msg(emu_violations(r->e) == 0, "emulator: %s",
		      emu_violations(r->e) ? emu_violation(r->e, 0) : "");
	emu_run_free(&r->run);
}

static void sm_up(struct run *r, int scheme, enum tristate mode)
{
	r->sm = vmop_sm_new(r->state, scheme);
	r->sm->cfg.extended_lids = mode;
	emu_sm_start(r->sm, r->base, r->e);
	vmop_settle(r->base, r->sm);
	ck_assert_int_eq(r->sm->state, SMS_MASTER);
}

/* Devices asked: every switch and every CA behind a vSwitch. */
static uint32_t asked(const struct fabric *f)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		int vf;
		n += f->nodes[i].type == FAB_SWITCH ||
		     fabric_vswitch_of(f, fabric_port(f, i, 1), &vf) != FAB_NONE;
	}
	return n;
}

/*
 * Where vLID v ends from switch sw, following what the emulated devices
 * hold (secondary entry, else DefaultPort) and the topology's links; the
 * CA port must hold PortVLID v.  0: dropped, looped, or a CA port that
 * does not answer to v.
 */
static uint64_t xwalk(const struct run *r, uint32_t sw, uint32_t v)
{
	const struct fabric *f = &r->topo;
	for (int hops = 0; hops < 16; hops++) {
		struct emu_xcap c;
		uint64_t g = f->nodes[sw].guid;
		if (emu_xlid_cap_get(r->e, g, 0, &c) < 0 || !c.enabled)
			return 0;
		int p = v - XLID_VBASE < c.lft_top ? emu_xlid_entry(r->e, g, v) : 0xff;
		if (p == 0xff)
			p = c.default_port;
		if (p <= 0 || p == 0xff || p > f->nodes[sw].nports)
			return 0;
		uint32_t rem = fabric_portp(f, sw, (unsigned)p)->remote;
		if (rem == FAB_NONE)
			return 0;
		const struct fab_port *rp = &f->ports[rem];
		if (f->nodes[rp->node].type != FAB_SWITCH)
			return emu_xlid_cap_get(r->e, rp->guid, rp->num, &c) == 0 &&
			       c.port_vlid == v ? rp->guid : 0;
		sw = rp->node;
	}
	return 0;
}

/* A client on H1, for LID-routed MADs; the SM settles after it (IsSM). */
static void attach(struct run *r)
{
	char err[256] = "";
	uint32_t h1 = hv_find(&r->topo, "H1");
	ck_assert_msg(emu_attach(r->e, r->base, fabric_portp(&r->topo, h1, 1)->guid,
				 &r->t, rec_cb, &r->got, err, sizeof(err)) == 0,
		      "%s", err);
	r->attached = 1;
	/* the client claims IsSM: a capability change the SM sweeps for */
	emu_run_while(r->base, emu_never, NULL, 200);
	vmop_settle(r->base, r->sm);
	emu_transport_refresh(&r->t);
}

/*
 * A LID-routed NodeInfo Get from the client on H1 to lid: the port GUID
 * that answers (0: none) and the LID it answered from.
 */
static uint64_t nodeinfo_at(struct run *r, uint32_t lid, uint32_t *from)
{
	uint8_t mad[MAD_SIZE];
	struct mad_addr to = { .lid = lid };
	ck_assert(r->attached);
	smp_init_lid(mad, 0x01, 0x11, 0);
	r->got.got = 0;
	ck_assert_int_eq(r->t.send(r->t.ctx, mad, MAD_SIZE, &to), 0);
	for (;;) {	/* the answer, not an SM's poll of the client */
		if (!emu_run_until(r->base, &r->got.got, 300))
			return 0;
		if (r->got.mad[3] == 0x81 && r->got.mad[16] == 0 && r->got.mad[17] == 0x11)
			break;
		r->got.got = 0;
	}
	if (smp_status(r->got.mad))
		return 0;
	*from = r->got.from.lid;
	struct smp_nodeinfo ni;
	smp_decode_nodeinfo(smp_data(r->got.mad), &ni);
	return ni.port_guid;
}

/* From every switch, v reaches port GUID g. */
static void xreaches(const struct run *r, uint32_t v, uint64_t g)
{
	for (uint32_t n = 0; n < r->topo.n_nodes; n++)
		if (r->topo.nodes[n].type == FAB_SWITCH && xwalk(r, n, v) != g)
			ck_abort_msg("%s: vLID 0x%x goes to 0x%llx, not 0x%llx",
				     r->topo.nodes[n].desc, v,
				     (unsigned long long)xwalk(r, n, v),
				     (unsigned long long)g);
}

/*
 * SA PathRecord Get from the requester at LID from to DLID dlid (its
 * high bits in byte 58, mad/xlid.h), on the SM's published view.
 * Returns the records found (0 or 1), the first in rec.
 */
static size_t path_to(struct run *r, uint32_t from, uint32_t dlid, uint8_t *rec)
{
	uint8_t mad[256] = { 0 }, t[64] = { 0 };
	struct mad_addr a = { .lid = from, .qpn = 1 };
	xlid_pr_set(t, dlid, from);	/* from the requester's own port */
	memcpy(mad + 56, t, sizeof(t));
	struct sa_query q = {
		.sm = r->sm,
		.view = sa_get_view(r->sm),
		.mad = mad,
		.len = sizeof(mad),
		.from = &a,
		.method = SA_METHOD_GET,
		.attr = SA_ATTR_PATH_REC,
		.comp_mask = 1ull << 4 | 1ull << 5,	/* DLID, SLID */
		.rec = mad + 56,
		.rec_len = 64,
		.rec_size = 64,
	};
	ck_assert_ptr_nonnull(q.view);
	ck_assert_int_eq(sa_path_records(&q), 0);
	if (q.n_recs)
		memcpy(rec, q.recs, 64);
	size_t n = q.n_recs;
	free(q.recs);
	return n;
}

START_TEST(test_stock_emulator_falls_back)
{
	struct run r;
	setup(&r, 0, NULL);
	sm_up(&r, 1, TRI_AUTO);
	ck_assert_int_eq(r.sm->sweep.last.xlid_mode, 0);
	ck_assert_int_eq(r.sm->sub.model->f.xlid_mode, 0);
	ck_assert_uint_eq(r.sm->sweep.last.xlid_lacking, asked(&r.topo));
	char more[32];
	snprintf(more, sizeof(more), " and %u more", asked(&r.topo) - 4);
	ck_assert_msg(strstr(r.sm->sweep.xlid_lacking, more), "%s", r.sm->sweep.xlid_lacking);
	/* legacy: VFs on pLIDs as before */
	const struct fabric *f = &r.sm->sub.model->f;
	ck_assert_uint_eq(f->max_vlid, 0);
	ck_assert_uint_eq(r.sm->sweep.last.vlids, 0);
	teardown(&r);
}
END_TEST

START_TEST(test_one_lacking_auto_names_it)
{
	struct run r;
	setup(&r, 1, "V-2-1");
	sm_up(&r, 1, TRI_AUTO);
	ck_assert_int_eq(r.sm->sweep.last.xlid_mode, 0);
	ck_assert_uint_eq(r.sm->sweep.last.xlid_lacking, 1);
	ck_assert_msg(strstr(r.sm->sweep.xlid_lacking, "V-2-1 (0x"), "%s",
		      r.sm->sweep.xlid_lacking);
	ck_assert_uint_eq(r.sm->sub.model->f.max_vlid, 0);
	teardown(&r);
}
END_TEST

START_TEST(test_one_lacking_on_exits_1)
{
	struct run r;
	setup(&r, 1, "V-2-1");
	r.sm = vmop_sm_new(r.state, 1);
	r.sm->cfg.extended_lids = TRI_ON;
	emu_sm_once(r.sm, &r.os);
	emu_sm_start(r.sm, r.base, r.e);
	ck_assert_int_eq(event_base_dispatch(r.base), 0);
	ck_assert_int_eq(r.sm->exit_code, 1);
	ck_assert_msg(strstr(r.sm->sweep.xlid_lacking, "V-2-1"), "%s", r.sm->sweep.xlid_lacking);
	teardown(&r);
}
END_TEST

START_TEST(test_all_capable_extended)
{
	struct run r;
	setup(&r, 1, NULL);
	/* a plain host without it: asked for the SA, never for the mode */
	ck_assert_int_eq(emu_xlid_set(r.e, r.topo.nodes[hv_find(&r.topo, "H0")].guid,
				      EMU_XLID_OFF), 0);
	sm_up(&r, 1, TRI_AUTO);
	attach(&r);
	ck_assert_int_eq(r.sm->sweep.last.xlid_mode, 1);
	ck_assert_uint_eq(r.sm->sweep.last.xlid_lacking, 0);
	const struct fabric *f = &r.sm->sub.model->f;
	uint32_t vfs = 0;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		int vf;
		if (!fabric_is_endport(f, pi))
			continue;
		const struct fab_port *p = &f->ports[pi];
		int behind = fabric_vswitch_of(f, pi, &vf) != FAB_NONE;
		if (behind && vf >= 0) {
			vfs++;
			ck_assert_msg(p->lid >= 0x10000, "VF 0x%llx: LID %u",
				      (unsigned long long)p->guid, p->lid);
			ck_assert_uint_eq(fabric_lid_port(f, p->lid), pi);
			/* on the device: LID 0 (16 bits), Active */
			ck_assert_int_eq(emu_port_lid(r.e, f->nodes[p->node].guid, 1), 0);
			ck_assert_int_eq(emu_port_state(r.e, f->nodes[p->node].guid, 1), 4);
		} else {
			ck_assert_uint_lt(p->lid, 0x10000);
			ck_assert_uint_gt(p->lid, 0);
		}
	}
	ck_assert_uint_eq(vfs, HV_LEAVES * HV_PER_LEAF * HV_VFS);
	/* every vLID reaches its VF through the secondary tables written */
	for (uint32_t v = 0x10000; v < 0x10000 + vfs; v++)
		xreaches(&r, v, f->ports[fabric_lid_port(f, v)].guid);
	/* and a LID-routed MAD to each vLID is answered by its VF, from the vLID */
	for (uint32_t v = 0x10000; v < 0x10000 + vfs; v++) {
		uint32_t at = 0;
		ck_assert_uint_eq(nodeinfo_at(&r, v, &at),
				  f->ports[fabric_lid_port(f, v)].guid);
		ck_assert_uint_eq(at, v);
	}
	/* 1 secondary block on each physical switch and each vSwitch */
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (f->nodes[n].type == FAB_SWITCH)
			ck_assert_int_eq(emu_xlid_blocks(r.e, f->nodes[n].guid), 1);
	/*
	 * SA: a capable requester (a PF behind a vSwitch, or a plain host
	 * that said it can: H1) gets the vLID, its high bits in byte 58; a
	 * host that lacks it (H0) gets no record: the VM has no pLID.
	 */
	uint8_t rec[64];
	uint32_t vx = f->ports[hv_vf_port(f, 2, 1, 3)].lid;
	uint32_t pf = fabric_port(f, hv_find(f, "P-0-0"), 1);
	ck_assert_uint_eq(path_to(&r, f->ports[pf].lid, vx, rec), 1);
	uint32_t dl, sl;
	xlid_pr_get(rec, &dl, &sl);
	ck_assert_uint_eq(dl, vx);
	ck_assert_uint_eq(sl, f->ports[pf].lid);
	ck_assert_uint_eq(rec[58], (uint8_t)(((vx >> 16) & 3) << 6));
	ck_assert_uint_eq(rec[40] << 8 | rec[41], vx & 0xffff);
	uint32_t h0 = fabric_port(f, hv_find(f, "H0"), 1);
	ck_assert_uint_eq(path_to(&r, f->ports[h0].lid, vx, rec), 0);
	uint32_t h1 = fabric_port(f, hv_find(f, "H1"), 1);
	ck_assert_int_eq(f->nodes[hv_find(f, "H1")].xlid, XLID_YES);
	ck_assert_uint_eq(path_to(&r, f->ports[h1].lid, vx, rec), 1);
	xlid_pr_get(rec, &dl, &sl);
	ck_assert_uint_eq(dl, vx);
	ck_assert_uint_eq(sl, f->ports[h1].lid);
	/* pLIDs: as ever, byte 58 stays 0 */
	ck_assert_uint_eq(path_to(&r, f->ports[h0].lid, f->ports[pf].lid, rec), 1);
	ck_assert_uint_eq(rec[58], 0);
	/* a heavy sweep after: the devices hold it all, nothing is sent again */
	sweeper_request_heavy(r.sm, "test");
	vmop_settle(r.base, r.sm);
	ck_assert_uint_eq(r.sm->sweep.last.prog.other_sets, 0);
	ck_assert_uint_eq(r.sm->sweep.last.prog.lft_blocks, 0);
	ck_assert_uint_eq(r.sm->sweep.last.vlids, vfs);
	f = &r.sm->sub.model->f;	/* the sweep's new model */
	ck_assert_uint_eq(r.sm->sweep.last.vlids, vfs);
	ck_assert_uint_eq(f->max_vlid, 0x10000 + vfs - 1);
	/* a restart keeps them (guid2lid holds vLIDs) and asks nothing new */
	uint32_t lid0 = f->ports[hv_vf_port(f, 1, 2, 3)].lid;
	sm_shutdown(r.sm);
	free(r.sm);
	sm_up(&r, 1, TRI_AUTO);
	f = &r.sm->sub.model->f;
	ck_assert_int_eq(r.sm->sweep.last.xlid_mode, 1);
	ck_assert_uint_eq(f->ports[hv_vf_port(f, 1, 2, 3)].lid, lid0);
	teardown(&r);
}
END_TEST

/*
 * A vSwitch without the extension joins an extended subnet: reported
 * (the sweep summary, ibsmctl status's lacking_devices), its VFs served
 * on pLIDs (legacy), every other VF keeps its vLID, nothing dropped.
 */
START_TEST(test_late_device_legacy)
{
	struct run r;
	setup(&r, 1, "V-3-2");
	uint64_t l3 = r.topo.nodes[hv_find(&r.topo, "L3")].guid;
	ck_assert_int_eq(emu_link_down(r.e, l3, 3), 0);	/* V-3-2 not there yet */
	sm_up(&r, 1, TRI_AUTO);
	ck_assert_int_eq(r.sm->sweep.last.xlid_mode, 1);
	ck_assert_uint_eq(r.sm->sweep.last.vlids, (HV_LEAVES * HV_PER_LEAF - 1) * HV_VFS);
	ck_assert_int_eq(emu_link_up(r.e, l3, 3), 0);
	sweeper_request_heavy(r.sm, "test: V-3-2 joins");
	vmop_settle(r.base, r.sm);
	const struct fabric *f = &r.sm->sub.model->f;
	ck_assert_int_eq(f->xlid_mode, 1);	/* the mode stays */
	ck_assert_uint_eq(r.sm->sweep.last.xlid_lacking, 1);
	ck_assert_msg(strstr(r.sm->sweep.xlid_lacking, "V-3-2 (0x"), "%s", r.sm->sweep.xlid_lacking);
	ck_assert_uint_eq(r.sm->sweep.last.vlids, (HV_LEAVES * HV_PER_LEAF - 1) * HV_VFS);
	for (int k = 0; k < HV_VFS; k++) {
		uint32_t pi = hv_vf_port(f, 3, 2, k);
		uint32_t lid = f->ports[pi].lid;
		ck_assert_msg(lid > 0 && lid < 0x10000, "F-3-2-%d: LID %u", k, lid);
		/* legacy: the primary tables lead there, the port is on */
		hv_reaches(r.e, &r.topo, lid, f->ports[pi].guid);
		ck_assert_int_eq(emu_port_state(r.e, f->nodes[f->ports[pi].node].guid, 1), 4);
	}
	/* a vLID from every switch but the one that cannot forward it */
	uint32_t v = f->ports[hv_vf_port(f, 0, 1, 2)].lid, late = hv_find(&r.topo, "V-3-2");
	ck_assert_uint_ge(v, 0x10000);
	for (uint32_t n = 0; n < r.topo.n_nodes; n++)
		if (r.topo.nodes[n].type == FAB_SWITCH && n != late)
			ck_assert_uint_eq(xwalk(&r, n, v), f->ports[hv_vf_port(f, 0, 1, 2)].guid);
	teardown(&r);
}
END_TEST

/*
 * VM commands in extended mode (prepopulated): a VM takes its VF's vLID;
 * migrated to another leaf it keeps it, and only secondary-LFT blocks
 * are written (no primary block), on at most the FTreeMinRC-marked
 * switches (+ the two vSwitches); LID-routed MADs reach the VM's new VF
 * at its vLID, and the destination VF's old vLID the source VF (swap);
 * a heavy sweep after sends nothing.
 */
START_TEST(test_vm_migrate_extended)
{
	struct run r;
	struct vmop_wait w;
	setup(&r, 1, NULL);
	sm_up(&r, 1, TRI_AUTO);
	attach(&r);
	const struct fabric *f = &r.sm->sub.model->f;
	uint32_t src = hv_vf_port(f, 0, 0, 1), dst = hv_vf_port(f, 2, 0, 0);
	uint64_t src_g = f->ports[src].guid, dst_g = f->ports[dst].guid;
	uint32_t v = f->ports[src].lid, v2 = f->ports[dst].lid, at = 0;
	ck_assert_uint_ge(v, 0x10000);
	const struct vmop_result *res = vmop_run(r.base, r.sm, &w, VMOP_CREATE,
						 "vm1", "V-0-0", 1);
	ck_assert_msg(res->ok, "%s", res->err);
	ck_assert_uint_eq(res->vm.lid, v);
	ck_assert_uint_eq(nodeinfo_at(&r, v, &at), src_g);
	res = vmop_run(r.base, r.sm, &w, VMOP_MIGRATE, "vm1", "V-2-0", 0);
	ck_assert_msg(res->ok, "%s", res->err);
	ck_assert_uint_eq(res->vm.lid, v);
	ck_assert_uint_eq(res->st.lft_blocks, 0);
	ck_assert_uint_eq(res->st.vswitch_blocks, 0);
	ck_assert_uint_gt(res->st.xlft_blocks, 0);
	ck_assert_uint_le(res->st.switches_written, res->st.switches_marked);
	/*
	 * one block per row written here, the two vLIDs share block 0; a
	 * second time where the order splits it (the swapped routes wait
	 * for each other: one vLID's entry due a wave before the other's)
	 */
	ck_assert_uint_le(res->st.xlft_blocks, res->st.switches_marked + 2 +
			  res->st.order.split);
	fprintf(stderr, "extended migration V-0-0 -> V-2-0: switches_marked=%u "
		"switches_written=%u xlft_blocks=%u lft_blocks=%u other_smps=%u\n",
		res->st.switches_marked, res->st.switches_written,
		res->st.xlft_blocks, res->st.lft_blocks, res->st.other_smps);
	f = &r.sm->sub.model->f;
	ck_assert_uint_eq(f->ports[dst].lid, v);
	ck_assert_uint_eq(f->ports[src].lid, v2);
	ck_assert_uint_eq(nodeinfo_at(&r, v, &at), dst_g);
	ck_assert_uint_eq(at, v);
	ck_assert_uint_eq(nodeinfo_at(&r, v2, &at), src_g);
	xreaches(&r, v, dst_g);
	xreaches(&r, v2, src_g);
	sweeper_request_heavy(r.sm, "test: after the migration");
	vmop_settle(r.base, r.sm);
	ck_assert_uint_eq(r.sm->sweep.last.prog.other_sets, 0);
	ck_assert_uint_eq(r.sm->sweep.last.prog.lft_blocks, 0);
	teardown(&r);
}
END_TEST

/*
 * The dynamic scheme in extended mode: idle VFs have no LID; vm create
 * gives the VM the lowest free vLID and writes secondary blocks only;
 * reached at it before and after a migration to another leaf (secondary
 * blocks only, within the marked switches + 2 vSwitches); a sweep after
 * sends nothing; vm destroy leaves the vLID answered by no one.
 */
START_TEST(test_vm_dynamic_extended)
{
	struct run r;
	struct vmop_wait w;
	uint32_t at = 0;
	setup(&r, 1, NULL);
	sm_up(&r, 0, TRI_AUTO);
	attach(&r);
	ck_assert_int_eq(r.sm->sweep.last.xlid_mode, 1);
	ck_assert_uint_eq(r.sm->sweep.last.vlids, 0);
	const struct fabric *f = &r.sm->sub.model->f;
	uint64_t src_g = f->ports[hv_vf_port(f, 0, 0, 1)].guid;
	uint64_t dst_g = f->ports[hv_vf_port(f, 2, 0, 0)].guid;
	const struct vmop_result *res = vmop_run(r.base, r.sm, &w, VMOP_CREATE,
						 "vm1", "V-0-0", 1);
	ck_assert_msg(res->ok, "%s", res->err);
	uint32_t v = res->vm.lid;
	ck_assert_uint_eq(v, 0x10000);
	ck_assert_uint_eq(res->st.lft_blocks, 0);
	ck_assert_uint_gt(res->st.xlft_blocks, 0);
	ck_assert_uint_eq(nodeinfo_at(&r, v, &at), src_g);
	ck_assert_uint_eq(at, v);
	xreaches(&r, v, src_g);
	sweeper_request_heavy(r.sm, "test: after the create");
	vmop_settle(r.base, r.sm);
	ck_assert_uint_eq(r.sm->sweep.last.prog.other_sets, 0);
	ck_assert_uint_eq(r.sm->sweep.last.prog.lft_blocks, 0);
	res = vmop_run(r.base, r.sm, &w, VMOP_MIGRATE, "vm1", "V-2-0", 0);
	ck_assert_msg(res->ok, "%s", res->err);
	ck_assert_uint_eq(res->vm.lid, v);
	ck_assert_uint_eq(res->st.lft_blocks, 0);
	ck_assert_uint_gt(res->st.xlft_blocks, 0);
	ck_assert_uint_le(res->st.switches_written, res->st.switches_marked);
	ck_assert_uint_le(res->st.xlft_blocks, res->st.switches_marked + 2);
	fprintf(stderr, "dynamic extended migration: switches_marked=%u switches_written=%u xlft_blocks=%u lft_blocks=%u\n",
		res->st.switches_marked, res->st.switches_written,
		res->st.xlft_blocks, res->st.lft_blocks);
	ck_assert_uint_eq(nodeinfo_at(&r, v, &at), dst_g);
	xreaches(&r, v, dst_g);
	sweeper_request_heavy(r.sm, "test: after the migration");
	vmop_settle(r.base, r.sm);
	ck_assert_uint_eq(r.sm->sweep.last.prog.other_sets, 0);
	ck_assert_uint_eq(r.sm->sweep.last.prog.lft_blocks, 0);
	res = vmop_run(r.base, r.sm, &w, VMOP_DESTROY, "vm1", NULL, -1);
	ck_assert_msg(res->ok, "%s", res->err);
	ck_assert_uint_gt(res->st.xlft_blocks, 0);
	/* no switch forwards it (a MAD sent there would be lost) */
	for (uint32_t n = 0; n < r.topo.n_nodes; n++)
		if (r.topo.nodes[n].type == FAB_SWITCH)
			ck_assert_uint_eq(xwalk(&r, n, v), 0);
	struct emu_xcap c;
	ck_assert_int_eq(emu_xlid_cap_get(r.e, dst_g, 1, &c), 0);
	ck_assert_uint_eq(c.port_vlid, 0);
	teardown(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("xlid_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_stock_emulator_falls_back);
	tcase_add_test(tc, test_one_lacking_auto_names_it);
	tcase_add_test(tc, test_one_lacking_on_exits_1);
	tcase_add_test(tc, test_all_capable_extended);
	tcase_add_test(tc, test_late_device_legacy);
	tcase_add_test(tc, test_vm_migrate_extended);
	tcase_add_test(tc, test_vm_dynamic_extended);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
