/* Reading back what the SM wrote, and writing again what differs (scrub.h). */
#include "sm/write/scrub.h"

#include <infiniband/mad.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/smp.h"
#include "sm/base/log.h"
#include "sm/base/nodemap.h"
#include "sm/write/plan.h"
#include "sm/write/program.h"

/* At most this many differing entries are named in a block's line. */
#define SCRUB_NAMED 4
/* Lines per interval about differing blocks: a table rewritten whole is one burst. */
#define SCRUB_LOG_BURST 8
#define SCRUB_LOG_MS 10000

/* A block found differing: what the device answered. */
struct finding {
	uint32_t node;
	struct devcache_item it;	/* what the SM wrote */
	uint8_t read[SMP_DATA_SIZE];	/* what the device holds */
};

struct scrub_q {
	struct scrub *s;
	uint32_t round;
	uint32_t node;
	struct devcache_item it;
};

struct scrub {
	/* the round under way */
	struct txn_engine *txn;
	struct discovery *d;
	struct devcache *c;
	struct scrub_hooks h;
	int extra_rounds;
	uint32_t round;		/* answers of another round are dropped */
	int reading;
	uint32_t budget, sent, pending;
	struct scrub_round r;
	struct finding *found;
	uint32_t n_found, cap_found;
	/* the repairs */
	struct plan plan;
	struct program *pr;
	/* kept between rounds */
	uint64_t cursor;
	uint32_t found_in_pass;
	struct scrub_stats st;
};

struct scrub *scrub_new(void)
{
	struct scrub *s = calloc(1, sizeof(*s));
	if (s)
		plan_init(&s->plan);
	return s;
}

void scrub_free(struct scrub *s)
{
	if (!s)
		return;
	program_free(s->pr);
	plan_free(&s->plan);
	free(s->found);
	free(s);
}

const struct scrub_stats *scrub_get_stats(const struct scrub *s)
{
	return s ? &s->st : NULL;
}

static void op_of_item(const struct devcache_item *it, uint32_t node,
		       struct plan_op *op)
{
	memset(op, 0, sizeof(*op));
	op->node = node;
	op->kind = (uint8_t)it->kind;
	op->port = it->port;
	op->mod = it->mod;
	op->count = 1;
}

static uint16_t item_attr(const struct devcache_item *it, uint32_t node)
{
	struct plan_op op;
	op_of_item(it, node, &op);
	return plan_attr(&op);
}

/* "LID 18: port 0 (written 3)" for the entries of a block that differ. */
static void name_entries(const struct finding *x, char *buf, size_t len)
{
	const uint8_t *w = x->it.data, *r = x->read;
	size_t used = 0;
	unsigned named = 0, differ = 0;
	buf[0] = '\0';
	if (x->it.kind == PLAN_SL2VL) {
		snprintf(buf, len, "SL->VL %02x%02x%02x%02x%02x%02x%02x%02x, written %02x%02x%02x%02x%02x%02x%02x%02x",
			 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7],
			 w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]);
		return;
	}
	/* LFT: a byte per LID; P_Key and MFT: 16 bits per entry */
	unsigned width = x->it.kind == PLAN_LFT ? 1 : 2;
	for (unsigned i = 0; i < SMP_DATA_SIZE; i += width) {
		unsigned a = width == 1 ? r[i] : (unsigned)r[i] << 8 | r[i + 1];
		unsigned b = width == 1 ? w[i] : (unsigned)w[i] << 8 | w[i + 1];
		if (a == b)
			continue;
		differ++;
		if (named == SCRUB_NAMED || used >= len)
			continue;
		int n;
		if (x->it.kind == PLAN_LFT)
			n = snprintf(buf + used, len - used, "%sLID %u: port %u (written %u)",
				     named ? ", " : "", x->it.mod * FAB_LFT_BLOCK + i, a, b);
		else if (x->it.kind == PLAN_MFT)
			n = snprintf(buf + used, len - used, "%sMLID 0x%04x: mask 0x%04x (written 0x%04x)",
				     named ? ", " : "",
				     FAB_MLID_BASE + (x->it.mod & 0x1ff) * 32 + i / 2, a, b);
		else
			n = snprintf(buf + used, len - used, "%sentry %u: 0x%04x (written 0x%04x)",
				     named ? ", " : "", (x->it.mod & 0xffff) * 32 + i / 2, a, b);
		if (n > 0)
			used += (size_t)n;
		named++;
	}
	if (differ > named && used < len)
		snprintf(buf + used, len - used, " and %u more", differ - named);
}

