/*
 * Multicast trees and MFT writes after the group database changed
 * (sm/mcast/mcast_sm.h).  Changes are coalesced: a run starts once no change
 * came for MCAST_QUIET_MS, or MCAST_DELAY_MS after the first change it
 * serves when they keep coming (the SA has answered by then; a boot
 * storm of joins makes one run, MCAST_QUIET_MS after its last join, so
 * its MFT writes do not compete with the answers; a stream that never
 * pauses, a run every MCAST_DELAY_MS or so); the run recomputes the trees of the groups that
 * changed since the last run (the others' trees are kept, struct
 * mcast_trees; all of them after a heavy sweep, a new model) and writes, through the executor and
 * the device cache, only the MFT blocks that differ.  While a sweep or a
 * VM's writes hold the loop, the run waits; a heavy sweep plans the MFT
 * blocks with the switches' tables itself (plan_sweep_switches), so the
 * run after it finds nothing left to write.  The loop is busy
 * (SM_MFT_WRITES) while the writes go, as during a sweep.
 */
#include "sm/mcast/mcast_sm.h"

#include <event2/event.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "routing/mctree.h"
#include "routing/verify/verify_mcast.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/write/plan_mcast.h"
#include "sm/write/program.h"
#include "sm/base/clock.h"
#include "sm/apply.h"

#define MCAST_DELAY_MS 100	/* from the first change to the run, at most */
#define MCAST_QUIET_MS 4	/* no change for this long: run */
#define MCAST_RETRY_MS 50	/* the loop is busy: look again */

struct mcast_sm {
	struct sm *sm;
	struct event *ev;
	struct plan plan;
	struct program *pr;
	int finished;		/* the executor is done: free from the loop */
	uint64_t gen;		/* the database gen the last run planned */
	uint64_t written;	/* ... the last run whose writes are over */
	struct program_stats st;
	struct mcast_plan_stats ps;
	struct mcast_trees kept;	/* the trees of the last run */
	const void *model;		/* ... computed on this model */
	uint32_t sweeps;		/* ... after this many heavy sweeps */
	int no_keep;			/* mcast_sm_keep_trees(0) */
	double first, last;		/* ms: first and last change the next run serves */
	double run_at;			/* ms: the last run started */
	struct mcast_sm_stats stats;
};

static void on_event(evutil_socket_t fd, short what, void *arg);

/* The timer for the next run: when changes stop, or MCAST_DELAY_MS after m->first. */
static void schedule(struct mcast_sm *m)
{
	double now = clock_ms_f();
	double quiet = m->last + MCAST_QUIET_MS - now;
	double cap = m->first + MCAST_DELAY_MS - now;
	double at = quiet < cap ? quiet : cap;
	struct timeval tv = { 0, at > 0 ? (long)(at * 1000) + 1 : 0 };
	event_add(m->ev, &tv);
}

static struct mcast_sm *get(struct sm *sm)
{
	if (!sm->mcsm) {
		struct mcast_sm *m = calloc(1, sizeof(*m));
		if (!m)
			return NULL;
		m->sm = sm;
		m->ev = evtimer_new(sm->base, on_event, m);
		if (!m->ev) {
			free(m);
			return NULL;
		}
		plan_init(&m->plan);
		sm->mcsm = m;
	}
	return sm->mcsm;
}

void mcast_sm_changed(struct sm *sm)
{
	if (!sm->base)
		return;		/* no loop (a unit test's SA): nothing to schedule */
	struct mcast_sm *m = get(sm);
	if (!m) {
		log_err("multicast: out of memory; the MFTs follow at the next heavy sweep");
		return;
	}
	m->last = clock_ms_f();
	if (!m->pr && !evtimer_pending(m->ev, NULL)) {
		m->first = m->last;
		schedule(m);
	}
}

static void on_done(void *arg, const struct program_stats *s)
{
	struct mcast_sm *m = arg;
	struct timeval zero = { 0, 0 };
	m->st = *s;
	m->finished = 1;
	event_add(m->ev, &zero);
}

