/*
 * The fabric as Graphviz DOT (see dot.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "routing/verify/verify.h"
#include "sm/render/dot.h"
#include "sm/base/nodemap.h"
#include "sm/base/topo.h"

#define DOT_SHADES 6
#define DOT_LABEL_LINKS 64	/* label links with their routes up to this many */

/* Light to dark: routes per link, sixths of the busiest link. */
static const char *const shade[DOT_SHADES] = {
	"#c6dbef", "#9ecae1", "#6baed6", "#3182bd", "#08519c", "#08306b",
};

static int is_host(const struct fabric *f, uint32_t node)
{
	return f->nodes[node].type != FAB_SWITCH;
}

int dot_link_failed(const struct fabric *f, uint32_t pi, int expect_active)
{
	const struct fab_port *p = &f->ports[pi];
	const struct fab_port *r = &f->ports[p->remote];

	if (!(p->flags & FPORT_PRESENT) || !(r->flags & FPORT_PRESENT) ||
	    p->phys_state != PHYS_LINKUP || r->phys_state != PHYS_LINKUP)
		return 1;
	if (p->state < PORT_INIT || r->state < PORT_INIT)
		return 1;
	return expect_active && (p->state != PORT_ACTIVE || r->state != PORT_ACTIVE);
}

int dot_switch_ranks(const struct fabric *f, uint32_t *ranks)
{
	uint32_t *queue = malloc((size_t)(f->n_nodes ? f->n_nodes : 1) * sizeof(*queue));
	uint32_t head = 0, tail = 0;
	int top = 0;

	if (!queue)
		return -1;
	for (uint32_t n = 0; n < f->n_nodes; n++)
		ranks[n] = FAB_NONE;
	/* rank 0: switches with a host on some port */
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (p->remote == FAB_NONE || is_host(f, p->node) ||
		    !is_host(f, f->ports[p->remote].node) || ranks[p->node] == 0)
			continue;
		ranks[p->node] = 0;
		queue[tail++] = p->node;
	}
	while (head < tail) {
		uint32_t n = queue[head++];
		const struct fab_node *nd = &f->nodes[n];
		for (unsigned k = 1; k <= nd->nports; k++) {
			const struct fab_port *p = fabric_portp(f, n, k);
			if (p->remote == FAB_NONE)
				continue;
			uint32_t m = f->ports[p->remote].node;
			if (is_host(f, m) || ranks[m] != FAB_NONE)
				continue;
			ranks[m] = ranks[n] + 1;
			if ((int)ranks[m] > top)
				top = (int)ranks[m];
			queue[tail++] = m;
		}
	}
	free(queue);
	return top;
}

/* A DOT string: the node's name (sm/base/nodemap.h) or GUID, quotes escaped. */
static void put_name(FILE *fp, const struct fabric *f, uint32_t node)
{
	const struct fab_node *n = &f->nodes[node];
	const char *name = fabric_node_name(f, node);
	if (!name[0]) {
		fprintf(fp, "0x%016" PRIx64, n->guid);
		return;
	}
	for (const char *c = name; *c; c++) {
		if (*c == '"' || *c == '\\')
			fputc('\\', fp);
		fputc((unsigned char)*c < 0x20 ? ' ' : *c, fp);
	}
}

static void put_node(FILE *fp, const struct fabric *f, uint32_t n)
{
	const struct fab_node *nd = &f->nodes[n];
	uint32_t lid = nd->type == FAB_SWITCH ? fabric_portp(f, n, 0)->lid : 0;

	fprintf(fp, "  %c%u [label=\"", is_host(f, n) ? 'h' : 's', n);
	put_name(fp, f, n);
	if (lid)
		fprintf(fp, "\\nLID %u", lid);
	fprintf(fp, "\", tooltip=\"0x%016" PRIx64 "\", class=%s%s];\n", nd->guid,
		is_host(f, n) ? "host" : "switch",
		is_host(f, n) ? ", shape=ellipse, fontsize=10" : "");
}

struct dot_ctx {
	FILE *fp;
	const struct fabric *f;
	const struct dot_opts *o;
	struct dot_stats *st;
	uint32_t *ranks;
	uint32_t *hosts_on;	/* per node: host ports cabled to it */
	uint64_t *load;		/* per port: routes sent out of it, or NULL */
	uint8_t *drawn;		/* per node: drawn as its own DOT node */
	uint32_t n_links;	/* switch-to-switch links */
};

static int folded(const struct dot_ctx *c, uint32_t node)
{
	return !is_host(c->f, node) && c->hosts_on[node] > c->o->fold_hosts;
}

