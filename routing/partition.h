/*
 * The partition model: the policy's partitions resolved against one
 * fabric model (by sm/model/part_resolve.c).  A part_model is plain data over the port
 * indices of the fabric it was resolved against: every layer may read it
 * (the routing engines through route_opts, the SA through its view, the
 * sweep's P_Key planning), none changes it after part_resolve().
 *
 * parts[0] is always the default partition (P_Key 0x7FFF): the SM's port
 * and the switches (port 0, and their external ports when they enforce)
 * are full members.  Without tenant partitions in the policy every end
 * port is a full member too (0xFFFF, as before ibsmd had partitions and
 * as OpenSM's default partitions.conf); with them, hosts are limited
 * members (0x7FFF) so that no two hosts share a full-member P_Key unless
 * a tenant says so.
 * The default partition's entry is P_Key table index 0 of every port.
 *
 * Membership: a port's entries mem[mem_off[pi] .. mem_off[pi + 1]), each
 * a partition index with PART_FULL when a full member, default first then
 * in policy order.  Two ports may talk in partition p when both are
 * members and at least one is full (IBA 10.9.3).
 */
#ifndef IBSMD_ROUTING_PARTITION_H
#define IBSMD_ROUTING_PARTITION_H

#include <stddef.h>
#include <stdint.h>

#include "sm/base/fabric.h"

#define PART_DEFAULT_PKEY	0x7fff
#define PART_FULL		0x8000	/* in mem[]: and in a P_Key */
#define PART_IDX(e)		((uint16_t)((e) & 0x7fff))
#define PART_NONE		0xffff
#define PART_NAME_LEN		64

/* Isolation policies, in priority order (the pFTree paper, Table 1). */
enum part_policy { PART_DEF = 0, PART_VLANE = 1, PART_PHY = 2 };

struct part {
	char name[PART_NAME_LEN];
	uint16_t pkey;		/* 15 bits, 0x0001..0x7FFF */
	uint8_t policy;		/* enum part_policy */
	int8_t sl;		/* the policy's sl 0..15, -1 when not given */
	uint8_t ipoib;		/* ipoib: true: an IPoIB broadcast group */
	uint32_t ports;		/* end ports matched at resolve */
};

/*
 * pFTree-Wt weights learned from PMA counters (sm/weights.c): receive
 * weights by port GUID, sorted by guid.  They override the policy's.
 */
struct part_weights {
	uint32_t n;
	uint64_t *guid;
	uint32_t *weight;
};

struct part_model {
	uint32_t n_parts;	/* parts[0]: the default partition */
	struct part *parts;
	uint32_t n_ports;	/* the fabric's ports at resolve */
	uint32_t *mem_off;	/* n_ports + 1 */
	uint16_t *mem;		/* partition index | PART_FULL */
	/*
	 * The partition pftree routes an end port in (one per port: the
	 * pFTree paper routes a node in its one partition): of its tenant
	 * partitions the one of the highest policy, then the first in the
	 * policy; PART_NONE for a port in none (the default only) and for
	 * non-end ports.
	 */
	uint16_t *route_part;
	uint32_t *weight;	/* n_ports: receive weight, >= 1 (default 1) */
	int tenants;		/* tenant partitions in the policy (0: hosts are
				   full default members) */
	int strict;		/* routing.isolation_mode: strict */
	int weighted;		/* some weight is not 1 */
};


/*
 * The P_Key table end port (or switch port 0) pi holds: up to max
 * entries into out (the default first), returned count.  A switch's
 * external port facing an end port gets that port's table
 * (part_pkeys_enforce()).
 */
unsigned part_pkeys(const struct part_model *m, const struct fabric *f,
		    uint32_t pi, uint16_t *out, unsigned max);

/*
 * The partition ports a and b share (both members, one at least full):
 * with want (a 15-bit P_Key, or PART_NONE) only that one; else a tenant
 * partition before the default, the first in the policy.  Its index, or
 * PART_NONE when they share none.
 */
uint16_t part_shared(const struct part_model *m, uint32_t a, uint32_t b,
		     uint16_t want);

/*
 * Flows towards one destination d (the verifiers': pverify.h,
 * contention.h): part_dest_mark() sets dmem[p] (np entries, zero
 * otherwise) to d's membership in each of its partitions, 1 limited, 2
 * full (on 0: back to 0); part_flow_parts() lists in out the tenant
 * partitions (not the default) port s may talk to d in, both members and
 * one full, and returns their number; *any (when not NULL) says whether
 * they share a partition at all, the default too.
 */
void part_dest_mark(const struct part_model *m, uint32_t d, uint8_t *dmem,
		    uint32_t np, int on);
uint32_t part_flow_parts(const struct part_model *m, uint32_t s,
			 const uint8_t *dmem, uint32_t np, uint16_t *out,
			 int *any);

/* Partition index of the 15-bit P_Key pkey, or PART_NONE. */
uint16_t part_by_pkey(const struct part_model *m, uint16_t pkey);

/* Frees m's arrays and zeroes it. */
void part_model_free(struct part_model *m);

/* enum part_policy names: "def-isolation", ... */
extern const char *const part_policy_names[];

#endif
