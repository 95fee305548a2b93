/*
 * The SM's real code (sweep, LIDs, routing, writes, activation) against the
 * in-process emulator: losses, a port that never answers, and the end state
 * read back from the emulated devices, not from the SM's memory.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/socket.h>
#include <sys/un.h>

#include "mad/emu/emu.h"
#include "sm/ctl/control.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/mcast/ipoib.h"
#include "sm/mcast/mcast_sm.h"
#include "sm/base/topo.h"
#include "sm/write/scrub.h"

#include "emu_testlib.h"

struct run {
	EMU_RUN;
	int rc;
};

/*
 * tweak: changes the devices (capabilities, say) before the emulator
 * starts.  The SM (--once; MAD timeout 20 ms: losses cost 20 ms, not 200)
 * is made, not started: bring_up() starts it.
 */
static void setup_run_with(struct run *r, void (*tweak)(struct fabric *))
{
	memset(r, 0, sizeof(*r));
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "smemu",
		     .tweak = tweak, .seed = 42 });
	r->sm = emu_sm_new(r->state, 20);
	emu_sm_once(r->sm, &r->os);
}

static void setup_run(struct run *r)
{
	setup_run_with(r, NULL);
}

static void bring_up(struct run *r)
{
	emu_sm_start(r->sm, r->base, r->e);
	ck_assert_int_eq(event_base_dispatch(r->base), 0);
	r->rc = r->sm->exit_code;
}

/* The device-side end state: every port's state and LID, every LFT entry. */
static char *end_state(const struct run *r)
{
	return emu_device_state(r->e, &r->topo, 1);
}

/* Every linked port Active, every end port with a LID, no more violations. */
static void assert_up_allowing(const struct run *r, uint64_t skip_guid,
			       uint32_t violations)
{
	const struct fabric *f = &r->topo;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		if (nd->guid == skip_guid)
			continue;
		for (int p = 1; p <= nd->nports; p++) {
			const struct fab_port *fp = fabric_portp(f, i, p);
			if (fp->remote == FAB_NONE ||
			    f->nodes[f->ports[fp->remote].node].guid == skip_guid)
				continue;
			ck_assert_msg(emu_port_state(r->e, nd->guid, p) == PORT_ACTIVE,
				      "%s[%d] is in state %d", nd->desc, p,
				      emu_port_state(r->e, nd->guid, p));
			if (nd->type != FAB_SWITCH)
				ck_assert_int_gt(emu_port_lid(r->e, nd->guid, p), 0);
		}
		if (nd->type == FAB_SWITCH)
			ck_assert_int_gt(emu_port_lid(r->e, nd->guid, 0), 0);
	}
	ck_assert_msg(emu_violations(r->e) == violations, "violation: %s",
		      emu_violations(r->e) > violations ?
		      emu_violation(r->e, violations) : "(fewer)");
}

static void assert_up(const struct run *r, uint64_t skip_guid)
{
	assert_up_allowing(r, skip_guid, 0);
}

START_TEST(t_clean_bringup)
{
	struct run r;
	setup_run(&r);
	bring_up(&r);
	ck_assert_int_eq(r.rc, 0);
	assert_up(&r, 0);
	const struct txn_stats *st = txn_get_stats(r.sm->txn);
	ck_assert_uint_eq(st->all.timeouts, 0);
	ck_assert_uint_eq(r.sm->sweep.last.unresponsive, 0);
	ck_assert_uint_eq(r.sm->sweep.last.switches, 6);
	ck_assert_uint_eq(r.sm->sweep.last.cas, 12);
	emu_run_free(&r.run);
}
END_TEST

/* Switches that come up with LifeTimeValue 5 (ibsim's is 0). */
static void short_lifetime(struct fabric *f)
{
	for (uint32_t i = 0; i < f->n_nodes; i++)
		f->nodes[i].lifetime = 5;
}

/*
 * ports.switch_lifetime goes into every switch's SwitchInfo (OpenSM's
 * packet_life_time), the model keeps what was written; HOQLife goes to
 * switch ports only (ports.hoq_life, leaf_hoq_life), a CA port keeps its own.
 */
