#include "sm/write/plan_sweep.h"
#include "sm/write/plan_lft.h"

#include <infiniband/mad.h>
#include <stdlib.h>
#include <string.h>

#include "mad/mkey.h"
#include "mad/smp.h"
#include "mad/xlid.h"
#include "routing/xlft.h"
#include "sm/base/log.h"
#include "sm/base/nodemap.h"
#include "sm/model/qos.h"
#include "sm/write/plan_mcast.h"
#include "sm/write/program.h"


unsigned plan_pkey_cap(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	const struct fab_node *n = &f->nodes[p->node];
	if (n->type == FAB_SWITCH && p->num)
		return n->partition_enf_cap;
	return n->partition_cap ? n->partition_cap : PLAN_PKEY_BLOCK;
}

/*
 * A switch's external port that holds its end port's P_Key table (the
 * switch enforces partitions: PartitionEnforcementCap > 0), with the
 * partitions known: the end port's entries, else 0.
 */
static unsigned pkey_peer_entries(const struct fabric *f,
				  const struct program_params *pp, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	const struct fab_node *n = &f->nodes[p->node];
	if (!pp->parts || n->type != FAB_SWITCH || !p->num ||
	    !n->partition_enf_cap || !fabric_port_linked(f, pi) ||
	    !fabric_is_endport(f, p->remote) || p->remote >= pp->parts->n_ports)
		return 0;
	return pp->parts->mem_off[p->remote + 1] - pp->parts->mem_off[p->remote];
}

/*
 * PortInfo PartitionEnforcementInbound/Outbound of port pi: -1 as the port
 * holds them; on an enforcing switch's port facing an end port, 1 with
 * tenant partitions when its table holds every entry of the end port
 * (OpenSM's osm_pkey_mgr.c turns enforcement off when it does not), else
 * 0.  FilterRaw* stay as read, as OpenSM leaves them.
 */
static int pkey_enforce(const struct fabric *f, const struct program_params *pp,
			uint32_t pi)
{
	unsigned n = pkey_peer_entries(f, pp, pi);
	if (!n)
		return -1;
	return pp->parts->tenants && n <= plan_pkey_cap(f, pi);
}

/*
 * M_Key protection (IBA vol. 1 14.2.4): the port's key, level and lease,
 * or with M_Key off M_Key 0, ProtectBits 0 and lease 0 (a port keyed
 * before is opened: the SMP carries the key it holds, sm/subnet.c);
 * M_KeyViolations as read (the device takes the field from a Set:
 * writing 0 would clear its count).
 */
void plan_mkey_fields(const struct mkeys *k, uint64_t port_guid, uint8_t *pi)
{
	struct mkey_pi m;
	mkey_pi_get(pi, &m);
	int on = k && k->protect;
	m.key = on ? mkeys_port_key(k, port_guid) : 0;
	m.protect = on ? (uint8_t)k->protect : 0;
	m.lease_s = on ? k->lease_s : 0;
	mkey_pi_put(pi, &m);
}

