/*
 * maddrop: an LD_PRELOAD test shim that drops and counts outgoing MADs.
 *
 * Preload it before libumad2sim.so (and after libasan, when there is one):
 *
 *   LD_PRELOAD="build/libmaddrop.so .../umad2sim/libumad2sim.so" prog
 *
 * It wraps write() on umad2sim's fake umad fds (1024..2047).  Such a write
 * carries a struct ib_user_mad followed by the MAD.  The real kernel's umad
 * fds are small numbers and are never touched.
 *
 *   MADDROP_RATE=P      drop P percent (float) of the outgoing requests
 *                       (method bit 0x80 clear); a dropped MAD is reported
 *                       as sent (full length returned)
 *   MADDROP_SEED=N      seed of the drop decisions (default 1); the n-th
 *                       request gets a fixed decision for a given seed
 *   MADDROP_INTERVAL_MS=N  also rewrite FILE every N ms while the counts
 *                       change (a thread of its own), so that a long-running
 *                       program's counts can be read between two events
 *   MADDROP_COUNT=FILE  count every outgoing MAD and write the counts to
 *                       FILE at start, at exit (exit() or a return from
 *                       main) and every MADDROP_EVERY MADs (default 1000,
 *                       0 = only at exit); "%p" in FILE becomes the pid,
 *                       for when several processes inherit the variable
 *
 * The counts file has one "name value" per line:
 *   total N, dropped N, requests N, responses N, smp_mkey_set N and
 *   smp_mkey_zero N (SMP Gets and Sets, classes 0x01 and 0x81, whose
 *   M_Key, bytes 24-31, is or is not 0; a TrapRepress echoes the trap's),
 *   then per method over all
 *   classes (get, set, send, trap, report, trap_repress, get_table,
 *   get_resp, ...), then class_0xCC_method_0xMM N, then
 *   class_0xCC_method_0xMM_attr_0xAAAA N, and dropped_class_... N, then
 *   last_us_class_0xCC N: when the last MAD of that class was written
 *   (CLOCK_REALTIME, microseconds), so that the end of a burst can be
 *   timed from outside (make bench's perfmgr row).
 * It is replaced atomically (written to FILE.tmp, then renamed).  The file
 * is opened with the raw system call: umad2sim's open() takes the mutex
 * its write() holds while it waits on ibsim, and a dump through it would
 * stall for as long as the program's sends do.
 *
 * The write path uses only atomics: it is safe from any thread and from
 * signal handlers.  The real write() is looked up in a constructor.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/umad.h>

#define UMAD_FD_MIN	1024
#define UMAD_FD_MAX	2048
#define MAD_HDR_LEN	24
#define SLOTS		4096	/* distinct (class, method, attribute) keys */
#define PATH_MAX_LEN	4096

typedef ssize_t (*write_fn)(int, const void *, size_t);

struct slot {
	_Atomic uint32_t key;	/* 0 = free, else 1 + (class<<24|method<<16|attr) */
	_Atomic uint64_t sent;
	_Atomic uint64_t dropped;
};

static _Atomic(write_fn) real_write;
static struct slot slots[SLOTS];
static _Atomic uint64_t n_total, n_dropped, n_overflow;
#define SMP_MKEY_OFF 24	/* an SMP's M_Key: bytes 24-31 */
#define SMP_MKEY_END 32
static _Atomic uint64_t n_smp_keyed, n_smp_unkeyed;	/* SMP requests by M_Key */
static _Atomic uint64_t n_requests_seen;
static _Atomic uint64_t class_last_us[256];	/* 0 = none of that class */
static _Atomic int dumping;

/* Set once, in the constructor, before any thread of the program runs. */
static uint64_t drop_threshold;	/* drop when rnd < threshold (of 2^32) */
static uint64_t drop_seed = 1;
static uint64_t dump_every = 1000;
static char count_path[PATH_MAX_LEN];
static char count_tmp[PATH_MAX_LEN + 8];

