/*
 * CPU placement of the MAD path.  Under umad2sim every MAD crosses two
 * threads of ours: umad2sim's receiver (it reads ibsim's socket) and the
 * loop.  Left to the scheduler on a 2-core machine, the receiver is often
 * woken on the core ibsim is busy on and waits there for milliseconds
 * while the other core idles; kept on one core with the loop, the handoff
 * never waits behind the simulator.  Compute threads (routing) keep the
 * CPUs the process started with.
 */
#ifndef IBSMD_CPU_H
#define IBSMD_CPU_H

#include <pthread.h>
#include <stddef.h>

/*
 * Puts every thread the process has now on the CPU the caller runs on.
 * Returns that CPU, or -1 with the reason in err (nothing changed).
 */
int cpu_keep_together(char *err, size_t errlen);
/* For a compute thread: the CPUs the process had before (no-op if unpinned). */
void cpu_worker_attr(pthread_attr_t *a);

#endif
