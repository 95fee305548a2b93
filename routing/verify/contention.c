/*
 * Receiver contention and inter-partition interference from the LFTs.
 * See contention.h.
 */
#include <stdlib.h>
#include <string.h>

#include "routing/graph.h"
#include "routing/partition.h"
#include "routing/verify/contention.h"

struct cctx {
	const struct fabric *f;
	const struct lft_tables *t;
	const struct part_model *m;	/* NULL: no tenants, one partition */
	const uint8_t *recv;
	uint32_t np;
	uint32_t *rank;		/* per row */
	uint32_t *stamp;	/* per port: the last receiver (index + 1) */
	uint32_t *nrecv;	/* per port: receivers routed across */
	uint64_t *flows;	/* per port: flows across */
	uint16_t *part1;	/* per port: the first partition across */
	uint8_t *multi;		/* per port: another one crossed too */
	uint8_t *dmem;		/* [p]: the destination's membership, 0/1/2 */
	uint16_t *common;	/* the pair's tenant partitions */
	uint32_t *path;		/* a route's links (sending ports) */
	uint32_t n_ends;	/* ports that may be flow ends: f's, m's */
};

int contention_flow_end(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	return p->num != 0 && f->nodes[p->node].type != FAB_SWITCH &&
	       fabric_is_endport(f, pi) && p->lid && graph_link_up(f, pi) &&
	       graph_peer_is_switch(f, pi);
}

/*
 * The switch-to-switch links (sending ports) of the route from s to d's
 * base LID into c->path; their number, or -1 when t does not deliver it.
 */
static int route(struct cctx *c, uint32_t s, uint32_t d)
{
	const struct fabric *f = c->f;
	const struct lft_tables *t = c->t;
	uint32_t lid = f->ports[d].lid;
	uint32_t in = f->ports[s].remote;
	int n = 0;
	for (uint32_t hops = 0; hops <= t->n_sw; hops++) {
		uint32_t pi = graph_next_hop(f, t, in, lid);
		if (pi == FAB_NONE)
			return -1;
		if (!graph_peer_is_switch(f, pi))
			return f->ports[pi].remote == d ? n : -1;
		c->path[n++] = pi;
		in = f->ports[pi].remote;
	}
	return -1;
}

/* Adds the flow's nc partitions (c->common) and receiver d to its links. */
static void account(struct cctx *c, uint32_t d, uint32_t nc, int n)
{
	for (int i = 0; i < n; i++) {
		uint32_t pi = c->path[i];
		c->flows[pi] += nc;
		for (uint32_t k = 0; k < nc; k++) {
			uint16_t p = c->common[k];
			if (c->part1[pi] == PART_NONE)
				c->part1[pi] = p;
			else if (c->part1[pi] != p)
				c->multi[pi] = 1;
		}
		if (c->recv[d] && c->stamp[pi] != d + 1) {
			c->stamp[pi] = d + 1;
			c->nrecv[pi]++;
		}
	}
}

/* Does a link of the route (n links in c->path) have mark set in v? */
static int crosses(const struct cctx *c, int n, const uint8_t *v, uint8_t mark)
{
	for (int i = 0; i < n; i++)
		if ((v[c->path[i]] & mark) == mark)
			return 1;
	return 0;
}

static void set_dmem(struct cctx *c, uint32_t d, int on)
{
	part_dest_mark(c->m, d, c->dmem, c->np, on);
}

/* The tenant partitions s may talk to the destination in (c->common). */
static uint32_t common_parts(struct cctx *c, uint32_t s)
{
	if (!c->m) {
		c->common[0] = 0;
		return 1;
	}
	return part_flow_parts(c->m, s, c->dmem, c->np, c->common, NULL);
}

/* Every flow walked once: to account (check 0), or to find the interfered. */
static void flows(struct cctx *c, struct contention_report *r, int check)
{
	const struct fabric *f = c->f;
	for (uint32_t d = 0; d < c->n_ends; d++) {
		if (!contention_flow_end(f, d))
			continue;
		if (c->m)
			set_dmem(c, d, 1);
		for (uint32_t s = 0; s < c->n_ends; s++) {
			if (s == d || !contention_flow_end(f, s))
				continue;
			uint32_t nc = common_parts(c, s);
			if (!nc)
				continue;
			int n = route(c, s, d);
			if (check)
				r->interfered += n > 0 && crosses(c, n, c->multi, 1) ? nc : 0;
			else if (n < 0)
				r->undelivered += nc;
			else {
				r->flows += nc;
				account(c, d, nc, n);
			}
		}
		if (c->m)
			set_dmem(c, d, 0);
	}
}

/* Is (s, d) a flow of partition p (c->dmem set for d)? */
static int flow_of(struct cctx *c, uint32_t s, uint16_t p)
{
	uint32_t nc = common_parts(c, s);
	for (uint32_t k = 0; k < nc; k++)
		if (c->common[k] == p)
			return 1;
	return 0;
}

/*
 * Partition p's exposure: every route between two flow ends (the LFTs
 * route every pair, whether partitions let it carry data or not) is
 * walked twice, first marking each link with EXP_OWN (a flow of p) or
 * EXP_OTHER (another route), then counting the routes that cross a link
 * with both.
 */
