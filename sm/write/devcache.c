#include "sm/write/devcache.h"

#include <infiniband/mad.h>
#include <stdlib.h>
#include <string.h>

#include "mad/smp.h"

/* The PortInfo fields the SM sets (see devcache.h). */
struct pi_rec {
	uint8_t valid;
	uint8_t lmc, mtu, opvls, hoq, stall, timeout, hlimit;
	uint8_t enforce;	/* PartitionEnforcementInbound << 1 | Outbound */
	uint32_t lid, sm_lid;
	uint64_t prefix;
	/* M_Key, M_KeyProtectBits, M_KeyLeasePeriod (violations: not compared) */
	struct mkey_pi mkey;
};

/* Any other attribute: the whole payload. */
struct attr_rec {
	uint32_t mod;
	uint16_t attr;
	uint8_t port;
	uint8_t data[SMP_DATA_SIZE];
};

struct node_cache {
	uint64_t guid;
	uint32_t nports;
	struct pi_rec *ports;		/* nports + 1 */
	uint8_t *lft;			/* lft_blocks * FAB_LFT_BLOCK */
	uint8_t *lft_valid;		/* per block */
	uint32_t lft_blocks;
	uint32_t lft_top;
	uint32_t mft_top;		/* MulticastFDBTop */
	uint8_t si_valid;
	struct attr_rec *attrs;
	uint32_t n_attrs, cap_attrs;
};

struct devcache {
	struct guid_map idx;
	struct node_cache *v;
	uint32_t n, cap;
};

struct devcache *devcache_new(void)
{
	return calloc(1, sizeof(struct devcache));
}

static void forget_node(struct node_cache *nc)
{
	free(nc->ports);
	free(nc->lft);
	free(nc->lft_valid);
	free(nc->attrs);
}

void devcache_clear(struct devcache *c)
{
	for (uint32_t i = 0; i < c->n; i++)
		forget_node(&c->v[i]);
	free(c->v);
	guid_map_free(&c->idx);
	memset(c, 0, sizeof(*c));
}

void devcache_free(struct devcache *c)
{
	if (!c)
		return;
	devcache_clear(c);
	free(c);
}

/* The node's record if it has one of this shape, else NULL. */
static struct node_cache *find_node(const struct devcache *c,
				    const struct fab_node *n)
{
	uint32_t i = guid_map_get(&c->idx, n->guid);
	if (i == FAB_NONE || c->v[i].nports != n->nports)
		return NULL;
	return &c->v[i];
}

/* The node's record, made (or remade, if the node changed shape) if need be. */
static struct node_cache *cache_node(struct devcache *c, const struct fab_node *n)
{
	uint32_t i = guid_map_get(&c->idx, n->guid);
	if (i != FAB_NONE) {
		struct node_cache *nc = &c->v[i];
		if (nc->nports == n->nports)
			return nc;
		forget_node(nc);	/* it changed shape: forget it */
		memset(nc, 0, sizeof(*nc));
		nc->guid = n->guid;
		nc->nports = n->nports;
		nc->ports = calloc((size_t)n->nports + 1, sizeof(*nc->ports));
		return nc->ports ? nc : NULL;
	}
	if (c->n == c->cap) {
		uint32_t cap = c->cap ? c->cap * 2 : 256;
		void *p = realloc(c->v, (size_t)cap * sizeof(*c->v));
		if (!p)
			return NULL;
		c->v = p;
		c->cap = cap;
	}
	struct node_cache *nc = &c->v[c->n];
	memset(nc, 0, sizeof(*nc));
	nc->guid = n->guid;
	nc->nports = n->nports;
	nc->ports = calloc((size_t)n->nports + 1, sizeof(*nc->ports));
	if (!nc->ports || guid_map_put(&c->idx, n->guid, c->n) < 0) {
		free(nc->ports);
		return NULL;
	}
	c->n++;
	return nc;
}

