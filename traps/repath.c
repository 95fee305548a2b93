/*
 * Repath / unpath signalling rounds (see repath.h for the modes).
 */
#include "traps/repath.h"

#include <stdlib.h>
#include <string.h>

#include "routing/path.h"

const char *const repath_mode_names[] = {
	[REPATH_HYBRID] = "hybrid",
	[REPATH_WILDCARD] = "wildcard",
	[REPATH_ONLY] = "repath-only",
	[REPATH_HYBRID_AFFECTED] = "hybrid-affected",
	NULL,
};

static void port_gid(uint64_t prefix, uint64_t guid, uint8_t gid[16])
{
	for (int i = 0; i < 8; i++) {
		gid[i] = (uint8_t)(prefix >> (56 - 8 * i));
		gid[8 + i] = (uint8_t)(guid >> (56 - 8 * i));
	}
}

void repath_record(const struct repath_params *rp, const struct fabric *f,
		   const struct lft_tables *t, const struct prd_change *c,
		   struct notice_path *np)
{
	struct path_facts pf;
	memset(np, 0, sizeof(*np));
	np->flags = NPATH_GIDS;
	np->slid = c->slid;
	np->dlid = c->dlid;
	port_gid(rp->subnet_prefix, f->ports[c->src].guid, np->sgid);
	port_gid(rp->subnet_prefix, f->ports[c->dst].guid, np->dgid);
	if (c->kind != PRD_REPATH ||
	    path_resolve(f, t, c->src, c->dlid, &pf) < 0)
		return;
	np->sl = pf.sl;
	np->mtu = pf.mtu;
	np->rate = pf.rate;
	np->pkey = rp->pkey;
	if (rp->part)
		rp->part(rp->part_ctx, c->src, c->dst, &np->pkey, &np->sl);
	np->packet_life = path_packet_life(f, &pf, c->src, rp->ltv);
	if (pf.reversible)
		np->flags |= NPATH_REVERSIBLE;
}

static void wildcard(const struct repath_params *rp,
		     const struct repath_out *o, struct repath_stats *st)
{
	struct notice nt;
	struct notice_path np = { .flags = NPATH_WILDCARD };
	notice_init_sm(&nt, TRAP_REPATH, rp->sm_lid, rp->sm_gid);
	notice_set_path(&nt, &np);
	int r = o->publish(o->ctx, &nt, 0);
	st->notices++;
	st->reports += r > 0 ? (uint64_t)r : 0;
	st->wildcard = 1;
}

static void to(const struct repath_out *o, uint32_t lid,
	       const struct notice *nt, uint32_t src, struct repath_stats *st)
{
	int r = o->publish_to(o->ctx, lid, nt, src);
	st->reports += r > 0 ? (uint64_t)r : 0;
}

/* One notice per pair, to both of its endpoints. */
static void per_pair(const struct repath_params *rp, const struct fabric *f,
		     const struct lft_tables *t, const struct prd_change *ch,
		     size_t n, const struct repath_out *o,
		     struct repath_stats *st)
{
	for (size_t i = 0; i < n; i++) {
		struct notice nt;
		struct notice_path np;
		repath_record(rp, f, t, &ch[i], &np);
		notice_init_sm(&nt, ch[i].kind == PRD_REPATH ? TRAP_REPATH :
			       TRAP_UNPATH, rp->sm_lid, rp->sm_gid);
		notice_set_path(&nt, &np);
		st->notices++;
		to(o, f->ports[ch[i].src].lid, &nt, ch[i].slid, st);
		to(o, f->ports[ch[i].dst].lid, &nt, ch[i].slid, st);
	}
}

/* One wildcard to each port that is an endpoint of a changed pair. */
static int affected(const struct repath_params *rp, const struct fabric *f,
		    const struct prd_change *ch, size_t n,
		    const struct repath_out *o, struct repath_stats *st)
{
	uint8_t *seen = calloc((size_t)f->max_lid + 1, 1);
	if (!seen)
		return -1;
	struct notice nt;
	struct notice_path np = { .flags = NPATH_WILDCARD };
	notice_init_sm(&nt, TRAP_REPATH, rp->sm_lid, rp->sm_gid);
	notice_set_path(&nt, &np);
	for (size_t i = 0; i < n; i++) {
		uint32_t ends[2] = { f->ports[ch[i].src].lid, f->ports[ch[i].dst].lid };
		for (int k = 0; k < 2; k++) {
			if (ends[k] > f->max_lid || seen[ends[k]])
				continue;
			seen[ends[k]] = 1;
			to(o, ends[k], &nt, 0, st);
		}
	}
	free(seen);
	st->notices++;
	st->wildcard = 1;
	return 0;
}

int repath_round(const struct repath_params *rp, const struct fabric *f,
		 const struct lft_tables *t, const struct prd_change *ch,
		 size_t n, const struct prd_stats *ps,
		 const struct repath_out *o, struct repath_stats *st)
{
	memset(st, 0, sizeof(*st));
	uint64_t changed = ps->repath + ps->unpath;
	if (rp->mode == REPATH_WILDCARD) {
		wildcard(rp, o, st);
		return 0;
	}
	if (!changed)
		return 0;
	enum repath_mode m = rp->mode;
	if (ps->overflow && m != REPATH_HYBRID) {
		m = REPATH_HYBRID;
		st->fell_back = 1;
	}
	if (m == REPATH_ONLY)
		per_pair(rp, f, t, ch, n, o, st);
	else if (m != REPATH_HYBRID_AFFECTED || affected(rp, f, ch, n, o, st) < 0)
		wildcard(rp, o, st);
	return 0;
}
