/*
 * Subscriptions (SA InformInfo) and the delivery of notices to them as
 * SA Report(Notice) MADs.  See notify.h.
 *
 * A subscription is identified, as OpenSM does, by where its Reports go
 * (subscriber GID and QPN) and the InformInfo fields that select notices:
 * GID (or, when it is zero, LIDRangeBegin/End), IsGeneric, Type,
 * TrapNumber/DeviceID and ProducerType/VendorID.  The QPN field of the
 * InformInfo and RespTimeValue are not part of it: a second Set that
 * differs only there updates the subscription (a new RespTimeValue) and
 * an unsubscribe need not repeat them.
 *
 * Every Report waits in a slot until its ReportResp comes; its TID's low
 * 32 bits are (sequence << 20 | slot), so a ReportResp finds its slot at
 * once (ibsim and umad2sim rewrite the upper 32 bits).  A Report not
 * answered within the subscriber's RespTimeValue (4.096 us << value,
 * never less than min_resp_ms, never more than NOTIFY_MAX_RESP_MS) is a
 * failure and is sent again with the same TID; max_failures failures in a
 * row, with no ReportResp between them, drop the subscription.
 *
 * The state file holds one subscription a line and is written (temporary
 * file, fsync, rename) shortly after a change, never once per request:
 * a burst of subscriptions costs one write.  Reading it (at start, and
 * merged into the table when the SM becomes master) sorts the table's
 * and the file's subscriptions by identity (merge()): O(n log n), with
 * the bounds a subscriber's Sets have.
 */
#include "traps/notify.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "mad/sa.h"
#include "sm/base/fabric.h"
#include "sm/base/log.h"
#include "sm/base/wfile.h"

#define NOTIFY_MAX_RESP_MS	10000	/* ceiling on a RespTimeValue */
#define NOTIFY_MAX_SUBS		65536	/* subscriptions in all */
#define NOTIFY_MAX_PER_PORT	64	/* subscriptions of one subscriber GID */
#define NOTIFY_MAX_PENDING	64	/* unanswered Reports of one subscription */
#define NOTIFY_SLOT_BITS	20
#define NOTIFY_MAX_SLOTS	(1u << NOTIFY_SLOT_BITS)
#define NOTIFY_SAVE_DELAY_MS	50	/* changes within this share one write */
#define NOTIFY_QKEY		0x80010000u

/* InformInfo (36 bytes, IBA vol. 1 §13.4.8.3) */

struct sub {
	uint8_t ii[SA_SIZE_INFORM_INFO];	/* as subscribed, Subscribe = 1 */
	struct notify_subscriber who;
	uint16_t enum_id;
	unsigned failures;	/* unanswered Reports since the last answer */
	unsigned pending;	/* Reports waiting for their ReportResp */
};

struct report {
	struct sub *sub;	/* NULL: a free slot */
	uint32_t tid;		/* low 32 bits */
	uint64_t deadline;	/* ms, monotonic */
	uint8_t mad[MAD_SIZE];
};

