/*
 * The control socket: a server on a temporary path, driven from the same
 * process through non-blocking client sockets while the loop is pumped.
 */
#include "sm/ctl/control.h"
#include "sm/ibsmctl/ctlclient.h"
#include "sm/ibsmctl/ctlrender.h"
#include "sm/ibsmctl/ctlstatus.h"
#include "sm/daemon.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BIG_BLOB	200000
#define WAIT_MS		5000

static char tmpdir[64];
static char sockpath[128];
static struct event_base *base;
static struct control *ctl;
static int handler_calls;
static uint64_t deferred;	/* the "later" command's reply id */
static uint64_t later_ids[CONTROL_MAX_CLIENTS + 1];	/* all of them */
static int n_later;

/* The client's call of a request {"cmd": cmd}. */
static json_t *call_cmd(const char *path, const char *cmd, int timeout_ms,
    char *err, size_t errlen)
{
	json_t *req = json_pack("{s:s}", "cmd", cmd);
	ck_assert_ptr_nonnull(req);
	json_t *r = control_call(path, req, timeout_ms, err, errlen);
	json_decref(req);
	return r;
}

/* -------------------------------------------------------------- handler */

static json_t *test_handler(void *ctx, const char *cmd, json_t *req,
    char *err, size_t errlen)
{
	int *calls = ctx;

	(*calls)++;
	if (strcmp(cmd, "echo") == 0) {	/* its "args" field back, or [] */
		json_t *args = json_object_get(req, "args");
		return args ? json_pack("{s:O}", "args", args) :
		    json_pack("{s:[]}", "args");
	}
	if (strcmp(cmd, "fail") == 0) {
		snprintf(err, errlen, "nope");
		return NULL;
	}
	if (strcmp(cmd, "failsilent") == 0)
		return NULL;
	if (strcmp(cmd, "notok") == 0)
		return json_pack("{s:b,s:s}", "ok", 0, "error", "custom");
	if (strcmp(cmd, "okfive") == 0)
		return json_pack("{s:i,s:i}", "x", 1, "ok", 5);
	if (strcmp(cmd, "array") == 0)
		return json_array();
	if (strcmp(cmd, "count") == 0)
		return json_pack("{s:i}", "n", *calls);
	if (strcmp(cmd, "later") == 0) {
		deferred = control_defer(ctl);
		if (n_later < (int)(sizeof(later_ids) / sizeof(later_ids[0])))
			later_ids[n_later++] = deferred;
		return NULL;
	}
	if (strcmp(cmd, "big") == 0) {
		char *blob = malloc(BIG_BLOB + 1);
		if (blob == NULL)
			return NULL;
		memset(blob, 'x', BIG_BLOB);
		blob[BIG_BLOB] = '\0';
		json_t *r = json_pack("{s:s}", "blob", blob);
		free(blob);
		return r;
	}
	snprintf(err, errlen, "unknown command \"%s\"", cmd);
	return NULL;
}

/* -------------------------------------------------------------- fixture */

static void make_paths(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ibsmd-ctl-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	/* A sub-directory that does not exist yet: control_open creates it. */
	snprintf(sockpath, sizeof(sockpath), "%s/run/ibsmd.sock", tmpdir);
}

static void remove_paths(void)
{
	char sub[160];

	unlink(sockpath);
	snprintf(sub, sizeof(sub), "%s/run", tmpdir);
	rmdir(sub);
	rmdir(tmpdir);
}

static void setup(void)
{
	char err[256] = "";

	make_paths();
	handler_calls = 0;
	n_later = 0;
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	ctl = control_open(base, sockpath, test_handler, &handler_calls, err,
	    sizeof(err));
	ck_assert_msg(ctl != NULL, "control_open: %s", err);
}

static void teardown(void)
{
	control_close(ctl);
	ctl = NULL;
	event_base_free(base);
	base = NULL;
	remove_paths();
}

/* A file name in the test's directory (static: one at a time). */
static const char *tmpdir_file(const char *name)
{
	static char path[192];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

/* --------------------------------------------------------- test client */

struct conn {
	int fd;
	char *buf;
	size_t len, cap;
};

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* Runs the server's loop a little, then waits briefly on fd. */
static void pump(int fd, short events)
{
	event_base_loop(base, EVLOOP_NONBLOCK);
	if (fd >= 0) {
		struct pollfd p = { .fd = fd, .events = events };
		poll(&p, 1, 2);
	}
	event_base_loop(base, EVLOOP_NONBLOCK);
}

static void set_sun(struct sockaddr_un *sun, const char *path)
{
	size_t n = strlen(path);

	ck_assert_uint_lt(n, sizeof(sun->sun_path));
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, path, n + 1);
}

static int raw_connect(const char *path, int nonblock)
{
	struct sockaddr_un sun;
	set_sun(&sun, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | (nonblock ? SOCK_NONBLOCK : 0),
	    0);
	ck_assert_int_ge(fd, 0);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static struct conn *conn_open(void)
{
	struct conn *c = calloc(1, sizeof(*c));
	ck_assert_ptr_nonnull(c);
	c->fd = raw_connect(sockpath, 1);
	ck_assert_int_ge(c->fd, 0);
	c->cap = 4096;
	c->buf = malloc(c->cap);
	ck_assert_ptr_nonnull(c->buf);
	pump(-1, 0);
	return c;
}

static void conn_close(struct conn *c)
{
	close(c->fd);
	free(c->buf);
	free(c);
}

static void conn_send(struct conn *c, const char *data, size_t len)
{
	long deadline = now_ms() + WAIT_MS;

	while (len > 0) {
		ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);
		if (n > 0) {
			data += n;
			len -= (size_t)n;
		} else {
			ck_assert_msg(n == -1 && errno == EAGAIN, "send: %s",
			    strerror(errno));
			ck_assert_msg(now_ms() < deadline, "send timed out");
		}
		pump(c->fd, POLLOUT);
	}
	pump(-1, 0);
}

static void conn_sends(struct conn *c, const char *s)
{
	conn_send(c, s, strlen(s));
}

/* Reads more into c->buf; returns bytes read, 0 on EOF, -1 if none yet. */
static ssize_t conn_fill(struct conn *c)
{
	if (c->cap - c->len < 65536) {
		c->cap *= 2;
		c->buf = realloc(c->buf, c->cap);
		ck_assert_ptr_nonnull(c->buf);
	}
	ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len - 1,
	    MSG_DONTWAIT);
	if (n > 0)
		c->len += (size_t)n;
	if (n == -1)
		ck_assert_msg(errno == EAGAIN, "recv: %s", strerror(errno));
	return n;
}

/* The next reply line (malloc'ed, without '\n'); fails the test on timeout. */
static char *conn_line(struct conn *c)
{
	long deadline = now_ms() + WAIT_MS;

	for (;;) {
		char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
		if (nl != NULL) {
			size_t n = (size_t)(nl - c->buf);
			char *line = strndup(c->buf, n);
			memmove(c->buf, nl + 1, c->len - n - 1);
			c->len -= n + 1;
			return line;
		}
		ck_assert_msg(now_ms() < deadline, "no reply line");
		pump(c->fd, POLLIN);
		ck_assert_msg(conn_fill(c) != 0, "EOF instead of a reply");
	}
}

static json_t *conn_reply(struct conn *c)
{
	json_error_t jerr;
	char *line = conn_line(c);
	json_t *r = json_loads(line, 0, &jerr);
	ck_assert_msg(r != NULL, "reply is not JSON: %s (%s)", line, jerr.text);
	ck_assert(json_is_object(r));
	free(line);
	return r;
}

/* True when the server closed the connection (within WAIT_MS). */
static int conn_eof(struct conn *c)
{
	long deadline = now_ms() + WAIT_MS;

	while (now_ms() < deadline) {
		pump(c->fd, POLLIN);
		ssize_t n = conn_fill(c);
		if (n == 0)
			return 1;
	}
	return 0;
}

static void wait_clients(size_t n)
{
	long deadline = now_ms() + WAIT_MS;

	while (control_client_count(ctl) != n && now_ms() < deadline)
		pump(-1, 0);
	ck_assert_uint_eq(control_client_count(ctl), n);
}

