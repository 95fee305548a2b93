/*
 * The SA's ServiceRecord family (IBA vol. 1 §15.2.5.14, attribute
 * 0x0031) over the registered records (sm/sa/svcdb.h): Set registers or
 * replaces, Delete removes, Get/GetTable list.  The rules are OpenSM's
 * (osm_sa_service_record.c) where it has them:
 *
 *   - a record is identified by ServiceID, ServiceGID and ServiceP_Key
 *     (its RID); a Set needs ServiceID and ServiceGID in the component
 *     mask (REQ_INVALID), a ServiceP_Key not in it is the default
 *     0xFFFF, a ServiceLease not in it infinite (0xFFFFFFFF); a Set with
 *     the RID of a record replaces it;
 *   - a ServiceP_Key given must be held by the requester and, for a
 *     unicast ServiceGID, by that GID's port (REQ_INVALID);
 *   - a Delete takes the RID from the record it carries whatever the
 *     mask (a ServiceP_Key 0 is the default), the other selected fields
 *     must be the record's; none is NO_RECORDS;
 *   - ServiceKey is returned only to a trusted request (sa.sa_key,
 *     p923): to others it is zero; a query selecting it compares the
 *     registered key;
 *   - a lease ends ServiceLease seconds after the Set; answers carry the
 *     seconds left (§15.2.5.14: "lease period remaining").
 *
 * Beyond OpenSM, against hosts that are not trusted (no sa.sa_key):
 *   - a unicast ServiceGID must be the requester's own port (its
 *     interface ID the port's GUID, or the vGUID of the VM on it); only the port that registered a
 *     record may replace or delete it (REQ_INVALID, counted
 *     sa.services.refused_owner).  OpenSM lets any host delete any
 *     record.  ServiceKey is not a password: the spec makes it the key
 *     a name is associated with, and OpenSM does not check it either;
 *   - a port may hold sa.max_services_per_port records and all ports
 *     sa.max_services together: a new one past either is
 *     ERR_NO_RESOURCES (§15.2.1.2), counted, logged once a second;
 *   - a requester sees (Get, GetTable, Delete) only records whose
 *     ServiceP_Key it holds and, for a unicast ServiceGID, whose port it
 *     shares a partition with (sa_share()): others are, to it, records
 *     that do not exist.
 */
#include <string.h>
#include <time.h>

#include "mad/sa.h"
#include "sm/base/log.h"
#include "sm/sa/sa_server.h"
#include "sm/sa/svcdb.h"

#define LEASE_INFINITE	0xffffffffu
#define DEFAULT_PKEY	0xffff

/* Byte offsets in the record. */
#define R_ID		0
#define R_GID		8
#define R_PKEY		24
#define R_RESV		26
#define R_LEASE		28
#define R_KEY		32
#define R_NAME		48
#define R_DATA8		112
#define R_DATA16	128
#define R_DATA32	144
#define R_DATA64	160

/* The component mask bits (IBA vol. 1 Table 209), in record order. */
enum { SR_ID, SR_GID, SR_PKEY, SR_RESV, SR_LEASE, SR_KEY, SR_NAME,
       SR_DATA8, SR_DATA16 = SR_DATA8 + 16, SR_DATA32 = SR_DATA16 + 8,
       SR_DATA64 = SR_DATA32 + 4, SR_N = SR_DATA64 + 2 };
#define BIT(b)	((uint64_t)1 << (b))

#define F(off, bytes)	{ (off) * 8, (bytes) * 8 }
#define D8(e)		F(R_DATA8 + (e), 1)
#define D16(e)		F(R_DATA16 + 2 * (e), 2)
#define D32(e)		F(R_DATA32 + 4 * (e), 4)
#define D64(e)		F(R_DATA64 + 8 * (e), 8)
/* ServiceData8..64 are one bit per element */
static const struct sa_field fields[SR_N] = {
	F(R_ID, 8), F(R_GID, 16), F(R_PKEY, 2), F(R_RESV, 2), F(R_LEASE, 4),
	F(R_KEY, 16), F(R_NAME, 64),
	D8(0), D8(1), D8(2), D8(3), D8(4), D8(5), D8(6), D8(7),
	D8(8), D8(9), D8(10), D8(11), D8(12), D8(13), D8(14), D8(15),
	D16(0), D16(1), D16(2), D16(3), D16(4), D16(5), D16(6), D16(7),
	D32(0), D32(1), D32(2), D32(3), D64(0), D64(1),
};

