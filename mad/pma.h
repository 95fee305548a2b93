/*
 * Performance management (class 0x04): the one request the SM sends, a
 * Get of PortCountersExtended (attribute 0x001D, IBA vol. 1 16.1.4.11),
 * built and decoded through libibmad's field tables (IB_PC_EXT_*).  The
 * 64-bit PortRcvData and PortXmitData count in units of 4 octets; they
 * only wrap after years, unlike PortCounters' 32-bit ones (seconds at QDR).
 * The PMA is on QP1 (GSI), Q_Key 0x80010000, LID-routed like any GMP.
 */
#ifndef IBSMD_PMA_H
#define IBSMD_PMA_H

#include <stddef.h>
#include <stdint.h>

#include "mad/transport.h"

#define PMA_CLASS		0x04
#define PMA_CLASS_VERSION	1
#define PMA_ATTR_PORT_COUNTERS_EXT 0x001D
#define PMA_DATA_OFFS		64	/* 40 reserved bytes after the header */
#define PMA_QP1_QKEY		0x80010000u

struct pma_counters_ext {
	uint8_t port_select;
	uint64_t xmit_data, rcv_data;	/* units of 4 octets */
	uint64_t xmit_pkts, rcv_pkts;
};

/*
 * A Get PortCountersExtended of port port_select (a CA's port number) into
 * mad (MAD_SIZE bytes); to is filled for QP1 at lid.
 */
void pma_ext_get(uint8_t *mad, uint8_t port_select, uint32_t lid,
		 struct mad_addr *to);
/*
 * The answer: 0 and the counters, or -1 with the reason in err (not a
 * GetResp of PortCountersExtended, a MAD status, too short, another port
 * than port_select).
 */
int pma_ext_decode(const uint8_t *mad, size_t len, uint8_t port_select,
		   struct pma_counters_ext *c, char *err, size_t errlen);

#endif
