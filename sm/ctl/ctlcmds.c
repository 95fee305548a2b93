/*
 * The control-socket commands the daemon answers: one table of every
 * documented command, each with its handler or none (not implemented yet).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include "mad/dispatch.h"
#include "mad/sa.h"
#include "traps/notify.h"
#include "sm/ctl/control.h"
#include "sm/ctl/ctlroutes.h"
#include "sm/ctl/ctltopo.h"
#include "sm/ctl/evhook.h"
#include "sm/daemon.h"
#include "sm/dftree.h"
#include "sm/perfmgr.h"
#include "sm/base/clock.h"
#include "sm/base/log.h"
#include "sm/ctl/metrics.h"
#include "sm/base/nodemap.h"
#include "sm/mcast/mcast_sm.h"
#include "sm/sa/sa_server.h"
#include "sm/vm/vmops.h"
#include "sm/write/plan_lft.h"
#include "sm/reload.h"
#include "sm/heavy.h"
#include "sm/jobs.h"
#include "sm/light.h"

static json_t *mad_stats_json(const struct sm *sm)
{
	json_t *o = json_object();
	if (!sm->txn)
		return o;
	const struct txn_stats *st = txn_get_stats(sm->txn);
	json_object_set_new(o, "sent", json_integer((json_int_t)st->all.sent));
	json_object_set_new(o, "received", json_integer((json_int_t)st->all.recv));
	json_object_set_new(o, "timeouts", json_integer((json_int_t)st->all.timeouts));
	json_object_set_new(o, "retries", json_integer((json_int_t)st->all.retries));
	json_object_set_new(o, "errors", json_integer((json_int_t)st->all.errors));
	json_object_set_new(o, "sets", json_integer((json_int_t)st->sets));
	json_object_set_new(o, "failed", json_integer((json_int_t)st->failed));
	json_object_set_new(o, "unsolicited", json_integer((json_int_t)st->unsolicited));
	json_object_set_new(o, "in_flight", json_integer(txn_inflight(sm->txn)));
	json_object_set_new(o, "window", json_integer(st->window));
	json_object_set_new(o, "window_ceiling", json_integer(sm->cfg.mad_window));
	json_object_set_new(o, "window_cuts", json_integer((json_int_t)st->window_cuts));
	json_t *attrs = json_array();
	for (int i = 0; i <= TXN_MAX_ATTRS; i++) {
		const struct txn_attr_stats *a = &st->attrs[i];
		if (i == st->n_attrs && i < TXN_MAX_ATTRS)
			i = TXN_MAX_ATTRS;
		if (!a->c.sent && !a->c.recv)
			continue;
		char id[8];
		snprintf(id, sizeof(id), "0x%04x", a->attr);
		json_array_append_new(attrs, json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I}",
			"attribute", txn_attr_name(a->attr), "id", id,
			"sent", (json_int_t)a->c.sent, "received", (json_int_t)a->c.recv,
			"timeouts", (json_int_t)a->c.timeouts,
			"retries", (json_int_t)a->c.retries,
			"errors", (json_int_t)a->c.errors));
	}
	json_object_set_new(o, "per_attribute", attrs);
	json_t *mm = json_object();
	for (int i = 0; i < TXN_MM_N; i++)
		if (st->mismatch[i])
			json_object_set_new(mm, txn_mismatch_name(i),
					    json_integer((json_int_t)st->mismatch[i]));
	json_object_set_new(o, "answers_refused", mm);
	if (sm->disp) {
		const struct mad_dispatch_stats *ds = mad_dispatch_get_stats(sm->disp);
		json_t *r = json_pack("{s:I,s:I,s:I}", "received", (json_int_t)ds->received,
				      "handled", (json_int_t)ds->handled,
				      "status_replies", (json_int_t)ds->status_replies);
		json_t *u = json_object(), *dr = json_object();
		for (int i = 0; i < MAD_UNSUP_N; i++)
			if (ds->unsupported[i])
				json_object_set_new(u, mad_unsup_name(i),
						    json_integer((json_int_t)ds->unsupported[i]));
		for (int i = 0; i < MAD_DROP_N; i++)
			if (ds->dropped[i])
				json_object_set_new(dr, mad_drop_name(i),
						    json_integer((json_int_t)ds->dropped[i]));
		json_object_set_new(r, "unsupported", u);
		json_object_set_new(r, "dropped", dr);
		json_object_set_new(o, "requests", r);
	}
	return o;
}

/*
 * security.m_key: the level, the ports keyed and not, the traps 256
 * received (violations) and the sum of M_KeyViolations read in PortInfo
 * (violations_read: what the devices counted, reported to us or not).
 */
