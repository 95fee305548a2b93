/*
 * The Prometheus text exposition format's pieces (sm/ctl/metrics.h):
 * the growing text, escaping, families and samples.  Kept apart from the
 * daemon's renderer (metrics.c) so that an owner rendering its own
 * metrics (the performance manager, dFtree) depends on these, not on
 * the renderer that calls it.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/ctl/metrics.h"

size_t metrics_escape(char *out, size_t outlen, const char *in, int label)
{
	size_t n = 0;

	for (const char *s = in; *s != '\0'; s++) {
		char one[2] = { *s, '\0' };
		const char *put = *s == '\\' ? "\\\\" : *s == '\n' ? "\\n" :
				  (*s == '"' && label) ? "\\\"" : one;
		for (; *put != '\0'; put++, n++)
			if (n + 1 < outlen)
				out[n] = *put;
	}
	if (outlen)
		out[n < outlen ? n : outlen - 1] = '\0';
	return n;
}

void mtext_printf(struct mtext *t, const char *fmt, ...)
{
	va_list ap;

	if (t->oom)
		return;
	for (;;) {
		size_t room = t->cap - t->len;
		va_start(ap, fmt);
		int n = vsnprintf(t->buf ? t->buf + t->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->oom = 1;
			return;
		}
		if ((size_t)n < room) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = t->cap ? t->cap * 2 : 4096;
		while (cap - t->len <= (size_t)n)
			cap *= 2;
		char *b = realloc(t->buf, cap);
		if (!b) {
			t->oom = 1;
			return;
		}
		t->buf = b;
		t->cap = cap;
	}
}

/* in escaped into a malloc'd string, NULL on ENOMEM. */
char *mtext_escaped(const char *in, int label)
{
	size_t n = metrics_escape(NULL, 0, in, label);
	char *s = malloc(n + 1);
	if (s)
		metrics_escape(s, n + 1, in, label);
	return s;
}

void mtext_family(struct mtext *t, const char *name, const char *type,
		  const char *help)
{
	char *h = mtext_escaped(help, 0);
	if (!h) {
		t->oom = 1;
		return;
	}
	mtext_printf(t, "# HELP %s %s\n# TYPE %s %s\n", name, h, name, type);
	free(h);
}

void mtext_sample(struct mtext *t, const char *name, const char *label,
		  const char *value, double v)
{
	if (!label) {
		mtext_printf(t, "%s %.15g\n", name, v);
		return;
	}
	char *e = mtext_escaped(value, 1);
	if (!e) {
		t->oom = 1;
		return;
	}
	mtext_printf(t, "%s{%s=\"%s\"} %.15g\n", name, label, e, v);
	free(e);
}

void mtext_labelled(struct mtext *t, const char *name, const char *labels,
		    uint64_t v)
{
	mtext_printf(t, "%s{%s} %llu\n", name, labels, (unsigned long long)v);
}

