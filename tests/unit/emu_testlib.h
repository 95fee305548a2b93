/*
 * Shared by the tests that run the SM on the emulator: the fabric they
 * use, the devices' state read back, the harness of a test's SM on its
 * emulated fabric (struct emu_run: emu_run_open, emu_run_sweeps,
 * emu_run_free) and the loop runners.
 * Header-only, static functions: each test program includes it once.
 */
#ifndef IBSMD_EMU_TESTLIB_H
#define IBSMD_EMU_TESTLIB_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <event2/event.h>
#include <jansson.h>

#include "mad/dispatch.h"
#include "mad/emu/emu.h"
#include "sm/daemon.h"
#include "sm/base/fabric.h"
#include "sm/base/log.h"
#include "sm/base/topo.h"
#include "sm/ctl/metrics.h"
#include "sm/oneshot.h"
#include "sm/sa/paths.h"
#include "traps/notice.h"
#include "traps/host/saclient.h"

/* 2 spines, 4 leaves, 3 hosts a leaf (H0..H11, CA GUID 0x1000 + 4h) */
static inline char *emu_tree_text(void)
{
	size_t cap = 32768, n = 0;
	char *t = malloc(cap);
	ck_assert_ptr_nonnull(t);
#define PUT(...) (n += (size_t)snprintf(t + n, cap - n, __VA_ARGS__))
	for (int l = 0; l < 4; l++) {
		PUT("switchguid=0x%x\nSwitch\t8 \"L%d\"\n", 0x100 + l, l);
		for (int h = 0; h < 3; h++)
			PUT("[%d]\t\"H%d\"[1]\n", h + 1, l * 3 + h);
		PUT("[7]\t\"S0\"[%d]\n[8]\t\"S1\"[%d]\n\n", l + 1, l + 1);
	}
	for (int s = 0; s < 2; s++) {
		PUT("switchguid=0x%x\nSwitch\t8 \"S%d\"\n", 0x200 + s, s);
		for (int l = 0; l < 4; l++)
			PUT("[%d]\t\"L%d\"[%d]\n", l + 1, l, 7 + s);
		PUT("\n");
	}
	for (int h = 0; h < 12; h++)
		PUT("caguid=0x%x\nHca\t1 \"H%d\"\n[1]\t\"L%d\"[%d]\n\n",
		    0x1000 + 4 * h, h, h / 3, h % 3 + 1);
#undef PUT
	ck_assert_uint_lt(n, cap);
	return t;
}

/* topo: the tree of emu_tree_text(), parsed. */
static inline void emu_tree_parse(struct fabric *topo)
{
	char err[256] = "", *text = emu_tree_text();
	fabric_init(topo);
	ck_assert_msg(topo_parse_string(topo, text, "tree.net", err, sizeof(err)) == 0,
		      "%s", err);
	free(text);
}

/* The fabric of text (freed) in topo and on an emulator seeded with seed. */
static inline struct emu *emu_text_new(struct fabric *topo, char *text,
				       uint64_t seed)
{
	char err[256] = "";
	fabric_init(topo);
	ck_assert_msg(topo_parse_string(topo, text, "test.net", err, sizeof(err)) == 0,
		      "%s", err);
	free(text);
	struct emu *e = emu_new(topo, err, sizeof(err));
	ck_assert_msg(e != NULL, "%s", err);
	emu_set_seed(e, seed);
	return e;
}

/* The tree of emu_tree_text() in topo and on an emulator seeded with seed. */
static inline struct emu *emu_tree_new(struct fabric *topo, uint64_t seed)
{
	return emu_text_new(topo, emu_tree_text(), seed);
}

/*
 * The devices' state: every port's state and LID (and SM LID when
 * with_smlid), every LFT entry of LIDs 1..40.  Read from the emulated
 * devices, never from the SM's memory.
 */
