/*
 * The VM registry (sm/model/vm.c) and vSwitch detection (sm/model/vswitch.c) on a
 * small hypervisor fabric built from ibsim net-file text.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sm/model/config.h"
#include "sm/base/fabric.h"
#include "sm/model/lids.h"
#include "sm/base/topo.h"
#include "sm/model/vm.h"
#include "sm/model/vswitch.h"

/*
 * L1: leaf, port 1 -> V-1 (hypervisor), port 2 -> V-2, port 3 -> L2 (a
 * leaf that lost all but one uplink: a vSwitch's shape, never one),
 * port 4 -> V-X (named by the pattern, two uplinks: misshapen).
 * V-1: port 1 uplink, port 2 PF P-1, ports 3, 4 VFs F-1-0, F-1-1; port 5
 * empty.  V-2: port 1 uplink, 2 PF, 3 VF F-2-0.
 */
static const char NET[] =
	"switchguid=0x100\n"
	"Switch\t8 \"L1\"\n"
	"[1]\t\"V-1\"[1]\n"
	"[2]\t\"V-2\"[1]\n"
	"[3]\t\"L2\"[1]\n"
	"[4]\t\"V-X\"[1]\n"
	"[5]\t\"V-X\"[2]\n"
	"\n"
	"switchguid=0x200\n"
	"Switch\t4 \"L2\"\n"
	"[1]\t\"L1\"[3]\n"
	"[2]\t\"H\"[1]\n"
	"\n"
	"switchguid=0x300\n"
	"Switch\t4 \"V-X\"\n"
	"[1]\t\"L1\"[4]\n"
	"[2]\t\"L1\"[5]\n"
	"[3]\t\"PX\"[1]\n"
	"\n"
	"switchguid=0x1000\n"
	"Switch\t6 \"V-1\"\n"
	"[1]\t\"L1\"[1]\n"
	"[2]\t\"P-1\"[1]\n"
	"[3]\t\"F-1-0\"[1]\n"
	"[4]\t\"F-1-1\"[1]\n"
	"\n"
	"switchguid=0x2000\n"
	"Switch\t6 \"V-2\"\n"
	"[1]\t\"L1\"[2]\n"
	"[2]\t\"P-2\"[1]\n"
	"[3]\t\"F-2-0\"[1]\n"
	"\n"
	"caguid=0x10\nHca\t1 \"P-1\"\n[1]\t\"V-1\"[2]\n\n"
	"caguid=0x20\nHca\t1 \"F-1-0\"\n[1]\t\"V-1\"[3]\n\n"
	"caguid=0x30\nHca\t1 \"F-1-1\"\n[1]\t\"V-1\"[4]\n\n"
	"caguid=0x40\nHca\t1 \"P-2\"\n[1]\t\"V-2\"[2]\n\n"
	"caguid=0x50\nHca\t1 \"F-2-0\"\n[1]\t\"V-2\"[3]\n\n"
	"caguid=0x60\nHca\t1 \"H\"\n[1]\t\"L2\"[2]\n\n"
	"caguid=0x70\nHca\t1 \"PX\"\n[1]\t\"V-X\"[3]\n";

static void load(struct fabric *f)
{
	char err[256] = "";
	fabric_init(f);
	if (topo_parse_string(f, NET, "hyp.net", err, sizeof(err)) != 0)
		ck_abort_msg("parse: %s", err);
}

static uint32_t node(const struct fabric *f, uint64_t guid)
{
	uint32_t n = fabric_find_node(f, guid);
	ck_assert_uint_ne(n, FAB_NONE);
	return n;
}

static uint32_t port_of(const struct fabric *f, uint64_t guid)
{
	for (uint32_t i = 0; i < f->n_ports; i++)
		if (fabric_is_endport(f, i) && f->ports[i].guid == guid)
			return i;
	ck_abort_msg("no end port 0x%llx", (unsigned long long)guid);
	return FAB_NONE;
}

static void policy(struct config *c, const char *pat)
{
	config_defaults(c);
	if (pat) {
		c->n_vswitches = 1;
		snprintf(c->vswitches[0], sizeof(c->vswitches[0]), "%s", pat);
	}
}

