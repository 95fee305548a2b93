/*
 * Ordered LFT writes on the emulator: the SM routes an irregular fabric
 * (a 4x4 torus; a random 4-regular graph of 12 switches) with updn, then
 * a cable goes (the routes repaired), a full reroute follows, then updn's
 * root moves (every route from scratch).  After every LFT Set
 * the emulator applies (its hook), every switch's table is read back and
 * followed: no state forwards a LID in a loop, none has a channel-
 * dependency cycle (updn's routes on one VL).  The same three changes
 * written the way the SM wrote them before the order (every block in one
 * wave) pass through states that do.
 */
#include <check.h>

#include "emu_testlib.h"
#include "routing/engine.h"
#include "routing_testlib.h"
#include "sm/heavy.h"
#include "sm/sweeper.h"

#define SIDE 4
#define N_SW (SIDE * SIDE)

/* T<k>: ports 1 +x, 2 -x, 3 +y, 4 -y, 5 its host H<k>; cut: no T5-T6 cable. */
static char *torus_text(int cut)
{
	size_t cap = 1 << 16, n = 0;
	char *t = malloc(cap);
	ck_assert_ptr_nonnull(t);
#define PUT(...) (n += (size_t)snprintf(t + n, cap - n, __VA_ARGS__))
	for (int k = 0; k < N_SW; k++) {
		int x = k % SIDE, y = k / SIDE;
		int px = y * SIDE + (x + 1) % SIDE, mx = y * SIDE + (x + SIDE - 1) % SIDE;
		int py = ((y + 1) % SIDE) * SIDE + x, my = ((y + SIDE - 1) % SIDE) * SIDE + x;
		PUT("switchguid=0x%x\nSwitch\t5 \"T%d\"\n", 0x100 + k, k);
		if (!(cut && k == 5))
			PUT("[1]\t\"T%d\"[2]\n", px);
		if (!(cut && k == 6))
			PUT("[2]\t\"T%d\"[1]\n", mx);
		PUT("[3]\t\"T%d\"[4]\n[4]\t\"T%d\"[3]\n[5]\t\"H%d\"[1]\n\n", py, my, k);
	}
	for (int k = 0; k < N_SW; k++)
		PUT("caguid=0x%x\nHca\t1 \"H%d\"\n[1]\t\"T%d\"[5]\n\n", 0x1000 + 4 * k, k, k);
#undef PUT
	ck_assert_uint_lt(n, cap);
	return t;
}

/*
 * R<k>, k < RRG_N: a random 4-regular graph (ports 1-4, each switch's
 * links in the order the pairing made them), port 5 its host G<k>; cut:
 * without the first link of R0.  A pairing of the stubs shuffled by a
 * fixed generator, redrawn until it has no loop, no double link and is
 * connected.
 */
#define RRG_N 12
#define RRG_DEG 4
static void rrg_links(int (*peer)[RRG_DEG])
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (;;) {
		int stub[RRG_N * RRG_DEG], deg[RRG_N] = { 0 }, ok = 1;
		for (int i = 0; i < RRG_N * RRG_DEG; i++)
			stub[i] = i / RRG_DEG;
		for (int i = RRG_N * RRG_DEG - 1; i > 0; i--) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			int j = (int)(x % (uint64_t)(i + 1)), t = stub[i];
			stub[i] = stub[j];
			stub[j] = t;
		}
		for (int i = 0; ok && i < RRG_N * RRG_DEG; i += 2) {
			int a = stub[i], b = stub[i + 1];
			for (int k = 0; k < deg[a]; k++)
				ok &= peer[a][k] != b;
			ok &= a != b;
			peer[a][deg[a]++] = b;
			peer[b][deg[b]++] = a;
		}
		int seen[RRG_N] = { 1 }, q[RRG_N] = { 0 }, qt = 1;
		for (int qh = 0; ok && qh < qt; qh++)
			for (int k = 0; k < RRG_DEG; k++)
				if (!seen[peer[q[qh]][k]]) {
					seen[peer[q[qh]][k]] = 1;
					q[qt++] = peer[q[qh]][k];
				}
		if (ok && qt == RRG_N)
			return;
	}
}

