#include "wfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The directory part of path: "." for none, "/" for the root. */
static void dir_of(const char *path, char *dir, size_t len)
{
	snprintf(dir, len, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, len, ".");
	else if (slash == dir)
		snprintf(dir, len, "/");
	else
		*slash = '\0';
}

/* mkdir -p dir */
static int make_dirs(char *dir)
{
	for (char *s = dir + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		int r = mkdir(dir, 0755);
		*s = '/';
		if (r < 0 && errno != EEXIST)
			return -1;
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

int wfile_open(struct wfile *w, const char *path, char *err, size_t errlen)
{
	char dir[4096];
	w->fp = NULL;
	snprintf(w->path, sizeof(w->path), "%s", path);
	dir_of(path, dir, sizeof(dir));
	if (make_dirs(dir) < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(w->tmp, sizeof(w->tmp), "%s.tmp.%d", path, (int)getpid());
	w->fp = fopen(w->tmp, "w");
	if (!w->fp) {
		snprintf(err, errlen, "%s: %s", w->tmp, strerror(errno));
		return -1;
	}
	return 0;
}

void wfile_abort(struct wfile *w)
{
	if (w->fp)
		fclose(w->fp);
	w->fp = NULL;
	unlink(w->tmp);
}

int wfile_commit(struct wfile *w, char *err, size_t errlen)
{
	char dir[4096];
	if (fflush(w->fp) != 0 || fsync(fileno(w->fp)) < 0) {
		snprintf(err, errlen, "%s: %s", w->tmp, strerror(errno));
		wfile_abort(w);
		return -1;
	}
	fclose(w->fp);
	w->fp = NULL;
	if (rename(w->tmp, w->path) < 0) {
		snprintf(err, errlen, "%s: %s", w->path, strerror(errno));
		unlink(w->tmp);
		return -1;
	}
	dir_of(w->path, dir, sizeof(dir));
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}
