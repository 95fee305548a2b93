/*
 * The SA's MCMemberRecord family (IBA vol. 1 §15.2.5.17, attribute
 * 0x0038) over the group database (sm/model/mcgroups.h): Set joins (and creates),
 * Delete leaves, Get/GetTable list.  The rules and statuses are
 * OpenSM's (osm_sa_mcmember_record.c, osm_multicast.c):
 *
 *   - Set/Delete need MGID, PortGID and JoinState in the component mask
 *     (INSUFFICIENT_COMPONENTS); an MTU or rate given with its selector
 *     must be a valid code (REQ_INVALID); a PortGID prefix neither the
 *     subnet's nor the default fe80:: is INVALID_GID;
 *   - the joining port is the PortGID's interface ID (an end port, or a
 *     VM's vGUID); it must be the requester's own port, unless the
 *     request sets ProxyJoin and the requester shares a partition with
 *     it (OpenSM accepts any requester sharing a partition, ProxyJoin
 *     or not: ibsmd wants the bit);
 *   - an unknown MGID creates a group when JoinState has a full bit and
 *     the mask has Q_Key, P_Key, SL, FlowLabel, TClass too (else
 *     INSUFFICIENT_COMPONENTS); MGID 0 gets ff1S:a01b:<subnet prefix
 *     with a counter in bytes 10-13>, S the Scope asked or 2; a given
 *     MGID must start 0xff, use no reserved flag and not be a01b with
 *     link-local scope (IPoIB's 401b/601b are not checked, but one
 *     other than a broadcast MGID needs its partition's broadcast group
 *     and that group's components where given); MTU and
 *     rate follow the selectors against the port's link (OpenSM's
 *     mgrp_request_is_realizable), PacketLifeTime its selector
 *     against sm.subnet_timeout (OpenSM takes the value as asked, so
 *     "greater than 0" would make a group whose lifetime 0 no such
 *     join accepts); no MLID left within the smallest
 *     MulticastFDBCap of the subnet's switches (a group past it would
 *     have no tree; OpenSM's max_mcast_lid_ho), or a requester that made
 *     multicast.max_groups_per_port groups already (OpenSM has no such
 *     bound), is NO_RESOURCES (§15.2.1.2), counted and logged at most
 *     once a second;
 *   - joining an existing group, Q_Key, P_Key (base, not both limited),
 *     TClass, SL, FlowLabel, HopLimit given must be the group's, the
 *     MTU, rate and PacketLifeTime selectors must accept the group's,
 *     the port's link must carry the group's MTU and rate, and the port
 *     must hold the group's P_Key (REQ_INVALID for each; JoinState 0
 *     too);
 *   - a Delete names a member holding every JoinState bit it removes
 *     (REQ_INVALID otherwise, an unknown MGID too); the group goes when
 *     no full member is left, unless the SM made it (well_known);
 *   - the answer to a Set/Delete is the group's record with the port's
 *     resulting JoinState; a query answers groups whose P_Key the
 *     requester holds, one record per member when trusted (sa.sa_key) and
 *     no PortGID is asked, and untrusted PortGID, JoinState
 *     and ProxyJoin are zero.
 *
 * Partitions, beyond OpenSM: what the requester shares no partition
 * with is, to it, what does not exist, so that no status tells it
 * apart.  A join to a group whose P_Key the requester does not hold is
 * answered as one to an unknown MGID (REQ_INVALID without a full bit,
 * INSUFFICIENT_COMPONENTS without the create components, REQ_INVALID
 * for a create: its MGID is taken, which a create cannot help telling);
 * a PortGID of a port it shares no partition with is no member in an
 * untrusted query, and a Delete for it is refused as for a non-member.
 */
#include <string.h>

#include "mad/sa.h"
#include "routing/path.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/base/nodemap.h"
#include "sm/mcast/mcast_sm.h"
#include "sm/sa/sa_server.h"

#define MCM_SIZE	52	/* 16 + 16 + 4 + 2 + 1 + 1 + 2 + 1 + 1 + 4 + 1 + 3 */
#define DEFAULT_PREFIX	0xfe80000000000000ull
#define PLT_MAX		0x3f	/* PacketLifeTime: 6 bits */

