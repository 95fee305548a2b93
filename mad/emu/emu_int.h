/*
 * The emulator's insides, shared by mad/emu/emu.c (life cycle, clients, the
 * delivery queue, faults, inspection), mad/emu/emu_route.c (directed-route and
 * LID-routed forwarding, links, traps) and mad/emu/emu_sma.c (the emulated
 * SMAs and their attribute codecs).  Not for use outside those files.
 *
 * Everything is a plain array indexed by node or port number: nodes[],
 * ports[] (each node owns ports[first_port .. first_port + nports], port 0
 * included), sws[] for switch state.  Multi-byte MAD fields are read and
 * written big-endian byte by byte; offsets are those of IB spec vol. 1,
 * chapters 13 and 14, and are written out where they are used.
 */
#ifndef IBSMD_EMU_INT_H
#define IBSMD_EMU_INT_H

#include <event2/event.h>
#include <stdint.h>

#include "sm/base/fabric.h"
#include "mad/emu/emu.h"
#include "mad/mkey.h"
#include "mad/pma.h"

#define EMU_NONE UINT32_MAX
#define EMU_MAX_LID_HOPS 64
#define EMU_DESC_LEN 64
#define EMU_MAX_CLIENTS 65536	/* emumc: a client on every host */
#define EMU_MAX_VATTRS 32
#define EMU_MAX_VIOLATIONS 1024
#define EMU_VMSG_LEN 200
#define EMU_DEFAULT_BATCH 2048

/* MAD header (spec 13.4.3, 14.2.1) */
#define MH_BASE_VERSION 0
#define MH_CLASS 1
#define MH_CLASS_VERSION 2
#define MH_METHOD 3		/* bit 7: R */
#define MH_STATUS 4		/* 16 bits; DR: bit 15 = D, 14:0 status */
#define MH_HOP_PTR 6
#define MH_HOP_CNT 7
#define MH_TID 8
#define MH_ATTR_ID 16
#define MH_ATTR_MOD 20
#define MH_MKEY 24
#define MH_DR_SLID 32
#define MH_DR_DLID 34
#define MH_DATA 64
#define MH_INITIAL_PATH 128
#define MH_RETURN_PATH 192

#define CLASS_SMP_LID 0x01
#define CLASS_SMP_DR 0x81

#define METHOD_GET 0x01
#define METHOD_SET 0x02
#define METHOD_TRAP 0x05
#define METHOD_TRAP_REPRESS 0x07
#define METHOD_RESP 0x80

#define ST_BAD_VERSION 0x0004
#define ST_BAD_METHOD 0x0008
#define ST_BAD_METHOD_ATTR 0x000c
#define ST_BAD_FIELD 0x001c

#define ATTR_NOTICE 0x0002
#define ATTR_NODE_DESC 0x0010
#define ATTR_NODE_INFO 0x0011
#define ATTR_SWITCH_INFO 0x0012
#define ATTR_GUID_INFO 0x0014
#define ATTR_PORT_INFO 0x0015
#define ATTR_PKEY_TABLE 0x0016
#define ATTR_SL2VL 0x0017
#define ATTR_VL_ARB 0x0018
#define ATTR_LFT 0x0019
#define ATTR_MFT 0x001b
#define ATTR_SM_INFO 0x0020

/* PortInfo:PortPhysicalState */
#define PHYS_SLEEP 1
#define PHYS_POLLING 2
#define PHYS_DISABLED 3
#define PHYS_UP 5

/* PortInfo:CapabilityMask */
#define CAPM_IS_SM 0x00000002u
#define CAPM_TRAP 0x00000008u
#define CAPM_SL_MAP 0x00000040u
#define CAPM_PKEY_NVRAM 0x00000100u
#define CAPM_SYS_GUID 0x00000800u
#define CAPM_EXT_SPEEDS 0x00004000u
#define CAPM_CM 0x00010000u
#define CAPM_CLIENT_REREG 0x02000000u
#define CAPM_MCAST_FDB_TOP 0x40000000u

/* emu_port.flags */
#define EP_UNPLUGGED 0x01	/* emu_link_down: the cable is pulled */
#define EP_DISABLED 0x02	/* PortPhysicalState set to Disabled */
#define EP_SLEEP 0x04		/* went down by a Set, LinkDownDefaultState Sleep */
#define EP_DEAD 0x08		/* emu_set_dead on this port */
#define EP_LID_SET 0x10		/* an SM has written a LID here */

