/* Ordered LFT transitions (see order.h). */
#include "reconfig/order.h"

#include <stdlib.h>
#include <string.h>

#define ORDER_NONE UINT32_MAX
#define IN_PLACE (-1)		/* W: the new route from here needs no wave */
/* an entry's code */
#define CODE_CHANGES 1	/* wanted differs from held, or held not known */
#define CODE_DROPS 2	/* held, and it drops the LID */
#define DRAIN_ROUNDS 4	/* rounds of draining the LIDs on a cycle; then, or
			 * once half the changing LIDs are, all of them */

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
	uint32_t *moved, n_moved;	/* the LIDs with colchg set, ascending */
	uint8_t *drained;	/* per LID: its changed entries dropped first */
	uint32_t *owner;	/* per dependency: a changing LID that makes it */
	uint32_t n_waves;	/* waves the plan needs (compute_waves) */
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

/*
 * The codes, once: what held() and the tables say of every entry.  A
 * block known and held as wanted is compared whole.
 */
static int codes(struct order *o, struct order_result *r)
{
	const struct lft_tables *t = o->t;
	const struct order_held *h = o->h;
	o->code = calloc((size_t)t->n_sw * o->n_lid + 1, 1);
	o->colchg = calloc(o->n_lid + 1, 1);
	if (!o->code || !o->colchg)
		return -1;
	for (uint32_t row = 0; row < t->n_sw; row++)
		for (uint32_t b = 0; b < o->blocks; b++) {
			uint32_t lo = b * FAB_LFT_BLOCK, n = o->n_lid - lo < FAB_LFT_BLOCK ?
							   o->n_lid - lo : FAB_LFT_BLOCK;
			size_t at = (size_t)row * o->n_lid + lo;
			int known = h && b < h->blocks && h->known[(size_t)row * h->blocks + b];
			if (known && !memcmp(h->port + at, lft_row(t, row) + lo, n))
				continue;	/* held as wanted: codes 0 */
			for (uint32_t lid = lo; lid < lo + n; lid++) {
				uint8_t now = known ? h->port[(size_t)row * o->n_lid + lid] : 0, c;
				if (!known)
					c = CODE_CHANGES;
				else
					c = (now == LFT_DROP ? CODE_DROPS : 0) |
					    (now != lft_row(t, row)[lid] ? CODE_CHANGES : 0);
				o->code[(size_t)row * o->n_lid + lid] = c;
				if (c & CODE_CHANGES) {
					o->chg[(size_t)row * o->blocks + b] = 1;
					o->colchg[lid] = 1;
					r->entries++;
				}
			}
		}
	o->moved = malloc(((size_t)o->n_lid + 1) * sizeof(*o->moved));
	if (!o->moved)
		return -1;
	o->n_moved = 0;
	for (uint32_t lid = 1; lid < o->n_lid; lid++)
		if (o->colchg[lid])
			o->moved[o->n_moved++] = lid;
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

/* The wave changed entry (row, lid) is written in (drained: the last). */
static uint32_t entry_wave(const struct order *o, uint32_t row, uint32_t lid)
{
	if (o->drained[lid])
		return 1;
	return o->split ? o->ew[(size_t)row * o->n_lid + lid] :
	       o->B[(size_t)row * o->blocks + lid / FAB_LFT_BLOCK];
}

/*
 * The writes: a block once per wave that one of its changing entries
 * needs (an ordered entry's; a drained entry's drop, wave 0, when it
 * forwards now, and its new entry, wave 1); the last whole, the others
 * mixed (order_payload()).
 */
static int writes(struct order *o, struct order_result *r)
{
	uint32_t cap = 0;
	const struct lft_tables *t = o->t;
	for (uint32_t row = 0; row < t->n_sw; row++)
		for (uint32_t b = 0; b < o->blocks; b++) {
			if (!o->chg[(size_t)row * o->blocks + b])
				continue;
			r->blocks++;
			uint64_t seen[(ORDER_MAX_WAVES + 63) / 64] = { 0 };
			uint32_t hi = 0, n = 0;
			for (uint32_t lid = b * FAB_LFT_BLOCK; lid < (b + 1) * FAB_LFT_BLOCK && lid < o->n_lid; lid++) {
				int drops;
				if (!changes(o, row, lid, &drops))
					continue;
				uint32_t w = entry_wave(o, row, lid);
				r->entry_wave[(size_t)row * o->n_lid + lid] = (uint8_t)w;
				for (int d = o->drained[lid] && !drops; d >= 0; d--) {
					uint32_t x = d ? 0 : w;	/* a drained entry's drop first */
					n += !(seen[x / 64] >> (x % 64) & 1);
					seen[x / 64] |= 1ull << (x % 64);
					hi = x > hi ? x : hi;
				}
			}
			if (n > 1)
				r->split++;
			for (uint32_t w = 0; w <= hi; w++)
				if ((seen[w / 64] >> (w % 64) & 1) &&
				    add_write(r, &cap, row, b, w,
					      w < hi ? ORDER_W_MIX : ORDER_W_WHOLE) < 0)
					return -1;
		}
	if (r->n_w)
		qsort(r->w, r->n_w, sizeof(*r->w), by_wave);
	return 0;
}

/*
 * The entries switch r may hold for lid while wave k is written: as held
 * before its wave, wanted after, either during it; a drained LID's, as
 * held (or dropped) in wave 0, wanted (or dropped) from wave 1 on.  n:
 * how many (1, 2).
 */
static int may_hold(const struct order *o, uint32_t row, uint32_t lid, uint32_t k, uint8_t e[2])
{
	uint8_t now, want = lft_row(o->t, row)[lid];
	int drops;
	if (!changes(o, row, lid, &drops)) {
		e[0] = want;
		return 1;
	}
	if (!held(o, row, lid, &now))
		now = LFT_DROP;	/* unknown: the dependency check sees none */
	uint32_t w = entry_wave(o, row, lid);
	if (o->drained[lid]) {
		e[0] = k == 0 ? now : want;
		return 1;
	}
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
	for (uint32_t row = 0; row < o->t->n_sw; row++)
		for (uint32_t lid = 1; lid < o->n_lid; lid++) {
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

/*
 * Into dep: what the routes of the LIDs in lids[0..n) may depend on while
 * wave k is written (changing LIDs not drained recorded as the owners of
 * what they make).  Row by row, so that a row's entries are read in order
 * and its neighbours' rows stay in the cache.
 */
static void dep_pair(const struct order *o, uint8_t *dep, uint32_t row, uint32_t lid,
		     uint32_t k)
{
	if (!o->colchg[lid]) {	/* as wanted everywhere */
		uint8_t e = lft_row(o->t, row)[lid];
		if (e >= o->stride)
			return;
		size_t a = (size_t)row * o->stride + e;
		uint32_t nx = o->nbr[a];
		uint8_t g = nx == ORDER_NONE ? LFT_DROP : lft_row(o->t, nx)[lid];
		if (g < o->stride && o->nbr[(size_t)nx * o->stride + g] != ORDER_NONE)
			dep[a * o->stride + g] = 1;
		return;
	}
	int own = !o->drained[lid];
	uint8_t e[2], g[2];
	int n = may_hold(o, row, lid, k, e);
	for (int x = 0; x < n; x++) {
		if (e[x] >= o->stride)
			continue;
		size_t a = (size_t)row * o->stride + e[x];
		uint32_t nx = o->nbr[a];
		if (nx == ORDER_NONE)
			continue;
		int m = may_hold(o, nx, lid, k, g);
		for (int j = 0; j < m; j++)
			if (g[j] < o->stride &&
			    o->nbr[(size_t)nx * o->stride + g[j]] != ORDER_NONE) {
				dep[a * o->stride + g[j]] = 1;
				if (own)
					o->owner[a * o->stride + g[j]] = lid;
			}
	}
}

/*
 * The dependencies that are the same in every state: of every (row, LID)
 * whose entry there and at the next switch do not change -- all of a LID
 * that does not change, and of one that does the rows outside
 * depcheck.act.  Row by row, LID by LID, so that a row's entries are read
 * in order and its neighbours' rows stay in the cache.
 */
static void same_deps(const struct order *o, uint8_t *dep)
{
	const uint8_t *chg = o->colchg;
	for (uint32_t row = 0; row < o->t->n_sw; row++) {
		const uint8_t *mine = lft_row(o->t, row);
		const uint8_t *code = o->code + (size_t)row * o->n_lid;
		const uint32_t *nb = o->nbr + (size_t)row * o->stride;
		uint8_t *d = dep + (size_t)row * o->stride * o->stride;
		for (uint32_t lid = 1; lid < o->n_lid; lid++) {
			uint8_t e = mine[lid];
			if (e >= o->stride || nb[e] == ORDER_NONE ||
			    (chg[lid] && (code[lid] & CODE_CHANGES)))
				continue;
			uint32_t nx = nb[e];
			if (chg[lid] && (o->code[(size_t)nx * o->n_lid + lid] & CODE_CHANGES))
				continue;
			uint8_t g = lft_row(o->t, nx)[lid];
			if (g < o->stride && o->nbr[(size_t)nx * o->stride + g] != ORDER_NONE)
				d[(size_t)e * o->stride + g] = 1;
		}
	}
}

/*
 * After cyclic() found a cycle: the channels left are on cycles or
 * downstream of them; those with nothing left downstream are pruned
 * too, and every changing LID that owns a dependency between two channels
 * still left is drained.  Returns how many were newly drained.
 */
static uint32_t drain_core(struct order *o, const uint8_t *dep, uint32_t *indeg,
			   uint32_t *outdeg, uint32_t *q)
{
	uint32_t nch = o->t->n_sw * o->stride, qh = 0, qt = 0, n = 0;
	/* left: indeg > 0 after Kahn; now the out-degrees among them */
	memset(outdeg, 0, (size_t)nch * sizeof(*outdeg));
	for (uint32_t a = 0; a < nch; a++) {
		if (!indeg[a] || o->nbr[a] == ORDER_NONE)
			continue;
		for (uint32_t p = 0; p < o->stride; p++)
			if (dep[(size_t)a * o->stride + p] && indeg[o->nbr[a] * o->stride + p])
				outdeg[a]++;
	}
	for (uint32_t a = 0; a < nch; a++)
		if (indeg[a] && !outdeg[a])
			q[qt++] = a;
	while (qh < qt) {	/* prune what leads nowhere back */
		uint32_t b = q[qh++];
		indeg[b] = 0;
		uint32_t hd = b / o->stride, port = b % o->stride;
		/* the channels into b: a leaves some row into hd */
		for (uint32_t a = 0; a < nch; a++)
			if (indeg[a] && o->nbr[a] == hd && dep[(size_t)a * o->stride + port] &&
			    --outdeg[a] == 0)
				q[qt++] = a;
	}
	for (uint32_t a = 0; a < nch; a++) {
		if (!indeg[a] || o->nbr[a] == ORDER_NONE)
			continue;
		for (uint32_t p = 0; p < o->stride; p++) {
			size_t d = (size_t)a * o->stride + p;
			uint32_t lid = o->owner[d];
			if (dep[d] && indeg[o->nbr[a] * o->stride + p] && lid &&
			    !o->drained[lid]) {
				o->drained[lid] = 1;
				n++;
			}
		}
	}
	return n;
}

/* Scratch of the dependency checks. */
struct depcheck {
	uint8_t *dep, *base;
	uint32_t *indeg, *outdeg, *q;
	uint32_t (*act)[2], n_act;	/* (row, LID) of moved LIDs whose dependency may change */
};

static int depcheck_alloc(struct depcheck *c, const struct order *o)
{
	size_t nch = (size_t)o->t->n_sw * o->stride;
	c->dep = malloc(nch * o->stride + 1);
	c->base = malloc(nch * o->stride + 1);
	c->indeg = malloc((nch + 1) * sizeof(*c->indeg));
	c->outdeg = malloc((nch + 1) * sizeof(*c->outdeg));
	c->q = malloc((nch + 1) * sizeof(*c->q));
	if (!c->dep || !c->base || !c->indeg || !c->outdeg || !c->q)
		return -1;
	/*
	 * Of a moved LID, the rows whose entry changes or whose next switch's
	 * does: the others make the same dependency in every state.
	 */
	uint32_t cap = 1024;
	c->n_act = 0;
	c->act = malloc(cap * sizeof(*c->act));
	if (!c->act)
		return -1;
	for (uint32_t row = 0; row < o->t->n_sw; row++)
		for (uint32_t i = 0; i < o->n_moved; i++) {
			uint32_t lid = o->moved[i];
			int drops;
			uint32_t nx = next_row(o, row, lid);
			if (!changes(o, row, lid, &drops) &&
			    (nx == ORDER_NONE || !changes(o, nx, lid, &drops)))
				continue;
			if (c->n_act == cap) {
				void *p = realloc(c->act, 2 * (size_t)cap * sizeof(*c->act));
				if (!p)
					return -1;
				c->act = p;
				cap *= 2;
			}
			c->act[c->n_act][0] = row;
			c->act[c->n_act++][1] = lid;
		}
	return 0;
}

static void depcheck_free(struct depcheck *c)
{
	free(c->dep);
	free(c->base);
	free(c->indeg);
	free(c->outdeg);
	free(c->q);
	free(c->act);
}

/* Whether the held (end 0) or the wanted tables (1) have a cycle, VLs as one. */
static int end_cyclic(const struct order *o, struct depcheck *c, int end)
{
	size_t nch = (size_t)o->t->n_sw * o->stride;
	memset(c->dep, 0, nch * o->stride);
	end_deps(o, c->dep, end);
	return cyclic(o, c->dep, c->indeg, c->q);
}

/*
 * Whether every state of every wave is free of channel-dependency cycles
 * (all VLs as one): the dependencies any mix of what a wave's switches
 * may hold can make, together, have none.  1 safe; 0 not: *bad the wave,
 * *newly the LIDs on its cycles drained now (drain_core()).
 */
static int waves_acyclic(struct order *o, struct depcheck *c, uint32_t *bad, uint32_t *newly)
{
	size_t nch = (size_t)o->t->n_sw * o->stride;
	memset(c->base, 0, nch * o->stride);
	same_deps(o, c->base);
	/* owners: of what may change only (draining the rest would not help) */
	memset(o->owner, 0, nch * o->stride * sizeof(*o->owner));
	for (uint32_t k = 0; k < o->n_waves; k++) {
		memcpy(c->dep, c->base, nch * o->stride);
		for (uint32_t i = 0; i < c->n_act; i++)
			dep_pair(o, c->dep, c->act[i][0], c->act[i][1], k);
		if (cyclic(o, c->dep, c->indeg, c->q)) {
			*bad = k;
			*newly = drain_core(o, c->dep, c->indeg, c->outdeg, c->q);
			return 0;
		}
	}
	return 1;
}

/*
 * The waves of the LIDs not drained: per block, each pass raising a block
 * to what its entries need given the others' waves, until none rises; a
 * chain of waiting blocks longer than the switches are is a cycle between
 * blocks, and then each entry gets its own wave.  0, or -1 (ENOMEM, or a
 * route of more than ORDER_MAX_WAVES changing switches).
 */
static int compute_waves(struct order *o)
{
	const struct lft_tables *t = o->t;
	memset(o->B, 0, ((size_t)t->n_sw * o->blocks + 1) * sizeof(*o->B));
	o->split = o->too_deep = 0;
	o->deepest = o->deepest_lid = 0;
	for (uint32_t pass = 0;; pass++) {
		o->grew = 0;
		for (uint32_t i = 0; i < o->n_moved && !o->too_deep; i++)
			if (!o->drained[o->moved[i]])
				column(o, o->moved[i]);
		if (!o->grew || o->too_deep)
			break;
		if (pass > t->n_sw) {
			o->too_deep = 1;
			break;
		}
	}
	if (o->too_deep) {
		o->split = 1;
		o->too_deep = 0;
		o->deepest = 0;
		if (!o->ew && !(o->ew = calloc((size_t)t->n_sw * o->n_lid + 1, 1)))
			return -1;
		for (uint32_t i = 0; i < o->n_moved; i++)
			if (!o->drained[o->moved[i]])
				column(o, o->moved[i]);
		if (o->too_deep)
			return -1;
	}
	/* the waves used: the highest entry's, and 0 and 1 for a drain */
	o->n_waves = 0;
	int any_drained = 0;
	for (uint32_t i = 0; i < o->n_moved; i++)
		for (uint32_t row = 0, lid = o->moved[i]; row < t->n_sw; row++) {
			int drops;
			if (!changes(o, row, lid, &drops))
				continue;
			if (o->drained[lid]) {
				any_drained = 1;
				continue;
			}
			uint32_t w = entry_wave(o, row, lid) + 1;
			o->n_waves = w > o->n_waves ? w : o->n_waves;
		}
	if (any_drained && o->n_waves < 2)
		o->n_waves = 2;
	return 0;
}

static void order_free(struct order *o)
{
	free(o->code);
	free(o->colchg);
	free(o->moved);
	free(o->drained);
	free(o->owner);
	free(o->ew);
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
	if (!r->entries) {	/* the switches hold the tables: nothing to write */
		r->dep_checked = 1;
		order_free(&o);
		return 0;
	}
	o.drained = calloc(o.n_lid + 1, 1);
	o.owner = malloc(((size_t)t->n_sw * o.stride * o.stride + 1) * sizeof(*o.owner));
	struct depcheck c;
	memset(&c, 0, sizeof(c));
	if (!o.drained || !o.owner || depcheck_alloc(&c, &o) < 0) {
		depcheck_free(&c);
		goto fail;
	}
	r->dep_checked = 1;
	for (uint32_t round = 0;; round++) {
		if (compute_waves(&o) < 0) {
			depcheck_free(&c);
			goto fail;
		}
		uint32_t bad = 0, newly = 0;
		if (waves_acyclic(&o, &c, &bad, &newly))
			break;
		/*
		 * A cycle: if the tables held or wanted have one themselves
		 * (every VL as one), the check has nothing to say.
		 */
		if (round == 0 && (end_cyclic(&o, &c, 0) || end_cyclic(&o, &c, 1))) {
			r->dep_checked = 0;
			memset(o.drained, 0, o.n_lid + 1);
			if (compute_waves(&o) < 0) {
				depcheck_free(&c);
				goto fail;
			}
			break;
		}
		if (!r->drained)
			r->cycle_wave = bad;	/* the first one found */
		r->drained = 1;
		uint32_t n_drained = 0;
		for (uint32_t lid = 1; lid < o.n_lid; lid++)
			n_drained += o.drained[lid];
		if (!newly || round + 1 >= DRAIN_ROUNDS || 2 * n_drained >= o.n_moved) {
			/* no LID to blame, too many rounds or LIDs: every changed LID */
			for (uint32_t lid = 1; lid < o.n_lid; lid++)
				o.drained[lid] |= o.colchg[lid];
			if (compute_waves(&o) < 0) {
				depcheck_free(&c);
				goto fail;
			}
			break;
		}
	}
	depcheck_free(&c);
	for (uint32_t lid = 1; lid < o.n_lid; lid++)
		r->drained_lids += o.drained[lid] && o.colchg[lid];
	r->drained = r->drained_lids != 0;
	r->deepest_lid = o.deepest_lid;
	r->entry_wave = calloc((size_t)t->n_sw * o.n_lid + 1, 1);
	if (!r->entry_wave || writes(&o, r) < 0)
		goto fail;
	r->drained_lid = o.drained;
	o.drained = NULL;
	order_free(&o);
	return 0;
fail:
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
		if (w->how == ORDER_W_WHOLE || (known && now == want) ||
		    r->entry_wave[(size_t)w->row * n_lid + lid] <= w->wave)
			out[k] = want;	/* due, or the same */
		else if (r->drained_lid && r->drained_lid[lid])
			out[k] = LFT_DROP;	/* drained: dropped until due */
		else
			out[k] = now;	/* due later: as held */
	}
}

void order_stats(const struct order_result *r, struct lft_order_stats *st)
{
	st->waves = r->waves;
	st->blocks = r->blocks;
	st->writes = r->n_w;
	st->entries = r->entries;
	st->split = r->split;
	st->deepest_lid = r->deepest_lid;
	st->drained = r->drained_lids;
	st->cycle_wave = r->cycle_wave;
	st->dep_checked = r->dep_checked;
}

void order_result_free(struct order_result *r)
{
	free(r->w);
	free(r->entry_wave);
	free(r->drained_lid);
	memset(r, 0, sizeof(*r));
}
