/*
 * The SA's ServiceRecord family (sm/sa/sa_service.c, sm/sa/svcdb.c) in
 * process, on the partition tests' fabric (sa_parttestlib.h): Set, Get,
 * GetTable and Delete, the lease, the owner and ServiceKey rules, the
 * partitions, the bounds, the state file across a restart, and a table
 * of malformed and abusive requests (run under ASan as unit-san).
 */
#include <sys/stat.h>
#include <unistd.h>

#include "sa_parttestlib.h"

#define SR_SIZE		176
#define SR_ID		(1ull << 0)
#define SR_GID		(1ull << 1)
#define SR_PKEY		(1ull << 2)
#define SR_LEASE	(1ull << 4)
#define SR_KEY		(1ull << 5)
#define SR_NAME		(1ull << 6)
#define SR_DATA8_0	(1ull << 7)
#define RID		(SR_ID | SR_GID)
#define OUR_SA_KEY	0x5eedull

static char state_dir[64];
static int max_total = 16384, max_per_port = 32;

static void more(struct config *c)
{
	snprintf(c->state_dir, sizeof(c->state_dir), "%s", state_dir);
	c->sa_key = OUR_SA_KEY;
	c->sa_max_services = max_total;
	c->sa_max_services_per_port = max_per_port;
}

