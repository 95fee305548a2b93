/*
 * The fabric baseline: a saved picture of the fabric (which nodes, which
 * cables between which ports) that later sweeps are compared with, so
 * that a pulled, added or replugged cable and a lost or new node are
 * named (ibsmd(8), "Fabric baseline").  Pure: no loop, no struct sm; the
 * owner on the loop (sm/perfmgr.c) saves it on `ibsmctl health
 * --save-baseline`, loads it and diffs every sweep's model against it.
 *
 * The file is written as `ibnetdiscover` prints the fabric
 * (sm/base/topo.h dump_topology), atomically (sm/base/wfile.h).  It is
 * read in any of three formats, told apart by its content:
 *   - OpenSM's topology dump, opensm-subnet.lst (written after every
 *     heavy sweep into OpenSM's dump_files_dir): one line per cabled
 *     port, "{ TYPE Ports:NN SystemGUID:G NodeGUID:G PortGUID:G VenID:V
 *     DevID:D Rev:R {description} LID:L PN:P } { ...the peer... }
 *     PHY=4x LOG=ACT SPD=2.5", each cable twice (once from each end);
 *     recognised by its first non-blank line starting with '{';
 *   - `ibnetdiscover` output and ibsim net files, any other text, read
 *     by topo_load (sm/base/topo.h).
 * Errors name "file:line: reason".
 */
#ifndef IBSMD_BASELINE_H
#define IBSMD_BASELINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "sm/base/fabric.h"

struct json_t;

/* The baseline every sweep is compared with: STATE_DIR/BASELINE_FILE. */
#define BASELINE_FILE "baseline"

enum baseline_format {
	BASELINE_TOPOLOGY = 1,	/* ibnetdiscover output or an ibsim net file */
	BASELINE_OPENSM = 2,	/* OpenSM's opensm-subnet.lst */
};

/*
 * Parses text (named name in messages) into *f, set up with
 * fabric_init(); *fmt (may be NULL) gets the format found.  0, or -1
 * with err "name:line: reason" and *f untouched.
 */
int baseline_parse_string(struct fabric *f, const char *text, const char *name,
			  enum baseline_format *fmt, char *err, size_t errlen);
/* The same for a file (a regular file of at most BASELINE_MAX_BYTES). */
int baseline_load(struct fabric *f, const char *path,
		  enum baseline_format *fmt, char *err, size_t errlen);
#define BASELINE_MAX_BYTES (256ll << 20)

/*
 * Writes f to path as ibnetdiscover prints it, atomically (the old file
 * or the new one, never a part).  0, or -1 with err.
 */
int baseline_save(const struct fabric *f, const char *path, char *err,
		  size_t errlen);
/* What a baseline of f holds: its nodes and its cables (each once). */
void baseline_counts(const struct fabric *f, uint32_t *nodes, uint32_t *links);

/*
 * Comparing a baseline (base) with the fabric now (cur).
 *
 * A node is its node GUID.  A link is a cable, its two ends each a (node
 * GUID, port number); a port is cabled when fab_port.remote is set.
 *   missing: a node of base whose GUID is not in cur; a link of base
 *            whose two ends are not cabled to each other in cur (also
 *            the links of a missing node: the cable is gone from view
 *            with it), unless it is moved;
 *   extra:   the same the other way round, unless moved;
 *   moved:   a link L of base that is not in cur paired with a link C of
 *            cur that is not in base, where the nodes at the ends of both
 *            are in both fabrics, and either
 *            (a) L and C join the same two nodes (the cable was replugged
 *                into other ports of the same nodes), or
 *            (b) L and C share one end exactly -- same node, same port --
 *                and their other ends are on different nodes (the node is
 *                now cabled to another neighbour there).
 *            Pairs of kind (a) are taken first, then (b); each link pairs
 *            at most once, L in base's port order with the first C in
 *            cur's port order.  A moved item is C (a, b) with L in was_a,
 *            was_b, where a and was_a are on the same node (for (b) the
 *            end they share).
 * Nodes come before links in each list, both in their fabric's order
 * (base's for missing and moved, cur's for extra).
 */
enum baseline_kind { BASELINE_NODE = 1, BASELINE_LINK = 2 };

struct baseline_end {
	uint64_t guid;			/* node GUID */
	uint8_t port;			/* port number (a node item: 0) */
	uint8_t type;			/* enum fab_node_type */
	char name[FAB_DESC_LEN + 1];	/* fabric_node_name() in its fabric */
};

struct baseline_item {
	uint8_t kind;			/* enum baseline_kind */
	struct baseline_end a, b;	/* a node: a only */
	struct baseline_end was_a, was_b;	/* moved: the link in the baseline */
};

struct baseline_list {
	struct baseline_item *v;
	uint32_t n, cap;
};

struct baseline_diff {
	struct baseline_list missing, extra, moved;
};

/* 0 (d filled; free it with baseline_diff_free), or -1 (ENOMEM, d empty). */
int baseline_diff(const struct fabric *base, const struct fabric *cur,
		  struct baseline_diff *d);
void baseline_diff_free(struct baseline_diff *d);
/* No difference at all. */
int baseline_diff_empty(const struct baseline_diff *d);

/*
 * {"missing": [...], "extra": [...], "moved": [...]}: a node
 * {"kind": "node", "guid": "0x…", "node": NAME, "type": "switch|ca|router"},
 * a link {"kind": "link", "a": END, "b": END} with END {"guid": "0x…",
 * "node": NAME, "port": N}, a moved link with "was": {"a": END, "b": END}.
 * At most max_items per list (0: all); a list cut short is counted in
 * "omitted": {"missing": N, ...} (present only then).  NULL on ENOMEM.
 */
struct json_t *baseline_diff_json(const struct baseline_diff *d,
				  uint32_t max_items);
/* What ibsmctl health lists of each (ibsmctl(8)): a fabric cabled anew
 * against an old baseline is not sent whole. */
#define BASELINE_JSON_MAX 1000

/*
 * A baseline file as last read, read again when it changed (its mtime,
 * size or inode): what ibsmctl health compares with.
 */
struct baseline_watch {
	struct fabric f;
	int state;			/* 0: no file, 1: read, -1: refused (err) */
	char err[600];
	struct timespec mtime;
	off_t size;
	ino_t ino;
};
void baseline_watch_init(struct baseline_watch *w);
void baseline_watch_free(struct baseline_watch *w);
/*
 * The file at path read again if it changed, then "baseline" of ibsmctl
 * health: null (no file), {"error": "file:line: ..."} (refused, also
 * logged once per change), or baseline_diff_json of it against cur
 * (NULL: no fabric yet, everything missing).
 */
struct json_t *baseline_watch_json(struct baseline_watch *w, const char *path,
				   const struct fabric *cur);

#endif
