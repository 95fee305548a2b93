/*
 * qos.mode (ibsmd.yaml(5) Quality of service) on the in-process emulator:
 * what the SM writes of SL-to-VL and VL arbitration tables, read back from
 * the emulated devices (the emulator's own decoders, mad/emu/emu.c), never
 * from the SM's memory.  The tree of emu_testlib.h: 4 leaves (L0..L3, GUIDs
 * 0x100..0x103) of 3 hosts, 2 spines, every port VLCap 4 (VL0-7).  voqsw is
 * judged against voqsw_apply() over the LIDs and LFTs read back from the
 * devices.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mad/emu/emu.h"
#include "routing/qos/vftree.h"
#include "routing/qos/voqsw.h"
#include "sm/daemon.h"
#include "sm/apply.h"
#include "sm/base/log.h"
#include "sm/write/plan_sweep.h"
#include "sm/write/program.h"
#include "sm/base/topo.h"

#include "emu_testlib.h"

struct run {
	EMU_RUN;
};

/*
 * tweak: changes the devices before the emulator starts (NULL: none);
 * opt_guid: the switch that advertises OptimizedSLtoVLMappingProgramming
 * (0: every switch, 1: none, as ibsim); policy: changes the SM's
 * policy (NULL: none); sls: qos.sls (voqsw; 0: not given)
 */
static void setup_full(struct run *r, int mode, int max_vls, int sls,
		       void (*tweak)(struct fabric *), uint64_t opt_guid,
		       void (*policy)(struct config *))
{
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "qosemu",
		     .tweak = tweak, .seed = 7 });
	if (opt_guid != 1)
		ck_assert_int_eq(emu_set_opt_sl2vl(r->e, opt_guid, 1), 0);
	r->sm = emu_sm_new(r->state, 20);
	r->sm->cfg.qos_mode = mode;
	r->sm->cfg.qos_max_vls = max_vls;
	if (policy)
		policy(&r->sm->cfg);
	r->sm->cfg.qos_sls = sls;
	emu_sm_start(r->sm, r->base, r->e);
}

static void setup(struct run *r, int mode, int max_vls,
		  void (*tweak)(struct fabric *))
{
	setup_full(r, mode, max_vls, 0, tweak, 1, NULL);
}

static void setup_opt(struct run *r, int mode, int max_vls,
		      void (*tweak)(struct fabric *), uint64_t opt_guid,
		      void (*policy)(struct config *))
{
	setup_full(r, mode, max_vls, 0, tweak, opt_guid, policy);
}

static void setup_sls(struct run *r, int mode, int max_vls, int sls,
		      void (*tweak)(struct fabric *))
{
	setup_full(r, mode, max_vls, sls, tweak, 1, NULL);
}

static int linked(const struct fabric *f, uint32_t ni, int p)
{
	return fabric_portp(f, ni, (unsigned)p)->remote != FAB_NONE;
}

/* SL i -> VL i for i < vls, VL 0 for the others. */
static void assert_table(const struct run *r, const struct fab_node *nd,
			 int in, int out, unsigned vls)
{
	uint8_t vl[16];
	ck_assert_int_eq(emu_sl2vl(r->e, nd->guid, in, out, vl), 0);
	for (unsigned sl = 0; sl < 16; sl++)
		ck_assert_msg(vl[sl] == (sl < vls ? sl : 0),
			      "%s (%d, %d): SL %u on VL %u", nd->desc, in, out,
			      sl, vl[sl]);
}

/*
 * The SL2VL pairs the SM writes: every CA port, every switch (in, out)
 * pair of port 0 and the linked ports with in != out.
 */
static uint64_t expected_sl2vl(const struct fabric *f)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		unsigned k = 0;
		for (int p = 1; p <= nd->nports; p++)
			k += (unsigned)linked(f, i, p);
		n += nd->type == FAB_SWITCH ? (uint64_t)(k + 1) * k : k;
	}
	return n;
}

/* VLArb block 1: VL0..vls-1 with weight 64 each; block 3: empty. */
static void assert_vlarb(const struct run *r, const struct fab_node *nd, int p,
			 unsigned vls)
{
	uint8_t vl[32], w[32];
	ck_assert_int_eq(emu_vlarb(r->e, nd->guid, p, 1, vl, w), 8);
	for (unsigned i = 0; i < 32; i++) {
		ck_assert_msg(vl[i] == (i < vls ? i : 0) && w[i] == (i < vls ? 64 : 0),
			      "%s[%d] low entry %u: VL %u weight %u", nd->desc, p,
			      i, vl[i], w[i]);
	}
	ck_assert_int_eq(emu_vlarb(r->e, nd->guid, p, 3, vl, w), 8);
	for (unsigned i = 0; i < 32; i++)
		ck_assert_uint_eq(w[i], 0);
}

