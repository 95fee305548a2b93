/*
 * The heavy sweep's QoS writes (qos.mode): SL-to-VL tables of every CA
 * port and switch (input, output) pair, optimized where a switch says it
 * can, and VL arbitration tables, only where the device cache differs.
 * Split from plan_sweep.c; declared in plan_sweep.h.
 */
#include "sm/write/plan_sweep.h"

#include <infiniband/mad.h>
#include <stdlib.h>
#include <string.h>

#include "sm/base/log.h"
#include "sm/write/program.h"

/*
 * Payload pool entries shared by equal tables: the SL2VL tables of a
 * vFtree fabric are one table, planned hundreds of thousands of times.
 */
struct qos_pool {
	uint8_t last[SMP_DATA_SIZE];
	uint32_t di;
};

static uint32_t qos_data(struct plan *p, int wave, struct qos_pool *qp,
			 const uint8_t *payload)
{
	if (qp->di != UINT32_MAX && !memcmp(qp->last, payload, SMP_DATA_SIZE))
		return qp->di;
	memcpy(qp->last, payload, SMP_DATA_SIZE);
	qp->di = plan_data(p, wave, payload);
	return qp->di;
}

/* SLtoVLMappingTable: SL 2i in the high nibble of byte i, SL 2i+1 low. */
static void encode_sl2vl(const uint8_t *vl, uint8_t *out)
{
	memset(out, 0, SMP_DATA_SIZE);
	for (unsigned i = 0; i < QOS_SLS / 2; i++)
		out[i] = (uint8_t)((vl[2 * i] & 0xf) << 4 | (vl[2 * i + 1] & 0xf));
}

static int plan_sl2vl_op(struct plan *p, int wave, struct qos_pool *qp,
			 uint32_t node, uint8_t port, uint32_t mod,
			 const uint8_t *vl)
{
	uint8_t buf[SMP_DATA_SIZE];
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
	memset(buf, 0, SMP_DATA_SIZE);
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
	uint8_t buf[SMP_DATA_SIZE];
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
	return k == 0 || fabric_port_linked(f, n->first_port + k);
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
				    !fabric_port_linked(f, pi) || !vl)
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
			if (fabric_port_linked(f, n->first_port + out) &&
			    plan_vlarb(p, wave, &low, &high, d, t, pp, cut,
				       n->first_port + out) < 0)
				return -1;
	}
	vlarb_warn(cut);
	return 0;
}

