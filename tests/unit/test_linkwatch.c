/*
 * Failed and degraded links kept between heavy sweeps
 * (sm/discover/linkwatch.c), the degraded-port rule (sm/base/fabric.c)
 * and the lost links in the DOT picture (sm/render/dot.c).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_testlib.h"
#include "routing_testlib.h"
#include "sm/discover/linkwatch.h"
#include "sm/render/dot.h"

#define NOW 1800000000u

/* Two spines over three leaves, a host on each leaf. */
static struct tb *two_spines(void)
{
	struct tb *b = tb_new();
	int s0 = tb_node(b, 1, 4, 0x100, "S0"), s1 = tb_node(b, 1, 4, 0x101, "S1");
	for (int l = 0; l < 3; l++) {
		int leaf = tb_node(b, 1, 8, 0x200 + (uint64_t)l, "L%d", l);
		tb_link(b, leaf, 7, s0, l + 1);
		tb_link(b, leaf, 8, s1, l + 1);
		int host = tb_node(b, 0, 1, 0x1000 + 0x10 * (uint64_t)l, "H%d", l);
		tb_link(b, host, 1, leaf, 1);
	}
	return b;
}

struct two {
	struct tb *b, *cut;
	struct fabric full, lost;	/* lost: without L2 -- S0 */
	struct link_watch w;
};

static void two_build(struct two *t)
{
	t->b = two_spines();
	t->cut = tb_cut(t->b, "L2", "S0");
	tb_build(&t->full, t->b, NULL, 0);
	tb_build(&t->lost, t->cut, NULL, 0);
	linkwatch_init(&t->w);
}

static void two_free(struct two *t)
{
	linkwatch_free(&t->w);
	fabric_free(&t->full);
	fabric_free(&t->lost);
	free(t->b);
	free(t->cut);
}

