/*
 * Route verification (see verify.h).
 *
 * Per destination LID every switch's LFT entry is decoded into "next
 * switch", "delivered" or a failure, and each switch's route is resolved
 * once (memoised, iteratively, a path stack finding loops).  The resolution
 * order is a topological order of the next-hop tree: walking it backwards
 * pushes the number of source CAs behind each switch along its next hop,
 * which gives the routes per link and the channel dependencies in one pass.
 * LIDs are taken in blocks so that each LFT row is read a cache line at a
 * time instead of one byte per row per LID.
 *
 * With SL-to-VL tables the VLs depend on each source's SL, so the
 * channel dependencies are taken per (source, LID) instead, following
 * the resolved next hops (vl_walk()); the graph's node is (link, VL),
 * link * n_vls + VL, the same layout as the one-VL graph when n_vls = 1.
 */
#include <stdlib.h>
#include <string.h>

#include "routing/graph.h"
#include "routing/verify/verify.h"

#define LID_BLOCK 256
#define D_INF UINT16_MAX

/* per-LID decoded entries (int32): >= 0 the next switch's row, else: */
#define C_DELIVER (-1)
#define C_DROP    (-2)
#define C_HOLE    (-3)
#define C_CA      (-4)	/* in hop[] only: cabled to a CA port, see nb_port */

/* resolution states */
enum { S_UNKNOWN, S_BUSY, S_OK, S_DROP, S_HOLE, S_LOOP };

/* One switch's route towards the LID at hand. */
struct sw_state {
	int32_t code;		/* next row, C_DELIVER, C_DROP, C_HOLE */
	uint32_t hops;		/* switch links to delivery (S_OK) */
	uint32_t cnt;		/* source CA ports whose route passes here */
	uint8_t port;		/* the LFT entry */
	uint8_t state;
};

struct vctx {
	const struct fabric *f;
	const struct lft_tables *t;
	struct verify_report *r;
	uint32_t n;			/* switches (rows) */
	uint32_t stride;		/* widest switch's ports + 1 */
	uint32_t *nb_row;		/* (row, port): peer switch row or FAB_NONE */
	uint32_t *nb_port;		/* (row, port): peer port index or FAB_NONE */
	int32_t *hop;			/* (row, port): peer row, C_DROP, C_HOLE, C_CA */
	uint32_t *adj_off, *adj;	/* distinct switch neighbours, for BFS */
	uint32_t *rows_sorted;		/* rows in switch GUID order */
	/* sources: CA ports cabled to a switch, per row in port GUID order */
	uint32_t *src_off, *src;
	/* leaves: rows with sources, in GUID order */
	uint32_t n_leaves;
	uint32_t *leaf_row;
	uint16_t *dist;			/* [row][leaf]: shortest switch hops */
	uint32_t *rank;
	/* per LID */
	struct sw_state *sw;
	uint32_t *order, *stack;
	/* per directed link (row * stride + port) */
	uint64_t *load;			/* base LIDs: oload's offset 0 */
	uint32_t n_off;			/* LID offsets: 1 << LMC */
	uint64_t *oload;		/* per offset k, from k * links */
	/* per channel (link * nvl + VL): nvl is 1 without SL-to-VL tables */
	uint32_t nvl;
	int qos;
	unsigned max_op_vls;
	uint64_t *vload;		/* QoS: CA-to-CA routes per channel */
	uint8_t *vused;			/* QoS: any route on the channel */
	uint32_t cdg_bytes;		/* bitmap bytes per channel */
	uint8_t *cdg;			/* successor (port * nvl + VL) at the next switch */
	uint8_t *pblk;			/* [LID in block][row] LFT entries */
};

static const struct fab_node *row_node(const struct vctx *c, uint32_t row)
{
	return &c->f->nodes[c->t->sw_node[row]];
}

struct keyed {
	uint64_t k1, k2;
	uint32_t v;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->k1 != y->k1)
		return x->k1 < y->k1 ? -1 : 1;
	if (x->k2 != y->k2)
		return x->k2 < y->k2 ? -1 : 1;
	return (x->v > y->v) - (x->v < y->v);
}

