/*
 * The DOT renderer (sm/render/dot.c): ranks, hosts folded per leaf, links
 * coloured by routes per link (figures worked out by hand on a one-spine
 * tree, where every route is forced), failed links dashed red.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing_testlib.h"
#include "sm/render/dot.h"

/*
 * One spine S0 over three leaves: L0 with 10 hosts, L1 with 2, L2 with 1
 * (13 hosts, one path between any two).  Routes per direction, host to
 * host over the base LIDs: L0-S0 10 * 3 = 30 up and 3 * 10 = 30 down,
 * L1-S0 2 * 11 = 22, L2-S0 1 * 12 = 12.
 */
static struct tb *one_spine(void)
{
	struct tb *b = tb_new();
	int hosts[3] = { 10, 2, 1 };
	int s0 = tb_node(b, 1, 4, 0x100, "S0");
	for (int l = 0; l < 3; l++) {
		int leaf = tb_node(b, 1, 12, 0x200 + (uint64_t)l, "L%d", l);
		tb_link(b, leaf, 12, s0, l + 1);
		for (int h = 0; h < hosts[l]; h++) {
			int host = tb_node(b, 0, 1, 0x1000 + 0x10 * (uint64_t)(l * 16 + h),
					   "H%d-%d", l, h);
			tb_link(b, host, 1, leaf, h + 1);
		}
	}
	return b;
}

struct rendered {
	struct fabric f;
	struct lft_tables t;
	struct tb *b;
	char *text;
	size_t len;
	struct dot_stats st;
};

static void render(struct rendered *r, const struct dot_opts *o, int down_l2)
{
	r->b = one_spine();
	tb_build(&r->f, r->b, NULL, 0);
	tb_route(routing_engine_find("minhop"), &r->f, &r->t);
	if (down_l2) {	/* L2's uplink: both ends Down in the model */
		uint32_t pi = fabric_port(&r->f, node_named(&r->f, "L2"), 12);
		r->f.ports[pi].state = PORT_DOWN;
		r->f.ports[r->f.ports[pi].remote].state = PORT_DOWN;
	}
	FILE *fp = open_memstream(&r->text, &r->len);
	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(dot_write(fp, &r->f, &r->t, o, &r->st), 0);
	ck_assert_int_eq(fclose(fp), 0);
}

static void done(struct rendered *r)
{
	free(r->text);
	free_all(&r->f, &r->t, r->b);
}

/* The line of the edge between the nodes named a (upper) and b, or NULL. */
static char *edge_line(const struct rendered *r, const char *a, const char *b,
		       char *buf, size_t len)
{
	char want[64];
	snprintf(want, sizeof(want), "  s%u -- s%u [", node_named(&r->f, a),
		 node_named(&r->f, b));
	const char *at = strstr(r->text, want);
	if (!at)
		return NULL;
	size_t n = strcspn(at, "\n");
	snprintf(buf, len, "%.*s", (int)n, at);
	return buf;
}

START_TEST(t_ranks_and_folds)
{
	struct rendered r;
	const struct dot_opts o = { .fold_hosts = 8 };
	render(&r, &o, 0);
	uint32_t ranks[64];
	ck_assert_int_eq(dot_switch_ranks(&r.f, ranks), 1);
	ck_assert_uint_eq(ranks[node_named(&r.f, "S0")], 1);
	ck_assert_uint_eq(ranks[node_named(&r.f, "L1")], 0);
	ck_assert_uint_eq(ranks[node_named(&r.f, "H0-0")], FAB_NONE);
	/* the spine's group comes first (drawn on top), then the leaves' */
	const char *r1 = strstr(r.text, "{ rank=same; /* rank 1 */");
	const char *r0 = strstr(r.text, "{ rank=same; /* rank 0 */");
	ck_assert_ptr_nonnull(r1);
	ck_assert_ptr_nonnull(r0);
	ck_assert(r1 < r0);
	ck_assert_ptr_nonnull(strstr(r1, "[label=\"S0\\nLID "));
	ck_assert(strstr(r1, "[label=\"S0\\nLID ") < r0);
	/* L0's 10 hosts are one box; L1's and L2's drawn one by one */
	char box[64];
	snprintf(box, sizeof(box), "  f%u [", node_named(&r.f, "L0"));
	ck_assert_ptr_nonnull(strstr(r.text, box));
	ck_assert_ptr_nonnull(strstr(r.text, "label=\"L0: 10 hosts\""));
	ck_assert_ptr_null(strstr(r.text, "\"H0-"));
	ck_assert_ptr_nonnull(strstr(r.text, "label=\"H1-1\""));
	ck_assert_ptr_nonnull(strstr(r.text, "label=\"H2-0\""));
	ck_assert_uint_eq(r.st.switches, 4);
	ck_assert_uint_eq(r.st.hosts, 13);
	ck_assert_uint_eq(r.st.folded_leaves, 1);
	/* 3 switch links, 3 host links drawn (L0's ten are in the box) */
	ck_assert_uint_eq(r.st.links, 6);
	done(&r);

	/* a higher threshold folds nothing */
	const struct dot_opts all = { .fold_hosts = 10 };
	render(&r, &all, 0);
	ck_assert_uint_eq(r.st.folded_leaves, 0);
	ck_assert_ptr_nonnull(strstr(r.text, "label=\"H0-9\""));
	ck_assert_uint_eq(r.st.links, 16);
	done(&r);
}
END_TEST

