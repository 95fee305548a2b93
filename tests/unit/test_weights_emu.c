/*
 * pFTree-Wt weight learning on the in-process emulator (sm/weights.c):
 * the SM reads PortCountersExtended from the emulated PMAs (mad/emu/emu_pma.c,
 * their own decoder), learns the weights of the pFTree paper's Section 7
 * (Eq. 1) and reroutes.
 *
 * The fabric is Fig. 4 of the pFTree paper (Section 5): leaves L1, L2
 * with 4 compute nodes each, roots R1, R2; a(P1) b(P2) c(P2) d(P1) on L1,
 * e, f (P2) and g, h (P1) on L2.  The SM runs on h.  With a receiving 100
 * times what the others do, the learned weights are a -> 100, the others
 * -> 1 (Eq. 1), and under pftree the routes are Fig. 12's: on L1, a alone
 * on one root's link and b, c, d on the other's; on L2 P1 and P2 on
 * separate roots.  The route checks read the LFTs back from the emulated
 * switches.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mad/emu/emu.h"
#include "routing/engine.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/base/topo.h"
#include "sm/weights.h"

#include "emu_testlib.h"

#define N_CN 8
#define L1_GUID 0x100
#define L2_GUID 0x101
#define SM_CN 7		/* h */

static const char cn_name[N_CN] = { 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h' };

static uint64_t cn_guid(int i)		/* node GUID; port GUID + 1 */
{
	return 0x1000 + 4 * (uint64_t)i;
}

static char *fig4_text(void)
{
	size_t cap = 8192, n = 0;
	char *t = malloc(cap);
	ck_assert_ptr_nonnull(t);
#define PUT(...) (n += (size_t)snprintf(t + n, cap - n, __VA_ARGS__))
	for (int l = 0; l < 2; l++) {
		PUT("switchguid=0x%x\nSwitch\t6 \"L%d\"\n", L1_GUID + l, l + 1);
		for (int k = 0; k < 4; k++)
			PUT("[%d]\t\"%c\"[1]\n", k + 1, cn_name[4 * l + k]);
		PUT("[5]\t\"R1\"[%d]\n[6]\t\"R2\"[%d]\n\n", l + 1, l + 1);
	}
	for (int r = 0; r < 2; r++) {
		/* R1 the higher GUID: pFTree's first choice (decreasing GUID) */
		PUT("switchguid=0x%x\nSwitch\t2 \"R%d\"\n", 0x201 - r, r + 1);
		PUT("[1]\t\"L1\"[%d]\n[2]\t\"L2\"[%d]\n\n", 5 + r, 5 + r);
	}
	for (int i = 0; i < N_CN; i++)
		PUT("caguid=0x%llx\nHca\t1 \"%c\"\n[1]\t\"L%d\"[%d]\n\n",
		    (unsigned long long)cn_guid(i), cn_name[i], i / 4 + 1, i % 4 + 1);
#undef PUT
	ck_assert_uint_lt(n, cap);
	return t;
}

struct run {
	EMU_RUN;
};

static void add_part(struct config *c, const char *name, uint16_t pkey,
		     const char *pattern)
{
	struct cfg_partition *p = &c->parts[c->n_parts++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->pkey = pkey;
	p->policy = PART_DEF;
	p->sl = -1;
	p->first = c->n_members;
	p->n = 1;
	struct cfg_member *m = &c->members[c->n_members++];
	memset(m, 0, sizeof(*m));
	snprintf(m->node, sizeof(m->node), "%s", pattern);
	m->full = 1;
}

static int idle(const void *arg)
{
	const struct sm *sm = arg;
	return sm->sweep.heavy_sweeps >= 1 && (sm->sw.activity == SM_IDLE) && !sm->sw.heavy_wanted &&
	       !weights_reading(sm);
}

/* period_s: routing.weight_learning.period_s (the timer; tests call
 * weights_learn_now() with a period longer than the test). */
static void sm_up(struct run *r, int period_s)
{
	r->sm = emu_sm_new(r->state, 20);
	struct config *c = &r->sm->cfg;
	c->port_guid = cn_guid(SM_CN) + 1;
	ck_assert_ptr_nonnull(routing_engine_find("pftree"));
	c->n_engines = 1;
	snprintf(c->engines[0], sizeof(c->engines[0]), "pftree");
	add_part(c, "P1", 0x0001, "[adgh]");
	add_part(c, "P2", 0x0002, "[bcef]");
	c->wlearn_period_s = period_s;
	c->wlearn_min = 1;
	c->wlearn_max = 100;
	emu_sm_start(r->sm, r->base, r->e);
	ck_assert_msg(emu_run_while(r->base, idle, r->sm, 10000),
		      "the SM did not configure the fabric");
}

static void setup(struct run *r, int period_s)
{
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "wemu",
		     .text = fig4_text(), .seed = 16 });
	sm_up(r, period_s);
}

