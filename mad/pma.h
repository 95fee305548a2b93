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

/*
 * The counters the performance manager reads, in one order: the twelve
 * error counters of PortCounters (IBA vol. 1 16.1.4.3, the names
 * perfquery and ibqueryerrors print), PortXmitWait, then the data and
 * packet counters (64-bit from PortCountersExtended where the PMA's
 * ClassPortInfo says so, else PortCounters' 32-bit ones).
 */
enum pma_counter {
	PMC_SYMBOL_ERR,			/* SymbolErrorCounter, 16 bits */
	PMC_LINK_ERR_RECOVERY,		/* LinkErrorRecoveryCounter, 8 */
	PMC_LINK_DOWNED,		/* LinkDownedCounter, 8 */
	PMC_RCV_ERR,			/* PortRcvErrors, 16 */
	PMC_RCV_REMOTE_PHYS_ERR,	/* PortRcvRemotePhysicalErrors, 16 */
	PMC_RCV_SWITCH_RELAY_ERR,	/* PortRcvSwitchRelayErrors, 16 */
	PMC_XMIT_DISCARDS,		/* PortXmitDiscards, 16 */
	PMC_XMIT_CONSTRAINT_ERR,	/* PortXmitConstraintErrors, 8 */
	PMC_RCV_CONSTRAINT_ERR,		/* PortRcvConstraintErrors, 8 */
	PMC_LOCAL_LINK_INTEGRITY_ERR,	/* LocalLinkIntegrityErrors, 4 */
	PMC_EXCESSIVE_BUF_OVERRUN_ERR,	/* ExcessiveBufferOverrunErrors, 4 */
	PMC_VL15_DROPPED,		/* VL15Dropped, 16 */
	PMC_N_ERRORS,
	PMC_XMIT_WAIT = PMC_N_ERRORS,	/* PortXmitWait, 32 */
	PMC_XMIT_DATA,			/* PortXmitData, 32 or 64, units of 4 octets */
	PMC_RCV_DATA,			/* PortRcvData */
	PMC_XMIT_PKTS,			/* PortXmitPkts */
	PMC_RCV_PKTS,			/* PortRcvPkts */
	PMC_N
};

struct pma_counter_info {
	const char *name;	/* the IBA's name, as perfquery prints it */
	const char *metric;	/* in metric names: ibsmd_port_<metric>_total */
	uint8_t bits;		/* width in PortCounters (the extended ones: 64) */
	uint8_t error;		/* an error counter (health thresholds) */
};
/* Indexed by enum pma_counter (mad/pma.c). */
extern const struct pma_counter_info pma_counter_info[PMC_N];

/* One port's counters as read: v[c] valid where have has bit c. */
struct pma_sample {
	uint8_t port_select;
	uint32_t have;		/* 1u << c: read */
	uint32_t wide;		/* 1u << c: read 64-bit (PortCountersExtended) */
	uint64_t v[PMC_N];
};

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
