/*
 * The SM state machine: the election as a pure function, the table's
 * legal events, and two and three real SMs (sm/daemon.c + sm/smstate.c)
 * on one emulated fabric -- start-up in both orders, HANDOVER and
 * ACKNOWLEDGE, a lost ACKNOWLEDGE, a master that never acknowledges (as
 * OpenSM), failover, DISABLE/STANDBY from a master, two masters meeting
 * when two fabrics are cabled together, and ActCount.  The end state is
 * read back from the emulated devices.  The event hook's events
 * (sm/ctl/evhook.h) for a state or master change and a rogue SM are read
 * from each SM's recent events.
 */
#include <check.h>
#include <infiniband/mad.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mad/emu/emu.h"
#include "mad/smp.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/rogue.h"
#include "sm/smkey.h"
#include "sm/smstate.h"
#include "sm/sweeper.h"
#include "sm/base/topo.h"
#include "sm/ctl/evhook.h"
#include "sm/vm/vmops.h"

#include "emu_testlib.h"

/*
 * The variable var of the last event named ev in sm's recent events
 * (sm/ctl/evhook.h), as a string to free, or NULL when there is none.
 */
static char *event_var(struct sm *sm, const char *ev, const char *var)
{
	json_t *o = evhook_to_ctl(sm->hook), *e;
	size_t i;
	char *v = NULL;
	json_array_foreach(json_object_get(o, "recent"), i, e)
		if (!strcmp(json_string_value(json_object_get(e, "event")), ev)) {
			free(v);
			const char *s = json_string_value(json_object_get(
				json_object_get(e, "vars"), var));
			v = s ? strdup(s) : NULL;
		}
	json_decref(o);
	return v;
}

static void assert_event_var(struct sm *sm, const char *ev, const char *var,
			     const char *want)
{
	char *v = event_var(sm, ev, var);
	ck_assert_msg(v != NULL, "no %s event with %s", ev, var);
	ck_assert_msg(!strcmp(v, want), "%s: %s=%s, not %s", ev, var, v, want);
	free(v);
}

static void assert_event_guid(struct sm *sm, const char *ev, const char *var,
			      uint64_t guid)
{
	char g[24];
	snprintf(g, sizeof(g), "0x%016llx", (unsigned long long)guid);
	assert_event_var(sm, ev, var, g);
}

/* ---- the election, alone ---- */

static struct remote_sm peer(uint64_t guid, int prio, int state, int key_ok)
{
	struct remote_sm r;
	memset(&r, 0, sizeof(r));
	r.answered = 1;
	r.key_ok = (uint8_t)key_ok;
	r.info.guid = guid;
	r.info.priority = (uint8_t)prio;
	r.info.state = (uint8_t)state;
	return r;
}

START_TEST(t_elect_rules)
{
	uint32_t who = 99;
	struct remote_sm v[3];
	memset(v, 0, sizeof(v));
	/* alone */
	ck_assert_int_eq(sm_elect(SMS_DISCOVERING, 5, 0x10, 1, v, 0, &who), SMV_MASTER);
	/* a lower master is still followed by a newcomer */
	v[0] = peer(0x20, 1, SMS_MASTER, 1);
	ck_assert_int_eq(sm_elect(SMS_DISCOVERING, 5, 0x10, 1, v, 1, &who), SMV_STANDBY);
	ck_assert_uint_eq(who, 0);
	/* ... and a master hands over to... nobody: it waits for the lower one */
	ck_assert_int_eq(sm_elect(SMS_MASTER, 5, 0x10, 1, v, 1, &who), SMV_WAIT);
	/* a higher standby: the master hands over, a newcomer follows it */
	v[0] = peer(0x20, 9, SMS_STANDBY, 1);
	ck_assert_int_eq(sm_elect(SMS_MASTER, 5, 0x10, 1, v, 1, &who), SMV_HANDOVER);
	ck_assert_int_eq(sm_elect(SMS_DISCOVERING, 5, 0x10, 1, v, 1, &who), SMV_STANDBY);
	/* equal priority: the lower GUID wins */
	v[0] = peer(0x08, 5, SMS_STANDBY, 1);
	ck_assert_int_eq(sm_elect(SMS_MASTER, 5, 0x10, 1, v, 1, &who), SMV_HANDOVER);
	v[0] = peer(0x18, 5, SMS_STANDBY, 1);
	ck_assert_int_eq(sm_elect(SMS_MASTER, 5, 0x10, 1, v, 1, &who), SMV_MASTER);
	/* NOTACTIVE and silent SMs do not count */
	v[0] = peer(0x20, 15, SMS_NOTACTIVE, 1);
	v[1] = peer(0x21, 15, SMS_STANDBY, 1);
	v[1].answered = 0;
	ck_assert_int_eq(sm_elect(SMS_MASTER, 5, 0x10, 1, v, 2, &who), SMV_MASTER);
	/* an SM of another key counts for nothing: not handed to, not followed */
	v[0] = peer(0x20, 15, SMS_STANDBY, 0);
	ck_assert_int_eq(sm_elect(SMS_MASTER, 5, 0x10, 1, v, 1, &who), SMV_MASTER);
	v[0] = peer(0x20, 0, SMS_MASTER, 0);
	ck_assert_int_eq(sm_elect(SMS_MASTER, 5, 0x10, 1, v, 1, &who), SMV_MASTER);
	v[0] = peer(0x20, 15, SMS_MASTER, 0);
	ck_assert_int_eq(sm_elect(SMS_MASTER, 0, 0x10, 1, v, 1, &who), SMV_MASTER);
	ck_assert_int_eq(sm_elect(SMS_DISCOVERING, 0, 0x10, 1, v, 1, &who), SMV_MASTER);
	ck_assert_int_eq(sm_elect(SMS_STANDBY, 0, 0x10, 1, v, 1, &who), SMV_MASTER);
	/* with no key of ours (SM_Key 0), a master of another key is followed */
	ck_assert_int_eq(sm_elect(SMS_MASTER, 0, 0x10, 0, v, 1, &who), SMV_STANDBY);
	ck_assert_int_eq(sm_elect(SMS_DISCOVERING, 0, 0x10, 0, v, 1, &who), SMV_STANDBY);
	v[0] = peer(0x20, 15, SMS_STANDBY, 0);
	ck_assert_int_eq(sm_elect(SMS_MASTER, 5, 0x10, 0, v, 1, &who), SMV_MASTER);
	/* the highest of several */
	v[0] = peer(0x30, 7, SMS_STANDBY, 1);
	v[1] = peer(0x31, 12, SMS_DISCOVERING, 1);
	v[2] = peer(0x32, 9, SMS_MASTER, 1);
	/* a master hands over to a STANDBY or MASTER, not to one still DISCOVERING */
	ck_assert_int_eq(sm_elect(SMS_MASTER, 5, 0x10, 1, v, 3, &who), SMV_HANDOVER);
	ck_assert_uint_eq(who, 2);
	v[2] = peer(0x32, 9, SMS_STANDBY, 1);
	v[1].info.state = SMS_STANDBY;
	ck_assert_int_eq(sm_elect(SMS_MASTER, 5, 0x10, 1, v, 3, &who), SMV_HANDOVER);
	ck_assert_uint_eq(who, 1);
	v[1].info.state = SMS_DISCOVERING;
	v[2] = peer(0x32, 9, SMS_MASTER, 1);
	ck_assert_int_eq(sm_elect(SMS_DISCOVERING, 5, 0x10, 1, v, 3, &who), SMV_STANDBY);
	ck_assert_uint_eq(who, 2);	/* the master, not the highest */
	v[0] = peer(0x20, 9, SMS_DISCOVERING, 1);
	ck_assert_int_eq(sm_elect(SMS_MASTER, 5, 0x10, 1, v, 1, &who), SMV_MASTER);
}
END_TEST

