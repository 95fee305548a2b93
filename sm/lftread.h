/*
 * Reading the unicast LFTs the switches hold: what a new master finds in
 * place after a handover or a failover.  The blocks read become the old
 * tables the routing repairs from (every route that still works is kept)
 * and entries of the device cache (a block that is already right is not
 * written again).
 */
#ifndef IBSMD_LFTREAD_H
#define IBSMD_LFTREAD_H

#include <stdint.h>

#include "../mad/txn.h"
#include "../routing/engine.h"
#include "fabric.h"
#include "devcache.h"

struct lft_read_stats {
	uint32_t switches;	/* switches whose tables were read */
	uint32_t blocks;	/* blocks read */
	uint32_t failed;	/* blocks that did not come */
};

struct lft_read;

/*
 * t: the tables read, sized for f (LIDs assigned); entries of LIDs above a
 * switch's LinearFDBTop, or in blocks that failed, are LFT_DROP.  rc is 0,
 * or -1 (ENOMEM, cancelled): then t is empty.  t is the callee's to keep
 * (lft_tables_free it otherwise).
 */
typedef void (*lft_read_fn)(void *arg, int rc, struct lft_tables *t,
			    const struct lft_read_stats *st);

/*
 * Reads, for every switch of f with a LinearFDBTop, the blocks up to
 * min(LinearFDBTop, f->max_lid) by directed route, and notes each in c.
 * f and c must live until done runs; done may run before this returns
 * (nothing to read).  Returns NULL on ENOMEM.
 */
struct lft_read *lft_read_start(struct txn_engine *txn, const struct fabric *f,
				struct devcache *c, lft_read_fn done, void *arg);
/* Frees a read that has finished (after done) or, with its queries
 * cancelled first by the owner, one that has not. */
void lft_read_free(struct lft_read *r);

#endif