START_TEST(t_switch_lifetime_and_hoq)
{
	struct run r;
	setup_run_with(&r, short_lifetime);
	r.sm->cfg.switch_lifetime = 20;
	int ca_hoq = emu_port_hoq_life(r.e, 0x1000, 1);
	ck_assert_int_ne(ca_hoq, r.sm->cfg.hoq_life);
	bring_up(&r);
	ck_assert_int_eq(r.rc, 0);
	assert_up(&r, 0);
	const struct fabric *f = &r.topo;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		if (nd->type != FAB_SWITCH) {
			ck_assert_int_eq(emu_port_hoq_life(r.e, nd->guid, 1), ca_hoq);
			continue;
		}
		ck_assert_int_eq(emu_switch_lifetime(r.e, nd->guid), 20);
		for (int p = 1; p <= nd->nports; p++) {
			const struct fab_port *fp = fabric_portp(f, i, p);
			if (fp->remote == FAB_NONE)
				continue;
			int leaf = f->nodes[f->ports[fp->remote].node].type != FAB_SWITCH;
			ck_assert_int_eq(emu_port_hoq_life(r.e, nd->guid, p),
					 leaf ? r.sm->cfg.leaf_hoq_life : r.sm->cfg.hoq_life);
		}
	}
	const struct fabric *m = &r.sm->sub.model->f;	/* the model: as written */
	for (uint32_t i = 0; i < m->n_nodes; i++)
		if (m->nodes[i].type == FAB_SWITCH)
			ck_assert_uint_eq(m->nodes[i].lifetime, 20);
	emu_run_free(&r.run);
}
END_TEST

START_TEST(t_silent_loss_same_end_state)
{
	struct run a, b;
	setup_run(&a);
	bring_up(&a);
	ck_assert_int_eq(a.rc, 0);
	char *clean = end_state(&a);

	setup_run(&b);
	emu_set_loss(b.e, 10.0);
	bring_up(&b);
	ck_assert_int_eq(b.rc, 0);
	assert_up(&b, 0);
	const struct txn_stats *st = txn_get_stats(b.sm->txn);
	ck_assert_uint_gt(st->all.timeouts, 0);
	ck_assert_uint_gt(st->all.retries, 0);
	char *lossy = end_state(&b);
	ck_assert_str_eq(clean, lossy);
	free(clean);
	free(lossy);
	emu_run_free(&a.run);
	emu_run_free(&b.run);
}
END_TEST

START_TEST(t_dead_port_reported_rest_up)
{
	struct run r;
	setup_run(&r);
	/* host H7 (node GUID 0x101c) stops answering on its only port */
	ck_assert_int_eq(emu_set_dead(r.e, 0x101c, 1, 1), 0);
	bring_up(&r);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_uint_ge(r.sm->sweep.last.unresponsive, 1);
	ck_assert_uint_eq(r.sm->sweep.last.cas, 11);
	assert_up(&r, 0x101c);
	ck_assert_int_eq(emu_port_lid(r.e, 0x101c, 1), 0);
	emu_run_free(&r.run);
}
END_TEST

/*
 * L2's uplink to S1 supports VL0-1 where every other port supports VL0-7.
 * The SM does not read that port (the far end of a fresh switch link; its
 * PortInfo is inferred from L2's other ports), so its first Set asks for
 * too many VLs, is refused, and the SM reads the port and sets both ends
 * of the link again.
 */
static void narrow_l2_uplink(struct fabric *f)
{
	uint32_t l2 = fabric_find_node(f, 0x102);
	ck_assert_uint_ne(l2, FAB_NONE);
	uint32_t pi = fabric_port(f, l2, 8);
	f->ports[pi].vl_cap = 2;
	for (uint32_t i = 0; i < f->n_ports; i++)
		if (i != pi && f->ports[i].num)
			f->ports[i].vl_cap = 4;
}

