/*
 * emumc: a multicast join storm on an emulated fabric.  Builds
 * the emulator (mad/emu/emu.h) from a topology file, brings ibsmd's code up
 * on it in-process (the SM on the first CA, its IPoIB broadcast group
 * made at start), attaches an SA client (traps/host/saclient.c) to every other
 * host's port, then every host sends at once, from its own port, the
 * MCMemberRecord Sets (FullMember) of the broadcast group and of G more
 * groups (MGIDs ff12:601b:ffff::N, created by whichever join comes
 * first), W Sets in flight per host.  Meanwhile one host keeps K
 * PathRecord Gets in flight (the SA keeps answering).  Timed from the
 * first Set: the last join answered, and the MFTs complete (no MFT run
 * due or going, no sweep); then every storm group's tree is
 * read back from the emulated switches (emu_mft_entry) and judged by
 * routing/verify/verify_mcast.h against the fabric file, not the SM's view.
 *
 *     emumc [-R ENGINES] [-g GROUPS] [-w WINDOW] [-k INFLIGHT]
 *           [-P PREGROUPS] [-A] TOPO
 *
 * -P N: before the storm, N groups (ff12:601b:ffff:eeee::N) joined by host i
 * of N's residue (hosts i % N == N's index): groups the storm does not
 * touch, whose trees the runs keep (-A: every run recomputes every tree,
 * the before of the incremental trees).  Prints one line of JSON.  Exit
 * 0 when every join succeeded and every tree is right, 1 otherwise, 2 on
 * bad usage.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mad/emu/emu.h"
#include "routing/mctree.h"
#include "routing/verify/verify_mcast.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/mcast/mcast_sm.h"
#include "sm/sa/sa_server.h"
#include "sm/base/topo.h"
#include "emusm.h"

/* MCMemberRecord (IBA 15.2.5.17): offsets and ComponentMask bits used */
#define MCR_MGID	0
#define MCR_PORT_GID	16
#define MCR_SCOPE_JOIN	48
#define MCR_SIZE	52
#define CM_JOIN		(1ULL << 0 | 1ULL << 1 | 1ULL << 16)	/* MGID, PortGID, JoinState */
#define CM_CREATE	(1ULL << 2 | 1ULL << 6 | 1ULL << 7 | 1ULL << 12 | 1ULL << 13)
#define MCR_QKEY	32
#define MCR_PKEY	40

struct storm;

struct host {
	struct mad_transport t;
	struct saclient *sc;
	struct storm *s;
	uint32_t idx;		/* 0 .. n_hosts - 1 */
	uint32_t port;		/* its port index in the topology */
	uint32_t next;		/* the next group of its list to join */
};

struct storm {
	struct host *h;
	uint32_t n_hosts, n_groups;	/* Sets per host */
	uint32_t pre;		/* the -P phase: host i joins pre-group i % pre */
	uint32_t sent, answered, failed;
	double t0, last_ms;
};

/* Storm group gi (0: the default partition's broadcast group). */
static void storm_mgid(uint32_t gi, uint8_t mgid[16])
{
	static const uint8_t base[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff };
	if (!gi) {
		mc_ipoib_mgid(0xffff, mgid);
		return;
	}
	memcpy(mgid, base, 16);
	sa_put32(mgid + 12, gi);
}

/* Pre-group k of -P. */
static void pre_mgid(uint32_t k, uint8_t mgid[16])
{
	static const uint8_t base[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0xee, 0xee };
	memcpy(mgid, base, 16);
	sa_put32(mgid + 12, k);
}

static double now_ms(void)
{
	return saload_now() * 1000.0;
}


static int never(void *arg)
{
	(void)arg;
	return 0;
}

struct done_ctx {
	struct sm *sm;
	struct emu *e;
	struct storm *s;
};

static int joins_answered(void *arg)
{
	const struct storm *s = ((struct done_ctx *)arg)->s;
	return s->answered == s->n_hosts * s->n_groups;
}

static int mft_complete(void *arg)
{
	struct done_ctx *d = arg;
	/* not emu_pending(): the PathRecord load keeps MADs in flight */
	return joins_answered(arg) && !mcast_sm_pending(d->sm) && (d->sm->sw.activity == SM_IDLE) &&
	       !d->sm->sw.heavy_wanted;
}

static void send_next(struct storm *s, struct host *h);

static void on_join(void *arg, int status, const uint8_t *recs, size_t n,
		    size_t stride, const uint8_t *hdr)
{
	struct host *h = arg;
	struct storm *s = h->s;
	(void)recs;
	(void)hdr;
	s->answered++;
	if ((status || n < 1 || stride < MCR_SIZE) && !s->failed++)
		fprintf(stderr, "emumc: a join answered status 0x%x, %zu records\n",
			status, n);
	s->last_ms = now_ms() - s->t0;
	send_next(s, h);
}

