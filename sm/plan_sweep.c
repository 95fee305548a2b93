#include "plan_sweep.h"

#include <infiniband/mad.h>
#include <stdlib.h>
#include <string.h>

#include "../mad/smp.h"
#include "../mad/xlid.h"
#include "../routing/xlft.h"
#include "log.h"
#include "nodemap.h"
#include "program.h"

static uint8_t min3(unsigned a, unsigned b, unsigned c)
{
	unsigned m = a < b ? a : b;
	return (uint8_t)(m < c ? m : c);
}

/* What the SM wants in a port's PortInfo, from what the port said it is. */
static void encode_pi(const struct discovery *d, const struct program_params *pp,
		      uint32_t pi, int state, int rereg, uint8_t *out)
{
	const struct fabric *f = &d->f;
	const struct fab_port *p = &f->ports[pi];
	const struct fab_node *n = &f->nodes[p->node];
	memcpy(out, d->pi_raw[pi], 64);
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
	}
	if (plan_port_linked(f, pi)) {
		const struct fab_port *r = &f->ports[p->remote];
		int leaf = n->type == FAB_SWITCH &&
			   f->nodes[r->node].type != FAB_SWITCH;
		smp_pi_set(out, IB_PORT_NEIGHBOR_MTU_F,
			   p->mtu_cap < r->mtu_cap ? p->mtu_cap : r->mtu_cap);
		smp_pi_set(out, IB_PORT_OPER_VLS_F,
			   min3(p->vl_cap, r->vl_cap, (unsigned)pp->max_op_vls));
		smp_pi_set(out, IB_PORT_VL_STALL_COUNT_F, (uint32_t)pp->vl_stall_count);
		smp_pi_set(out, IB_PORT_HOQ_LIFE_F,
			   (uint32_t)(leaf ? pp->leaf_hoq_life : pp->hoq_life));
		if (pp->vl_high_limit >= 0)	/* qos.vlarb_high_limit */
			smp_pi_set(out, IB_PORT_VL_HIGH_LIMIT_F,
				   (uint32_t)pp->vl_high_limit);
	}
	smp_pi_set(out, IB_PORT_STATE_F, (uint32_t)state);
}