static inline char *emu_device_state(const struct emu *e, const struct fabric *f,
			      int with_smlid)
{
	size_t cap = 1 << 20, n = 0;
	char *s = malloc(cap);
	ck_assert_ptr_nonnull(s);
	s[0] = '\0';
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		for (int p = nd->type == FAB_SWITCH ? 0 : 1; p <= nd->nports; p++) {
			n += (size_t)snprintf(s + n, cap - n, "%llx[%d] state %d lid %d",
				(unsigned long long)nd->guid, p,
				emu_port_state(e, nd->guid, p),
				emu_port_lid(e, nd->guid, p));
			if (with_smlid)
				n += (size_t)snprintf(s + n, cap - n, " smlid %d",
						      emu_port_smlid(e, nd->guid, p));
			n += (size_t)snprintf(s + n, cap - n, "\n");
		}
		if (nd->type != FAB_SWITCH)
			continue;
		for (uint32_t lid = 1; lid <= 40; lid++)
			n += (size_t)snprintf(s + n, cap - n, "%llx lid %u -> %d\n",
				(unsigned long long)nd->guid, lid,
				emu_lft_entry(e, nd->guid, lid));
	}
	ck_assert_uint_lt(n, cap);
	return s;
}

/*
 * A configured emulated fabric with no SM running: ibsmd brings the tree
 * up once from H0 (LIDs, LFTs, every port Active, SM LID = H0's) and
 * detaches, so that tests can attach hosts (and a stand-in SA on H0).
 */
struct emu_net {
	struct fabric topo;
	struct emu *e;
	struct event_base *base;
	uint32_t sm_lid;
	char state[64];
};

/*
 * A test's emulated fabric (emu_world_open): name names its state
 * directory, /tmp/ibsmd-<name>.XXXXXX; text is the fabric (freed; NULL:
 * emu_tree_text()); tweak changes the parsed topology before the
 * emulator is made (NULL: none); seed seeds the emulator.  The log level
 * is LOG_ERROR, or debug_level when the environment variable debug_env
 * (NULL: none) is set.
 */
struct emu_world_opts {
	const char *name;
	char *text;
	void (*tweak)(struct fabric *topo);
	uint64_t seed;
	const char *debug_env;
	int debug_level;
};

/* The fabric of o in topo, its emulator, an event base and a state dir. */
static inline void emu_world_open(struct fabric *topo, struct emu **e,
				  struct event_base **base, char *state,
				  size_t state_len, const struct emu_world_opts *o)
{
	char err[256] = "", *text = o->text ? o->text : emu_tree_text();
	fabric_init(topo);
	ck_assert_msg(topo_parse_string(topo, text, "test.net", err, sizeof(err)) == 0,
		      "%s", err);
	free(text);
	if (o->tweak)
		o->tweak(topo);
	*e = emu_new(topo, err, sizeof(err));
	ck_assert_msg(*e != NULL, "%s", err);
	emu_set_seed(*e, o->seed);
	*base = event_base_new();
	ck_assert_ptr_nonnull(*base);
	snprintf(state, state_len, "/tmp/ibsmd-%s.XXXXXX", o->name);
	ck_assert_ptr_nonnull(mkdtemp(state));
	log_set_level(o->debug_env && getenv(o->debug_env) ? o->debug_level : LOG_ERROR);
}

/*
 * An SM for a test on the emulator: the policy's defaults, MAD timeout
 * mad_timeout_ms, no light sweeps (only traps and the test sweep), its
 * state in state_dir.  Adjust sm->cfg before emu_sm_start().
 */
static inline struct sm *emu_sm_new(const char *state_dir,
				    unsigned mad_timeout_ms)
{
	struct sm *sm = calloc(1, sizeof(*sm));
	ck_assert_ptr_nonnull(sm);
	config_defaults(&sm->cfg);
	sm->cfg.mad_timeout_ms = mad_timeout_ms;
	sm->cfg.sweep_interval_s = 0;
	snprintf(sm->cfg.state_dir, sizeof(sm->cfg.state_dir), "%s", state_dir);
	sm->log_level_override = -1;
	return sm;
}

/* The policy text yaml, read by config_load as the daemon reads its file, over sm->cfg. */
static inline void emu_sm_policy(struct sm *sm, const char *yaml)
{
	char path[64] = "/tmp/ibsmd-policy.XXXXXX", err[512] = "";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, yaml, strlen(yaml)), (int)strlen(yaml));
	close(fd);
	int rc = config_load(&sm->cfg, path, err, sizeof(err));
	unlink(path);
	ck_assert_msg(rc == 0, "policy refused: %s", err);
}

