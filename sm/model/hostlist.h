/*
 * Host lists in Slurm's syntax (SLURM_JOB_NODELIST, scontrol show
 * hostnames): names separated by commas; a bracket holds numbers and
 * ranges separated by commas ("H-[0-3,7]"); a name may have several
 * brackets, expanded left to right as Slurm does ("r[1-2]-n[0-1]" is
 * r1-n0, r1-n1, r2-n0, r2-n1); a range keeps its lower bound's width
 * ("n[08-10]" is n08, n09, n10).  Pure: no fabric, no I/O.
 */
#ifndef IBSMD_HOSTLIST_H
#define IBSMD_HOSTLIST_H

#include <stddef.h>

#define HOSTLIST_MAX_NAMES 65536	/* more hosts than any fabric ibsim or
					   the LID space holds */
#define HOSTLIST_MAX_NAME 128		/* one expanded name, its NUL included */

struct hostlist {
	char **name;		/* expanded, in the list's order */
	size_t n;
};

/*
 * Expands spec into h (hostlist_free frees it).  0, or -1 with the
 * reason in err (an empty name, an unclosed or nested bracket, a range
 * that is not lo-hi with lo <= hi, more than HOSTLIST_MAX_NAMES names,
 * a name longer than HOSTLIST_MAX_NAME - 1, no memory); h is then empty.
 */
int hostlist_expand(const char *spec, struct hostlist *h, char *err,
		    size_t errlen);
void hostlist_free(struct hostlist *h);

#endif
