/*
 * The human-readable rendering of a control-socket reply, for ibsmctl
 * without --json.  Pure formatting: no socket, no event loop.
 */
#ifndef IBSMD_CTLRENDER_H
#define IBSMD_CTLRENDER_H

#include <stdio.h>

#include <jansson.h>

/*
 * Prints a successful reply: a top-level "text" string verbatim and
 * alone; otherwise every key but "ok" as "key: value" lines in insertion
 * order, nested objects indented two spaces, arrays of objects as blocks
 * separated by blank lines, arrays of scalars joined with ", ".  A number
 * "X_time" (seconds since the epoch) as ISO 8601 UTC, or not at all when a
 * string "X_date" beside it says it.
 */
void control_print_text(FILE *fp, const json_t *reply);

#endif
