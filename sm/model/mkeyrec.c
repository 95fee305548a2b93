/* Ports with another SM's M_Key (see mkeyrec.h). */
#include "sm/model/mkeyrec.h"

#include <stdlib.h>
#include <string.h>

#define MKREC_MIN_CAP 16

/* The index of guid, or where it goes (*found 0). */
static uint32_t find(const struct mkey_rec *r, uint64_t guid, int *found)
{
	uint32_t lo = 0, hi = r->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (r->v[mid].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < r->n && r->v[lo].guid == guid;
	return lo;
}

/* The entry of guid, made when absent; NULL when full or out of memory. */
static struct mkrec_port *entry(struct mkey_rec *r, uint64_t guid)
{
	int found;
	uint32_t i = find(r, guid, &found);
	if (found)
		return &r->v[i];
	if (r->n >= MKREC_MAX) {
		r->lost++;
		return NULL;
	}
	if (r->n == r->cap) {
		uint32_t cap = r->cap ? 2 * r->cap : MKREC_MIN_CAP;
		struct mkrec_port *v = realloc(r->v, (size_t)cap * sizeof(*v));
		if (!v)
			return NULL;
		r->v = v;
		r->cap = cap;
	}
	memmove(&r->v[i + 1], &r->v[i], (size_t)(r->n - i) * sizeof(*r->v));
	r->n++;
	memset(&r->v[i], 0, sizeof(r->v[i]));
	r->v[i].guid = guid;
	return &r->v[i];
}

uint64_t mkrec_key(const struct mkey_rec *r, uint64_t guid)
{
	int found;
	if (!r->n)
		return 0;
	uint32_t i = find(r, guid, &found);
	return found ? r->v[i].key : 0;
}

int mkrec_is_refusing(const struct mkey_rec *r, uint64_t guid)
{
	int found;
	if (!r->n)
		return 0;
	uint32_t i = find(r, guid, &found);
	return found && r->v[i].since_ms;
}

int mkrec_seen(struct mkey_rec *r, uint64_t guid, uint64_t key, uint64_t now_ms)
{
	struct mkrec_port *p = entry(r, guid);
	if (!p)
		return -1;
	p->key = key;
	p->noted_ms = now_ms;
	p->since_ms = p->end_ms = 0;	/* it answers: its lease is over */
	p->level = 0;
	return 0;
}

int mkrec_refused(struct mkey_rec *r, uint64_t guid, int level, uint64_t now_ms,
		  uint64_t lease_ms)
{
	struct mkrec_port *p = entry(r, guid);
	if (!p)
		return -1;
	p->key = 0;	/* a key read before did not pass: not its key now */
	if (!p->since_ms || p->level != level) {
		p->since_ms = now_ms ? now_ms : 1;
		p->end_ms = lease_ms == MKREC_NEVER ? 0 : now_ms + lease_ms;
	}
	p->level = (uint8_t)level;
	p->noted_ms = now_ms;
	return 0;
}

void mkrec_round(struct mkey_rec *r, uint64_t now_ms)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < r->n; i++)
		if (r->v[i].noted_ms >= r->round_ms)
			r->v[k++] = r->v[i];
	r->n = k;
	r->round_ms = now_ms;
}

void mkrec_forget(struct mkey_rec *r, uint64_t guid)
{
	int found;
	uint32_t i = find(r, guid, &found);
	if (!found)
		return;
	memmove(&r->v[i], &r->v[i + 1], (size_t)(r->n - i - 1) * sizeof(*r->v));
	r->n--;
}

void mkrec_taken(struct mkey_rec *r, uint64_t guid)
{
	r->taken_over++;
	mkrec_forget(r, guid);
}

uint32_t mkrec_refusing(const struct mkey_rec *r, uint64_t *first_end_ms,
			uint64_t *last_end_ms)
{
	uint32_t n = 0;
	uint64_t first = 0, last = 0;
	for (uint32_t i = 0; i < r->n; i++) {
		const struct mkrec_port *p = &r->v[i];
		if (!p->since_ms)
			continue;
		n++;
		if (!p->end_ms)
			continue;
		if (!first || p->end_ms < first)
			first = p->end_ms;
		if (p->end_ms > last)
			last = p->end_ms;
	}
	if (first_end_ms)
		*first_end_ms = first;
	if (last_end_ms)
		*last_end_ms = last;
	return n;
}

void mkrec_free(struct mkey_rec *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}
