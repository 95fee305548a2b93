/* The process's descriptor limit (sm/base/fdlimit.h). */
#include "sm/base/fdlimit.h"

#include <sys/resource.h>

int fdlimit_raise(unsigned long need, unsigned long *have)
{
	struct rlimit r;
	if (getrlimit(RLIMIT_NOFILE, &r) < 0) {
		*have = 0;
		return -1;
	}
	if (r.rlim_cur == RLIM_INFINITY || r.rlim_cur >= need)
		return 0;
	rlim_t want = r.rlim_max == RLIM_INFINITY || r.rlim_max >= need ? need : r.rlim_max;
	if (want > r.rlim_cur) {
		struct rlimit n = { want, r.rlim_max };
		if (setrlimit(RLIMIT_NOFILE, &n) == 0)
			r.rlim_cur = want;
	}
	*have = (unsigned long)r.rlim_cur;
	return r.rlim_cur >= need ? 0 : -1;
}
