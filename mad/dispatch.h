/*
 * The receive path: every MAD a port receives goes through here once.
 *
 * Answers to our own requests (responses, and our requests the transport
 * bounced) go to the answer hook (the transaction table), which matches
 * them or refuses them.  Every other MAD is looked up in one table keyed
 * by (management class, method, attribute ID) and handed to its handler;
 * a request nobody handles gets the status IBA vol. 1 §13.4.7 prescribes
 * in its response:
 *
 *   bad base version, unsupported class or class version  BAD_BASE_VER_OR_CLASS
 *   class served, method not served for any attribute      METHOD_NOT_SUPPORTED
 *   method served, not for this attribute                  METHOD_ATTR_NOT_SUPPORTED
 *
 * A response, a TrapRepress, a Send or a Trap nobody handles is dropped:
 * they take no response, and the dispatcher never answers a response, so
 * two ports cannot play ping-pong.  Every drop is counted by reason.
 *
 * It knows MADs, nothing about the SM: handlers are registered by whoever
 * serves the class (sm/recv.c for the SM's own).  Lookups are O(1): a
 * per-class table and an open-addressed hash of the registrations; no
 * allocation per MAD.
 */
#ifndef IBSMD_DISPATCH_H
#define IBSMD_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "mad/transport.h"

/* Attribute IDs libibmad has no name for. */
#define MAD_ATTR_CLASS_PORT_INFO 0x0001
#define MAD_ATTR_NOTICE		 0x0002

#define MAD_BASE_VERSION	1
#define MAD_METHOD_RESPONSE	0x80	/* the R bit of the method byte */

/*
 * A handler gets a request of its (class, method, attribute) with at
 * least the class's minimum length (an SMP: exactly MAD_SIZE), whose base
 * and class versions were checked.  It returns MAD_DONE when it replied
 * itself or no reply is due, MAD_DROP to refuse it (counted), or a MAD
 * status (>= 0): the dispatcher then sends the request back as its
 * response with that status (a GetResp for Get and Set).
 */
#define MAD_DONE	(-1)
#define MAD_DROP	(-2)
typedef int (*mad_handler_fn)(void *ctx, const uint8_t *mad, size_t len,
			      const struct mad_addr *from);

/*
 * The answer hook: returns 1 when the MAD answered one of our requests
 * (it was consumed), 0 when it matched nothing.
 */
typedef int (*mad_answer_fn)(void *arg, const uint8_t *mad, size_t len,
			     const struct mad_addr *from, int status);

/*
 * The RMPP hook (mad/rmpp.h's rmpp_hook): offered every SA-class MAD
 * whose RMPP header is active (DATA, ACK, STOP, ABORT), before the answer
 * hook and the handler table: an ACK comes with a request's method
 * (GetTable for an ACK of a GetTableResp).  Returns 1 when it took it.
 */
typedef int (*mad_rmpp_fn)(void *arg, const uint8_t *mad, size_t len,
			   const struct mad_addr *from);

/* Why a MAD was dropped. */
enum mad_drop {
	MAD_DROP_TRUNCATED,	/* shorter than a header or than its class needs */
	MAD_DROP_OVERSIZED,	/* longer than MAD_SIZE */
	MAD_DROP_BOUNCED,	/* came back unsent, not one of our requests */
	MAD_DROP_UNMATCHED,	/* a response that answers none of our requests */
	MAD_DROP_TRAP_REPRESS,	/* a TrapRepress nobody handles */
	MAD_DROP_NO_RESPONSE,	/* a Send, a Trap, a bad request: takes no response */
	MAD_DROP_REFUSED,	/* its handler refused it */
	MAD_DROP_NO_ADDRESS,	/* a request from LID 0: nowhere to answer */
	MAD_DROP_SEND_FAILED,	/* the response could not be sent */
	MAD_DROP_N
};

/* Which status a request nobody handles was answered with. */
enum mad_unsup {
	MAD_UNSUP_BASE_VERSION,	/* bad base version */
	MAD_UNSUP_CLASS,	/* a class nobody serves */
	MAD_UNSUP_CLASS_VERSION, /* a served class, another class version */
	MAD_UNSUP_METHOD,	/* METHOD_NOT_SUPPORTED */
	MAD_UNSUP_ATTR,		/* METHOD_ATTR_NOT_SUPPORTED */
	MAD_UNSUP_N
};

struct mad_dispatch_stats {
	uint64_t received;	/* every MAD offered */
	uint64_t answers;	/* taken by the answer hook */
	uint64_t rmpp;		/* taken by the RMPP hook */
	uint64_t handled;	/* given to a handler */
	uint64_t status_replies; /* responses the handlers' statuses made */
	uint64_t unsupported[MAD_UNSUP_N];	/* answered with an error status */
	uint64_t dropped[MAD_DROP_N];
};

struct mad_dispatch;

/* t: where responses go (it may be filled in later, before MADs arrive). */
struct mad_dispatch *mad_dispatch_new(struct mad_transport *t);
void mad_dispatch_free(struct mad_dispatch *d);
void mad_dispatch_set_answers(struct mad_dispatch *d, mad_answer_fn fn,
			      void *arg);
void mad_dispatch_set_rmpp(struct mad_dispatch *d, mad_rmpp_fn fn, void *arg);
/*
 * Registers fn for (mgmt_class, method, attr).  Every registration of a
 * class names the same class version.  Returns 0, or -1: a response
 * method, a key already taken, another class version, or no memory.
 */
int mad_dispatch_register(struct mad_dispatch *d, uint8_t mgmt_class,
			  uint8_t class_version, uint8_t method, uint16_t attr,
			  mad_handler_fn fn, void *ctx);
/* Removes a registration; 0, or -1 when there was none. */
int mad_dispatch_unregister(struct mad_dispatch *d, uint8_t mgmt_class,
			    uint8_t method, uint16_t attr);
/* The receive path: a transport's callback passes every MAD here. */
void mad_dispatch_input(struct mad_dispatch *d, const uint8_t *mad,
			size_t len, const struct mad_addr *from, int status);
const struct mad_dispatch_stats *
mad_dispatch_get_stats(const struct mad_dispatch *d);
const char *mad_drop_name(int reason);
const char *mad_unsup_name(int kind);

/*
 * For handlers.  mad_make_response() turns a request (MAD_SIZE bytes) into
 * its response in place: the response method (GetResp for Get and Set,
 * else the method with the R bit), the status, for a directed-route SMP
 * the D bit and its 15-bit status, for an RMPP class no RMPP flags.
 * mad_send_response() sends a response back to where the request came from
 * (the return path of a directed-route SMP, else the request's SLID and
 * QP).  Returns 0 or -1.
 */
void mad_make_response(uint8_t *mad, int status);
int mad_send_response(struct mad_transport *t, const uint8_t *resp,
		const struct mad_addr *from);
/* The same, len bytes (an SA GetTableResp is 56 + n * stride long). */
int mad_send_response_len(struct mad_transport *t, const uint8_t *resp,
			  size_t len, const struct mad_addr *from);
/* The least a MAD of the class can be: an SMP MAD_SIZE, an SA MAD 56, ... */
size_t mad_class_min_len(uint8_t mgmt_class);
/* The method's response, or 0 when the method takes none. */
uint8_t mad_response_method(uint8_t method);

#endif
