/*
 * PathRecord (IBA vol. 1 §15.2.5.16): the SA's answer to "how do I reach
 * that port", from the routes as published (routing/path.h).
 *
 * End points: SGID/SLID and DGID/DLID name them (a GID whose prefix is
 * neither the subnet's nor link-local, FE80::/10, or whose GUID nobody
 * has: INVALID_GID; a multicast DGID: no record; a LID nobody
 * holds: NO_RECORDS; a GID and a LID that name different ports:
 * REQ_INVALID, as OpenSM).  A GID whose interface ID is a VM's vGUID
 * (sa.h, the view's VMs) names the VM's VF port: its LID is the VM's,
 * wherever the VM runs, and the record carries the GID asked for.
 * Unnamed ends range over every end port with a LID.  For each port
 * pair, the LIDs of their LMC ranges (or the one named) are paired, at
 * most NumbPath paths per pair (GetTable with NumbPath in the mask; Get:
 * one).
 *
 * The record: DGID, SGID, DLID, SLID; SL from the routing result (0
 * without QoS; with congestion.mode dftree the lanes', sm/model/lanes.h:
 * slow_sl towards a hot-spot, fast_sl otherwise); MTU and Rate the least over the links of the routed path
 * (selector 2, "exactly", as OpenSM answers); P_Key and SL those of the
 * partition the two ports share (path_part(), path_sl()); Reversible when the tables also lead back (NumbPath 0 with the
 * Reversible bit, as OpenSM); PacketLifeTime derived below; TClass,
 * FlowLabel, HopLimit 0.
 *
 * PacketLifeTime.  A packet may wait up to a switch's LifeTime
 * (SwitchInfo:LifeTimeValue, 4.096 us * 2^LTV) in each switch it
 * crosses, so a path through s switches lives at most s * 2^LTV:
 * PacketLifeTime = LTV + ceil(log2 s) (path_packet_life(), which the
 * repath notices share), LTV the largest any switch of the
 * subnet reported (sm.subnet_timeout when none did), capped at 63; 0 for
 * a port to itself (Table 205).  OpenSM answers sm.subnet_timeout (18)
 * for every path; with the usual LTV of 18 the two agree for a path
 * through one switch and ibsmd says 20 for a path through three or four.
 *
 * Partitions (sa.h: the view's part_model).  A pair of ports that share
 * no partition (both members, one at least full), or not the one asked
 * for, has no path; nor has a pair whose either end shares none with the
 * requester.  A GetTable lists none of them, a Get answers NO_RECORDS.
 * An end the request names (GID or LID) that shares none with the
 * requester is answered as one that does not exist (endpoint()).
 *
 * Selectors (MTU, Rate, PacketLifeTime): 0 greater than, 1 less than (a
 * smaller MTU or PacketLifeTime is offered, as OpenSM), 2 exactly, 3 the
 * largest available.
 */
#include <string.h>

#include "mad/sa.h"
#include "mad/xlid.h"
#include "routing/path.h"
#include "sm/daemon.h"
#include "sm/model/lanes.h"
#include "sm/sa/sa_server.h"

#define PR_SIZE SA_SIZE_PATH_REC

enum {
	PR_SERVICEID_MSB, PR_SERVICEID_LSB, PR_DGID, PR_SGID, PR_DLID, PR_SLID,
	PR_RAW, PR_RESV0, PR_FLOWLABEL, PR_HOPLIMIT, PR_TCLASS, PR_REVERSIBLE,
	PR_NUMBPATH, PR_PKEY, PR_QOS_CLASS, PR_SL, PR_MTU_SEL, PR_MTU,
	PR_RATE_SEL, PR_RATE, PR_PLT_SEL, PR_PLT, PR_PREFERENCE, PR_N
};

#define BIT(b) ((uint64_t)1 << (b))
#define PAIR_LIMIT 4000000u	/* port pairs one request may look at */

