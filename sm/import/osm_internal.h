/* What the importer's files share (sm/import/): the output being built. */
#ifndef IBSMD_OSM_INTERNAL_H
#define IBSMD_OSM_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <yaml.h>

#define OSM_MAX_SECTIONS 32

struct osm_parts;		/* partitions.conf read (osm_parts.c) */

struct osm_imp {
	yaml_document_t doc;
	int root;		/* the top mapping */
	struct {
		const char *name;
		int node;
	} sections[OSM_MAX_SECTIONS];	/* top-level mappings made */
	unsigned n_sections;
	struct osm_parts *parts;	/* NULL until partitions.conf is read */
	int qos_off;			/* opensm.conf read, without qos TRUE */
	FILE *warn;
	char *err;
	size_t errlen;
	unsigned warnings;
};

/* The mapping under the top-level key name (made on first use). */
int osm_section(struct osm_imp *m, const char *name);
/* map[key] = val (a scalar); returns the scalar's node or 0. */
int osm_put(struct osm_imp *m, int map, const char *key, const char *val);
/* map[key] = a new sequence; returns it or 0. */
int osm_put_seq(struct osm_imp *m, int map, const char *key);
/* Appends a scalar to a sequence. */
int osm_append(struct osm_imp *m, int seq, const char *val);
/* "import: warning: FILE:LINE: ..." on the warning stream. */
void osm_warn(struct osm_imp *m, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Sets m->err to "FILE:LINE: ..."; returns -1. */
int osm_fail(struct osm_imp *m, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * partitions.conf (sm/import/osm_parts.c), read into m->parts.
 * 0 or -1 (m->err).
 */
int osm_import_partitions(struct osm_imp *m, const char *path);
/*
 * The SL a qos-policy.conf's qos-ulps line gives a P_Key (0..0x7ffe):
 * that partition's sl.  0, or -1 when no partition has it.
 */
int osm_partition_set_sl(struct osm_imp *m, unsigned pkey, int sl);
/*
 * Writes what was read into the document: partitions, default_partition
 * and the Default line's multicast flags; frees m->parts.  0 or -1.
 */
int osm_partitions_emit(struct osm_imp *m);
void osm_partitions_free(struct osm_imp *m);

#endif
