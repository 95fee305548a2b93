/*
 * emuvm: ibsmd's code brought up in-process on an emulated fabric of
 * hypervisors (tests/gen/fabgen.py hyper) under the prepopulated scheme
 * (every VF a LID at bring-up), vSwitches named "V-*".  In extended mode
 * (-x: every emulated device given the extension, emu_xlid_all) each VF
 * gets an 18-bit vLID; in legacy mode (the stock emulator: no device has
 * it, `auto` falls back) the 16-bit LID space may not hold every VF.
 * Prints one line of JSON: bring-up time (start to the first heavy
 * sweep's end, nothing left to do), peak RSS of the process (getrusage
 * ru_maxrss: run one mode per process), the LIDs given and the VF ports
 * left without a LID (shared-LID slots in legacy mode, lids_rep.vf_shared).  make bench's
 * vLID row (tests/bench.sh, BENCH_ONLY=vlids).
 *
 *     emuvm [-x] [-c CAP] TOPO
 *
 * CAP: the SecondaryLFTCap given with -x (default 0x30000, every vLID).
 * Exit 0 when the SM came up master in the mode asked, every VF port
 * holds a LID (extended) or every VF port without one is counted as
 * shared-LID capable (legacy); 1 otherwise, 2 on bad usage.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "mad/emu/emu.h"
#include "reconfig/migrate.h"
#include "routing/engine.h"
#include "sm/daemon.h"
#include "sm/model/lids.h"
#include "sm/base/log.h"
#include "sm/base/topo.h"
#include "emusm.h"

static double now_ms(void)
{
	return saload_now() * 1000.0;
}

static void usage(void)
{
	fprintf(stderr, "usage: emuvm [-x] [-c CAP] TOPO\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int extended = 0;
	unsigned long cap = 0x30000;
	int c;

	while ((c = getopt(argc, argv, "xc:")) != -1) {
		switch (c) {
		case 'x': extended = 1; break;
		case 'c': cap = strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (optind != argc - 1 || !cap || cap > 0x30000)
		usage();

	struct emusm x;
	int rc = emusm_open(&x, "emuvm", argv[optind]);
	if (rc)
		return rc;
	struct sm *sm = x.sm;
	uint32_t n_sw = x.n_sw, n_ca = x.n_ca;
	if (extended && emu_xlid_all(x.e, (uint32_t)cap) < 0) {
		fprintf(stderr, "emuvm: cannot make the devices capable\n");
		return 1;
	}
	log_set_level(getenv("EMUVM_LOG") ? LOG_INFO : LOG_ERROR);
	sm->cfg.lid_scheme = MIG_PREPOPULATED;
	sm->cfg.n_vswitches = 1;
	snprintf(sm->cfg.vswitches[0], sizeof(sm->cfg.vswitches[0]), "V-*");
	sm->cfg.extended_lids = TRI_AUTO;
	double t0 = now_ms();
	if (emusm_start(&x) < 0)
		return 1;
	if (!emusm_run_idle(&x, 1800000)) {
		fprintf(stderr, "emuvm: the SM did not come up\n");
		return 1;
	}
	double up_ms = now_ms() - t0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);

	/* what the model holds: LIDs, vLIDs, VF ports without a LID */
	const struct fabric *f = &sm->sub.model->f;
	uint32_t vfs = 0, vf_vlid = 0, vf_plid = 0, vf_none = 0, plids = 0;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		if (!fabric_is_endport(f, pi))
			continue;
		uint32_t lid = f->ports[pi].lid;
		plids += lid && !fabric_is_vlid(lid);
		int vf;
		if (f->nodes[f->ports[pi].node].type == FAB_SWITCH ||
		    fabric_vswitch_of(f, pi, &vf) == FAB_NONE || vf < 0)
			continue;
		vfs++;
		if (fabric_is_vlid(lid))
			vf_vlid++;
		else if (lid)
			vf_plid++;
		else
			vf_none++;
	}
	const struct lft_tables *t = &sm->sub.lft;
	uint32_t x_rows = 0, x_held = 0;
	for (uint32_t r = 0; t->xrow && r < t->n_sw; r++) {
		x_rows += t->xcount[r] != 0;
		x_held += t->xcount[r];
	}
	const struct lid_report *lr = &sm->sweep.last.lids_rep;
	int ok = sm->state == SMS_MASTER && f->xlid_mode == extended &&
		 (extended ? vf_vlid == vfs : vf_vlid == 0) &&
		 !lr->exhausted && vf_none == lr->vf_shared;
	if (!ok)
		fprintf(stderr, "emuvm: state %d, mode %s (asked %s), %u of %u VFs with a vLID, "
			"%u ports without a LID, %u VF slots shared of %u VFs without\n",
			sm->state, f->xlid_mode ? "extended" : "legacy",
			extended ? "extended" : "legacy", vf_vlid, vfs, lr->exhausted,
			lr->vf_shared, vf_none);

	if (emusm_stdout(&x) < 0)
		return 1;
	printf("{\"mode\":\"%s\",\"switches\":%u,\"cas\":%u,\"vfs\":%u,"
	       "\"bringup_ms\":%.0f,\"peak_rss_mb\":%.1f,\"plids\":%u,\"max_lid\":%u,"
	       "\"vf_vlids\":%u,\"max_vlid\":%u,\"vf_plids\":%u,\"vf_without_lid\":%u,\"vf_shared_slots\":%u,"
	       "\"xlft_rows\":%u,\"xlft_blocks_held\":%u,\"mads_sent\":%llu}\n",
	       f->xlid_mode ? "extended" : "legacy", n_sw, n_ca, vfs, up_ms,
	       ru.ru_maxrss / 1024.0, plids, f->max_lid, vf_vlid, f->max_vlid,
	       vf_plid, vf_none, lr->vf_shared, x_rows, x_held,
	       (unsigned long long)sm->sweep.last.mads_sent);
	fflush(stdout);

	if (emusm_close(&x) < 0)
		ok = 0;
	return ok ? 0 : 1;
}
