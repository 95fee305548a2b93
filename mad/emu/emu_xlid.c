/*
 * The emulator's side of the extended-LID extension (mad/xlid.h, ibsmd(8)
 * "Extended LIDs"): which devices have it, their XLIDCap and XLIDLFT
 * SMAs, secondary-LFT storage, and the forwarding and delivery of vLIDs
 * that mad/emu/emu_route.c asks for.
 *
 * The attributes are decoded and encoded here from the definition, byte
 * by byte, never with the SM's codec (mad/xlid.c): test_xlid.c runs both
 * over the same golden vectors, so one misreading shows against the other.
 *
 * Devices start without the extension, like all real hardware: XLIDCap
 * and XLIDLFT answer status 0x0c (unsupported attribute) until a test
 * makes the device capable (emu_xlid_set, emu_xlid_all).  A capable switch
 * keeps only the secondary-LFT blocks an SM has written with something in
 * them, sorted by block number: a vSwitch holds the block or two of its
 * own VFs, not 196,608 entries.
 */
#include "mad/emu/emu_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The definition, written out again (see the top of this file). */
#define X_ATTR_CAP	0xFF10
#define X_ATTR_LFT	0xFF11
#define X_VBASE		0x10000u
#define X_VLAST		0x3FFFFu
#define X_ENTRIES	196608u
#define X_NBLOCKS	3072u
#define X_SUPPORTED	0x80
#define X_ENABLED	0x40

struct xblock {
	uint32_t no;		/* block number */
	uint8_t port[64];
};

struct xnode {
	uint8_t capable;
	uint8_t enabled;	/* switch */
	uint8_t def_port;	/* switch; 0xff = drop */
	uint32_t cap, top;	/* switch: SecondaryLFTCap, SecondaryLFTTop */
	struct xblock *blocks;	/* switch: sorted by no, only non-empty ones */
	uint32_t n_blocks, cap_blocks;
};

struct emu_xlid {
	struct xnode *nodes;	/* e->n_nodes */
	uint32_t *vlid;		/* e->n_ports: a CA port's PortVLID */
	uint8_t *enabled;	/* e->n_ports: a CA port's Enabled */
};

/* ---- the decoder (the emulator's own) ---- */

static int xfail(char *err, size_t errlen, const char *what, uint32_t a,
		 uint32_t b)
{
	if (err && errlen)
		snprintf(err, errlen, what, a, b);
	return -1;
}

uint16_t emu_xlid_crc(const uint8_t *d, size_t n)
{
	/* CRC-16/CCITT-FALSE, the MSB-first shift register of the definition. */
	uint32_t reg = 0xFFFF;
	for (size_t i = 0; i < n; i++) {
		for (int b = 7; b >= 0; b--) {
			uint32_t in = (uint32_t)(d[i] >> b) & 1;
			uint32_t top = (reg >> 15) & 1;
			reg = (reg << 1) & 0xFFFF;
			if (top ^ in)
				reg ^= 0x1021;
		}
	}
	return (uint16_t)reg;
}

int emu_xlid_cap_decode(const uint8_t *d, struct emu_xcap *c, char *err,
			size_t errlen)
{
	uint16_t want = emu_xlid_crc(d, 62);
	if (get16(d + 62) != want)
		return xfail(err, errlen, "bad CRC 0x%04x, want 0x%04x",
			     get16(d + 62), want);
	if (d[0] != 1)
		return xfail(err, errlen, "Version %u, not %u", d[0], 1);
	if (d[1] & 0x3f)
		return xfail(err, errlen, "reserved bits 0x%02x in byte %u",
			     d[1] & 0x3f, 1);
	static const uint8_t reserved[] = { 2, 3, 13, 14, 15 };
	for (size_t i = 0; i < sizeof(reserved); i++)
		if (d[reserved[i]])
			return xfail(err, errlen, "reserved byte %u is 0x%02x",
				     reserved[i], d[reserved[i]]);
	for (uint32_t i = 20; i < 62; i++)
		if (d[i])
			return xfail(err, errlen, "reserved byte %u is 0x%02x",
				     i, d[i]);
	uint32_t cap = get32(d + 4), top = get32(d + 8), vlid = get32(d + 16);
	if ((cap & 63) || cap > X_ENTRIES)
		return xfail(err, errlen, "SecondaryLFTCap %u (a multiple of 64 "
			     "up to %u)", cap, X_ENTRIES);
	if (top > cap)
		return xfail(err, errlen, "SecondaryLFTTop %u above "
			     "SecondaryLFTCap %u", top, cap);
	if (vlid != 0 && (vlid < X_VBASE || vlid > X_VLAST))
		return xfail(err, errlen, "PortVLID 0x%x is not 0 or a vLID (0x%x up)",
			     vlid, X_VBASE);
	c->supported = (d[1] & X_SUPPORTED) != 0;
	c->enabled = (d[1] & X_ENABLED) != 0;
	c->lft_cap = cap;
	c->lft_top = top;
	c->default_port = d[12];
	c->port_vlid = vlid;
	return 0;
}