static void teardown(struct run *r)
{
	ck_assert_uint_eq(emu_violations(r->e), 0);
	emu_run_free(&r->run);
}

/* The learned weight of compute node i, 0 when none was learned. */
static uint32_t learned(const struct run *r, int i)
{
	const struct part_weights *lw = &r->sm->learned;
	for (uint32_t k = 0; k < lw->n; k++) {
		if (k)
			ck_assert_uint_lt(lw->guid[k - 1], lw->guid[k]);
		if (lw->guid[k] == cn_guid(i) + 1)
			return lw->weight[k];
	}
	return 0;
}

struct settled {
	const struct sm *sm;
	uint64_t readings;
	uint32_t sweeps;
};

static int settled(const void *arg)
{
	const struct settled *s = arg;
	return weights_get_stats(s->sm)->readings >= s->readings &&
	       s->sm->sweep.heavy_sweeps >= s->sweeps && idle(s->sm);
}

/*
 * The counters grow by grow[i] (units of 4 octets) at compute node i, then
 * the SM reads them; when it learns something new (reroute set), the
 * loop runs until the reroute is programmed.
 */
static void reading(struct run *r, const uint64_t *grow, int reroute)
{
	for (int i = 0; grow && i < N_CN; i++)
		ck_assert_int_eq(emu_add_port_data(r->e, cn_guid(i), 1, grow[i],
					       grow[(i + 1) % N_CN]), 0);
	struct settled s = { r->sm, weights_get_stats(r->sm)->readings + 1,
			     r->sm->sweep.heavy_sweeps + (reroute ? 1 : 0) };
	ck_assert_int_eq(weights_learn_now(r->sm), 0);
	ck_assert_msg(emu_run_while(r->base, settled, &s, 10000),
		      "reading %llu not done (sweeps %u of %u)",
		      (unsigned long long)s.readings, r->sm->sweep.heavy_sweeps, s.sweeps);
}

static int lid_of(const struct run *r, int i)
{
	int lid = emu_port_lid(r->e, cn_guid(i), 1);
	ck_assert_int_gt(lid, 0);
	return lid;
}

/* The up port leaf (L1_GUID or L2_GUID) sends compute node i's traffic on. */
static int up(const struct run *r, uint64_t leaf, int i)
{
	int p = emu_lft_entry(r->e, leaf, (uint32_t)lid_of(r, i));
	ck_assert_msg(p == 5 || p == 6, "%c: leaf 0x%llx port %d", cn_name[i],
		      (unsigned long long)leaf, p);
	return p;
}