static char *tmpdir(void)
{
	static char dir[64];
	snprintf(dir, sizeof(dir), "/tmp/test_vm.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	return dir;
}

static void write_vms(const char *dir, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/vms", dir);
	FILE *fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	fclose(fp);
}

static void cleanup(const char *dir)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/vms", dir);
	unlink(path);
	rmdir(dir);
}

static struct vm mkvm(const char *name, uint64_t vguid, uint32_t lid,
		      uint64_t hyp, int vf, uint64_t vf_guid, uint16_t w)
{
	struct vm v;
	memset(&v, 0, sizeof(v));
	snprintf(v.name, sizeof(v.name), "%s", name);
	v.vguid = vguid;
	v.lid = lid;
	v.hyp_guid = hyp;
	v.vf = vf;
	v.vf_guid = vf_guid;
	v.weight = w;
	return v;
}

START_TEST(t_mark_named_shape_only)
{
	struct fabric f;
	struct config c;
	struct vswitch_report r;
	load(&f);
	policy(&c, "V-*");
	vswitch_mark(&f, &c, &r);
	ck_assert(fabric_is_vswitch(&f, node(&f, 0x1000)));
	ck_assert(fabric_is_vswitch(&f, node(&f, 0x2000)));
	/* named, two links to L1: not a vSwitch */
	ck_assert(!fabric_is_vswitch(&f, node(&f, 0x300)));
	/* the degraded leaf: a vSwitch's shape, not named */
	ck_assert(!fabric_is_vswitch(&f, node(&f, 0x200)));
	ck_assert(!fabric_is_vswitch(&f, node(&f, 0x100)));
	ck_assert_uint_eq(r.marked, 2);
	ck_assert_uint_eq(r.misshapen, 1);
	ck_assert_uint_eq(r.candidates, 1);
	/* the helpers of fabric.h see the marks: PF P-1, VFs F-1-0, F-1-1 */
	uint32_t v1 = node(&f, 0x1000);
	ck_assert_uint_eq(fabric_vswitch_pf(&f, v1), port_of(&f, 0x11));
	ck_assert_uint_eq(fabric_vswitch_nvf(&f, v1), 2);
	ck_assert_uint_eq(fabric_vswitch_vf(&f, v1, 1, NULL), port_of(&f, 0x31));
	fabric_free(&f);
}
END_TEST

START_TEST(t_mark_unnamed_never)
{
	struct fabric f;
	struct config c;
	struct vswitch_report r;
	load(&f);
	policy(&c, NULL);
	vswitch_mark(&f, &c, &r);
	for (uint32_t i = 0; i < f.n_nodes; i++)
		ck_assert(!fabric_is_vswitch(&f, i));
	/* V-1, V-2 and the degraded leaf L2 only proposed */
	ck_assert_uint_eq(r.marked, 0);
	ck_assert_uint_eq(r.candidates, 3);
	/* by GUID; and a mark the policy no longer gives is taken away */
	policy(&c, "0x1000");
	vswitch_mark(&f, &c, &r);
	ck_assert(fabric_is_vswitch(&f, node(&f, 0x1000)));
	ck_assert(!fabric_is_vswitch(&f, node(&f, 0x2000)));
	policy(&c, "L*");	/* L2 has the shape but no: L1 is misshapen */
	vswitch_mark(&f, &c, &r);
	ck_assert(!fabric_is_vswitch(&f, node(&f, 0x1000)));
	ck_assert(fabric_is_vswitch(&f, node(&f, 0x200)));	/* named: the operator's word */
	ck_assert_uint_eq(r.misshapen, 1);
	fabric_free(&f);
}
END_TEST