struct emu_port {
	uint64_t guid;
	/* M_Key, ProtectBits, lease, M_KeyViolations (mad/mkey.h): a CA
	 * port's own; a switch's in port 0, for the whole switch */
	struct mkey_port mk;
	uint64_t gid_prefix;
	uint32_t node;
	uint32_t remote;	/* the cable's other end, EMU_NONE */
	uint32_t capmask;
	uint32_t pkey_off;	/* first entry in emu.pkeys */
	uint32_t rereg;		/* ClientReregister requests seen */
	uint32_t loss;		/* arrival loss, out of 2^32 */
	uint16_t pkey_cap;	/* entries */
	uint16_t lid, sm_lid;
	uint8_t num;
	uint8_t flags;
	uint8_t state;		/* PortState */
	uint8_t phys;		/* PortPhysicalState */
	uint8_t link_down_def;
	uint8_t lmc;
	uint8_t width_sup, width_en, width_act;
	uint8_t speed_sup, speed_en, speed_act;
	uint8_t espeed_sup, espeed_en, espeed_act;
	uint8_t mtu_cap, neighbor_mtu;
	uint8_t vl_cap, oper_vls, vl_high_limit;
	uint8_t vlarb_high_cap, vlarb_low_cap;
	uint8_t sm_sl, vl_stall, hoq_life;
	uint8_t part_enf;	/* PortInfo byte 43 bits 3:0 */
	uint8_t subnet_timeout;
	uint8_t err_thresholds;	/* LocalPhyErrors | OverrunErrors */
	/* The PMA's counters (mad/emu/emu_pma.c), by enum pma_counter:
	 * moved by emu_set_port_counter &c. and by the traffic of
	 * mad/emu/emu_flow.c; no error is emulated.  The data and packet counters are kept
	 * 64-bit (PortCountersExtended); PortCounters shows them saturated. */
	uint64_t pc[PMC_N];
};

struct emu_node {
	uint64_t guid, sys_guid;
	uint32_t first_port;
	uint32_t vendor_id, revision;
	uint32_t sw;		/* index in emu.sws, EMU_NONE for CAs */
	uint16_t device_id, partition_cap;
	uint8_t type, nports;
	uint8_t dead;
	uint16_t pma_capmask;	/* the PMA's ClassPortInfo:CapabilityMask */
	uint8_t *sl2vl;		/* lazily: 8 bytes per (in, out) pair */
	char desc[EMU_DESC_LEN];
};

struct emu_switch {
	uint32_t node;
	uint32_t lft_len;	/* bytes of lft held; the rest reads 0xff */
	uint8_t *lft;
	uint16_t *mft;		/* lazily: mft_cap rows x mft_positions */
	uint16_t lft_cap, lft_top, mft_cap, mft_top;
	uint16_t partition_enf_cap;
	uint8_t lifetime, psc, enhanced_port0;
	uint8_t def_port, def_mc_prim, def_mc_notprim;
	uint8_t enforce;	/* SwitchInfo byte 16 bits 7:4 */
	uint8_t opt_sl2vl;	/* OptimizedSLtoVLMappingProgramming advertised
				 * (emu_set_opt_sl2vl): SLtoVL modifier bits 16/17 */
	uint8_t mft_positions;
};

enum { PK_SEND, PK_DELIVER };

/* A packet in flight: a client's MAD to route, or a MAD for a client. */
struct emu_pkt {
	uint64_t due;		/* monotonic microseconds */
	uint64_t seq;
	uint32_t port;		/* PK_SEND: the sender's port; PK_DELIVER: the receiver's */
	uint32_t lid;		/* PK_SEND: DLID; PK_DELIVER: SLID */
	uint32_t qpn;
	uint16_t len;
	uint8_t kind;
	uint8_t mad[MAD_SIZE];
};

/* Packets ordered by (due, seq): a ring while pushes come in order, a heap after. */
struct emu_queue {
	struct emu_pkt *v;
	uint32_t cap, head, n;
	int heap;
};

struct emu_client {
	struct emu *e;
	struct mad_transport *t;
	uint32_t port;
	mad_recv_fn cb;
	void *arg;
	int closed;
};

struct emu_vattr {
	uint16_t attr;
	emu_attr_fn fn;
	void *ctx;
};

struct emu {
	struct emu_node *nodes;
	uint32_t n_nodes;
	struct emu_port *ports;
	uint32_t n_ports;
	struct emu_switch *sws;
	uint32_t n_sws;
	uint16_t *pkeys;
	uint8_t (*vlarb)[256];	/* lazily: 4 blocks of 64 bytes per port */
	struct guid_map node_map;	/* node GUID -> node */
	struct guid_map port_map;	/* CA port GUID -> port */

	struct event_base *base;
	struct event *ev;
	int sched;		/* 0 idle, 1 activated, 2 timer armed */
	uint64_t timer_due;
	unsigned max_batch;
	struct emu_queue q;
	uint64_t seq;

	struct emu_client **clients;	/* every client attached, grown */
	uint32_t n_clients, cap_clients;
	struct emu_client **port_client;	/* by port: the last attached */
	struct emu_vattr vattrs[EMU_MAX_VATTRS];
	uint32_t n_vattrs;
	struct emu_xlid *xlid;	/* extended LIDs, NULL until a device has them */
	emu_lft_hook_fn lft_hook;	/* after each LFT block a Set wrote */
	void *lft_hook_ctx;

