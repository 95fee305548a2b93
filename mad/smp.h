/*
 * Subnet management packets: building requests and decoding the
 * attributes the SM uses, through libibmad's field tables.
 */
#ifndef IBSMD_SMP_H
#define IBSMD_SMP_H

#include <stdint.h>

#include "mad/transport.h"

#define SMP_DATA_OFFS 64
#define SMP_DATA_SIZE 64

/* PortInfo:CapabilityMask bits */
#define CAP_IS_SM            (1u << 1)
#define CAP_IS_PKEY_NVRAM    (1u << 8)	/* the P_Key table survives a reset */
#define CAP_IS_TRAP_SUPPORTED (1u << 3)
#define CAP_HAS_MCAST_FDB_TOP (1u << 30)	/* a switch's port 0: MulticastFDBTop */

/* SMInfo states and attribute modifiers */
enum sm_state { SMS_NOTACTIVE = 0, SMS_DISCOVERING = 1, SMS_STANDBY = 2,
		SMS_MASTER = 3 };
/* "NOTACTIVE", "DISCOVERING", "STANDBY", "MASTER"; "?" for others. */
const char *sm_state_name(int state);
enum sm_amod { SMA_HANDOVER = 1, SMA_ACKNOWLEDGE = 2, SMA_DISABLE = 3,
	       SMA_STANDBY = 4, SMA_DISCOVER = 5 };

struct smp_nodeinfo {
	uint64_t sys_guid, node_guid, port_guid;
	uint32_t vendor_id, revision;
	uint16_t device_id, partition_cap;
	uint8_t type, nports, local_port;
};

struct smp_switchinfo {
	uint32_t lft_cap, lft_top;
	uint16_t mft_cap, mft_top, partition_enf_cap;
	uint8_t lifetime, port_state_change, enhanced_port0;
};

struct smp_sminfo {
	uint64_t guid, sm_key;
	uint32_t act_count;
	uint8_t priority, state;
};

/* A directed-route request; path[1..hops] are the output ports. */
void smp_init_dr(uint8_t *mad, int method, uint16_t attr, uint32_t mod,
		 const uint8_t *path, int hops);
/* A LID-routed request (class 0x01). */
void smp_init_lid(uint8_t *mad, int method, uint16_t attr, uint32_t mod);
/* Turns a received request into its response (GetResp) in place. */
void smp_make_response(uint8_t *mad, int status);
static inline uint8_t *smp_data(uint8_t *mad)
{
	return mad + SMP_DATA_OFFS;
}
int smp_status(const uint8_t *mad);	/* the 15-bit MAD status */
int smp_method(const uint8_t *mad);
int smp_class(const uint8_t *mad);
uint16_t smp_attr(const uint8_t *mad);
uint32_t smp_attr_mod(const uint8_t *mad);
void smp_dr_address(struct mad_addr *a);
/*
 * The way back to the sender of a directed-route SMP that arrived here:
 * its return path (the input port at every hop) reversed, as path[1..n]
 * for smp_init_dr().  Returns n, the hop count (0: the sender is this
 * node's own port), or -1 if the MAD carries no usable path.
 */
int smp_reverse_path(const uint8_t *mad, uint8_t *path /* [64] */);

void smp_decode_nodeinfo(const uint8_t *data, struct smp_nodeinfo *ni);
void smp_decode_switchinfo(const uint8_t *data, struct smp_switchinfo *si);
void smp_decode_sminfo(const uint8_t *data, struct smp_sminfo *sm);
void smp_encode_sminfo(uint8_t *data, const struct smp_sminfo *sm);
/* NodeDescription: copies up to 64 bytes, NUL-terminated, trimmed. */
void smp_decode_nodedesc(const uint8_t *data, char *out /* [65] */);
uint32_t smp_pi_get(const uint8_t *data, int field);	/* enum MAD_FIELDS */
uint64_t smp_pi_get64(const uint8_t *data, int field);
void smp_pi_set(uint8_t *data, int field, uint32_t v);
void smp_pi_set64(uint8_t *data, int field, uint64_t v);
/* Clears the PortInfo fields a Set would change unless told otherwise. */
void smp_pi_prepare_set(uint8_t *data);

#endif
