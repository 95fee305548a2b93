/*
 * The in-process fabric emulator: a second backend for mad/transport.h.
 *
 * emu_new() builds emulated devices from a topology (sm/base/topo.h): every
 * node gets an SMA written from the IB specification (vol. 1, ch. 14) with
 * its own MAD encoders and decoders, so that a wrong offset in the SM's
 * codec shows up against this one.  Devices start as fresh hardware: LIDs
 * 0, cabled ports Init/LinkUp, the others Down/Polling, switch port 0
 * Active, LFTs all 0xFF, LinearFDBCap 49152, P_Key entry 0 = 0xFFFF,
 * M_Key 0 (no protection).
 *
 * emu_attach() plugs a client (an SM, later a host) into one port and
 * fills a struct mad_transport for it.  send() only queues; MADs travel
 * and answers arrive later, from the event loop, in batches.  Directed
 * route follows the spec's hop pointer rules (C14-9, C14-13: DR SMPs
 * pass only through switches, need physical LinkUp on every link, any
 * PortState); LID-routed MADs follow the programmed LFTs and need every
 * output port Active and the DLID within LinearFDBTop, or they are lost.
 * Nothing lost is ever reported to the sender: it times out, as on
 * hardware.  A PerfMgt request is answered by the destination port's PMA
 * (mad/emu/emu_pma.c), as ibsim's; SMInfo and every other non-SMP MAD go to
 * the client attached to the destination port (SMInfo only when it claims
 * IsSM), like ibsim; a
 * non-SMP MAD arrives with the length its sender gave (a GetTableResp of
 * 56 + n * record bytes), as under ibsim.  A client on a CA port is a
 * host: SA queries to its SM LID, Reports from the SM, RMPP between them
 * (mad/rmpp.h), all LID-routed through the LFTs and under the loss model.
 *
 * Every SMP passes the IBA's M_Key check first (mad/mkey.h; 14.2.4): the
 * key of a switch's port 0 governs the whole switch, a CA port's its own;
 * what ProtectBits 0-3 refuse gets no answer, counts in M_KeyViolations,
 * starts the M_KeyLeasePeriod timer (on the emulator's clock, the
 * monotonic one) and sends trap 256 to the port's MasterSMLID; a
 * TrapRepress is checked too; SMInfo, which goes to the SM on the port,
 * is not.  Devices start with M_Key 0: a PortInfo Set that passes the
 * check gives them a key (or emu_set_mkey, a key left by an SM before).  ibsim
 * checks no M_Key (DEVELOPERS.md).  Refusals are no violations of the log
 * below: a host with a wrong key is what the check is for.
 *
 * A client's MAD that only a broken SM would send (an invalid PortState
 * transition, an impossible PortInfo value, a LID-routed MAD to a LID the
 * LFTs do not reach, a directed route through a CA, ...) is refused or
 * lost as hardware would, and recorded in the violation log, which tests
 * check to be empty.  Losses made by the fault model are never violations.
 *
 * Fault and timing model, reproducible for a given seed and the same
 * sequence of calls: global loss (each packet: a request, an answer, a
 * trap), loss at chosen ports (packets arriving at the port over its
 * link), a fixed and a random latency per packet (random latency
 * reorders), dead nodes or ports, links pulled and plugged back.
 */
#ifndef IBSMD_EMU_H
#define IBSMD_EMU_H

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

#include "mad/pma.h"
#include "mad/transport.h"

struct fabric;
struct emu;

struct emu_counters {
	uint64_t received;	/* MADs clients sent */
	uint64_t answered;	/* answers the emulated SMAs produced */
	uint64_t delivered;	/* MADs handed to clients */
	uint64_t dropped;	/* lost, all reasons (the three below) */
	uint64_t dropped_fault;	/* by the loss model or a dead node/port */
	uint64_t dropped_route;	/* no path: link down, LFT, port state, hops */
	uint64_t dropped_other;	/* nobody to take it, malformed */
	uint64_t traps_sent;	/* traps the devices sent (before routing) */
	uint64_t trap_represses;	/* TrapRepress the devices took (M_Key check passed) */
	uint64_t client_reregs;	/* PortInfo:ClientReregister set on a CA port */
	uint64_t sl2vl_sets;	/* SLtoVLMappingTable Sets the SMAs took */
	uint64_t vlarb_sets;	/* VLArbitrationTable Sets the SMAs took */
	uint64_t mft_sets;	/* MulticastForwardingTable Sets the SMAs took */
};

