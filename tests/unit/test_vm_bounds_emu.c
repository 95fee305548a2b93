/*
 * How many VMs hosts and operators may make the SM hold, on the emulator
 * (the hypervisor fabric of vswitch_testlib.h), with the policy
 * virtualization {max_vms: 6, max_vms_per_hypervisor: 4} read as YAML
 * through config_load:
 *   - a hypervisor's PF creates shared-LID VMs with GUIDInfoRecord Sets
 *     (as ibsm-listen --hypervisor does): its fifth is refused with the
 *     status the Set path gives a resource shortage, ERR_NO_RESOURCES,
 *     and so is a Set that would take the registry past 6, a move onto a
 *     full hypervisor and ibsmctl vm create; a move onto one with room is
 *     not;
 *   - a flood of refused Sets logs at most one line a second, and the
 *     metrics count the refusals by bound;
 *   - the registry is intact: the VMs it held, in memory, in the SA's
 *     answers and in STATE_DIR/vms.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mad/emu/emu.h"
#include "mad/sa.h"
#include "reconfig/migrate.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/sa/sa_server.h"
#include "sm/vm/vmops.h"
#include "traps/host/saclient.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "emu_testlib.h"
#include "vmop_testlib.h"
#include "vswitch_testlib.h"

#define NHYP 3		/* PFs of V-0-0, V-0-1, V-0-2 with SA clients */

struct run {
	EMU_RUN;
	struct emu_sahost pf[NHYP];
	struct emu_sa_answer a;
};

static uint64_t hyp_guid(int h)
{
	return 0x300 + (uint64_t)h;	/* V-l-i: 0x300 + l * HV_PER_LEAF + i */
}

static void setup(struct run *r)
{
	char err[256] = "";
	static const char yaml[] =
		"virtualization: {lid_scheme: dynamic, vswitches: [\"V-*\"],\n"
		"                 max_vms: 6, max_vms_per_hypervisor: 4}\n";
	memset(r, 0, sizeof(*r));
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "vmbounds",
		     .text = hv_text(), .seed = 3 });
	hv_mark(&r->topo);
	r->sm = vmop_sm_new(r->state, MIG_DYNAMIC);
	emu_sm_policy(r->sm, yaml);
	emu_sm_start(r->sm, r->base, r->e);
	vmop_settle(r->base, r->sm);
	ck_assert_int_eq(r->sm->state, SMS_MASTER);
	for (int h = 0; h < NHYP; h++) {
		struct emu_sahost *p = &r->pf[h];
		uint32_t n = hv_find(&r->topo, h == 0 ? "P-0-0" : h == 1 ? "P-0-1" : "P-0-2");
		p->guid = r->topo.ports[fabric_port(&r->topo, n, 1)].guid;
		p->c = saclient_new(r->base, &p->t, NULL);
		ck_assert_ptr_nonnull(p->c);
		ck_assert_msg(emu_attach(r->e, r->base, p->guid, &p->t, saclient_recv, p->c,
					 err, sizeof(err)) == 0, "%s", err);
		ck_assert_int_eq(emu_set_issm(r->e, p->guid, 0), 0);
	}
	vmop_settle(r->base, r->sm);
}

static void teardown(struct run *r)
{
	emu_sahosts_detach(r->pf, NHYP);
	emu_run_free(&r->run);
}

/* GUIDInfoRecord Set of vGUIDs g[0..n) from hypervisor h's PF: the status. */
static int set(struct run *r, int h, const uint64_t *g, unsigned n)
{
	memset(&r->a, 0, sizeof(r->a));
	ck_assert_int_eq(saclient_alias_guids(r->pf[h].c, 0, g, n, emu_sa_answered, &r->a), 0);
	ck_assert(emu_run_until(r->base, &r->a.done, 3000));
	return r->a.status;
}

static int set1(struct run *r, int h, uint64_t g)
{
	return set(r, h, &g, 1);
}

static uint64_t vg(unsigned k)
{
	return 0x0a00000000000000ull + k;
}

/* The VMs on hypervisor h, in the registry r. */
static unsigned on_hyp(const struct vm_registry *reg, int h)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < reg->n; i++)
		n += reg->v[i].hyp_guid == hyp_guid(h);
	return n;
}

