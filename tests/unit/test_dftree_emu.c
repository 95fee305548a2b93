/*
 * dFtree's loop on the in-process emulator with its traffic model
 * (sm/dftree.c, mad/emu/emu_flow.c): the dFtree paper's Exp I on an
 * approximation of its non-oversubscribed testbed
 * (tests/tools/emuflow/testbed-3a.net: three leaves, one root, 4X DDR).
 * The victim 2-3 runs alone, then the contributors 1-5, 3-5 and 6-5 join
 * towards H5, which takes 12.9 Gb/s of its 16 Gb/s link.  Without dFtree
 * the victim stays held back behind the hot-spot's congestion tree; with
 * it, the SM reads the counters the traffic makes, finds H5 a hot-spot,
 * sends lane orders (69, slow SL 1) to the ports over the threshold below
 * half their link (the contributors, and the victim, which has nothing to
 * move), the hosts move their flows to H5 onto SL 1 (Algorithm 2), and
 * the victim gets back at least half of what it lost within two
 * intervals; the SA's PathRecord to H5 answers SL 1 meanwhile.
 *
 * sa_first: a round's GMPs yield to the SA as a performance manager
 * sweep's do (sm/perfmgr.h): with no SA load a round has many reads in
 * flight at once and reports no time yielded; while a host floods the SA
 * with PathRecord Gets (4,000 a second) a whole round keeps at most one
 * in flight, reports time yielded, and the flood's queries are answered
 * meanwhile.  The emulator answers after 2 ms, so reads pile up in
 * flight when the window lets them.
 *
 * vswitch_*: the ports a round reads when some switch ports face a CA
 * port the loop must leave out (sm/dftree.c: one with no LID, a vLID, or
 * an idle VF, FPORT_NOLID), on the smallest fabric where such a port
 * comes right before a CA port in the model's port order (see vs_text()).
 */
#include <check.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu.h"
#include "mad/sa.h"
#include "mad/txn.h"
#include "sm/daemon.h"
#include "sm/dftree.h"
#include "sm/model/lanes.h"
#include "sm/perfmgr.h"

#include "emu_testlib.h"

#define GBPS (1e9 / 8)
#define TESTBED "tests/tools/emuflow/testbed-3a.net"

struct run {
	EMU_RUN;
	struct emu_traffic *t;
	struct emu_subscriber sub[4];	/* H1, H3, H6, H2 */
	int seen[4];
};

static const char *const hosts[4] = { "H1", "H3", "H6", "H2" };

static char *file_text(const char *path)
{
	FILE *fp = fopen(path, "r");
	ck_assert_msg(fp != NULL, "%s", path);
	char *t = calloc(1, 65536);
	ck_assert_ptr_nonnull(t);
	size_t n = fread(t, 1, 65535, fp);
	ck_assert_uint_gt(n, 0);
	fclose(fp);
	return t;
}

/* The port GUID and the LID of host NAME's port 1. */
static uint64_t port_guid(struct run *r, const char *name)
{
	for (uint32_t i = 0; i < r->topo.n_nodes; i++)
		if (!strcmp(r->topo.nodes[i].desc, name))
			return r->topo.ports[fabric_port(&r->topo, i, 1)].guid;
	ck_abort_msg("no host %s", name);
	return 0;
}

static uint32_t lid(struct run *r, const char *name)
{
	const struct fab_node *nd = NULL;
	for (uint32_t i = 0; i < r->topo.n_nodes; i++)
		if (!strcmp(r->topo.nodes[i].desc, name))
			nd = &r->topo.nodes[i];
	ck_assert_ptr_nonnull(nd);
	int l = emu_port_lid(r->e, nd->guid, 1);
	ck_assert_int_gt(l, 0);
	return (uint32_t)l;
}

static int idle(const void *arg)
{
	const struct sm *sm = arg;
	return sm->sweep.heavy_sweeps >= 1 && sm->sw.activity == SM_IDLE &&
	       !sm->sw.heavy_wanted;
}

