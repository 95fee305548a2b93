/*
 * ftree: fat-tree routing after OpenSM's ftree engine.
 *
 * The tree is found from the fabric alone.  The leaves are the switches
 * with CAs.  The roots are the routing roots given (node descriptions or
 * "0x" GUIDs) or else, per connected component, the switches farthest
 * from the leaves; when that ranks some leaves off the level most CAs are
 * at (a CA cabled to a spine makes the spines near it look low), the roots
 * are found again from the other leaves.  A switch's rank is its BFS
 * distance from the roots (0 = root); links within a rank are not used.
 * Every switch gets a tuple as in OpenSM (BFS from the first leaf, one
 * index varying per level); tuples fix the order of leaves and links.
 *
 * CA LIDs are routed leaf by leaf in tuple order, the CA ports of a leaf
 * in port order, the LIDs of a port's LMC range one after the other.  For
 * one LID on leaf A:
 *   - the main path goes up from A, at each switch over the up link with
 *     the lowest counter of main paths down the links to the switch it
 *     leads to (OpenSM's port group: parallel cables count together),
 *     then down the link itself (ties: tuple order); its
 *     switches route the LID down that link.  With LMC > 0 every LID
 *     offset has counters of its own (these and the loads below): a
 *     host uses one LID of a range (MPI the base LID), so each offset
 *     must spread over the links by itself.  A port's LIDs leave every
 *     switch their main paths share over different links: before the
 *     counter, a link to a switch the port's earlier offsets do not go
 *     up to from there, then a link they do not take (parallel cables);
 *     after it, the links in turn from the one after the latest earlier
 *     offset's there.
 *   - A's other ancestors (they reach A going only down) route it down,
 *     every other switch up, always on a shortest up*-then-down* route
 *     and, as OpenSM's down-going-by-going-up / up-going-by-going-down
 *     recursion does, towards the main path: a switch whose shortest
 *     route turns at a main path switch goes straight to it (descendant
 *     lists make that a lookup), the others take the link whose route
 *     joins the main path soonest, then the least loaded (CA-to-CA
 *     routes so far), then tuple order.  Traffic to one LID converges on
 *     its own path through the tree, and the counters spread the paths.
 *     A switch no CA traffic to the LID crosses takes any shortest route.
 *   - the CA ports behind each switch are pushed along the routes into
 *     the per-link loads the ties use.
 * Leaves with fewer CA ports than the fullest one count dummy main paths,
 * as OpenSM does, so that the levels above stay even.  Switch LIDs follow
 * on shortest up*-down* routes spread by LID, without counting.  Last,
 * where a switch has no up*-down* route at all (a spine to another spine
 * of a 3-level tree, or a damaged tree) it gets its route to the last leaf
 * that routes every LID, and that leaf's route takes over; only traffic
 * from switches (and, in a damaged tree, from CAs to a switch their leaf
 * cannot reach) turns there.  Every switch thus routes every LID of its
 * component, which LID copying for VM migration relies on.
 *
 * vSwitches (FNODE_VSWITCH; the vSwitch paper, Section 5): a
 * hypervisor's vSwitch with its PF and VFs is one end node of the switch
 * its uplink goes to, one CA port there; the vSwitch's row has no links,
 * so it takes no part in ranks, components (each is one of its own),
 * tuples or dummies.  The PF's LIDs are routed as that end node's
 * (counted) LIDs; every other LID behind the vSwitch (its own, the VFs')
 * copies the PF's column on the physical switches, as a VM LID is routed
 * in the paper's simple scheme.  A vSwitch's row routes its own LID to
 * port 0, its CAs' LIDs to their ports and every LID its leaf routes up
 * its uplink.  Without vSwitches none of this runs and the tables are as
 * before.
 *
 * vswitch-ftree (the vSwitch paper's vSwitchFatTree, Section 5.2,
 * Algorithm 1, completed where the listing falls short: secondary routes,
 * integer shares, vSwitches without VMs skipped, the vSwitch rows written)
 * adds a VM pass to that: every VM (a VF port with a vm_weight) is routed
 * as a CA LID of its own, main path, secondary routes and all, on
 * counters of its own where it adds its weight's share of one vSwitch
 * (ft_route_vms()); its leaf's vSwitches are taken by increasing VM
 * count, so the VMs with the larger shares choose first.  The PFs keep
 * ftree's routes (their own counters, equal weights), and so do the idle
 * VFs and the vSwitch LIDs that copy them, and the plain CAs.
 *
 * pftree (routing/engines/pftree.c) is ftree with hooks (struct ft_hooks,
 * engines.h) where it chooses: the order of a leaf's CA ports, the main
 * path's up link at each switch, the count a main path adds; with hooks
 * the secondary routes' and the dummies' ties go to the higher GUID.
 * Without hooks (ftree, vswitch-ftree) nothing of this runs.
 *
 * CA-to-CA routes are up*-then-down* on strictly ranked links, so they
 * have no channel dependency cycle, and on a fat tree they are shortest.
 * A fabric that is not a clean fat tree (links missing, leaves with fewer
 * up links, CAs on spines, leaves without CAs) is routed the same way,
 * less evenly; nothing is reported about it.  The engine fails only when
 * no switch has a CA, when a routing root is unknown, or when some leaf
 * has no up*-down* route to the CAs of another leaf of its component (a
 * ring or mesh of switches with CAs, say), so the next engine can try.
 *
 * Cost: per destination switch a pass over the up links (shortest route
 * lengths and candidate links); per LID a pass over the switches plus the
 * descendants of its main path; tables written in batches of LIDs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/engines/ftree.h"
#include "routing/graph.h"

#define FT_INF		UINT16_MAX
#define FT_TUPLE_LEN	8
#define FT_TUPLE_FREE	0xff
#define FT_BATCH	256
#ifndef FT_DESC_BUDGET
#define FT_DESC_BUDGET	(1u << 25)
#endif

struct ft_link {
	uint32_t row;		/* the switch at the other end */
	uint8_t port;		/* local port */
	uint8_t rport;		/* the other end's port */
};

struct ft_desc_ent {
	uint32_t row;		/* a switch below */
	uint32_t loff, nl;	/* its links towards the switch above */
};

struct ft {
	const struct fabric *f;
	struct lft_tables *t;
	uint32_t n;		/* switches (rows) */
	uint32_t stride;	/* widest switch's ports + 1 */

	/* usable switch-to-switch links: all, then up (rank - 1) and down */
	uint32_t *adj_off, *up_off, *dn_off;
	struct ft_link *adj, *up, *dn;
	/*
	 * CA (and router) end ports cabled to each switch, in port order; a
	 * vSwitch on its uplink counts as one, its end port (vs_end()), with
	 * the vSwitch's node in ca_vs (FAB_NONE for a plain CA).
	 */
	uint32_t *ca_off, *ca_pi, *ca_vs;
	uint8_t *ca_lport;
	uint8_t *vsw;		/* row is a vSwitch: a singleton, no links */
	uint32_t n_vsw;

	uint32_t *comp;		/* row -> component */
	uint32_t n_comp;
	uint64_t *comp_guid;	/* component -> lowest switch GUID */
	uint32_t *comp_leaves;	/* component -> switches with CAs */
	uint32_t *fill_row;	/* component -> leaf for ft_fill, FAB_NONE */
	uint8_t *is_root;
	uint32_t *rank;
	uint8_t *tuple;		/* row * FT_TUPLE_LEN */
	uint32_t *key;		/* row -> position in the fixed order */
	uint32_t *sorted;	/* position -> row */
	uint32_t *by_rank;	/* rows by rank */
	uint32_t *queue;

	/* per destination switch */
	uint16_t *h;		/* up*-down* hops to it, valid when h_st */
	uint32_t *h_st, *in_st, dstamp;	/* in_st: reaches it going down */
	uint32_t *order;	/* rows with a route (see ft_dest) */
	uint32_t n_order;
	uint32_t n_inset;	/* order[0 .. n_inset): its ancestors */
	uint32_t *pos;		/* row -> order position */
	uint32_t *cand_off;	/* per order position */
	struct ft_link *cand;
	/* descendants (see ft_desc), NULL when not kept */
	uint32_t *desc_off;
	struct ft_desc_ent *desc;
	struct ft_link *desc_link;

	/* per destination LID */
	uint16_t *dj;		/* hops to the main path */
	uint32_t *cstamp, stamp;	/* on the main path when == stamp */
	uint32_t *cnext;
	uint8_t *cport;
	uint32_t *chain, n_chain;	/* the main path, from the leaf up */
	uint32_t *asg, *djst;	/* route chosen, dj known when == stamp */
	uint32_t *nrow;
	uint8_t *nport;
	uint32_t *w;
	uint32_t *src;		/* per row: sources whose routes load[] counts */

	uint64_t *cdown;	/* main paths per directed link (sender, port) */
	uint64_t inc;		/* what a main path adds to cdown */
	uint32_t *load;		/* CA-to-CA routes per directed link */
	/*
	 * LID offsets: cdown and load point at the slice of the offset being
	 * routed (ft_offset()); an end port's main paths of its earlier
	 * offsets, step by step (och_row: the switch, och_e: the up link
	 * taken there, och_n: steps), when track is set.
	 */
	uint32_t span;		/* LIDs per end port: 1 << LMC */
	uint32_t cur_off;
	uint64_t *cdown_off;
	uint32_t *load_off;
	int track;
	uint32_t *chain_e;	/* the up link taken at each step of chain */
	uint32_t *och_row, *och_e, *och_n;
	uint8_t *vm_lid;	/* vswitch-ftree: LIDs its VM pass routed */

	/* routed LIDs not yet in the tables: column j * n + row */
	uint8_t *batch;
	uint32_t batch_lid[FT_BATCH];
	uint32_t batch_sorted[FT_BATCH][2];
	const uint8_t *batch_col[FT_BATCH];
	uint32_t n_batch;

