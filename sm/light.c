/*
 * The light sweep (see light.h): SwitchInfo of every switch (its
 * PortStateChange) and SMInfo of every other SM; a change asks for a
 * heavy sweep.
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
#include "sm/base/nodemap.h"
#include "sm/heavy.h"

/* ---- light sweep: SwitchInfo of every switch, SMInfo of every other SM ---- */

static void light_done(struct sm *sm)
{
	sm->sweep.light_sweeps++;
	if (sm->sweep.light_changes) {
		sweeper_request_heavy(sm, sm->sw.heavy_reason[0] ? sm->sw.heavy_reason :
				 "light sweep saw a change");
		sm->sw.activity = SM_IDLE;
		return;
	}
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
