/*
 * ibsmd keys the fabric (security.m_key; sm/model/mkeys.h) on the
 * emulator, which enforces the IBA's M_Key rules (mad/mkey.h, 14.2.4):
 *
 *   level2_keyed: after bring-up every port the SM keys (each switch's
 *     port 0, each CA port) holds its derived key, ProtectBits 2 and the
 *     lease, read on the device side; no SMP of the SM was a violation;
 *     the status and the metrics count them keyed; a raw host's SubnSet of
 *     a switch LFT block with a wrong key is refused (no answer, the LFT
 *     reads back unchanged, M_KeyViolations grows) and the SM reports
 *     the violation it reads at its next heavy sweep.
 *   trap256_reported: the device's trap 256 for the host's wrong-key LFT
 *     Set reaches ibsmd, which confirms it with a TrapRepress carrying the
 *     port's key (the device takes it: its M_Key check passed, no second
 *     violation), counts it by the port (ibsmctl status "m_key"
 *     "violations", ibsmd_mkey_violations_total), names it in one log
 *     line (the switch, the Set of LinearForwardingTable block 0, the
 *     wrong key) and runs the event hook once with mkey_violation and its
 *     variables, all within WAIT_MS of the Set (no sweep needed; the
 *     default light sweep interval is 10 s).
 *   repress_keyed: a port that sends its trap with M_Key 0 (H1, keyed at
 *     level 2) gets a TrapRepress with its own key, which passes its M_Key
 *     check: one repress taken, no violation, no trap 256 in return.
 *   level3_host_get_fails: at level 3 the host's Get with a wrong key gets
 *     no answer, one with the port's key does; ibsmd's heavy sweep still
 *     succeeds (every port answers) and sends no Set.
 *   policy_change_rewrites: a new lease and level (a reload) are written
 *     to every keyed port at the next heavy sweep: the device cache
 *     compares the M_Key fields.
 *   restart_same_secret: a second ibsmd with the same state directory
 *     (secret, neighbour map) at level 3 discovers the keyed fabric --
 *     devices that drop every Get without their key -- with the Sets and
 *     MADs of the same restart without M_Key (no M_Key rewritten), and
 *     no violation.
 *   restart_without_map: the same with the neighbour map removed and a
 *     lease of 2 s: the SM cannot name the port beyond its own, asks with
 *     key 0, the leaf drops the Gets: cut short by M_Key, it does not make
 *     itself master of its one node; ibsmctl status --json says why
 *     (m_key.unmanageable: keyed, waiting, since, the expected end a lease
 *     later); a lease later the leaf answers again (its TrapRepresses do
 *     not echo the trap's key, which would stop its lease) and the sweep
 *     goes a hop further, still no master.
 *   restart_dead_named: the same restart with the map and one host dead:
 *     a device the map names is asked with its own key, its silence is a
 *     dead device's: master at once, that host left out, nothing reported.
 *   standby_takes_over: a standby ibsmd on H3 (its own state directory,
 *     secret_file naming the master's secret, the master's neighbour map
 *     copied) follows the master that keyed the fabric at level 2; the
 *     master stops; the standby becomes master and completes a heavy
 *     sweep within FAILOVER_MS -- no lease wait (LEASE_S) -- with no new
 *     violation and every port still holding its derived key.
 *   standby_other_secret: the same standby with a secret of its own: its
 *     own port refuses it, yet it is STANDBY behind the master whose
 *     SMInfo Get reached it, not a second master, and says why
 *     (own_port, not waiting); the master stops: it does not become
 *     master, waits for the leases with the times, retries at its sweep
 *     interval, not faster, and a lease later goes on hop by hop.
 *   standby_without_map: the shared secret, no map: STANDBY behind the
 *     master its port's MasterSMLID names (not a second master of its own
 *     node, as it used to be), the map read from the master's SA; the
 *     master stops: it takes over within FAILOVER_MS, no violation at all.
 *   standby_partial_map: a copied map that lacks one host's link: the
 *     standby finds the master by its sweep, sends no NodeInfo it cannot
 *     key, reads the whole map from the master's SA, takes over with every
 *     port and no violation.
 *   standby_learns_map: a standby that comes up before the fabric is
 *     keyed writes the links its own sweep saw to its own map; the master
 *     then keys the fabric and stops: the standby takes over at once.
 *   new_secret_level2: the fabric keyed at level 2 with a lease of
 *     SHORT_LEASE_S; ibsmd restarts on the same state directory (the
 *     neighbour map) with a new secret.  While the ports drop its SMPs the
 *     status says so (m_key.ports_foreign, foreign_ends_in_s within the
 *     lease), and it does not loop on them: at most one heavy sweep a
 *     sweep interval (SWEEP_S) and a bounded number of MADs.  As their
 *     leases end it reads their keys, takes each over with one PortInfo
 *     Set carrying it, all within one lease (ONE_LEASE_S: the ports
 *     beyond those that refuse are probed at once): every port ends
 *     holding its key under the new secret, level 2 and the lease,
 *     m_key.taken_over counts all 18, the
 *     metric ibsmd_mkey_taken_over_total as well, the log names each port
 *     once, and a heavy sweep after adds no violation.
 *   new_secret_level1: the same at level 1: Gets are answered (PortInfo
 *     shows M_Key 0 and ProtectBits 1: the key hidden), the take-over Set
 *     is dropped and starts the lease; the ports are reported with the
 *     lease they show and taken over once it ends.
 *   foreign_leaf_level2: on a fabric keyed at level 2, leaf L1 and its
 *     three hosts are found holding another SM's key (replaced by devices
 *     from another subnet), level 2, a lease of SHORT_LEASE_S.  The next
 *     heavy sweep lists the leaf (the map names it across the spines'
 *     up ports) and, past it, the hosts (one Get each, which starts their
 *     lease too: the hosts' timers run although no sweep reached them),
 *     configures the rest, and does not loop (one heavy sweep); the status
 *     shows the four and the estimate (the SM's own lease, LEASE_S: theirs
 *     is hidden).  With light sweeps on (SWEEP_S), each asks for a heavy
 *     sweep while they are listed, and once their real lease ends one
 *     takes the four over: every port holds the SM's key, taken_over 4.
 *   lower_to_level0: the policy lowered from 2 to 0 on a keyed fabric:
 *     the next heavy sweep still carries each port's key and writes M_Key
 *     0, ProtectBits 0 and lease 0 to every port, no lease wait, no
 *     violation.
 *   new_cable_keyed: the tree with a spare cable L0[5] - L1[5], unplugged
 *     while the SM keys the fabric at level 2 (the neighbour map lacks
 *     it); plugged in, the NodeInfo across it goes with key 0 and is
 *     dropped, the SM tries the key of the other device with an up port
 *     of unknown far end, and within NEW_LINK_SWEEPS heavy sweeps the
 *     link is in the model and in STATE_DIR/neighbors.
 */
#include "emu_testlib.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mad.h>

#include "mad/mkey.h"
#include "mad/smp.h"
#include "sm/ctl/control.h"
#include "sm/ctl/evhook.h"
#include "sm/base/nodemap.h"
#include "sm/model/mkeys.h"
#include "sm/model/neighbors.h"

#define WRONG 0x0badc0de0badc0deull
#define L0 0x100
#define L1 0x101
#define WAIT_MS 200
#define MAD_TIMEOUT_MS 20
#define LEASE_S 60

struct run {
	EMU_RUN;
	struct mad_transport host;
	int answers;
	uint8_t answer[MAD_SIZE];
};

static void host_recv(void *arg, const uint8_t *mad, size_t len,
		      const struct mad_addr *from, int status)
{
	struct run *r = arg;
	(void)from;
	if (status || len < MAD_SIZE || mad[3] != (IB_MAD_METHOD_GET | IB_MAD_RESPONSE))
		return;
	memcpy(r->answer, mad, MAD_SIZE);
	r->answers++;
}

