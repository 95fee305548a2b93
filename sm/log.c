#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* The process-wide state: the log threshold and the program's name. */
static int log_threshold = LOG_NOTICE;
static const char *log_ident = "ibsmd";

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

const char *log_level_name(int level)
{
	if (level < 0 || level > LOG_DEBUG)
		return "?";
	return level_names[level];
}

void log_msg(int level, const char *fmt, ...)
{
	if (level > log_threshold)
		return;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	localtime_r(&ts.tv_sec, &tm);
	char stamp[32];
	strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s.%03ld %s[%s]: %s\n", stamp, ts.tv_nsec / 1000000,
		log_ident, level_names[level], line);
}
