/*
 * Standard Workload Format traces (the Parallel Workloads Archive's SWF:
 * one job a line, 18 whitespace-separated numeric fields, -1 where a
 * value is unknown, ';' starting a header or comment line), read and
 * filtered for the offline job replay (ibsmd --offline --jobs, ibsmd(8)).
 * Pure: text in, jobs out.
 *
 * The fields used: 1 job number, 2 submit time, 3 wait time, 4 run time,
 * 5 allocated processors (8, requested processors, when 5 is -1) and 11
 * status.  A job needs ceil(processors / cpus_per_node) nodes (one rank
 * a node); it starts at submit + wait and ends run time later.  Dropped,
 * in this order and each counted: status -1 (cancelled while waiting),
 * run time 0 or unknown, submit or wait time unknown (no start to replay),
 * processors unknown, more nodes than the system has.  Then the first
 * `first` jobs kept (0: all), in the file's order; reading stops there.
 */
#ifndef IBSMD_JOBSIM_SWF_H
#define IBSMD_JOBSIM_SWF_H

#include <stddef.h>
#include <stdint.h>

#define SWF_FIELDS 18

struct swf_job {
	int64_t id;		/* field 1 */
	int64_t start, end;	/* submit + wait, start + run time */
	int64_t procs;		/* field 5 (or 8) */
	uint32_t nodes;		/* ceil(procs / cpus_per_node) */
};

struct swf_filter {
	uint32_t system_nodes;	/* jobs needing more are dropped */
	uint32_t cpus_per_node;	/* >= 1 */
	size_t first;		/* keep the first N after the filter; 0: all */
};

struct swf_stats {
	size_t records;		/* job lines read */
	size_t dropped_status, dropped_run, dropped_time, dropped_procs,
	       dropped_size;
};

/*
 * The jobs of SWF text (name: for messages), filtered by flt, into *out
 * (malloc'd, file order; NULL when none) and *n_out.  0, or -1 with
 * "name:line:column: why" in err (a line without 18 numeric fields) or
 * "out of memory".
 */
int swf_parse(const char *text, const char *name, const struct swf_filter *flt,
	      struct swf_job **out, size_t *n_out, struct swf_stats *st,
	      char *err, size_t errlen);

#endif
