/*
 * Performance management (class 0x04, IBA vol. 1 16.1): the requests the
 * SM sends to a port's PMA and the decoders of their answers, built and
 * read through libibmad's field tables (IB_CPI_*, IB_PC_*, IB_PC_EXT_*):
 *   ClassPortInfo (attribute 0x0001): the CapabilityMask says whether the
 *     PMA has PortCountersExtended and PortXmitWait;
 *   PortCounters (0x0012, 16.1.3.5): the twelve error counters,
 *     PortXmitWait and 32-bit data and packet counters, which stop at
 *     0xFFFFFFFF (they saturate, they do not wrap); a Set clears the
 *     counters its CounterSelect/CounterSelect2 name;
 *   PortCountersExtended (0x001D, 16.1.4.11): 64-bit data and packet
 *     counters, which only wrap after years (the 32-bit PortXmitData
 *     saturates within seconds at QDR).
 * The data counters count in units of 4 octets.  The PMA is on QP1 (GSI),
 * Q_Key 0x80010000, LID-routed like any GMP.  Every decoder refuses, with
 * the reason, an answer that is short, of another class, attribute or
 * method, carries a MAD status or names another port than asked, and
 * reads nothing past len.
 */
#ifndef IBSMD_PMA_H
#define IBSMD_PMA_H

#include <stddef.h>
#include <stdint.h>

#include "mad/transport.h"

#define PMA_CLASS		0x04
#define PMA_CLASS_VERSION	1
#define PMA_ATTR_CLASS_PORT_INFO 0x0001
#define PMA_ATTR_PORT_COUNTERS	0x0012
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
 * ClassPortInfo CapabilityMask bits of a PMA (IBA vol. 1 16.1, the
 * PerfMgt class's own bits 8-15; OpenSM's ib_types.h and ibsim use the
 * same).  ibsim's PMAs answer EXT_WIDTH | XMIT_WAIT,
 * with ALL_PORT_SELECT on switches (DEVELOPERS.md).
 */
#define PMA_CAP_ALL_PORT_SELECT	(1u << 8)	/* PortSelect 0xFF: all ports */
#define PMA_CAP_EXT_WIDTH	(1u << 9)	/* PortCountersExtended */
#define PMA_CAP_EXT_WIDTH_NOIETF (1u << 10)	/* ... its data/packet counters only */
#define PMA_CAP_XMIT_WAIT	(1u << 12)	/* PortCounters:PortXmitWait */

/* CounterSelect2 of PortCounters: bit 0 selects PortXmitWait. */
#define PMA_PC_SELECT2_XMIT_WAIT 0x01

/* The PMA's ClassPortInfo (IBA vol. 1 13.4.8.1), the fields the SM uses. */
struct pma_cpi {
	uint16_t capmask;
	uint32_t capmask2;	/* 27 bits */
	uint8_t resp_time;	/* RespTimeValue, 5 bits */
	uint32_t redirect_lid;	/* non-zero: the PMA is redirected */
	uint32_t redirect_qp;
	uint32_t redirect_qkey;
	uint16_t redirect_pkey;
};

/* A Get ClassPortInfo of the PMA at lid into mad; to is filled for QP1. */
void pma_cpi_get(uint8_t *mad, uint32_t lid, struct mad_addr *to);
/* Its answer: 0 and the fields, or -1 with the reason in err. */
int pma_cpi_decode(const uint8_t *mad, size_t len, struct pma_cpi *c,
		   char *err, size_t errlen);

/* A Get PortCounters of port port_select of the PMA at lid. */
void pma_pc_get(uint8_t *mad, uint8_t port_select, uint32_t lid,
		struct mad_addr *to);
/*
 * A Set PortCounters with CounterSelect select and CounterSelect2
 * PMA_PC_SELECT2_XMIT_WAIT: clears those counters of the port and
 * PortXmitWait (IBA vol. 1 16.1.3.5).  PMA_PC_SELECT_ALL clears every
 * one; on a PMA whose PortCounters and PortCountersExtended share the
 * data counters it clears the 64-bit ones too, so where the extended ones
 * are read PMA_PC_SELECT_ERRORS keeps them (as OpenSM's perfmgr does);
 * the emulator's PMA shares them.
 */
#define PMA_PC_SELECT_ALL	0xFFFF	/* the 12 error counters, data, packets */
#define PMA_PC_SELECT_ERRORS	0x0FFF	/* bits 0-11: the error counters */
void pma_pc_clear(uint8_t *mad, uint8_t port_select, uint16_t select,
		  uint32_t lid, struct mad_addr *to);
/*
 * The GetResp of a Get or a Set PortCounters: 0 and every PMC_* in s
 * (s->port_select, the have bits set, the wide bits cleared; the other
 * counters of s untouched), or -1 with the reason in err and s unchanged.
 */
int pma_pc_decode(const uint8_t *mad, size_t len, uint8_t port_select,
		  struct pma_sample *s, char *err, size_t errlen);

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
/*
 * The same answer into a sample: PMC_XMIT_DATA, PMC_RCV_DATA,
 * PMC_XMIT_PKTS and PMC_RCV_PKTS 64-bit (have and wide bits set; the
 * other counters of s untouched), or -1 with s unchanged.
 */
int pma_ext_decode_sample(const uint8_t *mad, size_t len, uint8_t port_select,
			  struct pma_sample *s, char *err, size_t errlen);

#endif