static void assert_error(json_t *r, const char *fragment)
{
	ck_assert(json_is_false(json_object_get(r, "ok")));
	const char *e = json_string_value(json_object_get(r, "error"));
	ck_assert_ptr_nonnull(e);
	ck_assert_msg(strstr(e, fragment) != NULL, "error \"%s\" lacks \"%s\"",
	    e, fragment);
	json_decref(r);
}

static void assert_echo(json_t *r, const char *first_arg)
{
	ck_assert(json_is_true(json_object_get(r, "ok")));
	json_t *args = json_object_get(r, "args");
	ck_assert(json_is_array(args));
	if (first_arg == NULL)
		ck_assert_uint_eq(json_array_size(args), 0);
	else
		ck_assert_str_eq(json_string_value(json_array_get(args, 0)),
		    first_arg);
	json_decref(r);
}

/* ------------------------------------------------------------------ tests */

START_TEST(good_request)
{
	struct conn *c = conn_open();
	struct stat st;

	conn_sends(c, "{\"cmd\":\"echo\",\"args\":[\"--heavy\",\"b\"]}\n");
	char *line = conn_line(c);
	ck_assert_str_eq(line, "{\"ok\":true,\"args\":[\"--heavy\",\"b\"]}");
	free(line);
	conn_sends(c, "{\"cmd\":\"echo\"}\n");	/* args optional */
	assert_echo(conn_reply(c), NULL);
	ck_assert_int_eq(handler_calls, 2);

	ck_assert_int_eq(stat(sockpath, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0660);
	char sub[160];
	snprintf(sub, sizeof(sub), "%s/run", tmpdir);
	ck_assert_int_eq(stat(sub, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0755);
	conn_close(c);
}
END_TEST

START_TEST(rejected_commands)
{
	struct conn *c = conn_open();

	conn_sends(c, "{\"cmd\":\"fail\",\"args\":[]}\n");
	char *line = conn_line(c);
	ck_assert_str_eq(line, "{\"ok\":false,\"error\":\"nope\"}");
	free(line);
	conn_sends(c, "{\"cmd\":\"failsilent\"}\n");
	assert_error(conn_reply(c), "failsilent");
	conn_sends(c, "{\"cmd\":\"frobnicate\"}\n");
	assert_error(conn_reply(c), "unknown command \"frobnicate\"");
	conn_sends(c, "{\"cmd\":\"notok\"}\n");
	assert_error(conn_reply(c), "custom");
	conn_sends(c, "{\"cmd\":\"array\"}\n");
	assert_error(conn_reply(c), "internal error");

	/* A result's own non-false "ok" is replaced, and stays first. */
	conn_sends(c, "{\"cmd\":\"okfive\"}\n");
	line = conn_line(c);
	ck_assert_str_eq(line, "{\"ok\":true,\"x\":1}");
	free(line);
	conn_close(c);
}
END_TEST

START_TEST(garbage_lines)
{
	static const char *const garbage[] = {
		"hello",
		"[\"cmd\",\"echo\"]",
		"{}",
		"{\"args\":[]}",
		"{\"cmd\":5}",
		"{\"cmd\":\"\"}",
		"{\"cmd\":\"echo\"} trailing",
		"{\"cmd\":\"echo\"",
		"\xff\xfe{\"cmd\"",
		"{\"cmd\":\"\xc3\"}",
		"\"just a string\"",
	};
	struct conn *c = conn_open();
	char line[128];

	for (size_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
		snprintf(line, sizeof(line), "%s\n", garbage[i]);
		conn_sends(c, line);
		json_t *r = conn_reply(c);
		ck_assert_msg(json_is_false(json_object_get(r, "ok")),
		    "garbage %zu accepted", i);
		ck_assert(json_string_length(json_object_get(r, "error")) > 0);
		json_decref(r);
	}
	ck_assert_int_eq(handler_calls, 0);
	/* Blank lines are skipped; the connection still works. */
	conn_sends(c, "\n  \r\n{\"cmd\":\"echo\",\"args\":[\"still\"]}\r\n");
	assert_echo(conn_reply(c), "still");
	ck_assert_uint_eq(control_client_count(ctl), 1);
	conn_close(c);
}
END_TEST

/* A valid echo request of exactly len bytes (len >= 40). */
static char *sized_request(size_t len)
{
	static const char head[] = "{\"cmd\":\"echo\",\"args\":[\"";
	static const char tail[] = "\"]}";
	char *s = malloc(len + 2);
	ck_assert_ptr_nonnull(s);
	size_t fill = len - strlen(head) - strlen(tail);

	memcpy(s, head, strlen(head));
	memset(s + strlen(head), 'y', fill);
	memcpy(s + strlen(head) + fill, tail, strlen(tail));
	s[len] = '\n';
	s[len + 1] = '\0';
	return s;
}

START_TEST(overlong_line)
{
	struct conn *c = conn_open();
	size_t big = CONTROL_MAX_LINE + 5000;
	char *junk = malloc(big);
	ck_assert_ptr_nonnull(junk);

	/* Sent in pieces: the server sees the limit pass before the '\n'. */
	memset(junk, 'a', big);
	conn_send(c, junk, big);
	assert_error(conn_reply(c), "longer than");
	conn_send(c, junk, big);	/* more of the same line: no reply */
	conn_sends(c, "\n{\"cmd\":\"echo\",\"args\":[\"after\"]}\n");
	assert_echo(conn_reply(c), "after");
	free(junk);

	/* One byte over, in one piece with its '\n'. */
	char *s = sized_request(CONTROL_MAX_LINE + 1);
	conn_sends(c, s);
	free(s);
	assert_error(conn_reply(c), "longer than");
	/* Exactly at the limit: accepted (26 bytes of JSON around "yyy..."). */
	s = sized_request(CONTROL_MAX_LINE);
	conn_sends(c, s);
	free(s);
	json_t *r = conn_reply(c);
	ck_assert(json_is_true(json_object_get(r, "ok")));
	ck_assert_uint_eq(json_string_length(json_array_get(
	    json_object_get(r, "args"), 0)), CONTROL_MAX_LINE - 26);
	json_decref(r);
	ck_assert_int_eq(handler_calls, 2);
	conn_close(c);
}
END_TEST

START_TEST(two_requests_one_connection)
{
	struct conn *c = conn_open();

	/* In one write... */
	conn_sends(c, "{\"cmd\":\"echo\",\"args\":[\"one\"]}\n"
	    "{\"cmd\":\"echo\",\"args\":[\"two\"]}\n");
	assert_echo(conn_reply(c), "one");
	assert_echo(conn_reply(c), "two");
	/* ...and one after the other on the same connection. */
	conn_sends(c, "{\"cmd\":\"count\"}\n");
	json_t *r = conn_reply(c);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "n")), 3);
	json_decref(r);
	/* A request split across writes. */
	conn_sends(c, "{\"cmd\":\"ec");
	conn_sends(c, "ho\",\"args\":[\"split\"]}");
	conn_sends(c, "\n");
	assert_echo(conn_reply(c), "split");
	conn_close(c);
}
END_TEST

START_TEST(disconnect_mid_request)
{
	struct conn *c = conn_open();
	struct conn *d = conn_open();

	wait_clients(2);
	conn_sends(c, "{\"cmd\":\"echo\",\"ar");
	conn_close(c);
	wait_clients(1);
	ck_assert_int_eq(handler_calls, 0);	/* half a request is dropped */

	/* A client that leaves with replies still queued. */
	conn_sends(d, "{\"cmd\":\"big\"}\n{\"cmd\":\"big\"}\n");
	conn_close(d);
	wait_clients(0);
}
END_TEST

START_TEST(half_close_gets_reply)
{
	struct conn *c = conn_open();

	conn_sends(c, "{\"cmd\":\"big\"}\n");
	shutdown(c->fd, SHUT_WR);
	char *line = conn_line(c);
	ck_assert_uint_gt(strlen(line), BIG_BLOB);
	free(line);
	ck_assert(conn_eof(c));
	wait_clients(0);
	conn_close(c);
}
END_TEST

