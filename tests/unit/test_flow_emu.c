/*
 * The emulator's traffic model (mad/emu/flowmodel.h) on examples worked
 * by hand, and its flows on the emulated fabric after the SM brought it
 * up: routed through the LFTs and SLtoVL tables the SM wrote, the PMA
 * counters moved as the rates say (mad/emu/emu_flow.c).
 *
 * Every capacity is C = 10^9 bytes/s: a 4x SDR link (4 lanes x 2 Gb/s of
 * data), the width and speed of every link of emu_tree_text().
 */
#include <check.h>
#include <math.h>
#include <stdio.h>

#include "mad/emu/emu.h"
#include "mad/emu/flowmodel.h"

#include "emu_testlib.h"

#define C 1e9
#define NEAR(x, y) ck_assert_msg(fabs((x) - (y)) < 2.0, "%s = %.3f, not %.3f", \
				 #x, (double)(x), (double)(y))

/* links of the hand-made examples */
enum { A, B, CC, D, U, H, V, X, SINK_H, SINK_V, SINK_X, N_LINKS };

static const double caps[N_LINKS] = { C, C, C, C, C, C, C, C, C, C, C };

struct ex {
	uint32_t link[N_LINKS][8];
	uint8_t vl[N_LINKS][8];
	struct fm_flow f[N_LINKS];
	unsigned n;
};

/* Appends a flow of demand d over the links of path (ended by -1), all on
 * VL 0 but the links from index vl1_from on, which use VL 1. */
static void flow(struct ex *x, double d, const int *path, int vl1_from)
{
	unsigned i = x->n++, k = 0;
	for (; path[k] >= 0; k++) {
		x->link[i][k] = (uint32_t)path[k];
		x->vl[i][k] = vl1_from >= 0 && (int)k >= vl1_from;
	}
	x->f[i] = (struct fm_flow){ .demand = d, .n = k, .link = x->link[i],
				    .vl = x->vl[i] };
}

static void solve(struct ex *x, struct fm_rate *out, double *sent, uint8_t *waits)
{
	char err[128] = "";
	ck_assert_msg(fm_solve(N_LINKS, caps, x->n, x->f, out, sent, waits, err,
			       sizeof(err)) == 0, "%s", err);
}

/* One link shared fairly: two greedy flows get half each; a small flow
 * gets its demand and leaves the rest to the other (max-min). */
START_TEST(fair_share)
{
	struct ex x = { .n = 0 };
	struct fm_rate r[N_LINKS];
	double sent[N_LINKS];
	uint8_t waits[N_LINKS];
	flow(&x, C, (int[]){ A, U, SINK_H, -1 }, -1);
	flow(&x, C, (int[]){ B, U, SINK_V, -1 }, -1);
	solve(&x, r, sent, waits);
	NEAR(r[0].rate, C / 2);
	NEAR(r[1].rate, C / 2);
	NEAR(sent[U], C);
	/* U is full: its sender never stands idle, so no wait there */
	ck_assert_double_eq(fm_wait_share(sent[U], C, waits[U]), 0);
	/* the sources wait at half their capacity */
	ck_assert_int_eq(waits[A], 1);
	NEAR(fm_wait_share(sent[A], C, waits[A]) * C, C / 2);

	x.n = 0;
	flow(&x, 0.2 * C, (int[]){ A, U, SINK_H, -1 }, -1);
	flow(&x, C, (int[]){ B, U, SINK_V, -1 }, -1);
	solve(&x, r, sent, waits);
	NEAR(r[0].rate, 0.2 * C);
	NEAR(r[1].rate, 0.8 * C);
	ck_assert_int_eq(r[0].wait_to, -1);	/* got its demand */
	ck_assert_int_eq(waits[A], 0);
}
END_TEST

/* Three sources into one output: a third each, every path waiting, the
 * output itself full and never idle. */
