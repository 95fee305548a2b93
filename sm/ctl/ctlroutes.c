/*
 * The control-socket commands about LIDs and routes (ctlroutes.h): lids,
 * routes SWITCH and verify.  lids and routes answer from the subnet the
 * SM keeps (the model of the last configuration and its tables); verify
 * reads every switch's LinearFDBTop and LFT blocks back by directed route
 * and runs the route verifier (routing/verify/verify.h) on what the devices hold,
 * and with multicast groups their MFT blocks, each group's entries checked
 * by the multicast verifier (routing/verify/verify_mcast.h).
 */
#include "sm/ctl/ctlroutes.h"
#include "sm/base/nodemap.h"

#include <infiniband/mad.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/smp.h"
#include "routing/mctree.h"
#include "routing/verify/pverify.h"
#include "routing/verify/verify.h"
#include "routing/verify/verify_mcast.h"
#include "sm/ctl/control.h"
#include "sm/daemon.h"
#include "sm/write/devcache.h"
#include "sm/base/log.h"
#include "sm/write/plan.h"
#include "sm/write/plan_mcast.h"
#include "sm/mcast/mcast_sm.h"
#include "sm/base/clock.h"

static const char *node_type_name(uint8_t type)
{
	return type == FAB_SWITCH ? "Switch" : type == FAB_ROUTER ? "Router" :
	       "Channel Adapter";
}

static void hex64(uint64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "0x%016" PRIx64, v);
}

/* The fabric of the last configuration, or NULL with err. */
static const struct fabric *model(const struct sm *sm, char *err, size_t errlen)
{
	if (sm->sub.model)
		return &sm->sub.model->f;
	snprintf(err, errlen, "no configured subnet yet (state %s)",
		 sm_state_name(sm->state));
	return NULL;
}

/* ---- lids ---- */

json_t *ctl_lids(struct sm *sm, const json_t *req, char *err, size_t errlen)
{
	const struct fabric *f = model(sm, err, errlen);
	if (!f)
		return NULL;
	json_t *a = json_array();
	uint32_t vlids = 0;
	for (uint32_t pi = 0; a && pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (!fabric_is_endport(f, pi) || !p->lid)
			continue;
		const struct fab_node *n = &f->nodes[p->node];
		char pg[24], ng[24];
		hex64(p->guid, pg, sizeof(pg));
		hex64(n->guid, ng, sizeof(ng));
		int vlid = fabric_is_vlid(p->lid);
		vlids += (uint32_t)vlid;
		json_array_append_new(a, json_pack("{s:s,s:i,s:i,s:b,s:s,s:i,s:s,s:s}",
			"port_guid", pg, "lid", (int)p->lid,
			"lmc", vlid ? 0 : fabric_port_lmc(f, pi), "vlid", vlid,
			"type", node_type_name(n->type), "port", p->num,
			"node_guid", ng, "description", fabric_node_name(f, p->node)));
	}
	return json_pack("{s:I,s:i,s:i,s:o*}", "count", (json_int_t)json_array_size(a),
			 "vlids", (int)vlids, "lmc", f->lmc, "lids", a);
}

/* ---- routes SWITCH ---- */

/* The switch named by GUID, LID or node description; FAB_NONE with err. */
static uint32_t find_switch(const struct fabric *f, const char *name, char *err,
			    size_t errlen)
{
	char *end;
	unsigned long long v = strtoull(name, &end, 0);
	int numeric = *name && !*end;
	uint32_t found = FAB_NONE, matches = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		if (n->type != FAB_SWITCH)
			continue;
		uint32_t lid = f->ports[n->first_port].lid;
		if ((numeric && (n->guid == v || (v && lid == v))) ||
		    (!numeric && (!strcmp(n->desc, name) ||
				  !strcmp(fabric_node_name(f, i), name)))) {
			if (!matches++ || (numeric && n->guid == v))
				found = i;
		}
	}
	if (matches > 1 && !numeric) {
		snprintf(err, errlen, "routes: %u switches are described '%s'; name one by GUID or LID",
			 matches, name);
		return FAB_NONE;
	}
	if (found == FAB_NONE)
		snprintf(err, errlen, "routes: no switch with GUID, LID or description '%s'",
			 name);
	return found;
}

