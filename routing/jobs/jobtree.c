/*
 * The XGFT view of a fabric over its D-mod-K tables (routing/jobs/jobroute.h):
 * levels, up ports, the leaves below each switch, the hosts in subtree
 * order, and the channels loads are counted on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/jobs/jobtree.h"

#define MAX_LEVELS 16

static int err_out(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "not a fat tree the job routing understands: %s", what);
	return -1;
}

/* The row across the cable of port p of row r, or NONE (a CA, nothing). */
static uint32_t peer_row(const struct job_tree *tr, uint32_t r, uint32_t p)
{
	const struct fabric *f = tr->f;
	const struct fab_port *fp = fabric_portp(f, tr->base->sw_node[r], p);
	if (fp->remote == FAB_NONE)
		return JT_NONE;
	return tr->base->row_of_node[f->ports[fp->remote].node];
}

/* Levels: leaves (switches with a CA) 1, each other switch one more than
 * the switches below it, which must agree; every cable joins adjacent
 * levels. */
static int levels(struct job_tree *tr, char *err, size_t errlen)
{
	const struct fabric *f = tr->f;
	uint32_t n = tr->n_sw, *queue = malloc((n + 1) * sizeof(*queue)), qn = 0;
	if (!queue)
		return err_out(err, errlen, "out of memory");
	for (uint32_t r = 0; r < n; r++) {
		const struct fab_node *nd = &f->nodes[tr->base->sw_node[r]];
		if (fabric_is_vswitch(f, tr->base->sw_node[r])) {
			free(queue);
			return err_out(err, errlen, "a vSwitch");
		}
		for (uint32_t p = 1; p <= nd->nports; p++) {
			const struct fab_port *fp = fabric_portp(f, tr->base->sw_node[r], p);
			if (fp->remote != FAB_NONE &&
			    f->nodes[f->ports[fp->remote].node].type != FAB_SWITCH && !tr->lev[r]) {
				tr->lev[r] = 1;
				queue[qn++] = r;
			}
		}
	}
	if (!qn) {
		free(queue);
		return err_out(err, errlen, "no switch has a CA");
	}
	for (uint32_t qi = 0; qi < qn; qi++) {
		uint32_t r = queue[qi];
		const struct fab_node *nd = &f->nodes[tr->base->sw_node[r]];
		for (uint32_t p = 1; p <= nd->nports; p++) {
			uint32_t q = peer_row(tr, r, p);
			if (q != JT_NONE && !tr->lev[q]) {
				tr->lev[q] = tr->lev[r] + 1;
				queue[qn++] = q;
			}
		}
	}
	free(queue);
	for (uint32_t r = 0; r < n; r++) {
		if (!tr->lev[r])
			return err_out(err, errlen, "a switch out of reach of the hosts");
		if (tr->lev[r] > MAX_LEVELS)
			return err_out(err, errlen, "more than 16 levels");
		if (tr->lev[r] > tr->height)
			tr->height = tr->lev[r];
	}
	for (uint32_t r = 0; r < n; r++) {
		const struct fab_node *nd = &f->nodes[tr->base->sw_node[r]];
		for (uint32_t p = 1; p <= nd->nports; p++) {
			uint32_t q = peer_row(tr, r, p);
			if (q == JT_NONE)
				continue;
			if (tr->lev[q] + 1 != tr->lev[r] && tr->lev[r] + 1 != tr->lev[q]) {
				char why[160];
				snprintf(why, sizeof(why), "%s port %u joins levels %u and %u",
					 nd->desc, p, tr->lev[r], tr->lev[q]);
				return err_out(err, errlen, why);
			}
		}
		if (tr->lev[r] > 1) {
			/* a switch above the leaves has no CA */
			for (uint32_t p = 1; p <= nd->nports; p++) {
				const struct fab_port *fp = fabric_portp(f, tr->base->sw_node[r], p);
				if (fp->remote != FAB_NONE &&
				    f->nodes[f->ports[fp->remote].node].type != FAB_SWITCH)
					return err_out(err, errlen, "a CA above the leaves");
			}
		}
	}
	return 0;
}

