/*
 * ibsmd --offline --migrate-pattern (sm/offmig.c): the vSwitch paper's
 * Fig. 8 study on a topology of hypervisors (vSwitches, sm/model/vswitch.h).
 *
 * offmig_place() puts the initial VMs on the VFs before the LIDs are
 * assigned (reconfig/migpattern.h: random or uniform, --population
 * percent of the VFs, at least one VM); the fabric is then routed as
 * usual (the policy's engine: vswitch-ftree for the paper's study).
 * offmig_run() replays the pattern's migrations under the dynamic LID
 * scheme (the VM's LID copies the destination PF's entries) twice, on
 * two copies of the tables: one reconfigured by FTreeMinRC, one by ItRC
 * (reconfig/migrate.h), each migration's physical switches written by
 * both, and the bisection quality (routing/verify/bisect.h) of both and
 * of a fresh routing of the same placement at 0% and every 10% of the
 * migrations.
 */
#ifndef IBSMD_OFFMIG_H
#define IBSMD_OFFMIG_H

#include <stdint.h>

#include "reconfig/migpattern.h"
#include "routing/engine.h"
#include "sm/base/fabric.h"
#include "sm/model/config.h"
#include "sm/model/part_resolve.h"

#define OFFMIG_BISECT_RUNS 1000	/* random bisections per measurement */
#define OFFMIG_SNAPSHOTS 10	/* quality measured every 10% of the migrations */

struct offmig {
	int pattern;		/* enum migpat */
	uint32_t population;	/* percent of the VFs that hold a VM */
	int uniform;		/* initial placement: uniform, else random */
	uint64_t seed;
	struct migpat_place place;
	uint32_t *hyp;		/* per hypervisor: its vSwitch's node */
	uint32_t *vf_pi;	/* per slot: the VF's port */
};

/*
 * The hypervisors of f (vSwitches with VFs, in node order; every one has
 * the fewest VFs any has, extra VFs are left idle) and the initial VMs on
 * their VFs: VF ports with a VM get vm_weight 1, the others none and no
 * LID (FPORT_NOLID).  0, or 2 said why (no vSwitch, no VM), or 1 on
 * ENOMEM.
 */
int offmig_place(struct fabric *f, struct offmig *s);

/*
 * The study on f routed into t (parts as routed): prints one line per
 * migration, one per quality snapshot and the summary line.  t and f end
 * in FTreeMinRC's state.  0, or 1 (said why), 2 (the pattern cannot run
 * here, said why).
 */
int offmig_run(const struct config *cfg, struct fabric *f,
	       const struct part_model *parts, struct lft_tables *t,
	       struct offmig *s);
void offmig_free(struct offmig *s);

#endif
