/*
 * The path-record distinguisher (see prd.h for what it compares and how
 * it keeps to what changed).
 *
 * Old and new are matched by GUID: nodes by node GUID, ports by node and
 * port number, LFT rows by their switch, a destination LID by its port
 * and its offset in the port's LMC range.  A column is a destination
 * LID of a CA or router port present in both; a source a CA or router
 * end port present in both.
 */
#include "traps/prd.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "routing/graph.h"
#include "routing/path.h"
#include "sm/base/clock.h"

struct prd {
	int have;
	struct fabric f;
	struct lft_tables t;
	struct prd_params pp;
};

/* A switch's facts towards one LID: reached or not, least MTU, link rates. */
struct mfact {
	uint32_t stamp;
	uint8_t st;		/* M_* */
	uint8_t mtu;		/* 0xff: no MTU seen */
	uint16_t hops;		/* links crossed */
	uint32_t rates;		/* bit r: a port of rate code r on the way */
};

enum { M_BUSY = 1, M_OK, M_FAIL };

/* What crossing the link of a port adds to a path. */
struct linkf {
	uint8_t ok;		/* usable */
	uint8_t mtu;
	uint32_t rates;
};

struct memo {
	const struct fabric *f;
	const struct lft_tables *t;
	struct linkf *lk;	/* per port */
	struct mfact *m;	/* per row */
	uint32_t *stack;	/* rows on the walk */
	uint8_t *smtu;		/* the link each of them crosses */
	uint8_t *shop;		/* 1: it crosses one */
	uint32_t *srates;
	uint32_t stamp;
};

struct diff {
	const struct fabric *of, *nf;
	const struct lft_tables *ot, *nt;
	uint32_t *n2o;		/* new node -> old node, FAB_NONE */
	uint32_t *col_old;	/* new LID -> its old LID (0: not a column) */
	uint32_t *col_new;	/* old LID -> new LID (0: none) */
	uint8_t *dirty;		/* per new LID */
	uint8_t *src_state;	/* per new port: S_* */
	uint32_t *leaf_off;	/* per new row + 1: clean sources behind it */
	uint32_t *leaf_src;
	struct memo mo, mn;
	int per_pair;		/* SL tables or changed parameters: check each pair */
	int params_differ;
	uint8_t old_ltv;
	const struct prd_params *pp;
	struct prd_change *out;
	size_t n_out, cap_out;
	struct prd_stats *st;
};

enum { S_NONE, S_CLEAN, S_DIRTY };

struct prd *prd_new(void)
{
	return calloc(1, sizeof(struct prd));
}

static void drop_state(struct prd *p)
{
	if (p->have) {
		fabric_free(&p->f);
		lft_tables_free(&p->t);
	}
	p->have = 0;
}

void prd_free(struct prd *p)
{
	if (!p)
		return;
	drop_state(p);
	free(p);
}

static void *dup_mem(const void *src, size_t len)
{
	void *d = malloc(len ? len : 1);
	if (d && len)
		memcpy(d, src, len);
	return d;
}

/* The tables without the SL-to-VL tables, which no PathRecord shows. */
static int tables_copy(struct lft_tables *d, const struct lft_tables *s,
		       uint32_t n_nodes)
{
	size_t cols = (size_t)s->max_lid + 1;
	memset(d, 0, sizeof(*d));
	d->n_sw = s->n_sw;
	d->max_lid = s->max_lid;
	d->sw_node = dup_mem(s->sw_node, s->n_sw * sizeof(*s->sw_node));
	d->row_of_node = dup_mem(s->row_of_node, n_nodes * sizeof(*s->row_of_node));
	d->port = dup_mem(s->port, s->n_sw * cols);
	if (s->sl && s->sl_class) {
		d->n_sl_class = s->n_sl_class;
		d->sl_class = dup_mem(s->sl_class, cols * sizeof(*s->sl_class));
		d->sl = dup_mem(s->sl, (size_t)s->n_sl_class * cols);
	}
	if (!d->sw_node || !d->row_of_node || !d->port ||
	    (s->sl && s->sl_class && (!d->sl || !d->sl_class))) {
		lft_tables_free(d);
		return -1;
	}
	return 0;
}

