/*
 * emuorder: the cost of ordered LFT writes (sm/write/plan_lft.h) on an
 * emulated fabric.  Brings ibsmd's code up on the emulator from a
 * topology file, takes one cable down (the first switch-to-switch link of
 * the switch named by -s, its highest port) and lets the heavy sweep
 * repair the routes, then asks for a full reroute (ibsmctl reroute) and
 * times it from the request to the SM idle again: the LFT writes of a
 * route computed from scratch against the repaired tables; -E ENGINE
 * reroutes with another engine (a reload that changes routing.engine),
 * so that most entries change.  -U writes them the way the SM did before
 * the order, every block in one wave.
 *
 *     emuorder [-R ENGINES] [-E ENGINE] [-U] [-s SWITCH] TOPO
 *
 * Prints one line of JSON: the reroute's time, its LFT Sets, waves and
 * how they were ordered.  Exit 0, 1 on failure, 2 on bad usage.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/emu/emu.h"
#include "sm/daemon.h"
#include "sm/sweeper.h"
#include "sm/write/plan_lft.h"
#include "emusm.h"

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void usage(void)
{
	fprintf(stderr, "usage: emuorder [-R ENGINES] [-E ENGINE] [-U] [-s SWITCH] TOPO\n");
	exit(2);
}

/* The cable to take down: switch named desc, its highest port to a switch. */
static int pick_cable(const struct fabric *f, const char *desc, uint64_t *guid, int *port)
{
	for (uint32_t ni = 0; ni < f->n_nodes; ni++) {
		const struct fab_node *n = &f->nodes[ni];
		if (n->type != FAB_SWITCH || (desc && strcmp(n->desc, desc)))
			continue;
		for (int p = n->nports; p >= 1; p--) {
			uint32_t r = fabric_portp(f, ni, (unsigned)p)->remote;
			if (r != FAB_NONE && f->nodes[f->ports[r].node].type == FAB_SWITCH) {
				*guid = n->guid;
				*port = p;
				return 0;
			}
		}
		if (desc)
			break;
	}
	return -1;
}

int main(int argc, char **argv)
{
	const char *engines = NULL, *sw = NULL, *then = NULL;
	int unordered = 0, c;
	while ((c = getopt(argc, argv, "R:E:Us:")) != -1) {
		switch (c) {
		case 'R': engines = optarg; break;
		case 'E': then = optarg; break;
		case 'U': unordered = 1; break;
		case 's': sw = optarg; break;
		default: usage();
		}
	}
	if (optind != argc - 1)
		usage();
	struct emusm x;
	int rc = emusm_open(&x, "emuorder", argv[optind]);
	if (rc)
		return rc;
	struct sm *sm = x.sm;
	if (engines) {
		sm->cfg.n_engines = 1;
		snprintf(sm->cfg.engines[0], sizeof(sm->cfg.engines[0]), "%s", engines);
	}
	sm->cfg.lft_unordered = unordered;
	uint64_t guid;
	int port;
	if (pick_cable(&x.topo, sw, &guid, &port) < 0) {
		fprintf(stderr, "emuorder: no switch-to-switch cable at %s\n", sw ? sw : "any switch");
		return 2;
	}
	if (emusm_start(&x) < 0 || !emusm_run_idle(&x, 600000)) {
		fprintf(stderr, "emuorder: the SM did not come up\n");
		return 1;
	}
	/* the cable goes: the sweep repairs */
	uint32_t before = sm->sweep.heavy_sweeps;
	if (emu_link_down(x.e, guid, port) < 0)
		return 1;
	sweeper_request_heavy(sm, "emuorder: a cable gone");
	if (!emusm_run_idle(&x, 600000) || sm->sweep.heavy_sweeps <= before) {
		fprintf(stderr, "emuorder: no sweep after the cable went\n");
		return 1;
	}
	/* the full reroute, timed */
	char err[256];
	if (then) {
		sm->cfg.n_engines = 1;
		snprintf(sm->cfg.engines[0], sizeof(sm->cfg.engines[0]), "%s", then);
	}
	before = sm->sweep.heavy_sweeps;
	double t0 = now_ms();
	if (sweeper_request_reroute(sm, err, sizeof(err)) < 0) {
		fprintf(stderr, "emuorder: %s\n", err);
		return 1;
	}
	if (!emusm_run_idle(&x, 600000) || sm->sweep.heavy_sweeps <= before) {
		fprintf(stderr, "emuorder: the reroute did not finish\n");
		return 1;
	}
	double ms = now_ms() - t0;
	const struct program_stats *ps = &sm->sweep.last.prog;
	char how[256];
	lft_order_describe(&ps->order, how, sizeof(how));
	int ok = !ps->failed;
	emusm_stdout(&x);
	printf("{\"ordered\":%d,\"reroute_ms\":%.1f,\"plan_ms\":%.1f,\"lft_sets\":%u,\"waves\":%u,"
	       "\"lft_waves\":%u,\"entries\":%llu,\"split\":%u,\"drained\":%u,\"failed\":%u,"
	       "\"how\":\"%s\"}\n",
	       !unordered, ms, ps->order.plan_us / 1000.0, ps->lft_blocks, ps->waves, ps->order.waves,
	       (unsigned long long)ps->order.entries, ps->order.split, ps->order.drained,
	       ps->failed, unordered ? "one wave" : how);
	return emusm_close(&x) < 0 || !ok;
}