json_t *ctl_routes(struct sm *sm, const json_t *req, char *err, size_t errlen)
{
	const char *name = json_string_value(json_object_get(req, "switch"));
	if (!name) {
		snprintf(err, errlen, "usage: routes SWITCH (its GUID, LID or node description)");
		return NULL;
	}
	const struct fabric *f = model(sm, err, errlen);
	if (!f)
		return NULL;
	uint32_t sw = find_switch(f, name, err, errlen);
	if (sw == FAB_NONE)
		return NULL;
	const struct lft_tables *t = &sm->sub.lft;
	uint32_t row = t->row_of_node ? t->row_of_node[sw] : FAB_NONE;
	if (row == FAB_NONE || row >= t->n_sw) {
		snprintf(err, errlen, "routes: no routes computed for that switch yet%s",
			 errors_active(&sm->errs, SM_ERR_ROUTING) ? " (the routing failed: see status)" : "");
		return NULL;
	}
	const uint8_t *r = lft_row(t, row);
	json_t *a = json_array();
	for (uint32_t lid = 1; a && lid <= t->max_lid; lid++) {
		if (r[lid] == LFT_DROP)
			continue;
		uint32_t pi = fabric_lid_port(f, lid);
		json_t *e = json_pack("{s:i,s:i}", "lid", (int)lid, "port", r[lid]);
		if (e && pi != FAB_NONE) {
			const struct fab_node *n = &f->nodes[f->ports[pi].node];
			char g[24];
			hex64(f->ports[pi].guid, g, sizeof(g));
			json_object_set_new(e, "destination", json_pack("{s:s,s:s,s:s}",
				"type", node_type_name(n->type), "port_guid", g,
				"description", fabric_node_name(f, f->ports[pi].node)));
		}
		json_array_append_new(a, e);
	}
	const struct fab_node *n = &f->nodes[sw];
	char g[24];
	hex64(n->guid, g, sizeof(g));
	return json_pack("{s:{s:s,s:i,s:s},s:s,s:I,s:o*}",
		"switch", "guid", g, "lid", (int)f->ports[n->first_port].lid,
		"description", fabric_node_name(f, sw),
		"engine", sm->sub.engine ? sm->sub.engine : "none",
		"valid", (json_int_t)json_array_size(a), "routes", a);
}

/* ---- verify: the tables the switches hold ---- */

struct vq {
	struct ctl_verify *v;
	uint32_t node;
	uint32_t block;		/* LFT block, or VQ_SWITCHINFO */
	uint32_t mft_mod;	/* an MFT read's modifier (mft set; qos too) */
	uint8_t mft;
	uint8_t qos;		/* VQ_SL2VL, VQ_VLARB: a QoS table read */
	uint8_t in, out;	/* its (input, output) pair; a CA's port twice */
};
enum { VQ_SL2VL = 1, VQ_VLARB };
/* the QoS tables' reads judged: first few differing, named in the text */
#define VQ_QOS_NAMED 8
#define VQ_SWITCHINFO UINT32_MAX

struct ctl_verify {
	struct sm *sm;
	uint64_t reply_id;
	const struct discovery *model;	/* the subnet read against */
	uint32_t heavy_sweeps;		/* sm->sweep.heavy_sweeps when it began */
	struct lft_tables t;		/* what the switches hold */
	uint32_t *top;			/* per row: LinearFDBTop read */
	struct vq *q;
	uint32_t n_q, pending, failed, blocks;
	int cancelled;			/* the daemon is stopping */
	uint64_t t0;
	/* multicast: MLIDs 0xC000 .. + n_ml - 1 read, masks by (row, MLID) */
	uint64_t *mft;
	uint32_t n_ml, mft_blocks;
	uint64_t mc_settled;		/* the gen the MFTs held when it began
					   (mcast_sm_settled_gen) */
	/* QoS (sm->sub.lft's SL-to-VL tables written): what the devices hold */
	uint32_t sl2vl_read, sl2vl_wrong, vlarb_read, vlarb_unserved;
	char qos_named[VQ_QOS_NAMED][96];
	uint32_t n_named;
};