/* What the SM wants in a port's PortInfo, from what the port said it is. */
static void encode_pi(const struct discovery *d, const struct program_params *pp,
		      uint32_t pi, int state, int rereg, uint8_t *out)
{
	const struct fabric *f = &d->f;
	const struct fab_port *p = &f->ports[pi];
	const struct fab_node *n = &f->nodes[p->node];
	memcpy(out, d->pi_raw[pi], SMP_DATA_SIZE);
	smp_pi_prepare_set(out);
	smp_pi_set64(out, IB_PORT_MKEY_F, 0);
	smp_pi_set(out, IB_PORT_MKEY_LEASE_F, 0);
	if (fabric_is_endport(f, pi)) {
		int lmc = (n->type == FAB_SWITCH && !n->enhanced_port0) ? 0 : f->lmc;
		/* an idle VF (FPORT_NOLID) has LID 0: see plan_port() */
		/* a vLID does not fit the 16-bit field: LID 0, XLIDCap PortVLID */
		smp_pi_set(out, IB_PORT_LID_F, fabric_is_vlid(p->lid) ? 0 : p->lid);
		smp_pi_set(out, IB_PORT_SMLID_F, pp->sm_lid);
		smp_pi_set(out, IB_PORT_LMC_F, (uint32_t)lmc);
		smp_pi_set64(out, IB_PORT_GID_PREFIX_F, pp->subnet_prefix);
		smp_pi_set(out, IB_PORT_SUBN_TIMEOUT_F, (uint32_t)pp->subnet_timeout);
		smp_pi_set(out, IB_PORT_CLIENT_REREG_F, rereg ? 1 : 0);
		/* a switch's external ports have none: port 0's governs its SMA */
		plan_mkey_fields(pp->mkeys, p->guid, out);
	}
	if (fabric_port_linked(f, pi)) {
		const struct fab_port *r = &f->ports[p->remote];
		int leaf = n->type == FAB_SWITCH &&
			   f->nodes[r->node].type != FAB_SWITCH;
		smp_pi_set(out, IB_PORT_NEIGHBOR_MTU_F,
			   p->mtu_cap < r->mtu_cap ? p->mtu_cap : r->mtu_cap);
		smp_pi_set(out, IB_PORT_OPER_VLS_F,
			   qos_link_opvls(p->vl_cap, r->vl_cap, (unsigned)pp->max_op_vls));
		smp_pi_set(out, IB_PORT_VL_STALL_COUNT_F, (uint32_t)pp->vl_stall_count);
		if (n->type == FAB_SWITCH)	/* ports.hoq_life: switch ports only */
			smp_pi_set(out, IB_PORT_HOQ_LIFE_F,
				   (uint32_t)(leaf ? pp->leaf_hoq_life : pp->hoq_life));
		if (pp->vl_high_limit >= 0)	/* qos.vlarb_high_limit */
			smp_pi_set(out, IB_PORT_VL_HIGH_LIMIT_F,
				   (uint32_t)pp->vl_high_limit);
	}
	int enf = pkey_enforce(f, pp, pi);
	if (enf >= 0) {
		smp_pi_set(out, IB_PORT_PART_EN_INB_F, (uint32_t)enf);
		smp_pi_set(out, IB_PORT_PART_EN_OUTB_F, (uint32_t)enf);
	}
	smp_pi_set(out, IB_PORT_STATE_F, (uint32_t)state);
}

/* P_Key block 0 with the default partition only: the one ibsmd configures
 * without partitions, and what a port holds after a reset. */
static uint32_t pkey_default(struct plan *p, int wave)
{
	uint8_t blk[SMP_DATA_SIZE] = { 0xff, 0xff };
	return plan_data(p, wave, blk);
}

static uint32_t pkey_mod(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	return f->nodes[p->node].type == FAB_SWITCH ? (uint32_t)p->num << 16 : 0;
}

/*
 * A port that has had no LID since its last reset and keeps no P_Key table
 * in NVRAM holds what every port holds after a reset: the default P_Key
 * 0xFFFF in entry 0 and nothing else.  A switch's external port: when its
 * port 0 has had no LID since the switch's reset.
 */
static int pkey_default_since_reset(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	const struct fab_node *n = &f->nodes[p->node];
	if (n->type == FAB_SWITCH)
		p = &f->ports[n->first_port];
	return p->hw_lid == 0 && !(p->capmask & CAP_IS_PKEY_NVRAM);
}

/*
 * The P_Key table of port pi, block by block (entries 32k..32k+31, the
 * rest of the last block zero): an end port's own (the partitions' entries,
 * pp->parts, or the default 0xFFFF alone without them), an enforcing
 * switch's port facing an end port that end port's; never past the port's
 * capacity (the entries beyond are left out with a warning).  The blocks
 * past the last wanted that the device cache says hold something are
 * cleared (a port that left partitions).  A port fresh from a reset is
 * recorded as holding what a reset leaves, so only what differs is sent.
 * dflt: the default block's payload in this wave.
 */
