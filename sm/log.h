#ifndef IBSMD_LOG_H
#define IBSMD_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_NOTICE, LOG_INFO, LOG_DEBUG };

void log_set_level(int level);
/* The name in front of each line (default "ibsmd"); a static string. */
void log_set_ident(const char *ident);
int log_get_level(void);
/* Returns the level for a name ("error", "warn", ...) or -1. */
int log_level_parse(const char *name);
const char *log_level_name(int level);
void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...)    log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...)   log_msg(LOG_WARN, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)   log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)  log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