START_TEST(t_inferred_port_put_right)
{
	struct run r, ref;
	setup_run(&ref);
	bring_up(&ref);
	ck_assert_int_eq(ref.rc, 0);
	setup_run_with(&r, narrow_l2_uplink);
	bring_up(&r);
	ck_assert_int_eq(r.rc, 0);
	/* the one refused Set is the only violation; everything is up */
	assert_up_allowing(&r, 0, 1);
	ck_assert_msg(strstr(emu_violation(r.e, 0), "OperationalVLs 4 above VLCap 2"),
		      "%s", emu_violation(r.e, 0));
	/* both ends of the narrow link run VL0-1, the others VL0-7 */
	ck_assert_int_eq(emu_port_oper_vls(r.e, 0x102, 8), 2);
	ck_assert_int_eq(emu_port_oper_vls(r.e, 0x201, 3), 2);
	ck_assert_int_eq(emu_port_oper_vls(r.e, 0x102, 7), 4);
	ck_assert_int_eq(emu_port_oper_vls(r.e, 0x201, 2), 4);
	/* a PortInfo Get fewer per switch-to-switch link, two Gets more here */
	const struct txn_stats *a = txn_get_stats(ref.sm->txn);
	const struct txn_stats *b = txn_get_stats(r.sm->txn);
	ck_assert_uint_gt(b->all.sent, a->all.sent);
	emu_run_free(&r.run);
	emu_run_free(&ref.run);
}
END_TEST

/*
 * After a reset a port's P_Key table holds the default P_Key alone, so a
 * fresh port needs no write; a port that keeps its table in NVRAM (here
 * with a limited-member key from an earlier configuration) gets one.
 */
START_TEST(t_pkey_written_only_where_needed)
{
	struct run r;
	setup_run(&r);
	/* host H5 (node GUID 0x1014) */
	ck_assert_int_eq(emu_set_pkey_nvram(r.e, 0x1014, 1, 0x0001), 0);
	bring_up(&r);
	ck_assert_int_eq(r.rc, 0);
	assert_up(&r, 0);
	ck_assert_uint_eq(r.sm->sweep.last.prog.pkey_sets, 1);
	const struct fabric *f = &r.topo;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		int p = nd->type == FAB_SWITCH ? 0 : 1;
		ck_assert_msg(emu_port_pkey(r.e, nd->guid, p, 0) == 0xffff,
			      "%s[%d] P_Key[0] 0x%04x", nd->desc, p,
			      emu_port_pkey(r.e, nd->guid, p, 0));
	}
	emu_run_free(&r.run);
}
END_TEST

/* ---- the daemon over several sweeps ---- */

/* A daemon (not --once, no light sweeps) on the tree, after its first heavy sweep. */
static void start_daemon(struct run *r)
{
	setup_run(r);
	r->sm->watch = NULL;	/* the daemon, not --once */
	emu_sm_start(r->sm, r->base, r->e);
	emu_run_sweeps(&r->run, 1);
}

#define MAX_TEST_LID 40

/* Every switch's LFT entries 1..MAX_TEST_LID as the emulated devices hold them. */
static void read_lfts(const struct run *r, int lft[][MAX_TEST_LID + 1])
{
	const struct fabric *f = &r->topo;
	for (uint32_t i = 0; i < f->n_nodes; i++)
		for (uint32_t lid = 1; lid <= MAX_TEST_LID; lid++)
			lft[i][lid] = f->nodes[i].type == FAB_SWITCH ?
				      emu_lft_entry(r->e, f->nodes[i].guid, lid) : -1;
}

/* Does the route from switch node n to lid (by lft) cross node a's port pa? */
static int route_crosses(const struct fabric *f, int lft[][MAX_TEST_LID + 1],
			 uint32_t n, uint32_t lid, uint32_t a, int pa)
{
	uint32_t cut = fabric_port(f, a, (unsigned)pa), far = f->ports[cut].remote;
	for (int hops = 0; hops < 16; hops++) {
		int p = lft[n][lid];
		if (p <= 0 || p > f->nodes[n].nports)
			return 0;
		uint32_t pi = fabric_port(f, n, (unsigned)p);
		if (pi == cut || pi == far)
			return 1;
		uint32_t rp = f->ports[pi].remote;
		if (rp == FAB_NONE || f->nodes[f->ports[rp].node].type != FAB_SWITCH)
			return 0;
		n = f->ports[rp].node;
	}
	ck_abort_msg("route to LID %u loops", lid);
	return 0;
}

