/*
 * Whether a file that is not an ibsmd policy looks like one of OpenSM's
 * configuration files, so that ibsmd -n and a reload can say so and point
 * at the importer (ibsmd --import-opensm, ibsmd(8)) instead of leaving the
 * admin with a YAML parser's message.
 */
#ifndef IBSMD_OSMFILE_H
#define IBSMD_OSMFILE_H

#include <stdio.h>

/*
 * "opensm.conf" (two or more "option value" lines, OpenSM's syntax),
 * "partitions.conf" (a "Name=0xPKEY ... :" line) or "qos-policy.conf" (a
 * "qos-levels"-style section line), read from f's start; NULL for none.
 * Reads at most OSMFILE_SCAN_LINES lines; f is rewound.
 */
#define OSMFILE_SCAN_LINES 200
const char *osmfile_kind(FILE *f);

#endif
