/*
 * The subnet administrator's core (sa.h): class 0x03 requests from the
 * receive path, checked, handed to their record family, answered.
 *
 * The order of the checks follows OpenSM (osm_sa_mad_ctrl.c) where the
 * spec leaves room:
 *   - not MASTER, or no configuration published yet: ignored (C15-0.1.3);
 *   - an RMPP transfer MAD (Active flag): mad/rmpp.c's, through the
 *     dispatcher's RMPP hook; a request that came as RMPP DATA is
 *     reassembled there and answered here like any other;
 *   - shorter than the SA header (56 bytes): dropped, counted;
 *   - SM_Key neither 0 nor sa.sa_key: dropped, counted, logged
 *     rate-limited (C15-0.1.5; OpenSM's ERR 1A04);
 *   - with tenant partitions, a record family's request from a LID no
 *     port holds: dropped, counted (OpenSM: "Cannot find requester");
 *   - a component mask selecting a bit past the record's fields:
 *     REQ_INVALID; the family's own checks: its status;
 *   - Get: NO_RECORDS for none, TOO_MANY_RECORDS for more than one;
 *   - method or attribute not served: the dispatcher's
 *     METHOD_NOT_SUPPORTED / METHOD_ATTR_NOT_SUPPORTED.
 * Answers carry SM_Key 0.  A GetTable is held to the budget of answers
 * in flight (sm/sa/sa_budget.h): Busy past a requester's share or the
 * total, ERR_NO_RESOURCES for an answer longer than a requester may hold.
 * A request sent as RMPP DATA longer than SA_MAX_REQUEST is refused by
 * the RMPP receiver at its first segment: no request the SA serves is
 * longer.  A GetTableResp is 56 + n * stride bytes
 * (stride = the record size rounded up to 8, AttributeOffset = stride /
 * 8; the empty table is the header alone with AttributeOffset 0); one that
 * goes out through rmpp_send(): one that fits one MAD as that single MAD
 * with RMPP DATA First|Last (as OpenSM's look on the wire; not retried,
 * ibsim returns no ACK), a longer one as segments with ACKs.
 *
 * The view.  sa_publish() copies the model and its routes: the daemon
 * replaces its model when a heavy sweep configures, and moves its tables
 * to the routing thread, so the SA keeps its own copy, whole, until the
 * next configuration is complete.  With them it copies the VMs of the
 * registry (sm->vms) whose VF port is in the model and holds the VM's
 * LID: the SA answers for a VM's GID (PathRecord, GUIDInfoRecord) from
 * that copy, so a migration shows when the daemon publishes again, and
 * a VM whose VF is absent or not yet given its LID is no one's GID.
 * And it resolves the policy's partitions on its copy (sa_share(): the
 * families answer within the requester's partitions).
 */
#include "sm/sa/sa_server.h"

#include <infiniband/mad.h>
#include <stdlib.h>

#include <jansson.h>
#include <string.h>

#include "mad/dispatch.h"
#include "mad/rmpp.h"
#include "mad/sa.h"
#include "routing/path.h"
#include "traps/notify.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/sa/sa_budget.h"
#include "sm/sa/svcdb.h"
#include "sm/smstate.h"

/* The longest request (data after the SA header) any family serves. */
#define SA_MAX_REQUEST	SA_DATA_SIZE
/* RMPP transfers at once: receiving (requests are one segment: only a
 * malformed or hostile one waits for more) and, per LID, the answers of
 * one requester (the budget's limit, at its largest, below it). */
#define SA_RMPP_RECV_SLOTS	256
#define SA_RMPP_RECV_PER_PEER	4
#define SA_RMPP_SEND_PER_PEER	256

struct sa {
	struct sm *sm;
	int have_view;
	struct sa_view view;
	struct fabric f;		/* the published copies */
	struct lft_tables lft;
	uint8_t (*pi_raw)[SMP_DATA_SIZE], (*si_raw)[SMP_DATA_SIZE];
	struct sa_vm *vms;
	/* the shared-LID VMs (struct sa_view): slots, their chains, the free
	 * slots (a chain of their own from svm_free), the index */
	struct sa_vm *svm;
	uint32_t *svm_next, *svm_head, *svm_tail;
	uint32_t n_svm_slots, cap_svm, svm_free;
	struct guid_map svm_by_guid;
	struct part_model parts;
	struct guid_map port_by_guid;	/* the view's end ports */
	struct rmpp *rmpp;
	struct sa_budget *budget;	/* answers in flight */
	struct svc_db *svc;		/* registered ServiceRecords */
	struct sa_stats st;
	const struct sa_family *families;	/* what is served (sa_init) */
	size_t n_families;
};

#define CPI_CAP_PORTINFO_CAPMASK_MATCH	0x2000	/* ClassPortInfo:CapabilityMask bit 13 */
/* CapabilityMask2 bit 3: the SM keeps MulticastFDBTop (sm/write/plan_mcast.c)
 * and SwitchInfoRecords carry it; saquery shows it only then */
#define CPI_CAP2_MCAST_TOP		0x8
#define CPI_CAP2_SHIFT			5	/* above RespTimeValue's 5 bits */

static const struct {
	uint8_t bit, method;
} methods[] = {
	{ SA_M_GET, SA_METHOD_GET },
	{ SA_M_GET_TABLE, SA_METHOD_GET_TABLE },
	{ SA_M_SET, SA_METHOD_SET },
	{ SA_M_DELETE, SA_METHOD_DELETE },
	{ SA_M_GET_MULTI, SA_METHOD_GET_MULTI },
};

static uint8_t method_bit(uint8_t method)
{
	for (size_t k = 0; k < sizeof(methods) / sizeof(methods[0]); k++)
		if (methods[k].method == method)
			return methods[k].bit;
	return 0;
}

