/*
 * A VM's migrations written in the LFT order, on the emulator: a 3-level
 * fat tree (3 pods of 2 leaves under 2 aggregation switches, 4 top
 * switches) whose leaves hold hypervisors (vSwitch V-<p>-<l>-<i>, its PF
 * and VFs) and a host each.  A VM is created, moved at random across
 * pods and destroyed, under both LID schemes, with the VM on a LID and (every
 * device given the extension) on a vLID.  After every LFT and every
 * secondary-LFT Set the emulator applies (its hook), every switch's
 * entries are read back and followed: no state forwards a LID or a vLID
 * in a loop, and none has a channel-dependency cycle (on the LIDs' tables,
 * every VL as one).  The same moves written as one wave (cfg.lft_unordered:
 * every block at once, as the new tables have it) pass through states
 * that do.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu.h"
#include "mad/xlid.h"
#include "reconfig/migrate.h"
#include "sm/daemon.h"
#include "sm/base/topo.h"
#include "sm/vm/vmops.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "emu_testlib.h"
#include "routing_testlib.h"
#include "vmop_testlib.h"

#define PODS 3
#define LEAVES 2	/* a pod's leaves, and its aggregation switches */
#define TOPS 4
#define HYPS 2		/* hypervisors a leaf */
#define VFS 3
#define MOVES 6

/*
 * T<k> (4 ports: pod p on p+1); A<p>-<a> (4 ports: leaves 1..2, tops
 * T<2a>, T<2a+1> on 3, 4); L<p>-<l> (6 ports: vSwitches 1..2, host 3,
 * A<p>-0, A<p>-1 on 5, 6); V-<p>-<l>-<i> (5 ports: leaf 1, PF 2, VFs
 * 3..5).  CA GUIDs 4 apart.
 */
static char *tree_text(void)
{
	size_t cap = 1 << 17, n = 0;
	char *t = malloc(cap);
	ck_assert_ptr_nonnull(t);
#define PUT(...) (n += (size_t)snprintf(t + n, cap - n, __VA_ARGS__))
	for (int k = 0; k < TOPS; k++) {
		PUT("switchguid=0x%x\nSwitch\t4 \"T%d\"\n", 0x100 + k, k);
		for (int p = 0; p < PODS; p++)
			PUT("[%d]\t\"A%d-%d\"[%d]\n", p + 1, p, k / 2, 3 + k % 2);
		PUT("\n");
	}
	for (int p = 0; p < PODS; p++)
		for (int a = 0; a < LEAVES; a++) {
			PUT("switchguid=0x%x\nSwitch\t4 \"A%d-%d\"\n", 0x200 + p * 8 + a, p, a);
			for (int l = 0; l < LEAVES; l++)
				PUT("[%d]\t\"L%d-%d\"[%d]\n", l + 1, p, l, 5 + a);
			PUT("[3]\t\"T%d\"[%d]\n[4]\t\"T%d\"[%d]\n\n", 2 * a, p + 1, 2 * a + 1, p + 1);
		}
	for (int p = 0; p < PODS; p++)
		for (int l = 0; l < LEAVES; l++) {
			int leaf = p * LEAVES + l;
			PUT("switchguid=0x%x\nSwitch\t6 \"L%d-%d\"\n", 0x300 + leaf, p, l);
			for (int i = 0; i < HYPS; i++)
				PUT("[%d]\t\"V-%d-%d-%d\"[1]\n", i + 1, p, l, i);
			PUT("[3]\t\"H%d\"[1]\n[5]\t\"A%d-0\"[%d]\n[6]\t\"A%d-1\"[%d]\n\n",
			    leaf, p, l + 1, p, l + 1);
			PUT("caguid=0x%x\nHca\t1 \"H%d\"\n[1]\t\"L%d-%d\"[3]\n\n",
			    0x1000 + 4 * leaf, leaf, p, l);
			for (int i = 0; i < HYPS; i++) {
				int h = leaf * HYPS + i;
				PUT("switchguid=0x%x\nSwitch\t5 \"V-%d-%d-%d\"\n", 0x400 + h, p, l, i);
				PUT("[1]\t\"L%d-%d\"[%d]\n[2]\t\"P-%d-%d-%d\"[1]\n", p, l, i + 1, p, l, i);
				for (int k = 0; k < VFS; k++)
					PUT("[%d]\t\"F-%d-%d-%d-%d\"[1]\n", 3 + k, p, l, i, k);
				PUT("\ncaguid=0x%x\nHca\t1 \"P-%d-%d-%d\"\n[1]\t\"V-%d-%d-%d\"[2]\n\n",
				    0x2000 + 32 * h, p, l, i, p, l, i);
				for (int k = 0; k < VFS; k++)
					PUT("caguid=0x%x\nHca\t1 \"F-%d-%d-%d-%d\"\n[1]\t\"V-%d-%d-%d\"[%d]\n\n",
					    0x2000 + 32 * h + 4 * (1 + k), p, l, i, k, p, l, i, 3 + k);
			}
		}
#undef PUT
	ck_assert_uint_lt(n, cap);
	return t;
}

