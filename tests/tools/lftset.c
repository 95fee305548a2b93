/*
 * lftset: a host that corrupts one entry of a switch's LFT by hand, as a
 * faulty device or a stray tool would (ibsim has no command for it).
 *
 *     lftset SWITCH_LID LID PORT
 *         reads the LinearForwardingTable block holding LID from the
 *         switch (LID-routed SMP Get), sets LID's entry to PORT, writes the
 *         block back (SMP Set) and reads it again; prints
 *         "lid=L was=P now=Q" and exits 0 when the switch holds PORT.
 *
 * Runs under libumad2sim.so (tests/sim: on_host H-N lftset ...).
 */
#include <infiniband/mad.h>
#include <stdio.h>
#include <stdlib.h>

static long num(const char *s, long max)
{
	char *end;
	long v = strtol(s, &end, 0);
	if (!*s || *end || v < 0 || v > max) {
		fprintf(stderr, "lftset: '%s' is not a number 0..%ld\n", s, max);
		exit(2);
	}
	return v;
}

int main(int argc, char *argv[])
{
	if (argc != 4) {
		fputs("usage: lftset SWITCH_LID LID PORT\n", stderr);
		return 2;
	}
	int sw = (int)num(argv[1], 0xbfff), lid = (int)num(argv[2], 0xbfff);
	int port = (int)num(argv[3], 255);
	int classes[] = { IB_SMI_CLASS, IB_SMI_DIRECT_CLASS };
	struct ibmad_port *p = mad_rpc_open_port(NULL, 0, classes, 2);
	if (!p) {
		fputs("lftset: cannot open the local port\n", stderr);
		return 1;
	}
	ib_portid_t id = { 0 };
	ib_portid_set(&id, sw, 0, 0);
	uint8_t block[IB_SMP_DATA_SIZE] = { 0 }, again[IB_SMP_DATA_SIZE] = { 0 };
	unsigned mod = (unsigned)lid / 64;
	if (!smp_query_via(block, &id, IB_ATTR_LINEARFORWTBL, mod, 0, p)) {
		fprintf(stderr, "lftset: LFT block %u of LID %d: no answer\n", mod, sw);
		return 1;
	}
	int was = block[lid % 64];
	block[lid % 64] = (uint8_t)port;
	if (!smp_set_via(block, &id, IB_ATTR_LINEARFORWTBL, mod, 0, p) ||
	    !smp_query_via(again, &id, IB_ATTR_LINEARFORWTBL, mod, 0, p)) {
		fprintf(stderr, "lftset: LFT block %u of LID %d: the Set failed\n", mod, sw);
		return 1;
	}
	printf("lid=%d was=%d now=%d\n", lid, was, again[lid % 64]);
	mad_rpc_close_port(p);
	return again[lid % 64] == port ? 0 : 1;
}