/*
 * vftree with max_vls 4: every CA port and every switch (in, out) pair,
 * port 0 included, maps SL i to VL i below 4 and SLs 4-15 to VL 0; every
 * linked port weighs VL0-3 equally; the PathRecord SL (lft_sl) between
 * hosts of two leaves is Algorithm 1's entry for the leaves in GUID order,
 * 0 within a leaf.  A second heavy sweep writes no SL2VL or VLArb table.
 */
START_TEST(t_vftree_tables_written_once)
{
	struct run r;
	setup(&r, QOS_VFTREE, 4, NULL);
	emu_run_sweeps(&r.run, 1);
	const struct fabric *f = &r.topo;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		for (int in = 0; in <= nd->nports; in++) {
			if (in && !linked(f, i, in))
				continue;
			if (nd->type != FAB_SWITCH) {
				if (in) {
					assert_table(&r, nd, in, in, 4);
					assert_vlarb(&r, nd, in, 4);
				}
				continue;
			}
			for (int out = 0; out <= nd->nports; out++)
				if (out != in && (!out || linked(f, i, out)))
					assert_table(&r, nd, in, out, 4);
			if (in)
				assert_vlarb(&r, nd, in, 4);
		}
	}
	struct emu_counters c;
	emu_get_counters(r.e, &c);
	ck_assert_uint_eq(c.sl2vl_sets, expected_sl2vl(f));
	/* 12 hosts + 4 leaves x 5 linked + 2 spines x 4: two blocks each */
	ck_assert_uint_eq(c.vlarb_sets, 2 * (12 + 4 * 5 + 2 * 4));
	ck_assert_uint_eq(emu_violations(r.e), 0);
	/* the SM's own count of what it wrote agrees */
	ck_assert_uint_eq(r.sm->sweep.last.prog.sl2vl_sets, c.sl2vl_sets);
	ck_assert_uint_eq(r.sm->sweep.last.prog.vlarb_sets, c.vlarb_sets);

	/*
	 * SLs: host Hh (CA GUID 0x1000 + 4h) is on leaf h / 3 (leaf GUIDs
	 * ascend with the leaf number); every host pair gets its leaves' VL
	 */
	uint8_t vl[16];
	vftree_assign_vls(vl, 4, 4);
	const struct lft_tables *t = &r.sm->sub.lft;
	int nonzero = 0;
	for (int a = 0; a < 12; a++)
		for (int b = 0; b < 12; b++) {
			int la = emu_port_lid(r.e, 0x1000 + 4 * (uint64_t)a, 1);
			int lb = emu_port_lid(r.e, 0x1000 + 4 * (uint64_t)b, 1);
			unsigned want = a / 3 == b / 3 ? 0 : vl[(a / 3) * 4 + b / 3];
			ck_assert_msg(lft_sl(t, (uint32_t)la, (uint32_t)lb) == want,
				      "H%d -> H%d: SL %u, want %u", a, b,
				      lft_sl(t, (uint32_t)la, (uint32_t)lb), want);
			ck_assert_uint_eq(lft_sl(t, (uint32_t)la, (uint32_t)lb),
					  lft_sl(t, (uint32_t)lb, (uint32_t)la));
			nonzero += want != 0;
		}
	ck_assert_int_gt(nonzero, 0);

	/* nothing changed: the device cache holds every table */
	sweeper_request_heavy(r.sm, "test");
	emu_run_sweeps(&r.run, 2);
	struct emu_counters c2;
	emu_get_counters(r.e, &c2);
	ck_assert_uint_eq(c2.sl2vl_sets, c.sl2vl_sets);
	ck_assert_uint_eq(c2.vlarb_sets, c.vlarb_sets);
	ck_assert_uint_eq(r.sm->sweep.last.prog.sl2vl_sets, 0);
	ck_assert_uint_eq(r.sm->sweep.last.prog.vlarb_sets, 0);
	emu_run_free(&r.run);
}
END_TEST