	uint64_t rng;
	uint32_t loss;		/* global, out of 2^32 */
	int any_port_loss;
	uint32_t lat_fixed, lat_random;
	uint32_t trap_tid;

	struct emu_counters cnt;
	uint64_t pma_gets;	/* PerfMgt requests the PMAs answered */
	char (*vmsg)[EMU_VMSG_LEN];
	uint32_t n_vmsg, cap_vmsg;
	uint32_t n_violations;
};

/* byte order */
static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}
static inline uint32_t get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}
static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}
static inline void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static inline void put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}
static inline void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}
static inline void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static inline struct emu_node *port_node(const struct emu *e, uint32_t pi)
{
	return &e->nodes[e->ports[pi].node];
}
static inline int is_switch(const struct emu_node *n)
{
	return n->type == FAB_SWITCH;
}
static inline struct emu_switch *node_sw(const struct emu *e,
					 const struct emu_node *n)
{
	return n->sw == EMU_NONE ? NULL : &e->sws[n->sw];
}
/* The physical link of a port is up (both ends trained). */
static inline int link_up(const struct emu *e, uint32_t pi)
{
	const struct emu_port *p = &e->ports[pi];
	return p->num && p->phys == PHYS_UP && p->remote != EMU_NONE;
}

/* emu.c */
int emu_chance(struct emu *e, uint32_t threshold);
/* guid/port as emu_set_port_loss takes them: the port index, or EMU_NONE. */
uint32_t emu_find_port(const struct emu *e, uint64_t guid, int port);
/*
 * Queues a MAD for the client on port pi (or its switch's port 0), len
 * bytes as its sender wrote them (ibsim too passes on the sender's length).
 */
void emu_queue_deliver(struct emu *e, uint32_t pi, uint32_t slid,
		       uint32_t qpn, const uint8_t *mad, size_t len);
struct emu_client *emu_client_at(const struct emu *e, uint32_t pi);
void emu_drop(struct emu *e, int kind);
enum { DROP_FAULT, DROP_ROUTE, DROP_OTHER };

/* emu_route.c */
void emu_route_send(struct emu *e, const struct emu_pkt *pk);
/* End port pi answers to lid (its LID range, or its vLID). */
int emu_lid_match(const struct emu *e, uint32_t pi, uint32_t lid);
void emu_link_change(struct emu *e, uint32_t pi, int up);
void emu_trap144(struct emu *e, uint32_t pi);
/* Port pi refused smp (an M_Key violation): trap 256 to its SM LID. */
void emu_trap256(struct emu *e, uint32_t pi, const uint8_t *smp);
void emu_port_went_down(struct emu *e, uint32_t pi, uint8_t phys);
int emu_port_try_up(struct emu *e, uint32_t pi);

/* emu_sma.c */
/*
 * Answers an SMP in place; returns 1 to send the answer back, 0 to drop
 * (an M_Key violation among them: emu_mkey_admit).
 */
int emu_sma(struct emu *e, uint32_t node, uint8_t in_port, int lid_routed,
	    uint8_t *mad);
/*
 * The M_Key check (mad/mkey.h) of an SMP arriving at node by in_port, on
 * the emulator's clock: the port whose key governs (a switch's port 0, a
 * CA's arrival port) counts a violation, runs its lease and sends trap
 * 256 when the SMP is to be dropped.  Returns the verdict.
 */
enum mkey_verdict emu_mkey_admit(struct emu *e, uint32_t node, uint8_t in_port,
				 const uint8_t *mad);

/* emu_pma.c */
#define CLASS_PERF 0x04
/* A new node's PMA: PortCountersExtended and PortXmitWait, as ibsim's CAs. */
#define EMU_PMA_CAPMASK (PMA_CAP_EXT_WIDTH | PMA_CAP_XMIT_WAIT)
/*
 * Answers a PerfMgt request that reached end port pi in place (the
 * node's PMA); returns 1 to send the answer back, 0 to drop it.
 */
int emu_pma(struct emu *e, uint32_t pi, uint32_t qpn, uint8_t *mad, size_t len);

/* emu_xlid.c */
struct emu_xlid;
void emu_xlid_free(struct emu *e);
/* XLIDCap or XLIDLFT? */
int emu_xlid_attr(uint16_t attr);
/* Answers them as emu_attr_fn does (0x0c from a device without the extension). */
int emu_xlid_sma(struct emu *e, struct emu_smp *s);
int emu_xlid_is_vlid(uint32_t lid);
/* A switch's output port for vlid; -1 with the reason in why. */
int emu_xlid_lookup(const struct emu *e, uint32_t node, uint32_t vlid,
		    uint8_t *out, char *why, size_t len);
/* CA port pi answers to vlid (its PortVLID, Enabled, Active). */
int emu_xlid_port_match(const struct emu *e, uint32_t pi, uint32_t vlid);
/* CA port pi's PortVLID when Enabled and Active, else 0. */
uint32_t emu_xlid_port_vlid(const struct emu *e, uint32_t pi);

#endif
