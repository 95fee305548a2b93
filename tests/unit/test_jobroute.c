/*
 * Job-aware routing's core (routing/jobs/jobroute.h) on XGFT(3;2,2,4;1,2,2)
 * built from net-file text with its D-mod-K tables:
 *   - the tree: hosts in subtree order, their leaves and pods, channels;
 *     fabrics that are not such a tree refused;
 *   - the paper's weights: 3DNN 1/6, 2DNN 1/4, ring 1/2, random:K and
 *     all-to-all min(1/out, 1/in), degenerate sizes, explicit flows;
 *   - the worked example (flows 0->4 and 1->6, w 1): D-mod-K puts both on
 *     L00's up link to A00, load 2.0; the job routing moves one, 1.0, with
 *     exactly one LFT entry changed;
 *   - random jobs: the loads the router counts are those of walking the
 *     tables with the jobs' entries applied (one output per switch and
 *     LID honoured), the guard never gives a job more than D-mod-K would,
 *     the largest per-job load equals the largest fabric-wide load, and
 *     ending every job returns every channel to exactly 0.
 */
#include "job_testlib.h"

static uint32_t host(const struct world *w, int d)
{
	char nm[16];
	snprintf(nm, sizeof(nm), "H%d", d);
	uint32_t pi = fabric_port(&w->f, node_named(&w->f, nm), 1);
	int32_t h = job_tree_host_of_port(w->tr, pi);
	ck_assert_int_ge(h, 0);
	return (uint32_t)h;
}

START_TEST(t_tree)
{
	struct world w;
	open_xgft(&w);
	ck_assert_uint_eq(job_tree_hosts(w.tr), 16);
	ck_assert_uint_eq(job_tree_levels(w.tr), 3);
	for (uint32_t d = 0; d < 16; d++) {
		/* subtree order is the digest's host index: H<d> is host d */
		ck_assert_uint_eq(host(&w, (int)d), d);
		ck_assert_uint_eq(job_tree_group(w.tr, d, 1), d / 2);
		ck_assert_uint_eq(job_tree_group(w.tr, d, 2), d / 4);
		ck_assert_uint_eq(job_tree_group(w.tr, d, 3), 0);
		uint32_t node;
		uint8_t port;
		uint32_t inj = job_tree_channels(w.tr) - 16 + d;
		job_tree_channel(w.tr, inj, &node, &port);
		ck_assert_uint_eq(fabric_port(&w.f, node, port), job_tree_host_port(w.tr, d));
	}
	close_world(&w);

	/* a mesh (minhop's tables) is no tree of this kind */
	struct fabric f;
	struct lft_tables t;
	extern const struct routing_engine minhop_engine;
	struct tb *b = mesh(3, 3);
	char err[256] = "";
	tb_build(&f, b, NULL, 0);
	tb_route(&minhop_engine, &f, &t);
	ck_assert_ptr_null(job_tree_new(&f, &t, err, sizeof(err)));
	ck_assert_msg(strstr(err, "not a fat tree the job routing understands"), "%s", err);
	free_all(&f, &t, b);
}
END_TEST

/* fl[0..n) all of weight w. */
static void all_weigh(const struct job_flow *fl, size_t n, int64_t w)
{
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(fl[i].w == w, "flow %zu (%u -> %u): %lld, want %lld", i,
			      fl[i].src, fl[i].dst, (long long)fl[i].w, (long long)w);
}

static size_t pattern(const char *spec, uint32_t n, struct job_flow **fl)
{
	uint32_t ranks[4096];
	char err[128] = "";
	size_t nf = 0;
	ck_assert_uint_le(n, 4096);
	for (uint32_t i = 0; i < n; i++)
		ranks[i] = i;
	ck_assert_msg(job_pattern(spec, ranks, n, 7, fl, &nf, err, sizeof(err)) == 0,
		      "%s: %s", spec, err);
	return nf;
}

/* spec among n ranks: flows flows, each of weight w. */
static void expect(const char *spec, uint32_t n, size_t flows, int64_t w)
{
	struct job_flow *fl;
	size_t got = pattern(spec, n, &fl);
	ck_assert_msg(got == flows, "%s of %u: %zu flows, want %zu", spec, n, got, flows);
	all_weigh(fl, got, w);
	free(fl);
}

