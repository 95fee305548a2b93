/*
 * The VM commands on the daemon's side (ibsmctl vm create / destroy /
 * migrate): checks against the registry and the model, plans with
 * reconfig/migrate.c, writes through sm/vm/vmexec.c, and once the writes are
 * done brings the registry, guid2lid, the model's VM weights and the SA's
 * view up to date, then asks for a heavy sweep that must find nothing to
 * change.  One command at a time; one that comes while a sweep runs
 * waits for its end (sweeper_resume calls vmops_resume, its waited hook).
 */
#ifndef IBSMD_VMOPS_H
#define IBSMD_VMOPS_H

#include <stdint.h>

#include "sm/model/vm.h"
#include "sm/vm/vmexec.h"

struct sm;

enum vmop_kind { VMOP_CREATE, VMOP_DESTROY, VMOP_MIGRATE };

struct vmop_req {
	int kind;		/* enum vmop_kind */
	char name[VM_NAME_LEN];
	char hyp[128];		/* --hypervisor / --to: a vSwitch or PF by node
				 * description or GUID; "" none */
	int vf;			/* --vf, or -1: the lowest free VF */
	uint64_t vguid;		/* --guid, or 0: the VF's port GUID | 2 << 56 */
	int weight;		/* --weight, or 0: 1 */
	int prepare, commit;	/* migrate: neither = both at once */
	int shared;		/* create --shared-lid: no VF, the PF's LID */
};

struct vmop_result {
	int ok;
	char err[256];
	struct vm vm;		/* the VM after the command (before: destroy) */
	int prepared;		/* migrate --prepare: only recorded */
	/*
	 * migrate --prepare: the move was planned (st.switches_marked,
	 * lft_blocks, vswitch_blocks, plan_us are the plan's); --commit: it
	 * wrote that plan (st.plan_us is the prepare's).
	 */
	int planned_at_prepare;
	int wrote;		/* the fabric was written: st is its stats */
	const char *method;	/* ftreeminrc, itrc, full, or "none" */
	const char *scheme;	/* dynamic, prepopulated */
	struct vmexec_stats st;
	/* a shared-LID VM's command (sm/vm/vmshared.h): Paper VI's signalling */
	int shared;
	uint32_t notices, hypervisors;	/* repath 69s sent, hypervisors registered */
	const char *vguid_action;	/* created, same-lid, moved; NULL: none */
};

typedef void (*vmop_done_fn)(struct sm *sm, void *arg,
			     const struct vmop_result *r);

/*
 * Starts a command.  Returns 1: done at once, *r filled (r->ok may be 0);
 * 0: running or waiting for a sweep, done(sm, arg, result) runs later
 * from the event loop; -1: refused, the reason in r->err.
 */
int vmop_start(struct sm *sm, const struct vmop_req *q, vmop_done_fn done,
	       void *arg, struct vmop_result *r);
/* A sweep ended: starts the command that waited.  1 if one now runs. */
int vmops_resume(struct sm *sm);
/* Shutdown: a running command ends (done with an error), a waiting one too. */
void vmops_free(struct sm *sm);
/*
 * Into ibsmctl status's object o: "vms", the registry's VMs, the
 * policy's bounds on them and the creates and moves refused, by bound.
 */
struct json_t;
void vms_to_ctl(const struct sm *sm, struct json_t *o);

#endif
