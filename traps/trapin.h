/*
 * Traps in: what the SM does with a Trap(Notice) that reaches it.
 *
 * Every trap is answered with a TrapRepress (same TID, back to the
 * sender), counted by its number, and logged at most TRAPIN_LOG_BURST
 * lines per TRAPIN_LOG_WINDOW_MS (sm/base/log.h's limiter: the rest is
 * counted as suppressed and summed up in one "N similar messages
 * suppressed" line).  Then trapin_decide(), a pure function of the
 * model, the trap and where it came from, says what it is worth:
 *
 *  - a trap whose IssuerLID is not the port it came from (the SLID of a
 *    LID-routed trap and the IssuerLID are not one port of the model, or
 *    not the same LID when there is no model) is spoofed: counted,
 *    nothing else;
 *  - 128 (link state change) from a switch of the model, and 144 (local
 *    changes) from a port of the model, claim a change: the claim is
 *    checked with one Get to the device itself -- the switch's SwitchInfo
 *    (is PortStateChange set?), the port's PortInfo (does its
 *    CapabilityMask differ from the model's?) -- and only a device that
 *    confirms it (or no longer answers) asks for a heavy sweep.  128 from
 *    a CA, or from a LID the model does not hold, is counted as having an
 *    unknown issuer;
 *  - 129-131, 145, 256-259 and the rest (vendor traps too): logged and
 *    counted; a 257 (Bad P_Key) from a port of the model is counted by
 *    that port too (the pkey_violation hook); a 256 (Bad M_Key, IBA vol. 1
 *    14.2.4.1) from a port of the model has its DataDetails decoded
 *    (mad/mkey.h), is counted by that port (trapin_stats.mkey_viol) and
 *    named in a log line of its own (the port, the SMP that carried the
 *    bad key: LIDADDR, method, attribute, modifier, M_Key), and is told to
 *    the mkey_violation hook.
 *
 * The TrapRepress carries the M_Key the SM holds for the issuing port
 * (the repress_key hook): a port whose ProtectBits are set discards a
 * TrapRepress with another key (14.2.4.1) and would send the trap again.
 * When the SM holds none (no model yet), the trap's own M_Key goes back,
 * except in a trap 256 (see trapin.c, repress()).
 * A trap 256 is not repressed when the key the SM would send is the one
 * the trap says was refused (not 0, or 0 refused in a TrapRepress: the
 * SM's own SMP, or its own repress, to a port with another SM's key):
 * that repress would be one more violation and one more trap 256,
 * without end (counted in mkey_unrepressed).
 *
 * Bursts: a claim that arrives while a heavy sweep is asked for and not
 * yet started is covered by that sweep (coalesced: its discovery starts
 * after the change).  One that arrives while a heavy sweep runs is checked
 * once that sweep is over (trapin_idle): the sweep clears the
 * PortStateChange it saw, so the check finds it set only if the change
 * came after the sweep read that switch.  A check's answer that arrives
 * once a heavy sweep was asked for or started is covered by it too.  So
 * the two trap 128s of one failed switch-switch link give one heavy
 * sweep, and a storm of spoofed or repeated traps gives none: a check
 * costs one MAD, at most one is in flight per device (a trap meanwhile
 * asks for one more check afterwards), and heavy sweeps follow only real
 * changes.
 */
#ifndef IBSMD_TRAPIN_H
#define IBSMD_TRAPIN_H

#include <stddef.h>
#include <stdint.h>

#include "mad/mkey.h"
#include "mad/transport.h"
#include "mad/txn.h"
#include "sm/base/fabric.h"

#define TRAPIN_LOG_BURST	5	/* log lines about traps per window */
#define TRAPIN_LOG_WINDOW_MS	5000
#define TRAPIN_NUMBERS		32	/* distinct trap numbers counted apart */
#define TRAPIN_CHECKS		256	/* checks in flight at once */
#define TRAPIN_DEFERRED		256	/* checks waiting for a sweep to end */
/*
 * Ports counted apart for traps 129-131 (port errors), the first ones to
 * report them; the rest are counted together.  A metric label per port
 * of a whole fabric would be unbounded; a fabric with more erring ports
 * than this at once needs the PMA counters (perfquery), not the traps.
 */
#define TRAPIN_PORT_ERR_PORTS	64
/*
 * Ports counted apart for trap 256 (Bad M_Key), the first ones to report
 * one; the rest are counted together.  Bounded for the same reason: a
 * host that probes every port with wrong keys makes each one trap.
 */
#define TRAPIN_MKEY_PORTS	64
#define TRAPIN_MKEY_LOG_BURST	5	/* trap 256 lines per window */
#define TRAPIN_MKEY_LOG_WINDOW_MS 10000

enum trapin_kind {
	TRAPIN_COUNT,		/* logged and counted, nothing else */
	TRAPIN_SPOOFED,		/* IssuerLID is not the port it came from */
	TRAPIN_UNKNOWN,		/* no such issuer in the model, or the wrong kind */
	TRAPIN_CHECK_SWITCH,	/* 128: read the switch's PortStateChange */
	TRAPIN_CHECK_PORT,	/* 144: read the port's CapabilityMask */
	TRAPIN_UNCHECKED,	/* a 128 or 144 with no model to check it on:
				 * the first sweep under way may have read the
				 * port before it changed */
};

