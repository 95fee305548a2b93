/* Ordered LFT transitions (see order.h). */
#include "reconfig/order.h"

#include <stdlib.h>
#include <string.h>

#define ORDER_NONE UINT32_MAX
#define IN_PLACE (-1)		/* W: the new route from here needs no wave */
/* an entry's code */
#define CODE_CHANGES 1	/* wanted differs from held, or held not known */
#define CODE_DROPS 2	/* held, and it drops the LID */

struct order {
	const struct fabric *f;
	const struct lft_tables *t;
	const struct order_held *h;
	uint32_t n_lid, blocks, stride;
	uint32_t *nbr;		/* row * stride + port -> the switch row there */
	int32_t *W;		/* per row, one LID at a time: see column() */
	uint8_t *state;		/* per row: 0 not yet, 1 on the walk, 2 done */
	uint32_t *stack;
	uint16_t *B;		/* per row * blocks: the block's wave */
	uint8_t *chg;		/* per row * blocks: the block changes */
	uint8_t *ew;		/* per entry: its wave (the split plan) */
	uint8_t *code;		/* per entry: CODE_* below */
	uint8_t *colchg;	/* per LID: some switch's entry changes */
	int split;		/* entries, not blocks, get waves */
	int grew;		/* a block's wave rose in this pass */
	int too_deep;
	uint32_t deepest, deepest_lid;
};

static int held(const struct order *o, uint32_t r, uint32_t lid, uint8_t *port)
{
	const struct order_held *h = o->h;
	uint32_t b = lid / FAB_LFT_BLOCK;
	if (!h || b >= h->blocks || !h->known[(size_t)r * h->blocks + b])
		return 0;
	*port = h->port[(size_t)r * o->n_lid + lid];
	return 1;
}

/* Whether row r's entry for lid changes; *drops: it drops the LID now. */
static int changes(const struct order *o, uint32_t r, uint32_t lid, int *drops)
{
	uint8_t c = o->code[(size_t)r * o->n_lid + lid];
	*drops = (c & CODE_DROPS) != 0;
	return c & CODE_CHANGES;
}

/* The codes, once: what held() and the tables say of every entry. */
static int codes(struct order *o, struct order_result *r)
{
	const struct lft_tables *t = o->t;
	o->code = malloc((size_t)t->n_sw * o->n_lid + 1);
	o->colchg = calloc(o->n_lid + 1, 1);
	if (!o->code || !o->colchg)
		return -1;
	for (uint32_t row = 0; row < t->n_sw; row++)
		for (uint32_t lid = 0; lid < o->n_lid; lid++) {
			uint8_t now, c = 0;
			if (!held(o, row, lid, &now))
				c = CODE_CHANGES;
			else
				c = (now == LFT_DROP ? CODE_DROPS : 0) |
				    (now != lft_row(t, row)[lid] ? CODE_CHANGES : 0);
			o->code[(size_t)row * o->n_lid + lid] = c;
			if (c & CODE_CHANGES) {
				o->chg[(size_t)row * o->blocks + lid / FAB_LFT_BLOCK] = 1;
				o->colchg[lid] = 1;
				r->entries++;
			}
		}
	return 0;
}

static uint32_t next_row(const struct order *o, uint32_t r, uint32_t lid)
{
	uint8_t p = lft_row(o->t, r)[lid];
	return p < o->stride ? o->nbr[(size_t)r * o->stride + p] : ORDER_NONE;
}

/*
 * One switch's wave for lid given W of its new next hop: w = W + 1 for a
 * changing entry.  Returns W of the switch itself for those before it.
 */
static int32_t settle(struct order *o, uint32_t r, uint32_t lid, int32_t w_next)
{
	int drops;
	if (!changes(o, r, lid, &drops))
		return w_next;
	int32_t w = w_next + 1;
	if ((uint32_t)w > o->deepest) {
		o->deepest = (uint32_t)w;
		o->deepest_lid = lid;
	}
	if (w >= ORDER_MAX_WAVES) {
		o->too_deep = 1;
		w = ORDER_MAX_WAVES - 1;
	}
	if (o->split) {
		o->ew[(size_t)r * o->n_lid + lid] = (uint8_t)w;
	} else {
		uint16_t *b = &o->B[(size_t)r * o->blocks + lid / FAB_LFT_BLOCK];
		if (w > *b) {
			*b = (uint16_t)w;
			o->grew = 1;
		}
		w = *b;
	}
	return drops ? IN_PLACE : w;
}

