/*
 * One piece of work on a thread of its own, off the MAD path's CPU
 * (sm/base/cpu.h), its end told to the loop through an eventfd: run(arg) on
 * the thread, then, on the loop, the thread joined and done(arg) called.
 * The routing job (route.c), the path-record comparison (paths.c) and
 * `ibsmctl topology` (ctltopo.c) run this way, so the SA and the control
 * socket keep answering meanwhile.
 */
#ifndef IBSMD_WORKER_H
#define IBSMD_WORKER_H

#include <pthread.h>

struct event;
struct event_base;

struct worker {
	int evfd;
	struct event *ev;
	pthread_t th;
	int started;		/* a thread runs or ended unjoined */
	void (*run)(void *arg);
	void (*done)(void *arg);
	void *arg;
};

/* Nothing started: worker_join and worker_free are no-ops. */
void worker_init(struct worker *w);
/*
 * Starts run(arg) on a thread; done(arg) follows on base's loop once it
 * ended (done may free what holds w).  0, or -1 with errno (no eventfd,
 * event or thread: nothing runs; worker_free releases what was made).
 */
int worker_start(struct worker *w, struct event_base *base,
		 void (*run)(void *), void (*done)(void *), void *arg);
/* Waits for the thread, if one was started and not joined; done is then
 * never called (a cancel, or a result wanted at once). */
void worker_join(struct worker *w);
/* Releases the event and the eventfd (after worker_join, or in done). */
void worker_free(struct worker *w);

#endif
