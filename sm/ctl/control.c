/*
 * The control socket's server (the daemon's side): an evconnlistener on an
 * AF_UNIX stream socket, one bufferevent per client, one JSON request per
 * line, one JSON reply per request (protocol: ctlproto.h).  ibsmctl's
 * client is ctlclient.c, its text rendering ctlrender.c.
 *
 * No client can disturb the daemon or lock the operator out:
 * - a request line is at most CONTROL_MAX_LINE bytes (the rest of a longer
 *   one is discarded and answered with an error); garbage gets an error;
 * - replies a client does not read stop its requests being read once more
 *   than OUT_HIGH bytes are queued (so at most OUT_HIGH plus one reply is
 *   held for it), and the client is dropped when none of its output could
 *   be written for the idle timeout (bufferevent write timeout);
 * - a client is dropped after the idle timeout (CONTROL_IDLE_MS) without a
 *   complete request, unless it waits for a deferred reply;
 * - with CONTROL_MAX_CLIENTS connected, a new client takes the place of
 *   one that hung up, else of the oldest one that never sent a complete
 *   request and sends nothing, else of the one whose last complete
 *   request is oldest, of those that wait for no deferred reply
 *   (eviction_victim); only when all of them wait is the new one refused.
 *   The clients list is kept in the order of the last complete request
 *   (of the connection for those that sent none);
 * - accept() failing (out of descriptors or memory: any error libevent
 *   does not retry) pauses the listener for ACCEPT_PAUSE_MS rather than
 *   spinning on it; counted (control_accept_errors), logged rate-limited.
 */
#include "sm/ctl/control.h"
#include "sm/base/log.h"

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#define OUT_HIGH	(64 * 1024)	/* queued output that pauses reading */
#define LISTEN_BACKLOG	CONTROL_MAX_CLIENTS
#define ACCEPT_PAUSE_MS	1000	/* after a failed accept() */

struct client {
	TAILQ_ENTRY(client) entry;
	struct control *ctl;
	struct bufferevent *bev;
	struct event *idle;	/* idle timeout: no complete request */
	int requested;		/* has sent a complete request line */
	int discarding;		/* skipping the rest of an over-long line */
	int paused;		/* output above OUT_HIGH: not reading */
	int closing;		/* peer sent EOF: free once output is drained */
	uint64_t pending;	/* a deferred reply owed (control_defer), or 0:
				 * no further request is read until it is sent */
};
TAILQ_HEAD(client_list, client);

