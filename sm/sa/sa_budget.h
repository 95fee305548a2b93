/*
 * The SA's answers in flight, bounded (ibsmd(8), "Subnet administration").
 *
 * A GetTable answer longer than one MAD goes out as an RMPP transfer and
 * holds its bytes until the transfer ends: every segment ACKed, the
 * requester's STOP or ABORT, or the sender giving up (no ACK after its
 * retries, or the RMPP total time).  A requester that never ACKs would
 * otherwise make the SA hold every answer it asked for.  So each
 * requester -- a port, by its GUID, whatever LID of its LMC range it asks
 * from; a LID no port holds, by the LID -- may hold at most
 * sa.max_answers_per_requester answers and sa.max_answer_bytes_per_requester
 * bytes in flight, and all requesters together SA_MAX_ANSWERS answers and
 * sa.max_answer_bytes bytes.
 *
 * Past a limit the request is answered with MAD status Busy (IBA vol. 1
 * §13.4.7: temporarily busy, the MAD discarded, the requester may retry;
 * the overload OpenSM's SA would answer busy too): its answers in flight
 * end within seconds and free the room.  An answer longer than a
 * requester may hold at all is ERR_NO_RESOURCES (§15.2.1.2: insufficient
 * resources to complete the request), which no retry changes.
 *
 * Cheap refusals: the count is checked before the records are built
 * (sa_budget_admit), the bytes once the answer's length is known
 * (sa_budget_take).  A requester refused for its bytes is refused before
 * any work until one of its answers ends, and all of them after the total
 * was short, until any answer ends: a flood costs one built answer per
 * answer that ends, not one per request.
 */
#ifndef IBSMD_SA_BUDGET_H
#define IBSMD_SA_BUDGET_H

#include <stddef.h>
#include <stdint.h>

/* Answers in flight from all requesters together (the RMPP send pool's size). */
#define SA_MAX_ANSWERS 4096

struct sa_limits {
	unsigned per_requester;		/* answers */
	uint64_t bytes_per_requester;	/* also the longest answer */
	unsigned total;			/* answers */
	uint64_t bytes;
};

struct sa_budget_stats {
	uint64_t busy_requester;	/* refused: the requester's share */
	uint64_t busy_total;		/* refused: everyone's */
	uint32_t answers;		/* in flight now */
	uint64_t bytes;			/* their bytes now */
	uint64_t bytes_peak;		/* the most at once */
	uint32_t requesters;		/* with answers in flight now */
};

struct sa_budget;
/* One answer's hold on the budget, given back by sa_budget_give(). */
struct sa_ticket;

struct sa_budget *sa_budget_new(void);
/* Frees the budget and every ticket not given back. */
void sa_budget_free(struct sa_budget *b);

/* Before building an answer for requester key: 0, or MAD_STS_BUSY (counted). */
int sa_budget_admit(struct sa_budget *b, const struct sa_limits *l, uint64_t key);
/*
 * An answer of bytes for key: its ticket (*t), or the status to answer
 * with: MAD_STS_BUSY (counted), SA_STS_NO_RESOURCES (longer than
 * l->bytes_per_requester, or no memory).
 */
int sa_budget_take(struct sa_budget *b, const struct sa_limits *l, uint64_t key,
		   uint64_t bytes, struct sa_ticket **t);
/* The answer's transfer ended: its room is free again. */
void sa_budget_give(struct sa_ticket *t);

const struct sa_budget_stats *sa_budget_get_stats(const struct sa_budget *b);

#endif
