/*
 * Paper VI's repath-trap table (traps/vguid.c): creation and a reboot on
 * the same hypervisor send nothing, a migration (a vGUID set again with
 * another LID) one notice per registered hypervisor, stale entries expire
 * after the TTL; and the population counts beside the paper's equations
 * 3 and 4, computed by running the algorithm on n servers x m VMs with
 * the VMs registered (eq. 3) and with the hypervisors registered (eq. 4).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "traps/vguid.h"

/* Counts notices per registered subscriber. */
struct rec {
	uint32_t *per;
	size_t n;
	uint64_t total;
	uint64_t last_vguid;
	uint32_t last_lid;
};

static int rec_notify(void *ctx, size_t hyp, uint64_t vguid, uint32_t lid)
{
	struct rec *r = ctx;
	ck_assert_uint_lt(hyp, r->n);
	r->per[hyp]++;
	r->total++;
	r->last_vguid = vguid;
	r->last_lid = lid;
	return 1;
}

/*
 * A population: server s has PF LID s + 1 and VMs vGUID (s << 8 | k),
 * k < m, all shared-LID (their LID is their server's).  The VMs are
 * created, VM (0, 0) rebooted on server 0, then migrated to server 1.
 * Returns the notices of each step in created/rebooted/migrated.
 */
struct run {
	uint64_t created, rebooted, migrated;
	uint32_t told_min, told_max;	/* notices per subscriber, migration */
};

static struct run population(uint32_t n, uint32_t m, int vms_register)
{
	struct vguid_table t;
	vguid_table_init(&t, 0);
	size_t subs = vms_register ? (size_t)n * m : n;
	struct rec r = { .per = calloc(subs, sizeof(uint32_t)), .n = subs };
	ck_assert_ptr_nonnull(r.per);
	struct vguid_out o = { &r, rec_notify };
	struct vguid_stats st = { 0 };
	struct run out = { 0 };
	uint64_t now = 1000;
	for (uint32_t s = 0; s < n; s++)
		for (uint32_t k = 0; k < m; k++)
			ck_assert_int_eq(vguid_set_signal(&t, (uint64_t)s << 8 | k,
							  s + 1, now, subs, &o, &st),
					 VGUID_CREATED);
	out.created = r.total;
	/* reboot on the same server: delete, set with the same LID */
	ck_assert_int_eq(vguid_delete(&t, 0, 1, now), 0);
	ck_assert_int_eq(vguid_set_signal(&t, 0, 1, now + 30, subs, &o, &st),
			 VGUID_SAME_LID);
	out.rebooted = r.total - out.created;
	/* migration: delete on server 0, set on server 1 (LID 2) */
	for (size_t i = 0; i < subs; i++)
		r.per[i] = 0;
	uint64_t before = r.total;
	ck_assert_int_eq(vguid_delete(&t, 0, 1, now + 60), 0);
	ck_assert_int_eq(vguid_set_signal(&t, 0, 2, now + 65, subs, &o, &st),
			 VGUID_MOVED);
	out.migrated = r.total - before;
	ck_assert_uint_eq(r.last_vguid, 0);
	ck_assert_uint_eq(r.last_lid, 2);	/* the NEW mapping (traps/vguid.h) */
	out.told_min = UINT32_MAX;
	for (size_t i = 0; i < subs; i++) {
		out.told_min = r.per[i] < out.told_min ? r.per[i] : out.told_min;
		out.told_max = r.per[i] > out.told_max ? r.per[i] : out.told_max;
	}
	ck_assert_uint_eq(st.notices, out.migrated);
	ck_assert_uint_eq(t.n, 0);	/* nothing left in flight */
	free(r.per);
	vguid_table_free(&t);
	return out;
}

START_TEST(t_eight_by_four)
{
	struct run r = population(8, 4, 0);
	ck_assert_uint_eq(r.created, 0);
	ck_assert_uint_eq(r.rebooted, 0);
	ck_assert_uint_eq(r.migrated, 8);	/* one per hypervisor, not 32 */
	ck_assert_uint_eq(r.told_min, 1);
	ck_assert_uint_eq(r.told_max, 1);
}
END_TEST

START_TEST(t_paper_equations)
{
	const uint32_t n = 324, m = 16;
	struct run per_vm = population(n, m, 1), per_hyp = population(n, m, 0);
	printf("Paper VI, %u servers x %u VMs, one migration:\n"
	       "  eq. 3 (VMs subscribe), n*m = %u: the algorithm sent %llu repath notices\n"
	       "  eq. 4 (hypervisors subscribe), n = %u: the algorithm sent %llu repath notices\n"
	       "  creation of all %u VMs: %llu + %llu; a reboot on the same server: %llu + %llu\n",
	       n, m, n * m, (unsigned long long)per_vm.migrated, n,
	       (unsigned long long)per_hyp.migrated, n * m,
	       (unsigned long long)per_vm.created,
	       (unsigned long long)per_hyp.created,
	       (unsigned long long)per_vm.rebooted,
	       (unsigned long long)per_hyp.rebooted);
	ck_assert_uint_eq(per_vm.migrated, (uint64_t)n * m);
	ck_assert_uint_eq(per_hyp.migrated, n);
	ck_assert_uint_eq(per_hyp.created + per_hyp.rebooted, 0);
	ck_assert_uint_eq(per_vm.created + per_vm.rebooted, 0);
}
END_TEST

START_TEST(t_ttl)
{
	struct vguid_table t;
	vguid_table_init(&t, 100);
	ck_assert_int_eq(vguid_delete(&t, 0x42, 7, 1000), 0);
	ck_assert_ptr_nonnull(vguid_find(&t, 0x42, 1100));
	ck_assert_ptr_null(vguid_find(&t, 0x42, 1101));
	/* set after the TTL: a creation, nothing sent */
	ck_assert_int_eq(vguid_set(&t, 0x42, 9, 1101), VGUID_CREATED);
	ck_assert_uint_eq(t.expired, 1);
	ck_assert_uint_eq(t.n, 0);
	/* within the TTL: a move */
	ck_assert_int_eq(vguid_delete(&t, 0x42, 7, 2000), 0);
	ck_assert_int_eq(vguid_set(&t, 0x42, 9, 2100), VGUID_MOVED);
	/* a second delete replaces the stored LID */
	ck_assert_int_eq(vguid_delete(&t, 0x43, 7, 3000), 0);
	ck_assert_int_eq(vguid_delete(&t, 0x43, 9, 3001), 0);
	ck_assert_uint_eq(t.n, 1);
	ck_assert_int_eq(vguid_set(&t, 0x43, 9, 3002), VGUID_SAME_LID);
	/* a set consumes the entry: a second set is a creation */
	ck_assert_int_eq(vguid_set(&t, 0x43, 11, 3003), VGUID_CREATED);
	vguid_table_free(&t);
}
END_TEST

static Suite *vguid_suite(void)
{
	Suite *s = suite_create("vguid");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, t_eight_by_four);
	tcase_add_test(tc, t_paper_equations);
	tcase_add_test(tc, t_ttl);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(vguid_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
