#include "sm/base/fabric.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return (uint32_t)k;
}

int guid_map_init(struct guid_map *m, uint32_t cap)
{
	uint32_t c = 16;
	while (c < cap)
		c <<= 1;
	m->keys = calloc(c, sizeof(*m->keys));
	m->vals = calloc(c, sizeof(*m->vals));
	m->aux = NULL;
	if (!m->keys || !m->vals) {
		free(m->keys);
		free(m->vals);
		m->keys = NULL;
		m->vals = NULL;
		return -1;
	}
	m->cap = c;
	m->used = 0;
	return 0;
}

void guid_map_free(struct guid_map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->aux);
	memset(m, 0, sizeof(*m));
}

static int guid_map_grow(struct guid_map *m)
{
	struct guid_map n;
	if (guid_map_init(&n, m->cap * 2) < 0)
		return -1;
	if (m->aux && !(n.aux = calloc(n.cap, sizeof(*n.aux)))) {
		guid_map_free(&n);
		return -1;
	}
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->keys[i] && (guid_map_put(&n, m->keys[i], m->vals[i]) < 0 ||
				   (m->aux && guid_map_set_aux(&n, m->keys[i], m->aux[i]) < 0))) {
			guid_map_free(&n);
			return -1;
		}
	guid_map_free(m);
	*m = n;
	return 0;
}

/* The slot holding key, or m->cap when the key is not in the map. */
static uint32_t guid_map_slot(const struct guid_map *m, uint64_t key)
{
	if (!m->cap || !key)
		return m->cap;
	uint32_t mask = m->cap - 1;
	for (uint32_t i = hash64(key) & mask; m->keys[i]; i = (i + 1) & mask)
		if (m->keys[i] == key)
			return i;
	return m->cap;
}

int guid_map_put(struct guid_map *m, uint64_t key, uint32_t val)
{
	if (!key)
		return -1;
	if (!m->cap && guid_map_init(m, 64) < 0)
		return -1;
	if ((m->used + 1) * 2 > m->cap && guid_map_grow(m) < 0)
		return -1;
	uint32_t mask = m->cap - 1;
	for (uint32_t i = hash64(key) & mask;; i = (i + 1) & mask) {
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return 0;
		}
		if (!m->keys[i]) {
			m->keys[i] = key;
			m->vals[i] = val;
			m->used++;
			return 0;
		}
	}
}

uint32_t guid_map_get(const struct guid_map *m, uint64_t key)
{
	uint32_t i = guid_map_slot(m, key);
	return i < m->cap ? m->vals[i] : FAB_NONE;
}

/*
 * Linear probing has no tombstones: the entries after the hole that
 * probed past it move back into it, so that every lookup still finds them.
 */
