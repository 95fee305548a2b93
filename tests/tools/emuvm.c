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
 *     emuvm [-x] [-c CAP] [-s N] TOPO
 *
 * CAP: the SecondaryLFTCap given with -x (default 0x30000, every vLID).
 * -s N: then N shared-LID VMs created as hypervisors create them, one
 * SA GUIDInfoRecord Set of one new vGUID at a time from the PFs in turn
 * (sm/vm/vmshared.h); the JSON adds the time of each thousand
 * (shared_ms_per_1000), the longest Set from request to answer
 * (set_max_ms: in-process, that is its time on the loop) and the VMs
 * the registry holds.
 * -m N: then one VM created on the first hypervisor and moved N times
 * between it and the last (another leaf), each move twice: as one
 * `vm migrate` (planned and written at once) and as `--prepare` then
 * `--commit`; the JSON adds the mean time of each (one_step_ms,
 * prepare_ms, commit_ms: from the command to its answer, in-process) and
 * the commits' means of physical switches written, LFT Sets (LFT,
 * vSwitch and secondary blocks) and other SMPs (PortInfo, SwitchInfo).
 * Exit 0 when the SM came up master in the mode asked, every VF port
 * holds a LID (extended) or every VF port without one is counted as
 * shared-LID capable (legacy), and every Set was answered with status
 * 0; 1 otherwise, 2 on bad usage.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "mad/emu/emu.h"
#include "mad/sa.h"
#include "reconfig/migrate.h"
#include "routing/engine.h"
#include "sm/daemon.h"
#include "sm/model/lids.h"
#include "sm/base/log.h"
#include "sm/base/topo.h"
#include "sm/vm/vmops.h"
#include "emusm.h"

static double now_ms(void)
{
	return saload_now() * 1000.0;
}

static void usage(void)
{
	fprintf(stderr, "usage: emuvm [-x] [-c CAP] [-s N] [-m N] TOPO\n");
	exit(2);
}

#define SETS_MAX_THOUSANDS 64

/* -s: the hypervisors' SA clients and what their Sets took. */
struct sets {
	struct event_base *base;
	int done, status;
	uint32_t n_pf;
	struct mad_transport *t;
	struct saclient **c;
	double per_k[SETS_MAX_THOUSANDS], max_ms;
	unsigned failed;
};

static void set_done(void *arg, int status, const uint8_t *recs, size_t n,
		     size_t stride, const uint8_t *hdr)
{
	struct sets *s = arg;
	(void)recs;
	(void)n;
	(void)stride;
	(void)hdr;
	s->done = 1;
	s->status = status;
}

static int set_answered(void *arg)
{
	return ((struct sets *)arg)->done;
}

/*
 * An SA client on every hypervisor's PF; n Sets of one new vGUID each,
 * from the PFs in turn, one at a time.  0, or -1 (said).
 */
static int shared_sets(struct emusm *x, struct sets *s, unsigned n)
{
	const struct fabric *f = &x->sm->sub.model->f;
	char err[256];
	s->base = x->base;
	s->t = calloc(f->n_nodes, sizeof(*s->t));
	s->c = calloc(f->n_nodes, sizeof(*s->c));
	if (!s->t || !s->c)
		return -1;
	struct saclient_params p = { .timeout_ms = 10000, .retries = 0, .max_inflight = 4 };
	for (uint32_t ni = 0; ni < f->n_nodes; ni++) {
		uint32_t pf = fabric_is_vswitch(f, ni) ? fabric_vswitch_pf(f, ni) : FAB_NONE;
		if (pf == FAB_NONE || !f->ports[pf].lid)
			continue;
		uint64_t g = f->ports[pf].guid;
		struct saclient *c = saclient_new(x->base, &s->t[s->n_pf], &p);
		if (!c || emu_attach(x->e, x->base, g, &s->t[s->n_pf], saclient_recv, c,
				     err, sizeof(err)) < 0 || emu_set_issm(x->e, g, 0) < 0) {
			fprintf(stderr, "emuvm: cannot attach to PF 0x%016llx: %s\n",
				(unsigned long long)g, err);
			return -1;
		}
		s->c[s->n_pf++] = c;
	}
	if (!s->n_pf || !emusm_run_idle(x, 60000)) {
		fprintf(stderr, "emuvm: no hypervisor PF, or the SM did not settle\n");
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		uint64_t vg = 0x0a00000000000000ull + i + 1;
		s->done = 0;
		double a = now_ms();
		if (saclient_alias_guids(s->c[i % s->n_pf], 0, &vg, 1, set_done, s) < 0 ||
		    !saload_run_until(x->base, set_answered, s, 20000)) {
			fprintf(stderr, "emuvm: Set %u not answered\n", i);
			return -1;
		}
		double ms = now_ms() - a;
		s->failed += s->status != 0;
		if (i / 1000 < SETS_MAX_THOUSANDS)
			s->per_k[i / 1000] += ms;
		if (ms > s->max_ms)
			s->max_ms = ms;
	}
	return 0;
}

static void sets_free(struct sets *s)
{
	for (uint32_t i = 0; i < s->n_pf; i++) {
		saclient_free(s->c[i]);
		s->t[i].close(s->t[i].ctx);
	}
	free(s->c);
	free(s->t);
}

