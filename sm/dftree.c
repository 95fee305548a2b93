/*
 * dFtree's loop on the daemon (sm/dftree.h): the ports to read, their
 * GMPs through the performance manager's transaction table and its gate
 * (the SA first, perfmgr_pace()), the rates,
 * Algorithm 1's step (sm/perf/dftree_alg.c), and what its decisions
 * become: lane orders, the SA's hot-spot set, log lines, `ibsmctl
 * hotspots`, metrics.
 */
#include "sm/dftree.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/pma.h"
#include "mad/txn.h"
#include "sm/base/clock.h"
#include "sm/base/log.h"
#include "sm/base/nodemap.h"
#include "sm/ctl/control.h"
#include "sm/ctl/metrics.h"
#include "sm/daemon.h"
#include "sm/model/lanes.h"
#include "sm/perf/dftree_alg.h"
#include "sm/perf/pmcalc.h"
#include "sm/perf/portset.h"
#include "sm/perfmgr.h"
#include "traps/notice.h"
#include "traps/notify.h"

/* One port a round reads. */
struct dft_rd {
	struct portset_key key;	/* node GUID, port number */
	uint64_t ca_guid;	/* the CA port it is or faces: its port GUID */
	uint32_t lid;		/* its PMA's LID */
	uint32_t ca_lid;	/* the CA port's base LID */
	uint32_t node;		/* model node index: the per-agent window */
	uint8_t sw;		/* 1: a switch port facing a CA */
	uint8_t lmc;		/* the CA port's */
	double rate;		/* a CA port's link rate, octets/s */
	uint8_t got, want;	/* READ_* */
	uint64_t wait, data;	/* as read this round */
	uint64_t at_ms;		/* when this round's last read of it came in */
	uint64_t prev_wait, prev_data, prev_ms;
	uint8_t have_prev;
	char name[FAB_DESC_LEN + 1];
};
PORTSET_ELEMENT(struct dft_rd);
#define READ_PC		1
#define READ_EXT	2

struct dft_req {
	struct dftree *d;
	uint32_t i;
	uint8_t ext;
};

struct dftree {
	struct sm *sm;
	struct event *timer;
	int interval_s;		/* the timer's, 0: off */
	struct dft_rd *p;	/* sorted by (guid, port) */
	uint32_t n;
	struct dft_req *req;
	uint32_t n_req, fed, pending;	/* fed: req[] sent so far */
	int running;
	int closing;	/* freed by the daemon: the last pending answer frees it */
	uint64_t start_ms;
	uint64_t yielded_ms;	/* this round's time yielding to the SA */
	struct dft_state alg;
	/* the record */
	uint64_t rounds, gmps, repaths, unpaths, appeared, cleared;
	uint64_t last_ms;		/* the last round's, ask to decision */
	uint64_t last_yielded_ms;	/* of it, yielding to the SA */
	uint32_t last_read;
};

static void round_end(struct dftree *d);
static void feed(struct dftree *d);

static int mode_on(const struct sm *sm)
{
	return sm->cfg.cong_mode == CONG_DFTREE;
}

/*
 * One port of f to read into x, or 0: a switch port facing a CA port with
 * a LID, or a CA port with a LID.  x is the next free slot: a port refused
 * leaves it to the next one considered, so it starts cleared (a switch
 * port refused after being marked one must not make the next CA port a
 * switch port).
 */
static int wanted(const struct fabric *f, uint32_t pi, struct dft_rd *x)
{
	memset(x, 0, sizeof(*x));
	const struct fab_port *fp = &f->ports[pi];
	const struct fab_node *nd = &f->nodes[fp->node];
	if (fp->num == 0 || fp->remote == FAB_NONE)
		return 0;
	const struct fab_port *r = &f->ports[fp->remote];
	const struct fab_port *ca;
	if (nd->type == FAB_SWITCH && f->nodes[r->node].type == FAB_CA) {
		x->sw = 1;
		x->lid = f->ports[nd->first_port].lid;
		ca = r;
	} else if (nd->type == FAB_CA) {
		x->lid = fp->lid;
		ca = fp;
	} else {
		return 0;
	}
	if (!x->lid || !ca->lid || fabric_is_vlid(ca->lid) || (ca->flags & FPORT_NOLID))
		return 0;
	x->ca_lid = ca->lid;
	x->ca_guid = ca->guid ? ca->guid : f->nodes[ca->node].guid;
	x->lmc = fabric_port_lmc(f, (uint32_t)(ca - f->ports));
	x->rate = dft_link_rate(fp->width_active, fp->speed_active);
	x->key.guid = nd->guid;
	x->key.port = fp->num;
	x->node = fp->node;
	snprintf(x->name, sizeof(x->name), "%s", fabric_node_name(f, fp->node));
	return 1;
}

