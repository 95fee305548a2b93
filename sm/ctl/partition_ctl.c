/*
 * Partitions at run time (partition_ctl.h): the reload's comparison, the
 * P_Key violations of traps 257, ibsmctl partitions.
 */
#include "sm/ctl/partition_ctl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/ctl/control.h"
#include "sm/model/config.h"
#include "sm/daemon.h"

/* ---- what a reload changed ---- */

static int member_same(const struct cfg_member *a, const struct cfg_member *b)
{
	return a->kind == b->kind && !strcmp(a->node, b->node) && a->guid == b->guid &&
	       a->port == b->port && a->full == b->full;
}

/* Partition i of a and of b: the same fields and members, in order. */
static int part_same(const struct config *a, const struct config *b, int i)
{
	const struct cfg_partition *p = &a->parts[i], *q = &b->parts[i];
	if (strcmp(p->name, q->name) || p->pkey != q->pkey ||
	    p->policy != q->policy || p->sl != q->sl || p->ipoib != q->ipoib ||
	    p->n != q->n)
		return 0;
	for (uint32_t k = 0; k < p->n; k++)
		if (p->first + k >= a->n_members || q->first + k >= b->n_members ||
		    !member_same(&a->members[p->first + k], &b->members[q->first + k]))
			return 0;
	return 1;
}

static int weights_same(const struct config *a, const struct config *b)
{
	if (a->n_weights != b->n_weights)
		return 0;
	for (uint32_t i = 0; i < a->n_weights; i++) {
		const struct cfg_weight *w = &a->weights[i], *x = &b->weights[i];
		if (strcmp(w->node, x->node) || w->guid != x->guid ||
		    w->weight != x->weight)
			return 0;
	}
	return 1;
}

int part_config_changed(const struct config *a, const struct config *b,
			char *what, size_t len)
{
	int parts = a->n_parts != b->n_parts || a->default_full != b->default_full;
	for (int i = 0; !parts && i < a->n_parts; i++)
		parts = !part_same(a, b, i);
	int weights = !weights_same(a, b);
	int mode = a->isolation_strict != b->isolation_strict;
	what[0] = '\0';
	if (len)
		snprintf(what, len, "%s%s%s%s%s", parts ? "partitions" : "",
			 parts && (weights || mode) ? ", " : "",
			 weights ? "weights" : "", weights && mode ? ", " : "",
			 mode ? "isolation mode" : "");
	return parts || weights || mode;
}

/* ---- traps 257 ---- */

void pkey_violation_count(struct pkey_violations *pv, const struct fabric *f,
			  uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	uint64_t guid = p->guid ? p->guid : f->nodes[p->node].guid;
	for (uint32_t i = 0; i < pv->n; i++)
		if (pv->v[i].guid == guid && pv->v[i].port == p->num) {
			pv->v[i].count++;
			pv->v[i].lid = p->lid;
			return;
		}
	if (pv->n == pv->cap) {
		uint32_t cap = pv->cap ? pv->cap * 2 : 16;
		void *v;
		if (pv->n >= PKEY_VIOLATION_PORTS ||
		    !(v = realloc(pv->v, (size_t)cap * sizeof(*pv->v))))
			return;	/* counted in the traps' by_number only */
		pv->v = v;
		pv->cap = cap;
	}
	pv->v[pv->n++] = (struct pkey_violation){
		.guid = guid, .lid = p->lid, .port = p->num, .count = 1 };
}

void pkey_violations_free(struct pkey_violations *pv)
{
	free(pv->v);
	memset(pv, 0, sizeof(*pv));
}

/* ---- ibsmctl partitions ---- */

json_t *ctl_partitions(struct sm *sm, const json_t *req, char *err, size_t errlen)
{
	const struct part_model *m = &sm->parts;
	if (!m->n_parts) {
		snprintf(err, errlen, "no configured subnet yet (state %s)",
			 sm_state_name(sm->state));
		return NULL;
	}
	json_t *parts = json_array(), *viol = json_array();
	for (uint32_t i = 0; parts && i < m->n_parts; i++) {
		uint32_t full = 0, limited = 0;
		for (uint32_t pi = 0; pi < m->n_ports; pi++)
			for (uint32_t k = m->mem_off[pi]; k < m->mem_off[pi + 1]; k++)
				if (PART_IDX(m->mem[k]) == i) {
					if (m->mem[k] & PART_FULL)
						full++;
					else
						limited++;
				}
		char pkey[8];
		snprintf(pkey, sizeof(pkey), "0x%04x", m->parts[i].pkey);
		json_t *o = json_pack("{s:s,s:s,s:s,s:I,s:I}", "name", m->parts[i].name,
				      "pkey", pkey,
				      "policy", part_policy_names[m->parts[i].policy],
				      "full", (json_int_t)full,
				      "limited", (json_int_t)limited);
		const struct lft_tables *t = &sm->sub.lft;
		int sl = t->part_sl && i < t->n_part_sl ? t->part_sl[i] : m->parts[i].sl;
		if (o && sl >= 0)
			json_object_set_new(o, "sl", json_integer(sl));
		json_array_append_new(parts, o);
	}
	for (uint32_t i = 0; viol && i < sm->pkey_viol.n; i++) {
		const struct pkey_violation *v = &sm->pkey_viol.v[i];
		char guid[24];
		snprintf(guid, sizeof(guid), "0x%016" PRIx64, v->guid);
		json_array_append_new(viol, json_pack("{s:s,s:i,s:I,s:I}", "guid", guid,
						      "port", v->port,
						      "lid", (json_int_t)v->lid,
						      "count", (json_int_t)v->count));
	}
	json_t *reply = json_pack("{s:o,s:o}", "partitions", parts, "violations", viol);
	/* a standby's view is the one it configured when it was master */
	if (reply && sm->state != SMS_MASTER && sm->sub.configured_at)
		json_object_set_new(reply, "as_of", control_time_json(sm->sub.configured_at));
	return reply;
}
