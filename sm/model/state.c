#include "sm/model/state.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sm/model/lids.h"
#include "sm/base/log.h"
#include "sm/base/wfile.h"

/*
 * One line of DIR/guid2lid: "GUID LID [LAST_SEEN]", the GUID in hex, the
 * LID and the last-seen time (seconds since the epoch) in decimal.  Files
 * written before the time existed have two fields: their entries load as
 * never seen (0), the oldest there are.
 */
static int parse_entry(const char *s, uint64_t *guid, uint32_t *lid,
		       uint32_t *seen)
{
	unsigned long long v[3] = { 0, 0, 0 };
	int n = 0;
	for (;;) {
		s += strspn(s, " \t\n");
		if (!*s)
			break;
		if (n == 3 || *s == '-' || *s == '+')
			return -1;
		char *end;
		errno = 0;
		v[n] = strtoull(s, &end, n ? 10 : 16);
		if (end == s || errno || (*end && !strchr(" \t\n", *end)))
			return -1;
		n++;
		s = end;
	}
	/* a pLID, or a VM's vLID (extended LIDs, mad/xlid.h) */
	if (n < 2 || !v[0] || !v[1] ||
	    (v[1] > LID_UCAST_MAX && !fabric_is_vlid((uint32_t)v[1])) ||
	    v[1] > FAB_VLID_MAX || v[2] > UINT32_MAX)
		return -1;
	*guid = v[0];
	*lid = (uint32_t)v[1];
	*seen = (uint32_t)v[2];
	return 0;
}

/*
 * The header of the files this ibsmd writes: they end with END_LINE, so a
 * file cut at a line boundary is found too.  Files without it (hand-made,
 * or from before it) need no end line.
 */
#define HEADER_V2 "# ibsmd GUID -> LID, format 2 (ends with \"# end: N entries\"); written by ibsmd, read at start-up\n"
#define END_LINE "# end: %u entries\n"

int state_load_guid2lid(const char *dir, struct guid_map *m, char *err,
			size_t errlen)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/guid2lid", dir);
	FILE *fp = rfile_open(path, 0, err, errlen);
	if (!fp)
		return errno == ENOENT ? (err[0] = '\0', 0) : -1;
	char line[256];
	int lineno = 0, rc = 0, v2 = 0, ended = 0;
	unsigned entries = 0, end_n;
	const char *why = NULL;
	while (!why && fgets(line, sizeof(line), fp)) {
		lineno++;
		char *s = line + strspn(line, " \t");
		if (!strchr(line, '\n')) {
			why = feof(fp) ? "truncated: the last line has no end"
				       : "line too long";
		} else if (ended) {
			why = "a line after the end line";
		} else if (lineno == 1 && !strcmp(line, HEADER_V2)) {
			v2 = 1;
		} else if (v2 && sscanf(s, END_LINE, &end_n) == 1) {
			ended = 1;
			if (end_n != entries)
				why = "the end line counts other entries";
		} else if (*s == '#' || *s == '\n' || !*s) {
			continue;
		} else {
			uint64_t guid;
			uint32_t lid, seen;
			if (parse_entry(s, &guid, &lid, &seen) < 0)
				why = "expected \"GUID LID [LAST_SEEN]\"";
			else if (guid_map_put(m, guid, lid) < 0 ||
				 guid_map_set_aux(m, guid, seen) < 0) {
				snprintf(err, errlen, "out of memory");
				rc = -1;
				break;
			}
			entries++;
		}
	}
	if (!why && !rc && ferror(fp)) {
		snprintf(err, errlen, "%s: read error", path);
		rc = -1;
	}
	if (!why && !rc && !lineno) {	/* ibsmd writes a header: cut to nothing */
		why = "empty: truncated";
		lineno = 1;
	} else if (!why && !rc && v2 && !ended) {
		why = "truncated: no end line";
		lineno++;
	}
	if (why) {
		snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
		rc = -2;
	}
	fclose(fp);
	return rc;
}

int state_prepare(const char *dir, char *err, size_t errlen)
{
	static const char *const files[] = STATE_FILES;
	if (wfile_check_dir(dir, err, errlen) < 0)
		return -1;
	wfile_clean_temps(dir, WFILE_PROBE);	/* a kill during a check */
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int n = wfile_clean_temps(dir, files[i]);
		if (n > 0)
			log_notice("%s: removed %d temporary %s file%s left by a killed ibsmd",
				   dir, n, files[i], n > 1 ? "s" : "");
	}
	/* a file set aside as corrupt stops every start until the operator decides */
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	struct dirent *de;
	int rc = 0;
	while (rc == 0 && (de = readdir(d)) != NULL)
		for (size_t i = 0; i < STATE_FILES_KEPT; i++) {
			size_t n = strlen(files[i]);
			if (strncmp(de->d_name, files[i], n) ||
			    strncmp(de->d_name + n, ".corrupt.", 9))
				continue;
			snprintf(err, errlen, "%s/%s: a corrupt %s was set aside there;"
				 " not starting while it is there (the LIDs or VMs it held"
				 " would be lost): repair it and move it back to %s/%s, or"
				 " remove it to start without it", dir, de->d_name,
				 files[i], dir, files[i]);
			rc = -1;
			break;
		}
	closedir(d);
	return rc;
}

void state_set_aside(const char *dir, const char *name, char *err, size_t errlen)
{
	char path[4096], aside[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	size_t l = strlen(err);
	if (wfile_set_aside(path, aside, sizeof(aside)) < 0)
		snprintf(err + l, errlen - l, "; and cannot move it aside: %s",
			 strerror(errno));
	else
		snprintf(err + l, errlen - l, "; kept as %s; not starting without it:"
			 " repair it and move it back, or remove it to start without"
			 " it (ports that lost their LIDs get new ones)", aside);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int state_save_guid2lid(const char *dir, const struct guid_map *m, char *err,
			size_t errlen)
{
	char path[4096];
	struct wfile w;
	snprintf(path, sizeof(path), "%s/guid2lid", dir);
	/* sorted by GUID: the same table always makes the same file */
	uint64_t *keys = malloc(((size_t)m->used + 1) * sizeof(*keys));
	if (!keys) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (wfile_open(&w, path, err, errlen) < 0) {
		free(keys);
		return -1;
	}
	uint32_t n = 0;
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			keys[n++] = m->keys[i];
	qsort(keys, n, sizeof(*keys), cmp_u64);
	fprintf(w.fp, HEADER_V2 "# GUID LID LAST_SEEN (seconds since the epoch; 0: unknown)\n");
	for (uint32_t i = 0; i < n; i++)
		fprintf(w.fp, "0x%016" PRIx64 " %u %u\n", keys[i],
			guid_map_get(m, keys[i]), guid_map_get_aux(m, keys[i]));
	fprintf(w.fp, END_LINE, n);
	free(keys);
	return wfile_commit(&w, err, errlen);
}
