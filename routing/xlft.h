/*
 * Secondary LFTs for extended LIDs (mad/xlid.h): pure, after routing.
 * A vLID is never path-computed: every physical switch forwards it as it
 * forwards its VF's PF (the PF's pLID column is copied), the VF's own
 * vSwitch sends it to the VF's port, and every other vSwitch leaves it to
 * its DefaultPort (the uplink).  Memory follows the vLIDs in use: a
 * physical switch's row has (max_vlid - FAB_VLID_BASE) / 64 + 1 blocks,
 * a vSwitch's only the blocks from the first to the last of its own VFs'
 * vLIDs (one or two under the prepopulated scheme), none without a vLID
 * of its own -- 3,456 vSwitches x 55,296 vLIDs cost 3,456 rows of a
 * block or two, not 191 MB.
 */
#ifndef IBSMD_XLFT_H
#define IBSMD_XLFT_H

#include "routing/engine.h"

struct xlft_report {
	uint32_t vlids;		/* vLIDs in the model */
	uint32_t unrouted;	/* not behind a vSwitch, or its PF has no pLID */
	uint32_t rows;		/* rows given a secondary table */
	uint32_t blocks;	/* blocks held in all rows */
};

/*
 * Fills t->x_blocks, xrow and xdefault from f's vLIDs and t's primary
 * rows (replacing what was there).  0, or -1 (ENOMEM; t's secondary
 * part is then empty).
 */
int xlft_fill(const struct fabric *f, struct lft_tables *t,
	      struct xlft_report *rep);
/* dst's secondary part = a copy of src's (same rows); 0 or -1 (ENOMEM). */
int xlft_copy(struct lft_tables *dst, const struct lft_tables *src);
/*
 * Makes t's secondary part hold at least x_blocks blocks (new entries
 * none), creating it (DefaultPorts from f, rows for physical switches)
 * when t has none.  0 or -1 (ENOMEM).
 */
int xlft_grow(const struct fabric *f, struct lft_tables *t, uint32_t x_blocks);
/*
 * Sets row r's entry for vLID index x (vLID - FAB_VLID_BASE, below
 * x_blocks * 64) to p, giving the row the block if it has not got it
 * (LFT_DROP outside its blocks: nothing to do).  0 or -1 (ENOMEM).
 */
int xlft_set(struct lft_tables *t, uint32_t r, uint32_t x, uint8_t p);
/* Row r's entry for vLID index x: LFT_DROP (none) outside its blocks. */
static inline uint8_t xlft_get(const struct lft_tables *t, uint32_t r,
			       uint32_t x)
{
	uint32_t b = x / 64;
	if (!t->xrow || b < t->xfirst[r] || b >= t->xfirst[r] + t->xcount[r])
		return LFT_DROP;
	return t->xrow[r][x - (size_t)t->xfirst[r] * 64];
}
/* Block b (64 entries) of row r, or NULL when the row has not got it. */
static inline const uint8_t *xlft_block(const struct lft_tables *t, uint32_t r,
					uint32_t b)
{
	return t->xrow && b < t->x_blocks && b >= t->xfirst[r] &&
	       b < t->xfirst[r] + t->xcount[r] ?
	       t->xrow[r] + (size_t)(b - t->xfirst[r]) * 64 : NULL;
}
/*
 * Row r's SecondaryLFTTop: past its last block (a vLID at or above it
 * leaves by the DefaultPort), 0 when it has no block.
 */
static inline uint32_t xlft_top(const struct lft_tables *t, uint32_t r)
{
	return t->xrow && t->xcount[r] ? (t->xfirst[r] + t->xcount[r]) * 64 : 0;
}

#endif
