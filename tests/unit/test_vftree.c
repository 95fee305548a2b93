/*
 * vSwitches in the fat-tree engines (routing/engines/ftree.c): ftree routes a
 * hypervisor (vSwitch, PF, VFs) as one end node of its leaf, exactly as
 * it routes a plain host there, and the LIDs behind the vSwitch follow
 * the PF; vswitch-ftree (the vSwitch paper's Algorithm 1) routes each VM on
 * its own by its weight: the paper's Fig. 2 example, the same tables as ftree
 * with one VM per hypervisor, and a more even spread of VM-to-VM routes than
 * ftree with uneven VM counts.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines/ftree.h"
#include "routing/verify/verify.h"
#include "routing_testlib.h"

/* Direct references, so that a static link pulls the engines in. */
extern const struct routing_engine ftree_engine;
extern const struct routing_engine vswitch_ftree_engine;

/*
 * XGFT(3; 2,2,4; 1,2,2) as routing_testlib's xgft3(), its 16 end nodes
 * either hosts H<d> (nvf < 0) or hypervisors V-<d> with nvf VFs whose PF
 * P-<d> has host H<d>'s GUID.
 */
static struct tb *xgft3_hv(int nvf)
{
	struct tb *b = tb_new();
	int L[4][2], A[4][2], T[2][2];
	for (int p = 0; p < 4; p++)
		for (int l = 0; l < 2; l++)
			L[p][l] = tb_node(b, 1, 4, 0x100 + p * 2 + l, "L%d%d", p, l);
	for (int p = 0; p < 4; p++)
		for (int j = 0; j < 2; j++)
			A[p][j] = tb_node(b, 1, 4, 0x200 + p * 2 + j, "A%d%d", p, j);
	for (int j = 0; j < 2; j++)
		for (int k = 0; k < 2; k++)
			T[j][k] = tb_node(b, 1, 4, 0x300 + j * 2 + k, "T%d%d", j, k);
	for (int p = 0; p < 4; p++)
		for (int l = 0; l < 2; l++) {
			for (int h = 0; h < 2; h++) {
				int d = p * 4 + l * 2 + h;
				uint64_t g = 0x10000 + 0x10 * (uint64_t)d;
				char tag[32];
				snprintf(tag, sizeof(tag), "%d", d);
				if (nvf < 0)
					tb_link(b, L[p][l], h + 1,
						tb_node(b, 0, 1, g, "H%d", d), 1);
				else
					tb_hypervisor(b, L[p][l], h + 1,
						      0x30000 + 0x10 * (uint64_t)d, g,
						      0x40000 + 0x100 * (uint64_t)d,
						      nvf, tag);
			}
			for (int j = 0; j < 2; j++)
				tb_link(b, L[p][l], 3 + j, A[p][j], 1 + l);
		}
	for (int p = 0; p < 4; p++)
		for (int j = 0; j < 2; j++)
			for (int k = 0; k < 2; k++)
				tb_link(b, A[p][j], 3 + k, T[j][k], 1 + p);
	return b;
}

/* route_verify: everything delivered, shortest, no dependency cycle. */
static void verify_ok(const struct fabric *f, const struct lft_tables *t)
{
	struct verify_opts o = { .deadlock_free_required = 1 };
	struct verify_report r;
	ck_assert_int_eq(route_verify(f, t, &o, &r), 0);
	if (r.errors || r.unreachable || r.nonminimal || r.cycle) {
		verify_print(&r, stderr);
		ck_abort_msg("verify: %u errors, %llu unreachable, %llu "
			     "non-minimal, cycle %d", r.errors,
			     (unsigned long long)r.unreachable,
			     (unsigned long long)r.nonminimal, r.cycle);
	}
}

static int link_up(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	return p->remote != FAB_NONE && p->phys_state == PHYS_LINKUP &&
	       f->ports[p->remote].phys_state == PHYS_LINKUP;
}

/*
 * Every vSwitch's row: its own LID to port 0, its CAs' LIDs to their
 * ports (none when the CA's link is down), every other LID its leaf
 * routes up port 1.
 * And on the physical switches every LID behind it has the entry of its
 * PF (of its own LID when the PF's link is down), except (vms) the VMs'.
 */
