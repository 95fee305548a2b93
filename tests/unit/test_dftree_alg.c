/*
 * dFtree's Algorithm 1 (sm/perf/dftree_alg.h): link rates of the
 * PortInfo encodings, Equations 1-3 from counter growth, the boundaries
 * (congestion equal to the threshold is not over it, utilisation equal
 * to the bound is not below it), the paper's fair-share example, one
 * hot-spot H-5 with two senders at utilisation 0.3 (its contributors)
 * and one at 0.7 (too busy to be one), no repeated notices, contributors joining
 * and vanishing, hot-spots vanishing, a contributor of two hot-spots, and
 * random runs against a plain transcription of the algorithm.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sm/base/topo.h"
#include "sm/perf/dftree_alg.h"

#define THR 100000.0
#define FAST 0
#define SLOW 1
#define OVER (THR * 2)
#define QUIET 10.0
#define GUID(lid) (0x0002c90300000000ull + (lid))
#define T0 1700000000000ull
#define MAXP 64

static const struct dft_params params = {
	.threshold = THR, .utilisation = 0.5, .fast_sl = FAST, .slow_sl = SLOW,
};

/* An input under construction: sw[] facing CA ports, ca[] the CA ports. */
struct fab {
	struct dft_sw_port sw[MAXP];
	struct dft_ca_port ca[MAXP];
	size_t n_sw, n_ca;
};

/* CA port lid with its own counters, and the switch port facing it. */
static void host(struct fab *f, uint16_t lid, double sw_cong, double cong,
		 double util)
{
	f->sw[f->n_sw++] = (struct dft_sw_port){
		.ca_guid = GUID(lid), .ca_lid = lid, .congestion = sw_cong };
	f->ca[f->n_ca++] = (struct dft_ca_port){
		.guid = GUID(lid), .lid = lid, .congestion = cong, .utilisation = util };
}

static struct dft_sw_port *sw_of(struct fab *f, uint16_t lid)
{
	for (size_t i = 0; i < f->n_sw; i++)
		if (f->sw[i].ca_lid == lid)
			return &f->sw[i];
	ck_abort_msg("no switch port faces lid %u", lid);
	return NULL;
}

static struct dft_ca_port *ca_of(struct fab *f, uint16_t lid)
{
	for (size_t i = 0; i < f->n_ca; i++)
		if (f->ca[i].lid == lid)
			return &f->ca[i];
	ck_abort_msg("no CA port lid %u", lid);
	return NULL;
}

static int step(struct dft_state *s, const struct fab *f, uint64_t now,
		struct dft_actions *a)
{
	struct dft_input in = { f->sw, f->n_sw, f->ca, f->n_ca };
	return dft_step(s, &in, &params, now, a);
}

static void ok_step(struct dft_state *s, const struct fab *f, uint64_t now,
		    struct dft_actions *a)
{
	ck_assert_int_eq(step(s, f, now, a), 0);
}

static void is_notice(const struct dft_notice *n, enum dft_notice_kind kind,
		      uint16_t to, uint16_t hot, uint8_t sl)
{
	ck_assert_int_eq(n->kind, kind);
	ck_assert_uint_eq(n->to_lid, to);
	ck_assert_uint_eq(n->to_guid, GUID(to));
	ck_assert_uint_eq(n->hot_lid, hot);
	ck_assert_uint_eq(n->hot_guid, GUID(hot));
	ck_assert_uint_eq(n->sl, sl);
}

/* Eight hosts H-1..H-8 at LIDs 1-8, nothing congested. */
static void quiet_fabric(struct fab *f)
{
	memset(f, 0, sizeof(*f));
	for (uint16_t lid = 1; lid <= 8; lid++)
		host(f, lid, QUIET, QUIET, 0.01);
}

/* The quiet fabric but the switch port facing H-5 over the threshold. */
static void hot5(struct fab *f)
{
	quiet_fabric(f);
	sw_of(f, 5)->congestion = OVER;
}

/* CA port lid's own congestion and utilisation. */
static void sends(struct fab *f, uint16_t lid, double cong, double util)
{
	ca_of(f, lid)->congestion = cong;
	ca_of(f, lid)->utilisation = util;
}

/* Each test's fabric, state and actions (a checked fixture). */
static struct fab f;
static struct dft_state s;
static struct dft_actions a;

