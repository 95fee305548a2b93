/*
 * The jobs owner (sm/jobs.c) on the emulator, XGFT(3;2,2,4;1,2,2) routed
 * by dmodk with routing.jobs least-max-load, the commands given to the
 * daemon's handler (no control socket: answered at once):
 *   - two jobs on interleaved nodes (a ring, then a 3dnn that leaves
 *     D-mod-K at both levels): the LinearForwardingTable Sets the
 *     switches receive (recorded by an attribute handler in the
 *     emulator) come top down: every aggregation switch's before any
 *     leaf's, and they carry the job's entries;
 *   - a heavy sweep asked for while the job's writes run waits for them,
 *     then runs and routes the job again to the same entries (nothing to
 *     write);
 *   - job end: Sets again top down, carrying the base entries back; the
 *     load is gone (status jobs.max_link_load 0);
 *   - a job started while a heavy sweep runs waits for it and is ready
 *     after it, its entries written top down.
 */
#include "routing_testlib.h"
#include "emu_testlib.h"

#include "sm/jobs.h"

#define MAX_SETS 256
/* interleaved nodes: D-mod-K loads a link 1.5 for each job (tests/sim/t_jobs.sh) */
#define A_NODES "H2,H10,H0,H14,H6,H5,H3,H8"
#define B_NODES "H7,H11,H15,H1,H12,H13,H9,H4"

struct set {
	uint64_t guid;
	uint32_t block;
	uint8_t data[64];
};

struct rec {
	struct emu *e;
	struct set v[MAX_SETS];
	int n;
};

struct run {
	EMU_RUN;
	struct rec rec;
	struct tb *b;
};

/* LinearForwardingTable Sets answered (as written), recorded in order. */
static int on_lft(void *ctx, struct emu *e, struct emu_smp *s)
{
	struct rec *r = ctx;
	(void)e;
	if (s->method != 0x02 || s->node_type != 2)
		return 0x0c;	/* Gets are not this test's */
	ck_assert_int_lt(r->n, MAX_SETS);
	r->v[r->n].guid = s->node_guid;
	r->v[r->n].block = s->attr_mod;
	memcpy(r->v[r->n].data, s->data, 64);
	r->n++;
	return 0;
}

static json_t *cmd(struct run *r, const char *fmt, ...)
{
	char text[512], err[512] = "";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	json_error_t je;
	json_t *req = json_loads(text, 0, &je);
	ck_assert_msg(req != NULL, "%s: %s", text, je.text);
	json_t *res = sm_control(r->sm, "job", req, err, sizeof(err));
	json_decref(req);
	ck_assert_msg(res != NULL, "%s: %s", text, err);
	return res;
}

/* Job id's state in `job loads id`. */
static const char *job_state(struct run *r, const char *id)
{
	static char st[32];
	json_t *l = cmd(r, "{\"cmd\":\"job\",\"op\":\"loads\",\"id\":\"%s\"}", id);
	snprintf(st, sizeof(st), "%s",
		 json_string_value(json_object_get(json_array_get(json_object_get(l, "jobs"), 0),
						   "state")));
	json_decref(l);
	return st;
}

static int jobs_idle(const void *arg)
{
	const struct sm *sm = arg;
	return sm->sw.activity == SM_IDLE && !sm->sw.heavy_wanted;
}

static void open_run(struct run *r)
{
	r->b = xgft3();
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "jobsemu",
		.text = tb_text(r->b, NULL), .seed = 3 });
	r->sm = emu_sm_new(r->state, 20);
	emu_sm_policy(r->sm, "routing: {engine: dmodk, jobs: least-max-load}\n");
	emu_sm_start(r->sm, r->base, r->e);
	emu_run_sweeps(&r->run, 1);
	emu_sm_settle(r->base, r->sm, 5000);
	r->rec.e = r->e;
	ck_assert_int_eq(emu_register_attr(r->e, 0x0019, on_lft, &r->rec), 0);
}

static void close_run(struct run *r)
{
	emu_run_free(&r->run);
	free(r->b);
}

static char level_of(const struct run *r, uint64_t guid)
{
	uint32_t n = fabric_find_node(&r->topo, guid);
	ck_assert_uint_ne(n, FAB_NONE);
	return r->topo.nodes[n].desc[0];	/* L, A or T */
}

/*
 * The recorded Sets: every A's before every L's, no T's, some of both
 * (both_levels); returns how many.
 */
static int top_down(const struct run *r, int both_levels)
{
	int last_a = -1, first_l = r->rec.n;
	for (int i = 0; i < r->rec.n; i++) {
		char c = level_of(r, r->rec.v[i].guid);
		ck_assert_msg(c != 'T', "a top switch was written");
		if (c == 'A')
			last_a = i;
		else if (first_l == r->rec.n)
			first_l = i;
	}
	ck_assert_msg(last_a < first_l, "a leaf written (Set %d) before an aggregation "
		      "switch (Set %d)", first_l, last_a);
	if (both_levels)
		ck_assert_msg(last_a >= 0 && first_l < r->rec.n,
			      "not both levels written: the order shows nothing");
	return r->rec.n;
}

/* Every entry (switch GUID, LID, port) is in a recorded Set's block. */
static void sets_carry(const struct run *r, const json_t *entries)
{
	size_t i;
	const json_t *e;
	json_array_foreach(entries, i, e) {
		uint64_t g = strtoull(json_string_value(json_object_get(e, "switch")), NULL, 16);
		int lid = (int)json_integer_value(json_object_get(e, "lid"));
		int port = (int)json_integer_value(json_object_get(e, "port"));
		int found = 0;
		for (int k = 0; k < r->rec.n; k++)
			if (r->rec.v[k].guid == g && r->rec.v[k].block == (uint32_t)lid / 64) {
				ck_assert_int_eq(r->rec.v[k].data[lid % 64], port);
				found = 1;
			}
		ck_assert_msg(found, "no Set carried LID %d of 0x%llx", lid,
			      (unsigned long long)g);
	}
}

