#include "sm/model/lids.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sm/base/log.h"

struct ep {
	uint64_t guid;
	uint32_t port;
};

/* A persisted entry; port is the present end port with its GUID, or FAB_NONE. */
struct pent {
	uint64_t guid;
	uint32_t lid;
	uint32_t seen;
	uint32_t port;
};

static int cmp_ep(const void *a, const void *b)
{
	const struct ep *x = a, *y = b;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

static int cmp_pent_guid(const void *a, const void *b)
{
	const struct pent *x = a, *y = b;
	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

/* Oldest first; entries of the same age (old files have none) by GUID. */
static int cmp_pent_age(const void *a, const void *b)
{
	const struct pent *x = a, *y = b;
	if (x->seen != y->seen)
		return x->seen < y->seen ? -1 : 1;
	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

/* The highest unicast LID given: LID_UCAST_MAX but in tests (lid_limit). */
static uint32_t ucast_max(const struct fabric *f)
{
	return f->lid_limit && f->lid_limit < LID_UCAST_MAX ? f->lid_limit :
	       LID_UCAST_MAX;
}

/* A VF port of a vSwitch: where a full LID space leaves its slot shared. */
static int is_vf(const struct fabric *f, uint32_t pi)
{
	int vf = -1;
	return fabric_vswitch_of(f, pi, &vf) != FAB_NONE && vf >= 0;
}

/* A usable base LID for a range of span LIDs, free in used[]. */
static int range_ok(const uint8_t *used, uint32_t lid, uint32_t span,
		    uint32_t max)
{
	if (!lid || lid % span || lid + span - 1 > max)
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

/* An idle VF under the dynamic scheme: no LID until a VM runs there. */
static int nolid(const struct fabric *f, uint32_t pi)
{
	return (f->ports[pi].flags & FPORT_NOLID) != 0;
}

/*
 * The persisted entries sorted by GUID, each with its present port (the
 * end ports eps[] are sorted by GUID too).  *out is NULL when there are none.
 */
static int persisted_entries(const struct guid_map *m, const struct ep *eps,
			     uint32_t n, struct pent **out, uint32_t *count)
{
	*out = NULL;
	*count = 0;
	if (!m || !m->used)
		return 0;
	struct pent *pe = malloc(m->used * sizeof(*pe));
	if (!pe)
		return -1;
	uint32_t k = 0;
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			pe[k++] = (struct pent){ m->keys[i], m->vals[i],
						 m->aux ? m->aux[i] : 0, FAB_NONE };
	qsort(pe, k, sizeof(*pe), cmp_pent_guid);
	uint32_t e = 0;
	for (uint32_t i = 0; i < k; i++) {
		while (e < n && eps[e].guid < pe[i].guid)
			e++;
		if (e < n && eps[e].guid == pe[i].guid)
			pe[i].port = eps[e].port;
	}
	*out = pe;
	*count = k;
	return 0;
}

/*
 * The lowest free aligned range of span LIDs at or above *low, or 0.
 * *low only moves up: below it every LID is taken, and LIDs are only ever
 * taken here, so a span that found no room once never will again
 * (*no_room, the smallest such span), which keeps a full space linear.
 */
static uint32_t free_range(const uint8_t *used, uint32_t *low, uint32_t *no_room,
			   uint32_t span, uint32_t max)
{
	if (span >= *no_room)
		return 0;
	while (*low <= max && used[*low])
		(*low)++;
	uint32_t lid = (*low + span - 1) / span * span;
	while (lid <= max && !range_ok(used, lid, span, max))
		lid += span;
	if (lid > max) {
		*no_room = span;
		return 0;
	}
	return lid;
}

int lids_assign(struct fabric *f, const struct guid_map *persisted,
		uint8_t lmc, struct lid_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	f->lmc = lmc;
	uint32_t umax = ucast_max(f);
	uint8_t *used = calloc(LID_UCAST_MAX + 2, 1);
	struct ep *eps = malloc(((size_t)f->n_ports + 1) * sizeof(*eps));
	struct pent *pe = NULL;
	uint32_t n_pe = 0;
	if (!used || !eps)
		goto nomem;
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->n_ports; i++) {
		f->ports[i].lid = 0;
		if (fabric_is_endport(f, i))
			eps[n++] = (struct ep){ f->ports[i].guid, i };
	}
	qsort(eps, n, sizeof(*eps), cmp_ep);
	if (persisted_entries(persisted, eps, n, &pe, &n_pe) < 0)
		goto nomem;

	/*
	 * 1a. the persisted LIDs of present ports, in GUID order.  An idle VF
	 * (FPORT_NOLID) is present: its old entry is neither kept nor
	 * reserved, the LID is free for the next VM.
	 */
	for (uint32_t i = 0; i < n_pe; i++) {
		if (pe[i].port == FAB_NONE || nolid(f, pe[i].port))
			continue;
		uint32_t span = 1u << fabric_port_lmc(f, pe[i].port);
		if (!range_ok(used, pe[i].lid, span, umax)) {
			rep->conflicts++;
			continue;
		}
		take(used, pe[i].lid, span);
		f->ports[pe[i].port].lid = pe[i].lid;
		rep->kept_persisted++;
	}
	/*
	 * 1b. absent ports reserve theirs (a whole aligned range, as we cannot
	 * know their LMC), after the present ones so that a clash between the
	 * two never costs a present port its LID.  The reservations honoured
	 * move to the front of pe[], oldest first: what step 3 reclaims.
	 */
	uint32_t n_resv = 0, rspan = 1u << lmc;
	for (uint32_t i = 0; i < n_pe; i++) {
		if (pe[i].port != FAB_NONE || !range_ok(used, pe[i].lid, rspan, umax))
			continue;
		take(used, pe[i].lid, rspan);
		pe[n_resv++] = pe[i];
	}
	if (n_resv)
		qsort(pe, n_resv, sizeof(*pe), cmp_pent_age);
	/* 2. the LID a port already holds */
	for (uint32_t e = 0; e < n; e++) {
		struct fab_port *p = &f->ports[eps[e].port];
		uint32_t span = 1u << fabric_port_lmc(f, eps[e].port);
		if (p->lid || !p->hw_lid || nolid(f, eps[e].port))
			continue;
		if (range_ok(used, p->hw_lid, span, umax)) {
			p->lid = p->hw_lid;
			take(used, p->lid, span);
			rep->kept_existing++;
		} else {
			rep->conflicts++;
		}
	}
	/*
	 * 3. the rest, packed low: the lowest free aligned range; when the
	 * space is full, the range of the oldest reservation.  A port narrower
	 * than a reclaimed range (a base switch port 0 when LMC > 0) leaves the
	 * rest of it in spare[] for the next narrow ports.  When the ports
	 * left outnumber the free LIDs, the VF ports of vSwitches go last
	 * (pass 1), so that what runs out is VF slots -- a VM there shares its
	 * hypervisor's PF LID -- never a switch, a PF or a host; otherwise one
	 * pass in GUID order, as ever.
	 */
	uint32_t low = 1, no_room = umax + 1, next_old = 0;
	uint32_t spare = 0, spare_end = 0;	/* [spare, spare_end) free */
	uint32_t want = 0, room = n_resv * rspan;
	for (uint32_t e = 0; e < n; e++)
		if (!f->ports[eps[e].port].lid && !nolid(f, eps[e].port))
			want += 1u << fabric_port_lmc(f, eps[e].port);
	for (uint32_t l = 1; l <= umax && room < want; l++)
		room += !used[l];
	int vf_last = room < want;
	for (int pass = 0; pass <= vf_last; pass++)
	for (uint32_t e = 0; e < n; e++) {
		struct fab_port *p = &f->ports[eps[e].port];
		uint32_t span = 1u << fabric_port_lmc(f, eps[e].port);
		if (p->lid || nolid(f, eps[e].port))
			continue;
		int vf = vf_last && is_vf(f, eps[e].port);
		if (vf_last && vf != pass)
			continue;
		uint32_t lid = free_range(used, &low, &no_room, span, umax);
		uint32_t s = spare ? (spare + span - 1) / span * span : 0;
		if (!lid && s && s + span <= spare_end) {
			lid = s;
			spare = s + span;
		}
		if (!lid && next_old < n_resv) {
			lid = pe[next_old++].lid;	/* aligned to rspan >= span */
			rep->reclaimed++;
			if (span < rspan) {
				spare = lid + span;
				spare_end = lid + rspan;
			}
		}
		if (!lid) {
			if (vf)
				rep->vf_shared++;
			else
				rep->exhausted++;
			continue;
		}
		p->lid = lid;
		take(used, lid, span);
		rep->assigned++;
	}
	free(used);
	free(eps);
	free(pe);
	return fabric_index_lids(f);
nomem:
	free(used);
	free(eps);
	free(pe);
	return -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void fmt_seen(uint32_t seen, char *buf, size_t len)
{
	time_t t = (time_t)seen;
	struct tm tm;
	if (!seen || !gmtime_r(&t, &tm) ||
	    !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "unknown (an entry without a time)");
}

/*
 * Drops the entries whose LID a port with another GUID now holds: the
 * reservations step 3 of lids_assign() reclaimed, and stale ones.  Runs
 * after the present ports were recorded, so a GUID that is still in the
 * map with a LID held by somebody else is absent.
 */
static int drop_taken(const struct fabric *f, struct guid_map *m)
{
	uint64_t *gone = malloc(((size_t)m->used + 1) * sizeof(*gone));
	if (!gone)
		return -1;
	uint32_t k = 0;
	for (uint32_t i = 0; i < m->cap; i++) {
		uint32_t lid = m->vals[i];
		if (!m->keys[i] || !lid || lid > f->max_lid ||
		    f->lid_port[lid] == FAB_NONE ||
		    f->ports[f->lid_port[lid]].guid == m->keys[i])
			continue;
		gone[k++] = m->keys[i];
	}
	qsort(gone, k, sizeof(*gone), cmp_u64);
	for (uint32_t i = 0; i < k; i++) {
		uint32_t lid = guid_map_get(m, gone[i]);
		char seen[64];
		fmt_seen(guid_map_get_aux(m, gone[i]), seen, sizeof(seen));
		log_notice("LID %u now on port GUID 0x%016" PRIx64
			   ": dropped the reservation of absent GUID 0x%016" PRIx64
			   " (last seen %s)",
			   lid, f->ports[f->lid_port[lid]].guid, gone[i], seen);
		guid_map_del(m, gone[i]);
	}
	free(gone);
	return 0;
}

int lids_record_at(const struct fabric *f, struct guid_map *m, uint32_t now)
{
	for (uint32_t i = 0; i < f->n_ports; i++)
		if (fabric_is_endport(f, i) && f->ports[i].lid &&
		    f->ports[i].guid &&
		    (guid_map_put(m, f->ports[i].guid, f->ports[i].lid) < 0 ||
		     guid_map_set_aux(m, f->ports[i].guid, now) < 0))
			return -1;
	return drop_taken(f, m);
}

int lids_record(const struct fabric *f, struct guid_map *m)
{
	return lids_record_at(f, m, (uint32_t)time(NULL));
}

uint32_t lids_alloc_vm(const struct fabric *f, const struct guid_map *persisted,
		       uint32_t pi)
{
	uint32_t span = 1u << fabric_port_lmc(f, pi), umax = ucast_max(f);
	uint8_t *used = calloc(LID_UCAST_MAX + 2, 1);
	if (!used)
		return 0;
	for (uint32_t i = 0; i < f->n_ports; i++) {
		const struct fab_port *p = &f->ports[i];
		if (fabric_is_endport(f, i) && p->lid && !(p->flags & FPORT_NOLID))
			take(used, p->lid, 1u << fabric_port_lmc(f, i));
	}
	/* absent ports' reservations stay theirs; a present port's entry is
	 * its LID (taken above) or stale (an idle VF's: free) */
	uint64_t *present = malloc(((size_t)f->n_ports + 1) * sizeof(*present));
	if (!present) {
		free(used);
		return 0;
	}
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->n_ports; i++)
		if (fabric_is_endport(f, i))
			present[n++] = f->ports[i].guid;
	qsort(present, n, sizeof(*present), cmp_u64);
	for (uint32_t i = 0; persisted && i < persisted->cap; i++) {
		uint32_t lid = persisted->vals[i];
		if (!persisted->keys[i] || !lid || lid > LID_UCAST_MAX ||
		    bsearch(&persisted->keys[i], present, n, sizeof(*present), cmp_u64))
			continue;
		uint32_t rspan = 1u << f->lmc;
		take(used, lid & ~(rspan - 1), rspan);
	}
	free(present);
	uint32_t low = 1, no_room = umax + 1;
	uint32_t lid = free_range(used, &low, &no_room, span, umax);
	free(used);
	return lid;
}
