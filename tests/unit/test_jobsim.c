/*
 * The offline job replay's pure parts without routing: the SWF reader and
 * its filter (sm/jobsim/swf.c: ';' comments, -1 fields, run time 0, status
 * -1, too many nodes, processors to nodes, the first N, malformed lines
 * with line and column) and the Slurm-tree-like allocator
 * (sm/jobsim/alloc.c: the best-fit leaf, the best-fit pod, a job spread
 * over the fullest leaves when no pod holds it, release, refusal).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sm/jobsim/alloc.h"
#include "sm/jobsim/swf.h"

/* id submit wait run procs avgcpu mem reqprocs reqtime reqmem status ... */
#define REC(id, sub, wait, run, procs, req, status) \
	#id " " #sub " " #wait " " #run " " #procs " -1 -1 " #req " -1 -1 " \
	#status " 1 1 -1 1 -1 -1 -1\n"

static const char TRACE[] =
	"; Version: 2.2\n"
	";   Computer: test\n"
	"\n"
	REC(1, 0, 10, 100, 8, 8, 1)		/* kept: 2 nodes at 4 CPUs */
	"   ; an indented comment\n"
	REC(2, 5, 0, 0, 4, 4, 1)		/* run time 0 */
	REC(3, 6, -1, 50, 4, 4, 1)		/* wait unknown */
	REC(4, 7, 3, 50, 4, 4, -1)		/* status -1 */
	REC(5, 8, 0, 50, -1, 9, 5)		/* -1 procs: the requested 9 */
	REC(6, 9, 0, -1, 4, 4, 1)		/* run time unknown */
	REC(7, 9, 0, 60, -1, -1, 1)		/* no processor count */
	REC(8, 10, 0, 70, 4000, 4000, 1)	/* 1000 nodes: too many */
	REC(9, 11, 2, 30, 1, 1, 0)		/* kept: failed, but it ran */
	REC(10, 12, 0, 40, 16, 16, 1);		/* kept */

static const struct swf_filter FLT = {
	.system_nodes = 64, .cpus_per_node = 4, .first = 0,
};

START_TEST(t_swf_filter)
{
	struct swf_job *j;
	size_t n;
	struct swf_stats st;
	char err[256];
	ck_assert_int_eq(swf_parse(TRACE, "t.swf", &FLT, &j, &n, &st, err,
				   sizeof(err)), 0);
	ck_assert_uint_eq(st.records, 10);
	ck_assert_uint_eq(st.dropped_run, 2);
	ck_assert_uint_eq(st.dropped_time, 1);
	ck_assert_uint_eq(st.dropped_status, 1);
	ck_assert_uint_eq(st.dropped_procs, 1);
	ck_assert_uint_eq(st.dropped_size, 1);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(j[0].id, 1);
	ck_assert_int_eq(j[0].start, 10);
	ck_assert_int_eq(j[0].end, 110);
	ck_assert_uint_eq(j[0].nodes, 2);
	ck_assert_int_eq(j[1].id, 5);
	ck_assert_int_eq(j[1].procs, 9);
	ck_assert_uint_eq(j[1].nodes, 3);	/* ceil(9 / 4) */
	ck_assert_int_eq(j[2].id, 9);
	ck_assert_int_eq(j[2].start, 13);
	ck_assert_uint_eq(j[2].nodes, 1);
	ck_assert_int_eq(j[3].id, 10);
	ck_assert_uint_eq(j[3].nodes, 4);
	free(j);
}
END_TEST

