/*
 * The SA's answers for VMs (sm/sa/sa_server.c, sm/sa/sa_path.c, sm/sa/sa_node.c) on the
 * emulator: ibsmd brings up a small fabric with two hypervisors (a
 * vSwitch "V-<i>" under leaf L<i>, its PF on port 2, VFs on ports 3 and
 * 4), an SA client on a plain host asks.
 *
 *   - a VM in the registry (sm->vms) on VF 0 of V-0, holding that VF's
 *     LID: PathRecord by its GID (the vGUID as interface ID) answers the
 *     VM's LID as DLID, the GID asked for, and the path facts of the VF
 *     port (the same record as for the VF's own port GID, the devices'
 *     LFTs lead there); the VM as source likewise; GUIDInfoRecord of the
 *     VF port lists the vGUID at index 1, no other port has one;
 *   - VMs the model does not hold (hypervisor absent, a VF holding
 *     another LID, a VF port of another GUID): their GIDs are INVALID_GID;
 *   - the VM migrated to VF 0 of V-1 (prepopulated: the two VF ports swap
 *     LIDs and the tables swap the two LIDs' entries; registry, model and
 *     tables changed as a migration leaves them, then republished): the
 *     same DLID, now with the facts of the path to the destination VF
 *     (its smaller MTU, fewer switches); GUIDInfoRecord moves with it.
 *
 * The migration is done on the SM's model only (vexec writes the
 * devices): the checks after it are of the SA's published view.
 */
#include <check.h>
#include <infiniband/mad.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu.h"
#include "mad/sa.h"
#include "sm/daemon.h"
#include "sm/base/log.h"
#include "sm/sa/sa_server.h"
#include "sm/base/topo.h"
#include "traps/host/saclient.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "emu_testlib.h"

#define PREFIX 0xfe80000000000000ULL
#define VGUID_BIT 0x0200000000000000ULL

#define PR_DGID_M (1ull << 2)
#define PR_SGID_M (1ull << 3)
#define PR_SLID_M (1ull << 5)

/*
 * S0 above L0 and L1; host H0 (the SM) on L0, H1 (the SA client) on L1;
 * hypervisor i: vSwitch V-i on port 2 of L<i>, PF P-i, VFs F-i-0, F-i-1.
 */
static char *vtree_text(void)
{
	size_t cap = 4096, n = 0;
	char *t = malloc(cap);
	ck_assert_ptr_nonnull(t);
#define PUT(...) (n += (size_t)snprintf(t + n, cap - n, __VA_ARGS__))
	for (int h = 0; h < 2; h++)
		PUT("caguid=0x%x\nHca\t1 \"H%d\"\n[1]\t\"L%d\"[1]\n\n", 0x1000 + 4 * h, h, h);
	for (int l = 0; l < 2; l++)
		PUT("switchguid=0x%x\nSwitch\t8 \"L%d\"\n[1]\t\"H%d\"[1]\n[2]\t\"V-%d\"[1]\n"
		    "[8]\t\"S0\"[%d]\n\n", 0x100 + l, l, l, l, l + 1);
	PUT("switchguid=0x200\nSwitch\t8 \"S0\"\n[1]\t\"L0\"[8]\n[2]\t\"L1\"[8]\n\n");
	for (int v = 0; v < 2; v++) {
		PUT("switchguid=0x%x\nSwitch\t6 \"V-%d\"\n[1]\t\"L%d\"[2]\n[2]\t\"P-%d\"[1]\n"
		    "[3]\t\"F-%d-0\"[1]\n[4]\t\"F-%d-1\"[1]\n\n", 0x300 + v, v, v, v, v, v);
		PUT("caguid=0x%x\nHca\t1 \"P-%d\"\n[1]\t\"V-%d\"[2]\n\n", 0x2000 + 0x100 * v, v, v);
		for (int k = 0; k < 2; k++)
			PUT("caguid=0x%x\nHca\t1 \"F-%d-%d\"\n[1]\t\"V-%d\"[%d]\n\n",
			    0x2000 + 0x100 * v + 4 * (k + 1), v, k, v, k + 3);
	}
#undef PUT
	ck_assert_uint_lt(n, cap);
	return t;
}

#define VS_GUID(v) (0x300ULL + (v))
#define VF_NODE(v, k) (0x2000ULL + 0x100 * (v) + 4 * ((k) + 1))