void emu_xlid_cap_encode(const struct emu_xcap *c, uint8_t *d)
{
	memset(d, 0, 64);
	d[0] = 1;
	d[1] = (uint8_t)((c->supported ? X_SUPPORTED : 0) |
			 (c->enabled ? X_ENABLED : 0));
	put32(d + 4, c->lft_cap);
	put32(d + 8, c->lft_top);
	d[12] = c->default_port;
	put32(d + 16, c->port_vlid);
	put16(d + 62, emu_xlid_crc(d, 62));
}

int emu_xlid_lft_check(uint32_t block, const uint8_t *d, unsigned nports,
		       uint32_t cap, char *err, size_t errlen)
{
	if (block >= X_NBLOCKS)
		return xfail(err, errlen, "block %u beyond the last, %u", block,
			     X_NBLOCKS - 1);
	if ((uint64_t)block * 64 >= cap)
		return xfail(err, errlen, "block %u beyond SecondaryLFTCap %u",
			     block, cap);
	for (uint32_t i = 0; i < 64; i++)
		if (d[i] != 0xff && d[i] > nports)
			return xfail(err, errlen, "port %u of a %u-port switch",
				     d[i], nports);
	return 0;
}

void emu_xlid_lrh_get(const uint8_t *lrh, uint32_t *dlid, uint32_t *slid)
{
	/* byte 1: SL 7:4, DLID[17:16] 3:2, LNH 1:0; byte 4: SLID[17:16] 7:6 */
	*dlid = ((uint32_t)(lrh[1] & 0x0c) << 14) | get16(lrh + 2);
	*slid = ((uint32_t)(lrh[4] & 0xc0) << 10) | get16(lrh + 6);
}

void emu_xlid_pr_get(const uint8_t *pr, uint32_t *dlid, uint32_t *slid)
{
	/* DLID at 40, SLID at 42; byte 58: DLID[17:16] 7:6, SLID[17:16] 5:4 */
	*dlid = ((uint32_t)(pr[58] & 0xc0) << 10) | get16(pr + 40);
	*slid = ((uint32_t)(pr[58] & 0x30) << 12) | get16(pr + 42);
}

/* ---- per-device state ---- */

static struct emu_xlid *xstate(struct emu *e)
{
	if (e->xlid)
		return e->xlid;
	struct emu_xlid *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->nodes = calloc(e->n_nodes, sizeof(*x->nodes));
	x->vlid = calloc(e->n_ports, sizeof(*x->vlid));
	x->enabled = calloc(e->n_ports, 1);
	if (!x->nodes || !x->vlid || !x->enabled) {
		free(x->nodes);
		free(x->vlid);
		free(x->enabled);
		free(x);
		return NULL;
	}
	for (uint32_t i = 0; i < e->n_nodes; i++)
		x->nodes[i].def_port = 0xff;
	e->xlid = x;
	return x;
}

void emu_xlid_free(struct emu *e)
{
	struct emu_xlid *x = e->xlid;
	if (!x)
		return;
	for (uint32_t i = 0; i < e->n_nodes; i++)
		free(x->nodes[i].blocks);
	free(x->nodes);
	free(x->vlid);
	free(x->enabled);
	free(x);
	e->xlid = NULL;
}