START_TEST(writes_top_down_and_sweeps_wait)
{
	struct run r;
	memset(&r, 0, sizeof(r));
	open_run(&r);
	json_t *a = cmd(&r, "{\"cmd\":\"job\",\"op\":\"start\",\"id\":\"A\","
			"\"nodes\":\"" A_NODES "\",\"pattern\":\"ring\"}");
	json_decref(a);
	ck_assert(emu_run_while(r.base, jobs_idle, r.sm, 5000));
	ck_assert_str_eq(job_state(&r, "A"), "ready");
	r.rec.n = 0;

	/* the second flow of the example: leaves D-mod-K, a sweep asked meanwhile */
	uint32_t sweeps = r.sm->sweep.heavy_sweeps;
	json_t *b = cmd(&r, "{\"cmd\":\"job\",\"op\":\"start\",\"id\":\"B\","
			"\"nodes\":\"" B_NODES "\",\"pattern\":\"3dnn\"}");
	ck_assert_str_eq(json_string_value(json_object_get(b, "state")), "writing");
	json_decref(b);
	ck_assert_int_eq(r.sm->sw.activity, SM_JOB_WRITES);
	sweeper_request_heavy(r.sm, "a test");
	ck_assert(emu_run_while(r.base, jobs_idle, r.sm, 5000));
	ck_assert_uint_eq(r.sm->sweep.heavy_sweeps, sweeps + 1);
	ck_assert_str_eq(job_state(&r, "B"), "ready");
	json_t *l = cmd(&r, "{\"cmd\":\"job\",\"op\":\"loads\",\"id\":\"B\"}");
	const json_t *jb = json_array_get(json_object_get(l, "jobs"), 0);
	const json_t *ents = json_object_get(jb, "lft_entries");
	ck_assert_int_eq(json_is_true(json_object_get(jb, "guarded")), 0);
	ck_assert_uint_ge(json_array_size(ents), 1);
	ck_assert(json_real_value(json_object_get(jb, "max_load")) <
		  json_real_value(json_object_get(jb, "dmodk_max_load")));
	/* the job's Sets, top down, with its entries; the sweep after wrote none */
	int n = top_down(&r, 1);
	ck_assert_int_ge(n, 1);
	sets_carry(&r, ents);
	json_decref(l);

	/* job end: the base's entries back, top down */
	r.rec.n = 0;
	json_t *e = cmd(&r, "{\"cmd\":\"job\",\"op\":\"end\",\"id\":\"B\"}");
	json_decref(e);
	ck_assert(emu_run_while(r.base, jobs_idle, r.sm, 5000));
	ck_assert_int_eq(top_down(&r, 1), n);
	json_t *list = cmd(&r, "{\"cmd\":\"job\",\"op\":\"list\"}");
	ck_assert_uint_eq(json_array_size(json_object_get(list, "jobs")), 1);
	json_decref(list);
	e = cmd(&r, "{\"cmd\":\"job\",\"op\":\"end\",\"id\":\"A\"}");
	json_decref(e);
	ck_assert(emu_run_while(r.base, jobs_idle, r.sm, 5000));
	json_t *st = jobs_to_ctl(r.sm);
	ck_assert(json_real_value(json_object_get(st, "max_link_load")) == 0.0);
	ck_assert_int_eq(json_integer_value(json_object_get(st, "live")), 0);
	json_decref(st);
	close_run(&r);
}
END_TEST

START_TEST(start_during_a_sweep_waits)
{
	struct run r;
	memset(&r, 0, sizeof(r));
	open_run(&r);
	json_t *a = cmd(&r, "{\"cmd\":\"job\",\"op\":\"start\",\"id\":\"A\","
			"\"nodes\":\"" A_NODES "\",\"pattern\":\"ring\"}");
	json_decref(a);
	ck_assert(emu_run_while(r.base, jobs_idle, r.sm, 5000));
	uint32_t sweeps = r.sm->sweep.heavy_sweeps;
	sweeper_request_heavy(r.sm, "a test");
	/* until the sweep runs */
	while (r.sm->sw.activity != SM_HEAVY_SWEEP)
		event_base_loop(r.base, EVLOOP_ONCE);
	r.rec.n = 0;
	json_t *b = cmd(&r, "{\"cmd\":\"job\",\"op\":\"start\",\"id\":\"B\","
			"\"nodes\":\"" B_NODES "\",\"pattern\":\"3dnn\"}");
	ck_assert_str_eq(json_string_value(json_object_get(b, "state")), "writing");
	json_decref(b);
	ck_assert_int_eq(r.sm->sw.activity, SM_HEAVY_SWEEP);
	ck_assert(emu_run_while(r.base, jobs_idle, r.sm, 5000));
	ck_assert_uint_eq(r.sm->sweep.heavy_sweeps, sweeps + 1);
	ck_assert_str_eq(job_state(&r, "B"), "ready");
	/* its entries written, by the sweep or after it, top down */
	ck_assert_int_ge(top_down(&r, 1), 2);
	close_run(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jobs_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, writes_top_down_and_sweeps_wait);
	tcase_add_test(tc, start_during_a_sweep_waits);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
