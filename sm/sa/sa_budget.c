/*
 * The SA's answers in flight (sa_budget.h): per-requester use in a small
 * hash table (an entry lives while its requester has answers in flight),
 * every ticket on a list so that the budget's end frees them.
 */
#include "sm/sa/sa_budget.h"

#include <stdlib.h>

#include "mad/sa.h"

#define BUCKETS 256

struct use {
	struct use *next;
	uint64_t key;
	unsigned n;
	uint64_t bytes;
	int blocked;		/* refused for its bytes: no work until one ends */
};

struct sa_ticket {
	struct sa_ticket *prev, *next;
	struct sa_budget *b;
	uint64_t key;
	uint64_t bytes;
};

struct sa_budget {
	struct use *tab[BUCKETS];
	struct sa_ticket *tickets;
	int blocked;		/* the total was short: no work until one ends */
	struct sa_budget_stats st;
};

static struct use **slot(struct sa_budget *b, uint64_t key)
{
	struct use **pp = &b->tab[(key * 0x9e3779b97f4a7c15ULL) >> 56];
	while (*pp && (*pp)->key != key)
		pp = &(*pp)->next;
	return pp;
}

struct sa_budget *sa_budget_new(void)
{
	return calloc(1, sizeof(struct sa_budget));
}

void sa_budget_free(struct sa_budget *b)
{
	if (!b)
		return;
	while (b->tickets) {
		struct sa_ticket *t = b->tickets;
		b->tickets = t->next;
		free(t);
	}
	for (unsigned i = 0; i < BUCKETS; i++)
		while (b->tab[i]) {
			struct use *u = b->tab[i];
			b->tab[i] = u->next;
			free(u);
		}
	free(b);
}

int sa_budget_admit(struct sa_budget *b, const struct sa_limits *l, uint64_t key)
{
	const struct use *u = *slot(b, key);
	if (u && (u->blocked || u->n >= l->per_requester ||
		  u->bytes >= l->bytes_per_requester)) {
		b->st.busy_requester++;
		return MAD_STS_BUSY;
	}
	if (b->blocked || b->st.answers >= l->total || b->st.bytes >= l->bytes) {
		b->st.busy_total++;
		return MAD_STS_BUSY;
	}
	return 0;
}

int sa_budget_take(struct sa_budget *b, const struct sa_limits *l, uint64_t key,
		   uint64_t bytes, struct sa_ticket **t)
{
	struct use **pp = slot(b, key), *u = *pp;
	if (bytes > l->bytes_per_requester)
		return SA_STS_NO_RESOURCES;
	if (u && (u->n >= l->per_requester || u->bytes + bytes > l->bytes_per_requester)) {
		u->blocked = 1;
		b->st.busy_requester++;
		return MAD_STS_BUSY;
	}
	if (b->st.answers >= l->total || b->st.bytes + bytes > l->bytes) {
		b->blocked = 1;
		b->st.busy_total++;
		return MAD_STS_BUSY;
	}
	if (!u && !(u = *pp = calloc(1, sizeof(*u))))
		return SA_STS_NO_RESOURCES;
	struct sa_ticket *k = calloc(1, sizeof(*k));
	if (!k) {
		if (!u->n) {
			*pp = u->next;
			free(u);
		}
		return SA_STS_NO_RESOURCES;
	}
	if (!u->n)
		b->st.requesters++;
	u->key = key;
	u->n++;
	u->bytes += bytes;
	k->b = b;
	k->key = key;
	k->bytes = bytes;
	k->next = b->tickets;
	if (b->tickets)
		b->tickets->prev = k;
	b->tickets = k;
	b->st.answers++;
	b->st.bytes += bytes;
	if (b->st.bytes > b->st.bytes_peak)
		b->st.bytes_peak = b->st.bytes;
	*t = k;
	return 0;
}

void sa_budget_give(struct sa_ticket *t)
{
	struct sa_budget *b = t->b;
	struct use **pp = slot(b, t->key), *u = *pp;
	if (u) {
		u->n--;
		u->bytes -= t->bytes;
		u->blocked = 0;
		if (!u->n) {
			*pp = u->next;
			free(u);
			b->st.requesters--;
		}
	}
	b->blocked = 0;
	b->st.answers--;
	b->st.bytes -= t->bytes;
	*(t->prev ? &t->prev->next : &b->tickets) = t->next;
	if (t->next)
		t->next->prev = t->prev;
	free(t);
}

const struct sa_budget_stats *sa_budget_get_stats(const struct sa_budget *b)
{
	return &b->st;
}