static void setup(void)
{
	memset(&f, 0, sizeof(f));
	dft_state_init(&s);
	memset(&a, 0, sizeof(a));
}

static void teardown(void)
{
	dft_actions_free(&a);
	dft_state_free(&s);
}

START_TEST(link_rates)
{
	/* 8b/10b: 2.5 Gb/s x 4 lanes x 8/10 = 8 Gb/s = 1e9 octets/s */
	ck_assert_double_eq_tol(dft_link_rate(TOPO_WIDTH_4X, TOPO_SPEED_SDR), 1e9, 1);
	ck_assert_double_eq_tol(dft_link_rate(TOPO_WIDTH_4X, TOPO_SPEED_DDR), 2e9, 1);
	ck_assert_double_eq_tol(dft_link_rate(TOPO_WIDTH_4X, TOPO_SPEED_QDR), 4e9, 1);
	ck_assert_double_eq_tol(dft_link_rate(TOPO_WIDTH_1X, TOPO_SPEED_SDR), 0.25e9, 1);
	ck_assert_double_eq_tol(dft_link_rate(TOPO_WIDTH_2X, TOPO_SPEED_DDR), 1e9, 1);
	ck_assert_double_eq_tol(dft_link_rate(TOPO_WIDTH_8X, TOPO_SPEED_DDR), 4e9, 1);
	ck_assert_double_eq_tol(dft_link_rate(TOPO_WIDTH_12X, TOPO_SPEED_QDR), 12e9, 1);
	/* 64b/66b: FDR 14.0625 x 64/66 Gb/s a lane, EDR 25 */
	ck_assert_double_eq_tol(dft_link_rate(TOPO_WIDTH_4X, TOPO_SPEED_FDR),
				4 * 14.0625e9 * 64 / 66 / 8, 1);
	ck_assert_double_eq_tol(dft_link_rate(TOPO_WIDTH_4X, TOPO_SPEED_EDR), 12.5e9, 1);
	ck_assert_double_eq_tol(dft_link_rate(TOPO_WIDTH_4X, TOPO_SPEED_HDR), 25e9, 1);
	ck_assert_double_eq_tol(dft_link_rate(TOPO_WIDTH_4X, TOPO_SPEED_NDR), 50e9, 1);
	/* the extended speed is the active one: FDR whatever the low nibble */
	ck_assert_double_eq_tol(dft_link_rate(TOPO_WIDTH_1X, 0x11), 14.0625e9 * 64 / 66 / 8, 1);
	/* unknown: no width, two width bits, no speed, speed codes not listed */
	ck_assert_double_eq(dft_link_rate(0, TOPO_SPEED_QDR), 0);
	ck_assert_double_eq(dft_link_rate(0x03, TOPO_SPEED_QDR), 0);
	ck_assert_double_eq(dft_link_rate(TOPO_WIDTH_4X, 0), 0);
	ck_assert_double_eq(dft_link_rate(TOPO_WIDTH_4X, 0x03), 0);
	ck_assert_double_eq(dft_link_rate(TOPO_WIDTH_4X, 0x34), 0);
}
END_TEST

START_TEST(rates_from_deltas)
{
	struct dft_rates r, keep;
	double sdr4x = dft_link_rate(TOPO_WIDTH_4X, TOPO_SPEED_SDR);

	/* 2 s: 400,000 ticks, 250,000,000 words = 1e9 octets */
	ck_assert_int_eq(dft_port_rates(400000, 250000000, 2.0, sdr4x, &r), 0);
	ck_assert_double_eq_tol(r.congestion, 200000, 1e-6);
	ck_assert_double_eq_tol(r.bandwidth, 5e8, 1e-3);
	ck_assert_double_eq_tol(r.utilisation, 0.5, 1e-12);
	/* a 64-bit counter's growth past 2^53 still divides */
	ck_assert_int_eq(dft_port_rates(0, 1ull << 60, 1000.0, 1e18, &r), 0);
	ck_assert_double_eq_tol(r.bandwidth, 4.0 * (double)(1ull << 60) / 1000, 1e3);
	ck_assert_double_eq(r.congestion, 0);
	/* no interval, no link rate: not judged, r untouched */
	memset(&keep, 0x5a, sizeof(keep));
	r = keep;
	ck_assert_int_eq(dft_port_rates(1, 1, 0, sdr4x, &r), -1);
	ck_assert_int_eq(dft_port_rates(1, 1, -1, sdr4x, &r), -1);
	ck_assert_int_eq(dft_port_rates(1, 1, 2.0, 0, &r), -1);
	ck_assert_mem_eq(&r, &keep, sizeof(r));
}
END_TEST

