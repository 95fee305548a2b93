/* The log (see log.h). */
#define _GNU_SOURCE	/* dup3() */
#include "sm/base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

/*
 * The process-wide state: the log threshold, the program's name, the
 * kind of stream (-1 not looked at yet, 0 dates, 1 journald priorities)
 * the rate-limited sites that logged (under rl_lock: the routing
 * thread logs too), and the log file of -f, its name and descriptor (-1:
 * none; set once before the threads start, then only replaced in place
 * by dup3(), so that no lock is needed to write).
 */
static int log_threshold = LOG_NOTICE;
static const char *log_ident = "ibsmd";
static int log_journal = -1;
static pthread_mutex_t rl_lock = PTHREAD_MUTEX_INITIALIZER;
static struct log_rl *rl_sites;
static int log_fd = -1;
static char log_path[PATH_MAX];

/* rw-r-----: the log may name hosts and keys' faults; adm reads it */
#define LOG_FILE_MODE 0640

void log_set_ident(const char *ident)
{
	log_ident = ident;
}

static const char *const level_names[] = {
	"error", "warn", "notice", "info", "debug",
};

void log_set_level(int level)
{
	log_threshold = level;
}

int log_get_level(void)
{
	return log_threshold;
}

int log_level_parse(const char *name)
{
	for (int i = 0; i <= LOG_DEBUG; i++)
		if (!strcasecmp(name, level_names[i]))
			return i;
	if (!strcasecmp(name, "warning"))
		return LOG_WARN;
	return -1;
}

/* The syslog priority of a level: 3 (error) ... 7 (debug). */
static int log_level_priority(int level)
{
	/* syslog: 3 err, 4 warning, 5 notice, 6 info, 7 debug */
	if (level < LOG_ERROR)
		level = LOG_ERROR;
	if (level > LOG_DEBUG)
		level = LOG_DEBUG;
	return 3 + level;
}

/*
 * systemd sets JOURNAL_STREAM to "DEV:INODE" of the stream it connected
 * stderr to; a child whose stderr was redirected elsewhere inherits the
 * variable, hence the comparison (sd-journal's documented check).
 */
int log_detect_stream(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char end;
	log_journal = js && sscanf(js, "%llu:%llu%c", &dev, &ino, &end) == 2 &&
		      fstat(STDERR_FILENO, &st) == 0 &&
		      (unsigned long long)st.st_dev == dev &&
		      (unsigned long long)st.st_ino == ino;
	return log_journal;
}

/* "2026-11-24T06:39:21.123+01:00", local time */
static void iso_stamp(char *out, size_t n)
{
	struct timespec ts;
	struct tm tm;
	char date[24], zone[8];
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	strftime(zone, sizeof(zone), "%z", &tm);	/* +0100 */
	snprintf(out, n, "%s.%03ld%.3s:%.2s", date, ts.tv_nsec / 1000000, zone,
		 zone + 3);
}

static int open_log(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, LOG_FILE_MODE);
	if (fd < 0)
		snprintf(err, errlen, "log file %s: %s", path, strerror(errno));
	return fd;
}

int log_open_file(const char *path, char *err, size_t errlen)
{
	if (strlen(path) >= sizeof(log_path)) {
		snprintf(err, errlen, "log file %.64s...: name too long", path);
		return -1;
	}
	int fd = open_log(path, err, errlen);
	if (fd < 0)
		return -1;
	if (log_fd >= 0)
		close(log_fd);
	log_fd = fd;
	snprintf(log_path, sizeof(log_path), "%s", path);
	return 0;
}

int log_reopen_file(char *err, size_t errlen)
{
	if (log_fd < 0)
		return 0;
	int fd = open_log(log_path, err, errlen);
	if (fd < 0)
		return -1;
	/* the same number, now the new file: a writer uses one or the other */
	int rc = dup3(fd, log_fd, O_CLOEXEC);
	if (rc < 0)
		snprintf(err, errlen, "log file %s: %s", log_path, strerror(errno));
	close(fd);
	return rc < 0 ? -1 : 0;
}

