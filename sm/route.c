#include "route.h"

#include <errno.h>
#include <event2/event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

int sm_route(const struct config *c, const char *override,
	     const struct fabric *f, struct lft_tables *t, const char **used,
	     uint64_t *ms)
{
	struct config tmp;
	const struct config *use = c;
	char err[256];
	if (override) {
		tmp = *c;
		if (config_set_engines(&tmp, override, err, sizeof(err)) < 0) {
			log_err("routing: %s", err);
			return -1;
		}
		use = &tmp;
	}
	struct route_opts o = { .n_roots = use->n_roots, .roots = use->roots };
	for (int i = 0; i < use->n_engines; i++) {
		const struct routing_engine *e = routing_engine_find(use->engines[i]);
		if (!e) {
			log_warn("routing: engine '%s' is not available (have: %s)%s",
				 use->engines[i], routing_engine_names(),
				 i + 1 < use->n_engines ? "; trying the next" : "");
			continue;
		}
		lft_tables_free(t);
		if (lft_tables_alloc(t, f) < 0) {
			log_err("routing: out of memory");
			return -1;
		}
		uint64_t t0 = now_us();
		err[0] = '\0';
		int rc = e->route(f, &o, t, err, sizeof(err));
		*ms = (now_us() - t0 + 500) / 1000;
		if (rc == 0) {
			*used = e->name;
			return 0;
		}
		log_warn("routing: %s failed: %s%s", e->name, err,
			 i + 1 < use->n_engines ? "; trying the next" : "");
	}
	log_err("routing: no engine could route the fabric");
	return -1;
}

struct route_job {
	struct fabric snap;	/* the thread's own copy */
	struct config cfg;
	char override[512];
	int has_override;
	struct lft_tables t;
	const char *used;
	uint64_t ms;
	int rc;
	int evfd;
	struct event *ev;
	pthread_t thread;
	route_done_fn done;
	void *arg;
};

static void *route_thread(void *arg)
{
	struct route_job *j = arg;
	j->rc = sm_route(&j->cfg, j->has_override ? j->override : NULL,
			 &j->snap, &j->t, &j->used, &j->ms);
	uint64_t one = 1;
	if (write(j->evfd, &one, sizeof(one)) < 0)
		log_err("routing: cannot wake the loop: %s", strerror(errno));
	return NULL;
}

static void job_free(struct route_job *j)
{
	if (j->ev)
		event_free(j->ev);
	if (j->evfd >= 0)
		close(j->evfd);
	fabric_free(&j->snap);
	lft_tables_free(&j->t);
	free(j);
}

static void on_routed(evutil_socket_t fd, short what, void *arg)
{
	struct route_job *j = arg;
	(void)fd;
	(void)what;
	pthread_join(j->thread, NULL);
	route_done_fn done = j->done;
	void *darg = j->arg;
	int rc = j->rc;
	struct lft_tables t = j->t;
	const char *used = j->used;
	uint64_t ms = j->ms;
	memset(&j->t, 0, sizeof(j->t));
	job_free(j);
	done(darg, rc, &t, used, ms);
	lft_tables_free(&t);	/* unless done took them */
}

struct route_job *route_job_start(struct event_base *base,
				  const struct config *c, const char *override,
				  const struct fabric *f, route_done_fn done,
				  void *arg)
{
	struct route_job *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->evfd = -1;
	j->cfg = *c;
	if (override) {
		snprintf(j->override, sizeof(j->override), "%s", override);
		j->has_override = 1;
	}
	j->done = done;
	j->arg = arg;
	j->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (j->evfd < 0 || fabric_clone(&j->snap, f) < 0) {
		job_free(j);
		return NULL;
	}
	j->ev = event_new(base, j->evfd, EV_READ, on_routed, j);
	if (!j->ev || event_add(j->ev, NULL) < 0 ||
	    pthread_create(&j->thread, NULL, route_thread, j) != 0) {
		job_free(j);
		return NULL;
	}
	return j;
}

void route_job_cancel(struct route_job *j)
{
	if (!j)
		return;
	pthread_join(j->thread, NULL);
	job_free(j);
}
