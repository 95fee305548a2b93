/*
 * emusa: the SA of ibsmd on an emulated fabric, timed from a host.  Builds
 * the emulator (mad/emu/emu.h) from a topology file, brings ibsmd's code up
 * on it in-process (the SM on the first CA), attaches an SA client
 * (traps/host/saclient.c) to another host and times a GetTable of every
 * PathRecord from that host's LID until the whole RMPP answer is in, then
 * optionally single-record PathRecord Gets with K in flight for T seconds
 * (tests/tools/saload.h, the loop saperf runs under ibsim).  Prints one
 * line of JSON.  make bench's SA row at sizes ibsim cannot carry.
 *
 *     emusa [-R ENGINES] [-H HOST] [-k K -t SECONDS] [-n ROUNDS] TOPO
 *
 * HOST: the index of the CA in the file (default: the middle one); ROUNDS:
 * GetTables timed (default 3, the median and the least are printed).
 * Exit 0 when every answer was complete and right in count, 1 otherwise,
 * 2 on bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mad/emu/emu.h"
#include "mad/rmpp.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/sa/sa_server.h"
#include "sm/base/topo.h"
#include "emusm.h"

#define MAX_ROUNDS 15

struct ctx {
	struct event_base *base;
	struct sm *sm;
	int done, status;
	size_t n, stride;
};

static double now_ms(void)
{
	return saload_now() * 1000.0;
}


static int answered(void *arg)
{
	return ((struct ctx *)arg)->done;
}

static void on_table(void *arg, int status, const uint8_t *recs, size_t n,
		     size_t stride, const uint8_t *hdr)
{
	struct ctx *c = arg;
	(void)recs;
	(void)hdr;
	c->done = 1;
	c->status = status;
	c->n = n;
	c->stride = stride;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void usage(void)
{
	fprintf(stderr, "usage: emusa [-R ENGINES] [-H HOST] [-k INFLIGHT -t SECONDS] "
			"[-n ROUNDS] TOPO\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *engines = NULL;
	long host = -1;
	unsigned k = 0, rounds = 3;
	double secs = 0;
	char err[256] = "";
	int c;

	while ((c = getopt(argc, argv, "R:H:k:t:n:")) != -1) {
		switch (c) {
		case 'R': engines = optarg; break;
		case 'H': host = atol(optarg); break;
		case 'k': k = (unsigned)atoi(optarg); break;
		case 't': secs = atof(optarg); break;
		case 'n': rounds = (unsigned)atoi(optarg); break;
		default: usage();
		}
	}
	if (optind != argc - 1 || (k && !(secs > 0)) || !rounds || rounds > MAX_ROUNDS)
		usage();

	struct emusm x;
	int rc = emusm_open(&x, "emusa", argv[optind]);
	if (rc)
		return rc;
	struct fabric *topo = &x.topo;
	struct emu *e = x.e;
	struct event_base *base = x.base;
	struct sm *sm = x.sm;
	uint32_t n_sw = x.n_sw, n_ca = x.n_ca, ca_idx = 0, ca_node = FAB_NONE;
	if (host < 0)
		host = n_ca / 2;
	for (uint32_t i = 0; i < topo->n_nodes; i++)
		if (topo->nodes[i].type == FAB_CA && ca_idx++ == (uint32_t)host)
			ca_node = i;
	if (ca_node == FAB_NONE || host == 0) {
		fprintf(stderr, "emusa: no CA %ld besides the SM's (%u CAs)\n", host, n_ca);
		return 2;
	}
	uint64_t host_guid = topo->ports[fabric_port(topo, ca_node, 1)].guid;
	if (engines && config_set_engines(&sm->cfg, engines, err, sizeof(err)) < 0) {
		fprintf(stderr, "emusa: %s\n", err);
		return 2;
	}
	double t0 = now_ms();
	if (emusm_start(&x) < 0)
		return 1;
	if (!emusm_run_idle(&x, 600000)) {
		fprintf(stderr, "emusa: the SM did not come up\n");
		return 1;
	}
	double up_ms = now_ms() - t0;

	/* the host: an SA client on its port, IsSM cleared (that is a trap 144) */
	struct saclient_params p = { .timeout_ms = 10000, .retries = 0, .max_inflight = 1024 };
	struct mad_transport t;
	memset(&t, 0, sizeof(t));
	struct saclient *sc = saclient_new(base, &t, &p);
	if (!sc || emu_attach(e, base, host_guid, &t, saclient_recv, sc, err, sizeof(err)) < 0 ||
	    emu_set_issm(e, host_guid, 0) < 0) {
		fprintf(stderr, "emusa: cannot attach a host: %s\n", err);
		return 1;
	}
	struct ctx wait = { 0 };
	saload_run_until(base, answered, &wait, 200);
	if (!emusm_run_idle(&x, 600000)) {
		fprintf(stderr, "emusa: the SM did not settle\n");
		return 1;
	}
	uint32_t want = 0;
	for (uint32_t i = 0; i < topo->n_nodes; i++)
		want += topo->nodes[i].type == FAB_SWITCH ? 1 : topo->nodes[i].nports;

	double ms[MAX_ROUNDS];
	struct ctx q = { .base = base, .sm = sm };
	uint8_t rec[SA_SIZE_PATH_REC];
	int ok = 1;
	for (unsigned r = 0; r < rounds; r++) {
		memset(rec, 0, sizeof(rec));
		sa_put16(rec + SALOAD_PR_SLID_OFF, (uint16_t)t.lid);
		q.done = 0;
		double a = now_ms();
		if (saclient_query(sc, SA_METHOD_GET_TABLE, SA_ATTR_PATH_REC, 0, SALOAD_PR_SLID,
				   rec, sizeof(rec), on_table, &q) < 0 ||
		    !saload_run_until(base, answered, &q, 120000)) {
			fprintf(stderr, "emusa: no answer to the GetTable\n");
			return 1;
		}
		ms[r] = now_ms() - a;
		if (q.status || q.n != want || q.stride != SA_SIZE_PATH_REC) {
			fprintf(stderr, "emusa: GetTable status %d, %zu records of %zu bytes (want %u)\n",
				q.status, q.n, q.stride, want);
			ok = 0;
		}
	}
	double sorted[MAX_ROUNDS];
	memcpy(sorted, ms, sizeof(double) * rounds);
	qsort(sorted, rounds, sizeof(double), cmp_double);
	size_t bytes = q.n * q.stride;
	size_t segs = (bytes + SA_DATA_SIZE - 1) / SA_DATA_SIZE;

	char load[512] = "";
	if (k) {
		/* PathRecord Gets to every end port's LID in turn */
		const struct sa_view *v = sa_get_view(sm);
		uint32_t *dl = malloc(sizeof(uint32_t) * (v->f->max_lid + 1));
		size_t nd = 0;
		for (uint32_t l = 1; dl && l <= v->f->max_lid; l++)
			if (v->f->lid_port[l] != FAB_NONE)
				dl[nd++] = l;
		struct saload l = { .c = sc, .base = base, .inflight = k, .seconds = secs,
				    .slid = t.lid, .dlids = dl, .n_dlids = nd };
		if (!dl || !nd || saload_run(&l) < 0) {
			fprintf(stderr, "emusa: cannot run the PathRecord load\n");
			return 1;
		}
		double qps = l.elapsed > 0 ? (double)l.ok / l.elapsed : 0;
		snprintf(load, sizeof(load), ",\"get_inflight\":%u,\"get_queries\":%llu,"
			 "\"get_ok\":%llu,\"get_qps\":%.1f,\"get_latency_ms_avg\":%.3f",
			 k, (unsigned long long)l.sent, (unsigned long long)l.ok, qps,
			 l.ok ? l.lat_sum_ms / (double)l.ok : 0);
		ok = ok && l.ok == l.sent && l.sent > 0;
		free(dl);
	}

	if (emusm_stdout(&x) < 0)
		return 1;
	printf("{\"hosts\":%u,\"switches\":%u,\"bringup_ms\":%.0f,\"records\":%zu,"
	       "\"bytes\":%zu,\"segments\":%zu,\"rounds\":%u,\"gettable_ms_median\":%.1f,"
	       "\"gettable_ms_min\":%.1f%s}\n",
	       n_ca, n_sw, up_ms, q.n, bytes, segs, rounds, sorted[rounds / 2], sorted[0], load);
	fflush(stdout);

	saclient_free(sc);
	t.close(t.ctx);
	if (emusm_close(&x) < 0)
		ok = 0;
	return ok ? 0 : 1;
}
