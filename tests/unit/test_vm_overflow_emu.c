/*
 * Legacy mode with the LID space full (sm->lid_limit: a small space on
 * the hypervisor fabric of vswitch_testlib.h, prepopulated scheme, no
 * device with extended LIDs): the VF ports go last, so every switch, PF
 * and host keeps a LID and what runs out is VF slots, counted in
 * lids_rep.vf_shared and warned of once; a heavy sweep keeps every LID
 * given; a vm create on a VF slot without a LID -- named, or the only
 * kind left on its hypervisor -- makes a shared-LID VM (the PF's LID); a
 * VF with a LID still takes a plain VM.  The same under the dynamic
 * scheme: a create with no LID free is a shared-LID VM.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu.h"
#include "reconfig/migrate.h"
#include "sm/daemon.h"
#include "sm/model/lids.h"
#include "sm/base/log.h"
#include "sm/base/topo.h"
#include "sm/vm/vmops.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "emu_testlib.h"
#include "vmop_testlib.h"
#include "vswitch_testlib.h"

#define SHORT 20	/* LIDs fewer than end ports */

struct run {
	EMU_RUN;
	uint32_t endports;
};

static void up(struct run *r, int scheme, uint32_t short_by)
{
	memset(r, 0, sizeof(*r));
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "vmovf",
		     .text = hv_text(), .seed = 7,
		     .debug_env = "XDBG", .debug_level = LOG_DEBUG });
	uint32_t sw, ca, ports;
	fabric_counts(&r->topo, &sw, &ca, &ports);
	r->endports = sw + ca;	/* every CA here has one port */
	r->sm = vmop_sm_new(r->state, scheme);
	r->sm->lid_limit = r->endports - short_by;
	emu_sm_start(r->sm, r->base, r->e);
	vmop_settle(r->base, r->sm);
	ck_assert_int_eq(r->sm->state, SMS_MASTER);
	ck_assert_int_eq(r->sm->sub.model->f.xlid_mode, 0);
}

static int is_vf(const struct fabric *f, uint32_t pi)
{
	int vf = -1;
	return fabric_vswitch_of(f, pi, &vf) != FAB_NONE && vf >= 0;
}

/* A vSwitch with a VF with (want 1) or without (0) a LID; *vf its number. */
static uint32_t find_hyp(const struct fabric *f, int want, int *vf)
{
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		if (!fabric_is_vswitch(f, n))
			continue;
		for (unsigned k = 0; k < fabric_vswitch_nvf(f, n); k++) {
			uint32_t p = fabric_vswitch_vf(f, n, k, NULL);
			if ((f->ports[p].lid != 0) == want) {
				*vf = (int)k;
				return n;
			}
		}
	}
	return FAB_NONE;
}

