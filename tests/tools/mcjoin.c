/*
 * mcjoin: a host that joins and leaves multicast groups through the SA
 * (MCMemberRecord Set and Delete, IBA vol. 1 §15.2.5.17) from its own
 * port, as IPoIB or a multicast application does.  Tests and make bench
 * drive joins with it on ibsim; it speaks to any SA (ibsmd, OpenSM).
 *
 *     mcjoin [-d CA] [-p PORT] [-T TIMEOUT_MS] [-r RETRIES] [-k INFLIGHT]
 *            join|leave --mgid MGID|0 [--pkey P] [--qkey Q] [--sl N]
 *            [--join-state N] [--mtu [<>=]N] [--rate [<>=]N] [--create]
 *            [--count N] [--prefix MGID] [--at EPOCH]
 *
 * A join sends MGID, PortGID (the port's own GID) and JoinState (default
 * 1, FullMember); with MGID 0, --create, or any of --qkey, --pkey, --sl it
 * also sends the components a create needs (Q_Key, P_Key, SL, TClass,
 * FlowLabel: 0, 0xffff, 0, 0, 0 unless given), and --mtu / --rate add
 * theirs (selector '>' greater than, '<' less than, '=' or none exactly).
 * A leave sends MGID, PortGID and the JoinState bits to leave.
 * --count N sends N requests: N creates with MGID 0, or MGIDs --mgid (or
 * --prefix) plus 0..N-1 in their last 32 bits, INFLIGHT at a time; with
 * both --mgid and --prefix, --mgid first, then the N from --prefix (a host
 * that joins the broadcast group and N more, as `make bench` does).
 * --at EPOCH (seconds since the epoch, wall clock) holds the first
 * request until then, once the port is open: several hosts start together.
 *
 * Prints one JSON line per answer (op, status, status_name, mgid, mlid,
 * port_gid, qkey, pkey, mtu, rate, sl, scope, join_state, ms; the record
 * answered, or what was asked when the SA refused) and, with --count
 * above 1, a summary line (started, last_answer: the wall-clock times of
 * the first request and the last answer, seconds since the epoch, for
 * `make bench`'s join-storm row).  Exit 0 when every request succeeded, 1 if
 * any failed, 2 on bad usage.  Runs on a umad port (hardware, or ibsim
 * under libumad2sim.so: tests/sim's on_host H-N mcjoin ...).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "saload.h"

/* MCMemberRecord: byte offsets, size, ComponentMask bits */
#define MCR_MGID	0
#define MCR_PORT_GID	16
#define MCR_QKEY	32
#define MCR_MLID	36
#define MCR_MTU		38	/* selector 2 bits, MTU 6 */
#define MCR_TCLASS	39
#define MCR_PKEY	40
#define MCR_RATE	42	/* selector 2 bits, rate 6 */
#define MCR_SL_FLOW_HOP	44	/* SL 4 bits, FlowLabel 20, HopLimit 8 */
#define MCR_SCOPE_JOIN	48	/* Scope 4 bits, JoinState 4 */
#define MCR_SIZE	52

#define CM_MGID		(1ULL << 0)
#define CM_PORT_GID	(1ULL << 1)
#define CM_QKEY		(1ULL << 2)
#define CM_MTU_SEL	(1ULL << 4)
#define CM_MTU		(1ULL << 5)
#define CM_TCLASS	(1ULL << 6)
#define CM_PKEY		(1ULL << 7)
#define CM_RATE_SEL	(1ULL << 8)
#define CM_RATE		(1ULL << 9)
#define CM_SL		(1ULL << 12)
#define CM_FLOW		(1ULL << 13)
#define CM_JOIN_STATE	(1ULL << 16)
#define CM_CREATE	(CM_QKEY | CM_TCLASS | CM_PKEY | CM_SL | CM_FLOW)

