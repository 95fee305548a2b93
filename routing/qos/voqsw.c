/*
 * VOQsw (the VOQsw paper, Section 3: the five stages of its Fig. 4,
 * ComputeSLs of its Fig. 5): per-path SLs and per-(in, out) SL-to-VL
 * tables that put a packet, at every switch, in the VL of its output
 * port at the next switch.  The paper leaves the exact rules open (path
 * order, tie-breaks, the x search, the VL grouping); ibsmd's are rules
 * 1-5, each stated where it is applied below.
 *
 * Layout: a tuple (sw, ip, op, nop) lives in the block of its triple
 * (sw, ip, op), one slot per nop after a slot holding the block's
 * number; blocks are found through a dense per-switch (ip, op) table
 * and made only when a path uses them.  After stage 3 a tuple's id is
 * its rank, so "considered" is id < x.  Paths are not stored (12
 * million of them on a 3456-host tree): each ComputeSLs run walks them
 * again, but a path's tuples after the first depend on its source's
 * switch and its destination LID only, so they are walked once per
 * (switch, LID), through compact per-row arrays (the next switch's row
 * and input port of every switch port), and kept.
 */
#include "routing/qos/voqsw.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

struct tuple {
	uint64_t guid;		/* the switch's node GUID (stage 3 order) */
	uint32_t tri;		/* its triple's block number */
	uint32_t at;		/* its slot in tup_of */
	uint32_t w;		/* paths through it */
	uint8_t ip, op, nop;
};

/* What a switch port leads to. */
struct hop {
	uint32_t nrow;		/* the next switch's row, NONE: not a switch */
	uint32_t rport;		/* the port at the far end, FAB_NONE */
	uint8_t nip;		/* its number */
};

/*
 * A path's tuples after the first depend on its source's switch and its
 * destination LID only (the first also on the source's port): walked
 * once per (source switch, LID), then kept.  n: UNSEEN, DEAD (not
 * deliverable), or the count after the first (from off in q->pool).
 */
#define UNSEEN 0xffff
#define DEAD 0xfffe

struct suffix {
	uint32_t off;
	uint16_t n;
	uint8_t op, nop;	/* the first hop's output, the next one's */
};

struct vq {
	const struct fabric *f;
	const struct lft_tables *t;
	uint32_t cols;		/* t->max_lid + 1 */
	uint32_t n_ep;		/* end ports, ascending base LID */
	uint32_t *ep;		/* end port index -> port */
	uint32_t *ep_of_lid;	/* LID -> end port ordinal, NONE */
	uint8_t *lftT;		/* the LFTs by LID: lftT[d * n_sw + row] */
	uint32_t *ep_row;	/* end port -> its switch's LFT row */
	uint8_t *ep_ip;		/* end port -> the switch port it is on */
	/* per LFT row: ports, first (ip, op) slot, first hop */
	uint8_t *np;
	uint32_t *tbase, *hbase;
	struct hop *hop;	/* per (row, port - 1): what is behind it */
	uint32_t *sslot;	/* row -> its suffixes (rows with end ports) */
	struct suffix *suffix;	/* per (sslot, LID) */
	uint32_t *pool;		/* the suffixes' tuples */
	uint32_t n_pool, cap_pool;
	uint32_t *tri_of;	/* (ip, op) slot -> its block in tup_of, NONE */
	uint32_t n_blk;		/* triples made */
	uint32_t *tup_of;	/* blocks: [number, tuple id per nop], NONE */
	uint32_t n_tup_of, cap_tup_of;
	int enomem;
	struct tuple *tup;
	uint32_t n_tup, cap_tup;
	uint32_t x_max;		/* tuples with weight > 0 (ids 0..x_max-1) */
	uint32_t *tri_id;	/* tuple id -> its block (after stage 3) */
	uint32_t *wt;		/* tuple id -> its weight (after stage 3) */
	uint32_t *ids;		/* one path's tuples (n_sw + 1) */
	/* ComputeSLs state: 16-bit masks, or W words per mask (wide) */
	uint16_t *used, *owned;
	uint64_t *wused, *wowned;
	unsigned words;
};

static int is_end_node(const struct fabric *f, uint32_t node)
{
	return f->nodes[node].type == FAB_CA ||
	       f->nodes[node].type == FAB_ROUTER;
}