static int plan_pkeys(struct plan *p, int wave, const struct discovery *d,
		      struct devcache *c, const struct program_params *pp,
		      uint32_t pi, uint32_t dflt)
{
	static const uint8_t zero[SMP_DATA_SIZE];
	const struct fabric *f = &d->f;
	const struct fab_port *fp = &f->ports[pi];
	uint16_t want[CFG_MAX_PARTS + 1];
	unsigned nw, cap = plan_pkey_cap(f, pi);
	if (!fabric_is_endport(f, pi)) {
		if (!pkey_peer_entries(f, pp, pi))
			return 0;
		nw = part_pkeys(pp->parts, f, pi, want, CFG_MAX_PARTS + 1);
	} else if (pp->parts) {
		nw = part_pkeys(pp->parts, f, pi, want, CFG_MAX_PARTS + 1);
	} else {
		want[0] = 0xffff;
		nw = 1;
	}
	if (nw > cap) {
		log_warn("port 0x%016llx \"%s\" port %u: %u P_Keys, room for %u: the last %u left out",
			 (unsigned long long)f->nodes[fp->node].guid,
			 fabric_node_name(f, fp->node), fp->num, nw, cap, nw - cap);
		nw = cap;
	}
	int reset = pkey_default_since_reset(f, pi);
	uint32_t nb = (nw + PLAN_PKEY_BLOCK - 1) / PLAN_PKEY_BLOCK;
	uint32_t cap_blocks = (cap + PLAN_PKEY_BLOCK - 1) / PLAN_PKEY_BLOCK;
	uint32_t mod0 = pkey_mod(f, pi);
	for (uint32_t b = 0; b < cap_blocks; b++) {
		uint8_t blk[SMP_DATA_SIZE] = { 0 };
		if (b >= nb) {
			const uint8_t *held = devcache_attr(c, f, fp->node, fp->num,
							    IB_ATTR_PKEY_TBL, mod0 | b);
			if (reset || !held || !memcmp(held, zero, SMP_DATA_SIZE))
				continue;	/* it holds no entry there */
		}
		for (unsigned i = 0; i < PLAN_PKEY_BLOCK && b * PLAN_PKEY_BLOCK + i < nw; i++) {
			blk[2 * i] = (uint8_t)(want[b * PLAN_PKEY_BLOCK + i] >> 8);
			blk[2 * i + 1] = (uint8_t)want[b * PLAN_PKEY_BLOCK + i];
		}
		uint32_t di = b == 0 && !pp->parts ? dflt : plan_data(p, wave, blk);
		struct plan_op *o = di == UINT32_MAX ? NULL :
				    plan_add(p, wave, PLAN_PKEY, fp->node, fp->num,
					     mod0 | b, di);
		if (!o)
			return -1;
		if (reset)	/* what it holds: nothing written if the same */
			devcache_record(c, f, o, o->mod,
					b ? zero : p->waves[wave].data[dflt]);
	}
	return 0;
}

/*
 * Is either end of pi's link an end port that was left without a LID?
 * Such a link stays in INIT, and that is no failure: a host the LID space
 * had no room for, or an idle VF under the dynamic LID scheme
 * (FPORT_NOLID, sm/model/vm.c), whose vSwitch port stays in INIT with it.
 */
static int lidless_link(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	if (fabric_is_endport(f, pi) && !p->lid)
		return 1;
	return p->remote != FAB_NONE && fabric_is_endport(f, p->remote) &&
	       !f->ports[p->remote].lid;
}

