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
 * reason in err, and then nothing changed (SM_ERR_RELOAD set).  Unless
 * force, a file that sets nothing where the running policy set keys, or
 * one that drops the SM_Key or every partition, is refused the same way.
 */
int sm_reload(struct sm *sm, int force, char *err, size_t errlen);

#endif
