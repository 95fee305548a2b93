/*
 * Multi-MAD GetTable answers of the SA (sm/sa*.c, mad/rmpp.c) checked
 * through the emulator's hosts (traps/host/saclient.c): ibsmd runs as the SM
 * in-process on an emulated fabric, an SA client on a host's CA port asks
 * for whole tables and each answer is checked against the emulated
 * devices (LIDs, port states, SM LID, NeighborMTU and the LFTs as
 * programmed, read with the emulator's inspection calls, never from the
 * SM's memory) and the topology the emulator was built from:
 *
 *   324-host 2-level tree (fabgen ftree2 --radix 36): every NodeRecord
 *     (one per node: GUID, LID, type, ports, description, each once) and
 *     every PortInfoRecord (each CA port, every port 0..36 of every
 *     switch: LID, state, widths, MTU, SM LID, each (LID, port) once);
 *   3456-host 3-level tree (fabgen ftree3 --radix 24), some core links
 *     1x and some hosts with MTUCap 2048: every PathRecord from one host
 *     (one per end port with a LID, each DLID once, GIDs of its owner,
 *     MTU and rate the least over the links the devices' LFTs take from
 *     the host to the DLID, Reversible when they lead back,
 *     PacketLifeTime from the switches crossed as sm/sa/sa_path.c derives it).
 *
 * Then the same transfers with one DATA segment lost on its way to the
 * host and with one of the host's ACKs lost (a filter on the host's port,
 * one chosen packet), and the 324-host tables under the emulator's seeded
 * loss on the host's link: the SA resent (the segment arrived again), the
 * transfer completed, and the records are byte for byte those of the
 * clean transfer.
 */
#include <check.h>
#include <infiniband/mad.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu.h"
#include "mad/rmpp.h"
#include "mad/sa.h"
#include "routing/path.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/sa/sa_server.h"
#include "sm/base/topo.h"
#include "traps/host/saclient.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "emu_testlib.h"

#define PREFIX 0xfe80000000000000ULL
#define MAX_SEGS 8192

/* ---- fabrics: fabgen's ftree2 (default shape) and ftree3, same GUIDs and names ---- */

#define SW_GUID(n) (0x0002c90100000000ULL + (uint64_t)(n))
#define CA_GUID(n) (0x0002c90200000000ULL + 4 * (uint64_t)(n))

struct gen {
	int nsw, nh, radix;
	char (*sw_name)[16];
	int (*peer_node)[40], (*peer_port)[40];	/* per switch port: host -(h+1) or switch s+1 */
	int *h_sw, *h_port;
};

static void gen_init(struct gen *g, int nsw, int nh, int radix)
{
	memset(g, 0, sizeof(*g));
	g->nsw = nsw;
	g->nh = nh;
	g->radix = radix;
	g->sw_name = calloc((size_t)nsw, sizeof(*g->sw_name));
	g->peer_node = calloc((size_t)nsw, sizeof(*g->peer_node));
	g->peer_port = calloc((size_t)nsw, sizeof(*g->peer_port));
	g->h_sw = calloc((size_t)nh, sizeof(int));
	g->h_port = calloc((size_t)nh, sizeof(int));
	ck_assert(g->sw_name && g->peer_node && g->peer_port && g->h_sw && g->h_port);
}

static void gen_host(struct gen *g, int sw, int port, int h)
{
	g->peer_node[sw][port] = -(h + 1);
	g->h_sw[h] = sw;
	g->h_port[h] = port;
}

static void gen_link(struct gen *g, int a, int pa, int b, int pb)
{
	g->peer_node[a][pa] = b + 1;
	g->peer_port[a][pa] = pb;
	g->peer_node[b][pb] = a + 1;
	g->peer_port[b][pb] = pa;
}

/* The net text, hosts first (the SM attaches to H-0), as fabgen writes it. */
static char *gen_text(struct gen *g)
{
	size_t cap = (size_t)(g->nh * 80 + g->nsw * (64 + g->radix * 24)) + 64, n = 0;
	char *t = malloc(cap);
	ck_assert_ptr_nonnull(t);
#define PUT(...) (n += (size_t)snprintf(t + n, cap - n, __VA_ARGS__))
	for (int h = 0; h < g->nh; h++)
		PUT("caguid=0x%016llx\nHca\t1 \"H-%d\"\n[1]\t\"%s\"[%d]\n\n",
		    (unsigned long long)CA_GUID(h), h, g->sw_name[g->h_sw[h]], g->h_port[h]);
	for (int s = 0; s < g->nsw; s++) {
		PUT("switchguid=0x%016llx\nSwitch\t%d \"%s\"\n",
		    (unsigned long long)SW_GUID(s), g->radix, g->sw_name[s]);
		for (int p = 1; p <= g->radix; p++) {
			int pn = g->peer_node[s][p];
			if (pn < 0)
				PUT("[%d]\t\"H-%d\"[1]\n", p, -pn - 1);
			else if (pn > 0)
				PUT("[%d]\t\"%s\"[%d]\n", p, g->sw_name[pn - 1], g->peer_port[s][p]);
		}
		PUT("\n");
	}
#undef PUT
	ck_assert_uint_lt(n, cap);
	free(g->sw_name);
	free(g->peer_node);
	free(g->peer_port);
	free(g->h_sw);
	free(g->h_port);
	return t;
}