static char *rrg_text(int cut)
{
	int peer[RRG_N][RRG_DEG];
	rrg_links(peer);
	struct tb *b = tb_new();
	for (int k = 0; k < RRG_N; k++)
		tb_node(b, 1, RRG_DEG + 1, 0x200 + (uint64_t)k, "R%d", k);
	for (int k = 0; k < RRG_N; k++)
		tb_node(b, 0, 1, 0x2000 + 4 * (uint64_t)k, "G%d", k);
	for (int a = 0; a < RRG_N; a++)
		for (int i = 0; i < RRG_DEG; i++) {
			int bn = peer[a][i], j = 0;
			while (peer[bn][j] != a)
				j++;
			if (a < bn && !(cut && a == 0 && i == 0))
				tb_link(b, a, i + 1, bn, j + 1);
		}
	for (int k = 0; k < RRG_N; k++)
		tb_link(b, k, RRG_DEG + 1, RRG_N + k, 1);
	char *t = tb_text(b, NULL);
	free(b);
	return t;
}

/* A fabric of the test: its text, whole and cut, and updn's two roots. */
struct shape {
	const char *name;
	char *(*text)(int cut);
	uint64_t cut_guid;	/* the switch and port whose cable goes */
	int cut_port;
	const char *root, *moved_root;
};

static const struct shape shapes[] = {
	{ "4x4 torus", torus_text, 0x105, 1, "T0", "T10" },
	{ "random 4-regular", rrg_text, 0x200, 1, "R0", "R7" },
};

struct seen {
	struct fabric *check;	/* the fabric the states are judged on */
	struct lft_tables t;	/* its rows, filled from the emulator */
	uint32_t max_lid;
	uint32_t sets, loops, cycles;
};

struct run {
	EMU_RUN;
	struct fabric full, cut;
	struct seen s;
};

/* After every LFT Set: the switches' tables as they are now, judged. */
static void on_set(void *ctx, struct emu *e, uint64_t guid, uint32_t block)
{
	struct seen *s = ctx;
	(void)guid;
	(void)block;
	if (!s->check)
		return;
	for (uint32_t r = 0; r < s->t.n_sw; r++) {
		uint64_t g = s->check->nodes[s->t.sw_node[r]].guid;
		for (uint32_t lid = 1; lid <= s->t.max_lid; lid++) {
			int p = emu_lft_entry(e, g, lid);
			lft_row(&s->t, r)[lid] = p < 0 ? LFT_DROP : (uint8_t)p;
		}
	}
	s->sets++;
	s->loops += lft_has_loop(s->check, &s->t);
	s->cycles += cdg_has_cycle(s->check, &s->t);
}

static void judge_on(struct run *r, struct fabric *f)
{
	lft_tables_free(&r->s.t);
	f->max_lid = r->sm->sub.model->f.max_lid;
	ck_assert_int_eq(lft_tables_alloc(&r->s.t, f), 0);
	r->s.check = f;
}

static void parse(struct fabric *f, char *text)
{
	char err[256] = "";
	fabric_init(f);
	ck_assert_msg(topo_parse_string(f, text, "t.net", err, sizeof(err)) == 0, "%s", err);
	free(text);
}

static void wait_idle(struct run *r, uint32_t sweeps)
{
	emu_run_sweeps(&r->run, sweeps);
	ck_assert(emu_run_while(r->base, emu_sm_idle, r->sm, 10000));
}

/* What the order did, on stderr (the test's log). */
static void say(const struct run *r, const struct shape *sh, const char *what)
{
	char how[256];
	lft_order_describe(&r->sm->sweep.last.prog.order, how, sizeof(how));
	fprintf(stderr, "%s, %s: %s; %u states so far, %u with a loop, %u with a cycle\n",
		sh->name, what, r->sm->cfg.lft_unordered ? "one wave" : how, r->s.sets, r->s.loops, r->s.cycles);
}

/*
 * The three changes on shape sh, written ordered or not; what the states
 * were: *loops, *cycles the states with either.
 */