/* The last round's values of the same port, while it faces the same CA
 * port LID. */
static void carry_rd(void *now, const void *prev)
{
	struct dft_rd *x = now;
	const struct dft_rd *o = prev;
	if (o->have_prev && o->ca_lid == x->ca_lid) {
		x->prev_wait = o->prev_wait;
		x->prev_data = o->prev_data;
		x->prev_ms = o->prev_ms;
		x->have_prev = 1;
	}
}

/* The ports of f to read, the previous values carried over by key. */
static int snapshot(struct dftree *d, const struct fabric *f)
{
	struct dft_rd *p = calloc(f->n_ports ? f->n_ports : 1, sizeof(*p));
	if (!p)
		return -1;
	uint32_t n = 0;
	for (uint32_t pi = 0; pi < f->n_ports; pi++)
		n += (uint32_t)wanted(f, pi, &p[n]);
	portset_sort(p, n, sizeof(*p));
	portset_carry(p, n, d->p, d->n, sizeof(*p), carry_rd);
	free(d->p);
	d->p = p;
	d->n = n;
	return 0;
}

static void free_rest(struct dftree *d)
{
	free(d->p);
	free(d->req);
	free(d);
}

static void on_answer(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct dft_req *q = arg;
	struct dftree *d = q->d;
	if (d->closing) {	/* the engine cancelling what a freed loop asked */
		if (--d->pending == 0)
			free_rest(d);
		return;
	}
	if (status == 0) {
		struct dft_rd *x = &d->p[q->i];
		struct pma_sample s;
		char err[128];
		memset(&s, 0, sizeof(s));
		if (!q->ext && pma_pc_decode(resp, len, x->key.port, &s, err, sizeof(err)) == 0) {
			x->wait = s.v[PMC_XMIT_WAIT];
			x->got |= READ_PC;
		} else if (q->ext &&
			   pma_ext_decode_sample(resp, len, x->key.port, &s, err, sizeof(err)) == 0) {
			x->data = s.v[PMC_XMIT_DATA];
			x->got |= READ_EXT;
		}
		if (x->got == x->want)
			x->at_ms = clock_ms();
	}
	feed(d);
	if (--d->pending == 0)
		round_end(d);
}

/* A read to make: counted as pending now, sent by feed(). */
static void enqueue(struct dftree *d, uint32_t i, int ext)
{
	d->req[d->n_req++] = (struct dft_req){ d, i, (uint8_t)ext };
	d->p[i].want |= ext ? READ_EXT : READ_PC;
	d->pending++;
}

/*
 * Sends what is queued while the performance manager's gate has room (fed
 * again at every answer and tick).  A read the table refuses is a failed
 * one; once not MASTER the rest is not ours to ask.  The caller holds a
 * pending count, so the round cannot end in here.
 */
static void feed(struct dftree *d)
{
	if (d->sm->state != SMS_MASTER) {
		d->pending -= d->n_req - d->fed;
		d->fed = d->n_req;
		return;
	}
	while (d->fed < d->n_req) {
		struct dft_req *q = &d->req[d->fed];
		const struct dft_rd *x = &d->p[q->i];
		uint8_t mad[MAD_SIZE];
		struct mad_addr to;
		if (q->ext)
			pma_ext_get(mad, x->key.port, x->lid, &to);
		else
			pma_pc_get(mad, x->key.port, x->lid, &to);
		int r = perfmgr_send(d->sm, mad, &to, x->node, on_answer, q);
		if (r == 0)
			return;
		d->fed++;
		if (r > 0)
			d->gmps++;
		else
			d->pending--;
	}
}

/* The performance manager's tick: the gate's budget renewed. */
static void on_tick(void *arg, unsigned yielded_ms)
{
	struct dftree *d = arg;
	d->yielded_ms += yielded_ms;
	d->pending++;
	feed(d);
	if (--d->pending == 0)
		round_end(d);
}

