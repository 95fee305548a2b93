/*
 * The metrics renderer: the daemon's counters (struct sm, the MAD
 * transaction table, the SA, traps in, notices out) as Prometheus text
 * exposition format 0.0.4.  It reads and never changes the daemon, so
 * any of the three outputs (metrics.h) may call it at any time.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traps/notify.h"
#include "sm/daemon.h"
#include "sm/dftree.h"
#include "sm/jobs.h"
#include "sm/perfmgr.h"
#include "sm/ctl/control.h"
#include "sm/ctl/metrics.h"
#include "sm/base/nodemap.h"
#include "sm/rogue.h"
#include "sm/sa/sa_server.h"
#include "sm/sa/sa_budget.h"
#include "sm/smstate.h"
#include "sm/write/scrub.h"

/* A family of one sample without labels. */
static void one(struct mtext *t, const char *name, const char *type,
		const char *help, double v)
{
	mtext_family(t, name, type, help);
	mtext_sample(t, name, NULL, NULL, v);
}

/* The light sweeps' read-back (sm/write/scrub.h). */
static void scrub_metrics(struct mtext *t, const struct sm *sm)
{
	static const struct scrub_stats none;
	const struct scrub_stats *st = sm->sweep.scrub ? scrub_get_stats(sm->sweep.scrub) : &none;
	one(t, "ibsmd_scrub_blocks_held", "gauge",
	    "LFT, P_Key, SL2VL and MFT blocks the SM wrote, which light sweeps read back",
	    st->held);
	one(t, "ibsmd_scrub_blocks_read_total", "counter",
	    "Blocks read back by light sweeps and compared with what the SM wrote",
	    (double)st->reads);
	one(t, "ibsmd_scrub_tampered_blocks_total", "counter",
	    "Blocks read back that differed from what the SM wrote (tampering)",
	    (double)st->tampered);
	one(t, "ibsmd_scrub_repaired_blocks_total", "counter",
	    "Blocks found differing and written again", (double)st->repaired);
}

static void daemon_metrics(struct mtext *t, const struct sm *sm,
			   uint64_t start_time)
{
	static const int states[] = { SMS_NOTACTIVE, SMS_DISCOVERING,
				      SMS_STANDBY, SMS_MASTER };

	one(t, "ibsmd_up", "gauge", "1: the daemon answers", 1);
	mtext_family(t, "ibsmd_build_info", "gauge", "The daemon's version, in the label");
	mtext_sample(t, "ibsmd_build_info", "version", IBSMD_VERSION, 1);
	one(t, "ibsmd_start_time_seconds", "gauge",
	    "When the daemon started, seconds since the epoch", (double)start_time);
	mtext_family(t, "ibsmd_state", "gauge", "The SM state: 1 for the state it is in");
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		mtext_sample(t, "ibsmd_state", "state", sm_state_name(states[i]),
			     sm->state == states[i]);
	one(t, "ibsmd_sm_priority", "gauge", "The SM priority (sm.priority)",
	    sm->cfg.sm_priority);
	mtext_family(t, "ibsmd_sweeps_total", "counter", "Sweeps done, by kind");
	mtext_sample(t, "ibsmd_sweeps_total", "kind", "heavy", sm->sweep.heavy_sweeps);
	mtext_sample(t, "ibsmd_sweeps_total", "kind", "light", sm->sweep.light_sweeps);
	one(t, "ibsmd_last_sweep_timestamp_seconds", "gauge",
	    "When the last sweep ended, seconds since the epoch (0: none yet)",
	    (double)sm->sweep.last_sweep_time);
	one(t, "ibsmd_handovers_received_total", "counter",
	    "SMInfo HANDOVERs received from other SMs", (double)election_status(sm)->smc.handovers_received);
	one(t, "ibsmd_sm_key_mismatches_total", "counter",
	    "SMInfo answers carrying another SM_Key", (double)election_status(sm)->smc.key_mismatches);
	const struct rogues *rg = election_rogues(sm);
	one(t, "ibsmd_rogue_sms", "gauge",
	    "SMs seen answering SMInfo with another SM_Key (never obeyed)",
	    rg ? rogues_count(rg) : 0);
	one(t, "ibsmd_rogue_isolations_total", "counter",
	    "Switch ports disabled to cut a rogue SM off (sm.rogue: isolate)",
	    rg ? (double)rogues_isolations(rg) : 0);
	scrub_metrics(t, sm);
	perfmgr_metrics(sm, t);
	dftree_metrics(sm, t);
	jobs_metrics(sm, t);
}

