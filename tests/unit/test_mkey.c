/*
 * The IBA's M_Key rules (mad/mkey.c; vol. 1, 14.2.4), pure:
 *   decision_table: every ProtectBits level x {key ok, key wrong} x {Get,
 *     Set, TrapRepress}, PortInfo:M_Key hidden at level 1 only; a port
 *     key 0 passes every key; other methods are not checked.
 *   lease: the timer starts at the first violation, counts while the check
 *     keeps failing (later failures do not restart it), a valid key stops
 *     it, expiry clears ProtectBits (the key stays); lease period 0 never
 *     expires; a Get answered at level 0/1 starts nothing.
 *   violations_saturate: M_KeyViolations stops at 0xFFFF.
 *   portinfo_fields: the M_Key fields at their PortInfo offsets, the rest
 *     of the attribute untouched.
 *   trap256_fields: DataDetails decoded from bytes written at the spec's
 *     offsets, LID-routed and directed-route; malformed ones refused.
 *   fuzz_share: a fixed, seeded share of tests/fuzz/fuzz_mkey.c's
 *     invariants (under ASan in the unit-san run).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mad/mkey.h"

#define KEY 0x1122334455667788ull
#define WRONG 0xdeadbeefull
#define S (1000000ull)		/* a second in microseconds */

static const uint8_t methods[3] = {
	MKEY_METHOD_GET, MKEY_METHOD_SET, MKEY_METHOD_TRAP_REPRESS
};

START_TEST(decision_table)
{
	/* [level][method] with a wrong key; every ok key passes */
	static const enum mkey_verdict want[4][3] = {
		{ MKEY_PASS, MKEY_DROP, MKEY_DROP },
		{ MKEY_PASS_HIDE, MKEY_DROP, MKEY_DROP },
		{ MKEY_DROP, MKEY_DROP, MKEY_DROP },
		{ MKEY_DROP, MKEY_DROP, MKEY_DROP },
	};
	for (uint8_t lvl = 0; lvl <= MKEY_PROTECT_MAX; lvl++)
		for (int m = 0; m < 3; m++) {
			ck_assert_int_eq(mkey_verdict(lvl, 1, methods[m]), MKEY_PASS);
			ck_assert_msg(mkey_verdict(lvl, 0, methods[m]) == want[lvl][m],
				      "level %u method 0x%x", lvl, methods[m]);
			/* the same through a port */
			struct mkey_port p = { .key = KEY, .protect = lvl };
			ck_assert_int_eq(mkey_receive(&p, KEY, methods[m], 0), MKEY_PASS);
			ck_assert_int_eq(mkey_receive(&p, WRONG, methods[m], 0), want[lvl][m]);
			ck_assert_uint_eq(p.violations, want[lvl][m] == MKEY_DROP);
			/* key 0 at the port: anything passes, nothing counted */
			struct mkey_port z = { .key = 0, .protect = lvl, .lease_s = 5 };
			ck_assert_int_eq(mkey_receive(&z, WRONG, methods[m], 0), MKEY_PASS);
			ck_assert_uint_eq(z.violations, 0);
			ck_assert_uint_eq(z.lease_end_us, 0);
		}
	ck_assert(mkey_check(0, WRONG));
	ck_assert(mkey_check(KEY, KEY));
	ck_assert(!mkey_check(KEY, WRONG));
	ck_assert(!mkey_check(KEY, 0));
	/* GetResp, Trap, Report: no check */
	ck_assert_int_eq(mkey_verdict(3, 0, 0x81), MKEY_PASS);
	ck_assert_int_eq(mkey_verdict(3, 0, 0x05), MKEY_PASS);
}
END_TEST