/* Starts sm as the SM of the emulated fabric e, on base. */
static inline void emu_sm_start(struct sm *sm, struct event_base *base,
				struct emu *e)
{
	char err[256] = "";
	ck_assert_msg(sm_init(sm, base, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(sm_start_emulated(sm, e, err, sizeof(err)) == 0, "%s", err);
}

/* sm runs --once (sm/oneshot.h): one configuration, then its loop ends. */
static inline void emu_sm_once(struct sm *sm, struct oneshot *os)
{
	memset(os, 0, sizeof(*os));
	os->once = 1;
	oneshot_watch(sm, os);
}

static inline void emu_net_up(struct emu_net *n)
{
	struct oneshot os;
	memset(n, 0, sizeof(*n));
	emu_world_open(&n->topo, &n->e, &n->base, n->state, sizeof(n->state),
		       &(struct emu_world_opts){ .name = "emunet", .seed = 42 });
	struct sm *sm = emu_sm_new(n->state, 20);
	emu_sm_once(sm, &os);
	emu_sm_start(sm, n->base, n->e);
	ck_assert_int_eq(event_base_dispatch(n->base), 0);
	ck_assert_int_eq(sm->exit_code, 0);
	sm_shutdown(sm);
	free(sm);
	n->sm_lid = (uint32_t)emu_port_lid(n->e, 0x1000, 1);
	ck_assert_uint_gt(n->sm_lid, 0);
	ck_assert_uint_eq(emu_violations(n->e), 0);
}

/* Frees an emulated fabric, its loop and topology, removes the state dir. */
static inline void emu_world_free(struct emu *e, struct event_base *base,
				  struct fabric *topo, const char *state)
{
	char cmd[128];
	emu_free(e);
	event_base_free(base);
	fabric_free(topo);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", state);
	ck_assert_int_eq(system(cmd), 0);
}

/* A test's SM on an emulated fabric: the fabric, emulator, loop, SM. */
#define EMU_RUN_FIELDS							\
	struct fabric topo;						\
	struct emu *e;							\
	struct event_base *base;					\
	struct sm *sm;		/* NULL while none runs */		\
	struct oneshot os;	/* emu_sm_once() */			\
	char state[64]

struct emu_run {
	EMU_RUN_FIELDS;
};

/*
 * The first member of a test's struct run: its emu_run as r->run, for the
 * emu_run_* functions, and the same fields by their names, r->e, r->sm...
 * (a union of the two: one storage).  The test's own fields follow.
 */
#define EMU_RUN union { struct emu_run run; struct { EMU_RUN_FIELDS; }; }

/* r's world (emu_world_open), no SM yet: emu_sm_new(), then emu_sm_start(). */
static inline void emu_run_open(struct emu_run *r, const struct emu_world_opts *o)
{
	memset(r, 0, sizeof(*r));
	emu_world_open(&r->topo, &r->e, &r->base, r->state, sizeof(r->state), o);
}

/* Stops and frees r's SM, if one runs. */
static inline void emu_run_stop_sm(struct emu_run *r)
{
	if (!r->sm)
		return;
	sm_shutdown(r->sm);
	free(r->sm);
	r->sm = NULL;
}

/* Stops and frees r's SM (if one runs), then its world. */
static inline void emu_run_free(struct emu_run *r)
{
	emu_run_stop_sm(r);
	emu_world_free(r->e, r->base, &r->topo, r->state);
}

static inline void emu_net_down(struct emu_net *n)
{
	emu_world_free(n->e, n->base, &n->topo, n->state);
}

/* The port GUID of host H<h> in emu_tree_text() (node GUID + 1). */
static inline uint64_t emu_host_guid(int h)
{
	return 0x1000 + 4 * (uint64_t)h + 1;
}

/* An attached host: its transport and its receive path. */
struct emu_host {
	struct mad_transport t;
	struct mad_dispatch *d;
	uint64_t guid;
	uint32_t lid;
};

static inline void emu_host_recv(void *arg, const uint8_t *mad, size_t len,
			  const struct mad_addr *from, int status)
{
	struct emu_host *h = arg;
	mad_dispatch_input(h->d, mad, len, from, status);
}

/* Attaches hosts H<first> .. H<first + n - 1>, IsSM cleared, as plain hosts. */
static inline void emu_hosts_attach(struct emu_net *n, struct emu_host *hosts,
			     int first, int count)
{
	char err[256] = "";
	for (int i = 0; i < count; i++) {
		struct emu_host *h = &hosts[i];
		memset(h, 0, sizeof(*h));
		h->guid = emu_host_guid(first + i);
		h->d = mad_dispatch_new(&h->t);
		ck_assert_ptr_nonnull(h->d);
		ck_assert_msg(emu_attach(n->e, n->base, h->guid, &h->t, emu_host_recv,
					 h, err, sizeof(err)) == 0, "%s", err);
		ck_assert_int_eq(emu_set_issm(n->e, h->guid, 0), 0);
		h->lid = h->t.lid;
		ck_assert_uint_gt(h->lid, 0);
		ck_assert_uint_eq(h->t.sm_lid, n->sm_lid);
	}
}

static inline void emu_hosts_detach(struct emu_host *hosts, int count)
{
	for (int i = 0; i < count; i++) {
		hosts[i].t.close(hosts[i].t.ctx);
		mad_dispatch_free(hosts[i].d);
	}
}

/* An SA client on a host (traps/host/saclient.h): queries go to its SM LID. */
struct emu_sahost {
	struct mad_transport t;
	struct saclient *c;
	uint64_t guid;
	uint32_t lid;
};

/* Attaches SA clients to hosts H<first> .. H<first + count - 1>, IsSM cleared. */
static inline void emu_sahosts_attach(struct emu_net *n, struct emu_sahost *hosts,
				      int first, int count,
				      const struct saclient_params *p)
{
	char err[256] = "";
	for (int i = 0; i < count; i++) {
		struct emu_sahost *h = &hosts[i];
		memset(h, 0, sizeof(*h));
		h->guid = emu_host_guid(first + i);
		h->c = saclient_new(n->base, &h->t, p);
		ck_assert_ptr_nonnull(h->c);
		ck_assert_msg(emu_attach(n->e, n->base, h->guid, &h->t, saclient_recv,
					 h->c, err, sizeof(err)) == 0, "%s", err);
		ck_assert_int_eq(emu_set_issm(n->e, h->guid, 0), 0);
		h->lid = h->t.lid;
		ck_assert_uint_gt(h->lid, 0);
	}
}

/* One SA query's end (a saclient_done_fn's arguments): its status, its first record. */
struct emu_sa_answer {
	int done, status;
	size_t n;			/* records */
	uint8_t rec[128];		/* the first, cut to 128 bytes */
};

static inline void emu_sa_answered(void *arg, int status, const uint8_t *recs,
				   size_t n, size_t stride, const uint8_t *hdr)
{
	struct emu_sa_answer *a = arg;
	(void)hdr;
	a->done = 1;
	a->status = status;
	a->n = n;
	if (!status && n)
		memcpy(a->rec, recs, stride && stride < sizeof(a->rec) ? stride : sizeof(a->rec));
}

/* Frees the clients (pending queries end -ECANCELED) and detaches. */
static inline void emu_sahosts_detach(struct emu_sahost *hosts, int count)
{
	for (int i = 0; i < count; i++) {
		saclient_free(hosts[i].c);
		hosts[i].c = NULL;
		hosts[i].t.close(hosts[i].t.ctx);
	}
}

/* Runs the loop until done(arg) or ms pass; returns done(arg). */
static inline void emu_loop_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

static inline int emu_run_while(struct event_base *base, int (*done)(const void *),
				const void *arg, unsigned ms)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct event *tick = evtimer_new(base, emu_loop_tick, base);
	ck_assert_ptr_nonnull(tick);
	while (!done(arg)) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		long el = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (el >= (long)ms)
			break;
		struct timeval tv = { 0, 2000 };
		evtimer_add(tick, &tv);
		event_base_loop(base, EVLOOP_ONCE);
	}
	event_free(tick);
	return done(arg);
}