/* SL2VL pairs the SM writes one by one on node i (see expected_sl2vl). */
static uint64_t node_pairs(const struct fabric *f, uint32_t i)
{
	const struct fab_node *nd = &f->nodes[i];
	unsigned k = 0;
	for (int p = 1; p <= nd->nports; p++)
		k += (unsigned)linked(f, i, p);
	return nd->type == FAB_SWITCH ? (uint64_t)(k + 1) * k : k;
}

/* Every (in, out) pair of the switch, port 0 and unlinked ports included. */
static void assert_every_pair(const struct run *r, const struct fab_node *nd,
			      unsigned vls)
{
	for (int in = 0; in <= nd->nports; in++)
		for (int out = 0; out <= nd->nports; out++)
			assert_table(r, nd, in, out, vls);
}

/*
 * Switches advertising OptimizedSLtoVLMappingProgramming: under vFtree
 * every pair of a switch has the same table, so one Set with modifier
 * bits 17|16 (every input, every output) per switch; every pair of the
 * switch reads it back, and a second sweep writes nothing (the device
 * cache recorded each pair).  One CA port, one Set, as before.
 */
START_TEST(t_vftree_optimized_one_set_per_switch)
{
	struct run r;
	setup_opt(&r, QOS_VFTREE, 4, NULL, 0, NULL);
	emu_run_sweeps(&r.run, 1);
	const struct fabric *f = &r.topo;
	uint64_t want = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		if (nd->type != FAB_SWITCH) {
			want += node_pairs(f, i);
			assert_table(&r, nd, 1, 1, 4);
			continue;
		}
		want++;
		assert_every_pair(&r, nd, 4);
	}
	struct emu_counters c;
	emu_get_counters(r.e, &c);
	ck_assert_uint_eq(want, 6 + 12);
	ck_assert_uint_eq(c.sl2vl_sets, want);
	ck_assert_uint_eq(r.sm->sweep.last.prog.sl2vl_sets, want);
	ck_assert_uint_eq(emu_violations(r.e), 0);

	sweeper_request_heavy(r.sm, "test");
	emu_run_sweeps(&r.run, 2);
	struct emu_counters c2;
	emu_get_counters(r.e, &c2);
	ck_assert_uint_eq(c2.sl2vl_sets, c.sl2vl_sets);
	ck_assert_uint_eq(r.sm->sweep.last.prog.sl2vl_sets, 0);
	emu_run_free(&r.run);
}
END_TEST

/*
 * Only spine S0 advertises the bit: it takes one Set, every other switch
 * its pairs one by one, as without the bit.
 */
START_TEST(t_optimized_only_where_advertised)
{
	struct run r;
	setup_opt(&r, QOS_VFTREE, 4, NULL, 0x200, NULL);
	emu_run_sweeps(&r.run, 1);
	const struct fabric *f = &r.topo;
	uint32_t s0 = fabric_find_node(f, 0x200);
	struct emu_counters c;
	emu_get_counters(r.e, &c);
	ck_assert_uint_eq(c.sl2vl_sets, expected_sl2vl(f) - node_pairs(f, s0) + 1);
	assert_every_pair(&r, &f->nodes[s0], 4);
	/* a switch without the bit: the pairs of unlinked ports keep theirs */
	assert_table(&r, &f->nodes[fabric_find_node(f, 0x201)], 5, 6, 16);
	ck_assert_uint_eq(emu_violations(r.e), 0);
	emu_run_free(&r.run);
}
END_TEST

/*
 * The fabric as the devices hold it: the tree with the LIDs and LFTs read
 * from the emulated devices into g and u (not the SM's memory).
 */
static void fabric_from_devices(const struct run *r, struct fabric *g,
				struct lft_tables *u)
{
	emu_tree_parse(g);
	for (uint32_t pi = 0; pi < g->n_ports; pi++)
		if (fabric_is_endport(g, pi)) {
			const struct fab_port *p = &g->ports[pi];
			int lid = emu_port_lid(r->e, g->nodes[p->node].guid, p->num);
			ck_assert_int_gt(lid, 0);
			g->ports[pi].lid = (uint32_t)lid;
		}
	ck_assert_int_eq(fabric_index_lids(g), 0);	/* sets max_lid */
	ck_assert_int_eq(lft_tables_alloc(u, g), 0);
	for (uint32_t row = 0; row < u->n_sw; row++)
		for (uint32_t l = 1; l <= u->max_lid; l++)
			lft_row(u, row)[l] = (uint8_t)emu_lft_entry(
				r->e, g->nodes[u->sw_node[row]].guid, l);
}

