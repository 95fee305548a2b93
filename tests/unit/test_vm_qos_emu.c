/*
 * vFtree SLs follow a VM (sm/vm/vmexec.c calls sm_qos_apply() after a VM's
 * writes): under qos.mode vftree a VM migrated to a hypervisor on another
 * leaf is given, in both directions, the SLs of its new leaf -- those of
 * the destination hypervisor's PF, which sits on that leaf -- not those
 * of the leaf it left.  The emulated hypervisor fabric of
 * vswitch_testlib.h, dynamic LIDs.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu.h"
#include "reconfig/migrate.h"
#include "sm/daemon.h"
#include "sm/apply.h"
#include "sm/base/log.h"
#include "sm/base/topo.h"
#include "sm/model/vm.h"
#include "sm/vm/vmops.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "emu_testlib.h"
#include "vmop_testlib.h"
#include "vswitch_testlib.h"

/* The LID of the named node's port 1 in the SM's model. */
static uint32_t lid_of(const struct sm *sm, const char *name)
{
	const struct fabric *f = &sm->sub.model->f;
	uint32_t n = hv_find(f, name);
	ck_assert_uint_ne(n, FAB_NONE);
	return f->ports[fabric_port(f, n, 1)].lid;
}

START_TEST(t_vm_takes_its_new_leafs_sls)
{
	struct emu_run run;
	emu_run_open(&run, &(struct emu_world_opts){ .name = "vmqos",
		     .text = hv_text(), .seed = 11,
		     .debug_env = "XDBG", .debug_level = LOG_DEBUG });
	struct event_base *base = run.base;
	struct sm *sm = run.sm = vmop_sm_new(run.state, MIG_DYNAMIC);
	sm->cfg.qos_mode = QOS_VFTREE;
	sm->cfg.qos_max_vls = 4;
	emu_sm_start(sm, base, run.e);
	vmop_settle(base, sm);
	ck_assert_int_eq(sm->state, SMS_MASTER);
	ck_assert_ptr_nonnull(sm->sub.lft.sl);

	/* a host whose SLs to the two leaves differ, so the test can fail */
	struct vmop_wait w;
	const struct vmop_result *res = vmop_run(base, sm, &w, VMOP_CREATE, "a",
						  "V-0-0", -1);
	ck_assert_msg(res->ok, "%s", res->err);
	uint32_t vm = res->vm.lid, p0 = lid_of(sm, "P-0-0");
	uint32_t h = 0, to = 0;
	static const char *const hosts[] = { "H0", "H1", "H2", "H3" };
	static const char *const pfs[] = { "P-1-0", "P-2-0", "P-3-0" };
	for (int i = 0; i < 4 && !to; i++)
		for (int j = 0; j < 3 && !to; j++) {
			uint32_t hl = lid_of(sm, hosts[i]), pl = lid_of(sm, pfs[j]);
			if (lft_sl(&sm->sub.lft, hl, pl) != lft_sl(&sm->sub.lft, hl, p0)) {
				h = hl;
				to = (uint32_t)j + 1;
			}
		}
	ck_assert_msg(to, "no host whose SLs to two leaves differ");
	ck_assert_uint_eq(lft_sl(&sm->sub.lft, h, vm), lft_sl(&sm->sub.lft, h, p0));
	ck_assert_uint_eq(lft_sl(&sm->sub.lft, vm, h), lft_sl(&sm->sub.lft, p0, h));

	char dst[16], pf[16];
	snprintf(dst, sizeof(dst), "V-%u-0", to);
	snprintf(pf, sizeof(pf), "P-%u-0", to);
	res = vmop_run(base, sm, &w, VMOP_MIGRATE, "a", dst, -1);
	ck_assert_msg(res->ok, "%s", res->err);
	ck_assert_uint_eq(res->vm.lid, vm);
	uint32_t pd = lid_of(sm, pf);
	/* the VM's new leaf's SLs, both ways; no longer the old leaf's */
	ck_assert_uint_eq(lft_sl(&sm->sub.lft, h, vm), lft_sl(&sm->sub.lft, h, pd));
	ck_assert_uint_eq(lft_sl(&sm->sub.lft, vm, h), lft_sl(&sm->sub.lft, pd, h));
	ck_assert_uint_ne(lft_sl(&sm->sub.lft, h, vm), lft_sl(&sm->sub.lft, h, p0));
	/* and the heavy sweep after keeps them */
	vmop_settle(base, sm);
	ck_assert_uint_eq(lft_sl(&sm->sub.lft, h, vm), lft_sl(&sm->sub.lft, h, pd));

	emu_run_free(&run);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vm_qos_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_vm_takes_its_new_leafs_sls);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
