/*
 * Write plans (sm/write/plan.c) run by the executor (sm/write/program.c) on the
 * emulator: waves in order, the device cache diff, failures.
 *
 * Fabric: four switches in a line, S0 - S1 - S2 - S3, two hosts on each;
 * the SM is on H0 (S0's port 1).  Discovery runs first, with the real
 * code, to give the executor its model; then every MAD the client sends
 * and receives is recorded in one sequence, so that "sent before that
 * answer" is a comparison of two numbers.
 */
#include <check.h>
#include <event2/event.h>
#include <infiniband/mad.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/emu/emu.h"
#include "mad/smp.h"
#include "sm/write/devcache.h"
#include "sm/base/log.h"
#include "sm/write/program.h"
#include "sm/base/topo.h"

#define NSW 4
#define SW_GUID(i) (0x5000ULL + (uint64_t)(i))

static char *line_text(void)
{
	size_t cap = 8192, n = 0;
	char *t = malloc(cap);
	ck_assert_ptr_nonnull(t);
#define PUT(...) (n += (size_t)snprintf(t + n, cap - n, __VA_ARGS__))
	for (int s = 0; s < NSW; s++) {
		PUT("switchguid=0x%llx\nSwitch\t6 \"S%d\"\n",
		    (unsigned long long)SW_GUID(s), s);
		PUT("[1]\t\"H%d\"[1]\n[2]\t\"H%d\"[1]\n", 2 * s, 2 * s + 1);
		if (s > 0)
			PUT("[3]\t\"S%d\"[4]\n", s - 1);
		if (s < NSW - 1)
			PUT("[4]\t\"S%d\"[3]\n", s + 1);
		PUT("\n");
	}
	for (int h = 0; h < 2 * NSW; h++)
		PUT("caguid=0x%x\nHca\t1 \"H%d\"\n[1]\t\"S%d\"[%d]\n\n",
		    0x6000 + 4 * h, h, h / 2, h % 2 + 1);
#undef PUT
	ck_assert_uint_lt(n, cap);
	return t;
}

/* One MAD the client sent or received, in the order it happened. */
struct event_rec {
	int sent;		/* 1: sent; 0: received */
	int method;
	uint16_t attr;
	uint32_t mod;
};

#define MAX_EVENTS 4096

struct bench {
	struct fabric topo;
	struct emu *e;
	struct event_base *base;
	struct mad_transport tr;
	int (*emu_send)(void *, const uint8_t *, size_t, const struct mad_addr *);
	struct txn_engine *txn;
	struct event *timer;
	struct discovery *d;
	struct devcache *c;
	int recording;
	struct event_rec ev[MAX_EVENTS];
	int n_ev;
	int sets_sent;
	int finished;
	struct program_stats st;
};

static uint64_t now_ms(void *arg)
{
	struct timespec ts;
	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void record(struct bench *b, int sent, const uint8_t *mad)
{
	if (!b->recording)
		return;
	ck_assert_int_lt(b->n_ev, MAX_EVENTS);
	struct event_rec *r = &b->ev[b->n_ev++];
	r->sent = sent;
	r->method = smp_method(mad);
	r->attr = smp_attr(mad);
	r->mod = smp_attr_mod(mad);
	if (sent && r->method == IB_MAD_METHOD_SET)
		b->sets_sent++;
}

/* The emulator's send, with a record of what goes. */
static struct bench *the_bench;
static int send_recorded(void *ctx, const uint8_t *mad, size_t len,
			 const struct mad_addr *to)
{
	record(the_bench, 1, mad);
	return the_bench->emu_send(ctx, mad, len, to);
}

static void on_mad(void *arg, const uint8_t *mad, size_t len,
		   const struct mad_addr *from, int status)
{
	struct bench *b = arg;
	record(b, 0, mad);
	txn_recv(b->txn, mad, len, from, status);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct bench *b = arg;
	(void)fd;
	(void)what;
	txn_expire(b->txn);
}

static void arm(void *arg, int64_t deadline)
{
	struct bench *b = arg;
	if (deadline < 0) {
		event_del(b->timer);
		return;
	}
	uint64_t now = now_ms(NULL);
	uint64_t ms = (uint64_t)deadline > now ? (uint64_t)deadline - now : 0;
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };
	event_add(b->timer, &tv);
}