int prd_copy(struct fabric *df, struct lft_tables *dt, const struct fabric *f,
	     const struct lft_tables *t)
{
	if (fabric_clone(df, f) < 0)
		return -1;
	if (tables_copy(dt, t, f->n_nodes) < 0) {
		fabric_free(df);
		return -1;
	}
	return 0;
}

int prd_commit(struct prd *p, const struct fabric *f,
	       const struct lft_tables *t, const struct prd_params *pp)
{
	struct fabric nf;
	struct lft_tables nt;
	if (prd_copy(&nf, &nt, f, t) < 0)
		return -1;
	prd_commit_move(p, &nf, &nt, pp);
	return 0;
}

void prd_commit_move(struct prd *p, struct fabric *f, struct lft_tables *t,
		     const struct prd_params *pp)
{
	drop_state(p);
	p->f = *f;
	p->t = *t;
	p->pp = *pp;
	p->have = 1;
	memset(f, 0, sizeof(*f));
	memset(t, 0, sizeof(*t));
}

size_t prd_state_bytes(const struct prd *p)
{
	if (!p->have)
		return 0;
	const struct fabric *f = &p->f;
	const struct lft_tables *t = &p->t;
	size_t cols = (size_t)t->max_lid + 1;
	return sizeof(*p) + f->n_nodes * sizeof(*f->nodes) +
	       f->n_ports * sizeof(*f->ports) +
	       (f->lid_port ? ((size_t)f->max_lid + 1) * sizeof(*f->lid_port) : 0) +
	       f->node_by_guid.cap * (sizeof(uint64_t) + sizeof(uint32_t)) +
	       t->n_sw * sizeof(*t->sw_node) +
	       f->n_nodes * sizeof(*t->row_of_node) + t->n_sw * cols +
	       (t->sl ? (size_t)t->n_sl_class * cols +
		cols * sizeof(*t->sl_class) : 0);
}

/* A link a path may cross, as path.c has it: LinkUp both ends, neither Down. */
static int usable(const struct fabric *f, uint32_t pi)
{
	return graph_link_up(f, pi) && f->ports[pi].state != PORT_DOWN &&
	       f->ports[f->ports[pi].remote].state != PORT_DOWN;
}

static int is_ca(const struct fabric *f, uint32_t node)
{
	return f->nodes[node].type != FAB_SWITCH;
}

/* The old port of new port pi, or FAB_NONE. */
static uint32_t old_port(const struct diff *d, uint32_t pi)
{
	const struct fab_port *p = &d->nf->ports[pi];
	uint32_t o = d->n2o[p->node];
	if (o == FAB_NONE || p->num > d->of->nodes[o].nports)
		return FAB_NONE;
	return fabric_port(d->of, o, p->num);
}

/* What a path sees of a port: the fields path.c reads. */
static int port_same(const struct fab_port *a, const struct fab_port *b)
{
	return a->mtu_cap == b->mtu_cap && a->width_active == b->width_active &&
	       a->speed_active == b->speed_active;
}

/* The link of new port pn is what the link of old port po was. */
static int link_same(const struct diff *d, uint32_t po, uint32_t pn)
{
	const struct fabric *of = d->of, *nf = d->nf;
	int uo = usable(of, po), un = usable(nf, pn);
	if (uo != un)
		return 0;
	if (!uo)
		return 1;	/* carries nothing, before and now */
	uint32_t ro = of->ports[po].remote, rn = nf->ports[pn].remote;
	if (of->nodes[of->ports[ro].node].guid != nf->nodes[nf->ports[rn].node].guid ||
	    of->ports[ro].num != nf->ports[rn].num)
		return 0;
	return port_same(&of->ports[po], &nf->ports[pn]) &&
	       port_same(&of->ports[ro], &nf->ports[rn]);
}

static void take(uint8_t *mtu, uint32_t *rates, const struct fab_port *p)
{
	if (p->mtu_cap && p->mtu_cap < *mtu)
		*mtu = p->mtu_cap;
	if (p->width_active)
		*rates |= 1u << (path_link_rate(p->width_active, p->speed_active) & 31);
}

