/*
 * The fabric baseline (baseline.h): loading it in any of its formats,
 * saving it, and comparing a fabric with it.
 */
#include "sm/perf/baseline.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "sm/base/log.h"
#include "sm/base/nodemap.h"
#include "sm/base/topo.h"
#include "sm/base/wfile.h"
#include "sm/perf/osmlst.h"

/* ---- loading and saving ---- */

int baseline_parse_string(struct fabric *f, const char *text, const char *name,
			  enum baseline_format *fmt, char *err, size_t errlen)
{
	enum baseline_format found = osmlst_detect(text) ? BASELINE_OPENSM :
				     BASELINE_TOPOLOGY;
	int rc = found == BASELINE_OPENSM ?
		 osmlst_parse_string(f, text, name, err, errlen) :
		 topo_parse_string(f, text, name, err, errlen);

	if (rc == 0 && fmt)
		*fmt = found;
	return rc;
}

/* The whole of a regular file as a string; NULL with err. */
static char *read_all(const char *path, char *err, size_t errlen)
{
	FILE *fp = rfile_open(path, BASELINE_MAX_BYTES, err, errlen);
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!fp)
		return NULL;
	do {
		if (cap - len < 2) {
			size_t nc = cap ? cap * 2 : 65536;
			char *nb = realloc(buf, nc);
			if (!nb) {
				snprintf(err, errlen, "%s: out of memory", path);
				goto fail;
			}
			buf = nb;
			cap = nc;
		}
		n = fread(buf + len, 1, cap - len - 1, fp);
		len += n;
	} while (n > 0);
	if (ferror(fp)) {
		snprintf(err, errlen, "%s: read error", path);
		goto fail;
	}
	fclose(fp);
	buf[len] = '\0';
	if (memchr(buf, '\0', len)) {
		snprintf(err, errlen, "%s: not a text file", path);
		free(buf);
		return NULL;
	}
	return buf;
fail:
	free(buf);
	fclose(fp);
	return NULL;
}

int baseline_load(struct fabric *f, const char *path,
		  enum baseline_format *fmt, char *err, size_t errlen)
{
	char *text = read_all(path, err, errlen);

	if (!text)
		return -1;
	int rc = baseline_parse_string(f, text, path, fmt, err, errlen);
	free(text);
	return rc;
}

int baseline_save(const struct fabric *f, const char *path, char *err,
		  size_t errlen)
{
	struct wfile w;

	if (wfile_open(&w, path, err, errlen) < 0)
		return -1;
	if (dump_topology(f, w.fp) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		wfile_abort(&w);
		return -1;
	}
	return wfile_commit(&w, err, errlen);
}

/* Is port pi one end of a cable, and the end counted for it (once)? */
static int link_first_end(const struct fabric *f, uint32_t pi)
{
	uint32_t r = f->ports[pi].remote;
	return r != FAB_NONE && r < f->n_ports && pi < r;
}

void baseline_counts(const struct fabric *f, uint32_t *nodes, uint32_t *links)
{
	uint32_t n = 0;

	for (uint32_t pi = 0; pi < f->n_ports; pi++)
		n += link_first_end(f, pi) ? 1 : 0;
	*nodes = f->n_nodes;
	*links = n;
}

/* ---- comparing ---- */

static int list_add(struct baseline_list *l, const struct baseline_item *it)
{
	if (l->n == l->cap) {
		uint32_t nc = l->cap ? l->cap * 2 : 16;
		struct baseline_item *nv = realloc(l->v, (size_t)nc * sizeof(*nv));
		if (!nv)
			return -1;
		l->v = nv;
		l->cap = nc;
	}
	l->v[l->n++] = *it;
	return 0;
}

static void end_of(const struct fabric *f, uint32_t pi, struct baseline_end *e)
{
	const struct fab_port *p = &f->ports[pi];
	const struct fab_node *n = &f->nodes[p->node];

	e->guid = n->guid;
	e->port = p->num;
	e->type = n->type;
	snprintf(e->name, sizeof(e->name), "%s", fabric_node_name(f, p->node));
}

