/*
 * The SM's side of the receive path (mad/dispatch.h): the (class, method,
 * attribute) triples the SM serves, in one table, and the set-up that
 * registers them with the transaction table as the answer hook.  Code in
 * another file serves a triple by adding a row here, or by calling
 * mad_dispatch_register(sm->disp, ...) itself.
 */
#ifndef IBSMD_RECV_H
#define IBSMD_RECV_H

#include <stddef.h>
#include <stdint.h>

#include "mad/dispatch.h"

struct sm;

struct sm_recv_entry {
	uint8_t mgmt_class, class_version, method;
	uint16_t attr;
	mad_handler_fn fn;	/* ctx: the struct sm */
};

/* The handlers (sm/daemon.c); each returns MAD_DONE, MAD_DROP or a status. */
int sm_recv_sminfo(void *ctx, const uint8_t *mad, size_t len,
		   const struct mad_addr *from);
int sm_recv_trap(void *ctx, const uint8_t *mad, size_t len,
		 const struct mad_addr *from);

/* The SM's registrations. */
const struct sm_recv_entry *sm_recv_table(size_t *n);
/* Makes sm->disp: responses to sm->tr, answers to sm->txn.  0 or -1. */
int sm_recv_init(struct sm *sm);
void sm_recv_free(struct sm *sm);

#endif