/* The component mask bits (IBA vol. 1 Table 219), in record order. */
enum {
	MC_MGID, MC_PORTGID, MC_QKEY, MC_MLID, MC_MTU_SEL, MC_MTU, MC_TCLASS,
	MC_PKEY, MC_RATE_SEL, MC_RATE, MC_PLT_SEL, MC_PLT, MC_SL, MC_FLOW,
	MC_HOP, MC_SCOPE, MC_JOIN, MC_PROXY, MC_RESV, MC_N
};
#define BIT(b)		((uint64_t)1 << (b))
#define JOIN_MASK	(BIT(MC_MGID) | BIT(MC_PORTGID) | BIT(MC_JOIN))
#define CREATE_MASK	(JOIN_MASK | BIT(MC_QKEY) | BIT(MC_TCLASS) | \
			 BIT(MC_PKEY) | BIT(MC_FLOW) | BIT(MC_SL))

/* Byte offsets in the record. */
#define R_MGID		0
#define R_PORTGID	16
#define R_QKEY		32
#define R_MLID		36
#define R_MTU		38
#define R_TCLASS	39
#define R_PKEY		40
#define R_RATE		42
#define R_PLT		43
#define R_SLFH		44	/* SL 4, FlowLabel 20, HopLimit 8 */
#define R_SCOPE		48	/* Scope 4, JoinState 4 */
#define R_PROXY		49	/* bit 7 */

static int has(const struct sa_query *q, int bit)
{
	return (q->comp_mask & BIT(bit)) != 0;
}

/* ---- the record ---- */

static void group_record(const struct mc_group *g, uint8_t *r)
{
	memset(r, 0, MCM_SIZE);
	memcpy(r + R_MGID, g->mgid, 16);
	sa_put32(r + R_QKEY, g->qkey);
	sa_put16(r + R_MLID, g->mlid);
	r[R_MTU] = (uint8_t)(0x80 | g->mtu);	/* selector 2: exactly */
	r[R_TCLASS] = g->tclass;
	sa_put16(r + R_PKEY, g->pkey);
	r[R_RATE] = (uint8_t)(0x80 | g->rate);
	r[R_PLT] = (uint8_t)(0x80 | (g->plt & 0x3f));
	sa_put32(r + R_SLFH, (uint32_t)g->sl << 28 | (g->flow_label & 0xfffff) << 8 |
		 g->hop_limit);
	r[R_SCOPE] = (uint8_t)(g->scope << 4);
}

static void member_record(const struct mc_group *g, uint64_t prefix,
			  const struct mc_member *m, uint8_t *r)
{
	group_record(g, r);
	sa_put64(r + R_PORTGID, prefix);
	sa_put64(r + R_PORTGID + 8, m->port_guid);
	r[R_SCOPE] |= m->join_state & 0xf;
	r[R_PROXY] = m->proxy ? 0x80 : 0;
}

/* ---- the ports ---- */

/* The port's link MTU (the smaller MTUCap of its two ends), 0: unknown. */
static uint8_t port_mtu(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	uint8_t m = p->mtu_cap;
	if (p->remote != FAB_NONE) {
		uint8_t r = f->ports[p->remote].mtu_cap;
		if (r && (!m || r < m))
			m = r;
	}
	return m;
}

static uint8_t port_rate(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	return p->width_active ? path_link_rate(p->width_active, p->speed_active) : 0;
}

/* ---- checks ---- */

/* A selector (0 greater, 1 less, 2 exactly, 3 largest) accepts have? */
static int selector_ok(int sel, unsigned have, unsigned want)
{
	switch (sel) {
	case 0:
		return have > want;
	case 1:
		return have < want;
	case 2:
		return have == want;
	}
	return 1;
}

/* The request's MTU, rate and PacketLifeTime selectors accept g's values. */
static int selectors_ok(const struct sa_query *q, const struct mc_group *g)
{
	const uint8_t *t = q->rec;
	if (has(q, MC_MTU_SEL) && has(q, MC_MTU) &&
	    !selector_ok(t[R_MTU] >> 6, g->mtu, t[R_MTU] & 0x3f))
		return 0;
	if (has(q, MC_RATE_SEL) && has(q, MC_RATE) &&
	    !selector_ok(t[R_RATE] >> 6, path_rate_bw(g->rate),
			 path_rate_bw(t[R_RATE] & 0x3f)))
		return 0;
	if (has(q, MC_PLT_SEL) && has(q, MC_PLT) &&
	    !selector_ok(t[R_PLT] >> 6, g->plt & 0x3f, t[R_PLT] & 0x3f))
		return 0;
	return 1;
}