void guid_map_del(struct guid_map *m, uint64_t key)
{
	uint32_t hole = guid_map_slot(m, key);
	if (hole >= m->cap)
		return;
	uint32_t mask = m->cap - 1;
	for (uint32_t j = (hole + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
		uint32_t home = hash64(m->keys[j]) & mask;
		/* stays when its home lies cyclically in (hole, j] */
		int stays = hole <= j ? (home > hole && home <= j) :
					(home > hole || home <= j);
		if (stays)
			continue;
		m->keys[hole] = m->keys[j];
		m->vals[hole] = m->vals[j];
		if (m->aux)
			m->aux[hole] = m->aux[j];
		hole = j;
	}
	m->keys[hole] = 0;
	m->vals[hole] = 0;
	if (m->aux)
		m->aux[hole] = 0;
	m->used--;
}

int guid_map_set_aux(struct guid_map *m, uint64_t key, uint32_t aux)
{
	uint32_t i = guid_map_slot(m, key);
	if (i >= m->cap)
		return -1;
	if (!m->aux && !(m->aux = calloc(m->cap, sizeof(*m->aux))))
		return -1;
	m->aux[i] = aux;
	return 0;
}

uint32_t guid_map_get_aux(const struct guid_map *m, uint64_t key)
{
	uint32_t i = guid_map_slot(m, key);
	return i < m->cap && m->aux ? m->aux[i] : 0;
}

void fabric_init(struct fabric *f)
{
	memset(f, 0, sizeof(*f));
	f->sm_node = FAB_NONE;
}

void fabric_free(struct fabric *f)
{
	free(f->nodes);
	free(f->ports);
	free(f->lid_port);
	free(f->vlid_port);
	guid_map_free(&f->node_by_guid);
	fabric_init(f);
}

static void *dup_array(const void *src, size_t n, size_t elem)
{
	if (!src || !n)
		return NULL;
	void *p = malloc(n * elem);
	if (p)
		memcpy(p, src, n * elem);
	return p;
}

int fabric_clone(struct fabric *dst, const struct fabric *src)
{
	*dst = *src;
	dst->nodes = dup_array(src->nodes, src->n_nodes, sizeof(*src->nodes));
	dst->ports = dup_array(src->ports, src->n_ports, sizeof(*src->ports));
	dst->cap_nodes = src->n_nodes;
	dst->cap_ports = src->n_ports;
	dst->lid_port = src->lid_port ?
		dup_array(src->lid_port, (size_t)src->max_lid + 1, sizeof(*src->lid_port)) :
		NULL;
	dst->vlid_port = src->vlid_port ?
		dup_array(src->vlid_port, (size_t)src->max_vlid - FAB_VLID_BASE + 1,
			  sizeof(*src->vlid_port)) : NULL;
	const struct guid_map *m = &src->node_by_guid;
	dst->node_by_guid.keys = dup_array(m->keys, m->cap, sizeof(*m->keys));
	dst->node_by_guid.vals = dup_array(m->vals, m->cap, sizeof(*m->vals));
	dst->node_by_guid.aux = NULL;	/* the node map has no second value */
	if ((src->n_nodes && !dst->nodes) || (src->n_ports && !dst->ports) ||
	    (src->lid_port && !dst->lid_port) ||
	    (src->vlid_port && !dst->vlid_port) ||
	    (m->cap && (!dst->node_by_guid.keys || !dst->node_by_guid.vals))) {
		fabric_free(dst);
		return -1;
	}
	return 0;
}

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	uint32_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *p = realloc(*arr, (size_t)c * elem);
	if (!p)
		return -1;
	*arr = p;
	*cap = c;
	return 0;
}

uint32_t fabric_add_node(struct fabric *f, uint8_t type, uint8_t nports,
			 uint64_t guid)
{
	uint32_t np = (uint32_t)nports + 1;
	if (grow((void **)&f->nodes, &f->cap_nodes, f->n_nodes + 1,
		 sizeof(*f->nodes)) < 0 ||
	    grow((void **)&f->ports, &f->cap_ports, f->n_ports + np,
		 sizeof(*f->ports)) < 0)
		return FAB_NONE;
	uint32_t ni = f->n_nodes;
	if (guid && guid_map_put(&f->node_by_guid, guid, ni) < 0)
		return FAB_NONE;
	struct fab_node *n = &f->nodes[ni];
	memset(n, 0, sizeof(*n));
	n->guid = guid;
	n->type = type;
	n->nports = nports;
	n->first_port = f->n_ports;
	for (uint32_t i = 0; i < np; i++) {
		struct fab_port *p = &f->ports[f->n_ports + i];
		memset(p, 0, sizeof(*p));
		p->node = ni;
		p->num = (uint8_t)i;
		p->remote = FAB_NONE;
	}
	f->n_nodes++;
	f->n_ports += np;
	return ni;
}

int fabric_endport_map(const struct fabric *f, uint32_t extra, struct guid_map *m)
{
	if (guid_map_init(m, (f->n_ports + extra) * 2) < 0)
		return -1;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		uint64_t guid = p->guid ? p->guid : f->nodes[p->node].guid;
		if (fabric_is_endport(f, pi) && guid && guid_map_put(m, guid, pi) < 0) {
			guid_map_free(m);
			return -1;
		}
	}
	return 0;
}

