/*
 * The SM's per-port M_Keys (sm/model/mkeys.c):
 *   vectors: fixed (secret, port GUID) -> M_Key, computed with a reference
 *     SipHash-2-4 written apart from libsodium (the GUID's bytes
 *     big-endian in, the 8 output bytes read big-endian), and the
 *     SipHash paper's vector for key 00..0f, message 00..07 (output
 *     bytes 62 24 93 9a 79 f5 f5 93) through the same call.
 *   never_zero: no key given is 0 (an open port) over many GUIDs.
 *   secret_made: an absent file is made 0600 with 32 hex digits, read back
 *     as the same secret, and a second start reads it (same keys); with
 *     create 0 (-n) it is left absent.
 *   secret_refused: group/other bits, short, long, non-hex, two newlines.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sm/model/mkeys.h"

static uint8_t seq_secret[MKEYS_SECRET_LEN];	/* 00 01 .. 0f */

static void setup(void)
{
	for (int i = 0; i < MKEYS_SECRET_LEN; i++)
		seq_secret[i] = (uint8_t)i;
}

START_TEST(vectors)
{
	static const uint8_t other[MKEYS_SECRET_LEN] = {
		0x8f, 0x1c, 0x2d, 0x3e, 0x4a, 0x5b, 0x6c, 0x7d,
		0x8e, 0x9f, 0xa0, 0xb1, 0xc2, 0xd3, 0xe4, 0xf5
	};
	static const uint8_t zero[MKEYS_SECRET_LEN];
	ck_assert_uint_eq(mkeys_derive(seq_secret, 0x0001020304050607ull),
			  0x6224939a79f5f593ull);
	ck_assert_uint_eq(mkeys_derive(seq_secret, 0x0002c90300000001ull),
			  0x1980eeebbd96a152ull);
	ck_assert_uint_eq(mkeys_derive(other, 0x0008f10500200004ull),
			  0x77b4999edcf6c08bull);
	ck_assert_uint_eq(mkeys_derive(zero, 0), 0x6725fe6fbbe849e8ull);
	/* the secret matters, the GUID matters */
	ck_assert_uint_ne(mkeys_derive(other, 0x0002c90300000001ull),
			  0x1980eeebbd96a152ull);
	ck_assert_uint_ne(mkeys_derive(seq_secret, 0x0002c90300000002ull),
			  0x1980eeebbd96a152ull);
}
END_TEST

START_TEST(never_zero)
{
	/* no GUID is known to hash to 0: check the mapping on many instead */
	for (uint64_t g = 1; g < 100000; g++)
		ck_assert_uint_ne(mkeys_derive(seq_secret, g), 0);
}
END_TEST

static char dir[64];

static void mk_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_mkeys.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void rm_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, mode), 0);
}

START_TEST(secret_made)
{
	char path[128], err[512];
	uint8_t s1[MKEYS_SECRET_LEN], s2[MKEYS_SECRET_LEN];
	mk_dir();
	snprintf(path, sizeof(path), "%s/state/%s", dir, MKEYS_SECRET_FILE);

	memset(s1, 0xee, sizeof(s1));
	ck_assert_int_eq(mkeys_secret_load(path, 0, s1, err, sizeof(err)), MKEYS_ABSENT);
	ck_assert_int_eq(access(path, F_OK), -1);

	ck_assert_int_eq(mkeys_secret_load(path, 1, s1, err, sizeof(err)), MKEYS_MADE);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(st.st_size, 33);

	FILE *f = fopen(path, "r");
	char text[64] = "";
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(text, sizeof(text), f));
	fclose(f);
	for (int i = 0; i < MKEYS_SECRET_LEN; i++) {
		unsigned b;
		ck_assert_int_eq(sscanf(text + 2 * i, "%2x", &b), 1);
		ck_assert_uint_eq(b, s1[i]);
	}

	ck_assert_int_eq(mkeys_secret_load(path, 1, s2, err, sizeof(err)), MKEYS_READ);
	ck_assert_mem_eq(s1, s2, sizeof(s1));
	ck_assert_uint_eq(mkeys_derive(s1, 42), mkeys_derive(s2, 42));

	/* a second made one is another secret */
	char path2[128];
	snprintf(path2, sizeof(path2), "%s/other", dir);
	ck_assert_int_eq(mkeys_secret_load(path2, 1, s2, err, sizeof(err)), MKEYS_MADE);
	ck_assert(memcmp(s1, s2, sizeof(s1)) != 0);
	rm_dir();
}
END_TEST

START_TEST(secret_refused)
{
	static const struct {
		const char *text;
		mode_t mode;
		const char *why;
	} bad[] = {
		{ "000102030405060708090a0b0c0d0e0f\n", 0640, "chmod 600" },
		{ "000102030405060708090a0b0c0d0e0f\n", 0604, "chmod 600" },
		{ "000102030405060708090a0b0c0d0e0f\n", 0620, "chmod 600" },
		{ "000102030405060708090a0b0c0d0e\n", 0600, "hex digits" },
		{ "000102030405060708090a0b0c0d0e0f00\n", 0600, "hex digits" },
		{ "000102030405060708090a0b0c0d0e0g\n", 0600, "hex digits" },
		{ "000102030405060708090a0b0c0d0e0f\n\n", 0600, "hex digits" },
		{ " 000102030405060708090a0b0c0d0e0f", 0600, "hex digits" },
		{ "", 0600, "hex digits" },
	};
	char path[128], err[512];
	uint8_t s[MKEYS_SECRET_LEN];
	mk_dir();
	snprintf(path, sizeof(path), "%s/%s", dir, MKEYS_SECRET_FILE);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file(path, bad[i].text, bad[i].mode);
		err[0] = '\0';
		ck_assert_msg(mkeys_secret_load(path, 1, s, err, sizeof(err)) == -1,
			      "case %u accepted", i);
		ck_assert_msg(strstr(err, path) && strstr(err, bad[i].why),
			      "case %u: %s", i, err);
	}
	/* the good ones: with and without the newline */
	write_file(path, "000102030405060708090a0b0c0d0e0f\n", 0600);
	ck_assert_int_eq(mkeys_secret_load(path, 1, s, err, sizeof(err)), MKEYS_READ);
	ck_assert_mem_eq(s, seq_secret, sizeof(s));
	write_file(path, "000102030405060708090A0B0C0D0E0F", 0400);
	ck_assert_int_eq(mkeys_secret_load(path, 0, s, err, sizeof(err)), MKEYS_READ);
	ck_assert_mem_eq(s, seq_secret, sizeof(s));
	rm_dir();
}
END_TEST

static Suite *mkeys_suite(void)
{
	Suite *s = suite_create("mkeys");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, vectors);
	tcase_add_test(tc, never_zero);
	tcase_add_test(tc, secret_made);
	tcase_add_test(tc, secret_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(mkeys_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