/* OpenSM's validate_other_comp_fields: the given components are g's. */
static int components_ok(const struct sa_query *q, const struct mc_group *g)
{
	const uint8_t *t = q->rec;
	uint32_t slfh = sa_get32(t + R_SLFH);
	uint16_t pk = sa_get16(t + R_PKEY);
	if (has(q, MC_QKEY) && sa_get32(t + R_QKEY) != g->qkey)
		return 0;
	if (has(q, MC_PKEY) && (!((pk | g->pkey) & 0x8000) ||
				(pk & 0x7fff) != (g->pkey & 0x7fff)))
		return 0;
	if (has(q, MC_TCLASS) && t[R_TCLASS] != g->tclass)
		return 0;
	if (has(q, MC_SL) && (slfh >> 28) != g->sl)
		return 0;
	if (has(q, MC_FLOW) && ((slfh >> 8) & 0xfffff) != g->flow_label)
		return 0;
	if (has(q, MC_HOP) && (slfh & 0xff) != g->hop_limit)
		return 0;
	return 1;
}

/* An MTU or rate given with its selector is a valid code. */
static int codes_ok(const struct sa_query *q)
{
	uint8_t mtu = q->rec[R_MTU] & 0x3f, rate = q->rec[R_RATE] & 0x3f;
	if (has(q, MC_MTU) && has(q, MC_MTU_SEL) && (mtu < 1 || mtu > 5))
		return 0;
	if (has(q, MC_RATE) && has(q, MC_RATE_SEL) && !path_rate_bw(rate))
		return 0;
	return 1;
}

/* OpenSM's validate_requested_mgid (o15-0.1.5). */
static int mgid_ok(const uint8_t *m)
{
	uint16_t sig = sa_get16(m + 2);
	if (m[0] != 0xff)
		return 0;
	if (sig == 0x401b || sig == 0x601b)
		return 1;
	if (m[1] & 0xe0)
		return 0;
	return !(sig == 0xa01b && (m[1] & 0x0f) == 2);
}

/*
 * An IPoIB MGID (signature 401b or 601b) other than a broadcast group's
 * is created only beside its partition's broadcast group (same P_Key
 * and scope), the request's components matching that group's (OpenSM's
 * ipoib_mcgroup_creation_validation, on by default).
 */
static int ipoib_group_ok(const struct sa_query *q, const uint8_t *m)
{
	uint16_t sig = sa_get16(m + 2);
	uint8_t b[16];
	if (sig != 0x401b && sig != 0x601b)
		return 1;
	mc_ipoib_mgid(sa_get16(m + 4), b);
	b[1] = (uint8_t)((b[1] & 0xf0) | (m[1] & 0x0f));
	if (!memcmp(b, m, 16))
		return 1;
	const struct mc_group *bg = mc_find_mgid(&q->sm->mc, b);
	return bg && components_ok(q, bg);
}

static int is_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/*
 * One selector of a create against the port's value (OpenSM's
 * mgrp_request_is_realizable): *out the group's value, or -1.  A value
 * not asked (or selector 3, largest) is the port's, or dflt unknown.
 */
static int realize(int given, int sel, uint8_t want, uint8_t port, uint8_t dflt,
		   int is_rate, uint8_t *out)
{
	unsigned pw = is_rate ? path_rate_bw(port) : port;
	unsigned ww = is_rate ? path_rate_bw(want) : want;
	if (!given || sel == 3) {
		*out = port ? port : dflt;
		return 0;
	}
	if (sel == 0) {		/* greater: the port's, when it is */
		if (!port || pw <= ww)
			return -1;
		*out = port;
	} else if (sel == 1) {	/* less: the port's when below, else one less */
		if (port && pw < ww)
			*out = port;
		else if (!is_rate && want > 1)
			*out = (uint8_t)(want - 1);
		else
			return -1;
	} else {
		*out = want;
	}
	return 0;
}

/*
 * A create's PacketLifeTime (0 .. 63): the value asked, through its
 * selector when one is given (greater: the subnet's when it is, else
 * one more; less: the subnet's when it is, else one less; largest: the
 * subnet's), the subnet's (sm.subnet_timeout) when none is asked; -1
 * when none can be.  A create asking "greater than 0" gets a lifetime
 * the later joins' selector accepts, not 0.
 */
