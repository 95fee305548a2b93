/*
 * pftree: partition-aware fat-tree routing (pFTree, with the isolation
 * policies of pFTree-Ext and the weights of pFTree-Wt: the pFTree paper,
 * the one presenting those two extensions, Sections 5, 6 and 7).
 *
 * It is ftree (routing/engines/ftree.c: ranks, tuples, secondary routes, switch
 * LIDs, vSwitches, every LID routed on every switch) with three choices
 * made here through ftree's hooks (engines.h):
 *   - the order of a leaf's end ports (Alg. 2): stable by policy (phy,
 *     vlane, def, then ports in no partition), with weights by weight
 *     descending within each partition, then the column ordering: a
 *     partition's ports get the indices k, k + u, k + 2u... (u: the
 *     leaf's up links) so that they go up one link; skipped when n <= u.
 *   - the main path's up link at each switch (Alg. 3): the least loaded
 *     (load: main paths, or with weights the weights routed down the
 *     link); among those, the one whose switch is marked with the port's
 *     partition the most times; else the first in (load, GUID
 *     descending) order whose switch is not excluded; if every one is,
 *     the least loaded (best-effort, warned once) or failure (strict)
 *     when that breaks a phy-isolation partition.  The chosen switch is
 *     marked (down direction) with the partition, with a count.
 *     Exclusion is per switch: one marked by a partition of a higher
 *     policy (Alg. 3); and when some partition is phy-isolation, a phy
 *     port also avoids switches marked by any other partition and every
 *     port those marked by another phy partition.  That is stricter than
 *     Alg. 3, under which a phy port can land on a switch a def-isolation
 *     partition marked when the members sit unevenly on the leaves.
 *   - the main path's load: the port's weight (pFTree-Wt) or 1.
 * Ports in no tenant partition, and those of a partition whose members
 * all sit on one leaf (its traffic never leaves the leaf), are routed
 * without marks, as def-isolation.  Dummy paths and secondary routes
 * break ties by the highest GUID (ftree: tuple order).
 *
 * After routing, every phy-isolation partition is checked on the tables
 * themselves: the directed switch-to-switch links its flows (pairs of
 * members, one full) cross must carry no flow of another tenant
 * partition.  strict fails naming the partition; best-effort warns
 * (route_opts.warn) and keeps the tables.
 *
 * Without tenant partitions (route_opts.parts NULL or no tenants) it is
 * ftree, table for table.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"

struct pft {
	const struct fabric *f;
	const struct part_model *m;
	const struct route_opts *o;
	const struct lft_tables *t;
	uint32_t np;		/* partitions (index 0: the default) */
	uint16_t *rp;		/* per port: routing partition or PART_NONE */
	uint32_t *cnt;		/* row * np: down marks of each partition */
	uint16_t *distinct;	/* row * 3: partitions marked, per policy */
	uint8_t *warned;	/* per partition */
	uint32_t *ord;		/* scratch: candidates in (load, GUID) order */
	int any_phy;
	char *err;
	size_t errlen;
};

