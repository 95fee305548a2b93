/*
 * The VM registry (the vSwitch model of the vSwitch paper, "Efficient
 * Routing and Reconfiguration in Virtualized HPC Environments with
 * vSwitch-enabled Lossless Networks", Section 4):
 * every VM the operator created, on which hypervisor's VF it runs, with
 * the LID and vGUID it keeps across live migrations.  Persisted in
 * STATE_DIR/vms, replaced atomically (sm/base/wfile.h) after every
 * change, like guid2lid.
 *
 * A hypervisor is named by its vSwitch (node GUID); a VF by its number on
 * the vSwitch (fabric.h: the CA ports after the PF in port order, from 0).
 * The VF's port GUID is kept too, to find the VM after a restart before
 * the vSwitch is discovered and to tell a recabled VF.
 *
 * LIDs.  The LID of a VF port lives in guid2lid under that VF port's GUID,
 * like any port's; the registry moves it there when a VM is created,
 * migrated or destroyed.  Under the dynamic scheme an idle VF has no LID
 * (FPORT_NOLID); under the prepopulated scheme every VF has one, and a
 * migration swaps the VM's LID with the destination VF's.
 *
 * Shared-LID VMs (shared = 1; the vSwitch paper's hybrid "lightweight
 * vSwitch", Section 4.1, and the thesis's Paper VI) have no VF and no
 * LID of their own: they are known by their vGUID and answered for with
 * their hypervisor's PF LID (lid is that LID when last saved; the SA
 * reads the PF's current one).  vf is -1 and vf_guid 0; a
 * migration changes the hypervisor and so the LID, and writes nothing.
 * They come from ibsmctl vm create --shared-lid or from an SA
 * GUIDInfoRecord Set of an unknown vGUID on a hypervisor's PF port (the
 * registry's second front end, sm/vm/vmshared.c).
 */
#ifndef IBSMD_VM_H
#define IBSMD_VM_H

#include <stddef.h>
#include <stdint.h>

#include "reconfig/rebalance.h"
#include "reconfig/prepared.h"
#include "sm/base/fabric.h"

#define VM_NAME_LEN 64
#define VM_WEIGHT_MAX 1000

struct vm {
	char name[VM_NAME_LEN];
	uint64_t vguid;		/* the VM's vGUID (its GID's interface ID) */
	uint32_t lid;		/* the VM's LID, kept across migrations */
	uint64_t hyp_guid;	/* its vSwitch's node GUID */
	int vf;			/* its VF number on that vSwitch */
	uint64_t vf_guid;	/* that VF port's GUID */
	uint16_t weight;	/* vswitch-ftree weight, 1..VM_WEIGHT_MAX */
	int shared;		/* a shared-LID VM: no VF, its PF's LID */
	/* a migration prepared (vm migrate --prepare), not yet committed */
	int prepared;
	uint64_t to_hyp_guid;
	int to_vf;
	uint32_t line;		/* its line in the file read at start; 0: made since */
};

struct vm_registry {
	struct vm *v;
	uint32_t n, cap;
	char path[4096];	/* STATE_DIR/vms */
	/*
	 * Indexes, kept by vm_add(), vm_del() and vm_move(), so that a
	 * lookup or an add costs the same with 10 VMs as with 100,000.
	 */
	struct guid_map by_vguid;	/* vGUID -> index in v */
	struct guid_map by_name;	/* the name's hash -> index in v */
	uint32_t name_clashes;		/* names whose hash another held when
					 * added: vm_find() then scans */
	struct guid_map per_hyp;	/* hypervisor GUID -> VMs on it */
	/* creates and moves vm_room() refused, since start */
	uint64_t refused_total, refused_hyp;
	/* virtualization.rebalance's counters (reconfig/rebalance.h) */
	struct rebalance_state rb;
	/*
	 * The last move prepared (vm migrate --prepare) with its plan
	 * (reconfig/prepared.h), written at its commit if it still holds;
	 * NULL: none.  Kept by sm/vm/vmops.c, freed by vm_registry_free().
	 */
	struct mig_prepared *prep;
	char prep_name[VM_NAME_LEN];
};

