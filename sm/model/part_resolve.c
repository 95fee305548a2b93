/*
 * Partitions resolved against a fabric model (sm/model/part_resolve.h).
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/model/config.h"
#include "sm/base/log.h"
#include "sm/model/part_resolve.h"

/* End ports (CA and router ports, switch port 0) that answered. */
static int member_port(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	return (p->flags & FPORT_PRESENT) && fabric_is_endport(f, pi);
}

static uint64_t port_guid(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	return p->guid ? p->guid : f->nodes[p->node].guid;
}

/* Does a keyword member (OpenSM's, enum cfg_member_kind) name end port pi? */
static int keyword_matches(const struct fabric *f, uint32_t pi, int kind)
{
	const struct fab_port *p = &f->ports[pi];
	int type = f->nodes[p->node].type;
	switch (kind) {
	case MEMBER_ALL:
		return 1;
	case MEMBER_ALL_CAS:
		return type == FAB_CA;
	case MEMBER_ALL_SWITCHES:
		return type == FAB_SWITCH;
	case MEMBER_ALL_ROUTERS:
		return type == FAB_ROUTER;
	case MEMBER_SELF:
		return p->node == f->sm_node && p->num == f->sm_port;
	default:
		return 0;
	}
}

/* Does the policy's member (or weight) spec name end port pi? */
static int spec_matches(const struct fabric *f, uint32_t pi, const char *node,
			uint64_t guid, int port)
{
	const struct fab_port *p = &f->ports[pi];
	const struct fab_node *n = &f->nodes[p->node];
	if (port && p->num != port)
		return 0;
	if (guid)
		return port_guid(f, pi) == guid || n->guid == guid;
	return node[0] && fnmatch(node, n->desc, 0) == 0;
}

struct ent {
	uint32_t port;
	uint16_t e;
};

/* Appends (port, e), growing the array.  0, or -1 (no memory). */
static int ent_push(struct ent **ents, size_t *n, size_t *cap, uint32_t port,
		    uint16_t e)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 1024;
		struct ent *ne = realloc(*ents, nc * sizeof(*ne));
		if (!ne)
			return -1;
		*ents = ne;
		*cap = nc;
	}
	(*ents)[(*n)++] = (struct ent){ port, e };
	return 0;
}

static uint32_t weight_of(const struct config *c, const struct fabric *f,
			  const struct part_weights *lw, uint32_t pi)
{
	if (lw && lw->n) {
		uint64_t g = port_guid(f, pi);
		uint32_t lo = 0, hi = lw->n;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (lw->guid[mid] < g)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < lw->n && lw->guid[lo] == g)
			return lw->weight[lo] ? lw->weight[lo] : 1;
	}
	for (uint32_t i = 0; i < c->n_weights; i++) {
		const struct cfg_weight *w = &c->weights[i];
		if (spec_matches(f, pi, w->node, w->guid, 0))
			return w->weight ? w->weight : 1;
	}
	return 1;
}

int part_resolve(const struct config *c, const struct fabric *f,
		 const struct part_weights *lw, int warn,
		 struct part_model *m)
{
	uint32_t np = f->n_ports, nparts = (uint32_t)c->n_parts + 1;
	struct ent *ents = NULL;
	size_t n_ents = 0, cap = 0;
	uint8_t *flag = NULL;
	uint32_t *touched = NULL;

	memset(m, 0, sizeof(*m));
	m->parts = calloc(nparts, sizeof(*m->parts));
	m->mem_off = calloc((size_t)np + 1, sizeof(*m->mem_off));
	m->route_part = malloc(((size_t)np + 1) * sizeof(*m->route_part));
	m->weight = malloc(((size_t)np + 1) * sizeof(*m->weight));
	flag = calloc((size_t)np + 1, 1);
	touched = malloc(((size_t)np + 1) * sizeof(*touched));
	if (!m->parts || !m->mem_off || !m->route_part || !m->weight ||
	    !flag || !touched)
		goto nomem;
	m->n_parts = nparts;
	m->n_ports = np;
	m->tenants = c->n_parts;
	m->strict = c->isolation_strict;
	snprintf(m->parts[0].name, sizeof(m->parts[0].name), "default");
	m->parts[0].pkey = PART_DEFAULT_PKEY;
	m->parts[0].sl = -1;
	for (int i = 0; i < c->n_parts; i++) {
		const struct cfg_partition *cp = &c->parts[i];
		struct part *p = &m->parts[i + 1];
		snprintf(p->name, sizeof(p->name), "%s", cp->name);
		p->pkey = cp->pkey & 0x7fff;
		p->policy = (uint8_t)cp->policy;
		p->sl = (int8_t)cp->sl;
		p->ipoib = (uint8_t)cp->ipoib;
	}