static void on_discovered(void *arg, struct discovery *d)
{
	struct bench *b = arg;
	b->d = d;
	event_base_loopbreak(b->base);
}

/* The emulator, a client with a transaction table, and a discovered model. */
static struct bench *bench_new(uint32_t latency_us, uint32_t jitter_us)
{
	char err[256] = "", *text = line_text();
	struct bench *b = calloc(1, sizeof(*b));
	ck_assert_ptr_nonnull(b);
	the_bench = b;
	log_set_level(LOG_ERROR);
	fabric_init(&b->topo);
	ck_assert_msg(topo_parse_string(&b->topo, text, "line.net", err, sizeof(err)) == 0,
		      "%s", err);
	free(text);
	b->e = emu_new(&b->topo, err, sizeof(err));
	ck_assert_msg(b->e != NULL, "%s", err);
	emu_set_seed(b->e, 7);
	emu_set_latency(b->e, latency_us, jitter_us);
	b->base = event_base_new();
	ck_assert_ptr_nonnull(b->base);
	ck_assert_msg(emu_attach(b->e, b->base, 0, &b->tr, on_mad, b, err, sizeof(err)) == 0,
		      "%s", err);
	b->emu_send = b->tr.send;
	b->tr.send = send_recorded;
	struct txn_params tp = { .timeout_ms = 20, .retries = 1, .window = 256,
				 .window_per_node = 64 };
	b->txn = txn_new(&tp, &b->tr, now_ms, NULL);
	ck_assert_ptr_nonnull(b->txn);
	b->timer = event_new(b->base, -1, 0, on_timer, b);
	txn_set_arm(b->txn, arm, b);
	ck_assert_ptr_nonnull(discovery_start(b->txn, 1, NULL, on_discovered, b));
	ck_assert_int_eq(event_base_dispatch(b->base), 0);
	ck_assert_ptr_nonnull(b->d);
	ck_assert_uint_eq(b->d->f.n_nodes, 3 * NSW);
	b->c = devcache_new();
	ck_assert_ptr_nonnull(b->c);
	return b;
}

static void bench_free(struct bench *b)
{
	txn_set_arm(b->txn, NULL, NULL);
	txn_cancel_all(b->txn);
	txn_free(b->txn);
	discovery_free(b->d);
	devcache_free(b->c);
	b->tr.close(b->tr.ctx);
	event_free(b->timer);
	emu_free(b->e);
	event_base_free(b->base);
	fabric_free(&b->topo);
	free(b);
}

static void on_done(void *arg, const struct program_stats *st)
{
	struct bench *b = arg;
	b->st = *st;
	b->finished = 1;
	event_base_loopbreak(b->base);
}

/* Runs p to its end, recording; returns the Sets it sent. */
static int run_plan(struct bench *b, struct plan *p)
{
	b->n_ev = 0;
	b->sets_sent = 0;
	b->finished = 0;
	b->recording = 1;
	struct program *pr = program_run(b->txn, b->d, p, b->c, 1, NULL, on_done, b);
	ck_assert_ptr_nonnull(pr);
	if (!b->finished)
		ck_assert_int_eq(event_base_dispatch(b->base), 0);
	ck_assert_msg(b->finished, "the plan never ended");
	b->recording = 0;
	program_free(pr);
	return b->sets_sent;
}

static uint32_t sw_node(const struct bench *b, int i)
{
	uint32_t n = fabric_find_node(&b->d->f, SW_GUID(i));
	ck_assert_uint_ne(n, FAB_NONE);
	return n;
}

#define LFT_BLOCKS 3	/* LIDs 0..191 */

/*
 * Three waves on every switch: SwitchInfo (LinearFDBTop), LFT blocks
 * (explicit payloads), PortInfo of port 0 (LID 10 + i).
 */