static void wait_deferred(struct conn *c)
{
	long end = now_ms() + WAIT_MS;
	while (now_ms() < end && !deferred)
		pump(c->fd, POLLIN);
	ck_assert_uint_ne(deferred, 0);
}

/* A deferred reply: later requests wait for it, then come in order. */
START_TEST(deferred_reply_in_order)
{
	struct conn *c = conn_open();

	conn_sends(c, "{\"cmd\":\"later\"}\n{\"cmd\":\"echo\",\"args\":[\"after\"]}\n");
	wait_deferred(c);
	for (int i = 0; i < 20; i++)
		pump(-1, 0);
	ck_assert_int_eq(handler_calls, 1);	/* echo not run yet */
	ck_assert_int_eq(conn_fill(c), -1);	/* and nothing answered */
	control_reply(ctl, deferred, json_pack("{s:i}", "v", 7), NULL);
	json_t *r = conn_reply(c);
	ck_assert(json_is_true(json_object_get(r, "ok")));
	ck_assert_int_eq(json_integer_value(json_object_get(r, "v")), 7);
	json_decref(r);
	assert_echo(conn_reply(c), "after");
	/* an error, deferred */
	deferred = 0;
	conn_sends(c, "{\"cmd\":\"later\"}\n");
	wait_deferred(c);
	control_reply(ctl, deferred, NULL, "writes failed");
	assert_error(conn_reply(c), "writes failed");
	/* a client that left is not answered, and nothing breaks */
	deferred = 0;
	conn_sends(c, "{\"cmd\":\"later\"}\n");
	wait_deferred(c);
	conn_close(c);
	/* (an EOF may be a half-close: it is known gone once written to) */
	control_reply(ctl, deferred, json_pack("{s:i}", "v", 8), NULL);
	wait_clients(0);
	control_reply(ctl, deferred, json_pack("{s:i}", "v", 9), NULL);
	deferred = 0;
}
END_TEST

START_TEST(many_clients)
{
	enum { N = 100 };
	struct conn *c[N];
	char req[64], want[16];

	for (int i = 0; i < N; i++)
		c[i] = conn_open();
	wait_clients(N);
	for (int i = 0; i < N; i++) {
		snprintf(req, sizeof(req),
		    "{\"cmd\":\"echo\",\"args\":[\"c%d\"]}\n", i);
		conn_sends(c[i], req);
	}
	for (int i = N - 1; i >= 0; i--) {
		snprintf(want, sizeof(want), "c%d", i);
		assert_echo(conn_reply(c[i]), want);
	}
	for (int i = 0; i < N; i++)
		conn_close(c[i]);
	wait_clients(0);
}
END_TEST

/* The line a server sends before it hangs up, and the hang-up. */
static void assert_dropped(struct conn *c, const char *why)
{
	assert_error(conn_reply(c), why);
	ck_assert(conn_eof(c));
}

static void pump_for(int ms)
{
	long end = now_ms() + ms;
	while (now_ms() < end)
		pump(-1, 0);
}

/*
 * The table full of idle clients: a new one takes the place of the oldest
 * that never sent a request, and is served; a flood of connections that
 * send nothing displaces only its own kind; when all have asked
 * something, the one whose last request is oldest goes.
 */
START_TEST(full_table_drops_longest_idle)
{
	enum { FLOOD = 10, N = CONTROL_MAX_CLIENTS };
	struct conn *c[N], *extra[FLOOD + 2];
	char req[64], want[16];

	for (int i = 0; i < N; i++)
		c[i] = conn_open();
	wait_clients(N);
	/* c[0] has asked something: c[1] is now the oldest silent one */
	conn_sends(c[0], "{\"cmd\":\"echo\",\"args\":[\"zero\"]}\n");
	assert_echo(conn_reply(c[0]), "zero");
	extra[0] = conn_open();
	conn_sends(extra[0], "{\"cmd\":\"echo\",\"args\":[\"new\"]}\n");
	assert_echo(conn_reply(extra[0]), "new");
	assert_dropped(c[1], "dropped for a newer one");
	ck_assert_uint_eq(control_client_count(ctl), N);
	/* silent newcomers replace the oldest silent ones, c[2..] */
	for (int i = 1; i <= FLOOD; i++)
		extra[i] = conn_open();
	for (int i = 2; i < 2 + FLOOD; i++)
		assert_dropped(c[i], "dropped for a newer one");
	conn_sends(c[0], "{\"cmd\":\"echo\",\"args\":[\"still\"]}\n");
	assert_echo(conn_reply(c[0]), "still");
	conn_sends(extra[0], "{\"cmd\":\"echo\",\"args\":[\"again\"]}\n");
	assert_echo(conn_reply(extra[0]), "again");
	/* everyone asks again, c[0] and extra[0] did first: c[0] goes */
	for (int i = N - 1; i >= 2 + FLOOD; i--) {
		snprintf(req, sizeof(req),
		    "{\"cmd\":\"echo\",\"args\":[\"c%d\"]}\n", i);
		snprintf(want, sizeof(want), "c%d", i);
		conn_sends(c[i], req);
		assert_echo(conn_reply(c[i]), want);
	}
	for (int i = 1; i <= FLOOD; i++) {
		conn_sends(extra[i], "{\"cmd\":\"echo\",\"args\":[\"x\"]}\n");
		assert_echo(conn_reply(extra[i]), "x");
	}
	extra[FLOOD + 1] = conn_open();
	assert_dropped(c[0], "dropped for a newer one");
	conn_sends(c[N - 1], "{\"cmd\":\"echo\",\"args\":[\"n\"]}\n");
	assert_echo(conn_reply(c[N - 1]), "n");
	for (int i = 0; i < N; i++)
		conn_close(c[i]);
	for (int i = 0; i < FLOOD + 2; i++)
		conn_close(extra[i]);
	wait_clients(0);
}
END_TEST

/*
 * A client that has sent part of a request (or is about to) is not taken
 * for a silent one; one that has hung up goes before anyone working.
 */
START_TEST(full_table_spares_senders)
{
	enum { N = CONTROL_MAX_CLIENTS };
	struct conn *c[N];

	for (int i = 0; i < N; i++)
		c[i] = conn_open();
	wait_clients(N);
	conn_sends(c[0], "{\"cmd\":\"echo\",");	/* on its way */
	struct conn *extra = conn_open();
	assert_dropped(c[1], "dropped for a newer one");
	conn_sends(c[0], "\"args\":[\"zero\"]}\n");
	assert_echo(conn_reply(c[0]), "zero");
	/* all ask; then the longest idle (c[0]) would go, but c[7] hung up */
	for (int i = 2; i < N; i++) {
		conn_sends(c[i], "{\"cmd\":\"echo\",\"args\":[\"a\"]}\n");
		assert_echo(conn_reply(c[i]), "a");
	}
	conn_sends(extra, "{\"cmd\":\"echo\",\"args\":[\"a\"]}\n");
	assert_echo(conn_reply(extra), "a");
	close(c[7]->fd);
	c[7]->fd = -1;
	int fd = raw_connect(sockpath, 1);	/* no pumping before */
	ck_assert_int_ge(fd, 0);
	wait_clients(N);
	conn_sends(c[0], "{\"cmd\":\"echo\",\"args\":[\"kept\"]}\n");
	assert_echo(conn_reply(c[0]), "kept");
	close(fd);
	for (int i = 0; i < N; i++)
		conn_close(c[i]);
	conn_close(extra);
	wait_clients(0);
}
END_TEST

