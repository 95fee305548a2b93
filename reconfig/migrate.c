/*
 * Minimal reconfiguration on live migration: see migrate.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "routing/engines/ftree.h"
#include "routing/graph.h"
#include "routing/xlft.h"
#include "reconfig/migorder.h"
#include "reconfig/migrate.h"

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
	free(m->xw);
	free(m->ord_before);
	free(m->ord_wave);
	memset(m, 0, sizeof(*m));
}

/* Drops the mixed writes of w[0..*n), the others into wave first. */
static void flatten(struct mig_write *w, uint32_t *n, uint8_t first)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < *n; i++)
		if (!w[i].mixed) {
			w[k] = w[i];
			w[k++].wave = first;
		}
	*n = k;
}

void migrate_one_wave(struct migration *m)
{
	flatten(m->w, &m->n_w, m->lft_first);
	flatten(m->xw, &m->n_xw, m->lft_first);
	m->lft_blocks = m->vswitch_blocks = 0;
	for (uint32_t i = 0; i < m->n_w; i++) {
		m->vswitch_blocks += m->w[i].vswitch;
		m->lft_blocks += !m->w[i].vswitch;
	}
	m->xlft_blocks = m->n_xw;
	memset(&m->order, 0, sizeof(m->order));
}

void migrate_payload(const struct migration *m, const struct mig_write *w,
		     const uint8_t *blk, uint8_t *out)
{
	memcpy(out, blk, FAB_LFT_BLOCK);
	if (!w->mixed)
		return;
	for (unsigned k = 0; k < m->ord_n; k++) {
		uint32_t lid = m->ord_lid[k];
		uint32_t x = fabric_is_vlid(lid) ? lid - FAB_VLID_BASE : lid;
		size_t at = (size_t)w->row * m->ord_n + k;
		if (x / FAB_LFT_BLOCK != w->block || m->ord_wave[at] <= w->wave)
			continue;	/* another block's, or due */
		out[x % FAB_LFT_BLOCK] = m->ord_drained[k] ? LFT_DROP : m->ord_before[at];
	}
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
 * The skyline (the vSwitch paper, Section 6.2, FTreeMinRC): both leaves,
 * then their up-sets level by level until the two sets are equal (the
 * common ancestors).  In a fat tree two up-sets of one level are equal or
 * disjoint, which is the tuple-prefix comparison of the paper.
 * cur/nxt/stamp hold g->n each.
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
		     uint32_t block, uint8_t wave, uint8_t vs, uint8_t prio)
{
	if (m->n_w == *cap) {
		uint32_t nc = *cap ? *cap * 2 : 64;
		struct mig_write *w = realloc(m->w, (size_t)nc * sizeof(*w));
		if (!w)
			return -1;
		m->w = w;
		*cap = nc;
	}
	m->w[m->n_w++] = (struct mig_write){ row, block, wave, vs, 0, prio };
	return 0;
}

/* A vSwitch row: migrate_plan_vm writes it apart (skip[] in plan_core). */
static int vs_row(const struct fabric *f, const struct lft_tables *t,
		  uint32_t r)
{
	return fabric_is_vswitch(f, t->sw_node[r]);
}

/*
 * The physical part of a plan: m->vm_lid, dst_lid, src_leaf, dst_leaf,
 * scheme and method set.  Marks and changes t; prio (per row) the place
 * of a row's writes within a wave: the active path first.  With vs
 * (migrate_plan_vm) the vSwitch rows are neither marked nor changed
 * here, nor taken for the apex of the active path.
 */
static int plan_core(const struct fabric *f, struct lft_tables *t,
		     const uint32_t *rank, int vs, struct migration *m,
		     uint8_t *prio, char *err, size_t errlen)
{
	struct sw_graph g = { 0 };
	uint32_t n = t->n_sw;
	uint32_t *own_rank = NULL, *buf = NULL;
	int rc = -1, scheme = m->scheme;

	m->marked = calloc((size_t)n + 1, 1);
	buf = malloc(((size_t)n + 1) * 5 * sizeof(*buf));
	if (!m->marked || !buf)
		goto nomem;

	if (m->method == MIG_FTREEMINRC) {
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
		if (vs)	/* the up-sets never go down to a vSwitch; be sure */
			for (uint32_t r = 0; r < n; r++)
				if (m->marked[r] && vs_row(f, t, r)) {
					m->marked[r] = 0;
					m->switches_marked--;
				}
		m->mark_us = now_us() - k0;
	} else {
		for (uint32_t r = 0; r < n; r++)
			if (!vs || !vs_row(f, t, r)) {
				m->marked[r] = 1;
				m->switches_marked++;
			}
	}

	/* the priority within a wave, from the old active path */
	memset(prio, MIG_PRIO_REST, n);
	uint32_t *path = buf + 4 * (n + 1);
	uint32_t np = trace(f, t, m->src_leaf, m->dst_lid, path);
	if (vs && np) {	/* the physical part of the path */
		uint32_t k = 0;
		for (uint32_t i = 0; i < np; i++)
			if (!vs_row(f, t, path[i]))
				path[k++] = path[i];
		np = k;
	}
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
			prio[path[i]] = is_apex ? MIG_PRIO_APEX : i > apex ?
					MIG_PRIO_DST : MIG_PRIO_SRC;
		}
	}

	/* the new entries of the marked switches */
	for (uint32_t r = 0; r < n; r++) {
		if (!m->marked[r])
			continue;
		uint8_t *row = lft_row(t, r);
		uint8_t pv = row[m->vm_lid], pd = row[m->dst_lid];
		if (pv == pd)
			continue;
		row[m->vm_lid] = pd;
		m->entries_changed++;
		if (scheme == MIG_PREPOPULATED) {
			row[m->dst_lid] = pv;
			m->entries_changed++;
		}
	}
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	sw_graph_free(&g);
	free(own_rank);
	free(buf);
	return rc;
}

