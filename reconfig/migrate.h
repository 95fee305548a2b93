/*
 * Minimal reconfiguration on a VM's live migration (seed 000 §1.3,
 * §1.6): the VM keeps its LID; only forwarding changes.  Pure
 * computation over the fabric model and the tables: the new entries,
 * and the (switch, LFT block) writes that differ, in waves.
 *
 * Schemes: dynamic copies the destination PF's entry to the VM's LID;
 * prepopulated swaps the VM's LID's and the destination VF's LID's
 * entries.  Methods: ftreeminrc touches only the switches the skyline
 * rule marks (same leaf: that leaf; else both leaves and their up-sets,
 * level by level, until the two up-sets meet); itrc every switch; full
 * every LFT block of every switch, no diff (the reference).  ftreeminrc
 * on a fabric that is not a fat tree falls back to itrc (fallback set).
 *
 * Waves: the switches of the active path (the old route from the source
 * leaf to the destination's LID) first, destination side, then the
 * common ancestor(s), then the source side; then the rest.
 */
#ifndef IBSMD_MIGRATE_H
#define IBSMD_MIGRATE_H

#include <stddef.h>
#include <stdint.h>

#include "../routing/engine.h"
#include "../sm/fabric.h"

enum mig_scheme { MIG_DYNAMIC, MIG_PREPOPULATED };
enum mig_method { MIG_FTREEMINRC, MIG_ITRC, MIG_FULL };

#define MIG_WAVES 4	/* destination side, ancestors, source side, rest */

struct mig_write {
	uint32_t row;		/* LFT row (switch) */
	uint32_t block;		/* LFT block (64 LIDs) */
	uint8_t wave;		/* 0 .. MIG_WAVES - 1 */
};

struct migration {
	int scheme, method;	/* method: the one used (after a fallback) */
	int fallback;		/* ftreeminrc asked, itrc used (reason in note) */
	char note[160];
	uint32_t vm_lid, dst_lid;	/* the VM's (source's) LID, the destination's */
	uint32_t src_leaf, dst_leaf;	/* rows */
	uint8_t *marked;	/* per row */
	struct mig_write *w;	/* writes, by wave then row then block */
	uint32_t n_w;
	uint32_t switches_marked, switches_written, lft_blocks, other_smps;
	uint32_t entries_changed;	/* LFT entries that changed */
	uint64_t levels_us;	/* ranking the fat tree (at bring-up, once) */
	uint64_t mark_us;	/* the skyline marking alone */
	uint64_t plan_us;	/* marking, new entries and writes */
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
void migration_free(struct migration *m);

const char *mig_scheme_name(int scheme);
const char *mig_method_name(int method);
/* -1 when unknown. */
int mig_scheme_parse(const char *s);
int mig_method_parse(const char *s);

#endif