/*
 * Builds the devices of topo (copied: topo may be freed afterwards).
 * Returns NULL with a message in err on failure.
 */
struct emu *emu_new(const struct fabric *topo, char *err, size_t errlen);
/* Frees everything; the transports it filled must not be used after. */
void emu_free(struct emu *e);

/*
 * Attaches a client to the port with GUID port_guid (a CA port GUID, or a
 * switch GUID for its port 0; 0 = port 1 of the first CA in the topology,
 * as ibsim does) and fills t: send() queues and returns 0 (-1 for a MAD
 * it cannot take: bad length, closed transport), close() detaches, and
 * the port's facts (GUID, number, LID, SM LID, state) as they are now.
 * The port claims IsSM.  Every client of one emulator must use the same
 * event base.  cb receives answers and unsolicited MADs from the loop.
 */
int emu_attach(struct emu *e, struct event_base *base, uint64_t port_guid,
	       struct mad_transport *t, mad_recv_fn cb, void *arg, char *err,
	       size_t errlen);
/* Re-reads the facts of the client's port into t (LID, SM LID, state). */
int emu_transport_refresh(struct mad_transport *t);
/* Sets or clears CapabilityMask.IsSM on a client's port. */
int emu_set_issm(struct emu *e, uint64_t port_guid, int on);

/* ---- fault and timing model ---- */

void emu_set_seed(struct emu *e, uint64_t seed);
/* Every packet is lost with this probability (percent, 0-100). */
void emu_set_loss(struct emu *e, double percent);
/*
 * Packets arriving at the port over its link are lost with this
 * probability.  guid: a node GUID with port its number, or a CA port
 * GUID with port 0.  Returns 0 or -1 (no such port).
 */
int emu_set_port_loss(struct emu *e, uint64_t guid, int port, double percent);
/* Each packet takes fixed_us plus a uniform 0..random_us more. */
void emu_set_latency(struct emu *e, uint32_t fixed_us, uint32_t random_us);
/*
 * A dead port's SMA ignores every SMP arriving through it (port 0 of a
 * node GUID: the whole node, also as a directed-route hop).  LID-routed
 * forwarding through a dead switch goes on: it is hardware.
 */
int emu_set_dead(struct emu *e, uint64_t guid, int port, int dead);
/* The port keeps its P_Key table in NVRAM (IsPKeyNVRAM), entry 0 = pkey0:
 * a table left by an earlier configuration, not the default after reset. */
int emu_set_pkey_nvram(struct emu *e, uint64_t guid, int port, uint16_t pkey0);
/* Switch sw_guid advertises HasMulticastFDBTop on port 0 (IBA 1.3). */
int emu_set_mft_top_cap(struct emu *e, uint64_t sw_guid);
/*
 * Pulls the cable of a port: both ends go Down/Polling, switches at
 * either end set PortStateChange and send trap 128 to their SM LID (if
 * their LFTs reach it).  emu_link_up plugs it back: both ends Init/LinkUp,
 * the same PortStateChange and traps.  Returns 0, or -1 for no such port
 * or no cable.
 */
int emu_link_down(struct emu *e, uint64_t guid, int port);
int emu_link_up(struct emu *e, uint64_t guid, int port);
/*
 * The switch sw_guid (0: every switch) advertises SwitchInfo
 * OptimizedSLtoVLMappingProgramming (on) or not (off, the default, as
 * ibsim): an SLtoVLMappingTable Set's modifier bit 17 then stands for
 * every input port and bit 16 for every output port, port 0 included
 * (IBA 1.2.1 14.2.5.8); one Set, counted once, writes them all.
 * Returns 0, or -1 (no such switch).
 */
