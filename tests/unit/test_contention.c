/*
 * Receiver contention, inter-partition interference and exposure
 * (routing/verify/contention.c) and the receivers of --receivers
 * (routing/verify/receivers.c) on the hand-built two-level fat tree of
 * part_testlib.h (leaves L0: H0, H1 and L1: H2, H3; spines S0, S1), its
 * LFTs set by hand, so that every figure can be counted on paper.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "routing/verify/contention.h"
#include "routing/verify/receivers.h"
#include "part_testlib.h"

static const char *const A_MEM[] = { "H0", "H2", NULL };
static const char *const B_MEM[] = { "H1", "H3", NULL };

struct run {
	struct fabric f;
	struct lft_tables t;
	struct part_model m;
	uint8_t *recv;
	struct contention_report r;
};

/* LFTs up, tenants A and B when parts, receivers named in rcv. */
static void run(struct run *x, const uint8_t up[4], int parts,
		const char *const *rcv)
{
	struct config *c = pt_config(0);
	pt_fabric(&x->f);
	pt_lfts(&x->f, &x->t, up);
	if (parts) {
		pt_part(c, "tenantA", PART_DEF, -1, A_MEM);
		pt_part(c, "tenantB", PART_DEF, -1, B_MEM);
	}
	pt_resolve(c, &x->f, &x->m);
	free(c);
	x->recv = calloc(x->f.n_ports, 1);
	ck_assert_ptr_nonnull(x->recv);
	for (; *rcv; rcv++) {
		uint32_t node = node_named(&x->f, *rcv);
		x->recv[x->f.nodes[node].first_port + 1] = 1;
	}
	ck_assert_int_eq(contention_measure(&x->f, &x->t, &x->m, x->recv, &x->r), 0);
}

static void done(struct run *x)
{
	contention_free(&x->r);
	free(x->recv);
	part_model_free(&x->m);
	lft_tables_free(&x->t);
	fabric_free(&x->f);
}

static const char *const RCV_L1[] = { "H2", "H3", NULL };
static const char *const RCV_ALL[] = { "H0", "H1", "H2", "H3", NULL };

START_TEST(shared_spine_contends)
{
	struct run x;
	/* every cross-leaf route through S0: L0->S0 and S0->L1 carry H2, H3 */
	run(&x, PT_SHARED, 0, RCV_L1);
	ck_assert_uint_eq(x.r.receivers, 2);
	ck_assert_uint_eq(x.r.flows, 12);
	ck_assert_uint_eq(x.r.undelivered, 0);
	ck_assert_uint_eq(x.r.up.links, 4);
	ck_assert_uint_eq(x.r.down.links, 4);
	ck_assert_uint_eq(x.r.up.contended, 1);
	ck_assert_uint_eq(x.r.up.total, 1);
	ck_assert_uint_eq(x.r.down.contended, 1);
	ck_assert_uint_eq(x.r.down.total, 1);
	ck_assert_uint_eq(x.r.lateral, 0);
	/* no tenant: one partition, nothing interferes, no exposure */
	ck_assert_uint_eq(x.r.shared_links, 0);
	ck_assert_uint_eq(x.r.interference, 0);
	ck_assert_uint_eq(x.r.n_parts, 0);
	done(&x);
	/* all four receivers: L1->S0 and S0->L0 carry H0, H1 too */
	run(&x, PT_SHARED, 0, RCV_ALL);
	ck_assert_uint_eq(x.r.up.total, 2);
	ck_assert_uint_eq(x.r.up.contended, 2);
	ck_assert_uint_eq(x.r.down.total, 2);
	ck_assert_uint_eq(x.r.down.contended, 2);
	ck_assert_uint_eq(x.r.down.max, 1);
	done(&x);
}
END_TEST

START_TEST(apart_spines_none)
{
	struct run x;
	/* L0 sends to H2 by S0, to H3 by S1: each link one receiver */
	run(&x, PT_APART, 0, RCV_L1);
	ck_assert_uint_eq(x.r.up.total, 0);
	ck_assert_uint_eq(x.r.up.contended, 0);
	ck_assert_uint_eq(x.r.down.total, 0);
	ck_assert_uint_eq(x.r.down.contended, 0);
	done(&x);
}
END_TEST

START_TEST(tenants_interfere)
{
	struct run x;
	/*
	 * Flows H0<->H2 (A) and H1<->H3 (B), two links each, all four
	 * through S0: each of the 4 links carries one of A and one of B.
	 */
	run(&x, PT_SHARED, 1, RCV_L1);
	ck_assert_uint_eq(x.r.flows, 4);
	ck_assert_uint_eq(x.r.shared_links, 4);
	ck_assert_uint_eq(x.r.interference, 8);
	ck_assert_uint_eq(x.r.interfered, 4);
	/* towards H2 from H0 only, towards H3 from H1 only: both by L0->S0 */
	ck_assert_uint_eq(x.r.up.total, 1);
	ck_assert_uint_eq(x.r.down.total, 1);
	/* the 8 cross-leaf routes all cross S0's links, where A meets others */
	ck_assert_uint_eq(x.r.n_parts, 3);
	ck_assert_uint_eq(x.r.exposed[1], 8);
	ck_assert_uint_eq(x.r.exposed[2], 8);
	done(&x);
	/* A on S0, B on S1: no shared link; S0's links carry A's 2 flows and
	 * the routes H1 -> H2 and H3 -> H0 (no partition): 4 routes exposed */
	run(&x, PT_APART, 1, RCV_L1);
	ck_assert_uint_eq(x.r.shared_links, 0);
	ck_assert_uint_eq(x.r.interference, 0);
	ck_assert_uint_eq(x.r.interfered, 0);
	ck_assert_uint_eq(x.r.exposed[1], 4);
	ck_assert_uint_eq(x.r.exposed[2], 4);
	done(&x);
}
END_TEST

