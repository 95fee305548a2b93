/*
 * The SA's MultiPathRecord (sm/sa/sa_path.c, sa_multipath_records) in
 * process, on the partition tests' fabric (sa_parttestlib.h): GetMulti
 * with GID lists, NumbPath, Reversible, the two-by-two independence
 * (APM) case, partitions, as one MAD and as one RMPP DATA segment, and a
 * table of malformed requests (run under ASan as unit-san).
 */
#include "sa_parttestlib.h"
#include "mad/rmpp.h"

#define MPR_REVERSIBLE	(1ull << 5)
#define MPR_NUMBPATH	(1ull << 6)
#define MPR_MTU_SEL	(1ull << 10)
#define MPR_MTU		(1ull << 11)
#define MPR_SID_MSB	(1ull << 16)
#define MPR_SGIDCOUNT	(1ull << 19)
#define MPR_DGIDCOUNT	(1ull << 20)
#define COUNTS		(MPR_SGIDCOUNT | MPR_DGIDCOUNT)
#define PR_STRIDE	64

/*
 * A MultiPathRecord: the GIDs of the hosts named in srcs, then dsts
 * (space-separated), numb_path in byte 5; its length.
 */
static size_t mpr(struct env *e, uint8_t *r, const char *srcs, const char *dsts,
		  uint8_t numb_path)
{
	memset(r, 0, SA_DATA_SIZE);
	r[5] = numb_path;
	size_t off = 24;
	const char *lists[2] = { srcs, dsts };
	for (int l = 0; l < 2; l++) {
		char buf[64];
		snprintf(buf, sizeof(buf), "%s", lists[l]);
		for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
			uint32_t n = node_named(&e->f, tok);
			sa_put64(r + off, 0xfe80000000000000ull);
			sa_put64(r + off + 8, e->f.ports[fabric_port(&e->f, n, 1)].guid);
			off += 16;
			r[15 + l]++;
		}
	}
	return off;
}

/* A GetMulti from who; the answers' count. */
static int getmulti(struct env *e, const char *who, uint64_t mask, const uint8_t *r)
{
	return ask(e, who, SA_METHOD_GET_MULTI, SA_ATTR_MULTIPATH_REC, mask, r, SA_DATA_SIZE);
}

/* The records of a one-MAD GetMultiResp (its RMPP PayloadLength). */
static int answered(struct env *e)
{
	ck_assert_int_eq(e->w.n, 1);
	ck_assert_uint_eq(mad_method(e->w.mad[0]), SA_METHOD_GET_MULTI_RESP);
	return records(e, PR_STRIDE);
}

static uint64_t guid_of(struct env *e, const char *name)
{
	return e->f.ports[fabric_port(&e->f, node_named(&e->f, name), 1)].guid;
}

/* Record i of a one-MAD answer: its SGID and DGID interface IDs. */
static void ends(struct env *e, int i, uint64_t *s, uint64_t *d)
{
	const uint8_t *p = e->w.mad[0] + SA_HDR_SIZE + i * PR_STRIDE;
	*d = sa_get64(p + 16);
	*s = sa_get64(p + 32);
}

START_TEST(gid_lists_and_numbpath)
{
	struct env e;
	env_up(&e, 0);
	uint8_t r[SA_DATA_SIZE];
	uint64_t s, d;
	mpr(&e, r, "H2", "H4 H5 H6", 0);
	ck_assert_int_eq(getmulti(&e, "H2", COUNTS, r), 1);
	ck_assert_int_eq(answered(&e), 3);
	for (int i = 0; i < 3; i++) {
		ends(&e, i, &s, &d);
		ck_assert_uint_eq(s, guid_of(&e, "H2"));
		ck_assert_uint_eq(d, guid_of(&e, i == 0 ? "H4" : i == 1 ? "H5" : "H6"));
		/* a PathRecord: its SLID and DLID */
		const uint8_t *p = e.w.mad[0] + SA_HDR_SIZE + i * PR_STRIDE;
		ck_assert_uint_eq(sa_get16(p + 42), lid(&e, "H2"));
		ck_assert_uint_eq(sa_get16(p + 50), 0xffff);
	}
	/* NumbPath bounds the paths of all pairs together */
	mpr(&e, r, "H1 H2", "H4 H5", 3);
	ck_assert_int_eq(getmulti(&e, "H3", COUNTS | MPR_NUMBPATH, r), 1);
	ck_assert_int_eq(answered(&e), 3);
	mpr(&e, r, "H1 H2", "H4 H5", 0);
	ck_assert_int_eq(getmulti(&e, "H3", COUNTS, r), 1);
	ck_assert_int_eq(answered(&e), 4);
	/* Reversible asked: minhop's tables lead back, the bit answered */
	mpr(&e, r, "H2", "H5", 0x80);
	ck_assert_int_eq(getmulti(&e, "H2", COUNTS | MPR_REVERSIBLE, r), 1);
	ck_assert_int_eq(answered(&e), 1);
	ck_assert_uint_eq(e.w.mad[0][SA_HDR_SIZE + 49], 0x80);
	env_down(&e);
}
END_TEST

