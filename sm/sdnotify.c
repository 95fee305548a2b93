/*
 * systemd notifications (see sdnotify.h).
 */
#include <stdio.h>
#include <time.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "sm/base/log.h"
#include "sm/sdnotify.h"
#include "sm/daemon.h"

void sdn_status(int *ready_sent, const char *status)
{
	char msg[512];
	int with_ready = ready_sent && !*ready_sent;

	snprintf(msg, sizeof(msg), "%sSTATUS=%s", with_ready ? "READY=1\n" : "", status);
	if (sd_notify(0, msg) > 0 && with_ready)
		*ready_sent = 1;
}

void sdn_stopping(void)
{
	sd_notify(0, "STOPPING=1\nSTATUS=stopping");
}

static void on_watchdog(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	sd_notify(0, "WATCHDOG=1");
}

int sdn_watchdog_start(struct event_base *base, struct event **ev)
{
	uint64_t usec = 0;

	*ev = NULL;
	if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0)
		return 0;
	*ev = event_new(base, -1, EV_PERSIST, on_watchdog, NULL);
	if (!*ev)
		return -1;
	struct timeval tv = { (time_t)(usec / 2 / 1000000), (suseconds_t)(usec / 2 % 1000000) };
	event_add(*ev, &tv);
	sd_notify(0, "WATCHDOG=1");
	log_info("systemd watchdog: WATCHDOG=1 every %llu ms",
		 (unsigned long long)(usec / 2 / 1000));
	return 0;
}

/*
 * systemd: READY=1 the first time, and a STATUS= line (sm/sdnotify.h):
 * the state, and as MASTER the heavy sweep just done, with its time.
 */
void sdn_state(int *ready_sent, const char *what, uint32_t heavy_sweeps,
	       const struct sweep_summary *s)
{
	char st[384], when[32];
	time_t now = time(NULL);
	struct tm tm;

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime_r(&now, &tm));
	if (strcmp(what, "MASTER") == 0 && s->valid)
		snprintf(st, sizeof(st), "MASTER: heavy sweep %u at %s in %llu ms, %u switches, %u CAs, %u LIDs, routing %s%s",
			 heavy_sweeps, when, (unsigned long long)s->sweep_ms,
			 s->switches, s->cas, s->lids, s->routing ? s->routing : "none",
			 s->prog.failed ? " (some writes failed)" : "");
	else
		snprintf(st, sizeof(st), "%s since %s, %u heavy sweeps", what, when,
			 heavy_sweeps);
	sdn_status(ready_sent, st);
}
