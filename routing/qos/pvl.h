/*
 * The partition VL assignment (the pFTree paper's Algorithm 5, its
 * strict and best-effort branches as the text of Section 6.2 has them:
 * the listing swaps the two): a vlane-isolation partition that shares a
 * switch-to-switch link (routing/verify/pverify.h, tenant partitions only) with
 * a partition still on VL 0 gets the next data VL of its own, in policy
 * order; VLs 1 .. data_vls - 1.  When none is left: strict fails naming
 * the partition, best-effort wraps to VL 1 with a warning.  A partition
 * of another policy with an sl s below data_vls is on VL s (a VL of its
 * own): the assignment skips those VLs and needs none against it.
 *
 * A partition's SL (lft_tables.part_sl) is then its VL for
 * vlane-isolation, its policy sl (or 0) otherwise; the SL-to-VL tables
 * map SL s to VL s below data_vls (VL 0 above) on every port pair, so a
 * partition's packets keep its VL end to end.  Pure: no I/O.
 */
#ifndef IBSMD_PVL_H
#define IBSMD_PVL_H

#include <stddef.h>
#include <stdint.h>

#include "routing/engine.h"

#define PVL_STRICT_FAIL (-2)

/* Some partition is vlane-isolation or has a policy sl: pvl_apply acts. */
int pvl_needed(const struct part_model *m);

/*
 * Algorithm 5 over share (n_parts^2: p and q use one link, pverify's):
 * vl[p] for every partition (0: none of its own).  0; 1 when it wrapped
 * (best-effort; the warning in msg); PVL_STRICT_FAIL (strict: msg names
 * the partition).
 */
int pvl_assign(const struct part_model *m, const uint8_t *share,
	       unsigned data_vls, uint8_t *vl, char *msg, size_t len);

/*
 * Fills t->part_sl (m->n_parts entries) and, when some partition's SL is
 * not 0 and t has none yet (no QoS mode wrote them), the SL-to-VL tables;
 * with every SL 0 it leaves t's QoS fields alone.  data_vls: the data VLs
 * every link runs (1..15).  0; 1 (wrapped: the warning in msg); -1
 * (ENOMEM); PVL_STRICT_FAIL (msg says why; t->part_sl cleared).
 */
int pvl_apply(const struct fabric *f, struct lft_tables *t,
	      const struct part_model *m, unsigned data_vls, char *msg,
	      size_t len);

#endif
