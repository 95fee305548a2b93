/*
 * The event hook (sm/ctl/evhook.c) on a real loop with real programs:
 * shell scripts this test writes, which record their argv, stdin and
 * environment in files.  The event's variables arrive and nothing of the
 * daemon's environment but PATH and LANG; a program still running at the
 * timeout gets SIGTERM, one that ignores it SIGKILL, both counted; with
 * exec_max 2 five slow events run two at a time, the rest waiting in the
 * queue, and past the queue and the rate events are dropped and counted;
 * a program that cannot be run is counted; the loop's timers keep firing
 * while programs run; the last EVHOOK_RECENT events are kept with no
 * program set.  The fabric events of a heavy sweep's changes
 * (sm/hookevents.c over sm/discover/changes.c): a link lost and found
 * named from the lower node GUID whatever the port order, every node of
 * a switch lost with its hosts.
 */
#include "sm/ctl/evhook.h"
#include "sm/hookevents.h"
#include "sm/base/topo.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#define WAIT_MS 10000

static struct event_base *base;
static struct evhook *h;
static char dir[64];

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_evhook.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	h = evhook_new(base);
	ck_assert_ptr_nonnull(h);
}

static void teardown(void)
{
	char cmd[128];
	evhook_free(h);
	event_base_free(base);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

/* DIR/NAME with body after "#!/bin/sh" (%s in body: DIR), mode 0755; its path. */
static const char *script(const char *name, const char *body)
{
	static char path[128];
	char text[2048];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(text, sizeof(text), body, dir, dir, dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "#!/bin/sh\n%s\n", text);
	fclose(f);
	ck_assert_int_eq(chmod(path, 0755), 0);
	return path;
}

static long long stat_of(const char *key)
{
	json_t *o = evhook_to_ctl(h);
	json_t *v = json_object_get(o, key);
	ck_assert_msg(json_is_integer(v), "status has no integer %s", key);
	long long n = json_integer_value(v);
	json_decref(o);
	return n;
}

static long long dropped_by(const char *why)
{
	json_t *o = evhook_to_ctl(h);
	long long n = json_integer_value(json_object_get(json_object_get(o, "dropped_by"), why));
	json_decref(o);
	return n;
}

/* The loop runs for ms. */
static void run_for(int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

/* The loop runs until no program runs and none waits; the ms it took. */
static long run_until_idle(void)
{
	long t0 = now_ms();
	while (stat_of("running") || stat_of("queued")) {
		ck_assert_msg(now_ms() - t0 < WAIT_MS, "programs still running after %d ms",
			      WAIT_MS);
		run_for(20);
	}
	return now_ms() - t0;
}

static char *slurp(const char *name)
{
	char path[128];
	static char buf[8192];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "%s was not written", path);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, line, n) && (p[n] == '\n' || p[n] == '\0'))
			return 1;
	return 0;
}

static const struct evhook_var link_vars[] = {
	{ "IBSM_NODE_GUID", "0x0002c90100000001" }, { "IBSM_NODE", "leaf one" },
	{ "IBSM_PORT", "3" }, { "IBSM_REMOTE_GUID", "0x0002c90200000005" },
	{ "IBSM_REMOTE_NODE", "H-1" }, { "IBSM_REMOTE_PORT", "1" },
};

