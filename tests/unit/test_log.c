/*
 * sm/base/log.c (dates, journald priorities, rate limiting), sm/base/nodemap.c (the
 * node_name_map format) and sm/discover/changes.c (a heavy sweep's changes in
 * words), and the log file of ibsmd -f.  stderr goes to a temporary file that
 * each test reads back.
 */
#include <check.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sm/discover/changes.h"
#include "sm/base/log.h"
#include "sm/base/nodemap.h"
#include "sm/base/topo.h"

static char err_path[64];
static int saved_fd = -1;

/* stderr into a fresh file; returns its path */
static void capture(void)
{
	fflush(stderr);
	snprintf(err_path, sizeof(err_path), "/tmp/test_log.XXXXXX");
	int fd = mkstemp(err_path);
	ck_assert_int_ge(fd, 0);
	if (saved_fd < 0)
		saved_fd = dup(2);
	dup2(fd, 2);
	close(fd);
}

/* What went to stderr since capture(), malloc'd; stderr restored. */
static char *captured(void)
{
	fflush(stderr);
	dup2(saved_fd, 2);
	FILE *fp = fopen(err_path, "r");
	ck_assert_ptr_nonnull(fp);
	static char buf[65536];
	size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	unlink(err_path);
	return strdup(buf);
}

static int count_lines(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static int matches(const char *text, const char *re)
{
	regex_t r;
	ck_assert_int_eq(regcomp(&r, re, REG_EXTENDED | REG_NEWLINE), 0);
	int ok = regexec(&r, text, 0, NULL, 0) == 0;
	regfree(&r);
	return ok;
}

START_TEST(t_dated)
{
	unsetenv("JOURNAL_STREAM");
	capture();
	ck_assert_int_eq(log_detect_stream(), 0);
	log_notice("hello %d", 42);
	log_debug("not shown");
	char *out = captured();
	ck_assert_msg(matches(out, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
			      "\\.[0-9]{3}[+-][0-9]{2}:[0-9]{2} ibsmd\\[notice\\]: hello 42\n$"),
		      "%s", out);
	free(out);
}
END_TEST

/* stderr captured, and JOURNAL_STREAM naming it, as systemd sets it; its stat in st */
static void journal_stderr(struct stat *st)
{
	capture();
	ck_assert_int_eq(fstat(2, st), 0);
	char js[64];
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino);
	setenv("JOURNAL_STREAM", js, 1);
	ck_assert_int_eq(log_detect_stream(), 1);
}

START_TEST(t_journal)
{
	struct stat st;
	journal_stderr(&st);
	char js[64];
	log_err("e");
	log_warn("w");
	log_notice("n");
	char *out = captured();
	ck_assert_str_eq(out, "<3>ibsmd[error]: e\n<4>ibsmd[warn]: w\n<5>ibsmd[notice]: n\n");
	free(out);
	/* another inode: a child of systemd's whose stderr went elsewhere */
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + 1);
	setenv("JOURNAL_STREAM", js, 1);
	capture();
	ck_assert_int_eq(log_detect_stream(), 0);
	setenv("JOURNAL_STREAM", "garbage", 1);
	ck_assert_int_eq(log_detect_stream(), 0);
	unsetenv("JOURNAL_STREAM");
	log_detect_stream();
	free(captured());
}
END_TEST

/* One call site for every line of the test. */
static int site(const char *what, int i)
{
	return log_limited_by(3, 100, LOG_NOTICE, "%s %d", what, i);
}

#define LOGFILE_LINES	4000
#define LOGFILE_MOVES	40

static void *log_lines(void *arg)
{
	(void)arg;
	for (int i = 0; i < LOGFILE_LINES; i++)
		log_notice("line %d", i);
	return NULL;
}

/* Every "line N" of the files in dir, each counted in seen[N]; lines that are not whole: -1. */
static int count_file_lines(const char *dir, int moves, int *seen)
{
	char path[128], buf[256];
	for (int k = 0; k <= moves; k++) {
		if (k < moves)
			snprintf(path, sizeof(path), "%s/ibsmd.log.%d", dir, k);
		else
			snprintf(path, sizeof(path), "%s/ibsmd.log", dir);
		FILE *fp = fopen(path, "r");
		if (!fp)
			continue;
		while (fgets(buf, sizeof(buf), fp)) {
			int n;
			if (!matches(buf, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}[+-][0-9]{2}:[0-9]{2} "
				     "ibsmd\\[notice\\]: line [0-9]+\n$") ||
			    sscanf(strstr(buf, "line "), "line %d", &n) != 1 || n < 0 ||
			    n >= LOGFILE_LINES) {
				fclose(fp);
				return -1;
			}
			seen[n]++;
		}
		fclose(fp);
	}
	return 0;
}

