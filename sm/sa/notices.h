/*
 * The daemon's side of notices out (traps/notify.h): the notifier's life
 * in struct sm, its state file in the state directory, GID in/out of
 * service (64/65) from the CA ports a heavy sweep added or lost, and
 * ReportResps taken from the receive path's answers.
 */
#ifndef IBSMD_EVENTS_H
#define IBSMD_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "mad/transport.h"
#include "sm/base/fabric.h"

struct sm;

/*
 * Makes sm->notify (after the transport is open).  A state file that
 * cannot be read is set aside (subscriptions.corrupt.TIMESTAMP, sm/base/wfile.h)
 * and logged; the notifier
 * starts empty.  0, or -1 (no memory) with the reason in err.
 */
int notices_init(struct sm *sm, char *err, size_t errlen);
void notices_free(struct sm *sm);
/*
 * A heavy sweep configures f (LIDs assigned), replacing old (NULL: the
 * first).  becoming_master: this SM just took the subnet over; then the
 * state file is merged in and nothing is compared.  Else 65 goes out for
 * every CA port of old missing from f, and the ports f added wait for
 * notices_programmed().
 */
void notices_configured(struct sm *sm, const struct fabric *old,
			  const struct fabric *f, int becoming_master);
/*
 * A trap 128 was confirmed at switch sw_guid: before the heavy sweep has
 * discovered anything, ask the switch's ports that lead to CA ports in
 * service for their PortInfo; a port found Down sends the CA's 65 at
 * once.  The heavy sweep's comparison skips what went out early, and a
 * port the sweep finds back gets its 64.
 */
void notices_switch_changed(struct sm *sm, uint64_t sw_guid);
/* The configuration is written and active: 64 for the ports it added. */
void notices_programmed(struct sm *sm);
/*
 * The receive path's answer hook (mad/dispatch.h): ReportResps to the
 * notifier, everything else to the transaction table.
 */
int notices_answer(void *arg, const uint8_t *mad, size_t len,
		     const struct mad_addr *from, int status);

#endif