START_TEST(threshold_boundary)
{
	quiet_fabric(&f);
	sends(&f, 1, OVER, 0.3);
	/* equal to the threshold: not over it, no hot-spot */
	sw_of(&f, 5)->congestion = THR;
	ok_step(&s, &f, T0, &a);
	ck_assert_uint_eq(s.n_hot, 0);
	ck_assert_uint_eq(a.n_notice + a.n_event, 0);
	/* just over it: a hot-spot, H-1 its contributor */
	sw_of(&f, 5)->congestion = THR + 1;
	ok_step(&s, &f, T0 + 1, &a);
	ck_assert_uint_eq(s.n_hot, 1);
	ck_assert_uint_eq(a.n_notice, 1);
	is_notice(&a.notice[0], DFT_REPATH, 1, 5, SLOW);

	/* a hot-spot's switch port back to equal: it stays, nothing sent,
	 * and a sender qualifying now is not taken at this step */
	sw_of(&f, 5)->congestion = THR;
	sends(&f, 2, OVER, 0.1);
	ok_step(&s, &f, T0 + 2, &a);
	ck_assert_uint_eq(s.n_hot, 1);
	ck_assert_uint_eq(s.hot[0].n_contrib, 1);
	ck_assert_uint_eq(a.n_notice + a.n_event, 0);
	/* a contributor's own congestion equal to the threshold: not one */
	ca_of(&f, 2)->congestion = THR;
	sw_of(&f, 5)->congestion = OVER;
	ok_step(&s, &f, T0 + 3, &a);
	ck_assert_uint_eq(a.n_notice, 0);
	/* below the threshold by one: cleared */
	sw_of(&f, 5)->congestion = THR - 1;
	ok_step(&s, &f, T0 + 4, &a);
	ck_assert_uint_eq(s.n_hot, 0);
	ck_assert_uint_eq(a.n_notice, 1);
	is_notice(&a.notice[0], DFT_UNPATH, 1, 5, FAST);
}
END_TEST

START_TEST(utilisation_boundary)
{
	hot5(&f);
	sends(&f, 1, OVER, 0.5);		/* equal: not below */
	sends(&f, 2, OVER, 0.4999);		/* below */
	ok_step(&s, &f, T0, &a);
	ck_assert_uint_eq(a.n_notice, 1);
	is_notice(&a.notice[0], DFT_REPATH, 2, 5, SLOW);
	ck_assert_uint_eq(s.hot[0].n_contrib, 1);
	ck_assert_uint_eq(s.hot[0].contrib[0].lid, 2);
}
END_TEST

/*
 * The paper's example: A and B both send to C, both over the threshold,
 * each with a fair half of its link: C is a hot-spot, neither A nor B a
 * contributor.
 */
START_TEST(fair_share_not_marked)
{
	memset(&f, 0, sizeof(f));
	host(&f, 1, QUIET, OVER, 0.50);		/* A */
	host(&f, 2, QUIET, OVER, 0.51);		/* B */
	host(&f, 3, OVER, QUIET, 0.0);		/* C */
	ok_step(&s, &f, T0, &a);
	ck_assert_uint_eq(s.n_hot, 1);
	ck_assert_uint_eq(s.hot[0].lid, 3);
	ck_assert_uint_eq(s.hot[0].n_contrib, 0);
	ck_assert_uint_eq(a.n_notice, 0);
	ck_assert_uint_eq(a.n_event, 1);
	ck_assert_int_eq(a.event[0].kind, DFT_APPEARED);
	ck_assert_uint_eq(a.event[0].lid, 3);
}
END_TEST

/*
 * The ibsim scenario of dFtree (counters ramped each interval): the
 * switch port facing H-5 over the threshold, H-1 and H-2 over it at
 * utilisation 0.3, H-3 over it at 0.7: exactly one
 * RePath each to H-1 and H-2 (H-5's LID, the slow SL), none to H-3, none
 * again while it lasts; the ramp stops: exactly one UnPath each with the
 * fast SL, then nothing.
 */