static inline int emu_flag_set(const void *flag)
{
	return *(const int *)flag;
}

/* Runs the loop until *flag is set or ms pass; returns *flag. */
static inline int emu_run_until(struct event_base *base, const int *flag, unsigned ms)
{
	return emu_run_while(base, emu_flag_set, flag, ms);
}

/* The SM has configured once and has no sweep asked for or under way. */
static inline int emu_sm_idle(const void *arg)
{
	const struct sm *sm = arg;
	return sm->sweep.heavy_sweeps >= 1 && (sm->sw.activity == SM_IDLE) && !sm->sw.heavy_wanted;
}

static inline int emu_never(const void *arg)
{
	(void)arg;
	return 0;
}

/* Runs the loop for ms, or until sm is idle when until_idle (asserted). */
static inline void emu_sm_run(struct event_base *base, const struct sm *sm,
			      unsigned ms, int until_idle)
{
	int idle = emu_run_while(base, until_idle ? emu_sm_idle : emu_never, sm, ms);
	if (until_idle)
		ck_assert_msg(idle, "the SM did not settle");
}

/*
 * Runs the loop in whole 2 ms steps until sm is idle (asserted), ms of
 * steps at most: unlike emu_sm_run(), the step in which the SM goes idle
 * runs to its end, with what falls due in it.
 */
