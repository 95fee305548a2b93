/*
 * routing/xlft.c on the hypervisor fabric of vswitch_testlib.h: two VMs
 * with vLIDs in two different blocks, the tables routed by ftree, then
 * the secondary LFTs copied from the PF columns.  Judged by walking the
 * secondary tables (entry, else DefaultPort) from every switch: each vLID
 * ends at its own VF; a vSwitch without a vLID has no row; rows hold the
 * blocks in use only.
 */
#include <check.h>
#include <stdlib.h>

#include "routing/engine.h"
#include "routing/xlft.h"
#include "sm/model/lids.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "vswitch_testlib.h"

/* Where a packet for vLID v from switch sw ends (a port index), FAB_NONE. */
static uint32_t xwalk(const struct fabric *f, const struct lft_tables *t,
		      uint32_t sw, uint32_t v)
{
	for (int hops = 0; hops < 16; hops++) {
		uint32_t r = t->row_of_node[sw];
		uint8_t p = xlft_get(t, r, v - FAB_VLID_BASE);
		if (p == LFT_DROP)
			p = t->xdefault[r];
		if (p == LFT_DROP || p == 0 || p > f->nodes[sw].nports)
			return FAB_NONE;
		uint32_t rem = fabric_portp(f, sw, p)->remote;
		if (rem == FAB_NONE)
			return FAB_NONE;
		if (f->nodes[f->ports[rem].node].type != FAB_SWITCH)
			return rem;
		sw = f->ports[rem].node;
	}
	return FAB_NONE;
}

