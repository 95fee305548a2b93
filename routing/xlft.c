/*
 * Secondary LFTs by copying PF columns (routing/xlft.h).
 */
#include <stdlib.h>
#include <string.h>

#include "xlft.h"

void xlft_clear(struct lft_tables *t)
{
	if (t->xrow)
		for (uint32_t r = 0; r < t->n_sw; r++)
			free(t->xrow[r]);
	free(t->xrow);
	free(t->xdefault);
	t->xrow = NULL;
	t->xdefault = NULL;
	t->x_blocks = 0;
}

static uint8_t *row_get(struct lft_tables *t, uint32_t r)
{
	if (!t->xrow[r]) {
		size_t n = (size_t)t->x_blocks * 64;
		t->xrow[r] = malloc(n);
		if (t->xrow[r])
			memset(t->xrow[r], LFT_DROP, n);
	}
	return t->xrow[r];
}

int xlft_fill(const struct fabric *f, struct lft_tables *t,
	      struct xlft_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	xlft_clear(t);
	if (!f->vlid_port || f->max_vlid < FAB_VLID_BASE || !t->n_sw)
		return 0;
	t->x_blocks = (f->max_vlid - FAB_VLID_BASE) / 64 + 1;
	t->xrow = calloc(t->n_sw, sizeof(*t->xrow));
	t->xdefault = malloc(t->n_sw);
	if (!t->xrow || !t->xdefault)
		goto enomem;
	for (uint32_t r = 0; r < t->n_sw; r++) {
		uint32_t node = t->sw_node[r];
		t->xdefault[r] = LFT_DROP;
		if (fabric_is_vswitch(f, node)) {
			uint32_t up = fabric_vswitch_uplink(f, node);
			/* a vSwitch sends every vLID not its own up */
			if (up != FAB_NONE)
				t->xdefault[r] = f->ports[up].num;
		} else if (!row_get(t, r)) {
			goto enomem;
		}
	}
	for (uint32_t v = FAB_VLID_BASE; v <= f->max_vlid; v++) {
		uint32_t pi = f->vlid_port[v - FAB_VLID_BASE];
		if (pi == FAB_NONE)
			continue;
		rep->vlids++;
		int vf;
		uint32_t vs = fabric_vswitch_of(f, pi, &vf);
		uint32_t pf = vs == FAB_NONE ? FAB_NONE : fabric_vswitch_pf(f, vs);
		uint32_t pl = pf == FAB_NONE ? 0 : f->ports[pf].lid;
		uint8_t vs_port = 0;
		if (vf < 0 || !pl || pl > t->max_lid || fabric_is_vlid(pl) ||
		    fabric_vswitch_vf(f, vs, (unsigned)vf, &vs_port) == FAB_NONE) {
			rep->unrouted++;
			continue;
		}
		size_t x = v - FAB_VLID_BASE;
		for (uint32_t r = 0; r < t->n_sw; r++) {
			uint32_t node = t->sw_node[r];
			if (node == vs) {
				uint8_t *row = row_get(t, r);
				if (!row)
					goto enomem;
				row[x] = vs_port;
			} else if (!fabric_is_vswitch(f, node)) {
				/* as the PF: the same path to the same vSwitch */
				t->xrow[r][x] = t->port[(size_t)r * (t->max_lid + 1) + pl];
			}
		}
	}
	for (uint32_t r = 0; r < t->n_sw; r++)
		rep->rows += t->xrow[r] != NULL;
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
	size_t n = (size_t)src->x_blocks * 64;
	dst->x_blocks = src->x_blocks;
	dst->xrow = calloc((size_t)src->n_sw + 1, sizeof(*dst->xrow));
	dst->xdefault = malloc((size_t)src->n_sw + 1);
	if (!dst->xrow || !dst->xdefault)
		goto enomem;
	memcpy(dst->xdefault, src->xdefault, src->n_sw);
	for (uint32_t r = 0; r < src->n_sw; r++) {
		if (!src->xrow[r])
			continue;
		if (!(dst->xrow[r] = malloc(n)))
			goto enomem;
		memcpy(dst->xrow[r], src->xrow[r], n);
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
		t->xrow = calloc((size_t)t->n_sw + 1, sizeof(*t->xrow));
		t->xdefault = malloc((size_t)t->n_sw + 1);
		if (!t->xrow || !t->xdefault)
			goto enomem;
		for (uint32_t r = 0; r < t->n_sw; r++) {
			uint32_t node = t->sw_node[r];
			uint32_t up = fabric_is_vswitch(f, node) ?
				      fabric_vswitch_uplink(f, node) : FAB_NONE;
			t->xdefault[r] = up != FAB_NONE ? f->ports[up].num : LFT_DROP;
		}
	}
	size_t on = (size_t)t->x_blocks * 64, nn = (size_t)x_blocks * 64;
	for (uint32_t r = 0; r < t->n_sw; r++) {
		if (!t->xrow[r] && fabric_is_vswitch(f, t->sw_node[r]))
			continue;	/* its DefaultPort, until a vLID of its own */
		uint8_t *row = realloc(t->xrow[r], nn);
		if (!row)
			goto enomem;
		memset(row + (t->xrow[r] ? on : 0), LFT_DROP, nn - (t->xrow[r] ? on : 0));
		t->xrow[r] = row;
	}
	t->x_blocks = x_blocks;
	return 0;
enomem:
	xlft_clear(t);
	return -1;
}
