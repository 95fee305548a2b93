/*
 * Unit tests for ibsmd --import-opensm (sm/import/): OpenSM's files
 * written to a temporary directory, imported, and the written policy read
 * back with config_load() (what `ibsmd -n` does) and the written guid2lid
 * with state_load_guid2lid().  OpenSM's shipped opensm.conf is generated
 * by the installed OpenSM (`opensm -c FILE`), as tests/sim does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "sm/base/fabric.h"
#include "sm/import/osm_import.h"
#include "sm/model/config.h"
#include "sm/model/state.h"

static char dir[64];
static char warnings[8192];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_import_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* dir/name holding text; the path in out */
static const char *put(const char *name, const char *text)
{
	static char paths[8][128];
	static int next;
	char *p = paths[next++ % 8];
	snprintf(p, 128, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	return p;
}

/* Imports paths into dir/out; warnings[] holds the warning lines. */
static int import(const char *const *paths, int n, char *err, size_t errlen)
{
	char out[128];
	snprintf(out, sizeof(out), "%s/out", dir);
	FILE *w = fmemopen(warnings, sizeof(warnings), "w");
	ck_assert_ptr_nonnull(w);
	memset(warnings, 0, sizeof(warnings));
	int rc = osm_import(paths, n, out, w, err, errlen);
	fclose(w);
	return rc;
}

/* The written policy as `ibsmd -n` reads it. */
static struct config *written(void)
{
	static struct config c;
	char path[128], err[1024];
	snprintf(path, sizeof(path), "%s/out/ibsmd.yaml", dir);
	config_defaults(&c);
	ck_assert_msg(config_load(&c, path, err, sizeof(err)) == 0, "%s", err);
	return &c;
}

static unsigned count_lines(const char *s, const char *what)
{
	unsigned n = 0;
	for (const char *p = s; (p = strstr(p, what)) != NULL; p++)
		n++;
	return n;
}

START_TEST(t_shipped_opensm_conf)
{
	char cmd[256], err[1024], conf[128];
	snprintf(conf, sizeof(conf), "%s/opensm.conf", dir);
	snprintf(cmd, sizeof(cmd), "opensm -c %s >/dev/null 2>&1", conf);
	ck_assert_msg(system(cmd) == 0 && access(conf, R_OK) == 0,
		      "opensm -c FILE failed: is OpenSM installed (make deps)?");
	const char *paths[] = { conf };
	ck_assert_msg(import(paths, 1, err, sizeof(err)) == 0, "%s", err);
	struct config *c = written();
	ck_assert_uint_eq(c->sm_key, 0x1);		/* OpenSM's default key */
	ck_assert_uint_eq(c->sa_key, 0x1);		/* its sa_key, the same */
	ck_assert_int_eq(c->mad_window, 4);		/* max_wire_smps */
	ck_assert_int_eq(c->mad_timeout_ms, 200);
	ck_assert_int_eq(c->sweep_interval_s, 10);
	ck_assert_int_eq(c->sminfo_poll_ms, 10000);
	ck_assert_int_eq(c->hoq_life, 0x12);
	ck_assert_int_eq(c->leaf_hoq_life, 0x10);
	ck_assert_int_eq(c->switch_lifetime, 0x12);	/* packet_life_time */
	ck_assert_ptr_null(strstr(warnings, "packet_life_time"));
	ck_assert_uint_eq(c->port_guid, 0);		/* 0x0: not given */
	/* every warning is one line naming opensm.conf:LINE */
	unsigned n = count_lines(warnings, "\n");
	ck_assert_uint_gt(n, 0);
	ck_assert_uint_eq(count_lines(warnings, "import: warning: "), n);
	ck_assert_ptr_nonnull(strstr(warnings, "opensm.conf:"));
	ck_assert_ptr_nonnull(strstr(warnings, "part_enforce both"));
	/* the QoS and performance manager options of a file with them off: silent */
	ck_assert_ptr_null(strstr(warnings, "qos_"));
	ck_assert_ptr_null(strstr(warnings, "perfmgr_"));
}
END_TEST

START_TEST(t_conf_values_and_range)
{
	char err[1024];
	const char *p[] = { put("opensm.conf",
		"# comment\nguid 0x0002c90300000001\nsm_priority 12\nlmc 1\n"
		"routing_engine ftree,lash,updn\nqos TRUE\nqos_max_vls 8\n"
		"qos_vlarb_high 0:4,1:4\nqos_vlarb_low 0:0,1:64,2:64\n"
		"sweep_interval 5\nsweep_interval 7\n") };
	ck_assert_msg(import(p, 1, err, sizeof(err)) == 0, "%s", err);
	struct config *c = written();
	ck_assert_uint_eq(c->port_guid, 0x0002c90300000001ULL);
	ck_assert_int_eq(c->sm_priority, 12);
	ck_assert_int_eq(c->lmc, 1);
	ck_assert_int_eq(c->sweep_interval_s, 7);	/* the last one, as OpenSM */
	ck_assert_int_eq(c->n_engines, 2);
	ck_assert_str_eq(c->engines[0], "ftree");
	ck_assert_str_eq(c->engines[1], "updn");
	ck_assert_ptr_nonnull(strstr(warnings, "opensm.conf:5: routing_engine: lash"));
	ck_assert_int_eq(c->qos_mode, QOS_VFTREE);
	ck_assert_int_eq(c->qos_max_vls, 8);

	const char *q[] = { put("opensm.conf", "sm_priority 3\nsweep_interval 9000\n") };
	ck_assert_int_eq(import(q, 1, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "opensm.conf:2: sweep_interval 9000") &&
		      strstr(err, "0..3600"), "%s", err);
	const char *r[] = { put("opensm.conf", "lmc one\n") };
	ck_assert_int_eq(import(r, 1, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "opensm.conf:1: lmc: 'one' is not a number"), "%s", err);
}
END_TEST

#define G(n) "0x0002c9020000000" #n
static const char parts_conf[] =
	"# OpenSM's shipped Default line and 4 tenants with keywords\n"
	"Default=0x7fff, ipoib : ALL=full ;\n"
	"storage=0x8001, ipoib, sl=1, mtu=5 : " G(1) "=full, " G(2) ", ALL_SWITCHES=full;\n"
	"compute=0x0002 : " G(3) "=both, " G(4) "=limited, SELF=full ;\n"
	"batch = 0x0003, defmember=full : " G(5) ",\n   " G(6) "=limited;\n"
	"io=0x0004,ipoib:\n"
	"\tmgid=ff12:401b::16,sl=1 # IGMP\n"
	"\tmgid=ff15::1,Q_Key=0x1234\n"
	"\tALL_CAS=limited, ALL_R;\n";

static const struct cfg_member *member(const struct config *c, int part, int i)
{
	ck_assert_int_lt(i, (int)c->parts[part].n);
	return &c->members[c->parts[part].first + (uint32_t)i];
}

START_TEST(t_partitions)
{
	char err[1024];
	const char *p[] = { put("partitions.conf", parts_conf) };
	ck_assert_msg(import(p, 1, err, sizeof(err)) == 0, "%s", err);
	struct config *c = written();
	ck_assert_int_eq(c->default_full, 1);		/* ALL=full */
	ck_assert_int_eq(c->mc_default_ipoib, 1);
	ck_assert_int_eq(c->n_parts, 4);
	ck_assert_str_eq(c->parts[0].name, "storage");
	ck_assert_int_eq(c->parts[0].pkey, 0x0001);	/* bit 15 dropped */
	ck_assert_int_eq(c->parts[0].ipoib, 1);
	ck_assert_int_eq(c->parts[0].sl, 1);
	ck_assert_int_eq(c->parts[0].mtu, 5);
	ck_assert_uint_eq(member(c, 0, 0)->guid, 0x0002c90200000001ULL);
	ck_assert_int_eq(member(c, 0, 0)->full, 1);
	ck_assert_int_eq(member(c, 0, 1)->full, 0);	/* OpenSM's default: limited */
	ck_assert_int_eq(member(c, 0, 2)->kind, MEMBER_ALL_SWITCHES);
	ck_assert_int_eq(member(c, 1, 0)->full, 1);	/* =both */
	ck_assert_int_eq(member(c, 1, 1)->full, 0);
	ck_assert_int_eq(member(c, 1, 2)->kind, MEMBER_SELF);
	ck_assert_int_eq(member(c, 2, 0)->full, 1);	/* defmember=full */
	ck_assert_int_eq(member(c, 2, 1)->full, 0);
	ck_assert_int_eq(c->parts[3].ipoib, 1);
	ck_assert_int_eq(c->parts[3].mg_n, 2);
	ck_assert_int_eq(member(c, 3, 0)->kind, MEMBER_ALL_CAS);
	ck_assert_int_eq(member(c, 3, 1)->kind, MEMBER_ALL_ROUTERS);	/* a prefix */
	/* ff15::1 takes OpenSM's scope 2 */
	ck_assert_int_eq(c->mgroups[c->parts[3].mg_first + 1].mgid[1], 0x12);
	ck_assert_int_eq(c->mgroups[c->parts[3].mg_first + 1].qkey, 0x1234);
}
END_TEST

START_TEST(t_default_limited)
{
	char err[1024];
	/* no Default line: OpenSM's ALL=limited, SELF=full */
	const char *p[] = { put("partitions.conf", "a=0x10: ALL=full;\n") };
	ck_assert_msg(import(p, 1, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(written()->default_full, 0);
	const char *q[] = { put("partitions.conf",
		"Default=0x7fff: ALL, ALL_SWITCHES=full, SELF=full, 0x77=full;\n") };
	ck_assert_msg(import(q, 1, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(written()->default_full, 0);
	ck_assert_int_eq(written()->mc_default_ipoib, 0);	/* no ipoib flag */
	ck_assert_ptr_nonnull(strstr(warnings, "partitions.conf:1: Default partition member '0x0000000000000077=full'"));
}
END_TEST

START_TEST(t_qos_policy)
{
	char err[1024];
	const char *p[] = { put("partitions.conf", parts_conf),
		put("qos-policy.conf",
		    "port-groups\n  port-group\n    name: S\n  end-port-group\nend-port-groups\n"
		    "qos-ulps\n  default : 0\n  any, pkey 0x0002 : 2\n  pkey 0x8004 : 3\n"
		    "  pkey 0x0009 : 4\n  sdp, port-num 10000 : 5\nend-qos-ulps\n") };
	ck_assert_msg(import(p, 2, err, sizeof(err)) == 0, "%s", err);
	struct config *c = written();
	ck_assert_int_eq(c->parts[1].sl, 2);	/* compute, 0x0002 */
	ck_assert_int_eq(c->parts[3].sl, 3);	/* io, 0x0004 */
	ck_assert_ptr_nonnull(strstr(warnings, "qos-policy.conf:2: port-group"));
	ck_assert_ptr_nonnull(strstr(warnings, "qos-policy.conf:7: qos-ulps: 'default : 0'"));
	ck_assert_ptr_nonnull(strstr(warnings, "qos-policy.conf:10: qos-ulps: no partition has P_Key 0x0009"));
	ck_assert_ptr_nonnull(strstr(warnings, "qos-policy.conf:11: qos-ulps: 'sdp"));
}
END_TEST

START_TEST(t_guid2lid)
{
	char err[1024], out[128];
	/* OpenSM's osm_db format: KEY VALUE lines, blank lines between */
	const char *p[] = { put("guid2lid",
		"0x0002c90200000001 0x0003 0x0003\n\n"
		"0x0002c90200000005 0x0010 0x0011\n\n") };
	ck_assert_msg(import(p, 1, err, sizeof(err)) == 0, "%s", err);
	struct guid_map m;
	ck_assert_int_eq(guid_map_init(&m, 16), 0);
	snprintf(out, sizeof(out), "%s/out", dir);
	ck_assert_msg(state_load_guid2lid(out, &m, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(m.used, 2);
	ck_assert_uint_eq(guid_map_get(&m, 0x0002c90200000001ULL), 3);
	ck_assert_uint_eq(guid_map_get(&m, 0x0002c90200000005ULL), 0x10);	/* the base LID */
	guid_map_free(&m);
	written();	/* an empty policy: the defaults */
}
END_TEST

START_TEST(t_roots_nodemap_dir)
{
	char err[1024];
	put("opensm.conf", "sm_priority 2\n");
	put("partitions.conf", "Default=0x7fff, ipoib : ALL=full ;\n");
	put("guid2lid", "0x0002c90200000001 0x0003 0x0003\n");
	const char *p[] = { dir,
		put("root_guids", "0x0002c90200000100\n# c\n0x0002c90200000200\n"),
		put("ib-node-name-map", "0x0002c90200000100 \"spine 1\"\n") };
	ck_assert_msg(import(p, 3, err, sizeof(err)) == 0, "%s", err);
	struct config *c = written();
	ck_assert_int_eq(c->sm_priority, 2);
	ck_assert_int_eq(c->default_full, 1);
	ck_assert_int_eq(c->n_roots, 2);
	ck_assert_str_eq(c->roots[1], "0x0002c90200000200");
	ck_assert_ptr_nonnull(strstr(c->node_name_map, "ib-node-name-map"));
	ck_assert_int_eq(c->node_name_map[0], '/');	/* referenced by its full path */
}
END_TEST

/* Bad input: -1 with FILE:LINE and why, nothing written. */
START_TEST(t_bad_input)
{
	static const struct {
		const char *name, *text, *want;
	} bad[] = {
		{ "guid2lid", "0x1 0x2 0x2\n\n0x5 0x6\n", "guid2lid:3: expected OpenSM's" },
		{ "guid2lid", "0x1 0xc000 0xc000\n", "guid2lid:1: LIDs 0xc000..0xc000" },
		{ "guid2lid", "0x1 2 2\n0x1 3 3\n", "guid2lid:2: GUID 0x0000000000000001 is listed twice" },
		{ "partitions.conf", "a=0x1: ALL;\nb : ALL;\n", "partitions.conf:2: 'b': the P_Key is missing" },
		{ "partitions.conf", "a=0x1: ALL;\n\nb=0x2:\n 0xzz;\n", "partitions.conf:4: '0xzz' is not a port GUID" },
		{ "partitions.conf", "a=0x1, colour=red: ALL;\n", "partitions.conf:1: 'colour=red' is not a partition flag" },
		{ "partitions.conf", "a=0x1: ALL\n", "partitions.conf:1: no ';'" },
		{ "partitions.conf", "a=0x1:\n mgid=fe80::1;\n", "partitions.conf:2: 'fe80::1' is not a multicast GID" },
		{ "opensm.conf", "sm_priority 3\n-x 1\n", "opensm.conf:2: expected OpenSM's \"option value\"" },
		{ "opensm.conf", "sm_priority 16\n", "opensm.conf:1: sm_priority 16" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[1024], yaml[128];
		const char *p[] = { put(bad[i].name, bad[i].text) };
		ck_assert_int_eq(import(p, 1, err, sizeof(err)), -1);
		ck_assert_msg(strstr(err, bad[i].want), "%zu: got '%s', want '%s'",
			      i, err, bad[i].want);
		snprintf(yaml, sizeof(yaml), "%s/out/ibsmd.yaml", dir);
		ck_assert_int_ne(access(yaml, F_OK), 0);
	}
	char err[1024], yaml[128];
	/* translated, then refused by the policy check: nothing is left */
	const char *twice[] = { put("partitions.conf",
		"a=0x1: mgid=ff12::5\n ALL;\nb=0x2: mgid=ff12::5\n ALL;\n") };
	ck_assert_int_eq(import(twice, 1, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "the written policy is refused (ibsmd -n)") &&
		      strstr(err, "ff12::5 is given twice"), "%s", err);
	snprintf(yaml, sizeof(yaml), "%s/out/ibsmd.yaml", dir);
	ck_assert_int_ne(access(yaml, F_OK), 0);
	const char *none[] = { "/nonexistent/opensm.conf" };
	ck_assert_int_eq(import(none, 1, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "No such file"));
}
END_TEST

/* OpenSM gives a partition's sl= only with qos TRUE */
START_TEST(t_sl_needs_qos)
{
	char err[1024];
	const char *parts = put("partitions.conf", "a=0x1, sl=3: ALL;\n");
	const char *off[] = { put("opensm.conf", "qos FALSE\n"), parts };
	ck_assert_msg(import(off, 2, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(written()->parts[0].sl, -1);
	ck_assert_ptr_nonnull(strstr(warnings, "partitions.conf:1: partition a: sl=3 left out"));
	const char *on[] = { put("opensm.conf", "qos TRUE\n"), parts };
	ck_assert_msg(import(on, 2, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(written()->parts[0].sl, 3);
}
END_TEST

static Suite *import_suite(void)
{
	Suite *s = suite_create("import");
	TCase *tc = tcase_create("opensm");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, t_shipped_opensm_conf);
	tcase_add_test(tc, t_conf_values_and_range);
	tcase_add_test(tc, t_partitions);
	tcase_add_test(tc, t_default_limited);
	tcase_add_test(tc, t_qos_policy);
	tcase_add_test(tc, t_guid2lid);
	tcase_add_test(tc, t_roots_nodemap_dir);
	tcase_add_test(tc, t_bad_input);
	tcase_add_test(tc, t_sl_needs_qos);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(import_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