static int realize_plt(const struct sa_query *q, uint8_t *out)
{
	uint8_t sub = (uint8_t)q->sm->cfg.subnet_timeout;
	uint8_t want = q->rec[R_PLT] & PLT_MAX;
	int sel = has(q, MC_PLT_SEL) ? q->rec[R_PLT] >> 6 : 2;
	if (!has(q, MC_PLT) || sel == 3) {
		*out = sub;
		return 0;
	}
	if (sel == 0) {
		if (want >= PLT_MAX)
			return -1;
		*out = sub > want ? sub : (uint8_t)(want + 1);
	} else if (sel == 1) {
		if (!want)
			return -1;
		*out = sub < want ? sub : (uint8_t)(want - 1);
	} else {
		*out = want;
	}
	return 0;
}

/* ---- Set: join or create ---- */

struct join_req {
	uint32_t req;		/* the requester's port */
	uint32_t port;		/* the joining port */
	uint64_t guid;		/* its GID's interface ID */
	uint64_t prefix;	/* the PortGID prefix as asked */
	uint8_t state;		/* JoinState asked */
	int proxy;
};

/* MGID 0: ff1S:a01b, the subnet prefix, a counter in bytes 10-13. */
static int assign_mgid(struct sa_query *q, uint8_t scope, uint8_t *mgid)
{
	struct mc_db *db = &q->sm->mc;
	for (int i = 0; i < 1000; i++) {
		memset(mgid, 0, 16);
		mgid[0] = 0xff;
		mgid[1] = (uint8_t)(0x10 | scope);
		mgid[2] = 0xa0;
		mgid[3] = 0x1b;
		sa_put64(mgid + 4, q->view->subnet_prefix);
		sa_put32(mgid + 10, db->mgid_seq++);
		if (!mc_find_mgid(db, mgid))
			return 0;
	}
	return -1;
}

/* Every refused create: one status, counted by the caller, one line a second. */
static int refuse(struct sa_query *q, uint64_t who, const char *why)
{
	const struct mc_db *db = &q->sm->mc;
	log_limited_by(1, 1000, LOG_NOTICE,
		       "SA: multicast group not created for port 0x%016llx (LID %u): %s (%llu refused since start)",
		       (unsigned long long)who, q->from->lid, why,
		       (unsigned long long)(db->refused_mlids + db->refused_port));
	return SA_STS_NO_RESOURCES;
}

/* A new group from a create request; *st its status on failure. */
static struct mc_group *create_group(struct sa_query *q, const struct join_req *j,
				     int *st)
{
	const uint8_t *t = q->rec;
	const struct fabric *f = q->view->f;
	struct mc_group g;
	memset(&g, 0, sizeof(g));
	uint8_t scope = has(q, MC_SCOPE) ? t[R_SCOPE] >> 4 : 2;
	*st = SA_STS_REQ_INVALID;
	if (is_zero(t + R_MGID, 16)) {
		if (assign_mgid(q, scope, g.mgid) < 0) {
			*st = SA_STS_NO_RESOURCES;
			return NULL;
		}
	} else {
		if (!mgid_ok(t + R_MGID) || !ipoib_group_ok(q, t + R_MGID))
			return NULL;
		memcpy(g.mgid, t + R_MGID, 16);
	}
	g.scope = g.mgid[1] & 0x0f;
	if (realize(has(q, MC_MTU) && has(q, MC_MTU_SEL), t[R_MTU] >> 6,
		    t[R_MTU] & 0x3f, port_mtu(f, j->port), 4, 0, &g.mtu) < 0 ||
	    g.mtu < 1 || g.mtu > 5)
		return NULL;
	if (realize(has(q, MC_RATE) && has(q, MC_RATE_SEL), t[R_RATE] >> 6,
		    t[R_RATE] & 0x3f, port_rate(f, j->port), 3, 1, &g.rate) < 0 ||
	    !path_rate_bw(g.rate))
		return NULL;
	uint32_t slfh = sa_get32(t + R_SLFH);
	g.qkey = sa_get32(t + R_QKEY);
	g.pkey = sa_get16(t + R_PKEY);
	g.tclass = t[R_TCLASS];
	g.sl = (uint8_t)(slfh >> 28);
	g.flow_label = (slfh >> 8) & 0xfffff;
	g.hop_limit = has(q, MC_HOP) ? (uint8_t)slfh : 0;
	if (realize_plt(q, &g.plt) < 0)
		return NULL;
	if (!sa_port_holds(q->view, j->port, g.pkey))
		return NULL;
	struct mc_db *db = &q->sm->mc;
	const char *err;
	char why[96];
	g.creator = f->ports[j->req].guid;
	uint32_t made = mc_created_by(db, g.creator);
	if (made >= (uint32_t)q->sm->cfg.mc_max_groups_per_port) {
		db->refused_port++;
		snprintf(why, sizeof(why), "it made %u groups, multicast.max_groups_per_port",
			 made);
		*st = refuse(q, g.creator, why);
		return NULL;
	}
	struct mc_group *n = mc_create(db, &g, &err);
	if (!n)
		*st = refuse(q, g.creator, err);
	return n;
}

