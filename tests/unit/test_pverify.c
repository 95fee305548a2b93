/*
 * The partition isolation verifier (routing/verify/pverify.c) on a hand-built
 * two-level fat tree with hand-set LFTs (part_testlib.h): the links it
 * counts shared, limited-to-limited flows ignored, the phy and vlane
 * verdicts, strict making them errors, the routes per link.
 */
#include <check.h>
#include <stdlib.h>

#include "routing/verify/pverify.h"
#include "part_testlib.h"

static const char *const A_MEM[] = { "H0", "H2", NULL };
static const char *const B_MEM[] = { "H1", "H3", NULL };
static const char *const B_LIMITED[] = { "-H1", "-H3", NULL };

struct run {
	struct fabric f;
	struct lft_tables t;
	struct part_model m;
	struct pverify_report r;
};

/* tenantA (policy pa) and tenantB (members bm, def) over LFTs up. */
static void run(struct run *x, const uint8_t up[4], int pa,
		const char *const *bm, int strict)
{
	struct config *c = pt_config(strict);
	pt_fabric(&x->f);
	pt_lfts(&x->f, &x->t, up);
	if (bm) {
		pt_part(c, "tenantA", pa, -1, A_MEM);
		pt_part(c, "tenantB", PART_DEF, -1, bm);
	}
	pt_resolve(c, &x->f, &x->m);
	ck_assert_int_eq(pverify(&x->f, &x->t, &x->m, &x->r), 0);
	free(c);
}

static void done(struct run *x)
{
	pverify_free(&x->r);
	part_model_free(&x->m);
	lft_tables_free(&x->t);
	fabric_free(&x->f);
}

START_TEST(shared_links_counted)
{
	struct run x;
	run(&x, PT_SHARED, PART_DEF, B_MEM, 0);
	/* L0->S0, S0->L1, L1->S0, S0->L0 carry both tenants */
	ck_assert_uint_eq(x.r.links, 8);
	ck_assert_uint_eq(x.r.tenants, 2);
	ck_assert_uint_eq(x.r.shared_links, 4);
	ck_assert_uint_eq(x.r.part[1].links, 4);
	ck_assert_uint_eq(x.r.part[1].shared, 4);
	ck_assert_uint_eq(x.r.part[2].shared, 4);
	ck_assert(x.r.share[1 * 3 + 2] && x.r.share[2 * 3 + 1]);
	ck_assert_uint_eq(x.r.violations, 0);	/* def: reported only */
	/* 4 pairs (two per tenant), 2 per used link, S1's links idle */
	ck_assert_uint_eq(x.r.pairs, 4);
	ck_assert_uint_eq(x.r.undelivered, 0);
	ck_assert_uint_eq(x.r.max_routes, 2);
	ck_assert_uint_eq(x.r.min_routes, 0);
	done(&x);
}
END_TEST

START_TEST(apart_shares_none)
{
	struct run x;
	run(&x, PT_APART, PART_PHY, B_MEM, 1);
	ck_assert_uint_eq(x.r.shared_links, 0);
	ck_assert_uint_eq(x.r.part[1].links, 4);
	ck_assert_uint_eq(x.r.part[1].shared, 0);
	ck_assert(!x.r.share[1 * 3 + 2]);
	ck_assert_uint_eq(x.r.violations, 0);
	ck_assert_uint_eq(x.r.errors, 0);
	ck_assert_uint_eq(x.r.max_routes, 1);
	ck_assert_uint_eq(x.r.min_routes, 1);
	done(&x);
}
END_TEST

START_TEST(limited_pairs_ignored)
{
	struct run x;
	/* tenantB's members are both limited: no tenantB flow at all */
	run(&x, PT_SHARED, PART_PHY, B_LIMITED, 1);
	ck_assert_uint_eq(x.r.shared_links, 0);
	ck_assert_uint_eq(x.r.part[2].links, 0);
	ck_assert_uint_eq(x.r.part[1].links, 4);
	ck_assert_uint_eq(x.r.pairs, 2);
	ck_assert_uint_eq(x.r.violations, 0);
	done(&x);
}
END_TEST