int emu_set_opt_sl2vl(struct emu *e, uint64_t sw_guid, int on);
/*
 * Performance management (mad/emu/emu_pma.c): every end port's PMA (class
 * 0x04 on QP1, LID-routed) answers ClassPortInfo, PortCounters Get and
 * Set (a clear, per CounterSelect and CounterSelect2) and
 * PortCountersExtended Get, from the counters the emulator keeps per
 * port, 0 at start, moved by the traffic model below and by the calls
 * here.
 * guid/port as for emu_set_port_loss; 0, or -1 (no such port).
 *
 * emu_set_port_counter sets counter c of the port: an error counter or
 * PortXmitWait stops at its width; a data or packet counter is the 64-bit
 * value PortCountersExtended answers (PortCounters shows it saturated at
 * 0xFFFFFFFF).  The data counters count units of 4 octets.
 */
int emu_set_port_counter(struct emu *e, uint64_t guid, int port,
			 enum pma_counter c, uint64_t value);
/* PortRcvData (emu_set_port_counter with PMC_RCV_DATA); adding to both. */
int emu_set_port_rcv_data(struct emu *e, uint64_t guid, int port,
			  uint64_t value);
int emu_add_port_data(struct emu *e, uint64_t guid, int port, uint64_t rcv,
		      uint64_t xmit);
/*
 * The PMA CapabilityMask ClassPortInfo answers for node node_guid's ports
 * (default PMA_CAP_EXT_WIDTH | PMA_CAP_XMIT_WAIT, as ibsim's CAs).  Without
 * PMA_CAP_EXT_WIDTH and PMA_CAP_EXT_WIDTH_NOIETF, PortCountersExtended is
 * refused (status 0x0c); without PMA_CAP_XMIT_WAIT, PortXmitWait reads 0.
 * 0, or -1 (no such node).
 */
int emu_set_pma_capmask(struct emu *e, uint64_t node_guid, uint16_t capmask);
/* PerfMgt requests the PMAs answered (every method and attribute, errors too). */
uint64_t emu_pma_gets(const struct emu *e);
/* The most packets one loop callback handles before yielding (default 2048;
 * a callback also yields once it took 5 ms, as the daemon's pump does). */
void emu_set_max_batch(struct emu *e, unsigned n);

/*
 * ---- traffic (mad/emu/emu_flow.c; the model: mad/emu/flowmodel.h) ----
 *
 * A flow sends demand bytes/s (the octets PortXmitData counts: LRH to
 * ICRC) from a CA port to a DLID on an SL, in packets of EMU_FLOW_PKT
 * octets.  It follows what the SM wrote: the source port's SLtoVL table,
 * each switch's LFT and its SLtoVL table for the (input, output) pair;
 * every link on the way LinkUp and both ends Active, each VL below the
 * output port's OperationalVLs and not 15 (a data packet mapped to VL 15
 * is dropped), and the DLID an end port's (a switch's port 0 takes no
 * flow).  A flow that cannot go has rate 0
 * (emu_flow_rate: -1).  Routes and rates are found again at every
 * emu_flow_advance, so a new LFT or SLtoVL table takes effect there.
 * A link's capacity is its active width times the data rate of a lane at
 * its active speed (after line coding): SDR 2, DDR 4, QDR 8, FDR 13.64,
 * EDR 25, HDR 50, NDR 100 Gb/s.
 *
 * emu_flow_advance(t, s) lets s seconds of emulated time pass: every port
 * a flow crosses counts PortXmitData (4-octet units) and PortXmitPkts, the
 * far end PortRcvData and PortRcvPkts, fractions carried to the next call;
 * a port where data waits (the model's rule 3) counts PortXmitWait:
 * (1 - sent / capacity) x s x ticks per second, a tick being the IBA's
 * symbol time, one octet on one lane (PortSamplesControl Tick 0: 4 ns at
 * SDR, 1 ns at QDR), so ticks per second = the lane's data rate / 8.
 * A port sending at its full rate never counts PortXmitWait, however much
 * waits behind it: the switch port facing a hot-spot counts it only while
 * the host takes less than the link's rate (emu_flow_set_sink), as a host
 * whose PCIe is slower than its link does.
 */
