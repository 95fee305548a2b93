/*
 * Extended LIDs, the SM's side: detection, mode, vLIDs (sm/discover/xlid_sm.h).
 */
#include "sm/discover/xlid_sm.h"

#include <infiniband/mad.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/smp.h"
#include "mad/xlid.h"
#include "sm/base/log.h"
#include "sm/base/nodemap.h"
#include "sm/discover/sweep.h"

struct xq {
	struct xprobe *x;
	uint32_t node;
	int sa_only;		/* a plain CA: for the SA, not the mode */
};

struct xprobe {
	struct fabric *f;
	struct xq *q;
	uint32_t n_q;
	uint32_t pending;
	int done_called;
	int started;		/* xprobe_start() returned */
	int orphan;		/* abandoned while answers were due */
	struct xprobe_stats st;
	xprobe_fn done;
	void *arg;
};

/* A CA behind a vSwitch (its PF or a VF): it answers for its port 1. */
static int ca_behind_vswitch(const struct fabric *f, uint32_t n, uint32_t *pi)
{
	const struct fab_node *nd = &f->nodes[n];
	if (nd->type == FAB_SWITCH || nd->nports < 1)
		return 0;
	int vf;
	*pi = fabric_port(f, n, 1);
	return fabric_vswitch_of(f, *pi, &vf) != FAB_NONE;
}

/* Switches and the CAs behind vSwitches are asked; other CAs never use a vLID. */
static int matters(const struct fabric *f, uint32_t n)
{
	uint32_t pi;
	return f->nodes[n].type == FAB_SWITCH || ca_behind_vswitch(f, n, &pi);
}

int xlid_probe_wanted(const struct fabric *f, enum tristate mode)
{
	if (mode == TRI_OFF)
		return 0;
	if (mode == TRI_ON)
		return 1;
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (fabric_is_vswitch(f, n))
			return 1;
	return 0;
}

static void finish(struct xprobe *x)
{
	if (x->done_called || !x->started)
		return;	/* not yet returned from xprobe_start(): it says so */
	x->done_called = 1;
	x->done(x->arg, x);
}

static void on_cap(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct xq *q = arg;
	struct xprobe *x = q->x;
	struct fab_node *nd = &x->f->nodes[q->node];
	struct xlid_cap c;
	char err[128];
	if (x->orphan) {
		/* its sweep was abandoned: the fabric is gone, nobody waits */
		if (--x->pending == 0)
			xprobe_free(x);
		return;
	}
	if (status == TXN_CANCELLED) {
		/* shutting down: the caller frees the probe, nothing goes on */
		x->pending--;
		return;
	}
	nd->xlid = XLID_NO;
	if (status == TXN_OK && len >= SMP_DATA_OFFS + SMP_DATA_SIZE &&
	    !smp_status(resp)) {
		if (xlid_cap_decode(resp + SMP_DATA_OFFS, &c, err, sizeof(err)) < 0)
			log_warn("XLIDCap of %s (0x%016" PRIx64 ") does not decode: %s",
				 nd->desc, nd->guid, err);
		else if (c.supported) {
			nd->xlid = XLID_YES;
			nd->xlid_cap = c.lft_cap;
		}
	}
	if (q->sa_only)
		;
	else if (nd->xlid == XLID_YES)
		x->st.capable++;
	else
		x->st.lacking++;
	if (--x->pending == 0)
		finish(x);
}

/* A CA not behind a vSwitch (a plain host), asked at its port 1. */
static int plain_ca(const struct fabric *f, uint32_t n, uint32_t *pi)
{
	const struct fab_node *nd = &f->nodes[n];
	if (nd->type == FAB_SWITCH || nd->nports < 1 || ca_behind_vswitch(f, n, pi))
		return 0;
	*pi = fabric_port(f, n, 1);
	return *pi != FAB_NONE;
}