/* The writes are over: the loop is free, and what changed meanwhile runs. */
static void finish(struct mcast_sm *m)
{
	struct sm *sm = m->sm;
	const struct program_stats *s = &m->st;
	if (s->mft_sets || s->failed)
		log_info("multicast: %u groups, %u MFT blocks written, %u held already, %u failed",
			 m->ps.groups, s->mft_sets, s->unchanged, s->failed);
	program_free(m->pr);
	m->pr = NULL;
	m->finished = 0;
	m->written = m->gen;
	plan_free(&m->plan);
	plan_init(&m->plan);
	if (s->failed)
		sweeper_request_heavy(sm, "multicast writes failed");
	if (sm->sw.activity == SM_MFT_WRITES)
		sweeper_resume(sm);
	if (m->gen != sm->mc.gen && !evtimer_pending(m->ev, NULL)) {
		m->first = m->run_at;	/* the changes came during the writes */
		schedule(m);
	}
}

/* The kept trees, forgotten when the model is not theirs. */
static struct mcast_trees *kept_trees(struct mcast_sm *m)
{
	struct sm *sm = m->sm;
	if (m->model != sm->sub.model || m->sweeps != sm->sweep.heavy_sweeps || m->no_keep) {
		mcast_trees_clear(&m->kept);
		m->model = sm->sub.model;
		m->sweeps = sm->sweep.heavy_sweeps;
	}
	return m->no_keep ? NULL : &m->kept;
}

static void run(struct mcast_sm *m)
{
	struct sm *sm = m->sm;
	struct program_params pp;
	if (sm->state != SMS_MASTER || !sm->sub.model || !sm->txn ||
	    !sm->sub.lft.n_sw)
		return;		/* the next heavy sweep plans them */
	if (sm->sw.activity != SM_IDLE || sm->vmexec) {
		timer_in_ms(m->ev, MCAST_RETRY_MS);
		return;
	}
	double now = clock_ms_f();
	if (now < m->last + MCAST_QUIET_MS && now < m->first + MCAST_DELAY_MS) {
		schedule(m);	/* changes still coming: wait for quiet or the cap */
		return;
	}
	m->run_at = now;
	sm_program_params(sm, 0, &pp);
	m->gen = sm->mc.gen;
	double t0 = clock_ms_f();
	if (plan_mcast_kept(&m->plan, 0, &sm->sub.model->f, sm->sub.cache,
			    &sm->sub.lft, &sm->mc, &sm->vms,
			    (const uint8_t (*)[SMP_DATA_SIZE])sm->sub.model->si_raw,
			    kept_trees(m), 0, &m->ps) < 0) {
		log_err("multicast: out of memory planning the MFTs");
		mcast_trees_clear(&m->kept);
		plan_free(&m->plan);
		plan_init(&m->plan);
		return;
	}
	plan_seal(&m->plan);
	m->stats.runs++;
	m->stats.plan_ms_last = clock_ms_f() - t0;
	m->stats.plan_ms_total += m->stats.plan_ms_last;
	m->stats.trees_computed += m->ps.computed;
	m->stats.last = m->ps;
	sm->sw.activity = SM_MFT_WRITES;
	m->pr = program_run(sm->txn, sm->sub.model, &m->plan, sm->sub.cache,
			    pp.extra_rounds, NULL, on_done, m);
	if (!m->pr) {
		log_err("multicast: out of memory starting the MFT writes");
		plan_free(&m->plan);
		plan_init(&m->plan);
		sweeper_resume(sm);
	}
}

static void on_event(evutil_socket_t fd, short what, void *arg)
{
	struct mcast_sm *m = arg;
	(void)fd;
	(void)what;
	if (m->pr) {
		if (m->finished)
			finish(m);
		return;
	}
	run(m);
}

int mcast_sm_pending(const struct sm *sm)
{
	const struct mcast_sm *m = sm->mcsm;
	return m && (m->pr || evtimer_pending(m->ev, NULL));
}

