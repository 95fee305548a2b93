#include "sm/write/program.h"

#include <infiniband/mad.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/smp.h"
#include "sm/base/log.h"

#define STATUS_INVALID_FIELD 0x1c	/* e.g. a PortState transition refused */

/*
 * How much is handed to the transaction table at a time: a plan's wave
 * can be millions of LFT blocks; their MADs are built as the answers
 * come back, never all at once.
 */
#define PROGRAM_HIGH_WATER 4096

/* One MAD in flight: the op it belongs to, and which of the op's MADs. */
struct xfer {
	struct program *pr;
	struct xfer *next;
	uint32_t idx, i;	/* op p->waves[wave].ops[idx], its MAD i */
	uint8_t wave;
	uint8_t verify;		/* a Get to see where a refused state change stands */
	uint8_t relearn;	/* that Get reads an inferred port the Set did not fit */
	uint8_t data[SMP_DATA_SIZE];	/* the Set's payload */
};

struct program {
	struct txn_engine *txn;
	struct discovery *d;
	struct fabric *f;
	struct plan *p;
	struct devcache *c;
	struct program_hooks h;
	program_done_fn done;
	void *done_arg;
	void *owner;
	void (*owner_free)(void *);
	int extra_rounds;
	struct program_stats st;
	uint16_t *port_failed;	/* per port index: 1 + the wave it failed in */
	struct xfer *retry;	/* no answer: sent again in the next round */
	uint32_t outstanding;
	uint32_t wave;		/* the wave being sent */
	uint32_t op, i;		/* the cursor in it: op index, MAD of that op */
	uint32_t wave_failed;	/* failures in this wave */
	int rounds;
	int hooked;		/* wave_done ran for this wave */
	int busy;		/* inside step(): no recursion */
	int finished;
	int cancelled;
};

static void submit(struct program *pr, struct xfer *x);
static void step(struct program *pr);

static const struct plan_op *op_of(const struct program *pr,
				   const struct xfer *x)
{
	return &pr->p->waves[x->wave].ops[x->idx];
}

/* The port an op writes (port 0 of its node for node-wide attributes). */
static uint32_t op_port(const struct program *pr, const struct plan_op *o)
{
	return pr->f->nodes[o->node].first_port + o->port;
}

static void record_success(struct program *pr, struct xfer *x)
{
	const struct plan_op *o = op_of(pr, x);
	struct fab_node *n = &pr->f->nodes[o->node];
	devcache_record(pr->c, pr->f, o, plan_mad_mod(o, x->i), x->data);
	/* the model now says what the device holds */
	switch (o->kind) {
	case PLAN_PORTINFO: {
		uint32_t pi = op_port(pr, o);
		struct fab_port *p = &pr->f->ports[pi];
		unsigned state = smp_pi_get(x->data, IB_PORT_STATE_F);
		pr->st.portinfo_sets++;
		if (state == PORT_ACTIVE)
			pr->st.activations++;
		if (state)
			p->state = (uint8_t)state;
		if (fabric_is_endport(pr->f, pi)) {
			p->hw_lid = smp_pi_get(x->data, IB_PORT_LID_F);
			p->hw_sm_lid = smp_pi_get(x->data, IB_PORT_SMLID_F);
			p->lmc = (uint8_t)smp_pi_get(x->data, IB_PORT_LMC_F);
		}
		break;
	}
	case PLAN_SWITCHINFO:
		pr->st.switchinfo_sets++;
		n->lft_top = mad_get_field(x->data, 0, IB_SW_LINEAR_FDB_TOP_F);
		n->mft_top = (uint16_t)mad_get_field(x->data, 0, IB_SW_MCAST_FDB_TOP_F);
		n->lifetime = (uint8_t)mad_get_field(x->data, 0, IB_SW_LIFE_TIME_F);
		n->port_state_change = 0;
		break;
	case PLAN_PKEY:
		pr->st.pkey_sets++;
		break;
	case PLAN_LFT:
		pr->st.lft_blocks++;
		break;
	case PLAN_SL2VL:
		pr->st.sl2vl_sets++;
		pr->st.other_sets++;
		break;
	case PLAN_VLARB:
		pr->st.vlarb_sets++;
		pr->st.other_sets++;
		break;
	case PLAN_MFT:
		pr->st.mft_sets++;
		pr->st.other_sets++;
		break;
	default:
		pr->st.other_sets++;
		break;
	}
}

