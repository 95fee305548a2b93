/*
 * The emulated devices' performance management agents (class 0x04): a
 * Get PortCountersExtended (IBA vol. 1 16.1.4.11) answers the counters the
 * emulator keeps per port.  No data traffic is emulated, so the counters
 * move only when a test says so (emu_set_port_rcv_data,
 * emu_add_port_data).  Written from the specification with byte offsets,
 * not libibmad's tables, so that the SM's codec (mad/pma.c) is checked
 * against an independent one.
 */
#include <string.h>

#include "mad/emu/emu_int.h"

#define PMA_ATTR_CLASS_PORT_INFO 0x0001
#define PMA_ATTR_COUNTERS_EXT 0x001D

/* PortCountersExtended, from the start of the data (MAD byte 64) */
#define PCE_PORT_SELECT 1
#define PCE_COUNTER_SELECT 2
#define PCE_XMIT_DATA 8
#define PCE_RCV_DATA 16
#define PCE_XMIT_PKTS 24
#define PCE_RCV_PKTS 32
#define PCE_END 72		/* through PortMulticastRcvPkts */

static int counters_ext(struct emu *e, uint32_t pi, uint8_t method,
			uint8_t *d)
{
	const struct emu_node *n = port_node(e, pi);
	if (method != METHOD_GET)
		return ST_BAD_METHOD_ATTR;	/* Set (a reset) is not emulated */
	unsigned sel = d[PCE_PORT_SELECT];
	/* a CA's PMA counts its own ports; a switch's any port, 0 included */
	if (sel > n->nports || (!is_switch(n) && !sel))
		return ST_BAD_FIELD;
	const struct emu_port *p = &e->ports[n->first_port + sel];
	memset(d + PCE_COUNTER_SELECT, 0, PCE_END - PCE_COUNTER_SELECT);
	put64(d + PCE_XMIT_DATA, p->xmit_data);
	put64(d + PCE_RCV_DATA, p->rcv_data);
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
	if (len < MH_DATA + PCE_END)
		return 0;	/* the hardware drops what it cannot parse */
	int st;
	if (mad[MH_CLASS_VERSION] != 1)
		st = ST_BAD_VERSION;
	else if (method != METHOD_GET && method != METHOD_SET)
		st = ST_BAD_METHOD;
	else if (get16(mad + MH_ATTR_ID) == PMA_ATTR_COUNTERS_EXT)
		st = counters_ext(e, pi, method, mad + MH_DATA);
	else
		st = ST_BAD_METHOD_ATTR;	/* ClassPortInfo, PortCounters, ... */
	mad[MH_METHOD] = 0x81;	/* GetResp */
	put16(mad + MH_STATUS, (uint32_t)st);
	return 1;
}

int emu_set_port_rcv_data(struct emu *e, uint64_t guid, int port,
			  uint64_t value)
{
	uint32_t pi = emu_find_port(e, guid, port);
	if (pi == EMU_NONE)
		return -1;
	e->ports[pi].rcv_data = value;
	return 0;
}

int emu_add_port_data(struct emu *e, uint64_t guid, int port, uint64_t rcv,
		      uint64_t xmit)
{
	uint32_t pi = emu_find_port(e, guid, port);
	if (pi == EMU_NONE)
		return -1;
	e->ports[pi].rcv_data += rcv;
	e->ports[pi].xmit_data += xmit;
	return 0;
}
