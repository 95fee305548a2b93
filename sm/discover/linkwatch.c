/*
 * Failed and degraded links kept between heavy sweeps (see linkwatch.h).
 */
#include "sm/discover/linkwatch.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/base/log.h"
#include "sm/base/nodemap.h"
#include "sm/base/topo.h"
#include "sm/discover/changes.h"

void linkwatch_init(struct link_watch *w)
{
	memset(w, 0, sizeof(*w));
}

void linkwatch_free(struct link_watch *w)
{
	free(w->lost);
	free(w->said);
	memset(w, 0, sizeof(*w));
}

static void end_name(const struct fabric *f, uint32_t node, char *buf, size_t len)
{
	const char *name = fabric_node_name(f, node);
	if (name[0])
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "0x%016llx", (unsigned long long)f->nodes[node].guid);
}

/* Port num of the node with GUID guid in f, or FAB_NONE. */
static uint32_t port_of(const struct fabric *f, uint64_t guid, unsigned num)
{
	uint32_t n = fabric_find_node(f, guid);
	if (n == FAB_NONE || num > f->nodes[n].nports)
		return FAB_NONE;
	return fabric_port(f, n, num);
}

/* Whether an end of failed link l is cabled in f (the link is back, or recabled). */
static int cabled_again(const struct lost_link *l, const struct fabric *f)
{
	for (int e = 0; e < 2; e++) {
		uint32_t pi = port_of(f, l->guid[e], l->port[e]);
		if (pi != FAB_NONE && f->ports[pi].remote != FAB_NONE)
			return 1;
	}
	return 0;
}

static void drop_at(struct link_watch *w, uint32_t i)
{
	memmove(&w->lost[i], &w->lost[i + 1], (w->n_lost - i - 1) * sizeof(*w->lost));
	w->n_lost--;
}

static int add_lost(struct link_watch *w, const struct fabric *old, uint32_t pi,
		    uint64_t now)
{
	if (w->n_lost == LINKWATCH_MAX) {
		w->dropped++;
		log_limited(LOG_WARN, "%u failed links listed already: a further one is counted, not listed",
			    LINKWATCH_MAX);
		return 0;
	}
	if (w->n_lost == w->cap) {
		uint32_t cap = w->cap ? 2 * w->cap : 16;
		struct lost_link *p = realloc(w->lost, cap * sizeof(*p));
		if (!p)
			return -1;
		w->lost = p;
		w->cap = cap;
	}
	struct lost_link *l = &w->lost[w->n_lost++];
	uint32_t ends[2] = { pi, old->ports[pi].remote };
	memset(l, 0, sizeof(*l));
	for (int e = 0; e < 2; e++) {
		const struct fab_port *p = &old->ports[ends[e]];
		l->guid[e] = old->nodes[p->node].guid;
		l->port[e] = p->num;
		end_name(old, p->node, l->name[e], sizeof(l->name[e]));
	}
	l->since = now;
	return 0;
}

/* The failed links: returned or recabled ones dropped, new losses added. */
static int update_lost(struct link_watch *w, const struct fabric *old,
		       const struct fabric *f, uint64_t now)
{
	for (uint32_t i = 0; i < w->n_lost;) {
		if (cabled_again(&w->lost[i], f))
			drop_at(w, i);
		else
			i++;
	}
	if (!old)
		return 0;
	for (uint32_t pi = 0; pi < old->n_ports; pi++) {
		const struct fab_port *p = &old->ports[pi];
		if (p->remote == FAB_NONE || p->remote < pi ||
		    fabric_find_node(f, old->nodes[p->node].guid) == FAB_NONE ||
		    fabric_find_node(f, old->nodes[old->ports[p->remote].node].guid) == FAB_NONE ||
		    fabric_link_in(old, pi, f))
			continue;
		int listed = 0;
		for (uint32_t i = 0; i < w->n_lost && !listed; i++)
			listed = w->lost[i].guid[0] == old->nodes[p->node].guid &&
				 w->lost[i].port[0] == p->num;
		if (!listed && add_lost(w, old, pi, now) < 0)
			return -1;
	}
	return 0;
}

static int end_cmp(const void *a, const void *b)
{
	const struct link_end *x = a, *y = b;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return (int)x->port - (int)y->port;
}

/* The key of the link at pi: its end of the lower (node GUID, port). */
static struct link_end link_key(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi], *r = &f->ports[p->remote];
	struct link_end a = { f->nodes[p->node].guid, p->num };
	struct link_end b = { f->nodes[r->node].guid, r->num };
	return end_cmp(&a, &b) <= 0 ? a : b;
}

static void describe_end(const struct fabric *f, uint32_t pi, char *buf, size_t len)
{
	const struct fab_port *p = &f->ports[pi];
	char name[FAB_DESC_LEN + 20];
	end_name(f, p->node, name, sizeof(name));
	snprintf(buf, len, "\"%s\" port %u (%s %s", name, p->num,
		 topo_width_str(p->width_active), topo_speed_str(p->speed_active));
	if (fabric_port_degraded(f, pi)) {
		size_t n = strlen(buf);
		snprintf(buf + n, len - n, ", enabled %s %s",
			 topo_width_str(p->width_max ? p->width_max : p->width_active),
			 topo_speed_str(p->speed_max ? p->speed_max : p->speed_active));
	}
	size_t n = strlen(buf);
	snprintf(buf + n, len - n, ")");
}

