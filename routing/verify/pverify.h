/*
 * Partition isolation verification (the pFTree paper's ValidatePolicies,
 * Algorithm 1 line 13, which the paper leaves unspecified): a pure
 * function from a fabric, its forwarding tables and the resolved
 * partitions (sm/model/part_resolve.h) to the partitions each directed
 * switch-to-switch link carries, and the isolation policies' verdicts.
 *
 * A flow is (source end port s, destination end port d, partition p)
 * with s and d both members of the tenant partition p and one of them a
 * full member (IBA 10.9.3); every common tenant partition of the pair
 * counts, not only one.  It is followed from s's switch through the LFTs
 * to d's base LID; each switch-to-switch hop adds p to Parts(link) on the
 * VL the hop's SL-to-VL table (in port, out port) gives p's SL
 * (t->part_sl[p], 0 when unset; the VL is the SL itself when t has no
 * SL-to-VL tables).
 *
 * Only tenant partitions count.  The default partition (index 0) carries
 * the management traffic between the SM (and switches, full members) and
 * every host, so it crosses nearly every link: counting it would make
 * every link "shared" and every phy-isolation partition violated.  Its
 * host-to-host flows exist only without tenants (hosts full members);
 * they count for the routes per link, not for Parts.
 *
 * Figures: links carrying >= 2 tenant partitions (shared links), per
 * tenant the links it shares (and, for vlane-isolation, the links where
 * another partition is on its VL), which pairs of partitions share a
 * link (for the VL assignment, routing/qos/pvl.h), and the routes per link
 * over the CA-to-CA pairs that share any partition (base LIDs).
 *
 * Violations: a phy-isolation partition sharing any link; a
 * vlane-isolation partition sharing a link with another on its VL.
 * With m->strict each is an error, else a warning.
 */
#ifndef IBSMD_PVERIFY_H
#define IBSMD_PVERIFY_H

#include <stdint.h>
#include <stdio.h>

#include "routing/engine.h"

struct pverify_part {
	uint32_t links;		/* directed switch-to-switch links it uses */
	uint32_t shared;	/* of them, carrying another tenant too */
	uint32_t vl_shared;	/* carrying another tenant on one of its VLs */
	uint16_t vls;		/* mask of the VLs it uses */
	uint8_t sl;		/* its SL (t->part_sl, 0) */
	int violated;		/* its policy is not met */
};

struct pverify_report {
	uint32_t n_parts;	/* m->n_parts (part[0] is the default) */
	uint32_t tenants;	/* n_parts - 1 */
	uint32_t links;		/* directed switch-to-switch links */
	uint32_t shared_links;	/* carrying >= 2 tenant partitions */
	uint64_t pairs;		/* CA-to-CA pairs sharing a partition */
	uint64_t undelivered;	/* of them, not delivered by t */
	uint64_t max_routes, min_routes;	/* per link, over pairs */
	struct pverify_part *part;	/* n_parts */
	/* share[p * n_parts + q]: p and q use one link (same or any VL) */
	uint8_t *share;
	int strict;
	uint32_t violations;	/* partitions whose policy is not met */
	uint32_t errors;	/* = violations when strict, else 0 */
};

/*
 * Fills r (allocated here; pverify_free()) from f, t and m (resolved
 * against f).  0, or -1 on ENOMEM (r emptied).
 */
int pverify(const struct fabric *f, const struct lft_tables *t,
	    const struct part_model *m, struct pverify_report *r);
void pverify_free(struct pverify_report *r);


/*
 * --verify's partition section: with tenant partitions in m (NULL:
 * none), pverify() and pverify_print() to fp, ahead of the route
 * report r, whose last line then counts the partitions' errors (strict
 * isolation not met) and warnings.  0, or -1 on ENOMEM.
 */
struct verify_report;
int pverify_section(const struct fabric *f, const struct lft_tables *t,
		    const struct part_model *m, struct verify_report *vr,
		    FILE *fp);

#endif