static size_t stride_of(size_t rec_size)
{
	return (rec_size + 7) & ~(size_t)7;
}

static const struct sa_family *family_of(const struct sa *sa, uint16_t attr)
{
	for (size_t i = 0; i < sa->n_families; i++)
		if (sa->families[i].attr == attr)
			return &sa->families[i];
	return NULL;
}

int sa_answer_add(struct sa_query *q, const void *rec)
{
	size_t stride = stride_of(q->rec_size);
	if (sa_enough(q))
		return 0;
	size_t most = q->max_bytes ? q->max_bytes / stride : SIZE_MAX;
	if (q->n_recs >= most) {
		q->too_long = 1;	/* more than a requester may hold */
		return -1;
	}
	if (q->n_recs == q->cap_recs) {
		size_t cap = q->cap_recs ? q->cap_recs * 2 : 16;
		if (cap > most)
			cap = most;
		uint8_t *p = realloc(q->recs, cap * stride);
		if (!p)
			return -1;
		q->recs = p;
		q->cap_recs = cap;
	}
	uint8_t *dst = q->recs + q->n_recs * stride;
	memcpy(dst, rec, q->rec_size);
	memset(dst + q->rec_size, 0, stride - q->rec_size);
	q->n_recs++;
	return 0;
}

uint32_t sa_requester(const struct sa_query *q)
{
	const struct fabric *f = q->view->f;
	if (!f || !q->from || !q->from->lid)
		return FAB_NONE;
	return fabric_lid_port(f, q->from->lid);
}

void sa_outside(struct sa_query *q, const char *what)
{
	q->sa->st.outside++;
	log_limited(LOG_INFO, "SA: request (attribute 0x%04x) from LID %u named %s outside "
		    "its partitions; answered as if there were none", q->attr,
		    q->from ? q->from->lid : 0, what);
}

int sa_trusted(const struct sa_query *q)
{
	return q->sa_key && sa_sm_key(q->mad) == q->sa_key;
}

int sa_untrusted(struct sa_query *q)
{
	q->sa->st.untrusted++;
	log_limited(LOG_NOTICE, "SA: request (attribute 0x%04x, method 0x%02x) from LID %u "
		    "without the SA key (sa.sa_key) a trusted requester holds; ERR_REQ_INVALID",
		    q->attr, q->method, q->from ? q->from->lid : 0);
	return SA_STS_REQ_INVALID;
}

/* The end port whose P_Key table port pi has, or FAB_NONE (none). */
static uint32_t table_port(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	if (fabric_is_endport(f, pi))
		return pi;
	if (f->nodes[p->node].type == FAB_SWITCH && p->remote != FAB_NONE &&
	    fabric_is_endport(f, p->remote))
		return p->remote;
	return FAB_NONE;
}

int sa_share(const struct sa_view *v, uint32_t a, uint32_t b)
{
	const struct part_model *m = v->parts;
	if (a == b || !m || !m->tenants)
		return 1;	/* without tenants every port is a full member */
	if (a >= v->f->n_ports || b >= v->f->n_ports)
		return 0;
	a = table_port(v->f, a);
	b = table_port(v->f, b);
	if (a == FAB_NONE || b == FAB_NONE || a == b)
		return 1;
	return part_shared(m, a, b, PART_NONE) != PART_NONE;
}

uint32_t sa_port_of_guid(const struct sa_view *v, uint64_t guid, uint32_t hint)
{
	const struct fabric *f = v->f;
	/* the requester's own port, the usual case: no scan of the fabric */
	if (hint < f->n_ports && f->ports[hint].guid == guid &&
	    fabric_is_endport(f, hint))
		return hint;
	if (v->port_by_guid) {
		uint32_t pi = guid_map_get(v->port_by_guid, guid);
		if (pi != FAB_NONE && f->ports[pi].guid == guid && fabric_is_endport(f, pi))
			return pi;
	} else {
		for (uint32_t pi = 0; pi < f->n_ports; pi++)
			if (f->ports[pi].guid == guid && fabric_is_endport(f, pi))
				return pi;
	}
	const struct sa_vm *vm = sa_vm_of_guid(v, guid);
	return vm ? vm->port : FAB_NONE;
}

int sa_port_holds(const struct sa_view *v, uint32_t pi, uint16_t pkey)
{
	uint16_t tab[CFG_MAX_PARTS + 1];
	if (!v->parts)
		return (pkey & 0x7fff) == PART_DEFAULT_PKEY;
	unsigned n = part_pkeys(v->parts, v->f, pi, tab, CFG_MAX_PARTS + 1);
	for (unsigned k = 0; k < n; k++)
		if ((tab[k] & 0x7fff) == (pkey & 0x7fff))
			return 1;
	return 0;
}

int sa_mask_check(const struct sa_query *q, unsigned n_fields)
{
	if (n_fields < 64 && (q->comp_mask >> n_fields))
		return SA_STS_REQ_INVALID;
	return 0;
}

static uint64_t get_bits(const uint8_t *p, unsigned off, unsigned bits)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < bits; i++) {
		unsigned b = off + i;
		v = v << 1 | ((p[b / 8] >> (7 - b % 8)) & 1);
	}
	return v;
}

int sa_match(const struct sa_query *q, const uint8_t *rec,
	     const struct sa_field *fields, unsigned n_fields)
{
	for (unsigned i = 0; i < n_fields && i < 64; i++) {
		if (!(q->comp_mask & ((uint64_t)1 << i)))
			continue;
		const struct sa_field *fl = &fields[i];
		if (fl->bits % 8 == 0 && fl->off % 8 == 0) {
			if (memcmp(rec + fl->off / 8, q->rec + fl->off / 8, fl->bits / 8))
				return 0;
		} else if (get_bits(rec, fl->off, fl->bits) !=
			   get_bits(q->rec, fl->off, fl->bits)) {
			return 0;
		}
	}
	return 1;
}