static void check_vswitch_rows(const struct fabric *f,
			       const struct lft_tables *t, int vms)
{
	for (uint32_t r = 0; r < t->n_sw; r++) {
		uint32_t vs = t->sw_node[r];
		if (!fabric_is_vswitch(f, vs))
			continue;
		uint32_t pf = fabric_vswitch_pf(f, vs);
		if (!link_up(f, pf))
			pf = fabric_port(f, vs, 0);
		for (uint32_t lid = 1; lid <= f->max_lid; lid++) {
			uint32_t pi = f->lid_port[lid];
			if (pi == FAB_NONE)
				continue;
			uint32_t leaf = fabric_vswitch_leaf(f, vs);
			uint8_t want = lft_row(t, t->row_of_node[leaf])[lid] ==
				       LFT_DROP ? LFT_DROP : 1;
			if (pi == fabric_port(f, vs, 0))
				want = 0;
			else if (fabric_vswitch_of(f, pi, NULL) == vs)
				want = link_up(f, pi) ? f->ports[f->ports[pi].remote].num :
							LFT_DROP;
			ck_assert_uint_eq(lft_row(t, r)[lid], want);
			if (pi == pf || (vms && f->ports[pi].vm_weight) ||
			    want == LFT_DROP ||
			    (pi != fabric_port(f, vs, 0) &&
			     fabric_vswitch_of(f, pi, NULL) != vs))
				continue;
			for (uint32_t x = 0; x < t->n_sw; x++)
				if (!fabric_is_vswitch(f, t->sw_node[x]))
					ck_assert_uint_eq(lft_row(t, x)[lid],
							  lft_row(t, x)[f->ports[pf].lid]);
		}
	}
}

START_TEST(t_registered)
{
	ck_assert_str_eq(vswitch_ftree_engine.name, "vswitch-ftree");
	ck_assert_ptr_eq(routing_engine_find("vswitch-ftree"),
			 &vswitch_ftree_engine);
	ck_assert_int_eq(vswitch_ftree_engine.deadlock_free, 1);
}
END_TEST

/*
 * ftree routes a hypervisor as the host it replaces: on the physical
 * switches, the LIDs the two fabrics share (the host's is the PF's) get
 * the same entries; the LIDs behind each vSwitch follow its PF; the
 * levels are those of the host fabric, a vSwitch one below its leaf.
 */
