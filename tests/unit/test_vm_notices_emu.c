/*
 * Repath notices for VM migrations (ibsmd(8) Event notices) on the emulator:
 * the SM brings up the hypervisor fabric of vswitch_testlib.h with
 * virtualization.vswitches ["V-*"] and events.signalling repath-only, in
 * which VF 1 of V-1-2 is cabled 1x (a net-file w=1 on both ends) and VF 1
 * of V-2-0 has MTUCap 2048.  Three ports subscribe to every notice with
 * an SA InformInfo Set: the plain hosts H1 (leaf L1) and H2 (leaf L2)
 * and the PF P-1-0.  A VM created on V-1-0 then moves, as ibsmctl vm
 * migrate does it:
 *   1. to V-1-1 (same leaf): the hosts' paths to the VM cross as many
 *      switches as before at the same rate and MTU, so neither host hears
 *      anything; the PF's path to it went from one switch to three, its
 *      PacketLifeTime grew: the PF, and only it, gets 69s;
 *   2. to another VF of V-1-1: no path changes, no Report at all;
 *   3. to the 1x VF of V-1-2 (same leaf again): every subscriber's path
 *      to the VM now runs at 2.5 Gb/s: 69s with rate 2;
 *   4. to the 2048-MTU VF of V-2-0: 69s with MTU 4.
 * Every 69 names the VM by its GID (subnet prefix + vGUID) and its LID,
 * in both directions of a pair (DGID/DLID towards the VM, SGID/SLID from
 * it), the subscriber at the other end; no Report names a VF's own port
 * GUID (the hosts never knew the VM by it).  Both LID schemes.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu.h"
#include "reconfig/migrate.h"
#include "routing/path.h"
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

#define NSUB 3
#define MTU_2048 4
#define RATE_1X_SDR 2

static const char *const sub_names[NSUB] = { "H1", "H2", "P-1-0" };

struct run {
	EMU_RUN;
	struct vmop_wait w;
	struct emu_subscriber h[NSUB];
};

/* Appends suffix to the line of text that starts with line. */
static char *line_append(char *text, const char *line, const char *suffix)
{
	char *at = strstr(text, line);
	ck_assert_msg(at != NULL, "no line %s", line);
	at = strchr(at, '\n');
	ck_assert_ptr_nonnull(at);
	size_t head = (size_t)(at - text), n = strlen(text), k = strlen(suffix);
	char *out = malloc(n + k + 1);
	ck_assert_ptr_nonnull(out);
	memcpy(out, text, head);
	memcpy(out + head, suffix, k);
	memcpy(out + head + k, at, n - head + 1);
	free(text);
	return out;
}

/* hv_text(), VF 1 of V-1-2 cabled 1x: fabric_up()'s text. */
static char *vf_text(void)
{
	char *text = hv_text();
	text = line_append(text, "[4]\t\"F-1-2-1\"[1]", "\tw=1");
	return line_append(text, "[1]\t\"V-1-2\"[4]", "\tw=1");
}

/* VF 1 of V-2-0 MTU 2048, and VF 1 of V-1-2 is 1x. */
static void vf_tweak(struct fabric *topo)
{
	topo->ports[hv_vf_port(topo, 2, 0, 1)].mtu_cap = MTU_2048;
	ck_assert_int_eq(topo->ports[hv_vf_port(topo, 1, 2, 1)].width_active,
			 TOPO_WIDTH_1X);
}

/* The fabric of hv_text(), VF 1 of V-1-2 cabled 1x, VF 1 of V-2-0 MTU 2048. */
static void fabric_up(struct run *r)
{
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "vmnotice",
		     .text = vf_text(), .tweak = vf_tweak, .seed = 5,
		     .debug_env = "VMNOTICE_DEBUG", .debug_level = LOG_INFO });
	hv_mark(&r->topo);
}

/* Settles, lets the paths round and its Reports (and answers) pass, settles. */
static void quiet(struct run *r)
{
	static const int never = 0;
	vmop_settle(r->base, r->sm);
	emu_run_until(r->base, &never, 300);
	vmop_settle(r->base, r->sm);
	emu_run_until(r->base, &never, 300);
}

static void reset_counts(struct run *r)
{
	for (int i = 0; i < NSUB; i++)
		emu_subscriber_reset(&r->h[i]);
}

