/* The event hook (see evhook.h). */
#define _GNU_SOURCE
#include "sm/ctl/evhook.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "sm/base/clock.h"
#include "sm/base/log.h"

/* The daemon's variables a program gets; the rest of its environment not. */
static const char *const kept_env[] = { "PATH", "LANG" };
#define N_KEPT	(sizeof(kept_env) / sizeof(kept_env[0]))
/* IBSM_EVENT, IBSM_TIME, IBSM_SEQ, IBSM_SM_GUID */
#define N_OWN	4
#define RATE_WINDOW_MS	60000

/* One event: what a program gets, shared by the recent list and the queue. */
struct hook_ev {
	int refs;
	uint64_t seq;
	char time[32];			/* ISO 8601, UTC */
	char *event;
	char **env;			/* NAME=value, NULL-terminated */
	size_t first_var;		/* env[first_var..]: the event's own */
};

/* A program running. */
struct hook_run {
	struct evhook *h;
	pid_t pid;			/* also its process group */
	int pidfd;
	struct event *exited;		/* the pidfd readable */
	struct event *timer;		/* the timeout, then the SIGKILL */
	int signalled;			/* 0, SIGTERM, SIGKILL: sent so far */
	char event[32];
	struct hook_run *next;
};

struct evhook {
	struct event_base *base;
	char *program;			/* NULL: off */
	int timeout_s, max;
	uint64_t sm_guid;
	uint64_t seq;
	struct hook_ev *recent[EVHOOK_RECENT];	/* a ring, seq order */
	struct hook_ev *queue[EVHOOK_QUEUE];	/* a ring */
	unsigned q_head, q_len;
	struct hook_run *running;
	unsigned n_running;
	uint64_t rate_start_ms;
	unsigned rate_n;
	int spawn_said;			/* the spawn failure logged since configure */
	/* counted */
	uint64_t runs, failed, timeouts, killed, spawn_failed;
	uint64_t dropped_queue, dropped_rate, dropped_reconfigured;
};

static void ev_put(struct hook_ev *e)
{
	if (!e || --e->refs > 0)
		return;
	for (char **v = e->env; v && *v; v++)
		free(*v);
	free(e->env);
	free(e->event);
	free(e);
}

struct evhook *evhook_new(struct event_base *base)
{
	struct evhook *h = calloc(1, sizeof(*h));
	if (h) {
		h->base = base;
		h->timeout_s = 10;
		h->max = 4;
	}
	return h;
}

static void drop_queue(struct evhook *h, uint64_t *count)
{
	while (h->q_len) {
		ev_put(h->queue[h->q_head]);
		h->q_head = (h->q_head + 1) % EVHOOK_QUEUE;
		h->q_len--;
		if (count)
			(*count)++;
	}
}

void evhook_configure(struct evhook *h, const char *program, int timeout_s,
		      int max)
{
	if (!h)
		return;
	int same = (!program || !*program) ? !h->program :
		   h->program && !strcmp(program, h->program);
	if (!same) {
		drop_queue(h, &h->dropped_reconfigured);
		free(h->program);
		h->program = program && *program ? strdup(program) : NULL;
		if (program && *program && !h->program)
			log_err("events.exec: out of memory; no program runs");
	}
	h->timeout_s = timeout_s > 0 ? timeout_s : 1;
	h->max = max > 0 ? max : 1;
	h->spawn_said = 0;
}

void evhook_set_sm_guid(struct evhook *h, uint64_t guid)
{
	if (h)
		h->sm_guid = guid;
}

static char *env_pair(const char *name, const char *value)
{
	char *s;
	if (asprintf(&s, "%s=%s", name, value ? value : "") < 0)
		return NULL;
	return s;
}

