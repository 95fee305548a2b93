/*
 * The registered ServiceRecords (svcdb.h): a flat table, scanned.  Its
 * size is bounded by sa.max_services (and each port's share by
 * sa.max_services_per_port, sm/sa/sa_service.c), so a scan costs at most
 * that many compares of a few bytes; no index is kept.
 *
 * The state file, one record a line:
 *   OWNER_GUID EXPIRES RECORD
 * OWNER_GUID 0x and 16 hex digits, EXPIRES the lease's end in seconds
 * since the epoch or "-" for never, RECORD the 176 bytes in hex.
 */
#include "sm/sa/svcdb.h"

#include <errno.h>
#include <event2/event.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sa.h"
#include "sm/base/clock.h"
#include "sm/base/log.h"
#include "sm/base/wfile.h"

#define SVC_SAVE_DELAY_MS	50	/* changes within this share one write */
#define SVC_LINE_MAX		(2 * SVC_REC_SIZE + 64)

struct svc_db {
	struct svc *v;
	uint32_t n, cap;
	char path[4096];		/* empty: not kept */
	int dirty;
	struct event *save_timer;	/* NULL: written at once */
	struct svc_stats st;
};

uint32_t svc_db_count(const struct svc_db *db)
{
	return db->n;
}

struct svc *svc_db_at(struct svc_db *db, uint32_t i)
{
	return &db->v[i];
}

struct svc_stats *svc_db_stats(struct svc_db *db)
{
	return &db->st;
}

struct svc *svc_db_find(struct svc_db *db, uint64_t id, const uint8_t *gid,
			uint16_t pkey)
{
	for (uint32_t i = 0; i < db->n; i++) {
		const uint8_t *r = db->v[i].rec;
		if (sa_get64(r) == id && !memcmp(r + 8, gid, 16) &&
		    sa_get16(r + 24) == pkey)
			return &db->v[i];
	}
	return NULL;
}

uint32_t svc_db_owned(const struct svc_db *db, uint64_t owner)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < db->n; i++)
		k += db->v[i].owner == owner;
	return k;
}

struct svc *svc_db_add(struct svc_db *db, const struct svc *s)
{
	if (db->n == db->cap) {
		uint32_t cap = db->cap ? 2 * db->cap : 32;
		struct svc *v = realloc(db->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		db->v = v;
		db->cap = cap;
	}
	db->v[db->n] = *s;
	return &db->v[db->n++];
}

void svc_db_del(struct svc_db *db, struct svc *s)
{
	uint32_t i = (uint32_t)(s - db->v);
	/* the order is the registrations' (GetTable answers in it) */
	memmove(&db->v[i], &db->v[i + 1], (db->n - i - 1) * sizeof(*db->v));
	db->n--;
}

void svc_db_expire(struct svc_db *db, int64_t now)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < db->n; i++) {
		if (db->v[i].expires <= now) {
			db->st.expired++;
			continue;
		}
		db->v[k++] = db->v[i];
	}
	if (k != db->n) {
		db->n = k;
		svc_db_changed(db);
	}
}

/* ---- the state file ---- */

static int save_now(struct svc_db *db)
{
	struct wfile w;
	char err[1024];
	if (wfile_open(&w, db->path, err, sizeof(err)) < 0)
		goto fail;
	fprintf(w.fp, "# ibsmd SA ServiceRecords; written by ibsmd, read at start-up\n"
		      "# OWNER_GUID EXPIRES (seconds since the epoch, - never) RECORD (176 bytes in hex)\n");
	for (uint32_t i = 0; i < db->n; i++) {
		const struct svc *s = &db->v[i];
		fprintf(w.fp, "0x%016" PRIx64 " ", s->owner);
		if (s->expires == SVC_NEVER)
			fputs("- ", w.fp);
		else
			fprintf(w.fp, "%" PRId64 " ", s->expires);
		for (size_t b = 0; b < SVC_REC_SIZE; b++)
			fprintf(w.fp, "%02x", s->rec[b]);
		fputc('\n', w.fp);
	}
	if (wfile_commit(&w, err, sizeof(err)) < 0)
		goto fail;
	db->dirty = 0;
	return 0;
fail:
	db->st.save_failed++;
	log_err("cannot save the ServiceRecords: %s", err);
	return -1;
}

