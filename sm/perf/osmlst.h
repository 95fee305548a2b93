/*
 * OpenSM's topology dump, opensm-subnet.lst, read into the fabric model
 * (for the fabric baseline, sm/perf/baseline.h).  OpenSM writes it after
 * every heavy sweep into its dump_files_dir; one line per cabled port of
 * every node, so each cable twice:
 *
 *   { SW Ports:04 SystemGUID:… NodeGUID:… PortGUID:… VenID:… DevID:…
 *     Rev:… {description} LID:0002 PN:01 } { CA-SM Ports:01 … PN:01 }
 *     PHY=4x LOG=ACT SPD=2.5
 *
 * (one line in the file).  TYPE is SW, CA or Rt, "-SM" marks the port of
 * the master SM; numbers are hexadecimal; LID is a switch's port 0 LID
 * or a CA port's; PHY is the link width, SPD the speed in Gb/s per lane
 * (2.5, 5, 10, FDR10, 14, 25, 50, "??" when unknown), LOG the port state.
 *
 * The model: every node once by NodeGUID, its ports present and DOWN
 * (switch port 0 ACTIVE), cabled ports at the state, width and speed of
 * their line, GUIDs, LIDs, SystemGUID, VenID, DevID, Rev and description
 * as given; f->sm_node and sm_port are the "-SM" end's, else the first
 * node's.
 */
#ifndef IBSMD_OSMLST_H
#define IBSMD_OSMLST_H

#include <stddef.h>

#include "sm/base/fabric.h"

/* Does text look like opensm-subnet.lst (first non-blank character '{')? */
int osmlst_detect(const char *text);

/*
 * Parses text (named name in messages) into *f (set up with
 * fabric_init()); the old content is freed on success.  0, or -1 with err
 * "name:line: reason" and *f untouched.  A node whose type, port count or
 * GUIDs differ between lines, a port beyond its node's ports, a port
 * cabled to two peers, and a file with no line are refused.
 */
int osmlst_parse_string(struct fabric *f, const char *text, const char *name,
			char *err, size_t errlen);

#endif