START_TEST(oversubscribed_output)
{
	struct ex x = { .n = 0 };
	struct fm_rate r[N_LINKS];
	double sent[N_LINKS];
	uint8_t waits[N_LINKS];
	flow(&x, C, (int[]){ A, H, SINK_H, -1 }, -1);
	flow(&x, C, (int[]){ B, H, SINK_H, -1 }, -1);
	flow(&x, C, (int[]){ CC, H, SINK_H, -1 }, -1);
	solve(&x, r, sent, waits);
	for (int i = 0; i < 3; i++) {
		NEAR(r[i].rate, C / 3);
		ck_assert_int_eq(r[i].wait_to, 1);	/* at H */
	}
	NEAR(sent[H], C);
	ck_assert_int_eq(waits[H], 1);
	ck_assert_double_eq(fm_wait_share(sent[H], C, waits[H]), 0);
	NEAR(fm_wait_share(sent[B], C, waits[B]) * 3 * C, 2 * C);
	/* a slower sink (the host takes 3/4 C): H then idles a quarter */
	double slow[N_LINKS];
	memcpy(slow, caps, sizeof(slow));
	slow[SINK_H] = 0.75 * C;
	char err[128] = "";
	ck_assert(fm_solve(N_LINKS, slow, x.n, x.f, r, sent, waits, err,
			   sizeof(err)) == 0);
	NEAR(r[0].rate, 0.25 * C);
	NEAR(fm_wait_share(sent[H], C, waits[H]) * C, 0.25 * C);
}
END_TEST

/*
 * The thesis's Exp I in small: contributors c1 (A, then the uplink U),
 * c2 (B) and c3 (CC) send to the hot host behind H; the victim v enters
 * the far switch by U too, on its way to V.  Alone, v gets C.  With the
 * contributors, max-min alone would give v what c1 leaves on U (2C/3),
 * but c1's packets fill the buffer (U, VL 0) and drain at C/3: v waits
 * behind them and gets C/3.  Moved to VL 1 on U and after, v has its own
 * buffer and gets its 2C/3 back (hol_other_vl).
 */
START_TEST(hol_shared_vl)
{
	struct ex x = { .n = 0 };
	struct fm_rate r[N_LINKS];
	double sent[N_LINKS];
	uint8_t waits[N_LINKS];
	const int victim[] = { D, U, V, SINK_V, -1 };
	flow(&x, C, victim, -1);
	solve(&x, r, sent, waits);
	NEAR(r[0].rate, C);	/* alone */

	x.n = 0;
	flow(&x, C, victim, -1);
	flow(&x, C, (int[]){ A, U, H, SINK_H, -1 }, -1);
	flow(&x, C, (int[]){ B, H, SINK_H, -1 }, -1);
	flow(&x, C, (int[]){ CC, H, SINK_H, -1 }, -1);
	solve(&x, r, sent, waits);
	for (int i = 1; i < 4; i++)
		NEAR(r[i].rate, C / 3);
	NEAR(r[0].rate, C / 3);		/* held behind c1 */
	ck_assert_int_eq(r[0].wait_to, 1);	/* waits at D and U, into (U, 0) */
	ck_assert_int_eq(waits[V], 0);		/* nothing waits past the block */
	ck_assert_double_eq(fm_wait_share(sent[V], C, waits[V]), 0);
	/* one FIFO: a victim offering C/2 behind c1 (offering C, leaving at
	 * C/3) is a third of the buffer and leaves at half c1's rate */
	x.f[0].demand = C / 2;
	solve(&x, r, sent, waits);
	NEAR(r[0].rate, C / 6);
	NEAR(r[1].rate, C / 3);
}
END_TEST

