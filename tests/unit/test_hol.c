/*
 * HOL exposure (routing/verify/hol.c) on a one-spine tree of three leaves with
 * two hosts each, where every route between leaves shares its leaf's up
 * link: without SL-to-VL tables each victim leaving a hot source's leaf
 * shares it with the hot flow; vFtree puts the leaf pairs on different
 * VLs and separates them.  Pattern files and hot spots: names, comments,
 * errors naming file:line.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engine.h"
#include "routing/verify/hol.h"
#include "routing/qos/vftree.h"

#include "routing_testlib.h"

static struct tb *tree3(void)
{
	struct tb *b = tb_new();
	int sp = tb_node(b, 1, 8, 0x100, "SP");
	for (int l = 0; l < 3; l++) {
		int leaf = tb_node(b, 1, 8, 0x110 + (uint64_t)l, "L%d", l);
		tb_link(b, leaf, 8, sp, 1 + l);
		for (int h = 0; h < 2; h++) {
			int n = tb_node(b, 0, 1, 0x200 + (uint64_t)(l * 16 + h * 4),
					"H%d%c", l, 'a' + h);
			tb_link(b, leaf, 1 + h, n, 1);
		}
	}
	return b;
}

static void setup(struct fabric *f, struct lft_tables *t)
{
	struct tb *b = tree3();
	tb_build(f, b, NULL, 0);
	free(b);
	tb_route(routing_engine_find("minhop"), f, t);
}

static void parse_ok(const struct fabric *f, const char *text,
		     struct hol_pattern *p)
{
	char err[512] = "";
	if (hol_parse(f, text, "pat", p, err, sizeof(err)) != 0)
		ck_abort_msg("hol_parse: %s", err);
}

/* The VL of the flow a -> b on the link out of switch sw towards b. */
static unsigned vl_at(const struct fabric *f, const struct lft_tables *t,
		      const char *a, const char *b, const char *sw,
		      unsigned in)
{
	uint8_t sl = lft_sl(t, lid_of(f, a), lid_of(f, b));
	uint32_t n = node_named(f, sw);
	uint8_t out = lft_row(t, t->row_of_node[n])[lid_of(f, b)];
	const uint8_t *tab = lft_sl2vl(t, n, in, out);
	ck_assert_ptr_nonnull(tab);
	return tab[sl];
}