struct control {
	struct event_base *base;
	struct evconnlistener *listener;
	struct event *resume;	/* re-enables accept after EMFILE & co */
	control_handler handler;
	void *ctx;
	struct client_list clients;
	size_t nclients;
	struct client *current;	/* whose request the handler is running */
	int idle_ms;		/* CONTROL_IDLE_MS unless a test sets it */
	uint64_t accept_errors;
	uint64_t next_id;	/* deferred replies' ids */
	dev_t dev;
	ino_t ino;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

static void process_input(struct client *);

/* ---------------------------------------------------------------- replies */

/* {"ok":false,"error":msg}; bytes that are not UTF-8 become '?'. */
static json_t *error_reply(const char *msg)
{
	json_t *s = json_string(msg);
	if (s == NULL) {
		char clean[512];
		size_t i;
		for (i = 0; msg[i] != '\0' && i < sizeof(clean) - 1; i++)
			clean[i] = (unsigned char)msg[i] < 0x80 ? msg[i] : '?';
		clean[i] = '\0';
		s = json_string(clean);
	}
	return json_pack("{s:b,s:o*}", "ok", 0, "error", s);
}

static void send_reply(struct client *cl, json_t *reply)
{
	struct evbuffer *out = bufferevent_get_output(cl->bev);
	char *text = reply ? json_dumps(reply, JSON_COMPACT) : NULL;

	if (text == NULL) {
		json_t *oom = error_reply("out of memory formatting the reply");
		text = oom ? json_dumps(oom, JSON_COMPACT) : NULL;
		json_decref(oom);
	}
	if (text == NULL || evbuffer_add(out, text, strlen(text)) == -1 ||
	    evbuffer_add(out, "\n", 1) == -1)
		log_err("control: cannot queue a reply");
	free(text);
}

static void send_error(struct client *cl, const char *msg)
{
	json_t *reply = error_reply(msg);
	send_reply(cl, reply);
	json_decref(reply);
}

/* --------------------------------------------------------------- requests */

/* Checks the request's shape: an object with a non-empty "cmd" string. */
static int check_request(json_t *req, const char **cmd, char *err, size_t errlen)
{
	if (!json_is_object(req)) {
		snprintf(err, errlen, "request is not a JSON object");
		return -1;
	}
	json_t *c = json_object_get(req, "cmd");
	if (!json_is_string(c) || json_string_length(c) == 0) {
		snprintf(err, errlen, "request has no \"cmd\" string");
		return -1;
	}
	*cmd = json_string_value(c);
	return 0;
}

/* Runs the handler; returns the full reply or NULL with *err. */
static json_t *run_handler(struct control *c, const char *cmd, json_t *req,
    char *err, size_t errlen)
{
	err[0] = '\0';
	json_t *res = c->handler(c->ctx, cmd, req, err, errlen);
	if (res == NULL) {
		if (err[0] == '\0')
			snprintf(err, errlen, "command \"%s\" failed", cmd);
		return NULL;
	}
	if (!json_is_object(res)) {
		log_err("control: handler for \"%s\" returned a non-object",
		    cmd);
		json_decref(res);
		snprintf(err, errlen, "command \"%s\": internal error",
		    cmd);
		return NULL;
	}
	json_t *reply = json_object();
	if (reply == NULL || json_object_set_new(reply, "ok", json_true()) ||
	    json_object_update(reply, res) ||
	    (!json_is_false(json_object_get(reply, "ok")) &&
	    json_object_set_new(reply, "ok", json_true()))) {
		json_decref(reply);
		json_decref(res);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	json_decref(res);
	return reply;
}

static json_t *dispatch(struct control *c, const char *line, size_t len,
    char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *req = json_loadb(line, len, 0, &jerr);
	if (req == NULL) {
		snprintf(err, errlen, "invalid JSON at column %d: %s",
		    jerr.column, jerr.text);
		return NULL;
	}
	const char *cmd;
	json_t *reply = NULL;
	if (check_request(req, &cmd, err, errlen) == 0)
		reply = run_handler(c, cmd, req, err, errlen);
	json_decref(req);
	return reply;
}

static int blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}

static void handle_line(struct client *cl, const char *line, size_t len)
{
	char err[512];

	if (blank(line, len))
		return;
	cl->ctl->current = cl;
	json_t *reply = dispatch(cl->ctl, line, len, err, sizeof(err));
	cl->ctl->current = NULL;
	if (cl->pending) {	/* the handler deferred its reply */
		json_decref(reply);
		return;
	}
	if (reply == NULL) {
		/* debug: any client can send garbage, the log is not its */
		log_debug("control: request rejected: %s", err);
		send_error(cl, err);
		return;
	}
	send_reply(cl, reply);
	json_decref(reply);
}

/* ---------------------------------------------------------------- clients */

static void client_free(struct client *cl)
{
	struct control *c = cl->ctl;

	TAILQ_REMOVE(&c->clients, cl, entry);
	c->nclients--;
	event_free(cl->idle);
	bufferevent_free(cl->bev);
	free(cl);
}

static void arm_idle(struct client *cl)
{
	struct timeval tv = { cl->ctl->idle_ms / 1000,
			      (cl->ctl->idle_ms % 1000) * 1000 };
	evtimer_add(cl->idle, &tv);
}

/* A complete request: the client moves to the end of the eviction order. */
static void touch(struct client *cl)
{
	struct control *c = cl->ctl;

	cl->requested = 1;
	TAILQ_REMOVE(&c->clients, cl, entry);
	TAILQ_INSERT_TAIL(&c->clients, cl, entry);
	arm_idle(cl);
}

/* Tells a client why it goes (best effort, never blocking). */
static void say_goodbye(evutil_socket_t fd, const char *why)
{
	json_t *reply = error_reply(why);
	char *text = reply ? json_dumps(reply, JSON_COMPACT) : NULL;

	if (text != NULL) {
		size_t n = strlen(text);
		text[n] = '\n';	/* overwrites the NUL; length is n + 1 */
		(void)send(fd, text, n + 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	free(text);
	json_decref(reply);
}

/*
 * The idle timeout: a client waiting for a deferred reply, or one whose
 * replies are still going out (the write timeout watches those), stays.
 */
static void idle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct client *cl = arg;

	if (cl->pending ||
	    evbuffer_get_length(bufferevent_get_output(cl->bev)) > 0) {
		arm_idle(cl);
		return;
	}
	log_info("control: client sent no complete request for %d ms, "
	    "dropped", cl->ctl->idle_ms);
	say_goodbye(bufferevent_getfd(cl->bev), "idle timeout");
	client_free(cl);
}

static void process_input(struct client *cl)
{
	struct evbuffer *in = bufferevent_get_input(cl->bev);
	struct evbuffer *out = bufferevent_get_output(cl->bev);
	char err[64];

	snprintf(err, sizeof(err), "request line longer than %d bytes",
	    CONTROL_MAX_LINE);
	while (!cl->paused && !cl->pending) {
		size_t eol_len = 0;
		struct evbuffer_ptr eol = evbuffer_search_eol(in, NULL,
		    &eol_len, EVBUFFER_EOL_LF);
		size_t avail = evbuffer_get_length(in);

		if (eol.pos < 0) {
			/* No full line yet: wait, unless it is already too long. */
			if (!cl->discarding && avail > CONTROL_MAX_LINE) {
				send_error(cl, err);
				cl->discarding = 1;
			}
			if (cl->discarding)
				evbuffer_drain(in, avail);
			return;
		}
		size_t len = (size_t)eol.pos;
		touch(cl);
		if (cl->discarding)
			cl->discarding = 0;	/* tail of a line answered above */
		else if (len > CONTROL_MAX_LINE)
			send_error(cl, err);
		else if (len > 0) {
			const char *line = (const char *)evbuffer_pullup(in, len);
			if (line != NULL)
				handle_line(cl, line, len);
			else
				send_error(cl, "out of memory");
		}
		evbuffer_drain(in, len + eol_len);

		if (cl->pending) {
			/* replies in order: nothing more until it is sent */
			bufferevent_disable(cl->bev, EV_READ);
			return;
		}
		if (evbuffer_get_length(out) > OUT_HIGH) {
			/* The client is not reading its replies: stop reading. */
			cl->paused = 1;
			bufferevent_disable(cl->bev, EV_READ);
		}
	}
}

static void read_cb(struct bufferevent *bev, void *arg)
{
	process_input(arg);
}

/* Called when the output buffer has drained. */
static void write_cb(struct bufferevent *bev, void *arg)
{
	struct client *cl = arg;

	if (cl->closing) {
		client_free(cl);
		return;
	}
	if (cl->paused) {
		cl->paused = 0;
		if (!cl->pending)
			bufferevent_enable(cl->bev, EV_READ);
		process_input(cl);
	}
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct client *cl = arg;

	if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR) &&
	    (evbuffer_get_length(bufferevent_get_output(bev)) > 0 ||
	    cl->pending)) {
		/* Half-closed: deliver the replies, then let go. */
		cl->closing = 1;
		bufferevent_disable(bev, EV_READ);
		return;
	}
	if (what & BEV_EVENT_TIMEOUT)
		log_info("control: client read none of its replies for %d ms, "
		    "dropped", cl->ctl->idle_ms);
	else if (what & BEV_EVENT_ERROR)
		log_debug("control: client error: %s",
		    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
	if (evbuffer_get_length(bufferevent_get_input(bev)) > 0)
		log_debug("control: client left in the middle of a request");
	client_free(cl);
}

enum peer { PEER_GONE, PEER_SENDING, PEER_SILENT };

/*
 * A client as its socket shows it before the loop has read it: the peer
 * closed its end (POLLHUP: nobody can read a reply), or has bytes on the
 * way, or neither.
 */
static enum peer peek_peer(struct client *cl)
{
	struct pollfd p = { .fd = bufferevent_getfd(cl->bev), .events = POLLIN };

