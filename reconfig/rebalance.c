/*
 * Rebalancing after VM moves: the balance and the triggers (see
 * rebalance.h).
 */
#include "reconfig/rebalance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/graph.h"

/* A physical switch (no vSwitch) with a CA or a vSwitch on a usable link. */
static int has_end_nodes(const struct fabric *f, uint32_t node)
{
	for (unsigned n = 1; n <= f->nodes[node].nports; n++) {
		uint32_t pi = fabric_port(f, node, n);
		if (!graph_link_up(f, pi))
			continue;
		uint32_t peer = f->ports[f->ports[pi].remote].node;
		if (f->nodes[peer].type != FAB_SWITCH || fabric_is_vswitch(f, peer))
			return 1;
	}
	return 0;
}

/* The VMs' weights behind vSwitch vs, 0: none. */
static uint64_t vs_total(const struct fabric *f, uint32_t vs)
{
	uint64_t sum = 0;
	for (unsigned k = 0, n = fabric_vswitch_nvf(f, vs); k < n; k++) {
		uint32_t pi = fabric_vswitch_vf(f, vs, k, NULL);
		if (pi != FAB_NONE && f->ports[pi].lid)
			sum += f->ports[pi].vm_weight;
	}
	return sum;
}

/*
 * Adds w to every link the routes to lid cross from the source rows
 * src[0..nsrc), once per link: stamp[pi] == mark says it was.
 */
static void load_routes(const struct fabric *f, const struct lft_tables *t,
			const uint32_t *src, uint32_t nsrc, uint32_t lid,
			uint64_t w, uint64_t *load, uint32_t *stamp,
			uint32_t mark)
{
	for (uint32_t s = 0; s < nsrc; s++) {
		uint32_t r = src[s];
		for (uint32_t hop = 0; hop < t->n_sw && r != FAB_NONE; hop++) {
			uint8_t out = lft_row(t, r)[lid];
			uint32_t node = t->sw_node[r];
			if (out == LFT_DROP || out == 0 || out > f->nodes[node].nports)
				break;
			uint32_t pi = fabric_port(f, node, out);
			if (!graph_sw_link(f, pi))
				break;	/* to a CA or a vSwitch: arrived */
			uint32_t peer = f->ports[f->ports[pi].remote].node;
			if (fabric_is_vswitch(f, peer))
				break;
			if (stamp[pi] == mark)
				break;	/* the rest of this route is counted */
			stamp[pi] = mark;
			load[pi] += w;
			r = t->row_of_node[peer];
		}
	}
}

int rebalance_measure(const struct fabric *f, const struct lft_tables *t,
		      struct rebalance_balance *b, char *err, size_t errlen)
{
	memset(b, 0, sizeof(*b));
	uint32_t *src = malloc(((size_t)t->n_sw + 1) * sizeof(*src));
	uint64_t *load = calloc((size_t)f->n_ports + 1, sizeof(*load));
	uint32_t *stamp = calloc((size_t)f->n_ports + 1, sizeof(*stamp));
	uint32_t nsrc = 0, mark = 0;
	if (!src || !load || !stamp) {
		free(src);
		free(load);
		free(stamp);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (uint32_t r = 0; r < t->n_sw; r++) {
		uint32_t node = t->sw_node[r];
		if (!fabric_is_vswitch(f, node) && has_end_nodes(f, node))
			src[nsrc++] = r;
	}
	for (uint32_t vs = 0; vs < f->n_nodes; vs++) {
		if (!fabric_is_vswitch(f, vs))
			continue;
		uint64_t sum = vs_total(f, vs);
		if (!sum)
			continue;
		for (unsigned k = 0, n = fabric_vswitch_nvf(f, vs); k < n; k++) {
			uint32_t pi = fabric_vswitch_vf(f, vs, k, NULL);
			if (pi == FAB_NONE || !f->ports[pi].vm_weight)
				continue;
			uint32_t lid = f->ports[pi].lid;
			if (!lid || fabric_is_vlid(lid) || lid > t->max_lid)
				continue;
			b->vms++;
			load_routes(f, t, src, nsrc, lid,
				    (uint64_t)REBAL_UNIT * f->ports[pi].vm_weight / sum,
				    load, stamp, ++mark);
		}
	}
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		if (!load[pi])
			continue;
		b->links++;
		if (load[pi] > b->max_load)
			b->max_load = load[pi];
	}
	free(src);
	free(load);
	free(stamp);
	return 0;
}

