/* The engines' min-heap (see heap.h). */
#include "routing/heap.h"

#include <stdlib.h>

int heap_push(struct heap *h, uint64_t key, uint32_t val)
{
	if (h->n == h->cap) {
		uint32_t cap = h->cap ? 2 * h->cap : 1024;
		void *p = realloc(h->v, (size_t)cap * sizeof(*h->v));
		if (!p)
			return -1;
		h->v = p;
		h->cap = cap;
	}
	uint32_t i = h->n++;
	while (i) {
		uint32_t up = (i - 1) / 2;
		if (h->v[up].key <= key)
			break;
		h->v[i] = h->v[up];
		i = up;
	}
	h->v[i] = (struct heap_item){ key, val };
	return 0;
}

struct heap_item heap_pop(struct heap *h)
{
	struct heap_item top = h->v[0], last = h->v[--h->n];
	uint32_t i = 0;
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1].key < h->v[c].key)
			c++;
		if (h->v[c].key >= last.key)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
	return top;
}

void heap_free(struct heap *h)
{
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}
