/*
 * The emulated subnet management agents (spec vol. 1, 14.2.5): NodeInfo,
 * NodeDescription, PortInfo, SwitchInfo, GUIDInfo, P_KeyTable,
 * SLtoVLMappingTable, VLArbitrationTable, LinearForwardingTable,
 * MulticastForwardingTable, and vendor attributes registered at run time.
 * Each attribute is encoded and decoded here, byte by byte, from the
 * spec's layouts; nothing comes from the SM's codec.  Every Get and Set
 * passes the M_Key check first (emu_mkey_admit; the rules, pure, in
 * mad/mkey.c, shared with the SM only for the decisions): PortInfo shows
 * and takes the M_Key fields of the port whose key governs (a switch's
 * port 0), M_KeyViolations included (bytes 44-45, written by a Set as
 * the IBA's RW field).
 */
#include "mad/emu/emu_int.h"
#include "sm/base/clock.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One SMP being answered. */
struct req {
	struct emu *e;
	struct emu_node *n;
	uint32_t node;
	uint8_t in_port;
	uint8_t method;
	int lid_routed;
	uint16_t attr;
	uint32_t mod;
	uint8_t *d;		/* the 64-byte SMP data */
	int hide_mkey;		/* M_Key check failed at ProtectBits 1: PortInfo:M_Key reads 0 */
};

static const char *const state_names[] = { "NOP", "Down", "Init", "Armed", "Active" };

static const char *state_name(unsigned s)
{
	return s < 5 ? state_names[s] : "reserved";
}

