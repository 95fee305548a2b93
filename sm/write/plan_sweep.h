/*
 * The sweep's planner: what the SM wants the devices to hold after a
 * heavy sweep, as a write plan (plan.h) for the executor (program.h).
 *
 *  wave 0: every port's PortInfo (LID, SM LID, MTU, VLs, timers; ARMED
 *          where the link is Init) and end ports' P_Key table, at once,
 *          while the routes are computed; when the routes come, every
 *          switch's SwitchInfo (LinearFDBTop) and LFT blocks, in the
 *          same wave, so that nothing waits for the ports' answers;
 *          with qos.mode vftree also the SL-to-VL and VL arbitration
 *          tables (plan_sweep_qos);
 *  wave 1: ACTIVE on every port that is ARMED once wave 0 is over (the
 *          spec wants both ends ARMED first), planned when wave 0 ends.
 *
 * Everything the SM wants is planned; what the devices already hold is
 * left out by the executor, against the device cache.
 */
#ifndef IBSMD_PLAN_SWEEP_H
#define IBSMD_PLAN_SWEEP_H

#include <stdint.h>

#include "sm/model/config.h"
#include "sm/model/mkeys.h"
#include "sm/model/part_resolve.h"
#include "sm/write/devcache.h"
#include "sm/write/plan.h"
#include "sm/discover/sweep.h"

struct vm_registry;
struct program_params {
	uint64_t subnet_prefix;
	uint32_t sm_lid;
	int subnet_timeout;
	int hoq_life;
	int leaf_hoq_life;
	int switch_lifetime;	/* SwitchInfo:LifeTimeValue */
	int vl_stall_count;
	int max_op_vls;		/* OperationalVLs encoding ceiling (1..5) */
	int client_rereg;	/* set ClientReregister on CA ports */
	int extra_rounds;	/* rounds of re-sending what failed */
	/* qos, with a qos.mode that writes tables */
	struct cfg_vlarb vlarb_low, vlarb_high;	/* qos.vlarb_*: given or not */
	int vl_high_limit;	/* PortInfo VLHighLimit on linked ports;
				 * -1: as the port holds it */
	/* the partitions resolved against the model planned (sm/model/part_resolve.h):
	 * the P_Key tables; NULL: the default partition only, full members */
	const struct part_model *parts;
	/* the multicast groups (sm/model/mcgroups.h): their MFT blocks with the
	 * switches' tables (sm/write/plan_mcast.h); NULL: none planned */
	const struct mc_db *mc;
	/* the VMs: a member joined by its vGUID is at its VM's port */
	const struct vm_registry *vms;
	/* security.m_key (sm/model/mkeys.h): the M_Key fields of the end
	 * ports' PortInfo; NULL or protect 0: M_Key 0, ProtectBits 0, lease 0 */
	const struct mkeys *mkeys;
	/* the LFT blocks in one wave, unordered (sm/write/plan_lft.h): the
	 * tests' comparison with the writer before the order; 0 in the daemon */
	int lft_unordered;
};

/* The M_Key fields of an end port's PortInfo pi (64 bytes) as k wants them. */
void plan_mkey_fields(const struct mkeys *k, uint64_t port_guid, uint8_t *pi);

/*
 * Each returns 0, or -1 on ENOMEM (with part of it planned).  c learns
 * what discovery read on the way (devcache_observe_*).
 */
/* The P_Key entries a port holds: NodeInfo PartitionCap, or on a switch's
 * external port SwitchInfo PartitionEnforcementCap (0: it holds none). A
 * PartitionCap of 0 (a model that does not say) counts as one block. */
unsigned plan_pkey_cap(const struct fabric *f, uint32_t pi);
#define PLAN_PKEY_BLOCK 32	/* P_Key entries a block */
int plan_sweep_ports(struct plan *p, int wave, const struct discovery *d,
		     struct devcache *c, const struct program_params *pp);
/* One port again, after the device showed it is not what the model said. */
int plan_sweep_port(struct plan *p, int wave, const struct discovery *d,
		    struct devcache *c, const struct program_params *pp,
		    uint32_t pi);
/*
 * Extended LIDs (mad/xlid.h), for the VM writes too: a capable switch's
 * XLIDCap (Enabled, Top = t's secondary blocks x 64, t's DefaultPort) and a
 * secondary block of row; a CA port's XLIDCap with PortVLID vlid (0:
 * none).  Vendor ops (PLAN_VENDOR), left out by the executor when the
 * device cache says they are held.  0 or -1 (ENOMEM).
 */
int plan_xlid_cap(struct plan *p, int wave, const struct fabric *f,
		  const struct lft_tables *t, uint32_t ni);
int plan_xlid_block(struct plan *p, int wave, const struct lft_tables *t,
		    uint32_t row, uint32_t block);
/* A secondary block of node given as payload (a VM's mixed write: migrate_payload()). */
int plan_xlid_data(struct plan *p, int wave, uint32_t node, uint32_t block,
		   const uint8_t *payload);
int plan_xlid_port(struct plan *p, int wave, const struct fabric *f,
		   uint32_t pi, uint32_t vlid);
/*
 * QoS (qos.mode), from t's SL-to-VL tables (routing/engine.h;
 * none: nothing planned, the devices keep theirs): an SLtoVLMappingTable
 * on every linked CA port (modifier 0) and every switch (input, output)
 * pair of port 0 and the linked ports, input != output (modifier
 * in << 8 | out, or one Set for many pairs where the switch advertises
 * OptimizedSLtoVLMappingProgramming); a VLArbitrationTable low-priority
 * block and a high-priority block on every linked CA and switch port:
 * pp's qos.vlarb_low/high where given (entries for VLs the port does not
 * send on, or past its VLArbLowCap/HighCap, left out with a warning),
 * else weight 64 on each data VL the port's tables use and an empty
 * high table.  Called by plan_sweep_switches(); the executor leaves out
 * what the device cache says is held.  0 or -1 (ENOMEM).
 */
int plan_sweep_qos(struct plan *p, int wave, const struct discovery *d,
		   const struct lft_tables *t, const struct program_params *pp);
/* ACTIVE on every linked port the model says is ARMED. */
int plan_sweep_activation(struct plan *p, int wave, const struct discovery *d,
			  const struct program_params *pp);

#endif