static uint64_t
splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static write_fn
next_write(void)
{
	write_fn fn = atomic_load(&real_write);

	if (fn == NULL) {
		fn = (write_fn)dlsym(RTLD_NEXT, "write");
		atomic_store(&real_write, fn);
	}
	return fn;
}

static struct slot *
slot_for(uint32_t key)
{
	uint32_t want = key + 1, h, i;

	h = (uint32_t)(splitmix64(want) & (SLOTS - 1));
	for (i = 0; i < SLOTS; i++) {
		struct slot *s = &slots[(h + i) & (SLOTS - 1)];
		uint32_t cur = atomic_load(&s->key);

		if (cur == 0) {
			uint32_t expect = 0;

			if (atomic_compare_exchange_strong(&s->key, &expect,
			    want))
				return s;
			cur = expect;
		}
		if (cur == want)
			return s;
	}
	return NULL;
}

/* Async-signal-safe formatting into a bounded buffer. */
struct buf {
	char *p;
	size_t len, cap;
};

static void
put_str(struct buf *b, const char *s)
{
	while (*s != '\0' && b->len < b->cap)
		b->p[b->len++] = *s++;
}

static void
put_u64(struct buf *b, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0 && b->len < b->cap)
		b->p[b->len++] = tmp[--n];
}

static void
put_hex(struct buf *b, uint32_t v, int digits)
{
	static const char hex[] = "0123456789abcdef";

	put_str(b, "0x");
	while (digits-- > 0 && b->len < b->cap)
		b->p[b->len++] = hex[(v >> (4 * digits)) & 0xf];
}

static void
put_line(struct buf *b, const char *name, uint64_t v)
{
	put_str(b, name);
	put_str(b, " ");
	put_u64(b, v);
	put_str(b, "\n");
}

static const struct {
	uint8_t method;
	const char *name;
} method_names[] = {
	{ 0x01, "get" }, { 0x02, "set" }, { 0x03, "send" },
	{ 0x05, "trap" }, { 0x06, "report" }, { 0x07, "trap_repress" },
	{ 0x12, "get_table" }, { 0x13, "get_traceTable" },
	{ 0x14, "get_multi" }, { 0x15, "delete" },
	{ 0x81, "get_resp" }, { 0x86, "report_resp" },
	{ 0x92, "get_table_resp" }, { 0x94, "get_multi_resp" },
	{ 0x95, "delete_resp" },
};

/* Per (class << 8 | method) sums, filled by dump_counts (one at a time). */
static uint64_t cm_sent[1 << 16], cm_dropped[1 << 16];

static void
sum_class_methods(void)
{
	int i;

	memset(cm_sent, 0, sizeof(cm_sent));
	memset(cm_dropped, 0, sizeof(cm_dropped));
	for (i = 0; i < SLOTS; i++) {
		uint32_t k = atomic_load(&slots[i].key);

		if (k == 0)
			continue;
		cm_sent[(k - 1) >> 16] += atomic_load(&slots[i].sent);
		cm_dropped[(k - 1) >> 16] += atomic_load(&slots[i].dropped);
	}
}

static uint64_t
sum_method(uint8_t method)
{
	uint64_t sum = 0;
	int c;

	for (c = 0; c < 256; c++)
		sum += cm_sent[c << 8 | method];
	return sum;
}

static void
put_class_methods(struct buf *b, const uint64_t *counts, const char *prefix)
{
	uint32_t cm;

	for (cm = 0; cm < (1 << 16); cm++) {
		if (counts[cm] == 0)
			continue;
		put_str(b, prefix);
		put_hex(b, cm >> 8, 2);
		put_str(b, "_method_");
		put_hex(b, cm & 0xff, 2);
		put_str(b, " ");
		put_u64(b, counts[cm]);
		put_str(b, "\n");
	}
}

static uint32_t sorted_keys[SLOTS];