struct seen {
	const struct fabric *f;	/* the topology the states are judged on */
	struct lft_tables t;	/* its switches' rows, filled from the emulator */
	int judge;		/* 0 while the SM comes up */
	uint32_t xtop;		/* vLIDs judged: XLID_VBASE .. + xtop - 1 */
	uint32_t sets, loops, xloops, cycles;
};

struct run {
	EMU_RUN;
	struct vmop_wait w;
	struct seen s;
};

/* Whether vLID v, followed from some switch, goes round in a loop. */
static int xlid_loops(struct emu *e, const struct fabric *f, uint32_t v)
{
	for (uint32_t s = 0; s < f->n_nodes; s++) {
		if (f->nodes[s].type != FAB_SWITCH)
			continue;
		uint32_t n = s, hops = 0;
		for (; hops <= f->n_nodes; hops++) {
			struct emu_xcap c;
			uint64_t g = f->nodes[n].guid;
			if (emu_xlid_cap_get(e, g, 0, &c) < 0 || !c.enabled)
				break;
			int p = v - XLID_VBASE < c.lft_top ? emu_xlid_entry(e, g, v) : 0xff;
			if (p == 0xff)
				p = c.default_port;
			if (p <= 0 || p == 0xff || p > f->nodes[n].nports)
				break;
			uint32_t rem = fabric_portp(f, n, (unsigned)p)->remote;
			if (rem == FAB_NONE || f->nodes[f->ports[rem].node].type != FAB_SWITCH)
				break;
			n = f->ports[rem].node;
		}
		if (hops > f->n_nodes)
			return 1;
	}
	return 0;
}

/* After every LFT or secondary-LFT Set: the switches' tables as they are now, judged. */
static void on_set(void *ctx, struct emu *e, uint64_t guid, uint32_t block)
{
	struct seen *s = ctx;
	(void)guid;
	(void)block;
	if (!s->judge)
		return;
	for (uint32_t r = 0; r < s->t.n_sw; r++) {
		uint64_t g = s->f->nodes[s->t.sw_node[r]].guid;
		for (uint32_t lid = 1; lid <= s->t.max_lid; lid++) {
			int p = emu_lft_entry(e, g, lid);
			lft_row(&s->t, r)[lid] = p < 0 ? LFT_DROP : (uint8_t)p;
		}
	}
	s->sets++;
	s->loops += lft_has_loop(s->f, &s->t);
	s->cycles += cdg_has_cycle(s->f, &s->t);
	int xl = 0;
	for (uint32_t v = XLID_VBASE; v < XLID_VBASE + s->xtop && !xl; v++)
		xl = xlid_loops(e, s->f, v);
	s->xloops += (uint32_t)xl;
}

/* The hypervisor (vSwitch) names of pod p, leaf l, index i. */
static void hyp_name(char *buf, size_t len, int p, int l, int i)
{
	snprintf(buf, len, "V-%d-%d-%d", p, l, i);
}

/*
 * Brings the fabric up (extended: every device with the extension), a VM
 * created, MOVES random moves across pods; the states seen in s.
 */
