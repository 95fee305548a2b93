/*
 * A new master adopting a subnet another SM configured (a handover, a
 * failover, a restart): what the devices hold becomes what the device
 * cache starts from, and the switches' unicast LFTs become the old tables
 * the routing repairs from, so that every route that still works is kept
 * and nothing that is already right is written again.
 *
 * What is taken in: the PortInfo the sweep read (every port it did not
 * infer), each end port's P_Key block 0 and every switch's LFT blocks up
 * to min(LinearFDBTop, the highest LID), the last two read here by
 * directed route.
 */
#ifndef IBSMD_ADOPT_H
#define IBSMD_ADOPT_H

#include <stdint.h>

#include "mad/txn.h"
#include "routing/engine.h"
#include "sm/write/devcache.h"
#include "sm/discover/sweep.h"

struct adopt_stats {
	uint32_t switches;	/* switches whose tables were read */
	uint32_t blocks;	/* LFT blocks read */
	uint32_t pkeys;		/* P_Key blocks read */
	uint32_t portinfos;	/* PortInfo taken from the sweep */
	uint32_t failed;	/* reads that did not come */
};

struct adopt;

/*
 * t: the tables read, sized for the fabric (LIDs assigned); entries of
 * LIDs above a switch's LinearFDBTop, or in blocks that failed, are
 * LFT_DROP.  rc is 0, or -1 (cancelled): then t is empty.  t is the
 * callee's to keep (lft_tables_free it otherwise).
 */
typedef void (*adopt_fn)(void *arg, int rc, struct lft_tables *t,
			 const struct adopt_stats *st);

/*
 * Starts reading.  d (LIDs assigned) and c must live until done runs;
 * done may run before this returns (nothing to read).  parts: the
 * partitions resolved against d's model (NULL: the default alone), so
 * that every P_Key block the sweep will want is read, not block 0 alone;
 * only read during the call.  Returns NULL on ENOMEM.
 */
struct part_model;
struct adopt *adopt_start(struct txn_engine *txn, const struct discovery *d,
			  struct devcache *c, const struct part_model *parts,
			  adopt_fn done, void *arg);
/* Frees a read that has finished (after done) or, its queries cancelled
 * first by the owner, one that has not. */
void adopt_free(struct adopt *a);

#endif
