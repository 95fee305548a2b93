/*
 * Routing engines: pure functions from the fabric model (with LIDs
 * assigned) to unicast forwarding tables.  No I/O, no MADs.
 */
#ifndef IBSMD_ENGINE_H
#define IBSMD_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "sm/base/fabric.h"
#include "routing/partition.h"

#define LFT_DROP 0xff

#define QOS_SLS 16	/* service levels; an SL-to-VL table has one VL per SL */

/*
 * A routing result.  One row per switch; row r belongs to node sw_node[r].
 *
 * Room for QoS, filled by a QoS mode (routing/qos/vftree.c); all NULL / 0
 * while none asks for them, and freed by lft_tables_free():
 *   sl_class  per LID (max_lid + 1 entries), the source class of that
 *          LID: for vFtree the leaf index of the port's leaf switch;
 *          LFT_SL_NOCLASS: none (SL 0 to everywhere).
 *   sl     n_sl_class rows of max_lid + 1 SLs: the SL from a source of
 *          class c to destination LID d is sl[c * (max_lid + 1) + d].
 *          Read through lft_sl().  Absent: SL 0 everywhere.
 *   sl2vl  SL-to-VL tables, QOS_SLS VLs each (15 = drop), per node and
 *          (input port, output port) as in SLtoVLMappingTable: node n has
 *          sl2vl_width[n]^2 slots (width = its ports + 1, port 0
 *          included), slot (in * width + out) from slot sl2vl_first[n]
 *          (FAB_NONE: none for that node); a CA port p uses in = out = p.
 *          Compact: a slot holds an index (sl2vl_idx) into the sl2vl_n
 *          distinct tables in sl2vl (a few, against 16 bytes for each of
 *          a 36-port switch's 1369 pairs).  sl2vl_nodes nodes are
 *          covered.  Read through lft_sl2vl().  Absent (sl2vl NULL):
 *          every SL on VL 0.
 * The repair after a lost link (reconfig/repair.c) makes new tables
 * without them: the daemon calls the QoS mode (vftree_apply()) after
 * every routing and every repair, so nothing needs carrying over.
 */
struct lft_tables {
	uint32_t n_sw;
	uint32_t max_lid;	/* each row has max_lid + 1 entries */
	uint32_t *sw_node;	/* row -> node index */
	uint32_t *row_of_node;	/* node index -> row, FAB_NONE for non-switches */
	uint8_t *port;		/* n_sw * (max_lid + 1) output ports */
	uint16_t *sl_class;	/* QoS: NULL, or max_lid + 1 source classes */
	uint32_t n_sl_class;	/* QoS: rows of sl */
	uint8_t *sl;		/* QoS: NULL, or n_sl_class * (max_lid + 1) SLs */
	uint8_t *sl2vl;		/* QoS: NULL, or the distinct SL-to-VL tables */
	uint32_t sl2vl_n;	/* QoS: tables in sl2vl (at most 65536) */
	uint16_t *sl2vl_idx;	/* QoS: per slot, its table in sl2vl */
	uint32_t *sl2vl_first;	/* QoS: per node, its first slot, FAB_NONE */
	uint8_t *sl2vl_width;	/* QoS: per node, its ports + 1 */
	uint32_t sl2vl_nodes;	/* QoS: nodes in sl2vl_first, 0 if NULL */
	/*
	 * Partitions (sm/model/part_resolve.h): the SL of partition i's paths,
	 * n_part_sl entries, set after routing by the partition VL
	 * assignment (routing/qos/pvl.h: a vlane-isolation partition's own SL)
	 * and the policy's sl; 0: none of its own; NULL: lft_sl() for every
	 * partition.  Freed with the QoS fields.
	 */
	uint8_t *part_sl;
	uint32_t n_part_sl;
	/*
	 * The SLs and SL-to-VL tables are the engine's own (an engine with
	 * own_sls): a QoS mode leaves them.  Cleared with the QoS fields.
	 */
	uint8_t engine_sls;
	/*
	 * Secondary LFTs (extended LIDs, mad/xlid.h), never path-computed:
	 * filled after routing by copying each vLID's PF column
	 * (routing/xlft.c).  x_blocks blocks of 64 vLIDs from FAB_VLID_BASE
	 * (those in use, up to the fabric's max_vlid).  Memory follows what
	 * exists: row r holds only the blocks xfirst[r] .. xfirst[r] +
	 * xcount[r] - 1 (xrow[r], xcount[r] * 64 entries): a physical switch
	 * every block, a vSwitch those its own VFs' vLIDs fall in, NULL when
	 * it has none; an entry outside the row's blocks is none (LFT_DROP),
	 * i.e. the row's DefaultPort xdefault[r] (LFT_DROP: dropped).  Read
	 * and write through routing/xlft.h.  All NULL / 0 without vLIDs;
	 * freed by lft_tables_free().
	 */
	uint32_t x_blocks;
	uint8_t **xrow;
	uint32_t *xfirst, *xcount;
	uint8_t *xdefault;
};