static void three_changes(const struct shape *sh, int unordered, uint64_t seed,
			  uint32_t *loops, uint32_t *cycles, uint32_t *waves)
{
	struct run r;
	memset(&r, 0, sizeof(r));
	struct emu_world_opts o = { .name = "order", .text = sh->text(0), .seed = seed };
	emu_run_open(&r.run, &o);
	parse(&r.full, sh->text(0));
	parse(&r.cut, sh->text(1));
	/* Sets cross one another: each packet 50..450 us late */
	emu_set_latency(r.e, 50, 400);
	r.sm = emu_sm_new(r.state, 200);
	char policy[128];
	snprintf(policy, sizeof(policy), "routing:\n  engine: updn\n  roots: [%s]\n", sh->root);
	emu_sm_policy(r.sm, policy);
	r.sm->cfg.lft_unordered = unordered;
	emu_sm_start(r.sm, r.base, r.e);
	emu_on_lft_set(r.e, on_set, &r.s);
	wait_idle(&r, 1);

	/* 1: the T5-T6 cable goes: repaired */
	judge_on(&r, &r.cut);
	uint32_t before = r.sm->sweep.heavy_sweeps;
	ck_assert_int_eq(emu_link_down(r.e, sh->cut_guid, sh->cut_port), 0);
	sweeper_request_heavy(r.sm, "test: a cable gone");
	wait_idle(&r, before + 1);
	*waves += r.sm->sweep.last.prog.order.waves;
	say(&r, sh, "a cable gone");

	/* 2: a full reroute */
	char err[256];
	before = r.sm->sweep.heavy_sweeps;
	ck_assert_int_eq(sweeper_request_reroute(r.sm, err, sizeof(err)), 0);
	wait_idle(&r, before + 1);
	*waves += r.sm->sweep.last.prog.order.waves;
	say(&r, sh, "full reroute");

	/* 3: updn's root moves to the far side */
	snprintf(r.sm->cfg.roots[0], sizeof(r.sm->cfg.roots[0]), "%s", sh->moved_root);
	before = r.sm->sweep.heavy_sweeps;
	ck_assert_int_eq(sweeper_request_reroute(r.sm, err, sizeof(err)), 0);
	wait_idle(&r, before + 1);
	*waves += r.sm->sweep.last.prog.order.waves;
	say(&r, sh, "updn root moved");

	ck_assert_uint_gt(r.s.sets, 0);
	*loops = r.s.loops;
	*cycles = r.s.cycles;
	/* the end: the tables the SM computed, free of both */
	struct lft_tables *t = &r.s.t;
	on_set(&r.s, r.e, 0, 0);
	ck_assert_int_eq(lft_has_loop(&r.cut, t), 0);
	ck_assert_int_eq(cdg_has_cycle(&r.cut, t), 0);
	emu_on_lft_set(r.e, NULL, NULL);
	lft_tables_free(&r.s.t);
	fabric_free(&r.full);
	fabric_free(&r.cut);
	emu_run_free(&r.run);
}

/* _i: the shape */
START_TEST(ordered_states_clean)
{
	uint32_t loops = 0, cycles = 0, waves = 0;
	for (uint64_t seed = 1; seed <= 3; seed++) {
		uint32_t l, c;
		three_changes(&shapes[_i], 0, seed, &l, &c, &waves);
		ck_assert_msg(l == 0 && c == 0, "%s, seed %llu: %u states with a loop, %u with a cycle",
			      shapes[_i].name, (unsigned long long)seed, l, c);
		loops += l;
		cycles += c;
	}
	ck_assert_uint_gt(waves, 3);	/* some change took more than a wave */
}
END_TEST

START_TEST(one_wave_states_not)
{
	uint32_t loops = 0, cycles = 0, waves = 0;
	for (uint64_t seed = 1; seed <= 3; seed++) {
		uint32_t l, c;
		three_changes(&shapes[_i], 1, seed, &l, &c, &waves);
		loops += l;
		cycles += c;
	}
	fprintf(stderr, "%s, one wave: %u states with a loop, %u with a cycle\n",
		shapes[_i].name, loops, cycles);
	ck_assert_uint_gt(loops + cycles, 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("order_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	int n = (int)(sizeof(shapes) / sizeof(shapes[0]));
	tcase_add_loop_test(tc, ordered_states_clean, 0, n);
	tcase_add_loop_test(tc, one_wave_states_not, 0, n);
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
