/*
 * Partition isolation verification: Parts(link) from the LFTs.  See
 * pverify.h.
 */
#include <stdlib.h>
#include <string.h>

#include "routing/graph.h"
#include "routing/verify/pverify.h"

struct pctx {
	const struct fabric *f;
	const struct lft_tables *t;
	const struct part_model *m;
	uint32_t np;		/* partitions */
	uint16_t *vls;		/* [port * np + p]: VL mask of p on that link */
	uint64_t *load;		/* [port]: routes */
	uint8_t *dmem;		/* [p]: the destination's membership, 0/1/2 */
	uint16_t *common;	/* the pair's tenant partitions */
	uint8_t *sl;		/* [p]: its SL */
};

/* A CA/router port cabled to a switch by a usable link. */
static int ca_source(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	return p->num != 0 && f->nodes[p->node].type != FAB_SWITCH &&
	       fabric_is_endport(f, pi) && graph_link_up(f, pi) &&
	       graph_peer_is_switch(f, pi);
}

/* The VL of SL sl out of node's port out, entered at port in. */
static unsigned hop_vl(const struct lft_tables *t, uint32_t node,
		       unsigned in, unsigned out, unsigned sl)
{
	const uint8_t *tab = lft_sl2vl(t, node, in, out);
	return (tab ? tab[sl] : sl) & 15;
}

/*
 * Follows s to d's base LID, adding the route to every switch-to-switch
 * link and the nc partitions in c->common on their VLs.  0, or -1 when
 * t does not deliver it.
 */
static int walk(struct pctx *c, uint32_t s, uint32_t d, uint32_t nc)
{
	const struct fabric *f = c->f;
	const struct lft_tables *t = c->t;
	uint32_t lid = f->ports[d].lid;
	uint32_t in = f->ports[s].remote;
	for (uint32_t hops = 0; hops <= t->n_sw; hops++) {
		uint32_t pi = graph_next_hop(f, t, in, lid);
		if (pi == FAB_NONE)
			return -1;
		if (!graph_peer_is_switch(f, pi))
			return f->ports[pi].remote == d ? 0 : -1;
		uint32_t node = f->ports[in].node;
		unsigned out = f->ports[pi].num;
		c->load[pi]++;
		for (uint32_t k = 0; k < nc; k++) {
			uint16_t p = c->common[k];
			unsigned vl = hop_vl(t, node, f->ports[in].num, out, c->sl[p]);
			c->vls[(size_t)pi * c->np + p] |= (uint16_t)(1u << vl);
		}
		in = f->ports[pi].remote;
	}
	return -1;
}

static void flows(struct pctx *c, struct pverify_report *r)
{
	const struct fabric *f = c->f;
	uint32_t np = f->n_ports < c->m->n_ports ? f->n_ports : c->m->n_ports;
	for (uint32_t d = 0; d < np; d++) {
		if (!ca_source(f, d))
			continue;
		part_dest_mark(c->m, d, c->dmem, c->np, 1);
		for (uint32_t s = 0; s < np; s++) {
			int any;
			if (s == d || !ca_source(f, s))
				continue;
			uint32_t nc = part_flow_parts(c->m, s, c->dmem, c->np,
						      c->common, &any);
			if (!any)
				continue;
			r->pairs++;
			if (walk(c, s, d, nc) < 0)
				r->undelivered++;
		}
		part_dest_mark(c->m, d, c->dmem, c->np, 0);
	}
}

/* Per link: shared links, per partition figures, the share matrix. */
static void tally(struct pctx *c, struct pverify_report *r)
{
	const struct fabric *f = c->f;
	uint32_t np = c->np;
	int first = 1;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		if (!graph_sw_link(f, pi))
			continue;
		r->links++;
		if (first || c->load[pi] > r->max_routes)
			r->max_routes = c->load[pi];
		if (first || c->load[pi] < r->min_routes)
			r->min_routes = c->load[pi];
		first = 0;
		const uint16_t *v = c->vls + (size_t)pi * np;
		uint32_t users = 0;
		for (uint32_t p = 1; p < np; p++)
			users += v[p] != 0;
		if (users >= 2)
			r->shared_links++;
		for (uint32_t p = 1; p < np; p++) {
			if (!v[p])
				continue;
			struct pverify_part *pp = &r->part[p];
			int on_vl = 0;
			pp->links++;
			pp->vls |= v[p];
			for (uint32_t q = 1; q < np; q++) {
				if (q == p || !v[q])
					continue;
				r->share[(size_t)p * np + q] = 1;
				on_vl |= (v[p] & v[q]) != 0;
			}
			pp->shared += users >= 2;
			pp->vl_shared += on_vl;
		}
	}
}

static void verdicts(const struct part_model *m, struct pverify_report *r)
{
	for (uint32_t p = 1; p < r->n_parts; p++) {
		struct pverify_part *pp = &r->part[p];
		if (m->parts[p].policy == PART_PHY)
			pp->violated = pp->shared != 0;
		else if (m->parts[p].policy == PART_VLANE)
			pp->violated = pp->vl_shared != 0;
		r->violations += pp->violated != 0;
	}
	r->errors = r->strict ? r->violations : 0;
}

void pverify_free(struct pverify_report *r)
{
	free(r->part);
	free(r->share);
	memset(r, 0, sizeof(*r));
}

int pverify(const struct fabric *f, const struct lft_tables *t,
	    const struct part_model *m, struct pverify_report *r)
{
	uint32_t np = m->n_parts ? m->n_parts : 1;
	struct pctx c = { .f = f, .t = t, .m = m, .np = np };
	int rc = -1;

	memset(r, 0, sizeof(*r));
	r->n_parts = np;
	r->tenants = np - 1;
	r->strict = m->strict;
	r->part = calloc(np, sizeof(*r->part));
	r->share = calloc((size_t)np * np, 1);
	c.vls = calloc((size_t)f->n_ports * np + 1, sizeof(*c.vls));
	c.load = calloc((size_t)f->n_ports + 1, sizeof(*c.load));
	c.dmem = calloc(np, 1);
	c.common = calloc(np, sizeof(*c.common));
	c.sl = calloc(np, 1);
	if (!r->part || !r->share || !c.vls || !c.load || !c.dmem ||
	    !c.common || !c.sl)
		goto out;
	for (uint32_t p = 0; p < np; p++) {
		if (t->part_sl && p < t->n_part_sl)
			c.sl[p] = t->part_sl[p] & 15;
		r->part[p].sl = c.sl[p];
	}
	if (m->n_parts && m->mem_off)
		flows(&c, r);
	tally(&c, r);
	verdicts(m, r);
	rc = 0;
out:
	if (rc < 0)
		pverify_free(r);
	free(c.vls);
	free(c.load);
	free(c.dmem);
	free(c.common);
	free(c.sl);
	return rc;
}