START_TEST(lease)
{
	struct mkey_port p = { .key = KEY, .protect = 2, .lease_s = 10 };
	uint64_t t0 = 1000 * S;
	ck_assert_int_eq(mkey_receive(&p, WRONG, MKEY_METHOD_SET, t0), MKEY_DROP);
	ck_assert_uint_eq(p.lease_end_us, t0 + 10 * S);
	ck_assert_uint_eq(mkey_lease_left_ms(&p, t0), 10000);
	ck_assert_uint_eq(mkey_lease_left_ms(&p, t0 + 1), 10000);	/* rounded up */
	/* failing again counts down, no restart */
	ck_assert_int_eq(mkey_receive(&p, WRONG, MKEY_METHOD_GET, t0 + 4 * S), MKEY_DROP);
	ck_assert_uint_eq(p.lease_end_us, t0 + 10 * S);
	ck_assert_uint_eq(mkey_lease_left_ms(&p, t0 + 4 * S), 6000);
	ck_assert_uint_eq(p.violations, 2);
	/* a valid key stops the timer */
	ck_assert_int_eq(mkey_receive(&p, KEY, MKEY_METHOD_GET, t0 + 9 * S), MKEY_PASS);
	ck_assert_uint_eq(p.lease_end_us, 0);
	ck_assert_uint_eq(mkey_lease_left_ms(&p, t0 + 9 * S), 0);
	mkey_expire(&p, t0 + 100 * S);
	ck_assert_uint_eq(p.protect, 2);
	/* the next failure starts it afresh, with the whole period */
	ck_assert_int_eq(mkey_receive(&p, WRONG, MKEY_METHOD_TRAP_REPRESS, t0 + 20 * S),
			 MKEY_DROP);
	ck_assert_uint_eq(p.lease_end_us, t0 + 30 * S);
	/* just before expiry still protected */
	ck_assert_int_eq(mkey_receive(&p, WRONG, MKEY_METHOD_GET, t0 + 30 * S - 1), MKEY_DROP);
	ck_assert_uint_eq(p.protect, 2);
	/* at expiry: ProtectBits 0, the key kept, Gets answer again */
	ck_assert_int_eq(mkey_receive(&p, WRONG, MKEY_METHOD_GET, t0 + 30 * S), MKEY_PASS);
	ck_assert_uint_eq(p.protect, 0);
	ck_assert_uint_eq(p.key, KEY);
	ck_assert_uint_eq(p.lease_end_us, 0);
	/* at level 0 a Set still needs the key, and restarts the timer */
	ck_assert_int_eq(mkey_receive(&p, WRONG, MKEY_METHOD_SET, t0 + 31 * S), MKEY_DROP);
	ck_assert_uint_eq(p.lease_end_us, t0 + 41 * S);
	/* expiry without an SMP: mkey_expire */
	p.protect = 3;
	mkey_expire(&p, t0 + 40 * S);
	ck_assert_uint_eq(p.protect, 3);
	mkey_expire(&p, t0 + 41 * S);
	ck_assert_uint_eq(p.protect, 0);

	/* lease period 0: never expires */
	struct mkey_port q = { .key = KEY, .protect = 3, .lease_s = 0 };
	ck_assert_int_eq(mkey_receive(&q, WRONG, MKEY_METHOD_SET, t0), MKEY_DROP);
	ck_assert_uint_eq(q.lease_end_us, 0);
	mkey_expire(&q, UINT64_MAX);
	ck_assert_uint_eq(q.protect, 3);

	/* a Get answered at level 1 (key hidden) is no violation, starts nothing */
	struct mkey_port r = { .key = KEY, .protect = 1, .lease_s = 1 };
	ck_assert_int_eq(mkey_receive(&r, WRONG, MKEY_METHOD_GET, t0), MKEY_PASS_HIDE);
	ck_assert_uint_eq(r.lease_end_us, 0);
	ck_assert_uint_eq(r.violations, 0);

	/* a Set that passed: new key, level and period, the timer stopped */
	mkey_receive(&r, WRONG, MKEY_METHOD_SET, t0);
	ck_assert_uint_ne(r.lease_end_us, 0);
	mkey_set(&r, 7, 2, 60);
	ck_assert_uint_eq(r.key, 7);
	ck_assert_uint_eq(r.protect, 2);
	ck_assert_uint_eq(r.lease_s, 60);
	ck_assert_uint_eq(r.lease_end_us, 0);
	ck_assert_uint_eq(r.violations, 1);
}
END_TEST

START_TEST(violations_saturate)
{
	struct mkey_port p = { .key = KEY, .protect = 2, .violations = 0xfffd };
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(mkey_receive(&p, WRONG, MKEY_METHOD_SET, 0), MKEY_DROP);
	ck_assert_uint_eq(p.violations, 0xffff);
}
END_TEST

START_TEST(portinfo_fields)
{
	uint8_t pi[MKEY_PI_LEN];
	memset(pi, 0x5a, sizeof(pi));
	pi[34] = 0x3f;		/* LMC and the bits beside ProtectBits */
	struct mkey_pi m = { .key = KEY, .lease_s = 0x0102, .violations = 0x0304,
			     .protect = 3 };
	mkey_pi_put(pi, &m);
	static const uint8_t key[8] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };
	ck_assert_mem_eq(pi, key, 8);
	ck_assert_uint_eq(pi[26], 0x01);
	ck_assert_uint_eq(pi[27], 0x02);
	ck_assert_uint_eq(pi[34], 0xff);
	ck_assert_uint_eq(pi[44], 0x03);
	ck_assert_uint_eq(pi[45], 0x04);
	for (int i = 8; i < 64; i++)
		if (i != 26 && i != 27 && i != 34 && i != 44 && i != 45)
			ck_assert_uint_eq(pi[i], 0x5a);
	struct mkey_pi back;
	mkey_pi_get(pi, &back);
	ck_assert_uint_eq(back.key, KEY);
	ck_assert_uint_eq(back.lease_s, 0x0102);
	ck_assert_uint_eq(back.violations, 0x0304);
	ck_assert_uint_eq(back.protect, 3);
	m.protect = 1;
	mkey_pi_put(pi, &m);
	ck_assert_uint_eq(pi[34], 0x7f);
}
END_TEST