	if (poll(&p, 1, 0) == -1 || (p.revents & (POLLHUP | POLLERR | POLLNVAL)))
		return PEER_GONE;
	if ((p.revents & POLLIN) ||
	    evbuffer_get_length(bufferevent_get_input(cl->bev)) > 0)
		return PEER_SENDING;
	return PEER_SILENT;
}

/*
 * The client to drop for a new one, of those not owed a reply, in this
 * order: one that has hung up (its EOF not read yet: a flood of short
 * connections fills the table faster than the loop reads them); the one
 * connected longest ago of those that never sent a complete request and
 * have nothing on the way (an operator's ibsmctl that connected a moment
 * ago has its request waiting); else the one whose last complete request
 * is oldest.  *gone tells the first case: nobody to say goodbye to.
 */
static struct client *eviction_victim(struct control *c, int *gone)
{
	struct client *cl, *silent = NULL, *oldest = NULL;

	*gone = 0;
	TAILQ_FOREACH(cl, &c->clients, entry) {
		if (cl->pending)
			continue;
		enum peer p = peek_peer(cl);
		if (p == PEER_GONE) {
			*gone = 1;
			return cl;
		}
		if (silent == NULL && !cl->requested && p == PEER_SILENT)
			silent = cl;
		if (oldest == NULL)
			oldest = cl;
	}
	return silent != NULL ? silent : oldest;
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct control *c = arg;