static json_t *mkey_json(const struct subnet *sub, const struct trapin_stats *ts)
{
	struct mkey_census c;
	subnet_mkey_census(sub, &c);
	/*
	 * Ports with another SM's key (sm/model/mkeyrec.h): refusing the
	 * SM now (ports_foreign), when the last of their protections should
	 * end (foreign_ends_in_s; -1: a lease of 0, never), taken over.
	 */
	uint64_t last, now = clock_ms();
	uint32_t foreign = mkrec_refusing(&sub->rec, NULL, &last);
	json_int_t ends = 0;
	for (uint32_t i = 0; i < sub->rec.n; i++)
		if (sub->rec.v[i].since_ms && !sub->rec.v[i].end_ms)
			ends = -1;
	if (!ends && last > now)
		ends = (json_int_t)((last - now + 999) / 1000);
	return json_pack("{s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "protect_level", sub->mk.protect,
			 "ports_keyed", (json_int_t)c.keyed,
			 "ports_unkeyed", (json_int_t)c.unkeyed,
			 "violations", (json_int_t)ts->mkey_violations,
			 "violations_read", (json_int_t)c.violations,
			 "ports_foreign", (json_int_t)foreign,
			 "foreign_ends_in_s", ends,
			 "taken_over", (json_int_t)sub->rec.taken_over);
}

static json_t *status_json(const struct sm *sm)
{
	json_t *o = json_object();
	uint64_t now = (uint64_t)time(NULL);
	json_object_set_new(o, "version", json_string(IBSMD_VERSION));
	json_object_set_new(o, "started", control_time_json(sm->start_time));
	json_object_set_new(o, "uptime_s", json_integer(sm->start_time && now >= sm->start_time ?
							(json_int_t)(now - sm->start_time) : 0));
	json_object_set_new(o, "state", json_string(sm_state_name(sm->state)));
	errors_to_ctl(&sm->errs, o);
	json_object_set_new(o, "priority", json_integer(sm->cfg.sm_priority));
	char g[24];
	snprintf(g, sizeof(g), "0x%016llx", (unsigned long long)sm->tr.port_guid);
	json_object_set_new(o, "port_guid", json_string(g));
	json_object_set_new(o, "sm_lid", json_integer(sm->sub.sm_lid));
	sweeps_to_ctl(sm, o);
	scrub_to_ctl(sm, o);
	json_object_set_new(o, "act_count", json_integer(smstate_act_count(sm)));
	election_to_ctl(sm, o);
	last_sweep_to_ctl(sm, o);
	json_object_set_new(o, "traps", trapin_json(&sm->traps));
	sa_to_ctl(sm, o);
	json_t *mk = mkey_json(&sm->sub, &sm->traps.st);
	election_mkey_to_ctl(sm, mk);	/* what M_Key keeps us from managing */
	json_object_set_new(o, "m_key", mk);
	mcast_to_ctl(sm, o);
	vms_to_ctl(sm, o);
	json_object_set_new(o, "silent_sm_ports", json_integer(election_status(sm)->n_silent));
	json_object_set_new(o, "failed_links", json_integer((json_int_t)(sm->sub.links.n_lost +
									sm->sub.links.dropped)));
	json_object_set_new(o, "degraded_links", json_integer(sm->sub.links.n_degraded));
	json_object_set_new(o, "mads", mad_stats_json(sm));
	json_object_set_new(o, "perfmgr", perfmgr_to_ctl(sm));
	json_object_set_new(o, "congestion", dftree_to_ctl(sm));
	json_object_set_new(o, "jobs", jobs_to_ctl(sm));
	if (sm->hook)
		json_object_set_new(o, "events", evhook_to_ctl(sm->hook));
	return o;
}

