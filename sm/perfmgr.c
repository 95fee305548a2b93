/*
 * The performance manager on the loop (sm/perfmgr.h): the ports to read,
 * the GMPs through its own transaction table, the verdicts, what the
 * log, the event hook, the control socket and /metrics get.  The
 * arithmetic is sm/perf/pmcalc.c's, the codec mad/pma.c's.
 */
#include "sm/perfmgr.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/dispatch.h"
#include "mad/pma.h"
#include "mad/txn.h"
#include "sm/base/clock.h"
#include "sm/base/log.h"
#include "sm/base/nodemap.h"
#include "sm/ctl/control.h"
#include "sm/ctl/metrics.h"
#include "sm/daemon.h"
#include "sm/hookevents.h"
#include "sm/perf/baseline.h"
#include "sm/perf/pmcalc.h"
#include "sm/perf/portset.h"

/* The first sweep after a configuration: soon, not a whole interval on. */
#define PM_FIRST_SWEEP_MS 1000
/*
 * The SA comes first: while the receive path hands requests to their
 * handlers (SA queries above all) at more than PM_BUSY_REQUESTS per
 * PM_PACE_MS (1,000 a second), a sweep keeps PM_WINDOW_BUSY GMPs in
 * flight and sends at most PM_BUSY_GMPS a tick, so an SA request waits
 * behind at most one of them and the PM takes a few percent of what the
 * fabric and the SM's loop carry; the configured window comes back after
 * PM_QUIET_TICKS quiet ticks in a row (a loaded machine's timers bunch an
 * SA client's bursts, so one quiet tick says little).  Until its first
 * tick has measured the load, a sweep (or a guest's round) starts as if
 * yielding, so a burst cannot go out in front of a busy SA; that first
 * measurement alone decides.  A sweep under a steady SA load is slower (a 3456-host
 * tree's 41,472 GMPs: some 40 s), never stopped.  Another owner's GMPs on
 * the same table (dFtree's rounds, perfmgr_pace()) pass the same gate:
 * one window, one tick budget for both.
 */
#define PM_PACE_MS 10
#define PM_BUSY_REQUESTS 10
#define PM_WINDOW_BUSY 1
#define PM_BUSY_GMPS 10		/* a tick's GMPs while yielding: 1,000 a second */
#define PM_QUIET_TICKS 5	/* quiet ticks in a row that end yielding: 50 ms */
/* Ports named in one log line of a sweep's summary. */
#define PM_TRANSITION_BURST 20

enum pm_cpi { CPI_UNKNOWN, CPI_ASKING, CPI_KNOWN, CPI_NONE };

struct pm_node {		/* one PMA */
	uint64_t guid;
	uint32_t lid;		/* where it is asked: a switch's port 0, a
				   CA's first port with a LID */
	uint32_t first, n;	/* its ports in targets[] */
	uint32_t model;		/* node index in the model read last */
	uint16_t capmask;
	uint8_t cpi;		/* enum pm_cpi */
	uint8_t type;
};

struct pm_target {		/* one port */
	struct portset_key key;	/* node GUID, port number */
	uint64_t port_guid;
	uint64_t remote_guid;
	uint32_t lid;		/* its PMA's LID */
	uint32_t node;		/* in nodes[] */
	uint8_t remote_port, type;
	uint8_t cleared;	/* the SM cleared it after the last read */
	uint8_t unhealthy;	/* at the last verdict */
	uint8_t one_sided;	/* symbol errors on this side only */
	uint64_t since;		/* wall clock: unhealthy since */
	char name[FAB_DESC_LEN + 1], remote_name[FAB_DESC_LEN + 1];
	struct pm_port calc;
	struct pm_verdict v;
};
PORTSET_ELEMENT(struct pm_target);

/* One sweep's reads in flight: per target, the two answers. */
struct pm_read {
	struct pma_sample pc, ext;
	uint8_t got;		/* READ_*: answered */
};
#define READ_PC		1
#define READ_EXT	2

enum pm_req_kind { REQ_CPI, REQ_PC, REQ_EXT, REQ_CLEAR };
struct pm_req {
	struct perfmgr *pm;
	uint32_t i;		/* node (REQ_CPI) or target */
	uint8_t kind;
};

struct pm_stats {
	uint64_t sweeps, gmps, timeouts, errors, clears;
	uint64_t yielded_ms;		/* the last sweep's time at PM_WINDOW_BUSY */
	uint64_t last_start;	/* wall clock */
	uint64_t last_ms;
	uint32_t last_ports, last_read, last_gmps, last_failed;
	uint32_t unhealthy, flapping, hot;
	uint64_t turned_unhealthy, recovered;
};

struct perfmgr {
	struct sm *sm;
	struct baseline_watch base;	/* STATE_DIR/baseline as last read */
	struct txn_engine *txn;
	struct event *timer;		/* the interval */
	struct event *txn_timer;	/* the transaction table's deadlines */
	struct event *pace;		/* PM_PACE_MS while sweeping or a guest paced */
	uint64_t handled_prev;		/* the receive path's requests at the last tick */
	int yielding;			/* the window is PM_WINDOW_BUSY */
	int probing;			/* yielding until the first tick measures */
	uint32_t quiet;			/* quiet ticks in a row */
	uint32_t budget;		/* GMPs still to send this tick, yielding */
	uint32_t fed;			/* req[] sent so far */
	void (*guest)(void *, unsigned);	/* perfmgr_pace()'s, NULL: none */
	void *guest_arg;
	struct pm_node *nodes;
	uint32_t n_nodes;
	struct pm_target *t;		/* sorted by (node GUID, port) */
	uint32_t n;
	/* the sweep under way */
	int running;
	int taken;			/* its answers taken (clears may follow) */
	struct pm_read *rd;
	struct pm_req *req;
	uint32_t n_req, pending;
	uint64_t start_ms, gmps_base;
	uint64_t *waiters;		/* ibsmctl perfmgr sweep replies due */
	uint32_t n_waiters;
	struct pm_thresholds thr;
	void (*redraw)(void *);		/* the picture, when hot links change */
	void *redraw_arg;
	int interval_s;			/* the interval the timer runs with */
	struct pm_stats st;
	struct log_rl rl_turn;
};

