/*
 * Ports whose M_Key is not the one the SM derives (IBA vol. 1 14.2.4,
 * Management Key): a device moved from another subnet, or keyed by an SM
 * with another secret.  Pure: times are arguments (monotonic ms).
 *
 * A port with another key refuses the SM's SMPs as its ProtectBits say
 * (mad/mkey.h): at level 1 it answers Gets with PortInfo:M_Key shown as 0
 * and drops Sets; at levels 2 and 3 it drops everything.  Each refused
 * SMP is a violation, which starts its lease timer (14.2.4.2) unless it
 * runs; when the timer ends the port drops to ProtectBits 0 and keeps its
 * key, and a Get then shows the key (14.2.4.1).  The SM reads it there,
 * keeps it here -- in memory only, never on disk -- and stamps it on the
 * port's next SMPs, the PortInfo Set that writes the SM's own key (a Set
 * with another key is dropped at every level, 0 included); once the port
 * holds the SM's key the entry is forgotten and the take-over counted.
 *
 * A port that refuses is listed with the SM's first refused SMP and when
 * its protection should end: the lease as read (level 1 shows
 * M_KeyLeasePeriod), else the policy's lease_s -- an estimate, as the
 * port's own lease is hidden and its timer may have started earlier (a
 * host's violation) or later (an SMP lost on the way).
 */
#ifndef IBSMD_MKEYREC_H
#define IBSMD_MKEYREC_H

#include <stdint.h>

#define MKREC_MAX 65536		/* ports listed; more are counted in lost */
#define MKREC_NEVER UINT64_MAX	/* a lease of 0: the protection never ends */

struct mkrec_port {
	uint64_t guid;		/* port GUID (a switch's: port 0's) */
	uint64_t key;		/* the key it showed (lease over); 0: not seen */
	uint64_t since_ms;	/* the SM's first SMP it refused; 0: none refused */
	uint64_t end_ms;	/* when its protection should end; 0: never */
	uint64_t noted_ms;	/* when a sweep last found it so */
	uint8_t level;		/* 1: Gets answered, Sets dropped; 2: both dropped */
};

struct mkey_rec {
	struct mkrec_port *v;	/* sorted by guid */
	uint32_t n, cap;
	uint64_t taken_over;	/* ports that held another key and now hold ours */
	uint64_t lost;		/* ports not listed: the list was full */
	uint64_t round_ms;	/* the start of the last sweep that looked */
};

/* The key port guid showed (another SM's), or 0. */
uint64_t mkrec_key(const struct mkey_rec *r, uint64_t guid);
/* Port guid showed key, not the SM's, at now_ms: kept for its next SMPs.  0, or -1. */
int mkrec_seen(struct mkey_rec *r, uint64_t guid, uint64_t key, uint64_t now_ms);
/*
 * Port guid refused an SMP of the SM at now_ms, at level (1 or 2); its
 * protection should end lease_ms after the first refusal (MKREC_NEVER:
 * never; kept when it is already listed as refusing at that level).  A
 * key read before is forgotten: it did not pass.  0, or -1 (the list is full or ENOMEM).
 */
int mkrec_refused(struct mkey_rec *r, uint64_t guid, int level, uint64_t now_ms,
		  uint64_t lease_ms);
/* Is port guid listed as refusing the SM? */
int mkrec_is_refusing(const struct mkey_rec *r, uint64_t guid);
/* Port guid held another key (or protection) and now holds the SM's: counted, forgotten. */
void mkrec_taken(struct mkey_rec *r, uint64_t guid);
/* Port guid answers the SM (its key, or none): forgotten, not counted. */
void mkrec_forget(struct mkey_rec *r, uint64_t guid);
/*
 * A sweep that looks at every port starts at now_ms: the ports no sweep
 * noted since the last one started (gone, or behind a port taken over
 * since) are forgotten.
 */
void mkrec_round(struct mkey_rec *r, uint64_t now_ms);
/* Ports refusing the SM now; the first and last end of their protection (0: none). */
uint32_t mkrec_refusing(const struct mkey_rec *r, uint64_t *first_end_ms,
			uint64_t *last_end_ms);
void mkrec_free(struct mkey_rec *r);

#endif