static int memo_init(struct memo *m, const struct fabric *f,
		     const struct lft_tables *t)
{
	m->f = f;
	m->t = t;
	m->stamp = 0;
	m->m = calloc((size_t)t->n_sw + 1, sizeof(*m->m));
	m->stack = malloc(((size_t)t->n_sw + 1) * sizeof(*m->stack));
	m->smtu = malloc((size_t)t->n_sw + 1);
	m->shop = malloc((size_t)t->n_sw + 1);
	m->srates = malloc(((size_t)t->n_sw + 1) * sizeof(*m->srates));
	m->lk = calloc((size_t)f->n_ports + 1, sizeof(*m->lk));
	if (!m->m || !m->stack || !m->smtu || !m->shop || !m->srates || !m->lk)
		return -1;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		struct linkf *l = &m->lk[pi];
		if (!usable(f, pi))
			continue;
		l->ok = 1;
		l->mtu = 0xff;
		take(&l->mtu, &l->rates, &f->ports[pi]);
		take(&l->mtu, &l->rates, &f->ports[f->ports[pi].remote]);
	}
	return 0;
}

static void memo_free(struct memo *m)
{
	free(m->lk);
	free(m->m);
	free(m->stack);
	free(m->smtu);
	free(m->shop);
	free(m->srates);
}

/*
 * The facts of the walk from switch node `node` to dlid, whose port is
 * dst, following t as path.c does (a loop, a hole, a link that is not
 * usable, a CA that is not dst on the way: not reached); memoised per row
 * for the current stamp.
 */
static struct mfact memo_walk(struct memo *m, uint32_t node, uint32_t dlid,
			      uint32_t dst)
{
	const struct fabric *f = m->f;
	const struct lft_tables *t = m->t;
	struct mfact res = { .st = M_FAIL, .mtu = 0xff };
	uint32_t sp = 0;
	for (;;) {
		uint32_t row = t->row_of_node[node];
		if (row == FAB_NONE || row >= t->n_sw)
			break;
		struct mfact *x = &m->m[row];
		if (x->stamp == m->stamp) {
			if (x->st != M_BUSY)
				res = *x;	/* else a loop: not reached */
			break;
		}
		x->stamp = m->stamp;
		x->st = M_BUSY;
		m->stack[sp] = row;
		m->smtu[sp] = 0xff;
		m->shop[sp] = 0;
		m->srates[sp] = 0;
		sp++;
		uint8_t out = lft_row(t, row)[dlid];
		if (out == 0) {
			if (fabric_port(f, node, 0) == dst)
				res.st = M_OK;
			break;
		}
		if (out == LFT_DROP || out > f->nodes[node].nports)
			break;
		uint32_t pi = fabric_port(f, node, out);
		if (!m->lk[pi].ok)
			break;
		uint32_t next = f->ports[pi].remote;
		m->smtu[sp - 1] = m->lk[pi].mtu;
		m->shop[sp - 1] = 1;
		m->srates[sp - 1] = m->lk[pi].rates;
		if (next == dst) {
			res.st = M_OK;
			break;
		}
		node = f->ports[next].node;
		if (f->nodes[node].type != FAB_SWITCH)
			break;
	}
	while (sp-- > 0) {
		if (res.st == M_OK) {
			if (m->smtu[sp] < res.mtu)
				res.mtu = m->smtu[sp];
			res.rates |= m->srates[sp];
			res.hops = (uint16_t)(res.hops + m->shop[sp]);
		}
		res.stamp = m->stamp;
		m->m[m->stack[sp]] = res;
	}
	return res;
}

static int add_change(struct diff *d, uint32_t src, uint32_t dst,
		      uint32_t dlid, uint8_t kind)
{
	if (kind == PRD_REPATH)
		d->st->repath++;
	else
		d->st->unpath++;
	if (d->pp->max_changes && d->n_out >= d->pp->max_changes) {
		d->st->overflow = 1;
		return 0;
	}
	if (d->n_out == d->cap_out) {
		size_t c = d->cap_out ? d->cap_out * 2 : 256;
		void *n = realloc(d->out, c * sizeof(*d->out));
		if (!n)
			return -1;
		d->out = n;
		d->cap_out = c;
	}
	d->out[d->n_out++] = (struct prd_change){
		.src = src, .dst = dst, .slid = d->nf->ports[src].lid,
		.dlid = dlid, .kind = kind,
	};
	return 0;
}

