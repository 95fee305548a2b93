/*
 * MFT blocks into write plans (sm/write/plan_mcast.h).  Block by block: the
 * trees of the (at most 32) groups of a block, then the block's
 * positions on every switch, so that memory follows one block.  With
 * kept trees (struct mcast_trees) a group whose gen has not moved since
 * its tree was computed takes the kept masks: a join storm's run
 * computes the trees of the groups joined, not of every group.
 */
#include "sm/write/plan_mcast.h"

#include <infiniband/mad.h>
#include <stdlib.h>
#include <string.h>

#include "mad/smp.h"
#include "routing/mctree.h"
#include "sm/base/log.h"
#include "sm/base/nodemap.h"
#include "sm/model/vm.h"

int mcast_port_map(const struct fabric *f, const struct vm_registry *vms,
		   struct guid_map *m)
{
	uint32_t n_vms = vms ? vms->n : 0;
	if (fabric_endport_map(f, n_vms, m) < 0)
		return -1;
	for (uint32_t i = 0; i < n_vms; i++) {
		const struct vm *v = &vms->v[i];
		uint32_t pi = v->shared ? vm_pf_port(v, f) : vm_port(v, f);
		if (pi == FAB_NONE || !v->vguid ||
		    guid_map_get(m, v->vguid) != FAB_NONE)
			continue;	/* not here, or a port's GUID wins */
		if (guid_map_put(m, v->vguid, pi) < 0) {
			guid_map_free(m);
			return -1;
		}
	}
	return 0;
}

void mcast_trees_forget_ports(struct mcast_trees *k)
{
	if (k->pmap) {
		guid_map_free(k->pmap);
		free(k->pmap);
		k->pmap = NULL;
	}
	k->pmap_f = NULL;
}

uint32_t mcast_member_ports(const struct guid_map *m, const struct mc_group *g,
			    uint32_t *out)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < g->n_members; i++) {
		uint32_t pi = guid_map_get(m, g->members[i].port_guid);
		if (pi != FAB_NONE)
			out[n++] = pi;
	}
	return n;
}

/* The positions of a switch: ports 0 .. nports, 16 a position. */
static uint32_t mft_positions(const struct fab_node *n)
{
	return (uint32_t)n->nports / MFT_PORTS + 1;
}

/* Ports 16q .. 16q + 15 of a mask, as a 16-bit MFT entry. */
static uint16_t mask_bits(const uint64_t *mask, uint32_t q)
{
	uint32_t bit = q * MFT_PORTS;
	return (uint16_t)(mask[bit / 64] >> (bit % 64));
}

void mcast_trees_clear(struct mcast_trees *k)
{
	for (uint32_t i = 0; k->mask && i < MC_MLIDS; i++) {
		free(k->mask[i]);
		k->mask[i] = NULL;
		k->gen[i] = 0;
	}
	k->kept = 0;
	k->complete = 0;
	if (k->work) {
		mcast_work_free(k->work);
		free(k->work);
		k->work = NULL;
	}
	mcast_trees_forget_ports(k);
}

/* k's work and port map for f and t, built when missing or of others. 0, or -1. */
static int kept_work(struct mcast_trees *k, const struct fabric *f,
		     const struct lft_tables *t, const struct vm_registry *vms)
{
	if (k->work && (k->work->f != f || k->work->t != t)) {
		mcast_work_free(k->work);
		free(k->work);
		k->work = NULL;
	}
	if (k->pmap && k->pmap_f != f)
		mcast_trees_forget_ports(k);
	if (!k->work) {
		if (!(k->work = malloc(sizeof(*k->work))))
			return -1;
		if (mcast_work_init(k->work, f, t) < 0) {
			free(k->work);
			k->work = NULL;
			return -1;
		}
	}
	if (!k->pmap) {
		if (!(k->pmap = malloc(sizeof(*k->pmap))))
			return -1;
		if (mcast_port_map(f, vms, k->pmap) < 0) {
			free(k->pmap);
			k->pmap = NULL;
			return -1;
		}
		k->pmap_f = f;
	}
	return 0;
}

void mcast_trees_free(struct mcast_trees *k)
{
	mcast_trees_clear(k);
	free(k->gen);
	free(k->mask);
	memset(k, 0, sizeof(*k));
}

