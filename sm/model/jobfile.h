/*
 * The live jobs in the state directory (STATE_DIR/jobs, sm/jobs.h): what
 * a job start said -- its ID, its nodes' port GUIDs in rank order with
 * the names given, its pattern (and the flows' text of a pattern file),
 * its seed and its place in the start order -- so that a restart, or a
 * standby sharing the directory that becomes master, routes the same
 * jobs again, in the same order, to the same entries.  One JSON document,
 * replaced atomically (sm/base/wfile.h).
 */
#ifndef IBSMD_JOBFILE_H
#define IBSMD_JOBFILE_H

#include <stddef.h>
#include <stdint.h>

#define JOB_ID_LEN 64		/* a job's ID, its NUL included */
#define JOB_PATTERN_LEN 32	/* ring, 2dnn, 3dnn, random:K, alltoall, file */
#define JOBFILE_MAX_BYTES (64LL << 20)	/* 1024 jobs of 16k nodes */

struct job_spec {
	char id[JOB_ID_LEN];
	uint64_t order;		/* start order, from 1 */
	uint64_t seed;		/* random:K's */
	uint64_t started;	/* wall clock, seconds */
	char pattern[JOB_PATTERN_LEN];	/* "file": text holds the flows */
	char *text;		/* malloc'd, or NULL */
	uint32_t n;		/* ranks */
	uint64_t *guid;		/* port GUID of rank r */
	char **name;		/* the name rank r was given by */
};

/* A job ID: 1..JOB_ID_LEN-1 letters, digits, '.', '_', '-'. */
int job_id_ok(const char *id);
void job_spec_free(struct job_spec *s);

/*
 * Writes the n specs s[0..n) to path atomically.  0, or -1 with err.
 */
int jobfile_save(const char *path, struct job_spec *const *s, size_t n,
		 char *err, size_t errlen);
/*
 * Reads path into *out (n specs, malloc'd; each freed with
 * job_spec_free, then the array).  0 (an absent file: none), -1 with err
 * (it cannot be read), -2 with err (it is not a jobs file: corrupt).
 */
int jobfile_load(const char *path, struct job_spec **out, size_t *n,
		 char *err, size_t errlen);

#endif