uint32_t sa_sminfos(const struct sa_query *q, struct smp_sminfo *out, uint32_t max)
{
	const struct sm *sm = q->sm;
	if (!max)
		return 0;
	out[0] = (struct smp_sminfo){
		.guid = sm->tr.port_guid,
		.priority = (uint8_t)sm->cfg.sm_priority,
		.state = (uint8_t)sm->state,
		.act_count = smstate_act_count(sm),
	};
	return 1 + election_known_sms(sm, out + 1, max - 1);
}

/* ClassPortInfo (IBA vol. 1 §13.4.8.1) of the SA: Get only, no mask. */
int sa_class_port_info(struct sa_query *q)
{
	uint8_t r[SA_SIZE_CLASS_PORT_INFO];
	unsigned ms = (unsigned)q->sm->cfg.mad_timeout_ms, rtv = 0;
	/* RespTimeValue: 4.096 us * 2^rtv covers the MAD timeout */
	while (rtv < 31 && (4096ull << rtv) < (uint64_t)ms * 1000000)
		rtv++;
	memset(r, 0, sizeof(r));
	r[0] = 1;
	r[1] = SA_CLASS_VERSION;
	sa_put16(r + 2, CPI_CAP_PORTINFO_CAPMASK_MATCH);
	sa_put32(r + 4, CPI_CAP2_MCAST_TOP << CPI_CAP2_SHIFT | (rtv & 0x1f));
	sa_put32(r + 32, 1);			/* RedirectQP */
	sa_put32(r + 36, IB_DEFAULT_QP1_QKEY);	/* RedirectQ_Key */
	sa_put32(r + 68, IB_DEFAULT_QP1_QKEY);	/* TrapQ_Key */
	return sa_answer_add(q, r) < 0 ? SA_STS_NO_RESOURCES : 0;
}

/* ---- answers ---- */

/* The request's header turned into its response's, SM_Key 0. */
static void response_header(uint8_t *out, const uint8_t *req, int status)
{
	memcpy(out, req, SA_HDR_SIZE);
	mad_make_response(out, status);
	memset(out + 36, 0, 8);		/* SM_Key */
}

static void send_one(struct sa *sa, const uint8_t *mad, size_t len,
		     const struct mad_addr *from)
{
	if (mad_send_response_len(&sa->sm->tr, mad, len, from) < 0)
		sa->st.send_failed++;
}

static void send_error(struct sa *sa, const uint8_t *req,
		       const struct mad_addr *from, int status)
{
	uint8_t out[MAD_SIZE];
	memset(out, 0, sizeof(out));
	response_header(out, req, status);
	sa_put16(out + 44, 0);		/* AttributeOffset */
	sa->st.errors++;
	send_one(sa, out, MAD_SIZE, from);
}

static void send_get(struct sa *sa, struct sa_query *q)
{
	uint8_t out[MAD_SIZE];
	size_t stride = stride_of(q->rec_size);
	memset(out, 0, sizeof(out));
	response_header(out, q->mad, 0);
	sa_put16(out + 44, (uint16_t)(stride / 8));
	memcpy(out + SA_HDR_SIZE, q->recs,
	       q->rec_size > SA_DATA_SIZE ? SA_DATA_SIZE : q->rec_size);
	sa->st.records++;
	send_one(sa, out, MAD_SIZE, q->from);
}

/* The limits in force (the policy's, which a reload changes). */
static struct sa_limits limits_of(const struct sm *sm)
{
	return (struct sa_limits){
		.per_requester = (unsigned)sm->cfg.sa_max_answers_per_requester,
		.bytes_per_requester = sm->cfg.sa_max_answer_bytes_per_requester,
		.total = SA_MAX_ANSWERS,
		.bytes = sm->cfg.sa_max_answer_bytes,
	};
}

/* Who holds an answer: the port of the LID (its GUID), else the LID. */
static uint64_t requester_key(const struct sa *sa, uint32_t lid)
{
	uint32_t pi = fabric_lid_port(&sa->f, lid);
	if (pi == FAB_NONE)
		return (uint64_t)1 << 63 | lid;
	const struct fab_port *p = &sa->f.ports[pi];
	return p->guid ? p->guid : sa->f.nodes[p->node].guid;
}

/* A request refused for the budget: the status, counted, a line now and then. */
static void refuse(struct sa *sa, const uint8_t *req, const struct mad_addr *from,
		   int status)
{
	const struct sa_budget_stats *b = sa_budget_get_stats(sa->budget);
	sa->st.refused_budget++;
	sa->st.refused_too_long += status == SA_STS_NO_RESOURCES;
	log_limited(LOG_NOTICE, "SA: GetTable of 0x%04x from LID %u refused with status 0x%04x: "
		    "%u answers (%llu bytes) in flight, from %u requesters (sa.max_answers_per_requester, "
		    "sa.max_answer_bytes_per_requester, sa.max_answer_bytes)",
		    mad_attr_id(req), from->lid, status, b->answers,
		    (unsigned long long)b->bytes, b->requesters);
	send_error(sa, req, from, status);
}

static void answer_done(void *arg, int result)
{
	(void)result;
	sa_budget_give(arg);
}