/* k ready for n_sw rows: cleared when the rows changed. 0, or -1. */
static int trees_ready(struct mcast_trees *k, uint32_t n_sw)
{
	if (!k->mask) {
		k->gen = calloc(MC_MLIDS, sizeof(*k->gen));
		k->mask = calloc(MC_MLIDS, sizeof(*k->mask));
		if (!k->gen || !k->mask) {
			free(k->gen);
			free(k->mask);
			k->gen = NULL;
			k->mask = NULL;
			return -1;
		}
	}
	if (k->n_sw != n_sw)
		mcast_trees_clear(k);
	k->n_sw = n_sw;
	return 0;
}

/*
 * The tree of g (MLID index i) into tree: the kept one when its gen
 * holds, else computed (and kept when k).  0, or -1 on ENOMEM.
 */
static int group_tree(struct mcast_work *w, const struct guid_map *m,
		      const struct mc_group *g, uint32_t i,
		      struct mcast_trees *k, uint64_t *tree, uint32_t *ports,
		      struct mcast_plan_stats *st, uint32_t *root)
{
	size_t bytes = (size_t)w->t->n_sw * MCAST_MASK_WORDS * sizeof(*tree);
	uint32_t n = mcast_member_ports(m, g, ports);
	st->members += n;
	st->missing += g->n_members - n;
	if (k && k->mask[i] && k->gen[i] == g->gen) {
		memcpy(tree, k->mask[i], bytes);
		*root = 0;	/* kept: only trees with a root are kept */
		return 0;
	}
	st->computed++;
	if (mcast_tree_w(w, ports, n, tree, root) < 0)
		return -1;
	if (!k)
		return 0;
	if (*root == FAB_NONE) {	/* no tree: nothing to keep */
		k->kept -= k->mask[i] != NULL;
		free(k->mask[i]);
		k->mask[i] = NULL;
		k->gen[i] = 0;
		return 0;
	}
	if (!k->mask[i]) {
		if (!(k->mask[i] = malloc(bytes)))
			return -1;
		k->kept++;
	}
	memcpy(k->mask[i], tree, bytes);
	k->gen[i] = g->gen;
	return 0;
}

/*
 * Block b's masks: ent[row * 32 + i] (MCAST_MASK_WORDS words each) for
 * MLID 0xC000 + 32b + i, every group of the block's tree (k: the kept
 * trees, or NULL; *had: some MLID of the block had a kept tree before).
 * Returns the groups found (0: none), -1 on ENOMEM.
 */
static int block_trees(struct mcast_work *w, const struct mc_db *db,
		       const struct guid_map *m, uint32_t b, uint64_t *ent,
		       uint64_t *tree, uint32_t *ports, struct mcast_trees *k,
		       struct mcast_plan_stats *st, int *had)
{
	const struct lft_tables *t = w->t;
	int found = 0, zeroed = 0;
	*had = 0;
	for (uint32_t i = 0; k && i < MFT_BLOCK; i++)
		if (b * MFT_BLOCK + i < MC_MLIDS && k->mask[b * MFT_BLOCK + i])
			*had = 1;
	size_t row_words = (size_t)MFT_BLOCK * MCAST_MASK_WORDS;
	for (uint32_t i = 0; i < MFT_BLOCK; i++) {
		uint32_t mlid = MC_MLID_BASE + b * MFT_BLOCK + i, root;
		const struct mc_group *g;
		if (mlid > MC_MLID_LAST)
			continue;
		if (!(g = mc_find_mlid(db, (uint16_t)mlid))) {
			if (k && k->mask[mlid - MC_MLID_BASE]) {	/* deleted */
				free(k->mask[mlid - MC_MLID_BASE]);
				k->mask[mlid - MC_MLID_BASE] = NULL;
				k->gen[mlid - MC_MLID_BASE] = 0;
				k->kept--;
			}
			continue;
		}
		if (group_tree(w, m, g, mlid - MC_MLID_BASE, k, tree, ports, st,
			       &root) < 0)
			return -1;
		if (root == FAB_NONE)
			continue;
		st->groups++;
		found = 1;
		if (!zeroed++)	/* only a block with a tree: MLIDs up to the cap are many */
			memset(ent, 0, (size_t)t->n_sw * row_words * sizeof(*ent));
		for (uint32_t r = 0; r < t->n_sw; r++)
			memcpy(ent + r * row_words + (size_t)i * MCAST_MASK_WORDS,
			       tree + (size_t)r * MCAST_MASK_WORDS,
			       MCAST_MASK_WORDS * sizeof(*tree));
	}
	return found;
}

