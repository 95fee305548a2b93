/*
 * The SA's records of the tables the SM writes to the devices (sa.h):
 * PKeyTableRecord, SLtoVLMappingTableRecord, VLArbitrationTableRecord,
 * MulticastForwardingTableRecord (IBA vol. 1 §15.2.5.11, .4, .9, .7).
 * Each table comes from the device cache (sm/write/devcache.h): what the
 * SM's writes set or its reads found, per (node, port, modifier).  A
 * table it holds nothing of is answered all zero, as OpenSM answers one
 * it never set (its QoS off, say).
 *
 * Layouts (sizes and component masks as OpenSM's ib_types.h):
 *   PKeyTableRecord   72  LID, BlockNum(16), PortNum, reserved(24), 32 P_Keys
 *   SL2VLTableRecord  16  LID, InputPortNum, OutputPortNum, reserved(32), table(8)
 *   VLArbTableRecord  72  LID, OutputPortNum, BlockNum, reserved(32), 32 entries
 *   MFTRecord         72  LID, Position(4), reserved(3), BlockNum(9), reserved(32),
 *                         32 port masks
 * Which records (OpenSM's walk): every end port (a CA's port, a switch's
 * port 0) with a LID, or the one whose LMC range holds the LID asked
 * for; a switch's every port (P_Key, VLArb) or (input, output) pair
 * (SL2VL), a CA's own port; VLArb blocks 1-4; every P_Key block of the
 * port's PartitionCap (a switch's external port: its
 * PartitionEnforcementCap), one the SM neither wrote nor read as a port
 * holds it after a reset (0xFFFF in entry 0; OpenSM answers what it
 * read); MFT blocks up to the last holding a port, each position of the
 * switch's ports.  A port the requester shares no
 * partition with is left out (sa_share()), a switch's external port by
 * the end port it faces.  P_KeyTableRecords go only to a trusted
 * requester (C15-0.1.18: its SM_Key is sa.sa_key), else REQ_INVALID.
 */
#include <infiniband/mad.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sa.h"
#include "mad/smp.h"
#include "sm/sa/sa_server.h"
#include "sm/write/devcache.h"

#define PKR_SIZE	72
#define SLVLR_SIZE	16
#define VLAR_SIZE	72
#define MFTR_SIZE	72

#define SLVL_TABLE_BYTES	8
#define PKEY_BLOCK_ENTRIES	32
#define PKEY_DEFAULT		0xffff	/* entry 0 of every port after a reset */
#define VLARB_BLOCKS		4	/* low 0-31, low 32-63, high 0-31, high 32-63 */
#define MFT_BLOCK_ENTRIES	32
#define MFT_POSITION_PORTS	16
#define MFT_BLOCKS_MAX		512	/* BlockNum is 9 bits */

static const struct sa_field pkr_fields[] = {
	{ 0, 16 }, { 16, 16 }, { 32, 8 }, { 40, 24 }, { 64, 512 },
};
static const struct sa_field slvlr_fields[] = {
	{ 0, 16 }, { 16, 8 }, { 24, 8 }, { 32, 32 }, { 64, 64 },
};
static const struct sa_field vlar_fields[] = {
	{ 0, 16 }, { 16, 8 }, { 24, 8 }, { 32, 32 }, { 64, 512 },
};
static const struct sa_field mftr_fields[] = {
	{ 0, 16 }, { 16, 4 }, { 20, 3 }, { 23, 9 }, { 32, 32 }, { 64, 512 },
};

/* The component mask bits the walks narrow by (the rest: sa_match). */
#define CM_LID		(1ull << 0)
#define PKR_CM_BLOCK	(1ull << 1)
#define PKR_CM_PORT	(1ull << 2)
#define SLVL_CM_IN	(1ull << 1)
#define SLVL_CM_OUT	(1ull << 2)
#define VLA_CM_PORT	(1ull << 1)
#define VLA_CM_BLOCK	(1ull << 2)
#define MFT_CM_POSITION	(1ull << 1)
#define MFT_CM_BLOCK	(1ull << 3)

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* What the walk of one family carries from port to port. */
struct walk {
	struct sa_query *q;
	const struct sa_view *v;
	uint32_t rq;		/* the requester's port */
	int st;
};

/* The cache's 64 bytes of node's attr at (port, mod), or NULL. */
static const uint8_t *held(const struct sa_view *v, uint32_t node, uint8_t port,
			   uint16_t attr, uint32_t mod)
{
	return v->cache ? devcache_attr(v->cache, v->f, node, port, attr, mod) : NULL;
}