struct pr_req {
	const struct sa_query *q;
	const struct fabric *f;
	uint8_t ltv;		/* the switches' LifeTimeValue */
	unsigned max_paths;	/* per port pair */
	uint64_t sguid, dguid;	/* a VM's vGUID named the end, or 0 */
	uint32_t req;		/* the requester's port (sa_requester()) */
};

static int has(const struct sa_query *q, int bit)
{
	return (q->comp_mask & BIT(bit)) != 0;
}

/*
 * A selector applied: *val is the path's value, want the request's.
 * Returns 0 when the path qualifies (maybe with *val lowered), -1 not.
 * ordered compares values by what they mean (bandwidth for rates).
 */
static int select_value(int sel, uint8_t *val, uint8_t want, int is_rate)
{
	unsigned have = is_rate ? path_rate_bw(*val) : *val;
	unsigned w = is_rate ? path_rate_bw(want) : want;
	switch (sel) {
	case 0:
		return have > w ? 0 : -1;
	case 1:
		if (have < w)
			return 0;
		if (is_rate || want <= 1)
			return -1;
		*val = (uint8_t)(want - 1);	/* a smaller MTU or lifetime will do */
		return 0;
	case 2:
		return have == w ? 0 : -1;
	}
	return 0;
}

/* The record of one path, or -1 when the request's selectors refuse it. */
static int build(const struct pr_req *r, uint32_t src, const struct path_facts *pf,
		 uint16_t pkey, uint8_t *rec)
{
	const struct sa_query *q = r->q;
	const struct fabric *f = r->f;
	const uint8_t *t = q->rec;
	uint8_t mtu = pf->mtu, rate = pf->rate;
	uint8_t plt = path_packet_life(f, pf, src, r->ltv);
	if (has(q, PR_REVERSIBLE) && (t[49] & 0x80) && !pf->reversible)
		return -1;
	if (has(q, PR_SL) && (sa_get16(t + 52) & 0xf) != pf->sl)
		return -1;
	if (has(q, PR_MTU) && has(q, PR_MTU_SEL) &&
	    select_value(t[54] >> 6, &mtu, t[54] & 0x3f, 0) < 0)
		return -1;
	if (has(q, PR_RATE) && has(q, PR_RATE_SEL) &&
	    select_value(t[55] >> 6, &rate, t[55] & 0x3f, 1) < 0)
		return -1;
	if (has(q, PR_PLT) && has(q, PR_PLT_SEL) &&
	    select_value(t[56] >> 6, &plt, t[56] & 0x3f, 0) < 0)
		return -1;
	const struct fab_port *sp = &f->ports[src], *dp = &f->ports[pf->dst_port];
	memset(rec, 0, PR_SIZE);
	sa_put64(rec + 8, q->view->subnet_prefix);
	sa_put64(rec + 16, r->dguid ? r->dguid : dp->guid ? dp->guid : f->nodes[dp->node].guid);
	sa_put64(rec + 24, q->view->subnet_prefix);
	sa_put64(rec + 32, r->sguid ? r->sguid : sp->guid ? sp->guid : f->nodes[sp->node].guid);
	/* 16-bit DLID/SLID, and a vLID's two high bits in byte 58 (mad/xlid.h) */
	xlid_pr_set(rec, pf->dlid, pf->slid);
	rec[49] = pf->reversible ? 0x80 : 0;
	sa_put16(rec + 50, pkey);
	sa_put16(rec + 52, pf->sl);
	rec[54] = (uint8_t)(0x80 | mtu);
	rec[55] = (uint8_t)(0x80 | rate);
	rec[56] = (uint8_t)(0x80 | plt);
	return 0;
}

/*
 * Extended LIDs: may the requester be told a vLID?  Only a device that
 * said it has the extension (XLIDCap); any other reads 16 bits only.
 */
static int requester_capable(const struct sa_query *q)
{
	const struct fabric *f = q->view->f;
	if (!f->xlid_mode || !q->from)
		return 0;
	uint32_t pi = fabric_lid_port(f, q->from->lid);
	return pi != FAB_NONE && f->nodes[f->ports[pi].node].xlid == XLID_YES;
}