static int build_links(struct vctx *c)
{
	const struct fabric *f = c->f;
	c->stride = 1;
	for (uint32_t r = 0; r < c->n; r++)
		if (row_node(c, r)->nports + 1u > c->stride)
			c->stride = row_node(c, r)->nports + 1u;
	size_t nl = (size_t)c->n * c->stride;
	c->nb_row = malloc((nl + 1) * sizeof(*c->nb_row));
	c->nb_port = malloc((nl + 1) * sizeof(*c->nb_port));
	c->hop = malloc((nl + 1) * sizeof(*c->hop));
	c->adj_off = malloc(((size_t)c->n + 1) * sizeof(*c->adj_off));
	c->adj = malloc((nl + 1) * sizeof(*c->adj));
	if (!c->nb_row || !c->nb_port || !c->hop || !c->adj_off || !c->adj)
		return -1;
	uint32_t m = 0;
	for (uint32_t r = 0; r < c->n; r++) {
		const struct fab_node *n = row_node(c, r);
		c->adj_off[r] = m;
		for (uint32_t p = 0; p < c->stride; p++) {
			size_t k = (size_t)r * c->stride + p;
			c->nb_row[k] = c->nb_port[k] = FAB_NONE;
			c->hop[k] = p > n->nports ? C_DROP : C_HOLE;
			if (p == 0 || p > n->nports || !graph_link_up(f, n->first_port + p))
				continue;
			uint32_t rp = f->ports[n->first_port + p].remote;
			c->nb_port[k] = rp;
			c->hop[k] = C_CA;
			if (f->nodes[f->ports[rp].node].type != FAB_SWITCH)
				continue;
			uint32_t v = c->t->row_of_node[f->ports[rp].node];
			c->nb_row[k] = v;
			c->hop[k] = (int32_t)v;
			uint32_t e = c->adj_off[r];
			while (e < m && c->adj[e] != v)
				e++;
			if (e == m)
				c->adj[m++] = v;
		}
	}
	c->adj_off[c->n] = m;
	struct keyed *k = malloc(((size_t)c->n + 1) * sizeof(*k));
	c->rows_sorted = malloc(((size_t)c->n + 1) * sizeof(*c->rows_sorted));
	if (!k || !c->rows_sorted) {
		free(k);
		return -1;
	}
	for (uint32_t r = 0; r < c->n; r++)
		k[r] = (struct keyed){ row_node(c, r)->guid, 0, r };
	qsort(k, c->n, sizeof(*k), cmp_keyed);
	for (uint32_t r = 0; r < c->n; r++)
		c->rows_sorted[r] = k[r].v;
	free(k);
	return 0;
}

/* The switch row a CA port is cabled to, or FAB_NONE. */
static uint32_t ca_attach(const struct vctx *c, uint32_t pi)
{
	const struct fabric *f = c->f;
	if (!graph_link_up(f, pi))
		return FAB_NONE;
	uint32_t rn = f->ports[f->ports[pi].remote].node;
	return f->nodes[rn].type == FAB_SWITCH ? c->t->row_of_node[rn] : FAB_NONE;
}

static int build_sources(struct vctx *c)
{
	const struct fabric *f = c->f;
	uint32_t ns = 0;
	struct keyed *k = malloc(((size_t)f->n_ports + 1) * sizeof(*k));
	c->src_off = calloc((size_t)c->n + 1, sizeof(*c->src_off));
	if (!k || !c->src_off) {
		free(k);
		return -1;
	}
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (f->nodes[p->node].type == FAB_SWITCH || p->num == 0)
			continue;
		uint32_t row = ca_attach(c, pi);
		if (row != FAB_NONE)
			k[ns++] = (struct keyed){ row, p->guid, pi };
	}
	qsort(k, ns, sizeof(*k), cmp_keyed);
	c->src = malloc(((size_t)ns + 1) * sizeof(*c->src));
	if (!c->src) {
		free(k);
		return -1;
	}
	for (uint32_t i = 0; i < ns; i++) {
		c->src[i] = k[i].v;
		c->src_off[k[i].k1 + 1]++;
	}
	for (uint32_t r = 0; r < c->n; r++)
		c->src_off[r + 1] += c->src_off[r];
	free(k);
	c->r->sources = ns;
	c->leaf_row = malloc(((size_t)c->n + 1) * sizeof(*c->leaf_row));
	if (!c->leaf_row)
		return -1;
	c->n_leaves = 0;
	for (uint32_t i = 0; i < c->n; i++) {
		uint32_t r = c->rows_sorted[i];
		if (c->src_off[r + 1] > c->src_off[r])
			c->leaf_row[c->n_leaves++] = r;
	}
	return 0;
}

/* Breadth-first search over switch links from the rows in queue[0..nq). */
static void bfs(const struct vctx *c, uint32_t *queue, uint32_t nq,
		uint32_t *d)
{
	uint32_t qh = 0;
	while (qh < nq) {
		uint32_t u = queue[qh++];
		for (uint32_t e = c->adj_off[u]; e < c->adj_off[u + 1]; e++) {
			uint32_t v = c->adj[e];
			if (d[v] == UINT32_MAX) {
				d[v] = d[u] + 1;
				queue[nq++] = v;
			}
		}
	}
}

