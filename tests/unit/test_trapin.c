/*
 * Traps in (traps/trapin.c): the decision as a pure function, then the
 * daemon on the emulator -- a silent IsSM port probed once and never
 * waited on again, a storm of spoofed and counted traps from a host that
 * causes no sweep, and the two trap 128s of one failed switch-switch link
 * that cause one heavy sweep.
 */
#include <check.h>
#include <infiniband/mad.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/dispatch.h"
#include "mad/emu/emu.h"
#include "mad/smp.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/base/nodemap.h"
#include "sm/base/topo.h"
#include "traps/trapin.h"

#include "emu_testlib.h"

/* ---- the decision ---- */

/* a switch at LID 1 (port 0) with a CA at LIDs 2-3 (LMC 1) on its port 1 */
static void tiny(struct fabric *f)
{
	fabric_init(f);
	uint32_t sw = fabric_add_node(f, FAB_SWITCH, 4, 0x100);
	uint32_t ca = fabric_add_node(f, FAB_CA, 1, 0x200);
	ck_assert_uint_ne(sw, FAB_NONE);
	ck_assert_uint_ne(ca, FAB_NONE);
	fabric_link(f, fabric_port(f, sw, 1), fabric_port(f, ca, 1));
	for (uint32_t i = 0; i < f->n_ports; i++)
		f->ports[i].flags |= FPORT_PRESENT;
	fabric_portp(f, sw, 0)->lid = 1;
	fabric_portp(f, ca, 1)->lid = 2;
	f->lmc = 1;
	f->max_lid = 3;
	ck_assert_int_eq(fabric_index_lids(f), 0);
}

static enum trapin_kind decide(const struct fabric *f, int generic, unsigned num,
			       uint32_t issuer, int directed, uint32_t slid)
{
	struct trapin_trap t = {
		.generic = generic, .number = num, .issuer_lid = issuer,
		.directed = directed, .slid = directed ? 0xffff : slid,
	};
	struct trapin_verdict v;
	trapin_decide(f, &t, &v);
	ck_assert_ptr_nonnull(v.why);
	return v.kind;
}

START_TEST(t_decide)
{
	struct fabric f;
	tiny(&f);
	/* 128 from the switch itself: checked with the switch */
	ck_assert_int_eq(decide(&f, 1, 128, 1, 0, 1), TRAPIN_CHECK_SWITCH);
	/* ... directed-route: no SLID, the check decides */
	ck_assert_int_eq(decide(&f, 1, 128, 1, 1, 0), TRAPIN_CHECK_SWITCH);
	/* a host claiming the switch's LID: spoofed, whatever the number */
	ck_assert_int_eq(decide(&f, 1, 128, 1, 0, 2), TRAPIN_SPOOFED);
	ck_assert_int_eq(decide(&f, 1, 129, 1, 0, 3), TRAPIN_SPOOFED);
	ck_assert_int_eq(decide(&f, 0, 7, 1, 0, 2), TRAPIN_SPOOFED);
	/* a LID nobody holds, from a LID nobody holds */
	ck_assert_int_eq(decide(&f, 1, 128, 9, 0, 9), TRAPIN_UNKNOWN);
	ck_assert_int_eq(decide(&f, 1, 128, 9, 0, 2), TRAPIN_SPOOFED);
	/* 128 from a CA: only switches report link state changes */
	ck_assert_int_eq(decide(&f, 1, 128, 2, 0, 2), TRAPIN_UNKNOWN);
	/* LMC: the CA's second LID is the same port */
	ck_assert_int_eq(decide(&f, 1, 144, 2, 0, 3), TRAPIN_CHECK_PORT);
	ck_assert_int_eq(decide(&f, 1, 144, 2, 0, 2), TRAPIN_CHECK_PORT);
	ck_assert_int_eq(decide(&f, 1, 144, 9, 1, 0), TRAPIN_UNKNOWN);
	/* logged and counted */
	static const unsigned counted[] = { 129, 130, 131, 145, 256, 257, 258, 259, 3 };
	for (size_t i = 0; i < sizeof(counted) / sizeof(counted[0]); i++)
		ck_assert_int_eq(decide(&f, 1, counted[i], 2, 0, 2), TRAPIN_COUNT);
	ck_assert_int_eq(decide(&f, 0, 128, 1, 0, 1), TRAPIN_COUNT);	/* vendor */
	/* no model (not MASTER): the LIDs alone, nothing checked */
	ck_assert_int_eq(decide(NULL, 1, 128, 1, 0, 2), TRAPIN_SPOOFED);
	ck_assert_int_eq(decide(NULL, 1, 128, 1, 0, 1), TRAPIN_UNCHECKED);
	ck_assert_int_eq(decide(NULL, 1, 144, 1, 1, 0), TRAPIN_UNCHECKED);
	ck_assert_int_eq(decide(NULL, 1, 129, 1, 0, 1), TRAPIN_COUNT);
	ck_assert_int_eq(decide(NULL, 0, 144, 1, 0, 1), TRAPIN_COUNT);	/* vendor */
	fabric_free(&f);
}
END_TEST

/* ---- the daemon on the emulator ---- */