/*
 * The pLID whose path a vLID's takes (its VF's PF, behind the same
 * vSwitch: the secondary LFTs copy the PF's entries); lid itself when it
 * is a pLID, 0 when there is none.
 */
static uint32_t route_lid(const struct fabric *f, uint32_t lid)
{
	if (!fabric_is_vlid(lid))
		return lid;
	int vf;
	uint32_t pi = fabric_lid_port(f, lid);
	uint32_t vs = pi == FAB_NONE ? FAB_NONE : fabric_vswitch_of(f, pi, &vf);
	uint32_t pf = vs == FAB_NONE ? FAB_NONE : fabric_vswitch_pf(f, vs);
	return pf == FAB_NONE ? 0 : f->ports[pf].lid;
}

/* OpenSM's order of P_Keys (a map keyed by the network-order value). */
static uint16_t pkey_order(uint16_t pkey)
{
	return (uint16_t)((pkey & 0xff) << 8 | (pkey & 0x7fff) >> 8);
}

/*
 * The partition the paths from src to dst are in, and in *pkey the
 * record's P_Key; PART_NONE when the two share none (or not the one
 * asked for).  As OpenSM (osm_physp_find_common_pkey and
 * osm_physp_share_this_pkey, allow_both_pkeys off): a P_Key in the
 * component mask is checked by its 15 bits and answered as asked, full
 * bit or not; else the first shared partition in OpenSM's order (a
 * tenant before the default 0x7FFF: its order key is the largest), with
 * the full-member bit of the source port's entry.
 */
static uint16_t shared_part(const struct part_model *m, uint32_t src,
			    uint32_t dst, uint16_t *pkey)
{
	*pkey = 0xffff;
	if (!m)		/* no partitions resolved: the default only */
		return 0;
	uint16_t best = PART_NONE, full = 0;
	for (uint32_t k = m->mem_off[src]; k < m->mem_off[src + 1]; k++) {
		uint16_t idx = PART_IDX(m->mem[k]), pk = m->parts[idx].pkey;
		if (part_shared(m, src, dst, pk) != idx ||
		    (best != PART_NONE &&
		     pkey_order(pk) >= pkey_order(m->parts[best].pkey)))
			continue;
		best = idx;
		full = m->mem[k] & PART_FULL;
	}
	if (best != PART_NONE)
		*pkey = (uint16_t)(m->parts[best].pkey | full);
	return best;
}

static uint16_t path_part(const struct sa_query *q, uint32_t src, uint32_t dst,
			  uint16_t *pkey)
{
	const struct part_model *m = q->view->parts;
	if (!has(q, PR_PKEY))
		return shared_part(m, src, dst, pkey);
	*pkey = sa_get16(q->rec + 50);
	if (!m)
		return (*pkey & 0x7fff) == PART_DEFAULT_PKEY ? 0 : PART_NONE;
	return part_shared(m, src, dst, *pkey & 0x7fff);
}

/*
 * The SL of the paths of partition idx: the partition's own as the
 * routing left it (lft_tables.part_sl: a vlane-isolation partition's
 * VL, or the policy's sl; 0 there for none of its own), else the
 * policy's sl (OpenSM's partitions.conf sl=), else the routing's
 * (lft_sl(): a QoS mode's SL, such as vFtree's).
 */
static uint8_t path_sl(const struct lft_tables *t, const struct part_model *m,
		       uint16_t idx, uint8_t sl)
{
	if (t->part_sl && idx < t->n_part_sl && t->part_sl[idx] &&
	    t->part_sl[idx] < 16)
		return t->part_sl[idx];
	if (m && idx < m->n_parts && m->parts[idx].sl >= 0)
		return (uint8_t)m->parts[idx].sl;
	return sl;
}

uint16_t sa_path_part(const struct part_model *m, const struct lft_tables *t,
		      uint32_t src, uint32_t dst, uint16_t *pkey, uint8_t *sl)
{
	uint16_t idx = shared_part(m, src, dst, pkey);
	if (idx != PART_NONE)
		*sl = path_sl(t, m, idx, *sl);
	return idx;
}