struct req {
	int leave;
	uint8_t base[16];	/* MGID, or of the first of --count */
	uint8_t first[16];	/* --mgid sent before --prefix's */
	int have_first;
	uint8_t port_gid[16];
	uint32_t qkey;
	uint16_t pkey;
	uint8_t sl, join_state;
	int mtu_sel, mtu, rate_sel, rate;	/* -1: not sent */
	int create;
	unsigned count, inflight;
	/* running */
	struct saclient *c;
	struct event_base *base_ev;
	unsigned next, out, ok, failed;
	double t0;
	struct timespec started, last;	/* CLOCK_REALTIME: first send, last answer */
};

struct one {
	struct req *r;
	uint8_t rec[MCR_SIZE];
	double t;
};

static void usage(void)
{
	fputs("usage: mcjoin [-d CA] [-p PORT] [-T TIMEOUT_MS] [-r RETRIES] [-k INFLIGHT]\n"
	      "              join|leave --mgid MGID|0 [--pkey P] [--qkey Q] [--sl N]\n"
	      "              [--join-state N] [--mtu [<>=]N] [--rate [<>=]N] [--create]\n"
	      "              [--count N] [--prefix MGID] [--at EPOCH]\n", stderr);
	exit(2);
}

static unsigned long num(const char *s, unsigned long max)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);
	if (!*s || *end || v > max) {
		fprintf(stderr, "mcjoin: '%s' is not a number 0..%lu\n", s, max);
		exit(2);
	}
	return v;
}

/* "[<>=]N": selector (0 greater than, 1 less than, 2 exactly) and value */
static void selected(const char *s, int *sel, int *val)
{
	*sel = 2;
	if (*s == '>' || *s == '<' || *s == '=')
		*sel = *s == '>' ? 0 : *s == '<' ? 1 : 2, s++;
	*val = (int)num(s, 63);
}

static const char *status_name(int status)
{
	switch (status) {
	case 0: return "ok";
	case -ETIMEDOUT: return "timeout";
	case SA_STS_NO_RESOURCES: return "no_resources";
	case SA_STS_REQ_INVALID: return "req_invalid";
	case SA_STS_NO_RECORDS: return "no_records";
	case SA_STS_TOO_MANY_RECORDS: return "too_many_records";
	case SA_STS_INVALID_GID: return "invalid_gid";
	case SA_STS_INSUFFICIENT_COMPONENTS: return "insufficient_components";
	case SA_STS_DENIED: return "denied";
	case MAD_STS_METHOD_UNSUPPORTED: return "method_unsupported";
	case MAD_STS_METHOD_ATTR_UNSUPPORTED: return "method_attr_unsupported";
	case MAD_STS_INVALID_FIELD: return "invalid_field";
	default: return status < 0 ? "error" : "mad_status";
	}
}

static void print_rec(const struct req *r, int status, const uint8_t *m, double ms)
{
	char mgid[INET6_ADDRSTRLEN], pgid[INET6_ADDRSTRLEN];
	inet_ntop(AF_INET6, m + MCR_MGID, mgid, sizeof(mgid));
	inet_ntop(AF_INET6, m + MCR_PORT_GID, pgid, sizeof(pgid));
	printf("{\"op\":\"%s\",\"status\":%d,\"status_name\":\"%s\",\"mgid\":\"%s\","
	       "\"mlid\":\"0x%04x\",\"port_gid\":\"%s\",\"qkey\":\"0x%08x\","
	       "\"pkey\":\"0x%04x\",\"mtu\":%u,\"rate\":%u,\"sl\":%u,\"scope\":%u,"
	       "\"join_state\":%u,\"ms\":%.3f}\n",
	       r->leave ? "leave" : "join", status, status_name(status), mgid,
	       sa_get16(m + MCR_MLID), pgid, sa_get32(m + MCR_QKEY),
	       sa_get16(m + MCR_PKEY), m[MCR_MTU] & 0x3f, m[MCR_RATE] & 0x3f,
	       m[MCR_SL_FLOW_HOP] >> 4, m[MCR_SCOPE_JOIN] >> 4,
	       m[MCR_SCOPE_JOIN] & 0xf, ms);
}

static void issue(struct req *r);

