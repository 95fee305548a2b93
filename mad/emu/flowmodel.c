/*
 * The flow-level traffic model of mad/emu/flowmodel.h: max-min fair
 * sharing by progressive filling, then head-of-line holds, until they
 * settle.
 */
#include "mad/emu/flowmodel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Scratch space of one solve. */
struct fm_work {
	uint32_t n_links, n_flows;
	const double *cap;
	const struct fm_flow *f;
	double *limit;		/* per flow: its demand, lowered by holds */
	int *bott;		/* per flow: path index of its full link, -1 */
	int *held_at;		/* per flow: path buffer it is held at, -1 */
	uint8_t *frozen;
	double *resid;		/* per link */
	uint32_t *cnt;
	double *hold;		/* per (link, VL) buffer: what it drains of each
				 * byte/s offered to it (1: not held) */
};

static uint32_t buf_key(const struct fm_flow *f, unsigned i)
{
	return f->link[i] * FM_NVL + f->vl[i];
}

/* Rule 1: max-min fair rates under w->limit, by progressive filling. */
static void maxmin(struct fm_work *w, struct fm_rate *out)
{
	for (uint32_t l = 0; l < w->n_links; l++)
		w->resid[l] = w->cap[l];
	for (uint32_t i = 0; i < w->n_flows; i++) {
		out[i].rate = 0;
		w->bott[i] = -1;
		w->frozen[i] = w->f[i].n == 0 || w->limit[i] <= FM_EPS;
	}
	for (;;) {
		for (uint32_t l = 0; l < w->n_links; l++)
			w->cnt[l] = 0;
		double inc = INFINITY;
		for (uint32_t i = 0; i < w->n_flows; i++) {
			if (w->frozen[i])
				continue;
			for (unsigned k = 0; k < w->f[i].n; k++)
				w->cnt[w->f[i].link[k]]++;
			inc = fmin(inc, w->limit[i] - out[i].rate);
		}
		if (isinf(inc))
			return;	/* every flow has stopped */
		for (uint32_t l = 0; l < w->n_links; l++)
			if (w->cnt[l])
				inc = fmin(inc, w->resid[l] / w->cnt[l]);
		inc = fmax(inc, 0);
		for (uint32_t i = 0; i < w->n_flows; i++) {
			if (w->frozen[i])
				continue;
			out[i].rate += inc;
			for (unsigned k = 0; k < w->f[i].n; k++)
				w->resid[w->f[i].link[k]] -= inc;
		}
		/* stop the flows at their limit or on a full link: at least
		 * the one that set inc, so this loop ends */
		for (uint32_t i = 0; i < w->n_flows; i++) {
			if (w->frozen[i])
				continue;
			if (out[i].rate >= w->limit[i] - FM_EPS) {
				w->frozen[i] = 1;
				continue;
			}
			for (unsigned k = 0; k < w->f[i].n; k++)
				if (w->resid[w->f[i].link[k]] <= FM_EPS) {
					w->frozen[i] = 1;
					w->bott[i] = (int)k;
					break;
				}
		}
	}
}

/* Does flow i get less than its demand? */
static int stalled(const struct fm_work *w, uint32_t i, const struct fm_rate *out)
{
	return out[i].rate < w->f[i].demand - FM_EPS;
}

/*
 * Where stalled flow i waits: returns the last path link it waits at
 * (-1: it does not), and in *fill the last path buffer it fills.  Held at
 * the buffer after link m (running at its held cap): links and buffers
 * 0 .. m.  Short at its full link k: links 0 .. k, buffers 0 .. k-1.
 */
static int wait_to(const struct fm_work *w, uint32_t i, const struct fm_rate *out,
		   int *fill)
{
	*fill = -1;
	if (!stalled(w, i, out))
		return -1;
	if (w->held_at[i] >= 0 && out[i].rate >= w->limit[i] - FM_EPS) {
		*fill = w->held_at[i];
		return w->held_at[i];
	}
	if (w->bott[i] >= 0)
		*fill = w->bott[i] - 1;
	return w->bott[i];
}

/* Rule 2: the buffers stalled flows fill, each draining at the least
 * rate / demand of the flows filling it. */
