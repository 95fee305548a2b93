/*
 * HOL exposure of a traffic pattern (see hol.h): two passes over the
 * flows, one marking the (link, VL) channels and the links the hot flows
 * take, one checking each victim's route against the marks.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "routing/graph.h"
#include "routing/verify/hol.h"
#include "sm/base/nodemap.h"

#define HOL_VLS 16	/* VL 0..15: the marks take whatever a table gives */

uint32_t endport_find(const struct fabric *f, const char *name, char *err,
		      size_t errlen)
{
	char *end;
	uint64_t guid = 0;
	uint32_t lid = 0, found = FAB_NONE;

	if (name[0] == '0' && (name[1] == 'x' || name[1] == 'X')) {
		guid = strtoull(name, &end, 16);
		if (*end)
			guid = 0;
	} else if (isdigit((unsigned char)name[0])) {
		unsigned long v = strtoul(name, &end, 10);
		lid = *end || v > UINT32_MAX ? 0 : (uint32_t)v;
	}
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		const struct fab_node *n = &f->nodes[p->node];
		if (n->type == FAB_SWITCH || !fabric_is_endport(f, pi) ||
		    (!p->lid && fabric_vswitch_of(f, pi, NULL) == FAB_NONE))
			continue;
		if (guid ? p->guid == guid || n->guid == guid :
		    lid ? p->lid == lid : strcmp(n->desc, name) == 0 ||
		    strcmp(fabric_node_name(f, p->node), name) == 0) {
			if (found != FAB_NONE && f->ports[found].node != p->node) {
				snprintf(err, errlen, "'%s' names more than one CA", name);
				return FAB_NONE;
			}
			if (found == FAB_NONE)
				found = pi;
		}
	}
	if (found == FAB_NONE)
		snprintf(err, errlen, "no CA port with a LID named '%s'", name);
	return found;
}

/* A flow's end: a CA port with a LID, cabled to a switch. */
static int flow_end(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	return f->nodes[p->node].type != FAB_SWITCH && fabric_is_endport(f, pi) &&
	       p->lid && graph_link_up(f, pi) && graph_peer_is_switch(f, pi);
}

static const struct fabric *sort_f;

static int by_port_guid(const void *a, const void *b)
{
	uint64_t x = sort_f->ports[*(const uint32_t *)a].guid;
	uint64_t y = sort_f->ports[*(const uint32_t *)b].guid;
	if (x != y)
		return x < y ? -1 : 1;
	return (*(const uint32_t *)a > *(const uint32_t *)b) -
	       (*(const uint32_t *)a < *(const uint32_t *)b);
}

/* The flow ends in ascending port GUID order; NULL on ENOMEM. */
static uint32_t *flow_ends(const struct fabric *f, uint32_t *n)
{
	uint32_t *v = malloc(((size_t)f->n_ports + 1) * sizeof(*v));
	*n = 0;
	if (!v)
		return NULL;
	for (uint32_t pi = 0; pi < f->n_ports; pi++)
		if (flow_end(f, pi))
			v[(*n)++] = pi;
	sort_f = f;
	qsort(v, *n, sizeof(*v), by_port_guid);
	return v;
}

int hol_hotspot(const struct fabric *f, const char *spec,
		struct hol_pattern *p, char *err, size_t errlen)
{
	char name[256];
	unsigned long n = 0;
	const char *comma = strrchr(spec, ',');

	memset(p, 0, sizeof(*p));
	snprintf(name, sizeof(name), "%s", spec);
	if (comma && comma[1] && strspn(comma + 1, "0123456789") == strlen(comma + 1)) {
		size_t len = (size_t)(comma - spec);
		name[len < sizeof(name) ? len : sizeof(name) - 1] = '\0';
		n = strtoul(comma + 1, NULL, 10);
		if (n == 0) {
			snprintf(err, errlen, "hotspot:%s: N must be at least 1", spec);
			return -1;
		}
	}
	uint32_t d = endport_find(f, name, err, errlen);
	if (d == FAB_NONE)
		return -1;
	if (!flow_end(f, d)) {
		snprintf(err, errlen, "'%s' is not cabled to a switch", name);
		return -1;
	}
	uint32_t ends;
	uint32_t *v = flow_ends(f, &ends);
	if (!v) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	free(v);
	if (n > ends - 1) {
		snprintf(err, errlen, "hotspot:%s: %lu sources asked, %u CA ports besides '%s'",
			 spec, n, ends - 1, name);
		return -1;
	}
	p->dest = d;
	p->n_hot_src = n ? (uint32_t)n : ends - 1;
	return 0;
}

