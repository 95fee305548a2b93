/*
 * A hypervisor fabric for the vSwitch tests (test_migrate.c,
 * test_vmexec_emu.c), as an ibsim net-file: a 2-level tree whose leaves
 * hold hypervisors, each a vSwitch "V-<l>-<i>" with its PF and VFs.
 * Header-only, static functions: each test program includes it once.
 */
#ifndef IBSMD_VSWITCH_TESTLIB_H
#define IBSMD_VSWITCH_TESTLIB_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu.h"
#include "sm/base/fabric.h"
#include "sm/base/topo.h"

#define HV_LEAVES 4
#define HV_PER_LEAF 3
#define HV_VFS 4

/*
 * Spines S0, S1 (8 ports: leaves on 1..4); leaves L<l> (8 ports:
 * vSwitches on 1..3, host H<l> on 4, spines on 7, 8); vSwitch V-<l>-<i>
 * (6 ports: leaf on 1, PF P-<l>-<i> on 2, VF F-<l>-<i>-<k> on 3..6).
 * CA GUIDs are 4 apart: a CA's port GUID (node GUID + 1) is no other
 * node's GUID, so the emulator attaches a client to it.
 */
static inline char *hv_text(void)
{
	size_t cap = 1 << 16, n = 0;
	char *t = malloc(cap);
	ck_assert_ptr_nonnull(t);
#define PUT(...) (n += (size_t)snprintf(t + n, cap - n, __VA_ARGS__))
	for (int s = 0; s < 2; s++) {
		PUT("switchguid=0x%x\nSwitch\t8 \"S%d\"\n", 0x100 + s, s);
		for (int l = 0; l < HV_LEAVES; l++)
			PUT("[%d]\t\"L%d\"[%d]\n", l + 1, l, 7 + s);
		PUT("\n");
	}
	for (int l = 0; l < HV_LEAVES; l++) {
		PUT("switchguid=0x%x\nSwitch\t8 \"L%d\"\n", 0x200 + l, l);
		for (int i = 0; i < HV_PER_LEAF; i++)
			PUT("[%d]\t\"V-%d-%d\"[1]\n", i + 1, l, i);
		PUT("[4]\t\"H%d\"[1]\n", l);
		PUT("[7]\t\"S0\"[%d]\n[8]\t\"S1\"[%d]\n\n", l + 1, l + 1);
		PUT("caguid=0x%x\nHca\t1 \"H%d\"\n[1]\t\"L%d\"[4]\n\n",
		    0x1000 + 4 * l, l, l);
		for (int i = 0; i < HV_PER_LEAF; i++) {
			int h = l * HV_PER_LEAF + i;
			PUT("switchguid=0x%x\nSwitch\t6 \"V-%d-%d\"\n", 0x300 + h, l, i);
			PUT("[1]\t\"L%d\"[%d]\n", l, i + 1);
			PUT("[2]\t\"P-%d-%d\"[1]\n", l, i);
			for (int k = 0; k < HV_VFS; k++)
				PUT("[%d]\t\"F-%d-%d-%d\"[1]\n", 3 + k, l, i, k);
			PUT("\ncaguid=0x%x\nHca\t1 \"P-%d-%d\"\n[1]\t\"V-%d-%d\"[2]\n\n",
			    0x2000 + 32 * h, l, i, l, i);
			for (int k = 0; k < HV_VFS; k++)
				PUT("caguid=0x%x\nHca\t1 \"F-%d-%d-%d\"\n[1]\t\"V-%d-%d\"[%d]\n\n",
				    0x2000 + 32 * h + 4 * (1 + k), l, i, k, l, i, 3 + k);
		}
	}
#undef PUT
	ck_assert_uint_lt(n, cap);
	return t;
}

/* The node named name in f. */
static inline uint32_t hv_find(const struct fabric *f, const char *name)
{
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (!strcmp(f->nodes[i].desc, name))
			return i;
	ck_abort_msg("no node %s", name);
	return FAB_NONE;
}

/* VF k of hypervisor (l, i) in f: its end port. */
static inline uint32_t hv_vf_port(const struct fabric *f, int l, int i, int k)
{
	char name[32];
	snprintf(name, sizeof(name), "F-%d-%d-%d", l, i, k);
	return fabric_port(f, hv_find(f, name), 1);
}

/* What virtualization.vswitches ["V-*"] marks. */
static inline void hv_mark(struct fabric *f)
{
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (!strncmp(f->nodes[i].desc, "V-", 2))
			f->nodes[i].flags |= FNODE_VSWITCH;
}

/*
 * The port GUID where a packet for lid ends, following emulator e's
 * switch LFTs from switch sw of topology f; 0 when it is dropped, loops,
 * or falls above a switch's LinearFDBTop.  (Needs mad/emu/emu.h.)
 */
static inline uint64_t hv_walk(const struct emu *e, const struct fabric *f,
			       uint32_t sw, uint32_t lid)
{
	for (int hops = 0; hops < 16; hops++) {
		uint64_t g = f->nodes[sw].guid;
		int p = emu_lft_entry(e, g, lid);
		if ((int)lid > emu_lft_top(e, g) || p <= 0 || p == 0xff ||
		    p > f->nodes[sw].nports)
			return 0;
		uint32_t rem = fabric_portp(f, sw, (unsigned)p)->remote;
		if (rem == FAB_NONE)
			return 0;
		if (f->nodes[f->ports[rem].node].type != FAB_SWITCH)
			return f->ports[rem].guid;
		sw = f->ports[rem].node;
	}
	return 0;
}

/* Every switch of f sends lid to port GUID g on emulator e. */
static inline void hv_reaches(const struct emu *e, const struct fabric *f,
			      uint32_t lid, uint64_t g)
{
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (f->nodes[n].type == FAB_SWITCH && hv_walk(e, f, n, lid) != g)
			ck_abort_msg("%s: LID %u goes to 0x%llx, not 0x%llx",
				     f->nodes[n].desc, lid,
				     (unsigned long long)hv_walk(e, f, n, lid),
				     (unsigned long long)g);
}

#endif
