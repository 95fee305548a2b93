/*
 * Shared-LID VMs and Paper VI signalling on the emulator: the hypervisor
 * fabric of vswitch_testlib.h, 8 of its 12 hypervisors registered (their PFs
 * subscribe to every notice with an SA InformInfo Set) and the plain host H1
 * subscribed too (a host, not a hypervisor).  4 shared-LID VMs are created on
 * each registered hypervisor (ibsmctl vm create --shared-lid, as
 * sm/vm/vmops.c runs it):
 *   - creation sends no notice; the SA answers a PathRecord to a VM's
 *     GID with its hypervisor's PF LID;
 *   - a reboot on the same hypervisor (destroy, create with the same
 *     vGUID) sends none;
 *   - one VM migrated to another hypervisor: its LID becomes the new
 *     PF's, exactly 8 repath notices go out -- one to each registered
 *     hypervisor, none to H1, not one per VM (32) -- each carrying the
 *     VM's GID and its new LID; no LFT is written;
 *   - the SA front end: GUIDInfoRecord Set of a new vGUID from a PF
 *     creates a shared-LID VM (no notice), a Set of it from another PF
 *     moves it (8 notices), Delete ends it; a Set from H1 (no
 *     hypervisor) is refused.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu.h"
#include "mad/sa.h"
#include "reconfig/migrate.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/base/topo.h"
#include "sm/vm/vmops.h"
#include "traps/notice.h"
#include "traps/notify.h"
#include "traps/repath.h"
#include "traps/host/saclient.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "emu_testlib.h"
#include "vmop_testlib.h"
#include "vswitch_testlib.h"

#define NHYP 8
#define VMS_PER 4
#define NSUB (NHYP + 1)		/* the hypervisors' PFs, then H1 */

struct run {
	EMU_RUN;
	struct vmop_wait w;
	struct emu_subscriber h[NSUB];
	char hyp[NHYP][16];	/* V-l-i of the registered ones */
	uint32_t pf_lid[NHYP];
};

static void quiet(struct run *r)
{
	static const int never = 0;
	vmop_settle(r->base, r->sm);
	emu_run_until(r->base, &never, 300);
	vmop_settle(r->base, r->sm);
}

static void reset_counts(struct run *r)
{
	for (int i = 0; i < NSUB; i++)
		emu_subscriber_reset(&r->h[i]);
}

static int total_repath(const struct run *r)
{
	int n = 0;
	for (int i = 0; i < NSUB; i++)
		n += r->h[i].repath;
	return n;
}

static void setup(struct run *r)
{
	memset(r, 0, sizeof(*r));
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "vmshared",
		     .text = hv_text(), .seed = 7,
		     .debug_env = "VMSHARED_DEBUG", .debug_level = LOG_INFO });
	hv_mark(&r->topo);
	r->sm = vmop_sm_new(r->state, MIG_DYNAMIC);
	r->sm->cfg.events_signalling = REPATH_ONLY;
	emu_sm_start(r->sm, r->base, r->e);
	vmop_settle(r->base, r->sm);
	ck_assert_int_eq(r->sm->state, SMS_MASTER);
	for (int i = 0; i < NSUB; i++) {
		char pf[16];
		if (i < NHYP) {
			int l = i / HV_PER_LEAF, k = i % HV_PER_LEAF;
			snprintf(pf, sizeof(pf), "P-%d-%d", l, k);
			snprintf(r->hyp[i], sizeof(r->hyp[i]), "V-%d-%d", l, k);
		} else {
			snprintf(pf, sizeof(pf), "H1");
		}
		uint32_t n = hv_find(&r->topo, pf);
		emu_subscribe(r->e, r->base, &r->h[i],
			      r->topo.ports[fabric_port(&r->topo, n, 1)].guid);
		if (i < NHYP)
			r->pf_lid[i] = r->h[i].t.lid;
	}
	quiet(r);
	reset_counts(r);
}

static void teardown(struct run *r)
{
	for (int i = 0; i < NSUB; i++)
		emu_subscriber_free(&r->h[i]);
	emu_run_stop_sm(&r->run);
	ck_assert_uint_eq(emu_violations(r->e), 0);
	emu_run_free(&r->run);
}

/* A VM command as ibsmctl sends it; shared: --shared-lid; vguid: --guid. */
static const struct vmop_result *cmd(struct run *r, int kind, const char *name,
				     const char *hyp, int shared, uint64_t vguid)
{
	struct vmop_req q;
	memset(&q, 0, sizeof(q));
	q.kind = kind;
	snprintf(q.name, sizeof(q.name), "%s", name);
	snprintf(q.hyp, sizeof(q.hyp), "%s", hyp ? hyp : "");
	q.vf = -1;
	q.shared = shared;
	q.vguid = vguid;
	r->w.done = 0;
	int rc = vmop_start(r->sm, &q, vmop_wait_done, &r->w, &r->w.r);
	if (rc == 0)
		emu_run_until(r->base, &r->w.done, 5000);
	ck_assert_msg(r->w.r.ok, "%s: %s", name, r->w.r.err);
	return &r->w.r;
}