static void setup(struct run *r, int dftree)
{
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "dftemu",
		     .text = file_text(TESTBED), .seed = 28 });
	r->sm = emu_sm_new(r->state, 20);
	struct config *c = &r->sm->cfg;
	c->port_guid = port_guid(r, "H4");
	c->pm_interval_s = 0;
	if (dftree) {
		c->cong_mode = CONG_DFTREE;
		c->cong_fast_sl = 0;
		c->cong_slow_sl = 1;
		c->cong_interval_s = 1;
	}
	emu_sm_start(r->sm, r->base, r->e);
	ck_assert_msg(emu_run_while(r->base, idle, r->sm, 10000), "no bring-up");
	for (int i = 0; i < 4; i++)
		emu_subscribe(r->e, r->base, &r->sub[i], port_guid(r, hosts[i]));
	r->t = emu_traffic_new(r->e);
	ck_assert_ptr_nonnull(r->t);
	ck_assert_int_eq(emu_traffic_run(r->t, r->base, 10), 0);
}

static void teardown(struct run *r)
{
	emu_traffic_run(r->t, r->base, 0);
	for (int i = 0; i < 4; i++)
		emu_subscriber_free(&r->sub[i]);
	emu_traffic_free(r->t);
	emu_run_free(&r->run);
}

/*
 * The hosts' agents: every lane order a host got since the last call
 * moves its flows to that DLID onto the order's SL (Algorithm 2).
 */
static int agents(struct run *r)
{
	int moved = 0;
	for (int i = 0; i < 4; i++) {
		struct emu_subscriber *s = &r->sub[i];
		int n = s->repath + s->unpath;
		for (; r->seen[i] < n && r->seen[i] < EMU_SUB_MAXREC; r->seen[i]++) {
			const struct notice_path *p = &s->rec[r->seen[i]];
			if (p->flags & NPATH_LANE)
				moved += emu_flow_move(r->t, s->guid, p->dlid, p->sl);
		}
	}
	return moved;
}

/* Runs the loop for ms with the agents working; the victim's rate, Gb/s. */
static double run_ms(struct run *r, unsigned ms, int victim)
{
	static const int never = 0;
	for (unsigned el = 0; el < ms; el += 50) {
		emu_run_until(r->base, &never, 50);
		agents(r);
	}
	return emu_flow_rate(r->t, victim) / GBPS;
}

static void exp1(int dftree, double *alone, double *with, double *after,
		 int *orders, int *pr_sl)
{
	struct run r;
	memset(&r, 0, sizeof(r));
	setup(&r, dftree);
	uint32_t h5 = lid(&r, "H5");
	ck_assert_int_eq(emu_flow_set_sink(r.t, port_guid(&r, "H5"), 12.9 * GBPS), 0);
	int v = emu_flow_add(r.t, port_guid(&r, "H2"), lid(&r, "H3"), 12.9 * GBPS, 0);
	ck_assert_int_ge(v, 0);
	*alone = run_ms(&r, 1000, v);
	static const char *const from[] = { "H1", "H3", "H6" };
	for (int i = 0; i < 3; i++)
		ck_assert_int_ge(emu_flow_add(r.t, port_guid(&r, from[i]), h5,
					      12.9 * GBPS, 0), 0);
	*with = run_ms(&r, 300, v);	/* before any round could see it */
	/* two intervals and a round's GMPs */
	*after = run_ms(&r, 2600, v);
	*orders = 0;
	for (int i = 0; i < 4; i++)
		*orders += r.sub[i].repath;
	*pr_sl = lanes_path_sl(&r.sm->sub.lanes, h5, h5, 0);
	teardown(&r);
}

START_TEST(exp1_without)
{
	double alone, with, after;
	int orders, sl;
	exp1(0, &alone, &with, &after, &orders, &sl);
	ck_assert_msg(alone > 12.5, "the victim alone: %.2f Gb/s", alone);
	ck_assert_msg(with < 6, "with the contributors: %.2f Gb/s", with);
	ck_assert_msg(after < 6, "without dFtree the victim stays held back: %.2f Gb/s", after);
	ck_assert_int_eq(orders, 0);
}
END_TEST

START_TEST(exp1_with)
{
	double alone, with, after;
	int orders, sl;
	exp1(1, &alone, &with, &after, &orders, &sl);
	ck_assert_msg(alone > 12.5, "the victim alone: %.2f Gb/s", alone);
	ck_assert_msg(with < 6, "with the contributors: %.2f Gb/s", with);
	ck_assert_msg(after - with >= (alone - with) / 2,
		      "the victim got back %.2f of the %.2f Gb/s it lost (%.2f -> %.2f -> %.2f)",
		      after - with, alone - with, alone, with, after);
	/* the three contributors and the victim, each once */
	ck_assert_int_eq(orders, 4);
	ck_assert_int_eq(sl, 1);
	printf("Exp I (emulated testbed 3a): victim 2-3 %.1f Gb/s alone, %.1f with the "
	       "contributors, %.1f with dFtree (thesis: 12.9, 3, 7.5)\n", alone, with, after);
}
END_TEST

