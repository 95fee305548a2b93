#include "sm/base/wfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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
	int fd = open(w->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		      0644);
	w->fp = fd < 0 ? NULL : fdopen(fd, "w");
	if (!w->fp) {
		if (fd >= 0)
			close(fd);
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
	if (ferror(w->fp)) {	/* a write failed before the flush (ENOSPC...) */
		snprintf(err, errlen, "%s: write error", w->tmp);
		wfile_abort(w);
		return -1;
	}
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

/* "NAME.tmp.PID" with a PID that is not running (or is ours): left by a kill. */
static int stale_temp(const char *entry, const char *name)
{
	size_t n = strlen(name);
	if (strncmp(entry, name, n) || strncmp(entry + n, ".tmp.", 5))
		return 0;
	const char *digits = entry + n + 5;
	char *end;
	long pid = strtol(digits, &end, 10);
	if (end == digits || *end || pid <= 0)
		return 0;
	return pid == (long)getpid() || (kill((pid_t)pid, 0) < 0 && errno == ESRCH);
}

int wfile_clean_temps(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (!stale_temp(de->d_name, name))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0)
			n++;
	}
	closedir(d);
	return n;
}

int wfile_check_dir(const char *dir, char *err, size_t errlen)
{
	char d[4096], probe[4200];
	snprintf(d, sizeof(d), "%s", dir);
	if (make_dirs(d) < 0) {
		snprintf(err, errlen, "%s: cannot create it: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(probe, sizeof(probe), "%s/%s.tmp.%d", dir, WFILE_PROBE, (int)getpid());
	int fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot write in it: %s", dir, strerror(errno));
		return -1;
	}
	int bad = write(fd, "probe\n", 6) != 6 || fsync(fd) < 0;
	int e = errno;
	close(fd);
	unlink(probe);
	if (bad) {
		snprintf(err, errlen, "%s: cannot write in it: %s", dir, strerror(e));
		return -1;
	}
	return 0;
}

int wfile_set_aside(const char *path, char *aside, size_t len)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", localtime_r(&now, &tm));
	snprintf(aside, len, "%s.corrupt.%s", path, stamp);
	return rename(path, aside);
}

FILE *rfile_open(const char *path, long long max, char *err, size_t errlen)
{
	struct stat st;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	int e = 0;
	if (fstat(fd, &st) < 0) {
		e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
	} else if (!S_ISREG(st.st_mode)) {
		e = EINVAL;
		snprintf(err, errlen, "%s: not a regular file (%s): refused",
			 path, S_ISFIFO(st.st_mode) ? "a FIFO" :
			 S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" :
			 S_ISDIR(st.st_mode) ? "a directory" : "a socket");
	} else if (max > 0 && (long long)st.st_size > max) {
		e = EFBIG;
		snprintf(err, errlen, "%s: %lld bytes, more than the %lld allowed",
			 path, (long long)st.st_size, max);
	} else if (fcntl(fd, F_SETFL, 0) < 0) {
		e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
	}
	FILE *fp = e ? NULL : fdopen(fd, "r");
	if (!fp) {
		if (!e) {
			e = errno;
			snprintf(err, errlen, "%s: %s", path, strerror(e));
		}
		close(fd);
		errno = e;
	}
	return fp;
}
