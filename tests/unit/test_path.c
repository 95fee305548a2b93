/*
 * routing/path.c: the host-visible facts of a routed path.  Two leaves
 * under one spine (and a second spine), two hosts on each leaf; links
 * narrowed or slowed by hand; MTU, rate, hops and reversibility checked
 * against what the route crosses, and holes and loops refused.
 */
#include <check.h>

#include "routing/path.h"
#include "routing_testlib.h"

/* L1, L2 leaves (ports 1-2 hosts, 3-4 up), S1, S2 spines, H1..H4. */
static struct tb *two_leaves(void)
{
	return tb_two_leaves(1);
}

static void route(const struct fabric *f, struct lft_tables *t)
{
	char err[256] = "";
	ck_assert_int_eq(lft_tables_alloc(t, f), 0);
	if (routing_engine_find("minhop")->route(f, NULL, t, err, sizeof(err)))
		ck_abort_msg("route: %s", err);
}

/* Sets a link's width and speed at both ends. */
static void set_link(struct fabric *f, uint32_t pi, uint8_t w, uint8_t s)
{
	f->ports[pi].width_active = w;
	f->ports[pi].speed_active = s;
	f->ports[f->ports[pi].remote].width_active = w;
	f->ports[f->ports[pi].remote].speed_active = s;
}

static uint32_t host_port(const struct fabric *f, const char *h)
{
	return fabric_port(f, node_named(f, h), 1);
}

/* Every link 4x QDR, MTU 4096. */
static void setup(struct fabric *f, struct lft_tables *t, struct tb **bp)
{
	*bp = two_leaves();
	tb_build(f, *bp, NULL, 0);
	for (uint32_t i = 0; i < f->n_ports; i++) {
		f->ports[i].mtu_cap = 5;
		if (f->ports[i].remote != FAB_NONE)
			set_link(f, i, TOPO_WIDTH_4X, TOPO_SPEED_QDR);
	}
	route(f, t);
}

/* The spine L2's route to a LID leaves by. */
static uint32_t up_port(const struct fabric *f, const struct lft_tables *t,
			const char *leaf, uint32_t lid)
{
	uint32_t n = node_named(f, leaf);
	return fabric_port(f, n, lft_row(t, t->row_of_node[n])[lid]);
}

START_TEST(link_rate_codes)
{
	ck_assert_uint_eq(path_link_rate(TOPO_WIDTH_1X, TOPO_SPEED_SDR), 2);
	ck_assert_uint_eq(path_link_rate(TOPO_WIDTH_4X, TOPO_SPEED_SDR), 3);
	ck_assert_uint_eq(path_link_rate(TOPO_WIDTH_12X, TOPO_SPEED_SDR), 4);
	ck_assert_uint_eq(path_link_rate(TOPO_WIDTH_1X, TOPO_SPEED_DDR), 5);
	ck_assert_uint_eq(path_link_rate(TOPO_WIDTH_4X, TOPO_SPEED_DDR), 6);
	ck_assert_uint_eq(path_link_rate(TOPO_WIDTH_4X, TOPO_SPEED_QDR), 7);
	ck_assert_uint_eq(path_link_rate(TOPO_WIDTH_12X, TOPO_SPEED_QDR), 10);
	ck_assert_uint_eq(path_link_rate(TOPO_WIDTH_4X, TOPO_SPEED_FDR), 12);
	ck_assert_uint_eq(path_link_rate(TOPO_WIDTH_4X, TOPO_SPEED_EDR), 16);
	ck_assert_uint_eq(path_link_rate(TOPO_WIDTH_2X, TOPO_SPEED_FDR), 19);
	ck_assert_uint_eq(path_link_rate(TOPO_WIDTH_4X, TOPO_SPEED_HDR), 17);
	ck_assert_uint_eq(path_link_rate(TOPO_WIDTH_4X, TOPO_SPEED_NDR), 21);
}
END_TEST