/* P_Key block 0 with the default partition only: the one ibsmd configures. */
static uint32_t pkey_default(struct plan *p, int wave)
{
	uint8_t blk[64] = { 0xff, 0xff };
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
 * 0xFFFF in entry 0 and nothing else.
 */
static int pkey_default_since_reset(const struct fab_port *p)
{
	return p->hw_lid == 0 && !(p->capmask & CAP_IS_PKEY_NVRAM);
}

/*
 * Is either end of pi's link an end port that was left without a LID?
 * Such a link stays in INIT, and that is no failure: a host the LID space
 * had no room for, or an idle VF under the dynamic LID scheme
 * (FPORT_NOLID, sm/vm.c), whose vSwitch port stays in INIT with it.
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
	int ep = fabric_is_endport(f, pi), ln = plan_port_linked(f, pi);
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
	uint8_t data[64];
	encode_pi(d, pp, pi, state, rereg, data);
	uint32_t di = plan_data(p, wave, data);
	if (di == UINT32_MAX ||
	    !plan_add(p, wave, PLAN_PORTINFO, fp->node, fp->num, fp->num, di))
		return -1;
	if (!ep)
		return 0;
	struct plan_op *o = plan_add(p, wave, PLAN_PKEY, fp->node, fp->num,
				     pkey_mod(f, pi), pkey);
	if (!o)
		return -1;
	if (pkey_default_since_reset(fp))	/* nothing to write */
		devcache_record(c, f, o, o->mod, p->waves[wave].data[pkey]);
	return 0;
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
		       struct devcache *c, const struct lft_tables *t, uint32_t ni)
{
	const struct fab_node *n = &d->f.nodes[ni];
	uint32_t top = t->max_lid;
	uint8_t si[64];
	memcpy(si, d->si_raw[ni], 64);	/* PortStateChange as read: 1 clears it */
	mad_set_field(si, 0, IB_SW_LINEAR_FDB_TOP_F, top);
	uint32_t di = plan_data(p, wave, si);
	if (di == UINT32_MAX || !plan_add(p, wave, PLAN_SWITCHINFO, ni, 0, 0, di))
		return -1;
	uint32_t row = t->row_of_node[ni];
	if (row == FAB_NONE)
		return 0;
	uint32_t blocks = top / 64 + 1;
	if (n->lft_cap && blocks > (n->lft_cap + 63) / 64) {
		log_err("switch 0x%016llx \"%s\": LinearFDBCap %u is below the highest LID %u",
			(unsigned long long)n->guid, fabric_node_name(&d->f, ni), n->lft_cap, top);
		blocks = (n->lft_cap + 63) / 64;
	}
	for (uint32_t b = 0; b < blocks; b += UINT16_MAX) {
		uint32_t k = blocks - b < UINT16_MAX ? blocks - b : UINT16_MAX;
		if (!plan_add_lft_row(p, wave, ni, row, b, k))
			return -1;
	}
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
	uint32_t top = t->x_blocks * 64;
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
	uint8_t buf[64];
	xlid_cap_encode(&x, buf);
	return plan_vendor(p, wave, ni, 0, XLID_ATTR_CAP, 0, buf);
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
	uint32_t cap_blocks = n->xlid_cap / 64 + (n->xlid_cap % 64 != 0);
	uint32_t first = t->xfirst[row], end = first + t->xcount[row];
	if (end > cap_blocks)
		end = cap_blocks;
	for (uint32_t b = first; b < end; b++)
		if (plan_xlid_block(p, wave, t, row, b) < 0)
			return -1;
	if (!fabric_is_vswitch(f, ni) || !c)
		return 0;
	uint8_t none[64];
	memset(none, LFT_DROP, sizeof(none));
	for (uint32_t b = 0; b < first && b < cap_blocks; b++) {
		const uint8_t *held = devcache_attr(c, f, ni, 0, XLID_ATTR_LFT, b);
		if (held && memcmp(held, none, 64) &&
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
	uint8_t buf[64];
	xlid_cap_encode(&x, buf);
	return plan_vendor(p, wave, fp->node, fp->num, XLID_ATTR_CAP, fp->num, buf);
}

/* ---- QoS: SL-to-VL and VL arbitration tables (issue 14) ---- */

/* Data VLs an OperationalVLs encoding stands for (1: VL0 ... 5: VL0-14). */
static unsigned opvls_data_vls(unsigned enc)
{
	if (enc == 0)
		return 0;
	return enc >= 5 ? 15 : 1u << (enc - 1);
}

unsigned qos_link_vls(const struct fabric *f, int max_op_vls, uint32_t *narrow)
{
	unsigned best = 0;
	if (narrow)
		*narrow = FAB_NONE;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (!plan_port_linked(f, pi) || p->remote < pi)
			continue;	/* each link once, from its lower port */
		const struct fab_port *r = &f->ports[p->remote];
		if (!p->vl_cap || !r->vl_cap)
			continue;	/* not read: no bound known */
		unsigned n = opvls_data_vls(min3(p->vl_cap, r->vl_cap,
						 (unsigned)max_op_vls));
		if (best == 0 || n < best) {
			best = n;
			if (narrow)
				*narrow = pi;
		}
	}
	return best;
}

/*
 * Payload pool entries shared by equal tables: the SL2VL tables of a
 * vFtree fabric are one table, planned hundreds of thousands of times.
 */
struct qos_pool {
	uint8_t last[64];
	uint32_t di;
};

static uint32_t qos_data(struct plan *p, int wave, struct qos_pool *qp,
			 const uint8_t *payload)
{
	if (qp->di != UINT32_MAX && !memcmp(qp->last, payload, 64))
		return qp->di;
	memcpy(qp->last, payload, 64);
	qp->di = plan_data(p, wave, payload);
	return qp->di;
}

/* SLtoVLMappingTable: SL 2i in the high nibble of byte i, SL 2i+1 low. */
static void encode_sl2vl(const uint8_t *vl, uint8_t *out)
{
	memset(out, 0, 64);
	for (unsigned i = 0; i < QOS_SLS / 2; i++)
		out[i] = (uint8_t)((vl[2 * i] & 0xf) << 4 | (vl[2 * i + 1] & 0xf));
}

static int plan_sl2vl_op(struct plan *p, int wave, struct qos_pool *qp,
			 uint32_t node, uint8_t port, uint32_t mod,
			 const uint8_t *vl)
{
	uint8_t buf[64];
	encode_sl2vl(vl, buf);
	uint32_t di = qos_data(p, wave, qp, buf);
	if (di == UINT32_MAX || !plan_add(p, wave, PLAN_SL2VL, node, port, mod, di))
		return -1;
	return 0;
}

/* The data VLs a port sends on: 1 + the highest VL its tables map to. */
static unsigned port_vls(const struct fabric *f, const struct lft_tables *t,
			 uint32_t ni, unsigned out)
{
	const struct fab_node *n = &f->nodes[ni];
	unsigned hi = 0;
	for (unsigned in = 0; in <= n->nports; in++) {
		if (n->type != FAB_SWITCH && in != out)
			continue;
		const uint8_t *vl = lft_sl2vl(t, ni, in, out);
		for (unsigned s = 0; vl && s < QOS_SLS; s++)
			if (vl[s] != 15 && vl[s] > hi)
				hi = vl[s];
	}
	return hi + 1;
}

/* What a sweep's VLArb tables left out of the policy (qos.vlarb_*). */
struct vlarb_cut {
	uint32_t vl_ports, cap_ports;	/* ports that lost entries: VL, cap */
	unsigned vl_max;		/* the fewest data VLs such a port sends on */
};

/*
 * One VLArbitrationTable block of an output port of nvl data VLs and
 * room for cap entries: the policy's entries (pol given) for VLs below
 * nvl, as far as cap goes (what is left out counts in cut); without a
 * policy, def_weight on each of the nvl VLs (0: an empty table).
 */
static void vlarb_block(const struct cfg_vlarb *pol, unsigned nvl,
			unsigned cap, uint8_t def_weight, struct vlarb_cut *cut,
			uint8_t *buf)
{
	unsigned n = 0, lost_vl = 0, lost_cap = 0;
	memset(buf, 0, 64);
	if (cap > 32)
		cap = 32;	/* one block */
	if (!pol->given) {
		for (unsigned v = 0; def_weight && v < nvl && v < cap; v++, n++) {
			buf[2 * n] = (uint8_t)v;
			buf[2 * n + 1] = def_weight;
		}
		return;
	}
	for (int i = 0; i < pol->n; i++) {
		if (pol->vl[i] >= nvl) {
			lost_vl++;
		} else if (n >= cap) {
			lost_cap++;
		} else {
			buf[2 * n] = pol->vl[i];
			buf[2 * n + 1] = pol->weight[i];
			n++;
		}
	}
	if (lost_vl) {
		if (!cut->vl_ports++ || nvl < cut->vl_max)
			cut->vl_max = nvl;
	}
	cut->cap_ports += lost_cap != 0;
}

/*
 * VLArbitrationTable of an output port: blocks 1 (low priority, entries
 * 0-31) and 3 (high, entries 0-31), as far as the port's
 * VLArbLowCap/HighCap go.  Default: every data VL in use one low entry
 * of equal weight (64 units of 64 bytes), no VL high priority.
 */
static int plan_vlarb(struct plan *p, int wave, struct qos_pool *low,
		      struct qos_pool *high, const struct discovery *d,
		      const struct lft_tables *t, const struct program_params *pp,
		      struct vlarb_cut *cut, uint32_t pi)
{
	const struct fabric *f = &d->f;
	const struct fab_port *fp = &f->ports[pi];
	uint8_t *raw = (uint8_t *)d->pi_raw[pi];
	unsigned lcap = mad_get_field(raw, 0, IB_PORT_VL_ARBITRATION_LOW_CAP_F);
	unsigned hcap = mad_get_field(raw, 0, IB_PORT_VL_ARBITRATION_HIGH_CAP_F);
	unsigned nvl = port_vls(f, t, fp->node, fp->num);
	uint32_t mod = fp->num;
	uint8_t buf[64];
	if (lcap) {
		vlarb_block(&pp->vlarb_low, nvl, lcap, 64, &cut[0], buf);
		uint32_t di = qos_data(p, wave, low, buf);
		if (di == UINT32_MAX ||
		    !plan_add(p, wave, PLAN_VLARB, fp->node, fp->num, 1u << 16 | mod, di))
			return -1;
	}
	if (hcap) {
		vlarb_block(&pp->vlarb_high, nvl, hcap, 0, &cut[1], buf);
		uint32_t di = qos_data(p, wave, high, buf);
		if (di == UINT32_MAX ||
		    !plan_add(p, wave, PLAN_VLARB, fp->node, fp->num, 3u << 16 | mod, di))
			return -1;
	}
	return 0;
}

/* Tells once per sweep what the fabric left out of the policy's tables. */
static void vlarb_warn(const struct vlarb_cut *cut)
{
	static const char *const names[2] = { "qos.vlarb_low", "qos.vlarb_high" };
	for (int k = 0; k < 2; k++) {
		if (cut[k].vl_ports)
			log_warn("%s: entries for VLs the port does not send on left out on %u ports (down to %u data VLs: the links or qos.max_vls)",
				 names[k], cut[k].vl_ports, cut[k].vl_max);
		if (cut[k].cap_ports)
			log_warn("%s: entries past the port's VLArbitration%sCap left out on %u ports",
				 names[k], k ? "High" : "Low", cut[k].cap_ports);
	}
}

/* Is port k of switch n one whose SL2VL pairs are written (0, or linked)? */
static int sl2vl_port(const struct fabric *f, const struct fab_node *n,
		      unsigned k)
{
	return k == 0 || plan_port_linked(f, n->first_port + k);
}

/* Two pairs' tables: the same (both none, or equal)? */
static int same_table(const uint8_t *a, const uint8_t *b)
{
	return a == b || (a && b && !memcmp(a, b, QOS_SLS));
}

/*
 * The one table every input shares towards output out (every pair when
 * out is EVERY_OUT), or NULL when they differ or there is none.
 */
#define EVERY_OUT 0x100u
static const uint8_t *shared_table(const struct fabric *f,
				   const struct lft_tables *t, uint32_t ni,
				   unsigned out)
{
	const struct fab_node *n = &f->nodes[ni];
	const uint8_t *first = NULL;
	int any = 0;
	for (unsigned o = 0; o <= n->nports; o++) {
		if ((out != EVERY_OUT && o != out) || !sl2vl_port(f, n, o))
			continue;
		for (unsigned in = 0; in <= n->nports; in++) {
			if (in == o || !sl2vl_port(f, n, in))
				continue;
			const uint8_t *vl = lft_sl2vl(t, ni, in, o);
			if (!vl || (any && !same_table(first, vl)))
				return NULL;
			first = vl;
			any = 1;
		}
	}
	return first;
}

/*
 * A switch's SL2VL pairs: every (input, output) pair of port 0 and its
 * linked ports, input != output; modifier in << 8 | out.  Where the
 * switch advertises OptimizedSLtoVLMappingProgramming (SwitchInfo, IBA
 * 1.2.1 14.2.5.4 and 14.2.5.8), one Set with modifier bits 17 (every
 * input) and 16 (every output) when every pair has the same table, else
 * one Set with bit 17 per output whose inputs share a table, and pairs
 * one by one only for the outputs left.  Recorded under port 0 in the
 * device cache (every pair a Set wrote: devcache.c), which forgets them
 * with the switch's tables when it resets.  ibsim never advertises the
 * bit (and ignores bits 16/17).
 */
static int plan_switch_sl2vl(struct plan *p, int wave, struct qos_pool *qp,
			     const struct discovery *d,
			     const struct lft_tables *t, uint32_t ni)
{
	const struct fabric *f = &d->f;
	const struct fab_node *n = &f->nodes[ni];
	int opt = mad_get_field((void *)d->si_raw[ni], 0,
				IB_SW_OPT_SLTOVL_MAPPING_F) & 1;
	uint8_t done[256] = { 0 };	/* outputs written by a bit-17 Set */
	if (opt) {
		const uint8_t *all = shared_table(f, t, ni, EVERY_OUT);
		if (all)
			return plan_sl2vl_op(p, wave, qp, ni, 0, SL2VL_ALL_IN |
					     SL2VL_ALL_OUT, all);
		for (unsigned out = 0; out <= n->nports; out++) {
			const uint8_t *vl = sl2vl_port(f, n, out) ?
					    shared_table(f, t, ni, out) : NULL;
			if (!vl)
				continue;
			if (plan_sl2vl_op(p, wave, qp, ni, 0, SL2VL_ALL_IN | out,
					  vl) < 0)
				return -1;
			done[out] = 1;
		}
	}
	for (unsigned in = 0; in <= n->nports; in++) {
		if (!sl2vl_port(f, n, in))
			continue;
		for (unsigned out = 0; out <= n->nports; out++) {
			if (out == in || done[out] || !sl2vl_port(f, n, out))
				continue;
			const uint8_t *vl = lft_sl2vl(t, ni, in, out);
			if (vl && plan_sl2vl_op(p, wave, qp, ni, 0, in << 8 | out,
						vl) < 0)
				return -1;
		}
	}
	return 0;
}

int plan_sweep_qos(struct plan *p, int wave, const struct discovery *d,
		   const struct lft_tables *t, const struct program_params *pp)
{
	const struct fabric *f = &d->f;
	struct vlarb_cut cut[2];
	memset(cut, 0, sizeof(cut));
	struct qos_pool sl = { .di = UINT32_MAX }, low = { .di = UINT32_MAX },
			high = { .di = UINT32_MAX };
	if (!t || !t->sl2vl)
		return 0;	/* qos.mode none: the devices keep theirs */
	for (uint32_t ni = 0; ni < f->n_nodes; ni++) {
		const struct fab_node *n = &f->nodes[ni];
		if (n->type != FAB_SWITCH) {
			for (unsigned k = 1; k <= n->nports; k++) {
				uint32_t pi = n->first_port + k;
				const uint8_t *vl = lft_sl2vl(t, ni, k, k);
				if (!(f->ports[pi].flags & FPORT_PRESENT) ||
				    !plan_port_linked(f, pi) || !vl)
					continue;
				/* CA: the port the SMP arrives on, modifier 0 */
				if (plan_sl2vl_op(p, wave, &sl, ni, (uint8_t)k, 0, vl) < 0 ||
				    plan_vlarb(p, wave, &low, &high, d, t, pp, cut, pi) < 0)
					return -1;
			}
			continue;
		}
		if (plan_switch_sl2vl(p, wave, &sl, d, t, ni) < 0)
			return -1;
		for (unsigned out = 1; out <= n->nports; out++)
			if (plan_port_linked(f, n->first_port + out) &&
			    plan_vlarb(p, wave, &low, &high, d, t, pp, cut,
				       n->first_port + out) < 0)
				return -1;
	}
	vlarb_warn(cut);
	return 0;
}

int plan_sweep_switches(struct plan *p, int wave, const struct discovery *d,
			struct devcache *c, const struct lft_tables *t,
			const struct program_params *pp)
{
	plan_set_tables(p, t);
	for (uint32_t ni = 0; ni < d->f.n_nodes; ni++)
		if (d->f.nodes[ni].type == FAB_SWITCH &&
		    (plan_switch(p, wave, d, c, t, ni) < 0 ||
		     (d->f.xlid_mode && t->xrow && plan_xswitch(p, wave, d, c, t, ni) < 0)))
			return -1;
	for (uint32_t pi = 0; d->f.xlid_mode && pi < d->f.n_ports; pi++)
		if (fabric_is_endport(&d->f, pi) && fabric_is_vlid(d->f.ports[pi].lid) &&
		    plan_xlid_port(p, wave, &d->f, pi, d->f.ports[pi].lid) < 0)
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
		    !plan_port_linked(f, pi))
			continue;
		uint8_t data[64];
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
	    (t && plan_sweep_switches(&s->plan, 0, d, c, t, p) < 0)) {
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
		if (plan_sweep_switches(&s->plan, 0, s->d, s->c, t, &s->pp) < 0)
			log_err("out of memory planning the switches' writes");
		plan_close_wave(&s->plan, 0);
	}
	program_kick(pr);
}