static void verify_free(struct ctl_verify *v)
{
	if (v->sm->ctl_verify == v)
		v->sm->ctl_verify = NULL;
	lft_tables_free(&v->t);
	free(v->top);
	free(v->q);
	free(v->mft);
	free(v);
}

/*
 * The groups against the MFT entries read: a line per wrong group and a
 * summary; returns the wrong groups (-1: not checked).  A group changed
 * since the last MFT writes that were over when the reads began is being
 * written (or is about to be): its entries are not judged, but counted.
 */
static int verify_mcast_section(struct ctl_verify *v, FILE *fp)
{
	const struct sm *sm = v->sm;
	const struct fabric *f = &sm->sub.model->f;
	uint32_t ns = v->t.n_sw, most = 0, checked = 0, updating = 0;
	struct guid_map gm;
	int wrong = 0;
	if (!sm->mc.n)
		return 0;
	for (uint32_t i = 0; i < sm->mc.n; i++)
		if (sm->mc.g[i] && sm->mc.g[i]->n_members > most)
			most = sm->mc.g[i]->n_members;
	uint32_t *ports = calloc(most + 1, sizeof(*ports));
	uint64_t *mask = calloc((size_t)ns * MCAST_MASK_WORDS + 1, sizeof(*mask));
	if (!ports || !mask || mcast_port_map(f, &sm->vms, &gm) < 0) {
		free(ports);
		free(mask);
		fprintf(fp, "multicast: out of memory\n");
		return -1;
	}
	for (uint32_t i = 0; i < sm->mc.n; i++) {
		const struct mc_group *g = sm->mc.g[i];
		char why[256], mgid[40];
		uint32_t k = g ? (uint32_t)g->mlid - MC_MLID_BASE : 0;
		if (!g || k >= v->n_ml)
			continue;
		if (g->gen > v->mc_settled) {
			updating++;
			continue;
		}
		for (uint32_t r = 0; r < ns; r++)
			memcpy(mask + (size_t)r * MCAST_MASK_WORDS,
			       v->mft + ((size_t)r * v->n_ml + k) * MCAST_MASK_WORDS,
			       MCAST_MASK_WORDS * sizeof(*mask));
		uint32_t n = mcast_member_ports(&gm, g, ports);
		checked++;
		if (mcast_verify(f, &v->t, ports, n, mask, why, sizeof(why)) != 0) {
			mc_mgid_str(g->mgid, mgid, sizeof(mgid));
			fprintf(fp, "multicast group %s MLID 0x%04x: %s\n", mgid, g->mlid, why);
			wrong++;
		}
	}
	fprintf(fp, "multicast: %u groups checked against %u MFT blocks read, %d wrong",
		checked, v->mft_blocks, wrong);
	if (updating)
		fprintf(fp, ", %u being written (changed since the last MFT writes; not judged)",
			updating);
	fputc('\n', fp);
	guid_map_free(&gm);
	free(ports);
	free(mask);
	return wrong;
}

/* Entries the switches hold that differ from the SM's tables. */
static uint64_t count_differences(const struct lft_tables *held,
				  const struct lft_tables *sm_t)
{
	uint64_t n = 0;
	if (!sm_t->port || sm_t->n_sw != held->n_sw)
		return 0;
	uint32_t max = held->max_lid < sm_t->max_lid ? held->max_lid : sm_t->max_lid;
	for (uint32_t r = 0; r < held->n_sw; r++) {
		const uint8_t *a = lft_row(held, r), *b = lft_row(sm_t, r);
		for (uint32_t lid = 1; lid <= max; lid++)
			n += a[lid] != b[lid];
	}
	return n;
}