static void send_table(struct sa *sa, struct sa_query *q)
{
	size_t stride = stride_of(q->rec_size);
	size_t len = q->n_recs * stride;
	uint8_t hdr[SA_HDR_SIZE];
	response_header(hdr, q->mad, 0);
	sa_put16(hdr + 44, q->n_recs ? (uint16_t)(stride / 8) : 0);
	if (!sa->rmpp) {
		sa->st.send_failed++;
		return;
	}
	struct sa_ticket *t = NULL;
	if (len > SA_DATA_SIZE) {
		/* more than one MAD: held until its transfer ends */
		struct sa_limits l = limits_of(sa->sm);
		int st = sa_budget_take(sa->budget, &l, requester_key(sa, q->from->lid),
					len, &t);
		if (st) {
			refuse(sa, q->mad, q->from, st);
			return;
		}
		uint8_t *fit = realloc(q->recs, len);	/* no slack kept while in flight */
		if (fit)
			q->recs = fit;
	}
	uint8_t *recs = q->recs;
	q->recs = NULL;
	sa->st.records += q->n_recs;
	if (rmpp_answer_take(sa->rmpp, q->mad, q->len, hdr, recs, len, q->from,
			     t ? answer_done : NULL, t) < 0) {
		/* EBUSY: the same request again while its answer is going
		 * (another one with its TID ends that answer: mad/rmpp.h);
		 * EAGAIN: no RMPP slot for this LID */
		if (t)
			sa_budget_give(t);
		sa->st.send_failed++;
		return;
	}
	sa->st.rmpp_sent++;
}

/* A request (no RMPP transfer) of a family the table serves. */
static int sa_request(struct sm *sm, const uint8_t *mad, size_t len,
		      const struct mad_addr *from)
{
	struct sa *sa = sm->sa;
	if (len < SA_HDR_SIZE) {
		sa->st.dropped_short++;
		return MAD_DROP;
	}
	uint64_t key = sa_sm_key(mad);
	if (key && key != sm->cfg.sa_key) {
		sa->st.dropped_key++;
		log_limited(LOG_NOTICE, "SA: request (attribute 0x%04x, method 0x%02x) from LID %u "
			    "with SM_Key 0x%016llx, neither 0 nor sa.sa_key; ignored",
			    mad_attr_id(mad), mad_method(mad), from->lid,
			    (unsigned long long)key);
		return MAD_DONE;
	}
	const struct sa_family *fam = family_of(sm->sa, mad_attr_id(mad));
	if (!fam || !(fam->methods & method_bit(mad_method(mad))))
		return MAD_STS_METHOD_ATTR_UNSUPPORTED;	/* the dispatcher already knows */
	const struct part_model *pm = sa->view.parts;
	if (fam->by_requester && pm && pm->tenants &&
	    fabric_lid_port(&sa->f, from->lid) == FAB_NONE) {
		sa->st.dropped_requester++;
		log_debug("SA: %s from LID %u, which no port holds; ignored",
			  fam->name, from->lid);
		return MAD_DONE;
	}
	uint8_t req[MAD_SIZE];
	memcpy(req, mad, len);
	memset(req + len, 0, MAD_SIZE - len);
	struct sa_limits lim = limits_of(sm);
	/* GetTable and GetMulti answer a table: held to the budget */
	int table = mad_method(mad) == SA_METHOD_GET_TABLE ||
		    mad_method(mad) == SA_METHOD_GET_MULTI;
	if (table && sa_budget_admit(sa->budget, &lim, requester_key(sa, from->lid))) {
		refuse(sa, req, from, MAD_STS_BUSY);
		return MAD_DONE;
	}
	struct sa_query q = {
		.sa = sa, .sm = sm, .view = &sa->view,
		.notify = sm->notify, .sa_key = sm->cfg.sa_key,
		.mad = req, .len = len, .from = from,
		.method = mad_method(mad), .attr = fam->attr,
		.attr_mod = mad_attr_mod(mad), .comp_mask = sa_comp_mask(mad),
		.rec = req + SA_HDR_SIZE, .rec_len = len - SA_HDR_SIZE,
		.rec_size = fam->rec_size,
		.max_bytes = table ? lim.bytes_per_requester : 0,
	};
	int status = fam->fn(&q);
	if (q.too_long) {
		status = SA_STS_NO_RESOURCES;
		sa->st.refused_budget++;
		sa->st.refused_too_long++;
		log_limited(LOG_NOTICE, "SA: %s GetTable from LID %u: more than the %llu bytes a requester may hold "
			    "(sa.max_answer_bytes_per_requester); ERR_NO_RESOURCES",
			    fam->name, from->lid, (unsigned long long)lim.bytes_per_requester);
	}
	if (!status && q.method == SA_METHOD_GET && q.n_recs != 1)
		status = q.n_recs ? SA_STS_TOO_MANY_RECORDS : SA_STS_NO_RECORDS;
	if (status) {
		log_debug("SA: %s method 0x%02x mask 0x%llx from LID %u: status 0x%04x",
			  fam->name, q.method, (unsigned long long)q.comp_mask,
			  from->lid, status);
		send_error(sa, req, from, status);
	} else if (q.method == SA_METHOD_GET || q.method == SA_METHOD_SET ||
		   q.method == SA_METHOD_DELETE) {
		send_get(sa, &q);	/* a Set/Delete is echoed in one GetResp/DeleteResp */
	} else {
		send_table(sa, &q);
	}
	sa->st.answered++;
	free(q.recs);
	return MAD_DONE;
}

/* The receive path's handler for every (method, attribute) served. */
static int sa_recv(void *ctx, const uint8_t *mad, size_t len,
		   const struct mad_addr *from)
{
	struct sm *sm = ctx;
	struct sa *sa = sm->sa;
	sa->st.requests++;
	if (sm->state != SMS_MASTER || !sa->have_view) {
		sa->st.dropped_not_master++;
		return MAD_DONE;
	}
	/* an active RMPP MAD went to the RMPP hook (mad_dispatch_set_rmpp) */
	if (mad[26] & RMPP_FLAG_ACTIVE) {
		sa->st.dropped_rmpp++;
		return MAD_DONE;
	}
	return sa_request(sm, mad, len, from);
}