static void three_waves(struct bench *b, struct plan *p)
{
	for (int i = 0; i < NSW; i++) {
		uint32_t n = sw_node(b, i);
		uint8_t data[64];
		memcpy(data, b->d->si_raw[n], 64);
		mad_set_field(data, 0, IB_SW_LINEAR_FDB_TOP_F, LFT_BLOCKS * 64 - 1);
		mad_set_field(data, 0, IB_SW_STATE_CHANGE_F, 0);
		ck_assert_ptr_nonnull(plan_add(p, 0, PLAN_SWITCHINFO, n, 0, 0,
					       plan_data(p, 0, data)));
		for (uint32_t blk = 0; blk < LFT_BLOCKS; blk++) {
			memset(data, (int)(1 + (i + blk) % 4), 64);
			ck_assert_ptr_nonnull(plan_add(p, 1, PLAN_LFT, n, 0, blk,
						       plan_data(p, 1, data)));
		}
		uint32_t pi = b->d->f.nodes[n].first_port;
		memcpy(data, b->d->pi_raw[pi], 64);
		smp_pi_prepare_set(data);
		smp_pi_set(data, IB_PORT_LID_F, 10 + (uint32_t)i);
		smp_pi_set(data, IB_PORT_SMLID_F, 1);
		ck_assert_ptr_nonnull(plan_add(p, 2, PLAN_PORTINFO, n, 0, 0,
					       plan_data(p, 2, data)));
	}
	plan_seal(p);
}

/* The wave an attribute belongs to in three_waves(). */
static int wave_of(uint16_t attr)
{
	return attr == IB_ATTR_SWITCH_INFO ? 0 :
	       attr == IB_ATTR_LINEARFORWTBL ? 1 :
	       attr == IB_ATTR_PORT_INFO ? 2 : -1;
}

static void assert_devices_hold_three_waves(const struct bench *b)
{
	for (int i = 0; i < NSW; i++) {
		ck_assert_int_eq(emu_lft_top(b->e, SW_GUID(i)), LFT_BLOCKS * 64 - 1);
		for (uint32_t blk = 0; blk < LFT_BLOCKS; blk++)
			ck_assert_int_eq(emu_lft_entry(b->e, SW_GUID(i), blk * 64 + 5),
					 1 + (i + (int)blk) % 4);
		ck_assert_int_eq(emu_port_lid(b->e, SW_GUID(i), 0), 10 + i);
	}
	ck_assert_uint_eq(emu_violations(b->e), 0);
}

START_TEST(t_waves_in_order)
{
	/* latency with jitter: answers come back late and out of order */
	struct bench *b = bench_new(200, 400);
	struct plan p;
	plan_init(&p);
	three_waves(b, &p);
	ck_assert_int_eq(run_plan(b, &p), NSW * (2 + LFT_BLOCKS));
	/* the last answer of each wave, the first Set of the next */
	int last_answer[3] = { -1, -1, -1 }, first_send[3] = { -1, -1, -1 };
	int answers[3] = { 0 };
	for (int k = 0; k < b->n_ev; k++) {
		int w = wave_of(b->ev[k].attr);
		ck_assert_int_ge(w, 0);
		if (b->ev[k].sent && first_send[w] < 0)
			first_send[w] = k;
		if (!b->ev[k].sent) {
			last_answer[w] = k;
			answers[w]++;
		}
	}
	ck_assert_int_eq(answers[0], NSW);
	ck_assert_int_eq(answers[1], NSW * LFT_BLOCKS);
	ck_assert_int_eq(answers[2], NSW);
	for (int w = 0; w < 2; w++)
		ck_assert_msg(last_answer[w] < first_send[w + 1],
			      "wave %d sent its first MAD (event %d) before wave %d's last answer (event %d)",
			      w + 1, first_send[w + 1], w, last_answer[w]);
	/* within a wave everything went out at once: the window, not the answers */
	int sends_before_answer = 0;
	for (int k = 0; k < b->n_ev && b->ev[k].sent; k++)
		sends_before_answer++;
	ck_assert_int_eq(sends_before_answer, NSW);
	ck_assert_uint_eq(b->st.waves, 3);
	ck_assert_uint_eq(b->st.switchinfo_sets, NSW);
	ck_assert_uint_eq(b->st.lft_blocks, NSW * LFT_BLOCKS);
	ck_assert_uint_eq(b->st.portinfo_sets, NSW);
	ck_assert_uint_eq(b->st.failed, 0);
	assert_devices_hold_three_waves(b);
	plan_free(&p);
	bench_free(b);
}
END_TEST