/* Every linked port Active but the two ends of node a's port pa. */
static void assert_up_but(const struct run *r, uint32_t a, int pa)
{
	const struct fabric *f = &r->topo;
	uint32_t cut = fabric_port(f, a, (unsigned)pa), far = f->ports[cut].remote;
	for (uint32_t i = 0; i < f->n_nodes; i++)
		for (int p = 1; p <= f->nodes[i].nports; p++) {
			uint32_t pi = fabric_port(f, i, (unsigned)p);
			if (f->ports[pi].remote == FAB_NONE || pi == cut || pi == far)
				continue;
			ck_assert_msg(emu_port_state(r->e, f->nodes[i].guid, p) == PORT_ACTIVE,
				      "%s[%d] is in state %d", f->nodes[i].desc, p,
				      emu_port_state(r->e, f->nodes[i].guid, p));
		}
}

/*
 * The daemon across three sweeps: a leaf-to-spine link goes down (the
 * switches' traps start the sweep) and only the LFT entries whose route
 * crossed it change on the devices; an unchanged heavy sweep then writes
 * nothing and reads no PortInfo of an Active switch-to-switch link's near
 * end; the link comes back and every port is Active again with no
 * violation of the spec.
 */
START_TEST(t_link_lost_repaired)
{
	struct run r;
	static int before[64][MAX_TEST_LID + 1], after[64][MAX_TEST_LID + 1];
	start_daemon(&r);
	assert_up(&r, 0);
	const struct fabric *f = &r.topo;
	ck_assert_uint_le(f->n_nodes, 64);
	ck_assert_uint_le(r.sm->sweep.last.max_lid, MAX_TEST_LID);
	read_lfts(&r, before);

	/* L0[7] - S0[1] goes */
	uint32_t l0 = fabric_find_node(f, 0x100);
	ck_assert_int_eq(emu_link_down(r.e, 0x100, 7), 0);
	emu_run_sweeps(&r.run, 2);
	assert_up_but(&r, l0, 7);
	read_lfts(&r, after);
	int changed = 0, crossing = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		if (f->nodes[i].type != FAB_SWITCH)
			continue;
		for (uint32_t lid = 1; lid <= r.sm->sweep.last.max_lid; lid++) {
			int crossed = route_crosses(f, before, i, lid, l0, 7);
			crossing += crossed;
			if (after[i][lid] == before[i][lid])
				continue;
			changed++;
			ck_assert_msg(crossed, "%s LID %u: %d -> %d, its route did not cross L0[7]",
				      f->nodes[i].desc, lid, before[i][lid], after[i][lid]);
			ck_assert_msg(!route_crosses(f, after, i, lid, l0, 7),
				      "%s LID %u still routed over L0[7]", f->nodes[i].desc, lid);
		}
	}
	ck_assert_int_gt(crossing, 0);
	ck_assert_int_gt(changed, 0);
	ck_assert_uint_gt(r.sm->sweep.last.prog.lft_blocks, 0);
	ck_assert_uint_eq(r.sm->sweep.last.prog.portinfo_sets, 0);

	/* an unchanged heavy sweep: Gets only, one PortInfo per port at most */
	const struct txn_attr_stats *pi_before = NULL;
	uint64_t pis = 0, sets = txn_get_stats(r.sm->txn)->sets;
	for (int k = 0; k < txn_get_stats(r.sm->txn)->n_attrs; k++)
		if (txn_get_stats(r.sm->txn)->attrs[k].attr == 0x0015)
			pi_before = &txn_get_stats(r.sm->txn)->attrs[k];
	ck_assert_ptr_nonnull(pi_before);
	pis = pi_before->c.sent;
	sweeper_request_heavy(r.sm, "test");
	emu_run_sweeps(&r.run, 3);
	ck_assert_uint_eq(txn_get_stats(r.sm->txn)->sets, sets);
	uint32_t sw, ca, ports;
	fabric_counts(f, &sw, &ca, &ports);
	/* the near ends of the 7 Active switch links left were not read */
	ck_assert_uint_le(pi_before->c.sent - pis, ports - 7);

	/* the link comes back: routes from scratch, every port Active */
	ck_assert_int_eq(emu_link_up(r.e, 0x100, 7), 0);
	emu_run_sweeps(&r.run, 4);
	assert_up(&r, 0);
	emu_run_free(&r.run);
}
END_TEST