START_TEST(hol_other_vl)
{
	struct ex x = { .n = 0 };
	struct fm_rate r[N_LINKS];
	double sent[N_LINKS];
	uint8_t waits[N_LINKS];
	flow(&x, C, (int[]){ D, U, V, SINK_V, -1 }, 1);	/* VL 1 from U on */
	flow(&x, C, (int[]){ A, U, H, SINK_H, -1 }, -1);
	flow(&x, C, (int[]){ B, H, SINK_H, -1 }, -1);
	flow(&x, C, (int[]){ CC, H, SINK_H, -1 }, -1);
	solve(&x, r, sent, waits);
	NEAR(r[0].rate, 2 * C / 3);	/* what c1 leaves on U */
	for (int i = 1; i < 4; i++)
		NEAR(r[i].rate, C / 3);
	/* demand below what U leaves: the victim's full demand */
	x.f[0].demand = 0.6 * C;
	solve(&x, r, sent, waits);
	NEAR(r[0].rate, 0.6 * C);
	ck_assert_int_eq(r[0].wait_to, -1);
}
END_TEST

/*
 * The tree spreads upstream: w leaves the victim's host by the same
 * first switch (buffer (D, VL 0)) to X.  Max-min alone gives v and w
 * half of D each; v, held at (U, VL 0), fills (D, VL 0) at C/3 and holds
 * w there too.  On VL 1 from D on, w has its own buffer: D's remainder.
 */
START_TEST(hol_spreads_upstream)
{
	struct ex x = { .n = 0 };
	struct fm_rate r[N_LINKS];
	double sent[N_LINKS];
	uint8_t waits[N_LINKS];
	flow(&x, C, (int[]){ D, U, V, SINK_V, -1 }, -1);
	flow(&x, C, (int[]){ A, U, H, SINK_H, -1 }, -1);
	flow(&x, C, (int[]){ B, H, SINK_H, -1 }, -1);
	flow(&x, C, (int[]){ CC, H, SINK_H, -1 }, -1);
	flow(&x, C, (int[]){ D, X, SINK_X, -1 }, -1);
	solve(&x, r, sent, waits);
	NEAR(r[0].rate, C / 3);
	NEAR(r[4].rate, C / 3);
	x.vl[4][0] = x.vl[4][1] = x.vl[4][2] = 1;
	solve(&x, r, sent, waits);
	NEAR(r[4].rate, 2 * C / 3);
}
END_TEST

START_TEST(bad_input)
{
	char err[128] = "";
	uint32_t l[] = { N_LINKS };
	uint8_t vl[] = { 0 };
	struct fm_flow f = { .demand = C, .n = 1, .link = l, .vl = vl };
	struct fm_rate r;
	ck_assert_int_eq(fm_solve(N_LINKS, caps, 1, &f, &r, NULL, NULL, err,
				  sizeof(err)), -1);
	ck_assert_str_ne(err, "");
	l[0] = 0;
	vl[0] = 16;
	err[0] = '\0';
	ck_assert_int_eq(fm_solve(N_LINKS, caps, 1, &f, &r, NULL, NULL, err,
				  sizeof(err)), -1);
	ck_assert_str_ne(err, "");
}
END_TEST

/* ---- on the emulated fabric ---- */

#define LEAF(l) (0x100u + (l))
#define SPINE(s) (0x200u + (s))
#define LEAF_UP0 7	/* leaf ports 7, 8: to spines S0, S1 */

static uint64_t counter(struct emu *e, uint64_t guid, int port, enum pma_counter c)
{
	uint64_t v = 0;
	ck_assert_int_eq(emu_port_counter(e, guid, port, c, &v), 0);
	return v;
}

static uint32_t host_lid(struct emu *e, int h)
{
	int lid = emu_port_lid(e, emu_host_guid(h), 0);
	ck_assert_int_gt(lid, 0);
	return (uint32_t)lid;
}

/* The tree of emu_testlib.h brought up by the SM, and its traffic. */
static struct emu_traffic *traffic_up(struct emu_net *n)
{
	emu_net_up(n);
	struct emu_traffic *t = emu_traffic_new(n->e);
	ck_assert_ptr_nonnull(t);
	return t;
}

static void traffic_down(struct emu_net *n, struct emu_traffic *t)
{
	ck_assert_uint_eq(emu_violations(n->e), 0);
	emu_traffic_free(t);
	emu_net_down(n);
}

