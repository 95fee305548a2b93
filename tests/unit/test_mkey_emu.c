/*
 * The emulator enforces the IBA's M_Key rules (mad/mkey.h, 14.2.4) on the
 * fabric of emu_tree_text(), brought up once by ibsmd, which then
 * detaches (emu_net_up): no SM sweeps behind the test.  An "SM" agent
 * on H0 (the SM LID's port, where traps go) keys devices with PortInfo
 * Sets, as an SM would; a raw host on H1 plays the hostile host.  All
 * state is read back from the devices (emu_port_mkey, emu_lft_entry).
 *
 *   switch_levels: L0 keyed at level 2 by a PortInfo Set; the host's
 *     SubnSet of an LFT block with a wrong key gets no answer, the LFT
 *     reads back unchanged, M_KeyViolations grows, a trap 256 (LID, method,
 *     attribute, modifier, the key used) reaches the SM LID; a Get with a
 *     wrong key gets no answer at levels 2 and 3, one at level 1 with
 *     PortInfo:M_Key 0 and M_KeyViolations shown, one at level 0 with the
 *     key shown; a Set never passes with a wrong key; a directed-route
 *     Get's trap carries the DR fields; a TrapRepress with a wrong key is
 *     a violation; the right key passes everything; a PortInfo Set with a
 *     wrong key cannot change the key.
 *   ca_port_key: a CA port's own key guards its SMA; the switch beside it
 *     is not touched; a key found on a switch (emu_set_mkey) refuses an SM
 *     asking with key 0.
 *   lease: with a lease of 1 s and no valid key, ProtectBits drop to 0 at
 *     its end (the key stays, a wrong-key Get is answered again); a valid
 *     key before the end stops the timer and the protection stays.
 */
#include "emu_testlib.h"

#include "mad/mkey.h"
#include "sm/base/clock.h"

#define KEY 0x5eed5eed00c0ffeeull
#define WRONG 0x0badc0de0badc0deull
#define WAIT_MS 200		/* an answer on the emulator takes well under this */
#define L0 0x100		/* leaf L0: H0 on its port 1, H1 on port 2 */
#define H1_ON_L0 2

#define CLASS_LID 0x01
#define CLASS_DR 0x81
#define M_GET 0x01
#define M_SET 0x02
#define M_TRAP 0x05
#define M_TRAP_REPRESS 0x07
#define M_GETRESP 0x81
#define A_NOTICE 0x0002
#define A_NODE_INFO 0x0011
#define A_PORT_INFO 0x0015
#define A_LFT 0x0019

/* A raw agent: SMPs out, answers and traps in. */
struct agent {
	struct mad_transport t;
	uint64_t guid;
	uint64_t tid;
	int answers, traps;
	uint8_t answer[MAD_SIZE];
	uint8_t trap[MAD_SIZE];
};

static void agent_recv(void *arg, const uint8_t *mad, size_t len,
		       const struct mad_addr *from, int status)
{
	struct agent *a = arg;
	(void)from;
	if (status || len < MAD_SIZE)
		return;
	if (mad[3] == M_GETRESP) {
		memcpy(a->answer, mad, MAD_SIZE);
		a->answers++;
	} else if (mad[3] == M_TRAP && (mad[16] << 8 | mad[17]) == A_NOTICE) {
		memcpy(a->trap, mad, MAD_SIZE);
		a->traps++;
	}
}

