/*
 * What the command line asks to follow the daemon's configurations, as a
 * watcher of the daemon (struct sm_watcher), not a part of it: the dumps
 * (--dump-lfts, --dump-topology) after every heavy sweep, and with --once
 * the end of the run -- the subnet up once (swept again at most
 * ONESHOT_RESWEEPS times while writes fail), --verify, the exit status;
 * or the standby line when another SM is in charge.
 */
#ifndef IBSMD_ONESHOT_H
#define IBSMD_ONESHOT_H

#include "sm/daemon.h"

#define ONESHOT_RESWEEPS 2

struct oneshot {
	int once;			/* --once */
	int verify;			/* --verify: the tables, after --once */
	const char *dump_lfts;		/* --dump-lfts FILE */
	const char *dump_topology;	/* --dump-topology FILE */
	int resweeps;			/* sweeps again after failed writes */
	struct sm_watcher w;
};

/* Watches sm; os lives as long as sm.  Before sm_init(). */
void oneshot_watch(struct sm *sm, struct oneshot *os);

#endif
