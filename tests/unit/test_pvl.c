/*
 * The partition VL assignment (routing/qos/pvl.c, the pFTree paper's
 * Algorithm 5, its strict and best-effort branches as the text of Section
 * 6.2 has them): VLs only for vlane-isolation partitions that share a link
 * with one still on VL 0, in policy order; strict fails naming the
 * partition when the data VLs run out, best-effort wraps to VL 1; then
 * part_sl and the SL-to-VL tables on a hand-routed fat tree.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "routing/verify/pverify.h"
#include "routing/qos/pvl.h"
#include "part_testlib.h"

#define NP 5	/* default + A B C D */

/* A model of NP partitions (no ports), its share matrix, the results. */
struct pv {
	struct part_model m;
	struct part parts[NP];
	uint8_t s[NP * NP], vl[NP];
	char msg[256];
};

static void model(struct pv *x, const int *policy, int strict)
{
	static const char *const names[NP] = { "default", "A", "B", "C", "D" };
	memset(x, 0, sizeof(*x));
	for (int p = 0; p < NP; p++) {
		snprintf(x->parts[p].name, sizeof(x->parts[p].name), "%s", names[p]);
		x->parts[p].policy = (uint8_t)policy[p];
		x->parts[p].sl = -1;
	}
	x->m.n_parts = NP;
	x->m.parts = x->parts;
	x->m.strict = strict;
}

static void share(struct pv *x, int p, int q)
{
	x->s[p * NP + q] = x->s[q * NP + p] = 1;
}

static int assign(struct pv *x, unsigned data_vls)
{
	return pvl_assign(&x->m, x->s, data_vls, x->vl, x->msg, sizeof(x->msg));
}

START_TEST(only_sharing_vlane_parts)
{
	struct pv x;
	const int pol[NP] = { PART_DEF, PART_VLANE, PART_DEF, PART_VLANE, PART_PHY };
	model(&x, pol, 1);
	share(&x, 1, 2);		/* A (vlane) with B (def, VL 0) */
	/* C (vlane) shares nothing; D (phy) shares with B: no VL (not vlane) */
	share(&x, 4, 2);
	ck_assert_int_eq(assign(&x, 8), 0);
	ck_assert_uint_eq(x.vl[1], 1);
	ck_assert_uint_eq(x.vl[2], 0);
	ck_assert_uint_eq(x.vl[3], 0);
	ck_assert_uint_eq(x.vl[4], 0);
	ck_assert_str_eq(x.msg, "");
}
END_TEST

START_TEST(second_vlane_against_assigned)
{
	struct pv x;
	const int pol[NP] = { PART_DEF, PART_VLANE, PART_VLANE, PART_VLANE, PART_DEF };
	model(&x, pol, 1);
	share(&x, 1, 2);		/* A and B: A takes VL 1, B is then apart */
	share(&x, 3, 4);		/* C shares with D (def): VL 2 */
	ck_assert_int_eq(assign(&x, 8), 0);
	ck_assert_uint_eq(x.vl[1], 1);
	ck_assert_uint_eq(x.vl[2], 0);
	ck_assert_uint_eq(x.vl[3], 2);
}
END_TEST

START_TEST(exhausted_strict_fails)
{
	struct pv x;
	const int pol[NP] = { PART_DEF, PART_VLANE, PART_VLANE, PART_VLANE, PART_DEF };
	model(&x, pol, 1);
	share(&x, 1, 4);
	share(&x, 2, 4);
	share(&x, 3, 4);
	/* 4 data VLs: A, B, C on VLs 1, 2, 3 */
	ck_assert_int_eq(assign(&x, 4), 0);
	ck_assert_uint_eq(x.vl[1], 1);
	ck_assert_uint_eq(x.vl[2], 2);
	ck_assert_uint_eq(x.vl[3], 3);
	/* 3: C finds none left */
	ck_assert_int_eq(assign(&x, 3),
			 PVL_STRICT_FAIL);
	ck_assert_ptr_nonnull(strstr(x.msg, "partition C (vlane-isolation)"));
	/* best-effort: C wraps to VL 1, with a warning naming it */
	x.m.strict = 0;
	ck_assert_int_eq(assign(&x, 3), 1);
	ck_assert_uint_eq(x.vl[1], 1);
	ck_assert_uint_eq(x.vl[2], 2);
	ck_assert_uint_eq(x.vl[3], 1);
	ck_assert_ptr_nonnull(strstr(x.msg, "partition C"));
	ck_assert_ptr_nonnull(strstr(x.msg, "wrapped to VL 1"));
	/* one data VL: nothing to give, nothing to wrap to */
	ck_assert_int_eq(assign(&x, 1), 1);
	ck_assert_uint_eq(x.vl[1] | x.vl[2] | x.vl[3], 0);
}
END_TEST

START_TEST(policy_sl_vls_skipped)
{
	struct pv x;
	const int pol[NP] = { PART_DEF, PART_DEF, PART_VLANE, PART_VLANE, PART_DEF };
	model(&x, pol, 1);
	x.parts[1].sl = 1;	/* A (def) on SL 1: VL 1 is its */
	share(&x, 2, 1);		/* B shares only with A: A has a VL, none */
	share(&x, 3, 4);		/* C shares with D on VL 0: VL 2, not 1 */
	ck_assert_int_eq(assign(&x, 8), 0);
	ck_assert_uint_eq(x.vl[1], 1);
	ck_assert_uint_eq(x.vl[2], 0);
	ck_assert_uint_eq(x.vl[3], 2);
	/* SL 5 past 4 data VLs is VL 0: then B needs one, VL 1 */
	x.parts[1].sl = 5;
	ck_assert_int_eq(assign(&x, 4), 0);
	ck_assert_uint_eq(x.vl[1], 0);
	ck_assert_uint_eq(x.vl[2], 1);
	ck_assert_uint_eq(x.vl[3], 2);
}
END_TEST

