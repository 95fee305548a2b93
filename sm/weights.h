/*
 * pFTree-Wt weights learned from PMA counters (the pFTree paper, Section 7):
 * with routing.weight_learning.period_s > 0, a MASTER reads the
 * PortCountersExtended.PortRcvData of every CA end port every period
 * (LID-routed PerfMgt Gets through the transaction table); the growth of
 * each port's counter between two readings is its receive volume B, and
 * Eq. 1 (with x - min B where the paper prints x - a) rescales the
 * volumes into [min, max]:
 *
 *     W(x) = (x - min B) * (b - a) / (max B - min B) + a    (rounded)
 *
 * all equal (max B = min B): every measured port gets a; a period whose
 * volumes spread less than WEIGHTS_MIN_SPREAD changes nothing.  A port that did
 * not answer either reading, or whose counter went back (a reset or a
 * wrap), is not measured and keeps the weight it had.  The result goes
 * into sm->learned (sorted by port GUID, sm/model/part_resolve.h), and when it
 * changed, a notice is logged and the routes are recomputed (as ibsmctl
 * reroute does) so that pftree balances by the new weights.
 */
#ifndef IBSMD_WEIGHTS_H
#define IBSMD_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>

struct sm;

/* Weights range when routing.weight_learning leaves them out. */
#define WEIGHTS_DEFAULT_MIN 1
#define WEIGHTS_DEFAULT_MAX 100

/*
 * A period whose volumes spread less than this (max B - min B, units of 4
 * octets: 256 KiB) teaches nothing: management traffic alone (the SM's
 * own port receives every answer) would otherwise be rescaled to the whole
 * range and reroute an idle fabric every period.  The weights stay.
 */
#define WEIGHTS_MIN_SPREAD 65536

/*
 * Eq. 1 over the n volumes b[] of which measured[i] are measured: w[i]
 * in [lo, hi] for those, untouched for the others; *spread (if not NULL)
 * = max B - min B over them.  Returns how many were measured.  Pure.
 */
uint32_t weights_rescale(const uint64_t *b, const uint8_t *measured,
			 uint32_t n, uint32_t lo, uint32_t hi, uint32_t *w,
			 uint64_t *spread);

struct weights_stats {
	uint64_t readings;	/* readings finished */
	uint64_t rounds;	/* periods learned from (two readings) */
	uint64_t changes;	/* rounds that changed sm->learned */
	uint64_t idle;		/* rounds below WEIGHTS_MIN_SPREAD */
	uint32_t measured;	/* last round: ports measured */
	uint32_t unmeasured;	/* last round: no answer, or a counter reset */
};

/*
 * The weights learned survive a restart: STATE_DIR/weights, a header
 * line, one "0xGUID WEIGHT" line per port sorted by GUID (weights
 * 1..CFG_MAX_WEIGHT, as the policy bounds them), and "# end: N ports", replaced atomically after every change
 * and read at start-up when learning is on.  A broken file is set aside
 * (weights.corrupt.*) and learning starts from the policy's weights.
 */
#define WEIGHTS_FILE "weights"
struct part_weights;
/* Writes w to path; 0, or -1 with err. */
int weights_save_file(const char *path, const struct part_weights *w,
		      char *err, size_t errlen);
/*
 * Reads path into w (emptied first): 0, 1 when there is no such file,
 * -1 on ENOMEM or a read error, -2 when it is broken ("path:line: why").
 */
int weights_load_file(const char *path, struct part_weights *w, char *err,
		      size_t errlen);

/* The period timer (sm_init); 0, or -1 (no memory). */
int weights_init(struct sm *sm);
/*
 * At start-up, after the state directory was checked: the weights
 * learned before, into sm->learned, when learning is on.  A broken file
 * is set aside and logged.  0, or -1 with err (no memory, or it cannot
 * be set aside).
 */
int weights_load_state(struct sm *sm, char *err, size_t errlen);
/* Stops and frees it; after txn_cancel_all() (no answer is due). */
void weights_free(struct sm *sm);
/* The policy was (re)loaded: the period in force changes now. */
void weights_reconfigure(struct sm *sm);
/*
 * Reads the counters now, as the timer does at each period's end (tests;
 * a period then runs from one call to the next).  0, or -1: learning off,
 * not MASTER of a configured subnet, or a reading under way.
 */
int weights_learn_now(struct sm *sm);
/* A reading is under way. */
int weights_reading(const struct sm *sm);
const struct weights_stats *weights_get_stats(const struct sm *sm);

#endif