/* H0 -> H1 on leaf L0, half the link for one second. */
START_TEST(counters_follow_rates)
{
	struct emu_net n;
	struct emu_traffic *t = traffic_up(&n);
	NEAR(emu_port_capacity(n.e, emu_host_guid(0), 0), C);
	int id = emu_flow_add(t, emu_host_guid(0), host_lid(n.e, 1), C / 2, 0);
	ck_assert_int_ge(id, 0);
	ck_assert_int_eq(emu_flow_advance(t, 1.0), 0);
	NEAR(emu_flow_rate(t, id), C / 2);
	/* 5e8 octets = 125,000,000 units of 4; 5e8 / 2072 = 241312.7 packets */
	ck_assert_uint_eq(counter(n.e, emu_host_guid(0), 0, PMC_XMIT_DATA), 125000000);
	ck_assert_uint_eq(counter(n.e, emu_host_guid(0), 0, PMC_XMIT_PKTS), 241312);
	ck_assert_uint_eq(counter(n.e, LEAF(0), 1, PMC_RCV_DATA), 125000000);
	ck_assert_uint_eq(counter(n.e, LEAF(0), 2, PMC_XMIT_DATA), 125000000);
	ck_assert_uint_eq(counter(n.e, emu_host_guid(1), 0, PMC_RCV_DATA), 125000000);
	ck_assert_uint_eq(counter(n.e, LEAF(0), LEAF_UP0, PMC_XMIT_DATA), 0);
	ck_assert_uint_eq(counter(n.e, emu_host_guid(0), 0, PMC_XMIT_WAIT), 0);
	/* the 0.7 packet is carried: another second makes 482625 */
	ck_assert_int_eq(emu_flow_advance(t, 1.0), 0);
	ck_assert_uint_eq(counter(n.e, emu_host_guid(0), 0, PMC_XMIT_PKTS), 482625);
	/* stopped: nothing more */
	ck_assert_int_eq(emu_flow_stop(t, id), 0);
	ck_assert_int_eq(emu_flow_advance(t, 1.0), 0);
	ck_assert_uint_eq(counter(n.e, emu_host_guid(0), 0, PMC_XMIT_DATA), 250000000);
	ck_assert(emu_flow_rate(t, id) < 0);
	traffic_down(&n, t);
}
END_TEST

/*
 * A hot-spot: H3 and H4 (leaf L1) and H6 (leaf L2) send C each to H5
 * (L1 port 3), whose host takes 3/4 C: a quarter C each.  L1 port 3 sends
 * 3/4 C and idles with data a quarter of its ticks: 0.25 x 2.5e8 ticks of
 * 4 ns a second; each source port idles 3/4.  The flow from H6 crosses
 * one spine (whichever the LFTs name): its two links count its data.
 */
START_TEST(hotspot_xmit_wait)
{
	struct emu_net n;
	struct emu_traffic *t = traffic_up(&n);
	uint32_t hot = host_lid(n.e, 5);
	ck_assert_int_eq(emu_flow_set_sink(t, emu_host_guid(5), 0.75 * C), 0);
	int f[3] = {
		emu_flow_add(t, emu_host_guid(3), hot, C, 0),
		emu_flow_add(t, emu_host_guid(4), hot, C, 0),
		emu_flow_add(t, emu_host_guid(6), hot, C, 0),
	};
	ck_assert_int_eq(emu_flow_advance(t, 2.0), 0);
	for (int i = 0; i < 3; i++)
		NEAR(emu_flow_rate(t, f[i]), C / 4);
	ck_assert_uint_eq(counter(n.e, LEAF(1), 3, PMC_XMIT_DATA), 375000000);
	ck_assert_uint_eq(counter(n.e, LEAF(1), 3, PMC_XMIT_WAIT), 125000000);
	ck_assert_uint_eq(counter(n.e, emu_host_guid(3), 0, PMC_XMIT_WAIT), 375000000);
	ck_assert_uint_eq(counter(n.e, emu_host_guid(6), 0, PMC_XMIT_WAIT), 375000000);
	/* H6's data: up L2, down one spine to L1, 2 x C/4 / 4 units */
	uint64_t up = counter(n.e, LEAF(2), LEAF_UP0, PMC_XMIT_DATA) +
		      counter(n.e, LEAF(2), LEAF_UP0 + 1, PMC_XMIT_DATA);
	uint64_t down = counter(n.e, SPINE(0), 2, PMC_XMIT_DATA) +
			counter(n.e, SPINE(1), 2, PMC_XMIT_DATA);
	ck_assert_uint_eq(up, 125000000);
	ck_assert_uint_eq(down, 125000000);
	/* PortXmitWait stops at its 32 bits */
	ck_assert_int_eq(emu_flow_advance(t, 100.0), 0);
	ck_assert_uint_eq(counter(n.e, emu_host_guid(3), 0, PMC_XMIT_WAIT), 0xFFFFFFFFu);
	traffic_down(&n, t);
}
END_TEST