/* The failed and degraded links (sm/discover/linkwatch.h). */
static void link_metrics(struct mtext *t, const struct link_watch *w)
{
	one(t, "ibsmd_failed_links", "gauge",
	    "Links lost since they were last seen up, until they return or are forgotten",
	    (double)w->n_lost + (double)w->dropped);
	one(t, "ibsmd_degraded_links", "gauge",
	    "Links up below the width or speed both ends are enabled for and support",
	    w->n_degraded);
	one(t, "ibsmd_failed_links_forgotten_total", "counter",
	    "Failed links removed by ibsmctl forget", (double)w->forgotten);
}

static void subnet_metrics(struct mtext *t, const struct sm *sm)
{
	link_metrics(t, &sm->sub.links);
	static const char *const names[] = { "nop", "down", "init", "armed", "active" };
	const struct sweep_summary *s = &sm->sweep.last;
	double ports[5] = { 0 };
	double nodes[4] = { 0 };

	if (sm->sub.model) {
		const struct fabric *f = &sm->sub.model->f;
		for (uint32_t i = 0; i < f->n_nodes; i++)
			if (f->nodes[i].type <= FAB_ROUTER)
				nodes[f->nodes[i].type]++;
		for (uint32_t pi = 0; pi < f->n_ports; pi++) {
			const struct fab_port *p = &f->ports[pi];
			if ((p->flags & FPORT_PRESENT) && p->num != 0 &&
			    p->state <= PORT_ACTIVE)
				ports[p->state]++;
		}
	}
	mtext_family(t, "ibsmd_ports", "gauge",
		     "Physical ports by PortState, as of the last heavy sweep");
	for (int i = PORT_DOWN; i <= PORT_ACTIVE; i++)
		mtext_sample(t, "ibsmd_ports", "state", names[i], ports[i]);
	mtext_family(t, "ibsmd_nodes", "gauge", "Nodes in the subnet by type, as of the last heavy sweep");
	mtext_sample(t, "ibsmd_nodes", "type", "switch", nodes[FAB_SWITCH]);
	mtext_sample(t, "ibsmd_nodes", "type", "ca", nodes[FAB_CA]);
	mtext_sample(t, "ibsmd_nodes", "type", "router", nodes[FAB_ROUTER]);
	one(t, "ibsmd_lids_in_use", "gauge", "Unicast LIDs given to end ports",
	    s->valid ? s->lids : 0);
	one(t, "ibsmd_max_lid", "gauge", "The highest unicast LID given",
	    s->valid ? s->max_lid : 0);
	one(t, "ibsmd_unresponsive_ports", "gauge",
	    "Ports and nodes left out of the last heavy sweep: never answered",
	    s->valid ? s->unresponsive : 0);
	one(t, "ibsmd_last_heavy_sweep_duration_seconds", "gauge",
	    "How long the last heavy sweep took, discovery to the last write",
	    s->valid ? (double)s->sweep_ms / 1000.0 : 0);
	one(t, "ibsmd_routing_duration_seconds", "gauge",
	    "How long the routing engine took in the last heavy sweep",
	    s->valid ? (double)s->route_ms / 1000.0 : 0);
	one(t, "ibsmd_lft_blocks_written", "gauge",
	    "LFT blocks the last heavy sweep wrote", s->valid ? s->prog.lft_blocks : 0);
}

/* One family over the attributes: the counter at offset off of txn_counters. */
static void mad_family(struct mtext *t, const struct txn_stats *st,
		       const char *name, const char *help, size_t off)
{
	mtext_family(t, name, "counter", help);
	for (int i = 0; i <= TXN_MAX_ATTRS; i++) {
		if (i == st->n_attrs && i < TXN_MAX_ATTRS)
			i = TXN_MAX_ATTRS;	/* the "other" slot */
		const struct txn_attr_stats *a = &st->attrs[i];
		if (!a->c.sent && !a->c.recv)
			continue;
		uint64_t v;
		memcpy(&v, (const char *)&a->c + off, sizeof(v));
		mtext_sample(t, name, "attribute",
			     i == TXN_MAX_ATTRS ? "other" : txn_attr_name(a->attr),
			     (double)v);
	}
}

