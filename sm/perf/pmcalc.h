/*
 * The performance manager's arithmetic and health verdicts, pure: no I/O,
 * no loop, no daemon.  The owner on the loop (sm/perfmgr.c) reads the
 * PerfMgt counters (mad/pma.h), keeps one struct pm_port per port and
 * hands each read to pmcalc_update; pmcalc_judge says whether the port
 * is healthy.
 *
 * How a counter's growth between two reads is taken (IBA vol. 1
 * 16.1.4.3: PortCounters' counters stop at all ones, they do not wrap;
 * 16.1.4.11: PortCountersExtended's 64-bit ones wrap):
 *  - read higher or equal: the difference.  A counter read narrow
 *    (PortCounters) that reads its maximum is saturated: the growth is
 *    at least the difference, the rest is lost.  pmcalc_needs_clear
 *    tells the owner to clear the port's PortCounters before that.
 *  - read lower: a wrap where it can be one -- a 64-bit counter, or a
 *    32-bit one (the data, packet and PortXmitWait counters read narrow,
 *    which some devices wrap), whose previous value was in the upper
 *    half and the new one in the lower half; the growth is then what
 *    wrapping gives.  (From the lower half a wrap would be more than half
 *    the counter's range in one interval, which a 64-bit counter never
 *    grows: PortCountersExtended cleared by `perfquery -x -R` is a reset,
 *    not 2^64 octets.)  Otherwise a reset: someone cleared the
 *    counter (an administrator's ibclearerrors or `perfquery -R`, a
 *    device reboot) and the growth is the new value.  A reset of an
 *    error counter also drops the port's error history (the hour's
 *    buckets and the flapping ring): the administrator cleared the
 *    counters, so the port starts afresh and a port unhealthy through
 *    errors is healthy again at the first read after the clear.  A clear
 *    the SM did itself (pmcalc_update's cleared) is not a reset.
 *  - a counter read at a width other than the previous read's (the
 *    PMA's ClassPortInfo changed), or missing from the previous read,
 *    only sets its new baseline, as the port's first read does.
 * What grows between a read and the SM's clear right after it is lost;
 * after a clear the SM did not see, a counter that grew back past its
 * previous value is taken for growth (no read can tell the two apart).
 *
 * Health is judged over the last hour, in PM_BUCKETS buckets of
 * PM_BUCKET_S seconds: each read's error growth goes into the bucket of
 * its time.  A port is
 *  - PMV_ERRORS: an error counter's sum over the buckets of the last hour
 *    (older ones not counted) is greater than its threshold per hour;
 *  - PMV_FLAPPING: its LinkDownedCounter grew by PM_FLAP_DOWNS or more
 *    over the last PM_FLAP_INTERVALS reads;
 *  - PMV_HOT: its PortXmitWait per second over the last interval is
 *    greater than the PortXmitWait threshold per hour / 3600.
 * A threshold of 0 is not judged.
 */
#ifndef IBSMD_PMCALC_H
#define IBSMD_PMCALC_H

#include <stddef.h>
#include <stdint.h>

#include "mad/pma.h"

#define PM_BUCKET_S 300
#define PM_BUCKETS 12			/* 12 x 300 s: the hour thresholds are per */
#define PM_FLAP_INTERVALS 3		/* LinkDowned growing by */
#define PM_FLAP_DOWNS 5			/* this much within this many reads: flapping */

enum pm_step { PM_STEP_OK, PM_STEP_WRAP, PM_STEP_RESET, PM_STEP_SATURATED };

/*
 * The growth of a counter `bits` wide (64: PortCountersExtended, else
 * PortCounters' width, pma_counter_info[].bits) read prev then cur, and
 * how it was taken (the rules above).
 */
uint64_t pmcalc_delta(uint64_t prev, uint64_t cur, unsigned bits,
		      enum pm_step *how);

/*
 * One port's history; all zero = never read (1,128 bytes on x86-64:
 * 20,000 ports take 22.6 MB).
 */
struct pm_port {
	struct pma_sample last;		/* the previous read */
	uint64_t last_ms;		/* its time */
	uint8_t have_last;
	/* the first read's value plus the growth since, in the counter's
	 * units (data: 4 octets): perfquery's value until a clear, and
	 * never going down (Prometheus counters) */
	uint64_t total[PMC_N];
	double rate[PMC_N];		/* per second over the last interval */
	uint32_t bucket[PM_BUCKETS][PMC_N_ERRORS];	/* error growth */
	uint64_t bucket_start[PM_BUCKETS];	/* ms: which 300 s a bucket holds */
	uint16_t downs[PM_FLAP_INTERVALS];	/* LinkDowned growth, the last reads */
	uint8_t downs_pos;		/* the next slot of downs */
	uint32_t resets, wraps;		/* counters reset and wrapped, ever */
};