/*
 * voqsw with 4 SLs: every table the devices hold is what voqsw_apply()
 * gives for the LIDs and LFTs the devices hold, some of them VOQ tables
 * (an SL of a considered tuple on the VL of the next port, not the
 * uniform SL mod 8); the SLs the SA would serve are its SLs, below 4; a
 * second heavy sweep writes none.
 */
START_TEST(t_voqsw_tables_from_devices)
{
	struct run r;
	struct fabric g;
	struct lft_tables u;
	struct voqsw_report vr;
	setup_sls(&r, QOS_VOQSW, 0, 4, NULL);
	emu_run_sweeps(&r.run, 1);
	fabric_from_devices(&r, &g, &u);
	struct voqsw_params p = { .n_sls = 4, .n_vls = 8, .max_op_vls = 5 };
	ck_assert_int_eq(voqsw_apply(&g, &u, &p, &vr), 0);
	ck_assert_uint_eq(vr.paths, 12 * 11);
	ck_assert_uint_gt(vr.considered, 0);
	unsigned voq = 0;
	for (uint32_t i = 0; i < g.n_nodes; i++) {
		const struct fab_node *nd = &g.nodes[i];
		for (int in = 0; in <= nd->nports; in++) {
			if (in && !linked(&g, i, in))
				continue;
			for (int out = 0; out <= nd->nports; out++) {
				if (nd->type == FAB_SWITCH ?
				    out == in || (out && !linked(&g, i, out)) :
				    out != in || !in)
					continue;
				uint8_t vl[16];
				const uint8_t *want = lft_sl2vl(&u, i, (unsigned)in,
								(unsigned)out);
				ck_assert_ptr_nonnull(want);
				ck_assert_int_eq(emu_sl2vl(r.e, nd->guid, in, out, vl), 0);
				ck_assert_msg(!memcmp(vl, want, 16), "%s (%d, %d)",
					      nd->desc, in, out);
				for (unsigned sl = 0; sl < 16; sl++)
					voq += vl[sl] != (sl < 4 ? sl : 0);
			}
		}
	}
	ck_assert_uint_gt(voq, 0);
	const struct lft_tables *t = &r.sm->sub.lft;
	for (int a = 0; a < 12; a++)
		for (int b = 0; b < 12; b++) {
			uint32_t la = (uint32_t)emu_port_lid(r.e, 0x1000 + 4 * (uint64_t)a, 1);
			uint32_t lb = (uint32_t)emu_port_lid(r.e, 0x1000 + 4 * (uint64_t)b, 1);
			ck_assert_uint_eq(lft_sl(t, la, lb), lft_sl(&u, la, lb));
			ck_assert_uint_lt(lft_sl(t, la, lb), 4);
		}
	ck_assert_uint_eq(emu_violations(r.e), 0);
	struct emu_counters c, c2;
	emu_get_counters(r.e, &c);
	ck_assert_uint_eq(c.sl2vl_sets, expected_sl2vl(&g));
	sweeper_request_heavy(r.sm, "test");
	emu_run_sweeps(&r.run, 2);
	emu_get_counters(r.e, &c2);
	ck_assert_uint_eq(c2.sl2vl_sets, c.sl2vl_sets);
	lft_tables_free(&u);
	fabric_free(&g);
	emu_run_free(&r.run);
}
END_TEST

/* mode none (the default): no SL2VL or VLArb Set at all, SL 0 everywhere. */
START_TEST(t_none_writes_nothing)
{
	struct run r;
	setup(&r, QOS_NONE, 0, NULL);
	emu_run_sweeps(&r.run, 1);
	struct emu_counters c;
	emu_get_counters(r.e, &c);
	ck_assert_uint_eq(c.sl2vl_sets, 0);
	ck_assert_uint_eq(c.vlarb_sets, 0);
	int h0 = emu_port_lid(r.e, 0x1000, 1), h3 = emu_port_lid(r.e, 0x100c, 1);
	ck_assert_uint_eq(lft_sl(&r.sm->sub.lft, (uint32_t)h0, (uint32_t)h3), 0);
	/* what fresh devices hold stays: the identity */
	assert_table(&r, &r.topo.nodes[fabric_find_node(&r.topo, 0x100)], 1, 7, 16);
	emu_run_free(&r.run);
}
END_TEST