static void mad_metrics(struct mtext *t, const struct sm *sm)
{
	static const struct txn_stats none;
	const struct txn_stats *st = sm->txn ? txn_get_stats(sm->txn) : &none;

	mad_family(t, st, "ibsmd_mads_sent_total", "MAD requests sent, by attribute (retries included)",
		   offsetof(struct txn_counters, sent));
	mad_family(t, st, "ibsmd_mads_answered_total", "Answers taken, by attribute",
		   offsetof(struct txn_counters, recv));
	mad_family(t, st, "ibsmd_mad_timeouts_total", "MAD requests left unanswered after every retry, by attribute",
		   offsetof(struct txn_counters, timeouts));
	mad_family(t, st, "ibsmd_mad_retries_total", "MAD requests sent again after a timeout, by attribute",
		   offsetof(struct txn_counters, retries));
	mad_family(t, st, "ibsmd_mad_errors_total", "MAD requests answered only with an error status, by attribute",
		   offsetof(struct txn_counters, errors));
	one(t, "ibsmd_mad_sets_total", "counter", "MAD requests sent with method Set", (double)st->sets);
	one(t, "ibsmd_mads_unsolicited_total", "counter",
	    "MADs received that answered no request", (double)st->unsolicited);
	one(t, "ibsmd_mads_in_flight", "gauge", "MAD requests awaiting an answer",
	    sm->txn ? txn_inflight(sm->txn) : 0);
	one(t, "ibsmd_mad_window", "gauge", "The window of MADs in flight in force", st->window);
}

/*
 * Traps 129-131 by node and port: a metric of its own, bounded by
 * TRAPIN_PORT_ERR_PORTS (traps/trapin.h), so that
 * ibsmd_traps_by_number_total keeps its bounded label set (trap numbers).
 */
/* One family of traps by node GUID and port (trapin_port_err tables). */
static void by_port_metrics(struct mtext *t, const struct sm *sm, const char *family,
			    const char *help, const struct trapin_port_err *tab, uint32_t n)
{
	const struct fabric *f = sm->sub.model ? &sm->sub.model->f : NULL;
	mtext_family(t, family, "counter", help);
	for (uint32_t i = 0; i < n; i++) {
		const struct trapin_port_err *e = &tab[i];
		uint32_t node = f ? fabric_find_node(f, e->guid) : FAB_NONE;
		char *name = mtext_escaped(node != FAB_NONE ? fabric_node_name(f, node) : "", 1);
		if (!name) {
			t->oom = 1;
			return;
		}
		mtext_printf(t, "%s{guid=\"0x%016" PRIx64 "\",node=\"%s\",port=\"%u\"} %"
			     PRIu64 "\n", family, e->guid, name, e->port, e->count);
		free(name);
	}
}

static void port_err_metrics(struct mtext *t, const struct sm *sm,
			     const struct trapin_stats *ts)
{
	by_port_metrics(t, sm, "ibsmd_port_error_traps_total",
			"Traps 129-131 (port errors), by the node and port in error (the first "
			"ports to report; the rest in ibsmd_port_error_traps_other_total)",
			ts->port_err, ts->n_port_err);
	one(t, "ibsmd_port_error_traps_other_total", "counter",
	    "Traps 129-131 from ports past the table, or from no known port",
	    (double)ts->port_err_other);
}

/* Traps 256 by the port that raised them, bounded by TRAPIN_MKEY_PORTS. */
static void mkey_viol_metrics(struct mtext *t, const struct sm *sm,
			      const struct trapin_stats *ts)
{
	by_port_metrics(t, sm, "ibsmd_mkey_violations_total",
			"Traps 256 (Bad M_Key), by the node and port that raised them (the "
			"first ports to report; the rest in ibsmd_mkey_violations_other_total)",
			ts->mkey_viol, ts->n_mkey_viol);
	one(t, "ibsmd_mkey_violations_other_total", "counter",
	    "Traps 256 from ports past the table", (double)ts->mkey_viol_other);
}

