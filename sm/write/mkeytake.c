/* Taking over ports with another SM's M_Key (see mkeytake.h). */
#include "sm/write/mkeytake.h"

#include <infiniband/mad.h>
#include <stdlib.h>
#include <string.h>

#include "mad/mkey.h"
#include "mad/smp.h"
#include "sm/base/clock.h"
#include "sm/base/log.h"
#include "sm/base/nodemap.h"
#include "sm/write/plan_sweep.h"

#define MS_PER_S 1000u

struct mktake {
	struct txn_engine *txn;
	struct discovery *d;	/* NULL once abandoned */
	struct mkey_rec *rec;
	struct nbr_map *nbrs;
	const struct mkeys *k;
	uint64_t lease_ms;
	uint32_t pending;
	int orphan;		/* abandoned while answers were due */
	int left_out;		/* ports marked for discovery_compact */
	int keyed;		/* the SM writes keys (security.m_key above 0) */
	struct mktake_stats st;
	mktake_fn done;
	void *arg;
};

struct mkset {
	struct mktake *x;
	uint32_t pi;
	uint64_t sent_ms;
	uint16_t lease_s;	/* M_KeyLeasePeriod as read */
	uint8_t other;		/* it showed another key (0: hid it) */
	uint8_t data[SMP_DATA_SIZE];
};

static void port_name(const struct fabric *f, uint32_t pi, char *buf, size_t len)
{
	const struct fab_port *p = &f->ports[pi];
	snprintf(buf, len, "\"%s\" (0x%016llx) port %u", fabric_node_name(f, p->node),
		 (unsigned long long)f->nodes[p->node].guid, p->num);
}

/* No write to pi: its node (a switch's port 0 governs its SMA) or the port. */
static void leave_out(struct mktake *x, uint32_t pi)
{
	struct fabric *f = &x->d->f;
	struct fab_port *p = &f->ports[pi];
	if (f->nodes[p->node].type == FAB_SWITCH)
		f->nodes[p->node].flags |= FNODE_NOANSWER;
	else
		p->flags |= FPORT_NOANSWER;
	x->left_out = 1;
}

static void finish(struct mktake *x)
{
	if (x->left_out && discovery_compact(x->d) < 0)
		log_err("M_Key: out of memory leaving out the ports that refuse");
	x->done(x->arg, x);
}

/*
 * One answer less to wait for: 0 when nobody waits for it (the sweep was
 * abandoned: the last answer frees x; or the table was cancelled).
 */
static int answer_due(struct mktake *x, int status)
{
	x->pending--;
	if (!x->orphan && status != TXN_CANCELLED)
		return 1;
	if (x->orphan && !x->pending)
		mktake_free(x);
	return 0;
}

static void on_set(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct mkset *s = arg;
	struct mktake *x = s->x;
	if (!answer_due(x, status)) {
		free(s);
		return;
	}
	struct fabric *f = &x->d->f;
	uint64_t guid = f->ports[s->pi].guid;
	char name[160];
	port_name(f, s->pi, name, sizeof(name));
	if (status == TXN_OK && len >= SMP_DATA_OFFS + SMP_DATA_SIZE && !smp_status(resp)) {
		memcpy(x->d->pi_raw[s->pi], resp + SMP_DATA_OFFS, SMP_DATA_SIZE);
		x->st.taken++;
		mkrec_taken(x->rec, guid);
		log_notice("M_Key: took over %s: it held %s; it holds the SM's %s now",
			   name, s->other ? "another key, its lease over" :
					    "ProtectBits without a key",
			   x->keyed ? "key" : "M_Key 0");
	} else if (status == TXN_OK) {
		log_warn("M_Key: %s answered the Set with MAD status 0x%04x; left as it is",
			 name, smp_status(resp));
	} else {
		/* dropped: its key is not the one the Set carried */
		x->st.refused++;
		int level = s->other ? 2 : 1;
		uint64_t lease = s->other ? x->lease_ms :
				 s->lease_s ? (uint64_t)s->lease_s * MS_PER_S : MKREC_NEVER;
		mkrec_refused(x->rec, guid, level, s->sent_ms, lease);
		leave_out(x, s->pi);
	}
	free(s);
	if (!x->pending)
		finish(x);
}

