/*
 * VOQsw ("VOQsw: A Methodology to Reduce HOL Blocking in InfiniBand
 * Networks", Section 3): service levels and
 * SL-to-VL tables that give each VL at a switch output the meaning "the
 * output port of the next switch", so packets bound for different ports
 * downstream do not block each other (virtual output queuing out of
 * stock IBA switches).  Pure: no I/O, no MADs.
 *
 * The five stages, after routing:
 *   1. the 4-tuples (switch, input port, output port, output port at the
 *      next switch) the routes use;
 *   2. each weighted by the paths that use it;
 *   3. sorted by weight, heaviest first (ties in a fixed order);
 *   4. ComputeSLs for the x heaviest tuples, x raised until the SLs run
 *      out (partial VOQ keeps x - 1): greedy lowest free SL per path;
 *   5. SL-to-VL tables: each considered tuple's SLs map to the VL of its
 *      next output port (ports grouped onto VLs when there are fewer VLs
 *      than ports), the other SLs spread uniformly over the VLs.
 * Deterministic for a given fabric and routing.
 */
#ifndef IBSMD_VOQSW_H
#define IBSMD_VOQSW_H

#include "routing/engine.h"

/* The most SLs voqsw_full_sls() tries (offline: no fabric has them). */
#define VOQSW_MAX_SLS 1024

struct voqsw_params {
	unsigned n_sls;		/* SLs 0..n_sls-1 for VOQsw, 1..QOS_SLS */
	unsigned n_vls;		/* data VLs 0..n_vls-1, 1..15 */
	unsigned max_op_vls;	/* ports.max_op_vls (1..5) bounding each
				   link's VLs with VLCap; 0: VLCap alone */
};

struct voqsw_report {
	uint64_t paths;		/* (source CA port, destination CA LID) */
	uint32_t tuples;	/* x_max: tuples with weight > 0 */
	uint32_t considered;	/* x: the heaviest tuples that got VOQ */
	uint64_t weight;	/* sum of all tuples' weights */
	uint64_t weight_considered;
	uint64_t paths_covered;	/* paths whose every tuple is considered */
	unsigned sls_used;	/* distinct SLs in the assignment */
};

/*
 * Fills t's QoS fields (routing/engine.h), replacing any there: each CA
 * port's LIDs form their own source class; SL per (source port,
 * destination LID) from stage 4 (SL 0 to switch LIDs and within a
 * switch); SL-to-VL tables per switch (in, out) pair, port 0 included,
 * and per CA port, from stage 5.  Returns 0 with *r filled, or -1
 * (parameters out of range, ENOMEM: t's QoS fields are then cleared).
 */
int voqsw_apply(const struct fabric *f, struct lft_tables *t,
		const struct voqsw_params *p, struct voqsw_report *r);

/*
 * Stages 1-4 with up to VOQSW_MAX_SLS SLs: the SLs full VOQ needs
 * (the paper's Table 1, "unbounded number of SLs"), in *sls.  Returns
 * 0, or -1 (ENOMEM, or more than VOQSW_MAX_SLS needed).
 */
int voqsw_full_sls(const struct fabric *f, const struct lft_tables *t,
		   unsigned *sls, struct voqsw_report *r);

#endif