	/* pftree (engines.h): NULL for ftree itself */
	const struct ft_hooks *hk;
	struct ft_up_cand *hc;	/* stride candidates for hk->up */
	uint32_t cur_pi;	/* the end port being routed, FAB_NONE */
	int hk_failed;
};

static const struct fab_node *row_node(const struct ft *ft, uint32_t row)
{
	return &ft->f->nodes[ft->t->sw_node[row]];
}

/* A LID of an end port, when it is one of its range, else 0. */
static uint32_t port_lid(const struct fabric *f, uint32_t pi, uint32_t k)
{
	uint32_t base = f->ports[pi].lid;
	if (!base || k >= (1u << fabric_port_lmc(f, pi)) || base + k > f->max_lid ||
	    f->lid_port[base + k] != pi)
		return 0;
	return base + k;
}

/*
 * The end port a vSwitch is routed as: its PF, or (no PF with a LID and
 * a usable link) its own port 0.  The other LIDs behind it copy that
 * port's routes.
 */
static uint32_t vs_end(const struct fabric *f, uint32_t vs)
{
	uint32_t pf = fabric_vswitch_pf(f, vs);
	if (pf != FAB_NONE && graph_link_up(f, pf) && port_lid(f, pf, 0))
		return pf;
	return fabric_port(f, vs, 0);
}

/*
 * The vSwitch whose LID (its own, its PF's or a VF's) pi holds, or
 * FAB_NONE.
 */
static uint32_t vs_behind(const struct fabric *f, uint32_t pi)
{
	uint32_t node = f->ports[pi].node;
	if (f->nodes[node].type == FAB_SWITCH)
		return fabric_is_vswitch(f, node) ? node : FAB_NONE;
	return fabric_vswitch_of(f, pi, NULL);
}

/*
 * Switch links and attached CA ports.  A vSwitch (with its PF and VFs) is
 * one CA port of the switch its uplink goes to; its own row keeps no
 * links, so it takes no part in ranks, tuples or routes.
 */
static int ft_links(struct ft *ft)
{
	const struct fabric *f = ft->f;
	uint32_t m = 0, c = 0;

	ft->adj_off = calloc((size_t)ft->n + 1, sizeof(*ft->adj_off));
	ft->ca_off = calloc((size_t)ft->n + 1, sizeof(*ft->ca_off));
	if (!ft->adj_off || !ft->ca_off)
		return -1;
	ft->n_vsw = 0;
	for (uint32_t r = 0; r < ft->n; r++) {
		ft->vsw[r] = fabric_is_vswitch(f, ft->t->sw_node[r]);
		ft->n_vsw += ft->vsw[r];
	}
	for (int pass = 0; pass < 2; pass++) {
		m = c = 0;
		for (uint32_t r = 0; r < ft->n; r++) {
			const struct fab_node *nd = row_node(ft, r);
			ft->adj_off[r] = m;
			ft->ca_off[r] = c;
			for (unsigned p = 1; p <= nd->nports && !ft->vsw[r]; p++) {
				uint32_t pi = nd->first_port + p;
				if (!graph_link_up(f, pi))
					continue;
				const struct fab_port *rp = &f->ports[f->ports[pi].remote];
				const struct fab_node *rn = &f->nodes[rp->node];
				if (rn->type == FAB_SWITCH &&
				    fabric_is_vswitch(f, rp->node)) {
					if (fabric_vswitch_uplink(f, rp->node) !=
					    f->ports[pi].remote)
						continue;
					if (pass) {
						ft->ca_pi[c] = vs_end(f, rp->node);
						ft->ca_vs[c] = rp->node;
						ft->ca_lport[c] = (uint8_t)p;
					}
					c++;
				} else if (rn->type == FAB_SWITCH) {
					if (pass) {
						ft->adj[m].row = ft->t->row_of_node[rp->node];
						ft->adj[m].port = (uint8_t)p;
						ft->adj[m].rport = rp->num;
					}
					m++;
				} else if (rp->num != 0) {
					if (pass) {
						ft->ca_pi[c] = f->ports[pi].remote;
						ft->ca_vs[c] = FAB_NONE;
						ft->ca_lport[c] = (uint8_t)p;
					}
					c++;
				}
			}
		}
		ft->adj_off[ft->n] = m;
		ft->ca_off[ft->n] = c;
		if (!pass) {
			ft->adj = malloc(((size_t)m + 1) * sizeof(*ft->adj));
			ft->up = malloc(((size_t)m + 1) * sizeof(*ft->up));
			ft->dn = malloc(((size_t)m + 1) * sizeof(*ft->dn));
			ft->cand = malloc(((size_t)m + 1) * sizeof(*ft->cand));
			ft->ca_pi = malloc(((size_t)c + 1) * sizeof(*ft->ca_pi));
			ft->ca_vs = malloc(((size_t)c + 1) * sizeof(*ft->ca_vs));
			ft->ca_lport = malloc((size_t)c + 1);
			if (!ft->adj || !ft->up || !ft->dn || !ft->cand ||
			    !ft->ca_pi || !ft->ca_vs || !ft->ca_lport)
				return -1;
		}
	}
	return 0;
}

static uint32_t n_ca(const struct ft *ft, uint32_t r)
{
	return ft->ca_off[r + 1] - ft->ca_off[r];
}

/* Connected components of the switch graph, each with its lowest GUID. */
static int ft_components(struct ft *ft)
{
	uint32_t *comp = ft->comp;
	for (uint32_t r = 0; r < ft->n; r++)
		comp[r] = FAB_NONE;
	ft->n_comp = 0;
	for (uint32_t s = 0; s < ft->n; s++) {
		if (comp[s] != FAB_NONE)
			continue;
		uint32_t qh = 0, qt = 0;
		comp[s] = ft->n_comp;
		ft->queue[qt++] = s;
		while (qh < qt) {
			uint32_t u = ft->queue[qh++];
			for (uint32_t e = ft->adj_off[u]; e < ft->adj_off[u + 1]; e++) {
				uint32_t v = ft->adj[e].row;
				if (comp[v] == FAB_NONE) {
					comp[v] = ft->n_comp;
					ft->queue[qt++] = v;
				}
			}
		}
		ft->n_comp++;
	}
	ft->comp_guid = malloc(((size_t)ft->n_comp + 1) * sizeof(*ft->comp_guid));
	ft->comp_leaves = calloc((size_t)ft->n_comp + 1, sizeof(*ft->comp_leaves));
	ft->fill_row = malloc(((size_t)ft->n_comp + 1) * sizeof(*ft->fill_row));
	if (!ft->comp_guid || !ft->comp_leaves || !ft->fill_row)
		return -1;
	for (uint32_t c = 0; c < ft->n_comp; c++) {
		ft->comp_guid[c] = UINT64_MAX;
		ft->fill_row[c] = FAB_NONE;
	}
	for (uint32_t r = 0; r < ft->n; r++) {
		uint64_t g = row_node(ft, r)->guid;
		if (g < ft->comp_guid[comp[r]])
			ft->comp_guid[comp[r]] = g;
		if (n_ca(ft, r))
			ft->comp_leaves[comp[r]]++;
	}
	return 0;
}

/* Multi-source BFS over all switch links from the rows in queue[0..qt). */
static void bfs_from(struct ft *ft, uint32_t qt, uint32_t *dist)
{
	uint32_t qh = 0;
	while (qh < qt) {
		uint32_t u = ft->queue[qh++];
		for (uint32_t e = ft->adj_off[u]; e < ft->adj_off[u + 1]; e++) {
			uint32_t v = ft->adj[e].row;
			if (dist[v] == UINT32_MAX) {
				dist[v] = dist[u] + 1;
				ft->queue[qt++] = v;
			}
		}
	}
}

/* Does the text name this switch: "0x..." GUID or node description? */
static int root_matches(const struct fab_node *nd, const char *name)
{
	if ((name[0] == '0') && (name[1] == 'x' || name[1] == 'X')) {
		char *end;
		unsigned long long g = strtoull(name + 2, &end, 16);
		if (end != name + 2 && *end == '\0')
			return nd->guid == (uint64_t)g;
	}
	return !strcmp(nd->desc, name);
}

/* Marks the routing roots given; -1 with a reason for an unknown one. */
static int given_roots(struct ft *ft, const struct route_opts *o,
		       uint8_t *has_root, char *err, size_t errlen)
{
	for (int i = 0; o && i < o->n_roots; i++) {
		char name[65];
		int found = 0;
		memcpy(name, o->roots[i], 64);
		name[64] = '\0';
		for (uint32_t r = 0; r < ft->n; r++) {
			if (root_matches(row_node(ft, r), name)) {
				ft->is_root[r] = 1;
				has_root[ft->comp[r]] = 1;
				found = 1;
			}
		}
		if (!found) {
			snprintf(err, errlen, "routing root '%s' is not a switch "
				 "of this fabric", name);
			return -1;
		}
	}
	return 0;
}

/*
 * In components without given roots, the roots are the switches farthest
 * from the seeds (the leaves); in one without CAs, its lowest GUID switch.
 */
static void auto_roots(struct ft *ft, const uint8_t *has_root,
		       const uint8_t *seed, uint32_t *dist, uint32_t *far)
{
	uint32_t qt = 0;
	for (uint32_t r = 0; r < ft->n; r++) {
		dist[r] = UINT32_MAX;
		if (seed[r]) {
			dist[r] = 0;
			ft->queue[qt++] = r;
		}
	}
	bfs_from(ft, qt, dist);
	memset(far, 0, ((size_t)ft->n_comp + 1) * sizeof(*far));
	for (uint32_t r = 0; r < ft->n; r++)
		if (dist[r] != UINT32_MAX && dist[r] > far[ft->comp[r]])
			far[ft->comp[r]] = dist[r];
	for (uint32_t r = 0; r < ft->n; r++) {
		uint32_t c = ft->comp[r];
		if (has_root[c])
			continue;
		if (ft->comp_leaves[c])
			ft->is_root[r] = dist[r] == far[c];
		else
			ft->is_root[r] = row_node(ft, r)->guid == ft->comp_guid[c];
	}
}