static void sweep_end(struct perfmgr *pm);
static void submit_reads(struct perfmgr *pm, uint32_t ti);
static void engine_params(const struct sm *sm, struct txn_params *tp);

static uint64_t clock_cb(void *arg)
{
	(void)arg;
	return clock_ms();
}

static void on_txn_timer(evutil_socket_t fd, short what, void *arg)
{
	struct perfmgr *pm = arg;
	txn_expire(pm->txn);
}

static void arm_txn(void *arg, int64_t deadline)
{
	struct perfmgr *pm = arg;
	if (deadline < 0) {
		event_del(pm->txn_timer);
		return;
	}
	uint64_t now = clock_ms();
	timer_in_ms(pm->txn_timer, (uint64_t)deadline > now ? (uint64_t)deadline - now : 0);
}

static void thresholds_in_force(struct perfmgr *pm)
{
	pm_thresholds_default(&pm->thr);
	for (int c = 0; c < PMC_N; c++)
		if (pm->sm->cfg.pm_threshold[c] != CFG_PM_DEFAULT)
			pm->thr.per_hour[c] = pm->sm->cfg.pm_threshold[c];
}

/* ---- the ports to read ---- */

static struct pm_target *find_target(const struct perfmgr *pm, uint64_t guid,
				     uint8_t port)
{
	return portset_find(pm->t, pm->n, sizeof(*pm->t), guid, port);
}

/*
 * A port worth reading: a switch's cabled external port, or a CA's port
 * with a LID (its PMA answers there).  Port 0 of a switch carries no
 * link; a down port's counters do not move.
 */
static int readable(const struct fabric *f, uint32_t pi, uint32_t *lid)
{
	const struct fab_port *p = &f->ports[pi];
	const struct fab_node *nd = &f->nodes[p->node];
	if (!(p->flags & FPORT_PRESENT) || p->num == 0)
		return 0;
	if (nd->type == FAB_SWITCH) {
		*lid = f->ports[nd->first_port].lid;
		return *lid && fabric_port_linked(f, pi);
	}
	*lid = p->lid;
	return p->lid && !(p->flags & FPORT_NOLID) && !fabric_is_vlid(p->lid);
}

/* A target's history from the last sweep's target of the same port. */
static void carry_target(void *now, const void *prev)
{
	struct pm_target *x = now;
	const struct pm_target *old = prev;
	x->calc = old->calc;
	x->v = old->v;
	x->cleared = old->cleared;
	x->unhealthy = old->unhealthy;
	x->since = old->since;
}

/*
 * The targets of the model now, their history carried over from the
 * last sweep's by key (ports the model lost are dropped), and the PMAs
 * they belong to (ClassPortInfo kept likewise).  0, or -1 on ENOMEM
 * (the previous lists kept).
 */
static int snapshot(struct perfmgr *pm, const struct fabric *f)
{
	struct pm_target *t = calloc(f->n_ports ? f->n_ports : 1, sizeof(*t));
	struct pm_node *nodes = calloc(f->n_nodes ? f->n_nodes : 1, sizeof(*nodes));
	if (!t || !nodes) {
		free(t);
		free(nodes);
		return -1;
	}
	uint32_t n = 0;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		uint32_t lid;
		if (!readable(f, pi, &lid))
			continue;
		const struct fab_port *p = &f->ports[pi];
		const struct fab_node *nd = &f->nodes[p->node];
		struct pm_target *x = &t[n++];
		x->key.guid = nd->guid;
		x->port_guid = p->guid ? p->guid : nd->guid;
		x->key.port = p->num;
		x->type = nd->type;
		x->lid = lid;
		x->node = p->node;	/* the model's index until the nodes are made */
		snprintf(x->name, sizeof(x->name), "%s", fabric_node_name(f, p->node));
		if (p->remote != FAB_NONE) {
			const struct fab_port *r = &f->ports[p->remote];
			x->remote_guid = f->nodes[r->node].guid;
			x->remote_port = r->num;
			snprintf(x->remote_name, sizeof(x->remote_name), "%s",
				 fabric_node_name(f, r->node));
		}
	}
	portset_sort(t, n, sizeof(*t));
	portset_carry(t, n, pm->t, pm->n, sizeof(*t), carry_target);
	uint32_t nn = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct pm_target *x = &t[i];
		if (!nn || nodes[nn - 1].guid != x->key.guid) {
			struct pm_node *d = &nodes[nn++];
			d->guid = x->key.guid;
			d->model = x->node;
			d->type = x->type;
			d->lid = x->lid;
			d->first = i;
		}
		nodes[nn - 1].n++;
		x->node = nn - 1;
	}
	/* ClassPortInfo carried over: both lists are sorted by GUID */
	uint32_t k = 0;
	for (uint32_t i = 0; i < nn && k < pm->n_nodes; i++) {
		while (k < pm->n_nodes && pm->nodes[k].guid < nodes[i].guid)
			k++;
		if (k < pm->n_nodes && pm->nodes[k].guid == nodes[i].guid &&
		    pm->nodes[k].cpi != CPI_ASKING) {
			nodes[i].cpi = pm->nodes[k].cpi;
			nodes[i].capmask = pm->nodes[k].capmask;
		}
	}
	free(pm->t);
	free(pm->nodes);
	pm->t = t;
	pm->n = n;
	pm->nodes = nodes;
	pm->n_nodes = nn;
	return 0;
}

/* ---- the GMPs ---- */

static void feed(struct perfmgr *pm);