struct xprobe *xprobe_start(struct txn_engine *txn, struct fabric *f,
			    const struct fabric *prev, int hosts,
			    xprobe_fn done, void *arg)
{
	struct xprobe *x = calloc(1, sizeof(*x));
	if (!x || !(x->q = calloc((size_t)f->n_nodes + 1, sizeof(*x->q)))) {
		free(x);
		return NULL;
	}
	x->f = f;
	x->done = done;
	x->arg = arg;
	x->pending = 1;	/* held until every query is queued */
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		struct fab_node *nd = &f->nodes[n];
		uint32_t hpi = FAB_NONE;
		int sa_only = hosts && plain_ca(f, n, &hpi) &&
			      f->ports[hpi].remote != FAB_NONE;
		if (!sa_only && !matters(f, n))
			continue;
		uint32_t pn = prev ? fabric_find_node(prev, nd->guid) : FAB_NONE;
		if (pn != FAB_NONE && prev->nodes[pn].xlid != XLID_UNKNOWN) {
			/* what it said last sweep: a device does not change its mind */
			nd->xlid = prev->nodes[pn].xlid;
			nd->xlid_cap = prev->nodes[pn].xlid_cap;
			if (sa_only)
				continue;
			x->st.known++;
			if (nd->xlid == XLID_YES)
				x->st.capable++;
			else
				x->st.lacking++;
			continue;
		}
		uint8_t path[FAB_MAX_HOPS + 1];
		int hops;
		uint32_t mod = 0, pi = FAB_NONE;
		if (nd->type == FAB_SWITCH) {
			memcpy(path, nd->dr_path, sizeof(path));
			hops = nd->dr_len;
		} else {
			if (sa_only)
				pi = hpi;
			else
				ca_behind_vswitch(f, n, &pi);
			mod = f->ports[pi].num;
			hops = discovery_port_path(f, pi, path);
		}
		struct xq *q = &x->q[x->n_q++];
		q->x = x;
		q->node = n;
		q->sa_only = sa_only;
		uint8_t mad[MAD_SIZE];
		struct mad_addr to;
		smp_init_dr(mad, IB_MAD_METHOD_GET, XLID_ATTR_CAP, mod, path, hops);
		smp_dr_address(&to);
		x->st.asked += !sa_only;
		if (hops >= 0 &&
		    txn_submit(txn, mad, sizeof(mad), &to, n, on_cap, q) == 0) {
			x->pending++;
		} else {
			nd->xlid = XLID_NO;
			x->st.lacking += !sa_only;
		}
	}
	x->pending--;
	x->started = 1;
	return x;
}

int xprobe_finished(const struct xprobe *x)
{
	return x->pending == 0;
}

const struct xprobe_stats *xprobe_stats(const struct xprobe *x)
{
	return &x->st;
}

void xprobe_abandon(struct xprobe *x)
{
	if (!x)
		return;
	if (!x->pending) {
		xprobe_free(x);
		return;
	}
	x->orphan = 1;
	x->f = NULL;
}

void xprobe_free(struct xprobe *x)
{
	if (!x)
		return;
	free(x->q);
	free(x);
}

/* Names the devices asked that lack the capability: the first few, then a count. */
static uint32_t name_lacking(const struct fabric *f, char *out, size_t len)
{
	uint32_t k = 0;
	size_t n = 0;
	if (len)
		out[0] = '\0';
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		/* never asked (or no answer yet) counts as lacking it */
		if (!matters(f, i) || nd->xlid == XLID_YES)
			continue;
		if (k < 4 && n < len)
			n += (size_t)snprintf(out + n, len - n, "%s%s (0x%016" PRIx64 ")",
					      k ? ", " : "", fabric_node_name(f, i), nd->guid);
		k++;
	}
	if (k > 4 && n < len)
		snprintf(out + n, len - n, " and %u more", k - 4);
	return k;
}

int xlid_decide(struct fabric *f, enum tristate mode, int *decided,
		char *lacking, size_t lackinglen, uint32_t *n_lacking,
		char *why, size_t whylen)
{
	/* nothing asked (auto without a vSwitch): nobody said no */
	int asked = xlid_probe_wanted(f, mode);
	uint32_t k = asked ? name_lacking(f, lacking, lackinglen) : 0;
	if (!asked && lackinglen)
		lacking[0] = '\0';
	*n_lacking = k;
	if (why && whylen)
		why[0] = '\0';
	if (*decided < 0) {
		if (mode == TRI_ON && k) {
			snprintf(why, whylen, "extended_lids: on, but %u device%s lack%s "
				 "the extension (XLIDCap): %s", k, k == 1 ? "" : "s",
				 k == 1 ? "s" : "", lacking);
			return -1;
		}
		*decided = mode != TRI_OFF && asked && !k;
	}
	f->xlid_mode = *decided;
	return 0;
}

int xlid_port_ok(const struct fabric *f, uint32_t pi)
{
	int vf;
	uint32_t vs = fabric_vswitch_of(f, pi, &vf);
	return f->xlid_mode && vs != FAB_NONE && vf >= 0 &&
	       f->nodes[vs].xlid == XLID_YES &&
	       f->nodes[f->ports[pi].node].xlid == XLID_YES;
}