START_TEST(trap256_fields)
{
	uint8_t d[MKEY_TRAP_DETAILS_LEN] = { 0 };
	struct mkey_trap256 t;
	char err[160] = "";
	/* LID-routed: LIDADDR 0x0203, Set, LFT (0x0019) block 5, key WRONG */
	d[2] = 0x02; d[3] = 0x03;
	d[6] = MKEY_METHOD_SET;
	d[8] = 0x00; d[9] = 0x19;
	d[13] = 5;
	d[18] = 0xde; d[19] = 0xad; d[20] = 0xbe; d[21] = 0xef;
	ck_assert_int_eq(mkey_trap256_get(d, sizeof(d), &t, err, sizeof(err)), 0);
	ck_assert_uint_eq(t.lid, 0x0203);
	ck_assert_uint_eq(t.method, MKEY_METHOD_SET);
	ck_assert_uint_eq(t.attr_id, 0x19);
	ck_assert_uint_eq(t.attr_mod, 5);
	ck_assert_uint_eq(t.mkey, WRONG);
	ck_assert_uint_eq(t.dr_notice, 0);
	ck_assert_uint_eq(t.dr_hop_count, 0);
	/* directed route: DRSLID 0xffff, 2 hops, path 1, 7 */
	d[4] = 0xff; d[5] = 0xff;
	d[23] = 0x80 | 2;
	d[24] = 1; d[25] = 7;
	ck_assert_int_eq(mkey_trap256_get(d, sizeof(d), &t, err, sizeof(err)), 0);
	ck_assert_uint_eq(t.dr_notice, 1);
	ck_assert_uint_eq(t.dr_truncated, 0);
	ck_assert_uint_eq(t.dr_slid, 0xffff);
	ck_assert_uint_eq(t.dr_hop_count, 2);
	ck_assert_uint_eq(t.dr_return_path[0], 1);
	ck_assert_uint_eq(t.dr_return_path[1], 7);
	ck_assert_uint_eq(t.dr_return_path[2], 0);
	/* truncated at 30 hops */
	d[23] = 0x80 | 0x40 | 30;
	ck_assert_int_eq(mkey_trap256_get(d, sizeof(d), &t, err, sizeof(err)), 0);
	ck_assert_uint_eq(t.dr_truncated, 1);
	ck_assert_uint_eq(t.dr_hop_count, 30);
	/* refused: more hops than the path holds, DR fields without DRNotice, short */
	d[23] = 0x80 | 31;
	ck_assert_int_eq(mkey_trap256_get(d, sizeof(d), &t, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "DRHopCount 31") != NULL, "%s", err);
	d[23] = 2;
	ck_assert_int_eq(mkey_trap256_get(d, sizeof(d), &t, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "without DRNotice") != NULL, "%s", err);
	ck_assert_int_eq(mkey_trap256_get(d, 53, &t, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "53 bytes") != NULL, "%s", err);
}
END_TEST

/* The fuzz target's invariants (tests/fuzz/fuzz_mkey.c), a seeded share. */
#define FUZZ_SHARE
#include "../fuzz/fuzz_mkey.c"

START_TEST(fuzz_share)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	uint8_t buf[FUZZ_MKEY_MAX_LEN];
	for (int round = 0; round < 200000; round++) {
		size_t len = (size_t)(x % (sizeof(buf) + 1));
		for (size_t i = 0; i < len; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = (uint8_t)x;
		}
		fuzz_mkey_one(buf, len);
		ck_assert_msg(fuzz_bad[0] == 0, "round %d: %s", round, fuzz_bad);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("mkey");
	TCase *tc = tcase_create("rules");
	tcase_add_test(tc, decision_table);
	tcase_add_test(tc, lease);
	tcase_add_test(tc, violations_saturate);
	tcase_add_test(tc, portinfo_fields);
	tcase_add_test(tc, trap256_fields);
	tcase_add_test(tc, fuzz_share);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