START_TEST(t_table_legality)
{
	/* what the spec lets each state receive in an SMInfo Set */
	ck_assert(sm_event_legal(SMS_STANDBY, SME_RCV_HANDOVER));
	ck_assert(sm_event_legal(SMS_STANDBY, SME_RCV_DISABLE));
	ck_assert(sm_event_legal(SMS_STANDBY, SME_RCV_DISCOVER));
	ck_assert(!sm_event_legal(SMS_STANDBY, SME_RCV_STANDBY));
	ck_assert(sm_event_legal(SMS_NOTACTIVE, SME_RCV_STANDBY));
	ck_assert(!sm_event_legal(SMS_NOTACTIVE, SME_RCV_HANDOVER));
	ck_assert(!sm_event_legal(SMS_NOTACTIVE, SME_ELECT_MASTER));
	ck_assert(!sm_event_legal(SMS_MASTER, SME_RCV_DISABLE));
	ck_assert(sm_event_legal(SMS_MASTER, SME_RCV_ACKNOWLEDGE));
	ck_assert(!sm_event_legal(SMS_DISCOVERING, SME_RCV_ACKNOWLEDGE));
	ck_assert(!sm_event_legal(SMS_DISCOVERING, SME_POLL_LOST));
}
END_TEST

/* ---- several SMs on one emulated fabric ---- */

#define HOST_PORT(h) ((uint64_t)(0x1000 + 4 * (h)) + 1)
#define MAX_SMS 3

struct fab {
	struct fabric topo;
	struct emu *e;
	struct event_base *base;
	struct sm *sm[MAX_SMS];
	char state[MAX_SMS][64];
	int drop_acks[MAX_SMS];		/* ACKNOWLEDGEs still to lose, -1 all */
	int (*real_send[MAX_SMS])(void *, const uint8_t *, size_t, const struct mad_addr *);
	void *real_ctx[MAX_SMS];
};

static struct fab *the_fab;	/* for the send wrappers */

static void setup_fab(struct fab *F)
{
	memset(F, 0, sizeof(*F));
	F->e = emu_tree_new(&F->topo, 7);
	F->base = event_base_new();
	ck_assert_ptr_nonnull(F->base);
	the_fab = F;
	log_set_level(getenv("SMSTATE_DEBUG") ? LOG_INFO : LOG_ERROR);
}

