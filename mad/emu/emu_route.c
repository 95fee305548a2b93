/*
 * Forwarding in the emulated fabric: directed route (spec 14.2.2,
 * C14-9 outbound and C14-13 inbound, the hop pointer walked as the SMIs
 * on the way would), LID routing through the switches' LFTs (spec 18.2.4),
 * links going down and up, and trap 128.
 */
#include "mad/emu/emu_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define DR_MAX_HOPS 63
#define NOTICE_DETAILS 54	/* DataDetails: a Notice's bytes 10-63 (13.4.8.2) */
#define NOTICE_URGENT 1		/* Notice Type */
#define NOTICE_SECURITY 2

struct walk {
	uint8_t in_port;	/* the port it entered its last node by */
	int fault;		/* lost by the fault model, not by the fabric */
	char why[128];
};

static void lost(struct walk *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void lost(struct walk *w, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->why, sizeof(w->why), fmt, ap);
	va_end(ap);
}

/* Does the packet make it into port pi?  (The per-port loss model.) */
static int arrives(struct emu *e, uint32_t pi, struct walk *w)
{
	if (e->any_port_loss && emu_chance(e, e->ports[pi].loss)) {
		w->fault = 1;
		lost(w, "lost on arrival at a lossy port");
		return 0;
	}
	return 1;
}

/* Is the SMI/SMA behind port pi dead? */
static int smi_dead(const struct emu *e, uint32_t pi)
{
	return port_node(e, pi)->dead || (e->ports[pi].flags & EP_DEAD);
}

/* The port a switch or CA keeps its SM client and IsSM bit on. */
static uint32_t end_port(const struct emu *e, uint32_t pi)
{
	const struct emu_node *n = port_node(e, pi);
	return is_switch(n) ? n->first_port : pi;
}

static uint32_t emu_port_base_lid(const struct emu *e, uint32_t pi)
{
	return e->ports[end_port(e, pi)].lid;
}

/* The SLID a port sends from: its LID, else its vLID (a VF in extended mode). */
static uint32_t src_lid(const struct emu *e, uint32_t pi)
{
	uint32_t lid = emu_port_base_lid(e, pi);
	return lid ? lid : emu_xlid_port_vlid(e, end_port(e, pi));
}

int emu_lid_match(const struct emu *e, uint32_t pi, uint32_t lid)
{
	const struct emu_port *p = &e->ports[pi];
	if (emu_xlid_is_vlid(lid))
		return emu_xlid_port_match(e, pi, lid);
	const struct emu_node *n = &e->nodes[p->node];
	if (!p->lid || (is_switch(n) && p->num))
		return 0;
	unsigned lmc = p->lmc;
	if (is_switch(n) && !node_sw(e, n)->enhanced_port0)
		lmc = 0;
	return lid >= p->lid && lid < (uint32_t)p->lid + (1u << lmc);
}

static const char *node_str(const struct emu *e, const struct emu_node *n,
			    char *buf, size_t len)
{
	(void)e;
	snprintf(buf, len, "%s 0x%016llx \"%.40s\"", is_switch(n) ? "switch" : "CA",
		 (unsigned long long)n->guid, n->desc);
	return buf;
}

/* ---- directed route ---- */

/*
 * Outbound (D = 0) from the sender's port: returns the port the SMP
 * arrives on at the end of its path (hop pointer = hop count + 1, return
 * path filled in), or EMU_NONE.  bad is set when the path itself is one
 * no SMI would forward (only a broken sender builds it).
 */
static uint32_t dr_out(struct emu *e, uint8_t *mad, uint32_t from,
		       struct walk *w, int *bad)
{
	uint8_t hc = mad[MH_HOP_CNT];
	const uint8_t *ipath = mad + MH_INITIAL_PATH;
	uint8_t *rpath = mad + MH_RETURN_PATH;
	const struct emu_node *cur = port_node(e, from);
	char nb[128];

