/*
 * Job-aware routing (routing/jobs/jobroute.h): channel loads, a job's
 * flows on the least-loaded of their shortest paths under the one-port-
 * per-(switch, LID) constraint, the D-mod-K guard, and the exact release
 * at the job's end.
 */
#include <stdlib.h>
#include <string.h>

#include "routing/jobs/jobtree.h"

#define MAX_PATH (2 * 16 + 2)	/* channels of a path: injection, up, down */

struct job_loads {
	const struct job_tree *tr;
	int64_t *load;
};

struct job_loads *job_loads_new(const struct job_tree *tr)
{
	struct job_loads *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->tr = tr;
	l->load = calloc(tr->n_ch + 1, sizeof(*l->load));
	if (!l->load) {
		free(l);
		return NULL;
	}
	return l;
}

void job_loads_free(struct job_loads *l)
{
	if (!l)
		return;
	free(l->load);
	free(l);
}

int64_t job_loads_max(const struct job_loads *l)
{
	int64_t m = 0;
	for (uint32_t c = 0; c < l->tr->n_ch; c++)
		if (l->load[c] > m)
			m = l->load[c];
	return m;
}

int64_t job_loads_get(const struct job_loads *l, uint32_t ch)
{
	return ch < l->tr->n_ch ? l->load[ch] : 0;
}

/* ---- the entries a job fixed: (row, LID) -> port, open addressing ---- */

struct fixmap {
	uint64_t *key;		/* row * (max_lid + 1) + lid + 1; 0: empty */
	uint8_t *port;
	size_t cap, n;
};

static uint64_t fix_key(const struct job_tree *tr, uint32_t row, uint32_t lid)
{
	return (uint64_t)row * (tr->base->max_lid + 1) + lid + 1;
}