/* Ranks from the leaves, and shortest hops from every leaf to every switch. */
static int build_distances(struct vctx *c)
{
	uint32_t *queue = malloc(((size_t)c->n + 1) * sizeof(*queue));
	uint32_t *d = malloc(((size_t)c->n + 1) * sizeof(*d));
	c->rank = malloc(((size_t)c->n + 1) * sizeof(*c->rank));
	c->dist = malloc((size_t)c->n * c->n_leaves * sizeof(*c->dist) + 1);
	if (!queue || !d || !c->rank || !c->dist) {
		free(queue);
		free(d);
		return -1;
	}
	for (uint32_t r = 0; r < c->n; r++)
		c->rank[r] = UINT32_MAX;
	for (uint32_t i = 0; i < c->n_leaves; i++) {
		c->rank[c->leaf_row[i]] = 0;
		queue[i] = c->leaf_row[i];
	}
	bfs(c, queue, c->n_leaves, c->rank);
	for (uint32_t r = 0; r < c->n; r++)
		if (c->rank[r] != UINT32_MAX && c->rank[r] > c->r->max_rank)
			c->r->max_rank = c->rank[r];
	for (uint32_t i = 0; i < c->n_leaves; i++) {
		for (uint32_t r = 0; r < c->n; r++)
			d[r] = UINT32_MAX;
		d[c->leaf_row[i]] = 0;
		queue[0] = c->leaf_row[i];
		bfs(c, queue, 1, d);
		for (uint32_t r = 0; r < c->n; r++)
			c->dist[(size_t)r * c->n_leaves + i] =
				d[r] >= D_INF ? D_INF : (uint16_t)d[r];
	}
	free(queue);
	free(d);
	return 0;
}

/* The destination of a LID: its switch row, and the CA port or FAB_NONE. */
static int lid_dest(const struct vctx *c, uint32_t lid, uint32_t *ds,
		    uint32_t *dport)
{
	const struct fabric *f = c->f;
	uint32_t pi = f->lid_port[lid];
	if (pi == FAB_NONE)
		return -1;
	const struct fab_port *p = &f->ports[pi];
	if (f->nodes[p->node].type == FAB_SWITCH) {
		*ds = c->t->row_of_node[p->node];
		*dport = FAB_NONE;
		return *ds == FAB_NONE ? -1 : 0;
	}
	*ds = ca_attach(c, pi);
	*dport = pi;
	return *ds == FAB_NONE ? -1 : 0;
}

static void decode(struct vctx *c, const uint8_t *entries, uint32_t ds,
		   uint32_t dport)
{
	for (uint32_t s = 0; s < c->n; s++) {
		uint8_t p = entries[s];
		int32_t code;
		if (p == 0) {
			code = dport == FAB_NONE && s == ds ? C_DELIVER : C_DROP;
		} else if (p >= c->stride) {
			code = C_DROP;
		} else {
			size_t k = (size_t)s * c->stride + p;
			code = c->hop[k];
			if (code == C_CA)
				code = c->nb_port[k] == dport ? C_DELIVER : C_HOLE;
		}
		c->sw[s] = (struct sw_state){ .code = code, .port = p,
					      .state = S_UNKNOWN };
	}
}

/* Resolves every switch's route; returns the number of rows in order[]. */
static uint32_t resolve(struct vctx *c)
{
	uint32_t no = 0;
	for (uint32_t s0 = 0; s0 < c->n; s0++) {
		if (c->sw[s0].state != S_UNKNOWN)
			continue;
		uint32_t sp = 0, s = s0;
		int loop = 0;
		for (;;) {
			if (c->sw[s].state == S_BUSY) {
				loop = 1;
				break;
			}
			if (c->sw[s].state != S_UNKNOWN)
				break;
			int32_t code = c->sw[s].code;
			if (code >= 0) {
				c->sw[s].state = S_BUSY;
				c->stack[sp++] = s;
				s = (uint32_t)code;
				continue;
			}
			c->sw[s].state = code == C_DELIVER ? S_OK :
				      code == C_DROP ? S_DROP : S_HOLE;
			c->sw[s].hops = 0;
			c->order[no++] = s;
			break;
		}
		while (sp > 0) {
			uint32_t u = c->stack[--sp];
			if (loop) {
				c->sw[u].state = S_LOOP;
				c->sw[u].hops = 0;
			} else {
				uint32_t v = (uint32_t)c->sw[u].code;
				c->sw[u].state = c->sw[v].state;
				c->sw[u].hops = c->sw[v].hops + 1;
			}
			c->order[no++] = u;
		}
	}
	return no;
}

