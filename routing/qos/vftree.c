/*
 * vFtree: the (source leaf, destination leaf) pairs of a fat tree spread
 * over the data VLs, SL = VL (the thesis's Paper III, vFtree, Algorithm 1).
 */
#include "routing/qos/vftree.h"

#include <stdlib.h>
#include <string.h>

#define VL_UNSET 0xff

/* Algorithm 1 -- Assign Virtual Lanes, as the paper gives it. */
void vftree_assign_vls(uint8_t *vl, uint32_t n, unsigned maxvl)
{
	memset(vl, VL_UNSET, (size_t)n * n);
	for (uint32_t src = 0; src < n; src++) {
		unsigned v;
		if (((src * 2) / maxvl) % 2)
			v = (src * 2) % maxvl + 1;
		else
			v = (src * 2) % maxvl;
		for (uint32_t dst = 0; dst < n; dst++) {
			size_t sd = (size_t)src * n + dst;
			size_t ds = (size_t)dst * n + src;
			if (dst > src) {
				/* the paper's set checks always pass: only
				   row src sets these two entries */
				if (vl[sd] == VL_UNSET)
					vl[sd] = (uint8_t)v;
				if (vl[ds] == VL_UNSET)
					vl[ds] = (uint8_t)v;
				v = (v + 1) % maxvl;
			} else if (dst == src) {
				vl[sd] = 0;
			}
		}
	}
}

static int is_end_node(const struct fabric *f, uint32_t node)
{
	return f->nodes[node].type == FAB_CA ||
	       f->nodes[node].type == FAB_ROUTER;
}

/*
 * The leaf switch (node index) of CA port pi: the switch it links to, or
 * the physical switch above the vSwitch it hangs on; FAB_NONE.
 */
static uint32_t leaf_of(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	if (p->num == 0 || !(p->flags & FPORT_PRESENT) ||
	    p->remote == FAB_NONE || p->remote >= f->n_ports)
		return FAB_NONE;
	uint32_t r = f->ports[p->remote].node;
	if (f->nodes[r].type != FAB_SWITCH)
		return FAB_NONE;
	if (fabric_is_vswitch(f, r))
		return fabric_vswitch_leaf(f, r);
	return r;
}

static const struct fabric *sort_f;

static int by_guid(const void *a, const void *b)
{
	uint64_t ga = sort_f->nodes[*(const uint32_t *)a].guid;
	uint64_t gb = sort_f->nodes[*(const uint32_t *)b].guid;
	if (ga != gb)
		return ga < gb ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 :
	       *(const uint32_t *)a > *(const uint32_t *)b;
}

int vftree_apply(const struct fabric *f, struct lft_tables *t,
		 unsigned max_vls)
{
	uint32_t *leaf = NULL, *idx = NULL;
	uint8_t *vl = NULL;
	uint32_t n = 0;
	size_t cols = (size_t)t->max_lid + 1;

	lft_tables_free_qos(t);
	if (max_vls < 1 || max_vls > VFTREE_MAX_VLS)
		return -1;
	/* The leaves, in ascending node GUID order. */
	leaf = malloc(((size_t)f->n_nodes + 1) * sizeof(*leaf));
	idx = malloc(((size_t)f->n_nodes + 1) * sizeof(*idx));
	if (!leaf || !idx)
		goto fail;
	for (uint32_t i = 0; i < f->n_nodes; i++)
		idx[i] = FAB_NONE;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		if (!is_end_node(f, i))
			continue;
		const struct fab_node *nd = &f->nodes[i];
		for (unsigned p = 1; p <= nd->nports; p++) {
			uint32_t l = leaf_of(f, nd->first_port + p);
			if (l != FAB_NONE && idx[l] == FAB_NONE) {
				idx[l] = 0;
				leaf[n++] = l;
			}
		}
	}
	sort_f = f;
	qsort(leaf, n, sizeof(*leaf), by_guid);
	if (n >= LFT_SL_NOCLASS)
		goto fail;
	for (uint32_t k = 0; k < n; k++)
		idx[leaf[k]] = k;
	if (!(vl = malloc((size_t)n * n + 1)))
		goto fail;
	vftree_assign_vls(vl, n, max_vls);

	/* Source classes: each CA port's LIDs (pLIDs, LMC range) its leaf. */
	if (!(t->sl_class = malloc(cols * sizeof(*t->sl_class))))
		goto fail;
	for (size_t l = 0; l < cols; l++)
		t->sl_class[l] = LFT_SL_NOCLASS;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (!is_end_node(f, p->node) || !fabric_is_endport(f, pi) ||
		    p->lid == 0 || p->lid > t->max_lid)
			continue;
		uint32_t l = leaf_of(f, pi);
		if (l == FAB_NONE)
			continue;
		uint32_t span = 1u << fabric_port_lmc(f, pi);
		for (uint32_t k = 0; k < span && p->lid + k <= t->max_lid; k++)
			t->sl_class[p->lid + k] = (uint16_t)idx[l];
	}
	/* SL = VL[leaf(src)][leaf(dst)] between CA LIDs, 0 elsewhere. */
	t->n_sl_class = n;
	if (!(t->sl = malloc((size_t)n * cols + 1)))
		goto fail;
	for (uint32_t c = 0; c < n; c++) {
		uint8_t *row = t->sl + (size_t)c * cols;
		for (size_t d = 0; d < cols; d++) {
			uint16_t dc = t->sl_class[d];
			row[d] = dc == LFT_SL_NOCLASS ? 0 :
				 vl[(size_t)c * n + dc];
		}
	}
	if (lft_sl2vl_identity(f, t, max_vls) < 0)
		goto fail;
	free(leaf);
	free(idx);
	free(vl);
	return 0;
fail:
	lft_tables_free_qos(t);
	free(leaf);
	free(idx);
	free(vl);
	return -1;
}
