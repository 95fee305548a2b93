/*
 * A job's logical communication patterns and their weights
 * (routing/jobs/jobroute.h): ring, 2-D and 3-D nearest neighbours,
 * random:K, all-to-all, explicit rank pairs; w = min(1/out-degree,
 * 1/in-degree) as the paper defines the load a flow puts on a link.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/jobs/jobroute.h"

#define MAX_RANDOM_K 1024

static int job_weights(struct job_flow *fl, size_t n);

struct pairs {
	struct job_flow *v;
	size_t n, cap;
};

static int add_pair(struct pairs *p, uint32_t a, uint32_t b)
{
	if (a == b)
		return 0;
	if (p->n >= JOB_MAX_FLOWS)
		return -2;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 256;
		struct job_flow *v = realloc(p->v, cap * sizeof(*v));
		if (!v)
			return -1;
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = (struct job_flow){ a, b, 0 };
	return 0;
}

static int cmp_pair(const void *a, const void *b)
{
	const struct job_flow *x = a, *y = b;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->dst < y->dst ? -1 : x->dst > y->dst;
}

/* Sorted, duplicates dropped. */
static void dedup(struct pairs *p)
{
	if (!p->n)
		return;
	qsort(p->v, p->n, sizeof(*p->v), cmp_pair);
	size_t m = 1;
	for (size_t i = 1; i < p->n; i++)
		if (cmp_pair(&p->v[i], &p->v[m - 1]))
			p->v[m++] = p->v[i];
	p->n = m;
}

/* The smallest s with s^dim >= n, in integers. */
static uint32_t side_of(uint32_t n, int dim)
{
	uint32_t s = 1;
	for (;;) {
		uint64_t v = 1;
		for (int i = 0; i < dim; i++)
			v *= s;
		if (v >= n)
			return s;
		s++;
	}
}

/* dim-D torus neighbours of rank r (row-major, side s), into p. */
static int grid(struct pairs *p, uint32_t n, int dim)
{
	uint32_t s = side_of(n, dim);
	for (uint32_t r = 0; r < n; r++) {
		uint32_t c[3] = { r % s, (r / s) % s, dim == 3 ? r / (s * s) : 0 };
		for (int d = 0; d < dim; d++)
			for (int sign = -1; sign <= 1; sign += 2) {
				uint32_t k[3] = { c[0], c[1], c[2] };
				k[d] = (k[d] + s + (uint32_t)sign) % s;
				uint64_t q = k[0] + (uint64_t)k[1] * s + (uint64_t)k[2] * s * s;
				if (q >= n)
					continue;	/* an empty point of the grid */
				int rc = add_pair(p, r, (uint32_t)q);
				if (rc < 0)
					return rc;
			}
	}
	return 0;
}

