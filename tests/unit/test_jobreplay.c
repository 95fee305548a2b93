/*
 * The offline job replay's event simulation (sm/jobsim/replay.c) on
 * XGFT(3;2,2,4;1,2,2) with its D-mod-K tables, from SWF text:
 *   - a worked trace: 16 one-node jobs fill hosts 0..15 in order; ends
 *     free hosts 0 and 4, then 1 and 6, and two-node ring jobs A and B
 *     start at those times (ends first at equal times, or they would not
 *     fit) on {0,4} and {1,6}: A's 0->4 and B's 1->6 both leave L00 by
 *     A00 under D-mod-K, load 2.0 for both jobs; the job routing moves
 *     B's, 1.0.  A outlives B and a later start: its PJML stays the
 *     largest it saw.  One-node jobs have PJML 0.  The largest PJML is
 *     the largest SWML on each side.
 *   - a job that finds too few free nodes is skipped, not placed;
 *   - the dynamic mix: each job's pattern from the seed and its number,
 *     the same whatever the jobs around it, all four kinds drawn;
 *   - an unknown pattern is refused before anything runs.
 */
#include "job_testlib.h"

#include "sm/jobsim/replay.h"
#include "sm/jobsim/swf.h"

#define MAX_JOBS 64
#define MAX_EVENTS 256

/* What the sink saw. */
struct seen {
	size_t n_swml;
	int64_t t[MAX_EVENTS], d[MAX_EVENTS], g[MAX_EVENTS];
	size_t n_jobs;
	struct replay_job jobs[MAX_JOBS];
	char pattern[MAX_JOBS][16];
	size_t n_skipped;
	int64_t skipped_id[MAX_JOBS];
};

static void on_swml(void *ctx, int64_t t, int64_t d, int64_t g)
{
	struct seen *s = ctx;
	ck_assert_uint_lt(s->n_swml, MAX_EVENTS);
	s->t[s->n_swml] = t;
	s->d[s->n_swml] = d;
	s->g[s->n_swml++] = g;
}

static void on_job(void *ctx, const struct replay_job *j)
{
	struct seen *s = ctx;
	ck_assert_uint_lt(s->n_jobs, MAX_JOBS);
	snprintf(s->pattern[s->n_jobs], sizeof(s->pattern[0]), "%s", j->pattern);
	s->jobs[s->n_jobs++] = *j;
}

static void on_skipped(void *ctx, const struct swf_job *j, uint32_t free_hosts)
{
	struct seen *s = ctx;
	(void)free_hosts;
	s->skipped_id[s->n_skipped++] = j->id;
}

static const struct replay_job *job_of(const struct seen *s, int64_t id)
{
	for (size_t i = 0; i < s->n_jobs; i++)
		if (s->jobs[i].id == id)
			return &s->jobs[i];
	ck_abort_msg("job %lld not reported", (long long)id);
	return NULL;
}

/* SWF text of jobs given as (id, start, run, nodes), one CPU a node. */
static char *trace(const int64_t (*j)[4], size_t n)
{
	size_t cap = 128 * (n + 1), len = 0;
	char *s = malloc(cap);
	ck_assert_ptr_nonnull(s);
	len += (size_t)snprintf(s, cap, "; test trace\n");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, cap - len,
			"%lld %lld 0 %lld %lld -1 -1 %lld -1 -1 1 1 1 -1 1 -1 -1 -1\n",
			(long long)j[i][0], (long long)j[i][1], (long long)j[i][2],
			(long long)j[i][3], (long long)j[i][3]);
	return s;
}

/* Parses and replays; 0 or -1 as replay_run(). */
static int replay_text(struct world *w, const char *text, const char *pattern,
		       uint64_t seed, struct seen *s, struct replay_summary *sum,
		       char *err, size_t errlen)
{
	const struct swf_filter flt = {
		.system_nodes = job_tree_hosts(w->tr), .cpus_per_node = 1,
	};
	struct swf_job *jobs;
	size_t n;
	struct swf_stats st;
	ck_assert_int_eq(swf_parse(text, "t.swf", &flt, &jobs, &n, &st, err,
				   errlen), 0);
	const struct replay_opts o = { .pattern = pattern, .seed = seed };
	const struct replay_sink sink = {
		.swml = on_swml, .job = on_job, .skipped = on_skipped, .ctx = s,
	};
	memset(s, 0, sizeof(*s));
	int rc = replay_run(w->tr, jobs, n, &o, &sink, sum, err, errlen);
	free(jobs);
	return rc;
}

