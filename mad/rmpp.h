/*
 * RMPP (IBA vol. 1 §13.6): multi-segment transfers of the RMPP classes
 * (SA), done by ibsmd itself on 256-byte MADs (see transport.h).
 *
 * Wire layout (the one Linux's and OpenSM's RMPP use for the SA): every
 * segment repeats the 56-byte header and carries SA_DATA_SIZE (200) bytes
 * of the payload, so the RMPP payload of a segment is SA_RMPP_PAYLOAD
 * (220) bytes, SA header included; PayloadLength is 20 * segments + len
 * in the first segment and 20 + its data bytes in the last.
 *
 * Sender: rmpp_send() cuts a message (the 56-byte header + payload)
 * into DATA segments of SA_DATA_SIZE payload bytes each, sends them inside the
 * receiver's window, waits for ACKs (NewWindowLast moves the window),
 * resends from the last acknowledged segment on timeout, gives up after
 * the retries with an ABORT, and stops on the receiver's STOP or ABORT.
 * A message that fits one segment goes out as one DATA segment with
 * First|Last (as OpenSM's answers look on the wire).
 *
 * Receiver: rmpp_input() reassembles DATA segments per (source LID, TID),
 * ACKs each window, ABORTs what is out of window or malformed, and hands
 * the whole message to the receiver callback.  A message longer than the
 * owner takes (max_msg) is refused at the segment that shows it, before
 * it holds anything.
 *
 * Slots: each direction has its own pool of transfers in progress, and
 * each peer (LID) at most its share of it, so that one peer's half-open
 * transfers cannot take the slots another peer's answers need.  A
 * finished transfer lingers a while to absorb duplicates; lingering ones
 * hold no data and count in no pool, and past max_linger the oldest is
 * forgotten.
 *
 * Both sides run on the caller's event loop; nothing blocks.  Every
 * malformed, unknown or late RMPP MAD is counted and dropped.
 */
#ifndef IBSMD_RMPP_H
#define IBSMD_RMPP_H

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

#include "mad/transport.h"

struct rmpp;

/* 0 in any field but retries means the default below. */
struct rmpp_params {
	unsigned window;	/* receiver: segments per window it grants */
	unsigned timeout_ms;	/* sender: wait for an ACK; receiver: for a segment */
	unsigned retries;	/* sender: resends of a window before ABORT */
	unsigned total_ms;	/* either side: a whole transfer, then ABORT */
	size_t max_msg;		/* receiver: the longest message taken (bytes
				 * after the class header) */
	unsigned recv_slots, send_slots;	/* transfers in progress, per direction */
	unsigned recv_per_peer, send_per_peer;	/* of those, from/to one LID */
	unsigned max_linger;	/* finished transfers remembered */
};
#define RMPP_DEFAULT_WINDOW	32
#define RMPP_DEFAULT_TIMEOUT_MS	200
#define RMPP_DEFAULT_TOTAL_MS	30000
#define RMPP_DEFAULT_MAX_MSG	(16u << 20)	/* an SA answer on a big fabric */
#define RMPP_DEFAULT_SLOTS	4096	/* each direction; per peer: all of them */
#define RMPP_DEFAULT_LINGER	4096

struct rmpp_stats {
	uint64_t sent_msgs, sent_segs, resent_segs, acks_sent, acks_recv;
	uint64_t aborts_sent, aborts_recv, stops_recv, completed, failed;
	uint64_t dropped;	/* malformed, unknown transfer, out of window */
	uint64_t refused_long;	/* receiver: longer than max_msg (ABORTed) */
	uint64_t refused_slots[2];	/* [RMPP_RECV], [RMPP_SEND]: its pool, or
					 * its peer's share of it, was full */
	uint64_t evicted;	/* lingering transfers forgotten for room */
	uint64_t superseded;	/* sender: answers ended by another request
				 * with their (LID, TID) */
};
enum { RMPP_RECV, RMPP_SEND };

