/*
 * The event hook: the policy's `events.exec` program run once per fabric
 * event (ibsmd(8), "EVENT HOOK"), so that a site can page someone or open
 * a ticket.
 *
 * The program is started with posix_spawn(), never through a shell:
 * argv is [program, event], stdin /dev/null, stdout and stderr the
 * daemon's, and its environment only the daemon's PATH and LANG, then
 * IBSM_EVENT, IBSM_TIME (ISO 8601, UTC), IBSM_SEQ, IBSM_SM_GUID and the
 * event's own variables.  It runs in a process group of its own, so
 * that a script's children go with it when it is stopped.
 *
 * Nothing waits on the loop: each child is watched through a pidfd
 * (pidfd_open) with a libevent read event on it, which becomes readable
 * when that child exits, and reaped with waitid(P_PIDFD).  A SIGCHLD
 * handler would be the whole process's: it would need waitpid(-1), which
 * reaps children that are not the hook's (two SMs share a process in the
 * tests; Check forks), and a signal may stand for several exits.
 *
 * At most `events.exec_max` programs run at once; the events past them
 * wait in a queue of EVHOOK_QUEUE and past it are dropped.  A program
 * still running after `events.exec_timeout_s` gets SIGTERM, and
 * EVHOOK_KILL_S seconds later SIGKILL.  Every outcome is counted and
 * shown by `ibsmctl status` ("events"); the last EVHOOK_RECENT events
 * are kept there whether or not a program is set.
 *
 * The owner knows nothing of the SM: the emitters (sm/heavy.c,
 * sm/smstate.c, sm/apply.c) give it each event's variables.  A NULL
 * hook (an SM made without sm_init) takes every call but evhook_to_ctl
 * and does nothing.
 */
#ifndef IBSMD_EVHOOK_H
#define IBSMD_EVHOOK_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct json_t;
struct evhook;

/*
 * Events waiting for a free slot.  A leaf switch lost with its hosts
 * gives one event per node and per link that went with it (a 36-port
 * leaf: about 40 at once); 64 hold such a burst while exec_max programs
 * run, and more than that at once is a power or cabling event the log
 * already shows.
 */
#define EVHOOK_QUEUE	64
/*
 * Events accepted (run or queued) per minute at most: a link that flaps
 * every sweep does not run the program without end.  Past it, dropped.
 */
#define EVHOOK_PER_MINUTE	600
/* Events kept for ibsmctl status and the status page. */
#define EVHOOK_RECENT	32
/* Between SIGTERM at the timeout and SIGKILL. */
#define EVHOOK_KILL_S	2
/* Variables of one event at most (the documented events have 8). */
#define EVHOOK_MAX_VARS	16

struct evhook_var {
	const char *name;
	const char *value;
};

struct evhook *evhook_new(struct event_base *base);
/*
 * The policy's events.exec (NULL or "": no program), exec_timeout_s and
 * exec_max; at start and at each reload.  Events queued for another
 * program are dropped when it changes; a program that cannot be started
 * is logged again once after this.
 */
void evhook_configure(struct evhook *h, const char *program, int timeout_s,
		      int max);
/* Our SM's port GUID, IBSM_SM_GUID (0 until the port is open). */
void evhook_set_sm_guid(struct evhook *h, uint64_t guid);
/*
 * An event happened: kept among the recent ones and, with a program
 * set, run now, queued or dropped.  The strings are copied.
 */
void evhook_emit(struct evhook *h, const char *event,
		 const struct evhook_var *vars, size_t n);
/*
 * For ibsmctl status's "events": program, timeout_s, max, emitted (the
 * events so far), runs, failed (exit status not 0), timeouts, killed
 * (SIGKILL after the timeout), spawn_failed, dropped and dropped_by
 * (queue_full, rate, reconfigured), running, queued, and recent (time,
 * seq, event, vars).
 */
struct json_t *evhook_to_ctl(const struct evhook *h);
/*
 * The queue is dropped and the programs still running get SIGTERM (as
 * systemd's stop would send them), not waited for.
 */
void evhook_free(struct evhook *h);

#endif
