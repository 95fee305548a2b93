/*
 * The emulated devices' performance management agents (class 0x04, IBA
 * vol. 1 16.1): every end port's PMA answers
 *   ClassPortInfo Get with its node's CapabilityMask (emu_set_pma_capmask;
 *     by default PortCountersExtended and PortXmitWait, as ibsim's CAs);
 *   PortCounters Get (16.1.3.5) with the counters the emulator keeps per
 *     port, the data and packet ones saturated at 0xFFFFFFFF as
 *     PortCounters' 32-bit fields stop there; a Set clears the counters
 *     its CounterSelect and CounterSelect2 name, then answers as a Get;
 *   PortCountersExtended Get (16.1.4.11) with the 64-bit data and packet
 *     counters, while the capability mask has one of the extended-width
 *     bits (else status 0x0c, attribute not supported).
 * The 32-bit and the 64-bit data counters are one counter here (a
 * PortCounters Set clearing PortXmitData clears the extended one too), as
 * on the hardware whose case OpenSM's perfmgr provides for.
 * The counters move when a test says so (emu_set_port_counter,
 * emu_set_port_rcv_data, emu_add_port_data) and with the traffic of
 * mad/emu/emu_flow.c (data, packets, PortXmitWait).
 * Written from the specification with byte offsets, not libibmad's
 * tables, so that the SM's codec (mad/pma.c) is checked against an
 * independent one.
 */
#include <string.h>

#include "mad/emu/emu_int.h"

/* ClassPortInfo, from the start of the data (MAD byte 64; 13.4.8.1) */
#define CPI_BASE_VERSION 0
#define CPI_CLASS_VERSION 1
#define CPI_CAPMASK 2
#define CPI_CAPMASK2_RESP 4	/* CapabilityMask2 31:5, RespTimeValue 4:0 */
#define CPI_END 72
#define CPI_RESP_TIME 18	/* 4.096 us * 2^18: about 1 s, ibsim's value */

/* PortCounters (16.1.3.5): PortSelect, CounterSelect, CounterSelect2 */
#define PC_PORT_SELECT 1
#define PC_COUNTER_SELECT 2
#define PC_COUNTER_SELECT2 18
#define PC_END 44		/* through PortXmitWait */
#define PC_SELECT2_XMIT_WAIT 0x01

/* PortCountersExtended (16.1.4.11) */
#define PCE_PORT_SELECT 1
#define PCE_COUNTER_SELECT 2
#define PCE_XMIT_DATA 8
#define PCE_RCV_DATA 16
#define PCE_XMIT_PKTS 24
#define PCE_RCV_PKTS 32
#define PCE_END 72		/* through PortMulticastRcvPkts */

#define SAT32 0xFFFFFFFFull

/*
 * Where each counter sits in PortCounters: byte offset, width in bits
 * (4: a nibble of byte 19, high or low), and its CounterSelect bit (-1:
 * CounterSelect2's).
 */
static const struct pc_field {
	uint8_t off, bits, high_nibble;
	int8_t select;
} pc_fields[PMC_N] = {
	[PMC_SYMBOL_ERR] = { 4, 16, 0, 0 },
	[PMC_LINK_ERR_RECOVERY] = { 6, 8, 0, 1 },
	[PMC_LINK_DOWNED] = { 7, 8, 0, 2 },
	[PMC_RCV_ERR] = { 8, 16, 0, 3 },
	[PMC_RCV_REMOTE_PHYS_ERR] = { 10, 16, 0, 4 },
	[PMC_RCV_SWITCH_RELAY_ERR] = { 12, 16, 0, 5 },
	[PMC_XMIT_DISCARDS] = { 14, 16, 0, 6 },
	[PMC_XMIT_CONSTRAINT_ERR] = { 16, 8, 0, 7 },
	[PMC_RCV_CONSTRAINT_ERR] = { 17, 8, 0, 8 },
	[PMC_LOCAL_LINK_INTEGRITY_ERR] = { 19, 4, 1, 9 },
	[PMC_EXCESSIVE_BUF_OVERRUN_ERR] = { 19, 4, 0, 10 },
	[PMC_VL15_DROPPED] = { 22, 16, 0, 11 },
	[PMC_XMIT_WAIT] = { 40, 32, 0, -1 },
	[PMC_XMIT_DATA] = { 24, 32, 0, 12 },
	[PMC_RCV_DATA] = { 28, 32, 0, 13 },
	[PMC_XMIT_PKTS] = { 32, 32, 0, 14 },
	[PMC_RCV_PKTS] = { 36, 32, 0, 15 },
};

