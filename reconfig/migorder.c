/* The order of a migration's LFT writes: see migorder.h. */
#include "reconfig/migorder.h"

#include <stdlib.h>
#include <string.h>

/* A plan's writes: by wave, then the priority of their row, row, block. */
static int by_wave_prio(const void *a, const void *b)
{
	const struct mig_write *x = a, *y = b;
	if (x->wave != y->wave)
		return x->wave < y->wave ? -1 : 1;
	if (x->prio != y->prio)
		return x->prio < y->prio ? -1 : 1;
	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	return (x->block > y->block) - (x->block < y->block);
}

void mig_sort_writes(struct mig_write *w, uint32_t n)
{
	if (n)
		qsort(w, n, sizeof(*w), by_wave_prio);
}

/*
 * The tables the order sees: c's columns alone, at column 1 and (second
 * LID) 2 when both are written in one block, else 65 -- a block apart,
 * as they are; and only the rows whose entry for one of them changes or
 * that some row's entry, before or after, leads to.  A row left out
 * never changes, so it gets no wave, and no route of those LIDs enters
 * it, so nothing waits for it and no dependency leads into its channels:
 * none can be on a cycle.  On a fabric of vSwitches that leaves out
 * every vSwitch but the two of the move.
 */
struct small {
	struct lft_tables t;
	struct order_held h;
	uint8_t *held, *known;
	uint32_t col[2];
	uint32_t *row;		/* small row -> t's row */
};

/* The row t's row r's entry p leads to, or FAB_NONE. */
static uint32_t next_row(const struct fabric *f, const struct lft_tables *t,
			 uint32_t r, uint8_t p)
{
	uint32_t node = t->sw_node[r];
	if (p == 0 || p == LFT_DROP || p > f->nodes[node].nports)
		return FAB_NONE;
	uint32_t rem = fabric_portp(f, node, p)->remote;
	return rem == FAB_NONE ? FAB_NONE : t->row_of_node[f->ports[rem].node];
}

/* Row r's entry for c's k-th LID after the change. */
static uint8_t after(const struct mig_cols *c, const struct lft_tables *t,
		     uint32_t r, unsigned k)
{
	return c->after ? c->after[(size_t)r * c->n + k] : lft_row(t, r)[c->lid[k]];
}

/* Which rows the order needs (keep[], per row of t); how many. */
static uint32_t rows_needed(const struct fabric *f, const struct lft_tables *t,
			    const struct mig_cols *c, uint8_t *keep)
{
	uint32_t n = 0;
	for (uint32_t r = 0; r < t->n_sw; r++)
		for (unsigned k = 0; k < c->n; k++) {
			uint8_t was = c->before[(size_t)r * c->n + k];
			uint8_t now = after(c, t, r, k);
			uint32_t a = next_row(f, t, r, was), b = next_row(f, t, r, now);
			keep[r] |= was != now;
			if (a != FAB_NONE)
				keep[a] = 1;
			if (b != FAB_NONE)
				keep[b] = 1;
		}
	for (uint32_t r = 0; r < t->n_sw; r++)
		n += keep[r];
	return n;
}