static struct hook_ev *ev_make(struct evhook *h, const char *event,
			       const struct evhook_var *vars, size_t n)
{
	struct hook_ev *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->refs = 1;
	e->seq = ++h->seq;
	time_t now = time(NULL);
	struct tm tm;
	if (!gmtime_r(&now, &tm) ||
	    !strftime(e->time, sizeof(e->time), "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(e->time, sizeof(e->time), "?");
	e->event = strdup(event);
	e->env = calloc(N_KEPT + N_OWN + n + 1, sizeof(char *));
	if (!e->event || !e->env) {
		ev_put(e);
		return NULL;
	}
	size_t k = 0;
	for (size_t i = 0; i < N_KEPT; i++) {
		const char *v = getenv(kept_env[i]);
		if (v && !(e->env[k++] = env_pair(kept_env[i], v)))
			goto oom;
	}
	char seq[24], guid[24];
	snprintf(seq, sizeof(seq), "%" PRIu64, e->seq);
	snprintf(guid, sizeof(guid), "0x%016" PRIx64, h->sm_guid);
	if (!(e->env[k++] = env_pair("IBSM_EVENT", event)) ||
	    !(e->env[k++] = env_pair("IBSM_TIME", e->time)) ||
	    !(e->env[k++] = env_pair("IBSM_SEQ", seq)) ||
	    !(e->env[k++] = env_pair("IBSM_SM_GUID", guid)))
		goto oom;
	e->first_var = k;
	for (size_t i = 0; i < n; i++)
		if (!(e->env[k++] = env_pair(vars[i].name, vars[i].value)))
			goto oom;
	return e;
oom:
	ev_put(e);
	return NULL;
}

static void run_free(struct evhook *h, struct hook_run *r)
{
	for (struct hook_run **p = &h->running; *p; p = &(*p)->next)
		if (*p == r) {
			*p = r->next;
			break;
		}
	h->n_running--;
	if (r->exited)
		event_free(r->exited);
	if (r->timer)
		event_free(r->timer);
	close(r->pidfd);
	free(r);
}

static void start_queued(struct evhook *h);

/* The pidfd is readable: the program ended. */
static void on_exited(evutil_socket_t fd, short what, void *arg)
{
	struct hook_run *r = arg;
	struct evhook *h = r->h;
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	if (waitid((idtype_t)P_PIDFD, (id_t)fd, &si, WEXITED | WNOHANG) < 0) {
		log_limited(LOG_WARN, "event hook: waitid: %s", strerror(errno));
	} else if (si.si_pid == 0) {
		return;			/* not yet: the event fires again */
	} else if (r->signalled) {
		/* counted at the timeout */
	} else if (si.si_code != CLD_EXITED || si.si_status != 0) {
		h->failed++;
		log_limited(LOG_WARN, "event hook %s %s: %s %d", h->program ?
			    h->program : "(off)", r->event,
			    si.si_code == CLD_EXITED ? "exited with status" :
			    "killed by signal", si.si_status);
	}
	run_free(h, r);
	start_queued(h);
}

/* The timeout: SIGTERM to the program's group, EVHOOK_KILL_S later SIGKILL. */
static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct hook_run *r = arg;
	struct evhook *h = r->h;
	if (!r->signalled) {
		h->timeouts++;
		log_limited(LOG_WARN, "event hook %s %s: still running after %d s: SIGTERM",
			    h->program ? h->program : "(off)", r->event, h->timeout_s);
		r->signalled = SIGTERM;
		kill(-r->pid, SIGTERM);
		struct timeval tv = { EVHOOK_KILL_S, 0 };
		evtimer_add(r->timer, &tv);
		return;
	}
	if (r->signalled == SIGTERM) {
		h->killed++;
		log_limited(LOG_WARN, "event hook %s %s: still running %d s after SIGTERM: SIGKILL",
			    h->program ? h->program : "(off)", r->event, EVHOOK_KILL_S);
		r->signalled = SIGKILL;
		kill(-r->pid, SIGKILL);
	}
}

/* posix_spawn of the program, in a group of its own; 0 or an errno. */
static int spawn(const struct evhook *h, const struct hook_ev *e, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, dfl;
	char *argv[] = { h->program, e->event, NULL };
	int rc;

	if ((rc = posix_spawn_file_actions_init(&fa)) != 0)
		return rc;
	if ((rc = posix_spawnattr_init(&at)) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return rc;
	}
	sigemptyset(&none);
	/* what the daemon ignores (SIGPIPE) the program does not */
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGCHLD);
	sigaddset(&dfl, SIGHUP);
	if ((rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)) ||
	    (rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3)) ||
	    (rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
					   POSIX_SPAWN_SETSIGMASK |
					   POSIX_SPAWN_SETSIGDEF)) ||
	    (rc = posix_spawnattr_setpgroup(&at, 0)) ||
	    (rc = posix_spawnattr_setsigmask(&at, &none)) ||
	    (rc = posix_spawnattr_setsigdefault(&at, &dfl)) == 0)
		rc = posix_spawn(pid, h->program, &fa, &at, argv, e->env);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

/* Runs e now; 0, or -1 when it could not start (counted, logged). */
static int run(struct evhook *h, struct hook_ev *e)
{
	pid_t pid;
	int rc = spawn(h, e, &pid);
	if (rc) {
		h->spawn_failed++;
		if (!h->spawn_said) {
			h->spawn_said = 1;
			log_err("events.exec: cannot run %s: %s (said once until the policy is reloaded)",
				h->program, strerror(rc));
		}
		return -1;
	}
	struct hook_run *r = calloc(1, sizeof(*r));
	int fd = pidfd_open(pid, 0);
	if (!r || fd < 0) {
		/* unwatched it would outlive its timeout: stopped at once */
		log_limited(LOG_ERROR, "event hook %s %s: %s; stopped", h->program,
			    e->event, !r ? "out of memory" : strerror(errno));
		kill(-pid, SIGKILL);
		waitpid(pid, NULL, 0);
		if (fd >= 0)
			close(fd);
		free(r);
		h->spawn_failed++;
		return -1;
	}
	h->runs++;
	r->h = h;
	r->pid = pid;
	r->pidfd = fd;
	snprintf(r->event, sizeof(r->event), "%s", e->event);
	r->exited = event_new(h->base, fd, EV_READ | EV_PERSIST, on_exited, r);
	r->timer = evtimer_new(h->base, on_timeout, r);
	r->next = h->running;
	h->running = r;
	h->n_running++;
	struct timeval tv = { h->timeout_s, 0 };
	if (!r->exited || !r->timer || event_add(r->exited, NULL) < 0 ||
	    evtimer_add(r->timer, &tv) < 0) {
		log_limited(LOG_ERROR, "event hook %s %s: cannot watch it; stopped",
			    h->program, e->event);
		kill(-pid, SIGKILL);
		waitpid(pid, NULL, 0);
		run_free(h, r);
		return -1;
	}
	return 0;
}