static int cache_lft_size(struct node_cache *nc, uint32_t blocks)
{
	if (blocks <= nc->lft_blocks)
		return 0;
	if (blocks < 2 * nc->lft_blocks)	/* block by block: double */
		blocks = 2 * nc->lft_blocks;
	uint8_t *l = realloc(nc->lft, (size_t)blocks * FAB_LFT_BLOCK);
	if (!l)
		return -1;
	nc->lft = l;
	uint8_t *v = realloc(nc->lft_valid, blocks);
	if (!v)
		return -1;
	memset(v + nc->lft_blocks, 0, blocks - nc->lft_blocks);
	nc->lft_valid = v;
	nc->lft_blocks = blocks;
	return 0;
}

/* The one place that knows which PortInfo fields a comparison looks at. */
static void pi_fields(const struct fabric *f, uint32_t pi,
		      const uint8_t *data, struct pi_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->valid = 1;
	if (fabric_is_endport(f, pi)) {
		r->lid = smp_pi_get(data, IB_PORT_LID_F);
		r->sm_lid = smp_pi_get(data, IB_PORT_SMLID_F);
		r->lmc = (uint8_t)smp_pi_get(data, IB_PORT_LMC_F);
		r->prefix = smp_pi_get64(data, IB_PORT_GID_PREFIX_F);
		r->timeout = (uint8_t)smp_pi_get(data, IB_PORT_SUBN_TIMEOUT_F);
		/*
		 * The M_Key fields count only with ProtectBits above 0: a port
		 * at 0 is unprotected whatever its key and lease read (ibsim
		 * keeps neither from a Set), as M_Key protection off writes it.
		 */
		mkey_pi_get(data, &r->mkey);
		r->mkey.violations = 0;
		if (!r->mkey.protect)
			memset(&r->mkey, 0, sizeof(r->mkey));
	}
	if (fabric_port_linked(f, pi)) {
		r->mtu = (uint8_t)smp_pi_get(data, IB_PORT_NEIGHBOR_MTU_F);
		r->opvls = (uint8_t)smp_pi_get(data, IB_PORT_OPER_VLS_F);
		r->stall = (uint8_t)smp_pi_get(data, IB_PORT_VL_STALL_COUNT_F);
		r->hoq = (uint8_t)smp_pi_get(data, IB_PORT_HOQ_LIFE_F);
		r->hlimit = (uint8_t)smp_pi_get(data, IB_PORT_VL_HIGH_LIMIT_F);
		r->enforce = (uint8_t)(smp_pi_get(data, IB_PORT_PART_EN_INB_F) << 1 |
				       smp_pi_get(data, IB_PORT_PART_EN_OUTB_F));
	}
}

static int pi_same(const struct pi_rec *a, const struct pi_rec *b)
{
	return a->valid && b->valid && a->lid == b->lid &&
	       a->sm_lid == b->sm_lid && a->lmc == b->lmc &&
	       a->mtu == b->mtu && a->opvls == b->opvls && a->hoq == b->hoq &&
	       a->stall == b->stall && a->timeout == b->timeout &&
	       a->hlimit == b->hlimit && a->enforce == b->enforce &&
	       a->prefix == b->prefix && a->mkey.key == b->mkey.key &&
	       a->mkey.protect == b->mkey.protect &&
	       a->mkey.lease_s == b->mkey.lease_s;
}

/* Does the payload ask the device to do something, not just to hold it? */
static int is_action(const struct plan_op *op, const uint8_t *data)
{
	if (op->kind == PLAN_PORTINFO)
		return smp_pi_get(data, IB_PORT_STATE_F) != 0 ||
		       smp_pi_get(data, IB_PORT_CLIENT_REREG_F) != 0;
	if (op->kind == PLAN_SWITCHINFO)
		return mad_get_field((void *)data, 0, IB_SW_STATE_CHANGE_F) != 0;
	return 0;
}

/* The order of a node's attribute records: by attribute, port, modifier. */
static uint64_t attr_key(uint16_t attr, uint8_t port, uint32_t mod)
{
	return (uint64_t)attr << 40 | (uint64_t)port << 32 | mod;
}

/*
 * The first record not below the key: the records stay sorted, so that
 * the hundreds of SL2VL pairs of a switch are found by halving, and a
 * plan that writes them in order appends.
 */