/*
 * The request's PortGID, the joining port and the proxy rule; 0 or a
 * status.
 */
static int join_port(struct sa_query *q, struct join_req *j)
{
	const uint8_t *t = q->rec;
	j->prefix = sa_get64(t + R_PORTGID);
	j->guid = sa_get64(t + R_PORTGID + 8);
	j->state = t[R_SCOPE] & 0xf;
	if (j->prefix != DEFAULT_PREFIX && j->prefix != q->view->subnet_prefix)
		return SA_STS_INVALID_GID;
	uint32_t req = sa_requester(q);
	if (req == FAB_NONE)
		return SA_STS_REQ_INVALID;
	j->req = req;
	j->port = sa_port_of_guid(q->view, j->guid, req);
	if (j->port == FAB_NONE)
		return SA_STS_REQ_INVALID;
	j->proxy = j->port != req;
	if (j->proxy && (!(t[R_PROXY] & 0x80) || !sa_share(q->view, req, j->port)))
		return SA_STS_REQ_INVALID;
	return 0;
}

static int answer_member(struct sa_query *q, const struct mc_group *g,
			 const struct join_req *j, uint8_t state, int proxy)
{
	uint8_t r[MCM_SIZE];
	struct mc_member m = { .port_guid = j->guid, .join_state = state,
			       .proxy = (uint8_t)proxy };
	member_record(g, j->prefix, &m, r);
	return sa_answer_add(q, r) < 0 ? SA_STS_NO_RESOURCES : 0;
}

/*
 * Groups whose MLID the smallest MulticastFDBCap does not reach (a
 * switch with a smaller MFT came after they were made) have no tree in
 * it: ibsmctl status says so until none is left.
 */
static void trees_check(struct sm *sm, uint32_t node)
{
	uint16_t lowest;
	uint32_t past = mc_past_limit(&sm->mc, &lowest);
	if (!past) {
		errors_clear(&sm->errs, SM_ERR_MCAST);
		return;
	}
	const struct sa_view *v = sa_get_view(sm);
	if (v && node < v->f->n_nodes)
		errors_set(&sm->errs, SM_ERR_MCAST,
			   "%u multicast groups have no tree: their MLIDs, from 0x%04x, are past the MulticastFDBCap %u of switch 0x%016llx \"%s\"",
			   past, lowest, sm->mc.mlid_limit,
			   (unsigned long long)v->f->nodes[node].guid,
			   fabric_node_name(v->f, node));
	else if (!errors_active(&sm->errs, SM_ERR_MCAST))
		errors_set(&sm->errs, SM_ERR_MCAST,
			   "%u multicast groups have no tree: their MLIDs, from 0x%04x, are past the switches' MulticastFDBCap %u",
			   past, lowest, sm->mc.mlid_limit);
}

/* A group with no full member left goes, unless the SM made it. */
static void maybe_delete(struct sm *sm, struct mc_group *g)
{
	if (g->well_known || mc_has_full_member(g))
		return;
	mcast_sm_group_event(sm, g, 0);
	mc_delete(&sm->mc, g);
	if (errors_active(&sm->errs, SM_ERR_MCAST))
		trees_check(sm, FAB_NONE);
}