START_TEST(test_prepopulated_overflow)
{
	struct run r;
	up(&r, MIG_PREPOPULATED, SHORT);
	const struct fabric *f = &r.sm->sub.model->f;
	uint32_t lids[1024], vf_none = 0;
	ck_assert_uint_lt(f->n_ports, 1024);
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		lids[pi] = f->ports[pi].lid;
		if (!fabric_is_endport(f, pi))
			continue;
		if (!is_vf(f, pi))
			ck_assert_msg(f->ports[pi].lid != 0, "port 0x%016llx (not a VF) has no LID",
				      (unsigned long long)f->ports[pi].guid);
		else
			vf_none += !f->ports[pi].lid;
	}
	ck_assert_uint_eq(vf_none, SHORT);
	ck_assert_uint_eq(r.sm->sweep.last.lids_rep.vf_shared, SHORT);
	ck_assert_uint_eq(r.sm->sweep.last.lids_rep.exhausted, 0);
	ck_assert_uint_eq(r.sm->sweep.vf_shared_warned, SHORT);

	/* another heavy sweep: every LID given stays */
	uint32_t sweeps = r.sm->sweep.heavy_sweeps;
	sweeper_request_heavy(r.sm, "test");
	ck_assert(emu_run_while(r.base, vmop_sm_idle, r.sm, 20000));
	vmop_settle(r.base, r.sm);
	ck_assert_uint_gt(r.sm->sweep.heavy_sweeps, sweeps);
	f = &r.sm->sub.model->f;
	for (uint32_t pi = 0; pi < f->n_ports; pi++)
		ck_assert_uint_eq(f->ports[pi].lid, lids[pi]);

	/* a VF slot without a LID, named: a shared-LID VM on the PF's LID */
	int slot, lidded;
	uint32_t vs = find_hyp(f, 0, &slot), vs2 = find_hyp(f, 1, &lidded);
	ck_assert_uint_ne(vs, FAB_NONE);
	ck_assert_uint_ne(vs2, FAB_NONE);
	struct vmop_wait w;
	const struct vmop_result *res = vmop_run(r.base, r.sm, &w, VMOP_CREATE, "vm-a",
						  f->nodes[vs].desc, slot);
	ck_assert_msg(res->ok, "%s", res->err);
	ck_assert_int_eq(res->shared, 1);
	ck_assert_int_eq(res->vm.shared, 1);
	ck_assert_uint_eq(res->vm.lid, f->ports[fabric_vswitch_pf(f, vs)].lid);
	/* a VF with a LID takes a plain VM */
	res = vmop_run(r.base, r.sm, &w, VMOP_CREATE, "vm-b", f->nodes[vs2].desc, lidded);
	ck_assert_msg(res->ok, "%s", res->err);
	ck_assert_int_eq(res->shared, 0);
	ck_assert_uint_eq(res->vm.lid, f->ports[fabric_vswitch_vf(f, vs2, (unsigned)lidded, NULL)].lid);
	/* none named: the VFs with a LID first, then shared-LID VMs */
	unsigned plain = 0;
	for (unsigned k = 0; k < fabric_vswitch_nvf(f, vs); k++)
		plain += f->ports[fabric_vswitch_vf(f, vs, k, NULL)].lid != 0;
	for (unsigned k = 0; k <= plain; k++) {
		char name[32];
		snprintf(name, sizeof(name), "vm-%u", k);
		res = vmop_run(r.base, r.sm, &w, VMOP_CREATE, name, f->nodes[vs].desc, -1);
		ck_assert_msg(res->ok, "%s", res->err);
		ck_assert_int_eq(res->shared, k == plain);
	}
	emu_run_free(&r.run);
}
END_TEST

START_TEST(test_dynamic_overflow)
{
	struct run r;
	/* the dynamic scheme gives idle VFs no LID: a space just big enough */
	up(&r, MIG_DYNAMIC, 0);
	const struct fabric *f = &r.sm->sub.model->f;
	uint32_t used = 0;
	for (uint32_t pi = 0; pi < f->n_ports; pi++)
		used += fabric_is_endport(f, pi) && f->ports[pi].lid;
	ck_assert_uint_eq(r.sm->sweep.last.lids_rep.exhausted, 0);
	r.sm->lid_limit = used;	/* now full */
	uint32_t vs = FAB_NONE;
	for (uint32_t n = 0; n < f->n_nodes && vs == FAB_NONE; n++)
		if (fabric_is_vswitch(f, n))
			vs = n;
	struct vmop_wait w;
	const struct vmop_result *res = vmop_run(r.base, r.sm, &w, VMOP_CREATE, "vm-d",
						  f->nodes[vs].desc, -1);
	ck_assert_msg(res->ok, "%s", res->err);
	ck_assert_int_eq(res->shared, 1);
	ck_assert_uint_eq(res->vm.lid, f->ports[fabric_vswitch_pf(f, vs)].lid);
	/* room again: a plain VM with a LID of its own */
	r.sm->lid_limit = used + 1;
	res = vmop_run(r.base, r.sm, &w, VMOP_CREATE, "vm-e", f->nodes[vs].desc, -1);
	ck_assert_msg(res->ok, "%s", res->err);
	ck_assert_int_eq(res->shared, 0);
	ck_assert_uint_eq(res->vm.lid, used + 1);
	vmop_settle(r.base, r.sm);
	emu_run_free(&r.run);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vm_overflow");
	TCase *tc = tcase_create("legacy");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_prepopulated_overflow);
	tcase_add_test(tc, test_dynamic_overflow);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