static void rank_from_roots(struct ft *ft)
{
	uint32_t qt = 0;
	for (uint32_t r = 0; r < ft->n; r++) {
		ft->rank[r] = UINT32_MAX;
		if (ft->is_root[r]) {
			ft->rank[r] = 0;
			ft->queue[qt++] = r;
		}
	}
	bfs_from(ft, qt, ft->rank);
}

/*
 * Leaves ranked off their component's leaf level (the rank most CAs are
 * at): CAs cabled to spines or roots.  They are taken out of the seeds;
 * returns how many.  count has n + 1 zeroed entries, by has n + 1 and
 * level n_comp + 1.
 */
static uint32_t off_level(struct ft *ft, const uint8_t *has_root,
			    uint8_t *seed, uint32_t *count, uint32_t *by,
			    uint32_t *level)
{
	uint32_t moved = 0, m = 0;
	/* CA switches grouped by component */
	memset(level, 0, ((size_t)ft->n_comp + 1) * sizeof(*level));
	for (uint32_t r = 0; r < ft->n; r++)
		if (n_ca(ft, r))
			level[ft->comp[r] + 1]++;
	for (uint32_t c = 1; c <= ft->n_comp; c++)
		level[c] += level[c - 1];
	for (uint32_t r = 0; r < ft->n; r++)
		if (n_ca(ft, r))
			by[level[ft->comp[r]]++] = r;
	/* level[c] is now where component c + 1 starts */
	for (uint32_t c = 0; c < ft->n_comp; c++) {
		uint32_t end = level[c], best = 0, lv = 0;
		for (uint32_t i = m; i < end; i++)
			if (ft->rank[by[i]] < ft->n)
				count[ft->rank[by[i]]] += n_ca(ft, by[i]);
		for (uint32_t i = m; i < end; i++) {
			uint32_t k = ft->rank[by[i]];
			if (k < ft->n && (count[k] > best ||
					  (count[k] == best && k > lv))) {
				best = count[k];
				lv = k;
			}
		}
		for (uint32_t i = m; i < end; i++) {
			uint32_t r = by[i];
			if (!has_root[c] && ft->rank[r] != lv) {
				seed[r] = 0;
				moved++;
			}
		}
		for (uint32_t i = m; i < end; i++)
			if (ft->rank[by[i]] < ft->n)
				count[ft->rank[by[i]]] = 0;
		m = end;
	}
	return moved;
}

/*
 * Does every leaf of r's component lie below root r (reached going down
 * rank by rank)?  mark has n + 1 entries, compared with r + 1.
 */
static int covers_leaves(struct ft *ft, uint32_t r, uint32_t *mark)
{
	uint32_t qh = 0, qt = 0, leaves = 0;
	mark[r] = r + 1;
	ft->queue[qt++] = r;
	while (qh < qt) {
		uint32_t u = ft->queue[qh++];
		leaves += n_ca(ft, u) != 0;
		for (uint32_t e = ft->adj_off[u]; e < ft->adj_off[u + 1]; e++) {
			uint32_t v = ft->adj[e].row;
			if (mark[v] != r + 1 && ft->rank[v] == ft->rank[u] + 1) {
				mark[v] = r + 1;
				ft->queue[qt++] = v;
			}
		}
	}
	return leaves == ft->comp_leaves[ft->comp[r]];
}

/*
 * Roots, then ranks (BFS distance from the roots).  Without roots given,
 * the leaves are the switches with CAs and the roots the switches
 * farthest from them.  When that puts some leaves off the leaf level
 * (a CA on a spine makes the spines near it look lower), the roots are
 * found again from the other leaves only, unless that makes one of those
 * leaves a root that not every leaf lies below (a small switch hanging
 * off a leaf).
 */
static int ft_rank(struct ft *ft, const struct route_opts *o, char *err,
		   size_t errlen)
{
	size_t n = (size_t)ft->n + 1, nc = (size_t)ft->n_comp + 1;
	uint8_t *has_root = calloc(nc, 1), *seed = calloc(n, 1);
	uint32_t *dist = malloc(n * sizeof(*dist));
	uint32_t *scratch = calloc(n, sizeof(*scratch));
	uint32_t *far = calloc(nc, sizeof(*far));
	int rc = -1;

	if (!has_root || !seed || !dist || !scratch || !far) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	memset(ft->is_root, 0, ft->n);
	if (given_roots(ft, o, has_root, err, errlen) < 0)
		goto out;
	for (uint32_t r = 0; r < ft->n; r++)
		seed[r] = n_ca(ft, r) != 0;
	auto_roots(ft, has_root, seed, dist, far);
	rank_from_roots(ft);
	memset(scratch, 0, n * sizeof(*scratch));
	if (off_level(ft, has_root, seed, scratch, dist, far)) {
		uint8_t *first = malloc(n);
		if (!first) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		memcpy(first, ft->is_root, ft->n);
		for (uint32_t r = 0; r < ft->n; r++)
			if (!has_root[ft->comp[r]])
				ft->is_root[r] = 0;
		auto_roots(ft, has_root, seed, dist, far);
		rank_from_roots(ft);
		memset(scratch, 0, n * sizeof(*scratch));
		int keep = 1;
		for (uint32_t r = 0; r < ft->n && keep; r++)
			if (ft->is_root[r] && n_ca(ft, r) && !seed[r] &&
			    !covers_leaves(ft, r, scratch))
				keep = 0;
		if (!keep) {
			memcpy(ft->is_root, first, ft->n);
			rank_from_roots(ft);
		}
		free(first);
	}
	rc = 0;
out:
	free(has_root);
	free(seed);
	free(dist);
	free(scratch);
	free(far);
	return rc;
}

/* Up and down links by rank; links within a rank are left out. */
static void ft_split(struct ft *ft)
{
	uint32_t nu = 0, nd = 0;
	for (uint32_t r = 0; r < ft->n; r++) {
		ft->up_off[r] = nu;
		ft->dn_off[r] = nd;
		for (uint32_t e = ft->adj_off[r]; e < ft->adj_off[r + 1]; e++) {
			uint32_t v = ft->adj[e].row;
			if (ft->rank[v] + 1 == ft->rank[r])
				ft->up[nu++] = ft->adj[e];
			else if (ft->rank[v] == ft->rank[r] + 1)
				ft->dn[nd++] = ft->adj[e];
		}
	}
	ft->up_off[ft->n] = nu;
	ft->dn_off[ft->n] = nd;
}

/* --- tuples --- */

struct tuple_set {
	uint64_t *keys;		/* packed tuples */
	uint32_t *comp;
	uint8_t *used;
	uint32_t mask;
};

static uint64_t tuple_pack(const uint8_t *t)
{
	uint64_t v = 0;
	for (int i = 0; i < FT_TUPLE_LEN; i++)
		v = v << 8 | t[i];
	return v;
}

static uint32_t tuple_hash(uint64_t v, uint32_t comp, uint32_t mask)
{
	v ^= (uint64_t)comp * 0x9e3779b97f4a7c15ull;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 29;
	return (uint32_t)v & mask;
}

/* Adds the tuple (or only tests); returns 0 when it was already there. */
static int tuple_add(struct tuple_set *s, const uint8_t *t, uint32_t comp,
		     int only_test)
{
	uint64_t v = tuple_pack(t);
	for (uint32_t i = tuple_hash(v, comp, s->mask);; i = (i + 1) & s->mask) {
		if (!s->used[i]) {
			if (!only_test) {
				s->keys[i] = v;
				s->comp[i] = comp;
				s->used[i] = 1;
			}
			return 1;
		}
		if (s->keys[i] == v && s->comp[i] == comp)
			return 0;
	}
}

/*
 * OpenSM's indexing: the first leaf is (rank, 0, ..., 0); a switch found
 * going down from rank r gets its parent's tuple with rank r + 1 and the
 * lowest free value at position r + 1; going up, rank r - 1 and position
 * r.  Returns -1 when a tuple does not fit (very deep or wide trees).
 */
static int ft_tuples(struct ft *ft, const uint32_t *first)
{
	struct tuple_set s = { 0 };
	uint32_t cap = 16;
	int rc = -1;
	while (cap < 2 * ft->n + 2)
		cap <<= 1;
	s.keys = calloc(cap, sizeof(*s.keys));
	s.comp = calloc(cap, sizeof(*s.comp));
	s.used = calloc(cap, 1);
	uint8_t *done = calloc((size_t)ft->n + 1, 1);
	if (!s.keys || !s.comp || !s.used || !done)
		goto out;
	s.mask = cap - 1;
	memset(ft->tuple, FT_TUPLE_FREE, (size_t)ft->n * FT_TUPLE_LEN);
	for (uint32_t c = 0; c < ft->n_comp; c++) {
		uint32_t qh = 0, qt = 0, r0 = first[c];
		uint8_t *t0 = ft->tuple + (size_t)r0 * FT_TUPLE_LEN;
		if (ft->rank[r0] >= FT_TUPLE_LEN)
			goto out;
		t0[0] = (uint8_t)ft->rank[r0];
		for (uint32_t i = 1; i <= ft->rank[r0]; i++)
			t0[i] = 0;
		tuple_add(&s, t0, c, 0);
		done[r0] = 1;
		ft->queue[qt++] = r0;
		while (qh < qt) {
			uint32_t u = ft->queue[qh++];
			const uint8_t *tu = ft->tuple + (size_t)u * FT_TUPLE_LEN;
			for (int dir = 0; dir < 2; dir++) {
				const uint32_t *off = dir ? ft->up_off : ft->dn_off;
				const struct ft_link *l = dir ? ft->up : ft->dn;
				for (uint32_t e = off[u]; e < off[u + 1]; e++) {
					uint32_t v = l[e].row;
					if (done[v])
						continue;
					uint8_t tv[FT_TUPLE_LEN];
					unsigned var = dir ? tu[0] : tu[0] + 1u;
					if (var < 1 || var >= FT_TUPLE_LEN)
						goto out;
					memcpy(tv, tu, FT_TUPLE_LEN);
					tv[0] = (uint8_t)(dir ? tu[0] - 1 : tu[0] + 1);
					unsigned i;
					for (i = 0; i < FT_TUPLE_FREE; i++) {
						tv[var] = (uint8_t)i;
						if (tuple_add(&s, tv, c, 1))
							break;
					}
					if (i == FT_TUPLE_FREE)
						goto out;
					tuple_add(&s, tv, c, 0);
					memcpy(ft->tuple + (size_t)v * FT_TUPLE_LEN, tv,
					       FT_TUPLE_LEN);
					done[v] = 1;
					ft->queue[qt++] = v;
				}
			}
		}
	}
	rc = 0;
out:
	free(s.keys);
	free(s.comp);
	free(s.used);
	free(done);
	return rc;
}

