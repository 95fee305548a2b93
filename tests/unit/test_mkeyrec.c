/*
 * The ports with another SM's M_Key (sm/model/mkeyrec.c), pure:
 *   keys: a key read is given back for its port only, kept sorted over
 *     inserts in any order; taken over, it is forgotten and counted (a
 *     port taken over without a key listed too); forgotten without a
 *     take-over, not counted.
 *   refusing: the first refusal fixes when the protection should end
 *     (a later one at the same level keeps it; another level starts it
 *     afresh); a lease of 0 never ends and is left out of the first and
 *     last ends; a port whose key was read is not refusing, and a key
 *     that a port then refuses is forgotten.
 *   rounds: a port no sweep noted since the last round started is
 *     forgotten at the next.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "sm/model/mkeyrec.h"

START_TEST(keys)
{
	struct mkey_rec r = { 0 };
	static const uint64_t g[] = { 0x30, 0x10, 0x50, 0x20, 0x40 };
	for (unsigned i = 0; i < 5; i++)
		ck_assert_int_eq(mkrec_seen(&r, g[i], 0x1000 + g[i], 1), 0);
	for (unsigned i = 0; i + 1 < r.n; i++)
		ck_assert_uint_lt(r.v[i].guid, r.v[i + 1].guid);
	for (unsigned i = 0; i < 5; i++)
		ck_assert_uint_eq(mkrec_key(&r, g[i]), 0x1000 + g[i]);
	ck_assert_uint_eq(mkrec_key(&r, 0x35), 0);
	mkrec_taken(&r, 0x30);
	mkrec_forget(&r, 0x10);		/* answers the SM: not a take-over */
	mkrec_taken(&r, 0x99);		/* its protection without a key, not listed */
	ck_assert_uint_eq(r.taken_over, 2);
	ck_assert_uint_eq(r.n, 3);
	ck_assert_uint_eq(mkrec_key(&r, 0x30), 0);
	ck_assert_uint_eq(mkrec_key(&r, 0x50), 0x1050);
	ck_assert_uint_eq(mkrec_refusing(&r, NULL, NULL), 0);	/* keys read: they answer */
	mkrec_free(&r);
}
END_TEST

START_TEST(refusing)
{
	struct mkey_rec r = { 0 };
	uint64_t first, last;
	ck_assert_uint_eq(mkrec_refusing(&r, &first, &last), 0);
	ck_assert_uint_eq(first, 0);
	ck_assert_int_eq(mkrec_refused(&r, 0x10, 2, 1000, 60000), 0);
	ck_assert_int_eq(mkrec_refused(&r, 0x10, 2, 5000, 60000), 0);	/* kept */
	ck_assert_int_eq(mkrec_refused(&r, 0x20, 1, 3000, 2000), 0);
	ck_assert_int_eq(mkrec_refused(&r, 0x30, 1, 4000, MKREC_NEVER), 0);
	ck_assert_uint_eq(mkrec_refusing(&r, &first, &last), 3);
	ck_assert_uint_eq(first, 5000);
	ck_assert_uint_eq(last, 61000);
	/* seen at level 2 after level 1: its lease counts from then */
	ck_assert_int_eq(mkrec_refused(&r, 0x20, 2, 7000, 2000), 0);
	mkrec_refusing(&r, &first, &last);
	ck_assert_uint_eq(first, 9000);
	/* its lease over: the key read, no longer refusing */
	ck_assert_int_eq(mkrec_seen(&r, 0x10, 0xabc, 62000), 0);
	ck_assert_uint_eq(mkrec_refusing(&r, &first, &last), 2);
	ck_assert_uint_eq(last, 9000);
	/* that key refused after all (changed meanwhile): forgotten */
	ck_assert_int_eq(mkrec_refused(&r, 0x10, 2, 63000, 60000), 0);
	ck_assert_uint_eq(mkrec_key(&r, 0x10), 0);
	mkrec_free(&r);
}
END_TEST

START_TEST(rounds)
{
	struct mkey_rec r = { 0 };
	mkrec_round(&r, 100);
	mkrec_refused(&r, 0x10, 2, 150, 1000);
	mkrec_seen(&r, 0x20, 0xabc, 160);
	mkrec_round(&r, 200);		/* both noted since 100 */
	ck_assert_uint_eq(r.n, 2);
	mkrec_refused(&r, 0x10, 2, 250, 1000);
	mkrec_round(&r, 300);		/* 0x20 not noted since 200 */
	ck_assert_uint_eq(r.n, 1);
	ck_assert_uint_eq(r.v[0].guid, 0x10);
	mkrec_round(&r, 400);
	ck_assert_uint_eq(r.n, 0);
	mkrec_free(&r);
}
END_TEST

static Suite *mkeyrec_suite(void)
{
	Suite *s = suite_create("mkeyrec");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, keys);
	tcase_add_test(tc, refusing);
	tcase_add_test(tc, rounds);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(mkeyrec_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