static void setup(struct run *r, int scheme)
{
	memset(r, 0, sizeof(*r));
	fabric_up(r);
	r->sm = vmop_sm_new(r->state, scheme);
	r->sm->cfg.events_signalling = REPATH_ONLY;
	emu_sm_start(r->sm, r->base, r->e);
	vmop_settle(r->base, r->sm);
	ck_assert_int_eq(r->sm->state, SMS_MASTER);
	for (int i = 0; i < NSUB; i++) {
		uint32_t n = hv_find(&r->topo, sub_names[i]);
		emu_subscribe(r->e, r->base, &r->h[i],
			      r->topo.ports[fabric_port(&r->topo, n, 1)].guid);
	}
	quiet(r);	/* the IsSM changes (trap 144) sweep too */
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

/* Runs a VM command to its end and lets its notices arrive; asserts it worked. */
static const struct vm *vm_cmd(struct run *r, int kind, const char *hyp, int vf)
{
	const struct vmop_result *res = vmop_run(r->base, r->sm, &r->w, kind,
						 "vm", hyp, vf);
	ck_assert_msg(res->ok, "%s", res->err);
	quiet(r);
	return &res->vm;
}

static void gid_of(uint64_t prefix, uint64_t guid, uint8_t gid[16])
{
	for (int i = 0; i < 8; i++) {
		gid[i] = (uint8_t)(prefix >> (56 - 8 * i));
		gid[8 + i] = (uint8_t)(guid >> (56 - 8 * i));
	}
}

/* The interface ID of gid names a VF's own port. */
static int names_vf(const struct run *r, const uint8_t gid[16])
{
	uint64_t g = 0;
	for (int i = 8; i < 16; i++)
		g = g << 8 | gid[i];
	for (uint32_t pi = 0; pi < r->topo.n_ports; pi++)
		if (r->topo.ports[pi].guid == g &&
		    !strncmp(r->topo.nodes[r->topo.ports[pi].node].desc, "F-", 2))
			return 1;
	return 0;
}

/*
 * What h got since the last reset: no 68, no other trap, and when expect
 * a 69 for each direction between h and the VM (none otherwise), each
 * naming the VM by GID and LID; mtu, rate: what every record must say
 * (0: not checked).
 */
static void check_host(const struct run *r, int i,
		       const struct vm *v, int expect, uint8_t mtu, uint8_t rate)
{
	const struct emu_subscriber *h = &r->h[i];
	uint8_t vgid[16], hgid[16];
	gid_of(r->sm->cfg.subnet_prefix, v->vguid, vgid);
	gid_of(r->sm->cfg.subnet_prefix, h->guid, hgid);
	ck_assert_msg(h->unpath == 0 && h->other == 0, "%s: %d 68s, %d others%s",
		      sub_names[i], h->unpath, h->other,
		      h->other && names_vf(r, h->other_gid[0]) ? " (naming a VF)" : "");
	if (!expect) {
		ck_assert_msg(h->repath == 0, "%s: %d 69s (the first: LIDs %u -> %u%s)",
			      sub_names[i], h->repath, h->rec[0].slid, h->rec[0].dlid,
			      names_vf(r, h->rec[0].sgid) || names_vf(r, h->rec[0].dgid) ?
			      ", naming a VF's port" : "");
		return;
	}
	ck_assert_msg(h->repath == 2, "%s: %d 69s, not 2", sub_names[i], h->repath);
	int to_vm = 0, from_vm = 0;
	for (int k = 0; k < h->repath; k++) {
		const struct notice_path *p = &h->rec[k];
		ck_assert(!names_vf(r, p->sgid) && !names_vf(r, p->dgid));
		ck_assert_int_eq(p->flags & (NPATH_WILDCARD | NPATH_GIDS), NPATH_GIDS);
		if (!memcmp(p->dgid, vgid, 16) && p->dlid == v->lid &&
		    !memcmp(p->sgid, hgid, 16) && p->slid == h->t.lid)
			to_vm++;
		else if (!memcmp(p->sgid, vgid, 16) && p->slid == v->lid &&
			 !memcmp(p->dgid, hgid, 16) && p->dlid == h->t.lid)
			from_vm++;
		else
			ck_abort_msg("%s: a 69 for LIDs %u -> %u, not between it and the VM (LID %u)",
				     sub_names[i], p->slid, p->dlid, v->lid);
		if (mtu)
			ck_assert_int_eq(p->mtu, mtu);
		if (rate)
			ck_assert_int_eq(p->rate, rate);
	}
	ck_assert_int_eq(to_vm, 1);
	ck_assert_int_eq(from_vm, 1);
}

static void migrations(int scheme)
{
	struct run r;
	setup(&r, scheme);
	const struct emu_subscriber *pf = &r.h[2];
	const struct vm *v = vm_cmd(&r, VMOP_CREATE, "V-1-0", 0);
	uint32_t lid = v->lid;
	ck_assert_uint_gt(lid, 0);
	reset_counts(&r);

	/* 1. same leaf: the hosts see nothing new, the PF a longer path */
	v = vm_cmd(&r, VMOP_MIGRATE, "V-1-1", 0);
	ck_assert_uint_eq(v->lid, lid);
	check_host(&r, 0, v, 0, 0, 0);	/* H1 */
	check_host(&r, 1, v, 0, 0, 0);	/* H2 */
	check_host(&r, 2, v, 1, 0, 0);	/* P-1-0 */
	/* three switches crossed now: PacketLifeTime is the switches' + 2 */
	uint8_t ltv = path_switch_ltv(&r.sm->sub.model->f,
				      (uint8_t)r.sm->cfg.subnet_timeout);
	for (int k = 0; k < pf->repath; k++)
		ck_assert_int_eq(pf->rec[k].packet_life, ltv + 2);
	reset_counts(&r);

	/* 2. another VF of the same vSwitch: nothing at all */
	uint64_t sent = notifier_get_stats(r.sm->notify)->reports_sent;
	v = vm_cmd(&r, VMOP_MIGRATE, "V-1-1", 2);
	for (int i = 0; i < NSUB; i++)
		check_host(&r, i, v, 0, 0, 0);
	ck_assert_uint_eq(notifier_get_stats(r.sm->notify)->reports_sent, sent);

	/* 3. the 1x VF: every subscriber's path to the VM is slower */
	v = vm_cmd(&r, VMOP_MIGRATE, "V-1-2", 1);
	ck_assert_uint_eq(v->lid, lid);
	for (int i = 0; i < NSUB; i++)
		check_host(&r, i, v, 1, 0, RATE_1X_SDR);
	reset_counts(&r);

	/* 4. the 2048-MTU VF on another leaf */
	v = vm_cmd(&r, VMOP_MIGRATE, "V-2-0", 1);
	ck_assert_uint_eq(v->lid, lid);
	for (int i = 0; i < NSUB; i++)
		check_host(&r, i, v, 1, MTU_2048, 0);
	teardown(&r);
}

START_TEST(t_dynamic)
{
	migrations(MIG_DYNAMIC);
}
END_TEST

START_TEST(t_prepopulated)
{
	migrations(MIG_PREPOPULATED);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("vm_notices_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, t_dynamic);
	tcase_add_test(tc, t_prepopulated);
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
