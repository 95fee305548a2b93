#include "sm/discover/sweep.h"

#include <infiniband/mad.h>
#include <stdlib.h>
#include <string.h>

#include "mad/mkey.h"
#include "mad/smp.h"
#include "sm/base/log.h"
#include "sm/base/nodemap.h"

enum q_kind { Q_NODEINFO, Q_NODEDESC, Q_PORTINFO, Q_SWITCHINFO };

struct query {
	struct discovery *d;
	struct query *next;	/* retry list */
	uint32_t node;		/* target node; for NodeInfo the parent (or FAB_NONE) */
	uint8_t kind;
	uint8_t port;		/* PortInfo: its port; NodeInfo: the parent's port */
	uint8_t hops;
	uint8_t path[FAB_MAX_HOPS + 1];
};

struct pending_q {
	struct query *head;
};

static void submit(struct discovery *d, struct query *q);

static const char *kind_name(int k)
{
	static const char *const n[] = { "NodeInfo", "NodeDescription",
					 "PortInfo", "SwitchInfo" };
	return n[k];
}

static int grow_raw(struct discovery *d)
{
	struct fabric *f = &d->f;
	if (f->cap_ports > d->raw_ports_cap) {
		void *p = realloc(d->pi_raw, (size_t)f->cap_ports * SMP_DATA_SIZE);
		if (!p)
			return -1;
		d->pi_raw = p;
		d->raw_ports_cap = f->cap_ports;
	}
	if (f->cap_nodes > d->raw_nodes_cap) {
		void *p = realloc(d->si_raw, (size_t)f->cap_nodes * SMP_DATA_SIZE);
		if (!p)
			return -1;
		d->si_raw = p;
		d->raw_nodes_cap = f->cap_nodes;
	}
	return 0;
}

static struct query *new_query(struct discovery *d, int kind, uint32_t node,
			       int port, const uint8_t *path, int hops)
{
	struct query *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->d = d;
	q->kind = (uint8_t)kind;
	q->node = node;
	q->port = (uint8_t)port;
	q->hops = (uint8_t)hops;
	memcpy(q->path, path, (size_t)hops + 1);
	return q;
}

static void ask(struct discovery *d, int kind, uint32_t node, int port,
		const uint8_t *path, int hops)
{
	struct query *q = new_query(d, kind, node, port, path, hops);
	if (!q) {
		log_err("discovery: out of memory");
		d->unresponsive++;
		return;
	}
	submit(d, q);
}

/*
 * The discovery goes in waves: the nodes a wave finds are explored when it
 * has ended, so that by then every link into them from the wave before is
 * known.  The near end of such a link is not asked for its PortInfo: the
 * two ends of a link share its state, width and speed, and a switch's
 * ports share their capabilities, so infer_ports() fills the port in from
 * its partner and its node's other ports when the discovery is done.  The
 * first Set's answer confirms it or puts it right (program.c).  In a fat
 * tree this saves one PortInfo per switch-to-switch link.
 *
 * That holds for a link still in Init.  On a configured fabric the near end
 * may be Armed while the far end is Active, so an Active link's near end is
 * inferred only from the last sweep: it was Active there, cabled to the
 * same port, and the switch's SwitchInfo shows no PortStateChange -- a port
 * leaves Active only through Down, which sets that bit.  A switch whose bit
 * is set has its inferred ports read after all (infer_ports).
 */
static uint32_t prev_twin(const struct discovery *d, uint32_t pi);

static int inferable(const struct discovery *d, uint32_t pi)
{
	const struct fabric *f = &d->f;
	const struct fab_port *p = &f->ports[pi];
	if (p->remote == FAB_NONE)
		return 0;
	const struct fab_port *a = &f->ports[p->remote];
	if (f->nodes[p->node].type != FAB_SWITCH || f->nodes[p->node].nports < 2 ||
	    f->nodes[a->node].type != FAB_SWITCH || !(a->flags & FPORT_PRESENT) ||
	    a->phys_state != PHYS_LINKUP)
		return 0;
	return a->state == PORT_INIT ||
	       (a->state == PORT_ACTIVE && prev_twin(d, pi) != FAB_NONE);
}

/*
 * The same port in the last sweep's model if it was Active there and
 * cabled to the same port as now, else FAB_NONE.
 */