START_TEST(variables_arrive)
{
	setenv("IBSM_LEAK", "from the daemon", 1);
	setenv("HOME", "/root", 1);
	setenv("PATH", "/usr/bin:/bin", 1);
	setenv("LANG", "C.UTF-8", 1);
	const char *p = script("rec", "{ echo \"argv0=$0\"; echo \"argv1=$1\"; echo \"argc=$#\"; "
			       "echo \"stdin=$(readlink /proc/self/fd/0)\"; env; } >%s/out.$IBSM_SEQ");
	evhook_configure(h, p, 5, 4);
	evhook_set_sm_guid(h, 0x0002c90200000001ULL);
	evhook_emit(h, "link_lost", link_vars, 6);
	run_until_idle();
	ck_assert_int_eq(stat_of("runs"), 1);
	ck_assert_int_eq(stat_of("failed"), 0);
	const char *out = slurp("out.1");
	char argv0[160];
	snprintf(argv0, sizeof(argv0), "argv0=%s", p);
	ck_assert_msg(has_line(out, argv0), "argv[0] is not the program: %s", out);
	ck_assert_msg(has_line(out, "argv1=link_lost") && has_line(out, "argc=1"),
		      "argv is not [program, event]: %s", out);
	ck_assert_msg(has_line(out, "stdin=/dev/null"), "stdin: %s", out);
	const char *want[] = {
		"IBSM_EVENT=link_lost", "IBSM_SEQ=1",
		"IBSM_SM_GUID=0x0002c90200000001", "IBSM_NODE_GUID=0x0002c90100000001",
		"IBSM_NODE=leaf one", "IBSM_PORT=3", "IBSM_REMOTE_GUID=0x0002c90200000005",
		"IBSM_REMOTE_NODE=H-1", "IBSM_REMOTE_PORT=1", "PATH=/usr/bin:/bin",
		"LANG=C.UTF-8",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(has_line(out, want[i]), "no %s in: %s", want[i], out);
	const char *t = strstr(out, "\nIBSM_TIME=");
	ck_assert_msg(t && strlen(t) > 31 && t[15] == '-' && t[21] == 'T' && t[30] == 'Z',
		      "IBSM_TIME not ISO 8601 UTC: %s", out);
	ck_assert_msg(!strstr(out, "IBSM_LEAK") && !strstr(out, "HOME="),
		      "the daemon's environment leaked: %s", out);

	/* a program that fails is counted */
	evhook_configure(h, script("bad", "exit 3"), 5, 4);
	evhook_emit(h, "node_lost", link_vars, 2);
	run_until_idle();
	ck_assert_int_eq(stat_of("runs"), 2);
	ck_assert_int_eq(stat_of("failed"), 1);

	/* the status shows the events with their variables */
	json_t *o = evhook_to_ctl(h);
	json_t *r = json_object_get(o, "recent");
	ck_assert_int_eq(json_array_size(r), 2);
	json_t *e0 = json_array_get(r, 0);
	ck_assert_str_eq(json_string_value(json_object_get(e0, "event")), "link_lost");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(e0, "vars"),
							   "IBSM_REMOTE_NODE")), "H-1");
	ck_assert_ptr_null(json_object_get(json_object_get(e0, "vars"), "PATH"));
	json_decref(o);
}
END_TEST

START_TEST(timeout_kills)
{
	evhook_configure(h, script("slow", "exec sleep 30"), 1, 4);
	evhook_emit(h, "master_changed", NULL, 0);
	long took = run_until_idle();
	ck_assert_msg(took >= 900 && took < 4000, "SIGTERM after %ld ms, not 1 s", took);
	ck_assert_int_eq(stat_of("timeouts"), 1);
	ck_assert_int_eq(stat_of("killed"), 0);
	ck_assert_int_eq(stat_of("failed"), 0);

	/* one that ignores SIGTERM: SIGKILL EVHOOK_KILL_S later */
	evhook_configure(h, script("stubborn", "trap '' TERM; echo up >%s/stubborn.up; "
				   "while :; do sleep 0.1; done"), 1, 4);
	evhook_emit(h, "master_changed", NULL, 0);
	took = run_until_idle();
	ck_assert_msg(took >= 900 + EVHOOK_KILL_S * 1000 && took < 4000 + EVHOOK_KILL_S * 1000,
		      "SIGKILL after %ld ms", took);
	ck_assert_int_eq(stat_of("timeouts"), 2);
	ck_assert_int_eq(stat_of("killed"), 1);
	slurp("stubborn.up");
}
END_TEST

START_TEST(at_most_max_at_once)
{
	/* each run writes its start and end times: how many overlapped */
	const char *p = script("wait", "echo start $(date +%%s.%%N) >%s/t.$IBSM_SEQ; sleep 1; "
			       "echo end $(date +%%s.%%N) >>%s/t.$IBSM_SEQ");
	evhook_configure(h, p, 10, 2);
	for (int i = 0; i < 5; i++)
		evhook_emit(h, "node_found", link_vars, 3);
	ck_assert_int_eq(stat_of("running"), 2);
	ck_assert_int_eq(stat_of("queued"), 3);
	long most = 0, t0 = now_ms();
	while (stat_of("running") || stat_of("queued")) {
		ck_assert(now_ms() - t0 < WAIT_MS);
		if (stat_of("running") > most)
			most = stat_of("running");
		run_for(10);
	}
	ck_assert_int_eq(most, 2);
	ck_assert_int_eq(stat_of("runs"), 5);
	ck_assert_int_eq(stat_of("dropped"), 0);
	ck_assert_msg(now_ms() - t0 >= 2900, "5 runs of 1 s, 2 at once, in %ld ms", now_ms() - t0);
	/* the programs' own clocks: never more than 2 between a start and an end */
	double start[5], end[5];
	for (int i = 0; i < 5; i++) {
		char name[16];
		snprintf(name, sizeof(name), "t.%d", i + 1);
		ck_assert_int_eq(sscanf(slurp(name), "start %lf end %lf", &start[i], &end[i]), 2);
	}
	for (int i = 0; i < 5; i++) {
		int overlap = 0;
		for (int j = 0; j < 5; j++)
			overlap += start[j] <= start[i] && end[j] > start[i];
		ck_assert_msg(overlap <= 2, "%d programs ran at once", overlap);
	}
}
END_TEST

