/*
 * The performance manager's counter arithmetic and health verdicts
 * (sm/perf/pmcalc.h): deltas, wraps, resets (an administrator's and the
 * SM's own clear), saturation, rates, the hour's buckets, flapping, hot
 * ports, one-sided symbol errors and the reasons' text.  PortCounters'
 * widths are IBA vol. 1 16.1.4.3's (mad/pma.h).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mad/pma.h"
#include "sm/perf/pmcalc.h"

#define SEC 1000ull
#define MIN (60 * SEC)
#define HOUR (60 * MIN)
/* a monotonic time far from 0, on a 300 s boundary */
#define T0 (100 * HOUR)

/* Every counter read, all through PortCounters (narrow), all 0. */
static struct pma_sample narrow(void)
{
	struct pma_sample s;

	memset(&s, 0, sizeof(s));
	s.port_select = 1;
	s.have = (1u << PMC_N) - 1;
	return s;
}

/* As narrow, the data and packet counters through PortCountersExtended. */
static struct pma_sample mixed(void)
{
	struct pma_sample s = narrow();

	for (int c = PMC_XMIT_DATA; c < PMC_N; c++)
		s.wide |= 1u << c;
	return s;
}

static void update(struct pm_port *p, const struct pma_sample *s,
		   uint64_t ms, struct pm_step_report *r)
{
	pmcalc_update(p, s, ms, 0, r);
}

/* A port never read before, read once at T0: its baseline. */
static void baseline(struct pm_port *p, const struct pma_sample *s)
{
	memset(p, 0, sizeof(*p));
	pmcalc_update(p, s, T0, 0, NULL);
}

static struct pm_verdict judge_default(const struct pm_port *p, uint64_t ms)
{
	struct pm_thresholds t;
	struct pm_verdict v;

	pm_thresholds_default(&t);
	pmcalc_judge(p, &t, ms, &v);
	return v;
}

/* Read higher: the difference; the first read is only the baseline. */
START_TEST(deltas)
{
	enum pm_step how = PM_STEP_RESET;
	ck_assert_uint_eq(pmcalc_delta(10, 25, 16, &how), 15);
	ck_assert_int_eq(how, PM_STEP_OK);
	ck_assert_uint_eq(pmcalc_delta(7, 7, 8, &how), 0);
	ck_assert_int_eq(how, PM_STEP_OK);
	ck_assert_uint_eq(pmcalc_delta(1000, 1000000000000ull, 64, &how),
			  999999999000ull);
	ck_assert_int_eq(how, PM_STEP_OK);

	struct pm_port p;
	struct pm_step_report r;
	struct pma_sample s = mixed();
	memset(&p, 0, sizeof(p));
	s.v[PMC_SYMBOL_ERR] = 3;
	s.v[PMC_XMIT_DATA] = 1000;
	update(&p, &s, T0, &r);
	ck_assert_int_eq(r.baseline, 1);
	ck_assert_uint_eq(r.delta[PMC_SYMBOL_ERR], 0);
	ck_assert_uint_eq(r.delta[PMC_XMIT_DATA], 0);
	ck_assert_uint_eq(p.total[PMC_SYMBOL_ERR], 3);	/* from the device's value */
	ck_assert_uint_eq(p.have_last, 1);

	s.v[PMC_SYMBOL_ERR] = 10;
	s.v[PMC_XMIT_DATA] = 5000;
	update(&p, &s, T0 + 10 * SEC, &r);
	ck_assert_int_eq(r.baseline, 0);
	ck_assert_uint_eq(r.delta[PMC_SYMBOL_ERR], 7);
	ck_assert_uint_eq(r.delta[PMC_XMIT_DATA], 4000);
	ck_assert_uint_eq(r.reset | r.wrapped | r.saturated, 0);

	s.v[PMC_SYMBOL_ERR] = 12;
	s.v[PMC_XMIT_DATA] = 5500;
	update(&p, &s, T0 + 20 * SEC, &r);
	ck_assert_uint_eq(p.total[PMC_SYMBOL_ERR], 12);
	ck_assert_uint_eq(p.total[PMC_XMIT_DATA], 5500);
}
END_TEST