static int answered(const void *arg)
{
	const struct run *r = arg;
	return r->answers > 0;
}

/* The raw host on H1 sends a LID-routed SMP with key; 1 if answered. */
static int host_smp(struct run *r, uint32_t lid, int method, uint16_t attr,
		    uint32_t mod, uint64_t key, uint8_t *data)
{
	uint8_t m[MAD_SIZE];
	smp_init_lid(m, method, attr, mod);
	for (int i = 0; i < 8; i++)
		m[24 + i] = (uint8_t)(key >> (56 - 8 * i));
	if (data)
		memcpy(m + SMP_DATA_OFFS, data, SMP_DATA_SIZE);
	struct mad_addr to = { .lid = lid };
	r->answers = 0;
	ck_assert_int_eq(mad_transport_send(&r->host, m, MAD_SIZE, &to), 0);
	if (!emu_run_while(r->base, answered, r, WAIT_MS))
		return 0;
	if (data)
		memcpy(data, r->answer + SMP_DATA_OFFS, SMP_DATA_SIZE);
	return 1;
}

static void host_attach(struct run *r)
{
	char err[256] = "";
	ck_assert_msg(emu_attach(r->e, r->base, emu_host_guid(1), &r->host, host_recv,
				 r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(emu_set_issm(r->e, emu_host_guid(1), 0), 0);
}

static void sm_up_lease(struct run *r, int level, int priority, int lease_s)
{
	r->sm = emu_sm_new(r->state, MAD_TIMEOUT_MS);
	r->sm->cfg.sm_priority = priority;
	r->sm->cfg.mkey_protect = level;
	r->sm->cfg.mkey_lease_s = lease_s;
	emu_sm_start(r->sm, r->base, r->e);
	emu_run_sweeps(&r->run, 1);
}

static void sm_up_prio(struct run *r, int level, int priority)
{
	sm_up_lease(r, level, priority, LEASE_S);
}

static void sm_up(struct run *r, int level)
{
	sm_up_prio(r, level, 0);
}

static void open_run(struct run *r, const char *name)
{
	memset(r, 0, sizeof(*r));
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = name, .seed = 7, .debug_env = "MKEY_DEBUG", .debug_level = LOG_INFO });
}

/* The SM's control socket, STATE_DIR/ctl.sock, into path. */
static void ctl_up(struct run *r, char *path, size_t len)
{
	char err[256] = "";
	snprintf(path, len, "%s/ctl.sock", r->state);
	r->sm->ctl = control_open(r->base, path, sm_control, r->sm, err, sizeof(err));
	ck_assert_msg(r->sm->ctl != NULL, "%s", err);
}

/* Closes it, then frees the run. */
static void ctl_down_free(struct run *r)
{
	control_close(r->sm->ctl);
	r->sm->ctl = NULL;
	emu_run_free(&r->run);
}

/* M_KeyViolations summed over the ports the SM keys (as the devices count them). */
static unsigned mkey_violations(struct run *r)
{
	unsigned v = 0;
	const struct fabric *t = &r->topo;
	for (uint32_t ni = 0; ni < t->n_nodes; ni++) {
		const struct fab_node *nd = &t->nodes[ni];
		for (int p = nd->type == FAB_SWITCH ? 0 : 1;
		     p <= (nd->type == FAB_SWITCH ? 0 : nd->nports); p++) {
			struct emu_mkey k;
			ck_assert_int_eq(emu_port_mkey(r->e, nd->guid, p, &k), 0);
			v += k.violations;
		}
	}
	return v;
}

/* Every port the SM keys holds its key, level and lease: how many. */
static unsigned check_keyed_lease(struct run *r, int level, unsigned lease_s)
{
	char path[128], err[256] = "";
	uint8_t secret[MKEYS_SECRET_LEN];
	snprintf(path, sizeof(path), "%s/%s", r->state, MKEYS_SECRET_FILE);
	ck_assert_msg(mkeys_secret_load(path, 0, secret, err, sizeof(err)) == MKEYS_READ,
		      "%s", err);
	unsigned n = 0;
	const struct fabric *t = &r->topo;
	for (uint32_t ni = 0; ni < t->n_nodes; ni++) {
		const struct fab_node *nd = &t->nodes[ni];
		int first = nd->type == FAB_SWITCH ? 0 : 1;
		int last = nd->type == FAB_SWITCH ? 0 : nd->nports;
		for (int p = first; p <= last; p++) {
			uint64_t pg = t->ports[nd->first_port + (uint32_t)p].guid;
			struct emu_mkey k;
			ck_assert_int_eq(emu_port_mkey(r->e, nd->guid, p, &k), 0);
			ck_assert_msg(k.key == mkeys_derive(secret, pg),
				      "0x%llx[%d]: key 0x%llx", (unsigned long long)nd->guid,
				      p, (unsigned long long)k.key);
			ck_assert_uint_eq(k.protect, level);
			ck_assert_uint_eq(k.lease_s, lease_s);
			n++;
		}
	}
	return n;
}

static unsigned check_keyed(struct run *r, int level)
{
	return check_keyed_lease(r, level, LEASE_S);
}

static uint32_t sets_now(const struct run *r)
{
	return (uint32_t)txn_get_stats(r->sm->txn)->sets;
}

static void heavy_sweep(struct run *r)
{
	uint32_t n = r->sm->sweep.heavy_sweeps, failed = r->sm->sweep.heavy_failed;
	sweeper_request_heavy(r->sm, "test");
	emu_run_sweeps(&r->run, n + 1);
	ck_assert_uint_eq(r->sm->sweep.heavy_failed, failed);
	ck_assert_uint_eq(r->sm->sweep.last.unresponsive, 0);
}

START_TEST(level2_keyed)
{
	struct run r;
	open_run(&r, "mkeysm2");
	sm_up(&r, 2);
	unsigned keyed = check_keyed(&r, 2);
	ck_assert_uint_eq(keyed, 6 + 12);
	ck_assert_uint_eq(mkey_violations(&r), 0);	/* the SM always had the key */
	heavy_sweep(&r);	/* the device cache: everything already written */
	ck_assert_double_eq(emu_metric(r.sm, "ibsmd_mkey_ports{state=\"keyed\"}"), keyed);
	ck_assert_double_eq(emu_metric(r.sm, "ibsmd_mkey_ports{state=\"unkeyed\"}"), 0);

	host_attach(&r);
	uint32_t l0 = (uint32_t)emu_port_lid(r.e, L0, 0);
	int before[64];
	uint8_t blk[SMP_DATA_SIZE];
	for (int i = 0; i < 64; i++) {
		before[i] = emu_lft_entry(r.e, L0, (uint32_t)i);
		blk[i] = (uint8_t)(before[i] == 3 ? 4 : 3);
	}
	ck_assert(!host_smp(&r, l0, IB_MAD_METHOD_SET, IB_ATTR_LINEARFORWTBL, 0, WRONG, blk));
	for (int i = 0; i < 64; i++)
		ck_assert_int_eq(emu_lft_entry(r.e, L0, (uint32_t)i), before[i]);
	struct emu_mkey k;
	ck_assert_int_eq(emu_port_mkey(r.e, L0, 0, &k), 0);
	ck_assert_uint_eq(k.violations, 1);
	/* level 2: the Get is dropped too */
	ck_assert(!host_smp(&r, l0, IB_MAD_METHOD_GET, IB_ATTR_NODE_INFO, 0, WRONG, blk));
	ck_assert_int_eq(emu_port_mkey(r.e, L0, 0, &k), 0);
	ck_assert_uint_eq(k.violations, 2);

	/* the SM reads the violations back, and its Set keeps them */
	heavy_sweep(&r);
	ck_assert_double_eq(emu_metric(r.sm, "ibsmd_mkey_ports{state=\"keyed\"}"), keyed);
	struct mkey_census c;
	subnet_mkey_census(&r.sm->sub, &c);
	ck_assert_uint_eq(c.violations, 2);
	ck_assert_int_eq(emu_port_mkey(r.e, L0, 0, &k), 0);
	ck_assert_uint_eq(k.violations, 2);
	ck_assert_uint_eq(mkey_violations(&r), 2);	/* the host's two, none of the SM's */
	r.host.close(r.host.ctx);
	emu_run_free(&r.run);
}
END_TEST