/* host h's next Set, if any is left of its list */
static void send_next(struct storm *s, struct host *h)
{
	uint8_t rec[MCR_SIZE];
	if (h->next >= s->n_groups)
		return;
	uint32_t gi = h->next++;
	memset(rec, 0, sizeof(rec));
	if (s->pre)
		pre_mgid(h->idx % s->pre, rec + MCR_MGID);
	else
		storm_mgid(gi, rec + MCR_MGID);
	saclient_port_gid(h->sc, rec + MCR_PORT_GID);
	rec[MCR_SCOPE_JOIN] = 1;	/* FullMember */
	uint64_t cm = CM_JOIN;
	if (gi || s->pre) {		/* not the broadcast group: may create it */
		sa_put32(rec + MCR_QKEY, 0x0b1b);
		sa_put16(rec + MCR_PKEY, 0xffff);
		cm |= CM_CREATE;
	}
	if (saclient_query(h->sc, SA_METHOD_SET, SA_ATTR_MCMEMBER_REC, 0, cm, rec,
			   sizeof(rec), on_join, h) < 0) {
		s->answered++;
		s->failed++;
	} else {
		s->sent++;
	}
}

/* Group mlid's tree on the emulated switches, judged; 1 when wrong. */
static int judge(struct emu *e, const struct fabric *f, const struct lft_tables *t,
		 uint16_t mlid, const uint32_t *ports, uint32_t n)
{
	char why[256];
	uint64_t *mask = calloc((size_t)t->n_sw * MCAST_MASK_WORDS + 1, sizeof(*mask));
	int bad = !mask;
	for (uint32_t r = 0; mask && r < t->n_sw; r++)
		bad |= emu_mft_entry(e, f->nodes[t->sw_node[r]].guid, mlid,
				     &mask[r * MCAST_MASK_WORDS]) < 0;
	if (!bad && mcast_verify(f, t, ports, n, mask, why, sizeof(why))) {
		fprintf(stderr, "emumc: MLID 0x%04x: %s\n", mlid, why);
		bad = 1;
	}
	free(mask);
	return bad;
}

static void usage(void)
{
	fprintf(stderr, "usage: emumc [-R ENGINES] [-g GROUPS] [-w WINDOW] [-k INFLIGHT] "
			"[-P PREGROUPS] [-A] TOPO\n");
	exit(2);
}

/* The PathRecord load of one host, until the storm's MFTs are complete. */
struct prload {
	struct saclient *sc;
	uint32_t slid, *dlids, n_dlids, next;
	int stop;
	uint32_t inflight;
	uint64_t ok, failed;
	double sum_ms, max_ms;
};

struct prq {
	struct prload *l;
	double sent;
};

static void pr_issue(struct prload *l);

static void pr_done(void *arg, int status, const uint8_t *recs, size_t n,
		    size_t stride, const uint8_t *hdr)
{
	struct prq *q = arg;
	struct prload *l = q->l;
	(void)recs;
	(void)stride;
	(void)hdr;
	double ms = now_ms() - q->sent;
	free(q);
	l->inflight--;
	if (status || n != 1)
		l->failed++;
	else
		l->ok++;
	l->sum_ms += ms;
	if (ms > l->max_ms)
		l->max_ms = ms;
	pr_issue(l);
}

static void pr_issue(struct prload *l)
{
	uint8_t rec[SA_SIZE_PATH_REC];
	if (l->stop)
		return;
	struct prq *ctx = malloc(sizeof(*ctx));
	if (!ctx) {
		l->failed++;
		return;
	}
	ctx->l = l;
	ctx->sent = now_ms();
	memset(rec, 0, sizeof(rec));
	sa_put16(rec + SALOAD_PR_SLID_OFF, (uint16_t)l->slid);
	sa_put16(rec + SALOAD_PR_DLID_OFF, (uint16_t)l->dlids[l->next++ % l->n_dlids]);
	if (saclient_query(l->sc, SA_METHOD_GET, SA_ATTR_PATH_REC, 0,
			   SALOAD_PR_SLID | SALOAD_PR_DLID, rec, sizeof(rec), pr_done, ctx) < 0) {
		free(ctx);
		l->failed++;
		return;
	}
	l->inflight++;
}

static int pr_drained(void *arg)
{
	return !((struct prload *)arg)->inflight;
}