/* The LFT row of the switch a CA port is cabled to, NONE. */
static uint32_t attached_row(const struct fabric *f,
			     const struct lft_tables *t, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	if (p->remote == FAB_NONE || p->remote >= f->n_ports)
		return NONE;
	uint32_t r = f->ports[p->remote].node;
	return f->nodes[r].type == FAB_SWITCH ? t->row_of_node[r] : NONE;
}

/* Rule 1: CA ports cabled to a switch, with a LID, by base LID. */
static int find_end_ports(struct vq *q)
{
	const struct fabric *f = q->f;
	q->ep = malloc(((size_t)f->n_ports + 1) * sizeof(*q->ep));
	q->ep_of_lid = malloc((size_t)q->cols * sizeof(*q->ep_of_lid));
	if (!q->ep || !q->ep_of_lid)
		return -1;
	for (uint32_t l = 1; l < q->cols; l++) {
		uint32_t pi = fabric_lid_port(f, l);	/* each at its base LID */
		if (pi == FAB_NONE || f->ports[pi].lid != l ||
		    !is_end_node(f, f->ports[pi].node) ||
		    !fabric_is_endport(f, pi) ||
		    attached_row(f, q->t, pi) == NONE)
			continue;
		q->ep[q->n_ep++] = pi;
	}
	for (uint32_t l = 0; l < q->cols; l++)
		q->ep_of_lid[l] = NONE;
	for (uint32_t e = 0; e < q->n_ep; e++) {
		uint32_t pi = q->ep[e], lid = f->ports[pi].lid;
		uint32_t span = 1u << fabric_port_lmc(f, pi);
		for (uint32_t k = 0; k < span && lid + k < q->cols; k++)
			q->ep_of_lid[lid + k] = e;
	}
	return 0;
}

/*
 * Per LFT row: the dense (ip, op) slots (nports^2) and what is behind
 * each port; per end port: its switch's row and port.
 */
static int index_switches(struct vq *q)
{
	const struct fabric *f = q->f;
	const struct lft_tables *t = q->t;
	size_t slots = 0, hops = 0;
	q->np = malloc((size_t)t->n_sw + 1);
	q->tbase = malloc(((size_t)t->n_sw + 1) * sizeof(*q->tbase));
	q->hbase = malloc(((size_t)t->n_sw + 1) * sizeof(*q->hbase));
	q->ep_row = malloc(((size_t)q->n_ep + 1) * sizeof(*q->ep_row));
	q->ep_ip = malloc((size_t)q->n_ep + 1);
	q->ids = malloc(((size_t)t->n_sw + 2) * sizeof(*q->ids));
	/* a path's hops read one LID's entries of several rows: adjacent */
	q->lftT = malloc((size_t)q->cols * t->n_sw + 1);
	if (!q->np || !q->tbase || !q->hbase || !q->ep_row || !q->ep_ip ||
	    !q->ids || !q->lftT)
		return -1;
	for (uint32_t r = 0; r < t->n_sw; r++) {
		const uint8_t *row = lft_row(t, r);
		for (uint32_t d = 0; d < q->cols; d++)
			q->lftT[(size_t)d * t->n_sw + r] = row[d];
	}
	for (uint32_t r = 0; r < t->n_sw; r++) {
		unsigned P = f->nodes[t->sw_node[r]].nports;
		q->np[r] = (uint8_t)P;
		q->tbase[r] = (uint32_t)slots;
		q->hbase[r] = (uint32_t)hops;
		slots += (size_t)P * P;
		hops += P;
		if (slots >= NONE)
			return -1;
	}
	q->tri_of = malloc((slots + 1) * sizeof(*q->tri_of));
	q->hop = malloc((hops + 1) * sizeof(*q->hop));
	if (!q->tri_of || !q->hop)
		return -1;
	for (size_t k = 0; k < slots; k++)
		q->tri_of[k] = NONE;
	for (uint32_t r = 0; r < t->n_sw; r++)
		for (unsigned p = 1; p <= q->np[r]; p++) {
			struct hop *h = &q->hop[q->hbase[r] + p - 1];
			uint32_t rp = fabric_portp(f, t->sw_node[r], p)->remote;
			h->nrow = NONE;
			h->rport = rp < f->n_ports ? rp : FAB_NONE;
			h->nip = rp < f->n_ports ? f->ports[rp].num : 0;
			if (rp < f->n_ports &&
			    f->nodes[f->ports[rp].node].type == FAB_SWITCH)
				h->nrow = t->row_of_node[f->ports[rp].node];
		}
	uint32_t n_ss = 0;
	q->sslot = malloc(((size_t)t->n_sw + 1) * sizeof(*q->sslot));
	if (!q->sslot)
		return -1;
	for (uint32_t r = 0; r < t->n_sw; r++)
		q->sslot[r] = NONE;
	for (uint32_t e = 0; e < q->n_ep; e++) {
		const struct fab_port *sp = &f->ports[f->ports[q->ep[e]].remote];
		q->ep_row[e] = t->row_of_node[sp->node];
		q->ep_ip[e] = sp->num;
		if (q->sslot[q->ep_row[e]] == NONE)
			q->sslot[q->ep_row[e]] = n_ss++;
	}
	size_t n_suffix = (size_t)n_ss * q->cols;
	q->suffix = malloc((n_suffix + 1) * sizeof(*q->suffix));
	if (!q->suffix)
		return -1;
	for (size_t k = 0; k < n_suffix; k++)
		q->suffix[k].n = UNSEEN;
	return 0;
}