static void on_answer(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct pm_req *q = arg;
	struct perfmgr *pm = q->pm;
	char err[128] = "";
	if (status == TXN_CANCELLED) {
		if (--pm->pending == 0)
			sweep_end(pm);
		return;
	}
	if (status == TXN_TIMEOUT)
		pm->st.timeouts++;
	else if (status)
		pm->st.errors++;
	if (q->kind == REQ_CPI) {
		struct pm_node *d = &pm->nodes[q->i];
		struct pma_cpi cpi;
		if (status == 0 && pma_cpi_decode(resp, len, &cpi, err, sizeof(err)) == 0) {
			d->cpi = CPI_KNOWN;
			d->capmask = cpi.capmask;
		} else {
			/* no ClassPortInfo: PortCounters alone, asked again next sweep */
			d->cpi = CPI_NONE;
			d->capmask = 0;
			log_debug("perfmgr: no ClassPortInfo from 0x%016" PRIx64 " (LID %u): %s",
				  d->guid, d->lid, status ? "no answer" : err);
		}
		for (uint32_t k = 0; k < d->n; k++)
			submit_reads(pm, d->first + k);
	} else if (q->kind == REQ_CLEAR) {
		struct pm_target *x = &pm->t[q->i];
		struct pma_sample s;
		if (status == 0 && pma_pc_decode(resp, len, x->key.port, &s, err, sizeof(err)) == 0) {
			x->cleared = 1;
			pm->st.clears++;
		}
	} else {
		struct pm_target *x = &pm->t[q->i];
		struct pm_read *r = &pm->rd[q->i];
		int rc = -1;
		if (status == 0)
			rc = q->kind == REQ_PC ?
				pma_pc_decode(resp, len, x->key.port, &r->pc, err, sizeof(err)) :
				pma_ext_decode_sample(resp, len, x->key.port, &r->ext, err, sizeof(err));
		if (rc == 0)
			r->got |= q->kind == REQ_PC ? READ_PC : READ_EXT;
		else
			log_debug("perfmgr: no %s from %s port %u (LID %u): %s",
				  q->kind == REQ_PC ? "PortCounters" : "PortCountersExtended",
				  x->name, x->key.port, x->lid, status ? "no answer" : err);
	}
	feed(pm);
	if (--pm->pending == 0)
		sweep_end(pm);
}

/*
 * A request to make: counted as pending now, sent by feed() (at once, or
 * a few per PM_PACE_MS while the sweep yields to the SA).
 */
static void enqueue(struct perfmgr *pm, uint8_t kind, uint32_t i)
{
	if (pm->n_req >= (uint32_t)(pm->n * 3 + pm->n_nodes))
		return;		/* cannot happen: one of each kind at most */
	pm->req[pm->n_req++] = (struct pm_req){ pm, i, kind };
	pm->pending++;
}

/* The GMP of q into mad, its address and its agent's index. */
static uint32_t build(const struct perfmgr *pm, const struct pm_req *q,
		      uint8_t *mad, struct mad_addr *to)
{
	if (q->kind == REQ_CPI) {
		pma_cpi_get(mad, pm->nodes[q->i].lid, to);
		return q->i;
	}
	const struct pm_target *x = &pm->t[q->i];
	if (q->kind == REQ_PC)
		pma_pc_get(mad, x->key.port, x->lid, to);
	else if (q->kind == REQ_EXT)
		pma_ext_get(mad, x->key.port, x->lid, to);
	else	/* REQ_CLEAR: the extended counters are kept where they are read */
		pma_pc_clear(mad, x->key.port, (pm->rd[q->i].got & READ_EXT) ?
			     PMA_PC_SELECT_ERRORS : PMA_PC_SELECT_ALL, x->lid, to);
	return x->node;
}

/*
 * The gate every GMP of the table passes: room in the window (PM_WINDOW_BUSY
 * while yielding to the SA) and, while yielding, in the tick's budget.
 */
static int gate_open(const struct perfmgr *pm)
{
	uint32_t window = pm->yielding ? PM_WINDOW_BUSY : (uint32_t)pm->sm->cfg.pm_window;
	return (!pm->yielding || pm->budget > 0) &&
	       txn_inflight(pm->txn) + txn_queued(pm->txn) < window;
}

/* Through an open gate: 0, or -1 when the table refuses it (no memory). */
static int gate_send(struct perfmgr *pm, const uint8_t *mad, const struct mad_addr *to,
		     uint32_t dest, txn_done_fn cb, void *arg)
{
	if (pm->yielding)
		pm->budget--;
	return txn_submit(pm->txn, mad, MAD_SIZE, to, dest, cb, arg) == 0 ? 0 : -1;
}

/*
 * Sends what is queued, a window's worth in flight at a time (fed again
 * at every answer), and while yielding at most PM_BUSY_GMPS a tick.  A
 * request the table refuses (no memory) is a failed read.  The caller
 * holds a pending count, so the sweep cannot end in here.
 */
static void feed(struct perfmgr *pm)
{
	if (pm->sm->state != SMS_MASTER) {	/* the rest is not ours to ask */
		pm->pending -= pm->n_req - pm->fed;
		pm->fed = pm->n_req;
		return;
	}
	while (pm->fed < pm->n_req && gate_open(pm)) {
		struct pm_req *q = &pm->req[pm->fed++];
		uint8_t mad[MAD_SIZE];
		struct mad_addr to;
		uint32_t dest = build(pm, q, mad, &to);
		if (gate_send(pm, mad, &to, dest, on_answer, q) == 0)
			continue;
		pm->st.errors++;
		pm->pending--;
		if (q->kind == REQ_CPI)
			pm->nodes[q->i].cpi = CPI_NONE;	/* its ports unread */
	}
}

static void submit_reads(struct perfmgr *pm, uint32_t ti)
{
	const struct pm_target *x = &pm->t[ti];
	enqueue(pm, REQ_PC, ti);
	if (pm->nodes[x->node].capmask & (PMA_CAP_EXT_WIDTH | PMA_CAP_EXT_WIDTH_NOIETF))
		enqueue(pm, REQ_EXT, ti);
}