/* Makes node n capable (cap entries on a switch) or not (EMU_XLID_OFF). */
static int set_node(struct emu *e, uint32_t n, uint32_t cap)
{
	struct emu_xlid *x = xstate(e);
	if (!x)
		return -1;
	struct xnode *xn = &x->nodes[n];
	const struct emu_node *nd = &e->nodes[n];
	if (cap == EMU_XLID_OFF) {
		free(xn->blocks);
		memset(xn, 0, sizeof(*xn));
		xn->def_port = 0xff;
		for (uint32_t p = 0; p <= nd->nports; p++)
			x->vlid[nd->first_port + p] = x->enabled[nd->first_port + p] = 0;
		return 0;
	}
	if (is_switch(nd) && ((cap & 63) || cap > X_ENTRIES))
		return -1;
	xn->capable = 1;
	xn->cap = is_switch(nd) ? cap : 0;
	if (xn->top > xn->cap)
		xn->top = xn->cap;
	return 0;
}

/* The node of a node GUID or a CA port GUID (*port: that port's number), or EMU_NONE. */
static uint32_t node_of(const struct emu *e, uint64_t guid, int *port)
{
	uint32_t n = emu_node_index(e, guid);
	if (n != EMU_NONE)
		return n;
	uint32_t pi = guid_map_get(&e->port_map, guid);
	if (pi == FAB_NONE)
		return EMU_NONE;
	if (port)
		*port = e->ports[pi].num;
	return e->ports[pi].node;
}

int emu_xlid_set(struct emu *e, uint64_t guid, uint32_t cap)
{
	uint32_t n = node_of(e, guid, NULL);
	return n == EMU_NONE ? -1 : set_node(e, n, cap);
}

int emu_xlid_all(struct emu *e, uint32_t cap)
{
	if (cap != EMU_XLID_OFF && ((cap & 63) || cap > X_ENTRIES))
		return -1;
	for (uint32_t n = 0; n < e->n_nodes; n++)
		if (set_node(e, n, cap) < 0)
			return -1;
	return 0;
}

static const struct xnode *xnode_of(const struct emu *e, uint32_t n)
{
	return e->xlid && e->xlid->nodes[n].capable ? &e->xlid->nodes[n] : NULL;
}

