/*
 * Notices out: the subscriptions hosts make with SA InformInfo, matching
 * a notice against them (IBA vol. 1 §13.4.8.3, §15.2.5.12: trap number,
 * type, producer, LID range, a shared P_Key), and delivery: a Report per
 * matching subscription, its ReportResp tracked, resent after the
 * subscriber's RespTimeValue, the subscription dropped after
 * max_failures unanswered Reports.  Subscriptions are saved in the state
 * directory and survive a restart and a handover.
 *
 * Knows MADs and the model, nothing of sweeps or routing: the daemon
 * decides what to publish (GID in/out of service after a sweep, repath /
 * unpath after a reroute).
 */
#ifndef IBSMD_NOTIFY_H
#define IBSMD_NOTIFY_H

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

#include "mad/transport.h"
#include "traps/notice.h"

struct notifier;

/* Who sent an InformInfo Set. */
struct notify_subscriber {
	uint8_t gid[16];	/* the subscriber's port GID */
	uint32_t lid;		/* where Reports go */
	uint32_t qpn;		/* InformInfo:QPN (1 for the GSI) */
	uint16_t pkey;		/* the request's P_Key */
};

struct notify_params {
	unsigned max_failures;	/* Reports left unanswered before a subscription goes */
	unsigned min_resp_ms;	/* floor under RespTimeValue */
	char state_path[512];	/* the subscriptions file; "" = not saved */
};

/*
 * Whether two LIDs share a P_Key (the SM's view of their tables); NULL
 * means every pair does.
 */
typedef int (*notify_pkey_fn)(void *ctx, uint32_t lid_a, uint32_t lid_b);

struct notify_stats {
	uint64_t subscribed, unsubscribed, reports_sent, reports_resent;
	uint64_t report_resps, dropped_subscriptions, not_matched;
	uint64_t reports_lost;	/* not queued: the subscription had too many unanswered */
	uint64_t not_allowed;	/* matched, but the subscriber may not see it
				   (notifier_publish_if) */
};

struct notifier *notifier_new(struct event_base *base,
			      struct mad_transport *t,
			      const struct notify_params *p, char *err,
			      size_t errlen);
void notifier_free(struct notifier *n);
/*
 * Re-reads the state file and adds the subscriptions it holds that the
 * table lacks (a new master whose state directory another ibsmd wrote),
 * in O(n log n); an Enum the table's subscription of the same subscriber
 * has is replaced by a free one, and what would pass 64 subscriptions of
 * one subscriber or 65,536 in all is left out and logged.  0, or -1
 * with "FILE:LINE: reason" in err and nothing added.
 */
int notifier_load(struct notifier *n, char *err, size_t errlen);
void notifier_set_pkey_check(struct notifier *n, notify_pkey_fn fn,
			     void *ctx);

/*
 * InformInfo Set: subscribes (Subscribe=1) or unsubscribes; an identical
 * subscription is not added twice.  ii and out are 36 bytes; out is the
 * echo for the GetResp.  Returns 0 or an SA status (e.g. SA_STS_REQ_INVALID).
 */
int notifier_inform(struct notifier *n, const uint8_t *ii,
		    const struct notify_subscriber *who, uint8_t *out);

/* The subscriptions, for InformInfoRecord: calls fn for each. */
typedef void (*notify_each_fn)(void *arg, const uint8_t subscriber_gid[16],
			       uint16_t enum_id, const uint8_t ii[36]);
void notifier_foreach(struct notifier *n, notify_each_fn fn, void *arg);
size_t notifier_count(const struct notifier *n);

/*
 * Delivers nt to every subscription that matches it; source_lid is the
 * LID whose P_Keys the subscriber must share (the GID's port for 64-67,
 * the pair's source for 68/69; 0 = no check).  Returns the Reports queued.
 */
int notifier_publish(struct notifier *n, const struct notice *nt,
		     uint32_t source_lid);
/* The same, only to the subscriptions of the port at lid. */
int notifier_publish_to(struct notifier *n, uint32_t lid,
			const struct notice *nt, uint32_t source_lid);
/*
 * Whether the subscriber at lid may be told (the caller's own rule, e.g.
 * its port holds a multicast group's P_Key); 1 yes.
 */
typedef int (*notify_may_fn)(void *ctx, uint32_t subscriber_lid);
/*
 * Delivers nt to every matching subscription whose subscriber may_see
 * allows, with no P_Key check of a source (notices 66/67: the source is
 * a group, not a port).  Returns the Reports queued.
 */
int notifier_publish_if(struct notifier *n, const struct notice *nt,
			notify_may_fn may_see, void *ctx);

/* A ReportResp the receive path got: completes its Report.  1 if matched. */
int notifier_report_resp(struct notifier *n, const uint8_t *mad, size_t len,
			 const struct mad_addr *from);

const struct notify_stats *notifier_get_stats(const struct notifier *n);

#endif