static void done(void *arg, int status, const uint8_t *recs, size_t n,
		 size_t stride, const uint8_t *hdr)
{
	struct one *o = arg;
	struct req *r = o->r;
	double ms = (saload_now() - o->t) * 1000.0;
	int ok = status == 0 && n >= 1 && stride >= MCR_SIZE;
	print_rec(r, ok || status ? status : -EPROTO, ok ? recs : o->rec, ms);
	clock_gettime(CLOCK_REALTIME, &r->last);
	if (ok)
		r->ok++;
	else
		r->failed++;
	r->out--;
	free(o);
	issue(r);
	if (!r->out && r->next == r->count)
		event_base_loopbreak(r->base_ev);
}

static void build(const struct req *r, unsigned i, uint8_t *rec, uint64_t *cm)
{
	memset(rec, 0, MCR_SIZE);
	const uint8_t *mgid = r->base;
	if (r->have_first && i-- == 0)
		mgid = r->first, i = 0;
	memcpy(rec + MCR_MGID, mgid, 16);
	int zero = 1;
	for (int k = 0; k < 16; k++)
		zero &= !mgid[k];
	if (!zero)
		sa_put32(rec + MCR_MGID + 12, sa_get32(mgid + 12) + i);
	memcpy(rec + MCR_PORT_GID, r->port_gid, 16);
	rec[MCR_SCOPE_JOIN] = r->join_state & 0xf;
	*cm = CM_MGID | CM_PORT_GID | CM_JOIN_STATE;
	if (r->leave)
		return;
	if (r->create || zero) {
		sa_put32(rec + MCR_QKEY, r->qkey);
		sa_put16(rec + MCR_PKEY, r->pkey);
		rec[MCR_SL_FLOW_HOP] = (uint8_t)(r->sl << 4);
		*cm |= CM_CREATE;
	}
	if (r->mtu >= 0) {
		rec[MCR_MTU] = (uint8_t)(r->mtu_sel << 6 | r->mtu);
		*cm |= CM_MTU_SEL | CM_MTU;
	}
	if (r->rate >= 0) {
		rec[MCR_RATE] = (uint8_t)(r->rate_sel << 6 | r->rate);
		*cm |= CM_RATE_SEL | CM_RATE;
	}
}

static void issue(struct req *r)
{
	while (r->next < r->count && r->out < r->inflight) {
		struct one *o = calloc(1, sizeof(*o));
		uint64_t cm;
		if (!o) {
			fputs("mcjoin: out of memory\n", stderr);
			exit(1);
		}
		o->r = r;
		o->t = saload_now();
		build(r, r->next, o->rec, &cm);
		if (saclient_query(r->c, r->leave ? SA_METHOD_DELETE : SA_METHOD_SET,
				   SA_ATTR_MCMEMBER_REC, 0, cm, o->rec, MCR_SIZE,
				   done, o) < 0) {
			fprintf(stderr, "mcjoin: cannot send: %s\n", strerror(errno));
			free(o);
			r->failed += r->count - r->next;
			r->next = r->count;
			break;
		}
		r->next++;
		r->out++;
	}
}

/* sleep until the wall-clock time AT (seconds since the epoch) */
static void wait_until(double at)
{
	struct timespec now, d;
	clock_gettime(CLOCK_REALTIME, &now);
	double left = at - ((double)now.tv_sec + (double)now.tv_nsec * 1e-9);
	if (left <= 0)
		return;
	d.tv_sec = (time_t)left;
	d.tv_nsec = (long)((left - (double)d.tv_sec) * 1e9);
	while (nanosleep(&d, &d) < 0 && errno == EINTR)
		;
}

