#include "lids.h"

#include <stdlib.h>
#include <string.h>

struct ep {
	uint64_t guid;
	uint32_t port;
};

static int cmp_ep(const void *a, const void *b)
{
	const struct ep *x = a, *y = b;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* A usable base LID for a range of span LIDs, free in used[]. */
static int range_ok(const uint8_t *used, uint32_t lid, uint32_t span)
{
	if (!lid || lid % span || lid + span - 1 > LID_UCAST_MAX)
		return 0;
	for (uint32_t k = 0; k < span; k++)
		if (used[lid + k])
			return 0;
	return 1;
}

static void take(uint8_t *used, uint32_t lid, uint32_t span)
{
	memset(used + lid, 1, span);
}

int lids_assign(struct fabric *f, const struct guid_map *persisted,
		uint8_t lmc, struct lid_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	f->lmc = lmc;
	uint8_t *used = calloc(LID_UCAST_MAX + 2, 1);
	struct ep *eps = malloc(((size_t)f->n_ports + 1) * sizeof(*eps));
	uint64_t *pkeys = NULL;
	if (!used || !eps)
		goto nomem;
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->n_ports; i++) {
		f->ports[i].lid = 0;
		if (fabric_is_endport(f, i))
			eps[n++] = (struct ep){ f->ports[i].guid, i };
	}
	qsort(eps, n, sizeof(*eps), cmp_ep);

	/* 1. persisted LIDs, every entry in GUID order; absent ports reserve theirs */
	if (persisted && persisted->used) {
		pkeys = malloc(persisted->used * sizeof(*pkeys));
		if (!pkeys)
			goto nomem;
		uint32_t k = 0;
		for (uint32_t i = 0; i < persisted->cap; i++)
			if (persisted->keys[i])
				pkeys[k++] = persisted->keys[i];
		qsort(pkeys, k, sizeof(*pkeys), cmp_u64);
		uint32_t e = 0;
		for (uint32_t i = 0; i < k; i++) {
			uint32_t lid = guid_map_get(persisted, pkeys[i]);
			while (e < n && eps[e].guid < pkeys[i])
				e++;
			int present = e < n && eps[e].guid == pkeys[i];
			uint32_t span = present ? 1u << fabric_port_lmc(f, eps[e].port) :
					1u << lmc;
			if (!range_ok(used, lid, span)) {
				if (present)
					rep->conflicts++;
				continue;
			}
			take(used, lid, span);
			if (present) {
				f->ports[eps[e].port].lid = lid;
				rep->kept_persisted++;
			}
		}
	}
	/* 2. the LID a port already holds */
	for (uint32_t e = 0; e < n; e++) {
		struct fab_port *p = &f->ports[eps[e].port];
		uint32_t span = 1u << fabric_port_lmc(f, eps[e].port);
		if (p->lid || !p->hw_lid)
			continue;
		if (range_ok(used, p->hw_lid, span)) {
			p->lid = p->hw_lid;
			take(used, p->lid, span);
			rep->kept_existing++;
		} else {
			rep->conflicts++;
		}
	}
	/* 3. the rest, packed low: the lowest free aligned range */
	uint32_t low = 1;	/* below it every LID is taken */
	for (uint32_t e = 0; e < n; e++) {
		struct fab_port *p = &f->ports[eps[e].port];
		uint32_t span = 1u << fabric_port_lmc(f, eps[e].port);
		if (p->lid)
			continue;
		while (low <= LID_UCAST_MAX && used[low])
			low++;
		uint32_t lid = (low + span - 1) / span * span;
		while (lid <= LID_UCAST_MAX && !range_ok(used, lid, span))
			lid += span;
		if (lid > LID_UCAST_MAX) {
			rep->exhausted++;
			continue;
		}
		p->lid = lid;
		take(used, lid, span);
		rep->assigned++;
	}
	free(used);
	free(eps);
	free(pkeys);
	return fabric_index_lids(f);
nomem:
	free(used);
	free(eps);
	free(pkeys);
	return -1;
}

int lids_record(const struct fabric *f, struct guid_map *m)
{
	for (uint32_t i = 0; i < f->n_ports; i++)
		if (fabric_is_endport(f, i) && f->ports[i].lid &&
		    f->ports[i].guid &&
		    guid_map_put(m, f->ports[i].guid, f->ports[i].lid) < 0)
			return -1;
	return 0;
}