/*
 * The QoS tables read (when the SM wrote any): a summary line, a line per
 * table named; what differs counts as errors in r.
 */
static void verify_qos_section(struct ctl_verify *v, struct verify_report *r, FILE *fp)
{
	if (!v->sl2vl_read && !v->vlarb_read)
		return;
	fprintf(fp, "qos: %u SL-to-VL tables read, %u differ from the SM's; %u VL arbitration tables read, %u leave a VL in use unserved\n",
		v->sl2vl_read, v->sl2vl_wrong, v->vlarb_read, v->vlarb_unserved);
	for (uint32_t i = 0; i < v->n_named; i++)
		fprintf(fp, "qos: %s\n", v->qos_named[i]);
	r->errors += v->sl2vl_wrong + v->vlarb_unserved;
}

/* The report: the verifier's figures, its text and the first failures. */
/*
 * The partition section over the tables read back, with the partition
 * SLs and SL-to-VL tables the SM wrote (the same model: nothing moved
 * while the tables were read); its errors and warnings go into r.
 */
static int verify_parts(struct ctl_verify *v, struct verify_report *r,
			FILE *fp)
{
	const struct sm *sm = v->sm;
	const struct lft_tables *s = &sm->sub.lft;
	struct lft_tables t = v->t;
	t.part_sl = s->part_sl;
	t.n_part_sl = s->n_part_sl;
	t.sl2vl = s->sl2vl;
	t.sl2vl_n = s->sl2vl_n;
	t.sl2vl_idx = s->sl2vl_idx;
	t.sl2vl_first = s->sl2vl_first;
	t.sl2vl_width = s->sl2vl_width;
	t.sl2vl_nodes = s->sl2vl_nodes;
	return pverify_section(&sm->sub.model->f, &t, &sm->parts, r, fp);
}

static json_t *verify_json(struct ctl_verify *v, struct verify_report *r)
{
	const struct sm *sm = v->sm;
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	if (fp) {
		fprintf(fp, "checking the LFTs read from %u switches (%u blocks, %u reads failed)\n",
			v->t.n_sw, v->blocks, v->failed);
		if (verify_parts(v, r, fp) < 0)
			fprintf(fp, "verify: partitions: out of memory\n");
		int mc = verify_mcast_section(v, fp);
		if (mc > 0)
			r->errors += (uint32_t)mc;	/* the verdict says FAILED */
		verify_qos_section(v, r, fp);
		verify_print(r, fp);
		if (v->failed)
			fprintf(fp, "verify: FAILED: %u reads did not come (their entries count as dropped)\n",
				v->failed);
		fclose(fp);
	}
	json_t *ex = json_array();
	static const char *const kinds[] = { "?", "drop", "hole", "loop" };
	for (uint32_t i = 0; ex && i < r->n_examples; i++) {
		const struct verify_example *e = &r->ex[i];
		char sg[24], ag[24];
		hex64(e->src_guid, sg, sizeof(sg));
		hex64(e->at_guid, ag, sizeof(ag));
		json_array_append_new(ex, json_pack("{s:s,s:i,s:s,s:i,s:s,s:s,s:s,s:i}",
			"source_guid", sg, "source_port", e->src_port,
			"source", e->src_desc, "lid", (int)e->lid,
			"failure", kinds[e->kind <= VERIFY_LOOP ? e->kind : 0],
			"switch_guid", ag, "switch", e->at_desc, "lft_port", e->at_port));
	}
	json_t *o = json_pack("{s:i,s:i,s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:b,s:i,s:i,s:o*,s:I,s:s?}",
		"switches", (int)v->t.n_sw, "blocks_read", (int)v->blocks,
		"reads_failed", (int)v->failed,
		"pairs", (json_int_t)r->pairs, "unreachable", (json_int_t)r->unreachable,
		"drops", (json_int_t)r->drops, "holes", (json_int_t)r->holes,
		"loops", (json_int_t)r->loops,
		"max_hops", (json_int_t)r->max_hops, "cycle", r->cycle,
		"deadlock_free_required", r->deadlock_free_required,
		"errors", (int)r->errors, "warnings", (int)r->warnings,
		"failures", ex,
		"entries_differing_from_sm", (json_int_t)count_differences(&v->t, &sm->sub.lft),
		"text", text);
	free(text);
	if (o && (v->sl2vl_read || v->vlarb_read))
		json_object_set_new(o, "qos", json_pack("{s:i,s:i,s:i,s:i}",
			"sl2vl_read", (int)v->sl2vl_read, "sl2vl_wrong", (int)v->sl2vl_wrong,
			"vlarb_read", (int)v->vlarb_read,
			"vlarb_unserved", (int)v->vlarb_unserved));
	if (o)
		json_object_set_new(o, "result", json_string(r->errors || v->failed ?
							     "FAILED" : "OK"));
	return o;
}