static int send_set(struct mktake *x, const struct mkeys *k, uint32_t pi,
		    const struct mkey_pi *m)
{
	struct fabric *f = &x->d->f;
	struct mkset *s = calloc(1, sizeof(*s));
	if (!s)
		return -1;
	s->x = x;
	s->pi = pi;
	s->other = m->key != 0;
	s->lease_s = m->lease_s;
	s->sent_ms = clock_ms();
	memcpy(s->data, x->d->pi_raw[pi], SMP_DATA_SIZE);
	smp_pi_prepare_set(s->data);
	plan_mkey_fields(k, f->ports[pi].guid, s->data);
	uint8_t mad[MAD_SIZE], path[FAB_MAX_HOPS + 1];
	struct mad_addr to;
	int hops = discovery_port_path(f, pi, path);
	if (hops < 0) {
		free(s);
		return 0;
	}
	smp_init_dr(mad, IB_MAD_METHOD_SET, IB_ATTR_PORT_INFO, f->ports[pi].num, path, hops);
	smp_dr_address(&to);
	memcpy(smp_data(mad), s->data, SMP_DATA_SIZE);
	/* the stamp (sm/subnet.c) gives the key kept in rec, else the SM's */
	x->pending++;
	if (txn_submit(x->txn, mad, sizeof(mad), &to, f->ports[pi].node, on_set, s) < 0) {
		x->pending--;
		free(s);
		return -1;
	}
	return 0;
}

/*
 * A probe: one NodeInfo Get, with the key the SM derives for it, to a
 * port the map names beyond one that refuses, which the walk cannot
 * reach -- a violation when the port holds another key, which starts its
 * lease timer now rather than a lease later, when the port in front of
 * it is taken over.  Nobody waits for it; a port already listed as
 * refusing is not asked again.
 */
struct mkprober {
	struct txn_engine *txn;
	const struct mkeys *k;
	struct mkey_rec *rec;
	const struct fabric *known;	/* nodes not probed nor walked through */
	uint64_t lease_ms;
	int mark;			/* list the ports that do not answer */
	uint32_t sent;
};

struct mkprobe {
	struct mkey_rec *rec;
	uint64_t guid, sent_ms, lease_ms;
	int mark;
};

static void on_probe(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct mkprobe *p = arg;
	if (status == TXN_TIMEOUT && p->mark)
		mkrec_refused(p->rec, p->guid, 2, p->sent_ms, p->lease_ms);
	free(p);
}

static int known_node(void *arg, uint64_t node_guid)
{
	const struct mkprober *pr = arg;
	return pr->known && fabric_find_node(pr->known, node_guid) != FAB_NONE;
}

static void probe(void *arg, const uint8_t *path, int hops, uint64_t port_guid)
{
	struct mkprober *pr = arg;
	if (mkrec_is_refusing(pr->rec, port_guid))
		return;
	struct mkprobe *p = calloc(1, sizeof(*p));
	if (!p)
		return;
	p->rec = pr->rec;
	p->guid = port_guid;
	p->sent_ms = clock_ms();
	p->lease_ms = pr->lease_ms;
	p->mark = pr->mark;
	uint8_t mad[MAD_SIZE];
	struct mad_addr to;
	smp_init_dr(mad, IB_MAD_METHOD_GET, IB_ATTR_NODE_INFO, 0, path, hops);
	smp_dr_address(&to);
	mad_set_field64(mad, 0, IB_MAD_MKEY_F, mkeys_port_key(pr->k, port_guid));
	if (txn_submit_keyed(pr->txn, mad, sizeof(mad), &to, TXN_NO_DEST, on_probe, p) < 0)
		free(p);
	else
		pr->sent++;
}

uint32_t mkprobe_local(struct txn_engine *txn, const struct nbr_map *nbrs,
		       const struct mkeys *k, struct mkey_rec *rec, uint64_t local_guid)
{
	struct nbr_end me;
	if (!k->have_secret || nbr_port_end(nbrs, local_guid, &me) < 0)
		return 0;
	struct mkprober pr = { .txn = txn, .k = k, .rec = rec };
	struct nbr_walk *w = nbr_walk_new(nbrs);
	const uint8_t path[FAB_MAX_HOPS + 1] = { 0 };
	if (!w || nbr_walk_from(w, path, 0, me.node_guid, me.port, known_node, probe, &pr) < 0)
		log_err("M_Key: out of memory walking the neighbour map");
	nbr_walk_free(w);
	return pr.sent;
}

