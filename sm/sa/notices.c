/*
 * Notices out, the daemon's side: see events.h and ibsmd(8), "Event
 * notices".
 */
#include "sm/sa/notices.h"

#include <errno.h>
#include <infiniband/mad.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sa.h"
#include "mad/smp.h"
#include "mad/txn.h"
#include "traps/notify.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/base/nodemap.h"
#include "sm/base/wfile.h"

#define SUBSCRIPTIONS_FILE "subscriptions"

/*
 * Ports a sweep added, announced (64) once the configuration is active;
 * ports announced out of service (65) on a trap, before a sweep saw them go.
 */
struct sm_notices {
	uint64_t *gid_in;	/* port GUIDs */
	uint32_t n_in, cap_in;
	uint64_t *gid_out;	/* port GUIDs */
	uint32_t n_out, cap_out;
};

/* One PortInfo Get of a switch port behind which a CA port was in service. */
struct early_probe {
	struct sm *sm;
	uint64_t ca_node_guid;
	uint8_t ca_port;
};

int notices_init(struct sm *sm, char *err, size_t errlen)
{
	struct notify_params p = {
		.max_failures = (unsigned)sm->cfg.events_max_report_failures,
		.min_resp_ms = (unsigned)sm->cfg.mad_timeout_ms,
	};
	char why[1024];
	snprintf(p.state_path, sizeof(p.state_path), "%s/%s", sm->cfg.state_dir,
		 SUBSCRIPTIONS_FILE);
	sm->notices = calloc(1, sizeof(*sm->notices));
	if (!sm->notices) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	sm->notify = notifier_new(sm->base, &sm->tr, &p, why, sizeof(why));
	if (!sm->notify) {
		/* kept for whoever wants to look; the hosts subscribe again */
		char bad[600];
		if (wfile_set_aside(p.state_path, bad, sizeof(bad)) < 0) {
			snprintf(err, errlen, "%s; and cannot move it aside: %s",
				 why, strerror(errno));
			return -1;
		}
		log_err("event subscriptions not loaded: %s (kept as %s; starting with none)",
			why, bad);
		sm->notify = notifier_new(sm->base, &sm->tr, &p, err, errlen);
		if (!sm->notify)
			return -1;
	} else if (notifier_count(sm->notify))
		log_notice("%zu event subscriptions loaded from %s",
			   notifier_count(sm->notify), p.state_path);
	return 0;
}

void notices_free(struct sm *sm)
{
	notifier_free(sm->notify);
	sm->notify = NULL;
	if (sm->notices) {
		free(sm->notices->gid_in);
		free(sm->notices->gid_out);
	}
	free(sm->notices);
	sm->notices = NULL;
}

static void make_gid(uint8_t gid[16], uint64_t prefix, uint64_t guid)
{
	sa_put64(gid, prefix);
	sa_put64(gid + 8, guid);
}

static void publish_gid(struct sm *sm, uint16_t trap, const struct fabric *f,
			uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	struct notice nt;
	uint8_t sm_gid[16], gid[16];
	make_gid(sm_gid, sm->cfg.subnet_prefix, sm->tr.port_guid);
	make_gid(gid, sm->cfg.subnet_prefix, p->guid);
	notice_init_sm(&nt, trap, (uint16_t)sm->sub.sm_lid, sm_gid);
	notice_set_gid(&nt, gid);
	int q = notifier_publish(sm->notify, &nt, p->lid);
	log_info("notice %u: GID 0x%016llx:%016llx (LID %u, \"%s\" port %u) %s service: %d Reports queued",
		 trap, (unsigned long long)sm->cfg.subnet_prefix,
		 (unsigned long long)p->guid, p->lid, fabric_node_name(f, p->node),
		 p->num, trap == TRAP_GID_IN_SERVICE ? "in" : "out of", q);
}

static int guid_push(uint64_t **v, uint32_t *n, uint32_t *cap, uint64_t guid)
{
	if (*n == *cap) {
		uint32_t c = *cap ? 2 * *cap : 16;
		uint64_t *w = realloc(*v, c * sizeof(*w));
		if (!w)
			return -1;
		*v = w;
		*cap = c;
	}
	(*v)[(*n)++] = guid;
	return 0;
}

static int guid_in(const uint64_t *v, uint32_t n, uint64_t guid)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i] == guid)
			return 1;
	return 0;
}

/* A CA (or router) port with a LID: it has a GID in service. */
static int in_service(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	return f->nodes[p->node].type != FAB_SWITCH && p->num &&
	       (p->flags & FPORT_PRESENT) && p->lid && p->guid;
}

/* Port GUID -> port index of the ports in service of f. */
static int index_ports(const struct fabric *f, struct guid_map *m)
{
	if (guid_map_init(m, 64) < 0)
		return -1;
	for (uint32_t pi = 0; pi < f->n_ports; pi++)
		if (in_service(f, pi) && guid_map_put(m, f->ports[pi].guid, pi) < 0)
			return -1;
	return 0;
}

static int has_port(const struct guid_map *m, uint64_t guid)
{
	return guid_map_get(m, guid) != FAB_NONE;
}