static struct svc_db *db_of(const struct sa_query *q)
{
	return sa_services(q->sa);
}

static int is_multicast(const uint8_t *gid)
{
	return gid[0] == 0xff;
}

/* The port of a unicast ServiceGID in the view, or FAB_NONE. */
static uint32_t gid_port(const struct sa_query *q, const uint8_t *gid, uint32_t hint)
{
	if (is_multicast(gid))
		return FAB_NONE;
	return sa_port_of_guid(q->view, sa_get64(gid + 8), hint);
}

/* May requester req see record r? */
static int visible(const struct sa_query *q, const uint8_t *r, uint32_t req)
{
	uint16_t pkey = sa_get16(r + R_PKEY);
	if ((pkey & 0x7fff) && !sa_port_holds(q->view, req, pkey))
		return 0;
	uint32_t sp = gid_port(q, r + R_GID, req);
	return sp == FAB_NONE || sa_share(q->view, req, sp);
}

/* The record as answered: the lease left, the key for the trusted only. */
static int answer(struct sa_query *q, const struct svc *s, int64_t now)
{
	uint8_t r[SVC_REC_SIZE];
	memcpy(r, s->rec, sizeof(r));
	if (s->expires != SVC_NEVER)
		sa_put32(r + R_LEASE, (uint32_t)(s->expires > now ? s->expires - now : 0));
	if (!sa_trusted(q))
		memset(r + R_KEY, 0, 16);
	return sa_answer_add(q, r) < 0 ? SA_STS_NO_RESOURCES : 0;
}

static int refuse_bound(struct sa_query *q, uint64_t owner, const char *key,
			uint32_t limit)
{
	const struct svc_stats *st = svc_db_stats(db_of(q));
	log_limited_by(1, 1000, LOG_NOTICE,
		       "SA: ServiceRecord not registered for port 0x%016llx (LID %u): %u records, %s "
		       "(%llu refused since start)", (unsigned long long)owner, q->from->lid,
		       limit, key, (unsigned long long)(st->refused_port + st->refused_total));
	return SA_STS_NO_RESOURCES;
}

static int refuse_owner(struct sa_query *q, const char *what)
{
	struct svc_stats *st = svc_db_stats(db_of(q));
	st->refused_owner++;
	log_limited_by(1, 1000, LOG_NOTICE,
		       "SA: ServiceRecord %s from LID %u refused: %s (%llu since start)",
		       q->method == SA_METHOD_SET ? "Set" : "Delete", q->from->lid, what,
		       (unsigned long long)st->refused_owner);
	return SA_STS_REQ_INVALID;
}

/*
 * A ServiceGID the requester may register for: its own, unless trusted.
 * A port is named by the GID's interface ID alone, as OpenSM does (whose
 * osmtest sends its prefix in host byte order).
 */
static int gid_allowed(const struct sa_query *q, const uint8_t *gid, uint32_t req)
{
	if (is_multicast(gid) || sa_trusted(q))
		return 1;
	uint64_t guid = sa_get64(gid + 8);
	const struct sa_vm *vm = sa_vm_of_port(q->view, req);
	return q->view->f->ports[req].guid == guid || (vm && vm->vguid == guid);
}