static int plan_port(struct plan *p, int wave, const struct discovery *d,
		     struct devcache *c, const struct program_params *pp,
		     uint32_t pi, uint32_t pkey)
{
	const struct fabric *f = &d->f;
	const struct fab_port *fp = &f->ports[pi];
	const struct fab_node *n = &f->nodes[fp->node];
	if (!(fp->flags & FPORT_PRESENT))
		return 0;
	int ep = fabric_is_endport(f, pi), ln = fabric_port_linked(f, pi);
	if (!ep && !ln)
		return 0;
	devcache_observe_port(c, f, pi);
	int rereg = pp->client_rereg && ep && n->type != FAB_SWITCH;
	/* a host the LID space had no room for, an idle VF: off the subnet (INIT) */
	int state = ln && fp->state == PORT_INIT && !lidless_link(f, pi) ? PORT_ARMED : 0;
	/*
	 * A VF a VM left (FPORT_NOLID, still ARMED or ACTIVE with the VM's
	 * LID): LID 0 and PortState Down, so that its link retrains to INIT
	 * -- what a function-level reset of the VF leaves.  ibsim and the
	 * emulator do that (DOWN on a CA port: both ends back to INIT).
	 */
	if ((fp->flags & FPORT_NOLID) && ep && fp->state >= PORT_ARMED)
		state = PORT_DOWN;
	uint8_t data[SMP_DATA_SIZE];
	encode_pi(d, pp, pi, state, rereg, data);
	uint32_t di = plan_data(p, wave, data);
	if (di == UINT32_MAX ||
	    !plan_add(p, wave, PLAN_PORTINFO, fp->node, fp->num, fp->num, di))
		return -1;
	return plan_pkeys(p, wave, d, c, pp, pi, pkey);
}

int plan_sweep_ports(struct plan *p, int wave, const struct discovery *d,
		     struct devcache *c, const struct program_params *pp)
{
	uint32_t pkey = pkey_default(p, wave);
	if (pkey == UINT32_MAX)
		return -1;
	/*
	 * A switch that lost its tables (LinearFDBTop 0) lost its port-0
	 * attributes with them: forget those before this sweep records any
	 * (its port-0 P_Key, just below), not when the routes come.
	 */
	for (uint32_t ni = 0; ni < d->f.n_nodes; ni++)
		if (d->f.nodes[ni].type == FAB_SWITCH)
			devcache_observe_switch(c, &d->f, ni);
	for (uint32_t pi = 0; pi < d->f.n_ports; pi++)
		if (plan_port(p, wave, d, c, pp, pi, pkey) < 0)
			return -1;
	return 0;
}

int plan_sweep_port(struct plan *p, int wave, const struct discovery *d,
		    struct devcache *c, const struct program_params *pp,
		    uint32_t pi)
{
	uint32_t pkey = pkey_default(p, wave);
	if (pkey == UINT32_MAX)
		return -1;
	return plan_port(p, wave, d, c, pp, pi, pkey);
}

static int plan_switch(struct plan *p, int wave, const struct discovery *d,
		       struct devcache *c, const struct lft_tables *t, uint32_t ni,
		       const struct program_params *pp)
{
	const struct mc_db *mc = pp->mc;
	const struct fab_node *n = &d->f.nodes[ni];
	uint32_t top = t->max_lid;
	uint8_t si[SMP_DATA_SIZE];
	memcpy(si, d->si_raw[ni], SMP_DATA_SIZE);	/* PortStateChange as read: 1 clears it */
	mad_set_field(si, 0, IB_SW_LINEAR_FDB_TOP_F, top);
	mad_set_field(si, 0, IB_SW_LIFE_TIME_F, (uint32_t)pp->switch_lifetime);
	if (mc && mcast_has_top(&d->f, ni))	/* sm/write/plan_mcast.h */
		mad_set_field(si, 0, IB_SW_MCAST_FDB_TOP_F, mcast_top(&d->f, ni, mc));
	uint32_t di = plan_data(p, wave, si);
	if (di == UINT32_MAX || !plan_add(p, wave, PLAN_SWITCHINFO, ni, 0, 0, di))
		return -1;
	/* its LFT blocks: plan_lft_ordered(), for every switch at once */
	if (t->row_of_node[ni] != FAB_NONE && n->lft_cap && top >= n->lft_cap)
		log_err("switch 0x%016llx \"%s\": LinearFDBCap %u is below the highest LID %u",
			(unsigned long long)n->guid, fabric_node_name(&d->f, ni), n->lft_cap, top);
	return 0;
}

