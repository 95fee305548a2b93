/*
 * The multicast group database (sm/model/mcgroups.h).  A few hundred groups at
 * most in practice: linear searches over the group list, a bitmap of
 * MLIDs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/model/mcgroups.h"

int mc_db_init(struct mc_db *db)
{
	memset(db, 0, sizeof(*db));
	db->mlid_limit = MC_MLIDS;
	db->mlid_used = calloc(MC_MLIDS / 8 + 1, 1);
	return db->mlid_used ? 0 : -1;
}

static void group_free(struct mc_group *g)
{
	if (g)
		free(g->members);
	free(g);
}

void mc_db_free(struct mc_db *db)
{
	for (uint32_t i = 0; i < db->n; i++)
		group_free(db->g[i]);
	free(db->g);
	free(db->mlid_used);
	memset(db, 0, sizeof(*db));
}

struct mc_group *mc_find_mgid(const struct mc_db *db, const uint8_t mgid[16])
{
	for (uint32_t i = 0; i < db->n; i++)
		if (memcmp(db->g[i]->mgid, mgid, 16) == 0)
			return db->g[i];
	return NULL;
}

struct mc_group *mc_find_mlid(const struct mc_db *db, uint16_t mlid)
{
	for (uint32_t i = 0; i < db->n; i++)
		if (db->g[i]->mlid == mlid)
			return db->g[i];
	return NULL;
}

static int mlid_taken(const struct mc_db *db, uint32_t k)
{
	return db->mlid_used[k / 8] & (1u << (k % 8));
}

struct mc_group *mc_create(struct mc_db *db, const struct mc_group *g,
			   const char **err)
{
	uint32_t k = 0, limit = db->mlid_limit < MC_MLIDS ? db->mlid_limit : MC_MLIDS;
	*err = "out of memory";
	while (k < limit && mlid_taken(db, k))
		k++;
	if (k == limit) {
		*err = limit < MC_MLIDS ? "no MLID left within the switches' MulticastFDBCap" :
					  "no MLID left";
		db->refused_mlids++;
		return NULL;
	}
	if (db->n == db->cap) {
		uint32_t nc = db->cap ? db->cap * 2 : 16;
		struct mc_group **ng = realloc(db->g, nc * sizeof(*ng));
		if (!ng)
			return NULL;
		db->g = ng;
		db->cap = nc;
	}
	struct mc_group *n = malloc(sizeof(*n));
	if (!n)
		return NULL;
	*n = *g;
	n->members = NULL;
	n->n_members = n->cap_members = 0;
	n->mlid = (uint16_t)(MC_MLID_BASE + k);
	db->mlid_used[k / 8] |= (uint8_t)(1u << (k % 8));
	db->g[db->n++] = n;
	n->gen = ++db->gen;
	db->created++;
	*err = NULL;
	return n;
}

void mc_delete(struct mc_db *db, struct mc_group *g)
{
	for (uint32_t i = 0; i < db->n; i++) {
		if (db->g[i] != g)
			continue;
		uint32_t k = (uint32_t)g->mlid - MC_MLID_BASE;
		if (k < MC_MLIDS)
			db->mlid_used[k / 8] &= (uint8_t)~(1u << (k % 8));
		memmove(&db->g[i], &db->g[i + 1], (db->n - i - 1) * sizeof(*db->g));
		db->n--;
		group_free(g);
		db->gen++;
		db->deleted++;
		return;
	}
}

struct mc_member *mc_member_of(const struct mc_group *g, uint64_t port_guid)
{
	for (uint32_t i = 0; i < g->n_members; i++)
		if (g->members[i].port_guid == port_guid)
			return &g->members[i];
	return NULL;
}

int mc_join(struct mc_db *db, struct mc_group *g, uint64_t port_guid,
	    uint8_t state, int proxy)
{
	struct mc_member *m = mc_member_of(g, port_guid);
	state &= 0xf;
	if (m) {
		if ((m->join_state & state) == state)
			return 0;
		m->join_state |= state;
	} else {
		if (g->n_members == g->cap_members) {
			uint32_t nc = g->cap_members ? g->cap_members * 2 : 8;
			struct mc_member *nm = realloc(g->members, nc * sizeof(*nm));
			if (!nm)
				return -1;
			g->members = nm;
			g->cap_members = nc;
		}
		g->members[g->n_members++] = (struct mc_member){
			.port_guid = port_guid, .join_state = state,
			.proxy = (uint8_t)(proxy != 0) };
	}
	g->gen = ++db->gen;
	db->joins++;
	return 1;
}

int mc_leave(struct mc_db *db, struct mc_group *g, uint64_t port_guid,
	     uint8_t state)
{
	struct mc_member *m = mc_member_of(g, port_guid);
	if (!m || !(m->join_state & state))
		return 0;
	m->join_state &= (uint8_t)~state;
	if (!m->join_state) {
		uint32_t i = (uint32_t)(m - g->members);
		memmove(&g->members[i], &g->members[i + 1],
			(g->n_members - i - 1) * sizeof(*m));
		g->n_members--;
	}
	g->gen = ++db->gen;
	db->leaves++;
	return 1;
}

int mc_has_full_member(const struct mc_group *g)
{
	for (uint32_t i = 0; i < g->n_members; i++)
		if (g->members[i].join_state & MC_JOIN_ANY_FULL)
			return 1;
	return 0;
}

int mc_is_member(const struct mc_db *db, uint64_t port_guid)
{
	for (uint32_t i = 0; i < db->n; i++)
		if (mc_member_of(db->g[i], port_guid))
			return 1;
	return 0;
}

uint32_t mc_created_by(const struct mc_db *db, uint64_t port_guid)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < db->n; i++)
		n += db->g[i]->creator == port_guid;
	return n;
}

uint32_t mc_past_limit(const struct mc_db *db, uint16_t *lowest)
{
	uint32_t n = 0;
	*lowest = 0;
	for (uint32_t i = 0; i < db->n; i++) {
		uint16_t m = db->g[i]->mlid;
		if ((uint32_t)(m - MC_MLID_BASE) < db->mlid_limit)
			continue;
		if (!n++ || m < *lowest)
			*lowest = m;
	}
	return n;
}

void mc_ipoib_mgid(uint16_t pkey, uint8_t mgid[16])
{
	static const uint8_t tmpl[16] = {
		0xff, 0x12, 0x40, 0x1b, 0, 0, 0, 0,
		0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	memcpy(mgid, tmpl, 16);
	mgid[4] = (uint8_t)(pkey >> 8);
	mgid[5] = (uint8_t)pkey;
}

int mc_is_ipoib_mgid(const uint8_t mgid[16])
{
	return (mgid[1] & 0xf0) == 0x10 && (mgid[2] == 0x40 || mgid[2] == 0x60) &&
	       mgid[3] == 0x1b;
}

void mc_mgid_str(const uint8_t mgid[16], char *buf, size_t len)
{
	snprintf(buf, len, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
		 mgid[0], mgid[1], mgid[2], mgid[3], mgid[4], mgid[5], mgid[6],
		 mgid[7], mgid[8], mgid[9], mgid[10], mgid[11], mgid[12],
		 mgid[13], mgid[14], mgid[15]);
}
