/*
 * The policy applied to the subnet the SM keeps (see apply.h): what the
 * configuration writes into ports, the QoS mode over the routes, the LID
 * table saved.
 */
#include "sm/apply.h"

#include <stdio.h>
#include <string.h>

#include "routing/qos/pvl.h"
#include "sm/base/log.h"
#include "sm/daemon.h"
#include "sm/hookevents.h"
#include "sm/model/lids.h"
#include "sm/model/qos.h"
#include "sm/model/state.h"

void sm_program_params(const struct sm *sm, int first,
		       struct program_params *pp)
{
	*pp = (struct program_params){
		.subnet_prefix = sm->cfg.subnet_prefix,
		.sm_lid = sm->sub.sm_lid,
		.subnet_timeout = sm->cfg.subnet_timeout,
		.hoq_life = sm->cfg.hoq_life,
		.leaf_hoq_life = sm->cfg.leaf_hoq_life,
		.switch_lifetime = sm->cfg.switch_lifetime,
		.vl_stall_count = sm->cfg.vl_stall_count,
		.max_op_vls = sm->cfg.max_op_vls,
		.client_rereg = first,
		.extra_rounds = SM_EXTRA_ROUNDS,
		.vl_high_limit = -1,
		.parts = sm->parts.n_parts ? &sm->parts : NULL,
		.mc = &sm->mc,
		.vms = &sm->vms,
		.mkeys = &sm->sub.mk,
		.lft_unordered = sm->cfg.lft_unordered,
	};
	if (sm->cfg.qos_mode != QOS_NONE) {	/* none: the devices keep theirs */
		pp->vlarb_low = sm->cfg.qos_vlarb_low;
		pp->vlarb_high = sm->cfg.qos_vlarb_high;
		pp->vl_high_limit = sm->cfg.qos_vlarb_high_limit;
	}
}

void sm_lanes_applied(struct sm *sm, const struct qos_report *r)
{
	lanes_configure(&sm->sub.lanes, &sm->cfg);
	sm->sub.lanes.ports_refused = r->mode == QOS_LANES ? r->lanes_refused : 0;
}

/*
 * The QoS mode (sm/model/qos.c) over the routes just made (or repaired, which
 * makes tables without SLs, or changed by a VM's writes, sm/vm/vmexec.c: a
 * LID that moved takes its new leaf's SLs).  Without it the sweep writes
 * no SL2VL or VLArb table and PathRecords carry SL 0.
 */
void sm_qos_apply(struct sm *sm)
{
	struct qos_report r;
	if (!config_qos_tables(&sm->cfg) && !pvl_needed(&sm->parts)) {
		memset(&r, 0, sizeof(r));
		sm_lanes_applied(sm, &r);
		return;
	}
	int rc = qos_apply(&sm->cfg, &sm->sub.model->f, &sm->parts, &sm->sub.lft,
			   &r);
	sm_lanes_applied(sm, &r);
	if (rc == 0)
		qos_log(&r);
	else if (r.fail[0]) {
		errors_set(&sm->errs, SM_ERR_ROUTING, "%s", r.fail);
		hookev_routing_failed(sm->hook, r.fail);
	}
}

void sm_save_lids(struct sm *sm)
{
	char err[512];
	if (lids_record(&sm->sub.model->f, &sm->sub.guid2lid) < 0)
		snprintf(err, sizeof(err), "out of memory");
	else if (state_save_guid2lid(sm->cfg.state_dir, &sm->sub.guid2lid, err,
				     sizeof(err)) == 0) {
		errors_clear(&sm->errs, SM_ERR_STATE);
		return;
	}
	log_err("cannot save the LID table: %s", err);
	errors_set(&sm->errs, SM_ERR_STATE, "cannot save the LID table: %s", err);
}