	if (c->nclients >= CONTROL_MAX_CLIENTS) {
		int gone;
		struct client *victim = eviction_victim(c, &gone);
		if (victim == NULL) {
			log_warn("control: %d clients all waiting for replies, "
			    "connection refused", CONTROL_MAX_CLIENTS);
			say_goodbye(fd, "too many control clients");
			close(fd);
			return;
		}
		if (!gone) {
			log_info("control: %d clients, the longest idle one "
			    "dropped for a new one", CONTROL_MAX_CLIENTS);
			/* not into the middle of a reply it is still owed */
			if (evbuffer_get_length(bufferevent_get_output(
			    victim->bev)) == 0)
				say_goodbye(bufferevent_getfd(victim->bev),
				    "too many control clients: dropped for a "
				    "newer one");
		}
		client_free(victim);
	}
	struct client *cl = calloc(1, sizeof(*cl));
	struct bufferevent *bev = bufferevent_socket_new(c->base, fd,
	    BEV_OPT_CLOSE_ON_FREE);
	struct event *idle = cl ? evtimer_new(c->base, idle_cb, cl) : NULL;
	if (cl == NULL || bev == NULL || idle == NULL) {
		log_err("control: out of memory accepting a client");
		free(cl);
		if (idle != NULL)
			event_free(idle);
		if (bev != NULL)
			bufferevent_free(bev);
		else
			close(fd);
		return;
	}
	struct timeval wt = { c->idle_ms / 1000, (c->idle_ms % 1000) * 1000 };
	cl->ctl = c;
	cl->bev = bev;
	cl->idle = idle;
	bufferevent_setcb(bev, read_cb, write_cb, event_cb, cl);
	bufferevent_set_timeouts(bev, NULL, &wt);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	TAILQ_INSERT_TAIL(&c->clients, cl, entry);
	c->nclients++;
	arm_idle(cl);
}

static void resume_accept(evutil_socket_t fd, short what, void *arg)
{
	struct control *c = arg;

	evconnlistener_enable(c->listener);
}

static void accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct control *c = arg;
	int e = EVUTIL_SOCKET_ERROR();
	struct timeval pause = { ACCEPT_PAUSE_MS / 1000,
				 (ACCEPT_PAUSE_MS % 1000) * 1000 };