START_TEST(vm_caps_hold)
{
	struct run r;
	setup(&r);
	/* four on V-0-0, the fifth refused */
	for (unsigned k = 1; k <= 4; k++)
		ck_assert_int_eq(set1(&r, 0, vg(k)), 0);
	ck_assert_int_eq(set1(&r, 0, vg(5)), SA_STS_NO_RESOURCES);
	/* two at once on V-0-1: six in all; one more anywhere is refused */
	uint64_t two[2] = { vg(6), vg(7) };
	ck_assert_int_eq(set(&r, 1, two, 2), 0);
	ck_assert_int_eq(set1(&r, 2, vg(8)), SA_STS_NO_RESOURCES);
	/* a move onto the full V-0-0 is refused, onto the empty V-0-2 not */
	ck_assert_int_eq(set1(&r, 0, vg(6)), SA_STS_NO_RESOURCES);
	ck_assert_int_eq(set1(&r, 2, vg(6)), 0);
	/* the operator's vm create meets the same bound */
	struct vmop_wait w;
	const struct vmop_result *res = vmop_run(r.base, r.sm, &w, VMOP_CREATE, "op-vm",
						 "V-0-2", -1);
	ck_assert(!res->ok);
	ck_assert_msg(strstr(res->err, "max_vms"), "%s", res->err);

	/* a flood of refused Sets: every one refused, one log line a second */
	struct emu_log log;
	emu_log_capture(&log, LOG_NOTICE);
	int refused = 0, other = 0;
	double t0 = emu_now_s();
	for (unsigned k = 100; emu_now_s() - t0 < 1.2; k++) {
		int st = set1(&r, k % NHYP, vg(k));
		refused += st == SA_STS_NO_RESOURCES;
		other += st != SA_STS_NO_RESOURCES;
	}
	double secs = emu_now_s() - t0;
	int lines = emu_log_lines(&log, "]: VM create or move from");
	ck_assert_int_eq(other, 0);
	ck_assert_int_gt(refused, 100);
	ck_assert_msg(lines >= 1 && lines <= (int)secs + 1, "%d lines for %d refusals in %.1f s",
		      lines, refused, secs);
	printf("vm_caps_hold: %d Sets refused in %.1f s, %d log lines\n", refused, secs, lines);
	/* counted by bound: the fifth on V-0-0 and the move there; the rest the total */
	ck_assert(emu_metric(r.sm, "ibsmd_vm_creates_refused_total{bound=\"per_hypervisor\"}") == 2);
	ck_assert(emu_metric(r.sm, "ibsmd_vm_creates_refused_total{bound=\"max_vms\"}") == refused + 2);
	ck_assert(emu_metric(r.sm, "ibsmd_vms") == 6);

	/* the registry intact: in memory, in the SA's view, in its file */
	const struct vm_registry *reg = &r.sm->vms;
	ck_assert_uint_eq(reg->n, 6);
	ck_assert_uint_eq(on_hyp(reg, 0), 4);
	ck_assert_uint_eq(on_hyp(reg, 1), 1);
	ck_assert_uint_eq(on_hyp(reg, 2), 1);
	const struct sa_view *v = sa_get_view(r.sm);
	for (unsigned k = 1; k <= 7; k++)
		ck_assert_msg((sa_vm_of_guid(v, vg(k)) != NULL) == (k != 5),
			      "vGUID %u answered for: %d", k, sa_vm_of_guid(v, vg(k)) != NULL);
	ck_assert_ptr_null(sa_vm_of_guid(v, vg(8)));
	static const int never = 0;
	emu_run_until(r.base, &never, 200);	/* the file follows a burst */
	struct vm_registry back;
	char err[256];
	ck_assert_int_eq(vm_registry_load(&back, r.state, err, sizeof(err)), 0);
	ck_assert_uint_eq(back.n, 6);
	for (uint32_t i = 0; i < back.n; i++) {
		ck_assert_str_eq(back.v[i].name, reg->v[i].name);
		ck_assert_uint_eq(back.v[i].hyp_guid, reg->v[i].hyp_guid);
	}
	vm_registry_free(&back);
	teardown(&r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("vm_bounds_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, vm_caps_hold);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