static void add_example(struct vctx *c, uint32_t src_pi, uint32_t lid,
			uint32_t s)
{
	struct verify_report *r = c->r;
	if (r->n_examples >= VERIFY_EXAMPLES)
		return;
	struct verify_example *e = &r->ex[r->n_examples++];
	const struct fab_port *p = &c->f->ports[src_pi];
	/* where it failed: the end of the route, or a switch of its loop */
	uint32_t at = s;
	for (uint32_t i = 0; i < c->n && c->sw[at].code >= 0; i++)
		at = (uint32_t)c->sw[at].code;
	e->src_guid = p->guid;
	e->src_port = p->num;
	memcpy(e->src_desc, c->f->nodes[p->node].desc, sizeof(e->src_desc));
	e->lid = lid;
	e->kind = c->sw[s].state == S_DROP ? VERIFY_DROP :
		  c->sw[s].state == S_HOLE ? VERIFY_HOLE : VERIFY_LOOP;
	e->at_guid = row_node(c, at)->guid;
	memcpy(e->at_desc, row_node(c, at)->desc, sizeof(e->at_desc));
	e->at_port = c->sw[at].port;
}

/* Counts the pairs towards lid; sets the leaves' cnt (decode() zeroed all). */
static uint64_t count_pairs(struct vctx *c, uint32_t lid, uint32_t ds,
			    uint32_t dport)
{
	struct verify_report *r = c->r;
	uint64_t pairs = 0;
	uint32_t extra = dport == FAB_NONE ? 0 : 1;
	for (uint32_t i = 0; i < c->n_leaves; i++) {
		uint32_t s = c->leaf_row[i];
		uint32_t first = c->src_off[s], end = c->src_off[s + 1];
		uint32_t nsrc = end - first;
		if (s == ds && dport != FAB_NONE)
			nsrc--;		/* the port's own LID */
		if (!nsrc)
			continue;
		pairs += nsrc;
		if (c->sw[s].state == S_OK) {
			c->sw[s].cnt = nsrc;
			uint32_t h = c->sw[s].hops;
			if (h + 1 + extra > r->max_hops)
				r->max_hops = h + 1 + extra;
			uint16_t d = c->dist[(size_t)ds * c->n_leaves + i];
			if (h > d) {
				r->nonminimal += nsrc;
				if (h - d > r->max_excess)
					r->max_excess = h - d;
			}
			continue;
		}
		r->unreachable += nsrc;
		if (c->sw[s].state == S_DROP)
			r->drops += nsrc;
		else if (c->sw[s].state == S_HOLE)
			r->holes += nsrc;
		else
			r->loops += nsrc;
		for (uint32_t k = first; k < end; k++) {
			if (c->src[k] != dport) {
				add_example(c, c->src[k], lid, s);
				break;
			}
		}
	}
	return pairs;
}

/*
 * Pushes the sources along the next hops: link loads into load (NULL:
 * none) and (one VL) dependencies.
 */
static void push_flows(struct vctx *c, uint32_t no, uint64_t *load)
{
	for (uint32_t i = no; i-- > 0;) {
		uint32_t u = c->order[i];
		if (c->sw[u].state != S_OK || c->sw[u].code < 0 || !c->sw[u].cnt)
			continue;
		uint32_t v = (uint32_t)c->sw[u].code;
		size_t link = (size_t)u * c->stride + c->sw[u].port;
		if (load)
			load[link] += c->sw[u].cnt;
		if (!c->qos && c->sw[v].code >= 0) {
			uint8_t q = c->sw[v].port;
			c->cdg[link * c->cdg_bytes + q / 8] |= (uint8_t)(1u << (q % 8));
		}
		c->sw[v].cnt += c->sw[u].cnt;
	}
}

/* Data VLs an OperationalVLs encoding stands for (1: VL0 ... 5: VL0-14). */
static unsigned enc_data_vls(unsigned enc)
{
	return enc >= 5 ? 15 : 1u << (enc - 1);
}

/* The data VLs of the link from port pi: 15 when a VLCap is unknown. */
static unsigned link_vls(const struct vctx *c, uint32_t pi)
{
	const struct fab_port *p = &c->f->ports[pi];
	const struct fab_port *q = &c->f->ports[p->remote];
	unsigned e = c->max_op_vls;
	if (!p->vl_cap || !q->vl_cap)
		return 15;
	if (p->vl_cap < e)
		e = p->vl_cap;
	if (q->vl_cap < e)
		e = q->vl_cap;
	return enc_data_vls(e);
}