START_TEST(t_weights)
{
	struct job_flow *fl;
	size_t n;
	ck_assert(ONE % 6 == 0);
	expect("3dnn", 27, 27 * 6, ONE / 6);
	expect("3dnn", 64, 64 * 6, ONE / 6);
	expect("2dnn", 16, 16 * 4, ONE / 4);
	expect("ring", 5, 10, ONE / 2);
	/* two ranks: one peer each, counted once */
	expect("ring", 2, 2, ONE);
	/* a side of 2: the +1 and -1 neighbours coincide (3 peers) */
	expect("3dnn", 8, 8 * 3, ONE / 3);
	expect("alltoall", 5, 20, ONE / 4);
	/* 10 ranks on a 3x3x3 grid: neighbours on empty points skipped */
	n = pattern("3dnn", 10, &fl);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_lt(fl[i].dst, 10);
		uint32_t a = fl[i].src, b = fl[i].dst, diff = 0, s = 3;
		uint32_t ca[3] = { a % s, (a / s) % s, a / 9 }, cb[3] = { b % s, (b / s) % s, b / 9 };
		for (int k = 0; k < 3; k++)
			diff += ca[k] != cb[k];
		ck_assert_uint_eq(diff, 1);
	}
	free(fl);
	/* random:4: four distinct others each; w = min(1/4, 1/in-degree) */
	n = pattern("random:4", 20, &fl);
	ck_assert_uint_eq(n, 80);
	uint32_t in[20] = { 0 };
	for (size_t i = 0; i < n; i++)
		in[fl[i].dst]++;
	for (size_t i = 0; i < n; i++) {
		uint32_t deg = in[fl[i].dst] > 4 ? in[fl[i].dst] : 4;
		ck_assert_int_eq(fl[i].w, (ONE + deg / 2) / deg);
		ck_assert_uint_ne(fl[i].src, fl[i].dst);
	}
	free(fl);
	/* one rank: no flow */
	n = pattern("3dnn", 1, &fl);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(fl);

	/* refusals */
	uint32_t ranks[3000];
	char err[128];
	for (uint32_t i = 0; i < 3000; i++)
		ranks[i] = i;
	ck_assert_int_eq(job_pattern("mesh", ranks, 4, 1, &fl, &n, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "unknown pattern"), "%s", err);
	ck_assert_int_eq(job_pattern("random:0", ranks, 4, 1, &fl, &n, err, sizeof(err)), -1);
	ck_assert_int_eq(job_pattern("random:x", ranks, 4, 1, &fl, &n, err, sizeof(err)), -1);
	ck_assert_int_eq(job_pattern("alltoall", ranks, 3000, 1, &fl, &n, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "more than"), "%s", err);

	/* explicit flows: ranks mapped to hosts, comments, blank lines */
	uint32_t hosts[3] = { 10, 11, 12 };
	ck_assert_int_eq(job_pattern_text("0 1\n1 2 # c\n\n# x\n2 0\n0 1\n", hosts, 3,
					  &fl, &n, err, sizeof(err)), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(fl[0].src, 10);
	ck_assert_uint_eq(fl[0].dst, 11);
	all_weigh(fl, n, ONE);
	free(fl);
	ck_assert_int_eq(job_pattern_text("0 1\n1 3\n", hosts, 3, &fl, &n, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "line 2"), "%s", err);
	ck_assert_int_eq(job_pattern_text("0 1 2\n", hosts, 3, &fl, &n, err, sizeof(err)), -1);
}
END_TEST

START_TEST(t_worked_example)
{
	struct world w;
	open_xgft(&w);
	struct job_flow fl[2] = { { host(&w, 0), host(&w, 4), ONE },
				  { host(&w, 1), host(&w, 6), ONE } };
	struct job_loads *dk = job_loads_new(w.tr), *jl = job_loads_new(w.tr);
	struct job_route rd, rj;
	ck_assert_int_eq(job_route(w.tr, dk, fl, 2, JOB_ROUTE_DMODK, &rd), 0);
	ck_assert_int_eq(rd.max_load, 2 * ONE);
	ck_assert_int_eq(job_loads_max(dk), 2 * ONE);
	ck_assert_uint_eq(rd.n_e, 0);
	ck_assert_int_eq(job_route(w.tr, jl, fl, 2, JOB_ROUTE_GUARDED, &rj), 0);
	ck_assert_int_eq(rj.max_load, ONE);
	ck_assert_int_eq(rj.dmodk_max, 2 * ONE);
	ck_assert_int_eq(rj.guarded, 0);
	ck_assert_int_eq(job_loads_max(jl), ONE);
	/* one entry: L00 sends H6's LID up to A01 instead of A00 */
	ck_assert_uint_eq(rj.n_e, 1);
	ck_assert_uint_eq(w.t.sw_node[rj.e[0].row], node_named(&w.f, "L00"));
	ck_assert_uint_eq(rj.e[0].lid, lid_of(&w.f, "H6"));
	ck_assert_uint_eq(rj.e[0].port, port_to(&w.f, "L00", "A01"));
	ck_assert_uint_eq(entry(&w.f, &w.t, "L00", lid_of(&w.f, "H6")), port_to(&w.f, "L00", "A00"));
	/* the same flows in the guard's mode once more: the first job's load
	 * makes D-mod-K worse still, the routing keeps 2.0 at most */
	job_unroute(jl, &rj);
	job_unroute(dk, &rd);
	ck_assert_int_eq(job_loads_max(jl), 0);
	ck_assert_int_eq(job_loads_max(dk), 0);
	job_route_free(&rd);
	job_route_free(&rj);
	job_loads_free(dk);
	job_loads_free(jl);
	close_world(&w);
}
END_TEST

