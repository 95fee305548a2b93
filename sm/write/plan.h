/*
 * Write plans: every write the SM makes to a device is an operation in
 * a plan, whoever decided it (the sweep, the route repair, later VM
 * migration and QoS).  An operation names one device (a node of the
 * fabric model, reached by its directed route or by a LID), one
 * attribute and modifier, a 64-byte payload, and a wave.  The executor
 * (program.h) sends a wave only when every answer, or final failure, of
 * the previous one is in, and skips every operation whose payload the
 * device cache (devcache.h) says the device already holds.
 *
 * Plans are compact: an operation is 28 bytes; payloads live once in
 * their wave's pool, which operations index (the 2,000 P_Key writes of a
 * sweep share one), and LFT blocks taken from routing tables are a run of
 * blocks of one table row, built when they are sent (a 20,000-node
 * fabric has three million blocks).  A planner may release a wave that
 * is over (plan_release_wave), so that a plan of many waves holds about
 * one wave's memory at a time.
 *
 * A plan grows while it runs: a planner may add to the wave being sent
 * and to any later one, and says with plan_close_wave() and plan_seal()
 * that it will not add more.  A wave is over when its operations are
 * answered and it is closed.
 */
#ifndef IBSMD_PLAN_H
#define IBSMD_PLAN_H

#include <stdint.h>

#include "mad/smp.h"
#include "routing/engine.h"
#include "sm/base/fabric.h"

enum plan_kind {
	PLAN_PORTINFO,		/* modifier: the port */
	PLAN_SWITCHINFO,
	PLAN_PKEY,		/* modifier: block; on a switch, port << 16 | block */
	PLAN_LFT,		/* modifier: block */
	PLAN_SL2VL,		/* modifier: switch in << 8 | out (| SL2VL_ALL_*); CA 0 */
	PLAN_VLARB,		/* modifier: block << 16 | port */
	PLAN_MFT,
	PLAN_VENDOR,		/* attribute in op->attr */
	PLAN_NKINDS
};

#define PLAN_MAX_WAVES 256

/*
 * PLAN_SL2VL on a switch advertising OptimizedSLtoVLMappingProgramming
 * (IBA 1.2.1 14.2.5.8): every input port, every output port (port 0
 * included), in place of the port number in the modifier.
 */
#define SL2VL_ALL_IN  0x20000u
#define SL2VL_ALL_OUT 0x10000u

/* op->flags */
#define PLAN_LFT_ROW 0x01	/* payload: blocks mod..mod+count-1 of table row data */

struct plan_op {
	uint32_t node;		/* node index in the executor's fabric model */
	uint32_t mod;		/* attribute modifier (PLAN_LFT_ROW: first block) */
	uint32_t data;		/* payload index in its wave (plan_data), or table row */
	uint32_t lid;		/* 0: directed route; else LID-routed to it */
	uint16_t attr;		/* PLAN_VENDOR's attribute ID */
	uint16_t count;		/* PLAN_LFT_ROW: blocks in the run; else 1 */
	uint8_t kind, port, wave, flags;	/* port: the one written (0: the node) */
};

struct plan_wave {
	struct plan_op *ops;
	uint32_t n, cap;
	uint8_t (*data)[SMP_DATA_SIZE];		/* payload pool */
	uint32_t n_data, cap_data;
};

struct plan {
	struct plan_wave *waves;
	uint32_t n_waves;		/* waves[0 .. n_waves - 1] exist */
	const struct lft_tables *t;	/* the rows PLAN_LFT_ROW ops refer to */
	uint32_t closed;		/* waves below this get no more ops */
	int sealed;			/* no wave gets more ops */
	int stop_on_failure;		/* a wave with a failure ends the plan */
};

void plan_init(struct plan *p);
void plan_free(struct plan *p);	/* frees what p holds; p itself is the caller's */

/*
 * Stores a payload for ops of wave; returns its index for plan_add, or
 * UINT32_MAX (ENOMEM, a bad wave).
 */
uint32_t plan_data(struct plan *p, int wave, const uint8_t *payload);
/*
 * Adds a write of payload data (an index from plan_data) to node's
 * attribute of kind (PLAN_VENDOR: then set op->attr) with modifier mod,
 * directed-route addressed.  Returns the operation, valid until the next
 * plan_add, for setting lid or attr; NULL on ENOMEM or a bad wave.
 */
struct plan_op *plan_add(struct plan *p, int wave, int kind, uint32_t node,
			 uint8_t port, uint32_t mod, uint32_t data);
/* Blocks first..first+count-1 of row of the plan's tables (plan_set_tables). */
struct plan_op *plan_add_lft_row(struct plan *p, int wave, uint32_t node,
				 uint32_t row, uint32_t first, uint32_t count);
void plan_set_tables(struct plan *p, const struct lft_tables *t);
/* No more ops in waves <= wave; plan_seal(): in any wave. */
void plan_close_wave(struct plan *p, int wave);
void plan_seal(struct plan *p);
/* Frees a wave's ops and payloads once the executor is past it. */
void plan_release_wave(struct plan *p, int wave);

/* The attribute ID an operation writes. */
uint16_t plan_attr(const struct plan_op *o);
/* How many MADs the op stands for, and the i-th one's modifier and payload. */
uint32_t plan_op_mads(const struct plan_op *o);
uint32_t plan_mad_mod(const struct plan_op *o, uint32_t i);
void plan_mad_payload(const struct plan *p, const struct plan_op *o,
		      uint32_t i, uint8_t *out /* [SMP_DATA_SIZE] */);
/* MADs in the whole plan, before the device cache is asked. */
uint64_t plan_mads(const struct plan *p);


#endif