/* Only when every client waits for a deferred reply is a new one refused. */
START_TEST(too_many_clients)
{
	struct conn *c[CONTROL_MAX_CLIENTS + 1];

	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		c[i] = conn_open();
		conn_sends(c[i], "{\"cmd\":\"later\"}\n");
	}
	wait_clients(CONTROL_MAX_CLIENTS);
	long deadline = now_ms() + WAIT_MS;
	while (handler_calls < CONTROL_MAX_CLIENTS && now_ms() < deadline)
		pump(-1, 0);
	ck_assert_int_eq(handler_calls, CONTROL_MAX_CLIENTS);
	struct conn *extra = conn_open();
	assert_dropped(extra, "too many");
	conn_close(extra);
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		conn_close(c[i]);
	/* gone, but each still owed its reply (it may have half-closed) */
	ck_assert_uint_eq(control_client_count(ctl), CONTROL_MAX_CLIENTS);
	ck_assert_int_eq(n_later, CONTROL_MAX_CLIENTS);
	for (int i = 0; i < n_later; i++)
		control_reply(ctl, later_ids[i], json_object(), NULL);
	wait_clients(0);
	extra = conn_open();	/* room again */
	conn_sends(extra, "{\"cmd\":\"echo\"}\n");
	assert_echo(conn_reply(extra), NULL);
	conn_close(extra);
}
END_TEST

/*
 * The idle timeout: a client that sends nothing, or a line that never
 * ends (one byte at a time), is dropped; one that keeps asking stays, and
 * so does one waiting for a deferred reply.
 */
START_TEST(idle_clients_dropped)
{
	control_set_idle_ms(ctl, 300);
	struct conn *silent = conn_open();
	struct conn *drip = conn_open();
	struct conn *busy = conn_open();
	struct conn *waiting = conn_open();
	const char *part = "{\"cmd\":\"echo\",\"args\":[\"never ending";

	conn_sends(waiting, "{\"cmd\":\"later\"}\n");
	wait_deferred(waiting);
	long start = now_ms();
	for (int i = 0; now_ms() - start < 900; i++) {
		/* (fails once the server has hung up) */
		(void)send(drip->fd, part + i % strlen(part), 1, MSG_NOSIGNAL);
		conn_sends(busy, "{\"cmd\":\"echo\",\"args\":[\"b\"]}\n");
		assert_echo(conn_reply(busy), "b");
		if (now_ms() - start < 200)	/* not dropped early */
			ck_assert_uint_eq(control_client_count(ctl), 4);
		pump_for(50);
	}
	ck_assert_uint_eq(control_client_count(ctl), 2);
	assert_dropped(silent, "idle timeout");
	assert_dropped(drip, "idle timeout");
	/* the deferred reply still reaches its client, which then may idle */
	control_reply(ctl, deferred, json_pack("{s:i}", "v", 1), NULL);
	deferred = 0;
	json_t *r = conn_reply(waiting);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "v")), 1);
	json_decref(r);
	conn_close(busy);
	ck_assert(conn_eof(waiting));
	wait_clients(0);
	conn_close(silent);
	conn_close(drip);
	conn_close(waiting);
}
END_TEST

/*
 * A client that never reads its replies: its requests stop being read
 * (the output held for it is bounded), and once nothing could be written
 * for the timeout it is dropped; others are served meanwhile.
 */
START_TEST(non_reader_dropped)
{
	enum { N = 40 };
	control_set_idle_ms(ctl, 300);
	struct conn *c = conn_open();
	struct conn *other = conn_open();
	int bufsize = 4096;	/* the smallest: the server's output stays put */
	ck_assert_int_eq(setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &bufsize,
	    sizeof(bufsize)), 0);

	for (int i = 0; i < N; i++)
		conn_sends(c, "{\"cmd\":\"big\"}\n");
	int calls = handler_calls;
	ck_assert_int_gt(calls, 0);
	ck_assert_int_lt(calls, N);
	conn_sends(other, "{\"cmd\":\"echo\",\"args\":[\"o\"]}\n");
	assert_echo(conn_reply(other), "o");
	conn_close(other);
	wait_clients(0);
	ck_assert_int_eq(handler_calls, calls + 1);
	conn_close(c);
}
END_TEST

/*
 * Random bytes (NULs, bytes that are not UTF-8, short and long lines)
 * are answered with errors, line by line, and the same connection still
 * works after them.
 */
START_TEST(random_bytes)
{
	enum { LEN = 256 * 1024 };
	struct conn *c = conn_open();
	unsigned char *junk = malloc(LEN);
	unsigned seed = 15;
	size_t lines = 0;

	ck_assert_ptr_nonnull(junk);
	for (size_t i = 0; i < LEN; i++) {
		junk[i] = (unsigned char)(rand_r(&seed) >> 7);
		if (junk[i] == '\n')
			lines++;
	}
	ck_assert_uint_gt(lines, 100);
	for (size_t off = 0; off < LEN; off += 4096) {
		conn_send(c, (const char *)junk + off, 4096);
		while (conn_fill(c) > 0)	/* read what came, not waiting */
			;
	}
	free(junk);
	conn_sends(c, "\n{\"cmd\":\"echo\",\"args\":[\"alive\"]}\n");
	size_t errors = 0;
	for (;;) {
		json_t *r = conn_reply(c);
		if (json_is_true(json_object_get(r, "ok"))) {
			assert_echo(r, "alive");
			break;
		}
		errors++;
		json_decref(r);
	}
	/* one error per non-blank line at most, and most lines are that */
	ck_assert_uint_le(errors, lines + 1);
	ck_assert_uint_gt(errors, lines / 2);
	ck_assert_int_eq(handler_calls, 1);
	conn_close(c);
}
END_TEST

START_TEST(slow_reader_backpressure)
{
	enum { N = 40 };
	struct conn *c = conn_open();
	char *reqs = malloc(N * 16 + 1);
	ck_assert_ptr_nonnull(reqs);

	reqs[0] = '\0';
	for (int i = 0; i < N; i++)
		strcat(reqs, "{\"cmd\":\"big\"}\n");
	conn_sends(c, reqs);
	free(reqs);
	/* The client reads nothing: the server must stop taking requests. */
	for (int i = 0; i < 200; i++)
		pump(-1, 0);
	ck_assert_int_gt(handler_calls, 0);
	ck_assert_int_lt(handler_calls, N);
	for (int i = 0; i < N; i++) {
		json_t *r = conn_reply(c);
		ck_assert_uint_eq(json_string_length(json_object_get(r,
		    "blob")), BIG_BLOB);
		json_decref(r);
	}
	ck_assert_int_eq(handler_calls, N);
	conn_close(c);
}
END_TEST

/* A socket file left behind by a daemon that died. */
static void make_stale_socket(const char *path)
{
	struct sockaddr_un sun;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	set_sun(&sun, path);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(fd);
}