struct run {
	struct emu_net net;	/* the fabric, its emulator, the state directory */
	struct sm *sm;
	struct emu_sahost h;	/* H1 */
	uint32_t h_port;	/* H1's port in the topology */
};

/* The end port of CA node guid in the topology. */
static uint32_t ca_port(const struct run *r, uint64_t guid)
{
	uint32_t n = fabric_find_node(&r->net.topo, guid);
	ck_assert_uint_ne(n, FAB_NONE);
	return fabric_port(&r->net.topo, n, 1);
}

static uint64_t port_guid_of(const struct run *r, uint64_t node_guid)
{
	return r->net.topo.ports[ca_port(r, node_guid)].guid;
}

/* VF F-1-0 with MTUCap 2048: a path to it differs from one to F-0-0. */
static void mtu_f10(struct fabric *topo)
{
	uint32_t n = fabric_find_node(topo, VF_NODE(1, 0));
	ck_assert_uint_ne(n, FAB_NONE);
	topo->ports[fabric_port(topo, n, 1)].mtu_cap = 4;
}

static void run_up(struct run *r)
{
	struct emu_net *n = &r->net;
	memset(r, 0, sizeof(*r));
	emu_world_open(&n->topo, &n->e, &n->base, n->state, sizeof(n->state),
		       &(struct emu_world_opts){ .name = "vsaemu", .text = vtree_text(),
						 .tweak = mtu_f10, .seed = 7 });
	r->sm = emu_sm_new(n->state, 50);
	r->sm->cfg.port_guid = port_guid_of(r, 0x1000);
	/* the policy a hypervisor fabric has: every VF keeps a LID */
	r->sm->cfg.lid_scheme = 1;
	r->sm->cfg.n_vswitches = 1;
	snprintf(r->sm->cfg.vswitches[0], sizeof(r->sm->cfg.vswitches[0]), "V-*");
	emu_sm_start(r->sm, n->base, n->e);
	emu_sm_run(n->base, r->sm, 30000, 1);

	struct saclient_params p = { .timeout_ms = 1000, .retries = 3 };
	emu_sahosts_attach(n, &r->h, 1, 1, &p);
	r->h_port = ca_port(r, 0x1004);
	/* IsSM cleared is a capability change (trap 144): let its sweep pass */
	emu_sm_run(n->base, r->sm, 200, 0);
	emu_sm_run(n->base, r->sm, 30000, 1);
}

static void run_down(struct run *r)
{
	emu_sahosts_detach(&r->h, 1);
	ck_assert_uint_eq(emu_violations(r->net.e), 0);
	/* the test's registry: its own allocation */
	free(r->sm->vms.v);
	memset(&r->sm->vms, 0, sizeof(r->sm->vms));
	sm_shutdown(r->sm);
	free(r->sm);
	emu_net_down(&r->net);
}

/* The SM's model: vSwitches flagged as vswitch_mark() leaves them (policy V-*). */
static struct fabric *model(struct run *r)
{
	struct fabric *f = &r->sm->sub.model->f;
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (f->nodes[n].type == FAB_SWITCH && !strncmp(f->nodes[n].desc, "V-", 2))
			f->nodes[n].flags |= FNODE_VSWITCH;
	return f;
}

static void publish(struct run *r)
{
	sa_publish(r->sm, model(r), &r->sm->sub.lft);
	ck_assert_ptr_nonnull(sa_get_view(r->sm));
}

/* One answer, kept. */
struct answer {
	int done, status;
	size_t n, stride;
	uint8_t recs[16 * 72];
};

static void on_answer(void *arg, int status, const uint8_t *recs, size_t n,
		      size_t stride, const uint8_t *hdr)
{
	struct answer *a = arg;
	a->done = 1;
	a->status = status;
	a->n = n;
	a->stride = stride;
	ck_assert_uint_le(n * stride, sizeof(a->recs));
	if (n)
		memcpy(a->recs, recs, n * stride);
}

/* A query from H1; returns its status (an SA status in bits 8-15). */
static int ask(struct run *r, uint8_t method, uint16_t attr, uint64_t mask,
	       const uint8_t *rec, size_t rec_len, struct answer *a)
{
	memset(a, 0, sizeof(*a));
	ck_assert_int_eq(saclient_query(r->h.c, method, attr, 0, mask, rec, rec_len,
					on_answer, a), 0);
	ck_assert_int_eq(emu_run_until(r->net.base, &a->done, 10000), 1);
	return a->status;
}