/* The block in words: "LFT block 0 (LIDs 0-63)". */
static void name_block(const struct finding *x, char *buf, size_t len)
{
	uint32_t m = x->it.mod;
	switch (x->it.kind) {
	case PLAN_LFT:
		snprintf(buf, len, "LFT block %u (LIDs %u-%u)", m, m * FAB_LFT_BLOCK,
			 m * FAB_LFT_BLOCK + FAB_LFT_BLOCK - 1);
		return;
	case PLAN_PKEY:
		snprintf(buf, len, "port %u P_Key block %u", x->it.port, m & 0xffff);
		return;
	case PLAN_SL2VL:
		snprintf(buf, len, "port %u SL2VL table (in %u, out %u)", x->it.port,
			 (m >> 8) & 0xff, m & 0xff);
		return;
	default:
		snprintf(buf, len, "MFT block %u position %u (MLIDs 0x%04x-0x%04x)",
			 m & 0x1ff, m >> 28, FAB_MLID_BASE + (m & 0x1ff) * 32,
			 FAB_MLID_BASE + (m & 0x1ff) * 32 + 31);
		return;
	}
}

static void report(const struct scrub *s, const struct finding *x)
{
	const struct fabric *f = &s->d->f;
	const struct fab_node *n = &f->nodes[x->node];
	char block[96], entries[320];
	name_block(x, block, sizeof(block));
	name_entries(x, entries, sizeof(entries));
	log_limited_by(SCRUB_LOG_BURST, SCRUB_LOG_MS, LOG_WARN,
		       "tampering: %s 0x%016" PRIx64 " \"%s\" (LID %u) %s differs from what the SM wrote: %s; writing it again",
		       n->type == FAB_SWITCH ? "switch" : "node", n->guid,
		       fabric_node_name(f, x->node), f->ports[n->first_port].lid,
		       block, entries);
}

static void finish(struct scrub *s)
{
	struct scrub_round r = s->r;
	s->reading = 0;
	s->h.done(s->h.arg, &r);
}

static void on_repaired(void *arg, const struct program_stats *ps)
{
	struct scrub *s = arg;
	if (ps->cancelled)
		return;
	uint32_t ok = ps->lft_blocks + ps->pkey_sets + ps->other_sets;
	s->r.repaired = ok;
	s->r.failed = ps->failed;
	s->st.repaired += ok;
	finish(s);
}

/* Every block found is written again: the cache first learns what the device holds. */
static void repair(struct scrub *s)
{
	const struct fabric *f = &s->d->f;
	program_free(s->pr);
	s->pr = NULL;
	plan_free(&s->plan);
	plan_init(&s->plan);
	for (uint32_t i = 0; i < s->n_found; i++) {
		const struct finding *x = &s->found[i];
		devcache_note_read(s->c, f, x->it.kind, x->node, x->it.port, x->it.mod,
				   x->read);
		uint32_t di = plan_data(&s->plan, 0, x->it.data);
		if (di == UINT32_MAX ||
		    !plan_add(&s->plan, 0, x->it.kind, x->node, x->it.port, x->it.mod, di))
			break;
	}
	plan_seal(&s->plan);
	s->pr = program_run(s->txn, s->d, &s->plan, s->c, s->extra_rounds, NULL,
			    on_repaired, s);
	if (!s->pr) {
		log_err("scrub: out of memory starting the repairs; the next heavy sweep writes them");
		s->r.failed = s->n_found;
		finish(s);
	}
}

/* The round's reads are in (or it yielded). */
static void round_over(struct scrub *s)
{
	if (s->r.pass_over) {
		s->st.passes++;
		s->r.pass_clean = !s->found_in_pass;
		s->found_in_pass = 0;
	}
	if (s->n_found && !s->r.yielded) {
		repair(s);
		return;
	}
	/* cut short: the cache learns what the devices hold, the sweep writes it */
	for (uint32_t i = 0; i < s->n_found; i++) {
		const struct finding *x = &s->found[i];
		devcache_note_read(s->c, &s->d->f, x->it.kind, x->node, x->it.port,
				   x->it.mod, x->read);
	}
	finish(s);
}