/* A counter read at another width than before: a new baseline. */
START_TEST(width_change)
{
	struct pm_port p;
	struct pm_step_report r;
	struct pma_sample s = narrow();
	s.v[PMC_RCV_DATA] = 100;
	baseline(&p, &s);
	s = mixed();
	s.v[PMC_RCV_DATA] = 5000;
	update(&p, &s, T0 + MIN, &r);
	ck_assert_uint_eq(r.delta[PMC_RCV_DATA], 0);
	ck_assert_uint_eq(r.reset, 0);
	ck_assert_uint_eq(p.total[PMC_RCV_DATA], 100);
	s.v[PMC_RCV_DATA] = 6000;
	update(&p, &s, T0 + 2 * MIN, &r);
	ck_assert_uint_eq(r.delta[PMC_RCV_DATA], 1000);
}
END_TEST

/* 32-bit counters wrap from the upper half into the lower; 64-bit too. */
START_TEST(wrap32)
{
	enum pm_step how;
	ck_assert_uint_eq(pmcalc_delta(0xFFFFFF00u, 0x100, 32, &how), 0x200);
	ck_assert_int_eq(how, PM_STEP_WRAP);
	ck_assert_uint_eq(pmcalc_delta(0x80000000u, 0x7FFFFFFFu, 32, &how),
			  0xFFFFFFFFu);
	ck_assert_int_eq(how, PM_STEP_WRAP);
	/* from the lower half: a clear */
	ck_assert_uint_eq(pmcalc_delta(0x1000, 0x10, 32, &how), 0x10);
	ck_assert_int_eq(how, PM_STEP_RESET);
	ck_assert_uint_eq(pmcalc_delta(UINT64_MAX - 9, 5, 64, &how), 15);
	ck_assert_int_eq(how, PM_STEP_WRAP);
	ck_assert_uint_eq(pmcalc_delta(1000, 10, 64, &how), 10);
	ck_assert_int_eq(how, PM_STEP_RESET);
	/* PortCounters' error counters stop at all ones: never a wrap */
	ck_assert_uint_eq(pmcalc_delta(0xF000, 0x10, 16, &how), 0x10);
	ck_assert_int_eq(how, PM_STEP_RESET);

	struct pm_port p;
	struct pm_step_report r;
	struct pma_sample s = narrow();
	s.v[PMC_XMIT_DATA] = 0xFFFFF000u;
	baseline(&p, &s);
	s.v[PMC_XMIT_DATA] = 0x1000;
	update(&p, &s, T0 + MIN, &r);
	ck_assert_uint_eq(r.delta[PMC_XMIT_DATA], 0x2000);
	ck_assert_uint_eq(r.wrapped, 1u << PMC_XMIT_DATA);
	ck_assert_uint_eq(r.reset, 0);
	ck_assert_int_eq(r.external_reset, 0);
	ck_assert_uint_eq(p.wraps, 1);
	ck_assert_uint_eq(p.resets, 0);
	ck_assert_uint_eq(p.total[PMC_XMIT_DATA], 0xFFFFF000ull + 0x2000);
}
END_TEST

/*
 * An administrator clears the counters between two reads: a reset, the
 * growth is the new value, and the port's error history goes, so the
 * port unhealthy through errors and flapping is healthy again.
 */
