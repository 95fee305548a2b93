/*
 * Minimal reconfiguration on live migration: see migrate.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../routing/ftree.h"
#include "../routing/graph.h"
#include "migrate.h"

#define LFT_BLOCK 64

static const char *const scheme_names[] = { "dynamic", "prepopulated" };
static const char *const method_names[] = { "ftreeminrc", "itrc", "full" };

const char *mig_scheme_name(int s)
{
	return s >= 0 && s < 2 ? scheme_names[s] : "?";
}

const char *mig_method_name(int m)
{
	return m >= 0 && m < 3 ? method_names[m] : "?";
}

int mig_scheme_parse(const char *s)
{
	for (int i = 0; i < 2; i++)
		if (strcmp(s, scheme_names[i]) == 0)
			return i;
	return -1;
}

int mig_method_parse(const char *s)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(s, method_names[i]) == 0)
			return i;
	return -1;
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void migration_free(struct migration *m)
{
	free(m->marked);
	free(m->w);
	memset(m, 0, sizeof(*m));
}

/* The end port's LID and the row of the switch it hangs on. */
static int end_port(const struct fabric *f, const struct lft_tables *t,
		    uint32_t pi, uint32_t *lid, uint32_t *row, char *err,
		    size_t errlen)
{
	uint8_t port;
	if (pi >= f->n_ports || !f->ports[pi].lid || f->ports[pi].lid > t->max_lid) {
		snprintf(err, errlen, "port %u has no LID", pi);
		return -1;
	}
	*lid = f->ports[pi].lid;
	if (graph_lid_attach(f, t, *lid, row, &port) < 0) {
		snprintf(err, errlen, "LID %u is not cabled to a switch", *lid);
		return -1;
	}
	return 0;
}

/*
 * The skyline (seed 000 §1.6.3): both leaves, then their up-sets level
 * by level until the two sets are equal (the common ancestors).  In a
 * fat tree two up-sets of one level are equal or disjoint, which is the
 * tuple-prefix comparison of the paper.  cur/nxt/stamp hold g->n each.
 */
static uint32_t skyline(const struct sw_graph *g, const uint32_t *rank,
			uint32_t a, uint32_t b, uint8_t *marked,
			uint32_t *sa, uint32_t *sb, uint32_t *tmp,
			uint32_t *stamp)
{
	uint32_t na = 1, nb = 1, n = 1, st = 0;

	marked[a] = 1;
	if (a == b)
		return 1;
	marked[b] = 1;
	n = 2;
	sa[0] = a;
	sb[0] = b;
	for (uint32_t l = rank[a]; l-- > 0;) {
		uint32_t *sets[2] = { sa, sb }, *cnt[2] = { &na, &nb };
		for (int s = 0; s < 2; s++) {
			uint32_t k = 0;
			st++;
			for (uint32_t i = 0; i < *cnt[s]; i++) {
				uint32_t r = sets[s][i];
				for (uint32_t e = g->off[r]; e < g->off[r + 1]; e++) {
					uint32_t v = g->nbr[e];
					if (rank[v] != l || stamp[v] == st)
						continue;
					stamp[v] = st;
					tmp[k++] = v;
				}
			}
			memcpy(sets[s], tmp, k * sizeof(*tmp));
			*cnt[s] = k;
		}
		/* equal sets? sb's members stamped, then sa's looked up */
		st++;
		for (uint32_t i = 0; i < nb; i++)
			stamp[sb[i]] = st;
		uint32_t common = 0;
		for (uint32_t i = 0; i < na; i++)
			common += stamp[sa[i]] == st;
		for (uint32_t i = 0; i < na; i++)
			if (!marked[sa[i]]) {
				marked[sa[i]] = 1;
				n++;
			}
		for (uint32_t i = 0; i < nb; i++)
			if (!marked[sb[i]]) {
				marked[sb[i]] = 1;
				n++;
			}
		if (common == na && na == nb)
			break;
		if (!na || !nb)
			break;
	}
	return n;
}

/*
 * The old route from row src to LID lid, as rows; 0 when it does not
 * arrive (drop, loop).
 */
static uint32_t trace(const struct fabric *f, const struct lft_tables *t,
		      uint32_t src, uint32_t lid, uint32_t *path)
{
	uint32_t r = src, n = 0;
	while (n <= t->n_sw) {
		path[n++] = r;
		uint8_t p = lft_row(t, r)[lid];
		if (p == 0)
			return n;
		uint32_t node = t->sw_node[r];
		if (p == LFT_DROP || p > f->nodes[node].nports)
			return 0;
		uint32_t rem = fabric_portp(f, node, p)->remote;
		if (rem == FAB_NONE)
			return 0;
		uint32_t nn = f->ports[rem].node;
		if (f->nodes[nn].type != FAB_SWITCH)
			return n;
		r = t->row_of_node[nn];
	}
	return 0;
}

static int add_write(struct migration *m, uint32_t *cap, uint32_t row,
		     uint32_t block, uint8_t wave, uint8_t vs)
{
	if (m->n_w == *cap) {
		uint32_t nc = *cap ? *cap * 2 : 64;
		struct mig_write *w = realloc(m->w, (size_t)nc * sizeof(*w));
		if (!w)
			return -1;
		m->w = w;
		*cap = nc;
	}
	m->w[m->n_w++] = (struct mig_write){ row, block, wave, vs };
	return 0;
}