struct sort_ent {
	uint64_t a, b, c;
	uint32_t row;
};

static int sort_ent_cmp(const void *x, const void *y)
{
	const struct sort_ent *p = x, *q = y;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	if (p->c != q->c)
		return p->c < q->c ? -1 : 1;
	return 0;
}

/*
 * The fixed order of switches: by component (lowest GUID), then tuple
 * (rank first), then GUID; by component, rank, GUID when tuples do not
 * fit.  Nothing depends on the order of the fabric's arrays.
 */
static int ft_order(struct ft *ft)
{
	uint32_t *first = malloc(((size_t)ft->n_comp + 1) * sizeof(*first));
	struct sort_ent *se = malloc(((size_t)ft->n + 1) * sizeof(*se));
	if (!first || !se) {
		free(first);
		free(se);
		return -1;
	}
	/* the tuple BFS starts at a component's lowest GUID leaf */
	for (uint32_t c = 0; c < ft->n_comp; c++)
		first[c] = FAB_NONE;
	for (uint32_t r = 0; r < ft->n; r++) {
		uint32_t c = ft->comp[r];
		if (!n_ca(ft, r) && ft->comp_leaves[c])
			continue;
		if (first[c] == FAB_NONE ||
		    row_node(ft, r)->guid < row_node(ft, first[c])->guid)
			first[c] = r;
	}
	int tuples = ft_tuples(ft, first) == 0;
	for (uint32_t r = 0; r < ft->n; r++) {
		se[r].a = ft->comp_guid[ft->comp[r]];
		se[r].b = tuples ? tuple_pack(ft->tuple + (size_t)r * FT_TUPLE_LEN)
				 : ft->rank[r];
		se[r].c = row_node(ft, r)->guid;
		se[r].row = r;
	}
	qsort(se, ft->n, sizeof(*se), sort_ent_cmp);
	for (uint32_t i = 0; i < ft->n; i++) {
		ft->sorted[i] = se[i].row;
		ft->key[se[i].row] = i;
	}
	/* rows by rank, for the hop counts */
	for (uint32_t r = 0; r < ft->n; r++) {
		se[r].a = ft->rank[r];
		se[r].b = ft->key[r];
		se[r].c = 0;
		se[r].row = r;
	}
	qsort(se, ft->n, sizeof(*se), sort_ent_cmp);
	for (uint32_t i = 0; i < ft->n; i++)
		ft->by_rank[i] = se[i].row;
	free(first);
	free(se);
	/* the last leaf of each component (ft_fill may pick a later one) */
	for (uint32_t i = 0; i < ft->n; i++) {
		uint32_t r = ft->sorted[i];
		if (n_ca(ft, r))
			ft->fill_row[ft->comp[r]] = r;
	}
	return 0;
}

/* Port groups in the fixed order: by the remote switch, then port. */
static void sort_links(const struct ft *ft, struct ft_link *l, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		struct ft_link x = l[i];
		uint64_t kx = (uint64_t)ft->key[x.row] << 8 | x.port;
		uint32_t j = i;
		while (j > 0 && ((uint64_t)ft->key[l[j - 1].row] << 8 |
				 l[j - 1].port) > kx) {
			l[j] = l[j - 1];
			j--;
		}
		l[j] = x;
	}
}

/* --- descendants --- */

/*
 * For every switch U, the switches below it (reached going only down) and
 * for each of them the up links that lead towards U: the routes towards a
 * main path switch, found without searching.  Skipped (and everything
 * searched instead) when the lists would exceed FT_DESC_BUDGET entries.
 */
static int ft_desc(struct ft *ft)
{
	size_t cap_e = 1024, cap_l = 1024, ne = 0, nl = 0;
	uint32_t *mark = calloc((size_t)ft->n + 1, sizeof(*mark));
	ft->desc_off = malloc(((size_t)ft->n + 1) * sizeof(*ft->desc_off));
	ft->desc = malloc(cap_e * sizeof(*ft->desc));
	ft->desc_link = malloc(cap_l * sizeof(*ft->desc_link));
	if (!mark || !ft->desc_off || !ft->desc || !ft->desc_link)
		goto fail;
	for (uint32_t u = 0; u < ft->n; u++) {
		uint32_t qh = 0, qt = 0;
		ft->desc_off[u] = (uint32_t)ne;
		mark[u] = u + 1;
		ft->queue[qt++] = u;
		while (qh < qt) {
			uint32_t v = ft->queue[qh++];
			for (uint32_t e = ft->dn_off[v]; e < ft->dn_off[v + 1]; e++) {
				uint32_t x = ft->dn[e].row;
				if (mark[x] != u + 1) {
					mark[x] = u + 1;
					ft->queue[qt++] = x;
				}
			}
		}
		for (uint32_t i = 1; i < qt; i++) {
			uint32_t s = ft->queue[i];
			if (ne == cap_e) {
				void *p = realloc(ft->desc, 2 * cap_e * sizeof(*ft->desc));
				if (!p)
					goto fail;
				ft->desc = p;
				cap_e *= 2;
			}
			ft->desc[ne].row = s;
			ft->desc[ne].loff = (uint32_t)nl;
			for (uint32_t e = ft->up_off[s]; e < ft->up_off[s + 1]; e++) {
				if (mark[ft->up[e].row] != u + 1)
					continue;
				if (nl == cap_l) {
					void *p = realloc(ft->desc_link,
							  2 * cap_l * sizeof(*ft->desc_link));
					if (!p)
						goto fail;
					ft->desc_link = p;
					cap_l *= 2;
				}
				ft->desc_link[nl++] = ft->up[e];
			}
			ft->desc[ne].nl = (uint32_t)nl - ft->desc[ne].loff;
			ne++;
		}
		if (ne > FT_DESC_BUDGET || nl > FT_DESC_BUDGET)
			goto fail;
	}
	ft->desc_off[ft->n] = (uint32_t)ne;
	free(mark);
	return 0;
fail:
	/* not fatal: without the lists every route is searched */
	free(mark);
	free(ft->desc_off);
	free(ft->desc);
	free(ft->desc_link);
	ft->desc_off = NULL;
	ft->desc = NULL;
	ft->desc_link = NULL;
	return -1;
}

/* --- per destination switch --- */

/*
 * The switches with an up*-down* route to row a, in an order where every
 * switch comes after the switches its route may continue through, each
 * with its candidate links (those on a shortest such route): first a's
 * ancestors (they reach it going only down) nearest first, then the rest
 * by rank, roots first (they go up).
 */
static void ft_dest(struct ft *ft, uint32_t a)
{
	uint16_t *h = ft->h;
	uint32_t st = ++ft->dstamp, qh = 0, qt = 0, m = 0;

	ft->n_order = 0;
	ft->in_st[a] = ft->h_st[a] = st;
	h[a] = 0;
	ft->queue[qt++] = a;
	while (qh < qt) {
		uint32_t u = ft->queue[qh++];
		if (u != a) {
			/* its children in the set were all found before it */
			ft->pos[u] = ft->n_order;
			ft->cand_off[ft->n_order] = m;
			ft->order[ft->n_order++] = u;
			for (uint32_t e = ft->dn_off[u]; e < ft->dn_off[u + 1]; e++)
				if (ft->in_st[ft->dn[e].row] == st)
					ft->cand[m++] = ft->dn[e];
		}
		for (uint32_t e = ft->up_off[u]; e < ft->up_off[u + 1]; e++) {
			uint32_t v = ft->up[e].row;
			if (ft->in_st[v] != st) {
				ft->in_st[v] = ft->h_st[v] = st;
				h[v] = (uint16_t)(h[u] + 1);
				ft->queue[qt++] = v;
			}
		}
	}
	ft->n_inset = ft->n_order;
	for (uint32_t i = 0; i < ft->n; i++) {
		uint32_t s = ft->by_rank[i], m0 = m;
		uint16_t best = FT_INF;
		if (ft->in_st[s] == st)
			continue;
		/* the up links to the switches nearest a */
		for (uint32_t e = ft->up_off[s]; e < ft->up_off[s + 1]; e++) {
			uint32_t v = ft->up[e].row;
			if (ft->h_st[v] != st || h[v] > best)
				continue;
			if (h[v] < best) {
				best = h[v];
				m = m0;
			}
			ft->cand[m++] = ft->up[e];
		}
		if (best == FT_INF)
			continue;
		h[s] = (uint16_t)(best + 1);
		ft->h_st[s] = st;
		ft->pos[s] = ft->n_order;
		ft->cand_off[ft->n_order] = m0;
		ft->order[ft->n_order++] = s;
	}
	ft->cand_off[ft->n_order] = m;
}

/* A leaf of a's component without a route to a, or FAB_NONE. */
static uint32_t unreached_leaf(const struct ft *ft, uint32_t a)
{
	uint32_t reached = n_ca(ft, a) ? 1 : 0;
	for (uint32_t i = 0; i < ft->n_order; i++)
		reached += n_ca(ft, ft->order[i]) != 0;
	if (reached == ft->comp_leaves[ft->comp[a]])
		return FAB_NONE;
	for (uint32_t i = 0; i < ft->n; i++) {
		uint32_t r = ft->sorted[i];
		if (ft->comp[r] == ft->comp[a] && n_ca(ft, r) &&
		    ft->h_st[r] != ft->dstamp)
			return r;
	}
	return FAB_NONE;
}