static json_t *cmd_status(struct sm *sm, const json_t *req, char *err,
			  size_t errlen)
{
	return status_json(sm);
}

/* The Prometheus text (sm/ctl/metrics.h) as "text": ibsmctl prints it as is. */
static json_t *cmd_metrics(struct sm *sm, const json_t *req, char *err,
			   size_t errlen)
{
	size_t len;
	char *text = sm->metrics ? metrics_text(sm->metrics, &len) : NULL;
	if (!text) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	json_t *r = json_pack("{s:s%}", "text", text, len);
	free(text);
	return r;
}

static json_t *cmd_sweep(struct sm *sm, const json_t *req, char *err,
			 size_t errlen)
{
	int heavy = json_is_true(json_object_get(req, "heavy"));
	if (sm->state == SMS_STANDBY) {
		/* a standby only polls its master: the master sweeps */
		const struct election_status *es = election_status(sm);
		snprintf(err, errlen, "STANDBY: the master SM sweeps, at LID %u (port GUID 0x%016llx): ask it",
			 es->master_lid, (unsigned long long)es->master_guid);
		return NULL;
	}
	if (sm->state != SMS_MASTER && !heavy) {
		snprintf(err, errlen, "not MASTER (state %s): only a heavy sweep can be asked for",
			 sm_state_name(sm->state));
		return NULL;
	}
	if (heavy || !sm->sub.model) {
		sweeper_request_heavy(sm, "requested over the control socket");
	} else if (sm->sw.activity == SM_IDLE) {
		sweeper_request_light(sm);
	}
	return json_pack("{s:s}", "requested", heavy ? "heavy" : "light");
}