	*bad = 1;
	if (mad[MH_HOP_PTR] != 0) {
		lost(w, "a directed-route request leaves with hop pointer %u, not 0",
		     mad[MH_HOP_PTR]);
		return EMU_NONE;
	}
	if (hc > DR_MAX_HOPS) {
		lost(w, "directed-route hop count %u is above %u", hc, DR_MAX_HOPS);
		return EMU_NONE;
	}
	if (hc == 0) {
		mad[MH_HOP_PTR] = 1;
		*bad = 0;
		return from;
	}
	uint8_t out = ipath[1];
	if (!is_switch(cur) && out != e->ports[from].num) {
		lost(w, "initial path[1] = %u leaves %s by another port than the "
		     "sender's port %u (C14-9:1)", out, node_str(e, cur, nb, sizeof(nb)),
		     e->ports[from].num);
		return EMU_NONE;
	}
	*bad = 0;
	for (uint8_t hp = 1;; hp++) {
		if (out == 0 || out > cur->nports) {
			*bad = 1;
			lost(w, "initial path[%u] = %u is not a port of %s", hp, out,
			     node_str(e, cur, nb, sizeof(nb)));
			return EMU_NONE;
		}
		uint32_t op = cur->first_port + out;
		if (!link_up(e, op)) {
			lost(w, "the link of %s port %u is down",
			     node_str(e, cur, nb, sizeof(nb)), out);
			return EMU_NONE;
		}
		uint32_t rp = e->ports[op].remote;
		if (!arrives(e, rp, w))
			return EMU_NONE;
		if (smi_dead(e, rp)) {
			w->fault = 1;
			lost(w, "dead node");
			return EMU_NONE;
		}
		rpath[hp] = e->ports[rp].num;
		if (hp == hc) {
			mad[MH_HOP_PTR] = (uint8_t)(hc + 1);
			return rp;
		}
		cur = port_node(e, rp);
		if (!is_switch(cur)) {
			*bad = 1;
			lost(w, "directed route through %s at hop %u: only switches "
			     "forward (C14-9:2)", node_str(e, cur, nb, sizeof(nb)), hp);
			return EMU_NONE;
		}
		out = ipath[hp + 1];
	}
}

/*
 * Inbound (D = 1) from the port the request arrived on: returns the port
 * of the requester (hop pointer 0), or EMU_NONE.
 */
static uint32_t dr_back(struct emu *e, uint8_t *mad, uint32_t from,
			struct walk *w, int *bad)
{
	uint8_t hc = mad[MH_HOP_CNT], hp = mad[MH_HOP_PTR];
	const uint8_t *rpath = mad + MH_RETURN_PATH;
	const struct emu_node *cur = port_node(e, from);
	char nb[128];

	*bad = 1;
	if (hc > DR_MAX_HOPS) {
		lost(w, "directed-route hop count %u is above %u", hc, DR_MAX_HOPS);
		return EMU_NONE;
	}
	if (hc == 0) {
		if (hp != 1) {
			lost(w, "a hop-0 directed-route answer has hop pointer %u, not 1", hp);
			return EMU_NONE;
		}
		mad[MH_HOP_PTR] = 0;
		*bad = 0;
		return from;
	}
	if (hp != hc + 1) {
		lost(w, "a directed-route answer leaves with hop pointer %u, not %u "
		     "(C14-13:1)", hp, hc + 1);
		return EMU_NONE;
	}
	uint8_t out = rpath[hc];
	if (!is_switch(cur) && out != e->ports[from].num) {
		lost(w, "return path[%u] = %u is not the port %u the request came in by",
		     hc, out, e->ports[from].num);
		return EMU_NONE;
	}
	*bad = 0;
	for (hp = hc;; hp--) {
		if (out == 0 || out > cur->nports) {
			lost(w, "return path[%u] = %u is not a port of %s", hp, out,
			     node_str(e, cur, nb, sizeof(nb)));
			return EMU_NONE;
		}
		uint32_t op = cur->first_port + out;
		if (!link_up(e, op)) {
			lost(w, "the link of %s port %u is down",
			     node_str(e, cur, nb, sizeof(nb)), out);
			return EMU_NONE;
		}
		uint32_t rp = e->ports[op].remote;
		if (!arrives(e, rp, w))
			return EMU_NONE;
		if (hp == 1) {
			mad[MH_HOP_PTR] = 0;
			return rp;
		}
		if (smi_dead(e, rp)) {
			w->fault = 1;
			lost(w, "dead node");
			return EMU_NONE;
		}
		cur = port_node(e, rp);
		if (!is_switch(cur)) {
			lost(w, "directed-route answer through %s", node_str(e, cur, nb, sizeof(nb)));
			return EMU_NONE;
		}
		out = rpath[hp - 1];
	}
}

