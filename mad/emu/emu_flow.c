/*
 * Traffic in the emulated fabric (mad/emu/emu.h "traffic"): flows routed
 * hop by hop through the devices' own LFTs and SLtoVL tables, their rates
 * from the flow-level model (mad/emu/flowmodel.h), and the PMA counters
 * (mad/emu/emu_pma.c answers from them) moved by those rates as emulated
 * time passes.
 */
#include <event2/event.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu_int.h"
#include "mad/emu/flowmodel.h"
#include "sm/base/clock.h"

#define FLOW_MAX_LINKS (EMU_MAX_LID_HOPS + 2)	/* source, switches, sink */
#define VL_DROP 15	/* a data packet mapped to VL 15 is dropped */
#define BITS_PER_TICK 8	/* a tick: one octet on one lane */

struct emu_flow {
	uint32_t src;		/* the CA port it leaves */
	uint32_t dlid;
	double demand;
	double rate;		/* at the last advance; -1: not routed */
	uint8_t sl;
	uint8_t running;
};

/* Counts of a port not yet whole: carried to the next advance. */
enum { ACC_XDATA, ACC_XPKTS, ACC_RDATA, ACC_RPKTS, ACC_WAIT, ACC_N };

struct emu_traffic {
	struct emu *e;
	struct emu_flow *v;
	uint32_t n, cap;
	double *sink;		/* per port: a CA port's sink rate, 0: its link's */
	double (*acc)[ACC_N];	/* per port */
	struct event *tick;	/* emu_traffic_run's timer, NULL: stopped */
	uint64_t tick_ms, last_us;
	double run_s;		/* seconds its ticks advanced */
};

struct emu_traffic *emu_traffic_new(struct emu *e)
{
	struct emu_traffic *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->e = e;
	t->sink = calloc(e->n_ports, sizeof(double));
	t->acc = calloc(e->n_ports, sizeof(*t->acc));
	if (!t->sink || !t->acc) {
		emu_traffic_free(t);
		return NULL;
	}
	return t;
}

void emu_traffic_free(struct emu_traffic *t)
{
	if (!t)
		return;
	if (t->tick)
		event_free(t->tick);
	free(t->v);
	free(t->sink);
	free(t->acc);
	free(t);
}

/* Gb/s of data a lane carries at a port's active speed (after coding). */
static double lane_gbps(const struct emu_port *p)
{
	switch (p->espeed_act) {
	case 1: return 14.0625 * 64 / 66;	/* FDR */
	case 2: return 25.78125 * 64 / 66;	/* EDR */
	case 4: return 50;			/* HDR */
	case 8: return 100;			/* NDR */
	}
	switch (p->speed_act) {
	case 2: return 4;	/* DDR */
	case 4: return 8;	/* QDR */
	default: return 2;	/* SDR */
	}
}

static unsigned lanes(const struct emu_port *p)
{
	switch (p->width_act) {
	case 0x02: return 4;
	case 0x04: return 8;
	case 0x08: return 12;
	case 0x10: return 2;
	default: return 1;
	}
}

static double port_bytes_per_s(const struct emu_port *p)
{
	return lanes(p) * lane_gbps(p) * 1e9 / 8;
}

double emu_port_capacity(const struct emu *e, uint64_t guid, int port)
{
	uint32_t pi = emu_find_port(e, guid, port);
	return pi == EMU_NONE ? -1 : port_bytes_per_s(&e->ports[pi]);
}

/* A link data may cross: cabled, LinkUp, both ends Active. */
static int data_link(const struct emu *e, uint32_t pi)
{
	return link_up(e, pi) && e->ports[pi].state == PORT_ACTIVE &&
	       e->ports[e->ports[pi].remote].state == PORT_ACTIVE;
}

/* The VL sl takes leaving port out after entering by in (a CA: in = out);
 * -1 when the packet is dropped there. */
static int out_vl(const struct emu *e, uint32_t out_pi, int in, uint8_t sl)
{
	const struct emu_port *op = &e->ports[out_pi];
	uint8_t vl[16];
	if (emu_sl2vl(e, port_node(e, out_pi)->guid, in, op->num, vl) < 0)
		return -1;
	if (vl[sl] == VL_DROP || vl[sl] >= op->oper_vls)
		return -1;
	return vl[sl];
}

/* A switch's LFT entry for dlid: a port number, or 0 for none. */
static uint8_t lft_port(const struct emu *e, const struct emu_node *n,
			uint32_t dlid)
{
	const struct emu_switch *s = node_sw(e, n);
	if (dlid > s->lft_top || dlid >= s->lft_len)
		return 0;
	uint8_t p = s->lft[dlid];
	return p == 0xff || p > n->nports ? 0 : p;
}

/*
 * Flow f's path: the links it crosses (port indices; the sink of CA port
 * q is link n_ports + q) and the VL on each.  Returns the number of links,
 * or 0 when it cannot go.
 */