int rebalance_quality(const struct fabric *f, const struct lft_tables *t,
		      struct rebalance_quality *q, char *err, size_t errlen)
{
	struct lft_tables fresh = { 0 };
	struct route_opts none = { 0 };
	memset(q, 0, sizeof(*q));
	q->permille = -1;
	if (rebalance_measure(f, t, &q->now, err, errlen) < 0)
		return -1;
	if (!q->now.vms)
		return 0;
	if (lft_tables_alloc(&fresh, f) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	char why[200] = "";
	int rc = vswitch_ftree_route(f, &none, &fresh, why, sizeof(why));
	if (rc < 0)
		snprintf(err, errlen, "vswitch-ftree cannot route the fabric: %s", why);
	else
		rc = rebalance_measure(f, &fresh, &q->fresh, err, errlen);
	lft_tables_free(&fresh);
	if (rc < 0)
		return -1;
	if (q->now.max_load)
		q->permille = (int)(q->fresh.max_load * REBAL_PERMILLE / q->now.max_load);
	return 0;
}

void rebalance_init(struct rebalance_state *s, uint64_t now_ms)
{
	memset(s, 0, sizeof(*s));
	s->since_ms = now_ms;
	s->last_permille = -1;
}

void rebalance_free(struct rebalance_state *s)
{
	free(s->touched);
	s->touched = NULL;
	s->n_touched = s->cap_touched = 0;
}

int rebalance_touch(struct rebalance_state *s, uint64_t guid)
{
	for (uint32_t i = 0; i < s->n_touched; i++)
		if (s->touched[i] == guid)
			return 0;
	if (s->n_touched == s->cap_touched) {
		uint32_t nc = s->cap_touched ? 2 * s->cap_touched : 16;
		uint64_t *v = realloc(s->touched, (size_t)nc * sizeof(*v));
		if (!v)
			return -1;
		s->touched = v;
		s->cap_touched = nc;
	}
	s->touched[s->n_touched++] = guid;
	return 0;
}

int rebalance_after_vm(const struct rebalance_policy *p,
		       struct rebalance_state *s, int moved, int permille)
{
	if (moved)
		s->migrations++;
	if (permille >= 0) {
		s->checks++;
		s->last_permille = permille;
	}
	if (s->pending)
		return s->pending;
	if (p->after_migrations && s->migrations >= p->after_migrations)
		s->pending = REBAL_MIGRATIONS;
	else if (p->balance_drop > 0 && permille >= 0 &&
		 permille < (1.0 - p->balance_drop) * REBAL_PERMILLE)
		s->pending = REBAL_BALANCE;
	return s->pending;
}

int rebalance_due(const struct rebalance_policy *p,
		  const struct rebalance_state *s, uint64_t now_ms)
{
	if (!rebalance_enabled(p))
		return REBAL_NONE;	/* turned off (a reload) since it was due */
	if (s->pending)
		return s->pending;
	/* the interval: only when a VM moved since (else nothing decayed) */
	if (p->interval_s && s->migrations &&
	    now_ms - s->since_ms >= (uint64_t)p->interval_s * 1000)
		return REBAL_INTERVAL;
	return REBAL_NONE;
}

void rebalance_rerouted(struct rebalance_state *s, int reason, uint64_t now_ms)
{
	if (reason > REBAL_NONE && reason < REBAL_REASONS)
		s->fired[reason]++;
	s->migrations = 0;
	s->pending = REBAL_NONE;
	s->since_ms = now_ms;
	s->n_touched = 0;
	s->touch_lost = 0;
}

const char *rebalance_reason_name(int reason)
{
	static const char *const names[REBAL_REASONS] = {
		[REBAL_NONE] = "none", [REBAL_MIGRATIONS] = "migrations",
		[REBAL_BALANCE] = "balance", [REBAL_INTERVAL] = "interval",
	};
	return reason >= 0 && reason < REBAL_REASONS ? names[reason] : "none";
}

int rebalance_enabled(const struct rebalance_policy *p)
{
	return p->after_migrations || p->balance_drop > 0 || p->interval_s;
}
