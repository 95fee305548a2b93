/*
 * ibsmd --offline (sm/offline.c): a driver of its own beside the daemon.
 */
#ifndef IBSMD_OFFLINE_H
#define IBSMD_OFFLINE_H

#include <stdint.h>

struct config;

struct offline_opts {
	const char *topo;		/* --offline FILE */
	const char *dump_lfts;		/* --dump-lfts FILE */
	const char *dump_topology;	/* --dump-topology FILE */
	const char *dump_sls;		/* --dump-sls FILE */
	const char *dot;		/* --dot FILE */
	int verify;			/* --verify */
	const char *pattern;		/* --pattern hotspot:DEST[,N] or FILE */
	const char *mig_src, *mig_dst;	/* --migrate SRC DST */
	int scheme, method;		/* --scheme, --method */
	const char *jobs;		/* --jobs TRACE (sm/offjobs.h) */
	uint32_t first, cpus_per_node;	/* --first N, --cpus-per-node C */
	uint64_t seed;			/* --seed S */
	const char *receivers;		/* --receivers FILE|random:R[,PARTITION] */
	uint32_t receiver_weight;	/* --receiver-weight W */
	int mig_pattern;		/* --migrate-pattern (enum migpat), -1: none */
	uint32_t population;		/* --population PCT */
	int initial_uniform;		/* --initial uniform (else random) */
};

/*
 * The exit status: 0, 1 (a check failed or an error, said why), 2
 * (--pattern or --receivers unreadable, or naming no CA; a
 * --migrate-pattern the topology cannot carry).
 */
int offline_run(const struct config *cfg, const struct offline_opts *o);

#endif
