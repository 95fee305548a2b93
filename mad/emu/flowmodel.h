/*
 * The emulator's flow-level traffic model: a pure function from flows
 * (demand, the links they cross, the VL on each), link capacities to
 * per-flow rates, and for each link whether data waits to cross it.
 * mad/emu/emu_flow.c routes flows through the emulated devices' LFTs and
 * SL-to-VL tables, calls this, and counts the PMA counters from it.
 *
 * Links.  A link is anything with a capacity in bytes/s that flows cross
 * in order: the output port of a CA or switch (its active width x speed),
 * and, last on every path, the destination CA's sink (how fast the host
 * takes data off the wire; by default the link's own rate).  The input
 * buffer of the node at the far end of path link i, for the VL the flow
 * uses on that link, is buffer (link i, VL); a flow's last link (the
 * sink) has no buffer after it.  A CA's send queues are per QP: flows of
 * one host never block one another at the source.
 *
 * The model, in three rules.
 *  1. Max-min fair sharing of every link among the flows that cross it,
 *     each flow asking for at most its demand (progressive filling: all
 *     rates grow together, a flow stops at its demand or when a link it
 *     crosses is full).  VL arbitration is taken to serve the flows of a
 *     link fairly whatever their VL (equal weights, no high-priority
 *     table), so a link's share does not depend on the VLs.
 *  2. Head-of-line blocking.  A flow that does not get its demand stalls:
 *     at its bottleneck link k (a full link where it has the largest
 *     share), its packets fill the input buffers before that link (path
 *     buffers 0 .. k-1) and drain at its rate.  A buffer is one FIFO: the
 *     flows in it leave in the proportions they arrive in, their demands.
 *     So every other flow through one of those buffers (same link, same
 *     VL) waits behind the stalled one's packets and gets at most its
 *     demand times the stalled flow's rate / demand: the congestion tree.
 *     With equal demands, that is the stalled flow's rate.  A flow so held
 *     stalls in turn at that buffer (path link m feeding it), fills its
 *     own buffers 0 .. m and holds the flows in them the same way: the
 *     tree spreads upstream.  A flow on another VL of the same link has
 *     its own buffer and credits and is not held.  Held flows leave
 *     capacity to others: rule 1 runs again with the held rates as
 *     demands, until nothing changes (holds only lower a flow's cap, so
 *     this ends; at most FM_MAX_ROUNDS rounds).
 *  3. Waiting.  A link has waiting data when a stalled flow waits at it:
 *     a flow bottlenecked at path link k waits at links 0 .. k, one held
 *     at the buffer after path link m at links 0 .. m.  Such a link sends
 *     in every tick it can and stands idle with data for the rest, the
 *     share 1 - sent / capacity of the time: what PortXmitWait counts.
 *     A link fully used never waits, however much is offered to it.
 *
 * The FIFO proportions are those of a source that spreads its packets
 * over destinations by weight (a traffic generator); hosts that serve
 * their QPs round robin would send equal packet rates instead, which the
 * model gives only when the demands are equal.
 *
 * What it cannot show: transients (rates are the steady state of the
 * flows present; a change takes effect at once), packet-level effects
 * (the parking-lot unfairness of per-input-port arbitration: every flow
 * of a full link gets the same share here, where a switch serving its
 * input ports in turn gives a flow alone on its input port more), VL
 * arbitration weights and priorities, credit loops and deadlock, loss,
 * latency, buffer sizes (a buffer is either free or held), congestion
 * control (FECN/BECN, throttling).
 */
#ifndef IBSMD_FLOWMODEL_H
#define IBSMD_FLOWMODEL_H

#include <stddef.h>
#include <stdint.h>

#define FM_NVL 16		/* VLs a buffer key can name (0-15) */
#define FM_MAX_ROUNDS 64	/* rule 2's rounds, at most */
#define FM_EPS 1.0		/* bytes/s: rates closer than this are equal */

/* One flow: demand in bytes/s, n links in path order and the VL on each. */
struct fm_flow {
	double demand;
	unsigned n;
	const uint32_t *link;
	const uint8_t *vl;
};

/* Per flow: its rate, and the last path link where it waits (-1: none). */
struct fm_rate {
	double rate;
	int wait_to;
};

/*
 * Solves the model: cap[n_links] capacities (bytes/s), flows[n_flows]
 * (a flow with n = 0 or demand <= 0 gets rate 0).  Fills out[n_flows];
 * when sent and waits are not NULL, also sent[l] (bytes/s crossing link
 * l) and waits[l] (1 when data waits at l).  Returns 0, or -1 with a
 * reason in err (a link index out of range, a VL above 15, no memory).
 */
int fm_solve(uint32_t n_links, const double *cap, uint32_t n_flows,
	     const struct fm_flow *flows, struct fm_rate *out, double *sent,
	     uint8_t *waits, char *err, size_t errlen);

/* The share of ticks a link stands idle with data: 1 - sent / cap (0 when
 * nothing waits or the capacity is 0). */
double fm_wait_share(double sent, double cap, int waits);

#endif