uint32_t fabric_find_node(const struct fabric *f, uint64_t guid)
{
	return guid_map_get(&f->node_by_guid, guid);
}

/* Lanes of one LinkWidth bit (IBA vol. 1 §14.2.5.6, PortInfo). */
static unsigned width_lanes(uint8_t w)
{
	switch (w) {
	case 0x01: return 1;
	case 0x10: return 2;
	case 0x02: return 4;
	case 0x04: return 8;
	case 0x08: return 12;
	default: return 0;
	}
}

uint8_t fabric_best_width(uint8_t mask)
{
	static const uint8_t order[] = { 0x08, 0x04, 0x02, 0x10, 0x01 };

	for (size_t i = 0; i < sizeof(order); i++)
		if (mask & order[i])
			return order[i];
	return 0;
}

uint8_t fabric_best_speed(uint8_t mask)
{
	for (uint8_t b = 0x04; b; b >>= 1)
		if (mask & b)
			return b;
	return 0;
}

int fabric_port_degraded(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];

	if (!(p->flags & FPORT_PRESENT) || p->state < PORT_INIT)
		return 0;
	if (p->width_max && p->width_active &&
	    width_lanes(p->width_active) < width_lanes(p->width_max))
		return 1;
	return p->speed_max && p->speed_active && p->speed_active < p->speed_max;
}

void fabric_link(struct fabric *f, uint32_t pa, uint32_t pb)
{
	struct fab_port *a = &f->ports[pa], *b = &f->ports[pb];
	if (a->remote != FAB_NONE && a->remote != pb)
		f->ports[a->remote].remote = FAB_NONE;
	if (b->remote != FAB_NONE && b->remote != pa)
		f->ports[b->remote].remote = FAB_NONE;
	a->remote = pb;
	b->remote = pa;
}

int fabric_index_lids(struct fabric *f)
{
	uint32_t max = 0, vmax = 0;
	for (uint32_t i = 0; i < f->n_ports; i++) {
		uint32_t lid = f->ports[i].lid;
		if (!fabric_is_endport(f, i) || !lid)
			continue;
		if (fabric_is_vlid(lid)) {
			if (lid > vmax)
				vmax = lid;
			continue;
		}
		uint32_t span = 1u << fabric_port_lmc(f, i);
		if (lid + span - 1 > max)
			max = lid + span - 1;
	}
	size_t nv = vmax ? vmax - FAB_VLID_BASE + 1 : 0;
	uint32_t *lp = malloc(((size_t)max + 1) * sizeof(*lp));
	uint32_t *vp = nv ? malloc(nv * sizeof(*vp)) : NULL;
	if (!lp || (nv && !vp)) {
		free(lp);
		free(vp);
		return -1;
	}
	for (uint32_t l = 0; l <= max; l++)
		lp[l] = FAB_NONE;
	for (size_t l = 0; l < nv; l++)
		vp[l] = FAB_NONE;
	for (uint32_t i = 0; i < f->n_ports; i++) {
		uint32_t lid = f->ports[i].lid;
		if (!fabric_is_endport(f, i) || !lid)
			continue;
		if (fabric_is_vlid(lid)) {
			vp[lid - FAB_VLID_BASE] = i;
			continue;
		}
		uint32_t span = 1u << fabric_port_lmc(f, i);
		for (uint32_t k = 0; k < span; k++)
			lp[lid + k] = i;
	}
	free(f->lid_port);
	free(f->vlid_port);
	f->lid_port = lp;
	f->vlid_port = vp;
	f->max_lid = max;
	f->max_vlid = vmax;
	return 0;
}