void notices_configured(struct sm *sm, const struct fabric *old,
			  const struct fabric *f, int becoming_master)
{
	struct sm_notices *ev = sm->notices;
	if (!sm->notify || !ev)
		return;
	if (becoming_master) {
		char err[1024];
		ev->n_in = 0;
		ev->n_out = 0;
		if (notifier_load(sm->notify, err, sizeof(err)) < 0)
			log_err("event subscriptions not merged: %s", err);
		return;
	}
	if (!old) {
		ev->n_out = 0;
		return;
	}
	struct guid_map was, now;
	memset(&was, 0, sizeof(was));
	memset(&now, 0, sizeof(now));
	if (index_ports(old, &was) < 0 || index_ports(f, &now) < 0) {
		log_err("out of memory comparing the CA ports for notices 64/65");
		goto out;
	}
	for (uint32_t pi = 0; pi < old->n_ports; pi++)
		if (in_service(old, pi) && !has_port(&now, old->ports[pi].guid) &&
		    !guid_in(ev->gid_out, ev->n_out, old->ports[pi].guid))
			publish_gid(sm, TRAP_GID_OUT_OF_SERVICE, old, pi);
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		uint64_t g = f->ports[pi].guid;
		/* new, or announced out early and back by now */
		if (!in_service(f, pi) ||
		    (has_port(&was, g) && !guid_in(ev->gid_out, ev->n_out, g)))
			continue;
		if (guid_push(&ev->gid_in, &ev->n_in, &ev->cap_in, g) < 0) {
			log_err("out of memory keeping the ports for notice 64");
			break;
		}
	}
	ev->n_out = 0;
out:
	guid_map_free(&was);
	guid_map_free(&now);
}

void notices_programmed(struct sm *sm)
{
	struct sm_notices *ev = sm->notices;
	if (!sm->notify || !ev || !ev->n_in || !sm->sub.model)
		return;
	const struct fabric *f = &sm->sub.model->f;
	struct guid_map now;
	memset(&now, 0, sizeof(now));
	if (index_ports(f, &now) < 0) {
		log_err("out of memory finding the ports for notice 64");
	} else {
		for (uint32_t k = 0; k < ev->n_in; k++) {
			uint32_t pi = guid_map_get(&now, ev->gid_in[k]);
			if (pi != FAB_NONE)	/* gone again: its 65 said so */
				publish_gid(sm, TRAP_GID_IN_SERVICE, f, pi);
		}
	}
	guid_map_free(&now);
	ev->n_in = 0;
}

static void early_done(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct early_probe *pr = arg;
	struct sm *sm = pr->sm;
	struct sm_notices *ev = sm->notices;
	const struct fabric *f = sm->sub.model ? &sm->sub.model->f : NULL;
	uint32_t node = f ? fabric_find_node(f, pr->ca_node_guid) : FAB_NONE;
	if (status == TXN_OK && len >= SMP_DATA_OFFS + SMP_DATA_SIZE &&
	    !smp_status(resp) && ev && sm->state == SMS_MASTER &&
	    node != FAB_NONE && pr->ca_port <= f->nodes[node].nports) {
		uint32_t pi = fabric_port(f, node, pr->ca_port);
		unsigned state = mad_get_field((void *)(resp + SMP_DATA_OFFS), 0,
					       IB_PORT_STATE_F);
		if (state == PORT_DOWN && in_service(f, pi) &&
		    !guid_in(ev->gid_out, ev->n_out, f->ports[pi].guid) &&
		    guid_push(&ev->gid_out, &ev->n_out, &ev->cap_out,
			      f->ports[pi].guid) == 0)
			publish_gid(sm, TRAP_GID_OUT_OF_SERVICE, f, pi);
	}
	free(pr);
}

void notices_switch_changed(struct sm *sm, uint64_t sw_guid)
{
	const struct fabric *f = sm->sub.model ? &sm->sub.model->f : NULL;
	uint32_t sw = f ? fabric_find_node(f, sw_guid) : FAB_NONE;
	if (!sm->notify || !sm->notices || !notifier_count(sm->notify) ||
	    sw == FAB_NONE || f->nodes[sw].type != FAB_SWITCH)
		return;
	const struct fab_node *n = &f->nodes[sw];
	for (unsigned num = 1; num <= n->nports; num++) {
		const struct fab_port *p = fabric_portp(f, sw, num);
		/* the state as read by the last sweep: INIT right after bring-up */
		if (p->remote == FAB_NONE || p->state < PORT_INIT ||
		    !in_service(f, p->remote))
			continue;
		const struct fab_port *ca = &f->ports[p->remote];
		struct early_probe *pr = malloc(sizeof(*pr));
		if (!pr)
			return;
		pr->sm = sm;
		pr->ca_node_guid = f->nodes[ca->node].guid;
		pr->ca_port = ca->num;
		uint8_t mad[MAD_SIZE];
		struct mad_addr to;
		smp_init_dr(mad, IB_MAD_METHOD_GET, IB_ATTR_PORT_INFO, num,
			    n->dr_path, n->dr_len);
		smp_dr_address(&to);
		if (txn_submit(sm->txn, mad, sizeof(mad), &to, sw, early_done, pr) < 0) {
			free(pr);
			return;
		}
	}
}

int notices_answer(void *arg, const uint8_t *mad, size_t len,
		     const struct mad_addr *from, int status)
{
	struct sm *sm = arg;
	if (!status && sm->notify && len >= MAD_HDR_SIZE && mad[1] == SA_CLASS &&
	    mad_method(mad) == SA_METHOD_REPORT_RESP &&
	    notifier_report_resp(sm->notify, mad, len, from))
		return 1;
	return txn_recv(sm->txn, mad, len, from, status);
}