/* Pair (new port src, new LID dlid of port dst) resolved old and new. */
static int resolve_pair(struct diff *d, uint32_t src, uint32_t dst,
			uint32_t dlid)
{
	struct path_facts a, b;
	uint32_t osrc = old_port(d, src);
	d->st->pairs_resolved++;
	int ro = path_resolve(d->of, d->ot, osrc, d->col_old[dlid], &a) == 0;
	int rn = path_resolve(d->nf, d->nt, src, dlid, &b) == 0;
	if (ro && !rn)
		return add_change(d, src, dst, dlid, PRD_UNPATH);
	if (!rn)
		return 0;
	if (!ro || a.slid != b.slid || a.dlid != b.dlid || a.sl != b.sl ||
	    a.mtu != b.mtu || a.rate != b.rate || d->params_differ ||
	    path_packet_life(d->of, &a, osrc, d->old_ltv) !=
	    path_packet_life(d->nf, &b, src, d->pp->ltv))
		return add_change(d, src, dst, dlid, PRD_REPATH);
	return 0;
}

/* Maps nodes, columns and sources; marks moved LIDs and dirty sources. */
static int map_model(struct diff *d)
{
	const struct fabric *of = d->of, *nf = d->nf;
	d->n2o = malloc(((size_t)nf->n_nodes + 1) * sizeof(*d->n2o));
	d->col_old = calloc((size_t)nf->max_lid + 1, sizeof(*d->col_old));
	d->col_new = calloc((size_t)of->max_lid + 1, sizeof(*d->col_new));
	d->dirty = calloc((size_t)nf->max_lid + 1, 1);
	d->src_state = calloc((size_t)nf->n_ports + 1, 1);
	if (!d->n2o || !d->col_old || !d->col_new || !d->dirty || !d->src_state)
		return -1;
	for (uint32_t i = 0; i < nf->n_nodes; i++) {
		uint32_t o = fabric_find_node(of, nf->nodes[i].guid);
		if (o != FAB_NONE && (of->nodes[o].type != nf->nodes[i].type ||
				      of->nodes[o].nports != nf->nodes[i].nports))
			o = FAB_NONE;
		d->n2o[i] = o;
	}
	for (uint32_t l = 1; l <= nf->max_lid && l <= d->nt->max_lid; l++) {
		uint32_t pn = nf->lid_port[l];
		if (pn == FAB_NONE || !is_ca(nf, nf->ports[pn].node))
			continue;
		uint32_t po = old_port(d, pn);
		if (po == FAB_NONE || !fabric_is_endport(of, po) || !of->ports[po].lid)
			continue;
		uint32_t k = l - nf->ports[pn].lid;
		uint32_t lo = of->ports[po].lid + k;
		if (k >= (1u << fabric_port_lmc(of, po)) || lo > of->max_lid ||
		    lo > d->ot->max_lid || of->lid_port[lo] != po)
			continue;
		d->col_old[l] = lo;
		d->col_new[lo] = l;
		d->st->columns++;
		if (lo != l)
			d->dirty[l] = 1;
	}
	for (uint32_t pn = 0; pn < nf->n_ports; pn++) {
		const struct fab_port *p = &nf->ports[pn];
		if (!is_ca(nf, p->node) || !fabric_is_endport(nf, pn) || !p->lid)
			continue;
		uint32_t po = old_port(d, pn);
		if (po == FAB_NONE || !fabric_is_endport(of, po) || !of->ports[po].lid)
			continue;
		int clean = of->ports[po].lid == p->lid &&
			    fabric_port_lmc(of, po) == fabric_port_lmc(nf, pn) &&
			    link_same(d, po, pn);
		if (clean && usable(nf, pn) &&
		    is_ca(nf, nf->ports[p->remote].node))
			clean = 0;	/* cabled to a CA: resolved pair by pair */
		d->src_state[pn] = clean ? S_CLEAN : S_DIRTY;
		if (!clean)
			d->st->dirty_sources++;
	}
	return 0;
}

static void mark_old(struct diff *d, uint32_t lo)
{
	if (lo && d->col_new[lo])
		d->dirty[d->col_new[lo]] = 1;
}

