/*
 * The fabric model: plain arrays indexed by small integers.
 *
 * nodes[] holds every node; each node owns the contiguous slice
 * ports[first_port .. first_port + nports] (port 0 included, also for CAs,
 * where it is simply unused).  Links are port indices (remote).  The model
 * is built by a live sweep, by the topology-file parser or by the emulator,
 * and read by the LID allocator, the routing engines and the dumpers.
 */
#ifndef IBSMD_FABRIC_H
#define IBSMD_FABRIC_H

#include <stddef.h>
#include <stdint.h>

#define FAB_NONE      UINT32_MAX
#define FAB_DESC_LEN  64
#define FAB_MAX_HOPS  63

enum fab_node_type {
	FAB_CA = 1,
	FAB_SWITCH = 2,
	FAB_ROUTER = 3,
};

/* IB PortState values (PortInfo:PortState). */
enum fab_port_state {
	PORT_NOP = 0,
	PORT_DOWN = 1,
	PORT_INIT = 2,
	PORT_ARMED = 3,
	PORT_ACTIVE = 4,
};

#define PHYS_LINKUP 5

/* fab_port.flags */
#define FPORT_PRESENT  0x01	/* the port exists and answered PortInfo */
#define FPORT_ISSM     0x02	/* CapabilityMask.IsSM */
#define FPORT_NOANSWER 0x04	/* the port was asked and never answered */
#define FPORT_INFERRED 0x08	/* PortInfo inferred, not read (sweep.c); the
				 * first Set's answer confirms it (program.c) */
#define FPORT_NOLID    0x10	/* the SM gives this end port no LID: an idle
				 * VF under the dynamic LID scheme (sm/model/vm.c) */
#define FPORT_SMPEER   0x20	/* an SM that answered SMInfo with our SM_Key
				 * (sm/smstate.c): it may become master */

struct fab_port {
	uint32_t node;		/* owning node index */
	uint32_t remote;	/* peer port index or FAB_NONE */
	uint64_t guid;		/* port GUID (switch ports share port 0's) */
	uint32_t lid;		/* LID the SM assigned (base LID of the range) */
	uint32_t hw_lid;	/* LID read from the device in the last sweep */
	uint32_t hw_sm_lid;	/* MasterSMLID read from the device */
	uint32_t capmask;
	uint8_t num;		/* port number on its node */
	uint8_t flags;
	uint8_t state;		/* enum fab_port_state, as read */
	uint8_t phys_state;
	uint8_t lmc;		/* as read */
	uint8_t width_active;
	uint8_t speed_active;
	uint8_t width_max;	/* the widest width the port is enabled for and
				 * supports (PortInfo LinkWidthEnabled &
				 * LinkWidthSupported), width_active's
				 * encoding; 0: not read */
	uint8_t speed_max;	/* the same of LinkSpeedEnabled/Supported */
	uint8_t mtu_cap;
	uint8_t vl_cap;
	uint8_t neighbor_mtu;	/* as read */
	uint8_t oper_vls;	/* as read */
	uint16_t vm_weight;	/* a VF port carrying a VM: its weight (the
				 * VM registry's, >= 1); 0: no VM here */
};

struct fab_node {
	uint64_t guid;
	uint64_t sys_guid;
	uint32_t first_port;	/* index of this node's port 0 in ports[] */
	uint32_t vendor_id;
	uint32_t revision;	/* NodeInfo:Revision */
	uint16_t device_id;
	uint16_t partition_cap;
	uint8_t type;		/* enum fab_node_type */
	uint8_t nports;		/* number of physical ports (not counting 0) */
	uint8_t flags;
	uint8_t dr_len;		/* directed route from the SM port */
	uint8_t dr_path[FAB_MAX_HOPS + 1];	/* dr_path[1..dr_len] */
	char desc[FAB_DESC_LEN + 1];
	/* switches only */
	uint32_t lft_cap;	/* LinearFDBCap */
	uint32_t lft_top;	/* LinearFDBTop, as read */
	uint16_t mft_cap;
	uint16_t mft_top;	/* MulticastFDBTop, as read or written */
	uint8_t port_state_change;
	uint8_t enhanced_port0;
	uint8_t lifetime;
	uint16_t partition_enf_cap;
	/* extended LIDs (mad/xlid.h) */
	uint8_t xlid;		/* enum fab_xlid */
	uint32_t xlid_cap;	/* SecondaryLFTCap (switches) */
};

/* fab_node.xlid: what the node said of extended LIDs (XLIDCap Get) */
enum fab_xlid { XLID_UNKNOWN = 0, XLID_NO = 1, XLID_YES = 2 };