/* The paths from port src to port dst within the LIDs the request allows. */
static int pair(const struct pr_req *r, struct sa_query *q, uint32_t src,
		uint32_t dst)
{
	const struct fabric *f = r->f;
	uint16_t pkey;
	/* the requester, the source and the destination share a partition
	   pairwise (OpenSM's pr_rcv_get_port_pair_paths) */
	if (!sa_share(q->view, r->req, src) || !sa_share(q->view, r->req, dst))
		return 0;
	uint16_t part = path_part(q, src, dst, &pkey);
	if (part == PART_NONE)
		return 0;
	uint32_t s0 = f->ports[src].lid, d0 = f->ports[dst].lid;
	uint32_t sn = 1u << fabric_port_lmc(f, src), dn = 1u << fabric_port_lmc(f, dst);
	uint32_t xd, xs;
	xlid_pr_get(q->rec, &xd, &xs);
	if (has(q, PR_SLID)) {
		s0 = xs;
		sn = 1;
	}
	if (has(q, PR_DLID)) {
		d0 = xd;
		dn = 1;
	}
	if (fabric_is_vlid(s0) || fabric_is_vlid(d0)) {
		/* a VM on a vLID has no pLID: nothing a legacy host can use */
		if (!requester_capable(q))
			return 0;
		sn = dn = 1;
	}
	unsigned found = 0;
	for (uint32_t i = 0; i < sn && found < r->max_paths; i++)
		for (uint32_t j = 0; j < dn && found < r->max_paths; j++) {
			struct path_facts pf;
			uint8_t rec[PR_SIZE];
			uint32_t rd = route_lid(f, d0 + j);
			if (!rd || path_resolve(f, q->view->lft, src, rd, &pf) < 0)
				continue;
			if (rd != d0 + j) {
				/* up to the vSwitch as the PF; then its VF */
				pf.dlid = d0 + j;
				pf.dst_port = dst;
			}
			pf.slid = s0 + i;
			pf.sl = path_sl(q->view->lft, q->view->parts, part,
					lft_sl(q->view->lft, route_lid(f, pf.slid), rd));
			/* dFtree: the slow lane towards a hot-spot (lanes.h) */
			pf.sl = lanes_path_sl(q->view->lanes, pf.dlid,
					      f->ports[dst].lid, pf.sl);
			if (build(r, src, &pf, pkey, rec) < 0)
				continue;
			if (sa_answer_add(q, rec) < 0)
				return SA_STS_NO_RESOURCES;
			found++;
			if (sa_enough(q))
				return 0;
		}
	return 0;
}

/*
 * A link-local GID: the prefix FE80::/10 (IBA vol. 1 §4.1.1, the IPv6
 * scope), whatever its other 54 bits: it names a port of this subnet by
 * its GUID, as OpenSM (ib_gid_is_link_local) takes it.  Comparing the
 * prefix with fe80:: alone answered INVALID_GID for a port's GUID under
 * fe80:0:0:ff:: (osmtest's "other link local unicast PathRecord").
 */
#define GID_LINK_LOCAL_MASK	0xffc0000000000000ull
#define GID_LINK_LOCAL		0xfe80000000000000ull
#define GID_MULTICAST_BYTE	0xff

static int gid_link_local(uint64_t prefix)
{
	return (prefix & GID_LINK_LOCAL_MASK) == GID_LINK_LOCAL;
}

/*
 * The port a GID names: INVALID_GID when none does.  *vguid: the GID's
 * interface ID when it is a VM's (the port is its VF), else 0.
 */
