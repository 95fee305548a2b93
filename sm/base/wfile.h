/*
 * A file replaced atomically (bottom layer: anyone may use it): written
 * to PATH.tmp.PID, flushed and synced, renamed over PATH, and its
 * directory synced, so a crash leaves the old file or the new one, never
 * a part.  The state directory's files (guid2lid, vms, subscriptions)
 * are written this way, and read with rfile_open() (regular files only).
 */
#ifndef IBSMD_WFILE_H
#define IBSMD_WFILE_H

#include <stddef.h>
#include <stdio.h>

struct wfile {
	FILE *fp;		/* write the contents here */
	char path[4096];
	char tmp[4200];
};

/* Makes path's directories as needed and opens the temporary file. */
int wfile_open(struct wfile *w, const char *path, char *err, size_t errlen);
/* Syncs and renames over path; 0, or -1 with err (the temporary removed). */
int wfile_commit(struct wfile *w, char *err, size_t errlen);
/* Gives up: closes and removes the temporary file. */
void wfile_abort(struct wfile *w);

/*
 * Removes what a killed writer left of DIR/NAME: NAME.tmp.PID files whose
 * PID is not a live process (or is ours).  Returns how many went, -1 when
 * DIR cannot be read (ENOENT: 0).
 */
int wfile_clean_temps(const char *dir, const char *name);
/*
 * mkdir -p DIR, then writes, syncs and removes a probe file in it
 * (WFILE_PROBE.tmp.PID; wfile_clean_temps(DIR, WFILE_PROBE) removes one
 * a kill left): 0 when state written there could be replaced atomically,
 * -1 with err.
 */
int wfile_check_dir(const char *dir, char *err, size_t errlen);
#define WFILE_PROBE ".ibsmd-probe"
/*
 * Renames PATH to PATH.corrupt.YYYYmmddTHHMMSS (kept for the operator);
 * the new name in aside.  0, or -1 with errno.
 */
int wfile_set_aside(const char *path, char *aside, size_t len);
/*
 * Opens PATH for reading when it is a regular file (after symlinks) of at
 * most max bytes (0: no limit): a FIFO, a device or /dev/zero behind a
 * link is refused at once, never read.  NULL with errno (ENOENT for an
 * absent file) and err naming the path.
 */
FILE *rfile_open(const char *path, long long max, char *err, size_t errlen);

#endif