/*
 * ibsmd -f: lines to the file, dated, also when stderr is the journal's
 * stream, nothing on stderr; created 0640.  Moved away and opened again
 * 40 times while a thread logs 4000 lines: every line whole, once, in the
 * old file or the new one.  A name that cannot be opened again: -1 with
 * the reason, and the old file stays in use.
 */
START_TEST(t_log_file)
{
	char dir[] = "/tmp/test_logfile.XXXXXX", path[128], moved[128], msg[256];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ibsmd.log", dir);
	umask(022);
	struct stat st;
	journal_stderr(&st);
	ck_assert_int_eq(log_reopen_file(msg, sizeof(msg)), 0);	/* no file: nothing */
	snprintf(moved, sizeof(moved), "%s/no/such/dir/x.log", dir);
	ck_assert_int_eq(log_open_file(moved, msg, sizeof(msg)), -1);
	ck_assert_msg(strstr(msg, "No such file or directory") != NULL, "%s", msg);
	ck_assert_int_eq(log_open_file(path, msg, sizeof(msg)), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0640);

	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, log_lines, NULL), 0);
	for (int k = 0; k < LOGFILE_MOVES; k++) {
		snprintf(moved, sizeof(moved), "%s/ibsmd.log.%d", dir, k);
		ck_assert_int_eq(rename(path, moved), 0);
		ck_assert_int_eq(log_reopen_file(msg, sizeof(msg)), 0);
		usleep(200);
	}
	pthread_join(t, NULL);
	char *out = captured();
	ck_assert_str_eq(out, "");
	free(out);
	static int seen[LOGFILE_LINES];
	ck_assert_int_eq(count_file_lines(dir, LOGFILE_MOVES, seen), 0);
	for (int i = 0; i < LOGFILE_LINES; i++)
		ck_assert_msg(seen[i] == 1, "line %d seen %d times", i, seen[i]);

	/* the name a directory now: the old file stays */
	snprintf(moved, sizeof(moved), "%s/ibsmd.log.%d", dir, LOGFILE_MOVES);
	ck_assert_int_eq(rename(path, moved), 0);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(log_reopen_file(msg, sizeof(msg)), -1);
	ck_assert_msg(strstr(msg, path) && strstr(msg, "Is a directory"), "%s", msg);
	log_notice("still here");
	FILE *fp = fopen(moved, "r");
	ck_assert_ptr_nonnull(fp);
	char buf[256], last[256] = "";
	while (fgets(buf, sizeof(buf), fp))
		snprintf(last, sizeof(last), "%s", buf);
	fclose(fp);
	ck_assert_msg(strstr(last, "ibsmd[notice]: still here\n") != NULL, "%s", last);
	unsetenv("JOURNAL_STREAM");
}
END_TEST

START_TEST(t_rate_limit)
{
	unsetenv("JOURNAL_STREAM");
	log_detect_stream();
	capture();
	int shown = 0;
	for (int i = 0; i < 1000; i++)
		shown += site("storm", i);
	ck_assert_int_eq(shown, 3);
	ck_assert_int_eq(log_rl_flush(0), 0);	/* the window is not over */
	usleep(120000);
	ck_assert_int_eq(log_rl_flush(0), 1);
	ck_assert_int_eq(log_rl_flush(0), 0);	/* said once */
	/* a new window: a full burst again */
	for (int i = 0; i < 5; i++)
		shown += site("later", i);
	ck_assert_int_eq(shown, 6);
	usleep(120000);
	/* the next line of the site says what the last window held */
	ck_assert_int_eq(site("again", 0), 1);
	char *out = captured();
	ck_assert_int_eq(count_lines(out, "]: storm "), 3);
	ck_assert_ptr_nonnull(strstr(out, "storm 2\n"));
	ck_assert_ptr_nonnull(strstr(out, "[notice]: 997 similar messages suppressed (\"%s %d\")\n"));
	ck_assert_ptr_nonnull(strstr(out, "[notice]: 2 similar messages suppressed (\"%s %d\")\n"));
	ck_assert_int_eq(count_lines(out, "\n"), 3 + 1 + 3 + 1 + 1);
	free(out);
	/* at exit: whatever a window still holds */
	capture();
	site("exit", 0);
	site("exit", 1);
	ck_assert_int_eq(site("exit", 2), 0);	/* "again" took one of the 3 */
	ck_assert_int_eq(log_rl_flush(0), 0);
	ck_assert_int_eq(log_rl_flush(1), 1);
	out = captured();
	ck_assert_msg(strstr(out, "]: 1 similar messages suppressed"), "%s", out);
	free(out);
	/* below the threshold: neither shown nor counted */
	capture();
	ck_assert_int_eq(log_limited(LOG_DEBUG, "quiet"), 0);
	out = captured();
	ck_assert_str_eq(out, "");
	free(out);
}
END_TEST