/* One vendor-attribute write (XLIDCap, XLIDLFT) of a 64-byte payload. */
static int plan_vendor(struct plan *p, int wave, uint32_t node, uint8_t port,
		       uint16_t attr, uint32_t mod, const uint8_t *payload)
{
	uint32_t di = plan_data(p, wave, payload);
	struct plan_op *o = di == UINT32_MAX ? NULL :
			    plan_add(p, wave, PLAN_VENDOR, node, port, mod, di);
	if (!o)
		return -1;
	o->attr = attr;
	return 0;
}

/* The XLIDCap a capable switch is to hold. */
int plan_xlid_cap(struct plan *p, int wave, const struct fabric *f,
		  const struct lft_tables *t, uint32_t ni)
{
	const struct fab_node *n = &f->nodes[ni];
	uint32_t row = t->row_of_node[ni];
	if (n->xlid != XLID_YES || row == FAB_NONE || !t->xrow)
		return 0;
	/*
	 * Top: the tables' blocks (entries past the highest vLID are none),
	 * so that the sweep and a VM's writes ask the same of a switch
	 */
	uint32_t top = t->x_blocks * FAB_LFT_BLOCK;
	if (top > n->xlid_cap) {
		log_err("switch 0x%016llx \"%s\": SecondaryLFTCap %u is below the highest vLID 0x%x",
			(unsigned long long)n->guid, fabric_node_name(f, ni), n->xlid_cap, f->max_vlid);
		top = n->xlid_cap;
	}
	struct xlid_cap x = {
		.supported = 1,
		.enabled = 1,
		.lft_cap = n->xlid_cap,
		/*
		 * a vSwitch: past its own vLIDs' blocks (none without a vLID:
		 * DefaultPort does)
		 */
		.lft_top = fabric_is_vswitch(f, ni) ? xlft_top(t, row) : top,
		.default_port = t->xdefault[row],
	};
	uint8_t buf[SMP_DATA_SIZE];
	xlid_cap_encode(&x, buf);
	return plan_vendor(p, wave, ni, 0, XLID_ATTR_CAP, 0, buf);
}

int plan_xlid_data(struct plan *p, int wave, uint32_t node, uint32_t block,
		   const uint8_t *payload)
{
	return plan_vendor(p, wave, node, 0, XLID_ATTR_LFT, block, payload);
}

int plan_xlid_block(struct plan *p, int wave, const struct lft_tables *t,
		    uint32_t row, uint32_t block)
{
	const uint8_t *b = xlft_block(t, row, block);
	if (!b)
		return 0;
	return plan_vendor(p, wave, t->sw_node[row], 0, XLID_ATTR_LFT, block, b);
}

/*
 * Extended LIDs (mad/xlid.h): a capable switch's XLIDCap and the
 * secondary-LFT blocks its row holds (those under its Top); every such
 * block is planned, the executor leaves out what the device cache says
 * is held.  A vSwitch row holds only its own vLIDs' blocks: a block below
 * them that the cache knows holds entries (written when a vLID of its own
 * was there) is cleared, so a VF's packet to that vLID goes up again; one
 * the cache does not know is taken as none (what a device holds before
 * the SM writes it), which spares a bring-up a block per vLID block per
 * vSwitch.
 */