static void parse_mgid(const char *s, uint8_t mgid[16])
{
	if (!strcmp(s, "0"))
		memset(mgid, 0, 16);
	else if (inet_pton(AF_INET6, s, mgid) != 1) {
		fprintf(stderr, "mcjoin: '%s' is not a GID\n", s);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "mgid", required_argument, NULL, 'g' },
		{ "prefix", required_argument, NULL, 'x' },
		{ "pkey", required_argument, NULL, 'K' },
		{ "qkey", required_argument, NULL, 'Q' },
		{ "sl", required_argument, NULL, 'S' },
		{ "join-state", required_argument, NULL, 'j' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "rate", required_argument, NULL, 'R' },
		{ "count", required_argument, NULL, 'n' },
		{ "create", no_argument, NULL, 'c' },
		{ "at", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 }
	};
	struct umad_port_sel sel = { .issm = UMAD_ISSM_NEVER };
	struct saclient_params p = { .timeout_ms = 1000, .retries = 3,
				     .max_inflight = 256 };
	struct req r = { .pkey = 0xffff, .join_state = 1, .mtu = -1,
			 .rate = -1, .count = 1, .inflight = 16 };
	int c, have_mgid = 0, have_prefix = 0;
	double at = 0;
	char *end;

	/* options before or after the command (GNU getopt moves it last) */
	while ((c = getopt_long(argc, argv, "d:p:T:r:k:", longs, NULL)) != -1) {
		switch (c) {
		case 'd': sel.ca = optarg; break;
		case 'p': sel.port = (int)num(optarg, 254); break;
		case 'T': p.timeout_ms = (unsigned)num(optarg, 60000); break;
		case 'r': p.retries = (unsigned)num(optarg, 100); break;
		case 'k': r.inflight = (unsigned)num(optarg, 256); break;
		case 'g': parse_mgid(optarg, r.first); have_mgid = 1; break;
		case 'x': parse_mgid(optarg, r.base); have_prefix = 1; break;
		case 'a':
			at = strtod(optarg, &end);
			if (!*optarg || *end || at <= 0)
				usage();
			break;
		case 'K': r.pkey = (uint16_t)num(optarg, 0xffff); r.create = 1; break;
		case 'Q': r.qkey = (uint32_t)num(optarg, 0xffffffff); r.create = 1; break;
		case 'S': r.sl = (uint8_t)num(optarg, 15); r.create = 1; break;
		case 'j': r.join_state = (uint8_t)num(optarg, 15); break;
		case 'm': selected(optarg, &r.mtu_sel, &r.mtu); break;
		case 'R': selected(optarg, &r.rate_sel, &r.rate); break;
		case 'n': r.count = (unsigned)num(optarg, 1u << 20); break;
		case 'c': r.create = 1; break;
		default: usage();
		}
	}
	if (optind + 1 != argc || (strcmp(argv[optind], "join") && strcmp(argv[optind], "leave")))
		usage();
	r.leave = !strcmp(argv[optind], "leave");
	if ((!have_mgid && !have_prefix) || !r.count || !r.inflight)
		usage();
	if (!have_prefix)
		memcpy(r.base, r.first, 16);
	else if (have_mgid)
		r.have_first = 1;

	struct event_base *base;
	struct mad_transport t;
	struct saclient *sc = saload_open_umad("mcjoin", &sel, &p, &base, &t);
	if (!sc)
		return 1;
	saclient_port_gid(sc, r.port_gid);
	r.c = sc;
	r.base_ev = base;
	if (at > 0)
		wait_until(at);
	r.t0 = saload_now();
	clock_gettime(CLOCK_REALTIME, &r.started);
	r.count += (unsigned)r.have_first;
	issue(&r);
	if (r.out)
		event_base_dispatch(base);
	if (r.count > 1)
		printf("{\"summary\":\"%s\",\"requests\":%u,\"ok\":%u,\"failed\":%u,"
		       "\"seconds\":%.3f,\"started\":%lld.%06ld,\"last_answer\":%lld.%06ld}\n",
		       r.leave ? "leave" : "join", r.count, r.ok, r.failed,
		       saload_now() - r.t0, (long long)r.started.tv_sec,
		       r.started.tv_nsec / 1000, (long long)r.last.tv_sec,
		       r.last.tv_nsec / 1000);
	fflush(stdout);
	saclient_free(sc);
	t.close(t.ctx);
	event_base_free(base);
	return r.failed ? 1 : 0;
}