struct notifier {
	struct event_base *base;
	struct mad_transport *t;
	struct notify_params p;
	notify_pkey_fn pkey_fn;
	void *pkey_ctx;
	struct sub **subs;
	size_t n_subs, cap_subs;
	struct report *slots;
	uint32_t cap_slots, hi_slots, n_pending, free_hint;
	uint32_t seq;		/* TID sequence, 12 bits used */
	uint32_t tid_hi;
	struct event *timer;	/* the earliest Report deadline */
	struct event *save_timer;
	int dirty;
	struct notify_stats st;
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void set_timer(struct event *ev, uint64_t ms)
{
	struct timeval tv = { (time_t)(ms / 1000),
			      (suseconds_t)((ms % 1000) * 1000) };
	event_add(ev, &tv);
}

/* ---- the InformInfo fields ---- */

static uint16_t ii_lid_begin(const uint8_t *ii) { return sa_get16(ii + II_LID_BEGIN); }
static uint16_t ii_lid_end(const uint8_t *ii) { return sa_get16(ii + II_LID_END); }
static uint16_t ii_type(const uint8_t *ii) { return sa_get16(ii + II_TYPE); }
static uint16_t ii_trap(const uint8_t *ii) { return sa_get16(ii + II_TRAP); }
static unsigned ii_resp_time(const uint8_t *ii) { return ii[II_QPN_RESP + 3] & 0x1f; }

static uint32_t ii_producer(const uint8_t *ii)
{
	return (uint32_t)ii[II_PRODUCER] << 16 |
	       (uint32_t)ii[II_PRODUCER + 1] << 8 | ii[II_PRODUCER + 2];
}

static int gid_is_zero(const uint8_t *g)
{
	for (int i = 0; i < 16; i++)
		if (g[i])
			return 0;
	return 1;
}

/*
 * A subscription's identity (see the comment at the top) as bytes: two
 * are the same subscription when their keys are equal, and the loader
 * sorts by it.  The subscriber's GID comes first, so one subscriber's
 * subscriptions sort together.
 */
#define SUB_KEY_LEN	48

static void sub_key(const uint8_t *ii, const struct notify_subscriber *who,
		    uint8_t *k)
{
	memset(k, 0, SUB_KEY_LEN);
	memcpy(k, who->gid, 16);
	sa_put32(k + 16, who->qpn);
	memcpy(k + 20, ii + II_GID, 16);
	if (gid_is_zero(ii + II_GID))	/* LIDRangeBegin, LIDRangeEnd */
		memcpy(k + 36, ii + II_LID_BEGIN, 4);
	k[40] = ii[II_IS_GENERIC];
	memcpy(k + 41, ii + II_TYPE, 4);	/* Type, TrapNumber / DeviceID */
	memcpy(k + 45, ii + II_PRODUCER, 3);
}

static int same_sub(const struct sub *s, const uint8_t *ii,
		    const struct notify_subscriber *who)
{
	uint8_t a[SUB_KEY_LEN], b[SUB_KEY_LEN];
	sub_key(s->ii, &s->who, a);
	sub_key(ii, who, b);
	return !memcmp(a, b, SUB_KEY_LEN);
}

static uint64_t resp_ms(const struct notifier *n, const struct sub *s)
{
	/* 4.096 us * 2^v = 2^(v+12) ns */
	uint64_t ms = ((uint64_t)1 << (ii_resp_time(s->ii) + 12)) / 1000000;
	if (ms < n->p.min_resp_ms)
		ms = n->p.min_resp_ms;
	if (ms > NOTIFY_MAX_RESP_MS)
		ms = NOTIFY_MAX_RESP_MS;
	return ms ? ms : 1;
}

/* ---- the state file ---- */

static const char HEX[] = "0123456789abcdef";

/* n bytes as 2n lowercase hex digits and a NUL (the state file's). */
static void hex_str(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = HEX[b[i] >> 4];
		out[2 * i + 1] = HEX[b[i] & 0xf];
	}
	out[2 * n] = '\0';
}

