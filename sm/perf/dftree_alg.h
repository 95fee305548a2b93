/*
 * dFtree's detection of end-point hot-spots and their contributors: the
 * thesis's Paper IV ("dFtree: A Fat-tree Routing Algorithm using Dynamic
 * Allocation of Virtual Lanes to Alleviate Congestion in InfiniBand
 * Networks"), Equations 1-3 and Algorithm 1.  Pure: no I/O, no loop, no
 * daemon.  The owner on the loop (sm/dftree.c) reads, every interval,
 * PortXmitWait and PortXmitData (mad/pma.h) of every switch port that
 * faces a CA port and of every CA port, turns each port's growth into
 * rates with dft_port_rates, fills a struct dft_input, calls dft_step and
 * sends the notices it lists (68 UnPath, 69 RePath, traps/notice.h).
 *
 * The rates (Equations 1-3), per port over the interval:
 *   congestion  = delta PortXmitWait / interval      (ticks per second)
 *   bandwidth   = 4 x delta PortXmitData / interval  (octets per second:
 *                 PortXmitData counts units of 4 octets)
 *   utilisation = bandwidth / the link's data rate (dft_link_rate)
 *
 * One step, exactly Algorithm 1's decisions (threshold and bound from
 * struct dft_params; every comparison strict):
 *  - a switch port facing a CA port with congestion > threshold makes that
 *    CA port a hot-spot (if it is not one already); then every other CA
 *    port with congestion > threshold and utilisation < bound that is not
 *    yet a contributor of that hot-spot becomes one and gets one RePath
 *    naming the hot-spot's LID and the slow SL.  A hot-spot that lasts
 *    takes new contributors the same way at every step.  So congestion
 *    equal to the threshold is not over it, and utilisation equal to the
 *    bound (0.5 by default) is not below it: such a port is no
 *    contributor (two senders sharing one destination fairly, ~50% each,
 *    are not marked).
 *  - a switch port facing a hot-spot with congestion < threshold clears
 *    the hot-spot: each of its contributors gets one UnPath naming the
 *    hot-spot's LID and the fast SL, and is no longer a contributor.
 *  - congestion equal to the threshold on a hot-spot's switch port does
 *    neither (Algorithm 1's `else if congestion < Threshold`): the
 *    hot-spot and its contributors stay, and it takes no new
 *    contributors at that step (those are taken only when over).
 * Decisions the algorithm leaves open:
 *  - ports are CA ports, known by port GUID and LID together: the same
 *    GUID at another LID is another port (its old LID reached nothing
 *    any more).  A CA port is never its own contributor.
 *  - contributors are kept per hot-spot: a CA port that qualifies while
 *    two CA ports are hot-spots is a contributor of each, with one RePath
 *    for each (naming that hot-spot's LID: a host moves only its QPs to
 *    that LID) and one UnPath when each clears.  The SM cannot see flows,
 *    so, as in the algorithm, every qualifying CA port is told, and one
 *    that sends no flow to the hot-spot changes nothing.
 *  - a hot-spot whose switch port is missing from the input (its link
 *    went down, its counters could not be read, its LID changed) is
 *    cleared as if it had fallen below: UnPaths to its contributors.
 *  - a contributor missing from the input (gone from the fabric, unread,
 *    another LID) is dropped without a notice: its old LID reaches
 *    nothing to tell.  It becomes a contributor again, with a new
 *    RePath, if it comes back and qualifies.
 * The state holds at most one hot-spot per switch port in the input and
 * at most one contributor per other CA port in the input per hot-spot:
 * it is bounded by the input's size at every step.  A step costs
 * O((sw + ca) log(sw + ca)) to index the input, plus, for each hot-spot
 * over the threshold, O(ca log contributors) to find new contributors
 * and a move of its sorted contributors for each new one.
 *
 * Order of the actions: first the hot-spots missing from the input (in
 * the order they appeared), then the input's switch ports in their order;
 * a new hot-spot's RePaths follow its appearance in the CA ports' order.
 */
#ifndef IBSMD_DFTREE_ALG_H
#define IBSMD_DFTREE_ALG_H

#include <stddef.h>
#include <stdint.h>

/*
 * The data rate of a link in octets per second, from PortInfo's
 * LinkWidthActive (1X 0x01, 4X 0x02, 8X 0x04, 12X 0x08, 2X 0x10: 1, 4,
 * 8, 12, 2 lanes) and its speed as the fabric model keeps it
 * (sm/base/topo.h: LinkSpeedActive in the low nibble, SDR 1, DDR 2, QDR
 * 4; LinkSpeedExtActive in the high nibble, FDR 1, EDR 2, HDR 4, NDR 8,
 * which when non-zero is the active speed).  Per lane: SDR 2.5, DDR 5,
 * QDR 10 Gb/s signalling with 8b/10b (2, 4, 8 Gb/s of data); FDR
 * 14.0625 and EDR 25.78125 Gb/s with 64b/66b (13.636..., 25 Gb/s of
 * data); HDR and NDR 50 and 100 Gb/s of data.  So 4X QDR is 32 Gb/s,
 * 4e9 octets per second.  0 for a width or speed none of these (a link
 * not up, or an encoding this table does not know).
 */