/* The stored block no of a switch, or NULL (all 0xff). */
static struct xblock *find_block(const struct xnode *xn, uint32_t no)
{
	uint32_t lo = 0, hi = xn->n_blocks;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (xn->blocks[mid].no == no)
			return &xn->blocks[mid];
		if (xn->blocks[mid].no < no)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Stores a block; an all-0xff one is forgotten.  -1: out of memory. */
static int store_block(struct xnode *xn, uint32_t no, const uint8_t *d)
{
	int empty = 1;
	for (int i = 0; i < 64 && empty; i++)
		empty = d[i] == 0xff;
	uint32_t at = 0;
	while (at < xn->n_blocks && xn->blocks[at].no < no)
		at++;
	int have = at < xn->n_blocks && xn->blocks[at].no == no;
	if (empty) {
		if (have) {
			memmove(&xn->blocks[at], &xn->blocks[at + 1],
				(xn->n_blocks - at - 1) * sizeof(*xn->blocks));
			xn->n_blocks--;
		}
		return 0;
	}
	if (!have) {
		if (xn->n_blocks == xn->cap_blocks) {
			uint32_t nc = xn->cap_blocks ? xn->cap_blocks * 2 : 4;
			struct xblock *b = realloc(xn->blocks, nc * sizeof(*b));
			if (!b)
				return -1;
			xn->blocks = b;
			xn->cap_blocks = nc;
		}
		memmove(&xn->blocks[at + 1], &xn->blocks[at],
			(xn->n_blocks - at) * sizeof(*xn->blocks));
		xn->n_blocks++;
		xn->blocks[at].no = no;
	}
	memcpy(xn->blocks[at].port, d, 64);
	return 0;
}

/* ---- the SMA ---- */

static void xviolation(struct emu *e, const struct emu_smp *s, const char *what,
		       const char *detail)
{
	const struct emu_node *n = &e->nodes[s->node];
	emu_add_violation(e, "%s %s on %s 0x%016llx \"%.32s\": %s", what,
			  s->method == METHOD_SET ? "Set" : "Get",
			  is_switch(n) ? "switch" : "CA",
			  (unsigned long long)n->guid, n->desc, detail);
}

/* The device's XLIDCap as it reads (port: a CA's port number). */
static void cap_now(const struct emu *e, uint32_t node, uint32_t port,
		    struct emu_xcap *c)
{
	const struct xnode *xn = &e->xlid->nodes[node];
	const struct emu_node *nd = &e->nodes[node];
	memset(c, 0, sizeof(*c));
	c->supported = 1;
	if (is_switch(nd)) {
		c->enabled = xn->enabled;
		c->lft_cap = xn->cap;
		c->lft_top = xn->top;
		c->default_port = xn->def_port;
	} else {
		c->enabled = e->xlid->enabled[nd->first_port + port];
		c->default_port = 0xff;
		c->port_vlid = e->xlid->vlid[nd->first_port + port];
	}
}

static int sma_cap(struct emu *e, struct emu_smp *s)
{
	const struct emu_node *nd = &e->nodes[s->node];
	struct xnode *xn = &e->xlid->nodes[s->node];
	int sw = is_switch(nd);
	char why[160];
	if (sw ? s->attr_mod != 0 : (s->attr_mod == 0 || s->attr_mod > nd->nports)) {
		if (s->method == METHOD_SET) {
			snprintf(why, sizeof(why), "modifier %u (%s)", s->attr_mod,
				 sw ? "a switch takes 0" : "not a port");
			xviolation(e, s, "XLIDCap", why);
		}
		return ST_BAD_FIELD;
	}
	if (s->method == METHOD_SET) {
		struct emu_xcap c;
		char err[120];
		if (emu_xlid_cap_decode(s->data, &c, err, sizeof(err)) < 0) {
			snprintf(why, sizeof(why), "%s", err);
			xviolation(e, s, "XLIDCap", why);
			return ST_BAD_FIELD;
		}
		/* Supported and SecondaryLFTCap are read-only: ignored, as hardware does. */
		if (sw) {
			if (c.lft_top > xn->cap || c.port_vlid ||
			    (c.default_port != 0xff &&
			     (c.default_port == 0 || c.default_port > nd->nports))) {
				snprintf(why, sizeof(why), "SecondaryLFTTop %u (cap %u), "
					 "DefaultPort %u (%u ports), PortVLID 0x%x (a switch has none)",
					 c.lft_top, xn->cap, c.default_port, nd->nports,
					 c.port_vlid);
				xviolation(e, s, "XLIDCap", why);
				return ST_BAD_FIELD;
			}
			xn->enabled = (uint8_t)c.enabled;
			xn->top = c.lft_top;
			xn->def_port = c.default_port;
		} else {
			if (c.lft_top) {
				snprintf(why, sizeof(why), "SecondaryLFTTop %u on a CA",
					 c.lft_top);
				xviolation(e, s, "XLIDCap", why);
				return ST_BAD_FIELD;
			}
			uint32_t pi = nd->first_port + s->attr_mod;
			e->xlid->enabled[pi] = (uint8_t)c.enabled;
			e->xlid->vlid[pi] = c.port_vlid;
		}
	}
	struct emu_xcap now;
	cap_now(e, s->node, s->attr_mod, &now);
	emu_xlid_cap_encode(&now, s->data);
	return 0;
}

static int sma_lft(struct emu *e, struct emu_smp *s)
{
	const struct emu_node *nd = &e->nodes[s->node];
	struct xnode *xn = &e->xlid->nodes[s->node];
	char err[120], why[160];
	if (!is_switch(nd))
		return ST_BAD_METHOD_ATTR;
	if (s->method == METHOD_SET) {
		if (emu_xlid_lft_check(s->attr_mod, s->data, nd->nports, xn->cap,
				       err, sizeof(err)) < 0) {
			snprintf(why, sizeof(why), "%s", err);
			xviolation(e, s, "XLIDLFT", why);
			return ST_BAD_FIELD;
		}
		if (store_block(xn, s->attr_mod, s->data) < 0)
			return -1;
		if (e->lft_hook)	/* a state the switches pass through */
			e->lft_hook(e->lft_hook_ctx, e, nd->guid, s->attr_mod);
	} else if ((uint64_t)s->attr_mod * 64 >= xn->cap) {
		return ST_BAD_FIELD;
	}
	const struct xblock *b = find_block(xn, s->attr_mod);
	if (b)
		memcpy(s->data, b->port, 64);
	else
		memset(s->data, 0xff, 64);
	return 0;
}

int emu_xlid_sma(struct emu *e, struct emu_smp *s)
{
	if (!xnode_of(e, s->node))
		return ST_BAD_METHOD_ATTR;	/* no extension: like any unknown attribute */
	return s->attr == X_ATTR_CAP ? sma_cap(e, s) : sma_lft(e, s);
}

int emu_xlid_attr(uint16_t attr)
{
	return attr == X_ATTR_CAP || attr == X_ATTR_LFT;
}

/* ---- forwarding and delivery ---- */

int emu_xlid_is_vlid(uint32_t lid)
{
	return lid >= X_VBASE && lid <= X_VLAST;
}

int emu_xlid_lookup(const struct emu *e, uint32_t node, uint32_t vlid,
		    uint8_t *out, char *why, size_t len)
{
	const struct xnode *xn = xnode_of(e, node);
	if (!xn || !xn->enabled) {
		snprintf(why, len, "vLID 0x%x at a switch %s", vlid,
			 xn ? "whose XLIDCap is not Enabled" : "without the extension");
		return -1;
	}
	uint32_t idx = vlid - X_VBASE;
	uint8_t p = 0xff;
	if (idx < xn->top) {
		const struct xblock *b = find_block(xn, idx / 64);
		if (b)
			p = b->port[idx % 64];
	}
	if (p == 0xff)
		p = xn->def_port;
	if (p == 0xff || p == 0 || p > e->nodes[node].nports) {
		snprintf(why, len, "vLID 0x%x: secondary LFT entry %u (Top %u, "
			 "DefaultPort %u)", vlid, p, xn->top, xn->def_port);
		return -1;
	}
	*out = p;
	return 0;
}

int emu_xlid_port_match(const struct emu *e, uint32_t pi, uint32_t vlid)
{
	const struct emu_port *p = &e->ports[pi];
	if (!xnode_of(e, p->node) || is_switch(&e->nodes[p->node]) || !p->num)
		return 0;
	return e->xlid->vlid[pi] == vlid && e->xlid->enabled[pi] &&
	       p->state == PORT_ACTIVE;
}

uint32_t emu_xlid_port_vlid(const struct emu *e, uint32_t pi)
{
	const struct emu_port *p = &e->ports[pi];
	if (!xnode_of(e, p->node) || !e->xlid->enabled[pi] ||
	    p->state != PORT_ACTIVE)
		return 0;
	return e->xlid->vlid[pi];
}

/* ---- inspection ---- */

static uint32_t sw_index(const struct emu *e, uint64_t guid)
{
	uint32_t n = emu_node_index(e, guid);
	if (n == EMU_NONE || !is_switch(&e->nodes[n]) || !xnode_of(e, n))
		return EMU_NONE;
	return n;
}

int emu_xlid_entry(const struct emu *e, uint64_t sw_guid, uint32_t vlid)
{
	uint32_t n = sw_index(e, sw_guid);
	if (n == EMU_NONE || !emu_xlid_is_vlid(vlid))
		return -1;
	const struct xblock *b = find_block(&e->xlid->nodes[n], (vlid - X_VBASE) / 64);
	return b ? b->port[(vlid - X_VBASE) % 64] : 0xff;
}

int emu_xlid_blocks(const struct emu *e, uint64_t sw_guid)
{
	uint32_t n = sw_index(e, sw_guid);
	return n == EMU_NONE ? -1 : (int)e->xlid->nodes[n].n_blocks;
}

int emu_xlid_cap_get(const struct emu *e, uint64_t guid, int port,
		     struct emu_xcap *c)
{
	uint32_t n = node_of(e, guid, &port);
	if (n == EMU_NONE || !xnode_of(e, n))
		return -1;
	if (is_switch(&e->nodes[n]))
		port = 0;
	else if (port < 1 || port > e->nodes[n].nports)
		return -1;
	cap_now(e, n, (uint32_t)port, c);
	return 0;
}
