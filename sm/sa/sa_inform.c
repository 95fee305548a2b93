/*
 * The SA's InformInfo family (sa.h): InformInfo Set subscribes and
 * unsubscribes through the notifier (traps/notify.h) and is echoed in
 * the GetResp; InformInfoRecord Get/GetTable lists the subscriptions.
 *
 * The subscriber is the requester's port, found by the request's SLID in
 * the SA's view; its GID is the subnet prefix and that port's GUID, and
 * Reports go to its LID and the request's queue pair.  As OpenSM does,
 * a request from a LID no port holds, a GID naming no port, and a
 * subscription to the security traps (256-259) from an untrusted
 * requester (sa_trusted(): no sa.sa_key) are refused with
 * ERR_REQ_INVALID, the last counted (sa_untrusted()).  InformInfoRecords
 * carry QPN 0 unless the request is trusted (C15-0.2-1.16).
 *
 * Partitions (sa_share()).  A port the requester shares no partition
 * with is, to it, a port that does not exist: a subscription to its GID
 * is refused as one to a GID nobody has, and a LID range is refused when
 * it holds such a port (o13-14.1.1) or, when the requester cannot see
 * every port, a LID nobody holds, so that the status tells nothing of
 * whether a LID is taken (the SA's view decides, not the notifier's
 * callback, which lets a LID no port holds pass for the notices of a
 * port gone).  InformInfoRecord lists only the subscriptions of ports
 * the requester shares a partition with, to ports it shares one with.
 */
#include <string.h>

#include "mad/sa.h"
#include "traps/notify.h"
#include "sm/sa/sa_server.h"

#define SA_SIZE_INFORM_INFO_REC	64	/* 60 bytes of fields, 4 of padding */

/* The end port the GID names in the view (by its GUID), or FAB_NONE. */
static uint32_t port_of_gid(const struct sa_query *q, const uint8_t *gid)
{
	const struct fabric *f = q->view->f;
	if (sa_get64(gid) != q->view->subnet_prefix)
		return FAB_NONE;
	uint64_t guid = sa_get64(gid + 8);
	for (uint32_t pi = 0; pi < f->n_ports; pi++)
		if (f->ports[pi].guid == guid && fabric_is_endport(f, pi))
			return pi;
	return FAB_NONE;
}

/* Does the requester see every end port with a LID (is nothing hidden)? */
static int sees_all(const struct sa_query *q, uint32_t req)
{
	const struct fabric *f = q->view->f;
	for (uint32_t pi = 0; pi < f->n_ports; pi++)
		if (fabric_is_endport(f, pi) && f->ports[pi].lid &&
		    !sa_share(q->view, req, pi))
			return 0;
	return 1;
}

/*
 * May the requester subscribe to the LID range of ii (LIDRangeEnd 0:
 * the one LID)?  Every port in it must share a partition with it, and
 * a LID no port holds counts as one that does not when some port is
 * hidden from it.  Beyond the unicast LIDs: the notifier's refusal.
 */
static int range_visible(const struct sa_query *q, uint32_t req, const uint8_t *ii)
{
	const struct fabric *f = q->view->f;
	uint32_t b = sa_get16(ii + II_LID_BEGIN), e = sa_get16(ii + II_LID_END);
	int all = -1;		/* sees_all(), once asked */
	if (b == 0xffff)
		return 1;
	if (!e)
		e = b;
	if (e >= FAB_MLID_BASE)
		e = FAB_MLID_BASE - 1;
	for (uint32_t l = b ? b : 1; l <= e; l++) {
		uint32_t pi = fabric_lid_port(f, l);
		if (pi != FAB_NONE ? !sa_share(q->view, req, pi) :
		    !(all < 0 ? (all = sees_all(q, req)) : all))
			return 0;
	}
	return 1;
}

static int gid_is_zero(const uint8_t *g)
{
	for (int i = 0; i < 16; i++)
		if (g[i])
			return 0;
	return 1;
}

