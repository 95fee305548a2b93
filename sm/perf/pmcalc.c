/*
 * The performance manager's counter arithmetic and health verdicts
 * (sm/perf/pmcalc.h gives the rules).
 */
#include "sm/perf/pmcalc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MS_PER_S 1000u
#define BUCKET_MS ((uint64_t)PM_BUCKET_S * MS_PER_S)
#define HOUR_MS (BUCKET_MS * PM_BUCKETS)
#define S_PER_HOUR 3600.0
/* needs_clear: at or above CLEAR_NUM / CLEAR_DEN of the maximum */
#define CLEAR_NUM 3u
#define CLEAR_DEN 4u

/* ibqueryerrors' thresholds (infiniband-diags), taken as counts per hour. */
static const uint64_t default_per_hour[PMC_N] = {
	[PMC_SYMBOL_ERR] = 10,
	[PMC_LINK_ERR_RECOVERY] = 10,
	[PMC_LINK_DOWNED] = 10,
	[PMC_RCV_ERR] = 10,
	[PMC_RCV_REMOTE_PHYS_ERR] = 100,
	[PMC_RCV_SWITCH_RELAY_ERR] = 100,
	[PMC_XMIT_DISCARDS] = 100,
	[PMC_XMIT_CONSTRAINT_ERR] = 100,
	[PMC_RCV_CONSTRAINT_ERR] = 100,
	[PMC_LOCAL_LINK_INTEGRITY_ERR] = 10,
	[PMC_EXCESSIVE_BUF_OVERRUN_ERR] = 10,
	[PMC_VL15_DROPPED] = 100,
	[PMC_XMIT_WAIT] = 100000ull * 3600,	/* 100,000 per second */
};

