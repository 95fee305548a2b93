/*
 * A VM move planned ahead (see prepared.h).
 */
#include "reconfig/prepared.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "routing/graph.h"

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* FNV-1a over every switch port's link: its peer, when usable. */
static uint64_t links_signature(const struct fabric *f)
{
	uint64_t h = 14695981039346656037ull;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (f->nodes[p->node].type != FAB_SWITCH)
			continue;
		uint64_t v = graph_link_up(f, pi) ? (uint64_t)p->remote + 1 : 0;
		for (int b = 0; b < 8; b++) {
			h ^= (v >> (8 * b)) & 0xff;
			h *= 1099511628211ull;
		}
	}
	return h;
}

static void columns(const struct lft_tables *t, uint32_t a, uint32_t b,
		    uint8_t *out)
{
	for (uint32_t r = 0; r < t->n_sw; r++) {
		out[2 * r] = lft_row(t, r)[a];
		out[2 * r + 1] = lft_row(t, r)[b];
	}
}

void mig_prepared_free(struct mig_prepared *p)
{
	migration_free(&p->m);
	free(p->sw_node);
	free(p->before);
	free(p->after);
	memset(p, 0, sizeof(*p));
}

int mig_prepare_vm(const struct fabric *f, const struct lft_tables *t,
		   uint32_t vm_pi, uint32_t dst_vf_pi, int scheme, int method,
		   struct mig_prepared *p, char *err, size_t errlen)
{
	struct lft_tables tt = { 0 };
	uint64_t t0 = now_us();
	memset(p, 0, sizeof(*p));
	p->n_sw = t->n_sw;
	p->sw_node = malloc(((size_t)t->n_sw + 1) * sizeof(*p->sw_node));
	p->before = malloc(2 * (size_t)t->n_sw + 1);
	p->after = malloc(2 * (size_t)t->n_sw + 1);
	if (!p->sw_node || !p->before || !p->after ||
	    migrate_tables_copy(&tt, t, f, 0) < 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (migrate_plan_vm(f, &tt, vm_pi, dst_vf_pi, scheme, method, NULL,
			    &p->m, err, errlen) < 0)
		goto fail;
	memcpy(p->sw_node, t->sw_node, (size_t)t->n_sw * sizeof(*p->sw_node));
	columns(t, p->m.vm_lid, p->m.dst_lid, p->before);
	columns(&tt, p->m.vm_lid, p->m.dst_lid, p->after);
	p->links = links_signature(f);
	lft_tables_free(&tt);
	p->prepare_us = now_us() - t0;
	return 0;
fail:
	lft_tables_free(&tt);
	mig_prepared_free(p);
	return -1;
}

int mig_prepared_take(struct mig_prepared *p, const struct fabric *f,
		      const struct lft_tables *cur, uint32_t vm_pi,
		      uint32_t dst_vf_pi, struct lft_tables *out,
		      struct migration *m, char *why, size_t whylen)
{
	uint32_t a = p->m.vm_lid, b = p->m.dst_lid;
	if (!p->sw_node || p->m.vm_pi != vm_pi || p->m.dst_pi != dst_vf_pi) {
		snprintf(why, whylen, "prepared for other ports");
		return 0;
	}
	if (cur->n_sw != p->n_sw ||
	    memcmp(cur->sw_node, p->sw_node, (size_t)p->n_sw * sizeof(*p->sw_node)) ||
	    a > cur->max_lid || b > cur->max_lid) {
		snprintf(why, whylen, "the switches changed");
		return 0;
	}
	if (links_signature(f) != p->links) {
		snprintf(why, whylen, "the links changed");
		return 0;
	}
	for (uint32_t r = 0; r < p->n_sw; r++)
		if (lft_row(cur, r)[a] != p->before[2 * r] ||
		    lft_row(cur, r)[b] != p->before[2 * r + 1]) {
			snprintf(why, whylen, "the routes of LID %u or %u changed", a, b);
			return 0;
		}
	memset(out, 0, sizeof(*out));
	if (migrate_tables_copy(out, cur, f, 0) < 0)
		return -1;
	for (uint32_t r = 0; r < p->n_sw; r++) {
		lft_row(out, r)[a] = p->after[2 * r];
		lft_row(out, r)[b] = p->after[2 * r + 1];
	}
	*m = p->m;
	memset(&p->m, 0, sizeof(p->m));
	mig_prepared_free(p);
	return 1;
}