/*
 * The first heavy sweep after bring-up with nothing changed writes
 * nothing: what bring-up recorded in the device cache (a switch's port-0
 * P_Key among it) stays recorded when the switch's tables are planned
 * (the bench saw every fresh switch's port-0 P_Key block written again).
 */
START_TEST(t_second_sweep_writes_nothing)
{
	struct run r;
	start_daemon(&r);
	assert_up(&r, 0);
	uint64_t sets = txn_get_stats(r.sm->txn)->sets;
	sweeper_request_heavy(r.sm, "test");
	emu_run_sweeps(&r.run, 2);
	ck_assert_msg(txn_get_stats(r.sm->txn)->sets == sets,
		      "%llu Sets in an unchanged heavy sweep (P_Key %u)",
		      (unsigned long long)(txn_get_stats(r.sm->txn)->sets - sets),
		      r.sm->sweep.last.prog.pkey_sets);
	emu_run_free(&r.run);
}
END_TEST

/* ---- ibsmctl verify (sm/ctl/ctlroutes.c): the tables the devices hold ---- */

/* A switch whose LFT Get answers one entry wrong (verify's reads only). */
struct bad_entry {
	uint64_t sw_guid;
	uint32_t lid;
	uint8_t port;
};

static int lft_with_bad_entry(void *ctx, struct emu *e, struct emu_smp *s)
{
	const struct bad_entry *b = ctx;
	if (s->method != 0x01)
		return 0x1c;	/* no Set while the test reads */
	for (uint32_t k = 0; k < 64; k++) {
		int p = emu_lft_entry(e, s->node_guid, s->attr_mod * 64 + k);
		s->data[k] = p < 0 ? 0xff : (uint8_t)p;
	}
	if (s->node_guid == b->sw_guid && s->attr_mod == b->lid / 64)
		s->data[b->lid % 64] = b->port;
	return 0;
}

/* The control-socket request of emu_testlib.h on this test's run. */
#define ctl_request(r, path, line, stop) emu_ctl_request(&(r)->run, path, line, stop)

/* The daemon up, its control socket at path. */
static void start_daemon_ctl(struct run *r, char *path, size_t len)
{
	char err[256] = "";
	start_daemon(r);
	/* no IPoIB broadcast group: the reads counted are the routes' */
	r->sm->cfg.mc_default_ipoib = 0;
	mcast_ipoib_sync(r->sm, 1);
	snprintf(path, len, "%s/ctl.sock", r->state);
	r->sm->ctl = control_open(r->base, path, sm_control, r->sm, err, sizeof(err));
	ck_assert_msg(r->sm->ctl != NULL, "%s", err);
}

START_TEST(t_verify_reads_devices)
{
	struct run r;
	char path[128];
	start_daemon_ctl(&r, path, sizeof(path));

	/* what the switches hold is what the SM wrote: OK */
	uint64_t gets = txn_get_stats(r.sm->txn)->all.sent;
	json_t *rep = ctl_request(&r, path, "{\"cmd\":\"verify\"}\n", 0);
	ck_assert_msg(json_is_true(json_object_get(rep, "ok")), "%s",
		      json_string_value(json_object_get(rep, "error")));
	ck_assert_str_eq(json_string_value(json_object_get(rep, "result")), "OK");
	ck_assert_int_eq(json_integer_value(json_object_get(rep, "switches")), 6);
	ck_assert_int_eq(json_integer_value(json_object_get(rep, "reads_failed")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(rep, "unreachable")), 0);
	/* one SwitchInfo and one LFT block (LIDs < 64) per switch */
	ck_assert_uint_eq(txn_get_stats(r.sm->txn)->all.sent - gets, 12);
	json_decref(rep);

	/* L0 answers the entry of H11's LID as port 0: dropped, named */
	uint32_t h11 = (uint32_t)emu_port_lid(r.e, 0x1000 + 4 * 11, 1);
	struct bad_entry bad = { .sw_guid = 0x100, .lid = h11, .port = 0 };
	ck_assert_int_eq(emu_register_attr(r.e, 0x0019, lft_with_bad_entry, &bad), 0);
	rep = ctl_request(&r, path, "{\"cmd\":\"verify\"}\n", 0);
	ck_assert_str_eq(json_string_value(json_object_get(rep, "result")), "FAILED");
	ck_assert_int_gt(json_integer_value(json_object_get(rep, "drops")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(rep, "entries_differing_from_sm")), 1);
	json_t *f0 = json_array_get(json_object_get(rep, "failures"), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(f0, "lid")), h11);
	ck_assert_str_eq(json_string_value(json_object_get(f0, "failure")), "drop");
	ck_assert_str_eq(json_string_value(json_object_get(f0, "switch")), "L0");
	json_decref(rep);

	/* a sweep running: refused; a verify in flight at shutdown: cancelled, freed */
	r.sm->sw.activity = SM_HEAVY_SWEEP;
	rep = ctl_request(&r, path, "{\"cmd\":\"verify\"}\n", 0);
	ck_assert_str_eq(json_string_value(json_object_get(rep, "error")),
			 "verify: a sweep is running; try again when it is done");
	json_decref(rep);
	r.sm->sw.activity = SM_IDLE;
	emu_set_latency(r.e, 200000, 0);	/* the answers take 200 ms */
	ctl_request(&r, path, "{\"cmd\":\"verify\"}\n", 1);
	ck_assert_ptr_nonnull(r.sm->ctl_verify);
	control_close(r.sm->ctl);
	r.sm->ctl = NULL;
	emu_run_free(&r.run);	/* sm_shutdown cancels the reads; ASan sees the rest */
}
END_TEST