/* Appends "; "-separated text to the caller's warnings (if wanted). */
static void warn_add(const struct route_opts *o, const char *fmt, ...)
{
	if (!o->warn || !o->warn_len)
		return;
	size_t len = strlen(o->warn);
	if (len && len + 2 < o->warn_len) {
		memcpy(o->warn + len, "; ", 3);
		len += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(o->warn + len, o->warn_len - len, fmt, ap);
	va_end(ap);
}

/* The LFT row of the leaf end port pi hangs off, or FAB_NONE. */
static uint32_t leaf_row(const struct fabric *f, const struct lft_tables *t,
			 uint32_t pi)
{
	uint32_t node = f->ports[pi].node;
	if (f->nodes[node].type == FAB_SWITCH)
		return t->row_of_node[node];
	uint32_t rem = f->ports[pi].remote;
	if (rem == FAB_NONE)
		return FAB_NONE;
	node = f->ports[rem].node;
	if (f->nodes[node].type != FAB_SWITCH)
		return FAB_NONE;
	if (fabric_is_vswitch(f, node)) {
		uint32_t up = fabric_vswitch_uplink(f, node);
		if (up == FAB_NONE || f->ports[up].remote == FAB_NONE)
			return FAB_NONE;
		node = f->ports[f->ports[up].remote].node;
	}
	return t->row_of_node[node];
}

static unsigned policy_of(const struct pft *p, uint16_t part)
{
	return part == PART_NONE ? PART_DEF : p->m->parts[part].policy;
}

static uint16_t part_of(const struct pft *p, uint32_t pi)
{
	return pi < p->m->n_ports ? p->rp[pi] : PART_NONE;
}

/*
 * Routing partitions per port; those of a partition whose members all
 * hang off one leaf are routed as in none (pFTree filters out
 * single-leaf partitions, the paper's Section 5).
 */
static int pft_parts(struct pft *p)
{
	const struct part_model *m = p->m;
	uint32_t *leaf = malloc(((size_t)p->np + 1) * sizeof(*leaf));
	if (!leaf)
		return -1;
	for (uint32_t q = 0; q < p->np; q++)
		leaf[q] = FAB_NONE;
	for (uint32_t pi = 0; pi < m->n_ports; pi++) {
		uint16_t q = m->route_part[pi];
		p->rp[pi] = q == 0 || q >= p->np ? PART_NONE : q;
		if (p->rp[pi] == PART_NONE)
			continue;
		uint32_t r = leaf_row(p->f, p->t, pi);
		if (leaf[q] == FAB_NONE)
			leaf[q] = r;
		else if (leaf[q] != r)
			leaf[q] = UINT32_MAX - 1;	/* several leaves */
	}
	for (uint32_t pi = 0; pi < m->n_ports; pi++) {
		uint16_t q = p->rp[pi];
		if (q != PART_NONE && leaf[q] != UINT32_MAX - 1)
			p->rp[pi] = PART_NONE;
	}
	for (uint32_t q = 1; q < p->np; q++)
		if (m->parts[q].policy == PART_PHY && leaf[q] == UINT32_MAX - 1)
			p->any_phy = 1;
	free(leaf);
	return 0;
}

/* Sort rank of a port: phy first, then vlane, def, no partition. */
static unsigned order_rank(const struct pft *p, uint32_t pi)
{
	uint16_t q = part_of(p, pi);
	return q == PART_NONE ? 3 : 2 - policy_of(p, q);
}

static uint32_t weight_of(const struct pft *p, uint32_t pi)
{
	return p->m->weighted && pi < p->m->n_ports ? p->m->weight[pi] : 1;
}

/*
 * Alg. 2, weights within partitions.  Its "return" when n <= u ends the
 * ordering of this leaf only: the other leaves are still ordered.
 */
static void pft_order(void *ctx, uint32_t leaf, const uint32_t *ca_pi,
		      uint32_t n, uint32_t n_up, uint32_t *perm)
{
	struct pft *p = ctx;
	uint32_t *idx = calloc((size_t)n + 1, sizeof(*idx));
	uint32_t *last = malloc(((size_t)p->np + n + 1) * sizeof(*last));
	uint8_t *taken = calloc((size_t)n + 1, 1);

	if (!idx || !last || !taken)
		goto out;	/* port order: still a valid routing */
	/* stable insertion sort by policy rank */
	for (uint32_t i = 1; i < n; i++) {
		uint32_t x = perm[i], j = i;
		while (j > 0 && order_rank(p, ca_pi[perm[j - 1]]) >
				order_rank(p, ca_pi[x])) {
			perm[j] = perm[j - 1];
			j--;
		}
		perm[j] = x;
	}
	/* heavier first (stable) among the positions a partition holds */
	for (uint32_t i = 0; p->m->weighted && i < n; i++) {
		uint16_t q = part_of(p, ca_pi[perm[i]]);
		uint32_t k = 0;
		if (q == PART_NONE || taken[i])
			continue;
		for (uint32_t j = i; j < n; j++) {
			uint32_t x = perm[j], at = k++;
			if (part_of(p, ca_pi[x]) != q) {
				k--;
				continue;
			}
			taken[j] = 1;
			idx[at] = j;
			while (at > 0 && weight_of(p, ca_pi[last[at - 1]]) <
					 weight_of(p, ca_pi[x])) {
				last[at] = last[at - 1];
				at--;
			}
			last[at] = x;
		}
		for (uint32_t j = 0; j < k; j++)
			perm[idx[j]] = last[j];
	}
	memset(taken, 0, n);
	if (n <= n_up || !n_up)
		goto out;
	for (uint32_t q = 0; q < p->np; q++)
		last[q] = FAB_NONE;
	for (uint32_t k = 0; k < n; k++) {
		uint16_t q = part_of(p, ca_pi[perm[k]]);
		uint32_t id = q == PART_NONE || last[q] == FAB_NONE ? n :
			      last[q] + n_up;
		if (id >= n || taken[id])
			for (id = 0; taken[id]; id++)
				;
		taken[id] = 1;
		idx[id] = perm[k];
		if (q != PART_NONE)
			last[q] = id;
	}
	memcpy(perm, idx, (size_t)n * sizeof(*perm));
out:
	free(idx);
	free(last);
	free(taken);
}

static uint64_t pft_weight(void *ctx, uint32_t pi)
{
	return weight_of(ctx, pi);
}

/* Is switch row excluded for a port of partition q (policy pol)? */
static int excluded(const struct pft *p, uint32_t row, uint16_t q,
		    unsigned pol)
{
	const uint16_t *d = p->distinct + (size_t)row * 3;
	unsigned own = q != PART_NONE && p->cnt[(size_t)row * p->np + q];
	for (unsigned hi = pol + 1; hi <= PART_PHY; hi++)
		if (d[hi])
			return 1;
	if (!p->any_phy)
		return 0;
	if (pol == PART_PHY)
		return d[0] + d[1] + d[2] - own > 0;
	return d[PART_PHY] > 0;
}

/* A phy partition other than q marked on row, or PART_NONE. */
static uint16_t phy_marked(const struct pft *p, uint32_t row, uint16_t q)
{
	for (uint16_t x = 1; x < p->np; x++)
		if (x != q && p->m->parts[x].policy == PART_PHY &&
		    p->cnt[(size_t)row * p->np + x])
			return x;
	return PART_NONE;
}

static void mark(struct pft *p, uint32_t row, uint16_t q)
{
	uint32_t *c = &p->cnt[(size_t)row * p->np + q];
	if ((*c)++ == 0)
		p->distinct[(size_t)row * 3 + policy_of(p, q)]++;
}

/*
 * No up link of node is left for a port of q: the least loaded is taken.
 * When that breaks a phy-isolation partition (q's own, or the one that
 * marked the switch) strict fails, best-effort warns once per partition.
 */
static int fallback(struct pft *p, uint16_t q, uint32_t node, uint32_t row)
{
	const struct fab_node *nd = &p->f->nodes[node];
	uint16_t broken = policy_of(p, q) == PART_PHY ? q : phy_marked(p, row, q);
	if (broken == PART_NONE)
		return 0;
	const struct part *b = &p->m->parts[broken];
	char why[256];
	if (broken == q)
		snprintf(why, sizeof(why), "every up link of %s (0x%016llx) "
			 "leads to a switch another partition uses", nd->desc,
			 (unsigned long long)nd->guid);
	else
		snprintf(why, sizeof(why), "%s%s must go up from %s (0x%016llx) "
			 "through a switch it uses", q == PART_NONE ? "a port in "
			 "no partition" : "partition ", q == PART_NONE ? "" :
			 p->m->parts[q].name, nd->desc,
			 (unsigned long long)nd->guid);
	if (p->m->strict) {
		snprintf(p->err, p->errlen, "partition %s (pkey 0x%04x): "
			 "phy-isolation cannot be satisfied: %s", b->name,
			 b->pkey, why);
		return -1;
	}
	if (!p->warned[broken]) {
		p->warned[broken] = 1;
		warn_add(p->o, "partition %s (pkey 0x%04x): phy-isolation cannot "
			 "be satisfied: %s; routed least loaded", b->name, b->pkey,
			 why);
	}
	return 0;
}

/* Alg. 3 at one switch: the up link of end port pi's main path. */
static int pft_up(void *ctx, uint32_t pi, uint32_t node,
		  const struct ft_up_cand *c, uint32_t n)
{
	struct pft *p = ctx;
	const struct lft_tables *t = p->t;
	uint32_t *ord = p->ord;
	/* (load asc, after asc, GUID desc), parallel links in port order */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = i;
		while (j > 0 && (c[ord[j - 1]].load > c[i].load ||
				 (c[ord[j - 1]].load == c[i].load &&
				  (c[ord[j - 1]].after > c[i].after ||
				   (c[ord[j - 1]].after == c[i].after &&
				    c[ord[j - 1]].guid < c[i].guid))))) {
			ord[j] = ord[j - 1];
			j--;
		}
		ord[j] = i;
	}
	if (pi == FAB_NONE)
		return (int)ord[0];
	uint16_t q = part_of(p, pi);
	unsigned pol = policy_of(p, q);
	int sel = -1;
	uint32_t best = 0;
	for (uint32_t k = 0; q != PART_NONE && k < n &&
			     c[ord[k]].load == c[ord[0]].load; k++) {
		uint32_t row = t->row_of_node[c[ord[k]].node];
		uint32_t cn = p->cnt[(size_t)row * p->np + q];
		if (cn > best && !(p->any_phy && excluded(p, row, q, pol))) {
			best = cn;
			sel = (int)ord[k];
		}
	}
	for (uint32_t k = 0; sel < 0 && k < n; k++)
		if (!excluded(p, t->row_of_node[c[ord[k]].node], q, pol))
			sel = (int)ord[k];
	if (sel < 0) {
		sel = (int)ord[0];
		if (fallback(p, q, node, t->row_of_node[c[sel].node]) < 0)
			return -1;
	}
	if (q != PART_NONE)
		mark(p, t->row_of_node[c[sel].node], q);
	return sel;
}

