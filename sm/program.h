/*
 * Configuration: the writes that make the fabric match what the SM wants
 * (PortInfo, SwitchInfo, P_Key table, LFT blocks), planned against a cache
 * of what was last written to each device so that only differences are
 * sent, then port activation (ARMED before, ACTIVE after, as the spec's
 * state machine requires both ends to be ARMED first).
 */
#ifndef IBSMD_PROGRAM_H
#define IBSMD_PROGRAM_H

#include <stdint.h>

#include "../mad/txn.h"
#include "../routing/engine.h"
#include "sweep.h"

struct program_params {
	uint64_t subnet_prefix;
	uint32_t sm_lid;
	int subnet_timeout;
	int hoq_life;
	int leaf_hoq_life;
	int vl_stall_count;
	int max_op_vls;		/* OperationalVLs encoding ceiling (1..5) */
	int client_rereg;	/* set ClientReregister on CA ports */
	int extra_rounds;	/* rounds of re-sending what failed */
};

struct program_stats {
	uint32_t portinfo_sets, switchinfo_sets, pkey_sets, lft_blocks;
	uint32_t activations;
	uint32_t failed;	/* writes that never succeeded */
	uint32_t failed_ports;	/* distinct ports left unconfigured */
	int cancelled;		/* the transaction table was cancelled */
	int unrouted;		/* no tables came: ports armed, nothing activated */
};

struct devcache;

struct devcache *devcache_new(void);
void devcache_free(struct devcache *c);
/* Forgets everything (an SM restart or a change of mastership). */
void devcache_clear(struct devcache *c);
/*
 * Records an LFT block as read from the switch (a new master adopting
 * what it finds): a plan that wants the same 64 entries sends nothing.
 * Returns 0 or -1 (ENOMEM).
 */
int devcache_note_lft_block(struct devcache *c, uint64_t guid, uint32_t nports,
			    uint32_t block, const uint8_t *data);

struct program;
typedef void (*program_done_fn)(void *arg, const struct program_stats *s);

/*
 * Plans and sends.  d (its fabric with LIDs assigned), t and c must stay
 * valid until done() runs; d's port states, LIDs and LinearFDBTop are
 * updated as writes succeed, so that d keeps describing the devices.
 * t may be NULL while the routes are still being computed: the ports are
 * configured meanwhile, and the switches (SwitchInfo, LFTs) and the
 * activation wait for program_set_tables().
 * done() may run before program_start returns when nothing needs writing.  Returns NULL on ENOMEM.
 */
struct program *program_start(struct txn_engine *txn,
			      struct discovery *d,
			      const struct lft_tables *t, struct devcache *c,
			      const struct program_params *p,
			      program_done_fn done, void *arg);
/* The routes, or NULL if routing failed: then nothing is activated. */
void program_set_tables(struct program *pr, const struct lft_tables *t);
void program_free(struct program *pr);

#endif