/* result: 0 (all ACKed), -ETIMEDOUT, or the RMPP status of an ABORT/STOP. */
typedef void (*rmpp_done_fn)(void *arg, int result);
/*
 * A reassembled message: hdr is the first segment's 56 bytes, payload the
 * data after the class header (PayloadLength - 20 of the whole), status
 * the MAD status of the first segment.
 */
typedef void (*rmpp_msg_fn)(void *arg, const uint8_t *hdr,
			    const uint8_t *payload, size_t len,
			    const struct mad_addr *from);

struct rmpp *rmpp_new(struct event_base *base, struct mad_transport *t,
		      const struct rmpp_params *p);
void rmpp_free(struct rmpp *r);	/* pending transfers end, no callbacks */
void rmpp_set_receiver(struct rmpp *r, rmpp_msg_fn fn, void *arg);

/*
 * Sends hdr (SA_HDR_SIZE bytes: method, status, TID, attribute, SA header;
 * the RMPP header is filled in here) with payload (len bytes, may be 0) to
 * `to`.  done (may be NULL) is called once, from the loop.  Returns 0, or
 * -1: errno ENOMEM, EBUSY (a transfer of the same payload to `to` with
 * this TID is still going: a retried request, the caller drops it; one
 * of another payload -- a new client reusing the TID -- ends, failed,
 * and this one starts), EAGAIN (the send pool,
 * or `to`'s share of it, is full), EINVAL, or the transport refused the
 * first segment.  A message of one segment is not
 * retried (its loss is the requester's retry; ibsim returns no ACK) and
 * completes once sent.  Callbacks must not call rmpp_free().
 *
 * The receiver callback gets every reassembled message, one-segment RMPP
 * requests included; segments of a finished message (its ACK was lost)
 * are ACKed again, not delivered twice.  A one-segment message again with
 * the same TID is delivered again unless it is the same and our answer
 * to it (a send with its TID) is still in transfer.
 */
int rmpp_send(struct rmpp *r, const uint8_t *hdr, const uint8_t *payload,
	      size_t len, const struct mad_addr *to, rmpp_done_fn done,
	      void *arg);

/*
 * An answer to the request req (req_len bytes as it came; NULL: not
 * known): as rmpp_send(), with a payload from malloc() that the transfer
 * takes over, in every case (freed on failure too): a big answer is not
 * copied.  The (LID, TID) key holds the request's contents.
 * A request with the TID of an answer still in transfer is its retry
 * (EBUSY) only when its contents are the same; another request (a new
 * process that reused the TID) ends the old transfer, without a word on
 * the wire, and gets its own answer.  An answer whose transfer ended
 * never keeps a request from being answered.
 */
int rmpp_answer_take(struct rmpp *r, const uint8_t *req, size_t req_len,
		     const uint8_t *hdr, uint8_t *payload, size_t len,
		     const struct mad_addr *to, rmpp_done_fn done, void *arg);

/*
 * The receive hook: offer every MAD of an RMPP class whose RMPP header is
 * active (DATA, ACK, STOP, ABORT).  Returns 1 when it was RMPP's (consumed,
 * maybe dropped and counted), 0 when it is not an RMPP transfer MAD.
 */
int rmpp_input(struct rmpp *r, const uint8_t *mad, size_t len,
	       const struct mad_addr *from);
/* The same with mad/dispatch.h's RMPP hook signature (r: a struct rmpp). */
int rmpp_hook(void *r, const uint8_t *mad, size_t len,
	      const struct mad_addr *from);

const struct rmpp_stats *rmpp_get_stats(const struct rmpp *r);
/* Transfers in progress (both sides). */
unsigned rmpp_active(const struct rmpp *r);
/* Transfers in progress in one direction (RMPP_RECV, RMPP_SEND), and of those with lid. */
unsigned rmpp_active_dir(const struct rmpp *r, int dir);
unsigned rmpp_active_peer(const struct rmpp *r, int dir, uint32_t lid);
/* Finished transfers remembered (lingering). */
unsigned rmpp_lingering(const struct rmpp *r);
/* 1 while a message from lid whose TID ends in tid (low 32 bits, as
 * matched under ibsim) is being received. */
int rmpp_receiving(const struct rmpp *r, uint32_t lid, uint32_t tid);

#endif