#define HOST_PORT(h) ((uint64_t)(0x1000 + 4 * (h)) + 1)

struct run {
	EMU_RUN;
	struct mad_transport host;	/* a host that never answers anything */
	uint64_t host_got;
};

static void setup(struct run *r)
{
	memset(r, 0, sizeof(*r));
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "trapin", .seed = 11,
		     .debug_env = "TRAPIN_DEBUG", .debug_level = LOG_INFO });
	r->sm = emu_sm_new(r->state, 20);	/* no light sweeps: only traps sweep */
	r->sm->cfg.mad_retries = 2;
	emu_sm_start(r->sm, r->base, r->e);
}

static void teardown(struct run *r)
{
	emu_run_stop_sm(&r->run);
	if (r->host.close)
		r->host.close(r->host.ctx);
	emu_run_free(&r->run);
}

static void run_ms(struct run *r, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
	event_base_loopexit(r->base, &tv);
	event_base_dispatch(r->base);
}

static int idle(const struct sm *sm)
{
	return (sm->sw.activity == SM_IDLE) && !sm->sw.heavy_wanted;
}

static void on_host_mad(void *arg, const uint8_t *mad, size_t len,
			const struct mad_addr *from, int status)
{
	struct run *r = arg;
	r->host_got++;	/* and never answered */
}

static uint64_t by_number(const struct trapin_stats *s, unsigned num)
{
	for (uint32_t i = 0; i < s->n_numbers; i++)
		if (s->number[i] == num)
			return s->by_number[i];
	return 0;
}

/* The host sends a trap, LID-routed to the SM. */
static void host_trap(struct run *r, unsigned num, uint32_t issuer, uint32_t k)
{
	uint8_t m[MAD_SIZE];
	smp_init_lid(m, IB_MAD_METHOD_TRAP, MAD_ATTR_NOTICE, 0);
	mad_set_field64(m, 0, IB_MAD_TRID_F, 0x5000 + k);
	uint8_t *d = smp_data(m);
	mad_set_field(d, 0, IB_NOTICE_IS_GENERIC_F, 1);
	mad_set_field(d, 0, IB_NOTICE_TYPE_F, 1);
	mad_set_field(d, 0, IB_NOTICE_TRAP_NUMBER_F, num);
	mad_set_field(d, 0, IB_NOTICE_ISSUER_LID_F, issuer);
	mad_set_field(d, 0, IB_NOTICE_DATA_LID_F, issuer);
	if (num >= 129 && num <= 131)
		d[10 + 4] = 1;	/* DataDetails PORTNO: the port in error */
	struct mad_addr to = { .lid = r->sm->sub.sm_lid };
	ck_assert_int_eq(mad_transport_send(&r->host, m, MAD_SIZE, &to), 0);
}

static uint32_t lid_of(struct run *r, uint64_t guid, int port)
{
	int lid = emu_port_lid(r->e, guid, port);
	ck_assert_int_gt(lid, 0);
	return (uint32_t)lid;
}