/* The port of (node GUID, port number) in f, FAB_NONE. */
static uint32_t port_by(const struct fabric *f, uint64_t guid, unsigned num)
{
	uint32_t ni = fabric_find_node(f, guid);

	if (ni == FAB_NONE || num > f->nodes[ni].nports)
		return FAB_NONE;
	return fabric_port(f, ni, num);
}

/* Is the cable at port pi of a also in b (between the same two ends)? */
static int link_in(const struct fabric *a, uint32_t pi, const struct fabric *b)
{
	const struct fab_port *p = &a->ports[pi], *r = &a->ports[p->remote];
	uint32_t q = port_by(b, a->nodes[p->node].guid, p->num);
	uint32_t qr = port_by(b, a->nodes[r->node].guid, r->num);

	return q != FAB_NONE && qr != FAB_NONE && b->ports[q].remote == qr;
}

static int node_in(const struct fabric *a, uint32_t ni, const struct fabric *b)
{
	return fabric_find_node(b, a->nodes[ni].guid) != FAB_NONE;
}

/*
 * The state of a comparison: the cables of cur not in base, by cur port
 * index (both ends), and whether each was paired as a move.
 */
struct cmp {
	const struct fabric *base, *cur;
	uint8_t *extra;		/* cur port index -> 1: its cable is not in base */
	uint8_t *paired;	/* cur port index -> 1: its cable is taken */
};

static int extra_free(const struct cmp *c, uint32_t q)
{
	return q != FAB_NONE && c->cur->ports[q].remote != FAB_NONE &&
	       c->extra[q] && !c->paired[q];
}

/* Are both nodes of cur's cable at port q in base too? */
static int ends_known(const struct cmp *c, uint32_t q)
{
	const struct fabric *cur = c->cur;
	return node_in(cur, cur->ports[q].node, c->base) &&
	       node_in(cur, cur->ports[cur->ports[q].remote].node, c->base);
}

/*
 * A cur cable for base's cable at port pi (on node A, to node B):
 * (a) one between the same two nodes, else (b) one at either exact end.
 * Returns the cur port on A's side (or, for (b) at B's end, on B's side
 * with *flip set), FAB_NONE when there is none.
 */
static uint32_t find_move(const struct cmp *c, uint32_t pi, int *flip)
{
	const struct fabric *base = c->base, *cur = c->cur;
	const struct fab_port *p = &base->ports[pi], *r = &base->ports[p->remote];
	uint32_t a = fabric_find_node(cur, base->nodes[p->node].guid);
	uint32_t b = fabric_find_node(cur, base->nodes[r->node].guid);

	*flip = 0;
	if (a == FAB_NONE || b == FAB_NONE)
		return FAB_NONE;
	for (unsigned i = 1; i <= cur->nodes[a].nports; i++) {
		uint32_t q = fabric_port(cur, a, i);
		if (extra_free(c, q) && cur->ports[cur->ports[q].remote].node == b)
			return q;
	}
	uint32_t q = fabric_port(cur, a, p->num);
	if (p->num <= cur->nodes[a].nports && extra_free(c, q) && ends_known(c, q))
		return q;
	q = fabric_port(cur, b, r->num);
	if (r->num <= cur->nodes[b].nports && extra_free(c, q) && ends_known(c, q)) {
		*flip = 1;
		return q;
	}
	return FAB_NONE;
}

static int add_node(struct baseline_list *l, const struct fabric *f, uint32_t ni)
{
	struct baseline_item it;

	memset(&it, 0, sizeof(it));
	it.kind = BASELINE_NODE;
	it.a.guid = f->nodes[ni].guid;
	it.a.type = f->nodes[ni].type;
	snprintf(it.a.name, sizeof(it.a.name), "%s", fabric_node_name(f, ni));
	return list_add(l, &it);
}

