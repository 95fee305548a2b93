/*
 * The writes of a job's start and end (sm/write/plan_jobs.c) on
 * XGFT(3;2,2,4;1,2,2) with its D-mod-K tables and random jobs routed by
 * the job routing core:
 *   - exactly the 64-LID blocks that differ are planned, one op each;
 *   - waves from the top down where it matters: a leaf whose changed
 *     entry leads to an aggregation switch whose entry changes too goes
 *     in a later wave (the check below: its next hop final already),
 *     some plans need two waves; tops never change;
 *   - every entry a wave changes has its new next hop's entry already
 *     final when the wave goes (the next hop forwards on the new route),
 *     and every table state on the way -- after each wave, and with any
 *     one switch of the next wave written alone -- reaches every LID by
 *     a shortest path without a loop;
 *   - the same for a job's end (the tables back to the base).
 */
#include "job_testlib.h"

#include "sm/write/plan_jobs.h"

/* The XGFT with its D-mod-K tables (x.t, the base), jobs routed on it into t. */
struct jobs_world {
	struct world x;
	struct lft_tables t;
	struct job_loads *ld;
	struct job_route r[4];
	int n_r;
};

static void tables_copy(struct lft_tables *dst, const struct lft_tables *src,
			const struct fabric *f)
{
	ck_assert_int_eq(lft_tables_alloc(dst, f), 0);
	ck_assert_uint_eq(dst->n_sw, src->n_sw);
	ck_assert_uint_eq(dst->max_lid, src->max_lid);
	memcpy(dst->port, src->port, (size_t)src->n_sw * (src->max_lid + 1));
}

/* n_jobs jobs of pattern random:2 on disjoint random hosts, routed and applied. */
static void open_world(struct jobs_world *w, unsigned seed, int n_jobs)
{
	char err[256] = "";
	memset(w, 0, sizeof(*w));
	open_xgft(&w->x);
	w->ld = job_loads_new(w->x.tr);
	ck_assert_ptr_nonnull(w->ld);
	tables_copy(&w->t, &w->x.t, &w->x.f);
	uint32_t hosts[16];
	for (uint32_t i = 0; i < 16; i++)
		hosts[i] = i;
	srand(seed);
	for (uint32_t i = 15; i > 0; i--) {
		uint32_t k = (uint32_t)rand() % (i + 1), x = hosts[i];
		hosts[i] = hosts[k];
		hosts[k] = x;
	}
	uint32_t per = 16 / (uint32_t)n_jobs;
	for (int j = 0; j < n_jobs; j++) {
		struct job_flow *fl;
		size_t nf;
		ck_assert_int_eq(job_pattern("random:2", hosts + j * per, per, seed + (unsigned)j,
					     &fl, &nf, err, sizeof(err)), 0);
		ck_assert_int_eq(job_route(w->x.tr, w->ld, fl, nf, JOB_ROUTE_GREEDY, &w->r[j]), 0);
		job_apply(&w->t, &w->r[j], 1);
		free(fl);
	}
	w->n_r = n_jobs;
}

static void close_jobs_world(struct jobs_world *w)
{
	for (int j = 0; j < w->n_r; j++)
		job_route_free(&w->r[j]);
	job_loads_free(w->ld);
	lft_tables_free(&w->t);
	close_world(&w->x);
}

static int blocks_differing(const struct lft_tables *a, const struct lft_tables *b)
{
	int n = 0;
	for (uint32_t r = 0; r < a->n_sw; r++)
		for (uint32_t k = 0; k * FAB_LFT_BLOCK <= a->max_lid; k++)
			for (uint32_t l = k * FAB_LFT_BLOCK;
			     l < (k + 1) * FAB_LFT_BLOCK && l <= a->max_lid; l++)
				if (lft_row(a, r)[l] != lft_row(b, r)[l]) {
					n++;
					break;
				}
	return n;
}

/* The block k of row r of src into dst. */
static void put_block(struct lft_tables *dst, const struct lft_tables *src,
		      uint32_t r, uint32_t k)
{
	for (uint32_t l = k * FAB_LFT_BLOCK; l < (k + 1) * FAB_LFT_BLOCK &&
	     l <= src->max_lid; l++)
		lft_row(dst, r)[l] = lft_row(src, r)[l];
}