/* ---- LID routing ---- */

static int sw_lookup(const struct emu *e, const struct emu_node *n,
		     uint32_t dlid, uint8_t *out, struct walk *w)
{
	const struct emu_switch *s = node_sw(e, n);
	char nb[128];
	if (emu_xlid_is_vlid(dlid)) {
		char why[96];
		if (emu_xlid_lookup(e, (uint32_t)(n - e->nodes), dlid, out, why,
				    sizeof(why)) == 0)
			return 0;
		lost(w, "%s: %s", node_str(e, n, nb, sizeof(nb)), why);
		return -1;
	}
	if (dlid > s->lft_top) {
		lost(w, "LID %u is above LinearFDBTop %u of %s", dlid, s->lft_top,
		     node_str(e, n, nb, sizeof(nb)));
		return -1;
	}
	uint8_t p = dlid < s->lft_len ? s->lft[dlid] : 0xff;
	if (p == 0xff || p == 0 || p > n->nports) {
		lost(w, "%s has LFT entry %u for LID %u", node_str(e, n, nb, sizeof(nb)),
		     p, dlid);
		return -1;
	}
	*out = p;
	return 0;
}

/*
 * Carries a LID-routed packet from end port `from` to dlid.  Returns the
 * end port it reaches (a CA port, a switch's port 0), or EMU_NONE.
 */
static uint32_t lid_walk(struct emu *e, uint32_t from, uint32_t dlid,
			 struct walk *w)
{
	const struct emu_node *cur = port_node(e, from);
	char nb[128];
	uint8_t out;

	w->in_port = e->ports[from].num;
	if (emu_lid_match(e, from, dlid))
		return from;
	if (is_switch(cur)) {
		if (sw_lookup(e, cur, dlid, &out, w) < 0)
			return EMU_NONE;
	} else {
		out = e->ports[from].num;
	}
	for (int hops = 0; hops < EMU_MAX_LID_HOPS; hops++) {
		uint32_t op = cur->first_port + out;
		if (!link_up(e, op) || e->ports[op].state != PORT_ACTIVE) {
			lost(w, "%s port %u is %s", node_str(e, cur, nb, sizeof(nb)), out,
			     link_up(e, op) ? "not Active" : "down");
			return EMU_NONE;
		}
		uint32_t rp = e->ports[op].remote;
		if (!arrives(e, rp, w))
			return EMU_NONE;
		cur = port_node(e, rp);
		w->in_port = e->ports[rp].num;
		if (!is_switch(cur)) {
			if (emu_lid_match(e, rp, dlid))
				return rp;
			lost(w, "LID %u arrives at %s port %u, whose LID is %u",
			     dlid, node_str(e, cur, nb, sizeof(nb)), e->ports[rp].num,
			     e->ports[rp].lid);
			return EMU_NONE;
		}
		if (emu_lid_match(e, cur->first_port, dlid))
			return cur->first_port;
		if (sw_lookup(e, cur, dlid, &out, w) < 0)
			return EMU_NONE;
	}
	lost(w, "LID %u: more than %d hops (a routing loop)", dlid, EMU_MAX_LID_HOPS);
	return EMU_NONE;
}

