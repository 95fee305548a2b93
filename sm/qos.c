/*
 * The QoS mode over a routing result: VL budget, clamp, the mode's pure
 * function.  See qos.h.
 */
#include <string.h>

#include "qos.h"
#include "log.h"
#include "plan_sweep.h"
#include "../routing/vftree.h"

int qos_apply(const struct config *cfg, const struct fabric *f,
	      struct lft_tables *t, struct qos_report *r)
{
	uint32_t narrow;
	memset(r, 0, sizeof(*r));
	r->mode = cfg->qos_mode;
	if (cfg->qos_mode == QOS_NONE) {
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
			 want, links, f->nodes[p->node].desc, p->num,
			 f->nodes[q->node].desc, q->num);
		want = links;
		r->clamped = 1;
	}
	r->vls = want;
	int rc = -1;
	switch (cfg->qos_mode) {
	case QOS_VFTREE:
		rc = vftree_apply(f, t, want);
		break;
	default:
		lft_tables_free_qos(t);
		break;
	}
	if (rc < 0)
		log_err("qos: the SLs could not be assigned (out of memory): SL 0 everywhere, no SL2VL writes");
	return rc;
}

void qos_log(const struct qos_report *r)
{
	switch (r->mode) {
	case QOS_VFTREE:
		log_info("qos: vFtree over %u VLs", r->vls);
		break;
	default:
		break;
	}
}