/* The next word of a line (quoted: up to the closing quote); NULL: none. */
static const char *word(const char **s, char *buf, size_t len)
{
	const char *q = *s;
	size_t n = 0;
	while (*q == ' ' || *q == '\t' || *q == '\r')
		q++;
	if (!*q || *q == '\n' || *q == '#')
		return NULL;
	char stop = *q == '"' ? '"' : 0;
	if (stop)
		q++;
	while (*q && *q != '\n' && (stop ? *q != stop :
		(*q != ' ' && *q != '\t' && *q != '\r' && *q != '#'))) {
		if (n + 1 < len)
			buf[n++] = *q;
		q++;
	}
	if (stop && *q == stop)
		q++;
	buf[n] = '\0';
	*s = q;
	return buf;
}

static int add_flow(struct hol_pattern *p, uint32_t s, uint32_t d, int hot)
{
	if (p->n_flows == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct hol_flow *v = realloc(p->flows, cap * sizeof(*v));
		if (!v)
			return -1;
		p->flows = v;
		p->cap = cap;
	}
	p->flows[p->n_flows++] = (struct hol_flow){ s, d, (uint8_t)hot };
	return 0;
}

int hol_parse(const struct fabric *f, const char *text, const char *fname,
	      struct hol_pattern *p, char *err, size_t errlen)
{
	char w[3][256], why[800];
	unsigned line = 0, hot = 0;

	memset(p, 0, sizeof(*p));
	p->dest = FAB_NONE;
	for (const char *s = text; *s; line++) {
		const char *e = strchr(s, '\n');
		const char *q = s;
		int nw = 0;
		while (nw < 3 && word(&q, w[nw], sizeof(w[0])))
			nw++;
		char extra[8];
		if (nw == 0)
			goto next;
		if (nw < 2 || (nw == 3 && strcmp(w[2], "hot")) ||
		    word(&q, extra, sizeof(extra))) {
			snprintf(err, errlen, "%s:%u: expected \"SRC DST [hot]\"",
				 fname, line + 1);
			goto fail;
		}
		uint32_t ends[2];
		for (int k = 0; k < 2; k++) {
			ends[k] = endport_find(f, w[k], why, sizeof(why));
			if (ends[k] != FAB_NONE && !flow_end(f, ends[k]))
				snprintf(why, sizeof(why), "'%s' is not cabled to a switch",
					 w[k]);
			if (ends[k] == FAB_NONE || !flow_end(f, ends[k])) {
				snprintf(err, errlen, "%s:%u: %s", fname, line + 1, why);
				goto fail;
			}
		}
		if (ends[0] == ends[1]) {
			snprintf(err, errlen, "%s:%u: a flow from '%s' to itself",
				 fname, line + 1, w[0]);
			goto fail;
		}
		if (add_flow(p, ends[0], ends[1], nw == 3) < 0) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		hot += nw == 3;
next:
		if (!e)
			break;
		s = e + 1;
	}
	if (!hot) {
		snprintf(err, errlen, "%s: no flow marked hot", fname);
		goto fail;
	}
	return 0;
fail:
	hol_pattern_free(p);
	return -1;
}

void hol_pattern_free(struct hol_pattern *p)
{
	free(p->flows);
	memset(p, 0, sizeof(*p));
}

/*
 * The route of a flow with its VLs: sending port index and VL per link.
 * Returns the links, or -1 when it is not delivered to dst.
 */