static void service_metrics(struct mtext *t, const struct sm *sm)
{
	const struct trapin_stats *ts = &sm->traps.st;
	const struct sa_stats *sa = sa_get_stats(sm);
	const struct notify_stats *ns = sm->notify ? notifier_get_stats(sm->notify) : NULL;
	char num[16];

	one(t, "ibsmd_traps_received_total", "counter", "Traps received", (double)ts->received);
	mtext_family(t, "ibsmd_traps_by_number_total", "counter", "Traps received, by trap number");
	for (uint32_t i = 0; i < ts->n_numbers && i < TRAPIN_NUMBERS; i++) {
		snprintf(num, sizeof(num), "%u", ts->number[i]);
		mtext_sample(t, "ibsmd_traps_by_number_total", "number", num,
			     (double)ts->by_number[i]);
	}
	if (ts->other_numbers)
		mtext_sample(t, "ibsmd_traps_by_number_total", "number", "other",
			     (double)ts->other_numbers);
	one(t, "ibsmd_traps_spoofed_total", "counter",
	    "Traps refused: the issuer is not where it claims", (double)ts->spoofed);
	port_err_metrics(t, sm, ts);
	mtext_family(t, "ibsmd_pkey_violations_total", "counter",
		     "Traps 257 (Bad P_Key), by the port that reported them");
	for (uint32_t i = 0; i < sm->pkey_viol.n; i++) {
		const struct pkey_violation *v = &sm->pkey_viol.v[i];
		mtext_printf(t, "ibsmd_pkey_violations_total{port_guid=\"0x%016" PRIx64
			     "\",port=\"%u\"} %" PRIu64 "\n", v->guid, v->port, v->count);
	}
	struct mkey_census mc;
	subnet_mkey_census(&sm->sub, &mc);
	mtext_family(t, "ibsmd_mkey_ports", "gauge",
		     "Ports the SM keys (security.m_key): holding their M_Key, level and lease, or not yet; refusing the SM (another SM's key)");
	mtext_sample(t, "ibsmd_mkey_ports", "state", "keyed", mc.keyed);
	mtext_sample(t, "ibsmd_mkey_ports", "state", "unkeyed", mc.unkeyed);
	mtext_sample(t, "ibsmd_mkey_ports", "state", "foreign",
		     mkrec_refusing(&sm->sub.rec, NULL, NULL));
	one(t, "ibsmd_mkey_taken_over_total", "counter",
	    "Ports that held another SM's M_Key and were taken over (their lease over)",
	    (double)sm->sub.rec.taken_over);
	mkey_viol_metrics(t, sm, ts);
	one(t, "ibsmd_notices_sent_total", "counter",
	    "Notices (SA Reports) sent to subscribers, first sends", ns ? (double)ns->reports_sent : 0);
	one(t, "ibsmd_notices_resent_total", "counter",
	    "Notices sent again: unanswered", ns ? (double)ns->reports_resent : 0);
	one(t, "ibsmd_sa_requests_total", "counter", "SA requests received", sa ? (double)sa->requests : 0);
	one(t, "ibsmd_sa_errors_total", "counter", "SA requests answered with an error status",
	    sa ? (double)sa->errors : 0);
	one(t, "ibsmd_sa_records_total", "counter", "SA records sent in answers",
	    sa ? (double)sa->records : 0);
	one(t, "ibsmd_sa_outside_partitions_total", "counter",
	    "SA requests that named a port or group outside the requester's partitions, "
	    "answered as if it did not exist", sa ? (double)sa->outside : 0);
	one(t, "ibsmd_sa_untrusted_total", "counter",
	    "SA requests only a trusted requester may make, without sa.sa_key (ERR_REQ_INVALID)",
	    sa ? (double)sa->untrusted : 0);
	one(t, "ibsmd_sa_bad_key_total", "counter",
	    "SA requests with an SM_Key neither 0 nor sa.sa_key, ignored",
	    sa ? (double)sa->dropped_key : 0);
	const struct sa_budget_stats *b = sa_get_budget_stats(sm);
	one(t, "ibsmd_sa_answers_in_flight", "gauge",
	    "SA answers sent with RMPP whose transfer has not ended", b ? b->answers : 0);
	one(t, "ibsmd_sa_answer_bytes_in_flight", "gauge",
	    "Bytes of the SA answers in flight", b ? (double)b->bytes : 0);
	one(t, "ibsmd_sa_refused_total", "counter",
	    "SA GetTables refused for the answers in flight (Busy, or ERR_NO_RESOURCES when too long)",
	    sa ? (double)sa->refused_budget : 0);
}

