/*
 * systemd's service notifications (sd_notify(3)) for Type=notify: READY=1
 * once, when the subnet is first up (MASTER) or another SM is found in
 * charge (STANDBY); a STATUS= line at every state change and heavy sweep
 * (what `systemctl status ibsmd` shows); WATCHDOG=1 from the event loop
 * at half the WatchdogSec= interval, so a loop that stops turning is
 * killed and restarted; STOPPING=1 at SIGTERM.  All of it does nothing
 * when NOTIFY_SOCKET is unset (not started by systemd).  No state of its
 * own: the caller keeps whether READY=1 went out, and the timer.
 */
#ifndef IBSMD_SDNOTIFY_H
#define IBSMD_SDNOTIFY_H

#include <stdint.h>

#include <event2/event.h>

/*
 * STATUS=status, with READY=1 too when ready_sent points to 0 (then set
 * to 1 once sent); NULL: not a ready state.
 */
void sdn_status(int *ready_sent, const char *status);
/* STOPPING=1. */
void sdn_stopping(void);
/*
 * Starts the WATCHDOG=1 timer on base when systemd asks for one
 * (sd_watchdog_enabled): *ev is the timer (the caller frees it), NULL if
 * none was asked for.  Returns 0, or -1 on ENOMEM.
 */
int sdn_watchdog_start(struct event_base *base, struct event **ev);

struct sweep_summary;
/*
 * The STATUS= line for state what ("MASTER", "STANDBY", "NOTACTIVE"): as
 * MASTER the heavy sweep s just done, with its time; READY=1 the first time.
 */
void sdn_state(int *ready_sent, const char *what, uint32_t heavy_sweeps,
	       const struct sweep_summary *s);

#endif