START_TEST(ibsim_scenario)
{
	quiet_fabric(&f);
	sw_of(&f, 5)->congestion = 250000;
	sends(&f, 1, 150000, 0.3);
	sends(&f, 2, 150000, 0.3);
	sends(&f, 3, 150000, 0.7);
	ok_step(&s, &f, T0, &a);
	ck_assert_uint_eq(a.n_notice, 2);
	is_notice(&a.notice[0], DFT_REPATH, 1, 5, SLOW);
	is_notice(&a.notice[1], DFT_REPATH, 2, 5, SLOW);
	ck_assert_uint_eq(a.n_event, 1);
	ck_assert_int_eq(a.event[0].kind, DFT_APPEARED);
	ck_assert_uint_eq(a.event[0].n_contrib, 2);
	ck_assert_double_eq(a.event[0].congestion, 250000);
	ck_assert_ptr_nonnull(dft_hotspot_by_lid(&s, 5));
	ck_assert_ptr_null(dft_hotspot_by_lid(&s, 1));
	ck_assert_uint_eq(dft_hotspot_by_lid(&s, 5)->since, T0);

	/* the ramp goes on: nothing new */
	for (int i = 1; i <= 3; i++) {
		ok_step(&s, &f, T0 + i * 2000, &a);
		ck_assert_uint_eq(a.n_notice + a.n_event, 0);
	}
	ck_assert_uint_eq(s.hot[0].n_contrib, 2);
	ck_assert_uint_eq(s.hot[0].since, T0);

	/* the ramp stops: every counter flat */
	quiet_fabric(&f);
	ok_step(&s, &f, T0 + 8000, &a);
	ck_assert_uint_eq(a.n_notice, 2);
	is_notice(&a.notice[0], DFT_UNPATH, 1, 5, FAST);
	is_notice(&a.notice[1], DFT_UNPATH, 2, 5, FAST);
	ck_assert_uint_eq(a.n_event, 1);
	ck_assert_int_eq(a.event[0].kind, DFT_CLEARED);
	ck_assert_uint_eq(a.event[0].n_contrib, 2);
	ck_assert_uint_eq(a.event[0].since, T0);
	ck_assert_uint_eq(s.n_hot, 0);
	ck_assert_ptr_null(dft_hotspot_by_lid(&s, 5));
	ok_step(&s, &f, T0 + 10000, &a);
	ck_assert_uint_eq(a.n_notice + a.n_event, 0);
}
END_TEST

START_TEST(new_contributor_joins)
{
	hot5(&f);
	sends(&f, 2, OVER, 0.2);
	ok_step(&s, &f, T0, &a);
	ck_assert_uint_eq(a.n_notice, 1);
	is_notice(&a.notice[0], DFT_REPATH, 2, 5, SLOW);
	/* H-7, then H-1, start sending to the hot-spot */
	sends(&f, 7, OVER, 0.2);
	ok_step(&s, &f, T0 + 1, &a);
	ck_assert_uint_eq(a.n_notice, 1);
	is_notice(&a.notice[0], DFT_REPATH, 7, 5, SLOW);
	ck_assert_uint_eq(a.n_event, 0);
	sends(&f, 1, OVER, 0.2);
	ok_step(&s, &f, T0 + 2, &a);
	ck_assert_uint_eq(a.n_notice, 1);
	is_notice(&a.notice[0], DFT_REPATH, 1, 5, SLOW);
	/* kept sorted by GUID, each since it joined */
	ck_assert_uint_eq(s.hot[0].n_contrib, 3);
	ck_assert_uint_eq(s.hot[0].contrib[0].lid, 1);
	ck_assert_uint_eq(s.hot[0].contrib[0].since, T0 + 2);
	ck_assert_uint_eq(s.hot[0].contrib[1].lid, 2);
	ck_assert_uint_eq(s.hot[0].contrib[1].since, T0);
	ck_assert_uint_eq(s.hot[0].contrib[2].lid, 7);
	/* a contributor going quiet stays one until the hot-spot clears */
	ca_of(&f, 2)->congestion = QUIET;
	ok_step(&s, &f, T0 + 3, &a);
	ck_assert_uint_eq(a.n_notice, 0);
	ck_assert_uint_eq(s.hot[0].n_contrib, 3);
	sw_of(&f, 5)->congestion = QUIET;
	ok_step(&s, &f, T0 + 4, &a);
	ck_assert_uint_eq(a.n_notice, 3);
	for (size_t i = 0; i < 3; i++)
		ck_assert_int_eq(a.notice[i].kind, DFT_UNPATH);
}
END_TEST