/* One link, from its upper end (pi) to its lower one (rp). */
static void put_link(struct dot_ctx *c, uint32_t pi, uint32_t rp)
{
	const struct fabric *f = c->f;
	const struct fab_port *p = &f->ports[pi], *r = &f->ports[rp];
	int failed = dot_link_failed(f, pi, c->o->expect_active);
	int sw_link = !is_host(f, p->node) && !is_host(f, r->node);

	c->st->links++;
	c->st->failed_links += failed;
	fprintf(c->fp, "  %c%u -- %c%u [", is_host(f, p->node) ? 'h' : 's', p->node,
		is_host(f, r->node) ? 'h' : 's', r->node);
	/* port numbers on small fabrics; on big ones they hide the links */
	if (c->n_links <= DOT_LABEL_LINKS)
		fprintf(c->fp, "taillabel=\"%u\", headlabel=\"%u\", ", p->num, r->num);
	int hot = !failed && c->o->hot && (c->o->hot[pi] || c->o->hot[rp]);
	fprintf(c->fp, "tooltip=\"%sport %u -- port %u\"", hot ? "hot: " : "", p->num, r->num);
	if (sw_link && c->ranks[p->node] == c->ranks[r->node])
		fputs(", constraint=false", c->fp);
	if (failed) {
		fputs(", class=failed, color=red, style=dashed, penwidth=2,"
		      " labeltooltip=\"failed: not Active\"];\n", c->fp);
		return;
	}
	if (hot) {
		c->st->hot_links++;
		fputs(", class=hot, color=red, style=bold, penwidth=4];\n", c->fp);
		return;
	}
	if (fabric_port_degraded(f, pi) || fabric_port_degraded(f, rp)) {
		c->st->degraded_links++;
		fprintf(c->fp, ", class=degraded, color=orange, penwidth=2, labeltooltip=\"degraded: %s %s\"];\n",
			topo_width_str(p->width_active), topo_speed_str(p->speed_active));
		return;
	}
	if (!sw_link || !c->load || !c->st->max_load) {
		fputs(", color=gray50];\n", c->fp);
		return;
	}
	uint64_t up = c->load[rp], down = c->load[pi];
	uint64_t busy = up > down ? up : down;
	unsigned level = (unsigned)((busy * DOT_SHADES + c->st->max_load - 1) /
				    c->st->max_load);
	level = level ? level - 1 : 0;
	double width = c->n_links <= DOT_LABEL_LINKS ? 1.0 + 0.5 * level : 0.4 + 0.2 * level;
	fprintf(c->fp, ", color=\"%s\", penwidth=%.1f, labeltooltip=\"routes %" PRIu64
		" up, %" PRIu64 " down\"", shade[level], width, up, down);
	if (c->n_links <= DOT_LABEL_LINKS)
		fprintf(c->fp, ", label=\"%" PRIu64 "\"", busy);
	fputs("];\n", c->fp);
}

/* The upper end of a link: the switch of higher rank, the switch over a host. */
static int upper_first(const struct dot_ctx *c, uint32_t pi, uint32_t rp)
{
	uint32_t a = c->f->ports[pi].node, b = c->f->ports[rp].node;

	if (is_host(c->f, a) != is_host(c->f, b))
		return is_host(c->f, b);
	uint32_t ra = c->ranks[a], rb = c->ranks[b];
	if (ra == rb)
		return pi < rp;
	if (ra == FAB_NONE || rb == FAB_NONE)
		return ra == FAB_NONE;
	return ra > rb;
}

static void put_links(struct dot_ctx *c)
{
	const struct fabric *f = c->f;

	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		uint32_t rp = p->remote;
		if (rp == FAB_NONE || rp < pi || !(p->flags & FPORT_PRESENT))
			continue;
		uint32_t a = p->node, b = f->ports[rp].node;
		/* a host port on a folded leaf is in the leaf's box */
		if ((is_host(f, a) && folded(c, b)) || (is_host(f, b) && folded(c, a)))
			continue;
		c->drawn[a] = c->drawn[b] = 1;
		if (upper_first(c, pi, rp))
			put_link(c, pi, rp);
		else
			put_link(c, rp, pi);
	}
}

/* The links lost since last seen up: dashed red between their nodes. */
static void put_lost(struct dot_ctx *c)
{
	for (uint32_t i = 0; i < c->o->n_lost; i++) {
		const struct dot_lost *l = &c->o->lost[i];
		uint32_t a = l->node[0], b = l->node[1];
		char ea = is_host(c->f, a) ? 'h' : 's', eb = is_host(c->f, b) ? 'h' : 's';
		c->drawn[a] = c->drawn[b] = 1;
		c->st->links++;
		c->st->failed_links++;
		fprintf(c->fp, "  %c%u -- %c%u [tooltip=\"port %u -- port %u\", class=failed, color=red, "
			"style=dashed, penwidth=2, labeltooltip=\"failed: lost\"];\n",
			ea, a, eb, b, l->port[0], l->port[1]);
	}
}

static void put_folds(struct dot_ctx *c)
{
	const struct fabric *f = c->f;

	for (uint32_t n = 0; n < f->n_nodes; n++) {
		if (!folded(c, n))
			continue;
		c->st->folded_leaves++;
		fprintf(c->fp, "  f%u [shape=box, style=\"rounded,filled\", fillcolor=gray95, class=hosts, label=\"", n);
		put_name(c->fp, f, n);
		fprintf(c->fp, ": %u hosts\"];\n  s%u -- f%u [color=gray50, penwidth=2];\n",
			c->hosts_on[n], n, n);
		c->drawn[n] = 1;
	}
}

