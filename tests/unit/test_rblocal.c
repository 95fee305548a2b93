/*
 * The local rebalance's pure part (reconfig/rblocal.c) on a 3-level XGFT
 * with vSwitches, tests/unit/data/rblocal/xgft-3-2-2-vf4.net (fabgen.py
 * xgft --m 3,2,2 --w 1,2,2 --vfs 4): two pods, each of 2 leaves (L0-S0,
 * L0-S1 | L0-S2, L0-S3) under 2 pod spines (L1-S0, L1-S1 | L1-S2,
 * L1-S3), 4 roots L2-S*, 3 hypervisors V-<h> of 4 VFs F-<h>-<k> per
 * leaf.  One VM on VF 0 of every hypervisor, routed by vswitch-ftree;
 * then VMs move (their weights move to other VFs; the tables stay, so a
 * moved VM has the routes its new VF copied from the PF, as FTreeMinRC
 * leaves them) and the sub-tree they touched is routed again:
 *  - moves inside pod 0: the level-1 sub-tree of pod 0 (2 tops, 4
 *    switches, 2 leaves); only pod 0's leaves are written; no entry of a
 *    switch outside it, of its tops, or for a destination outside it
 *    changes; for the pod's own destinations the pod's leaves then hold
 *    exactly what a fresh vswitch-ftree of the whole fabric on the same
 *    placement gives them (the relation found: a leaf's up choice for a
 *    destination of its own pod is the main path's spine, fixed by the
 *    destination leaf's own counters in both routings), so the
 *    intra-pod balance equals the fresh routing's, and the whole
 *    fabric's balance is restored where only pod 0's VMs moved;
 *  - moves across pods: the whole fabric, the tables untouched;
 *  - one leaf: nothing below its top, nothing written;
 *  - a switch that is no leaf, or a fabric that is no fat tree: refused.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconfig/migrate.h"
#include "reconfig/rblocal.h"
#include "reconfig/rebalance.h"
#include "routing/engine.h"
#include "routing/engines.h"
#include "sm/base/fabric.h"
#include "sm/base/topo.h"
#include "sm/model/lids.h"

#define NET "tests/unit/data/rblocal/xgft-3-2-2-vf4.net"
#define HYPS 12
#define PER_LEAF 3

struct fx {
	struct fabric f;
	struct lft_tables t;
};

static uint32_t node(const struct fabric *f, const char *name)
{
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (!strcmp(f->nodes[i].desc, name))
			return i;
	ck_abort_msg("no node %s", name);
	return FAB_NONE;
}

static uint32_t vf(const struct fabric *f, int h, int k)
{
	char name[32];
	snprintf(name, sizeof(name), "F-%d-%d", h, k);
	return fabric_port(f, node(f, name), 1);
}

static uint32_t leaf(const struct fabric *f, int s)
{
	char name[32];
	snprintf(name, sizeof(name), "L0-S%d", s);
	return node(f, name);
}

static void route(const struct fabric *f, struct lft_tables *t)
{
	char err[256] = "";
	struct route_opts o = { 0 };
	memset(t, 0, sizeof(*t));
	ck_assert_int_eq(lft_tables_alloc(t, f), 0);
	if (vswitch_ftree_route(f, &o, t, err, sizeof(err)) != 0)
		ck_abort_msg("vswitch-ftree: %s", err);
}

/* The fabric, every VF with a LID, a VM on VF 0 of each hypervisor, routed. */
static void fx_build(struct fx *z)
{
	char err[256] = "";
	struct lid_report rep;
	fabric_init(&z->f);
	if (topo_load(&z->f, NET, err, sizeof(err)) != 0)
		ck_abort_msg("%s", err);
	for (uint32_t i = 0; i < z->f.n_nodes; i++)
		if (!strncmp(z->f.nodes[i].desc, "V-", 2))
			z->f.nodes[i].flags |= FNODE_VSWITCH;
	ck_assert_int_eq(lids_assign(&z->f, NULL, 0, &rep), 0);
	for (int h = 0; h < HYPS; h++)
		z->f.ports[vf(&z->f, h, 0)].vm_weight = 1;
	route(&z->f, &z->t);
}