/* Host H5 (0x1014) and its leaf port L1[3] support VL0-1 only. */
static void narrow_h5(struct fabric *f)
{
	uint32_t h5 = fabric_find_node(f, 0x1014);
	uint32_t pi = fabric_port(f, h5, 1);
	f->ports[pi].vl_cap = 2;
	f->ports[f->ports[pi].remote].vl_cap = 2;
}

/*
 * max_vls above what a link runs is clamped to that link's data VLs:
 * VL0-1 here, so SLs 0-1 on VLs 0-1 and every other SL on VL 0, on every
 * table, and no SL above 1 in a path.
 */
START_TEST(t_max_vls_clamped_to_narrowest_link)
{
	struct run r;
	setup(&r, QOS_VFTREE, 8, narrow_h5);
	emu_run_sweeps(&r.run, 1);
	const struct fabric *f = &r.topo;
	ck_assert_int_eq(emu_port_oper_vls(r.e, 0x1014, 1), 2);
	assert_table(&r, &f->nodes[fabric_find_node(f, 0x1014)], 1, 1, 2);
	assert_table(&r, &f->nodes[fabric_find_node(f, 0x200)], 0, 3, 2);
	assert_table(&r, &f->nodes[fabric_find_node(f, 0x101)], 7, 3, 2);
	assert_vlarb(&r, &f->nodes[fabric_find_node(f, 0x102)], 7, 2);
	const struct lft_tables *t = &r.sm->sub.lft;
	for (uint32_t s = 1; s <= t->max_lid; s++)
		for (uint32_t d = 1; d <= t->max_lid; d++)
			ck_assert_uint_le(lft_sl(t, s, d), 1);
	ck_assert_uint_eq(emu_violations(r.e), 0);
	emu_run_free(&r.run);
}
END_TEST

static void plan_done(void *arg, const struct program_stats *st)
{
	*(int *)arg = 1;
}

/* Does the plan hold an SL2VL op to node ni with modifier mod? */
static int has_sl2vl(const struct plan *p, uint32_t ni, uint32_t mod)
{
	for (uint32_t i = 0; i < p->waves[0].n; i++) {
		const struct plan_op *o = &p->waves[0].ops[i];
		if (o->kind == PLAN_SL2VL && o->node == ni && o->mod == mod)
			return 1;
	}
	return 0;
}

/*
 * Tables that differ by output on S0 (0x200, ports 1-4 linked), after a
 * bring-up with the bit: every input towards output 2 takes table B, and
 * only the pair (1, 3) too.  S0's plan: one bit-17 Set per output whose
 * inputs share a table (0, 1, 2, 4), the pairs of output 3 one by one;
 * run against the device cache, only the two Sets that change something
 * go: (every input, 2) and (1, 3).  Read back: every input of output 2,
 * unlinked ones included, holds B; (1, 3) B; (2, 3) and (1, 4) still A.
 */
