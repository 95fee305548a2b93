/*
 * Unit tests for the YAML policy parser (sm/model/config.c).  Each policy is
 * written to a temporary file from a string, so no data directory is
 * needed; the shipped example etc/ibsmd.yaml is read from the repository
 * root, where `make unit` runs the tests.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <grp.h>

#include "sm/model/config.h"
#include "sm/model/part_resolve.h"
#include "traps/repath.h"
#include "sm/base/log.h"

struct loaded {
	struct config c;
	char path[64];
	char err[512];
	int rc;
};

/* Writes text (len bytes) to a new temporary file named in path[64]. */
static void write_temp(char *path, const char *text, size_t len)
{
	FILE *f;
	int fd;

	snprintf(path, 64, "/tmp/test_config_XXXXXX.yaml");
	fd = mkstemps(path, 5);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* Loads text (len bytes) over the defaults. */
static void load_bytes(struct loaded *l, const char *text, size_t len)
{
	memset(l, 0, sizeof(*l));
	write_temp(l->path, text, len);
	config_defaults(&l->c);
	l->rc = config_load(&l->c, l->path, l->err, sizeof(l->err));
	unlink(l->path);
}

static void load(struct loaded *l, const char *text)
{
	load_bytes(l, text, strlen(text));
}

static void load_ok(struct loaded *l, const char *text)
{
	load(l, text);
	ck_assert_msg(l->rc == 0, "unexpected error: %s", l->err);
}

/* The load must fail with exactly "PATH:" + where_what. */
static void load_fails(const char *text, const char *where_what)
{
	struct loaded l;
	char want[600];

	load(&l, text);
	ck_assert_int_eq(l.rc, -1);
	snprintf(want, sizeof(want), "%s:%s", l.path, where_what);
	ck_assert_str_eq(l.err, want);
}

START_TEST(test_defaults)
{
	struct config c;

	memset(&c, 0xa5, sizeof(c));
	config_defaults(&c);
	ck_assert_str_eq(c.port_ca, "");
	ck_assert_int_eq(c.port_num, 0);
	ck_assert_uint_eq(c.port_guid, 0);
	ck_assert_uint_eq(c.subnet_prefix, 0xfe80000000000000ULL);
	ck_assert_int_eq(c.sm_priority, 0);
	ck_assert_str_eq(c.state_dir, "/var/lib/ibsmd");
	ck_assert_int_eq(c.log_level, LOG_NOTICE);
	ck_assert_int_eq(c.sweep_interval_s, 10);
	ck_assert_int_eq(c.mad_timeout_ms, 200);
	ck_assert_int_eq(c.mad_retries, 3);
	ck_assert_int_eq(c.mad_window, 256);
	ck_assert_int_eq(c.mad_window_per_node, 16);
	ck_assert_int_eq(c.mad_one_cpu, TRI_AUTO);
	ck_assert_int_eq(c.lmc, 0);
	ck_assert_int_eq(c.n_engines, 2);
	ck_assert_str_eq(c.engines[0], "ftree");
	ck_assert_str_eq(c.engines[1], "updn");
	ck_assert_int_eq(c.n_roots, 0);
	ck_assert_int_eq(c.subnet_timeout, 18);
	ck_assert_int_eq(c.hoq_life, 18);
	ck_assert_int_eq(c.leaf_hoq_life, 16);
	ck_assert_int_eq(c.switch_lifetime, 18);	/* OpenSM's packet_life_time */
	ck_assert_int_eq(c.vl_stall_count, 7);
	ck_assert_int_eq(c.max_op_vls, 5);
	ck_assert_int_eq(c.sminfo_poll_ms, 10000);
	ck_assert_int_eq(c.sminfo_poll_retries, 4);
	ck_assert_uint_eq(c.sm_key, 0);
	ck_assert_uint_eq(c.sa_key, 0);		/* no trusted SA requester */
	ck_assert_int_eq(c.mkey_protect, 0);	/* no M_Key */
	ck_assert_int_eq(c.mkey_lease_s, 60);
	ck_assert_str_eq(c.mkey_secret_file, "");	/* STATE_DIR/mkey.secret */
	ck_assert_int_eq(c.n_parts, 0);
	ck_assert_uint_eq(c.n_members, 0);
	ck_assert_int_eq(c.isolation_strict, 0);
	ck_assert_uint_eq(c.n_weights, 0);
	ck_assert_int_eq(c.wlearn_period_s, 0);
	ck_assert_uint_eq(c.wlearn_min, 1);
	ck_assert_uint_eq(c.wlearn_max, 100);
}
END_TEST

/* Files that set nothing leave the defaults byte for byte. */
START_TEST(test_empty_policies)
{
	static const char *const texts[] = {
		"",
		"# only a comment\n\n   # and another\n",
		"---\n",
		"--- ~\n...\n",
		"sweep:\nmad:\nrouting: ~\n",
	};
	struct config def;
	struct loaded l;

	config_defaults(&def);
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		load_ok(&l, texts[i]);
		ck_assert_msg(memcmp(&l.c, &def, sizeof(def)) == 0,
			      "policy %zu changed the defaults", i);
	}
}
END_TEST

static const char full_policy[] =
	"# every key, none at its default\n"
	"port:\n"
	"  ca: mlx5_1\n"
	"  num: 2\n"
	"subnet_prefix: 0xfec0000000000001\n"
	"sm:\n"
	"  priority: 15\n"
	"  subnet_timeout: 20\n"
	"  poll_ms: 2500\n"
	"  poll_retries: 9\n"
	"  sm_key: 0x1\n"
	"state_dir: \"/srv/ibsmd state\"\n"
	"log_level: debug\n"
	"sweep: {interval_s: 0}\n"
	"mad:\n"
	"  timeout_ms: 0x3e8\n"
	"  retries: 20\n"
	"  window: 4096\n"
	"  window_per_node: 1\n"
	"  one_cpu: off\n"
	"lmc: 2\n"
	"routing:\n"
	"  engine: [ftree, updn, minhop]\n"
	"  roots: [\"S-S0\", 0x0002c90200000001]\n"
	"ports:\n"
	"  hoq_life: 31\n"
	"  leaf_hoq_life: 0\n"
	"  switch_lifetime: 9\n"
	"  vl_stall_count: 3\n"
	"  max_op_vls: 1\n"
	"events:\n"
	"  max_report_failures: 9\n";

START_TEST(test_full_policy)
{
	struct loaded l;

	load_ok(&l, full_policy);
	ck_assert_str_eq(l.c.port_ca, "mlx5_1");
	ck_assert_int_eq(l.c.port_num, 2);
	ck_assert_uint_eq(l.c.port_guid, 0);
	ck_assert_uint_eq(l.c.subnet_prefix, 0xfec0000000000001ULL);
	ck_assert_int_eq(l.c.sm_priority, 15);
	ck_assert_int_eq(l.c.subnet_timeout, 20);
	ck_assert_int_eq(l.c.sminfo_poll_ms, 2500);
	ck_assert_int_eq(l.c.sminfo_poll_retries, 9);
	ck_assert_uint_eq(l.c.sm_key, 1);
	ck_assert_str_eq(l.c.state_dir, "/srv/ibsmd state");
	ck_assert_int_eq(l.c.log_level, LOG_DEBUG);
	ck_assert_int_eq(l.c.sweep_interval_s, 0);
	ck_assert_int_eq(l.c.mad_timeout_ms, 1000);
	ck_assert_int_eq(l.c.mad_retries, 20);
	ck_assert_int_eq(l.c.mad_window, 4096);
	ck_assert_int_eq(l.c.mad_window_per_node, 1);
	ck_assert_int_eq(l.c.mad_one_cpu, TRI_OFF);
	ck_assert_int_eq(l.c.lmc, 2);
	ck_assert_int_eq(l.c.n_engines, 3);
	ck_assert_str_eq(l.c.engines[0], "ftree");
	ck_assert_str_eq(l.c.engines[1], "updn");
	ck_assert_str_eq(l.c.engines[2], "minhop");
	ck_assert_int_eq(l.c.n_roots, 2);
	ck_assert_str_eq(l.c.roots[0], "S-S0");
	ck_assert_str_eq(l.c.roots[1], "0x0002c90200000001");
	ck_assert_int_eq(l.c.hoq_life, 31);
	ck_assert_int_eq(l.c.leaf_hoq_life, 0);
	ck_assert_int_eq(l.c.switch_lifetime, 9);
	ck_assert_int_eq(l.c.vl_stall_count, 3);
	ck_assert_int_eq(l.c.max_op_vls, 1);
	ck_assert_int_eq(l.c.events_max_report_failures, 9);
}
END_TEST

START_TEST(test_other_values)
{
	struct loaded l;

	load_ok(&l, "port: {guid: 0x0002C90300A1B2C3}\n"
		"log_level: WARNING\n"
		"subnet_prefix: 18302628885633695744\n"
		"sm: {priority: !!int 7, sm_key: 0xffffffffffffffff}\n");
	ck_assert_uint_eq(l.c.port_guid, 0x0002c90300a1b2c3ULL);
	ck_assert_str_eq(l.c.port_ca, "");
	ck_assert_int_eq(l.c.log_level, LOG_WARN);
	ck_assert_uint_eq(l.c.subnet_prefix, 0xfe00000000000000ULL);
	ck_assert_int_eq(l.c.sm_priority, 7);
	ck_assert_uint_eq(l.c.sm_key, UINT64_MAX);
}
END_TEST

/* The shipped example sets every key to its default. */
START_TEST(test_example_policy)
{
	struct config c, def;
	char err[512] = "";

	config_defaults(&def);
	config_defaults(&c);
	c.lmc = 5;
	c.n_roots = 3;
	ck_assert_msg(config_load(&c, "etc/ibsmd.yaml", err, sizeof(err))
		      == 0, "etc/ibsmd.yaml: %s", err);
	ck_assert_int_gt(c.keys_set, 0);	/* what the file set, not a key */
	def.keys_set = c.keys_set;
	ck_assert(memcmp(&c, &def, sizeof(c)) == 0);
}
END_TEST

START_TEST(test_engine_scalar_and_sequence)
{
	struct loaded l;

	load_ok(&l, "routing:\n  engine: ftree\n");
	ck_assert_int_eq(l.c.n_engines, 1);
	ck_assert_str_eq(l.c.engines[0], "ftree");
	ck_assert_str_eq(l.c.engines[1], "");

	load_ok(&l, "routing:\n  engine:\n    - dmodk\n    - updn\n");
	ck_assert_int_eq(l.c.n_engines, 2);
	ck_assert_str_eq(l.c.engines[0], "dmodk");
	ck_assert_str_eq(l.c.engines[1], "updn");

	load_ok(&l, "routing: {engine: [minhop]}\n");
	ck_assert_int_eq(l.c.n_engines, 1);
	ck_assert_str_eq(l.c.engines[0], "minhop");

	/* roots take a single name too, or nothing */
	load_ok(&l, "routing: {roots: S-S0}\n");
	ck_assert_int_eq(l.c.n_roots, 1);
	ck_assert_str_eq(l.c.roots[0], "S-S0");
	load_ok(&l, "routing:\n  roots:\n");
	ck_assert_int_eq(l.c.n_roots, 0);

	load_fails("routing:\n  engine: [ftree, bogus]\n",
		   "2:19: routing.engine: unknown routing engine 'bogus' "
		   "(known: minhop updn ftree dmodk vswitch-ftree pftree dfsssp dor nue)");
	load_fails("routing:\n  engine: Ftree\n",
		   "2:11: routing.engine: unknown routing engine 'Ftree' "
		   "(known: minhop updn ftree dmodk vswitch-ftree pftree dfsssp dor nue)");
	load_fails("routing:\n  engine: []\n",
		   "2:11: routing.engine: the engine list is empty");
	load_fails("routing:\n  engine:\n",
		   "2:10: routing.engine: expected an engine name, "
		   "got nothing");
	load_fails("routing:\n  engine: [ftree, minhop, ftree]\n",
		   "2:27: routing.engine: engine 'ftree' is listed twice");
	load_fails("routing:\n  engine: [[ftree]]\n",
		   "2:12: routing.engine: expected an engine name, "
		   "got a sequence");
	load_fails("routing:\n  engine: {ftree: 1}\n",
		   "2:11: routing.engine: expected a name or a sequence of "
		   "names, got a mapping");
}
END_TEST