/* Block b, position q of switch row r (ent: NULL, the block is empty). */
static int plan_block(struct plan *p, int wave, const struct fabric *f,
		      struct devcache *c, const struct lft_tables *t,
		      uint32_t r, uint32_t b, uint32_t q, const uint64_t *ent,
		      int clear_unknown, struct mcast_plan_stats *st)
{
	static const uint8_t zero[SMP_DATA_SIZE];
	uint32_t ni = t->sw_node[r], mod = q << 28 | b;
	uint8_t blk[SMP_DATA_SIZE] = { 0 };
	for (uint32_t i = 0; ent && i < MFT_BLOCK; i++) {
		const uint64_t *mk = ent + ((size_t)r * MFT_BLOCK + i) * MCAST_MASK_WORDS;
		uint16_t v = mask_bits(mk, q);
		blk[2 * i] = (uint8_t)(v >> 8);
		blk[2 * i + 1] = (uint8_t)v;
	}
	if (!memcmp(blk, zero, SMP_DATA_SIZE)) {
		/*
		 * a block of MLIDs in use that the cache does not know: zeros
		 * at a heavy sweep (clear_unknown), so that what an earlier SM
		 * left there goes; not after joins, where it would write every
		 * switch off the trees (a join storm's new MLIDs: thousands of
		 * Sets), and no packet of the group reaches those switches
		 */
		const uint8_t *held = c ? devcache_attr(c, f, ni, 0,
						    IB_ATTR_MULTICASTFORWTBL, mod) : NULL;
		if (held ? !memcmp(held, zero, SMP_DATA_SIZE) : !ent || !clear_unknown)
			return 0;	/* it holds no entry there */
	}
	uint32_t di = plan_data(p, wave, blk);
	if (di == UINT32_MAX || !plan_add(p, wave, PLAN_MFT, ni, 0, mod, di))
		return -1;
	st->blocks++;
	return 0;
}

int mcast_has_top(const struct fabric *f, uint32_t ni)
{
	const struct fab_node *n = &f->nodes[ni];
	return n->type == FAB_SWITCH &&
	       (f->ports[n->first_port].capmask & CAP_HAS_MCAST_FDB_TOP);
}

uint16_t mcast_top(const struct fabric *f, uint32_t ni, const struct mc_db *db)
{
	uint32_t hi = 0;	/* MLIDs in use, from the base: past the highest */
	for (uint32_t i = 0; db && i < db->n; i++)
		if (db->g[i] && db->g[i]->mlid - MC_MLID_BASE + 1u > hi)
			hi = db->g[i]->mlid - MC_MLID_BASE + 1u;
	if (!hi)
		return MC_MLID_BASE - 1;	/* 0xBFFF: no entry valid */
	hi = (hi + MFT_BLOCK - 1) / MFT_BLOCK * MFT_BLOCK;
	if (hi > f->nodes[ni].mft_cap)
		hi = f->nodes[ni].mft_cap;
	return (uint16_t)(MC_MLID_BASE + hi - 1);
}

/*
 * A switch taking MulticastFDBTop: its SwitchInfo as read with the top
 * for db, LinearFDBTop as it holds it and PortStateChange left alone (a
 * 0 does not clear it).
 */
static int plan_top(struct plan *p, int wave, const struct fabric *f,
		    const uint8_t *si_raw, uint32_t ni, const struct mc_db *db)
{
	uint8_t si[SMP_DATA_SIZE];
	memcpy(si, si_raw, SMP_DATA_SIZE);
	mad_set_field(si, 0, IB_SW_LINEAR_FDB_TOP_F, f->nodes[ni].lft_top);
	mad_set_field(si, 0, IB_SW_STATE_CHANGE_F, 0);
	mad_set_field(si, 0, IB_SW_MCAST_FDB_TOP_F, mcast_top(f, ni, db));
	uint32_t di = plan_data(p, wave, si);
	if (di == UINT32_MAX || !plan_add(p, wave, PLAN_SWITCHINFO, ni, 0, 0, di))
		return -1;
	return 0;
}

/* The blocks any switch may hold: up to the largest MulticastFDBCap. */
static uint32_t max_blocks(const struct fabric *f, const struct lft_tables *t)
{
	uint32_t cap = 0;
	for (uint32_t r = 0; r < t->n_sw; r++)
		if (f->nodes[t->sw_node[r]].mft_cap > cap)
			cap = f->nodes[t->sw_node[r]].mft_cap;
	if (cap > MC_MLIDS)
		cap = MC_MLIDS;
	return (cap + MFT_BLOCK - 1) / MFT_BLOCK;
}