static uint32_t prev_twin(const struct discovery *d, uint32_t pi)
{
	const struct discovery *pd = d->prev;
	if (!pd)
		return FAB_NONE;
	const struct fabric *f = &d->f, *pf = &pd->f;
	const struct fab_port *p = &f->ports[pi];
	uint32_t pn = fabric_find_node(pf, f->nodes[p->node].guid);
	if (pn == FAB_NONE || pf->nodes[pn].nports != f->nodes[p->node].nports)
		return FAB_NONE;
	uint32_t pp = fabric_port(pf, pn, p->num);
	const struct fab_port *q = &pf->ports[pp];
	if (!(q->flags & FPORT_PRESENT) || q->state != PORT_ACTIVE ||
	    q->remote == FAB_NONE || p->remote == FAB_NONE)
		return FAB_NONE;
	const struct fab_port *qa = &pf->ports[q->remote], *a = &f->ports[p->remote];
	if (pf->nodes[qa->node].guid != f->nodes[a->node].guid || qa->num != a->num)
		return FAB_NONE;
	return pp;
}

static int note_inferred(struct discovery *d, uint32_t pi)
{
	if (d->n_inferred == d->cap_inferred) {
		uint32_t cap = d->cap_inferred ? 2 * d->cap_inferred : 256;
		uint32_t *v = realloc(d->inferred, (size_t)cap * sizeof(*v));
		if (!v)
			return -1;
		d->inferred = v;
		d->cap_inferred = cap;
	}
	d->inferred[d->n_inferred++] = pi;
	return 0;
}

static void queue_explore(struct discovery *d, uint32_t ni, int local_port)
{
	if (d->n_next == d->cap_next) {
		uint32_t cap = d->cap_next ? 2 * d->cap_next : 256;
		struct frontier *v = realloc(d->next, (size_t)cap * sizeof(*v));
		if (!v) {
			log_err("discovery: out of memory");
			d->unresponsive++;
			return;
		}
		d->next = v;
		d->cap_next = cap;
	}
	d->next[d->n_next].node = ni;
	d->next[d->n_next].local_port = local_port;
	d->n_next++;
}

/* Queries about a node seen for the first time. */
static void explore_node(struct discovery *d, uint32_t ni, int local_port)
{
	struct fab_node *n = &d->f.nodes[ni];
	const uint8_t *path = n->dr_path;
	int hops = n->dr_len;
	ask(d, Q_NODEDESC, ni, 0, path, hops);
	if (n->type == FAB_SWITCH) {
		ask(d, Q_SWITCHINFO, ni, 0, path, hops);
		for (int p = 0; p <= n->nports; p++) {
			uint32_t pi = n->first_port + (uint32_t)p;
			if (p && inferable(d, pi) && note_inferred(d, pi) == 0)
				continue;
			ask(d, Q_PORTINFO, ni, p, path, hops);
		}
	} else {
		ask(d, Q_PORTINFO, ni, local_port, path, hops);
	}
}

/* Explores what the last wave found.  1 if it asked anything. */
static int next_wave(struct discovery *d)
{
	uint32_t n = d->n_next;
	if (!n || d->cancelled)
		return 0;
	struct frontier *w = d->next;
	d->next = NULL;
	d->n_next = d->cap_next = 0;
	for (uint32_t i = 0; i < n; i++)
		explore_node(d, w[i].node, w[i].local_port);
	free(w);
	return d->outstanding > 0;
}

/* A switch port to take an inferred port's capabilities from, or FAB_NONE. */
static uint32_t template_port(const struct fabric *f, uint32_t pi)
{
	const struct fab_node *n = &f->nodes[f->ports[pi].node];
	uint32_t best = FAB_NONE;
	for (int k = 1; k <= n->nports; k++) {
		uint32_t t = n->first_port + (uint32_t)k;
		const struct fab_port *tp = &f->ports[t];
		if (t == pi || (tp->flags & (FPORT_PRESENT | FPORT_INFERRED)) !=
				       FPORT_PRESENT)
			continue;
		if (tp->phys_state == PHYS_LINKUP)
			return t;
		if (best == FAB_NONE)
			best = t;
	}
	return best;
}