static int round_start(struct dftree *d)
{
	struct sm *sm = d->sm;
	if (d->running || sm->state != SMS_MASTER || !sm->sub.model ||
	    !perfmgr_engine(sm))
		return -1;
	if (snapshot(d, &sm->sub.model->f) < 0)
		return -1;
	free(d->req);
	d->n_req = 0;
	d->req = calloc(2 * (size_t)d->n + 1, sizeof(*d->req));
	if (!d->req)
		return -1;
	if (perfmgr_pace(sm, on_tick, d) < 0)
		return -1;
	d->running = 1;
	d->start_ms = clock_ms();
	d->yielded_ms = 0;
	d->fed = 0;
	d->pending = 1;		/* held until every read is fed */
	for (uint32_t i = 0; i < d->n; i++) {
		enqueue(d, i, 0);
		if (!d->p[i].sw)
			enqueue(d, i, 1);	/* PortXmitData, 64-bit */
	}
	feed(d);
	if (--d->pending == 0)
		round_end(d);
	return 0;
}

/* ---- a round's decisions ---- */

static void sm_gid(const struct sm *sm, uint8_t gid[16])
{
	for (int i = 0; i < 8; i++) {
		gid[i] = (uint8_t)(sm->cfg.subnet_prefix >> (56 - 8 * i));
		gid[8 + i] = (uint8_t)(sm->tr.port_guid >> (56 - 8 * i));
	}
}

static const struct dft_rd *ca_of(const struct dftree *d, uint64_t ca_guid)
{
	for (uint32_t i = 0; i < d->n; i++)
		if (!d->p[i].sw && d->p[i].ca_guid == ca_guid)
			return &d->p[i];
	return NULL;
}

static void send_notices(struct dftree *d, const struct dft_actions *a)
{
	struct sm *sm = d->sm;
	uint8_t gid[16];
	sm_gid(sm, gid);
	for (size_t k = 0; k < a->n_notice; k++) {
		const struct dft_notice *n = &a->notice[k];
		const struct dft_rd *hot = ca_of(d, n->hot_guid);
		struct notice nt;
		struct notice_lane l = {
			.slid = n->to_lid, .dlid = n->hot_lid,
			.lmc = hot ? hot->lmc : 0, .sl = n->sl,
		};
		notice_lane(&nt, (uint16_t)n->kind, (uint16_t)sm->sub.sm_lid, gid, &l);
		int r = sm->notify ? notifier_publish_to(sm->notify, n->to_lid, &nt,
							 n->hot_lid) : 0;
		if (n->kind == DFT_REPATH)
			d->repaths++;
		else
			d->unpaths++;
		log_info("dftree: %s to LID %u: LID %u%s now on SL %u (%d Report%s queued)",
			 n->kind == DFT_REPATH ? "repath" : "unpath", n->to_lid, n->hot_lid,
			 n->kind == DFT_REPATH ? ", a hot-spot," : "", n->sl, r, r == 1 ? "" : "s");
	}
}

static void log_events(struct dftree *d, const struct dft_actions *a)
{
	for (size_t k = 0; k < a->n_event; k++) {
		const struct dft_event *e = &a->event[k];
		const struct dft_rd *x = ca_of(d, e->guid);
		const char *name = x ? x->name : "?";
		if (e->kind == DFT_APPEARED) {
			d->appeared++;
			lanes_set_hot(&d->sm->sub.lanes, e->lid, 1);
			log_notice("dftree: hot-spot %s (LID %u, 0x%016" PRIx64 "): %.0f PortXmitWait "
				   "ticks/s at its switch port; %zu contributor%s to the slow lane",
				   name, e->lid, e->guid, e->congestion, e->n_contrib,
				   e->n_contrib == 1 ? "" : "s");
		} else {
			d->cleared++;
			lanes_set_hot(&d->sm->sub.lanes, e->lid, 0);
			log_notice("dftree: hot-spot %s (LID %u) %s; %zu contributor%s back to the fast lane",
				   name, e->lid, e->kind == DFT_CLEARED ? "cleared" : "gone from the fabric",
				   e->n_contrib, e->n_contrib == 1 ? "" : "s");
		}
	}
}

/*
 * The rates of the ports read twice (each over the time between its own
 * reads: a round that yields to the SA reads its ports over seconds),
 * Algorithm 1's step, its actions.
 */
