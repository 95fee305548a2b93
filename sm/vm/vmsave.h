/*
 * The VM registry's file (STATE_DIR/vms, sm/model/vm.h) written off the
 * event loop: a burst of changes (a hypervisor's GUIDInfoRecord Sets)
 * costs one write, VMSAVE_DELAY_MS after its first change, and the
 * write -- O(VMs) bytes, an fsync, a rename -- runs on a worker thread
 * (sm/base/worker.h) from a copy of the text taken on the loop, so the
 * loop never waits for the disk.  A write that fails is logged and
 * reported as the state error (ibsmctl status) until one succeeds.
 */
#ifndef IBSMD_VMSAVE_H
#define IBSMD_VMSAVE_H

#include <stddef.h>

#define VMSAVE_DELAY_MS 50	/* changes within this share one write */

struct event_base;
struct sm_errors;
struct vm_registry;
struct vmsave;

/* A writer of r's file; errs takes its failures.  NULL on ENOMEM. */
struct vmsave *vmsave_new(struct event_base *base, const struct vm_registry *r,
			  struct sm_errors *errs);
/* r changed: its file follows within VMSAVE_DELAY_MS. */
void vmsave_soon(struct vmsave *s);
/*
 * Writes r's file now, on the caller's thread, after the write under way
 * (if any) ended; what was pending is in it.  0, or -1 with err.
 */
int vmsave_now(struct vmsave *s, char *err, size_t errlen);
/* Writes what is pending (at once), then frees. */
void vmsave_free(struct vmsave *s);

#endif