/* MFT answers as the switch holds them, plus port 2 of L0 for MLID 0xC000. */
static int mft_with_extra_port(void *ctx, struct emu *e, struct emu_smp *s)
{
	(void)ctx;
	if (s->method != 0x01)
		return 0x1c;	/* no Set while the test reads */
	for (uint32_t i = 0; i < 32; i++) {
		uint64_t m;
		uint32_t mlid = 0xc000 + (s->attr_mod & 0x1ff) * 32 + i;
		if (emu_mft_entry(e, s->node_guid, mlid, &m) < 0)
			m = 0;
		if (s->node_guid == 0x100 && mlid == 0xc000)
			m |= 1u << 2;
		m >>= 16 * (s->attr_mod >> 28);
		s->data[2 * i] = (uint8_t)(m >> 8);
		s->data[2 * i + 1] = (uint8_t)m;
	}
	return 0;
}

static int mcast_settled(const void *arg)
{
	const struct sm *sm = arg;
	return (sm->sw.activity == SM_IDLE) && !mcast_sm_pending(sm);
}

/* H0 on L0 and H3 on L1 in the IPoIB broadcast group, its MFTs written. */
static struct mc_group *group_of_two(struct run *r)
{
	struct mc_group want = { .qkey = 0x0b1b, .pkey = 0xffff };
	const char *why = NULL;
	mc_ipoib_mgid(0xffff, want.mgid);
	struct mc_group *g = mc_create(&r->sm->mc, &want, &why);
	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(mc_join(&r->sm->mc, g, 0x1000 + 1, MC_JOIN_FULL, 0), 1);
	ck_assert_int_eq(mc_join(&r->sm->mc, g, 0x1000 + 4 * 3 + 1, MC_JOIN_FULL, 0), 1);
	mcast_sm_changed(r->sm);
	ck_assert(emu_run_while(r->base, mcast_settled, r->sm, 5000));
	return g;
}

START_TEST(t_verify_reads_mft)
{
	struct run r;
	char path[128];
	start_daemon_ctl(&r, path, sizeof(path));
	group_of_two(&r);

	json_t *rep = ctl_request(&r, path, "{\"cmd\":\"verify\"}\n", 0);
	const char *text = json_string_value(json_object_get(rep, "text"));
	ck_assert_str_eq(json_string_value(json_object_get(rep, "result")), "OK");
	/* 6 switches of 8 ports: one block, one position each */
	ck_assert_msg(strstr(text, "multicast: 1 groups checked against 6 MFT blocks read, 0 wrong"),
		      "%s", text);
	json_decref(rep);

	/* L0 says it also sends the group's packets to H1: a non-member */
	ck_assert_int_eq(emu_register_attr(r.e, 0x001b, mft_with_extra_port, NULL), 0);
	rep = ctl_request(&r, path, "{\"cmd\":\"verify\"}\n", 0);
	text = json_string_value(json_object_get(rep, "text"));
	ck_assert_str_eq(json_string_value(json_object_get(rep, "result")), "FAILED");
	ck_assert_msg(strstr(text, "L0\" port 2: sent to a non-member end port"), "%s", text);
	json_decref(rep);
	control_close(r.sm->ctl);
	r.sm->ctl = NULL;
	emu_run_free(&r.run);
}
END_TEST

