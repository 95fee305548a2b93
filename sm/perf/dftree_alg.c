/*
 * dFtree's Algorithm 1: end-point hot-spots and their contributors
 * (sm/perf/dftree_alg.h gives the rules and the decisions).
 */
#include "sm/perf/dftree_alg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sm/base/topo.h"

#define OCTETS_PER_DATA_UNIT 4.0	/* PortXmitData counts 4-octet words */
#define BITS_PER_OCTET 8.0
#define GBPS 1e9
#define SL_MAX 15
#define NONE ((size_t)-1)

/* Lanes of a LinkWidthActive encoding; 0 unknown. */
static unsigned lanes(uint8_t width_active)
{
	switch (width_active) {
	case TOPO_WIDTH_1X: return 1;
	case TOPO_WIDTH_2X: return 2;
	case TOPO_WIDTH_4X: return 4;
	case TOPO_WIDTH_8X: return 8;
	case TOPO_WIDTH_12X: return 12;
	default: return 0;
	}
}

/*
 * Data rate of one lane in Gb/s: the signalling rate less the line code
 * (8b/10b up to QDR, 64b/66b for FDR and EDR; HDR's and NDR's are given
 * as data rates).  The extended speed, when set, is the active one.
 */
static double lane_gbps(uint8_t speed_active)
{
	switch (speed_active >> 4) {
	case TOPO_SPEED_FDR >> 4: return 14.0625 * 64 / 66;
	case TOPO_SPEED_EDR >> 4: return 25.78125 * 64 / 66;
	case TOPO_SPEED_HDR >> 4: return 50;
	case TOPO_SPEED_NDR >> 4: return 100;
	case 0: break;
	default: return 0;
	}
	switch (speed_active & 0x0f) {
	case TOPO_SPEED_SDR: return 2.5 * 8 / 10;
	case TOPO_SPEED_DDR: return 5.0 * 8 / 10;
	case TOPO_SPEED_QDR: return 10.0 * 8 / 10;
	default: return 0;
	}
}

double dft_link_rate(uint8_t width_active, uint8_t speed_active)
{
	return lanes(width_active) * lane_gbps(speed_active) * GBPS / BITS_PER_OCTET;
}

int dft_port_rates(uint64_t d_xmit_wait, uint64_t d_xmit_data,
		   double interval_s, double link_rate, struct dft_rates *r)
{
	if (!(interval_s > 0) || !(link_rate > 0))
		return -1;
	r->congestion = (double)d_xmit_wait / interval_s;
	r->bandwidth = (double)d_xmit_data * OCTETS_PER_DATA_UNIT / interval_s;
	r->utilisation = r->bandwidth / link_rate;
	return 0;
}

void dft_state_init(struct dft_state *s)
{
	memset(s, 0, sizeof(*s));
}

void dft_state_free(struct dft_state *s)
{
	for (size_t i = 0; i < s->n_hot; i++)
		free(s->hot[i].contrib);
	free(s->hot);
	dft_state_init(s);
}

void dft_actions_free(struct dft_actions *a)
{
	free(a->notice);
	free(a->event);
	memset(a, 0, sizeof(*a));
}

const struct dft_hotspot *dft_hotspot_by_lid(const struct dft_state *s,
					     uint16_t lid)
{
	for (size_t i = 0; i < s->n_hot; i++)
		if (s->hot[i].lid == lid)
			return &s->hot[i];
	return NULL;
}

/* Room for need elements of size elem in *arr; 0 or -1 (ENOMEM). */
static int reserve(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 8;
	while (n < need)
		n *= 2;
	void *p = realloc(*arr, n * elem);
	if (!p) {
		errno = ENOMEM;
		return -1;
	}
	*arr = p;
	*cap = n;
	return 0;
}

/* Room for n more notices and e more events. */
static int reserve_actions(struct dft_actions *a, size_t n, size_t e)
{
	if (reserve((void **)&a->notice, &a->cap_notice, a->n_notice + n,
		    sizeof(*a->notice)) < 0)
		return -1;
	return reserve((void **)&a->event, &a->cap_event, a->n_event + e,
		       sizeof(*a->event));
}

/* ---- the input, indexed by GUID ---- */

struct by_guid {
	uint64_t guid;
	size_t i;		/* the input's index */
};

struct step {
	const struct dft_input *in;
	const struct dft_params *p;
	struct by_guid *sw_by_guid, *ca_by_guid;	/* sorted by GUID */
	size_t *hot_of_sw;	/* sw index -> s->hot index, NONE */
	uint8_t *cleared;	/* s->hot index (those at the start) -> 1 */
};

static int cmp_guid(const void *a, const void *b)
{
	uint64_t x = ((const struct by_guid *)a)->guid;
	uint64_t y = ((const struct by_guid *)b)->guid;
	return x < y ? -1 : x > y;
}

/* The input index of guid among n sorted, or NONE. */
static size_t find(const struct by_guid *idx, size_t n, uint64_t guid)
{
	struct by_guid k = { .guid = guid };
	const struct by_guid *f = n ? bsearch(&k, idx, n, sizeof(*idx), cmp_guid) : NULL;
	return f ? f->i : NONE;
}

