/* Persistent state in the state directory, written atomically. */
#ifndef IBSMD_STATE_H
#define IBSMD_STATE_H

#include <stddef.h>

#include "fabric.h"

/*
 * Reads DIR/guid2lid into m: GUID -> LID, and the last-seen time (seconds
 * since the epoch, 0 when the file has none) as each key's second value
 * (guid_map_get_aux).  An absent file is an empty table.
 */
int state_load_guid2lid(const char *dir, struct guid_map *m, char *err,
			size_t errlen);
/* Writes m to DIR/guid2lid: temp file, fsync, rename, fsync of DIR. */
int state_save_guid2lid(const char *dir, const struct guid_map *m, char *err,
			size_t errlen);

#endif
