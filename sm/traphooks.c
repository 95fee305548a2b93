/*
 * The daemon's side of traps in (traps/trapin.h): what the heavy sweep is
 * doing, the model to decide on, and the heavy sweep a confirmed change
 * asks for.
 */
#include "sm/daemon.h"
#include "sm/sa/notices.h"
#include "sm/recv.h"
#include "sm/base/clock.h"
#include "sm/hookevents.h"

static enum trapin_sweep sweep_state(void *arg)
{
	const struct sm *sm = arg;
	if (sm->sw.activity == SM_HEAVY_SWEEP)
		return TRAPIN_RUNNING;
	/* handing over: the successor's first sweep, or ours if it refuses */
	if (sm->sw.activity == SM_HANDOVER_WAIT)
		return TRAPIN_PENDING;
	return sm->sw.heavy_wanted ? TRAPIN_PENDING : TRAPIN_IDLE;
}

static const struct fabric *model(void *arg)
{
	const struct sm *sm = arg;
	return sm->state == SMS_MASTER && sm->sub.model ? &sm->sub.model->f : NULL;
}

/* A 128/144 during the first sweep: once more when it is done (daemon.c). */
static void unchecked(void *arg)
{
	((struct sm *)arg)->sweep.trap_resweep = 1;
}

static void heavy(void *arg, const char *why)
{
	struct sm *sm = arg;
	if (sm->state == SMS_MASTER)
		sweeper_request_heavy(sm, why);
}

static void switch_changed(void *arg, uint64_t sw_guid)
{
	struct sm *sm = arg;
	if (sm->state == SMS_MASTER)
		notices_switch_changed(sm, sw_guid);
}

static void port_changed(void *arg, uint64_t port_guid)
{
	smstate_forget_silent(arg, port_guid);
}

static void pkey_violation(void *arg, uint32_t pi)
{
	struct sm *sm = arg;
	if (sm->sub.model)
		pkey_violation_count(&sm->pkey_viol, &sm->sub.model->f, pi);
}

/* A trap 256 from port pi of the model: the mkey_violation event. */
static void mkey_violation(void *arg, uint32_t pi, const struct mkey_trap256 *d)
{
	struct sm *sm = arg;
	if (sm->sub.model)
		hookev_mkey_violation(sm->hook, &sm->sub.model->f, pi, d);
}

/* The M_Key the SM addresses the port at lid with (sm/subnet.h), 0: none. */
static uint64_t repress_key(void *arg, uint32_t lid)
{
	const struct sm *sm = arg;
	if (!sm->sub.model)
		return 0;
	const struct fabric *f = &sm->sub.model->f;
	uint32_t pi = fabric_lid_port(f, lid);
	return pi == FAB_NONE ? 0 : subnet_port_key(&sm->sub, f->ports[pi].guid);
}

void sm_traps_init(struct sm *sm)
{
	struct trapin_hooks h = {
		.sweep_state = sweep_state,
		.model = model,
		.heavy = heavy,
		.switch_changed = switch_changed,
		.port_changed = port_changed,
		.pkey_violation = pkey_violation,
		.mkey_violation = mkey_violation,
		.repress_key = repress_key,
		.unchecked = unchecked,
		.arg = sm,
	};
	trapin_init(&sm->traps, sm->txn, &sm->tr, &h);
}

/* A trap: traps/trapin.c answers, counts and decides. */
int sm_recv_trap(void *ctx, const uint8_t *in, size_t len,
		 const struct mad_addr *from)
{
	struct sm *sm = ctx;
	(void)len;	/* the receive path passes SMPs of MAD_SIZE only */
	trapin_handle(&sm->traps, in, from, clock_ms());
	return MAD_DONE;
}