static void gid_text(const uint8_t gid[16], char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, gid, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

/* One subscription, from its InformInfo (IBA vol. 1 §13.4.8.3). */
static void add_subscription(void *arg, const uint8_t subscriber_gid[16],
			     uint16_t enum_id, const uint8_t ii[36])
{
	static const uint8_t zero[16];
	char g[64];
	json_t *o = json_object();
	gid_text(subscriber_gid, g, sizeof(g));
	json_object_set_new(o, "subscriber_gid", json_string(g));
	json_object_set_new(o, "enum", json_integer(enum_id));
	uint16_t trap = sa_get16(ii + II_TRAP);
	json_object_set_new(o, "trap", trap == 0xffff ? json_string("all") :
			    json_integer(trap));
	json_object_set_new(o, "generic", json_boolean(ii[II_IS_GENERIC]));
	uint16_t type = sa_get16(ii + II_TYPE);
	json_object_set_new(o, "type", type == 0xffff ? json_string("all") :
			    json_integer(type));
	uint32_t producer = sa_get32(ii + II_PRODUCER - 1) & 0xffffff;
	json_object_set_new(o, ii[II_IS_GENERIC] ? "producer_type" : "vendor_id",
			    producer == 0xffffff ? json_string("all") :
			    json_integer(producer));
	if (memcmp(ii, zero, 16)) {
		gid_text(ii, g, sizeof(g));
		json_object_set_new(o, "gid", json_string(g));
	} else if (sa_get16(ii + II_LID_BEGIN) == 0xffff) {
		json_object_set_new(o, "lids", json_string("all"));
	} else {
		json_object_set_new(o, "lids", json_pack("[i,i]", sa_get16(ii + II_LID_BEGIN),
							 sa_get16(ii + II_LID_END)));
	}
	json_object_set_new(o, "qpn", json_integer(sa_get32(ii + II_QPN_RESP) >> 8));
	json_object_set_new(o, "resp_time_value", json_integer(ii[II_QPN_RESP + 3] & 0x1f));
	json_array_append_new(arg, o);
}

static json_t *cmd_subscribers(struct sm *sm, const json_t *req, char *err,
			       size_t errlen)
{
	json_t *subs = json_array();
	if (sm->notify)
		notifier_foreach(sm->notify, add_subscription, subs);
	const struct notify_stats *st = sm->notify ?
		notifier_get_stats(sm->notify) : NULL;
	json_t *r = json_pack("{s:I,s:o}", "count", (json_int_t)json_array_size(subs),
			      "subscriptions", subs);
	if (st)
		json_object_set_new(r, "reports", json_pack("{s:I,s:I,s:I,s:I}",
			"sent", (json_int_t)st->reports_sent,
			"resent", (json_int_t)st->reports_resent,
			"answered", (json_int_t)st->report_resps,
			"subscriptions_dropped", (json_int_t)st->dropped_subscriptions));
	return r;
}

static void guid_text64(uint64_t g, char *buf, size_t len)
{
	snprintf(buf, len, "0x%016" PRIx64, g);
}

/*
 * groups: {"groups":[{"mgid","mlid","pkey":"0xffff","qkey":"0x00000b1b",
 * "mtu","rate","sl" (IBA encodings),"well_known","members":[{"guid",
 * "lid" (the LID the SM gives that port; 0: none),"join_state"}]}]}, in
 * creation order, members in join order.
 */
static json_t *group_json(const struct sm *sm, const struct mc_group *g)
{
	char mgid[40], pkey[8], qkey[12];
	json_t *members = json_array();
	for (uint32_t k = 0; k < g->n_members; k++) {
		const struct mc_member *m = &g->members[k];
		char guid[24];
		uint32_t lid = guid_map_get(&sm->sub.guid2lid, m->port_guid);
		guid_text64(m->port_guid, guid, sizeof(guid));
		json_array_append_new(members, json_pack("{s:s,s:i,s:i}",
			"guid", guid, "lid", lid == FAB_NONE ? 0 : (int)lid,
			"join_state", m->join_state));
	}
	mc_mgid_str(g->mgid, mgid, sizeof(mgid));
	snprintf(pkey, sizeof(pkey), "0x%04x", g->pkey);
	snprintf(qkey, sizeof(qkey), "0x%08x", g->qkey);
	return json_pack("{s:s,s:i,s:s,s:s,s:i,s:i,s:i,s:b,s:o}", "mgid", mgid,
			 "mlid", g->mlid, "pkey", pkey, "qkey", qkey, "mtu", g->mtu,
			 "rate", g->rate, "sl", g->sl, "well_known", g->well_known,
			 "members", members);
}

static json_t *cmd_groups(struct sm *sm, const json_t *req, char *err,
			  size_t errlen)
{
	json_t *a = json_array();
	for (uint32_t i = 0; i < sm->mc.n; i++)
		json_array_append_new(a, group_json(sm, sm->mc.g[i]));
	return json_pack("{s:o}", "groups", a);
}

static json_t *cmd_reroute(struct sm *sm, const json_t *req, char *err,
			   size_t errlen)
{
	if (sweeper_request_reroute(sm, err, errlen) < 0)
		return NULL;
	return json_pack("{s:s}", "requested", "reroute");
}

static json_t *cmd_reload(struct sm *sm, const json_t *req, char *err,
			  size_t errlen)
{
	if (sm_reload(sm, json_is_true(json_object_get(req, "force")), err, errlen) < 0)
		return NULL;
	sweeper_request_heavy(sm, "policy reloaded");
	return json_pack("{s:s}", "reloaded", sm->config_path[0] ?
			 sm->config_path : "(no policy file)");
}

/* ---- vm: the VM registry and its commands (sm/vm/vmops.c) ---- */

/* One VM: {"name","lid","vguid","hypervisor","vf","weight","present",...}. */
static json_t *vm_json(const struct sm *sm, const struct vm *v)
{
	const struct fabric *f = sm->sub.model ? &sm->sub.model->f : NULL;
	char vg[24], hg[24], fg[24];
	guid_text64(v->vguid, vg, sizeof(vg));
	guid_text64(v->hyp_guid, hg, sizeof(hg));
	guid_text64(v->vf_guid, fg, sizeof(fg));
	uint32_t hyp = f ? fabric_find_node(f, v->hyp_guid) : FAB_NONE;
	const char *hname = hyp != FAB_NONE && fabric_node_name(f, hyp)[0] ?
			    fabric_node_name(f, hyp) : hg;
	uint32_t at = !f ? FAB_NONE : v->shared ? vm_pf_port(v, f) : vm_port(v, f);
	int present = at != FAB_NONE;
	/* a shared-LID VM's LID is its PF's now, not the one last saved */
	uint32_t lid = v->shared && present ? f->ports[at].lid : v->lid;
	json_t *o = json_pack("{s:s,s:i,s:s,s:s,s:i,s:i,s:b,s:s,s:s}",
		"name", v->name, "lid", (int)lid, "vguid", vg,
		"hypervisor", hname, "vf", v->vf, "weight", (int)v->weight,
		"present", present, "hypervisor_guid", hg, "vf_guid", fg);
	if (o && v->shared)
		json_object_set_new(o, "shared_lid", json_true());
	if (o && v->prepared) {
		char tg[24];
		guid_text64(v->to_hyp_guid, tg, sizeof(tg));
		uint32_t to = f ? fabric_find_node(f, v->to_hyp_guid) : FAB_NONE;
		json_object_set_new(o, "prepared", json_pack("{s:s,s:i}",
			"hypervisor", to != FAB_NONE && fabric_node_name(f, to)[0] ?
			fabric_node_name(f, to) : tg, "vf", v->to_vf));
	}
	return o;
}

static json_t *vm_list(struct sm *sm)
{
	json_t *a = json_array();
	for (uint32_t i = 0; a && i < sm->vms.n; i++)
		json_array_append_new(a, vm_json(sm, &sm->vms.v[i]));
	return json_pack("{s:o*}", "vms", a);
}

/* What create/destroy/migrate answer: the VM and the writes' numbers. */
static json_t *vmop_json(struct sm *sm, const struct vmop_req *q,
			 const struct vmop_result *r)
{
	static const char *const verbs[] = { "created", "destroyed", "migrated" };
	const char *verb = r->prepared ? "prepared" : verbs[q->kind];
	json_t *o = json_pack("{s:s,s:o*,s:s,s:s}", "result", verb,
			      "vm", vm_json(sm, &r->vm),
			      "method", r->method ? r->method : "none",
			      "scheme", r->scheme ? r->scheme : "?");
	if (o && r->prepared) {
		json_object_set_new(o, "planned", json_boolean(r->planned_at_prepare));
		if (r->planned_at_prepare) {
			json_object_set_new(o, "switches_marked",
					    json_integer(r->st.switches_marked));
			json_object_set_new(o, "switches_written",
					    json_integer(r->st.switches_written));
			json_object_set_new(o, "plan_us", json_integer((json_int_t)r->st.plan_us));
			json_object_set_new(o, "lft_order", lft_order_to_ctl(&r->st.order));
		}
	}
	if (!o || r->prepared)
		return o;
	if (r->shared) {	/* no writes: Paper VI's signalling instead */
		json_object_set_new(o, "repath_notices", json_integer(r->notices));
		json_object_set_new(o, "hypervisors_registered",
				    json_integer(r->hypervisors));
		if (r->vguid_action)
			json_object_set_new(o, "vguid_action",
					    json_string(r->vguid_action));
		return o;
	}
	const struct vmexec_stats *st = &r->st;
	json_t *n = json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:I,s:I}",
		"switches_marked", (int)st->switches_marked,
		"switches_written", (int)st->switches_written,
		"lft_blocks", (int)st->lft_blocks,
		"vswitch_blocks", (int)st->vswitch_blocks,
		"xlft_blocks", (int)st->xlft_blocks,
		"other_smps", (int)st->other_smps,
		"plan_us", (json_int_t)st->plan_us,
		"commit_us", (json_int_t)st->commit_us);
	if (n && q->kind == VMOP_MIGRATE)
		json_object_set_new(n, "planned_at_prepare",
				    json_boolean(r->planned_at_prepare));
	if (n)
		json_object_set_new(n, "lft_order", lft_order_to_ctl(&st->order));
	if (json_object_update(o, n) < 0) {
		json_decref(o);
		o = NULL;
	}
	json_decref(n);
	return o;
}