/* Entries that differ, and every LID sent out of a port whose link changed. */
static void mark_switches(struct diff *d)
{
	const struct fabric *of = d->of, *nf = d->nf;
	const struct lft_tables *ot = d->ot, *nt = d->nt;
	uint32_t top = ot->max_lid < nt->max_lid ? ot->max_lid : nt->max_lid;
	for (uint32_t r = 0; r < nt->n_sw; r++) {
		uint32_t nn = nt->sw_node[r], on = d->n2o[nn];
		if (on == FAB_NONE || ot->row_of_node[on] == FAB_NONE)
			continue;
		const uint8_t *a = lft_row(nt, r);
		const uint8_t *b = lft_row(ot, ot->row_of_node[on]);
		for (uint32_t l = 1; l <= top; l++) {
			if ((l & 7) == 0 && l + 8 <= top + 1 && !memcmp(a + l, b + l, 8)) {
				l += 7;	/* eight equal entries at once */
				continue;
			}
			if (a[l] == b[l])
				continue;
			if (d->col_old[l])
				d->dirty[l] = 1;
			mark_old(d, l);
		}
		for (unsigned p = 1; p <= nf->nodes[nn].nports; p++) {
			if (link_same(d, fabric_port(of, on, p), fabric_port(nf, nn, p)))
				continue;
			for (uint32_t l = 1; l <= ot->max_lid; l++)
				if (b[l] == p)
					mark_old(d, l);
		}
	}
}

/* Clean sources by the row of their leaf switch (a counting sort). */
static int group_sources(struct diff *d)
{
	const struct fabric *nf = d->nf;
	const struct lft_tables *nt = d->nt;
	uint32_t n = 0;
	d->leaf_off = calloc((size_t)nt->n_sw + 2, sizeof(*d->leaf_off));
	if (!d->leaf_off)
		return -1;
	for (uint32_t pn = 0; pn < nf->n_ports; pn++) {
		if (d->src_state[pn] != S_CLEAN || !usable(nf, pn))
			continue;
		uint32_t row = nt->row_of_node[nf->ports[nf->ports[pn].remote].node];
		if (row == FAB_NONE)
			continue;
		d->leaf_off[row + 1]++;
		n++;
	}
	for (uint32_t r = 0; r < nt->n_sw; r++)
		d->leaf_off[r + 1] += d->leaf_off[r];
	d->leaf_src = malloc(((size_t)n + 1) * sizeof(*d->leaf_src));
	uint32_t *fill = malloc(((size_t)nt->n_sw + 1) * sizeof(*fill));
	if (!d->leaf_src || !fill) {
		free(fill);
		return -1;
	}
	memcpy(fill, d->leaf_off, nt->n_sw * sizeof(*fill));
	for (uint32_t pn = 0; pn < nf->n_ports; pn++) {
		if (d->src_state[pn] != S_CLEAN || !usable(nf, pn))
			continue;
		uint32_t row = nt->row_of_node[nf->ports[nf->ports[pn].remote].node];
		if (row != FAB_NONE)
			d->leaf_src[fill[row]++] = pn;
	}
	free(fill);
	return 0;
}

/* SL tables (QoS): a column where some clean source's SL differs is dirty. */
static void mark_sls(struct diff *d)
{
	const struct fabric *nf = d->nf;
	for (uint32_t l = 1; l <= nf->max_lid; l++) {
		if (!d->col_old[l] || d->dirty[l])
			continue;
		for (uint32_t i = 0; i < d->leaf_off[d->nt->n_sw] && !d->dirty[l]; i++) {
			uint32_t s = d->leaf_src[i];
			uint32_t os = old_port(d, s);
			if (lft_sl(d->ot, d->of->ports[os].lid, d->col_old[l]) !=
			    lft_sl(d->nt, nf->ports[s].lid, l))
				d->dirty[l] = 1;
		}
	}
}