static int plan_xswitch(struct plan *p, int wave, const struct discovery *d,
			struct devcache *c, const struct lft_tables *t,
			uint32_t ni)
{
	const struct fabric *f = &d->f;
	const struct fab_node *n = &f->nodes[ni];
	uint32_t row = t->row_of_node[ni];
	if (n->xlid != XLID_YES || row == FAB_NONE)
		return 0;
	if (plan_xlid_cap(p, wave, f, t, ni) < 0)
		return -1;
	uint32_t cap_blocks = n->xlid_cap / FAB_LFT_BLOCK + (n->xlid_cap % FAB_LFT_BLOCK != 0);
	uint32_t first = t->xfirst[row], end = first + t->xcount[row];
	if (end > cap_blocks)
		end = cap_blocks;
	for (uint32_t b = first; b < end; b++)
		if (plan_xlid_block(p, wave, t, row, b) < 0)
			return -1;
	if (!fabric_is_vswitch(f, ni) || !c)
		return 0;
	uint8_t none[SMP_DATA_SIZE];
	memset(none, LFT_DROP, sizeof(none));
	for (uint32_t b = 0; b < first && b < cap_blocks; b++) {
		const uint8_t *held = devcache_attr(c, f, ni, 0, XLID_ATTR_LFT, b);
		if (held && memcmp(held, none, SMP_DATA_SIZE) &&
		    plan_vendor(p, wave, ni, 0, XLID_ATTR_LFT, b, none) < 0)
			return -1;
	}
	return 0;
}

/* A VF port's XLIDCap: PortVLID. */
int plan_xlid_port(struct plan *p, int wave, const struct fabric *f,
		   uint32_t pi, uint32_t vlid)
{
	const struct fab_port *fp = &f->ports[pi];
	struct xlid_cap x = {
		.supported = 1,
		.enabled = 1,
		.default_port = 0xff,
		.port_vlid = vlid,
	};
	uint8_t buf[SMP_DATA_SIZE];
	xlid_cap_encode(&x, buf);
	return plan_vendor(p, wave, fp->node, fp->num, XLID_ATTR_CAP, fp->num, buf);
}

/*
 * SwitchInfo and the LFT blocks of t (which the plan keeps pointing to),
 * the QoS tables (plan_sweep_qos) and the multicast groups' MFT blocks
 * (pp->mc, plan_mcast).
 */
static int plan_sweep_switches(struct plan *p, int wave,
			       const struct discovery *d, struct devcache *c,
			       const struct lft_tables *t,
			       const struct program_params *pp,
			       struct lft_order_stats *order)
{
	plan_set_tables(p, t);
	for (uint32_t ni = 0; ni < d->f.n_nodes; ni++)
		if (d->f.nodes[ni].type == FAB_SWITCH &&
		    (plan_switch(p, wave, d, c, t, ni, pp) < 0 ||
		     (d->f.xlid_mode && t->xrow && plan_xswitch(p, wave, d, c, t, ni) < 0)))
			return -1;
	if (plan_lft_ordered(p, wave, &d->f, c, t, pp->lft_unordered, order) < 0)
		return -1;
	char how[256];
	lft_order_describe(order, how, sizeof(how));
	log_info("LFT writes: %s", how);
	for (uint32_t pi = 0; d->f.xlid_mode && pi < d->f.n_ports; pi++)
		if (fabric_is_endport(&d->f, pi) && fabric_is_vlid(d->f.ports[pi].lid) &&
		    plan_xlid_port(p, wave, &d->f, pi, d->f.ports[pi].lid) < 0)
			return -1;
	if (pp->mc && plan_mcast(p, wave, &d->f, c, t, pp->mc, pp->vms, NULL, 1, NULL) < 0)
		return -1;
	return plan_sweep_qos(p, wave, d, t, pp);
}