static uint32_t attr_lower(const struct node_cache *nc, uint64_t key)
{
	uint32_t lo = 0, hi = nc->n_attrs;
	if (hi && attr_key(nc->attrs[hi - 1].attr, nc->attrs[hi - 1].port,
			   nc->attrs[hi - 1].mod) < key)
		return hi;	/* past the last: the usual case while recording */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct attr_rec *a = &nc->attrs[mid];
		if (attr_key(a->attr, a->port, a->mod) < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct attr_rec *find_key(const struct node_cache *nc, uint16_t attr,
				 uint8_t port, uint32_t mod)
{
	uint32_t i = attr_lower(nc, attr_key(attr, port, mod));
	if (i < nc->n_attrs && nc->attrs[i].attr == attr &&
	    nc->attrs[i].port == port && nc->attrs[i].mod == mod)
		return &nc->attrs[i];
	return NULL;
}

static struct attr_rec *find_attr(const struct node_cache *nc,
				  const struct plan_op *op, uint32_t mod)
{
	return find_key(nc, plan_attr(op), op->port, mod);
}

/*
 * The pairs a switch's SL2VL modifier with bit 17 (every input) or 16
 * (every output) names: inputs r[0]..r[1], outputs r[2]..r[3], port 0
 * included (IBA 1.2.1 14.2.5.8).  0 for a modifier naming one pair.
 */
static int sl2vl_range(const struct fab_node *n, const struct plan_op *op,
		       uint32_t mod, unsigned r[4])
{
	if (op->kind != PLAN_SL2VL || n->type != FAB_SWITCH ||
	    !(mod & (SL2VL_ALL_IN | SL2VL_ALL_OUT)))
		return 0;
	r[0] = r[1] = (mod >> 8) & 0xff;
	r[2] = r[3] = mod & 0xff;
	if (mod & SL2VL_ALL_IN) {
		r[0] = 0;
		r[1] = n->nports;
	}
	if (mod & SL2VL_ALL_OUT) {
		r[2] = 0;
		r[3] = n->nports;
	}
	return 1;
}

/* Does every pair of the range hold data? */
static int pairs_hold(const struct node_cache *nc, const struct plan_op *op,
		      const unsigned r[4], const uint8_t *data)
{
	uint16_t attr = plan_attr(op);
	for (unsigned in = r[0]; in <= r[1]; in++)
		for (unsigned out = r[2]; out <= r[3]; out++) {
			const struct attr_rec *a = find_key(nc, attr, op->port,
							    in << 8 | out);
			if (!a || memcmp(a->data, data, SMP_DATA_SIZE))
				return 0;
		}
	return 1;
}

/*
 * Records data at every pair of the range: the records it lacks are
 * merged in at once (a switch's 1,369 pairs, one by one, would move the
 * records after them 1,369 times).
 */
static void record_pairs(struct node_cache *nc, const struct plan_op *op,
			 const unsigned r[4], const uint8_t *data)
{
	uint16_t attr = plan_attr(op);
	uint32_t missing = 0;
	for (unsigned in = r[0]; in <= r[1]; in++)
		for (unsigned out = r[2]; out <= r[3]; out++) {
			struct attr_rec *a = find_key(nc, attr, op->port, in << 8 | out);
			if (a)
				memcpy(a->data, data, SMP_DATA_SIZE);
			else
				missing++;
		}
	if (!missing)
		return;
	uint32_t n = nc->n_attrs + missing, k = 0, i = 0;
	struct attr_rec *v = malloc((size_t)n * sizeof(*v));
	if (!v)
		return;	/* left unknown: written again next time */
	for (unsigned in = r[0]; in <= r[1]; in++)
		for (unsigned out = r[2]; out <= r[3]; out++) {
			uint32_t mod = in << 8 | out;
			uint64_t key = attr_key(attr, op->port, mod);
			while (i < nc->n_attrs &&
			       attr_key(nc->attrs[i].attr, nc->attrs[i].port,
					nc->attrs[i].mod) < key)
				v[k++] = nc->attrs[i++];
			if (i < nc->n_attrs && nc->attrs[i].attr == attr &&
			    nc->attrs[i].port == op->port && nc->attrs[i].mod == mod) {
				v[k++] = nc->attrs[i++];	/* updated above */
				continue;
			}
			v[k] = (struct attr_rec){ .mod = mod, .attr = attr,
						  .port = op->port };
			memcpy(v[k++].data, data, SMP_DATA_SIZE);
		}
	while (i < nc->n_attrs)
		v[k++] = nc->attrs[i++];
	free(nc->attrs);
	nc->attrs = v;
	nc->n_attrs = nc->cap_attrs = n;
}

int devcache_holds(const struct devcache *c, const struct fabric *f,
		   const struct plan_op *op, uint32_t mod, const uint8_t *data)
{
	const struct fab_node *n = &f->nodes[op->node];
	const struct node_cache *nc = find_node(c, n);
	if (!nc || op->port > nc->nports || is_action(op, data))
		return 0;
	switch (op->kind) {
	case PLAN_PORTINFO: {
		struct pi_rec w;
		pi_fields(f, n->first_port + op->port, data, &w);
		return pi_same(&nc->ports[op->port], &w);
	}
	case PLAN_SWITCHINFO:
		return nc->si_valid &&
		       nc->lft_top == mad_get_field((void *)data, 0,
						    IB_SW_LINEAR_FDB_TOP_F) &&
		       nc->mft_top == mad_get_field((void *)data, 0,
						    IB_SW_MCAST_FDB_TOP_F);
	case PLAN_LFT:
		return mod < nc->lft_blocks && nc->lft_valid[mod] &&
		       !memcmp(nc->lft + (size_t)mod * FAB_LFT_BLOCK, data, FAB_LFT_BLOCK);
	default: {
		unsigned r[4];
		if (sl2vl_range(n, op, mod, r))
			return pairs_hold(nc, op, r, data);
		const struct attr_rec *a = find_attr(nc, op, mod);
		return a && !memcmp(a->data, data, SMP_DATA_SIZE);
	}
	}
}

const uint8_t *devcache_attr(const struct devcache *c, const struct fabric *f,
			     uint32_t node, uint8_t port, uint16_t attr,
			     uint32_t mod)
{
	const struct node_cache *nc = find_node(c, &f->nodes[node]);
	if (!nc)
		return NULL;
	const struct attr_rec *a = find_key(nc, attr, port, mod);
	return a ? a->data : NULL;
}

const uint8_t *devcache_lft(const struct devcache *c, const struct fabric *f, uint32_t node,
			    uint32_t *blocks, const uint8_t **valid, uint32_t *top)
{
	const struct node_cache *nc = find_node(c, &f->nodes[node]);
	*top = nc && nc->si_valid ? nc->lft_top : UINT32_MAX;
	*blocks = nc ? nc->lft_blocks : 0;
	*valid = nc ? nc->lft_valid : NULL;
	return nc && nc->lft_blocks ? nc->lft : NULL;
}

const uint8_t *devcache_attr_below(const struct devcache *c, const struct fabric *f,
				   uint32_t node, uint8_t port, uint16_t attr,
				   uint32_t lo, uint32_t below, uint32_t *mod)
{
	const struct node_cache *nc = find_node(c, &f->nodes[node]);
	if (!nc || below <= lo)
		return NULL;
	uint32_t i = attr_lower(nc, attr_key(attr, port, below));
	if (!i)
		return NULL;
	const struct attr_rec *a = &nc->attrs[i - 1];
	if (a->attr != attr || a->port != port || a->mod < lo)
		return NULL;
	*mod = a->mod;
	return a->data;
}

int devcache_holds_attr(const struct devcache *c, const struct fabric *f,
			uint32_t node, uint8_t port, uint16_t attr)
{
	const struct node_cache *nc = find_node(c, &f->nodes[node]);
	if (!nc)
		return 0;
	uint32_t i = attr_lower(nc, attr_key(attr, port, 0));
	return i < nc->n_attrs && nc->attrs[i].attr == attr && nc->attrs[i].port == port;
}

void devcache_record(struct devcache *c, const struct fabric *f,
		     const struct plan_op *op, uint32_t mod, const uint8_t *data)
{
	const struct fab_node *n = &f->nodes[op->node];
	struct node_cache *nc = cache_node(c, n);
	if (!nc || op->port > nc->nports)
		return;
	switch (op->kind) {
	case PLAN_PORTINFO:
		pi_fields(f, n->first_port + op->port, data, &nc->ports[op->port]);
		return;
	case PLAN_SWITCHINFO:
		nc->lft_top = mad_get_field((void *)data, 0, IB_SW_LINEAR_FDB_TOP_F);
		nc->mft_top = mad_get_field((void *)data, 0, IB_SW_MCAST_FDB_TOP_F);
		nc->si_valid = 1;
		return;
	case PLAN_LFT:
		/* a run of blocks: room for the whole run at once */
		if (mod < UINT32_MAX / FAB_LFT_BLOCK &&
		    cache_lft_size(nc, (op->flags & PLAN_LFT_ROW) ?
					 op->mod + op->count : mod + 1) == 0) {
			memcpy(nc->lft + (size_t)mod * FAB_LFT_BLOCK, data, FAB_LFT_BLOCK);
			nc->lft_valid[mod] = 1;
		}
		return;
	default:
		break;
	}
	unsigned r[4];
	if (sl2vl_range(n, op, mod, r)) {
		record_pairs(nc, op, r, data);
		return;
	}
	uint16_t attr = plan_attr(op);
	uint32_t i = attr_lower(nc, attr_key(attr, op->port, mod));
	struct attr_rec *a = i < nc->n_attrs ? &nc->attrs[i] : NULL;
	if (!a || a->attr != attr || a->port != op->port || a->mod != mod) {
		if (nc->n_attrs == nc->cap_attrs) {
			uint32_t cap = nc->cap_attrs ? nc->cap_attrs * 2 : 1;
			void *v = realloc(nc->attrs, (size_t)cap * sizeof(*nc->attrs));
			if (!v)
				return;
			nc->attrs = v;
			nc->cap_attrs = cap;
		}
		a = &nc->attrs[i];
		memmove(a + 1, a, (size_t)(nc->n_attrs - i) * sizeof(*a));
		nc->n_attrs++;
		a->attr = attr;
		a->mod = mod;
		a->port = op->port;
	}
	memcpy(a->data, data, SMP_DATA_SIZE);
}

/* Forgets the attribute records of port (-1: every port) and attr (-1: any). */
static void forget_attrs(struct node_cache *nc, int port, int attr)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < nc->n_attrs; i++)
		if ((port >= 0 && nc->attrs[i].port != port) ||
		    (attr >= 0 && nc->attrs[i].attr != attr))
			nc->attrs[k++] = nc->attrs[i];
	nc->n_attrs = k;
}