/* Runs s: every host sends window Sets, the next as each is answered. */
static void storm_start(struct storm *s, uint32_t window)
{
	s->sent = s->answered = s->failed = 0;
	s->t0 = now_ms();
	s->last_ms = 0;
	for (uint32_t i = 0; i < s->n_hosts; i++) {
		s->h[i].next = 0;
		for (uint32_t w = 0; w < window; w++)
			send_next(s, &s->h[i]);
	}
}

/* Every storm group's tree, and the first pre-groups': wrong trees. */
static uint32_t judge_all(struct sm *sm, struct emu *e, const struct fabric *f,
			  const struct storm *s, uint32_t pre, uint32_t *checked)
{
	struct lft_tables t;
	uint32_t wrong = 0, n;
	uint8_t mgid[16];
	uint32_t *ports = calloc(s->n_hosts + 1, sizeof(*ports));
	if (!ports || lft_tables_alloc(&t, f) < 0)
		return 1;
	for (uint32_t gi = 0; gi < s->n_groups + (pre < 3 ? pre : 3); gi++) {
		int is_pre = gi >= s->n_groups;
		uint32_t k = gi - s->n_groups;
		if (is_pre)
			pre_mgid(k, mgid);
		else
			storm_mgid(gi, mgid);
		const struct mc_group *g = mc_find_mgid(&sm->mc, mgid);
		n = 0;
		for (uint32_t i = 0; i < s->n_hosts; i++)
			if (!is_pre || i % pre == k)
				ports[n++] = s->h[i].port;
		(*checked)++;
		if (!g) {
			fprintf(stderr, "emumc: storm group %u missing\n", gi);
			wrong++;
			continue;
		}
		wrong += (uint32_t)judge(e, f, &t, g->mlid, ports, n);
	}
	lft_tables_free(&t);
	free(ports);
	return wrong;
}