static void infer_port(struct discovery *d, uint32_t pi, uint32_t t)
{
	struct fab_port *p = &d->f.ports[pi];
	const struct fab_port *tp = &d->f.ports[t];
	const struct fab_port *a = &d->f.ports[p->remote];
	memcpy(d->pi_raw[pi], d->pi_raw[t], SMP_DATA_SIZE);
	smp_pi_set(d->pi_raw[pi], IB_PORT_LOCAL_PORT_F, p->num);
	p->capmask = tp->capmask;
	p->mtu_cap = tp->mtu_cap;
	p->vl_cap = tp->vl_cap;
	p->neighbor_mtu = tp->neighbor_mtu;
	p->state = a->state;
	p->phys_state = PHYS_LINKUP;
	p->width_active = a->width_active;
	p->speed_active = a->speed_active;
	p->oper_vls = a->oper_vls;
	p->hw_lid = p->hw_sm_lid = 0;
	p->lmc = 0;
	p->flags |= FPORT_PRESENT | FPORT_INFERRED;
}

/* An Active port as it was in the last sweep (prev_twin()). */
static void infer_from_prev(struct discovery *d, uint32_t pi, uint32_t pp)
{
	struct fab_port *p = &d->f.ports[pi];
	const struct fab_port *q = &d->prev->f.ports[pp];
	memcpy(d->pi_raw[pi], d->prev->pi_raw[pp], SMP_DATA_SIZE);
	uint32_t node = p->node, remote = p->remote;
	uint64_t guid = p->guid;
	*p = *q;
	p->node = node;
	p->remote = remote;
	p->guid = guid;
	p->flags |= FPORT_PRESENT | FPORT_INFERRED;
}

/* Fills the inferred ports in; asks those it cannot fill.  1 if it asked. */
static int infer_ports(struct discovery *d)
{
	int asked = 0;
	for (uint32_t i = 0; i < d->n_inferred; i++) {
		uint32_t pi = d->inferred[i];
		struct fab_port *p = &d->f.ports[pi];
		if (p->flags & FPORT_PRESENT || p->remote == FAB_NONE)
			continue;
		const struct fab_node *n = &d->f.nodes[p->node];
		const struct fab_port *a = &d->f.ports[p->remote];
		if (a->state == PORT_ACTIVE) {	/* noted by prev_twin() */
			uint32_t pp = prev_twin(d, pi);
			if (pp != FAB_NONE && !n->port_state_change) {
				infer_from_prev(d, pi, pp);
				continue;
			}
			ask(d, Q_PORTINFO, p->node, p->num, n->dr_path, n->dr_len);
			asked = 1;
			continue;
		}
		uint32_t t = template_port(&d->f, pi);
		if (t != FAB_NONE && (a->flags & FPORT_PRESENT)) {
			infer_port(d, pi, t);
			continue;
		}
		ask(d, Q_PORTINFO, p->node, p->num, n->dr_path, n->dr_len);
		asked = 1;
	}
	d->n_inferred = 0;
	return asked;
}

static void on_nodeinfo(struct discovery *d, struct query *q,
			const uint8_t *data)
{
	struct fabric *f = &d->f;
	struct smp_nodeinfo ni;
	smp_decode_nodeinfo(data, &ni);
	if (!ni.node_guid || !ni.nports || ni.local_port > ni.nports ||
	    (ni.type != FAB_SWITCH && ni.local_port == 0) ||
	    ni.type < FAB_CA || ni.type > FAB_ROUTER) {
		log_warn("discovery: bad NodeInfo (guid 0x%016llx type %u ports %u local %u); ignored",
			 (unsigned long long)ni.node_guid, ni.type, ni.nports,
			 ni.local_port);
		d->unresponsive++;
		return;
	}
	uint32_t n = fabric_find_node(f, ni.node_guid);
	int is_new = n == FAB_NONE;
	if (is_new) {
		n = fabric_add_node(f, ni.type, ni.nports, ni.node_guid);
		if (n == FAB_NONE || grow_raw(d) < 0) {
			log_err("discovery: out of memory");
			d->unresponsive++;
			return;
		}
		struct fab_node *nd = &f->nodes[n];
		nd->sys_guid = ni.sys_guid;
		nd->vendor_id = ni.vendor_id;
		nd->device_id = ni.device_id;
		nd->revision = ni.revision;
		nd->partition_cap = ni.partition_cap;
		nd->dr_len = q->hops;
		memcpy(nd->dr_path, q->path, (size_t)q->hops + 1);
		if (ni.type == FAB_SWITCH)
			for (int p = 0; p <= ni.nports; p++)
				fabric_portp(f, n, p)->guid = ni.port_guid;
	} else if (f->nodes[n].type != ni.type ||
		   f->nodes[n].nports != ni.nports) {
		log_warn("discovery: GUID 0x%016llx seen as two different nodes; second one ignored",
			 (unsigned long long)ni.node_guid);
		d->unresponsive++;
		return;
	}
	struct fab_port *lp = fabric_portp(f, n, ni.local_port);
	if (q->node == FAB_NONE) {
		f->sm_node = n;
		f->sm_port = ni.local_port;
	} else {
		uint32_t parent = fabric_port(f, q->node, q->port);
		uint32_t here = fabric_port(f, n, ni.local_port);
		if (lp->remote != FAB_NONE && lp->remote != parent) {
			log_warn("discovery: port 0x%016llx[%u] reached over two links; keeping the first",
				 (unsigned long long)ni.node_guid, ni.local_port);
			return;
		}
		fabric_link(f, parent, here);
	}
	if (ni.type != FAB_SWITCH && !lp->guid) {
		lp->guid = ni.port_guid;
		if (!is_new)	/* another port of a known CA */
			ask(d, Q_PORTINFO, n, ni.local_port, q->path, q->hops);
	}
	if (is_new)
		queue_explore(d, n, ni.local_port);
}