#define EMU_FLOW_PKT 2072	/* LRH 8 + BTH 12 + 2048 payload + ICRC 4 */
struct emu_traffic;
/* The traffic of emulator e (no flow yet), NULL: no memory.  Free it
 * before e; one per emulator. */
struct emu_traffic *emu_traffic_new(struct emu *e);
void emu_traffic_free(struct emu_traffic *t);
/* A new flow; its id (>= 0), or -1 (no such CA port, SL above 15, demand < 0). */
int emu_flow_add(struct emu_traffic *t, uint64_t src_port_guid, uint32_t dlid,
		 double demand, uint8_t sl);
/* Stops flow id (its id is not reused).  0, or -1: no such flow. */
int emu_flow_stop(struct emu_traffic *t, int id);
/*
 * The host's side of a repath or unpath notice (ibsmd(8) NOTICES): every
 * running flow of the CA port src_port_guid to dlid moves to sl, as a host
 * agent moves its QPs.  Returns how many moved, or -1 (SL above 15).
 */
int emu_flow_move(struct emu_traffic *t, uint64_t src_port_guid, uint32_t dlid,
		  uint8_t sl);
/* How fast CA port ca_port_guid takes data in (bytes/s; 0: its link's
 * capacity, the default).  0, or -1: no such CA port, negative. */
int emu_flow_set_sink(struct emu_traffic *t, uint64_t ca_port_guid, double bytes_per_s);
/* Lets seconds (>= 0) of emulated time pass (above).  0, or -1 (no memory). */
int emu_flow_advance(struct emu_traffic *t, double seconds);
/*
 * Time passes with the loop's clock: every period_ms on base, the time
 * since the last tick (CLOCK_MONOTONIC) is advanced, so a daemon on the
 * same loop (its performance manager, its dFtree interval) sees counters
 * grow as on hardware.  period_ms 0 stops it.  0, or -1 (no memory).
 * emu_traffic_run_s: the seconds its ticks advanced so far.
 */
int emu_traffic_run(struct emu_traffic *t, struct event_base *base,
		    unsigned period_ms);
double emu_traffic_run_s(const struct emu_traffic *t);
/* Flow id's rate at the last emu_flow_advance (bytes/s), -1: not routed,
 * stopped or no such flow. */
double emu_flow_rate(const struct emu_traffic *t, int id);
/* A port's capacity in bytes/s (its active width x speed), -1: no such port. */
double emu_port_capacity(const struct emu *e, uint64_t guid, int port);
/* A port's PMA counter now (the 64-bit value), -1: no such port/counter. */
int emu_port_counter(const struct emu *e, uint64_t guid, int port,
		     enum pma_counter c, uint64_t *value);

/* ---- inspection (guid/port as for emu_set_port_loss); -1: no such port ---- */

int emu_port_state(const struct emu *e, uint64_t guid, int port);
int emu_port_phys_state(const struct emu *e, uint64_t guid, int port);
int emu_port_lid(const struct emu *e, uint64_t guid, int port);
int emu_port_smlid(const struct emu *e, uint64_t guid, int port);
int emu_port_lmc(const struct emu *e, uint64_t guid, int port);
int emu_port_oper_vls(const struct emu *e, uint64_t guid, int port);
int emu_port_neighbor_mtu(const struct emu *e, uint64_t guid, int port);
int emu_port_vl_high_limit(const struct emu *e, uint64_t guid, int port);
int emu_port_hoq_life(const struct emu *e, uint64_t guid, int port);
/* The P_Key table entry, or -1. */
int emu_port_pkey(const struct emu *e, uint64_t guid, int port, unsigned index);
/*
 * A port's M_Key state as the device holds it (mad/mkey.h): the key,
 * ProtectBits, M_KeyLeasePeriod, M_KeyViolations, and the milliseconds
 * left on its lease timer (0: stopped), read at the emulator's clock (an
 * expired lease has cleared ProtectBits).  A switch's ports all show port
 * 0's, which governs its SMA.  0, or -1 (no such port).
 */
