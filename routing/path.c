/*
 * The host-visible facts of a routed path (path.h): follow the LFTs from
 * the source end port to the destination LID's port, one link at a time,
 * and keep the least MTU and the least rate seen on the way.
 *
 * A link's MTU is the least MTUCap of its two ends (what the SM writes as
 * NeighborMTU, plan_sweep.c); its rate the least of its two ends' rates
 * (both ends of a link train to the same width and speed).  The end ports
 * themselves count too, as OpenSM's PathRecord does
 * (osm_sa_path_record.c: the source and destination PortInfo, then every
 * port on the way).  Rates are compared by bandwidth, not by code: the IB
 * rate codes are not ordered (code 5 is 5 Gb/s, code 4 is 30 Gb/s).
 */
#include "routing/path.h"

#include <string.h>

#include "routing/graph.h"

/* Gb/s x 10 of each IB rate code (PathRecord:Rate, IBA Table 205); 0 = unknown. */
static const uint16_t rate_bw[] = {
	[2] = 25, [3] = 100, [4] = 300, [5] = 50, [6] = 200, [7] = 400,
	[8] = 600, [9] = 800, [10] = 1200, [11] = 140, [12] = 560,
	[13] = 1120, [14] = 1680, [15] = 250, [16] = 1000, [17] = 2000,
	[18] = 3000, [19] = 280, [20] = 500, [21] = 4000, [22] = 6000,
	[23] = 8000, [24] = 12000,
};

unsigned path_rate_bw(uint8_t code)
{
	return code < sizeof(rate_bw) / sizeof(rate_bw[0]) ? rate_bw[code] : 0;
}

/*
 * Rate codes by width (1x, 4x, 8x, 12x, 2x: LinkWidthActive bits 0-4) for
 * each speed: SDR, DDR, QDR (LinkSpeedActive 1, 2, 4) and FDR, EDR, HDR,
 * NDR (LinkSpeedExtActive 1, 2, 4, 8, the high nibble of the model's
 * speed_active, sm/base/topo.h).
 */
static const uint8_t rate_tab[7][5] = {
	{ 2, 3, 6, 4, 5 },	/* SDR */
	{ 5, 6, 7, 8, 3 },	/* DDR */
	{ 3, 7, 9, 10, 6 },	/* QDR */
	{ 11, 12, 13, 14, 19 },	/* FDR */
	{ 15, 16, 17, 18, 20 },	/* EDR */
	{ 20, 17, 21, 22, 16 },	/* HDR */
	{ 16, 21, 23, 24, 17 },	/* NDR */
};

uint8_t path_link_rate(uint8_t width_active, uint8_t speed_active)
{
	int w, s = -1;
	switch (width_active) {
	case 0x01: w = 0; break;
	case 0x02: w = 1; break;
	case 0x04: w = 2; break;
	case 0x08: w = 3; break;
	case 0x10: w = 4; break;
	default: w = 0; break;	/* as OpenSM: an unknown width is 1x */
	}
	switch (speed_active >> 4) {
	case 1: s = 3; break;
	case 2: s = 4; break;
	case 4: s = 5; break;
	case 8: s = 6; break;
	}
	if (s < 0) {
		switch (speed_active & 0x0f) {
		case 2: s = 1; break;
		case 4: s = 2; break;
		default: s = 0; break;	/* SDR, and OpenSM's default */
		}
	}
	return rate_tab[s][w];
}

struct walk {
	uint8_t mtu, rate;
	unsigned hops;
};

static void take_port(struct walk *w, const struct fab_port *p)
{
	uint8_t r = path_link_rate(p->width_active, p->speed_active);
	if (p->mtu_cap && p->mtu_cap < w->mtu)
		w->mtu = p->mtu_cap;
	if (p->width_active && (!w->rate || path_rate_bw(r) < path_rate_bw(w->rate)))
		w->rate = r;
}

/* A link the path may cross: both ends present and LinkUp, neither Down. */
static int usable(const struct fabric *f, uint32_t pi)
{
	if (!graph_link_up(f, pi))
		return 0;
	return f->ports[pi].state != PORT_DOWN &&
	       f->ports[f->ports[pi].remote].state != PORT_DOWN;
}