int plan_sweep_activation(struct plan *p, int wave, const struct discovery *d,
			  const struct program_params *pp)
{
	const struct fabric *f = &d->f;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *fp = &f->ports[pi];
		if (!(fp->flags & FPORT_PRESENT) || fp->state != PORT_ARMED ||
		    !fabric_port_linked(f, pi))
			continue;
		uint8_t data[SMP_DATA_SIZE];
		encode_pi(d, pp, pi, PORT_ACTIVE, 0, data);
		uint32_t di = plan_data(p, wave, data);
		if (di == UINT32_MAX ||
		    !plan_add(p, wave, PLAN_PORTINFO, fp->node, fp->num, fp->num, di))
			return -1;
	}
	return 0;
}

/* ---- the heavy sweep's run: program_start and program_set_tables ---- */

struct sweep_run {
	struct plan plan;
	struct discovery *d;
	struct devcache *c;
	struct program_params pp;
	program_done_fn done;
	void *arg;
	int unrouted;
	struct lft_order_stats order;	/* how the LFT writes were ordered */
};

static void sweep_free(void *arg)
{
	struct sweep_run *s = arg;
	plan_free(&s->plan);
	free(s);
}

/* Wave 0 is over: the ports that are ARMED now can go ACTIVE. */
static void sweep_wave_done(void *arg, struct program *pr, int wave)
{
	struct sweep_run *s = arg;
	const struct program_stats *st = program_get_stats(pr);
	if (wave != 0 || s->plan.sealed)
		return;
	log_info("configuration: %u LFT blocks, %u PortInfo, %u SwitchInfo written; activating",
		 st->lft_blocks, st->portinfo_sets, st->switchinfo_sets);
	plan_release_wave(&s->plan, 0);
	if (plan_sweep_activation(&s->plan, 1, s->d, &s->pp) < 0)
		log_err("out of memory planning the port activation");
	plan_seal(&s->plan);
}

static void sweep_replan(void *arg, struct program *pr, uint32_t pi, int wave)
{
	struct sweep_run *s = arg;
	if (plan_sweep_port(&s->plan, wave, s->d, s->c, &s->pp, pi) < 0)
		log_err("out of memory planning a port again");
}

static void sweep_done(void *arg, const struct program_stats *st)
{
	struct sweep_run *s = arg;
	struct program_stats out = *st;
	out.unrouted = s->unrouted;
	out.order = s->order;
	plan_free(&s->plan);	/* the executor is done with it */
	s->done(s->arg, &out);
}

struct program *program_start(struct txn_engine *txn,
			      struct discovery *d,
			      const struct lft_tables *t, struct devcache *c,
			      const struct program_params *p,
			      program_done_fn done, void *arg)
{
	struct sweep_run *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	plan_init(&s->plan);
	s->d = d;
	s->c = c;
	s->pp = *p;
	s->done = done;
	s->arg = arg;
	if (plan_sweep_ports(&s->plan, 0, d, c, p) < 0 ||
	    (t && plan_sweep_switches(&s->plan, 0, d, c, t, p, &s->order) < 0)) {
		sweep_free(s);
		return NULL;
	}
	if (t)
		plan_close_wave(&s->plan, 0);
	const struct program_hooks h = {
		.arg = s,
		.wave_done = sweep_wave_done,
		.replan_port = sweep_replan,
	};
	struct program *pr = program_run(txn, d, &s->plan, c, p->extra_rounds,
					 &h, sweep_done, s);
	if (!pr) {
		sweep_free(s);
		return NULL;
	}
	program_set_owner(pr, s, sweep_free);
	return pr;
}

void program_set_tables(struct program *pr, const struct lft_tables *t)
{
	struct sweep_run *s = program_owner(pr);
	if (program_get_stats(pr)->cancelled)
		return;
	if (!t) {
		s->unrouted = 1;
		plan_seal(&s->plan);
	} else {
		if (plan_sweep_switches(&s->plan, 0, s->d, s->c, t, &s->pp, &s->order) < 0)
			log_err("out of memory planning the switches' writes");
		plan_close_wave(&s->plan, 0);
	}
	program_kick(pr);
}
