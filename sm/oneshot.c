/* The one-shot run and the dumps, watching the daemon (see oneshot.h). */
#include "sm/oneshot.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "routing/verify/verify.h"
#include "sm/base/log.h"
#include "sm/ctl/metrics.h"
#include "sm/mcast/mcast_sm.h"
#include "sm/render/dump.h"

static void write_dumps(const struct oneshot *os, const struct sm *sm)
{
	const struct fabric *f = &sm->sub.model->f;
	if (os->dump_topology) {
		FILE *fp = fopen(os->dump_topology, "w");
		if (!fp || dump_topology(f, fp) < 0)
			log_err("cannot write %s: %s", os->dump_topology, strerror(errno));
		if (fp)
			fclose(fp);
	}
	if (os->dump_lfts) {
		FILE *fp = fopen(os->dump_lfts, "w");
		if (!fp || dump_lfts(f, &sm->sub.lft, fp) < 0)
			log_err("cannot write %s: %s", os->dump_lfts, strerror(errno));
		if (fp)
			fclose(fp);
	}
}

/* The multicast trees, for verify_tables(): their errors, -1 (ENOMEM). */
static int verify_mcast(void *arg, FILE *fp)
{
	struct sm *sm = arg;
	return sm->mc.n ? mcast_sm_verify(sm, fp) : 0;
}

static int up(struct sm *sm, const struct program_stats *ps, void *arg)
{
	struct oneshot *os = arg;
	write_dumps(os, sm);
	if (!os->once)
		return 0;
	if (ps->failed_ports && os->resweeps < ONESHOT_RESWEEPS) {
		os->resweeps++;
		sweeper_request_heavy(sm, "writes failed");
		return 1;
	}
	int bad = ps->failed_ports ? 1 : 0;
	if (sm->sweep.last.lids_rep.exhausted) {	/* a port at LID 0 is not configured */
		log_err("%u ports were left without a LID", sm->sweep.last.lids_rep.exhausted);
		bad = 1;
	}
	if (os->verify) {
		int rc = verify_tables(stdout, &sm->sub.model->f, &sm->sub.lft,
				       &sm->parts, sm->sub.engine, "the SM's LFTs",
				       sm->cfg.max_op_vls, verify_mcast, sm);
		if (rc < 0)
			log_err("verify: out of memory");
		if (rc)
			bad = 1;
	}
	metrics_sweep_done(sm->metrics);
	sm_stop(sm, bad);
	return 1;
}

static int standby(struct sm *sm, const struct sm_ev *m, void *arg)
{
	const struct oneshot *os = arg;
	if (!os->once)
		return 0;
	printf("standby: master_guid=0x%016llx master_priority=%d master_lid=%u priority=%d\n",
	       (unsigned long long)m->guid, m->priority, m->lid, sm->cfg.sm_priority);
	fflush(stdout);
	sm_stop(sm, 1);
	return 1;
}

static int failed(struct sm *sm, void *arg)
{
	const struct oneshot *os = arg;
	if (!os->once)
		return 0;
	sm_stop(sm, 1);
	return 1;
}

void oneshot_watch(struct sm *sm, struct oneshot *os)
{
	os->w = (struct sm_watcher){
		.up = up, .standby = standby, .failed = failed, .arg = os,
		.one_shot = os->once,
	};
	sm->watch = &os->w;
}