int sa_inform_info(struct sa_query *q)
{
	const uint8_t *ii = q->rec;
	if (!q->notify)
		return SA_STS_NO_RESOURCES;
	uint32_t pi = sa_requester(q);
	if (pi == FAB_NONE)
		return SA_STS_REQ_INVALID;
	const struct fab_port *p = &q->view->f->ports[pi];
	struct notify_subscriber who = {
		.lid = p->lid,
		.qpn = q->from->qpn ? q->from->qpn : 1,
		.pkey = 0xffff,		/* Reports go out as the SM's port: a full
					   member of the default partition */
	};
	sa_put64(who.gid, q->view->subnet_prefix);
	sa_put64(who.gid + 8, p->guid);
	uint16_t trap = sa_get16(ii + 26);
	if (ii[23] && ii[22] && trap >= 256 && trap <= 259 && !sa_trusted(q))
		return sa_untrusted(q);
	if (ii[23] && !gid_is_zero(ii)) {
		uint32_t gp = port_of_gid(q, ii);
		if (gp == FAB_NONE)
			return SA_STS_REQ_INVALID;
		if (!sa_share(q->view, pi, gp)) {
			sa_outside(q, "a GID");
			return SA_STS_REQ_INVALID;
		}
	}
	if (ii[23] && gid_is_zero(ii) && !range_visible(q, pi, ii)) {
		sa_outside(q, "a LID range");
		return SA_STS_REQ_INVALID;
	}
	uint8_t out[SA_SIZE_INFORM_INFO];
	int st = notifier_inform(q->notify, ii, &who, out);
	if (st)
		return st;
	return sa_answer_add(q, out) < 0 ? SA_STS_NO_RESOURCES : 0;
}

/* InformInfoRecord's components (IBA vol. 1 §15.2.5.12), bit offsets. */
static const struct sa_field iir_fields[] = {
	{ 0, 128 },		/* SubscriberGID */
	{ 128, 16 },		/* Enum */
	{ 144, 48 },		/* Reserved */
	{ 192, 128 },		/* InformInfo: GID */
	{ 320, 16 },		/* LIDRangeBegin */
	{ 336, 16 },		/* LIDRangeEnd */
	{ 352, 16 },		/* Reserved */
	{ 368, 8 },		/* IsGeneric */
	{ 376, 8 },		/* Subscribe */
	{ 384, 16 },		/* Type */
	{ 400, 16 },		/* TrapNumber / DeviceID */
	{ 416, 24 },		/* QPN */
	{ 440, 3 },		/* Reserved */
	{ 443, 5 },		/* RespTimeValue */
	{ 448, 8 },		/* Reserved */
	{ 456, 24 },		/* ProducerType / VendorID */
};
#define N_IIR_FIELDS (sizeof(iir_fields) / sizeof(iir_fields[0]))

struct iir_walk {
	struct sa_query *q;
	int trusted;
	int rc;
	uint32_t req;		/* the requester's port */
	struct guid_map *ports;	/* end ports by GUID; NULL: every port shares */
};

/*
 * May the requester see the subscription: the subscriber's port and the
 * port its GID names (if any) share a partition with it?  One that is
 * gone from the view is seen only where every port is.
 */
static int iir_visible(const struct iir_walk *w, const uint8_t gid[16],
		       const uint8_t ii[36])
{
	const struct sa_view *v = w->q->view;
	if (!w->ports)
		return 1;
	uint32_t sub = guid_map_get(w->ports, sa_get64(gid + 8));
	if (sub == FAB_NONE || !sa_share(v, w->req, sub))
		return 0;
	if (gid_is_zero(ii + II_GID))
		return 1;
	uint32_t to = guid_map_get(w->ports, sa_get64(ii + II_GID + 8));
	return to != FAB_NONE && sa_share(v, w->req, to);
}

static void iir_one(void *arg, const uint8_t gid[16], uint16_t enum_id,
		    const uint8_t ii[36])
{
	struct iir_walk *w = arg;
	uint8_t rec[SA_SIZE_INFORM_INFO_REC];
	if (w->rc || sa_enough(w->q) || !iir_visible(w, gid, ii))
		return;
	memset(rec, 0, sizeof(rec));
	memcpy(rec, gid, 16);
	sa_put16(rec + 16, enum_id);
	memcpy(rec + 24, ii, SA_SIZE_INFORM_INFO);
	if (!w->trusted)
		memset(rec + 24 + 28, 0, 3);	/* QPN */
	if (sa_match(w->q, rec, iir_fields, N_IIR_FIELDS) &&
	    sa_answer_add(w->q, rec) < 0)
		w->rc = SA_STS_NO_RESOURCES;
}

int sa_inform_records(struct sa_query *q)
{
	int st = sa_mask_check(q, N_IIR_FIELDS);
	if (st)
		return st;
	if (!q->notify)
		return 0;
	struct guid_map ports;
	struct iir_walk w = {
		.q = q,
		.trusted = sa_trusted(q),
		.req = sa_requester(q),
	};
	if (q->view->parts && q->view->parts->tenants) {
		if (w.req == FAB_NONE)
			return 0;
		if (fabric_endport_map(q->view->f, 0, &ports) < 0)
			return SA_STS_NO_RESOURCES;
		w.ports = &ports;
	}
	notifier_foreach(q->notify, iir_one, &w);
	if (w.ports)
		guid_map_free(w.ports);
	return w.rc;
}