void discovery_decode_portinfo(struct fab_port *p, const uint8_t *data)
{
	p->hw_lid = smp_pi_get(data, IB_PORT_LID_F);
	p->hw_sm_lid = smp_pi_get(data, IB_PORT_SMLID_F);
	p->capmask = smp_pi_get(data, IB_PORT_CAPMASK_F);
	p->state = (uint8_t)smp_pi_get(data, IB_PORT_STATE_F);
	p->phys_state = (uint8_t)smp_pi_get(data, IB_PORT_PHYS_STATE_F);
	p->lmc = (uint8_t)smp_pi_get(data, IB_PORT_LMC_F);
	p->width_active = (uint8_t)smp_pi_get(data, IB_PORT_LINK_WIDTH_ACTIVE_F);
	p->speed_active = (uint8_t)smp_pi_get(data, IB_PORT_LINK_SPEED_ACTIVE_F);
	p->width_max = fabric_best_width(
		(uint8_t)(smp_pi_get(data, IB_PORT_LINK_WIDTH_ENABLED_F) &
			  smp_pi_get(data, IB_PORT_LINK_WIDTH_SUPPORTED_F)));
	p->speed_max = fabric_best_speed(
		(uint8_t)(smp_pi_get(data, IB_PORT_LINK_SPEED_ENABLED_F) &
			  smp_pi_get(data, IB_PORT_LINK_SPEED_SUPPORTED_F)));
	p->mtu_cap = (uint8_t)smp_pi_get(data, IB_PORT_MTU_CAP_F);
	p->vl_cap = (uint8_t)smp_pi_get(data, IB_PORT_VL_CAP_F);
	p->neighbor_mtu = (uint8_t)smp_pi_get(data, IB_PORT_NEIGHBOR_MTU_F);
	p->oper_vls = (uint8_t)smp_pi_get(data, IB_PORT_OPER_VLS_F);
	p->flags |= FPORT_PRESENT;
	p->flags &= (uint8_t)~FPORT_INFERRED;
	if (p->capmask & CAP_IS_SM)
		p->flags |= FPORT_ISSM;
	else
		p->flags &= (uint8_t)~FPORT_ISSM;
}

/* The SM's own port as read: has another SM keyed the fabric (d->keyed_away)? */
static void note_own_port(struct discovery *d, const struct fab_port *p, const uint8_t *data)
{
	struct mkey_pi m;
	mkey_pi_get(data, &m);
	d->keyed_away = m.key && m.protect >= 2 && p->hw_sm_lid && p->hw_sm_lid != p->hw_lid;
}

