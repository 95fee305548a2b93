#include "sm/discover/adopt.h"

#include <infiniband/mad.h>
#include <stdlib.h>
#include <string.h>

#include "mad/smp.h"
#include "sm/base/log.h"
#include "sm/model/part_resolve.h"
#include "sm/write/plan.h"
#include "sm/write/plan_sweep.h"

struct adopt_q {
	struct adopt *a;
	uint32_t node;
	uint32_t port;		/* PKEY: the port index; LFT: FAB_NONE */
	uint32_t block;
};

struct adopt {
	const struct discovery *d;
	struct devcache *c;
	struct lft_tables t;
	struct adopt_q *q;	/* one per read asked for */
	uint32_t n_q;
	uint32_t pending;
	int done_called;
	struct adopt_stats st;
	adopt_fn done;
	void *arg;
};

static void finish(struct adopt *a, int rc)
{
	struct lft_tables t = a->t;
	memset(&a->t, 0, sizeof(a->t));
	if (rc < 0)
		lft_tables_free(&t);
	a->done_called = 1;
	a->done(a->arg, rc, &t, &a->st);
}

static void take_lft_block(struct adopt *a, const struct adopt_q *q,
			   const uint8_t *data)
{
	const struct fabric *f = &a->d->f;
	const struct fab_node *n = &f->nodes[q->node];
	uint8_t *row = lft_row(&a->t, a->t.row_of_node[q->node]);
	uint32_t lid0 = q->block * FAB_LFT_BLOCK;
	for (uint32_t k = 0; k < FAB_LFT_BLOCK; k++) {
		uint32_t lid = lid0 + k;
		if (lid <= a->t.max_lid && lid <= n->lft_top)
			row[lid] = data[k];
	}
	a->st.blocks++;
	devcache_note_read(a->c, f, PLAN_LFT, q->node, 0, q->block, data);
}

static void on_read(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct adopt_q *q = arg;
	struct adopt *a = q->a;
	if (status == TXN_CANCELLED) {
		if (--a->pending == 0 && !a->done_called)
			finish(a, -1);
		return;
	}
	if (status != TXN_OK || len < SMP_DATA_OFFS + SMP_DATA_SIZE || smp_status(resp)) {
		a->st.failed++;
	} else if (q->port == FAB_NONE) {
		take_lft_block(a, q, resp + SMP_DATA_OFFS);
	} else {
		const struct fab_port *p = &a->d->f.ports[q->port];
		a->st.pkeys++;
		devcache_note_read(a->c, &a->d->f, PLAN_PKEY, q->node, p->num,
				   q->block, resp + SMP_DATA_OFFS);
	}
	if (--a->pending == 0)
		finish(a, 0);
}

static uint32_t blocks_of(const struct fabric *f, const struct fab_node *n)
{
	if (n->type != FAB_SWITCH || !n->lft_top)
		return 0;
	uint32_t top = n->lft_top < f->max_lid ? n->lft_top : f->max_lid;
	return top / FAB_LFT_BLOCK + 1;
}

/*
 * A port configured before (it holds a LID): its P_Key table is worth
 * reading; so is that of a configured switch's port facing an end port
 * when the switch enforces partitions (the sweep writes the end port's
 * table there).
 */
static int pkey_to_read(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	const struct fab_node *n = &f->nodes[p->node];
	if (fabric_is_endport(f, pi))
		return p->hw_lid != 0;
	return n->type == FAB_SWITCH && n->partition_enf_cap &&
	       f->ports[n->first_port].hw_lid != 0 && fabric_port_linked(f, pi) &&
	       fabric_is_endport(f, p->remote);
}

/* The P_Key blocks of pi the sweep will want (at least block 0). */
static uint32_t pkey_blocks(const struct fabric *f, uint32_t pi,
			    const struct part_model *parts)
{
	uint16_t want[CFG_MAX_PARTS + 1];
	if (!parts)
		return 1;
	unsigned nw = part_pkeys(parts, f, pi, want, CFG_MAX_PARTS + 1);
	unsigned cap = plan_pkey_cap(f, pi);
	if (nw > cap)
		nw = cap;
	uint32_t nb = (nw + PLAN_PKEY_BLOCK - 1) / PLAN_PKEY_BLOCK;
	return nb ? nb : 1;
}

static void ask(struct adopt *a, struct txn_engine *txn, uint32_t node,
		uint32_t port, uint32_t block, uint16_t attr,
		const uint8_t *path, int hops)
{
	struct adopt_q *q = &a->q[a->n_q++];
	q->a = a;
	q->node = node;
	q->port = port;
	q->block = block;
	uint8_t mad[MAD_SIZE];
	struct mad_addr to;
	smp_init_dr(mad, IB_MAD_METHOD_GET, attr, block, path, hops);
	smp_dr_address(&to);
	if (hops >= 0 && txn_submit(txn, mad, sizeof(mad), &to, node, on_read, q) == 0)
		a->pending++;
	else
		a->st.failed++;
}

/* What the sweep read is what the devices hold: PortInfo into the cache. */
static void take_portinfo(struct adopt *a)
{
	const struct fabric *f = &a->d->f;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (!(p->flags & FPORT_PRESENT) || (p->flags & FPORT_INFERRED))
			continue;
		devcache_note_read(a->c, f, PLAN_PORTINFO, p->node, p->num, p->num,
				   a->d->pi_raw[pi]);
		a->st.portinfos++;
	}
}

struct adopt *adopt_start(struct txn_engine *txn, const struct discovery *d,
			  struct devcache *c, const struct part_model *parts,
			  adopt_fn done, void *arg)
{
	const struct fabric *f = &d->f;
	struct adopt *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->d = d;
	a->c = c;
	a->done = done;
	a->arg = arg;
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++)
		n += blocks_of(f, &f->nodes[i]);
	for (uint32_t pi = 0; pi < f->n_ports; pi++)
		if (pkey_to_read(f, pi))
			n += pkey_blocks(f, pi, parts);
	if (lft_tables_alloc(&a->t, f) < 0 || (n && !(a->q = calloc(n, sizeof(*a->q))))) {
		lft_tables_free(&a->t);
		free(a);
		return NULL;
	}
	take_portinfo(a);
	a->pending = 1;	/* held until every query is queued */
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		uint32_t nb = blocks_of(f, nd);
		if (nb)
			a->st.switches++;
		for (uint32_t b = 0; b < nb; b++)
			ask(a, txn, i, FAB_NONE, b, IB_ATTR_LINEARFORWTBL, nd->dr_path,
			    nd->dr_len);
	}
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		if (!pkey_to_read(f, pi))
			continue;
		uint8_t path[FAB_MAX_HOPS + 1];
		int hops = discovery_port_path(f, pi, path);
		/* the blocks wanted; on a switch the modifier names the port too */
		uint32_t mod = f->nodes[f->ports[pi].node].type == FAB_SWITCH ?
			       (uint32_t)f->ports[pi].num << 16 : 0;
		for (uint32_t b = 0, nb = pkey_blocks(f, pi, parts); b < nb; b++)
			ask(a, txn, f->ports[pi].node, pi, mod | b, IB_ATTR_PKEY_TBL,
			    path, hops);
	}
	if (--a->pending == 0)
		finish(a, 0);
	return a;
}

void adopt_free(struct adopt *a)
{
	if (!a)
		return;
	lft_tables_free(&a->t);
	free(a->q);
	free(a);
}