static int port_of_gid(const struct sa_query *q, const uint8_t *gid,
		       uint32_t *pi, uint64_t *vguid)
{
	const struct fabric *f = q->view->f;
	uint64_t prefix = sa_get64(gid), guid = sa_get64(gid + 8);
	if (prefix != q->view->subnet_prefix && !gid_link_local(prefix))
		return SA_STS_INVALID_GID;
	for (uint32_t i = 0; i < f->n_ports; i++) {
		const struct fab_port *p = &f->ports[i];
		uint64_t g = p->guid ? p->guid : f->nodes[p->node].guid;
		if (g == guid && fabric_is_endport(f, i) && p->lid) {
			*pi = i;
			return 0;
		}
	}
	const struct sa_vm *vm = sa_vm_of_guid(q->view, guid);
	if (vm) {
		*pi = vm->port;
		*vguid = vm->vguid;
		return 0;
	}
	return SA_STS_INVALID_GID;
}

/*
 * One end of the path: FAB_NONE (every end port) or the port named.  A
 * port the requester shares no partition with is named by nothing: its
 * GID is as unknown (INVALID_GID) and its LID as unheld (NO_RECORDS) as
 * those of no port, so that the status says nothing of a port outside
 * the requester's partitions.
 */
static int endpoint(struct sa_query *q, uint32_t req, int gid_bit, int lid_bit,
		    const uint8_t *gid, const uint8_t *lid, uint32_t *pi,
		    uint64_t *vguid)
{
	const struct fabric *f = q->view->f;
	uint32_t by_gid = FAB_NONE, by_lid = FAB_NONE;
	*vguid = 0;
	if (has(q, gid_bit)) {
		int st = port_of_gid(q, gid, &by_gid, vguid);
		if (st)
			return st;
		if (!sa_share(q->view, req, by_gid)) {
			sa_outside(q, "a GID");
			return SA_STS_INVALID_GID;
		}
	}
	if (has(q, lid_bit)) {
		/* a vLID's high bits in byte 58 (mad/xlid.h) */
		uint32_t xd, xs;
		xlid_pr_get(q->rec, &xd, &xs);
		uint32_t l = lid == q->rec + 40 ? xd : xs;
		if (!l || fabric_lid_port(f, l) == FAB_NONE)
			return SA_STS_NO_RECORDS;
		by_lid = fabric_lid_port(f, l);
		if (!sa_share(q->view, req, by_lid)) {
			sa_outside(q, "a LID");
			return SA_STS_NO_RECORDS;
		}
	}
	if (by_gid != FAB_NONE && by_lid != FAB_NONE && by_gid != by_lid)
		return SA_STS_REQ_INVALID;
	*pi = by_gid != FAB_NONE ? by_gid : by_lid;
	return 0;
}

/* An MTU or rate given with its selector is a valid code (REQ_INVALID). */
static int codes_check(const struct sa_query *q)
{
	if (has(q, PR_MTU) && has(q, PR_MTU_SEL) &&
	    ((q->rec[54] & 0x3f) < 1 || (q->rec[54] & 0x3f) > 5))
		return SA_STS_REQ_INVALID;
	if (has(q, PR_RATE) && has(q, PR_RATE_SEL) && !path_rate_bw(q->rec[55] & 0x3f))
		return SA_STS_REQ_INVALID;
	return 0;
}

