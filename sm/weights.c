/*
 * pFTree-Wt weights learned from PMA counters (sm/weights.h).
 *
 * A reading is a snapshot of the CA end ports of the model (GUID, LID,
 * port number, node name) and one PortCountersExtended Get to each; it
 * owns its memory, so a heavy sweep that replaces the model meanwhile
 * changes nothing.  Two readings a period apart are matched by port GUID.
 */
#include "sm/weights.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/pma.h"
#include "sm/daemon.h"
#include "sm/perfmgr.h"
#include "sm/base/log.h"
#include "sm/base/wfile.h"
#include "sm/base/clock.h"

#define WEIGHTS_HEADER "# ibsmd learned weights, format 1 (ends with \"# end: N ports\"); written by ibsmd, read at start-up\n"
#define WEIGHTS_END "# end: %u ports\n"
#define WEIGHTS_MAX_BYTES (64ll << 20)

static void save_learned(const struct sm *sm);

#define RETRY_MS 100	/* a reroute that met a sweep: asked again */

struct wport {
	uint64_t guid;
	uint64_t rcv;		/* PortRcvData read */
	uint32_t lid, node;
	uint8_t num;
	uint8_t ok;		/* answered */
	char name[FAB_DESC_LEN + 1];
};

struct wreq {			/* one Get in flight */
	struct wlearn *w;
	uint32_t i;
};

struct reading {
	struct wport *p;	/* sorted by guid */
	struct wreq *req;
	uint32_t n, pending;
	uint64_t start_ms;
};

struct wlearn {
	struct sm *sm;
	struct event *timer;	/* the period */
	struct event *retry;	/* a reroute refused by a running sweep */
	struct reading prev;	/* the last reading: the period's start */
	struct reading cur;	/* under way while cur.pending */
	int reading;
	int period_s;		/* the period the timer runs with */
	struct weights_stats st;
};

uint32_t weights_rescale(const uint64_t *b, const uint8_t *measured,
			 uint32_t n, uint32_t lo, uint32_t hi, uint32_t *w,
			 uint64_t *spread)
{
	uint64_t mn = UINT64_MAX, mx = 0;
	uint32_t m = 0;
	if (hi < lo)
		hi = lo;
	for (uint32_t i = 0; i < n; i++) {
		if (!measured[i])
			continue;
		m++;
		if (b[i] < mn)
			mn = b[i];
		if (b[i] > mx)
			mx = b[i];
	}
	if (spread)
		*spread = m ? mx - mn : 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!measured[i])
			continue;
		if (mx == mn) {
			w[i] = lo;
			continue;
		}
		unsigned __int128 num = (unsigned __int128)(b[i] - mn) * (hi - lo);
		uint64_t den = mx - mn;
		w[i] = lo + (uint32_t)((num + den / 2) / den);
	}
	return m;
}

static void reading_free(struct reading *r)
{
	free(r->p);
	free(r->req);
	memset(r, 0, sizeof(*r));
}

static int by_guid(const void *a, const void *b)
{
	uint64_t x = ((const struct wport *)a)->guid;
	uint64_t y = ((const struct wport *)b)->guid;
	return x < y ? -1 : x > y;
}

static const struct wport *find(const struct reading *r, uint64_t guid)
{
	struct wport key = { .guid = guid };
	return bsearch(&key, r->p, r->n, sizeof(*r->p), by_guid);
}