/* The VL of sl on node's (in, out) pair: VL 0 without a table. */
static unsigned pair_vl(const struct vctx *c, uint32_t node, unsigned in,
			unsigned out, uint8_t sl)
{
	const uint8_t *tab = lft_sl2vl(c->t, node, in, out);
	return tab ? tab[sl % QOS_SLS] : 0;
}

/* Whether VL vl on the link from port pi is wrong; the first one kept. */
static int vl_wrong(struct vctx *c, uint32_t pi, unsigned vl, uint32_t src,
		    uint32_t lid, uint8_t sl, int seen)
{
	unsigned n = link_vls(c, pi);
	if (vl != 15 && vl < n)
		return 0;
	if (!seen && !c->r->vl_bad) {
		struct verify_vl_example *e = &c->r->vl_ex;
		const struct fabric *f = c->f;
		const struct fab_port *s = &f->ports[src], *p = &f->ports[pi];
		e->src_guid = s->guid;
		e->src_port = s->num;
		memcpy(e->src_desc, f->nodes[s->node].desc, sizeof(e->src_desc));
		e->lid = lid;
		e->sl = sl;
		e->vl = (uint8_t)vl;
		e->link_vls = n;
		e->at_guid = f->nodes[p->node].guid;
		memcpy(e->at_desc, f->nodes[p->node].desc, sizeof(e->at_desc));
		e->at_port = p->num;
	}
	return 1;
}

/*
 * Follows one delivered pair, source CA port src (cabled to row s), with
 * its SL's VLs: channels used, routes per channel (loads), dependencies
 * between consecutive switch-to-switch channels, wrong VLs.
 */
static void vl_walk(struct vctx *c, uint32_t src, uint32_t s, uint32_t lid,
		    int loads)
{
	const struct fabric *f = c->f;
	const struct fab_port *p = &f->ports[src];
	uint8_t sl = lft_sl(c->t, p->lid, lid);
	unsigned vl = pair_vl(c, p->node, p->num, p->num, sl);
	int bad = vl_wrong(c, src, vl, src, lid, sl, 0);
	unsigned in = f->ports[p->remote].num;
	size_t prev = SIZE_MAX;
	for (uint32_t u = s, n = 0; n <= c->n; n++) {
		const struct sw_state *w = &c->sw[u];
		if (w->port == 0)
			break;		/* the switch's own LID */
		uint32_t node = c->t->sw_node[u];
		vl = pair_vl(c, node, in, w->port, sl);
		bad |= vl_wrong(c, f->nodes[node].first_port + w->port, vl,
				src, lid, sl, bad);
		if (w->code < 0)
			break;		/* delivered to the CA port */
		size_t k = (size_t)u * c->stride + w->port;
		size_t ch = SIZE_MAX;
		if (vl < c->nvl) {
			ch = k * c->nvl + vl;
			c->vused[ch] = 1;
			if (loads)
				c->vload[ch]++;
			if (prev != SIZE_MAX) {
				uint32_t b = w->port * c->nvl + vl;
				c->cdg[prev * c->cdg_bytes + b / 8] |= (uint8_t)(1u << (b % 8));
			}
		}
		prev = ch;
		in = f->ports[c->nb_port[k]].num;
		u = (uint32_t)w->code;
	}
	c->r->vl_bad += bad != 0;
}

/* Every delivered pair towards lid, one at a time (QoS). */
static void vl_flows(struct vctx *c, uint32_t lid, uint32_t dport, int loads)
{
	for (uint32_t i = 0; i < c->n_leaves; i++) {
		uint32_t s = c->leaf_row[i];
		if (c->sw[s].state != S_OK)
			continue;
		for (uint32_t k = c->src_off[s]; k < c->src_off[s + 1]; k++)
			if (c->src[k] != dport)
				vl_walk(c, c->src[k], s, lid, loads);
	}
}