/* splitmix64: a small, seeded, well-mixed generator. */
static uint64_t next_rand(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static int random_k(struct pairs *p, uint32_t n, uint32_t k, uint64_t seed)
{
	if (n < 2)
		return 0;
	if (k >= n - 1) {	/* every other rank */
		for (uint32_t a = 0; a < n; a++)
			for (uint32_t b = 0; b < n; b++) {
				int rc = add_pair(p, a, b);
				if (rc < 0)
					return rc;
			}
		return 0;
	}
	uint32_t *pick = malloc(k * sizeof(*pick));
	if (!pick)
		return -1;
	uint64_t x = seed;
	for (uint32_t a = 0; a < n; a++) {
		uint32_t got = 0;
		while (got < k) {
			uint32_t b = (uint32_t)(next_rand(&x) % n), dup = b == a;
			for (uint32_t i = 0; i < got && !dup; i++)
				dup = pick[i] == b;
			if (!dup)
				pick[got++] = b;
		}
		for (uint32_t i = 0; i < got; i++) {
			int rc = add_pair(p, a, pick[i]);
			if (rc < 0) {
				free(pick);
				return rc;
			}
		}
	}
	free(pick);
	return 0;
}

/* The ranks' pairs mapped to hosts, weighted, into *out. */
static int finish(struct pairs *p, const uint32_t *hosts, struct job_flow **out,
		  size_t *n_out)
{
	dedup(p);
	for (size_t i = 0; i < p->n; i++) {
		p->v[i].src = hosts[p->v[i].src];
		p->v[i].dst = hosts[p->v[i].dst];
	}
	if (job_weights(p->v, p->n) < 0) {
		free(p->v);
		return -1;
	}
	*out = p->n ? p->v : NULL;
	*n_out = p->n;
	if (!p->n)
		free(p->v);
	return 0;
}

static int fail(struct pairs *p, int rc, char *err, size_t errlen, const char *what)
{
	free(p->v);
	if (rc == -2)
		snprintf(err, errlen, "%s: more than %u flows", what, JOB_MAX_FLOWS);
	else
		snprintf(err, errlen, "%s: out of memory", what);
	return -1;
}

int job_pattern(const char *spec, const uint32_t *hosts, uint32_t n, uint64_t seed,
		struct job_flow **out, size_t *n_out, char *err, size_t errlen)
{
	struct pairs p = { 0 };
	int rc = 0;
	*out = NULL;
	*n_out = 0;
	if (!strcmp(spec, "ring")) {
		for (uint32_t r = 0; r < n && n > 1 && rc == 0; r++) {
			rc = add_pair(&p, r, (r + 1) % n);
			if (rc == 0)
				rc = add_pair(&p, r, (r + n - 1) % n);
		}
	} else if (!strcmp(spec, "2dnn")) {
		rc = grid(&p, n, 2);
	} else if (!strcmp(spec, "3dnn")) {
		rc = grid(&p, n, 3);
	} else if (!strcmp(spec, "alltoall")) {
		if ((uint64_t)n * (n > 0 ? n - 1 : 0) > JOB_MAX_FLOWS)
			rc = -2;
		for (uint32_t a = 0; a < n && rc == 0; a++)
			for (uint32_t b = 0; b < n && rc == 0; b++)
				rc = add_pair(&p, a, b);
	} else if (!strncmp(spec, "random:", 7)) {
		char *end;
		errno = 0;
		unsigned long k = strtoul(spec + 7, &end, 10);
		if (errno || end == spec + 7 || *end || !isdigit((unsigned char)spec[7]) ||
		    k < 1 || k > MAX_RANDOM_K) {
			snprintf(err, errlen, "pattern %s: K must be 1..%d", spec, MAX_RANDOM_K);
			return -1;
		}
		if ((uint64_t)n * k > JOB_MAX_FLOWS)
			rc = -2;
		else
			rc = random_k(&p, n, (uint32_t)k, seed);
	} else {
		snprintf(err, errlen,
			 "unknown pattern '%s' (ring, 2dnn, 3dnn, random:K, alltoall, or a file)",
			 spec);
		return -1;
	}
	if (rc < 0)
		return fail(&p, rc, err, errlen, spec);
	if (finish(&p, hosts, out, n_out) < 0) {
		snprintf(err, errlen, "%s: out of memory", spec);
		return -1;
	}
	return 0;
}

int job_pattern_text(const char *text, const uint32_t *hosts, uint32_t n,
		     struct job_flow **out, size_t *n_out, char *err, size_t errlen)
{
	struct pairs p = { 0 };
	*out = NULL;
	*n_out = 0;
	unsigned line = 0;
	for (const char *s = text; s && *s;) {
		const char *eol = strchr(s, '\n');
		size_t len = eol ? (size_t)(eol - s) : strlen(s);
		char buf[128];
		line++;
		if (len >= sizeof(buf)) {
			free(p.v);
			snprintf(err, errlen, "flows line %u: too long", line);
			return -1;
		}
		memcpy(buf, s, len);
		buf[len] = 0;
		s = eol ? eol + 1 : NULL;
		char *hash = strchr(buf, '#');
		if (hash)
			*hash = 0;
		unsigned long a, b;
		char extra;
		int k = sscanf(buf, "%lu %lu %c", &a, &b, &extra);
		if (k <= 0) {
			int blank = 1;
			for (char *c = buf; *c; c++)
				blank &= isspace((unsigned char)*c) != 0;
			if (blank)
				continue;
		}
		if (k != 2 || a >= n || b >= n) {
			free(p.v);
			snprintf(err, errlen, "flows line %u: want \"SRC DST\", ranks 0..%u",
				 line, n ? n - 1 : 0);
			return -1;
		}
		int rc = add_pair(&p, (uint32_t)a, (uint32_t)b);
		if (rc < 0)
			return fail(&p, rc, err, errlen, "flows");
	}
	if (finish(&p, hosts, out, n_out) < 0) {
		snprintf(err, errlen, "flows: out of memory");
		return -1;
	}
	return 0;
}

/* Degree counts by host, through a sort of (host, index) pairs. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* deg[i] = how many flows have the endpoint of flow i (dst: the other end). */
static int degrees(const struct job_flow *fl, size_t n, int dst, uint32_t *deg)
{
	uint64_t *s = malloc((n + 1) * sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < n; i++)
		s[i] = (uint64_t)(dst ? fl[i].dst : fl[i].src) << 32 | i;
	qsort(s, n, sizeof(*s), cmp_u64);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && s[j] >> 32 == s[i] >> 32)
			j++;
		for (size_t k = i; k < j; k++)
			deg[(uint32_t)s[k]] = (uint32_t)(j - i);
		i = j;
	}
	free(s);
	return 0;
}

/* w = min(1/out-degree(src), 1/in-degree(dst)) over fl[0..n); 0, or -1
 * (no memory). */
static int job_weights(struct job_flow *fl, size_t n)
{
	uint32_t *out = malloc((n + 1) * sizeof(*out)), *in = malloc((n + 1) * sizeof(*in));
	int rc = -1;
	if (out && in && degrees(fl, n, 0, out) == 0 && degrees(fl, n, 1, in) == 0) {
		for (size_t i = 0; i < n; i++) {
			uint32_t deg = out[i] > in[i] ? out[i] : in[i];
			fl[i].w = (JOB_LOAD_ONE + deg / 2) / deg;
		}
		rc = 0;
	}
	free(out);
	free(in);
	return rc;
}