/* --- the check of phy-isolation on the tables --- */

struct flows {
	uint32_t stride;
	uint32_t *link;		/* per directed link (row * stride + port) */
	uint32_t *seen[2];	/* per row: listed in lv[k] when stamp */
	uint32_t stamp;
	uint8_t *mem;		/* per port: 1 member, 2 full member */
	uint32_t *leaf;		/* per port: its leaf row */
	uint32_t *list;		/* the members with a leaf */
	uint32_t *lv[2];	/* leaves of members, of full members */
};

/*
 * Walks the route to lid from row r: with set, the links get tag; else
 * returns the first link whose tag is tag (as row * stride + port), or
 * UINT32_MAX.
 */
static uint32_t walk(const struct pft *p, struct flows *w, uint32_t r,
		     uint32_t lid, uint32_t tag, int set)
{
	const struct fabric *f = p->f;
	const struct lft_tables *t = p->t;
	for (uint32_t hops = 0; hops <= t->n_sw; hops++) {
		uint8_t port = lft_row(t, r)[lid];
		uint32_t node = t->sw_node[r];
		if (port == LFT_DROP || port == 0 || port > f->nodes[node].nports)
			break;
		uint32_t rem = f->ports[fabric_port(f, node, port)].remote;
		if (rem == FAB_NONE)
			break;
		uint32_t rn = f->ports[rem].node;
		if (f->nodes[rn].type != FAB_SWITCH || fabric_is_vswitch(f, rn))
			break;
		uint32_t k = r * w->stride + port;
		if (set)
			w->link[k] = tag;
		else if (w->link[k] == tag)
			return k;
		r = t->row_of_node[rn];
	}
	return UINT32_MAX;
}