static uint32_t weight_before(const struct part_weights *lw, uint64_t guid)
{
	for (uint32_t lo = 0, hi = lw->n; lo < hi;) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (lw->guid[mid] == guid)
			return lw->weight[mid];
		if (lw->guid[mid] < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static void retry_reroute(evutil_socket_t fd, short what, void *arg)
{
	struct wlearn *w = arg;
	char err[256];
	if (w->sm->state != SMS_MASTER || !w->sm->sub.model)
		return;	/* the next configuration routes with them */
	if (sweeper_request_reroute(w->sm, err, sizeof(err)) < 0)
		timer_in_ms(w->retry, RETRY_MS);
}

/*
 * The period from w->prev to w->cur: Eq. 1 over the ports measured in
 * both, sm->learned replaced when it changed.
 */
static void learn(struct wlearn *w)
{
	struct sm *sm = w->sm;
	const struct reading *a = &w->prev, *c = &w->cur;
	uint32_t n = c->n, lo = sm->cfg.wlearn_min, hi = sm->cfg.wlearn_max;
	uint64_t *vol = calloc(n ? n : 1, sizeof(*vol));
	uint8_t *ok = calloc(n ? n : 1, 1);
	uint32_t *wt = calloc(n ? n : 1, sizeof(*wt));
	struct part_weights nw = { 0 };
	nw.guid = malloc((n ? n : 1) * sizeof(*nw.guid));
	nw.weight = malloc((n ? n : 1) * sizeof(*nw.weight));
	if (!vol || !ok || !wt || !nw.guid || !nw.weight) {
		log_err("weight learning: out of memory; weights unchanged");
		goto out;
	}
	if (!lo)
		lo = WEIGHTS_DEFAULT_MIN;
	if (!hi)
		hi = WEIGHTS_DEFAULT_MAX;
	for (uint32_t i = 0; i < n; i++) {
		const struct wport *p = &c->p[i], *q = find(a, p->guid);
		ok[i] = p->ok && q && q->ok && p->rcv >= q->rcv;
		vol[i] = ok[i] ? p->rcv - q->rcv : 0;
	}
	uint64_t spread;
	uint32_t m = weights_rescale(vol, ok, n, lo, hi, wt, &spread);
	double secs = (double)(c->start_ms - a->start_ms) / 1000.0;
	w->st.rounds++;
	w->st.measured = m;
	w->st.unmeasured = n - m;
	if (spread < WEIGHTS_MIN_SPREAD) {
		w->st.idle++;
		log_info("weights: over %.1f s the %u ports measured received within %llu bytes of each other; too little to learn from, weights kept",
			 secs, m, (unsigned long long)spread * 4);
		goto out;
	}
	uint32_t top = UINT32_MAX;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t v = ok[i] ? wt[i] : weight_before(&sm->learned, c->p[i].guid);
		if (!v)
			continue;	/* never measured: the policy's weight */
		nw.guid[nw.n] = c->p[i].guid;
		nw.weight[nw.n++] = v;
		if (ok[i] && (top == UINT32_MAX || vol[i] > vol[top]))
			top = i;
	}
	if (nw.n == sm->learned.n &&
	    (!nw.n || (!memcmp(nw.guid, sm->learned.guid, nw.n * sizeof(*nw.guid)) &&
		       !memcmp(nw.weight, sm->learned.weight, nw.n * sizeof(*nw.weight))))) {
		log_info("weights learned over %.1f s: %u ports measured, unchanged",
			 secs, m);
		goto out;
	}
	struct part_weights old = sm->learned;
	sm->learned = nw;
	nw = old;
	w->st.changes++;
	save_learned(sm);
	log_notice("weights learned over %.1f s: %u ports measured, %u not; max %u at %s port %u (GUID 0x%016llx, PortRcvData +%llu x 4 bytes); rerouting",
		   secs, m, n - m, wt[top], c->p[top].name, c->p[top].num,
		   (unsigned long long)c->p[top].guid,
		   (unsigned long long)vol[top]);
	timer_in_ms(w->retry, 0);	/* from the loop, not inside a txn callback */
out:
	free(nw.guid);
	free(nw.weight);
	free(vol);
	free(ok);
	free(wt);
}

int weights_save_file(const char *path, const struct part_weights *w,
		      char *err, size_t errlen)
{
	struct wfile f;
	if (wfile_open(&f, path, err, errlen) < 0)
		return -1;
	fputs(WEIGHTS_HEADER "# PORT_GUID WEIGHT\n", f.fp);
	for (uint32_t i = 0; i < w->n; i++)
		fprintf(f.fp, "0x%016" PRIx64 " %u\n", w->guid[i], w->weight[i]);
	fprintf(f.fp, WEIGHTS_END, w->n);
	return wfile_commit(&f, err, errlen);
}

static void weights_clear(struct part_weights *w)
{
	free(w->guid);
	free(w->weight);
	memset(w, 0, sizeof(*w));
}

/* One "0xGUID WEIGHT" line into w (room made); NULL, or why it is wrong. */
static const char *parse_line(const char *line, struct part_weights *w,
			      uint32_t *cap)
{
	char *end;
	if (strncmp(line, "0x", 2))
		return "not \"0xGUID WEIGHT\"";
	errno = 0;
	unsigned long long g = strtoull(line + 2, &end, 16);
	if (errno || end == line + 2 || end - line > 18 || *end != ' ' || !g)
		return "bad port GUID";
	unsigned long v = strtoul(end + 1, &end, 10);
	if (*end != '\n' || v < 1 || v > CFG_MAX_WEIGHT)
		return "bad weight (1..1000000, the policy's bounds)";
	if (w->n && g <= w->guid[w->n - 1])
		return "GUIDs not in increasing order";
	if (w->n == *cap) {
		uint32_t nc = *cap ? *cap * 2 : 64;
		uint64_t *ng = realloc(w->guid, nc * sizeof(*ng));
		if (ng)
			w->guid = ng;
		uint32_t *nv = realloc(w->weight, nc * sizeof(*nv));
		if (nv)
			w->weight = nv;
		if (!ng || !nv)
			return "";	/* ENOMEM: told apart by the caller */
		*cap = nc;
	}
	w->guid[w->n] = g;
	w->weight[w->n++] = (uint32_t)v;
	return NULL;
}

int weights_load_file(const char *path, struct part_weights *w, char *err,
		      size_t errlen)
{
	char line[256];
	const char *why = NULL;
	int lineno = 0, ended = 0;
	uint32_t cap = 0;
	weights_clear(w);
	FILE *fp = rfile_open(path, WEIGHTS_MAX_BYTES, err, errlen);
	if (!fp)
		return errno == ENOENT ? 1 : -1;
	while (!why && fgets(line, sizeof(line), fp)) {
		lineno++;
		if (!strchr(line, '\n'))
			why = "line too long or not ended";
		else if (lineno == 1)
			why = strcmp(line, WEIGHTS_HEADER) ? "not an ibsmd weights file (header)" : NULL;
		else if (ended)
			why = "text after the end line";
		else if (!strncmp(line, "# end: ", 7)) {
			char want[64];
			snprintf(want, sizeof(want), WEIGHTS_END, w->n);
			if (strcmp(line, want))
				why = "end line does not count the ports above it";
			ended = 1;
		} else if (line[0] != '#' && (why = parse_line(line, w, &cap)) && !*why) {
			fclose(fp);
			weights_clear(w);
			snprintf(err, errlen, "%s: out of memory", path);
			return -1;
		}
	}
	if (!why && ferror(fp))
		why = "read error";
	else if (!why && !lineno) {
		why = "empty: truncated";
		lineno = 1;
	}
	else if (!why && !ended) {
		why = "truncated: no end line";
		lineno++;
	}
	fclose(fp);
	if (why) {
		weights_clear(w);
		snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
		return -2;
	}
	return 0;
}

/* sm->learned into STATE_DIR/weights; logged when it cannot be. */
static void save_learned(const struct sm *sm)
{
	char path[4096], err[512];
	if (!sm->cfg.state_dir[0])
		return;
	snprintf(path, sizeof(path), "%s/%s", sm->cfg.state_dir, WEIGHTS_FILE);
	if (weights_save_file(path, &sm->learned, err, sizeof(err)) < 0)
		log_err("cannot save the learned weights: %s; they are lost at a restart", err);
}

int weights_load_state(struct sm *sm, char *err, size_t errlen)
{
	char path[4096], aside[4200];
	if (!sm->cfg.state_dir[0] || sm->cfg.wlearn_period_s <= 0)
		return 0;	/* learning off: the policy's weights alone */
	snprintf(path, sizeof(path), "%s/%s", sm->cfg.state_dir, WEIGHTS_FILE);
	int rc = weights_load_file(path, &sm->learned, err, errlen);
	if (rc == 0) {
		log_notice("%u learned weights loaded from %s", sm->learned.n, path);
		return 0;
	}
	if (rc == 1)
		return 0;
	if (rc == -1)
		return -1;
	/* broken: kept for the operator, learned again from the counters */
	if (wfile_set_aside(path, aside, sizeof(aside)) < 0) {
		size_t l = strlen(err);
		snprintf(err + l, errlen - l, "; and cannot move it aside: %s", strerror(errno));
		return -1;
	}
	log_err("learned weights not loaded: %s (kept as %s; learning again from the policy's weights)",
		err, aside);
	return 0;
}

static void reading_done(struct wlearn *w)
{
	w->reading = 0;
	w->st.readings++;
	if (w->sm->state != SMS_MASTER) {
		reading_free(&w->cur);
		reading_free(&w->prev);
		return;
	}
	if (w->prev.p)
		learn(w);
	reading_free(&w->prev);
	w->prev = w->cur;
	memset(&w->cur, 0, sizeof(w->cur));
}

static void on_counters(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct wreq *q = arg;
	struct wlearn *w = q->w;
	struct wport *p = &w->cur.p[q->i];
	struct pma_counters_ext c;
	char err[128];
	if (status == 0 && pma_ext_decode(resp, len, p->num, &c, err, sizeof(err)) == 0) {
		p->rcv = c.rcv_data;
		p->ok = 1;
	} else if (status != TXN_CANCELLED) {
		log_debug("weight learning: no counters from %s port %u (LID %u): %s",
			  p->name, p->num, p->lid, status ? "no answer" : err);
	}
	if (--w->cur.pending == 0)
		reading_done(w);
}

/* The CA end ports of the model that have a LID, sorted by GUID. */
static int snapshot(struct wlearn *w, struct reading *r)
{
	const struct fabric *f = &w->sm->sub.model->f;
	uint32_t n = 0;
	r->p = calloc(f->n_ports ? f->n_ports : 1, sizeof(*r->p));
	if (!r->p)
		return -1;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *fp = &f->ports[pi];
		const struct fab_node *nd = &f->nodes[fp->node];
		if (nd->type != FAB_CA || !fabric_is_endport(f, pi) || !fp->lid ||
		    (fp->flags & FPORT_NOLID))
			continue;
		struct wport *p = &r->p[n++];
		p->guid = fp->guid ? fp->guid : nd->guid;
		p->lid = fp->lid;
		p->num = fp->num;
		p->node = fp->node;
		snprintf(p->name, sizeof(p->name), "%s", nd->desc);
	}
	r->n = n;
	qsort(r->p, n, sizeof(*r->p), by_guid);
	r->req = calloc(n ? n : 1, sizeof(*r->req));
	return r->req ? 0 : -1;
}

