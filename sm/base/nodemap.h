/*
 * Node names from a node_name_map (the policy's node_name_map: FILE), the
 * infiniband-diags format: one node a line, its GUID (0x... or decimal)
 * then its name in double quotes (or the rest of the line), '#' starts a
 * comment.  The process has one map in use; the printers (the log's
 * events, ibsmctl, the dumps) name a node by fabric_node_name(), which
 * falls back to the NodeDescription.
 */
#ifndef IBSMD_NODEMAP_H
#define IBSMD_NODEMAP_H

#include <stddef.h>
#include <stdint.h>

#include "sm/base/fabric.h"

struct node_name_map;

/* Reads path; NULL and err "path:line: reason" (or "path: reason") on an error. */
struct node_name_map *nodemap_load(const char *path, char *err, size_t errlen);
void nodemap_free(struct node_name_map *m);
/* The name of a node GUID, NULL when the map has none. */
const char *nodemap_get(const struct node_name_map *m, uint64_t guid);
uint32_t nodemap_count(const struct node_name_map *m);

/* The map in use (may be NULL: none); the previous one is freed. */
void nodemap_use(struct node_name_map *m);
/*
 * Loads path ("" or NULL: no map) and uses it; 0, or -1 with err and the
 * map in use kept.
 */
int nodemap_use_file(const char *path, char *err, size_t errlen);
/*
 * On a worker thread (sm/ctl/ctltopo.c): fabric_node_name() returns the
 * NodeDescription alone from now on, the map in use being the loop's
 * (a reload frees it); the worker's copy of the model carries the names.
 */
void nodemap_thread_bypass(void);
/* A node's name: the map's for its GUID, else its NodeDescription. */
const char *fabric_node_name(const struct fabric *f, uint32_t node);

#endif
