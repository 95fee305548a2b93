/*
 * The counting transport for ibsmd --offline --migrate: see migcount.h.
 */
#include "sm/write/migcount.h"

#include <infiniband/mad.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/smp.h"
#include "mad/txn.h"
#include "sm/write/devcache.h"
#include "sm/write/plan.h"
#include "sm/write/program.h"
#include "sm/discover/sweep.h"
#include "sm/base/clock.h"

struct answer {
	uint8_t mad[MAD_SIZE];
	size_t len;
	struct mad_addr from;
};

struct counter {
	const struct fabric *f;
	const struct lft_tables *t;
	const struct migration *m;
	struct answer *q;	/* answers not yet handed back, FIFO */
	uint32_t head, n, cap;
	uint8_t *seen;		/* per LID: a switch already written */
	struct mig_count *c;
	int bad, nomem, done;
	char why[160];
};

static uint64_t txn_clock(void *arg)
{
	(void)arg;
	return clock_ms();
}

/*
 * Whether entry (row, lid) sent as p is one of m's changed entries
 * written before it is due (a mixed block: as before, or none drained).
 */
static int early(const struct migration *m, uint32_t row, uint32_t lid,
		 uint8_t p)
{
	for (unsigned k = 0; k < m->ord_n; k++)
		if (m->ord_lid[k] == lid)
			return p == (m->ord_drained[k] ? LFT_DROP :
				     m->ord_before[(size_t)row * m->ord_n + k]);
	return 0;
}

/* Checks and counts a Set, and queues its success answer. */
static int count_send(void *ctx, const uint8_t *mad, size_t len,
		      const struct mad_addr *to)
{
	struct counter *k = ctx;
	uint8_t copy[MAD_SIZE];

	memcpy(copy, mad, len);
	if (smp_method(mad) != IB_MAD_METHOD_SET) {
		k->c->other_smps++;	/* reads: not expected here */
	} else if (smp_attr(mad) == IB_ATTR_LINEARFORWTBL) {
		uint32_t lid = to->lid, b = smp_attr_mod(mad);
		uint32_t pi = lid && lid <= k->f->max_lid ? k->f->lid_port[lid] :
			      FAB_NONE;
		uint32_t node = pi == FAB_NONE ? FAB_NONE : k->f->ports[pi].node;
		uint32_t row = node == FAB_NONE ? FAB_NONE : k->t->row_of_node[node];
		if (row == FAB_NONE) {
			snprintf(k->why, sizeof(k->why),
				 "LFT block %u sent to LID %u, not a switch", b, lid);
			k->bad = 1;
		} else {
			const uint8_t *r = lft_row(k->t, row), *d = smp_data(copy);
			for (uint32_t j = 0; j < FAB_LFT_BLOCK && !k->bad; j++) {
				uint32_t e = b * FAB_LFT_BLOCK + j;
				uint8_t want = e <= k->t->max_lid ? r[e] : LFT_DROP;
				if (d[j] != want && !early(k->m, row, e, d[j])) {
					snprintf(k->why, sizeof(k->why),
						 "%s: block %u LID %u: sent %u, the tables say %u",
						 k->f->nodes[node].desc, b, e, d[j], want);
					k->bad = 1;
				}
			}
			int vs = fabric_is_vswitch(k->f, node);
			k->c->lft_blocks++;
			k->c->vswitch_blocks += vs;
			if (!k->seen[lid]) {
				k->seen[lid] = 1;
				if (vs)
					k->c->vswitches++;
				else
					k->c->switches++;
			}
		}
	} else {
		k->c->other_smps++;
	}
	if (k->n == k->cap) {
		uint32_t nc = k->cap ? k->cap * 2 : 256;
		struct answer *q = realloc(k->q, (size_t)nc * sizeof(*q));
		if (!q) {
			k->nomem = 1;
			return -1;
		}
		k->q = q;
		k->cap = nc;
	}
	struct answer *a = &k->q[k->n++];
	smp_make_response(copy, 0);
	memcpy(a->mad, copy, len);
	a->len = len;
	a->from = *to;
	return 0;
}

/* A switch's LinearFDBTop raised to t->max_lid, in wave. */
static int raise_top(struct plan *p, int wave, const struct discovery *d,
		     struct devcache *c, uint32_t node, uint32_t top)
{
	uint8_t si[SMP_DATA_SIZE];
	devcache_observe_switch(c, &d->f, node);
	memcpy(si, d->si_raw[node], SMP_DATA_SIZE);	/* PortStateChange as read */
	mad_set_field(si, 0, IB_SW_LINEAR_FDB_TOP_F, top);
	/* MulticastFDBTop as it holds it now (sm/write/plan_mcast.c may have moved it) */
	mad_set_field(si, 0, IB_SW_MCAST_FDB_TOP_F, d->f.nodes[node].mft_top);
	uint32_t di = plan_data(p, wave, si);
	return di == UINT32_MAX ||
	       !plan_add(p, wave, PLAN_SWITCHINFO, node, 0, 0, di) ? -1 : 0;
}