/* A request that came as an RMPP transfer, reassembled. */
static void on_rmpp_request(void *arg, const uint8_t *hdr,
			    const uint8_t *payload, size_t len,
			    const struct mad_addr *from)
{
	struct sm *sm = arg;
	uint8_t req[MAD_SIZE];
	if (sm->state != SMS_MASTER || !sm->sa->have_view)
		return;
	memset(req, 0, sizeof(req));
	memcpy(req, hdr, SA_HDR_SIZE);
	memset(req + MAD_HDR_SIZE, 0, MAD_RMPP_HDR_END - MAD_HDR_SIZE);
	if (mad_method(req) & MAD_METHOD_RESPONSE || !mad_response_method(mad_method(req)))
		return;
	if (len > SA_MAX_REQUEST) {	/* the RMPP receiver refuses longer ones */
		send_error(sm->sa, req, from, SA_STS_REQ_INVALID);
		return;
	}
	memcpy(req + SA_HDR_SIZE, payload, len);
	int r = sa_request(sm, req, MAD_SIZE, from);
	if (r >= 0)
		send_error(sm->sa, req, from, r);
}

int sa_init(struct sm *sm, const struct sa_family *families, size_t n_families)
{
	struct sa *sa = calloc(1, sizeof(*sa));
	if (!sa)
		return -1;
	sa->sm = sm;
	sa->families = families;
	sa->n_families = n_families;
	fabric_init(&sa->f);
	sm->sa = sa;
	struct rmpp_params rp = {	/* the rest: RMPP's defaults */
		.retries = 3,
		.max_msg = SA_MAX_REQUEST,
		.recv_slots = SA_RMPP_RECV_SLOTS,
		.recv_per_peer = SA_RMPP_RECV_PER_PEER,
		.send_slots = SA_MAX_ANSWERS,
		.send_per_peer = SA_RMPP_SEND_PER_PEER,
	};
	if (!(sa->budget = sa_budget_new()) ||
	    !(sa->svc = svc_db_new(sm->base, sm->cfg.state_dir,
				   (uint32_t)sm->cfg.sa_max_services)))
		goto fail;
	if (sm->base && !(sa->rmpp = rmpp_new(sm->base, &sm->tr, &rp)))
		goto fail;
	if (sa->rmpp) {
		rmpp_set_receiver(sa->rmpp, on_rmpp_request, sm);
		mad_dispatch_set_rmpp(sm->disp, rmpp_hook, sa->rmpp);
	}
	for (size_t i = 0; i < n_families; i++)
		for (size_t k = 0; k < sizeof(methods) / sizeof(methods[0]); k++)
			if ((families[i].methods & methods[k].bit) &&
			    mad_dispatch_register(sm->disp, SA_CLASS, SA_CLASS_VERSION,
						  methods[k].method, families[i].attr,
						  sa_recv, sm) < 0)
				goto fail;
	return 0;
fail:
	sa_free(sm);
	return -1;
}

static void drop_view(struct sa *sa)
{
	fabric_free(&sa->f);
	lft_tables_free(&sa->lft);
	free(sa->pi_raw);
	free(sa->si_raw);
	free(sa->vms);
	free(sa->svm);
	free(sa->svm_next);
	free(sa->svm_head);
	free(sa->svm_tail);
	guid_map_free(&sa->svm_by_guid);
	part_model_free(&sa->parts);
	guid_map_free(&sa->port_by_guid);
	sa->view.parts = NULL;
	sa->view.port_by_guid = NULL;
	sa->pi_raw = sa->si_raw = NULL;
	sa->vms = sa->svm = NULL;
	sa->svm_next = sa->svm_head = sa->svm_tail = NULL;
	sa->n_svm_slots = sa->cap_svm = 0;
	sa->svm_free = FAB_NONE;
	sa->view.pi_raw = sa->view.si_raw = NULL;
	sa->view.vms = sa->view.svms = NULL;
	sa->view.svm_next = sa->view.svm_head = NULL;
	sa->view.svm_by_guid = NULL;
	sa->view.n_vms = sa->view.n_svms = 0;
	sa->have_view = 0;
}

void sa_free(struct sm *sm)
{
	struct sa *sa = sm->sa;
	if (!sa)
		return;
	if (sm->disp)
		for (size_t i = 0; i < sa->n_families; i++)
			for (size_t k = 0; k < sizeof(methods) / sizeof(methods[0]); k++)
				if (sa->families[i].methods & methods[k].bit)
					mad_dispatch_unregister(sm->disp, SA_CLASS,
								methods[k].method,
								sa->families[i].attr);
	if (sm->disp)
		mad_dispatch_set_rmpp(sm->disp, NULL, NULL);
	rmpp_free(sa->rmpp);
	sa_budget_free(sa->budget);
	svc_db_free(sa->svc);
	drop_view(sa);
	free(sa);
	sm->sa = NULL;
}

static int copy_lft(struct lft_tables *dst, const struct lft_tables *src,
		    uint32_t n_nodes)
{
	memset(dst, 0, sizeof(*dst));
	dst->n_sw = src->n_sw;
	dst->max_lid = src->max_lid;
	size_t cells = (size_t)src->n_sw * (src->max_lid + 1);
	dst->sw_node = malloc((src->n_sw ? src->n_sw : 1) * sizeof(*dst->sw_node));
	dst->row_of_node = malloc((n_nodes ? n_nodes : 1) * sizeof(*dst->row_of_node));
	dst->port = malloc(cells ? cells : 1);
	if (!dst->sw_node || !dst->row_of_node || !dst->port) {
		lft_tables_free(dst);
		return -1;
	}
	memcpy(dst->sw_node, src->sw_node, src->n_sw * sizeof(*dst->sw_node));
	memcpy(dst->row_of_node, src->row_of_node, n_nodes * sizeof(*dst->row_of_node));
	memcpy(dst->port, src->port, cells);
	if (src->sl && src->sl_class) {
		/* the SLs: per-LID source classes, a row of SLs per class */
		size_t lids = (size_t)src->max_lid + 1;
		size_t n = (size_t)src->n_sl_class * lids;
		dst->sl_class = malloc(lids * sizeof(*dst->sl_class));
		dst->sl = malloc(n ? n : 1);
		if (!dst->sl_class || !dst->sl) {
			lft_tables_free(dst);
			return -1;
		}
		memcpy(dst->sl_class, src->sl_class, lids * sizeof(*dst->sl_class));
		memcpy(dst->sl, src->sl, n);
		dst->n_sl_class = src->n_sl_class;
	}
	if (src->part_sl && src->n_part_sl) {
		if (!(dst->part_sl = malloc(src->n_part_sl))) {
			lft_tables_free(dst);
			return -1;
		}
		memcpy(dst->part_sl, src->part_sl, src->n_part_sl);
		dst->n_part_sl = src->n_part_sl;
	}
	return 0;	/* sl2vl: not a host-visible fact, not copied */
}