int devcache_port_mkey(const struct devcache *c, const struct fabric *f,
		       uint32_t pi, struct mkey_pi *m)
{
	const struct fab_port *p = &f->ports[pi];
	const struct node_cache *nc = find_node(c, &f->nodes[p->node]);
	if (!nc || p->num > nc->nports || !nc->ports[p->num].valid)
		return -1;
	*m = nc->ports[p->num].mkey;
	return 0;
}

void devcache_observe_port(struct devcache *c, const struct fabric *f,
			   uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	struct node_cache *nc = find_node(c, &f->nodes[p->node]);
	if (!nc || !fabric_is_endport(f, pi))
		return;
	struct pi_rec *r = &nc->ports[p->num];
	if (!r->valid)
		return;
	if (p->hw_lid != r->lid || p->hw_sm_lid != r->sm_lid) {
		/* the device lost what was written (a reset, another SM) */
		r->valid = 0;
		forget_attrs(nc, p->num, -1);
		if (f->nodes[p->node].type == FAB_SWITCH)
			forget_attrs(nc, -1, IB_ATTR_PKEY_TBL);	/* its external ports' too */
	} else if (p->lmc != r->lmc) {
		r->valid = 0;
	}
}

void devcache_observe_switch(struct devcache *c, const struct fabric *f,
			     uint32_t node)
{
	const struct fab_node *n = &f->nodes[node];
	struct node_cache *nc = cache_node(c, n);
	if (!nc)
		return;
	if (n->lft_top == 0) {	/* it lost its tables */
		if (nc->lft_valid)
			memset(nc->lft_valid, 0, nc->lft_blocks);
		/* its secondary LFT and XLIDCap (mad/xlid.h) with them */
		forget_attrs(nc, 0, -1);
	}
	nc->lft_top = n->lft_top;
	nc->mft_top = n->mft_top;
	nc->si_valid = 1;
}