/* The columns a move changes: the VM's LID, and prepopulated the destination's. */
static void move_cols(const struct migration *m, struct mig_cols *c)
{
	memset(c, 0, sizeof(*c));
	c->n = m->scheme == MIG_PREPOPULATED ? 2 : 1;
	c->lid[0] = m->vm_lid;
	c->lid[1] = m->dst_lid;
	c->block[0] = m->vm_lid / FAB_LFT_BLOCK;
	c->block[1] = m->dst_lid / FAB_LFT_BLOCK;
}

/* c's columns of t as they are now, into m->ord_before (per row * c->n). */
static int take_before(const struct lft_tables *t, const struct mig_cols *c,
		       struct migration *m)
{
	m->ord_before = malloc((size_t)t->n_sw * c->n + 1);
	if (!m->ord_before)
		return -1;
	for (uint32_t r = 0; r < t->n_sw; r++)
		for (unsigned k = 0; k < c->n; k++)
			m->ord_before[(size_t)r * c->n + k] = lft_row(t, r)[c->lid[k]];
	return 0;
}

/*
 * The writes of a primary plan: the order of c's change (from
 * m->ord_before to t), from wave first; full: every other block of the
 * rows whole[] names too, in wave first (they hold what is written).
 */
static int order_writes(const struct fabric *f, const struct lft_tables *t,
			const struct mig_cols *c, const uint8_t *prio,
			const uint8_t *whole, uint8_t first,
			struct migration *m)
{
	struct mig_cols cc = *c;
	cc.before = m->ord_before;
	if (mig_order(f, t, &cc, prio, first, m, &m->w, &m->n_w) < 0)
		return -1;
	if (m->method != MIG_FULL)
		return 0;
	uint32_t cap = m->n_w;
	uint8_t *done = calloc((size_t)t->n_sw + 1, 1);	/* per row: c's blocks 1, 2 written */
	if (!done)
		return -1;
	for (uint32_t i = 0; i < m->n_w; i++)
		done[m->w[i].row] |= (uint8_t)(m->w[i].block == c->block[0] ? 1 : 2);
	for (uint32_t r = 0; r < t->n_sw; r++) {
		if (!whole[r])
			continue;
		for (uint32_t b = 0; b <= t->max_lid / FAB_LFT_BLOCK; b++) {
			int had = (b == c->block[0] && (done[r] & 1)) ||
				  (c->n == 2 && b == c->block[1] && (done[r] & 2));
			if (!had && add_write(m, &cap, r, b, first,
					      (uint8_t)vs_row(f, t, r), prio[r]) < 0) {
				free(done);
				return -1;
			}
		}
	}
	free(done);
	mig_sort_writes(m->w, m->n_w);
	return 0;
}

/*
 * The counts of writes w[0..n) (m->w, or m->xw: blocks not counted):
 * physical and vSwitch apart, a row once whatever its waves.  0, or -1.
 */
static int count_writes(struct migration *m, const struct mig_write *w,
			uint32_t n, uint32_t n_sw, int blocks)
{
	uint8_t *seen = calloc((size_t)n_sw + 1, 1);
	if (!seen)
		return -1;
	if (blocks)
		m->lft_blocks = m->vswitch_blocks = 0;
	m->switches_written = m->vswitches_written = 0;
	for (uint32_t i = 0; i < n; i++) {
		int first = !seen[w[i].row];
		seen[w[i].row] = 1;
		if (w[i].vswitch) {
			m->vswitch_blocks += (uint32_t)blocks;
			m->vswitches_written += (uint32_t)first;
		} else {
			m->lft_blocks += (uint32_t)blocks;
			m->switches_written += (uint32_t)first;
		}
	}
	free(seen);
	return 0;
}

