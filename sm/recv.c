#include "sm/recv.h"

#include <infiniband/mad.h>

#include "sm/daemon.h"
#include "mad/pma.h"
#include "sm/perfmgr.h"
#include "sm/sa/notices.h"

/* SMInfo and traps arrive LID-routed and directed-route alike. */
static const struct sm_recv_entry table[] = {
	{ IB_SMI_CLASS, 1, IB_MAD_METHOD_GET, IB_ATTR_SMINFO, sm_recv_sminfo },
	{ IB_SMI_CLASS, 1, IB_MAD_METHOD_SET, IB_ATTR_SMINFO, sm_recv_sminfo },
	{ IB_SMI_DIRECT_CLASS, 1, IB_MAD_METHOD_GET, IB_ATTR_SMINFO, sm_recv_sminfo },
	{ IB_SMI_DIRECT_CLASS, 1, IB_MAD_METHOD_SET, IB_ATTR_SMINFO, sm_recv_sminfo },
	{ IB_SMI_CLASS, 1, IB_MAD_METHOD_TRAP, MAD_ATTR_NOTICE, sm_recv_trap },
	{ IB_SMI_DIRECT_CLASS, 1, IB_MAD_METHOD_TRAP, MAD_ATTR_NOTICE, sm_recv_trap },
};

const struct sm_recv_entry *sm_recv_table(size_t *n)
{
	*n = sizeof(table) / sizeof(table[0]);
	return table;
}

/*
 * Answers to our requests: the performance manager's GMPs (PerfMgt) to its
 * own transaction table, the rest to the SA's notices and the SM's.
 */
static int answer(void *arg, const uint8_t *mad, size_t len,
		  const struct mad_addr *from, int status)
{
	struct sm *sm = arg;
	if (len >= MAD_HDR_SIZE && mad[1] == PMA_CLASS &&
	    perfmgr_answer(sm, mad, len, from, status))
		return 1;
	return notices_answer(arg, mad, len, from, status);
}

/* Registers the table with d, each handler with ctx.  0 or -1. */
static int sm_recv_register(struct mad_dispatch *d, void *ctx)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct sm_recv_entry *r = &table[i];
		if (mad_dispatch_register(d, r->mgmt_class, r->class_version,
					  r->method, r->attr, r->fn, ctx) < 0)
			return -1;
	}
	return 0;
}

struct mad_dispatch *sm_recv_new(struct sm *sm, struct mad_transport *tr)
{
	struct mad_dispatch *d = mad_dispatch_new(tr);
	if (!d)
		return NULL;
	mad_dispatch_set_answers(d, answer, sm);
	sm_traps_init(sm);
	if (sm_recv_register(d, sm) < 0) {
		mad_dispatch_free(d);
		return NULL;
	}
	return d;
}
