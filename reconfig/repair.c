#include "reconfig/repair.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* LIDs are taken in blocks, so that rows are read 64 entries at a time. */
#define BLOCK 64

enum { UNKNOWN = 0, VISITING, INTACT, BROKEN };

#define HOP_DONE (FAB_NONE - 1)	/* reached the destination port */
#define HOP_FAIL FAB_NONE

struct ctx {
	const struct fabric *of, *nf;
	const struct lft_tables *ot;
	struct lft_tables *t;
	uint32_t *old_row;	/* new row -> old row, FAB_NONE */
	uint8_t *state;		/* n_sw * BLOCK */
	uint32_t *stack;	/* n_sw */
};

static int same_port(const struct fabric *a, uint32_t pa,
		     const struct fabric *b, uint32_t pb)
{
	return a->nodes[a->ports[pa].node].guid == b->nodes[b->ports[pb].node].guid &&
	       a->ports[pa].num == b->ports[pb].num;
}

static uint32_t count_links(const struct fabric *f)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->n_ports; i++)
		n += f->ports[i].remote != FAB_NONE;
	return n;
}

static uint32_t count_lids(const struct fabric *f)
{
	uint32_t n = 0;
	for (uint32_t d = 1; d <= f->max_lid; d++)
		n += f->lid_port[d] != FAB_NONE;
	return n;
}

enum repair_change repair_compare(const struct fabric *old_f,
				  const struct fabric *new_f,
				  char *why, size_t whylen)
{
	if (!old_f->lid_port || !new_f->lid_port) {
		snprintf(why, whylen, "no LIDs to compare");
		return REPAIR_GAIN;
	}
	for (uint32_t n = 0; n < new_f->n_nodes; n++) {
		const struct fab_node *nn = &new_f->nodes[n];
		uint32_t o = fabric_find_node(old_f, nn->guid);
		if (o == FAB_NONE || old_f->nodes[o].type != nn->type ||
		    old_f->nodes[o].nports != nn->nports) {
			snprintf(why, whylen, "node 0x%016llx is new",
				 (unsigned long long)nn->guid);
			return REPAIR_GAIN;
		}
		const struct fab_node *on = &old_f->nodes[o];
		for (int p = 0; p <= nn->nports; p++) {
			const struct fab_port *np = &new_f->ports[nn->first_port + p];
			const struct fab_port *op = &old_f->ports[on->first_port + p];
			if (np->remote == FAB_NONE)
				continue;
			if (op->remote == FAB_NONE ||
			    !same_port(old_f, op->remote, new_f, np->remote)) {
				snprintf(why, whylen, "link 0x%016llx[%d] is new",
					 (unsigned long long)nn->guid, p);
				return REPAIR_GAIN;
			}
		}
	}
	for (uint32_t d = 1; d <= new_f->max_lid; d++) {
		uint32_t np = new_f->lid_port[d];
		if (np == FAB_NONE)
			continue;
		uint32_t op = d <= old_f->max_lid ? old_f->lid_port[d] : FAB_NONE;
		if (op == FAB_NONE || !same_port(old_f, op, new_f, np)) {
			snprintf(why, whylen, "LID %u changed hands", d);
			return REPAIR_GAIN;
		}
	}
	/* nothing new; with as many of each, nothing lost either */
	if (old_f->n_nodes == new_f->n_nodes &&
	    count_links(old_f) == count_links(new_f) &&
	    count_lids(old_f) == count_lids(new_f))
		return REPAIR_SAME;
	return REPAIR_LOSS;
}

/* The old table's row of the switch of t's row r (by GUID), or FAB_NONE. */
static uint32_t old_row_of(const struct fabric *old_f, const struct lft_tables *old_t,
			   const struct fabric *new_f, const struct lft_tables *t,
			   uint32_t r)
{
	uint32_t o = fabric_find_node(old_f, new_f->nodes[t->sw_node[r]].guid);
	return o == FAB_NONE ? FAB_NONE : old_t->row_of_node[o];
}

int repair_keep(const struct fabric *old_f, const struct lft_tables *old_t,
		const struct fabric *new_f, struct lft_tables *t)
{
	if (lft_tables_alloc(t, new_f) < 0)
		return -1;
	uint32_t n = (t->max_lid < old_t->max_lid ? t->max_lid : old_t->max_lid) + 1;
	for (uint32_t r = 0; r < t->n_sw; r++) {
		uint32_t orow = old_row_of(old_f, old_t, new_f, t, r);
		if (orow != FAB_NONE)
			memcpy(lft_row(t, r), lft_row(old_t, orow), n);
	}
	return 0;
}

/*
 * Where the old entry of row r for LID d leads in the new fabric: the
 * next switch's row, HOP_DONE at the destination, HOP_FAIL where the path
 * is cut (no old row, a dropped entry, a port without a link).
 */