static void on_portinfo(struct discovery *d, struct query *q,
			const uint8_t *data)
{
	struct fabric *f = &d->f;
	uint32_t pi = fabric_port(f, q->node, q->port);
	struct fab_port *p = &f->ports[pi];
	memcpy(d->pi_raw[pi], data, SMP_DATA_SIZE);
	discovery_decode_portinfo(p, data);
	if (d->spare_keyless && q->node == f->sm_node && q->port == f->sm_port)
		note_own_port(d, p, data);
	if (p->num == 0 || p->phys_state != PHYS_LINKUP || p->remote != FAB_NONE)
		return;
	const struct fab_node *n = &f->nodes[q->node];
	/* Walk on from switches, and from the SM's own node. */
	if (n->type != FAB_SWITCH && q->node != f->sm_node)
		return;
	if (q->hops + 1 > FAB_MAX_HOPS) {
		log_warn("discovery: path too long beyond 0x%016llx[%u]",
			 (unsigned long long)n->guid, p->num);
		return;
	}
	uint8_t path[FAB_MAX_HOPS + 1];
	memcpy(path, q->path, (size_t)q->hops + 1);
	path[q->hops + 1] = p->num;
	ask(d, Q_NODEINFO, q->node, p->num, path, q->hops + 1);
}

static void on_switchinfo(struct discovery *d, struct query *q,
			  const uint8_t *data)
{
	struct fab_node *n = &d->f.nodes[q->node];
	struct smp_switchinfo si;
	smp_decode_switchinfo(data, &si);
	memcpy(d->si_raw[q->node], data, SMP_DATA_SIZE);
	n->lft_cap = si.lft_cap;
	n->lft_top = si.lft_top;
	n->mft_cap = si.mft_cap;
	n->mft_top = si.mft_top;
	n->lifetime = si.lifetime;
	n->port_state_change = si.port_state_change;
	n->enhanced_port0 = si.enhanced_port0;
	n->partition_enf_cap = si.partition_enf_cap;
}

/* A NodeInfo across a link that never answered: its route kept (d->lost). */
static void note_lost(struct discovery *d, const struct query *q)
{
	if (d->n_lost == d->cap_lost) {
		uint32_t cap = d->cap_lost ? 2 * d->cap_lost : 16;
		struct disc_lost *v = realloc(d->lost, (size_t)cap * sizeof(*v));
		if (!v)
			return;	/* not judged: as a device that is dead */
		d->lost = v;
		d->cap_lost = cap;
	}
	struct disc_lost *l = &d->lost[d->n_lost++];
	l->hops = q->hops;
	memcpy(l->path, q->path, (size_t)q->hops + 1);
}

static void give_up(struct discovery *d, struct query *q, int status)
{
	struct fabric *f = &d->f;
	const char *why = status == TXN_TIMEOUT ? "no answer" :
			  status == TXN_ERROR ? "send errors" : "error status";
	d->unresponsive++;
	switch (q->kind) {
	case Q_NODEINFO:
		note_lost(d, q);
		log_warn("unresponsive: neighbour of 0x%016llx[%u] (%s to NodeInfo); left out",
			 (unsigned long long)f->nodes[q->node].guid, q->port, why);
		break;
	case Q_PORTINFO:
		fabric_portp(f, q->node, q->port)->flags |= FPORT_NOANSWER;
		if (f->nodes[q->node].type == FAB_SWITCH && q->port == 0)
			f->nodes[q->node].flags |= FNODE_NOANSWER;
		log_warn("unresponsive: 0x%016llx[%u] \"%s\" (%s to PortInfo); left out",
			 (unsigned long long)f->nodes[q->node].guid, q->port,
			 fabric_node_name(f, q->node), why);
		break;
	default:
		if (q->kind == Q_SWITCHINFO)
			f->nodes[q->node].flags |= FNODE_NOANSWER;
		log_warn("unresponsive: node 0x%016llx \"%s\" (%s to %s)%s",
			 (unsigned long long)f->nodes[q->node].guid,
			 fabric_node_name(f, q->node), why, kind_name(q->kind),
			 q->kind == Q_SWITCHINFO ? "; left out" : "");
	}
}

static void finish_if_idle(struct discovery *d)
{
	if (d->outstanding || next_wave(d))
		return;
	if (d->retry->head && d->rounds < d->max_rounds && !d->cancelled) {
		struct query *q = d->retry->head;
		d->retry->head = NULL;
		d->rounds++;
		log_info("discovery: asking again, round %d", d->rounds + 1);
		while (q) {
			struct query *next = q->next;
			submit(d, q);
			q = next;
		}
		return;
	}
	while (d->retry->head) {
		struct query *q = d->retry->head;
		d->retry->head = q->next;
		if (!d->cancelled)
			give_up(d, q, TXN_TIMEOUT);
		free(q);
	}
	if (!d->cancelled && infer_ports(d))
		return;
	d->prev = NULL;	/* the caller may free it now */
	d->done(d->done_arg, d);
}