static int trap_counted(const void *arg)
{
	const struct sm *sm = arg;
	return sm->traps.st.mkey_violations > 0;
}

/* The event hook's program: the environment of each mkey_violation. */
static const char *hook_script(const char *dir)
{
	static char path[160];
	snprintf(path, sizeof(path), "%s/hook.sh", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "#!/bin/sh\n[ \"$1\" = mkey_violation ] && env >>%s/hook.out\n"
		"echo \"$1\" >>%s/hook.events\n", dir, dir);
	fclose(f);
	ck_assert_int_eq(chmod(path, 0700), 0);
	return path;
}

static int hook_lines(const char *dir, const char *file, const char *line)
{
	char path[160], buf[512];
	int n = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		n += !strcmp(buf, line);
	}
	fclose(f);
	return n;
}

static int hook_idle(const void *arg)
{
	json_t *o = evhook_to_ctl(arg);
	int busy = json_integer_value(json_object_get(o, "running")) +
		   json_integer_value(json_object_get(o, "queued"));
	json_decref(o);
	return !busy;
}

START_TEST(trap256_reported)
{
	struct run r;
	char path[128], want[160];
	open_run(&r, "mkeysmt");
	sm_up(&r, 2);
	host_attach(&r);
	evhook_configure(r.sm->hook, hook_script(r.state), 5, 4);
	ctl_up(&r, path, sizeof(path));
	emu_sm_settle(r.base, r.sm, 2000);	/* the host's trap 144 answered */
	struct emu_counters c0, c1;
	emu_get_counters(r.e, &c0);
	struct emu_log lg;
	emu_log_capture(&lg, LOG_NOTICE);

	uint32_t l0 = (uint32_t)emu_port_lid(r.e, L0, 0);
	const struct fabric *mf = &r.sm->sub.model->f;
	const char *l0_name = fabric_node_name(mf, fabric_find_node(mf, L0));
	ck_assert(l0_name[0]);
	uint8_t blk[SMP_DATA_SIZE] = { 0 };
	ck_assert(!host_smp(&r, l0, IB_MAD_METHOD_SET, IB_ATTR_LINEARFORWTBL, 0, WRONG, blk));
	/* counted as the trap arrives, no sweep needed: well within one light
	 * sweep interval of the default policy (10 s; this SM runs none) */
	ck_assert(emu_run_while(r.base, trap_counted, r.sm, WAIT_MS));
	emu_run_while(r.base, hook_idle, r.sm->hook, 5000);
	emu_get_counters(r.e, &c1);
	ck_assert_uint_eq(c1.traps_sent - c0.traps_sent, 1);
	/* confirmed: the device's M_Key check passed the TrapRepress */
	ck_assert_uint_eq(c1.trap_represses - c0.trap_represses, 1);
	struct emu_mkey k;
	ck_assert_int_eq(emu_port_mkey(r.e, L0, 0, &k), 0);
	ck_assert_uint_eq(k.violations, 1);	/* the host's Set, not the repress */

	json_t *st = emu_ctl_request(&r.run, path, "{\"cmd\":\"status\"}\n", 0);
	json_t *mk = json_object_get(st, "m_key");
	ck_assert_int_eq(json_integer_value(json_object_get(mk, "violations")), 1);
	json_decref(st);
	snprintf(want, sizeof(want), "ibsmd_mkey_violations_total{guid=\"0x%016llx\","
		 "node=\"%s\",port=\"0\"}", (unsigned long long)L0,
		 l0_name);
	ck_assert_double_eq(emu_metric(r.sm, want), 1);

	snprintf(want, sizeof(want), "M_Key violation at \"%s\" (0x%016llx) port 0: "
		 "Set of attribute 0x0019 modifier 0x0 with M_Key 0x%016llx",
		 l0_name,
		 (unsigned long long)L0, (unsigned long long)WRONG);
	ck_assert_int_eq(emu_log_lines(&lg, want), 1);

	ck_assert_int_eq(hook_lines(r.state, "hook.events", "mkey_violation"), 1);
	char g[64], node[96], lid[32], key[64];
	snprintf(g, sizeof(g), "IBSM_NODE_GUID=0x%016llx", (unsigned long long)L0);
	snprintf(node, sizeof(node), "IBSM_NODE=%s",
		 l0_name);
	snprintf(lid, sizeof(lid), "IBSM_LID=%u", l0);
	snprintf(key, sizeof(key), "IBSM_MKEY=0x%016llx", (unsigned long long)WRONG);
	const char *vars[] = { g, node, "IBSM_PORT=0", lid, "IBSM_METHOD=0x02",
			       "IBSM_ATTRIBUTE=0x0019", "IBSM_MODIFIER=0x00000000", key };
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		ck_assert_msg(hook_lines(r.state, "hook.out", vars[i]) == 1, "no %s", vars[i]);
	r.host.close(r.host.ctx);
	ctl_down_free(&r);
}
END_TEST

START_TEST(repress_keyed)
{
	struct run r;
	open_run(&r, "mkeysmr2");
	sm_up(&r, 2);
	host_attach(&r);
	emu_sm_settle(r.base, r.sm, 2000);	/* the host's trap 144 answered */
	struct emu_mkey k0, k1;
	ck_assert_int_eq(emu_port_mkey(r.e, emu_host_guid(1), 0, &k0), 0);
	ck_assert_uint_ne(k0.key, 0);
	struct emu_counters c0, c1;
	emu_get_counters(r.e, &c0);
	uint32_t own = (uint32_t)emu_port_lid(r.e, emu_host_guid(1), 0);
	uint8_t m[MAD_SIZE];
	smp_init_lid(m, IB_MAD_METHOD_TRAP, MAD_ATTR_NOTICE, 0);	/* M_Key 0 */
	uint8_t *d = m + SMP_DATA_OFFS;
	mad_set_field(d, 0, IB_NOTICE_IS_GENERIC_F, 1);
	mad_set_field(d, 0, IB_NOTICE_TYPE_F, 1);
	mad_set_field(d, 0, IB_NOTICE_TRAP_NUMBER_F, 145);
	mad_set_field(d, 0, IB_NOTICE_ISSUER_LID_F, own);
	struct mad_addr to = { .lid = r.sm->sub.sm_lid };
	ck_assert_int_eq(mad_transport_send(&r.host, m, MAD_SIZE, &to), 0);
	emu_sm_settle(r.base, r.sm, 2000);
	emu_get_counters(r.e, &c1);
	ck_assert_uint_eq(c1.trap_represses - c0.trap_represses, 1);
	ck_assert_uint_eq(c1.traps_sent - c0.traps_sent, 0);	/* no trap 256 */
	ck_assert_int_eq(emu_port_mkey(r.e, emu_host_guid(1), 0, &k1), 0);
	ck_assert_uint_eq(k1.violations, k0.violations);
	ck_assert_uint_eq(r.sm->traps.st.mkey_violations, 0);
	r.host.close(r.host.ctx);
	emu_run_free(&r.run);
}
END_TEST

