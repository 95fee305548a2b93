/*
 * The status page's renderers: the fabric's SVG (sm/render/svg.c, through
 * Graphviz: one node group per switch, a failed link dashed, a hot one
 * drawn bold red) and the HTML page (sm/ctl/statuspage.c: every text
 * from the fabric HTML-escaped, a NodeDescription holding a script and
 * quotes above all; the parts present and absent).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing_testlib.h"
#include "sm/ctl/statuspage.h"
#include "sm/render/svg.h"

#define EVIL "<script>alert(\"x\")</script>'&"
#define EVIL_HTML "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39;&amp;"

/* One spine S0 over leaves L0, L1, L2 with two hosts each; H1-0's description EVIL. */
static void build(struct fabric *f, struct tb **bp)
{
	struct tb *b = tb_new();
	int s0 = tb_node(b, 1, 4, 0x100, "S0");
	for (int l = 0; l < 3; l++) {
		int leaf = tb_node(b, 1, 4, 0x200 + (uint64_t)l, "L%d", l);
		tb_link(b, leaf, 4, s0, l + 1);
		for (int h = 0; h < 2; h++)
			tb_link(b, tb_node(b, 0, 1, 0x1000 + 0x10 * (uint64_t)(l * 4 + h),
					   "H%d-%d", l, h), 1, leaf, h + 1);
	}
	tb_build(f, b, NULL, 0);
	snprintf(f->nodes[node_named(f, "H1-0")].desc, FAB_DESC_LEN + 1, "%s", EVIL);
	*bp = b;
}