double dft_link_rate(uint8_t width_active, uint8_t speed_active);

struct dft_rates {
	double congestion;	/* PortXmitWait ticks per second */
	double bandwidth;	/* octets per second */
	double utilisation;	/* bandwidth / link rate */
};

/*
 * Equations 1-3 from a port's growth over the interval: d_xmit_wait
 * ticks of PortXmitWait and d_xmit_data units (4 octets) of
 * PortXmitData in interval_s seconds on a link of link_rate octets per
 * second (dft_link_rate).  0 and *r filled; -1 and *r untouched when
 * interval_s is not above 0 or link_rate is not above 0: the port cannot
 * be judged at this step (leave it out of the input).
 */
int dft_port_rates(uint64_t d_xmit_wait, uint64_t d_xmit_data,
		   double interval_s, double link_rate, struct dft_rates *r);

/*
 * A switch port facing a CA port: that CA port, and the switch port's
 * congestion.  A congestion or utilisation that is NaN is neither over
 * nor below anything: it changes nothing.
 */
struct dft_sw_port {
	uint64_t ca_guid;	/* the CA port's port GUID */
	uint16_t ca_lid;	/* its LID */
	double congestion;
};

/* A CA port, its own counters. */
struct dft_ca_port {
	uint64_t guid;		/* port GUID */
	uint16_t lid;
	double congestion;
	double utilisation;
};

/* Each GUID at most once in sw[] and at most once in ca[]. */
struct dft_input {
	const struct dft_sw_port *sw;
	size_t n_sw;
	const struct dft_ca_port *ca;
	size_t n_ca;
};

struct dft_params {
	double threshold;	/* PortXmitWait ticks per second, >= 0 */
	double utilisation;	/* the contributor bound, > 0 */
	uint8_t fast_sl;	/* 0-15: UnPath */
	uint8_t slow_sl;	/* 0-15: RePath */
};

struct dft_contrib {
	uint64_t guid;
	uint16_t lid;
	uint64_t since;		/* the step's now when it became one */
};

struct dft_hotspot {
	uint64_t guid;		/* the CA port's */
	uint16_t lid;
	uint64_t since;		/* the step's now when it appeared */
	struct dft_contrib *contrib;	/* sorted by GUID */
	size_t n_contrib, cap_contrib;
};

/*
 * The hot-spots between steps, in the order they appeared; all zero is
 * empty (or dft_state_init).  The owner reads it (ibsmctl hotspots) and
 * changes it only through dft_step and dft_state_free.
 */
struct dft_state {
	struct dft_hotspot *hot;
	size_t n_hot, cap_hot;
};

enum dft_notice_kind {
	DFT_UNPATH = 68,	/* TRAP_UNPATH: back to the fast SL */
	DFT_REPATH = 69,	/* TRAP_REPATH: onto the slow SL */
};

/* One notice to send: to the CA port (to_guid, to_lid), naming hot_lid and sl. */
struct dft_notice {
	enum dft_notice_kind kind;
	uint64_t to_guid;
	uint16_t to_lid;
	uint64_t hot_guid;
	uint16_t hot_lid;
	uint8_t sl;
};

enum dft_event_kind {
	DFT_APPEARED,		/* over the threshold */
	DFT_CLEARED,		/* below it */
	DFT_VANISHED,		/* cleared: its switch port missing from the input */
};

/* A hot-spot that appeared or cleared at this step, for the log. */
struct dft_event {
	enum dft_event_kind kind;
	uint64_t guid;
	uint16_t lid;
	uint64_t since;		/* when it appeared */
	double congestion;	/* its switch port's (0 when vanished) */
	size_t n_contrib;	/* appeared: the contributors it took at this
				 * step; cleared, vanished: how many got an
				 * UnPath */
};

/*
 * What one step decided, in order (see above); dft_step empties it
 * first and grows it as needed.  All zero is empty; dft_actions_free.
 */
struct dft_actions {
	struct dft_notice *notice;
	size_t n_notice, cap_notice;
	struct dft_event *event;
	size_t n_event, cap_event;
};

void dft_state_init(struct dft_state *s);
void dft_state_free(struct dft_state *s);
void dft_actions_free(struct dft_actions *a);

/*
 * The hot-spot at lid (PathRecords towards it answer the slow SL), or
 * NULL; O(hot-spots).  Hot-spots are kept at the LID the input gave (the
 * CA port's base LID): with an LMC the caller asks for the DLID's base.
 */
const struct dft_hotspot *dft_hotspot_by_lid(const struct dft_state *s,
					     uint16_t lid);

/*
 * One step of Algorithm 1 at now (the caller's clock, kept as since;
 * sm/dftree.c shows it as a time of day).  0: a's notices are to be
 * sent and s holds the hot-spots after them.  -1 with errno:
 *  EINVAL  a parameter out of its range, or a GUID twice in in->sw or
 *          in->ca; s and a unchanged (a emptied);
 *  ENOMEM  s and a agree on every decision taken before memory ran out
 *          (send a's notices; the rest is decided at the next step).
 */
int dft_step(struct dft_state *s, const struct dft_input *in,
	     const struct dft_params *p, uint64_t now, struct dft_actions *a);

#endif