/*
 * Ports the map names across up links of d that never answered (listed),
 * and those beyond them (probed).
 */
static void note_silent(struct mktake *x, const struct nbr_map *nbrs)
{
	const struct fabric *f = &x->d->f;
	uint64_t now = clock_ms();
	struct nbr_walk *w = NULL;
	struct mkprober pr = { .txn = x->txn, .k = x->k, .rec = x->rec, .known = f,
			       .lease_ms = x->lease_ms, .mark = 1 };
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		const struct fab_node *n = &f->nodes[p->node];
		if (!p->num || p->remote != FAB_NONE || !(p->flags & FPORT_PRESENT) ||
		    p->phys_state != PHYS_LINKUP ||
		    (n->type != FAB_SWITCH && p->node != f->sm_node))
			continue;
		const struct nbr_end *e = nbr_far_end(nbrs, n->guid, p->num);
		if (!e || !e->port_guid || fabric_find_node(f, e->node_guid) != FAB_NONE)
			continue;
		int listed = mkrec_is_refusing(x->rec, e->port_guid);
		if (mkrec_refused(x->rec, e->port_guid, 2, now, x->lease_ms) == 0 && !listed)
			x->st.silent++;
		if (!w && !(w = nbr_walk_new(nbrs)))
			continue;
		if (nbr_walk_from(w, n->dr_path, n->dr_len, n->guid, p->num, known_node,
				  probe, &pr) < 0)
			log_err("M_Key: out of memory walking the neighbour map");
	}
	nbr_walk_free(w);
	x->st.probed += pr.sent;
}

/*
 * A new cable between two devices the SM keyed at level 2 or 3: the map
 * does not name the far end, the discovery's NodeInfo across it went
 * with M_Key 0 and was dropped.  Its far end is, as a rule, another
 * device found with an up port whose far end is not known either: the
 * NodeInfo is sent again with each such device's key (at most
 * MKTAKE_LINK_TRIES a port, MKTAKE_LINK_PROBES in all), and the one that
 * answers as that device is the link, put into the map, seen by the next
 * sweep.  A wrong guess is one Get dropped: one violation at the device
 * that is really there.
 */
#define MKTAKE_LINK_TRIES 8
#define MKTAKE_LINK_PROBES 256
#define MKTAKE_LINK_PORTS 256

struct mklink {
	struct mktake *x;
	struct nbr_end near, far;	/* far.port: from the answer */
};

static void on_link(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct mklink *l = arg;
	struct mktake *x = l->x;
	if (!answer_due(x, status)) {
		free(l);
		return;
	}
	struct smp_nodeinfo ni;
	if (status == TXN_OK && len >= SMP_DATA_OFFS + SMP_DATA_SIZE && !smp_status(resp)) {
		smp_decode_nodeinfo(resp + SMP_DATA_OFFS, &ni);
		if (ni.node_guid == l->far.node_guid && ni.local_port &&
		    ni.local_port <= ni.nports) {
			l->far.port = (uint8_t)ni.local_port;
			if (ni.type != FAB_SWITCH)
				l->far.port_guid = ni.port_guid;
			if (nbr_add_link(x->nbrs, &l->near, &l->far) > 0) {
				x->st.links++;
				log_notice("M_Key: a new link 0x%016llx port %u - 0x%016llx port %u "
					   "found with the far device's key; seen at the next sweep",
					   (unsigned long long)l->near.node_guid, l->near.port,
					   (unsigned long long)l->far.node_guid, l->far.port);
			}
		}
	}
	free(l);
	if (!x->pending)
		finish(x);
}

/* An up port of a switch or of the SM's node whose far end nobody knows. */
static int unresolved(const struct fabric *f, const struct nbr_map *nbrs, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	const struct fab_node *n = &f->nodes[p->node];
	return p->num && p->remote == FAB_NONE && (p->flags & FPORT_PRESENT) &&
	       p->phys_state == PHYS_LINKUP &&
	       (n->type == FAB_SWITCH || p->node == f->sm_node) &&
	       !nbr_far_end(nbrs, n->guid, p->num);
}