/* The hot-spot's own port congested and under-used: not its own contributor. */
START_TEST(not_own_contributor)
{
	hot5(&f);
	sends(&f, 5, OVER, 0.1);
	ok_step(&s, &f, T0, &a);
	ck_assert_uint_eq(s.n_hot, 1);
	ck_assert_uint_eq(a.n_notice, 0);
}
END_TEST

/* The hot-spot's switch port gone from the input: cleared with UnPaths. */
START_TEST(hotspot_vanishes)
{
	hot5(&f);
	sends(&f, 1, OVER, 0.2);
	ok_step(&s, &f, T0, &a);
	ck_assert_uint_eq(a.n_notice, 1);
	/* H-5's link goes down: its switch port and its CA port are not read */
	*sw_of(&f, 5) = f.sw[--f.n_sw];
	*ca_of(&f, 5) = f.ca[--f.n_ca];
	ok_step(&s, &f, T0 + 1, &a);
	ck_assert_uint_eq(s.n_hot, 0);
	ck_assert_uint_eq(a.n_notice, 1);
	is_notice(&a.notice[0], DFT_UNPATH, 1, 5, FAST);
	ck_assert_uint_eq(a.n_event, 1);
	ck_assert_int_eq(a.event[0].kind, DFT_VANISHED);
	ck_assert_uint_eq(a.event[0].lid, 5);
	ck_assert_uint_eq(a.event[0].n_contrib, 1);
}
END_TEST

/* H-5 takes another LID while hot: the old one cleared, the new one appears. */
START_TEST(hotspot_relid)
{
	hot5(&f);
	sends(&f, 1, OVER, 0.2);
	ok_step(&s, &f, T0, &a);
	sw_of(&f, 5)->ca_lid = 50;
	ca_of(&f, 5)->lid = 50;
	ok_step(&s, &f, T0 + 1, &a);
	ck_assert_uint_eq(a.n_event, 2);
	ck_assert_int_eq(a.event[0].kind, DFT_VANISHED);
	ck_assert_uint_eq(a.event[0].lid, 5);
	ck_assert_int_eq(a.event[1].kind, DFT_APPEARED);
	ck_assert_uint_eq(a.event[1].lid, 50);
	ck_assert_uint_eq(a.n_notice, 2);
	ck_assert_int_eq(a.notice[0].kind, DFT_UNPATH);
	ck_assert_uint_eq(a.notice[0].hot_lid, 5);
	ck_assert_uint_eq(a.notice[0].to_lid, 1);
	ck_assert_int_eq(a.notice[1].kind, DFT_REPATH);
	ck_assert_uint_eq(a.notice[1].hot_lid, 50);
	ck_assert_uint_eq(a.notice[1].to_lid, 1);
	ck_assert_uint_eq(s.n_hot, 1);
	ck_assert_uint_eq(s.hot[0].since, T0 + 1);
}
END_TEST

/* A contributor gone from the input: dropped, no notice; back: a new RePath. */
START_TEST(contributor_vanishes)
{
	struct fab gone;

	hot5(&f);
	sends(&f, 1, OVER, 0.2);
	sends(&f, 2, OVER, 0.2);
	ok_step(&s, &f, T0, &a);
	ck_assert_uint_eq(a.n_notice, 2);
	gone = f;
	*ca_of(&gone, 1) = gone.ca[--gone.n_ca];
	ok_step(&s, &gone, T0 + 1, &a);
	ck_assert_uint_eq(a.n_notice + a.n_event, 0);
	ck_assert_uint_eq(s.hot[0].n_contrib, 1);
	ck_assert_uint_eq(s.hot[0].contrib[0].lid, 2);
	/* back and still qualifying: a contributor again */
	ok_step(&s, &f, T0 + 2, &a);
	ck_assert_uint_eq(a.n_notice, 1);
	is_notice(&a.notice[0], DFT_REPATH, 1, 5, SLOW);
	/* gone again, then the hot-spot clears: only H-2 is told */
	ok_step(&s, &gone, T0 + 3, &a);
	*sw_of(&gone, 5) = (struct dft_sw_port){ GUID(5), 5, QUIET };
	ok_step(&s, &gone, T0 + 4, &a);
	ck_assert_uint_eq(a.n_notice, 1);
	is_notice(&a.notice[0], DFT_UNPATH, 2, 5, FAST);
	ck_assert_uint_eq(a.event[0].n_contrib, 1);
}
END_TEST