static int add_link(struct baseline_list *l, const struct fabric *f, uint32_t pi)
{
	struct baseline_item it;

	memset(&it, 0, sizeof(it));
	it.kind = BASELINE_LINK;
	end_of(f, pi, &it.a);
	end_of(f, f->ports[pi].remote, &it.b);
	return list_add(l, &it);
}

/* Base's cable at pi: missing, or moved to a free extra cable of cur. */
static int base_link(struct cmp *c, uint32_t pi, struct baseline_diff *d)
{
	int flip;
	uint32_t q = find_move(c, pi, &flip);

	if (q == FAB_NONE)
		return add_link(&d->missing, c->base, pi);
	struct baseline_item it;
	uint32_t from = flip ? c->base->ports[pi].remote : pi;
	memset(&it, 0, sizeof(it));
	it.kind = BASELINE_LINK;
	end_of(c->cur, q, &it.a);
	end_of(c->cur, c->cur->ports[q].remote, &it.b);
	end_of(c->base, from, &it.was_a);
	end_of(c->base, c->base->ports[from].remote, &it.was_b);
	c->paired[q] = c->paired[c->cur->ports[q].remote] = 1;
	return list_add(&d->moved, &it);
}

static int compare(struct cmp *c, struct baseline_diff *d)
{
	const struct fabric *base = c->base, *cur = c->cur;

	for (uint32_t q = 0; q < cur->n_ports; q++)
		if (cur->ports[q].remote != FAB_NONE && !link_in(cur, q, base))
			c->extra[q] = 1;
	for (uint32_t ni = 0; ni < base->n_nodes; ni++)
		if (!node_in(base, ni, cur) && add_node(&d->missing, base, ni) < 0)
			return -1;
	for (uint32_t ni = 0; ni < cur->n_nodes; ni++)
		if (!node_in(cur, ni, base) && add_node(&d->extra, cur, ni) < 0)
			return -1;
	/* the moves of kind (a) and (b) in one pass: find_move prefers (a) */
	for (uint32_t pi = 0; pi < base->n_ports; pi++)
		if (link_first_end(base, pi) && !link_in(base, pi, cur) &&
		    base_link(c, pi, d) < 0)
			return -1;
	for (uint32_t q = 0; q < cur->n_ports; q++)
		if (link_first_end(cur, q) && c->extra[q] && !c->paired[q] &&
		    add_link(&d->extra, cur, q) < 0)
			return -1;
	return 0;
}

int baseline_diff(const struct fabric *base, const struct fabric *cur,
		  struct baseline_diff *d)
{
	struct cmp c = { base, cur, NULL, NULL };
	int rc = -1;

	memset(d, 0, sizeof(*d));
	c.extra = calloc((size_t)cur->n_ports + 1, 1);
	c.paired = calloc((size_t)cur->n_ports + 1, 1);
	if (c.extra && c.paired)
		rc = compare(&c, d);
	free(c.extra);
	free(c.paired);
	if (rc < 0)
		baseline_diff_free(d);
	return rc;
}

void baseline_diff_free(struct baseline_diff *d)
{
	free(d->missing.v);
	free(d->extra.v);
	free(d->moved.v);
	memset(d, 0, sizeof(*d));
}

int baseline_diff_empty(const struct baseline_diff *d)
{
	return d->missing.n == 0 && d->extra.n == 0 && d->moved.n == 0;
}

/* ---- JSON ---- */

static const char *type_name(uint8_t type)
{
	return type == FAB_SWITCH ? "switch" : type == FAB_ROUTER ? "router" : "ca";
}

static json_t *guid_json(uint64_t guid)
{
	char s[24];
	snprintf(s, sizeof(s), "0x%016" PRIx64, guid);
	return json_string(s);
}

static json_t *end_json(const struct baseline_end *e)
{
	return json_pack("{s:o,s:s,s:i}", "guid", guid_json(e->guid),
			 "node", e->name, "port", (int)e->port);
}