	c->accept_errors++;
	log_limited(LOG_WARN, "control socket %s: accept: %s; not accepting "
	    "for %d ms", c->path, strerror(e), ACCEPT_PAUSE_MS);
	/* the error stays (out of descriptors): the listener would spin */
	evconnlistener_disable(l);
	evtimer_add(c->resume, &pause);
}

/* ----------------------------------------------------------- the listener */

/* mkdir -p of path's directory, mode 0755. */
static int make_parent(const char *path, char *err, size_t errlen)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;
		*p = '\0';
		if (mkdir(dir, 0755) == 0) {
			(void)chmod(dir, 0755);	/* whatever the umask */
		} else if (errno != EEXIST) {
			snprintf(err, errlen, "cannot create directory %s: %s",
			    dir, strerror(errno));
			return -1;
		}
		*p = saved;
		if (saved == '\0')
			break;
	}
	if (stat(dir, &st) == -1 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is not a directory", dir);
		return -1;
	}
	return 0;
}

/* 1: something listens on sun; 0: nothing (stale file); -1: errno. */
static int probe_listener(const struct sockaddr_un *sun)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	int r = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	int e = errno;
	close(fd);
	if (r == 0 || e == EAGAIN || e == EINPROGRESS)
		return 1;	/* EAGAIN: alive, its backlog is full */
	if (e == ECONNREFUSED)
		return 0;
	errno = e;
	return -1;
}

static int bind_0660(int fd, const struct sockaddr_un *sun)
{
	mode_t old = umask(0117);
	int r = bind(fd, (const struct sockaddr *)sun, sizeof(*sun));
	int e = errno;
	umask(old);
	errno = e;
	return r;
}

/* Binds and listens on path, replacing a stale socket; returns the fd. */
static int listen_on(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;

	if (path == NULL || path[0] == '\0') {
		snprintf(err, errlen, "no control socket path");
		return -1;
	}
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "control socket path %s is longer than "
		    "%zu bytes", path, sizeof(sun.sun_path) - 1);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if (make_parent(path, err, errlen) == -1)
		return -1;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	if (bind_0660(fd, &sun) == -1) {
		if (errno != EADDRINUSE) {
			snprintf(err, errlen, "cannot bind %s: %s", path,
			    strerror(errno));
			goto fail;
		}
		if (lstat(path, &st) == -1 || !S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "%s exists and is not a socket",
			    path);
			goto fail;
		}
		switch (probe_listener(&sun)) {
		case 1:
			snprintf(err, errlen, "another daemon is already "
			    "listening on %s", path);
			goto fail;
		case -1:
			snprintf(err, errlen, "cannot probe %s: %s", path,
			    strerror(errno));
			goto fail;
		}
		log_notice("control: removing stale socket %s", path);
		if ((unlink(path) == -1 && errno != ENOENT) ||
		    bind_0660(fd, &sun) == -1) {
			snprintf(err, errlen, "cannot replace stale socket "
			    "%s: %s", path, strerror(errno));
			goto fail;
		}
	}
	if (chmod(path, 0660) == -1 || listen(fd, LISTEN_BACKLOG) == -1) {
		snprintf(err, errlen, "cannot set up %s: %s", path,
		    strerror(errno));
		unlink(path);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

static void ignore_sigpipe(void)
{
	struct sigaction sa;

	if (sigaction(SIGPIPE, NULL, &sa) == 0 &&
	    !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_IGN;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGPIPE, &sa, NULL);
	}
}