static void
put_attrs(struct buf *b)
{
	int i, j, n = 0;

	for (i = 0; i < SLOTS; i++) {
		uint32_t k = atomic_load(&slots[i].key);

		if (k == 0)
			continue;
		for (j = n++; j > 0 && sorted_keys[j - 1] > k; j--)
			sorted_keys[j] = sorted_keys[j - 1];
		sorted_keys[j] = k;
	}
	for (i = 0; i < n; i++) {
		struct slot *s = slot_for(sorted_keys[i] - 1);
		uint32_t k = sorted_keys[i] - 1;

		if (s == NULL)
			continue;
		put_str(b, "class_");
		put_hex(b, k >> 24, 2);
		put_str(b, "_method_");
		put_hex(b, (k >> 16) & 0xff, 2);
		put_str(b, "_attr_");
		put_hex(b, k & 0xffff, 4);
		put_str(b, " ");
		put_u64(b, atomic_load(&s->sent));
		put_str(b, "\n");
	}
}

static void
dump_counts(void)
{
	static char text[1 << 18];
	struct buf b = { text, 0, sizeof(text) };
	uint64_t total, responses;
	write_fn wr;
	size_t i;
	int fd, expect = 0;

	if (count_path[0] == '\0')
		return;
	/* One dumper at a time; a concurrent caller simply skips. */
	if (!atomic_compare_exchange_strong(&dumping, &expect, 1))
		return;
	total = atomic_load(&n_total);
	sum_class_methods();
	responses = 0;
	for (i = 0; i < (1 << 16); i++)
		if (i & 0x80)
			responses += cm_sent[i];
	put_line(&b, "total", total);
	put_line(&b, "dropped", atomic_load(&n_dropped));
	put_line(&b, "requests", total - responses);
	put_line(&b, "responses", responses);
	put_line(&b, "smp_mkey_set", atomic_load(&n_smp_keyed));
	put_line(&b, "smp_mkey_zero", atomic_load(&n_smp_unkeyed));
	for (i = 0; i < sizeof(method_names) / sizeof(method_names[0]); i++)
		put_line(&b, method_names[i].name,
		    sum_method(method_names[i].method));
	if (atomic_load(&n_overflow) != 0)
		put_line(&b, "uncounted_keys", atomic_load(&n_overflow));
	put_class_methods(&b, cm_sent, "class_");
	put_class_methods(&b, cm_dropped, "dropped_class_");
	put_attrs(&b);
	for (i = 0; i < 256; i++) {
		uint64_t us = atomic_load(&class_last_us[i]);

		if (us == 0)
			continue;
		put_str(&b, "last_us_class_");
		put_hex(&b, (uint32_t)i, 2);
		put_str(&b, " ");
		put_u64(&b, us);
		put_str(&b, "\n");
	}

	wr = next_write();
	fd = (int)syscall(SYS_openat, AT_FDCWD, count_tmp,
	    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		size_t off = 0;

		while (off < b.len) {
			ssize_t n = wr(fd, text + off, b.len - off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			off += (size_t)n;
		}
		close(fd);
		if (off == b.len)
			rename(count_tmp, count_path);
		else
			unlink(count_tmp);
	}
	atomic_store(&dumping, 0);
}

/* -> 1 when this request is to be dropped. */
static int
drop_decision(void)
{
	uint64_t n, r;

	if (drop_threshold == 0)
		return 0;
	n = atomic_fetch_add(&n_requests_seen, 1);
	r = splitmix64(drop_seed ^ splitmix64(n)) >> 32;
	return r < drop_threshold;
}

ssize_t
write(int fd, const void *buf, size_t count)
{
	const uint8_t *mad;
	uint8_t mclass, method;
	uint16_t attr;
	uint32_t key;
	struct slot *s;
	uint64_t total;
	int drop;

	if (fd < UMAD_FD_MIN || fd >= UMAD_FD_MAX || buf == NULL ||
	    count < sizeof(struct ib_user_mad) + MAD_HDR_LEN)
		return next_write()(fd, buf, count);
	mad = (const uint8_t *)buf + sizeof(struct ib_user_mad);
	mclass = mad[1];
	method = mad[3];
	attr = (uint16_t)(mad[16] << 8 | mad[17]);
	drop = (method & 0x80) == 0 && drop_decision();
	if ((mclass == 0x01 || mclass == 0x81) && (method == 0x01 || method == 0x02) &&
	    count >= sizeof(struct ib_user_mad) + SMP_MKEY_END) {
		uint64_t mkey = 0;

		for (int i = SMP_MKEY_OFF; i < SMP_MKEY_END; i++)
			mkey |= mad[i];
		atomic_fetch_add(mkey ? &n_smp_keyed : &n_smp_unkeyed, 1);
	}

	if (count_path[0] != '\0') {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		atomic_store(&class_last_us[mclass], (uint64_t)now.tv_sec *
		    1000000u + (uint64_t)now.tv_nsec / 1000u);
		key = (uint32_t)mclass << 24 | (uint32_t)method << 16 | attr;
		s = slot_for(key);
		if (s != NULL) {
			atomic_fetch_add(&s->sent, 1);
			if (drop)
				atomic_fetch_add(&s->dropped, 1);
		} else
			atomic_fetch_add(&n_overflow, 1);
	}
	total = atomic_fetch_add(&n_total, 1) + 1;
	if (drop)
		atomic_fetch_add(&n_dropped, 1);
	if (dump_every != 0 && total % dump_every == 0)
		dump_counts();
	if (drop)
		return (ssize_t)count;
	return next_write()(fd, buf, count);
}

/* Copies the MADDROP_COUNT path, "%p" replaced by the pid. */
static int
expand_path(const char *in, char *out, size_t size)
{
	char pid[24];
	size_t n = 0, plen;

	plen = (size_t)snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	while (*in != '\0') {
		if (in[0] == '%' && in[1] == 'p') {
			if (n + plen >= size)
				return -1;
			memcpy(out + n, pid, plen);
			n += plen;
			in += 2;
			continue;
		}
		if (n + 1 >= size)
			return -1;
		out[n++] = *in++;
	}
	out[n] = '\0';
	return 0;
}

static unsigned interval_ms;

/* Rewrites the counts file every interval_ms while they change. */
static void *
interval_dumper(void *arg)
{
	uint64_t last = UINT64_MAX;
	struct timespec ts;

	(void)arg;
	ts.tv_sec = interval_ms / 1000;
	ts.tv_nsec = (long)(interval_ms % 1000) * 1000000L;
	for (;;) {
		nanosleep(&ts, NULL);
		uint64_t now = atomic_load(&n_total);
		if (now != last) {
			dump_counts();
			last = now;
		}
	}
	return NULL;
}

__attribute__((constructor)) static void
maddrop_init(void)
{
	const char *v;
	double rate;

	next_write();
	if ((v = getenv("MADDROP_RATE")) != NULL && *v != '\0') {
		rate = strtod(v, NULL);
		if (rate < 0)
			rate = 0;
		if (rate > 100)
			rate = 100;
		drop_threshold = (uint64_t)(rate / 100.0 * 4294967296.0);
	}
	if ((v = getenv("MADDROP_SEED")) != NULL && *v != '\0')
		drop_seed = strtoull(v, NULL, 0);
	if ((v = getenv("MADDROP_EVERY")) != NULL && *v != '\0')
		dump_every = strtoull(v, NULL, 0);
	if ((v = getenv("MADDROP_COUNT")) != NULL && *v != '\0' &&
	    expand_path(v, count_path, sizeof(count_path)) == 0) {
		snprintf(count_tmp, sizeof(count_tmp), "%s.tmp", count_path);
		dump_counts();
		if ((v = getenv("MADDROP_INTERVAL_MS")) != NULL && *v != '\0' &&
		    (interval_ms = (unsigned)strtoul(v, NULL, 0)) > 0) {
			pthread_t t;
			if (pthread_create(&t, NULL, interval_dumper, NULL) == 0)
				pthread_detach(t);
		}
	}
}

/* Runs on exit() and on a return from main(). */
__attribute__((destructor)) static void
maddrop_fini(void)
{
	dump_counts();
}
