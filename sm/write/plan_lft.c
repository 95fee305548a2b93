#include "sm/write/plan_lft.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconfig/order.h"
#include "sm/base/clock.h"

/* What the switches hold, as the cache knows it, in t's layout. */
static int held_build(struct order_held *h, uint8_t **port, uint8_t **known,
		      const struct fabric *f, const struct devcache *c,
		      const struct lft_tables *t)
{
	uint32_t n_lid = t->max_lid + 1;
	h->blocks = t->max_lid / FAB_LFT_BLOCK + 1;
	*port = malloc((size_t)t->n_sw * n_lid + 1);
	*known = calloc((size_t)t->n_sw * h->blocks + 1, 1);
	if (!*port || !*known)
		return -1;
	for (uint32_t r = 0; r < t->n_sw; r++) {
		uint32_t top, nb;
		const uint8_t *valid;
		const uint8_t *lft = devcache_lft(c, f, t->sw_node[r], &nb, &valid, &top);
		for (uint32_t b = 0; b < h->blocks; b++) {
			uint32_t first = b * FAB_LFT_BLOCK;
			const uint8_t *blk = lft && b < nb && valid[b] ? lft + first : NULL;
			uint8_t *dst = *port + (size_t)r * n_lid + first;
			uint32_t n = n_lid - first < FAB_LFT_BLOCK ? n_lid - first : FAB_LFT_BLOCK;
			/*
			 * entries above LinearFDBTop forward nothing (SwitchInfo,
			 * IBA 14.2.5.4); LID 0, block 0's first, is no LID
			 */
			if (top != UINT32_MAX && first + (first == 0) > top) {
				memset(dst, LFT_DROP, n);
			} else if (blk) {
				memcpy(dst, blk, n);
				for (uint32_t k = 0; top != UINT32_MAX && first + n - 1 > top && k < n; k++)
					if (first + k > top)
						dst[k] = LFT_DROP;
			} else {
				continue;
			}
			(*known)[(size_t)r * h->blocks + b] = 1;
		}
	}
	h->port = *port;
	h->known = *known;
	return 0;
}

/* Every switch's blocks in one wave, as held or not (the executor skips what is). */
static int one_wave(struct plan *p, int wave, const struct fabric *f,
		    const struct lft_tables *t)
{
	for (uint32_t r = 0; r < t->n_sw; r++) {
		uint32_t node = t->sw_node[r], cap = f->nodes[node].lft_cap;
		uint32_t blocks = t->max_lid / FAB_LFT_BLOCK + 1;
		if (cap && blocks > (cap + FAB_LFT_BLOCK - 1) / FAB_LFT_BLOCK)
			blocks = (cap + FAB_LFT_BLOCK - 1) / FAB_LFT_BLOCK;
		for (uint32_t b = 0; b < blocks; b += UINT16_MAX) {
			uint32_t k = blocks - b < UINT16_MAX ? blocks - b : UINT16_MAX;
			if (!plan_add_lft_row(p, wave, node, r, b, k))
				return -1;
		}
	}
	return 0;
}

/* The ordered writes of r into p from wave first; the stats. */
static int emit(struct plan *p, int first, const struct fabric *f,
		const struct lft_tables *t, const struct order_held *h,
		const struct order_result *r, struct lft_order_stats *st)
{
	if (first + r->waves > PLAN_MAX_WAVES)
		return -1;
	for (uint32_t i = 0; i < r->n_w; i++) {
		const struct order_write *w = &r->w[i];
		uint32_t node = t->sw_node[w->row];
		int wave = first + w->wave;
		uint32_t cap = f->nodes[node].lft_cap;
		if (cap && w->block * FAB_LFT_BLOCK >= cap)
			continue;	/* past LinearFDBCap: the sweep says so */
		if (w->how == ORDER_W_WHOLE) {
			if (!plan_add_lft_row(p, wave, node, w->row, w->block, 1))
				return -1;
			continue;
		}
		uint8_t blk[SMP_DATA_SIZE];
		order_payload(t, h, r, i, blk);
		uint32_t di = plan_data(p, wave, blk);
		if (di == UINT32_MAX || !plan_add(p, wave, PLAN_LFT, node, 0, w->block, di))
			return -1;
	}
	order_stats(r, st);
	return 0;
}