/*
 * The end port of a VM's VF in f: VF vf of the vSwitch hyp_guid (the
 * registry's own names for it, sm/model/vm.h) when that port is still the VF
 * port of GUID vf_guid (not recabled), else FAB_NONE; vm_port()'s rule,
 * kept here so that the SA does not wait on the registry's code.
 */
static uint32_t vm_vf_port(const struct fabric *f, const struct vm *v)
{
	uint32_t vs = fabric_find_node(f, v->hyp_guid);
	if (v->shared || vs == FAB_NONE || !fabric_is_vswitch(f, vs) || v->vf < 0)
		return FAB_NONE;
	uint32_t pi = fabric_vswitch_vf(f, vs, (unsigned)v->vf, NULL);
	return pi != FAB_NONE && f->ports[pi].guid == v->vf_guid ? pi : FAB_NONE;
}

static int vm_cmp_port(const void *a, const void *b)
{
	const struct sa_vm *x = a, *y = b;
	return x->port < y->port ? -1 : x->port > y->port;
}

/* ---- the shared-LID VMs of the view ---- */

/*
 * A shared-LID VM's port: its hypervisor's PF, answered with the PF's
 * LID as the view has it (the registry's lid is the one last saved);
 * FAB_NONE when that PF is not in the view or has no LID.
 */
static uint32_t svm_pf(const struct fabric *f, uint64_t hyp_guid)
{
	uint32_t hyp = fabric_find_node(f, hyp_guid);
	uint32_t pf = hyp != FAB_NONE && fabric_is_vswitch(f, hyp) ?
		      fabric_vswitch_pf(f, hyp) : FAB_NONE;
	return pf != FAB_NONE && f->ports[pf].lid ? pf : FAB_NONE;
}

/* The view's pointers after the arrays moved. */
static void svm_expose(struct sa *sa)
{
	sa->view.svms = sa->svm;
	sa->view.svm_next = sa->svm_next;
	sa->view.svm_head = sa->svm_head;
	sa->view.svm_by_guid = &sa->svm_by_guid;
}

/* The chains' heads and tails for sa->f's ports, empty.  0 or -1. */
static int svm_init(struct sa *sa)
{
	size_t n = (size_t)sa->f.n_ports + 1;
	sa->svm_free = FAB_NONE;
	sa->svm_head = malloc(n * sizeof(*sa->svm_head));
	sa->svm_tail = malloc(n * sizeof(*sa->svm_tail));
	if (!sa->svm_head || !sa->svm_tail)
		return -1;
	memset(sa->svm_head, 0xff, n * sizeof(*sa->svm_head));	/* FAB_NONE */
	memset(sa->svm_tail, 0xff, n * sizeof(*sa->svm_tail));
	svm_expose(sa);
	return 0;
}

/* Takes vguid out of its PF's chain and frees its slot (absent: nothing). */
static void svm_unlink(struct sa *sa, uint64_t vguid)
{
	uint32_t s = guid_map_get(&sa->svm_by_guid, vguid);
	if (s == FAB_NONE)
		return;
	uint32_t pf = sa->svm[s].port, prev = FAB_NONE;
	for (uint32_t k = sa->svm_head[pf]; k != s; k = sa->svm_next[k])
		prev = k;	/* that PF's VMs only: bounded per hypervisor */
	if (prev == FAB_NONE)
		sa->svm_head[pf] = sa->svm_next[s];
	else
		sa->svm_next[prev] = sa->svm_next[s];
	if (sa->svm_tail[pf] == s)
		sa->svm_tail[pf] = prev;
	guid_map_del(&sa->svm_by_guid, vguid);
	sa->svm[s] = (struct sa_vm){ .vguid = 0, .port = FAB_NONE };
	sa->svm_next[s] = sa->svm_free;
	sa->svm_free = s;
	sa->view.n_svms--;
}

/* A free slot (grown when none is); FAB_NONE on ENOMEM. */
static uint32_t svm_slot(struct sa *sa)
{
	if (sa->svm_free != FAB_NONE) {
		uint32_t s = sa->svm_free;
		sa->svm_free = sa->svm_next[s];
		return s;
	}
	if (sa->n_svm_slots == sa->cap_svm) {
		uint32_t cap = sa->cap_svm ? sa->cap_svm * 2 : 64;
		struct sa_vm *v = realloc(sa->svm, cap * sizeof(*v));
		if (v)
			sa->svm = v;
		uint32_t *nx = v ? realloc(sa->svm_next, cap * sizeof(*nx)) : NULL;
		if (nx)
			sa->svm_next = nx;
		svm_expose(sa);
		if (!nx)
			return FAB_NONE;
		sa->cap_svm = cap;
	}
	return sa->n_svm_slots++;
}