static int start_reading(struct wlearn *w)
{
	struct sm *sm = w->sm;
	struct reading *r = &w->cur;
	if (snapshot(w, r) < 0) {
		reading_free(r);
		log_err("weight learning: out of memory; no reading");
		return -1;
	}
	r->start_ms = clock_ms();
	w->reading = 1;
	r->pending = 1;		/* held until every Get is submitted */
	for (uint32_t i = 0; i < r->n; i++) {
		uint8_t mad[MAD_SIZE];
		struct mad_addr to;
		pma_ext_get(mad, r->p[i].num, r->p[i].lid, &to);
		r->req[i] = (struct wreq){ w, i };
		if (txn_submit(perfmgr_engine(sm), mad, MAD_SIZE, &to, r->p[i].node,
			       on_counters, &r->req[i]) == 0)
			r->pending++;
	}
	if (--r->pending == 0)
		reading_done(w);
	return 0;
}

static int can_read(const struct wlearn *w)
{
	const struct sm *sm = w->sm;
	return sm->cfg.wlearn_period_s > 0 && sm->state == SMS_MASTER &&
	       sm->sub.model && perfmgr_engine(sm) && !w->reading;
}

static void on_period(evutil_socket_t fd, short what, void *arg)
{
	struct wlearn *w = arg;
	struct sm *sm = w->sm;
	if (sm->cfg.wlearn_period_s <= 0)
		return;
	timer_in_ms(w->timer, (uint64_t)sm->cfg.wlearn_period_s * 1000);
	if (sm->state != SMS_MASTER) {
		reading_free(&w->prev);	/* a new mastership starts afresh */
		return;
	}
	if (can_read(w))
		start_reading(w);
}