static void send_more(struct scrub *s);

static void on_read(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct scrub_q *q = arg;
	struct scrub *s = q->s;
	if (!s->reading || q->round != s->round || status == TXN_CANCELLED) {
		free(q);	/* a round that ended: its block is read again later */
		return;
	}
	s->pending--;
	struct plan_op op;
	op_of_item(&q->it, q->node, &op);
	if (status != TXN_OK || len < SMP_DATA_OFFS + SMP_DATA_SIZE || smp_status(resp)) {
		s->st.read_failed++;
	} else if (!devcache_holds(s->c, &s->d->f, &op, q->it.mod, q->it.data)) {
		s->st.skipped++;	/* written meanwhile: not judged */
	} else {
		const uint8_t *data = resp + SMP_DATA_OFFS;
		s->st.reads++;
		s->r.read++;
		if (!devcache_item_same(&q->it, data)) {
			s->st.tampered++;
			s->found_in_pass++;
			s->r.found++;
			if (s->n_found == s->cap_found) {
				uint32_t cap = s->cap_found ? 2 * s->cap_found : 16;
				void *v = realloc(s->found, (size_t)cap * sizeof(*s->found));
				if (v) {
					s->found = v;
					s->cap_found = cap;
				}
			}
			if (s->n_found < s->cap_found) {
				struct finding *x = &s->found[s->n_found++];
				x->node = q->node;
				x->it = q->it;
				memcpy(x->read, data, SMP_DATA_SIZE);
				report(s, x);
			}
		}
	}
	free(q);
	send_more(s);
}

/* The next item whose node the model has, with its directed route; 0 at the end. */
static int next_item(struct scrub *s, struct scrub_q *q, uint8_t *path, int *hops)
{
	const struct fabric *f = &s->d->f;
	while (devcache_next_item(s->c, &s->cursor, &q->it)) {
		uint32_t node = guid_map_get(&f->node_by_guid, q->it.guid);
		if (node == FAB_NONE || node >= f->n_nodes || q->it.port > f->nodes[node].nports)
			continue;	/* gone, or another shape: the heavy sweep's */
		*hops = discovery_port_path(f, fabric_port(f, node, q->it.port), path);
		if (*hops < 0)
			continue;
		q->node = node;
		return 1;
	}
	s->r.pass_over = 1;
	return 0;
}

static void send_more(struct scrub *s)
{
	if (s->h.yield && s->h.yield(s->h.arg)) {
		if (!s->r.yielded) {
			s->r.yielded = 1;
			s->st.yielded++;
			s->round++;	/* the reads still out are dropped */
			s->pending = 0;
			round_over(s);
		}
		return;
	}
	while (s->pending < SCRUB_INFLIGHT && s->sent < s->budget && !s->r.pass_over) {
		struct scrub_q *q = malloc(sizeof(*q));
		uint8_t path[FAB_MAX_HOPS + 1];
		int hops;
		if (!q)
			break;
		if (!next_item(s, q, path, &hops)) {
			free(q);
			break;
		}
		q->s = s;
		q->round = s->round;
		uint8_t mad[MAD_SIZE];
		struct mad_addr to;
		smp_init_dr(mad, IB_MAD_METHOD_GET, item_attr(&q->it, q->node), q->it.mod,
			    path, hops);
		smp_dr_address(&to);
		s->sent++;
		if (txn_submit(s->txn, mad, sizeof(mad), &to, q->node, on_read, q) < 0) {
			s->st.read_failed++;
			free(q);
			continue;
		}
		s->pending++;
	}
	if (!s->pending)
		round_over(s);
}

int scrub_start(struct scrub *s, struct txn_engine *txn, struct discovery *d,
		struct devcache *c, uint32_t budget, int extra_rounds,
		const struct scrub_hooks *h)
{
	if (s->reading)
		return -1;
	s->txn = txn;
	s->d = d;
	s->c = c;
	s->h = *h;
	s->extra_rounds = extra_rounds;
	s->budget = budget;
	s->sent = s->pending = 0;
	s->n_found = 0;
	memset(&s->r, 0, sizeof(s->r));
	s->round++;
	s->reading = 1;
	s->st.rounds++;
	s->st.held = devcache_items(c);
	send_more(s);
	return 0;
}
