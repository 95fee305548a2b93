/* Rogue SMs: remembered, reported, cut off (see rogue.h). */
#include "sm/rogue.h"

#include <infiniband/mad.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "mad/txn.h"
#include "sm/base/clock.h"
#include "sm/base/log.h"
#include "sm/discover/sweep.h"

#define ROGUE_RETRY_MS	5000	/* a rogue still answering is cut off again after */
#define ROGUE_MAX	64	/* rogues remembered; more are counted, not listed */
#define PHYS_DISABLED	3	/* PortInfo:PortPhysicalState, IBA vol. 1 §14.2.5.6 */

struct rogue {
	uint64_t guid;		/* its port GUID, as its SMInfo says */
	uint64_t key;		/* the SM_Key it answered */
	uint8_t state, priority;
	uint64_t first_ms, last_ms;
	uint64_t sw_guid;	/* the switch port facing it: 0 if none */
	uint8_t sw_port;
	uint8_t isolated;	/* the Disabled Set was answered */
	uint64_t tried_ms;	/* the last isolation sent */
	const char *why_not;	/* it cannot be cut off, and why */
};

struct rogues {
	struct rogue r[ROGUE_MAX];
	uint32_t n;
	uint32_t unlisted;	/* rogues past ROGUE_MAX */
	uint64_t isolations;	/* switch ports disabled */
	struct rogue_op *ops;	/* isolations in flight */
};

/* One isolation in flight: Get the switch port's PortInfo, then Set it Disabled. */
struct rogue_op {
	struct rogues *rg;	/* NULL once rogues_free() ran */
	struct txn_engine *txn;
	uint64_t guid, sw_guid;
	uint8_t path[FAB_MAX_HOPS + 1];
	int hops;
	uint8_t port;
	struct rogue_op *next;
};

struct rogues *rogues_new(void)
{
	return calloc(1, sizeof(struct rogues));
}

void rogues_free(struct rogues *rg)
{
	if (!rg)
		return;
	for (struct rogue_op *o = rg->ops; o; o = o->next)
		o->rg = NULL;	/* its answer (or cancellation) frees it */
	free(rg);
}

static struct rogue *find(struct rogues *rg, uint64_t guid)
{
	for (uint32_t i = 0; i < rg->n; i++)
		if (rg->r[i].guid == guid)
			return &rg->r[i];
	return NULL;
}

static void op_unlink(struct rogue_op *op)
{
	if (!op->rg)
		return;
	for (struct rogue_op **pp = &op->rg->ops; *pp; pp = &(*pp)->next)
		if (*pp == op) {
			*pp = op->next;
			return;
		}
}

static void op_end(struct rogue_op *op)
{
	op_unlink(op);
	free(op);
}

static void on_disabled(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct rogue_op *op = arg;
	if (status == TXN_CANCELLED || !op->rg) {
		op_end(op);
		return;
	}
	struct rogue *r = find(op->rg, op->guid);
	if (status == TXN_OK && len >= SMP_DATA_OFFS + SMP_DATA_SIZE && !smp_status(resp)) {
		if (r && !r->isolated) {
			r->isolated = 1;
			op->rg->isolations++;
		}
		log_warn("rogue SM 0x%016llx cut off: switch 0x%016llx port %u disabled "
			 "(enable it with ibportstate once the SM is gone)",
			 (unsigned long long)op->guid, (unsigned long long)op->sw_guid, op->port);
	} else {
		log_limited(LOG_WARN, "rogue SM 0x%016llx: switch 0x%016llx port %u could not be disabled (%s)",
			    (unsigned long long)op->guid, (unsigned long long)op->sw_guid, op->port,
			    status == TXN_OK ? "error status" : "no answer");
	}
	op_end(op);
}

static int send_pi(struct rogue_op *op, int method, const uint8_t *data, txn_done_fn done)
{
	uint8_t mad[MAD_SIZE];
	struct mad_addr a;
	smp_init_dr(mad, method, IB_ATTR_PORT_INFO, op->port, op->path, op->hops);
	smp_dr_address(&a);
	if (data)
		memcpy(smp_data(mad), data, SMP_DATA_SIZE);
	return txn_submit(op->txn, mad, sizeof(mad), &a, TXN_NO_DEST, done, op);
}

static void on_portinfo(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct rogue_op *op = arg;
	if (status == TXN_CANCELLED || !op->rg) {
		op_end(op);
		return;
	}
	if (status != TXN_OK || len < SMP_DATA_OFFS + SMP_DATA_SIZE || smp_status(resp)) {
		on_disabled(op, status == TXN_OK ? TXN_ERROR : status, resp, len);
		return;
	}
	uint8_t data[SMP_DATA_SIZE];
	memcpy(data, resp + SMP_DATA_OFFS, SMP_DATA_SIZE);
	smp_pi_prepare_set(data);
	smp_pi_set(data, IB_PORT_PHYS_STATE_F, PHYS_DISABLED);
	if (send_pi(op, IB_MAD_METHOD_SET, data, on_disabled) < 0)
		on_disabled(op, TXN_ERROR, NULL, 0);
}