static const char *const A_MEM[] = { "H0", "H2", NULL };
static const char *const B_MEM[] = { "H1", "H3", NULL };

struct fix {
	struct fabric f;
	struct lft_tables t;
	struct part_model m;
};

static void fix_up(struct fix *x, int pa, int sl_b, const uint8_t up[4])
{
	struct config *c = pt_config(1);
	pt_fabric(&x->f);
	pt_lfts(&x->f, &x->t, up);
	pt_part(c, "tenantA", pa, -1, A_MEM);
	pt_part(c, "tenantB", PART_DEF, sl_b, B_MEM);
	pt_resolve(c, &x->f, &x->m);
	free(c);
}

static void fix_down(struct fix *x)
{
	part_model_free(&x->m);
	lft_tables_free(&x->t);
	fabric_free(&x->f);
}

START_TEST(part_sl_and_sl2vl)
{
	struct fix x;
	char msg[256];
	struct pverify_report r;
	fix_up(&x, PART_VLANE, -1, PT_SHARED);
	ck_assert_int_eq(pvl_apply(&x.f, &x.t, &x.m, 4, msg, sizeof(msg)), 0);
	ck_assert_ptr_nonnull(x.t.part_sl);
	ck_assert_uint_eq(x.t.n_part_sl, 3);
	ck_assert_uint_eq(x.t.part_sl[0], 0);
	ck_assert_uint_eq(x.t.part_sl[1], 1);
	ck_assert_uint_eq(x.t.part_sl[2], 0);
	/* SL s -> VL s below 4 data VLs, VL 0 above, switches and CAs */
	const uint8_t *tab = lft_sl2vl(&x.t, node_named(&x.f, "L0"), 1, 3);
	ck_assert_ptr_nonnull(tab);
	ck_assert_uint_eq(tab[1], 1);
	ck_assert_uint_eq(tab[3], 3);
	ck_assert_uint_eq(tab[4], 0);
	tab = lft_sl2vl(&x.t, node_named(&x.f, "H0"), 1, 1);
	ck_assert_ptr_nonnull(tab);
	ck_assert_uint_eq(tab[1], 1);
	/* and the verifier finds tenantA apart on its VL */
	ck_assert_int_eq(pverify(&x.f, &x.t, &x.m, &r), 0);
	ck_assert_uint_eq(r.part[1].shared, 4);
	ck_assert_uint_eq(r.part[1].vl_shared, 0);
	ck_assert_uint_eq(r.errors, 0);
	pverify_free(&r);
	/* one data VL under strict: refused, part_sl cleared */
	ck_assert_int_eq(pvl_apply(&x.f, &x.t, &x.m, 1, msg, sizeof(msg)),
			 PVL_STRICT_FAIL);
	ck_assert_ptr_null(x.t.part_sl);
	ck_assert_ptr_nonnull(strstr(msg, "tenantA"));
	fix_down(&x);
}
END_TEST

START_TEST(apart_needs_no_vl)
{
	struct fix x;
	char msg[256];
	/* vlane tenantA shares no link: VL 0, every SL 0, QoS fields alone */
	fix_up(&x, PART_VLANE, -1, PT_APART);
	ck_assert_int_eq(pvl_apply(&x.f, &x.t, &x.m, 4, msg, sizeof(msg)), 0);
	ck_assert_ptr_null(x.t.part_sl);
	ck_assert_ptr_null(x.t.sl2vl);
	fix_down(&x);
	/* only def partitions, no sl: pvl does nothing */
	fix_up(&x, PART_DEF, -1, PT_SHARED);
	ck_assert(!pvl_needed(&x.m));
	ck_assert_int_eq(pvl_apply(&x.f, &x.t, &x.m, 4, msg, sizeof(msg)), 0);
	ck_assert_ptr_null(x.t.part_sl);
	ck_assert_ptr_null(x.t.sl2vl);
	fix_down(&x);
}
END_TEST

START_TEST(policy_sl_kept)
{
	struct fix x;
	char msg[256];
	fix_up(&x, PART_DEF, 3, PT_SHARED);
	ck_assert(pvl_needed(&x.m));
	ck_assert_int_eq(pvl_apply(&x.f, &x.t, &x.m, 8, msg, sizeof(msg)), 0);
	ck_assert_ptr_nonnull(x.t.part_sl);
	ck_assert_uint_eq(x.t.part_sl[1], 0);
	ck_assert_uint_eq(x.t.part_sl[2], 3);
	ck_assert_ptr_nonnull(x.t.sl2vl);
	fix_down(&x);
}
END_TEST

static Suite *pvl_suite(void)
{
	Suite *s = suite_create("pvl");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, only_sharing_vlane_parts);
	tcase_add_test(tc, second_vlane_against_assigned);
	tcase_add_test(tc, exhausted_strict_fails);
	tcase_add_test(tc, policy_sl_vls_skipped);
	tcase_add_test(tc, part_sl_and_sl2vl);
	tcase_add_test(tc, apart_needs_no_vl);
	tcase_add_test(tc, policy_sl_kept);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(pvl_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