START_TEST(t_one_end_node)
{
	struct fabric fh, fv;
	struct lft_tables th, tv;
	struct guid_map m = { 0 };
	char err[256] = "";
	struct tb *bh = xgft3_hv(-1), *bv = xgft3_hv(3);

	tb_build(&fh, bh, NULL, 0);
	for (uint32_t pi = 0; pi < fh.n_ports; pi++)
		if (fh.ports[pi].lid)
			ck_assert_int_eq(guid_map_put(&m, fh.ports[pi].guid,
						      fh.ports[pi].lid), 0);
	tb_build_kept(&fv, bv, NULL, &m);
	ck_assert_uint_eq(tb_mark_vswitches(&fv), 16);
	tb_route(&ftree_engine, &fh, &th);
	tb_route(&ftree_engine, &fv, &tv);
	ck_assert_uint_gt(fv.max_lid, fh.max_lid);

	uint32_t same = 0;
	for (uint32_t r = 0; r < th.n_sw; r++) {
		uint32_t node = th.sw_node[r];
		uint32_t rv = tv.row_of_node[fabric_find_node(&fv, fh.nodes[node].guid)];
		for (uint32_t lid = 1; lid <= fh.max_lid; lid++) {
			ck_assert_uint_ne(fh.lid_port[lid], FAB_NONE);
			ck_assert_uint_eq(fh.ports[fh.lid_port[lid]].guid,
					  fv.ports[fv.lid_port[lid]].guid);
			if (lft_row(&th, r)[lid] != lft_row(&tv, rv)[lid])
				ck_abort_msg("%s LID %u: port %u as a host, %u as "
					     "a hypervisor", fh.nodes[node].desc, lid,
					     lft_row(&th, r)[lid],
					     lft_row(&tv, rv)[lid]);
			same++;
		}
	}
	ck_assert_uint_eq(same, 20 * fh.max_lid);
	check_vswitch_rows(&fv, &tv, 0);
	ck_assert_int_gt(check_reach(&fv, &tv, 1), 0);
	verify_ok(&fv, &tv);

	uint32_t *rh = malloc(th.n_sw * sizeof(*rh));
	uint32_t *rv = malloc(tv.n_sw * sizeof(*rv));
	ck_assert_int_eq(ftree_levels(&fh, &th, rh, err, sizeof(err)), 0);
	if (ftree_levels(&fv, &tv, rv, err, sizeof(err)) != 0)
		ck_abort_msg("levels: %s", err);
	for (uint32_t r = 0; r < tv.n_sw; r++) {
		uint32_t node = tv.sw_node[r];
		if (fabric_is_vswitch(&fv, node)) {
			uint32_t leaf = fabric_vswitch_leaf(&fv, node);
			ck_assert_uint_eq(rv[r], rv[tv.row_of_node[leaf]] + 1);
		} else {
			uint32_t hn = fabric_find_node(&fh, fv.nodes[node].guid);
			ck_assert_uint_eq(rv[r], rh[th.row_of_node[hn]]);
		}
	}
	free(rh);
	free(rv);
	guid_map_free(&m);
	lft_tables_free(&th);
	fabric_free(&fh);
	free(bh);
	free_all(&fv, &tv, bv);
}
END_TEST

/*
 * Without vSwitches vswitch-ftree is ftree: the hypervisor fabric left
 * unmarked (its "vSwitches" are plain switches) routes the same either
 * way, VM weights and all.
 */
START_TEST(t_unmarked_is_ftree)
{
	struct fabric f;
	struct lft_tables a, b;
	struct tb *tb = xgft3_hv(2);
	tb_build(&f, tb, NULL, 0);
	f.ports[fabric_port(&f, node_named(&f, "F-3-0"), 1)].vm_weight = 1;
	tb_route(&ftree_engine, &f, &a);
	tb_route(&vswitch_ftree_engine, &f, &b);
	ck_assert_mem_eq(a.port, b.port, (size_t)a.n_sw * (a.max_lid + 1));
	lft_tables_free(&b);
	free_all(&f, &a, tb);
}
END_TEST

/* The per-root down-loads of the Fig. 2 example, in sixths of a vSwitch. */
struct fig2 {
	struct fabric f;
	struct tb *b;
	const char *vs[8];	/* VM i's vSwitch */
	unsigned vf[8];
	unsigned nvm[4];
};

static void fig2_build(struct fig2 *x)
{
	static const char *const vsn[8] = { "V-1", "V-1", "V-2", "V-2",
					    "V-3", "V-3", "V-3", "V-4" };
	static const unsigned vfn[8] = { 0, 1, 0, 1, 0, 1, 2, 0 };
	struct tb *b = tb_new();
	int r1 = tb_node(b, 1, 2, 0x201, "R1");
	int r2 = tb_node(b, 1, 2, 0x202, "R2");
	int l1 = tb_node(b, 1, 4, 0x101, "L1");
	int l2 = tb_node(b, 1, 4, 0x102, "L2");
	tb_link(b, l1, 1, r1, 1);
	tb_link(b, l1, 2, r2, 1);
	tb_link(b, l2, 1, r1, 2);
	tb_link(b, l2, 2, r2, 2);
	for (int v = 0; v < 4; v++) {
		char tag[32];
		uint64_t g = 0x1000 * (uint64_t)(v + 1);
		snprintf(tag, sizeof(tag), "%d", v + 1);
		tb_hypervisor(b, v < 2 ? l1 : l2, 3 + v % 2, g, g + 0x10, g + 0x100,
			      3, tag);
	}
	x->b = b;
	tb_build(&x->f, b, NULL, 0);
	ck_assert_uint_eq(tb_mark_vswitches(&x->f), 4);
	memset(x->nvm, 0, sizeof(x->nvm));
	for (int i = 0; i < 8; i++) {
		x->vs[i] = vsn[i];
		x->vf[i] = vfn[i];
		x->f.ports[vf_port(&x->f, vsn[i], vfn[i])].vm_weight = 1;
		x->nvm[vsn[i][2] - '1']++;
	}
}

