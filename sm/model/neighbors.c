/* The neighbour map (see neighbors.h). */
#include "sm/model/neighbors.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/base/wfile.h"

struct nbr_slot {
	uint64_t node_guid;	/* 0: empty */
	uint8_t port;
	struct nbr_end peer;
};

#define NBR_MIN_CAP 64
#define NBR_HEADER "# ibsmd neighbors: node_guid port port_guid node_guid port port_guid\n"
#define NBR_LINE_MAX 160

static uint32_t slot_of(const struct nbr_map *m, uint64_t guid, uint8_t port)
{
	uint64_t h = (guid ^ ((uint64_t)port << 56 | port)) * 0x9e3779b97f4a7c15ull;
	uint32_t i = (uint32_t)(h >> 32) & (m->cap - 1);
	while (m->slots[i].node_guid &&
	       (m->slots[i].node_guid != guid || m->slots[i].port != port))
		i = (i + 1) & (m->cap - 1);
	return i;
}

/* What is across (node_guid, port), or NULL. */
static const struct nbr_end *nbr_peer(const struct nbr_map *m, uint64_t node_guid,
				      uint8_t port)
{
	if (!m->cap || !node_guid)
		return NULL;
	const struct nbr_slot *s = &m->slots[slot_of(m, node_guid, port)];
	return s->node_guid ? &s->peer : NULL;
}

const struct nbr_end *nbr_far_end(const struct nbr_map *m, uint64_t node_guid,
				  uint8_t port)
{
	return nbr_peer(m, node_guid, port);
}

int nbr_port_end(const struct nbr_map *m, uint64_t port_guid, struct nbr_end *e)
{
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->slots[i].node_guid && m->slots[i].peer.port_guid == port_guid) {
			*e = m->slots[i].peer;
			return 0;
		}
	return -1;
}

static int grow(struct nbr_map *m)
{
	uint32_t cap = m->cap ? 2 * m->cap : NBR_MIN_CAP;
	struct nbr_slot *old = m->slots;
	uint32_t old_cap = m->cap;
	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return -1;
	}
	m->cap = cap;
	for (uint32_t i = 0; i < old_cap; i++)
		if (old[i].node_guid)
			m->slots[slot_of(m, old[i].node_guid, old[i].port)] = old[i];
	free(old);
	return 0;
}

static int put_end(struct nbr_map *m, const struct nbr_end *from,
		   const struct nbr_end *to)
{
	if ((m->n + 1) * 2 > m->cap && grow(m) < 0)
		return -1;
	struct nbr_slot *s = &m->slots[slot_of(m, from->node_guid, from->port)];
	if (s->node_guid) {
		if (!memcmp(&s->peer, to, sizeof(*to)))
			return 0;
	} else {
		m->n++;
		s->node_guid = from->node_guid;
		s->port = from->port;
	}
	s->peer = *to;
	return 1;
}

int nbr_add_link(struct nbr_map *m, const struct nbr_end *a, const struct nbr_end *b)
{
	if (!a->node_guid || !b->node_guid)
		return 0;
	struct nbr_end x, y;	/* no padding bytes compared */
	memset(&x, 0, sizeof(x));
	memset(&y, 0, sizeof(y));
	x.node_guid = a->node_guid, x.port_guid = a->port_guid, x.port = a->port;
	y.node_guid = b->node_guid, y.port_guid = b->port_guid, y.port = b->port;
	int r1 = put_end(m, &x, &y);
	if (r1 < 0)
		return -1;
	int r2 = put_end(m, &y, &x);
	if (r2 < 0)
		return -1;
	return r1 || r2;
}

static void end_of(const struct fabric *f, uint32_t pi, struct nbr_end *e)
{
	const struct fab_port *p = &f->ports[pi];
	e->node_guid = f->nodes[p->node].guid;
	e->port_guid = p->guid;
	e->port = p->num;
}

