/*
 * Host lists in Slurm's syntax: see hostlist.h.
 */
#include "sm/model/hostlist.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANGE_DIGITS 18		/* fits an unsigned long long */

/* One name into h; -1 with err. */
static int add_name(struct hostlist *h, const char *s, size_t len, char *err,
		    size_t errlen)
{
	if (len == 0) {
		snprintf(err, errlen, "an empty host name");
		return -1;
	}
	if (len >= HOSTLIST_MAX_NAME) {
		snprintf(err, errlen, "a host name longer than %d characters",
			 HOSTLIST_MAX_NAME - 1);
		return -1;
	}
	if (h->n >= HOSTLIST_MAX_NAMES) {
		snprintf(err, errlen, "more than %d hosts", HOSTLIST_MAX_NAMES);
		return -1;
	}
	if ((h->n & (h->n - 1)) == 0) {	/* 0, 1, 2, 4, ...: grow */
		size_t cap = h->n ? h->n * 2 : 1;
		char **nn = realloc(h->name, cap * sizeof(*nn));
		if (!nn)
			goto nomem;
		h->name = nn;
	}
	if (!(h->name[h->n] = strndup(s, len)))
		goto nomem;
	h->n++;
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* A number of at most RANGE_DIGITS digits at *p; -1 with err. */
static int number(const char **p, const char *end, unsigned long long *v,
		  size_t *width, char *err, size_t errlen)
{
	const char *s = *p;
	while (*p < end && isdigit((unsigned char)**p))
		(*p)++;
	*width = (size_t)(*p - s);
	if (*width == 0 || *width > RANGE_DIGITS) {
		snprintf(err, errlen, "'%.*s': a bracket holds numbers and ranges lo-hi",
			 (int)(end - s), s);
		return -1;
	}
	*v = strtoull(s, NULL, 10);
	return 0;
}

static int expand_item(struct hostlist *h, char *prefix, size_t plen,
		       const char *s, const char *end, char *err, size_t errlen);

/*
 * The bracket [b, e) (its content) after prefix[0..plen), then the rest
 * of the item from rest.
 */
static int expand_bracket(struct hostlist *h, char *prefix, size_t plen,
			  const char *b, const char *e, const char *rest,
			  const char *end, char *err, size_t errlen)
{
	const char *p = b;
	while (p < e) {
		unsigned long long lo, hi;
		size_t w, w2;
		if (number(&p, e, &lo, &w, err, errlen) < 0)
			return -1;
		hi = lo;
		if (p < e && *p == '-') {
			p++;
			if (number(&p, e, &hi, &w2, err, errlen) < 0)
				return -1;
			if (hi < lo) {
				snprintf(err, errlen, "range %llu-%llu: its end is below its start",
					 lo, hi);
				return -1;
			}
		}
		if (p < e && *p != ',') {
			snprintf(err, errlen, "'%.*s': a bracket holds numbers and ranges lo-hi",
				 (int)(e - b), b);
			return -1;
		}
		if (p < e)
			p++;
		if (hi - lo >= HOSTLIST_MAX_NAMES) {
			snprintf(err, errlen, "more than %d hosts", HOSTLIST_MAX_NAMES);
			return -1;
		}
		for (unsigned long long v = lo; v <= hi; v++) {
			int n = snprintf(prefix + plen, HOSTLIST_MAX_NAME - plen, "%0*llu",
					 (int)w, v);
			if (n < 0 || (size_t)n >= HOSTLIST_MAX_NAME - plen) {
				snprintf(err, errlen, "a host name longer than %d characters",
					 HOSTLIST_MAX_NAME - 1);
				return -1;
			}
			if (expand_item(h, prefix, plen + (size_t)n, rest, end, err,
					errlen) < 0)
				return -1;
		}
	}
	if (b == e) {
		snprintf(err, errlen, "an empty bracket");
		return -1;
	}
	return 0;
}

/* prefix[0..plen) then the item [s, end), brackets expanded. */
static int expand_item(struct hostlist *h, char *prefix, size_t plen,
		       const char *s, const char *end, char *err, size_t errlen)
{
	const char *o = memchr(s, '[', (size_t)(end - s));
	const char *lit_end = o ? o : end;
	size_t n = (size_t)(lit_end - s);
	if (memchr(s, ']', n)) {
		snprintf(err, errlen, "a ']' without its '['");
		return -1;
	}
	if (plen + n >= HOSTLIST_MAX_NAME) {
		snprintf(err, errlen, "a host name longer than %d characters",
			 HOSTLIST_MAX_NAME - 1);
		return -1;
	}
	memcpy(prefix + plen, s, n);
	plen += n;
	if (!o)
		return add_name(h, prefix, plen, err, errlen);
	const char *c = memchr(o + 1, ']', (size_t)(end - o - 1));
	if (!c) {
		snprintf(err, errlen, "a '[' without its ']'");
		return -1;
	}
	if (memchr(o + 1, '[', (size_t)(c - o - 1))) {
		snprintf(err, errlen, "a bracket inside a bracket");
		return -1;
	}
	return expand_bracket(h, prefix, plen, o + 1, c, c + 1, end, err, errlen);
}

int hostlist_expand(const char *spec, struct hostlist *h, char *err,
		    size_t errlen)
{
	char prefix[HOSTLIST_MAX_NAME];
	const char *p = spec;
	memset(h, 0, sizeof(*h));
	if (!*spec) {
		snprintf(err, errlen, "an empty host list");
		return -1;
	}
	for (;;) {
		/* an item ends at a comma outside brackets */
		const char *q = p;
		int depth = 0;
		while (*q && (depth || *q != ',')) {
			depth += *q == '[';
			depth -= *q == ']' && depth;
			q++;
		}
		if (q == p || expand_item(h, prefix, 0, p, q, err, errlen) < 0) {
			if (q == p)
				snprintf(err, errlen, "an empty host name");
			hostlist_free(h);
			return -1;
		}
		if (!*q)
			return 0;
		p = q + 1;
	}
}

void hostlist_free(struct hostlist *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->name[i]);
	free(h->name);
	h->name = NULL;
	h->n = 0;
}