START_TEST(test_list_limits)
{
	char text[8192];
	struct loaded l;
	size_t n;
	int i;

	n = (size_t)snprintf(text, sizeof(text), "routing:\n  roots:\n");
	for (i = 0; i < CFG_MAX_ROOTS; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "    - S-%d\n", i);
	load_ok(&l, text);
	ck_assert_int_eq(l.c.n_roots, CFG_MAX_ROOTS);
	ck_assert_str_eq(l.c.roots[CFG_MAX_ROOTS - 1], "S-63");

	snprintf(text + n, sizeof(text) - n, "    - S-extra\n");
	load_fails(text, "67:7: routing.roots: more than 64 entries");

	memset(text, 0, sizeof(text));
	strcpy(text, "routing: {roots: [");
	memset(text + strlen(text), 'x', CFG_NAME_LEN);
	strcat(text, "]}\n");
	load_fails(text, "1:19: routing.roots: '"
		   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		   "' is too long (at most 63 characters)");
	load_fails("routing: {roots: ['']}\n",
		   "1:19: routing.roots: empty names are not allowed");
}
END_TEST

/*
 * Keys ibsmd.yaml(5) documents as not implemented yet are refused at the key,
 * whatever the value, with their own message; a misspelt key in the same
 * sections stays an unknown key.
 */
/* node_name_map: the file is read with the policy; its errors refuse it */
START_TEST(test_node_name_map)
{
	struct loaded l;
	char map[64], text[160];
	snprintf(map, sizeof(map), "/tmp/test_config_map.XXXXXX");
	int fd = mkstemp(map);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "0x10 \"a\"\n", 9), 9);
	close(fd);
	snprintf(text, sizeof(text), "node_name_map: %s\n", map);
	load_ok(&l, text);
	ck_assert_str_eq(l.c.node_name_map, map);
	fd = open(map, O_WRONLY | O_APPEND);
	ck_assert_int_eq(write(fd, "0x11 b\"\n", 8), 8);	/* an unquoted name */
	ck_assert_int_eq(write(fd, "junk\n", 5), 5);
	close(fd);
	char want[300];
	snprintf(want, sizeof(want), " node_name_map: %s:3: not a GUID", map);
	load(&l, text);
	ck_assert_int_eq(l.rc, -1);
	ck_assert_msg(strstr(l.err, want) && !strncmp(l.err, l.path, strlen(l.path)), "%s", l.err);
	unlink(map);
	load(&l, text);
	ck_assert_int_eq(l.rc, -1);
	ck_assert_msg(strstr(l.err, "No such file"), "%s", l.err);
}
END_TEST

/* multicast and partitions[].ipoib: the IPoIB broadcast groups */
START_TEST(test_multicast)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "partitions:\n  - name: a\n    pkey: 1\n    ipoib: [x]\n",
		  "4:12: partitions[0].ipoib: expected a name, got a sequence" },
		{ "partitions: [{name: a, pkey: 1, ipoib: yes}]\n",
		  "1:40: partitions[0].ipoib: 'yes' is not one of false, true" },
		{ "partitions: [{name: a, pkey: 1, mtu: 4}]\n",
		  "1:33: partitions[0].mtu: only with ipoib: true (the broadcast group's)" },
		{ "partitions: [{name: a, pkey: 1, ipoib: false, qkey: 5}]\n",
		  "1:47: partitions[0].qkey: only with ipoib: true (the broadcast group's)" },
		{ "partitions: [{name: a, pkey: 1, ipoib: true, mtu: 6}]\n",
		  "1:51: partitions[0].mtu: 6 is out of range 1..5" },
		{ "multicast: {rate: 1}\n",
		  "1:19: multicast.rate: 1 is out of range 2..24" },
		{ "ports: {switch_lifetime: 32}\n",
		  "1:26: ports.switch_lifetime: 32 is out of range 0..31" },
		{ "multicast: {qkey: 0x80000000}\n",
		  "1:19: multicast.qkey: 0x80000000 is out of range 0..2147483647" },
		{ "multicast: {default_ipoib: no}\n",
		  "1:28: multicast.default_ipoib: 'no' is not one of false, true" },
		{ "multicast: {mtu: 4, scope: 2}\n",
		  "1:21: unknown key 'multicast.scope'" },
	};
	struct loaded l;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		load_fails(bad[i].text, bad[i].want);
	load_ok(&l, "");
	ck_assert_int_eq(l.c.mc_default_ipoib, 1);
	ck_assert_int_eq(l.c.mc_mtu, 4);
	ck_assert_int_eq(l.c.mc_rate, 3);
	ck_assert_int_eq(l.c.mc_sl, 0);
	ck_assert_int_eq(l.c.mc_qkey, 0x0b1b);
	load_ok(&l, "multicast: {default_ipoib: false, mtu: 5, rate: 7, sl: 1, "
		"qkey: 0x1234}\npartitions:\n"
		"  - {name: a, pkey: 1, ipoib: true, mtu: 3, rate: 2, qkey: 9}\n"
		"  - {name: b, pkey: 2, ipoib: true}\n"
		"  - {name: c, pkey: 3, ipoib: false}\n");
	ck_assert_int_eq(l.c.mc_default_ipoib, 0);
	ck_assert_int_eq(l.c.mc_mtu, 5);
	ck_assert_int_eq(l.c.mc_rate, 7);
	ck_assert_int_eq(l.c.mc_sl, 1);
	ck_assert_int_eq(l.c.mc_qkey, 0x1234);
	ck_assert_int_eq(l.c.parts[0].ipoib, 1);
	ck_assert_int_eq(l.c.parts[0].mtu, 3);
	ck_assert_int_eq(l.c.parts[0].rate, 2);
	ck_assert_int_eq(l.c.parts[0].qkey, 9);
	ck_assert_int_eq(l.c.parts[1].ipoib, 1);
	ck_assert_int_eq(l.c.parts[1].mtu, 0);	/* multicast.mtu's */
	ck_assert_int_eq(l.c.parts[1].qkey, -1);
	ck_assert_int_eq(l.c.parts[2].ipoib, 0);
}
END_TEST

/* sa: the SA's answers in flight (sm/sa/sa_budget.h) */
START_TEST(test_sa_limits)
{
	struct loaded l;

	load_ok(&l, "");
	ck_assert_int_eq(l.c.sa_max_answers_per_requester, 64);
	ck_assert_uint_eq(l.c.sa_max_answer_bytes_per_requester, 64ULL << 20);
	ck_assert_uint_eq(l.c.sa_max_answer_bytes, 512ULL << 20);
	load_ok(&l, "sa:\n  max_answers_per_requester: 4\n"
		"  max_answer_bytes_per_requester: 1048576\n  max_answer_bytes: 0x40000000\n");
	ck_assert_int_eq(l.c.sa_max_answers_per_requester, 4);
	ck_assert_uint_eq(l.c.sa_max_answer_bytes_per_requester, 1048576);
	ck_assert_uint_eq(l.c.sa_max_answer_bytes, 1ULL << 30);
	load_fails("sa: {max_answers_per_requester: 0}\n",
		   "1:33: sa.max_answers_per_requester: 0 is out of range 1..256");
	load_fails("sa: {max_answer_bytes: 4096}\n",
		   "1:24: sa.max_answer_bytes: 4096 is out of range 0x10000..0xffffffffffffffff");
	load_fails("sa: {max_answer_bytes: 100000}\n",
		   "1:1: sa: max_answer_bytes_per_requester (67108864) is more than max_answer_bytes (100000)");
	load_fails("sa: {max_requests: 5}\n", "1:6: unknown key 'sa.max_requests'");
	/* the registered ServiceRecords (sm/sa/sa_service.c) */
	ck_assert_int_eq(l.c.sa_max_services, 16384);
	ck_assert_int_eq(l.c.sa_max_services_per_port, 32);
	load_ok(&l, "sa: {max_services: 100, max_services_per_port: 100}\n");
	ck_assert_int_eq(l.c.sa_max_services, 100);
	ck_assert_int_eq(l.c.sa_max_services_per_port, 100);
	load_fails("sa: {max_services_per_port: 0}\n",
		   "1:29: sa.max_services_per_port: 0 is out of range 1..1048576");
	load_fails("sa: {max_services: 10}\n",
		   "1:1: sa: max_services_per_port (32) is more than max_services (10)");
}
END_TEST

START_TEST(test_not_implemented)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		/* the VL assignment and the QoS modes would share SL2VL */
		{ "partitions:\n  - {name: a, pkey: 1}\n"
		  "  - {name: b, pkey: 2, policy: vlane-isolation}\n"
		  "qos: {mode: vftree}\n",
		  "3:32: partitions[1].policy: vlane-isolation with qos.mode "
		  "vftree: not implemented yet (the VL assignment owns the "
		  "SL-to-VL tables)" },
		{ "qos: {mode: voqsw}\n"
		  "partitions: [{name: b, pkey: 2, policy: vlane-isolation}]\n",
		  "2:41: partitions[0].policy: vlane-isolation with qos.mode "
		  "voqsw: not implemented yet (the VL assignment owns the "
		  "SL-to-VL tables)" },
		/* misspelt keys of those sections are not "coming" */
		{ "qos: {mod: none}\n", "1:7: unknown key 'qos.mod'" },
		{ "metrics: {port: 1}\n", "1:11: unknown key 'metrics.port'" },
		{ "partition: []\n", "1:1: unknown key 'partition'" },
	};
	struct loaded l;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		load_fails(cases[i].text, cases[i].want);
	/* the sections themselves may stand empty, as any section */
	load_ok(&l, "qos:\nevents: {}\nvirtualization:\ncontrol:\n"
		"metrics: {}\npartitions:\nrouting: {weights: [], "
		"weight_learning: {}}\n");
	ck_assert_int_eq(l.c.n_parts, 0);
	ck_assert_uint_eq(l.c.n_weights, 0);
	/* vlane-isolation without a QoS mode, and QoS without it, are fine */
	load_ok(&l, "qos: {mode: vftree}\npartitions: [{name: a, pkey: 1, "
		"policy: phy-isolation}]\n");
	load_ok(&l, "partitions: [{name: a, pkey: 1, policy: "
		"vlane-isolation}]\n");
	ck_assert_int_eq(l.c.parts[0].policy, PART_VLANE);
}
END_TEST

/* The partition keys of ibsmd.yaml(5), every form, read back field by field. */
static const char partition_policy[] =
	"routing:\n"
	"  engine: ftree\n"
	"  isolation_mode: strict\n"
	"  weights:\n"
	"    - {node: \"H-0-*\", weight: 100}\n"
	"    - {guid: 0x0002c90300000011, weight: 5}\n"
	"  weight_learning: {period_s: 600, min: 2, max: 50}\n"
	"partitions:\n"
	"  - name: tenantA\n"
	"    pkey: 0x0001\n"
	"    policy: phy-isolation\n"
	"    sl: 2\n"
	"    members:\n"
	"      - \"H-0-*\"\n"
	"      - \"0x0002c90300a1b2c1\"\n"
	"      - 0x0002C90300A1B2C3\n"
	"      - {node: \"H-1-0\", port: 1, membership: limited}\n"
	"      - {guid: 0x0002c90300a1b2c2, membership: full}\n"
	"  - name: tenant_B.2-x\n"
	"    pkey: 0x7ffe\n"
	"    policy: vlane-isolation\n"
	"    members: []\n"
	"  - name: c\n"
	"    pkey: 3\n"
	"    members: [\"0x1\", {node: \"*\", port: 254}]\n";

