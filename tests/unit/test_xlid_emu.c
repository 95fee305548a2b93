/*
 * Extended LIDs, the SM's side, on the emulator (sm/xlid_sm.c): the
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
 * Until the emulator's own XLIDCap (helper xcodec, mad/emu_xlid.c) is
 * merged, capability is a test-local vendor attribute handler answering
 * XLIDCap Get with the SM's encoder on the devices the test chooses.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu.h"
#include "mad/xlid.h"
#include "sm/daemon.h"
#include "sm/log.h"
#include "sm/topo.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "emu_testlib.h"
#include "vmop_testlib.h"
#include "vswitch_testlib.h"

struct cap_ctx {
	uint64_t lacking;	/* node GUID answering 0x0c (0: none) */
	uint32_t gets;
};

static int xcap(void *ctx, struct emu *e, struct emu_smp *s)
{
	struct cap_ctx *c = ctx;
	(void)e;
	if (s->node_guid == c->lacking)
		return 0x0c;	/* unsupported attribute */
	if (s->method != 0x01)
		return 0;	/* a Set: taken (writes are not judged here) */
	c->gets++;
	struct xlid_cap x = {
		.supported = 1,
		.lft_cap = s->node_type == 2 ? 4096 : 0,
		.default_port = 0xff,
	};
	xlid_cap_encode(&x, s->data);
	return 0;
}

struct run {
	struct fabric topo;
	struct emu *e;
	struct event_base *base;
	struct sm *sm;
	char state[64];
	struct cap_ctx cap;
};

static void setup(struct run *r, int capable, const char *lacking)
{
	memset(r, 0, sizeof(*r));
	r->e = hv_emu_open(&r->topo, 5);
	hv_mark(&r->topo);
	if (lacking)
		r->cap.lacking = r->topo.nodes[hv_find(&r->topo, lacking)].guid;
	if (capable)
		ck_assert_int_eq(emu_register_attr(r->e, XLID_ATTR_CAP, xcap, &r->cap), 0);
	r->base = event_base_new();
	ck_assert_ptr_nonnull(r->base);
	snprintf(r->state, sizeof(r->state), "/tmp/ibsmd-xlid.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(r->state));
	log_set_level(LOG_ERROR);
}

static void teardown(struct run *r)
{
	char cmd[128];
	if (r->sm) {
		sm_shutdown(r->sm);
		free(r->sm);
	}
	ck_assert_uint_eq(emu_violations(r->e), 0);
	emu_free(r->e);
	event_base_free(r->base);
	fabric_free(&r->topo);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", r->state);
	ck_assert_int_eq(system(cmd), 0);
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

START_TEST(test_stock_emulator_falls_back)
{
	struct run r;
	setup(&r, 0, NULL);
	sm_up(&r, 1, TRI_AUTO);
	ck_assert_int_eq(r.sm->last.xlid_mode, 0);
	ck_assert_int_eq(r.sm->sub.model->f.xlid_mode, 0);
	ck_assert_uint_eq(r.sm->last.xlid_lacking, asked(&r.topo));
	char more[32];
	snprintf(more, sizeof(more), " and %u more", asked(&r.topo) - 4);
	ck_assert_msg(strstr(r.sm->xlid_lacking, more), "%s", r.sm->xlid_lacking);
	/* legacy: VFs on pLIDs as before */
	const struct fabric *f = &r.sm->sub.model->f;
	ck_assert_uint_eq(f->max_vlid, 0);
	ck_assert_uint_eq(r.sm->last.vlids, 0);
	teardown(&r);
}
END_TEST

START_TEST(test_one_lacking_auto_names_it)
{
	struct run r;
	setup(&r, 1, "V-2-1");
	sm_up(&r, 1, TRI_AUTO);
	ck_assert_int_eq(r.sm->last.xlid_mode, 0);
	ck_assert_uint_eq(r.sm->last.xlid_lacking, 1);
	ck_assert_msg(strstr(r.sm->xlid_lacking, "V-2-1 (0x"), "%s",
		      r.sm->xlid_lacking);
	ck_assert_uint_eq(r.cap.gets, asked(&r.topo) - 1);
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
	r.sm->once = 1;
	emu_sm_start(r.sm, r.base, r.e);
	ck_assert_int_eq(event_base_dispatch(r.base), 0);
	ck_assert_int_eq(r.sm->exit_code, 1);
	ck_assert_msg(strstr(r.sm->xlid_lacking, "V-2-1"), "%s", r.sm->xlid_lacking);
	teardown(&r);
}
END_TEST

START_TEST(test_all_capable_extended)
{
	struct run r;
	setup(&r, 1, NULL);
	sm_up(&r, 1, TRI_AUTO);
	ck_assert_int_eq(r.sm->last.xlid_mode, 1);
	ck_assert_uint_eq(r.sm->last.xlid_lacking, 0);
	ck_assert_uint_eq(r.cap.gets, asked(&r.topo));
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
	ck_assert_uint_eq(r.sm->last.vlids, vfs);
	ck_assert_uint_eq(f->max_vlid, 0x10000 + vfs - 1);
	/* a restart keeps them (guid2lid holds vLIDs) and asks nothing new */
	uint32_t lid0 = f->ports[hv_vf_port(f, 1, 2, 3)].lid;
	sm_shutdown(r.sm);
	free(r.sm);
	sm_up(&r, 1, TRI_AUTO);
	f = &r.sm->sub.model->f;
	ck_assert_int_eq(r.sm->last.xlid_mode, 1);
	ck_assert_uint_eq(f->ports[hv_vf_port(f, 1, 2, 3)].lid, lid0);
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
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