/* Both answers of a target in: the sample, the clear if due, the update. */
static void take_reads(struct perfmgr *pm, uint32_t ti, uint64_t now)
{
	struct pm_target *x = &pm->t[ti];
	struct pm_read *r = &pm->rd[ti];
	if (!(r->got & READ_PC))
		return;		/* no error counters: nothing judged this time */
	struct pma_sample s = r->pc;
	if (r->got & READ_EXT) {
		static const int wide[] = { PMC_XMIT_DATA, PMC_RCV_DATA,
					    PMC_XMIT_PKTS, PMC_RCV_PKTS };
		for (size_t k = 0; k < sizeof(wide) / sizeof(wide[0]); k++) {
			int c = wide[k];
			if (r->ext.have & (1u << c)) {
				s.v[c] = r->ext.v[c];
				s.have |= 1u << c;
				s.wide |= 1u << c;
			}
		}
	}
	if (!(pm->nodes[x->node].capmask & PMA_CAP_XMIT_WAIT))
		s.have &= ~(1u << PMC_XMIT_WAIT);
	struct pm_step_report rep;
	pmcalc_update(&x->calc, &s, now, x->cleared, &rep);
	x->cleared = 0;
	if (rep.external_reset)
		log_info("perfmgr: %s port %u: counters cleared by someone else; "
			 "its error history starts afresh", x->name, x->key.port);
	pm->st.last_read++;
	if (pmcalc_needs_clear(&s))
		enqueue(pm, REQ_CLEAR, ti);
}

/* ---- verdicts ---- */

/* "Name=value ..." of the error counters the port has, as read. */
static void counters_text(const struct pm_target *x, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int c = 0; c < PMC_N_ERRORS && used < len; c++) {
		if (!(x->calc.last.have & (1u << c)) || !x->calc.last.v[c])
			continue;
		int k = snprintf(buf + used, len - used, "%s%s=%" PRIu64, used ? " " : "",
				 pma_counter_info[c].name, x->calc.last.v[c]);
		if (k < 0)
			break;
		used += (size_t)k;
	}
}

static void reasons_text(const struct perfmgr *pm, const struct pm_target *x,
			 char *buf, size_t len)
{
	pmcalc_reasons(&x->v, &pm->thr, buf, len);
	if (x->one_sided) {
		size_t l = strlen(buf);
		snprintf(buf + l, len - l, "%ssymbol errors on this side only: the link "
			 "into this port (cable end, transceiver) is suspect",
			 l ? "\n" : "");
	}
}

static void turned(struct perfmgr *pm, struct pm_target *x, int unhealthy)
{
	char reasons[512], counters[512], one[512];
	reasons_text(pm, x, reasons, sizeof(reasons));
	counters_text(x, counters, sizeof(counters));
	snprintf(one, sizeof(one), "%s", reasons);
	size_t l = strlen(one);
	while (l && one[l - 1] == '\n')
		one[--l] = '\0';
	for (char *p = one; *p; p++)
		if (*p == '\n')
			*p = ';';
	if (unhealthy) {
		pm->st.turned_unhealthy++;
		log_rl_msg(&pm->rl_turn, LOG_WARN,
			   "perfmgr: %s port %u (0x%016" PRIx64 ", to %s port %u) unhealthy: %s",
			   x->name, x->key.port, x->key.guid, x->remote_name[0] ? x->remote_name : "-",
			   x->remote_port, one);
	} else {
		pm->st.recovered++;
		log_rl_msg(&pm->rl_turn, LOG_NOTICE,
			   "perfmgr: %s port %u (0x%016" PRIx64 ") healthy again",
			   x->name, x->key.port, x->key.guid);
	}
	const struct hookev_port hp = {
		.guid = x->key.guid, .remote_guid = x->remote_guid,
		.name = x->name, .remote_name = x->remote_name,
		.port = x->key.port, .remote_port = x->remote_port,
	};
	hookev_port_health(pm->sm->hook, &hp, unhealthy,
			   unhealthy ? one : "recovered", counters);
}

static int is_unhealthy(const struct pm_target *x)
{
	return (x->v.flags & (PMV_ERRORS | PMV_FLAPPING)) != 0;
}

static void judge_all(struct perfmgr *pm, uint64_t now)
{
	uint64_t wall = (uint64_t)time(NULL);
	pm->st.unhealthy = pm->st.flapping = pm->st.hot = 0;
	for (uint32_t i = 0; i < pm->n; i++) {
		struct pm_target *x = &pm->t[i];
		if (!x->calc.have_last)
			continue;
		pmcalc_judge(&x->calc, &pm->thr, now, &x->v);
	}
	for (uint32_t i = 0; i < pm->n; i++) {
		struct pm_target *x = &pm->t[i];
		const struct pm_target *y = x->remote_guid ?
			find_target(pm, x->remote_guid, x->remote_port) : NULL;
		x->one_sided = y && x->calc.have_last && y->calc.have_last &&
			       pmcalc_one_sided_symbols(&x->v, &y->v) == 1;
	}
	for (uint32_t i = 0; i < pm->n; i++) {
		struct pm_target *x = &pm->t[i];
		if (!x->calc.have_last)
			continue;
		int bad = is_unhealthy(x);
		pm->st.unhealthy += bad;
		pm->st.flapping += (x->v.flags & PMV_FLAPPING) != 0;
		pm->st.hot += (x->v.flags & PMV_HOT) != 0;
		if (bad != x->unhealthy) {
			x->unhealthy = (uint8_t)bad;
			x->since = bad ? wall : 0;
			turned(pm, x, bad);
		}
	}
}

/* ---- the sweep ---- */

static uint64_t requests_handled(const struct sm *sm)
{
	return sm->disp ? mad_dispatch_get_stats(sm->disp)->handled : 0;
}

static void set_window(struct perfmgr *pm, int yielding)
{
	struct txn_params tp;
	engine_params(pm->sm, &tp);
	if (yielding)
		tp.window = PM_WINDOW_BUSY;
	pm->yielding = yielding;
	txn_set_params(pm->txn, &tp);
}

