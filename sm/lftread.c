#include "lftread.h"

#include <infiniband/mad.h>
#include <stdlib.h>
#include <string.h>

#include "../mad/smp.h"
#include "log.h"

struct lft_q {
	struct lft_read *r;
	uint32_t node;
	uint32_t block;
};

struct lft_read {
	const struct fabric *f;
	struct devcache *c;
	struct lft_tables t;
	struct lft_q *q;	/* one per block asked for */
	uint32_t n_q;
	uint32_t pending;
	int done_called;
	struct lft_read_stats st;
	lft_read_fn done;
	void *arg;
};

static void finish(struct lft_read *r, int rc)
{
	struct lft_tables t = r->t;
	memset(&r->t, 0, sizeof(r->t));
	if (rc < 0)
		lft_tables_free(&t);
	r->done_called = 1;
	r->done(r->arg, rc, &t, &r->st);
}

static void on_block(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct lft_q *q = arg;
	struct lft_read *r = q->r;
	if (status == TXN_CANCELLED) {
		if (--r->pending == 0 && !r->done_called)
			finish(r, -1);
		return;
	}
	const struct fab_node *n = &r->f->nodes[q->node];
	if (status != TXN_OK || len < SMP_DATA_OFFS + SMP_DATA_SIZE || smp_status(resp)) {
		r->st.failed++;
	} else {
		const uint8_t *data = resp + SMP_DATA_OFFS;
		uint8_t *row = lft_row(&r->t, r->t.row_of_node[q->node]);
		uint32_t lid0 = q->block * 64;
		for (uint32_t k = 0; k < 64; k++) {
			uint32_t lid = lid0 + k;
			if (lid <= r->t.max_lid && lid <= n->lft_top)
				row[lid] = data[k];
		}
		r->st.blocks++;
		devcache_note_lft_block(r->c, r->f, q->node, q->block, data);
	}
	if (--r->pending == 0)
		finish(r, 0);
}

static uint32_t blocks_of(const struct fabric *f, const struct fab_node *n)
{
	if (n->type != FAB_SWITCH || !n->lft_top)
		return 0;
	uint32_t top = n->lft_top < f->max_lid ? n->lft_top : f->max_lid;
	return top / 64 + 1;
}

struct lft_read *lft_read_start(struct txn_engine *txn, const struct fabric *f,
				struct devcache *c, lft_read_fn done, void *arg)
{
	struct lft_read *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->f = f;
	r->c = c;
	r->done = done;
	r->arg = arg;
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++)
		n += blocks_of(f, &f->nodes[i]);
	if (lft_tables_alloc(&r->t, f) < 0 ||
	    (n && !(r->q = calloc(n, sizeof(*r->q))))) {
		lft_tables_free(&r->t);
		free(r);
		return NULL;
	}
	r->pending = 1;	/* held until every query is queued */
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		uint32_t nb = blocks_of(f, nd);
		if (nb)
			r->st.switches++;
		for (uint32_t b = 0; b < nb; b++) {
			struct lft_q *q = &r->q[r->n_q++];
			q->r = r;
			q->node = i;
			q->block = b;
			uint8_t mad[MAD_SIZE];
			struct mad_addr to;
			smp_init_dr(mad, IB_MAD_METHOD_GET, IB_ATTR_LINEARFORWTBL, b,
				    nd->dr_path, nd->dr_len);
			smp_dr_address(&to);
			if (txn_submit(txn, mad, sizeof(mad), &to, i, on_block, q) == 0)
				r->pending++;
			else
				r->st.failed++;
		}
	}
	if (--r->pending == 0)
		finish(r, 0);
	return r;
}

void lft_read_free(struct lft_read *r)
{
	if (!r)
		return;
	lft_tables_free(&r->t);
	free(r->q);
	free(r);
}
