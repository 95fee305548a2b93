/*
 * vSwitch detection (the vSwitch paper, Section 5: a vSwitch has "only
 * one upward link", which alone does not tell a vSwitch from a leaf with
 * one uplink; hence the names and the shape below).  The policy names
 * the vSwitches (virtualization.vswitches: node-description patterns as
 * fnmatch(3) takes them, or "0x" node GUIDs); a switch it names is marked
 * FNODE_VSWITCH when it has a vSwitch's shape: exactly one link to another
 * switch, only CAs on its other linked ports.  One it names without that
 * shape is not marked and is logged.  The automatic rule (that shape, not
 * named) only proposes: a candidate is logged, never marked, so a
 * degraded leaf with one surviving uplink never becomes a vSwitch.
 */
#ifndef IBSMD_VSWITCH_H
#define IBSMD_VSWITCH_H

#include <stdint.h>

#include "sm/model/config.h"
#include "sm/base/fabric.h"

struct vswitch_report {
	uint32_t marked;	/* vSwitches in f */
	uint32_t misshapen;	/* named, but not a vSwitch's shape */
	uint32_t candidates;	/* the shape, not named */
};

/* Marks f's vSwitches from c; fills rep (may be NULL). */
void vswitch_mark(struct fabric *f, const struct config *c,
		  struct vswitch_report *rep);

#endif