static unsigned count(const char *hay, const char *needle)
{
	unsigned n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The SVG group that follows the first occurrence of cls, up to its end. */
static char *group(const char *svg, const char *cls, char *buf, size_t len)
{
	const char *at = strstr(svg, cls);
	if (!at)
		return NULL;
	const char *end = strstr(at, "</g>");
	snprintf(buf, len, "%.*s", (int)(end ? end - at : 0), at);
	return buf;
}

static char *draw(struct fabric *f, const uint8_t *hot, struct dot_stats *st, size_t *len)
{
	char err[256] = "";
	const struct dot_opts o = { .fold_hosts = 8, .hot = hot, .title = "a \"title\" <here>" };
	char *svg = svg_render(f, NULL, &o, st, len, err, sizeof(err));
	ck_assert_msg(svg != NULL, "%s", err);
	return svg;
}

START_TEST(t_svg)
{
	struct fabric f;
	struct tb *b;
	struct dot_stats st;
	size_t len;
	char buf[4096];
	build(&f, &b);
	/* L2's uplink down: failed; S0 -- L1 hot (flagged at the spine's end) */
	uint32_t down = fabric_port(&f, node_named(&f, "L2"), 4);
	f.ports[down].state = PORT_DOWN;
	f.ports[f.ports[down].remote].state = PORT_DOWN;
	uint8_t *hot = calloc(f.n_ports, 1);
	ck_assert_ptr_nonnull(hot);
	hot[fabric_port(&f, node_named(&f, "S0"), 2)] = 1;

	char *svg = draw(&f, hot, &st, &len);
	ck_assert_uint_eq(strlen(svg), len);
	ck_assert_ptr_nonnull(strstr(svg, "<svg"));
	ck_assert_uint_eq(count(svg, "class=\"node switch\""), 4);
	ck_assert_uint_eq(st.switches, 4);
	ck_assert_uint_eq(count(svg, "class=\"node host\""), 6);
	/* the failed link, dashed; the others not */
	ck_assert_uint_eq(count(svg, "class=\"edge failed\""), 1);
	ck_assert_ptr_nonnull(group(svg, "class=\"edge failed\"", buf, sizeof(buf)));
	ck_assert_msg(strstr(buf, "stroke-dasharray") && strstr(buf, "stroke=\"red\""), "%s", buf);
	ck_assert_uint_eq(count(svg, "stroke-dasharray"), 1);
	/* the hot link: bold red, its tooltip says so */
	ck_assert_uint_eq(count(svg, "class=\"edge hot\""), 1);
	ck_assert_uint_eq(st.hot_links, 1);
	ck_assert_ptr_nonnull(group(svg, "class=\"edge hot\"", buf, sizeof(buf)));
	ck_assert_msg(strstr(buf, "stroke=\"red\"") && strstr(buf, "stroke-width=\"4\"") &&
		      strstr(buf, "title=\"hot: port 2 &#45;&#45; port 4\""), "%s", buf);
	/* the host's description is text in the SVG, never markup */
	ck_assert_ptr_null(strstr(svg, "<script"));
	ck_assert_ptr_nonnull(strstr(svg, "&lt;script&gt;"));
	free(svg);

	/* no hot flags: none drawn */
	svg = draw(&f, NULL, &st, &len);
	ck_assert_uint_eq(count(svg, "class=\"edge hot\""), 0);
	ck_assert_uint_eq(st.hot_links, 0);
	free(svg);
	free(hot);
	fabric_free(&f);
	free(b);
}
END_TEST

static json_t *status_json(void)
{
	return json_pack("{s:s,s:i,s:s,s:i,s:i,s:s,s:{s:s,s:i,s:i,s:i},s:[{s:s,s:s,s:i}],"
			 "s:{s:[{s:s,s:s}]},s:{s:i,s:i,s:{s:i,s:i}},"
			 "s:{s:[{s:s,s:i,s:i}]}}",
			 "state", "MASTER", "priority", 5, "port_guid", "0x0002c90200000001",
			 "heavy_sweeps", 3, "light_sweeps", 7, "master_guid", "0x0002c90200000001",
			 "last_heavy_sweep", "time", "2026-11-28T18:00:00Z", "sweep_ms", 42,
			 "switches", 4, "cas", 6,
			 "errors", "kind", "routing", "message", "no route to " EVIL, "count", 1,
			 "events", "recent", "event", "node_found", "node", EVIL,
			 "perfmgr", "interval_s", 60, "sweeps", 2, "last", "gmps", 41472,
			 "yielded_ms", 1234,
			 "congestion", "list", "node", EVIL, "lid", 12, "contributors", 2);
}

static json_t *health_json(void)
{
	return json_pack("{s:[{s:s,s:s,s:i,s:{s:i},s:[s]}],s:[],s:[],s:[],"
			 "s:{s:[s],s:[],s:[]}}",
			 "unhealthy", "guid", "0x0000000000001041", "node", EVIL, "port", 1,
			 "counters", "SymbolErrorCounter", 50, "reasons", "SymbolErrorCounter \"50\"",
			 "flapping", "degraded", "hot",
			 "baseline", "missing", EVIL, "extra", "moved");
}

START_TEST(t_html_escapes)
{
	struct fabric f;
	struct tb *b;
	size_t len, svg_len;
	build(&f, &b);
	char *svg = draw(&f, NULL, NULL, &svg_len);
	json_t *st = status_json(), *h = health_json();
	ck_assert_ptr_nonnull(st);
	ck_assert_ptr_nonnull(h);
	const struct statuspage_in in = { .status = st, .health = h, .svg = svg };

	char *html = statuspage_html(&in, &len);
	ck_assert_ptr_nonnull(html);
	ck_assert_uint_eq(strlen(html), len);
	ck_assert_ptr_null(strstr(html, "<script"));	/* anywhere: page and picture */
	ck_assert_ptr_null(strstr(html, "alert(\"x\")"));
	/* the health's node, the error's message, the event, the baseline */
	ck_assert_uint_ge(count(html, EVIL_HTML), 5);
	ck_assert_ptr_nonnull(strstr(html, "SymbolErrorCounter &quot;50&quot;"));
	ck_assert_ptr_nonnull(strstr(html, "SymbolErrorCounter=50"));
	ck_assert_ptr_nonnull(strstr(html, "<span class=\"state MASTER\">MASTER</span>"));
	ck_assert_ptr_nonnull(strstr(html, "2026-11-28T18:00:00Z"));
	ck_assert_ptr_nonnull(strstr(html, "<h2>Recent events</h2>"));
	/* the performance manager's last sweep */
	ck_assert_ptr_nonnull(strstr(html, "<h3>Performance manager</h3>"));
	ck_assert_ptr_nonnull(strstr(html, "<th>GMPs</th><td>41472</td>"));
	/* dFtree's hot-spots */
	ck_assert_ptr_nonnull(strstr(html, "<h2>Hot-spots (slow lane)</h2>"));
	ck_assert_ptr_nonnull(strstr(html, "<td>12</td>"));
	/* the picture inline, without its XML prologue; no outside asset */
	ck_assert_uint_eq(count(html, "class=\"node switch\""), 4);
	ck_assert_ptr_null(strstr(html, "<?xml"));
	ck_assert_ptr_null(strstr(html, "<!DOCTYPE svg"));
	ck_assert_ptr_null(strstr(html, "src=\"http"));
	ck_assert_ptr_null(strstr(html, "<link"));
	free(html);

	/* no health command, no picture yet, no events: said, escaped */
	json_object_del(st, "events");
	const struct statuspage_in bare = {
		.status = st, .health_err = "unknown command 'health' <x>",
		.svg_note = "being drawn",
	};
	html = statuspage_html(&bare, &len);
	ck_assert_ptr_nonnull(html);
	ck_assert_ptr_nonnull(strstr(html, "not available: unknown command &#39;health&#39; &lt;x&gt;"));
	ck_assert_ptr_nonnull(strstr(html, "being drawn"));
	ck_assert_ptr_null(strstr(html, "<svg"));
	ck_assert_ptr_null(strstr(html, "Recent events"));
	free(html);

	json_decref(st);
	json_decref(h);
	free(svg);
	fabric_free(&f);
	free(b);
}
END_TEST

static Suite *statuspage_suite(void)
{
	Suite *s = suite_create("statuspage");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, t_svg);
	tcase_add_test(tc, t_html_escapes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(statuspage_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