/*
 * The flows of partition q (ordered member pairs, one full), walked once
 * per destination LID from each leaf with a source for it: tags their
 * links (set) or returns the first link already tagged tag.
 */
static uint32_t walk_part(const struct pft *p, struct flows *w, uint16_t q,
			  uint32_t tag, int set)
{
	const struct fabric *f = p->f;
	const struct part_model *m = p->m;
	uint32_t hit = UINT32_MAX, n = 0, nl[2] = { 0, 0 };

	/* members; leaves of members (lv[0]) and of full members (lv[1]) */
	w->stamp++;
	for (uint32_t pi = 0; pi < m->n_ports; pi++) {
		uint8_t mem = 0;
		for (uint32_t e = m->mem_off[pi]; e < m->mem_off[pi + 1]; e++)
			if (PART_IDX(m->mem[e]) == q)
				mem = m->mem[e] & PART_FULL ? 2 : 1;
		uint32_t r = mem ? leaf_row(f, p->t, pi) : FAB_NONE;
		if (r == FAB_NONE)
			continue;
		w->mem[pi] = mem;
		w->leaf[pi] = r;
		w->list[n++] = pi;
		for (int k = 0; k < mem; k++)
			if (w->seen[k][r] != w->stamp) {
				w->seen[k][r] = w->stamp;
				w->lv[k][nl[k]++] = r;
			}
	}
	for (uint32_t i = 0; i < n && hit == UINT32_MAX; i++) {
		uint32_t d = w->list[i];
		/* a full member talks to every member, a limited one to full */
		int k = w->mem[d] == 2 ? 0 : 1;
		for (uint32_t x = 0; f->ports[d].lid &&
				     x < (1u << fabric_port_lmc(f, d)); x++) {
			uint32_t lid = f->ports[d].lid + x;
			if (lid > f->max_lid || f->lid_port[lid] != d)
				break;
			for (uint32_t j = 0; j < nl[k] && hit == UINT32_MAX; j++)
				if (w->lv[k][j] != w->leaf[d])
					hit = walk(p, w, w->lv[k][j], lid, tag, set);
		}
	}
	return hit;
}