START_TEST(test_copy_pf_columns)
{
	struct fabric f;
	struct lft_tables t = { 0 };
	struct guid_map none;
	struct lid_report lr;
	struct xlft_report xr;
	char err[256] = "", *text = hv_text();

	fabric_init(&f);
	ck_assert_int_eq(topo_parse_string(&f, text, "hv.net", err, sizeof(err)), 0);
	free(text);
	hv_mark(&f);
	ck_assert_int_eq(guid_map_init(&none, 16), 0);
	ck_assert_int_eq(lids_assign(&f, &none, 0, &lr), 0);
	/* two VMs: VF 1 of V-0-0 and VF 2 of V-3-2, in blocks 0 and 2 */
	uint32_t a = hv_vf_port(&f, 0, 0, 1), b = hv_vf_port(&f, 3, 2, 2);
	const uint32_t va = FAB_VLID_BASE + 5, vb = FAB_VLID_BASE + 130;
	f.ports[a].lid = va;
	f.ports[b].lid = vb;
	ck_assert_int_eq(fabric_index_lids(&f), 0);
	ck_assert_uint_eq(f.max_vlid, vb);
	const struct routing_engine *e = routing_engine_find("ftree");
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(lft_tables_alloc(&t, &f), 0);
	int rc = e->route(&f, &(struct route_opts){ 0 }, &t, err, sizeof(err));
	ck_assert_msg(rc == 0, "ftree: %s", err);
	ck_assert_int_eq(xlft_fill(&f, &t, &xr), 0);
	ck_assert_uint_eq(xr.vlids, 2);
	ck_assert_uint_eq(xr.unrouted, 0);
	ck_assert_uint_eq(t.x_blocks, 3);	/* up to vb's block, no more */
	uint32_t vs_rows = 0;
	for (uint32_t n = 0; n < f.n_nodes; n++) {
		if (f.nodes[n].type != FAB_SWITCH)
			continue;
		ck_assert_uint_eq(xwalk(&f, &t, n, va), a);
		ck_assert_uint_eq(xwalk(&f, &t, n, vb), b);
		uint32_t r = t.row_of_node[n];
		if (fabric_is_vswitch(&f, n)) {
			vs_rows += t.xrow[r] != NULL;
			/* a vSwitch row holds its own vLID's block only */
			if (t.xcount[r]) {
				ck_assert_uint_eq(t.xcount[r], 1);
				ck_assert(t.xfirst[r] == (va - FAB_VLID_BASE) / 64 ||
					  t.xfirst[r] == (vb - FAB_VLID_BASE) / 64);
				ck_assert_uint_eq(xlft_top(&t, r), (t.xfirst[r] + 1) * 64);
			}
			ck_assert_uint_eq(t.xdefault[r],
					  f.ports[fabric_vswitch_uplink(&f, n)].num);
		} else {
			ck_assert_ptr_nonnull(t.xrow[r]);
			ck_assert_uint_eq(t.xdefault[r], LFT_DROP);
			/* a physical switch forwards the vLID as the PF's pLID */
			uint32_t pf = fabric_vswitch_pf(&f, hv_find(&f, "V-3-2"));
			ck_assert_uint_eq(t.xcount[r], t.x_blocks);
			ck_assert_uint_eq(xlft_get(&t, r, vb - FAB_VLID_BASE),
					  lft_row(&t, r)[f.ports[pf].lid]);
		}
	}
	ck_assert_uint_eq(vs_rows, 2);	/* only the two vSwitches with a vLID */
	ck_assert_uint_eq(xr.rows, vs_rows + 2 + HV_LEAVES);
	ck_assert_uint_eq(xr.blocks, vs_rows + (2 + HV_LEAVES) * t.x_blocks);
	/* an unused vLID between the two is dropped by physical switches */
	ck_assert_uint_eq(xwalk(&f, &t, hv_find(&f, "S0"), FAB_VLID_BASE + 64),
			  FAB_NONE);
	/*
	 * A vSwitch row grows to a block below its own (a VM booted there
	 * with a lower vLID), keeping what it held; the blocks between are
	 * none; a copy holds the same; "none" outside a row's blocks costs
	 * nothing.
	 */
	uint32_t rb = t.row_of_node[hv_find(&f, "V-3-2")];
	uint8_t vb_port = xlft_get(&t, rb, vb - FAB_VLID_BASE);
	ck_assert_uint_ne(vb_port, LFT_DROP);
	ck_assert_uint_eq(t.xfirst[rb], 2);
	ck_assert_int_eq(xlft_set(&t, rb, 7, 4), 0);
	ck_assert_uint_eq(t.xfirst[rb], 0);
	ck_assert_uint_eq(t.xcount[rb], 3);
	ck_assert_uint_eq(xlft_get(&t, rb, 7), 4);
	ck_assert_uint_eq(xlft_get(&t, rb, 64 + 7), LFT_DROP);
	ck_assert_uint_eq(xlft_get(&t, rb, vb - FAB_VLID_BASE), vb_port);
	ck_assert_uint_eq(xlft_top(&t, rb), 3 * 64);
	struct lft_tables c = { 0 };
	ck_assert_int_eq(lft_tables_alloc(&c, &f), 0);
	ck_assert_int_eq(xlft_copy(&c, &t), 0);
	for (uint32_t r = 0; r < t.n_sw; r++)
		for (uint32_t x = 0; x < t.x_blocks * 64; x++)
			ck_assert_uint_eq(xlft_get(&c, r, x), xlft_get(&t, r, x));
	lft_tables_free(&c);
	uint32_t rn = t.row_of_node[hv_find(&f, "V-1-0")];
	ck_assert_uint_eq(t.xcount[rn], 0);
	ck_assert_int_eq(xlft_set(&t, rn, 7, LFT_DROP), 0);
	ck_assert_ptr_null(t.xrow[rn]);
	ck_assert_uint_eq(xlft_top(&t, rn), 0);
	/* no vLID: no secondary tables at all */
	f.ports[a].lid = f.ports[b].lid = 0;
	ck_assert_int_eq(fabric_index_lids(&f), 0);
	ck_assert_int_eq(xlft_fill(&f, &t, &xr), 0);
	ck_assert_uint_eq(t.x_blocks, 0);
	ck_assert_ptr_null(t.xrow);
	lft_tables_free(&t);
	guid_map_free(&none);
	fabric_free(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("xlft");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_copy_pf_columns);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
