/*
 * PortCountersExtended requests and answers (mad/pma.h), through
 * libibmad's field tables: the emulator's PMA (mad/emu/emu_pma.c) has its
 * own byte offsets, so a wrong field on either side shows in the tests.
 */
#include "mad/pma.h"

#include <infiniband/mad.h>
#include <stdio.h>
#include <string.h>

const struct pma_counter_info pma_counter_info[PMC_N] = {
	[PMC_SYMBOL_ERR] = { "SymbolErrorCounter", "symbol_errors", 16, 1 },
	[PMC_LINK_ERR_RECOVERY] = { "LinkErrorRecoveryCounter", "link_error_recoveries", 8, 1 },
	[PMC_LINK_DOWNED] = { "LinkDownedCounter", "link_downed", 8, 1 },
	[PMC_RCV_ERR] = { "PortRcvErrors", "rcv_errors", 16, 1 },
	[PMC_RCV_REMOTE_PHYS_ERR] = { "PortRcvRemotePhysicalErrors", "rcv_remote_physical_errors", 16, 1 },
	[PMC_RCV_SWITCH_RELAY_ERR] = { "PortRcvSwitchRelayErrors", "rcv_switch_relay_errors", 16, 1 },
	[PMC_XMIT_DISCARDS] = { "PortXmitDiscards", "xmit_discards", 16, 1 },
	[PMC_XMIT_CONSTRAINT_ERR] = { "PortXmitConstraintErrors", "xmit_constraint_errors", 8, 1 },
	[PMC_RCV_CONSTRAINT_ERR] = { "PortRcvConstraintErrors", "rcv_constraint_errors", 8, 1 },
	[PMC_LOCAL_LINK_INTEGRITY_ERR] = { "LocalLinkIntegrityErrors", "local_link_integrity_errors", 4, 1 },
	[PMC_EXCESSIVE_BUF_OVERRUN_ERR] = { "ExcessiveBufferOverrunErrors", "excessive_buffer_overrun_errors", 4, 1 },
	[PMC_VL15_DROPPED] = { "VL15Dropped", "vl15_dropped", 16, 1 },
	[PMC_XMIT_WAIT] = { "PortXmitWait", "xmit_wait", 32, 0 },
	[PMC_XMIT_DATA] = { "PortXmitData", "xmit_data", 32, 0 },
	[PMC_RCV_DATA] = { "PortRcvData", "rcv_data", 32, 0 },
	[PMC_XMIT_PKTS] = { "PortXmitPkts", "xmit_packets", 32, 0 },
	[PMC_RCV_PKTS] = { "PortRcvPkts", "rcv_packets", 32, 0 },
};

void pma_ext_get(uint8_t *mad, uint8_t port_select, uint32_t lid,
		 struct mad_addr *to)
{
	ib_rpc_t rpc;

	memset(mad, 0, MAD_SIZE);
	memset(&rpc, 0, sizeof(rpc));
	rpc.mgtclass = IB_PERFORMANCE_CLASS;
	rpc.method = IB_MAD_METHOD_GET;
	rpc.attr.id = IB_GSI_PORT_COUNTERS_EXT;
	rpc.attr.mod = 0;
	rpc.dataoffs = IB_PC_DATA_OFFS;
	rpc.datasz = IB_PC_DATA_SZ;
	rpc.trid = 1;
	mad_encode(mad, &rpc, NULL, NULL);
	mad_set_field(mad + IB_PC_DATA_OFFS, 0, IB_PC_EXT_PORT_SELECT_F,
		      port_select);
	memset(to, 0, sizeof(*to));
	to->lid = lid;
	to->qpn = 1;
	to->qkey = PMA_QP1_QKEY;
}

int pma_ext_decode(const uint8_t *mad, size_t len, uint8_t port_select,
		   struct pma_counters_ext *c, char *err, size_t errlen)
{
	void *m = (void *)mad;
	if (!mad || len < PMA_DATA_OFFS + 40) {	/* up to PortRcvPkts */
		snprintf(err, errlen, "answer of %zu bytes, too short", len);
		return -1;
	}
	if (mad_get_field(m, 0, IB_MAD_MGMTCLASS_F) != IB_PERFORMANCE_CLASS ||
	    mad_get_field(m, 0, IB_MAD_METHOD_F) != IB_MAD_METHOD_GET ||
	    !mad_get_field(m, 0, IB_MAD_RESPONSE_F) ||
	    mad_get_field(m, 0, IB_MAD_ATTRID_F) != IB_GSI_PORT_COUNTERS_EXT) {
		snprintf(err, errlen, "not a PortCountersExtended GetResp");
		return -1;
	}
	unsigned st = mad_get_field(m, 0, IB_MAD_STATUS_F);
	if (st) {
		snprintf(err, errlen, "MAD status 0x%04x", st);
		return -1;
	}
	const uint8_t *d = mad + IB_PC_DATA_OFFS;
	c->port_select = (uint8_t)mad_get_field((void *)d, 0, IB_PC_EXT_PORT_SELECT_F);
	if (c->port_select != port_select) {
		snprintf(err, errlen, "counters of port %u, asked for port %u",
			 c->port_select, port_select);
		return -1;
	}
	c->xmit_data = mad_get_field64((void *)d, 0, IB_PC_EXT_XMT_BYTES_F);
	c->rcv_data = mad_get_field64((void *)d, 0, IB_PC_EXT_RCV_BYTES_F);
	c->xmit_pkts = mad_get_field64((void *)d, 0, IB_PC_EXT_XMT_PKTS_F);
	c->rcv_pkts = mad_get_field64((void *)d, 0, IB_PC_EXT_RCV_PKTS_F);
	return 0;
}
