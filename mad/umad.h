/*
 * The umad backend: a local port opened through libibumad (the kernel, or
 * ibsim under libumad2sim.so).  While answers are expected the event loop
 * reads umad itself; otherwise a watcher thread blocks in umad_poll() (the
 * umad fd under umad2sim is a fake number no poller can watch) and wakes
 * the loop through an eventfd.
 */
#ifndef IBSMD_UMAD_H
#define IBSMD_UMAD_H

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

#include "mad/transport.h"

struct umad_port_sel {
	const char *ca;		/* NULL: any */
	int port;		/* 0: any */
	uint64_t guid;		/* 0: not by GUID */
	int issm;		/* enum umad_issm */
};

/*
 * Whether the port claims CapabilityMask.IsSM.  A host tool claims it only
 * under ibsim, which delivers an unsolicited MAD (a Report) only to a
 * client that claims IsSM; it claims it through the issm device after its
 * agents are registered (SIM_SET_ISSM=1 claims it at connect time, before
 * any agent exists, and the SM's first SMInfo Get then crashes umad2sim's
 * receiver thread).
 */
enum umad_issm {
	UMAD_ISSM_CLAIM = 0,	/* an SM */
	UMAD_ISSM_NEVER,
	UMAD_ISSM_SIM_ONLY,	/* a host tool: only on ibsim's ports */
};

/*
 * Opens the port, registers agents for every class that may arrive,
 * claims IsSM as sel->issm says, starts the watcher.  Fills t (send/close/ctx and the
 * local port's facts).  Returns 0 or -1 with a message in err.
 */
int umad_transport_open(struct mad_transport *t, struct event_base *base,
			const struct umad_port_sel *sel, mad_recv_fn cb,
			void *cb_arg, char *err, size_t errlen);
/*
 * Tells the backend how to know whether answers are due (the owner's
 * transactions in flight): while they are, the loop keeps reading umad.
 * Without it the backend counts requests and answers itself.
 */
void umad_transport_set_pending(struct mad_transport *t,
				int (*pending)(void *), void *arg);
/* 1 when the port is ibsim's, under libumad2sim.so (its fds are fake). */
int umad_transport_simulated(const struct mad_transport *t);

#endif