/* Fig. 12: a 100 times the others; pftree gives a a root link of its own. */
START_TEST(fig12)
{
	struct run r;
	setup(&r, 600);
	/* counters that are not zero before the period: deltas count */
	for (int i = 0; i < N_CN; i++)
		ck_assert_int_eq(emu_set_port_rcv_data(r.e, cn_guid(i), 1,
					1000000000000ull * (uint64_t)(N_CN - i)), 0);
	/* equal weights: Fig. 4, each partition on its own root */
	ck_assert_int_eq(up(&r, L2_GUID, 0), up(&r, L2_GUID, 3));
	ck_assert_int_eq(up(&r, L2_GUID, 1), up(&r, L2_GUID, 2));
	ck_assert_int_ne(up(&r, L2_GUID, 0), up(&r, L2_GUID, 1));
	reading(&r, NULL, 0);
	ck_assert_uint_eq(r.sm->learned.n, 0);	/* one reading: no period yet */
	uint64_t grow[N_CN];
	for (int i = 0; i < N_CN; i++)
		grow[i] = i == 0 ? 100000 : 1000;
	reading(&r, grow, 1);
	const struct weights_stats *st = weights_get_stats(r.sm);
	ck_assert_uint_eq(st->rounds, 1);
	ck_assert_uint_eq(st->changes, 1);
	ck_assert_uint_eq(st->measured, N_CN);
	ck_assert_uint_eq(r.sm->learned.n, N_CN);
	ck_assert_uint_eq(learned(&r, 0), 100);
	for (int i = 1; i < N_CN; i++)
		ck_assert_msg(learned(&r, i) == 1, "%c: weight %u", cn_name[i],
			      learned(&r, i));
	/* the routing saw them: a weighs 100 in the model it resolved */
	uint32_t heavy = 0;
	for (uint32_t pi = 0; pi < r.sm->parts.n_ports; pi++)
		if (r.sm->parts.weight[pi] == 100)
			heavy++;
	ck_assert_uint_eq(heavy, 1);
	/* L1: a alone on one root's link down, b, c, d on the other's */
	int pa = up(&r, L2_GUID, 0);
	for (int i = 1; i < 4; i++)
		ck_assert_msg(up(&r, L2_GUID, i) != pa,
			      "%c shares a's root link", cn_name[i]);
	/* L2: P1 (g, h) and P2 (e, f) on separate roots */
	ck_assert_int_eq(up(&r, L1_GUID, 6), up(&r, L1_GUID, 7));
	ck_assert_int_eq(up(&r, L1_GUID, 4), up(&r, L1_GUID, 5));
	ck_assert_int_ne(up(&r, L1_GUID, 4), up(&r, L1_GUID, 6));
	/* the same growth again: nothing new, no reroute */
	uint32_t sweeps = r.sm->sweep.heavy_sweeps;
	reading(&r, grow, 0);
	ck_assert_uint_eq(weights_get_stats(r.sm)->changes, 1);
	ck_assert_uint_eq(r.sm->sweep.heavy_sweeps, sweeps);
	/* a quiet period (b twice the others, 4 KB apart): nothing learned */
	uint64_t quiet[N_CN] = { 1000, 2000, 1000, 1000, 1000, 1000, 1000, 1000 };
	reading(&r, quiet, 0);
	ck_assert_uint_eq(weights_get_stats(r.sm)->idle, 1);
	ck_assert_uint_eq(weights_get_stats(r.sm)->changes, 1);
	ck_assert_uint_eq(learned(&r, 0), 100);
	ck_assert_uint_eq(r.sm->sweep.heavy_sweeps, sweeps);

	/* a restart keeps what was learned (STATE_DIR/weights), and routes by it */
	emu_run_stop_sm(&r.run);
	sm_up(&r, 600);
	ck_assert_uint_eq(r.sm->learned.n, N_CN);
	ck_assert_uint_eq(learned(&r, 0), 100);
	ck_assert_uint_eq(learned(&r, 1), 1);
	pa = up(&r, L2_GUID, 0);
	for (int i = 1; i < 4; i++)
		ck_assert_msg(up(&r, L2_GUID, i) != pa,
			      "after a restart %c shares a's root link", cn_name[i]);
	/* with learning off the file is not read: the policy's weights */
	emu_run_stop_sm(&r.run);
	sm_up(&r, 0);
	ck_assert_uint_eq(r.sm->learned.n, 0);
	/* a broken file is set aside; the SM starts learning from scratch */
	emu_run_stop_sm(&r.run);
	char path[128];
	snprintf(path, sizeof(path), "%s/" WEIGHTS_FILE, r.state);
	FILE *fp = fopen(path, "a");
	ck_assert_ptr_nonnull(fp);
	fputs("0x0000000000000001 5\n", fp);	/* after the end line */
	fclose(fp);
	sm_up(&r, 600);
	ck_assert_uint_eq(r.sm->learned.n, 0);
	ck_assert_int_eq(access(path, F_OK), -1);
	teardown(&r);
}
END_TEST