START_TEST(stale_socket_replaced)
{
	char err[256] = "";
	struct stat st;

	make_paths();
	char sub[160];
	snprintf(sub, sizeof(sub), "%s/run", tmpdir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	make_stale_socket(sockpath);
	ck_assert_int_eq(raw_connect(sockpath, 0), -1);
	ck_assert_int_eq(errno, ECONNREFUSED);

	base = event_base_new();
	ctl = control_open(base, sockpath, test_handler, &handler_calls, err,
	    sizeof(err));
	ck_assert_msg(ctl != NULL, "control_open: %s", err);
	ck_assert_int_eq(stat(sub, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);	/* existing: untouched */
	struct conn *c = conn_open();
	conn_sends(c, "{\"cmd\":\"echo\",\"args\":[\"fresh\"]}\n");
	assert_echo(conn_reply(c), "fresh");
	conn_close(c);
	teardown();
}
END_TEST

/*
 * control.group: the socket is given to the group, mode 0660 kept; -1
 * leaves it; a socket that is no longer ours is not touched.
 */
START_TEST(socket_group)
{
	char err[256] = "";
	struct stat st;
	gid_t groups[64];
	int n = getgroups(64, groups);
	/* a group other than the primary one, if the process has one */
	gid_t other = getgid();
	for (int i = 0; i < n; i++)
		if (groups[i] != getgid())
			other = groups[i];
	if (geteuid() == 0)
		other = getgid() == 1 ? 2 : 1;

	ck_assert_int_eq(stat(sockpath, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0660);
	ck_assert_int_eq(control_set_group(ctl, -1, err, sizeof(err)), 0);
	ck_assert_int_eq(control_set_group(ctl, other, err, sizeof(err)), 0);
	ck_assert_int_eq(stat(sockpath, &st), 0);
	ck_assert_uint_eq(st.st_gid, other);
	ck_assert_uint_eq(st.st_mode & 0777, 0660);
	/* the path taken by something else: left alone, and said so */
	ck_assert_int_eq(rename(sockpath, tmpdir_file("moved")), 0);
	int fd = open(sockpath, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(control_set_group(ctl, getgid(), err, sizeof(err)),
	    -1);
	ck_assert_msg(strstr(err, "no longer our socket") != NULL, "%s", err);
	ck_assert_int_eq(stat(sockpath, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	unlink(sockpath);
	ck_assert_int_eq(rename(tmpdir_file("moved"), sockpath), 0);
}
END_TEST

START_TEST(second_open_refused)
{
	char err[256] = "";
	struct event_base *b2 = event_base_new();

	struct control *again = control_open(b2, sockpath, test_handler,
	    &handler_calls, err, sizeof(err));
	ck_assert_ptr_null(again);
	ck_assert_msg(strstr(err, "already listening") != NULL &&
	    strstr(err, sockpath) != NULL, "err: %s", err);
	event_base_free(b2);
	/* The first server's socket is still there and still answers. */
	struct conn *c = conn_open();
	conn_sends(c, "{\"cmd\":\"echo\",\"args\":[\"first\"]}\n");
	assert_echo(conn_reply(c), "first");
	conn_close(c);
}
END_TEST

START_TEST(not_a_socket_refused)
{
	char err[256] = "";
	char path[160];

	make_paths();
	snprintf(path, sizeof(path), "%s/plain", tmpdir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	base = event_base_new();
	ck_assert_ptr_null(control_open(base, path, test_handler, NULL, err,
	    sizeof(err)));
	ck_assert_msg(strstr(err, "not a socket") != NULL, "err: %s", err);
	ck_assert_int_eq(access(path, F_OK), 0);
	unlink(path);

	char longpath[200];
	memset(longpath, 'p', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	ck_assert_ptr_null(control_open(base, longpath, test_handler, NULL,
	    err, sizeof(err)));
	ck_assert_msg(strstr(err, "longer than") != NULL, "err: %s", err);
	event_base_free(base);
	remove_paths();
}
END_TEST

START_TEST(close_unlinks_own_socket_only)
{
	struct conn *c = conn_open();

	wait_clients(1);
	control_close(ctl);
	ctl = NULL;
	ck_assert_int_eq(access(sockpath, F_OK), -1);
	ck_assert(conn_eof(c));
	conn_close(c);

	/* A successor's socket file is left alone. */
	char err[256] = "";
	ctl = control_open(base, sockpath, test_handler, &handler_calls, err,
	    sizeof(err));
	ck_assert_msg(ctl != NULL, "%s", err);
	unlink(sockpath);
	make_stale_socket(sockpath);
	control_close(ctl);
	ctl = NULL;
	ck_assert_int_eq(access(sockpath, F_OK), 0);
}
END_TEST

/* ------------------------------------------------ control_call (client) */

static atomic_int stop_loop;

static void *loop_thread(void *arg)
{
	while (!atomic_load(&stop_loop)) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		usleep(500);
	}
	return NULL;
}

START_TEST(client_call)
{
	pthread_t t;
	char err[512];
	json_t *req = json_pack("{s:s,s:[s,s]}", "cmd", "echo", "args", "a",
	    "--heavy");

	atomic_store(&stop_loop, 0);
	ck_assert_int_eq(pthread_create(&t, NULL, loop_thread, NULL), 0);

	json_t *r = control_call(sockpath, req, 5000, err, sizeof(err));
	json_decref(req);
	ck_assert_msg(r != NULL, "control_call: %s", err);
	ck_assert(json_is_true(json_object_get(r, "ok")));
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(r,
	    "args"), 1)), "--heavy");
	json_decref(r);

	r = call_cmd(sockpath, "fail", 5000, err, sizeof(err));
	ck_assert_ptr_nonnull(r);
	ck_assert(json_is_false(json_object_get(r, "ok")));
	ck_assert_str_eq(json_string_value(json_object_get(r, "error")),
	    "nope");
	json_decref(r);

	r = call_cmd(sockpath, "big", 5000, err, sizeof(err));
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(json_string_length(json_object_get(r, "blob")),
	    BIG_BLOB);
	json_decref(r);

	/* Too long to send: refused before connecting. */
	char *huge = malloc(CONTROL_MAX_LINE + 1);
	ck_assert_ptr_nonnull(huge);
	memset(huge, 'z', CONTROL_MAX_LINE);
	huge[CONTROL_MAX_LINE] = '\0';
	req = json_pack("{s:s,s:[s]}", "cmd", "echo", "args", huge);
	ck_assert_ptr_null(control_call(sockpath, req, 5000, err, sizeof(err)));
	json_decref(req);
	ck_assert_msg(strstr(err, "longer than") != NULL, "err: %s", err);
	free(huge);

	atomic_store(&stop_loop, 1);
	pthread_join(t, NULL);
}
END_TEST

/* Answers its three clients with: not JSON, a reply without "ok", nothing. */
static void *bad_server(void *arg)
{
	static const char *const answers[] = { "not json\n", "[1]\n", NULL };
	int lfd = *(int *)arg;
	char buf[256];

	for (int i = 0; i < 3; i++) {
		int fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			break;
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n > 0 && answers[i] != NULL)
			n = send(fd, answers[i], strlen(answers[i]),
			    MSG_NOSIGNAL);
		(void)n;
		close(fd);
	}
	return NULL;
}

START_TEST(client_errors)
{
	char err[512];
	char path[160];

	make_paths();
	snprintf(path, sizeof(path), "%s/absent.sock", tmpdir);
	ck_assert_ptr_null(call_cmd(path, "status", 1000, err,
	    sizeof(err)));
	ck_assert_msg(strstr(err, "cannot connect") != NULL &&
	    strstr(err, path) != NULL, "err: %s", err);

	/* Listening, never answering: the call times out. */
	struct sockaddr_un sun;
	set_sun(&sun, path);
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	long t0 = now_ms();
	ck_assert_ptr_null(call_cmd(path, "status", 300, err,
	    sizeof(err)));
	long took = now_ms() - t0;
	ck_assert_msg(strstr(err, "no reply") != NULL, "err: %s", err);
	ck_assert_int_ge(took, 250);
	ck_assert_int_lt(took, 3000);

	/* Drain the timed-out connection, then answer badly. */
	ck_assert_int_eq(fcntl(lfd, F_SETFL, O_NONBLOCK), 0);
	int afd;
	while ((afd = accept(lfd, NULL, NULL)) >= 0)
		close(afd);
	ck_assert_int_eq(fcntl(lfd, F_SETFL, 0), 0);
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, bad_server, &lfd), 0);
	ck_assert_ptr_null(call_cmd(path, "status", 5000, err,
	    sizeof(err)));
	ck_assert_msg(strstr(err, "malformed reply") != NULL, "err: %s", err);
	ck_assert_ptr_null(call_cmd(path, "status", 5000, err,
	    sizeof(err)));
	ck_assert_msg(strstr(err, "malformed reply") != NULL, "err: %s", err);
	ck_assert_ptr_null(call_cmd(path, "status", 5000, err,
	    sizeof(err)));
	ck_assert_msg(strstr(err, "connection closed") != NULL, "err: %s",
	    err);
	pthread_join(t, NULL);
	close(lfd);
	unlink(path);
	remove_paths();
}
END_TEST

/* ---------------------------------------------------------- text output */

/* What print (control_print_text, status_print_summary) makes of a reply, malloc'd. */
static char *text_by(void (*print)(FILE *, const json_t *), const json_t *r)
{
	char *out = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&out, &len);
	print(fp, r);
	fclose(fp);
	return out;
}

static char *text_of(const json_t *r)
{
	return text_by(control_print_text, r);
}

static char *render(const char *reply_json)
{
	json_t *r = json_loads(reply_json, 0, NULL);
	ck_assert_ptr_nonnull(r);
	char *out = text_of(r);
	json_decref(r);
	return out;
}

