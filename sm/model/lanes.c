/*
 * dFtree's hot-spot set and path SL.  See lanes.h.
 */
#include "sm/model/lanes.h"

#include <stdlib.h>
#include <string.h>

void lanes_configure(struct lanes *l, const struct config *c)
{
	l->on = c->cong_mode == CONG_DFTREE;
	l->fast_sl = (uint8_t)c->cong_fast_sl;
	l->slow_sl = (uint8_t)c->cong_slow_sl;
	if (!l->on)
		l->n_hot = 0;
}

void lanes_free(struct lanes *l)
{
	free(l->hot);
	memset(l, 0, sizeof(*l));
}

/* The index of the first hot LID >= lid (n_hot when none). */
static uint32_t lower_bound(const struct lanes *l, uint32_t lid)
{
	uint32_t lo = 0, hi = l->n_hot;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (l->hot[mid] < lid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int lanes_is_hot(const struct lanes *l, uint32_t lid)
{
	uint32_t i = lower_bound(l, lid);
	return i < l->n_hot && l->hot[i] == lid;
}

int lanes_set_hot(struct lanes *l, uint32_t lid, int on)
{
	uint32_t i = lower_bound(l, lid);
	int present = i < l->n_hot && l->hot[i] == lid;
	if (!on == !present)
		return 0;
	if (!on) {
		memmove(l->hot + i, l->hot + i + 1, (l->n_hot - i - 1) * sizeof(*l->hot));
		l->n_hot--;
		return 1;
	}
	if (l->n_hot == l->cap) {
		uint32_t cap = l->cap ? 2 * l->cap : 16;
		uint32_t *h = realloc(l->hot, cap * sizeof(*h));
		if (!h)
			return -1;
		l->hot = h;
		l->cap = cap;
	}
	memmove(l->hot + i + 1, l->hot + i, (l->n_hot - i) * sizeof(*l->hot));
	l->hot[i] = lid;
	l->n_hot++;
	return 1;
}

uint8_t lanes_path_sl(const struct lanes *l, uint32_t dlid, uint32_t base_lid,
		      uint8_t sl)
{
	if (!l || !l->on)
		return sl;
	return lanes_is_hot(l, dlid) || lanes_is_hot(l, base_lid) ? l->slow_sl :
								  l->fast_sl;
}