START_TEST(t_all_cached_sends_nothing)
{
	struct bench *b = bench_new(0, 0);
	struct plan p;
	plan_init(&p);
	three_waves(b, &p);
	ck_assert_int_eq(run_plan(b, &p), NSW * (2 + LFT_BLOCKS));
	/* the same plan again: the cache says the devices hold all of it */
	ck_assert_int_eq(run_plan(b, &p), 0);
	ck_assert_int_eq(b->n_ev, 0);
	ck_assert_uint_eq(b->st.unchanged, NSW * (2 + LFT_BLOCKS));
	ck_assert_uint_eq(b->st.waves, 3);
	/* a plan built afresh with the same payloads: the same */
	struct plan q;
	plan_init(&q);
	three_waves(b, &q);
	ck_assert_int_eq(run_plan(b, &q), 0);
	assert_devices_hold_three_waves(b);
	plan_free(&q);
	plan_free(&p);
	bench_free(b);
}
END_TEST

START_TEST(t_half_cached_sends_the_other_half)
{
	struct bench *b = bench_new(0, 0);
	struct lft_tables t;
	uint32_t max_lid = b->d->f.max_lid;
	b->d->f.max_lid = 150;	/* three blocks, the last one partly dropped */
	ck_assert_int_eq(lft_tables_alloc(&t, &b->d->f), 0);
	b->d->f.max_lid = max_lid;
	for (uint32_t r = 0; r < t.n_sw; r++)
		for (uint32_t l = 0; l <= t.max_lid; l++)
			lft_row(&t, r)[l] = (uint8_t)(1 + (r + l) % 4);
	uint32_t blocks = t.max_lid / 64 + 1;
	ck_assert_uint_eq(blocks, 3);
	/* first the even switches' tables, as runs of their rows */
	struct plan half;
	plan_init(&half);
	plan_set_tables(&half, &t);
	for (uint32_t r = 0; r < t.n_sw; r += 2)
		ck_assert_ptr_nonnull(plan_add_lft_row(&half, 0, t.sw_node[r], r, 0, blocks));
	plan_seal(&half);
	int first = run_plan(b, &half);
	ck_assert_int_eq(first, (int)(((t.n_sw + 1) / 2) * blocks));
	/* then every switch's: only the odd switches' blocks go */
	struct plan all;
	plan_init(&all);
	plan_set_tables(&all, &t);
	for (uint32_t r = 0; r < t.n_sw; r++)
		ck_assert_ptr_nonnull(plan_add_lft_row(&all, 0, t.sw_node[r], r, 0, blocks));
	plan_seal(&all);
	ck_assert_uint_eq(plan_mads(&all), t.n_sw * blocks);
	ck_assert_int_eq(run_plan(b, &all), (int)(t.n_sw * blocks) - first);
	ck_assert_uint_eq(b->st.unchanged, (uint32_t)first);
	for (int k = 0; k < b->n_ev; k++)
		ck_assert_int_eq(b->ev[k].attr, IB_ATTR_LINEARFORWTBL);
	for (uint32_t r = 0; r < t.n_sw; r++) {
		uint64_t g = b->d->f.nodes[t.sw_node[r]].guid;
		ck_assert_int_eq(emu_lft_entry(b->e, g, 1), lft_row(&t, r)[1]);
		ck_assert_int_eq(emu_lft_entry(b->e, g, 150), lft_row(&t, r)[150]);
		ck_assert_int_eq(emu_lft_entry(b->e, g, 151), LFT_DROP);
	}
	plan_free(&all);
	plan_free(&half);
	lft_tables_free(&t);
	bench_free(b);
}
END_TEST

/*
 * A dead switch in wave 0: its write fails after the retries, it is
 * counted, and the next waves go on without writing to it again -- or,
 * with stop_on_failure, the plan ends after wave 0.
 */