static int sr_set(struct sa_query *q, uint32_t req, int64_t now)
{
	if ((q->comp_mask & (BIT(SR_ID) | BIT(SR_GID))) != (BIT(SR_ID) | BIT(SR_GID)))
		return SA_STS_REQ_INVALID;
	struct svc s = { .owner = q->view->f->ports[req].guid };
	memcpy(s.rec, q->rec, SVC_REC_SIZE);
	memset(s.rec + R_RESV, 0, 2);
	if (!(q->comp_mask & BIT(SR_PKEY)))
		sa_put16(s.rec + R_PKEY, DEFAULT_PKEY);
	if (!(q->comp_mask & BIT(SR_LEASE)))
		sa_put32(s.rec + R_LEASE, LEASE_INFINITE);
	uint16_t pkey = sa_get16(s.rec + R_PKEY);
	uint32_t lease = sa_get32(s.rec + R_LEASE);
	s.expires = lease == LEASE_INFINITE ? SVC_NEVER : now + lease;
	if (!gid_allowed(q, s.rec + R_GID, req))
		return refuse_owner(q, "its ServiceGID is not the requester's port");
	uint32_t sp = gid_port(q, s.rec + R_GID, req);
	if (!sa_port_holds(q->view, req, pkey) ||
	    (sp != FAB_NONE && !sa_port_holds(q->view, sp, pkey)))
		return SA_STS_REQ_INVALID;
	struct svc_db *db = db_of(q);
	struct svc_stats *st = svc_db_stats(db);
	struct svc *old = svc_db_find(db, sa_get64(s.rec + R_ID), s.rec + R_GID, pkey);
	if (old && !sa_trusted(q) && old->owner != s.owner)
		return refuse_owner(q, "another port's record");
	if (old) {
		*old = s;
		st->replaced++;
	} else {
		uint32_t total, per_port;
		sa_service_bounds(q, &total, &per_port);
		if (svc_db_count(db) >= total) {
			st->refused_total++;
			return refuse_bound(q, s.owner, "sa.max_services", total);
		}
		uint32_t held = svc_db_owned(db, s.owner);
		if (held >= per_port) {
			st->refused_port++;
			return refuse_bound(q, s.owner, "sa.max_services_per_port", held);
		}
		if (!(old = svc_db_add(db, &s)))
			return SA_STS_NO_RESOURCES;
		st->registered++;
	}
	svc_db_changed(db);
	return answer(q, old, now);
}

static int sr_delete(struct sa_query *q, uint32_t req, int64_t now)
{
	struct svc_db *db = db_of(q);
	uint16_t pkey = sa_get16(q->rec + R_PKEY);
	struct svc *s = svc_db_find(db, sa_get64(q->rec + R_ID), q->rec + R_GID,
				    pkey ? pkey : DEFAULT_PKEY);
	if (!s || !sa_match(q, s->rec, fields, SR_N))
		return SA_STS_NO_RECORDS;
	if (!visible(q, s->rec, req)) {
		sa_outside(q, "a ServiceRecord");
		return SA_STS_NO_RECORDS;
	}
	if (!sa_trusted(q) && s->owner != q->view->f->ports[req].guid)
		return refuse_owner(q, "another port's record");
	int st = answer(q, s, now);
	svc_db_del(db, s);
	svc_db_stats(db)->deleted++;
	svc_db_changed(db);
	return st;
}

static int sr_query(struct sa_query *q, uint32_t req, int64_t now)
{
	struct svc_db *db = db_of(q);
	for (uint32_t i = 0; i < svc_db_count(db) && !sa_enough(q); i++) {
		const struct svc *s = svc_db_at(db, i);
		if (!sa_match(q, s->rec, fields, SR_N))
			continue;
		if (!visible(q, s->rec, req)) {
			sa_outside(q, "a ServiceRecord");
			continue;
		}
		int st = answer(q, s, now);
		if (st)
			return st;
	}
	return 0;
}

int sa_service_records(struct sa_query *q)
{
	int st = sa_mask_check(q, SR_N);
	if (st)
		return st;
	if (q->rec_len < SVC_REC_SIZE)
		return SA_STS_REQ_INVALID;	/* the record cut short */
	uint32_t req = sa_requester(q);
	if (req == FAB_NONE)
		return SA_STS_REQ_INVALID;
	int64_t now = (int64_t)time(NULL);
	svc_db_expire(db_of(q), now);
	switch (q->method) {
	case SA_METHOD_SET:
		return sr_set(q, req, now);
	case SA_METHOD_DELETE:
		return sr_delete(q, req, now);
	default:
		return sr_query(q, req, now);
	}
}