void devcache_note_read(struct devcache *c, const struct fabric *f, int kind,
			uint32_t node, uint8_t port, uint32_t mod,
			const uint8_t *data)
{
	struct plan_op op;
	memset(&op, 0, sizeof(op));
	op.node = node;
	op.kind = (uint8_t)kind;
	op.port = port;
	op.mod = mod;
	op.count = 1;
	devcache_record(c, f, &op, mod, data);
}

/* The attributes read back, and the plan kind of each. */
static int item_kind(uint16_t attr)
{
	switch (attr) {
	case IB_ATTR_PKEY_TBL: return PLAN_PKEY;
	case IB_ATTR_SLVL_TABLE: return PLAN_SL2VL;
	case IB_ATTR_MULTICASTFORWTBL: return PLAN_MFT;
	default: return -1;
	}
}

/* An SL-to-VL table is 16 four-bit entries; the rest of the payload is padding. */
#define SL2VL_TABLE_BYTES 8

/*
 * The cursor: the node record in the upper 32 bits, the item in the
 * lower: LFT block i for i < lft_blocks, else attribute record
 * i - lft_blocks.
 */
int devcache_next_item(const struct devcache *c, uint64_t *cursor,
		       struct devcache_item *it)
{
	uint32_t r = (uint32_t)(*cursor >> 32), i = (uint32_t)*cursor;
	for (; r < c->n; r++, i = 0) {
		const struct node_cache *nc = &c->v[r];
		for (; i < nc->lft_blocks; i++)
			if (nc->lft_valid[i])
				break;
		if (i < nc->lft_blocks) {
			it->guid = nc->guid;
			it->kind = PLAN_LFT;
			it->port = 0;
			it->mod = i;
			memcpy(it->data, nc->lft + (size_t)i * FAB_LFT_BLOCK, FAB_LFT_BLOCK);
			*cursor = (uint64_t)r << 32 | (i + 1);
			return 1;
		}
		for (uint32_t a = i - nc->lft_blocks; a < nc->n_attrs; a++) {
			const struct attr_rec *ar = &nc->attrs[a];
			int kind = item_kind(ar->attr);
			if (kind < 0)
				continue;
			it->guid = nc->guid;
			it->kind = kind;
			it->port = ar->port;
			it->mod = ar->mod;
			memcpy(it->data, ar->data, SMP_DATA_SIZE);
			*cursor = (uint64_t)r << 32 | (nc->lft_blocks + a + 1);
			return 1;
		}
	}
	*cursor = 0;
	return 0;
}

uint32_t devcache_items(const struct devcache *c)
{
	uint32_t n = 0;
	for (uint32_t r = 0; r < c->n; r++) {
		const struct node_cache *nc = &c->v[r];
		for (uint32_t i = 0; i < nc->lft_blocks; i++)
			n += nc->lft_valid[i];
		for (uint32_t a = 0; a < nc->n_attrs; a++)
			n += item_kind(nc->attrs[a].attr) >= 0;
	}
	return n;
}

int devcache_item_same(const struct devcache_item *it, const uint8_t *read)
{
	size_t n = it->kind == PLAN_SL2VL ? SL2VL_TABLE_BYTES : SMP_DATA_SIZE;
	return !memcmp(it->data, read, n);
}