static char *write_tmp(const char *text)
{
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/test_nodemap.XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

START_TEST(t_nodemap)
{
	char err[512];
	char *path = write_tmp("# a comment\n\n0x0002c90100000002 \"leaf one\"  # rack 3\n"
			       "  0X10 \"x\"\n17 plain name here\n0x0002c90100000002 \"leaf one\"\n");
	struct node_name_map *m = nodemap_load(path, err, sizeof(err));
	unlink(path);
	ck_assert_msg(m != NULL, "%s", err);
	ck_assert_uint_eq(nodemap_count(m), 3);
	ck_assert_str_eq(nodemap_get(m, 0x0002c90100000002ull), "leaf one");
	ck_assert_str_eq(nodemap_get(m, 0x10), "x");
	ck_assert_str_eq(nodemap_get(m, 17), "plain name here");
	ck_assert_ptr_null(nodemap_get(m, 18));
	nodemap_free(m);
}
END_TEST

static const struct { const char *text, *why; } bad_maps[] = {
	{ "0x1 \"a\"\nzz \"b\"\n", ":2: not a GUID" },
	{ "0x1 \"a\n", ":1: no closing" },
	{ "# c\n0x1\n", ":2: no name" },
	{ "0x1 \"a\" b\n", ":1: text after the name" },
	{ "0x1 \"a\"\n0x1 \"b\"\n", ":2: GUID named twice" },
	{ "0 \"zero\"\n", ":1: not a GUID" },
};

START_TEST(t_nodemap_errors)
{
	char err[512];
	char *path = write_tmp(bad_maps[_i].text);
	struct node_name_map *m = nodemap_load(path, err, sizeof(err));
	ck_assert_ptr_null(m);
	ck_assert_msg(!strncmp(err, path, strlen(path)) &&
		      strstr(err, bad_maps[_i].why) == err + strlen(path), "%s", err);
	unlink(path);
	ck_assert_ptr_null(nodemap_load("/nonexistent/map", err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/map: "));
}
END_TEST

static const char NET[] =
	"switchguid=0x100\nSwitch\t4 \"S1\"\n[1]\t\"H1\"[1]\n[3]\t\"S2\"[3]\n[4]\t\"S2\"[4]\n\n"
	"switchguid=0x200\nSwitch\t4 \"S2\"\n[1]\t\"H2\"[1]\n[3]\t\"S1\"[3]\n[4]\t\"S1\"[4]\n\n"
	"caguid=0x1000\nHca\t1 \"H1\"\n[1]\t\"S1\"[1]\n\n"
	"caguid=0x2000\nHca\t1 \"H2\"\n[1]\t\"S2\"[1]\n";
/* S1[4]-S2[4] gone, H2 gone, H1's LID changed */
static const char NET_AFTER[] =
	"switchguid=0x100\nSwitch\t4 \"S1\"\n[1]\t\"H1\"[1]\n[3]\t\"S2\"[3]\n\n"
	"switchguid=0x200\nSwitch\t4 \"S2\"\n[3]\t\"S1\"[3]\n\n"
	"caguid=0x1000\nHca\t1 \"H1\"\n[1]\t\"S1\"[1]\n";

static void parse(struct fabric *f, const char *text)
{
	char err[256];
	fabric_init(f);
	ck_assert_msg(topo_parse_string(f, text, "net", err, sizeof(err)) == 0, "%s", err);
	for (uint32_t pi = 0; pi < f->n_ports; pi++)
		if (fabric_is_endport(f, pi))
			f->ports[pi].lid = (uint32_t)(f->nodes[f->ports[pi].node].guid >> 8);
}

START_TEST(t_changes)
{
	struct fabric a, b;
	struct fabric_changes c;
	parse(&a, NET);
	parse(&b, NET_AFTER);
	fabric_portp(&b, fabric_find_node(&b, 0x1000), 1)->lid = 99;
	char err[256];
	char *path = write_tmp("0x200 \"spine-b\"\n");
	ck_assert_int_eq(nodemap_use_file(path, err, sizeof(err)), 0);
	unlink(path);
	capture();
	fabric_log_changes(NULL, &b, &c);	/* the first sweep: nothing */
	ck_assert_uint_eq(c.links_lost + c.nodes_lost + c.lids_changed, 0);
	fabric_log_changes(&a, &b, &c);
	char *out = captured();
	ck_assert_uint_eq(c.links_lost, 1);
	ck_assert_uint_eq(c.links_back, 0);
	ck_assert_uint_eq(c.nodes_lost, 1);
	ck_assert_uint_eq(c.nodes_found, 0);
	ck_assert_uint_eq(c.lids_changed, 1);
	ck_assert_int_eq(count_lines(out, "\n"), 3);
	ck_assert_msg(strstr(out, "[notice]: link lost: \"S1\" port 4 - \"spine-b\" port 4\n"), "%s", out);
	ck_assert_msg(strstr(out, "[notice]: host lost: \"H2\" (GUID 0x0000000000002000, port 1 on \"spine-b\" port 1)\n"), "%s", out);
	ck_assert_msg(strstr(out, "[notice]: LID change: \"H1\" port 1 (GUID 0x0000000000001001) LID 16 -> 99\n"), "%s", out);
	free(out);
	/* back the other way: the link returned, the host found */
	capture();
	fabric_log_changes(&b, &a, &c);
	out = captured();
	ck_assert_uint_eq(c.links_back, 1);
	ck_assert_uint_eq(c.nodes_found, 1);
	ck_assert_msg(strstr(out, "link returned: \"S1\" port 4 - \"spine-b\" port 4\n"), "%s", out);
	ck_assert_msg(strstr(out, "host found: \"H2\""), "%s", out);
	free(out);
	nodemap_use(NULL);
	fabric_free(&a);
	fabric_free(&b);
}
END_TEST

/* S2 and H2 behind it gone: one line, the host counted on it */
static const char NET_NO_S2[] =
	"switchguid=0x100\nSwitch\t4 \"S1\"\n[1]\t\"H1\"[1]\n\n"
	"caguid=0x1000\nHca\t1 \"H1\"\n[1]\t\"S1\"[1]\n";

START_TEST(t_switch_lost)
{
	struct fabric a, b;
	struct fabric_changes c;
	parse(&a, NET);
	parse(&b, NET_NO_S2);
	capture();
	fabric_log_changes(&a, &b, &c);
	fabric_log_changes(&b, &a, &c);
	char *out = captured();
	ck_assert_uint_eq(c.nodes_found, 2);
	ck_assert_int_eq(count_lines(out, "\n"), 2);
	ck_assert_msg(strstr(out, "[notice]: switch lost: \"S2\" (GUID 0x0000000000000200, 3 links, 1 hosts lost with it)\n"), "%s", out);
	ck_assert_msg(strstr(out, "[notice]: switch found: \"S2\" (GUID 0x0000000000000200, 3 links, 1 hosts found with it)\n"), "%s", out);
	free(out);
	fabric_free(&a);
	fabric_free(&b);
}
END_TEST

/*
 * A link lost and back every sweep: FABEV_BURST lines for the link (lost
 * and returned are one site), as many for the host, then quiet
 */
START_TEST(t_flapping)
{
	struct fabric a, b;
	parse(&a, NET);
	parse(&b, NET_AFTER);
	capture();
	for (int i = 0; i < 3 * FABEV_BURST; i++) {
		fabric_log_changes(&a, &b, NULL);
		fabric_log_changes(&b, &a, NULL);
	}
	char *out = captured();
	ck_assert_int_eq(count_lines(out, "link lost:"), FABEV_BURST / 2);
	ck_assert_int_eq(count_lines(out, "link returned:"), FABEV_BURST / 2);
	ck_assert_int_eq(count_lines(out, "\n"), 2 * FABEV_BURST);
	free(out);
	capture();
	ck_assert_int_eq(log_rl_flush(1), 2);
	out = captured();
	ck_assert_msg(strstr(out, "]: 50 similar messages suppressed (\"link %s: "), "%s", out);
	free(out);
	fabric_free(&a);
	fabric_free(&b);
}
END_TEST

static Suite *log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, t_dated);
	tcase_add_test(tc, t_journal);
	tcase_add_test(tc, t_rate_limit);
	tcase_add_test(tc, t_nodemap);
	tcase_add_loop_test(tc, t_nodemap_errors, 0, (int)(sizeof(bad_maps) / sizeof(bad_maps[0])));
	tcase_add_test(tc, t_changes);
	tcase_add_test(tc, t_switch_lost);
	tcase_add_test(tc, t_flapping);
	tcase_add_test(tc, t_log_file);	/* last: the log stays on its file */
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(log_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