static unsigned route(const struct emu *e, const struct emu_flow *f,
		      uint32_t *link, uint8_t *vl)
{
	uint32_t pi = f->src;
	int v = out_vl(e, pi, e->ports[pi].num, f->sl);
	if (!data_link(e, pi) || v < 0 || emu_lid_match(e, pi, f->dlid))
		return 0;	/* a flow to itself never touches the wire */
	unsigned n = 0;
	link[n] = pi;
	vl[n++] = (uint8_t)v;
	for (;;) {
		uint32_t rp = e->ports[pi].remote;
		const struct emu_node *nd = port_node(e, rp);
		if (!is_switch(nd)) {
			if (!emu_lid_match(e, rp, f->dlid))
				return 0;
			link[n] = e->n_ports + rp;	/* its sink */
			vl[n] = vl[n - 1];
			return n + 1;
		}
		if (n + 2 > FLOW_MAX_LINKS)
			return 0;	/* a loop in the LFTs */
		uint8_t out = lft_port(e, nd, f->dlid);
		if (!out)
			return 0;
		pi = nd->first_port + out;
		v = out_vl(e, pi, e->ports[rp].num, f->sl);
		if (!data_link(e, pi) || v < 0)
			return 0;
		link[n] = pi;
		vl[n++] = (uint8_t)v;
	}
}

int emu_flow_add(struct emu_traffic *fl, uint64_t src_port_guid, uint32_t dlid,
		 double demand, uint8_t sl)
{
	const struct emu *e = fl->e;
	uint32_t pi = emu_find_port(e, src_port_guid, 0);
	if (pi == EMU_NONE || is_switch(port_node(e, pi)) || sl > 15 ||
	    !(demand >= 0))
		return -1;
	if (fl->n == INT32_MAX)
		return -1;
	if (fl->n == fl->cap) {
		uint32_t cap = fl->cap ? fl->cap * 2 : 16;
		struct emu_flow *v = realloc(fl->v, cap * sizeof(*v));
		if (!v)
			return -1;
		fl->v = v;
		fl->cap = cap;
	}
	fl->v[fl->n] = (struct emu_flow){ .src = pi, .dlid = dlid,
		.demand = demand, .rate = -1, .sl = sl, .running = 1 };
	return (int)fl->n++;
}

int emu_flow_stop(struct emu_traffic *t, int id)
{
	if (id < 0 || (uint32_t)id >= t->n)
		return -1;
	t->v[id].running = 0;
	t->v[id].rate = -1;
	return 0;
}

int emu_flow_move(struct emu_traffic *t, uint64_t src_port_guid, uint32_t dlid,
		  uint8_t sl)
{
	uint32_t pi = emu_find_port(t->e, src_port_guid, 0);
	if (sl > 15)
		return -1;
	int moved = 0;
	for (uint32_t i = 0; i < t->n; i++) {
		struct emu_flow *f = &t->v[i];
		if (f->running && f->src == pi && f->dlid == dlid) {
			f->sl = sl;
			moved++;
		}
	}
	return moved;
}

int emu_flow_set_sink(struct emu_traffic *t, uint64_t ca_port_guid,
		      double bytes_per_s)
{
	uint32_t pi = emu_find_port(t->e, ca_port_guid, 0);
	if (pi == EMU_NONE || is_switch(port_node(t->e, pi)) || !(bytes_per_s >= 0))
		return -1;
	t->sink[pi] = bytes_per_s;
	return 0;
}

double emu_flow_rate(const struct emu_traffic *t, int id)
{
	if (id < 0 || (uint32_t)id >= t->n)
		return -1;
	return t->v[id].rate;
}

int emu_port_counter(const struct emu *e, uint64_t guid, int port,
		     enum pma_counter c, uint64_t *value)
{
	uint32_t pi = emu_find_port(e, guid, port);
	if (pi == EMU_NONE || c < 0 || c >= PMC_N)
		return -1;
	*value = e->ports[pi].pc[c];
	return 0;
}

/* Adds x to accumulator a of port pi; the whole part goes to counter c,
 * which stops at max. */
static void count(struct emu_traffic *t, uint32_t pi, int a,
		  enum pma_counter c, double x, uint64_t max)
{
	double *acc = &t->acc[pi][a];
	*acc += x;
	double whole = floor(*acc);
	*acc -= whole;
	uint64_t *pc = &t->e->ports[pi].pc[c];
	*pc = whole >= (double)(max - *pc) ? max : *pc + (uint64_t)whole;
}

/* The links' capacities: ports by their width x speed, sinks by the host's. */
static void capacities(const struct emu_traffic *t, double *cap)
{
	const struct emu *e = t->e;
	for (uint32_t pi = 0; pi < e->n_ports; pi++) {
		cap[pi] = port_bytes_per_s(&e->ports[pi]);
		double s = t->sink[pi];
		cap[e->n_ports + pi] = s > 0 && s < cap[pi] ? s : cap[pi];
	}
}