START_TEST(level3_host_get_fails)
{
	struct run r;
	open_run(&r, "mkeysm3");
	sm_up(&r, 3);
	check_keyed(&r, 3);
	host_attach(&r);
	uint32_t l0 = (uint32_t)emu_port_lid(r.e, L0, 0);
	uint8_t d[SMP_DATA_SIZE];
	ck_assert(!host_smp(&r, l0, IB_MAD_METHOD_GET, IB_ATTR_NODE_INFO, 0, WRONG, d));
	ck_assert(!host_smp(&r, l0, IB_MAD_METHOD_GET, IB_ATTR_NODE_INFO, 0, 0, d));
	uint64_t l0_key = mkeys_port_key(&r.sm->sub.mk, L0);
	ck_assert(host_smp(&r, l0, IB_MAD_METHOD_GET, IB_ATTR_NODE_INFO, 0, l0_key, d));

	uint32_t sets = sets_now(&r), v = mkey_violations(&r);
	ck_assert_uint_eq(v, 2);			/* the host's two Gets */
	heavy_sweep(&r);
	ck_assert_uint_eq(sets_now(&r), sets);		/* nothing new written */
	ck_assert_uint_eq(mkey_violations(&r), v);	/* the SM's SMPs all keyed */
	check_keyed(&r, 3);
	r.host.close(r.host.ctx);
	emu_run_free(&r.run);
}
END_TEST

/* security.m_key as a reload gives it: level, lease, the secret read again. */
static void reload_mkey(struct run *r, int level, int lease_s)
{
	struct config c = r->sm->cfg;
	char err[256] = "";
	c.mkey_protect = level;
	c.mkey_lease_s = lease_s;
	ck_assert_msg(subnet_mkeys_configure(&r->sm->sub, &c, 1, err, sizeof(err)) == 0,
		      "%s", err);
}

START_TEST(policy_change_rewrites)
{
	struct run r;
	open_run(&r, "mkeysmc");
	sm_up(&r, 2);
	unsigned keyed = check_keyed(&r, 2);
	/* a reload's new lease and level: the ports that hold the old ones are written */
	reload_mkey(&r, 3, 30);
	uint32_t sets = sets_now(&r);
	heavy_sweep(&r);
	ck_assert_uint_ge(sets_now(&r) - sets, keyed);
	ck_assert_uint_eq(check_keyed_lease(&r, 3, 30), keyed);
	ck_assert_uint_eq(mkey_violations(&r), 0);
	emu_run_free(&r.run);
}
END_TEST

static void restart_lease(struct run *r, int level, int drop_map, int lease_s,
			  int interval_s)
{
	emu_run_stop_sm(&r->run);
	if (drop_map) {
		char path[128];
		snprintf(path, sizeof(path), "%s/%s", r->state, NBR_FILE);
		ck_assert_int_eq(unlink(path), 0);
	}
	r->sm = emu_sm_new(r->state, MAD_TIMEOUT_MS);
	r->sm->cfg.mkey_protect = level;
	r->sm->cfg.mkey_lease_s = lease_s;
	r->sm->cfg.sweep_interval_s = interval_s;
	emu_sm_start(r->sm, r->base, r->e);
}

static void restart(struct run *r, int level, int drop_map)
{
	restart_lease(r, level, drop_map, LEASE_S, 0);
}

/* Brings the fabric up at level, restarts the SM; its Sets and MADs once settled. */
static void restart_counts(struct run *r, const char *name, int level,
			   uint64_t *sets, uint64_t *sent)
{
	open_run(r, name);
	sm_up(r, level);
	restart(r, level, 0);
	emu_run_sweeps(&r->run, 1);
	emu_sm_settle(r->base, r->sm, 2000);
	ck_assert_uint_eq(r->sm->sweep.last.unresponsive, 0);
	ck_assert_uint_eq(r->sm->sweep.last.switches, 6);
	ck_assert_uint_eq(r->sm->sweep.last.cas, 12);
	*sets = txn_get_stats(r->sm->txn)->sets;
	*sent = txn_get_stats(r->sm->txn)->all.sent;
}

START_TEST(restart_same_secret)
{
	struct run r;
	uint64_t sets0, sent0, sets3, sent3;
	restart_counts(&r, "mkeysm0", 0, &sets0, &sent0);
	emu_run_free(&r.run);
	restart_counts(&r, "mkeysmr", 3, &sets3, &sent3);
	/* the keys cost the restart nothing: the Sets (ClientReregister) and
	 * MADs of a restart without M_Key, no M_Key rewritten */
	ck_assert_uint_eq(sets3, sets0);
	ck_assert_uint_eq(sent3, sent0);
	ck_assert_uint_eq(mkey_violations(&r), 0);
	unsigned keyed = check_keyed(&r, 3);
	ck_assert_double_eq(emu_metric(r.sm, "ibsmd_mkey_ports{state=\"keyed\"}"), keyed);
	emu_run_free(&r.run);
}
END_TEST

#define SHORT_LEASE_S 2		/* the leases the keyed ports hold, and the SMs' estimate */
#define SB_RETRY_S 2		/* the standbys' sweep.interval_s */

/* m_key.unmanageable of sm's `ibsmctl status --json` (a new reference), or NULL. */
static json_t *unmanageable(const struct sm *sm)
{
	char err[256] = "";
	json_t *req = json_pack("{s:s}", "cmd", "status");
	json_t *st = sm_control((void *)sm, "status", req, err, sizeof(err));
	json_decref(req);
	ck_assert_msg(st != NULL, "status: %s", err);
	json_t *u = json_object_get(json_object_get(st, "m_key"), "unmanageable");
	json_incref(u);
	json_decref(st);
	return u;
}

/* The SM reports a cut of reason, waiting (or not) for a lease of lease_s. */
static void check_unmanageable(const struct sm *sm, const char *reason, int waiting,
			       int lease_s)
{
	json_t *u = unmanageable(sm);
	ck_assert_msg(u != NULL, "no m_key.unmanageable");
	char *txt = json_dumps(u, JSON_COMPACT);
	fprintf(stderr, "m_key.unmanageable: %s\n", txt);
	free(txt);
	ck_assert_str_eq(json_string_value(json_object_get(u, "reason")), reason);
	ck_assert(json_string_value(json_object_get(u, "message"))[0]);
	ck_assert_int_eq(json_is_true(json_object_get(u, "waiting")), waiting);
	ck_assert_int_eq(json_integer_value(json_object_get(u, "lease_s")), lease_s);
	if (waiting) {
		json_int_t since = json_integer_value(json_object_get(u, "since_time"));
		json_int_t now = (json_int_t)time(NULL);
		/* the first refusal of the frontier reached: within a few sweeps */
		ck_assert(since > 0 && since <= now && now - since <= lease_s + 2 * SB_RETRY_S + 2);
		ck_assert_int_eq(json_integer_value(json_object_get(u, "expected_end_time")),
				 since + lease_s);
		ck_assert(json_is_string(json_object_get(u, "since_date")));
		ck_assert(json_is_string(json_object_get(u, "expected_end_date")));
	} else {
		ck_assert_ptr_null(json_object_get(u, "since_time"));
	}
	json_decref(u);
}

static int is_master(const void *arg)
{
	const struct sm *sm = arg;
	return sm->state == SMS_MASTER;
}

static unsigned cut_nodes(const struct sm *sm)
{
	json_t *u = unmanageable(sm);
	unsigned n = u ? (unsigned)json_integer_value(json_object_get(u, "nodes_reached")) : 0;
	json_decref(u);
	return n;
}

static int cut_beyond_one(const void *arg)
{
	return cut_nodes(arg) > 1;
}

#define RETRY_S 1		/* sweep.interval_s of the SM held back */