START_TEST(lost_link_kept_until_forgotten)
{
	struct two t;
	char err[256];
	two_build(&t);
	ck_assert_int_eq(linkwatch_update(&t.w, NULL, &t.full, NOW), 0);
	ck_assert_uint_eq(t.w.n_lost, 0);
	ck_assert_int_eq(linkwatch_update(&t.w, &t.full, &t.lost, NOW), 0);
	ck_assert_uint_eq(t.w.n_lost, 1);
	const struct lost_link *l = &t.w.lost[0];
	int s = !strcmp(l->name[0], "S0") ? 0 : 1;
	ck_assert_str_eq(l->name[s], "S0");
	ck_assert_uint_eq(l->port[s], 3);
	ck_assert_str_eq(l->name[!s], "L2");
	ck_assert_uint_eq(l->port[!s], 7);
	ck_assert_uint_eq(l->guid[!s], 0x202);
	ck_assert_uint_eq(l->since, NOW);
	/* the next sweeps without it: still listed, once */
	ck_assert_int_eq(linkwatch_update(&t.w, &t.lost, &t.lost, NOW + 10), 0);
	ck_assert_int_eq(linkwatch_update(&t.w, &t.lost, &t.lost, NOW + 20), 0);
	ck_assert_uint_eq(t.w.n_lost, 1);
	ck_assert_uint_eq(t.w.lost[0].since, NOW);
	/* forgotten by one end, as ibsmctl topology prints it */
	ck_assert_int_eq(linkwatch_forget(&t.w, "\"L2\"[7]", err, sizeof(err)), 1);
	ck_assert_uint_eq(t.w.n_lost, 0);
	ck_assert_uint_eq(t.w.forgotten, 1);
	ck_assert_int_eq(linkwatch_forget(&t.w, "L2[7]", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "forget: no failed link at L2[7]");
	/* and not listed again while it stays lost */
	ck_assert_int_eq(linkwatch_update(&t.w, &t.lost, &t.lost, NOW + 30), 0);
	ck_assert_uint_eq(t.w.n_lost, 0);
	two_free(&t);
}
END_TEST

START_TEST(lost_link_returns)
{
	struct two t;
	two_build(&t);
	ck_assert_int_eq(linkwatch_update(&t.w, &t.full, &t.lost, NOW), 0);
	ck_assert_uint_eq(t.w.n_lost, 1);
	ck_assert_int_eq(linkwatch_update(&t.w, &t.lost, &t.full, NOW + 10), 0);
	ck_assert_uint_eq(t.w.n_lost, 0);
	ck_assert_uint_eq(t.w.forgotten, 0);
	two_free(&t);
}
END_TEST

START_TEST(forget_syntax)
{
	struct two t;
	char err[256];
	two_build(&t);
	ck_assert_int_eq(linkwatch_update(&t.w, &t.full, &t.lost, NOW), 0);
	/* both ends, either order, spaces and quotes as printed */
	ck_assert_int_eq(linkwatch_forget(&t.w, "\"S0\"[3] -- \"L1\"[7]", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "forget: no failed link at \"S0\"[3] -- \"L1\"[7]");
	ck_assert_int_eq(linkwatch_forget(&t.w, "L2", err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "is not NAME[PORT]"));
	ck_assert_int_eq(linkwatch_forget(&t.w, "L2[7] junk", err, sizeof(err)), -1);
	ck_assert_int_eq(linkwatch_forget(&t.w, "L2[x]", err, sizeof(err)), -1);
	ck_assert_int_eq(linkwatch_forget(&t.w, "L2[7]--", err, sizeof(err)), -1);
	ck_assert_uint_eq(t.w.n_lost, 1);
	ck_assert_int_eq(linkwatch_forget(&t.w, "\"S0\"[3] -- \"L2\"[7]", err, sizeof(err)), 1);
	ck_assert_uint_eq(t.w.n_lost, 0);
	/* by GUID */
	ck_assert_int_eq(linkwatch_update(&t.w, &t.full, &t.lost, NOW), 0);
	ck_assert_int_eq(linkwatch_forget(&t.w, "0x0000000000000202[7]--S0[3]", err, sizeof(err)), 1);
	two_free(&t);
}
END_TEST

START_TEST(one_end_of_two_lost_links_is_ambiguous)
{
	struct two t;
	char err[256];
	two_build(&t);
	struct tb *cut2 = tb_cut(t.b, "L2", NULL);	/* L2's three links */
	struct fabric f;
	tb_build(&f, cut2, NULL, 0);
	ck_assert_int_eq(linkwatch_update(&t.w, &t.full, &f, NOW), 0);
	ck_assert_uint_eq(t.w.n_lost, 3);
	/* two nodes with one name (node descriptions need not be unique):
	 * the first end of two lost links named alike */
	snprintf(t.w.lost[0].name[0], sizeof(t.w.lost[0].name[0]), "X");
	snprintf(t.w.lost[1].name[0], sizeof(t.w.lost[1].name[0]), "X");
	t.w.lost[1].port[0] = t.w.lost[0].port[0];
	char spec[64];
	snprintf(spec, sizeof(spec), "X[%u]", t.w.lost[0].port[0]);
	ck_assert_int_eq(linkwatch_forget(&t.w, spec, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "2 failed links at"));
	ck_assert_uint_eq(t.w.n_lost, 3);
	/* the GUID tells them apart */
	snprintf(spec, sizeof(spec), "0x%llx[%u]", (unsigned long long)t.w.lost[0].guid[0],
		 t.w.lost[0].port[0]);
	ck_assert_int_eq(linkwatch_forget(&t.w, spec, err, sizeof(err)), 1);
	ck_assert_uint_eq(t.w.n_lost, 2);
	fabric_free(&f);
	free(cut2);
	two_free(&t);
}
END_TEST

/* L0's host link: L0's port 1 enabled for 4X, running at 1X */
static void degrade(struct fabric *f)
{
	uint32_t pi = fabric_port(f, node_named(f, "L0"), 1);
	f->ports[pi].width_active = TOPO_WIDTH_1X;
	f->ports[pi].width_max = TOPO_WIDTH_4X;
	f->ports[f->ports[pi].remote].width_active = TOPO_WIDTH_1X;
}

START_TEST(degraded_port_rule)
{
	struct two t;
	two_build(&t);
	uint32_t pi = fabric_port(&t.full, node_named(&t.full, "L0"), 1);
	struct fab_port *p = &t.full.ports[pi];
	p->width_active = TOPO_WIDTH_4X;
	p->speed_active = TOPO_SPEED_QDR;
	p->width_max = TOPO_WIDTH_4X;
	p->speed_max = TOPO_SPEED_QDR;
	ck_assert_int_eq(fabric_port_degraded(&t.full, pi), 0);
	p->width_active = TOPO_WIDTH_1X;
	ck_assert_int_eq(fabric_port_degraded(&t.full, pi), 1);
	p->width_active = TOPO_WIDTH_2X;	/* 2 lanes of 4 */
	ck_assert_int_eq(fabric_port_degraded(&t.full, pi), 1);
	p->width_active = TOPO_WIDTH_4X;
	p->speed_active = TOPO_SPEED_SDR;
	ck_assert_int_eq(fabric_port_degraded(&t.full, pi), 1);
	p->speed_active = TOPO_SPEED_QDR;
	p->width_max = 0;			/* not read: no judgement */
	p->speed_max = 0;
	p->width_active = TOPO_WIDTH_1X;
	ck_assert_int_eq(fabric_port_degraded(&t.full, pi), 0);
	p->width_max = TOPO_WIDTH_12X;
	p->state = PORT_DOWN;			/* a port not up is not degraded */
	ck_assert_int_eq(fabric_port_degraded(&t.full, pi), 0);
	ck_assert_uint_eq(fabric_best_width(0x01 | 0x02 | 0x10), TOPO_WIDTH_4X);
	ck_assert_uint_eq(fabric_best_width(0x01 | 0x10), TOPO_WIDTH_2X);
	ck_assert_uint_eq(fabric_best_speed(0x07), TOPO_SPEED_QDR);
	ck_assert_uint_eq(fabric_best_speed(0), 0);
	two_free(&t);
}
END_TEST

START_TEST(degraded_named_once)
{
	struct two t;
	struct emu_log lg;
	two_build(&t);
	degrade(&t.full);
	emu_log_capture(&lg, LOG_WARN);
	ck_assert_int_eq(linkwatch_update(&t.w, NULL, &t.full, NOW), 0);
	ck_assert_int_eq(linkwatch_update(&t.w, &t.full, &t.full, NOW), 0);
	ck_assert_int_eq(linkwatch_update(&t.w, &t.full, &t.full, NOW), 0);
	ck_assert_int_eq(emu_log_lines(&lg, "link degraded: \"L0\" port 1 (1x SDR, enabled 4x SDR) - \"H0\" port 1 (1x SDR)"), 1);
	ck_assert_uint_eq(t.w.n_degraded, 1);
	/* well again for a sweep, then degraded again: said again */
	emu_log_capture(&lg, LOG_WARN);
	ck_assert_int_eq(linkwatch_update(&t.w, &t.full, &t.lost, NOW), 0);
	ck_assert_uint_eq(t.w.n_degraded, 0);
	ck_assert_int_eq(linkwatch_update(&t.w, &t.lost, &t.full, NOW), 0);
	ck_assert_uint_eq(t.w.n_degraded, 1);
	ck_assert_int_eq(emu_log_lines(&lg, "link degraded:"), 1);
	two_free(&t);
}
END_TEST

START_TEST(dot_draws_lost_links)
{
	struct two t;
	char *text = NULL;
	size_t len = 0;
	struct dot_stats st;
	two_build(&t);
	ck_assert_int_eq(linkwatch_update(&t.w, &t.full, &t.lost, NOW), 0);
	const struct lost_link *l = &t.w.lost[0];
	struct dot_lost dl = {
		{ fabric_find_node(&t.lost, l->guid[0]), fabric_find_node(&t.lost, l->guid[1]) },
		{ l->port[0], l->port[1] },
	};
	degrade(&t.lost);
	const struct dot_opts o = { .fold_hosts = 8, .expect_active = 0, .lost = &dl, .n_lost = 1 };
	FILE *fp = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(dot_write(fp, &t.lost, NULL, &o, &st), 0);
	ck_assert_int_eq(fclose(fp), 0);
	ck_assert_uint_eq(st.failed_links, 1);
	ck_assert_uint_eq(st.degraded_links, 1);
	int dashed = 0;
	for (const char *c = text; (c = strstr(c, "style=dashed")); c++)
		dashed++;
	ck_assert_int_eq(dashed, 1);
	ck_assert_ptr_nonnull(strstr(text, "labeltooltip=\"failed: lost\""));
	ck_assert_ptr_nonnull(strstr(text, "color=orange"));
	free(text);
	two_free(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("linkwatch");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, lost_link_kept_until_forgotten);
	tcase_add_test(tc, lost_link_returns);
	tcase_add_test(tc, forget_syntax);
	tcase_add_test(tc, one_end_of_two_lost_links_is_ambiguous);
	tcase_add_test(tc, degraded_port_rule);
	tcase_add_test(tc, degraded_named_once);
	tcase_add_test(tc, dot_draws_lost_links);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