static void verify_finish(struct ctl_verify *v)
{
	struct sm *sm = v->sm;
	json_t *res = NULL;
	char err[256] = "";
	if (v->cancelled) {
		snprintf(err, sizeof(err), "verify: cancelled (the daemon is stopping)");
	} else if (sm->sub.model != v->model || sm->sweep.heavy_sweeps != v->heavy_sweeps ||
		   sm->sw.activity == SM_HEAVY_SWEEP) {
		snprintf(err, sizeof(err), "verify: the subnet was reconfigured while its tables were read; ask again");
	} else {
		/* above LinearFDBTop a switch drops: so does the table checked */
		for (uint32_t r = 0; r < v->t.n_sw; r++) {
			uint8_t *row = lft_row(&v->t, r);
			for (uint32_t lid = v->top[r] + 1; lid <= v->t.max_lid; lid++)
				row[lid] = LFT_DROP;
		}
		struct verify_opts vo = {
			.deadlock_free_required = verify_engine_deadlock_free(sm->sub.engine),
			.max_op_vls = sm->cfg.max_op_vls,
		};
		struct verify_report r;
		if (route_verify(&sm->sub.model->f, &v->t, &vo, &r) < 0) {
			snprintf(err, sizeof(err), "verify: out of memory");
		} else {
			r.elapsed_ms = clock_ms() - v->t0;
			res = verify_json(v, &r);
			if (r.errors || v->failed)
				log_warn("verify: the tables the switches hold fail the check: %llu pairs undelivered, %u reads failed%s, %u LID offsets unbalanced",
					 (unsigned long long)r.unreachable, v->failed,
					 r.cycle ? ", a dependency cycle" : "",
					 r.offsets_unbalanced);
			if (!res)
				snprintf(err, sizeof(err), "verify: out of memory");
		}
	}
	if (sm->ctl)
		control_reply(sm->ctl, v->reply_id, res, err);
	else
		json_decref(res);
	verify_free(v);
}

/* "\"L1\" (3, 7): SL-to-VL ..." for the text, the first few only. */
static void qos_name(struct ctl_verify *v, const struct vq *q, const char *what)
{
	if (v->n_named < VQ_QOS_NAMED)
		snprintf(v->qos_named[v->n_named++], sizeof(v->qos_named[0]),
			 "\"%s\" (%u, %u): %s", fabric_node_name(&v->model->f, q->node),
			 q->in, q->out, what);
}

/*
 * A SLtoVLMappingTable read (SL 2i high nibble of byte i) against the
 * SM's table for the pair; a VLArbitrationTable low block read against
 * the VLs the port's tables send on: each needs an entry of weight > 0.
 */
