/*
 * Minimal reconfiguration on a VM's live migration (the vSwitch paper:
 * the LID schemes of Section 4, FTreeMinRC of Section 6): the VM keeps
 * its LID; only forwarding changes.  Pure computation over the fabric
 * model and the tables: the new entries, and the (switch, LFT block)
 * writes that differ, in waves.
 *
 * Schemes: dynamic copies the destination PF's entry to the VM's LID;
 * prepopulated swaps the VM's LID's and the destination VF's LID's
 * entries.  Methods: ftreeminrc touches only the switches the skyline
 * rule marks (same leaf: that leaf; else both leaves and their up-sets,
 * level by level, until the two up-sets meet); itrc every switch; full
 * every LFT block of every switch, no diff (the reference).  ftreeminrc
 * on a fabric that is not a fat tree falls back to itrc (fallback set).
 *
 * Waves: the LFT order of every other table change (reconfig/order.h),
 * on the one or two LIDs whose entries change (mig_order(),
 * reconfig/migorder.h): per LID a switch takes its new entry only after
 * every changing switch on its new route onwards did, so no state
 * forwards the VM's LID (or the swapped one) in a loop.  Within a wave
 * the switches of the active path (the old route from the source leaf
 * to the destination's LID) go first -- destination side, common
 * ancestor(s), source side -- then the rest: the priority holds only
 * where the order leaves room.  Moving a VM between VFs, the
 * destination VF's PortInfo (its new LID) goes in wave 0, before any
 * switch sends the LID towards it, the LFT waves from 1 (lft_first), the
 * source VF's after the last (src_wave).
 *
 * vSwitches (FNODE_VSWITCH, sm/base/fabric.h): migrate_plan_vm moves a VM
 * between VF ports behind vSwitches.  The leaves are the physical
 * switches above the vSwitches; the physical switches take the entries
 * as above; the two vSwitch rows (destination: the VM's LID to the VF
 * port; source: to its uplink -- and, prepopulated, the swapped LID the
 * other way) are ordered with them (the destination's in the first LFT
 * wave: its next hop is the VF) and written as separate writes flagged vswitch, counted in
 * vswitch_blocks and not in lft_blocks nor switches_written.  Every
 * other vSwitch already sends a LID that is not its own to its uplink.
 */
#ifndef IBSMD_MIGRATE_H
#define IBSMD_MIGRATE_H

#include <stddef.h>
#include <stdint.h>

#include "reconfig/order.h"
#include "routing/engine.h"
#include "sm/base/fabric.h"

enum mig_scheme { MIG_DYNAMIC, MIG_PREPOPULATED };
enum mig_method { MIG_FTREEMINRC, MIG_ITRC, MIG_FULL };

/* what a plan does: migrate_plan(_vm), migrate_plan_boot, migrate_plan_drop */
enum mig_kind { MIG_MOVE, MIG_BOOT, MIG_DROP };

/* the destination's PortInfo, the LFT order's waves, the source's PortInfo */
#define MIG_MAX_WAVES (ORDER_MAX_WAVES + 2)

struct mig_write {
	uint32_t row;		/* LFT row (switch) */
	uint32_t block;		/* LFT block (64 LIDs) */
	uint8_t wave;		/* 0 .. m->waves - 1 */
	uint8_t vswitch;	/* the row is a vSwitch's */
	uint8_t mixed;		/* entries not yet due as before: migrate_payload() */
	uint8_t prio;		/* enum mig_prio of its row */
};

/* Within a wave: the active path first, destination side, apex, source side. */
enum mig_prio { MIG_PRIO_DST, MIG_PRIO_APEX, MIG_PRIO_SRC, MIG_PRIO_REST };

