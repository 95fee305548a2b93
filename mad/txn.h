/*
 * The transaction table: every request the SM originates goes through it.
 * It owns TIDs (matched on their low 32 bits: ibsim and umad2sim rewrite
 * the upper ones; the first is random, from getrandom(), so that a host
 * cannot guess them from the start), per-request timeouts and retries on
 * its own clock
 * (umad2sim ignores umad_send's), a global window of requests in flight
 * and a per-destination one, and counters per attribute.
 *
 * The configured window is a ceiling: timeouts halve the window in force
 * (once per timeout period), answers open it again by one per window's
 * worth, so a slow or lossy fabric is not flooded.
 *
 * An answer is taken only when it matches the request it claims to answer:
 * TID, class, the response method (GetResp for Get and Set), attribute ID
 * and modifier, and where it comes from: for a LID-routed request its
 * SLID is the DLID the request went to; for a directed-route SMP its D
 * bit is set and its hop count, initial path and DrSLID/DrDLID are the
 * request's.  Anything else is refused and counted by reason, and the
 * request stays in flight for its real answer.
 *
 * It does no I/O of its own beyond mad_transport_send() and has no timer:
 * the owner calls txn_expire() when txn_next_deadline() passes (the
 * arm callback says when that changes).  That keeps it unit-testable
 * with a fake transport and a fake clock.
 */
#ifndef IBSMD_TXN_H
#define IBSMD_TXN_H

#include <stddef.h>
#include <stdint.h>

#include "mad/transport.h"

#define TXN_OK        0
#define TXN_TIMEOUT  -1	/* no answer after all retries */
#define TXN_ERROR    -2	/* every attempt came back with an error status */
#define TXN_CANCELLED -3

#define TXN_NO_DEST  UINT32_MAX	/* no per-destination limit */
#define TXN_MAX_ATTRS 24

typedef void (*txn_done_fn)(void *arg, int status, const uint8_t *resp,
			    size_t len);
typedef uint64_t (*txn_clock_fn)(void *arg);	/* milliseconds, monotonic */
typedef void (*txn_arm_fn)(void *arg, int64_t deadline_ms);	/* -1 = none */
/*
 * The M_Key an SMP to `to` must carry (IBA vol. 1 14.2.4, Management Key):
 * mad is the request as it will be sent (class, method, and for a
 * directed-route SMP its hop count and initial path are final).
 */
typedef uint64_t (*txn_stamp_fn)(void *arg, const uint8_t *mad,
				 const struct mad_addr *to);

struct txn_params {
	int timeout_ms;
	int retries;
	int window;
	int window_per_node;
};

struct txn_counters {
	uint64_t sent, recv, timeouts, retries, errors;
};

/* Why a received MAD was not taken as an answer. */
enum txn_mismatch {
	TXN_MM_TID,		/* no request in flight with that TID */
	TXN_MM_CLASS,
	TXN_MM_LENGTH,		/* shorter than its class needs */
	TXN_MM_METHOD,		/* not the request's response method */
	TXN_MM_ATTR,
	TXN_MM_MOD,
	TXN_MM_ADDR,		/* wrong SLID, or wrong directed-route path */
	TXN_MM_N
};

struct txn_attr_stats {
	uint16_t attr;
	struct txn_counters c;
};

struct txn_stats {
	struct txn_counters all;
	uint64_t sets;			/* requests sent with method Set */
	uint64_t failed;		/* transactions that ended with no answer */
	uint64_t unsolicited;		/* received MADs that matched nothing */
	uint64_t mismatch[TXN_MM_N];	/* the same, by reason */
	uint32_t window;		/* the window in force (<= the ceiling) */
	uint64_t window_cuts;		/* times timeouts halved it */
	int n_attrs;
	struct txn_attr_stats attrs[TXN_MAX_ATTRS + 1];	/* last: "other" */
};

struct txn_engine;

struct txn_engine *txn_new(const struct txn_params *p,
			   struct mad_transport *t, txn_clock_fn clock,
			   void *clock_arg);
void txn_free(struct txn_engine *e);
void txn_set_arm(struct txn_engine *e, txn_arm_fn arm, void *arg);
void txn_set_params(struct txn_engine *e, const struct txn_params *p);
/*
 * Right before every send of an SMP (class 0x01 or 0x81; the first
 * attempt and every retry), fn gives the M_Key written into the SMP's
 * M_Key field (bytes 24-31, IBA vol. 1 14.2.1.1): a retry asks again, so
 * a key the SM learnt meanwhile is used.  No hook (the default, or fn
 * NULL): SMPs go out with the M_Key their builder wrote (0).  Other
 * classes are never touched.
 */
void txn_set_stamp(struct txn_engine *e, txn_stamp_fn fn, void *arg);
/* The M_Key the stamp hook would give mad to `to` now (0 with no hook). */
uint64_t txn_stamp_of(const struct txn_engine *e, const uint8_t *mad,
		      const struct mad_addr *to);

/*
 * Queues a request (the TID field is overwritten).  dest is a small
 * integer naming the destination (a node index) for the per-destination
 * window, or TXN_NO_DEST.  done is called exactly once, from
 * txn_recv/txn_expire/txn_cancel_all, never from txn_submit itself.
 * Returns 0 or -1 (ENOMEM).
 */
int txn_submit(struct txn_engine *e, const uint8_t *mad, size_t len,
	       const struct mad_addr *to, uint32_t dest, txn_done_fn done,
	       void *arg);
/*
 * The same, but the SMP goes with the M_Key its builder wrote, never
 * stamped: a probe that tries a key the stamp would not choose.
 */
int txn_submit_keyed(struct txn_engine *e, const uint8_t *mad, size_t len,
		     const struct mad_addr *to, uint32_t dest, txn_done_fn done,
		     void *arg);
/*
 * Offers a received MAD (a response, or with status != 0 one of our
 * requests the transport bounced); returns 1 if it answered a
 * transaction, else 0.  The signature is mad/dispatch.h's answer hook.
 */
int txn_recv(void *engine, const uint8_t *mad, size_t len,
	     const struct mad_addr *from, int status);
/* Retries or fails the transactions whose deadline has passed. */
void txn_expire(struct txn_engine *e);
int64_t txn_next_deadline(const struct txn_engine *e);
/* Fails every queued and in-flight transaction with TXN_CANCELLED. */
void txn_cancel_all(struct txn_engine *e);
uint32_t txn_inflight(const struct txn_engine *e);
uint32_t txn_queued(const struct txn_engine *e);
const struct txn_stats *txn_get_stats(const struct txn_engine *e);
void txn_reset_stats(struct txn_engine *e);
const char *txn_attr_name(uint16_t attr);
const char *txn_mismatch_name(int reason);

#endif