START_TEST(reset_between_reads)
{
	struct pm_port p;
	struct pm_step_report r;
	struct pma_sample s = mixed();
	s.v[PMC_RCV_DATA] = 1000;
	baseline(&p, &s);
	s.v[PMC_SYMBOL_ERR] = 50;
	s.v[PMC_LINK_DOWNED] = 5;
	s.v[PMC_RCV_DATA] = 2000;
	update(&p, &s, T0 + MIN, &r);
	struct pm_verdict v = judge_default(&p, T0 + MIN);
	ck_assert_uint_eq(v.flags, PMV_ERRORS | PMV_FLAPPING);
	ck_assert_uint_eq(v.over, 1u << PMC_SYMBOL_ERR);

	s.v[PMC_SYMBOL_ERR] = 3;
	s.v[PMC_LINK_DOWNED] = 0;
	s.v[PMC_RCV_DATA] = 3000;	/* data counters read wide, not cleared */
	update(&p, &s, T0 + 2 * MIN, &r);
	ck_assert_uint_eq(r.reset, (1u << PMC_SYMBOL_ERR) | (1u << PMC_LINK_DOWNED));
	ck_assert_int_eq(r.external_reset, 1);
	ck_assert_uint_eq(r.delta[PMC_SYMBOL_ERR], 3);
	ck_assert_uint_eq(r.delta[PMC_LINK_DOWNED], 0);
	ck_assert_uint_eq(r.delta[PMC_RCV_DATA], 1000);
	ck_assert_uint_eq(p.resets, 2);
	ck_assert_uint_eq(p.total[PMC_SYMBOL_ERR], 53);
	ck_assert_uint_eq(p.total[PMC_LINK_DOWNED], 5);
	v = judge_default(&p, T0 + 2 * MIN);
	ck_assert_uint_eq(v.flags, 0);
	ck_assert_uint_eq(v.hour[PMC_SYMBOL_ERR], 3);
	ck_assert_uint_eq(v.downs, 0);
}
END_TEST

/* A data counter cleared alone: a reset, the error history stays. */
START_TEST(reset_data_only)
{
	struct pm_port p;
	struct pm_step_report r;
	struct pma_sample s = narrow();
	s.v[PMC_XMIT_DATA] = 5000;
	baseline(&p, &s);
	s.v[PMC_SYMBOL_ERR] = 20;
	s.v[PMC_XMIT_DATA] = 6000;
	update(&p, &s, T0 + MIN, &r);
	s.v[PMC_XMIT_DATA] = 100;
	update(&p, &s, T0 + 2 * MIN, &r);
	ck_assert_uint_eq(r.reset, 1u << PMC_XMIT_DATA);
	ck_assert_uint_eq(r.wrapped, 0);
	ck_assert_int_eq(r.external_reset, 0);
	ck_assert_uint_eq(r.delta[PMC_XMIT_DATA], 100);
	ck_assert_uint_eq(p.total[PMC_XMIT_DATA], 5000 + 1100);
	ck_assert_uint_eq(p.resets, 1);
	struct pm_verdict v = judge_default(&p, T0 + 2 * MIN);
	ck_assert_uint_eq(v.flags, PMV_ERRORS);
	ck_assert_uint_eq(v.hour[PMC_SYMBOL_ERR], 20);
}
END_TEST

/* The SM's own clear: the narrow counters start again from 0, no reset. */
START_TEST(sm_clear)
{
	struct pm_port p, copy;
	struct pm_step_report r;
	struct pma_sample s = narrow();
	s.wide = 1u << PMC_RCV_DATA;
	s.v[PMC_SYMBOL_ERR] = 40;
	s.v[PMC_XMIT_DATA] = 0xC0000000u;
	s.v[PMC_RCV_DATA] = 1000000000000ull;
	baseline(&p, &s);
	ck_assert_int_eq(pmcalc_needs_clear(&s), 1);
	s.v[PMC_SYMBOL_ERR] = 4;
	s.v[PMC_XMIT_DATA] = 0x100;
	s.v[PMC_RCV_DATA] = 1000000000500ull;
	copy = p;
	pmcalc_update(&p, &s, T0 + MIN, 1, &r);
	ck_assert_uint_eq(r.reset | r.wrapped | r.saturated, 0);
	ck_assert_int_eq(r.external_reset, 0);
	ck_assert_uint_eq(r.delta[PMC_SYMBOL_ERR], 4);
	ck_assert_uint_eq(r.delta[PMC_XMIT_DATA], 0x100);
	ck_assert_uint_eq(r.delta[PMC_RCV_DATA], 500);	/* wide: not cleared */
	ck_assert_uint_eq(p.resets, 0);
	ck_assert_uint_eq(p.total[PMC_SYMBOL_ERR], 40 + 4);
	/* the same read without the SM's clear is someone else's */
	pmcalc_update(&copy, &s, T0 + MIN, 0, &r);
	ck_assert_uint_eq(r.reset, 1u << PMC_SYMBOL_ERR);
	ck_assert_uint_eq(r.wrapped, 1u << PMC_XMIT_DATA);
	ck_assert_int_eq(r.external_reset, 1);
}
END_TEST