int weights_learn_now(struct sm *sm)
{
	struct wlearn *w = sm->wlearn;
	if (!w || !can_read(w))
		return -1;
	return start_reading(w);
}

int weights_reading(const struct sm *sm)
{
	return sm->wlearn && sm->wlearn->reading;
}

const struct weights_stats *weights_get_stats(const struct sm *sm)
{
	static const struct weights_stats none;
	return sm->wlearn ? &sm->wlearn->st : &none;
}

void weights_reconfigure(struct sm *sm)
{
	struct wlearn *w = sm->wlearn;
	if (!w || w->period_s == sm->cfg.wlearn_period_s)
		return;
	w->period_s = sm->cfg.wlearn_period_s;
	event_del(w->timer);
	if (sm->cfg.wlearn_period_s > 0)
		timer_in_ms(w->timer, (uint64_t)sm->cfg.wlearn_period_s * 1000);
	else
		reading_free(&w->prev);
}

int weights_init(struct sm *sm)
{
	struct wlearn *w = calloc(1, sizeof(*w));
	if (!w)
		return -1;
	w->sm = sm;
	w->timer = evtimer_new(sm->base, on_period, w);
	w->retry = evtimer_new(sm->base, retry_reroute, w);
	if (!w->timer || !w->retry) {
		if (w->timer)
			event_free(w->timer);
		free(w);
		return -1;
	}
	sm->wlearn = w;
	weights_reconfigure(sm);
	return 0;
}

void weights_free(struct sm *sm)
{
	struct wlearn *w = sm->wlearn;
	if (!w)
		return;
	event_free(w->timer);
	event_free(w->retry);
	reading_free(&w->prev);
	reading_free(&w->cur);
	free(w);
	sm->wlearn = NULL;
}
