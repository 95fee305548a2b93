/*
 * PerfMgt requests and answers (mad/pma.h: ClassPortInfo, PortCounters,
 * PortCountersExtended), through libibmad's field tables: the emulator's PMA (mad/emu/emu_pma.c) has its
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

/* A request of attribute attr with method into mad, addressed to QP1 at lid. */
static void request(uint8_t *mad, unsigned method, unsigned attr, uint32_t lid,
		    struct mad_addr *to)
{
	ib_rpc_t rpc;

	memset(mad, 0, MAD_SIZE);
	memset(&rpc, 0, sizeof(rpc));
	rpc.mgtclass = IB_PERFORMANCE_CLASS;
	rpc.method = method;
	rpc.attr.id = attr;
	rpc.attr.mod = 0;
	rpc.dataoffs = IB_PC_DATA_OFFS;
	rpc.datasz = IB_PC_DATA_SZ;
	rpc.trid = 1;
	mad_encode(mad, &rpc, NULL, NULL);
	memset(to, 0, sizeof(*to));
	to->lid = lid;
	to->qpn = 1;
	to->qkey = PMA_QP1_QKEY;
}

/*
 * The checks every answer passes: at least need bytes (the attribute's
 * fields the decoder reads end there; nothing is read before this check),
 * a GetResp of class 0x04 version 1 for attribute attr, status 0.
 * 0, or -1 with the reason in err.
 */
static int answer_ok(const uint8_t *mad, size_t len, size_t need,
		     unsigned attr, const char *what, char *err, size_t errlen)
{
	void *m = (void *)mad;
	if (!mad || len < need) {
		snprintf(err, errlen, "%s answer of %zu bytes, too short (%zu)",
			 what, len, need);
		return -1;
	}
	if (mad_get_field(m, 0, IB_MAD_MGMTCLASS_F) != IB_PERFORMANCE_CLASS ||
	    mad_get_field(m, 0, IB_MAD_CLASSVER_F) != PMA_CLASS_VERSION) {
		snprintf(err, errlen, "not a PerfMgt answer (class 0x%02x "
			 "version %u)", mad_get_field(m, 0, IB_MAD_MGMTCLASS_F),
			 mad_get_field(m, 0, IB_MAD_CLASSVER_F));
		return -1;
	}
	/* the answer to a Get and to a Set alike (IBA vol. 1 13.4.5) */
	if (mad_get_field(m, 0, IB_MAD_METHOD_F) != IB_MAD_METHOD_GET ||
	    !mad_get_field(m, 0, IB_MAD_RESPONSE_F) ||
	    mad_get_field(m, 0, IB_MAD_ATTRID_F) != attr) {
		snprintf(err, errlen, "not a %s GetResp (method 0x%02x "
			 "attribute 0x%04x)", what, mad[3],
			 mad_get_field(m, 0, IB_MAD_ATTRID_F));
		return -1;
	}
	unsigned st = mad_get_field(m, 0, IB_MAD_STATUS_F);
	if (st) {
		snprintf(err, errlen, "%s: MAD status 0x%04x", what, st);
		return -1;
	}
	return 0;
}

/* The answer is about port_select (a PortCounters or its extended form). */
static int same_port(unsigned got, uint8_t port_select, char *err,
		     size_t errlen)
{
	if (got == port_select)
		return 0;
	snprintf(err, errlen, "counters of port %u, asked for port %u", got,
		 port_select);
	return -1;
}

/* ClassPortInfo: through RedirectQ_Key, bytes 36-39 of the data */
#define CPI_NEED (PMA_DATA_OFFS + 40)
/* PortCounters: through PortXmitWait, bytes 40-43 */
#define PC_NEED (PMA_DATA_OFFS + 44)
/* PortCountersExtended: through PortRcvPkts, bytes 32-39 */
#define PCE_NEED (PMA_DATA_OFFS + 40)

void pma_cpi_get(uint8_t *mad, uint32_t lid, struct mad_addr *to)
{
	request(mad, IB_MAD_METHOD_GET, CLASS_PORT_INFO, lid, to);
}

int pma_cpi_decode(const uint8_t *mad, size_t len, struct pma_cpi *c,
		   char *err, size_t errlen)
{
	if (answer_ok(mad, len, CPI_NEED, CLASS_PORT_INFO, "ClassPortInfo",
		      err, errlen))
		return -1;
	void *d = (void *)(mad + IB_PC_DATA_OFFS);
	c->capmask = (uint16_t)mad_get_field(d, 0, IB_CPI_CAPMASK_F);
	c->capmask2 = mad_get_field(d, 0, IB_CPI_CAPMASK2_F);
	c->resp_time = (uint8_t)mad_get_field(d, 0, IB_CPI_RESP_TIME_VALUE_F);
	c->redirect_lid = mad_get_field(d, 0, IB_CPI_REDIRECT_LID_F);
	c->redirect_qp = mad_get_field(d, 0, IB_CPI_REDIRECT_QP_F);
	c->redirect_qkey = mad_get_field(d, 0, IB_CPI_REDIRECT_QKEY_F);
	c->redirect_pkey = (uint16_t)mad_get_field(d, 0, IB_CPI_REDIRECT_PKEY_F);
	return 0;
}

