/*
 * ibsmctl's side of the control socket (see ctlclient.h): one blocking
 * request and its reply line, with timeouts.  No libevent.
 */
#include "sm/ibsmctl/ctlclient.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REPLY_MAX	(1024L * 1024 * 1024)	/* largest reply accepted */

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}


static int connect_to(const char *path, int timeout_ms, char *err,
    size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };

	if (path[0] == '\0' || strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "cannot connect to %s: path empty or "
		    "too long", path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	/* Bounds connect (full backlog) and send (daemon not reading). */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		int e = errno;
		snprintf(err, errlen, "cannot connect to %s: %s%s", path,
		    strerror(e), e == ENOENT || e == ECONNREFUSED ?
		    " (is ibsmd running?)" : "");
		close(fd);
		return -1;
	}
	return fd;
}

static int send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads up to the first '\n'; returns the line (NUL-terminated), or NULL. */
static char *read_line(int fd, const char *path, int timeout_ms,
    size_t *lenp, char *err, size_t errlen)
{
	long deadline = now_ms() + timeout_ms;
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);

	while (buf != NULL) {
		char *nl = memchr(buf, '\n', len);
		if (nl != NULL) {
			*nl = '\0';
			*lenp = (size_t)(nl - buf);
			return buf;
		}
		if (len == cap) {
			char *bigger = cap < REPLY_MAX ? realloc(buf, cap * 2) :
			    NULL;
			if (bigger == NULL) {
				snprintf(err, errlen, "reply from %s too large",
				    path);
				break;
			}
			buf = bigger;
			cap *= 2;
		}
		long left = deadline - now_ms();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int r = left > 0 ? poll(&pfd, 1, (int)left) : 0;
		if (r == -1 && errno == EINTR)
			continue;
		if (r == 0) {
			snprintf(err, errlen, "no reply from %s within %g s",
			    path, timeout_ms / 1000.0);
			break;
		}
		ssize_t n = r == -1 ? -1 : read(fd, buf + len, cap - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "%s: %s before a reply", path,
			    n == 0 ? "connection closed" : strerror(errno));
			break;
		}
		len += (size_t)n;
	}
	if (buf == NULL)
		snprintf(err, errlen, "out of memory");
	free(buf);
	return NULL;
}

json_t *control_call(const char *path, const json_t *request, int timeout_ms,
    char *err, size_t errlen)
{
	char *req = json_dumps(request, JSON_COMPACT);
	if (req == NULL) {
		snprintf(err, errlen, "the request is not UTF-8 (or out of memory)");
		return NULL;
	}
	if (strlen(req) > CONTROL_MAX_LINE) {
		snprintf(err, errlen, "request longer than %d bytes",
		    CONTROL_MAX_LINE);
		free(req);
		return NULL;
	}
	int fd = connect_to(path, timeout_ms, err, errlen);
	if (fd == -1) {
		free(req);
		return NULL;
	}
	size_t reqlen = strlen(req);
	req[reqlen] = '\n';	/* the NUL becomes the line's end */
	int sent = send_all(fd, req, reqlen + 1);
	free(req);
	if (sent == -1) {
		snprintf(err, errlen, "cannot send to %s: %s", path,
		    errno == EAGAIN ? "timed out" : strerror(errno));
		close(fd);
		return NULL;
	}
	size_t len = 0;
	char *line = read_line(fd, path, timeout_ms, &len, err, errlen);
	close(fd);
	if (line == NULL)
		return NULL;
	json_error_t jerr;
	json_t *reply = json_loadb(line, len, 0, &jerr);
	free(line);
	if (reply == NULL || !json_is_boolean(json_object_get(reply, "ok"))) {
		snprintf(err, errlen, "malformed reply from %s: %s", path,
		    reply == NULL ? jerr.text : "no \"ok\" member");
		json_decref(reply);
		return NULL;
	}
	return reply;
}