START_TEST(test_partitions)
{
	struct loaded l;
	const struct cfg_member *m;

	load_ok(&l, partition_policy);
	ck_assert_int_eq(l.c.isolation_strict, 1);
	ck_assert_uint_eq(l.c.n_weights, 2);
	ck_assert_str_eq(l.c.weights[0].node, "H-0-*");
	ck_assert_uint_eq(l.c.weights[0].guid, 0);
	ck_assert_uint_eq(l.c.weights[0].weight, 100);
	ck_assert_str_eq(l.c.weights[1].node, "");
	ck_assert_uint_eq(l.c.weights[1].guid, 0x0002c90300000011ULL);
	ck_assert_uint_eq(l.c.weights[1].weight, 5);
	ck_assert_int_eq(l.c.wlearn_period_s, 600);
	ck_assert_uint_eq(l.c.wlearn_min, 2);
	ck_assert_uint_eq(l.c.wlearn_max, 50);

	ck_assert_int_eq(l.c.n_parts, 3);
	ck_assert_uint_eq(l.c.n_members, 7);
	ck_assert_str_eq(l.c.parts[0].name, "tenantA");
	ck_assert_uint_eq(l.c.parts[0].pkey, 0x0001);
	ck_assert_int_eq(l.c.parts[0].policy, PART_PHY);
	ck_assert_int_eq(l.c.parts[0].sl, 2);
	ck_assert_int_eq(l.c.parts[0].ipoib, 0);
	ck_assert_uint_eq(l.c.parts[0].first, 0);
	ck_assert_uint_eq(l.c.parts[0].n, 5);
	m = &l.c.members[0];
	ck_assert_str_eq(m[0].node, "H-0-*");
	ck_assert_uint_eq(m[0].guid, 0);
	ck_assert_int_eq(m[0].port, 0);
	ck_assert_int_eq(m[0].full, 1);
	ck_assert_str_eq(m[1].node, "");
	ck_assert_uint_eq(m[1].guid, 0x0002c90300a1b2c1ULL);	/* quoted */
	ck_assert_int_eq(m[1].full, 1);
	ck_assert_uint_eq(m[2].guid, 0x0002c90300a1b2c3ULL);	/* plain */
	ck_assert_str_eq(m[3].node, "H-1-0");
	ck_assert_int_eq(m[3].port, 1);
	ck_assert_int_eq(m[3].full, 0);
	ck_assert_uint_eq(m[4].guid, 0x0002c90300a1b2c2ULL);
	ck_assert_int_eq(m[4].full, 1);

	ck_assert_str_eq(l.c.parts[1].name, "tenant_B.2-x");
	ck_assert_uint_eq(l.c.parts[1].pkey, 0x7ffe);
	ck_assert_int_eq(l.c.parts[1].policy, PART_VLANE);
	ck_assert_int_eq(l.c.parts[1].sl, -1);
	ck_assert_uint_eq(l.c.parts[1].first, 5);
	ck_assert_uint_eq(l.c.parts[1].n, 0);

	ck_assert_str_eq(l.c.parts[2].name, "c");
	ck_assert_int_eq(l.c.parts[2].policy, PART_DEF);
	ck_assert_uint_eq(l.c.parts[2].first, 5);
	ck_assert_uint_eq(l.c.parts[2].n, 2);
	ck_assert_uint_eq(m[5].guid, 1);
	ck_assert_str_eq(m[6].node, "*");
	ck_assert_int_eq(m[6].port, 254);
	ck_assert_int_eq(m[6].full, 1);

	/* partitions: replaces: given empty, nothing is left of the list */
	load_ok(&l, "partitions: []\n");
	ck_assert_int_eq(l.c.n_parts, 0);
	ck_assert_uint_eq(l.c.n_members, 0);
	load_ok(&l, "routing: {isolation_mode: best-effort}\n");
	ck_assert_int_eq(l.c.isolation_strict, 0);
}
END_TEST

/* Each wrong partition, weight or learning setting at its key. */
START_TEST(test_partition_errors)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		/* P_Keys */
		{ "partitions:\n  - {name: a, pkey: 0}\n",
		  "2:21: partitions[0].pkey: 0 is out of range 0x0001..0x7ffe" },
		{ "partitions:\n  - {name: a, pkey: 0x7fff}\n",
		  "2:21: partitions[0].pkey: 0x7fff is the default partition: "
		  "it is built in" },
		{ "partitions:\n  - {name: a, pkey: 0xffff}\n",
		  "2:21: partitions[0].pkey: 0xffff is the default partition: "
		  "it is built in" },
		{ "partitions:\n  - {name: a, pkey: 0x8001}\n",
		  "2:21: partitions[0].pkey: 0x8001 has the membership bit 15 "
		  "set: give 0x0001 (members say full or limited)" },
		{ "partitions:\n  - {name: a, pkey: 0x10000}\n",
		  "2:21: partitions[0].pkey: 0x10000 is out of range "
		  "0x0001..0x7ffe" },
		{ "partitions:\n  - {name: a, pkey: -1}\n",
		  "2:21: partitions[0].pkey: -1 is out of range 0x0001..0x7ffe" },
		{ "partitions:\n  - {name: a, pkey: \"1\"}\n",
		  "2:21: partitions[0].pkey: expected an integer, got the "
		  "string '1'" },
		{ "partitions:\n  - {name: a, pkey: 5}\n  - {name: b, pkey: 6}\n"
		  "  - {name: c, pkey: 0x5}\n",
		  "4:15: partitions[2].pkey: partitions 'a' and 'c' both have "
		  "P_Key 0x0005" },
		{ "partitions:\n  - {name: a}\n",
		  "2:5: partitions[0]: pkey is missing" },
		/* names */
		{ "partitions:\n  - {name: a, pkey: 1}\n  - pkey: 2\n"
		  "    name: a\n",
		  "4:5: partitions[1].name: 'a' is also partitions[0]'s" },
		{ "partitions:\n  - {pkey: 1}\n",
		  "2:5: partitions[0]: name is missing" },
		{ "partitions:\n  - {name: 'a b', pkey: 1}\n",
		  "2:6: partitions[0].name: 'a b' has characters other than "
		  "A-Z a-z 0-9 _ . -" },
		{ "partitions:\n  - {name: default, pkey: 1}\n",
		  "2:6: partitions[0].name: 'default' is the built-in default "
		  "partition's (P_Key 0x7fff)" },
		/* policy, sl */
		{ "partitions:\n  - {name: a, pkey: 1, policy: phy}\n",
		  "2:32: partitions[0].policy: 'phy' is not one of "
		  "def-isolation, vlane-isolation, phy-isolation" },
		{ "partitions:\n  - {name: a, pkey: 1, sl: 16}\n",
		  "2:28: partitions[0].sl: 16 is out of range 0..15" },
		{ "partitions:\n  - {name: a, pkey: 1, sl: 3, policy: "
		  "vlane-isolation}\n",
		  "2:24: partitions[0].sl: not with policy vlane-isolation (the "
		  "routing assigns its SL)" },
		{ "partitions:\n  - {name: a, pkey: 1, slx: 3}\n",
		  "2:24: unknown key 'partitions[0].slx'" },
		{ "partitions:\n  - {name: a, pkey: 1, pkey: 2}\n",
		  "2:24: duplicate key 'partitions[0].pkey' (first at line 2, "
		  "column 15)" },
		/* members */
		{ "partitions:\n  - {name: a, pkey: 1, members: [H-1, 0xzz]}\n",
		  "2:39: partitions[0].members[1]: '0xzz' is not a GUID" },
		{ "partitions:\n  - {name: a, pkey: 1, members: [0x0]}\n",
		  "2:34: partitions[0].members[0]: '0x0' is not a GUID" },
		{ "partitions:\n  - {name: a, pkey: 1, members: "
		  "[0x10000000000000000]}\n",
		  "2:34: partitions[0].members[0]: GUID 0x10000000000000000 "
		  "does not fit 64 bits" },
		{ "partitions:\n  - {name: a, pkey: 1, members: [\"\"]}\n",
		  "2:34: partitions[0].members[0]: must not be empty" },
		{ "partitions:\n  - {name: a, pkey: 1, members: [[H-1]]}\n",
		  "2:34: partitions[0].members[0]: expected a mapping or a "
		  "scalar, got a sequence" },
		{ "partitions:\n  - {name: a, pkey: 1, members: H-1}\n",
		  "2:33: partitions[0].members: expected a sequence, got a "
		  "scalar" },
		{ "partitions:\n  - name: a\n    pkey: 1\n    members:\n"
		  "      - {guid: 0x1, membership: partial}\n",
		  "5:33: partitions[0].members[0].membership: 'partial' is not "
		  "one of limited, full" },
		{ "partitions:\n  - name: a\n    pkey: 1\n    members:\n"
		  "      - {node: x, port: 255}\n",
		  "5:25: partitions[0].members[0].port: 255 is out of range "
		  "1..254" },
		{ "partitions:\n  - name: a\n    pkey: 1\n    members:\n"
		  "      - {node: x, guid: 0x2}\n",
		  "5:9: partitions[0].members[0]: give either node or guid, not "
		  "both" },
		{ "partitions:\n  - name: a\n    pkey: 1\n    members:\n"
		  "      - {port: 1}\n",
		  "5:9: partitions[0].members[0]: node or guid is missing" },
		{ "partitions:\n  - name: a\n    pkey: 1\n    members:\n"
		  "      - {lid: 1}\n",
		  "5:10: unknown key 'partitions[0].members[0].lid'" },
		{ "partitions: {name: a}\n",
		  "1:13: partitions: expected a sequence, got a mapping" },
		{ "partitions: [tenantA]\n",
		  "1:14: partitions[0]: expected a mapping, got a scalar" },
		/* weights */
		{ "routing:\n  weights:\n    - {node: a, weight: 0}\n",
		  "3:25: routing.weights[0].weight: 0 is out of range "
		  "1..1000000" },
		{ "routing:\n  weights:\n    - {node: a, weight: 1000001}\n",
		  "3:25: routing.weights[0].weight: 1000001 is out of range "
		  "1..1000000" },
		{ "routing:\n  weights:\n    - {node: a, weight: 1}\n"
		  "    - {node: b}\n",
		  "4:7: routing.weights[1]: weight is missing" },
		{ "routing:\n  weights:\n    - {weight: 2}\n",
		  "3:7: routing.weights[0]: node or guid is missing" },
		{ "routing:\n  weights:\n    - {node: a, guid: 0x1, weight: 2}\n",
		  "3:7: routing.weights[0]: give either node or guid, not both" },
		{ "routing:\n  weights:\n    - {guid: 0, weight: 2}\n",
		  "3:14: routing.weights[0].guid: 0 is out of range "
		  "0x1..0xffffffffffffffff" },
		{ "routing:\n  weights:\n    - \"H-*\"\n",
		  "3:7: routing.weights[0]: expected a mapping, got a scalar" },
		/* learning, isolation */
		{ "routing:\n  weight_learning: {period_s: 86401}\n",
		  "2:31: routing.weight_learning.period_s: 86401 is out of "
		  "range 0..86400" },
		{ "routing:\n  weight_learning: {min: 0}\n",
		  "2:26: routing.weight_learning.min: 0 is out of range "
		  "1..1000000" },
		{ "routing:\n  weight_learning: {min: 10, max: 10}\n",
		  "2:21: routing.weight_learning.min: 10 must be below max 10" },
		{ "routing:\n  weight_learning: {max: 1}\n",
		  "2:3: routing.weight_learning: min: 1 must be below max 1" },
		{ "routing:\n  isolation_mode: hard\n",
		  "2:19: routing.isolation_mode: 'hard' is not one of "
		  "best-effort, strict" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		load_fails(cases[i].text, cases[i].want);
}
END_TEST

/* The pools' limits are said, with the limit. */
/*
 * OpenSM's partitions model: default_partition (its ipoib the alias of
 * multicast.default_ipoib), partitions.conf's member keywords and its
 * =full / =limited / =both (both: full, as OpenSM without
 * allow_both_pkeys).
 */
