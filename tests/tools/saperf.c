/*
 * saperf: single-record PathRecord Gets from one host to its SA, K in
 * flight, for T seconds or N queries; prints one line of JSON (queries,
 * ok, errors, timeouts, qps, latencies).  make bench's SA row, against
 * ibsmd and OpenSM alike (saquery sends one query per process).
 *
 *     saperf [-C CA] [-P PORT] [-k K] [-t SECONDS | -n N] [-s SLID]
 *            [-d DLIDS] [-T TIMEOUT_MS] [-r RETRIES] [-N RECORDS]
 *
 * -N: GetTables of every NodeRecord instead, each answered with RECORDS
 * records (0: any number) to count as answered.
 * DLIDS: a list like 1,4,7-20 (default: the SM's LID); SLID: default the
 * port's own LID.  Runs on a umad port (hardware, or ibsim under
 * libumad2sim.so); the same loop (tests/tools/saload.h) runs in-process
 * on an emulated host.  Exit 0 when every query was answered with its
 * record, 1 otherwise, 2 on bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/umad.h"
#include "saload.h"

#define MAX_DLIDS 49152

static void usage(void)
{
	fprintf(stderr, "usage: saperf [-C CA] [-P PORT] [-k INFLIGHT] [-t SECONDS | -n QUERIES]\n"
			"              [-s SLID] [-d DLID[,DLID|FIRST-LAST]...] [-T TIMEOUT_MS] [-r RETRIES]\n"
			"              [-N RECORDS]\n");
	exit(2);
}

static size_t parse_lids(const char *s, uint32_t *out, size_t cap)
{
	size_t n = 0;
	while (*s) {
		char *end;
		unsigned long a = strtoul(s, &end, 0), b = a;
		if (end == s)
			return 0;
		if (*end == '-') {
			s = end + 1;
			b = strtoul(s, &end, 0);
			if (end == s)
				return 0;
		}
		if (!a || b < a || b >= 0xc000)
			return 0;
		for (unsigned long l = a; l <= b && n < cap; l++)
			out[n++] = (uint32_t)l;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return 0;
	}
	return n;
}

int main(int argc, char **argv)
{
	struct umad_port_sel sel = { .issm = UMAD_ISSM_NEVER };
	struct saclient_params p = { .timeout_ms = 1000, .retries = 3,
				     .max_inflight = 1024 };
	struct saload l;
	static uint32_t dlids[MAX_DLIDS];
	size_t n_dlids = 0;
	int c;

	memset(&l, 0, sizeof(l));
	l.inflight = 16;
	while ((c = getopt(argc, argv, "C:P:k:t:n:s:d:T:r:N:")) != -1) {
		switch (c) {
		case 'C': sel.ca = optarg; break;
		case 'P': sel.port = atoi(optarg); break;
		case 'k': l.inflight = (unsigned)atoi(optarg); break;
		case 't': l.seconds = atof(optarg); break;
		case 'n': l.max_queries = strtoull(optarg, NULL, 0); break;
		case 's': l.slid = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'd':
			if (!(n_dlids = parse_lids(optarg, dlids, MAX_DLIDS)))
				usage();
			break;
		case 'T': p.timeout_ms = (unsigned)atoi(optarg); break;
		case 'r': p.retries = (unsigned)atoi(optarg); break;
		case 'N':
			l.table_attr = SA_ATTR_NODE_REC;
			l.want_recs = strtoul(optarg, NULL, 0);
			break;
		default: usage();
		}
	}
	if (optind != argc || !l.inflight || l.inflight > p.max_inflight ||
	    (!l.max_queries && !(l.seconds > 0)))
		usage();

	struct event_base *base;
	struct mad_transport t;
	struct saclient *sc = saload_open_umad("saperf", &sel, &p, &base, &t);
	if (!sc)
		return 1;
	if (!n_dlids) {
		dlids[0] = t.sm_lid;
		n_dlids = 1;
	}
	l.c = sc;
	l.base = base;
	l.dlids = dlids;
	l.n_dlids = n_dlids;
	if (!l.slid)
		l.slid = t.lid;
	if (saload_run(&l) < 0) {
		fprintf(stderr, "saperf: cannot run the load\n");
		return 1;
	}
	saload_json(&l, stdout);
	fflush(stdout);
	int ok = l.ok == l.sent && l.sent > 0;
	saclient_free(sc);
	t.close(t.ctx);
	event_base_free(base);
	return ok ? 0 : 1;
}