/* -m: one VM command to its answer; its time in ms, -1 when refused or failed. */
struct mig_wait {
	int done, ok;
	struct vmexec_stats st;	/* the command's writes */
};

static void mig_done(struct sm *sm, void *arg, const struct vmop_result *r)
{
	struct mig_wait *w = arg;
	(void)sm;
	w->done = 1;
	w->ok = r->ok;
	w->st = r->st;
}

static int mig_answered(void *arg)
{
	return ((struct mig_wait *)arg)->done;
}

static double vm_step(struct emusm *x, int kind, const char *hyp, int prepare,
		      int commit, struct vmexec_stats *st)
{
	struct vmop_req q;
	struct vmop_result r;
	struct mig_wait w = { 0 };
	memset(&q, 0, sizeof(q));
	q.kind = kind;
	q.vf = -1;
	q.prepare = prepare;
	q.commit = commit;
	snprintf(q.name, sizeof(q.name), "m");
	snprintf(q.hyp, sizeof(q.hyp), "%s", hyp);
	double a = now_ms();
	int rc = vmop_start(x->sm, &q, mig_done, &w, &r);
	if (rc < 0)
		return -1;
	if (rc == 0 && !saload_run_until(x->base, mig_answered, &w, 60000))
		return -1;
	double ms = now_ms() - a;
	if (!(rc == 1 ? r.ok : w.ok) || !emusm_run_idle(x, 600000))
		return -1;
	if (st)
		*st = rc == 1 ? r.st : w.st;
	return ms;
}

/* -m: the mean times of n moves each way; 0, or -1 (said). */
static int migrations(struct emusm *x, unsigned n, double *one, double *prep,
		      double *commit, double *written, double *sets, double *smps)
{
	const struct fabric *f = &x->sm->sub.model->f;
	char first[FAB_DESC_LEN + 1] = "", last[FAB_DESC_LEN + 1] = "";
	for (uint32_t ni = 0; ni < f->n_nodes; ni++)
		if (fabric_is_vswitch(f, ni)) {
			if (!first[0])
				snprintf(first, sizeof(first), "%s", f->nodes[ni].desc);
			snprintf(last, sizeof(last), "%s", f->nodes[ni].desc);
		}
	*one = *prep = *commit = 0;
	if (!first[0] || !strcmp(first, last) ||
	    vm_step(x, VMOP_CREATE, first, 0, 0, NULL) < 0) {
		fprintf(stderr, "emuvm: no two hypervisors, or the VM not created\n");
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		const char *to = i % 2 ? first : last, *back = i % 2 ? last : first;
		struct vmexec_stats st;
		double a = vm_step(x, VMOP_MIGRATE, to, 0, 0, NULL);
		double b = vm_step(x, VMOP_MIGRATE, back, 1, 0, NULL);
		double c = vm_step(x, VMOP_MIGRATE, "", 0, 1, &st);
		if (a < 0 || b < 0 || c < 0) {
			fprintf(stderr, "emuvm: move %u failed\n", i);
			return -1;
		}
		*one += a / n;
		*prep += b / n;
		*commit += c / n;
		*written += (double)st.switches_written / n;
		*sets += (double)(st.lft_blocks + st.vswitch_blocks + st.xlft_blocks) / n;
		*smps += (double)st.other_smps / n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int extended = 0;
	unsigned long cap = 0x30000, n_sets = 0, n_moves = 0;
	int c;

	while ((c = getopt(argc, argv, "xc:s:m:")) != -1) {
		switch (c) {
		case 'x': extended = 1; break;
		case 'c': cap = strtoul(optarg, NULL, 0); break;
		case 's': n_sets = strtoul(optarg, NULL, 0); break;
		case 'm': n_moves = strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (optind != argc - 1 || !cap || cap > 0x30000 ||
	    n_sets > SETS_MAX_THOUSANDS * 1000)
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

	struct sets sets;
	memset(&sets, 0, sizeof(sets));
	if (n_sets && (shared_sets(&x, &sets, (unsigned)n_sets) < 0 || sets.failed))
		ok = 0;

	double one_ms = 0, prep_ms = 0, commit_ms = 0, written = 0, lft_sets = 0, smps = 0;
	if (n_moves && migrations(&x, (unsigned)n_moves, &one_ms, &prep_ms, &commit_ms,
				  &written, &lft_sets, &smps) < 0)
		ok = 0;
	if (emusm_stdout(&x) < 0)
		return 1;
	if (n_moves)
		printf("{\"moves\":%lu,\"one_step_ms\":%.3f,\"prepare_ms\":%.3f,"
		       "\"commit_ms\":%.3f,\"switches_written\":%.1f,\"lft_sets\":%.1f,"
		       "\"other_smps\":%.1f}\n", n_moves, one_ms, prep_ms, commit_ms,
		       written, lft_sets, smps);
	if (n_sets) {
		printf("{\"shared_creates\":%lu,\"hypervisors\":%u,\"failed\":%u,\"vms\":%u,"
		       "\"set_max_ms\":%.1f,\"shared_ms_per_1000\":[", n_sets, sets.n_pf,
		       sets.failed, sm->vms.n, sets.max_ms);
		for (unsigned long k = 0; k < (n_sets + 999) / 1000; k++)
			printf("%s%.1f", k ? "," : "", sets.per_k[k]);
		printf("]}\n");
	}
	sets_free(&sets);
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