static int grow(void **p, uint32_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? (size_t)*cap * 2 : 1024;
	while (n < need)
		n *= 2;
	if (n >= NONE)
		return -1;
	void *np = realloc(*p, n * size);
	if (!np)
		return -1;
	*p = np;
	*cap = (uint32_t)n;
	return 0;
}

/*
 * The tuple at row r (ip, op, nop), made (weight 0) if missing, or
 * NONE (ENOMEM, q->enomem set).  nP: the ports of the switch behind op,
 * the tuple slots of the triple's block.
 */
static uint32_t tuple_make(struct vq *q, uint32_t r, unsigned ip,
			   unsigned op, unsigned nop, unsigned nP)
{
	uint32_t *slot = &q->tri_of[q->tbase[r] + (ip - 1) * q->np[r] +
				    (op - 1)];
	if (*slot == NONE) {
		if (grow((void **)&q->tup_of, &q->cap_tup_of,
			 (size_t)q->n_tup_of + nP + 1, sizeof(*q->tup_of)) < 0)
			goto enomem;
		q->tup_of[q->n_tup_of] = q->n_blk++;
		for (unsigned k = 1; k <= nP; k++)
			q->tup_of[q->n_tup_of + k] = NONE;
		*slot = q->n_tup_of;
		q->n_tup_of += nP + 1;
	}
	uint32_t *tp = &q->tup_of[*slot + nop];
	if (*tp == NONE) {
		if (grow((void **)&q->tup, &q->cap_tup, q->n_tup + 1,
			 sizeof(*q->tup)) < 0)
			goto enomem;
		struct tuple *u = &q->tup[q->n_tup];
		u->guid = q->f->nodes[q->t->sw_node[r]].guid;
		u->tri = q->tup_of[*slot];
		u->w = 0;
		u->ip = (uint8_t)ip;
		u->op = (uint8_t)op;
		u->nop = (uint8_t)nop;
		u->at = (uint32_t)(tp - q->tup_of);
		*tp = q->n_tup++;
	}
	return *tp;
enomem:
	q->enomem = 1;
	return NONE;
}

/*
 * Rule 2: the tuples of the path from end port e to LID d (d's port
 * dpi) into q->ids.  Returns their count, or -1: not deliverable (a
 * drop, a loop, a CA that is not the destination), or ENOMEM (make).
 */
