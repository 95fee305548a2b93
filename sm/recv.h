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

/* The handlers (SMInfo: sm/smstate.c, traps: sm/traphooks.c); each returns
 * MAD_DONE, MAD_DROP or a status. */
int sm_recv_sminfo(void *ctx, const uint8_t *mad, size_t len,
		   const struct mad_addr *from);
int sm_recv_trap(void *ctx, const uint8_t *mad, size_t len,
		 const struct mad_addr *from);

/* The SM's registrations. */
const struct sm_recv_entry *sm_recv_table(size_t *n);
/*
 * The SM's receive path on tr: the table's handlers and the answers to
 * its requests (sm/sa/notices.c), each with sm; the traps' hooks set.
 * NULL: no memory.  Freed with mad_dispatch_free().
 */
struct mad_transport;
struct mad_dispatch *sm_recv_new(struct sm *sm, struct mad_transport *tr);

#endif
