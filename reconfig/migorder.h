/*
 * The order of a migration's LFT writes: reconfig/order.c's, run on the
 * one or two LIDs whose entries the migration changes (the VM's, and
 * under prepopulated the swapped one) and not on the whole tables, so
 * that planning a move stays about as cheap as the marking.  The same
 * rule per LID as every other table change (order.h): a switch takes its
 * new entry only after every changing switch on its new route onwards
 * did; a block waits for the latest of its changed entries, and entries
 * of blocks that wait for each other are written in waves of their own.
 * The dependency check of order.h sees the dependencies of those LIDs
 * only: the others' routes do not change.
 */
#ifndef IBSMD_MIGORDER_H
#define IBSMD_MIGORDER_H

#include <stdint.h>

#include "reconfig/migrate.h"

/* The columns a migration changes. */
struct mig_cols {
	unsigned n;		/* 1 or 2 */
	uint32_t lid[2];	/* columns of the tables ordered */
	uint32_t block[2];	/* the block each is written in (its LID's, or vLID's) */
	const uint8_t *before;	/* per row * n: the entries before, as t encodes them */
	const uint8_t *after;	/* the same after; NULL: t's entries for lid[] */
};

/*
 * Orders the change of t's columns c from c->before to t's entries (or
 * c->after), on
 * every row of t: the writes (row, c->block[k], wave from first, mixed
 * where a block is written before all its changed entries are due) into
 * *w, *n_w, a wave's writes by prio[row] (lower first), then row; m's
 * order, ord_wave, ord_drained and waves (first + the LFT waves) filled.
 * 0, or -1 (ENOMEM, more waves than ORDER_MAX_WAVES).
 */
int mig_order(const struct fabric *f, const struct lft_tables *t,
	      const struct mig_cols *c, const uint8_t *prio, uint8_t first,
	      struct migration *m, struct mig_write **w, uint32_t *n_w);

/* Writes by wave, then their row's priority (lower first), row, block. */
void mig_sort_writes(struct mig_write *w, uint32_t n);

#endif