static void on_answer(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct query *q = arg;
	struct discovery *d = q->d;
	d->outstanding--;
	if (status == TXN_CANCELLED) {
		d->cancelled = 1;
		free(q);
		finish_if_idle(d);
		return;
	}
	if (status == TXN_OK && smp_status(resp) != 0) {
		log_debug("discovery: %s status 0x%x", kind_name(q->kind),
			  smp_status(resp));
		status = TXN_ERROR;
	}
	if (status != TXN_OK) {
		if (q->kind == Q_NODEINFO && q->node == FAB_NONE) {
			log_err("the local port does not answer NodeInfo");
			d->failed = 1;
			free(q);
		} else {
			q->next = d->retry->head;
			d->retry->head = q;
		}
		finish_if_idle(d);
		return;
	}
	const uint8_t *data = resp + SMP_DATA_OFFS;
	switch (q->kind) {
	case Q_NODEINFO:
		on_nodeinfo(d, q, data);
		break;
	case Q_NODEDESC:
		smp_decode_nodedesc(data, d->f.nodes[q->node].desc);
		break;
	case Q_PORTINFO:
		on_portinfo(d, q, data);
		break;
	case Q_SWITCHINFO:
		on_switchinfo(d, q, data);
		break;
	}
	free(q);
	finish_if_idle(d);
}

static void submit(struct discovery *d, struct query *q)
{
	static const uint16_t attrs[] = { IB_ATTR_NODE_INFO, IB_ATTR_NODE_DESC,
					  IB_ATTR_PORT_INFO, IB_ATTR_SWITCH_INFO };
	uint8_t mad[MAD_SIZE];
	struct mad_addr to;
	uint32_t mod = q->kind == Q_PORTINFO ? q->port : 0;
	smp_init_dr(mad, IB_MAD_METHOD_GET, attrs[q->kind], mod, q->path,
		    q->hops);
	smp_dr_address(&to);
	if (d->keyed_away && q->kind == Q_NODEINFO && q->hops && !txn_stamp_of(d->txn, mad, &to)) {
		note_lost(d, q);	/* M_Key 0 into a keyed fabric: not sent */
		d->spared++;
		d->unresponsive++;
		log_info("discovery: neighbour of 0x%016llx[%u] not asked: M_Key 0 into a fabric "
			 "another SM keyed", (unsigned long long)d->f.nodes[q->node].guid, q->port);
		free(q);
		return;
	}
	uint32_t dest = q->node == FAB_NONE ? TXN_NO_DEST : q->node;
	d->outstanding++;
	d->mads++;
	if (txn_submit(d->txn, mad, sizeof(mad), &to, dest, on_answer, q) < 0) {
		d->outstanding--;
		log_err("discovery: cannot queue %s", kind_name(q->kind));
		d->unresponsive++;
		free(q);
	}
}

struct discovery *discovery_start(struct txn_engine *txn, int extra_rounds,
				  const struct discovery *prev,
				  void (*done)(void *, struct discovery *),
				  void *arg)
{
	struct discovery *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->retry = calloc(1, sizeof(*d->retry));
	if (!d->retry) {
		free(d);
		return NULL;
	}
	fabric_init(&d->f);
	d->txn = txn;
	d->prev = prev;
	d->done = done;
	d->done_arg = arg;
	d->max_rounds = extra_rounds;
	uint8_t path[FAB_MAX_HOPS + 1] = { 0 };
	struct query *q = new_query(d, Q_NODEINFO, FAB_NONE, 0, path, 0);
	if (!q) {
		discovery_free(d);
		return NULL;
	}
	submit(d, q);
	return d;
}

void discovery_spare_keyless(struct discovery *d, int on)
{
	d->spare_keyless = on;
}

void discovery_free(struct discovery *d)
{
	if (!d)
		return;
	while (d->retry && d->retry->head) {
		struct query *q = d->retry->head;
		d->retry->head = q->next;
		free(q);
	}
	free(d->retry);
	free(d->lost);
	free(d->inferred);
	free(d->next);
	fabric_free(&d->f);
	free(d->pi_raw);
	free(d->si_raw);
	free(d);
}

static int node_kept(const struct fabric *f, uint32_t n)
{
	const struct fab_node *nd = &f->nodes[n];
	if (nd->flags & FNODE_NOANSWER)
		return 0;
	/* a node none of whose ports answered is not there for us */
	for (int p = 0; p <= nd->nports; p++)
		if (f->ports[nd->first_port + p].flags & FPORT_PRESENT)
			return 1;
	return 0;
}