/* The counts of m->w; 0, or -1 with err. */
static int count_w(struct migration *m, uint32_t n_sw, char *err, size_t errlen)
{
	if (count_writes(m, m->w, m->n_w, n_sw, 1) == 0)
		return 0;
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* Why mig_order() failed. */
static void order_failed(char *err, size_t errlen)
{
	snprintf(err, errlen, "out of memory, or the order needs more than %d waves",
		 ORDER_MAX_WAVES);
}

/* order_writes(), then the counts: 0, or -1 with err. */
static int writes_planned(const struct fabric *f, const struct lft_tables *t,
			  const struct mig_cols *c, const uint8_t *prio,
			  const uint8_t *whole, uint8_t first, struct migration *m,
			  char *err, size_t errlen)
{
	if (order_writes(f, t, c, prio, whole, first, m) < 0) {
		order_failed(err, errlen);
		return -1;
	}
	return count_w(m, t->n_sw, err, errlen);
}

/* The plan's time, since t0 (the marking included), also as the order's. */
static void plan_timed(struct migration *m, uint64_t t0)
{
	m->plan_us = now_us() - t0;
	m->order.plan_us = m->plan_us;
}

/* An empty migration of that kind between those ports. */
static void mig_init(struct migration *m, int kind, int scheme, int method,
		     uint32_t vm_pi, uint32_t dst_pi)
{
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->scheme = scheme;
	m->method = method;
	m->vm_pi = vm_pi;
	m->dst_pi = dst_pi;
	m->src_leaf = m->dst_leaf = FAB_NONE;
}

int migrate_plan(const struct fabric *f, struct lft_tables *t,
		 uint32_t src_pi, uint32_t dst_pi, int scheme, int method,
		 const uint32_t *rank, struct migration *m, char *err,
		 size_t errlen)
{
	uint64_t t0 = now_us();
	struct mig_cols c;
	uint8_t *prio;

	mig_init(m, MIG_MOVE, scheme, method, src_pi, dst_pi);
	if (end_port(f, t, src_pi, &m->vm_lid, &m->src_leaf, err, errlen) < 0 ||
	    end_port(f, t, dst_pi, &m->dst_lid, &m->dst_leaf, err, errlen) < 0)
		return -1;
	if (m->vm_lid == m->dst_lid) {
		snprintf(err, errlen, "source and destination are the same port");
		return -1;
	}
	move_cols(m, &c);
	prio = malloc((size_t)t->n_sw + 1);
	if (!prio || take_before(t, &c, m) < 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (plan_core(f, t, rank, 0, m, prio, err, errlen) < 0)
		goto fail;
	if (writes_planned(f, t, &c, prio, m->marked, 0, m, err, errlen) < 0)
		goto fail;
	free(prio);
	m->src_wave = (uint8_t)m->waves;
	plan_timed(m, t0);
	return 0;
fail:
	free(prio);
	migration_free(m);
	return -1;
}

/* The vSwitch port number a VF (or PF) CA port is cabled to. */
static uint8_t vs_port_of(const struct fabric *f, uint32_t ca_pi)
{
	return f->ports[f->ports[ca_pi].remote].num;
}

/* The vSwitch's uplink port number, LFT_DROP without one. */
static uint8_t vs_uplink(const struct fabric *f, uint32_t vs)
{
	uint32_t up = fabric_vswitch_uplink(f, vs);
	return up == FAB_NONE ? LFT_DROP : f->ports[up].num;
}

/* Sets row r's entry for lid to port; 1 when it changed. */
static int set_entry(struct migration *m, struct lft_tables *t, uint32_t r,
		     uint32_t lid, uint8_t port)
{
	uint8_t *row = lft_row(t, r);
	if (row[lid] == port)
		return 0;
	row[lid] = port;
	m->entries_changed++;
	return 1;
}

/* A vSwitch row's entries for the LIDs lids[0..nl-1] become ports[]. */
static void vs_set(struct migration *m, struct lft_tables *t, uint32_t vs,
		   const uint32_t *lids, const uint8_t *ports, unsigned nl)
{
	for (unsigned i = 0; i < nl; i++)
		set_entry(m, t, t->row_of_node[vs], lids[i], ports[i]);
}

/* The vSwitch a VF port hangs on, or FAB_NONE with err. */
static uint32_t vf_vswitch(const struct fabric *f, uint32_t pi, const char *what,
			   char *err, size_t errlen)
{
	int vf = -1;
	uint32_t vs = pi < f->n_ports ? fabric_vswitch_of(f, pi, &vf) : FAB_NONE;
	if (vs == FAB_NONE || vf < 0) {
		snprintf(err, errlen, "%s port %u is not a VF behind a vSwitch",
			 what, pi);
		return FAB_NONE;
	}
	if (fabric_vswitch_leaf(f, vs) == FAB_NONE) {
		snprintf(err, errlen, "vSwitch \"%s\" has no uplink",
			 f->nodes[vs].desc);
		return FAB_NONE;
	}
	return vs;
}

/* A port's LID, checked against the tables; 0 with err. */
static uint32_t port_lid(const struct fabric *f, const struct lft_tables *t,
			 uint32_t pi, char *err, size_t errlen)
{
	uint32_t lid = f->ports[pi].lid;
	if (!lid || lid > t->max_lid)
		snprintf(err, errlen, "\"%s\" port %u has no LID in the tables",
			 f->nodes[f->ports[pi].node].desc, f->ports[pi].num);
	return lid && lid <= t->max_lid ? lid : 0;
}

/*
 * migrate_plan_vm without the writes: the marking, the new entries of
 * every row in t, the columns c that change with their entries before in
 * m->ord_before, prio (per row, n_sw + 1).  0, or -1 with err (m then
 * holds what to free).
 */
static int plan_vm(const struct fabric *f, struct lft_tables *t,
		   uint32_t vm_pi, uint32_t dst_vf_pi, int scheme, int method,
		   const uint32_t *rank, struct migration *m, struct mig_cols *c,
		   uint8_t *prio, char *err, size_t errlen)
{
	uint32_t svs, dvs;

	mig_init(m, MIG_MOVE, scheme, method, vm_pi, dst_vf_pi);
	if ((svs = vf_vswitch(f, vm_pi, "the VM's", err, errlen)) == FAB_NONE ||
	    (dvs = vf_vswitch(f, dst_vf_pi, "the destination", err, errlen)) == FAB_NONE)
		return -1;
	if (vm_pi == dst_vf_pi) {
		snprintf(err, errlen, "source and destination are the same VF");
		return -1;
	}
	if (!(m->vm_lid = port_lid(f, t, vm_pi, err, errlen)))
		return -1;
	uint32_t dst = scheme == MIG_DYNAMIC ? fabric_vswitch_pf(f, dvs) : dst_vf_pi;
	if (dst == FAB_NONE) {
		snprintf(err, errlen, "vSwitch \"%s\" has no PF", f->nodes[dvs].desc);
		return -1;
	}
	if (!(m->dst_lid = port_lid(f, t, dst, err, errlen)))
		return -1;
	if (m->vm_lid == m->dst_lid) {
		snprintf(err, errlen, "the VM's LID is the destination's");
		return -1;
	}
	m->src_leaf = t->row_of_node[fabric_vswitch_leaf(f, svs)];
	m->dst_leaf = t->row_of_node[fabric_vswitch_leaf(f, dvs)];
	move_cols(m, c);
	if (take_before(t, c, m) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (plan_core(f, t, rank, 1, m, prio, err, errlen) < 0)
		return -1;

	/*
	 * The vSwitch rows: the destination's sends the VM's LID to its VF;
	 * the source's sends it up, and under prepopulated the
	 * destination's old LID down to the source VF.  Their waves are the
	 * order's (the destination's first: its next hop is the VF).
	 */
	uint8_t dport = vs_port_of(f, dst_vf_pi), sport = vs_port_of(f, vm_pi);
	uint32_t lids[2] = { m->vm_lid, m->dst_lid };
	uint8_t ports[2];
	unsigned nl = c->n;
	if (svs == dvs) {
		ports[0] = dport;
		ports[1] = sport;
		vs_set(m, t, dvs, lids, ports, nl);
	} else {
		ports[0] = dport;
		ports[1] = vs_uplink(f, dvs);
		vs_set(m, t, dvs, lids, ports, nl);
		ports[0] = vs_uplink(f, svs);
		ports[1] = sport;
		vs_set(m, t, svs, lids, ports, nl);
		prio[t->row_of_node[svs]] = MIG_PRIO_SRC;
	}
	prio[t->row_of_node[dvs]] = MIG_PRIO_DST;
	return 0;
}

/* Rows written whole under full: the marked ones and every vSwitch (the reference). */
static uint8_t *whole_rows(const struct fabric *f, const struct lft_tables *t,
			   const struct migration *m)
{
	uint8_t *whole = malloc((size_t)t->n_sw + 1);
	for (uint32_t r = 0; whole && r < t->n_sw; r++)
		whole[r] = m->marked[r] || vs_row(f, t, r);
	return whole;
}

int migrate_plan_vm(const struct fabric *f, struct lft_tables *t,
		    uint32_t vm_pi, uint32_t dst_vf_pi, int scheme, int method,
		    const uint32_t *rank, struct migration *m, char *err,
		    size_t errlen)
{
	uint64_t t0 = now_us();
	struct mig_cols c;
	uint8_t *prio = malloc((size_t)t->n_sw + 1), *whole = NULL;

	memset(m, 0, sizeof(*m));
	if (!prio) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (plan_vm(f, t, vm_pi, dst_vf_pi, scheme, method, rank, m, &c, prio,
		    err, errlen) < 0)
		goto fail;
	if (method == MIG_FULL && !(whole = whole_rows(f, t, m))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* wave 0: the destination VF's PortInfo (vmexec_port_sets()) */
	if (writes_planned(f, t, &c, prio, whole, 1, m, err, errlen) < 0)
		goto fail;
	free(prio);
	free(whole);
	m->src_wave = (uint8_t)m->waves;
	m->waves++;
	plan_timed(m, t0);
	return 0;
fail:
	free(prio);
	free(whole);
	migration_free(m);
	return -1;
}

/*
 * Boot and drop: every row's entry for m->vm_lid, the changed blocks in
 * wave 0.  vs == FAB_NONE: LFT_DROP everywhere; else physical rows copy
 * m->dst_lid's (the PF's) entry, vs itself sends it to vport, every
 * other vSwitch to its uplink.
 */
static int set_column(const struct fabric *f, struct lft_tables *t,
		      struct migration *m, uint32_t vs, uint8_t vport,
		      uint64_t t0, char *err, size_t errlen)
{
	uint32_t lid = m->vm_lid;
	struct mig_cols c = { .n = 1, .lid = { lid }, .block = { lid / FAB_LFT_BLOCK } };
	uint8_t *prio = calloc((size_t)t->n_sw + 1, 1);
	if (!prio || take_before(t, &c, m) < 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (uint32_t r = 0; r < t->n_sw; r++) {
		uint32_t node = t->sw_node[r];
		int isvs = fabric_is_vswitch(f, node);
		uint8_t want = vs == FAB_NONE ? LFT_DROP :
			       !isvs ? lft_row(t, r)[m->dst_lid] :
			       node == vs ? vport : vs_uplink(f, node);
		if (!isvs)
			m->switches_marked++;
		set_entry(m, t, r, lid, want);
	}
	/* one wave: a new LID is dropped everywhere before, a dropped one after */
	if (writes_planned(f, t, &c, prio, NULL, 0, m, err, errlen) < 0)
		goto fail;
	free(prio);
	m->src_wave = (uint8_t)m->waves;
	plan_timed(m, t0);
	return 0;
fail:
	free(prio);
	migration_free(m);
	return -1;
}

int migrate_plan_boot(const struct fabric *f, struct lft_tables *t,
		      uint32_t vf_pi, uint32_t lid, struct migration *m,
		      char *err, size_t errlen)
{
	uint64_t t0 = now_us();
	uint32_t vs, pf, pf_lid;

	mig_init(m, MIG_BOOT, MIG_DYNAMIC, MIG_ITRC, vf_pi, FAB_NONE);
	m->vm_lid = lid;
	if ((vs = vf_vswitch(f, vf_pi, "the VM's", err, errlen)) == FAB_NONE)
		return -1;
	if ((pf = fabric_vswitch_pf(f, vs)) == FAB_NONE) {
		snprintf(err, errlen, "vSwitch \"%s\" has no PF", f->nodes[vs].desc);
		return -1;
	}
	if (!(pf_lid = port_lid(f, t, pf, err, errlen)))
		return -1;
	if (!lid || lid > t->max_lid || lid == pf_lid) {
		snprintf(err, errlen, "LID %u is not a new LID the tables hold", lid);
		return -1;
	}
	m->dst_lid = pf_lid;
	m->src_leaf = m->dst_leaf = t->row_of_node[fabric_vswitch_leaf(f, vs)];
	return set_column(f, t, m, vs, vs_port_of(f, vf_pi), t0, err, errlen);
}

int migrate_plan_drop(const struct fabric *f, struct lft_tables *t,
		      uint32_t lid, struct migration *m, char *err,
		      size_t errlen)
{
	uint64_t t0 = now_us();

	mig_init(m, MIG_DROP, MIG_DYNAMIC, MIG_ITRC,
		 lid && lid <= f->max_lid && f->lid_port ? f->lid_port[lid] :
		 FAB_NONE, FAB_NONE);
	m->vm_lid = lid;
	if (!lid || lid > t->max_lid) {
		snprintf(err, errlen, "LID %u is not in the tables", lid);
		return -1;
	}
	return set_column(f, t, m, FAB_NONE, 0, t0, err, errlen);
}

int migrate_tables_copy(struct lft_tables *dst, const struct lft_tables *src,
			const struct fabric *f, uint32_t max_lid)
{
	uint32_t n = src->n_sw, om = src->max_lid;
	uint32_t nm = max_lid > om ? max_lid : om;

	memset(dst, 0, sizeof(*dst));
	dst->n_sw = n;
	dst->max_lid = nm;
	dst->sw_node = malloc(((size_t)n + 1) * sizeof(*dst->sw_node));
	dst->row_of_node = malloc(((size_t)f->n_nodes + 1) * sizeof(*dst->row_of_node));
	dst->port = malloc((size_t)n * (nm + 1) + 1);
	if (!dst->sw_node || !dst->row_of_node || !dst->port)
		goto nomem;
	memcpy(dst->sw_node, src->sw_node, (size_t)n * sizeof(*dst->sw_node));
	memcpy(dst->row_of_node, src->row_of_node,
	       (size_t)f->n_nodes * sizeof(*dst->row_of_node));
	memset(dst->port, LFT_DROP, (size_t)n * (nm + 1));
	for (uint32_t r = 0; r < n; r++)
		memcpy(lft_row(dst, r), lft_row(src, r), (size_t)om + 1);
	if (src->sl && src->sl_class) {
		/* SL classes: new LIDs have none (SL 0), new columns SL 0 */
		uint32_t nc = src->n_sl_class;
		dst->sl_class = malloc(((size_t)nm + 1) * sizeof(*dst->sl_class));
		dst->sl = calloc((size_t)nc * (nm + 1) + 1, 1);
		if (!dst->sl_class || !dst->sl)
			goto nomem;
		dst->n_sl_class = nc;
		for (uint32_t l = 0; l <= nm; l++)
			dst->sl_class[l] = l <= om ? src->sl_class[l] :
					   LFT_SL_NOCLASS;
		for (uint32_t c = 0; c < nc; c++)
			memcpy(dst->sl + (size_t)c * (nm + 1),
			       src->sl + (size_t)c * (om + 1), (size_t)om + 1);
	}
	if (src->sl2vl) {
		uint32_t nn = src->sl2vl_nodes;
		size_t slots = 0;
		for (uint32_t i = 0; i < nn; i++)
			if (src->sl2vl_first[i] != UINT32_MAX) {
				size_t end = (size_t)src->sl2vl_first[i] +
					     (size_t)src->sl2vl_width[i] *
					     src->sl2vl_width[i];
				if (end > slots)
					slots = end;
			}
		dst->sl2vl = malloc((size_t)src->sl2vl_n * QOS_SLS + 1);
		dst->sl2vl_idx = malloc((slots + 1) * sizeof(*dst->sl2vl_idx));
		dst->sl2vl_first = malloc(((size_t)nn + 1) *
					  sizeof(*dst->sl2vl_first));
		dst->sl2vl_width = malloc((size_t)nn + 1);
		if (!dst->sl2vl || !dst->sl2vl_idx || !dst->sl2vl_first ||
		    !dst->sl2vl_width)
			goto nomem;
		memcpy(dst->sl2vl, src->sl2vl, (size_t)src->sl2vl_n * QOS_SLS);
		memcpy(dst->sl2vl_idx, src->sl2vl_idx, slots * sizeof(*dst->sl2vl_idx));
		memcpy(dst->sl2vl_first, src->sl2vl_first,
		       (size_t)nn * sizeof(*dst->sl2vl_first));
		memcpy(dst->sl2vl_width, src->sl2vl_width, nn);
		dst->sl2vl_n = src->sl2vl_n;
		dst->sl2vl_nodes = nn;
	}
	if (src->part_sl) {
		dst->part_sl = malloc((size_t)src->n_part_sl + 1);
		if (!dst->part_sl)
			goto nomem;
		memcpy(dst->part_sl, src->part_sl, src->n_part_sl);
		dst->n_part_sl = src->n_part_sl;
	}
	return 0;
nomem:
	lft_tables_free(dst);
	return -1;
}

/* ---- extended LIDs: the same plan on a secondary column ---- */

/* What row r does with vLID v now, as a primary entry would say it. */
static uint8_t x_entry(const struct fabric *f, const struct lft_tables *t,
		       uint32_t r, uint32_t v)
{
	uint32_t x = v - FAB_VLID_BASE;
	uint8_t p = x < t->x_blocks * 64 ? xlft_get(t, r, x) : LFT_DROP;
	if (p == LFT_DROP && fabric_is_vswitch(f, t->sw_node[r]))
		p = t->xdefault[r];	/* a vSwitch sends it up */
	return p;
}

/*
 * Sets row r's secondary entry for v from a primary-style entry p (on a
 * vSwitch its uplink is "none": DefaultPort); 1 when it changed, -1 on
 * ENOMEM.
 */
static int x_set(const struct fabric *f, struct lft_tables *t, uint32_t r,
		 uint32_t v, uint8_t p)
{
	uint32_t x = v - FAB_VLID_BASE;
	if (fabric_is_vswitch(f, t->sw_node[r]) && p == t->xdefault[r])
		p = LFT_DROP;
	if (xlft_get(t, r, x) == p)
		return 0;
	return xlft_set(t, r, x, p) < 0 ? -1 : 1;
}

int migrate_plan_xvm(const struct fabric *f, struct lft_tables *t,
		     uint32_t vm_pi, uint32_t dst_vf_pi, int scheme, int method,
		     const uint32_t *rank, struct migration *m, char *err,
		     size_t errlen)
{
	uint64_t t0 = now_us();
	struct fabric ff;
	struct lft_tables tt = { 0 };
	struct mig_cols c;
	uint8_t *prio = NULL, *raw = NULL;
	uint32_t v = f->ports[vm_pi].lid, w = f->ports[dst_vf_pi].lid;
	uint32_t col[2] = { t->max_lid + 1, t->max_lid + 2 };
	int two = scheme == MIG_PREPOPULATED;
	int rc = -1;
	memset(m, 0, sizeof(*m));
	if (!fabric_is_vlid(v) || (two && !fabric_is_vlid(w)) || !t->xrow ||
	    v > f->max_vlid || (two && w > f->max_vlid)) {
		snprintf(err, errlen, "not a VM on a vLID%s", two ?
			 " moving to a VF with a vLID" : "");
		return -1;
	}
	if (col[1] >= FAB_MLID_BASE) {
		snprintf(err, errlen, "no room for the vLIDs' stand-in columns");
		return -1;
	}
	/*
	 * The vLIDs' columns stand in as two unused pLIDs of a copy of the
	 * model and tables, so that the marking and the new entries are
	 * exactly migrate_plan_vm's.
	 */
	fabric_init(&ff);
	if (fabric_clone(&ff, f) < 0 ||
	    migrate_tables_copy(&tt, t, f, col[two]) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	ff.ports[vm_pi].lid = col[0];
	if (two)
		ff.ports[dst_vf_pi].lid = col[1];
	if (fabric_index_lids(&ff) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (uint32_t r = 0; r < t->n_sw; r++) {
		lft_row(&tt, r)[col[0]] = x_entry(f, t, r, v);
		if (two)
			lft_row(&tt, r)[col[1]] = x_entry(f, t, r, w);
	}
	if (!(prio = malloc((size_t)t->n_sw + 1))) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (plan_vm(&ff, &tt, vm_pi, dst_vf_pi, scheme, method, rank, m, &c,
		    prio, err, errlen) < 0)
		goto out;
	/*
	 * Back to the secondary tables: the order on the stand-ins' entries
	 * (c.before, as plan_vm took them), each written in its vLID's
	 * secondary block; the mixed writes' entries before as the
	 * secondary tables hold them.
	 */
	uint32_t lids[2] = { v, w };
	raw = malloc((size_t)t->n_sw * c.n + 1);
	if (!raw) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (unsigned k = 0; k < c.n; k++) {
		uint32_t x = lids[k] - FAB_VLID_BASE;
		c.lid[k] = col[k];
		c.block[k] = x / FAB_LFT_BLOCK;
		for (uint32_t r = 0; r < t->n_sw; r++)
			raw[(size_t)r * c.n + k] = x < t->x_blocks * 64u ?
						   xlft_get(t, r, x) : LFT_DROP;
	}
	for (uint32_t r = 0; r < t->n_sw; r++)
		for (unsigned k = 0; k < c.n; k++)
			if (x_set(f, t, r, lids[k], lft_row(&tt, r)[col[k]]) < 0) {
				snprintf(err, errlen, "out of memory");
				goto out;
			}
	c.before = m->ord_before;
	/* wave 0: the destination VF's PortInfo (vmexec_port_sets()) */
	if (mig_order(&ff, &tt, &c, prio, 1, m, &m->xw, &m->n_xw) < 0) {
		order_failed(err, errlen);
		goto out;
	}
	free(m->ord_before);
	m->ord_before = raw;
	raw = NULL;
	for (unsigned k = 0; k < c.n; k++)
		m->ord_lid[k] = lids[k];
	if (count_writes(m, m->xw, m->n_xw, t->n_sw, 0) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	m->vm_lid = v;
	if (two)
		m->dst_lid = w;
	m->xlft_blocks = m->n_xw;
	m->src_wave = (uint8_t)m->waves;
	m->waves++;
	plan_timed(m, t0);
	rc = 0;
out:
	if (rc < 0)
		migration_free(m);
	free(prio);
	free(raw);
	lft_tables_free(&tt);
	fabric_free(&ff);
	return rc;
}

/*
 * Sets v's entry on every row to want[] (primary-style: a vSwitch's
 * uplink for its DefaultPort); the blocks that differ go to m->xw, in
 * the LFT order: under the extension a vSwitch without an entry sends
 * the vLID up, so the VF's vSwitch changes before the leaf sends the
 * vLID down to it (a boot), and after the leaf drops it (a destroy).
 */
static int x_rewrite(const struct fabric *f, struct lft_tables *t, uint32_t v,
		     const uint8_t *want, struct migration *m, char *err,
		     size_t errlen)
{
	uint32_t x = v - FAB_VLID_BASE;
	struct mig_cols c = { .n = 1, .lid = { v }, .block = { x / FAB_LFT_BLOCK },
			      .after = want };
	uint8_t *before = malloc((size_t)t->n_sw + 1);
	uint8_t *prio = calloc((size_t)t->n_sw + 1, 1);
	m->ord_before = malloc((size_t)t->n_sw + 1);
	if (!before || !prio || !m->ord_before)
		goto enomem;
	for (uint32_t r = 0; r < t->n_sw; r++) {
		before[r] = x_entry(f, t, r, v);
		m->ord_before[r] = x < t->x_blocks * 64u ? xlft_get(t, r, x) : LFT_DROP;
	}
	c.before = before;
	for (uint32_t r = 0; r < t->n_sw; r++)
		if (x_set(f, t, r, v, want[r]) < 0)
			goto enomem;
	if (mig_order(f, t, &c, prio, 0, m, &m->xw, &m->n_xw) < 0 ||
	    count_writes(m, m->xw, m->n_xw, t->n_sw, 0) < 0) {
		free(before);
		free(prio);
		migration_free(m);
		order_failed(err, errlen);
		return -1;
	}
	free(before);
	free(prio);
	m->xlft_blocks = m->n_xw;
	m->src_wave = (uint8_t)m->waves;
	return 0;
enomem:
	free(before);
	free(prio);
	migration_free(m);
	snprintf(err, errlen, "out of memory");
	return -1;
}

int migrate_plan_xboot(const struct fabric *f, struct lft_tables *t,
		       uint32_t vf_pi, uint32_t vlid, struct migration *m,
		       char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	int vf;
	uint32_t vs = fabric_vswitch_of(f, vf_pi, &vf);
	uint32_t pf = vs == FAB_NONE ? FAB_NONE : fabric_vswitch_pf(f, vs);
	uint32_t pl = pf == FAB_NONE ? 0 : f->ports[pf].lid;
	uint8_t vs_port = 0;
	if (!fabric_is_vlid(vlid) || vf < 0 || !pl || pl > t->max_lid ||
	    fabric_vswitch_vf(f, vs, (unsigned)vf, &vs_port) == FAB_NONE) {
		snprintf(err, errlen, "not a VF with a routed PF, or not a vLID");
		return -1;
	}
	uint64_t t0 = now_us();
	uint8_t *want = malloc((size_t)t->n_sw + 1);
	if (!want || xlft_grow(f, t, (vlid - FAB_VLID_BASE) / 64 + 1) < 0) {
		free(want);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (uint32_t r = 0; r < t->n_sw; r++) {
		uint32_t node = t->sw_node[r];
		want[r] = node == vs ? vs_port :
			  fabric_is_vswitch(f, node) ? t->xdefault[r] :
			  lft_row(t, r)[pl];	/* as the PF */
	}
	int rc = x_rewrite(f, t, vlid, want, m, err, errlen);
	free(want);
	m->kind = MIG_BOOT;
	m->scheme = MIG_DYNAMIC;
	m->method = MIG_ITRC;
	m->vm_lid = vlid;
	m->dst_lid = pl;
	m->vm_pi = vf_pi;
	m->dst_pi = FAB_NONE;
	plan_timed(m, t0);
	return rc;
}

int migrate_plan_xdrop(const struct fabric *f, struct lft_tables *t,
		       uint32_t vlid, struct migration *m, char *err,
		       size_t errlen)
{
	memset(m, 0, sizeof(*m));
	if (!fabric_is_vlid(vlid) || !t->xrow ||
	    vlid - FAB_VLID_BASE >= (uint32_t)t->x_blocks * 64) {
		snprintf(err, errlen, "vLID 0x%x has no secondary entries", vlid);
		return -1;
	}
	uint64_t t0 = now_us();
	uint8_t *want = malloc((size_t)t->n_sw + 1);
	if (!want) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (uint32_t r = 0; r < t->n_sw; r++)
		want[r] = fabric_is_vswitch(f, t->sw_node[r]) ? t->xdefault[r] : LFT_DROP;
	int rc = x_rewrite(f, t, vlid, want, m, err, errlen);
	free(want);
	m->kind = MIG_DROP;
	m->scheme = MIG_DYNAMIC;
	m->method = MIG_ITRC;
	m->vm_lid = vlid;
	m->vm_pi = fabric_lid_port(f, vlid);
	m->dst_pi = FAB_NONE;
	plan_timed(m, t0);
	return rc;
}
