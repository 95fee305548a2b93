/*
 * The SA's records of nodes and ports (sa.h): NodeRecord, PortInfoRecord,
 * SwitchInfoRecord, LinkRecord, LFTRecord, GUIDInfoRecord.  Each is built
 * in wire format from the published view and kept when it matches the
 * request's template in every field the component mask selects (sa.c);
 * a LID field matches any LID of a port's LMC range, as OpenSM does.
 *
 * Layouts (IBA vol. 1 §15.2.5; sizes as OpenSM's ib_types.h, offsets as
 * libibmad's IB_SA_NR_* and IB_SA_GIR_* fields, checked in test_sa):
 *   NodeRecord       108 (stride 112)  LID, reserved, NodeInfo, NodeDescription
 *   PortInfoRecord    68 (stride 72)   EndportLID, PortNum, Options, PortInfo
 *   SwitchInfoRecord  24               LID, reserved, SwitchInfo (20)
 *   LinkRecord         8               FromLID, FromPort, ToPort, ToLID, reserved
 *   LFTRecord         72               LID, BlockNum, reserved, 64 ports
 *   GUIDInfoRecord    72               LID, BlockNum, reserved x2, GUID0-7
 * Fields the model does not hold (PortInfo's enabled/supported widths,
 * SwitchInfo's caps) come from the attribute as the sweep read it, with
 * what the SM wrote (LID, SM LID, LMC, state, NeighborMTU, ...) over it.
 *
 * Partitions: every family answers within the requester's partitions
 * (sa_share() with sa_requester()), as OpenSM's osm_physp_share_pkey
 * checks: a record of a port that shares no partition with the requester
 * is left out (NodeRecord, PortInfoRecord, SwitchInfoRecord, LFTRecord,
 * GUIDInfoRecord); a LinkRecord needs its two ends and the requester to
 * share pairwise.  The switches and the SM's port are full members of
 * the default partition, so every host still sees them.
 */
#include <infiniband/mad.h>
#include <string.h>

#include "mad/sa.h"
#include "mad/smp.h"
#include "sm/daemon.h"
#include "sm/sa/sa_server.h"
#include "sm/vm/vmshared.h"

#define NR_SIZE	 108
#define PIR_SIZE 68
#define SWR_SIZE 24
#define LR_SIZE	 8
#define LFTR_SIZE 72
#define GIR_SIZE 72

/* PortInfoRecord.AttributeModifier bit 31: CapabilityMask matched bitwise. */
#define PIR_CAPMASK_ENHANCED 0x80000000u
#define PIR_CAPMASK_BIT	7	/* PortInfoRecord's component for CapabilityMask */

static const struct sa_field nr_fields[] = {
	{ 0, 16 }, { 16, 16 },			/* LID, reserved */
	{ 32, 8 }, { 40, 8 }, { 48, 8 }, { 56, 8 },	/* versions, type, ports */
	{ 64, 64 }, { 128, 64 }, { 192, 64 },	/* system image, node, port GUID */
	{ 256, 16 }, { 272, 16 }, { 288, 32 },	/* PartitionCap, DeviceID, Revision */
	{ 320, 8 }, { 328, 24 },		/* LocalPortNum, VendorID */
	{ 352, 512 },				/* NodeDescription */
};

/* PortInfo's fields (IBA vol. 1 §14.2.5.6), bit offsets in PortInfo. */
#define PI(o, b) { 32 + (o), (b) }
static const struct sa_field pir_fields[] = {
	{ 0, 16 }, { 16, 8 }, { 24, 8 },	/* EndportLID, PortNum, Options */
	PI(0, 64), PI(64, 64), PI(128, 16), PI(144, 16),	/* M_Key .. MasterSMLID */
	PI(160, 32), PI(192, 16), PI(208, 16), PI(224, 8),	/* CapMask .. LocalPortNum */
	PI(232, 8), PI(240, 8), PI(248, 8),	/* LinkWidth Enabled/Supported/Active */
	PI(256, 4), PI(260, 4), PI(264, 4), PI(268, 4),	/* SpeedSupp, state, phys, down */
	PI(272, 2), PI(274, 3), PI(277, 3),	/* M_KeyProtect, reserved, LMC */
	PI(280, 4), PI(284, 4), PI(288, 4), PI(292, 4),	/* speeds, NeighborMTU, SMSL */
	PI(296, 4), PI(300, 4), PI(304, 8), PI(312, 8),	/* VLCap, InitType, VLHigh, ArbHigh */
	PI(320, 8), PI(328, 4), PI(332, 4),	/* ArbLow, InitTypeReply, MTUCap */
	PI(336, 3), PI(339, 5), PI(344, 4),	/* VLStall, HOQLife, OperVLs */
	PI(348, 1), PI(349, 1), PI(350, 1), PI(351, 1),	/* enforcement, filters */
	PI(352, 16), PI(368, 16), PI(384, 16), PI(400, 8),	/* violations, GUIDCap */
	PI(408, 1), PI(409, 2), PI(411, 5), PI(416, 3),	/* ClientRereg, resv, SubnetTO, resv */
	PI(419, 5), PI(424, 4), PI(428, 4), PI(432, 16),	/* RespTime, errors, CreditHint */
	PI(448, 8), PI(456, 24), PI(480, 16),	/* reserved, RTLatency, CapMask2 */
	PI(496, 4), PI(500, 4), PI(504, 3), PI(507, 5),	/* SpeedExt Active, Supp, resv, Enabled */
};
#undef PI

