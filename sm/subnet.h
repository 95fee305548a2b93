/*
 * The subnet the SM keeps between sweeps, one object: the fabric of the
 * last configuring heavy sweep with its LIDs, the routes made for it, the
 * persisted GUID -> LID table, and the device cache (what each device was
 * last told, or was read to hold).
 *
 * A heavy sweep builds its own discovery (struct discovery, sweep.h) and
 * hands it over only when it configures (subnet_take): until then every
 * reader -- the control socket, the light sweep, a standby's view, the
 * coming SA -- sees the last subnet whole, and the route repair works from
 * it.  The discovery in progress never leaks into it.
 */
#ifndef IBSMD_SUBNET_H
#define IBSMD_SUBNET_H

#include <stddef.h>
#include <stdint.h>

#include "routing/engine.h"
#include "sm/base/fabric.h"
#include "sm/model/lanes.h"
#include "sm/model/config.h"
#include "sm/model/mkeyrec.h"
#include "sm/model/mkeys.h"
#include "sm/model/neighbors.h"
#include "sm/write/program.h"
#include "sm/discover/linkwatch.h"
#include "sm/discover/sweep.h"

struct subnet {
	struct discovery *model;	/* NULL before the first configuration */
	struct lft_tables lft;		/* the routes of model */
	const char *engine;		/* the engine that made them */
	unsigned route_gen;		/* bumped when the routing policy changes */
	unsigned lft_gen;		/* route_gen the tables were made with */
	struct devcache *cache;
	struct guid_map guid2lid;	/* persisted in the state directory */
	uint32_t sm_lid;		/* our own LID in model */
	struct link_watch links;	/* failed and degraded links */
	uint64_t configured_at;		/* seconds since the epoch model was
					 * configured, as master */
	struct lanes lanes;		/* dFtree's hot-spots (congestion.mode) */
	/*
	 * M_Keys (security.m_key): what every SMP carries (subnet_mkey_stamp)
	 * and PortInfo Sets write; the neighbour map that names the port a
	 * directed route reaches before it was asked, persisted in the state
	 * directory; the discovery in progress (heavy.c sets it, subnet_take
	 * and subnet_building(NULL) clear it).
	 */
	struct mkeys mk;
	struct mkey_rec rec;		/* ports with another SM's key (mkeyrec.h) */
	struct nbr_map nbrs;
	const struct discovery *building;
	uint64_t local_guid;		/* the SM's port */
};

/* Loads DIR/guid2lid; returns 0, or -1 with the reason in err. */
int subnet_init(struct subnet *s, const char *state_dir, char *err,
		size_t errlen);
void subnet_free(struct subnet *s);
/*
 * Makes d (a discovery that is about to be configured) the subnet's model
 * and returns the previous one, which the caller frees once the routing no
 * longer needs it (the repair reads it).
 */
struct discovery *subnet_take(struct subnet *s, struct discovery *d);
/*
 * security.m_key from c: the secret read (made when absent and create;
 * -n passes 0), ProtectBits and lease.  0, or -1 with err (a secret
 * refused: the old keys stay).
 */
int subnet_mkeys_configure(struct subnet *s, const struct config *c, int create,
			   char *err, size_t errlen);
/* The discovery in progress (NULL: none), for subnet_mkey_stamp. */
void subnet_building(struct subnet *s, const struct discovery *d);
/*
 * The transaction table's stamp (mad/txn.h): the M_Key of the port an
 * SMP goes to -- LID-routed: the model's port of that LID; directed
 * route: the port the path reaches (sm/model/neighbors.h) -- derived
 * from its GUID; 0 when M_Key is off or the port is not known.
 */
uint64_t subnet_mkey_stamp(void *subnet, const uint8_t *mad, const struct mad_addr *to);
/* The key the SM addresses port port_guid with: another SM's it read, else its own. */
uint64_t subnet_port_key(const struct subnet *s, uint64_t port_guid);
/* After a configuring heavy sweep: the model's links into the neighbour
 * map, written to DIR/neighbors when that changed it. */
void subnet_save_neighbors(struct subnet *s, const char *state_dir);
/* The same from f, a discovery a STANDBY made (its own map kept current). */
void subnet_save_neighbors_of(struct subnet *s, const struct fabric *f,
			      const char *state_dir);
/* M_Key state of the ports the SM keys (switch port 0, CA and router ports). */
struct mkey_census {
	uint32_t keyed, unkeyed;
	uint64_t violations;	/* M_KeyViolations as read, summed */
};
void subnet_mkey_census(const struct subnet *s, struct mkey_census *c);

/* Forgets the routes and what the devices hold (a change of mastership). */
void subnet_forget_devices(struct subnet *s);

#endif
