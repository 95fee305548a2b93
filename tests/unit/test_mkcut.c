/*
 * Was a discovery cut short by M_Key (sm/discover/mkcut.h)?  A discovery
 * made by hand: the SM's node H0 (a CA) alone, its port as read, and one
 * NodeInfo across its link that went unanswered.
 *   own_port: the local NodeInfo or the own port's PortInfo unanswered.
 *   keyed: the own port keyed at ProtectBits 2, 3, or 0 after its lease
 *     (the key stays), and the lost NodeInfo carried M_Key 0 -- the map
 *     did not name the target, or the SM keys nothing.
 *   not_keyed: a dead device: the map names it (it was asked with its
 *     own key), the own port holds no key, or ProtectBits 1 (every Get
 *     is answered there), or nothing was lost.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "mad/mkey.h"
#include "sm/discover/mkcut.h"

#define H0 0x1000ull
#define H0_PORT 0x1001ull
#define L0 0x100ull
#define OWN_LID 7
#define MASTER_LID 3

static struct discovery d;
static struct nbr_map named;	/* H0[1] <-> L0[1] */

static void own_port(uint64_t key, int protect)
{
	uint32_t own = fabric_port(&d.f, d.f.sm_node, d.f.sm_port);
	struct mkey_pi m = { .key = key, .protect = (uint8_t)protect, .lease_s = 60 };
	mkey_pi_put(d.pi_raw[own], &m);
}

static void setup(void)
{
	memset(&d, 0, sizeof(d));
	fabric_init(&d.f);
	uint32_t n = fabric_add_node(&d.f, FAB_CA, 1, H0);
	ck_assert_uint_ne(n, FAB_NONE);
	d.f.sm_node = n;
	d.f.sm_port = 1;
	struct fab_port *p = &d.f.ports[fabric_port(&d.f, n, 1)];
	p->guid = H0_PORT;
	p->flags |= FPORT_PRESENT;
	p->hw_lid = OWN_LID;
	p->hw_sm_lid = MASTER_LID;
	d.pi_raw = calloc(d.f.n_ports, SMP_DATA_SIZE);
	ck_assert_ptr_nonnull(d.pi_raw);
	own_port(0x1234, 2);
	d.lost = calloc(1, sizeof(*d.lost));
	ck_assert_ptr_nonnull(d.lost);
	d.lost[0].hops = 1;
	d.lost[0].path[1] = 1;
	d.n_lost = 1;

	struct fabric g;	/* the map of H0 - L0 */
	fabric_init(&g);
	uint32_t h = fabric_add_node(&g, FAB_CA, 1, H0), l = fabric_add_node(&g, FAB_SWITCH, 4, L0);
	g.ports[fabric_port(&g, h, 1)].guid = H0_PORT;
	for (int i = 0; i <= 4; i++)
		g.ports[fabric_port(&g, l, (unsigned)i)].guid = L0;
	fabric_link(&g, fabric_port(&g, h, 1), fabric_port(&g, l, 1));
	memset(&named, 0, sizeof(named));
	ck_assert_int_eq(nbr_from_fabric(&named, &g), 1);
	fabric_free(&g);
}

static void teardown(void)
{
	fabric_free(&d.f);
	free(d.pi_raw);
	free(d.lost);
	nbr_free(&named);
}

static enum mkcut_reason judge(const struct nbr_map *m, int keyed, struct mkcut *c)
{
	return mkcut_judge(&d, m, H0_PORT, keyed, c);
}

START_TEST(own_port_silent)
{
	struct nbr_map empty = { 0 };
	struct mkcut c;
	d.f.ports[fabric_port(&d.f, d.f.sm_node, 1)].flags &= (uint8_t)~FPORT_PRESENT;
	ck_assert_int_eq(judge(&empty, 1, &c), MKCUT_OWN_PORT);
	ck_assert_str_eq(mkcut_reason_name(c.reason), "own_port");
	d.f.ports[fabric_port(&d.f, d.f.sm_node, 1)].flags |= FPORT_PRESENT;
	d.failed = 1;		/* the NodeInfo at hop 0 */
	ck_assert_int_eq(judge(&named, 1, &c), MKCUT_OWN_PORT);
}
END_TEST

START_TEST(keyed)
{
	struct nbr_map empty = { 0 };
	struct mkcut c;
	ck_assert_int_eq(judge(&empty, 1, &c), MKCUT_KEYED);
	ck_assert_uint_eq(c.refused, 1);
	ck_assert_uint_eq(c.nodes, 1);
	ck_assert_uint_eq(c.own_protect, 2);
	ck_assert_uint_eq(c.own_lid, OWN_LID);
	ck_assert_uint_eq(c.own_sm_lid, MASTER_LID);
	ck_assert_str_eq(mkcut_reason_name(c.reason), "keyed");
	own_port(0x1234, 3);
	ck_assert_int_eq(judge(&empty, 1, &c), MKCUT_KEYED);
	own_port(0x1234, 0);	/* its lease ran out: the key stays */
	ck_assert_int_eq(judge(&empty, 1, &c), MKCUT_KEYED);
	/* the map names it, but the SM keys nothing: it went with 0 all the same */
	ck_assert_int_eq(judge(&named, 0, &c), MKCUT_KEYED);
	d.spared = 1;
	ck_assert_int_eq(judge(&empty, 1, &c), MKCUT_KEYED);
	ck_assert_uint_eq(c.held, 1);
}
END_TEST

START_TEST(not_keyed)
{
	struct nbr_map empty = { 0 };
	struct mkcut c;
	/* a dead device the map names: asked with its own key */
	ck_assert_int_eq(judge(&named, 1, &c), MKCUT_NONE);
	own_port(0, 0);		/* no SM keyed us: a dead device */
	ck_assert_int_eq(judge(&empty, 1, &c), MKCUT_NONE);
	own_port(0x1234, 1);	/* level 1 answers every Get */
	ck_assert_int_eq(judge(&empty, 1, &c), MKCUT_NONE);
	own_port(0x1234, 2);
	d.n_lost = 0;		/* nothing lost */
	ck_assert_int_eq(judge(&empty, 1, &c), MKCUT_NONE);
	ck_assert_str_eq(mkcut_reason_name(c.reason), "");
}
END_TEST

static Suite *mkcut_suite(void)
{
	Suite *s = suite_create("mkcut");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, own_port_silent);
	tcase_add_test(tc, keyed);
	tcase_add_test(tc, not_keyed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(mkcut_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