uint8_t *xlid_lids_prepare(struct fabric *f, const struct guid_map *persisted)
{
	uint8_t *mark = calloc((size_t)f->n_ports + 1, 1);
	if (!mark)
		return NULL;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		struct fab_port *p = &f->ports[pi];
		if (!fabric_is_endport(f, pi) || (p->flags & FPORT_NOLID) ||
		    !xlid_port_ok(f, pi))
			continue;
		uint32_t old = persisted ? guid_map_get(persisted, p->guid) : FAB_NONE;
		if (old != FAB_NONE && old && !fabric_is_vlid(old))
			continue;	/* a VM on a pLID keeps it */
		mark[pi] = 1;
		p->flags |= FPORT_NOLID;	/* no pLID: lids_assign() skips it */
	}
	return mark;
}

/* held[v - base]: 1 when vLID v is taken (a port of f or a reservation). */
static uint8_t *vlids_held(const struct fabric *f, const struct guid_map *persisted)
{
	uint8_t *held = calloc(XLID_MAX_ENTRIES, 1);
	if (!held)
		return NULL;
	for (uint32_t pi = 0; pi < f->n_ports; pi++)
		if (fabric_is_vlid(f->ports[pi].lid))
			held[f->ports[pi].lid - FAB_VLID_BASE] = 1;
	for (uint32_t i = 0; persisted && i < persisted->cap; i++)
		if (persisted->keys[i] && fabric_is_vlid(persisted->vals[i]))
			held[persisted->vals[i] - FAB_VLID_BASE] = 1;
	return held;
}

uint32_t xlid_alloc_vlid(const struct fabric *f, const struct guid_map *persisted)
{
	uint8_t *held = vlids_held(f, persisted);
	uint32_t v = 0;
	for (uint32_t i = 0; held && i < XLID_MAX_ENTRIES; i++)
		if (!held[i]) {
			v = FAB_VLID_BASE + i;
			break;
		}
	free(held);
	return v;
}

struct xorder {
	uint32_t vs, vf, pi;
};

static int cmp_xorder(const void *a, const void *b)
{
	const struct xorder *x = a, *y = b;
	if (x->vs != y->vs)
		return x->vs < y->vs ? -1 : 1;
	if (x->vf != y->vf)
		return x->vf < y->vf ? -1 : 1;
	return x->pi < y->pi ? -1 : x->pi > y->pi;
}

int xlid_lids_finish(struct fabric *f, const struct guid_map *persisted,
		     uint8_t *mark, uint32_t *given, uint32_t *exhausted)
{
	*given = *exhausted = 0;
	for (uint32_t pi = 0; pi < f->n_ports; pi++)
		if (mark[pi])
			f->ports[pi].flags &= (uint8_t)~FPORT_NOLID;
	/* the persisted vLIDs first, in port order, then the new ones */
	uint8_t *held = calloc(XLID_MAX_ENTRIES, 1);
	if (!held) {
		free(mark);
		return -1;
	}
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		if (!mark[pi])
			continue;
		uint32_t v = persisted ? guid_map_get(persisted, f->ports[pi].guid) : 0;
		f->ports[pi].lid = 0;
		if (fabric_is_vlid(v) && !held[v - FAB_VLID_BASE]) {
			held[v - FAB_VLID_BASE] = 1;
			f->ports[pi].lid = v;
			(*given)++;
			mark[pi] = 0;
		}
	}
	/* an absent port's vLID stays reserved (like its pLID) */
	for (uint32_t i = 0; persisted && i < persisted->cap; i++)
		if (persisted->keys[i] && fabric_is_vlid(persisted->vals[i]))
			held[persisted->vals[i] - FAB_VLID_BASE] = 1;
	/*
	 * The new ones by vSwitch, then VF: a vSwitch's VFs get consecutive
	 * vLIDs, so that its secondary LFT row holds a block or two
	 * (routing/xlft.h), not the span between VFs that discovery order
	 * interleaves with every other vSwitch's.
	 */
	struct xorder *ord = malloc(((size_t)f->n_ports + 1) * sizeof(*ord));
	if (!ord) {
		free(held);
		free(mark);
		return -1;
	}
	uint32_t n_ord = 0;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		if (!mark[pi])
			continue;
		int vf = -1;
		uint32_t vs = fabric_vswitch_of(f, pi, &vf);
		ord[n_ord++] = (struct xorder){ vs, (uint32_t)vf, pi };
	}
	qsort(ord, n_ord, sizeof(*ord), cmp_xorder);
	uint32_t low = 0;
	for (uint32_t k = 0; k < n_ord; k++) {
		uint32_t pi = ord[k].pi;
		while (low < XLID_MAX_ENTRIES && held[low])
			low++;
		if (low == XLID_MAX_ENTRIES) {
			(*exhausted)++;
			continue;
		}
		held[low] = 1;
		f->ports[pi].lid = FAB_VLID_BASE + low;
		(*given)++;
	}
	free(ord);
	free(held);
	free(mark);
	return fabric_index_lids(f);
}