/* ---- arrival ---- */

static void describe(const uint8_t *mad, char *buf, size_t len)
{
	snprintf(buf, len, "class 0x%02x method 0x%02x attribute 0x%04x modifier 0x%x",
		 mad[MH_CLASS], mad[MH_METHOD], get16(mad + MH_ATTR_ID),
		 get32(mad + MH_ATTR_MOD));
}

/* SMInfo goes to the SM attached there (ibsim does the same). */
static void to_sm(struct emu *e, uint32_t pi, uint32_t slid, const uint8_t *mad)
{
	uint32_t ep = end_port(e, pi);
	if (!(e->ports[ep].capmask & CAPM_IS_SM) || !emu_client_at(e, ep)) {
		emu_drop(e, DROP_OTHER);
		return;
	}
	emu_queue_deliver(e, ep, slid, 0, mad, MAD_SIZE);
}

static void dr_arrive(struct emu *e, uint8_t *mad, uint32_t pi)
{
	uint8_t method = mad[MH_METHOD];
	if (smi_dead(e, pi)) {
		emu_drop(e, DROP_FAULT);
		return;
	}
	uint16_t attr = get16(mad + MH_ATTR_ID);
	if (method == METHOD_TRAP_REPRESS) {
		if (emu_mkey_admit(e, e->ports[pi].node, e->ports[pi].num, mad) != MKEY_DROP)
			e->cnt.trap_represses++;
		return;
	}
	if (method == METHOD_TRAP || (attr == ATTR_SM_INFO &&
				      (method == METHOD_GET || method == METHOD_SET))) {
		to_sm(e, pi, 0xffff, mad);
		return;
	}
	if (!emu_sma(e, e->ports[pi].node, e->ports[pi].num, 0, mad)) {
		emu_drop(e, DROP_OTHER);
		return;
	}
	e->cnt.answered++;
	struct walk w = { 0 };
	int bad;
	uint32_t back = dr_back(e, mad, pi, &w, &bad);
	if (back == EMU_NONE) {
		emu_drop(e, w.fault ? DROP_FAULT : DROP_ROUTE);
		return;
	}
	emu_queue_deliver(e, back, 0xffff, 0, mad, MAD_SIZE);
}

/*
 * The answer of end port pi's agent (an SMA, a PMA) to a LID-routed
 * request from slid to dlid, back the way the LFTs lead.  client: a
 * client sent it (an answer lost on the way is a violation).
 */
static void answer_back(struct emu *e, uint8_t *mad, uint32_t pi,
			uint32_t slid, uint32_t dlid, uint32_t qpn, int client)
{
	e->cnt.answered++;
	/* An SMA called by its vLID answers from it (its PortInfo LID may be 0). */
	uint32_t from = emu_xlid_is_vlid(dlid) ? dlid : emu_port_base_lid(e, pi);
	struct walk w = { 0 };
	uint32_t back = lid_walk(e, pi, slid, &w);
	if (back == EMU_NONE) {
		if (!w.fault && client) {
			char d[96];
			describe(mad, d, sizeof(d));
			emu_add_violation(e, "the answer to a LID-routed request (%s) "
					  "cannot return from LID %u to LID %u: %s",
					  d, from, slid, w.why);
		}
		emu_drop(e, w.fault ? DROP_FAULT : DROP_ROUTE);
		return;
	}
	emu_queue_deliver(e, back, from, qpn, mad, MAD_SIZE);
}

/*
 * A LID-routed packet reached end port pi, entering its node by in_port.
 * client: a client sent it (its answer lost on the way is a violation).
 */