/* Bits above any counter: a link to a switch, the link itself, taken. */
#define FT_TAKEN_SW	(1ull << 62)
#define FT_TAKEN_LINK	(1ull << 61)
/* A link's own main paths as pftree's tie-break sees them, at most. */
#define FT_AFTER_MAX	((1u << 24) - 1)

/*
 * Whether the end port's earlier offsets (track) went from switch u, the
 * step-th of the main path, up to the switch up link e leads to
 * (FT_TAKEN_SW), and over e itself (FT_TAKEN_LINK); 0 when not.
 */
static uint64_t ft_taken(const struct ft *ft, uint32_t step, uint32_t u,
			 uint32_t e)
{
	uint64_t taken = 0;
	for (uint32_t j = 0; ft->track && j < ft->cur_off; j++) {
		size_t o = (size_t)j * (ft->n + 1) + step;
		if (step >= ft->och_n[j] || ft->och_row[o] != u)
			continue;
		if (ft->up[ft->och_e[o]].row == ft->up[e].row)
			taken |= FT_TAKEN_SW;
		if (ft->och_e[o] == e)
			taken |= FT_TAKEN_LINK;
	}
	return taken;
}

/*
 * The place of up link e of switch u (the step-th of the main path)
 * among u's up links for ties: the fixed order, except that an offset
 * starts after the link of the port's latest earlier offset that went up
 * from u, as OpenSM's LMC routing starts its search after the port of
 * the LID before (osm_ucast_mgr.c): the offsets then take the links in
 * turn.
 */
static uint32_t ft_after(const struct ft *ft, uint32_t step, uint32_t u,
			 uint32_t e)
{
	uint32_t first = ft->up_off[u], n = ft->up_off[u + 1] - first;
	for (uint32_t j = ft->cur_off; ft->track && j-- > 0;) {
		size_t o = (size_t)j * (ft->n + 1) + step;
		if (step < ft->och_n[j] && ft->och_row[o] == u)
			return (e + n - ft->och_e[o] - 1) % n;
	}
	return e - first;
}

/*
 * The main paths down the links from up link e's switch to u: OpenSM's
 * port group, every parallel cable (u's up links are sorted by the
 * switch they lead to).
 */
static uint64_t ft_group(const struct ft *ft, uint32_t u, uint32_t e)
{
	uint32_t row = ft->up[e].row, a = e, b = e + 1;
	uint64_t sum = 0;
	while (a > ft->up_off[u] && ft->up[a - 1].row == row)
		a--;
	while (b < ft->up_off[u + 1] && ft->up[b].row == row)
		b++;
	for (uint32_t i = a; i < b; i++)
		sum += ft->cdown[(size_t)row * ft->stride + ft->up[i].rport];
	return sum;
}

/* The main paths down up link e itself. */
static uint64_t ft_cdown(const struct ft *ft, uint32_t e)
{
	return ft->cdown[(size_t)ft->up[e].row * ft->stride + ft->up[e].rport];
}

/*
 * pftree's choice of the main path's up link at row u, the step-th of
 * the path (hk->up): the load it sees puts the links of the port's
 * earlier offsets last.
 */
static const struct ft_link *hooked_up(struct ft *ft, uint32_t u,
				       uint32_t step)
{
	uint32_t n = ft->up_off[u + 1] - ft->up_off[u];
	const struct ft_link *l = ft->up + ft->up_off[u];
	for (uint32_t i = 0; i < n; i++) {
		ft->hc[i].node = ft->t->sw_node[l[i].row];
		ft->hc[i].guid = row_node(ft, l[i].row)->guid;
		uint32_t e = ft->up_off[u] + i;
		uint64_t own = ft_cdown(ft, e);
		ft->hc[i].load = ft_taken(ft, step, u, e) | ft_group(ft, u, e);
		/* parallel cables: the less used first */
		ft->hc[i].after = (uint32_t)(own < FT_AFTER_MAX ? own : FT_AFTER_MAX) << 8 |
				  (ft->cur_off ? ft_after(ft, step, u, e) : 0);
	}
	int k = ft->hk->up(ft->hk->ctx, ft->cur_pi, ft->t->sw_node[u], ft->hc, n);
	if (k < 0 || (uint32_t)k >= n) {
		ft->hk_failed = 1;
		k = 0;
	}
	return &l[k];
}

/*
 * The main path up from a: at each switch the up link with the lowest
 * downward counter (ties: the fixed order), after the port's earlier
 * offsets' links (ft_taken()).  Marks it with a new stamp and lists it
 * in chain[] from a up (chain_e: the links), and with track in the
 * offset's och_*.
 */
static void ft_main_path(struct ft *ft, uint32_t a, int count)
{
	uint32_t u = a, s = ++ft->stamp;
	ft->n_chain = 0;
	ft->chain[ft->n_chain++] = a;
	while (ft->up_off[u] != ft->up_off[u + 1]) {
		const struct ft_link *best = NULL;
		uint64_t bc = UINT64_MAX, bo = UINT64_MAX;
		uint32_t ba = UINT32_MAX, step = ft->n_chain - 1;
		for (uint32_t e = ft->up_off[u]; e < ft->up_off[u + 1]; e++) {
			uint64_t c = ft_taken(ft, step, u, e) | ft_group(ft, u, e);
			uint64_t own = ft_cdown(ft, e);
			uint32_t after = ft_after(ft, step, u, e);
			if (c < bc || (c == bc && (own < bo ||
						   (own == bo && after < ba)))) {
				bc = c;
				bo = own;
				ba = after;
				best = &ft->up[e];
			}
		}
		if (ft->hk)
			best = hooked_up(ft, u, step);
		ft->chain_e[ft->n_chain - 1] = (uint32_t)(best - ft->up);
		size_t k = (size_t)best->row * ft->stride + best->rport;
		ft->cstamp[best->row] = s;
		ft->cnext[best->row] = u;
		ft->cport[best->row] = best->rport;
		if (count)
			ft->cdown[k] += ft->inc;
		u = best->row;
		ft->chain[ft->n_chain++] = u;
	}
	if (ft->track) {
		size_t o = (size_t)ft->cur_off * (ft->n + 1);
		ft->och_n[ft->cur_off] = ft->n_chain - 1;
		memcpy(ft->och_row + o, ft->chain, (ft->n_chain - 1) * sizeof(*ft->chain));
		memcpy(ft->och_e + o, ft->chain_e, (ft->n_chain - 1) * sizeof(*ft->chain_e));
	}
}

static int lid_cmp(const void *x, const void *y)
{
	const uint32_t *p = x, *q = y;
	return p[0] < q[0] ? -1 : p[0] > q[0];
}

/* Writes the batch of routed LIDs into the tables. */
static void ft_flush(struct ft *ft)
{
	uint32_t nb = ft->n_batch, (*srt)[2] = ft->batch_sorted;
	if (!nb)
		return;
	for (uint32_t j = 0; j < nb; j++) {
		srt[j][0] = ft->batch_lid[j];
		srt[j][1] = j;
	}
	qsort(srt, nb, sizeof(*srt), lid_cmp);
	/* row by row in LID order; a row's entries share cache lines */
	for (uint32_t k = 0; k < nb; k++)
		ft->batch_col[k] = ft->batch + (size_t)srt[k][1] * ft->n;
	for (uint32_t r = 0; r < ft->n; r++) {
		uint8_t *row = lft_row(ft->t, r);
		for (uint32_t k = 0; k < nb; k++)
			row[srt[k][0]] = ft->batch_col[k][r];
	}
	memset(ft->batch, LFT_DROP, (size_t)ft->n * FT_BATCH);
	ft->n_batch = 0;
}

static void set_next(struct ft *ft, uint32_t r, const struct ft_link *l,
		     uint32_t dj)
{
	ft->nrow[r] = l->row;
	ft->nport[r] = l->port;
	ft->dj[r] = (uint16_t)dj;
	ft->asg[r] = ft->djst[r] = ft->stamp;
}

/* pftree breaks ties by the higher GUID of the switch a link leads to. */
static int guid_before(const struct ft *ft, uint32_t a, uint32_t b)
{
	return ft->hk && row_node(ft, a)->guid > row_node(ft, b)->guid;
}

/* The candidate link of the least load among n. */
static const struct ft_link *least_loaded(const struct ft *ft, uint32_t r,
					  const struct ft_link *l, uint32_t n)
{
	const uint32_t *ld = ft->load + (size_t)r * ft->stride;
	const struct ft_link *best = l;
	for (uint32_t i = 1; i < n; i++)
		if (ld[l[i].port] < ld[best->port] ||
		    (ld[l[i].port] == ld[best->port] &&
		     guid_before(ft, l[i].row, best->row)))
			best = &l[i];
	return best;
}

/* Hops from row r to the main path along the routes chosen (or to be). */
static uint32_t dj_of(struct ft *ft, uint32_t r)
{
	if (ft->djst[r] == ft->stamp)
		return ft->dj[r];
	uint32_t i = ft->pos[r], best = FT_INF;
	for (uint32_t c = ft->cand_off[i]; c < ft->cand_off[i + 1]; c++) {
		uint32_t d = dj_of(ft, ft->cand[c].row);
		if (d < best)
			best = d;
	}
	ft->dj[r] = (uint16_t)(best + 1);
	ft->djst[r] = ft->stamp;
	return best + 1;
}

/* Row r takes the candidate nearest the main path, then least loaded. */
static void resolve(struct ft *ft, uint32_t r)
{
	uint32_t i = ft->pos[r];
	const uint32_t *ld = ft->load + (size_t)r * ft->stride;
	uint64_t best = UINT64_MAX;
	uint32_t bc = ft->cand_off[i];
	for (uint32_t c = ft->cand_off[i]; c < ft->cand_off[i + 1]; c++) {
		const struct ft_link *l = &ft->cand[c];
		uint64_t k = (uint64_t)dj_of(ft, l->row) << 32 | ld[l->port];
		if (k < best || (k == best &&
				 guid_before(ft, l->row, ft->cand[bc].row))) {
			best = k;
			bc = c;
		}
	}
	set_next(ft, r, &ft->cand[bc], (uint32_t)(best >> 32) + 1);
}