static int check_routes(struct vctx *c)
{
	const struct fabric *f = c->f;
	const struct lft_tables *t = c->t;
	struct verify_report *r = c->r;
	for (uint32_t l0 = 1; l0 <= f->max_lid; l0 += LID_BLOCK) {
		uint32_t nb = f->max_lid - l0 + 1 < LID_BLOCK ? f->max_lid - l0 + 1 :
								LID_BLOCK;
		/* LIDs beyond the tables' width are dropped everywhere */
		uint32_t nt = l0 > t->max_lid ? 0 :
			      t->max_lid - l0 + 1 < nb ? t->max_lid - l0 + 1 : nb;
		if (nt < nb)
			memset(c->pblk + (size_t)nt * c->n, LFT_DROP,
			       (size_t)(nb - nt) * c->n);
		for (uint32_t s = 0; s < c->n; s++) {
			const uint8_t *row = lft_row(t, s) + l0;
			for (uint32_t j = 0; j < nt; j++)
				c->pblk[(size_t)j * c->n + s] = row[j];
		}
		for (uint32_t j = 0; j < nb; j++) {
			uint32_t lid = l0 + j, ds, dport;
			if (f->lid_port[lid] == FAB_NONE)
				continue;
			if (lid_dest(c, lid, &ds, &dport) < 0) {
				r->unattached_lids++;
				continue;
			}
			r->lids++;
			decode(c, c->pblk + (size_t)j * c->n, ds, dport);
			uint32_t no = resolve(c);
			uint64_t pairs = count_pairs(c, lid, ds, dport);
			r->pairs += pairs;
			/* a CA port's LID: its offset in the port's range */
			uint32_t k = dport == FAB_NONE ? c->n_off :
				     lid - f->ports[dport].lid;
			int loads = k == 0;
			if (loads)
				r->ca_pairs += pairs;
			push_flows(c, no, k < c->n_off ? c->oload +
				   (size_t)k * c->n * c->stride : NULL);
			if (c->qos)
				vl_flows(c, lid, dport, loads);
		}
	}
	return 0;
}

static void load_add(struct verify_load *s, uint64_t v)
{
	if (!s->links || v < s->min)
		s->min = v;
	if (v > s->max)
		s->max = v;
	s->total += v;
	s->links++;
}

/* Routes per (switch-to-switch link, VL) for the VLs in use (QoS). */
static void vl_stats(struct vctx *c)
{
	struct verify_report *r = c->r;
	size_t nl = (size_t)c->n * c->stride;
	/* used: by any route, a switch's LID too (its VL binds as much) */
	for (size_t k = 0; k < nl; k++)
		for (uint32_t vl = 0; vl < c->nvl; vl++)
			if (c->vused[k * c->nvl + vl])
				r->vls_used |= (uint16_t)(1u << vl);
	for (size_t k = 0; k < nl; k++) {
		if (k % c->stride == 0 || c->nb_row[k] == FAB_NONE)
			continue;
		for (uint32_t vl = 0; vl < c->nvl; vl++) {
			if (!(r->vls_used & (1u << vl)))
				continue;
			load_add(&r->vl_all, c->vload[k * c->nvl + vl]);
			load_add(&r->per_vl[vl], c->vload[k * c->nvl + vl]);
		}
	}
}

/*
 * Whether offset load o spreads over its links worse than twice the
 * offsets together (sum over n offsets) plus a quarter of its mean, at
 * least 2 (verify.h).
 */
static int spread_worse(const struct verify_load *o,
			const struct verify_load *sum, uint32_t n)
{
	if (!o->links || !sum->total)
		return 0;
	uint64_t slack = o->total / o->links / 4;
	if (slack < 2)
		slack = 2;
	return n * (o->max - o->min) > 2 * (sum->max - sum->min) + n * slack;
}

/*
 * Link l (from row u to row v): its routes per LID offset, and of the
 * offsets together, by class.
 */
static void offset_link(struct vctx *c, size_t l, uint32_t u, uint32_t v)
{
	struct verify_report *r = c->r;
	size_t nl = (size_t)c->n * c->stride;
	int up = c->rank[v] > c->rank[u], down = c->rank[v] < c->rank[u];
	uint64_t sum = 0;
	for (uint32_t k = 0; k < c->n_off; k++) {
		uint64_t x = c->oload[k * nl + l];
		struct verify_offset *o = &r->off[k];
		sum += x;
		load_add(&o->all, x);
		if (up)
			load_add(&o->up, x);
		if (down)
			load_add(&o->down, x);
	}
	load_add(&r->sum_all, sum);
	if (up)
		load_add(&r->sum_up, sum);
	if (down)
		load_add(&r->sum_down, sum);
}

/* The offsets' balance, once every link is counted (verify.h). */
static void offset_verdicts(struct vctx *c)
{
	struct verify_report *r = c->r;
	for (uint32_t k = 0; k < c->n_off && c->n_off > 1; k++) {
		struct verify_offset *o = &r->off[k];
		o->unbalanced =
			(uint8_t)(spread_worse(&o->all, &r->sum_all, c->n_off) |
				  spread_worse(&o->up, &r->sum_up, c->n_off) << 1 |
				  spread_worse(&o->down, &r->sum_down, c->n_off) << 2);
		r->offsets_unbalanced += o->unbalanced != 0;
	}
}