/* PathRecord Get from the GID (prefix, sguid) to the GID (prefix, dguid). */
static int path_get(struct run *r, uint64_t sguid, uint64_t dguid, uint8_t *rec)
{
	uint8_t t[SA_SIZE_PATH_REC] = { 0 };
	struct answer a;
	sa_put64(t + 8, PREFIX);
	sa_put64(t + 16, dguid);
	sa_put64(t + 24, PREFIX);
	sa_put64(t + 32, sguid);
	int st = ask(r, SA_METHOD_GET, SA_ATTR_PATH_REC, PR_DGID_M | PR_SGID_M, t,
		     sizeof(t), &a);
	if (!st) {
		ck_assert_uint_eq(a.n, 1);
		memcpy(rec, a.recs, SA_SIZE_PATH_REC);
	}
	return st;
}

/* The same PathRecord but for the GID fields and DLID/SLID. */
static void assert_same_path(const uint8_t *a, const uint8_t *b)
{
	ck_assert_int_eq(memcmp(a + 44, b + 44, SA_SIZE_PATH_REC - 44), 0);
}

/* Where the devices' LFTs take a packet from end port src to dlid. */
static uint32_t device_walk(struct run *r, uint32_t src, uint32_t dlid)
{
	const struct fabric *f = &r->net.topo;
	uint32_t pi = f->ports[src].remote;
	for (int hops = 0; hops < 16 && pi != FAB_NONE; hops++) {
		const struct fab_node *nd = &f->nodes[f->ports[pi].node];
		if (nd->type != FAB_SWITCH)
			return pi;
		int out = emu_lft_entry(r->net.e, nd->guid, dlid);
		if (out < 1 || out > nd->nports)
			return FAB_NONE;
		pi = f->ports[fabric_port(f, f->ports[pi].node, (uint32_t)out)].remote;
	}
	return FAB_NONE;
}

/* GUIDInfoRecords, the whole table: how many list a GUID at index 1. */
static unsigned guid1_count(struct run *r, struct answer *a)
{
	uint8_t t[72] = { 0 };
	unsigned n = 0;
	ck_assert_int_eq(ask(r, SA_METHOD_GET_TABLE, SA_ATTR_GUIDINFO_REC, 0, t, sizeof(t), a), 0);
	ck_assert_uint_gt(a->n, 10);
	for (size_t i = 0; i < a->n; i++)
		n += mad_get_field64(a->recs + i * a->stride, 0, IB_SA_GIR_GUID1_F) != 0;
	return n;
}

/* The GUIDInfoRecord of LID lid (block 0): GUID0, GUID1. */
static void guidinfo_of(struct run *r, uint32_t lid, uint64_t *g0, uint64_t *g1)
{
	uint8_t t[72] = { 0 };
	struct answer a;
	mad_set_field(t, 0, IB_SA_GIR_LID_F, lid);
	ck_assert_int_eq(ask(r, SA_METHOD_GET, SA_ATTR_GUIDINFO_REC, 1, t, sizeof(t), &a), 0);
	ck_assert_uint_eq(a.n, 1);
	*g0 = mad_get_field64(a.recs, 0, IB_SA_GIR_GUID0_F);
	*g1 = mad_get_field64(a.recs, 0, IB_SA_GIR_GUID1_F);
}

static struct vm *registry(struct run *r, unsigned n)
{
	struct vm_registry *reg = &r->sm->vms;
	ck_assert_uint_eq(reg->n, 0);	/* the state directory had none */
	free(reg->v);
	reg->v = calloc(n, sizeof(*reg->v));
	ck_assert_ptr_nonnull(reg->v);
	reg->n = reg->cap = n;
	return reg->v;
}

static struct run R;