static void fill_holds(struct fm_work *w, const struct fm_rate *out)
{
	for (size_t b = 0; b < (size_t)w->n_links * FM_NVL; b++)
		w->hold[b] = INFINITY;
	for (uint32_t i = 0; i < w->n_flows; i++) {
		int last;
		wait_to(w, i, out, &last);
		if (last > (int)w->f[i].n - 2)
			last = (int)w->f[i].n - 2;	/* no buffer after the sink */
		for (int k = 0; k <= last; k++) {
			uint32_t b = buf_key(&w->f[i], (unsigned)k);
			w->hold[b] = fmin(w->hold[b], out[i].rate / w->f[i].demand);
		}
	}
}

/* Holds each flow to its share of the slowest buffer it waits in: its
 * demand times what the buffer drains per byte/s offered.  1 if a cap fell. */
static int apply_holds(struct fm_work *w, const struct fm_rate *out)
{
	int changed = 0;
	for (uint32_t i = 0; i < w->n_flows; i++) {
		const struct fm_flow *f = &w->f[i];
		double h = INFINITY;
		int at = -1;
		for (unsigned k = 0; f->n >= 2 && k <= f->n - 2; k++) {
			double x = w->hold[buf_key(f, k)] * f->demand;
			if (x <= h) {	/* the furthest of equal holds */
				h = x;
				at = (int)k;
			}
		}
		if (at >= 0 && h < out[i].rate - FM_EPS && h < w->limit[i] - FM_EPS) {
			w->limit[i] = h;
			w->held_at[i] = at;
			changed = 1;
		}
	}
	return changed;
}

static int check_flows(uint32_t n_links, uint32_t n_flows,
		       const struct fm_flow *flows, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < n_flows; i++)
		for (unsigned k = 0; k < flows[i].n; k++) {
			if (flows[i].link[k] >= n_links) {
				snprintf(err, errlen, "flow %u: link %u of %u links",
					 i, flows[i].link[k], n_links);
				return -1;
			}
			if (flows[i].vl[k] >= FM_NVL) {
				snprintf(err, errlen, "flow %u: VL %u", i,
					 flows[i].vl[k]);
				return -1;
			}
		}
	return 0;
}

static void work_free(struct fm_work *w)
{
	free(w->limit);
	free(w->bott);
	free(w->held_at);
	free(w->frozen);
	free(w->resid);
	free(w->cnt);
	free(w->hold);
}

int fm_solve(uint32_t n_links, const double *cap, uint32_t n_flows,
	     const struct fm_flow *flows, struct fm_rate *out, double *sent,
	     uint8_t *waits, char *err, size_t errlen)
{
	if (check_flows(n_links, n_flows, flows, err, errlen) < 0)
		return -1;
	size_t nf = n_flows ? n_flows : 1, nl = n_links ? n_links : 1;
	struct fm_work w = {
		.n_links = n_links, .n_flows = n_flows, .cap = cap, .f = flows,
		.limit = calloc(nf, sizeof(double)),
		.bott = calloc(nf, sizeof(int)),
		.held_at = calloc(nf, sizeof(int)),
		.frozen = calloc(nf, 1),
		.resid = calloc(nl, sizeof(double)),
		.cnt = calloc(nl, sizeof(uint32_t)),
		.hold = calloc(nl * FM_NVL, sizeof(double)),
	};
	if (!w.limit || !w.bott || !w.held_at || !w.frozen || !w.resid ||
	    !w.cnt || !w.hold) {
		work_free(&w);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (uint32_t i = 0; i < n_flows; i++) {
		w.limit[i] = flows[i].demand > 0 ? flows[i].demand : 0;
		w.held_at[i] = -1;
	}
	for (int round = 0; round < FM_MAX_ROUNDS; round++) {
		maxmin(&w, out);
		fill_holds(&w, out);
		if (!apply_holds(&w, out))
			break;
	}
	for (uint32_t i = 0; i < n_flows; i++) {
		int fill;
		out[i].wait_to = wait_to(&w, i, out, &fill);
	}
	for (uint32_t l = 0; l < n_links; l++) {
		if (sent)
			sent[l] = 0;
		if (waits)
			waits[l] = 0;
	}
	for (uint32_t i = 0; i < n_flows; i++)
		for (unsigned k = 0; k < flows[i].n; k++) {
			if (sent)
				sent[flows[i].link[k]] += out[i].rate;
			if (waits && (int)k <= out[i].wait_to)
				waits[flows[i].link[k]] = 1;
		}
	work_free(&w);
	return 0;
}

double fm_wait_share(double sent, double cap, int waits)
{
	if (!waits || cap <= 0 || sent >= cap)
		return 0;
	return 1 - sent / cap;
}
