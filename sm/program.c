#include "program.h"

#include <infiniband/mad.h>
#include <stdlib.h>
#include <string.h>

#include "../mad/smp.h"
#include "log.h"

/* ---- the device cache: what was last written, by node GUID ---- */

struct pi_cache {
	uint8_t valid, pkey;
	uint8_t lmc, mtu, opvls, hoq, stall, timeout;
	uint32_t lid, sm_lid;
	uint64_t prefix;
};

struct node_cache {
	uint64_t guid;
	uint32_t nports;
	struct pi_cache *ports;		/* nports + 1 */
	uint8_t *lft;			/* lft_blocks * 64 */
	uint8_t *lft_valid;		/* per block */
	uint32_t lft_blocks;
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

void devcache_clear(struct devcache *c)
{
	for (uint32_t i = 0; i < c->n; i++) {
		free(c->v[i].ports);
		free(c->v[i].lft);
		free(c->v[i].lft_valid);
	}
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

static struct node_cache *cache_node(struct devcache *c, uint64_t guid,
				     uint32_t nports)
{
	uint32_t i = guid_map_get(&c->idx, guid);
	if (i != FAB_NONE) {
		struct node_cache *nc = &c->v[i];
		if (nc->nports == nports)
			return nc;
		/* the node changed shape: forget it */
		memset(nc->ports, 0, ((size_t)nc->nports + 1) * sizeof(*nc->ports));
		free(nc->ports);
		nc->ports = calloc((size_t)nports + 1, sizeof(*nc->ports));
		nc->nports = nports;
		if (nc->lft_valid)
			memset(nc->lft_valid, 0, nc->lft_blocks);
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
	nc->guid = guid;
	nc->nports = nports;
	nc->ports = calloc((size_t)nports + 1, sizeof(*nc->ports));
	if (!nc->ports || guid_map_put(&c->idx, guid, c->n) < 0) {
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
	uint8_t *l = realloc(nc->lft, (size_t)blocks * 64);
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

int devcache_note_lft_block(struct devcache *c, uint64_t guid, uint32_t nports,
			    uint32_t block, const uint8_t *data)
{
	struct node_cache *nc = cache_node(c, guid, nports);
	if (!nc || cache_lft_size(nc, block + 1) < 0)
		return -1;
	memcpy(nc->lft + (size_t)block * 64, data, 64);
	nc->lft_valid[block] = 1;
	return 0;
}

/* ---- planning and sending ---- */

enum op_kind { OP_PORTINFO, OP_SWITCHINFO, OP_PKEY, OP_LFT };

struct op {
	struct program *pr;
	struct op *next;
	uint32_t node;
	uint32_t block;
	uint8_t kind, port, hops, state;
	uint8_t verify;		/* a Get to see where a refused state change stands */
	uint8_t relearn;	/* that Get reads an inferred port the Set did not fit */
	uint8_t data[64];
	uint8_t path[FAB_MAX_HOPS + 1];
};

struct program {
	struct txn_engine *txn;
	struct discovery *d;
	struct fabric *f;
	const struct lft_tables *t;
	struct devcache *c;
	struct program_params p;
	struct program_stats st;
	program_done_fn done;
	void *done_arg;
	int unrouted;		/* program_set_tables(NULL): no switches, no phase 2 */
	uint8_t *want_active;	/* per port index */
	uint8_t *port_failed;	/* per port index */
	struct op *retry;
	uint32_t outstanding;
	int phase;		/* 1: configure and arm, 2: activate */
	int cancelled;
	int feeding;		/* inside feed(): no recursion */
	uint32_t cur;		/* planning cursor: nodes, then ports */
	int rounds;
};

static void submit(struct program *pr, struct op *o);

static const char *op_name(int k)
{
	static const char *const n[] = { "PortInfo", "SwitchInfo", "P_KeyTable",
					 "LinearForwardingTable" };
	return n[k];
}

static int endport(const struct fabric *f, uint32_t pi)
{
	return fabric_is_endport(f, pi);
}

static int linked(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	return p->num != 0 && p->phys_state == PHYS_LINKUP &&
	       p->remote != FAB_NONE &&
	       (f->ports[p->remote].flags & FPORT_PRESENT);
}

static uint8_t min3(unsigned a, unsigned b, unsigned c)
{
	unsigned m = a < b ? a : b;
	return (uint8_t)(m < c ? m : c);
}

/* What the SM wants in a port's PortInfo, as a cache record. */
static void desired(const struct program *pr, uint32_t pi, struct pi_cache *w)
{
	const struct fabric *f = pr->f;
	const struct fab_port *p = &f->ports[pi];
	const struct fab_node *n = &f->nodes[p->node];
	memset(w, 0, sizeof(*w));
	w->valid = 1;
	if (endport(f, pi)) {
		w->lid = p->lid;
		w->sm_lid = pr->p.sm_lid;
		w->lmc = (n->type == FAB_SWITCH && !n->enhanced_port0) ? 0 : f->lmc;
		w->prefix = pr->p.subnet_prefix;
		w->timeout = (uint8_t)pr->p.subnet_timeout;
	}
	if (linked(f, pi)) {
		const struct fab_port *r = &f->ports[p->remote];
		w->mtu = p->mtu_cap < r->mtu_cap ? p->mtu_cap : r->mtu_cap;
		w->opvls = min3(p->vl_cap, r->vl_cap, (unsigned)pr->p.max_op_vls);
		w->stall = (uint8_t)pr->p.vl_stall_count;
		int leaf = n->type == FAB_SWITCH &&
			   f->nodes[r->node].type != FAB_SWITCH;
		w->hoq = (uint8_t)(leaf ? pr->p.leaf_hoq_life : pr->p.hoq_life);
	}
}

/* Do two records ask the device for the same PortInfo? */
static int pi_same(const struct pi_cache *a, const struct pi_cache *b)
{
	return a->valid && b->valid && a->lid == b->lid &&
	       a->sm_lid == b->sm_lid && a->lmc == b->lmc &&
	       a->mtu == b->mtu && a->opvls == b->opvls && a->hoq == b->hoq &&
	       a->stall == b->stall && a->timeout == b->timeout &&
	       a->prefix == b->prefix;
}

static void encode_pi(const struct program *pr, uint32_t pi,
		      const struct pi_cache *w, int state, int rereg,
		      uint8_t *out)
{
	const struct fabric *f = pr->f;
	memcpy(out, pr->d->pi_raw[pi], 64);
	smp_pi_prepare_set(out);
	smp_pi_set64(out, IB_PORT_MKEY_F, 0);
	smp_pi_set(out, IB_PORT_MKEY_LEASE_F, 0);
	if (endport(f, pi)) {
		smp_pi_set(out, IB_PORT_LID_F, w->lid);
		smp_pi_set(out, IB_PORT_SMLID_F, w->sm_lid);
		smp_pi_set(out, IB_PORT_LMC_F, w->lmc);
		smp_pi_set64(out, IB_PORT_GID_PREFIX_F, w->prefix);
		smp_pi_set(out, IB_PORT_SUBN_TIMEOUT_F, w->timeout);
		smp_pi_set(out, IB_PORT_CLIENT_REREG_F, rereg ? 1 : 0);
	}
	if (linked(f, pi)) {
		smp_pi_set(out, IB_PORT_NEIGHBOR_MTU_F, w->mtu);
		smp_pi_set(out, IB_PORT_OPER_VLS_F, w->opvls);
		smp_pi_set(out, IB_PORT_VL_STALL_COUNT_F, w->stall);
		smp_pi_set(out, IB_PORT_HOQ_LIFE_F, w->hoq);
	}
	smp_pi_set(out, IB_PORT_STATE_F, (uint32_t)state);
}

static struct op *new_op(struct program *pr, int kind, uint32_t node,
			 uint32_t port_index)
{
	struct op *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->pr = pr;
	o->kind = (uint8_t)kind;
	o->node = node;
	int hops = port_index == FAB_NONE ?
		   pr->f->nodes[node].dr_len :
		   discovery_port_path(pr->f, port_index, o->path);
	if (port_index == FAB_NONE)
		memcpy(o->path, pr->f->nodes[node].dr_path, (size_t)hops + 1);
	if (hops < 0) {
		free(o);
		return NULL;
	}
	o->hops = (uint8_t)hops;
	return o;
}

/*
 * A port that has had no LID since its last reset and keeps no P_Key table
 * in NVRAM holds what every port holds after a reset: the default P_Key
 * 0xFFFF in entry 0 and nothing else.  That is the only partition ibsmd
 * configures, so such a port needs no P_Key write.
 */
static int pkey_default_since_reset(const struct fab_port *p)
{
	return p->hw_lid == 0 && !(p->capmask & CAP_IS_PKEY_NVRAM);
}

static void plan_port(struct program *pr, uint32_t pi)
{
	const struct fabric *f = pr->f;
	const struct fab_port *p = &f->ports[pi];
	const struct fab_node *n = &f->nodes[p->node];
	if (!(p->flags & FPORT_PRESENT))
		return;
	int ep = endport(f, pi), ln = linked(f, pi);
	if (!ep && !ln)
		return;
	struct node_cache *nc = cache_node(pr->c, n->guid, n->nports);
	struct pi_cache w;
	desired(pr, pi, &w);
	struct pi_cache *cached = nc ? &nc->ports[p->num] : NULL;
	/* a device that lost what we wrote (reset, another SM) */
	if (cached && cached->valid && ep &&
	    (p->hw_lid != cached->lid || p->hw_sm_lid != cached->sm_lid))
		cached->valid = cached->pkey = 0;
	int rereg = pr->p.client_rereg && ep && n->type != FAB_SWITCH;
	int state = 0;
	if (ln && p->state == PORT_INIT)
		state = PORT_ARMED;
	if (ln && (p->state == PORT_INIT || p->state == PORT_ARMED))
		pr->want_active[pi] = 1;
	int differs = !cached || !pi_same(cached, &w) ||
		      (ep && (p->hw_lid != w.lid || p->hw_sm_lid != w.sm_lid ||
			      p->lmc != w.lmc));
	if (differs || state || rereg) {
		struct op *o = new_op(pr, OP_PORTINFO, p->node, pi);
		if (o) {
			o->port = p->num;
			o->state = (uint8_t)state;
			encode_pi(pr, pi, &w, state, rereg, o->data);
			submit(pr, o);
		}
	}
	if (ep && (!cached || !cached->pkey) && pkey_default_since_reset(p)) {
		/* nothing to write: the table holds the default partition */
		if (cached)
			cached->pkey = 1;
	} else if (ep && (!cached || !cached->pkey)) {
		struct op *o = new_op(pr, OP_PKEY, p->node, pi);
		if (o) {
			o->port = p->num;
			o->data[0] = 0xff;	/* entry 0: the default partition */
			o->data[1] = 0xff;
			submit(pr, o);
		}
	}
}

static void plan_switch(struct program *pr, uint32_t ni)
{
	const struct fabric *f = pr->f;
	const struct fab_node *n = &f->nodes[ni];
	uint32_t row = pr->t->row_of_node[ni];
	uint32_t top = pr->t->max_lid;
	if (n->lft_top != top || n->port_state_change) {
		struct op *o = new_op(pr, OP_SWITCHINFO, ni, FAB_NONE);
		if (o) {
			memcpy(o->data, pr->d->si_raw[ni], 64);
			mad_set_field(o->data, 0, IB_SW_LINEAR_FDB_TOP_F, top);
			mad_set_field(o->data, 0, IB_SW_STATE_CHANGE_F, 1);
			submit(pr, o);
		}
	}
	if (row == FAB_NONE)
		return;
	uint32_t blocks = top / 64 + 1;
	if (n->lft_cap && blocks > (n->lft_cap + 63) / 64) {
		log_err("switch 0x%016llx \"%s\": LinearFDBCap %u is below the highest LID %u",
			(unsigned long long)n->guid, n->desc, n->lft_cap, top);
		blocks = (n->lft_cap + 63) / 64;
	}
	struct node_cache *nc = cache_node(pr->c, n->guid, n->nports);
	if (nc && cache_lft_size(nc, blocks) < 0)
		nc = NULL;
	/* a switch whose LinearFDBTop is not ours has lost its tables */
	if (nc && n->lft_top != top && n->lft_top == 0)
		memset(nc->lft_valid, 0, nc->lft_blocks);
	const uint8_t *lft = lft_row(pr->t, row);
	for (uint32_t b = 0; b < blocks; b++) {
		uint8_t blk[64];
		memset(blk, LFT_DROP, sizeof(blk));
		for (uint32_t k = 0; k < 64 && b * 64 + k <= top; k++)
			blk[k] = lft[b * 64 + k];
		if (nc && nc->lft_valid[b] && !memcmp(nc->lft + b * 64, blk, 64))
			continue;
		struct op *o = new_op(pr, OP_LFT, ni, FAB_NONE);
		if (!o)
			continue;
		o->block = b;
		memcpy(o->data, blk, 64);
		submit(pr, o);
	}
}

static void record_success(struct program *pr, struct op *o)
{
	const struct fab_node *n = &pr->f->nodes[o->node];
	struct node_cache *nc = cache_node(pr->c, n->guid, n->nports);
	switch (o->kind) {
	case OP_PORTINFO: {
		uint32_t pi = n->first_port + o->port;
		struct fab_port *p = &pr->f->ports[pi];
		pr->st.portinfo_sets++;
		if (o->state == PORT_ACTIVE)
			pr->st.activations++;
		if (nc) {
			uint8_t pkey = nc->ports[o->port].pkey;
			desired(pr, pi, &nc->ports[o->port]);
			nc->ports[o->port].pkey = pkey;
		}
		/* the model now says what the device holds */
		if (o->state)
			p->state = o->state;
		if (fabric_is_endport(pr->f, pi)) {
			p->hw_lid = p->lid;
			p->hw_sm_lid = pr->p.sm_lid;
			p->lmc = nc ? nc->ports[o->port].lmc : p->lmc;
		}
		break;
	}
	case OP_SWITCHINFO:
		pr->st.switchinfo_sets++;
		pr->f->nodes[o->node].lft_top = pr->t->max_lid;
		pr->f->nodes[o->node].port_state_change = 0;
		break;
	case OP_PKEY:
		pr->st.pkey_sets++;
		if (nc)
			nc->ports[o->port].pkey = 1;
		break;
	case OP_LFT:
		pr->st.lft_blocks++;
		if (nc && o->block < nc->lft_blocks) {
			memcpy(nc->lft + o->block * 64, o->data, 64);
			nc->lft_valid[o->block] = 1;
		}
		break;
	}
}

static void record_failure(struct program *pr, struct op *o, const char *why)
{
	const struct fab_node *n = &pr->f->nodes[o->node];
	pr->st.failed++;
	uint32_t pi = n->first_port + o->port;
	if (o->kind == OP_PORTINFO || o->kind == OP_PKEY) {
		pr->want_active[pi] = 0;
		if (!pr->port_failed[pi]) {
			pr->port_failed[pi] = 1;
			pr->st.failed_ports++;
		}
	} else if (!pr->port_failed[n->first_port]) {
		pr->port_failed[n->first_port] = 1;
		pr->st.failed_ports++;
	}
	log_warn("%s Set to 0x%016llx[%u] \"%s\"%s failed: %s", op_name(o->kind),
		 (unsigned long long)n->guid, o->port, n->desc,
		 o->kind == OP_LFT ? " (LFT block)" : "", why);
}

static void activate_port(struct program *pr, uint32_t pi)
{
	const struct fabric *f = pr->f;
	if (!pr->want_active[pi])
		return;
	struct op *o = new_op(pr, OP_PORTINFO, f->ports[pi].node, pi);
	if (!o)
		return;
	struct pi_cache w;
	desired(pr, pi, &w);
	o->port = f->ports[pi].num;
	o->state = PORT_ACTIVE;
	encode_pi(pr, pi, &w, PORT_ACTIVE, 0, o->data);
	submit(pr, o);
}

/*
 * Plans and submits from the cursor until enough is in flight: the
 * plan is never held in memory whole (a 20,000-node fabric has millions
 * of LFT blocks), and answers are handled while the rest is planned.
 * Phase 1 walks the ports (PortInfo with ARMED, P_Key) while the routes
 * may still be computed, then the switches (SwitchInfo, LFT blocks);
 * phase 2 the ports to activate.
 */
#define PROGRAM_HIGH_WATER 4096

static int feed(struct program *pr)
{
	const struct fabric *f = pr->f;
	if (pr->feeding)
		return 0;
	pr->feeding = 1;
	while (pr->outstanding < PROGRAM_HIGH_WATER) {
		uint32_t c = pr->cur;
		if (pr->phase == 1 && c < f->n_ports) {
			plan_port(pr, c);
		} else if (pr->phase == 1 && c < f->n_ports + f->n_nodes) {
			if (!pr->t && !pr->unrouted)
				break;	/* the routes are not there yet */
			if (pr->t && f->nodes[c - f->n_ports].type == FAB_SWITCH)
				plan_switch(pr, c - f->n_ports);
		} else if (pr->phase == 2 && c < f->n_ports) {
			activate_port(pr, c);
		} else {
			break;
		}
		pr->cur++;
	}
	pr->feeding = 0;
	return pr->outstanding > 0;
}

static int planned_all(const struct program *pr)
{
	const struct fabric *f = pr->f;
	return pr->cur >= (pr->phase == 1 ? f->n_nodes + f->n_ports : f->n_ports);
}

static void maybe_done(struct program *pr)
{
	if (pr->feeding)
		return;
	if (!planned_all(pr) && pr->outstanding < PROGRAM_HIGH_WATER / 2)
		feed(pr);
	if (pr->outstanding || !planned_all(pr))
		return;
	if (pr->retry && pr->rounds < pr->p.extra_rounds) {
		struct op *o = pr->retry;
		pr->retry = NULL;
		pr->rounds++;
		while (o) {
			struct op *next = o->next;
			submit(pr, o);
			o = next;
		}
		return;
	}
	while (pr->retry) {
		struct op *o = pr->retry;
		pr->retry = o->next;
		record_failure(pr, o, "no answer");
		free(o);
	}
	if (pr->phase == 1 && pr->unrouted) {
		pr->st.unrouted = 1;
	} else if (pr->phase == 1) {
		log_info("configuration: %u LFT blocks, %u PortInfo, %u SwitchInfo written; activating",
			 pr->st.lft_blocks, pr->st.portinfo_sets, pr->st.switchinfo_sets);
		pr->phase = 2;
		pr->rounds = 0;
		pr->cur = 0;
		feed(pr);
		if (pr->outstanding)
			return;
	}
	pr->done(pr->done_arg, &pr->st);
}

/* Plans a port again if the cursor has passed it (else it is planned anyway). */
static void replan_port(struct program *pr, uint32_t pi)
{
	if (pr->phase == 2 || pr->cur > pi)
		plan_port(pr, pi);
}

/* The model's port now as the device says (a Set's answer or a Get). */
static void relearn_port(struct program *pr, uint32_t pi, const uint8_t *data)
{
	struct fab_port *p = &pr->f->ports[pi];
	memcpy(pr->d->pi_raw[pi], data, 64);
	discovery_decode_portinfo(p, data);
	log_info("port 0x%016llx[%u]: not what was inferred (MTUCap %u, VLCap %u); set again",
		 (unsigned long long)p->guid, p->num, p->mtu_cap, p->vl_cap);
	replan_port(pr, pi);
	if (p->remote != FAB_NONE)
		replan_port(pr, p->remote);
}

/*
 * The first Set to a port whose PortInfo was inferred (sweep.c) answers
 * with what the port really is.  Returns 1 if o was handled here.
 */
static int confirm_inferred(struct program *pr, struct op *o, int st,
			    const uint8_t *resp)
{
	uint32_t pi = pr->f->nodes[o->node].first_port + o->port;
	struct fab_port *p = &pr->f->ports[pi];
	if (o->kind != OP_PORTINFO || !(p->flags & FPORT_INFERRED))
		return 0;
	if (st) {	/* it did not fit: read the port, then set it again */
		o->verify = o->relearn = 1;
		submit(pr, o);
		return 1;
	}
	const uint8_t *data = resp + SMP_DATA_OFFS;
	p->flags &= (uint8_t)~FPORT_INFERRED;
	record_success(pr, o);
	if (smp_pi_get(data, IB_PORT_MTU_CAP_F) != p->mtu_cap ||
	    smp_pi_get(data, IB_PORT_VL_CAP_F) != p->vl_cap)
		relearn_port(pr, pi, data);
	free(o);
	return 1;
}

static void verify_answer(struct program *pr, struct op *o, int st,
			  const uint8_t *resp)
{
	if (st) {
		record_failure(pr, o, "invalid PortState transition");
		return;
	}
	unsigned now = smp_pi_get(resp + SMP_DATA_OFFS, IB_PORT_STATE_F);
	if (now >= o->state && now <= PORT_ACTIVE) {
		record_success(pr, o);
		return;
	}
	char why[64];
	snprintf(why, sizeof(why), "PortState %u refused; the port is in state %u",
		 o->state, now);
	record_failure(pr, o, why);
}

static void on_answer(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct op *o = arg;
	struct program *pr = o->pr;
	pr->outstanding--;
	if (status == TXN_CANCELLED) {
		/* shutting down: no more writes, no second phase */
		pr->cancelled = 1;
		pr->st.cancelled = 1;
		free(o);
		if (!pr->outstanding)
			pr->done(pr->done_arg, &pr->st);
		return;
	}
	if (status != TXN_OK) {
		o->next = pr->retry;
		pr->retry = o;
		maybe_done(pr);
		return;
	}
	int st = smp_status(resp);
	if (o->relearn) {
		if (st) {
			record_failure(pr, o, "PortInfo cannot be read");
		} else {
			uint32_t pi = pr->f->nodes[o->node].first_port + o->port;
			relearn_port(pr, pi, resp + SMP_DATA_OFFS);
		}
		free(o);
		maybe_done(pr);
		return;
	}
	if (o->verify) {
		verify_answer(pr, o, st, resp);
		free(o);
		maybe_done(pr);
		return;
	}
	if (confirm_inferred(pr, o, st, resp)) {
		maybe_done(pr);
		return;
	}
	/*
	 * A state change refused as invalid may be our own retry of a Set
	 * whose answer was lost: the port is already there.  Look before
	 * calling it a failure.
	 */
	if (st == 0x1c && o->kind == OP_PORTINFO && o->state) {
		o->verify = 1;
		submit(pr, o);
		maybe_done(pr);
		return;
	}
	if (st) {
		char why[48];
		snprintf(why, sizeof(why), "MAD status 0x%04x", st);
		record_failure(pr, o, why);
	} else {
		record_success(pr, o);
	}
	free(o);
	maybe_done(pr);
}

static void submit(struct program *pr, struct op *o)
{
	static const uint16_t attrs[] = { IB_ATTR_PORT_INFO, IB_ATTR_SWITCH_INFO,
					  IB_ATTR_PKEY_TBL, IB_ATTR_LINEARFORWTBL };
	uint8_t mad[MAD_SIZE];
	struct mad_addr to;
	uint32_t mod = 0;
	if (o->kind == OP_PORTINFO)
		mod = o->port;
	else if (o->kind == OP_LFT)
		mod = o->block;
	else if (o->kind == OP_PKEY && pr->f->nodes[o->node].type == FAB_SWITCH)
		mod = (uint32_t)o->port << 16;
	smp_init_dr(mad, o->verify ? IB_MAD_METHOD_GET : IB_MAD_METHOD_SET,
		    attrs[o->kind], mod, o->path, o->hops);
	if (!o->verify)
		memcpy(smp_data(mad), o->data, 64);
	smp_dr_address(&to);
	pr->outstanding++;
	if (txn_submit(pr->txn, mad, sizeof(mad), &to, o->node, on_answer, o) < 0) {
		pr->outstanding--;
		record_failure(pr, o, "out of memory");
		free(o);
	}
}

struct program *program_start(struct txn_engine *txn,
			      struct discovery *d,
			      const struct lft_tables *t, struct devcache *c,
			      const struct program_params *p,
			      program_done_fn done, void *arg)
{
	struct program *pr = calloc(1, sizeof(*pr));
	if (!pr)
		return NULL;
	pr->txn = txn;
	pr->d = d;
	pr->f = &d->f;
	pr->t = t;
	pr->c = c;
	pr->p = *p;
	pr->done = done;
	pr->done_arg = arg;
	pr->phase = 1;
	pr->want_active = calloc((size_t)pr->f->n_ports + 1, 1);
	pr->port_failed = calloc((size_t)pr->f->n_ports + 1, 1);
	if (!pr->want_active || !pr->port_failed) {
		program_free(pr);
		return NULL;
	}
	feed(pr);
	maybe_done(pr);
	return pr;
}

void program_set_tables(struct program *pr, const struct lft_tables *t)
{
	pr->t = t;
	pr->unrouted = t == NULL;
	if (pr->cancelled)
		return;
	feed(pr);
	maybe_done(pr);
}

void program_free(struct program *pr)
{
	if (!pr)
		return;
	while (pr->retry) {
		struct op *o = pr->retry;
		pr->retry = o->next;
		free(o);
	}
	free(pr->want_active);
	free(pr->port_failed);
	free(pr);
}