/* A contributor of two hot-spots: one RePath and one UnPath for each. */
START_TEST(two_hotspots)
{
	hot5(&f);
	sw_of(&f, 6)->congestion = OVER;
	sends(&f, 1, OVER, 0.2);
	ok_step(&s, &f, T0, &a);
	ck_assert_uint_eq(s.n_hot, 2);
	ck_assert_uint_eq(a.n_notice, 2);
	is_notice(&a.notice[0], DFT_REPATH, 1, 5, SLOW);
	is_notice(&a.notice[1], DFT_REPATH, 1, 6, SLOW);
	ok_step(&s, &f, T0 + 1, &a);
	ck_assert_uint_eq(a.n_notice, 0);
	sw_of(&f, 5)->congestion = QUIET;
	ok_step(&s, &f, T0 + 2, &a);
	ck_assert_uint_eq(a.n_notice, 1);
	is_notice(&a.notice[0], DFT_UNPATH, 1, 5, FAST);
	ck_assert_uint_eq(s.n_hot, 1);
	ck_assert_uint_eq(s.hot[0].lid, 6);
	ck_assert_uint_eq(s.hot[0].n_contrib, 1);
	sw_of(&f, 6)->congestion = QUIET;
	ok_step(&s, &f, T0 + 3, &a);
	ck_assert_uint_eq(a.n_notice, 1);
	is_notice(&a.notice[0], DFT_UNPATH, 1, 6, FAST);
}
END_TEST