START_TEST(t_registry_round_trip)
{
	char *dir = tmpdir();
	char err[512];
	struct vm_registry r;
	ck_assert_int_eq(vm_registry_load(&r, dir, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.n, 0);	/* no file: empty */
	struct vm a = mkvm("vm-a", 0x0200000000000021ULL, 7, 0x1000, 0, 0x21, 1);
	struct vm b = mkvm("b.2_x", 0x0200000000000031ULL, 9, 0x1000, 1, 0x31, 250);
	b.prepared = 1;
	b.to_hyp_guid = 0x2000;
	b.to_vf = 0;
	ck_assert_ptr_nonnull(vm_add(&r, &a));
	ck_assert_ptr_nonnull(vm_add(&r, &b));
	/* names and vGUIDs are unique */
	struct vm c = mkvm("vm-a", 0x99, 11, 0x2000, 0, 0x51, 1);
	ck_assert_ptr_null(vm_add(&r, &c));
	c = mkvm("vm-c", a.vguid, 11, 0x2000, 0, 0x51, 1);
	ck_assert_ptr_null(vm_add(&r, &c));
	ck_assert_int_eq(vm_registry_save(&r, err, sizeof(err)), 0);

	struct vm_registry s;
	ck_assert_int_eq(vm_registry_load(&s, dir, err, sizeof(err)), 0);
	ck_assert_uint_eq(s.n, 2);
	/* each read back with the file's line it came from (after the header) */
	ck_assert_uint_eq(s.v[0].line, 3);
	ck_assert_uint_eq(s.v[1].line, 4);
	s.v[0].line = s.v[1].line = 0;
	ck_assert_mem_eq(&s.v[0], &r.v[0], sizeof(struct vm));
	ck_assert_mem_eq(&s.v[1], &r.v[1], sizeof(struct vm));
	ck_assert_ptr_eq(vm_find(&s, "b.2_x"), &s.v[1]);
	ck_assert_ptr_eq(vm_find_vguid(&s, a.vguid), &s.v[0]);
	ck_assert_ptr_eq(vm_find_vf(&s, 0x1000, 1), &s.v[1]);
	ck_assert_ptr_null(vm_find_vf(&s, 0x2000, 0));
	vm_del(&s, vm_find(&s, "vm-a"));
	ck_assert_uint_eq(s.n, 1);
	ck_assert_str_eq(s.v[0].name, "b.2_x");
	ck_assert_int_eq(vm_registry_save(&s, err, sizeof(err)), 0);
	vm_registry_free(&s);
	ck_assert_int_eq(vm_registry_load(&s, dir, err, sizeof(err)), 0);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_int_eq(s.v[0].prepared, 1);
	ck_assert_uint_eq(s.v[0].to_hyp_guid, 0x2000);
	vm_registry_free(&s);
	vm_registry_free(&r);
	cleanup(dir);
}
END_TEST

/* A shared-LID VM: saved without a VF, read back the same, holds no LID in guid2lid. */
START_TEST(t_registry_shared)
{
	char *dir = tmpdir();
	char err[512];
	struct vm_registry r;
	ck_assert_int_eq(vm_registry_load(&r, dir, err, sizeof(err)), 0);
	struct vm a = mkvm("vm-a", 0x0200000000000021ULL, 7, 0x1000, 0, 0x21, 1);
	struct vm sh = mkvm("sh", 0x0a00000000000001ULL, 5, 0x1000, -1, 0, 3);
	sh.shared = 1;
	ck_assert_ptr_nonnull(vm_add(&r, &a));
	ck_assert_ptr_nonnull(vm_add(&r, &sh));
	ck_assert_int_eq(vm_registry_save(&r, err, sizeof(err)), 0);
	struct vm_registry s;
	ck_assert_int_eq(vm_registry_load(&s, dir, err, sizeof(err)), 0);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_uint_eq(s.v[1].line, 4);
	s.v[1].line = 0;
	ck_assert_mem_eq(&s.v[1], &r.v[1], sizeof(struct vm));
	ck_assert_int_eq(s.v[1].vf, -1);
	/* a VF search never finds it */
	ck_assert_ptr_null(vm_find_vf(&s, 0x1000, -1));
	/* guid2lid: the dedicated VM's LID, and the PF's LID 5 left to the PF */
	struct guid_map m;
	ck_assert_int_eq(guid_map_init(&m, 16), 0);
	ck_assert_int_eq(guid_map_put(&m, 0x1001, 5), 0);	/* the PF */
	ck_assert_int_eq(vm_registry_lids(&s, &m), 0);
	ck_assert_uint_eq(guid_map_get(&m, 0x1001), 5);
	ck_assert_uint_eq(guid_map_get(&m, 0x21), 7);
	ck_assert_uint_eq(guid_map_get(&m, 0x0a00000000000001ULL), FAB_NONE);
	guid_map_free(&m);
	vm_registry_free(&s);
	vm_registry_free(&r);
	cleanup(dir);
}
END_TEST

/* Each broken file: refused, and the message names the file's line. */
START_TEST(t_registry_broken_names_line)
{
	static const struct {
		const char *text, *where, *what;
	} cases[] = {
		{ "vm a vguid=0x2 lid=3 hypervisor=0x1000 vf=0 vf_guid=0x21 weight=1\n",
		  "/vms:1:", "header" },
		{ "# c\nibsmd-vms 2\n", "/vms:2:", "version" },
		{ "ibsmd-vms 1\n\nvm a vguid=0x2 lid=3 hypervisor=0x1000 vf=0 weight=1\n",
		  "/vms:3:", "missing" },
		{ "ibsmd-vms 1\nvm a vguid=0x2 lid=49152 hypervisor=0x1000 vf=0 vf_guid=0x21 weight=1\n",
		  "/vms:2:", "LID" },
		{ "ibsmd-vms 1\nvm a vguid=0x2 lid=3 hypervisor=0x1000 vf=0 vf_guid=0x21 weight=0\n",
		  "/vms:2:", "weight" },
		{ "ibsmd-vms 1\nvm a vguid=0x2 lid=3 hypervisor=0x1000 vf=0 vf_guid=0x21 weight=1\n"
		  "vm a vguid=0x3 lid=4 hypervisor=0x1000 vf=1 vf_guid=0x31 weight=1\n",
		  "/vms:3:", "name" },
		{ "ibsmd-vms 1\nvm a vguid=0x2 lid=3 hypervisor=0x1000 vf=0 vf_guid=0x21 weight=1 colour=red\n",
		  "/vms:2:", "unknown key" },
		{ "ibsmd-vms 1\nvm a b vguid=0x2\n", "/vms:2:", "key=value" },
		{ "ibsmd-vms 1\nvm a vguid=2 lid=3 hypervisor=0x1000 vf=0 vf_guid=0x21 weight=1\n",
		  "/vms:2:", "GUID" },
		/* a shared-LID VM has no VF */
		{ "ibsmd-vms 1\nvm a vguid=0x2 lid=3 hypervisor=0x1000 vf=0 weight=1 shared=1\n",
		  "/vms:2:", "shared-LID" },
		{ "ibsmd-vms 1\nvm a vguid=0x2 lid=3 hypervisor=0x1000 weight=1 shared=yes\n",
		  "/vms:2:", "shared=1" },
		{ "ibsmd-vms 1\nvm a vguid=0x2 hypervisor=0x1000 weight=1 shared=1\n",
		  "/vms:2:", "shared-LID" },
	};
	char *dir = tmpdir();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[512] = "";
		struct vm_registry r;
		write_vms(dir, cases[i].text);
		ck_assert_msg(vm_registry_load(&r, dir, err, sizeof(err)) == -2,
			      "case %zu accepted", i);
		ck_assert_msg(strstr(err, cases[i].where) && strstr(err, cases[i].what),
			      "case %zu: %s", i, err);
		ck_assert_uint_eq(r.n, 0);
	}
	cleanup(dir);
}
END_TEST