/* Checks every phy-isolation partition; 0, or -1 (strict, or memory). */
static int pft_check(struct pft *p)
{
	const struct fabric *f = p->f;
	const struct lft_tables *t = p->t;
	struct flows w = { .stride = 1 };
	int rc = -1;

	for (uint32_t r = 0; r < t->n_sw; r++)
		if (f->nodes[t->sw_node[r]].nports + 1u > w.stride)
			w.stride = f->nodes[t->sw_node[r]].nports + 1u;
	w.link = calloc((size_t)t->n_sw * w.stride + 1, sizeof(*w.link));
	w.seen[0] = calloc((size_t)t->n_sw + 1, sizeof(*w.seen[0]));
	w.seen[1] = calloc((size_t)t->n_sw + 1, sizeof(*w.seen[1]));
	w.mem = calloc((size_t)p->m->n_ports + 1, 1);
	w.leaf = calloc((size_t)p->m->n_ports + 1, sizeof(*w.leaf));
	w.list = calloc((size_t)p->m->n_ports + 1, sizeof(*w.list));
	w.lv[0] = calloc((size_t)t->n_sw + 1, sizeof(*w.lv[0]));
	w.lv[1] = calloc((size_t)t->n_sw + 1, sizeof(*w.lv[1]));
	if (!w.link || !w.seen[0] || !w.seen[1] || !w.mem || !w.leaf || !w.list || !w.lv[0] ||
	    !w.lv[1]) {
		snprintf(p->err, p->errlen, "out of memory");
		goto out;
	}
	for (uint16_t q = 1; q < p->np; q++) {
		const struct part *pq = &p->m->parts[q];
		if (pq->policy != PART_PHY)
			continue;
		walk_part(p, &w, q, q, 1);
		for (uint16_t x = 1; x < p->np; x++) {
			uint32_t k = x == q ? UINT32_MAX : walk_part(p, &w, x, q, 0);
			if (k == UINT32_MAX)
				continue;
			const struct fab_node *nd = &f->nodes[t->sw_node[k / w.stride]];
			char why[320];
			snprintf(why, sizeof(why), "partition %s shares the link "
				 "from %s (0x%016llx) port %u", p->m->parts[x].name,
				 nd->desc, (unsigned long long)nd->guid,
				 k % w.stride);
			if (p->m->strict) {
				snprintf(p->err, p->errlen, "partition %s (pkey "
					 "0x%04x): phy-isolation cannot be "
					 "satisfied: %s", pq->name, pq->pkey, why);
				goto out;
			}
			if (!p->warned[q])
				warn_add(p->o, "partition %s (pkey 0x%04x): "
					 "phy-isolation cannot be satisfied: %s",
					 pq->name, pq->pkey, why);
			p->warned[q] = 1;
			break;
		}
	}
	rc = 0;
out:
	free(w.link);
	free(w.seen[0]);
	free(w.seen[1]);
	free(w.mem);
	free(w.leaf);
	free(w.list);
	free(w.lv[0]);
	free(w.lv[1]);
	return rc;
}

int pftree_route(const struct fabric *f, const struct route_opts *o,
		 struct lft_tables *t, char *err, size_t errlen)
{
	const struct part_model *m = o ? o->parts : NULL;
	if (!m || !m->tenants || m->n_parts < 2)
		return ftree_route(f, o, t, err, errlen);
	if (m->n_ports != f->n_ports) {
		snprintf(err, errlen, "partitions resolved against another fabric "
			 "(%u ports, the fabric has %u)", m->n_ports, f->n_ports);
		return -1;
	}
	struct pft p = { .f = f, .m = m, .o = o, .t = t, .np = m->n_parts,
			 .err = err, .errlen = errlen };
	uint32_t stride = 1;
	int rc = -1;
	for (uint32_t r = 0; r < t->n_sw; r++)
		if (f->nodes[t->sw_node[r]].nports + 1u > stride)
			stride = f->nodes[t->sw_node[r]].nports + 1u;
	p.rp = malloc(((size_t)m->n_ports + 1) * sizeof(*p.rp));
	p.cnt = calloc((size_t)t->n_sw * p.np + 1, sizeof(*p.cnt));
	p.distinct = calloc((size_t)t->n_sw * 3 + 1, sizeof(*p.distinct));
	p.warned = calloc(p.np, 1);
	p.ord = malloc((size_t)stride * sizeof(*p.ord));
	if (!p.rp || !p.cnt || !p.distinct || !p.warned || !p.ord ||
	    pft_parts(&p) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	struct ft_hooks hk = { .ctx = &p, .order = pft_order,
			       .weight = pft_weight, .up = pft_up };
	if (ftree_route_hooked(f, o, t, &hk, err, errlen) < 0)
		goto out;
	for (uint32_t q = 1; q < p.np; q++)
		if (m->parts[q].policy == PART_PHY) {
			if (pft_check(&p) < 0)
				goto out;
			break;
		}
	rc = 0;
out:
	free(p.rp);
	free(p.cnt);
	free(p.distinct);
	free(p.warned);
	free(p.ord);
	return rc;
}