static void lid_arrive(struct emu *e, uint8_t *mad, size_t len, uint32_t pi,
		       uint8_t in_port, uint32_t slid, uint32_t dlid, uint32_t qpn,
		       int client)
{
	uint8_t method = mad[MH_METHOD];
	int request = !(method & METHOD_RESP) && method != METHOD_TRAP &&
		      method != METHOD_TRAP_REPRESS;
	if (mad[MH_CLASS] == CLASS_PERF && request) {
		/* every port's PMA answers, as ibsim's do (DEVELOPERS.md) */
		const struct emu_node *n = port_node(e, pi);
		if (n->dead || (e->ports[n->first_port + in_port].flags & EP_DEAD)) {
			emu_drop(e, DROP_FAULT);
			return;
		}
		if (!emu_pma(e, pi, qpn, mad, len)) {
			emu_drop(e, DROP_OTHER);
			return;
		}
		answer_back(e, mad, pi, slid, dlid, qpn, client);
		return;
	}
	if (mad[MH_CLASS] != CLASS_SMP_LID || (method & METHOD_RESP) ||
	    method == METHOD_TRAP) {
		emu_queue_deliver(e, pi, slid, qpn, mad, len);
		return;
	}
	const struct emu_node *n = port_node(e, pi);
	if (n->dead || (e->ports[n->first_port + in_port].flags & EP_DEAD)) {
		emu_drop(e, DROP_FAULT);
		return;
	}
	if (method == METHOD_TRAP_REPRESS) {
		if (emu_mkey_admit(e, e->ports[pi].node, in_port, mad) != MKEY_DROP)
			e->cnt.trap_represses++;
		return;
	}
	uint16_t attr = get16(mad + MH_ATTR_ID);
	if (attr == ATTR_SM_INFO && (method == METHOD_GET || method == METHOD_SET)) {
		to_sm(e, pi, slid, mad);
		return;
	}
	if (!emu_sma(e, e->ports[pi].node, in_port, 1, mad)) {
		emu_drop(e, DROP_OTHER);
		return;
	}
	answer_back(e, mad, pi, slid, dlid, 0, client);
}

void emu_route_send(struct emu *e, const struct emu_pkt *pk)
{
	uint8_t mad[MAD_SIZE];
	char d[96];
	memcpy(mad, pk->mad, MAD_SIZE);
	d[0] = '\0';
	if (mad[MH_BASE_VERSION] != 1) {
		describe(mad, d, sizeof(d));
		emu_add_violation(e, "MAD with BaseVersion %u (%s)", mad[MH_BASE_VERSION], d);
		emu_drop(e, DROP_OTHER);
		return;
	}
	int smp = mad[MH_CLASS] == CLASS_SMP_DR || mad[MH_CLASS] == CLASS_SMP_LID;
	if (smp && pk->len != MAD_SIZE) {
		describe(mad, d, sizeof(d));
		emu_add_violation(e, "SMP of %u bytes, not 256 (%s)", pk->len, d);
		emu_drop(e, DROP_OTHER);
		return;
	}
	struct walk w = { 0 };
	int bad = 0;
	if (mad[MH_CLASS] == CLASS_SMP_DR) {
		if (get16(mad + MH_DR_SLID) != 0xffff || get16(mad + MH_DR_DLID) != 0xffff) {
			describe(mad, d, sizeof(d));
			emu_add_violation(e, "directed-route SMP with DrSLID %u / DrDLID %u: "
					  "only permissive LIDs are emulated (%s)",
					  get16(mad + MH_DR_SLID), get16(mad + MH_DR_DLID), d);
			emu_drop(e, DROP_OTHER);
			return;
		}
		int back = get16(mad + MH_STATUS) & 0x8000;
		uint32_t to = back ? dr_back(e, mad, pk->port, &w, &bad) :
			      dr_out(e, mad, pk->port, &w, &bad);
		if (to == EMU_NONE) {
			describe(pk->mad, d, sizeof(d));
			if (bad)
				emu_add_violation(e, "directed route (%s): %s", d, w.why);
			emu_drop(e, w.fault ? DROP_FAULT : bad ? DROP_OTHER : DROP_ROUTE);
			return;
		}
		if (back)
			emu_queue_deliver(e, to, 0xffff, 0, mad, MAD_SIZE);
		else
			dr_arrive(e, mad, to);
		return;
	}
	uint32_t dlid = pk->lid;
	uint32_t slid = src_lid(e, pk->port);
	/* unicast: a pLID below 0xc000 or an 18-bit vLID (mad/emu/emu_xlid.c) */
	int unicast = (dlid && dlid < FAB_MLID_BASE) || emu_xlid_is_vlid(dlid);
	if (!unicast || !slid)
		describe(mad, d, sizeof(d));
	if (!unicast) {
		emu_add_violation(e, "LID-routed MAD to LID 0x%x, not a unicast LID (%s)",
				  dlid, d);
		emu_drop(e, DROP_OTHER);
		return;
	}
	if (!slid) {
		emu_add_violation(e, "LID-routed MAD sent from a port with no LID (%s)", d);
		emu_drop(e, DROP_OTHER);
		return;
	}
	uint32_t to = lid_walk(e, pk->port, dlid, &w);
	if (to == EMU_NONE) {
		describe(mad, d, sizeof(d));
		if (!w.fault)
			emu_add_violation(e, "LID-routed MAD (%s) from LID %u to LID %u "
					  "lost: %s", d, slid, dlid, w.why);
		emu_drop(e, w.fault ? DROP_FAULT : DROP_ROUTE);
		return;
	}
	lid_arrive(e, mad, pk->len, to, w.in_port, slid, dlid, pk->qpn, 1);
}