/* rec is kept when it matches every selected field but the LID. */
static void keep(struct walk *w, const uint8_t *rec, const struct sa_field *fields,
		 unsigned n)
{
	if (!w->st && sa_match_rest(w->q, rec, fields, n) &&
	    sa_answer_add(w->q, rec) < 0)
		w->st = SA_STS_NO_RESOURCES;
}

/* Is port k of node ni there (a switch's port 0, a port that answered)? */
static uint32_t port_there(const struct fabric *f, uint32_t ni, unsigned k)
{
	const struct fab_node *n = &f->nodes[ni];
	if (k > n->nports)
		return FAB_NONE;
	uint32_t pi = n->first_port + k;
	if (k && !(f->ports[pi].flags & FPORT_PRESENT))
		return FAB_NONE;
	if (!k && n->type != FAB_SWITCH)
		return FAB_NONE;
	return pi;
}

/*
 * Calls fn for every end port with a LID the request may be about (the
 * LID asked for in its range), in port order; stops on a status or when
 * a Get has enough.
 */
static int each_endport(struct sa_query *q, unsigned n_fields,
			void (*fn)(struct walk *w, uint32_t ep))
{
	struct walk w = { .q = q, .v = q->view, .rq = sa_requester(q) };
	const struct fabric *f = w.v->f;
	w.st = sa_mask_check(q, n_fields);
	for (uint32_t pi = 0; !w.st && pi < f->n_ports && !sa_enough(q); pi++)
		if (fabric_is_endport(f, pi) && f->ports[pi].lid && sa_lid_ok(q, f, pi))
			fn(&w, pi);
	return w.st;
}

static int is_switch(const struct fabric *f, uint32_t pi)
{
	return f->nodes[f->ports[pi].node].type == FAB_SWITCH;
}

/* ---- PKeyTableRecord ---- */

/* The P_Key blocks the port's table has: PartitionCap (a switch's
 * external port: PartitionEnforcementCap) entries, at least one block. */
static uint32_t pkey_cap_blocks(const struct fabric *f, uint32_t pi)
{
	const struct fab_node *n = &f->nodes[f->ports[pi].node];
	uint32_t cap = n->type == FAB_SWITCH && f->ports[pi].num ?
		       n->partition_enf_cap : n->partition_cap;
	cap = (cap + PKEY_BLOCK_ENTRIES - 1) / PKEY_BLOCK_ENTRIES;
	return cap ? cap : 1;
}

static uint32_t pkey_mod(const struct fabric *f, uint32_t pi, uint32_t block)
{
	return is_switch(f, pi) ? (uint32_t)f->ports[pi].num << 16 | block : block;
}

static void pkey_port(struct walk *w, uint32_t ep, uint32_t pi)
{
	const struct fabric *f = w->v->f;
	const struct fab_port *p = &f->ports[pi];
	uint32_t lo = 0, hi, cap = pkey_cap_blocks(f, pi);
	if (!sa_share(w->v, w->rq, pi))
		return;
	if (w->q->comp_mask & PKR_CM_BLOCK) {
		lo = hi = sa_get16(w->q->rec + 2);
		if (lo >= cap)
			return;		/* past the port's table */
	} else {
		hi = cap - 1;		/* the whole table */
	}
	for (uint32_t b = lo; b <= hi && !w->st && !sa_enough(w->q); b++) {
		uint8_t r[PKR_SIZE];
		const uint8_t *t = held(w->v, p->node, p->num, IB_ATTR_PKEY_TBL,
					pkey_mod(f, pi, b));
		memset(r, 0, sizeof(r));
		sa_put16(r, (uint16_t)f->ports[ep].lid);
		sa_put16(r + 2, (uint16_t)b);
		r[4] = p->num;
		if (t)
			memcpy(r + 8, t, SMP_DATA_SIZE);
		else if (!b)
			sa_put16(r + 8, PKEY_DEFAULT);	/* as after a reset */
		keep(w, r, pkr_fields, N(pkr_fields));
	}
}

static void pkey_endport(struct walk *w, uint32_t ep)
{
	const struct fabric *f = w->v->f;
	const struct fab_node *n = &f->nodes[f->ports[ep].node];
	if (!is_switch(f, ep)) {	/* a CA: its own port, whatever port was asked */
		uint64_t cm = w->q->comp_mask;
		w->q->comp_mask &= ~(uint64_t)PKR_CM_PORT;
		pkey_port(w, ep, ep);
		w->q->comp_mask = cm;
		return;
	}
	for (unsigned k = 0; k <= n->nports && !w->st; k++) {
		uint32_t pi = port_there(f, f->ports[ep].node, k);
		if (pi != FAB_NONE && (!(w->q->comp_mask & PKR_CM_PORT) || w->q->rec[4] == k))
			pkey_port(w, ep, pi);
	}
}