START_TEST(queue_and_rate_bound)
{
	evhook_configure(h, script("hold", "exec sleep 5"), 10, 1);
	for (int i = 0; i < 1 + EVHOOK_QUEUE + 3; i++)
		evhook_emit(h, "link_found", link_vars, 6);
	ck_assert_int_eq(stat_of("running"), 1);
	ck_assert_int_eq(stat_of("queued"), EVHOOK_QUEUE);
	ck_assert_int_eq(dropped_by("queue_full"), 3);
	for (int i = 1 + EVHOOK_QUEUE + 3; i < EVHOOK_PER_MINUTE + 5; i++)
		evhook_emit(h, "link_found", link_vars, 6);
	ck_assert_int_eq(dropped_by("rate"), 5);
	ck_assert_int_eq(dropped_by("queue_full"), EVHOOK_PER_MINUTE - 1 - EVHOOK_QUEUE);
	ck_assert_int_eq(stat_of("dropped"), EVHOOK_PER_MINUTE + 5 - 1 - EVHOOK_QUEUE);
	/* another program: the events queued for this one go */
	evhook_configure(h, "", 10, 1);
	ck_assert_int_eq(stat_of("queued"), 0);
	ck_assert_int_eq(dropped_by("reconfigured"), EVHOOK_QUEUE);
}
END_TEST

START_TEST(cannot_run_counted)
{
	evhook_configure(h, "/nonexistent/ibsmd-hook", 10, 4);
	evhook_emit(h, "routing_failed", NULL, 0);
	evhook_emit(h, "routing_failed", NULL, 0);
	ck_assert_int_eq(stat_of("spawn_failed"), 2);
	char path[128];
	snprintf(path, sizeof(path), "%s", script("noexec", "exit 0"));
	ck_assert_int_eq(chmod(path, 0644), 0);
	evhook_configure(h, path, 10, 4);
	evhook_emit(h, "routing_failed", NULL, 0);
	ck_assert_int_eq(stat_of("spawn_failed"), 3);
	ck_assert_int_eq(stat_of("runs"), 0);
	ck_assert_int_eq(stat_of("running"), 0);
}
END_TEST

static int ticks;
static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	ticks++;
}

START_TEST(loop_not_blocked)
{
	struct event *tick = event_new(base, -1, EV_PERSIST, on_tick, NULL);
	struct timeval ten = { 0, 10000 };
	event_add(tick, &ten);
	evhook_configure(h, script("nap", "sleep 1"), 10, 2);
	long t0 = now_ms();
	for (int i = 0; i < 4; i++)
		evhook_emit(h, "link_lost", link_vars, 6);
	long emit_ms = now_ms() - t0;
	ck_assert_msg(emit_ms < 200, "4 emits took %ld ms", emit_ms);
	ticks = 0;
	run_for(1000);
	/*
	 * 100 ticks of 10 ms in a second; a loop blocked on the programs gets
	 * one at most (20: room for a loaded machine)
	 */
	ck_assert_msg(ticks >= 20, "%d ticks of 10 ms in 1 s while programs ran", ticks);
	ck_assert_int_eq(stat_of("running"), 2);
	run_until_idle();
	ck_assert_int_eq(stat_of("runs"), 4);
	event_free(tick);
}
END_TEST

START_TEST(recent_kept_without_program)
{
	char v[16];
	for (int i = 1; i <= 40; i++) {
		snprintf(v, sizeof(v), "%d", i);
		struct evhook_var var = { "IBSM_PORT", v };
		evhook_emit(h, "link_lost", &var, 1);
	}
	json_t *o = evhook_to_ctl(h);
	ck_assert(json_is_null(json_object_get(o, "program")));
	ck_assert_int_eq(json_integer_value(json_object_get(o, "runs")), 0);
	json_t *r = json_object_get(o, "recent");
	ck_assert_int_eq(json_array_size(r), EVHOOK_RECENT);
	json_t *first = json_array_get(r, 0), *last = json_array_get(r, EVHOOK_RECENT - 1);
	ck_assert_int_eq(json_integer_value(json_object_get(first, "seq")), 40 - EVHOOK_RECENT + 1);
	ck_assert_int_eq(json_integer_value(json_object_get(last, "seq")), 40);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(last, "vars"),
							   "IBSM_PORT")), "40");
	const char *t = json_string_value(json_object_get(last, "time"));
	ck_assert(t && strlen(t) == 20 && t[10] == 'T' && t[19] == 'Z');
	json_decref(o);
}
END_TEST