/*
 * Routes one CA LID attached to row a (after ft_dest(a)): the main path,
 * a's other ancestors towards it, the switches below each main path
 * switch whose shortest route turns there straight to it, then the
 * routes the CA traffic takes from the remaining leaves, resolved one
 * by one; switches no CA traffic reaches take any shortest route.
 */
static void route_ca_lid(struct ft *ft, uint32_t a, uint8_t *b)
{
	uint32_t s, st = ft->dstamp;

	ft_main_path(ft, a, 1);
	s = ft->stamp;
	ft->dj[a] = 0;
	ft->djst[a] = ft->asg[a] = s;
	for (uint32_t i = 0; i < ft->n_inset; i++) {
		uint32_t r = ft->order[i];
		if (ft->cstamp[r] == s) {
			ft->nrow[r] = ft->cnext[r];
			ft->nport[r] = ft->cport[r];
			ft->dj[r] = 0;
			ft->asg[r] = ft->djst[r] = s;
		} else {
			resolve(ft, r);
		}
	}
	for (uint32_t j = 1; ft->desc && j < ft->n_chain; j++) {
		uint32_t u = ft->chain[j];
		uint32_t turn = 2 * ft->rank[u] - ft->rank[a];
		for (uint32_t d = ft->desc_off[u]; d < ft->desc_off[u + 1]; d++) {
			const struct ft_desc_ent *de = &ft->desc[d];
			uint32_t r = de->row;
			if (ft->in_st[r] == st || ft->asg[r] == s ||
			    ft->rank[r] - ft->h[r] != turn)
				continue;
			set_next(ft, r, least_loaded(ft, r, ft->desc_link + de->loff,
						     de->nl),
				 ft->rank[r] - ft->rank[u]);
		}
	}
	/*
	 * The rest, farthest first: a leaf's route is resolved up to a
	 * switch that has one; a switch no such walk reached (it comes after
	 * every switch below it) carries no CA traffic and takes its first
	 * candidate.  Then the CA ports behind each switch are pushed
	 * towards a, and the entries go to the batch.
	 */
	for (uint32_t i = ft->n_order; i-- > 0;) {
		uint32_t r = ft->order[i];
		if (i >= ft->n_inset && ft->asg[r] != s) {
			if (n_ca(ft, r)) {
				uint32_t x = r;
				do {
					resolve(ft, x);
					x = ft->nrow[x];
				} while (ft->in_st[x] != st && ft->asg[x] != s);
			} else {
				ft->nrow[r] = ft->cand[ft->cand_off[i]].row;
				ft->nport[r] = ft->cand[ft->cand_off[i]].port;
			}
		}
		uint32_t w = ft->w[r] + ft->src[r];
		b[r] = ft->nport[r];
		if (!w)
			continue;
		ft->w[r] = 0;
		ft->load[(size_t)r * ft->stride + ft->nport[r]] += w;
		ft->w[ft->nrow[r]] += w;
	}
	ft->w[a] = 0;
}

/*
 * Routes one LID attached to row a at port aport (after ft_dest(a)).
 * CA LIDs (count) converge on their main path and are counted; switch
 * LIDs take any candidate, spread by LID.
 */
static void ft_route_lid(struct ft *ft, uint32_t a, uint32_t lid,
			 uint8_t aport, int count)
{
	uint8_t *b = ft->batch + (size_t)ft->n_batch * ft->n;

	b[a] = aport;
	ft->batch_lid[ft->n_batch] = lid;
	if (count) {
		route_ca_lid(ft, a, b);
	} else {
		for (uint32_t i = 0; i < ft->n_order; i++) {
			uint32_t c0 = ft->cand_off[i];
			uint32_t nc = ft->cand_off[i + 1] - c0;
			b[ft->order[i]] =
				ft->cand[c0 + lid % nc].port;
		}
	}
	if (++ft->n_batch == FT_BATCH)
		ft_flush(ft);
}

/* The counters of LID offset k (each offset below span has its own). */
static void ft_offset(struct ft *ft, uint32_t k)
{
	size_t sz = ((size_t)ft->n + 1) * ft->stride;
	ft->cur_off = k < ft->span ? k : 0;
	ft->cdown = ft->cdown_off + ft->cur_off * sz;
	ft->load = ft->load_off + ft->cur_off * sz;
}

static int ft_route_cas(struct ft *ft, char *err, size_t errlen)
{
	const struct fabric *f = ft->f;
	uint32_t max_ca = 0;
	for (uint32_t r = 0; r < ft->n; r++)
		if (n_ca(ft, r) > max_ca)
			max_ca = n_ca(ft, r);
	uint32_t span = 1u << f->lmc;
	uint32_t *perm = malloc(((size_t)max_ca + 1) * sizeof(*perm));
	int rc = -1;
	if (!perm) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ft->inc = 1;
	for (uint32_t r = 0; r < ft->n; r++)
		ft->src[r] = n_ca(ft, r);
	for (uint32_t i = 0; i < ft->n; i++) {
		uint32_t a = ft->sorted[i];
		if (!n_ca(ft, a))
			continue;
		ft_dest(ft, a);
		uint32_t miss = unreached_leaf(ft, a);
		if (miss != FAB_NONE) {
			snprintf(err, errlen, "not a fat tree: no up*/down* "
				 "route from switch %s (0x%016llx) to the "
				 "CAs on %s (0x%016llx)",
				 row_node(ft, miss)->desc,
				 (unsigned long long)row_node(ft, miss)->guid,
				 row_node(ft, a)->desc,
				 (unsigned long long)row_node(ft, a)->guid);
			goto out;
		}
		/*
		 * A port's LIDs one after the other: each main path switch
		 * they share then picks different links for them.
		 */
		uint32_t n = n_ca(ft, a);
		for (uint32_t k = 0; k < n; k++)
			perm[k] = k;
		if (ft->hk)
			ft->hk->order(ft->hk->ctx, ft->t->sw_node[a],
				      ft->ca_pi + ft->ca_off[a], n,
				      ft->up_off[a + 1] - ft->up_off[a], perm);
		ft->track = 1;
		for (uint32_t j = 0; j < n; j++) {
			uint32_t c = ft->ca_off[a] + perm[j];
			if (ft->hk) {
				ft->cur_pi = ft->ca_pi[c];
				ft->inc = ft->hk->weight(ft->hk->ctx, ft->cur_pi);
			}
			memset(ft->och_n, 0, span * sizeof(*ft->och_n));
			for (uint32_t k = 0; k < span; k++) {
				uint32_t lid = port_lid(f, ft->ca_pi[c], k);
				ft_offset(ft, k);
				if (lid)
					ft_route_lid(ft, a, lid, ft->ca_lport[c], 1);
			}
		}
		/* dummies keep every leaf's share of the upper links */
		ft->track = 0;
		ft->inc = 1;
		ft->cur_pi = FAB_NONE;
		for (uint32_t k = 0; k < span; k++) {
			ft_offset(ft, k);
			for (uint32_t d = n; d < max_ca; d++)
				ft_main_path(ft, a, 1);
		}
		if (ft->hk_failed)
			goto out;
	}
	rc = 0;
out:
	free(perm);
	return rc;
}

static void ft_route_switches(struct ft *ft)
{
	const struct fabric *f = ft->f;
	for (uint32_t i = 0; i < ft->n; i++) {
		uint32_t w = ft->sorted[i];
		uint32_t pi = fabric_port(f, ft->t->sw_node[w], 0);
		if (ft->vsw[w] || !port_lid(f, pi, 0))
			continue;
		ft_dest(ft, w);
		for (uint32_t k = 0; k < (1u << fabric_port_lmc(f, pi)); k++) {
			uint32_t lid = port_lid(f, pi, k);
			if (lid)
				ft_route_lid(ft, w, lid, 0, 0);
		}
	}
	ft_flush(ft);
}

/* --- vSwitches --- */

/*
 * The vSwitch whose LID pi holds (vs_behind()) when that LID reaches the
 * fabric: the port's link (a VF's, the PF's) and the vSwitch's uplink
 * usable.  FAB_NONE otherwise.
 */
static uint32_t vs_attached(const struct fabric *f, uint32_t pi)
{
	uint32_t vs = vs_behind(f, pi);
	if (vs == FAB_NONE)
		return FAB_NONE;
	if (f->ports[pi].num != 0 && !graph_link_up(f, pi))
		return FAB_NONE;
	uint32_t up = fabric_vswitch_uplink(f, vs);
	return up != FAB_NONE && graph_link_up(f, up) ? vs : FAB_NONE;
}

/*
 * Every LID behind a vSwitch that was not routed on its own (the
 * vSwitch's LID, the VFs', the PF's when the vSwitch stands for itself)
 * takes the routes of the vSwitch's end port on the physical switches:
 * the same offset in its LMC range, else its base LID.  All of them
 * share the one link down to the vSwitch, so nothing is lost.
 */
static int ft_vs_copy(struct ft *ft)
{
	const struct fabric *f = ft->f;
	struct lft_tables *t = ft->t;
	uint32_t *from = calloc((size_t)t->max_lid + 1, sizeof(*from));

	if (!from)
		return -1;
	for (uint32_t lid = 1; lid <= t->max_lid; lid++) {
		uint32_t pi = f->lid_port[lid];
		if (pi == FAB_NONE || (ft->vm_lid && ft->vm_lid[lid]))
			continue;
		uint32_t vs = vs_attached(f, pi);
		if (vs == FAB_NONE)
			continue;
		uint32_t end = vs_end(f, vs), k = lid - f->ports[pi].lid;
		if (end == pi)
			continue;
		from[lid] = port_lid(f, end, k);
		if (!from[lid])
			from[lid] = port_lid(f, end, 0);
	}
	/* row by row: a column at a time would touch a line per entry */
	for (uint32_t r = 0; r < ft->n; r++) {
		uint8_t *row = lft_row(t, r);
		for (uint32_t lid = 1; lid <= t->max_lid && !ft->vsw[r]; lid++)
			if (from[lid])
				row[lid] = row[from[lid]];
	}
	free(from);
	return 0;
}

