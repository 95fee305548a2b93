/*
 * vFtree QoS (routing/qos/vftree.c, the thesis's Paper III): Algorithm 1's VL
 * matrix (its matrix for 6 leaves and 4 VLs, symmetry, the 36-leaf x 8-VL
 * pair counts), the SL that lft_sl() gives between hosts (leaves in ascending
 * node GUID order, the physical leaf for ports behind a vSwitch), and the
 * SL-to-VL tables (SL i -> VL i below max_vls, VL 0 above).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconfig/migrate.h"
#include "routing/qos/vftree.h"
#include "routing_testlib.h"

/* Algorithm 1's matrix for 6 leaves and 4 VLs. */
static const uint8_t six_by_four[6][6] = {
	{ 0, 0, 1, 2, 3, 0 },
	{ 0, 0, 2, 3, 0, 1 },
	{ 1, 2, 0, 1, 2, 3 },
	{ 2, 3, 1, 0, 3, 0 },
	{ 3, 0, 2, 3, 0, 0 },
	{ 0, 1, 3, 0, 0, 0 },
};

START_TEST(t_six_leaves_four_vls)
{
	uint8_t vl[36];
	vftree_assign_vls(vl, 6, 4);
	for (int s = 0; s < 6; s++)
		for (int d = 0; d < 6; d++)
			ck_assert_msg(vl[s * 6 + d] == six_by_four[s][d],
				      "VL[%d][%d] = %u, want %u", s, d,
				      vl[s * 6 + d], six_by_four[s][d]);
}
END_TEST

/* VL[s][d] == VL[d][s], the diagonal VL 0, every VL below maxvl. */
START_TEST(t_symmetric_and_in_range)
{
	for (uint32_t n = 1; n <= 40; n++)
		for (unsigned m = 1; m <= VFTREE_MAX_VLS; m++) {
			uint8_t *vl = malloc((size_t)n * n);
			ck_assert_ptr_nonnull(vl);
			vftree_assign_vls(vl, n, m);
			for (uint32_t s = 0; s < n; s++) {
				ck_assert_uint_eq(vl[s * n + s], 0);
				for (uint32_t d = 0; d < n; d++) {
					ck_assert_uint_eq(vl[s * n + d],
							  vl[d * n + s]);
					ck_assert_uint_lt(vl[s * n + d], m);
				}
			}
			free(vl);
		}
}
END_TEST

/* 36 leaves over 8 VLs: 198/162/164/154/154/152/152/160 ordered pairs. */
START_TEST(t_thirty_six_leaves_pair_counts)
{
	static const unsigned want[8] = { 198, 162, 164, 154, 154, 152, 152, 160 };
	uint8_t vl[36 * 36];
	unsigned got[8] = { 0 };
	vftree_assign_vls(vl, 36, 8);
	for (int k = 0; k < 36 * 36; k++) {
		ck_assert_uint_lt(vl[k], 8);
		got[vl[k]]++;
	}
	for (int v = 0; v < 8; v++)
		ck_assert_msg(got[v] == want[v], "VL%d: %u pairs, want %u",
			      v, got[v], want[v]);
}
END_TEST

/*
 * A two-level tree: nl leaves L<i> under one spine S, hpl hosts
 * H<i>_<j> per leaf.  Leaf i's GUID is 0x100 + guid_rank(i): the GUID
 * order is not the order the leaves are added in.
 */
static uint32_t guid_rank(int i, int nl)
{
	return (uint32_t)((i * 5 + 3) % nl);	/* a permutation (5 coprime) */
}

static struct tb *two_level(int nl, int hpl)
{
	struct tb *b = tb_new();
	int s = tb_node(b, 1, nl, 0x10, "S");
	for (int i = 0; i < nl; i++) {
		int l = tb_node(b, 1, hpl + 1, 0x100 + guid_rank(i, nl),
				"L%d", i);
		tb_link(b, l, hpl + 1, s, i + 1);
		for (int j = 0; j < hpl; j++) {
			int h = tb_node(b, 0, 1, 0x10000 + (uint64_t)i * 64 + j,
					"H%d_%d", i, j);
			tb_link(b, h, 1, l, j + 1);
		}
	}
	return b;
}