START_TEST(restart_without_map)
{
	struct run r;
	open_run(&r, "mkeysmn");
	sm_up_lease(&r, 3, 0, SHORT_LEASE_S);
	restart_lease(&r, 3, 1, SHORT_LEASE_S, RETRY_S);
	/*
	 * Its own port answers (its key is derived from its own GUID) but
	 * the leaf beyond drops the key-0 NodeInfo: cut short, it does not
	 * make itself master of the one node it reached, and says so.
	 */
	ck_assert(!emu_run_while(r.base, is_master, r.sm, 1500));
	ck_assert_uint_gt(mkey_violations(&r), 0);
	check_unmanageable(r.sm, "keyed", 1, SHORT_LEASE_S);
	ck_assert_uint_eq(cut_nodes(r.sm), 1);
	/* a lease later the leaf answers Gets again (ProtectBits 0): one hop
	 * further, the next hop refuses, still no master */
	ck_assert(emu_run_while(r.base, cut_beyond_one, r.sm,
				(SHORT_LEASE_S + 2 * RETRY_S) * 1000 + 500));
	ck_assert_int_ne(r.sm->state, SMS_MASTER);
	check_unmanageable(r.sm, "keyed", 1, SHORT_LEASE_S);
	/* the keyed ports' traps 256 get no TrapRepress it cannot key: each
	 * violation is one refused SMP of its sweeps, no repress ping-pong */
	ck_assert_uint_gt(r.sm->traps.st.repress_withheld, 0);
	ck_assert_uint_lt(mkey_violations(&r), 200);
	emu_run_free(&r.run);
}
END_TEST

/*
 * A dead device the neighbour map names is no cut: asked with its own
 * key, its silence is a dead device's.  The restart with the map, one host
 * dead: the SM is master at once, that host left out.
 */
START_TEST(restart_dead_named)
{
	struct run r;
	open_run(&r, "mkeysmdn");
	sm_up(&r, 3);
	ck_assert_int_eq(emu_set_dead(r.e, emu_host_guid(5) - 1, 0, 1), 0);
	restart(&r, 3, 0);
	ck_assert(emu_run_while(r.base, is_master, r.sm, 2000));
	emu_run_sweeps(&r.run, 1);
	ck_assert_uint_eq(r.sm->sweep.last.switches, 6);
	ck_assert_uint_eq(r.sm->sweep.last.cas, 11);
	json_t *u = unmanageable(r.sm);
	ck_assert_ptr_null(u);
	emu_run_free(&r.run);
}
END_TEST

#define SM_PRIORITY 10
#define SB_PRIORITY 5		/* below the master's: no handover */
#define SB_POLL_MS 100		/* sm.poll_ms's least */
#define SB_POLL_RETRIES 2
#define FAILOVER_MS 3000	/* 1/20 of the lease */

static int in_standby(const void *arg)
{
	const struct sm *sm = arg;
	return sm->state == SMS_STANDBY;
}

/* The SM is master and has done heavy sweeps beyond w->n, none under way. */
static int master_swept(const void *arg)
{
	const struct emu_sweeps *w = arg;
	return w->sm->state == SMS_MASTER && emu_sweeps_done(w);
}

enum sb_secret { SB_OWN_SECRET, SB_SHARED_SECRET };
enum sb_map { MAP_NONE, MAP_WHOLE, MAP_PART };	/* the master's neighbour map copied */
#define H_UNMAPPED 7

/* A standby on H3 (priority below the master's), its state dir in dir. */
static struct sm *standby_new(struct run *r, const char *name, int level,
			      enum sb_secret secret, char *dir, size_t dirlen)
{
	snprintf(dir, dirlen, "/tmp/ibsmd-%s-sb.XXXXXX", name);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	struct sm *sb = emu_sm_new(dir, MAD_TIMEOUT_MS);
	sb->cfg.port_guid = emu_host_guid(3);
	sb->cfg.sm_priority = SB_PRIORITY;
	sb->cfg.sminfo_poll_ms = SB_POLL_MS;
	sb->cfg.sminfo_poll_retries = SB_POLL_RETRIES;
	sb->cfg.sweep_interval_s = SB_RETRY_S;
	sb->cfg.mkey_protect = level;
	sb->cfg.mkey_lease_s = r->sm->cfg.mkey_lease_s;
	if (secret == SB_SHARED_SECRET)
		snprintf(sb->cfg.mkey_secret_file, sizeof(sb->cfg.mkey_secret_file),
			 "%s/%s", r->state, MKEYS_SECRET_FILE);
	return sb;
}

/*
 * The master keys the fabric at level 2 with a lease of lease_s, a
 * standby on H3 (secret_file: the master's when shared; the master's
 * neighbour map copied when copy_map) follows it: STANDBY while the master
 * lives, whatever it can read.
 */
static struct sm *fail_over(struct run *r, const char *name, enum sb_secret secret,
			    enum sb_map copy_map, int lease_s, char *dir, size_t dirlen)
{
	open_run(r, name);
	sm_up_lease(r, 2, SM_PRIORITY, lease_s);
	check_keyed_lease(r, 2, (unsigned)lease_s);
	struct sm *sb = standby_new(r, name, 2, secret, dir, dirlen);
	char cmd[256];
	if (copy_map == MAP_WHOLE)
		snprintf(cmd, sizeof(cmd), "cp %s/%s %s/", r->state, NBR_FILE, dir);
	else	/* without the link of host H_UNMAPPED */
		snprintf(cmd, sizeof(cmd), "grep -v 0x%016llx %s/%s >%s/%s",
			 (unsigned long long)emu_host_guid(H_UNMAPPED), r->state, NBR_FILE,
			 dir, NBR_FILE);
	if (copy_map != MAP_NONE)
		ck_assert_int_eq(system(cmd), 0);
	emu_sm_start(sb, r->base, r->e);
	ck_assert(emu_run_while(r->base, in_standby, sb, FAILOVER_MS));
	emu_sm_settle(r->base, r->sm, 500);
	ck_assert_int_eq(sb->state, SMS_STANDBY);	/* no second master */
	ck_assert_int_eq(r->sm->state, SMS_MASTER);
	return sb;
}

/* The master stops; 1 if the standby swept as master within FAILOVER_MS. */
static int master_stops(struct run *r, struct sm *sb, const char *name)
{
	emu_run_stop_sm(&r->run);
	double t0 = emu_now_s();
	struct emu_sweeps w = { sb, sb->sweep.heavy_sweeps + 1 };
	int took = emu_run_while(r->base, master_swept, &w, FAILOVER_MS);
	fprintf(stderr, "%s: standby state %d, %u heavy sweeps (%u failed) "
		"%.2f s after the master stopped, %u violations\n", name, sb->state,
		sb->sweep.heavy_sweeps, sb->sweep.heavy_failed, emu_now_s() - t0,
		mkey_violations(r));
	return took;
}

/* The master stops; the standby takes over within FAILOVER_MS -- no lease
 * wait -- sweeping the whole fabric, no violation, every port keyed. */
static void standby_took_over(struct run *r, struct sm *sb, const char *name)
{
	ck_assert(master_stops(r, sb, name));
	ck_assert_int_eq(sb->state, SMS_MASTER);
	ck_assert_uint_gt(sb->sweep.heavy_sweeps, 0);
	ck_assert_uint_eq(sb->sweep.last.unresponsive, 0);
	ck_assert_uint_eq(sb->sweep.last.switches, 6);
	ck_assert_uint_eq(sb->sweep.last.cas, 12);
	ck_assert_uint_eq(mkey_violations(r), 0);
	ck_assert_uint_eq(check_keyed(r, 2), 6 + 12);
}