/* A query's answer. */
struct ans {
	int done, status;
	uint8_t rec[128];
};

static void ans_done(void *arg, int status, const uint8_t *recs, size_t n,
		     size_t stride, const uint8_t *hdr)
{
	struct ans *a = arg;
	(void)stride;
	(void)hdr;
	a->done++;
	a->status = status;
	if (!status && n)
		memcpy(a->rec, recs, sizeof(a->rec) < 72 ? sizeof(a->rec) : 72);
}

static void wait_ans(struct run *r, struct ans *a)
{
	emu_run_until(r->base, &a->done, 3000);
	ck_assert_int_eq(a->done, 1);
}

/* The DLID the SA gives H1 for a PathRecord Get to the GID of vguid. */
static uint32_t sa_dlid(struct run *r, uint64_t vguid)
{
	uint8_t pr[SA_SIZE_PATH_REC];
	struct ans a = { 0 };
	memset(pr, 0, sizeof(pr));
	sa_put64(pr + 8, r->sm->cfg.subnet_prefix);
	sa_put64(pr + 16, vguid);
	saclient_port_gid(r->h[NHYP].c, pr + 24);
	sa_put64(pr + 24, r->sm->cfg.subnet_prefix);
	ck_assert_int_eq(saclient_query(r->h[NHYP].c, SA_METHOD_GET,
					SA_ATTR_PATH_REC, 0, 4 | 8, pr, sizeof(pr),
					ans_done, &a), 0);
	wait_ans(r, &a);
	ck_assert_msg(a.status == 0, "PathRecord to 0x%016" PRIx64 ": status 0x%x",
		      vguid, a.status);
	return sa_get16(a.rec + 40);
}

/* Every registered hypervisor got exactly one 69 naming vguid at lid; H1 none. */
static void check_told(const struct run *r, uint64_t vguid, uint32_t lid)
{
	uint8_t gid[16];
	sa_put64(gid, r->sm->cfg.subnet_prefix);
	sa_put64(gid + 8, vguid);
	ck_assert_int_eq(total_repath(r), NHYP);
	for (int i = 0; i < NHYP; i++) {
		const struct emu_subscriber *h = &r->h[i];
		ck_assert_msg(h->repath == 1, "%s: %d 69s", r->hyp[i], h->repath);
		ck_assert_int_eq(h->unpath, 0);
		ck_assert_uint_eq(h->rec[0].dlid, lid);
		ck_assert_uint_eq(h->rec[0].slid, r->pf_lid[i]);
		ck_assert_mem_eq(h->rec[0].dgid, gid, 16);
		ck_assert(h->rec[0].flags & NPATH_VGUID);
	}
	ck_assert_int_eq(r->h[NHYP].repath, 0);
}

/* Every switch's LFT entries for LIDs 1..max_lid, as the emulator holds them. */
static size_t lfts_size(const struct run *r)
{
	return (size_t)r->topo.n_nodes * (r->sm->sub.model->f.max_lid + 1);
}

static uint8_t *lfts(const struct run *r)
{
	uint32_t max = r->sm->sub.model->f.max_lid;
	uint8_t *t = calloc(lfts_size(r), 1);
	ck_assert_ptr_nonnull(t);
	for (uint32_t n = 0; n < r->topo.n_nodes; n++) {
		if (r->topo.nodes[n].type != FAB_SWITCH)
			continue;
		for (uint32_t lid = 1; lid <= max; lid++)
			t[(size_t)n * (max + 1) + lid] =
				(uint8_t)emu_lft_entry(r->e, r->topo.nodes[n].guid, lid);
	}
	return t;
}

START_TEST(t_shared_lid_signalling)
{
	struct run r;
	setup(&r);
	/* 4 shared-LID VMs on each registered hypervisor: no notice */
	uint64_t vg[NHYP][VMS_PER];
	for (int i = 0; i < NHYP; i++)
		for (int k = 0; k < VMS_PER; k++) {
			char name[32];
			snprintf(name, sizeof(name), "vm%d-%d", i, k);
			const struct vmop_result *res = cmd(&r, VMOP_CREATE, name,
							    r.hyp[i], 1, 0);
			ck_assert(res->shared);
			ck_assert_int_eq(res->notices, 0);
			ck_assert_str_eq(res->vguid_action, "created");
			ck_assert_int_eq(res->hypervisors, NHYP);
			ck_assert_uint_eq(res->vm.lid, r.pf_lid[i]);
			ck_assert_int_eq(res->vm.vf, -1);
			vg[i][k] = res->vm.vguid;
		}
	quiet(&r);
	ck_assert_int_eq(total_repath(&r), 0);
	ck_assert_uint_eq(sa_dlid(&r, vg[0][1]), r.pf_lid[0]);
	ck_assert_uint_eq(sa_dlid(&r, vg[5][3]), r.pf_lid[5]);

	/* a reboot on the same hypervisor: destroy, create again */
	cmd(&r, VMOP_DESTROY, "vm3-2", NULL, 0, 0);
	const struct vmop_result *res = cmd(&r, VMOP_CREATE, "vm3-2", r.hyp[3], 1,
					    vg[3][2]);
	ck_assert_str_eq(res->vguid_action, "same-lid");
	ck_assert_int_eq(res->notices, 0);
	quiet(&r);
	ck_assert_int_eq(total_repath(&r), 0);

	/* a migration: LID changes, 8 notices, no LFT written */
	uint8_t *before = lfts(&r), *after;
	res = cmd(&r, VMOP_MIGRATE, "vm0-1", r.hyp[6], 0, 0);
	ck_assert_str_eq(res->vguid_action, "moved");
	ck_assert_int_eq(res->notices, NHYP);
	ck_assert_uint_eq(res->vm.lid, r.pf_lid[6]);
	ck_assert(!res->wrote);
	quiet(&r);
	after = lfts(&r);
	ck_assert_mem_eq(before, after, lfts_size(&r));
	free(before);
	free(after);
	check_told(&r, vg[0][1], r.pf_lid[6]);
	ck_assert_uint_eq(sa_dlid(&r, vg[0][1]), r.pf_lid[6]);
	teardown(&r);
}
END_TEST