START_TEST(t_daemon_traps)
{
	struct run r;
	char err[256] = "";
	setup(&r);
	emu_run_sweeps(&r.run, 1);
	const struct trapin_stats *st = &r.sm->traps.st;
	ck_assert_uint_eq(st->received, 0);

	/*
	 * A host claims IsSM (trap 144: its CapabilityMask changed, a heavy
	 * sweep) and never answers SMInfo: that sweep waits out the probe's
	 * timeouts, the next ones do not ask it again.
	 */
	ck_assert_int_eq(emu_attach(r.e, r.base, HOST_PORT(5), &r.host, on_host_mad,
				    &r, err, sizeof(err)), 0);
	emu_run_sweeps(&r.run, 2);
	ck_assert_uint_eq(by_number(st, 144), 1);
	ck_assert_uint_eq(st->sweeps, 1);
	ck_assert_uint_eq(election_status(r.sm)->n_silent, 1);
	ck_assert_uint_eq(election_silent(r.sm)[0], HOST_PORT(5));
	uint64_t probed_ms = r.sm->sweep.last.sweep_ms;
	uint64_t host_got = r.host_got;
	ck_assert_uint_ge(host_got, 1);
	sweeper_request_heavy(r.sm, "test: after the probe");
	emu_run_sweeps(&r.run, 3);
	uint64_t quiet_ms = r.sm->sweep.last.sweep_ms;
	ck_assert_uint_eq(r.host_got, host_got);	/* not asked again */
	/* the probe: 3 tries of 20 ms; without it, well under one timeout */
	ck_assert_uint_ge(probed_ms, 3 * 20);
	ck_assert_uint_lt(quiet_ms + 2 * 20, probed_ms);
	fprintf(stderr, "test_trapin: heavy sweep with the silent IsSM port probed %llu ms, "
		"once known silent %llu ms\n", (unsigned long long)probed_ms,
		(unsigned long long)quiet_ms);

	/* a storm from the host: spoofed, unknown and counted traps, no sweep */
	uint32_t sw_lid = lid_of(&r, 0x101, 0), own = lid_of(&r, HOST_PORT(5), 0);
	static const unsigned counted[] = { 129, 130, 131, 145, 256, 257, 258, 259 };
	const unsigned rounds = 100;
	uint32_t k = 0;
	struct emu_counters c0, c1;
	emu_get_counters(r.e, &c0);
	uint64_t recv0 = st->received;
	char *before = emu_device_state(r.e, &r.topo, 1);
	struct emu_log lg;
	emu_log_capture(&lg, LOG_NOTICE);
	for (unsigned i = 0; i < rounds; i++) {
		if (i == 1) {	/* the first round's lines: 129 names the node and port */
			const struct fabric *mf = &r.sm->sub.model->f;
			uint32_t hn = fabric_find_node(mf, HOST_PORT(5) - 1);
			ck_assert_uint_ne(hn, FAB_NONE);
			char needle[160];
			snprintf(needle, sizeof(needle), "trap 129 from LID %u (\"%s\" port 1) (source LID %u): link integrity",
				 own, fabric_node_name(mf, hn), own);
			ck_assert_int_eq(emu_log_lines(&lg, needle), 1);
		}
		host_trap(&r, 128, sw_lid, k++);	/* spoofed: a switch's LID */
		host_trap(&r, 128, own, k++);		/* from a CA */
		for (size_t j = 0; j < sizeof(counted) / sizeof(counted[0]); j++)
			host_trap(&r, counted[j], own, k++);
		if (i % 10 == 0)
			run_ms(&r, 1);
	}
	run_ms(&r, 200);
	ck_assert_uint_eq(st->received - recv0, k);
	ck_assert_uint_eq(st->spoofed, rounds);
	ck_assert_uint_eq(st->unknown_issuer, rounds);
	ck_assert_uint_eq(by_number(st, 128), 2 * rounds);
	for (size_t j = 0; j < sizeof(counted) / sizeof(counted[0]); j++)
		ck_assert_uint_eq(by_number(st, counted[j]), rounds);
	ck_assert_uint_eq(r.sm->sweep.heavy_sweeps, 3);
	ck_assert(idle(r.sm));
	ck_assert_uint_eq(st->sweeps, 1);
	/* 129-131 counted by the node and port in error */
	ck_assert_uint_eq(st->n_port_err, 1);
	ck_assert_uint_eq(st->port_err[0].guid, HOST_PORT(5) - 1);
	ck_assert_uint_eq(st->port_err[0].port, 1);
	ck_assert_uint_eq(st->port_err[0].count, 3 * rounds);
	ck_assert_uint_eq(st->port_err_other, 0);
	emu_get_counters(r.e, &c1);
	ck_assert_uint_eq(c1.trap_represses - c0.trap_represses, k);	/* every one answered */
	ck_assert_uint_eq(st->represses, st->received);
	char *after = emu_device_state(r.e, &r.topo, 1);
	ck_assert_str_eq(before, after);	/* nothing written */
	free(before);
	free(after);

	/*
	 * One switch-switch link fails: both switches send trap 128 and
	 * one heavy sweep follows.  The link: a leaf's uplink that neither
	 * end uses to reach the SM, so both traps arrive.
	 */
	uint32_t smlid = r.sm->sub.sm_lid;
	uint64_t leaf = 0;
	int lport = 0, sport = 0;
	uint64_t spine = 0;
	for (int l = 1; l < 4 && !leaf; l++)
		for (int s = 0; s < 2 && !leaf; s++) {
			int up = 7 + s;
			if (emu_lft_entry(r.e, 0x100 + (uint64_t)l, smlid) == up)
				continue;
			leaf = 0x100 + (uint64_t)l;
			lport = up;
			spine = 0x200 + (uint64_t)s;
			sport = l + 1;
		}
	ck_assert_uint_ne(leaf, 0);
	ck_assert_int_ne(emu_lft_entry(r.e, spine, smlid), sport);
	uint64_t t128 = by_number(st, 128), sweeps = st->sweeps;
	ck_assert_int_eq(emu_link_down(r.e, leaf, lport), 0);
	emu_run_sweeps(&r.run, 4);
	run_ms(&r, 300);	/* and no second one */
	ck_assert_uint_eq(r.sm->sweep.heavy_sweeps, 4);
	ck_assert(idle(r.sm));
	ck_assert_uint_eq(by_number(st, 128) - t128, 2);
	ck_assert_uint_eq(st->sweeps - sweeps, 1);
	ck_assert_int_eq(emu_port_state_change(r.e, leaf), 0);
	ck_assert_int_eq(emu_port_state_change(r.e, spine), 0);
	ck_assert_uint_eq(emu_violations(r.e), 0);

	/* trap 144 from the silent host: it changed, its SMInfo is asked again */
	host_trap(&r, 144, own, k++);
	run_ms(&r, 100);
	ck_assert_uint_eq(election_status(r.sm)->n_silent, 0);
	ck_assert_uint_eq(r.sm->sweep.heavy_sweeps, 4);	/* its CapabilityMask is as it was */
	teardown(&r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("trapin");
	TCase *tc = tcase_create("trapin");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_decide);
	tcase_add_test(tc, t_daemon_traps);
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