static void standby_free(struct sm *sb, const char *dir)
{
	char cmd[128];
	sm_shutdown(sb);
	free(sb);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(standby_takes_over)
{
	struct run r;
	char dir[64];
	struct sm *sb = fail_over(&r, "mkeysmsb", SB_SHARED_SECRET, MAP_WHOLE, LEASE_S, dir,
				  sizeof(dir));
	standby_took_over(&r, sb, "mkeysmsb");
	standby_free(sb, dir);
	emu_run_free(&r.run);
}
END_TEST

/*
 * The same standby with a secret of its own (it cannot derive the keys):
 * its own port refuses it, so the master's SMInfo Get is all it sees of a
 * master: it follows it, STANDBY, and says why; once the master stops it
 * does not become master but waits for the leases, with the times.
 */
struct failed_since {
	const struct sm *sm;
	uint32_t n;
};

static int failed_again(const void *arg)
{
	const struct failed_since *f = arg;
	return f->sm->sweep.heavy_failed > f->n;
}

static int never(const void *arg)
{
	(void)arg;
	return 0;
}

START_TEST(standby_other_secret)
{
	struct run r;
	char dir[64];
	struct sm *sb = fail_over(&r, "mkeysmso", SB_OWN_SECRET, MAP_NONE, SHORT_LEASE_S, dir,
				  sizeof(dir));
	check_unmanageable(sb, "own_port", 0, SHORT_LEASE_S);
	ck_assert_uint_eq(check_keyed_lease(&r, 2, SHORT_LEASE_S), 6 + 12);
	emu_run_stop_sm(&r.run);
	/* the master lost: its first sweep is cut short at its own port ... */
	struct failed_since f = { sb, sb->sweep.heavy_failed };
	ck_assert(emu_run_while(r.base, failed_again, &f, FAILOVER_MS));
	ck_assert_int_ne(sb->state, SMS_MASTER);
	check_unmanageable(sb, "own_port", 1, SHORT_LEASE_S);
	/* ... and tried again at the sweep interval, not faster */
	f.n = sb->sweep.heavy_failed;
	emu_run_while(r.base, never, NULL, SB_RETRY_S * 1000 - 500);
	ck_assert_uint_eq(sb->sweep.heavy_failed, f.n);
	/* its own port's lease ran out: the next hop refuses it (the ports are
	 * the old master's: taking them over is the next step); no master yet */
	emu_run_while(r.base, is_master, sb, (SHORT_LEASE_S + SB_RETRY_S) * 1000);
	ck_assert_int_ne(sb->state, SMS_MASTER);
	json_t *u = unmanageable(sb);
	ck_assert_ptr_nonnull(u);
	const char *why = json_string_value(json_object_get(u, "reason"));
	check_unmanageable(sb, why, 1, SHORT_LEASE_S);
	json_decref(u);
	ck_assert_uint_gt(mkey_violations(&r), 0);
	standby_free(sb, dir);
	emu_run_free(&r.run);
}
END_TEST

static int file_exists(const void *arg)
{
	return access(arg, R_OK) == 0;
}

/*
 * The standby with the shared secret but not the master's neighbour map:
 * its port's MasterSMLID names the master beyond the keyed leaf: STANDBY,
 * not a second master of its own node.  It reads the map from the
 * master's SA (NodeRecords and LinkRecords: GMPs carry no M_Key) and once
 * the master stops takes over with no lease wait and no violation.
 */
START_TEST(standby_without_map)
{
	struct run r;
	char dir[64], path[128];
	struct sm *sb = fail_over(&r, "mkeysmnm", SB_SHARED_SECRET, MAP_NONE, LEASE_S, dir,
				  sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, NBR_FILE);
	ck_assert_msg(emu_run_while(r.base, file_exists, path, FAILOVER_MS),
		      "the standby learned no neighbour map");
	json_t *u = unmanageable(sb);
	ck_assert_ptr_null(u);		/* the map names every port now */
	standby_took_over(&r, sb, "mkeysmnm");
	standby_free(sb, dir);
	emu_run_free(&r.run);
}
END_TEST

static int map_learned(const void *arg)
{
	json_t *u = unmanageable(arg);
	json_decref(u);
	return u == NULL;
}

/*
 * The shared secret and a map that lacks one host's link: the standby
 * finds the master by its own sweep but does not send the NodeInfo it
 * cannot key (no violation); it reads the whole map from the master's SA
 * and takes over with every port.
 */
START_TEST(standby_partial_map)
{
	struct run r;
	char dir[64];
	struct sm *sb = fail_over(&r, "mkeysmpm", SB_SHARED_SECRET, MAP_PART, LEASE_S, dir,
				  sizeof(dir));
	ck_assert(emu_run_while(r.base, map_learned, sb, FAILOVER_MS));
	ck_assert_uint_eq(mkey_violations(&r), 0);
	standby_took_over(&r, sb, "mkeysmpm");
	standby_free(sb, dir);
	emu_run_free(&r.run);
}
END_TEST

/*
 * A standby's own discovery fills its own neighbour map: it comes up
 * while the fabric is not keyed yet (the master at level 0), follows the
 * master and writes STATE_DIR/neighbors; the master then keys the fabric
 * (level 2, the secret the standby made in the shared file) and stops:
 * the standby takes over with no lease wait and no violation.
 */
START_TEST(standby_learns_map)
{
	struct run r;
	char dir[64], path[128];
	open_run(&r, "mkeysmlm");
	sm_up_lease(&r, 0, SM_PRIORITY, LEASE_S);
	struct sm *sb = standby_new(&r, "mkeysmlm", 2, SB_SHARED_SECRET, dir, sizeof(dir));
	emu_sm_start(sb, r.base, r.e);
	ck_assert(emu_run_while(r.base, in_standby, sb, FAILOVER_MS));
	snprintf(path, sizeof(path), "%s/%s", dir, NBR_FILE);
	ck_assert_msg(access(path, R_OK) == 0, "the standby wrote no %s", path);

	struct config c = r.sm->cfg;
	char err[256] = "";
	c.mkey_protect = 2;
	ck_assert_msg(subnet_mkeys_configure(&r.sm->sub, &c, 1, err, sizeof(err)) == 0,
		      "%s", err);
	heavy_sweep(&r);
	ck_assert_uint_eq(check_keyed(&r, 2), 6 + 12);
	standby_took_over(&r, sb, "mkeysmlm");
	standby_free(sb, dir);
	emu_run_free(&r.run);
}
END_TEST

#define SHORT_LEASE_S 2
#define SWEEP_S 1		/* light sweeps: the pace of the retries */
#define TAKE_OVER_MS 30000	/* the whole fabric, a lease per layer at most */
#define ONE_LEASE_S (2 * SHORT_LEASE_S + 0.5)	/* one lease and the sweeps, not two */
#define KEYED_PORTS (6 + 12)

/* Every port the SM keys holds the key secret derives for it and level. */
struct all_keyed {
	struct run *r;
	uint8_t secret[MKEYS_SECRET_LEN];
	int level;
};

static int holds_keys(const void *arg)
{
	const struct all_keyed *a = arg;
	const struct fabric *t = &a->r->topo;
	const struct sm *sm = a->r->sm;
	if (sm->sw.activity != SM_IDLE || sm->sw.heavy_wanted || sm->state != SMS_MASTER)
		return 0;
	for (uint32_t ni = 0; ni < t->n_nodes; ni++) {
		const struct fab_node *nd = &t->nodes[ni];
		int first = nd->type == FAB_SWITCH ? 0 : 1;
		int last = nd->type == FAB_SWITCH ? 0 : nd->nports;
		for (int p = first; p <= last; p++) {
			uint64_t pg = t->ports[nd->first_port + (uint32_t)p].guid;
			struct emu_mkey k;
			if (emu_port_mkey(a->r->e, nd->guid, p, &k) < 0 ||
			    k.key != mkeys_derive(a->secret, pg) || k.protect != a->level)
				return 0;
		}
	}
	return 1;
}

static json_int_t mkey_field(json_t *st, const char *name)
{
	json_t *v = json_object_get(json_object_get(st, "m_key"), name);
	ck_assert_msg(v != NULL, "no m_key.%s in the status", name);
	return json_integer_value(v);
}

/*
 * The fabric keyed at level with a lease of SHORT_LEASE_S, the SM
 * restarted on the same state directory with a new secret: while the
 * ports refuse it, what the status says; then every port taken over.
 */
static void new_secret(const char *name, int level)
{
	struct run r;
	char path[128], sock[128], err[256] = "";
	open_run(&r, name);
	r.sm = emu_sm_new(r.state, MAD_TIMEOUT_MS);
	r.sm->cfg.mkey_protect = level;
	r.sm->cfg.mkey_lease_s = SHORT_LEASE_S;
	emu_sm_start(r.sm, r.base, r.e);
	emu_run_sweeps(&r.run, 1);
	ck_assert_uint_eq(check_keyed_lease(&r, level, SHORT_LEASE_S), KEYED_PORTS);
	emu_run_stop_sm(&r.run);
	snprintf(path, sizeof(path), "%s/%s", r.state, MKEYS_SECRET_FILE);
	ck_assert_int_eq(unlink(path), 0);	/* a new one is made at the start */

	r.sm = emu_sm_new(r.state, MAD_TIMEOUT_MS);
	r.sm->cfg.mkey_protect = level;
	r.sm->cfg.mkey_lease_s = SHORT_LEASE_S;
	r.sm->cfg.sweep_interval_s = SWEEP_S;
	double t0 = emu_now_s();
	struct emu_log lg;
	emu_log_capture(&lg, LOG_NOTICE);
	emu_sm_start(r.sm, r.base, r.e);
	ctl_up(&r, sock, sizeof(sock));
	struct all_keyed a = { .r = &r, .level = level };
	ck_assert_msg(mkeys_secret_load(path, 0, a.secret, err, sizeof(err)) == MKEYS_READ,
		      "%s", err);

	/* the ports refuse: reported, with when their lease should end */
	emu_run_while(r.base, emu_never, NULL, 500);
	json_t *st = emu_ctl_request(&r.run, sock, "{\"cmd\":\"status\"}\n", 0);
	json_int_t foreign = mkey_field(st, "ports_foreign");
	json_int_t ends = mkey_field(st, "foreign_ends_in_s");
	json_decref(st);
	double asked = emu_now_s() - t0;
	ck_assert_int_gt(foreign, 0);
	ck_assert_int_gt(ends, 0);
	ck_assert_int_le(ends, SHORT_LEASE_S);

	int all = emu_run_while(r.base, holds_keys, &a, TAKE_OVER_MS);
	double took = emu_now_s() - t0;
	/* one line a port taken over, naming it */
	int lines = emu_log_lines(&lg, "M_Key: took over ");
	ck_assert_msg(all, "not every port holds its new key after %d ms", TAKE_OVER_MS);
	fprintf(stderr, "%s: %.2f s after the start: %lld ports refuse, their lease ends in %lld s\n",
		name, asked, (long long)foreign, (long long)ends);
	ck_assert_int_eq(lines, KEYED_PORTS);
	uint32_t sweeps = r.sm->sweep.heavy_sweeps + r.sm->sweep.heavy_failed;
	uint64_t sent = txn_get_stats(r.sm->txn)->all.sent;	/* since its start */
	fprintf(stderr, "%s: taken over in %.2f s: %u heavy sweeps (%u failed), %u light, "
		"%llu MADs\n", name, took, sweeps, r.sm->sweep.heavy_failed,
		r.sm->sweep.light_sweeps, (unsigned long long)sent);
	/* every port's lease ran from the first refused SMP: one lease in all */
	ck_assert_double_lt(took, ONE_LEASE_S);
	/* no loop: a heavy sweep a sweep interval at most, and its MADs */
	ck_assert_uint_le(sweeps, (unsigned)(took / SWEEP_S) + 2);
	ck_assert_uint_le(sent, (uint64_t)sweeps * 400);

	st = emu_ctl_request(&r.run, sock, "{\"cmd\":\"status\"}\n", 0);
	ck_assert_int_eq(mkey_field(st, "taken_over"), KEYED_PORTS);
	ck_assert_int_eq(mkey_field(st, "ports_foreign"), 0);
	json_decref(st);
	ck_assert_double_eq(emu_metric(r.sm, "ibsmd_mkey_taken_over_total"), KEYED_PORTS);
	ck_assert_uint_eq(check_keyed_lease(&r, level, SHORT_LEASE_S), KEYED_PORTS);
	unsigned v = mkey_violations(&r);
	heavy_sweep(&r);
	ck_assert_uint_eq(r.sm->sweep.last.switches, 6);
	ck_assert_uint_eq(r.sm->sweep.last.cas, 12);
	ck_assert_uint_eq(mkey_violations(&r), v);	/* none after the take-over */
	ctl_down_free(&r);
}

START_TEST(new_secret_level2)
{
	new_secret("mkeysmn2", 2);
}
END_TEST

START_TEST(new_secret_level1)
{
	new_secret("mkeysmn1", 1);
}
END_TEST

#define L1_HOSTS 3		/* H3..H5 */
#define PROBE_POLLS 10
#define PROBE_POLL_MS 100
#define OTHER_KEY 0x0123456789abcdefull

START_TEST(foreign_leaf_level2)
{
	struct run r;
	char sock[128], err[256] = "";
	open_run(&r, "mkeysmfl");
	sm_up(&r, 2);
	ck_assert_uint_eq(check_keyed(&r, 2), KEYED_PORTS);
	ck_assert_int_eq(emu_set_mkey(r.e, L1, 0, OTHER_KEY, 2, SHORT_LEASE_S), 0);
	for (int h = L1_HOSTS; h < 2 * L1_HOSTS; h++)
		ck_assert_int_eq(emu_set_mkey(r.e, emu_host_guid(h) - 1, 1, OTHER_KEY + (uint64_t)h,
					      2, SHORT_LEASE_S), 0);
	ctl_up(&r, sock, sizeof(sock));
	double t0 = emu_now_s();
	uint32_t heavy = r.sm->sweep.heavy_sweeps;
	sweeper_request_heavy(r.sm, "test");
	emu_run_sweeps(&r.run, heavy + 1);
	emu_sm_settle(r.base, r.sm, 200);
	ck_assert_uint_eq(r.sm->sweep.heavy_sweeps, heavy + 1);	/* no loop */
	ck_assert_uint_eq(r.sm->sweep.last.switches, 5);
	/* the probes' answers due (their tries time out) */
	json_int_t foreign = 0, ends = 0;
	for (int i = 0; i < PROBE_POLLS && foreign < 1 + L1_HOSTS; i++) {
		emu_run_while(r.base, emu_never, NULL, PROBE_POLL_MS);
		json_t *st = emu_ctl_request(&r.run, sock, "{\"cmd\":\"status\"}\n", 0);
		foreign = mkey_field(st, "ports_foreign");
		ends = mkey_field(st, "foreign_ends_in_s");
		json_decref(st);
	}
	ck_assert_int_eq(foreign, 1 + L1_HOSTS);
	/* the estimate: the SM's own lease, as the ports' is hidden */
	ck_assert_int_gt(ends, SHORT_LEASE_S);
	ck_assert_int_le(ends, LEASE_S);
	ck_assert_uint_eq(r.sm->sweep.heavy_sweeps, heavy + 1);	/* still no loop */
	/* the hosts behind the leaf: their lease runs (the probes' violations) */
	for (int h = L1_HOSTS; h < 2 * L1_HOSTS; h++) {
		struct emu_mkey k;
		ck_assert_int_eq(emu_port_mkey(r.e, emu_host_guid(h) - 1, 1, &k), 0);
		ck_assert_uint_gt(k.lease_left_ms, 0);
	}

	r.sm->cfg.sweep_interval_s = SWEEP_S;	/* light sweeps from now on */
	struct all_keyed a = { .r = &r, .level = 2 };
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", r.state, MKEYS_SECRET_FILE);
	ck_assert_msg(mkeys_secret_load(path, 0, a.secret, err, sizeof(err)) == MKEYS_READ,
		      "%s", err);
	sweeper_request_light(r.sm);
	ck_assert_msg(emu_run_while(r.base, holds_keys, &a, TAKE_OVER_MS),
		      "the leaf and its hosts not taken over after %d ms", TAKE_OVER_MS);
	double took = emu_now_s() - t0;
	fprintf(stderr, "foreign_leaf_level2: taken over in %.2f s, %u heavy sweeps\n", took,
		r.sm->sweep.heavy_sweeps - heavy);
	/* the lease they hold, a sweep interval (the retry) and the sweeps */
	ck_assert_double_lt(took, SHORT_LEASE_S + 2 * SWEEP_S + 1.0);
	json_t *st = emu_ctl_request(&r.run, sock, "{\"cmd\":\"status\"}\n", 0);
	ck_assert_int_eq(mkey_field(st, "taken_over"), 1 + L1_HOSTS);
	ck_assert_int_eq(mkey_field(st, "ports_foreign"), 0);
	json_decref(st);
	ck_assert_uint_eq(r.sm->sweep.last.switches, 6);
	ck_assert_uint_eq(r.sm->sweep.last.cas, 12);
	ctl_down_free(&r);
}
END_TEST

START_TEST(lower_to_level0)
{
	struct run r;
	open_run(&r, "mkeysml0");
	sm_up(&r, 2);
	check_keyed(&r, 2);
	reload_mkey(&r, 0, LEASE_S);	/* a reload without security.m_key */
	double t0 = emu_now_s();
	heavy_sweep(&r);
	ck_assert_double_lt(emu_now_s() - t0, LEASE_S / 10.0);	/* no lease wait */
	const struct fabric *t = &r.topo;
	for (uint32_t ni = 0; ni < t->n_nodes; ni++) {
		const struct fab_node *nd = &t->nodes[ni];
		for (int p = nd->type == FAB_SWITCH ? 0 : 1;
		     p <= (nd->type == FAB_SWITCH ? 0 : nd->nports); p++) {
			struct emu_mkey k;
			ck_assert_int_eq(emu_port_mkey(r.e, nd->guid, p, &k), 0);
			ck_assert_msg(k.key == 0 && k.protect == 0 && k.lease_s == 0,
				      "0x%llx[%d]: key 0x%llx level %u lease %u",
				      (unsigned long long)nd->guid, p,
				      (unsigned long long)k.key, k.protect, k.lease_s);
		}
	}
	ck_assert_uint_eq(mkey_violations(&r), 0);
	emu_run_free(&r.run);
}
END_TEST

#define SPARE_PORT 5
#define NEW_LINK_SWEEPS 3
#define NEW_LINK_MS 5000

/* The tree of emu_tree_text() with a cable L0[5] - L1[5]. */
static char *tree_spare_cable(void)
{
	char *t = emu_tree_text();
	size_t n = strlen(t) + 64;
	char *o = malloc(n);
	ck_assert_ptr_nonnull(o);
	const char *a = strstr(t, "Switch\t8 \"L0\"\n"), *b = strstr(t, "Switch\t8 \"L1\"\n");
	ck_assert(a && b && a < b);
	a += strlen("Switch\t8 \"L0\"\n");
	b += strlen("Switch\t8 \"L1\"\n");
	snprintf(o, n, "%.*s[5]\t\"L1\"[5]\n%.*s[5]\t\"L0\"[5]\n%s", (int)(a - t), t,
		 (int)(b - a), a, b);
	free(t);
	return o;
}

static int spare_linked(const void *arg)
{
	const struct sm *sm = arg;
	if (sm->sw.activity != SM_IDLE || sm->sw.heavy_wanted || !sm->sub.model)
		return 0;
	const struct fabric *f = &sm->sub.model->f;
	uint32_t a = fabric_find_node(f, L0), b = fabric_find_node(f, L1);
	if (a == FAB_NONE || b == FAB_NONE)
		return 0;
	return f->ports[fabric_port(f, a, SPARE_PORT)].remote == fabric_port(f, b, SPARE_PORT);
}

/* Does STATE_DIR/neighbors hold the spare cable? */
static int map_has_spare(const struct run *r)
{
	char path[128], line[256];
	snprintf(path, sizeof(path), "%s/%s", r->state, NBR_FILE);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int found = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, ag, b, bg;
		unsigned ap, bp;
		if (sscanf(line, "%llx %u %llx %llx %u %llx", &a, &ap, &ag, &b, &bp, &bg) == 6 &&
		    a == L0 && ap == SPARE_PORT && b == L1 && bp == SPARE_PORT)
			found = 1;
	}
	fclose(f);
	return found;
}

