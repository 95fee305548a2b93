/*
 * The daemon's code on the in-process emulator, for the bench tools that
 * time it (emusa, emuvm, emumc): the topology loaded, the emulated
 * fabric, an SM with the policy's defaults (no periodic sweep, a state
 * dir of its own), stdout kept for the tool's JSON while the daemon's
 * "subnet up" lines go to /dev/null.  Header-only, static functions.
 *
 *     struct emusm x;
 *     if ((rc = emusm_open(&x, "emufoo", path)) != 0) return rc;
 *     x.sm->cfg.... = ...;              (the tool's policy)
 *     if (emusm_start(&x) < 0 || !emusm_run_idle(&x, ms)) return 1;
 *     ...
 *     emusm_stdout(&x); printf(...);
 *     return emusm_close(&x) < 0 || !ok;
 */
#ifndef IBSMD_EMUSM_H
#define IBSMD_EMUSM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mad/emu/emu.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/base/topo.h"
#include "saload.h"

struct emusm {
	const char *prog;
	struct fabric topo;
	uint32_t n_sw, n_ca, n_ports;
	struct emu *e;
	struct event_base *base;
	struct sm *sm;
	char state[64];
	int made;		/* the state dir exists */
	int saved_out;		/* the tool's stdout while the daemon's is /dev/null */
};

/*
 * Loads the topology at path and builds the emulator and an SM with the
 * defaults.  0, 2 (the topology is bad) or 1, the reason on stderr.
 */
static inline int emusm_open(struct emusm *x, const char *prog, const char *path)
{
	char err[512];
	memset(x, 0, sizeof(*x));
	x->prog = prog;
	x->saved_out = -1;
	fabric_init(&x->topo);
	if (topo_load(&x->topo, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return 2;
	}
	fabric_counts(&x->topo, &x->n_sw, &x->n_ca, &x->n_ports);
	x->e = emu_new(&x->topo, err, sizeof(err));
	x->base = event_base_new();
	x->sm = calloc(1, sizeof(*x->sm));
	snprintf(x->state, sizeof(x->state), "/tmp/%s.XXXXXX", prog);
	if (!x->e || !x->base || !x->sm || !mkdtemp(x->state)) {
		fprintf(stderr, "%s: %s\n", prog, x->e ? "out of memory" : err);
		return 1;
	}
	x->made = 1;
	log_set_level(LOG_ERROR);
	config_defaults(&x->sm->cfg);
	x->sm->cfg.sweep_interval_s = 0;
	snprintf(x->sm->cfg.state_dir, sizeof(x->sm->cfg.state_dir), "%s", x->state);
	x->sm->log_level_override = -1;
	return 0;
}

/* stdout to /dev/null, the SM started on the emulator.  0, or -1 (said). */
static inline int emusm_start(struct emusm *x)
{
	char err[512];
	fflush(stdout);
	x->saved_out = dup(1);
	if (x->saved_out < 0 || !freopen("/dev/null", "w", stdout)) {
		fprintf(stderr, "%s: cannot redirect stdout\n", x->prog);
		return -1;
	}
	if (sm_init(x->sm, x->base, err, sizeof(err)) < 0 ||
	    sm_start_emulated(x->sm, x->e, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", x->prog, err);
		return -1;
	}
	return 0;
}

/* Configured, no sweep asked for or under way. */
static inline int emusm_idle(void *arg)
{
	const struct sm *sm = arg;
	return sm->sweep.heavy_sweeps >= 1 && (sm->sw.activity == SM_IDLE) && !sm->sw.heavy_wanted;
}

/* Runs the loop until the SM is idle or ms pass; whether it is. */
static inline int emusm_run_idle(struct emusm *x, double ms)
{
	return saload_run_until(x->base, emusm_idle, x->sm, ms);
}

/* The tool's stdout back (after emusm_start).  0, or -1. */
static inline int emusm_stdout(struct emusm *x)
{
	fflush(stdout);
	return x->saved_out >= 0 && dup2(x->saved_out, 1) < 0 ? -1 : 0;
}

/* Everything freed, the state dir removed.  0, or -1 (it stayed). */
static inline int emusm_close(struct emusm *x)
{
	char cmd[128];
	if (x->sm) {
		sm_shutdown(x->sm);
		free(x->sm);
	}
	if (x->e)
		emu_free(x->e);
	if (x->base)
		event_base_free(x->base);
	fabric_free(&x->topo);
	if (!x->made)
		return 0;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", x->state);
	return system(cmd) == 0 ? 0 : -1;
}

#endif