static void put_ranks(struct dot_ctx *c, int top)
{
	const struct fabric *f = c->f;

	for (int r = top; r >= -1; r--) {
		uint32_t want = r < 0 ? FAB_NONE : (uint32_t)r;
		int any = 0;
		for (uint32_t n = 0; n < f->n_nodes; n++) {
			if (is_host(f, n) || c->ranks[n] != want)
				continue;
			if (!any)
				fprintf(c->fp, "  { rank=same; /* %s %d */\n",
					r < 0 ? "no host reaches:" : "rank", r);
			any = 1;
			fputs("  ", c->fp);
			put_node(c->fp, f, n);
			c->st->switches++;
		}
		if (any)
			fputs("  }\n", c->fp);
	}
}

static void count_hosts(struct dot_ctx *c)
{
	const struct fabric *f = c->f;

	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (p->remote == FAB_NONE || is_host(f, p->node) ||
		    !is_host(f, f->ports[p->remote].node))
			continue;
		c->hosts_on[p->node]++;
	}
	for (uint32_t n = 0; n < f->n_nodes; n++)
		c->st->hosts += is_host(f, n);
}

uint64_t *dot_link_loads(const struct fabric *f, const struct lft_tables *t,
			 int64_t *undelivered)
{
	size_t np = f->n_ports ? f->n_ports : 1;
	uint32_t *ports = malloc(np * sizeof(*ports));
	uint64_t *load = malloc(np * sizeof(*load));
	uint32_t n = 0;

	if (!ports || !load) {
		free(ports);
		free(load);
		return NULL;
	}
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (is_host(f, p->node) && p->num && p->lid && p->remote != FAB_NONE &&
		    !is_host(f, f->ports[p->remote].node))
			ports[n++] = pi;
	}
	int64_t bad = verify_pair_loads(f, t, ports, n, load);
	if (undelivered)
		*undelivered = bad;
	free(ports);
	return load;
}

int dot_write(FILE *fp, const struct fabric *f, const struct lft_tables *t,
	      const struct dot_opts *o, struct dot_stats *st)
{
	struct dot_stats local;
	size_t nn = f->n_nodes ? f->n_nodes : 1;
	struct dot_ctx c = {
		.fp = fp, .f = f, .o = o, .st = st ? st : &local,
		.ranks = malloc(nn * sizeof(*c.ranks)),
		.hosts_on = calloc(nn, sizeof(*c.hosts_on)),
		.drawn = calloc(nn, 1),
	};
	int rc = -1;

	memset(c.st, 0, sizeof(*c.st));
	if (!c.ranks || !c.hosts_on || !c.drawn)
		goto out;
	int top = dot_switch_ranks(f, c.ranks);
	if (top < 0)
		goto out;
	count_hosts(&c);
	if (t && t->n_sw && t->row_of_node) {
		c.load = dot_link_loads(f, t, &c.st->undelivered);
		if (!c.load)
			goto out;
		for (uint32_t pi = 0; pi < f->n_ports; pi++)
			if (c.load[pi] > c.st->max_load)
				c.st->max_load = c.load[pi];
	}
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		c.n_links += p->remote != FAB_NONE && p->remote > pi &&
			     !is_host(f, p->node) && !is_host(f, f->ports[p->remote].node);
	}
	fputs("graph fabric {\n"
	      "  graph [rankdir=TB, splines=true, nodesep=0.3, ranksep=1.2, fontname=\"Helvetica\"",
	      fp);
	if (o->title) {
		fputs(", labelloc=b, label=\"", fp);
		for (const char *s = o->title; *s; s++) {
			if (*s == '"' || *s == '\\')
				fputc('\\', fp);
			fputc(*s, fp);
		}
		fputc('"', fp);
	}
	fputs("];\n  node [shape=box, fontname=\"Helvetica\", fontsize=11];\n"
	      "  edge [fontname=\"Helvetica\", fontsize=8];\n", fp);
	put_ranks(&c, top);
	put_folds(&c);
	put_links(&c);
	put_lost(&c);
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (is_host(f, n) && c.drawn[n])
			put_node(fp, f, n);
	fprintf(fp, "  legend [shape=plaintext, fontsize=9, label=\"%u switches, %u hosts "
		"(leaves with more than %u folded)\\nlinks: darker = more routes (busiest %"
		PRIu64 "), dashed red = failed, orange = degraded, bold red = hot\"];\n}\n",
		c.st->switches, c.st->hosts, o->fold_hosts, c.st->max_load);
	rc = ferror(fp) ? -1 : 0;
out:
	free(c.ranks);
	free(c.hosts_on);
	free(c.drawn);
	free(c.load);
	return rc;
}
