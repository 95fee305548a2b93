/*
 * The QoS mode over a routing result: VL budget, clamp, the mode's pure
 * function.  See qos.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/model/qos.h"
#include "sm/base/log.h"
#include "sm/base/nodemap.h"
#include "routing/qos/pvl.h"
#include "routing/qos/vftree.h"
#include "routing/qos/voqsw.h"

static unsigned qos_link_vls(const struct fabric *f, int max_op_vls,
			     uint32_t *narrow);
static unsigned opvls_data_vls(unsigned enc);

/*
 * The data VLs port pi's link runs (both ends' VLCap, ports.max_op_vls),
 * or 15 when it is not linked or a VLCap was not read (offline).
 */
static unsigned port_link_vls(const struct fabric *f, uint32_t pi, int max_op_vls)
{
	if (!fabric_port_linked(f, pi))
		return 15;
	const struct fab_port *p = &f->ports[pi], *q = &f->ports[p->remote];
	if (!p->vl_cap || !q->vl_cap)
		return 15;
	return opvls_data_vls(qos_link_opvls(p->vl_cap, q->vl_cap, (unsigned)max_op_vls));
}

/* The table "every SL on VL vl" in t->sl2vl: its index, added when missing. */
static uint16_t lanes_single(struct lft_tables *t, uint8_t vl)
{
	for (uint32_t k = 1; k < t->sl2vl_n; k++)
		if (t->sl2vl[(size_t)k * QOS_SLS] == vl)
			return (uint16_t)k;
	memset(t->sl2vl + (size_t)t->sl2vl_n * QOS_SLS, vl, QOS_SLS);
	return (uint16_t)t->sl2vl_n++;
}

/*
 * Output port pi of node ni (slots (in, out) of a switch, (k, k) of a
 * CA): table 0, the two lanes, when its link runs the higher lane's
 * VL; else every SL on one VL it runs (the fast one, or the lower lane,
 * or VL0), the port counted in r->lanes_refused and logged.
 */
static uint16_t lanes_port_table(const struct config *cfg, const struct fabric *f,
				 struct lft_tables *t, uint32_t ni, uint32_t pi,
				 struct qos_report *r)
{
	unsigned fast = (unsigned)cfg->cong_fast_sl, slow = (unsigned)cfg->cong_slow_sl;
	unsigned hi = fast > slow ? fast : slow, lo = fast + slow - hi;
	unsigned n = port_link_vls(f, pi, cfg->max_op_vls);
	if (n > hi)
		return 0;
	uint8_t vl = (uint8_t)(fast < n ? fast : lo < n ? lo : 0);
	r->lanes_refused++;
	log_limited(LOG_WARN, "congestion: \"%s\" port %u runs VL0-%u only: no slow lane (VL %u) there, every SL on VL %u",
		    fabric_node_name(f, ni), f->ports[pi].num, n - 1, slow, vl);
	return lanes_single(t, vl);
}

/*
 * congestion.mode dftree (sm/model/lanes.h): SL fast_sl on VL fast_sl,
 * SL slow_sl on VL slow_sl, every other SL on the fast VL, on every CA
 * port and switch (input, output) pair; no per-pair SL (the PathRecord
 * SL is the lanes').  A port whose link cannot run the higher VL gets
 * every SL on one VL it runs.
 */
static int apply_lanes(const struct config *cfg, const struct fabric *f,
		       struct lft_tables *t, struct qos_report *r)
{
	/* table 0 and at most one "every SL on one VL" table per data VL */
	if (lft_sl2vl_slots(f, t) < 0 || !(t->sl2vl = malloc(16 * QOS_SLS)))
		return -1;
	memset(t->sl2vl, cfg->cong_fast_sl, QOS_SLS);
	t->sl2vl[cfg->cong_slow_sl] = (uint8_t)cfg->cong_slow_sl;
	t->sl2vl_n = 1;
	r->vls = 2;
	for (uint32_t ni = 0; ni < f->n_nodes && ni < t->sl2vl_nodes; ni++) {
		const struct fab_node *n = &f->nodes[ni];
		uint32_t first = t->sl2vl_first[ni];
		unsigned w = t->sl2vl_width[ni];
		if (first == UINT32_MAX)
			continue;
		for (unsigned out = 1; out <= n->nports; out++) {
			uint16_t k = lanes_port_table(cfg, f, t, ni, n->first_port + out, r);
			for (unsigned in = 0; k && in <= n->nports; in++)
				if (n->type == FAB_SWITCH || in == out)
					t->sl2vl_idx[(size_t)first + (size_t)in * w + out] = k;
		}
	}
	return 0;
}