/* W of every row for lid: each row's new route followed to where it is known. */
static void column(struct order *o, uint32_t lid)
{
	uint32_t n = o->t->n_sw;
	memset(o->state, 0, n);
	for (uint32_t s = 0; s < n; s++) {
		if (o->state[s])
			continue;
		uint32_t top = 0, v = s;
		int32_t w = IN_PLACE;
		for (;;) {
			o->state[v] = 1;
			o->stack[top++] = v;
			uint32_t nx = next_row(o, v, lid);
			if (nx == ORDER_NONE || o->state[nx] == 1)
				break;	/* the route ends here (a loop: the verifier's) */
			if (o->state[nx] == 2) {
				w = o->W[nx];
				break;
			}
			v = nx;
		}
		while (top) {
			v = o->stack[--top];
			w = settle(o, v, lid, w);
			o->W[v] = w;
			o->state[v] = 2;
		}
	}
}

static int build_nbr(struct order *o)
{
	const struct fabric *f = o->f;
	const struct lft_tables *t = o->t;
	o->stride = 1;
	for (uint32_t r = 0; r < t->n_sw; r++)
		if (f->nodes[t->sw_node[r]].nports + 1u > o->stride)
			o->stride = f->nodes[t->sw_node[r]].nports + 1u;
	o->nbr = malloc((size_t)t->n_sw * o->stride * sizeof(*o->nbr));
	if (!o->nbr)
		return -1;
	for (uint32_t r = 0; r < t->n_sw; r++) {
		uint32_t ni = t->sw_node[r];
		for (uint32_t p = 0; p < o->stride; p++) {
			uint32_t *x = &o->nbr[(size_t)r * o->stride + p];
			*x = ORDER_NONE;
			if (p == 0 || p > f->nodes[ni].nports)
				continue;
			const struct fab_port *fp = fabric_portp(f, ni, p);
			if (!(fp->flags & FPORT_PRESENT) || fp->remote == FAB_NONE)
				continue;
			uint32_t peer = f->ports[fp->remote].node;
			if (f->nodes[peer].type == FAB_SWITCH)
				*x = t->row_of_node[peer];
		}
	}
	return 0;
}

static int add_write(struct order_result *r, uint32_t *cap, uint32_t row,
		     uint32_t block, uint32_t wave, int how)
{
	if (r->n_w == *cap) {
		uint32_t c = *cap ? 2 * *cap : 1024;
		void *p = realloc(r->w, (size_t)c * sizeof(*r->w));
		if (!p)
			return -1;
		r->w = p;
		*cap = c;
	}
	r->w[r->n_w++] = (struct order_write){ row, block, (uint16_t)wave, (uint8_t)how };
	if (wave + 1 > r->waves)
		r->waves = wave + 1;
	return 0;
}

static int by_wave(const void *a, const void *b)
{
	const struct order_write *x = a, *y = b;
	if (x->wave != y->wave)
		return x->wave < y->wave ? -1 : 1;
	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	return (x->block > y->block) - (x->block < y->block);
}

/* The writes: a block once in its wave, or (split) once per wave of its entries. */
static int writes(struct order *o, struct order_result *r)
{
	uint32_t cap = 0;
	const struct lft_tables *t = o->t;
	for (uint32_t row = 0; row < t->n_sw; row++)
		for (uint32_t b = 0; b < o->blocks; b++) {
			size_t k = (size_t)row * o->blocks + b;
			if (!o->chg[k])
				continue;
			r->blocks++;
			if (!o->split) {
				if (add_write(r, &cap, row, b, o->B[k], ORDER_W_WHOLE) < 0)
					return -1;
				continue;
			}
			/* the distinct waves of its changing entries, ascending */
			uint64_t seen[(ORDER_MAX_WAVES + 63) / 64] = { 0 };
			uint32_t hi = 0, n = 0;
			for (uint32_t lid = b * FAB_LFT_BLOCK; lid < (b + 1) * FAB_LFT_BLOCK && lid < o->n_lid; lid++) {
				int drops;
				if (!changes(o, row, lid, &drops))
					continue;
				uint32_t w = o->ew[(size_t)row * o->n_lid + lid];
				if (!(seen[w / 64] >> (w % 64) & 1))
					n++;
				seen[w / 64] |= 1ull << (w % 64);
				hi = w > hi ? w : hi;
			}
			if (n > 1)
				r->split++;
			for (uint32_t w = 0; w <= hi; w++)
				if ((seen[w / 64] >> (w % 64) & 1) &&
				    add_write(r, &cap, row, b, w,
					      w < hi ? ORDER_W_PARTIAL : ORDER_W_WHOLE) < 0)
					return -1;
		}
	if (r->n_w)
		qsort(r->w, r->n_w, sizeof(*r->w), by_wave);
	return 0;
}

