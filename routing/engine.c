#include "engine.h"

#include <stdlib.h>
#include <string.h>

extern const struct routing_engine minhop_engine;

static const struct routing_engine *const engines[] = {
	&minhop_engine,
};

const struct routing_engine *routing_engine_find(const char *name)
{
	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
		if (!strcmp(engines[i]->name, name))
			return engines[i];
	return NULL;
}

const char *routing_engine_names(void)
{
	return "minhop";
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
