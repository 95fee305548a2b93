#ifndef IBSMD_LOG_H
#define IBSMD_LOG_H

/*
 * Lines on stderr.  Started by systemd (JOURNAL_STREAM names stderr's
 * device:inode), each line starts with a syslog priority "<N>" and no
 * date, journald adds its own; otherwise with the local date and time,
 * ISO 8601 with milliseconds and the zone's offset.  Then
 * "IDENT[level]: text".  With a log file (ibsmd -f), the lines go there
 * instead of stderr, always with the date.
 */
#include <stddef.h>

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_NOTICE, LOG_INFO, LOG_DEBUG };

void log_set_level(int level);
/* The name in front of each line (default "ibsmd"); a static string. */
void log_set_ident(const char *ident);
int log_get_level(void);
/* Returns the level for a name ("error", "warn", ...) or -1. */
int log_level_parse(const char *name);
/*
 * Looks at JOURNAL_STREAM and stderr again (done once by the first line
 * anyway); returns 1 when lines get "<N>" prefixes.
 */
int log_detect_stream(void);
/*
 * ibsmd -f FILE: the lines from now on appended to FILE (created 0640,
 * close-on-exec) instead of stderr.  0, or -1 with the reason in err.
 */
int log_open_file(const char *path, char *err, size_t errlen);
/*
 * The log file opened again by its name (after logrotate moved it: SIGUSR1,
 * SIGHUP); a line written meanwhile goes to the old file or the new one,
 * never nowhere.  On failure the old file stays in use: -1 with the reason
 * in err.  0, also without a log file.
 */
int log_reopen_file(char *err, size_t errlen);
void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...)    log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...)   log_msg(LOG_WARN, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)   log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)  log_msg(LOG_DEBUG, __VA_ARGS__)

/*
 * Rate limiting, per call site: at most burst lines in interval_ms; the
 * rest is counted, and once the interval is over one line says
 * "N similar messages suppressed" (at the next line of the site, or at
 * log_rl_flush(), which the daemon calls every second and at exit).  burst and
 * interval_ms 0 take LOG_RL_BURST and LOG_RL_INTERVAL_MS; the other
 * fields are the limiter's own (zero to start).
 */
#define LOG_RL_BURST		5
#define LOG_RL_INTERVAL_MS	5000

struct log_rl {
	unsigned burst;
	unsigned interval_ms;
	/* the limiter's */
	const char *fmt;	/* the site's format: names it in the count line */
	int level;
	unsigned lines;		/* logged in this window */
	unsigned long held;	/* suppressed in this window */
	unsigned long long start_ms;	/* the window's start, 0: none open */
	struct log_rl *next;	/* every site that logged, for the flush */
	int listed;
};

/* Returns 1 when the line was logged, 0 when suppressed (or below the level). */
int log_rl_msg(struct log_rl *rl, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * The count lines of windows over by now (all: of every window, at
 * exit); returns how many were written.
 */
int log_rl_flush(int all);

/*
 * libevent's own messages (a failed accept(), a failed epoll_ctl ...) go
 * through this log, rate-limited as one site, instead of libevent's
 * default of one unlimited line each on stderr.
 */
void log_take_libevent(void);

/* A rate-limited line with the defaults, its own limiter per call site. */
#define log_limited(level, ...) __extension__ ({			\
	static struct log_rl log_rl_site_;				\
	log_rl_msg(&log_rl_site_, (level), __VA_ARGS__);		\
})
/* The same with a burst and an interval of the site's own. */
#define log_limited_by(burst_, ms_, level, ...) __extension__ ({	\
	static struct log_rl log_rl_site_ = { .burst = (burst_),	\
					      .interval_ms = (ms_) };	\
	log_rl_msg(&log_rl_site_, (level), __VA_ARGS__);		\
})

#endif