/*
 * Flows follow the tables: a flow to a LID nobody holds does not go; a
 * flow moved (the host side of a repath notice) to an SL the port's
 * SLtoVL table maps past OperationalVLs is dropped.
 */
START_TEST(flows_follow_tables)
{
	struct emu_net n;
	struct emu_traffic *t = traffic_up(&n);
	int lost = emu_flow_add(t, emu_host_guid(0), 0xBFFF, C, 0);
	int ok = emu_flow_add(t, emu_host_guid(0), host_lid(n.e, 9), C, 0);
	ck_assert_int_eq(emu_flow_advance(t, 1.0), 0);
	ck_assert(emu_flow_rate(t, lost) < 0);
	NEAR(emu_flow_rate(t, ok), C);
	uint8_t vl[16];
	ck_assert_int_eq(emu_sl2vl(n.e, 0x1000, 1, 1, vl), 0);
	int ovl = emu_port_oper_vls(n.e, emu_host_guid(0), 0);
	int sl = -1;
	for (int s = 0; s < 16 && sl < 0; s++)
		if (vl[s] == 15 || vl[s] >= ovl)
			sl = s;
	ck_assert_int_ge(sl, 0);
	ck_assert_int_eq(emu_flow_move(t, emu_host_guid(0), host_lid(n.e, 9),
				       (uint8_t)sl), 1);
	ck_assert_int_eq(emu_flow_advance(t, 1.0), 0);
	ck_assert(emu_flow_rate(t, ok) < 0);
	ck_assert_int_eq(emu_flow_move(t, emu_host_guid(0), host_lid(n.e, 9), 0), 1);
	ck_assert_int_eq(emu_flow_advance(t, 1.0), 0);
	NEAR(emu_flow_rate(t, ok), C);
	traffic_down(&n, t);
}
END_TEST

/*
 * Head-of-line blocking through the tables the SM wrote: H0 (leaf L0),
 * H3 and H4 (leaf L1) send C each to H5 (L1), a third each.  The victim
 * leaves H1 (L0) for a host of L2 or L3 that L0's LFT sends up the same
 * port as H5's LID: it enters the spine by the same input port and VL as
 * H0's flow and waits behind it, C/3 instead of C.  The contributors
 * moved to SL 1 (VL 1: the identity SLtoVL table, OperationalVLs above 1)
 * as a host does on a repath notice, the victim has its own buffer and
 * gets what H0's flow leaves on the uplink, 2C/3.
 */