START_TEST(t_swf_first_n)
{
	struct swf_filter flt = FLT;
	struct swf_job *j;
	size_t n;
	struct swf_stats st;
	char err[256];
	flt.first = 2;
	ck_assert_int_eq(swf_parse(TRACE, "t.swf", &flt, &j, &n, &st, err,
				   sizeof(err)), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(j[0].id, 1);
	ck_assert_int_eq(j[1].id, 5);
	ck_assert_uint_eq(st.records, 5);	/* reading stopped at the 2nd */
	free(j);
	/* one CPU a node: processors are nodes, 4000 still too many */
	flt.first = 0;
	flt.cpus_per_node = 1;
	ck_assert_int_eq(swf_parse(TRACE, "t.swf", &flt, &j, &n, &st, err,
				   sizeof(err)), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(j[0].nodes, 8);
	ck_assert_uint_eq(j[3].nodes, 16);
	free(j);
}
END_TEST

START_TEST(t_swf_malformed)
{
	struct swf_job *j = NULL;
	size_t n;
	struct swf_stats st;
	char err[256];
	static const char short_line[] = "; c\n" REC(1, 0, 0, 5, 1, 1, 1)
		"2 0 0 5 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1\n";
	static const char long_line[] = "1 0 0 5 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1 7\n";
	static const char word[] = "\n\n1 0 0 5 x -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n";
	static const char huge[] = "1 0 0 1e300 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n";
	ck_assert_int_eq(swf_parse(short_line, "a.swf", &FLT, &j, &n, &st, err,
				   sizeof(err)), -1);
	ck_assert_msg(strstr(err, "a.swf:3:") != NULL, "%s", err);
	ck_assert_ptr_null(j);
	ck_assert_int_eq(swf_parse(long_line, "b.swf", &FLT, &j, &n, &st, err,
				   sizeof(err)), -1);
	ck_assert_msg(strstr(err, "b.swf:1:45:") != NULL, "%s", err);
	ck_assert_int_eq(swf_parse(word, "c.swf", &FLT, &j, &n, &st, err,
				   sizeof(err)), -1);
	ck_assert_msg(strstr(err, "c.swf:3:9:") != NULL, "%s", err);
	/* a run time no integer holds */
	ck_assert_int_eq(swf_parse(huge, "e.swf", &FLT, &j, &n, &st, err,
				   sizeof(err)), -1);
	ck_assert_msg(strstr(err, "e.swf:1:7:") != NULL, "%s", err);
	/* only comments: no job, no error */
	ck_assert_int_eq(swf_parse("; nothing\n;\n", "d.swf", &FLT, &j, &n, &st,
				   err, sizeof(err)), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(j);
}
END_TEST

/*
 * Two pods of two leaves of four hosts: leaf l holds hosts 4l..4l+3, pod
 * p leaves 2p and 2p+1.
 */
static struct alloc *two_pods(void)
{
	uint32_t leaf_of[16], pod_of[4] = { 0, 0, 1, 1 };
	for (uint32_t h = 0; h < 16; h++)
		leaf_of[h] = h / 4;
	struct alloc *a = alloc_new(16, leaf_of, 4, pod_of, 2);
	ck_assert_ptr_nonnull(a);
	return a;
}

static void expect(const uint32_t *got, const uint32_t *want, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		ck_assert_msg(got[i] == want[i], "host %u: %u, expected %u", i,
			      got[i], want[i]);
}

START_TEST(t_alloc_best_fit)
{
	struct alloc *a = two_pods();
	uint32_t h[16];
	/* a leaf fits: the lowest of equals, its lowest hosts */
	ck_assert_int_eq(alloc_take(a, 3, h), 0);
	expect(h, (uint32_t[]){ 0, 1, 2 }, 3);
	/* best fit: leaf 0 has 1 free, so a 1-node job goes there */
	ck_assert_int_eq(alloc_take(a, 1, h), 0);
	expect(h, (uint32_t[]){ 3 }, 1);
	/* 2 nodes: leaf 1 (4 free, the lowest of the fullest equals) */
	ck_assert_int_eq(alloc_take(a, 2, h), 0);
	expect(h, (uint32_t[]){ 4, 5 }, 2);
	/* then 2 more fit leaf 1's remaining 2 exactly, not a fresh leaf */
	ck_assert_int_eq(alloc_take(a, 2, h), 0);
	expect(h, (uint32_t[]){ 6, 7 }, 2);
	/* 6 nodes: no leaf holds them, pod 1 does (8 free) */
	ck_assert_int_eq(alloc_take(a, 6, h), 0);
	expect(h, (uint32_t[]){ 8, 9, 10, 11, 12, 13 }, 6);
	ck_assert_uint_eq(alloc_free_hosts(a), 2);
	/* 3 nodes: only 2 free */
	ck_assert_int_eq(alloc_take(a, 3, h), -1);
	ck_assert_uint_eq(alloc_free_hosts(a), 2);
	alloc_free(a);
}
END_TEST

START_TEST(t_alloc_pod_best_fit)
{
	struct alloc *a = two_pods();
	uint32_t h[16], x[16];
	/* pod 0: 5 busy (leaf 0 full, host 4), 3 free; pod 1 all free */
	ck_assert_int_eq(alloc_take(a, 4, x), 0);
	ck_assert_int_eq(alloc_take(a, 1, x), 0);
	expect(x, (uint32_t[]){ 4 }, 1);
	/* 3 nodes fit leaf 1 (3 free) best: it, not a fresh leaf */
	ck_assert_int_eq(alloc_take(a, 3, h), 0);
	expect(h, (uint32_t[]){ 5, 6, 7 }, 3);
	alloc_release(a, h, 3);
	alloc_release(a, x, 1);		/* leaf 1 all free again */
	/* 5 nodes: no leaf; pod 0 has 4 free, pod 1 8: pod 1, its leaf
	 * with the most free first (leaf 2), then the best fit for 1 */
	ck_assert_int_eq(alloc_take(a, 5, h), 0);
	expect(h, (uint32_t[]){ 8, 9, 10, 11, 12 }, 5);
	alloc_free(a);
}
END_TEST

START_TEST(t_alloc_fragmented)
{
	struct alloc *a = two_pods();
	uint32_t one[1], h[16];
	/* one busy host on every leaf: 3 free on each, 6 a pod */
	for (uint32_t l = 0; l < 4; l++) {
		uint32_t need = 4;
		ck_assert_int_eq(alloc_take(a, need, h), 0);
		alloc_release(a, h + 1, 3);
		one[0] = h[0];
		ck_assert_uint_eq(one[0], 4 * l);
	}
	ck_assert_uint_eq(alloc_free_hosts(a), 12);
	/* 7 nodes: no pod holds them; the system: 3 + 3 from the leaves
	 * with the most free (lowest first), then the best fit for 1 */
	ck_assert_int_eq(alloc_take(a, 7, h), 0);
	expect(h, (uint32_t[]){ 1, 2, 3, 5, 6, 7, 9 }, 7);
	ck_assert_uint_eq(alloc_free_hosts(a), 5);
	/* released hosts come back; a host never taken twice */
	alloc_release(a, h, 7);
	alloc_release(a, h, 7);
	ck_assert_uint_eq(alloc_free_hosts(a), 12);
	ck_assert_int_eq(alloc_take(a, 12, h), 0);
	ck_assert_int_eq(alloc_take(a, 1, h), -1);
	alloc_free(a);
}
END_TEST

START_TEST(t_alloc_bad_input)
{
	uint32_t leaf_of[2] = { 0, 3 }, pod_of[2] = { 0, 0 };
	ck_assert_ptr_null(alloc_new(2, leaf_of, 2, pod_of, 1));
	leaf_of[1] = 1;
	pod_of[1] = 1;
	ck_assert_ptr_null(alloc_new(2, leaf_of, 2, pod_of, 1));
	pod_of[1] = 0;
	struct alloc *a = alloc_new(2, leaf_of, 2, pod_of, 1);
	ck_assert_ptr_nonnull(a);
	uint32_t h[2];
	ck_assert_int_eq(alloc_take(a, 0, h), -1);
	alloc_free(a);
}
END_TEST

static Suite *jobsim_suite(void)
{
	Suite *s = suite_create("jobsim");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, t_swf_filter);
	tcase_add_test(tc, t_swf_first_n);
	tcase_add_test(tc, t_swf_malformed);
	tcase_add_test(tc, t_alloc_best_fit);
	tcase_add_test(tc, t_alloc_pod_best_fit);
	tcase_add_test(tc, t_alloc_fragmented);
	tcase_add_test(tc, t_alloc_bad_input);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(jobsim_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
