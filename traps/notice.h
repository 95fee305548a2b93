/*
 * The Notice attribute (IBA vol. 1 §14.2.5.1, 80 bytes): the body of a
 * Trap, and of an SA Report.  Codec only; no MADs sent here.
 *
 *   byte 0      IsGeneric (bit 7), Type (bits 0-6)
 *   bytes 1-3   ProducerType (generic) / VendorID
 *   bytes 4-5   TrapNumber (generic) / DeviceID
 *   bytes 6-7   IssuerLID
 *   bytes 8-9   NoticeToggle (bit 15), NoticeCount (bits 0-14)
 *   bytes 10-63 DataDetails (54 bytes)
 *   bytes 64-79 IssuerGID
 *
 * DataDetails of the notices the SM produces (type 3, subnet management;
 * producer type 4, class manager; issuer the SM's LID and GID):
 *
 * 64/65 GID in/out of service, 66/67 MC group created/deleted (the spec):
 *   bytes 0-5 reserved, 6-21 the GID.
 *
 * 68 UnPath, 69 RePath (ibsmd's layout; the spec gives none, and a
 * PathRecord (64 bytes) does not fit in 54):
 *   byte 0      flags: bit 0 WILDCARD (no path carried: something the
 *               host may use changed, re-query), bit 1 GIDS (SGID/DGID
 *               valid), bit 2 REVERSIBLE, bit 3 VGUID (a shared-LID VM's
 *               new mapping: DGID its vGUID's GID, DLID its new LID),
 *               bit 4 LANE (a lane order, below)
 *   byte 1      SL (bits 0-3)
 *   byte 2      MTU code (bits 0-5)
 *   byte 3      Rate code (bits 0-5)
 *   bytes 4-5   P_Key
 *   byte 6      PacketLifeTime (bits 0-5)
 *   byte 7      LMC of DLID's port (bits 0-2; with LANE, else reserved)
 *   bytes 8-11  SLID (32 bits: room for 18-bit extended LIDs)
 *   bytes 12-15 DLID (32 bits)
 *   bytes 16-31 SGID
 *   bytes 32-47 DGID
 *   bytes 48-53 reserved
 * All multi-byte fields big-endian.  A path is given from SLID's port to
 * DLID's; the endpoint at DLID gets the same record (it names the pair).
 *
 * A lane order (flags exactly LANE; the hot-spot lanes of ibsmd(8)): the
 * port at SLID, the one the notice is sent to, moves every QP whose DLID
 * is one of DLID's port's LIDs (DLID .. DLID + 2^LMC - 1) to SL: a 69
 * carries the slow SL (DLID is a hot-spot the port contributes to), a 68
 * the fast SL (it no longer is).  Only flags, SL, LMC, SLID and DLID are
 * valid; every other byte is 0.
 */
#ifndef IBSMD_NOTICE_H
#define IBSMD_NOTICE_H

#include <stdint.h>

#define NOTICE_SIZE		80
#define NOTICE_DATA_SIZE	54

#define TRAP_GID_IN_SERVICE	64
#define TRAP_GID_OUT_OF_SERVICE	65
#define TRAP_MC_CREATED		66
#define TRAP_MC_DELETED		67
#define TRAP_UNPATH		68
#define TRAP_REPATH		69
#define TRAP_LINK_STATE		128
#define TRAP_LOCAL_CHANGES	144
#define TRAP_SYS_GUID		145

#define NOTICE_TYPE_SM		3
#define NOTICE_PRODUCER_CM	4	/* class manager: the SA */

#define NPATH_WILDCARD		0x01
#define NPATH_GIDS		0x02
#define NPATH_REVERSIBLE	0x04
#define NPATH_VGUID		0x08	/* a vGUID-to-LID mapping change (Paper VI,
					 * sm/vm/vmshared.h): DGID the VM's, DLID its new LID */
#define NPATH_LANE		0x10	/* a lane order: QPs towards DLID to SL */
#define NPATH_FLAGS		(NPATH_WILDCARD | NPATH_GIDS | NPATH_REVERSIBLE | \
				 NPATH_VGUID | NPATH_LANE)
#define NLANE_LMC_MAX		7	/* PortInfo:LMC is 3 bits */

struct notice {
	uint8_t generic;	/* 1: TrapNumber/ProducerType; 0: vendor */
	uint8_t type;		/* 7 bits */
	uint32_t producer;	/* ProducerType or VendorID, 24 bits */
	uint16_t trap;		/* TrapNumber or DeviceID */
	uint16_t issuer_lid;
	uint8_t toggle;
	uint16_t count;		/* 15 bits */
	uint8_t data[NOTICE_DATA_SIZE];
	uint8_t issuer_gid[16];
};

struct notice_path {
	uint8_t flags;		/* NPATH_* */
	uint8_t sl, mtu, rate, packet_life;
	uint16_t pkey;
	uint32_t slid, dlid;
	uint8_t sgid[16], dgid[16];
};

/* A lane order: the QPs of the port at slid towards dlid's port go to sl. */
struct notice_lane {
	uint32_t slid;		/* the receiving port (the contributor) */
	uint32_t dlid;		/* the hot-spot port's base LID */
	uint8_t lmc;		/* its LMC: its LIDs are dlid .. dlid + 2^lmc - 1 */
	uint8_t sl;		/* slow SL in a 69, fast SL in a 68 */
};

void notice_encode(const struct notice *n, uint8_t out[NOTICE_SIZE]);
void notice_decode(const uint8_t in[NOTICE_SIZE], struct notice *n);
/* A notice the SM issues: generic, type 3, producer 4, the SM's LID/GID. */
void notice_init_sm(struct notice *n, uint16_t trap, uint16_t sm_lid,
		    const uint8_t sm_gid[16]);
/* 64-67: the GID in DataDetails */
void notice_set_gid(struct notice *n, const uint8_t gid[16]);
void notice_get_gid(const struct notice *n, uint8_t gid[16]);
/* 68/69 */
void notice_set_path(struct notice *n, const struct notice_path *p);
void notice_get_path(const struct notice *n, struct notice_path *p);
/*
 * A lane order from the SM: trap TRAP_REPATH (to the slow SL) or
 * TRAP_UNPATH (back to the fast SL), issued by the SM at sm_lid/sm_gid.
 */
void notice_lane(struct notice *n, uint16_t trap, uint16_t sm_lid,
		 const uint8_t sm_gid[16], const struct notice_lane *l);
/* 0 and *l filled when n is a 68/69 lane order, else -1. */
int notice_get_lane(const struct notice *n, struct notice_lane *l);

#endif
