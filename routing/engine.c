/*
 * The routing engine table: every engine ibsmd has, with what it promises.
 * The policy's validation (sm/model/config.c), the selection (sm/route.c), the
 * verifier (verify_engine_deadlock_free) and ibsmd --help read it; no
 * other file lists the engines.
 */
#include "routing/engines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Objects of their own: the unit tests call them directly. */
const struct routing_engine minhop_engine = {
	.name = "minhop",
	.route = minhop_route,
	.summary = "shortest paths, balanced over each switch's ports",
	.deadlock_free = 0,
	.topologies = "any topology",
};
const struct routing_engine updn_engine = {
	.name = "updn",
	.route = updn_route,
	.summary = "up*-down* from root switches",
	.deadlock_free = 1,
	.topologies = "any topology",
};
const struct routing_engine ftree_engine = {
	.name = "ftree",
	.route = ftree_route,
	.summary = "OpenSM-style fat-tree routing, least-loaded links",
	.deadlock_free = 1,
	.topologies = "fat trees",
};
const struct routing_engine dmodk_engine = {
	.name = "dmodk",
	.route = dmodk_route,
	.summary = "destination-mod-k (D-mod-K) for fat trees",
	.deadlock_free = 1,
	.topologies = "fat trees with a unique way down",
};
const struct routing_engine dfsssp_engine = {
	.name = "dfsssp",
	.route = dfsssp_route,
	.summary = "balanced shortest paths, deadlock-free on VL layers (DFSSSP)",
	.deadlock_free = 1,
	.topologies = "any topology, given the VLs its cycles need",
	.own_sls = 1,
};
const struct routing_engine dor_engine = {
	.name = "dor",
	.route = dor_route,
	.summary = "dimension-order routing, datelines on tori (torus-2QoS's SLs)",
	.deadlock_free = 1,
	.topologies = "meshes and tori cabled by dimension (ports 2d+1, 2d+2)",
	.own_sls = 1,
};
const struct routing_engine nue_engine = {
	.name = "nue",
	.route = nue_route,
	.summary = "routes on the channel-dependency graph, deadlock-free on one VL (Nue)",
	.deadlock_free = 1,
	.topologies = "any topology",
};

const struct routing_engine vswitch_ftree_engine = {
	.name = "vswitch-ftree",
	.route = vswitch_ftree_route,
	.summary = "ftree with each VM behind a vSwitch routed by its weight",
	.deadlock_free = 1,
	.topologies = "fat trees, vSwitches as end nodes",
};
const struct routing_engine pftree_engine = {
	.name = "pftree",
	.route = pftree_route,
	.summary = "partition-aware ftree (pFTree): isolation policies, weights",
	.deadlock_free = 1,
	.topologies = "fat trees",
};

/* The table, in the order messages list the engines. */
static const struct routing_engine *const engines[] = {
	&minhop_engine, &updn_engine, &ftree_engine, &dmodk_engine,
	&vswitch_ftree_engine, &pftree_engine, &dfsssp_engine, &dor_engine,
	&nue_engine,
};

/* routing.engine by default: fat trees get ftree, the rest updn. */
static const struct routing_engine *const defaults[] = {
	&ftree_engine, &updn_engine,
};

#define NITEMS(a) (sizeof(a) / sizeof((a)[0]))

const struct routing_engine *routing_engine_at(size_t i)
{
	return i < NITEMS(engines) ? engines[i] : NULL;
}

const struct routing_engine *routing_engine_default(size_t i)
{
	return i < NITEMS(defaults) ? defaults[i] : NULL;
}

const struct routing_engine *routing_engine_find(const char *name)
{
	for (size_t i = 0; i < NITEMS(engines); i++)
		if (!strcmp(engines[i]->name, name))
			return engines[i];
	return NULL;
}

void routing_engine_names(char *buf, size_t len, const char *sep)
{
	size_t used = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < NITEMS(engines) && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s",
				 i ? sep : "", engines[i]->name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
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

void lft_tables_free_qos(struct lft_tables *t)
{
	free(t->sl_class);
	free(t->sl);
	free(t->sl2vl);
	free(t->sl2vl_idx);
	free(t->sl2vl_first);
	free(t->sl2vl_width);
	free(t->part_sl);
	t->part_sl = NULL;
	t->n_part_sl = 0;
	t->sl_class = NULL;
	t->sl = NULL;
	t->sl2vl = NULL;
	t->sl2vl_idx = NULL;
	t->sl2vl_first = NULL;
	t->sl2vl_width = NULL;
	t->n_sl_class = 0;
	t->sl2vl_nodes = 0;
	t->sl2vl_n = 0;
	t->engine_sls = 0;
}

int lft_sl2vl_slots(const struct fabric *f, struct lft_tables *t)
{
	size_t slots = 0;
	t->sl2vl_first = malloc(((size_t)f->n_nodes + 1) *
				sizeof(*t->sl2vl_first));
	t->sl2vl_width = malloc((size_t)f->n_nodes + 1);
	if (!t->sl2vl_first || !t->sl2vl_width)
		return -1;
	t->sl2vl_nodes = f->n_nodes;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		unsigned w = (unsigned)n->nports + 1;
		t->sl2vl_width[i] = 0;
		t->sl2vl_first[i] = UINT32_MAX;
		if (n->type != FAB_SWITCH && n->type != FAB_CA &&
		    n->type != FAB_ROUTER)
			continue;
		if (w > UINT8_MAX)
			w = UINT8_MAX;
		t->sl2vl_width[i] = (uint8_t)w;
		t->sl2vl_first[i] = (uint32_t)slots;
		slots += (size_t)w * w;
	}
	t->sl2vl_idx = calloc(slots + 1, sizeof(*t->sl2vl_idx));
	return t->sl2vl_idx ? 0 : -1;
}

int lft_sl2vl_identity(const struct fabric *f, struct lft_tables *t,
		       unsigned max_vls)
{
	if (lft_sl2vl_slots(f, t) < 0 || !(t->sl2vl = malloc(QOS_SLS)))
		return -1;
	t->sl2vl_n = 1;
	for (unsigned s = 0; s < QOS_SLS; s++)
		t->sl2vl[s] = s < max_vls ? (uint8_t)s : 0;
	return 0;
}

void lft_tables_free(struct lft_tables *t)
{
	free(t->sw_node);
	free(t->row_of_node);
	free(t->port);
	lft_tables_free_qos(t);
	if (t->xrow)
		for (uint32_t r = 0; r < t->n_sw; r++)
			free(t->xrow[r]);
	free(t->xrow);
	free(t->xfirst);
	free(t->xcount);
	free(t->xdefault);
	memset(t, 0, sizeof(*t));
}