static int small_build(struct small *s, const struct fabric *f,
		       const struct lft_tables *t, const struct mig_cols *c)
{
	int apart = c->n == 2 && c->block[0] != c->block[1];
	memset(s, 0, sizeof(*s));
	uint8_t *keep = calloc((size_t)t->n_sw + 1, 1);
	if (!keep)
		return -1;
	uint32_t n = rows_needed(f, t, c, keep);
	s->col[0] = 1;
	s->col[1] = apart ? FAB_LFT_BLOCK + 1 : 2;
	s->t.n_sw = n;
	s->t.max_lid = s->col[c->n - 1];
	uint32_t n_lid = s->t.max_lid + 1;
	size_t cells = (size_t)n * n_lid;
	s->h.blocks = s->t.max_lid / FAB_LFT_BLOCK + 1;
	s->row = malloc(((size_t)n + 1) * sizeof(*s->row));
	s->t.sw_node = malloc(((size_t)n + 1) * sizeof(*s->t.sw_node));
	s->t.row_of_node = malloc(((size_t)f->n_nodes + 1) * sizeof(*s->t.row_of_node));
	s->t.port = malloc(cells + 1);
	s->held = malloc(cells + 1);
	s->known = malloc((size_t)n * s->h.blocks + 1);
	if (!s->row || !s->t.sw_node || !s->t.row_of_node || !s->t.port ||
	    !s->held || !s->known) {
		free(keep);
		return -1;
	}
	memset(s->t.port, LFT_DROP, cells);
	memset(s->held, LFT_DROP, cells);
	memset(s->known, 1, (size_t)n * s->h.blocks);
	for (uint32_t i = 0; i < f->n_nodes; i++)
		s->t.row_of_node[i] = FAB_NONE;
	for (uint32_t r = 0, i = 0; r < t->n_sw; r++) {
		if (!keep[r])
			continue;
		s->row[i] = r;
		s->t.sw_node[i] = t->sw_node[r];
		s->t.row_of_node[t->sw_node[r]] = i;
		for (unsigned k = 0; k < c->n; k++) {
			size_t at = (size_t)i * n_lid + s->col[k];
			s->t.port[at] = after(c, t, r, k);
			s->held[at] = c->before[(size_t)r * c->n + k];
		}
		i++;
	}
	free(keep);
	s->h.port = s->held;
	s->h.known = s->known;
	return 0;
}

static void small_free(struct small *s)
{
	free(s->row);
	free(s->t.sw_node);
	free(s->t.row_of_node);
	free(s->t.port);
	free(s->held);
	free(s->known);
}

int mig_order(const struct fabric *f, const struct lft_tables *t,
	      const struct mig_cols *c, const uint8_t *prio, uint8_t first,
	      struct migration *m, struct mig_write **w, uint32_t *n_w)
{
	struct small s;
	struct order_result r;
	int rc = -1;
	memset(&r, 0, sizeof(r));
	*w = NULL;
	*n_w = 0;
	if (small_build(&s, f, t, c) < 0 || order_lft(f, &s.t, &s.h, &r) < 0)
		goto out;
	uint32_t n_lid = s.t.max_lid + 1;
	m->ord_wave = calloc((size_t)t->n_sw * c->n + 1, 1);
	*w = calloc((size_t)r.n_w + 1, sizeof(**w));
	if (!m->ord_wave || !*w)
		goto out;
	for (uint32_t i = 0; i < r.n_w; i++) {
		const struct order_write *o = &r.w[i];
		uint32_t row = s.row[o->row];
		(*w)[i] = (struct mig_write){
			.row = row,
			.block = c->block[o->block && c->n == 2],
			.wave = (uint8_t)(first + o->wave),
			.vswitch = (uint8_t)fabric_is_vswitch(f, t->sw_node[row]),
			.mixed = o->how == ORDER_W_MIX,
			.prio = prio[row],
		};
	}
	*n_w = r.n_w;
	mig_sort_writes(*w, *n_w);
	m->ord_n = c->n;
	memset(m->ord_wave, first, (size_t)t->n_sw * c->n);
	for (unsigned k = 0; k < c->n; k++) {
		m->ord_lid[k] = c->lid[k];
		m->ord_drained[k] = r.drained_lid && r.drained_lid[s.col[k]];
		for (uint32_t i = 0; r.entry_wave && i < s.t.n_sw; i++)
			m->ord_wave[(size_t)s.row[i] * c->n + k] = (uint8_t)(first +
				r.entry_wave[(size_t)i * n_lid + s.col[k]]);
	}
	order_stats(&r, &m->order);
	m->order.deepest_lid = r.deepest_lid == s.col[1] && c->n == 2 ?
			       c->lid[1] : c->lid[0];
	m->lft_first = first;
	m->waves = first + r.waves;
	rc = 0;
out:
	if (rc < 0) {
		free(*w);
		*w = NULL;
		*n_w = 0;
	}
	order_result_free(&r);
	small_free(&s);
	return rc;
}