static void decide(struct dftree *d)
{
	const struct config *c = &d->sm->cfg;
	struct dft_sw_port *sw = calloc(d->n + 1, sizeof(*sw));
	struct dft_ca_port *ca = calloc(d->n + 1, sizeof(*ca));
	size_t n_sw = 0, n_ca = 0;
	if (!sw || !ca) {
		free(sw);
		free(ca);
		log_limited(LOG_ERROR, "dftree: out of memory; this round decides nothing");
		return;
	}
	for (uint32_t i = 0; i < d->n; i++) {
		struct dft_rd *x = &d->p[i];
		int full = (x->got & READ_PC) && (x->sw || (x->got & READ_EXT));
		if (!full)
			continue;
		uint64_t now = x->at_ms;
		if (x->have_prev && now > x->prev_ms) {
			enum pm_step how;
			uint64_t dw = pmcalc_delta(x->prev_wait, x->wait, 32, &how);
			uint64_t dd = x->sw ? 0 : pmcalc_delta(x->prev_data, x->data, 64, &how);
			struct dft_rates r;
			double secs = (double)(now - x->prev_ms) / 1000.0;
			if (x->sw && dft_port_rates(dw, 0, secs, 1, &r) == 0)
				sw[n_sw++] = (struct dft_sw_port){ x->ca_guid, (uint16_t)x->ca_lid,
								   r.congestion };
			else if (!x->sw && dft_port_rates(dw, dd, secs, x->rate, &r) == 0)
				ca[n_ca++] = (struct dft_ca_port){ x->ca_guid, (uint16_t)x->ca_lid,
								   r.congestion, r.utilisation };
		}
		x->prev_wait = x->wait;
		x->prev_data = x->data;
		x->prev_ms = now;
		x->have_prev = 1;
		d->last_read++;
	}
	const struct dft_input in = { sw, n_sw, ca, n_ca };
	const struct dft_params p = {
		.threshold = (double)c->cong_threshold,
		.utilisation = c->cong_utilisation,
		.fast_sl = (uint8_t)c->cong_fast_sl,
		.slow_sl = (uint8_t)c->cong_slow_sl,
	};
	struct dft_actions a;
	memset(&a, 0, sizeof(a));
	uint64_t wall = (uint64_t)time(NULL) * 1000;
	if (dft_step(&d->alg, &in, &p, wall, &a) < 0)
		log_limited(LOG_ERROR, "dftree: Algorithm 1's step failed: %s",
			    errno == EINVAL ? "a port read twice or a parameter out of range" :
			    "out of memory");
	log_events(d, &a);
	send_notices(d, &a);
	dft_actions_free(&a);
	free(sw);
	free(ca);
}

static void round_end(struct dftree *d)
{
	d->running = 0;
	d->last_read = 0;
	perfmgr_unpace(d->sm, d);
	if (d->sm->state == SMS_MASTER && mode_on(d->sm))
		decide(d);
	d->rounds++;
	d->last_ms = clock_ms() - d->start_ms;
	d->last_yielded_ms = d->yielded_ms;
}

static void on_interval(evutil_socket_t fd, short what, void *arg)
{
	struct dftree *d = arg;
	if (d->interval_s <= 0)
		return;
	timer_in_ms(d->timer, (uint64_t)d->interval_s * 1000);
	round_start(d);
}

/* ---- life ---- */

int dftree_init(struct sm *sm)
{
	struct dftree *d = calloc(1, sizeof(*d));
	if (!d)
		return -1;
	d->sm = sm;
	d->timer = evtimer_new(sm->base, on_interval, d);
	if (!d->timer) {
		free(d);
		return -1;
	}
	dft_state_init(&d->alg);
	sm->dft = d;
	return 0;
}

void dftree_free(struct sm *sm)
{
	struct dftree *d = sm->dft;
	if (!d)
		return;
	event_free(d->timer);
	dft_state_free(&d->alg);
	sm->dft = NULL;
	perfmgr_unpace(sm, d);
	d->pending -= d->n_req - d->fed;	/* never sent */
	d->fed = d->n_req;
	/* GMPs in flight: the performance manager's engine answers them
	 * (perfmgr_free cancels them all), the last answer frees the rest */
	if (d->pending) {
		d->closing = 1;
		return;
	}
	free_rest(d);
}

/* Every hot-spot cleared, its contributors told (the mode went off). */
static void clear_all(struct dftree *d)
{
	const struct dft_input none = { NULL, 0, NULL, 0 };
	const struct config *c = &d->sm->cfg;
	const struct dft_params p = { 1, 1, (uint8_t)c->cong_fast_sl, (uint8_t)c->cong_slow_sl };
	struct dft_actions a;
	memset(&a, 0, sizeof(a));
	if (d->alg.n_hot && dft_step(&d->alg, &none, &p, (uint64_t)time(NULL) * 1000, &a) == 0) {
		log_events(d, &a);
		send_notices(d, &a);
	}
	dft_actions_free(&a);
}