/* PortCounters' fields, by enum pma_counter */
static const enum MAD_FIELDS pc_field[PMC_N] = {
	[PMC_SYMBOL_ERR] = IB_PC_ERR_SYM_F,
	[PMC_LINK_ERR_RECOVERY] = IB_PC_LINK_RECOVERS_F,
	[PMC_LINK_DOWNED] = IB_PC_LINK_DOWNED_F,
	[PMC_RCV_ERR] = IB_PC_ERR_RCV_F,
	[PMC_RCV_REMOTE_PHYS_ERR] = IB_PC_ERR_PHYSRCV_F,
	[PMC_RCV_SWITCH_RELAY_ERR] = IB_PC_ERR_SWITCH_REL_F,
	[PMC_XMIT_DISCARDS] = IB_PC_XMT_DISCARDS_F,
	[PMC_XMIT_CONSTRAINT_ERR] = IB_PC_ERR_XMTCONSTR_F,
	[PMC_RCV_CONSTRAINT_ERR] = IB_PC_ERR_RCVCONSTR_F,
	[PMC_LOCAL_LINK_INTEGRITY_ERR] = IB_PC_ERR_LOCALINTEG_F,
	[PMC_EXCESSIVE_BUF_OVERRUN_ERR] = IB_PC_ERR_EXCESS_OVR_F,
	[PMC_VL15_DROPPED] = IB_PC_VL15_DROPPED_F,
	[PMC_XMIT_WAIT] = IB_PC_XMT_WAIT_F,
	[PMC_XMIT_DATA] = IB_PC_XMT_BYTES_F,
	[PMC_RCV_DATA] = IB_PC_RCV_BYTES_F,
	[PMC_XMIT_PKTS] = IB_PC_XMT_PKTS_F,
	[PMC_RCV_PKTS] = IB_PC_RCV_PKTS_F,
};

/* A PortCounters request: method, the port, the counters a Set clears. */
static void pc_request(uint8_t *mad, unsigned method, uint8_t port_select,
		       unsigned select, unsigned select2, uint32_t lid,
		       struct mad_addr *to)
{
	request(mad, method, IB_GSI_PORT_COUNTERS, lid, to);
	uint8_t *d = mad + IB_PC_DATA_OFFS;
	mad_set_field(d, 0, IB_PC_PORT_SELECT_F, port_select);
	mad_set_field(d, 0, IB_PC_COUNTER_SELECT_F, select);
	mad_set_field(d, 0, IB_PC_COUNTER_SELECT2_F, select2);
}

void pma_pc_get(uint8_t *mad, uint8_t port_select, uint32_t lid,
		struct mad_addr *to)
{
	pc_request(mad, IB_MAD_METHOD_GET, port_select, 0, 0, lid, to);
}

void pma_pc_clear(uint8_t *mad, uint8_t port_select, uint16_t select,
		  uint32_t lid, struct mad_addr *to)
{
	pc_request(mad, IB_MAD_METHOD_SET, port_select, select,
		   PMA_PC_SELECT2_XMIT_WAIT, lid, to);
}

int pma_pc_decode(const uint8_t *mad, size_t len, uint8_t port_select,
		  struct pma_sample *s, char *err, size_t errlen)
{
	if (answer_ok(mad, len, PC_NEED, IB_GSI_PORT_COUNTERS, "PortCounters",
		      err, errlen))
		return -1;
	void *d = (void *)(mad + IB_PC_DATA_OFFS);
	if (same_port(mad_get_field(d, 0, IB_PC_PORT_SELECT_F), port_select,
		      err, errlen))
		return -1;
	s->port_select = port_select;
	for (int c = 0; c < PMC_N; c++) {
		s->v[c] = mad_get_field(d, 0, pc_field[c]);
		s->have |= 1u << c;
		s->wide &= ~(1u << c);
	}
	return 0;
}

void pma_ext_get(uint8_t *mad, uint8_t port_select, uint32_t lid,
		 struct mad_addr *to)
{
	request(mad, IB_MAD_METHOD_GET, IB_GSI_PORT_COUNTERS_EXT, lid, to);
	mad_set_field(mad + IB_PC_DATA_OFFS, 0, IB_PC_EXT_PORT_SELECT_F,
		      port_select);
}

int pma_ext_decode(const uint8_t *mad, size_t len, uint8_t port_select,
		   struct pma_counters_ext *c, char *err, size_t errlen)
{
	if (answer_ok(mad, len, PCE_NEED, IB_GSI_PORT_COUNTERS_EXT,
		      "PortCountersExtended", err, errlen))
		return -1;
	void *d = (void *)(mad + IB_PC_DATA_OFFS);
	unsigned got = mad_get_field(d, 0, IB_PC_EXT_PORT_SELECT_F);
	if (same_port(got, port_select, err, errlen))
		return -1;
	c->port_select = (uint8_t)got;
	c->xmit_data = mad_get_field64(d, 0, IB_PC_EXT_XMT_BYTES_F);
	c->rcv_data = mad_get_field64(d, 0, IB_PC_EXT_RCV_BYTES_F);
	c->xmit_pkts = mad_get_field64(d, 0, IB_PC_EXT_XMT_PKTS_F);
	c->rcv_pkts = mad_get_field64(d, 0, IB_PC_EXT_RCV_PKTS_F);
	return 0;
}

int pma_ext_decode_sample(const uint8_t *mad, size_t len, uint8_t port_select,
			  struct pma_sample *s, char *err, size_t errlen)
{
	struct pma_counters_ext c;
	if (pma_ext_decode(mad, len, port_select, &c, err, errlen))
		return -1;
	static const enum pma_counter which[] = {
		PMC_XMIT_DATA, PMC_RCV_DATA, PMC_XMIT_PKTS, PMC_RCV_PKTS
	};
	const uint64_t v[] = { c.xmit_data, c.rcv_data, c.xmit_pkts, c.rcv_pkts };
	s->port_select = port_select;
	for (size_t i = 0; i < sizeof(which) / sizeof(which[0]); i++) {
		s->v[which[i]] = v[i];
		s->have |= 1u << which[i];
		s->wide |= 1u << which[i];
	}
	return 0;
}
