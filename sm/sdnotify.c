/*
 * systemd notifications (see sdnotify.h).
 */
#include <stdio.h>

#include <systemd/sd-daemon.h>

#include "sm/base/log.h"
#include "sm/sdnotify.h"

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