int main(int argc, char **argv)
{
	const char *engines = NULL;
	unsigned groups = 4, window = 5, k = 4, pre = 0;
	int keep = 1, c;
	char err[256] = "";

	while ((c = getopt(argc, argv, "R:g:w:k:P:A")) != -1) {
		switch (c) {
		case 'R': engines = optarg; break;
		case 'g': groups = (unsigned)atoi(optarg); break;
		case 'w': window = (unsigned)atoi(optarg); break;
		case 'k': k = (unsigned)atoi(optarg); break;
		case 'P': pre = (unsigned)atoi(optarg); break;
		case 'A': keep = 0; break;
		default: usage();
		}
	}
	if (optind != argc - 1 || !window || window > 64 || groups > 1000 || pre > 4000)
		usage();

	struct emusm w;
	int rc = emusm_open(&w, "emumc", argv[optind]);
	if (rc)
		return rc;
	struct fabric *topo = &w.topo;
	struct emu *e = w.e;
	struct event_base *base = w.base;
	struct sm *sm = w.sm;
	uint32_t n_sw = w.n_sw, n_ca = w.n_ca;
	struct host *h = calloc(n_ca + 1, sizeof(*h));
	if (!h || n_ca < 2) {
		fprintf(stderr, "emumc: out of memory or no host\n");
		return 1;
	}
	if (engines && config_set_engines(&sm->cfg, engines, err, sizeof(err)) < 0) {
		fprintf(stderr, "emumc: %s\n", err);
		return 2;
	}
	if (emusm_start(&w) < 0)
		return 1;
	if (!keep && mcast_sm_keep_trees(sm, 0) < 0) {
		fprintf(stderr, "emumc: out of memory\n");
		return 1;
	}
	if (!emusm_run_idle(&w, 600000)) {
		fprintf(stderr, "emumc: the SM did not come up\n");
		return 1;
	}

	/* a client on every CA's port 1 but the SM's (the first CA) */
	struct storm s = { .h = h, .n_groups = 1 + groups };
	struct saclient_params p = { .timeout_ms = 10000, .retries = 0, .max_inflight = 1024 };
	uint32_t seen = 0;
	for (uint32_t i = 0; i < topo->n_nodes; i++) {
		if (topo->nodes[i].type != FAB_CA || !seen++)
			continue;
		struct host *x = &h[s.n_hosts];
		x->port = fabric_port(topo, i, 1);
		x->idx = s.n_hosts;
		x->s = &s;
		uint64_t guid = topo->ports[x->port].guid;
		if (!(x->sc = saclient_new(base, &x->t, &p)) ||
		    emu_attach(e, base, guid, &x->t, saclient_recv, x->sc, err, sizeof(err)) < 0 ||
		    emu_set_issm(e, guid, 0) < 0) {
			fprintf(stderr, "emumc: cannot attach host %u: %s\n", s.n_hosts, err);
			return 1;
		}
		s.n_hosts++;
	}
	struct done_ctx d = { sm, e, &s };
	saload_run_until(base, never, NULL, 200);	/* the IsSM changes' traps in */
	if (!emusm_run_idle(&w, 600000)) {
		fprintf(stderr, "emumc: the SM did not settle\n");
		return 1;
	}
	int ok = 1;
	if (pre) {
		uint32_t n_groups = s.n_groups;
		s.pre = pre;
		s.n_groups = 1;
		storm_start(&s, 1);
		if (!saload_run_until(base, mft_complete, &d, 600000) || s.failed) {
			fprintf(stderr, "emumc: the pre-groups' joins failed (%u of %u)\n",
				s.failed, s.answered);
			return 1;
		}
		s.pre = 0;
		s.n_groups = n_groups;
	}

	struct emu_counters c0, c1;
	emu_get_counters(e, &c0);
	struct mcast_sm_stats m0 = { 0 };
	if (mcast_sm_stats(sm))
		m0 = *mcast_sm_stats(sm);
	/* PathRecord Gets from the middle host to every end port's LID */
	const struct sa_view *v = sa_get_view(sm);
	struct prload l = { .sc = h[s.n_hosts / 2].sc };
	emu_transport_refresh(&h[s.n_hosts / 2].t);
	l.slid = h[s.n_hosts / 2].t.lid;
	l.dlids = malloc(sizeof(uint32_t) * (v->f->max_lid + 1));
	for (uint32_t lid = 1; l.dlids && lid <= v->f->max_lid; lid++)
		if (v->f->lid_port[lid] != FAB_NONE)
			l.dlids[l.n_dlids++] = lid;
	if (!l.n_dlids) {
		fprintf(stderr, "emumc: no LID to ask paths to\n");
		return 1;
	}
	storm_start(&s, window);
	for (unsigned i = 0; i < k; i++)
		pr_issue(&l);
	if (!saload_run_until(base, joins_answered, &d, 600000)) {
		fprintf(stderr, "emumc: %u of %u joins answered\n", s.answered,
			s.n_hosts * s.n_groups);
		return 1;
	}
	if (!saload_run_until(base, mft_complete, &d, 600000)) {
		fprintf(stderr, "emumc: the MFTs did not settle\n");
		return 1;
	}
	double mft_ms = now_ms() - s.t0;
	l.stop = 1;
	saload_run_until(base, pr_drained, &l, 20000);
	emu_get_counters(e, &c1);
	const struct mcast_sm_stats *m1 = mcast_sm_stats(sm);
	uint32_t checked = 0;
	uint32_t wrong = judge_all(sm, e, topo, &s, pre, &checked);
	ok = !s.failed && !wrong && !l.failed && l.ok > 0 && !emu_violations(e);

	if (emusm_stdout(&w) < 0)
		return 1;
	printf("{\"hosts\":%u,\"switches\":%u,\"groups\":%u,\"pre_groups\":%u,\"keep_trees\":%d,"
	       "\"window\":%u,\"joins\":%u,\"joins_failed\":%u,\"join_answered_ms\":%.1f,"
	       "\"mft_complete_ms\":%.1f,\"mft_smps\":%llu,\"mcast_runs\":%u,"
	       "\"trees_computed\":%llu,\"plan_ms\":%.1f,\"pr_gets\":%llu,\"pr_failed\":%llu,"
	       "\"pr_latency_ms_avg\":%.3f,\"pr_latency_ms_max\":%.3f,"
	       "\"trees_checked\":%u,\"trees_wrong\":%u}\n",
	       s.n_hosts, n_sw, s.n_groups, pre, keep, window, s.answered, s.failed,
	       s.last_ms, mft_ms, (unsigned long long)(c1.mft_sets - c0.mft_sets),
	       m1 ? m1->runs - m0.runs : 0,
	       (unsigned long long)(m1 ? m1->trees_computed - m0.trees_computed : 0),
	       m1 ? m1->plan_ms_total - m0.plan_ms_total : 0,
	       (unsigned long long)l.ok, (unsigned long long)l.failed,
	       l.ok ? l.sum_ms / (double)(l.ok + l.failed) : 0, l.max_ms, checked, wrong);
	fflush(stdout);

	for (uint32_t i = 0; i < s.n_hosts; i++) {
		saclient_free(h[i].sc);
		h[i].t.close(h[i].t.ctx);
	}
	free(h);
	free(l.dlids);
	if (emusm_close(&w) < 0)
		ok = 0;
	return ok ? 0 : 1;
}
