/*
 * A MAD transport: sends 256-byte MADs to an address and hands received
 * ones to a callback on the event loop.  Two backends: umad (the kernel or
 * ibsim through libumad2sim) and, later, the in-process emulator.
 */
#ifndef IBSMD_TRANSPORT_H
#define IBSMD_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#define MAD_SIZE 256

struct mad_addr {
	uint32_t lid;		/* DLID on send, SLID on receive; 0xffff = permissive */
	uint32_t qpn;		/* 0 for SMPs, 1 for GMPs to the GSI */
	uint32_t qkey;
	uint16_t pkey_index;
	uint8_t sl;
};

/* status: 0, or the transport's error for a MAD that came back unsent (e.g. 110). */
typedef void (*mad_recv_fn)(void *arg, const uint8_t *mad, size_t len,
			    const struct mad_addr *from, int status);

struct mad_transport {
	void *ctx;
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
	return t->send(t->ctx, mad, len, to);
}

#endif