static size_t fix_slot(const struct fixmap *m, uint64_t k)
{
	size_t i = (size_t)((k * 0x9E3779B97F4A7C15ull) >> 17) & (m->cap - 1);
	while (m->key[i] && m->key[i] != k)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int fix_init(struct fixmap *m, size_t want)
{
	m->cap = 64;
	while (m->cap < 2 * want + 2)
		m->cap <<= 1;
	m->n = 0;
	m->key = calloc(m->cap, sizeof(*m->key));
	m->port = calloc(m->cap, sizeof(*m->port));
	return m->key && m->port ? 0 : -1;
}

static void fix_free(struct fixmap *m)
{
	free(m->key);
	free(m->port);
}

/* The port fixed at (row, lid), or 0. */
static uint8_t fix_get(const struct fixmap *m, uint64_t k)
{
	size_t i = fix_slot(m, k);
	return m->key[i] ? m->port[i] : 0;
}

static int fix_set(struct fixmap *m, uint64_t k, uint8_t port)
{
	if (2 * (m->n + 1) > m->cap) {
		struct fixmap g;
		if (fix_init(&g, m->cap) < 0) {
			fix_free(&g);
			return -1;
		}
		for (size_t i = 0; i < m->cap; i++)
			if (m->key[i]) {
				size_t j = fix_slot(&g, m->key[i]);
				g.key[j] = m->key[i];
				g.port[j] = m->port[i];
				g.n++;
			}
		fix_free(m);
		*m = g;
	}
	size_t i = fix_slot(m, k);
	if (!m->key[i]) {
		m->key[i] = k;
		m->n++;
	}
	m->port[i] = port;
	return 0;
}

/* ---- a job's load, channel by channel ---- */

struct acc {
	int64_t *w;		/* dense, per channel */
	uint32_t *touched;
	size_t n, cap;
};

static int acc_init(struct acc *a, uint32_t n_ch)
{
	memset(a, 0, sizeof(*a));
	a->w = calloc(n_ch + 1, sizeof(*a->w));
	a->cap = 1024;
	a->touched = malloc(a->cap * sizeof(*a->touched));
	return a->w && a->touched ? 0 : -1;
}

static void acc_free(struct acc *a)
{
	free(a->w);
	free(a->touched);
}

static int acc_add(struct acc *a, uint32_t ch, int64_t w)
{
	if (!a->w[ch]) {
		if (a->n == a->cap) {
			uint32_t *t = realloc(a->touched, 2 * a->cap * sizeof(*t));
			if (!t)
				return -1;
			a->touched = t;
			a->cap *= 2;
		}
		a->touched[a->n++] = ch;
	}
	a->w[ch] += w;
	return 0;
}

/* Adds sign * a to l. */
static void acc_apply(struct job_loads *l, const struct acc *a, int sign)
{
	for (size_t i = 0; i < a->n; i++)
		l->load[a->touched[i]] += sign * a->w[a->touched[i]];
}

/* The largest load of a's channels in l, with a added when plus. */
static int64_t acc_max(const struct job_loads *l, const struct acc *a, int plus)
{
	int64_t m = 0;
	for (size_t i = 0; i < a->n; i++) {
		uint32_t c = a->touched[i];
		int64_t v = l->load[c] + (plus ? a->w[c] : 0);
		if (v > m)
			m = v;
	}
	return m;
}

/* ---- paths ---- */

static uint32_t ch_of(const struct job_tree *tr, uint32_t row, uint8_t port)
{
	return row * tr->stride + port;
}

static uint32_t next_row(const struct job_tree *tr, uint32_t row, uint8_t port)
{
	const struct fabric *f = tr->f;
	const struct fab_port *fp = fabric_portp(f, tr->base->sw_node[row], port);
	return fp->remote == FAB_NONE ? JT_NONE : tr->base->row_of_node[f->ports[fp->remote].node];
}

/*
 * D-mod-K's path of flow s -> d from row at (the base tables' entries for
 * d's LID down to d) appended to ch[*n].  0, or -1 when the tables do not
 * lead there within the tree's height.
 */
static int base_path(const struct job_tree *tr, uint32_t at, uint32_t d,
		     uint32_t *ch, uint32_t *n)
{
	uint32_t lid = tr->host_lid[d];
	for (uint32_t hops = 0; hops <= 2 * tr->height; hops++) {
		uint8_t p = jt_base_port(tr, at, lid);
		if (p == LFT_DROP || *n >= MAX_PATH)
			return -1;
		ch[(*n)++] = ch_of(tr, at, p);
		if (at == tr->host_leaf[d])
			return p == tr->host_down[d] ? 0 : -1;
		at = next_row(tr, at, p);
		if (at == JT_NONE)
			return -1;
	}
	return -1;
}

/* One flow's search: the best candidate so far. */
struct search {
	const struct job_tree *tr;
	const struct job_loads *l;
	const struct fixmap *fix;
	uint32_t d, lid;
	uint32_t cur[MAX_PATH], n_cur;
	int64_t cur_max;
	uint32_t best[MAX_PATH], n_best;
	int64_t best_max;
	int found;
};

static void consider(struct search *s, const uint32_t *down, uint32_t n_down, int64_t m)
{
	if (s->found && m >= s->best_max)
		return;		/* the first of equals stays */
	memcpy(s->best, s->cur, s->n_cur * sizeof(*s->cur));
	memcpy(s->best + s->n_cur, down, n_down * sizeof(*down));
	s->n_best = s->n_cur + n_down;
	s->best_max = m;
	s->found = 1;
}

/* Every way up from row (taking what the job fixed), then down. */
static void search_from(struct search *s, uint32_t row)
{
	const struct job_tree *tr = s->tr;
	if (s->found && s->cur_max >= s->best_max)
		return;		/* cannot beat the best: equals lose */
	if (jt_above(tr, row, tr->host_leaf[s->d])) {
		uint32_t down[MAX_PATH], n = 0;
		if (base_path(tr, row, s->d, down, &n) < 0)
			return;
		int64_t m = s->cur_max;
		for (uint32_t i = 0; i < n; i++)
			if (s->l->load[down[i]] > m)
				m = s->l->load[down[i]];
		consider(s, down, n, m);
		return;
	}
	if (s->n_cur + 1 >= MAX_PATH)
		return;
	uint8_t fixed = fix_get(s->fix, fix_key(tr, row, s->lid));
	uint8_t first = fixed ? fixed : jt_base_port(tr, row, s->lid);
	/* the fixed port alone, else the base's first, then by port */
	for (int32_t u = -1; u < (int32_t)(tr->upoff[row + 1] - tr->upoff[row]); u++) {
		uint8_t p;
		uint32_t q;
		if (u < 0) {
			p = first;
			q = p == LFT_DROP ? JT_NONE : next_row(tr, row, p);
			if (q == JT_NONE || tr->lev[q] != tr->lev[row] + 1)
				continue;	/* not an up port: the base goes elsewhere */
		} else {
			if (fixed)
				break;
			p = tr->up_port[tr->upoff[row] + (uint32_t)u];
			q = tr->up_row[tr->upoff[row] + (uint32_t)u];
			if (p == first)
				continue;
		}
		uint32_t c = ch_of(tr, row, p);
		int64_t saved = s->cur_max;
		if (s->l->load[c] > s->cur_max)
			s->cur_max = s->l->load[c];
		s->cur[s->n_cur++] = c;
		search_from(s, q);
		s->n_cur--;
		s->cur_max = saved;
	}
}

static int cmp_flow_dst(const void *a, const void *b)
{
	const struct job_flow *x = a, *y = b;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct job_entry *x = a, *y = b;
	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	return x->lid < y->lid ? -1 : x->lid > y->lid;
}

/* D-mod-K's load of the flows into a.  0, or -1 (tables or memory). */
static int dmodk_load(const struct job_tree *tr, const struct job_flow *fl, size_t n,
		      struct acc *a)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t path[MAX_PATH], np = 0;
		path[np++] = jt_inject(tr, fl[i].src);
		if (base_path(tr, tr->host_leaf[fl[i].src], fl[i].dst, path, &np) < 0)
			return -1;
		for (uint32_t k = 0; k < np; k++)
			if (acc_add(a, path[k], fl[i].w) < 0)
				return -1;
	}
	return 0;
}