static void record_failure(struct program *pr, struct xfer *x, const char *why)
{
	const struct plan_op *o = op_of(pr, x);
	const struct fab_node *n = &pr->f->nodes[o->node];
	uint32_t pi = op_port(pr, o);
	pr->st.failed++;
	pr->wave_failed++;
	if (!pr->port_failed[pi]) {
		pr->port_failed[pi] = (uint16_t)(x->wave + 1);
		pr->st.failed_ports++;
	}
	log_warn("%s Set to 0x%016llx[%u] \"%s\"%s failed: %s",
		 txn_attr_name(plan_attr(o)), (unsigned long long)n->guid,
		 o->port, n->desc, o->kind == PLAN_LFT ? " (LFT block)" : "", why);
}

/* Sends MAD i of op idx of the wave being sent, unless it need not go. */
static void send_mad(struct program *pr, uint32_t idx, uint32_t i)
{
	const struct plan_op *o = &pr->p->waves[pr->wave].ops[idx];
	uint16_t failed = pr->port_failed[op_port(pr, o)];
	if (failed && failed - 1u < pr->wave) {
		pr->st.held++;
		return;
	}
	uint8_t data[SMP_DATA_SIZE];
	plan_mad_payload(pr->p, o, i, data);
	if (devcache_holds(pr->c, pr->f, o, plan_mad_mod(o, i), data)) {
		pr->st.unchanged++;
		return;
	}
	struct xfer *x = malloc(sizeof(*x));
	if (!x) {
		struct xfer tmp = { .wave = (uint8_t)pr->wave, .idx = idx, .i = i };
		record_failure(pr, &tmp, "out of memory");
		return;
	}
	memset(x, 0, offsetof(struct xfer, data));
	x->pr = pr;
	x->wave = (uint8_t)pr->wave;
	x->idx = idx;
	x->i = i;
	memcpy(x->data, data, SMP_DATA_SIZE);
	submit(pr, x);
}

static int wave_sent(const struct program *pr)
{
	return pr->wave >= pr->p->n_waves ||
	       pr->op >= pr->p->waves[pr->wave].n;
}

static void feed(struct program *pr)
{
	while (pr->outstanding < PROGRAM_HIGH_WATER && !wave_sent(pr)) {
		const struct plan_op *o = &pr->p->waves[pr->wave].ops[pr->op];
		uint32_t idx = pr->op, i = pr->i;
		if (++pr->i >= plan_op_mads(o)) {
			pr->i = 0;
			pr->op++;
		}
		send_mad(pr, idx, i);
	}
}

/* Runs done() last: the caller may free pr from it. */
static void finish(struct program *pr)
{
	pr->finished = 1;
	pr->busy = 0;
	pr->done(pr->done_arg, &pr->st);
}

/*
 * Moves the plan on as far as it can: sends the wave, re-sends what got
 * no answer when the wave is otherwise done, and starts the next wave
 * when this one is over.  Returns 1 when done() ran.
 */
static int advance(struct program *pr)
{
	const struct plan *p = pr->p;
	for (;;) {
		if (pr->cancelled) {
			if (pr->outstanding)
				return 0;
			finish(pr);
			return 1;
		}
		if (!wave_sent(pr) && pr->outstanding < PROGRAM_HIGH_WATER / 2)
			feed(pr);
		if (pr->outstanding || !wave_sent(pr))
			return 0;
		if (pr->retry && pr->rounds < pr->extra_rounds) {
			struct xfer *x = pr->retry;
			pr->retry = NULL;
			pr->rounds++;
			while (x) {
				struct xfer *next = x->next;
				submit(pr, x);
				x = next;
			}
			continue;
		}
		while (pr->retry) {
			struct xfer *x = pr->retry;
			pr->retry = x->next;
			record_failure(pr, x, "no answer");
			free(x);
		}
		if (pr->wave >= p->n_waves) {
			if (!p->sealed)
				return 0;
			finish(pr);
			return 1;
		}
		if (!p->sealed && pr->wave >= p->closed)
			return 0;	/* the planner may add to this wave */
		if (!pr->hooked) {
			pr->hooked = 1;
			pr->st.waves++;
			log_debug("write plan: wave %u over (%u failed)",
				  pr->wave, pr->wave_failed);
			if (pr->h.wave_done)
				pr->h.wave_done(pr->h.arg, pr, (int)pr->wave);
			continue;
		}
		if (p->stop_on_failure && pr->wave_failed) {
			log_warn("write plan stopped after wave %u: %u writes failed",
				 pr->wave, pr->wave_failed);
			pr->st.stopped = 1;
			finish(pr);
			return 1;
		}
		if (pr->wave + 1 >= p->n_waves && !p->sealed)
			return 0;	/* waits for the planner's next wave */
		pr->wave++;
		pr->op = pr->i = 0;
		pr->rounds = 0;
		pr->hooked = 0;
		pr->wave_failed = 0;
	}
}