/*
 * Plans from -> to, checks the plan's blocks and waves, and runs it on a
 * copy of from, judging each state on the way; returns the blocks.
 */
static uint32_t check_plan(const struct fabric *f, const struct lft_tables *from,
			   const struct lft_tables *to)
{
	struct plan p;
	struct plan_jobs_count c;
	struct lft_tables cur;
	plan_init(&p);
	ck_assert_int_eq(plan_jobs_build(&p, f, from, to, &c), 0);
	ck_assert_uint_eq(c.blocks, (uint32_t)blocks_differing(from, to));
	tables_copy(&cur, from, f);
	uint32_t ops = 0;
	for (uint32_t w = 0; w < p.n_waves; w++) {
		const struct plan_wave *pw = &p.waves[w];
		for (uint32_t i = 0; i < pw->n; i++) {
			const struct plan_op *o = &pw->ops[i];
			const char *d = f->nodes[o->node].desc;
			ck_assert_int_eq(o->kind, PLAN_LFT);
			ck_assert_uint_eq(o->count, 1);
			ck_assert_msg(d[0] != 'T', "a top switch %s is written", d);
			uint32_t r = o->data;
			/* each changed entry's next hop is final already */
			for (uint32_t l = o->mod * FAB_LFT_BLOCK;
			     l < (o->mod + 1) * FAB_LFT_BLOCK && l <= to->max_lid; l++) {
				uint8_t np = lft_row(to, r)[l];
				if (np == lft_row(&cur, r)[l])
					continue;
				uint32_t next = peer_switch(f, fabric_port(f, o->node, np));
				if (next == FAB_NONE)
					continue;
				uint32_t nr = to->row_of_node[next];
				ck_assert_msg(lft_row(&cur, nr)[l] == lft_row(to, nr)[l],
					      "%s LID %u: written before its next hop %s",
					      d, l, f->nodes[next].desc);
			}
			/* this switch's block alone on the state so far */
			struct lft_tables one;
			tables_copy(&one, &cur, f);
			put_block(&one, to, r, o->mod);
			check_reach(f, &one, 1);
			lft_tables_free(&one);
			ops++;
		}
		for (uint32_t i = 0; i < pw->n; i++)
			put_block(&cur, to, pw->ops[i].data, pw->ops[i].mod);
		check_reach(f, &cur, 1);
	}
	ck_assert_uint_eq(ops, c.blocks);
	ck_assert_int_eq(blocks_differing(&cur, to), 0);
	lft_tables_free(&cur);
	plan_free(&p);
	return c.blocks;
}

START_TEST(start_and_end_top_down)
{
	uint32_t total = 0, agg_and_leaf = 0;
	for (unsigned seed = 1; seed <= 40; seed++) {
		struct jobs_world w;
		open_world(&w, seed, seed % 4 == 0 ? 4 : (int)(seed % 2) + 1);
		uint32_t n = check_plan(&w.x.f, &w.x.t, &w.t);	/* the jobs' start */
		ck_assert_uint_eq(check_plan(&w.x.f, &w.t, &w.x.t), n);	/* their end */
		total += n;
		struct plan p;
		struct plan_jobs_count c;
		plan_init(&p);
		ck_assert_int_eq(plan_jobs_build(&p, &w.x.f, &w.x.t, &w.t, &c), 0);
		agg_and_leaf += c.waves == 2;
		plan_free(&p);
		close_jobs_world(&w);
	}
	/* the jobs moved entries, at both levels in some plans */
	ck_assert_uint_gt(total, 0);
	ck_assert_uint_gt(agg_and_leaf, 0);
}
END_TEST

START_TEST(nothing_differs_nothing_planned)
{
	struct jobs_world w;
	struct plan p;
	struct plan_jobs_count c;
	open_world(&w, 7, 1);
	plan_init(&p);
	ck_assert_int_eq(plan_jobs_build(&p, &w.x.f, &w.x.t, &w.x.t, &c), 0);
	ck_assert_uint_eq(c.blocks, 0);
	ck_assert_uint_eq(c.switches, 0);
	ck_assert_uint_eq(plan_mads(&p), 0);
	plan_free(&p);
	close_jobs_world(&w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("plan_jobs");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, start_and_end_top_down);
	tcase_add_test(tc, nothing_differs_nothing_planned);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