/* GUIDInfoRecord Set/Delete from hypervisor h (or H1: h = NHYP). */
static int alias(struct run *r, int h, int del, uint64_t g, struct ans *a)
{
	memset(a, 0, sizeof(*a));
	ck_assert_int_eq(saclient_alias_guids(r->h[h].c, del, &g, 1, ans_done, a), 0);
	wait_ans(r, a);
	return a->status;
}

START_TEST(t_guidinfo_front_end)
{
	struct run r;
	setup(&r);
	struct ans a;
	const uint64_t g = 0x0a00000000001234ull;
	/* a host that is no hypervisor may not */
	ck_assert_int_ne(alias(&r, NHYP, 0, g, &a), 0);
	ck_assert_ptr_null(vm_find_vguid(&r.sm->vms, g));
	/* Set from hypervisor 2: a shared-LID VM there, no notice */
	ck_assert_int_eq(alias(&r, 2, 0, g, &a), 0);
	ck_assert_uint_eq(sa_get64(a.rec + 16), g);	/* GUID1 */
	const struct vm *v = vm_find_vguid(&r.sm->vms, g);
	ck_assert_ptr_nonnull(v);
	ck_assert(v->shared);
	ck_assert_uint_eq(v->lid, r.pf_lid[2]);
	quiet(&r);
	ck_assert_int_eq(total_repath(&r), 0);
	/* the source side deletes it, the destination sets it: a migration */
	ck_assert_int_eq(alias(&r, 2, 1, g, &a), 0);
	ck_assert_ptr_null(vm_find_vguid(&r.sm->vms, g));
	ck_assert_int_eq(alias(&r, 7, 0, g, &a), 0);
	quiet(&r);
	check_told(&r, g, r.pf_lid[7]);
	ck_assert_uint_eq(sa_dlid(&r, g), r.pf_lid[7]);
	/* GetTable of the PF's GUIDInfoRecords shows it at index 1 */
	uint8_t gir[SA_GUIDINFO_REC_SIZE];
	memset(gir, 0, sizeof(gir));
	sa_put16(gir, (uint16_t)r.pf_lid[7]);
	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(saclient_query(r.h[NHYP].c, SA_METHOD_GET_TABLE,
					SA_ATTR_GUIDINFO_REC, 0, 1, gir, sizeof(gir),
					ans_done, &a), 0);
	wait_ans(&r, &a);
	ck_assert_int_eq(a.status, 0);
	ck_assert_uint_eq(sa_get16(a.rec), r.pf_lid[7]);
	ck_assert_uint_eq(sa_get64(a.rec + 8), r.h[7].guid);	/* GUID0 */
	ck_assert_uint_eq(sa_get64(a.rec + 16), g);		/* GUID1 */
	/* a reboot there: Delete, Set -- nothing */
	reset_counts(&r);
	ck_assert_int_eq(alias(&r, 7, 1, g, &a), 0);
	ck_assert_int_eq(alias(&r, 7, 0, g, &a), 0);
	quiet(&r);
	ck_assert_int_eq(total_repath(&r), 0);
	/* the registry is the one vm list reads, persisted */
	v = vm_find_vguid(&r.sm->vms, g);
	ck_assert_ptr_nonnull(v);
	struct vm_registry back;
	char err[256];
	ck_assert_int_eq(vm_registry_load(&back, r.state, err, sizeof(err)), 0);
	const struct vm *b = vm_find_vguid(&back, g);
	ck_assert_ptr_nonnull(b);
	ck_assert(b->shared);
	ck_assert_uint_eq(b->hyp_guid, v->hyp_guid);
	vm_registry_free(&back);
	/* a Delete from a hypervisor that does not hold it: no records */
	ck_assert_int_ne(alias(&r, 1, 1, g, &a), 0);
	ck_assert_ptr_nonnull(vm_find_vguid(&r.sm->vms, g));
	teardown(&r);
}
END_TEST

static Suite *vm_shared_suite(void)
{
	Suite *s = suite_create("vm_shared_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, t_shared_lid_signalling);
	tcase_add_test(tc, t_guidinfo_front_end);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(vm_shared_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
