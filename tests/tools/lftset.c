/*
 * lftset: a host that corrupts one entry of a switch's LFT by hand, as a
 * faulty device or a stray tool would (ibsim has no command for it).
 *
 *     lftset SWITCH_LID LID PORT
 *         reads the LinearForwardingTable block holding LID from the
 *         switch (LID-routed SMP Get), sets LID's entry to PORT, writes the
 *         block back (SMP Set) and reads it again; prints
 *         "lid=L was=P now=Q" and exits 0 when the switch holds PORT.
 *     lftset -M SWITCH_LID MLID PORT on|off
 *         the same for one bit of the MulticastForwardingTable: PORT's
 *         bit of MLID's mask (block (MLID - 0xC000) / 32, position
 *         PORT / 16 in the modifier's top 4 bits); prints
 *         "mlid=M port=P was=0|1 now=0|1" and exits 0 when the switch
 *         holds the bit asked for (tests/sim/t_mcast_opensm.sh breaks a
 *         multicast tree with it).
 *
 * Runs under libumad2sim.so (tests/sim: on_host H-N lftset ...).
 */
#include <infiniband/mad.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Sets PORT's bit of MLID's mask to on at the switch; 0 when it holds it. */
static int mft_bit(struct ibmad_port *p, ib_portid_t *id, int mlid, int port, int on)
{
	uint8_t block[IB_SMP_DATA_SIZE] = { 0 }, again[IB_SMP_DATA_SIZE] = { 0 };
	unsigned mod = (unsigned)(port / 16) << 28 | (unsigned)(mlid - 0xc000) / 32;
	unsigned at = (unsigned)(mlid % 32) * 2, bit = 1u << (port % 16);
	if (!smp_query_via(block, id, IB_ATTR_MULTICASTFORWTBL, mod, 0, p)) {
		fprintf(stderr, "lftset: MFT 0x%x of LID %d: no answer\n", mod, id->lid);
		return 1;
	}
	unsigned mask = (unsigned)block[at] << 8 | block[at + 1];
	int was = !!(mask & bit);
	mask = on ? mask | bit : mask & ~bit;
	block[at] = (uint8_t)(mask >> 8);
	block[at + 1] = (uint8_t)mask;
	if (!smp_set_via(block, id, IB_ATTR_MULTICASTFORWTBL, mod, 0, p) ||
	    !smp_query_via(again, id, IB_ATTR_MULTICASTFORWTBL, mod, 0, p)) {
		fprintf(stderr, "lftset: MFT 0x%x of LID %d: the Set failed\n", mod, id->lid);
		return 1;
	}
	int now = !!(((unsigned)again[at] << 8 | again[at + 1]) & bit);
	printf("mlid=0x%04x port=%d was=%d now=%d\n", mlid, port, was, now);
	return now == on ? 0 : 1;
}

int main(int argc, char *argv[])
{
	int mft = argc == 6 && !strcmp(argv[1], "-M");
	if (argc != 4 && !mft) {
		fputs("usage: lftset SWITCH_LID LID PORT\n"
		      "       lftset -M SWITCH_LID MLID PORT on|off\n", stderr);
		return 2;
	}
	argv += mft;
	if (mft && (num(argv[2], 0xffff) < 0xc000 ||
		    (strcmp(argv[4], "on") && strcmp(argv[4], "off")))) {
		fputs("lftset: -M wants an MLID 0xc000..0xffff and on or off\n", stderr);
		return 2;
	}
	int sw = (int)num(argv[1], 0xbfff), lid = (int)num(argv[2], mft ? 0xffff : 0xbfff);
	int port = (int)num(argv[3], 255);
	int classes[] = { IB_SMI_CLASS, IB_SMI_DIRECT_CLASS };
	struct ibmad_port *p = mad_rpc_open_port(NULL, 0, classes, 2);
	if (!p) {
		fputs("lftset: cannot open the local port\n", stderr);
		return 1;
	}
	ib_portid_t id = { 0 };
	ib_portid_set(&id, sw, 0, 0);
	if (mft) {
		int rc = mft_bit(p, &id, lid, port, !strcmp(argv[4], "on"));
		mad_rpc_close_port(p);
		return rc;
	}
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