void fabric_counts(const struct fabric *f, uint32_t *sw, uint32_t *ca,
		   uint32_t *ports)
{
	uint32_t s = 0, c = 0, p = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		if (f->nodes[i].type == FAB_SWITCH)
			s++;
		else
			c++;
	}
	for (uint32_t i = 0; i < f->n_ports; i++)
		if ((f->ports[i].flags & FPORT_PRESENT) &&
		    (f->ports[i].num != 0 ||
		     f->nodes[f->ports[i].node].type == FAB_SWITCH))
			p++;
	*sw = s;
	*ca = c;
	*ports = p;
}

/* The node at the far end of port pi when both ends are present. */
static uint32_t peer_node(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	if (!(p->flags & FPORT_PRESENT) || p->remote == FAB_NONE ||
	    !(f->ports[p->remote].flags & FPORT_PRESENT))
		return FAB_NONE;
	return f->ports[p->remote].node;
}

uint32_t fabric_vswitch_uplink(const struct fabric *f, uint32_t node)
{
	if (!fabric_is_vswitch(f, node))
		return FAB_NONE;
	const struct fab_node *n = &f->nodes[node];
	for (unsigned p = 1; p <= n->nports; p++) {
		uint32_t pi = n->first_port + p, r = peer_node(f, pi);
		if (r != FAB_NONE && f->nodes[r].type == FAB_SWITCH &&
		    !(f->nodes[r].flags & FNODE_VSWITCH))
			return pi;
	}
	return FAB_NONE;
}

/* The k-th CA port below vSwitch node (k = 0: the PF), its port number. */
static uint32_t vswitch_ca(const struct fabric *f, uint32_t node, unsigned k,
			   uint8_t *vs_port)
{
	if (!fabric_is_vswitch(f, node))
		return FAB_NONE;
	const struct fab_node *n = &f->nodes[node];
	for (unsigned p = 1; p <= n->nports; p++) {
		uint32_t pi = n->first_port + p, r = peer_node(f, pi);
		if (r == FAB_NONE || f->nodes[r].type == FAB_SWITCH)
			continue;
		if (k-- == 0) {
			if (vs_port)
				*vs_port = (uint8_t)p;
			return f->ports[pi].remote;
		}
	}
	return FAB_NONE;
}

uint32_t fabric_vswitch_pf(const struct fabric *f, uint32_t node)
{
	return vswitch_ca(f, node, 0, NULL);
}

uint32_t fabric_vswitch_vf(const struct fabric *f, uint32_t node, unsigned k,
			   uint8_t *vs_port)
{
	return vswitch_ca(f, node, k + 1, vs_port);
}

unsigned fabric_vswitch_nvf(const struct fabric *f, uint32_t node)
{
	unsigned k = 0;
	while (vswitch_ca(f, node, k + 1, NULL) != FAB_NONE)
		k++;
	return k;
}

uint32_t fabric_vswitch_of(const struct fabric *f, uint32_t pi, int *vf)
{
	if (pi >= f->n_ports || f->nodes[f->ports[pi].node].type == FAB_SWITCH)
		return FAB_NONE;
	uint32_t vs = peer_node(f, pi);
	if (vs == FAB_NONE || !fabric_is_vswitch(f, vs))
		return FAB_NONE;
	uint32_t swp = f->ports[pi].remote;
	int k = -1;
	const struct fab_node *n = &f->nodes[vs];
	for (unsigned p = 1; p <= n->nports; p++) {
		uint32_t q = n->first_port + p, r = peer_node(f, q);
		if (r == FAB_NONE || f->nodes[r].type == FAB_SWITCH)
			continue;
		if (q == swp)
			break;
		k++;
	}
	if (vf)
		*vf = k;
	return vs;
}

uint32_t fabric_vswitch_leaf(const struct fabric *f, uint32_t node)
{
	uint32_t up = fabric_vswitch_uplink(f, node);
	return up == FAB_NONE ? FAB_NONE : f->ports[f->ports[up].remote].node;
}

int fabric_port_linked(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	return p->num != 0 && p->phys_state == PHYS_LINKUP &&
	       p->remote != FAB_NONE &&
	       (f->ports[p->remote].flags & FPORT_PRESENT);
}