static void moves(int scheme, int extended, int unordered, uint32_t seed,
		  struct seen *out)
{
	struct run r;
	char hyp[32];
	memset(&r, 0, sizeof(r));
	emu_run_open(&r.run, &(struct emu_world_opts){ .name = "migorder",
		     .text = tree_text(), .seed = seed });
	if (extended)
		ck_assert_int_eq(emu_xlid_all(r.e, 4096), 0);
	/* Sets cross one another: each packet 50..450 us late */
	emu_set_latency(r.e, 50, 400);
	r.sm = vmop_sm_new(r.state, scheme);
	r.sm->cfg.extended_lids = extended ? TRI_ON : TRI_OFF;
	r.sm->cfg.lft_unordered = unordered;
	r.s.f = &r.topo;
	emu_on_lft_set(r.e, on_set, &r.s);
	emu_sm_start(r.sm, r.base, r.e);
	vmop_settle(r.base, r.sm);
	ck_assert_int_eq(r.sm->state, SMS_MASTER);
	/* the LIDs given so far and room for the VM's (dynamic: a new one) */
	r.topo.max_lid = r.sm->sub.model->f.max_lid + FAB_LFT_BLOCK;
	ck_assert_int_eq(lft_tables_alloc(&r.s.t, &r.topo), 0);

	srand(seed);
	int pod = 0;
	hyp_name(hyp, sizeof(hyp), 0, 0, 0);
	/* every vLID a VF may take (a boot may grow the secondary tables) */
	r.s.xtop = extended ? (r.sm->sub.lft.x_blocks + 1) * 64u : 0;
	r.s.judge = 1;
	const struct vmop_result *res = vmop_run(r.base, r.sm, &r.w, VMOP_CREATE,
						 "vm1", hyp, -1);
	ck_assert_msg(res->ok, "create: %s", res->err);
	vmop_settle(r.base, r.sm);
	ck_assert_uint_eq(res->vm.lid >= XLID_VBASE, (unsigned)extended);
	ck_assert(extended || res->vm.lid <= r.s.t.max_lid);	/* judged */
	uint32_t waves = 0, split = 0;
	for (int k = 0; k < MOVES; k++) {
		pod = (pod + 1 + rand() % (PODS - 1)) % PODS;
		hyp_name(hyp, sizeof(hyp), pod, rand() % LEAVES, rand() % HYPS);
		res = vmop_run(r.base, r.sm, &r.w, VMOP_MIGRATE, "vm1", hyp, -1);
		ck_assert_msg(res->ok, "move %d to %s: %s", k, hyp, res->err);
		ck_assert_str_eq(res->method, "ftreeminrc");
		waves += res->st.order.waves;
		split += res->st.order.split;
		vmop_settle(r.base, r.sm);
	}
	res = vmop_run(r.base, r.sm, &r.w, VMOP_DESTROY, "vm1", NULL, -1);
	ck_assert_msg(res->ok, "destroy: %s", res->err);
	vmop_settle(r.base, r.sm);
	fprintf(stderr, "%s %s %s seed %u: %u states, %u with a LID loop, %u with a vLID loop,"
		" %u with a cycle (LFT waves %u, blocks split %u)\n",
		mig_scheme_name(scheme), extended ? "vLIDs" : "LIDs",
		unordered ? "one wave" : "ordered", seed, r.s.sets, r.s.loops,
		r.s.xloops, r.s.cycles, waves, split);
	ck_assert_uint_gt(r.s.sets, 0);
	if (!unordered)
		ck_assert_uint_gt(waves, MOVES);	/* some move took more than a wave */
	*out = r.s;
	emu_on_lft_set(r.e, NULL, NULL);
	lft_tables_free(&r.s.t);
	emu_run_stop_sm(&r.run);
	emu_run_free(&r.run);
}

START_TEST(ordered_states_clean)
{
	for (int scheme = 0; scheme < 2; scheme++)
		for (int x = 0; x < 2; x++)
			for (uint32_t seed = 1; seed <= 2; seed++) {
				struct seen s;
				moves(scheme, x, 0, seed, &s);
				ck_assert_msg(s.loops == 0 && s.xloops == 0 && s.cycles == 0,
					      "%s %s seed %u: %u states with a LID loop, "
					      "%u with a vLID loop, %u with a cycle",
					      mig_scheme_name(scheme), x ? "vLIDs" : "LIDs",
					      seed, s.loops, s.xloops, s.cycles);
			}
}
END_TEST

START_TEST(one_wave_states_not)
{
	for (int scheme = 0; scheme < 2; scheme++)
		for (int x = 0; x < 2; x++) {
			struct seen s;
			moves(scheme, x, 1, 1, &s);
			ck_assert_msg((x ? s.xloops : s.loops) > 0,
				      "%s %s in one wave: no state with a loop",
				      mig_scheme_name(scheme), x ? "vLIDs" : "LIDs");
		}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mig_order_emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, ordered_states_clean);
	tcase_add_test(tc, one_wave_states_not);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