static void step(struct program *pr)
{
	if (pr->busy || pr->finished)
		return;
	pr->busy = 1;
	if (!advance(pr))
		pr->busy = 0;
}

/* The model's port now as the device says (a Set's answer or a Get). */
static void relearn_port(struct program *pr, uint32_t pi, const uint8_t *data)
{
	struct fab_port *p = &pr->f->ports[pi];
	memcpy(pr->d->pi_raw[pi], data, SMP_DATA_SIZE);
	discovery_decode_portinfo(p, data);
	log_info("port 0x%016llx[%u]: not what was inferred (MTUCap %u, VLCap %u); set again",
		 (unsigned long long)p->guid, p->num, p->mtu_cap, p->vl_cap);
	if (!pr->h.replan_port)
		return;
	pr->h.replan_port(pr->h.arg, pr, pi, (int)pr->wave);
	if (p->remote != FAB_NONE)
		pr->h.replan_port(pr->h.arg, pr, p->remote, (int)pr->wave);
}

/*
 * The first Set to a port whose PortInfo was inferred (sweep.c) answers
 * with what the port really is.  Returns 1 if x was handled here.
 */
static int confirm_inferred(struct program *pr, struct xfer *x, int st,
			    const uint8_t *resp)
{
	const struct plan_op *o = op_of(pr, x);
	uint32_t pi = op_port(pr, o);
	struct fab_port *p = &pr->f->ports[pi];
	if (o->kind != PLAN_PORTINFO || !(p->flags & FPORT_INFERRED))
		return 0;
	if (st) {	/* it did not fit: read the port, then set it again */
		x->verify = x->relearn = 1;
		submit(pr, x);
		return 1;
	}
	const uint8_t *data = resp + SMP_DATA_OFFS;
	p->flags &= (uint8_t)~FPORT_INFERRED;
	record_success(pr, x);
	if (smp_pi_get(data, IB_PORT_MTU_CAP_F) != p->mtu_cap ||
	    smp_pi_get(data, IB_PORT_VL_CAP_F) != p->vl_cap)
		relearn_port(pr, pi, data);
	free(x);
	return 1;
}

static void verify_answer(struct program *pr, struct xfer *x, int st,
			  const uint8_t *resp)
{
	unsigned want = smp_pi_get(x->data, IB_PORT_STATE_F);
	if (st) {
		record_failure(pr, x, "invalid PortState transition");
		return;
	}
	unsigned now = smp_pi_get(resp + SMP_DATA_OFFS, IB_PORT_STATE_F);
	if (now >= want && now <= PORT_ACTIVE) {
		record_success(pr, x);
		return;
	}
	char why[64];
	snprintf(why, sizeof(why), "PortState %u refused; the port is in state %u",
		 want, now);
	record_failure(pr, x, why);
}

/* A Set's answer: what the device now holds, as later plans and the SA see it. */
static void keep_answer(struct program *pr, const struct xfer *x,
			const uint8_t *data)
{
	const struct plan_op *o = op_of(pr, x);
	if (o->kind == PLAN_PORTINFO)
		memcpy(pr->d->pi_raw[op_port(pr, o)], data, SMP_DATA_SIZE);
	else if (o->kind == PLAN_SWITCHINFO)
		memcpy(pr->d->si_raw[o->node], data, SMP_DATA_SIZE);
}