int mig_plan_build(struct plan *p, const struct discovery *d,
		   struct devcache *c, const struct lft_tables *t,
		   const struct migration *m, unsigned flags)
{
	const struct fabric *f = &d->f;
	uint8_t *first = NULL;	/* per row: the wave of its first block + 1 */

	plan_set_tables(p, t);
	if (flags & MIGPLAN_RAISE_TOP) {
		first = calloc((size_t)t->n_sw + 1, 1);
		if (!first)
			return -1;
		for (uint32_t i = 0; i < m->n_w; i++)
			if (!first[m->w[i].row] || first[m->w[i].row] > m->w[i].wave + 1)
				first[m->w[i].row] = (uint8_t)(m->w[i].wave + 1);
	}
	for (int w = 0; w < (int)m->waves; w++) {
		for (uint32_t r = 0; first && r < t->n_sw; r++) {
			uint32_t node = t->sw_node[r];
			int fw = first[r] ? first[r] - 1 : 0;
			if (fw == w && f->nodes[node].lft_top < t->max_lid &&
			    raise_top(p, w, d, c, node, t->max_lid) < 0)
				goto nomem;
		}
		for (uint32_t i = 0; i < m->n_w; i++) {
			if (m->w[i].wave != w)
				continue;
			uint32_t node = t->sw_node[m->w[i].row];
			struct plan_op *op;
			if (m->w[i].mixed) {	/* entries not yet due as before */
				uint8_t blk[SMP_DATA_SIZE], now[FAB_LFT_BLOCK];
				uint32_t lo = m->w[i].block * FAB_LFT_BLOCK;
				memset(now, LFT_DROP, sizeof(now));
				for (uint32_t e = lo; e <= t->max_lid && e < lo + FAB_LFT_BLOCK; e++)
					now[e - lo] = lft_row(t, m->w[i].row)[e];
				migrate_payload(m, &m->w[i], now, blk);
				uint32_t di = plan_data(p, w, blk);
				op = di == UINT32_MAX ? NULL :
				     plan_add(p, w, PLAN_LFT, node, 0, m->w[i].block, di);
			} else {
				op = plan_add_lft_row(p, w, node, m->w[i].row,
						      m->w[i].block, 1);
			}
			if (!op)
				goto nomem;
			if (flags & MIGPLAN_LID_ROUTED)
				op->lid = fabric_portp(f, node, 0)->lid;
		}
	}
	free(first);
	return 0;
nomem:
	free(first);
	return -1;
}

static void count_close(void *ctx)
{
	(void)ctx;
}

static void on_done(void *arg, const struct program_stats *s)
{
	struct counter *k = arg;
	k->c->waves = s->waves;
	k->c->failed = s->failed;
	k->done = 1;
}

int migcount_run(struct fabric *f, const struct lft_tables *t,
		 const struct migration *m, struct mig_count *out, char *err,
		 size_t errlen)
{
	struct counter k = { .f = f, .t = t, .m = m, .c = out };
	struct mad_transport tr = { .ctx = &k, .send = count_send,
				    .close = count_close };
	struct txn_params tp = { .timeout_ms = 1000, .retries = 0,
				 .window = 256, .window_per_node = 16 };
	struct discovery d;
	struct plan p;
	struct txn_engine *txn = NULL;
	struct devcache *c = NULL;
	struct program *pr = NULL;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	memset(&d, 0, sizeof(d));
	d.f = *f;	/* the executor's model: the same arrays, not freed here */
	plan_init(&p);
	k.seen = calloc((size_t)f->max_lid + 1, 1);
	txn = txn_new(&tp, &tr, txn_clock, NULL);
	c = devcache_new();
	if (!k.seen || !txn || !c)
		goto nomem;
	if (mig_plan_build(&p, &d, c, t, m, MIGPLAN_LID_ROUTED) < 0)
		goto nomem;
	plan_seal(&p);
	uint64_t t0 = clock_us();
	pr = program_run(txn, &d, &p, c, 0, NULL, on_done, &k);
	if (!pr)
		goto nomem;
	while (k.head < k.n && !k.nomem) {
		struct answer a = k.q[k.head++];
		txn_recv(txn, a.mad, a.len, &a.from, 0);
	}
	out->run_us = clock_us() - t0;
	if (k.nomem)
		goto nomem;
	if (k.bad) {
		snprintf(err, errlen, "counting transport: %s", k.why);
		goto out;
	}
	if (!k.done || out->failed) {
		snprintf(err, errlen, "counting transport: the plan %s",
			 k.done ? "had failed writes" : "never ended");
		goto out;
	}
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	if (pr)
		program_free(pr);
	if (txn) {
		txn_cancel_all(txn);
		txn_free(txn);
	}
	devcache_free(c);
	plan_free(&p);
	free(k.seen);
	free(k.q);
	*f = d.f;	/* what the executor updated (LinearFDBTop, ...) */
	return rc;
}