static void dead_switch(int stop)
{
	struct bench *b = bench_new(0, 0);
	ck_assert_int_eq(emu_set_dead(b->e, SW_GUID(NSW - 1), 0, 1), 0);
	struct plan p;
	plan_init(&p);
	three_waves(b, &p);
	p.stop_on_failure = stop;
	int sent = run_plan(b, &p);
	ck_assert_uint_ge(b->st.failed, 1);
	ck_assert_uint_eq(b->st.failed_ports, 1);
	ck_assert_int_eq(b->st.stopped, stop);
	int later = 0;
	for (int k = 0; k < b->n_ev; k++)
		if (b->ev[k].sent && wave_of(b->ev[k].attr) > 0)
			later++;
	if (stop) {
		ck_assert_int_eq(later, 0);
		ck_assert_uint_eq(b->st.waves, 1);
		ck_assert_int_eq(emu_lft_top(b->e, SW_GUID(0)), LFT_BLOCKS * 64 - 1);
		ck_assert_int_eq(emu_port_lid(b->e, SW_GUID(0), 0), 0);
	} else {
		/* the live switches got everything; the dead one was not asked again */
		ck_assert_int_eq(later, (NSW - 1) * (LFT_BLOCKS + 1));
		ck_assert_uint_eq(b->st.held, LFT_BLOCKS + 1);
		ck_assert_uint_eq(b->st.waves, 3);
		for (int i = 0; i < NSW - 1; i++)
			ck_assert_int_eq(emu_port_lid(b->e, SW_GUID(i), 0), 10 + i);
	}
	/* wave 0: NSW SwitchInfo, the dead one's sent 1 + retries + extra round */
	ck_assert_int_ge(sent, NSW + 1);
	plan_free(&p);
	bench_free(b);
}

START_TEST(t_failed_wave_goes_on)
{
	dead_switch(0);
}
END_TEST

START_TEST(t_failed_wave_stops)
{
	dead_switch(1);
}
END_TEST

/* A plan that grows while it runs: wave 1 waits until wave 0 is closed. */
START_TEST(t_open_wave_waits)
{
	struct bench *b = bench_new(0, 0);
	struct plan p;
	plan_init(&p);
	uint32_t n = sw_node(b, 1);
	uint8_t data[64];
	memset(data, 2, 64);
	plan_add(&p, 0, PLAN_LFT, n, 0, 0, plan_data(&p, 0, data));
	memset(data, 3, 64);
	plan_add(&p, 1, PLAN_LFT, n, 0, 1, plan_data(&p, 1, data));
	b->n_ev = b->sets_sent = b->finished = 0;
	b->recording = 1;
	struct program *pr = program_run(b->txn, b->d, &p, b->c, 1, NULL, on_done, b);
	ck_assert_ptr_nonnull(pr);
	/* let the loop run dry: wave 0 answered, still open */
	while (emu_pending(b->e) || txn_inflight(b->txn))
		event_base_loop(b->base, EVLOOP_ONCE);
	ck_assert_int_eq(b->sets_sent, 1);
	ck_assert_int_eq(b->finished, 0);
	memset(data, 4, 64);
	plan_add(&p, 0, PLAN_LFT, n, 0, 2, plan_data(&p, 0, data));
	plan_close_wave(&p, 0);
	program_kick(pr);
	while (emu_pending(b->e) || txn_inflight(b->txn))
		event_base_loop(b->base, EVLOOP_ONCE);
	ck_assert_int_eq(b->sets_sent, 3);
	ck_assert_int_eq(b->finished, 0);	/* not sealed */
	plan_seal(&p);
	program_kick(pr);
	ck_assert_int_eq(b->finished, 1);
	ck_assert_uint_eq(b->st.lft_blocks, 3);
	ck_assert_int_eq(emu_lft_entry(b->e, SW_GUID(1), 64 + 1), 3);
	ck_assert_int_eq(emu_lft_entry(b->e, SW_GUID(1), 128 + 1), 4);
	program_free(pr);
	plan_free(&p);
	bench_free(b);
}
END_TEST

/* An SL2VL (or other) write of one payload byte pattern, for the cache. */
static struct plan_op cache_op(int kind, uint32_t node, uint8_t port,
			       uint32_t mod)
{
	struct plan_op o;
	memset(&o, 0, sizeof(o));
	o.kind = (uint8_t)kind;
	o.node = node;
	o.port = port;
	o.mod = mod;
	o.count = 1;
	return o;
}

static int holds(const struct devcache *c, const struct fabric *f,
		 uint32_t node, int kind, uint8_t port, uint32_t mod, uint8_t fill)
{
	uint8_t d[64];
	memset(d, fill, sizeof(d));
	struct plan_op o = cache_op(kind, node, port, mod);
	return devcache_holds(c, f, &o, mod, d);
}

