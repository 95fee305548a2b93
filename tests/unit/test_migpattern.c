/*
 * The vSwitch paper's Fig. 8 study pieces (ibsmd --offline
 * --migrate-pattern): the migration patterns of reconfig/migpattern.h on
 * placements counted by hand, and the bisection quality of
 * routing/verify/bisect.h on a three-switch fabric counted by hand.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reconfig/migpattern.h"
#include "routing/engine.h"
#include "routing/verify/bisect.h"
#include "sm/base/fabric.h"
#include "sm/base/topo.h"
#include "sm/model/lids.h"

#define F MIGPAT_FREE

/* A placement of n_hyp * vfs slots as given (VM numbers or F). */
static void place(struct migpat_place *p, uint32_t n_hyp, uint32_t vfs,
		  const uint32_t *slots)
{
	ck_assert_int_eq(migpat_place_init(p, n_hyp, vfs, 0, 0, 1), 0);
	for (uint32_t i = 0; i < n_hyp * vfs; i++) {
		p->slot[i] = slots[i];
		p->n_vm += slots[i] != F;
	}
}

/* Every move valid on p as it goes (the VM there, the VF free), applied. */
static void replay(struct migpat_place *p, const struct migpat_move *mv,
		   uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_uint_eq(p->slot[mv[i].from], mv[i].vm);
		ck_assert_uint_eq(p->slot[mv[i].to], F);
		migpat_apply(p, &mv[i]);
	}
}

START_TEST(t_names)
{
	ck_assert_int_eq(migpat_parse("random"), MIGPAT_RANDOM);
	ck_assert_int_eq(migpat_parse("consolidate"), MIGPAT_CONSOLIDATE);
	ck_assert_int_eq(migpat_parse("grouping"), MIGPAT_GROUPING);
	ck_assert_int_eq(migpat_parse("to-uniform"), MIGPAT_TO_UNIFORM);
	ck_assert_int_eq(migpat_parse("uniform"), -1);
	ck_assert_str_eq(migpat_name(MIGPAT_TO_UNIFORM), "to-uniform");
}
END_TEST

/*
 * consolidate, 4 hypervisors of 2 VFs, VMs 0 on h1, 1 and 2 on h2, 3 on
 * h3: shares h0 2, h1 2; the highest VM of the highest hypervisor over
 * its share goes to the lowest free VF of the lowest one under it:
 * VM 3 (slot 7) to slot 0, VM 2 (slot 5) to slot 1, VM 1 (slot 4) to 3.
 */
START_TEST(t_consolidate)
{
	char err[128];
	const uint32_t s[] = { F, F, 0, F, 1, 2, F, 3 };
	const struct migpat_move want[] = { { 3, 7, 0 }, { 2, 5, 1 }, { 1, 4, 3 } };
	struct migpat_place p;
	struct migpat_move *mv;
	uint32_t n;
	place(&p, 4, 2, s);
	ck_assert_int_eq(migpat_plan(MIGPAT_CONSOLIDATE, &p, 1, &mv, &n, err,
				     sizeof(err)), 0);
	ck_assert_uint_eq(n, 3);
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_uint_eq(mv[i].vm, want[i].vm);
		ck_assert_uint_eq(mv[i].from, want[i].from);
		ck_assert_uint_eq(mv[i].to, want[i].to);
	}
	replay(&p, mv, n);
	ck_assert_uint_eq(migpat_load(&p, 0), 2);
	ck_assert_uint_eq(migpat_load(&p, 1), 2);
	free(mv);
	migpat_place_free(&p);
}
END_TEST

/*
 * to-uniform, 3 hypervisors of 4 VFs, loads 4, 1, 0: VM 3 (slot 3) to
 * h2's slot 8 (loads 3 1 1), VM 2 (slot 2) to h1's slot 5 (2 2 1): done.
 */