/*
 * A join whose MFT writes are still to come when verify reads the MFTs:
 * the group is being written, not wrong; once written it is judged.
 */
START_TEST(t_verify_mid_update)
{
	struct run r;
	char path[128];
	start_daemon_ctl(&r, path, sizeof(path));
	struct mc_group *g = group_of_two(&r);

	/* H6, on a third leaf, joins; verify asks before the MFT run has written */
	emu_set_latency(r.e, 20000, 0);	/* every answer takes 20 ms */
	ck_assert_int_eq(mc_join(&r.sm->mc, g, 0x1000 + 4 * 6 + 1, MC_JOIN_FULL, 0), 1);
	mcast_sm_changed(r.sm);
	ck_assert(mcast_sm_pending(r.sm));
	json_t *rep = ctl_request(&r, path, "{\"cmd\":\"verify\"}\n", 0);
	const char *text = json_string_value(json_object_get(rep, "text"));
	ck_assert_msg(json_is_true(json_object_get(rep, "ok")), "%s",
		      json_string_value(json_object_get(rep, "error")));
	ck_assert_msg(!strcmp(json_string_value(json_object_get(rep, "result")), "OK"),
		      "verify mid-update: %s", text);
	ck_assert_msg(strstr(text, "multicast: 0 groups checked against 6 MFT blocks read, 0 wrong, 1 being written"),
		      "%s", text);
	json_decref(rep);

	/* written: judged again, H6 reached */
	ck_assert(emu_run_while(r.base, mcast_settled, r.sm, 5000));
	rep = ctl_request(&r, path, "{\"cmd\":\"verify\"}\n", 0);
	text = json_string_value(json_object_get(rep, "text"));
	ck_assert_str_eq(json_string_value(json_object_get(rep, "result")), "OK");
	ck_assert_msg(strstr(text, "multicast: 1 groups checked against 6 MFT blocks read, 0 wrong\n"),
		      "%s", text);
	json_decref(rep);
	control_close(r.sm->ctl);
	r.sm->ctl = NULL;
	emu_run_free(&r.run);
}
END_TEST

/* ---- the light sweeps' read-back (sm/write/scrub.h) ---- */

/*
 * L0's LFT as a host left it: the entry of lid answers port 0 until the
 * SM writes that block again (a Set: counted, and the entry is right again).
 */
struct tampered {
	uint32_t lid;
	int on;
	int sets;		/* Sets of the tampered block */
	uint8_t written;	/* the entry the Set carried */
};

static int lft_tampered(void *ctx, struct emu *e, struct emu_smp *s)
{
	struct tampered *t = ctx;
	int ours = s->node_guid == 0x100 && s->attr_mod == t->lid / 64;
	if (s->method == 0x02) {
		ck_assert_msg(ours, "a Set of another LFT block");
		t->sets++;
		t->written = s->data[t->lid % 64];
		t->on = 0;
		return 0;
	}
	for (uint32_t k = 0; k < 64; k++) {
		int p = emu_lft_entry(e, s->node_guid, s->attr_mod * 64 + k);
		s->data[k] = p < 0 ? 0xff : (uint8_t)p;
	}
	if (ours && t->on)
		s->data[t->lid % 64] = 0;
	return 0;
}

static int sm_idle(const void *arg)
{
	return ((const struct sm *)arg)->sw.activity == SM_IDLE;
}

struct round_wait {
	const struct sm *sm;
	uint64_t before;	/* scrub rounds begun, or heavy sweeps done, before */
};

/* A new scrub round is reading, its light sweep still running. */
static int scrub_reading(const void *arg)
{
	const struct round_wait *w = arg;
	const struct scrub_stats *st = scrub_get_stats(w->sm->sweep.scrub);
	return w->sm->sw.activity == SM_LIGHT_SWEEP && st->rounds > w->before;
}