static void fx_free(struct fx *z)
{
	lft_tables_free(&z->t);
	fabric_free(&z->f);
}

/* The VM on VF k of hypervisor a moves to VF j of b. */
static void move(struct fx *z, int a, int k, int b, int j)
{
	ck_assert_uint_eq(z->f.ports[vf(&z->f, a, k)].vm_weight, 1);
	z->f.ports[vf(&z->f, a, k)].vm_weight = 0;
	z->f.ports[vf(&z->f, b, j)].vm_weight = 1;
}

/* The pod (0 or 1) of a LID's end node, -1: a physical switch's LID. */
static int pod_of_lid(const struct fabric *f, uint32_t lid)
{
	uint32_t pi = f->lid_port[lid];
	uint32_t n = f->ports[pi].node;
	if (f->nodes[n].type == FAB_SWITCH && !fabric_is_vswitch(f, n))
		return -1;
	int h;
	if (sscanf(f->nodes[n].desc, "V-%d", &h) == 1 ||
	    sscanf(f->nodes[n].desc, "P-%d", &h) == 1 ||
	    sscanf(f->nodes[n].desc, "F-%d", &h) == 1)
		return h / (2 * PER_LEAF);
	ck_abort_msg("LID %u: %s", lid, f->nodes[n].desc);
	return -2;
}

/* A physical switch's pod and level: "L<lev>-S<i>"; roots pod -1. */
static int pod_of_switch(const struct fabric *f, uint32_t n, int *lev)
{
	int l, i;
	ck_assert_int_eq(sscanf(f->nodes[n].desc, "L%d-S%d", &l, &i), 2);
	*lev = l;
	return l == 2 ? -1 : i / 2;
}

/*
 * The heaviest directed link load of routes between two VMs' ends in pod
 * p (sources: its leaves; destinations: its VM LIDs, each its share of
 * the vSwitch), as rebalance_measure() counts it.
 */
static uint64_t pod_balance(const struct fabric *f, const struct lft_tables *t, int p)
{
	uint64_t *load = calloc(f->n_ports, sizeof(*load)), max = 0;
	ck_assert_ptr_nonnull(load);
	for (uint32_t lid = 1; lid <= t->max_lid; lid++) {
		uint32_t pi = f->lid_port[lid];
		if (pi == FAB_NONE || !f->ports[pi].vm_weight || pod_of_lid(f, lid) != p)
			continue;
		uint8_t *seen = calloc(f->n_ports, 1);
		ck_assert_ptr_nonnull(seen);
		for (int s = 2 * p; s < 2 * p + 2; s++) {
			uint32_t n = leaf(f, s);
			for (int hop = 0; hop < 8; hop++) {
				uint8_t out = lft_row(t, t->row_of_node[n])[lid];
				uint32_t q = fabric_port(f, n, out);
				uint32_t peer = f->ports[f->ports[q].remote].node;
				if (fabric_is_vswitch(f, peer) || seen[q])
					break;
				seen[q] = 1;
				load[q] += REBAL_UNIT;	/* one VM per vSwitch here */
				n = peer;
			}
		}
		free(seen);
	}
	for (uint32_t q = 0; q < f->n_ports; q++)
		if (load[q] > max)
			max = load[q];
	free(load);
	return max;
}