START_TEST(test_opensm_partitions)
{
	struct loaded l;

	load_ok(&l, "partitions: []\n");
	ck_assert_int_eq(l.c.default_full, 0);	/* tenants stay apart by default */
	ck_assert_int_eq(l.c.mc_default_ipoib, 1);
	load_ok(&l, "default_partition: {membership: full}\n");
	ck_assert_int_eq(l.c.default_full, 1);	/* OpenSM's shipped file */
	load_ok(&l, "default_partition: {membership: limited, ipoib: false}\n");
	ck_assert_int_eq(l.c.default_full, 0);
	ck_assert_int_eq(l.c.mc_default_ipoib, 0);
	load_ok(&l, "default_partition: {membership: full}\n"
		"multicast: {default_ipoib: false}\n");
	ck_assert_int_eq(l.c.default_full, 1);
	ck_assert_int_eq(l.c.mc_default_ipoib, 0);

	load_ok(&l, "partitions:\n  - name: t\n    pkey: 1\n    members: "
		"[ALL, ALL_CAS=limited, ALL_SWITCHES=full, ALL_ROUTERS=both, "
		"SELF, \"0x0002c90300a1b2c1=limited\", \"H-1*=both\", "
		"\"H-2=full\", 0x10]\n");
	ck_assert_int_eq(l.c.n_members, 9);
	static const struct { int kind, full; uint64_t guid; const char *node; } want[] = {
		{ MEMBER_ALL, 1, 0, "" }, { MEMBER_ALL_CAS, 0, 0, "" },
		{ MEMBER_ALL_SWITCHES, 1, 0, "" }, { MEMBER_ALL_ROUTERS, 1, 0, "" },
		{ MEMBER_SELF, 1, 0, "" }, { MEMBER_SPEC, 0, 0x0002c90300a1b2c1ULL, "" },
		{ MEMBER_SPEC, 1, 0, "H-1*" }, { MEMBER_SPEC, 1, 0, "H-2" },
		{ MEMBER_SPEC, 1, 0x10, "" },
	};
	for (unsigned i = 0; i < 9; i++) {
		const struct cfg_member *m = &l.c.members[i];
		ck_assert_msg(m->kind == want[i].kind && m->full == want[i].full &&
			      m->guid == want[i].guid && !strcmp(m->node, want[i].node),
			      "member %u: kind %d full %d guid 0x%llx node '%s'", i,
			      m->kind, m->full, (unsigned long long)m->guid, m->node);
	}
	/* the mapping form names a node so described */
	load_ok(&l, "partitions:\n  - {name: t, pkey: 1, members: [{node: ALL_X}]}\n");
	ck_assert_int_eq(l.c.members[0].kind, MEMBER_SPEC);
	ck_assert_str_eq(l.c.members[0].node, "ALL_X");

	load_fails("partitions:\n  - {name: t, pkey: 1, members: [ALL_CA]}\n",
		   "2:34: partitions[0].members[0]: 'ALL_CA' is not a keyword "
		   "(ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF); a node "
		   "description so written is {node: 'ALL_CA'}");
	load_fails("partitions:\n  - {name: t, pkey: 1, members: [H-0, ALL_SWITCH=full]}\n",
		   "2:39: partitions[0].members[1]: 'ALL_SWITCH' is not a keyword "
		   "(ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF); a node "
		   "description so written is {node: 'ALL_SWITCH'}");
	load_fails("partitions:\n  - {name: t, pkey: 1, members: [SELF=ful]}\n",
		   "2:34: partitions[0].members[0]: 'SELF=ful': the membership "
		   "after '=' is one of full, limited, both (a pattern with '=' "
		   "is written {node: ...})");
	load_fails("partitions:\n  - {name: t, pkey: 1, members: [0x12g4=full]}\n",
		   "2:34: partitions[0].members[0]: '0x12g4' is not a GUID");
	load_fails("partitions:\n  - {name: t, pkey: 1, members: [\"=full\"]}\n",
		   "2:34: partitions[0].members[0]: must not be empty");
	load_fails("default_partition: {membership: both}\n",
		   "1:33: default_partition.membership: 'both' is not one of "
		   "limited, full");
}
END_TEST

/*
 * partitions.conf's mgid= lines: partitions[].mgroups and
 * default_partition.mgroups.  An IPoIB MGID's P_Key bits 0 get the
 * partition's (its pkey given after the groups too).
 */
START_TEST(test_mgroups)
{
	static const uint8_t a16[16] = { 0xff, 0x12, 0x40, 0x1b, 0x80, 0x05, 0, 0,
					 0, 0, 0, 0, 0, 0, 0, 0x16 };
	static const uint8_t d2[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0,
					0, 0, 0, 0, 0, 0, 0, 0x02 };
	static const uint8_t o1[16] = { 0xff, 0x15, 0, 0, 0, 0, 0, 0,
					0, 0, 0, 0, 0, 0, 0, 0x01 };
	struct loaded l;

	load_ok(&l, "default_partition:\n  mgroups: [{mgid: \"ff12:601b::2\", sl: 1}]\n"
		"partitions:\n  - name: t\n    mgroups:\n"
		"      - {mgid: \"ff12:401b::16\"}\n"
		"      - {mgid: \"ff15::1\", qkey: 0xdead, mtu: 2, rate: 6}\n"
		"    pkey: 5\n  - {name: u, pkey: 6}\n");
	ck_assert_uint_eq(l.c.n_def_mgroups, 1);
	ck_assert_int_eq(memcmp(l.c.def_mgroups[0].mgid, d2, 16), 0);
	ck_assert_int_eq(l.c.def_mgroups[0].sl, 1);
	ck_assert_int_eq(l.c.def_mgroups[0].qkey, -1);
	ck_assert_uint_eq(l.c.n_mgroups, 2);
	ck_assert_uint_eq(l.c.parts[0].mg_first, 0);
	ck_assert_uint_eq(l.c.parts[0].mg_n, 2);
	ck_assert_uint_eq(l.c.parts[1].mg_n, 0);
	ck_assert_int_eq(memcmp(l.c.mgroups[0].mgid, a16, 16), 0);
	ck_assert_int_eq(l.c.mgroups[0].sl, -1);
	ck_assert_int_eq(memcmp(l.c.mgroups[1].mgid, o1, 16), 0);
	ck_assert_int_eq(l.c.mgroups[1].qkey, 0xdead);
	ck_assert_int_eq(l.c.mgroups[1].mtu, 2);
	ck_assert_int_eq(l.c.mgroups[1].rate, 6);
	/* the partition's own bits are fine */
	load_ok(&l, "partitions:\n  - {name: t, pkey: 5, mgroups: [{mgid: \"ff12:401b:8005::16\"}]}\n");

	load_fails("partitions:\n  - {name: t, pkey: 5, mgroups: [{mgid: \"ff12:401b:8006::16\"}]}\n",
		   "2:41: partitions[0].mgroups[0].mgid: the P_Key bits 0x8006 are not the partition's "
		   "0x8005 (give 0 to have them put in)");
	load_fails("default_partition: {mgroups: [{mgid: \"ff12::1\"}]}\n"
		   "partitions:\n  - {name: t, pkey: 5, mgroups: [{mgid: \"ff12::1\"}]}\n",
		   "3:41: partitions[0].mgroups[0].mgid: ff12::1 is given twice");
	load_fails("partitions:\n  - {name: t, pkey: 5, ipoib: true, mgroups: "
		   "[{mgid: \"ff12:401b::ffff:ffff\"}]}\n",
		   "2:54: partitions[0].mgroups[0].mgid: ff12:401b:8005::ffff:ffff is the partition's IPoIB "
		   "broadcast group (ipoib)");
	load_fails("partitions:\n  - {name: t, pkey: 5, mgroups: [{mgid: \"fe80::1\"}]}\n",
		   "2:41: partitions[0].mgroups[0].mgid: 'fe80::1' is not a "
		   "multicast GID (ff..)");
	load_fails("partitions:\n  - {name: t, pkey: 5, mgroups: [{mgid: ff12:zz}]}\n",
		   "2:41: partitions[0].mgroups[0].mgid: 'ff12:zz' is not a GID "
		   "(IPv6 notation, such as ff12:401b::16)");
	load_fails("partitions:\n  - {name: t, pkey: 5, mgroups: [{sl: 1}]}\n",
		   "2:34: partitions[0].mgroups[0]: mgid is missing");
}
END_TEST

START_TEST(test_partition_limits)
{
	size_t cap = 512 * 1024, n;
	char *text = malloc(cap);
	struct loaded l;

	ck_assert_ptr_nonnull(text);
	n = (size_t)snprintf(text, cap, "partitions:\n");
	for (int i = 0; i < CFG_MAX_PARTS; i++)
		n += (size_t)snprintf(text + n, cap - n,
				      "  - {name: p%d, pkey: %d, members: "
				      "[\"H-%d\"]}\n", i, i + 1, i);
	load_ok(&l, text);
	ck_assert_int_eq(l.c.n_parts, CFG_MAX_PARTS);
	ck_assert_uint_eq(l.c.parts[CFG_MAX_PARTS - 1].first, CFG_MAX_PARTS - 1);
	snprintf(text + n, cap - n, "  - {name: extra, pkey: 0x7000}\n");
	load_fails(text, "130:5: partitions: more than 128 partitions");

	/* members: one pool for every partition */
	n = (size_t)snprintf(text, cap, "partitions:\n  - name: a\n    pkey: 1\n"
			     "    members:\n");
	for (int i = 0; i < CFG_MAX_PART_MEMBERS / 2; i++)
		n += (size_t)snprintf(text + n, cap - n, "      - H-%d\n", i);
	n += (size_t)snprintf(text + n, cap - n, "  - name: b\n    pkey: 2\n"
			      "    members:\n");
	for (int i = 0; i < CFG_MAX_PART_MEMBERS / 2; i++)
		n += (size_t)snprintf(text + n, cap - n, "      - {guid: %d}\n",
				      i + 1);
	load_ok(&l, text);
	ck_assert_uint_eq(l.c.n_members, CFG_MAX_PART_MEMBERS);
	ck_assert_uint_eq(l.c.parts[1].first, CFG_MAX_PART_MEMBERS / 2);
	ck_assert_uint_eq(l.c.parts[1].n, CFG_MAX_PART_MEMBERS / 2);
	ck_assert_uint_eq(l.c.members[CFG_MAX_PART_MEMBERS - 1].guid,
			  CFG_MAX_PART_MEMBERS / 2);
	snprintf(text + n, cap - n, "      - H-extra\n");
	load_fails(text, "2056:9: partitions[1].members: more than 2048 "
		   "members (all partitions together)");

	n = (size_t)snprintf(text, cap, "routing:\n  weights:\n");
	for (int i = 0; i < CFG_MAX_WEIGHTS; i++)
		n += (size_t)snprintf(text + n, cap - n,
				      "    - {guid: %d, weight: %d}\n", i + 1, i + 1);
	load_ok(&l, text);
	ck_assert_uint_eq(l.c.n_weights, CFG_MAX_WEIGHTS);
	ck_assert_uint_eq(l.c.weights[CFG_MAX_WEIGHTS - 1].weight,
			  CFG_MAX_WEIGHTS);
	snprintf(text + n, cap - n, "    - {node: x, weight: 1}\n");
	load_fails(text, "1027:7: routing.weights: more than 1024 weights");
	free(text);
}
END_TEST

/*
 * control.group: a group the group database knows (its gid is kept for
 * the chown at start); an unknown one is refused at its value.
 */
START_TEST(test_control_group)
{
	struct loaded l;
	struct group *gr = getgrgid(getgid());

	ck_assert_ptr_nonnull(gr);
	char *name = strdup(gr->gr_name);
	char text[160];
	load_ok(&l, "sweep: {interval_s: 5}\n");
	ck_assert_str_eq(l.c.control_group, "");
	ck_assert_int_eq(l.c.control_gid, -1);
	snprintf(text, sizeof(text), "control:\n  group: %s\n", name);
	load_ok(&l, text);
	ck_assert_str_eq(l.c.control_group, name);
	ck_assert_int_eq(l.c.control_gid, (long long)getgid());
	free(name);
	load_fails("control:\n  group: no-such-group-ibsmd\n",
		   "2:10: control.group: no group 'no-such-group-ibsmd'");
	load_fails("control: {group: ''}\n",
		   "1:18: control.group: must not be empty");
	load_fails("control: {group: [a, b]}\n",
		   "1:18: control.group: expected a string, got a sequence");
}
END_TEST