static uint32_t old_hop(const struct ctx *c, uint32_t r, uint32_t d,
			uint32_t tnode, uint32_t tport)
{
	const struct fabric *f = c->nf;
	uint32_t orow = c->old_row[r];
	if (orow == FAB_NONE)
		return HOP_FAIL;
	uint8_t p = lft_row(c->ot, orow)[d];
	uint32_t n = c->t->sw_node[r];
	const struct fab_node *nd = &f->nodes[n];
	if (n == tnode)
		return p == 0 ? HOP_DONE : HOP_FAIL;
	if (p == 0 || p > nd->nports)
		return HOP_FAIL;
	const struct fab_port *pp = &f->ports[nd->first_port + p];
	if (!(pp->flags & FPORT_PRESENT) || pp->phys_state != PHYS_LINKUP ||
	    pp->remote == FAB_NONE)
		return HOP_FAIL;
	if (pp->remote == tport)
		return HOP_DONE;
	uint32_t m = f->ports[pp->remote].node;
	if (f->nodes[m].type != FAB_SWITCH)
		return HOP_FAIL;
	return c->t->row_of_node[m];
}

/* Is row r's old path to LID base+k intact?  Settles every row it passes. */
static uint8_t resolve(struct ctx *c, uint32_t r, uint32_t base, uint32_t k,
		       uint32_t tnode, uint32_t tport)
{
	uint32_t len = 0, cur = r;
	uint8_t result;
	for (;;) {
		uint8_t *s = &c->state[(size_t)cur * BLOCK + k];
		if (*s == INTACT || *s == BROKEN) {
			result = *s;
			break;
		}
		if (*s == VISITING) {	/* the old entries loop */
			result = BROKEN;
			break;
		}
		*s = VISITING;
		c->stack[len++] = cur;
		uint32_t next = old_hop(c, cur, base + k, tnode, tport);
		if (next == HOP_DONE || next == HOP_FAIL) {
			result = next == HOP_DONE ? INTACT : BROKEN;
			break;
		}
		cur = next;
	}
	while (len)
		c->state[(size_t)c->stack[--len] * BLOCK + k] = result;
	return result;
}

/* The LID's port in the new fabric if the old tables can be followed to it. */
static uint32_t followable(const struct ctx *c, uint32_t d)
{
	if (d > c->ot->max_lid || d > c->of->max_lid)
		return FAB_NONE;
	uint32_t np = c->nf->lid_port[d], op = c->of->lid_port[d];
	if (np == FAB_NONE || op == FAB_NONE || !same_port(c->of, op, c->nf, np))
		return FAB_NONE;
	return np;
}

static void repair_block(struct ctx *c, uint32_t base, struct repair_stats *st)
{
	const struct lft_tables *ot = c->ot;
	struct lft_tables *t = c->t;
	uint32_t top = base + BLOCK - 1 <= t->max_lid ? base + BLOCK - 1 : t->max_lid;
	memset(c->state, UNKNOWN, (size_t)t->n_sw * BLOCK);
	for (uint32_t d = base < 1 ? 1 : base; d <= top; d++) {
		uint32_t k = d - base, tport = followable(c, d);
		if (tport == FAB_NONE)
			continue;
		uint32_t tnode = c->nf->ports[tport].node;
		int lost = 0;
		st->columns++;
		for (uint32_t r = 0; r < t->n_sw; r++) {
			uint8_t *e = &lft_row(t, r)[d];
			uint32_t orow = c->old_row[r];
			if (orow == FAB_NONE || lft_row(ot, orow)[d] != *e)
				st->fresh_moved++;
			if (resolve(c, r, base, k, tnode, tport) == INTACT) {
				*e = lft_row(ot, orow)[d];
				st->kept++;
				continue;
			}
			lost = 1;
			st->fresh++;
			if (orow == FAB_NONE || lft_row(ot, orow)[d] != *e)
				st->moved++;
		}
		st->broken += (uint32_t)lost;
	}
}

int repair_routes(const struct fabric *old_f, const struct lft_tables *old_t,
		  const struct fabric *new_f, struct lft_tables *t,
		  struct repair_stats *st)
{
	struct ctx c = { .of = old_f, .nf = new_f, .ot = old_t, .t = t };
	memset(st, 0, sizeof(*st));
	if (!t->n_sw)
		return 0;
	c.old_row = malloc((size_t)t->n_sw * sizeof(*c.old_row));
	c.stack = malloc((size_t)t->n_sw * sizeof(*c.stack));
	c.state = malloc((size_t)t->n_sw * BLOCK);
	if (!c.old_row || !c.stack || !c.state) {
		free(c.old_row);
		free(c.stack);
		free(c.state);
		return -1;
	}
	for (uint32_t r = 0; r < t->n_sw; r++)
		c.old_row[r] = old_row_of(old_f, old_t, new_f, t, r);
	for (uint32_t base = 0; base <= t->max_lid; base += BLOCK)
		repair_block(&c, base, st);
	free(c.old_row);
	free(c.stack);
	free(c.state);
	return 0;
}
