/*
 * The VM registry's file written off the loop (see vmsave.h).
 */
#include "sm/vm/vmsave.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/base/log.h"
#include "sm/base/wfile.h"
#include "sm/base/worker.h"
#include "sm/errors.h"
#include "sm/model/vm.h"

struct vmsave {
	const struct vm_registry *r;
	struct sm_errors *errs;
	struct event_base *base;
	struct event *timer;
	int dirty;		/* changed since the text was last taken */
	/* the write under way */
	struct worker w;
	int writing;
	char *text;
	size_t len;
	char path[sizeof(((struct vm_registry *)0)->path)];
	int rc;
	char err[512];
};

static void report(struct vmsave *s, int rc, const char *err)
{
	if (rc < 0) {
		log_err("cannot save the VM registry: %s", err);
		errors_set(s->errs, SM_ERR_STATE, "cannot save the VM registry: %s", err);
	}
}

/* On the worker: the text into the file, atomically. */
static void write_text(void *arg)
{
	struct vmsave *s = arg;
	struct wfile w;
	s->rc = wfile_open(&w, s->path, s->err, sizeof(s->err));
	if (s->rc < 0)
		return;
	if (fwrite(s->text, 1, s->len, w.fp) != s->len) {
		snprintf(s->err, sizeof(s->err), "%.400s: write error", w.tmp);
		wfile_abort(&w);
		s->rc = -1;
		return;
	}
	s->rc = wfile_commit(&w, s->err, sizeof(s->err));
}

static void arm(struct vmsave *s)
{
	struct timeval tv = { 0, VMSAVE_DELAY_MS * 1000 };
	event_add(s->timer, &tv);
}

/* The write under way is over (joined): its result, and what came since. */
static void ended(struct vmsave *s)
{
	worker_free(&s->w);
	s->writing = 0;
	free(s->text);
	s->text = NULL;
	report(s, s->rc, s->err);
}

static void on_written(void *arg)
{
	struct vmsave *s = arg;
	ended(s);
	if (s->dirty)
		arm(s);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct vmsave *s = arg;
	(void)fd;
	(void)what;
	if (!s->dirty || s->writing)
		return;		/* a write's end arms the timer again */
	snprintf(s->path, sizeof(s->path), "%s", s->r->path);
	worker_init(&s->w);
	if (vm_registry_text(s->r, &s->text, &s->len) < 0 ||
	    worker_start(&s->w, s->base, write_text, on_written, s) < 0) {
		worker_free(&s->w);
		free(s->text);
		s->text = NULL;
		char err[512];
		report(s, vmsave_now(s, err, sizeof(err)), err);
		return;
	}
	s->dirty = 0;
	s->writing = 1;
}

struct vmsave *vmsave_new(struct event_base *base, const struct vm_registry *r,
			  struct sm_errors *errs)
{
	struct vmsave *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->r = r;
	s->errs = errs;
	s->base = base;
	worker_init(&s->w);
	if (!(s->timer = evtimer_new(base, on_timer, s))) {
		free(s);
		return NULL;
	}
	return s;
}

void vmsave_soon(struct vmsave *s)
{
	if (!s->dirty && !s->writing)
		arm(s);
	s->dirty = 1;
}

int vmsave_now(struct vmsave *s, char *err, size_t errlen)
{
	if (s->writing) {
		worker_join(&s->w);
		ended(s);
	}
	event_del(s->timer);
	s->dirty = 0;
	return vm_registry_save(s->r, err, errlen);
}

void vmsave_free(struct vmsave *s)
{
	char err[512];
	if (!s)
		return;
	if (s->dirty || s->writing)
		report(s, vmsave_now(s, err, sizeof(err)), err);
	event_free(s->timer);
	free(s);
}