/* Sends the Get that starts an isolation of r; returns -1 when none can go. */
static int isolate(struct rogues *rg, struct rogue *r, struct txn_engine *txn,
		   const struct fabric *f, uint32_t port)
{
	uint32_t q = f->ports[port].remote;
	if (f->ports[port].node == f->sm_node) {
		r->why_not = "it is on our own node";
		return -1;
	}
	if (q == FAB_NONE || f->nodes[f->ports[q].node].type != FAB_SWITCH) {
		r->why_not = "no switch port faces it";
		return -1;
	}
	struct rogue_op *op = calloc(1, sizeof(*op));
	if (!op) {
		r->why_not = "out of memory";
		return -1;
	}
	op->rg = rg;
	op->txn = txn;
	op->guid = r->guid;
	op->sw_guid = f->nodes[f->ports[q].node].guid;
	op->port = f->ports[q].num;
	op->hops = discovery_port_path(f, q, op->path);
	if (op->hops < 0 || send_pi(op, IB_MAD_METHOD_GET, NULL, on_portinfo) < 0) {
		free(op);
		r->why_not = "no directed route to its switch";
		return -1;
	}
	op->next = rg->ops;
	rg->ops = op;
	r->why_not = NULL;
	r->sw_guid = op->sw_guid;
	r->sw_port = op->port;
	return 0;
}

int rogues_seen(struct rogues *rg, struct txn_engine *txn, const struct fabric *f,
		uint32_t port, const struct smp_sminfo *s, enum rogue_mode mode)
{
	uint64_t now = clock_ms();
	struct rogue *r = find(rg, s->guid);
	int fresh = !r;
	if (!r) {
		if (rg->n == ROGUE_MAX) {
			rg->unlisted++;
			return 1;
		}
		r = &rg->r[rg->n++];
		memset(r, 0, sizeof(*r));
		r->guid = s->guid;
		r->first_ms = now;
	}
	r->key = s->sm_key;
	r->state = s->state;
	r->priority = s->priority;
	r->last_ms = now;
	if (fresh)
		log_warn("rogue SM 0x%016llx: SMInfo %s, priority %d, SM_Key 0x%016llx not ours: "
			 "never obeyed%s", (unsigned long long)s->guid, sm_state_name(s->state),
			 s->priority, (unsigned long long)s->sm_key,
			 mode == ROGUE_ISOLATE ? "; cutting it off" : " (sm.rogue: report)");
	if (mode != ROGUE_ISOLATE || (r->tried_ms && now - r->tried_ms < ROGUE_RETRY_MS))
		return fresh;
	r->tried_ms = now;
	r->isolated = 0;	/* it answered: whatever was done, it is back */
	if (port >= f->n_ports || isolate(rg, r, txn, f, port) < 0)
		log_limited(LOG_WARN, "rogue SM 0x%016llx cannot be cut off: %s",
			    (unsigned long long)s->guid, r->why_not ? r->why_not : "not in the fabric");
	return fresh;
}

uint32_t rogues_count(const struct rogues *rg)
{
	return rg->n + rg->unlisted;
}

uint64_t rogues_isolations(const struct rogues *rg)
{
	return rg->isolations;
}

void rogues_to_ctl(const struct rogues *rg, json_t *o)
{
	if (!rg->n && !rg->unlisted)
		return;
	json_t *a = json_array();
	uint64_t now = clock_ms();
	for (uint32_t i = 0; i < rg->n; i++) {
		const struct rogue *r = &rg->r[i];
		char guid[24], key[24], sw[24];
		snprintf(guid, sizeof(guid), "0x%016llx", (unsigned long long)r->guid);
		snprintf(key, sizeof(key), "0x%016llx", (unsigned long long)r->key);
		json_t *e = json_pack("{s:s,s:s,s:s,s:i,s:I,s:I,s:b}", "guid", guid, "sm_key", key,
				      "state", sm_state_name(r->state), "priority", r->priority,
				      "seen_s_ago", (json_int_t)((now - r->last_ms) / 1000),
				      "first_seen_s_ago", (json_int_t)((now - r->first_ms) / 1000),
				      "isolated", r->isolated);
		if (r->sw_guid) {
			snprintf(sw, sizeof(sw), "0x%016llx", (unsigned long long)r->sw_guid);
			json_object_set_new(e, "switch_guid", json_string(sw));
			json_object_set_new(e, "switch_port", json_integer(r->sw_port));
		}
		if (r->why_not)
			json_object_set_new(e, "not_isolated_because", json_string(r->why_not));
		json_array_append_new(a, e);
	}
	json_object_set_new(o, "rogue_sms", a);
	if (rg->unlisted)
		json_object_set_new(o, "rogue_sms_unlisted", json_integer(rg->unlisted));
}