/* qos.mode voqsw: stage 4's figures into r. */
static int apply_voqsw(const struct config *cfg, const struct fabric *f,
		       struct lft_tables *t, struct qos_report *r)
{
	struct voqsw_params p = {
		.n_sls = cfg->qos_sls ? (unsigned)cfg->qos_sls : QOS_VOQSW_SLS,
		.n_vls = r->vls,
		.max_op_vls = (unsigned)cfg->max_op_vls,
	};
	struct voqsw_report v;
	r->sls = p.n_sls;
	if (voqsw_apply(f, t, &p, &v) < 0)
		return -1;
	r->paths = v.paths;
	r->tuples = v.tuples;
	r->considered = v.considered;
	r->weight = v.weight;
	r->weight_considered = v.weight_considered;
	r->paths_covered = v.paths_covered;
	r->sls_used = v.sls_used;
	return 0;
}

/*
 * The partitions' VLs and SLs (routing/qos/pvl.h) over the r->vls data VLs
 * the mode had (ports.max_op_vls's when no link's VLCap is known); a
 * strict failure in r->fail (logged), -1.
 */
static int apply_parts(const struct config *cfg, const struct fabric *f,
		       const struct part_model *parts, struct lft_tables *t,
		       struct qos_report *r)
{
	char msg[sizeof(r->fail)];
	unsigned vls = r->vls;
	if (!r->link_vls && !cfg->qos_max_vls)	/* no VLCap read (offline) */
		vls = cfg->max_op_vls >= 5 ? 15 : 1u << (cfg->max_op_vls - 1);
	int rc = pvl_apply(f, t, parts, vls, msg, sizeof(msg));
	if (rc == PVL_STRICT_FAIL) {
		snprintf(r->fail, sizeof(r->fail), "%s", msg);
		log_err("partitions: %s: routing refused, the old tables kept", msg);
		return -1;
	}
	if (rc == 1)
		log_warn("partitions: %s", msg);
	size_t l = 0;
	msg[0] = '\0';
	for (uint32_t p = 1; rc >= 0 && t->part_sl && p < t->n_part_sl; p++) {
		if (t->part_sl[p] && l < sizeof(msg))
			l += (size_t)snprintf(msg + l, sizeof(msg) - l, "%s%s SL %u",
					      l ? ", " : "", parts->parts[p].name,
					      t->part_sl[p]);
	}
	if (msg[0])
		log_info("partitions: %s over %u data VLs", msg, vls);
	return rc < 0 ? -1 : 0;
}

