/*
 * pmaquery: the SM's PerfMgt codec (mad/pma.c) against a real PMA, for
 * tests/sim/t_pma.sh to hold beside perfquery under ibsim.
 *
 *     pmaquery LID PORT [clear]
 *         sends ClassPortInfo, PortCounters and PortCountersExtended Gets
 *         of PORT to the PMA at LID, built and decoded by mad/pma.c, and
 *         prints one line each: "cpi capmask=0x.... capmask2=0x... resp=N
 *         redirect_lid=N", "pc NAME=VALUE ..." (every counter, perfquery's
 *         names) and "ext NAME=VALUE ..." (the four 64-bit ones; "ext
 *         refused: REASON" without them).  With clear, first the clearing
 *         Set (pma_pc_clear), its answer printed as "clear NAME=VALUE ...".
 *         Exits 0, 1 when a request goes unanswered or an answer is
 *         refused (the reason on stderr), 2 on bad arguments.
 *
 * Runs under libumad2sim.so (tests/sim: on_host H-N pmaquery ...); one
 * request at a time, through libibumad directly.
 */
#include <infiniband/umad.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/pma.h"

#define TIMEOUT_MS 1000
#define TRIES 3

static long num(const char *s, long max)
{
	char *end;
	long v = strtol(s, &end, 0);
	if (!*s || *end || v < 0 || v > max) {
		fprintf(stderr, "pmaquery: '%s' is not a number 0..%ld\n", s, max);
		exit(2);
	}
	return v;
}

struct link {
	int port, agent;
	void *umad;
};

/* Sends the request in mad to to, its answer back in mad; 0 or -1. */
static int ask(struct link *l, uint8_t *mad, const struct mad_addr *to,
	       size_t *len)
{
	static uint32_t tid = 0x5000;
	for (int t = 0; t < TRIES; t++) {
		uint32_t my = ++tid;
		mad[12] = (uint8_t)(my >> 24);	/* the low 32 TID bits: ours */
		mad[13] = (uint8_t)(my >> 16);
		mad[14] = (uint8_t)(my >> 8);
		mad[15] = (uint8_t)my;
		memcpy(umad_get_mad(l->umad), mad, MAD_SIZE);
		umad_set_addr(l->umad, (int)to->lid, (int)to->qpn, 0, (int)to->qkey);
		if (umad_send(l->port, l->agent, l->umad, MAD_SIZE, TIMEOUT_MS, 0) < 0)
			return -1;
		for (;;) {
			int n = MAD_SIZE;
			if (umad_recv(l->port, l->umad, &n, TIMEOUT_MS) < 0 ||
			    umad_status(l->umad))
				break;	/* timed out: send again */
			const uint8_t *a = umad_get_mad(l->umad);
			if (((uint32_t)a[12] << 24 | (uint32_t)a[13] << 16 |
			     (uint32_t)a[14] << 8 | a[15]) != my)
				continue;	/* a late answer to an earlier try */
			memcpy(mad, a, (size_t)n);
			*len = (size_t)n;
			return 0;
		}
	}
	return -1;
}

static void print_counters(const char *tag, const struct pma_sample *s,
			   int from, int to)
{
	printf("%s", tag);
	for (int c = from; c < to; c++)
		printf(" %s=%llu", pma_counter_info[c].name, (unsigned long long)s->v[c]);
	printf("\n");
}

static int fail(const char *what, const char *err)
{
	fprintf(stderr, "pmaquery: %s: %s\n", what, err);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "clear"))) {
		fprintf(stderr, "usage: pmaquery LID PORT [clear]\n");
		return 2;
	}
	uint32_t lid = (uint32_t)num(argv[1], 0xbfff);
	uint8_t port = (uint8_t)num(argv[2], 254);
	struct link l;
	if (umad_init() < 0 || (l.port = umad_open_port(NULL, 0)) < 0 ||
	    (l.agent = umad_register(l.port, PMA_CLASS, PMA_CLASS_VERSION, 0, NULL)) < 0 ||
	    !(l.umad = umad_alloc(1, (size_t)umad_size() + MAD_SIZE))) {
		fprintf(stderr, "pmaquery: cannot open the umad port\n");
		return 1;
	}
	uint8_t mad[MAD_SIZE];
	struct mad_addr to;
	struct pma_cpi cpi;
	struct pma_sample s = { 0 };
	char err[160];
	size_t len;

	if (argc == 4) {
		pma_pc_clear(mad, port, PMA_PC_SELECT_ALL, lid, &to);
		if (ask(&l, mad, &to, &len))
			return fail("PortCounters Set", "no answer");
		if (pma_pc_decode(mad, len, port, &s, err, sizeof(err)))
			return fail("PortCounters Set", err);
		print_counters("clear", &s, 0, PMC_N);
	}
	pma_cpi_get(mad, lid, &to);
	if (ask(&l, mad, &to, &len))
		return fail("ClassPortInfo", "no answer");
	if (pma_cpi_decode(mad, len, &cpi, err, sizeof(err)))
		return fail("ClassPortInfo", err);
	printf("cpi capmask=0x%04x capmask2=0x%07x resp=%u redirect_lid=%u\n",
	       cpi.capmask, cpi.capmask2, cpi.resp_time, cpi.redirect_lid);

	pma_pc_get(mad, port, lid, &to);
	if (ask(&l, mad, &to, &len))
		return fail("PortCounters", "no answer");
	if (pma_pc_decode(mad, len, port, &s, err, sizeof(err)))
		return fail("PortCounters", err);
	print_counters("pc", &s, 0, PMC_N);

	pma_ext_get(mad, port, lid, &to);
	if (ask(&l, mad, &to, &len))
		return fail("PortCountersExtended", "no answer");
	if (pma_ext_decode_sample(mad, len, port, &s, err, sizeof(err)))
		printf("ext refused: %s\n", err);
	else
		print_counters("ext", &s, PMC_XMIT_DATA, PMC_N);
	umad_free(l.umad);
	umad_unregister(l.port, l.agent);
	umad_close_port(l.port);
	return 0;
}
