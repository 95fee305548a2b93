/* The policy re-read at run time (see reload.h). */
#include "sm/reload.h"

#include <stdio.h>
#include <string.h>

#include "mad/txn.h"
#include "sm/base/log.h"
#include "sm/base/nodemap.h"
#include "sm/ctl/control.h"
#include "sm/ctl/evhook.h"
#include "sm/ctl/metrics.h"
#include "sm/daemon.h"
#include "sm/mcast/ipoib.h"
#include "sm/weights.h"
#include "sm/dftree.h"
#include "sm/jobs.h"
#include "sm/perfmgr.h"

/*
 * What the new policy c takes away that a slip of the operator's (a file
 * truncated or emptied, a partitions: block commented out) would: every
 * key, the SM_Key, every partition.  A short reason, or NULL.
 */
static const char *drops_too_much(const struct config *old, const struct config *c,
				  char *buf, size_t len)
{
	if (!c->keys_set && old->keys_set) {
		snprintf(buf, len, "the file sets nothing (the running policy sets %d values)",
			 old->keys_set);
		return buf;
	}
	if (old->sm_key && !c->sm_key)
		return "it drops sm.sm_key (the SM_Key would be 0)";
	if (old->n_parts && !c->n_parts) {
		snprintf(buf, len, "it drops every partition (%d), and with them the tenants' isolation",
			 old->n_parts);
		return buf;
	}
	if (old->n_parts && !old->default_full && c->n_parts && c->default_full)
		return "it makes every end port a full member of the default "
		       "partition (default_partition.membership full), and with "
		       "that drops the tenants' isolation";
	return NULL;
}

int sm_reload(struct sm *sm, int force, char *err, size_t errlen)
{
	if (!sm->config_path[0]) {
		log_notice("no policy file to reload; keeping the built-in defaults");
		return 0;
	}
	struct config c;
	config_defaults(&c);
	if (config_load(&c, sm->config_path, err, errlen) < 0) {
		errors_set(&sm->errs, SM_ERR_RELOAD, "policy not reloaded, the old one runs: %s",
			     err);
		return -1;
	}
	char why[128];
	const char *drop = drops_too_much(&sm->cfg, &c, why, sizeof(why));
	if (drop && !force) {
		snprintf(err, errlen, "%s: %s; refused (ibsmctl reload --force applies it)",
			 sm->config_path, drop);
		errors_set(&sm->errs, SM_ERR_RELOAD, "policy not reloaded, the old one runs: %s",
			   err);
		return -1;
	}
	if (c.routing_jobs == JOBS_OFF && sm->cfg.routing_jobs != JOBS_OFF &&
	    jobs_live(sm)) {
		snprintf(err, errlen, "%s: routing.jobs off while jobs run; refused "
			 "(ibsmctl job end them first)", sm->config_path);
		errors_set(&sm->errs, SM_ERR_RELOAD, "policy not reloaded, the old one runs: %s",
			   err);
		return -1;
	}
	if (sm->routing_override) {	/* -R stays */
		c.n_engines = sm->cfg.n_engines;
		memcpy(c.engines, sm->cfg.engines, sizeof(c.engines));
	}
	char clash[256];
	if (config_engine_sls_conflict(&c, clash, sizeof(clash))) {
		snprintf(err, errlen, "%s: %s (-R %s); refused", sm->config_path, clash,
			 sm->routing_override ? sm->routing_override : "not given");
		errors_set(&sm->errs, SM_ERR_RELOAD, "policy not reloaded, the old one runs: %s",
			   err);
		return -1;
	}
	if (drop)
		log_warn("policy reload forced: %s: %s", sm->config_path, drop);
	/* the M_Key secret read again (state_dir stays the command line's) */
	snprintf(c.state_dir, sizeof(c.state_dir), "%s", sm->cfg.state_dir);
	struct mkeys old_mk = sm->sub.mk;
	if (subnet_mkeys_configure(&sm->sub, &c, 1, err, errlen) < 0) {
		errors_set(&sm->errs, SM_ERR_RELOAD, "policy not reloaded, the old one runs: %s",
			     err);
		return -1;
	}
	if (memcmp(&old_mk, &sm->sub.mk, sizeof(old_mk)))
		log_notice("security.m_key changed: level %d, lease %d s; the ports are "
			   "written at the next heavy sweep", sm->sub.mk.protect,
			   sm->sub.mk.lease_s);
	if (sm->metrics && metrics_reconfigure(sm->metrics, &c, err, errlen) < 0) {
		sm->sub.mk = old_mk;
		errors_set(&sm->errs, SM_ERR_RELOAD, "policy not reloaded, the old one runs: %s",
			     err);
		return -1;
	}
	errors_clear(&sm->errs, SM_ERR_RELOAD);
	/* what the command line set stays */
	snprintf(c.state_dir, sizeof(c.state_dir), "%s", sm->cfg.state_dir);
	memcpy(c.port_ca, sm->cfg.port_ca, sizeof(c.port_ca));
	c.port_num = sm->cfg.port_num;
	c.port_guid = sm->cfg.port_guid;
	if (sm->log_level_override >= 0)
		c.log_level = sm->log_level_override;
	if (config_routing_differs(&c, &sm->cfg)) {
		sm->sub.route_gen++;
		log_notice("routing policy changed: the next heavy sweep routes from scratch");
	}
	char what[64];
	if (part_config_changed(&sm->cfg, &c, what, sizeof(what))) {
		/* P_Key tables, routes and SLs from scratch; only what differs is written */
		sm->sub.route_gen++;
		log_notice("partitions changed: %s; the next heavy sweep routes from scratch",
			   what);
	}
	if (c.qos_mode != sm->cfg.qos_mode || c.qos_max_vls != sm->cfg.qos_max_vls ||
	    c.cong_mode != sm->cfg.cong_mode || c.cong_fast_sl != sm->cfg.cong_fast_sl ||
	    c.cong_slow_sl != sm->cfg.cong_slow_sl)
		log_notice("qos policy changed: applied at the next heavy sweep");
	if (memcmp(&c.qos_vlarb_low, &sm->cfg.qos_vlarb_low, sizeof(c.qos_vlarb_low)) ||
	    memcmp(&c.qos_vlarb_high, &sm->cfg.qos_vlarb_high, sizeof(c.qos_vlarb_high)) ||
	    c.qos_vlarb_high_limit != sm->cfg.qos_vlarb_high_limit)
		log_notice("qos VL arbitration changed: applied at the next heavy sweep");
	if (nodemap_use_file(c.node_name_map, err, errlen) < 0)
		return -1;
	if (c.control_gid != sm->cfg.control_gid && sm->ctl &&
	    control_set_group(sm->ctl, c.control_gid, err, errlen) < 0)
		log_err("control.group: %s", err);	/* the policy still applies */
	sm->cfg = c;
	evhook_configure(sm->hook, c.events_exec, c.events_exec_timeout_s, c.events_exec_max);
	mcast_ipoib_sync(sm, 1);
	weights_reconfigure(sm);
	perfmgr_reconfigure(sm);
	dftree_reconfigure(sm);
	log_set_level(c.log_level);
	if (sm->txn) {
		struct txn_params tp = {
			.timeout_ms = c.mad_timeout_ms,
			.retries = c.mad_retries,
			.window = c.mad_window,
			.window_per_node = c.mad_window_per_node,
		};
		txn_set_params(sm->txn, &tp);
	}
	log_notice("policy reloaded from %s", sm->config_path);
	return 0;
}
