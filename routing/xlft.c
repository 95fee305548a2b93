/*
 * Secondary LFTs by copying PF columns (routing/xlft.h).
 */
#include <stdlib.h>
#include <string.h>

#include "routing/xlft.h"

/* Frees only the secondary part of t. */
static void xlft_clear(struct lft_tables *t)
{
	if (t->xrow)
		for (uint32_t r = 0; r < t->n_sw; r++)
			free(t->xrow[r]);
	free(t->xrow);
	free(t->xfirst);
	free(t->xcount);
	free(t->xdefault);
	t->xrow = NULL;
	t->xfirst = t->xcount = NULL;
	t->xdefault = NULL;
	t->x_blocks = 0;
}

/* The per-row arrays, rows empty, DefaultPorts none; 0 or -1. */
static int parts_alloc(struct lft_tables *t)
{
	size_t n = (size_t)t->n_sw + 1;
	t->xrow = calloc(n, sizeof(*t->xrow));
	t->xfirst = calloc(n, sizeof(*t->xfirst));
	t->xcount = calloc(n, sizeof(*t->xcount));
	t->xdefault = malloc(n);
	if (!t->xrow || !t->xfirst || !t->xcount || !t->xdefault)
		return -1;
	memset(t->xdefault, LFT_DROP, n);
	return 0;
}

/* A vSwitch sends every vLID not its own up; a physical switch: none. */
static void defaults_set(const struct fabric *f, struct lft_tables *t)
{
	for (uint32_t r = 0; r < t->n_sw; r++) {
		uint32_t node = t->sw_node[r];
		uint32_t up = fabric_is_vswitch(f, node) ?
			      fabric_vswitch_uplink(f, node) : FAB_NONE;
		t->xdefault[r] = up != FAB_NONE ? f->ports[up].num : LFT_DROP;
	}
}

/*
 * Makes row r hold blocks first .. first + count - 1 at least (new
 * entries none), keeping what it holds; 0 or -1 (ENOMEM, row unchanged).
 */
static int row_span(struct lft_tables *t, uint32_t r, uint32_t first,
		    uint32_t count)
{
	uint32_t of = t->xfirst[r], oc = t->xcount[r];
	uint32_t nf = first, ne = first + count;
	if (oc) {
		if (of < nf)
			nf = of;
		if (of + oc > ne)
			ne = of + oc;
		if (nf == of && ne == of + oc)
			return 0;
	}
	uint8_t *row = malloc((size_t)(ne - nf) * 64);
	if (!row)
		return -1;
	memset(row, LFT_DROP, (size_t)(ne - nf) * 64);
	if (oc)
		memcpy(row + (size_t)(of - nf) * 64, t->xrow[r], (size_t)oc * 64);
	free(t->xrow[r]);
	t->xrow[r] = row;
	t->xfirst[r] = nf;
	t->xcount[r] = ne - nf;
	return 0;
}

int xlft_set(struct lft_tables *t, uint32_t r, uint32_t x, uint8_t p)
{
	uint32_t b = x / 64;
	if (b < t->xfirst[r] || b >= t->xfirst[r] + t->xcount[r]) {
		if (p == LFT_DROP)
			return 0;	/* outside the row's blocks: none already */
		if (row_span(t, r, b, 1) < 0)
			return -1;
	}
	t->xrow[r][x - (size_t)t->xfirst[r] * 64] = p;
	return 0;
}

/* The vSwitch and VF port a vLID's entries lead to, and its PF's pLID. */
static uint32_t vlid_target(const struct fabric *f, const struct lft_tables *t,
			    uint32_t pi, uint8_t *vs_port, uint32_t *pl)
{
	int vf;
	uint32_t vs = fabric_vswitch_of(f, pi, &vf);
	uint32_t pf = vs == FAB_NONE ? FAB_NONE : fabric_vswitch_pf(f, vs);
	*pl = pf == FAB_NONE ? 0 : f->ports[pf].lid;
	if (vf < 0 || !*pl || *pl > t->max_lid || fabric_is_vlid(*pl) ||
	    fabric_vswitch_vf(f, vs, (unsigned)vf, vs_port) == FAB_NONE)
		return FAB_NONE;
	return vs;
}