struct vm_wait {
	uint64_t id;		/* the deferred reply */
	struct vmop_req q;
};

static void vm_done(struct sm *sm, void *arg, const struct vmop_result *r)
{
	struct vm_wait *w = arg;
	if (sm->ctl)
		control_reply(sm->ctl, w->id, r->ok ? vmop_json(sm, &w->q, r) : NULL,
			      r->err);
	free(w);
}

/* An integer field within lo..hi (ibsmctl's option opt), or absent (-1). */
static int vm_num(const json_t *req, const char *field, const char *opt,
		  long lo, long hi, int *v, char *err, size_t errlen)
{
	const json_t *x = json_object_get(req, field);
	if (!x)
		return 0;
	json_int_t n = json_integer_value(x);
	if (n < lo || n > hi) {
		snprintf(err, errlen, "vm: %s wants a number %ld..%ld", opt, lo, hi);
		return -1;
	}
	*v = (int)n;
	return 0;
}

static const char *const vm_ops[] = { "create", "destroy", "migrate" };
/* The fields each operation takes, beside "cmd", "op" and "name". */
static const char *const vm_op_fields[][6] = {
	[VMOP_CREATE] = { "hypervisor", "vf", "guid", "weight", "shared_lid", NULL },
	[VMOP_DESTROY] = { NULL },
	[VMOP_MIGRATE] = { "to", "vf", "prepare", "commit", NULL },
};

