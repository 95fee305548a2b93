/*
 * madflood: what ibsim and umad2sim can carry on this machine, with no SM
 * behind the numbers.  One thread keeps WINDOW directed-route NodeInfo Gets
 * outstanding to the node HOPS hops out (port 1 at each hop) until COUNT
 * answers came back, and prints the rate.  make bench runs it next to the
 * bring-ups, so that their times can be read against the ceiling.
 *
 *     madflood COUNT WINDOW [HOPS]      (under libumad2sim.so, like ibsmd)
 */
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/smp.h"

#define MAX_HOPS 63	/* a directed route's limit */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int send_get(int fd, int agent, void *umad, int hops, uint32_t tid)
{
	uint8_t path[MAX_HOPS + 1] = { 0 };
	for (int h = 1; h <= hops; h++)
		path[h] = 1;
	uint8_t *mad = umad_get_mad(umad);
	smp_init_dr(mad, IB_MAD_METHOD_GET, IB_ATTR_NODE_INFO, 0, path, hops);
	mad_set_field64(mad, 0, IB_MAD_TRID_F, tid);
	umad_set_addr(umad, 0xffff, 0, 0, 0);
	return umad_send(fd, agent, umad, MAD_SIZE, 0, 0);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: madflood COUNT WINDOW [HOPS]\n");
		return 2;
	}
	long count = atol(argv[1]), window = atol(argv[2]);
	int hops = argc > 3 ? atoi(argv[3]) : 1;
	if (count < 1 || window < 1 || hops < 1 || hops > MAX_HOPS) {
		fprintf(stderr, "madflood: COUNT and WINDOW >= 1, HOPS 1..%d\n", MAX_HOPS);
		return 2;
	}
	char names[8][UMAD_CA_NAME_LEN];
	if (umad_init() < 0 || umad_get_cas_names(names, 8) < 1) {
		fprintf(stderr, "madflood: no InfiniBand device\n");
		return 1;
	}
	int fd = umad_open_port(names[0], 0);
	int agent = fd < 0 ? -1 : umad_register(fd, 0x81, 1, 0, NULL);
	void *out = calloc(1, umad_size() + MAD_SIZE);
	void *in = calloc(1, umad_size() + MAD_SIZE);
	if (agent < 0 || !out || !in) {
		fprintf(stderr, "madflood: cannot open %s\n", names[0]);
		return 1;
	}
	long sent = 0, answered = 0, errors = 0;
	double t0 = now_s();
	while (answered < count) {
		while (sent < count && sent - answered < window) {
			if (send_get(fd, agent, out, hops, (uint32_t)sent + 1) < 0) {
				fprintf(stderr, "madflood: umad_send failed\n");
				return 1;
			}
			sent++;
		}
		int len = MAD_SIZE;
		if (umad_recv(fd, in, &len, 1000) < 0) {
			fprintf(stderr, "madflood: no answer within 1 s (%ld of %ld)\n",
				answered, count);
			return 1;
		}
		if (umad_status(in))
			errors++;
		answered++;
	}
	double t = now_s() - t0;
	printf("madflood: %ld NodeInfo Gets, %ld in flight, %d hops: %.3f s, %.0f MADs/s, %ld errors\n",
	       count, window, hops, t, (double)count / t, errors);
	return errors ? 1 : 0;
}