int xlft_fill(const struct fabric *f, struct lft_tables *t,
	      struct xlft_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	xlft_clear(t);
	if (!f->vlid_port || f->max_vlid < FAB_VLID_BASE || !t->n_sw)
		return 0;
	t->x_blocks = (f->max_vlid - FAB_VLID_BASE) / 64 + 1;
	if (parts_alloc(t) < 0)
		goto enomem;
	defaults_set(f, t);
	/* physical switches: every block; vSwitches: their own vLIDs' */
	for (uint32_t r = 0; r < t->n_sw; r++)
		if (!fabric_is_vswitch(f, t->sw_node[r]) &&
		    row_span(t, r, 0, t->x_blocks) < 0)
			goto enomem;
	for (uint32_t v = FAB_VLID_BASE; v <= f->max_vlid; v++) {
		uint32_t pi = f->vlid_port[v - FAB_VLID_BASE], pl;
		uint8_t vs_port;
		if (pi == FAB_NONE)
			continue;
		rep->vlids++;
		uint32_t vs = vlid_target(f, t, pi, &vs_port, &pl);
		if (vs == FAB_NONE) {
			rep->unrouted++;
			continue;
		}
		uint32_t x = v - FAB_VLID_BASE;
		for (uint32_t r = 0; r < t->n_sw; r++) {
			uint32_t node = t->sw_node[r];
			if (node == vs) {
				if (xlft_set(t, r, x, vs_port) < 0)
					goto enomem;
			} else if (!fabric_is_vswitch(f, node)) {
				/* as the PF: the same path to the same vSwitch */
				t->xrow[r][x] = t->port[(size_t)r * (t->max_lid + 1) + pl];
			}
		}
	}
	for (uint32_t r = 0; r < t->n_sw; r++) {
		rep->rows += t->xcount[r] != 0;
		rep->blocks += t->xcount[r];
	}
	return 0;
enomem:
	xlft_clear(t);
	return -1;
}

int xlft_copy(struct lft_tables *dst, const struct lft_tables *src)
{
	xlft_clear(dst);
	if (!src->xrow)
		return 0;
	dst->x_blocks = src->x_blocks;
	if (parts_alloc(dst) < 0)
		goto enomem;
	memcpy(dst->xdefault, src->xdefault, src->n_sw);
	for (uint32_t r = 0; r < src->n_sw; r++) {
		if (!src->xcount[r])
			continue;
		size_t n = (size_t)src->xcount[r] * 64;
		if (!(dst->xrow[r] = malloc(n)))
			goto enomem;
		memcpy(dst->xrow[r], src->xrow[r], n);
		dst->xfirst[r] = src->xfirst[r];
		dst->xcount[r] = src->xcount[r];
	}
	return 0;
enomem:
	xlft_clear(dst);
	return -1;
}

int xlft_grow(const struct fabric *f, struct lft_tables *t, uint32_t x_blocks)
{
	if (t->xrow && x_blocks <= t->x_blocks)
		return 0;
	if (!t->xrow) {
		t->x_blocks = 0;
		if (parts_alloc(t) < 0)
			goto enomem;
		defaults_set(f, t);
	}
	for (uint32_t r = 0; r < t->n_sw; r++) {
		if (fabric_is_vswitch(f, t->sw_node[r]))
			continue;	/* its DefaultPort, until a vLID of its own */
		if (row_span(t, r, 0, x_blocks) < 0)
			goto enomem;
	}
	t->x_blocks = x_blocks;
	return 0;
enomem:
	xlft_clear(t);
	return -1;
}