START_TEST(t_colours_by_routes)
{
	struct rendered r;
	char buf[512];
	const struct dot_opts o = { .fold_hosts = 8 };
	render(&r, &o, 0);
	ck_assert_int_eq(r.st.undelivered, 0);
	ck_assert_uint_eq(r.st.max_load, 30);
	/* sixths of 30: 30 -> the darkest, 22 -> the fifth, 12 -> the third */
	ck_assert_ptr_nonnull(edge_line(&r, "S0", "L0", buf, sizeof(buf)));
	ck_assert_msg(strstr(buf, "color=\"#08306b\"") && strstr(buf, "label=\"30\"") &&
		      strstr(buf, "routes 30 up, 30 down"), "%s", buf);
	ck_assert_ptr_nonnull(edge_line(&r, "S0", "L1", buf, sizeof(buf)));
	ck_assert_msg(strstr(buf, "color=\"#08519c\"") && strstr(buf, "label=\"22\""),
		      "%s", buf);
	ck_assert_ptr_nonnull(edge_line(&r, "S0", "L2", buf, sizeof(buf)));
	ck_assert_msg(strstr(buf, "color=\"#6baed6\"") && strstr(buf, "label=\"12\"") &&
		      !strstr(buf, "dashed"), "%s", buf);
	ck_assert_uint_eq(r.st.failed_links, 0);
	done(&r);
}
END_TEST

START_TEST(t_failed_links)
{
	struct rendered r;
	char buf[512];
	const struct dot_opts o = { .fold_hosts = 8 };
	render(&r, &o, 1);
	ck_assert_ptr_nonnull(edge_line(&r, "S0", "L2", buf, sizeof(buf)));
	ck_assert_msg(strstr(buf, "color=red, style=dashed"), "%s", buf);
	ck_assert_ptr_nonnull(edge_line(&r, "S0", "L1", buf, sizeof(buf)));
	ck_assert_msg(!strstr(buf, "dashed"), "%s", buf);
	ck_assert_uint_eq(r.st.failed_links, 1);
	done(&r);

	/* the parsed model's ports are in Init: failed once Active is expected */
	const struct dot_opts active = { .fold_hosts = 8, .expect_active = 1 };
	render(&r, &active, 0);
	ck_assert_uint_eq(r.st.failed_links, r.st.links);
	done(&r);
}
END_TEST

START_TEST(t_no_routes_and_quotes)
{
	struct fabric f;
	struct tb *b = one_spine();
	char *text = NULL;
	size_t len = 0;
	struct dot_stats st;
	const struct dot_opts o = { .fold_hosts = 8, .title = "a \"quoted\" title" };
	tb_build(&f, b, NULL, 0);
	snprintf(f.nodes[node_named(&f, "L1")].desc, FAB_DESC_LEN + 1, "rack \"7\"");
	FILE *fp = open_memstream(&text, &len);
	ck_assert_int_eq(dot_write(fp, &f, NULL, &o, &st), 0);
	fclose(fp);
	ck_assert_uint_eq(st.max_load, 0);
	ck_assert_ptr_null(strstr(text, "color=\"#"));	/* no routes, no shades */
	ck_assert_ptr_nonnull(strstr(text, "label=\"rack \\\"7\\\"\\nLID "));
	ck_assert_ptr_nonnull(strstr(text, "label=\"a \\\"quoted\\\" title\""));
	ck_assert_ptr_nonnull(strstr(text, "\n}\n"));
	free(text);
	fabric_free(&f);
	free(b);
}
END_TEST

static Suite *dot_suite(void)
{
	Suite *s = suite_create("dot");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, t_ranks_and_folds);
	tcase_add_test(tc, t_colours_by_routes);
	tcase_add_test(tc, t_failed_links);
	tcase_add_test(tc, t_no_routes_and_quotes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(dot_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