/* ---- random jobs, judged by walking the tables ---- */

struct walk {
	int64_t *load;		/* per channel, from the tables */
};

/* Adds w along flow s -> d as table t forwards d's LID. */
static void walk_flow(const struct world *w, const struct lft_tables *t, uint32_t s,
		      uint32_t d, int64_t wt, int64_t *load)
{
	const struct fabric *f = &w->f;
	uint32_t nch = job_tree_channels(w->tr), nh = job_tree_hosts(w->tr);
	uint32_t sw_ch = nch - nh, stride = sw_ch / t->n_sw;
	load[sw_ch + s] += wt;
	uint32_t pi = f->ports[job_tree_host_port(w->tr, s)].remote;
	uint32_t lid = f->ports[job_tree_host_port(w->tr, d)].lid;
	for (int hops = 0; hops < 16; hops++) {
		uint32_t node = f->ports[pi].node, row = t->row_of_node[node];
		uint8_t p = t->port[(size_t)row * (t->max_lid + 1) + lid];
		ck_assert_uint_ne(p, LFT_DROP);
		load[row * stride + p] += wt;
		uint32_t nx = fabric_portp(f, node, p)->remote;
		ck_assert_uint_ne(nx, FAB_NONE);
		if (nx == job_tree_host_port(w->tr, d))
			return;
		ck_assert_int_eq(f->nodes[f->ports[nx].node].type, FAB_SWITCH);
		pi = nx;
	}
	ck_abort_msg("flow %u -> %u: no arrival", s, d);
}

#define JOBS 6

struct job {
	struct job_flow *fl;
	size_t n;
	struct job_route r;
	int64_t pjml;
	int live;
};

/* The tables: base and every live job's entries; compared with l. */
static void judge(const struct world *w, struct job *jb, const struct job_loads *l)
{
	struct lft_tables t = w->t;
	size_t sz = (size_t)t.n_sw * (t.max_lid + 1);
	t.port = malloc(sz);
	ck_assert_ptr_nonnull(t.port);
	memcpy(t.port, w->t.port, sz);
	for (int j = 0; j < JOBS; j++)
		if (jb[j].live)
			job_apply(&t, &jb[j].r, 1);
	uint32_t nch = job_tree_channels(w->tr);
	int64_t *load = calloc(nch, sizeof(*load));
	for (int j = 0; j < JOBS; j++)
		for (size_t i = 0; jb[j].live && i < jb[j].n; i++)
			walk_flow(w, &t, jb[j].fl[i].src, jb[j].fl[i].dst, jb[j].fl[i].w, load);
	for (uint32_t c = 0; c < nch; c++)
		ck_assert_msg(load[c] == job_loads_get(l, c), "channel %u: tables %lld, router %lld",
			      c, (long long)load[c], (long long)job_loads_get(l, c));
	free(load);
	free(t.port);
}