/* vguid on the PF of hyp_guid, last of its chain (moved if it was elsewhere). */
static int svm_set(struct sa *sa, uint64_t vguid, uint64_t hyp_guid)
{
	svm_unlink(sa, vguid);
	uint32_t pf = svm_pf(&sa->f, hyp_guid);
	if (pf == FAB_NONE)
		return 0;	/* not answered for until its PF is there */
	uint32_t s = svm_slot(sa);
	if (s == FAB_NONE || guid_map_put(&sa->svm_by_guid, vguid, s) < 0)
		return -1;
	sa->svm[s] = (struct sa_vm){ .vguid = vguid, .port = pf };
	sa->svm_next[s] = FAB_NONE;
	if (sa->svm_tail[pf] == FAB_NONE)
		sa->svm_head[pf] = s;
	else
		sa->svm_next[sa->svm_tail[pf]] = s;
	sa->svm_tail[pf] = s;
	sa->view.n_svms++;
	return 0;
}

void sa_shared_vm_set(struct sm *sm, uint64_t vguid, uint64_t hyp_guid)
{
	struct sa *sa = sm->sa;
	if (!sa || !sa->have_view)
		return;
	if (svm_set(sa, vguid, hyp_guid) < 0) {
		log_err("SA: out of memory; vGUID 0x%016llx is not answered for until the next sweep",
			(unsigned long long)vguid);
		svm_unlink(sa, vguid);
	}
	sa->view.gen++;
}

void sa_shared_vm_drop(struct sm *sm, uint64_t vguid)
{
	struct sa *sa = sm->sa;
	if (!sa || !sa->have_view)
		return;
	svm_unlink(sa, vguid);
	sa->view.gen++;
}

/*
 * The registry's VMs present in the view: the VF port is in the model
 * with the VM's LID.  One whose VF holds another LID is not answered for
 * (its LID does not lead there in the published routes).
 */
static int publish_vms(struct sa *sa, const struct vm_registry *r)
{
	const struct fabric *f = &sa->f;
	if (svm_init(sa) < 0)
		return -1;
	if (!r->n)
		return 0;
	if (!(sa->vms = calloc(r->n, sizeof(*sa->vms))))
		return -1;
	uint32_t n = 0;
	for (uint32_t i = 0; i < r->n; i++) {
		const struct vm *v = &r->v[i];
		uint32_t pi = vm_vf_port(f, v);
		if (pi == FAB_NONE)
			continue;
		if (!v->lid || f->ports[pi].lid != v->lid) {
			log_debug("SA: VM %s: its VF has LID %u, not the VM's %u; not answered for",
				  v->name, f->ports[pi].lid, v->lid);
			continue;
		}
		sa->vms[n++] = (struct sa_vm){ .vguid = v->vguid, .port = pi };
	}
	qsort(sa->vms, n, sizeof(*sa->vms), vm_cmp_port);
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++) {
		/* cannot be reached by a shared-LID VM: vm_vf_port() refuses them */
		if (k && sa->vms[k - 1].port == sa->vms[i].port) {
			log_warn("SA: two VMs on the VF port 0x%016llx; vGUID 0x%016llx not answered for",
				 (unsigned long long)f->ports[sa->vms[i].port].guid,
				 (unsigned long long)sa->vms[i].vguid);
			continue;
		}
		sa->vms[k++] = sa->vms[i];
	}
	sa->view.vms = sa->vms;
	sa->view.n_vms = k;
	/* the shared-LID VMs, in registry order */
	for (uint32_t i = 0; i < r->n; i++)
		if (r->v[i].shared && svm_set(sa, r->v[i].vguid, r->v[i].hyp_guid) < 0)
			return -1;
	return 0;
}

const struct sa_vm *sa_vm_of_port(const struct sa_view *v, uint32_t pi)
{
	uint32_t lo = 0, hi = v->n_vms;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (v->vms[mid].port < pi)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < v->n_vms && v->vms[lo].port == pi ? &v->vms[lo] : NULL;
}

const struct sa_vm *sa_vm_of_guid(const struct sa_view *v, uint64_t guid)
{
	for (uint32_t i = 0; i < v->n_vms; i++)	/* once per request, one VM per VF at most */
		if (v->vms[i].vguid == guid)
			return &v->vms[i];
	uint32_t s = v->svm_by_guid ? guid_map_get(v->svm_by_guid, guid) : FAB_NONE;
	return s != FAB_NONE ? &v->svms[s] : NULL;
}

/*
 * The notifier's P_Key check (o13-14.1.1, o13-17.1.2): a subscriber sees
 * the notices of, and subscribes to the LIDs of, ports it shares a
 * partition with, as OpenSM's osm_physp_share_pkey.  A LID the view does
 * not hold (a port gone, as trap 65 tells) is not checked.
 */
static int lids_share(void *ctx, uint32_t a, uint32_t b)
{
	const struct sa_view *v = sa_get_view(ctx);
	if (!v)
		return 1;
	uint32_t pa = fabric_lid_port(v->f, a), pb = fabric_lid_port(v->f, b);
	return pa == FAB_NONE || pb == FAB_NONE || sa_share(v, pa, pb);
}