static struct sm *new_sm(struct fab *F, int i, int priority)
{
	struct sm *sm = calloc(1, sizeof(*sm));
	ck_assert_ptr_nonnull(sm);
	config_defaults(&sm->cfg);
	sm->cfg.mad_timeout_ms = 20;
	sm->cfg.mad_retries = 2;
	sm->cfg.sm_priority = priority;
	sm->cfg.sminfo_poll_ms = 100;
	sm->cfg.sminfo_poll_retries = 2;
	sm->cfg.sweep_interval_s = 0;	/* light sweeps by hand */
	snprintf(F->state[i], sizeof(F->state[i]), "/tmp/ibsmd-smstate.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(F->state[i]));
	snprintf(sm->cfg.state_dir, sizeof(sm->cfg.state_dir), "%s", F->state[i]);
	sm->log_level_override = -1;
	F->sm[i] = sm;
	return sm;
}

static int lossy_send(void *ctx, const uint8_t *mad, size_t len,
		      const struct mad_addr *to)
{
	struct fab *F = the_fab;
	for (int i = 0; i < MAX_SMS; i++) {
		if (!F->sm[i] || F->real_ctx[i] != ctx)
			continue;
		if (F->drop_acks[i] && smp_attr(mad) == IB_ATTR_SMINFO &&
		    smp_method(mad) == IB_MAD_METHOD_SET &&
		    smp_attr_mod(mad) == SMA_ACKNOWLEDGE) {
			if (F->drop_acks[i] > 0)
				F->drop_acks[i]--;
			return 0;	/* lost on the wire */
		}
		return F->real_send[i](ctx, mad, len, to);
	}
	return -1;
}

static void start_sm(struct fab *F, int i, int host)
{
	char err[256] = "";
	struct sm *sm = F->sm[i];
	sm->cfg.port_guid = HOST_PORT(host);
	ck_assert_msg(sm_init(sm, F->base, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(sm_start_emulated(sm, F->e, err, sizeof(err)) == 0, "%s", err);
	F->real_send[i] = sm->tr.send;
	F->real_ctx[i] = sm->tr.ctx;
	sm->tr.send = lossy_send;
}

/* SIGKILL: the SM's port goes silent, nothing is said to anyone. */
static void kill_sm(struct fab *F, int i)
{
	sm_shutdown(F->sm[i]);
	free(F->sm[i]);
	F->sm[i] = NULL;
}

static void teardown_fab(struct fab *F)
{
	for (int i = 0; i < MAX_SMS; i++) {
		if (F->sm[i]) {
			sm_shutdown(F->sm[i]);
			free(F->sm[i]);
		}
		if (F->state[i][0]) {
			char cmd[128];
			snprintf(cmd, sizeof(cmd), "rm -rf %s", F->state[i]);
			ck_assert_int_eq(system(cmd), 0);
		}
	}
	emu_free(F->e);
	event_base_free(F->base);
	fabric_free(&F->topo);
}

static void run_ms(struct fab *F, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
	event_base_loopexit(F->base, &tv);
	event_base_dispatch(F->base);
}

/* Runs the loop until cond holds (checked every 10 ms) or ms pass. */
static int run_until(struct fab *F, int (*cond)(struct fab *), int ms)
{
	for (int t = 0; t < ms; t += 10) {
		if (cond(F))
			return 1;
		run_ms(F, 10);
	}
	return cond(F);
}

static int settled(const struct sm *sm)
{
	return sm && (sm->sw.activity == SM_IDLE) && !sm->sw.heavy_wanted && !election_status(sm)->ho_guid;
}

static int masters(const struct fab *F)
{
	int n = 0;
	for (int i = 0; i < MAX_SMS; i++)
		if (F->sm[i] && F->sm[i]->state == SMS_MASTER)
			n++;
	return n;
}

static int who;	/* the SM a condition is about */

static int is_master_up(struct fab *F)
{
	struct sm *sm = F->sm[who];
	return sm->state == SMS_MASTER && settled(sm) && sm->sweep.last.valid &&
	       sm->sweep.heavy_sweeps > 0;
}

static int is_standby(struct fab *F)
{
	return F->sm[who]->state == SMS_STANDBY;
}

static int one_master_rest_standby(struct fab *F)
{
	int m = 0, s = 0, n = 0;
	for (int i = 0; i < MAX_SMS; i++) {
		if (!F->sm[i])
			continue;
		n++;
		if (F->sm[i]->state == SMS_MASTER && settled(F->sm[i]) &&
		    F->sm[i]->sweep.last.valid && !election_status(F->sm[i])->waiting_handover)
			m++;
		else if (F->sm[i]->state == SMS_STANDBY)
			s++;
	}
	return m == 1 && m + s == n;
}

/*
 * Runs the fabric as the daemons would, light sweeps every 200 ms on the
 * masters, until one master and the rest STANDBY hold for 300 ms.
 */
static int settle(struct fab *F, int ms)
{
	int stable = 0;
	for (int t = 0; t < ms; t += 50) {
		if (t % 200 == 0)
			for (int i = 0; i < MAX_SMS; i++)
				if (F->sm[i] && F->sm[i]->state == SMS_MASTER)
					sweeper_request_light(F->sm[i]);
		run_ms(F, 50);
		stable = one_master_rest_standby(F) ? stable + 50 : 0;
		if (stable >= 300)
			return 1;
	}
	return 0;
}

/* LIDs and LFT entries as the devices hold them (not the SM LIDs). */
static char *routes_and_lids(const struct fab *F)
{
	return emu_device_state(F->e, &F->topo, 0);
}

/* Every CA port's SM LID is the LID of sm's port. */
static void assert_smlid(const struct fab *F, const struct sm *sm)
{
	int lid = emu_port_lid(F->e, sm->cfg.port_guid, 0);
	ck_assert_int_gt(lid, 0);
	for (int h = 0; h < 12; h++) {
		if (emu_port_state(F->e, HOST_PORT(h), 0) != PORT_ACTIVE)
			continue;
		ck_assert_int_eq(emu_port_smlid(F->e, HOST_PORT(h), 0), lid);
	}
}

/* A: priority 5 on H0, up and MASTER. */
static void first_master(struct fab *F, int prio)
{
	new_sm(F, 0, prio);
	start_sm(F, 0, 0);
	who = 0;
	ck_assert_msg(run_until(F, is_master_up, 5000), "A never became MASTER");
	ck_assert_int_eq(emu_violations(F->e), 0);
}

START_TEST(t_lower_newcomer_stays_standby)
{
	struct fab F;
	setup_fab(&F);
	first_master(&F, 10);
	char *before = routes_and_lids(&F);
	new_sm(&F, 1, 5);
	start_sm(&F, 1, 7);
	ck_assert(settle(&F, 3000));
	uint64_t sets = txn_get_stats(F.sm[1]->txn)->sets;
	ck_assert_int_eq(F.sm[1]->state, SMS_STANDBY);
	ck_assert_int_eq(F.sm[0]->state, SMS_MASTER);
	/* a standby writes nothing to any device */
	ck_assert_uint_eq(txn_get_stats(F.sm[1]->txn)->sets, sets);
	ck_assert_uint_eq(sets, 0);
	ck_assert_uint_eq(election_status(F.sm[0])->smc.handovers_sent, 0);
	/* the hook's master_changed: the newcomer STANDBY behind the master */
	assert_event_var(F.sm[1], "master_changed", "IBSM_STATE", "STANDBY");
	assert_event_guid(F.sm[1], "master_changed", "IBSM_MASTER_GUID", F.sm[0]->tr.port_guid);
	assert_event_var(F.sm[0], "master_changed", "IBSM_STATE", "MASTER");
	assert_event_guid(F.sm[0], "master_changed", "IBSM_MASTER_GUID", F.sm[0]->tr.port_guid);
	/* ActCount: the master's advances, and the standby sees it */
	uint32_t a0 = election_status(F.sm[1])->master_act_count;
	sweeper_request_light(F.sm[0]);
	run_ms(&F, 300);
	ck_assert_uint_gt(election_status(F.sm[1])->master_act_count, a0);
	char *after = routes_and_lids(&F);
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	teardown_fab(&F);
}
END_TEST

START_TEST(t_equal_priority_lower_guid_wins)
{
	struct fab F;
	setup_fab(&F);
	/* H7's port GUID is above H0's: H0 keeps the subnet */
	first_master(&F, 5);
	new_sm(&F, 1, 5);
	start_sm(&F, 1, 7);
	ck_assert(settle(&F, 3000));
	ck_assert_int_eq(F.sm[0]->state, SMS_MASTER);
	teardown_fab(&F);

	/* the other way round: the lower GUID comes second and takes over */
	setup_fab(&F);
	new_sm(&F, 0, 5);
	start_sm(&F, 0, 7);
	who = 0;
	ck_assert(run_until(&F, is_master_up, 5000));
	new_sm(&F, 1, 5);
	start_sm(&F, 1, 0);
	ck_assert(settle(&F, 5000));
	ck_assert_int_eq(F.sm[1]->state, SMS_MASTER);
	teardown_fab(&F);
}
END_TEST

/* The higher SM starts second: HANDOVER, ACKNOWLEDGE, nothing rewritten. */
static void handover_case(int drop_acks)
{
	struct fab F;
	setup_fab(&F);
	first_master(&F, 5);
	char *before = routes_and_lids(&F);
	new_sm(&F, 1, 10);
	F.drop_acks[1] = drop_acks;
	start_sm(&F, 1, 7);
	/* trap 144, or the master's next light sweep, finds it STANDBY */
	ck_assert_msg(settle(&F, 8000),
		      "A %s activity %d, B %s activity %d", sm_state_name(F.sm[0]->state),
		      F.sm[0]->sw.activity, sm_state_name(F.sm[1]->state), F.sm[1]->sw.activity);
	struct sm *a = F.sm[0], *b = F.sm[1];
	ck_assert_int_eq(b->state, SMS_MASTER);
	ck_assert_int_eq(a->state, SMS_STANDBY);
	ck_assert_uint_eq(election_status(a)->master_guid, b->tr.port_guid);
	ck_assert_uint_ge(election_status(a)->smc.handovers_sent, 1);
	ck_assert_uint_eq(election_status(b)->smc.handovers_received, election_status(a)->smc.handovers_sent);
	ck_assert_uint_eq(election_status(a)->smc.handovers_done, 1);
	if (drop_acks >= 0)
		ck_assert_uint_eq(election_status(a)->smc.acks_received, 1);
	else
		ck_assert_uint_eq(election_status(a)->smc.acks_received, 0);
	if (drop_acks > 0)	/* the lost one was sent again */
		ck_assert_uint_gt(txn_get_stats(b->txn)->all.retries, 0);
	/*
	 * the new master changed no LID and no route, and wrote nothing that
	 * was right: no LFT block, no P_Key table, no SwitchInfo; PortInfo
	 * only where the SM LID changes, on the 18 end ports
	 */
	ck_assert_uint_eq(b->sweep.last.prog.lft_blocks, 0);
	ck_assert_uint_eq(b->sweep.last.prog.pkey_sets, 0);
	ck_assert_uint_eq(b->sweep.last.prog.switchinfo_sets, 0);
	ck_assert_uint_eq(b->sweep.last.prog.portinfo_sets, 18);
	char *after = routes_and_lids(&F);
	ck_assert_str_eq(before, after);
	assert_smlid(&F, b);
	/* once: more sweeps change nothing */
	uint32_t heavy_a = a->sweep.heavy_sweeps;
	ck_assert(settle(&F, 1000));
	ck_assert_int_eq(b->state, SMS_MASTER);
	ck_assert_uint_eq(a->sweep.heavy_sweeps, heavy_a);
	ck_assert_uint_eq(election_status(b)->smc.handovers_sent, 0);
	ck_assert_int_eq(emu_violations(F.e), 0);
	free(before);
	free(after);
	teardown_fab(&F);
}

START_TEST(t_handover_acknowledged)
{
	handover_case(0);
}
END_TEST

START_TEST(t_handover_ack_lost_once)
{
	handover_case(1);
}
END_TEST

START_TEST(t_handover_never_acknowledged)
{
	/* as OpenSM: the old master sees its successor MASTER and stands by */
	handover_case(-1);
}
END_TEST

START_TEST(t_failover_keeps_everything)
{
	struct fab F;
	setup_fab(&F);
	first_master(&F, 10);
	new_sm(&F, 1, 5);
	start_sm(&F, 1, 7);
	who = 1;
	ck_assert(run_until(&F, is_standby, 3000));
	run_ms(&F, 250);
	char *before = routes_and_lids(&F);
	kill_sm(&F, 0);
	who = 1;
	/* (poll_retries + 1) * poll_ms, plus the sweep */
	ck_assert_msg(run_until(&F, is_master_up, 300 + 1000), "no takeover");
	struct sm *b = F.sm[1];
	ck_assert_uint_eq(b->sweep.last.prog.lft_blocks, 0);
	ck_assert_uint_eq(b->sweep.last.prog.pkey_sets, 0);
	ck_assert_uint_eq(b->sweep.last.prog.portinfo_sets, 18);
	char *after = routes_and_lids(&F);
	/* the dead SM's port stays (SIGKILL stops the process, not the HCA) */
	ck_assert_str_eq(before, after);
	/* and a lost link is repaired by the new master */
	ck_assert_int_eq(emu_link_down(F.e, 0x100, 7), 0);
	run_ms(&F, 100);
	ck_assert(run_until(&F, is_master_up, 3000));
	ck_assert_uint_gt(b->sweep.heavy_sweeps, 1);
	for (uint32_t lid = 1; lid <= (uint32_t)b->sub.lft.max_lid; lid++) {
		int p = emu_lft_entry(F.e, 0x100, lid);
		ck_assert_int_ne(p, 7);
	}
	free(before);
	free(after);
	teardown_fab(&F);
}
END_TEST

START_TEST(t_three_sms)
{
	struct fab F;
	setup_fab(&F);
	first_master(&F, 5);
	new_sm(&F, 1, 10);
	start_sm(&F, 1, 4);
	ck_assert(settle(&F, 8000));
	ck_assert_int_eq(F.sm[1]->state, SMS_MASTER);
	new_sm(&F, 2, 15);
	start_sm(&F, 2, 9);
	ck_assert(settle(&F, 8000));
	ck_assert_int_eq(F.sm[2]->state, SMS_MASTER);
	ck_assert_int_eq(masters(&F), 1);
	/* the top one dies: the next one up takes over, the lowest follows it */
	kill_sm(&F, 2);
	ck_assert_msg(settle(&F, 5000), "A %s B %s",
		      sm_state_name(F.sm[0]->state), sm_state_name(F.sm[1]->state));
	ck_assert_int_eq(F.sm[1]->state, SMS_MASTER);
	ck_assert_int_eq(F.sm[0]->state, SMS_STANDBY);
	ck_assert_uint_eq(election_status(F.sm[0])->master_guid, F.sm[1]->tr.port_guid);
	ck_assert_int_eq(emu_violations(F.e), 0);
	teardown_fab(&F);
}
END_TEST

/* ---- a master of our own making, to send SMInfo Sets ---- */

struct rawsm {
	struct mad_transport t;
	uint8_t last[MAD_SIZE];
	int got;
	int polled;		/* SMInfo Gets that reached it */
	/* answering: an SM in STANDBY at priority answer_prio that refuses HANDOVER */
	int answer_prio;	/* 0: answers nothing */
	int answer_state;	/* the state it answers, 0: STANDBY */
	uint64_t answer_key;	/* the SM_Key it answers */
	int handovers;		/* HANDOVERs it refused */
	int silent_handover;	/* HANDOVER unanswered: the master waits */
};

/* The raw SM's answer to an SMInfo request, back along its way. */
static void raw_answer(struct rawsm *r, const uint8_t *req, const struct mad_addr *from,
		       int status)
{
	uint8_t mad[MAD_SIZE];
	memcpy(mad, req, MAD_SIZE);
	struct smp_sminfo me = { .guid = r->t.port_guid, .priority = (uint8_t)r->answer_prio,
				 .state = (uint8_t)(r->answer_state ? r->answer_state : SMS_STANDBY),
				 .sm_key = r->answer_key };
	smp_encode_sminfo(smp_data(mad), &me);
	smp_make_response(mad, status);
	struct mad_addr to = *from;
	if (smp_class(mad) == IB_SMI_DIRECT_CLASS)
		to.lid = 0xffff;
	ck_assert_int_eq(r->t.send(r->t.ctx, mad, MAD_SIZE, &to), 0);
}

static void raw_rx(void *arg, const uint8_t *mad, size_t len,
		   const struct mad_addr *from, int status)
{
	struct rawsm *r = arg;
	(void)from;
	if (!status && len >= MAD_SIZE && smp_method(mad) == IB_MAD_METHOD_GET &&
	    smp_attr(mad) == IB_ATTR_SMINFO) {
		r->polled++;
		if (r->answer_prio)
			raw_answer(r, mad, from, 0);
	}
	if (!status && len >= MAD_SIZE && smp_method(mad) == IB_MAD_METHOD_SET &&
	    smp_attr(mad) == IB_ATTR_SMINFO && r->answer_prio) {
		r->handovers += smp_attr_mod(mad) == SMA_HANDOVER;
		if (!(r->silent_handover && smp_attr_mod(mad) == SMA_HANDOVER))
			raw_answer(r, mad, from, IB_MAD_STS_INV_ATTR_VALUE);
	}
	if (status || len < MAD_SIZE || !(mad[3] & IB_MAD_RESPONSE))
		return;
	memcpy(r->last, mad, MAD_SIZE);
	r->got++;
}

/* Sends mad carrying SMInfo s from the raw SM; waits for the answer (r->last). */
static void raw_exchange(struct fab *F, struct rawsm *r, uint8_t *mad,
			 const struct mad_addr *a, const struct smp_sminfo *s)
{
	mad_set_field64(mad, 0, IB_MAD_TRID_F, 0x1234 + (uint64_t)r->got);
	smp_encode_sminfo(smp_data(mad), s);
	int got = r->got;
	ck_assert_int_eq(r->t.send(r->t.ctx, mad, MAD_SIZE, a), 0);
	for (int t = 0; t < 100 && r->got == got; t++)
		run_ms(F, 10);
	ck_assert_int_gt(r->got, got);
}

/* An SMInfo Set by LID, or by directed route when path is given. */
static int raw_set_by(struct fab *F, struct rawsm *r, uint32_t to_lid,
		      const uint8_t *path, int hops, uint32_t mod, int as_state,
		      uint64_t key)
{
	uint8_t mad[MAD_SIZE];
	struct mad_addr a;
	memset(&a, 0, sizeof(a));
	a.lid = to_lid;
	if (path) {
		smp_init_dr(mad, IB_MAD_METHOD_SET, IB_ATTR_SMINFO, mod, path, hops);
		smp_dr_address(&a);
	} else {
		smp_init_lid(mad, IB_MAD_METHOD_SET, IB_ATTR_SMINFO, mod);
	}
	struct smp_sminfo s = { .guid = r->t.port_guid, .sm_key = key,
				.priority = 15, .state = (uint8_t)as_state };
	raw_exchange(F, r, mad, &a, &s);
	return smp_status(r->last);
}

static int raw_set(struct fab *F, struct rawsm *r, uint32_t to_lid, uint32_t mod,
		   int as_state, uint64_t key)
{
	return raw_set_by(F, r, to_lid, NULL, 0, mod, as_state, key);
}

/*
 * An SMInfo Get by LID from the raw SM; its SMInfo carries proof (0:
 * none, as OpenSM's and a host's).  Returns the SM_Key answered.
 */
static uint64_t raw_get_key(struct fab *F, struct rawsm *r, uint32_t to_lid, uint64_t proof)
{
	uint8_t mad[MAD_SIZE];
	struct mad_addr a;
	memset(&a, 0, sizeof(a));
	a.lid = to_lid;
	smp_init_lid(mad, IB_MAD_METHOD_GET, IB_ATTR_SMINFO, 0);
	struct smp_sminfo s = { .guid = r->t.port_guid, .sm_key = proof };
	raw_exchange(F, r, mad, &a, &s);
	struct smp_sminfo ans;
	smp_decode_sminfo(smp_data(r->last), &ans);
	ck_assert_int_eq(smp_status(r->last), 0);
	return ans.sm_key;
}

#define OUR_KEY 0x00005ec7e75ec7e7ULL

/* The switch port that faces H10, from A's model. */
static void port_facing(struct sm *a, uint64_t *sw_guid, int *num)
{
	const struct fabric *f = &a->sub.model->f;
	for (uint32_t i = 0; i < f->n_ports; i++)
		if (f->ports[i].guid == HOST_PORT(10) && fabric_is_endport(f, i)) {
			uint32_t q = f->ports[i].remote;
			ck_assert_uint_ne(q, FAB_NONE);
			*sw_guid = f->nodes[f->ports[q].node].guid;
			*num = f->ports[q].num;
			return;
		}
	ck_abort_msg("H10 is not in the model");
}

/*
 * A master holding OUR_KEY on H0, the raw SM on H10 answering SMInfo in
 * state at priority prio (0: not at all) with key.
 */
static struct sm *keyed_master(struct fab *F, struct rawsm *r, int rogue_mode,
			       int prio, int state, uint64_t key, uint64_t *sw, int *num)
{
	char err[256];
	setup_fab(F);
	struct sm *a = new_sm(F, 0, 5);
	a->cfg.sm_key = OUR_KEY;
	a->cfg.sm_rogue = rogue_mode;
	start_sm(F, 0, 0);
	who = 0;
	ck_assert_msg(run_until(F, is_master_up, 5000), "A never became MASTER");
	if (sw)
		port_facing(a, sw, num);
	memset(r, 0, sizeof(*r));
	r->answer_prio = prio;
	r->answer_state = state;
	r->answer_key = key;
	ck_assert_msg(emu_attach(F->e, F->base, HOST_PORT(10), &r->t, raw_rx, r, err,
				 sizeof(err)) == 0, "%s", err);
	run_ms(F, 500);	/* whatever its arrival started is over */
	return a;
}

/*
 * IBA vol. 1 §14.4.1: SubnGet(SMInfo) gets the SM_Key only when the
 * requester is entitled to it.  A host's Get gets 0; an ibsmd's Get with
 * its proof gets the key; an SM that sends no proof (as OpenSM) is asked
 * for its SMInfo first and gets the key when it holds it.
 */
START_TEST(t_sminfo_key_disclosure)
{
	struct fab F;
	struct rawsm r;
	struct sm *a = keyed_master(&F, &r, ROGUE_REPORT, 1, SMS_STANDBY, OUR_KEY, NULL, NULL);
	uint32_t alid = (uint32_t)emu_port_lid(F.e, HOST_PORT(0), 0);
	/* an SM with our key that sends no proof: asked back, then told */
	int polled = r.polled;
	ck_assert_uint_eq(raw_get_key(&F, &r, alid, 0), OUR_KEY);
	ck_assert_int_eq(r.polled, polled + 1);
	/* a host (answers no SMInfo): 0 */
	r.answer_prio = 0;
	r.answer_key = 0;
	ck_assert_uint_eq(raw_get_key(&F, &r, alid, 0), 0);
	/* a proof for another port, or of another key: 0, and not asked again */
	polled = r.polled;
	ck_assert_uint_eq(raw_get_key(&F, &r, alid, smkey_proof(OUR_KEY, r.t.port_guid, 0x99)), 0);
	ck_assert_uint_eq(raw_get_key(&F, &r, alid, smkey_proof(0xbad, r.t.port_guid,
								  a->tr.port_guid)), 0);
	ck_assert_int_eq(r.polled, polled);
	/* the proof an ibsmd sends: the key */
	ck_assert_uint_eq(raw_get_key(&F, &r, alid, smkey_proof(OUR_KEY, r.t.port_guid,
								  a->tr.port_guid)), OUR_KEY);
	ck_assert_int_eq(a->state, SMS_MASTER);
	r.t.close(r.t.ctx);
	teardown_fab(&F);
}
END_TEST

/*
 * A port that answers SMInfo as MASTER at priority 15 with another
 * SM_Key: never obeyed -- A stays MASTER, writes nothing for it -- and,
 * under sm.rogue: isolate, the switch port facing it is disabled.
 */
static void rogue_master(int mode)
{
	struct fab F;
	struct rawsm r;
	uint64_t sw;
	int num;
	struct sm *a = keyed_master(&F, &r, mode, 15, SMS_MASTER, 0xbad, &sw, &num);
	uint64_t heavy = a->sweep.heavy_sweeps;
	sweeper_request_heavy(a, "a new SM");
	run_ms(&F, 600);
	ck_assert_uint_gt(a->sweep.heavy_sweeps, heavy);
	ck_assert_int_eq(a->state, SMS_MASTER);
	ck_assert_int_gt(r.polled, 0);
	ck_assert_uint_eq(rogues_count(election_rogues(a)), 1);
	ck_assert_uint_ge(election_status(a)->smc.key_mismatches, 1);
	ck_assert_uint_eq(election_status(a)->key_mismatch_key, 0xbad);
	if (mode == ROGUE_ISOLATE) {
		ck_assert_uint_eq(rogues_isolations(election_rogues(a)), 1);
		ck_assert_int_eq(emu_port_phys_state(F.e, sw, num), 3 /* Disabled */);
	} else {
		ck_assert_uint_eq(rogues_isolations(election_rogues(a)), 0);
		ck_assert_int_eq(emu_port_phys_state(F.e, sw, num), PHYS_LINKUP);
	}
	/* light sweeps see it again: still MASTER, no heavy sweep for it */
	heavy = a->sweep.heavy_sweeps;
	for (int i = 0; i < 3; i++) {
		sweeper_request_light(a);
		run_ms(&F, 200);
	}
	ck_assert_int_eq(a->state, SMS_MASTER);
	if (mode == ROGUE_REPORT)
		ck_assert_uint_eq(a->sweep.heavy_sweeps, heavy);
	json_t *o = json_object();
	election_to_ctl(a, o);
	json_t *rs = json_object_get(o, "rogue_sms");
	ck_assert_int_eq((int)json_array_size(rs), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(rs, 0), "sm_key")),
			 "0x0000000000000bad");
	json_decref(o);
	/* the hook's rogue_sm, once however often it answered */
	assert_event_guid(a, "rogue_sm", "IBSM_NODE_GUID", r.t.port_guid);
	char *why = event_var(a, "rogue_sm", "IBSM_REASON");
	ck_assert_msg(strstr(why, "SM_Key 0x0000000000000bad not ours") &&
		      strstr(why, mode == ROGUE_ISOLATE ? "isolate" : "report"), "%s", why);
	free(why);
	o = evhook_to_ctl(a->hook);
	size_t i, n = 0;
	json_t *e;
	json_array_foreach(json_object_get(o, "recent"), i, e)
		n += !strcmp(json_string_value(json_object_get(e, "event")), "rogue_sm");
	ck_assert_uint_eq(n, 1);
	json_decref(o);
	ck_assert_int_eq(emu_violations(F.e), 0);
	r.t.close(r.t.ctx);
	teardown_fab(&F);
}

START_TEST(t_rogue_master_cut_off)
{
	rogue_master(ROGUE_ISOLATE);
}
END_TEST

START_TEST(t_rogue_master_reported)
{
	rogue_master(ROGUE_REPORT);
}
END_TEST

START_TEST(t_disable_standby_and_refusals)
{
	struct fab F;
	setup_fab(&F);
	first_master(&F, 10);
	new_sm(&F, 1, 5);
	start_sm(&F, 1, 7);
	who = 1;
	ck_assert(run_until(&F, is_standby, 3000));
	struct sm *b = F.sm[1];
	char err[256];
	struct rawsm r;
	memset(&r, 0, sizeof(r));
	ck_assert_msg(emu_attach(F.e, F.base, HOST_PORT(10), &r.t, raw_rx, &r, err,
				 sizeof(err)) == 0, "%s", err);
	uint32_t blid = (uint32_t)emu_port_lid(F.e, HOST_PORT(7), 0);
	/* only a master may DISABLE; a wrong SM_Key is refused and reported */
	ck_assert_int_eq(raw_set(&F, &r, blid, SMA_DISABLE, SMS_STANDBY, 0),
			 IB_MAD_STS_INV_ATTR_VALUE);
	ck_assert_int_eq(b->state, SMS_STANDBY);
	ck_assert_int_eq(raw_set(&F, &r, blid, SMA_DISABLE, SMS_MASTER, 0x77),
			 IB_MAD_STS_INV_ATTR_VALUE);
	ck_assert_uint_eq(election_status(b)->smc.key_mismatches, 1);
	ck_assert_uint_eq(election_status(b)->key_mismatch_key, 0x77);
	ck_assert_int_eq(b->state, SMS_STANDBY);
	/* an unknown modifier */
	ck_assert_int_eq(raw_set(&F, &r, blid, 9, SMS_MASTER, 0),
			 IB_MAD_STS_INV_ATTR_VALUE);
	/* DISABLE: NOTACTIVE, no more polls */
	ck_assert_int_eq(raw_set(&F, &r, blid, SMA_DISABLE, SMS_MASTER, 0), 0);
	ck_assert_int_eq(b->state, SMS_NOTACTIVE);
	uint64_t sent = txn_get_stats(b->txn)->all.sent;
	run_ms(&F, 400);
	ck_assert_uint_eq(txn_get_stats(b->txn)->all.sent, sent);
	/* NOTACTIVE takes STANDBY only */
	ck_assert_int_eq(raw_set(&F, &r, blid, SMA_HANDOVER, SMS_MASTER, 0),
			 IB_MAD_STS_INV_ATTR_VALUE);
	ck_assert_int_eq(b->state, SMS_NOTACTIVE);
	/*
	 * by directed route, from an SM B has never seen: B goes STANDBY and
	 * polls it back along the reversed return path (H10 -> L3 -> S0 -> L2
	 * -> H7 there, so H7 -> L2 -> S0 -> L3 -> H10 back)
	 */
	static const uint8_t to_b[] = { 0, 1, 7, 3, 2 };
	ck_assert_int_eq(raw_set_by(&F, &r, 0, to_b, 4, SMA_STANDBY, SMS_MASTER, 0), 0);
	ck_assert_int_eq(b->state, SMS_STANDBY);
	ck_assert_uint_eq(election_status(b)->master_guid, r.t.port_guid);
	ck_assert_int_eq(election_status(b)->master_hops, 4);
	run_ms(&F, 150);
	ck_assert_int_gt(r.polled, 0);
	/* an ACKNOWLEDGE nobody asked for is refused by the master */
	uint32_t alid = (uint32_t)emu_port_lid(F.e, HOST_PORT(0), 0);
	ck_assert_int_eq(raw_set(&F, &r, alid, SMA_ACKNOWLEDGE, SMS_STANDBY, 0),
			 IB_MAD_STS_INV_ATTR_VALUE);
	ck_assert_int_eq(F.sm[0]->state, SMS_MASTER);
	r.t.close(r.t.ctx);
	teardown_fab(&F);
}
END_TEST

/*
 * A master at priority 5 on its configured fabric, and a raw SM at 15 on
 * H10 that answers SMInfo as STANDBY and refuses HANDOVER (silent: leaves
 * it unanswered).
 */
static void higher_rawsm(struct fab *F, struct rawsm *r, int silent)
{
	char err[256];
	setup_fab(F);
	first_master(F, 5);
	memset(r, 0, sizeof(*r));
	r->answer_prio = 15;
	r->silent_handover = silent;
	ck_assert_msg(emu_attach(F->e, F->base, HOST_PORT(10), &r->t, raw_rx, r, err,
				 sizeof(err)) == 0, "%s", err);
}

/* A higher SM that refuses HANDOVER: the master keeps the subnet, once. */
START_TEST(t_handover_refused)
{
	struct fab F;
	struct rawsm r;
	higher_rawsm(&F, &r, 0);
	struct sm *a = F.sm[0];
	/* its trap 144 and the light sweeps find it; it refuses */
	for (int k = 0; k < 6; k++) {
		sweeper_request_light(a);
		run_ms(&F, 200);
	}
	ck_assert_int_eq(a->state, SMS_MASTER);
	ck_assert_int_eq(r.handovers, 1);
	ck_assert_uint_eq(election_status(a)->smc.handovers_sent, 1);
	ck_assert_uint_eq(election_status(a)->ho_failed_guid, r.t.port_guid);
	ck_assert(settled(a));
	assert_smlid(&F, a);
	ck_assert_int_eq(emu_violations(F.e), 0);
	r.t.close(r.t.ctx);
	teardown_fab(&F);
}
END_TEST

/*
 * While a master waits for its successor's answer to HANDOVER it is not
 * sweeping: ibsmctl status says "sweeping": "no" and names the successor;
 * with no answer it keeps the subnet.
 */
START_TEST(t_handover_wait_is_not_a_sweep)
{
	struct fab F;
	struct rawsm r;
	higher_rawsm(&F, &r, 1);
	struct sm *a = F.sm[0];
	for (int k = 0; k < 20 && !r.handovers; k++) {
		sweeper_request_light(a);
		run_ms(&F, 50);
	}
	ck_assert_int_ge(r.handovers, 1);
	ck_assert_int_eq(a->sw.activity, SM_HANDOVER_WAIT);
	ck_assert_str_eq(sm_activity_sweep_name(a->sw.activity), "no");
	ck_assert_uint_eq(election_status(a)->ho_guid, r.t.port_guid);
	ck_assert_int_eq(a->state, SMS_MASTER);
	/* a VM command is refused, not queued behind the wait */
	struct vmop_req vq = { .kind = VMOP_DESTROY, .vf = -1 };
	struct vmop_result vr;
	snprintf(vq.name, sizeof(vq.name), "vm1");
	ck_assert_int_lt(vmop_start(a, &vq, NULL, NULL, &vr), 0);
	ck_assert_str_eq(vr.err, "handing the subnet over to another SM");
	/* a sweep asked for meanwhile waits for the answer */
	uint32_t heavy = a->sweep.heavy_sweeps;
	sweeper_request_heavy(a, "test");
	run_ms(&F, 100);
	ck_assert_int_eq(a->sw.activity, SM_HANDOVER_WAIT);
	ck_assert_uint_eq(a->sweep.heavy_sweeps, heavy);
	/* no answer to any HANDOVER: the master keeps the subnet */
	for (int k = 0; k < 100 && election_status(a)->ho_guid; k++)
		run_ms(&F, 100);
	ck_assert_uint_eq(election_status(a)->ho_guid, 0);
	ck_assert_uint_eq(election_status(a)->ho_failed_guid, r.t.port_guid);
	ck_assert_int_eq(a->state, SMS_MASTER);
	ck_assert(settle(&F, 3000));
	ck_assert_uint_gt(a->sweep.heavy_sweeps, heavy);
	r.t.close(r.t.ctx);
	teardown_fab(&F);
}
END_TEST

/* Two fabrics, each with its master, cabled together. */
START_TEST(t_two_masters_meet)
{
	struct fab F;
	setup_fab(&F);
	/* cut the tree in two: {L0, L1, S0} and {L2, L3, S1} */
	ck_assert_int_eq(emu_link_down(F.e, 0x100, 8), 0);
	ck_assert_int_eq(emu_link_down(F.e, 0x101, 8), 0);
	ck_assert_int_eq(emu_link_down(F.e, 0x102, 7), 0);
	ck_assert_int_eq(emu_link_down(F.e, 0x103, 7), 0);
	new_sm(&F, 0, 5);
	start_sm(&F, 0, 0);	/* on L0 */
	new_sm(&F, 1, 10);
	start_sm(&F, 1, 9);	/* on L3 */
	who = 0;
	ck_assert(run_until(&F, is_master_up, 5000));
	who = 1;
	ck_assert(run_until(&F, is_master_up, 5000));
	ck_assert_int_eq(masters(&F), 2);
	/* the merge: traps 128 on both sides */
	ck_assert_int_eq(emu_link_up(F.e, 0x100, 8), 0);
	ck_assert_msg(run_until(&F, one_master_rest_standby, 10000), "A %s%s B %s%s",
		      sm_state_name(F.sm[0]->state), election_status(F.sm[0])->waiting_handover ? " waiting" : "",
		      sm_state_name(F.sm[1]->state), election_status(F.sm[1])->waiting_handover ? " waiting" : "");
	ck_assert_int_eq(F.sm[1]->state, SMS_MASTER);
	ck_assert_int_eq(F.sm[0]->state, SMS_STANDBY);
	ck_assert_uint_eq(election_status(F.sm[0])->smc.handovers_sent, 1);
	ck_assert_uint_eq(election_status(F.sm[1])->smc.handovers_sent, 0);
	/* and it stays so: no flapping over the next sweeps */
	ck_assert(settle(&F, 1000));
	ck_assert_uint_eq(election_status(F.sm[0])->smc.handovers_sent, 1);
	assert_smlid(&F, F.sm[1]);
	teardown_fab(&F);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("smstate");
	TCase *tc = tcase_create("pure");
	tcase_add_test(tc, t_elect_rules);
	tcase_add_test(tc, t_table_legality);
	suite_add_tcase(s, tc);
	tc = tcase_create("emulated");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_lower_newcomer_stays_standby);
	tcase_add_test(tc, t_equal_priority_lower_guid_wins);
	tcase_add_test(tc, t_handover_acknowledged);
	tcase_add_test(tc, t_handover_ack_lost_once);
	tcase_add_test(tc, t_handover_never_acknowledged);
	tcase_add_test(tc, t_failover_keeps_everything);
	tcase_add_test(tc, t_three_sms);
	tcase_add_test(tc, t_disable_standby_and_refusals);
	tcase_add_test(tc, t_sminfo_key_disclosure);
	tcase_add_test(tc, t_rogue_master_cut_off);
	tcase_add_test(tc, t_rogue_master_reported);
	tcase_add_test(tc, t_handover_refused);
	tcase_add_test(tc, t_handover_wait_is_not_a_sweep);
	tcase_add_test(tc, t_two_masters_meet);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
