/*
 * Partitions at run time: what a policy reload changed in
 * them, the P_Key violations traps 257 report, and ibsmctl partitions.
 */
#ifndef IBSMD_PARTITION_CTL_H
#define IBSMD_PARTITION_CTL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "sm/model/part_resolve.h"

struct config;
struct sm;

/*
 * What differs between the partitions, the weights and the isolation mode
 * of two policies: 0 (the same), or 1 with "partitions, weights" (say) in
 * what.
 */
int part_config_changed(const struct config *a, const struct config *b,
			char *what, size_t len);

/* Traps 257 (Bad P_Key) counted by the port that reported them. */
struct pkey_violation {
	uint64_t guid;		/* the port's GUID */
	uint32_t lid;		/* its LID when it last reported */
	uint8_t port;		/* its port number */
	uint64_t count;
};

struct pkey_violations {
	struct pkey_violation *v;
	uint32_t n, cap;
};

#define PKEY_VIOLATION_PORTS 4096	/* ports counted apart; the rest: other */

/* One more from the end port pi of f (a trap's issuer). */
void pkey_violation_count(struct pkey_violations *pv, const struct fabric *f,
			  uint32_t pi);
void pkey_violations_free(struct pkey_violations *pv);

/*
 * ibsmctl partitions: {"partitions":[{"name","pkey":"0x0001","policy",
 * "sl" (when the routing gave the partition one),"full","limited"}...],
 * "violations":[{"guid","port","lid","count"}...]}.
 */
json_t *ctl_partitions(struct sm *sm, const json_t *req, char *err, size_t errlen);

#endif