/* fabgen ftree2 --radix k: k/2 leaves of k/2 hosts, k/2 spines. */
static char *ftree2_text(int k)
{
	struct gen g;
	int half = k / 2, h = 0;
	gen_init(&g, k, half * half, k);
	for (int s = 0; s < k; s++)
		snprintf(g.sw_name[s], sizeof(g.sw_name[s]), "L%d-S%d", s < half ? 0 : 1,
			 s < half ? s : s - half);
	for (int l = 0; l < half; l++)
		for (int j = 0; j < half; j++)
			gen_host(&g, l, j + 1, h++);
	for (int l = 0; l < half; l++)
		for (int s = 0; s < half; s++)
			gen_link(&g, l, half + s + 1, half + s, l + 1);
	return gen_text(&g);
}

/* fabgen ftree3 --radix k: k pods of k/2 edges and k/2 aggregations, (k/2)^2 cores. */
static char *ftree3_text(int k)
{
	struct gen g;
	int h = k / 2, ne = k * h, nh = 0;
	gen_init(&g, 2 * ne + h * h, k * h * h, k);
	for (int s = 0; s < 2 * ne + h * h; s++)
		snprintf(g.sw_name[s], sizeof(g.sw_name[s]), "L%d-S%d", s / ne,
			 s < 2 * ne ? s % ne : s - 2 * ne);
	for (int p = 0; p < k; p++)
		for (int j = 0; j < h; j++)
			for (int q = 0; q < h; q++)
				gen_host(&g, p * h + j, q + 1, nh++);
	for (int p = 0; p < k; p++) {
		for (int j = 0; j < h; j++)
			for (int i = 0; i < h; i++)
				gen_link(&g, p * h + j, h + i + 1, ne + p * h + i, j + 1);
		for (int i = 0; i < h; i++)
			for (int c = 0; c < h; c++)
				gen_link(&g, ne + p * h + i, h + c + 1, 2 * ne + i * h + c, p + 1);
	}
	return gen_text(&g);
}

/* ---- the run: the fabric, its emulator, ibsmd as SM ---- */

struct run {
	EMU_RUN;
	uint32_t *lid_port;	/* LID -> topo port index, from the devices */
	uint32_t max_lid;
};

/* Runs the loop for ms, or until the SM is idle when until_idle. */
static void run_for(struct run *r, unsigned ms, int until_idle)
{
	emu_sm_run(r->base, r->sm, ms, until_idle);
}

/* The LID -> port map, read from the emulated devices. */
static void map_lids(struct run *r)
{
	const struct fabric *f = &r->topo;
	r->max_lid = 0xc000;
	free(r->lid_port);
	r->lid_port = malloc(r->max_lid * sizeof(*r->lid_port));
	ck_assert_ptr_nonnull(r->lid_port);
	for (uint32_t l = 0; l < r->max_lid; l++)
		r->lid_port[l] = FAB_NONE;
	for (uint32_t ni = 0; ni < f->n_nodes; ni++) {
		const struct fab_node *nd = &f->nodes[ni];
		int sw = nd->type == FAB_SWITCH;
		for (int p = sw ? 0 : 1; p <= (sw ? 0 : nd->nports); p++) {
			int lid = emu_port_lid(r->e, nd->guid, p);
			ck_assert_int_gt(lid, 0);
			ck_assert_int_lt(lid, (int)r->max_lid);
			ck_assert_uint_eq(r->lid_port[lid], FAB_NONE);	/* LIDs unique */
			r->lid_port[lid] = fabric_port(f, ni, (uint32_t)p);
		}
	}
}

/* Brings ibsmd up on the fabric of text; tweak (may be NULL) edits the topology first. */
static void run_up(struct run *r, char *text, void (*tweak)(struct fabric *))
{
	memset(r, 0, sizeof(*r));
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "saemu", .text = text,
		     .tweak = tweak, .seed = 5 });
	r->sm = emu_sm_new(r->state, 50);
	emu_sm_start(r->sm, r->base, r->e);
	run_for(r, 60000, 1);
	ck_assert_ptr_nonnull(sa_get_view(r->sm));
}