static inline void emu_sm_settle(struct event_base *base, const struct sm *sm,
				 unsigned ms)
{
	static const int never = 0;
	/* and no path comparison running: its notices follow the sweep */
	for (unsigned el = 0; el < ms && (!emu_sm_idle(sm) || sm_paths_busy(sm));
	     el += 2)
		emu_run_until(base, &never, 2);
	ck_assert_msg(emu_sm_idle(sm) && !sm_paths_busy(sm), "the SM did not settle");
	emu_run_until(base, &never, 2);	/* what it just sent, delivered */
}

/* An SM and a count of heavy sweeps to wait for. */
struct emu_sweeps {
	const struct sm *sm;
	uint32_t n;
};

/* The SM has done n heavy sweeps and has no sweep asked for or under way. */
static inline int emu_sweeps_done(const void *arg)
{
	const struct emu_sweeps *w = arg;
	return w->sm->sweep.heavy_sweeps >= w->n && (w->sm->sw.activity == SM_IDLE) &&
	       !w->sm->sw.heavy_wanted;
}

/* Runs r's loop until its SM has done n heavy sweeps and is idle (10 s at most). */
static inline void emu_run_sweeps(const struct emu_run *r, uint32_t n)
{
	struct emu_sweeps w = { r->sm, n };
	ck_assert_msg(emu_run_while(r->base, emu_sweeps_done, &w, 10000),
		      "only %u heavy sweeps, waiting for %u", r->sm->sweep.heavy_sweeps, n);
}

#define EMU_SUB_MAXREC 64

/* A port subscribed to every notice (an SA InformInfo Set): what Reports it got. */
struct emu_subscriber {
	struct mad_transport t;
	struct saclient *c;
	uint64_t guid;
	int set_answers, set_status;
	int repath, unpath, other;		/* 69s, 68s, other traps */
	struct notice_path rec[EMU_SUB_MAXREC];	/* the 68s and 69s, in order */
	uint8_t other_gid[EMU_SUB_MAXREC][16];	/* the other traps' GIDs */
};

static inline void emu_subscriber_report(void *arg, const uint8_t *raw,
					 const struct mad_addr *from)
{
	struct emu_subscriber *h = arg;
	struct notice nt;
	(void)from;
	notice_decode(raw, &nt);
	if (nt.trap == TRAP_REPATH || nt.trap == TRAP_UNPATH) {
		int n = h->repath + h->unpath;
		if (n < EMU_SUB_MAXREC)
			notice_get_path(&nt, &h->rec[n]);
		*(nt.trap == TRAP_REPATH ? &h->repath : &h->unpath) += 1;
	} else {
		if (h->other < EMU_SUB_MAXREC)
			notice_get_gid(&nt, h->other_gid[h->other]);
		h->other++;
	}
}

static inline void emu_subscriber_set_done(void *arg, int status,
					   const uint8_t *recs, size_t n,
					   size_t stride, const uint8_t *hdr)
{
	struct emu_subscriber *h = arg;
	(void)recs;
	(void)n;
	(void)stride;
	(void)hdr;
	h->set_answers++;
	h->set_status = status;
}

/* The CA port port_guid, IsSM cleared, subscribes to every generic notice. */
static inline void emu_subscribe(struct emu *e, struct event_base *base,
				 struct emu_subscriber *h, uint64_t port_guid)
{
	char err[256] = "";
	struct saclient_inform ii;
	memset(h, 0, sizeof(*h));
	h->guid = port_guid;
	h->c = saclient_new(base, &h->t, NULL);
	ck_assert_ptr_nonnull(h->c);
	saclient_set_report(h->c, emu_subscriber_report, h);
	ck_assert_msg(emu_attach(e, base, h->guid, &h->t, saclient_recv, h->c,
				 err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(emu_set_issm(e, h->guid, 0), 0);
	ck_assert_uint_gt(h->t.lid, 0);
	saclient_inform_default(&ii, SACLIENT_ALL);
	ck_assert_int_eq(saclient_inform(h->c, &ii, 1, emu_subscriber_set_done, h), 0);
	emu_run_until(base, &h->set_answers, 2000);
	ck_assert_int_eq(h->set_answers, 1);
	ck_assert_int_eq(h->set_status, 0);
}

static inline void emu_subscriber_reset(struct emu_subscriber *h)
{
	h->repath = h->unpath = h->other = 0;
}

static inline void emu_subscriber_free(struct emu_subscriber *h)
{
	saclient_free(h->c);
	h->c = NULL;
	h->t.close(h->t.ctx);
}

/* The metrics' sample "name" or "name{...}" exactly as given; -1 when absent. */
static inline double emu_metric(const struct sm *sm, const char *sample)
{
	size_t len, n = strlen(sample);
	char *text = metrics_render(sm, 0, &len);
	double v = -1;
	ck_assert_ptr_nonnull(text);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, sample, n) && l[n] == ' ') {
			v = strtod(l + n + 1, NULL);
			break;
		}
	free(text);
	return v;
}