int nbr_from_fabric(struct nbr_map *m, const struct fabric *f)
{
	int changed = 0;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		uint32_t r = f->ports[pi].remote;
		if (r == FAB_NONE || r < pi)
			continue;
		struct nbr_end a, b;
		end_of(f, pi, &a);
		end_of(f, r, &b);
		if (!a.port_guid || !b.port_guid)
			continue;	/* a CA port never asked */
		int c = nbr_add_link(m, &a, &b);
		if (c < 0)
			return -1;
		changed += c;
	}
	return changed;
}

void nbr_free(struct nbr_map *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}

static int parse_line(const char *s, struct nbr_end *a, struct nbr_end *b)
{
	unsigned pa, pb;
	int used = 0;
	if (sscanf(s, "%" SCNx64 " %u %" SCNx64 " %" SCNx64 " %u %" SCNx64 " %n",
		   &a->node_guid, &pa, &a->port_guid, &b->node_guid, &pb,
		   &b->port_guid, &used) != 6 || s[used] != '\0' ||
	    pa > 255 || pb > 255 || !a->node_guid || !b->node_guid)
		return -1;
	a->port = (uint8_t)pa;
	b->port = (uint8_t)pb;
	return 0;
}

int nbr_load(struct nbr_map *m, const char *dir, char *err, size_t errlen)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, NBR_FILE);
	FILE *fp = rfile_open(path, 0, err, errlen);
	if (!fp)
		return errno == ENOENT ? (err[0] = '\0', 0) : -1;
	char line[NBR_LINE_MAX];
	int lineno = 0, rc = 0;
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		if (!strchr(line, '\n')) {
			snprintf(err, errlen, "%s:%d: %s", path, lineno,
				 feof(fp) ? "truncated" : "line too long");
			rc = -1;
			break;
		}
		if (line[0] == '#' || line[0] == '\n')
			continue;
		struct nbr_end a, b;
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		if (parse_line(line, &a, &b) < 0) {
			snprintf(err, errlen, "%s:%d: expected \"NODE_GUID PORT PORT_GUID NODE_GUID PORT PORT_GUID\"",
				 path, lineno);
			rc = -1;
			break;
		}
		if (nbr_add_link(m, &a, &b) < 0) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
			break;
		}
	}
	if (!rc && ferror(fp)) {
		snprintf(err, errlen, "%s: read error", path);
		rc = -1;
	}
	fclose(fp);
	return rc;
}

/* The lower end of a link writes it. */
static int is_first(const struct nbr_slot *s)
{
	return s->node_guid < s->peer.node_guid ||
	       (s->node_guid == s->peer.node_guid && s->port <= s->peer.port);
}

int nbr_save(const struct nbr_map *m, const char *dir, char *err, size_t errlen)
{
	char path[4096];
	struct wfile w;
	snprintf(path, sizeof(path), "%s/%s", dir, NBR_FILE);
	if (wfile_open(&w, path, err, errlen) < 0)
		return -1;
	fputs(NBR_HEADER, w.fp);
	for (uint32_t i = 0; i < m->cap; i++) {
		const struct nbr_slot *s = &m->slots[i];
		if (!s->node_guid || !is_first(s))
			continue;
		const struct nbr_end *a = nbr_peer(m, s->peer.node_guid, s->peer.port);
		fprintf(w.fp, "0x%016" PRIx64 " %u 0x%016" PRIx64 " 0x%016" PRIx64 " %u 0x%016" PRIx64 "\n",
			s->node_guid, s->port, a ? a->port_guid : 0,
			s->peer.node_guid, s->peer.port, s->peer.port_guid);
	}
	return wfile_commit(&w, err, errlen);
}

uint64_t nbr_dr_target(const struct fabric *f, const struct nbr_map *m,
		       uint64_t local_guid, const uint8_t *path, int hops)
{
	if (hops <= 0)
		return local_guid;
	if (!f || f->sm_node == FAB_NONE)
		return 0;
	uint32_t node = f->sm_node;
	uint64_t target = 0, cur = 0;
	int i = 1;
	for (; i <= hops; i++) {	/* the fabric known */
		const struct fab_node *n = &f->nodes[node];
		if (path[i] > n->nports)
			return 0;
		uint32_t r = f->ports[fabric_port(f, node, path[i])].remote;
		if (r == FAB_NONE) {
			cur = n->guid;
			break;
		}
		node = f->ports[r].node;
		target = f->ports[r].guid;
	}
	for (; i <= hops; i++) {	/* then the map */
		const struct nbr_end *e = nbr_peer(m, cur, path[i]);
		if (!e)
			return 0;
		cur = e->node_guid;
		target = e->port_guid;
	}
	return target;
}