START_TEST(t_optimized_per_output)
{
	struct run r;
	setup_opt(&r, QOS_VFTREE, 4, NULL, 0, NULL);
	emu_run_sweeps(&r.run, 1);
	struct discovery *d = r.sm->sub.model;
	struct lft_tables *t = &r.sm->sub.lft;
	uint32_t s0 = fabric_find_node(&d->f, 0x200);
	ck_assert_uint_eq(t->sl2vl_n, 1);
	uint8_t *v = realloc(t->sl2vl, 2 * QOS_SLS);
	ck_assert_ptr_nonnull(v);
	t->sl2vl = v;
	for (unsigned sl = 0; sl < QOS_SLS; sl++)	/* B: SL i -> VL 3 - i, < 4 */
		v[QOS_SLS + sl] = sl < 4 ? (uint8_t)(3 - sl) : 0;
	t->sl2vl_n = 2;
	unsigned w = t->sl2vl_width[s0];
	for (unsigned in = 0; in < w; in++)
		t->sl2vl_idx[t->sl2vl_first[s0] + in * w + 2] = 1;
	t->sl2vl_idx[t->sl2vl_first[s0] + 1 * w + 3] = 1;

	struct program_params pp;
	sm_program_params(r.sm, 0, &pp);
	struct plan p;
	plan_init(&p);
	ck_assert_int_eq(plan_sweep_qos(&p, 0, d, t, &pp), 0);
	plan_seal(&p);
	uint32_t ops = 0;
	for (uint32_t i = 0; i < p.waves[0].n; i++)
		ops += p.waves[0].ops[i].kind == PLAN_SL2VL && p.waves[0].ops[i].node == s0;
	ck_assert_uint_eq(ops, 8);
	static const uint32_t want[] = { 0x20000, 0x20001, 0x20002, 0x20004,
					 0x0003, 0x0103, 0x0203, 0x0403 };
	for (unsigned i = 0; i < 8; i++)
		ck_assert_msg(has_sl2vl(&p, s0, want[i]), "no SL2VL op 0x%x", want[i]);
	/* the other switches: one Set each still */
	ck_assert(has_sl2vl(&p, fabric_find_node(&d->f, 0x201), 0x30000));

	struct emu_counters c, c2;
	emu_get_counters(r.e, &c);
	int done = 0;
	struct program *pr = program_run(r.sm->txn, d, &p, r.sm->sub.cache, 1,
					 NULL, plan_done, &done);
	ck_assert_ptr_nonnull(pr);
	ck_assert(emu_run_until(r.base, &done, 5000));
	emu_get_counters(r.e, &c2);
	ck_assert_uint_eq(c2.sl2vl_sets - c.sl2vl_sets, 2);
	program_free(pr);
	plan_free(&p);
	const struct fab_node *nd = &r.topo.nodes[fabric_find_node(&r.topo, 0x200)];
	uint8_t vl[16];
	for (int in = 0; in <= 8; in++) {
		ck_assert_int_eq(emu_sl2vl(r.e, 0x200, in, 2, vl), 0);
		for (unsigned sl = 0; sl < 16; sl++)
			ck_assert_uint_eq(vl[sl], sl < 4 ? 3 - sl : 0);
	}
	ck_assert_int_eq(emu_sl2vl(r.e, 0x200, 1, 3, vl), 0);
	ck_assert_uint_eq(vl[0], 3);
	assert_table(&r, nd, 2, 3, 4);
	assert_table(&r, nd, 1, 4, 4);
	assert_table(&r, nd, 0, 1, 4);
	ck_assert_uint_eq(emu_violations(r.e), 0);
	emu_run_free(&r.run);
}
END_TEST

/* A VLArb table as given: n entries "VL:weight". */
static void set_table(struct cfg_vlarb *v, int n, const uint8_t (*e)[2])
{
	memset(v, 0, sizeof(*v));
	v->given = 1;
	v->n = n;
	for (int i = 0; i < n; i++) {
		v->vl[i] = e[i][0];
		v->weight[i] = e[i][1];
	}
}

/* qos.vlarb_low "0:64,1:64,2:32,3:32", vlarb_high "0:255", limit 10 */
static const uint8_t w_low[][2] = { { 0, 64 }, { 1, 64 }, { 2, 32 }, { 3, 32 } };
static const uint8_t w_high[][2] = { { 0, 255 } };

static void weighted(struct config *c)
{
	set_table(&c->qos_vlarb_low, 4, w_low);
	set_table(&c->qos_vlarb_high, 1, w_high);
	c->qos_vlarb_high_limit = 10;
}

/* Block 1 or 3 of a port holds exactly the n entries e, then nothing. */
static void assert_block(const struct run *r, const struct fab_node *nd, int p,
			 int block, int n, const uint8_t (*e)[2])
{
	uint8_t vl[32], w[32];
	ck_assert_int_eq(emu_vlarb(r->e, nd->guid, p, block, vl, w), 8);
	for (int i = 0; i < 32; i++) {
		unsigned wv = i < n ? e[i][0] : 0, ww = i < n ? e[i][1] : 0;
		ck_assert_msg(vl[i] == wv && w[i] == ww,
			      "%s[%d] block %d entry %d: VL %u weight %u, want %u:%u",
			      nd->desc, p, block, i, vl[i], w[i], wv, ww);
	}
}

/*
 * The policy's weights: every linked CA and switch port holds the low
 * table "0:64,1:64,2:32,3:32", the high table "0:255" and VLHighLimit
 * 10, read back from the emulated devices; a second sweep writes no
 * VLArb block and no PortInfo.
 */