static void link_stats(struct vctx *c)
{
	struct verify_report *r = c->r;
	for (uint32_t u = 0; u < c->n; u++) {
		for (uint32_t p = 1; p < c->stride; p++) {
			size_t k = (size_t)u * c->stride + p;
			uint32_t v = c->nb_row[k];
			if (v == FAB_NONE)
				continue;
			load_add(&r->all, c->load[k]);
			if (c->rank[v] > c->rank[u])
				load_add(&r->up, c->load[k]);
			else if (c->rank[v] < c->rank[u])
				load_add(&r->down, c->load[k]);
			else
				load_add(&r->lateral, c->load[k]);
			if (c->n_off > 1)
				offset_link(c, k, u, v);
			for (uint32_t vl = 0; vl < c->nvl; vl++) {
				size_t ch = k * c->nvl + vl;
				if (c->qos && !c->vused[ch])
					continue;
				r->cdg_nodes++;
				for (uint32_t b = 0; b < c->cdg_bytes; b++)
					r->cdg_edges += (uint64_t)__builtin_popcount(
						c->cdg[ch * c->cdg_bytes + b]);
			}
		}
	}
	if (c->qos)
		vl_stats(c);
	r->n_offsets = c->n_off;
	offset_verdicts(c);
}

/*
 * The next successor of channel k at or after bit *q (port * nvl + VL
 * at the next switch), or SIZE_MAX.
 */
static size_t cdg_next(const struct vctx *c, size_t k, uint32_t *q)
{
	uint32_t v = c->nb_row[k / c->nvl];
	const uint8_t *bits = c->cdg + k * c->cdg_bytes;
	for (; *q < c->stride * c->nvl; (*q)++)
		if (bits[*q / 8] & (1u << (*q % 8)))
			return (size_t)v * c->stride * c->nvl + (*q)++;
	return SIZE_MAX;
}

/* Iterative depth-first search for a cycle; records the first one found. */
static int find_cycle(struct vctx *c)
{
	size_t nl = (size_t)c->n * c->stride * c->nvl;
	uint8_t *color = calloc(nl + 1, 1);
	size_t *stk = malloc((nl + 1) * sizeof(*stk));
	uint32_t *it = malloc((nl + 1) * sizeof(*it));
	if (!color || !stk || !it) {
		free(color);
		free(stk);
		free(it);
		return -1;
	}
	for (uint32_t i = 0; i < c->n && !c->r->cycle; i++) {
		uint32_t u = c->rows_sorted[i];
		for (uint32_t p = c->nvl; p < c->stride * c->nvl && !c->r->cycle; p++) {
			size_t root = (size_t)u * c->stride * c->nvl + p;
			if (c->nb_row[root / c->nvl] == FAB_NONE || color[root])
				continue;
			size_t sp = 0;
			stk[sp] = root;
			it[sp++] = c->nvl;
			color[root] = 1;
			while (sp > 0) {
				size_t k = stk[sp - 1];
				size_t w = cdg_next(c, k, &it[sp - 1]);
				if (w == SIZE_MAX) {
					color[k] = 2;
					sp--;
					continue;
				}
				if (color[w] == 2)
					continue;
				if (color[w] == 0) {
					color[w] = 1;
					stk[sp] = w;
					it[sp++] = c->nvl;
					continue;
				}
				/* w is on the stack: the cycle is stk[pos..sp) */
				size_t pos = sp;
				while (pos > 0 && stk[pos - 1] != w)
					pos--;
				pos--;
				struct verify_report *r = c->r;
				r->cycle = 1;
				r->cycle_len = (uint32_t)(sp - pos);
				for (size_t j = 0; j < sp - pos && j < VERIFY_CYCLE_SHOW; j++) {
					size_t lk = stk[pos + j] / c->nvl;
					r->cycle_guid[j] = row_node(c, (uint32_t)(lk / c->stride))->guid;
					r->cycle_port[j] = (uint8_t)(lk % c->stride);
					r->cycle_vl[j] = (uint8_t)(stk[pos + j] % c->nvl);
				}
				break;
			}
		}
	}
	free(color);
	free(stk);
	free(it);
	return 0;
}

static void free_ctx(struct vctx *c)
{
	free(c->nb_row);
	free(c->nb_port);
	free(c->hop);
	free(c->adj_off);
	free(c->adj);
	free(c->rows_sorted);
	free(c->src_off);
	free(c->src);
	free(c->leaf_row);
	free(c->dist);
	free(c->rank);
	free(c->sw);
	free(c->order);
	free(c->stack);
	free(c->oload);
	free(c->vload);
	free(c->vused);
	free(c->cdg);
	free(c->pblk);
}

