/*
 * pFTree-Wt weight learning, the pure parts: the pFTree paper's Eq. 1
 * (Section 7) with x - min B where the paper prints x - a (sm/weights.c,
 * weights_rescale) and the PortCountersExtended codec (mad/pma.c) against
 * answers written byte by byte from IBA vol. 1 16.1.4.11 (data at MAD byte
 * 64: PortSelect byte 1, PortXmitData 8, PortRcvData 16, in units of 4
 * octets).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mad/pma.h"
#include "sm/model/part_resolve.h"
#include "sm/weights.h"

static const uint8_t ALL[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };

/* Fig. 12's learning: a receives 100 times what the others do. */
START_TEST(eq1_hundredfold)
{
	uint64_t b[8] = { 100000, 1000, 1000, 1000, 1000, 1000, 1000, 1000 };
	uint32_t w[8];
	ck_assert_uint_eq(weights_rescale(b, ALL, 8, 1, 100, w, NULL), 8);
	ck_assert_uint_eq(w[0], 100);
	for (int i = 1; i < 8; i++)
		ck_assert_uint_eq(w[i], 1);
}
END_TEST

/* min B -> a, max B -> b, in between linear, rounded to the nearest. */
START_TEST(eq1_linear)
{
	uint64_t b[5] = { 200, 300, 250, 249, 201 };
	uint32_t w[5];
	weights_rescale(b, ALL, 5, 10, 20, w, NULL);
	ck_assert_uint_eq(w[0], 10);
	ck_assert_uint_eq(w[1], 20);
	ck_assert_uint_eq(w[2], 15);	/* 50 * 10 / 100 = 5 */
	ck_assert_uint_eq(w[3], 15);	/* 4.9 -> 5 */
	ck_assert_uint_eq(w[4], 10);	/* 0.1 -> 0 */
	/* the printed (x - a) instead of (x - min B) would give 200-ish */
	for (int i = 0; i < 5; i++)
		ck_assert_uint_le(w[i], 20);
}
END_TEST

/* max B = min B: no division by zero, every measured port gets a. */
START_TEST(eq1_all_equal)
{
	uint64_t b[3] = { 777, 777, 777 };
	uint32_t w[3] = { 0, 0, 0 };
	ck_assert_uint_eq(weights_rescale(b, ALL, 3, 5, 50, w, NULL), 3);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(w[i], 5);
	uint64_t z[2] = { 0, 0 };
	weights_rescale(z, ALL, 2, 1, 100, w, NULL);
	ck_assert_uint_eq(w[0], 1);
	ck_assert_uint_eq(w[1], 1);
}
END_TEST

/* Unmeasured ports neither get a weight nor move min B / max B. */
START_TEST(eq1_unmeasured)
{
	uint64_t b[4] = { 1000, UINT64_MAX, 2000, 0 };
	uint8_t m[4] = { 1, 0, 1, 0 };
	uint32_t w[4] = { 0, 4242, 0, 4343 };
	uint64_t spread = 0;
	ck_assert_uint_eq(weights_rescale(b, m, 4, 1, 100, w, &spread), 2);
	ck_assert_uint_eq(spread, 1000);	/* UINT64_MAX is not measured */
	ck_assert_uint_eq(w[0], 1);
	ck_assert_uint_eq(w[1], 4242);
	ck_assert_uint_eq(w[2], 100);
	ck_assert_uint_eq(w[3], 4343);
	uint8_t none[4] = { 0 };
	ck_assert_uint_eq(weights_rescale(b, none, 4, 1, 100, w, &spread), 0);
	ck_assert_uint_eq(spread, 0);
	ck_assert_uint_eq(w[0], 1);
}
END_TEST