/*
 * The policy's bounds (virtualization.max_vms, .max_vms_per_hypervisor):
 * 0 is no bound.
 */
struct vm_limits {
	uint32_t total, per_hyp;
};

/*
 * Loads DIR/vms (absent: empty; only a regular file is read); 0, -1 with
 * the reason in err, or -2 when its contents are corrupt or truncated
 * (err: "PATH:LINE: why").
 */
int vm_registry_load(struct vm_registry *r, const char *state_dir, char *err,
		     size_t errlen);
/* Writes the registry atomically; 0, or -1 with err. */
int vm_registry_save(const struct vm_registry *r, char *err, size_t errlen);
/*
 * The file's text as vm_registry_save() writes it, malloc'd in *text
 * (*len bytes): to be written off the loop.  0, or -1 (ENOMEM).
 */
int vm_registry_text(const struct vm_registry *r, char **text, size_t *len);
void vm_registry_free(struct vm_registry *r);
struct vm *vm_find(const struct vm_registry *r, const char *name);
/* A name the file can hold: 1..63 of letters, digits, '.', '_', '-'. */
int vm_name_ok(const char *name);
struct vm *vm_find_vguid(const struct vm_registry *r, uint64_t vguid);
/* The VM on that VF, or NULL. */
struct vm *vm_find_vf(const struct vm_registry *r, uint64_t hyp_guid, int vf);
/* Adds a copy of v (name and vGUID unique); NULL on ENOMEM or a clash. */
struct vm *vm_add(struct vm_registry *r, const struct vm *v);
void vm_del(struct vm_registry *r, struct vm *v);
/* v now runs on hypervisor hyp_guid (its vSwitch's node GUID). */
void vm_move(struct vm_registry *r, struct vm *v, uint64_t hyp_guid);
/*
 * May add new VMs, and moved VMs of the registry, come to hypervisor
 * hyp_guid within lim?  0, or -1: refused, counted in refused_total or
 * refused_hyp, why saying which bound (its policy key).
 */
int vm_room(struct vm_registry *r, uint64_t hyp_guid, uint32_t add,
	    uint32_t moved, const struct vm_limits *lim, char *why,
	    size_t whylen);

/*
 * Tells the model what the registry knows, before LIDs are assigned and
 * routes computed: each VM's VF port gets vm_weight = its weight; under
 * the dynamic scheme (scheme 0) every other VF port is idle (FPORT_NOLID).
 * A VM whose VF is not in f is left as it is (reported by vm list as
 * absent).  Returns the number of VMs found in f.
 */
uint32_t vm_apply(const struct vm_registry *r, struct fabric *f, int scheme);
/*
 * Puts each VM's LID in m (guid2lid) under its VF port's GUID, and drops
 * another GUID's entry for that LID, so that the LID assignment gives the
 * VM's VF its LID.  0 or -1 (ENOMEM).
 */
int vm_registry_lids(const struct vm_registry *r, struct guid_map *m);
/*
 * Does a VM read from the file claim a LID the subnet gives a port of f
 * that is not a VF (a switch, a host, a PF: which no VM can stand for)?
 * Such a port holds the LID in the device (its LID and LMC as read) or
 * in m (guid2lid).  vm_registry_lids would take the LID from it and
 * renumber it; the file contradicts the subnet.  Returns 1 with
 * "PATH:LINE: ..." in err, else 0.  A VF port that holds it is taken
 * for a stale entry (a migration cut between the two files' writes).
 */
int vm_registry_live_conflict(const struct vm_registry *r, const struct fabric *f,
			      const struct guid_map *m, char *err, size_t errlen);
/* The end port of the VM's VF in f (its vSwitch, VF number and VF port
 * GUID as registered), or FAB_NONE; always FAB_NONE for a shared-LID VM. */
uint32_t vm_port(const struct vm *v, const struct fabric *f);
/* A shared-LID VM's port in f: its hypervisor's PF, or FAB_NONE. */
uint32_t vm_pf_port(const struct vm *v, const struct fabric *f);

#endif