/* The graph's VLs: 1 + the highest data VL any SL-to-VL table gives. */
static uint32_t graph_vls(const struct lft_tables *t)
{
	uint32_t n = 1;
	for (size_t i = 0; i < (size_t)t->sl2vl_n * QOS_SLS; i++)
		if (t->sl2vl[i] < VERIFY_VLS && t->sl2vl[i] + 1u > n)
			n = t->sl2vl[i] + 1u;
	return n;
}

int route_verify(const struct fabric *f, const struct lft_tables *t,
		 const struct verify_opts *o, struct verify_report *r)
{
	struct vctx c = { .f = f, .t = t, .r = r, .n = t->n_sw };
	int rc = -1;
	memset(r, 0, sizeof(*r));
	r->switches = t->n_sw;
	r->deadlock_free_required = o && o->deadlock_free_required;
	if (build_links(&c) < 0 || build_sources(&c) < 0 ||
	    build_distances(&c) < 0)
		goto out;
	size_t n1 = (size_t)c.n + 1;
	size_t nl = (size_t)c.n * c.stride + 1;
	c.qos = r->qos = t->sl2vl != NULL;
	c.nvl = c.qos ? graph_vls(t) : 1;
	r->n_vls = c.nvl;
	c.max_op_vls = o && o->max_op_vls >= 1 && o->max_op_vls <= 5 ?
		       (unsigned)o->max_op_vls : 5;
	c.cdg_bytes = (c.stride * c.nvl + 7) / 8;
	c.sw = malloc(n1 * sizeof(*c.sw));
	c.order = malloc(n1 * sizeof(*c.order));
	c.stack = malloc(n1 * sizeof(*c.stack));
	c.n_off = f->lmc < 8 && 1u << f->lmc <= VERIFY_OFFSETS ? 1u << f->lmc : 1;
	c.oload = calloc((size_t)c.n_off * nl, sizeof(*c.oload));
	c.load = c.oload;
	c.cdg = calloc(nl * c.nvl, c.cdg_bytes);
	c.pblk = malloc(n1 * LID_BLOCK);
	if (!c.sw || !c.order || !c.stack || !c.load || !c.cdg || !c.pblk)
		goto out;
	if (c.qos && (!(c.vload = calloc(nl * c.nvl, sizeof(*c.vload))) ||
		      !(c.vused = calloc(nl * c.nvl, 1))))
		goto out;
	if (f->lid_port && check_routes(&c) < 0)
		goto out;
	link_stats(&c);
	if (find_cycle(&c) < 0)
		goto out;
	if (r->unreachable)
		r->errors++;
	if (r->vl_bad)
		r->errors++;
	if (r->offsets_unbalanced)
		r->errors++;
	if (r->cycle) {
		if (r->deadlock_free_required)
			r->errors++;
		else
			r->warnings++;
	}
	rc = 0;
out:
	free_ctx(&c);
	return rc;
}

int verify_engine_deadlock_free(const char *engine)
{
	const struct routing_engine *e;

	if (engine == NULL || (e = routing_engine_find(engine)) == NULL)
		return 0;
	return e->deadlock_free;
}

/*
 * Walks each ordered pair of ports[] through t, one route at a time:
 * meant for a few hundred end ports (the VMs of a test fabric), where
 * route_verify's all-sources pass would count traffic nobody asked about.
 */
int64_t verify_pair_loads(const struct fabric *f, const struct lft_tables *t,
			  const uint32_t *ports, uint32_t n, uint64_t *load)
{
	int64_t bad = 0;

	memset(load, 0, (size_t)f->n_ports * sizeof(*load));
	for (uint32_t i = 0; i < n; i++) {
		const struct fab_port *sp = &f->ports[ports[i]];
		if (sp->num == 0 || !graph_link_up(f, ports[i]) ||
		    !graph_peer_is_switch(f, ports[i])) {
			bad += n - 1;
			continue;
		}
		for (uint32_t j = 0; j < n; j++) {
			uint32_t lid = f->ports[ports[j]].lid, hops = 0;
			uint32_t cur = f->ports[sp->remote].node;
			if (j == i)
				continue;
			for (;;) {
				uint32_t row = t->row_of_node[cur];
				uint8_t p = lid && lid <= t->max_lid ?
					    lft_row(t, row)[lid] : LFT_DROP;
				if (p == LFT_DROP || p == 0 ||
				    p > f->nodes[cur].nports ||
				    hops++ > t->n_sw) {
					bad++;
					break;
				}
				uint32_t pi = fabric_port(f, cur, p);
				if (!graph_link_up(f, pi)) {
					bad++;
					break;
				}
				if (!graph_peer_is_switch(f, pi)) {
					bad += f->ports[pi].remote != ports[j];
					break;
				}
				load[pi]++;
				cur = f->ports[f->ports[pi].remote].node;
			}
		}
	}
	return bad;
}