/* One line to the log file, in one write(): O_APPEND keeps lines whole. */
static void file_line(int level, const char *line)
{
	char stamp[64], buf[1200];
	iso_stamp(stamp, sizeof(stamp));
	int n = snprintf(buf, sizeof(buf), "%s %s[%s]: %s\n", stamp, log_ident,
			 level_names[level], line);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf)) {
		n = sizeof(buf) - 1;
		buf[n - 1] = '\n';
	}
	ssize_t w = write(log_fd, buf, (size_t)n);
	(void)w;	/* a full disk: nowhere to say so */
}

static void vlog(int level, const char *fmt, va_list ap)
{
	char line[1024];
	vsnprintf(line, sizeof(line), fmt, ap);
	if (log_fd >= 0) {
		file_line(level, line);
		return;
	}
	if (log_journal < 0)
		log_detect_stream();
	if (log_journal) {
		fprintf(stderr, "<%d>%s[%s]: %s\n", log_level_priority(level),
			log_ident, level_names[level], line);
		return;
	}
	char stamp[64];
	iso_stamp(stamp, sizeof(stamp));
	fprintf(stderr, "%s %s[%s]: %s\n", stamp, log_ident, level_names[level],
		line);
}

void log_msg(int level, const char *fmt, ...)
{
	if (level > log_threshold)
		return;
	va_list ap;
	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

/* ---- rate limiting ---- */

static unsigned long long mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	/* + 1: 0 means "no window open" */
	return (unsigned long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 1;
}

/* Says what a closed window held back; rl_lock held. */
static void rl_close(struct log_rl *rl)
{
	if (rl->held)
		log_msg(rl->level, "%lu similar messages suppressed (\"%.60s\")",
			rl->held, rl->fmt);
	rl->held = 0;
	rl->lines = 0;
	rl->start_ms = 0;
}

static unsigned rl_interval(const struct log_rl *rl)
{
	return rl->interval_ms ? rl->interval_ms : LOG_RL_INTERVAL_MS;
}

int log_rl_msg(struct log_rl *rl, int level, const char *fmt, ...)
{
	if (level > log_threshold)
		return 0;
	unsigned long long now = mono_ms();
	pthread_mutex_lock(&rl_lock);
	if (!rl->listed) {
		rl->listed = 1;
		rl->next = rl_sites;
		rl_sites = rl;
	}
	rl->fmt = fmt;
	rl->level = level;
	if (rl->start_ms && now - rl->start_ms >= rl_interval(rl))
		rl_close(rl);
	if (!rl->start_ms)
		rl->start_ms = now;
	int ok = rl->lines < (rl->burst ? rl->burst : LOG_RL_BURST);
	if (ok)
		rl->lines++;
	else
		rl->held++;
	pthread_mutex_unlock(&rl_lock);
	if (ok) {
		va_list ap;
		va_start(ap, fmt);
		vlog(level, fmt, ap);
		va_end(ap);
	}
	return ok;
}

int log_rl_flush(int all)
{
	unsigned long long now = mono_ms();
	int n = 0;
	pthread_mutex_lock(&rl_lock);
	for (struct log_rl *rl = rl_sites; rl; rl = rl->next)
		if (rl->start_ms && (all || now - rl->start_ms >= rl_interval(rl))) {
			n += rl->held != 0;
			rl_close(rl);
		}
	pthread_mutex_unlock(&rl_lock);
	return n;
}

/* libevent's own lines: one rate-limited site, at the matching level. */
static void from_libevent(int severity, const char *msg)
{
	int level = severity >= EVENT_LOG_ERR ? LOG_ERROR :
		    severity == EVENT_LOG_WARN ? LOG_WARN :
		    severity == EVENT_LOG_MSG ? LOG_INFO : LOG_DEBUG;
	log_limited(level, "libevent: %s", msg);
}

void log_take_libevent(void)
{
	event_set_log_callback(from_libevent);
}
