/*
 * Unit tests for the metrics renderer (sm/ctl/metrics.c): the exposition
 * format's escaping of HELP texts and label values, the shape of the
 * whole text (every sample of a family declared with HELP and TYPE, the
 * ibsmd_ prefix, counters ending in _total), the figures it reads from
 * the daemon, and metrics.listen's address parsing and its policy key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <event2/event.h>

#include "sm/model/config.h"
#include "sm/daemon.h"
#include "sm/ctl/metrics.h"

START_TEST(escape_label_and_help)
{
	char out[64];

	ck_assert_uint_eq(metrics_escape(out, sizeof(out), "a\"b\\c\nd", 1), 10);
	ck_assert_str_eq(out, "a\\\"b\\\\c\\nd");
	/* a HELP text keeps its double quotes */
	ck_assert_uint_eq(metrics_escape(out, sizeof(out), "a\"b\\c\nd", 0), 9);
	ck_assert_str_eq(out, "a\"b\\\\c\\nd");
	ck_assert_uint_eq(metrics_escape(out, sizeof(out), "plain", 1), 5);
	ck_assert_str_eq(out, "plain");
	ck_assert_uint_eq(metrics_escape(out, sizeof(out), "", 1), 0);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(escape_cut_like_snprintf)
{
	char out[4];

	/* the length needed, the text cut and terminated */
	ck_assert_uint_eq(metrics_escape(out, sizeof(out), "\\\\\\", 1), 6);
	ck_assert_str_eq(out, "\\\\\\");
	ck_assert_uint_eq(metrics_escape(NULL, 0, "x\ny", 0), 4);
	ck_assert_uint_eq(metrics_escape(out, 1, "abc", 0), 3);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(sample_and_family_lines)
{
	struct mtext t = { 0 };

	mtext_family(&t, "ibsmd_x_total", "counter", "a \"quoted\" help\\ on\ntwo lines");
	mtext_sample(&t, "ibsmd_x_total", "attribute", "Odd\"Name\\\n", 3);
	mtext_sample(&t, "ibsmd_x_total", NULL, NULL, 0.25);
	mtext_sample(&t, "ibsmd_x_total", NULL, NULL, 12345678901234.0);
	ck_assert(!t.oom);
	ck_assert_str_eq(t.buf,
		"# HELP ibsmd_x_total a \"quoted\" help\\\\ on\\ntwo lines\n"
		"# TYPE ibsmd_x_total counter\n"
		"ibsmd_x_total{attribute=\"Odd\\\"Name\\\\\\n\"} 3\n"
		"ibsmd_x_total 0.25\n"
		"ibsmd_x_total 12345678901234\n");
	free(t.buf);
}
END_TEST

/* The value of the sample "name" or "name{...}" exactly as given; -1 if absent. */
static double value_of(const char *text, const char *sample)
{
	size_t n = strlen(sample);
	for (const char *l = text; *l; l = strchr(l, '\n') + 1) {
		if (!strncmp(l, sample, n) && l[n] == ' ')
			return strtod(l + n + 1, NULL);
		if (!strchr(l, '\n'))
			break;
	}
	return -1;
}

/*
 * Every sample's family was declared just before with HELP then TYPE;
 * names carry the prefix; counters end in _total; no family twice.
 */
static void check_shape(const char *text)
{
	char family[128] = "", type[16] = "";
	char seen[16384] = " ";
	const char *l = text;

	ck_assert(text[strlen(text) - 1] == '\n');
	while (*l) {
		const char *end = strchr(l, '\n');
		ck_assert_ptr_nonnull(end);
		char line[512];
		snprintf(line, sizeof(line), "%.*s", (int)(end - l), l);
		char name[128], key[140];
		if (!strncmp(line, "# HELP ", 7)) {
			ck_assert_int_eq(sscanf(line + 7, "%127s", name), 1);
			snprintf(key, sizeof(key), " %s ", name);
			ck_assert_msg(!strstr(seen, key), "%s declared twice", name);
			ck_assert_uint_lt(strlen(seen) + strlen(key), sizeof(seen));
			strcat(seen, name);
			strcat(seen, " ");
			snprintf(family, sizeof(family), "%s", name);
			type[0] = '\0';
		} else if (!strncmp(line, "# TYPE ", 7)) {
			ck_assert_int_eq(sscanf(line + 7, "%127s %15s", name, type), 2);
			ck_assert_str_eq(name, family);
			ck_assert_msg(!strcmp(type, "counter") || !strcmp(type, "gauge"), "%s", line);
		} else {
			size_t n = strcspn(line, "{ ");
			ck_assert_msg(n == strlen(family) && !strncmp(line, family, n) && type[0],
				      "sample outside its family: %s", line);
			ck_assert(line[n] == ' ' || strchr(line, '}'));
		}
		ck_assert_msg(!strncmp(family, "ibsmd_", 6), "%s", line);
		if (!strcmp(type, "counter"))
			ck_assert_msg(strlen(family) > 6 &&
				      !strcmp(family + strlen(family) - 6, "_total"), "%s", family);
		l = end + 1;
	}
}

START_TEST(render_idle_daemon)
{
	struct sm *sm = calloc(1, sizeof(*sm));
	ck_assert_ptr_nonnull(sm);
	sm->state = SMS_DISCOVERING;
	sm->sweep.heavy_sweeps = 2;
	sm->sweep.light_sweeps = 7;
	sm->traps.st.received = 5;
	sm->traps.st.n_numbers = 1;
	sm->traps.st.number[0] = 128;
	sm->traps.st.by_number[0] = 5;
	size_t len;
	char *text = metrics_render(sm, 1700000000, &len);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(len, strlen(text));
	check_shape(text);
	ck_assert(value_of(text, "ibsmd_up") == 1);
	ck_assert(value_of(text, "ibsmd_start_time_seconds") == 1700000000);
	ck_assert(value_of(text, "ibsmd_state{state=\"DISCOVERING\"}") == 1);
	ck_assert(value_of(text, "ibsmd_state{state=\"MASTER\"}") == 0);
	ck_assert(value_of(text, "ibsmd_sweeps_total{kind=\"heavy\"}") == 2);
	ck_assert(value_of(text, "ibsmd_sweeps_total{kind=\"light\"}") == 7);
	ck_assert(value_of(text, "ibsmd_traps_by_number_total{number=\"128\"}") == 5);
	ck_assert(value_of(text, "ibsmd_lids_in_use") == 0);
	/* no HTTP server, no control socket: zeros */
	ck_assert(value_of(text, "ibsmd_http_connections") == 0);
	ck_assert(value_of(text, "ibsmd_http_connections_closed_total{reason=\"max_connections\"}") == 0);
	ck_assert(value_of(text, "ibsmd_http_accept_errors_total") == 0);
	ck_assert(value_of(text, "ibsmd_control_accept_errors_total") == 0);
	/* no MADs yet: the families are declared, with no samples */
	ck_assert_ptr_nonnull(strstr(text, "# TYPE ibsmd_mads_sent_total counter\n"));
	ck_assert_ptr_null(strstr(text, "ibsmd_mads_sent_total{"));
	free(text);
	free(sm);
}
END_TEST

/* A model of a 3-port switch and two CAs: ports counted by PortState. */
START_TEST(render_ports_by_state)
{
	struct sm *sm = calloc(1, sizeof(*sm));
	struct discovery *d = calloc(1, sizeof(*d));
	ck_assert(sm && d);
	fabric_init(&d->f);
	uint32_t sw = fabric_add_node(&d->f, FAB_SWITCH, 3, 0x10);
	uint32_t ca1 = fabric_add_node(&d->f, FAB_CA, 1, 0x20);
	uint32_t ca2 = fabric_add_node(&d->f, FAB_CA, 1, 0x30);
	ck_assert(sw != FAB_NONE && ca1 != FAB_NONE && ca2 != FAB_NONE);
	static const uint8_t sw_states[4] = { PORT_ACTIVE, PORT_ACTIVE, PORT_ARMED, PORT_DOWN };
	for (unsigned i = 0; i < 4; i++) {
		struct fab_port *p = &d->f.ports[fabric_port(&d->f, sw, i)];
		p->flags = FPORT_PRESENT;
		p->state = sw_states[i];
	}
	d->f.ports[fabric_port(&d->f, ca1, 1)].flags = FPORT_PRESENT;
	d->f.ports[fabric_port(&d->f, ca1, 1)].state = PORT_ACTIVE;
	d->f.ports[fabric_port(&d->f, ca2, 1)].flags = FPORT_PRESENT;
	d->f.ports[fabric_port(&d->f, ca2, 1)].state = PORT_ARMED;
	sm->sub.model = d;
	sm->sweep.last.valid = 1;
	sm->sweep.last.lids = 3;
	sm->sweep.last.route_ms = 1500;
	char *text = metrics_render(sm, 0, NULL);
	ck_assert_ptr_nonnull(text);
	check_shape(text);
	/* switch port 0 is no physical port */
	ck_assert(value_of(text, "ibsmd_ports{state=\"active\"}") == 2);
	ck_assert(value_of(text, "ibsmd_ports{state=\"armed\"}") == 2);
	ck_assert(value_of(text, "ibsmd_ports{state=\"down\"}") == 1);
	ck_assert(value_of(text, "ibsmd_ports{state=\"init\"}") == 0);
	ck_assert(value_of(text, "ibsmd_nodes{type=\"switch\"}") == 1);
	ck_assert(value_of(text, "ibsmd_nodes{type=\"ca\"}") == 2);
	ck_assert(value_of(text, "ibsmd_lids_in_use") == 3);
	ck_assert(value_of(text, "ibsmd_routing_duration_seconds") == 1.5);
	free(text);
	fabric_free(&d->f);
	free(d);
	free(sm);
}
END_TEST

/* Multicast: groups and members now, joins, leaves and group changes since start. */
START_TEST(render_mcast)
{
	struct sm *sm = calloc(1, sizeof(*sm));
	const char *why;
	ck_assert_ptr_nonnull(sm);
	char *text = metrics_render(sm, 0, NULL);	/* before sm_init: all 0 */
	ck_assert_ptr_nonnull(text);
	check_shape(text);
	ck_assert(value_of(text, "ibsmd_mcast_groups") == 0);
	ck_assert(value_of(text, "ibsmd_mcast_members") == 0);
	free(text);
	ck_assert_int_eq(mc_db_init(&sm->mc), 0);
	struct mc_group g;
	memset(&g, 0, sizeof(g));
	struct mc_group *a = mc_create(&sm->mc, &g, &why);
	g.mgid[15] = 1;
	struct mc_group *b = mc_create(&sm->mc, &g, &why);
	g.mgid[15] = 2;
	struct mc_group *c = mc_create(&sm->mc, &g, &why);
	ck_assert(a && b && c);
	ck_assert_int_eq(mc_join(&sm->mc, a, 0x10, MC_JOIN_FULL, 0), 1);
	ck_assert_int_eq(mc_join(&sm->mc, a, 0x11, MC_JOIN_FULL, 0), 1);
	ck_assert_int_eq(mc_join(&sm->mc, a, 0x11, MC_JOIN_FULL, 0), 0);	/* nothing new */
	ck_assert_int_eq(mc_join(&sm->mc, b, 0x10, MC_JOIN_FULL, 0), 1);
	ck_assert_int_eq(mc_join(&sm->mc, c, 0x12, MC_JOIN_FULL, 0), 1);
	ck_assert_int_eq(mc_leave(&sm->mc, c, 0x12, MC_JOIN_FULL), 1);
	mc_delete(&sm->mc, c);
	text = metrics_render(sm, 0, NULL);
	ck_assert_ptr_nonnull(text);
	check_shape(text);
	ck_assert(value_of(text, "ibsmd_mcast_groups") == 2);
	ck_assert(value_of(text, "ibsmd_mcast_members") == 3);
	ck_assert(value_of(text, "ibsmd_mcast_joins_total") == 4);
	ck_assert(value_of(text, "ibsmd_mcast_leaves_total") == 1);
	ck_assert(value_of(text, "ibsmd_mcast_group_changes_total{change=\"created\"}") == 3);
	ck_assert(value_of(text, "ibsmd_mcast_group_changes_total{change=\"deleted\"}") == 1);
	free(text);
	mc_db_free(&sm->mc);
	free(sm);
}
END_TEST

START_TEST(listen_addresses)
{
	char host[64], err[256];
	uint16_t port;

	ck_assert_int_eq(config_parse_listen("127.0.0.1:9464", host, sizeof(host), &port,
					      err, sizeof(err)), 0);
	ck_assert_str_eq(host, "127.0.0.1");
	ck_assert_uint_eq(port, 9464);
	ck_assert_int_eq(config_parse_listen("[::1]:65535", host, sizeof(host), &port,
					      err, sizeof(err)), 0);
	ck_assert_str_eq(host, "::1");
	ck_assert_uint_eq(port, 65535);
	static const char *const bad[] = { "9464", "127.0.0.1", "127.0.0.1:", ":9464",
		"127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:94x", "::1:9464",
		"[::1]9464", "[::1", "host:-1", "host: 80" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(config_parse_listen(bad[i], host, sizeof(host), &port,
						   err, sizeof(err)) == -1, "%s taken", bad[i]);
	ck_assert_int_eq(config_parse_listen("a-very-long-host-name:1", host, 8, &port,
					      err, sizeof(err)), -1);
}
END_TEST

static int load_policy(const char *text, struct config *c, char *err, size_t errlen)
{
	char path[] = "/tmp/test_metrics_XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
	config_defaults(c);
	int rc = config_load(c, path, err, errlen);
	unlink(path);
	return rc;
}

START_TEST(policy_keys)
{
	struct config c;
	char err[512];

	ck_assert_int_eq(load_policy("sm: {priority: 1}\n", &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.metrics_listen, "");	/* off by default */
	ck_assert_str_eq(c.metrics_textfile_dir, "");
	ck_assert_int_eq(load_policy("metrics:\n  listen: \"127.0.0.1:9464\"\n"
				     "  textfile_dir: /var/lib/node_exporter\n",
				     &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.metrics_listen, "127.0.0.1:9464");
	ck_assert_str_eq(c.metrics_textfile_dir, "/var/lib/node_exporter");
	ck_assert_int_eq(load_policy("metrics:\n  listen: \"127.0.0.1:99999\"\n",
				     &c, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "metrics: '127.0.0.1:99999'") && strstr(err, "PORT 1..65535"), "%s", err);
	ck_assert_int_eq(load_policy("metrics: {port: 1}\n", &c, err, sizeof(err)), -1);
	ck_assert_int_eq(c.metrics_max_conns, 64);	/* the default */
	ck_assert_int_eq(load_policy("metrics:\n  max_connections: 8\n", &c, err, sizeof(err)), 0);
	ck_assert_int_eq(c.metrics_max_conns, 8);
	ck_assert_int_eq(load_policy("metrics:\n  max_connections: 1025\n", &c, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, ":2:") && strstr(err, "max_connections"), "%s", err);
	ck_assert_int_eq(load_policy("metrics:\n  max_connections: 0\n", &c, err, sizeof(err)), -1);
}
END_TEST

/* http.listen: the listener's name; metrics.listen its alias, the same or refused where given. */
START_TEST(http_listen_alias)
{
	struct config c;
	char err[512];

	ck_assert_int_eq(load_policy("http:\n  listen: \"127.0.0.1:9464\"\n", &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.metrics_listen, "127.0.0.1:9464");
	ck_assert_int_eq(load_policy("metrics:\n  listen: \"[::1]:9464\"\n"
				     "http:\n  listen: \"[::1]:9464\"\n", &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.metrics_listen, "[::1]:9464");
	/* different: refused at the second one's key, either order */
	ck_assert_int_eq(load_policy("metrics:\n  listen: \"127.0.0.1:9464\"\n"
				     "http:\n  listen: \"127.0.0.1:9465\"\n", &c, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, ":4:3: http.listen: '127.0.0.1:9465' but metrics.listen is"
			      " '127.0.0.1:9464'"), "%s", err);
	ck_assert_int_eq(load_policy("http:\n  listen: \"127.0.0.1:9465\"\n"
				     "metrics:\n  textfile_dir: /tmp\n  listen: \"127.0.0.1:9464\"\n",
				     &c, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, ":5:3: metrics.listen: '127.0.0.1:9464' but http.listen is"),
		      "%s", err);
	ck_assert_int_eq(load_policy("http:\n  listen: \"127.0.0.1\"\n", &c, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "want ADDR:PORT"), "%s", err);
	ck_assert_int_eq(load_policy("http:\n  port: 1\n", &c, err, sizeof(err)), -1);
}
END_TEST

/*
 * The textfile: written at start (metrics_new) and at a sweep's end,
 * left by --once (serve 0), removed by a daemon's end; a directory that
 * cannot be made is no reason to stop.
 */
START_TEST(textfile_life)
{
	struct sm *sm = calloc(1, sizeof(*sm));
	char dir[] = "/tmp/test_metrics_tf_XXXXXX", path[128], err[256];
	ck_assert_ptr_nonnull(sm);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, METRICS_TEXTFILE);
	sm->base = event_base_new();
	ck_assert_ptr_nonnull(sm->base);
	snprintf(sm->cfg.metrics_textfile_dir, sizeof(sm->cfg.metrics_textfile_dir), "%s", dir);

	struct metrics *m = metrics_new(sm, sm->base, &sm->cfg, 0, NULL, err, sizeof(err));
	ck_assert_msg(m != NULL, "%s", err);
	FILE *fp = fopen(path, "r");
	ck_assert_ptr_nonnull(fp);
	static char text[65536];
	size_t n = fread(text, 1, sizeof(text) - 1, fp);
	fclose(fp);
	text[n] = '\0';
	check_shape(text);
	ck_assert(value_of(text, "ibsmd_sweeps_total{kind=\"heavy\"}") == 0);
	sm->sweep.heavy_sweeps = 1;
	metrics_sweep_done(m);
	fp = fopen(path, "r");
	ck_assert_ptr_nonnull(fp);
	n = fread(text, 1, sizeof(text) - 1, fp);
	fclose(fp);
	text[n] = '\0';
	ck_assert(value_of(text, "ibsmd_sweeps_total{kind=\"heavy\"}") == 1);
	metrics_free(m);			/* --once: the file stays */
	ck_assert_int_eq(access(path, F_OK), 0);

	m = metrics_new(sm, sm->base, &sm->cfg, 1, NULL, err, sizeof(err));	/* a daemon: it goes */
	ck_assert_msg(m != NULL, "%s", err);
	metrics_free(m);
	ck_assert_int_eq(access(path, F_OK), -1);

	/* under a regular file: logged, not fatal, nothing written */
	snprintf(sm->cfg.metrics_textfile_dir, sizeof(sm->cfg.metrics_textfile_dir),
		 "/dev/null/metrics");
	m = metrics_new(sm, sm->base, &sm->cfg, 1, NULL, err, sizeof(err));
	ck_assert_msg(m != NULL, "%s", err);
	metrics_sweep_done(m);
	metrics_free(m);
	ck_assert_int_eq(rmdir(dir), 0);	/* empty: no temp file left */
	event_base_free(sm->base);
	free(sm);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("metrics");
	tcase_add_test(tc, escape_label_and_help);
	tcase_add_test(tc, escape_cut_like_snprintf);
	tcase_add_test(tc, sample_and_family_lines);
	tcase_add_test(tc, render_idle_daemon);
	tcase_add_test(tc, render_ports_by_state);
	tcase_add_test(tc, render_mcast);
	tcase_add_test(tc, listen_addresses);
	tcase_add_test(tc, policy_keys);
	tcase_add_test(tc, http_listen_alias);
	tcase_add_test(tc, textfile_life);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
