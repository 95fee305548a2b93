#define _GNU_SOURCE
#include "sm/base/cpu.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The process's CPUs before cpu_keep_together(), for compute threads. */
static cpu_set_t before;
static int pinned;

/* Every thread of the process on the CPUs of s; -1 with errno set. */
static int set_all(const cpu_set_t *s)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	struct dirent *e;
	int rc = 0;
	while ((e = readdir(d)) != NULL) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		if (sched_setaffinity((pid_t)tid, sizeof(*s), s) < 0 && errno != ESRCH) {
			rc = -1;
			break;
		}
	}
	int saved = errno;
	closedir(d);
	errno = saved;
	return rc;
}

int cpu_keep_together(char *err, size_t errlen)
{
	cpu_set_t old, one;
	int cpu = sched_getcpu();
	if (cpu < 0 || sched_getaffinity(0, sizeof(old), &old) < 0) {
		snprintf(err, errlen, "cannot read the CPU affinity: %s", strerror(errno));
		return -1;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (set_all(&one) < 0) {
		snprintf(err, errlen, "cannot set the CPU affinity: %s", strerror(errno));
		set_all(&old);
		return -1;
	}
	before = old;
	pinned = 1;
	return cpu;
}

void cpu_worker_attr(pthread_attr_t *a)
{
	if (pinned)
		pthread_attr_setaffinity_np(a, sizeof(before), &before);
}