static uint32_t vm_lid(const struct fig2 *x, int i)
{
	return x->f.ports[vf_port(&x->f, x->vs[i], x->vf[i])].lid;
}

/*
 * load[root][leaf]: the VMs on the leaf whose route from the other leaf
 * comes down from that root, each weighing 1/(VMs on its vSwitch), in
 * sixths.  The VM's route: the other leaf, up to a root, down to its
 * leaf, to its vSwitch.
 */
static void fig2_loads(const struct fig2 *x, const struct lft_tables *t,
		       unsigned load[2][2], const char *via[8])
{
	static const char *const leaf[2] = { "L1", "L2" }, *const root[2] = { "R1", "R2" };
	memset(load, 0, 4 * sizeof(unsigned));
	for (int i = 0; i < 8; i++) {
		uint32_t lid = vm_lid(x, i);
		int l = i < 4 ? 0 : 1, k = -1;
		uint8_t up = entry(&x->f, t, leaf[1 - l], lid);
		for (int r = 0; r < 2; r++)
			if (up == port_to(&x->f, leaf[1 - l], root[r]))
				k = r;
		ck_assert_int_ge(k, 0);
		ck_assert_uint_eq(entry(&x->f, t, root[k], lid),
				  port_to(&x->f, root[k], leaf[l]));
		ck_assert_uint_eq(entry(&x->f, t, leaf[l], lid),
				  port_to(&x->f, leaf[l], x->vs[i]));
		load[k][l] += 6 / x->nvm[x->vs[i][2] - '1'];
		via[i] = root[k];
	}
}

/*
 * The vSwitch paper's Fig. 2: R1, R2 over L1 {vSw1: VM1, VM2; vSw2: VM3, VM4}
 * and L2 {vSw3: VM5-7; vSw4: VM8}.  VM1 R1, VM2 R2, VM3 R1, VM4 R2; on L2 vSw4
 * first: VM8 R1, then VM5-7 all R2; every root-to-leaf link ends with a
 * down-load of one vSwitch.  ftree sends a vSwitch's VMs down one link
 * together.
 */
START_TEST(t_fig2)
{
	static const char *const want[8] = { "R1", "R2", "R1", "R2",
					     "R2", "R2", "R2", "R1" };
	struct fig2 x;
	struct lft_tables t;
	unsigned load[2][2];
	const char *via[8];

	fig2_build(&x);
	tb_route(&vswitch_ftree_engine, &x.f, &t);
	fig2_loads(&x, &t, load, via);
	for (int i = 0; i < 8; i++)
		if (strcmp(via[i], want[i]))
			ck_abort_msg("VM%d via %s, not %s", i + 1, via[i], want[i]);
	for (int r = 0; r < 2; r++)
		for (int l = 0; l < 2; l++)
			ck_assert_uint_eq(load[r][l], 6);
	check_vswitch_rows(&x.f, &t, 1);
	ck_assert_int_gt(check_reach(&x.f, &t, 1), 0);
	verify_ok(&x.f, &t);
	lft_tables_free(&t);

	tb_route(&ftree_engine, &x.f, &t);
	fig2_loads(&x, &t, load, via);
	for (int i = 0; i < 8; i++)
		ck_assert_str_eq(via[i], via[i < 4 ? i & ~1 : i == 7 ? 7 : 4]);
	check_vswitch_rows(&x.f, &t, 0);
	verify_ok(&x.f, &t);
	free_all(&x.f, &t, x.b);
}
END_TEST


/*
 * A PF and a VM whose links are down: their LIDs are routed nowhere
 * (dropped on every switch, their vSwitch included), the vSwitch with
 * the dead PF is routed by its own LID and its VFs follow that.
 */