/* The tick starts with a sweep or a guest; it stops when neither is left. */
static void pace_start(struct perfmgr *pm)
{
	if (evtimer_pending(pm->pace, NULL))
		return;
	pm->handled_prev = requests_handled(pm->sm);
	pm->probing = 1;
	pm->quiet = PM_QUIET_TICKS - 1;	/* the first measurement decides */
	pm->budget = PM_BUSY_GMPS;
	if (!pm->yielding)
		set_window(pm, 1);
	timer_in_ms(pm->pace, PM_PACE_MS);
}

static void pace_stop(struct perfmgr *pm)
{
	if (pm->running || pm->guest)
		return;
	event_del(pm->pace);
	if (pm->yielding)
		set_window(pm, 0);
}

static void on_pace(evutil_socket_t fd, short what, void *arg)
{
	struct perfmgr *pm = arg;
	if (!pm->running && !pm->guest)
		return;
	uint64_t h = requests_handled(pm->sm);
	int busy = h - pm->handled_prev >= PM_BUSY_REQUESTS;
	pm->handled_prev = h;
	unsigned yielded = pm->yielding && !pm->probing ? PM_PACE_MS : 0;
	pm->probing = 0;
	if (pm->running)
		pm->st.yielded_ms += yielded;
	pm->quiet = busy ? 0 : pm->quiet + 1;
	int yield = busy || (pm->yielding && pm->quiet < PM_QUIET_TICKS);
	if (yield != pm->yielding)
		set_window(pm, yield);
	pm->budget = PM_BUSY_GMPS;
	timer_in_ms(pm->pace, PM_PACE_MS);
	if (pm->guest)
		pm->guest(pm->guest_arg, yielded);
	if (!pm->running)
		return;
	pm->pending++;
	feed(pm);
	if (--pm->pending == 0)
		sweep_end(pm);
}

static void sweep_free(struct perfmgr *pm)
{
	free(pm->rd);
	free(pm->req);
	pm->rd = NULL;
	pm->req = NULL;
	pm->n_req = 0;
}

static json_t *sweep_json(const struct perfmgr *pm)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			 "yielded_ms", (json_int_t)pm->st.yielded_ms,
			 "ports", (json_int_t)pm->st.last_ports,
			 "read", (json_int_t)pm->st.last_read,
			 "failed", (json_int_t)pm->st.last_failed,
			 "gmps", (json_int_t)pm->st.last_gmps,
			 "ms", (json_int_t)pm->st.last_ms,
			 "unhealthy", (json_int_t)pm->st.unhealthy,
			 "hot", (json_int_t)pm->st.hot);
}

static void answer_waiters(struct perfmgr *pm, const char *err)
{
	for (uint32_t i = 0; i < pm->n_waiters; i++)
		if (pm->sm->ctl)
			control_reply(pm->sm->ctl, pm->waiters[i],
				      err ? NULL : sweep_json(pm), err);
	free(pm->waiters);
	pm->waiters = NULL;
	pm->n_waiters = 0;
}

static void sweep_end(struct perfmgr *pm)
{
	uint64_t now = clock_ms();
	int whole = pm->sm->state == SMS_MASTER && !pm->sm->stopping;
	if (!pm->taken) {
		pm->taken = 1;
		pm->pending++;		/* held while the clears are fed */
		for (uint32_t i = 0; whole && i < pm->n; i++)
			take_reads(pm, i, now);
		feed(pm);
		if (--pm->pending)	/* clears went out: the sweep ends with them */
			return;
	}
	pm->running = 0;
	pace_stop(pm);
	const struct txn_stats *ts = txn_get_stats(pm->txn);
	pm->st.last_gmps = (uint32_t)(ts->all.sent - pm->gmps_base);
	pm->st.gmps += pm->st.last_gmps;
	pm->st.last_ms = now - pm->start_ms;
	pm->st.last_failed = pm->st.last_ports - pm->st.last_read;
	pm->st.sweeps++;
	sweep_free(pm);
	if (whole) {
		uint32_t hot_before = pm->st.hot;
		judge_all(pm, now);
		/* the picture marks hot links: drawn again when they change */
		if ((pm->st.hot || hot_before) && pm->redraw)
			pm->redraw(pm->redraw_arg);
		log_info("perfmgr: sweep of %u ports (%u read) in %" PRIu64 " ms, %u GMPs; "
			 "%u unhealthy, %u hot", pm->st.last_ports, pm->st.last_read,
			 pm->st.last_ms, pm->st.last_gmps, pm->st.unhealthy, pm->st.hot);
	}
	answer_waiters(pm, whole ? NULL : "the sweep was cut short: not MASTER any more");
}

static int can_sweep(const struct perfmgr *pm, char *err, size_t errlen)
{
	const struct sm *sm = pm->sm;
	if (!pm->txn || sm->state != SMS_MASTER || !sm->sub.model) {
		snprintf(err, errlen, "not the MASTER of a configured subnet");
		return 0;
	}
	if (pm->running) {
		snprintf(err, errlen, "a sweep is under way");
		return 0;
	}
	return 1;
}