START_TEST(text_rendering)
{
	char *s = render("{\"ok\":true,\"state\":\"MASTER\",\"sweeps\":3,"
	    "\"ratio\":0.5,\"up\":true,\"down\":false,\"sm\":null,"
	    "\"routing\":{\"engine\":\"minhop\",\"lmc\":0,"
	    "\"opts\":{\"roots\":[\"S0\",\"S1\"]}},"
	    "\"switches\":[{\"guid\":\"0x1\",\"ports\":36},"
	    "{\"guid\":\"0x2\",\"ports\":18}],"
	    "\"empty\":[],\"nothing\":{},\"mixed\":[1,{\"a\":2}]}");
	ck_assert_str_eq(s,
	    "state: MASTER\n"
	    "sweeps: 3\n"
	    "ratio: 0.5\n"
	    "up: true\n"
	    "down: false\n"
	    "sm: -\n"
	    "routing:\n"
	    "  engine: minhop\n"
	    "  lmc: 0\n"
	    "  opts:\n"
	    "    roots: S0, S1\n"
	    "switches:\n"
	    "  guid: 0x1\n"
	    "  ports: 36\n"
	    "\n"
	    "  guid: 0x2\n"
	    "  ports: 18\n"
	    "empty: (none)\n"
	    "nothing: (none)\n"
	    "mixed:\n"
	    "  1\n"
	    "\n"
	    "  a: 2\n");
	free(s);

	/* A "text" member is the whole rendering, verbatim. */
	s = render("{\"ok\":true,\"count\":2,\"text\":\"LID  GUID\\n1    0x1\"}");
	ck_assert_str_eq(s, "LID  GUID\n1    0x1\n");
	free(s);
	s = render("{\"ok\":true,\"text\":\"done\\n\"}");
	ck_assert_str_eq(s, "done\n");
	free(s);
	s = render("{\"ok\":true}");
	ck_assert_str_eq(s, "");
	free(s);

	/* routes SWITCH: as ibroute prints an LFT */
	s = render("{\"ok\":true,\"switch\":{\"guid\":\"0x0000000000000002\","
	    "\"lid\":2,\"description\":\"S2\"},\"engine\":\"updn\",\"valid\":2,"
	    "\"routes\":[{\"lid\":2,\"port\":0,\"destination\":{\"type\":\"Switch\","
	    "\"port_guid\":\"0x0000000000000002\",\"description\":\"S2\"}},"
	    "{\"lid\":300,\"port\":17}]}");
	ck_assert_str_eq(s,
	    "Unicast lids of switch Lid 2 guid 0x0000000000000002 (S2), engine updn:\n"
	    "  Lid  Out   Destination\n"
	    "       Port     Info \n"
	    "0x0002 000 : (Switch portguid 0x0000000000000002: 'S2')\n"
	    "0x012c 017 : (no port holds this LID)\n"
	    "2 valid lids dumped \n");
	free(s);
	/* lids: a table, vLIDs marked */
	s = render("{\"ok\":true,\"count\":1,\"lids\":[{\"port_guid\":\"0x0000000000000011\","
	    "\"lid\":65537,\"lmc\":0,\"vlid\":true,\"type\":\"Channel Adapter\","
	    "\"port\":3,\"description\":\"hv1\"}]}");
	ck_assert_str_eq(s,
	    "PORT GUID          LID     LMC TYPE            PORT NODE\n"
	    "0x0000000000000011 0x10001   0 Channel Adapter    3 hv1 (vLID)\n");
	free(s);
}
END_TEST

/* The daemon's command handler on a request given as JSON text. */
static json_t *run_json(struct sm *sm, const char *text, char *err, size_t errlen)
{
	json_t *req = json_loads(text, 0, NULL);
	ck_assert_ptr_nonnull(req);
	json_t *res = sm_control(sm, json_string_value(json_object_get(req, "cmd")),
				 req, err, errlen);
	json_decref(req);
	return res;
}

/*
 * The daemon's command table (sm/ctl/ctlcmds.c): every command ibsmctl(8)
 * documents is implemented (one that is not would be refused as not
 * implemented yet); an unknown one stays unknown, the message naming
 * those carried out.
 */
START_TEST(daemon_commands)
{
	struct sm *sm = calloc(1, sizeof(*sm));
	char err[256];

	ck_assert_ptr_nonnull(sm);
	ck_assert_ptr_null(run_json(sm, "{\"cmd\":\"frobnicate\"}", err, sizeof(err)));
	ck_assert_str_eq(err,
	    "unknown command 'frobnicate' (status, topology, lids, routes, groups, metrics, verify, sweep, reroute, reload, subscribers, vm, partitions, forget, perfmgr, health, hotspots, job)");
	/* lids, routes, verify: refused before the first configuration */
	static const char *const routed[] = {
		"{\"cmd\":\"lids\"}", "{\"cmd\":\"routes\",\"switch\":\"L0-S0\"}",
		"{\"cmd\":\"verify\"}",
	};
	for (size_t i = 0; i < 3; i++) {
		err[0] = '\0';
		ck_assert_ptr_null(run_json(sm, routed[i], err, sizeof(err)));
		ck_assert_msg(strstr(err, "no configured subnet yet") != NULL,
		    "%s: %s", routed[i], err);
	}
	ck_assert_ptr_null(run_json(sm, "{\"cmd\":\"routes\"}", err, sizeof(err)));
	ck_assert_msg(strstr(err, "usage: routes SWITCH") != NULL, "%s", err);
	/* status: the last error set, until it clears */
	json_t *st = run_json(sm, "{\"cmd\":\"status\"}", err, sizeof(err));
	ck_assert_ptr_nonnull(st);
	ck_assert(json_is_null(json_object_get(st, "last_error")));
	json_decref(st);
	errors_set(&sm->errs, SM_ERR_ROUTING, "no engine could route the fabric (tried: %s)", "x");
	errors_set(&sm->errs, SM_ERR_RELOAD, "policy not reloaded: %s", "p.yaml:2:3: bad");
	errors_set(&sm->errs, SM_ERR_RELOAD, "policy not reloaded: %s", "p.yaml:4:1: bad");
	st = run_json(sm, "{\"cmd\":\"status\"}", err, sizeof(err));
	ck_assert_ptr_nonnull(st);
	json_t *le = json_object_get(st, "last_error");
	ck_assert_str_eq(json_string_value(json_object_get(le, "kind")), "reload");
	ck_assert_str_eq(json_string_value(json_object_get(le, "message")),
	    "policy not reloaded: p.yaml:4:1: bad");
	ck_assert_int_eq(json_integer_value(json_object_get(le, "count")), 2);
	ck_assert_uint_eq(json_array_size(json_object_get(st, "errors")), 2);
	json_decref(st);
	errors_clear(&sm->errs, SM_ERR_RELOAD);
	st = run_json(sm, "{\"cmd\":\"status\"}", err, sizeof(err));
	le = json_object_get(st, "last_error");
	ck_assert_str_eq(json_string_value(json_object_get(le, "kind")), "routing");
	ck_assert_uint_eq(json_array_size(json_object_get(st, "errors")), 1);
	json_decref(st);
	errors_clear(&sm->errs, SM_ERR_ROUTING);
	st = run_json(sm, "{\"cmd\":\"status\"}", err, sizeof(err));
	ck_assert(json_is_null(json_object_get(st, "last_error")));
	json_decref(st);
	/* topology: its one field; no subnet before the first configuration */
	ck_assert_ptr_null(run_json(sm, "{\"cmd\":\"topology\",\"list\":true}", err, sizeof(err)));
	ck_assert_str_eq(err, "topology: unknown field 'list'");
	ck_assert_ptr_null(run_json(sm, "{\"cmd\":\"topology\",\"dot\":true}", err, sizeof(err)));
	ck_assert_msg(strncmp(err, "no subnet configured yet", 24) == 0, "%s", err);
	ck_assert_ptr_null(run_json(sm, "{\"cmd\":\"Status\"}", err, sizeof(err)));
	ck_assert_msg(strncmp(err, "unknown command", 15) == 0, "%s", err);
	ck_assert_ptr_null(run_json(sm, "{\"cmd\":\"reroute\",\"list\":true}", err, sizeof(err)));
	ck_assert_str_eq(err, "reroute takes no arguments");
	/* a field of another type: refused, whatever the command */
	ck_assert_ptr_null(run_json(sm, "{\"cmd\":\"sweep\",\"heavy\":\"yes\"}", err, sizeof(err)));
	ck_assert_str_eq(err, "sweep: field 'heavy' wants true or false");
	ck_assert_ptr_null(run_json(sm, "{\"cmd\":\"vm\",\"op\":\"create\",\"name\":\"x\",\"vf\":\"2\"}", err, sizeof(err)));
	ck_assert_str_eq(err, "vm: field 'vf' wants an integer");
	ck_assert_ptr_null(run_json(sm, "{\"cmd\":\"routes\",\"switch\":[\"L0\"]}", err, sizeof(err)));
	ck_assert_str_eq(err, "routes: field 'switch' wants a string");
	/* vm: the registry's list; the writing commands want a configured subnet */
	json_t *r = run_json(sm, "{\"cmd\":\"vm\",\"op\":\"list\"}", err, sizeof(err));
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(json_array_size(json_object_get(r, "vms")), 0);
	json_decref(r);
	ck_assert_ptr_null(run_json(sm, "{\"cmd\":\"vm\",\"op\":\"create\",\"name\":\"x\",\"hypervisor\":\"V-1\"}", err, sizeof(err)));
	ck_assert_msg(strstr(err, "not MASTER") != NULL, "%s", err);
	/* shared_lid is taken: refused here for the subnet, not the flag */
	ck_assert_ptr_null(run_json(sm, "{\"cmd\":\"vm\",\"op\":\"create\",\"name\":\"x\",\"shared_lid\":true,\"hypervisor\":\"V-1\"}", err, sizeof(err)));
	ck_assert_msg(strstr(err, "not MASTER") != NULL, "%s", err);
	ck_assert_ptr_null(run_json(sm, "{\"cmd\":\"vm\",\"op\":\"migrate\",\"name\":\"x\",\"prepare\":true,\"commit\":true}", err, sizeof(err)));
	ck_assert_str_eq(err, "vm migrate: --prepare or --commit, not both");
	/* a field of another operation */
	ck_assert_ptr_null(run_json(sm, "{\"cmd\":\"vm\",\"op\":\"create\",\"name\":\"x\",\"to\":\"V-1\"}", err, sizeof(err)));
	ck_assert_str_eq(err, "vm create: unknown field 'to'");
	ck_assert_ptr_null(run_json(sm, "{\"cmd\":\"vm\",\"op\":\"create\",\"name\":\"bad name\"}", err, sizeof(err)));
	ck_assert_msg(strstr(err, "a VM name") != NULL, "%s", err);
	ck_assert_ptr_null(run_json(sm, "{\"cmd\":\"subscribers\",\"list\":true}", err, sizeof(err)));
	ck_assert_str_eq(err, "subscribers takes no arguments");
	/* no notifier (not started): no subscriptions, still an answer */
	json_t *subs = run_json(sm, "{\"cmd\":\"subscribers\"}", err, sizeof(err));
	ck_assert_ptr_nonnull(subs);
	ck_assert_int_eq(json_integer_value(json_object_get(subs, "count")), 0);
	json_decref(subs);
	free(sm);
}
END_TEST