/* What one read did; wrapped, reset, saturated: 1u << counter. */
struct pm_step_report {
	uint64_t delta[PMC_N];
	uint32_t wrapped, reset, saturated;
	int external_reset;	/* an error counter was reset: history dropped */
	int baseline;		/* the port's first read: no growth, no rate */
};

/*
 * A new read s at now_ms (a monotonic clock).  cleared: the SM cleared
 * the port's PortCounters right after the previous read, so the previous
 * values are 0 for the counters read narrow.  r, when not NULL, says what
 * the read did.  The rates use the interval since the previous read; the
 * first read only sets the baseline.
 */
void pmcalc_update(struct pm_port *p, const struct pma_sample *s,
		   uint64_t now_ms, int cleared, struct pm_step_report *r);

/*
 * 1 when a counter read narrow (PortCounters) is at or above 3/4 of its
 * maximum: clear the port's PortCounters before it saturates.
 */
int pmcalc_needs_clear(const struct pma_sample *s);

/* Counts per hour; 0 = not judged. */
struct pm_thresholds {
	uint64_t per_hour[PMC_N];
};

/*
 * The defaults: ibqueryerrors' (infiniband-diags' error thresholds), as
 * counts per hour -- SymbolErrorCounter, LinkErrorRecoveryCounter,
 * LinkDownedCounter, PortRcvErrors, LocalLinkIntegrityErrors and
 * ExcessiveBufferOverrunErrors 10; PortRcvRemotePhysicalErrors,
 * PortRcvSwitchRelayErrors, PortXmitDiscards, PortXmitConstraintErrors,
 * PortRcvConstraintErrors and VL15Dropped 100.  PortXmitWait: 100,000
 * per second (360,000,000 per hour) makes a port hot.  The data and
 * packet counters are not judged.
 */
void pm_thresholds_default(struct pm_thresholds *t);

/*
 * The PMC_* of a counter that has a threshold (the error counters and
 * PortXmitWait), by its IBA name as perfquery prints it
 * ("SymbolErrorCounter"); -1 for any other name.
 */
int pm_threshold_index(const char *name);

enum { PMV_ERRORS = 1, PMV_FLAPPING = 2, PMV_HOT = 4 };

struct pm_verdict {
	unsigned flags;			/* PMV_* */
	uint32_t over;			/* 1u << error counter over its threshold */
	uint64_t hour[PMC_N_ERRORS];	/* each error counter's growth, last hour */
	uint32_t downs;			/* LinkDowned growth, last PM_FLAP_INTERVALS reads */
	double xmit_wait_rate;		/* PortXmitWait per second, last interval */
};

/* The port's health at now_ms (healthy, flags 0, if never read). */
void pmcalc_judge(const struct pm_port *p, const struct pm_thresholds *t,
		  uint64_t now_ms, struct pm_verdict *v);

/*
 * The verdict's reasons, one per line into buf ("SymbolErrorCounter: 50
 * in the last hour (threshold 10)", "flapping: LinkDownedCounter +5 in
 * the last 3 sweeps", "hot: PortXmitWait 250000 per second (threshold
 * 100000)"), each line ending in '\n'; buf is always terminated, a line
 * that does not fit whole is left out.  Returns the number of reasons.
 */
int pmcalc_reasons(const struct pm_verdict *v, const struct pm_thresholds *t,
		   char *buf, size_t len);

/*
 * How bad a verdict is, to list ports the worst first: the largest of
 * each judged measure over its limit -- an error counter's hour over its
 * threshold, the LinkDowned growth over PM_FLAP_DOWNS, the PortXmitWait
 * rate over its threshold per second.  A flagged port's is 1 or more.
 */
double pmcalc_severity(const struct pm_verdict *v,
		       const struct pm_thresholds *t);

/*
 * A link's two ends a and b: symbol errors over threshold on exactly one
 * side (that side's receiver, or its end of the cable, is suspect).
 * 1 for a, 2 for b, 0 for neither or both.
 */
int pmcalc_one_sided_symbols(const struct pm_verdict *a,
			     const struct pm_verdict *b);

#endif
