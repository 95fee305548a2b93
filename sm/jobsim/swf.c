/* SWF traces read and filtered (sm/jobsim/swf.h). */
#include "sm/jobsim/swf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Field numbers (1-based, as the format's definition counts them). */
enum {
	F_ID = 1, F_SUBMIT = 2, F_WAIT = 3, F_RUN = 4, F_PROCS = 5,
	F_REQ_PROCS = 8, F_STATUS = 11,
};
#define SWF_UNKNOWN (-1)
/* Beyond any job number, time or count (2^53: exact in a double). */
#define SWF_MAX_VALUE 9007199254740992.0
#define SWF_STATUS_CANCELLED_WAITING (-1)

/*
 * The 18 fields of the line at *p (up to '\n' or the end) into v; *p
 * moved past the line.  0, or -1 with the column (1-based) of the
 * offending text in *col (*col past the end: too few fields).
 */
static int read_fields(const char **p, double *v, int *col)
{
	const char *line = *p, *s = line;
	int n = 0;
	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\r')
			s++;
		if (*s == '\0' || *s == '\n')
			break;
		if (n == SWF_FIELDS) {
			*col = (int)(s - line) + 1;
			return -1;
		}
		char *end;
		errno = 0;
		v[n] = strtod(s, &end);
		if (end == s || errno || !isfinite(v[n]) ||
		    v[n] > SWF_MAX_VALUE || v[n] < -SWF_MAX_VALUE ||
		    (*end && *end != ' ' && *end != '\t' && *end != '\r' &&
		     *end != '\n')) {
			*col = (int)(s - line) + 1;
			return -1;
		}
		n++;
		s = end;
	}
	*p = *s ? s + 1 : s;
	if (n < SWF_FIELDS) {
		*col = (int)(s - line) + 1;
		return -1;
	}
	return 0;
}

/* The filter on one record; 1 kept (j filled), 0 dropped (counted). */
static int keep(const double *v, const struct swf_filter *flt,
		struct swf_stats *st, struct swf_job *j)
{
	int64_t status = (int64_t)v[F_STATUS - 1];
	int64_t run = (int64_t)v[F_RUN - 1];
	int64_t submit = (int64_t)v[F_SUBMIT - 1], wait = (int64_t)v[F_WAIT - 1];
	int64_t procs = (int64_t)v[F_PROCS - 1];
	if (procs <= 0)
		procs = (int64_t)v[F_REQ_PROCS - 1];
	if (status == SWF_STATUS_CANCELLED_WAITING) {
		st->dropped_status++;
		return 0;
	}
	if (run <= 0) {		/* 0, or SWF_UNKNOWN */
		st->dropped_run++;
		return 0;
	}
	if (submit < 0 || wait < 0) {
		st->dropped_time++;
		return 0;
	}
	if (procs <= 0) {
		st->dropped_procs++;
		return 0;
	}
	int64_t nodes = (procs + flt->cpus_per_node - 1) / flt->cpus_per_node;
	if (nodes > (int64_t)flt->system_nodes) {
		st->dropped_size++;
		return 0;
	}
	j->id = (int64_t)v[F_ID - 1];
	j->start = submit + wait;
	j->end = j->start + run;
	j->procs = procs;
	j->nodes = (uint32_t)nodes;
	return 1;
}

int swf_parse(const char *text, const char *name, const struct swf_filter *flt,
	      struct swf_job **out, size_t *n_out, struct swf_stats *st,
	      char *err, size_t errlen)
{
	struct swf_job *jobs = NULL;
	size_t n = 0, cap = 0;
	unsigned lineno = 0;
	const char *p = text;
	memset(st, 0, sizeof(*st));
	*out = NULL;
	*n_out = 0;
	while (*p && (!flt->first || n < flt->first)) {
		lineno++;
		const char *s = p;
		while (*s == ' ' || *s == '\t' || *s == '\r')
			s++;
		if (*s == ';' || *s == '\n' || *s == '\0') {
			const char *nl = strchr(s, '\n');
			p = nl ? nl + 1 : s + strlen(s);
			continue;
		}
		double v[SWF_FIELDS];
		int col;
		if (read_fields(&p, v, &col) < 0) {
			snprintf(err, errlen, "%s:%u:%d: not a job record (%d numeric fields)",
				 name, lineno, col, SWF_FIELDS);
			free(jobs);
			return -1;
		}
		st->records++;
		struct swf_job j;
		if (!keep(v, flt, st, &j))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct swf_job *nj = realloc(jobs, nc * sizeof(*nj));
			if (!nj) {
				free(jobs);
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			jobs = nj;
			cap = nc;
		}
		jobs[n++] = j;
	}
	*out = jobs;
	*n_out = n;
	return 0;
}