START_TEST(t_vm_path_and_guidinfo)
{
	struct answer a;
	uint8_t rec[SA_SIZE_PATH_REC], vf_rec[SA_SIZE_PATH_REC], dst_rec[SA_SIZE_PATH_REC];
	uint64_t g0, g1;
	run_up(&R);
	struct run *r = &R;
	uint64_t hguid = r->h.guid;
	uint32_t va = ca_port(r, VF_NODE(0, 0)), vb = ca_port(r, VF_NODE(1, 0));
	uint64_t ga = r->net.topo.ports[va].guid, gb = r->net.topo.ports[vb].guid;
	uint32_t la = (uint32_t)emu_port_lid(r->net.e, VF_NODE(0, 0), 1);
	uint32_t lb = (uint32_t)emu_port_lid(r->net.e, VF_NODE(1, 0), 1);
	uint32_t l01 = (uint32_t)emu_port_lid(r->net.e, VF_NODE(0, 1), 1);
	ck_assert_uint_gt(la, 0);
	ck_assert_uint_gt(lb, 0);
	ck_assert_uint_gt(l01, 0);
	const uint64_t vguid = ga | VGUID_BIT;

	/* no VM yet: the vGUID is nobody's, no port has an alias GUID */
	ck_assert_int_eq(path_get(r, hguid, vguid, rec), SA_STS_INVALID_GID);
	ck_assert_uint_eq(guid1_count(r, &a), 0);
	/* the paths to the two VFs' own GIDs, as the devices route them */
	ck_assert_int_eq(path_get(r, hguid, ga, vf_rec), 0);
	ck_assert_uint_eq(sa_get16(vf_rec + 40), la);
	ck_assert_int_eq(path_get(r, hguid, gb, dst_rec), 0);
	ck_assert_uint_eq(sa_get16(dst_rec + 40), lb);
	/* the two differ (MTU, switches crossed): the facts show which VF */
	ck_assert_uint_eq(vf_rec[54], 0x80 | 5);
	ck_assert_uint_eq(dst_rec[54], 0x80 | 4);
	ck_assert_uint_ne(vf_rec[56], dst_rec[56]);

	/*
	 * The registry: vm1 on VF 0 of V-0 with that VF's LID; ghost on a
	 * hypervisor the fabric lacks; stale on VF 1 of V-0 but with a LID
	 * that VF does not hold; recabled on VF 1 of V-1 with its LID, but
	 * that VF port is not the one of the registry's GUID.
	 */
	uint32_t l11 = (uint32_t)emu_port_lid(r->net.e, VF_NODE(1, 1), 1);
	ck_assert_uint_gt(l11, 0);
	struct vm *v = registry(r, 4);
	v[0] = (struct vm){ .vguid = vguid, .lid = la, .hyp_guid = VS_GUID(0), .vf = 0,
			    .vf_guid = ga, .weight = 1 };
	snprintf(v[0].name, sizeof(v[0].name), "vm1");
	v[1] = (struct vm){ .vguid = 0x0200000000abcdefULL, .lid = 0x99, .hyp_guid = 0x777,
			    .vf = 0, .vf_guid = 0x778, .weight = 1 };
	snprintf(v[1].name, sizeof(v[1].name), "ghost");
	v[2] = (struct vm){ .vguid = 0x0200000000fedcbaULL, .lid = l01 + 100,
			    .hyp_guid = VS_GUID(0), .vf = 1,
			    .vf_guid = port_guid_of(r, VF_NODE(0, 1)), .weight = 1 };
	snprintf(v[2].name, sizeof(v[2].name), "stale");
	v[3] = (struct vm){ .vguid = 0x0200000000fedcbbULL, .lid = l11,
			    .hyp_guid = VS_GUID(1), .vf = 1, .vf_guid = 0x779, .weight = 1 };
	snprintf(v[3].name, sizeof(v[3].name), "recabled");
	publish(r);
	ck_assert_uint_eq(sa_get_view(r->sm)->n_vms, 1);

	/* to the VM: its LID, its GID, the VF port's path facts */
	ck_assert_int_eq(path_get(r, hguid, vguid, rec), 0);
	ck_assert_uint_eq(sa_get16(rec + 40), la);
	ck_assert_uint_eq(sa_get16(rec + 42), r->h.lid);
	ck_assert_uint_eq(sa_get64(rec + 8), PREFIX);
	ck_assert_uint_eq(sa_get64(rec + 16), vguid);
	ck_assert_uint_eq(sa_get64(rec + 32), hguid);
	assert_same_path(rec, vf_rec);
	ck_assert_uint_eq(device_walk(r, r->h_port, la), va);
	/* from the VM: its LID and GID as the source */
	ck_assert_int_eq(path_get(r, vguid, hguid, rec), 0);
	ck_assert_uint_eq(sa_get16(rec + 42), la);
	ck_assert_uint_eq(sa_get64(rec + 32), vguid);
	ck_assert_uint_eq(sa_get16(rec + 40), r->h.lid);
	ck_assert_uint_eq(sa_get64(rec + 16), hguid);
	/* the VF's own GID still names the VF port, under its own GUID */
	ck_assert_int_eq(path_get(r, hguid, ga, rec), 0);
	ck_assert_uint_eq(sa_get64(rec + 16), ga);
	ck_assert_uint_eq(sa_get16(rec + 40), la);
	/* VMs the model does not hold are no one */
	ck_assert_int_eq(path_get(r, hguid, v[1].vguid, rec), SA_STS_INVALID_GID);
	ck_assert_int_eq(path_get(r, hguid, v[2].vguid, rec), SA_STS_INVALID_GID);
	ck_assert_int_eq(path_get(r, hguid, v[3].vguid, rec), SA_STS_INVALID_GID);

	/* GUIDInfo: the vGUID at index 1 of the VF port, nowhere else */
	guidinfo_of(r, la, &g0, &g1);
	ck_assert_uint_eq(g0, ga);
	ck_assert_uint_eq(g1, vguid);
	ck_assert_uint_eq(guid1_count(r, &a), 1);
	guidinfo_of(r, l01, &g0, &g1);
	ck_assert_uint_eq(g1, 0);
	guidinfo_of(r, l11, &g0, &g1);
	ck_assert_uint_eq(g1, 0);

	/*
	 * vm1 migrates to VF 0 of V-1 (prepopulated): the VF ports swap
	 * LIDs, every switch's entries of the two LIDs swap, the registry
	 * names the new VF; then the daemon publishes.
	 */
	struct fabric *f = model(r);
	uint32_t ma = fabric_port(f, fabric_find_node(f, VF_NODE(0, 0)), 1);
	uint32_t mb = fabric_port(f, fabric_find_node(f, VF_NODE(1, 0)), 1);
	ck_assert_uint_eq(f->ports[ma].lid, la);
	ck_assert_uint_eq(f->ports[mb].lid, lb);
	f->ports[ma].lid = lb;
	f->ports[mb].lid = la;
	ck_assert_int_eq(fabric_index_lids(f), 0);
	struct lft_tables *t = &r->sm->sub.lft;
	ck_assert_ptr_null(t->sl);	/* no QoS: no SL table to swap */
	for (uint32_t row = 0; row < t->n_sw; row++) {
		uint8_t *e = lft_row(t, row), x = e[la];
		e[la] = e[lb];
		e[lb] = x;
	}
	v[0].hyp_guid = VS_GUID(1);
	v[0].vf_guid = gb;
	publish(r);
	ck_assert_uint_eq(sa_get_view(r->sm)->n_vms, 1);

	/* the same DLID, the destination VF's path */
	ck_assert_int_eq(path_get(r, hguid, vguid, rec), 0);
	ck_assert_uint_eq(sa_get16(rec + 40), la);
	ck_assert_uint_eq(sa_get64(rec + 16), vguid);
	assert_same_path(rec, dst_rec);
	/* the source VF now answers under the destination's old LID */
	ck_assert_int_eq(path_get(r, hguid, ga, rec), 0);
	ck_assert_uint_eq(sa_get16(rec + 40), lb);
	ck_assert_int_eq(path_get(r, hguid, gb, rec), 0);
	ck_assert_uint_eq(sa_get16(rec + 40), la);
	/* GUIDInfo moved with the VM */
	guidinfo_of(r, la, &g0, &g1);
	ck_assert_uint_eq(g0, gb);
	ck_assert_uint_eq(g1, vguid);
	guidinfo_of(r, lb, &g0, &g1);
	ck_assert_uint_eq(g0, ga);
	ck_assert_uint_eq(g1, 0);
	ck_assert_uint_eq(guid1_count(r, &a), 1);

	/* a VM whose VF holds another LID (registry ahead of the model): not answered */
	v[0].lid = lb;
	publish(r);
	ck_assert_uint_eq(sa_get_view(r->sm)->n_vms, 0);
	ck_assert_int_eq(path_get(r, hguid, vguid, rec), SA_STS_INVALID_GID);
	ck_assert_uint_eq(guid1_count(r, &a), 0);

	run_down(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vsa_emu");
	TCase *tc = tcase_create("vm");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_vm_path_and_guidinfo);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