static int walk(struct vq *q, uint32_t e, uint32_t d, uint32_t dpi, int make)
{
	const uint8_t *lft = q->lftT + (size_t)d * q->t->n_sw;
	uint32_t r = q->ep_row[e];
	unsigned ip = q->ep_ip[e];
	int n = 0;
	for (;;) {
		unsigned op = lft[r], P = q->np[r];
		if (op == 0 || op > P)
			return -1;
		const struct hop *h = &q->hop[q->hbase[r] + op - 1];
		if (h->nrow == NONE)
			return h->rport == dpi ? n : -1;
		unsigned nop = lft[h->nrow];
		if (nop == 0 || nop > q->np[h->nrow] || (uint32_t)n > q->t->n_sw)
			return -1;
		uint32_t id;
		if (make) {
			id = tuple_make(q, r, ip, op, nop, q->np[h->nrow]);
		} else {
			uint32_t b = q->tri_of[q->tbase[r] + (ip - 1) * P + op - 1];
			id = b == NONE ? NONE : q->tup_of[b + nop];
		}
		if (id == NONE)
			return -1;
		q->ids[n++] = id;
		r = h->nrow;
		ip = h->nip;
	}
}

static int grow_pool(struct vq *q, int n)
{
	return grow((void **)&q->pool, &q->cap_pool, (size_t)q->n_pool + (size_t)n,
		    sizeof(*q->pool));
}

/* walk() through the suffix kept for (e's switch, d), made if unseen. */
static int path(struct vq *q, uint32_t e, uint32_t d, uint32_t dpi, int make,
		struct suffix *c)
{
	if (c->n == UNSEEN) {
		int n = walk(q, e, d, dpi, make);
		if (n < 0 && q->enomem)
			return -1;
		if (n < 0 || n - 1 >= DEAD) {
			c->n = DEAD;
			return -1;
		}
		if (n > 0 && grow_pool(q, n) < 0) {
			q->enomem = 1;
			return -1;
		}
		uint32_t r = q->ep_row[e];
		c->op = q->lftT[(size_t)d * q->t->n_sw + r];
		c->nop = 0;
		c->off = q->n_pool;
		c->n = n ? (uint16_t)(n - 1) : 0;
		if (n) {
			uint32_t nr = q->hop[q->hbase[r] + c->op - 1].nrow;
			c->nop = q->lftT[(size_t)d * q->t->n_sw + nr];
			memcpy(q->pool + q->n_pool, q->ids + 1,
			       (size_t)(n - 1) * sizeof(*q->pool));
			q->n_pool += (uint32_t)(n - 1);
		}
		return n;
	}
	if (c->n == DEAD)
		return -1;
	if (c->nop == 0)
		return 0;	/* the destination is on the source's switch */
	uint32_t r = q->ep_row[e];
	unsigned ip = q->ep_ip[e];
	uint32_t id;
	if (make) {
		uint32_t nr = q->hop[q->hbase[r] + c->op - 1].nrow;
		id = tuple_make(q, r, ip, c->op, c->nop, q->np[nr]);
	} else {
		uint32_t b = q->tri_of[q->tbase[r] + (ip - 1) * q->np[r] + c->op - 1];
		id = b == NONE ? NONE : q->tup_of[b + c->nop];
	}
	if (id == NONE)
		return -1;
	q->ids[0] = id;
	memcpy(q->ids + 1, q->pool + c->off, (size_t)c->n * sizeof(*q->pool));
	return c->n + 1;
}

/* One deliverable path; returns -1 to stop the walk over them all. */
typedef int (*path_fn)(struct vq *q, void *ctx, uint32_t e, uint32_t d,
		       int n);

/* Every path in rule 2's order; -1 when fn stopped it. */
static int for_each_path(struct vq *q, int make, path_fn fn, void *ctx)
{
	for (uint32_t e = 0; e < q->n_ep; e++) {
		struct suffix *c = q->suffix +
				   (size_t)q->sslot[q->ep_row[e]] * q->cols;
		for (uint32_t d = 1; d < q->cols; d++) {
			uint32_t de = q->ep_of_lid[d];
			if (de == NONE || de == e)
				continue;
			int n = path(q, e, d, q->ep[de], make, &c[d]);
			if (n >= 0 && fn(q, ctx, e, d, n) < 0)
				return -1;
		}
	}
	return 0;
}

struct totals {
	uint64_t paths;
};

static int count_path(struct vq *q, void *ctx, uint32_t e, uint32_t d, int n)
{
	struct totals *c = ctx;
	(void)e;
	(void)d;
	c->paths++;
	for (int k = 0; k < n; k++)
		q->tup[q->ids[k]].w++;
	return 0;
}