static uint32_t host_lid(const struct fabric *f, int i, int j)
{
	char name[16];
	snprintf(name, sizeof(name), "H%d_%d", i, j);
	return lid_of(f, name);
}

/* b built with LMC lmc, tables allocated, vFtree applied over max_vls. */
static void qos_open(struct fabric *f, struct lft_tables *t,
		     const struct tb *b, uint8_t lmc, unsigned max_vls)
{
	tb_build(f, b, NULL, lmc);
	ck_assert_int_eq(lft_tables_alloc(t, f), 0);
	ck_assert_int_eq(vftree_apply(f, t, max_vls), 0);
}

static void qos_close(struct fabric *f, struct lft_tables *t, struct tb *b)
{
	lft_tables_free(t);	/* ASan: nothing leaks */
	fabric_free(f);
	free(b);
}

/*
 * Six leaves, four VLs: the SL between every two hosts is Algorithm 1's
 * matrix entry of their leaves' GUID ranks, 0 within a leaf, and 0 to or
 * from a switch's LID.
 */
START_TEST(t_sl_between_hosts)
{
	struct tb *b = two_level(6, 2);
	struct fabric f;
	struct lft_tables t;
	qos_open(&f, &t, b, 0, 4);
	ck_assert_uint_eq(t.n_sl_class, 6);

	for (int a = 0; a < 6; a++)
		for (int d = 0; d < 6; d++)
			for (int x = 0; x < 2; x++)
				for (int y = 0; y < 2; y++) {
					uint32_t sl = lft_sl(&t, host_lid(&f, a, x),
							     host_lid(&f, d, y));
					uint8_t want = six_by_four
						[guid_rank(a, 6)][guid_rank(d, 6)];
					ck_assert_msg(sl == want,
						      "H%d_%d -> H%d_%d: SL %u, want %u",
						      a, x, d, y, sl, want);
				}
	/* two named hosts: L0 has GUID rank 3, L1 rank 2: VL[3][2] = 1 */
	ck_assert_uint_eq(lft_sl(&t, lid_of(&f, "H0_0"), lid_of(&f, "H1_1")), 1);
	ck_assert_uint_eq(lft_sl(&t, lid_of(&f, "H1_1"), lid_of(&f, "H0_0")), 1);
	/* L0 (rank 3) to L2 (rank 1): VL[3][1] = 3 */
	ck_assert_uint_eq(lft_sl(&t, lid_of(&f, "H0_0"), lid_of(&f, "H2_0")), 3);
	/* within a leaf */
	ck_assert_uint_eq(lft_sl(&t, lid_of(&f, "H3_0"), lid_of(&f, "H3_1")), 0);
	/* switch LIDs have no class: SL 0 both ways */
	for (int a = 0; a < 6; a++) {
		ck_assert_uint_eq(lft_sl(&t, lid_of(&f, "S"), host_lid(&f, a, 0)), 0);
		ck_assert_uint_eq(lft_sl(&t, host_lid(&f, a, 0), lid_of(&f, "S")), 0);
	}
	qos_close(&f, &t, b);
}
END_TEST

/* With LMC 2, each of a host's four LIDs carries its leaf's class. */
START_TEST(t_sl_lmc_range)
{
	struct tb *b = two_level(6, 1);
	struct fabric f;
	struct lft_tables t;
	qos_open(&f, &t, b, 2, 4);
	uint32_t a = host_lid(&f, 0, 0), d = host_lid(&f, 2, 0);
	uint8_t want = six_by_four[guid_rank(0, 6)][guid_rank(2, 6)];
	ck_assert_uint_ne(want, 0);
	for (uint32_t i = 0; i < 4; i++)
		for (uint32_t k = 0; k < 4; k++)
			ck_assert_uint_eq(lft_sl(&t, a + i, d + k), want);
	qos_close(&f, &t, b);
}
END_TEST

