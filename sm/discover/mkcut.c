#include "sm/discover/mkcut.h"

#include <string.h>

#include "mad/mkey.h"

enum mkcut_reason mkcut_judge(const struct discovery *d, const struct nbr_map *m,
			      uint64_t local_guid, int keyed, struct mkcut *c)
{
	memset(c, 0, sizeof(*c));
	const struct fabric *f = &d->f;
	c->nodes = f->n_nodes;
	uint32_t own = d->failed || f->sm_node == FAB_NONE ? FAB_NONE :
		       fabric_port(f, f->sm_node, f->sm_port);
	if (own == FAB_NONE || !(f->ports[own].flags & FPORT_PRESENT)) {
		c->reason = MKCUT_OWN_PORT;
		return c->reason;
	}
	c->own_lid = f->ports[own].hw_lid;
	c->own_sm_lid = f->ports[own].hw_sm_lid;
	struct mkey_pi pi;
	mkey_pi_get(d->pi_raw[own], &pi);
	c->own_protect = pi.protect;
	if (!pi.key || pi.protect == 1)	/* level 1 answers every Get */
		return MKCUT_NONE;
	for (uint32_t i = 0; i < d->n_lost; i++)
		if (!keyed || !nbr_dr_target(f, m, local_guid, d->lost[i].path, d->lost[i].hops))
			c->refused++;
	c->held = d->spared;
	c->reason = c->refused ? MKCUT_KEYED : MKCUT_NONE;
	return c->reason;
}

const char *mkcut_reason_name(enum mkcut_reason r)
{
	return r == MKCUT_OWN_PORT ? "own_port" : r == MKCUT_KEYED ? "keyed" : "";
}