/* More heavy sweeps done than w->before, and the SM idle. */
static int heavy_done(const void *arg)
{
	const struct round_wait *w = arg;
	return w->sm->sweep.heavy_sweeps > w->before && w->sm->sw.activity == SM_IDLE;
}

/* One light sweep, asked for and run to its end. */
static void light_sweep(struct run *r)
{
	sweeper_request_light(r->sm);
	ck_assert(r->sm->sw.activity == SM_LIGHT_SWEEP);
	ck_assert(emu_run_while(r->base, sm_idle, r->sm, 5000));
}

START_TEST(t_scrub_repairs_and_yields)
{
	struct run r;
	char path[128];
	start_daemon_ctl(&r, path, sizeof(path));
	r.sm->cfg.sweep_scrub_blocks = 4;
	uint32_t lid = (uint32_t)emu_port_lid(r.e, 0x1000 + 4 * 11, 1);
	uint8_t want = (uint8_t)emu_lft_entry(r.e, 0x100, lid);
	struct tampered t = { .lid = lid, .on = 1 };
	ck_assert_int_eq(emu_register_attr(r.e, 0x0019, lft_tampered, &t), 0);

	/* found and written again within ceil(blocks held / 4) light sweeps */
	light_sweep(&r);
	const struct scrub_stats *st = scrub_get_stats(r.sm->sweep.scrub);
	ck_assert_ptr_nonnull(st);
	uint32_t n = (st->held + 3) / 4;
	ck_assert_uint_gt(st->held, 4);
	for (uint32_t i = 1; i < n && !t.sets; i++)
		light_sweep(&r);
	ck_assert_int_eq(t.sets, 1);
	ck_assert_uint_eq(t.written, want);
	ck_assert_uint_eq(st->tampered, 1);
	ck_assert_uint_eq(st->repaired, 1);
	ck_assert(errors_active(&r.sm->errs, SM_ERR_TAMPER));
	/* a whole pass that finds nothing clears the condition */
	uint64_t passes = st->passes;
	while (st->passes < passes + 2)
		light_sweep(&r);
	ck_assert(!errors_active(&r.sm->errs, SM_ERR_TAMPER));
	ck_assert_uint_eq(st->tampered, 1);

	/* a heavy sweep asked for mid-read: the read-back stops at once */
	emu_set_latency(r.e, 2000, 0);
	struct round_wait w = { r.sm, st->rounds };
	uint32_t heavy = r.sm->sweep.heavy_sweeps;
	sweeper_request_light(r.sm);
	ck_assert(emu_run_while(r.base, scrub_reading, &w, 5000));
	uint64_t judged = st->reads + st->read_failed + st->skipped;
	sweeper_request_heavy(r.sm, "test: a trap");
	w.before = heavy;
	ck_assert(emu_run_while(r.base, heavy_done, &w, 5000));
	ck_assert_uint_eq(st->yielded, 1);
	/* the answer that saw the request was the last one judged */
	ck_assert_uint_le(st->reads + st->read_failed + st->skipped - judged, 1);
	ck_assert_uint_eq(r.sm->sweep.heavy_sweeps, heavy + 1);
	control_close(r.sm->ctl);
	r.sm->ctl = NULL;
	emu_run_free(&r.run);
}
END_TEST

static Suite *sm_emu_suite(void)
{
	Suite *s = suite_create("sm_on_emulator");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_clean_bringup);
	tcase_add_test(tc, t_switch_lifetime_and_hoq);
	tcase_add_test(tc, t_silent_loss_same_end_state);
	tcase_add_test(tc, t_dead_port_reported_rest_up);
	tcase_add_test(tc, t_inferred_port_put_right);
	tcase_add_test(tc, t_pkey_written_only_where_needed);
	tcase_add_test(tc, t_link_lost_repaired);
	tcase_add_test(tc, t_second_sweep_writes_nothing);
	tcase_add_test(tc, t_verify_reads_devices);
	tcase_add_test(tc, t_verify_reads_mft);
	tcase_add_test(tc, t_verify_mid_update);
	tcase_add_test(tc, t_scrub_repairs_and_yields);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sm_emu_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
