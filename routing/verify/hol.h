/*
 * Static head-of-line (HOL) exposure of a traffic pattern:
 * which flows that do not go to a hot spot share a (link, VL) with one
 * that does, the VLs taken as the SLs and SL-to-VL tables in the
 * lft_tables give them (routing/engine.h; none: every flow on VL 0).
 * A flow that shares a VL's buffer with hot traffic anywhere on its route
 * can be blocked behind it; one whose hot neighbours all run on other VLs
 * cannot.  Pure: no I/O (hol_print() in verify_print.c writes a FILE).
 *
 * Flows go from a CA port to another CA port's base LID, followed through
 * the LFTs: hops are the directed links out of the source port, each
 * switch, and into the destination port.  A flow not delivered counts
 * apart (neither a victim nor exposed).
 *
 * Patterns:
 *   hotspot:DEST[,N]  every CA port to every other (uniform background);
 *                     the flows to DEST are the hot ones, sent by the
 *                     first N CA ports in ascending port GUID order other
 *                     than DEST (default: all of them; the others send
 *                     DEST nothing).
 *   FILE              lines "SRC DST [hot]", '#' to the end of a line a
 *                     comment; a name with blanks in double quotes.  The
 *                     flows are those listed; those marked hot the hot
 *                     ones.  At least one must be.
 * CA ports are named by node description or node-name map name (the
 * CA's lowest numbered port with a LID), port or node GUID (0x...) or
 * LID (decimal).
 */
#ifndef IBSMD_HOL_H
#define IBSMD_HOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "routing/engine.h"

struct hol_flow {
	uint32_t src, dst;	/* CA port indices */
	uint8_t hot;
};

struct hol_pattern {
	/* hotspot: n_hot_src > 0; the uniform flows are not stored */
	uint32_t dest;		/* DEST's port index */
	uint32_t n_hot_src;	/* N */
	/* FILE: the flows listed */
	struct hol_flow *flows;
	size_t n_flows, cap;
};

struct hol_report {
	uint64_t flows;		/* in the pattern, delivered or not */
	uint64_t hot;		/* flows to the hot spot (marked hot) */
	uint64_t victims;	/* the other flows, delivered */
	uint64_t exposed;	/* victims sharing a (link, VL) with a hot flow */
	uint64_t exposed_novl;	/* victims sharing a link with one (mode none) */
	uint64_t undelivered;	/* flows the LFTs do not deliver */
};

/*
 * The CA port called name (node description or node-name map name,
 * 0x port GUID or node GUID, decimal LID) with a LID, or a VF behind a vSwitch (an idle VF has none under
 * the dynamic scheme).  FAB_NONE with a reason in err when there is none
 * or the description is two CAs'.
 */
uint32_t endport_find(const struct fabric *f, const char *name, char *err,
		      size_t errlen);

/*
 * "DEST[,N]" (after "hotspot:") into *p.  Returns 0, or -1 with the
 * reason in err (unknown DEST, N out of 1..the other CA ports).
 */
int hol_hotspot(const struct fabric *f, const char *spec,
		struct hol_pattern *p, char *err, size_t errlen);
/*
 * A pattern file's text (named fname in messages) into *p.  Returns 0,
 * or -1 with "fname:line: reason" in err (unknown name, a line that is
 * not "SRC DST [hot]", no hot flow: "fname: ...").
 */
int hol_parse(const struct fabric *f, const char *text, const char *fname,
	      struct hol_pattern *p, char *err, size_t errlen);
void hol_pattern_free(struct hol_pattern *p);

/* Exposure of p's victims under t.  Returns 0, or -1 on ENOMEM. */
int hol_expose(const struct fabric *f, const struct lft_tables *t,
	       const struct hol_pattern *p, struct hol_report *r);

/* One line "hol: pattern=... flows=... hot=... victims=... exposed=..." */
int hol_print(const struct hol_report *r, const char *pattern, FILE *fp);

#endif