/* The fields of create / migrate into q; -1 with err. */
static int vm_fields(const json_t *req, struct vmop_req *q, char *err,
		     size_t errlen)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)req, key, v) {
		int known = !strcmp(key, "cmd") || !strcmp(key, "op") ||
			    !strcmp(key, "name");
		for (int k = 0; !known && vm_op_fields[q->kind][k]; k++)
			known = !strcmp(key, vm_op_fields[q->kind][k]);
		if (!known) {
			snprintf(err, errlen, "vm %s: unknown field '%s'",
				 vm_ops[q->kind], key);
			return -1;
		}
	}
	const char *hyp = json_string_value(json_object_get(req,
				q->kind == VMOP_MIGRATE ? "to" : "hypervisor"));
	if (hyp)
		snprintf(q->hyp, sizeof(q->hyp), "%s", hyp);
	if (vm_num(req, "vf", "--vf", 0, 254, &q->vf, err, errlen) < 0 ||
	    vm_num(req, "weight", "--weight", 1, VM_WEIGHT_MAX, &q->weight,
		   err, errlen) < 0)
		return -1;
	const char *g = json_string_value(json_object_get(req, "guid"));
	if (g) {
		char *end;
		if (strncmp(g, "0x", 2) || !(q->vguid = strtoull(g + 2, &end, 16)) ||
		    *end) {
			snprintf(err, errlen, "vm create: --guid wants a non-zero 0x GUID");
			return -1;
		}
	}
	q->shared = json_is_true(json_object_get(req, "shared_lid"));
	q->prepare = json_is_true(json_object_get(req, "prepare"));
	q->commit = json_is_true(json_object_get(req, "commit"));
	if (q->prepare && q->commit) {
		snprintf(err, errlen, "vm migrate: --prepare or --commit, not both");
		return -1;
	}
	return 0;
}