START_TEST(t_function_down)
{
	const struct routing_engine *e[2] = { &ftree_engine, &vswitch_ftree_engine };
	for (int i = 0; i < 2; i++) {
		struct fig2 x;
		struct lft_tables t;
		fig2_build(&x);
		uint32_t pf = fabric_vswitch_pf(&x.f, node_named(&x.f, "V-1"));
		uint32_t vm6 = vf_port(&x.f, "V-3", 1);
		x.f.ports[pf].phys_state = 2;
		x.f.ports[vm6].phys_state = 2;
		tb_route(e[i], &x.f, &t);
		ck_assert_int_gt(check_reach(&x.f, &t, 1), 0);
		for (uint32_t r = 0; r < t.n_sw; r++) {
			ck_assert_uint_eq(lft_row(&t, r)[x.f.ports[pf].lid], LFT_DROP);
			ck_assert_uint_eq(lft_row(&t, r)[x.f.ports[vm6].lid], LFT_DROP);
		}
		check_vswitch_rows(&x.f, &t, i);
		verify_ok(&x.f, &t);
		free_all(&x.f, &t, x.b);
	}
}
END_TEST

/* The VM ports (vm_weight set) of f, in port order. */
static uint32_t vm_ports(const struct fabric *f, uint32_t *out)
{
	uint32_t n = 0;
	for (uint32_t pi = 0; pi < f->n_ports; pi++)
		if (f->ports[pi].vm_weight)
			out[n++] = pi;
	return n;
}

/* Max and min VM-to-VM routes over the links between physical switches. */
static void vm_link_loads(const struct fabric *f, const struct lft_tables *t,
			  uint64_t *max, uint64_t *min)
{
	uint32_t *vms = malloc(f->n_ports * sizeof(*vms)), n = vm_ports(f, vms);
	uint64_t *load = malloc(f->n_ports * sizeof(*load));
	ck_assert_uint_gt(n, 1);
	ck_assert_int_eq(verify_pair_loads(f, t, vms, n, load), 0);
	*max = 0;
	*min = UINT64_MAX;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		uint32_t peer = peer_switch(f, pi);
		if (f->nodes[p->node].type != FAB_SWITCH || !p->num ||
		    peer == FAB_NONE || fabric_is_vswitch(f, p->node) ||
		    fabric_is_vswitch(f, peer))
			continue;
		if (load[pi] > *max)
			*max = load[pi];
		if (load[pi] < *min)
			*min = load[pi];
	}
	free(vms);
	free(load);
}

/*
 * One VM per hypervisor, equal weights (the vSwitch paper, Section 7):
 * vswitch-ftree gives ftree's tables, so the same VM-to-VM load on every
 * link, every route minimal.  The VMs sit on different VFs; the idle VFs keep
 * LIDs (prepopulated) on one fabric and have none (dynamic) on the other.
 */
START_TEST(t_one_vm_is_ftree)
{
	for (int dyn = 0; dyn < 2; dyn++) {
		struct fabric f;
		struct lft_tables a, b;
		struct tb *tb = xgft3_hv(3);
		tb_build(&f, tb, NULL, 0);
		ck_assert_uint_eq(tb_mark_vswitches(&f), 16);
		for (int d = 0; d < 16; d++) {
			char vs[32];
			snprintf(vs, sizeof(vs), "V-%d", d);
			for (unsigned k = 0; k < 3; k++) {
				uint32_t pi = vf_port(&f, vs, k);
				if (k == (unsigned)d % 3)
					f.ports[pi].vm_weight = 5;
				else if (dyn)
					vf_drop_lid(&f, pi);
			}
		}
		tb_route(&ftree_engine, &f, &a);
		tb_route(&vswitch_ftree_engine, &f, &b);
		uint64_t amax, amin, bmax, bmin;
		vm_link_loads(&f, &a, &amax, &amin);
		vm_link_loads(&f, &b, &bmax, &bmin);
		ck_assert_uint_eq(amax, bmax);
		ck_assert_uint_eq(amin, bmin);
		ck_assert_uint_gt(bmax, 0);
		ck_assert_mem_eq(a.port, b.port, (size_t)a.n_sw * (a.max_lid + 1));
		verify_ok(&f, &a);
		verify_ok(&f, &b);
		check_vswitch_rows(&f, &b, 1);
		lft_tables_free(&b);
		free_all(&f, &a, tb);
	}
}
END_TEST