	/*
	 * The default partition: everyone, full, or limited once tenants
	 * are given and default_partition.membership says so.
	 */
	for (uint32_t pi = 0; pi < np; pi++) {
		m->route_part[pi] = PART_NONE;
		m->weight[pi] = 1;
		if (!member_port(f, pi))
			continue;
		const struct fab_port *p = &f->ports[pi];
		/*
		 * Full: switches, our own port and the SMs that hold our
		 * SM_Key, which may become master.  Not a port that merely
		 * says IsSM: any host's root can say so.
		 */
		int own = p->node == f->sm_node && p->num == f->sm_port;
		int full = !c->n_parts || c->default_full ||
			   f->nodes[p->node].type == FAB_SWITCH || own ||
			   (p->flags & FPORT_SMPEER);
		if (ent_push(&ents, &n_ents, &cap, pi,
			     (uint16_t)(full ? PART_FULL : 0)) < 0)
			goto nomem;
		m->weight[pi] = weight_of(c, f, lw, pi);
		if (m->weight[pi] != 1)
			m->weighted = 1;
	}

	for (int i = 0; i < c->n_parts; i++) {
		const struct cfg_partition *cp = &c->parts[i];
		uint32_t nt = 0;
		for (uint32_t k = cp->first; k < cp->first + cp->n &&
		     k < c->n_members; k++) {
			const struct cfg_member *cm = &c->members[k];
			uint32_t hits = 0;
			for (uint32_t pi = 0; pi < np; pi++) {
				if (!member_port(f, pi) ||
				    (cm->kind == MEMBER_SPEC ?
				     !spec_matches(f, pi, cm->node, cm->guid, cm->port) :
				     !keyword_matches(f, pi, cm->kind)))
					continue;
				hits++;
				uint8_t want = cm->full ? 2 : 1;
				if (!flag[pi])
					touched[nt++] = pi;
				if (flag[pi] < want)
					flag[pi] = want;
			}
			/* a keyword (ALL_ROUTERS without routers) is no mistake */
			if (!hits && warn && cm->kind == MEMBER_SPEC) {
				char what[96];
				if (cm->guid)
					snprintf(what, sizeof(what), "0x%016llx",
						 (unsigned long long)cm->guid);
				else
					snprintf(what, sizeof(what), "'%s'", cm->node);
				if (cm->port)
					snprintf(what + strlen(what),
						 sizeof(what) - strlen(what),
						 " port %d", cm->port);
				log_warn("partition %s: member %s matches no port",
					 cp->name, what);
			}
		}
		for (uint32_t t = 0; t < nt; t++) {
			uint32_t pi = touched[t];
			if (ent_push(&ents, &n_ents, &cap, pi,
				     (uint16_t)((i + 1) |
						(flag[pi] == 2 ? PART_FULL : 0))) < 0)
				goto nomem;
			flag[pi] = 0;
			m->parts[i + 1].ports++;
			/* the routing partition: highest policy, then first */
			uint16_t rp = m->route_part[pi];
			if (rp == PART_NONE ||
			    m->parts[i + 1].policy > m->parts[rp].policy)
				m->route_part[pi] = (uint16_t)(i + 1);
		}
	}
	/* by port, each port's entries in partition order (default first) */
	for (size_t k = 0; k < n_ents; k++)
		m->mem_off[ents[k].port + 1]++;
	for (uint32_t pi = 0; pi < np; pi++)
		m->mem_off[pi + 1] += m->mem_off[pi];
	m->mem = malloc((n_ents + 1) * sizeof(*m->mem));
	if (!m->mem)
		goto nomem;
	{
		uint32_t *fill = touched;	/* reused: per port next slot */
		memcpy(fill, m->mem_off, (size_t)np * sizeof(*fill));
		for (size_t k = 0; k < n_ents; k++)	/* ents in partition order */
			m->mem[fill[ents[k].port]++] = ents[k].e;
	}
	free(ents);
	free(flag);
	free(touched);
	return 0;
nomem:
	free(ents);
	free(flag);
	free(touched);
	part_model_free(m);
	return -1;
}