START_TEST(phy_violation)
{
	struct run x;
	run(&x, PT_SHARED, PART_PHY, B_MEM, 0);
	ck_assert(x.r.part[1].violated);
	ck_assert(!x.r.part[2].violated);
	ck_assert_uint_eq(x.r.violations, 1);
	ck_assert_uint_eq(x.r.errors, 0);	/* best-effort: a warning */
	done(&x);
	run(&x, PT_SHARED, PART_PHY, B_MEM, 1);
	ck_assert_uint_eq(x.r.errors, 1);	/* strict: an error */
	done(&x);
}
END_TEST

START_TEST(vlane_by_sl)
{
	struct run x;
	run(&x, PT_SHARED, PART_VLANE, B_MEM, 1);
	/* no SLs: both on VL 0 */
	ck_assert_uint_eq(x.r.part[1].vl_shared, 4);
	ck_assert(x.r.part[1].violated);
	ck_assert_uint_eq(x.r.errors, 1);
	pverify_free(&x.r);
	/* tenantA on SL 1, SL i -> VL i: apart on every link */
	x.t.part_sl = calloc(3, 1);
	ck_assert_ptr_nonnull(x.t.part_sl);
	x.t.n_part_sl = 3;
	x.t.part_sl[1] = 1;
	ck_assert_int_eq(lft_sl2vl_identity(&x.f, &x.t, 4), 0);
	ck_assert_int_eq(pverify(&x.f, &x.t, &x.m, &x.r), 0);
	ck_assert_uint_eq(x.r.part[1].vls, 1u << 1);
	ck_assert_uint_eq(x.r.part[2].vls, 1u << 0);
	ck_assert_uint_eq(x.r.part[1].shared, 4);
	ck_assert_uint_eq(x.r.part[1].vl_shared, 0);
	ck_assert_uint_eq(x.r.errors, 0);
	pverify_free(&x.r);
	/* SL 5 is past the table's 4 data VLs: back on VL 0, shared */
	x.t.part_sl[1] = 5;
	ck_assert_int_eq(pverify(&x.f, &x.t, &x.m, &x.r), 0);
	ck_assert_uint_eq(x.r.part[1].vls, 1u << 0);
	ck_assert_uint_eq(x.r.part[1].vl_shared, 4);
	done(&x);
}
END_TEST

START_TEST(no_tenants)
{
	struct run x;
	run(&x, PT_SHARED, PART_DEF, NULL, 0);
	/* hosts full default members: all 12 ordered pairs count */
	ck_assert_uint_eq(x.r.tenants, 0);
	ck_assert_uint_eq(x.r.pairs, 12);
	ck_assert_uint_eq(x.r.shared_links, 0);
	ck_assert_uint_eq(x.r.max_routes, 4);
	ck_assert_uint_eq(x.r.min_routes, 0);
	done(&x);
}
END_TEST

START_TEST(undelivered_counted)
{
	struct run x;
	run(&x, PT_SHARED, PART_DEF, B_MEM, 0);
	pverify_free(&x.r);
	pt_set(&x.f, &x.t, "S0", "H2", LFT_DROP);
	ck_assert_int_eq(pverify(&x.f, &x.t, &x.m, &x.r), 0);
	ck_assert_uint_eq(x.r.undelivered, 1);	/* H0 -> H2 */
	done(&x);
}
END_TEST

static Suite *pverify_suite(void)
{
	Suite *s = suite_create("pverify");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, shared_links_counted);
	tcase_add_test(tc, apart_shares_none);
	tcase_add_test(tc, limited_pairs_ignored);
	tcase_add_test(tc, phy_violation);
	tcase_add_test(tc, vlane_by_sl);
	tcase_add_test(tc, no_tenants);
	tcase_add_test(tc, undelivered_counted);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(pverify_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