START_TEST(t_vlarb_policy_written)
{
	struct run r;
	setup_opt(&r, QOS_VFTREE, 4, NULL, 1, weighted);
	emu_run_sweeps(&r.run, 1);
	const struct fabric *f = &r.topo;
	unsigned ports = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		for (int p = 1; p <= nd->nports; p++) {
			if (!linked(f, i, p))
				continue;
			assert_block(&r, nd, p, 1, 4, w_low);
			assert_block(&r, nd, p, 3, 1, w_high);
			ck_assert_int_eq(emu_port_vl_high_limit(r.e, nd->guid, p), 10);
			ports++;
		}
	}
	ck_assert_uint_eq(ports, 12 + 4 * 5 + 2 * 4);
	ck_assert_uint_eq(emu_violations(r.e), 0);
	struct emu_counters c;
	emu_get_counters(r.e, &c);
	sweeper_request_heavy(r.sm, "test");
	emu_run_sweeps(&r.run, 2);
	struct emu_counters c2;
	emu_get_counters(r.e, &c2);
	ck_assert_uint_eq(c2.vlarb_sets, c.vlarb_sets);
	ck_assert_uint_eq(r.sm->sweep.last.prog.vlarb_sets, 0);
	ck_assert_uint_eq(r.sm->sweep.last.prog.portinfo_sets, 0);

	/* a new VLHighLimit alone: one PortInfo per linked port, nothing else */
	r.sm->cfg.qos_vlarb_high_limit = 20;
	sweeper_request_heavy(r.sm, "test");
	emu_run_sweeps(&r.run, 3);
	ck_assert_uint_eq(r.sm->sweep.last.prog.portinfo_sets, ports);
	ck_assert_uint_eq(r.sm->sweep.last.prog.vlarb_sets, 0);
	ck_assert_uint_eq(r.sm->sweep.last.prog.sl2vl_sets, 0);
	ck_assert_int_eq(emu_port_vl_high_limit(r.e, 0x1014, 1), 20);
	ck_assert_int_eq(emu_port_vl_high_limit(r.e, 0x201, 3), 20);
	emu_run_free(&r.run);
}
END_TEST

/*
 * "0:10,1:20,3:30,0:1,1:1,0:1,1:1,0:1,1:1,0:1,1:1" on a fabric that runs
 * VL0-1 only (H5's link, max_vls not given): the VL 3 entry is left out
 * everywhere, and of the 10 left the port's VLArbLowCap (8) keeps the
 * first 8.  The high table is the default: empty.
 */
static void too_wide(struct config *c)
{
	static const uint8_t low[][2] = {
		{ 0, 10 }, { 1, 20 }, { 3, 30 }, { 0, 1 }, { 1, 1 }, { 0, 1 },
		{ 1, 1 }, { 0, 1 }, { 1, 1 }, { 0, 1 }, { 1, 1 },
	};
	set_table(&c->qos_vlarb_low, 11, low);
}

START_TEST(t_vlarb_policy_cut_to_the_port)
{
	static const uint8_t kept[][2] = {
		{ 0, 10 }, { 1, 20 }, { 0, 1 }, { 1, 1 }, { 0, 1 }, { 1, 1 },
		{ 0, 1 }, { 1, 1 },
	};
	struct run r;
	setup_opt(&r, QOS_VFTREE, 0, narrow_h5, 1, too_wide);
	emu_run_sweeps(&r.run, 1);
	const struct fabric *f = &r.topo;
	assert_block(&r, &f->nodes[fabric_find_node(f, 0x1000)], 1, 1, 8, kept);
	assert_block(&r, &f->nodes[fabric_find_node(f, 0x201)], 2, 1, 8, kept);
	assert_block(&r, &f->nodes[fabric_find_node(f, 0x201)], 2, 3, 0, kept);
	ck_assert_uint_eq(emu_violations(r.e), 0);
	emu_run_free(&r.run);
}
END_TEST

static Suite *qos_suite(void)
{
	Suite *s = suite_create("qos_emu");
	TCase *tc = tcase_create("qos_emu");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_vftree_tables_written_once);
	tcase_add_test(tc, t_vftree_optimized_one_set_per_switch);
	tcase_add_test(tc, t_optimized_only_where_advertised);
	tcase_add_test(tc, t_optimized_per_output);
	tcase_add_test(tc, t_vlarb_policy_written);
	tcase_add_test(tc, t_vlarb_policy_cut_to_the_port);
	tcase_add_test(tc, t_none_writes_nothing);
	tcase_add_test(tc, t_voqsw_tables_from_devices);
	tcase_add_test(tc, t_max_vls_clamped_to_narrowest_link);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(qos_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