static int by_weight(const void *a, const void *b)
{
	const struct tuple *x = a, *y = b;
	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	if (x->ip != y->ip)
		return x->ip < y->ip ? -1 : 1;
	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	return (x->nop > y->nop) - (x->nop < y->nop);
}

/*
 * Stages 1-3: the tuples and their weights from one walk over the
 * paths, then sorted (rule 3) and renumbered so that id = rank.
 */
static int build(struct vq *q, const struct fabric *f,
		 const struct lft_tables *t, struct voqsw_report *r)
{
	struct totals c = { 0 };
	memset(q, 0, sizeof(*q));
	q->f = f;
	q->t = t;
	q->cols = t->max_lid + 1;
	if (find_end_ports(q) < 0 || index_switches(q) < 0)
		return -1;
	if (for_each_path(q, 1, count_path, &c) < 0 || q->enomem)
		return -1;
	qsort(q->tup, q->n_tup, sizeof(*q->tup), by_weight);
	uint32_t *rank = malloc(((size_t)q->n_tup + 1) * sizeof(*rank));
	if (!rank)
		return -1;
	for (uint32_t i = 0; i < q->n_tup; i++) {
		struct tuple *u = &q->tup[i];
		rank[q->tup_of[u->at]] = i;
		q->tup_of[u->at] = i;
	}
	for (uint32_t k = 0; k < q->n_pool; k++)
		q->pool[k] = rank[q->pool[k]];
	free(rank);
	/* by rank from here on: the tuples themselves are done with */
	q->tri_id = malloc(((size_t)q->n_tup + 1) * sizeof(*q->tri_id));
	q->wt = malloc(((size_t)q->n_tup + 1) * sizeof(*q->wt));
	if (!q->tri_id || !q->wt)
		return -1;
	memset(r, 0, sizeof(*r));
	for (uint32_t i = 0; i < q->n_tup; i++) {
		q->tri_id[i] = q->tup[i].tri;
		q->wt[i] = q->tup[i].w;
		if (q->tup[i].w)
			q->x_max = i + 1;
		r->weight += q->tup[i].w;
	}
	free(q->tup);
	q->tup = NULL;
	r->paths = c.paths;
	r->tuples = q->x_max;
	return 0;
}

/* ---- stage 4: ComputeSLs (rule 4) ---- */

struct sls_run {
	uint32_t x;
	unsigned n_sls;
	uint8_t *out;		/* NULL, or the SL per (end port, LID) */
	unsigned top;		/* the highest SL given */
	uint64_t seen[VOQSW_MAX_SLS / 64];	/* the SLs given */
	uint64_t covered;	/* paths whose every tuple is considered */
};

/* 16-bit masks: n_sls <= 16. */
static int assign16(struct vq *q, void *ctx, uint32_t e, uint32_t d, int n)
{
	struct sls_run *s = ctx;
	uint16_t invalid = 0;
	for (int k = 0; k < n; k++) {
		uint32_t id = q->ids[k];
		if (id < s->x)
			invalid |= (uint16_t)(q->owned[q->tri_id[id]] &
					      ~q->used[id]);
	}
	unsigned valid = ((1u << s->n_sls) - 1) & ~(unsigned)invalid;
	if (!valid)
		return -1;
	unsigned sl = (unsigned)__builtin_ctz(valid);
	for (int k = 0; k < n; k++) {
		uint32_t id = q->ids[k];
		if (id < s->x) {
			q->used[id] |= (uint16_t)(1u << sl);
			q->owned[q->tri_id[id]] |= (uint16_t)(1u << sl);
		}
	}
	int all = 1;
	for (int k = 0; k < n && all; k++)
		all = q->ids[k] < s->x;
	s->covered += (uint64_t)all;
	s->out[(size_t)e * q->cols + d] = (uint8_t)sl;
	s->seen[0] |= 1u << sl;
	return 0;
}

/*
 * ComputeSLs(x): 0 with every path's SL in out and the figures in *s,
 * -1 (FAIL) with out half written.
 */
