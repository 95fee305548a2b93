/*
 * Extended 18-bit LIDs (the vSwitch paper, Section 4.1, which names no
 * attribute and no bit positions): ibsmd's definition of an extension no
 * hardware or simulator has.  Two vendor-specific SMP attributes (class
 * 0x01/0x81, IDs in the vendor range 0xFF00-0xFFFF) and the places the
 * two extra LID bits travel.  The SM's codec is mad/xlid.c;
 * the emulator decodes with its own code (mad/emu/emu_xlid.c), so that a
 * mistake in one is caught by the other (tests/unit/test_xlid.c decodes
 * the golden vectors of ibsmd(8) with both).
 *
 * LID space.  A LID is 18 bits.  0x00001-0x0BFFF unicast, 0x0C000-0x0FFFF
 * multicast, as today (pLIDs, primary LFT); 0x10000-0x3FFFF are vLIDs:
 * unicast only, given to VMs only, forwarded by a switch through its
 * secondary LFT indexed by vLID - 0x10000 (196,608 entries at most, 3,072
 * blocks of 64), never path-computed (the SM fills a vLID's entries by
 * copying its PF's pLID entries).
 *
 * LRH.  DLID[17:16] in the two reserved bits of LRH byte 1 (bits 3:2,
 * between SL and LNH); SLID[17:16] in the two high bits of the five
 * reserved bits of LRH byte 4 (bits 7:6, before PktLen).  0 in both: a
 * pLID, today's packet.
 *
 * PathRecord.  Its DLID and SLID are 16 bits; byte 58 (the first of the
 * six reserved bytes at the end) carries DLID[17:16] in bits 7:6 and
 * SLID[17:16] in bits 5:4; its other bits stay 0.  A host that knows
 * nothing of the extension reads a vLID's low 16 bits: the SA answers a
 * requester that is not itself capable with the VM's pLID when the VM has
 * one (legacy mode), else with no record.  Notices 68/69 carry 32-bit
 * LIDs already (traps/notice.h).
 *
 * XLIDCap (0xFF10), Get and Set, on a switch (modifier 0) or a CA port
 * (modifier = port number).  64 bytes, big-endian:
 *   0      Version: 1 (anything else: rejected)
 *   1      bit 7 Supported (device: read-only), bit 6 Enabled (SM: set to
 *          use vLIDs on this device), bits 5:0 reserved 0
 *   2-3    reserved 0
 *   4-7    SecondaryLFTCap: entries the secondary LFT holds (a multiple
 *          of 64, at most 196608; 0 on a CA) -- read-only
 *   8-11   SecondaryLFTTop: the highest vLID index (vLID - 0x10000)
 *          forwarded, + 1; 0 = none (switch; the SM sets it, like
 *          LinearFDBTop)
 *   12     DefaultPort: the port a vLID at or above Top, or whose entry is
 *          0xFF, leaves by; 0xFF = dropped (switch; the SM sets a vSwitch's
 *          to its uplink, so a vSwitch needs entries only for its own VFs)
 *   13-15  reserved 0
 *   16-19  PortVLID: the vLID this CA port answers to besides its
 *          PortInfo LID, 0 = none (CA; the SM sets it); a vLID or 0
 *   20-61  reserved 0
 *   62-63  CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) of bytes 0-61
 * A decoder rejects a wrong version, a reserved bit or byte not 0, a
 * capacity not a multiple of 64 or above 196608, Top above the capacity,
 * a PortVLID that is not 0 or a vLID, a bad CRC.  A device without the
 * extension answers the Get with status 0x0c (unsupported attribute), as
 * ibsim does for any unknown attribute -- that is "not capable".
 *
 * XLIDLFT (0xFF11), Get and Set, on a switch: one secondary-LFT block,
 * modifier = block number (vLID - 0x10000) / 64, 0..3071; 64 bytes, one
 * output port per vLID (0xFF = none: DefaultPort).  A decoder rejects a
 * block number above 3071 or at/above SecondaryLFTCap / 64, and a port
 * that is not 0xFF and above the switch's port count.
 */
#ifndef IBSMD_XLID_H
#define IBSMD_XLID_H

#include <stddef.h>
#include <stdint.h>

#include "sm/base/fabric.h"

#define XLID_ATTR_CAP	0xFF10
#define XLID_ATTR_LFT	0xFF11

#define XLID_VBASE	FAB_VLID_BASE	/* the first vLID, 0x10000 */
#define XLID_VMAX	FAB_VLID_MAX	/* the last vLID, 0x3FFFF */
#define XLID_MAX_ENTRIES (XLID_VMAX - XLID_VBASE + 1)	/* 196608 */
#define XLID_BLOCKS	(XLID_MAX_ENTRIES / FAB_LFT_BLOCK)	/* 3072 */
#define XLID_VERSION	1

static inline int xlid_is_vlid(uint32_t lid)
{
	return lid >= XLID_VBASE && lid <= XLID_VMAX;
}

struct xlid_cap {
	int supported, enabled;
	uint32_t lft_cap;	/* SecondaryLFTCap */
	uint32_t lft_top;	/* SecondaryLFTTop */
	uint8_t default_port;	/* 0xFF = drop */
	uint32_t port_vlid;	/* CA port: 0 or a vLID */
};

/* Encodes c into 64 bytes (CRC included). */
void xlid_cap_encode(const struct xlid_cap *c, uint8_t *d);
/* Decodes 64 bytes; 0, or -1 with the reason in err (see above). */
int xlid_cap_decode(const uint8_t *d, struct xlid_cap *c, char *err,
		    size_t errlen);
/*
 * Checks a secondary-LFT block for a switch of nports ports and a
 * capacity of cap entries; 0, or -1 with the reason in err.
 */
int xlid_lft_check(uint32_t block, const uint8_t *d, unsigned nports,
		   uint32_t cap, char *err, size_t errlen);
uint16_t xlid_crc16(const uint8_t *d, size_t n);

/* The two extra bits in an LRH (bytes 0-7) and in a PathRecord (64 bytes). */
void xlid_lrh_set(uint8_t *lrh, uint32_t dlid, uint32_t slid);
void xlid_lrh_get(const uint8_t *lrh, uint32_t *dlid, uint32_t *slid);
void xlid_pr_set(uint8_t *pr, uint32_t dlid, uint32_t slid);
void xlid_pr_get(const uint8_t *pr, uint32_t *dlid, uint32_t *slid);

#endif
