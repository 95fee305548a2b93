/*
 * The neighbour map: for every link the SM has seen, (node GUID, port)
 * <-> (node GUID, port, port GUID), kept in the state directory
 * (NBR_FILE) across restarts.  It is topology, not keys: with M_Key
 * protection at ProtectBits 2 and 3 a device drops a Get that carries a
 * wrong key (IBA vol. 1 14.2.4.1), so the SM must know which port a
 * directed route reaches before it has asked that port anything -- its
 * M_Key is derived from the port GUID (sm/model/mkeys.h).  The map says
 * what is across a link from a node already known; a device not in it is
 * asked with M_Key 0 (a device never keyed holds 0, and 0 passes).
 *
 * nbr_dr_target() resolves a directed route: along the fabric known
 * (the discovery in progress, or the last model) as far as its links go,
 * then along the map.  A cost of one step per hop, one hash lookup per
 * hop beyond the known fabric.
 */
#ifndef IBSMD_NEIGHBORS_H
#define IBSMD_NEIGHBORS_H

#include <stddef.h>
#include <stdint.h>

#include "sm/base/fabric.h"

#define NBR_FILE "neighbors"	/* in the state directory */

struct nbr_end {
	uint64_t node_guid;
	uint64_t port_guid;	/* a switch: port 0's (every port shares it) */
	uint8_t port;
};

struct nbr_slot;

struct nbr_map {
	struct nbr_slot *slots;	/* open addressing; node_guid 0: empty */
	uint32_t cap;		/* a power of two, or 0 */
	uint32_t n;		/* link ends held (two a link) */
};

/* Records every link of f: how many links changed, or -1 (ENOMEM). */
int nbr_from_fabric(struct nbr_map *m, const struct fabric *f);
void nbr_free(struct nbr_map *m);

/*
 * Reads DIR/neighbors into m (added to what it holds).  An absent file is
 * an empty map.  -1 (err): unreadable or corrupt (m keeps what was read
 * before the bad line).
 */
int nbr_load(struct nbr_map *m, const char *dir, char *err, size_t errlen);
/* Writes m to DIR/neighbors atomically (sm/base/wfile.h). */
int nbr_save(const struct nbr_map *m, const char *dir, char *err, size_t errlen);

/* Records the link a <-> b (both directions): 1 if that changed the map, 0, -1 (ENOMEM). */
int nbr_add_link(struct nbr_map *m, const struct nbr_end *a, const struct nbr_end *b);
/* The end whose port GUID is port_guid (a CA's port; a switch: any of its ports) into e: 0, or -1. */
int nbr_port_end(const struct nbr_map *m, uint64_t port_guid, struct nbr_end *e);
/* What the map has across port of node node_guid, or NULL. */
const struct nbr_end *nbr_far_end(const struct nbr_map *m, uint64_t node_guid,
				  uint8_t port);

/*
 * Walks the map beyond links no SMP got across (their far ends refuse the
 * SM: sm/write/mkeytake.h).  nbr_walk_from() visits the node across
 * (node_guid, port) of a node reached by path[1..hops], and on from each
 * switch found so, breadth first -- a switch being a node the map names
 * with two links or more and one port GUID (a switch's ports share port
 * 0's; a CA's each have their own, and a CA forwards no SMP) -- each
 * node once over the walk's calls, none that known() says the SM reached.
 * fn gets the directed route to it (path[1..hops]) and the port GUID
 * that route reaches.
 */
struct nbr_walk;
typedef void (*nbr_visit_fn)(void *arg, const uint8_t *path, int hops,
			     uint64_t port_guid);
/* NULL: ENOMEM. */
struct nbr_walk *nbr_walk_new(const struct nbr_map *m);
/* 0, or -1 (ENOMEM: part of it walked). */
int nbr_walk_from(struct nbr_walk *w, const uint8_t *path, int hops,
		  uint64_t node_guid, uint8_t port,
		  int (*known)(void *arg, uint64_t node_guid), nbr_visit_fn fn,
		  void *arg);
void nbr_walk_free(struct nbr_walk *w);

/*
 * The port GUID of the port a directed-route SMP with initial path
 * path[1..hops] reaches (a switch: its port 0; a CA or router: the port
 * the path enters), walking f from f->sm_node (f may be NULL) and then m;
 * hops 0: local_guid (the SM's own port).  0: unknown.
 */
uint64_t nbr_dr_target(const struct fabric *f, const struct nbr_map *m,
		       uint64_t local_guid, const uint8_t *path, int hops);

/*
 * The map from the SA of the master (IBA vol. 1 15.2.5): LID-routed
 * GMPs carry no M_Key, so a standby holding the secret but no map reads
 * every link and port GUID there.  nbr_lids_from_records() takes n
 * NodeRecords stride bytes apart (one per end port with a LID: LID,
 * NodeInfo's NodeGUID and PortGUID) into t (room for n), sorted by LID,
 * and returns how many; nbr_from_link_records() records each LinkRecord
 * (FromLID, FromPort, ToPort, ToLID) whose two LIDs t names: how many
 * link ends changed the map, or -1 (ENOMEM).
 */
struct nbr_lid {
	uint32_t lid;
	uint64_t node_guid;
	uint64_t port_guid;
};
size_t nbr_lids_from_records(const uint8_t *recs, size_t n, size_t stride,
			     struct nbr_lid *t);
int nbr_from_link_records(struct nbr_map *m, const struct nbr_lid *t, size_t nt,
			  const uint8_t *recs, size_t n, size_t stride);

#endif
