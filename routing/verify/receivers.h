/*
 * The receivers of --verify --receivers (contention.h): the CA ports a
 * file names, or R drawn at random on every leaf switch.  Pure: the
 * caller reads the file.
 *
 * A file holds one CA port a line, by node description, node-name map
 * name, port or node GUID (0x...) or LID (endport_find(), hol.h); the
 * whole line is the name (blanks and double quotes around it are
 * dropped, '#' starts a comment).
 *
 * random:R[,PARTITION] takes R flow ends (contention_flow_end()) on each
 * switch they are cabled to, members of PARTITION when given (full or
 * limited), all of a switch's when it has R or fewer; the draw is a
 * seeded shuffle of each switch's candidates in port GUID order, the
 * switches in GUID order, so the same fabric and seed give the same
 * receivers whatever the order of the topology file.
 */
#ifndef IBSMD_RECEIVERS_H
#define IBSMD_RECEIVERS_H

#include <stddef.h>
#include <stdint.h>

#include "routing/engine.h"

#define RECEIVERS_MAX_PER_LEAF 65535

/*
 * spec: 1 when it is "random:R[,PARTITION]" (R, the partition's name
 * into part, "" when none), 0 when it is not random: (a file), -1 with
 * err when it is random: but malformed.
 */
int receivers_spec(const char *spec, uint32_t *per_leaf, char *part,
		   size_t partlen, char *err, size_t errlen);

/*
 * The receivers file's text into recv[pi] = 1 (f->n_ports entries,
 * zeroed here).  Their count, or -1 with err "fname:line: reason" (an
 * unknown name, a port not cabled to a switch, a name given twice, a
 * file naming none).
 */
int receivers_parse(const struct fabric *f, const char *text,
		    const char *fname, uint8_t *recv, char *err, size_t errlen);

/*
 * random:per_leaf[,part] drawn with seed into recv (zeroed here).  Their
 * count, or -1 with err (no partition of that name in m, no candidate,
 * or ENOMEM).
 */
int receivers_random(const struct fabric *f, const struct part_model *m,
		     uint32_t per_leaf, const char *part, uint64_t seed,
		     uint8_t *recv, char *err, size_t errlen);

#endif