/* The largest value a counter of this width shows: counters saturate. */
static uint64_t field_max(unsigned bits)
{
	return bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
}

static void put_counter(uint8_t *d, const struct pc_field *f, uint64_t v)
{
	uint64_t max = field_max(f->bits);
	uint32_t x = (uint32_t)(v > max ? max : v);
	switch (f->bits) {
	case 4:
		d[f->off] = f->high_nibble ? (uint8_t)((d[f->off] & 0x0f) | x << 4) :
					     (uint8_t)((d[f->off] & 0xf0) | x);
		break;
	case 8:
		d[f->off] = (uint8_t)x;
		break;
	case 16:
		put16(d + f->off, x);
		break;
	default:
		put32(d + f->off, x);
	}
}

/* The port a request's PortSelect names, or EMU_NONE. */
static uint32_t selected_port(const struct emu *e, uint32_t pi, unsigned sel)
{
	const struct emu_node *n = port_node(e, pi);
	/* a CA's PMA counts its own ports; a switch's any port, 0 included */
	if (sel > n->nports || (!is_switch(n) && !sel))
		return EMU_NONE;
	return n->first_port + sel;
}

static int class_port_info(struct emu *e, uint32_t pi, uint8_t method,
			   uint8_t *d)
{
	if (method != METHOD_GET)
		return ST_BAD_METHOD_ATTR;	/* no redirection, no trap fields */
	memset(d, 0, CPI_END);
	d[CPI_BASE_VERSION] = 1;
	d[CPI_CLASS_VERSION] = 1;
	put16(d + CPI_CAPMASK, port_node(e, pi)->pma_capmask);
	put32(d + CPI_CAPMASK2_RESP, CPI_RESP_TIME);
	return 0;
}

static int port_counters(struct emu *e, uint32_t pi, uint8_t method,
			 uint8_t *d)
{
	uint32_t sp = selected_port(e, pi, d[PC_PORT_SELECT]);
	if (sp == EMU_NONE)
		return ST_BAD_FIELD;
	struct emu_port *p = &e->ports[sp];
	unsigned select = get16(d + PC_COUNTER_SELECT);
	uint8_t select2 = d[PC_COUNTER_SELECT2];
	if (method == METHOD_SET) {
		for (int c = 0; c < PMC_N; c++) {
			int bit = pc_fields[c].select;
			if (bit < 0 ? (select2 & PC_SELECT2_XMIT_WAIT) != 0 :
				      (select >> bit & 1) != 0)
				p->pc[c] = 0;
		}
	}
	/* the answer: PortSelect and the selects as asked, the counters now */
	memset(d + PC_COUNTER_SELECT + 2, 0, PC_END - PC_COUNTER_SELECT - 2);
	d[PC_COUNTER_SELECT2] = select2;
	int xmit_wait = (port_node(e, pi)->pma_capmask & PMA_CAP_XMIT_WAIT) != 0;
	for (int c = 0; c < PMC_N; c++)
		if (c != PMC_XMIT_WAIT || xmit_wait)	/* else reserved: 0 */
			put_counter(d, &pc_fields[c], p->pc[c]);
	return 0;
}