int sa_pkey_records(struct sa_query *q)
{
	if (!sa_trusted(q))
		return sa_untrusted(q);
	return each_endport(q, N(pkr_fields), pkey_endport);
}

/* ---- SLtoVLMappingTableRecord ---- */

static void sl2vl_rec(struct walk *w, uint32_t ep, uint32_t out_pi,
		      unsigned in, unsigned out, uint32_t mod)
{
	const struct fabric *f = w->v->f;
	const struct fab_port *p = &f->ports[out_pi];
	uint8_t r[SLVLR_SIZE];
	const uint8_t *t = held(w->v, p->node, is_switch(f, out_pi) ? 0 : p->num,
				IB_ATTR_SLVL_TABLE, mod);
	memset(r, 0, sizeof(r));
	sa_put16(r, (uint16_t)f->ports[ep].lid);
	r[2] = (uint8_t)in;
	r[3] = (uint8_t)out;
	if (t)
		memcpy(r + 8, t, SLVL_TABLE_BYTES);
	keep(w, r, slvlr_fields, N(slvlr_fields));
}

static void sl2vl_endport(struct walk *w, uint32_t ep)
{
	const struct fabric *f = w->v->f;
	uint32_t ni = f->ports[ep].node;
	const struct fab_node *n = &f->nodes[ni];
	const struct sa_query *q = w->q;
	if (!is_switch(f, ep)) {	/* a CA port: in and out 0 */
		if (sa_share(w->v, w->rq, ep))
			sl2vl_rec(w, ep, ep, 0, 0, 0);
		return;
	}
	unsigned out_lo = 0, out_hi = n->nports, in_lo = 0, in_hi = n->nports;
	if (q->comp_mask & SLVL_CM_OUT)
		out_lo = out_hi = q->rec[3];
	if (q->comp_mask & SLVL_CM_IN)
		in_lo = in_hi = q->rec[2];
	for (unsigned out = out_lo; out <= out_hi && !w->st && !sa_enough(q); out++) {
		uint32_t opi = port_there(f, ni, out);
		if (opi == FAB_NONE || !sa_share(w->v, w->rq, opi))
			continue;
		for (unsigned in = in_lo; in <= in_hi && !w->st && !sa_enough(q); in++)
			if (port_there(f, ni, in) != FAB_NONE)
				sl2vl_rec(w, ep, opi, in, out, in << 8 | out);
	}
}

int sa_sl2vl_records(struct sa_query *q)
{
	return each_endport(q, N(slvlr_fields), sl2vl_endport);
}

/* ---- VLArbitrationTableRecord ---- */

static void vlarb_port(struct walk *w, uint32_t ep, uint32_t pi)
{
	const struct fabric *f = w->v->f;
	const struct fab_port *p = &f->ports[pi];
	if (!sa_share(w->v, w->rq, pi))
		return;
	for (unsigned b = 1; b <= VLARB_BLOCKS && !w->st && !sa_enough(w->q); b++) {
		if ((w->q->comp_mask & VLA_CM_BLOCK) && w->q->rec[3] != b)
			continue;
		uint8_t r[VLAR_SIZE];
		const uint8_t *t = held(w->v, p->node, p->num, IB_ATTR_VL_ARBITRATION,
					b << 16 | p->num);
		memset(r, 0, sizeof(r));
		sa_put16(r, (uint16_t)f->ports[ep].lid);
		r[2] = p->num;
		r[3] = (uint8_t)b;
		if (t)
			memcpy(r + 8, t, SMP_DATA_SIZE);
		keep(w, r, vlar_fields, N(vlar_fields));
	}
}

static void vlarb_endport(struct walk *w, uint32_t ep)
{
	const struct fabric *f = w->v->f;
	const struct fab_node *n = &f->nodes[f->ports[ep].node];
	if (!is_switch(f, ep)) {	/* a CA: its own port, whatever port was asked */
		uint64_t cm = w->q->comp_mask;
		w->q->comp_mask &= ~(uint64_t)VLA_CM_PORT;
		vlarb_port(w, ep, ep);
		w->q->comp_mask = cm;
		return;
	}
	for (unsigned k = 0; k <= n->nports && !w->st; k++) {
		uint32_t pi = port_there(f, f->ports[ep].node, k);
		if (pi != FAB_NONE && (!(w->q->comp_mask & VLA_CM_PORT) || w->q->rec[2] == k))
			vlarb_port(w, ep, pi);
	}
}