/*
 * qos: mode none (default), vftree or voqsw, max_vls 1..15 (0: the
 * links'), sls 1..16 with voqsw only (0: not given).
 */
START_TEST(test_qos)
{
	struct loaded l;

	load_ok(&l, "lmc: 0\n");
	ck_assert_int_eq(l.c.qos_mode, QOS_NONE);
	ck_assert_int_eq(l.c.qos_max_vls, 0);
	load_ok(&l, "qos: {mode: vftree, max_vls: 4}\n");
	ck_assert_int_eq(l.c.qos_mode, QOS_VFTREE);
	ck_assert_int_eq(l.c.qos_max_vls, 4);
	load_ok(&l, "qos:\n  mode: none\n  max_vls: 15\n");
	ck_assert_int_eq(l.c.qos_mode, QOS_NONE);
	ck_assert_int_eq(l.c.qos_max_vls, 15);
	load_fails("qos: {mode: vftree, max_vls: 16}\n",
		   "1:30: qos.max_vls: 16 is out of range 1..15");
	load_fails("qos: {max_vls: 0}\n",
		   "1:16: qos.max_vls: 0 is out of range 1..15");
	load_fails("qos: {mode: fair}\n",
		   "1:13: qos.mode: 'fair' is not one of none, vftree, voqsw");
	ck_assert_int_eq(l.c.qos_sls, 0);
	load_ok(&l, "qos: {mode: voqsw, max_vls: 8}\n");
	ck_assert_int_eq(l.c.qos_mode, QOS_VOQSW);
	ck_assert_int_eq(l.c.qos_sls, 0);
	load_ok(&l, "qos:\n  sls: 4\n  mode: voqsw\n");
	ck_assert_int_eq(l.c.qos_sls, 4);
	load_ok(&l, "qos: {mode: voqsw, sls: 16}\n");
	ck_assert_int_eq(l.c.qos_sls, 16);
	load_fails("qos: {mode: voqsw, sls: 17}\n",
		   "1:25: qos.sls: 17 is out of range 1..16");
	load_fails("qos: {mode: voqsw, sls: 0}\n",
		   "1:25: qos.sls: 0 is out of range 1..16");
	/* the budget of VOQsw alone: refused at the key, mode before or after */
	load_fails("lmc: 0\nqos:\n  mode: vftree\n  sls: 8\n",
		   "4:3: qos.sls: only with mode voqsw");
	load_fails("qos:\n  sls: 8\n", "2:3: qos.sls: only with mode voqsw");
	load_fails("qos: {sls: 8, mode: none}\n",
		   "1:7: qos.sls: only with mode voqsw");
}
END_TEST

/*
 * congestion (dFtree's lanes): the keys, their ranges and defaults, and
 * what cannot combine with mode dftree, each refused at its place.
 */
START_TEST(test_congestion)
{
	struct loaded l;

	load_ok(&l, "lmc: 0\n");
	ck_assert_int_eq(l.c.cong_mode, CONG_OFF);
	ck_assert_int_eq(l.c.cong_fast_sl, 0);
	ck_assert_int_eq(l.c.cong_slow_sl, 1);
	ck_assert_uint_eq(l.c.cong_threshold, 100000);
	ck_assert(l.c.cong_utilisation == 0.5);
	ck_assert_int_eq(l.c.cong_interval_s, 2);
	ck_assert(!config_qos_tables(&l.c));
	load_ok(&l, "congestion:\n  mode: dftree\n  fast_sl: 2\n  slow_sl: 5\n"
		"  threshold: 250000\n  utilisation: 0.3\n  interval_s: 5\n");
	ck_assert_int_eq(l.c.cong_mode, CONG_DFTREE);
	ck_assert_int_eq(l.c.cong_fast_sl, 2);
	ck_assert_int_eq(l.c.cong_slow_sl, 5);
	ck_assert_uint_eq(l.c.cong_threshold, 250000);
	ck_assert(l.c.cong_utilisation == 0.3);
	ck_assert_int_eq(l.c.cong_interval_s, 5);
	ck_assert(config_qos_tables(&l.c));
	load_ok(&l, "congestion: {mode: dftree, utilisation: 1}\n");
	ck_assert(l.c.cong_utilisation == 1.0);
	load_fails("congestion: {mode: slow}\n",
		   "1:20: congestion.mode: 'slow' is not one of off, dftree");
	load_fails("congestion: {utilisation: 0}\n",
		   "1:27: congestion.utilisation: '0' is not a number in (0, 1] (a fraction of the link's bandwidth)");
	load_fails("congestion: {utilisation: 1.5}\n",
		   "1:27: congestion.utilisation: '1.5' is not a number in (0, 1] (a fraction of the link's bandwidth)");
	load_fails("congestion: {utilisation: half}\n",
		   "1:27: congestion.utilisation: 'half' is not a number in (0, 1] (a fraction of the link's bandwidth)");
	load_fails("congestion: {slow_sl: 15}\n",
		   "1:23: congestion.slow_sl: 15 is out of range 0..14");
	load_fails("congestion: {interval_s: 0}\n",
		   "1:26: congestion.interval_s: 0 is out of range 1..3600");
	/* the two lanes differ */
	load_fails("congestion:\n  mode: dftree\n  fast_sl: 1\n",
		   "1:1: congestion: fast_sl and slow_sl are both 1: the slow lane needs an SL and VL of its own");
	/* the slow lane's VL must fit what ports.max_op_vls lets a port run */
	load_fails("ports: {max_op_vls: 2}\ncongestion: {mode: dftree, slow_sl: 2}\n",
		   "2:20: congestion.mode: dftree with slow_sl 2: ports.max_op_vls 2 lets ports run VL0-1 only");
	load_fails("congestion: {mode: dftree, fast_sl: 4}\nports: {max_op_vls: 3}\n",
		   "1:20: congestion.mode: dftree with fast_sl 4: ports.max_op_vls 3 lets ports run VL0-3 only");
	load_ok(&l, "ports: {max_op_vls: 2}\ncongestion: {mode: dftree}\n");
	/* what also programs the SL-to-VL tables or the PathRecord SL */
	load_fails("qos: {mode: vftree}\ncongestion: {mode: dftree}\n",
		   "2:20: congestion.mode: dftree with qos.mode vftree: both program the SL-to-VL tables and the PathRecord SL (dftree needs qos.mode none)");
	load_fails("congestion:\n  mode: dftree\nqos: {mode: voqsw}\n",
		   "2:9: congestion.mode: dftree with qos.mode voqsw: both program the SL-to-VL tables and the PathRecord SL (dftree needs qos.mode none)");
	load_fails("congestion: {mode: dftree}\npartitions:\n"
		   "  - {name: a, pkey: 0x10, members: [ALL]}\n"
		   "  - {name: b, pkey: 0x11, policy: vlane-isolation, members: [ALL]}\n",
		   "1:20: congestion.mode: dftree with partitions[1] 'b' policy vlane-isolation: both program the SL-to-VL tables and the PathRecord SL");
	load_fails("congestion: {mode: dftree}\npartitions:\n"
		   "  - {name: a, pkey: 0x10, sl: 3, members: [ALL]}\n",
		   "1:20: congestion.mode: dftree with partitions[0] 'a' sl 3: the partition's SL would replace dftree's in its PathRecords");
	/* off: none of that is refused */
	load_ok(&l, "qos: {mode: vftree}\ncongestion: {mode: off}\n");
	load_ok(&l, "congestion: {mode: dftree}\nqos: {mode: none}\nmulticast: {sl: 4}\n");
}
END_TEST

/*
 * An engine that sets its own SLs (dfsssp's VL layers) beside what sets
 * them too: a QoS mode, dftree's lanes, a partition's VL or SL; refused
 * at routing.engine's place, wherever it is in the chain; -R's check is
 * the same function.
 */
START_TEST(test_engine_sls)
{
	struct loaded l;
	char msg[256];
	load_fails("routing: {engine: dfsssp}\nqos: {mode: vftree}\n",
		   "1:19: routing.engine: routing engine dfsssp with qos.mode vftree: both set the SLs and the SL-to-VL tables (dfsssp's own SLs need qos.mode none)");
	load_fails("qos: {mode: voqsw}\nrouting:\n  engine: [updn, dfsssp]\n",
		   "3:11: routing.engine: routing engine dfsssp with qos.mode voqsw: both set the SLs and the SL-to-VL tables (dfsssp's own SLs need qos.mode none)");
	load_fails("routing: {engine: dfsssp}\ncongestion: {mode: dftree}\n",
		   "1:19: routing.engine: routing engine dfsssp with congestion.mode dftree: both set the SLs and the SL-to-VL tables");
	load_fails("routing: {engine: dfsssp}\npartitions:\n"
		   "  - {name: a, pkey: 0x10, policy: vlane-isolation, members: [ALL]}\n",
		   "1:19: routing.engine: routing engine dfsssp with partitions[0] 'a' policy vlane-isolation: the partition's SL would replace the layer dfsssp gives its paths");
	load_fails("routing: {engine: dfsssp}\npartitions:\n"
		   "  - {name: a, pkey: 0x10, sl: 2, members: [ALL]}\n",
		   "1:19: routing.engine: routing engine dfsssp with partitions[0] 'a' sl: the partition's SL would replace the layer dfsssp gives its paths");
	/* alone, or with partitions that set no SL: accepted */
	load_ok(&l, "routing: {engine: [dfsssp, updn]}\n");
	load_ok(&l, "routing: {engine: dfsssp}\npartitions:\n"
		    "  - {name: a, pkey: 0x10, members: [ALL]}\n");
	/* -R's check: the policy had ftree with vftree, -R dfsssp clashes */
	load_ok(&l, "qos: {mode: vftree}\n");
	ck_assert_int_eq(config_engine_sls_conflict(&l.c, msg, sizeof(msg)), 0);
	ck_assert_int_eq(config_set_engines(&l.c, "dfsssp", msg, sizeof(msg)), 0);
	ck_assert_int_eq(config_engine_sls_conflict(&l.c, msg, sizeof(msg)), 1);
	ck_assert_msg(strstr(msg, "qos.mode vftree"), "%s", msg);
}
END_TEST

/*
 * qos.vlarb_low / vlarb_high ("VL:weight,...", OpenSM's qos_vlarb_*) and
 * vlarb_high_limit; an error names the entry's own line and column.
 */
