/*
 * The host side of the SA: a client library on a struct mad_transport and
 * an event_base (the umad transport on a host, an emulator client in
 * tests), for ibsm-listen, the PathRecord load tool and the emulator's
 * hosts.  It links mad/ and the bottom layer only (libibsmd-host.a).
 *
 * Queries (Get, GetTable, Set, Delete) go to the port's SM LID (read from
 * the transport at every send, so a new SM is followed once the owner
 * refreshes the transport) on QP1 with QKey 0x80010000, under the
 * client's own TIDs (random start, matched on the low 32 bits as ibsim
 * rewrites the upper ones), with a timeout and retries of the same TID
 * per query.  An answer is taken only when its TID, class, response
 * method and source LID match; RMPP answers are reassembled by
 * mad/rmpp.c, which ACKs them.  A retry is held back while the answer's
 * RMPP transfer is still coming in.  An answer with MAD status Busy is
 * no answer: the query is sent again at its timeout, within its retries.
 *
 * Reports: a Report(Notice) from the SA is answered with a ReportResp
 * (the notice echoed) and the 80-byte notice goes to the report callback,
 * once per (source LID, TID): a Report resent because its ReportResp was
 * lost is answered again, not handed on twice.
 *
 * The receive path is the client's own mad/dispatch.c: pass the
 * transport's callback saclient_recv() with the client as its argument.
 */
#ifndef IBSMD_SACLIENT_H
#define IBSMD_SACLIENT_H

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

#include "mad/rmpp.h"
#include "mad/transport.h"

#define SACLIENT_DEFAULT_TIMEOUT_MS	500
#define SACLIENT_DEFAULT_RETRIES	3
#define SACLIENT_DEFAULT_MAX_INFLIGHT	256
#define SACLIENT_ALL			0xffff	/* trap numbers, types, LIDs */
#define SACLIENT_ALL_PRODUCERS		0xffffff

/* 0 in timeout_ms or max_inflight means its default; retries is taken as
 * given (saclient_new() with no params: every default). */
struct saclient_params {
	unsigned timeout_ms;	/* per attempt */
	unsigned retries;	/* resends of a query after the first */
	unsigned max_inflight;	/* queries at once; saclient_query() refuses more */
	struct rmpp_params rmpp;	/* all 0: mad/rmpp.h's defaults, 3 retries */
	uint64_t sa_key;	/* the SM_Key field of every query's SA header
				   (IBA vol. 1 §15.2.1.1): 0, untrusted, or the
				   SA's key, which makes it a trusted requester */
};

struct saclient_stats {
	uint64_t queries, sent, retries, answers, timeouts, errors;
	uint64_t unmatched;		/* answers to nothing of ours */
	uint64_t busy;			/* answers with status Busy (sent again) */
	uint64_t reports, report_dups;	/* Reports taken, Reports seen again */
};

/*
 * A query's end.  status: 0, the answer's MAD status (> 0: SA codes in
 * bits 8-15, e.g. SA_STS_NO_RECORDS), -ETIMEDOUT (no answer after the
 * retries; an RMPP answer that failed to come in counts as none),
 * -ECANCELED (the client was freed) or -EPROTO (an answer that cannot be
 * read).  recs: n records
 * stride bytes apart (stride = AttributeOffset * 8; for a GetResp the
 * record after the header), hdr the answer's 56-byte header (NULL with no
 * answer); all valid during the call only.
 */
typedef void (*saclient_done_fn)(void *arg, int status, const uint8_t *recs,
				 size_t n, size_t stride, const uint8_t *hdr);
/* A Report: notice is the 80-byte Notice (traps/notice.h decodes it). */
typedef void (*saclient_report_fn)(void *arg, const uint8_t *notice,
				   const struct mad_addr *from);

struct saclient;

/* t may be filled in later (by emu_attach or umad_transport_open). */
struct saclient *saclient_new(struct event_base *base, struct mad_transport *t,
			      const struct saclient_params *p);
/* Ends every pending query with -ECANCELED, then frees. */
void saclient_free(struct saclient *c);
/* The transport's receive callback; arg is the client. */
void saclient_recv(void *arg, const uint8_t *mad, size_t len,
		   const struct mad_addr *from, int status);
void saclient_set_report(struct saclient *c, saclient_report_fn fn, void *arg);

/*
 * Sends a query: method (SA_METHOD_GET, _GET_TABLE, _SET, _DELETE, or
 * _GET_MULTI of one MAD, answered with its first record), the
 * attribute, its modifier, the component mask and the record (rec_len
 * bytes, at most SA_DATA_SIZE; AttributeOffset is set from rec_len).
 * done is called once, from the loop.  Returns 0, or -1: errno EAGAIN
 * (max_inflight queries pending), EINVAL, ENOTCONN (no SM LID), EIO
 * (the transport refused it).
 */
int saclient_query(struct saclient *c, uint8_t method, uint16_t attr,
		   uint32_t attr_mod, uint64_t comp_mask, const void *rec,
		   size_t rec_len, saclient_done_fn done, void *arg);

/* ---- subscriptions (InformInfo, vol. 1 §13.4.8.3) ---- */

struct saclient_inform {
	uint8_t gid[16];	/* all zero: by LID range */
	uint16_t lid_begin;	/* SACLIENT_ALL: every port */
	uint16_t lid_end;
	uint16_t type;		/* SACLIENT_ALL */
	uint16_t trap;		/* SACLIENT_ALL */
	uint32_t producer;	/* SACLIENT_ALL_PRODUCERS */
	uint32_t qpn;		/* 1 */
	uint8_t resp_time;	/* RespTimeValue: 4.096 us * 2^value */
};

#define SA_INFORM_SIZE 36	/* = SA_SIZE_INFORM_INFO */

/* A generic subscription to trap (SACLIENT_ALL: every one) from anyone. */
void saclient_inform_default(struct saclient_inform *ii, uint16_t trap);
/* InformInfo Set (subscribe 1, unsubscribe 0); the answer echoes it. */
int saclient_inform(struct saclient *c, const struct saclient_inform *ii,
		    int subscribe, saclient_done_fn done, void *arg);
/*
 * The subscriptions the SA holds for the port's GID (subnet prefix
 * fe80::/64): a GetTable of InformInfoRecord by SubscriberGID.  For a
 * periodic check: no records after a new SM came means subscribe again.
 */
int saclient_subscriptions(struct saclient *c, saclient_done_fn done, void *arg);
/* ---- alias GUIDs (GUIDInfoRecord, vol. 1 §15.2.5.18) ---- */

#define SA_GUIDINFO_REC_SIZE 72
/*
 * GUIDInfoRecord Set (del 0) or Delete (del 1) of the alias GUIDs g[0..n)
 * (1..7) on the port's own LID, block 0, indexes 1..n: how a hypervisor
 * tells ibsmd its shared-LID VMs' vGUIDs (ibsmd(8), ibsm-listen(8)
 * --hypervisor).  The answer is the port's block 0 after the change.
 */
int saclient_alias_guids(struct saclient *c, int del, const uint64_t *g,
			 unsigned n, saclient_done_fn done, void *arg);
/* The port's GID, fe80::/64 and the port GUID. */
void saclient_port_gid(const struct saclient *c, uint8_t gid[16]);

const struct saclient_stats *saclient_get_stats(const struct saclient *c);
const struct rmpp_stats *saclient_rmpp_stats(const struct saclient *c);
/* Queries pending. */
unsigned saclient_inflight(const struct saclient *c);

#endif