/*
 * The greedy: each flow (by destination, then source) on its best
 * candidate, its up ports fixed for the job, its load added to l (and
 * to a).  0, or -1.
 */
static int greedy(const struct job_tree *tr, struct job_loads *l,
		  const struct job_flow *fl, size_t n, struct fixmap *fix,
		  struct acc *a)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t s = fl[i].src, d = fl[i].dst;
		if (s >= tr->n_hosts || d >= tr->n_hosts || s == d)
			continue;
		struct search se = { .tr = tr, .l = l, .fix = fix, .d = d,
				     .lid = tr->host_lid[d] };
		se.cur[se.n_cur++] = jt_inject(tr, s);
		se.cur_max = l->load[se.cur[0]];
		search_from(&se, tr->host_leaf[s]);
		if (!se.found)
			return -1;
		for (uint32_t k = 0; k < se.n_best; k++) {
			uint32_t c = se.best[k];
			/* the up hops: switch channels before the way down */
			if (c < tr->n_sw * tr->stride) {
				uint32_t row = c / tr->stride;
				if (!jt_above(tr, row, tr->host_leaf[d]) &&
				    fix_set(fix, fix_key(tr, row, se.lid), (uint8_t)(c % tr->stride)) < 0)
					return -1;
			}
			if (acc_add(a, c, fl[i].w) < 0)
				return -1;
			l->load[c] += fl[i].w;
		}
	}
	return 0;
}

/* The entries of fix that differ from the base, sorted, into r. */
static int take_entries(const struct job_tree *tr, const struct fixmap *fix,
			struct job_route *r)
{
	r->e = malloc((fix->n + 1) * sizeof(*r->e));
	if (!r->e)
		return -1;
	uint32_t stride = tr->base->max_lid + 1;
	for (size_t i = 0; i < fix->cap; i++) {
		if (!fix->key[i])
			continue;
		uint64_t k = fix->key[i] - 1;
		uint32_t row = (uint32_t)(k / stride), lid = (uint32_t)(k % stride);
		if (fix->port[i] != jt_base_port(tr, row, lid))
			r->e[r->n_e++] = (struct job_entry){ row, lid, fix->port[i] };
	}
	qsort(r->e, r->n_e, sizeof(*r->e), cmp_entry);
	return 0;
}

