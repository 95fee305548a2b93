/*
 * The daemon's side of repath / unpath signalling: after every reroute
 * is written, the path-record distinguisher (traps/prd.h) compares the
 * new routes with those last signalled, on a worker thread, and one round
 * of notices goes out from the loop in the mode of events.signalling
 * (traps/repath.h), through the notifier.
 */
#ifndef IBSMD_PATHS_H
#define IBSMD_PATHS_H

struct sm;

/*
 * A reroute's tables are written (heavy sweep or ibsmctl reroute): a
 * round for sm->sub's model and tables.  A round still comparing is
 * dropped; the new one compares with what was last signalled, so nothing
 * is lost.
 */
void sm_paths_rerouted(struct sm *sm);
void sm_paths_free(struct sm *sm);
/* Whether a comparison is running (its notices not sent yet). */
int sm_paths_busy(const struct sm *sm);

#endif