/* Up ports of every row, in port order. */
static int up_ports(struct job_tree *tr)
{
	uint32_t n = tr->n_sw, total = 0;
	tr->upoff = calloc(n + 1, sizeof(*tr->upoff));
	if (!tr->upoff)
		return -1;
	for (int pass = 0; pass < 2; pass++) {
		total = 0;
		for (uint32_t r = 0; r < n; r++) {
			const struct fab_node *nd = &tr->f->nodes[tr->base->sw_node[r]];
			tr->upoff[r] = total;
			for (uint32_t p = 1; p <= nd->nports; p++) {
				uint32_t q = peer_row(tr, r, p);
				if (q == JT_NONE || tr->lev[q] != tr->lev[r] + 1)
					continue;
				if (pass) {
					tr->up_port[total] = (uint8_t)p;
					tr->up_row[total] = q;
				}
				total++;
			}
		}
		tr->upoff[n] = total;
		if (!pass) {
			tr->up_port = malloc((total + 1) * sizeof(*tr->up_port));
			tr->up_row = malloc((total + 1) * sizeof(*tr->up_row));
			if (!tr->up_port || !tr->up_row)
				return -1;
		}
	}
	return 0;
}

/* below[r]: the leaves under row r, by leaf index (a bitmap). */
static int leaves_below(struct job_tree *tr)
{
	uint32_t n = tr->n_sw;
	tr->words = (tr->n_leaves + 63) / 64;
	tr->below = calloc((size_t)n * tr->words + 1, sizeof(*tr->below));
	if (!tr->below)
		return -1;
	for (uint32_t lv = 1; lv <= tr->height; lv++)
		for (uint32_t r = 0; r < n; r++) {
			if (tr->lev[r] != lv)
				continue;
			uint64_t *b = &tr->below[(size_t)r * tr->words];
			if (lv == 1)
				b[tr->leaf_idx[r] / 64] |= 1ull << (tr->leaf_idx[r] % 64);
			for (uint32_t u = tr->upoff[r]; u < tr->upoff[r + 1]; u++) {
				uint64_t *pb = &tr->below[(size_t)tr->up_row[u] * tr->words];
				for (uint32_t w = 0; w < tr->words; w++)
					pb[w] |= b[w];
			}
		}
	return 0;
}

/* Sort keys: per leaf, per level its group's key (lowest leaf GUID). */
struct leafkey {
	uint32_t row;
	uint64_t key[MAX_LEVELS + 1];	/* [lv]: group at lv (top first when sorting) */
	uint32_t height;
};

/* Whether leaves a and b are in different subtrees at level lv. */
static int cmp_level(const struct leafkey *a, const struct leafkey *b, uint32_t lv)
{
	return a->key[lv] != b->key[lv];
}

static int cmp_leafkey(const void *a, const void *b)
{
	const struct leafkey *x = a, *y = b;
	for (uint32_t lv = x->height; lv >= 1; lv--)
		if (x->key[lv] != y->key[lv])
			return x->key[lv] < y->key[lv] ? -1 : 1;
	return 0;
}

/*
 * Leaves in subtree order, hosts in it.  A leaf's group at level lv is
 * the set of leaves below the level-lv switches above it (an XGFT's pod
 * at lv = 2); its key the lowest GUID among them.
 */
