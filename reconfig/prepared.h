/*
 * A VM move planned ahead (ibsmctl vm migrate --prepare, the vSwitch
 * paper's Section 6: the FTreeMinRC marking "can be spent before the
 * migration starts or during the pre-copy phase"): the whole plan of
 * migrate_plan_vm (ranking, skyline marking, new entries, writes in
 * waves) made at prepare, kept with what it was made from, and handed
 * to the writer at commit when that still holds, so the commit only
 * writes.
 *
 * A move changes the entries of two LIDs only (the VM's, and the
 * destination's: the PF's whose entries it copies, or the VF's whose it
 * swaps), so the prepared move keeps, per row, those two entries before
 * and after, the rows' switches, and a signature of the switch links
 * (the marking follows the tree).  At commit the plan holds when the
 * rows, the links, the two ports and the two LIDs' entries are what
 * they were; the other columns are taken from the tables of the moment.
 */
#ifndef IBSMD_PREPARED_H
#define IBSMD_PREPARED_H

#include <stddef.h>
#include <stdint.h>

#include "reconfig/migrate.h"

struct mig_prepared {
	struct migration m;	/* the plan (its writes, counts, times) */
	uint32_t n_sw;
	uint32_t *sw_node;	/* per row: the switch */
	uint8_t *before;	/* per row: the VM's LID's, the destination's entries */
	uint8_t *after;		/* the same after the move */
	uint64_t links;		/* signature of the switch links */
	uint64_t prepare_us;	/* the planning, at prepare */
};

/*
 * Plans moving the VM on VF port vm_pi to VF port dst_vf_pi on the
 * tables t (not changed) with migrate_plan_vm.  0, or -1 with err (as
 * migrate_plan_vm, ENOMEM); p is empty then.
 */
int mig_prepare_vm(const struct fabric *f, const struct lft_tables *t,
		   uint32_t vm_pi, uint32_t dst_vf_pi, int scheme, int method,
		   struct mig_prepared *p, char *err, size_t errlen);
/*
 * At commit: if p still holds for f and the tables cur, *out becomes a
 * copy of cur with the move's entries, *m the plan (both taken from p:
 * p is emptied) and 1 is returned; 0: it does not hold (why says what
 * changed), nothing done; -1: ENOMEM.
 */
int mig_prepared_take(struct mig_prepared *p, const struct fabric *f,
		      const struct lft_tables *cur, uint32_t vm_pi,
		      uint32_t dst_vf_pi, struct lft_tables *out,
		      struct migration *m, char *why, size_t whylen);
void mig_prepared_free(struct mig_prepared *p);

#endif
