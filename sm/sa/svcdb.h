/*
 * The ServiceRecords hosts registered with the SA (IBA vol. 1
 * §15.2.5.14), their owners, leases and bounds, and the state file that
 * keeps them across restarts (STATE_DIR/services, written atomically
 * with sm/base/wfile.h, shortly after a change: a burst of registrations
 * costs one write).  The SA's record family (sm/sa/sa_service.c) owns the
 * rules; this is the table.
 *
 * A record is identified by its RID: ServiceID, ServiceGID and
 * ServiceP_Key (as OpenSM's osm_svcr_get_by_rid).  Its owner is the GUID
 * of the port that registered it; its lease ends at a wall-clock second
 * (kept across a restart) or never.
 */
#ifndef IBSMD_SVCDB_H
#define IBSMD_SVCDB_H

#include <stddef.h>
#include <stdint.h>

#define SVC_REC_SIZE	176	/* the ServiceRecord on the wire */
#define SVC_NEVER	INT64_MAX	/* an infinite lease (0xFFFFFFFF) */
#define SVC_FILE	"services"

struct event_base;

struct svc {
	uint8_t rec[SVC_REC_SIZE];	/* as registered (ServiceLease as asked) */
	uint64_t owner;			/* the registering port's GUID */
	int64_t expires;		/* time(2) seconds, or SVC_NEVER */
};

struct svc_stats {
	uint64_t registered, replaced, deleted, expired;
	uint64_t refused_port;		/* past sa.max_services_per_port */
	uint64_t refused_total;		/* past sa.max_services */
	uint64_t refused_owner;		/* another port's record */
	uint64_t save_failed;
};

struct svc_db;

/*
 * The table, read from DIR/services when dir is not empty (base: the
 * loop that times the writes; NULL: written at once).  A file that
 * cannot be read or parsed is set aside as services.corrupt.TIMESTAMP,
 * logged, and the table starts empty: hosts register again.  At most
 * max_total records are read.  NULL only for no memory.
 */
struct svc_db *svc_db_new(struct event_base *base, const char *dir,
			  uint32_t max_total);
/* Writes what changed, frees. */
void svc_db_free(struct svc_db *db);

uint32_t svc_db_count(const struct svc_db *db);
struct svc *svc_db_at(struct svc_db *db, uint32_t i);
/* Records whose lease ended by now go (counted); now: time(2). */
void svc_db_expire(struct svc_db *db, int64_t now);
/* The record with this RID, or NULL. */
struct svc *svc_db_find(struct svc_db *db, uint64_t id, const uint8_t *gid,
			uint16_t pkey);
/* How many records owner holds. */
uint32_t svc_db_owned(const struct svc_db *db, uint64_t owner);
/* Appends a copy of s; NULL for no memory. */
struct svc *svc_db_add(struct svc_db *db, const struct svc *s);
/* Removes the record s points at (from svc_db_find or svc_db_at). */
void svc_db_del(struct svc_db *db, struct svc *s);
/* The table changed: written soon. */
void svc_db_changed(struct svc_db *db);
struct svc_stats *svc_db_stats(struct svc_db *db);

#endif