/* A narrow counter at all ones has saturated: the growth is at least that. */
START_TEST(saturation)
{
	enum pm_step how;
	ck_assert_uint_eq(pmcalc_delta(100, 65535, 16, &how), 65435);
	ck_assert_int_eq(how, PM_STEP_SATURATED);
	ck_assert_uint_eq(pmcalc_delta(255, 255, 8, &how), 0);
	ck_assert_int_eq(how, PM_STEP_SATURATED);
	ck_assert_uint_eq(pmcalc_delta(14, 15, 4, &how), 1);
	ck_assert_int_eq(how, PM_STEP_SATURATED);
	ck_assert_uint_eq(pmcalc_delta(14, 15, 16, &how), 1);
	ck_assert_int_eq(how, PM_STEP_OK);
	ck_assert_uint_eq(pmcalc_delta(UINT64_MAX - 1, UINT64_MAX, 64, &how), 1);
	ck_assert_int_eq(how, PM_STEP_OK);

	struct pm_port p;
	struct pm_step_report r;
	struct pma_sample s = narrow();
	baseline(&p, &s);
	s.v[PMC_LOCAL_LINK_INTEGRITY_ERR] = 15;
	s.v[PMC_VL15_DROPPED] = 65534;
	update(&p, &s, T0 + MIN, &r);
	ck_assert_uint_eq(r.saturated, 1u << PMC_LOCAL_LINK_INTEGRITY_ERR);
	ck_assert_uint_eq(r.delta[PMC_LOCAL_LINK_INTEGRITY_ERR], 15);
}
END_TEST

/* Clear at 3/4 of a narrow counter's maximum, for each width. */
START_TEST(needs_clear)
{
	static const struct { int c; uint64_t at; } edge[] = {
		{ PMC_LOCAL_LINK_INTEGRITY_ERR, 12 },	/* 4 bits: 15 * 3/4 = 11.25 */
		{ PMC_LINK_DOWNED, 192 },		/* 8: 191.25 */
		{ PMC_SYMBOL_ERR, 49152 },		/* 16: 49151.25 */
		{ PMC_XMIT_WAIT, 3221225472ull },	/* 32: 3221225471.25 */
		{ PMC_RCV_PKTS, 3221225472ull },
	};
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		struct pma_sample s = narrow();
		s.v[edge[i].c] = edge[i].at - 1;
		ck_assert_int_eq(pmcalc_needs_clear(&s), 0);
		s.v[edge[i].c] = edge[i].at;
		ck_assert_int_eq(pmcalc_needs_clear(&s), 1);
		s.have &= ~(1u << edge[i].c);	/* not read: not judged */
		ck_assert_int_eq(pmcalc_needs_clear(&s), 0);
	}
	struct pma_sample s = mixed();
	s.v[PMC_XMIT_DATA] = UINT64_MAX - 1;	/* 64-bit: never cleared */
	ck_assert_int_eq(pmcalc_needs_clear(&s), 0);
}
END_TEST

