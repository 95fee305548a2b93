/*
 * The performance manager: every perfmgr.interval_s (and on `ibsmctl
 * perfmgr sweep`), a MASTER reads the counters of every cabled switch
 * port and every CA port through their PMAs (class 0x04, LID-routed GMPs
 * on QP1): ClassPortInfo once per node, then per port PortCounters (the
 * twelve error counters, PortXmitWait, and the data and packet counters
 * where the PMA has no extended ones) and PortCountersExtended where its
 * CapabilityMask says so.  A port whose PortCounters near saturation
 * (sm/perf/pmcalc.h) is cleared with a Set, and the next read knows it.
 *
 * The GMPs go through a transaction table of their own (mad/txn.h), with
 * perfmgr.window requests in flight and a few per PMA, so the SMPs of the
 * sweeps and the SA's answers never wait behind them; the pFTree weight
 * learning (sm/weights.c) sends its PMA Gets through it too.
 *
 * Per port (by node GUID and port number, kept across model changes; a
 * port the model lost is dropped) the counters' growth, totals and rates
 * (sm/perf/pmcalc.h), and at each sweep's end a verdict: errors over
 * their perfmgr.thresholds in the last hour, flapping, hot (PortXmitWait).
 * A port that turns unhealthy, and one that recovers, is one log line
 * (rate-limited) and one event for events.exec.  `ibsmctl health` lists
 * them (perfmgr_health_to_ctl), /metrics carries the per-port series
 * (perfmgr.metrics), the picture marks hot links (perfmgr_hot_ports).
 */
#ifndef IBSMD_PERFMGR_H
#define IBSMD_PERFMGR_H

#include <stddef.h>
#include <stdint.h>

#include "mad/transport.h"

struct sm;
struct mtext;
struct txn_engine;
struct json_t;
struct fabric;

/* Requests in flight to one PMA: a switch's serves all its ports. */
#define PM_WINDOW_PER_NODE 4

/* At sm_init: the timer (nothing is sent yet).  0, or -1 (no memory). */
int perfmgr_init(struct sm *sm);
/* The transport is open: its transaction table.  0, or -1 with err. */
int perfmgr_begin(struct sm *sm, char *err, size_t errlen);
/* Cancels what is in flight and frees it all. */
void perfmgr_free(struct sm *sm);
/* The policy was (re)loaded: interval, window, thresholds in force now. */
void perfmgr_reconfigure(struct sm *sm);
/* A heavy sweep configured the subnet as MASTER: the first sweep soon. */
void perfmgr_configured(struct sm *sm);
/* Who draws the fabric's picture again when hot links change (fn(arg)). */
void perfmgr_set_redraw(struct sm *sm, void (*fn)(void *), void *arg);
/*
 * Another owner's GMPs on the table (dFtree's rounds), paced as a sweep's
 * are: while the SA is busy, one in flight and PM_BUSY_GMPS a tick, the
 * window and the tick's budget shared with the sweep.  perfmgr_pace()
 * makes arg the guest (one at a time: -1 when another is, or before
 * begin): fn(arg, yielded_ms) runs at every tick (yielded_ms: the tick
 * just ended was spent yielding, else 0) until perfmgr_unpace(arg).
 * perfmgr_send() submits one GMP when the gate has room: 1 sent, 0 not
 * now (again at the next tick or answer), -1 refused by the table.
 */
int perfmgr_pace(struct sm *sm, void (*fn)(void *, unsigned), void *arg);
void perfmgr_unpace(struct sm *sm, void *arg);
int perfmgr_send(struct sm *sm, const uint8_t *mad, const struct mad_addr *to,
		 uint32_t dest, void (*cb)(void *, int, const uint8_t *, size_t),
		 void *arg);
/* The transaction table PerfMgt GMPs go through (NULL before begin). */
struct txn_engine *perfmgr_engine(const struct sm *sm);
/* The answer hook's part: 1 when mad answered one of its requests. */
int perfmgr_answer(struct sm *sm, const uint8_t *mad, size_t len,
		   const struct mad_addr *from, int status);
/*
 * ibsmctl perfmgr [sweep], ibsmctl health [--save-baseline [FILE]]:
 * the control commands (sm/ctl/ctlcmds.c's table).
 */
struct json_t *perfmgr_ctl(struct sm *sm, const struct json_t *req,
			   char *err, size_t errlen);
struct json_t *perfmgr_health_ctl(struct sm *sm, const struct json_t *req,
				  char *err, size_t errlen);
/* `status`: the performance manager's part. */
struct json_t *perfmgr_to_ctl(const struct sm *sm);
/* /metrics: the sweeps' figures and the per-port series. */
void perfmgr_metrics(const struct sm *sm, struct mtext *t);
/*
 * Hot ports of f (PortXmitWait over its threshold at the last sweep):
 * hot[pi] = 1 for each, f->n_ports entries.  Returns how many.
 */
uint32_t perfmgr_hot_ports(const struct sm *sm, const struct fabric *f,
			   uint8_t *hot);

#endif
