/*
 * The sweeper (see sweeper.h): requests queued on the loop, one activity
 * at a time, the light sweep's timer.
 */
#include "sm/sweeper.h"

#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "sm/base/clock.h"
#include "sm/base/log.h"
#include "sm/daemon.h"

/* The reason a heavy sweep that could not go on is tried again with. */
#define SWEEP_RETRY "retry after failure"
#define SWEEP_RETRY_MS 1000

const char *sm_activity_sweep_name(enum sm_activity a)
{
	switch (a) {
	case SM_HEAVY_SWEEP: return "heavy";
	case SM_LIGHT_SWEEP: return "light";
	case SM_VM_WRITES: return "vm";
	case SM_MFT_WRITES: return "multicast";
	case SM_JOB_WRITES: return "jobs";
	case SM_IDLE:
	case SM_HANDOVER_WAIT:
		break;
	}
	return "no";
}

void sm_stop(struct sm *sm, int code)
{
	sm->exit_code = code;
	sm->stopping = 1;
	event_base_loopbreak(sm->base);
}

/* Starts whatever sweep was asked for while we were busy. */
static void on_kick(evutil_socket_t fd, short what, void *arg)
{
	struct sm *sm = arg;
	if (sm->sw.activity != SM_IDLE || sm->stopping)
		return;
	if (sm->sw.heavy_wanted)
		sm->sw.h.heavy(sm);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct sm *sm = arg;
	if (sm->sw.activity != SM_IDLE)
		return;
	if (sm->sw.heavy_wanted || !sm->sub.model) {
		sm->sw.h.heavy(sm);
		return;
	}
	if (sm->state == SMS_MASTER)
		sm->sw.h.light(sm);
}

int sweeper_init(struct sm *sm, const struct sweeper_hooks *h)
{
	struct sweeper *s = &sm->sw;
	s->h = *h;
	s->kick = event_new(sm->base, -1, 0, on_kick, sm);
	s->timer = evtimer_new(sm->base, on_timer, sm);
	return s->kick && s->timer ? 0 : -1;
}

void sweeper_free(struct sm *sm)
{
	if (sm->sw.kick)
		event_free(sm->sw.kick);
	if (sm->sw.timer)
		event_free(sm->sw.timer);
	sm->sw.kick = sm->sw.timer = NULL;
}

static void kick(struct sm *sm)
{
	event_active(sm->sw.kick, EV_TIMEOUT, 0);
}

void sweeper_request_heavy(struct sm *sm, const char *why)
{
	struct sweeper *s = &sm->sw;
	/* why may be heavy_reason itself (a light sweep's change): snprintf
	 * onto its own source is undefined */
	if (!s->heavy_wanted && why != s->heavy_reason)
		snprintf(s->heavy_reason, sizeof(s->heavy_reason), "%s", why);
	s->heavy_wanted = 1;
	kick(sm);
}

void sweeper_request_light(struct sm *sm)
{
	if (sm->sw.activity == SM_IDLE && sm->sub.model && sm->state == SMS_MASTER)
		sm->sw.h.light(sm);
}

int sweeper_request_reroute(struct sm *sm, char *err, size_t errlen)
{
	if (sm->state != SMS_MASTER || !sm->sub.model) {
		snprintf(err, errlen, "not MASTER of a configured subnet (state %s)",
			 sm_state_name(sm->state));
		return -1;
	}
	if (sm->sw.activity != SM_IDLE) {
		snprintf(err, errlen, "a sweep is running; try again when it is done");
		return -1;
	}
	log_notice("reroute: recomputing routes without rediscovery");
	sm->sw.activity = SM_HEAVY_SWEEP;
	event_del(sm->sw.timer);
	sm->sw.h.reroute(sm);
	return 0;
}

static void sweeper_schedule_light(struct sm *sm)
{
	if ((sm->watch && sm->watch->one_shot) || sm->cfg.sweep_interval_s <= 0)
		return;
	timer_in_ms(sm->sw.timer, (uint64_t)sm->cfg.sweep_interval_s * 1000);
}

void sweeper_resume(struct sm *sm)
{
	sm->sw.activity = SM_IDLE;
	trapin_idle(&sm->traps);
	if (sm->sw.h.waited && sm->sw.h.waited(sm))
		return;
	if (sm->sw.heavy_wanted)
		kick(sm);
	else if (sm->state == SMS_MASTER && !evtimer_pending(sm->sw.timer, NULL))
		sweeper_schedule_light(sm);
}

void sweeper_retry_after(struct sm *sm, uint64_t ms)
{
	sm->sw.heavy_wanted = 1;
	snprintf(sm->sw.heavy_reason, sizeof(sm->sw.heavy_reason), SWEEP_RETRY);
	timer_in_ms(sm->sw.timer, ms);
}

void sweeper_retry_in(struct sm *sm, uint64_t ms)
{
	sweeper_retry_after(sm, ms > SWEEP_RETRY_MS ? ms : SWEEP_RETRY_MS);
}

void sweeper_cancel_heavy(struct sm *sm)
{
	sm->sw.heavy_wanted = 0;
	event_del(sm->sw.timer);
}

int sweeper_is_retry(const struct sm *sm)
{
	return !strcmp(sm->sw.heavy_reason, SWEEP_RETRY);
}