static void gid_str(const uint8_t *g, char *out)
{
	hex_str(g, 16, out);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

static int hex_bytes(const char *s, size_t len, uint8_t *out, size_t n)
{
	if (len != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

static int save_now(struct notifier *n, char *err, size_t errlen)
{
	struct wfile w;
	if (!n->p.state_path[0])
		return 0;
	if (wfile_open(&w, n->p.state_path, err, errlen) < 0)
		return -1;
	fprintf(w.fp, "# ibsmd SA event subscriptions (InformInfo); written by ibsmd, read at start-up\n"
		      "# SUBSCRIBER_GID LID QPN PKEY ENUM INFORMINFO (36 bytes in hex)\n");
	for (size_t i = 0; i < n->n_subs; i++) {
		const struct sub *s = n->subs[i];
		char g[33], ii[2 * SA_SIZE_INFORM_INFO + 1];
		gid_str(s->who.gid, g);
		hex_str(s->ii, SA_SIZE_INFORM_INFO, ii);
		fprintf(w.fp, "%s %" PRIu32 " %" PRIu32 " 0x%04x %u %s\n", g,
			s->who.lid, s->who.qpn, s->who.pkey, s->enum_id, ii);
	}
	if (wfile_commit(&w, err, errlen) < 0)
		return -1;
	n->dirty = 0;
	return 0;
}

static void on_save(evutil_socket_t fd, short what, void *arg)
{
	struct notifier *n = arg;
	char err[1024];
	if (n->dirty && save_now(n, err, sizeof(err)) < 0)
		log_err("cannot save the subscriptions: %s", err);
}

static void changed(struct notifier *n)
{
	if (!n->p.state_path[0])
		return;
	if (!n->dirty)
		set_timer(n->save_timer, NOTIFY_SAVE_DELAY_MS);
	n->dirty = 1;
}

/* ---- the table ---- */

static struct sub *add_sub(struct notifier *n, const uint8_t *ii,
			   const struct notify_subscriber *who, int enum_id)
{
	if (n->n_subs == n->cap_subs) {
		size_t cap = n->cap_subs ? 2 * n->cap_subs : 16;
		struct sub **v = realloc(n->subs, cap * sizeof(*v));
		if (!v)
			return NULL;
		n->subs = v;
		n->cap_subs = cap;
	}
	struct sub *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	memcpy(s->ii, ii, SA_SIZE_INFORM_INFO);
	s->ii[II_SUBSCRIBE] = 1;
	s->who = *who;
	if (enum_id < 0) {
		/* the lowest Enum this subscriber does not use */
		uint8_t used[NOTIFY_MAX_PER_PORT + 1] = { 0 };
		for (size_t i = 0; i < n->n_subs; i++)
			if (!memcmp(n->subs[i]->who.gid, who->gid, 16) &&
			    n->subs[i]->enum_id <= NOTIFY_MAX_PER_PORT)
				used[n->subs[i]->enum_id] = 1;
		enum_id = 0;
		while (enum_id < NOTIFY_MAX_PER_PORT && used[enum_id])
			enum_id++;
	}
	s->enum_id = (uint16_t)enum_id;
	n->subs[n->n_subs++] = s;
	return s;
}

/* Removes subscription i and every Report it waits for. */
static void remove_sub(struct notifier *n, size_t i)
{
	struct sub *s = n->subs[i];
	for (uint32_t k = 0; k < n->hi_slots && s->pending; k++)
		if (n->slots[k].sub == s) {
			n->slots[k].sub = NULL;
			s->pending--;
			n->n_pending--;
		}
	free(s);
	n->subs[i] = n->subs[--n->n_subs];
	changed(n);
}

static size_t count_port(const struct notifier *n, const uint8_t *gid)
{
	size_t c = 0;
	for (size_t i = 0; i < n->n_subs; i++)
		c += !memcmp(n->subs[i]->who.gid, gid, 16);
	return c;
}

/*
 * One line of the state file: "GID LID QPN PKEY ENUM II".  Returns 0 and
 * fills the fields, or -1.
 */
static int parse_line(char *line, struct notify_subscriber *who,
		      unsigned *enum_id, uint8_t *ii)
{
	char *f[7];
	int nf = 0;
	for (char *tok = strtok(line, " \t\n"); tok; tok = strtok(NULL, " \t\n")) {
		if (nf == 6)
			return -1;
		f[nf++] = tok;
	}
	if (nf != 6)
		return -1;
	unsigned long long v[4];
	for (int k = 0; k < 4; k++) {
		char *end;
		if (*f[k + 1] == '-' || *f[k + 1] == '+')
			return -1;
		errno = 0;
		v[k] = strtoull(f[k + 1], &end, 0);
		if (end == f[k + 1] || *end || errno)
			return -1;
	}
	if (!v[0] || v[0] > 0xfffff || v[1] > 0xffffff || v[2] > 0xffff ||
	    v[3] >= NOTIFY_MAX_PER_PORT)
		return -1;
	memset(who, 0, sizeof(*who));
	if (hex_bytes(f[0], strlen(f[0]), who->gid, 16) < 0 ||
	    hex_bytes(f[5], strlen(f[5]), ii, SA_SIZE_INFORM_INFO) < 0 ||
	    ii[II_SUBSCRIBE] != 1)
		return -1;
	who->lid = (uint32_t)v[0];
	who->qpn = (uint32_t)v[1];
	who->pkey = (uint16_t)v[2];
	*enum_id = (unsigned)v[3];
	return 0;
}

/* A subscription read from the state file. */
struct load_entry {
	struct notify_subscriber who;
	unsigned enum_id;
	int lineno;
	uint8_t ii[SA_SIZE_INFORM_INFO];
};

/* A subscription of the table or of the file, in the merge's sort. */
struct load_ref {
	uint8_t key[SUB_KEY_LEN];
	uint8_t in_table;	/* 1: the table's, 0: the file's */
	uint32_t idx;		/* in the table, or in the file's entries */
};

/* By identity; the table's before the file's, then in file order. */
static int load_ref_cmp(const void *pa, const void *pb)
{
	const struct load_ref *a = pa, *b = pb;
	int c = memcmp(a->key, b->key, SUB_KEY_LEN);
	if (c)
		return c;
	if (a->in_table != b->in_table)
		return a->in_table ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/*
 * The Enums of one subscriber's new subscriptions, r[0 .. k) (sorted,
 * that subscriber's run): each keeps the Enum the file gave it unless
 * the table or an earlier one has it; those that cannot get the lowest
 * free one.  out[file index] is set for each kept (keep[] 1).
 */
static void assign_enums(const struct notifier *n, const struct load_ref *r,
			 size_t k, const struct load_entry *e,
			 const uint8_t *keep, uint16_t *out)
{
	uint64_t used = 0;
	for (size_t i = 0; i < k; i++)
		if (r[i].in_table && n->subs[r[i].idx]->enum_id < NOTIFY_MAX_PER_PORT)
			used |= (uint64_t)1 << n->subs[r[i].idx]->enum_id;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < k; i++) {
			uint32_t x = r[i].idx;
			if (r[i].in_table || !keep[x] || (pass && out[x] != UINT16_MAX))
				continue;
			unsigned want = e[x].enum_id;
			if (pass)	/* the lowest free: there is one (NOTIFY_MAX_PER_PORT) */
				for (want = 0; used >> want & 1; want++)
					;
			else if (used >> want & 1)
				continue;
			used |= (uint64_t)1 << want;
			out[x] = (uint16_t)want;
		}
}

static int u32_cmp(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	return a < b ? -1 : a > b;
}

/*
 * One subscriber's run r[0 .. k) of the sort: the new subscriptions
 * past what NOTIFY_MAX_PER_PORT leaves beside the table's are not kept
 * (the first in the file are).  idx: room for k file indices.  Returns
 * how many were left out.
 */
static size_t trim_subscriber(const struct load_ref *r, size_t k,
			      uint8_t *keep, uint32_t *idx)
{
	size_t held = 0, nk = 0;
	for (size_t i = 0; i < k; i++) {
		if (r[i].in_table)
			held++;
		else if (keep[r[i].idx])
			idx[nk++] = r[i].idx;
	}
	size_t room = held < NOTIFY_MAX_PER_PORT ? NOTIFY_MAX_PER_PORT - held : 0;
	if (nk <= room)
		return 0;
	qsort(idx, nk, sizeof(*idx), u32_cmp);
	for (size_t i = room; i < nk; i++)
		keep[idx[i]] = 0;
	return nk - room;
}

/*
 * Adds the file's entries e[0 .. ne) that the table does not hold, each
 * once, in file order, within the bounds a subscriber's Sets have
 * (NOTIFY_MAX_PER_PORT per subscriber, NOTIFY_MAX_SUBS in all; what is
 * past them is left out and logged, the first in the file kept).  By a
 * sort of the table's and the file's subscriptions together: a start
 * or a new master with tens of thousands of them holds the loop for
 * milliseconds, where comparing each entry with the table took seconds.
 * 0, or -1 (no memory) with the reason in err and nothing added.
 */
static int merge(struct notifier *n, const struct load_entry *e, size_t ne,
		 const char *path, char *err, size_t errlen)
{
	size_t nr = n->n_subs + ne, kept = 0, over_port = 0, over_all = 0;
	size_t before = n->n_subs;
	struct load_ref *r = malloc((nr ? nr : 1) * sizeof(*r));
	uint8_t *keep = calloc(ne ? ne : 1, 1);
	uint16_t *enums = malloc((ne ? ne : 1) * sizeof(*enums));
	uint32_t *idx = malloc((ne ? ne : 1) * sizeof(*idx));
	int rc = -1;
	if (!r || !keep || !enums || !idx) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n->n_subs; i++) {
		sub_key(n->subs[i]->ii, &n->subs[i]->who, r[i].key);
		r[i].in_table = 1;
		r[i].idx = (uint32_t)i;
	}
	for (size_t k = 0; k < ne; k++) {
		struct load_ref *x = &r[n->n_subs + k];
		sub_key(e[k].ii, &e[k].who, x->key);
		x->in_table = 0;
		x->idx = (uint32_t)k;
		enums[k] = UINT16_MAX;
	}
	qsort(r, nr, sizeof(*r), load_ref_cmp);
	/* a run of one identity: the first is kept, unless the table has it */
	for (size_t i = 0; i < nr; i++)
		if (!r[i].in_table &&
		    (!i || memcmp(r[i - 1].key, r[i].key, SUB_KEY_LEN)))
			keep[r[i].idx] = 1;
	/* a run of one subscriber GID (the key's first 16 bytes) */
	for (size_t i = 0, j; i < nr; i = j) {
		for (j = i; j < nr && !memcmp(r[j].key, r[i].key, 16); j++)
			;
		over_port += trim_subscriber(r + i, j - i, keep, idx);
		assign_enums(n, r + i, j - i, e, keep, enums);
	}
	for (size_t k = 0; k < ne; k++)
		if (keep[k] && n->n_subs + kept == NOTIFY_MAX_SUBS) {
			keep[k] = 0;
			over_all++;
		} else {
			kept += keep[k];
		}
	if (kept && n->n_subs + kept > n->cap_subs) {
		struct sub **v = realloc(n->subs, (n->n_subs + kept) * sizeof(*v));
		if (!v) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		n->subs = v;
		n->cap_subs = n->n_subs + kept;
	}
	for (size_t k = 0; k < ne; k++)
		if (keep[k] && !add_sub(n, e[k].ii, &e[k].who, enums[k])) {
			while (n->n_subs > before)
				free(n->subs[--n->n_subs]);
			snprintf(err, errlen, "out of memory");
			goto out;
		}
	if (over_port || over_all)
		log_warn("%s: %zu subscriptions left out: %zu past %d of one subscriber, "
			 "%zu past %d in all", path, over_port + over_all, over_port,
			 NOTIFY_MAX_PER_PORT, over_all, NOTIFY_MAX_SUBS);
	rc = 0;
out:
	free(r);
	free(keep);
	free(enums);
	free(idx);
	return rc;
}

/*
 * Reads the state file and adds what is not there yet.  The file is
 * read whole before anything is added: a bad line refuses it all, and
 * the file stays as it is (the notifier does not write over a file it
 * could not read until it has been told to, see notifier_load()).
 */
static int load_file(struct notifier *n, char *err, size_t errlen)
{
	const char *path = n->p.state_path;
	if (!path[0])
		return 0;
	FILE *fp = rfile_open(path, 0, err, errlen);
	if (!fp)
		return errno == ENOENT ? (err[0] = '\0', 0) : -1;
	struct load_entry *e = NULL;
	size_t ne = 0, cap = 0;
	char line[512];
	int lineno = 0, rc = 0;
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		if (!strchr(line, '\n')) {	/* ibsmd ends every line */
			snprintf(err, errlen, "%s:%d: %s", path, lineno, feof(fp) ?
				 "truncated: the last line has no end" : "line too long");
			rc = -1;
			break;
		}
		char *s = line + strspn(line, " \t");
		if (*s == '#' || *s == '\n' || !*s)
			continue;
		if (ne == cap) {
			cap = cap ? 2 * cap : 64;
			struct load_entry *v = cap > NOTIFY_MAX_SUBS ? NULL :
					       realloc(e, cap * sizeof(*e));
			if (!v) {
				snprintf(err, errlen, "%s:%d: too many subscriptions",
					 path, lineno);
				rc = -1;
				break;
			}
			e = v;
		}
		if (parse_line(s, &e[ne].who, &e[ne].enum_id, e[ne].ii) < 0) {
			snprintf(err, errlen,
				 "%s:%d: expected \"SUBSCRIBER_GID LID QPN PKEY ENUM INFORMINFO\" "
				 "(32 hex digits, a LID, QPN, P_Key, Enum, 72 hex digits "
				 "with Subscribe 1)", path, lineno);
			rc = -1;
			break;
		}
		e[ne++].lineno = lineno;
	}
	if (!rc && ferror(fp)) {
		snprintf(err, errlen, "%s: read error", path);
		rc = -1;
	}
	fclose(fp);
	if (!rc)
		rc = merge(n, e, ne, path, err, errlen);
	free(e);
	return rc;
}

int notifier_load(struct notifier *n, char *err, size_t errlen)
{
	size_t before = n->n_subs;
	if (load_file(n, err, errlen) < 0)
		return -1;
	if (n->n_subs != before)
		changed(n);	/* the file gets what only the table had */
	return 0;
}

/* ---- set-up ---- */

static void on_timer(evutil_socket_t fd, short what, void *arg);

struct notifier *notifier_new(struct event_base *base,
			      struct mad_transport *t,
			      const struct notify_params *p, char *err,
			      size_t errlen)
{
	struct notifier *n = calloc(1, sizeof(*n));
	if (!n) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	n->base = base;
	n->t = t;
	n->p = *p;
	n->timer = evtimer_new(base, on_timer, n);
	n->save_timer = evtimer_new(base, on_save, n);
	uint32_t r[2] = { 0, 0 };
	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r[0] = (uint32_t)now_ms(), r[1] = (uint32_t)getpid();
	n->tid_hi = r[0];
	n->seq = r[1];
	if (!n->timer || !n->save_timer) {
		snprintf(err, errlen, "out of memory");
		notifier_free(n);
		return NULL;
	}
	if (load_file(n, err, errlen) < 0) {
		notifier_free(n);
		return NULL;
	}
	n->dirty = 0;
	return n;
}

void notifier_free(struct notifier *n)
{
	if (!n)
		return;
	if (n->dirty && n->save_timer) {
		char err[1024];
		if (save_now(n, err, sizeof(err)) < 0)
			log_err("cannot save the subscriptions: %s", err);
	}
	for (size_t i = 0; i < n->n_subs; i++)
		free(n->subs[i]);
	free(n->subs);
	free(n->slots);
	if (n->timer)
		event_free(n->timer);
	if (n->save_timer)
		event_free(n->save_timer);
	free(n);
}

void notifier_set_pkey_check(struct notifier *n, notify_pkey_fn fn, void *ctx)
{
	n->pkey_fn = fn;
	n->pkey_ctx = ctx;
}

/* ---- subscribe, unsubscribe ---- */

/*
 * o13-14.1.1: a subscription to a LID range needs the subscriber to share
 * a P_Key with every port in it (LIDRangeEnd 0: the one LID).
 */
static int range_allowed(const struct notifier *n, const uint8_t *ii,
			 uint32_t lid)
{
	uint32_t b = ii_lid_begin(ii), e = ii_lid_end(ii);
	if (!n->pkey_fn || !gid_is_zero(ii + II_GID) || b == 0xffff)
		return 1;
	if (!e)
		e = b;
	if (e < b || e >= FAB_MLID_BASE)
		return 0;
	for (uint32_t l = b; l <= e; l++)
		if (l && !n->pkey_fn(n->pkey_ctx, lid, l))
			return 0;
	return 1;
}

int notifier_inform(struct notifier *n, const uint8_t *ii,
		    const struct notify_subscriber *who, uint8_t *out)
{
	memcpy(out, ii, SA_SIZE_INFORM_INFO);
	uint8_t subscribe = ii[II_SUBSCRIBE];
	char g[33];
	gid_str(who->gid, g);
	if (subscribe > 1 || !who->lid || gid_is_zero(who->gid)) {
		out[II_SUBSCRIBE] = 0;	/* o13-13.1.1 */
		return SA_STS_REQ_INVALID;
	}
	size_t i;
	for (i = 0; i < n->n_subs; i++)
		if (same_sub(n->subs[i], ii, who))
			break;
	if (!subscribe) {
		if (i == n->n_subs) {
			log_info("unsubscribe from %s (LID %u): no such subscription",
				 g, who->lid);
			return SA_STS_REQ_INVALID;
		}
		remove_sub(n, i);
		n->st.unsubscribed++;
		log_info("unsubscribed %s (LID %u) from trap %u", g, who->lid,
			 ii_trap(ii));
		return 0;
	}
	if (!range_allowed(n, ii, who->lid)) {
		out[II_SUBSCRIBE] = 0;
		return SA_STS_REQ_INVALID;
	}
	if (i < n->n_subs) {	/* the same subscription: updated, not added */
		struct sub *s = n->subs[i];
		if (memcmp(s->ii, ii, SA_SIZE_INFORM_INFO) || s->who.lid != who->lid ||
		    s->who.pkey != who->pkey) {
			memcpy(s->ii, ii, SA_SIZE_INFORM_INFO);
			s->who = *who;
			changed(n);
		}
		return 0;
	}
	if (n->n_subs >= NOTIFY_MAX_SUBS ||
	    count_port(n, who->gid) >= NOTIFY_MAX_PER_PORT) {
		out[II_SUBSCRIBE] = 0;
		return SA_STS_NO_RESOURCES;
	}
	if (!add_sub(n, ii, who, -1)) {
		out[II_SUBSCRIBE] = 0;
		return SA_STS_NO_RESOURCES;
	}
	n->st.subscribed++;
	changed(n);
	log_info("subscribed %s (LID %u QPN %u) to trap %u", g, who->lid,
		 who->qpn, ii_trap(ii));
	return 0;
}

void notifier_foreach(struct notifier *n, notify_each_fn fn, void *arg)
{
	for (size_t i = 0; i < n->n_subs; i++)
		fn(arg, n->subs[i]->who.gid, n->subs[i]->enum_id, n->subs[i]->ii);
}

size_t notifier_count(const struct notifier *n)
{
	return n->n_subs;
}

/* ---- matching ---- */

/*
 * Whether s wants nt (IBA vol. 1 §13.4.8.3).  The source of 64-67 is the
 * port named by the GID in DataDetails (the notice's issuer is the SM);
 * of every other notice its issuer.  The LID range is compared with
 * source_lid for 64-69 when it is given, else with the issuer's LID.
 */
static int matches(const struct sub *s, const struct notice *nt,
		   uint32_t source_lid)
{
	const uint8_t *ii = s->ii;
	uint8_t src_gid[16];
	if (nt->generic && nt->trap >= TRAP_GID_IN_SERVICE &&
	    nt->trap <= TRAP_MC_DELETED)
		notice_get_gid(nt, src_gid);
	else
		memcpy(src_gid, nt->issuer_gid, 16);
	uint32_t src_lid = nt->issuer_lid;
	if (nt->generic && source_lid && nt->trap >= TRAP_GID_IN_SERVICE &&
	    nt->trap <= TRAP_REPATH)
		src_lid = source_lid;
	if (!gid_is_zero(ii + II_GID)) {
		if (memcmp(ii + II_GID, src_gid, 16))
			return 0;
	} else if (ii_lid_begin(ii) != 0xffff) {
		uint32_t b = ii_lid_begin(ii), e = ii_lid_end(ii);
		if (!e)
			e = b;
		if (src_lid < b || src_lid > e)
			return 0;
	}
	if (!ii[II_IS_GENERIC] != !nt->generic)
		return 0;
	if (ii_type(ii) != 0xffff && ii_type(ii) != nt->type)
		return 0;
	if (ii_trap(ii) != 0xffff && ii_trap(ii) != nt->trap)
		return 0;
	if (ii_producer(ii) != 0xffffff && ii_producer(ii) != nt->producer)
		return 0;
	return 1;
}

/* ---- delivery ---- */

static void arm(struct notifier *n)
{
	uint64_t first = UINT64_MAX;
	for (uint32_t k = 0; k < n->hi_slots; k++)
		if (n->slots[k].sub && n->slots[k].deadline < first)
			first = n->slots[k].deadline;
	if (first == UINT64_MAX) {
		event_del(n->timer);
		return;
	}
	uint64_t now = now_ms();
	set_timer(n->timer, first > now ? first - now : 0);
}

static void send_report(struct notifier *n, struct report *r)
{
	struct mad_addr to = {
		.lid = r->sub->who.lid,
		.qpn = r->sub->who.qpn,
		.qkey = NOTIFY_QKEY,
	};
	if (mad_transport_send(n->t, r->mad, MAD_SIZE, &to) < 0)
		log_info("cannot send a Report to LID %u", to.lid);
	r->deadline = now_ms() + resp_ms(n, r->sub);
}

static int grow_slots(struct notifier *n)
{
	if (n->cap_slots >= NOTIFY_MAX_SLOTS)
		return -1;
	uint32_t cap = n->cap_slots ? 2 * n->cap_slots : 64;
	struct report *v = realloc(n->slots, (size_t)cap * sizeof(*v));
	if (!v)
		return -1;
	memset(v + n->cap_slots, 0, (size_t)(cap - n->cap_slots) * sizeof(*v));
	n->slots = v;
	n->cap_slots = cap;
	return 0;
}

/* Queues and sends one Report of nt to s; 0 or -1 (no room). */
static int queue_report(struct notifier *n, struct sub *s, const uint8_t *ntc)
{
	if (s->pending >= NOTIFY_MAX_PENDING)
		return -1;
	if (n->n_pending == n->cap_slots && grow_slots(n) < 0)
		return -1;
	uint32_t k = n->free_hint < n->cap_slots ? n->free_hint : 0;
	while (n->slots[k].sub)
		k = (k + 1) % n->cap_slots;
	n->free_hint = (k + 1) % n->cap_slots;
	if (k >= n->hi_slots)
		n->hi_slots = k + 1;
	struct report *r = &n->slots[k];
	n->seq = (n->seq + 1) & ((1u << (32 - NOTIFY_SLOT_BITS)) - 1);
	r->sub = s;
	r->tid = n->seq << NOTIFY_SLOT_BITS | k;
	sa_init_request(r->mad, SA_METHOD_REPORT,
			(uint64_t)n->tid_hi << 32 | r->tid, SA_ATTR_NOTICE, 0,
			0, ntc, NOTICE_SIZE);
	s->pending++;
	n->n_pending++;
	n->st.reports_sent++;
	send_report(n, r);
	return 0;
}

static int publish(struct notifier *n, int only_lid, uint32_t lid,
		   const struct notice *nt, uint32_t source_lid,
		   notify_may_fn may_see, void *ctx)
{
	uint8_t ntc[NOTICE_SIZE];
	int queued = 0;
	notice_encode(nt, ntc);
	for (size_t i = 0; i < n->n_subs; i++) {
		struct sub *s = n->subs[i];
		if ((only_lid && s->who.lid != lid) || !matches(s, nt, source_lid))
			continue;
		if (may_see && !may_see(ctx, s->who.lid)) {
			n->st.not_allowed++;
			continue;
		}
		if (n->pkey_fn && source_lid &&
		    !n->pkey_fn(n->pkey_ctx, s->who.lid, source_lid)) {
			/* o13-17.1.2: a subscription to a range it cannot see goes */
			if (ii_lid_begin(s->ii) != 0xffff) {
				remove_sub(n, i--);
				n->st.dropped_subscriptions++;
			}
			continue;
		}
		if (queue_report(n, s, ntc) < 0) {
			n->st.reports_lost++;
			log_info("Report of notice %u to LID %u not queued: %u unanswered",
				 nt->trap, s->who.lid, s->pending);
			continue;
		}
		queued++;
	}
	if (queued)
		arm(n);
	return queued;
}

int notifier_publish(struct notifier *n, const struct notice *nt,
		     uint32_t source_lid)
{
	return publish(n, 0, 0, nt, source_lid, NULL, NULL);
}

int notifier_publish_if(struct notifier *n, const struct notice *nt,
			notify_may_fn may_see, void *ctx)
{
	return publish(n, 0, 0, nt, 0, may_see, ctx);
}

int notifier_publish_to(struct notifier *n, uint32_t lid,
			const struct notice *nt, uint32_t source_lid)
{
	return publish(n, 1, lid, nt, source_lid, NULL, NULL);
}

static size_t sub_index(const struct notifier *n, const struct sub *s)
{
	for (size_t i = 0; i < n->n_subs; i++)
		if (n->subs[i] == s)
			return i;
	return n->n_subs;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct notifier *n = arg;
	uint64_t now = now_ms();
	for (uint32_t k = 0; k < n->hi_slots; k++) {
		struct report *r = &n->slots[k];
		struct sub *s = r->sub;
		if (!s || r->deadline > now + 1)
			continue;
		if (++s->failures >= n->p.max_failures) {
			char g[33];
			gid_str(s->who.gid, g);
			log_notice("subscription of %s (LID %u) to trap %u dropped: %u Reports unanswered",
				   g, s->who.lid, ii_trap(s->ii), s->failures);
			remove_sub(n, sub_index(n, s));
			n->st.dropped_subscriptions++;
			continue;
		}
		n->st.reports_resent++;
		send_report(n, r);
	}
	arm(n);
}

int notifier_report_resp(struct notifier *n, const uint8_t *mad, size_t len,
			 const struct mad_addr *from)
{
	if (len < SA_HDR_SIZE || mad[1] != SA_CLASS ||
	    mad_method(mad) != SA_METHOD_REPORT_RESP ||
	    mad_attr_id(mad) != SA_ATTR_NOTICE)
		return 0;
	uint32_t tid = (uint32_t)mad_tid(mad);
	uint32_t k = tid & (NOTIFY_MAX_SLOTS - 1);
	struct report *r = k < n->hi_slots ? &n->slots[k] : NULL;
	if (!r || !r->sub || r->tid != tid ||
	    (from && from->lid && from->lid != r->sub->who.lid)) {
		n->st.not_matched++;
		return 0;
	}
	r->sub->failures = 0;
	r->sub->pending--;
	r->sub = NULL;
	n->n_pending--;
	n->st.report_resps++;
	return 1;
}

const struct notify_stats *notifier_get_stats(const struct notifier *n)
{
	return &n->st;
}
