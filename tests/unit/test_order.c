/*
 * Ordered LFT transitions (reconfig/order.c): the writes of a change,
 * applied one Set at a time in the plan's order and in shuffled orders
 * within each wave, never leave a state that forwards a LID in a loop;
 * the same writes in one wave do, on the same fabrics.  Fresh switches
 * (every entry dropped) take one wave; blocks that wait for each other
 * are written once per wave of their entries.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconfig/order.h"
#include "routing/graph.h"
#include "routing_testlib.h"

extern const struct routing_engine updn_engine;
extern const struct routing_engine minhop_engine;
extern const struct routing_engine ftree_engine;

/* The switches' tables as they are, block by block. */
struct state {
	uint8_t *port;		/* t's layout */
	uint8_t *known;
	struct order_held h;
	uint32_t n_lid;
};

static void state_from(struct state *s, const struct lft_tables *t, int all_drop)
{
	s->n_lid = t->max_lid + 1;
	s->port = malloc((size_t)t->n_sw * s->n_lid);
	s->h.blocks = t->max_lid / FAB_LFT_BLOCK + 1;
	s->known = malloc((size_t)t->n_sw * s->h.blocks);
	ck_assert(s->port && s->known);
	if (all_drop)
		memset(s->port, LFT_DROP, (size_t)t->n_sw * s->n_lid);
	else
		memcpy(s->port, t->port, (size_t)t->n_sw * s->n_lid);
	memset(s->known, 1, (size_t)t->n_sw * s->h.blocks);
	s->h.port = s->port;
	s->h.known = s->known;
}

static void state_free(struct state *s)
{
	free(s->port);
	free(s->known);
}

/* The tables as s holds them, for the checks (t's rows and SL fields). */
static struct lft_tables as_tables(const struct lft_tables *t, const struct state *s)
{
	struct lft_tables x = *t;
	x.port = s->port;
	return x;
}

/* Does some switch forward some LID in a loop in state s? */
static int has_loop(const struct fabric *f, const struct lft_tables *t, const struct state *s)
{
	struct lft_tables x = as_tables(t, s);
	return lft_has_loop(f, &x);
}

static void apply(const struct lft_tables *t, struct state *s, const struct order_result *r,
		  const struct order_held *planned_from, uint32_t i)
{
	uint8_t blk[FAB_LFT_BLOCK];
	order_payload(t, planned_from, r, i, blk);
	const struct order_write *w = &r->w[i];
	for (uint32_t k = 0; k < FAB_LFT_BLOCK; k++) {
		uint32_t lid = w->block * FAB_LFT_BLOCK + k;
		if (lid < s->n_lid)
			s->port[(size_t)w->row * s->n_lid + lid] = blk[k];
	}
}

struct walk {
	uint32_t sets, loops, cycles;	/* states seen, with a loop, with a cycle */
};

/*
 * Applies r's writes to a copy of the held state, wave by wave, each wave
 * in a shuffled order (seed; 0: the plan's order), checking every state.
 */
static struct walk walk(const struct fabric *f, const struct lft_tables *t,
			const struct state *held, const struct order_result *r,
			unsigned seed, int cdg)
{
	struct walk out = { 0 };
	struct state s;
	state_from(&s, t, 0);
	memcpy(s.port, held->port, (size_t)t->n_sw * s.n_lid);
	uint32_t *idx = malloc((r->n_w + 1) * sizeof(*idx));
	ck_assert_ptr_nonnull(idx);
	for (uint32_t i = 0; i < r->n_w; i++)
		idx[i] = i;
	srand(seed);
	for (uint32_t a = 0; a < r->n_w;) {
		uint32_t b = a;
		while (b < r->n_w && r->w[b].wave == r->w[a].wave)
			b++;
		for (uint32_t i = b - 1; seed && i > a; i--) {
			uint32_t j = a + (uint32_t)rand() % (i - a + 1), x = idx[i];
			idx[i] = idx[j];
			idx[j] = x;
		}
		for (uint32_t i = a; i < b; i++) {
			apply(t, &s, r, &held->h, idx[i]);
			out.sets++;
			out.loops += has_loop(f, t, &s);
			if (cdg) {
				struct lft_tables x = as_tables(t, &s);
				out.cycles += cdg_has_cycle(f, &x);
			}
		}
		a = b;
	}
	/* the end is the new tables */
	ck_assert_int_eq(memcmp(s.port, t->port, (size_t)t->n_sw * s.n_lid), 0);
	free(idx);
	state_free(&s);
	return out;
}

/* Frees a test's plan, held state, old and new tables, fabric and builder. */
static void done_with(struct order_result *r, struct state *held, struct lft_tables *old,
		      struct lft_tables *t, struct fabric *f, struct tb *b)
{
	order_result_free(r);
	state_free(held);
	lft_tables_free(old);
	lft_tables_free(t);
	fabric_free(f);
	free(b);
}

/* The same writes, every one in wave 0 (the one-wave writer). */
static void one_wave(struct order_result *r)
{
	for (uint32_t i = 0; i < r->n_w; i++) {
		r->w[i].wave = 0;
		r->w[i].how = ORDER_W_WHOLE;
	}
}