static int compute16(struct vq *q, uint32_t x, unsigned n_sls, uint8_t *out,
		     struct sls_run *s)
{
	memset(s, 0, sizeof(*s));
	s->x = x;
	s->n_sls = n_sls;
	s->out = out;
	memset(q->used, 0, ((size_t)q->x_max + 1) * sizeof(*q->used));
	memset(q->owned, 0, ((size_t)q->n_blk + 1) * sizeof(*q->owned));
	return for_each_path(q, 0, assign16, s);
}

/* q->words 64-bit words per mask: voqsw_full_sls() only. */
static int assign_wide(struct vq *q, void *ctx, uint32_t e, uint32_t d, int n)
{
	struct sls_run *s = ctx;
	unsigned W = q->words;
	uint64_t invalid[VOQSW_MAX_SLS / 64] = { 0 };
	(void)e;
	(void)d;
	for (int k = 0; k < n; k++) {
		uint32_t id = q->ids[k];
		if (id >= s->x)
			continue;
		const uint64_t *o = q->wowned + (size_t)q->tri_id[id] * W;
		const uint64_t *u = q->wused + (size_t)id * W;
		for (unsigned j = 0; j < W; j++)
			invalid[j] |= o[j] & ~u[j];
	}
	unsigned sl = NONE;
	for (unsigned j = 0; j < W && sl == NONE; j++)
		if (~invalid[j])
			sl = j * 64 + (unsigned)__builtin_ctzll(~invalid[j]);
	if (sl == NONE || sl >= s->n_sls)
		return -1;
	for (int k = 0; k < n; k++) {
		uint32_t id = q->ids[k];
		if (id >= s->x)
			continue;
		q->wused[(size_t)id * W + sl / 64] |= 1ull << (sl % 64);
		q->wowned[(size_t)q->tri_id[id] * W + sl / 64] |= 1ull << (sl % 64);
	}
	s->seen[sl / 64] |= 1ull << (sl % 64);
	if (sl > s->top)
		s->top = sl;
	return 0;
}

/* ---- stage 5: SL-to-VL tables (rule 5) ---- */

/* Data VLs an OperationalVLs encoding stands for (1: VL0 ... 5: VL0-14). */
static unsigned enc_vls(unsigned enc)
{
	return enc >= 5 ? 15 : 1u << (enc - 1);
}

/* vls(L) of port pi's link: n_vls for port 0 or when no VLCap is known. */
static unsigned link_vls(const struct fabric *f, uint32_t pi,
			 const struct voqsw_params *p)
{
	const struct fab_port *a = &f->ports[pi];
	if (a->num == 0 || a->remote == FAB_NONE || a->remote >= f->n_ports)
		return p->n_vls;
	const struct fab_port *b = &f->ports[a->remote];
	if (!a->vl_cap || !b->vl_cap)
		return p->n_vls;
	unsigned enc = a->vl_cap < b->vl_cap ? a->vl_cap : b->vl_cap;
	if (p->max_op_vls && p->max_op_vls < enc)
		enc = p->max_op_vls;
	unsigned n = enc_vls(enc);
	return n < p->n_vls ? n : p->n_vls;
}

/* The VL standing for port nop of a switch with P ports, over n VLs. */
static unsigned vl_of(unsigned P, unsigned nop, unsigned n)
{
	return P <= n ? nop - 1 : ((nop - 1) * n) / P;
}

/* The distinct tables, found again through an open-addressing hash. */
struct interner {
	uint32_t *slot;		/* table index + 1, 0 empty */
	uint32_t cap;		/* power of two, > 65536 */
};

static int intern(struct lft_tables *t, struct interner *h, const uint8_t *tbl,
		  uint16_t *idx)
{
	uint32_t x = 2166136261u;
	for (unsigned s = 0; s < QOS_SLS; s++)
		x = (x ^ tbl[s]) * 16777619u;
	for (uint32_t i = x & (h->cap - 1);; i = (i + 1) & (h->cap - 1)) {
		uint32_t k = h->slot[i];
		if (k == 0)
			break;
		if (!memcmp(t->sl2vl + (size_t)(k - 1) * QOS_SLS, tbl, QOS_SLS)) {
			*idx = (uint16_t)(k - 1);
			return 0;
		}
	}
	if (t->sl2vl_n >= 65536)
		return -1;
	/* room for 16 tables, then doubled whenever a power of two is full */
	if (t->sl2vl_n == 0 ||
	    (t->sl2vl_n >= 16 && (t->sl2vl_n & (t->sl2vl_n - 1)) == 0)) {
		size_t n = t->sl2vl_n ? (size_t)t->sl2vl_n * 2 : 16;
		uint8_t *np = realloc(t->sl2vl, n * QOS_SLS);
		if (!np)
			return -1;
		t->sl2vl = np;
	}
	memcpy(t->sl2vl + (size_t)t->sl2vl_n * QOS_SLS, tbl, QOS_SLS);
	for (uint32_t i = x & (h->cap - 1);; i = (i + 1) & (h->cap - 1))
		if (h->slot[i] == 0) {
			h->slot[i] = ++t->sl2vl_n;
			break;
		}
	*idx = (uint16_t)(t->sl2vl_n - 1);
	return 0;
}