/* ---- links and traps ---- */

/*
 * A generic notice of type from port p0 (its LID) to its SM LID,
 * LID-routed; details: its 54 bytes of DataDetails.
 */
static void send_trap(struct emu *e, uint32_t p0, uint8_t type, int producer,
		      int trap, const uint8_t *details)
{
	const struct emu_port *p = &e->ports[p0];
	if (e->nodes[p->node].dead || !p->lid || !p->sm_lid)
		return;
	uint8_t mad[MAD_SIZE];
	memset(mad, 0, sizeof(mad));
	mad[MH_BASE_VERSION] = 1;
	mad[MH_CLASS] = CLASS_SMP_LID;
	mad[MH_CLASS_VERSION] = 1;
	mad[MH_METHOD] = METHOD_TRAP;
	put64(mad + MH_TID, 0xe0000000u | (e->trap_tid++ & 0x0fffffffu));
	put16(mad + MH_ATTR_ID, ATTR_NOTICE);
	put64(mad + MH_MKEY, p->mk.key);
	/* Notice (spec 13.4.8.2): IsGeneric, Type, ProducerType */
	uint8_t *d = mad + MH_DATA;
	d[0] = (uint8_t)(0x80 | type);
	put24(d + 1, (uint32_t)producer);
	put16(d + 4, (uint16_t)trap);	/* TrapNumber */
	put16(d + 6, p->lid);		/* IssuerLID */
	memcpy(d + 10, details, NOTICE_DETAILS);
	e->cnt.traps_sent++;
	struct walk w = { 0 };
	uint32_t to = lid_walk(e, p0, p->sm_lid, &w);
	if (to == EMU_NONE) {
		emu_drop(e, w.fault ? DROP_FAULT : DROP_ROUTE);
		return;
	}
	lid_arrive(e, mad, MAD_SIZE, to, w.in_port, p->lid, p->sm_lid, 0, 0);
}

static void send_trap128(struct emu *e, uint32_t node)
{
	uint8_t dd[NOTICE_DETAILS] = { 0 };
	uint32_t p0 = e->nodes[node].first_port;
	put16(dd + 0, e->ports[p0].lid);	/* LIDADDR */
	send_trap(e, p0, NOTICE_URGENT, FAB_SWITCH, 128, dd);
}

