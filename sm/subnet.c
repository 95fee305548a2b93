#include "sm/subnet.h"

#include <infiniband/mad.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "mad/mkey.h"
#include "sm/base/log.h"
#include "sm/model/state.h"

int subnet_init(struct subnet *s, const char *state_dir, char *err,
		size_t errlen)
{
	memset(s, 0, sizeof(*s));
	linkwatch_init(&s->links);
	s->cache = devcache_new();
	if (!s->cache) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	char why[512];
	if (nbr_load(&s->nbrs, state_dir, why, sizeof(why)) < 0)	/* a cache: go on */
		log_warn("neighbour map: %s; devices keyed at M_Key level 2 or 3 "
			 "beyond a link not yet asked time out until the sweep reaches them",
			 why);
	return state_load_guid2lid(state_dir, &s->guid2lid, err, errlen);
}

int subnet_mkeys_configure(struct subnet *s, const struct config *c, int create,
			   char *err, size_t errlen)
{
	struct mkeys k = { .protect = c->mkey_protect, .lease_s = (uint16_t)c->mkey_lease_s };
	char path[4096];
	mkeys_secret_path(c, path, sizeof(path));
	if (k.protect) {
		int rc = mkeys_secret_load(path, create, k.secret, err, errlen);
		if (rc < 0) {
			sodium_memzero(&k, sizeof(k));
			return -1;
		}
		if (rc == MKEYS_MADE)
			log_notice("M_Key secret made: %s", path);
		k.have_secret = 1;
	} else {
		/*
		 * Level 0: a secret left by a level above is read, never made,
		 * so that the SMPs still carry the keys the ports hold until
		 * the PortInfo Set that writes M_Key 0 and ProtectBits 0 (a
		 * port holding 0 then passes any key, IBA vol. 1 14.2.4.1).  One
		 * that cannot be used is no reason to stop: M_Key is off.
		 */
		char why[512];
		int rc = mkeys_secret_load(path, 0, k.secret, why, sizeof(why));
		if (rc == MKEYS_READ) {
			k.have_secret = 1;
			log_notice("M_Key level 0 with the secret %s: SMPs carry each port's "
				   "key, ports still keyed are written M_Key 0", path);
		} else if (rc < 0)
			log_warn("M_Key level 0: %s; SMPs carry M_Key 0, ports keyed before "
				 "refuse them until their lease ends", why);
	}
	s->mk = k;
	sodium_memzero(&k, sizeof(k));
	return 0;
}

void subnet_building(struct subnet *s, const struct discovery *d)
{
	s->building = d;
}

/* IBA vol. 1 14.2.1.2: the directed-route SMP's hop count and initial path */
#define SMP_OFF_CLASS	1
#define SMP_OFF_HOPCNT	7
#define SMP_OFF_PATH	128

uint64_t subnet_mkey_stamp(void *subnet, const uint8_t *mad, const struct mad_addr *to)
{
	const struct subnet *s = subnet;
	if (!s->mk.have_secret && !s->rec.n)
		return 0;
	uint64_t guid = 0;
	if (mad[SMP_OFF_CLASS] == IB_SMI_DIRECT_CLASS) {
		const struct discovery *d = s->building ? s->building : s->model;
		int hops = mad[SMP_OFF_HOPCNT];
		if (hops > FAB_MAX_HOPS)
			return 0;
		guid = nbr_dr_target(d ? &d->f : NULL, &s->nbrs, s->local_guid,
				     mad + SMP_OFF_PATH, hops);
	} else if (s->model) {
		const struct fabric *f = &s->model->f;
		uint32_t pi = fabric_lid_port(f, to->lid);
		guid = pi == FAB_NONE ? 0 : f->ports[pi].guid;
	}
	return subnet_port_key(s, guid);
}

uint64_t subnet_port_key(const struct subnet *s, uint64_t port_guid)
{
	uint64_t other = mkrec_key(&s->rec, port_guid);	/* another SM's, read */
	return other ? other : mkeys_port_key(&s->mk, port_guid);
}

void subnet_save_neighbors(struct subnet *s, const char *state_dir)
{
	if (s->model)
		subnet_save_neighbors_of(s, &s->model->f, state_dir);
}

void subnet_save_neighbors_of(struct subnet *s, const struct fabric *f,
			      const char *state_dir)
{
	int changed = nbr_from_fabric(&s->nbrs, f);
	if (changed < 0) {
		log_warn("neighbour map: out of memory");
		return;
	}
	char err[512];
	if (changed && state_dir[0] && nbr_save(&s->nbrs, state_dir, err, sizeof(err)) < 0)
		log_limited_by(2, 60000, LOG_WARN, "neighbour map not saved: %s", err);
}

void subnet_mkey_census(const struct subnet *s, struct mkey_census *c)
{
	memset(c, 0, sizeof(*c));
	if (!s->model || !s->model->pi_raw)	/* a model built without reads */
		return;
	const struct discovery *d = s->model;
	const struct fabric *f = &d->f;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		if (!(f->ports[pi].flags & FPORT_PRESENT) || !fabric_is_endport(f, pi))
			continue;
		struct mkey_pi m;
		mkey_pi_get(d->pi_raw[pi], &m);
		c->violations += m.violations;
		if (!s->mk.protect)
			continue;
		struct mkey_pi want;
		if (s->cache && devcache_port_mkey(s->cache, f, pi, &want) == 0 &&
		    want.key == mkeys_port_key(&s->mk, f->ports[pi].guid) &&
		    want.protect == s->mk.protect && want.lease_s == s->mk.lease_s)
			c->keyed++;
		else
			c->unkeyed++;
	}
}

void subnet_free(struct subnet *s)
{
	discovery_free(s->model);
	lft_tables_free(&s->lft);
	devcache_free(s->cache);
	guid_map_free(&s->guid2lid);
	linkwatch_free(&s->links);
	lanes_free(&s->lanes);
	nbr_free(&s->nbrs);
	sodium_memzero(s->mk.secret, sizeof(s->mk.secret));
	if (s->rec.v)
		sodium_memzero(s->rec.v, (size_t)s->rec.cap * sizeof(*s->rec.v));
	mkrec_free(&s->rec);
	memset(s, 0, sizeof(*s));
}

struct discovery *subnet_take(struct subnet *s, struct discovery *d)
{
	struct discovery *old = s->model;
	s->model = d;
	s->building = NULL;
	return old;
}

void subnet_forget_devices(struct subnet *s)
{
	devcache_clear(s->cache);
	lft_tables_free(&s->lft);
}