#define SI(o, b) { 32 + (o), (b) }
static const struct sa_field swr_fields[] = {
	{ 0, 16 }, { 16, 16 },			/* LID, reserved */
	SI(0, 16), SI(16, 16), SI(32, 16), SI(48, 16),	/* FDB caps, LinearFDBTop */
	SI(64, 8), SI(72, 8), SI(80, 8),	/* default ports */
	SI(88, 5), SI(93, 1), SI(94, 2),	/* LifeTime, PortStateChange, OptSL2VL */
	SI(96, 16), SI(112, 16),		/* LIDsPerPort, PartitionEnforcementCap */
	SI(128, 1), SI(129, 1), SI(130, 1), SI(131, 1), SI(132, 1),
	SI(133, 11), SI(144, 16),		/* reserved, MulticastFDBTop */
};
#undef SI

static const struct sa_field lr_fields[] = {
	{ 0, 16 }, { 16, 8 }, { 24, 8 }, { 32, 16 }, { 48, 16 },
};

static const struct sa_field lftr_fields[] = {
	{ 0, 16 }, { 16, 16 }, { 32, 32 }, { 64, 512 },
};

static const struct sa_field gir_fields[] = {
	{ 0, 16 }, { 16, 8 }, { 24, 8 }, { 32, 32 },
	{ 64, 64 }, { 128, 64 }, { 192, 64 }, { 256, 64 },
	{ 320, 64 }, { 384, 64 }, { 448, 64 }, { 512, 64 },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

int sa_lid_ok(const struct sa_query *q, const struct fabric *f, uint32_t pi)
{
	if (!(q->comp_mask & 1))
		return 1;
	uint32_t want = sa_get16(q->rec), base = f->ports[pi].lid;
	return base && want >= base && want < base + (1u << fabric_port_lmc(f, pi));
}

int sa_match_rest(const struct sa_query *q, const uint8_t *rec,
		  const struct sa_field *fields, unsigned n)
{
	struct sa_query r = *q;
	r.comp_mask &= ~(uint64_t)1;
	return sa_match(&r, rec, fields, n);
}

static int add(struct sa_query *q, const uint8_t *rec)
{
	return sa_answer_add(q, rec) < 0 ? SA_STS_NO_RESOURCES : 0;
}

/* The end port that holds a node's LID: port 0 of a switch. */
static uint32_t lid_port_of(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	if (f->nodes[p->node].type == FAB_SWITCH)
		return f->nodes[p->node].first_port;
	return pi;
}

/* ---- NodeRecord ---- */

static void build_nr(const struct fabric *f, uint32_t pi, uint8_t *r)
{
	const struct fab_port *p = &f->ports[pi];
	const struct fab_node *n = &f->nodes[p->node];
	memset(r, 0, NR_SIZE);
	mad_set_field(r, 0, IB_SA_NR_LID_F, p->lid);
	mad_set_field(r, 0, IB_SA_NR_BASEVER_F, 1);
	mad_set_field(r, 0, IB_SA_NR_CLASSVER_F, 1);
	mad_set_field(r, 0, IB_SA_NR_TYPE_F, n->type);
	mad_set_field(r, 0, IB_SA_NR_NPORTS_F, n->nports);
	mad_set_field64(r, 0, IB_SA_NR_SYSTEM_GUID_F, n->sys_guid);
	mad_set_field64(r, 0, IB_SA_NR_GUID_F, n->guid);
	mad_set_field64(r, 0, IB_SA_NR_PORT_GUID_F, p->guid ? p->guid : n->guid);
	mad_set_field(r, 0, IB_SA_NR_PARTITION_CAP_F, n->partition_cap);
	mad_set_field(r, 0, IB_SA_NR_DEVID_F, n->device_id);
	mad_set_field(r, 0, IB_SA_NR_REVISION_F, n->revision);
	mad_set_field(r, 0, IB_SA_NR_LOCAL_PORT_F, p->num);
	mad_set_field(r, 0, IB_SA_NR_VENDORID_F, n->vendor_id);
	memcpy(r + 44, n->desc, strnlen(n->desc, FAB_DESC_LEN));
}

/* One NodeRecord per end port with a LID: each CA port, switch port 0. */
int sa_node_records(struct sa_query *q)
{
	const struct fabric *f = q->view->f;
	uint8_t r[NR_SIZE];
	uint32_t rq = sa_requester(q);
	int st = sa_mask_check(q, N(nr_fields));
	for (uint32_t pi = 0; !st && pi < f->n_ports && !sa_enough(q); pi++) {
		if (!fabric_is_endport(f, pi) || !f->ports[pi].lid || !sa_lid_ok(q, f, pi) ||
		    !sa_share(q->view, rq, pi))
			continue;
		build_nr(f, pi, r);
		if (sa_match_rest(q, r, nr_fields, N(nr_fields)))
			st = add(q, r);
	}
	return st;
}

/* ---- PortInfoRecord ---- */

static void build_pi(const struct sa_view *v, uint32_t pi, uint8_t *d)
{
	const struct fabric *f = v->f;
	const struct fab_port *p = &f->ports[pi];
	uint32_t ep = lid_port_of(f, pi);
	if (v->pi_raw)
		memcpy(d, v->pi_raw[pi], SMP_DATA_SIZE);
	else
		memset(d, 0, SMP_DATA_SIZE);
	smp_pi_set64(d, IB_PORT_MKEY_F, 0);
	if (!v->pi_raw)	/* else LocalPortNum as read: the port the SMP came in by */
		smp_pi_set(d, IB_PORT_LOCAL_PORT_F, p->num);
	smp_pi_set(d, IB_PORT_LINK_WIDTH_ACTIVE_F, p->width_active);
	smp_pi_set(d, IB_PORT_LINK_SPEED_ACTIVE_F, p->speed_active & 0x0f);
	smp_pi_set(d, IB_PORT_STATE_F, p->state);
	smp_pi_set(d, IB_PORT_PHYS_STATE_F, p->phys_state);
	smp_pi_set(d, IB_PORT_MTU_CAP_F, p->mtu_cap);
	smp_pi_set(d, IB_PORT_VL_CAP_F, p->vl_cap);
	if (p->remote != FAB_NONE) {
		const struct fab_port *r = &f->ports[p->remote];
		smp_pi_set(d, IB_PORT_NEIGHBOR_MTU_F,
			   p->mtu_cap < r->mtu_cap ? p->mtu_cap : r->mtu_cap);
	}
	if (fabric_is_endport(f, pi)) {
		/*
		 * What an end port holds.  A switch's other ports keep
		 * CapabilityMask as read: IBA vol. 1 §14.2.5.6 defines it for
		 * end ports only (OpenSM answers it as read too).
		 */
		const struct fab_port *e = &f->ports[ep];
		smp_pi_set(d, IB_PORT_CAPMASK_F, e->capmask);
		smp_pi_set(d, IB_PORT_LID_F, e->lid);
		smp_pi_set(d, IB_PORT_SMLID_F, v->sm_lid);
		smp_pi_set(d, IB_PORT_LMC_F, fabric_port_lmc(f, ep));
		smp_pi_set64(d, IB_PORT_GID_PREFIX_F, v->subnet_prefix);
	}
}

static int capmask_ok(const struct sa_query *q, const uint8_t *rec)
{
	if (!(q->comp_mask & ((uint64_t)1 << PIR_CAPMASK_BIT)) ||
	    !(q->attr_mod & PIR_CAPMASK_ENHANCED))
		return 1;
	uint32_t want = sa_get32(q->rec + 4 + 20), have = sa_get32(rec + 4 + 20);
	return (have & want) == want;
}

/*
 * One PortInfoRecord per present port: a CA's ports under their own LIDs,
 * every port of a switch (0 .. N) under the switch's LID, as OpenSM.
 */
int sa_portinfo_records(struct sa_query *q)
{
	const struct fabric *f = q->view->f;
	uint8_t r[PIR_SIZE];
	uint32_t rq = sa_requester(q);
	int st = sa_mask_check(q, N(pir_fields));
	struct sa_query m = *q;
	if (q->attr_mod & PIR_CAPMASK_ENHANCED)	/* CapabilityMask: capmask_ok's */
		m.comp_mask &= ~((uint64_t)1 << PIR_CAPMASK_BIT);
	for (uint32_t pi = 0; !st && pi < f->n_ports && !sa_enough(q); pi++) {
		const struct fab_port *p = &f->ports[pi];
		int sw = f->nodes[p->node].type == FAB_SWITCH;
		uint32_t ep = lid_port_of(f, pi);
		if (!(p->flags & FPORT_PRESENT) || (!sw && p->num == 0) ||
		    !f->ports[ep].lid || !sa_lid_ok(q, f, ep) || !sa_share(q->view, rq, pi))
			continue;
		memset(r, 0, sizeof(r));
		sa_put16(r, (uint16_t)f->ports[ep].lid);
		r[2] = p->num;
		build_pi(q->view, pi, r + 4);
		if (sa_match_rest(&m, r, pir_fields, N(pir_fields)) && capmask_ok(q, r))
			st = add(q, r);
	}
	return st;
}

/* ---- SwitchInfoRecord ---- */

int sa_switchinfo_records(struct sa_query *q)
{
	const struct sa_view *v = q->view;
	const struct fabric *f = v->f;
	uint8_t r[SWR_SIZE];
	uint32_t rq = sa_requester(q);
	int st = sa_mask_check(q, N(swr_fields));
	for (uint32_t ni = 0; !st && ni < f->n_nodes && !sa_enough(q); ni++) {
		const struct fab_node *n = &f->nodes[ni];
		uint32_t p0 = n->first_port;
		if (n->type != FAB_SWITCH || !f->ports[p0].lid || !sa_lid_ok(q, f, p0) ||
		    !sa_share(v, rq, p0))
			continue;
		memset(r, 0, sizeof(r));
		uint8_t *si = r + 4;
		if (v->si_raw)
			memcpy(si, v->si_raw[ni], 20);
		sa_put16(r, (uint16_t)f->ports[p0].lid);
		mad_set_field(si, 0, IB_SW_LINEAR_FDB_CAP_F, n->lft_cap);
		mad_set_field(si, 0, IB_SW_MCAST_FDB_CAP_F, n->mft_cap);
		mad_set_field(si, 0, IB_SW_LINEAR_FDB_TOP_F, n->lft_top);
		mad_set_field(si, 0, IB_SW_LIFE_TIME_F, n->lifetime);
		mad_set_field(si, 0, IB_SW_STATE_CHANGE_F, n->port_state_change);
		mad_set_field(si, 0, IB_SW_PARTITION_ENFORCE_CAP_F, n->partition_enf_cap);
		mad_set_field(si, 0, IB_SW_ENHANCED_PORT0_F, n->enhanced_port0);
		if (sa_match_rest(q, r, swr_fields, N(swr_fields)))
			st = add(q, r);
	}
	return st;
}

/* ---- LinkRecord ---- */

/* One per direction of every link between present ports with LIDs. */
int sa_link_records(struct sa_query *q)
{
	const struct fabric *f = q->view->f;
	uint8_t r[LR_SIZE];
	uint32_t rq = sa_requester(q);
	int st = sa_mask_check(q, N(lr_fields));
	for (uint32_t pi = 0; !st && pi < f->n_ports && !sa_enough(q); pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (!(p->flags & FPORT_PRESENT) || p->remote == FAB_NONE ||
		    !(f->ports[p->remote].flags & FPORT_PRESENT))
			continue;
		uint32_t from = lid_port_of(f, pi), to = lid_port_of(f, p->remote);
		if (!f->ports[from].lid || !f->ports[to].lid || !sa_lid_ok(q, f, from) ||
		    !sa_share(q->view, pi, p->remote) || !sa_share(q->view, rq, pi) ||
		    !sa_share(q->view, rq, p->remote))
			continue;
		memset(r, 0, sizeof(r));
		sa_put16(r, (uint16_t)f->ports[from].lid);
		r[2] = p->num;
		r[3] = f->ports[p->remote].num;
		sa_put16(r + 4, (uint16_t)f->ports[to].lid);
		if (q->comp_mask & 8) {		/* ToLID: within the peer's range */
			uint32_t want = sa_get16(q->rec + 4), base = f->ports[to].lid;
			if (want < base || want >= base + (1u << fabric_port_lmc(f, to)))
				continue;
		}
		struct sa_query m = *q;
		m.comp_mask &= ~(uint64_t)9;
		if (sa_match(&m, r, lr_fields, N(lr_fields)))
			st = add(q, r);
	}
	return st;
}

/* ---- LFTRecord ---- */

/* Blocks 0 .. the last holding a routed LID, of every switch. */
int sa_lft_records(struct sa_query *q)
{
	const struct sa_view *v = q->view;
	const struct fabric *f = v->f;
	const struct lft_tables *t = v->lft;
	uint8_t r[LFTR_SIZE];
	uint32_t rq = sa_requester(q);
	int st = sa_mask_check(q, N(lftr_fields));
	uint32_t blocks = t->max_lid / FAB_LFT_BLOCK + 1;
	for (uint32_t row = 0; !st && row < t->n_sw && !sa_enough(q); row++) {
		uint32_t p0 = f->nodes[t->sw_node[row]].first_port;
		if (!f->ports[p0].lid || !sa_lid_ok(q, f, p0) || !sa_share(v, rq, p0))
			continue;
		const uint8_t *ent = lft_row(t, row);
		for (uint32_t b = 0; !st && b < blocks && !sa_enough(q); b++) {
			memset(r, 0, sizeof(r));
			sa_put16(r, (uint16_t)f->ports[p0].lid);
			sa_put16(r + 2, (uint16_t)b);
			for (uint32_t k = 0; k < FAB_LFT_BLOCK; k++) {
				uint32_t lid = b * FAB_LFT_BLOCK + k;
				r[8 + k] = lid <= t->max_lid ? ent[lid] : LFT_DROP;
			}
			if (sa_match_rest(q, r, lftr_fields, N(lftr_fields)))
				st = add(q, r);
		}
	}
	return st;
}

/* ---- GUIDInfoRecord ---- */

/*
 * The alias GUIDs of end port pi, in GUIDInfo order after the port GUID:
 * the vGUID of the VM on a VF port (the view's VMs, from the registry),
 * or the vGUIDs of the shared-LID VMs of a hypervisor's PF port.  Up to
 * max into g; returns how many there are.
 */
static uint32_t port_aliases(const struct sa_view *v, uint32_t pi,
			     uint64_t *g, uint32_t max)
{
	uint32_t n = 0;
	const struct sa_vm *vm = sa_vm_of_port(v, pi);
	if (vm && n < max)
		g[n++] = vm->vguid;
	for (uint32_t s = v->svm_head ? v->svm_head[pi] : FAB_NONE; s != FAB_NONE;
	     s = v->svm_next[s]) {
		if (n < max)
			g[n] = v->svms[s].vguid;
		n++;
	}
	return n;
}

#define GIR_ALIASES_MAX 1024	/* the alias GUIDs one record walk shows */

/* Block b of port pi's GUIDInfo: GUID0 of block 0 is the port GUID. */
static void gir_block(const struct fabric *f, uint32_t pi, uint32_t b,
		      const uint64_t *alias, uint32_t n_alias, uint8_t *r)
{
	const struct fab_port *p = &f->ports[pi];
	memset(r, 0, GIR_SIZE);
	mad_set_field(r, 0, IB_SA_GIR_LID_F, p->lid);
	mad_set_field(r, 0, IB_SA_GIR_BLOCKNUM_F, b);
	for (uint32_t k = 0; k < 8; k++) {
		uint64_t g;
		uint32_t idx = b * 8 + k;	/* the GUID index on the port */
		if (!idx)
			g = p->guid ? p->guid : f->nodes[p->node].guid;
		else if (idx - 1 < n_alias)
			g = alias[idx - 1];
		else
			continue;
		mad_set_field64(r, 0, (enum MAD_FIELDS)(IB_SA_GIR_GUID0_F + k), g);
	}
}

/*
 * The GUIDInfo blocks port pi has: as many as its GUIDCap (8 GUIDs a
 * block, IBA vol. 1 §14.2.5.5) as the sweep read it, one without a
 * PortInfo read; 0 for a port of GUIDCap 0 (OpenSM lists none either).
 */
static uint32_t gir_cap_blocks(const struct sa_view *v, uint32_t pi)
{
	if (!v->pi_raw)
		return 1;
	uint32_t cap = smp_pi_get(v->pi_raw[pi], IB_PORT_GUID_CAP_F);
	return (cap + 7) / 8;
}

/*
 * Every end port's GUIDInfo blocks: those of its GUIDCap (block 0 with
 * GUID0 the port GUID), and as many more as its alias GUIDs need.  The SA
 * answers from the registry: ibsim takes GUIDInfo only as a Get, so the
 * devices are never told.
 */
static int gir_get(struct sa_query *q)
{
	const struct fabric *f = q->view->f;
	uint8_t r[GIR_SIZE];
	uint64_t alias[GIR_ALIASES_MAX];
	uint32_t rq = sa_requester(q);
	int st = sa_mask_check(q, N(gir_fields));
	for (uint32_t pi = 0; !st && pi < f->n_ports && !sa_enough(q); pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (!fabric_is_endport(f, pi) || !p->lid || !sa_lid_ok(q, f, pi) ||
		    !sa_share(q->view, rq, pi))
			continue;
		uint32_t n = port_aliases(q->view, pi, alias, GIR_ALIASES_MAX);
		n = n < GIR_ALIASES_MAX ? n : GIR_ALIASES_MAX;
		uint32_t nb = gir_cap_blocks(q->view, pi);
		if (n && n / 8 + 1 > nb)	/* the aliases the registry holds */
			nb = n / 8 + 1;
		for (uint32_t b = 0; !st && b < nb && !sa_enough(q); b++) {
			gir_block(f, pi, b, alias, n, r);
			if (sa_match_rest(q, r, gir_fields, N(gir_fields)))
				st = add(q, r);
		}
	}
	return st;
}

/*
 * Set and Delete: a hypervisor manages its VMs' alias GUIDs on its own
 * port, as SR-IOV drivers do (the second front end of the VM registry,
 * sm/vm/vmshared.h).  The requester's port must be the PF of a vSwitch; the
 * record's LID, when selected, must be that port's.  Every GUID entry the
 * component mask selects (bits 4-11) that is not 0 and not the port GUID
 * is a vGUID: Set makes it a shared-LID VM of that hypervisor (created,
 * or moved from another hypervisor: Paper VI's signalling), Delete ends
 * it.  The answer is the port's block 0 after the change.
 */
static int gir_set(struct sa_query *q)
{
	const struct fabric *f = q->view->f;
	int st = sa_mask_check(q, N(gir_fields));
	if (st)
		return st;
	uint32_t lid = q->from->lid;
	uint32_t pi = lid && lid <= f->max_lid ? f->lid_port[lid] : FAB_NONE;
	int vf;
	if (pi == FAB_NONE || fabric_vswitch_of(f, pi, &vf) == FAB_NONE || vf != -1)
		return SA_STS_REQ_INVALID;	/* not a hypervisor's PF */
	if ((q->comp_mask & 1) && sa_get16(q->rec) != f->ports[pi].lid)
		return SA_STS_REQ_INVALID;	/* another port's GUIDs */
	uint64_t port_guid = f->ports[pi].guid, g[8];
	unsigned n = 0;
	for (unsigned k = 0; k < 8; k++) {
		if (!(q->comp_mask & (1ull << (4 + k))))
			continue;
		uint64_t x = mad_get_field64((void *)(uintptr_t)q->rec, 0,
					     (enum MAD_FIELDS)(IB_SA_GIR_GUID0_F + k));
		if (x && x != port_guid)
			g[n++] = x;
	}
	if (!n)
		return SA_STS_REQ_INVALID;
	char err[256];
	st = vmshared_sa_request(q->sm, port_guid, g, n,
				 q->method == SA_METHOD_DELETE, err, sizeof(err));
	if (st)
		return st;
	/* the view was published again: find the port anew */
	f = q->view->f;
	if (!f)
		return SA_STS_NO_RESOURCES;
	for (pi = 0; pi < f->n_ports; pi++)
		if (f->ports[pi].guid == port_guid && fabric_is_endport(f, pi))
			break;
	if (pi == f->n_ports)
		return SA_STS_NO_RECORDS;
	uint8_t r[GIR_SIZE];
	uint64_t alias[7];
	uint32_t na = port_aliases(q->view, pi, alias, 7);
	gir_block(f, pi, 0, alias, na < 7 ? na : 7, r);
	return add(q, r);
}

int sa_guidinfo_records(struct sa_query *q)
{
	if (q->method == SA_METHOD_SET || q->method == SA_METHOD_DELETE)
		return gir_set(q);
	return gir_get(q);
}