/*
 * The entries switch r may hold for lid while wave k is written: as held
 * before its wave, wanted after, either during it.  n: how many (1, 2).
 */
static int may_hold(const struct order *o, const struct order_result *r,
		    uint32_t row, uint32_t lid, uint32_t k, uint8_t e[2])
{
	uint8_t now, want = lft_row(o->t, row)[lid];
	int drops;
	if (!changes(o, row, lid, &drops)) {
		e[0] = want;
		return 1;
	}
	uint32_t w = r->entry_wave ? r->entry_wave[(size_t)row * o->n_lid + lid] :
		     o->B[(size_t)row * o->blocks + lid / FAB_LFT_BLOCK];
	if (!held(o, row, lid, &now))
		now = LFT_DROP;	/* unknown: the dependency check sees none */
	if (w < k) {
		e[0] = want;
		return 1;
	}
	e[0] = now;
	if (w > k)
		return 1;
	e[1] = want;
	return 2;
}

/* Row's entry for lid as held (end 0; LFT_DROP when unknown) or wanted (1). */
static uint8_t entry_at(const struct order *o, uint32_t row, uint32_t lid, int end)
{
	uint8_t now;
	if (end)
		return lft_row(o->t, row)[lid];
	return held(o, row, lid, &now) ? now : LFT_DROP;
}

/* Kahn over the channels (row * stride + port): 1 when dep has a cycle. */
static int cyclic(const struct order *o, const uint8_t *dep, uint32_t *indeg, uint32_t *q)
{
	uint32_t nch = o->t->n_sw * o->stride, qh = 0, qt = 0, left = 0;
	memset(indeg, 0, (size_t)nch * sizeof(*indeg));
	for (uint32_t a = 0; a < nch; a++)
		for (uint32_t p = 0; p < o->stride; p++)
			if (dep[(size_t)a * o->stride + p]) {
				uint32_t hd = o->nbr[a];
				indeg[hd * o->stride + p]++;
			}
	for (uint32_t a = 0; a < nch; a++)
		if (!indeg[a])
			q[qt++] = a;
		else
			left++;
	while (qh < qt) {
		uint32_t a = q[qh++];
		uint32_t hd = o->nbr[a];
		if (hd == ORDER_NONE)
			continue;
		for (uint32_t p = 0; p < o->stride; p++)
			if (dep[(size_t)a * o->stride + p]) {
				uint32_t b = hd * o->stride + p;
				if (--indeg[b] == 0) {
					q[qt++] = b;
					left--;
				}
			}
	}
	return left != 0;
}

/* The dependencies of the held tables (end 0) or the wanted ones (1). */
static void end_deps(const struct order *o, uint8_t *dep, int end)
{
	for (uint32_t lid = 1; lid < o->n_lid; lid++)
		for (uint32_t row = 0; row < o->t->n_sw; row++) {
			uint8_t e = entry_at(o, row, lid, end);
			if (e >= o->stride)
				continue;
			size_t a = (size_t)row * o->stride + e;
			uint32_t nx = o->nbr[a];
			if (nx == ORDER_NONE)
				continue;
			uint8_t g = entry_at(o, nx, lid, end);
			if (g < o->stride && o->nbr[(size_t)nx * o->stride + g] != ORDER_NONE)
				dep[a * o->stride + g] = 1;
		}
}