static void agent_attach(struct emu_net *n, struct agent *a, uint64_t guid, int issm)
{
	char err[256] = "";
	memset(a, 0, sizeof(*a));
	a->guid = guid;
	ck_assert_msg(emu_attach(n->e, n->base, guid, &a->t, agent_recv, a, err,
				 sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(emu_set_issm(n->e, guid, issm), 0);
}

struct wait_for {
	const int *counter;
	int above;
};

static int counted(const void *arg)
{
	const struct wait_for *w = arg;
	return *w->counter > w->above;
}

/*
 * Sends an SMP (LID-routed to lid, or directed route over path[1..hops]
 * when hops) with key; returns 1 and the answer's data in data (when not
 * NULL) if one came within WAIT_MS, else 0.
 */
static int smp_x(struct emu_net *n, struct agent *a, uint32_t lid, int hops,
		 const uint8_t *path, uint8_t method, uint16_t attr, uint32_t mod,
		 uint64_t key, uint8_t *data)
{
	uint8_t m[MAD_SIZE] = { 0 };
	m[0] = 1;
	m[1] = hops ? CLASS_DR : CLASS_LID;
	m[2] = 1;
	m[3] = method;
	uint64_t tid = ++a->tid;
	for (int i = 0; i < 8; i++) {
		m[8 + i] = (uint8_t)(tid >> (56 - 8 * i));
		m[24 + i] = (uint8_t)(key >> (56 - 8 * i));
	}
	m[16] = (uint8_t)(attr >> 8);
	m[17] = (uint8_t)attr;
	for (int i = 0; i < 4; i++)
		m[20 + i] = (uint8_t)(mod >> (24 - 8 * i));
	if (data)
		memcpy(m + 64, data, 64);
	struct mad_addr to = { .lid = lid, .qpn = 0 };
	if (hops) {
		m[7] = (uint8_t)hops;
		m[32] = m[33] = m[34] = m[35] = 0xff;	/* DrSLID, DrDLID permissive */
		memcpy(m + 128 + 1, path, (size_t)hops);
		to.lid = 0xffff;
	}
	int before = a->answers;
	ck_assert_int_eq(mad_transport_send(&a->t, m, MAD_SIZE, &to), 0);
	struct wait_for w = { &a->answers, before };
	if (!emu_run_while(n->base, counted, &w, WAIT_MS))
		return 0;
	ck_assert_uint_eq(a->answer[4] & 0x7f, 0);	/* status */
	ck_assert_uint_eq(a->answer[5], 0);
	if (data)
		memcpy(data, a->answer + 64, 64);
	return 1;
}

static int smp(struct emu_net *n, struct agent *a, uint32_t lid, uint8_t method,
	       uint16_t attr, uint32_t mod, uint64_t key, uint8_t *data)
{
	return smp_x(n, a, lid, 0, NULL, method, attr, mod, key, data);
}

/* The SM keys port `port` of the device at lid (PortInfo Get, then Set with its fields). */
static void sm_key(struct emu_net *n, struct agent *sm, uint32_t lid, uint32_t port,
		   uint64_t old_key, uint64_t key, uint8_t protect, uint16_t lease_s)
{
	uint8_t pi[64];
	ck_assert(smp(n, sm, lid, M_GET, A_PORT_INFO, port, old_key, pi));
	struct mkey_pi m;
	mkey_pi_get(pi, &m);
	m.key = key;
	m.protect = protect;
	m.lease_s = lease_s;
	mkey_pi_put(pi, &m);
	pi[32] &= 0xf0;		/* PortState: no change */
	pi[33] &= 0x0f;		/* PortPhysicalState: no change */
	ck_assert(smp(n, sm, lid, M_SET, A_PORT_INFO, port, old_key, pi));
	mkey_pi_get(pi, &m);
	ck_assert_uint_eq(m.key, key);
	ck_assert_uint_eq(m.protect, protect);
	ck_assert_uint_eq(m.lease_s, lease_s);
}

static struct emu_mkey dev_mkey(struct emu_net *n, uint64_t guid, int port)
{
	struct emu_mkey k;
	ck_assert_int_eq(emu_port_mkey(n->e, guid, port, &k), 0);
	return k;
}

/* Waits for the next trap 256 at the SM; decodes its DataDetails. */
static void expect_trap256(struct emu_net *n, struct agent *sm, int before,
			   uint16_t issuer, uint8_t producer, struct mkey_trap256 *t)
{
	struct wait_for w = { &sm->traps, before };
	ck_assert_msg(emu_run_while(n->base, counted, &w, WAIT_MS), "no trap 256");
	ck_assert_int_eq(sm->traps, before + 1);
	const uint8_t *d = sm->trap + 64;
	ck_assert_uint_eq(d[0], 0x80 | MKEY_NOTICE_TYPE);	/* generic, security */
	ck_assert_uint_eq(d[1] << 16 | d[2] << 8 | d[3], producer);
	ck_assert_uint_eq(d[4] << 8 | d[5], MKEY_TRAP);
	ck_assert_uint_eq(d[6] << 8 | d[7], issuer);		/* IssuerLID */
	char err[160] = "";
	ck_assert_msg(mkey_trap256_get(d + 10, MKEY_TRAP_DETAILS_LEN, t, err,
				       sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(t->lid, issuer);
}

static int no_trap(struct emu_net *n, struct agent *sm, int before)
{
	struct wait_for w = { &sm->traps, before };
	return !emu_run_while(n->base, counted, &w, WAIT_MS);
}

/* The fabric up, no SM: the SM agent on H0, the host on H1, L0's LID. */
struct fixture {
	struct emu_net n;
	struct agent sm, host;
	uint32_t l0;
};

static void fix_up(struct fixture *f)
{
	emu_net_up(&f->n);
	agent_attach(&f->n, &f->sm, emu_host_guid(0), 1);
	agent_attach(&f->n, &f->host, emu_host_guid(1), 0);
	f->l0 = (uint32_t)emu_port_lid(f->n.e, L0, 0);
	ck_assert_uint_gt(f->l0, 0);
}

/* Nothing the devices saw was an SM's mistake; everything freed. */
static void fix_down(struct fixture *f)
{
	ck_assert_uint_eq(emu_violations(f->n.e), 0);
	f->sm.t.close(f->sm.t.ctx);
	f->host.t.close(f->host.t.ctx);
	emu_net_down(&f->n);
}

/* A test's fixture f, up, and its parts by short names. */
#define FIXTURE(f)							\
	struct fixture f;						\
	fix_up(&f);							\
	struct emu_net *n = &f.n;					\
	struct agent *sm = &f.sm, *host = &f.host;			\
	uint32_t l0 = f.l0;						\
	uint8_t d[64]

START_TEST(switch_levels)
{
	FIXTURE(f);
	struct mkey_trap256 t;

	/* fresh hardware: key 0, anything passes */
	ck_assert_uint_eq(dev_mkey(n, L0, 0).key, 0);
	ck_assert(smp(n, host, l0, M_GET, A_NODE_INFO, 0, WRONG, d));
	sm_key(n, sm, l0, 0, 0, KEY, 2, 60);
	struct emu_mkey k = dev_mkey(n, L0, 0);
	ck_assert_uint_eq(k.key, KEY);
	ck_assert_uint_eq(k.protect, 2);
	ck_assert_uint_eq(k.lease_s, 60);
	ck_assert_uint_eq(k.violations, 0);
	/* a switch has one key: every port shows port 0's */
	ck_assert_uint_eq(dev_mkey(n, L0, 5).key, KEY);

	/* the hostile LFT Set: refused, unchanged, counted, trapped */
	int lft_before[64];
	for (int i = 0; i < 64; i++) {
		lft_before[i] = emu_lft_entry(n->e, L0, (uint32_t)i);
		d[i] = (uint8_t)(lft_before[i] == 3 ? 4 : 3);
	}
	int traps = sm->traps;
	ck_assert(!smp(n, host, l0, M_SET, A_LFT, 0, WRONG, d));
	for (int i = 0; i < 64; i++)
		ck_assert_int_eq(emu_lft_entry(n->e, L0, (uint32_t)i), lft_before[i]);
	ck_assert_uint_eq(dev_mkey(n, L0, 0).violations, 1);
	expect_trap256(n, sm, traps, (uint16_t)l0, 2, &t);
	ck_assert_uint_eq(t.method, M_SET);
	ck_assert_uint_eq(t.attr_id, A_LFT);
	ck_assert_uint_eq(t.attr_mod, 0);
	ck_assert_uint_eq(t.mkey, WRONG);
	ck_assert_uint_eq(t.dr_notice, 0);
	ck_assert_uint_eq(t.dr_slid, 0);
	/* the lease timer runs (60 s) */
	ck_assert_uint_gt(dev_mkey(n, L0, 0).lease_left_ms, 55000);

	/* level 2: a Get with a wrong key gets nothing either */
	traps = sm->traps;
	ck_assert(!smp(n, host, l0, M_GET, A_NODE_INFO, 0, WRONG, d));
	ck_assert_uint_eq(dev_mkey(n, L0, 0).violations, 2);
	expect_trap256(n, sm, traps, (uint16_t)l0, 2, &t);
	ck_assert_uint_eq(t.method, M_GET);
	ck_assert_uint_eq(t.attr_id, A_NODE_INFO);

	/* directed route: the trap carries DRSLID, the hop count, the return path */
	traps = sm->traps;
	static const uint8_t path[1] = { 1 };
	ck_assert(!smp_x(n, host, 0, 1, path, M_GET, A_PORT_INFO, 3, WRONG, d));
	expect_trap256(n, sm, traps, (uint16_t)l0, 2, &t);
	ck_assert_uint_eq(t.dr_notice, 1);
	ck_assert_uint_eq(t.dr_truncated, 0);
	ck_assert_uint_eq(t.dr_slid, 0xffff);
	ck_assert_uint_eq(t.dr_hop_count, 1);
	ck_assert_uint_eq(t.dr_return_path[0], H1_ON_L0);
	ck_assert_uint_eq(t.attr_mod, 3);

	/* a TrapRepress with a wrong key is a violation too (no answer either way) */
	traps = sm->traps;
	ck_assert(!smp(n, host, l0, M_TRAP_REPRESS, A_NOTICE, 0, WRONG, NULL));
	expect_trap256(n, sm, traps, (uint16_t)l0, 2, &t);
	ck_assert_uint_eq(t.method, M_TRAP_REPRESS);
	ck_assert_uint_eq(dev_mkey(n, L0, 0).violations, 4);

	/* the host cannot rekey the switch */
	uint8_t pi[64] = { 0 };
	struct mkey_pi m = { .key = WRONG, .protect = 0 };
	mkey_pi_put(pi, &m);
	ck_assert(!smp(n, host, l0, M_SET, A_PORT_INFO, 0, WRONG, pi));
	ck_assert_uint_eq(dev_mkey(n, L0, 0).key, KEY);

	/* the right key passes everything, from any port; the timer stops */
	ck_assert(smp(n, host, l0, M_GET, A_NODE_INFO, 0, KEY, d));
	ck_assert_uint_eq(dev_mkey(n, L0, 0).lease_left_ms, 0);
	uint8_t blk[64];
	ck_assert(smp(n, sm, l0, M_GET, A_LFT, 0, KEY, blk));
	ck_assert(smp(n, host, l0, M_SET, A_LFT, 0, KEY, blk));
	ck_assert(smp(n, sm, l0, M_GET, A_PORT_INFO, 0, KEY, pi));
	mkey_pi_get(pi, &m);
	ck_assert_uint_eq(m.key, KEY);
	ck_assert_uint_eq(m.violations, 5);	/* M_KeyViolations in PortInfo */
	ck_assert_uint_eq(m.protect, 2);

	/* level 3: as level 2 */
	sm_key(n, sm, l0, 0, KEY, KEY, 3, 60);
	ck_assert(!smp(n, host, l0, M_GET, A_NODE_INFO, 0, WRONG, d));
	ck_assert(smp(n, host, l0, M_GET, A_NODE_INFO, 0, KEY, d));

	/* level 1: Gets answered, PortInfo:M_Key 0; no violation, no trap */
	sm_key(n, sm, l0, 0, KEY, KEY, 1, 60);
	uint16_t v = dev_mkey(n, L0, 0).violations;
	traps = sm->traps;
	ck_assert(smp(n, host, l0, M_GET, A_NODE_INFO, 0, WRONG, d));
	ck_assert(smp(n, host, l0, M_GET, A_PORT_INFO, 4, WRONG, pi));
	mkey_pi_get(pi, &m);
	ck_assert_uint_eq(m.key, 0);
	ck_assert_uint_eq(m.protect, 1);
	ck_assert_uint_eq(m.violations, v);
	ck_assert(no_trap(n, sm, traps));
	ck_assert_uint_eq(dev_mkey(n, L0, 0).lease_left_ms, 0);
	ck_assert(!smp(n, host, l0, M_SET, A_LFT, 0, WRONG, blk));	/* Sets still not */
	ck_assert_uint_eq(dev_mkey(n, L0, 0).violations, v + 1);

	/* level 0: the key shown to anyone; Sets still need it */
	sm_key(n, sm, l0, 0, KEY, KEY, 0, 60);
	ck_assert(smp(n, host, l0, M_GET, A_PORT_INFO, 0, WRONG, pi));
	mkey_pi_get(pi, &m);
	ck_assert_uint_eq(m.key, KEY);
	ck_assert(!smp(n, host, l0, M_SET, A_LFT, 0, WRONG, blk));

	fix_down(&f);
}
END_TEST

START_TEST(ca_port_key)
{
	FIXTURE(f);
	struct mkey_trap256 t;
	uint64_t h2 = emu_host_guid(2);
	uint32_t lid2 = (uint32_t)emu_port_lid(n->e, h2, 0);
	sm_key(n, sm, lid2, 1, 0, KEY, 2, 60);
	ck_assert_uint_eq(dev_mkey(n, h2, 0).key, KEY);
	ck_assert_uint_eq(dev_mkey(n, L0, 0).key, 0);
	int traps = sm->traps;
	ck_assert(!smp(n, host, lid2, M_GET, A_PORT_INFO, 0, WRONG, d));
	expect_trap256(n, sm, traps, (uint16_t)lid2, 1, &t);	/* a CA's */
	ck_assert_uint_eq(dev_mkey(n, h2, 0).violations, 1);
	ck_assert(smp(n, host, lid2, M_GET, A_PORT_INFO, 0, KEY, d));
	ck_assert(smp(n, host, l0, M_GET, A_NODE_INFO, 0, WRONG, d));
	ck_assert_uint_eq(dev_mkey(n, L0, 0).violations, 0);
	/* a key found on the device (emu_set_mkey): an SM asking with key 0 gets nothing */
	ck_assert_int_eq(emu_set_mkey(n->e, L0, 3, KEY, 3, 10), 0);
	ck_assert_int_eq(emu_set_mkey(n->e, L0, 0, KEY, 4, 10), -1);
	ck_assert_uint_eq(dev_mkey(n, L0, 0).protect, 3);
	ck_assert(!smp(n, sm, l0, M_GET, A_NODE_INFO, 0, 0, d));
	ck_assert(smp(n, sm, l0, M_GET, A_NODE_INFO, 0, KEY, d));
	fix_down(&f);
}
END_TEST

static void run_ms(struct emu_net *n, unsigned ms)
{
	emu_run_while(n->base, emu_never, NULL, ms);
}

START_TEST(lease)
{
	FIXTURE(f);

	/* a valid key before the end stops the timer: protection stays */
	sm_key(n, sm, l0, 0, 0, KEY, 2, 1);
	ck_assert(!smp(n, host, l0, M_GET, A_NODE_INFO, 0, WRONG, d));
	uint64_t left = dev_mkey(n, L0, 0).lease_left_ms;
	ck_assert_uint_gt(left, 0);
	ck_assert_uint_le(left, 1000);
	run_ms(n, 300);
	ck_assert(smp(n, sm, l0, M_GET, A_NODE_INFO, 0, KEY, d));
	ck_assert_uint_eq(dev_mkey(n, L0, 0).lease_left_ms, 0);
	run_ms(n, 1000);
	ck_assert_uint_eq(dev_mkey(n, L0, 0).protect, 2);
	ck_assert(!smp(n, host, l0, M_GET, A_NODE_INFO, 0, WRONG, d));

	/* no valid key for lease_s: ProtectBits 0, the key stays */
	uint64_t t0 = clock_ms();
	run_ms(n, 400);
	ck_assert(!smp(n, host, l0, M_GET, A_NODE_INFO, 0, WRONG, d));	/* counts down */
	left = dev_mkey(n, L0, 0).lease_left_ms;
	ck_assert_uint_le(left, 1000 - (clock_ms() - t0) + 1);
	ck_assert_uint_eq(dev_mkey(n, L0, 0).protect, 2);
	run_ms(n, (unsigned)left + 50);
	struct emu_mkey k = dev_mkey(n, L0, 0);
	ck_assert_uint_eq(k.protect, 0);
	ck_assert_uint_eq(k.key, KEY);
	ck_assert_uint_eq(k.lease_left_ms, 0);
	uint8_t pi[64];
	ck_assert(smp(n, host, l0, M_GET, A_PORT_INFO, 0, WRONG, pi));
	struct mkey_pi m;
	mkey_pi_get(pi, &m);
	ck_assert_uint_eq(m.key, KEY);
	ck_assert_uint_eq(m.protect, 0);
	/* the SM takes over again with the key it read */
	sm_key(n, sm, l0, 0, m.key, KEY, 2, 1);
	ck_assert(!smp(n, host, l0, M_GET, A_NODE_INFO, 0, WRONG, d));

	fix_down(&f);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("mkey_emu");
	TCase *tc = tcase_create("emu");
	tcase_add_test(tc, switch_levels);
	tcase_add_test(tc, ca_port_key);
	tcase_add_test(tc, lease);
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