START_TEST(same_leaf_and_across)
{
	struct fabric f;
	struct lft_tables t;
	struct tb *b;
	struct path_facts pf;
	setup(&f, &t, &b);
	uint32_t h1 = host_port(&f, "H1"), h3 = host_port(&f, "H3");
	uint32_t lid2 = lid_of(&f, "H2"), lid3 = lid_of(&f, "H3");

	ck_assert_int_eq(path_resolve(&f, &t, h1, lid2, &pf), 0);
	ck_assert_uint_eq(pf.hops, 2);
	ck_assert_uint_eq(pf.rate, 7);
	ck_assert_uint_eq(pf.mtu, 5);
	ck_assert_uint_eq(pf.reversible, 1);
	ck_assert_uint_eq(pf.sl, 0);
	ck_assert_uint_eq(pf.slid, lid_of(&f, "H1"));
	ck_assert_uint_eq(pf.dlid, lid2);
	ck_assert_uint_eq(pf.dst_port, host_port(&f, "H2"));

	ck_assert_int_eq(path_resolve(&f, &t, h1, lid3, &pf), 0);
	ck_assert_uint_eq(pf.hops, 4);
	ck_assert_uint_eq(pf.rate, 7);
	ck_assert_uint_eq(pf.reversible, 1);

	/* the spine link the route to H3 crosses into L2 becomes 1x, and
	 * its far end's MTU 2048: the rate and MTU come from it */
	uint32_t spine = f.ports[up_port(&f, &t, "L1", lid3)].remote;
	uint32_t down = fabric_port(&f, f.ports[spine].node,
				    lft_row(&t, t.row_of_node[f.ports[spine].node])[lid3]);
	set_link(&f, down, TOPO_WIDTH_1X, TOPO_SPEED_QDR);
	f.ports[f.ports[down].remote].mtu_cap = 4;
	ck_assert_int_eq(path_resolve(&f, &t, h1, lid3, &pf), 0);
	ck_assert_uint_eq(pf.rate, 3);
	ck_assert_uint_eq(pf.mtu, 4);
	/* the same leaf does not cross it */
	ck_assert_int_eq(path_resolve(&f, &t, h1, lid2, &pf), 0);
	ck_assert_uint_eq(pf.rate, 7);
	ck_assert_uint_eq(pf.mtu, 5);

	/* codes are not ordered: 12x SDR (code 4, 30 Gb/s) beside 1x DDR
	 * (code 5, 5 Gb/s) gives 5 */
	set_link(&f, down, TOPO_WIDTH_12X, TOPO_SPEED_SDR);
	set_link(&f, h3, TOPO_WIDTH_1X, TOPO_SPEED_DDR);
	ck_assert_int_eq(path_resolve(&f, &t, h1, lid3, &pf), 0);
	ck_assert_uint_eq(pf.rate, 5);
	set_link(&f, h3, TOPO_WIDTH_4X, TOPO_SPEED_QDR);
	ck_assert_int_eq(path_resolve(&f, &t, h1, lid3, &pf), 0);
	ck_assert_uint_eq(pf.rate, 4);
	free_all(&f, &t, b);
}
END_TEST

START_TEST(switch_and_self)
{
	struct fabric f;
	struct lft_tables t;
	struct tb *b;
	struct path_facts pf;
	setup(&f, &t, &b);
	uint32_t h1 = host_port(&f, "H1");
	uint32_t l1 = fabric_port(&f, node_named(&f, "L1"), 0);
	ck_assert_int_eq(path_resolve(&f, &t, h1, lid_of(&f, "L1"), &pf), 0);
	ck_assert_uint_eq(pf.hops, 1);
	ck_assert_uint_eq(pf.dst_port, l1);
	ck_assert_uint_eq(pf.reversible, 1);
	ck_assert_int_eq(path_resolve(&f, &t, h1, lid_of(&f, "S2"), &pf), 0);
	ck_assert_uint_eq(pf.hops, 2);
	ck_assert_int_eq(path_resolve(&f, &t, l1, lid_of(&f, "H4"), &pf), 0);
	ck_assert_uint_eq(pf.hops, 3);
	ck_assert_int_eq(path_resolve(&f, &t, h1, lid_of(&f, "H1"), &pf), 0);
	ck_assert_uint_eq(pf.hops, 0);
	ck_assert_uint_eq(pf.reversible, 1);
	ck_assert_uint_eq(pf.rate, 7);
	/* not an end port, no such LID, LID 0 */
	ck_assert_int_eq(path_resolve(&f, &t, fabric_port(&f, node_named(&f, "L1"), 1),
				      lid_of(&f, "H2"), &pf), -1);
	ck_assert_int_eq(path_resolve(&f, &t, h1, f.max_lid + 1, &pf), -1);
	ck_assert_int_eq(path_resolve(&f, &t, h1, 0, &pf), -1);
	free_all(&f, &t, b);
}
END_TEST