int sa_vlarb_records(struct sa_query *q)
{
	return each_endport(q, N(vlar_fields), vlarb_endport);
}

/* ---- MulticastForwardingTableRecord ---- */

static uint32_t mft_mod(unsigned position, uint32_t block)
{
	return (uint32_t)position << 28 | block;
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/*
 * 1 + the last block of node ni holding a port at any position (0:
 * none): per position, the cache's blocks from the highest down, past
 * those left all zero (a group gone).
 */
static uint32_t mft_blocks_used(const struct sa_view *v, uint32_t ni)
{
	const struct fab_node *n = &v->f->nodes[ni];
	uint32_t blocks = (n->mft_cap + MFT_BLOCK_ENTRIES - 1) / MFT_BLOCK_ENTRIES, used = 0;
	if (blocks > MFT_BLOCKS_MAX)
		blocks = MFT_BLOCKS_MAX;
	for (unsigned pos = 0; v->cache && pos <= n->nports / MFT_POSITION_PORTS; pos++) {
		uint32_t below = mft_mod(pos, blocks), mod;
		const uint8_t *t;
		while ((t = devcache_attr_below(v->cache, v->f, ni, 0, IB_ATTR_MULTICASTFORWTBL,
						mft_mod(pos, used), below, &mod))) {
			if (!all_zero(t, SMP_DATA_SIZE)) {
				used = (mod & 0x1ff) + 1;
				break;
			}
			below = mod;
		}
	}
	return used;
}

static void mft_switch(struct walk *w, uint32_t ep)
{
	const struct fabric *f = w->v->f;
	const struct sa_query *q = w->q;
	uint32_t ni = f->ports[ep].node;
	const struct fab_node *n = &f->nodes[ni];
	if (!is_switch(f, ep) || !n->mft_cap || !sa_share(w->v, w->rq, ep))
		return;
	uint32_t used = mft_blocks_used(w->v, ni), b_lo = 0, b_hi;
	unsigned pos_lo = 0, pos_hi = n->nports / MFT_POSITION_PORTS;
	uint16_t pb = sa_get16(q->rec + 2);
	if (!used)
		return;			/* no group crosses it */
	b_hi = used - 1;
	if (q->comp_mask & MFT_CM_BLOCK) {
		b_lo = b_hi = pb & 0x1ff;
		if (b_lo >= used)
			return;
	}
	if (q->comp_mask & MFT_CM_POSITION) {
		pos_lo = pb >> 12;
		if (pos_lo > pos_hi)
			return;
		pos_hi = pos_lo;
	}
	for (uint32_t b = b_lo; b <= b_hi && !w->st && !sa_enough(q); b++)
		for (unsigned pos = pos_lo; pos <= pos_hi && !w->st && !sa_enough(q); pos++) {
			uint8_t r[MFTR_SIZE];
			const uint8_t *t = held(w->v, ni, 0, IB_ATTR_MULTICASTFORWTBL,
						mft_mod(pos, b));
			memset(r, 0, sizeof(r));
			sa_put16(r, (uint16_t)f->ports[ep].lid);
			sa_put16(r + 2, (uint16_t)(pos << 12 | b));
			if (t)
				memcpy(r + 8, t, SMP_DATA_SIZE);
			keep(w, r, mftr_fields, N(mftr_fields));
		}
}

struct sw_key {
	uint64_t guid;
	uint32_t p0;
};

static int by_guid(const void *a, const void *b)
{
	const struct sw_key *x = a, *y = b;
	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

/* The switches in node GUID order, as OpenSM walks them. */
int sa_mft_records(struct sa_query *q)
{
	struct walk w = { .q = q, .v = q->view, .rq = sa_requester(q) };
	const struct fabric *f = w.v->f;
	struct sw_key *sw = malloc(((size_t)f->n_nodes + 1) * sizeof(*sw));
	uint32_t n = 0;
	if (!sw)
		return SA_STS_NO_RESOURCES;
	w.st = sa_mask_check(q, N(mftr_fields));
	for (uint32_t ni = 0; ni < f->n_nodes; ni++) {
		uint32_t p0 = f->nodes[ni].first_port;
		if (f->nodes[ni].type == FAB_SWITCH && f->ports[p0].lid && sa_lid_ok(q, f, p0))
			sw[n++] = (struct sw_key){ .guid = f->nodes[ni].guid, .p0 = p0 };
	}
	qsort(sw, n, sizeof(*sw), by_guid);
	for (uint32_t i = 0; i < n && !w.st && !sa_enough(q); i++)
		mft_switch(&w, sw[i].p0);
	free(sw);
	return w.st;
}