/* The degraded links of f counted; those not said last time logged. */
static int update_degraded(struct link_watch *w, const struct fabric *f)
{
	struct link_end *now = NULL;
	uint32_t n = 0, cap = 0;

	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (p->remote == FAB_NONE || p->remote < pi ||
		    (!fabric_port_degraded(f, pi) && !fabric_port_degraded(f, p->remote)))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			struct link_end *q = realloc(now, cap * sizeof(*q));
			if (!q) {
				free(now);
				return -1;
			}
			now = q;
		}
		now[n] = link_key(f, pi);
		if (!w->n_said || !bsearch(&now[n], w->said, w->n_said, sizeof(*w->said), end_cmp)) {
			char a[FAB_DESC_LEN + 96], b[FAB_DESC_LEN + 96];
			describe_end(f, pi, a, sizeof(a));
			describe_end(f, p->remote, b, sizeof(b));
			/* a fabric degraded at once: a few lines and a count */
			log_limited_by(FABEV_BURST, FABEV_WINDOW_MS, LOG_WARN,
				       "link degraded: %s - %s", a, b);
		}
		n++;
	}
	if (n)
		qsort(now, n, sizeof(*now), end_cmp);
	free(w->said);
	w->said = now;
	w->n_said = w->n_degraded = n;
	return 0;
}

int linkwatch_update(struct link_watch *w, const struct fabric *old,
		     const struct fabric *f, uint64_t now)
{
	if (update_lost(w, old, f, now) < 0 || update_degraded(w, f) < 0) {
		log_err("failed and degraded links: out of memory, not updated");
		return -1;
	}
	return 0;
}

/* One end of a LINK argument: NAME or "NAME", then [PORT]. */
struct end_spec {
	char name[FAB_DESC_LEN + 1];
	unsigned port;
};

static const char *skip_space(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* Parses one end at s; returns the text after it, NULL if malformed. */
static const char *parse_end(const char *s, struct end_spec *e)
{
	s = skip_space(s);
	/* the end's port: the first "]", and the last "[" before it */
	const char *close = strchr(s, ']'), *open = NULL;
	for (const char *c = s; close && c < close; c++)
		if (*c == '[')
			open = c;
	if (!open)
		return NULL;
	const char *a = s, *b = open;
	while (b > a && isspace((unsigned char)b[-1]))
		b--;
	if (b - a >= 2 && *a == '"' && b[-1] == '"') {
		a++;
		b--;
	}
	if (b <= a || (size_t)(b - a) > FAB_DESC_LEN)
		return NULL;
	memcpy(e->name, a, (size_t)(b - a));
	e->name[b - a] = '\0';
	char *end;
	errno = 0;
	unsigned long port = strtoul(open + 1, &end, 10);
	if (end == open + 1 || *end != ']' || errno || port > 255)
		return NULL;
	e->port = (unsigned)port;
	return skip_space(end + 1);
}

static int end_matches(const struct lost_link *l, int e, const struct end_spec *s)
{
	if (l->port[e] != s->port)
		return 0;
	if (!strcmp(l->name[e], s->name))
		return 1;
	char *end;
	errno = 0;
	unsigned long long g = strtoull(s->name, &end, 16);
	return !strncmp(s->name, "0x", 2) && !*end && !errno && g == l->guid[e];
}

static int link_matches(const struct lost_link *l, const struct end_spec *s, int n)
{
	for (int e = 0; e < 2; e++)
		if (end_matches(l, e, &s[0]) && (n == 1 || end_matches(l, !e, &s[1])))
			return 1;
	return 0;
}

int linkwatch_forget(struct link_watch *w, const char *link, char *err,
		     size_t errlen)
{
	struct end_spec s[2];
	int n = 1;
	const char *rest = parse_end(link, &s[0]);

	if (rest && !strncmp(rest, "--", 2)) {
		rest = parse_end(rest + 2, &s[1]);
		n = 2;
	}
	if (!rest || *rest) {
		snprintf(err, errlen, "forget: '%s' is not NAME[PORT] or NAME[PORT]--NAME[PORT] (as ibsmctl topology names links)",
			 link);
		return -1;
	}
	uint32_t hits = 0;
	for (uint32_t i = 0; i < w->n_lost; i++)
		hits += (uint32_t)link_matches(&w->lost[i], s, n);
	if (!hits) {
		snprintf(err, errlen, "forget: no failed link at %s", link);
		return -1;
	}
	if (hits > 1 && n == 1) {
		snprintf(err, errlen, "forget: %u failed links at %s: name both ends, or the node by its GUID",
			 hits, link);
		return -1;
	}
	for (uint32_t i = 0; i < w->n_lost;) {
		if (link_matches(&w->lost[i], s, n))
			drop_at(w, i);
		else
			i++;
	}
	w->forgotten += hits;
	return (int)hits;
}