/* Per second over the interval between the two reads. */
START_TEST(rates)
{
	struct pm_port p;
	struct pm_step_report r;
	struct pma_sample s = mixed();
	s.v[PMC_XMIT_DATA] = 7000;
	baseline(&p, &s);
	for (int c = 0; c < PMC_N; c++)
		ck_assert_double_eq(p.rate[c], 0);
	s.v[PMC_XMIT_DATA] = 8000;
	s.v[PMC_XMIT_WAIT] = 500;
	update(&p, &s, T0 + 10 * SEC, &r);
	ck_assert_double_eq_tol(p.rate[PMC_XMIT_DATA], 100.0, 1e-9);
	ck_assert_double_eq_tol(p.rate[PMC_XMIT_WAIT], 50.0, 1e-9);
	s.v[PMC_XMIT_DATA] = 8100;
	update(&p, &s, T0 + 10 * SEC + 500, &r);
	ck_assert_double_eq_tol(p.rate[PMC_XMIT_DATA], 200.0, 1e-9);
	ck_assert_double_eq(p.rate[PMC_XMIT_WAIT], 0);
	/* two reads in the same millisecond: growth, no rate */
	s.v[PMC_XMIT_DATA] = 8200;
	update(&p, &s, T0 + 10 * SEC + 500, &r);
	ck_assert_uint_eq(r.delta[PMC_XMIT_DATA], 100);
	ck_assert_double_eq(p.rate[PMC_XMIT_DATA], 0);
}
END_TEST

/* ibqueryerrors' defaults, by the names perfquery prints. */
START_TEST(threshold_defaults)
{
	static const struct { const char *name; uint64_t per_hour; } want[] = {
		{ "SymbolErrorCounter", 10 }, { "LinkErrorRecoveryCounter", 10 },
		{ "LinkDownedCounter", 10 }, { "PortRcvErrors", 10 },
		{ "PortRcvRemotePhysicalErrors", 100 },
		{ "PortRcvSwitchRelayErrors", 100 }, { "PortXmitDiscards", 100 },
		{ "PortXmitConstraintErrors", 100 },
		{ "PortRcvConstraintErrors", 100 },
		{ "LocalLinkIntegrityErrors", 10 },
		{ "ExcessiveBufferOverrunErrors", 10 }, { "VL15Dropped", 100 },
		{ "PortXmitWait", 360000000ull },
	};
	struct pm_thresholds t;
	memset(&t, 0xff, sizeof(t));
	pm_thresholds_default(&t);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int c = pm_threshold_index(want[i].name);
		ck_assert_msg(c >= 0, "%s", want[i].name);
		ck_assert_uint_eq(t.per_hour[c], want[i].per_hour);
	}
	ck_assert_int_eq(pm_threshold_index("SymbolErrorCounter"), PMC_SYMBOL_ERR);
	ck_assert_int_eq(pm_threshold_index("VL15Dropped"), PMC_VL15_DROPPED);
	ck_assert_int_eq(pm_threshold_index("PortXmitWait"), PMC_XMIT_WAIT);
	ck_assert_int_eq(pm_threshold_index("PortXmitData"), -1);
	ck_assert_int_eq(pm_threshold_index("symbolerrorcounter"), -1);
	ck_assert_int_eq(pm_threshold_index(""), -1);
	ck_assert_int_eq(pm_threshold_index(NULL), -1);
	for (int c = PMC_XMIT_DATA; c < PMC_N; c++)
		ck_assert_uint_eq(t.per_hour[c], 0);
}
END_TEST