START_TEST(t_to_uniform)
{
	char err[128];
	const uint32_t s[] = { 0, 1, 2, 3, 4, F, F, F, F, F, F, F };
	struct migpat_place p;
	struct migpat_move *mv;
	uint32_t n;
	place(&p, 3, 4, s);
	ck_assert_int_eq(migpat_plan(MIGPAT_TO_UNIFORM, &p, 1, &mv, &n, err,
				     sizeof(err)), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(mv[0].vm, 3);
	ck_assert_uint_eq(mv[0].from, 3);
	ck_assert_uint_eq(mv[0].to, 8);
	ck_assert_uint_eq(mv[1].vm, 2);
	ck_assert_uint_eq(mv[1].from, 2);
	ck_assert_uint_eq(mv[1].to, 5);
	free(mv);
	migpat_place_free(&p);
}
END_TEST

/* random: 2 * hypervisors moves, each to another hypervisor; the seed decides. */
START_TEST(t_random)
{
	char err[128];
	struct migpat_place p, q;
	struct migpat_move *mv, *mv2;
	uint32_t n, n2;
	ck_assert_int_eq(migpat_place_init(&p, 4, 2, 4, 0, 7), 0);
	ck_assert_int_eq(migpat_place_init(&q, 4, 2, 4, 0, 7), 0);
	ck_assert_mem_eq(p.slot, q.slot, 8 * sizeof(*p.slot));
	ck_assert_int_eq(migpat_plan(MIGPAT_RANDOM, &p, 9, &mv, &n, err, sizeof(err)), 0);
	ck_assert_int_eq(migpat_plan(MIGPAT_RANDOM, &q, 9, &mv2, &n2, err, sizeof(err)), 0);
	ck_assert_uint_eq(n, 8);
	ck_assert_uint_eq(n2, 8);
	ck_assert_mem_eq(mv, mv2, n * sizeof(*mv));
	for (uint32_t i = 0; i < n; i++)
		ck_assert_uint_ne(mv[i].from / 2, mv[i].to / 2);
	replay(&p, mv, n);
	free(mv);
	free(mv2);
	/* a full fabric has no VF to move to */
	migpat_place_free(&q);
	ck_assert_int_eq(migpat_place_init(&q, 2, 2, 4, 0, 7), 0);
	ck_assert_int_eq(migpat_plan(MIGPAT_RANDOM, &q, 9, &mv, &n, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "no free VF"));
	migpat_place_free(&q);
	migpat_place_free(&p);
	/* uniform initial: VM i on hypervisor i mod 4 */
	ck_assert_int_eq(migpat_place_init(&p, 4, 2, 6, 1, 7), 0);
	for (uint32_t h = 0; h < 4; h++)
		ck_assert_uint_eq(migpat_load(&p, h), h < 2 ? 2 : 1);
	migpat_place_free(&p);
}
END_TEST

/*
 * grouping: 2 VMs make two groups of one (VMs / 4 rounds up to 1), each
 * alone on a hypervisor next to the other's; 32 VMs on 16 hypervisors of
 * 4 VFs: groups of 8 on two hypervisors each, four full hypervisors in a
 * row, nothing else moved.
 */
START_TEST(t_grouping)
{
	char err[128];
	const uint32_t s[] = { 0, F, F, F, F, F, F, 1 };
	struct migpat_place p;
	struct migpat_move *mv;
	uint32_t n;
	for (uint64_t seed = 1; seed <= 8; seed++) {
		place(&p, 4, 2, s);
		ck_assert_int_eq(migpat_plan(MIGPAT_GROUPING, &p, seed, &mv, &n, err,
					     sizeof(err)), 0);
		ck_assert_uint_le(n, 2);
		replay(&p, mv, n);
		uint32_t h0 = F, h1 = F;
		for (uint32_t i = 0; i < 8; i++)
			if (p.slot[i] != F)
				*(h0 == F ? &h0 : &h1) = i / 2;
		ck_assert_uint_eq(h1, h0 + 1);
		free(mv);
		migpat_place_free(&p);
	}
	for (uint64_t seed = 1; seed <= 8; seed++) {
		ck_assert_int_eq(migpat_place_init(&p, 16, 4, 32, 0, seed), 0);
		ck_assert_int_eq(migpat_plan(MIGPAT_GROUPING, &p, seed, &mv, &n, err,
					     sizeof(err)), 0);
		replay(&p, mv, n);
		uint32_t run = 0, best = 0;
		for (uint32_t h = 0; h < 16; h++) {
			run = migpat_load(&p, h) == 4 ? run + 1 : 0;
			best = run > best ? run : best;
		}
		ck_assert_uint_ge(best, 4);
		ck_assert_uint_le(n, 32);
		free(mv);
		migpat_place_free(&p);
	}
}
END_TEST

/* ---- the bisection quality ---- */

/*
 * Spine S over leaves A and B, hosts a0 a1 on A, b0 b1 on B.  Four
 * endpoints make two flows a run; the three pairings are equally likely:
 * {a0 a1}{b0 b1} (1/3) stays in the leaves, share 1; a cross pairing
 * (2/3) has both flows up S in the same direction half the time (both
 * share A->S or B->S: 1/2 each) and in opposite ones otherwise (1).
 * Expected: 1/3 + 2/3 * (1/2 * 1/2 + 1/2 * 1) = 5/6; the worst run 1/2.
 */
static const char FAB[] =
	"switchguid=0x10\nSwitch\t2 \"S\"\n[1]\t\"A\"[1]\n[2]\t\"B\"[1]\n\n"
	"switchguid=0x20\nSwitch\t3 \"A\"\n[1]\t\"S\"[1]\n[2]\t\"a0\"[1]\n[3]\t\"a1\"[1]\n\n"
	"switchguid=0x30\nSwitch\t3 \"B\"\n[1]\t\"S\"[2]\n[2]\t\"b0\"[1]\n[3]\t\"b1\"[1]\n\n"
	"caguid=0x100\nHca\t1 \"a0\"\n[1]\t\"A\"[2]\n\n"
	"caguid=0x200\nHca\t1 \"a1\"\n[1]\t\"A\"[3]\n\n"
	"caguid=0x300\nHca\t1 \"b0\"\n[1]\t\"B\"[2]\n\n"
	"caguid=0x400\nHca\t1 \"b1\"\n[1]\t\"B\"[3]\n\n";

static uint32_t port_of(const struct fabric *f, const char *desc)
{
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (!strcmp(f->nodes[i].desc, desc))
			return fabric_port(f, i, 1);
	ck_abort_msg("no %s", desc);
	return FAB_NONE;
}

START_TEST(t_bisect)
{
	extern const struct routing_engine minhop_engine;
	char err[256] = "";
	struct fabric f;
	struct lft_tables t;
	struct lid_report rep;
	struct route_opts o = { 0 };
	struct bisect_result r, r2;

	fabric_init(&f);
	ck_assert_int_eq(topo_parse_string(&f, FAB, "bisect.net", err, sizeof(err)), 0);
	ck_assert_int_eq(lids_assign(&f, NULL, 0, &rep), 0);
	ck_assert_int_eq(lft_tables_alloc(&t, &f), 0);
	ck_assert_int_eq(minhop_engine.route(&f, &o, &t, err, sizeof(err)), 0);
	uint32_t ep[4] = { port_of(&f, "a0"), port_of(&f, "a1"),
			   port_of(&f, "b0"), port_of(&f, "b1") };
	ck_assert_int_eq(bisect_quality(&f, &t, ep, 4, 20000, 1, &r), 0);
	ck_assert_uint_eq(r.flows, 2);
	ck_assert_uint_eq(r.runs, 20000);
	ck_assert_uint_eq(r.unrouted, 0);
	ck_assert_msg(fabs(r.quality - 5.0 / 6) < 0.01, "quality %f", r.quality);
	ck_assert_double_eq(r.worst_run, 0.5);
	/* the same seed, the same runs */
	ck_assert_int_eq(bisect_quality(&f, &t, ep, 4, 20000, 1, &r2), 0);
	ck_assert_double_eq(r.quality, r2.quality);
	/* one flow a run: never shared */
	uint32_t two[2] = { ep[0], ep[2] };
	ck_assert_int_eq(bisect_quality(&f, &t, two, 2, 100, 1, &r), 0);
	ck_assert_double_eq(r.quality, 1.0);
	/* S drops b0's LID: a0 -> b0 (half the runs) gets nothing */
	uint32_t b0 = f.ports[ep[2]].lid;
	for (uint32_t row = 0; row < t.n_sw; row++)
		if (!strcmp(f.nodes[t.sw_node[row]].desc, "S"))
			lft_row(&t, row)[b0] = LFT_DROP;
	ck_assert_int_eq(bisect_quality(&f, &t, two, 2, 20000, 1, &r), 0);
	ck_assert_uint_gt(r.unrouted, 0);
	ck_assert_double_eq(r.worst_run, 0.0);
	ck_assert_msg(fabs(r.quality - 0.5) < 0.02, "quality %f", r.quality);
	ck_assert_int_eq(bisect_quality(&f, &t, two, 1, 1, 1, &r), -1);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("migpattern");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, t_names);
	tcase_add_test(tc, t_consolidate);
	tcase_add_test(tc, t_to_uniform);
	tcase_add_test(tc, t_random);
	tcase_add_test(tc, t_grouping);
	tcase_add_test(tc, t_bisect);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