static uint64_t counter_max(unsigned bits)
{
	return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

/*
 * Read lower: a wrap only from the upper half into the lower half of a
 * counter that can wrap (32 and 64 bits).  From the lower half a wrap
 * would mean more than half the counter's range in one interval: a
 * 64-bit counter never grows that fast, so that is a clear.
 */
static int can_wrap(uint64_t prev, uint64_t cur, unsigned bits)
{
	uint64_t half = counter_max(bits) / 2;

	return bits >= 32 && prev > half && cur <= half;
}

uint64_t pmcalc_delta(uint64_t prev, uint64_t cur, unsigned bits,
		      enum pm_step *how)
{
	uint64_t max = counter_max(bits);
	enum pm_step step = PM_STEP_OK;
	uint64_t d;

	if (cur >= prev) {
		d = cur - prev;
		if (bits < 64 && cur == max)
			step = PM_STEP_SATURATED;
	} else if (can_wrap(prev, cur, bits)) {
		d = (max - prev) + cur + 1;
		step = PM_STEP_WRAP;
	} else {
		d = cur;
		step = PM_STEP_RESET;
	}
	if (how)
		*how = step;
	return d;
}

/* The administrator cleared the error counters: the port starts afresh. */
static void drop_history(struct pm_port *p)
{
	memset(p->bucket, 0, sizeof(p->bucket));
	memset(p->bucket_start, 0, sizeof(p->bucket_start));
	memset(p->downs, 0, sizeof(p->downs));
	p->downs_pos = 0;
}

static void add_errors(struct pm_port *p, const uint64_t *delta,
		       uint64_t now_ms)
{
	uint64_t start = now_ms - now_ms % BUCKET_MS;
	unsigned i = (unsigned)((now_ms / BUCKET_MS) % PM_BUCKETS);

	if (p->bucket_start[i] != start) {
		memset(p->bucket[i], 0, sizeof(p->bucket[i]));
		p->bucket_start[i] = start;
	}
	for (int c = 0; c < PMC_N_ERRORS; c++) {
		uint64_t sum = (uint64_t)p->bucket[i][c] + delta[c];

		p->bucket[i][c] = sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
	}
}

static void add_downs(struct pm_port *p, uint64_t downs)
{
	p->downs[p->downs_pos] = downs > UINT16_MAX ? UINT16_MAX : (uint16_t)downs;
	p->downs_pos = (uint8_t)((p->downs_pos + 1) % PM_FLAP_INTERVALS);
}

/* One counter's step; 0 when this read only sets its baseline. */
static int step_counter(struct pm_port *p, const struct pma_sample *s,
			int c, int cleared, struct pm_step_report *r)
{
	uint32_t bit = 1u << c;
	enum pm_step how;

	if (!(s->have & bit) || !(p->last.have & bit) ||
	    ((s->wide ^ p->last.wide) & bit))
		return 0;
	int wide = (s->wide & bit) != 0;
	uint64_t prev = cleared && !wide ? 0 : p->last.v[c];
	unsigned bits = wide ? 64 : pma_counter_info[c].bits;

	r->delta[c] = pmcalc_delta(prev, s->v[c], bits, &how);
	switch (how) {
	case PM_STEP_WRAP:
		r->wrapped |= bit;
		p->wraps++;
		break;
	case PM_STEP_RESET:
		r->reset |= bit;
		p->resets++;
		if (c < PMC_N_ERRORS)
			r->external_reset = 1;
		break;
	case PM_STEP_SATURATED:
		r->saturated |= bit;
		break;
	case PM_STEP_OK:
		break;
	}
	return 1;
}

void pmcalc_update(struct pm_port *p, const struct pma_sample *s,
		   uint64_t now_ms, int cleared, struct pm_step_report *r)
{
	struct pm_step_report own;

	if (!r)
		r = &own;
	memset(r, 0, sizeof(*r));
	memset(p->rate, 0, sizeof(p->rate));
	if (!p->have_last) {
		/* the totals start where the device's counters are, so that
		   they read as perfquery's until a clear */
		r->baseline = 1;
		for (int c = 0; c < PMC_N; c++)
			if (s->have & (1u << c))
				p->total[c] = s->v[c];
	} else {
		double secs = now_ms > p->last_ms ?
			(double)(now_ms - p->last_ms) / MS_PER_S : 0;

		for (int c = 0; c < PMC_N; c++) {
			if (!step_counter(p, s, c, cleared, r))
				continue;
			p->total[c] += r->delta[c];
			if (secs > 0)
				p->rate[c] = (double)r->delta[c] / secs;
		}
		if (r->external_reset)
			drop_history(p);
		add_errors(p, r->delta, now_ms);
		add_downs(p, r->delta[PMC_LINK_DOWNED]);
	}
	p->last = *s;
	p->last_ms = now_ms;
	p->have_last = 1;
}

int pmcalc_needs_clear(const struct pma_sample *s)
{
	for (int c = 0; c < PMC_N; c++) {
		uint32_t bit = 1u << c;

		if (!(s->have & bit) || (s->wide & bit))
			continue;
		/* bits <= 32: no overflow in 64 bits */
		if (s->v[c] * CLEAR_DEN >= counter_max(pma_counter_info[c].bits) * CLEAR_NUM)
			return 1;
	}
	return 0;
}

void pm_thresholds_default(struct pm_thresholds *t)
{
	memcpy(t->per_hour, default_per_hour, sizeof(t->per_hour));
}

int pm_threshold_index(const char *name)
{
	if (!name)
		return -1;
	for (int c = 0; c <= PMC_XMIT_WAIT; c++)
		if (strcmp(name, pma_counter_info[c].name) == 0)
			return c;
	return -1;
}

void pmcalc_judge(const struct pm_port *p, const struct pm_thresholds *t,
		  uint64_t now_ms, struct pm_verdict *v)
{
	memset(v, 0, sizeof(*v));
	if (!p->have_last)
		return;
	for (int i = 0; i < PM_BUCKETS; i++) {
		if (p->bucket_start[i] > now_ms ||
		    now_ms - p->bucket_start[i] >= HOUR_MS)
			continue;	/* older than the hour */
		for (int c = 0; c < PMC_N_ERRORS; c++)
			v->hour[c] += p->bucket[i][c];
	}
	for (int c = 0; c < PMC_N_ERRORS; c++)
		if (t->per_hour[c] && v->hour[c] > t->per_hour[c])
			v->over |= 1u << c;
	if (v->over)
		v->flags |= PMV_ERRORS;
	for (int i = 0; i < PM_FLAP_INTERVALS; i++)
		v->downs += p->downs[i];
	if (v->downs >= PM_FLAP_DOWNS)
		v->flags |= PMV_FLAPPING;
	v->xmit_wait_rate = p->rate[PMC_XMIT_WAIT];
	if (t->per_hour[PMC_XMIT_WAIT] &&
	    v->xmit_wait_rate > t->per_hour[PMC_XMIT_WAIT] / S_PER_HOUR)
		v->flags |= PMV_HOT;
}

struct lines {
	char *buf;
	size_t len, used;
	int n;
};

/* One reason, counted; written only if the whole line fits. */
static void add_line(struct lines *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void add_line(struct lines *o, const char *fmt, ...)
{
	va_list ap;
	int w;

	o->n++;
	if (o->used + 1 >= o->len)
		return;
	va_start(ap, fmt);
	w = vsnprintf(o->buf + o->used, o->len - o->used, fmt, ap);
	va_end(ap);
	if (w >= 0 && (size_t)w < o->len - o->used)
		o->used += (size_t)w;
	o->buf[o->used] = '\0';
}

int pmcalc_reasons(const struct pm_verdict *v, const struct pm_thresholds *t,
		   char *buf, size_t len)
{
	struct lines o = { buf, len, 0, 0 };

	if (buf && len)
		buf[0] = '\0';
	else
		o.len = 0;
	for (int c = 0; c < PMC_N_ERRORS; c++)
		if (v->over & (1u << c))
			add_line(&o, "%s: %llu in the last hour (threshold %llu)\n",
				 pma_counter_info[c].name,
				 (unsigned long long)v->hour[c],
				 (unsigned long long)t->per_hour[c]);
	if (v->flags & PMV_FLAPPING)
		add_line(&o, "flapping: %s +%u in the last %d sweeps\n",
			 pma_counter_info[PMC_LINK_DOWNED].name, v->downs,
			 PM_FLAP_INTERVALS);
	if (v->flags & PMV_HOT)
		add_line(&o, "hot: %s %.0f per second (threshold %.0f)\n",
			 pma_counter_info[PMC_XMIT_WAIT].name, v->xmit_wait_rate,
			 t->per_hour[PMC_XMIT_WAIT] / S_PER_HOUR);
	return o.n;
}

static double worse(double worst, double value, double limit)
{
	if (limit <= 0)
		return worst;	/* not judged */
	return value / limit > worst ? value / limit : worst;
}

double pmcalc_severity(const struct pm_verdict *v,
		       const struct pm_thresholds *t)
{
	double w = 0;

	for (int c = 0; c < PMC_N_ERRORS; c++)
		w = worse(w, (double)v->hour[c], (double)t->per_hour[c]);
	w = worse(w, v->downs, PM_FLAP_DOWNS);
	return worse(w, v->xmit_wait_rate,
		     t->per_hour[PMC_XMIT_WAIT] / S_PER_HOUR);
}

int pmcalc_one_sided_symbols(const struct pm_verdict *a,
			     const struct pm_verdict *b)
{
	uint32_t bit = 1u << PMC_SYMBOL_ERR;
	int in_a = (a->over & bit) != 0, in_b = (b->over & bit) != 0;

	if (in_a == in_b)
		return 0;
	return in_a ? 1 : 2;
}
