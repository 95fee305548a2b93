/*
 * The SA tests' harness (test_sa.c, test_sa_part.c): an SM in MASTER
 * with a dispatcher and the SA, whose transport records what it sends,
 * so that requests go in through the receive path (mad_dispatch_input)
 * as they do in the daemon.
 */
#ifndef SA_TESTLIB_H
#define SA_TESTLIB_H

#include <check.h>
#include <event2/event.h>

#include "mad/dispatch.h"
#include "mad/sa.h"
#include "sm/daemon.h"
#include "sm/sa/sa_server.h"

#define MAX_OUT 64
/* The empty GetTableResp: the header and no record, sent as a whole MAD
 * (AttributeOffset 0, RMPP PayloadLength 20). */
#define SA_EMPTY_TABLE_LEN MAD_SIZE

struct wire {
	int n;
	size_t len[MAX_OUT];
	uint8_t mad[MAX_OUT][MAD_SIZE];
};

static int wire_send(void *ctx, const uint8_t *mad, size_t len,
		     const struct mad_addr *to)
{
	struct wire *w = ctx;
	(void)to;
	if (w->n < MAX_OUT) {
		memcpy(w->mad[w->n], mad, len);
		w->len[w->n++] = len;
	}
	return 0;
}

/*
 * The SM (default config, then policy(cfg) when given) answering as
 * master at sm_lid, its sends recorded in w; nothing published yet.
 */
static inline struct sm *sa_test_sm(struct wire *w, uint32_t sm_lid,
				    void (*policy)(struct config *))
{
	struct sm *sm = calloc(1, sizeof(*sm));
	ck_assert_ptr_nonnull(sm);
	config_defaults(&sm->cfg);
	sm->cfg.state_dir[0] = '\0';	/* nothing kept unless the policy says where */
	if (policy)
		policy(&sm->cfg);
	sm->base = event_base_new();
	sm->tr.ctx = w;
	sm->tr.send = wire_send;
	sm->state = SMS_MASTER;
	sm->sub.sm_lid = sm_lid;
	sm->disp = mad_dispatch_new(&sm->tr);
	ck_assert_ptr_nonnull(sm->disp);
	ck_assert_int_eq(sa_init(sm, sa_families, sa_n_families), 0);
	return sm;
}

static inline void sa_test_sm_free(struct sm *sm)
{
	sa_free(sm);
	mad_dispatch_free(sm->disp);
	event_base_free(sm->base);
	free(sm);
}

/* A request of len bytes from from_lid into sm's receive path; the answers' count. */
static inline int sa_test_ask(struct sm *sm, struct wire *w, uint32_t from_lid,
			      const uint8_t *mad, size_t len)
{
	struct mad_addr from = { .lid = from_lid, .qpn = 1 };
	w->n = 0;
	mad_dispatch_input(sm->disp, mad, len, &from, 0);
	return w->n;
}

/* Each request its own TID, as clients do (RMPP keys transfers by TID). */
static uint64_t sa_test_next_tid = 0x1234;

static inline void sa_test_req(uint8_t *mad, uint8_t method, uint16_t attr, uint64_t mask,
			       const void *rec, size_t rlen)
{
	sa_init_request(mad, method, sa_test_next_tid++, attr, 0, mask, rec, rlen);
}

#endif