/* The switch port facing (guid, lid), or NONE. */
static size_t find_sw(const struct step *st, uint64_t guid, uint16_t lid)
{
	size_t i = find(st->sw_by_guid, st->in->n_sw, guid);
	return i != NONE && st->in->sw[i].ca_lid == lid ? i : NONE;
}

/* The CA port (guid, lid), or NONE. */
static size_t find_ca(const struct step *st, uint64_t guid, uint16_t lid)
{
	size_t i = find(st->ca_by_guid, st->in->n_ca, guid);
	return i != NONE && st->in->ca[i].lid == lid ? i : NONE;
}

/* Sorts idx (n); 1 when a GUID is there twice. */
static int sort_repeats(struct by_guid *idx, size_t n)
{
	if (n)
		qsort(idx, n, sizeof(*idx), cmp_guid);
	for (size_t i = 1; i < n; i++)
		if (idx[i - 1].guid == idx[i].guid)
			return 1;
	return 0;
}

static void step_free(struct step *st)
{
	free(st->sw_by_guid);
	free(st->ca_by_guid);
	free(st->hot_of_sw);
	free(st->cleared);
}

/* The indices; -1 with errno (ENOMEM, EINVAL: a GUID twice). */
static int step_init(struct step *st, const struct dft_input *in,
		     const struct dft_params *p, size_t n_hot)
{
	memset(st, 0, sizeof(*st));
	st->in = in;
	st->p = p;
	st->sw_by_guid = malloc((in->n_sw + 1) * sizeof(*st->sw_by_guid));
	st->ca_by_guid = malloc((in->n_ca + 1) * sizeof(*st->ca_by_guid));
	st->hot_of_sw = malloc((in->n_sw + 1) * sizeof(*st->hot_of_sw));
	st->cleared = calloc(n_hot + 1, 1);
	if (!st->sw_by_guid || !st->ca_by_guid || !st->hot_of_sw || !st->cleared) {
		step_free(st);
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < in->n_sw; i++) {
		st->sw_by_guid[i] = (struct by_guid){ in->sw[i].ca_guid, i };
		st->hot_of_sw[i] = NONE;
	}
	for (size_t i = 0; i < in->n_ca; i++)
		st->ca_by_guid[i] = (struct by_guid){ in->ca[i].guid, i };
	if (sort_repeats(st->sw_by_guid, in->n_sw) ||
	    sort_repeats(st->ca_by_guid, in->n_ca)) {
		step_free(st);
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* ---- the decisions ---- */

static int valid(const struct dft_params *p)
{
	return isfinite(p->threshold) && p->threshold >= 0 &&
	       isfinite(p->utilisation) && p->utilisation > 0 &&
	       p->fast_sl <= SL_MAX && p->slow_sl <= SL_MAX;
}

static void notice(struct dft_actions *a, enum dft_notice_kind kind,
		   const struct dft_hotspot *h, uint64_t to_guid,
		   uint16_t to_lid, uint8_t sl)
{
	a->notice[a->n_notice++] = (struct dft_notice){
		.kind = kind, .to_guid = to_guid, .to_lid = to_lid,
		.hot_guid = h->guid, .hot_lid = h->lid, .sl = sl,
	};
}

static void event(struct dft_actions *a, enum dft_event_kind kind,
		  const struct dft_hotspot *h, double congestion)
{
	a->event[a->n_event++] = (struct dft_event){
		.kind = kind, .guid = h->guid, .lid = h->lid, .since = h->since,
		.congestion = congestion, .n_contrib = h->n_contrib,
	};
}

/*
 * Clears hot-spot h: an UnPath with the fast SL to each contributor still
 * in the input (all of them, after drop_vanished), then the event.
 */
static int clear_hot(const struct step *st, struct dft_hotspot *h,
		     enum dft_event_kind kind, double congestion,
		     struct dft_actions *a)
{
	if (reserve_actions(a, h->n_contrib, 1) < 0)
		return -1;
	size_t told = 0;
	for (size_t c = 0; c < h->n_contrib; c++) {
		const struct dft_contrib *k = &h->contrib[c];
		if (find_ca(st, k->guid, k->lid) == NONE)
			continue;
		notice(a, DFT_UNPATH, h, k->guid, k->lid, st->p->fast_sl);
		told++;
	}
	h->n_contrib = told;
	event(a, kind, h, congestion);
	free(h->contrib);
	h->contrib = NULL;
	h->n_contrib = h->cap_contrib = 0;
	return 0;
}

/* Drops h's contributors missing from the input; no notice. */
static void drop_vanished(const struct step *st, struct dft_hotspot *h)
{
	size_t kept = 0;

	for (size_t c = 0; c < h->n_contrib; c++)
		if (find_ca(st, h->contrib[c].guid, h->contrib[c].lid) != NONE)
			h->contrib[kept++] = h->contrib[c];
	h->n_contrib = kept;
}

/* Where guid is, or goes, among h's contributors (sorted by GUID). */
static size_t contrib_pos(const struct dft_hotspot *h, uint64_t guid, int *found)
{
	size_t lo = 0, hi = h->n_contrib;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (h->contrib[mid].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < h->n_contrib && h->contrib[lo].guid == guid;
	return lo;
}

/*
 * Every other CA port over the threshold and below the utilisation bound
 * that is not yet h's contributor becomes one, with a RePath.
 */
static int take_contributors(const struct step *st, struct dft_hotspot *h,
			     uint64_t now, struct dft_actions *a)
{
	const struct dft_params *p = st->p;

	for (size_t i = 0; i < st->in->n_ca; i++) {
		const struct dft_ca_port *c = &st->in->ca[i];
		int found;
		if (c->guid == h->guid || !(c->congestion > p->threshold) ||
		    !(c->utilisation < p->utilisation))
			continue;
		size_t at = contrib_pos(h, c->guid, &found);
		if (found)
			continue;
		if (reserve((void **)&h->contrib, &h->cap_contrib, h->n_contrib + 1,
			    sizeof(*h->contrib)) < 0 ||
		    reserve_actions(a, 1, 0) < 0)
			return -1;
		memmove(&h->contrib[at + 1], &h->contrib[at],
			(h->n_contrib - at) * sizeof(*h->contrib));
		h->contrib[at] = (struct dft_contrib){
			.guid = c->guid, .lid = c->lid, .since = now };
		h->n_contrib++;
		notice(a, DFT_REPATH, h, c->guid, c->lid, p->slow_sl);
	}
	return 0;
}

/* Switch port j over the threshold: its CA port is (or becomes) a hot-spot. */
static int over(struct step *st, struct dft_state *s, size_t j, uint64_t now,
		struct dft_actions *a)
{
	const struct dft_sw_port *sw = &st->in->sw[j];
	size_t ev = NONE;

	if (st->hot_of_sw[j] == NONE) {
		if (reserve((void **)&s->hot, &s->cap_hot, s->n_hot + 1,
			    sizeof(*s->hot)) < 0 || reserve_actions(a, 0, 1) < 0)
			return -1;
		s->hot[s->n_hot] = (struct dft_hotspot){
			.guid = sw->ca_guid, .lid = sw->ca_lid, .since = now };
		st->hot_of_sw[j] = s->n_hot++;
		ev = a->n_event;
		event(a, DFT_APPEARED, &s->hot[st->hot_of_sw[j]], sw->congestion);
	}
	struct dft_hotspot *h = &s->hot[st->hot_of_sw[j]];
	int rc = take_contributors(st, h, now, a);
	if (ev != NONE)
		a->event[ev].n_contrib = h->n_contrib;
	return rc;
}

/* Removes the hot-spots marked cleared, keeping the others' order. */
static void compact(const struct step *st, struct dft_state *s, size_t n_start)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->n_hot; i++) {
		if (i < n_start && st->cleared[i])
			continue;
		s->hot[kept++] = s->hot[i];
	}
	s->n_hot = kept;
}

/* The hot-spots whose switch port is missing: cleared; the others mapped. */
static int vanished(struct step *st, struct dft_state *s, struct dft_actions *a)
{
	for (size_t i = 0; i < s->n_hot; i++) {
		struct dft_hotspot *h = &s->hot[i];
		size_t j = find_sw(st, h->guid, h->lid);
		if (j != NONE) {
			st->hot_of_sw[j] = i;
			drop_vanished(st, h);
			continue;
		}
		if (clear_hot(st, h, DFT_VANISHED, 0, a) < 0)
			return -1;
		st->cleared[i] = 1;
	}
	return 0;
}

static int decide(struct step *st, struct dft_state *s, uint64_t now,
		  struct dft_actions *a)
{
	if (vanished(st, s, a) < 0)
		return -1;
	for (size_t j = 0; j < st->in->n_sw; j++) {
		double cong = st->in->sw[j].congestion;
		size_t hi = st->hot_of_sw[j];
		if (cong > st->p->threshold) {
			if (over(st, s, j, now, a) < 0)
				return -1;
		} else if (cong < st->p->threshold && hi != NONE) {
			if (clear_hot(st, &s->hot[hi], DFT_CLEARED, cong, a) < 0)
				return -1;
			st->cleared[hi] = 1;
			st->hot_of_sw[j] = NONE;
		}
	}
	return 0;
}

int dft_step(struct dft_state *s, const struct dft_input *in,
	     const struct dft_params *p, uint64_t now, struct dft_actions *a)
{
	struct step st;

	a->n_notice = a->n_event = 0;
	if (!valid(p)) {
		errno = EINVAL;
		return -1;
	}
	size_t n_start = s->n_hot;
	if (step_init(&st, in, p, n_start) < 0)
		return -1;
	int rc = decide(&st, s, now, a);
	int err = errno;
	compact(&st, s, n_start);
	step_free(&st);
	errno = err;
	return rc;
}