static void violation(struct req *r, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Records "<attr> Set on <node> [port]: <detail>". */
static void violation(struct req *r, const char *what, const char *fmt, ...)
{
	char detail[128];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	emu_add_violation(r->e, "%s %s on %s 0x%016llx \"%.32s\": %s", what,
			  r->method == METHOD_SET ? "Set" : "Get",
			  is_switch(r->n) ? "switch" : "CA",
			  (unsigned long long)r->n->guid, r->n->desc, detail);
}

/* ---- NodeInfo, NodeDescription, GUIDInfo ---- */

static int node_info(struct req *r)
{
	const struct emu_node *n = r->n;
	const struct emu_port *p = &r->e->ports[n->first_port +
						(is_switch(n) ? 0 : r->in_port)];
	uint8_t *d = r->d;
	if (r->method != METHOD_GET)
		return ST_BAD_METHOD_ATTR;
	memset(d, 0, 64);
	d[0] = 1;			/* BaseVersion */
	d[1] = 1;			/* ClassVersion */
	d[2] = n->type;
	d[3] = n->nports;
	put64(d + 4, n->sys_guid);
	put64(d + 12, n->guid);
	put64(d + 20, p->guid);		/* switches: port 0's */
	put16(d + 28, n->partition_cap);
	put16(d + 30, n->device_id);
	put32(d + 32, n->revision);
	d[36] = r->in_port;		/* LocalPortNum */
	put24(d + 37, n->vendor_id);
	return 0;
}

static int node_desc(struct req *r)
{
	if (r->method != METHOD_GET)
		return ST_BAD_METHOD_ATTR;
	memset(r->d, 0, 64);
	memcpy(r->d, r->n->desc, strnlen(r->n->desc, EMU_DESC_LEN));
	return 0;
}

/* The port an attribute modifier names: switches by number, CAs 0 = arrival port. */
static uint32_t mod_port(const struct req *r, uint32_t num)
{
	if (num > r->n->nports)
		return EMU_NONE;
	if (!is_switch(r->n) && num == 0)
		num = r->in_port;
	return r->n->first_port + num;
}

static int guid_info(struct req *r)
{
	if (r->method != METHOD_GET)
		return ST_BAD_METHOD_ATTR;
	uint32_t pi = mod_port(r, 0);
	memset(r->d, 0, 64);
	if (r->mod != 0)
		return ST_BAD_FIELD;	/* GUIDCap 1: block 0 only */
	put64(r->d, r->e->ports[pi].guid);
	return 0;
}

/* ---- PortInfo ---- */

static int is_end_port(const struct emu_node *n, const struct emu_port *p)
{
	return is_switch(n) ? p->num == 0 : p->num != 0;
}

/*
 * The port whose M_Key fields a PortInfo of port p shows and takes: its
 * own on a CA; port 0's on a switch (one key governs the switch's SMA,
 * IBA 14.2.4; its external ports have none of their own).
 */
static struct emu_port *key_port(const struct req *r, const struct emu_port *p)
{
	return &r->e->ports[is_switch(r->n) ? r->n->first_port :
			    r->n->first_port + p->num];
}

static void encode_portinfo(const struct req *r, const struct emu_port *p)
{
	const struct emu_node *n = r->n;
	const struct mkey_port *mk = &key_port(r, p)->mk;
	uint8_t *d = r->d;
	int end = is_end_port(n, p);
	int base_sp0 = is_switch(n) && !p->num && !node_sw(r->e, n)->enhanced_port0;
	memset(d, 0, 64);
	put64(d + 0, r->hide_mkey ? 0 : mk->key);
	put64(d + 8, end ? p->gid_prefix : 0);
	put16(d + 16, end ? p->lid : 0);
	put16(d + 18, end ? p->sm_lid : 0);
	put32(d + 20, p->capmask);
	put16(d + 26, mk->lease_s);
	d[28] = r->in_port;				/* LocalPortNum */
	d[29] = p->width_en;
	d[30] = p->width_sup;
	d[31] = p->width_act;
	d[32] = (uint8_t)(p->speed_sup << 4 | p->state);
	d[33] = (uint8_t)(p->phys << 4 | p->link_down_def);
	d[34] = (uint8_t)(mk->protect << 6 | (end && !base_sp0 ? p->lmc : 0));
	d[35] = (uint8_t)(p->speed_act << 4 | p->speed_en);
	d[36] = (uint8_t)(p->neighbor_mtu << 4 | p->sm_sl);
	d[37] = (uint8_t)(p->vl_cap << 4);		/* InitType 0 */
	d[38] = p->vl_high_limit;
	d[39] = p->vlarb_high_cap;
	d[40] = p->vlarb_low_cap;
	d[41] = p->mtu_cap;				/* InitTypeReply 0 */
	d[42] = (uint8_t)(p->vl_stall << 5 | p->hoq_life);
	d[43] = (uint8_t)(p->oper_vls << 4 | p->part_enf);
	put16(d + 44, mk->violations);			/* M_KeyViolations */
	d[50] = end ? 1 : 0;				/* GUIDCap */
	d[51] = end ? p->subnet_timeout : 0;		/* ClientReregister reads 0 */
	d[52] = 8;					/* RespTimeValue */
	d[53] = p->err_thresholds;
	d[62] = (uint8_t)(p->espeed_act << 4 | p->espeed_sup);
	d[63] = p->espeed_en;
}

/* The fields of a PortInfo Set (spec Table 155), decoded. */
struct pi_set {
	uint64_t mkey, gid_prefix;
	uint16_t lid, sm_lid, mkey_lease, mkey_violations;
	uint8_t width_en, speed_en, espeed_en;
	uint8_t state, phys, ldd, protect, lmc;
	uint8_t nmtu, sm_sl, vl_high, stall, hoq, opvls, penf;
	uint8_t rereg, timeout, errthr;
};

static void decode_portinfo(const uint8_t *d, struct pi_set *s)
{
	s->mkey = get64(d + 0);
	s->gid_prefix = get64(d + 8);
	s->lid = get16(d + 16);
	s->sm_lid = get16(d + 18);
	s->mkey_lease = get16(d + 26);
	s->mkey_violations = get16(d + 44);
	s->width_en = d[29];
	s->state = d[32] & 0x0f;
	s->phys = d[33] >> 4;
	s->ldd = d[33] & 0x0f;
	s->protect = d[34] >> 6;
	s->lmc = d[34] & 0x07;
	s->speed_en = d[35] & 0x0f;
	s->nmtu = d[36] >> 4;
	s->sm_sl = d[36] & 0x0f;
	s->vl_high = d[38];
	s->stall = d[42] >> 5;
	s->hoq = d[42] & 0x1f;
	s->opvls = d[43] >> 4;
	s->penf = d[43] & 0x0f;
	s->rereg = d[51] >> 7;
	s->timeout = d[51] & 0x1f;
	s->errthr = d[53];
	s->espeed_en = d[63] & 0x1f;
}

/* Checks a requested PortState change; returns 0, or a status (logged when a violation). */
static int check_state(struct req *r, const struct emu_port *p, unsigned want,
		       const char *what)
{
	const struct emu_port *peer = p->remote != EMU_NONE ?
				      &r->e->ports[p->remote] : NULL;
	unsigned cur = p->state;
	if (want == PORT_NOP || want == PORT_DOWN)
		return 0;
	if (want == cur && (want == PORT_ARMED || want == PORT_ACTIVE))
		return ST_BAD_FIELD;	/* a retry whose answer was lost: refused, not a bug */
	if (want == PORT_ARMED && cur == PORT_INIT)
		return 0;
	if (want == PORT_ACTIVE && cur == PORT_ARMED) {
		if (peer && link_up(r->e, r->n->first_port + p->num) &&
		    peer->state >= PORT_ARMED)
			return 0;
		violation(r, what, "port %u: PortState Active while the neighbour is %s",
			  p->num, peer ? state_name(peer->state) : "absent");
		return ST_BAD_FIELD;
	}
	violation(r, what, "port %u: PortState %s -> %s is not a valid transition",
		  p->num, state_name(cur), state_name(want));
	return ST_BAD_FIELD;
}

/* Validates a Set against port p; returns 0 or ST_BAD_FIELD. */
static int check_portinfo(struct req *r, const struct emu_port *p,
			  const struct pi_set *s)
{
	const char *what = "PortInfo";
	int end = is_end_port(r->n, p);
	int phys_port = p->num != 0;
	int st = 0;
	if (end && s->lid >= FAB_MLID_BASE) {
		violation(r, what, "port %u: LID 0x%x is not a unicast LID", p->num, s->lid);
		st = ST_BAD_FIELD;
	}
	/* LID 0 only with PortState Down: a reset (an idle VF, sm/model/vm.c) */
	if (end && s->lid == 0 && (p->flags & EP_LID_SET) && s->state != PORT_DOWN) {
		violation(r, what, "port %u: LID 0 on a port whose LID was set", p->num);
		st = ST_BAD_FIELD;
	}
	if (end && s->sm_lid >= FAB_MLID_BASE) {
		violation(r, what, "port %u: MasterSMLID 0x%x is not a unicast LID",
			  p->num, s->sm_lid);
		st = ST_BAD_FIELD;
	}
	if (!phys_port)
		return st;
	if (s->width_en && s->width_en != 0xff &&
	    (s->width_en & ~p->width_sup)) {
		violation(r, what, "port %u: LinkWidthEnabled 0x%x beyond supported 0x%x",
			  p->num, s->width_en, p->width_sup);
		st = ST_BAD_FIELD;
	}
	if (s->speed_en && s->speed_en != 0x0f &&
	    (s->speed_en & ~p->speed_sup)) {
		violation(r, what, "port %u: LinkSpeedEnabled 0x%x beyond supported 0x%x",
			  p->num, s->speed_en, p->speed_sup);
		st = ST_BAD_FIELD;
	}
	if (s->phys != 0 && s->phys != PHYS_POLLING && s->phys != PHYS_DISABLED) {
		violation(r, what, "port %u: PortPhysicalState %u cannot be set", p->num,
			  s->phys);
		st = ST_BAD_FIELD;
	}
	if (s->ldd > PHYS_POLLING) {
		violation(r, what, "port %u: LinkDownDefaultState %u is reserved", p->num,
			  s->ldd);
		st = ST_BAD_FIELD;
	}
	if (s->nmtu == 0 || s->nmtu > p->mtu_cap) {
		violation(r, what, "port %u: NeighborMTU %u (MTUCap %u)", p->num, s->nmtu,
			  p->mtu_cap);
		st = ST_BAD_FIELD;
	}
	if (s->opvls > p->vl_cap) {
		violation(r, what, "port %u: OperationalVLs %u above VLCap %u", p->num,
			  s->opvls, p->vl_cap);
		st = ST_BAD_FIELD;
	}
	if (s->state > PORT_ACTIVE || s->state == PORT_INIT) {
		violation(r, what, "port %u: PortState %u cannot be set", p->num, s->state);
		return ST_BAD_FIELD;
	}
	if (st)
		return st;
	return check_state(r, p, s->state, what);
}

static void apply_portinfo(struct req *r, uint32_t pi, const struct pi_set *s)
{
	struct emu *e = r->e;
	struct emu_port *p = &e->ports[pi];
	int end = is_end_port(r->n, p);
	if (end) {
		/* the Set passed the M_Key check: it may change the key, the
		 * protection, the lease and reset M_KeyViolations (14.2.4) */
		mkey_set(&p->mk, s->mkey, s->protect, s->mkey_lease);
		p->mk.violations = s->mkey_violations;
		if (s->lid)
			p->flags |= EP_LID_SET;
		else
			p->flags &= (uint8_t)~EP_LID_SET;
		p->lid = s->lid;
		p->sm_lid = s->sm_lid;
		p->gid_prefix = s->gid_prefix;
		p->subnet_timeout = s->timeout;
		if (!is_switch(r->n) || node_sw(e, r->n)->enhanced_port0)
			p->lmc = s->lmc;
		if (s->rereg && !is_switch(r->n)) {
			p->rereg++;
			e->cnt.client_reregs++;
		}
	}
	p->sm_sl = s->sm_sl;
	if (!p->num)
		return;
	if (s->width_en)
		p->width_en = s->width_en == 0xff ? p->width_sup : s->width_en;
	if (s->speed_en)
		p->speed_en = s->speed_en == 0x0f ? p->speed_sup : s->speed_en;
	if (s->espeed_en)
		p->espeed_en = s->espeed_en;
	if (s->ldd)
		p->link_down_def = s->ldd;
	p->neighbor_mtu = s->nmtu;
	if (s->opvls)
		p->oper_vls = s->opvls;
	p->vl_high_limit = s->vl_high;
	p->vl_stall = s->stall;
	p->hoq_life = s->hoq;
	p->part_enf = s->penf;
	p->err_thresholds = s->errthr;
	/* state last: it may take the link down */
	if (s->phys == PHYS_DISABLED) {
		p->flags |= EP_DISABLED;
		emu_port_went_down(e, pi, PHYS_DISABLED);
	} else if (s->state == PORT_DOWN) {
		if (p->link_down_def == PHYS_SLEEP) {
			p->flags |= EP_SLEEP;
			emu_port_went_down(e, pi, PHYS_SLEEP);
		} else {
			/* LinkDownDefaultState Polling: the link retrains at once */
			emu_port_went_down(e, pi, PHYS_POLLING);
			emu_port_try_up(e, pi);
		}
	} else if (s->state == PORT_ARMED || s->state == PORT_ACTIVE) {
		p->state = s->state;
	}
	if (s->phys == PHYS_POLLING) {
		p->flags &= (uint8_t)~(EP_DISABLED | EP_SLEEP);
		emu_port_try_up(e, pi);
	}
}

static int port_info(struct req *r)
{
	struct emu *e = r->e;
	if (r->mod > 0xff) {
		if (r->method == METHOD_SET)
			violation(r, "PortInfo", "attribute modifier 0x%x", r->mod);
		return ST_BAD_FIELD;
	}
	uint32_t pi = mod_port(r, r->mod);
	if (pi == EMU_NONE) {
		if (r->method == METHOD_SET)
			violation(r, "PortInfo", "port %u does not exist (%u ports)",
				  r->mod, r->n->nports);
		memset(r->d, 0, 64);
		return ST_BAD_FIELD;
	}
	struct emu_port *p = &e->ports[pi];
	int st = 0;
	if (r->method == METHOD_SET) {
		if (!is_switch(r->n) && p->num != r->in_port) {
			violation(r, "PortInfo", "port %u written through port %u "
				  "(a CA takes PortInfo Set for its arrival port only)",
				  p->num, r->in_port);
			st = ST_BAD_FIELD;
		} else {
			struct pi_set s;
			decode_portinfo(r->d, &s);
			st = check_portinfo(r, p, &s);
			if (!st)
				apply_portinfo(r, pi, &s);
		}
	} else if (r->method != METHOD_GET) {
		return ST_BAD_METHOD_ATTR;
	}
	encode_portinfo(r, p);
	return st;
}

/* ---- SwitchInfo ---- */

static void encode_switchinfo(const struct emu_switch *s, uint8_t *d)
{
	memset(d, 0, 64);
	put16(d + 0, s->lft_cap);
	put16(d + 2, 0);		/* RandomFDBCap */
	put16(d + 4, s->mft_cap);
	put16(d + 6, s->lft_top);
	d[8] = s->def_port;
	d[9] = s->def_mc_prim;
	d[10] = s->def_mc_notprim;
	/* OptimizedSLtoVLMappingProgramming: bits 1:0, bit 0 = supported */
	d[11] = (uint8_t)(s->lifetime << 3 | s->psc << 2 | (s->opt_sl2vl ? 1 : 0));
	put16(d + 12, 0);		/* LIDsPerPort */
	put16(d + 14, s->partition_enf_cap);
	d[16] = (uint8_t)(s->enforce << 4 | s->enhanced_port0 << 3);
	put16(d + 18, s->mft_top);
}

static int switch_info(struct req *r)
{
	struct emu_switch *s = node_sw(r->e, r->n);
	int st = 0;
	if (!s)
		return ST_BAD_METHOD_ATTR;
	if (r->method == METHOD_SET) {
		const uint8_t *d = r->d;
		uint16_t top = get16(d + 6), mtop = get16(d + 18);
		if (top >= s->lft_cap) {
			violation(r, "SwitchInfo", "LinearFDBTop %u not below LinearFDBCap %u",
				  top, s->lft_cap);
			st = ST_BAD_FIELD;
		}
		if (mtop && (mtop < FAB_MLID_BASE - 1 ||
			     mtop >= FAB_MLID_BASE + s->mft_cap)) {
			violation(r, "SwitchInfo", "MulticastFDBTop 0x%x outside 0x%x-0x%x",
				  mtop, FAB_MLID_BASE - 1, FAB_MLID_BASE + s->mft_cap - 1);
			st = ST_BAD_FIELD;
		}
		if (!st) {
			s->lft_top = top;
			s->mft_top = mtop;
			s->def_port = d[8];
			s->def_mc_prim = d[9];
			s->def_mc_notprim = d[10];
			s->lifetime = d[11] >> 3;
			if (d[11] & 0x04)
				s->psc = 0;	/* PortStateChange: write 1 to clear */
			s->enforce = d[16] >> 4;
		}
	} else if (r->method != METHOD_GET) {
		return ST_BAD_METHOD_ATTR;
	}
	encode_switchinfo(s, r->d);
	return st;
}

/* ---- forwarding tables ---- */

static int lft_grow(struct emu_switch *s, uint32_t need)
{
	if (need <= s->lft_len)
		return 0;
	uint32_t len = (need + 4095) & ~4095u;	/* few reallocs, little slack */
	if (len > s->lft_cap)
		len = s->lft_cap;
	uint8_t *l = realloc(s->lft, len);
	if (!l)
		return -1;
	memset(l + s->lft_len, 0xff, len - s->lft_len);
	s->lft = l;
	s->lft_len = len;
	return 0;
}

static int lft(struct req *r)
{
	struct emu_switch *s = node_sw(r->e, r->n);
	if (!s)
		return ST_BAD_METHOD_ATTR;
	uint32_t block = r->mod, base = block * 64;
	if (block > 0xffff || base >= s->lft_cap) {
		if (r->method == METHOD_SET)
			violation(r, "LinearForwardingTable", "block %u beyond LinearFDBCap %u",
				  block, s->lft_cap);
		return ST_BAD_FIELD;
	}
	if (r->method == METHOD_SET) {
		for (int i = 0; i < 64; i++)
			if (r->d[i] != 0xff && r->d[i] > r->n->nports) {
				violation(r, "LinearForwardingTable",
					  "LID %u to port %u (%u ports)", base + (uint32_t)i,
					  r->d[i], r->n->nports);
				return ST_BAD_FIELD;
			}
		if (lft_grow(s, base + 64) < 0)
			return -1;
		memcpy(s->lft + base, r->d, 64);
		if (r->e->lft_hook)
			r->e->lft_hook(r->e->lft_hook_ctx, r->e, r->n->guid, block);
	} else if (r->method != METHOD_GET) {
		return ST_BAD_METHOD_ATTR;
	}
	for (uint32_t i = 0; i < 64; i++)
		r->d[i] = base + i < s->lft_len ? s->lft[base + i] : 0xff;
	return 0;
}

static int mft(struct req *r)
{
	struct emu_switch *s = node_sw(r->e, r->n);
	if (!s)
		return ST_BAD_METHOD_ATTR;
	uint32_t block = r->mod & 0x1ff, pos = r->mod >> 28;
	if ((r->mod & 0x0ffffe00) || block * 32 >= s->mft_cap ||
	    pos >= s->mft_positions) {
		if (r->method == METHOD_SET)
			violation(r, "MulticastForwardingTable",
				  "attribute modifier 0x%x (block %u, position %u)", r->mod,
				  block, pos);
		return ST_BAD_FIELD;
	}
	if (r->method == METHOD_SET) {
		if (!s->mft) {
			s->mft = calloc((size_t)s->mft_cap * s->mft_positions,
					sizeof(*s->mft));
			if (!s->mft)
				return -1;
		}
		for (uint32_t i = 0; i < 32; i++)
			s->mft[(block * 32 + i) * s->mft_positions + pos] =
				get16(r->d + 2 * i);
		r->e->cnt.mft_sets++;
	} else if (r->method != METHOD_GET) {
		return ST_BAD_METHOD_ATTR;
	}
	for (uint32_t i = 0; i < 32; i++)
		put16(r->d + 2 * i, s->mft ? s->mft[(block * 32 + i) * s->mft_positions + pos] : 0);
	return 0;
}

/* ---- P_KeyTable, SLtoVLMappingTable, VLArbitrationTable ---- */

static int pkey_table(struct req *r)
{
	struct emu *e = r->e;
	uint32_t block = r->mod & 0xffff;
	uint32_t pi = is_switch(r->n) ? mod_port(r, r->mod >> 16) : mod_port(r, 0);
	if (pi == EMU_NONE || block * 32 >= e->ports[pi].pkey_cap) {
		if (r->method == METHOD_SET)
			violation(r, "P_KeyTable", "attribute modifier 0x%x: no such block",
				  r->mod);
		return ST_BAD_FIELD;
	}
	const struct emu_port *p = &e->ports[pi];
	uint16_t *t = e->pkeys + p->pkey_off;
	uint32_t n = p->pkey_cap - block * 32 < 32 ? p->pkey_cap - block * 32 : 32;
	if (r->method == METHOD_SET) {
		for (uint32_t i = 0; i < n; i++)
			t[block * 32 + i] = get16(r->d + 2 * i);
	} else if (r->method != METHOD_GET) {
		return ST_BAD_METHOD_ATTR;
	}
	memset(r->d, 0, 64);
	for (uint32_t i = 0; i < n; i++)
		put16(r->d + 2 * i, t[block * 32 + i]);
	return 0;
}

/*
 * The SLtoVLMappingTable pairs a switch's modifier names: in << 8 | out,
 * and where the switch advertises OptimizedSLtoVLMappingProgramming
 * (IBA 1.2.1 14.2.5.8), bit 17 = every input port, bit 16 = every output
 * port (the port field it replaces is ignored).  Only a Set may name
 * more than one pair.  Fills the range of inputs and outputs; 0 or -1.
 */
static int sl2vl_pairs(const struct req *r, uint32_t *in0, uint32_t *in1,
		       uint32_t *out0, uint32_t *out1)
{
	const struct emu_node *n = r->n;
	uint32_t in = (r->mod >> 8) & 0xff, out = r->mod & 0xff;
	uint32_t wild = node_sw(r->e, n)->opt_sl2vl && r->method == METHOD_SET ?
			0x30000u : 0;
	if ((r->mod & ~(0xffffu | wild)) ||
	    (!(r->mod & 0x20000u) && in > n->nports) ||
	    (!(r->mod & 0x10000u) && out > n->nports))
		return -1;
	*in0 = *in1 = in;
	*out0 = *out1 = out;
	if (r->mod & 0x20000u) {
		*in0 = 0;
		*in1 = n->nports;
	}
	if (r->mod & 0x10000u) {
		*out0 = 0;
		*out1 = n->nports;
	}
	return 0;
}

static int sl2vl(struct req *r)
{
	struct emu_node *n = r->n;
	uint32_t in0, in1, out0, out1, slots;
	if (is_switch(n)) {
		if (sl2vl_pairs(r, &in0, &in1, &out0, &out1) < 0) {
			if (r->method == METHOD_SET)
				violation(r, "SLtoVLMappingTable", "attribute modifier 0x%x",
					  r->mod);
			return ST_BAD_FIELD;
		}
		slots = (n->nports + 1u) * (n->nports + 1u);
	} else {
		if (r->mod & ~0xffu || (r->mod && r->mod > n->nports)) {
			if (r->method == METHOD_SET)
				violation(r, "SLtoVLMappingTable", "attribute modifier 0x%x",
					  r->mod);
			return ST_BAD_FIELD;
		}
		/* a CA: the port's own table, kept as pair (0, port) */
		in0 = in1 = 0;
		out0 = out1 = r->mod ? r->mod : r->in_port;
		slots = n->nports + 1u;
	}
	uint32_t width = is_switch(n) ? n->nports + 1u : 0;
	if (r->method == METHOD_SET) {
		if (!n->sl2vl) {
			if (!(n->sl2vl = malloc((size_t)slots * 8)))
				return -1;
			/* fresh hardware, as ibsim: identity SL i -> VL i */
			for (uint32_t k = 0; k < slots; k++)
				for (unsigned b = 0; b < 8; b++)
					n->sl2vl[k * 8 + b] = (uint8_t)((2 * b) << 4 | (2 * b + 1));
		}
		for (uint32_t i = in0; i <= in1; i++)
			for (uint32_t o = out0; o <= out1; o++)
				memcpy(n->sl2vl + (i * width + o) * 8, r->d, 8);
		r->e->cnt.sl2vl_sets++;
	} else if (r->method != METHOD_GET) {
		return ST_BAD_METHOD_ATTR;
	}
	uint32_t idx = in0 * width + out0;
	memset(r->d, 0, 64);
	if (n->sl2vl)
		memcpy(r->d, n->sl2vl + idx * 8, 8);
	else	/* never set: the identity */
		for (unsigned b = 0; b < 8; b++)
			r->d[b] = (uint8_t)((2 * b) << 4 | (2 * b + 1));
	return 0;
}

static int vl_arb(struct req *r)
{
	struct emu *e = r->e;
	uint32_t block = r->mod >> 16, num = r->mod & 0xffff;
	uint32_t pi = mod_port(r, num);
	const struct emu_port *p = pi == EMU_NONE ? NULL : &e->ports[pi];
	unsigned cap = !p ? 0 : block <= 2 ? p->vlarb_low_cap : p->vlarb_high_cap;
	if (!p || block < 1 || block > 4 || !cap || ((block == 2 || block == 4) && cap <= 32)) {
		if (r->method == METHOD_SET)
			violation(r, "VLArbitrationTable", "attribute modifier 0x%x", r->mod);
		return ST_BAD_FIELD;
	}
	if (r->method == METHOD_SET) {
		if (!e->vlarb && !(e->vlarb = calloc(e->n_ports, sizeof(*e->vlarb))))
			return -1;
		memcpy(e->vlarb[pi] + (block - 1) * 64, r->d, 64);
		e->cnt.vlarb_sets++;
	} else if (r->method != METHOD_GET) {
		return ST_BAD_METHOD_ATTR;
	}
	if (e->vlarb)
		memcpy(r->d, e->vlarb[pi] + (block - 1) * 64, 64);
	else
		memset(r->d, 0, 64);
	return 0;
}

/* ---- dispatch ---- */

static int vendor(struct req *r, const struct emu_vattr *v)
{
	struct emu_smp s = {
		.node = r->node,
		.node_guid = r->n->guid,
		.node_type = r->n->type,
		.nports = r->n->nports,
		.in_port = r->in_port,
		.method = r->method,
		.lid_routed = r->lid_routed,
		.attr = r->attr,
		.attr_mod = r->mod,
		.data = r->d,
	};
	/* the extended-LID attributes are built in (mad/emu/emu_xlid.c), no fn */
	return v->fn ? v->fn(v->ctx, r->e, &s) : emu_xlid_sma(r->e, &s);
}

static int dispatch(struct req *r)
{
	for (uint32_t i = 0; i < r->e->n_vattrs; i++)
		if (r->e->vattrs[i].attr == r->attr)
			return vendor(r, &r->e->vattrs[i]);
	if (emu_xlid_attr(r->attr))
		return vendor(r, &(struct emu_vattr){ r->attr, NULL, NULL });
	switch (r->attr) {
	case ATTR_NODE_INFO:
		return node_info(r);
	case ATTR_NODE_DESC:
		return node_desc(r);
	case ATTR_PORT_INFO:
		return port_info(r);
	case ATTR_SWITCH_INFO:
		return switch_info(r);
	case ATTR_LFT:
		return lft(r);
	case ATTR_PKEY_TABLE:
		return pkey_table(r);
	case ATTR_GUID_INFO:
		return guid_info(r);
	case ATTR_SL2VL:
		return sl2vl(r);
	case ATTR_VL_ARB:
		return vl_arb(r);
	case ATTR_MFT:
		return mft(r);
	}
	return ST_BAD_METHOD_ATTR;
}

enum mkey_verdict emu_mkey_admit(struct emu *e, uint32_t node, uint8_t in_port,
				 const uint8_t *mad)
{
	const struct emu_node *n = &e->nodes[node];
	uint32_t pi = n->first_port + (is_switch(n) ? 0 : in_port);
	enum mkey_verdict v = mkey_receive(&e->ports[pi].mk, get64(mad + MH_MKEY),
					   mad[MH_METHOD], clock_us());
	if (v == MKEY_DROP)
		emu_trap256(e, pi, mad);
	return v;
}

int emu_sma(struct emu *e, uint32_t node, uint8_t in_port, int lid_routed,
	    uint8_t *mad)
{
	struct req r = {
		.e = e,
		.n = &e->nodes[node],
		.node = node,
		.in_port = in_port,
		.method = mad[MH_METHOD],
		.lid_routed = lid_routed,
		.attr = get16(mad + MH_ATTR_ID),
		.mod = get32(mad + MH_ATTR_MOD),
		.d = mad + MH_DATA,
	};
	int st;
	if (r.method & METHOD_RESP)
		return 0;	/* an answer nobody waits for here */
	enum mkey_verdict v = emu_mkey_admit(e, node, in_port, mad);
	if (v == MKEY_DROP)
		return 0;	/* a violation: no answer (IBA 14.2.4.1) */
	r.hide_mkey = v == MKEY_PASS_HIDE;
	if (mad[MH_CLASS_VERSION] != 1) {
		emu_add_violation(e, "SMP with ClassVersion %u", mad[MH_CLASS_VERSION]);
		st = ST_BAD_VERSION;
	} else if (r.method != METHOD_GET && r.method != METHOD_SET) {
		st = ST_BAD_METHOD;
	} else {
		st = dispatch(&r);
		if (st < 0)
			return 0;
	}
	mad[MH_METHOD] = METHOD_RESP | METHOD_GET;	/* GetResp, also for Set */
	if (mad[MH_CLASS] == CLASS_SMP_DR)
		put16(mad + MH_STATUS, 0x8000 | ((unsigned)st & 0x7fff));
	else
		put16(mad + MH_STATUS, (unsigned)st);
	return 1;
}