/*
 * status, text form: the M_Key block (ibsmctl(8), "status": m_key) as the
 * daemon answers it, its level and counts one a line under "m_key:";
 * any other number the block gains (each field a line, whatever its
 * name) is shown the same way, in the order the daemon put them.
 */
START_TEST(status_text_m_key)
{
	struct sm *sm = calloc(1, sizeof(*sm));
	char err[256];

	ck_assert_ptr_nonnull(sm);
	sm->sub.mk.protect = 2;
	sm->traps.st.mkey_violations = 3;
	json_t *st = run_json(sm, "{\"cmd\":\"status\"}", err, sizeof(err));
	ck_assert_ptr_nonnull(st);
	char *s = text_of(st);
	json_decref(st);
	ck_assert_msg(strstr(s, "\nm_key:\n"
	    "  protect_level: 2\n"
	    "  ports_keyed: 0\n"
	    "  ports_unkeyed: 0\n"
	    "  violations: 3\n"
	    "  violations_read: 0\n") != NULL, "%s", s);
	free(s);
	free(sm);

	s = render("{\"ok\":true,\"state\":\"MASTER\",\"m_key\":{\"protect_level\":3,"
	    "\"ports_keyed\":20,\"ports_unkeyed\":1,\"violations\":4,\"violations_read\":6,"
	    "\"taken_over\":2,\"ports_foreign\":1,\"lease_wait_s\":57}}");
	ck_assert_str_eq(s,
	    "state: MASTER\n"
	    "m_key:\n"
	    "  protect_level: 3\n"
	    "  ports_keyed: 20\n"
	    "  ports_unkeyed: 1\n"
	    "  violations: 4\n"
	    "  violations_read: 6\n"
	    "  taken_over: 2\n"
	    "  ports_foreign: 1\n"
	    "  lease_wait_s: 57\n");
	free(s);
}
END_TEST

/*
 * groups: the database as it is (none before any join), groups in
 * creation order with their parameters, members in join order with the
 * LID the SM gives their port (0: none) and their JoinState; the text
 * form, one group a line and its members under it.
 */
static struct mc_group *new_group(struct sm *sm, const uint8_t mgid[16],
				   uint16_t pkey, uint32_t qkey, uint8_t mtu,
				   uint8_t rate, uint8_t sl, uint8_t well_known)
{
	struct mc_group g = { .pkey = pkey, .qkey = qkey, .mtu = mtu,
			      .rate = rate, .sl = sl, .well_known = well_known };
	const char *why;
	memcpy(g.mgid, mgid, 16);
	return mc_create(&sm->mc, &g, &why);
}

/* The summary of a status reply (ibsmctl(8), "status"), as a string. */
static char *summary_of(const json_t *r)
{
	return text_by(status_print_summary, r);
}

static int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/*
 * ibsmctl status: a screenful (at most 25 lines) from the daemon's own
 * reply, the state on a line of its own, no time in seconds since the
 * epoch; the errors that need an operator one a line with their kind and
 * dates; a heavy sweep with its ISO date.  --verbose: an "X_time" number
 * as ISO 8601, or left out where "X_date" says it.
 */
