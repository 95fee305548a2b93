/*
 * libFuzzer target for the M_Key rules (mad/mkey.c): `make fuzz` runs it
 * after fuzz_pma (clang's -fsanitize=fuzzer with ASan and UBSan); make
 * check runs a fixed, seeded share of it under ASan (tests/unit/test_mkey.c
 * includes this file with FUZZ_SHARE defined).
 *
 * An input is a PortInfo attribute (its first 64 bytes, zeros past the
 * end of a short input) and then events of 4 bytes each: a method (bits
 * 1-0 of the byte: 0 Get, 1 Set, 2 TrapRepress, 3 the byte itself), a key
 * (bits 1-0: 0 the port's key, 1 key 0, 2 the key with its low bit
 * flipped, 3 a key made of the byte), and the time since the last
 * event in 100 ms (16 bits).  The port starts from the PortInfo's M_Key
 * fields; each event is an SMP arriving.  Checked after each one, against
 * the rules of mad/mkey.h rather than a copy of the code:
 *   - PortInfo's M_Key fields read back as written, the rest untouched;
 *   - the key never changes, ProtectBits only drop to 0 at a lease expiry;
 *   - a drop is a failed check of a checked method at a level that
 *     refuses it (a Get: levels 2 and 3), counted once (stopping at 0xFFFF), the timer running
 *     (lease period not 0) and due within one period;
 *   - a passing key stops the timer; what is left never exceeds a period;
 *   - trap 256's decoder (on the PortInfo bytes 10-63 as DataDetails, in
 *     a buffer of exactly its length) returns 0, or -1 with a reason.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/mkey.h"

#define FUZZ_MKEY_MAX_LEN (MKEY_PI_LEN + 4 * 64)
#define TICK_US 100000ull
#define TRAP_DETAILS_AT 10

#ifdef FUZZ_SHARE
/* The first breach found; the fuzzer aborts instead. */
static char fuzz_bad[256];
#endif

static void breach(const char *what, unsigned ev)
{
#ifdef FUZZ_SHARE
	if (!fuzz_bad[0])
		snprintf(fuzz_bad, sizeof(fuzz_bad), "event %u: %s", ev, what);
#else
	fprintf(stderr, "fuzz_mkey: event %u: %s\n", ev, what);
	abort();
#endif
}

static void check_portinfo(const uint8_t *pi)
{
	uint8_t copy[MKEY_PI_LEN];
	struct mkey_pi m;
	memcpy(copy, pi, sizeof(copy));
	mkey_pi_get(pi, &m);
	if (m.protect > MKEY_PROTECT_MAX)
		breach("ProtectBits above 3", 0);
	memset(copy, 0, 8);
	copy[26] = copy[27] = copy[44] = copy[45] = 0;
	copy[34] &= 0x3f;
	mkey_pi_put(copy, &m);
	if (memcmp(copy, pi, sizeof(copy)))
		breach("PortInfo's M_Key fields do not read back", 0);
}

static void check_trap(const uint8_t *pi)
{
	for (size_t len = MKEY_TRAP_DETAILS_LEN - 1; len <= MKEY_TRAP_DETAILS_LEN; len++) {
		uint8_t *d = malloc(len);	/* exactly len: ASan sees an overread */
		struct mkey_trap256 t;
		char err[160] = "";
		if (!d)
			abort();
		memcpy(d, pi + TRAP_DETAILS_AT, len);
		int rc = mkey_trap256_get(d, len, &t, err, sizeof(err));
		if (rc != 0 && rc != -1)
			breach("trap 256 decoder: neither 0 nor -1", 0);
		if (rc && (!err[0] || !memchr(err, 0, sizeof(err))))
			breach("trap 256 decoder: a refusal without a reason", 0);
		if (!rc && (t.dr_hop_count > MKEY_DR_PATH_MAX ||
			    len < MKEY_TRAP_DETAILS_LEN))
			breach("trap 256 decoder: accepted what it cannot hold", 0);
		free(d);
	}
}