static void start_queued(struct evhook *h)
{
	while (h->q_len && h->program && h->n_running < (unsigned)h->max) {
		struct hook_ev *e = h->queue[h->q_head];
		h->q_head = (h->q_head + 1) % EVHOOK_QUEUE;
		h->q_len--;
		run(h, e);
		ev_put(e);
	}
}

/* Within EVHOOK_PER_MINUTE events accepted this minute? */
static int rate_ok(struct evhook *h)
{
	uint64_t now = clock_ms();
	if (!h->rate_start_ms || now - h->rate_start_ms >= RATE_WINDOW_MS) {
		h->rate_start_ms = now;
		h->rate_n = 0;
	}
	return h->rate_n++ < EVHOOK_PER_MINUTE;
}

void evhook_emit(struct evhook *h, const char *event,
		 const struct evhook_var *vars, size_t n)
{
	if (!h)
		return;
	if (n > EVHOOK_MAX_VARS)
		n = EVHOOK_MAX_VARS;
	struct hook_ev *e = ev_make(h, event, vars, n);
	if (!e) {
		log_limited(LOG_ERROR, "event hook: out of memory; event %s not kept", event);
		return;
	}
	struct hook_ev **slot = &h->recent[e->seq % EVHOOK_RECENT];
	ev_put(*slot);
	*slot = e;
	e->refs++;
	if (!h->program) {
		ev_put(e);
		return;
	}
	if (!rate_ok(h)) {
		h->dropped_rate++;
		log_limited(LOG_WARN, "event hook: more than %d events in a minute: %s dropped",
			    EVHOOK_PER_MINUTE, event);
	} else if (h->n_running < (unsigned)h->max && !h->q_len) {
		run(h, e);
	} else if (h->q_len == EVHOOK_QUEUE) {
		h->dropped_queue++;
		log_limited(LOG_WARN, "event hook: %u programs running and %d events waiting: %s dropped",
			    h->n_running, EVHOOK_QUEUE, event);
	} else {
		h->queue[(h->q_head + h->q_len++) % EVHOOK_QUEUE] = e;
		return;			/* the queue holds the reference */
	}
	ev_put(e);
}

static json_t *ev_json(const struct hook_ev *e)
{
	json_t *vars = json_object();
	for (char **v = e->env + e->first_var; *v; v++) {
		const char *eq = strchr(*v, '=');
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)(eq - *v), *v);
		json_object_set_new(vars, name, json_string(eq + 1));
	}
	return json_pack("{s:s,s:I,s:s,s:o}", "time", e->time, "seq",
			 (json_int_t)e->seq, "event", e->event, "vars", vars);
}

json_t *evhook_to_ctl(const struct evhook *h)
{
	json_t *recent = json_array();
	uint64_t first = h->seq > EVHOOK_RECENT ? h->seq - EVHOOK_RECENT + 1 : 1;
	for (uint64_t s = first; s <= h->seq; s++) {
		const struct hook_ev *e = h->recent[s % EVHOOK_RECENT];
		if (e && e->seq == s)
			json_array_append_new(recent, ev_json(e));
	}
	json_t *o = json_pack("{s:o,s:i,s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:i,s:i}",
			      "program", h->program ? json_string(h->program) : json_null(),
			      "timeout_s", h->timeout_s, "max", h->max,
			      "emitted", (json_int_t)h->seq,
			      "runs", (json_int_t)h->runs,
			      "failed", (json_int_t)h->failed,
			      "timeouts", (json_int_t)h->timeouts,
			      "killed", (json_int_t)h->killed,
			      "spawn_failed", (json_int_t)h->spawn_failed,
			      "running", (int)h->n_running, "queued", (int)h->q_len);
	json_object_set_new(o, "dropped", json_integer((json_int_t)(h->dropped_queue +
				h->dropped_rate + h->dropped_reconfigured)));
	json_object_set_new(o, "dropped_by", json_pack("{s:I,s:I,s:I}",
			    "queue_full", (json_int_t)h->dropped_queue,
			    "rate", (json_int_t)h->dropped_rate,
			    "reconfigured", (json_int_t)h->dropped_reconfigured));
	json_object_set_new(o, "recent", recent);
	return o;
}

void evhook_free(struct evhook *h)
{
	if (!h)
		return;
	drop_queue(h, NULL);
	while (h->running) {
		kill(-h->running->pid, SIGTERM);
		run_free(h, h->running);
	}
	for (unsigned i = 0; i < EVHOOK_RECENT; i++)
		ev_put(h->recent[i]);
	free(h->program);
	free(h);
}
