#include "state.h"

#include <errno.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lids.h"
#include "wfile.h"

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
		uint32_t lid, seen;
		if (parse_entry(s, &guid, &lid, &seen) < 0) {
			snprintf(err, errlen,
				 "%s:%d: expected \"GUID LID [LAST_SEEN]\"", path,
				 lineno);
			rc = -1;
			break;
		}
		if (guid_map_put(m, guid, lid) < 0 ||
		    guid_map_set_aux(m, guid, seen) < 0) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
			break;
		}
	}
	fclose(fp);
	return rc;
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
	fprintf(w.fp, "# ibsmd GUID -> LID; written by ibsmd, read at start-up\n"
		      "# GUID LID LAST_SEEN (seconds since the epoch; 0: unknown)\n");
	for (uint32_t i = 0; i < n; i++)
		fprintf(w.fp, "0x%016" PRIx64 " %u %u\n", keys[i],
			guid_map_get(m, keys[i]), guid_map_get_aux(m, keys[i]));
	free(keys);
	return wfile_commit(&w, err, errlen);
}