START_TEST(status_summary)
{
	struct sm *sm = calloc(1, sizeof(*sm));
	char err[256];
	ck_assert_ptr_nonnull(sm);
	sm->state = SMS_MASTER;
	sm->start_time = 1795932000;
	sm->sweep.last_sweep_time = 1795932047;
	json_t *st = run_json(sm, "{\"cmd\":\"status\"}", err, sizeof(err));
	ck_assert_ptr_nonnull(st);
	char *s = summary_of(st);
	ck_assert_msg(count_lines(s) <= 25, "%d lines:\n%s", count_lines(s), s);
	ck_assert_msg(strstr(s, "\nstate: MASTER\n") && strstr(s, "\nerrors: none\n") &&
		      strstr(s, "\nlast heavy sweep: none completed yet\n"), "%s", s);
	ck_assert_msg(!strstr(s, "1795932"), "%s", s);
	free(s);
	/* the verbose text: the same reply, the epoch as ISO 8601 once */
	char *v = text_of(st);
	ck_assert_msg(!strstr(v, "1795932047") &&
		      strstr(v, "\nlast_sweep_date: 2026-11-29T06:00:47Z\n"), "%s", v);
	free(v);
	json_decref(st);
	free(sm);

	json_t *r = json_loads("{\"ok\":true,\"version\":\"9.9\",\"uptime_s\":7322,"
	    "\"started\":\"2026-11-29T04:00:00Z\",\"state\":\"STANDBY\","
	    "\"master_guid\":\"0x2\",\"master_lid\":3,\"master_priority\":9,"
	    "\"errors\":[{\"kind\":\"routing\",\"message\":\"no engine could route\","
	    "\"since\":\"2026-11-29T05:00:00Z\",\"last\":\"2026-11-29T06:00:00Z\",\"count\":3}],"
	    "\"last_heavy_sweep\":{\"switches\":6,\"cas\":12,\"ports\":66,\"lids\":18,"
	    "\"max_lid\":18,\"routing\":\"ftree\",\"sweep_ms\":4,\"route_ms\":1,"
	    "\"unresponsive\":2,\"mad_timeouts\":5,\"time\":\"2026-11-29T06:00:47Z\"},"
	    "\"failed_links\":1,\"degraded_links\":2}", 0, NULL);
	ck_assert_ptr_nonnull(r);
	s = summary_of(r);
	json_decref(r);
	ck_assert_msg(strstr(s, "ibsmd 9.9, up 2 h 2 min (started 2026-11-29T04:00:00Z)\n"
	    "state: STANDBY\n") &&
	    strstr(s, "\nmaster: port 0x2, LID 3, priority 9\n"
	    "errors: 1, until they clear\n"
	    "  routing: no engine could route (since 2026-11-29T05:00:00Z, "
	    "last 2026-11-29T06:00:00Z, 3 times)\n"
	    "last heavy sweep: 2026-11-29T06:00:47Z, 4 ms, routed by ftree in 1 ms; "
	    "2 unresponsive, 5 MAD timeouts\n"
	    "fabric: 6 switches, 12 CAs, 66 ports, 18 LIDs (max 18)\n"
	    "links: 1 failed, 2 degraded\n"), "%s", s);
	free(s);

	s = render("{\"ok\":true,\"a_time\":1795932047,\"b_time\":1795932047,"
	    "\"b_date\":\"2026-11-29T06:00:47Z\",\"c_time\":0,\"uptime_s\":5}");
	ck_assert_str_eq(s, "a_time: 2026-11-29T06:00:47Z\n"
	    "b_date: 2026-11-29T06:00:47Z\n"
	    "c_time: -\n"
	    "uptime_s: 5\n");
	free(s);
}
END_TEST

START_TEST(groups_command)
{
	struct sm *sm = calloc(1, sizeof(*sm));
	char err[256];
	ck_assert_ptr_nonnull(sm);
	ck_assert_int_eq(mc_db_init(&sm->mc), 0);
	ck_assert_ptr_null(run_json(sm, "{\"cmd\":\"groups\",\"x\":\"x\"}", err, sizeof(err)));
	ck_assert_str_eq(err, "groups takes no arguments");
	json_t *r = run_json(sm, "{\"cmd\":\"groups\"}", err, sizeof(err));
	ck_assert_ptr_nonnull(r);
	char *doc = json_dumps(r, JSON_COMPACT);
	ck_assert_str_eq(doc, "{\"groups\":[]}");
	free(doc);
	json_decref(r);

	static const uint8_t other[16] = { 0xff, 0x15, [15] = 0x07 };
	uint8_t bcast[16];
	mc_ipoib_mgid(0xffff, bcast);
	struct mc_group *b = new_group(sm, bcast, 0xffff, 0x0b1b, 4, 3, 0, 1);
	struct mc_group *o = new_group(sm, other, 0x8001, 0x11, 5, 6, 2, 0);
	ck_assert(b && o);
	ck_assert_int_eq(guid_map_init(&sm->sub.guid2lid, 16), 0);
	ck_assert_int_eq(guid_map_put(&sm->sub.guid2lid, 0x20, 5), 0);
	ck_assert_int_eq(mc_join(&sm->mc, b, 0x20, MC_JOIN_FULL, 0), 1);
	ck_assert_int_eq(mc_join(&sm->mc, b, 0x30, MC_JOIN_SENDONLY, 0), 1);
	ck_assert_int_eq(mc_join(&sm->mc, b, 0x20, MC_JOIN_NON, 0), 1);
	ck_assert_int_eq(mc_join(&sm->mc, o, 0x30, MC_JOIN_SO_FULL, 0), 1);
	r = run_json(sm, "{\"cmd\":\"groups\"}", err, sizeof(err));
	ck_assert_ptr_nonnull(r);
	doc = json_dumps(r, JSON_COMPACT);
	ck_assert_str_eq(doc, "{\"groups\":["
	    "{\"mgid\":\"ff12:401b:ffff:0000:0000:0000:ffff:ffff\",\"mlid\":49152,"
	    "\"pkey\":\"0xffff\",\"qkey\":\"0x00000b1b\",\"mtu\":4,\"rate\":3,"
	    "\"sl\":0,\"well_known\":true,\"members\":["
	    "{\"guid\":\"0x0000000000000020\",\"lid\":5,\"join_state\":3},"
	    "{\"guid\":\"0x0000000000000030\",\"lid\":0,\"join_state\":4}]},"
	    "{\"mgid\":\"ff15:0000:0000:0000:0000:0000:0000:0007\",\"mlid\":49153,"
	    "\"pkey\":\"0x8001\",\"qkey\":\"0x00000011\",\"mtu\":5,\"rate\":6,"
	    "\"sl\":2,\"well_known\":false,\"members\":["
	    "{\"guid\":\"0x0000000000000030\",\"lid\":0,\"join_state\":8}]}]}");
	free(doc);
	/* the text form of what the daemon answered (with its "ok") */
	json_object_set_new(r, "ok", json_true());
	doc = json_dumps(r, JSON_COMPACT);
	char *s = render(doc);
	ck_assert_str_eq(s,
	    "MGID                                    MLID   PKEY   QKEY        MTU RATE SL MEMBERS\n"
	    "ff12:401b:ffff:0000:0000:0000:ffff:ffff 0xc000 0xffff 0x00000b1b 2048    3  0 2 (well-known)\n"
	    "  0x0000000000000020 LID 0x0005 full+non\n"
	    "  0x0000000000000030 LID 0x0000 send-only-non\n"
	    "ff15:0000:0000:0000:0000:0000:0000:0007 0xc001 0x8001 0x00000011 4096    6  2 1\n"
	    "  0x0000000000000030 LID 0x0000 send-only-full\n");
	free(s);
	free(doc);
	json_decref(r);
	guid_map_free(&sm->sub.guid2lid);
	mc_db_free(&sm->mc);
	free(sm);
}
END_TEST

static Suite *control_suite(void)
{
	Suite *s = suite_create("control");
	TCase *server = tcase_create("server");
	TCase *alone = tcase_create("standalone");

	tcase_add_checked_fixture(server, setup, teardown);
	tcase_set_timeout(server, 30);
	tcase_add_test(server, good_request);
	tcase_add_test(server, deferred_reply_in_order);
	tcase_add_test(server, rejected_commands);
	tcase_add_test(server, garbage_lines);
	tcase_add_test(server, overlong_line);
	tcase_add_test(server, two_requests_one_connection);
	tcase_add_test(server, disconnect_mid_request);
	tcase_add_test(server, half_close_gets_reply);
	tcase_add_test(server, many_clients);
	tcase_add_test(server, too_many_clients);
	tcase_add_test(server, full_table_drops_longest_idle);
	tcase_add_test(server, full_table_spares_senders);
	tcase_add_test(server, idle_clients_dropped);
	tcase_add_test(server, non_reader_dropped);
	tcase_add_test(server, random_bytes);
	tcase_add_test(server, slow_reader_backpressure);
	tcase_add_test(server, second_open_refused);
	tcase_add_test(server, socket_group);
	tcase_add_test(server, close_unlinks_own_socket_only);
	tcase_add_test(server, client_call);
	suite_add_tcase(s, server);

	tcase_set_timeout(alone, 30);
	tcase_add_test(alone, stale_socket_replaced);
	tcase_add_test(alone, not_a_socket_refused);
	tcase_add_test(alone, client_errors);
	tcase_add_test(alone, text_rendering);
	tcase_add_test(alone, status_text_m_key);
	tcase_add_test(alone, status_summary);
	tcase_add_test(alone, daemon_commands);
	tcase_add_test(alone, groups_command);
	suite_add_tcase(s, alone);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(control_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