static int walk(const struct fabric *f, const struct lft_tables *t,
		uint32_t src, uint32_t dst, uint32_t *hp, uint8_t *hv)
{
	const struct fab_port *sp = &f->ports[src];
	uint32_t lid = f->ports[dst].lid, n = 0;
	if (lid > t->max_lid)
		return -1;
	uint8_t sl = lft_sl(t, sp->lid, lid) % QOS_SLS;
	const uint8_t *tab = lft_sl2vl(t, sp->node, sp->num, sp->num);
	hp[n] = src;
	hv[n++] = tab ? tab[sl] : 0;
	uint32_t in = sp->remote;
	while (n < t->n_sw + 2) {
		uint32_t node = f->ports[in].node;
		uint8_t op = lft_row(t, t->row_of_node[node])[lid];
		if (op == LFT_DROP || op == 0 || op > f->nodes[node].nports)
			return -1;
		uint32_t pi = fabric_port(f, node, op);
		if (!graph_link_up(f, pi))
			return -1;
		tab = lft_sl2vl(t, node, f->ports[in].num, op);
		hp[n] = pi;
		hv[n++] = tab ? tab[sl] : 0;
		if (!graph_peer_is_switch(f, pi))
			return f->ports[pi].remote == dst ? (int)n : -1;
		in = f->ports[pi].remote;
	}
	return -1;
}

struct hctx {
	const struct fabric *f;
	const struct lft_tables *t;
	struct hol_report *r;
	uint8_t *hot_ch;	/* bit per (port, VL) */
	uint8_t *hot_link;	/* bit per port */
	uint32_t *hp;
	uint8_t *hv;
};

#define BIT_SET(m, i) ((m)[(i) / 8] |= (uint8_t)(1u << ((i) % 8)))
#define BIT_GET(m, i) ((m)[(i) / 8] & (1u << ((i) % 8)))

/* One flow, pass 0 (marks the hot ones) or 1 (checks the victims). */
static void flow(struct hctx *c, int pass, uint32_t s, uint32_t d, int hot)
{
	if (pass == 0 && !hot)
		return;
	if (pass == 1 && hot)
		return;
	int n = walk(c->f, c->t, s, d, c->hp, c->hv);
	c->r->flows++;
	if (n < 0) {
		c->r->undelivered++;
		return;
	}
	if (pass == 0) {
		c->r->hot++;
		for (int i = 0; i < n; i++) {
			BIT_SET(c->hot_ch, (size_t)c->hp[i] * HOL_VLS + c->hv[i] % HOL_VLS);
			BIT_SET(c->hot_link, c->hp[i]);
		}
		return;
	}
	int ch = 0, link = 0;
	for (int i = 0; i < n; i++) {
		ch |= BIT_GET(c->hot_ch, (size_t)c->hp[i] * HOL_VLS + c->hv[i] % HOL_VLS) != 0;
		link |= BIT_GET(c->hot_link, c->hp[i]) != 0;
	}
	c->r->victims++;
	c->r->exposed += ch;
	c->r->exposed_novl += link;
}

/* The uniform background and its hot spot, without storing it. */
static int hotspot_pass(struct hctx *c, const struct hol_pattern *p, int pass)
{
	uint32_t n;
	uint32_t *v = flow_ends(c->f, &n);
	if (!v)
		return -1;
	uint32_t rank = 0;	/* among the ends other than DEST */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = v[i];
		int sends_hot = s != p->dest && rank++ < p->n_hot_src;
		for (uint32_t j = 0; j < n; j++) {
			uint32_t d = v[j];
			if (d == s || (d == p->dest && !sends_hot))
				continue;
			flow(c, pass, s, d, d == p->dest);
		}
	}
	free(v);
	return 0;
}

int hol_expose(const struct fabric *f, const struct lft_tables *t,
	       const struct hol_pattern *p, struct hol_report *r)
{
	struct hctx c = { .f = f, .t = t, .r = r };
	int rc = -1;
	memset(r, 0, sizeof(*r));
	c.hot_ch = calloc(((size_t)f->n_ports * HOL_VLS + 7) / 8 + 1, 1);
	c.hot_link = calloc((f->n_ports + 7) / 8 + 1, 1);
	c.hp = malloc(((size_t)t->n_sw + 3) * sizeof(*c.hp));
	c.hv = malloc((size_t)t->n_sw + 3);
	if (!c.hot_ch || !c.hot_link || !c.hp || !c.hv)
		goto out;
	for (int pass = 0; pass < 2; pass++) {
		if (p->flows) {
			for (size_t i = 0; i < p->n_flows; i++)
				flow(&c, pass, p->flows[i].src, p->flows[i].dst,
				     p->flows[i].hot);
		} else if (hotspot_pass(&c, p, pass) < 0) {
			goto out;
		}
	}
	rc = 0;
out:
	free(c.hot_ch);
	free(c.hot_link);
	free(c.hp);
	free(c.hv);
	return rc;
}
