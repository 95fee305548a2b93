/*
 * Shared-LID VMs (sm/model/vm.h) and their signalling to hypervisors, the
 * thesis's Paper VI: the VM registry's operations on them, from its two
 * front ends -- ibsmctl vm (sm/vm/vmops.c) and SA GUIDInfoRecord Set/Delete
 * on a hypervisor's PF port (sm/sa/sa_node.c) -- and Algorithm 1
 * (traps/vguid.h) deciding when the registered hypervisors hear of a new
 * vGUID-to-LID mapping.
 *
 * Registered hypervisors: the ports holding an InformInfo subscription
 * for trap 69 (or for every trap, 0xFFFF) that are the PF of a vSwitch
 * in the model.  Each hears one repath 69 per migration: SLID its PF LID,
 * DLID the VM's new LID, SGID its port GID, DGID the VM's GID (subnet
 * prefix + vGUID), the path fields of the route from it to the new LID.
 * VM creation, and a reboot on the same hypervisor, send none.
 *
 * Nothing here writes the fabric: a shared-LID VM's LID is its PF's, which
 * every switch already routes.
 */
#ifndef IBSMD_VMSHARED_H
#define IBSMD_VMSHARED_H

#include <stddef.h>
#include <stdint.h>

#include "sm/model/vm.h"

struct sm;

/* What one operation did, for the replies and the tests. */
struct vmshared_result {
	int action;		/* enum vguid_action of the set, or -1: no set */
	uint32_t notices;	/* repath 69s, one per registered hypervisor */
	uint64_t reports;	/* Reports the notifier queued for them */
	uint32_t hypervisors;	/* registered hypervisors at the time */
};

/*
 * Creates shared-LID VM v (name, vGUID, hyp_guid, weight filled; the
 * hypervisor a vSwitch of the model): lid = its PF's LID, added to the
 * registry, saved, published to the SA, and set_guid run (a creation, or
 * a re-appearance the table remembers).  0, or -1 with err.
 */
int vmshared_create(struct sm *sm, struct vm *v, struct vmshared_result *res,
		    char *err, size_t errlen);
/*
 * Moves shared-LID VM v to the vSwitch dst_hyp: delete_guid with the old
 * LID, then set_guid with the new PF's LID (a migration when it differs).
 * v is updated in place.  0, or -1 with err.
 */
int vmshared_move(struct sm *sm, struct vm *v, uint64_t dst_hyp,
		  struct vmshared_result *res, char *err, size_t errlen);
/*
 * The VM stops (destroy, GUIDInfoRecord Delete): delete_guid stores its
 * vGUID and LID, the VM leaves the registry (saved, published).  v is
 * invalid afterwards.
 */
void vmshared_remove(struct sm *sm, struct vm *v);
/*
 * May add new VMs, and moved VMs, come to hypervisor hyp_guid within the
 * policy's virtualization.max_vms and .max_vms_per_hypervisor?  0, or
 * -1 with err: the refusal counted in the registry (sm/model/vm.h) and
 * logged at most once a second, naming who (a port or node GUID; 0: an
 * ibsmctl command).  Both front ends ask it before a create or a move.
 */
int vmshared_room(struct sm *sm, uint64_t hyp_guid, unsigned add, unsigned moved,
		  uint64_t who, char *err, size_t errlen);
/*
 * SA GUIDInfoRecord Set (del 0) or Delete (del 1) of vGUIDs g[0..n) by
 * the PF port port_guid (sm/sa/sa_node.c checked it is a hypervisor's): Set
 * creates a shared-LID VM "vg-<vGUID>" of unknown vGUIDs, moves one of
 * another hypervisor here, leaves one already here; Delete ends this
 * hypervisor's.  All or nothing: 0, or an SA status (REQ_INVALID: a vGUID
 * of a dedicated-LID VM or a port's GUID; NO_RECORDS: a Delete of none of
 * its VMs; NO_RESOURCES: a sweep or a VM command is running, ask again,
 * or the VMs would not fit vmshared_room(): nothing changed) with err.
 */
int vmshared_sa_request(struct sm *sm, uint64_t port_guid, const uint64_t *g,
			unsigned n, int del, char *err, size_t errlen);
/*
 * Writes the VM registry's file now, after a write under way off the loop
 * (sm/vm/vmsave.h); what shared-LID changes left pending is in it.  0, or
 * -1 with err.  Every write of the file goes through here or vmsave.
 */
int vmshared_save(struct sm *sm, char *err, size_t errlen);
/* The file written if changes are pending, then the table freed. */
void vmshared_free(struct sm *sm);

#endif