static void uniform(uint8_t *tbl, unsigned n_sls, unsigned n)
{
	for (unsigned s = 0; s < QOS_SLS; s++)
		tbl[s] = s < n_sls ? (uint8_t)(s % n) : 0;
}

/* Switch sw's table for (ip, op): uniform, then the considered tuples'. */
static void switch_table(const struct vq *q, const struct voqsw_params *p,
			 uint32_t x, uint32_t sw, unsigned ip, unsigned op,
			 uint8_t *tbl)
{
	const struct fabric *f = q->f;
	uint32_t pi = fabric_port(f, sw, op);
	unsigned n = link_vls(f, pi, p);
	uniform(tbl, p->n_sls, n);
	uint32_t row = q->t->row_of_node[sw];
	if (ip == 0 || op == 0 || ip == op || row == FAB_NONE)
		return;
	uint32_t b = q->tri_of[q->tbase[row] + (ip - 1) * q->np[row] + (op - 1)];
	if (b == NONE)
		return;
	uint32_t r = f->ports[pi].remote;
	unsigned nP = f->nodes[f->ports[r].node].nports;
	for (unsigned nop = 1; nop <= nP; nop++) {
		uint32_t id = q->tup_of[b + nop];
		if (id == NONE || id >= x)
			continue;
		for (unsigned s = 0; s < p->n_sls; s++)
			if (q->used[id] & (1u << s))
				tbl[s] = (uint8_t)vl_of(nP, nop, n);
	}
}

static int fill_sl2vl(const struct vq *q, struct lft_tables *t,
		      const struct voqsw_params *p, uint32_t x)
{
	const struct fabric *f = q->f;
	struct interner h = { .cap = 1u << 17 };
	uint8_t tbl[QOS_SLS];
	int rc = -1;
	h.slot = calloc(h.cap, sizeof(*h.slot));
	if (!h.slot || lft_sl2vl_slots(f, t) < 0)
		goto out;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		unsigned w = t->sl2vl_width[i];
		uint16_t *row = t->sl2vl_idx + t->sl2vl_first[i];
		for (unsigned in = 0; in < w; in++)
			for (unsigned o = 0; o < w; o++) {
				if (f->nodes[i].type == FAB_SWITCH)
					switch_table(q, p, x, i, in, o, tbl);
				else	/* a CA port p: (p, p) */
					uniform(tbl, p->n_sls,
						link_vls(f, fabric_port(f, i, o), p));
				if (intern(t, &h, tbl, &row[in * w + o]) < 0)
					goto out;
			}
	}
	rc = 0;
out:
	free(h.slot);
	return rc;
}

/* ---- the report and the public functions ---- */

static void vq_free(struct vq *q)
{
	free(q->ep);
	free(q->ep_of_lid);
	free(q->tbase);
	free(q->tri_of);
	free(q->lftT);
	free(q->sslot);
	free(q->suffix);
	free(q->pool);
	free(q->ep_row);
	free(q->ep_ip);
	free(q->np);
	free(q->hbase);
	free(q->hop);
	free(q->tup_of);
	free(q->tup);
	free(q->tri_id);
	free(q->wt);
	free(q->ids);
	free(q->used);
	free(q->owned);
	free(q->wused);
	free(q->wowned);
}

