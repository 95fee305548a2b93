/*
 * A MAD transport: sends MADs to an address and hands received ones to a
 * callback on the event loop.  Two backends: umad (the kernel or ibsim
 * through libumad2sim) and the in-process emulator.
 *
 * Lengths.  Every MAD on the wire is 256 bytes (MAD_SIZE), and so is
 * everything a transport carries: RMPP is done by ibsmd itself, one
 * 256-byte segment at a time with its RMPP header (bytes 24-35), not by
 * the kernel.  The reasons: ibsim has no RMPP at all and copies at most
 * 256 bytes per MAD, and the emulator has no kernel, so ibsmd needs its
 * own RMPP there anyway; one implementation that runs everywhere is
 * tested everywhere.  No agent is registered with an RMPP version, so the
 * kernel never hands up more than MAD_SIZE bytes.  A transport passes the
 * length it received; the receive path (mad/dispatch.c) drops and counts
 * what is shorter than a MAD header or than its class needs, or longer
 * than MAD_SIZE, before anything reads past MAD_HDR_SIZE.
 */
#ifndef IBSMD_TRANSPORT_H
#define IBSMD_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#define MAD_SIZE	256	/* a MAD on the wire: the most a transport carries */
#define MAD_HDR_SIZE	24	/* the common MAD header */
#define MAD_RMPP_HDR_END 36	/* RMPP header: bytes 24-35 of an RMPP class */

struct mad_addr {
	uint32_t lid;		/* DLID on send, SLID on receive; 0xffff = permissive;
				 * 18 bits (a vLID, mad/xlid.h) on the emulator only */
	uint32_t qpn;		/* 0 for SMPs, 1 for GMPs to the GSI */
	uint32_t qkey;
	uint16_t pkey_index;
	uint8_t sl;
};

/*
 * status: 0, or the transport's error for a MAD that came back unsent
 * (e.g. 110).  len is what arrived, unchecked: the receiver checks it.
 */
typedef void (*mad_recv_fn)(void *arg, const uint8_t *mad, size_t len,
			    const struct mad_addr *from, int status);

struct mad_transport {
	void *ctx;
	/* len: MAD_HDR_SIZE .. MAD_SIZE, else -1 */
	int (*send)(void *ctx, const uint8_t *mad, size_t len,
		    const struct mad_addr *to);
	void (*close)(void *ctx);
	/* what the local port looks like */
	uint64_t port_guid;
	uint32_t lid;
	uint32_t sm_lid;
	int port_num;
	int port_state;
	char ca_name[64];
};

static inline int mad_transport_send(struct mad_transport *t,
				     const uint8_t *mad, size_t len,
				     const struct mad_addr *to)
{
	if (len < MAD_HDR_SIZE || len > MAD_SIZE)
		return -1;
	return t->send(t->ctx, mad, len, to);
}

#endif
