#include "sm/base/nodemap.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NODEMAP_NAME_MAX 256

struct node_name_map {
	struct guid_map index;	/* node GUID -> names[] */
	char **names;
	uint32_t n, cap;
};

/* The map in use: one per process, as the log threshold. */
static struct node_name_map *in_use;

void nodemap_free(struct node_name_map *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->n; i++)
		free(m->names[i]);
	free(m->names);
	guid_map_free(&m->index);
	free(m);
}

static int add_name(struct node_name_map *m, uint64_t guid, const char *name)
{
	if (m->n == m->cap) {
		uint32_t c = m->cap ? 2 * m->cap : 64;
		char **v = realloc(m->names, c * sizeof(*v));
		if (!v)
			return -1;
		m->names = v;
		m->cap = c;
	}
	if (!(m->names[m->n] = strdup(name)))
		return -1;
	if (guid_map_put(&m->index, guid, m->n) < 0) {
		free(m->names[m->n]);
		return -1;
	}
	m->n++;
	return 0;
}

/*
 * One line: GUID, blanks, "name" or name.  Returns 0 (a name in
 * name[]), 1 (blank or comment) or -1 with why.
 */
static int parse_line(char *s, uint64_t *guid, char *name, const char **why)
{
	while (isspace((unsigned char)*s))
		s++;
	if (!*s || *s == '#')
		return 1;
	char *end;
	errno = 0;
	unsigned long long g = strtoull(s, &end, 0);
	if (end == s || errno || !g || (*end && !isspace((unsigned char)*end))) {
		*why = "not a GUID";
		return -1;
	}
	s = end;
	while (isspace((unsigned char)*s))
		s++;
	size_t len;
	if (*s == '"') {
		char *q = strchr(++s, '"');
		if (!q) {
			*why = "no closing '\"'";
			return -1;
		}
		len = (size_t)(q - s);
		for (q++; isspace((unsigned char)*q); q++)
			;
		if (*q && *q != '#') {
			*why = "text after the name";
			return -1;
		}
	} else {
		len = strcspn(s, "#");
		while (len && isspace((unsigned char)s[len - 1]))
			len--;
	}
	if (!len) {
		*why = "no name";
		return -1;
	}
	if (len >= NODEMAP_NAME_MAX) {
		*why = "name longer than 255 bytes";
		return -1;
	}
	memcpy(name, s, len);
	name[len] = '\0';
	*guid = g;
	return 0;
}

struct node_name_map *nodemap_load(const char *path, char *err, size_t errlen)
{
	FILE *fp = fopen(path, "r");
	if (!fp) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	struct node_name_map *m = calloc(1, sizeof(*m));
	if (!m || guid_map_init(&m->index, 64) < 0) {
		free(m);
		fclose(fp);
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	char line[1024], name[NODEMAP_NAME_MAX];
	unsigned lineno = 0;
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		const char *why = NULL;
		uint64_t guid;
		size_t n = strlen(line);
		if (n == sizeof(line) - 1 && line[n - 1] != '\n')
			why = "line longer than 1023 bytes";
		int rc = why ? -1 : parse_line(line, &guid, name, &why);
		if (rc == 0 && nodemap_get(m, guid) && strcmp(nodemap_get(m, guid), name))
			why = "GUID named twice, differently";
		else if (rc == 0 && !nodemap_get(m, guid) && add_name(m, guid, name) < 0)
			why = "out of memory";
		if (why) {
			snprintf(err, errlen, "%s:%u: %s", path, lineno, why);
			nodemap_free(m);
			fclose(fp);
			return NULL;
		}
	}
	int bad = ferror(fp);
	fclose(fp);
	if (bad) {
		snprintf(err, errlen, "%s: read error", path);
		nodemap_free(m);
		return NULL;
	}
	return m;
}

const char *nodemap_get(const struct node_name_map *m, uint64_t guid)
{
	if (!m)
		return NULL;
	uint32_t i = guid_map_get(&m->index, guid);
	return i == FAB_NONE ? NULL : m->names[i];
}

uint32_t nodemap_count(const struct node_name_map *m)
{
	return m ? m->n : 0;
}

void nodemap_use(struct node_name_map *m)
{
	nodemap_free(in_use);
	in_use = m;
}

int nodemap_use_file(const char *path, char *err, size_t errlen)
{
	struct node_name_map *m = NULL;
	if (path && *path && !(m = nodemap_load(path, err, errlen)))
		return -1;
	nodemap_use(m);
	return 0;
}

/* Set on a worker thread whose copy of the model carries the names. */
static __thread int bypass;

void nodemap_thread_bypass(void)
{
	bypass = 1;
}

const char *fabric_node_name(const struct fabric *f, uint32_t node)
{
	if (bypass)
		return f->nodes[node].desc;
	const char *name = nodemap_get(in_use, f->nodes[node].guid);
	return name ? name : f->nodes[node].desc;
}