struct control *control_open(struct event_base *base, const char *path,
    control_handler h, void *ctx, char *err, size_t errlen)
{
	struct stat st;
	struct control *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	TAILQ_INIT(&c->clients);
	c->base = base;
	c->idle_ms = CONTROL_IDLE_MS;
	c->handler = h;
	c->ctx = ctx;
	int fd = listen_on(path, err, errlen);
	if (fd == -1) {
		free(c);
		return NULL;
	}
	snprintf(c->path, sizeof(c->path), "%s", path);
	if (stat(path, &st) == 0) {
		c->dev = st.st_dev;
		c->ino = st.st_ino;
	}
	c->resume = evtimer_new(base, resume_accept, c);
	c->listener = evconnlistener_new(base, accept_cb, c,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (c->resume == NULL || c->listener == NULL) {
		snprintf(err, errlen, "cannot listen on %s: out of memory",
		    path);
		if (c->listener == NULL)
			close(fd);
		control_close(c);
		return NULL;
	}
	evconnlistener_set_error_cb(c->listener, accept_error_cb);
	ignore_sigpipe();
	return c;
}

void control_close(struct control *c)
{
	struct client *cl;
	struct stat st;

	if (c == NULL)
		return;
	while ((cl = TAILQ_FIRST(&c->clients)) != NULL)
		client_free(cl);
	if (c->listener != NULL)
		evconnlistener_free(c->listener);
	if (c->resume != NULL)
		event_free(c->resume);
	/* Unlink only our own socket, not a successor's. */
	if (lstat(c->path, &st) == 0 && st.st_dev == c->dev &&
	    st.st_ino == c->ino)
		unlink(c->path);
	free(c);
}

size_t control_client_count(const struct control *c)
{
	return c->nclients;
}

uint64_t control_accept_errors(const struct control *c)
{
	return c->accept_errors;
}

void control_set_idle_ms(struct control *c, int ms)
{
	c->idle_ms = ms > 0 ? ms : CONTROL_IDLE_MS;
}

int control_set_group(struct control *c, long long gid, char *err,
    size_t errlen)
{
	struct stat st;

	if (gid < 0)
		return 0;
	/* the socket we bound, not whatever took its name since */
	if (lstat(c->path, &st) == -1 || st.st_dev != c->dev ||
	    st.st_ino != c->ino) {
		snprintf(err, errlen, "%s is no longer our socket", c->path);
		return -1;
	}
	if (lchown(c->path, (uid_t)-1, (gid_t)gid) == -1 ||
	    chmod(c->path, 0660) == -1) {
		snprintf(err, errlen, "cannot give %s to group %lld: %s",
		    c->path, gid, strerror(errno));
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------ deferred replies */

uint64_t control_defer(struct control *c)
{
	struct client *cl = c->current;

	if (cl == NULL || cl->pending)
		return 0;
	cl->pending = ++c->next_id;
	return cl->pending;
}

void control_reply(struct control *c, uint64_t id, json_t *res,
    const char *err)
{
	struct client *cl;

	TAILQ_FOREACH(cl, &c->clients, entry)
		if (cl->pending == id)
			break;
	if (cl == NULL || id == 0) {	/* the client left: nobody to tell */
		json_decref(res);
		return;
	}
	cl->pending = 0;
	char msg[512];
	json_t *reply = NULL;
	if (res != NULL) {
		json_t *r = json_object();
		if (r != NULL && json_is_object(res) &&
		    json_object_set_new(r, "ok", json_true()) == 0 &&
		    json_object_update(r, res) == 0)
			reply = r;
		else
			json_decref(r);
		json_decref(res);
		if (reply == NULL)
			err = "out of memory";
	}
	if (reply != NULL) {
		send_reply(cl, reply);
		json_decref(reply);
	} else {
		snprintf(msg, sizeof(msg), "%s", err ? err : "command failed");
		send_error(cl, msg);
	}
	if (cl->closing) {
		/* half-closed: write_cb frees it once the reply is out */
		return;
	}
	bufferevent_enable(cl->bev, EV_READ);
	process_input(cl);
}

/* Wall-clock seconds as ISO 8601 in UTC ("2026-11-24T06:39:21Z"). */
json_t *control_guid_json(uint64_t guid)
{
	char b[24];
	snprintf(b, sizeof(b), "0x%016llx", (unsigned long long)guid);
	return json_string(b);
}

json_t *control_time_json(uint64_t t)
{
	char buf[32];
	time_t tt = (time_t)t;
	struct tm tm;
	if (!t || !gmtime_r(&tt, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm))
		return json_null();
	return json_string(buf);
}