START_TEST(hol_through_tables)
{
	struct emu_net n;
	struct emu_traffic *t = traffic_up(&n);
	/* the victim's destination: the first host past L1 sent up H5's way */
	int dst = 6, up = emu_lft_entry(n.e, LEAF(0), host_lid(n.e, 5));
	while (dst < 12 && emu_lft_entry(n.e, LEAF(0), host_lid(n.e, dst)) != up)
		dst++;
	uint32_t hot = host_lid(n.e, 5);
	ck_assert_int_lt(dst, 12);
	ck_assert_int_gt(emu_port_oper_vls(n.e, emu_host_guid(0), 0), 1);
	int v = emu_flow_add(t, emu_host_guid(1), host_lid(n.e, dst), C, 0);
	ck_assert_int_eq(emu_flow_advance(t, 1.0), 0);
	NEAR(emu_flow_rate(t, v), C);
	int c[3] = {
		emu_flow_add(t, emu_host_guid(0), hot, C, 0),
		emu_flow_add(t, emu_host_guid(3), hot, C, 0),
		emu_flow_add(t, emu_host_guid(4), hot, C, 0),
	};
	ck_assert_int_eq(emu_flow_advance(t, 1.0), 0);
	NEAR(emu_flow_rate(t, v), C / 3);
	for (int i = 0; i < 3; i++)
		NEAR(emu_flow_rate(t, c[i]), C / 3);
	for (int h = 0; h < 5; h++)
		if (h != 1 && h != 2)
			ck_assert_int_eq(emu_flow_move(t, emu_host_guid(h), hot, 1), 1);
	ck_assert_int_eq(emu_flow_advance(t, 1.0), 0);
	NEAR(emu_flow_rate(t, v), 2 * C / 3);
	for (int i = 0; i < 3; i++)
		NEAR(emu_flow_rate(t, c[i]), C / 3);
	traffic_down(&n, t);
}
END_TEST

/* Runs n's loop for ms milliseconds. */
static void loop_for(struct emu_net *n, int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
	ck_assert_int_eq(event_base_loopexit(n->base, &tv), 0);
	ck_assert_int_eq(event_base_dispatch(n->base), 0);
}

/*
 * Time from the loop's clock: ticks every 10 ms advance the time that
 * passed; the counters are the rate times the seconds they advanced (to
 * the unit, fractions carried); stopped, nothing moves.
 */
START_TEST(loop_clock)
{
	struct emu_net n;
	struct emu_traffic *t = traffic_up(&n);
	ck_assert_int_ge(emu_flow_add(t, emu_host_guid(0), host_lid(n.e, 1), C / 2, 0), 0);
	ck_assert_int_eq(emu_traffic_run(t, n.base, 10), 0);
	loop_for(&n, 200);
	double s = emu_traffic_run_s(t);
	ck_assert(s > 0.05 && s < 10);
	double units = C / 2 * s / 4;
	uint64_t got = counter(n.e, emu_host_guid(0), 0, PMC_XMIT_DATA);
	/*
	 * The whole units of the sum: at most units, more than units - 1;
	 * the ticks' seconds are whole microseconds (125 units each here), so
	 * units is a whole number that the sum of the ticks' doubles may miss
	 * by a rounding either way: 1e-6 of slack on both sides.
	 */
	ck_assert_msg((double)got <= units + 1e-6 && (double)got > units - 1 - 1e-6,
		      "%llu units, not %.6f", (unsigned long long)got, units);
	ck_assert_int_eq(emu_traffic_run(t, n.base, 0), 0);
	loop_for(&n, 50);
	ck_assert_uint_eq(counter(n.e, emu_host_guid(0), 0, PMC_XMIT_DATA), got);
	ck_assert(emu_traffic_run_s(t) == s);
	traffic_down(&n, t);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("flow");
	TCase *tc = tcase_create("model");
	tcase_add_test(tc, fair_share);
	tcase_add_test(tc, oversubscribed_output);
	tcase_add_test(tc, hol_shared_vl);
	tcase_add_test(tc, hol_other_vl);
	tcase_add_test(tc, hol_spreads_upstream);
	tcase_add_test(tc, bad_input);
	suite_add_tcase(s, tc);
	tc = tcase_create("emu");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, counters_follow_rates);
	tcase_add_test(tc, hotspot_xmit_wait);
	tcase_add_test(tc, flows_follow_tables);
	tcase_add_test(tc, hol_through_tables);
	tcase_add_test(tc, loop_clock);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