void sa_publish(struct sm *sm, const struct fabric *f,
		const struct lft_tables *lft)
{
	struct sa *sa = sm->sa;
	if (!sa)
		return;
	drop_view(sa);
	if (!f || !lft || !lft->port || fabric_clone(&sa->f, f) < 0 ||
	    copy_lft(&sa->lft, lft, f->n_nodes) < 0) {
		fabric_free(&sa->f);
		log_err("SA: cannot keep the subnet's view (out of memory); not answering");
		return;
	}
	const struct discovery *d = sm->sub.model;
	if (d && &d->f == f && d->pi_raw && d->si_raw) {
		sa->pi_raw = malloc(((size_t)f->n_ports + 1) * SMP_DATA_SIZE);
		sa->si_raw = malloc(((size_t)f->n_nodes + 1) * SMP_DATA_SIZE);
		if (sa->pi_raw && sa->si_raw) {
			memcpy(sa->pi_raw, d->pi_raw, (size_t)f->n_ports * SMP_DATA_SIZE);
			memcpy(sa->si_raw, d->si_raw, (size_t)f->n_nodes * SMP_DATA_SIZE);
			sa->view.pi_raw = (const uint8_t (*)[SMP_DATA_SIZE])sa->pi_raw;
			sa->view.si_raw = (const uint8_t (*)[SMP_DATA_SIZE])sa->si_raw;
		}
	}
	if (publish_vms(sa, &sm->vms) < 0) {
		drop_view(sa);
		log_err("SA: cannot keep the subnet's view (out of memory); not answering");
		return;
	}
	/* the partitions on the SA's own copy: its port indices */
	if (part_resolve(&sm->cfg, &sa->f, &sm->learned, 0, &sa->parts) < 0)
		log_err("SA: cannot resolve the partitions (out of memory); answering as if there were none");
	else
		sa->view.parts = &sa->parts;
	if (fabric_endport_map(&sa->f, 0, &sa->port_by_guid) == 0)
		sa->view.port_by_guid = &sa->port_by_guid;
	sa->view.f = &sa->f;
	sa->view.lft = &sa->lft;
	sa->view.n_endports = 0;
	for (uint32_t i = 0; i < sa->f.n_ports; i++)
		sa->view.n_endports += fabric_is_endport(&sa->f, i) && sa->f.ports[i].lid;
	sa->view.ltv = path_switch_ltv(&sa->f, (uint8_t)sm->cfg.subnet_timeout);
	sa->view.subnet_prefix = sm->cfg.subnet_prefix;
	sa->view.sm_lid = sm->sub.sm_lid;
	sa->view.cache = sm->sub.cache;
	sa->view.lanes = &sm->sub.lanes;
	sa->view.gen++;
	sa->have_view = 1;
	if (sm->notify)
		notifier_set_pkey_check(sm->notify, lids_share, sm);
}

struct svc_db *sa_services(struct sa *sa)
{
	return sa->svc;
}

void sa_service_bounds(const struct sa_query *q, uint32_t *total, uint32_t *per_port)
{
	*total = (uint32_t)q->sm->cfg.sa_max_services;
	*per_port = (uint32_t)q->sm->cfg.sa_max_services_per_port;
}

const struct sa_stats *sa_get_stats(const struct sm *sm)
{
	return sm->sa ? &sm->sa->st : NULL;
}

const struct sa_view *sa_get_view(const struct sm *sm)
{
	return sm->sa && sm->sa->have_view ? &sm->sa->view : NULL;
}

void sa_to_ctl(const struct sm *sm, json_t *o)
{
	const struct sa_stats *sa = sa_get_stats(sm);
	if (sa)
		json_object_set_new(o, "sa", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:{s:I,s:I,s:I,s:I,s:I}}",
			"requests", (json_int_t)sa->requests,
			"answered", (json_int_t)sa->answered,
			"records", (json_int_t)sa->records,
			"errors", (json_int_t)sa->errors,
			"rmpp_sent", (json_int_t)sa->rmpp_sent,
			"outside_partitions", (json_int_t)sa->outside,
			"untrusted", (json_int_t)sa->untrusted,
			"dropped",
			"not_master", (json_int_t)sa->dropped_not_master,
			"sm_key", (json_int_t)sa->dropped_key,
			"short", (json_int_t)sa->dropped_short,
			"rmpp", (json_int_t)sa->dropped_rmpp,
			"send_failed", (json_int_t)sa->send_failed));
	json_t *o_sa = json_object_get(o, "sa");
	if (!o_sa)
		return;
	const struct svc_stats *sv = svc_db_stats(sm->sa->svc);
	json_object_set_new(o_sa, "services", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		"records", (json_int_t)svc_db_count(sm->sa->svc),
		"registered", (json_int_t)sv->registered,
		"replaced", (json_int_t)sv->replaced,
		"deleted", (json_int_t)sv->deleted,
		"expired", (json_int_t)sv->expired,
		"refused_per_port", (json_int_t)sv->refused_port,
		"refused_total", (json_int_t)sv->refused_total,
		"refused_owner", (json_int_t)sv->refused_owner,
		"save_failed", (json_int_t)sv->save_failed));
	const struct sa_budget_stats *b = sa_budget_get_stats(sm->sa->budget);
	json_object_set_new(o_sa, "in_flight", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		"answers", (json_int_t)b->answers,
		"bytes", (json_int_t)b->bytes,
		"bytes_peak", (json_int_t)b->bytes_peak,
		"requesters", (json_int_t)b->requesters,
		"busy_requester", (json_int_t)b->busy_requester,
		"busy_total", (json_int_t)b->busy_total,
		"too_long", (json_int_t)sm->sa->st.refused_too_long));
	if (!sm->sa->rmpp)
		return;
	const struct rmpp_stats *r = rmpp_get_stats(sm->sa->rmpp);
	json_object_set_new(o_sa, "rmpp", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		"receiving", (json_int_t)rmpp_active_dir(sm->sa->rmpp, RMPP_RECV),
		"sending", (json_int_t)rmpp_active_dir(sm->sa->rmpp, RMPP_SEND),
		"refused_long", (json_int_t)r->refused_long,
		"refused_recv_slots", (json_int_t)r->refused_slots[RMPP_RECV],
		"refused_send_slots", (json_int_t)r->refused_slots[RMPP_SEND],
		"evicted", (json_int_t)r->evicted,
		"superseded", (json_int_t)r->superseded));
}

const struct sa_budget_stats *sa_get_budget_stats(const struct sm *sm)
{
	return sm->sa ? sa_budget_get_stats(sm->sa->budget) : NULL;
}
