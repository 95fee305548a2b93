/*
 * ibsmctl status without --json: a screenful of what an operator looks at
 * first, rendered from the reply's JSON (ibsmctl(8), "status").  Pure
 * formatting: no socket, no event loop.
 */
#ifndef IBSMD_CTLSTATUS_H
#define IBSMD_CTLSTATUS_H

#include <stdio.h>

#include <jansson.h>

/* The summary of a status reply; --verbose prints control_print_text's. */
void status_print_summary(FILE *fp, const json_t *reply);

#endif