START_TEST(t_apply_flags_weights)
{
	struct fabric f;
	struct config c;
	struct vm_registry r = { 0 };
	load(&f);
	policy(&c, "V-*");
	vswitch_mark(&f, &c, NULL);
	struct vm a = mkvm("a", 0x0200000000000031ULL, 40, 0x1000, 1, 0x31, 3);
	/* a VM whose VF port is no longer that GUID: absent */
	struct vm b = mkvm("b", 0x0200000000000051ULL, 41, 0x2000, 0, 0x99, 1);
	/* a VM on a hypervisor not in the fabric */
	struct vm d = mkvm("d", 0x0200000000000077ULL, 42, 0x7777, 0, 0x71, 1);
	vm_add(&r, &a);
	vm_add(&r, &b);
	vm_add(&r, &d);
	uint32_t f10 = port_of(&f, 0x21), f11 = port_of(&f, 0x31),
		 f20 = port_of(&f, 0x51), pf = port_of(&f, 0x11),
		 h = port_of(&f, 0x61);
	ck_assert_uint_eq(vm_port(&a, &f), f11);
	ck_assert_uint_eq(vm_port(&b, &f), FAB_NONE);
	ck_assert_uint_eq(vm_port(&d, &f), FAB_NONE);

	/* dynamic: idle VFs NOLID, the VM's VF weighted, PF and hosts untouched */
	ck_assert_uint_eq(vm_apply(&r, &f, 0), 1);
	ck_assert(f.ports[f10].flags & FPORT_NOLID);
	ck_assert(f.ports[f20].flags & FPORT_NOLID);
	ck_assert(!(f.ports[f11].flags & FPORT_NOLID));
	ck_assert_uint_eq(f.ports[f11].vm_weight, 3);
	ck_assert_uint_eq(f.ports[f10].vm_weight, 0);
	ck_assert(!(f.ports[pf].flags & FPORT_NOLID));
	ck_assert(!(f.ports[h].flags & FPORT_NOLID));

	/* the LIDs: the VM's comes from guid2lid, idle VFs get none */
	struct guid_map m;
	struct lid_report rep;
	guid_map_init(&m, 64);
	guid_map_put(&m, 0x21, 40);	/* a stale entry holding the VM's LID */
	ck_assert_int_eq(vm_registry_lids(&r, &m), 0);
	ck_assert_uint_eq(guid_map_get(&m, 0x31), 40);
	ck_assert_uint_eq(guid_map_get(&m, 0x21), FAB_NONE);
	ck_assert_int_eq(lids_assign(&f, &m, 0, &rep), 0);
	ck_assert_uint_eq(f.ports[f11].lid, 40);
	ck_assert_uint_eq(f.ports[f10].lid, 0);
	ck_assert_uint_eq(f.ports[f20].lid, 0);
	ck_assert_uint_eq(rep.exhausted, 0);

	/* prepopulated: every VF has a LID; weights stay */
	ck_assert_uint_eq(vm_apply(&r, &f, 1), 1);
	ck_assert(!(f.ports[f10].flags & FPORT_NOLID));
	ck_assert(!(f.ports[f20].flags & FPORT_NOLID));
	ck_assert_uint_eq(f.ports[f11].vm_weight, 3);
	ck_assert_int_eq(lids_assign(&f, &m, 0, &rep), 0);
	ck_assert_uint_ne(f.ports[f10].lid, 0);
	ck_assert_uint_ne(f.ports[f20].lid, 0);
	ck_assert_uint_eq(f.ports[f11].lid, 40);

	/* the VM leaves: its VF is idle again, weight 0 */
	vm_del(&r, vm_find(&r, "a"));
	ck_assert_uint_eq(vm_apply(&r, &f, 0), 0);
	ck_assert(f.ports[f11].flags & FPORT_NOLID);
	ck_assert_uint_eq(f.ports[f11].vm_weight, 0);
	guid_map_free(&m);
	vm_registry_free(&r);
	fabric_free(&f);
}
END_TEST

static Suite *vm_suite(void)
{
	Suite *s = suite_create("vm");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, t_mark_named_shape_only);
	tcase_add_test(tc, t_mark_unnamed_never);
	tcase_add_test(tc, t_registry_round_trip);
	tcase_add_test(tc, t_registry_shared);
	tcase_add_test(tc, t_registry_broken_names_line);
	tcase_add_test(tc, t_apply_flags_weights);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(vm_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