/* r's channel list from a. */
static int take_channels(const struct acc *a, struct job_route *r)
{
	r->ch = malloc((a->n + 1) * sizeof(*r->ch));
	r->chw = malloc((a->n + 1) * sizeof(*r->chw));
	if (!r->ch || !r->chw)
		return -1;
	for (size_t i = 0; i < a->n; i++) {
		r->ch[i] = a->touched[i];
		r->chw[i] = a->w[a->touched[i]];
	}
	r->n_ch = a->n;
	return 0;
}

int job_route(const struct job_tree *tr, struct job_loads *l,
	      const struct job_flow *fl, size_t n, int mode, struct job_route *r)
{
	memset(r, 0, sizeof(*r));
	struct job_flow *order = malloc((n + 1) * sizeof(*order));
	struct acc job, dk, *in_l = NULL;	/* in_l: what l holds of this job */
	struct fixmap fix;
	int rc = -1;
	memset(&fix, 0, sizeof(fix));
	memset(&job, 0, sizeof(job));
	memset(&dk, 0, sizeof(dk));
	if (acc_init(&job, tr->n_ch) < 0 || acc_init(&dk, tr->n_ch) < 0 ||
	    fix_init(&fix, 4 * n) < 0 || !order)
		goto out;
	if (n)
		memcpy(order, fl, n * sizeof(*order));
	qsort(order, n, sizeof(*order), cmp_flow_dst);
	size_t m = 0;		/* the flows that route: known hosts, no self pair */
	for (size_t i = 0; i < n; i++)
		if (order[i].src < tr->n_hosts && order[i].dst < tr->n_hosts &&
		    order[i].src != order[i].dst)
			order[m++] = order[i];
	if (dmodk_load(tr, order, m, &dk) < 0)
		goto out;
	r->dmodk_max = acc_max(l, &dk, 1);
	if (mode != JOB_ROUTE_DMODK) {
		in_l = &job;	/* greedy() adds as it goes */
		if (greedy(tr, l, order, m, &fix, &job) < 0)
			goto out;
		r->max_load = acc_max(l, &job, 0);
	}
	if (mode == JOB_ROUTE_DMODK ||
	    (mode == JOB_ROUTE_GUARDED && r->max_load >= r->dmodk_max)) {
		if (in_l)
			acc_apply(l, in_l, -1);
		acc_apply(l, &dk, 1);
		in_l = &dk;
		r->max_load = r->dmodk_max;
		r->guarded = mode == JOB_ROUTE_GUARDED;
		rc = take_channels(&dk, r);
	} else {
		rc = take_entries(tr, &fix, r) < 0 || take_channels(&job, r) < 0 ? -1 : 0;
	}
out:
	if (rc < 0) {
		if (in_l)
			acc_apply(l, in_l, -1);
		job_route_free(r);
	}
	r->n_flows = n;
	free(order);
	acc_free(&job);
	acc_free(&dk);
	fix_free(&fix);
	return rc;
}

void job_unroute(struct job_loads *l, const struct job_route *r)
{
	for (size_t i = 0; i < r->n_ch; i++)
		l->load[r->ch[i]] -= r->chw[i];
}

int64_t job_route_max_now(const struct job_loads *l, const struct job_route *r)
{
	int64_t m = 0;
	for (size_t i = 0; i < r->n_ch; i++)
		if (l->load[r->ch[i]] > m)
			m = l->load[r->ch[i]];
	return m;
}

void job_route_free(struct job_route *r)
{
	free(r->e);
	free(r->ch);
	free(r->chw);
	memset(r, 0, sizeof(*r));
}

void job_apply(struct lft_tables *t, const struct job_route *r, size_t n)
{
	for (size_t j = 0; j < n; j++)
		for (size_t i = 0; i < r[j].n_e; i++) {
			const struct job_entry *e = &r[j].e[i];
			if (e->row < t->n_sw && e->lid <= t->max_lid)
				t->port[(size_t)e->row * (t->max_lid + 1) + e->lid] = e->port;
		}
}