START_TEST(test_qos_vlarb)
{
	struct loaded l;
	char text[512];
	size_t n;

	load_ok(&l, "qos: {mode: vftree}\n");
	ck_assert_int_eq(l.c.qos_vlarb_low.given, 0);
	ck_assert_int_eq(l.c.qos_vlarb_high.given, 0);
	ck_assert_int_eq(l.c.qos_vlarb_high_limit, -1);
	load_ok(&l, "qos:\n  mode: vftree\n  vlarb_low: \"0:64,1:64,2:32,3:32\"\n"
		    "  vlarb_high: '0:255'\n  vlarb_high_limit: 10\n");
	ck_assert_int_eq(l.c.qos_vlarb_low.given, 1);
	ck_assert_int_eq(l.c.qos_vlarb_low.n, 4);
	ck_assert_uint_eq(l.c.qos_vlarb_low.vl[2], 2);
	ck_assert_uint_eq(l.c.qos_vlarb_low.weight[2], 32);
	ck_assert_uint_eq(l.c.qos_vlarb_low.weight[1], 64);
	ck_assert_int_eq(l.c.qos_vlarb_high.n, 1);
	ck_assert_uint_eq(l.c.qos_vlarb_high.vl[0], 0);
	ck_assert_uint_eq(l.c.qos_vlarb_high.weight[0], 255);
	ck_assert_int_eq(l.c.qos_vlarb_high_limit, 10);
	/* plain, blanks around entries, a VL twice (interleaving), "" empty */
	load_ok(&l, "qos:\n  vlarb_low: 1:16, 0:8 ,1:16\n  vlarb_high: \"\"\n");
	ck_assert_int_eq(l.c.qos_vlarb_low.n, 3);
	ck_assert_uint_eq(l.c.qos_vlarb_low.vl[2], 1);
	ck_assert_uint_eq(l.c.qos_vlarb_low.weight[1], 8);
	ck_assert_int_eq(l.c.qos_vlarb_high.given, 1);
	ck_assert_int_eq(l.c.qos_vlarb_high.n, 0);
	/* VLs below max_vls, in either order */
	load_ok(&l, "qos:\n  vlarb_low: \"3:1\"\n  max_vls: 4\n");

	load_fails("qos:\n  vlarb_low: \"0:64,15:10\"\n",
		   "2:20: qos.vlarb_low: entry 2: VL 15 is out of range 0..14 (VL 15 is management)");
	load_fails("qos:\n  vlarb_low: \"0:256\"\n",
		   "2:17: qos.vlarb_low: entry 1: weight 256 is out of range 0..255");
	load_fails("qos:\n  vlarb_low: 2:7,0-64\n",
		   "2:18: qos.vlarb_low: entry 2: expected VL:weight, got '0-64'");
	load_fails("qos:\n  vlarb_high: \"0:1,,1:1\"\n",
		   "2:20: qos.vlarb_high: entry 2: expected VL:weight, got ''");
	load_fails("qos:\n  vlarb_low: \"x:1\"\n",
		   "2:15: qos.vlarb_low: entry 1: VL 'x' is not a number");
	load_fails("qos:\n  vlarb_low: \"1:-1\"\n",
		   "2:17: qos.vlarb_low: entry 1: weight '-1' is not a number");
	load_fails("qos:\n  vlarb_low: [\"0:1\"]\n",
		   "2:14: qos.vlarb_low: expected a string of VL:weight entries, got a sequence");
	load_fails("qos:\n  vlarb_high_limit: 256\n",
		   "2:21: qos.vlarb_high_limit: 256 is out of range 0..255");
	/* a VL at or above qos.max_vls, the max_vls after it: at the entry */
	load_fails("qos:\n  vlarb_high: \"0:10,4:10\"\n  max_vls: 4\n",
		   "2:21: qos.vlarb_high: entry 2: VL 4 is at or above qos.max_vls 4 (VLs 0..3)");
	load_fails("qos:\n  max_vls: 2\n  vlarb_low: 0:1,1:1,2:1\n",
		   "3:22: qos.vlarb_low: entry 3: VL 2 is at or above qos.max_vls 2 (VLs 0..1)");
	load_fails("qos:\n  vlarb_low: \"0:0,1:0\"\n",
		   "2:14: qos.vlarb_low: every weight is 0 and no high-priority entry weighs more: no data VL would ever be sent");
	load_ok(&l, "qos:\n  vlarb_low: \"0:0\"\n  vlarb_high: \"0:1\"\n");
	/* one block: 32 entries at most; the 33rd is named where it is */
	n = (size_t)snprintf(text, sizeof(text), "qos:\n  vlarb_low: \"");
	for (int i = 0; i < 33; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%d:1",
				      i ? "," : "", i % 8);
	snprintf(text + n, sizeof(text) - n, "\"\n");
	load_fails(text, "2:143: qos.vlarb_low: more than 32 entries (one VLArbitrationTable block)");
	text[n - 4] = '\0';	/* 32 entries */
	snprintf(text + strlen(text), sizeof(text) - strlen(text), "\"\n");
	load_ok(&l, text);
	ck_assert_int_eq(l.c.qos_vlarb_low.n, 32);
}
END_TEST

/* virtualization: the LID scheme, vSwitch patterns, 16-bit LIDs only. */
START_TEST(test_virtualization)
{
	struct loaded l;

	load_ok(&l, "lmc: 0\n");
	ck_assert_int_eq(l.c.lid_scheme, 0);
	ck_assert_int_eq(l.c.extended_lids, TRI_AUTO);
	ck_assert_int_eq(l.c.n_vswitches, 0);
	load_ok(&l, "virtualization: {extended_lids: on}\n");
	ck_assert_int_eq(l.c.extended_lids, TRI_ON);
	load_fails("virtualization: {extended_lids: maybe}\n",
		   "1:33: virtualization.extended_lids: 'maybe' is not one of "
		   "auto, on, off");
	load_ok(&l, "virtualization:\n  lid_scheme: prepopulated\n"
		"  extended_lids: off\n  vswitches: [\"V-*\", 0x2c9000000aa]\n");
	ck_assert_int_eq(l.c.lid_scheme, 1);
	ck_assert_int_eq(l.c.extended_lids, TRI_OFF);
	ck_assert_int_eq(l.c.n_vswitches, 2);
	ck_assert_str_eq(l.c.vswitches[0], "V-*");
	ck_assert_str_eq(l.c.vswitches[1], "0x2c9000000aa");
	load_fails("virtualization: {lid_scheme: static}\n",
		   "1:30: virtualization.lid_scheme: 'static' is not one of "
		   "dynamic, prepopulated");
}
END_TEST

/*
 * virtualization.rebalance: every trigger off by default; each read and
 * bounded; local a boolean, false by default.
 */
START_TEST(test_rebalance)
{
	struct loaded l;

	load_ok(&l, "virtualization: {}\n");
	ck_assert_int_eq(l.c.rb_after_migrations, 0);
	ck_assert(l.c.rb_balance_drop == 0);
	ck_assert_int_eq(l.c.rb_interval_s, 0);
	ck_assert_int_eq(l.c.rb_local, 0);
	load_ok(&l, "virtualization:\n  rebalance:\n    after_migrations: 50\n"
		"    balance_drop: 0.1\n    interval_s: 3600\n    local: false\n");
	ck_assert_int_eq(l.c.rb_after_migrations, 50);
	ck_assert(l.c.rb_balance_drop > 0.0999 && l.c.rb_balance_drop < 0.1001);
	ck_assert_int_eq(l.c.rb_interval_s, 3600);
	load_ok(&l, "virtualization: {rebalance: {balance_drop: 0}}\n");
	ck_assert(l.c.rb_balance_drop == 0);
	load_fails("virtualization:\n  rebalance:\n    balance_drop: 1\n",
		   "3:19: virtualization.rebalance.balance_drop: '1' is not a number "
		   "in [0, 1) (a fraction of a fresh vswitch-ftree's balance; 0: "
		   "not watched)");
	load_fails("virtualization: {rebalance: {balance_drop: ten}}\n",
		   "1:44: virtualization.rebalance.balance_drop: 'ten' is not a "
		   "number in [0, 1) (a fraction of a fresh vswitch-ftree's "
		   "balance; 0: not watched)");
	load_fails("virtualization: {rebalance: {after_migrations: -1}}\n",
		   "1:48: virtualization.rebalance.after_migrations: -1 is out of "
		   "range 0..1000000");
	load_fails("virtualization:\n  rebalance:\n    interval_s: 604801\n",
		   "3:17: virtualization.rebalance.interval_s: 604801 is out of "
		   "range 0..604800");
	ck_assert_int_eq(l.c.rb_local, 0);
	load_ok(&l, "virtualization:\n  rebalance:\n    after_migrations: 8\n    local: true\n");
	ck_assert_int_eq(l.c.rb_local, 1);
	load_fails("virtualization:\n  rebalance:\n    local: maybe\n",
		   "3:12: virtualization.rebalance.local: 'maybe' is not one of "
		   "false, true");
	load_fails("virtualization:\n  rebalance:\n    every: 3\n",
		   "3:5: unknown key 'virtualization.rebalance.every'");
}
END_TEST

/* events.signalling: hybrid by default, each mode by name, nothing else. */
START_TEST(test_events_signalling)
{
	static const char *const names[] = {
		"hybrid", "wildcard", "repath-only", "hybrid-affected",
	};
	struct loaded l;
	char text[64];

	load_ok(&l, "events: {}\n");
	ck_assert_int_eq(l.c.events_signalling, REPATH_HYBRID);
	for (int i = 0; i < 4; i++) {
		snprintf(text, sizeof(text), "events:\n  signalling: %s\n", names[i]);
		load_ok(&l, text);
		ck_assert_int_eq(l.c.events_signalling, i);
	}
	ck_assert_int_eq(REPATH_ONLY, 2);
	load_fails("events: {signalling: repath_only}\n",
		   "1:22: events.signalling: 'repath_only' is not one of "
		   "hybrid, wildcard, repath-only, hybrid-affected");
	load_fails("events: {signalling: 3}\n",
		   "1:22: events.signalling: '3' is not one of "
		   "hybrid, wildcard, repath-only, hybrid-affected");
	/* the other keys of the section stay unknown */
	load_fails("events: {signaling: hybrid}\n",
		   "1:10: unknown key 'events.signaling'");
}
END_TEST

/* events.exec: an absolute path to an executable file, and its bounds */
START_TEST(test_events_exec)
{
	struct loaded l;

	load_ok(&l, "events: {}\n");
	ck_assert_str_eq(l.c.events_exec, "");
	ck_assert_int_eq(l.c.events_exec_timeout_s, 10);
	ck_assert_int_eq(l.c.events_exec_max, 4);
	load_ok(&l, "events:\n  exec: /bin/sh\n  exec_timeout_s: 60\n  exec_max: 1\n");
	ck_assert_str_eq(l.c.events_exec, "/bin/sh");
	ck_assert_int_eq(l.c.events_exec_timeout_s, 60);
	ck_assert_int_eq(l.c.events_exec_max, 1);
	load_fails("events:\n  exec: bin/sh\n",
		   "2:9: events.exec: 'bin/sh' is not an absolute path (the "
		   "program is run without a shell)");
	load_fails("events:\n  exec: \"/bin/sh -c true\"\n",
		   "2:9: events.exec: '/bin/sh -c true' is not executable: "
		   "No such file or directory");
	load_fails("events:\n  exec: /\n", "2:9: events.exec: '/' is not a file");
	load_fails("events: {exec: 7}\n",
		   "1:16: events.exec: '7' is not an absolute path (the "
		   "program is run without a shell)");
	load_fails("events: {exec_timeout_s: 0}\n",
		   "1:26: events.exec_timeout_s: 0 is out of range 1..3600");
	load_fails("events: {exec_max: 65}\n",
		   "1:20: events.exec_max: 65 is out of range 1..64");
}
END_TEST

START_TEST(test_unknown_key)
{
	load_fails("sweep:\n  intervl_s: 5\n",
		   "2:3: unknown key 'sweep.intervl_s'");
	load_fails("lmc: 1\nrouting_engine: ftree\n",
		   "2:1: unknown key 'routing_engine'");
	load_fails("port: {ca: mlx5_0, port: 1}\n",
		   "1:20: unknown key 'port.port'");
	load_fails("routing:\n  engine: ftree\n  root: [a]\n",
		   "3:3: unknown key 'routing.root'");
	/* control characters are not echoed */
	load_fails("\"lmc\\e[2J\": 1\n", "1:1: unknown key 'lmc?[2J'");
	/* keys are case-sensitive */
	load_fails("LMC: 1\n", "1:1: unknown key 'LMC'");
}
END_TEST

