/*
 * The partition model's readers (routing/partition.h).
 */
#include <stdlib.h>
#include <string.h>

#include "routing/partition.h"

const char *const part_policy_names[] = {
	"def-isolation", "vlane-isolation", "phy-isolation", NULL
};

void part_model_free(struct part_model *m)
{
	free(m->parts);
	free(m->mem_off);
	free(m->mem);
	free(m->route_part);
	free(m->weight);
	memset(m, 0, sizeof(*m));
}

unsigned part_pkeys(const struct part_model *m, const struct fabric *f,
		    uint32_t pi, uint16_t *out, unsigned max)
{
	if (pi >= m->n_ports || pi >= f->n_ports)
		return 0;	/* a port the model was not resolved with */
	const struct fab_port *p = &f->ports[pi];
	if (f->nodes[p->node].type == FAB_SWITCH && p->num != 0) {
		/* an enforcing switch port holds its end port's table */
		if (p->remote == FAB_NONE || !fabric_is_endport(f, p->remote))
			return 0;
		return part_pkeys(m, f, p->remote, out, max);
	}
	unsigned n = 0;
	for (uint32_t k = m->mem_off[pi]; k < m->mem_off[pi + 1] && n < max; k++) {
		uint16_t e = m->mem[k];
		out[n++] = (uint16_t)(m->parts[PART_IDX(e)].pkey | (e & PART_FULL));
	}
	return n;
}

/* Port pi's entry for partition idx, or 0 (not a member). */
static uint16_t entry_of(const struct part_model *m, uint32_t pi, uint16_t idx)
{
	for (uint32_t k = m->mem_off[pi]; k < m->mem_off[pi + 1]; k++)
		if (PART_IDX(m->mem[k]) == idx)
			return (uint16_t)(m->mem[k] | 0x4000);	/* non-zero */
	return 0;
}

uint16_t part_shared(const struct part_model *m, uint32_t a, uint32_t b,
		     uint16_t want)
{
	if (a >= m->n_ports || b >= m->n_ports)
		return PART_NONE;
	uint16_t best = PART_NONE;
	for (uint32_t k = m->mem_off[a]; k < m->mem_off[a + 1]; k++) {
		uint16_t ea = m->mem[k], idx = PART_IDX(ea);
		if (want != PART_NONE && m->parts[idx].pkey != (want & 0x7fff))
			continue;
		uint16_t eb = entry_of(m, b, idx);
		if (!eb || !((ea | eb) & PART_FULL))
			continue;
		if (idx != 0)
			return idx;	/* a tenant, the first in the policy */
		best = 0;
	}
	return best;
}

uint16_t part_by_pkey(const struct part_model *m, uint16_t pkey)
{
	for (uint32_t i = 0; i < m->n_parts; i++)
		if (m->parts[i].pkey == (pkey & 0x7fff))
			return (uint16_t)i;
	return PART_NONE;
}

void part_dest_mark(const struct part_model *m, uint32_t d, uint8_t *dmem,
		    uint32_t np, int on)
{
	for (uint32_t k = m->mem_off[d]; k < m->mem_off[d + 1]; k++) {
		uint16_t p = PART_IDX(m->mem[k]);
		if (p < np)
			dmem[p] = on ? ((m->mem[k] & PART_FULL) ? 2 : 1) : 0;
	}
}

uint32_t part_flow_parts(const struct part_model *m, uint32_t s,
			 const uint8_t *dmem, uint32_t np, uint16_t *out,
			 int *any)
{
	uint32_t n = 0;
	if (any)
		*any = 0;
	for (uint32_t k = m->mem_off[s]; k < m->mem_off[s + 1]; k++) {
		uint16_t e = m->mem[k], p = PART_IDX(e);
		if (p >= np || !dmem[p])
			continue;
		if (!(e & PART_FULL) && dmem[p] != 2)
			continue;	/* limited to limited */
		if (any)
			*any = 1;
		if (p != 0)
			out[n++] = p;
	}
	return n;
}