/* 64-bit volumes with the widest range do not overflow. */
START_TEST(eq1_wide)
{
	uint64_t b[3] = { 0, UINT64_MAX, UINT64_MAX / 2 };
	uint32_t w[3];
	weights_rescale(b, ALL, 3, 1, 1000000, w, NULL);
	ck_assert_uint_eq(w[0], 1);
	ck_assert_uint_eq(w[1], 1000000);
	ck_assert_uint_eq(w[2], 500000);	/* a + 499999.4999.. */
	/* b < a: the range collapses to a */
	weights_rescale(b, ALL, 3, 7, 3, w, NULL);
	ck_assert_uint_eq(w[1], 7);
}
END_TEST

/* The request: class 0x04 v1 Get of 0x001D, PortSelect in the data, QP1. */
START_TEST(pma_request)
{
	uint8_t mad[MAD_SIZE];
	struct mad_addr to;
	pma_ext_get(mad, 3, 0x1234, &to);
	ck_assert_uint_eq(mad[0], 1);		/* BaseVersion */
	ck_assert_uint_eq(mad[1], 0x04);	/* PerfMgt */
	ck_assert_uint_eq(mad[2], 1);		/* ClassVersion */
	ck_assert_uint_eq(mad[3], 0x01);	/* Get */
	ck_assert_uint_eq(mad[16] << 8 | mad[17], 0x001D);
	ck_assert_uint_eq(mad[20] | mad[21] | mad[22] | mad[23], 0);
	ck_assert_uint_eq(mad[64 + 1], 3);	/* PortSelect */
	ck_assert_uint_eq(to.lid, 0x1234);
	ck_assert_uint_eq(to.qpn, 1);
	ck_assert_uint_eq(to.qkey, 0x80010000u);
}
END_TEST

static void answer(uint8_t *mad, uint8_t port, uint64_t xmit, uint64_t rcv)
{
	memset(mad, 0, MAD_SIZE);
	mad[0] = 1;
	mad[1] = 0x04;
	mad[2] = 1;
	mad[3] = 0x81;
	mad[16] = 0x00;
	mad[17] = 0x1D;
	mad[64 + 1] = port;
	for (int i = 0; i < 8; i++) {
		mad[64 + 8 + i] = (uint8_t)(xmit >> (56 - 8 * i));
		mad[64 + 16 + i] = (uint8_t)(rcv >> (56 - 8 * i));
	}
}

