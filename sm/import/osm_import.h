/*
 * ibsmd --import-opensm: OpenSM's configuration files translated to an
 * ibsmd policy and state directory (ibsmd.yaml(5), COMING FROM OPENSM;
 * ibsmd(8), IMPORTING FROM OPENSM).  A pure translator: it reads files and
 * writes two, and touches no fabric.
 */
#ifndef IBSMD_OSM_IMPORT_H
#define IBSMD_OSM_IMPORT_H

#include <stddef.h>
#include <stdio.h>

/*
 * Reads paths[0..n) (OpenSM's opensm.conf, partitions.conf,
 * qos-policy.conf, guid2lid, root/cn GUID files, node-name map, or a
 * directory holding them under OpenSM's names) and writes DIR/ibsmd.yaml
 * and DIR/guid2lid, then loads the written policy as `ibsmd -n` does.
 * One "import: warning: ..." line per option with no counterpart goes to
 * warn.  0, or -1 with err ("FILE:LINE: why" for bad input).
 */
int osm_import(const char *const *paths, int n, const char *dir, FILE *warn,
	       char *err, size_t errlen);

#endif