START_TEST(test_wrong_type)
{
	load_fails("sweep:\n  interval_s: [1, 2]\n",
		   "2:15: sweep.interval_s: expected an integer, "
		   "got a sequence");
	load_fails("sweep: 5\n",
		   "1:8: sweep: expected a mapping, got a scalar");
	load_fails("lmc: true\n",
		   "1:6: lmc: expected an integer, got 'true'");
	load_fails("lmc: 1.5\n",
		   "1:6: lmc: expected an integer, got '1.5'");
	load_fails("lmc: 3abc\n",
		   "1:6: lmc: expected an integer, got '3abc'");
	load_fails("lmc: 0x\n",
		   "1:6: lmc: expected an integer, got '0x'");
	load_fails("lmc: +1\n",
		   "1:6: lmc: expected an integer, got '+1'");
	load_fails("lmc: \"3\"\n",
		   "1:6: lmc: expected an integer, got the string '3'");
	load_fails("lmc:\n",
		   "1:5: lmc: expected an integer, got nothing");
	load_fails("mad: {window: {a: 1}}\n",
		   "1:15: mad.window: expected an integer, got a mapping");
	load_fails("state_dir: [/a]\n",
		   "1:12: state_dir: expected a string, got a sequence");
}
END_TEST

START_TEST(test_wrong_type_strings)
{
	load_fails("state_dir: ~\n",
		   "1:12: state_dir: expected a string, got nothing");
	load_fails("port: {ca: [mlx5_0]}\n",
		   "1:12: port.ca: expected a string, got a sequence");
	load_fails("port: {ca: !!int 5}\n",
		   "1:12: port.ca: expected a string, got a value tagged "
		   "tag:yaml.org,2002:int");
	load_fails("port: {ca: \"\"}\n",
		   "1:12: port.ca: must not be empty");
	load_fails("mad: {one_cpu: 1}\n",
		   "1:16: mad.one_cpu: '1' is not one of auto, on, off");
	load_fails("log_level: loud\n",
		   "1:12: log_level: 'loud' is not one of error, warn, "
		   "notice, info, debug");
	load_fails("log_level: 3\n",
		   "1:12: log_level: '3' is not one of error, warn, "
		   "notice, info, debug");
	load_fails("[lmc, 1]\n",
		   "1:1: the policy must be a mapping of keys, not a "
		   "sequence");
	load_fails("lmc\n",
		   "1:1: the policy must be a mapping of keys, not a scalar");
	load_fails("? [a, b]\n: 1\n",
		   "1:3: keys must be names, not a sequence");
	load_fails("sweep:\n  ~: 1\n",
		   "2:3: sweep: keys must be names, not nothing");
}
END_TEST

START_TEST(test_out_of_range)
{
	load_fails("sweep:\n  interval_s: 99999\n",
		   "2:15: sweep.interval_s: 99999 is out of range 0..3600");
	load_fails("lmc: -1\n", "1:6: lmc: -1 is out of range 0..7");
	load_fails("events: {max_report_failures: 0}\n",
		   "1:31: events.max_report_failures: 0 is out of range 1..100");
	load_fails("lmc: 8\n", "1:6: lmc: 8 is out of range 0..7");
	load_fails("lmc: -0x8000000000000000\n",
		   "1:6: lmc: -0x8000000000000000 is out of range 0..7");
	load_fails("lmc: 99999999999999999999\n",
		   "1:6: lmc: 99999999999999999999 is out of range 0..7");
	load_fails("mad: {timeout_ms: 0}\n",
		   "1:19: mad.timeout_ms: 0 is out of range 1..60000");
	load_fails("mad: {window: 0x1001}\n",
		   "1:15: mad.window: 0x1001 is out of range 1..4096");
	load_fails("sm: {priority: 16}\n",
		   "1:16: sm.priority: 16 is out of range 0..15");
	load_fails("sm: {poll_ms: 99}\n",
		   "1:15: sm.poll_ms: 99 is out of range 100..600000");
	load_fails("port: {num: 255}\n",
		   "1:13: port.num: 255 is out of range 1..254");
	load_fails("port: {num: 0}\n",
		   "1:13: port.num: 0 is out of range 1..254");
	load_fails("port: {guid: 0}\n",
		   "1:14: port.guid: 0 is out of range "
		   "0x1..0xffffffffffffffff");
	load_fails("subnet_prefix: 0x1fe80000000000000\n",
		   "1:16: subnet_prefix: 0x1fe80000000000000 is out of range "
		   "0x0..0xffffffffffffffff");
	load_fails("subnet_prefix: -1\n",
		   "1:16: subnet_prefix: -1 is out of range "
		   "0x0..0xffffffffffffffff");
	load_fails("ports:\n  max_op_vls: 6\n",
		   "2:15: ports.max_op_vls: 6 is out of range 1..5");
	load_fails("ports:\n  vl_stall_count: 8\n",
		   "2:19: ports.vl_stall_count: 8 is out of range 0..7");
	load_fails("sa: {sa_key: 0x10000000000000000}\n",
		   "1:14: sa.sa_key: 0x10000000000000000 is out of range "
		   "0x0..0xffffffffffffffff");
	load_fails("sm: {sm_key: 0x10000000000000000}\n",
		   "1:14: sm.sm_key: 0x10000000000000000 is out of range "
		   "0x0..0xffffffffffffffff");
}
END_TEST

/* security.m_key: the level, the lease, the secret's path */
START_TEST(test_mkey)
{
	struct loaded l;
	load_ok(&l, "security:\n  m_key:\n    protect_level: 3\n    lease_s: 0\n"
		"    secret_file: /etc/ibsmd/mkey.secret\n");
	ck_assert_int_eq(l.c.mkey_protect, 3);
	ck_assert_int_eq(l.c.mkey_lease_s, 0);
	ck_assert_str_eq(l.c.mkey_secret_file, "/etc/ibsmd/mkey.secret");
	load_ok(&l, "security: {m_key: {protect_level: 2}}\n");
	ck_assert_int_eq(l.c.mkey_protect, 2);
	ck_assert_int_eq(l.c.mkey_lease_s, 60);
	load_fails("security: {m_key: {protect_level: 4}}\n",
		   "1:35: security.m_key.protect_level: 4 is out of range 0..3");
	load_fails("security:\n  m_key:\n    lease_s: 65536\n",
		   "3:14: security.m_key.lease_s: 65536 is out of range 0..65535");
	load_fails("security:\n  m_key:\n    secret_file: mkey.secret\n",
		   "3:5: security.m_key.secret_file: 'mkey.secret' is not an absolute path");
	load_fails("security: {m_key: {level: 2}}\n",
		   "1:20: unknown key 'security.m_key.level'");
}
END_TEST

START_TEST(test_duplicate_key)
{
	load_fails("lmc: 1\nsweep: {interval_s: 1}\nlmc: 2\n",
		   "3:1: duplicate key 'lmc' (first at line 1, column 1)");
	load_fails("mad:\n  retries: 1\n  window: 8\n  retries: 2\n",
		   "4:3: duplicate key 'mad.retries' (first at line 2, "
		   "column 3)");
	load_fails("routing: {engine: ftree}\nrouting: {roots: [a]}\n",
		   "2:1: duplicate key 'routing' (first at line 1, "
		   "column 1)");
}
END_TEST

START_TEST(test_syntax_error)
{
	static const char bad_utf8[] = "lmc: 1\nstate_dir: \"/x\xff\"\n";

	load_fails("lmc: 1\n  sweep: 2\n",
		   "2:8: syntax error: mapping values are not allowed in "
		   "this context");
	load_fails("routing: {engine: [ftree\nlmc: 1\n",
		   "2:4: syntax error: did not find expected ',' or ']' "
		   "while parsing a flow sequence");
	load_fails("state_dir: \"/var/lib\n",
		   "2:1: syntax error: found unexpected end of stream "
		   "while scanning a quoted scalar");
	load_fails("lmc: 1\n\tsweep: {}\n",
		   "2:1: syntax error: found a tab character that violates "
		   "indentation while scanning a plain scalar");
	{
		struct loaded l;
		char want[600];

		load_bytes(&l, bad_utf8, sizeof(bad_utf8) - 1);
		ck_assert_int_eq(l.rc, -1);
		snprintf(want, sizeof(want), "%s:2:15: invalid leading "
			 "UTF-8 octet", l.path);
		ck_assert_str_eq(l.err, want);
	}
}
END_TEST

START_TEST(test_structure_errors)
{
	load_fails("lmc: 1\n---\nlmc: 2\n",
		   "2:1: only one YAML document is allowed");
	load_fails("sweep: &s {interval_s: 5}\nmad: *s\n",
		   "2:6: aliases (*s) are not supported");
	load_fails("port: {ca: mlx5_0, guid: 0x2}\n",
		   "1:1: port: give either ca/num or guid, not both");
	load_fails("port:\n  guid: 0x2\n  num: 1\n",
		   "1:1: port: give either ca/num or guid, not both");
}
END_TEST

/* A port mapping replaces the whole local port selection. */
START_TEST(test_port_replaces)
{
	static const char text[] = "port: {guid: 0x99}\n";
	struct config c;
	char path[64], err[256];

	config_defaults(&c);
	snprintf(c.port_ca, sizeof(c.port_ca), "mlx4_0");
	c.port_num = 2;
	write_temp(path, text, sizeof(text) - 1);
	ck_assert_int_eq(config_load(&c, path, err, sizeof(err)), 0);
	unlink(path);
	ck_assert_uint_eq(c.port_guid, 0x99);
	ck_assert_str_eq(c.port_ca, "");
	ck_assert_int_eq(c.port_num, 0);
}
END_TEST

START_TEST(test_missing_file)
{
	struct config c;
	char err[256];

	config_defaults(&c);
	ck_assert_int_eq(config_load(&c, "/nonexistent/ibsmd.yaml", err,
				     sizeof(err)), -1);
	ck_assert_str_eq(err, "/nonexistent/ibsmd.yaml: No such file or "
			 "directory");
}
END_TEST

/*
 * Bounds: a reload parses in the event loop.  100,000 values are over
 * CFG_MAX_EVENTS; 100,000 nested brackets are
 * refused at level 65 (the top mapping is level 1) in milliseconds (libyaml alone took 15 s); 64 levels
 * still parse; a file over CFG_MAX_BYTES is not read; neither a FIFO nor a
 * link to /dev/zero is opened for reading (either would block the loop).
 */
static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

