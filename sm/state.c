#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lids.h"

static int mkdirs(const char *dir)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *s = tmp + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

int state_load_guid2lid(const char *dir, struct guid_map *m, char *err,
			size_t errlen)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/guid2lid", dir);
	FILE *fp = fopen(path, "r");
	if (!fp) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	char line[256];
	int lineno = 0, rc = 0;
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		char *s = line + strspn(line, " \t");
		if (*s == '#' || *s == '\n' || !*s)
			continue;
		uint64_t guid;
		unsigned lid;
		char extra;
		if (sscanf(s, "%" SCNx64 " %u %c", &guid, &lid, &extra) != 2 ||
		    !guid || !lid || lid > LID_UCAST_MAX) {
			snprintf(err, errlen, "%s:%d: expected \"GUID LID\"", path,
				 lineno);
			rc = -1;
			break;
		}
		if (guid_map_put(m, guid, lid) < 0) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
			break;
		}
	}
	fclose(fp);
	return rc;
}

int state_save_guid2lid(const char *dir, const struct guid_map *m, char *err,
			size_t errlen)
{
	char path[4096], tmp[4200];
	if (mkdirs(dir) < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/guid2lid", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	FILE *fp = fopen(tmp, "w");
	if (!fp) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	fprintf(fp, "# ibsmd GUID -> LID; written by ibsmd, read at start-up\n");
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			fprintf(fp, "0x%016" PRIx64 " %u\n", m->keys[i], m->vals[i]);
	if (fflush(fp) != 0 || fsync(fileno(fp)) < 0) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		fclose(fp);
		unlink(tmp);
		return -1;
	}
	fclose(fp);
	if (rename(tmp, path) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}