int qos_apply(const struct config *cfg, const struct fabric *f,
	      const struct part_model *parts, struct lft_tables *t,
	      struct qos_report *r)
{
	uint32_t narrow;
	int need_parts = pvl_needed(parts);
	memset(r, 0, sizeof(*r));
	r->mode = cfg->qos_mode;
	if (t->engine_sls)	/* the engine's layers; the policy refuses a mode beside them */
		return 0;
	if (cfg->qos_mode == QOS_NONE && cfg->cong_mode == CONG_DFTREE) {
		lft_tables_free_qos(t);
		r->mode = QOS_LANES;
		int rc = apply_lanes(cfg, f, t, r);
		if (rc < 0) {
			lft_tables_free_qos(t);
			log_err("congestion: the lanes' SL-to-VL tables could not be made (out of memory): no SL2VL writes");
		}
		return rc;
	}
	if (cfg->qos_mode == QOS_NONE && !need_parts) {
		lft_tables_free_qos(t);
		return 0;
	}
	unsigned links = qos_link_vls(f, cfg->max_op_vls, &narrow);
	unsigned want = cfg->qos_max_vls ? (unsigned)cfg->qos_max_vls : links;
	r->link_vls = links;
	if (want == 0)
		want = 1;	/* no link: nothing to spread */
	if (links && want > links) {
		const struct fab_port *p = &f->ports[narrow];
		const struct fab_port *q = &f->ports[p->remote];
		log_warn("qos.max_vls %u: clamped to %u, the data VLs the link \"%s\" port %u - \"%s\" port %u runs",
			 want, links, fabric_node_name(f, p->node), p->num,
			 fabric_node_name(f, q->node), q->num);
		want = links;
		r->clamped = 1;
	}
	r->vls = want;
	int rc = -1;
	switch (cfg->qos_mode) {
	case QOS_VFTREE:
		rc = vftree_apply(f, t, want);
		break;
	case QOS_VOQSW:
		rc = apply_voqsw(cfg, f, t, r);
		break;
	default:
		lft_tables_free_qos(t);
		rc = 0;
		break;
	}
	if (rc == 0 && need_parts)
		rc = apply_parts(cfg, f, parts, t, r);
	if (rc < 0 && r->fail[0])
		lft_tables_free_qos(t);
	else if (rc < 0)
		log_err("qos: the SLs could not be assigned (out of memory): SL 0 everywhere, no SL2VL writes");
	return rc;
}

/* Parts per thousand of a over b, 1000 when b is 0 (nothing to cover). */
static unsigned permille(uint64_t a, uint64_t b)
{
	return b ? (unsigned)(a * 1000 / b) : 1000;
}

void qos_describe(const struct qos_report *r, char *buf, size_t len)
{
	unsigned tw = permille(r->weight_considered, r->weight);
	unsigned pc = permille(r->paths_covered, r->paths);
	switch (r->mode) {
	case QOS_VFTREE:
		snprintf(buf, len, "qos: vFtree over %u VLs", r->vls);
		break;
	case QOS_VOQSW:
		snprintf(buf, len, "qos: voqsw: %u of %u tuples, weight %u.%u%%, paths covered %llu of %llu (%u.%u%%), SLs used %u of %u, %u VLs",
			 r->considered, r->tuples, tw / 10, tw % 10,
			 (unsigned long long)r->paths_covered,
			 (unsigned long long)r->paths, pc / 10, pc % 10,
			 r->sls_used, r->sls, r->vls);
		break;
	case QOS_LANES:
		snprintf(buf, len, "qos: dftree lanes, %u ports with one lane",
			 r->lanes_refused);
		break;
	default:
		snprintf(buf, len, "qos: none");
		break;
	}
}

void qos_log(const struct qos_report *r)
{
	char line[256];
	qos_describe(r, line, sizeof(line));
	if (r->mode == QOS_VOQSW)
		log_notice("%s", line);
	else if (r->mode != QOS_NONE)
		log_info("%s", line);
}

/* Data VLs an OperationalVLs encoding stands for (1: VL0 ... 5: VL0-14). */
static unsigned opvls_data_vls(unsigned enc)
{
	if (enc == 0)
		return 0;
	return enc >= 5 ? 15 : 1u << (enc - 1);
}

/*
 * The fewest data VLs a link of f runs (OperationalVLs as the sweep sets
 * it: the VLCap of both ends and ports.max_op_vls), 0 when no link says;
 * *narrow (may be NULL) gets that link's lower port, FAB_NONE for none.
 */
static unsigned qos_link_vls(const struct fabric *f, int max_op_vls,
			     uint32_t *narrow)
{
	unsigned best = 0;
	if (narrow)
		*narrow = FAB_NONE;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (!fabric_port_linked(f, pi) || p->remote < pi)
			continue;	/* each link once, from its lower port */
		const struct fab_port *r = &f->ports[p->remote];
		if (!p->vl_cap || !r->vl_cap)
			continue;	/* not read: no bound known */
		unsigned n = opvls_data_vls(qos_link_opvls(p->vl_cap, r->vl_cap, (unsigned)max_op_vls));
		if (best == 0 || n < best) {
			best = n;
			if (narrow)
				*narrow = pi;
		}
	}
	return best;
}