/* Ring of n switches: every LID clockwise (port 2) or the other way (3). */
static void ring_tables(const struct fabric *f, struct lft_tables *t, int cw)
{
	ck_assert_int_eq(lft_tables_alloc(t, f), 0);
	for (uint32_t r = 0; r < t->n_sw; r++)
		for (uint32_t lid = 1; lid <= f->max_lid; lid++) {
			uint32_t at;
			uint8_t p;
			ck_assert_int_eq(graph_lid_attach(f, t, lid, &at, &p), 0);
			lft_row(t, r)[lid] = at == r ? p : cw ? 2 : 3;
		}
}

START_TEST(ring_reversal)
{
	/* every route turns round: the textbook transient loop */
	struct tb *b = ring(6);
	struct fabric f;
	struct lft_tables old, t;
	tb_build(&f, b, NULL, 0);
	ring_tables(&f, &old, 1);
	ring_tables(&f, &t, 0);
	struct state held;
	state_from(&held, &old, 0);
	struct order_result r;
	ck_assert_int_eq(order_lft(&f, &t, &held.h, &r), 0);
	/* twelve LIDs in one block per switch, each waiting for its neighbours' */
	ck_assert_uint_gt(r.waves, 1);
	ck_assert_uint_gt(r.split, 0);
	for (unsigned seed = 0; seed < 20; seed++) {
		struct walk w = walk(&f, &t, &held, &r, seed, 0);
		ck_assert_uint_eq(w.loops, 0);
	}
	one_wave(&r);
	uint32_t loops = 0;
	for (unsigned seed = 0; seed < 20; seed++)
		loops += walk(&f, &t, &held, &r, seed, 0).loops;
	ck_assert_uint_gt(loops, 0);
	done_with(&r, &held, &old, &t, &f, b);
}
END_TEST

START_TEST(fresh_switches_one_wave)
{
	struct tb *b = torus(4, 4);
	struct fabric f;
	struct lft_tables t;
	tb_build(&f, b, NULL, 0);
	tb_route(&minhop_engine, &f, &t);
	struct state held;
	state_from(&held, &t, 1);	/* every entry dropped */
	struct order_result r;
	ck_assert_int_eq(order_lft(&f, &t, &held.h, &r), 0);
	ck_assert_uint_eq(r.waves, 1);
	ck_assert_uint_eq(r.split, 0);
	ck_assert_uint_eq(r.n_w, t.n_sw);	/* one block each, once */
	ck_assert_uint_eq(walk(&f, &t, &held, &r, 0, 0).loops, 0);
	/* nothing known: the same change, ordered as if every entry forwarded */
	struct order_result u;
	ck_assert_int_eq(order_lft(&f, &t, NULL, &u), 0);
	ck_assert_uint_gt(u.waves, 1);
	order_result_free(&u);
	/* nothing to change: no writes */
	struct state same;
	state_from(&same, &t, 0);
	struct order_result z;
	ck_assert_int_eq(order_lft(&f, &t, &same.h, &z), 0);
	ck_assert_uint_eq(z.n_w, 0);
	ck_assert_uint_eq(z.waves, 0);
	order_result_free(&z);
	state_free(&same);
	order_result_free(&r);
	state_free(&held);
	lft_tables_free(&t);
	fabric_free(&f);
	free(b);
}
END_TEST

static void route_rooted(const struct fabric *f, struct lft_tables *t, const char *root)
{
	char err[256] = "", roots[1][64];
	snprintf(roots[0], sizeof(roots[0]), "%s", root);
	struct route_opts o = { .n_roots = 1, .roots = (const char (*)[64])roots };
	ck_assert_int_eq(lft_tables_alloc(t, f), 0);
	if (updn_engine.route(f, &o, t, err, sizeof(err)) != 0)
		ck_abort_msg("updn: %s", err);
}

/*
 * updn's root moved (as after the old root failed): on a ring of 8 the
 * routes between the two halves turn round.
 */
START_TEST(updn_new_root)
{
	struct tb *b = ring(8);
	struct fabric f;
	struct lft_tables old, t;
	tb_build(&f, b, NULL, 0);
	route_rooted(&f, &old, "R1");
	route_rooted(&f, &t, "R5");
	ck_assert_int_eq(cdg_has_cycle(&f, &old), 0);
	ck_assert_int_eq(cdg_has_cycle(&f, &t), 0);
	struct state held;
	state_from(&held, &old, 0);
	struct order_result r;
	ck_assert_int_eq(order_lft(&f, &t, &held.h, &r), 0);
	ck_assert_uint_gt(r.entries, 0);
	/* the mix of the two would close cycles: drained, in two waves */
	ck_assert_int_eq(r.drained, 1);
	ck_assert_uint_eq(r.waves, 2);
	for (unsigned seed = 0; seed < 20; seed++) {
		struct walk w = walk(&f, &t, &held, &r, seed, 1);
		ck_assert_uint_eq(w.loops, 0);
		ck_assert_uint_eq(w.cycles, 0);
	}
	one_wave(&r);
	uint32_t loops = 0, cyc = 0;
	for (unsigned seed = 0; seed < 20; seed++) {
		struct walk w = walk(&f, &t, &held, &r, seed, 1);
		loops += w.loops;
		cyc += w.cycles;
	}
	ck_assert_uint_gt(loops, 0);
	ck_assert_uint_gt(cyc, 0);
	done_with(&r, &held, &old, &t, &f, b);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("order");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ring_reversal);
	tcase_add_test(tc, fresh_switches_one_wave);
	tcase_add_test(tc, updn_new_root);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