static void run_down(struct run *r)
{
	ck_assert_uint_eq(emu_violations(r->e), 0);
	emu_run_free(&r->run);
	free(r->lid_port);
}

/* ---- an SA host whose port can lose one chosen RMPP packet ---- */

struct sahost {
	struct mad_transport real, wire;	/* the emulator's port; the client's view of it */
	struct saclient *c;
	uint64_t guid;
	uint32_t lid, port;			/* port: topo index */
	/* one packet to lose: a DATA segment coming in, an ACK going out */
	uint32_t drop_data, drop_ack;		/* SegmentNumber, 0: none */
	int dropped_data, dropped_ack;
	/* DATA segments of answers as they arrived, by SegmentNumber */
	uint32_t arrivals[MAX_SEGS];
	uint64_t segs_in, dups;
};

static void sah_recv(void *arg, const uint8_t *mad, size_t len,
		     const struct mad_addr *from, int status)
{
	struct sahost *h = arg;
	if (!status && len >= SA_HDR_SIZE && mad[1] == SA_CLASS &&
	    (mad[26] & RMPP_FLAG_ACTIVE) && rmpp_type(mad) == RMPP_TYPE_DATA) {
		uint32_t seg = rmpp_seg(mad);
		if (h->drop_data && seg == h->drop_data && !h->dropped_data) {
			h->dropped_data = 1;
			return;		/* lost on the wire */
		}
		h->segs_in++;
		if (seg < MAX_SEGS && h->arrivals[seg]++)
			h->dups++;
	}
	saclient_recv(h->c, mad, len, from, status);
}

static int sah_send(void *ctx, const uint8_t *mad, size_t len, const struct mad_addr *to)
{
	struct sahost *h = ctx;
	if (h->drop_ack && !h->dropped_ack && len >= SA_HDR_SIZE && mad[1] == SA_CLASS &&
	    (mad[26] & RMPP_FLAG_ACTIVE) && rmpp_type(mad) == RMPP_TYPE_ACK &&
	    rmpp_seg(mad) == h->drop_ack) {
		h->dropped_ack = 1;
		return 0;	/* lost on the wire */
	}
	return mad_transport_send(&h->real, mad, len, to);
}