struct emu_mkey {
	uint64_t key;
	uint8_t protect;
	uint16_t lease_s, violations;
	uint64_t lease_left_ms;
};
int emu_port_mkey(struct emu *e, uint64_t guid, int port, struct emu_mkey *m);
/*
 * Gives a port (a switch: its port 0, whichever port is named) the key,
 * ProtectBits and M_KeyLeasePeriod an earlier SM left there, as a device
 * found keyed: the lease timer stopped, M_KeyViolations kept.  0, or -1
 * (no such port, protect above 3).
 */
int emu_set_mkey(struct emu *e, uint64_t guid, int port, uint64_t key,
		 uint8_t protect, uint16_t lease_s);
/*
 * Called after every LinearForwardingTable Set the emulator applied, and
 * every secondary-LFT (XLIDLFT) Set (the switch's node GUID, the block),
 * so a test can look at every state the switches pass through; NULL: none.
 */
typedef void (*emu_lft_hook_fn)(void *ctx, struct emu *e, uint64_t sw_guid,
				uint32_t block);
void emu_on_lft_set(struct emu *e, emu_lft_hook_fn fn, void *ctx);
/* A switch's LFT entry for lid (0xff = none), or -1 if not a switch. */
int emu_lft_entry(const struct emu *e, uint64_t sw_guid, uint32_t lid);
/*
 * The SLtoVLMappingTable a device holds, decoded: vl[sl] for SL 0..15,
 * of a switch's (in, out) pair (port 0 included) or a CA's port (in =
 * out = the port).  A table never set reads as the identity SL i -> VL i,
 * as ibsim's.  0, or -1 (no such node or port).
 */
int emu_sl2vl(const struct emu *e, uint64_t guid, int in, int out,
	      uint8_t vl[16]);
/*
 * A port's VLArbitrationTable block (1: low priority entries 0-31, 2: low
 * 32-63, 3: high 0-31, 4: high 32-63), decoded: vl[i] and weight[i] of
 * its 32 entries (all 0 while never set).  Returns the table's capacity
 * in entries (VLArbLowCap or VLArbHighCap), or -1 (no such port/block).
 */
int emu_vlarb(const struct emu *e, uint64_t guid, int port, int block,
	      uint8_t vl[32], uint8_t weight[32]);
int emu_lft_top(const struct emu *e, uint64_t sw_guid);
/*
 * A switch's MFT entry of MLID mlid (0xC000..), ports 0..63 in *ports
 * (bit p: port p).  0, or -1: no such switch, MLID past MulticastFDBCap.
 */
int emu_mft_entry(const struct emu *e, uint64_t sw_guid, uint32_t mlid,
		  uint64_t *ports);
/* A switch's SwitchInfo MulticastFDBTop, -1: no such switch. */
int emu_mft_top(const struct emu *e, uint64_t sw_guid);
int emu_port_state_change(const struct emu *e, uint64_t sw_guid);
/* A switch's SwitchInfo LifeTimeValue, -1: no such switch. */
int emu_switch_lifetime(const struct emu *e, uint64_t sw_guid);
/* Packets in flight. */
uint32_t emu_pending(const struct emu *e);
void emu_get_counters(const struct emu *e, struct emu_counters *c);

