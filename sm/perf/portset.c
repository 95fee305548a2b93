/*
 * Ports sorted and carried over by (node GUID, port number)
 * (sm/perf/portset.h).
 */
#include "sm/perf/portset.h"

#include <stdlib.h>

static int by_key(const void *a, const void *b)
{
	const struct portset_key *x = a, *y = b;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return (int)x->port - (int)y->port;
}

void portset_sort(void *el, uint32_t n, size_t size)
{
	if (n)
		qsort(el, n, size, by_key);
}

void *portset_find(const void *el, uint32_t n, size_t size, uint64_t guid,
		   uint8_t port)
{
	struct portset_key key = { .guid = guid, .port = port };
	if (!n)
		return NULL;
	return bsearch(&key, el, n, size, by_key);
}

void portset_carry(void *el, uint32_t n, const void *prev, uint32_t n_prev,
		   size_t size, portset_carry_fn *carry)
{
	for (uint32_t i = 0; i < n && n_prev; i++) {
		void *x = (char *)el + (size_t)i * size;
		const struct portset_key *k = x;
		const void *o = portset_find(prev, n_prev, size, k->guid, k->port);
		if (o)
			carry(x, o);
	}
}