static void setup(void)
{
	snprintf(state_dir, sizeof(state_dir), "/tmp/ibsmd-svc-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(state_dir));
	max_total = 16384;
	max_per_port = 32;
	env_more = more;
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", state_dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* A record: ServiceID id, the GID of node `gid_of`'s port, name. */
static void rec(struct env *e, uint8_t *r, uint64_t id, const char *gid_of,
		uint16_t pkey, uint32_t lease, uint8_t key0, const char *name)
{
	memset(r, 0, SR_SIZE);
	sa_put64(r, id);
	sa_put64(r + 8, 0xfe80000000000000ull);
	uint32_t n = node_named(&e->f, gid_of);
	sa_put64(r + 16, e->f.ports[fabric_port(&e->f, n, 1)].guid);
	sa_put16(r + 24, pkey);
	sa_put32(r + 28, lease);
	r[32] = key0;
	r[47] = key0;
	snprintf((char *)r + 48, 64, "%s", name);
}

/* A request as ask() sends it, with the SM_Key given. */
static int ask_key(struct env *e, const char *who, uint8_t method, uint64_t mask,
		   const uint8_t *r, uint64_t sm_key)
{
	uint8_t mad[MAD_SIZE];
	sa_init_request(mad, method, next_tid++, SA_ATTR_SERVICE_REC, 0, mask, r, SR_SIZE);
	sa_put64(mad + 36, sm_key);
	struct mad_addr from = { .lid = lid(e, who), .qpn = 1 };
	e->w.n = 0;
	mad_dispatch_input(e->sm->disp, mad, MAD_SIZE, &from, 0);
	return e->w.n;
}

/* The status of a one-MAD answer to who's request. */
static int status_of(struct env *e, const char *who, uint8_t method, uint64_t mask,
		     const uint8_t *r)
{
	ck_assert_int_eq(ask(e, who, method, SA_ATTR_SERVICE_REC, mask, r, SR_SIZE), 1);
	return mad_status(e->w.mad[0]);
}

/* How many records who sees with a GetTable of mask / r. */
static int table(struct env *e, const char *who, uint64_t mask, const uint8_t *r)
{
	ask(e, who, SA_METHOD_GET_TABLE, SA_ATTR_SERVICE_REC, mask, r, SR_SIZE);
	return records(e, SR_SIZE);
}

static json_int_t svc_stat(struct env *e, const char *name)
{
	json_t *o = json_object();
	sa_to_ctl(e->sm, o);
	json_t *v = json_object_get(json_object_get(json_object_get(o, "sa"), "services"), name);
	ck_assert_msg(v, "sa.services.%s", name);
	json_int_t n = json_integer_value(v);
	json_decref(o);
	return n;
}

/* The daemon stopped and started again: the SA made anew, same state dir. */
static void restart(struct env *e)
{
	sa_free(e->sm);
	ck_assert_int_eq(sa_init(e->sm, sa_families, sa_n_families), 0);
	ck_assert_int_eq(lft_tables_alloc(&e->t, &e->f), 0);
	char err[256];
	ck_assert_int_eq(routing_engine_find("minhop")->route(&e->f, NULL, &e->t,
							       err, sizeof(err)), 0);
	sa_publish(e->sm, &e->f, &e->t);
	lft_tables_free(&e->t);
}

START_TEST(set_get_table_delete)
{
	struct env e;
	env_up(&e, 0);
	uint8_t r[SR_SIZE], q[SR_SIZE];
	rec(&e, r, 0x100, "H2", 0, 0, 7, "storage");
	ck_assert_int_eq(status_of(&e, "H2", SA_METHOD_SET, RID | SR_KEY | SR_NAME, r), 0);
	const uint8_t *a = e.w.mad[0] + SA_HDR_SIZE;
	ck_assert_uint_eq(mad_method(e.w.mad[0]), SA_METHOD_GET_RESP);
	ck_assert_uint_eq(sa_get16(a + 24), 0xffff);		/* default P_Key */
	ck_assert_uint_eq(sa_get32(a + 28), 0xffffffff);	/* infinite lease */
	ck_assert_uint_eq(a[32], 0);				/* key: untrusted */
	ck_assert_str_eq((const char *)a + 48, "storage");
	/* Get by ServiceID, from another port */
	memset(q, 0, sizeof(q));
	sa_put64(q, 0x100);
	ck_assert_int_eq(status_of(&e, "H5", SA_METHOD_GET, SR_ID, q), 0);
	ck_assert_str_eq((const char *)e.w.mad[0] + SA_HDR_SIZE + 48, "storage");
	/* trusted: the key; a query by the key finds it */
	ask_key(&e, "H5", SA_METHOD_GET, SR_ID, q, OUR_SA_KEY);
	ck_assert_uint_eq(e.w.mad[0][SA_HDR_SIZE + 32], 7);
	q[32] = 7;
	q[47] = 7;
	ck_assert_int_eq(table(&e, "H5", SR_ID | SR_KEY, q), 1);
	q[47] = 8;
	ck_assert_int_eq(table(&e, "H5", SR_ID | SR_KEY, q), 0);
	/* a second service, then the same RID again: replaced, not added */
	rec(&e, r, 0x101, "H2", 0, 0, 0, "other");
	ck_assert_int_eq(status_of(&e, "H2", SA_METHOD_SET, RID | SR_NAME, r), 0);
	ck_assert_int_eq(table(&e, "H3", 0, q), 2);
	rec(&e, r, 0x101, "H2", 0, 0, 0, "renamed");
	ck_assert_int_eq(status_of(&e, "H2", SA_METHOD_SET, RID | SR_NAME, r), 0);
	ck_assert_int_eq(table(&e, "H3", 0, q), 2);
	snprintf((char *)q + 48, 64, "renamed");
	ck_assert_int_eq(table(&e, "H3", SR_NAME, q), 1);
	ck_assert_int_eq(svc_stat(&e, "replaced"), 1);
	/* Get of both: too many */
	ck_assert_int_eq(status_of(&e, "H3", SA_METHOD_GET, 0, q), SA_STS_TOO_MANY_RECORDS);
	/* Delete by the RID the record carries, the mask only its name (osmtest's) */
	rec(&e, r, 0x101, "H2", 0, 0, 0, "renamed");
	ck_assert_int_eq(status_of(&e, "H2", SA_METHOD_DELETE, SR_NAME, r), 0);
	ck_assert_uint_eq(mad_method(e.w.mad[0]), SA_METHOD_DELETE_RESP);
	ck_assert_int_eq(status_of(&e, "H2", SA_METHOD_DELETE, SR_NAME, r), SA_STS_NO_RECORDS);
	ck_assert_int_eq(table(&e, "H3", 0, q), 1);
	/* a name that is not the record's deletes nothing */
	rec(&e, r, 0x100, "H2", 0, 0, 0, "wrong");
	ck_assert_int_eq(status_of(&e, "H2", SA_METHOD_DELETE, SR_NAME, r), SA_STS_NO_RECORDS);
	ck_assert_int_eq(svc_stat(&e, "records"), 1);
	env_down(&e);
}
END_TEST

START_TEST(lease_expires)
{
	struct env e;
	env_up(&e, 0);
	uint8_t r[SR_SIZE], q[SR_SIZE];
	memset(q, 0, sizeof(q));
	rec(&e, r, 0x200, "H2", 0, 2, 0, "short");
	ck_assert_int_eq(status_of(&e, "H2", SA_METHOD_SET, RID | SR_LEASE, r), 0);
	ck_assert_uint_le(sa_get32(e.w.mad[0] + SA_HDR_SIZE + 28), 2);
	rec(&e, r, 0x201, "H2", 0, 3600, 0, "long");
	ck_assert_int_eq(status_of(&e, "H2", SA_METHOD_SET, RID | SR_LEASE, r), 0);
	ck_assert_int_eq(table(&e, "H3", 0, q), 2);
	sleep(3);
	ck_assert_int_eq(table(&e, "H3", 0, q), 1);
	ck_assert_int_eq(svc_stat(&e, "expired"), 1);
	/* the one left answers the seconds it has left */
	sa_put64(q, 0x201);
	ck_assert_int_eq(status_of(&e, "H3", SA_METHOD_GET, SR_ID, q), 0);
	uint32_t left = sa_get32(e.w.mad[0] + SA_HDR_SIZE + 28);
	ck_assert_uint_le(left, 3600);
	ck_assert_uint_ge(left, 3590);
	env_down(&e);
}
END_TEST

START_TEST(owner_and_key_rules)
{
	struct env e;
	env_up(&e, 0);
	uint8_t r[SR_SIZE], q[SR_SIZE];
	memset(q, 0, sizeof(q));
	rec(&e, r, 0x300, "H2", 0, 0, 9, "mine");
	/* H3 may not register for H2's GID */
	ck_assert_int_eq(status_of(&e, "H3", SA_METHOD_SET, RID, r), SA_STS_REQ_INVALID);
	ck_assert_int_eq(svc_stat(&e, "refused_owner"), 1);
	ck_assert_int_eq(status_of(&e, "H2", SA_METHOD_SET, RID | SR_KEY, r), 0);
	/* nor delete or replace H2's record */
	ck_assert_int_eq(status_of(&e, "H3", SA_METHOD_DELETE, 0, r), SA_STS_REQ_INVALID);
	ck_assert_int_eq(status_of(&e, "H3", SA_METHOD_SET, RID, r), SA_STS_REQ_INVALID);
	ck_assert_int_eq(svc_stat(&e, "refused_owner"), 3);
	ck_assert_int_eq(table(&e, "H3", 0, q), 1);
	/* ServiceID and ServiceGID are needed to register */
	ck_assert_int_eq(status_of(&e, "H2", SA_METHOD_SET, SR_ID, r), SA_STS_REQ_INVALID);
	ck_assert_int_eq(status_of(&e, "H2", SA_METHOD_SET, SR_GID, r), SA_STS_REQ_INVALID);
	/* a trusted request (the SM_Key) may delete any record */
	ask_key(&e, "H3", SA_METHOD_DELETE, 0, r, OUR_SA_KEY);
	ck_assert_int_eq(mad_status(e.w.mad[0]), 0);
	ck_assert_uint_eq(e.w.mad[0][SA_HDR_SIZE + 32], 9);
	ck_assert_int_eq(table(&e, "H3", 0, q), 0);
	/* a wrong SM_Key: not answered at all */
	ck_assert_int_eq(ask_key(&e, "H2", SA_METHOD_SET, RID, r, 0xbad), 0);
	env_down(&e);
}
END_TEST

START_TEST(partitions_hide_records)
{
	struct env e;
	env_up(&e, 1);
	uint8_t r[SR_SIZE], q[SR_SIZE];
	memset(q, 0, sizeof(q));
	/* in tenantA (H2, H4 full) */
	rec(&e, r, 0x400, "H2", 0x8001, 0, 0, "a-only");
	ck_assert_int_eq(status_of(&e, "H2", SA_METHOD_SET, RID | SR_PKEY, r), 0);
	/* default P_Key: H3 shares tenantB with H2, H6 nothing */
	rec(&e, r, 0x401, "H2", 0, 0, 0, "default");
	ck_assert_int_eq(status_of(&e, "H2", SA_METHOD_SET, RID, r), 0);
	ck_assert_int_eq(table(&e, "H2", 0, q), 2);
	ck_assert_int_eq(table(&e, "H4", 0, q), 2);
	ck_assert_int_eq(table(&e, "H3", 0, q), 1);
	ck_assert_int_eq(table(&e, "H6", 0, q), 0);
	sa_put64(q, 0x400);
	ck_assert_int_eq(status_of(&e, "H5", SA_METHOD_GET, SR_ID, q), SA_STS_NO_RECORDS);
	/* nor can an outsider delete what it cannot see, even trusted ones' names */
	rec(&e, r, 0x400, "H2", 0x8001, 0, 0, "a-only");
	ck_assert_int_eq(status_of(&e, "H6", SA_METHOD_DELETE, SR_PKEY, r), SA_STS_NO_RECORDS);
	/* a P_Key the requester does not hold: refused */
	rec(&e, r, 0x402, "H2", 0x8003, 0, 0, "c");
	ck_assert_int_eq(status_of(&e, "H2", SA_METHOD_SET, RID | SR_PKEY, r), SA_STS_REQ_INVALID);
	/* a requester no port holds: dropped (tenants) */
	ck_assert_int_eq(ask(&e, NULL, SA_METHOD_GET_TABLE, SA_ATTR_SERVICE_REC, 0, q, SR_SIZE), 0);
	env_down(&e);
}
END_TEST

START_TEST(bounds)
{
	max_total = 5;
	max_per_port = 3;
	struct env e;
	env_up(&e, 0);
	uint8_t r[SR_SIZE], q[SR_SIZE];
	memset(q, 0, sizeof(q));
	for (int i = 0; i < 3; i++) {
		rec(&e, r, 0x500 + (uint64_t)i, "H2", 0, 0, 0, "h2");
		ck_assert_int_eq(status_of(&e, "H2", SA_METHOD_SET, RID, r), 0);
	}
	rec(&e, r, 0x5ff, "H2", 0, 0, 0, "h2");
	ck_assert_int_eq(status_of(&e, "H2", SA_METHOD_SET, RID, r), SA_STS_NO_RESOURCES);
	ck_assert_int_eq(svc_stat(&e, "refused_per_port"), 1);
	/* replacing one it holds is no new record */
	rec(&e, r, 0x500, "H2", 0, 0, 0, "again");
	ck_assert_int_eq(status_of(&e, "H2", SA_METHOD_SET, RID | SR_NAME, r), 0);
	for (int i = 0; i < 2; i++) {
		rec(&e, r, 0x600 + (uint64_t)i, "H3", 0, 0, 0, "h3");
		ck_assert_int_eq(status_of(&e, "H3", SA_METHOD_SET, RID, r), 0);
	}
	rec(&e, r, 0x6ff, "H4", 0, 0, 0, "h4");
	ck_assert_int_eq(status_of(&e, "H4", SA_METHOD_SET, RID, r), SA_STS_NO_RESOURCES);
	ck_assert_int_eq(svc_stat(&e, "refused_total"), 1);
	ck_assert_int_eq(table(&e, "H4", 0, q), 5);
	/* a deletion makes room */
	rec(&e, r, 0x600, "H3", 0, 0, 0, "h3");
	ck_assert_int_eq(status_of(&e, "H3", SA_METHOD_DELETE, 0, r), 0);
	rec(&e, r, 0x6ff, "H4", 0, 0, 0, "h4");
	ck_assert_int_eq(status_of(&e, "H4", SA_METHOD_SET, RID, r), 0);
	env_down(&e);
}
END_TEST

START_TEST(kept_across_restart)
{
	struct env e;
	env_up(&e, 0);
	uint8_t r[SR_SIZE], q[SR_SIZE];
	memset(q, 0, sizeof(q));
	rec(&e, r, 0x700, "H2", 0, 0, 5, "forever");
	ck_assert_int_eq(status_of(&e, "H2", SA_METHOD_SET, RID | SR_KEY, r), 0);
	rec(&e, r, 0x701, "H3", 0, 600, 0, "leased");
	ck_assert_int_eq(status_of(&e, "H3", SA_METHOD_SET, RID | SR_LEASE, r), 0);
	rec(&e, r, 0x702, "H3", 0, 0, 0, "gone");
	ck_assert_int_eq(status_of(&e, "H3", SA_METHOD_SET, RID, r), 0);
	ck_assert_int_eq(status_of(&e, "H3", SA_METHOD_DELETE, 0, r), 0);
	restart(&e);
	ck_assert_int_eq(table(&e, "H4", 0, q), 2);
	sa_put64(q, 0x701);
	ck_assert_int_eq(status_of(&e, "H4", SA_METHOD_GET, SR_ID, q), 0);
	ck_assert_uint_le(sa_get32(e.w.mad[0] + SA_HDR_SIZE + 28), 600);
	ck_assert_str_eq((const char *)e.w.mad[0] + SA_HDR_SIZE + 48, "leased");
	sa_put64(q, 0x700);
	ask_key(&e, "H4", SA_METHOD_GET, SR_ID, q, OUR_SA_KEY);
	ck_assert_uint_eq(e.w.mad[0][SA_HDR_SIZE + 32], 5);
	/* the owner survives the restart: H3 still may not delete H2's */
	rec(&e, r, 0x700, "H2", 0, 0, 0, "forever");
	ck_assert_int_eq(status_of(&e, "H3", SA_METHOD_DELETE, 0, r), SA_STS_REQ_INVALID);
	ck_assert_int_eq(status_of(&e, "H2", SA_METHOD_DELETE, 0, r), 0);
	restart(&e);	/* what was left written */
	ck_assert_int_eq(table(&e, "H4", 0, q), 1);
	/* a corrupt file is set aside; the SA starts empty */
	char path[128];
	snprintf(path, sizeof(path), "%s/services", state_dir);
	FILE *fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("0x0000000000001010 - 00zz\n", fp);
	fclose(fp);
	restart(&e);
	ck_assert_int_eq(table(&e, "H4", 0, q), 0);
	struct stat st;
	ck_assert_int_ne(stat(path, &st), 0);
	env_down(&e);
}
END_TEST

/* ---- malformed and abusive requests ---- */

struct bad {
	const char *what;
	uint8_t method;
	uint64_t mask;
	size_t len;		/* of the MAD */
	uint32_t lease;
	int status;		/* -1: no answer */
};

START_TEST(malformed_table)
{
	struct env e;
	env_up(&e, 0);
	const struct bad cases[] = {
		{ "mask bit 37 (past ServiceData64[1])", SA_METHOD_GET_TABLE, 1ull << 37,
		  MAD_SIZE, 0, SA_STS_REQ_INVALID },
		{ "all-ones mask Set", SA_METHOD_SET, ~0ull, MAD_SIZE, 0, SA_STS_REQ_INVALID },
		{ "all-ones mask Delete", SA_METHOD_DELETE, ~0ull, MAD_SIZE, 0, SA_STS_REQ_INVALID },
		{ "Set without a ServiceGID", SA_METHOD_SET, SR_ID, MAD_SIZE, 0, SA_STS_REQ_INVALID },
		{ "Set cut short (100 of 176 bytes)", SA_METHOD_SET, RID, SA_HDR_SIZE + 100, 0,
		  SA_STS_REQ_INVALID },
		{ "Get cut short", SA_METHOD_GET, SR_ID, SA_HDR_SIZE + 8, 0, SA_STS_REQ_INVALID },
		{ "shorter than the SA header", SA_METHOD_SET, RID, 40, 0, -1 },
		{ "Delete of nothing", SA_METHOD_DELETE, RID, MAD_SIZE, 0, SA_STS_NO_RECORDS },
		{ "Get of nothing", SA_METHOD_GET, SR_ID, MAD_SIZE, 0, SA_STS_NO_RECORDS },
		{ "Set with lease 0", SA_METHOD_SET, RID | SR_LEASE, MAD_SIZE, 0, 0 },
		{ "Set with lease 0xfffffffe", SA_METHOD_SET, RID | SR_LEASE, MAD_SIZE,
		  0xfffffffe, 0 },
		{ "GetResp sent to the SA", SA_METHOD_GET_RESP, 0, MAD_SIZE, 0, -1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad *c = &cases[i];
		uint8_t r[SR_SIZE];
		rec(&e, r, 0x900 + i, "H2", 0, c->lease, 0, "bad");
		expect_status(&e, c->what, c->status, ask_len(&e, "H2", c->method,
			      SA_ATTR_SERVICE_REC, c->mask, r, SR_SIZE, c->len));
	}
	/* the lease-0 record went at the next request; the long one stays */
	uint8_t q[SR_SIZE];
	memset(q, 0, sizeof(q));
	ck_assert_int_eq(table(&e, "H3", 0, q), 1);
	/* a requester no port holds (no tenants): REQ_INVALID */
	ck_assert_int_eq(ask(&e, NULL, SA_METHOD_GET_TABLE, SA_ATTR_SERVICE_REC, 0, q, SR_SIZE), 1);
	ck_assert_uint_eq(mad_status(e.w.mad[0]), SA_STS_REQ_INVALID);
	env_down(&e);
}
END_TEST

START_TEST(registration_flood)
{
	struct env e;
	env_up(&e, 0);
	uint8_t r[SR_SIZE], q[SR_SIZE];
	memset(q, 0, sizeof(q));
	int refused = 0;
	for (int i = 0; i < 5000; i++) {
		rec(&e, r, 0x10000 + (uint64_t)i, "H2", 0, 0, (uint8_t)i, "flood");
		int st = status_of(&e, "H2", SA_METHOD_SET, RID | SR_KEY, r);
		ck_assert(st == 0 || st == SA_STS_NO_RESOURCES);
		refused += st != 0;
	}
	ck_assert_int_eq(refused, 5000 - 32);
	ck_assert_int_eq(svc_stat(&e, "records"), 32);
	ck_assert_int_eq(svc_stat(&e, "refused_per_port"), 5000 - 32);
	/* another port still registers */
	rec(&e, r, 0x1, "H3", 0, 0, 0, "fine");
	ck_assert_int_eq(status_of(&e, "H3", SA_METHOD_SET, RID, r), 0);
	env_down(&e);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("service");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, set_get_table_delete);
	tcase_add_test(tc, lease_expires);
	tcase_add_test(tc, owner_and_key_rules);
	tcase_add_test(tc, partitions_hide_records);
	tcase_add_test(tc, bounds);
	tcase_add_test(tc, kept_across_restart);
	tcase_add_test(tc, malformed_table);
	tcase_add_test(tc, registration_flood);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