/*
 * A port that does not answer, or whose counter went back (a reset), is
 * not measured: it keeps the weight it had, and the others are rescaled
 * among themselves.
 */
START_TEST(unmeasured_keep)
{
	struct run r;
	setup(&r, 600);
	uint64_t g1[N_CN] = { 100000, 1000, 50500, 1000, 1000, 1000, 1000, 1000 };
	reading(&r, NULL, 0);
	reading(&r, g1, 1);
	ck_assert_uint_eq(learned(&r, 0), 100);
	ck_assert_uint_eq(learned(&r, 2), 51);	/* 1 + 49500 * 99 / 99000 */
	ck_assert_uint_eq(learned(&r, 1), 1);

	/* c's PMA goes silent; b is now the busy one */
	ck_assert_int_eq(emu_set_dead(r.e, cn_guid(2), 1, 1), 0);
	uint64_t g2[N_CN] = { 1000, 100000, 1000, 1000, 1000, 1000, 1000, 1000 };
	reading(&r, g2, 1);
	const struct weights_stats *st = weights_get_stats(r.sm);
	ck_assert_uint_eq(st->measured, N_CN - 1);
	ck_assert_uint_eq(st->unmeasured, 1);
	ck_assert_uint_eq(learned(&r, 2), 51);	/* kept, not 1 */
	ck_assert_uint_eq(learned(&r, 1), 100);
	ck_assert_uint_eq(learned(&r, 0), 1);

	/* c answers again (its last reading failed: not measured yet) ... */
	ck_assert_int_eq(emu_set_dead(r.e, cn_guid(2), 1, 0), 0);
	reading(&r, g2, 0);
	ck_assert_uint_eq(learned(&r, 2), 51);
	/* ... then its counter is reset: a negative delta, not measured */
	ck_assert_int_eq(emu_set_port_rcv_data(r.e, cn_guid(2), 1, 0), 0);
	reading(&r, g2, 0);
	ck_assert_uint_eq(weights_get_stats(r.sm)->unmeasured, 1);
	ck_assert_uint_eq(learned(&r, 2), 51);
	/* and measured from the reset on: like the others now */
	reading(&r, g2, 1);
	ck_assert_uint_eq(weights_get_stats(r.sm)->unmeasured, 0);
	ck_assert_uint_eq(learned(&r, 2), 1);
	teardown(&r);
}
END_TEST

/* The period's timer drives the readings by itself. */
START_TEST(timer)
{
	struct run r;
	setup(&r, 1);
	uint64_t g[N_CN] = { 0, 0, 0, 0, 0, 700000, 0, 0 };
	struct settled s = { r.sm, 1, 0 };
	ck_assert(emu_run_while(r.base, settled, &s, 3000));
	for (int i = 0; i < N_CN; i++)
		ck_assert_int_eq(emu_add_port_data(r.e, cn_guid(i), 1, g[i], 0), 0);
	s.readings = 2;
	s.sweeps = r.sm->sweep.heavy_sweeps + 1;
	ck_assert(emu_run_while(r.base, settled, &s, 3000));
	ck_assert_uint_eq(weights_get_stats(r.sm)->rounds, 1);
	ck_assert_uint_eq(learned(&r, 5), 100);
	ck_assert_uint_eq(learned(&r, 0), 1);
	teardown(&r);
}
END_TEST

/* Off (period 0), or a reading under way: weights_learn_now refuses. */
START_TEST(refused)
{
	struct run r;
	setup(&r, 0);
	ck_assert_int_eq(weights_learn_now(r.sm), -1);
	r.sm->cfg.wlearn_period_s = 600;
	ck_assert_int_eq(weights_learn_now(r.sm), 0);
	ck_assert(weights_reading(r.sm));
	ck_assert_int_eq(weights_learn_now(r.sm), -1);
	ck_assert(emu_run_while(r.base, idle, r.sm, 5000));
	ck_assert_uint_eq(weights_get_stats(r.sm)->readings, 1);
	teardown(&r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("weights_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, fig12);
	tcase_add_test(tc, unmeasured_keep);
	tcase_add_test(tc, timer);
	tcase_add_test(tc, refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