/*
 * Uneven VM counts: 4 leaves under 4 spines, two hypervisors (4 VFs) and
 * a plain host per leaf, VMs {4, 1}, {3 (weights 2, 1, 1), 2}, {4, 0},
 * {2, 2}, idle VFs without LIDs.  ftree sends a hypervisor's VMs down
 * one spine together, vswitch-ftree spreads them: its busiest physical
 * link carries fewer VM-to-VM routes and the spread is no wider.
 */
START_TEST(t_uneven)
{
	static const unsigned vms[4][2] = { { 4, 1 }, { 3, 2 }, { 4, 0 }, { 2, 2 } };
	struct tb *b = tb_new();
	int s[4], l[4];
	for (int j = 0; j < 4; j++)
		s[j] = tb_node(b, 1, 4, 0x200 + j, "S%d", j);
	for (int i = 0; i < 4; i++) {
		l[i] = tb_node(b, 1, 7, 0x100 + i, "L%d", i);
		for (int j = 0; j < 4; j++)
			tb_link(b, l[i], 1 + j, s[j], 1 + i);
		for (int h = 0; h < 2; h++) {
			char tag[32];
			uint64_t g = 0x10000 + 0x1000 * (uint64_t)(i * 2 + h);
			snprintf(tag, sizeof(tag), "%d-%d", i, h);
			tb_hypervisor(b, l[i], 5 + h, g, g + 0x10, g + 0x100, 4, tag);
		}
		tb_link(b, l[i], 7, tb_node(b, 0, 1, 0x90000 + 0x10 * (uint64_t)i,
					    "H%d", i), 1);
	}
	struct fabric f;
	struct lft_tables ft, vt;
	tb_build(&f, b, NULL, 0);
	ck_assert_uint_eq(tb_mark_vswitches(&f), 8);
	for (int i = 0; i < 4; i++)
		for (int h = 0; h < 2; h++) {
			char vs[32];
			snprintf(vs, sizeof(vs), "V-%d-%d", i, h);
			for (unsigned k = 0; k < 4; k++) {
				uint32_t pi = vf_port(&f, vs, k);
				if (k < vms[i][h])
					f.ports[pi].vm_weight = i == 1 && h == 0 && k == 0 ? 2 : 1;
				else
					vf_drop_lid(&f, pi);
			}
		}
	tb_route(&ftree_engine, &f, &ft);
	tb_route(&vswitch_ftree_engine, &f, &vt);
	uint64_t fmax, fmin, vmax, vmin;
	vm_link_loads(&f, &ft, &fmax, &fmin);
	vm_link_loads(&f, &vt, &vmax, &vmin);
	printf("uneven VMs, VM-to-VM routes per physical link: ftree max %llu "
	       "min %llu, vswitch-ftree max %llu min %llu\n",
	       (unsigned long long)fmax, (unsigned long long)fmin,
	       (unsigned long long)vmax, (unsigned long long)vmin);
	ck_assert_uint_lt(vmax, fmax);
	ck_assert_uint_le(vmax - vmin, fmax - fmin);
	verify_ok(&f, &ft);
	verify_ok(&f, &vt);
	check_vswitch_rows(&f, &vt, 1);
	check_vswitch_rows(&f, &ft, 0);
	/* the plain hosts are routed as ftree routes them */
	for (int i = 0; i < 4; i++) {
		char hn[32];
		snprintf(hn, sizeof(hn), "H%d", i);
		uint32_t lid = lid_of(&f, hn);
		for (uint32_t r = 0; r < ft.n_sw; r++)
			ck_assert_uint_eq(lft_row(&ft, r)[lid], lft_row(&vt, r)[lid]);
	}
	lft_tables_free(&vt);
	free_all(&f, &ft, b);
}
END_TEST