static json_t *cmd_vm(struct sm *sm, const json_t *req, char *err, size_t errlen)
{
	static const char usage[] = "vm list | create NAME --hypervisor H [--vf N] [--guid G] [--weight W] | destroy NAME | migrate NAME --to H [--vf N] [--prepare | --commit]";
	const char *sub = json_string_value(json_object_get(req, "op"));
	if (!sub) {
		snprintf(err, errlen, "usage: %s", usage);
		return NULL;
	}
	if (!strcmp(sub, "list")) {
		if (json_object_size(req) > 2) {
			snprintf(err, errlen, "vm list takes no arguments");
			return NULL;
		}
		return vm_list(sm);
	}
	struct vmop_req q;
	memset(&q, 0, sizeof(q));
	q.vf = -1;
	if (!strcmp(sub, "create"))
		q.kind = VMOP_CREATE;
	else if (!strcmp(sub, "destroy"))
		q.kind = VMOP_DESTROY;
	else if (!strcmp(sub, "migrate"))
		q.kind = VMOP_MIGRATE;
	else {
		snprintf(err, errlen, "unknown vm command '%s' (usage: %s)", sub, usage);
		return NULL;
	}
	const char *name = json_string_value(json_object_get(req, "name"));
	if (!name || !vm_name_ok(name)) {
		snprintf(err, errlen, "vm %s: a VM name (1..%d letters, digits, '.', '_', '-') first",
			 sub, VM_NAME_LEN - 1);
		return NULL;
	}
	snprintf(q.name, sizeof(q.name), "%s", name);
	if (vm_fields(req, &q, err, errlen) < 0)
		return NULL;
	struct vm_wait *w = calloc(1, sizeof(*w));
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	w->q = q;
	struct vmop_result r;
	int rc = vmop_start(sm, &q, vm_done, w, &r);
	if (rc == 0) {
		/* the writes run: the answer when they are done */
		w->id = sm->ctl ? control_defer(sm->ctl) : 0;
		return NULL;
	}
	free(w);
	if (rc < 0 || !r.ok) {
		snprintf(err, errlen, "%s", r.err);
		return NULL;
	}
	return vmop_json(sm, &q, &r);
}

/* ibsmctl forget LINK: a failed link no longer listed (sm/discover/linkwatch.h). */
static json_t *cmd_forget(struct sm *sm, const json_t *req, char *err, size_t errlen)
{
	const char *link = json_string_value(json_object_get(req, "link"));
	if (!link) {
		snprintf(err, errlen, "usage: forget LINK (NAME[PORT] or NAME[PORT]--NAME[PORT], as topology names it)");
		return NULL;
	}
	int n = linkwatch_forget(&sm->sub.links, link, err, errlen);
	if (n < 0)
		return NULL;
	log_notice("failed link %s forgotten (ibsmctl forget)", link);
	return json_pack("{s:i,s:i}", "forgotten", n, "failed_links",
			 (int)sm->sub.links.n_lost);
}

/* A request field's JSON type (sm/base/ctlproto.h). */
/* CT_PATH_OR_TRUE: a string, or true (health's save_baseline: FILE or the default) */
enum ctl_type { CT_STRING, CT_INT, CT_BOOL, CT_PATH_OR_TRUE };

struct ctl_field {
	const char *name;
	enum ctl_type type;
};

static const struct ctl_field no_fields[] = { { NULL, 0 } };
static const struct ctl_field sweep_fields[] = { { "heavy", CT_BOOL }, { NULL, 0 } };
static const struct ctl_field topology_fields[] = {
	{ "dot", CT_BOOL }, { "svg", CT_BOOL }, { NULL, 0 } };
static const struct ctl_field routes_fields[] = { { "switch", CT_STRING }, { NULL, 0 } };
static const struct ctl_field reload_fields[] = { { "force", CT_BOOL }, { NULL, 0 } };
static const struct ctl_field forget_fields[] = { { "link", CT_STRING }, { NULL, 0 } };
static const struct ctl_field perfmgr_fields[] = { { "op", CT_STRING }, { NULL, 0 } };
static const struct ctl_field health_fields[] = {
	{ "save_baseline", CT_PATH_OR_TRUE }, { NULL, 0 } };
/* every operation's: jobs_ctl() reads what its operation takes */
static const struct ctl_field job_fields[] = {
	{ "op", CT_STRING }, { "id", CT_STRING }, { "nodes", CT_STRING },
	{ "pattern", CT_STRING }, { "text", CT_STRING }, { "wait", CT_BOOL },
	{ "timeout", CT_INT }, { NULL, 0 },
};
/* every operation's: cmd_vm() refuses what its operation does not take */
static const struct ctl_field vm_fields_all[] = {
	{ "op", CT_STRING }, { "name", CT_STRING }, { "hypervisor", CT_STRING },
	{ "to", CT_STRING }, { "vf", CT_INT }, { "guid", CT_STRING },
	{ "weight", CT_INT }, { "shared_lid", CT_BOOL }, { "prepare", CT_BOOL },
	{ "commit", CT_BOOL }, { NULL, 0 },
};

