/*
 * Persistent GUID -> LID table (sm/model/state.c) in a temporary directory.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sm/base/fabric.h"
#include "sm/model/state.h"

static char dir[256];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ibsmd-state-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void rm_rf(const char *path)
{
	DIR *d = opendir(path);
	if (!d) {
		unlink(path);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char p[512];
		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		rm_rf(p);
	}
	closedir(d);
	rmdir(path);
}

static void teardown(void)
{
	rm_rf(dir);
}

static void write_file(const char *name, const char *text)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *fp = fopen(p, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	fclose(fp);
}

/* Names in a directory, sorted, space-separated. */
static void list_dir(const char *path, char *out, size_t outlen)
{
	char names[16][256];
	int n = 0;
	DIR *d = opendir(path);
	ck_assert_ptr_nonnull(d);
	struct dirent *de;
	while ((de = readdir(d)) && n < 16)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			snprintf(names[n++], sizeof(names[0]), "%s", de->d_name);
	closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]),
	      (int (*)(const void *, const void *))strcmp);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (i)
			strncat(out, " ", outlen - strlen(out) - 1);
		strncat(out, names[i], outlen - strlen(out) - 1);
	}
}

START_TEST(t_roundtrip)
{
	struct guid_map m = { 0 }, r = { 0 };
	char err[512] = "";
	/* enough entries to make the table grow */
	for (uint32_t i = 1; i <= 300; i++)
		ck_assert_int_eq(guid_map_put(&m, 0x0002c90000000000ULL + i * 7,
					      i + 0x100), 0);
	ck_assert_int_eq(guid_map_put(&m, 0xffffffffffffffffULL, 0xbfff), 0);
	ck_assert_int_eq(state_save_guid2lid(dir, &m, err, sizeof(err)), 0);
	ck_assert_int_eq(state_load_guid2lid(dir, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.used, m.used);
	for (uint32_t i = 0; i < m.cap; i++)
		if (m.keys[i])
			ck_assert_uint_eq(guid_map_get(&r, m.keys[i]), m.vals[i]);
	guid_map_free(&m);
	guid_map_free(&r);
}
END_TEST

/* Last-seen times survive the round trip; entries without one stay at 0. */
START_TEST(t_roundtrip_seen)
{
	struct guid_map m = { 0 }, r = { 0 };
	char err[512] = "";
	for (uint32_t i = 1; i <= 300; i++) {
		uint64_t g = 0x0002c90000000000ULL + i * 7;
		ck_assert_int_eq(guid_map_put(&m, g, i), 0);
		if (i % 5)
			ck_assert_int_eq(guid_map_set_aux(&m, g, 1700000000u + i), 0);
	}
	ck_assert_int_eq(guid_map_put(&m, 0x42, 0xbfff), 0);
	ck_assert_int_eq(guid_map_set_aux(&m, 0x42, 0xffffffffu), 0);
	ck_assert_int_eq(state_save_guid2lid(dir, &m, err, sizeof(err)), 0);
	ck_assert_int_eq(state_load_guid2lid(dir, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.used, m.used);
	for (uint32_t i = 0; i < m.cap; i++) {
		if (!m.keys[i])
			continue;
		ck_assert_uint_eq(guid_map_get(&r, m.keys[i]), m.vals[i]);
		ck_assert_uint_eq(guid_map_get_aux(&r, m.keys[i]), m.aux[i]);
	}
	ck_assert_uint_eq(guid_map_get_aux(&r, 0x0002c90000000000ULL + 5 * 7), 0);
	ck_assert_uint_eq(guid_map_get_aux(&r, 0x42), 0xffffffffu);

	/* the file is sorted by GUID, three fields a line */
	char path[512], line[256], prev[256] = "";
	snprintf(path, sizeof(path), "%s/guid2lid", dir);
	FILE *fp = fopen(path, "r");
	ck_assert_ptr_nonnull(fp);
	int entries = 0;
	while (fgets(line, sizeof(line), fp)) {
		if (line[0] == '#')
			continue;
		unsigned long long g, lid, seen;
		ck_assert_int_eq(sscanf(line, "%llx %llu %llu", &g, &lid, &seen), 3);
		ck_assert_int_lt(strcmp(prev, line), 0);
		snprintf(prev, sizeof(prev), "%s", line);
		entries++;
	}
	fclose(fp);
	ck_assert_int_eq(entries, (int)m.used);
	guid_map_free(&m);
	guid_map_free(&r);
}
END_TEST

/* A file of the format before last-seen times: every entry is unseen (0). */
START_TEST(t_old_format)
{
	struct guid_map r = { 0 };
	char err[512] = "";
	write_file("guid2lid", "# ibsmd GUID -> LID; written by ibsmd, read at start-up\n"
		   "0x0002c90300000011 1\n0x0002c90300000012 7\n"
		   "0x0002c90300000013 9 1700000000\n");
	ck_assert_int_eq(state_load_guid2lid(dir, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.used, 3);
	ck_assert_uint_eq(guid_map_get(&r, 0x0002c90300000011ULL), 1);
	ck_assert_uint_eq(guid_map_get(&r, 0x0002c90300000012ULL), 7);
	ck_assert_uint_eq(guid_map_get_aux(&r, 0x0002c90300000011ULL), 0);
	ck_assert_uint_eq(guid_map_get_aux(&r, 0x0002c90300000012ULL), 0);
	ck_assert_uint_eq(guid_map_get_aux(&r, 0x0002c90300000013ULL), 1700000000u);
	guid_map_free(&r);
}
END_TEST

START_TEST(t_replaced_atomically)
{
	struct guid_map m = { 0 }, r = { 0 };
	char err[512] = "", path[512], old[512], names[1024];
	ck_assert_int_eq(guid_map_put(&m, 0x10, 1), 0);
	ck_assert_int_eq(state_save_guid2lid(dir, &m, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/guid2lid", dir);
	snprintf(old, sizeof(old), "%s/old", dir);
	/* a second name for the first file's inode */
	ck_assert_int_eq(link(path, old), 0);

	ck_assert_int_eq(guid_map_put(&m, 0x10, 7), 0);
	ck_assert_int_eq(guid_map_put(&m, 0x20, 8), 0);
	ck_assert_int_eq(state_save_guid2lid(dir, &m, err, sizeof(err)), 0);
	list_dir(dir, names, sizeof(names));
	ck_assert_str_eq(names, "guid2lid old");	/* no temp file left */

	/* the new content is a new file: the old inode was never rewritten */
	struct stat a, b;
	ck_assert_int_eq(stat(path, &a), 0);
	ck_assert_int_eq(stat(old, &b), 0);
	ck_assert_uint_ne(a.st_ino, b.st_ino);
	ck_assert_int_eq(state_load_guid2lid(dir, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.used, 2);
	ck_assert_uint_eq(guid_map_get(&r, 0x10), 7);
	ck_assert_uint_eq(guid_map_get(&r, 0x20), 8);
	guid_map_free(&r);

	ck_assert_int_eq(rename(old, path), 0);
	ck_assert_int_eq(state_load_guid2lid(dir, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.used, 1);
	ck_assert_uint_eq(guid_map_get(&r, 0x10), 1);
	guid_map_free(&m);
	guid_map_free(&r);
}
END_TEST

START_TEST(t_creates_directory)
{
	struct guid_map m = { 0 }, r = { 0 };
	char err[512] = "", sub[512], names[1024];
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	ck_assert_int_eq(guid_map_put(&m, 0x1234, 42), 0);
	ck_assert_int_eq(state_save_guid2lid(sub, &m, err, sizeof(err)), 0);
	list_dir(sub, names, sizeof(names));
	ck_assert_str_eq(names, "guid2lid");
	ck_assert_int_eq(state_load_guid2lid(sub, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(guid_map_get(&r, 0x1234), 42);
	guid_map_free(&m);
	guid_map_free(&r);
}
END_TEST

START_TEST(t_missing_is_empty)
{
	struct guid_map r = { 0 };
	char err[512] = "";
	ck_assert_int_eq(state_load_guid2lid(dir, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.used, 0);
	ck_assert_str_eq(err, "");
	guid_map_free(&r);
}
END_TEST

START_TEST(t_comments_and_blanks)
{
	struct guid_map r = { 0 };
	char err[512] = "";
	write_file("guid2lid", "# header\n\n  0x00000000000000aa 3\n"
		   "\t# indented comment\n0xbb\t4\n   \n");
	ck_assert_int_eq(state_load_guid2lid(dir, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.used, 2);
	ck_assert_uint_eq(guid_map_get(&r, 0xaa), 3);
	ck_assert_uint_eq(guid_map_get(&r, 0xbb), 4);
	guid_map_free(&r);
}
END_TEST

static const struct {
	const char *text;
	int line;
} corrupt[] = {
	{ "0x10 1\nbogus\n", 2 },
	{ "0x10 1\n0x20\n", 2 },		/* no LID */
	{ "# c\n\n0x10 1 extra\n", 3 },		/* trailing junk */
	{ "0x10 0\n", 1 },			/* LID 0 */
	{ "0x10 1\n0x20 2\n0x30 49152\n", 3 },	/* multicast LID */
	{ "0x0 5\n", 1 },			/* GUID 0 */
	{ "0x10 -1\n", 1 },
	{ "0x10 1 1700000000 5\n", 1 },	/* a fourth field */
	{ "0x10 1 -5\n", 1 },			/* negative time */
	{ "0x10 1 4294967296\n", 1 },		/* time past 32 bits */
	{ "0x10 1 17x\n", 1 },
	{ "0x10 1\n0x20 2", 2 },		/* cut inside the last line */
	{ "", 1 },				/* cut to nothing */
};

START_TEST(t_corrupt)
{
	struct guid_map r = { 0 };
	char err[512] = "", want[600];
	write_file("guid2lid", corrupt[_i].text);
	ck_assert_int_eq(state_load_guid2lid(dir, &r, err, sizeof(err)), -2);
	snprintf(want, sizeof(want), "%s/guid2lid:%d:", dir, corrupt[_i].line);
	if (strncmp(err, want, strlen(want)))
		ck_abort_msg("error \"%s\" does not start with \"%s\"", err, want);
	guid_map_free(&r);
}
END_TEST

START_TEST(t_unreadable_dir)
{
	struct guid_map m = { 0 };
	char err[512] = "", f[512];
	/* the state "directory" is a plain file: saving must fail, cleanly */
	write_file("plain", "x\n");
	snprintf(f, sizeof(f), "%s/plain", dir);
	ck_assert_int_eq(guid_map_put(&m, 0x10, 1), 0);
	ck_assert_int_eq(state_save_guid2lid(f, &m, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, f));
	guid_map_free(&m);
}
END_TEST

/* A written file, cut anywhere, is refused: it ends with "# end: N entries". */
START_TEST(t_truncated)
{
	struct guid_map m = { 0 }, r = { 0 };
	char err[512] = "", path[512];
	for (uint32_t i = 1; i <= 20; i++)
		ck_assert_int_eq(guid_map_put(&m, 0x1000 + i, i), 0);
	ck_assert_int_eq(state_save_guid2lid(dir, &m, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/guid2lid", dir);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	FILE *fp = fopen(path, "r");
	ck_assert_ptr_nonnull(fp);
	char *full = malloc((size_t)st.st_size);
	ck_assert_uint_eq(fread(full, 1, (size_t)st.st_size, fp), (size_t)st.st_size);
	fclose(fp);
	ck_assert_ptr_nonnull(strstr(full, "\n# end: 20 entries\n"));
	for (off_t cut = 0; cut < st.st_size; cut++) {
		fp = fopen(path, "w");
		fwrite(full, 1, (size_t)cut, fp);
		fclose(fp);
		int rc = state_load_guid2lid(dir, &r, err, sizeof(err));
		ck_assert_msg(rc == -2, "cut at %lld of %lld: rc %d", (long long)cut,
			      (long long)st.st_size, rc);
		guid_map_free(&r);
	}
	/* the whole file, and a line after its end is refused too */
	fp = fopen(path, "w");
	fwrite(full, 1, (size_t)st.st_size, fp);
	fclose(fp);
	ck_assert_int_eq(state_load_guid2lid(dir, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.used, 20);
	guid_map_free(&r);
	fp = fopen(path, "a");
	fputs("0x99 99\n", fp);
	fclose(fp);
	ck_assert_int_eq(state_load_guid2lid(dir, &r, err, sizeof(err)), -2);
	ck_assert_ptr_nonnull(strstr(err, "after the end line"));
	free(full);
	guid_map_free(&m);
	guid_map_free(&r);
}
END_TEST

/* A FIFO or a link to /dev/zero as the state file: refused at once. */
START_TEST(t_not_regular)
{
	struct guid_map r = { 0 };
	char err[512] = "", path[512];
	snprintf(path, sizeof(path), "%s/guid2lid", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(state_load_guid2lid(dir, &r, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "not a regular file (a FIFO)"), "%s", err);
	unlink(path);
	ck_assert_int_eq(symlink("/dev/zero", path), 0);
	ck_assert_int_eq(state_load_guid2lid(dir, &r, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "not a regular file (a device)"), "%s", err);
	guid_map_free(&r);
}
END_TEST

/*
 * state_prepare: temp files of dead writers go, a live one's stay; a set
 * aside guid2lid refuses the start until it is gone; a state "directory"
 * that is a file is refused.
 */
START_TEST(t_prepare)
{
	char err[1024] = "", names[1024], dead[64], live[64], path[512];
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);	/* a PID no one has */
	snprintf(dead, sizeof(dead), "guid2lid.tmp.%d", (int)pid);
	write_file(dead, "0x10 1\n");
	snprintf(live, sizeof(live), "vms.tmp.%d", (int)getppid());
	write_file(live, "ibsmd-vms 1\n");
	snprintf(dead, sizeof(dead), "subscriptions.tmp.%d", (int)getpid());
	write_file(dead, "x\n");
	write_file("guid2lid", "0x10 1\n");
	ck_assert_int_eq(state_prepare(dir, err, sizeof(err)), 0);
	list_dir(dir, names, sizeof(names));
	snprintf(path, sizeof(path), "guid2lid %s", live);
	ck_assert_str_eq(names, path);

	snprintf(err, sizeof(err), "%s/guid2lid:1: test", dir);
	state_set_aside(dir, "guid2lid", err, sizeof(err));
	ck_assert_msg(strstr(err, "; kept as ") && strstr(err, "/guid2lid.corrupt.2"),
		      "%s", err);
	ck_assert_int_eq(state_prepare(dir, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "/guid2lid.corrupt.") && strstr(err, "not starting"),
		      "%s", err);
	/* a corrupt subscriptions file does not stop a start */
	snprintf(path, sizeof(path), "%s", strstr(err, "guid2lid.corrupt."));
	*strchr(path, ':') = '\0';
	char from[1100], to[600];
	snprintf(from, sizeof(from), "%s/%s", dir, path);
	snprintf(to, sizeof(to), "%s/subscriptions.corrupt.1", dir);
	ck_assert_int_eq(rename(from, to), 0);
	ck_assert_int_eq(state_prepare(dir, err, sizeof(err)), 0);

	write_file("plain", "x\n");
	snprintf(path, sizeof(path), "%s/plain", dir);
	ck_assert_int_eq(state_prepare(path, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "plain: cannot write in it: Not a directory"), "%s", err);
}
END_TEST

static Suite *state_suite(void)
{
	Suite *s = suite_create("state");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, t_roundtrip);
	tcase_add_test(tc, t_roundtrip_seen);
	tcase_add_test(tc, t_old_format);
	tcase_add_test(tc, t_replaced_atomically);
	tcase_add_test(tc, t_creates_directory);
	tcase_add_test(tc, t_missing_is_empty);
	tcase_add_test(tc, t_comments_and_blanks);
	tcase_add_loop_test(tc, t_corrupt, 0,
			    (int)(sizeof(corrupt) / sizeof(corrupt[0])));
	tcase_add_test(tc, t_unreadable_dir);
	tcase_add_test(tc, t_truncated);
	tcase_add_test(tc, t_not_regular);
	tcase_add_test(tc, t_prepare);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(state_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