static int hosts_in_order(struct job_tree *tr)
{
	const struct fabric *f = tr->f;
	uint32_t n = tr->n_sw, nl = tr->n_leaves;
	struct leafkey *k = calloc(nl + 1, sizeof(*k));
	uint64_t *set = calloc(tr->words + 1, sizeof(*set));
	if (!k || !set) {
		free(k);
		free(set);
		return -1;
	}
	for (uint32_t r = 0; r < n; r++)
		if (tr->lev[r] == 1)
			k[tr->leaf_idx[r]].row = r;
	for (uint32_t i = 0; i < nl; i++) {
		uint32_t leaf = k[i].row;
		k[i].height = tr->height;
		k[i].key[1] = f->nodes[tr->base->sw_node[leaf]].guid;
		/* walk up along the first up link: every ancestor at a level
		 * covers the same leaves in a fat tree */
		uint32_t r = leaf;
		for (uint32_t lv = 2; lv <= tr->height; lv++) {
			if (tr->upoff[r] == tr->upoff[r + 1])
				break;
			r = tr->up_row[tr->upoff[r]];
			memcpy(set, &tr->below[(size_t)r * tr->words], tr->words * sizeof(*set));
			uint64_t lo = UINT64_MAX;
			for (uint32_t j = 0; j < nl; j++)
				if ((set[j / 64] >> (j % 64)) & 1) {
					uint64_t g = f->nodes[tr->base->sw_node[k[j].row]].guid;
					if (g < lo)
						lo = g;
				}
			k[i].key[lv] = lo;
		}
	}
	/* leaf keys by leaf index: k[] is about to be sorted */
	struct leafkey *byidx = malloc((nl + 1) * sizeof(*byidx));
	if (!byidx) {
		free(k);
		free(set);
		return -1;
	}
	memcpy(byidx, k, nl * sizeof(*k));
	qsort(k, nl, sizeof(*k), cmp_leafkey);
	free(set);
	/* hosts: leaves in that order, then port order */
	uint32_t nh = 0;
	for (int pass = 0; pass < 2; pass++) {
		nh = 0;
		for (uint32_t i = 0; i < nl; i++) {
			uint32_t node = tr->base->sw_node[k[i].row];
			const struct fab_node *nd = &f->nodes[node];
			for (uint32_t p = 1; p <= nd->nports; p++) {
				const struct fab_port *fp = fabric_portp(f, node, p);
				if (fp->remote == FAB_NONE)
					continue;
				const struct fab_port *ca = &f->ports[fp->remote];
				if (f->nodes[ca->node].type == FAB_SWITCH || !ca->lid ||
				    fabric_is_vlid(ca->lid) || ca->lid > tr->base->max_lid)
					continue;
				if (pass) {
					tr->host_port[nh] = fp->remote;
					tr->host_leaf[nh] = k[i].row;
					tr->host_down[nh] = (uint8_t)p;
					tr->host_lid[nh] = ca->lid;
					tr->host_of[fp->remote] = (int32_t)nh;
					for (uint32_t lv = 1; lv <= tr->height; lv++) {
						uint32_t *g = &tr->group[(size_t)(lv - 1) * tr->cap_hosts + nh];
						if (nh == 0)
							*g = 0;
						else if (cmp_level(&byidx[tr->leaf_idx[k[i].row]],
								   &byidx[tr->leaf_idx[tr->host_leaf[nh - 1]]], lv))
							*g = tr->group[(size_t)(lv - 1) * tr->cap_hosts + nh - 1] + 1;
						else
							*g = tr->group[(size_t)(lv - 1) * tr->cap_hosts + nh - 1];
					}
				}
				nh++;
			}
		}
		if (!pass) {
			tr->cap_hosts = nh + 1;
			tr->host_port = malloc(tr->cap_hosts * sizeof(*tr->host_port));
			tr->host_leaf = malloc(tr->cap_hosts * sizeof(*tr->host_leaf));
			tr->host_down = malloc(tr->cap_hosts * sizeof(*tr->host_down));
			tr->host_lid = malloc(tr->cap_hosts * sizeof(*tr->host_lid));
			tr->group = malloc((size_t)tr->height * tr->cap_hosts * sizeof(*tr->group));
			tr->host_of = malloc((f->n_ports + 1) * sizeof(*tr->host_of));
			if (!tr->host_port || !tr->host_leaf || !tr->host_down || !tr->host_lid ||
			    !tr->group || !tr->host_of) {
				free(k);
				free(byidx);
				return -1;
			}
			for (uint32_t i = 0; i < f->n_ports; i++)
				tr->host_of[i] = -1;
		}
	}
	tr->n_hosts = nh;
	free(k);
	free(byidx);
	return 0;
}

/*
 * From every top switch the base tables must take each host's LID down
 * to it: the way down the job routing never changes.
 */
static int check_down(const struct job_tree *tr, char *err, size_t errlen)
{
	for (uint32_t r = 0; r < tr->n_sw; r++) {
		if (tr->lev[r] != tr->height)
			continue;
		for (uint32_t h = 0; h < tr->n_hosts; h++) {
			uint32_t at = r, hops = 0;
			while (at != tr->host_leaf[h]) {
				uint8_t p = jt_base_port(tr, at, tr->host_lid[h]);
				uint32_t q = p == LFT_DROP ? JT_NONE : peer_row(tr, at, p);
				if (q == JT_NONE || tr->lev[q] + 1 != tr->lev[at] || ++hops > MAX_LEVELS) {
					char why[200];
					snprintf(why, sizeof(why),
						 "the base tables do not take LID %u down from %s",
						 tr->host_lid[h],
						 tr->f->nodes[tr->base->sw_node[r]].desc);
					return err_out(err, errlen, why);
				}
				at = q;
			}
			if (jt_base_port(tr, at, tr->host_lid[h]) != tr->host_down[h]) {
				char why[160];
				snprintf(why, sizeof(why), "the base tables do not deliver LID %u",
					 tr->host_lid[h]);
				return err_out(err, errlen, why);
			}
		}
	}
	return 0;
}

