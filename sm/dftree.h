/*
 * dFtree's loop (congestion.mode: dftree; ibsmd(8) HOT-SPOT SLOW LANES):
 * every congestion.interval_s a MASTER reads PortXmitWait of every switch
 * port that faces a CA, and PortXmitWait and PortXmitData of every CA
 * port, through the performance manager's transaction table
 * (perfmgr_engine()); Equations 1-3 and Algorithm 1 of the dFtree paper
 * (sm/perf/dftree_alg.h) turn them into hot-spots and their contributors;
 * each contributor gets a lane order (traps/notice.h: a 69 with the slow
 * SL, a 68 with the fast SL when the hot-spot clears), the SA's
 * PathRecords towards a hot-spot answer the slow SL while it is one
 * (sm/model/lanes.h), and the log gets a line per hot-spot that appears
 * and clears.  No LFT, SL2VL or VLArb is written: the two lanes were set
 * up at the heavy sweep.
 */
#ifndef IBSMD_DFTREE_H
#define IBSMD_DFTREE_H

#include <stddef.h>

struct sm;
struct mtext;
struct json_t;

/* At sm_init: the timer; 0, or -1 (no memory). */
int dftree_init(struct sm *sm);
void dftree_free(struct sm *sm);
/* The policy was (re)loaded, or a heavy sweep configured the subnet. */
void dftree_reconfigure(struct sm *sm);
/* ibsmctl hotspots: {"hotspots": [...]} (sm/ctl/ctlcmds.c's table). */
struct json_t *dftree_ctl(struct sm *sm, const struct json_t *req, char *err,
			  size_t errlen);
/* `status`: the loop's figures ("congestion"). */
struct json_t *dftree_to_ctl(const struct sm *sm);
/* /metrics: hot-spots, rounds, lane orders. */
void dftree_metrics(const struct sm *sm, struct mtext *t);

#endif