enum { ID_A = 17, ID_B = 18, ID_C = 19 };

START_TEST(t_worked_trace)
{
	struct world w;
	struct seen s;
	struct replay_summary sum;
	char err[256];
	int64_t jobs[19][4];
	open_xgft(&w);
	for (int i = 0; i < 16; i++) {
		/* one-node jobs 1..16 on hosts 0..15; hosts 0 and 4 free at
		 * 10, 1 and 6 at 20 */
		int h = i;
		int64_t run = h == 0 || h == 4 ? 10 : h == 1 || h == 6 ? 20 : 100;
		jobs[i][0] = i + 1;
		jobs[i][1] = 0;
		jobs[i][2] = run;
		jobs[i][3] = 1;
	}
	memcpy(jobs[16], (int64_t[]){ ID_A, 10, 40, 2 }, sizeof(jobs[0]));
	memcpy(jobs[17], (int64_t[]){ ID_B, 20, 10, 2 }, sizeof(jobs[0]));
	memcpy(jobs[18], (int64_t[]){ ID_C, 40, 5, 1 }, sizeof(jobs[0]));
	char *text = trace((const int64_t (*)[4])jobs, 19);
	ck_assert_int_eq(replay_text(&w, text, "ring", 1, &s, &sum, err,
				     sizeof(err)), 0);
	free(text);
	ck_assert_uint_eq(s.n_skipped, 0);
	ck_assert_uint_eq(sum.skipped, 0);
	ck_assert_uint_eq(sum.n, 19);
	ck_assert_uint_eq(s.n_jobs, 19);
	ck_assert_uint_eq(s.n_swml, 38);
	for (int64_t id = 1; id <= 16; id++) {
		ck_assert_int_eq(job_of(&s, id)->pjml_dmodk, 0);
		ck_assert_int_eq(job_of(&s, id)->pjml_jobs, 0);
		ck_assert_uint_eq(job_of(&s, id)->n_flows, 0);
	}
	const struct replay_job *a = job_of(&s, ID_A), *b = job_of(&s, ID_B);
	ck_assert_uint_eq(a->n_flows, 2);	/* 0->4, 4->0: w 1 each */
	ck_assert_int_eq(a->pjml_dmodk, 2 * ONE);
	ck_assert_int_eq(b->pjml_dmodk, 2 * ONE);
	ck_assert_int_eq(a->pjml_jobs, ONE);
	ck_assert_int_eq(b->pjml_jobs, ONE);
	ck_assert_int_eq(a->guarded, 1);	/* first on an empty fabric */
	ck_assert_int_eq(b->guarded, 0);
	ck_assert_int_eq(job_of(&s, ID_C)->pjml_dmodk, 0);
	ck_assert_int_eq(sum.guarded, 1);
	/* at 10: the two ends, then A (ends first); at 20 likewise B */
	int64_t d_at_20 = -1, d_after_b = -1;
	for (size_t e = 0; e < s.n_swml; e++) {
		if (e)
			ck_assert_int_le(s.t[e - 1], s.t[e]);
		if (s.t[e] == 20 && d_at_20 < 0) {
			d_at_20 = s.d[e];
			ck_assert_int_eq(d_at_20, ONE);	/* J2's end: A alone */
		}
		if (s.t[e] == 20)
			d_after_b = s.d[e];
		if (s.t[e] == 40)	/* C starts: B gone, A at 1.0 */
			ck_assert_int_eq(s.d[e], ONE);
	}
	ck_assert_int_eq(d_after_b, 2 * ONE);
	/* the largest PJML is the largest SWML, each side */
	int64_t md = 0, mg = 0;
	for (size_t e = 0; e < s.n_swml; e++) {
		md = s.d[e] > md ? s.d[e] : md;
		mg = s.g[e] > mg ? s.g[e] : mg;
	}
	ck_assert_int_eq(md, 2 * ONE);
	ck_assert_int_eq(mg, ONE);
	ck_assert_int_eq(sum.max_dmodk, md);
	ck_assert_int_eq(sum.swml_dmodk, md);
	ck_assert_int_eq(sum.max_jobs, mg);
	ck_assert_int_eq(sum.swml_jobs, mg);
	ck_assert_int_eq(sum.sum_dmodk, 4 * ONE);
	ck_assert_int_eq(sum.sum_jobs, 2 * ONE);
	/* every load released at the end */
	ck_assert_int_eq(s.d[s.n_swml - 1], 0);
	ck_assert_int_eq(s.g[s.n_swml - 1], 0);
	close_world(&w);
}
END_TEST