static void try_link(struct mktake *x, const struct mkeys *k, uint32_t u, uint32_t c)
{
	const struct fabric *f = &x->d->f;
	const struct fab_port *up = &f->ports[u], *cp = &f->ports[c];
	const struct fab_node *un = &f->nodes[up->node], *cn = &f->nodes[cp->node];
	struct mklink *l = calloc(1, sizeof(*l));
	if (!l)
		return;
	l->x = x;
	l->near.node_guid = un->guid;
	l->near.port_guid = up->guid;
	l->near.port = up->num;
	l->far.node_guid = cn->guid;
	l->far.port_guid = cp->guid;	/* a switch's: port 0's, every port's */
	uint8_t mad[MAD_SIZE], path[FAB_MAX_HOPS + 1];
	struct mad_addr to;
	memcpy(path, un->dr_path, (size_t)un->dr_len + 1);
	path[un->dr_len + 1] = up->num;
	smp_init_dr(mad, IB_MAD_METHOD_GET, IB_ATTR_NODE_INFO, 0, path, un->dr_len + 1);
	smp_dr_address(&to);
	mad_set_field64(mad, 0, IB_MAD_MKEY_F, mkeys_port_key(k, cp->guid));
	x->pending++;
	x->st.link_tries++;
	if (txn_submit_keyed(x->txn, mad, sizeof(mad), &to, up->node, on_link, l) < 0) {
		x->pending--;
		free(l);
	}
}

static void new_links(struct mktake *x, const struct mkeys *k)
{
	const struct fabric *f = &x->d->f;
	uint32_t u[MKTAKE_LINK_PORTS], n = 0;
	for (uint32_t pi = 0; pi < f->n_ports && n < MKTAKE_LINK_PORTS; pi++)
		if (unresolved(f, x->nbrs, pi) &&
		    f->nodes[f->ports[pi].node].dr_len + 1 <= FAB_MAX_HOPS)
			u[n++] = pi;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t tries = 0, last_node = FAB_NONE;
		for (uint32_t j = 0; j < n && tries < MKTAKE_LINK_TRIES &&
				     x->st.link_tries < MKTAKE_LINK_PROBES; j++) {
			uint32_t cn = f->ports[u[j]].node;
			if (cn == f->ports[u[i]].node || cn == last_node)
				continue;	/* a node once a port (its ports are in a row) */
			last_node = cn;
			try_link(x, k, u[i], u[j]);
			tries++;
		}
	}
}

struct mktake *mktake_start(struct txn_engine *txn, struct discovery *d,
			    const struct mkeys *k, struct mkey_rec *rec,
			    struct nbr_map *nbrs, uint64_t lease_ms,
			    mktake_fn done, void *arg)
{
	struct mktake *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->txn = txn;
	x->d = d;
	x->rec = rec;
	x->lease_ms = lease_ms;
	x->nbrs = nbrs;
	x->k = k;
	x->keyed = k->protect > 0;
	x->done = done;
	x->arg = arg;
	mkrec_round(rec, clock_ms());
	const struct fabric *f = &d->f;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		if (!(f->ports[pi].flags & FPORT_PRESENT) || !fabric_is_endport(f, pi))
			continue;
		uint64_t guid = f->ports[pi].guid;
		struct mkey_pi m;
		mkey_pi_get(d->pi_raw[pi], &m);
		if ((!m.key && !m.protect) || (m.key && m.key == mkeys_port_key(k, guid))) {
			mkrec_forget(rec, guid);	/* open, or the SM's */
			continue;
		}
		if (m.key && mkrec_seen(rec, guid, m.key, clock_ms()) < 0)
			continue;	/* not kept: its Set would go with the wrong key */
		if (send_set(x, k, pi, &m) < 0)
			log_err("M_Key: out of memory taking a port over");
	}
	if (k->have_secret) {
		note_silent(x, nbrs);
		if (k->protect >= 2)
			new_links(x, k);
	}
	return x;
}

int mktake_finished(const struct mktake *x)
{
	return x->pending == 0;
}

const struct mktake_stats *mktake_stats(const struct mktake *x)
{
	return &x->st;
}

void mktake_abandon(struct mktake *x)
{
	if (!x)
		return;
	if (!x->pending) {
		mktake_free(x);
		return;
	}
	x->orphan = 1;
	x->d = NULL;
}

void mktake_free(struct mktake *x)
{
	free(x);
}