/* The fabric form of the 36 x 8 counts: one host per leaf. */
START_TEST(t_thirty_six_leaves_fabric)
{
	static const unsigned want[8] = { 198, 162, 164, 154, 154, 152, 152, 160 };
	struct tb *b = two_level(36, 1);
	struct fabric f;
	struct lft_tables t;
	unsigned got[QOS_SLS] = { 0 };
	qos_open(&f, &t, b, 0, 8);
	ck_assert_uint_eq(t.n_sl_class, 36);
	for (int a = 0; a < 36; a++)
		for (int d = 0; d < 36; d++)
			got[lft_sl(&t, host_lid(&f, a, 0), host_lid(&f, d, 0))]++;
	for (int v = 0; v < 8; v++)
		ck_assert_uint_eq(got[v], want[v]);
	for (int v = 8; v < QOS_SLS; v++)
		ck_assert_uint_eq(got[v], 0);
	qos_close(&f, &t, b);
}
END_TEST

/* Every table of every CA port and switch (in, out) pair, port 0 too. */
static void check_sl2vl(const struct fabric *f, const struct lft_tables *t,
			unsigned max_vls)
{
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct fab_node *nd = &f->nodes[n];
		for (unsigned in = 0; in <= nd->nports; in++)
			for (unsigned out = 0; out <= nd->nports; out++) {
				if (nd->type != FAB_SWITCH &&
				    (in != out || in == 0))
					continue;
				const uint8_t *m = lft_sl2vl(t, n, in, out);
				ck_assert_msg(m != NULL, "%s (%u, %u): none",
					      nd->desc, in, out);
				for (unsigned s = 0; s < QOS_SLS; s++) {
					unsigned want = s < max_vls ? s : 0;
					ck_assert_msg(m[s] == want,
						      "%s (%u, %u) SL %u -> VL %u",
						      nd->desc, in, out, s, m[s]);
					ck_assert_uint_ne(m[s], 15);
				}
			}
		ck_assert_ptr_null(lft_sl2vl(t, n, nd->nports + 1u, 1));
	}
}

START_TEST(t_sl2vl_tables)
{
	static const unsigned vls[] = { 1, 4, 8, 15 };
	struct tb *b = two_level(6, 2);
	struct fabric f;
	struct lft_tables t;
	tb_build(&f, b, NULL, 0);
	ck_assert_int_eq(lft_tables_alloc(&t, &f), 0);
	for (size_t i = 0; i < sizeof(vls) / sizeof(vls[0]); i++) {
		ck_assert_int_eq(vftree_apply(&f, &t, vls[i]), 0);
		check_sl2vl(&f, &t, vls[i]);
		ck_assert_uint_eq(t.sl2vl_n, 1);	/* one distinct table */
		for (uint32_t a = 1; a <= t.max_lid; a++)
			for (uint32_t d = 1; d <= t.max_lid; d++)
				ck_assert_uint_lt(lft_sl(&t, a, d), vls[i]);
	}
	qos_close(&f, &t, b);
}
END_TEST

/* max_vls outside 1..15 is refused and leaves no QoS fields. */
START_TEST(t_max_vls_range)
{
	struct tb *b = two_level(3, 1);
	struct fabric f;
	struct lft_tables t;
	qos_open(&f, &t, b, 0, 4);
	ck_assert_int_eq(vftree_apply(&f, &t, 0), -1);
	ck_assert_ptr_null(t.sl);
	ck_assert_ptr_null(t.sl_class);
	ck_assert_ptr_null(t.sl2vl);
	ck_assert_int_eq(vftree_apply(&f, &t, 16), -1);
	ck_assert_ptr_null(t.sl);
	ck_assert_uint_eq(lft_sl(&t, host_lid(&f, 0, 0), host_lid(&f, 1, 0)), 0);
	qos_close(&f, &t, b);
}
END_TEST

/*
 * A vSwitch V (PF P, VF F) alone under leaf LA; hosts HB, HC under LB,
 * LC.  GUIDs: LB < LC < LA, so LA is leaf 2; V is no leaf of its own
 * (three classes).  VL[0][2] = 1, VL[1][2] = 2 (3 leaves, 4 VLs).
 */
