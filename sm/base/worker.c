/* A thread for one piece of work, its end told to the loop (sm/base/worker.h). */
#include "sm/base/worker.h"

#include <errno.h>
#include <event2/event.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "sm/base/cpu.h"
#include "sm/base/log.h"

void worker_init(struct worker *w)
{
	memset(w, 0, sizeof(*w));
	w->evfd = -1;
}

static void *thread_main(void *arg)
{
	struct worker *w = arg;
	uint64_t one = 1;
	w->run(w->arg);
	if (write(w->evfd, &one, sizeof(one)) < 0)
		log_err("worker: cannot wake the loop: %s", strerror(errno));
	return NULL;
}

/* The loop: the thread is over; joined, then done (which may free w). */
static void on_end(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;
	(void)fd;
	(void)what;
	pthread_join(w->th, NULL);
	w->started = 0;
	w->done(w->arg);
}

int worker_start(struct worker *w, struct event_base *base,
		 void (*run)(void *), void (*done)(void *), void *arg)
{
	w->run = run;
	w->done = done;
	w->arg = arg;
	if (w->evfd < 0)
		w->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->evfd < 0)
		return -1;
	if (!w->ev)
		w->ev = event_new(base, w->evfd, EV_READ, on_end, w);
	if (!w->ev || event_add(w->ev, NULL) < 0) {
		errno = ENOMEM;
		return -1;
	}
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	cpu_worker_attr(&attr);	/* not on the MAD path's CPU */
	int rc = pthread_create(&w->th, &attr, thread_main, w);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		event_del(w->ev);
		errno = rc;
		return -1;
	}
	w->started = 1;
	return 0;
}

void worker_join(struct worker *w)
{
	if (!w->started)
		return;
	pthread_join(w->th, NULL);
	w->started = 0;
}

void worker_free(struct worker *w)
{
	worker_join(w);
	if (w->ev)
		event_free(w->ev);
	if (w->evfd >= 0)
		close(w->evfd);
	w->ev = NULL;
	w->evfd = -1;
}