/*
 * A vSwitch's own row: its LID to port 0, the LIDs of the CAs cabled to
 * it to their ports, every other LID its leaf routes up the uplink.
 */
static void ft_vs_rows(struct ft *ft)
{
	const struct fabric *f = ft->f;
	struct lft_tables *t = ft->t;

	for (uint32_t r = 0; r < ft->n && ft->n_vsw; r++) {
		if (!ft->vsw[r])
			continue;
		uint32_t vs = t->sw_node[r], up = fabric_vswitch_uplink(f, vs);
		const struct fab_node *nd = &f->nodes[vs];
		uint8_t *row = lft_row(t, r);
		if (up != FAB_NONE && graph_link_up(f, up)) {
			uint32_t leaf = f->ports[f->ports[up].remote].node;
			const uint8_t *lrow = lft_row(t, t->row_of_node[leaf]);
			for (uint32_t lid = 1; lid <= t->max_lid; lid++)
				if (lrow[lid] != LFT_DROP)
					row[lid] = f->ports[up].num;
		}
		/* a function whose link is down is not up there either */
		for (unsigned p = 0; p <= nd->nports; p++) {
			uint32_t pi = nd->first_port + p;
			uint8_t to = (uint8_t)p;
			if (p) {
				if (f->ports[pi].remote == FAB_NONE ||
				    graph_peer_is_switch(f, pi))
					continue;
				to = graph_link_up(f, pi) ? to : LFT_DROP;
				pi = f->ports[pi].remote;
			}
			for (uint32_t k = 0; k < (1u << fabric_port_lmc(f, pi)); k++) {
				uint32_t lid = port_lid(f, pi, k);
				if (lid)
					row[lid] = to;
			}
		}
	}
}

/* The fixed-point unit of vswitch-ftree's VM weights: lcm(1..16). */
#define VFT_UNIT	720720u

/* The weight of the VM on VF port pi, 0 when none can be routed there. */
static unsigned vf_vm(const struct fabric *f, uint32_t pi)
{
	if (pi == FAB_NONE || !graph_link_up(f, pi) || !port_lid(f, pi, 0))
		return 0;
	return f->ports[pi].vm_weight;
}

/* VMs on vSwitch vs, and the sum of their weights. */
static unsigned vs_vms(const struct fabric *f, uint32_t vs, uint64_t *sum)
{
	unsigned n = 0, nvf = fabric_vswitch_nvf(f, vs);
	*sum = 0;
	for (unsigned k = 0; k < nvf; k++) {
		unsigned w = vf_vm(f, fabric_vswitch_vf(f, vs, k, NULL));
		n += w != 0;
		*sum += w;
	}
	return n;
}

/*
 * vswitch-ftree's VM pass (the vSwitch paper's Algorithm 1, completed as
 * the head of this file says): leaf by leaf in the fixed order, its
 * vSwitches by increasing VM count (ties: port order), every VM LID
 * routed as a CA LID of its own, main path and all, on counters of its
 * own where a VM adds its share of its vSwitch, VFT_UNIT * weight / (the
 * vSwitch's total weight): every vSwitch with VMs weighs the same.
 * Shares are exact while a vSwitch's total divides VFT_UNIT * weight
 * (any total up to 16), else rounded down.  Leaves with fewer such
 * vSwitches count dummies of VFT_UNIT.  vSwitches without VMs are left
 * to the PF's routes.
 */
static int ft_route_vms(struct ft *ft)
{
	const struct fabric *f = ft->f;
	uint32_t max_vs = 0, vsl[256], nvm[256];

	ft->vm_lid = calloc((size_t)ft->t->max_lid + 1, 1);
	if (!ft->vm_lid)
		return -1;
	memset(ft->cdown_off, 0, ft->span * ((size_t)ft->n + 1) * ft->stride *
	       sizeof(*ft->cdown_off));
	memset(ft->load_off, 0, ft->span * ((size_t)ft->n + 1) * ft->stride *
	       sizeof(*ft->load_off));
	for (uint32_t r = 0; r < ft->n; r++) {
		uint32_t nvs = 0;
		ft->src[r] = 0;
		for (uint32_t c = ft->ca_off[r]; c < ft->ca_off[r + 1]; c++) {
			uint64_t sum;
			unsigned n = ft->ca_vs[c] == FAB_NONE ? 0 :
				     vs_vms(f, ft->ca_vs[c], &sum);
			ft->src[r] += n;
			nvs += n != 0;
		}
		if (nvs > max_vs)
			max_vs = nvs;
	}
	for (uint32_t i = 0; i < ft->n; i++) {
		uint32_t a = ft->sorted[i], nvs = 0;
		if (!n_ca(ft, a))
			continue;
		/* its vSwitches with VMs by VM count, then port (stable) */
		for (uint32_t c = ft->ca_off[a]; c < ft->ca_off[a + 1]; c++) {
			uint64_t sum;
			unsigned n;
			if (ft->ca_vs[c] == FAB_NONE ||
			    !(n = vs_vms(f, ft->ca_vs[c], &sum)))
				continue;
			uint32_t j = nvs++;
			while (j > 0 && nvm[j - 1] > n) {
				vsl[j] = vsl[j - 1];
				nvm[j] = nvm[j - 1];
				j--;
			}
			vsl[j] = c;
			nvm[j] = n;
		}
		if (nvs)
			ft_dest(ft, a);
		for (uint32_t v = 0; v < nvs; v++) {
			uint32_t c = vsl[v], vs = ft->ca_vs[c];
			unsigned nvf = fabric_vswitch_nvf(f, vs);
			uint64_t sum;
			vs_vms(f, vs, &sum);
			for (unsigned k = 0; k < nvf; k++) {
				uint32_t pi = fabric_vswitch_vf(f, vs, k, NULL);
				unsigned w = vf_vm(f, pi);
				if (!w)
					continue;
				ft->inc = (uint64_t)VFT_UNIT * w / sum;
				ft->track = 1;
				memset(ft->och_n, 0, ft->span * sizeof(*ft->och_n));
				for (uint32_t x = 0; x < (1u << fabric_port_lmc(f, pi)); x++) {
					uint32_t lid = port_lid(f, pi, x);
					if (!lid)
						continue;
					ft_offset(ft, x);
					ft_route_lid(ft, a, lid, ft->ca_lport[c], 1);
					ft->vm_lid[lid] = 1;
				}
			}
		}
		ft->track = 0;
		ft->inc = VFT_UNIT;
		for (uint32_t x = 0; x < ft->span; x++) {
			ft_offset(ft, x);
			for (uint32_t d = nvs; d < max_vs; d++)
				ft_main_path(ft, a, 1);
		}
	}
	ft_flush(ft);
	return 0;
}

/*
 * Entries still empty (no up*-down* route) are filled with the route to
 * the last leaf that routes every LID of its component, whose own route
 * then takes over: only switch-originated traffic turns there (and, in a
 * damaged tree, a CA's towards a switch its leaf cannot reach).  Routes
 * reverse, so every switch that has an empty entry reaches that leaf.
 * Without such a leaf the last leaf is used where it has the route.
 */
static int ft_fill(struct ft *ft)
{
	const struct fabric *f = ft->f;
	struct lft_tables *t = ft->t;
	uint32_t *lids = calloc((size_t)ft->n_comp + 1, sizeof(*lids));
	uint8_t *complete = calloc((size_t)ft->n + 1, 1);
	uint32_t *xlid = calloc((size_t)ft->n + 1, sizeof(*xlid));
	if (!lids || !complete || !xlid) {
		free(lids);
		free(complete);
		free(xlid);
		return -1;
	}
	for (uint32_t lid = 1; lid <= t->max_lid; lid++) {
		uint32_t pi = f->lid_port[lid];
		if (pi == FAB_NONE)
			continue;
		const struct fab_port *p = &f->ports[pi];
		uint32_t node = p->node;
		if (f->nodes[node].type != FAB_SWITCH) {
			if (!graph_link_up(f, pi))
				continue;
			node = f->ports[p->remote].node;
			if (f->nodes[node].type != FAB_SWITCH)
				continue;
		}
		/* a LID behind a vSwitch is its leaf's */
		if (ft->vsw[t->row_of_node[node]]) {
			uint32_t up = fabric_vswitch_uplink(f, node);
			if (up == FAB_NONE || !graph_link_up(f, up))
				continue;
			node = f->ports[f->ports[up].remote].node;
		}
		lids[ft->comp[t->row_of_node[node]]]++;
	}
	for (uint32_t r = 0; r < ft->n; r++) {
		const uint8_t *row = lft_row(t, r);
		uint32_t have = 0;
		xlid[r] = port_lid(f, fabric_port(f, t->sw_node[r], 0), 0);
		if (!n_ca(ft, r) || !xlid[r])
			continue;
		for (uint32_t lid = 1; lid <= t->max_lid; lid++)
			have += row[lid] != LFT_DROP;
		complete[r] = have == lids[ft->comp[r]];
	}
	/* the last complete leaf, else (ft_order) the last leaf */
	for (uint32_t i = ft->n; i-- > 0;) {
		uint32_t r = ft->sorted[i], c = ft->comp[r];
		if (complete[r] && lids[c]) {
			ft->fill_row[c] = r;
			lids[c] = 0;
		}
	}
	for (uint32_t r = 0; r < ft->n; r++) {
		uint32_t x = ft->fill_row[ft->comp[r]];
		uint8_t *row = lft_row(t, r);
		if (x == FAB_NONE || x == r || complete[r] || !xlid[x] ||
		    row[xlid[x]] == LFT_DROP)
			continue;
		const uint8_t *xrow = lft_row(t, x);
		uint8_t via = row[xlid[x]];
		for (uint32_t lid = 1; lid <= t->max_lid; lid++)
			if (row[lid] == LFT_DROP && xrow[lid] != LFT_DROP)
				row[lid] = via;
	}
	free(lids);
	free(complete);
	free(xlid);
	return 0;
}