/* Crosses the link of port pi: both ends count. */
static void cross(const struct fabric *f, struct walk *w, uint32_t pi)
{
	take_port(w, &f->ports[pi]);
	take_port(w, &f->ports[f->ports[pi].remote]);
	w->hops++;
}

/* Follows t from end port src to dlid's end port dst; 0 or -1. */
static int walk(const struct fabric *f, const struct lft_tables *t,
		uint32_t src, uint32_t dlid, uint32_t dst, struct walk *w)
{
	memset(w, 0, sizeof(*w));
	w->mtu = 0xff;
	take_port(w, &f->ports[src]);
	take_port(w, &f->ports[dst]);
	if (src == dst)
		return 0;
	uint32_t node = f->ports[src].node;
	if (f->nodes[node].type != FAB_SWITCH) {
		if (!usable(f, src))
			return -1;
		cross(f, w, src);
		if (f->ports[src].remote == dst)
			return 0;
		node = f->ports[f->ports[src].remote].node;
		if (f->nodes[node].type != FAB_SWITCH)
			return -1;
	}
	for (uint32_t steps = 0; steps <= t->n_sw; steps++) {
		uint32_t row = t->row_of_node[node];
		if (row == FAB_NONE || row >= t->n_sw)
			return -1;
		uint8_t out = lft_row(t, row)[dlid];
		if (out == 0)
			return fabric_port(f, node, 0) == dst ? 0 : -1;
		if (out == LFT_DROP || out > f->nodes[node].nports)
			return -1;
		uint32_t pi = fabric_port(f, node, out);
		if (!usable(f, pi))
			return -1;
		cross(f, w, pi);
		uint32_t next = f->ports[pi].remote;
		if (next == dst)
			return 0;
		node = f->ports[next].node;
		if (f->nodes[node].type != FAB_SWITCH)
			return -1;
	}
	return -1;	/* a loop */
}

int path_resolve(const struct fabric *f, const struct lft_tables *t,
		 uint32_t src_port, uint32_t dlid, struct path_facts *out)
{
	if (!f->lid_port || src_port >= f->n_ports || dlid == 0 ||
	    dlid > f->max_lid || dlid > t->max_lid ||
	    !fabric_is_endport(f, src_port))
		return -1;
	uint32_t dst = f->lid_port[dlid];
	uint32_t slid = f->ports[src_port].lid;
	if (dst == FAB_NONE || slid == 0 || slid > t->max_lid)
		return -1;
	struct walk w, back;
	if (walk(f, t, src_port, dlid, dst, &w) < 0)
		return -1;
	memset(out, 0, sizeof(*out));
	out->slid = slid;
	out->dlid = dlid;
	out->dst_port = dst;
	out->sl = lft_sl(t, slid, dlid);
	out->mtu = w.mtu == 0xff ? 0 : w.mtu;
	out->rate = w.rate;
	out->hops = (uint8_t)(w.hops > 255 ? 255 : w.hops);
	out->reversible = walk(f, t, dst, slid, src_port, &back) == 0;
	return 0;
}

/* The PacketLifeTime of sm/sa/sa_path.c, shared with the distinguisher. */
uint8_t path_packet_life(const struct fabric *f, const struct path_facts *pf,
			 uint32_t src_port, uint8_t ltv)
{
	if (pf->dst_port == src_port)
		return 0;
	/* links crossed: hops; switches crossed: one less, unless an end is a switch */
	unsigned sw = pf->hops ? pf->hops - 1u : 0;
	if (f->nodes[f->ports[src_port].node].type == FAB_SWITCH)
		sw++;
	if (f->nodes[f->ports[pf->dst_port].node].type == FAB_SWITCH)
		sw++;
	unsigned l = 0;
	while ((1u << l) < sw && l < 31)
		l++;
	unsigned v = ltv + l;
	return (uint8_t)(v > 63 ? 63 : v);
}

uint8_t path_switch_ltv(const struct fabric *f, uint8_t dflt)
{
	uint8_t ltv = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (f->nodes[n].type == FAB_SWITCH && f->nodes[n].lifetime > ltv)
			ltv = f->nodes[n].lifetime;
	return ltv ? ltv : dflt;
}
