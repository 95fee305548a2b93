/*
 * The bounded HTTP server (sm/ctl/httpd.c) on 127.0.0.1, driven from the
 * same process through non-blocking client sockets while the loop is
 * pumped: the cap closes the connection waiting longest for its request
 * (never one whose request was answered and is kept alive, until it is
 * the longest waiting), the deadline is not stretched by a client that
 * sends a byte now and then, a kept-alive connection gets the deadline
 * again after each answer, and a failed accept() pauses the listener
 * instead of spinning on it; libevent's own lines are rate-limited.
 */
#include "sm/ctl/httpd.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#include "sm/base/log.h"

#define WAIT_MS 5000

static struct event_base *base;
static struct httpd *d;
static struct httpd_stats st;
static uint16_t port;
static int answered;

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void pump(void)
{
	event_base_loop(base, EVLOOP_NONBLOCK);
	poll(NULL, 0, 1);
	event_base_loop(base, EVLOOP_NONBLOCK);
}

static void pump_for(int ms)
{
	long end = now_ms() + ms;
	while (now_ms() < end)
		pump();
}

static void on_req(struct evhttp_request *req, void *arg)
{
	struct evbuffer *b = evbuffer_new();
	evbuffer_add_printf(b, "ok\n");
	evhttp_send_reply(req, HTTP_OK, "OK", b);
	evbuffer_free(b);
	answered++;
}

/* A port nothing listens on now. */
static uint16_t free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

static void start(unsigned max, int deadline_ms)
{
	char err[256];
	memset(&st, 0, sizeof(st));
	answered = 0;
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	port = free_port();
	d = httpd_new(base, "127.0.0.1", port, max, deadline_ms, on_req, NULL, &st,
		      err, sizeof(err));
	ck_assert_msg(d != NULL, "%s", err);
}

static void stop(void)
{
	httpd_free(d);
	event_base_free(base);
}

/* A client connection, established once the server is pumped. */
static int conn_open(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	ck_assert_int_ge(fd, 0);
	int r = connect(fd, (struct sockaddr *)&a, sizeof(a));
	ck_assert(r == 0 || errno == EINPROGRESS);
	return fd;
}

static void conn_send(int fd, const char *s)
{
	ck_assert_int_eq(send(fd, s, strlen(s), MSG_NOSIGNAL), (ssize_t)strlen(s));
}

/* 1: the server closed fd (EOF or reset), reading whatever came first. */
static int closed_now(int fd)
{
	char buf[4096];
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
			return 1;
		if (n < 0)
			return 0;
	}
}

static int wait_closed(int fd, int ms)
{
	long end = now_ms() + ms;
	while (now_ms() < end) {
		pump();
		if (closed_now(fd))
			return 1;
	}
	return 0;
}

/* Pumps until the server has n connections (or WAIT_MS). */
static void wait_conns(unsigned n)
{
	long end = now_ms() + WAIT_MS;
	while (httpd_connections(d) != n && now_ms() < end)
		pump();
	ck_assert_uint_eq(httpd_connections(d), n);
}

/* Reads an answer's status line on fd ("HTTP/1.1 200 OK"). */
static int answer_code(int fd)
{
	char buf[4096];
	size_t got = 0;
	long end = now_ms() + WAIT_MS;
	while (now_ms() < end && got < sizeof(buf) - 1) {
		pump();
		ssize_t n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);
		if (n > 0)
			got += (size_t)n;
		buf[got] = '\0';
		if (strstr(buf, "\r\n\r\n"))
			break;
	}
	int code = -1;
	sscanf(buf, "HTTP/1.%*d %d", &code);
	return code;
}