static int counters_ext(struct emu *e, uint32_t pi, uint8_t method,
			uint8_t *d)
{
	if (!(port_node(e, pi)->pma_capmask &
	      (PMA_CAP_EXT_WIDTH | PMA_CAP_EXT_WIDTH_NOIETF)))
		return ST_BAD_METHOD_ATTR;	/* the PMA does not have it */
	if (method != METHOD_GET)
		return ST_BAD_METHOD_ATTR;	/* Set (a reset) is not emulated */
	uint32_t sp = selected_port(e, pi, d[PCE_PORT_SELECT]);
	if (sp == EMU_NONE)
		return ST_BAD_FIELD;
	const struct emu_port *p = &e->ports[sp];
	memset(d + PCE_COUNTER_SELECT, 0, PCE_END - PCE_COUNTER_SELECT);
	put64(d + PCE_XMIT_DATA, p->pc[PMC_XMIT_DATA]);
	put64(d + PCE_RCV_DATA, p->pc[PMC_RCV_DATA]);
	put64(d + PCE_XMIT_PKTS, p->pc[PMC_XMIT_PKTS]);
	put64(d + PCE_RCV_PKTS, p->pc[PMC_RCV_PKTS]);
	return 0;
}

int emu_pma(struct emu *e, uint32_t pi, uint32_t qpn, uint8_t *mad, size_t len)
{
	uint8_t method = mad[MH_METHOD];
	if (qpn != 1) {
		emu_add_violation(e, "PerfMgt MAD (method 0x%02x attribute 0x%04x) "
				  "to QP%u, not QP1: no PMA there",
				  method, get16(mad + MH_ATTR_ID), qpn);
		return 0;
	}
	/* the largest attribute answered; the hardware drops what it cannot parse */
	if (len < MH_DATA + CPI_END)
		return 0;
	int st;
	uint16_t attr = get16(mad + MH_ATTR_ID);
	if (mad[MH_CLASS_VERSION] != 1)
		st = ST_BAD_VERSION;
	else if (method != METHOD_GET && method != METHOD_SET)
		st = ST_BAD_METHOD;
	else if (attr == PMA_ATTR_CLASS_PORT_INFO)
		st = class_port_info(e, pi, method, mad + MH_DATA);
	else if (attr == PMA_ATTR_PORT_COUNTERS)
		st = port_counters(e, pi, method, mad + MH_DATA);
	else if (attr == PMA_ATTR_PORT_COUNTERS_EXT)
		st = counters_ext(e, pi, method, mad + MH_DATA);
	else
		st = ST_BAD_METHOD_ATTR;	/* PortSamplesControl, ... */
	mad[MH_METHOD] = 0x81;	/* GetResp, to a Set too */
	put16(mad + MH_STATUS, (uint32_t)st);
	e->pma_gets++;
	return 1;
}

uint64_t emu_pma_gets(const struct emu *e)
{
	return e->pma_gets;
}

int emu_set_pma_capmask(struct emu *e, uint64_t node_guid, uint16_t capmask)
{
	uint32_t ni = emu_node_index(e, node_guid);
	if (ni == UINT32_MAX)
		return -1;
	e->nodes[ni].pma_capmask = capmask;
	return 0;
}

int emu_set_port_counter(struct emu *e, uint64_t guid, int port,
			 enum pma_counter c, uint64_t value)
{
	uint32_t pi = emu_find_port(e, guid, port);
	if (pi == EMU_NONE || c < 0 || c >= PMC_N)
		return -1;
	/* an error counter or PortXmitWait stops at its width, as it would
	 * (ibsim's console does the same); the data ones are 64-bit */
	uint64_t max = c < PMC_XMIT_DATA ? field_max(pc_fields[c].bits) : UINT64_MAX;
	e->ports[pi].pc[c] = value > max ? max : value;
	return 0;
}

int emu_set_port_rcv_data(struct emu *e, uint64_t guid, int port,
			  uint64_t value)
{
	return emu_set_port_counter(e, guid, port, PMC_RCV_DATA, value);
}

int emu_add_port_data(struct emu *e, uint64_t guid, int port, uint64_t rcv,
		      uint64_t xmit)
{
	uint32_t pi = emu_find_port(e, guid, port);
	if (pi == EMU_NONE)
		return -1;
	e->ports[pi].pc[PMC_RCV_DATA] += rcv;
	e->ports[pi].pc[PMC_XMIT_DATA] += xmit;
	return 0;
}