START_TEST(t_vswitch_physical_leaf)
{
	struct tb *b = tb_new();
	int s = tb_node(b, 1, 3, 0x10, "S");
	int la = tb_node(b, 1, 2, 0x300, "LA");
	int lb = tb_node(b, 1, 2, 0x100, "LB");
	int lc = tb_node(b, 1, 2, 0x200, "LC");
	int v = tb_node(b, 1, 3, 0x50, "V");
	int p = tb_node(b, 0, 1, 0x1001, "P");
	int vf = tb_node(b, 0, 1, 0x1002, "F");
	int hb = tb_node(b, 0, 1, 0x2001, "HB");
	int hc = tb_node(b, 0, 1, 0x3001, "HC");
	tb_link(b, la, 2, s, 1);
	tb_link(b, lb, 2, s, 2);
	tb_link(b, lc, 2, s, 3);
	tb_link(b, v, 1, la, 1);
	tb_link(b, p, 1, v, 2);
	tb_link(b, vf, 1, v, 3);
	tb_link(b, hb, 1, lb, 1);
	tb_link(b, hc, 1, lc, 1);
	struct fabric f;
	struct lft_tables t;
	tb_build(&f, b, NULL, 0);
	f.nodes[node_named(&f, "V")].flags |= FNODE_VSWITCH;
	ck_assert_int_eq(lft_tables_alloc(&t, &f), 0);
	ck_assert_int_eq(vftree_apply(&f, &t, 4), 0);
	ck_assert_uint_eq(t.n_sl_class, 3);
	uint32_t lp = lid_of(&f, "P"), lf = lid_of(&f, "F");
	uint32_t lhb = lid_of(&f, "HB"), lhc = lid_of(&f, "HC");
	ck_assert_uint_eq(lft_sl(&t, lf, lhb), 1);
	ck_assert_uint_eq(lft_sl(&t, lhb, lf), 1);
	ck_assert_uint_eq(lft_sl(&t, lp, lhc), 2);
	ck_assert_uint_eq(lft_sl(&t, lhc, lf), 2);
	ck_assert_uint_eq(lft_sl(&t, lhb, lhc), 0);	/* VL[0][1] */
	ck_assert_uint_eq(lft_sl(&t, lp, lf), 0);	/* same leaf */
	check_sl2vl(&f, &t, 4);
	qos_close(&f, &t, b);
}
END_TEST

/*
 * A VM's table copy with room for more LIDs (reconfig/migrate.c) keeps
 * the SLs and the SL-to-VL tables; the new LIDs have SL 0.
 */
START_TEST(t_migrate_copy_keeps_qos)
{
	struct tb *b = two_level(6, 2);
	struct fabric f;
	struct lft_tables t, c;
	qos_open(&f, &t, b, 0, 4);
	uint32_t nm = t.max_lid + 10;
	ck_assert_int_eq(migrate_tables_copy(&c, &t, &f, nm), 0);
	ck_assert_uint_eq(c.max_lid, nm);
	for (uint32_t a = 0; a <= nm; a++)
		for (uint32_t d = 0; d <= nm; d++)
			ck_assert_uint_eq(lft_sl(&c, a, d),
					  a <= t.max_lid && d <= t.max_lid ?
					  lft_sl(&t, a, d) : 0);
	ck_assert_uint_eq(lft_sl(&c, lid_of(&f, "H0_0"), lid_of(&f, "H1_1")), 1);
	check_sl2vl(&f, &c, 4);
	lft_tables_free(&c);
	qos_close(&f, &t, b);
}
END_TEST

static Suite *vftree_qos_suite(void)
{
	Suite *s = suite_create("vftree_qos");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_six_leaves_four_vls);
	tcase_add_test(tc, t_symmetric_and_in_range);
	tcase_add_test(tc, t_thirty_six_leaves_pair_counts);
	tcase_add_test(tc, t_sl_between_hosts);
	tcase_add_test(tc, t_sl_lmc_range);
	tcase_add_test(tc, t_thirty_six_leaves_fabric);
	tcase_add_test(tc, t_sl2vl_tables);
	tcase_add_test(tc, t_max_vls_range);
	tcase_add_test(tc, t_vswitch_physical_leaf);
	tcase_add_test(tc, t_migrate_copy_keeps_qos);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(vftree_qos_suite());
	srunner_run_all(sr, CK_NORMAL);
	int nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
