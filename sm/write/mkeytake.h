/*
 * Ports with another SM's M_Key (sm/model/mkeyrec.h), on a heavy sweep's
 * discovery before the master configures it:
 *
 *  - a port whose PortInfo shows a key that is not the SM's (another SM's
 *    lease is over: ProtectBits 0, the key kept, IBA vol. 1 14.2.4.2) is
 *    taken over: one PortInfo Set carrying that key writes the SM's key,
 *    level and lease (security.m_key; with M_Key off: 0, 0, 0), the rest
 *    of PortInfo as read, no state change;
 *  - a port that shows M_Key 0 with ProtectBits above 0 hid its key (a
 *    level-1 Get with a wrong key, 14.2.4.1): the same Set goes with the
 *    SM's key -- it passes when the port held that key or none; when it
 *    is dropped (a violation, which starts the port's lease timer) the
 *    port refuses the SM's Sets: listed with its lease as read;
 *  - a port the neighbour map names across an up link of a node found,
 *    that never answered (levels 2 and 3 drop every SMP with a wrong
 *    key): listed with the policy's lease; the ports the map names beyond
 *    it get one NodeInfo Get each (a probe, unanswered when their key is
 *    not the SM's: that violation starts their lease timer, 14.2.4.2, so
 *    that they are free with it rather than one lease after it) and are
 *    listed when they do not answer.
 *
 * At levels 2 and 3 an up port whose far end neither the discovery nor
 * the map knows (a new cable between keyed devices) is asked again with
 * the keys of the devices that have such a port (mkeytake.c, new_links).
 *
 * The ports that refuse are left out of the discovery (discovery_compact)
 * so that no write is planned to them: the sweep is not made to fail or
 * repeat by them; they are tried again at later sweeps.
 */
#ifndef IBSMD_MKEYTAKE_H
#define IBSMD_MKEYTAKE_H

#include <stdint.h>

#include "mad/txn.h"
#include "sm/discover/sweep.h"
#include "sm/model/mkeyrec.h"
#include "sm/model/mkeys.h"
#include "sm/model/neighbors.h"

struct mktake;
typedef void (*mktake_fn)(void *arg, struct mktake *x);

struct mktake_stats {
	uint32_t taken;		/* ports that now hold the SM's key */
	uint32_t refused;	/* ports that dropped the Set */
	uint32_t silent;	/* ports the map names that never answered, newly listed */
	uint32_t probed;	/* Gets to the ports the map names beyond them */
	uint32_t link_tries;	/* NodeInfo across an unknown link with a guessed key */
	uint32_t links;		/* links so found, put into the map */
};

/*
 * Starts on d (which must stay valid until done() runs, or until
 * mktake_abandon()).  rec and nbrs outlive it.  lease_ms: the policy's
 * lease, for the ports whose own is hidden.  When nothing is to be sent,
 * mktake_finished() is 1 and done() never runs.  NULL: ENOMEM.
 */
struct mktake *mktake_start(struct txn_engine *txn, struct discovery *d,
			    const struct mkeys *k, struct mkey_rec *rec,
			    struct nbr_map *nbrs, uint64_t lease_ms,
			    mktake_fn done, void *arg);
int mktake_finished(const struct mktake *x);
/*
 * The SM's own port refused the first SMP of a sweep (levels 2 and 3):
 * the ports the map names beyond it get one NodeInfo Get each with the
 * key the SM derives for them, so that the lease of those with another
 * key starts with the own port's (not listed: the own port may just be
 * dead).  How many were sent.
 */
uint32_t mkprobe_local(struct txn_engine *txn, const struct nbr_map *nbrs,
		       const struct mkeys *k, struct mkey_rec *rec, uint64_t local_guid);
const struct mktake_stats *mktake_stats(const struct mktake *x);
/* Its sweep was abandoned: answers still due touch nothing; it frees itself. */
void mktake_abandon(struct mktake *x);
void mktake_free(struct mktake *x);

#endif
