/*
 * The process's descriptor limit (RLIMIT_NOFILE): its owners size what
 * they hold open (connections, clients) below it, and raise the soft
 * limit towards the hard one when what they may hold needs more.
 */
#ifndef IBSMD_FDLIMIT_H
#define IBSMD_FDLIMIT_H

/*
 * Raises the soft limit to need if it is lower and the hard limit
 * allows.  0: the limit is at least need; -1: it is not (*have: the
 * limit now).
 */
int fdlimit_raise(unsigned long need, unsigned long *have);

#endif
