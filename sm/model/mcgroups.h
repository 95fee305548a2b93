/*
 * Multicast groups: the SM's group database.  The SA's
 * MCMemberRecord family (sm/sa/sa_mcmember.c) creates, joins, leaves and
 * deletes groups here; the multicast trees (routing/mctree.h) and the MFT
 * writes (sm/write/plan_mcast.c) read it; `ibsmctl groups` lists it.  It lives
 * on the loop, in struct sm, and is not persisted (hosts re-join after
 * an SM restart: the client reregistration of the first sweep asks them
 * to, as with OpenSM).
 *
 * Members are end ports by port GUID (the interface ID of their GID);
 * a member's JoinState is the OR of the joins it made (IBA 15.2.5.17):
 * bit 0 FullMember, 1 NonMember, 2 SendOnlyNonMember, 3 SendOnlyFullMember.
 * A group whose last full member (FullMember or SendOnlyFullMember)
 * leaves is deleted, unless the SM made it (well_known: the IPoIB
 * broadcast groups).
 */
#ifndef IBSMD_MCAST_H
#define IBSMD_MCAST_H

#include <stddef.h>
#include <stdint.h>

#include "sm/base/fabric.h"

#define MC_MLID_BASE	FAB_MLID_BASE	/* 0xC000 */
#define MC_MLID_LAST	0xFFFE		/* 0xFFFF is the permissive LID */
#define MC_MLIDS	(MC_MLID_LAST - MC_MLID_BASE + 1)

#define MC_JOIN_FULL		0x1
#define MC_JOIN_NON		0x2
#define MC_JOIN_SENDONLY	0x4
#define MC_JOIN_SO_FULL		0x8
#define MC_JOIN_ANY_FULL	(MC_JOIN_FULL | MC_JOIN_SO_FULL)

struct mc_member {
	uint64_t port_guid;
	uint8_t join_state;		/* MC_JOIN_* OR'ed */
	uint8_t proxy;			/* ProxyJoin: joined for another port */
};

struct mc_group {
	uint8_t mgid[16];
	uint16_t mlid;
	uint32_t qkey;
	uint16_t pkey;			/* with the full-member bit, as asked */
	uint8_t mtu, rate, sl;		/* IBA encodings (mtu 1..5, rate 2..) */
	uint8_t tclass, hop_limit, scope, plt;
	uint32_t flow_label;
	uint8_t well_known;		/* made by the SM: kept when empty */
	uint64_t creator;		/* the port GUID whose request made it
					 * (0: the SM): what a port may make is
					 * bounded (sm/sa/sa_mcmember.c) */
	uint32_t n_members, cap_members;
	struct mc_member *members;	/* in join order */
	uint64_t gen;			/* the database's gen at its last change */
};

struct mc_db {
	uint32_t n, cap;
	struct mc_group **g;		/* by creation; NULL slots never left */
	uint8_t *mlid_used;		/* MC_MLIDS / 8 bytes */
	uint64_t gen;			/* bumped on every change of any group */
	uint64_t created, deleted;	/* groups, since start */
	uint64_t joins, leaves;		/* requests that changed something */
	uint32_t mgid_seq;		/* the next SA-assigned MGID's counter */
	/*
	 * MLIDs a new group may take, from MC_MLID_BASE: the smallest
	 * MulticastFDBCap of the subnet's switches (IBA 14.2.5.4; one
	 * that reports 0 not counted, as OpenSM), a group past it has no
	 * tree in the MFTs of those switches; MC_MLIDS (mc_db_init) until
	 * a sweep told it, or without such switches.  Set by the daemon
	 * after each heavy sweep (sa_mcast_prune).
	 */
	uint32_t mlid_limit;
	uint64_t refused_mlids;		/* creates refused: no MLID within it */
	uint64_t refused_port;		/* creates refused: the port made its
					 * multicast.max_groups_per_port */
};

int mc_db_init(struct mc_db *db);
void mc_db_free(struct mc_db *db);

struct mc_group *mc_find_mgid(const struct mc_db *db, const uint8_t mgid[16]);
struct mc_group *mc_find_mlid(const struct mc_db *db, uint16_t mlid);

/*
 * A new group with g's parameters (mgid, qkey, pkey, mtu, creator, ...;
 * members ignored) and the lowest free MLID from MC_MLID_BASE, within
 * mlid_limit.  Returns it, or NULL: no MLID left (*err says so, counted
 * in refused_mlids) or no memory.
 */
struct mc_group *mc_create(struct mc_db *db, const struct mc_group *g,
			   const char **err);
/* Deletes g (its MLID becomes free). */
void mc_delete(struct mc_db *db, struct mc_group *g);

/* The member of g with that port GUID, or NULL. */
struct mc_member *mc_member_of(const struct mc_group *g, uint64_t port_guid);
/*
 * Adds the join states in state (MC_JOIN_*) to port_guid's membership,
 * adding the member if new.  Returns 1 when something changed, 0 when
 * it held them all already, -1 on no memory.
 */
int mc_join(struct mc_db *db, struct mc_group *g, uint64_t port_guid,
	    uint8_t state, int proxy);
/*
 * Removes the join states in state from port_guid's membership (the
 * member goes when none is left).  Returns 1 when something changed, 0
 * when it held none of them.  The caller deletes the group when
 * mc_has_full_member() is 0 and it is not well_known.
 */
int mc_leave(struct mc_db *db, struct mc_group *g, uint64_t port_guid,
	     uint8_t state);
int mc_has_full_member(const struct mc_group *g);
/* Is port_guid (a port's GUID or a VM's vGUID) a member of any group? */
int mc_is_member(const struct mc_db *db, uint64_t port_guid);
/* The groups port_guid made that are still there (creator). */
uint32_t mc_created_by(const struct mc_db *db, uint64_t port_guid);
/* The groups whose MLID is past mlid_limit (*lowest: the lowest such MLID). */
uint32_t mc_past_limit(const struct mc_db *db, uint16_t *lowest);

/*
 * The IPoIB broadcast MGID of a partition: ff12:401b:PPPP::ffff:ffff
 * (scope 2, link-local; PPPP the P_Key with the full bit), as IPoIB and
 * OpenSM form it.
 */
void mc_ipoib_mgid(uint16_t pkey, uint8_t mgid[16]);

/*
 * Is mgid one of IPoIB's, ff1S:401b (IPv4) or ff1S:601b (IPv6), with the
 * P_Key in bytes 4-5 (RFC 4391)?
 */
int mc_is_ipoib_mgid(const uint8_t mgid[16]);

/* "ff12:401b:ffff:0000:0000:0000:ffff:ffff" form, buf >= 40 bytes. */
void mc_mgid_str(const uint8_t mgid[16], char *buf, size_t len);

#endif