static uint64_t pick_key(uint64_t key, uint8_t sel)
{
	switch (sel & 3) {
	case 0:
		return key;
	case 1:
		return 0;
	case 2:
		return key ^ 1;
	default:
		return 0x0101010101010101ull * sel;
	}
}

static int checked(uint8_t method)
{
	return method == MKEY_METHOD_GET || method == MKEY_METHOD_SET ||
	       method == MKEY_METHOD_TRAP_REPRESS;
}

/* One SMP at now; the port before it in was. */
static void check_event(const struct mkey_port *was, const struct mkey_port *p,
			enum mkey_verdict v, uint64_t smp_key, uint8_t method,
			uint64_t now, unsigned ev)
{
	int ok = mkey_check(was->key, smp_key);
	int expired = was->lease_end_us && now >= was->lease_end_us;
	uint8_t level = expired ? 0 : was->protect;
	if (p->key != was->key || p->lease_s != was->lease_s)
		breach("the key or the lease period changed", ev);
	if (p->protect != level)
		breach("ProtectBits changed other than by an expiry", ev);
	if (v != MKEY_PASS && v != MKEY_PASS_HIDE && v != MKEY_DROP)
		breach("no such verdict", ev);
	if (v != MKEY_PASS && (ok || !checked(method)))
		breach("a valid key or an unchecked method not passed", ev);
	if (v == MKEY_PASS_HIDE && (method != MKEY_METHOD_GET || level != 1))
		breach("PortInfo:M_Key hidden other than on a level-1 Get", ev);
	if (method == MKEY_METHOD_GET && !ok && (v == MKEY_DROP) != (level >= 2))
		breach("a wrong-key Get dropped below level 2, or answered at 2-3", ev);
	if (!ok && checked(method) && method != MKEY_METHOD_GET && v != MKEY_DROP)
		breach("a Set or TrapRepress with a wrong key passed", ev);
	uint16_t want = v == MKEY_DROP && was->violations < MKEY_VIOLATIONS_MAX ?
			(uint16_t)(was->violations + 1) : was->violations;
	if (p->violations != want)
		breach("M_KeyViolations miscounted", ev);
	if (ok && checked(method) && p->lease_end_us)
		breach("a valid key left the timer running", ev);
	if (v == MKEY_DROP && !!p->lease_end_us != !!p->lease_s)
		breach("a violation without the timer (or a timer with period 0)", ev);
	if (p->lease_end_us && (p->lease_end_us <= now ||
				p->lease_end_us - now > (uint64_t)p->lease_s * 1000000u))
		breach("the timer is due outside one period", ev);
	if (mkey_lease_left_ms(p, now) > (uint64_t)p->lease_s * 1000u)
		breach("more lease left than a period", ev);
}

static void fuzz_mkey_one(const uint8_t *data, size_t size)
{
	uint8_t pi[MKEY_PI_LEN] = { 0 };
	memcpy(pi, data, size < sizeof(pi) ? size : sizeof(pi));
	check_portinfo(pi);
	check_trap(pi);

	struct mkey_pi m;
	mkey_pi_get(pi, &m);
	struct mkey_port p = { .key = m.key, .protect = m.protect,
			       .lease_s = m.lease_s, .violations = m.violations };
	uint64_t now = 1;
	for (size_t off = sizeof(pi), ev = 1; off + 4 <= size; off += 4, ev++) {
		const uint8_t *e = data + off;
		static const uint8_t by_bits[3] = {
			MKEY_METHOD_GET, MKEY_METHOD_SET, MKEY_METHOD_TRAP_REPRESS
		};
		uint8_t method = (e[0] & 3) < 3 ? by_bits[e[0] & 3] : e[0];
		uint64_t key = pick_key(p.key, e[1]);
		now += ((uint64_t)e[2] << 8 | e[3]) * TICK_US;
		struct mkey_port was = p;
		enum mkey_verdict v = mkey_receive(&p, key, method, now);
		check_event(&was, &p, v, key, method, now, (unsigned)ev);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_mkey_one(data, size);
	return 0;
}