/* Each error counter: over its own threshold only when above it. */
START_TEST(threshold_per_counter)
{
	struct pm_thresholds t;
	pm_thresholds_default(&t);
	for (int c = 0; c < PMC_N_ERRORS; c++) {
		struct pm_port p;
		struct pm_verdict v;
		struct pma_sample s = narrow();
		baseline(&p, &s);
		s.v[c] = t.per_hour[c];
		update(&p, &s, T0 + MIN, NULL);
		pmcalc_judge(&p, &t, T0 + MIN, &v);
		ck_assert_msg(!(v.flags & PMV_ERRORS), "%s at its threshold",
			      pma_counter_info[c].name);
		ck_assert_uint_eq(v.hour[c], t.per_hour[c]);
		s.v[c] = t.per_hour[c] + 1;
		update(&p, &s, T0 + 2 * MIN, NULL);
		pmcalc_judge(&p, &t, T0 + 2 * MIN, &v);
		ck_assert_msg(v.flags & PMV_ERRORS, "%s over",
			      pma_counter_info[c].name);
		ck_assert_uint_eq(v.over, 1u << c);
	}
	/* a threshold of 0: not judged; a lower one: judged by it */
	struct pm_port p;
	struct pm_verdict v;
	struct pma_sample s = narrow();
	baseline(&p, &s);
	s.v[PMC_XMIT_DISCARDS] = 60000;
	s.v[PMC_SYMBOL_ERR] = 3;
	update(&p, &s, T0 + MIN, NULL);
	t.per_hour[PMC_XMIT_DISCARDS] = 0;
	t.per_hour[PMC_SYMBOL_ERR] = 2;
	pmcalc_judge(&p, &t, T0 + MIN, &v);
	ck_assert_uint_eq(v.over, 1u << PMC_SYMBOL_ERR);
	ck_assert_uint_eq(v.hour[PMC_XMIT_DISCARDS], 60000);
}
END_TEST

/* The hour's buckets: growth older than an hour is no longer counted. */
START_TEST(buckets_age)
{
	struct pm_port p;
	struct pma_sample s = narrow();
	baseline(&p, &s);
	s.v[PMC_SYMBOL_ERR] = 8;
	update(&p, &s, T0 + MIN, NULL);		/* the bucket from T0 */
	s.v[PMC_SYMBOL_ERR] = 16;
	update(&p, &s, T0 + 30 * MIN, NULL);	/* the bucket from T0 + 30 min */
	struct pm_verdict v = judge_default(&p, T0 + 31 * MIN);
	ck_assert_uint_eq(v.hour[PMC_SYMBOL_ERR], 16);
	ck_assert_uint_eq(v.flags, PMV_ERRORS);
	v = judge_default(&p, T0 + HOUR - 1);
	ck_assert_uint_eq(v.hour[PMC_SYMBOL_ERR], 16);
	v = judge_default(&p, T0 + HOUR);	/* T0's bucket is out */
	ck_assert_uint_eq(v.hour[PMC_SYMBOL_ERR], 8);
	ck_assert_uint_eq(v.flags, 0);
	/* a read an hour after T0 takes T0's slot afresh, not on top */
	s.v[PMC_SYMBOL_ERR] = 17;
	update(&p, &s, T0 + HOUR + MIN, NULL);
	v = judge_default(&p, T0 + HOUR + MIN);
	ck_assert_uint_eq(v.hour[PMC_SYMBOL_ERR], 9);
	ck_assert_uint_eq(v.flags, 0);
	v = judge_default(&p, T0 + 2 * HOUR + MIN);
	ck_assert_uint_eq(v.hour[PMC_SYMBOL_ERR], 0);
}
END_TEST

/* LinkDownedCounter growth per read into p, then the verdict's flags. */
static unsigned flap(struct pm_port *p, const unsigned *downs, int n)
{
	struct pma_sample s = narrow();
	uint64_t t = T0;
	baseline(p, &s);
	for (int i = 0; i < n; i++) {
		t += MIN;
		s.v[PMC_LINK_DOWNED] += downs[i];
		update(p, &s, t, NULL);
	}
	return judge_default(p, t).flags;
}

/* 5 LinkDowned within 3 reads: flapping; 4, or 5 over 4 reads: not. */
START_TEST(flapping)
{
	struct pm_port p;
	static const unsigned five_in_3[] = { 2, 2, 1 };
	static const unsigned four_in_3[] = { 2, 1, 1 };
	static const unsigned five_in_4[] = { 2, 2, 0, 1 };
	static const unsigned five_in_1[] = { 0, 0, 5 };
	static const unsigned recovered[] = { 2, 2, 1, 0 };

	ck_assert_uint_eq(flap(&p, five_in_3, 3), PMV_FLAPPING);
	ck_assert_uint_eq(judge_default(&p, T0 + 3 * MIN).downs, 5);
	ck_assert_uint_eq(flap(&p, five_in_1, 3), PMV_FLAPPING);
	ck_assert_uint_eq(flap(&p, four_in_3, 3), 0);
	ck_assert_uint_eq(judge_default(&p, T0 + 3 * MIN).downs, 4);
	ck_assert_uint_eq(flap(&p, five_in_4, 4), 0);
	ck_assert_uint_eq(flap(&p, recovered, 4), 0);
	ck_assert_uint_eq(judge_default(&p, T0 + 4 * MIN).downs, 3);
}
END_TEST