static void on_save(evutil_socket_t fd, short what, void *arg)
{
	struct svc_db *db = arg;
	(void)fd;
	(void)what;
	if (db->dirty)
		save_now(db);
}

void svc_db_changed(struct svc_db *db)
{
	if (!db->path[0])
		return;
	if (!db->save_timer) {
		db->dirty = 1;
		save_now(db);
		return;
	}
	if (!db->dirty)
		timer_in_ms(db->save_timer, SVC_SAVE_DELAY_MS);
	db->dirty = 1;
}

/* One line into s: 0, or -1. */
static int parse_line(const char *line, struct svc *s)
{
	char exp[24], hex[2 * SVC_REC_SIZE + 2];
	int used = 0;
	if (sscanf(line, "0x%16" SCNx64 " %23s %353s%n", &s->owner, exp, hex, &used) != 3 ||
	    line[used] != '\n' || strlen(hex) != 2 * SVC_REC_SIZE)
		return -1;
	if (!strcmp(exp, "-")) {
		s->expires = SVC_NEVER;
	} else {
		char *end;
		errno = 0;
		long long e = strtoll(exp, &end, 10);
		if (errno || *end || e < 0)
			return -1;
		s->expires = e;
	}
	for (size_t b = 0; b < SVC_REC_SIZE; b++) {
		static const char digits[] = "0123456789abcdef0123456789ABCDEF";
		const char *hi = strchr(digits, hex[2 * b]), *lo = strchr(digits, hex[2 * b + 1]);
		if (!hi || !lo)
			return -1;
		s->rec[b] = (uint8_t)(((hi - digits) % 16) << 4 | (lo - digits) % 16);
	}
	return 0;
}

/* 0 (absent: nothing), or -1 with err: the file is refused whole. */
static int load(struct svc_db *db, uint32_t max_total, char *err, size_t errlen)
{
	FILE *fp = rfile_open(db->path, 0, err, errlen);
	if (!fp)
		return errno == ENOENT ? 0 : -1;
	char line[SVC_LINE_MAX];
	int lineno = 0, rc = 0;
	int64_t now = (int64_t)time(NULL);
	while (!rc && fgets(line, sizeof(line), fp)) {
		lineno++;
		struct svc s;
		const char *p = line + strspn(line, " \t");
		if (*p == '#' || *p == '\n')
			continue;
		if (!strchr(line, '\n'))
			rc = snprintf(err, errlen, "%s:%d: %s", db->path, lineno,
				      "truncated or too long");
		else if (parse_line(p, &s) < 0)
			rc = snprintf(err, errlen, "%s:%d: expected \"OWNER_GUID EXPIRES RECORD\" "
				      "(0x and 16 hex digits, seconds or -, 352 hex digits)",
				      db->path, lineno);
		else if (s.expires >= now && db->n < max_total && !svc_db_add(db, &s))
			rc = -2;	/* no memory: the file is not at fault */
	}
	fclose(fp);
	return rc == -2 ? -2 : rc ? -1 : 0;
}

struct svc_db *svc_db_new(struct event_base *base, const char *dir,
			  uint32_t max_total)
{
	struct svc_db *db = calloc(1, sizeof(*db));
	if (!db)
		return NULL;
	if (!dir || !dir[0])
		return db;
	snprintf(db->path, sizeof(db->path), "%s/%s", dir, SVC_FILE);
	if (base && !(db->save_timer = evtimer_new(base, on_save, db))) {
		free(db);
		return NULL;
	}
	char err[4200];
	int rc = load(db, max_total, err, sizeof(err));
	if (rc == -2) {
		log_err("ServiceRecords not restored from %s: out of memory", db->path);
		db->n = 0;
	} else if (rc < 0) {
		char aside[4200];
		db->n = 0;
		if (wfile_set_aside(db->path, aside, sizeof(aside)) < 0)
			log_err("ServiceRecords not restored: %s (and cannot move it aside: %s)",
				err, strerror(errno));
		else
			log_err("ServiceRecords not restored: %s; kept as %s; hosts register again",
				err, aside);
	} else if (db->n) {
		log_notice("%u ServiceRecords restored from %s", db->n, db->path);
	}
	return db;
}

void svc_db_free(struct svc_db *db)
{
	if (!db)
		return;
	if (db->dirty)
		save_now(db);
	if (db->save_timer)
		event_free(db->save_timer);
	free(db->v);
	free(db);
}
