/*
 * A file replaced atomically (bottom layer: anyone may use it): written
 * to PATH.tmp.PID, flushed and synced, renamed over PATH, and its
 * directory synced, so a crash leaves the old file or the new one, never
 * a part.  The state directory's files (guid2lid, subscriptions) are
 * written this way.
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

#endif