/* Handles one answer; returns 1 if x was sent again. */
static int answer(struct program *pr, struct xfer *x, const uint8_t *resp)
{
	int st = smp_status(resp);
	if (x->relearn) {
		if (st)
			record_failure(pr, x, "PortInfo cannot be read");
		else
			relearn_port(pr, op_port(pr, op_of(pr, x)),
				     resp + SMP_DATA_OFFS);
		return 0;
	}
	if (x->verify) {
		verify_answer(pr, x, st, resp);
		return 0;
	}
	if (!st)
		keep_answer(pr, x, resp + SMP_DATA_OFFS);
	if (confirm_inferred(pr, x, st, resp))
		return 1;	/* sent again, or freed there */
	/*
	 * A state change refused as invalid may be our own retry of a Set
	 * whose answer was lost: the port is already there.  Look before
	 * calling it a failure.
	 */
	if (st == STATUS_INVALID_FIELD && op_of(pr, x)->kind == PLAN_PORTINFO &&
	    smp_pi_get(x->data, IB_PORT_STATE_F)) {
		x->verify = 1;
		submit(pr, x);
		return 1;
	}
	if (st) {
		char why[48];
		snprintf(why, sizeof(why), "MAD status 0x%04x", st);
		record_failure(pr, x, why);
	} else {
		record_success(pr, x);
	}
	return 0;
}

static void on_answer(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct xfer *x = arg;
	struct program *pr = x->pr;
	pr->outstanding--;
	if (status == TXN_CANCELLED) {
		/* shutting down: no more writes, no more waves */
		pr->cancelled = 1;
		pr->st.cancelled = 1;
		free(x);
	} else if (status != TXN_OK) {
		x->next = pr->retry;
		pr->retry = x;
	} else if (!answer(pr, x, resp)) {
		free(x);
	}
	step(pr);
}

static void submit(struct program *pr, struct xfer *x)
{
	const struct plan_op *o = op_of(pr, x);
	uint8_t mad[MAD_SIZE];
	struct mad_addr to;
	int method = x->verify ? IB_MAD_METHOD_GET : IB_MAD_METHOD_SET;
	uint32_t mod = plan_mad_mod(o, x->i);
	if (o->lid) {
		smp_init_lid(mad, method, plan_attr(o), mod);
		memset(&to, 0, sizeof(to));
		to.lid = o->lid;
	} else {
		uint8_t path[FAB_MAX_HOPS + 1];
		int hops = discovery_port_path(pr->f, op_port(pr, o), path);
		if (hops < 0) {
			record_failure(pr, x, "no directed route");
			free(x);
			return;
		}
		smp_init_dr(mad, method, plan_attr(o), mod, path, hops);
		smp_dr_address(&to);
	}
	if (!x->verify)
		memcpy(smp_data(mad), x->data, SMP_DATA_SIZE);
	pr->outstanding++;
	if (txn_submit(pr->txn, mad, sizeof(mad), &to, o->node, on_answer, x) < 0) {
		pr->outstanding--;
		record_failure(pr, x, "out of memory");
		free(x);
	}
}

struct program *program_run(struct txn_engine *txn, struct discovery *d,
			    struct plan *p, struct devcache *c, int extra_rounds,
			    const struct program_hooks *hooks,
			    program_done_fn done, void *arg)
{
	struct program *pr = calloc(1, sizeof(*pr));
	if (!pr)
		return NULL;
	pr->txn = txn;
	pr->d = d;
	pr->f = &d->f;
	pr->p = p;
	pr->c = c;
	if (hooks)
		pr->h = *hooks;
	pr->extra_rounds = extra_rounds;
	pr->done = done;
	pr->done_arg = arg;
	pr->port_failed = calloc((size_t)pr->f->n_ports + 1, sizeof(*pr->port_failed));
	if (!pr->port_failed) {
		free(pr);
		return NULL;
	}
	step(pr);
	return pr;
}

void program_kick(struct program *pr)
{
	step(pr);
}

const struct program_stats *program_get_stats(const struct program *pr)
{
	return &pr->st;
}

void program_set_owner(struct program *pr, void *owner,
		       void (*owner_free)(void *))
{
	pr->owner = owner;
	pr->owner_free = owner_free;
}

void *program_owner(const struct program *pr)
{
	return pr->owner;
}

void program_free(struct program *pr)
{
	if (!pr)
		return;
	while (pr->retry) {
		struct xfer *x = pr->retry;
		pr->retry = x->next;
		free(x);
	}
	if (pr->owner_free)
		pr->owner_free(pr->owner);
	free(pr->port_failed);
	free(pr);
}