/* Hot: PortXmitWait per second over the threshold / 3600, last interval. */
START_TEST(hot)
{
	struct pm_port p;
	struct pm_thresholds t;
	struct pm_verdict v;
	struct pma_sample s = narrow();
	pm_thresholds_default(&t);
	baseline(&p, &s);
	s.v[PMC_XMIT_WAIT] = 1000000;		/* 100,000 per second: at */
	update(&p, &s, T0 + 10 * SEC, NULL);
	pmcalc_judge(&p, &t, T0 + 10 * SEC, &v);
	ck_assert_uint_eq(v.flags, 0);
	ck_assert_double_eq_tol(v.xmit_wait_rate, 100000.0, 1e-6);
	s.v[PMC_XMIT_WAIT] += 1000010;		/* 100,001 per second: over */
	update(&p, &s, T0 + 20 * SEC, NULL);
	pmcalc_judge(&p, &t, T0 + 20 * SEC, &v);
	ck_assert_uint_eq(v.flags, PMV_HOT);
	t.per_hour[PMC_XMIT_WAIT] = 0;		/* not judged */
	pmcalc_judge(&p, &t, T0 + 20 * SEC, &v);
	ck_assert_uint_eq(v.flags, 0);
	pm_thresholds_default(&t);
	s.v[PMC_XMIT_WAIT] += 10;		/* quiet again */
	update(&p, &s, T0 + 30 * SEC, NULL);
	pmcalc_judge(&p, &t, T0 + 30 * SEC, &v);
	ck_assert_uint_eq(v.flags, 0);
}
END_TEST

/* Symbol errors over threshold on one end of a link only. */
START_TEST(one_sided)
{
	struct pm_port pa, pb;
	struct pma_sample s = narrow();
	baseline(&pa, &s);
	baseline(&pb, &s);
	s.v[PMC_SYMBOL_ERR] = 500;
	update(&pa, &s, T0 + MIN, NULL);
	s.v[PMC_SYMBOL_ERR] = 2;
	update(&pb, &s, T0 + MIN, NULL);
	struct pm_verdict a = judge_default(&pa, T0 + MIN);
	struct pm_verdict b = judge_default(&pb, T0 + MIN);
	ck_assert_int_eq(pmcalc_one_sided_symbols(&a, &b), 1);
	ck_assert_int_eq(pmcalc_one_sided_symbols(&b, &a), 2);
	ck_assert_int_eq(pmcalc_one_sided_symbols(&a, &a), 0);
	ck_assert_int_eq(pmcalc_one_sided_symbols(&b, &b), 0);
	/* another counter over on one side is not a symbol error */
	struct pm_verdict other = b;
	other.over = 1u << PMC_RCV_ERR;
	other.flags = PMV_ERRORS;
	ck_assert_int_eq(pmcalc_one_sided_symbols(&other, &b), 0);
}
END_TEST