START_TEST(pma_answer)
{
	uint8_t mad[MAD_SIZE];
	struct pma_counters_ext c;
	char err[128];
	answer(mad, 2, 0x0102030405060708ull, 0xfedcba9876543210ull);
	ck_assert_int_eq(pma_ext_decode(mad, MAD_SIZE, 2, &c, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.xmit_data, 0x0102030405060708ull);
	ck_assert_uint_eq(c.rcv_data, 0xfedcba9876543210ull);
	/* another port's counters, a status, another attribute, too short */
	ck_assert_int_eq(pma_ext_decode(mad, MAD_SIZE, 1, &c, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "port 2"));
	mad[5] = 0x0c;
	ck_assert_int_eq(pma_ext_decode(mad, MAD_SIZE, 2, &c, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "status"));
	answer(mad, 2, 1, 2);
	mad[17] = 0x12;		/* PortCounters */
	ck_assert_int_eq(pma_ext_decode(mad, MAD_SIZE, 2, &c, err, sizeof(err)), -1);
	answer(mad, 2, 1, 2);
	mad[3] = 0x01;		/* a Get, not its response */
	ck_assert_int_eq(pma_ext_decode(mad, MAD_SIZE, 2, &c, err, sizeof(err)), -1);
	answer(mad, 2, 1, 2);
	ck_assert_int_eq(pma_ext_decode(mad, 80, 2, &c, err, sizeof(err)), -1);
	ck_assert_int_eq(pma_ext_decode(mad, 104, 2, &c, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.rcv_data, 2);
}
END_TEST

/* Writes text to dir/weights; its path in path. */
static void put_file(const char *dir, const char *text, char *path, size_t len)
{
	snprintf(path, len, "%s/" WEIGHTS_FILE, dir);
	FILE *fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	fclose(fp);
}

#define HDR "# ibsmd learned weights, format 1 (ends with \"# end: N ports\"); written by ibsmd, read at start-up\n"

/*
 * The weights file: what is saved is read back the same; a missing file
 * is no error; every kind of damage is refused naming its line, and
 * leaves nothing loaded.
 */
START_TEST(state_file)
{
	char dir[] = "/tmp/test_weights.XXXXXX", path[256], err[512];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	uint64_t g[3] = { 0x0002c90200000011ull, 0x0002c90200000021ull, 0x0002c90200000031ull };
	uint32_t v[3] = { 1000000, 1, 37 };	/* routing.weight_learning.max's top */
	struct part_weights w = { .n = 3, .guid = g, .weight = v }, r = { 0 };
	snprintf(path, sizeof(path), "%s/" WEIGHTS_FILE, dir);
	ck_assert_int_eq(weights_load_file(path, &r, err, sizeof(err)), 1);
	ck_assert_int_eq(weights_save_file(path, &w, err, sizeof(err)), 0);
	ck_assert_int_eq(weights_load_file(path, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.n, 3);
	ck_assert(!memcmp(r.guid, g, sizeof(g)));
	ck_assert(!memcmp(r.weight, v, sizeof(v)));
	/* an empty set round-trips too */
	struct part_weights none = { 0 };
	ck_assert_int_eq(weights_save_file(path, &none, err, sizeof(err)), 0);
	ck_assert_int_eq(weights_load_file(path, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.n, 0);

	static const struct { const char *text, *why; int line; } bad[] = {
		{ "", "empty", 1 },
		{ "# some other file\n", "header", 1 },
		{ HDR "0x0002c90200000011 5\n", "no end line", 3 },
		{ HDR "0x0002c90200000011 5\n# end: 2 ports\n", "end line", 3 },
		{ HDR "0x0002c90200000011 5\n# end: 1 ports\n0x0002c90200000021 5\n", "after the end", 4 },
		{ HDR "0x0002c90200000021 5\n0x0002c90200000011 5\n# end: 2 ports\n", "increasing", 3 },
		{ HDR "0x0002c90200000011 5\n0x0002c90200000011 5\n# end: 2 ports\n", "increasing", 3 },
		{ HDR "0x0002c90200000011 0\n# end: 1 ports\n", "weight", 2 },
		{ HDR "0x0002c90200000011 1000001\n# end: 1 ports\n", "weight", 2 },
		{ HDR "0x0002c90200000011 7x\n# end: 1 ports\n", "weight", 2 },
		{ HDR "0xzz 7\n# end: 1 ports\n", "GUID", 2 },
		{ HDR "0x0 7\n# end: 1 ports\n", "GUID", 2 },
		{ HDR "0x00000002c90200000011 7\n# end: 1 ports\n", "GUID", 2 },
		{ HDR "2c90200000011 7\n# end: 1 ports\n", "0xGUID", 2 },
		{ HDR "0x0002c90200000011 7", "not ended", 2 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[16];
		put_file(dir, bad[i].text, path, sizeof(path));
		r.n = 99;
		ck_assert_msg(weights_load_file(path, &r, err, sizeof(err)) == -2,
			      "case %zu accepted", i);
		ck_assert_uint_eq(r.n, 0);
		snprintf(line, sizeof(line), ":%d: ", bad[i].line);
		ck_assert_msg(strstr(err, line) && strstr(err, bad[i].why),
			      "case %zu: \"%s\" (want line %d, \"%s\")", i, err,
			      bad[i].line, bad[i].why);
	}
	free(r.guid);
	free(r.weight);
	unlink(path);
	rmdir(dir);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("weights");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, eq1_hundredfold);
	tcase_add_test(tc, eq1_linear);
	tcase_add_test(tc, eq1_all_equal);
	tcase_add_test(tc, eq1_unmeasured);
	tcase_add_test(tc, eq1_wide);
	tcase_add_test(tc, pma_request);
	tcase_add_test(tc, pma_answer);
	tcase_add_test(tc, state_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