struct migration {
	int kind;		/* enum mig_kind */
	int scheme, method;	/* method: the one used (after a fallback) */
	int fallback;		/* ftreeminrc asked, itrc used (reason in note) */
	char note[160];
	uint32_t vm_lid, dst_lid;	/* the VM's (source's) LID, the destination's
					 * (migrate_plan_vm dynamic: the
					 * destination PF's, whose entries it takes) */
	uint32_t src_leaf, dst_leaf;	/* rows */
	uint8_t *marked;	/* per row */
	struct mig_write *w;	/* writes, by wave then row then block */
	uint32_t n_w;
	uint32_t vm_pi, dst_pi;	/* the end ports (FAB_NONE: none) */
	uint32_t switches_marked, switches_written, lft_blocks, other_smps;
	uint32_t vswitch_blocks;	/* writes to vSwitch rows (not in lft_blocks) */
	uint32_t vswitches_written;	/* distinct vSwitch rows written */
	uint32_t entries_changed;	/* LFT entries that changed */
	uint64_t levels_us;	/* ranking the fat tree (at bring-up, once) */
	uint64_t mark_us;	/* the skyline marking alone */
	uint64_t plan_us;	/* marking, new entries and writes */
	/*
	 * Extended LIDs (migrate_plan_xvm): secondary-LFT writes, row and
	 * block of t->xrow (block = (vLID - FAB_VLID_BASE) / 64), apart from
	 * w (primary blocks, none then); xlft_blocks = n_xw.
	 */
	struct mig_write *xw;
	uint32_t n_xw, xlft_blocks;
	/*
	 * The order (waves): waves of the plan, port sets included;
	 * lft_first the first LFT wave, src_wave the source VF's PortInfo;
	 * order, how the LFT writes (w, or xw) were ordered.  A mixed write
	 * carries, of the ord_n changed LIDs ord_lid[] in its block, the new
	 * entry where ord_wave (per row * ord_n) is at most its wave, else
	 * ord_before's (the tables' encoding), or none where ord_drained.
	 */
	uint32_t waves;
	uint8_t lft_first, src_wave;
	struct lft_order_stats order;
	unsigned ord_n;
	uint32_t ord_lid[2];
	uint8_t ord_drained[2];
	uint8_t *ord_before, *ord_wave;
};

/*
 * Plans moving the VM at end port src_pi (its LID is the VM's) to end
 * port dst_pi: t is updated in place to the new tables, m filled.  rank
 * (per row, ftree_levels()) may be NULL: ftreeminrc then ranks the tree
 * itself (levels_us).  Returns 0, or -1 with err (ENOMEM, a port without
 * a LID or not cabled to a switch); m is then empty.
 */
int migrate_plan(const struct fabric *f, struct lft_tables *t,
		 uint32_t src_pi, uint32_t dst_pi, int scheme, int method,
		 const uint32_t *rank, struct migration *m, char *err,
		 size_t errlen);

/*
 * Plans moving the VM whose LID is held by VF port vm_pi (behind a
 * vSwitch) to VF port dst_vf_pi (behind another vSwitch, or another VF
 * of the same).  Dynamic: the VM's LID copies the entries of the
 * destination vSwitch's PF's LID (dst_vf_pi needs no LID).  Prepopulated:
 * the VM's LID and dst_vf_pi's LID swap entries.  Physical switches by
 * method as migrate_plan; the vSwitch rows as said above, all in the
 * LFT order from wave 1 (the destination VF's PortInfo in wave 0).  t is updated in place,
 * f is not (the caller sets the VF ports' LIDs: see sm/vm/vmexec.h).
 * Returns 0, or -1 with err (ports not VFs, no LID, ENOMEM).
 */
int migrate_plan_vm(const struct fabric *f, struct lft_tables *t,
		    uint32_t vm_pi, uint32_t dst_vf_pi, int scheme, int method,
		    const uint32_t *rank, struct migration *m, char *err,
		    size_t errlen);