static void judge_qos(struct ctl_verify *v, const struct vq *q, const uint8_t *data)
{
	const struct lft_tables *t = &v->sm->sub.lft;
	if (q->qos == VQ_SL2VL) {
		const uint8_t *want = lft_sl2vl(t, q->node, q->in, q->out);
		v->sl2vl_read++;
		for (unsigned sl = 0; want && sl < QOS_SLS; sl++) {
			unsigned vl = sl & 1 ? data[sl / 2] & 0xf : data[sl / 2] >> 4;
			if (vl != want[sl]) {
				v->sl2vl_wrong++;
				qos_name(v, q, "SL-to-VL table differs from the SM's");
				return;
			}
		}
		return;
	}
	const struct fab_node *n = &v->model->f.nodes[q->node];
	uint32_t need = 0, served = 0;
	for (unsigned in = 0; in <= n->nports; in++) {
		const uint8_t *tab = lft_sl2vl(t, q->node, in, q->out);
		for (unsigned sl = 0; tab && sl < QOS_SLS &&
		     (n->type == FAB_SWITCH ? in != q->out : in == q->out); sl++)
			if (tab[sl] < 15)
				need |= 1u << tab[sl];
	}
	for (unsigned i = 0; i < 32; i++)
		if (data[2 * i + 1])
			served |= 1u << (data[2 * i] & 0xf);
	v->vlarb_read++;
	if (need & ~served) {
		v->vlarb_unserved++;
		qos_name(v, q, "VL arbitration leaves a VL in use unserved");
	}
}

static void on_verify_read(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct vq *q = arg;
	struct ctl_verify *v = q->v;
	uint32_t row = v->t.row_of_node[q->node];
	if (status != TXN_OK || len < SMP_DATA_OFFS + SMP_DATA_SIZE || smp_status(resp)) {
		v->cancelled |= status == TXN_CANCELLED;
		v->failed++;
	} else if (q->qos) {
		judge_qos(v, q, resp + SMP_DATA_OFFS);
	} else if (q->mft) {
		const uint8_t *data = resp + SMP_DATA_OFFS;
		uint32_t b = q->mft_mod & 0x1ff, pos = q->mft_mod >> 28;
		for (uint32_t i = 0; i < 32 && b * 32 + i < v->n_ml; i++) {
			uint64_t *m = v->mft + ((size_t)row * v->n_ml + b * 32 + i) *
					     MCAST_MASK_WORDS;
			uint32_t bit = pos * 16;
			m[bit / 64] |= (uint64_t)(data[2 * i] << 8 | data[2 * i + 1]) << (bit % 64);
		}
		v->mft_blocks++;
		if (v->sm->sub.model == v->model && v->sm->sw.activity != SM_HEAVY_SWEEP)
			devcache_note_read(v->sm->sub.cache, &v->model->f, PLAN_MFT,
					   q->node, 0, q->mft_mod, data);
	} else if (q->block == VQ_SWITCHINFO) {
		struct smp_switchinfo si;
		smp_decode_switchinfo(resp + SMP_DATA_OFFS, &si);
		v->top[row] = si.lft_top;
	} else {
		const uint8_t *data = resp + SMP_DATA_OFFS;
		uint8_t *r = lft_row(&v->t, row);
		for (uint32_t k = 0; k < FAB_LFT_BLOCK; k++)
			if (q->block * FAB_LFT_BLOCK + k <= v->t.max_lid)
				r[q->block * FAB_LFT_BLOCK + k] = data[k];
		v->blocks++;
		/* what the device holds: the next sweep rewrites what differs */
		if (v->sm->sub.model == v->model && v->sm->sw.activity != SM_HEAVY_SWEEP)
			devcache_note_read(v->sm->sub.cache, &v->model->f, PLAN_LFT,
					   q->node, 0, q->block, data);
	}
	if (--v->pending == 0)
		verify_finish(v);
}

/*
 * A read of kind qos (VQ_SL2VL, VQ_VLARB block 1) of the pair (in, out)
 * of node (a CA: port out, reached by its own path), modifier mod.
 */
