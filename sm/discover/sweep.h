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