/* The violation log: how many were seen, and the text of the first ones. */
uint32_t emu_violations(const struct emu *e);
const char *emu_violation(const struct emu *e, uint32_t i);
/* For vendor attribute handlers: records a violation. */
void emu_add_violation(struct emu *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- vendor extension point ---- */

/* One SMP for an attribute handler. */
struct emu_smp {
	uint32_t node;		/* node index, as emu_node_index() gives */
	uint64_t node_guid;
	uint8_t node_type;	/* 1 CA, 2 switch, 3 router */
	uint8_t nports;
	uint8_t in_port;	/* the port the SMP arrived on */
	uint8_t method;		/* 0x01 Get, 0x02 Set */
	int lid_routed;
	uint16_t attr;
	uint32_t attr_mod;
	uint8_t *data;		/* 64 bytes: the request's, then the answer's */
};

/*
 * Returns the MAD status of the answer (0, 0x1c, ...), or -1 to send no
 * answer.  The handler keeps its own per-node state (indexed by s->node).
 */
typedef int (*emu_attr_fn)(void *ctx, struct emu *e, struct emu_smp *s);

/*
 * Routes SMP Get/Set of attr_id to fn before the built-in attributes.
 * Returns 0, or -1 when the table is full.
 */
int emu_register_attr(struct emu *e, uint16_t attr_id, emu_attr_fn fn,
		      void *ctx);
/* The node index of a node GUID, or UINT32_MAX. */
uint32_t emu_node_index(const struct emu *e, uint64_t guid);

/* ---- extended LIDs (mad/xlid.h, ibsmd(8) "Extended LIDs"; mad/emu/emu_xlid.c) ---- */

/*
 * Devices start without the extension (XLIDCap and XLIDLFT answer 0x0c).
 * emu_xlid_set makes one capable: guid a node GUID or a CA port GUID; cap
 * a switch's SecondaryLFTCap (a multiple of 64 up to 196608; ignored on a
 * CA), or EMU_XLID_OFF to take the extension away (its state forgotten).
 * emu_xlid_all does it to every device.  Returns 0, or -1 (no such GUID,
 * bad cap).  A capable switch forwards an LRH whose DLID is a vLID through
 * its secondary LFT (Enabled; an entry 0xff or an index at/above Top: its
 * DefaultPort; 0xff there: lost); a capable CA port takes a vLID DLID that
 * is its PortVLID, Enabled and Active.  DLIDs and SLIDs travel as 18-bit
 * values in struct mad_addr.lid; a port whose PortInfo LID is 0 sends from
 * its PortVLID, and an answer to a vLID leaves from that vLID.
 */
#define EMU_XLID_OFF UINT32_MAX
int emu_xlid_set(struct emu *e, uint64_t guid, uint32_t cap);
int emu_xlid_all(struct emu *e, uint32_t cap);

/* XLIDCap fields, as the emulator's own decoder reads them. */
struct emu_xcap {
	int supported, enabled;
	uint32_t lft_cap, lft_top;
	uint8_t default_port;
	uint32_t port_vlid;
};
/* A device's XLIDCap now (port: a CA's port; a CA port GUID names its own); -1: not capable. */
int emu_xlid_cap_get(const struct emu *e, uint64_t guid, int port,
		     struct emu_xcap *c);
/* A capable switch's secondary-LFT entry for vlid (0xff = none), or -1. */
int emu_xlid_entry(const struct emu *e, uint64_t sw_guid, uint32_t vlid);
/* Secondary-LFT blocks a capable switch holds (those not all 0xff), or -1. */
int emu_xlid_blocks(const struct emu *e, uint64_t sw_guid);

/*
 * The emulator's own decoders, the ones its SMAs and forwarding use,
 * exported for test_xlid.c to hold against mad/xlid.c.  Same contracts
 * as xlid_cap_decode, xlid_lft_check, xlid_lrh_get, xlid_pr_get.
 */
int emu_xlid_cap_decode(const uint8_t *d, struct emu_xcap *c, char *err,
			size_t errlen);
void emu_xlid_cap_encode(const struct emu_xcap *c, uint8_t *d);
int emu_xlid_lft_check(uint32_t block, const uint8_t *d, unsigned nports,
		       uint32_t cap, char *err, size_t errlen);
uint16_t emu_xlid_crc(const uint8_t *d, size_t n);
void emu_xlid_lrh_get(const uint8_t *lrh, uint32_t *dlid, uint32_t *slid);
void emu_xlid_pr_get(const uint8_t *pr, uint32_t *dlid, uint32_t *slid);

#endif