/* ---- the SA first ---- */

#define FLOOD_TICK_MS	10
#define FLOOD_BURST	40	/* PathRecord Gets a tick: 4,000 a second */
#define EMU_LATENCY_US	2000

struct flood {
	struct mad_transport t;
	struct event *ev;
	uint32_t dlid;
	uint64_t tid, sent, answered;
};

static void flood_recv(void *arg, const uint8_t *mad, size_t len,
		       const struct mad_addr *from, int status)
{
	struct flood *f = arg;
	(void)from;
	if (!status && len >= SA_HDR_SIZE && mad[1] == SA_CLASS)
		f->answered++;
}

static void flood_tick(evutil_socket_t fd, short what, void *arg)
{
	struct flood *f = arg;
	(void)fd;
	(void)what;
	for (int i = 0; i < FLOOD_BURST; i++) {
		uint8_t m[MAD_SIZE], rec[SA_SIZE_PATH_REC] = { 0 };
		struct mad_addr to = { .lid = f->t.sm_lid, .qpn = 1, .qkey = 0x80010000 };
		sa_put16(rec + 8, (uint16_t)f->dlid);	/* DLID */
		sa_put16(rec + 10, (uint16_t)f->t.lid);	/* SLID */
		sa_init_request(m, SA_METHOD_GET, ++f->tid, SA_ATTR_PATH_REC, 0,
				1u << 4 | 1u << 5, rec, sizeof(rec));
		if (mad_transport_send(&f->t, m, MAD_SIZE, &to) == 0)
			f->sent++;
	}
}

/* Rounds of the loop and the most reads in flight seen meanwhile. */
struct watch {
	struct sm *sm;
	uint64_t until;		/* rounds */
	uint32_t max_inflight;
};

static uint64_t dft_num(const struct sm *sm, const char *key)
{
	json_t *o = dftree_to_ctl(sm);
	uint64_t v = (uint64_t)json_integer_value(json_object_get(o, key));
	json_decref(o);
	return v;
}

static int rounds_done(const void *arg)
{
	struct watch *w = (struct watch *)arg;	/* the sampling is the test's */
	uint32_t n = txn_inflight(perfmgr_engine(w->sm));
	if (n > w->max_inflight)
		w->max_inflight = n;
	return dft_num(w->sm, "rounds") >= w->until;
}

/* Runs to the end of the next whole round: its most reads in flight. */
static uint32_t whole_round(struct run *r)
{
	struct watch w = { r->sm, dft_num(r->sm, "rounds") + 1, 0 };
	ck_assert(emu_run_while(r->base, rounds_done, &w, 3000));	/* one under way */
	w.until++;
	w.max_inflight = 0;
	ck_assert(emu_run_while(r->base, rounds_done, &w, 3000));
	return w.max_inflight;
}