#define EXP_OWN 1
#define EXP_OTHER 2
static uint64_t exposure(struct cctx *c, uint16_t p, uint8_t *v)
{
	const struct fabric *f = c->f;
	uint64_t exposed = 0;
	memset(v, 0, f->n_ports);
	for (int count = 0; count < 2; count++)
		for (uint32_t d = 0; d < c->n_ends; d++) {
			if (!contention_flow_end(f, d))
				continue;
			set_dmem(c, d, 1);
			for (uint32_t s = 0; s < c->n_ends; s++) {
				if (s == d || !contention_flow_end(f, s))
					continue;
				int n = route(c, s, d);
				if (n <= 0)
					continue;
				if (count) {
					exposed += crosses(c, n, v, EXP_OWN | EXP_OTHER);
					continue;
				}
				uint8_t mark = flow_of(c, s, p) ? EXP_OWN : EXP_OTHER;
				for (int i = 0; i < n; i++)
					v[c->path[i]] |= mark;
			}
			set_dmem(c, d, 0);
		}
	return exposed;
}

/* Ranks: hops from the nearest switch with a CA.  0, or -1 on ENOMEM. */
static int ranks(struct cctx *c)
{
	struct sw_graph g;
	uint32_t n = c->t->n_sw, ns = 0;
	uint32_t *src = malloc(((size_t)n + 1) * sizeof(*src));
	uint32_t *queue = malloc(((size_t)n + 1) * sizeof(*queue));
	c->rank = malloc(((size_t)n + 1) * sizeof(*c->rank));
	int rc = -1;
	if (!src || !queue || !c->rank || sw_graph_build(&g, c->f, c->t) < 0)
		goto out;
	for (uint32_t r = 0; r < n; r++)
		if (g.has_ca[r])
			src[ns++] = r;
	sw_graph_bfs(&g, src, ns, c->rank, queue);
	sw_graph_free(&g);
	rc = 0;
out:
	free(src);
	free(queue);
	return rc;
}

static void add_dir(struct contention_dir *d, uint32_t nrecv)
{
	d->links++;
	if (nrecv < 2)
		return;
	d->contended++;
	d->total += nrecv - 1;
	if (nrecv - 1 > d->max)
		d->max = nrecv - 1;
}

static void tally(struct cctx *c, struct contention_report *r)
{
	const struct fabric *f = c->f;
	const struct lft_tables *t = c->t;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		if (!graph_sw_link(f, pi))
			continue;
		uint32_t u = c->rank[t->row_of_node[f->ports[pi].node]];
		uint32_t v = c->rank[t->row_of_node[f->ports[f->ports[pi].remote].node]];
		if (v > u)
			add_dir(&r->up, c->nrecv[pi]);
		else if (v < u)
			add_dir(&r->down, c->nrecv[pi]);
		else
			r->lateral++;
		if (c->multi[pi]) {
			r->shared_links++;
			r->interference += c->flows[pi];
		}
	}
}

int contention_measure(const struct fabric *f, const struct lft_tables *t,
		       const struct part_model *m, const uint8_t *recv,
		       struct contention_report *r)
{
	int tenants = m && m->tenants && m->n_parts > 1 && m->mem_off &&
		      m->n_ports;
	struct cctx c = { .f = f, .t = t, .m = tenants ? m : NULL, .recv = recv,
			  .np = tenants ? m->n_parts : 1 };
	size_t n = (size_t)f->n_ports + 1;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	for (uint32_t pi = 0; pi < f->n_ports; pi++)
		r->receivers += recv[pi] && contention_flow_end(f, pi);
	c.stamp = calloc(n, sizeof(*c.stamp));
	c.nrecv = calloc(n, sizeof(*c.nrecv));
	c.flows = calloc(n, sizeof(*c.flows));
	c.part1 = malloc(n * sizeof(*c.part1));
	c.multi = calloc(n, 1);
	c.dmem = calloc(c.np, 1);
	c.common = calloc(c.np, sizeof(*c.common));
	c.path = malloc(((size_t)t->n_sw + 1) * sizeof(*c.path));
	c.n_ends = c.m && c.m->n_ports < f->n_ports ? c.m->n_ports : f->n_ports;
	if (c.m) {
		r->n_parts = c.np;
		r->exposed = calloc(c.np, sizeof(*r->exposed));
	}
	if (!c.stamp || !c.nrecv || !c.flows || !c.part1 || !c.multi ||
	    !c.dmem || !c.common || !c.path || (c.m && !r->exposed) ||
	    ranks(&c) < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		c.part1[i] = PART_NONE;
	flows(&c, r, 0);
	tally(&c, r);
	if (r->shared_links)
		flows(&c, r, 1);
	for (uint16_t p = 1; c.m && p < c.np; p++)
		r->exposed[p] = exposure(&c, p, c.multi);
	rc = 0;
out:
	if (rc < 0)
		contention_free(r);
	free(c.rank);
	free(c.stamp);
	free(c.nrecv);
	free(c.flows);
	free(c.part1);
	free(c.multi);
	free(c.dmem);
	free(c.common);
	free(c.path);
	return rc;
}

void contention_free(struct contention_report *r)
{
	free(r->exposed);
	r->exposed = NULL;
	r->n_parts = 0;
}