/* Orders held -> t and plans it; frees what it made. */
static int plan_held(struct plan *p, int first, const struct fabric *f,
		     const struct lft_tables *t, struct order_held *h,
		     uint8_t *port, uint8_t *known, uint64_t t0, struct lft_order_stats *st)
{
	struct order_result r;
	int rc = -1;
	memset(&r, 0, sizeof(r));
	if (port && known && order_lft(f, t, h, &r) == 0 && emit(p, first, f, t, h, &r, st) == 0)
		rc = 0;
	st->plan_us = clock_us() - t0;
	order_result_free(&r);
	free(port);
	free(known);
	return rc;
}

int plan_lft_ordered(struct plan *p, int first, const struct fabric *f,
		     const struct devcache *c, const struct lft_tables *t,
		     int unordered, struct lft_order_stats *st)
{
	struct order_held h;
	uint8_t *port = NULL, *known = NULL;
	uint64_t t0 = clock_us();
	memset(st, 0, sizeof(*st));
	plan_set_tables(p, t);
	if (unordered)
		return one_wave(p, first, f, t);
	if (held_build(&h, &port, &known, f, c, t) < 0) {
		free(port);
		free(known);
		return -1;
	}
	return plan_held(p, first, f, t, &h, port, known, t0, st);
}

int plan_lft_change(struct plan *p, int first, const struct fabric *f,
		    const struct lft_tables *from, const struct lft_tables *to,
		    struct lft_order_stats *st)
{
	struct order_held h;
	uint32_t n_lid = to->max_lid + 1;
	uint64_t t0 = clock_us();
	memset(st, 0, sizeof(*st));
	plan_set_tables(p, to);
	h.blocks = to->max_lid / FAB_LFT_BLOCK + 1;
	uint8_t *port = malloc((size_t)to->n_sw * n_lid + 1);
	uint8_t *known = calloc((size_t)to->n_sw * h.blocks + 1, 1);
	for (uint32_t r = 0; port && known && r < to->n_sw; r++)
		for (uint32_t b = 0; b < h.blocks; b++) {
			uint32_t lo = b * FAB_LFT_BLOCK;
			uint32_t hi = lo + FAB_LFT_BLOCK - 1 < to->max_lid ? lo + FAB_LFT_BLOCK - 1 : to->max_lid;
			if (hi > from->max_lid)
				continue;	/* past from's LIDs: not known */
			memcpy(port + (size_t)r * n_lid + lo, lft_row(from, r) + lo, hi - lo + 1);
			known[(size_t)r * h.blocks + b] = 1;
		}
	h.port = port;
	h.known = known;
	return plan_held(p, first, f, to, &h, port, known, t0, st);
}

void lft_order_describe(const struct lft_order_stats *st, char *buf, size_t len)
{
	if (!st->waves) {
		snprintf(buf, len, "no LFT entry changes");
		return;
	}
	int n = snprintf(buf, len, "%llu LFT entries in %u blocks, %u wave%s: ",
			 (unsigned long long)st->entries, st->blocks, st->waves,
			 st->waves == 1 ? "" : "s");
	if (n < 0 || (size_t)n >= len)
		return;
	if (st->drained)
		snprintf(buf + n, len - n, "each switch after its new next hop, and %u LID%s drained "
			 "(its changed entries dropped, then written): without, wave %u could close a "
			 "channel-dependency cycle", st->drained, st->drained == 1 ? "" : "s",
			 st->cycle_wave);
	else if (st->waves == 1)
		snprintf(buf + n, len - n, "no switch waits for another%s",
			 st->dep_checked ? "" : " (dependencies not checked: the tables have cycles on one VL)");
	else
		snprintf(buf + n, len - n, "each switch after its new next hop (LID %u's routes the deepest)%s%s",
			 st->deepest_lid, st->split ? ", blocks split across waves" : "",
			 st->dep_checked ? "" : "; dependencies not checked: the tables have cycles on one VL");
}

json_t *lft_order_to_ctl(const struct lft_order_stats *st)
{
	char why[256];
	lft_order_describe(st, why, sizeof(why));
	const char *how = !st->waves ? "none" : st->drained ? "drained" :
			  st->waves == 1 ? "one wave" : "ordered";
	return json_pack("{s:i,s:i,s:I,s:i,s:i,s:s,s:s,s:b,s:f}",
			 "waves", (int)st->waves, "blocks", (int)st->blocks,
			 "entries", (json_int_t)st->entries, "split", (int)st->split,
			 "drained_lids", (int)st->drained,
			 "how", how, "reason", why, "dependencies_checked", st->dep_checked,
			 "plan_ms", st->plan_us / 1000.0);
}
