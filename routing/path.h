/*
 * What a host sees of a route: the facts of the path the LFTs give from
 * one end port to a LID, for the SA's PathRecords and for the path-record
 * distinguisher that decides which notices to send after a reroute.  A
 * pure function of the model and the tables: no MADs.
 */
#ifndef IBSMD_PATH_H
#define IBSMD_PATH_H

#include <stdint.h>

#include "sm/base/fabric.h"
#include "routing/engine.h"

struct path_facts {
	uint32_t slid, dlid;
	uint32_t dst_port;	/* port index of the destination end port */
	uint8_t sl;		/* t->sl, 0 without QoS */
	uint8_t mtu;		/* IB MTU code: the least over the path's links */
	uint8_t rate;		/* IB rate code (PathRecord:Rate): the least link */
	uint8_t hops;		/* links traversed */
	uint8_t reversible;	/* the LFTs also lead from dlid's port back to slid */
};

/*
 * The path from end port src_port (a CA/router port or a switch port 0)
 * to dlid (any LID of the destination's LMC range), following t.  Returns
 * 0, or -1 when the tables do not reach dlid (a hole, a loop, a link that
 * is not Active, a LID nobody holds).
 */
int path_resolve(const struct fabric *f, const struct lft_tables *t,
		 uint32_t src_port, uint32_t dlid, struct path_facts *out);

/* Bandwidth of an IB rate code in units of 100 Mb/s (0: not a rate code). */
unsigned path_rate_bw(uint8_t rate);

/* IB rate code of a link width (PortInfo:LinkWidthActive) and speed. */
uint8_t path_link_rate(uint8_t width_active, uint8_t speed_active);

/*
 * PacketLifeTime of a resolved path from src_port, as sm/sa/sa_path.c
 * derives it: ltv + ceil(log2 of the switches crossed), at most 63; 0 for
 * a port to itself.  ltv from path_switch_ltv().
 */
uint8_t path_packet_life(const struct fabric *f, const struct path_facts *pf,
			 uint32_t src_port, uint8_t ltv);
/* The largest SwitchInfo:LifeTimeValue of the subnet's switches, dflt if none. */
uint8_t path_switch_ltv(const struct fabric *f, uint8_t dflt);

#endif