int sa_path_records(struct sa_query *q)
{
	const struct fabric *f = q->view->f;
	int st = sa_mask_check(q, PR_N);
	if (st)
		return st;
	/* ServiceID: both halves or neither (OpenSM: INSUFFICIENT_COMPONENTS) */
	if (has(q, PR_SERVICEID_MSB) != has(q, PR_SERVICEID_LSB))
		return SA_STS_INSUFFICIENT_COMPONENTS;
	if ((st = codes_check(q)))
		return st;
	if (!f->lid_port)
		return q->method == SA_METHOD_GET ? SA_STS_NO_RECORDS : 0;
	/* a multicast DGID names a group, not a port: no unicast path to
	 * it (no record, as OpenSM's when no group matches the request;
	 * multicast PathRecords are not answered) */
	if (has(q, PR_DGID) && q->rec[8] == GID_MULTICAST_BYTE)
		return q->method == SA_METHOD_GET ? SA_STS_NO_RECORDS : 0;
	uint32_t src, dst, req = sa_requester(q);
	uint64_t sguid, dguid;
	if ((st = endpoint(q, req, PR_SGID, PR_SLID, q->rec + 24, q->rec + 42, &src, &sguid)) ||
	    (st = endpoint(q, req, PR_DGID, PR_DLID, q->rec + 8, q->rec + 40, &dst, &dguid)))
		return st;
	struct pr_req r = { .q = q, .f = f, .ltv = q->view->ltv, .max_paths = ~0u,
			    .sguid = sguid, .dguid = dguid, .req = req };
	if (q->method == SA_METHOD_GET)
		r.max_paths = 1;
	else if (has(q, PR_NUMBPATH))
		r.max_paths = q->rec[49] & 0x7f;
	if (!r.max_paths)
		return 0;
	uint64_t ends = q->view->n_endports;
	if ((src == FAB_NONE ? ends : 1) * (dst == FAB_NONE ? ends : 1) > PAIR_LIMIT)
		return SA_STS_NO_RESOURCES;
	for (uint32_t s = src == FAB_NONE ? 0 : src;
	     s < (src == FAB_NONE ? f->n_ports : src + 1) && !st && !sa_enough(q); s++) {
		if (!fabric_is_endport(f, s) || !f->ports[s].lid)
			continue;
		for (uint32_t d = dst == FAB_NONE ? 0 : dst;
		     d < (dst == FAB_NONE ? f->n_ports : dst + 1) && !st && !sa_enough(q); d++)
			if (fabric_is_endport(f, d) && f->ports[d].lid)
				st = pair(&r, q, s, d);
	}
	return st;
}

/* ---- MultiPathRecord (IBA vol. 1 §15.2.5.20) ---- */

/*
 * GetMulti of MultiPathRecord: the PathRecords between each of the
 * SGIDCount source GIDs and each of the DGIDCount destination GIDs that
 * follow the record (SDGID), answered from the same paths as PathRecord
 * (pair()), at most NumbPath in all (127 without it, as OpenSM), in the
 * order of the GID lists.  The rules are OpenSM's
 * (osm_sa_multipath_record.c):
 *   - SGIDCount and DGIDCount are needed (INSUFFICIENT_COMPONENTS), and
 *     one GID each at least (REQ_INVALID); ServiceID both halves or
 *     neither (INSUFFICIENT_COMPONENTS); MTU and rate given with their
 *     selectors valid codes (REQ_INVALID);
 *   - a GID of no end port (or a multicast one) is INVALID_GID, and so,
 *     beyond OpenSM, is one of a port the requester shares no partition
 *     with (as in PathRecord);
 *   - Reversible with the bit set: only paths the tables also lead back
 *     (NumbPath answered 0 with the Reversible bit, as PathRecord);
 *   - independence, for alternate path migration: two source and two
 *     destination GIDs with NumbPath 2 get two paths on one diagonal of
 *     the 2x2 matrix (S0-D0 and S1-D1, or S0-D1 and S1-D0; the one with
 *     fewer hops in all, the first on a tie), from LIDs at different
 *     offsets of the ports' LMC ranges, so that they take different
 *     links where the routing spreads LIDs (OpenSM's choice, with its
 *     hash of the base LIDs for the offset).
 * A request of more GIDs than its record carries is REQ_INVALID (one MAD
 * holds 11, OpenSM's limit too).  The answer is a GetMultiResp of
 * PathRecords, held to the budget of answers in flight like a GetTable.
 */
enum {
	MPR_RAW, MPR_RESV0, MPR_FLOWLABEL, MPR_HOPLIMIT, MPR_TCLASS, MPR_REVERSIBLE,
	MPR_NUMBPATH, MPR_PKEY, MPR_QOS_CLASS, MPR_SL, MPR_MTU_SEL, MPR_MTU,
	MPR_RATE_SEL, MPR_RATE, MPR_PLT_SEL, MPR_PLT, MPR_SERVICEID_MSB,
	MPR_INDEPENDENCE, MPR_RESV3, MPR_SGIDCOUNT, MPR_DGIDCOUNT,
	MPR_SERVICEID_LSB, MPR_SDGID, MPR_N
};
#define MPR_HDR		24	/* the record before its GID list */
#define MPR_MAX_PATHS	127	/* NumbPath not given */
#define MPR_APM_HASH	103	/* spreads the LID offsets of an APM pair */