START_TEST(undelivered_counted)
{
	struct run x;
	run(&x, PT_SHARED, 0, RCV_L1);
	contention_free(&x.r);
	pt_set(&x.f, &x.t, "S0", "H2", LFT_DROP);
	ck_assert_int_eq(contention_measure(&x.f, &x.t, &x.m, x.recv, &x.r), 0);
	ck_assert_uint_eq(x.r.undelivered, 2);	/* H0, H1 -> H2 */
	ck_assert_uint_eq(x.r.flows, 10);
	done(&x);
}
END_TEST

START_TEST(spec_parsed)
{
	char part[PART_NAME_LEN], err[256];
	uint32_t r = 0;
	ck_assert_int_eq(receivers_spec("random:2", &r, part, sizeof(part), err,
					sizeof(err)), 1);
	ck_assert_uint_eq(r, 2);
	ck_assert_str_eq(part, "");
	ck_assert_int_eq(receivers_spec("random:16,victim", &r, part, sizeof(part),
					err, sizeof(err)), 1);
	ck_assert_uint_eq(r, 16);
	ck_assert_str_eq(part, "victim");
	ck_assert_int_eq(receivers_spec("rcv.txt", &r, part, sizeof(part), err,
					sizeof(err)), 0);
	static const char *const bad[] = { "random:", "random:0", "random:x",
		"random:-1", "random:2,", "random:2x", "random:99999999999", NULL };
	for (const char *const *b = bad; *b; b++)
		ck_assert_msg(receivers_spec(*b, &r, part, sizeof(part), err,
					     sizeof(err)) == -1, "%s accepted", *b);
	ck_assert_ptr_nonnull(strstr(err, "random:R[,PARTITION]"));
}
END_TEST

START_TEST(file_parsed)
{
	struct run x;
	char err[256];
	run(&x, PT_SHARED, 1, RCV_L1);
	int n = receivers_parse(&x.f, "# receivers\nH2\n\n  \"H3\"  # the other\n",
				"r.txt", x.recv, err, sizeof(err));
	ck_assert_int_eq(n, 2);
	ck_assert(x.recv[x.f.nodes[node_named(&x.f, "H2")].first_port + 1]);
	ck_assert(x.recv[x.f.nodes[node_named(&x.f, "H3")].first_port + 1]);
	ck_assert(!x.recv[x.f.nodes[node_named(&x.f, "H0")].first_port + 1]);
	/* the node GUID names the CA's port */
	ck_assert_int_eq(receivers_parse(&x.f, "0x100\n", "r.txt", x.recv, err,
					 sizeof(err)), 1);
	ck_assert(x.recv[x.f.nodes[node_named(&x.f, "H0")].first_port + 1]);
	ck_assert_int_eq(receivers_parse(&x.f, "H2\nH9\n", "r.txt", x.recv, err,
					 sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "r.txt:2:"));
	ck_assert_int_eq(receivers_parse(&x.f, "H2\nH2\n", "r.txt", x.recv, err,
					 sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "named twice"));
	ck_assert_int_eq(receivers_parse(&x.f, "# none\n\n", "r.txt", x.recv, err,
					 sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "names no receiver"));
	done(&x);
}
END_TEST

START_TEST(random_per_leaf)
{
	struct run x;
	char err[256];
	run(&x, PT_SHARED, 1, RCV_L1);
	for (uint64_t seed = 0; seed < 8; seed++) {
		int n = receivers_random(&x.f, &x.m, 1, NULL, seed, x.recv, err,
					 sizeof(err));
		ck_assert_int_eq(n, 2);
		uint32_t on[2] = { 0, 0 };
		for (uint32_t pi = 0; pi < x.f.n_ports; pi++)
			if (x.recv[pi])
				on[x.f.nodes[x.f.ports[x.f.ports[pi].remote].node].guid == 0x11]++;
		ck_assert_uint_eq(on[0], 1);	/* one on L0 */
		ck_assert_uint_eq(on[1], 1);	/* one on L1 */
	}
	/* tenantA's members only: H0 on L0, H2 on L1 */
	ck_assert_int_eq(receivers_random(&x.f, &x.m, 1, "tenantA", 5, x.recv,
					  err, sizeof(err)), 2);
	ck_assert(x.recv[x.f.nodes[node_named(&x.f, "H0")].first_port + 1]);
	ck_assert(x.recv[x.f.nodes[node_named(&x.f, "H2")].first_port + 1]);
	/* more than a leaf has: all of them */
	ck_assert_int_eq(receivers_random(&x.f, &x.m, 3, NULL, 1, x.recv, err,
					  sizeof(err)), 4);
	ck_assert_int_eq(receivers_random(&x.f, &x.m, 1, "nosuch", 1, x.recv,
					  err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "no partition 'nosuch'"));
	done(&x);
}
END_TEST

static Suite *contention_suite(void)
{
	Suite *s = suite_create("contention");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, shared_spine_contends);
	tcase_add_test(tc, apart_spines_none);
	tcase_add_test(tc, tenants_interfere);
	tcase_add_test(tc, undelivered_counted);
	tcase_add_test(tc, spec_parsed);
	tcase_add_test(tc, file_parsed);
	tcase_add_test(tc, random_per_leaf);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(contention_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