START_TEST(t_inside_pod)
{
	struct fx z;
	struct lft_tables old, fresh;
	struct rblocal_result r;
	struct rebalance_quality q0, q1;
	char err[256] = "", desc[256];
	fx_build(&z);
	/* consolidation inside pod 0: leaf 1's VMs onto leaf 0's hypervisors */
	for (int i = 0; i < PER_LEAF; i++)
		move(&z, PER_LEAF + i, 0, i, 1);
	ck_assert_int_eq(migrate_tables_copy(&old, &z.t, &z.f, 0), 0);
	ck_assert_int_eq(rebalance_quality(&z.f, &z.t, &q0, err, sizeof(err)), 0);
	uint32_t touched[] = { leaf(&z.f, 1), leaf(&z.f, 0) };
	ck_assert_msg(rblocal_route(&z.f, &z.t, touched, 2, &r, err, sizeof(err)) == 0,
		      "%s", err);
	rblocal_describe(&z.f, &r.st, desc, sizeof(desc));
	fprintf(stderr, "inside pod 0: %s: %u LIDs, %u switches, %llu entries changed, "
		"balance %d/1000 before\n", desc, r.lids, r.switches_changed,
		(unsigned long long)r.entries_changed, q0.permille);
	ck_assert(!r.st.whole);
	ck_assert_uint_eq(r.st.level, 1);
	ck_assert_uint_eq(r.st.leaf_level, 2);
	ck_assert_uint_eq(r.st.tops, 2);
	ck_assert_uint_eq(r.st.switches, 4);
	ck_assert_uint_eq(r.st.leaves, 2);
	ck_assert_uint_eq(r.st.end_nodes, 2 * PER_LEAF);
	ck_assert_str_eq(z.f.nodes[r.st.top_node].desc, "L1-S0");
	/* the pod's own end ports: 3 hypervisors x (vSwitch, PF, 4 VFs) per leaf */
	ck_assert_uint_eq(r.lids, 2 * PER_LEAF * 6);
	ck_assert_uint_gt(r.switches_changed, 0);
	ck_assert_uint_le(r.switches_changed, 2);
	ck_assert_uint_lt(q0.permille, REBAL_PERMILLE);

	/* what changed: pod 0's leaves, for pod 0's destinations, only */
	uint32_t rows = 0;
	for (uint32_t row = 0; row < z.t.n_sw; row++) {
		uint32_t n = z.t.sw_node[row];
		int lev = -1, pod = -1;
		int phys = !fabric_is_vswitch(&z.f, n);
		if (phys)
			pod = pod_of_switch(&z.f, n, &lev);
		int differs = 0;
		for (uint32_t lid = 1; lid <= z.t.max_lid; lid++) {
			if (lft_row(&z.t, row)[lid] == lft_row(&old, row)[lid])
				continue;
			differs = 1;
			ck_assert_msg(phys && pod == 0 && lev == 0,
				      "%s changed (LID %u)", z.f.nodes[n].desc, lid);
			ck_assert_int_eq(pod_of_lid(&z.f, lid), 0);
		}
		rows += differs;
	}
	ck_assert_uint_eq(rows, r.switches_changed);

	/* against a fresh vswitch-ftree of the whole fabric, same placement */
	route(&z.f, &fresh);
	for (int s = 0; s < 2; s++) {
		uint32_t row = z.t.row_of_node[leaf(&z.f, s)];
		for (uint32_t lid = 1; lid <= z.t.max_lid; lid++)
			if (pod_of_lid(&z.f, lid) == 0)
				ck_assert_msg(lft_row(&z.t, row)[lid] == lft_row(&fresh, row)[lid],
					      "L0-S%d LID %u: %u, fresh %u", s, lid,
					      lft_row(&z.t, row)[lid], lft_row(&fresh, row)[lid]);
	}
	uint64_t bl = pod_balance(&z.f, &z.t, 0), bf = pod_balance(&z.f, &fresh, 0),
		 bo = pod_balance(&z.f, &old, 0);
	fprintf(stderr, "pod 0's own traffic: heaviest link %llu before, %llu local, %llu fresh\n",
		(unsigned long long)(bo / REBAL_UNIT), (unsigned long long)(bl / REBAL_UNIT),
		(unsigned long long)(bf / REBAL_UNIT));
	ck_assert_uint_eq(bl, bf);
	ck_assert_uint_gt(bo, bl);
	ck_assert_int_eq(rebalance_quality(&z.f, &z.t, &q1, err, sizeof(err)), 0);
	fprintf(stderr, "whole fabric: balance %d/1000 before, %d/1000 after\n",
		q0.permille, q1.permille);
	ck_assert_int_eq(q1.permille, REBAL_PERMILLE);
	lft_tables_free(&fresh);
	lft_tables_free(&old);
	fx_free(&z);
}
END_TEST