int migrate_plan(const struct fabric *f, struct lft_tables *t,
		 uint32_t src_pi, uint32_t dst_pi, int scheme, int method,
		 const uint32_t *rank, struct migration *m, char *err,
		 size_t errlen)
{
	uint64_t t0 = now_us();
	struct sw_graph g = { 0 };
	uint32_t n = t->n_sw, cap = 0;
	uint32_t *own_rank = NULL, *buf = NULL, *order = NULL;
	uint8_t *wave = NULL;
	int rc = -1;

	memset(m, 0, sizeof(*m));
	m->scheme = scheme;
	m->method = method;
	if (end_port(f, t, src_pi, &m->vm_lid, &m->src_leaf, err, errlen) < 0 ||
	    end_port(f, t, dst_pi, &m->dst_lid, &m->dst_leaf, err, errlen) < 0)
		return -1;
	if (m->vm_lid == m->dst_lid) {
		snprintf(err, errlen, "source and destination are the same port");
		return -1;
	}
	m->marked = calloc((size_t)n + 1, 1);
	wave = malloc((size_t)n + 1);
	buf = malloc(((size_t)n + 1) * 5 * sizeof(*buf));
	order = malloc(((size_t)n + 1) * sizeof(*order));
	if (!m->marked || !wave || !buf || !order)
		goto nomem;

	if (method == MIG_FTREEMINRC) {
		uint64_t l0 = now_us();
		if (!rank) {
			own_rank = malloc(((size_t)n + 1) * sizeof(*own_rank));
			if (!own_rank)
				goto nomem;
			if (ftree_levels(f, t, own_rank, m->note,
					 sizeof(m->note)) < 0) {
				free(own_rank);
				own_rank = NULL;
				m->fallback = 1;
				m->method = MIG_ITRC;
			}
			rank = own_rank;
		}
		if (rank && sw_graph_build(&g, f, t) < 0)
			goto nomem;
		m->levels_us = now_us() - l0;
	}
	if (m->method == MIG_FTREEMINRC) {
		uint64_t k0 = now_us();
		if (rank[m->src_leaf] != rank[m->dst_leaf]) {
			snprintf(err, errlen, "the two leaves are on different levels");
			goto out;
		}
		memset(buf, 0, ((size_t)n + 1) * sizeof(*buf));
		m->switches_marked = skyline(&g, rank, m->src_leaf, m->dst_leaf,
					     m->marked, buf + (n + 1),
					     buf + 2 * (n + 1), buf + 3 * (n + 1),
					     buf);
		m->mark_us = now_us() - k0;
	} else {
		memset(m->marked, 1, n);
		m->switches_marked = n;
	}

	/* waves from the old active path */
	memset(wave, MIG_WAVES - 1, n);
	uint32_t *path = buf + 4 * (n + 1);
	uint32_t np = trace(f, t, m->src_leaf, m->dst_lid, path);
	if (np) {
		uint32_t apex = np / 2, top = UINT32_MAX;
		if (rank) {
			for (uint32_t i = 0; i < np; i++)
				if (rank[path[i]] < top)
					top = rank[path[i]];
		}
		for (uint32_t i = 0; i < np; i++) {
			int is_apex = rank ? rank[path[i]] == top : i == apex;
			if (is_apex)
				apex = i;
		}
		for (uint32_t i = 0; i < np; i++) {
			int is_apex = rank ? rank[path[i]] == top : i == apex;
			wave[path[i]] = is_apex ? 1 : i > apex ? 0 : 2;
		}
	}

	/* new entries, and the blocks that differ */
	uint32_t bv = m->vm_lid / LFT_BLOCK, bd = m->dst_lid / LFT_BLOCK;
	uint32_t nblocks = t->max_lid / LFT_BLOCK + 1, no = 0;
	for (uint8_t w = 0; w < MIG_WAVES; w++)
		for (uint32_t r = 0; r < n; r++)
			if (wave[r] == w && m->marked[r])
				order[no++] = r;
	for (uint32_t i = 0; i < no; i++) {
		uint32_t r = order[i];
		uint8_t *row = lft_row(t, r);
		uint8_t pv = row[m->vm_lid], pd = row[m->dst_lid];
		int changed = 0;
		if (scheme == MIG_DYNAMIC) {
			if (pv != pd) {
				row[m->vm_lid] = pd;
				m->entries_changed++;
				changed = 1;
			}
		} else if (pv != pd) {
			row[m->vm_lid] = pd;
			row[m->dst_lid] = pv;
			m->entries_changed += 2;
			changed = 2;
		}
		if (m->method == MIG_FULL) {
			for (uint32_t b = 0; b < nblocks; b++)
				if (add_write(m, &cap, r, b, wave[r], 0) < 0)
					goto nomem;
			continue;
		}
		if (!changed)
			continue;
		if (add_write(m, &cap, r, bv, wave[r], 0) < 0)
			goto nomem;
		if (changed == 2 && bd != bv &&
		    add_write(m, &cap, r, bd, wave[r], 0) < 0)
			goto nomem;
	}
	m->lft_blocks = m->n_w;
	for (uint32_t i = 0; i < m->n_w; i++)
		if (i == 0 || m->w[i].row != m->w[i - 1].row)
			m->switches_written++;
	m->plan_us = now_us() - t0;
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	if (rc < 0)
		migration_free(m);
	sw_graph_free(&g);
	free(own_rank);
	free(buf);
	free(order);
	free(wave);
	return rc;
}