/* ---- walking the map beyond the links the SM could not cross ---- */

struct nbr_walk {
	const struct nbr_map *m;
	const struct nbr_slot **by_node;	/* the slots sorted by node GUID, port */
	uint8_t *seen;			/* per by_node index: its node visited */
	uint32_t n;
};

struct nbr_hop {
	uint64_t node_guid;
	int hops;
	uint8_t path[FAB_MAX_HOPS + 1];
};

static int slot_cmp(const void *a, const void *b)
{
	const struct nbr_slot *x = *(const struct nbr_slot *const *)a;
	const struct nbr_slot *y = *(const struct nbr_slot *const *)b;
	if (x->node_guid != y->node_guid)
		return x->node_guid < y->node_guid ? -1 : 1;
	return (int)x->port - (int)y->port;
}

struct nbr_walk *nbr_walk_new(const struct nbr_map *m)
{
	struct nbr_walk *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->m = m;
	w->by_node = malloc(((size_t)m->n + 1) * sizeof(*w->by_node));
	w->seen = calloc((size_t)m->n + 1, 1);
	if (!w->by_node || !w->seen) {
		nbr_walk_free(w);
		return NULL;
	}
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->slots[i].node_guid)
			w->by_node[w->n++] = &m->slots[i];
	qsort(w->by_node, w->n, sizeof(*w->by_node), slot_cmp);
	return w;
}

void nbr_walk_free(struct nbr_walk *w)
{
	if (!w)
		return;
	free(w->by_node);
	free(w->seen);
	free(w);
}