static int mcm_join(struct sa_query *q)
{
	struct join_req j;
	int st = join_port(q, &j);
	if (st)
		return st;
	if (has(q, MC_PKEY) && !(sa_get16(q->rec + R_PKEY) & 0x7fff))
		return SA_STS_REQ_INVALID;
	if (!j.state)
		return SA_STS_REQ_INVALID;
	struct mc_db *db = &q->sm->mc;
	struct mc_group *g = mc_find_mgid(db, q->rec + R_MGID);
	int created = 0;
	/* a group whose P_Key the requester does not hold is no group to it,
	   as in its Get and GetTable: answered as an unknown MGID, but for a
	   create, which cannot have the MGID */
	int hidden = g && !sa_port_holds(q->view, sa_requester(q), g->pkey);
	if (hidden)
		sa_outside(q, "a multicast group");
	if (!g || hidden) {
		if (!(j.state & MC_JOIN_ANY_FULL))
			return SA_STS_REQ_INVALID;	/* o15-0.1.9 */
		if ((q->comp_mask & CREATE_MASK) != CREATE_MASK)
			return SA_STS_INSUFFICIENT_COMPONENTS;
		if (hidden)
			return SA_STS_REQ_INVALID;
		if (!(g = create_group(q, &j, &st)))
			return st;
		created = 1;
	} else if (!components_ok(q, g)) {
		return SA_STS_REQ_INVALID;
	}
	const struct fabric *f = q->view->f;
	uint8_t pm = port_mtu(f, j.port), pr = port_rate(f, j.port);
	if (!selectors_ok(q, g) || (pm && pm < g->mtu) ||
	    (pr && path_rate_bw(pr) < path_rate_bw(g->rate)) ||
	    !sa_port_holds(q->view, j.port, g->pkey)) {
		if (created)
			mc_delete(db, g);
		return SA_STS_REQ_INVALID;
	}
	int rc = mc_join(db, g, j.guid, j.state, j.proxy);
	if (rc < 0) {
		if (created)
			mc_delete(db, g);
		return SA_STS_NO_RESOURCES;
	}
	const struct mc_member *m = mc_member_of(g, j.guid);
	st = answer_member(q, g, &j, m->join_state, m->proxy);
	if (created) {
		char s[48];
		mc_mgid_str(g->mgid, s, sizeof(s));
		log_info("SA: multicast group %s created, MLID 0x%04x", s, g->mlid);
		mcast_sm_group_event(q->sm, g, 1);
	}
	if (created || rc > 0)
		mcast_sm_changed(q->sm);
	return st;
}

/* ---- Delete: leave ---- */

static int mcm_leave(struct sa_query *q)
{
	const uint8_t *t = q->rec;
	struct join_req j = {
		.prefix = sa_get64(t + R_PORTGID),
		.guid = sa_get64(t + R_PORTGID + 8),
		.state = t[R_SCOPE] & 0xf,
	};
	if (j.prefix != DEFAULT_PREFIX && j.prefix != q->view->subnet_prefix)
		return SA_STS_INVALID_GID;
	struct mc_group *g = mc_find_mgid(&q->sm->mc, t + R_MGID);
	struct mc_member *m = g ? mc_member_of(g, j.guid) : NULL;
	/* o15-0.1.14: a member holding every bit removed, at least one */
	if (!m || !(j.state & m->join_state) || (j.state & ~m->join_state))
		return SA_STS_REQ_INVALID;
	uint32_t req = sa_requester(q);
	if (req == FAB_NONE)
		return SA_STS_REQ_INVALID;
	const struct sa_vm *vm = sa_vm_of_port(q->view, req);
	int own = q->view->f->ports[req].guid == j.guid || (vm && vm->vguid == j.guid);
	/* for another port: as a proxy join asks (a member the requester
	   shares no partition with is, to it, no member) */
	if (!own && (!m->proxy || !sa_port_holds(q->view, req, g->pkey) ||
		     !sa_share(q->view, req, sa_port_of_guid(q->view, j.guid, FAB_NONE))))
		return SA_STS_REQ_INVALID;
	uint8_t left = (uint8_t)(m->join_state & ~j.state);
	int proxy = m->proxy;
	mc_leave(&q->sm->mc, g, j.guid, j.state);
	int st = answer_member(q, g, &j, left, left ? proxy : 0);
	maybe_delete(q->sm, g);
	mcast_sm_changed(q->sm);
	return st;
}

/* ---- Get / GetTable ---- */

