/*
 * Shared by the tests that run the SM on the emulator (test_sm_emu.c,
 * test_smstate.c): the fabric they use and the devices' state read back.
 * Header-only, static functions: each test program includes it once.
 */
#ifndef IBSMD_EMU_TESTLIB_H
#define IBSMD_EMU_TESTLIB_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "mad/emu.h"
#include "sm/fabric.h"
#include "sm/topo.h"

/* 2 spines, 4 leaves, 3 hosts a leaf (H0..H11, CA GUID 0x1000 + 4h) */
static char *emu_tree_text(void)
{
	size_t cap = 32768, n = 0;
	char *t = malloc(cap);
	ck_assert_ptr_nonnull(t);
#define PUT(...) (n += (size_t)snprintf(t + n, cap - n, __VA_ARGS__))
	for (int l = 0; l < 4; l++) {
		PUT("switchguid=0x%x\nSwitch\t8 \"L%d\"\n", 0x100 + l, l);
		for (int h = 0; h < 3; h++)
			PUT("[%d]\t\"H%d\"[1]\n", h + 1, l * 3 + h);
		PUT("[7]\t\"S0\"[%d]\n[8]\t\"S1\"[%d]\n\n", l + 1, l + 1);
	}
	for (int s = 0; s < 2; s++) {
		PUT("switchguid=0x%x\nSwitch\t8 \"S%d\"\n", 0x200 + s, s);
		for (int l = 0; l < 4; l++)
			PUT("[%d]\t\"L%d\"[%d]\n", l + 1, l, 7 + s);
		PUT("\n");
	}
	for (int h = 0; h < 12; h++)
		PUT("caguid=0x%x\nHca\t1 \"H%d\"\n[1]\t\"L%d\"[%d]\n\n",
		    0x1000 + 4 * h, h, h / 3, h % 3 + 1);
#undef PUT
	ck_assert_uint_lt(n, cap);
	return t;
}

/* The tree of emu_tree_text() in topo and on an emulator seeded with seed. */
static inline struct emu *emu_tree_new(struct fabric *topo, uint64_t seed)
{
	char err[256] = "", *text = emu_tree_text();
	fabric_init(topo);
	ck_assert_msg(topo_parse_string(topo, text, "tree.net", err, sizeof(err)) == 0,
		      "%s", err);
	free(text);
	struct emu *e = emu_new(topo, err, sizeof(err));
	ck_assert_msg(e != NULL, "%s", err);
	emu_set_seed(e, seed);
	return e;
}

/*
 * The devices' state: every port's state and LID (and SM LID when
 * with_smlid), every LFT entry of LIDs 1..40.  Read from the emulated
 * devices, never from the SM's memory.
 */
static char *emu_device_state(const struct emu *e, const struct fabric *f,
			      int with_smlid)
{
	size_t cap = 1 << 20, n = 0;
	char *s = malloc(cap);
	ck_assert_ptr_nonnull(s);
	s[0] = '\0';
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		for (int p = nd->type == FAB_SWITCH ? 0 : 1; p <= nd->nports; p++) {
			n += (size_t)snprintf(s + n, cap - n, "%llx[%d] state %d lid %d",
				(unsigned long long)nd->guid, p,
				emu_port_state(e, nd->guid, p),
				emu_port_lid(e, nd->guid, p));
			if (with_smlid)
				n += (size_t)snprintf(s + n, cap - n, " smlid %d",
						      emu_port_smlid(e, nd->guid, p));
			n += (size_t)snprintf(s + n, cap - n, "\n");
		}
		if (nd->type != FAB_SWITCH)
			continue;
		for (uint32_t lid = 1; lid <= 40; lid++)
			n += (size_t)snprintf(s + n, cap - n, "%llx lid %u -> %d\n",
				(unsigned long long)nd->guid, lid,
				emu_lft_entry(e, nd->guid, lid));
	}
	ck_assert_uint_lt(n, cap);
	return s;
}

#endif