START_TEST(apm_diagonal)
{
	struct env e;
	env_up(&e, 0);
	uint8_t r[SA_DATA_SIZE];
	uint64_t s0, d0, s1, d1;
	/* two sources, two destinations, NumbPath 2: one diagonal */
	mpr(&e, r, "H2 H1", "H5 H4", 2);
	ck_assert_int_eq(getmulti(&e, "H2", COUNTS | MPR_NUMBPATH, r), 1);
	ck_assert_int_eq(answered(&e), 2);
	ends(&e, 0, &s0, &d0);
	ends(&e, 1, &s1, &d1);
	ck_assert_uint_ne(s0, s1);
	ck_assert_uint_ne(d0, d1);
	/* the order asked does not matter: the same pairs */
	mpr(&e, r, "H1 H2", "H4 H5", 2);
	ck_assert_int_eq(getmulti(&e, "H2", COUNTS | MPR_NUMBPATH, r), 1);
	uint64_t t0, u0;
	ends(&e, 0, &t0, &u0);
	ck_assert_uint_eq(t0, s0);
	ck_assert_uint_eq(u0, d0);
	env_down(&e);
}
END_TEST

START_TEST(partitions)
{
	struct env e;
	env_up(&e, 1);
	uint8_t r[SA_DATA_SIZE];
	/* H2 and H4 share tenantA: its P_Key */
	mpr(&e, r, "H2", "H4", 0);
	ck_assert_int_eq(getmulti(&e, "H2", COUNTS, r), 1);
	ck_assert_int_eq(answered(&e), 1);
	ck_assert_uint_eq(sa_get16(e.w.mad[0] + SA_HDR_SIZE + 50), 0x8001);
	/* H6 shares nothing with H2: its GID is no one's to H2 */
	mpr(&e, r, "H2", "H6", 0);
	ck_assert_int_eq(getmulti(&e, "H2", COUNTS, r), 1);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_INVALID_GID);
	/* H3 (tenantB) asking for H4 to H2: H4 shares nothing with H3 */
	mpr(&e, r, "H4", "H2", 0);
	ck_assert_int_eq(getmulti(&e, "H3", COUNTS, r), 1);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_INVALID_GID);
	env_down(&e);
}
END_TEST

START_TEST(as_rmpp_segment)
{
	struct env e;
	env_up(&e, 0);
	uint8_t r[SA_DATA_SIZE], mad[MAD_SIZE];
	size_t len = mpr(&e, r, "H2", "H4 H5", 0);
	sa_init_request(mad, SA_METHOD_GET_MULTI, next_tid++, SA_ATTR_MULTIPATH_REC, 0,
			COUNTS, r, len);
	mad[24] = RMPP_VERSION;
	mad[25] = RMPP_TYPE_DATA;
	mad[26] = RMPP_FLAG_ACTIVE | RMPP_FLAG_FIRST | RMPP_FLAG_LAST;
	sa_put32(mad + 28, 1);
	sa_put32(mad + 32, (uint32_t)(20 + len));
	struct mad_addr from = { .lid = lid(&e, "H2"), .qpn = 1 };
	e.w.n = 0;
	mad_dispatch_input(e.sm->disp, mad, MAD_SIZE, &from, 0);
	ck_assert_int_eq(e.w.n, 2);	/* RMPP's ACK, then the answer */
	ck_assert_uint_eq(e.w.mad[0][25], RMPP_TYPE_ACK);
	ck_assert_uint_eq(mad_method(e.w.mad[1]), SA_METHOD_GET_MULTI_RESP);
	ck_assert_uint_eq(mad_status(e.w.mad[1]), 0);
	ck_assert_uint_eq(e.w.len[1], 56 + 2 * PR_STRIDE);
	env_down(&e);
}
END_TEST