static void ask_qos(struct ctl_verify *v, uint32_t node, int qos, unsigned in,
		    unsigned out, uint32_t mod)
{
	const struct fabric *f = &v->model->f;
	const struct fab_node *n = &f->nodes[node];
	struct vq *q = &v->q[v->n_q++];
	*q = (struct vq){ .v = v, .node = node, .mft_mod = mod, .qos = (uint8_t)qos,
			  .in = (uint8_t)in, .out = (uint8_t)out };
	uint8_t mad[MAD_SIZE], path[FAB_MAX_HOPS + 1];
	struct mad_addr to;
	int hops = discovery_port_path(f, n->first_port + (n->type == FAB_SWITCH ? 0 : out),
				       path);
	smp_init_dr(mad, IB_MAD_METHOD_GET, qos == VQ_SL2VL ? IB_ATTR_SLVL_TABLE :
		    IB_ATTR_VL_ARBITRATION, mod, path, hops);
	smp_dr_address(&to);
	if (hops >= 0 && txn_submit(v->sm->txn, mad, sizeof(mad), &to, node,
				    on_verify_read, q) == 0)
		v->pending++;
	else
		v->failed++;
}

/* Is port k of node n one whose QoS tables the heavy sweep writes? */
static int qos_port(const struct fabric *f, const struct fab_node *n, unsigned k)
{
	return (k == 0 && n->type == FAB_SWITCH) ||
	       (k > 0 && fabric_port_linked(f, n->first_port + k));
}

/*
 * The QoS tables the heavy sweep wrote (sm/write/plan_qos.c): every
 * switch (input, output) pair's SL-to-VL table and every linked output's
 * low VL arbitration block (the default one, weight on every VL in use:
 * not a qos.vlarb_low of the policy's), every linked CA port's two;
 * only_count: counted in *count, else asked.
 */
static void ask_qos_all(struct ctl_verify *v, const struct lft_tables *t,
			int only_count, size_t *count)
{
	const struct fabric *f = &v->model->f;
	const struct config *c = &v->sm->cfg;
	/* the default low table (every VL in use): a given one is the admin's */
	int arb = c->qos_mode == QOS_NONE || !c->qos_vlarb_low.given;
	for (uint32_t ni = 0; t->sl2vl && ni < f->n_nodes; ni++) {
		const struct fab_node *n = &f->nodes[ni];
		int sw = n->type == FAB_SWITCH;
		for (unsigned out = 0; out <= n->nports; out++) {
			if (!qos_port(f, n, out) || (!sw && !out))
				continue;
			for (unsigned in = 0; in <= n->nports; in++) {
				if (sw ? in == out || !qos_port(f, n, in) : in != out)
					continue;
				if (!lft_sl2vl(t, ni, in, out))
					continue;
				if (only_count)
					(*count)++;
				else
					ask_qos(v, ni, VQ_SL2VL, in, out,
						sw ? in << 8 | out : 0);
			}
			uint8_t *raw = v->model->pi_raw ?
				       (uint8_t *)v->model->pi_raw[n->first_port + out] : NULL;
			if (!out || !raw || !arb ||
			    !mad_get_field(raw, 0, IB_PORT_VL_ARBITRATION_LOW_CAP_F))
				continue;
			if (only_count)
				(*count)++;
			else
				ask_qos(v, ni, VQ_VLARB, out, out, 1u << 16 | out);
		}
	}
}

/* A read of node's SwitchInfo, LFT block or (mft) MFT block mft_mod. */
static void ask(struct ctl_verify *v, uint32_t node, uint32_t block,
		int mft, uint32_t mft_mod)
{
	const struct fab_node *n = &v->model->f.nodes[node];
	struct vq *q = &v->q[v->n_q++];
	q->v = v;
	q->node = node;
	q->block = block;
	q->mft_mod = mft_mod;
	q->mft = (uint8_t)mft;
	uint8_t mad[MAD_SIZE];
	struct mad_addr to;
	if (mft)
		smp_init_dr(mad, IB_MAD_METHOD_GET, IB_ATTR_MULTICASTFORWTBL,
			    mft_mod, n->dr_path, n->dr_len);
	else
		smp_init_dr(mad, IB_MAD_METHOD_GET,
			    block == VQ_SWITCHINFO ? IB_ATTR_SWITCH_INFO : IB_ATTR_LINEARFORWTBL,
			    block == VQ_SWITCHINFO ? 0 : block, n->dr_path, n->dr_len);
	smp_dr_address(&to);
	if (txn_submit(v->sm->txn, mad, sizeof(mad), &to, node, on_verify_read, q) == 0)
		v->pending++;
	else
		v->failed++;
}