START_TEST(new_cable_keyed)
{
	struct run r;
	memset(&r, 0, sizeof(r));
	emu_run_open(&r.run, &(struct emu_world_opts){ .name = "mkeysmnc", .seed = 7,
		     .text = tree_spare_cable(), .debug_env = "MKEY_DEBUG",
		     .debug_level = LOG_INFO });
	ck_assert_int_eq(emu_link_down(r.e, L0, SPARE_PORT), 0);
	sm_up(&r, 2);
	ck_assert_uint_eq(check_keyed(&r, 2), KEYED_PORTS);
	ck_assert(!spare_linked(r.sm));
	ck_assert(!map_has_spare(&r));
	uint32_t sweeps = r.sm->sweep.heavy_sweeps;
	ck_assert_int_eq(emu_link_up(r.e, L0, SPARE_PORT), 0);	/* traps 128: a heavy sweep */
	ck_assert_msg(emu_run_while(r.base, spare_linked, r.sm, NEW_LINK_MS),
		      "the new link is not in the model after %d ms (%u heavy sweeps)",
		      NEW_LINK_MS, r.sm->sweep.heavy_sweeps - sweeps);
	ck_assert_uint_le(r.sm->sweep.heavy_sweeps - sweeps, NEW_LINK_SWEEPS);
	ck_assert(map_has_spare(&r));	/* a restart knows it */
	ck_assert_uint_eq(r.sm->sweep.last.unresponsive, 0);
	ck_assert_uint_eq(check_keyed(&r, 2), KEYED_PORTS);
	emu_run_free(&r.run);
}
END_TEST

static Suite *mkey_sm_suite(void)
{
	Suite *s = suite_create("mkey_sm_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, level2_keyed);
	tcase_add_test(tc, trap256_reported);
	tcase_add_test(tc, repress_keyed);
	tcase_add_test(tc, level3_host_get_fails);
	tcase_add_test(tc, policy_change_rewrites);
	tcase_add_test(tc, restart_same_secret);
	tcase_add_test(tc, restart_without_map);
	tcase_add_test(tc, restart_dead_named);
	tcase_add_test(tc, standby_takes_over);
	tcase_add_test(tc, standby_other_secret);
	tcase_add_test(tc, standby_without_map);
	tcase_add_test(tc, standby_partial_map);
	tcase_add_test(tc, standby_learns_map);
	tcase_add_test(tc, new_secret_level2);
	tcase_add_test(tc, new_secret_level1);
	tcase_add_test(tc, foreign_leaf_level2);
	tcase_add_test(tc, lower_to_level0);
	tcase_add_test(tc, new_cable_keyed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(mkey_sm_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