static json_t *item_json(const struct baseline_item *it, int moved)
{
	if (it->kind == BASELINE_NODE)
		return json_pack("{s:s,s:o,s:s,s:s}", "kind", "node",
				 "guid", guid_json(it->a.guid), "node", it->a.name,
				 "type", type_name(it->a.type));
	json_t *o = json_pack("{s:s,s:o,s:o}", "kind", "link",
			      "a", end_json(&it->a), "b", end_json(&it->b));
	if (o && moved &&
	    json_object_set_new(o, "was", json_pack("{s:o,s:o}",
			"a", end_json(&it->was_a), "b", end_json(&it->was_b))) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *list_json(const struct baseline_list *l, int moved,
			 uint32_t max_items)
{
	json_t *a = json_array();
	uint32_t n = max_items && l->n > max_items ? max_items : l->n;

	for (uint32_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, item_json(&l->v[i], moved)) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

json_t *baseline_diff_json(const struct baseline_diff *d, uint32_t max_items)
{
	static const char *const names[] = { "missing", "extra", "moved" };
	const struct baseline_list *lists[] = { &d->missing, &d->extra, &d->moved };
	json_t *o = json_object(), *omitted = json_object();

	for (int i = 0; o && omitted && i < 3; i++) {
		const struct baseline_list *l = lists[i];
		if (json_object_set_new(o, names[i], list_json(l, i == 2, max_items)) < 0)
			goto fail;
		if (max_items && l->n > max_items &&
		    json_object_set_new(omitted, names[i],
					json_integer(l->n - max_items)) < 0)
			goto fail;
	}
	if (!o || !omitted)
		goto fail;
	if (json_object_size(omitted) == 0)
		json_decref(omitted);
	else if (json_object_set_new(o, "omitted", omitted) < 0)
		goto fail_o;
	return o;
fail:
	json_decref(omitted);
fail_o:
	json_decref(o);
	return NULL;
}

void baseline_watch_init(struct baseline_watch *w)
{
	memset(w, 0, sizeof(*w));
	fabric_init(&w->f);
}

void baseline_watch_free(struct baseline_watch *w)
{
	fabric_free(&w->f);
	baseline_watch_init(w);
}

static void watch_refresh(struct baseline_watch *w, const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		baseline_watch_free(w);
		if (errno != ENOENT) {
			w->state = -1;
			snprintf(w->err, sizeof(w->err), "%s: %s", path, strerror(errno));
		}
		return;
	}
	if (w->state && st.st_mtim.tv_sec == w->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == w->mtime.tv_nsec && st.st_size == w->size &&
	    st.st_ino == w->ino)
		return;
	struct fabric f;
	char err[sizeof(w->err)];
	baseline_watch_free(w);
	w->mtime = st.st_mtim;
	w->size = st.st_size;
	w->ino = st.st_ino;
	fabric_init(&f);
	if (baseline_load(&f, path, NULL, err, sizeof(err)) < 0) {
		fabric_free(&f);
		w->state = -1;
		snprintf(w->err, sizeof(w->err), "%s", err);
		log_warn("the fabric baseline is not read: %s", err);
		return;
	}
	w->f = f;
	w->state = 1;
}

json_t *baseline_watch_json(struct baseline_watch *w, const char *path,
			    const struct fabric *cur)
{
	watch_refresh(w, path);
	if (w->state == 0)
		return json_null();
	if (w->state < 0)
		return json_pack("{s:s}", "error", w->err);
	struct fabric none;
	fabric_init(&none);
	struct baseline_diff d;
	if (baseline_diff(&w->f, cur ? cur : &none, &d) < 0)
		return json_pack("{s:s}", "error", "out of memory");
	json_t *o = baseline_diff_json(&d, BASELINE_JSON_MAX);
	baseline_diff_free(&d);
	return o ? o : json_pack("{s:s}", "error", "out of memory");
}