/* CapabilityMask.IsSM set on a CA port: trap 144 to its SM, once (as ibsim). */
void emu_trap144(struct emu *e, uint32_t pi)
{
	uint8_t dd[NOTICE_DETAILS] = { 0 };
	put16(dd + 2, e->ports[pi].lid);	/* LIDADDR, then CapabilityMask */
	put32(dd + 6, e->ports[pi].capmask);
	send_trap(e, pi, NOTICE_URGENT, FAB_CA, 144, dd);
}

/*
 * Trap 256, Bad M_Key (a security notice; its DataDetails in mad/mkey.h,
 * written here from the spec's offsets): sent once per violation, as the
 * emulator sends every trap (no repeat until a TrapRepress).  A
 * directed-route SMP's return path is copied from its entries 1..hop
 * count, at most 30 (DRPathTruncated beyond).
 */
void emu_trap256(struct emu *e, uint32_t pi, const uint8_t *smp)
{
	uint8_t dd[NOTICE_DETAILS] = { 0 };
	put16(dd + 2, e->ports[pi].lid);		/* LIDADDR */
	dd[6] = smp[MH_METHOD];
	memcpy(dd + 8, smp + MH_ATTR_ID, 2);
	memcpy(dd + 10, smp + MH_ATTR_MOD, 4);
	memcpy(dd + 14, smp + MH_MKEY, 8);		/* the key it carried */
	if (smp[MH_CLASS] == CLASS_SMP_DR) {
		unsigned hops = smp[MH_HOP_CNT];
		uint8_t flags = 0x80;			/* DRNotice */
		if (hops > MKEY_DR_PATH_MAX) {
			hops = MKEY_DR_PATH_MAX;
			flags |= 0x40;			/* DRPathTruncated */
		}
		memcpy(dd + 4, smp + MH_DR_SLID, 2);	/* DRSLID */
		dd[23] = (uint8_t)(flags | hops);	/* DRHopCount */
		memcpy(dd + 24, smp + MH_RETURN_PATH + 1, hops);
	}
	send_trap(e, pi, NOTICE_SECURITY, port_node(e, pi)->type, MKEY_TRAP, dd);
}

/* Both ends of a link changed state: switches note it and tell their SM. */
static void link_changed(struct emu *e, uint32_t a, uint32_t b)
{
	uint32_t na = e->ports[a].node, nb = e->ports[b].node;
	uint32_t nodes[2] = { na, nb };
	for (int i = 0; i < 2; i++) {
		struct emu_node *n = &e->nodes[nodes[i]];
		if (!is_switch(n) || (i == 1 && nb == na))
			continue;
		node_sw(e, n)->psc = 1;
		send_trap128(e, nodes[i]);
	}
}

void emu_port_went_down(struct emu *e, uint32_t pi, uint8_t phys)
{
	struct emu_port *a = &e->ports[pi];
	if (a->phys != PHYS_UP) {
		a->phys = phys;
		return;
	}
	struct emu_port *b = &e->ports[a->remote];
	a->state = b->state = PORT_DOWN;
	a->phys = phys;
	b->phys = PHYS_POLLING;
	link_changed(e, pi, a->remote);
}

int emu_port_try_up(struct emu *e, uint32_t pi)
{
	struct emu_port *a = &e->ports[pi];
	const uint8_t off = EP_UNPLUGGED | EP_DISABLED | EP_SLEEP;
	if (!a->num || a->remote == EMU_NONE || a->phys == PHYS_UP)
		return 0;
	struct emu_port *b = &e->ports[a->remote];
	if (!(a->flags & (EP_DISABLED | EP_SLEEP)))
		a->phys = PHYS_POLLING;
	if ((a->flags | b->flags) & off)
		return 0;
	a->state = b->state = PORT_INIT;
	a->phys = b->phys = PHYS_UP;
	link_changed(e, pi, a->remote);
	return 1;
}
