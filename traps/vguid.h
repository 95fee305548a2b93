/*
 * The repath-trap table of the thesis's Paper VI (Algorithm 1, with the
 * two fixes below: the notice carries the new mapping, and entries
 * expire): shared-LID VMs keep their vGUID across a migration while their
 * LID (their hypervisor's PF LID) changes, and the SM tells the
 * registered hypervisors -- not every VM -- of the new mapping.
 *
 *   delete_guid(vGUID, LID)   the vGUID left a port (a VM shut down, or the
 *                             source side of a migration): (vGUID, old LID)
 *                             is stored, stamped with the time
 *   set_guid(vGUID, LID)      the vGUID appeared on a port:
 *                               stored with a different LID: a migration,
 *                               one repath 69 to every registered
 *                               hypervisor, carrying the NEW mapping
 *                               (the paper's listing sends the old
 *                               record; its text, and hosts, need the
 *                               new one);
 *                               stored with the same LID: a reboot on the
 *                               same hypervisor, nothing;
 *                               not stored: a creation, nothing;
 *                             the entry goes in every case.
 *   expiry                    an entry older than the TTL goes (a VM that
 *                             never comes back: the paper keeps it
 *                             forever); a set after that is a creation.
 *
 * Pure: no MADs, no clock of its own.  The caller says who is registered
 * and how one notice reaches one of them (vguid_out).
 */
#ifndef IBSMD_VGUID_H
#define IBSMD_VGUID_H

#include <stddef.h>
#include <stdint.h>

#define VGUID_TTL_DEFAULT_S	600	/* a migration's delete-to-set gap is seconds */

struct vguid_ent {
	uint64_t vguid;
	uint32_t lid;		/* the LID it had when deleted */
	uint64_t when;		/* seconds, the caller's clock */
};

struct vguid_table {
	struct vguid_ent *e;
	size_t n, cap;
	uint32_t ttl_s;
	uint64_t expired;	/* entries dropped by the TTL, ever */
};

enum vguid_action {
	VGUID_CREATED,		/* not in the table: no notice */
	VGUID_SAME_LID,		/* in it with this LID: no notice */
	VGUID_MOVED,		/* in it with another LID: notices */
};

void vguid_table_init(struct vguid_table *t, uint32_t ttl_s);
void vguid_table_free(struct vguid_table *t);
/* delete_guid: stores (vguid, lid); a second delete replaces it.  0 or -1 (ENOMEM). */
int vguid_delete(struct vguid_table *t, uint64_t vguid, uint32_t lid,
		 uint64_t now);
/* set_guid: what the set means (see above); the entry goes. */
enum vguid_action vguid_set(struct vguid_table *t, uint64_t vguid,
			    uint32_t lid, uint64_t now);
/* The stored entry of vguid (not expired), or NULL. */
const struct vguid_ent *vguid_find(const struct vguid_table *t, uint64_t vguid,
				   uint64_t now);

/* How one notice reaches one registered hypervisor (index into the
 * caller's list): returns the Reports queued (>= 0). */
struct vguid_out {
	void *ctx;
	int (*notify)(void *ctx, size_t hyp, uint64_t vguid, uint32_t lid);
};

struct vguid_stats {
	uint32_t notices;	/* one per hypervisor told */
	uint64_t reports;	/* what the sender queued for them */
};

/*
 * set_guid and its signalling in one: on VGUID_MOVED one notice to each
 * of the n_hyps registered hypervisors (0..n_hyps-1), none otherwise.
 * Returns the action.
 */
enum vguid_action vguid_set_signal(struct vguid_table *t, uint64_t vguid,
				   uint32_t lid, uint64_t now, size_t n_hyps,
				   const struct vguid_out *o,
				   struct vguid_stats *st);

const char *vguid_action_name(enum vguid_action a);

#endif