START_TEST(t_skipped)
{
	struct world w;
	struct seen s;
	struct replay_summary sum;
	char err[256];
	static const int64_t jobs[][4] = {
		{ 1, 0, 100, 12 }, { 2, 5, 10, 8 }, { 3, 6, 10, 4 },
	};
	open_xgft(&w);
	char *text = trace(jobs, 3);
	ck_assert_int_eq(replay_text(&w, text, "3dnn", 1, &s, &sum, err,
				     sizeof(err)), 0);
	free(text);
	ck_assert_uint_eq(sum.skipped, 1);
	ck_assert_int_eq(s.skipped_id[0], 2);
	ck_assert_uint_eq(sum.n, 2);
	ck_assert_uint_eq(s.n_swml, 4);
	close_world(&w);
}
END_TEST

START_TEST(t_dynamic)
{
	struct world w;
	struct seen s;
	struct replay_summary sum;
	char err[256];
	int64_t jobs[40][4];
	char first[40][16];
	open_xgft(&w);
	for (int i = 0; i < 40; i++) {
		jobs[i][0] = i + 1;
		jobs[i][1] = 10 * i;
		jobs[i][2] = 5;
		jobs[i][3] = 8;
	}
	char *text = trace((const int64_t (*)[4])jobs, 40);
	ck_assert_int_eq(replay_text(&w, text, REPLAY_DYNAMIC, 7, &s, &sum, err,
				     sizeof(err)), 0);
	free(text);
	int kinds[4] = { 0 };
	for (size_t i = 0; i < s.n_jobs; i++) {
		snprintf(first[i], sizeof(first[0]), "%s", s.pattern[i]);
		kinds[0] += !strcmp(s.pattern[i], "ring");
		kinds[1] += !strcmp(s.pattern[i], "2dnn");
		kinds[2] += !strcmp(s.pattern[i], "3dnn");
		kinds[3] += !strcmp(s.pattern[i], "random:4");
	}
	ck_assert_int_eq(kinds[0] + kinds[1] + kinds[2] + kinds[3], 40);
	for (int k = 0; k < 4; k++)
		ck_assert_int_gt(kinds[k], 0);
	/* jobs 21..40 alone: the same patterns as in the whole trace */
	text = trace((const int64_t (*)[4])jobs + 20, 20);
	ck_assert_int_eq(replay_text(&w, text, REPLAY_DYNAMIC, 7, &s, &sum, err,
				     sizeof(err)), 0);
	free(text);
	for (size_t i = 0; i < s.n_jobs; i++)
		ck_assert_str_eq(s.pattern[i], first[20 + i]);
	close_world(&w);
}
END_TEST

START_TEST(t_bad_pattern)
{
	struct world w;
	struct seen s;
	struct replay_summary sum;
	char err[256];
	static const int64_t jobs[][4] = { { 1, 0, 100, 4 } };
	open_xgft(&w);
	char *text = trace(jobs, 1);
	ck_assert_int_eq(replay_text(&w, text, "torus", 1, &s, &sum, err,
				     sizeof(err)), -1);
	ck_assert_msg(strstr(err, "torus") != NULL, "%s", err);
	ck_assert_uint_eq(s.n_swml, 0);
	free(text);
	close_world(&w);
}
END_TEST

static Suite *jobreplay_suite(void)
{
	Suite *s = suite_create("jobreplay");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, t_worked_trace);
	tcase_add_test(tc, t_skipped);
	tcase_add_test(tc, t_dynamic);
	tcase_add_test(tc, t_bad_pattern);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(jobreplay_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