struct bad {
	const char *what;
	uint8_t method;
	uint64_t mask;
	const char *srcs, *dsts;
	size_t len;		/* of the MAD */
	int status;
};

START_TEST(malformed_table)
{
	struct env e;
	env_up(&e, 0);
	const struct bad cases[] = {
		{ "no DGIDCount", SA_METHOD_GET_MULTI, MPR_SGIDCOUNT, "H2", "H4", MAD_SIZE,
		  SA_STS_INSUFFICIENT_COMPONENTS },
		{ "no SGIDCount", SA_METHOD_GET_MULTI, MPR_DGIDCOUNT, "H2", "H4", MAD_SIZE,
		  SA_STS_INSUFFICIENT_COMPONENTS },
		{ "half a ServiceID", SA_METHOD_GET_MULTI, COUNTS | MPR_SID_MSB, "H2", "H4",
		  MAD_SIZE, SA_STS_INSUFFICIENT_COMPONENTS },
		{ "mask bit 23", SA_METHOD_GET_MULTI, COUNTS | (1ull << 23), "H2", "H4", MAD_SIZE,
		  SA_STS_REQ_INVALID },
		{ "no destination GID", SA_METHOD_GET_MULTI, COUNTS, "H2", "", MAD_SIZE,
		  SA_STS_REQ_INVALID },
		{ "MTU code 0 with its selector", SA_METHOD_GET_MULTI,
		  COUNTS | MPR_MTU | MPR_MTU_SEL, "H2", "H4", MAD_SIZE, SA_STS_REQ_INVALID },
		{ "GIDs past the record", SA_METHOD_GET_MULTI, COUNTS, "H2", "H4",
		  SA_HDR_SIZE + 40, SA_STS_REQ_INVALID },
		{ "shorter than its header", SA_METHOD_GET_MULTI, COUNTS, "H2", "H4",
		  SA_HDR_SIZE + 10, SA_STS_REQ_INVALID },
		{ "GetTable", SA_METHOD_GET_TABLE, COUNTS, "H2", "H4", MAD_SIZE,
		  MAD_STS_METHOD_ATTR_UNSUPPORTED },
		{ "Get", SA_METHOD_GET, COUNTS, "H2", "H4", MAD_SIZE,
		  MAD_STS_METHOD_ATTR_UNSUPPORTED },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad *c = &cases[i];
		uint8_t r[SA_DATA_SIZE];
		mpr(&e, r, c->srcs, c->dsts, 0);
		expect_status(&e, c->what, c->status, ask_len(&e, "H2", c->method,
			      SA_ATTR_MULTIPATH_REC, c->mask, r, sizeof(r), c->len));
	}
	/* an unknown GID, and more GIDs claimed than the MAD holds */
	uint8_t r[SA_DATA_SIZE];
	mpr(&e, r, "H2", "H4", 0);
	sa_put64(r + 40 + 8, 0xdeadbeefull);
	ck_assert_int_eq(getmulti(&e, "H2", COUNTS, r), 1);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_INVALID_GID);
	mpr(&e, r, "H2", "H4", 0);
	r[15] = 200;
	r[16] = 200;
	ck_assert_int_eq(getmulti(&e, "H2", COUNTS, r), 1);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_REQ_INVALID);
	env_down(&e);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("multipath");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, gid_lists_and_numbpath);
	tcase_add_test(tc, apm_diagonal);
	tcase_add_test(tc, partitions);
	tcase_add_test(tc, as_rmpp_segment);
	tcase_add_test(tc, malformed_table);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