static int query_group(struct sa_query *q, const struct mc_group *g,
		       uint32_t req, int trusted)
{
	const uint8_t *t = q->rec;
	uint8_t r[MCM_SIZE];
	if (has(q, MC_MGID) && memcmp(t + R_MGID, g->mgid, 16))
		return 0;
	if (has(q, MC_MLID) && sa_get16(t + R_MLID) != g->mlid)
		return 0;
	if (!sa_port_holds(q->view, req, g->pkey) || !components_ok(q, g) ||
	    !selectors_ok(q, g))
		return 0;
	if (has(q, MC_SCOPE) && (t[R_SCOPE] >> 4) != g->scope)
		return 0;
	uint8_t want_js = t[R_SCOPE] & 0xf;
	int one = !trusted || has(q, MC_PORTGID);
	for (uint32_t i = 0; i < g->n_members || (one && i == 0); i++) {
		const struct mc_member *m = NULL;
		if (has(q, MC_PORTGID)) {
			uint64_t pg = sa_get64(t + R_PORTGID + 8);
			m = mc_member_of(g, pg);
			if (!m)
				return 0;
			/* a member the requester shares no partition with: none */
			if (!trusted && !sa_share(q->view, req, sa_port_of_guid(q->view, pg, req))) {
				sa_outside(q, "a multicast member");
				return 0;
			}
		} else if (!one) {
			m = &g->members[i];
		}
		uint8_t js = m ? m->join_state : 0;
		if (has(q, MC_JOIN) && want_js != js)
			continue;
		if (has(q, MC_PROXY) && m && (t[R_PROXY] & 0x80) != (m->proxy ? 0x80 : 0))
			continue;
		if (m)
			member_record(g, q->view->subnet_prefix, m, r);
		else
			group_record(g, r);
		if (!trusted) {		/* p923: untrusted see no member */
			memset(r + R_PORTGID, 0, 16);
			r[R_SCOPE] &= 0xf0;
			r[R_PROXY] = 0;
		}
		if (sa_answer_add(q, r) < 0)
			return SA_STS_NO_RESOURCES;
		if (one)
			break;
	}
	return 0;
}

static int mcm_query(struct sa_query *q)
{
	uint32_t req = sa_requester(q);
	if (req == FAB_NONE)
		return SA_STS_REQ_INVALID;
	int trusted = sa_trusted(q);
	const struct mc_db *db = &q->sm->mc;
	for (uint32_t i = 0; i < db->n && !sa_enough(q); i++) {
		int st = query_group(q, db->g[i], req, trusted);
		if (st)
			return st;
	}
	return 0;
}

int sa_mcmember_records(struct sa_query *q)
{
	int st = sa_mask_check(q, MC_N);
	if (st)
		return st;
	if (!codes_ok(q))
		return SA_STS_REQ_INVALID;
	if (q->method == SA_METHOD_SET || q->method == SA_METHOD_DELETE) {
		if ((q->comp_mask & JOIN_MASK) != JOIN_MASK)
			return SA_STS_INSUFFICIENT_COMPONENTS;
		return q->method == SA_METHOD_SET ? mcm_join(q) : mcm_leave(q);
	}
	return mcm_query(q);
}

/* ---- members gone from the fabric ---- */

/*
 * The smallest MulticastFDBCap of f's switches (*node: which; FAB_NONE:
 * none).  A switch that reports 0 is not counted, as OpenSM does not
 * (osm_switch's max_mcast_lid_ho).
 */
static uint32_t smallest_mft(const struct fabric *f, uint32_t *node)
{
	uint32_t cap = 0;
	*node = FAB_NONE;
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (f->nodes[i].type == FAB_SWITCH && f->nodes[i].mft_cap &&
		    (*node == FAB_NONE || f->nodes[i].mft_cap < cap)) {
			cap = f->nodes[i].mft_cap;
			*node = i;
		}
	return cap;
}

void sa_mcast_prune(struct sm *sm)
{
	const struct sa_view *v = sa_get_view(sm);
	struct mc_db *db = &sm->mc;
	int changed = 0;
	if (!v)
		return;
	uint32_t node, cap = smallest_mft(v->f, &node);
	/* no switch that says: every MLID */
	db->mlid_limit = node == FAB_NONE || cap > MC_MLIDS ? MC_MLIDS : cap;
	for (uint32_t i = db->n; i-- > 0;) {
		struct mc_group *g = db->g[i];
		for (uint32_t k = g->n_members; k-- > 0;) {
			uint64_t guid = g->members[k].port_guid;
			if (sa_port_of_guid(v, guid, FAB_NONE) != FAB_NONE)
				continue;
			log_info("multicast: port 0x%016llx left the fabric; dropped from MLID 0x%04x",
				 (unsigned long long)guid, g->mlid);
			mc_leave(db, g, guid, 0xf);
			changed = 1;
		}
		maybe_delete(sm, g);
	}
	trees_check(sm, node);
	if (changed)
		mcast_sm_changed(sm);
}
