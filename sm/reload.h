/*
 * The policy re-read at run time (SIGHUP, ibsmctl reload): each owner
 * takes what changed for it; what the command line set is kept.
 */
#ifndef IBSMD_RELOAD_H
#define IBSMD_RELOAD_H

#include <stddef.h>

struct sm;

/*
 * Re-reads the policy file.  Returns 0, or -1 with the file:line:column
 * reason in err, and then nothing changed (SM_ERR_RELOAD set).
 */
int sm_reload(struct sm *sm, char *err, size_t errlen);

#endif