/* One dirty column: leaves whose facts differ, pair by pair. */
static int do_column(struct diff *d, uint32_t l)
{
	const struct fabric *of = d->of, *nf = d->nf;
	uint32_t lo = d->col_old[l];
	uint32_t dst = nf->lid_port[l], odst = of->lid_port[lo];
	int moved = lo != l;
	d->mo.stamp++;
	d->mn.stamp++;
	for (uint32_t r = 0; r < d->nt->n_sw; r++) {
		if (d->leaf_off[r] == d->leaf_off[r + 1])
			continue;
		uint32_t nn = d->nt->sw_node[r], on = d->n2o[nn];
		d->st->leaves_compared++;
		struct mfact fn = memo_walk(&d->mn, nn, l, dst);
		struct mfact fo = { .st = M_FAIL };
		if (on != FAB_NONE)
			fo = memo_walk(&d->mo, on, lo, odst);
		/* a leaf not matched by GUID: pair by pair */
		int same = on != FAB_NONE && fn.st == fo.st &&
			   (fn.st != M_OK || (fn.mtu == fo.mtu &&
			    fn.rates == fo.rates && fn.hops == fo.hops));
		if (same && (fn.st != M_OK || (!moved && !d->per_pair)))
			continue;
		for (uint32_t i = d->leaf_off[r]; i < d->leaf_off[r + 1]; i++) {
			uint32_t s = d->leaf_src[i];
			if (s == dst)
				continue;
			int rc;
			if (!same) {
				rc = resolve_pair(d, s, dst, l);
			} else {
				/* the same links: only the pair's own fields */
				uint32_t os = old_port(d, s);
				int differ = moved || d->params_differ ||
					lft_sl(d->ot, of->ports[os].lid, lo) !=
					lft_sl(d->nt, nf->ports[s].lid, l);
				rc = differ ? add_change(d, s, dst, l, PRD_REPATH) : 0;
			}
			if (rc < 0)
				return -1;
		}
	}
	return 0;
}

static void diff_free(struct diff *d)
{
	free(d->n2o);
	free(d->col_old);
	free(d->col_new);
	free(d->dirty);
	free(d->src_state);
	free(d->leaf_off);
	free(d->leaf_src);
	memo_free(&d->mo);
	memo_free(&d->mn);
}

static int cancelled(const struct diff *d)
{
	return d->pp->cancel && __atomic_load_n(d->pp->cancel, __ATOMIC_RELAXED);
}

static int run_diff(struct diff *d)
{
	const struct fabric *nf = d->nf;
	if (map_model(d) < 0 || group_sources(d) < 0 ||
	    memo_init(&d->mo, d->of, d->ot) < 0 ||
	    memo_init(&d->mn, d->nf, d->nt) < 0)
		return -1;
	mark_switches(d);
	if (d->ot->sl || d->nt->sl)
		mark_sls(d);
	for (uint32_t l = 1; l <= nf->max_lid; l++) {
		if (!d->col_old[l])
			continue;
		if (d->params_differ)
			d->dirty[l] = 1;
		if (!d->dirty[l])
			continue;
		d->st->dirty_columns++;
		if (cancelled(d) || do_column(d, l) < 0)
			return -1;
	}
	/* sources whose own link or LID changed: every column, pair by pair */
	for (uint32_t s = 0; s < nf->n_ports; s++) {
		if (d->src_state[s] != S_DIRTY)
			continue;
		if (cancelled(d))
			return -1;
		for (uint32_t l = 1; l <= nf->max_lid; l++) {
			uint32_t dst = d->col_old[l] ? nf->lid_port[l] : FAB_NONE;
			if (dst == FAB_NONE || dst == s)
				continue;
			if (resolve_pair(d, s, dst, l) < 0)
				return -1;
		}
	}
	return 0;
}

int prd_diff(struct prd *p, const struct fabric *f, const struct lft_tables *t,
	     const struct prd_params *pp, struct prd_change **out, size_t *n,
	     struct prd_stats *st)
{
	uint64_t t0 = clock_us();
	memset(st, 0, sizeof(*st));
	*out = NULL;
	*n = 0;
	if (!p->have) {
		st->first = 1;
		return 0;
	}
	struct diff d = {
		.of = &p->f, .nf = f, .ot = &p->t, .nt = t, .pp = pp, .st = st,
	};
	d.params_differ = p->pp.pkey != pp->pkey || p->pp.ltv != pp->ltv;
	d.old_ltv = p->pp.ltv;
	d.per_pair = d.params_differ || p->t.sl || t->sl;
	int rc = 0;
	if (!f->lid_port || !p->f.lid_port || !t->port)
		rc = 0;		/* no LIDs, no routes: no pairs */
	else
		rc = run_diff(&d);
	diff_free(&d);
	if (rc < 0) {
		free(d.out);
		memset(st, 0, sizeof(*st));
		return -1;
	}
	*out = d.out;
	*n = d.n_out;
	st->state_bytes = prd_state_bytes(p);
	st->us = clock_us() - t0;
	return 0;
}