uint64_t mcast_sm_settled_gen(const struct sm *sm)
{
	/* nothing scheduled nor going: every change is in the MFTs (a run's or a sweep's) */
	return mcast_sm_pending(sm) ? sm->mcsm->written : sm->mc.gen;
}

const struct program_stats *mcast_sm_last(const struct sm *sm)
{
	return sm->mcsm ? &sm->mcsm->st : NULL;
}

const struct mcast_sm_stats *mcast_sm_stats(const struct sm *sm)
{
	return sm->mcsm ? &sm->mcsm->stats : NULL;
}

void mcast_sm_forget_trees(struct sm *sm)
{
	if (sm->mcsm)
		mcast_trees_clear(&sm->mcsm->kept);
}

void mcast_sm_forget_ports(struct sm *sm)
{
	if (sm->mcsm)
		mcast_trees_forget_ports(&sm->mcsm->kept);
}

int mcast_sm_keep_trees(struct sm *sm, int on)
{
	struct mcast_sm *m = get(sm);
	if (!m)
		return -1;
	m->no_keep = !on;
	return 0;
}

void mcast_to_ctl(const struct sm *sm, json_t *o)
{
	const struct mc_db *db = &sm->mc;
	uint16_t lowest;
	json_object_set_new(o, "multicast", json_pack("{s:I,s:I,s:I,s:{s:I,s:I}}",
		"groups", (json_int_t)db->n,
		"mlid_limit", (json_int_t)db->mlid_limit,
		"groups_without_tree", (json_int_t)mc_past_limit(db, &lowest),
		"creates_refused",
		"mlids", (json_int_t)db->refused_mlids,
		"per_port", (json_int_t)db->refused_port));
}

void mcast_sm_free(struct sm *sm)
{
	struct mcast_sm *m = sm->mcsm;
	if (!m)
		return;
	mcast_trees_free(&m->kept);
	program_free(m->pr);
	plan_free(&m->plan);
	event_free(m->ev);
	free(m);
	sm->mcsm = NULL;
}

/* One group's tree checked; 1 when it fails (the line printed). */
static int verify_group(const struct fabric *f, const struct lft_tables *t,
			const struct guid_map *gm, const struct mc_group *g,
			uint32_t *ports, uint64_t *mask, FILE *out)
{
	char why[256], mgid[40];
	uint32_t root, n = mcast_member_ports(gm, g, ports);
	if (mcast_tree(f, t, ports, n, mask, &root) < 0)
		return -1;
	int bad = mcast_verify(f, t, ports, n, mask, why, sizeof(why));
	if (bad > 0) {
		mc_mgid_str(g->mgid, mgid, sizeof(mgid));
		fprintf(out, "multicast group %s MLID 0x%04x: %s\n", mgid, g->mlid, why);
	}
	return bad;
}

int mcast_sm_verify(struct sm *sm, FILE *out)
{
	const struct fabric *f = &sm->sub.model->f;
	const struct lft_tables *t = &sm->sub.lft;
	struct guid_map gm;
	uint32_t most = 0, checked = 0;
	int failed = 0;
	for (uint32_t i = 0; i < sm->mc.n; i++)
		if (sm->mc.g[i] && sm->mc.g[i]->n_members > most)
			most = sm->mc.g[i]->n_members;
	if (mcast_port_map(f, &sm->vms, &gm) < 0)
		return -1;
	uint32_t *ports = calloc(most + 1, sizeof(*ports));
	uint64_t *mask = calloc((size_t)t->n_sw * MCAST_MASK_WORDS + 1, sizeof(*mask));
	for (uint32_t i = 0; ports && mask && i < sm->mc.n && failed >= 0; i++) {
		if (!sm->mc.g[i])
			continue;
		int r = verify_group(f, t, &gm, sm->mc.g[i], ports, mask, out);
		failed = r < 0 ? -1 : failed + r;
		checked++;
	}
	if (!ports || !mask)
		failed = -1;
	if (failed >= 0)
		fprintf(out, "multicast: %u groups checked, %d wrong\n", checked, failed);
	free(ports);
	free(mask);
	guid_map_free(&gm);
	return failed;
}
