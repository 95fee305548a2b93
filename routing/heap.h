/*
 * A binary min-heap of (key, value) for the engines' Dijkstras (dfsssp,
 * nue): stale items are left in and skipped by the caller when popped.
 */
#ifndef IBSMD_HEAP_H
#define IBSMD_HEAP_H

#include <stdint.h>

struct heap_item {
	uint64_t key;
	uint32_t val;
};

struct heap {
	struct heap_item *v;
	uint32_t n, cap;
};

/* 0, or -1 (ENOMEM: h unchanged). */
int heap_push(struct heap *h, uint64_t key, uint32_t val);
/* The least key (h->n must be above 0). */
struct heap_item heap_pop(struct heap *h);
void heap_free(struct heap *h);

#endif