START_TEST(cap_closes_the_longest_waiting)
{
	int c[6];
	start(3, 10000);
	for (int i = 0; i < 3; i++) {
		c[i] = conn_open();
		wait_conns((unsigned)i + 1);
	}
	conn_send(c[0], "GET /metr");	/* waiting, however busy */
	c[3] = conn_open();
	ck_assert(wait_closed(c[0], WAIT_MS));
	wait_conns(3);
	ck_assert_uint_eq(st.closed_cap, 1);
	/* c[1] answered and kept alive: it waits anew, after c[2] and c[3] */
	conn_send(c[1], "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
	ck_assert_int_eq(answer_code(c[1]), 200);
	c[4] = conn_open();
	ck_assert(wait_closed(c[2], WAIT_MS));
	c[5] = conn_open();
	ck_assert(wait_closed(c[3], WAIT_MS));
	wait_conns(3);
	ck_assert_uint_eq(st.closed_cap, 3);
	ck_assert(!closed_now(c[1]) && !closed_now(c[4]) && !closed_now(c[5]));
	/* a lower cap closes the longest waiting at once */
	httpd_set_max(d, 1);
	ck_assert(wait_closed(c[1], WAIT_MS) && wait_closed(c[4], WAIT_MS));
	ck_assert_uint_eq(httpd_connections(d), 1);
	ck_assert_uint_eq(st.closed_cap, 5);
	ck_assert_uint_eq(st.closed_deadline, 0);
	for (int i = 0; i < 6; i++)
		close(c[i]);
	stop();
}
END_TEST

START_TEST(deadline_not_stretched)
{
	enum { DEADLINE = 400 };
	start(8, DEADLINE);
	int slow = conn_open();
	wait_conns(1);
	long t0 = now_ms();
	conn_send(slow, "GET / HTTP/1.1\r\n");
	int closed = 0;
	for (int i = 0; i < 30 && !closed; i++) {	/* a header line every 100 ms */
		pump_for(100);
		closed = closed_now(slow);
		if (!closed)
			conn_send(slow, "X-a: b\r\n");
	}
	long took = now_ms() - t0;
	ck_assert_msg(closed, "a client sending a line every 100 ms kept its connection 3 s");
	ck_assert_msg(took >= DEADLINE - 50 && took < DEADLINE + 400, "closed after %ld ms", took);
	ck_assert_uint_eq(st.closed_deadline, 1);
	ck_assert_int_eq(answered, 0);
	close(slow);

	/* a request finished in time is answered; kept alive, it gets the deadline again */
	int c = conn_open();
	wait_conns(1);
	conn_send(c, "GET / HTTP/1.1\r\n");
	pump_for(DEADLINE / 2);
	conn_send(c, "Host: x\r\n\r\n");
	ck_assert_int_eq(answer_code(c), 200);
	t0 = now_ms();
	ck_assert(wait_closed(c, WAIT_MS));
	took = now_ms() - t0;
	ck_assert_msg(took >= DEADLINE - 50 && took < DEADLINE + 400, "idle closed after %ld ms", took);
	ck_assert_uint_eq(st.closed_deadline, 2);
	ck_assert_int_eq(answered, 1);
	close(c);
	wait_conns(0);
	stop();
}
END_TEST

/*
 * Takes every free descriptor and lowers the limit to the highest: no
 * accept() can succeed until fds_back().  The held ones in fill[].
 */
struct fds_taken {
	struct rlimit old;
	int fill[4096], n;
};

static void fds_take(struct fds_taken *t)
{
	struct rlimit low;
	t->n = 0;
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &t->old), 0);
	/* the lowest free descriptor is made the last one */
	int top = fcntl(0, F_DUPFD, 0);
	ck_assert_int_ge(top, 0);
	close(top);
	low = t->old;
	low.rlim_cur = (rlim_t)top + 1;
	for (int fd = 0; fd <= top && t->n < 4096; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
			t->fill[t->n++] = open("/dev/null", O_RDONLY);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	ck_assert_int_lt(open("/dev/null", O_RDONLY), 0);
}

static void fds_back(struct fds_taken *t)
{
	for (int i = 0; i < t->n; i++)
		close(t->fill[i]);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &t->old), 0);
}

/*
 * Out of descriptors: accept() fails; the listener pauses (one error
 * counted, however long the connection waits), then takes the connection
 * once descriptors are back.
 */
START_TEST(accept_error_pauses)
{
	struct fds_taken t;
	start(8, 10000);
	int c = conn_open();
	fds_take(&t);
	pump_for(300);
	ck_assert_uint_eq(st.accept_errors, 1);
	ck_assert_uint_eq(httpd_connections(d), 0);
	fds_back(&t);
	wait_conns(1);		/* after HTTPD_ACCEPT_PAUSE_MS */
	ck_assert_uint_eq(st.accept_errors, 1);
	close(c);
	stop();
}
END_TEST

/*
 * libevent's own lines go through the rate-limited log: a listener with
 * no error callback out of descriptors, which libevent retries on every
 * turn of the loop, logging "Error from accept() call" each time, logs
 * LOG_RL_BURST lines, not thousands.
 */
static void on_accepted(struct evconnlistener *l, evutil_socket_t fd,
			struct sockaddr *sa, int len, void *arg)
{
	close(fd);
}

START_TEST(libevent_lines_limited)
{
	char path[] = "/tmp/test_httpd_log_XXXXXX";
	struct fds_taken t;
	log_take_libevent();
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	port = free_port();
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct evconnlistener *l = evconnlistener_new_bind(base, on_accepted, NULL,
		LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 16, (struct sockaddr *)&a, sizeof(a));
	ck_assert_ptr_nonnull(l);
	int logfd = mkstemp(path);
	ck_assert_int_ge(logfd, 0);
	int saved = dup(2);
	ck_assert_int_ge(saved, 0);
	int c = conn_open();
	fds_take(&t);
	dup2(logfd, 2);
	struct timeval spin = { 0, 300000 };
	event_base_loopexit(base, &spin);
	event_base_dispatch(base);	/* the listener spins: always readable */
	log_rl_flush(1);		/* the count of the lines held back */
	dup2(saved, 2);
	fds_back(&t);
	FILE *fp = fdopen(logfd, "r");
	ck_assert_ptr_nonnull(fp);
	rewind(fp);
	char line[512];
	unsigned lines = 0, accept_lines = 0;
	unsigned long held = 0;
	while (fgets(line, sizeof(line), fp)) {
		lines++;
		if (strstr(line, "Error from accept() call"))
			accept_lines++;
		const char *at = strstr(line, "]: ");
		if (at && strstr(line, "similar messages suppressed (\"libevent: %s\")"))
			held = strtoul(at + 3, NULL, 10);
	}
	fclose(fp);
	unlink(path);
	/* the first lines, then one count line for the thousands held back */
	ck_assert_msg(accept_lines == LOG_RL_BURST && lines == LOG_RL_BURST + 1 && held > 100,
		      "%u lines, %u of the accept error, %lu held back", lines,
		      accept_lines, held);
	close(saved);
	close(c);
	evconnlistener_free(l);
	event_base_free(base);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("httpd");
	TCase *tc = tcase_create("httpd");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, cap_closes_the_longest_waiting);
	tcase_add_test(tc, deadline_not_stretched);
	tcase_add_test(tc, accept_error_pauses);
	tcase_add_test(tc, libevent_lines_limited);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