/* The Notice fields the decision reads (IBA vol. 1 §14.2.5.1). */
struct trapin_trap {
	int generic;
	unsigned number;	/* TrapNumber (generic), DeviceID (vendor) */
	uint32_t issuer_lid;
	int directed;		/* came directed-route: no SLID to compare */
	uint32_t slid;		/* the LRH SLID of a LID-routed trap */
	uint8_t data_port;	/* 129-131: DataDetails PORTNO, the port in error */
};

struct trapin_verdict {
	enum trapin_kind kind;
	uint32_t port;		/* the issuer's port in the model, or FAB_NONE */
	const char *why;	/* for the log */
};

/* The pure decision.  f NULL: no model (not MASTER): count only. */
void trapin_decide(const struct fabric *f, const struct trapin_trap *t,
		   struct trapin_verdict *v);

/* What the heavy sweep is doing, as the daemon says. */
enum trapin_sweep {
	TRAPIN_IDLE,		/* no heavy sweep asked for or running */
	TRAPIN_PENDING,		/* asked for, not started: it will see everything */
	TRAPIN_RUNNING,		/* started before now */
};

struct trapin_hooks {
	enum trapin_sweep (*sweep_state)(void *arg);
	/* the model to decide on: NULL unless MASTER of a configured subnet */
	const struct fabric *(*model)(void *arg);
	/* a confirmed change: the daemon asks for a heavy sweep */
	void (*heavy)(void *arg, const char *why);
	/* a switch's PortStateChange confirmed (called before heavy) */
	void (*switch_changed)(void *arg, uint64_t sw_guid);
	/* a trap 144 that is no spoof: the port changed (its SM may answer now) */
	void (*port_changed)(void *arg, uint64_t port_guid);
	/* a trap 257 (Bad P_Key) that is no spoof, from port pi of the model */
	void (*pkey_violation)(void *arg, uint32_t pi);
	/* a trap 256 (Bad M_Key) that is no spoof, from port pi of the model */
	void (*mkey_violation)(void *arg, uint32_t pi, const struct mkey_trap256 *d);
	/* the M_Key of the port at lid for its TrapRepress; 0: the trap's own */
	uint64_t (*repress_key)(void *arg, uint32_t lid);
	/* a 128 or 144 while the first heavy sweep runs (no model yet): the
	 * daemon sweeps once more when it is done */
	void (*unchecked)(void *arg);
	void *arg;
};

struct trapin_stats {
	uint64_t received;
	uint16_t number[TRAPIN_NUMBERS];	/* trap numbers seen, in order */
	uint64_t by_number[TRAPIN_NUMBERS];
	uint32_t n_numbers;
	uint64_t other_numbers;		/* past the table */
	uint64_t vendor;
	uint64_t spoofed, unknown_issuer;
	uint64_t checks, unchanged, coalesced, check_overflow;
	uint64_t sweeps;		/* heavy sweeps traps asked for */
	uint64_t represses, repress_failed;
	uint64_t repress_withheld;	/* traps of keyed ports whose key we do not hold */
	uint64_t mkey_unrepressed;	/* traps 256 left unrepressed: no key that passes */
	uint64_t log_suppressed;
	/* traps 129-131 by node GUID and port: the first TRAPIN_PORT_ERR_PORTS */
	struct trapin_port_err {
		uint64_t guid;
		uint8_t port;
		uint64_t count;
	} port_err[TRAPIN_PORT_ERR_PORTS];
	uint32_t n_port_err;
	uint64_t port_err_other;	/* from ports past the table, or unknown */
	/* traps 256 by node GUID and port: the first TRAPIN_MKEY_PORTS */
	struct trapin_port_err mkey_viol[TRAPIN_MKEY_PORTS];
	uint32_t n_mkey_viol;
	uint64_t mkey_violations;	/* traps 256 from ports of the model */
	uint64_t mkey_viol_other;	/* of those, from ports past the table */
	uint64_t mkey_undecoded;	/* traps 256 whose DataDetails did not decode */
};

struct trapin;

struct trapin_check {
	struct trapin *owner;
	uint64_t guid;		/* node GUID */
	uint8_t port;		/* port number (CHECK_PORT) */
	uint8_t kind;		/* TRAPIN_CHECK_*, 0: free */
	uint8_t again;		/* a trap came meanwhile: check once more */
	uint8_t in_flight;
	unsigned number;	/* the trap that asked */
	uint32_t issuer_lid;
};

struct trapin {
	struct trapin_hooks h;
	struct txn_engine *txn;
	struct mad_transport *tr;
	struct trapin_stats st;
	struct trapin_check checks[TRAPIN_CHECKS];
	struct trapin_check deferred[TRAPIN_DEFERRED];
	uint32_t n_deferred;
};

void trapin_init(struct trapin *t, struct txn_engine *txn,
		 struct mad_transport *tr, const struct trapin_hooks *h);
/* A Trap(Notice) SMP (MAD_SIZE bytes) from the receive path. */
void trapin_handle(struct trapin *t, const uint8_t *mad,
		   const struct mad_addr *from, uint64_t now_ms);
/* A sweep ended: the checks that waited for it go out (or are covered). */
void trapin_idle(struct trapin *t);
/* The counters as a JSON object for ibsmctl status (a json_t *). */
void *trapin_json(const struct trapin *t);

#endif
