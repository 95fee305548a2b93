#include "engine.h"

#include <stdlib.h>
#include <string.h>

/* Every engine, each defined in its own file (routing/NAME.c). */
extern const struct routing_engine minhop_engine;
extern const struct routing_engine updn_engine;
extern const struct routing_engine ftree_engine;
extern const struct routing_engine dmodk_engine;

static const struct routing_engine *engine_at(size_t i)
{
	switch (i) {
	case 0: return &minhop_engine;
	case 1: return &updn_engine;
	case 2: return &ftree_engine;
	case 3: return &dmodk_engine;
	}
	return NULL;
}
#define N_ENGINE_SLOTS 4

const struct routing_engine *routing_engine_find(const char *name)
{
	for (size_t i = 0; i < N_ENGINE_SLOTS; i++) {
		const struct routing_engine *e = engine_at(i);
		if (e && e->name && !strcmp(e->name, name))
			return e;
	}
	return NULL;
}

const char *routing_engine_names(void)
{
	return "minhop updn ftree dmodk";
}

int lft_tables_alloc(struct lft_tables *t, const struct fabric *f)
{
	memset(t, 0, sizeof(*t));
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (f->nodes[i].type == FAB_SWITCH)
			n++;
	t->n_sw = n;
	t->max_lid = f->max_lid;
	t->sw_node = malloc(((size_t)n + 1) * sizeof(*t->sw_node));
	t->row_of_node = malloc(((size_t)f->n_nodes + 1) * sizeof(*t->row_of_node));
	t->port = malloc(((size_t)n * (t->max_lid + 1)) + 1);
	if (!t->sw_node || !t->row_of_node || !t->port) {
		lft_tables_free(t);
		return -1;
	}
	memset(t->port, LFT_DROP, (size_t)n * (t->max_lid + 1));
	uint32_t r = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		t->row_of_node[i] = FAB_NONE;
		if (f->nodes[i].type == FAB_SWITCH) {
			t->sw_node[r] = i;
			t->row_of_node[i] = r++;
		}
	}
	return 0;
}

void lft_tables_free(struct lft_tables *t)
{
	free(t->sw_node);
	free(t->row_of_node);
	free(t->port);
	memset(t, 0, sizeof(*t));
}
