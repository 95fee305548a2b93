/*
 * The VM commands (sm/vm/vmops.c) run as ibsmctl vm runs them, against an
 * SM on the emulator (test_vm_emu.c, test_vm_notices_emu.c).  Needs
 * emu_testlib.h first.  Header-only, static functions.
 */
#ifndef IBSMD_VMOP_TESTLIB_H
#define IBSMD_VMOP_TESTLIB_H

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "sm/daemon.h"
#include "sm/vm/vmops.h"

/*
 * An SM for the hypervisor fabric (vswitch_testlib.h): the policy's
 * virtualization {lid_scheme: scheme, vswitches: ["V-*"]}, the rest as
 * emu_sm_new().  Adjust sm->cfg before emu_sm_start().
 */
static inline struct sm *vmop_sm_new(const char *state_dir, int scheme)
{
	struct sm *sm = emu_sm_new(state_dir, 20);
	sm->cfg.lid_scheme = scheme;
	sm->cfg.n_vswitches = 1;
	snprintf(sm->cfg.vswitches[0], sizeof(sm->cfg.vswitches[0]), "V-*");
	return sm;
}

/* A command's end, as the control socket's deferred reply would see it. */
struct vmop_wait {
	int done;
	struct vmop_result r;
};

static inline void vmop_wait_done(struct sm *sm, void *arg,
				  const struct vmop_result *res)
{
	struct vmop_wait *w = arg;
	(void)sm;
	w->done++;
	w->r = *res;
}

/* Configured, no sweep asked for or under way, no VM command running. */
static inline int vmop_sm_idle(const void *arg)
{
	return emu_sm_idle(arg) && !((const struct sm *)arg)->vmop;
}

static inline void vmop_settle(struct event_base *base, const struct sm *sm)
{
	ck_assert_msg(emu_run_while(base, vmop_sm_idle, sm, 20000),
		      "the SM did not settle");
}

/*
 * Runs VM command kind on VM name (hyp: the hypervisor, or NULL; vf: -1
 * for any) to its end; returns its result in w (ok or not).
 */
static inline const struct vmop_result *
vmop_run(struct event_base *base, struct sm *sm, struct vmop_wait *w, int kind,
	 const char *name, const char *hyp, int vf)
{
	struct vmop_req q;
	memset(&q, 0, sizeof(q));
	q.kind = kind;
	snprintf(q.name, sizeof(q.name), "%s", name);
	snprintf(q.hyp, sizeof(q.hyp), "%s", hyp ? hyp : "");
	q.vf = vf;
	w->done = 0;
	int rc = vmop_start(sm, &q, vmop_wait_done, w, &w->r);
	if (rc == 0) {
		emu_run_until(base, &w->done, 5000);
		ck_assert_int_eq(w->done, 1);
	} else {
		ck_assert_int_eq(w->done, 0);
	}
	return &w->r;
}

#endif
