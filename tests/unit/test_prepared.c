/*
 * A VM move planned ahead (reconfig/prepared.c) on the hypervisor fabric
 * of vswitch_testlib.h: the plan taken at commit is migrate_plan_vm's on
 * the tables of the moment (the two LIDs' entries as planned, the other
 * columns as they are then); it is refused when either LID's entries, the
 * switches, the links or the ports changed since.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconfig/migrate.h"
#include "reconfig/prepared.h"
#include "routing/engine.h"
#include "routing/engines.h"
#include "sm/base/fabric.h"
#include "sm/model/lids.h"
#include "sm/base/topo.h"
#include "vswitch_testlib.h"

struct fx {
	struct fabric f;
	struct lft_tables t;
	uint32_t vm, dst;	/* VF 0 of V-0-0, VF 1 of V-2-1 */
};

static void fx_build(struct fx *x)
{
	char err[256] = "", *text = hv_text();
	struct lid_report rep;
	struct route_opts o = { 0 };
	fabric_init(&x->f);
	if (topo_parse_string(&x->f, text, "hv.net", err, sizeof(err)) != 0)
		ck_abort_msg("parse: %s", err);
	free(text);
	hv_mark(&x->f);
	ck_assert_int_eq(lids_assign(&x->f, NULL, 0, &rep), 0);
	ck_assert_int_eq(lft_tables_alloc(&x->t, &x->f), 0);
	if (ftree_route(&x->f, &o, &x->t, err, sizeof(err)) != 0)
		ck_abort_msg("ftree: %s", err);
	x->vm = hv_vf_port(&x->f, 0, 0, 0);
	x->dst = hv_vf_port(&x->f, 2, 1, 1);
}

static void fx_free(struct fx *x)
{
	lft_tables_free(&x->t);
	fabric_free(&x->f);
}

static void prepare(struct fx *x, int scheme, struct mig_prepared *p)
{
	char err[256] = "";
	ck_assert_msg(mig_prepare_vm(&x->f, &x->t, x->vm, x->dst, scheme,
				     MIG_FTREEMINRC, p, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_gt(p->m.n_w, 0);
}

/* What migrate_plan_vm makes of cur now. */
static void reference(struct fx *x, int scheme, struct lft_tables *tt,
		      struct migration *m)
{
	char err[256] = "";
	memset(tt, 0, sizeof(*tt));
	ck_assert_int_eq(migrate_tables_copy(tt, &x->t, &x->f, 0), 0);
	ck_assert_msg(migrate_plan_vm(&x->f, tt, x->vm, x->dst, scheme, MIG_FTREEMINRC,
				      NULL, m, err, sizeof(err)) == 0, "%s", err);
}

static void same(const struct lft_tables *a, const struct lft_tables *b,
		 const struct migration *ma, const struct migration *mb)
{
	ck_assert_uint_eq(a->n_sw, b->n_sw);
	ck_assert_uint_eq(a->max_lid, b->max_lid);
	for (uint32_t r = 0; r < a->n_sw; r++)
		ck_assert_int_eq(memcmp(lft_row(a, r), lft_row(b, r), a->max_lid + 1), 0);
	ck_assert_uint_eq(ma->n_w, mb->n_w);
	for (uint32_t i = 0; i < ma->n_w; i++) {
		ck_assert_uint_eq(ma->w[i].row, mb->w[i].row);
		ck_assert_uint_eq(ma->w[i].block, mb->w[i].block);
		ck_assert_uint_eq(ma->w[i].wave, mb->w[i].wave);
		ck_assert_uint_eq(ma->w[i].vswitch, mb->w[i].vswitch);
	}
	ck_assert_uint_eq(ma->switches_marked, mb->switches_marked);
}

static void check_scheme(int scheme)
{
	struct fx x;
	struct mig_prepared p;
	struct lft_tables out, tt;
	struct migration m, ref;
	char why[160];
	fx_build(&x);

	/* unchanged: exactly migrate_plan_vm's */
	prepare(&x, scheme, &p);
	reference(&x, scheme, &tt, &ref);
	ck_assert_int_eq(mig_prepared_take(&p, &x.f, &x.t, x.vm, x.dst, &out, &m,
					   why, sizeof(why)), 1);
	same(&out, &tt, &m, &ref);
	ck_assert_ptr_null(p.sw_node);	/* taken */
	lft_tables_free(&out);
	lft_tables_free(&tt);
	migration_free(&m);
	migration_free(&ref);

	/* another LID's entry changed since: kept as it is now */
	prepare(&x, scheme, &p);
	uint32_t l1 = x.t.row_of_node[hv_find(&x.f, "L1")];
	uint32_t other = x.f.ports[hv_vf_port(&x.f, 3, 0, 0)].lid;
	ck_assert(other != p.m.vm_lid && other != p.m.dst_lid);
	uint8_t *e = &lft_row(&x.t, l1)[other];
	*e = *e == 7 ? 8 : 7;
	reference(&x, scheme, &tt, &ref);
	ck_assert_int_eq(mig_prepared_take(&p, &x.f, &x.t, x.vm, x.dst, &out, &m,
					   why, sizeof(why)), 1);
	same(&out, &tt, &m, &ref);
	lft_tables_free(&out);
	lft_tables_free(&tt);
	migration_free(&m);
	migration_free(&ref);

	/* the destination's LID's routes changed: refused */
	prepare(&x, scheme, &p);
	e = &lft_row(&x.t, l1)[p.m.dst_lid];
	uint8_t keep = *e;
	*e = keep == 7 ? 8 : 7;
	ck_assert_int_eq(mig_prepared_take(&p, &x.f, &x.t, x.vm, x.dst, &out, &m,
					   why, sizeof(why)), 0);
	ck_assert_ptr_nonnull(strstr(why, "routes"));
	*e = keep;
	/* and the VM's */
	e = &lft_row(&x.t, l1)[p.m.vm_lid];
	keep = *e;
	*e = keep == 7 ? 8 : 7;
	ck_assert_int_eq(mig_prepared_take(&p, &x.f, &x.t, x.vm, x.dst, &out, &m,
					   why, sizeof(why)), 0);
	*e = keep;
	/* other ports */
	ck_assert_int_eq(mig_prepared_take(&p, &x.f, &x.t, x.vm,
					   hv_vf_port(&x.f, 2, 1, 2), &out, &m,
					   why, sizeof(why)), 0);
	ck_assert_str_eq(why, "prepared for other ports");
	/* a link down (S1's to L3) */
	uint32_t pi = fabric_port(&x.f, hv_find(&x.f, "S1"), 4);
	uint8_t ps = x.f.ports[pi].phys_state;
	x.f.ports[pi].phys_state = 0;
	ck_assert_int_eq(mig_prepared_take(&p, &x.f, &x.t, x.vm, x.dst, &out, &m,
					   why, sizeof(why)), 0);
	ck_assert_str_eq(why, "the links changed");
	x.f.ports[pi].phys_state = ps;
	/* all as it was: taken */
	ck_assert_int_eq(mig_prepared_take(&p, &x.f, &x.t, x.vm, x.dst, &out, &m,
					   why, sizeof(why)), 1);
	lft_tables_free(&out);
	migration_free(&m);
	mig_prepared_free(&p);
	fx_free(&x);
}

START_TEST(t_dynamic)
{
	check_scheme(MIG_DYNAMIC);
}
END_TEST

START_TEST(t_prepopulated)
{
	check_scheme(MIG_PREPOPULATED);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("prepared");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, t_dynamic);
	tcase_add_test(tc, t_prepopulated);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