/* fab_node.flags */
#define FNODE_NOANSWER 0x01	/* some query to the node never answered */
#define FNODE_VSWITCH  0x02	/* a hypervisor's vSwitch (policy
				 * virtualization.vswitches, sm/model/vswitch.c):
				 * port 1... one uplink to a physical switch,
				 * the PF and the VFs on its other ports */

struct guid_map {
	uint64_t *keys;		/* 0 = empty slot */
	uint32_t *vals;
	uint32_t *aux;		/* a second value per key (0 when never set); NULL until
				 * guid_map_set_aux() is first called */
	uint32_t cap;		/* power of two */
	uint32_t used;
};

struct fabric {
	struct fab_node *nodes;
	uint32_t n_nodes, cap_nodes;
	struct fab_port *ports;
	uint32_t n_ports, cap_ports;
	struct guid_map node_by_guid;	/* node GUID -> node index */
	uint32_t sm_node;	/* node holding the SM's port, FAB_NONE if unknown */
	uint8_t sm_port;	/* port number of the SM's port on sm_node */
	uint32_t max_lid;	/* highest pLID assigned (after LID assignment) */
	uint8_t lmc;		/* subnet LMC */
	uint32_t *lid_port;	/* LID -> port index (FAB_NONE), n = max_lid + 1 */
	/*
	 * Extended LIDs (mad/xlid.h): a VF port's lid may be a vLID
	 * (>= FAB_VLID_BASE, one LID, no LMC).  vLIDs are not in lid_port
	 * nor counted in max_lid -- no engine routes them -- but here:
	 * vlid_port[vlid - FAB_VLID_BASE], n = max_vlid - FAB_VLID_BASE + 1
	 * (max_vlid 0 and vlid_port NULL when there is none).
	 */
	uint32_t max_vlid;
	uint32_t *vlid_port;
	int xlid_mode;		/* 1: extended LIDs in use (the SM decides) */
	uint32_t lid_limit;	/* the highest unicast LID the SM gives; 0:
				 * 0xBFFF (tests lower it, sm->lid_limit, to
				 * fill the space on a small fabric) */
};

/*
 * The LID space: unicast LIDs below FAB_MLID_BASE, multicast LIDs from it
 * (sm/model/mcgroups.h's MC_MLID_BASE), vLIDs FAB_VLID_BASE..FAB_VLID_MAX
 * (mad/xlid.h's XLID_VBASE, XLID_VMAX).
 */
#define FAB_MLID_BASE 0xC000
#define FAB_VLID_BASE 0x10000u
#define FAB_VLID_MAX  0x3FFFFu
/* LIDs a LinearForwardingTable block holds (also an XLIDLFT block's vLIDs). */
#define FAB_LFT_BLOCK 64
static inline int fabric_is_vlid(uint32_t lid)
{
	return lid >= FAB_VLID_BASE && lid <= FAB_VLID_MAX;
}
/* The port holding a LID (a pLID or a vLID), FAB_NONE. */
static inline uint32_t fabric_lid_port(const struct fabric *f, uint32_t lid)
{
	if (fabric_is_vlid(lid))
		return f->vlid_port && lid <= f->max_vlid ?
		       f->vlid_port[lid - FAB_VLID_BASE] : FAB_NONE;
	return f->lid_port && lid <= f->max_lid ? f->lid_port[lid] : FAB_NONE;
}

void fabric_init(struct fabric *f);
void fabric_free(struct fabric *f);
/* A deep copy (a snapshot for a routing thread); 0 or -1 on ENOMEM. */
int fabric_clone(struct fabric *dst, const struct fabric *src);
/* Adds a node with ports 0..nports; returns its index or FAB_NONE on ENOMEM. */
uint32_t fabric_add_node(struct fabric *f, uint8_t type, uint8_t nports,
			 uint64_t guid);
uint32_t fabric_find_node(const struct fabric *f, uint64_t guid);
/*
 * Whether port pi, present and up, runs below what it is enabled
 * for and supports (width_max, speed_max): a degraded link is one with
 * such a port at either end.
 */
