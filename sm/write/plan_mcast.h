/*
 * Multicast forwarding tables into write plans: every
 * group's tree (routing/mctree.h) as MulticastForwardingTable blocks of
 * every switch.  Block b covers MLIDs 0xC000 + 32b .. + 31, position q
 * ports 16q .. 16q + 15 (modifier q << 28 | b), one 16-bit port mask per
 * MLID.  Every block holding a tree entry is planned (the executor
 * leaves out what the device cache says the switch holds); a block with
 * no entry is planned, as zeros, where the cache says the switch holds
 * entries there (a group that left or moved) and, for the blocks of
 * MLIDs in use, where the cache does not know (an earlier SM's entries
 * go: the first run after a start writes them on every switch); a block
 * of MLIDs none uses that the cache does not know is taken as empty,
 * what a switch holds after a reset.
 * Blocks at or past the switch's MulticastFDBCap are never planned.
 *
 * MulticastFDBTop, on a switch whose port 0 advertises HasMulticastFDBTop
 * (CapabilityMask bit 30), as OpenSM's use_mfttop (on by default): the
 * last MLID of the highest block in use, 0xBFFF when none (no entry
 * valid), never past MulticastFDBCap.  The heavy sweep writes it with
 * LinearFDBTop (plan_sweep.c); between sweeps plan_mcast() adds the
 * SwitchInfo Set itself when asked to (si_raw: the SwitchInfo as read).
 * ibsim's switches do not advertise it.
 */
#ifndef IBSMD_PLAN_MCAST_H
#define IBSMD_PLAN_MCAST_H

#include <stdint.h>

#include "mad/smp.h"
#include "routing/engine.h"
#include "sm/write/devcache.h"
#include "sm/base/fabric.h"
#include "sm/model/mcgroups.h"
#include "sm/write/plan.h"

#define MFT_BLOCK 32	/* MLIDs per block */
#define MFT_PORTS 16	/* ports per position */

struct mcast_plan_stats {
	uint32_t groups;	/* groups with a tree */
	uint32_t members;	/* member ports found in the fabric */
	uint32_t missing;	/* members whose port GUID the fabric lacks */
	uint32_t blocks;	/* MFT blocks planned (before the cache) */
	uint32_t computed;	/* trees computed (the others: kept) */
};

/*
 * The trees of the last run, kept between runs (plan_mcast_kept): per
 * MLID the group's gen its tree was computed at and the tree's masks
 * (n_sw x MCAST_MASK_WORDS words).  A run recomputes only the groups
 * whose gen moved (a join, a leave, a new group on a freed MLID) and
 * drops the masks of MLIDs no group holds; mcast_trees_clear() forgets
 * them all (a new fabric model: a heavy sweep).  Zeroed memory is an
 * empty set.
 */
struct mcast_work;
struct vm_registry;
struct mcast_trees {
	uint32_t n_sw;		/* the rows the masks have */
	uint64_t *gen;		/* MC_MLIDS, 0: no tree kept */
	uint64_t **mask;	/* MC_MLIDS, NULL: none */
	uint32_t kept;		/* trees held now */
	/*
	 * complete: the last run planned every group and its writes are all
	 * the cache holds of MFTs since, so a block with no group now and no
	 * tree kept needs no look (a heavy sweep clears what else was there).
	 * work and pmap: the switch graph, its hop counts and root BFSs, and
	 * the port map of the model the trees are of, built by the first run.
	 */
	int complete;
	struct mcast_work *work;
	struct guid_map *pmap;
	const struct fabric *pmap_f;
};
void mcast_trees_clear(struct mcast_trees *k);
void mcast_trees_free(struct mcast_trees *k);
/* Only the port map goes (the VMs changed, no member moved): rebuilt by the next run. */
void mcast_trees_forget_ports(struct mcast_trees *k);

/*
 * f's end ports by port GUID (a switch: its node GUID), and the vGUID of
 * each VM of vms (NULL: none) present in f at its port (its VF, or a
 * shared-LID VM's PF): *m, for mcast_member_ports.  A VM joins by its
 * vGUID's GID (sm/sa/sa_mcmember.c), so its tree follows it when it
 * migrates.  0, or -1 (ENOMEM).
 */
int mcast_port_map(const struct fabric *f, const struct vm_registry *vms,
		   struct guid_map *m);
/*
 * The port indices of g's members present in f, into out (n_members
 * entries); returns how many.
 */
uint32_t mcast_member_ports(const struct guid_map *m, const struct mc_group *g,
			    uint32_t *out);

/* Does switch node ni take MulticastFDBTop? */
int mcast_has_top(const struct fabric *f, uint32_t ni);
/* The MulticastFDBTop switch ni is to hold for db's groups. */
uint16_t mcast_top(const struct fabric *f, uint32_t ni, const struct mc_db *db);

/*
 * Plans db's MFT blocks for every switch of t in wave (st may be NULL),
 * with si_raw (per node, the SwitchInfo as read; NULL: none) the
 * SwitchInfo of the switches taking MulticastFDBTop.  clear_unknown (a
 * heavy sweep): a block of MLIDs in use that c does not know is written
 * with the zeros it should hold even where no tree passes; else such a
 * block is written only where a tree needs an entry.  0, or -1 (ENOMEM).
 */
int plan_mcast(struct plan *p, int wave, const struct fabric *f,
	       struct devcache *c, const struct lft_tables *t,
	       const struct mc_db *db, const struct vm_registry *vms,
	       const uint8_t (*si_raw)[SMP_DATA_SIZE], int clear_unknown,
	       struct mcast_plan_stats *st);
/* The same, with the trees kept in k reused where their group's gen holds. */
int plan_mcast_kept(struct plan *p, int wave, const struct fabric *f,
		    struct devcache *c, const struct lft_tables *t,
		    const struct mc_db *db, const struct vm_registry *vms,
		    const uint8_t (*si_raw)[SMP_DATA_SIZE], struct mcast_trees *k,
		    int clear_unknown, struct mcast_plan_stats *st);

#endif