static inline double emu_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The log captured: stderr into a file from emu_log_capture() to emu_log_lines(). */
struct emu_log {
	char path[64];
	int saved_fd;
};

/* stderr into a fresh file, the log at level. */
static inline void emu_log_capture(struct emu_log *l, int level)
{
	fflush(stderr);
	snprintf(l->path, sizeof(l->path), "/tmp/ibsmd-emulog.XXXXXX");
	int fd = mkstemp(l->path);
	ck_assert_int_ge(fd, 0);
	l->saved_fd = dup(2);
	dup2(fd, 2);
	close(fd);
	log_set_level(level);
}

/*
 * The captured lines containing needle, once the rate limiter's pending
 * counts are written; stderr back, the log at LOG_ERROR, the file gone.
 */
static inline int emu_log_lines(struct emu_log *l, const char *needle)
{
	char line[2048];
	int n = 0;
	log_rl_flush(1);
	fflush(stderr);
	dup2(l->saved_fd, 2);
	close(l->saved_fd);
	log_set_level(LOG_ERROR);
	FILE *fp = fopen(l->path, "r");
	ck_assert_ptr_nonnull(fp);
	while (fgets(line, sizeof(line), fp))
		n += strstr(line, needle) != NULL;
	fclose(fp);
	unlink(l->path);
	return n;
}

/* ---- the daemon's control socket (sm/ctl/control.h), from a test ---- */

struct emu_ctl_client {
	struct emu_run *r;
	int fd;
	char buf[65536];
	size_t len;
	int done, ticks;
	int stop_when_reading;	/* break once ctl_verify runs, not at the reply */
};

static inline void emu_ctl_on_client(evutil_socket_t fd, short what, void *arg)
{
	struct emu_ctl_client *c = arg;
	if (what & EV_TIMEOUT) {	/* the tick */
		if ((c->stop_when_reading && c->r->sm->ctl_verify) || ++c->ticks > 5000)
			event_base_loopbreak(c->r->base);
		return;
	}
	ssize_t n = read(fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
	if (n <= 0) {
		c->done = -1;
		event_base_loopbreak(c->r->base);
		return;
	}
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	if (memchr(c->buf, '\n', c->len)) {
		c->done = 1;
		event_base_loopbreak(c->r->base);
	}
}

/*
 * Sends one request over the daemon's control socket at path, runs the
 * loop until the reply (stop_when_reading: until ctl_verify runs; NULL).
 */
static inline json_t *emu_ctl_request(struct emu_run *r, const char *path,
				      const char *line, int stop_when_reading)
{
	struct emu_ctl_client c = { .r = r, .stop_when_reading = stop_when_reading };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	c.fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_ge(c.fd, 0);
	ck_assert_int_eq(connect(c.fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(write(c.fd, line, strlen(line)), (ssize_t)strlen(line));
	struct event *rd = event_new(r->base, c.fd, EV_READ | EV_PERSIST, emu_ctl_on_client, &c);
	struct event *tick = event_new(r->base, -1, EV_PERSIST, emu_ctl_on_client, &c);
	struct timeval two_ms = { 0, 2000 };
	event_add(rd, NULL);
	event_add(tick, &two_ms);
	event_base_dispatch(r->base);
	event_free(rd);
	event_free(tick);
	close(c.fd);
	if (stop_when_reading)
		return NULL;
	ck_assert_msg(c.done == 1, "no reply to %s", line);
	json_error_t jerr;
	json_t *reply = json_loads(c.buf, JSON_DISABLE_EOF_CHECK, &jerr);
	ck_assert_msg(reply != NULL, "%s: %s", jerr.text, c.buf);
	return reply;
}


#endif