static uint64_t rnd(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

START_TEST(t_random_jobs)
{
	static const char *const pats[] = { "random:3", "3dnn", "ring", "2dnn", "random:5" };
	struct world w;
	open_xgft(&w);
	uint64_t x = 0x5eed + (uint64_t)_i;
	struct job_loads *l = job_loads_new(w.tr);
	struct job jb[JOBS];
	memset(jb, 0, sizeof(jb));
	int taken[16] = { 0 };
	int64_t max_pjml = 0, max_swml = 0;
	for (int step = 0; step < 40; step++) {
		int j = (int)(rnd(&x) % JOBS);
		if (jb[j].live) {	/* end it */
			job_unroute(l, &jb[j].r);
			for (size_t i = 0; i < jb[j].n; i++)
				taken[jb[j].fl[i].src] = taken[jb[j].fl[i].dst] = 0;
			job_route_free(&jb[j].r);
			free(jb[j].fl);
			jb[j].live = 0;
		} else {		/* start it on free hosts, in a random order */
			uint32_t hosts[16], n = 0, want = 2 + (uint32_t)(rnd(&x) % 7);
			for (uint32_t h = 0; h < 16 && n < want; h++) {
				uint32_t c = (uint32_t)((h + rnd(&x)) % 16);
				int dup = taken[c];
				for (uint32_t k = 0; k < n && !dup; k++)
					dup = hosts[k] == c;
				if (!dup)
					hosts[n++] = c;
			}
			if (n < 2)
				continue;
			char err[128];
			const char *p = pats[rnd(&x) % 5];
			ck_assert_int_eq(job_pattern(p, hosts, n, rnd(&x), &jb[j].fl, &jb[j].n,
						     err, sizeof(err)), 0);
			for (uint32_t k = 0; k < n; k++)
				taken[hosts[k]] = 1;
			ck_assert_int_eq(job_route(w.tr, l, jb[j].fl, jb[j].n, JOB_ROUTE_GUARDED,
						   &jb[j].r), 0);
			/* the guard: never above D-mod-K for the job */
			ck_assert_int_le(jb[j].r.max_load, jb[j].r.dmodk_max);
			if (jb[j].r.guarded)
				ck_assert_uint_eq(jb[j].r.n_e, 0);
			jb[j].pjml = 0;
			jb[j].live = 1;
			for (int k = 0; k < JOBS; k++)
				if (jb[k].live) {
					int64_t m = job_route_max_now(l, &jb[k].r);
					if (m > jb[k].pjml)
						jb[k].pjml = m;
					if (m > max_pjml)
						max_pjml = m;
				}
		}
		int64_t s = job_loads_max(l);
		if (s > max_swml)
			max_swml = s;
		judge(&w, jb, l);
	}
	ck_assert_int_eq(max_pjml, max_swml);
	for (int j = 0; j < JOBS; j++)
		if (jb[j].live) {
			job_unroute(l, &jb[j].r);
			job_route_free(&jb[j].r);
			free(jb[j].fl);
		}
	for (uint32_t c = 0; c < job_tree_channels(w.tr); c++)
		ck_assert_int_eq(job_loads_get(l, c), 0);
	job_loads_free(l);
	close_world(&w);
}
END_TEST

/* Without the guard a greedy job may be worse than D-mod-K; with it,
 * never: over many random jobs on an empty fabric. */
START_TEST(t_guard)
{
	struct world w;
	open_xgft(&w);
	uint64_t x = 99;
	int worse = 0;
	for (int i = 0; i < 300; i++) {
		uint32_t hosts[16];
		for (uint32_t h = 0; h < 16; h++)
			hosts[h] = h;
		for (uint32_t h = 15; h > 0; h--) {
			uint32_t k = (uint32_t)(rnd(&x) % (h + 1)), t = hosts[h];
			hosts[h] = hosts[k];
			hosts[k] = t;
		}
		uint32_t n = 4 + (uint32_t)(rnd(&x) % 13);
		struct job_flow *fl;
		size_t nf;
		char err[64];
		ck_assert_int_eq(job_pattern(i % 2 ? "3dnn" : "random:2", hosts, n, rnd(&x),
					     &fl, &nf, err, sizeof(err)), 0);
		struct job_loads *a = job_loads_new(w.tr), *b = job_loads_new(w.tr);
		struct job_route ra, rb;
		ck_assert_int_eq(job_route(w.tr, a, fl, nf, JOB_ROUTE_GREEDY, &ra), 0);
		ck_assert_int_eq(job_route(w.tr, b, fl, nf, JOB_ROUTE_GUARDED, &rb), 0);
		worse += ra.max_load > ra.dmodk_max;
		ck_assert_int_le(rb.max_load, rb.dmodk_max);
		ck_assert_int_le(rb.max_load, ra.max_load);
		ck_assert_int_eq(job_loads_max(b), rb.max_load);
		job_route_free(&ra);
		job_route_free(&rb);
		job_loads_free(a);
		job_loads_free(b);
		free(fl);
	}
	printf("guard: the greedy alone was worse than D-mod-K for %d of 300 jobs\n", worse);
	close_world(&w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jobroute");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_tree);
	tcase_add_test(tc, t_weights);
	tcase_add_test(tc, t_worked_example);
	tcase_add_loop_test(tc, t_random_jobs, 0, 8);
	tcase_add_test(tc, t_guard);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
