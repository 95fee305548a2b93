/*
 * Unit tests for Slurm host lists (sm/model/hostlist.c): the forms
 * SLURM_JOB_NODELIST takes, as `scontrol show hostnames` expands them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sm/model/hostlist.h"

/* spec expands to the names of want (comma-separated, no brackets). */
static void expands_to(const char *spec, const char *want)
{
	struct hostlist h;
	char err[256] = "", joined[4096] = "";
	int rc = hostlist_expand(spec, &h, err, sizeof(err));
	ck_assert_msg(rc == 0, "%s: %s", spec, err);
	for (size_t i = 0; i < h.n; i++)
		snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined),
			 "%s%s", i ? "," : "", h.name[i]);
	ck_assert_msg(!strcmp(joined, want), "%s -> %s, not %s", spec, joined, want);
	hostlist_free(&h);
}

/* spec is refused with a reason holding why. */
static void refused(const char *spec, const char *why)
{
	struct hostlist h;
	char err[256] = "";
	ck_assert_int_eq(hostlist_expand(spec, &h, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, why), "%s: '%s' lacks '%s'", spec, err, why);
	ck_assert_uint_eq(h.n, 0);
	ck_assert_ptr_null(h.name);
}

START_TEST(plain_names)
{
	expands_to("H-1", "H-1");
	expands_to("H-1,H-9,login", "H-1,H-9,login");
}
END_TEST

START_TEST(ranges_and_lists)
{
	expands_to("H-[0-3,7],H-9", "H-0,H-1,H-2,H-3,H-7,H-9");
	expands_to("H-1-[0-3]", "H-1-0,H-1-1,H-1-2,H-1-3");
	expands_to("H-[5]", "H-5");
	expands_to("n[8-11]", "n8,n9,n10,n11");
}
END_TEST

START_TEST(widths_kept)
{
	expands_to("n[08-10]", "n08,n09,n10");
	expands_to("n[001-002,010]", "n001,n002,n010");
}
END_TEST

START_TEST(several_brackets_and_suffixes)
{
	expands_to("r[1-2]-n[0-1]", "r1-n0,r1-n1,r2-n0,r2-n1");
	expands_to("H-[1-2].ib", "H-1.ib,H-2.ib");
	expands_to("a[1,3]b,c[2-3]", "a1b,a3b,c2,c3");
}
END_TEST

START_TEST(bad_lists)
{
	refused("", "empty host list");
	refused("H-1,,H-2", "empty host name");
	refused("H-1,", "empty host name");
	refused("H-[0-3", "without its ']'");
	refused("H-0-3]", "without its '['");
	refused("H-[[0-1]]", "inside a bracket");
	refused("H-[3-1]", "below its start");
	refused("H-[a-b]", "numbers and ranges");
	refused("H-[1-]", "numbers and ranges");
	refused("H-[]", "empty bracket");
	refused("H-[1;2]", "numbers and ranges");
	refused("H-[0-70000]", "more than 65536 hosts");
}
END_TEST

START_TEST(name_length_bound)
{
	char spec[300];
	memset(spec, 'x', 200);
	spec[200] = '\0';
	refused(spec, "longer than 127");
	memset(spec, 'x', 127);
	strcpy(spec + 127, "[1-2]");
	refused(spec, "longer than 127");
	memset(spec, 'x', 125);
	strcpy(spec + 125, "[1-2]");
	struct hostlist h;
	char err[128];
	ck_assert_int_eq(hostlist_expand(spec, &h, err, sizeof(err)), 0);
	ck_assert_uint_eq(h.n, 2);
	ck_assert_uint_eq(strlen(h.name[1]), 126);
	hostlist_free(&h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hostlist");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, plain_names);
	tcase_add_test(tc, ranges_and_lists);
	tcase_add_test(tc, widths_kept);
	tcase_add_test(tc, several_brackets_and_suffixes);
	tcase_add_test(tc, bad_lists);
	tcase_add_test(tc, name_length_bound);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