int plan_mcast(struct plan *p, int wave, const struct fabric *f,
	       struct devcache *c, const struct lft_tables *t,
	       const struct mc_db *db, const struct vm_registry *vms,
	       const uint8_t (*si_raw)[SMP_DATA_SIZE], int clear_unknown,
	       struct mcast_plan_stats *st)
{
	return plan_mcast_kept(p, wave, f, c, t, db, vms, si_raw, NULL,
			       clear_unknown, st);
}

int plan_mcast_kept(struct plan *p, int wave, const struct fabric *f,
		    struct devcache *c, const struct lft_tables *t,
		    const struct mc_db *db, const struct vm_registry *vms,
		    const uint8_t (*si_raw)[SMP_DATA_SIZE], struct mcast_trees *k,
		    int clear_unknown, struct mcast_plan_stats *st)
{
	struct mcast_plan_stats dummy;
	struct mcast_work w, *wp;
	struct guid_map m, *mp;
	uint32_t most = 0, nb = max_blocks(f, t), warned = 0;
	int rc = -1;
	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	if (!db || !t->n_sw || !nb)
		return 0;
	for (uint32_t i = 0; i < db->n; i++)
		if (db->g[i] && db->g[i]->n_members > most)
			most = db->g[i]->n_members;
	for (uint32_t r = 0; si_raw && db && r < t->n_sw; r++)
		if (mcast_has_top(f, t->sw_node[r]) &&
		    plan_top(p, wave, f, si_raw[t->sw_node[r]], t->sw_node[r], db) < 0)
			return -1;
	if (k && trees_ready(k, t->n_sw) < 0)
		return -1;
	int complete = k && k->complete;	/* the last run's, before this one */
	if (k) {
		k->complete = 0;
		if (kept_work(k, f, t, vms) < 0)
			return -1;
		wp = k->work;
		mp = k->pmap;
	} else {
		if (mcast_port_map(f, vms, &m) < 0)
			return -1;
		if (mcast_work_init(&w, f, t) < 0) {
			guid_map_free(&m);
			return -1;
		}
		wp = &w;
		mp = &m;
	}
	size_t row_words = (size_t)MFT_BLOCK * MCAST_MASK_WORDS;
	uint64_t *ent = calloc((size_t)t->n_sw * row_words, sizeof(*ent));
	uint64_t *tree = calloc((size_t)t->n_sw * MCAST_MASK_WORDS, sizeof(*tree));
	uint32_t *ports = calloc(most + 1, sizeof(*ports));
	/* rows whose cache holds some MFT block: a block without a tree is
	 * looked at only there (it may hold entries to clear) */
	uint8_t *held = calloc((size_t)t->n_sw + 1, 1);
	uint32_t n_held = 0;
	if (!ent || !tree || !ports || !held)
		goto out;
	for (uint32_t r = 0; c && r < t->n_sw; r++)
		n_held += held[r] = (uint8_t)devcache_holds_attr(c, f, t->sw_node[r], 0,
								 IB_ATTR_MULTICASTFORWTBL);
	for (uint32_t b = 0; b < nb; b++) {
		int had, any = block_trees(wp, db, mp, b, ent, tree, ports, k, st, &had);
		if (any < 0)
			goto out;
		if (!any && ((!had && complete && !clear_unknown) || !n_held))
			continue;	/* nothing of ours there since the last run, or none anywhere */
		for (uint32_t r = 0; r < t->n_sw; r++) {
			const struct fab_node *n = &f->nodes[t->sw_node[r]];
			if (!any && !held[r])
				continue;	/* no tree, and nothing held to clear */
			if (b * MFT_BLOCK >= n->mft_cap) {
				if (any && !warned++)
					log_warn("switch 0x%016llx \"%s\": MulticastFDBCap %u, MLIDs from 0x%x not written",
						 (unsigned long long)n->guid,
						 fabric_node_name(f, t->sw_node[r]),
						 n->mft_cap, MC_MLID_BASE + n->mft_cap);
				continue;
			}
			for (uint32_t q = 0; q < mft_positions(n); q++)
				if (plan_block(p, wave, f, c, t, r, b, q,
					       any ? ent : NULL, clear_unknown,
					       st) < 0)
					goto out;
		}
	}
	rc = 0;
	if (k)
		k->complete = 1;
out:
	free(ent);
	free(tree);
	free(ports);
	free(held);
	if (!k) {
		mcast_work_free(&w);
		guid_map_free(&m);
	}
	return rc;
}