static void put(struct devcache *c, const struct fabric *f, uint32_t node,
		int kind, uint8_t port, uint32_t mod, uint8_t fill)
{
	uint8_t d[64];
	memset(d, fill, sizeof(d));
	struct plan_op o = cache_op(kind, node, port, mod);
	devcache_record(c, f, &o, mod, d);
}

/*
 * The device cache and a switch's SL2VL Set for many pairs (modifier
 * bits 17/16, sm/write/plan.h): every pair it wrote is recorded, port 0, in ==
 * out and unlinked ports included, over the records there were (a pair
 * written alone before, the P_Key and VLArb records of the same switch
 * kept); it is held only when every pair it names holds the payload.
 */
START_TEST(t_cache_sl2vl_many_pairs)
{
	struct fabric f;
	char err[256] = "", *text = line_text();
	fabric_init(&f);
	ck_assert_msg(topo_parse_string(&f, text, "line.net", err, sizeof(err)) == 0,
		      "%s", err);
	free(text);
	uint32_t s1 = fabric_find_node(&f, SW_GUID(1));	/* 6 ports */
	struct devcache *c = devcache_new();
	ck_assert_ptr_nonnull(c);
	put(c, &f, s1, PLAN_PKEY, 0, 0, 0x11);
	put(c, &f, s1, PLAN_VLARB, 3, 1u << 16 | 3, 0x22);
	put(c, &f, s1, PLAN_SL2VL, 0, 1 << 8 | 2, 0x33);
	ck_assert(!holds(c, &f, s1, PLAN_SL2VL, 0, SL2VL_ALL_IN | SL2VL_ALL_OUT, 0x44));

	put(c, &f, s1, PLAN_SL2VL, 0, SL2VL_ALL_IN | SL2VL_ALL_OUT, 0x44);
	ck_assert(holds(c, &f, s1, PLAN_SL2VL, 0, SL2VL_ALL_IN | SL2VL_ALL_OUT, 0x44));
	for (unsigned in = 0; in <= 6; in++)
		for (unsigned out = 0; out <= 6; out++)
			ck_assert_msg(holds(c, &f, s1, PLAN_SL2VL, 0, in << 8 | out, 0x44),
				      "pair (%u, %u)", in, out);
	ck_assert(holds(c, &f, s1, PLAN_PKEY, 0, 0, 0x11));
	ck_assert(holds(c, &f, s1, PLAN_VLARB, 3, 1u << 16 | 3, 0x22));
	/* another switch: nothing */
	ck_assert(!holds(c, &f, fabric_find_node(&f, SW_GUID(2)), PLAN_SL2VL, 0,
			 1 << 8 | 2, 0x44));

	/* every input towards output 2 */
	put(c, &f, s1, PLAN_SL2VL, 0, SL2VL_ALL_IN | 2, 0x55);
	ck_assert(holds(c, &f, s1, PLAN_SL2VL, 0, SL2VL_ALL_IN | 2, 0x55));
	ck_assert(!holds(c, &f, s1, PLAN_SL2VL, 0, SL2VL_ALL_IN | SL2VL_ALL_OUT, 0x44));
	ck_assert(holds(c, &f, s1, PLAN_SL2VL, 0, 5 << 8 | 2, 0x55));
	ck_assert(holds(c, &f, s1, PLAN_SL2VL, 0, 5 << 8 | 3, 0x44));
	ck_assert(holds(c, &f, s1, PLAN_SL2VL, 0, SL2VL_ALL_IN | 3, 0x44));
	/* one pair of it changes: the bit-17 Set is no longer held */
	put(c, &f, s1, PLAN_SL2VL, 0, 4 << 8 | 2, 0x66);
	ck_assert(!holds(c, &f, s1, PLAN_SL2VL, 0, SL2VL_ALL_IN | 2, 0x55));
	devcache_free(c);
	fabric_free(&f);
}
END_TEST

static Suite *plan_suite(void)
{
	Suite *s = suite_create("plan");
	TCase *tc = tcase_create("plan");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, t_waves_in_order);
	tcase_add_test(tc, t_all_cached_sends_nothing);
	tcase_add_test(tc, t_half_cached_sends_the_other_half);
	tcase_add_test(tc, t_failed_wave_goes_on);
	tcase_add_test(tc, t_failed_wave_stops);
	tcase_add_test(tc, t_open_wave_waits);
	tcase_add_test(tc, t_cache_sl2vl_many_pairs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(plan_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