START_TEST(t_across_pods)
{
	struct fx z;
	struct lft_tables old;
	struct rblocal_result r;
	char err[256] = "";
	fx_build(&z);
	move(&z, 2 * PER_LEAF, 0, 0, 1);	/* pod 1 to pod 0 */
	ck_assert_int_eq(migrate_tables_copy(&old, &z.t, &z.f, 0), 0);
	uint32_t touched[] = { leaf(&z.f, 2), leaf(&z.f, 0) };
	ck_assert_int_eq(rblocal_route(&z.f, &z.t, touched, 2, &r, err, sizeof(err)), 0);
	ck_assert(r.st.whole);
	ck_assert_uint_eq(r.st.level, 0);
	ck_assert_uint_eq(r.st.tops, 4);
	ck_assert_uint_eq(r.st.switches, 12);
	ck_assert_uint_eq(r.st.leaves, 4);
	ck_assert_uint_eq(r.switches_changed, 0);
	ck_assert_mem_eq(z.t.port, old.port, (size_t)z.t.n_sw * (z.t.max_lid + 1));
	/* three leaves, two of them in pod 0 and one in pod 1: still the whole */
	uint32_t three[] = { leaf(&z.f, 0), leaf(&z.f, 1), leaf(&z.f, 3) };
	ck_assert_int_eq(rblocal_subtree(&z.f, &z.t, three, 3, &r.st, NULL, err, sizeof(err)), 0);
	ck_assert(r.st.whole);
	lft_tables_free(&old);
	fx_free(&z);
}
END_TEST

START_TEST(t_one_leaf_and_refusals)
{
	struct fx z;
	struct lft_tables old;
	struct rblocal_result r;
	char err[256] = "";
	fx_build(&z);
	ck_assert_int_eq(migrate_tables_copy(&old, &z.t, &z.f, 0), 0);
	uint32_t one[] = { leaf(&z.f, 3), leaf(&z.f, 3) };
	ck_assert_int_eq(rblocal_route(&z.f, &z.t, one, 2, &r, err, sizeof(err)), 0);
	ck_assert(!r.st.whole);
	ck_assert_uint_eq(r.st.level, 2);
	ck_assert_uint_eq(r.st.switches, 1);
	ck_assert_uint_eq(r.switches_changed, 0);
	ck_assert_mem_eq(z.t.port, old.port, (size_t)z.t.n_sw * (z.t.max_lid + 1));
	/* a pod spine is no leaf */
	uint32_t spine[] = { node(&z.f, "L1-S0") };
	ck_assert_int_eq(rblocal_route(&z.f, &z.t, spine, 1, &r, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "no leaf switch"), "%s", err);
	/* a link between two leaves: no longer a fat tree */
	uint32_t a = leaf(&z.f, 0), b = leaf(&z.f, 1);
	uint32_t pa = fabric_port(&z.f, a, 4), pb = fabric_port(&z.f, b, 4);
	uint32_t ra = z.f.ports[pa].remote, rb = z.f.ports[pb].remote;
	fabric_link(&z.f, pa, pb);
	uint32_t two[] = { a, b };
	ck_assert_int_eq(rblocal_route(&z.f, &z.t, two, 2, &r, err, sizeof(err)), -1);
	fprintf(stderr, "not a fat tree: %s\n", err);
	ck_assert_mem_eq(z.t.port, old.port, (size_t)z.t.n_sw * (z.t.max_lid + 1));
	fabric_link(&z.f, pa, ra);
	fabric_link(&z.f, pb, rb);
	lft_tables_free(&old);
	fx_free(&z);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rblocal");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, t_inside_pod);
	tcase_add_test(tc, t_across_pods);
	tcase_add_test(tc, t_one_leaf_and_refusals);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