/* dor's grid where the policy gives it (routing.dor in ibsmd.yaml(5)). */
#define ROUTE_DOR_DIMS 3
struct dor_opts {
	/* the size of each dimension, 1..255; ndims 0: inferred */
	int ndims;
	int size[ROUTE_DOR_DIMS];
	/* 1: the rings' wrap-around cables unused (every ring a line) */
	int no_dateline;
};

struct route_opts {
	int n_roots;
	const char (*roots)[64];	/* node descriptions or GUIDs */
	/* the partitions resolved against f (pftree), NULL: none */
	const struct part_model *parts;
	/*
	 * Warnings of a routing that succeeded (best-effort isolation not
	 * met, ...): the engine appends "; "-separated text, the caller logs
	 * it.  NULL: none wanted.
	 */
	char *warn;
	size_t warn_len;
	/*
	 * The data VLs an engine with SLs of its own (dfsssp) may use on
	 * every link, besides the links' VLCap: ports.max_op_vls's; 0: the
	 * VLCaps alone (VL0-14 where none is known).
	 */
	unsigned max_vls;
	struct dor_opts dor;
};

/*
 * One routing engine, as listed in the engine table (routing/engine.c),
 * the only place the engines are named: the policy's validation, the
 * selection, the verifier and ibsmd --help all read it.
 */
struct routing_engine {
	const char *name;
	/* Returns 0, or -1 with a reason in err (the caller may fall back). */
	int (*route)(const struct fabric *f, const struct route_opts *o,
		     struct lft_tables *t, char *err, size_t errlen);
	const char *summary;		/* one line, for --help */
	int deadlock_free;		/* no channel-dependency cycle on one VL */
	/*
	 * It sets the SLs and SL-to-VL tables itself (lft_tables' QoS
	 * fields: a deadlock-free layer per SL); a QoS mode or partition VLs
	 * that set SLs cannot combine with it.
	 */
	int own_sls;
	const char *topologies;		/* what it accepts ("any", ...) */
};

/* The engine of that name, or NULL. */
const struct routing_engine *routing_engine_find(const char *name);
/* The i-th engine of the table (i from 0), NULL past the last one. */
const struct routing_engine *routing_engine_at(size_t i);
/* The i-th engine of the default list (routing.engine), NULL past it. */
const struct routing_engine *routing_engine_default(size_t i);
/* The engines' names separated by sep, for messages; always terminated. */
void routing_engine_names(char *buf, size_t len, const char *sep);

int lft_tables_alloc(struct lft_tables *t, const struct fabric *f);
void lft_tables_free(struct lft_tables *t);
static inline uint8_t *lft_row(const struct lft_tables *t, uint32_t row)
{
	return t->port + (size_t)row * (t->max_lid + 1);
}
#define LFT_SL_NOCLASS 0xFFFF

/* The SL of the path from src to dst: 0 when no QoS mode set one. */
static inline uint8_t lft_sl(const struct lft_tables *t, uint32_t src,
			     uint32_t dst)
{
	if (t->sl == NULL || t->sl_class == NULL || src > t->max_lid ||
	    dst > t->max_lid)
		return 0;
	uint16_t c = t->sl_class[src];
	if (c == LFT_SL_NOCLASS || c >= t->n_sl_class)
		return 0;
	return t->sl[(size_t)c * (t->max_lid + 1) + dst];
}

/*
 * The SL-to-VL table (QOS_SLS VLs) of node's (in, out) port pair, or
 * NULL: none set, every SL on VL 0.
 */
static inline const uint8_t *lft_sl2vl(const struct lft_tables *t,
				       uint32_t node, unsigned in,
				       unsigned out)
{
	if (t->sl2vl == NULL || node >= t->sl2vl_nodes ||
	    t->sl2vl_first[node] == UINT32_MAX)
		return NULL;
	unsigned w = t->sl2vl_width[node];
	if (in >= w || out >= w)
		return NULL;
	uint16_t k = t->sl2vl_idx[(size_t)t->sl2vl_first[node] +
				 (size_t)in * w + out];
	return k < t->sl2vl_n ? t->sl2vl + (size_t)k * QOS_SLS : NULL;
}

/* Frees and clears the QoS fields only (sl_class, sl, sl2vl...). */
void lft_tables_free_qos(struct lft_tables *t);

/*
 * The SL-to-VL slots of a QoS mode: sl2vl_first and sl2vl_width for
 * every node (switches and CAs/routers get (ports + 1)^2 slots, other
 * nodes none) and sl2vl_idx, every slot table 0; sl2vl itself is the
 * mode's.  0, or -1 (ENOMEM; the caller frees the QoS fields).
 */
int lft_sl2vl_slots(const struct fabric *f, struct lft_tables *t);
/*
 * SL i -> VL i below max_vls, VL 0 above, on every slot of every CA and
 * switch: one distinct table (vFtree, the partition VLs).  0, or -1
 * (ENOMEM; the caller frees the QoS fields).
 */
int lft_sl2vl_identity(const struct fabric *f, struct lft_tables *t,
		       unsigned max_vls);

#endif