/* The reasons' text, one per line, and a buffer too small for them. */
START_TEST(reasons)
{
	static const char want[] =
		"SymbolErrorCounter: 50 in the last hour (threshold 10)\n"
		"flapping: LinkDownedCounter +5 in the last 3 sweeps\n"
		"hot: PortXmitWait 250000 per second (threshold 100000)\n";
	struct pm_port p;
	struct pm_thresholds t;
	struct pm_verdict v;
	struct pma_sample s = narrow();
	char buf[512];
	pm_thresholds_default(&t);
	baseline(&p, &s);
	pmcalc_judge(&p, &t, T0, &v);
	ck_assert_int_eq(pmcalc_reasons(&v, &t, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");

	s.v[PMC_SYMBOL_ERR] = 50;
	s.v[PMC_LINK_DOWNED] = 5;
	s.v[PMC_XMIT_WAIT] = 2500000;
	update(&p, &s, T0 + 10 * SEC, NULL);
	pmcalc_judge(&p, &t, T0 + 10 * SEC, &v);
	ck_assert_uint_eq(v.flags, PMV_ERRORS | PMV_FLAPPING | PMV_HOT);
	ck_assert_int_eq(pmcalc_reasons(&v, &t, buf, sizeof(buf)), 3);
	ck_assert_str_eq(buf, want);
	/* room for the first line only */
	size_t first = strchr(want, '\n') - want + 1;
	ck_assert_int_eq(pmcalc_reasons(&v, &t, buf, first + 1), 3);
	ck_assert_uint_eq(strlen(buf), first);
	ck_assert_int_eq(strncmp(buf, want, first), 0);
	ck_assert_int_eq(pmcalc_reasons(&v, &t, buf, 10), 3);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(pmcalc_reasons(&v, &t, NULL, 0), 3);
}
END_TEST

/* Worst first: each measure over its limit, the largest. */
START_TEST(severity)
{
	struct pm_thresholds t;
	struct pm_verdict v;
	pm_thresholds_default(&t);
	memset(&v, 0, sizeof(v));
	ck_assert_double_eq(pmcalc_severity(&v, &t), 0);
	v.hour[PMC_SYMBOL_ERR] = 5;			/* 5 of 10 */
	ck_assert_double_eq_tol(pmcalc_severity(&v, &t), 0.5, 1e-9);
	v.downs = PM_FLAP_DOWNS;			/* flapping: 1 */
	ck_assert_double_eq_tol(pmcalc_severity(&v, &t), 1.0, 1e-9);
	v.xmit_wait_rate = 250000;			/* hot: 2.5 */
	ck_assert_double_eq_tol(pmcalc_severity(&v, &t), 2.5, 1e-9);
	v.hour[PMC_VL15_DROPPED] = 400;			/* 400 of 100 */
	ck_assert_double_eq_tol(pmcalc_severity(&v, &t), 4.0, 1e-9);
	v.hour[PMC_SYMBOL_ERR] = 50;			/* 50 of 10 */
	ck_assert_double_eq_tol(pmcalc_severity(&v, &t), 5.0, 1e-9);
	t.per_hour[PMC_SYMBOL_ERR] = 0;			/* not judged */
	ck_assert_double_eq_tol(pmcalc_severity(&v, &t), 4.0, 1e-9);
}
END_TEST

/* 20,000 ports' histories fit in a few tens of MB. */
START_TEST(port_size)
{
	size_t all = sizeof(struct pm_port) * 20000;
	printf("struct pm_port: %zu bytes; 20,000 ports: %.1f MB\n",
	       sizeof(struct pm_port), all / 1e6);
	ck_assert_uint_le(all, 32u * 1000 * 1000);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("pmcalc");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, deltas);
	tcase_add_test(tc, width_change);
	tcase_add_test(tc, wrap32);
	tcase_add_test(tc, reset_between_reads);
	tcase_add_test(tc, reset_data_only);
	tcase_add_test(tc, sm_clear);
	tcase_add_test(tc, saturation);
	tcase_add_test(tc, needs_clear);
	tcase_add_test(tc, rates);
	tcase_add_test(tc, threshold_defaults);
	tcase_add_test(tc, threshold_per_counter);
	tcase_add_test(tc, buckets_age);
	tcase_add_test(tc, flapping);
	tcase_add_test(tc, hot);
	tcase_add_test(tc, one_sided);
	tcase_add_test(tc, reasons);
	tcase_add_test(tc, severity);
	tcase_add_test(tc, port_size);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
