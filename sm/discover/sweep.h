/*
 * Discovery: an asynchronous, pipelined directed-route walk of the fabric.
 * A switch's neighbours are queried as soon as its PortInfo says a link
 * is up, not level by level; the transaction table bounds what is in
 * flight.  The result is a fresh fabric model plus the raw PortInfo and
 * SwitchInfo blocks the configuration step starts its Sets from.
 */
#ifndef IBSMD_SWEEP_H
#define IBSMD_SWEEP_H

#include <stdint.h>

#include "mad/smp.h"
#include "mad/txn.h"
#include "sm/base/fabric.h"

struct frontier {
	uint32_t node;
	int local_port;		/* the port it was reached through */
};

struct discovery {
	struct fabric f;
	uint8_t (*pi_raw)[SMP_DATA_SIZE];	/* per port index: PortInfo as read */
	uint8_t (*si_raw)[SMP_DATA_SIZE];	/* per node index: SwitchInfo as read */
	uint32_t raw_ports_cap, raw_nodes_cap;
	uint32_t unresponsive;	/* ports/nodes left out: never answered */
	uint32_t mads;		/* requests this discovery submitted */
	uint32_t outstanding;
	int rounds;		/* extra rounds for queries that failed */
	int max_rounds;
	struct pending_q *retry;	/* queries to ask again next round */
	uint32_t *inferred;	/* ports whose PortInfo is to be inferred */
	uint32_t n_inferred, cap_inferred;
	struct frontier *next;	/* nodes found, explored when the wave ends */
	uint32_t n_next, cap_next;
	struct txn_engine *txn;
	const struct discovery *prev;	/* the last sweep's, while discovering */
	void (*done)(void *arg, struct discovery *d);
	void *done_arg;
	int failed;		/* the local port itself did not answer */
	int cancelled;
	/*
	 * NodeInfo Gets across a port in LinkUp that got no answer in any
	 * round: their directed routes, for the M_Key judgement
	 * (sm/discover/mkcut.h): a device keyed at ProtectBits 2 or 3 drops
	 * a Get whose key it does not hold.
	 */
	struct disc_lost {
		uint8_t hops;
		uint8_t path[FAB_MAX_HOPS + 1];
	} *lost;
	uint32_t n_lost, cap_lost;
	/*
	 * spare_keyless (the owner's, discovery_spare_keyless()): once the
	 * SM's own port reads a non-zero M_Key at ProtectBits 2 or 3 and a
	 * MasterSMLID not its own (another SM keyed this fabric: keyed_away),
	 * a NodeInfo whose target the SM cannot name -- its SMP would carry
	 * M_Key 0 and be dropped as a violation, a trap 256 and a warning at
	 * that master -- is not sent but counted lost (spared).
	 */
	int spare_keyless, keyed_away;
	uint32_t spared;
};

/*
 * Starts discovery from the local port.  prev, the last sweep's model (or
 * NULL), lets Active links skip a PortInfo; it must stay valid until
 * done() runs.  done() runs on the loop when no query is left.  Returns
 * NULL on ENOMEM.
 */
struct discovery *discovery_start(struct txn_engine *txn, int extra_rounds,
				  const struct discovery *prev,
				  void (*done)(void *, struct discovery *),
				  void *arg);
void discovery_free(struct discovery *d);
/* Sets d->spare_keyless (before the first answer comes). */
void discovery_spare_keyless(struct discovery *d, int on);
/*
 * Removes nodes and ports that never answered (and links to them), so
 * that every later stage sees only what can be configured.  Returns 0
 * or -1 (ENOMEM).
 */
int discovery_compact(struct discovery *d);
/* The DR path to a port's node; CA ports are reached through their own link. */
int discovery_port_path(const struct fabric *f, uint32_t port, uint8_t *path);
/* Reads a PortInfo attribute into the model's port (clears FPORT_INFERRED). */
void discovery_decode_portinfo(struct fab_port *p, const uint8_t *data);

#endif
