#include "sm/write/plan.h"

#include <infiniband/mad.h>
#include <stdlib.h>
#include <string.h>

void plan_init(struct plan *p)
{
	memset(p, 0, sizeof(*p));
}

void plan_release_wave(struct plan *p, int wave)
{
	if (wave < 0 || (uint32_t)wave >= p->n_waves)
		return;
	struct plan_wave *w = &p->waves[wave];
	free(w->ops);
	free(w->data);
	memset(w, 0, sizeof(*w));
}

void plan_free(struct plan *p)
{
	for (uint32_t w = 0; w < p->n_waves; w++)
		plan_release_wave(p, (int)w);
	free(p->waves);
	plan_init(p);
}

/* The wave, made if it is new; NULL for a bad number or ENOMEM. */
static struct plan_wave *get_wave(struct plan *p, int wave)
{
	if (wave < 0 || wave >= PLAN_MAX_WAVES)
		return NULL;
	if ((uint32_t)wave >= p->n_waves) {
		void *v = realloc(p->waves, ((size_t)wave + 1) * sizeof(*p->waves));
		if (!v)
			return NULL;
		p->waves = v;
		memset(p->waves + p->n_waves, 0,
		       ((size_t)wave + 1 - p->n_waves) * sizeof(*p->waves));
		p->n_waves = (uint32_t)wave + 1;
	}
	return &p->waves[wave];
}

uint32_t plan_data(struct plan *p, int wave, const uint8_t *payload)
{
	struct plan_wave *w = get_wave(p, wave);
	if (!w)
		return UINT32_MAX;
	if (w->n_data == w->cap_data) {
		uint32_t cap = w->cap_data ? w->cap_data * 2 : 64;
		void *d = realloc(w->data, (size_t)cap * sizeof(*w->data));
		if (!d)
			return UINT32_MAX;
		w->data = d;
		w->cap_data = cap;
	}
	memcpy(w->data[w->n_data], payload, SMP_DATA_SIZE);
	return w->n_data++;
}

static struct plan_op *new_op(struct plan *p, int wave)
{
	struct plan_wave *w = get_wave(p, wave);
	if (!w)
		return NULL;
	if (w->n == w->cap) {
		uint32_t cap = w->cap ? w->cap * 2 : 256;
		void *o = realloc(w->ops, (size_t)cap * sizeof(*w->ops));
		if (!o)
			return NULL;
		w->ops = o;
		w->cap = cap;
	}
	struct plan_op *o = &w->ops[w->n++];
	memset(o, 0, sizeof(*o));
	o->wave = (uint8_t)wave;
	o->count = 1;
	return o;
}

struct plan_op *plan_add(struct plan *p, int wave, int kind, uint32_t node,
			 uint8_t port, uint32_t mod, uint32_t data)
{
	if (kind < 0 || kind >= PLAN_NKINDS || wave < 0 ||
	    (uint32_t)wave >= p->n_waves || data >= p->waves[wave].n_data)
		return NULL;
	struct plan_op *o = new_op(p, wave);
	if (!o)
		return NULL;
	o->kind = (uint8_t)kind;
	o->node = node;
	o->port = port;
	o->mod = mod;
	o->data = data;
	return o;
}

struct plan_op *plan_add_lft_row(struct plan *p, int wave, uint32_t node,
				 uint32_t row, uint32_t first, uint32_t count)
{
	if (!count || count > UINT16_MAX)
		return NULL;
	struct plan_op *o = new_op(p, wave);
	if (!o)
		return NULL;
	o->kind = PLAN_LFT;
	o->flags = PLAN_LFT_ROW;
	o->node = node;
	o->mod = first;
	o->data = row;
	o->count = (uint16_t)count;
	return o;
}

void plan_set_tables(struct plan *p, const struct lft_tables *t)
{
	p->t = t;
}

void plan_close_wave(struct plan *p, int wave)
{
	if (wave >= 0 && (uint32_t)wave + 1 > p->closed)
		p->closed = (uint32_t)wave + 1;
}

void plan_seal(struct plan *p)
{
	p->sealed = 1;
}

uint16_t plan_attr(const struct plan_op *o)
{
	static const uint16_t attrs[PLAN_NKINDS] = {
		[PLAN_PORTINFO] = IB_ATTR_PORT_INFO,
		[PLAN_SWITCHINFO] = IB_ATTR_SWITCH_INFO,
		[PLAN_PKEY] = IB_ATTR_PKEY_TBL,
		[PLAN_LFT] = IB_ATTR_LINEARFORWTBL,
		[PLAN_SL2VL] = IB_ATTR_SLVL_TABLE,
		[PLAN_VLARB] = IB_ATTR_VL_ARBITRATION,
		[PLAN_MFT] = IB_ATTR_MULTICASTFORWTBL,
	};
	return o->kind == PLAN_VENDOR ? o->attr : attrs[o->kind];
}

uint32_t plan_op_mads(const struct plan_op *o)
{
	return (o->flags & PLAN_LFT_ROW) ? o->count : 1;
}

uint32_t plan_mad_mod(const struct plan_op *o, uint32_t i)
{
	return o->mod + i;
}

void plan_mad_payload(const struct plan *p, const struct plan_op *o,
		      uint32_t i, uint8_t *out)
{
	if (!(o->flags & PLAN_LFT_ROW)) {
		memcpy(out, p->waves[o->wave].data[o->data], SMP_DATA_SIZE);
		return;
	}
	const uint8_t *lft = lft_row(p->t, o->data);
	uint32_t first = (o->mod + i) * FAB_LFT_BLOCK, top = p->t->max_lid;
	memset(out, LFT_DROP, SMP_DATA_SIZE);
	if (first <= top)
		memcpy(out, lft + first, top - first + 1 < FAB_LFT_BLOCK ? top - first + 1 : FAB_LFT_BLOCK);
}

uint64_t plan_mads(const struct plan *p)
{
	uint64_t n = 0;
	for (uint32_t w = 0; w < p->n_waves; w++)
		for (uint32_t i = 0; i < p->waves[w].n; i++)
			n += plan_op_mads(&p->waves[w].ops[i]);
	return n;
}