int fabric_port_degraded(const struct fabric *f, uint32_t pi);
/* The widest width of a LinkWidth mask (1X 2X 4X 8X 12X), 0 if none. */
uint8_t fabric_best_width(uint8_t mask);
/* The fastest speed of a LinkSpeed mask (SDR DDR QDR), 0 if none. */
uint8_t fabric_best_speed(uint8_t mask);
/* Connects two port indices (both directions); a previous link of either is undone. */
void fabric_link(struct fabric *f, uint32_t pa, uint32_t pb);
static inline uint32_t fabric_port(const struct fabric *f, uint32_t node,
				   unsigned num)
{
	return f->nodes[node].first_port + num;
}
static inline struct fab_port *fabric_portp(const struct fabric *f,
					    uint32_t node, unsigned num)
{
	return &f->ports[f->nodes[node].first_port + num];
}
/* An end port holds a LID: a CA/router port or a switch's port 0. */
static inline int fabric_is_endport(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	const struct fab_node *n = &f->nodes[p->node];
	if (!(p->flags & FPORT_PRESENT))
		return 0;
	return n->type == FAB_SWITCH ? p->num == 0 : p->num != 0;
}
/*
 * The LMC an end port uses: the subnet's, except a base (not enhanced)
 * switch port 0, which has a single LID.
 */
static inline uint8_t fabric_port_lmc(const struct fabric *f, uint32_t pi)
{
	const struct fab_node *n = &f->nodes[f->ports[pi].node];
	return (n->type == FAB_SWITCH && !n->enhanced_port0) ? 0 : f->lmc;
}
/*
 * Rebuilds lid_port[] (pLIDs) and vlid_port[] (vLIDs) from ports[].lid
 * and f->lmc; returns 0 or -1 (ENOMEM).
 */
int fabric_index_lids(struct fabric *f);
/* Counts switches, CAs (nodes of type CA or router) and present ports. */
void fabric_counts(const struct fabric *f, uint32_t *sw, uint32_t *ca,
		   uint32_t *ports);

/*
 * vSwitches (the vSwitch paper, "Efficient Routing and Reconfiguration
 * in Virtualized HPC Environments with vSwitch-enabled Lossless
 * Networks", Sections 4 and 5).  A vSwitch (FNODE_VSWITCH) has one link
 * to a switch that is not a vSwitch, its uplink, and CAs on its other
 * linked ports: the lowest-numbered of those is the PF, the following
 * ones in port order are VF 0, 1, ...  Each returns a port index, or
 * FAB_NONE (not a vSwitch, no such port, not linked).
 */
static inline int fabric_is_vswitch(const struct fabric *f, uint32_t node)
{
	return node < f->n_nodes && f->nodes[node].type == FAB_SWITCH &&
	       (f->nodes[node].flags & FNODE_VSWITCH);
}
uint32_t fabric_vswitch_uplink(const struct fabric *f, uint32_t node);
/* The PF's CA port (the far end of the vSwitch's PF port). */
uint32_t fabric_vswitch_pf(const struct fabric *f, uint32_t node);
/* VF k's CA port; *vs_port (may be NULL) gets the vSwitch port number. */
uint32_t fabric_vswitch_vf(const struct fabric *f, uint32_t node, unsigned k,
			   uint8_t *vs_port);
/* VFs (CA ports after the PF) on the vSwitch. */
unsigned fabric_vswitch_nvf(const struct fabric *f, uint32_t node);
/*
 * For a CA port: the vSwitch it hangs on (node index) and, in *vf, its VF
 * number (-1 for the PF).  FAB_NONE when the port is not behind a vSwitch.
 */
uint32_t fabric_vswitch_of(const struct fabric *f, uint32_t pi, int *vf);
/* The physical switch above a vSwitch (node index), FAB_NONE. */
uint32_t fabric_vswitch_leaf(const struct fabric *f, uint32_t node);

/*
 * f's end ports by port GUID (a switch's port 0 by its node GUID), in m
 * with room for extra more keys.  0, or -1 (ENOMEM; m emptied).
 */
int fabric_endport_map(const struct fabric *f, uint32_t extra, struct guid_map *m);

int guid_map_init(struct guid_map *m, uint32_t cap);
void guid_map_free(struct guid_map *m);
int guid_map_put(struct guid_map *m, uint64_t key, uint32_t val);
uint32_t guid_map_get(const struct guid_map *m, uint64_t key);
/* Removes key (a no-op when absent), keeping the probe chains whole. */
void guid_map_del(struct guid_map *m, uint64_t key);
/* The second value of a key already in the map; -1 when it is not. */
int guid_map_set_aux(struct guid_map *m, uint64_t key, uint32_t aux);
/* 0 when the key is absent or its second value was never set. */
uint32_t guid_map_get_aux(const struct guid_map *m, uint64_t key);

/* Is the port up and cabled to a present port? (what a link write needs) */
int fabric_port_linked(const struct fabric *f, uint32_t pi);

#endif