/*
 * Every command ibsmctl(8) documents, the only list of them on the
 * daemon's side, with the fields its requests may carry.  No handler:
 * documented, not implemented yet, and refused as such (never accepted
 * and ignored).
 */
static const struct ctl_command {
	const char *name;
	json_t *(*run)(struct sm *, const json_t *, char *, size_t);
	const struct ctl_field *fields;
} commands[] = {
	{ "status", cmd_status, no_fields },
	{ "topology", ctl_topology, topology_fields },
	{ "lids", ctl_lids, no_fields },
	{ "routes", ctl_routes, routes_fields },
	{ "groups", cmd_groups, no_fields },
	{ "metrics", cmd_metrics, no_fields },
	{ "verify", ctl_verify, no_fields },
	{ "sweep", cmd_sweep, sweep_fields },
	{ "reroute", cmd_reroute, no_fields },
	{ "reload", cmd_reload, reload_fields },
	{ "subscribers", cmd_subscribers, no_fields },
	{ "vm", cmd_vm, vm_fields_all },
	{ "partitions", ctl_partitions, no_fields },
	{ "forget", cmd_forget, forget_fields },
	{ "perfmgr", perfmgr_ctl, perfmgr_fields },
	{ "health", perfmgr_health_ctl, health_fields },
	{ "hotspots", dftree_ctl, no_fields },
	{ "job", jobs_ctl, job_fields },
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/* The commands the daemon carries out, for the unknown-command message. */
static void implemented_names(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < N_COMMANDS && used < len; i++) {
		if (commands[i].run == NULL)
			continue;
		int n = snprintf(buf + used, len - used, "%s%s",
				 used ? ", " : "", commands[i].name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

/* Every field of req but "cmd" is one c takes, of its type; -1 with err. */
static int check_fields(const struct ctl_command *c, const json_t *req,
			char *err, size_t errlen)
{
	static const char *const wants[] = {
		[CT_STRING] = "a string", [CT_INT] = "an integer",
		[CT_BOOL] = "true or false",
		[CT_PATH_OR_TRUE] = "an absolute path or true",
	};
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)req, key, v) {
		if (!strcmp(key, "cmd"))
			continue;
		const struct ctl_field *f = c->fields;
		while (f->name && strcmp(f->name, key))
			f++;
		if (!f->name) {
			if (c->fields == no_fields)
				snprintf(err, errlen, "%s takes no arguments", c->name);
			else
				snprintf(err, errlen, "%s: unknown field '%s'", c->name, key);
			return -1;
		}
		int ok = f->type == CT_STRING ? json_is_string(v) :
			 f->type == CT_INT ? json_is_integer(v) :
			 f->type == CT_PATH_OR_TRUE ? json_is_true(v) ||
			 (json_is_string(v) && json_string_value(v)[0] == '/') :
			 json_is_boolean(v);
		if (!ok) {
			snprintf(err, errlen, "%s: field '%s' wants %s", c->name, key,
				 wants[f->type]);
			return -1;
		}
	}
	return 0;
}

json_t *sm_control(void *ctx, const char *cmd, json_t *req, char *err,
		   size_t errlen)
{
	char names[256];

	for (size_t i = 0; i < N_COMMANDS; i++) {
		if (strcmp(cmd, commands[i].name) != 0)
			continue;
		if (commands[i].run == NULL) {
			snprintf(err, errlen, "command '%s' is not implemented yet",
				 cmd);
			return NULL;
		}
		if (check_fields(&commands[i], req, err, errlen) < 0)
			return NULL;
		return commands[i].run(ctx, req, err, errlen);
	}
	implemented_names(names, sizeof(names));
	snprintf(err, errlen, "unknown command '%s' (%s)", cmd, names);
	return NULL;
}