static int ft_alloc(struct ft *ft)
{
	size_t n = (size_t)ft->n + 1;
	ft->up_off = malloc(n * sizeof(uint32_t));
	ft->dn_off = malloc(n * sizeof(uint32_t));
	ft->comp = malloc(n * sizeof(uint32_t));
	ft->is_root = malloc(n);
	ft->rank = malloc(n * sizeof(uint32_t));
	ft->tuple = malloc(n * FT_TUPLE_LEN);
	ft->key = malloc(n * sizeof(uint32_t));
	ft->sorted = malloc(n * sizeof(uint32_t));
	ft->by_rank = malloc(n * sizeof(uint32_t));
	ft->queue = malloc(n * sizeof(uint32_t));
	ft->h = malloc(n * sizeof(uint16_t));
	ft->h_st = calloc(n, sizeof(uint32_t));
	ft->in_st = calloc(n, sizeof(uint32_t));
	ft->order = malloc(n * sizeof(uint32_t));
	ft->cand_off = malloc(n * sizeof(uint32_t));
	ft->pos = malloc(n * sizeof(uint32_t));
	ft->chain = malloc(n * sizeof(uint32_t));
	ft->asg = calloc(n, sizeof(uint32_t));
	ft->djst = calloc(n, sizeof(uint32_t));
	ft->batch = malloc(n * FT_BATCH);
	ft->dj = malloc(n * sizeof(uint16_t));
	ft->cstamp = calloc(n, sizeof(uint32_t));
	ft->cnext = malloc(n * sizeof(uint32_t));
	ft->cport = malloc(n);
	ft->nrow = malloc(n * sizeof(uint32_t));
	ft->nport = malloc(n);
	ft->w = calloc(n, sizeof(uint32_t));
	ft->src = calloc(n, sizeof(uint32_t));
	ft->vsw = calloc(n, 1);
	ft->hc = malloc(ft->stride * sizeof(*ft->hc));
	ft->span = 1u << ft->f->lmc;
	ft->cdown_off = calloc(ft->span * n * ft->stride, sizeof(uint64_t));
	ft->load_off = calloc(ft->span * n * ft->stride, sizeof(uint32_t));
	ft->chain_e = malloc(n * sizeof(uint32_t));
	ft->och_row = malloc(ft->span * n * sizeof(uint32_t));
	ft->och_e = malloc(ft->span * n * sizeof(uint32_t));
	ft->och_n = calloc(ft->span, sizeof(uint32_t));
	ft->cdown = ft->cdown_off;
	ft->load = ft->load_off;
	if (ft->batch)
		memset(ft->batch, LFT_DROP, n * FT_BATCH);
	return ft->up_off && ft->dn_off && ft->comp && ft->is_root && ft->rank &&
	       ft->tuple && ft->key && ft->sorted && ft->by_rank && ft->queue &&
	       ft->h && ft->h_st && ft->in_st && ft->order && ft->cand_off &&
	       ft->batch && ft->pos && ft->chain && ft->asg && ft->djst &&
	       ft->dj && ft->cstamp && ft->cnext && ft->cport && ft->nrow &&
	       ft->nport && ft->w && ft->src && ft->vsw && ft->cdown_off &&
	       ft->load_off && ft->hc && ft->chain_e && ft->och_row &&
	       ft->och_e && ft->och_n ? 0 : -1;
}

static void ft_free(struct ft *ft)
{
	void *p[] = {
		ft->adj_off, ft->up_off, ft->dn_off, ft->adj, ft->up, ft->dn,
		ft->ca_off, ft->ca_pi, ft->ca_lport, ft->comp, ft->comp_guid,
		ft->comp_leaves, ft->fill_row, ft->is_root, ft->rank, ft->tuple,
		ft->key, ft->sorted, ft->by_rank, ft->queue, ft->h, ft->h_st,
		ft->in_st, ft->order, ft->cand_off, ft->cand, ft->batch, ft->dj,
		ft->pos, ft->chain, ft->asg, ft->djst, ft->desc_off, ft->desc,
		ft->desc_link, ft->cstamp,
		ft->cnext, ft->cport, ft->nrow, ft->nport, ft->w, ft->cdown_off,
		ft->load_off, ft->ca_vs, ft->src, ft->vsw, ft->vm_lid, ft->hc,
		ft->chain_e, ft->och_row, ft->och_e, ft->och_n,
	};
	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		free(p[i]);
}

/*
 * ftree, with vms vswitch-ftree (the VM pass before the copies), with hk
 * pftree.
 */
static int ft_run(const struct fabric *f, const struct route_opts *o,
		  struct lft_tables *t, int vms, const struct ft_hooks *hk,
		  char *err, size_t errlen)
{
	struct ft ft = { .f = f, .t = t, .n = t->n_sw, .stride = 1, .hk = hk,
			 .cur_pi = FAB_NONE };
	int rc = -1;

	for (uint32_t r = 0; r < t->n_sw; r++)
		if (f->nodes[t->sw_node[r]].nports + 1u > ft.stride)
			ft.stride = f->nodes[t->sw_node[r]].nports + 1u;
	memset(t->port, LFT_DROP, (size_t)t->n_sw * (t->max_lid + 1));
	if (ft_alloc(&ft) < 0 || ft_links(&ft) < 0 || ft_components(&ft) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	uint32_t leaves = 0;
	for (uint32_t c = 0; c < ft.n_comp; c++)
		leaves += ft.comp_leaves[c];
	if (!leaves) {
		snprintf(err, errlen, "not a fat tree: no switch has a CA");
		goto out;
	}
	if (ft_rank(&ft, o, err, errlen) < 0)
		goto out;
	ft_split(&ft);
	if (ft_order(&ft) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (uint32_t r = 0; r < ft.n; r++) {
		sort_links(&ft, ft.up + ft.up_off[r], ft.up_off[r + 1] - ft.up_off[r]);
		sort_links(&ft, ft.dn + ft.dn_off[r], ft.dn_off[r + 1] - ft.dn_off[r]);
	}
	ft_desc(&ft);
	if (ft_route_cas(&ft, err, errlen) < 0)
		goto out;
	ft_route_switches(&ft);
	if (vms && ft.n_vsw && ft_route_vms(&ft) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if ((ft.n_vsw && ft_vs_copy(&ft) < 0) || ft_fill(&ft) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	ft_vs_rows(&ft);
	rc = 0;
out:
	ft_free(&ft);
	return rc;
}

int ftree_route(const struct fabric *f, const struct route_opts *o,
		struct lft_tables *t, char *err, size_t errlen)
{
	return ft_run(f, o, t, 0, NULL, err, errlen);
}

int ftree_route_hooked(const struct fabric *f, const struct route_opts *o,
		       struct lft_tables *t, const struct ft_hooks *hk,
		       char *err, size_t errlen)
{
	return ft_run(f, o, t, 0, hk, err, errlen);
}

int vswitch_ftree_route(const struct fabric *f, const struct route_opts *o,
			struct lft_tables *t, char *err, size_t errlen)
{
	return ft_run(f, o, t, 1, NULL, err, errlen);
}

int ftree_levels(const struct fabric *f, const struct lft_tables *t,
		 uint32_t *rank, char *err, size_t errlen)
{
	struct ft ft = { .f = f, .t = (struct lft_tables *)t, .n = t->n_sw,
			 .stride = 1 };
	struct route_opts none = { 0 };
	uint32_t deepest = 0, leaves = 0;
	int rc = -1;

	if (ft_alloc(&ft) < 0 || ft_links(&ft) < 0 || ft_components(&ft) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (uint32_t c = 0; c < ft.n_comp; c++)
		leaves += ft.comp_leaves[c];
	if (!leaves) {
		snprintf(err, errlen, "not a fat tree: no switch has a CA");
		goto out;
	}
	/* each vSwitch is a component of its own */
	if (ft.n_comp - ft.n_vsw != 1) {
		snprintf(err, errlen, "not a fat tree: %u components",
			 ft.n_comp - ft.n_vsw);
		goto out;
	}
	if (ft_rank(&ft, &none, err, errlen) < 0)
		goto out;
	memcpy(rank, ft.rank, (size_t)ft.n * sizeof(*rank));
	for (uint32_t r = 0; r < ft.n; r++)
		if (n_ca(&ft, r) && ft.rank[r] > deepest)
			deepest = ft.rank[r];
	for (uint32_t r = 0; r < ft.n; r++) {
		if (ft.vsw[r]) {
			uint32_t leaf = fabric_vswitch_leaf(f, t->sw_node[r]);
			rank[r] = leaf == FAB_NONE ? deepest + 1 :
				  ft.rank[t->row_of_node[leaf]] + 1;
			continue;
		}
		if (ft.rank[r] == UINT32_MAX) {
			snprintf(err, errlen, "not a fat tree: switch 0x%016llx unranked",
				 (unsigned long long)row_node(&ft, r)->guid);
			goto out;
		}
		if (n_ca(&ft, r) && ft.rank[r] != deepest) {
			snprintf(err, errlen,
				 "not a fat tree: switch 0x%016llx has CAs above the leaf level",
				 (unsigned long long)row_node(&ft, r)->guid);
			goto out;
		}
		for (uint32_t e = ft.adj_off[r]; e < ft.adj_off[r + 1]; e++) {
			uint32_t v = ft.adj[e].row;
			if (ft.rank[v] + 1 != ft.rank[r] &&
			    ft.rank[r] + 1 != ft.rank[v]) {
				snprintf(err, errlen,
					 "not a fat tree: link between switches 0x%016llx and 0x%016llx within a level",
					 (unsigned long long)row_node(&ft, r)->guid,
					 (unsigned long long)row_node(&ft, v)->guid);
				goto out;
			}
		}
	}
	rc = 0;
out:
	ft_free(&ft);
	return rc;
}
