/*
 * The policy applied to the subnet the SM keeps (struct sm's cfg, sub,
 * parts): shared by the heavy sweep, the VM writes and the multicast
 * writes between sweeps.
 */
#ifndef IBSMD_APPLY_H
#define IBSMD_APPLY_H

struct sm;
struct program_params;
struct qos_report;

/* Discovery and the writes ask again what failed, this many rounds. */
#define SM_EXTRA_ROUNDS 2

/* What the configuration writes into ports (first: ClientReregister too). */
void sm_program_params(const struct sm *sm, int first,
		       struct program_params *pp);
/*
 * qos.mode over sm->sub.lft: SLs and SL-to-VL tables (sm/model/qos.h);
 * a failure is logged and the tables keep no QoS.
 */
void sm_qos_apply(struct sm *sm);
/*
 * The lanes of congestion.mode (sm/model/lanes.h) as the QoS apply r
 * (or none) left them: the policy's SLs, the ports left with one lane.
 */
void sm_lanes_applied(struct sm *sm, const struct qos_report *r);
/*
 * Records the LIDs of the model in the LID table and writes it to the state
 * directory; a failure is logged and set as SM_ERR_STATE (cleared by the
 * next write that works).
 */
void sm_save_lids(struct sm *sm);

#endif