START_TEST(holes_loops_oneway)
{
	struct fabric f;
	struct lft_tables t;
	struct tb *b;
	struct path_facts pf;
	setup(&f, &t, &b);
	uint32_t h1 = host_port(&f, "H1"), h3 = host_port(&f, "H3");
	uint32_t lid1 = lid_of(&f, "H1"), lid3 = lid_of(&f, "H3");
	uint32_t rl1 = t.row_of_node[node_named(&f, "L1")];
	uint32_t rl2 = t.row_of_node[node_named(&f, "L2")];

	/* the way back is a hole: forward still resolves, not reversible */
	uint8_t keep = lft_row(&t, rl2)[lid1];
	lft_row(&t, rl2)[lid1] = LFT_DROP;
	ck_assert_int_eq(path_resolve(&f, &t, h1, lid3, &pf), 0);
	ck_assert_uint_eq(pf.reversible, 0);
	ck_assert_int_eq(path_resolve(&f, &t, h3, lid1, &pf), -1);
	lft_row(&t, rl2)[lid1] = keep;

	/* a loop: L1 sends H3's LID to S1, S1 sends it back to L1 */
	lft_row(&t, rl1)[lid3] = 3;
	uint32_t rs1 = t.row_of_node[node_named(&f, "S1")];
	lft_row(&t, rs1)[lid3] = 1;
	ck_assert_int_eq(path_resolve(&f, &t, h1, lid3, &pf), -1);

	/* a port past the switch's last */
	lft_row(&t, rl1)[lid3] = 9;
	ck_assert_int_eq(path_resolve(&f, &t, h1, lid3, &pf), -1);

	/* a link that is down */
	lft_row(&t, rl1)[lid3] = 3;
	lft_row(&t, rs1)[lid3] = 2;
	ck_assert_int_eq(path_resolve(&f, &t, h1, lid3, &pf), 0);
	f.ports[fabric_port(&f, node_named(&f, "S1"), 2)].phys_state = 2;
	ck_assert_int_eq(path_resolve(&f, &t, h1, lid3, &pf), -1);
	free_all(&f, &t, b);
}
END_TEST

START_TEST(lmc_range)
{
	struct tb *b = two_leaves();
	struct fabric f;
	struct lft_tables t;
	struct path_facts pf;
	tb_build(&f, b, NULL, 2);
	route(&f, &t);
	uint32_t h1 = host_port(&f, "H1"), lid4 = lid_of(&f, "H4");
	for (uint32_t k = 0; k < 4; k++) {
		ck_assert_int_eq(path_resolve(&f, &t, h1, lid4 + k, &pf), 0);
		ck_assert_uint_eq(pf.dlid, lid4 + k);
		ck_assert_uint_eq(pf.dst_port, host_port(&f, "H4"));
		ck_assert_uint_eq(pf.reversible, 1);
	}
	free_all(&f, &t, b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("path");
	TCase *tc = tcase_create("path");
	tcase_add_test(tc, link_rate_codes);
	tcase_add_test(tc, same_leaf_and_across);
	tcase_add_test(tc, switch_and_self);
	tcase_add_test(tc, holes_loops_oneway);
	tcase_add_test(tc, lmc_range);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