/* S2 listed first: its end of S1[4]-S2[4] has the lower port index */
static const char NET[] =
	"switchguid=0x200\nSwitch\t4 \"S2\"\n[1]\t\"H2\"[1]\n[3]\t\"S1\"[3]\n[4]\t\"S1\"[4]\n\n"
	"switchguid=0x100\nSwitch\t4 \"S1\"\n[1]\t\"H1\"[1]\n[3]\t\"S2\"[3]\n[4]\t\"S2\"[4]\n\n"
	"caguid=0x1000\nHca\t1 \"H1\"\n[1]\t\"S1\"[1]\n\n"
	"caguid=0x2000\nHca\t1 \"H2\"\n[1]\t\"S2\"[1]\n";
static const char NET_NO_LINK[] =
	"switchguid=0x200\nSwitch\t4 \"S2\"\n[1]\t\"H2\"[1]\n[3]\t\"S1\"[3]\n\n"
	"switchguid=0x100\nSwitch\t4 \"S1\"\n[1]\t\"H1\"[1]\n[3]\t\"S2\"[3]\n\n"
	"caguid=0x1000\nHca\t1 \"H1\"\n[1]\t\"S1\"[1]\n\n"
	"caguid=0x2000\nHca\t1 \"H2\"\n[1]\t\"S2\"[1]\n";
static const char NET_NO_S2[] =
	"switchguid=0x100\nSwitch\t4 \"S1\"\n[1]\t\"H1\"[1]\n\n"
	"caguid=0x1000\nHca\t1 \"H1\"\n[1]\t\"S1\"[1]\n";

static void parse(struct fabric *f, const char *text)
{
	char err[256];
	fabric_init(f);
	ck_assert_msg(topo_parse_string(f, text, "net", err, sizeof(err)) == 0, "%s", err);
}

/* The recent events from seq on, as "event VAR=value ..." lines in one string. */
static char *events_since(long long seq)
{
	static char out[4096];
	json_t *o = evhook_to_ctl(h), *e;
	size_t i;
	out[0] = '\0';
	json_array_foreach(json_object_get(o, "recent"), i, e) {
		if (json_integer_value(json_object_get(e, "seq")) < seq)
			continue;
		size_t n = strlen(out);
		snprintf(out + n, sizeof(out) - n, "%s", json_string_value(json_object_get(e, "event")));
		const char *k;
		json_t *v;
		json_object_foreach(json_object_get(e, "vars"), k, v) {
			n = strlen(out);
			snprintf(out + n, sizeof(out) - n, " %s=%s", k, json_string_value(v));
		}
		n = strlen(out);
		snprintf(out + n, sizeof(out) - n, "\n");
	}
	json_decref(o);
	return out;
}

START_TEST(fabric_events)
{
	struct fabric a, b, c;
	struct fabric_change_sink sink;
	parse(&a, NET);
	parse(&b, NET_NO_LINK);
	parse(&c, NET_NO_S2);
	hookev_sink(&sink, h);
	const char *link = " IBSM_NODE_GUID=0x0000000000000100 IBSM_NODE=S1 IBSM_PORT=4"
			   " IBSM_REMOTE_GUID=0x0000000000000200 IBSM_REMOTE_NODE=S2"
			   " IBSM_REMOTE_PORT=4\n";
	char want[512];
	fabric_report_changes(&a, &b, NULL, &sink);
	snprintf(want, sizeof(want), "link_lost%s", link);
	ck_assert_str_eq(events_since(1), want);
	fabric_report_changes(&b, &a, NULL, &sink);
	snprintf(want, sizeof(want), "link_found%s", link);
	ck_assert_str_eq(events_since(2), want);
	/* a switch lost with its host: an event each, no link event */
	fabric_report_changes(&a, &c, NULL, &sink);
	ck_assert_str_eq(events_since(3),
		"node_lost IBSM_NODE_GUID=0x0000000000000200 IBSM_NODE=S2 IBSM_NODE_TYPE=switch\n"
		"node_lost IBSM_NODE_GUID=0x0000000000002000 IBSM_NODE=H2 IBSM_NODE_TYPE=ca\n");
	fabric_report_changes(&c, &a, NULL, &sink);
	ck_assert_str_eq(events_since(5),
		"node_found IBSM_NODE_GUID=0x0000000000000200 IBSM_NODE=S2 IBSM_NODE_TYPE=switch\n"
		"node_found IBSM_NODE_GUID=0x0000000000002000 IBSM_NODE=H2 IBSM_NODE_TYPE=ca\n");
	fabric_free(&a);
	fabric_free(&b);
	fabric_free(&c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("evhook");
	TCase *tc = tcase_create("evhook");
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, variables_arrive);
	tcase_add_test(tc, timeout_kills);
	tcase_add_test(tc, at_most_max_at_once);
	tcase_add_test(tc, queue_and_rate_bound);
	tcase_add_test(tc, cannot_run_counted);
	tcase_add_test(tc, loop_not_blocked);
	tcase_add_test(tc, recent_kept_without_program);
	tcase_add_test(tc, fabric_events);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
