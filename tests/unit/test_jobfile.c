/*
 * The live jobs' file (sm/model/jobfile.c): what a job start records
 * comes back the same (IDs, start order, seed, pattern, a pattern file's
 * text, GUIDs and names in rank order); an absent file is no job; a file
 * that is not a jobs file, or a job without what it needs, is corrupt
 * (-2); job IDs are checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "sm/model/jobfile.h"

static void spec(struct job_spec *s, const char *id, uint64_t order, uint32_t n,
		 const char *pattern, const char *text)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->id, sizeof(s->id), "%s", id);
	snprintf(s->pattern, sizeof(s->pattern), "%s", pattern);
	s->order = order;
	s->seed = 0xfedcba9876543210ULL + order;
	s->started = 1700000000 + order;
	s->text = text ? strdup(text) : NULL;
	s->n = n;
	s->guid = calloc(n, sizeof(*s->guid));
	s->name = calloc(n, sizeof(*s->name));
	for (uint32_t i = 0; i < n; i++) {
		char nm[16];
		s->guid[i] = 0x0002c90200000001ULL + 4 * (order * 100 + i);
		snprintf(nm, sizeof(nm), "H-%u", (unsigned)(order * 100 + i));
		s->name[i] = strdup(nm);
	}
}

static void temp_dir(char *dir)
{
	strcpy(dir, "/tmp/test_jobfile_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

START_TEST(round_trip)
{
	char dir[64], path[128], err[256];
	struct job_spec a, b, *v;
	size_t n;
	temp_dir(dir);
	snprintf(path, sizeof(path), "%s/jobs", dir);
	ck_assert_int_eq(jobfile_load(path, &v, &n, err, sizeof(err)), 0);
	ck_assert_uint_eq(n, 0);
	free(v);
	spec(&a, "1234", 1, 8, "ring", NULL);
	spec(&b, "x.y_z-2", 7, 3, "file", "0 1\n1 2 # \"quoted\"\n");
	struct job_spec *both[] = { &a, &b };
	ck_assert_int_eq(jobfile_save(path, both, 2, err, sizeof(err)), 0);
	ck_assert_int_eq(jobfile_load(path, &v, &n, err, sizeof(err)), 0);
	ck_assert_uint_eq(n, 2);
	for (size_t k = 0; k < 2; k++) {
		const struct job_spec *w = both[k], *g = &v[k];
		ck_assert_str_eq(g->id, w->id);
		ck_assert_str_eq(g->pattern, w->pattern);
		ck_assert_uint_eq(g->order, w->order);
		ck_assert_uint_eq(g->seed, w->seed);
		ck_assert_uint_eq(g->started, w->started);
		ck_assert_uint_eq(g->n, w->n);
		ck_assert_int_eq(!g->text, !w->text);
		if (w->text)
			ck_assert_str_eq(g->text, w->text);
		for (uint32_t i = 0; i < w->n; i++) {
			ck_assert_uint_eq(g->guid[i], w->guid[i]);
			ck_assert_str_eq(g->name[i], w->name[i]);
		}
		job_spec_free(&v[k]);
	}
	free(v);
	job_spec_free(&a);
	job_spec_free(&b);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* text written to DIR/jobs is refused as corrupt, err holding why */
static void corrupt(const char *text, const char *why)
{
	char dir[64], path[128], err[256] = "";
	struct job_spec *v;
	size_t n;
	temp_dir(dir);
	snprintf(path, sizeof(path), "%s/jobs", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(jobfile_load(path, &v, &n, err, sizeof(err)), -2);
	ck_assert_msg(strstr(err, why), "'%s' lacks '%s'", err, why);
	ck_assert_ptr_null(v);
	ck_assert_uint_eq(n, 0);
	unlink(path);
	rmdir(dir);
}

START_TEST(corrupt_files)
{
	corrupt("{\"version\": 1, \"jobs\": [", "not a jobs file");
	corrupt("{\"version\": 2, \"jobs\": []}", "not a jobs file");
	corrupt("ibsmd-vms 1\n", "not a jobs file");
	corrupt("{\"version\": 1, \"jobs\": [{\"id\": \"a b\", \"order\": 1, \"seed\": \"0x1\", "
		"\"pattern\": \"ring\", \"nodes\": []}]}", "job 0");
	corrupt("{\"version\": 1, \"jobs\": [{\"id\": \"a\", \"order\": 1, \"seed\": \"0x1\", "
		"\"pattern\": \"ring\", \"nodes\": [[\"0x1\", \"H-0\"], [\"zz\", \"H-1\"]]}]}",
		"node 1 is not [GUID, name]");
	corrupt("{\"version\": 1, \"jobs\": [{\"id\": \"a\", \"order\": 0, \"seed\": \"0x1\", "
		"\"pattern\": \"ring\", \"nodes\": []}]}", "job 0");
}
END_TEST

START_TEST(job_ids)
{
	char longid[JOB_ID_LEN + 1];
	ck_assert(job_id_ok("1234"));
	ck_assert(job_id_ok("a.b_c-9"));
	ck_assert(!job_id_ok(""));
	ck_assert(!job_id_ok("a b"));
	ck_assert(!job_id_ok("a/b"));
	ck_assert(!job_id_ok("\"x\""));
	memset(longid, 'a', JOB_ID_LEN - 1);
	longid[JOB_ID_LEN - 1] = '\0';
	ck_assert(job_id_ok(longid));
	longid[JOB_ID_LEN - 1] = 'a';
	longid[JOB_ID_LEN] = '\0';
	ck_assert(!job_id_ok(longid));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jobfile");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, corrupt_files);
	tcase_add_test(tc, job_ids);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
