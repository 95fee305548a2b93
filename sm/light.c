/*
 * The light sweep (see light.h): SwitchInfo of every switch (its
 * PortStateChange) and SMInfo of every other SM; a change asks for a
 * heavy sweep.  With nothing changed, the scrub (sm/write/scrub.h)
 * reads back sweep.scrub_blocks of what the SM wrote and writes again
 * what differs; that is reported as tampering.
 */
#include "sm/light.h"

#include "mad/smp.h"
#include "mad/txn.h"
#include "sm/smstate.h"
#include "sm/sweeper.h"
#include "sm/daemon.h"
#include <errno.h>
#include <stdarg.h>
#include <infiniband/mad.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <jansson.h>
#include "sm/base/nodemap.h"
#include "sm/heavy.h"
#include "sm/apply.h"
#include "sm/base/log.h"
#include "sm/write/scrub.h"

/* ---- the scrub: what the devices hold against what the SM wrote ---- */

/* Real work waits: a heavy sweep asked for (a trap, a command), or a stop. */
static int scrub_yield(void *arg)
{
	const struct sm *sm = arg;
	return sm->sw.heavy_wanted || sm->stopping || sm->state != SMS_MASTER;
}

static void scrub_done(void *arg, const struct scrub_round *r)
{
	struct sm *sm = arg;
	const struct scrub_stats *st = scrub_get_stats(sm->sweep.scrub);
	if (r->found) {
		errors_set(&sm->errs, SM_ERR_TAMPER,
			   "tampering: %u blocks read back differed from what the SM wrote (%llu since start); %u written again%s (see the log)",
			   r->found, (unsigned long long)st->tampered, r->repaired,
			   r->yielded ? ", the rest left to the heavy sweep" : "");
		if (r->failed)
			sweeper_request_heavy(sm, "scrub: some repairs failed");
	} else if (r->pass_clean) {
		errors_clear(&sm->errs, SM_ERR_TAMPER);
	}
	finish_sweep(sm);
}

/* 1 when a scrub round started; it ends the light sweep. */
static int light_scrub(struct sm *sm)
{
	static const struct scrub_hooks hooks = { .yield = scrub_yield, .done = scrub_done };
	if (sm->cfg.sweep_scrub_blocks <= 0 || !sm->sub.model || !sm->sub.cache ||
	    scrub_yield(sm))
		return 0;
	if (!sm->sweep.scrub && !(sm->sweep.scrub = scrub_new())) {
		log_err("scrub: out of memory; no read-back this light sweep");
		return 0;
	}
	struct scrub_hooks h = hooks;
	h.arg = sm;
	return scrub_start(sm->sweep.scrub, sm->txn, sm->sub.model, sm->sub.cache,
			   (uint32_t)sm->cfg.sweep_scrub_blocks, SM_EXTRA_ROUNDS, &h) == 0;
}

/* ---- light sweep: SwitchInfo of every switch, SMInfo of every other SM ---- */

/*
 * Ports that refuse the SM's M_Key (sm/model/mkeyrec.h) are tried again
 * by a heavy sweep at each light sweep while they are listed -- the lease
 * they hold may be shorter than the estimate -- one a sweep interval at
 * most, never at once; those whose lease is 0 (shown at level 1) never
 * end, and are not.
 */
static int mkey_due(const struct sm *sm)
{
	uint64_t last;
	return mkrec_refusing(&sm->sub.rec, NULL, &last) && last;
}

static void light_done(struct sm *sm)
{
	sm->sweep.light_sweeps++;
	if (!sm->sweep.light_changes && mkey_due(sm)) {
		snprintf(sm->sw.heavy_reason, sizeof(sm->sw.heavy_reason),
			 "M_Key: ports that refused the SM, tried again");
		sm->sweep.light_changes++;
	}
	if (sm->sweep.light_changes) {
		sweeper_request_heavy(sm, sm->sw.heavy_reason[0] ? sm->sw.heavy_reason :
				 "light sweep saw a change");
		sm->sw.activity = SM_IDLE;
		return;
	}
	if (!light_scrub(sm))
		finish_sweep(sm);
}

struct light_q {
	struct sm *sm;
	uint32_t node;
};

void light_answer(struct sm *sm, const char *why)
{
	if (why) {
		if (!sm->sweep.light_changes)
			snprintf(sm->sw.heavy_reason, sizeof(sm->sw.heavy_reason),
				 "light sweep: %s", why);
		sm->sweep.light_changes++;
	}
	if (--sm->sweep.light_pending == 0)
		light_done(sm);
}

static void on_light_answer(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct light_q *q = arg;
	struct sm *sm = q->sm;
	uint32_t node = q->node;
	free(q);
	if (status == TXN_CANCELLED)
		return;
	const struct fab_node *n = &sm->sub.model->f.nodes[node];
	char why[160];
	const char *change = NULL;
	if (status != TXN_OK || smp_status(resp)) {
		change = "stopped answering";
	} else {
		struct smp_switchinfo si;
		smp_decode_switchinfo(resp + SMP_DATA_OFFS, &si);
		if (si.port_state_change || si.lft_top != sm->sub.lft.max_lid)
			change = "port state change";
	}
	if (change)
		snprintf(why, sizeof(why), "%s on switch 0x%016llx \"%s\"", change,
			 (unsigned long long)n->guid, fabric_node_name(&sm->sub.model->f, node));
	light_answer(sm, change ? why : NULL);
}

void light_start(struct sm *sm)
{
	const struct fabric *f = &sm->sub.model->f;
	sm->sw.activity = SM_LIGHT_SWEEP;
	sm->sweep.light_changes = 0;
	sm->sweep.light_pending = 1;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		if (f->nodes[i].type != FAB_SWITCH)
			continue;
		struct light_q *q = malloc(sizeof(*q));
		if (!q)
			continue;
		q->sm = sm;
		q->node = i;
		uint8_t mad[MAD_SIZE];
		struct mad_addr to;
		smp_init_dr(mad, IB_MAD_METHOD_GET, IB_ATTR_SWITCH_INFO, 0,
			    f->nodes[i].dr_path, f->nodes[i].dr_len);
		smp_dr_address(&to);
		if (txn_submit(sm->txn, mad, sizeof(mad), &to, i, on_light_answer, q) < 0)
			free(q);
		else
			sm->sweep.light_pending++;
	}
	/* ibsim sends trap 144 once, while a newcomer is still DISCOVERING */
	sm->sweep.light_pending += smstate_light_queries(sm);
	if (--sm->sweep.light_pending == 0)
		light_done(sm);
}

void scrub_to_ctl(const struct sm *sm, json_t *o)
{
	static const struct scrub_stats none;
	const struct scrub_stats *st = sm->sweep.scrub ? scrub_get_stats(sm->sweep.scrub) : &none;
	uint32_t per = sm->cfg.sweep_scrub_blocks > 0 ? (uint32_t)sm->cfg.sweep_scrub_blocks : 0;
	json_object_set_new(o, "scrub", json_pack("{s:i,s:i,s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		"blocks_per_light_sweep", (int)per, "blocks_held", (int)st->held,
		/* every block read within this many light sweeps */
		"light_sweeps_per_pass", per ? (int)((st->held + per - 1) / per) : 0,
		"rounds", (json_int_t)st->rounds, "blocks_read", (json_int_t)st->reads,
		"read_failed", (json_int_t)st->read_failed, "skipped", (json_int_t)st->skipped,
		"tampered", (json_int_t)st->tampered, "repaired", (json_int_t)st->repaired,
		"yielded", (json_int_t)st->yielded, "passes", (json_int_t)st->passes));
}