/* Into dep: what lid's routes may depend on while wave k is written. */
static void column_deps(const struct order *o, const struct order_result *r,
			uint8_t *dep, uint32_t lid, uint32_t k)
{
	for (uint32_t row = 0; row < o->t->n_sw; row++) {
		uint8_t e[2], g[2];
		int n = may_hold(o, r, row, lid, k, e);
		for (int i = 0; i < n; i++) {
			if (e[i] >= o->stride)
				continue;
			size_t a = (size_t)row * o->stride + e[i];
			uint32_t nx = o->nbr[a];
			if (nx == ORDER_NONE)
				continue;
			int m = may_hold(o, r, nx, lid, k, g);
			for (int j = 0; j < m; j++)
				if (g[j] < o->stride &&
				    o->nbr[(size_t)nx * o->stride + g[j]] != ORDER_NONE)
					dep[a * o->stride + g[j]] = 1;
		}
	}
}

/*
 * Whether every state of every wave is free of channel-dependency cycles
 * (all VLs as one): the dependencies any mix of what a wave's switches
 * may hold can make, together, have none.  1 safe; 0 not, *bad the wave;
 * 2 not known (the held or the wanted tables have a cycle themselves);
 * -1 ENOMEM.
 */
static int waves_acyclic(const struct order *o, const struct order_result *r, uint32_t *bad)
{
	size_t nch = (size_t)o->t->n_sw * o->stride;
	uint8_t *dep = malloc(nch * o->stride + 1), *base = malloc(nch * o->stride + 1);
	uint32_t *indeg = malloc((nch + 1) * sizeof(*indeg));
	uint32_t *q = malloc((nch + 1) * sizeof(*q));
	int rc = 1;
	if (!dep || !base || !indeg || !q) {
		rc = -1;
		goto out;
	}
	/*
	 * First the ends, the tables held and the tables wanted: if either
	 * has a cycle with every VL taken as one, this check has nothing to
	 * say (2).
	 */
	for (int end = 0; end < 2; end++) {
		memset(dep, 0, nch * o->stride);
		end_deps(o, dep, end);
		if (cyclic(o, dep, indeg, q)) {
			rc = 2;
			goto out;
		}
	}
	/* the columns that do not change: the same in every wave */
	memset(base, 0, nch * o->stride);
	for (uint32_t lid = 1; lid < o->n_lid; lid++)
		if (!o->colchg[lid])
			column_deps(o, r, base, lid, 0);
	for (uint32_t k = 0; k < r->waves && rc == 1; k++) {
		memcpy(dep, base, nch * o->stride);
		for (uint32_t lid = 1; lid < o->n_lid; lid++)
			if (o->colchg[lid])
				column_deps(o, r, dep, lid, k);
		if (cyclic(o, dep, indeg, q)) {
			*bad = k;
			rc = 0;
		}
	}
out:
	free(dep);
	free(base);
	free(indeg);
	free(q);
	return rc;
}

/* Whether a changing entry of row's block b forwards now (held, not dropped). */
static int forwards_changed(const struct order *o, uint32_t row, uint32_t b)
{
	for (uint32_t lid = b * FAB_LFT_BLOCK; lid < (b + 1) * FAB_LFT_BLOCK && lid < o->n_lid; lid++) {
		int drops;
		if (changes(o, row, lid, &drops) && !drops)
			return 1;
	}
	return 0;
}

/*
 * The drain: wave 0 drops every entry that changes, wave 1 writes the
 * tables.  While wave 0 lands a packet follows held entries until one
 * drops it, while wave 1 lands wanted ones (or is dropped): never a mix.
 */
static int drain(struct order *o, struct order_result *r)
{
	uint32_t cap = 0;
	free(r->w);
	free(o->ew);
	o->ew = NULL;
	r->w = NULL;
	r->n_w = r->waves = r->split = 0;
	r->blocks = 0;
	int any = 0;	/* a block with something to drop: else one wave */
	for (uint32_t row = 0; row < o->t->n_sw; row++)
		for (uint32_t b = 0; b < o->blocks; b++) {
			if (!o->chg[(size_t)row * o->blocks + b])
				continue;
			r->blocks++;
			if (forwards_changed(o, row, b)) {
				any = 1;
				if (add_write(r, &cap, row, b, 0, ORDER_W_DRAIN) < 0)
					return -1;
			}
		}
	for (uint32_t row = 0; row < o->t->n_sw; row++)
		for (uint32_t b = 0; b < o->blocks; b++)
			if (o->chg[(size_t)row * o->blocks + b] &&
			    add_write(r, &cap, row, b, (uint32_t)any, ORDER_W_WHOLE) < 0)
				return -1;
	r->drained = 1;
	return 0;
}

