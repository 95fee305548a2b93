/* Persistent state in the state directory, written atomically. */
#ifndef IBSMD_STATE_H
#define IBSMD_STATE_H

#include <stddef.h>

#include "sm/base/fabric.h"

/*
 * The state directory's files; the first STATE_FILES_KEPT hold what a
 * start must not lose (LIDs, VMs); the hosts subscribe again, the
 * weights are learned again, the scheduler starts its jobs again, and
 * the neighbour map (sm/model/neighbors.h) is found again by the sweeps
 * (mkey.secret, sm/model/mkeys.h, when the policy keeps it here: its
 * loss gives every port a new key, a start with it absent makes one).
 */
#define STATE_FILES { "guid2lid", "vms", "subscriptions", "weights", "services", \
		      "jobs", "neighbors", "mkey.secret" }
#define STATE_FILES_KEPT 2

/*
 * Before the fabric is touched: DIR exists (made) and a file can be
 * written and synced there; temporary files a killed ibsmd left are
 * removed (logged); a guid2lid or vms set aside as corrupt
 * (NAME.corrupt.*) refuses the start until the operator repairs or
 * removes it.  0, or -1 with err.
 */
int state_prepare(const char *dir, char *err, size_t errlen);
/*
 * DIR/NAME could not be read (err says where): renames it to
 * NAME.corrupt.TIMESTAMP and appends to err where it went and what the
 * operator may do.
 */
void state_set_aside(const char *dir, const char *name, char *err, size_t errlen);

/*
 * Reads DIR/guid2lid into m: GUID -> LID, and the last-seen time (seconds
 * since the epoch, 0 when the file has none) as each key's second value
 * (guid_map_get_aux).  An absent file is an empty table.  Only a regular
 * file is read.  -1 (err): cannot be read; -2 (err "PATH:LINE: why"): its
 * contents are corrupt or truncated.
 */
int state_load_guid2lid(const char *dir, struct guid_map *m, char *err,
			size_t errlen);
/* Writes m to DIR/guid2lid: temp file, fsync, rename, fsync of DIR. */
int state_save_guid2lid(const char *dir, const struct guid_map *m, char *err,
			size_t errlen);

#endif
