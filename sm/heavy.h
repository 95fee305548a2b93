/*
 * The heavy sweep, started by the sweeper (sm/sweeper.h) and configured
 * by the election's verdict (sm/smstate.h): the functions the daemon
 * gives them as hooks (sm/daemon.c).
 */
#ifndef IBSMD_HEAVY_H
#define IBSMD_HEAVY_H

#include <stdint.h>

struct sm;
struct sweep_summary;

/* Discovery, then the election; the sweeper's heavy hook. */
void heavy_start(struct sm *sm);
/* MASTER: LIDs, routes, writes on the discovery just made. */
void sm_configure(struct sm *sm);
/* Drops the discovery in progress: the sweep ends without configuring. */
void sm_sweep_abandon(struct sm *sm);
/* The sweeper's reroute: the model routed again from scratch, written. */
void heavy_reroute(struct sm *sm);
struct lft_tables;
/*
 * A reroute whose tables were computed on the loop (a local rebalance,
 * sm/vm/vmops.c): t (moved into sm->sub.lft) written as heavy_reroute()
 * writes a routing's, the LFT blocks in the LFT order's waves, with the
 * same engine named; ms: the time they took.  The caller checked that
 * the SM is idle and master.  0, or -1 (out of memory: the daemon stops).
 */
int heavy_write_tables(struct sm *sm, struct lft_tables *t, uint64_t ms);
/* A sweep is over (heavy, or light with no change): the loop goes on. */
void finish_sweep(struct sm *sm);
/* Prints the summary line ("subnet up: ...") to stdout and flushes it. */
void sm_print_summary(const struct sweep_summary *s, const char *state);

/*
 * Into ibsmctl status's object o: what the SM is doing and the sweeps'
 * counts (sweeps_to_ctl); the last heavy sweep's summary and the extended
 * LIDs' mode (last_sweep_to_ctl).
 */
struct json_t;
void sweeps_to_ctl(const struct sm *sm, struct json_t *o);
void last_sweep_to_ctl(const struct sm *sm, struct json_t *o);

#endif
