/*
 * The IBA's M_Key rules (vol. 1, 14.2.4): the check, the ProtectBits
 * table, the lease, the violation counter, PortInfo's M_Key fields and
 * trap 256's DataDetails.  The rules are in mad/mkey.h.
 */
#include "mad/mkey.h"

#include <stdio.h>
#include <string.h>

#define US_PER_S 1000000u
#define US_PER_MS 1000u

/* PortInfo offsets (IBA 14.2.5.6) */
#define PI_MKEY 0
#define PI_LEASE 26
#define PI_PROTECT 34		/* bits 7-6 */
#define PI_VIOLATIONS 44
#define PROTECT_SHIFT 6
#define PROTECT_MASK 0xc0u

/* trap 256 DataDetails offsets */
#define T_LID 2
#define T_DR_SLID 4
#define T_METHOD 6
#define T_ATTR_ID 8
#define T_ATTR_MOD 10
#define T_MKEY 14
#define T_DR_FLAGS 23
#define T_DR_PATH 24
#define T_DR_NOTICE 0x80u
#define T_DR_TRUNC 0x40u
#define T_DR_HOPS 0x3fu

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) << 32 | rd32(p + 4);
}

static void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void wr64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

int mkey_check(uint64_t port_key, uint64_t smp_key)
{
	return port_key == 0 || port_key == smp_key;
}

static int is_checked(uint8_t method)
{
	return method == MKEY_METHOD_GET || method == MKEY_METHOD_SET ||
	       method == MKEY_METHOD_TRAP_REPRESS;
}

enum mkey_verdict mkey_verdict(uint8_t protect, int key_ok, uint8_t method)
{
	if (key_ok || !is_checked(method))
		return MKEY_PASS;
	if (method != MKEY_METHOD_GET)
		return MKEY_DROP;	/* Set and TrapRepress need the key at every level */
	switch (protect) {
	case 0:
		return MKEY_PASS;
	case 1:
		return MKEY_PASS_HIDE;
	default:		/* 2, and 3: the same as 2 */
		return MKEY_DROP;
	}
}

void mkey_expire(struct mkey_port *p, uint64_t now_us)
{
	if (p->lease_end_us && now_us >= p->lease_end_us) {
		p->lease_end_us = 0;
		p->protect = 0;
	}
}

enum mkey_verdict mkey_receive(struct mkey_port *p, uint64_t smp_key,
			       uint8_t method, uint64_t now_us)
{
	mkey_expire(p, now_us);
	int ok = mkey_check(p->key, smp_key);
	enum mkey_verdict v = mkey_verdict(p->protect, ok, method);
	if (ok && is_checked(method))
		p->lease_end_us = 0;	/* a valid key seen: the timer stops */
	if (v != MKEY_DROP)
		return v;
	if (p->violations < MKEY_VIOLATIONS_MAX)
		p->violations++;
	if (!p->lease_end_us && p->lease_s)
		p->lease_end_us = now_us + (uint64_t)p->lease_s * US_PER_S;
	return v;
}

uint64_t mkey_lease_left_ms(const struct mkey_port *p, uint64_t now_us)
{
	if (!p->lease_end_us || now_us >= p->lease_end_us)
		return 0;
	return (p->lease_end_us - now_us + US_PER_MS - 1) / US_PER_MS;
}

void mkey_set(struct mkey_port *p, uint64_t key, uint8_t protect, uint16_t lease_s)
{
	p->key = key;
	p->protect = protect & MKEY_PROTECT_MAX;
	p->lease_s = lease_s;
	p->lease_end_us = 0;
}

void mkey_pi_get(const uint8_t *pi, struct mkey_pi *m)
{
	m->key = rd64(pi + PI_MKEY);
	m->lease_s = rd16(pi + PI_LEASE);
	m->protect = (uint8_t)((pi[PI_PROTECT] & PROTECT_MASK) >> PROTECT_SHIFT);
	m->violations = rd16(pi + PI_VIOLATIONS);
}

void mkey_pi_put(uint8_t *pi, const struct mkey_pi *m)
{
	wr64(pi + PI_MKEY, m->key);
	wr16(pi + PI_LEASE, m->lease_s);
	pi[PI_PROTECT] = (uint8_t)((pi[PI_PROTECT] & ~PROTECT_MASK) |
				   ((m->protect << PROTECT_SHIFT) & PROTECT_MASK));
	wr16(pi + PI_VIOLATIONS, m->violations);
}

int mkey_trap256_get(const uint8_t *details, size_t len, struct mkey_trap256 *t,
		     char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	if (len < MKEY_TRAP_DETAILS_LEN) {
		snprintf(err, errlen, "trap 256: DataDetails of %zu bytes, %d needed",
			 len, MKEY_TRAP_DETAILS_LEN);
		return -1;
	}
	t->lid = rd16(details + T_LID);
	t->dr_slid = rd16(details + T_DR_SLID);
	t->method = details[T_METHOD];
	t->attr_id = rd16(details + T_ATTR_ID);
	t->attr_mod = rd32(details + T_ATTR_MOD);
	t->mkey = rd64(details + T_MKEY);
	uint8_t f = details[T_DR_FLAGS];
	t->dr_notice = (f & T_DR_NOTICE) != 0;
	t->dr_truncated = (f & T_DR_TRUNC) != 0;
	t->dr_hop_count = f & T_DR_HOPS;
	if (!t->dr_notice && (f || rd16(details + T_DR_SLID))) {
		snprintf(err, errlen, "trap 256: directed-route fields (0x%02x, DRSLID %u) "
			 "without DRNotice", f, t->dr_slid);
		return -1;
	}
	if (t->dr_hop_count > MKEY_DR_PATH_MAX) {
		snprintf(err, errlen, "trap 256: DRHopCount %u beyond the %d-hop return path",
			 t->dr_hop_count, MKEY_DR_PATH_MAX);
		return -1;
	}
	memcpy(t->dr_return_path, details + T_DR_PATH, t->dr_hop_count);
	return 0;
}