/* Multicast (sm/model/mcgroups.h): the groups and members now, changes since start. */
static void mcast_metrics(struct mtext *t, const struct sm *sm)
{
	const struct mc_db *db = &sm->mc;
	double members = 0;

	for (uint32_t i = 0; i < db->n; i++)
		members += db->g[i]->n_members;
	one(t, "ibsmd_mcast_groups", "gauge", "Multicast groups (MLIDs in use)", db->n);
	one(t, "ibsmd_mcast_members", "gauge",
	    "Multicast group memberships: ports summed over the groups", members);
	one(t, "ibsmd_mcast_joins_total", "counter",
	    "MCMemberRecord joins that changed a membership", (double)db->joins);
	one(t, "ibsmd_mcast_leaves_total", "counter",
	    "MCMemberRecord leaves that changed a membership", (double)db->leaves);
	mtext_family(t, "ibsmd_mcast_group_changes_total", "counter",
		     "Multicast groups created and deleted (notices 66, 67)");
	mtext_sample(t, "ibsmd_mcast_group_changes_total", "change", "created",
		     (double)db->created);
	mtext_sample(t, "ibsmd_mcast_group_changes_total", "change", "deleted",
		     (double)db->deleted);
	uint16_t lowest;
	one(t, "ibsmd_mcast_mlid_limit", "gauge",
	    "MLIDs a new group may take: the switches' smallest MulticastFDBCap", db->mlid_limit);
	one(t, "ibsmd_mcast_groups_without_tree", "gauge",
	    "Multicast groups whose MLID is past that limit: no tree", mc_past_limit(db, &lowest));
	mtext_family(t, "ibsmd_mcast_creates_refused_total", "counter",
		     "Multicast group creates refused (NO_RESOURCES), by bound");
	mtext_sample(t, "ibsmd_mcast_creates_refused_total", "bound", "mlids",
		     (double)db->refused_mlids);
	mtext_sample(t, "ibsmd_mcast_creates_refused_total", "bound", "per_port",
		     (double)db->refused_port);
}

/* VMs (sm/model/vm.h): the registry now, and what its bounds refused. */
static void vm_metrics(struct mtext *t, const struct sm *sm)
{
	one(t, "ibsmd_vms", "gauge", "VMs in the registry", sm->vms.n);
	mtext_family(t, "ibsmd_vm_creates_refused_total", "counter",
		     "VM creates and moves refused by the policy's bounds, by bound");
	mtext_sample(t, "ibsmd_vm_creates_refused_total", "bound", "max_vms",
		     (double)sm->vms.refused_total);
	mtext_sample(t, "ibsmd_vm_creates_refused_total", "bound", "per_hypervisor",
		     (double)sm->vms.refused_hyp);
	const struct rebalance_state *rb = &sm->vms.rb;
	one(t, "ibsmd_vm_migrations_since_reroute", "gauge",
	    "VM moves to another leaf since the last full reroute", rb->migrations);
	mtext_family(t, "ibsmd_vm_rebalances_total", "counter",
		     "Reroutes virtualization.rebalance asked for (full, or local in a sub-tree), by reason");
	for (int why = REBAL_NONE + 1; why < REBAL_REASONS; why++)
		mtext_sample(t, "ibsmd_vm_rebalances_total", "reason",
			     rebalance_reason_name(why), (double)rb->fired[why]);
	one(t, "ibsmd_vm_local_rebalances_total", "counter",
	    "Of those, the ones virtualization.rebalance.local made in a sub-tree of the fabric",
	    rb->local);
	if (rb->last_permille >= 0)
		one(t, "ibsmd_vm_balance_ratio", "gauge",
		    "The last balance measured: a fresh vswitch-ftree's heaviest link over the installed routes'",
		    rb->last_permille / 1000.0);
}

char *metrics_render(const struct sm *sm, uint64_t start_time, size_t *len)
{
	struct mtext t = { 0 };

	daemon_metrics(&t, sm, start_time);
	subnet_metrics(&t, sm);
	mad_metrics(&t, sm);
	service_metrics(&t, sm);
	mcast_metrics(&t, sm);
	metrics_http_render(sm->metrics, &t);
	one(&t, "ibsmd_control_clients", "gauge", "Clients connected to the control socket",
	    sm->ctl ? (double)control_client_count(sm->ctl) : 0);
	one(&t, "ibsmd_control_accept_errors_total", "counter",
	    "Control socket accept() failures (out of descriptors or memory), each"
	    " pausing it for a second", sm->ctl ? (double)control_accept_errors(sm->ctl) : 0);
	vm_metrics(&t, sm);
	if (t.oom || !t.buf) {
		free(t.buf);
		return NULL;
	}
	if (len)
		*len = t.len;
	return t.buf;
}