void dftree_reconfigure(struct sm *sm)
{
	struct dftree *d = sm->dft;
	if (!d)
		return;
	int s = mode_on(sm) && sm->state == SMS_MASTER ? sm->cfg.cong_interval_s : 0;
	if (!mode_on(sm))
		clear_all(d);
	if (s == d->interval_s && (s == 0 || evtimer_pending(d->timer, NULL)))
		return;
	d->interval_s = s;
	event_del(d->timer);
	if (s > 0)
		timer_in_ms(d->timer, (uint64_t)s * 1000);
}

/* ---- what it shows ---- */

json_t *dftree_ctl(struct sm *sm, const json_t *req, char *err, size_t errlen)
{
	const struct dftree *d = sm->dft;
	if (!mode_on(sm)) {
		snprintf(err, errlen, "hotspots: congestion.mode is not dftree");
		return NULL;
	}
	json_t *a = json_array();
	for (size_t i = 0; d && i < d->alg.n_hot; i++) {
		const struct dft_hotspot *h = &d->alg.hot[i];
		const struct dft_rd *x = ca_of(d, h->guid);
		json_t *c = json_array();
		for (size_t k = 0; k < h->n_contrib; k++) {
			const struct dft_rd *y = ca_of(d, h->contrib[k].guid);
			json_array_append_new(c, json_pack("{s:i, s:o, s:s, s:o}",
				"lid", h->contrib[k].lid, "guid", control_guid_json(h->contrib[k].guid),
				"node", y ? y->name : "?",
				"since", control_time_json(h->contrib[k].since / 1000)));
		}
		json_array_append_new(a, json_pack("{s:i, s:o, s:s, s:o, s:o}",
			"lid", h->lid, "guid", control_guid_json(h->guid), "node", x ? x->name : "?",
			"since", control_time_json(h->since / 1000), "contributors", c));
	}
	return json_pack("{s:o}", "hotspots", a);
}

json_t *dftree_to_ctl(const struct sm *sm)
{
	const struct dftree *d = sm->dft;
	if (!d || !mode_on(sm))
		return json_null();
	json_t *list = json_array();
	for (size_t i = 0; i < d->alg.n_hot; i++) {
		const struct dft_hotspot *h = &d->alg.hot[i];
		const struct dft_rd *x = ca_of(d, h->guid);
		json_array_append_new(list, json_pack("{s:i, s:s, s:o, s:I}", "lid", h->lid,
			"node", x ? x->name : "?", "since", control_time_json(h->since / 1000),
			"contributors", (json_int_t)h->n_contrib));
	}
	json_t *o = json_pack("{s:s, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			 "mode", "dftree", "interval_s", sm->cfg.cong_interval_s,
			 "rounds", (json_int_t)d->rounds, "gmps", (json_int_t)d->gmps,
			 "last_ms", (json_int_t)d->last_ms,
			 "yielded_ms", (json_int_t)d->last_yielded_ms,
			 "hotspots", (json_int_t)d->alg.n_hot,
			 "appeared", (json_int_t)d->appeared, "cleared", (json_int_t)d->cleared,
			 "repaths", (json_int_t)d->repaths, "unpaths", (json_int_t)d->unpaths);
	json_object_set_new(o, "list", list);
	return o;
}

void dftree_metrics(const struct sm *sm, struct mtext *t)
{
	const struct dftree *d = sm->dft;
	if (!d || !mode_on(sm))
		return;
	mtext_family(t, "ibsmd_hotspots", "gauge",
		     "End-point hot-spots whose contributors are on the slow lane (dFtree)");
	mtext_sample(t, "ibsmd_hotspots", NULL, NULL, (double)d->alg.n_hot);
	mtext_family(t, "ibsmd_dftree_rounds_total", "counter",
		     "dFtree rounds of counter reads and decisions");
	mtext_sample(t, "ibsmd_dftree_rounds_total", NULL, NULL, (double)d->rounds);
	mtext_family(t, "ibsmd_lane_orders_total", "counter",
		     "Lane orders sent to contributors, by trap (69: slow lane, 68: fast lane)");
	mtext_sample(t, "ibsmd_lane_orders_total", "trap", "69", (double)d->repaths);
	mtext_sample(t, "ibsmd_lane_orders_total", "trap", "68", (double)d->unpaths);
}