int discovery_compact(struct discovery *d)
{
	struct fabric *f = &d->f, g;
	uint32_t *nmap = malloc(((size_t)f->n_nodes + 1) * sizeof(*nmap));
	if (!nmap)
		return -1;
	fabric_init(&g);
	uint8_t (*pi)[SMP_DATA_SIZE] = NULL, (*si)[SMP_DATA_SIZE] = NULL;
	int rc = -1;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		nmap[n] = FAB_NONE;
		if (!node_kept(f, n))
			continue;
		const struct fab_node *on = &f->nodes[n];
		uint32_t m = fabric_add_node(&g, on->type, on->nports, on->guid);
		if (m == FAB_NONE)
			goto out;
		uint32_t fp = g.nodes[m].first_port;
		g.nodes[m] = *on;
		g.nodes[m].first_port = fp;
		nmap[n] = m;
	}
	pi = malloc((size_t)(g.n_ports ? g.n_ports : 1) * SMP_DATA_SIZE);
	si = malloc((size_t)(g.n_nodes ? g.n_nodes : 1) * SMP_DATA_SIZE);
	if (!pi || !si)
		goto out;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		uint32_t m = nmap[n];
		if (m == FAB_NONE)
			continue;
		memcpy(si[m], d->si_raw[n], SMP_DATA_SIZE);
		for (int p = 0; p <= f->nodes[n].nports; p++) {
			uint32_t op = f->nodes[n].first_port + p;
			uint32_t np = g.nodes[m].first_port + p;
			struct fab_port port = f->ports[op];
			memcpy(pi[np], d->pi_raw[op], SMP_DATA_SIZE);
			port.node = m;
			port.remote = FAB_NONE;
			if (port.flags & FPORT_NOANSWER)
				port.flags &= (uint8_t)~FPORT_PRESENT;
			g.ports[np] = port;
		}
	}
	for (uint32_t op = 0; op < f->n_ports; op++) {
		const struct fab_port *a = &f->ports[op];
		if (a->remote == FAB_NONE || op > a->remote)
			continue;
		const struct fab_port *b = &f->ports[a->remote];
		uint32_t ma = nmap[a->node], mb = nmap[b->node];
		if (ma == FAB_NONE || mb == FAB_NONE)
			continue;
		uint32_t pa = fabric_port(&g, ma, a->num), pb = fabric_port(&g, mb, b->num);
		if (!(g.ports[pa].flags & FPORT_PRESENT) ||
		    !(g.ports[pb].flags & FPORT_PRESENT))
			continue;
		fabric_link(&g, pa, pb);
	}
	g.sm_node = f->sm_node == FAB_NONE ? FAB_NONE : nmap[f->sm_node];
	g.sm_port = f->sm_port;
	fabric_free(f);
	*f = g;
	free(d->pi_raw);
	free(d->si_raw);
	d->pi_raw = pi;
	d->si_raw = si;
	d->raw_ports_cap = g.n_ports;
	d->raw_nodes_cap = g.n_nodes;
	pi = si = NULL;
	rc = 0;
out:
	if (rc < 0)
		fabric_free(&g);
	free(pi);
	free(si);
	free(nmap);
	return rc;
}

int discovery_port_path(const struct fabric *f, uint32_t port, uint8_t *path)
{
	const struct fab_port *p = &f->ports[port];
	const struct fab_node *n = &f->nodes[p->node];
	/*
	 * A CA answers Sets only for the port a packet came in on: reach each
	 * CA port through its own link; only the SM's own port is at hop 0.
	 */
	if (n->type == FAB_SWITCH || p->remote == FAB_NONE ||
	    (p->node == f->sm_node && p->num == f->sm_port)) {
		memcpy(path, n->dr_path, (size_t)n->dr_len + 1);
		return n->dr_len;
	}
	const struct fab_port *r = &f->ports[p->remote];
	const struct fab_node *rn = &f->nodes[r->node];
	if (rn->dr_len + 1 > FAB_MAX_HOPS)
		return -1;
	memcpy(path, rn->dr_path, (size_t)rn->dr_len + 1);
	path[rn->dr_len + 1] = r->num;
	return rn->dr_len + 1;
}