START_TEST(sa_first)
{
	struct run r;
	memset(&r, 0, sizeof(r));
	setup(&r, 1);
	emu_set_latency(r.e, EMU_LATENCY_US, 0);
	uint32_t quiet = whole_round(&r);
	ck_assert_msg(quiet > 1, "no SA load: %u reads in flight at most", quiet);
	ck_assert_uint_eq(dft_num(r.sm, "yielded_ms"), 0);

	char err[256] = "";
	struct flood f = { .dlid = lid(&r, "H1") };
	uint64_t h5 = port_guid(&r, "H5");
	ck_assert_msg(emu_attach(r.e, r.base, h5, &f.t, flood_recv, &f, err,
				 sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(emu_set_issm(r.e, h5, 0), 0);
	f.ev = event_new(r.base, -1, EV_PERSIST, flood_tick, &f);
	ck_assert_ptr_nonnull(f.ev);
	struct timeval tv = { 0, FLOOD_TICK_MS * 1000 };
	ck_assert_int_eq(event_add(f.ev, &tv), 0);
	uint32_t busy = whole_round(&r);
	uint64_t yielded = dft_num(r.sm, "yielded_ms");
	event_free(f.ev);
	ck_assert_msg(busy <= 1, "the SA busy: %u reads in flight at most", busy);
	ck_assert_uint_gt(yielded, 0);
	ck_assert_uint_gt(f.sent, 0);
	ck_assert_msg(f.answered > f.sent / 2, "%" PRIu64 " of %" PRIu64 " answered",
		      f.answered, f.sent);
	printf("dFtree round: %u reads in flight at most with no SA load, %u with "
	       "%" PRIu64 " PathRecord Gets (%" PRIu64 " answered); %" PRIu64 " ms yielded\n",
	       quiet, busy, f.sent, f.answered, yielded);
	teardown(&r);
}
END_TEST

/* ---- a vSwitch with an idle VF ---- */

/*
 * The smallest fabric where a switch port the loop leaves out precedes a
 * CA port with a LID in the model's port order (ports by node index, the
 * nodes in the order discovery found them): the SM's host H on switch S,
 * and a hypervisor's vSwitch V (virtualization.vswitches ["V"], the
 * dynamic LID scheme) with its PF P on port 2 and one idle VF F on port
 * 3.  A switch port is left out only when the CA port it faces has no
 * LID, a vLID or is an idle VF; on the stock emulator (no extended LIDs)
 * that takes a vSwitch under the dynamic scheme, whose PF then follows
 * it.  Discovery finds H (the SM's own node), S, V, then P and F (in
 * either order) behind V: after V's port 3, which faces F (FPORT_NOLID),
 * the next port taken is P's, a CA port (F's own is left out too).  A CA
 * port taken for a switch port there would be read without
 * PortCountersExtended, share its GUID with V's port 2 in the switch
 * ports, and be no contributor.
 * CA GUIDs are 4 apart: a port GUID (node GUID + 1) is no other node's.
 */
#define VS_H	0x1000
#define VS_P	0x2000
#define VS_F	0x2004

static char *vs_text(void)
{
	return strdup("switchguid=0x100\nSwitch\t4 \"S\"\n[1]\t\"H\"[1]\n[2]\t\"V\"[1]\n\n"
		      "switchguid=0x200\nSwitch\t3 \"V\"\n[1]\t\"S\"[2]\n[2]\t\"P\"[1]\n"
		      "[3]\t\"F\"[1]\n\n"
		      "caguid=0x1000\nHca\t1 \"H\"\n[1]\t\"S\"[1]\n\n"
		      "caguid=0x2000\nHca\t1 \"P\"\n[1]\t\"V\"[2]\n\n"
		      "caguid=0x2004\nHca\t1 \"F\"\n[1]\t\"V\"[3]\n");
}

static void vs_setup(struct run *r)
{
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "dftvs",
		     .text = vs_text(), .seed = 28 });
	r->sm = emu_sm_new(r->state, 20);
	struct config *c = &r->sm->cfg;
	c->port_guid = VS_H + 1;
	c->pm_interval_s = 0;
	c->cong_mode = CONG_DFTREE;
	c->cong_fast_sl = 0;
	c->cong_slow_sl = 1;
	c->cong_interval_s = 1;
	c->lid_scheme = 0;	/* dynamic: an idle VF has no LID */
	c->n_vswitches = 1;
	snprintf(c->vswitches[0], sizeof(c->vswitches[0]), "V");
	emu_sm_start(r->sm, r->base, r->e);
	ck_assert_msg(emu_run_while(r->base, idle, r->sm, 10000), "no bring-up");
	/* the premise: the VF has no LID, the PF and the host have theirs */
	ck_assert_int_eq(emu_port_lid(r->e, VS_F, 1), 0);
	ck_assert_int_gt(emu_port_lid(r->e, VS_P, 1), 0);
	ck_assert_int_gt(emu_port_lid(r->e, VS_H, 1), 0);
}

/* A CA port's LID on the device (a vLID leaves it 0), or 0: none. */
static int ca_lid(const struct run *r, const struct fab_port *p)
{
	int l = emu_port_lid(r->e, r->topo.nodes[p->node].guid, p->num);
	return l > 0 ? l : 0;
}

/*
 * The GMPs a round asks, from the devices: PortCounters of every switch
 * port (its switch with a LID) facing a CA port with a LID, PortCounters
 * and PortCountersExtended of every CA port with a LID.
 */
static uint64_t vs_expected(const struct run *r)
{
	const struct fabric *f = &r->topo;
	uint64_t n = 0;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (!p->num || p->remote == FAB_NONE)
			continue;
		const struct fab_port *far = &f->ports[p->remote];
		const struct fab_node *nd = &f->nodes[p->node];
		if (nd->type == FAB_CA)
			n += ca_lid(r, p) ? 2 : 0;
		else if (f->nodes[far->node].type == FAB_CA)
			n += ca_lid(r, far) && emu_port_lid(r->e, nd->guid, 0) > 0;
	}
	return n;
}