/* Source classes: each end port's LIDs (LMC range) its ordinal. */
static int fill_classes(const struct vq *q, struct lft_tables *t)
{
	if (q->n_ep >= LFT_SL_NOCLASS)
		return -1;
	if (!(t->sl_class = malloc((size_t)q->cols * sizeof(*t->sl_class))))
		return -1;
	for (uint32_t l = 0; l < q->cols; l++)
		t->sl_class[l] = LFT_SL_NOCLASS;
	for (uint32_t e = 0; e < q->n_ep; e++) {
		uint32_t pi = q->ep[e], lid = q->f->ports[pi].lid;
		uint32_t span = 1u << fabric_port_lmc(q->f, pi);
		for (uint32_t k = 0; k < span && lid + k < q->cols; k++)
			t->sl_class[lid + k] = (uint16_t)e;
	}
	t->n_sl_class = q->n_ep;
	t->sl = calloc((size_t)q->n_ep * q->cols + 1, 1);
	return t->sl ? 0 : -1;
}

int voqsw_apply(const struct fabric *f, struct lft_tables *t,
		const struct voqsw_params *p, struct voqsw_report *r)
{
	struct vq q;
	struct sls_run s;
	uint32_t x;
	int ok;			/* the last ComputeSLs run succeeded */
	lft_tables_free_qos(t);
	memset(r, 0, sizeof(*r));
	if (p->n_sls < 1 || p->n_sls > QOS_SLS || p->n_vls < 1 ||
	    p->n_vls > 15)
		return -1;
	if (build(&q, f, t, r) < 0)
		goto fail;
	q.used = malloc(((size_t)q.x_max + 1) * sizeof(*q.used));
	q.owned = malloc(((size_t)q.n_blk + 1) * sizeof(*q.owned));
	if (!q.used || !q.owned || fill_classes(&q, t) < 0)
		goto fail;
	/*
	 * Rule 4's search: full VOQ, or the bisection's last success.  A
	 * run that succeeds writes every path's SL: run x again only when
	 * a failure came after it.
	 */
	ok = compute16(&q, q.x_max, p->n_sls, t->sl, &s) == 0;
	x = q.x_max;
	if (!ok) {
		uint32_t lo = 0, hi = q.x_max;
		while (hi - lo > 1) {
			uint32_t mid = lo + (hi - lo) / 2;
			ok = compute16(&q, mid, p->n_sls, t->sl, &s) == 0;
			if (ok)
				lo = mid;
			else
				hi = mid;
		}
		x = lo;
	}
	if ((!ok && compute16(&q, x, p->n_sls, t->sl, &s) < 0) ||
	    fill_sl2vl(&q, t, p, x) < 0)
		goto fail;
	r->considered = x;
	for (uint32_t i = 0; i < x; i++)
		r->weight_considered += q.wt[i];
	r->paths_covered = s.covered;
	r->sls_used = (unsigned)__builtin_popcountll(s.seen[0]);
	vq_free(&q);
	return 0;
fail:
	vq_free(&q);
	lft_tables_free_qos(t);
	return -1;
}

int voqsw_full_sls(const struct fabric *f, const struct lft_tables *t,
		   unsigned *sls, struct voqsw_report *r)
{
	struct vq q;
	int rc = -1;
	*sls = 0;
	if (build(&q, f, t, r) < 0)
		goto out;
	/* one word first: most fabrics need fewer than 64 SLs */
	for (unsigned W = 1; W <= VOQSW_MAX_SLS / 64; W *= 2) {
		struct sls_run s = { .x = q.x_max, .n_sls = W * 64 };
		free(q.wused);
		free(q.wowned);
		q.words = W;
		q.wused = calloc(((size_t)q.x_max + 1) * W, sizeof(*q.wused));
		q.wowned = calloc(((size_t)q.n_blk + 1) * W, sizeof(*q.wowned));
		if (!q.wused || !q.wowned)
			goto out;
		if (for_each_path(&q, 0, assign_wide, &s) == 0) {
			*sls = s.top + 1;
			r->considered = q.x_max;
			r->weight_considered = r->weight;
			r->paths_covered = r->paths;
			for (unsigned j = 0; j < W; j++)
				r->sls_used += (unsigned)__builtin_popcountll(s.seen[j]);
			rc = 0;
			break;
		}
	}
out:
	vq_free(&q);
	return rc;
}