/* Routes every running flow: fm[] over one links/vls array of
 * n_flows x FLOW_MAX_LINKS. */
static void route_all(const struct emu_traffic *t, struct fm_flow *fm,
		      uint32_t *links, uint8_t *vls)
{
	for (uint32_t i = 0; i < t->n; i++) {
		const struct emu_flow *f = &t->v[i];
		uint32_t *l = links + (size_t)i * FLOW_MAX_LINKS;
		uint8_t *v = vls + (size_t)i * FLOW_MAX_LINKS;
		unsigned n = f->running ? route(t->e, f, l, v) : 0;
		fm[i] = (struct fm_flow){ .demand = n ? f->demand : 0, .n = n,
					  .link = l, .vl = v };
	}
}

/* Moves the counters of the ports by dt seconds at the solved rates. */
static void count_all(struct emu_traffic *t, const struct fm_flow *fm,
		      const double *cap, const double *sent,
		      const uint8_t *waits, double dt)
{
	const struct emu *e = t->e;
	for (uint32_t i = 0; i < t->n; i++) {
		double bytes = t->v[i].rate > 0 ? t->v[i].rate * dt : 0;
		for (unsigned k = 0; bytes > 0 && k + 1 < fm[i].n; k++) {
			uint32_t pi = fm[i].link[k], rp = e->ports[pi].remote;
			count(t, pi, ACC_XDATA, PMC_XMIT_DATA, bytes / 4, UINT64_MAX);
			count(t, pi, ACC_XPKTS, PMC_XMIT_PKTS, bytes / EMU_FLOW_PKT,
			      UINT64_MAX);
			count(t, rp, ACC_RDATA, PMC_RCV_DATA, bytes / 4, UINT64_MAX);
			count(t, rp, ACC_RPKTS, PMC_RCV_PKTS, bytes / EMU_FLOW_PKT,
			      UINT64_MAX);
		}
	}
	for (uint32_t pi = 0; pi < e->n_ports; pi++) {
		double share = fm_wait_share(sent[pi], cap[pi], waits[pi]);
		if (share <= 0)
			continue;
		const struct emu_port *p = &e->ports[pi];
		double ticks = share * dt * lane_gbps(p) * 1e9 / BITS_PER_TICK;
		count(t, pi, ACC_WAIT, PMC_XMIT_WAIT, ticks, UINT32_MAX);
	}
}

int emu_flow_advance(struct emu_traffic *fl, double seconds)
{
	if (!(seconds >= 0))
		return -1;
	uint32_t n_links = 2 * fl->e->n_ports, nf = fl->n ? fl->n : 1;
	double *cap = calloc(n_links, sizeof(double));
	double *sent = calloc(n_links, sizeof(double));
	uint8_t *waits = calloc(n_links, 1);
	struct fm_flow *fm = calloc(nf, sizeof(*fm));
	struct fm_rate *out = calloc(nf, sizeof(*out));
	uint32_t *links = calloc((size_t)nf * FLOW_MAX_LINKS, sizeof(uint32_t));
	uint8_t *vls = calloc((size_t)nf * FLOW_MAX_LINKS, 1);
	char err[128];
	int rc = -1;
	if (!cap || !sent || !waits || !fm || !out || !links || !vls)
		goto done;
	capacities(fl, cap);
	route_all(fl, fm, links, vls);
	if (fm_solve(n_links, cap, fl->n, fm, out, sent, waits, err,
		     sizeof(err)) < 0)
		goto done;
	for (uint32_t i = 0; i < fl->n; i++)
		fl->v[i].rate = fm[i].n ? out[i].rate : -1;
	count_all(fl, fm, cap, sent, waits, seconds);
	rc = 0;
done:
	free(cap);
	free(sent);
	free(waits);
	free(fm);
	free(out);
	free(links);
	free(vls);
	return rc;
}

/* The loop's tick: the time since the last one passes. */
static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct emu_traffic *t = arg;
	uint64_t now = clock_us();
	double dt = (double)(now - t->last_us) / 1e6;
	t->last_us = now;
	if (emu_flow_advance(t, dt) == 0)
		t->run_s += dt;
	timer_in_ms(t->tick, t->tick_ms);
}

int emu_traffic_run(struct emu_traffic *t, struct event_base *base,
		    unsigned period_ms)
{
	if (t->tick) {
		event_free(t->tick);
		t->tick = NULL;
	}
	if (!period_ms)
		return 0;
	if (!(t->tick = evtimer_new(base, on_tick, t)))
		return -1;
	t->tick_ms = period_ms;
	t->last_us = clock_us();
	timer_in_ms(t->tick, period_ms);
	return 0;
}

double emu_traffic_run_s(const struct emu_traffic *t)
{
	return t->run_s;
}