START_TEST(vswitch_round_gmps)
{
	struct run r;
	memset(&r, 0, sizeof(r));
	vs_setup(&r);
	uint64_t want = vs_expected(&r);
	ck_assert_uint_eq(want, 6);	/* S[1] and V[2]; H and P twice each */
	whole_round(&r);
	uint64_t gmps = dft_num(r.sm, "gmps"), rounds = dft_num(r.sm, "rounds");
	whole_round(&r);
	rounds = dft_num(r.sm, "rounds") - rounds;
	gmps = dft_num(r.sm, "gmps") - gmps;
	ck_assert_msg(gmps == want * rounds, "%" PRIu64 " rounds asked %" PRIu64 " GMPs, "
		      "the fabric wants %" PRIu64 " a round (the PF's PortCountersExtended "
		      "missing?)", rounds, gmps, want);
	emu_run_free(&r.run);
}
END_TEST

/* The hot-spots as `ibsmctl hotspots` shows them. */
static json_t *hotspots(struct run *r)
{
	char err[128] = "";
	json_t *o = dftree_ctl(r->sm, NULL, err, sizeof(err));
	ck_assert_msg(o != NULL, "%s", err);
	return o;
}

/* A hot-spot and a lane order to P. */
static int ordered(const void *arg)
{
	const struct run *r = arg;
	return dft_num(r->sm, "hotspots") > 0 && r->sub[0].repath > 0;
}

/*
 * P sends to H, which takes a third of its link: S's port facing H waits,
 * so H is a hot-spot, and P, which waits and sends below half its link,
 * its contributor: a CA port, told to move its flows to H onto the slow
 * SL, never a hot-spot of itself.
 */
START_TEST(vswitch_pf_contributor)
{
	struct run r;
	memset(&r, 0, sizeof(r));
	vs_setup(&r);
	emu_subscribe(r.e, r.base, &r.sub[0], VS_P + 1);
	r.t = emu_traffic_new(r.e);
	ck_assert_ptr_nonnull(r.t);
	ck_assert_int_eq(emu_traffic_run(r.t, r.base, 10), 0);
	int h = emu_port_lid(r.e, VS_H, 1), p = emu_port_lid(r.e, VS_P, 1);
	double cap = emu_port_capacity(r.e, VS_H, 1);
	ck_assert_int_eq(emu_flow_set_sink(r.t, VS_H + 1, cap / 3), 0);
	ck_assert_int_ge(emu_flow_add(r.t, VS_P + 1, (uint32_t)h, cap, 0), 0);
	/* two intervals and a round, and the Report's way; more on a busy machine */
	emu_run_while(r.base, ordered, &r, 6000);

	json_t *o = hotspots(&r), *a = json_object_get(o, "hotspots");
	char *text = json_dumps(o, JSON_COMPACT);
	ck_assert_msg(json_array_size(a) == 1, "hot-spots: %s", text);
	json_t *hs = json_array_get(a, 0), *c = json_object_get(hs, "contributors");
	ck_assert_msg(json_integer_value(json_object_get(hs, "lid")) == h &&
		      !strcmp(json_string_value(json_object_get(hs, "node")), "H"),
		      "H (LID %d) the hot-spot: %s", h, text);
	ck_assert_msg(json_array_size(c) == 1 &&
		      json_integer_value(json_object_get(json_array_get(c, 0), "lid")) == p &&
		      !strcmp(json_string_value(json_object_get(json_array_get(c, 0), "node")),
			      "P"), "P (LID %d) its contributor: %s", p, text);
	free(text);
	json_decref(o);
	/* P's lane order: its flows to H onto the slow SL */
	ck_assert_int_eq(r.sub[0].repath, 1);
	ck_assert_uint_eq(r.sub[0].rec[0].dlid, (uint32_t)h);
	ck_assert_uint_eq(r.sub[0].rec[0].sl, 1);
	emu_traffic_run(r.t, r.base, 0);
	emu_subscriber_free(&r.sub[0]);
	emu_traffic_free(r.t);
	emu_run_free(&r.run);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dftree_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, exp1_without);
	tcase_add_test(tc, exp1_with);
	tcase_add_test(tc, sa_first);
	tcase_add_test(tc, vswitch_round_gmps);
	tcase_add_test(tc, vswitch_pf_contributor);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