/* A VM on every other VF of every hypervisor of xgft3_hv(3), weights 1..3. */
static void vms_everywhere(struct fabric *f)
{
	ck_assert_uint_eq(tb_mark_vswitches(f), 16);
	for (int d = 0; d < 16; d++) {
		char vs[32];
		snprintf(vs, sizeof(vs), "V-%d", d);
		for (unsigned k = (unsigned)d % 2; k < 3; k += 2)
			f->ports[vf_port(f, vs, k)].vm_weight = (uint16_t)(1 + (d + k) % 3);
	}
}

/*
 * A damaged tree (a leaf-to-aggregation cable and an aggregation-to-top
 * cable gone): both engines still reach every LID from every switch, and
 * every CA every LID, the vSwitch rows as promised.
 */
START_TEST(t_degraded)
{
	static const char *const cut[][2] = { { "L10", "A11" }, { "A21", "T11" } };
	for (int k = 0; k < 2; k++) {
		const struct routing_engine *e[2] = { &ftree_engine, &vswitch_ftree_engine };
		struct tb *full = xgft3_hv(3), *b = tb_cut(full, cut[k][0], cut[k][1]);
		struct fabric f;
		tb_build(&f, b, NULL, 0);
		vms_everywhere(&f);
		for (int i = 0; i < 2; i++) {
			struct lft_tables t;
			struct verify_report r;
			struct verify_opts o = { 0 };
			tb_route(e[i], &f, &t);
			ck_assert_int_gt(check_reach(&f, &t, 0), 0);
			check_vswitch_rows(&f, &t, i);
			ck_assert_int_eq(route_verify(&f, &t, &o, &r), 0);
			ck_assert_uint_eq(r.unreachable, 0);
			lft_tables_free(&t);
		}
		fabric_free(&f);
		free(full);
		free(b);
	}
}
END_TEST

/* The records in another order: vswitch-ftree's entries are the same. */
START_TEST(t_order_independent)
{
	struct tb *b = xgft3_hv(3);
	int perm[MAXN];
	for (int i = 0; i < b->nn; i++)
		perm[i] = (int)(((long)i * 37 + 11) % b->nn);	/* 37 is prime to 100 */
	struct fabric f, g;
	struct lft_tables a, c;
	tb_build(&f, b, NULL, 0);
	tb_build(&g, b, perm, 0);
	ck_assert_uint_ne(f.nodes[0].guid, g.nodes[0].guid);
	vms_everywhere(&f);
	vms_everywhere(&g);
	tb_route(&vswitch_ftree_engine, &f, &a);
	tb_route(&vswitch_ftree_engine, &g, &c);
	ck_assert_uint_eq(a.max_lid, c.max_lid);
	for (uint32_t r = 0; r < a.n_sw; r++) {
		uint64_t guid = f.nodes[a.sw_node[r]].guid;
		uint32_t gr = c.row_of_node[fabric_find_node(&g, guid)];
		for (uint32_t lid = 1; lid <= a.max_lid; lid++) {
			ck_assert_uint_eq(f.ports[f.lid_port[lid]].guid,
					  g.ports[g.lid_port[lid]].guid);
			ck_assert_uint_eq(lft_row(&a, r)[lid], lft_row(&c, gr)[lid]);
		}
	}
	lft_tables_free(&c);
	fabric_free(&g);
	free_all(&f, &a, b);
}
END_TEST

static Suite *vftree_suite(void)
{
	Suite *s = suite_create("vftree");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_registered);
	tcase_add_test(tc, t_one_end_node);
	tcase_add_test(tc, t_unmarked_is_ftree);
	tcase_add_test(tc, t_fig2);
	tcase_add_test(tc, t_function_down);
	tcase_add_test(tc, t_one_vm_is_ftree);
	tcase_add_test(tc, t_uneven);
	tcase_add_test(tc, t_degraded);
	tcase_add_test(tc, t_order_independent);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(vftree_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
