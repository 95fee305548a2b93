/*
 * The device cache: what each device holds as far as the SM knows, by
 * node GUID -- what its writes' answers confirmed, and what discovery
 * read where reading tells (LinearFDBTop, a port reset to LID 0).  The
 * executor (program.h) asks it before every write of a plan and skips
 * the write when the device already holds the payload.
 *
 * What counts as "the same" is decided here and nowhere else:
 *  - PortInfo: the fields the SM sets.  On an end port (CA port, switch
 *    port 0): LID, SM LID, LMC, GID prefix, subnet timeout; on a linked
 *    port: NeighborMTU, OperationalVLs, VLStallCount, HOQLife,
 *    VLHighLimit (qos.vlarb_high_limit; else as read),
 *    PartitionEnforcementInbound/Outbound.  Read-only
 *    and unstored fields (ibsim keeps no NeighborMTU) are not compared,
 *    and a payload that asks for an action -- a PortState change or
 *    ClientReregister -- is never skipped.
 *  - SwitchInfo: LinearFDBTop and MulticastFDBTop; a payload that
 *    clears PortStateChange is never skipped.
 *  - LFT blocks, P_Key, SL2VL, VLArb, MFT and vendor attributes: the whole
 *    64 bytes, per (port, attribute, modifier).  A switch's SL2VL Set
 *    with modifier bit 17 (every input) or 16 (every output, plan.h) is
 *    every (in << 8 | out) pair it wrote, port 0 included: each is
 *    recorded, and it is held when each pair holds the payload.
 */
#ifndef IBSMD_DEVCACHE_H
#define IBSMD_DEVCACHE_H

#include <stdint.h>

#include "mad/mkey.h"
#include "sm/base/fabric.h"
#include "sm/write/plan.h"

struct devcache;

struct devcache *devcache_new(void);
void devcache_free(struct devcache *c);
/* Forgets everything (an SM restart or a change of mastership). */
void devcache_clear(struct devcache *c);

/* Does the device of op (a node of f) hold payload at modifier mod already? */
int devcache_holds(const struct devcache *c, const struct fabric *f,
		   const struct plan_op *op, uint32_t mod, const uint8_t *payload);
/* It does now: a write's answer confirmed it, or the device is known to. */
/*
 * The 64 bytes the cache holds of node's attribute attr (a vendor or
 * other whole-payload attribute) at port and modifier mod, or NULL when
 * it holds none.
 */
const uint8_t *devcache_attr(const struct devcache *c, const struct fabric *f,
			     uint32_t node, uint8_t port, uint16_t attr,
			     uint32_t mod);
/*
 * The record of node's attribute attr at port with the highest modifier
 * in [lo, below): its 64 bytes, the modifier in *mod; NULL when none.
 * O(log records): the SA finds the last multicast block in use so.
 */
const uint8_t *devcache_attr_below(const struct devcache *c, const struct fabric *f,
				   uint32_t node, uint8_t port, uint16_t attr,
				   uint32_t lo, uint32_t below, uint32_t *mod);
/*
 * The LFT of switch node as the cache knows the switch holds it:
 * *blocks blocks of 64 entries, (*valid)[b] 1 where block b is known;
 * NULL when none is.  *top: the switch's LinearFDBTop as held,
 * UINT32_MAX when not known.
 */
const uint8_t *devcache_lft(const struct devcache *c, const struct fabric *f, uint32_t node,
			    uint32_t *blocks, const uint8_t **valid, uint32_t *top);
/* Does the cache hold any record of node's attribute attr at port? */
int devcache_holds_attr(const struct devcache *c, const struct fabric *f,
			uint32_t node, uint8_t port, uint16_t attr);
void devcache_record(struct devcache *c, const struct fabric *f,
		     const struct plan_op *op, uint32_t mod, const uint8_t *payload);

/*
 * What a sweep read: forgets what the device contradicts (an end port
 * whose LID or SM LID is not what was written lost its configuration,
 * P_Key table included; a switch with LinearFDBTop 0 lost its tables,
 * its port-0 attributes -- XLIDCap, secondary LFT -- with them)
 * and takes the switch's LinearFDBTop as held.
 */
void devcache_observe_port(struct devcache *c, const struct fabric *f,
			   uint32_t pi);
void devcache_observe_switch(struct devcache *c, const struct fabric *f,
			     uint32_t node);
/*
 * What a new master read from a device it did not configure (an LFT block,
 * a P_Key block, a PortInfo): the device holds it, so a plan that wants
 * the same sends nothing.  kind is a PLAN_* of plan.h, port the port the
 * attribute belongs to (0: the node), mod the attribute modifier.
 */
/*
 * The M_Key fields port pi holds (written by the SM, or read at an
 * adoption; violations 0): 0, or -1 when the cache knows nothing of it.
 */
int devcache_port_mkey(const struct devcache *c, const struct fabric *f,
		       uint32_t pi, struct mkey_pi *m);
void devcache_note_read(struct devcache *c, const struct fabric *f, int kind,
			uint32_t node, uint8_t port, uint32_t mod,
			const uint8_t *data);

/*
 * Reading back (the scrub, scrub.h): the records that are whole blocks
 * the SM wrote -- LFT blocks, P_Key blocks, SL2VL tables, MFT blocks --
 * one at a time, in the cache's own order.
 */
struct devcache_item {
	uint64_t guid;		/* the node's */
	int kind;		/* PLAN_LFT, PLAN_PKEY, PLAN_SL2VL or PLAN_MFT */
	uint8_t port;		/* the port the attribute belongs to (0: the node) */
	uint32_t mod;		/* the attribute modifier it was written with */
	uint8_t data[SMP_DATA_SIZE];
};
/*
 * The record at *cursor or the next one after it, and the cursor moved
 * past it: 1.  0 at the end of the cache, with the cursor back at its
 * start (a pass is over).  Records made or dropped meanwhile move the
 * cursor's place a little; it never goes back.
 */
int devcache_next_item(const struct devcache *c, uint64_t *cursor,
		       struct devcache_item *it);
/* How many records devcache_next_item walks in a pass. */
uint32_t devcache_items(const struct devcache *c);
/*
 * Is what the device answered (a Get's 64 data bytes) what the record
 * holds?  The bytes that count: an SL2VL table's 8, the others' 64.
 */
int devcache_item_same(const struct devcache_item *it, const uint8_t *read);

#endif