json_t *ctl_verify(struct sm *sm, const json_t *req, char *err, size_t errlen)
{
	if (!model(sm, err, errlen))
		return NULL;
	if (sm->state != SMS_MASTER || !sm->txn) {
		snprintf(err, errlen, "verify: not MASTER (state %s)",
			 sm_state_name(sm->state));
		return NULL;
	}
	if (!sm->sub.lft.port) {
		snprintf(err, errlen, "verify: no routes computed yet%s",
			 errors_active(&sm->errs, SM_ERR_ROUTING) ? " (the routing failed: see status)" : "");
		return NULL;
	}
	if (sm->sw.activity != SM_IDLE || sm->ctl_verify) {
		snprintf(err, errlen, "verify: %s; try again when it is done",
			 sm->ctl_verify ? "a verify is running" : "a sweep is running");
		return NULL;
	}
	const struct fabric *f = &sm->sub.model->f;
	struct ctl_verify *v = calloc(1, sizeof(*v));
	if (!v || lft_tables_alloc(&v->t, f) < 0) {
		free(v);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	v->sm = sm;
	v->model = sm->sub.model;
	v->heavy_sweeps = sm->sweep.heavy_sweeps;
	v->t0 = clock_ms();
	uint32_t blocks = v->t.max_lid / FAB_LFT_BLOCK + 1;
	/* multicast: the MFT blocks up to the highest MLID in use */
	for (uint32_t i = 0; i < sm->mc.n; i++)
		if (sm->mc.g[i] && sm->mc.g[i]->mlid - MC_MLID_BASE + 1u > v->n_ml)
			v->n_ml = sm->mc.g[i]->mlid - MC_MLID_BASE + 1u;
	v->n_ml = (v->n_ml + MFT_BLOCK - 1) / MFT_BLOCK * MFT_BLOCK;
	v->mc_settled = mcast_sm_settled_gen(sm);
	uint32_t mblocks = v->n_ml / MFT_BLOCK;
	size_t n_qos = 0;
	ask_qos_all(v, &sm->sub.lft, 1, &n_qos);
	v->top = calloc(v->t.n_sw ? v->t.n_sw : 1, sizeof(*v->top));
	v->q = calloc((size_t)v->t.n_sw * (blocks + 1 + (size_t)mblocks * 16) + n_qos + 1,
		      sizeof(*v->q));
	v->mft = calloc((size_t)v->t.n_sw * v->n_ml * MCAST_MASK_WORDS + 1,
			sizeof(*v->mft));
	if (!v->top || !v->q || !v->mft) {
		verify_free(v);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	memset(v->t.port, LFT_DROP, (size_t)v->t.n_sw * (v->t.max_lid + 1));
	sm->ctl_verify = v;
	v->pending = 1;		/* held until every read is queued */
	for (uint32_t r = 0; r < v->t.n_sw; r++) {
		const struct fab_node *n = &f->nodes[v->t.sw_node[r]];
		ask(v, v->t.sw_node[r], VQ_SWITCHINFO, 0, 0);
		for (uint32_t b = 0; b < blocks; b++)
			ask(v, v->t.sw_node[r], b, 0, 0);
		for (uint32_t b = 0; b < mblocks && b * MFT_BLOCK < n->mft_cap; b++)
			for (uint32_t q = 0; q <= n->nports / MFT_PORTS; q++)
				ask(v, v->t.sw_node[r], 0, 1, q << 28 | b);
	}
	ask_qos_all(v, &sm->sub.lft, 0, NULL);
	if (--v->pending == 0) {	/* nothing went out (answers never come inside txn_submit) */
		verify_free(v);
		snprintf(err, errlen, "verify: no read could be sent");
		return NULL;
	}
	/* the answer when every read is in */
	v->reply_id = sm->ctl ? control_defer(sm->ctl) : 0;
	return NULL;
}
