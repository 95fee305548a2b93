/* A job's channel loads on the base tables (sm/jobsim/baseload.h). */
#include "sm/jobsim/baseload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* More switches than any path of a fabric the tables route can cross. */
#define WALK_MAX_HOPS 64

void chload_free(struct chload *c)
{
	free(c->ch);
	free(c->chw);
	memset(c, 0, sizeof(*c));
}

/*
 * Adds w to acc[] along s -> d, listing each channel first touched in
 * seen/order.  0, or -1 with err.
 */
static int walk(const struct fabric *f, const struct lft_tables *t,
		uint32_t sp, uint32_t dp, int64_t w, int64_t *acc,
		uint8_t *seen, uint32_t *order, size_t *n_order, char *err,
		size_t errlen)
{
	uint32_t dlid = f->ports[dp].lid, pi = sp;
	for (int hop = 0; hop <= WALK_MAX_HOPS; hop++) {
		if (!seen[pi]) {
			seen[pi] = 1;
			order[(*n_order)++] = pi;
		}
		acc[pi] += w;
		uint32_t in = f->ports[pi].remote;
		if (in == FAB_NONE)
			break;
		uint32_t node = f->ports[in].node;
		if (f->nodes[node].type != FAB_SWITCH) {
			if (in == dp)
				return 0;
			snprintf(err, errlen, "LID %u: the tables lead to %s, not %s",
				 dlid, f->nodes[node].desc,
				 f->nodes[f->ports[dp].node].desc);
			return -1;
		}
		uint32_t row = t->row_of_node[node];
		uint8_t out = row == FAB_NONE || dlid > t->max_lid ? 0 :
			      lft_row(t, row)[dlid];
		if (out == 0 || out > f->nodes[node].nports) {
			snprintf(err, errlen, "LID %u: no route at %s", dlid,
				 f->nodes[node].desc);
			return -1;
		}
		pi = f->nodes[node].first_port + out;
	}
	snprintf(err, errlen, "LID %u: the tables loop or lead nowhere from %s",
		 dlid, f->nodes[f->ports[sp].node].desc);
	return -1;
}

int chload_walk(const struct fabric *f, const struct lft_tables *t,
		const struct job_tree *tr, const struct job_flow *fl, size_t n,
		struct chload *c, char *err, size_t errlen)
{
	int64_t *acc = calloc((size_t)f->n_ports + 1, sizeof(*acc));
	uint8_t *seen = calloc((size_t)f->n_ports + 1, 1);
	uint32_t *order = calloc((size_t)f->n_ports + 1, sizeof(*order));
	size_t n_order = 0;
	int rc = -1;
	memset(c, 0, sizeof(*c));
	if (!acc || !seen || !order) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (walk(f, t, job_tree_host_port(tr, fl[i].src),
			 job_tree_host_port(tr, fl[i].dst), fl[i].w, acc, seen,
			 order, &n_order, err, errlen) < 0)
			goto out;
	c->ch = malloc((n_order + 1) * sizeof(*c->ch));
	c->chw = malloc((n_order + 1) * sizeof(*c->chw));
	if (!c->ch || !c->chw) {
		chload_free(c);
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n_order; i++) {
		c->ch[i] = order[i];
		c->chw[i] = acc[order[i]];
	}
	c->n = n_order;
	rc = 0;
out:
	free(acc);
	free(seen);
	free(order);
	return rc;
}

void chload_add(int64_t *loads, const struct chload *c, int sign)
{
	for (size_t i = 0; i < c->n; i++)
		loads[c->ch[i]] += sign * c->chw[i];
}

int64_t chload_max(const int64_t *loads, const struct chload *c)
{
	int64_t m = 0;
	for (size_t i = 0; i < c->n; i++)
		if (loads[c->ch[i]] > m)
			m = loads[c->ch[i]];
	return m;
}
