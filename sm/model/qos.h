/*
 * QoS modes over a routing result (qos.mode): the service level of every
 * (source, destination) pair and the SL-to-VL tables, filled into the
 * lft_tables' QoS fields (routing/engine.h) by the pure functions of
 * routing/qos/vftree.c and routing/qos/voqsw.c.  The daemon calls qos_apply()
 * after every routing, repair and VM write; --offline calls it once.
 */
#ifndef IBSMD_QOS_H
#define IBSMD_QOS_H

#include "sm/model/config.h"
#include "sm/base/fabric.h"
#include "sm/model/part_resolve.h"
#include "routing/engine.h"

/*
 * The OperationalVLs encoding a link runs: the smaller VLCap of its two
 * ends, at most ports.max_op_vls (what the sweep sets in PortInfo).
 */
static inline uint8_t qos_link_opvls(unsigned cap_a, unsigned cap_b,
				     unsigned max_op_vls)
{
	unsigned m = cap_a < cap_b ? cap_a : cap_b;
	return (uint8_t)(m < max_op_vls ? m : max_op_vls);
}

/* qos_report.mode of congestion.mode dftree's two lanes (qos.mode none) */
#define QOS_LANES (-1)

struct qos_report {
	int mode;		/* enum qos_mode applied, or QOS_LANES */
	unsigned vls;		/* data VLs used, after the clamp */
	unsigned link_vls;	/* data VLs the narrowest link runs (0: unknown) */
	int clamped;		/* qos.max_vls was above link_vls */
	/* voqsw (routing/qos/voqsw.h): what stage 4 reached */
	unsigned sls;		/* SLs the policy gives VOQsw */
	uint64_t paths;		/* (source port, destination LID) paths */
	uint32_t tuples;	/* x_max: 4-tuples with weight > 0 */
	uint32_t considered;	/* x: the tuples that got VOQ */
	uint64_t weight, weight_considered;
	uint64_t paths_covered;	/* paths whose every tuple got VOQ */
	unsigned sls_used;
	/* congestion.mode dftree: ports left with one lane (sm/model/lanes.h) */
	uint32_t lanes_refused;
	/* partitions (routing/qos/pvl.h) */
	char fail[256];		/* strict isolation failed: why ("" else) */
};

/*
 * Fills t's QoS fields for cfg->qos_mode (none: clears them), with
 * qos.max_vls clamped to the data VLs of the narrowest link (logged as a
 * warning naming it); then, when the partitions have a vlane-isolation
 * partition or an sl (even under qos.mode none), their VLs and SLs
 * (routing/qos/pvl.h: t->part_sl, and SL-to-VL tables unless the mode made
 * them).  Returns 0, or -1: out of memory (t's QoS fields are cleared
 * and the caller runs with SL 0 everywhere), or with r->fail set, strict
 * isolation cannot be met (logged; the caller keeps its old tables).
 * congestion.mode dftree (with qos.mode none; the policy refuses it with
 * a mode or vlane-isolation) makes the two lanes' tables instead
 * (sm/model/lanes.h), r->mode QOS_LANES.
 */
int qos_apply(const struct config *cfg, const struct fabric *f,
	      const struct part_model *parts, struct lft_tables *t,
	      struct qos_report *r);

/*
 * The line for r: "qos: vFtree over 4 VLs", "qos: voqsw: X of XMAX
 * tuples, weight W%, paths covered C of P (C%), SLs used U of N, V VLs".
 */
void qos_describe(const struct qos_report *r, char *buf, size_t len);
/* That line in the log: voqsw at notice (one per routing), vFtree at info. */
void qos_log(const struct qos_report *r);


#endif