/* The request's selection as a PathRecord template and mask (the fields
 * pair() and build() read). */
static void mpr_as_pr(const struct sa_query *q, uint8_t *t, uint64_t *mask)
{
	static const struct { uint8_t mpr, pr; } bits[] = {
		{ MPR_REVERSIBLE, PR_REVERSIBLE }, { MPR_PKEY, PR_PKEY },
		{ MPR_SL, PR_SL }, { MPR_MTU_SEL, PR_MTU_SEL }, { MPR_MTU, PR_MTU },
		{ MPR_RATE_SEL, PR_RATE_SEL }, { MPR_RATE, PR_RATE },
		{ MPR_PLT_SEL, PR_PLT_SEL }, { MPR_PLT, PR_PLT },
	};
	const uint8_t *m = q->rec;
	memset(t, 0, PR_SIZE);
	t[49] = m[5] & 0x80;		/* Reversible */
	memcpy(t + 50, m + 6, 2);	/* P_Key */
	memcpy(t + 52, m + 8, 2);	/* QoSClass, SL */
	memcpy(t + 54, m + 10, 3);	/* MTU, Rate, PacketLifeTime */
	*mask = 0;
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (has(q, bits[i].mpr))
			*mask |= BIT(bits[i].pr);
}

/* The ports of the request's n GIDs from gid; 0 or a status. */
static int mpr_ports(struct sa_query *q, uint32_t req, const uint8_t *gid,
		     unsigned n, uint32_t *pi, uint64_t *vguid)
{
	for (unsigned i = 0; i < n; i++, gid += 16) {
		vguid[i] = 0;
		int st = port_of_gid(q, gid, &pi[i], &vguid[i]);
		if (st)
			return st;
		if (!sa_share(q->view, req, pi[i])) {
			sa_outside(q, "a GID");
			return SA_STS_INVALID_GID;
		}
	}
	return 0;
}

/* The first LID of port pi's LMC range at offset off (modulo its size). */
static uint32_t lid_at(const struct fabric *f, uint32_t pi, unsigned off)
{
	return f->ports[pi].lid + off % (1u << fabric_port_lmc(f, pi));
}

/* The hops of the path from s to d's LID at offset off; 0 when none. */
static unsigned apm_hops(const struct pr_req *r, uint32_t s, uint32_t d, unsigned off)
{
	struct path_facts pf;
	if (path_resolve(r->f, r->q->view->lft, s, lid_at(r->f, d, off), &pf) < 0)
		return 0;
	return pf.hops ? pf.hops : 1;
}

/* One path from s (its LID at offset off) to d (the same): pair() with both LIDs. */
static int apm_path(struct pr_req *r, struct sa_query *q2, uint32_t s, uint32_t d,
		    unsigned off)
{
	uint64_t mask = q2->comp_mask;
	uint8_t *t = (uint8_t *)q2->rec;
	xlid_pr_set(t, lid_at(r->f, d, off), lid_at(r->f, s, off));
	q2->comp_mask |= BIT(PR_SLID) | BIT(PR_DLID);
	r->max_paths = 1;
	int st = pair(r, q2, s, d);
	q2->comp_mask = mask;
	return st;
}

/* The fewer hops of two paths (0: none). */
static unsigned least_hops(unsigned a, unsigned b)
{
	return !a ? b : !b ? a : a < b ? a : b;
}

/*
 * Two source and two destination ports, NumbPath 2: one diagonal of the
 * 2x2 matrix, the pairs at LID offsets k and k + 1 (k from the base LIDs
 * of the first source and destination by GUID, whichever way asked); the
 * diagonal whose shorter path is shorter, the first on a tie (OpenSM's
 * rule), unless only the other has paths.  vg: the GIDs' vGUIDs.
 */
