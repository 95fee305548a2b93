/*
 * Secondary LFTs for extended LIDs (mad/xlid.h): pure, after routing.
 * A vLID is never path-computed: every physical switch forwards it as it
 * forwards its VF's PF (the PF's pLID column is copied), the VF's own
 * vSwitch sends it to the VF's port, and every other vSwitch leaves it to
 * its DefaultPort (the uplink).  Memory follows the vLIDs in use: rows of
 * (max_vlid - FAB_VLID_BASE) / 64 + 1 blocks, none for a vSwitch without
 * a vLID of its own.
 */
#ifndef IBSMD_XLFT_H
#define IBSMD_XLFT_H

#include "engine.h"

struct xlft_report {
	uint32_t vlids;		/* vLIDs in the model */
	uint32_t unrouted;	/* not behind a vSwitch, or its PF has no pLID */
	uint32_t rows;		/* rows given a secondary table */
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
/* Frees only the secondary part of t. */
void xlft_clear(struct lft_tables *t);
/* Block b (64 entries) of row r, or NULL when the row has none. */
static inline const uint8_t *xlft_block(const struct lft_tables *t, uint32_t r,
					uint32_t b)
{
	return t->xrow && t->xrow[r] && b < t->x_blocks ?
	       t->xrow[r] + (size_t)b * 64 : NULL;
}

#endif