/*
 * A VM created under the dynamic scheme on VF port vf_pi with the new LID
 * lid: on every physical switch the LID's entry copies the PF's, on the
 * VF's vSwitch it leads to the VF's port, on every other vSwitch to its
 * uplink; only the blocks that differ are written (all in wave 0).  t
 * must hold lid (migrate_tables_copy).  Returns 0, or -1 with err.
 */
int migrate_plan_boot(const struct fabric *f, struct lft_tables *t,
		      uint32_t vf_pi, uint32_t lid, struct migration *m,
		      char *err, size_t errlen);
/*
 * A VM destroyed under the dynamic scheme: LID lid's entry becomes
 * LFT_DROP on every switch, only the blocks that differ (wave 0).
 * m->vm_pi is the port holding lid in f, or FAB_NONE.
 */
int migrate_plan_drop(const struct fabric *f, struct lft_tables *t,
		      uint32_t lid, struct migration *m, char *err,
		      size_t errlen);
/*
 * migrate_plan_vm for a VM on a vLID (extended LIDs, mad/xlid.h): the
 * same marking and the same new entries, but on the secondary tables of
 * t (t->xrow, routing/xlft.h), t's primary rows untouched: every physical
 * switch's entry for the VM's vLID is the one migrate_plan_vm gives a
 * pLID there (dynamic: the destination PF's; prepopulated: the VM's and
 * the destination VF's vLIDs swap), the destination vSwitch sends it to
 * the VF, the source vSwitch leaves it to its DefaultPort.  Only blocks
 * that differ are written (m->xw); m->w stays empty.  The destination
 * (prepopulated) must hold a vLID too.  Returns 0, or -1 with err.
 */
int migrate_plan_xvm(const struct fabric *f, struct lft_tables *t,
		     uint32_t vm_pi, uint32_t dst_vf_pi, int scheme, int method,
		     const uint32_t *rank, struct migration *m, char *err,
		     size_t errlen);
/*
 * Extended LIDs, dynamic scheme: a VM created on VF port vf_pi with the
 * new vLID vlid (migrate_plan_xboot: t's secondary rows grow to hold it;
 * physical switches copy the PF's entry, the VF's vSwitch leads to the
 * VF, other vSwitches leave it to their DefaultPort), or destroyed
 * (migrate_plan_xdrop: every entry none).  Only blocks that differ are
 * written (m->xw, wave 0).  0, or -1 with err.
 */
int migrate_plan_xboot(const struct fabric *f, struct lft_tables *t,
		       uint32_t vf_pi, uint32_t vlid, struct migration *m,
		       char *err, size_t errlen);
int migrate_plan_xdrop(const struct fabric *f, struct lft_tables *t,
		       uint32_t vlid, struct migration *m, char *err,
		       size_t errlen);
/*
 * dst = a copy of src (the tables of f) with room for LIDs up to max_lid (or src's
 * max_lid when larger); new entries LFT_DROP.  The QoS fields are
 * copied: a new LID has no SL class (SL 0 from it, and to it), until the
 * QoS mode (vftree_apply()) runs again.  0, or -1 on ENOMEM.
 */
int migrate_tables_copy(struct lft_tables *dst, const struct lft_tables *src,
			const struct fabric *f, uint32_t max_lid);
void migration_free(struct migration *m);
/*
 * The writer before the order, for the tests that show what it prevents
 * (cfg.lft_unordered): every LFT write of m in its first LFT wave, each
 * block once, as the new tables have it.
 */
void migrate_one_wave(struct migration *m);
/*
 * The 64 entries write w of m carries, from blk (the block as the
 * tables written have it: primary, or secondary for m->xw): blk, with
 * the changed LIDs not yet due as before (or none, drained).
 */
void migrate_payload(const struct migration *m, const struct mig_write *w,
		     const uint8_t *blk, uint8_t *out /* [64] */);

const char *mig_scheme_name(int scheme);
const char *mig_method_name(int method);
/* -1 when unknown. */
int mig_scheme_parse(const char *s);
int mig_method_parse(const char *s);

#endif