/* The first of node_guid's slots in by_node, and how many (0: none). */
static uint32_t node_slots(const struct nbr_walk *w, uint64_t node_guid, uint32_t *first)
{
	uint32_t lo = 0, hi = w->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (w->by_node[mid]->node_guid < node_guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	uint32_t k = lo;
	while (k < w->n && w->by_node[k]->node_guid == node_guid)
		k++;
	return k - lo;
}

/* Two links or more, one port GUID at this end of each: a switch. */
static int is_switch(const struct nbr_walk *w, uint32_t first, uint32_t cnt)
{
	if (cnt < 2)
		return 0;
	const struct nbr_end *own = nbr_peer(w->m, w->by_node[first]->peer.node_guid,
					     w->by_node[first]->peer.port);
	for (uint32_t k = first + 1; own && k < first + cnt; k++) {
		const struct nbr_end *o = nbr_peer(w->m, w->by_node[k]->peer.node_guid,
						   w->by_node[k]->peer.port);
		if (!o || o->port_guid != own->port_guid)
			return 0;
	}
	return own != NULL;
}

struct nbr_visit {
	struct nbr_walk *w;
	int (*known)(void *arg, uint64_t node_guid);
	nbr_visit_fn fn;
	void *arg;
	struct nbr_hop *q;	/* switches to walk on from */
	uint32_t tail;
};

/* The node reached by path[1..hops] (the port port_guid): told, queued if a switch. */
static void visit(struct nbr_visit *v, uint64_t node_guid, const uint8_t *path,
		  int hops, uint64_t port_guid)
{
	struct nbr_walk *w = v->w;
	uint32_t first, cnt = node_slots(w, node_guid, &first);
	if (!cnt || w->seen[first] || v->known(v->arg, node_guid))
		return;
	w->seen[first] = 1;
	v->fn(v->arg, path, hops, port_guid);
	if (!is_switch(w, first, cnt) || hops >= FAB_MAX_HOPS || v->tail >= w->n)
		return;
	struct nbr_hop *h = &v->q[v->tail++];
	h->node_guid = node_guid;
	h->hops = hops;
	memcpy(h->path, path, (size_t)hops + 1);
}

int nbr_walk_from(struct nbr_walk *w, const uint8_t *path, int hops,
		  uint64_t node_guid, uint8_t port,
		  int (*known)(void *arg, uint64_t node_guid), nbr_visit_fn fn,
		  void *arg)
{
	const struct nbr_end *e = nbr_peer(w->m, node_guid, port);
	if (!e || hops + 1 > FAB_MAX_HOPS)
		return 0;
	struct nbr_visit v = { .w = w, .known = known, .fn = fn, .arg = arg };
	v.q = malloc(((size_t)w->n + 1) * sizeof(*v.q));
	if (!v.q)
		return -1;
	uint8_t p[FAB_MAX_HOPS + 1];
	memcpy(p, path, (size_t)hops + 1);
	p[hops + 1] = port;
	visit(&v, e->node_guid, p, hops + 1, e->port_guid);
	for (uint32_t head = 0; head < v.tail; head++) {
		const struct nbr_hop h = v.q[head];
		uint32_t first, cnt = node_slots(w, h.node_guid, &first);
		for (uint32_t k = first; k < first + cnt; k++) {
			const struct nbr_slot *sl = w->by_node[k];
			memcpy(p, h.path, (size_t)h.hops + 1);
			p[h.hops + 1] = sl->port;
			visit(&v, sl->peer.node_guid, p, h.hops + 1, sl->peer.port_guid);
		}
	}
	free(v.q);
	return 0;
}

/* NodeRecord (IBA vol. 1 15.2.5.2): LID, reserved, then NodeInfo. */
#define NR_OFF_LID		0
#define NR_OFF_NODE_GUID	16	/* NodeInfo (from byte 4) byte 12 */
#define NR_OFF_PORT_GUID	24	/* NodeInfo byte 20 */
#define NR_MIN_LEN		32
/* LinkRecord (15.2.5.13): FromLID, FromPort, ToPort, ToLID. */
#define LR_OFF_FROM_LID		0
#define LR_OFF_FROM_PORT	2
#define LR_OFF_TO_PORT		3
#define LR_OFF_TO_LID		4
#define LR_MIN_LEN		6

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static uint32_t be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static int by_lid(const void *a, const void *b)
{
	const struct nbr_lid *x = a, *y = b;
	return (x->lid > y->lid) - (x->lid < y->lid);
}

size_t nbr_lids_from_records(const uint8_t *recs, size_t n, size_t stride,
			     struct nbr_lid *t)
{
	size_t k = 0;
	if (stride < NR_MIN_LEN)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *r = recs + i * stride;
		struct nbr_lid e = { be16(r + NR_OFF_LID), be64(r + NR_OFF_NODE_GUID),
				     be64(r + NR_OFF_PORT_GUID) };
		if (e.lid && e.node_guid && e.port_guid)
			t[k++] = e;
	}
	qsort(t, k, sizeof(*t), by_lid);
	return k;
}

static const struct nbr_lid *lid_entry(const struct nbr_lid *t, size_t nt, uint32_t lid)
{
	struct nbr_lid key = { .lid = lid };
	return bsearch(&key, t, nt, sizeof(*t), by_lid);
}

int nbr_from_link_records(struct nbr_map *m, const struct nbr_lid *t, size_t nt,
			  const uint8_t *recs, size_t n, size_t stride)
{
	int changed = 0;
	if (stride < LR_MIN_LEN)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *r = recs + i * stride;
		const struct nbr_lid *x = lid_entry(t, nt, be16(r + LR_OFF_FROM_LID));
		const struct nbr_lid *y = lid_entry(t, nt, be16(r + LR_OFF_TO_LID));
		if (!x || !y)
			continue;
		struct nbr_end a = { x->node_guid, x->port_guid, r[LR_OFF_FROM_PORT] };
		struct nbr_end b = { y->node_guid, y->port_guid, r[LR_OFF_TO_PORT] };
		int c = nbr_add_link(m, &a, &b);
		if (c < 0)
			return -1;
		changed += c;
	}
	return changed;
}