START_TEST(t_file_vftree_separates)
{
	struct fabric f;
	struct lft_tables t;
	struct hol_pattern p;
	struct hol_report r;
	setup(&f, &t);
	/* hot H0a -> H1a; victims from L0: to L2 and to L1 (as the hot one) */
	parse_ok(&f, "H0a H1a hot\nH0b H2a\nH0b H1b\n", &p);
	ck_assert_int_eq(hol_expose(&f, &t, &p, &r), 0);
	ck_assert_uint_eq(r.flows, 3);
	ck_assert_uint_eq(r.hot, 1);
	ck_assert_uint_eq(r.victims, 2);
	ck_assert_uint_eq(r.undelivered, 0);
	ck_assert_uint_eq(r.exposed, 2);	/* both up L0 -> SP on VL 0 */
	ck_assert_uint_eq(r.exposed_novl, 2);

	ck_assert_int_eq(vftree_apply(&f, &t, 4), 0);
	/* vFtree: L0 -> L1 and L0 -> L2 on different VLs out of L0 */
	ck_assert_uint_ne(vl_at(&f, &t, "H0a", "H1a", "L0", 1),
			  vl_at(&f, &t, "H0b", "H2a", "L0", 2));
	ck_assert_int_eq(hol_expose(&f, &t, &p, &r), 0);
	ck_assert_uint_eq(r.victims, 2);
	ck_assert_uint_eq(r.exposed, 1);	/* H0b -> H1b: the hot one's VLs */
	ck_assert_uint_eq(r.exposed_novl, 2);
	hol_pattern_free(&p);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

START_TEST(t_hotspot_fewer_with_vftree)
{
	struct fabric f;
	struct lft_tables t;
	struct hol_pattern p;
	struct hol_report none, vf;
	char err[512] = "";
	setup(&f, &t);
	ck_assert_int_eq(hol_hotspot(&f, "H0a", &p, err, sizeof(err)), 0);
	ck_assert_int_eq(hol_expose(&f, &t, &p, &none), 0);
	/* 6 hosts, each to the 5 others; the 5 to H0a are hot */
	ck_assert_uint_eq(none.flows, 30);
	ck_assert_uint_eq(none.hot, 5);
	ck_assert_uint_eq(none.victims, 25);
	ck_assert_uint_eq(none.exposed, none.exposed_novl);
	ck_assert_uint_gt(none.exposed, 0);
	ck_assert_int_eq(vftree_apply(&f, &t, 4), 0);
	ck_assert_int_eq(hol_expose(&f, &t, &p, &vf), 0);
	ck_assert_uint_eq(vf.victims, none.victims);
	ck_assert_uint_eq(vf.exposed_novl, none.exposed);	/* same routes */
	ck_assert_uint_lt(vf.exposed, none.exposed);
	hol_pattern_free(&p);

	/* one hot source: the lowest port GUID but H0a's, H0b */
	ck_assert_int_eq(hol_hotspot(&f, "H0a,1", &p, err, sizeof(err)), 0);
	ck_assert_int_eq(hol_expose(&f, &t, &p, &vf), 0);
	ck_assert_uint_eq(vf.hot, 1);
	ck_assert_uint_eq(vf.flows, 26);
	hol_pattern_free(&p);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

START_TEST(t_names_and_comments)
{
	struct fabric f;
	struct lft_tables t;
	struct hol_pattern p;
	char text[512];
	setup(&f, &t);
	uint32_t h0a = fabric_port(&f, node_named(&f, "H0a"), 1);
	uint32_t h2b = fabric_port(&f, node_named(&f, "H2b"), 1);
	snprintf(text, sizeof(text),
		 "# flows\n\n\"H0a\" 0x%llx hot  # by GUID\r\n%u H1a\n",
		 (unsigned long long)f.ports[h2b].guid, f.ports[h2b].lid);
	parse_ok(&f, text, &p);
	ck_assert_uint_eq(p.n_flows, 2);
	ck_assert_uint_eq(p.flows[0].src, h0a);
	ck_assert_uint_eq(p.flows[0].dst, h2b);
	ck_assert_int_eq(p.flows[0].hot, 1);
	ck_assert_uint_eq(p.flows[1].src, h2b);
	ck_assert_int_eq(p.flows[1].hot, 0);
	hol_pattern_free(&p);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

static void parse_fails(const struct fabric *f, const char *text,
			const char *want)
{
	char err[512] = "";
	struct hol_pattern p;
	ck_assert_int_eq(hol_parse(f, text, "pat", &p, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, want), "'%s' lacks '%s'", err, want);
	ck_assert_ptr_null(p.flows);
}

START_TEST(t_errors)
{
	struct fabric f;
	struct lft_tables t;
	struct hol_pattern p;
	char err[512] = "";
	setup(&f, &t);
	parse_fails(&f, "H0a H1a hot\n# x\nH0b nosuch\n", "pat:3: no CA port with a LID named 'nosuch'");
	parse_fails(&f, "H0a H1a\nH0b H1b\n", "pat: no flow marked hot");
	parse_fails(&f, "H0a H1a warm\n", "pat:1: expected");
	parse_fails(&f, "H0a\n", "pat:1: expected");
	parse_fails(&f, "H0a H1a hot x\n", "pat:1: expected");
	parse_fails(&f, "H0a H0a hot\n", "pat:1: a flow from 'H0a' to itself");
	parse_fails(&f, "L0 H0a hot\n", "pat:1: no CA port");
	ck_assert_int_eq(hol_hotspot(&f, "nosuch", &p, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "nosuch"));
	ck_assert_int_eq(hol_hotspot(&f, "H0a,0", &p, err, sizeof(err)), -1);
	ck_assert_int_eq(hol_hotspot(&f, "H0a,6", &p, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "5 CA ports besides"));
	ck_assert_int_eq(hol_hotspot(&f, "H0a,5", &p, err, sizeof(err)), 0);
	hol_pattern_free(&p);
	lft_tables_free(&t);
	fabric_free(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hol");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, t_file_vftree_separates);
	tcase_add_test(tc, t_hotspot_fewer_with_vftree);
	tcase_add_test(tc, t_names_and_comments);
	tcase_add_test(tc, t_errors);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