static void sah_attach(struct run *r, struct sahost *h, int host)
{
	char err[256] = "";
	struct saclient_params p = { .timeout_ms = 1000, .retries = 3 };
	memset(h, 0, sizeof(*h));
	h->guid = CA_GUID(host) + 1;
	ck_assert_msg(emu_attach(r->e, r->base, h->guid, &h->real, sah_recv, h,
				 err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(emu_set_issm(r->e, h->guid, 0), 0);
	h->wire = h->real;
	h->wire.ctx = h;
	h->wire.send = sah_send;
	h->c = saclient_new(r->base, &h->wire, &p);
	ck_assert_ptr_nonnull(h->c);
	h->lid = h->real.lid;
	ck_assert_uint_gt(h->lid, 0);
	ck_assert_uint_eq(h->real.sm_lid, (uint32_t)emu_port_lid(r->e, CA_GUID(0), 1));
	/* IsSM cleared is a capability change (trap 144): let its sweep pass */
	run_for(r, 200, 0);
	run_for(r, 60000, 1);
	h->port = fabric_port(&r->topo, fabric_find_node(&r->topo, CA_GUID(host)), 1);
}

static void sah_detach(struct sahost *h)
{
	saclient_free(h->c);
	h->real.close(h->real.ctx);
}

/* One answer, kept. */
struct table {
	int done, status;
	size_t n, stride;
	uint8_t *recs;
};

static void on_table(void *arg, int status, const uint8_t *recs, size_t n,
		     size_t stride, const uint8_t *hdr)
{
	struct table *t = arg;
	t->done = 1;
	t->status = status;
	t->n = n;
	t->stride = stride;
	t->recs = malloc(n * stride + 1);
	ck_assert_ptr_nonnull(t->recs);
	if (n)
		memcpy(t->recs, recs, n * stride);
	if (hdr)
		ck_assert_uint_eq(mad_method(hdr), SA_METHOD_GET_TABLE_RESP);
}

/* A GetTable of attr with the record template rec under comp_mask. */
static void get_table(struct run *r, struct sahost *h, uint16_t attr, uint64_t mask,
		      const uint8_t *rec, size_t rec_len, struct table *t)
{
	memset(t, 0, sizeof(*t));
	memset(h->arrivals, 0, sizeof(h->arrivals));
	h->segs_in = h->dups = 0;
	h->dropped_data = h->dropped_ack = 0;
	ck_assert_int_eq(saclient_query(h->c, SA_METHOD_GET_TABLE, attr, 0, mask, rec,
					rec_len, on_table, t), 0);
	ck_assert_int_eq(emu_run_until(r->base, &t->done, 30000), 1);
	ck_assert_msg(t->status == 0, "GetTable 0x%04x: status %d", attr, t->status);
	ck_assert_uint_eq(saclient_inflight(h->c), 0);
}

static void table_free(struct table *t)
{
	free(t->recs);
	t->recs = NULL;
}

/* The lossy answer is the clean one, and the lost packet was made up for. */
static void assert_same(const struct table *clean, const struct table *t)
{
	ck_assert_uint_eq(t->n, clean->n);
	ck_assert_uint_eq(t->stride, clean->stride);
	ck_assert_int_eq(memcmp(t->recs, clean->recs, t->n * t->stride), 0);
}

/* Loses DATA segment seg of the same GetTable: it comes again. */
static void lose_data(struct run *r, struct sahost *h, uint16_t attr, uint64_t mask,
		      const uint8_t *rec, size_t rec_len, const struct table *clean,
		      uint32_t seg)
{
	struct table t;
	h->drop_data = seg;
	get_table(r, h, attr, mask, rec, rec_len, &t);
	h->drop_data = 0;
	ck_assert_int_eq(h->dropped_data, 1);
	ck_assert_uint_ge(h->arrivals[seg], 1);		/* resent by the SA */
	assert_same(clean, &t);
	table_free(&t);
}

/* Loses the host's ACK of segment seg: the SA resends the window, the host re-ACKs. */
static void lose_ack(struct run *r, struct sahost *h, uint16_t attr, uint64_t mask,
		     const uint8_t *rec, size_t rec_len, const struct table *clean,
		     uint32_t seg)
{
	struct table t;
	uint64_t acks = saclient_rmpp_stats(h->c)->acks_sent;
	h->drop_ack = seg;
	get_table(r, h, attr, mask, rec, rec_len, &t);
	/* the final ACK lost: the answer is in, the resent window still to come */
	run_for(r, 600, 0);
	h->drop_ack = 0;
	ck_assert_int_eq(h->dropped_ack, 1);
	ck_assert_msg(h->dups > 0, "ACK %u lost: no segment came again", seg);
	ck_assert_uint_ge(h->arrivals[seg], 2);
	/* at least one ACK after segment 1 and one per window of 32, and one more */
	uint64_t segs = (clean->n * clean->stride + SA_DATA_SIZE - 1) / SA_DATA_SIZE;
	ck_assert_uint_ge(saclient_rmpp_stats(h->c)->acks_sent - acks, 1 + (segs - 1) / 32 + 1);
	assert_same(clean, &t);
	table_free(&t);
}

/* ---- the checks of each table against the devices and the topology ---- */

static uint32_t n_endports(const struct fabric *f)
{
	uint32_t n = 0;
	for (uint32_t ni = 0; ni < f->n_nodes; ni++)
		n += f->nodes[ni].type == FAB_SWITCH ? 1 : f->nodes[ni].nports;
	return n;
}

static void check_node_records(struct run *r, const struct table *t)
{
	const struct fabric *f = &r->topo;
	ck_assert_uint_eq(t->stride, 112);
	ck_assert_uint_eq(t->n, n_endports(f));
	uint8_t *seen = calloc(f->n_ports, 1);
	ck_assert_ptr_nonnull(seen);
	for (size_t i = 0; i < t->n; i++) {
		uint8_t *rec = t->recs + i * t->stride;
		uint32_t lid = mad_get_field(rec, 0, IB_SA_NR_LID_F);
		ck_assert_uint_lt(lid, r->max_lid);
		uint32_t pi = r->lid_port[lid];
		ck_assert_msg(pi != FAB_NONE, "NodeRecord with LID %u nobody holds", lid);
		ck_assert_msg(!seen[pi]++, "LID %u twice", lid);
		const struct fab_port *p = &f->ports[pi];
		const struct fab_node *nd = &f->nodes[p->node];
		int sw = nd->type == FAB_SWITCH;
		ck_assert_uint_eq(mad_get_field64(rec, 0, IB_SA_NR_GUID_F), nd->guid);
		ck_assert_uint_eq(mad_get_field64(rec, 0, IB_SA_NR_PORT_GUID_F),
				  sw ? nd->guid : nd->guid + p->num);
		ck_assert_uint_eq(mad_get_field(rec, 0, IB_SA_NR_TYPE_F), sw ? 2 : 1);
		ck_assert_uint_eq(mad_get_field(rec, 0, IB_SA_NR_NPORTS_F), nd->nports);
		ck_assert_uint_eq(mad_get_field(rec, 0, IB_SA_NR_BASEVER_F), 1);
		ck_assert_uint_eq(mad_get_field(rec, 0, IB_SA_NR_CLASSVER_F), 1);
		if (!sw)
			ck_assert_uint_eq(mad_get_field(rec, 0, IB_SA_NR_LOCAL_PORT_F), p->num);
		ck_assert_str_eq((const char *)rec + 44, nd->desc);
	}
	free(seen);
}

static void check_portinfo_records(struct run *r, const struct table *t)
{
	const struct fabric *f = &r->topo;
	uint32_t want = 0, sm_lid = (uint32_t)emu_port_lid(r->e, CA_GUID(0), 1);
	for (uint32_t ni = 0; ni < f->n_nodes; ni++)
		want += f->nodes[ni].nports + (f->nodes[ni].type == FAB_SWITCH);
	ck_assert_uint_eq(t->stride, 72);
	ck_assert_uint_eq(t->n, want);
	uint8_t *seen = calloc(f->n_ports, 1), *in_port = calloc(f->n_nodes, 1);
	ck_assert_ptr_nonnull(seen);
	ck_assert_ptr_nonnull(in_port);
	for (size_t i = 0; i < t->n; i++) {
		const uint8_t *rec = t->recs + i * t->stride;
		uint8_t *pinfo = (uint8_t *)rec + 4;
		uint32_t lid = sa_get16(rec), num = rec[2];
		ck_assert_uint_lt(lid, r->max_lid);
		uint32_t ep = r->lid_port[lid];
		ck_assert_msg(ep != FAB_NONE, "PortInfoRecord with LID %u nobody holds", lid);
		const struct fab_node *nd = &f->nodes[f->ports[ep].node];
		int sw = nd->type == FAB_SWITCH;
		ck_assert_uint_le(num, nd->nports);
		if (!sw)
			ck_assert_uint_eq(num, f->ports[ep].num);
		uint32_t pi = fabric_port(f, f->ports[ep].node, num);
		ck_assert_msg(!seen[pi]++, "LID %u port %u twice", lid, num);
		const struct fab_port *p = &f->ports[pi];
		uint64_t dg = nd->guid;
		int dp = (int)num;
		/* LocalPortNum as read (OpenSM's too): a CA's own port; on a
		 * switch the port the SM's SMPs came in by, one for all its ports */
		uint32_t local = mad_get_field(pinfo, 0, IB_PORT_LOCAL_PORT_F);
		if (!sw)
			ck_assert_uint_eq(local, num);
		else if (!in_port[f->ports[ep].node])
			in_port[f->ports[ep].node] = (uint8_t)local;
		if (sw) {
			ck_assert_uint_ge(local, 1);
			ck_assert_uint_le(local, nd->nports);
			ck_assert_uint_eq(local, in_port[f->ports[ep].node]);
		}
		ck_assert_uint_eq(mad_get_field(pinfo, 0, IB_PORT_STATE_F),
				  (uint32_t)emu_port_state(r->e, dg, dp));
		ck_assert_uint_eq(mad_get_field(pinfo, 0, IB_PORT_PHYS_STATE_F),
				  (uint32_t)emu_port_phys_state(r->e, dg, dp));
		if (num == 0 || !sw) {	/* an end port: its LID, LMC, SM */
			ck_assert_uint_eq(mad_get_field(pinfo, 0, IB_PORT_LID_F), lid);
			ck_assert_uint_eq(mad_get_field(pinfo, 0, IB_PORT_SMLID_F), sm_lid);
			ck_assert_uint_eq(mad_get_field(pinfo, 0, IB_PORT_LMC_F),
					  (uint32_t)emu_port_lmc(r->e, dg, dp));
			ck_assert_uint_eq(mad_get_field64(pinfo, 0, IB_PORT_GID_PREFIX_F), PREFIX);
		}
		if (num == 0)
			continue;
		ck_assert_uint_eq(mad_get_field(pinfo, 0, IB_PORT_LINK_WIDTH_ACTIVE_F),
				  p->width_active);
		ck_assert_uint_eq(mad_get_field(pinfo, 0, IB_PORT_LINK_SPEED_ACTIVE_F),
				  p->speed_active & 0x0f);
		ck_assert_uint_eq(mad_get_field(pinfo, 0, IB_PORT_MTU_CAP_F), p->mtu_cap);
		if (p->remote != FAB_NONE)
			ck_assert_uint_eq(mad_get_field(pinfo, 0, IB_PORT_NEIGHBOR_MTU_F),
					  (uint32_t)emu_port_neighbor_mtu(r->e, dg, dp));
	}
	free(in_port);
	free(seen);
}

/* The least MTU and rate of a port, as a path through it counts them. */
static void take(const struct fab_port *p, uint8_t *mtu, uint8_t *rate)
{
	uint8_t rt = path_link_rate(p->width_active, p->speed_active);
	if (p->mtu_cap < *mtu)
		*mtu = p->mtu_cap;
	if (!*rate || path_rate_bw(rt) < path_rate_bw(*rate))
		*rate = rt;
}

/* Crosses the link of port pi: the MTU the SM wrote on it, both ends' rates. */
static uint32_t cross(struct run *r, uint32_t pi, uint8_t *mtu, uint8_t *rate)
{
	const struct fabric *f = &r->topo;
	const struct fab_port *p = &f->ports[pi];
	if (p->remote == FAB_NONE)
		return FAB_NONE;
	uint8_t nm = (uint8_t)emu_port_neighbor_mtu(r->e, f->nodes[p->node].guid, p->num);
	if (nm < *mtu)
		*mtu = nm;
	take(p, mtu, rate);
	take(&f->ports[p->remote], mtu, rate);
	return p->remote;
}

/*
 * Follows the devices' LFTs from end port src to dlid.  Returns the port
 * reached (FAB_NONE: lost), the switches crossed, the least MTU (what
 * the SM wrote as NeighborMTU on the links) and rate of the links.
 */
static uint32_t follow(struct run *r, uint32_t src, uint32_t dlid, unsigned *sws,
		       uint8_t *mtu, uint8_t *rate)
{
	const struct fabric *f = &r->topo;
	uint32_t pi = src;
	*sws = 0;
	*mtu = 0xff;
	*rate = 0;
	if (f->nodes[f->ports[src].node].type != FAB_SWITCH) {
		take(&f->ports[src], mtu, rate);
		if (r->lid_port[dlid] == src)
			return src;
		if ((pi = cross(r, src, mtu, rate)) == FAB_NONE)
			return FAB_NONE;
	}
	for (unsigned n = 0; n < 64; n++) {
		uint32_t node = f->ports[pi].node;
		const struct fab_node *nd = &f->nodes[node];
		if (nd->type != FAB_SWITCH)
			return pi;
		(*sws)++;
		int out = emu_lft_entry(r->e, nd->guid, dlid);
		if (out == 0)
			return fabric_port(f, node, 0);
		if (out < 1 || out > nd->nports)
			return FAB_NONE;
		if ((pi = cross(r, fabric_port(f, node, (uint32_t)out), mtu, rate)) == FAB_NONE)
			return FAB_NONE;
	}
	return FAB_NONE;
}

static uint8_t ceil_log2(unsigned v)
{
	uint8_t l = 0;
	while ((1u << l) < v)
		l++;
	return l;
}

static uint64_t port_guid(const struct fabric *f, uint32_t pi)
{
	const struct fab_node *nd = &f->nodes[f->ports[pi].node];
	return nd->type == FAB_SWITCH ? nd->guid : nd->guid + f->ports[pi].num;
}

/* Rates seen, to show that the answer's rates do come from the paths. */
struct pr_summary {
	unsigned rates[32], mtus[8];
};

static void check_path_records(struct run *r, const struct sahost *h,
			       const struct table *t, struct pr_summary *sum)
{
	const struct fabric *f = &r->topo;
	const struct fabric *vf = sa_get_view(r->sm)->f;
	uint8_t ltv = 0;
	for (uint32_t n = 0; n < vf->n_nodes; n++)
		if (vf->nodes[n].type == FAB_SWITCH && vf->nodes[n].lifetime > ltv)
			ltv = vf->nodes[n].lifetime;
	ck_assert_uint_gt(ltv, 0);
	ck_assert_uint_eq(t->stride, SA_SIZE_PATH_REC);
	ck_assert_uint_eq(t->n, n_endports(f));
	uint8_t *seen = calloc(r->max_lid, 1);
	ck_assert_ptr_nonnull(seen);
	memset(sum, 0, sizeof(*sum));
	for (size_t i = 0; i < t->n; i++) {
		const uint8_t *rec = t->recs + i * t->stride;
		uint32_t dlid = sa_get16(rec + 40), dst;
		ck_assert_uint_lt(dlid, r->max_lid);
		ck_assert_msg((dst = r->lid_port[dlid]) != FAB_NONE, "DLID %u nobody holds", dlid);
		ck_assert_msg(!seen[dlid]++, "DLID %u twice", dlid);
		ck_assert_uint_eq(sa_get16(rec + 42), h->lid);
		ck_assert_uint_eq(sa_get64(rec + 8), PREFIX);
		ck_assert_uint_eq(sa_get64(rec + 16), port_guid(f, dst));
		ck_assert_uint_eq(sa_get64(rec + 24), PREFIX);
		ck_assert_uint_eq(sa_get64(rec + 32), h->guid);
		/* where the devices' tables lead, and back */
		unsigned sws, back_sws;
		uint8_t mtu, rate, bm, br;
		ck_assert_msg(follow(r, h->port, dlid, &sws, &mtu, &rate) == dst,
			      "the LFTs do not lead from LID %u to %u", h->lid, dlid);
		if (f->nodes[f->ports[dst].node].type != FAB_SWITCH)
			take(&f->ports[dst], &mtu, &rate);
		int rev = follow(r, dst, h->lid, &back_sws, &bm, &br) == h->port;
		ck_assert_uint_eq(rec[49], rev ? 0x80 : 0);	/* Reversible, NumbPath 0 */
		ck_assert_uint_eq(sa_get16(rec + 50), 0xffff);
		ck_assert_uint_eq(sa_get16(rec + 52) & 0xf, 0);	/* SL without QoS */
		ck_assert_msg(rec[54] == (0x80 | mtu), "DLID %u: MTU 0x%02x, the path's %u",
			      dlid, rec[54], mtu);
		ck_assert_msg(rec[55] == (0x80 | rate), "DLID %u: rate 0x%02x, the path's %u",
			      dlid, rec[55], rate);
		uint8_t plt = dst == h->port ? 0 : (uint8_t)(ltv + ceil_log2(sws ? sws : 1));
		ck_assert_msg(rec[56] == (0x80 | plt), "DLID %u: PacketLifeTime 0x%02x, want %u",
			      dlid, rec[56], plt);
		sum->rates[rate & 31]++;
		sum->mtus[mtu & 7]++;
	}
	free(seen);
}

/* ---- the tests ---- */

static struct run R;

START_TEST(t_tree324_node_and_portinfo)
{
	struct sahost h;
	struct table nr, pir, t;
	run_up(&R, ftree2_text(36), NULL);
	ck_assert_uint_eq(R.topo.n_nodes, 324 + 36);
	map_lids(&R);
	sah_attach(&R, &h, 40);

	get_table(&R, &h, SA_ATTR_NODE_REC, 0, NULL, 0, &nr);
	check_node_records(&R, &nr);
	ck_assert_uint_gt(h.segs_in, 100);	/* 360 * 112 bytes: 202 segments */
	ck_assert_uint_eq(h.dups, 0);
	get_table(&R, &h, SA_ATTR_PORTINFO_REC, 0, NULL, 0, &pir);
	check_portinfo_records(&R, &pir);
	ck_assert_uint_gt(h.segs_in, 500);	/* 1656 * 72 bytes: 597 segments */
	ck_assert_uint_eq(h.dups, 0);

	/* NodeRecord by LID: the one record, the same as in the table */
	uint8_t tmpl[SA_SIZE_NODE_REC] = { 0 };
	memcpy(tmpl, nr.recs + 5 * nr.stride, 2);
	get_table(&R, &h, SA_ATTR_NODE_REC, 1, tmpl, sizeof(tmpl), &t);
	ck_assert_uint_eq(t.n, 1);
	ck_assert_int_eq(memcmp(t.recs, nr.recs + 5 * nr.stride, SA_SIZE_NODE_REC), 0);
	table_free(&t);

	lose_data(&R, &h, SA_ATTR_NODE_REC, 0, NULL, 0, &nr, 40);
	lose_ack(&R, &h, SA_ATTR_NODE_REC, 0, NULL, 0, &nr, 33);
	lose_data(&R, &h, SA_ATTR_PORTINFO_REC, 0, NULL, 0, &pir, 500);
	lose_ack(&R, &h, SA_ATTR_PORTINFO_REC, 0, NULL, 0, &pir, 65);

	/* seeded loss on the host's link, both ways: resent, still the same */
	uint64_t resent_before = h.dups;
	ck_assert_int_eq(emu_set_port_loss(R.e, h.guid, 0, 2.0), 0);
	uint32_t leaf = R.topo.ports[h.port].remote;
	ck_assert_int_eq(emu_set_port_loss(R.e, R.topo.nodes[R.topo.ports[leaf].node].guid,
					   R.topo.ports[leaf].num, 2.0), 0);
	struct emu_counters c0, c1;
	emu_get_counters(R.e, &c0);
	uint64_t lost_in = 0;
	for (int i = 0; i < 2; i++) {
		get_table(&R, &h, SA_ATTR_NODE_REC, 0, NULL, 0, &t);
		assert_same(&nr, &t);
		lost_in += h.dups;
		table_free(&t);
		get_table(&R, &h, SA_ATTR_PORTINFO_REC, 0, NULL, 0, &t);
		assert_same(&pir, &t);
		lost_in += h.dups;
		table_free(&t);
	}
	emu_get_counters(R.e, &c1);
	ck_assert_uint_gt(c1.dropped_fault - c0.dropped_fault, 5);
	ck_assert_uint_gt(lost_in, 0);		/* windows came again */
	(void)resent_before;
	ck_assert_uint_eq(saclient_rmpp_stats(h.c)->failed, 0);

	table_free(&nr);
	table_free(&pir);
	sah_detach(&h);
	run_down(&R);
}
END_TEST

/* Core switch 0's links 1x; the hosts of edge switch 7 (pod 0) MTUCap 2048. */
static void narrow(struct fabric *f)
{
	uint32_t core0 = fabric_find_node(f, SW_GUID(2 * 24 * 12));
	ck_assert_uint_ne(core0, FAB_NONE);
	for (unsigned p = 1; p <= f->nodes[core0].nports; p++) {
		struct fab_port *a = fabric_portp(f, core0, p);
		if (a->remote == FAB_NONE)
			continue;
		a->width_active = TOPO_WIDTH_1X;
		f->ports[a->remote].width_active = TOPO_WIDTH_1X;
	}
	for (int h = 7 * 12; h < 8 * 12; h++)
		fabric_portp(f, fabric_find_node(f, CA_GUID(h)), 1)->mtu_cap = 4;
}

START_TEST(t_tree3456_path_records)
{
	struct sahost h;
	struct table pr;
	struct pr_summary sum;
	run_up(&R, ftree3_text(24), narrow);
	ck_assert_uint_eq(R.topo.n_nodes, 3456 + 720);
	map_lids(&R);
	/* a host of pod 1: its paths to pod 0 are the ones crossing the core */
	sah_attach(&R, &h, 200);

	uint8_t tmpl[SA_SIZE_PATH_REC] = { 0 };
	sa_put16(tmpl + 42, (uint16_t)h.lid);
	get_table(&R, &h, SA_ATTR_PATH_REC, 1ull << 5 /* SLID */, tmpl, sizeof(tmpl), &pr);
	check_path_records(&R, &h, &pr, &sum);
	ck_assert_uint_gt(h.segs_in, 1300);	/* 4176 * 64 bytes: 1337 segments */
	ck_assert_uint_eq(h.dups, 0);
	/* the narrow core and the small MTU do show */
	ck_assert_uint_gt(sum.rates[2], 0);	/* 1x SDR: 2.5 Gb/s */
	ck_assert_uint_gt(sum.rates[3], 0);	/* 4x SDR: 10 Gb/s */
	ck_assert_uint_eq(sum.mtus[4], 12);	/* the 12 hosts of edge 7 */
	ck_assert_uint_eq(sum.mtus[5], pr.n - 12);

	/* by SGID instead of SLID: the same table */
	struct table t;
	memset(tmpl, 0, sizeof(tmpl));
	sa_put64(tmpl + 24, PREFIX);
	sa_put64(tmpl + 32, h.guid);
	get_table(&R, &h, SA_ATTR_PATH_REC, 1ull << 3 /* SGID */, tmpl, sizeof(tmpl), &t);
	assert_same(&pr, &t);
	table_free(&t);

	memset(tmpl, 0, sizeof(tmpl));
	sa_put16(tmpl + 42, (uint16_t)h.lid);
	lose_data(&R, &h, SA_ATTR_PATH_REC, 1ull << 5, tmpl, sizeof(tmpl), &pr, 700);
	lose_ack(&R, &h, SA_ATTR_PATH_REC, 1ull << 5, tmpl, sizeof(tmpl), &pr, 1 + 32 * 20);
	/* the final ACK lost: the last window again, the answer once */
	uint32_t last = (uint32_t)((pr.n * pr.stride + SA_DATA_SIZE - 1) / SA_DATA_SIZE);
	lose_ack(&R, &h, SA_ATTR_PATH_REC, 1ull << 5, tmpl, sizeof(tmpl), &pr, last);
	ck_assert_uint_eq(saclient_get_stats(h.c)->answers, 5);	/* one per query */
	ck_assert_uint_eq(saclient_rmpp_stats(h.c)->failed, 0);

	table_free(&pr);
	sah_detach(&h);
	run_down(&R);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sa_emu");
	TCase *tc = tcase_create("tables");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, t_tree324_node_and_portinfo);
	tcase_add_test(tc, t_tree3456_path_records);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