START_TEST(test_bounds)
{
	struct loaded l;
	size_t n = 100000;
	char *deep = malloc(2 * n + 8);
	ck_assert_ptr_nonnull(deep);
	memcpy(deep, "a: ", 3);
	memset(deep + 3, '[', n);
	memset(deep + 3 + n, ']', n);
	uint64_t t0 = now_ms();
	load_bytes(&l, deep, 2 * n + 3);
	uint64_t ms = now_ms() - t0;
	ck_assert_int_eq(l.rc, -1);
	ck_assert_msg(strstr(l.err, ":1:67: nested deeper than 64 levels"), "%s", l.err);
	ck_assert_msg(ms < 500, "%llu ms", (unsigned long long)ms);

	/* 64 levels (the mapping and 63 sequences) are within the bound */
	size_t k = 0;
	k += (size_t)sprintf(deep + k, "a: ");
	for (int i = 0; i < 63; i++)
		deep[k++] = '[';
	deep[k++] = '1';
	for (int i = 0; i < 63; i++)
		deep[k++] = ']';
	load_bytes(&l, deep, k);
	ck_assert_int_eq(l.rc, -1);
	ck_assert_msg(strstr(l.err, "unknown key 'a'"), "%s", l.err);
	free(deep);

	/* 100,000 values in 200 KB: over the event bound, refused fast */
	char *many = malloc(2 * 100000 + 8);
	ck_assert_ptr_nonnull(many);
	k = (size_t)sprintf(many, "a: [");
	for (int i = 0; i < 100000; i++) {
		many[k++] = '1';
		many[k++] = ',';
	}
	many[k - 1] = ']';
	t0 = now_ms();
	load_bytes(&l, many, k);
	ms = now_ms() - t0;
	ck_assert_int_eq(l.rc, -1);
	ck_assert_msg(strstr(l.err, "more than 100000 YAML events"), "%s", l.err);
	ck_assert_msg(ms < 500, "%llu ms", (unsigned long long)ms);
	free(many);

	char *big = malloc(CFG_MAX_BYTES + 1);
	ck_assert_ptr_nonnull(big);
	memset(big, '#', CFG_MAX_BYTES + 1);
	load_bytes(&l, big, CFG_MAX_BYTES);	/* one big comment: fine */
	ck_assert_msg(l.rc == 0, "%s", l.err);
	load_bytes(&l, big, CFG_MAX_BYTES + 1);
	ck_assert_int_eq(l.rc, -1);
	ck_assert_msg(strstr(l.err, "more than the 1048576 allowed"), "%s", l.err);
	free(big);

	struct config c;
	char dir[] = "/tmp/test_config_XXXXXX", fifo[64], zero[64], err[256];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo.yaml", dir);
	snprintf(zero, sizeof(zero), "%s/zero.yaml", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(symlink("/dev/zero", zero), 0);
	config_defaults(&c);
	ck_assert_int_eq(config_load(&c, fifo, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "not a regular file (a FIFO)"), "%s", err);
	ck_assert_int_eq(config_load(&c, zero, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "not a regular file (a device)"), "%s", err);
	unlink(fifo);
	unlink(zero);
	rmdir(dir);
}
END_TEST

START_TEST(test_set_engines)
{
	struct config c;
	char err[256];

	config_defaults(&c);
	ck_assert_int_eq(config_set_engines(&c, "ftree,minhop", err,
					    sizeof(err)), 0);
	ck_assert_int_eq(c.n_engines, 2);
	ck_assert_str_eq(c.engines[0], "ftree");
	ck_assert_str_eq(c.engines[1], "minhop");

	ck_assert_int_eq(config_set_engines(&c, " updn , dmodk", err,
					    sizeof(err)), 0);
	ck_assert_int_eq(c.n_engines, 2);
	ck_assert_str_eq(c.engines[0], "updn");
	ck_assert_str_eq(c.engines[1], "dmodk");

	ck_assert_int_eq(config_set_engines(&c, "ftree", err, sizeof(err)),
			 0);
	ck_assert_int_eq(c.n_engines, 1);
	ck_assert_str_eq(c.engines[0], "ftree");
	ck_assert_str_eq(c.engines[1], "");

	/* errors leave the list alone */
	ck_assert_int_eq(config_set_engines(&c, "minhop,fattree", err,
					    sizeof(err)), -1);
	ck_assert_str_eq(err, "unknown routing engine 'fattree' "
			 "(known: minhop updn ftree dmodk vswitch-ftree pftree dfsssp dor nue)");
	ck_assert_int_eq(c.n_engines, 1);
	ck_assert_str_eq(c.engines[0], "ftree");

	ck_assert_int_eq(config_set_engines(&c, "", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "empty routing engine name in ''");
	ck_assert_int_eq(config_set_engines(&c, "ftree,,minhop", err,
					    sizeof(err)), -1);
	ck_assert_str_eq(err, "empty routing engine name in 'ftree,,minhop'");
	ck_assert_int_eq(config_set_engines(&c, "minhop,", err,
					    sizeof(err)), -1);
	ck_assert_int_eq(config_set_engines(&c, "updn,updn", err,
					    sizeof(err)), -1);
	ck_assert_str_eq(err, "routing engine 'updn' is listed twice");
	ck_assert_int_eq(c.n_engines, 1);
	ck_assert_str_eq(c.engines[0], "ftree");
}
END_TEST

/* OpenSM's files given as a policy: the parser's message, then a hint naming the importer. */
START_TEST(test_opensm_files_named)
{
	static const struct {
		const char *text, *kind;
	} cases[] = {
		/* the head of `opensm -c`'s output */
		{ "#\n# DEVICE ATTRIBUTES OPTIONS\n#\n# The port GUID on which the OpenSM is running\n"
		  "guid 0x0000000000000000\n\n# M_Key value sent to all ports\nm_key 0x0000000000000000\n"
		  "sm_priority 0\n", "opensm.conf" },
		{ "# partitions\nDefault=0x7fff, ipoib : ALL=full;\n", "partitions.conf" },
		{ "qos-levels\n    qos-level\n        name: DEFAULT\n        sl: 0\n    end-qos-level\n"
		  "end-qos-levels\n", "qos-policy.conf" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct loaded l;
		char want[256];
		load(&l, cases[i].text);
		ck_assert_int_eq(l.rc, -1);
		snprintf(want, sizeof(want), " (this looks like OpenSM's %s, not an ibsmd policy: "
			 "ibsmd.yaml(5) is YAML; convert it with ibsmd --import-opensm %s --import-to DIR)",
			 cases[i].kind, l.path);
		ck_assert_msg(strlen(l.err) > strlen(want) &&
			      !strcmp(l.err + strlen(l.err) - strlen(want), want), "%s", l.err);
	}
	/* a broken ibsmd policy gets no such hint */
	load_fails("routing:\n  engines: [minhop\n",
		   "3:1: syntax error: did not find expected ',' or ']' while parsing a flow sequence");
}
END_TEST

/* routing.jobs: off by default; least-max-load over dmodk alone. */
START_TEST(test_routing_jobs)
{
	struct loaded l;
	load_ok(&l, "lmc: 0\n");
	ck_assert_int_eq(l.c.routing_jobs, JOBS_OFF);
	load_ok(&l, "routing:\n  engine: dmodk\n  jobs: least-max-load\n");
	ck_assert_int_eq(l.c.routing_jobs, JOBS_LEAST_MAX_LOAD);
	load_ok(&l, "routing: {jobs: off, engine: ftree}\n");
	ck_assert_int_eq(l.c.routing_jobs, JOBS_OFF);
	load_fails("routing:\n  jobs: least-max-load\n",
		   "2:9: routing.jobs: least-max-load needs routing.engine dmodk alone "
		   "(its base routes; other bases are refused until shown to work)");
	load_fails("routing:\n  engine: [dmodk, minhop]\n  jobs: least-max-load\n",
		   "3:9: routing.jobs: least-max-load needs routing.engine dmodk alone "
		   "(its base routes; other bases are refused until shown to work)");
	load_fails("routing:\n  engine: ftree\n  jobs: least-max-load\n",
		   "3:9: routing.jobs: least-max-load needs routing.engine dmodk alone "
		   "(its base routes; other bases are refused until shown to work)");
	load_fails("routing:\n  engine: dmodk\n  jobs: greedy\n",
		   "3:9: routing.jobs: 'greedy' is not one of off, least-max-load");
}
END_TEST

/*
 * routing.dor: the grid's sizes (1 to 3, each 1..255) and the datelines,
 * with any engine list; anything else refused at its place.
 */
START_TEST(test_routing_dor)
{
	struct loaded l;
	load_ok(&l, "lmc: 0\n");
	ck_assert_int_eq(l.c.dor_ndims, 0);
	ck_assert_int_eq(l.c.dor_dateline, 1);
	load_ok(&l, "routing:\n  engine: dor\n  dor: {dimensions: [4, 4, 2], dateline: false}\n");
	ck_assert_int_eq(l.c.dor_ndims, 3);
	ck_assert_int_eq(l.c.dor_size[0], 4);
	ck_assert_int_eq(l.c.dor_size[1], 4);
	ck_assert_int_eq(l.c.dor_size[2], 2);
	ck_assert_int_eq(l.c.dor_dateline, 0);
	load_ok(&l, "routing:\n  dor:\n    dimensions:\n      - 255\n");
	ck_assert_int_eq(l.c.dor_ndims, 1);
	ck_assert_int_eq(l.c.dor_size[0], 255);
	ck_assert_int_eq(l.c.dor_dateline, 1);
	/* beside another engine: kept for -R dor or a later engine: dor */
	load_ok(&l, "routing: {engine: ftree, dor: {dateline: true}}\n");
	ck_assert_int_eq(l.c.dor_ndims, 0);
	/* a reload that changes them routes from scratch */
	struct loaded m;
	load_ok(&l, "routing: {dor: {dimensions: [4, 4]}}\n");
	load_ok(&m, "routing: {dor: {dimensions: [4, 4], dateline: true}}\n");
	ck_assert_int_eq(config_routing_differs(&l.c, &m.c), 0);
	load_ok(&m, "routing: {dor: {dimensions: [4, 4], dateline: false}}\n");
	ck_assert_int_eq(config_routing_differs(&l.c, &m.c), 1);
	load_ok(&m, "routing: {dor: {dimensions: [4, 5]}}\n");
	ck_assert_int_eq(config_routing_differs(&l.c, &m.c), 1);
	load_ok(&m, "routing: {dor: {dimensions: [4, 4, 1]}}\n");
	ck_assert_int_eq(config_routing_differs(&l.c, &m.c), 1);
	load_ok(&m, "lmc: 0\n");
	ck_assert_int_eq(config_routing_differs(&l.c, &m.c), 1);
	load_fails("routing:\n  dor: {dimensions: []}\n",
		   "2:21: routing.dor.dimensions: expected a sequence of 1 to 3 sizes, got an empty one");
	load_fails("routing:\n  dor: {dimensions: [4, 4, 4, 4]}\n",
		   "2:31: routing.dor.dimensions: more than 3 dimensions");
	load_fails("routing:\n  dor: {dimensions: [0]}\n",
		   "2:22: routing.dor.dimensions[0]: 0 is out of range 1..255");
	load_fails("routing:\n  dor: {dimensions: [4, 256]}\n",
		   "2:25: routing.dor.dimensions[1]: 256 is out of range 1..255");
	load_fails("routing:\n  dor: {dimensions: [4, x]}\n",
		   "2:25: routing.dor.dimensions[1]: expected an integer, got 'x'");
	load_fails("routing:\n  dor: {dimensions: [[4]]}\n",
		   "2:22: routing.dor.dimensions[0]: expected an integer, got a sequence");
	load_fails("routing:\n  dor: {dimensions: 4}\n",
		   "2:21: routing.dor.dimensions: expected a sequence of 1 to 3 sizes, got a scalar");
	load_fails("routing:\n  dor: {dateline: yes}\n",
		   "2:19: routing.dor.dateline: 'yes' is not one of false, true");
	load_fails("routing:\n  dor: {dims: [4]}\n",
		   "2:9: unknown key 'routing.dor.dims'");
	load_fails("routing:\n  dor: [4, 4]\n",
		   "2:8: routing.dor: expected a mapping, got a sequence");
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("config");

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_opensm_files_named);
	tcase_add_test(tc, test_control_group);
	tcase_add_test(tc, test_events_signalling);
	tcase_add_test(tc, test_events_exec);
	tcase_add_test(tc, test_empty_policies);
	tcase_add_test(tc, test_full_policy);
	tcase_add_test(tc, test_other_values);
	tcase_add_test(tc, test_example_policy);
	tcase_add_test(tc, test_engine_scalar_and_sequence);
	tcase_add_test(tc, test_list_limits);
	tcase_add_test(tc, test_not_implemented);
	tcase_add_test(tc, test_multicast);
	tcase_add_test(tc, test_partitions);
	tcase_add_test(tc, test_partition_errors);
	tcase_add_test(tc, test_partition_limits);
	tcase_add_test(tc, test_opensm_partitions);
	tcase_add_test(tc, test_mgroups);
	tcase_add_test(tc, test_node_name_map);
	tcase_add_test(tc, test_qos);
	tcase_add_test(tc, test_congestion);
	tcase_add_test(tc, test_engine_sls);
	tcase_add_test(tc, test_qos_vlarb);
	tcase_add_test(tc, test_virtualization);
	tcase_add_test(tc, test_rebalance);
	tcase_add_test(tc, test_unknown_key);
	tcase_add_test(tc, test_wrong_type);
	tcase_add_test(tc, test_wrong_type_strings);
	tcase_add_test(tc, test_out_of_range);
	tcase_add_test(tc, test_mkey);
	tcase_add_test(tc, test_duplicate_key);
	tcase_add_test(tc, test_syntax_error);
	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_structure_errors);
	tcase_add_test(tc, test_port_replaces);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_set_engines);
	tcase_add_test(tc, test_sa_limits);
	tcase_add_test(tc, test_routing_jobs);
	tcase_add_test(tc, test_routing_dor);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(config_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