static int sweep_start(struct perfmgr *pm, char *err, size_t errlen)
{
	if (!can_sweep(pm, err, errlen))
		return -1;
	if (snapshot(pm, &pm->sm->sub.model->f) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	pm->rd = calloc(pm->n ? pm->n : 1, sizeof(*pm->rd));
	pm->req = calloc(pm->n * 3 + pm->n_nodes + 1, sizeof(*pm->req));
	if (!pm->rd || !pm->req) {
		sweep_free(pm);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	thresholds_in_force(pm);
	pm->running = 1;
	pm->taken = 0;
	pm->fed = 0;
	pm->start_ms = clock_ms();
	pm->st.yielded_ms = 0;
	pace_start(pm);
	pm->st.last_start = (uint64_t)time(NULL);
	pm->st.last_ports = pm->n;
	pm->st.last_read = 0;
	pm->gmps_base = txn_get_stats(pm->txn)->all.sent;
	pm->pending = 1;	/* held until every request is submitted */
	for (uint32_t k = 0; k < pm->n_nodes; k++) {
		struct pm_node *d = &pm->nodes[k];
		if (d->cpi == CPI_KNOWN) {
			for (uint32_t j = 0; j < d->n; j++)
				submit_reads(pm, d->first + j);
			continue;
		}
		d->cpi = CPI_ASKING;
		enqueue(pm, REQ_CPI, k);
	}
	feed(pm);
	if (--pm->pending == 0)
		sweep_end(pm);
	return 0;
}

static void on_interval(evutil_socket_t fd, short what, void *arg)
{
	struct perfmgr *pm = arg;
	int s = pm->sm->cfg.pm_interval_s;
	if (s <= 0)
		return;
	timer_in_ms(pm->timer, (uint64_t)s * 1000);
	char err[128];
	if (!pm->running && pm->sm->state == SMS_MASTER)
		sweep_start(pm, err, sizeof(err));
}

/* ---- life ---- */

int perfmgr_init(struct sm *sm)
{
	struct perfmgr *pm = calloc(1, sizeof(*pm));
	if (!pm)
		return -1;
	pm->sm = sm;
	pm->timer = evtimer_new(sm->base, on_interval, pm);
	pm->txn_timer = evtimer_new(sm->base, on_txn_timer, pm);
	pm->pace = evtimer_new(sm->base, on_pace, pm);
	if (!pm->timer || !pm->txn_timer || !pm->pace) {
		if (pm->timer)
			event_free(pm->timer);
		if (pm->txn_timer)
			event_free(pm->txn_timer);
		if (pm->pace)
			event_free(pm->pace);
		free(pm);
		return -1;
	}
	pm->rl_turn = (struct log_rl){ .burst = PM_TRANSITION_BURST, .interval_ms = 60000 };
	sm->pm = pm;
	baseline_watch_init(&pm->base);
	pm->interval_s = sm->cfg.pm_interval_s;
	thresholds_in_force(pm);
	return 0;
}

static void engine_params(const struct sm *sm, struct txn_params *tp)
{
	*tp = (struct txn_params){
		.timeout_ms = sm->cfg.mad_timeout_ms,
		.retries = sm->cfg.mad_retries,
		.window = sm->cfg.pm_window,
		.window_per_node = PM_WINDOW_PER_NODE,
	};
}

int perfmgr_begin(struct sm *sm, char *err, size_t errlen)
{
	struct perfmgr *pm = sm->pm;
	struct txn_params tp;
	engine_params(sm, &tp);
	pm->txn = txn_new(&tp, &sm->tr, clock_cb, NULL);
	if (!pm->txn) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	txn_set_arm(pm->txn, arm_txn, pm);
	return 0;
}

void perfmgr_free(struct sm *sm)
{
	struct perfmgr *pm = sm->pm;
	if (!pm)
		return;
	if (pm->txn) {
		txn_set_arm(pm->txn, NULL, NULL);
		txn_cancel_all(pm->txn);	/* sweep_end runs: waiters told */
		txn_free(pm->txn);
	}
	answer_waiters(pm, "the daemon stops");
	sweep_free(pm);
	event_free(pm->timer);
	event_free(pm->txn_timer);
	event_free(pm->pace);
	free(pm->t);
	free(pm->nodes);
	baseline_watch_free(&pm->base);
	free(pm);
	sm->pm = NULL;
}

void perfmgr_reconfigure(struct sm *sm)
{
	struct perfmgr *pm = sm->pm;
	if (!pm)
		return;
	thresholds_in_force(pm);
	if (pm->txn)
		set_window(pm, pm->yielding);
	if (pm->interval_s == sm->cfg.pm_interval_s)
		return;
	pm->interval_s = sm->cfg.pm_interval_s;
	event_del(pm->timer);
	if (pm->interval_s > 0 && sm->state == SMS_MASTER)
		timer_in_ms(pm->timer, (uint64_t)pm->interval_s * 1000);
}

void perfmgr_configured(struct sm *sm)
{
	struct perfmgr *pm = sm->pm;
	if (!pm || sm->cfg.pm_interval_s <= 0 || evtimer_pending(pm->timer, NULL))
		return;
	timer_in_ms(pm->timer, PM_FIRST_SWEEP_MS);
}

int perfmgr_pace(struct sm *sm, void (*fn)(void *, unsigned), void *arg)
{
	struct perfmgr *pm = sm->pm;
	if (!pm || !pm->txn || (pm->guest && pm->guest_arg != arg))
		return -1;
	pm->guest = fn;
	pm->guest_arg = arg;
	pace_start(pm);
	return 0;
}

void perfmgr_unpace(struct sm *sm, void *arg)
{
	struct perfmgr *pm = sm->pm;
	if (!pm || !pm->guest || pm->guest_arg != arg)
		return;
	pm->guest = NULL;
	pm->guest_arg = NULL;
	pace_stop(pm);
}

int perfmgr_send(struct sm *sm, const uint8_t *mad, const struct mad_addr *to,
		 uint32_t dest, txn_done_fn cb, void *arg)
{
	struct perfmgr *pm = sm->pm;
	if (!pm || !pm->txn)
		return -1;
	if (!gate_open(pm))
		return 0;
	return gate_send(pm, mad, to, dest, cb, arg) == 0 ? 1 : -1;
}

struct txn_engine *perfmgr_engine(const struct sm *sm)
{
	return sm->pm ? sm->pm->txn : NULL;
}

int perfmgr_answer(struct sm *sm, const uint8_t *mad, size_t len,
		   const struct mad_addr *from, int status)
{
	if (!sm->pm || !sm->pm->txn)
		return 0;
	return txn_recv(sm->pm->txn, mad, len, from, status);
}

/* ---- the control socket ---- */

json_t *perfmgr_ctl(struct sm *sm, const json_t *req, char *err, size_t errlen)
{
	struct perfmgr *pm = sm->pm;
	const char *op = json_string_value(json_object_get(req, "op"));
	if (!op)
		return perfmgr_to_ctl(sm);
	if (strcmp(op, "sweep")) {
		snprintf(err, errlen, "perfmgr: unknown operation '%s' (sweep)", op);
		return NULL;
	}
	if (!pm->running && sweep_start(pm, err, errlen) < 0)
		return NULL;
	if (!pm->running)	/* nothing to read: over at once */
		return sweep_json(pm);
	uint64_t id = sm->ctl ? control_defer(sm->ctl) : 0;
	if (!id)	/* not from a client (the status page, tests): started */
		return json_pack("{s:b}", "started", 1);
	uint64_t *w = realloc(pm->waiters, (pm->n_waiters + 1) * sizeof(*w));
	if (!w) {
		control_reply(sm->ctl, id, NULL, "out of memory");
		return NULL;
	}
	pm->waiters = w;
	pm->waiters[pm->n_waiters++] = id;
	return NULL;
}

static json_t *port_json(const struct perfmgr *pm, const struct pm_target *x)
{
	json_t *o = json_pack("{s:o, s:s, s:i}", "guid", control_guid_json(x->key.guid),
			      "node", x->name, "port", x->key.port);
	if (!o)
		return NULL;
	if (x->remote_guid) {
		json_object_set_new(o, "remote_guid", control_guid_json(x->remote_guid));
		json_object_set_new(o, "remote_node", json_string(x->remote_name));
		json_object_set_new(o, "remote_port", json_integer(x->remote_port));
	}
	json_t *c = json_object(), *h = json_object();
	for (int k = 0; k < PMC_N_ERRORS; k++) {
		if ((x->calc.last.have & (1u << k)) && x->calc.last.v[k])
			json_object_set_new(c, pma_counter_info[k].name,
					    json_integer((json_int_t)x->calc.last.v[k]));
		if (x->v.hour[k])
			json_object_set_new(h, pma_counter_info[k].name,
					    json_integer((json_int_t)x->v.hour[k]));
	}
	json_object_set_new(o, "counters", c);
	json_object_set_new(o, "last_hour", h);
	char buf[1024];
	reasons_text(pm, x, buf, sizeof(buf));
	json_t *r = json_array();
	for (char *s = buf, *e; *s; s = e + (*e != '\0')) {
		e = strchr(s, '\n');
		if (!e)
			e = s + strlen(s);
		json_array_append_new(r, json_stringn(s, (size_t)(e - s)));
	}
	json_object_set_new(o, "reasons", r);
	if (x->since)
		json_object_set_new(o, "since", control_time_json(x->since));
	if (x->v.flags & PMV_HOT)
		json_object_set_new(o, "xmit_wait_per_s", json_real(x->v.xmit_wait_rate));
	return o;
}

struct ranked {
	double b;
	uint32_t i;
};

static int worst_first(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->b != y->b)
		return x->b > y->b ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The ports whose verdict has flag, worst first. */
static json_t *ports_with(const struct perfmgr *pm, unsigned flag)
{
	json_t *a = json_array();
	struct ranked *r = calloc(pm->n ? pm->n : 1, sizeof(*r));
	if (!a || !r) {
		free(r);
		return a;
	}
	uint32_t n = 0;
	for (uint32_t i = 0; i < pm->n; i++)
		if (pm->t[i].calc.have_last && (pm->t[i].v.flags & flag))
			r[n++] = (struct ranked){ pmcalc_severity(&pm->t[i].v, &pm->thr), i };
	qsort(r, n, sizeof(*r), worst_first);
	for (uint32_t k = 0; k < n; k++)
		json_array_append_new(a, port_json(pm, &pm->t[r[k].i]));
	free(r);
	return a;
}

/* Degraded links of the model: each once, from its lower end. */
static json_t *degraded_json(const struct fabric *f)
{
	json_t *a = json_array();
	for (uint32_t pi = 0; f && pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (p->remote == FAB_NONE || p->remote < pi ||
		    !(fabric_port_degraded(f, pi) || fabric_port_degraded(f, p->remote)))
			continue;
		const struct fab_port *r = &f->ports[p->remote];
		json_array_append_new(a, json_pack("{s:o, s:s, s:i, s:o, s:s, s:i, s:i, s:i, s:i, s:i}",
			"guid", control_guid_json(f->nodes[p->node].guid),
			"node", fabric_node_name(f, p->node), "port", p->num,
			"remote_guid", control_guid_json(f->nodes[r->node].guid),
			"remote_node", fabric_node_name(f, r->node),
			"remote_port", r->num,
			"width_active", p->width_active, "width_max", p->width_max,
			"speed_active", p->speed_active, "speed_max", p->speed_max));
	}
	return a;
}

static void baseline_path(const struct sm *sm, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", sm->cfg.state_dir, BASELINE_FILE);
}

/* ibsmctl health --save-baseline [FILE]: FILE too, STATE_DIR/baseline always. */
static json_t *baseline_save_ctl(struct perfmgr *pm, const json_t *what,
				 char *err, size_t errlen)
{
	const struct sm *sm = pm->sm;
	if (sm->state != SMS_MASTER || !sm->sub.model) {
		snprintf(err, errlen, "not the MASTER of a configured subnet: no fabric to save");
		return NULL;
	}
	const struct fabric *f = &sm->sub.model->f;
	char path[512];
	const char *file = json_string_value(what);
	baseline_path(sm, path, sizeof(path));
	if (file && strcmp(file, path) && baseline_save(f, file, err, errlen) < 0)
		return NULL;
	if (baseline_save(f, path, err, errlen) < 0)
		return NULL;
	uint32_t nodes, links;
	baseline_counts(f, &nodes, &links);
	log_notice("perfmgr: fabric baseline saved to %s%s%s: %u nodes, %u links",
		   path, file ? " and " : "", file ? file : "", nodes, links);
	return json_pack("{s:{s:s, s:I, s:I}}", "baseline", "saved", file ? file : path,
			 "nodes", (json_int_t)nodes, "links", (json_int_t)links);
}

json_t *perfmgr_health_ctl(struct sm *sm, const json_t *req, char *err,
			   size_t errlen)
{
	struct perfmgr *pm = sm->pm;
	const struct fabric *f = sm->sub.model ? &sm->sub.model->f : NULL;
	const json_t *save = json_object_get(req, "save_baseline");
	if (save)
		return baseline_save_ctl(pm, save, err, errlen);
	json_t *o = json_object();
	json_object_set_new(o, "unhealthy", ports_with(pm, PMV_ERRORS | PMV_FLAPPING));
	json_object_set_new(o, "flapping", ports_with(pm, PMV_FLAPPING));
	json_object_set_new(o, "degraded", degraded_json(f));
	json_object_set_new(o, "hot", ports_with(pm, PMV_HOT));
	char path[512];
	baseline_path(sm, path, sizeof(path));
	json_object_set_new(o, "baseline", f ? baseline_watch_json(&pm->base, path, f) :
			    json_pack("{s:s}", "error", "no subnet configured yet: nothing to compare"));
	json_object_set_new(o, "sweep", pm->st.sweeps ? sweep_json(pm) : json_null());
	return o;
}

json_t *perfmgr_to_ctl(const struct sm *sm)
{
	const struct perfmgr *pm = sm->pm;
	if (!pm)
		return json_null();
	json_t *o = json_pack("{s:i, s:i, s:b, s:I, s:I, s:I, s:I, s:I}",
			      "interval_s", sm->cfg.pm_interval_s,
			      "window", sm->cfg.pm_window,
			      "running", pm->running,
			      "sweeps", (json_int_t)pm->st.sweeps,
			      "gmps", (json_int_t)pm->st.gmps,
			      "timeouts", (json_int_t)pm->st.timeouts,
			      "clears", (json_int_t)pm->st.clears,
			      "ports", (json_int_t)pm->n);
	if (pm->st.sweeps) {
		json_t *l = sweep_json(pm);
		json_object_set_new(l, "start", control_time_json(pm->st.last_start));
		json_object_set_new(o, "last", l);
	}
	json_object_set_new(o, "flapping", json_integer(pm->st.flapping));
	return o;
}

/* ---- /metrics ---- */

static void port_labels(const struct pm_target *x, char *buf, size_t len)
{
	char name[2 * FAB_DESC_LEN + 8], rname[2 * FAB_DESC_LEN + 8];
	metrics_escape(name, sizeof(name), x->name, 1);
	metrics_escape(rname, sizeof(rname), x->remote_name, 1);
	snprintf(buf, len, "guid=\"0x%016" PRIx64 "\",node=\"%s\",port=\"%u\","
		 "remote_guid=\"0x%016" PRIx64 "\",remote_port=\"%u\"",
		 x->key.guid, name, x->key.port, x->remote_guid, x->remote_port);
}

void perfmgr_metrics(const struct sm *sm, struct mtext *t)
{
	const struct perfmgr *pm = sm->pm;
	if (!pm)
		return;
	static const struct {
		const char *name, *type, *help;
	} fam[] = {
		{ "ibsmd_perfmgr_sweeps_total", "counter", "Performance manager sweeps done" },
		{ "ibsmd_perfmgr_gmps_total", "counter", "PerfMgt GMPs the performance manager sent" },
		{ "ibsmd_perfmgr_sweep_seconds", "gauge", "The last performance manager sweep's duration" },
		{ "ibsmd_ports_unhealthy", "gauge", "Ports with errors over their thresholds or flapping, at the last sweep" },
		{ "ibsmd_ports_hot", "gauge", "Ports whose PortXmitWait rate is over its threshold, at the last sweep" },
	};
	const double val[] = { (double)pm->st.sweeps, (double)pm->st.gmps,
			       pm->st.last_ms / 1000.0, pm->st.unhealthy, pm->st.hot };
	for (size_t k = 0; k < sizeof(fam) / sizeof(fam[0]); k++) {
		mtext_family(t, fam[k].name, fam[k].type, fam[k].help);
		mtext_sample(t, fam[k].name, NULL, NULL, val[k]);
	}
	if (sm->cfg.pm_metrics == CFG_PM_METRICS_NONE)
		return;
	int last = sm->cfg.pm_metrics == CFG_PM_METRICS_ALL ? PMC_N : PMC_N_ERRORS;
	char labels[512], name[96], help[160];
	for (int c = 0; c < last; c++) {
		snprintf(name, sizeof(name), "ibsmd_port_%s_total", pma_counter_info[c].metric);
		snprintf(help, sizeof(help), "%s of the port since the SM first read it%s",
			 pma_counter_info[c].name,
			 c == PMC_XMIT_DATA || c == PMC_RCV_DATA ? " (units of 4 octets)" : "");
		mtext_family(t, name, "counter", help);
		for (uint32_t i = 0; i < pm->n; i++) {
			const struct pm_target *x = &pm->t[i];
			if (!x->calc.have_last || !(x->calc.last.have & (1u << c)))
				continue;
			port_labels(x, labels, sizeof(labels));
			mtext_labelled(t, name, labels, x->calc.total[c]);
		}
	}
}

uint32_t perfmgr_hot_ports(const struct sm *sm, const struct fabric *f,
			   uint8_t *hot)
{
	const struct perfmgr *pm = sm->pm;
	uint32_t n = 0;
	memset(hot, 0, f->n_ports);
	if (!pm)
		return 0;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		const struct pm_target *x = find_target(pm, f->nodes[p->node].guid, p->num);
		if (x && (x->v.flags & PMV_HOT)) {
			hot[pi] = 1;
			n++;
		}
	}
	return n;
}

void perfmgr_set_redraw(struct sm *sm, void (*fn)(void *), void *arg)
{
	if (!sm->pm)
		return;
	sm->pm->redraw = fn;
	sm->pm->redraw_arg = arg;
}