static void order_free(struct order *o)
{
	free(o->code);
	free(o->colchg);
	free(o->nbr);
	free(o->W);
	free(o->state);
	free(o->stack);
	free(o->B);
	free(o->chg);
}

int order_lft(const struct fabric *f, const struct lft_tables *t,
	      const struct order_held *h, struct order_result *r)
{
	struct order o = { .f = f, .t = t, .h = h };
	memset(r, 0, sizeof(*r));
	r->max_lid = t->max_lid;
	o.n_lid = t->max_lid + 1;
	o.blocks = t->max_lid / FAB_LFT_BLOCK + 1;
	size_t nb = (size_t)t->n_sw * o.blocks, nr = (size_t)t->n_sw + 1;
	o.W = malloc(nr * sizeof(*o.W));
	o.state = malloc(nr);
	o.stack = malloc(nr * sizeof(*o.stack));
	o.B = calloc(nb + 1, sizeof(*o.B));
	o.chg = calloc(nb + 1, 1);
	if (!o.W || !o.state || !o.stack || !o.B || !o.chg || build_nbr(&o) < 0)
		goto fail;
	if (codes(&o, r) < 0)
		goto fail;
	/*
	 * A wave per block: each pass raises a block to what its entries need
	 * given the others' waves, until none rises.  A chain of waiting
	 * blocks longer than the switches are is a cycle between blocks.
	 */
	for (uint32_t pass = 0;; pass++) {
		o.grew = 0;
		for (uint32_t lid = 1; lid < o.n_lid && !o.too_deep; lid++)
			if (o.colchg[lid])
				column(&o, lid);
		if (!o.grew || o.too_deep)
			break;
		if (pass > t->n_sw) {
			o.too_deep = 1;
			break;
		}
	}
	if (o.too_deep) {
		/* blocks that wait for each other: a wave per entry */
		o.split = 1;
		o.too_deep = 0;
		o.deepest = 0;
		o.ew = calloc((size_t)t->n_sw * o.n_lid + 1, 1);
		if (!o.ew)
			goto fail;
		for (uint32_t lid = 1; lid < o.n_lid; lid++)
			if (o.colchg[lid])
				column(&o, lid);
		if (o.too_deep)
			goto fail;	/* a route of ORDER_MAX_WAVES changing switches */
	}
	r->deepest_lid = o.deepest_lid;
	if (writes(&o, r) < 0)
		goto fail;
	r->entry_wave = o.ew;
	o.ew = NULL;
	uint32_t bad = 0;
	int safe = waves_acyclic(&o, r, &bad);
	if (safe < 0)
		goto fail;
	r->dep_checked = safe != 2;
	if (!safe) {
		r->cycle_wave = bad;
		o.ew = r->entry_wave;
		r->entry_wave = NULL;
		if (drain(&o, r) < 0)
			goto fail;
	}
	order_free(&o);
	return 0;
fail:
	free(o.ew);
	order_free(&o);
	order_result_free(r);
	return -1;
}

void order_payload(const struct lft_tables *t, const struct order_held *h,
		   const struct order_result *r, uint32_t i, uint8_t *out)
{
	const struct order_write *w = &r->w[i];
	uint32_t n_lid = t->max_lid + 1, first = w->block * FAB_LFT_BLOCK;
	int known = h && w->block < h->blocks &&
		    h->known[(size_t)w->row * h->blocks + w->block];
	for (uint32_t k = 0; k < FAB_LFT_BLOCK; k++) {
		uint32_t lid = first + k;
		if (lid >= n_lid) {
			out[k] = LFT_DROP;
			continue;
		}
		uint8_t want = lft_row(t, w->row)[lid];
		uint8_t now = known ? h->port[(size_t)w->row * n_lid + lid] : LFT_DROP;
		switch (w->how) {
		case ORDER_W_DRAIN:	/* what changes, dropped */
			out[k] = known && now == want ? want : LFT_DROP;
			break;
		case ORDER_W_PARTIAL:	/* due later: as held */
			out[k] = r->entry_wave[(size_t)w->row * n_lid + lid] <= w->wave ? want : now;
			break;
		default:
			out[k] = want;
		}
	}
}

void order_result_free(struct order_result *r)
{
	free(r->w);
	free(r->entry_wave);
	memset(r, 0, sizeof(*r));
}
