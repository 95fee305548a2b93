/*
 * Topology files: ibsim net files and ibnetdiscover output, one parser.
 *
 * Both formats are records of a header line ("Switch 24 "id"", "Ca 2 "id"",
 * "Hca ...", "Rt ...") followed by one line per cabled port
 * ("[1]  "peer-id"[3]"), optionally preceded by id lines (switchguid=,
 * caguid=, rtguid=, sysimgguid=, vendid=, devid=).  The quoted name is the
 * node's id, used to resolve links; the node description is the quoted
 * text after '#' on the header line when there is one (ibnetdiscover
 * output), else the id itself (plain ibsim net files).
 *
 * GUIDs follow ibsim: a switchguid=/caguid=/rtguid= line sets the next GUID
 * of that node type, and each following record of the type takes it and
 * advances it (a switch by 1, a CA by nports + 1).  CA port N has GUID
 * node GUID + N unless the port line gives one ("[1](guid)"); switch ports
 * share the node GUID (or the "(guid)" of the switchguid= line).  A record
 * with no guid line of its own takes the GUID in its ibnetdiscover id
 * ("S-0002c90000000001") if it has one, else the next of ibsim's sequence
 * if an earlier line started one, else a GUID derived from a hash of its
 * name, so that reordering records does not change GUIDs.  ibsim numbers
 * such nodes by file order instead (from 0x200000 for switches, 0x100000
 * for CAs), so files meant to be compared with a running ibsim should
 * carry an explicit guid line per record (the test generator writes them).
 *
 * Ports: every port of every node is FPORT_PRESENT (port 0 of switches,
 * not of CAs).  Cabled ports are INIT/LinkUp, others DOWN/Polling, switch
 * port 0 ACTIVE/LinkUp, as ibsim starts them.  Width and speed are 4X SDR
 * unless the file says otherwise (width=/speed= lines, w=/s= port options
 * as enabled masks, or an ibnetdiscover "4xQDR" hint); MTUCap 4096 (5),
 * VLCap VL0-7 (4, or v=).  LIDs and LMCs come from the ibnetdiscover
 * comments ("base port 0 lid N lmc M" on switches, "# lid N lmc M" on CA
 * port lines) into both lid and hw_lid; f->lmc is the largest LMC read.
 * f->sm_node is the node of "# Initiated from node ..." when present, else
 * the first record (where an ibsim client attaches without SIM_HOST).
 */
#ifndef IBSMD_TOPO_H
#define IBSMD_TOPO_H

#include <stddef.h>
#include <stdio.h>

#include "sm/base/fabric.h"

/*
 * fab_port.speed_active as filled by the parser and read by the dumper:
 * PortInfo:LinkSpeedActive in the low nibble, LinkSpeedExtActive in the
 * high nibble.
 */
#define TOPO_SPEED_SDR 0x01
#define TOPO_SPEED_DDR 0x02
#define TOPO_SPEED_QDR 0x04
#define TOPO_SPEED_FDR 0x14
#define TOPO_SPEED_EDR 0x24
#define TOPO_SPEED_HDR 0x44
#define TOPO_SPEED_NDR 0x84

/* fab_port.width_active: PortInfo:LinkWidthActive. */
#define TOPO_WIDTH_1X  0x01
#define TOPO_WIDTH_4X  0x02
#define TOPO_WIDTH_8X  0x04
#define TOPO_WIDTH_12X 0x08
#define TOPO_WIDTH_2X  0x10

/*
 * Parses text (named name in messages) into *f, which must have been set
 * up with fabric_init().  On success the previous content of *f is freed
 * and replaced, and 0 is returned.  On error *f is left untouched, -1 is
 * returned and err holds "name:line: reason".
 */
int topo_parse_string(struct fabric *f, const char *text, const char *name,
		      char *err, size_t errlen);
/* Same for a file ("-" is not special). */
int topo_load(struct fabric *f, const char *path, char *err, size_t errlen);

/*
 * The writer (topodump.c): the fabric as `ibnetdiscover` prints it
 * (switches, then CAs, then routers; cabled ports only), with the LIDs of
 * ports[].lid and f->lmc.  Node ids are "S-<guid>", "H-<guid>",
 * "R-<guid>".  topo_load() reads it back to the same nodes, GUIDs,
 * descriptions, links, LIDs and link width/speed ('"' in a description is
 * written as '\'').  Returns 0, or -1 when writing failed.
 */
int dump_topology(const struct fabric *f, FILE *out);

/* "SDR", "4x", ... for a speed_active / width_active value, "?" if unknown. */
const char *topo_speed_str(unsigned speed);
const char *topo_width_str(unsigned width);

#endif