static int apm(struct pr_req *r, struct sa_query *q2, const uint32_t *pi,
	       const uint64_t *vg)
{
	const struct fabric *f = r->f;
	unsigned s0 = f->ports[pi[1]].guid < f->ports[pi[0]].guid;	/* indexes */
	unsigned d0 = 2 + (f->ports[pi[3]].guid < f->ports[pi[2]].guid);
	unsigned s[2] = { s0, !s0 }, d[2] = { d0, 5 - d0 };
	uint32_t a = f->ports[pi[s[0]]].lid, b = f->ports[pi[d[0]]].lid;
	uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
	unsigned lmc = fabric_port_lmc(f, pi[s[0]]);
	unsigned k = (((lo >> lmc) << 4) | (hi >> lmc)) % MPR_APM_HASH;
	unsigned min_a = least_hops(apm_hops(r, pi[s[0]], pi[d[0]], k),
				    apm_hops(r, pi[s[1]], pi[d[1]], k + 1));
	unsigned min_b = least_hops(apm_hops(r, pi[s[0]], pi[d[1]], k),
				    apm_hops(r, pi[s[1]], pi[d[0]], k + 1));
	int diag_b = min_b && (!min_a || min_b < min_a);
	int st = 0;
	for (unsigned i = 0; i < 2 && !st; i++) {
		unsigned dst = d[diag_b ? !i : i];
		r->sguid = vg[s[i]];
		r->dguid = vg[dst];
		st = apm_path(r, q2, pi[s[i]], pi[dst], k + i);
	}
	return st;
}

int sa_multipath_records(struct sa_query *q)
{
	int st = sa_mask_check(q, MPR_N);
	if (st)
		return st;
	if (!has(q, MPR_SGIDCOUNT) || !has(q, MPR_DGIDCOUNT) ||
	    has(q, MPR_SERVICEID_MSB) != has(q, MPR_SERVICEID_LSB))
		return SA_STS_INSUFFICIENT_COMPONENTS;
	uint8_t t[PR_SIZE];
	struct sa_query q2 = *q;
	mpr_as_pr(q, t, &q2.comp_mask);
	q2.rec = t;
	q2.rec_len = PR_SIZE;
	if ((st = codes_check(&q2)))
		return st;
	unsigned ns = q->rec[15], nd = q->rec[16];
	if (!ns || !nd || q->rec_len < MPR_HDR ||
	    (ns + nd) * 16 > q->rec_len - MPR_HDR)
		return SA_STS_REQ_INVALID;
	uint32_t req = sa_requester(q), pi[(SA_DATA_SIZE - MPR_HDR) / 16];
	uint64_t vg[(SA_DATA_SIZE - MPR_HDR) / 16];
	if ((st = mpr_ports(q, req, q->rec + MPR_HDR, ns + nd, pi, vg)))
		return st;
	unsigned left = has(q, MPR_NUMBPATH) ? q->rec[5] & 0x7f : MPR_MAX_PATHS;
	struct pr_req r = { .q = &q2, .f = q->view->f, .ltv = q->view->ltv, .req = req };
	if (ns == 2 && nd == 2 && left == 2) {
		st = apm(&r, &q2, pi, vg);
	} else {
		for (unsigned i = 0; i < ns && left && !st; i++)
			for (unsigned j = ns; j < ns + nd && left && !st; j++) {
				size_t before = q2.n_recs;
				r.sguid = vg[i];
				r.dguid = vg[j];
				r.max_paths = left;
				st = pair(&r, &q2, pi[i], pi[j]);
				left -= (unsigned)(q2.n_recs - before);
			}
	}
	/* the answer built on q2 is q's */
	q->recs = q2.recs;
	q->n_recs = q2.n_recs;
	q->cap_recs = q2.cap_recs;
	q->too_long = q2.too_long;
	return st;
}