struct job_tree *job_tree_new(const struct fabric *f, const struct lft_tables *base,
			      char *err, size_t errlen)
{
	struct job_tree *tr = calloc(1, sizeof(*tr));
	if (!tr) {
		err_out(err, errlen, "out of memory");
		return NULL;
	}
	tr->f = f;
	tr->base = base;
	tr->n_sw = base->n_sw;
	uint32_t widest = 0;
	for (uint32_t r = 0; r < tr->n_sw; r++)
		if (f->nodes[base->sw_node[r]].nports > widest)
			widest = f->nodes[base->sw_node[r]].nports;
	tr->stride = widest + 1;
	tr->lev = calloc(tr->n_sw + 1, sizeof(*tr->lev));
	tr->leaf_idx = malloc((tr->n_sw + 1) * sizeof(*tr->leaf_idx));
	if (!tr->n_sw) {
		err_out(err, errlen, "no switch");
		goto fail;
	}
	if (!tr->lev || !tr->leaf_idx) {
		err_out(err, errlen, "out of memory");
		goto fail;
	}
	if (levels(tr, err, errlen) < 0)
		goto fail;
	for (uint32_t r = 0; r < tr->n_sw; r++)
		tr->leaf_idx[r] = tr->lev[r] == 1 ? tr->n_leaves++ : JT_NONE;
	if (up_ports(tr) < 0 || leaves_below(tr) < 0 || hosts_in_order(tr) < 0) {
		err_out(err, errlen, "out of memory");
		goto fail;
	}
	for (uint32_t r = 0; r < tr->n_sw; r++)
		if (tr->lev[r] < tr->height && tr->upoff[r] == tr->upoff[r + 1]) {
			char why[160];
			snprintf(why, sizeof(why), "%s has no up link",
				 f->nodes[base->sw_node[r]].desc);
			err_out(err, errlen, why);
			goto fail;
		}
	if (!tr->n_hosts) {
		err_out(err, errlen, "no host with a LID");
		goto fail;
	}
	if (check_down(tr, err, errlen) < 0)
		goto fail;
	tr->n_ch = tr->n_sw * tr->stride + tr->n_hosts;
	return tr;
fail:
	job_tree_free(tr);
	return NULL;
}

void job_tree_free(struct job_tree *tr)
{
	if (!tr)
		return;
	free(tr->lev);
	free(tr->leaf_idx);
	free(tr->upoff);
	free(tr->up_port);
	free(tr->up_row);
	free(tr->below);
	free(tr->host_port);
	free(tr->host_leaf);
	free(tr->host_down);
	free(tr->host_lid);
	free(tr->group);
	free(tr->host_of);
	free(tr);
}

uint32_t job_tree_hosts(const struct job_tree *tr)
{
	return tr->n_hosts;
}

uint32_t job_tree_host_port(const struct job_tree *tr, uint32_t h)
{
	return h < tr->n_hosts ? tr->host_port[h] : FAB_NONE;
}

int32_t job_tree_host_of_port(const struct job_tree *tr, uint32_t pi)
{
	return pi < tr->f->n_ports ? tr->host_of[pi] : -1;
}

uint32_t job_tree_levels(const struct job_tree *tr)
{
	return tr->height;
}

uint32_t job_tree_group(const struct job_tree *tr, uint32_t h, uint32_t lv)
{
	if (h >= tr->n_hosts || lv < 1 || lv > tr->height)
		return 0;
	return tr->group[(size_t)(lv - 1) * tr->cap_hosts + h];
}

uint32_t job_tree_channels(const struct job_tree *tr)
{
	return tr->n_ch;
}

void job_tree_channel(const struct job_tree *tr, uint32_t ch, uint32_t *node,
		      uint8_t *port)
{
	uint32_t sw = tr->n_sw * tr->stride;
	if (ch < sw) {
		*node = tr->base->sw_node[ch / tr->stride];
		*port = (uint8_t)(ch % tr->stride);
	} else if (ch - sw < tr->n_hosts) {
		const struct fab_port *p = &tr->f->ports[tr->host_port[ch - sw]];
		*node = p->node;
		*port = p->num;
	} else {
		*node = FAB_NONE;
		*port = 0;
	}
}