START_TEST(refused)
{
	struct dft_input in;
	struct dft_params p = params;

	hot5(&f);
	sends(&f, 1, OVER, 0.2);
	ok_step(&s, &f, T0, &a);
	ck_assert_uint_eq(a.n_notice, 1);
	struct dft_hotspot *before = s.hot;

	/* a GUID twice among the CA ports, or among the switch ports */
	f.ca[f.n_ca++] = f.ca[0];
	errno = 0;
	ck_assert_int_eq(step(&s, &f, T0 + 1, &a), -1);
	ck_assert_int_eq(errno, EINVAL);
	f.n_ca--;
	f.sw[f.n_sw++] = f.sw[3];
	f.sw[3].congestion = QUIET;
	errno = 0;
	ck_assert_int_eq(step(&s, &f, T0 + 1, &a), -1);
	ck_assert_int_eq(errno, EINVAL);
	f.n_sw--;
	/* parameters out of range */
	in = (struct dft_input){ f.sw, f.n_sw, f.ca, f.n_ca };
	p.slow_sl = 16;
	ck_assert_int_eq(dft_step(&s, &in, &p, T0 + 1, &a), -1);
	p = params;
	p.threshold = -1;
	ck_assert_int_eq(dft_step(&s, &in, &p, T0 + 1, &a), -1);
	p = params;
	p.utilisation = 0;
	ck_assert_int_eq(dft_step(&s, &in, &p, T0 + 1, &a), -1);
	p.utilisation = NAN;
	ck_assert_int_eq(dft_step(&s, &in, &p, T0 + 1, &a), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_uint_eq(a.n_notice + a.n_event, 0);
	/* the state untouched by all of it */
	ck_assert_ptr_eq(s.hot, before);
	ck_assert_uint_eq(s.n_hot, 1);
	ck_assert_uint_eq(s.hot[0].n_contrib, 1);
	/* an empty input clears everything */
	in = (struct dft_input){ 0 };
	ck_assert_int_eq(dft_step(&s, &in, &params, T0 + 2, &a), 0);
	ck_assert_uint_eq(s.n_hot, 0);
	ck_assert_uint_eq(a.n_notice, 0);	/* H-1 is not in the input either */
	ck_assert_uint_eq(a.n_event, 1);
}
END_TEST

/* ---- random runs against Algorithm 1 written out plainly ---- */

#define RN 12		/* CA ports, each with its switch port */

struct ref {
	int hot[RN];
	int contrib[RN][RN];	/* [hot-spot][CA port] */
};

/* Algorithm 1 as the paper writes it, ports in lid order; counts notices. */
static void ref_step(struct ref *r, const struct fab *fb, unsigned *repaths,
		     unsigned *unpaths, int notice_of[2][RN][RN])
{
	for (int h = 0; h < RN; h++) {
		if (fb->sw[h].congestion > THR) {
			r->hot[h] = 1;
			for (int c = 0; c < RN; c++) {
				if (c == h || r->contrib[h][c])
					continue;
				if (fb->ca[c].congestion > THR && fb->ca[c].utilisation < 0.5) {
					r->contrib[h][c] = 1;
					notice_of[1][h][c]++;
					(*repaths)++;
				}
			}
		} else if (fb->sw[h].congestion < THR && r->hot[h]) {
			r->hot[h] = 0;
			for (int c = 0; c < RN; c++) {
				if (r->contrib[h][c]) {
					r->contrib[h][c] = 0;
					notice_of[0][h][c]++;
					(*unpaths)++;
				}
			}
		}
	}
}

static double pick(unsigned *seed, const double *vals, int n)
{
	return vals[rand_r(seed) % n];
}

START_TEST(random_against_reference)
{
	static const double cong[] = { 0, THR - 1, THR, THR + 1, OVER };
	static const double util[] = { 0, 0.3, 0.4999, 0.5, 0.7 };
	unsigned seed = 28;
	unsigned total = 0;

	for (int run = 0; run < 200; run++) {
		struct ref r;

		memset(&r, 0, sizeof(r));
		dft_state_free(&s);
		for (int t = 0; t < 20; t++) {
			int want[2][RN][RN] = { 0 }, got[2][RN][RN] = { 0 };
			unsigned rep = 0, unp = 0;

			memset(&f, 0, sizeof(f));
			for (uint16_t lid = 1; lid <= RN; lid++)
				host(&f, lid, pick(&seed, cong, 5), pick(&seed, cong, 5),
				     pick(&seed, util, 5));
			ref_step(&r, &f, &rep, &unp, want);
			ok_step(&s, &f, T0 + t, &a);
			ck_assert_uint_eq(a.n_notice, rep + unp);
			for (size_t i = 0; i < a.n_notice; i++) {
				const struct dft_notice *n = &a.notice[i];
				ck_assert_uint_eq(n->sl, n->kind == DFT_REPATH ? SLOW : FAST);
				got[n->kind == DFT_REPATH][n->hot_lid - 1][n->to_lid - 1]++;
			}
			ck_assert_mem_eq(got, want, sizeof(got));
			/* the state is the reference's, bounded by the input */
			size_t n_hot = 0;
			for (int h = 0; h < RN; h++)
				n_hot += r.hot[h];
			ck_assert_uint_eq(s.n_hot, n_hot);
			ck_assert_uint_le(s.n_hot, f.n_sw);
			for (size_t i = 0; i < s.n_hot; i++) {
				int h = s.hot[i].lid - 1, n_c = 0;
				ck_assert(r.hot[h]);
				for (int c = 0; c < RN; c++)
					n_c += r.contrib[h][c];
				ck_assert_uint_eq(s.hot[i].n_contrib, n_c);
				ck_assert_uint_lt(s.hot[i].n_contrib, f.n_ca);
			}
			total += rep + unp;
		}
	}
	/* the runs did exercise both notices */
	ck_assert_uint_gt(total, 1000);
}
END_TEST

static Suite *suite(void)
{
	Suite *su = suite_create("dftree_alg");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, link_rates);
	tcase_add_test(tc, rates_from_deltas);
	tcase_add_test(tc, threshold_boundary);
	tcase_add_test(tc, utilisation_boundary);
	tcase_add_test(tc, fair_share_not_marked);
	tcase_add_test(tc, ibsim_scenario);
	tcase_add_test(tc, new_contributor_joins);
	tcase_add_test(tc, not_own_contributor);
	tcase_add_test(tc, hotspot_vanishes);
	tcase_add_test(tc, hotspot_relid);
	tcase_add_test(tc, contributor_vanishes);
	tcase_add_test(tc, two_hotspots);
	tcase_add_test(tc, refused);
	tcase_add_test(tc, random_against_reference);
	suite_add_tcase(su, tc);
	return su;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
