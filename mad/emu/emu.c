/*
 * The emulator's life cycle, its clients (struct mad_transport), the
 * delivery queue on the event loop, the fault model and inspection.
 * Forwarding is in emu_route.c, the SMAs in emu_sma.c.
 */
#include "mad/emu/emu_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sm/base/log.h"
#include "sm/base/clock.h"

#define DEFAULT_LFT_CAP 49152
#define DEFAULT_MFT_CAP 1024
#define DEFAULT_CA_PKEYS 64
#define DEFAULT_SW_PKEYS 32
#define DEFAULT_LIFETIME 18

/* ---- randomness: splitmix64, one stream per emulator ---- */

static uint64_t rnd(struct emu *e)
{
	uint64_t z = (e->rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int emu_chance(struct emu *e, uint32_t threshold)
{
	if (!threshold)
		return 0;
	uint32_t r = (uint32_t)(rnd(e) >> 32);
	return threshold == UINT32_MAX || r < threshold;
}

static uint32_t pct_threshold(double percent)
{
	if (!(percent > 0))
		return 0;
	if (percent >= 100)
		return UINT32_MAX;
	double t = percent / 100.0 * 4294967296.0;
	return t >= 4294967295.0 ? UINT32_MAX - 1 : (uint32_t)t;
}

void emu_set_seed(struct emu *e, uint64_t seed)
{
	e->rng = seed;
}

void emu_set_loss(struct emu *e, double percent)
{
	e->loss = pct_threshold(percent);
}

void emu_set_latency(struct emu *e, uint32_t fixed_us, uint32_t random_us)
{
	e->lat_fixed = fixed_us;
	e->lat_random = random_us;
}

void emu_set_max_batch(struct emu *e, unsigned n)
{
	e->max_batch = n ? n : 1;
}

/* ---- the violation log ---- */

void emu_add_violation(struct emu *e, const char *fmt, ...)
{
	char buf[EMU_VMSG_LEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	e->n_violations++;
	log_warn("emulator: spec violation: %s", buf);
	if (e->n_vmsg >= EMU_MAX_VIOLATIONS)
		return;
	if (e->n_vmsg == e->cap_vmsg) {
		uint32_t cap = e->cap_vmsg ? e->cap_vmsg * 2 : 16;
		void *p = realloc(e->vmsg, (size_t)cap * sizeof(*e->vmsg));
		if (!p)
			return;
		e->vmsg = p;
		e->cap_vmsg = cap;
	}
	memcpy(e->vmsg[e->n_vmsg++], buf, sizeof(buf));
}

uint32_t emu_violations(const struct emu *e)
{
	return e->n_violations;
}

const char *emu_violation(const struct emu *e, uint32_t i)
{
	return i < e->n_vmsg ? e->vmsg[i] : NULL;
}

void emu_drop(struct emu *e, int kind)
{
	e->cnt.dropped++;
	if (kind == DROP_FAULT)
		e->cnt.dropped_fault++;
	else if (kind == DROP_ROUTE)
		e->cnt.dropped_route++;
	else
		e->cnt.dropped_other++;
}

void emu_get_counters(const struct emu *e, struct emu_counters *c)
{
	*c = e->cnt;
}

/* ---- the queue: a ring while packets come in order, a heap after ---- */

static int pkt_before(const struct emu_pkt *a, const struct emu_pkt *b)
{
	return a->due != b->due ? a->due < b->due : a->seq < b->seq;
}

static struct emu_pkt *q_at(struct emu_queue *q, uint32_t i)
{
	return &q->v[q->heap ? i : (q->head + i) % q->cap];
}

/* Moves the packets to a new array of cap entries, in order from 0. */
static int q_realloc(struct emu_queue *q, uint32_t cap)
{
	struct emu_pkt *v = malloc((size_t)cap * sizeof(*v));
	if (!v)
		return -1;
	for (uint32_t i = 0; i < q->n; i++)
		v[i] = *q_at(q, i);
	free(q->v);
	q->v = v;
	q->cap = cap;
	q->head = 0;
	return 0;
}

static void heap_up(struct emu_queue *q, uint32_t i)
{
	struct emu_pkt x = q->v[i];
	while (i) {
		uint32_t parent = (i - 1) / 2;
		if (!pkt_before(&x, &q->v[parent]))
			break;
		q->v[i] = q->v[parent];
		i = parent;
	}
	q->v[i] = x;
}

static void heap_down(struct emu_queue *q, uint32_t i)
{
	struct emu_pkt x = q->v[i];
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= q->n)
			break;
		if (c + 1 < q->n && pkt_before(&q->v[c + 1], &q->v[c]))
			c++;
		if (!pkt_before(&q->v[c], &x))
			break;
		q->v[i] = q->v[c];
		i = c;
	}
	q->v[i] = x;
}

static int q_push(struct emu_queue *q, const struct emu_pkt *pk)
{
	if (q->n == q->cap && q_realloc(q, q->cap ? q->cap * 2 : 256) < 0)
		return -1;
	if (!q->heap && q->n && pkt_before(pk, q_at(q, q->n - 1))) {
		/* out of order: a sorted array is a heap */
		if (q->head && q_realloc(q, q->cap) < 0)
			return -1;
		q->heap = 1;
	}
	if (q->heap) {
		q->v[q->n++] = *pk;
		heap_up(q, q->n - 1);
		return 0;
	}
	*q_at(q, q->n) = *pk;
	q->n++;
	return 0;
}

static const struct emu_pkt *q_peek(struct emu_queue *q)
{
	return q->n ? q_at(q, 0) : NULL;
}

static void q_pop(struct emu_queue *q, struct emu_pkt *out)
{
	if (q->heap) {
		*out = q->v[0];
		q->v[0] = q->v[--q->n];
		if (q->n)
			heap_down(q, 0);
		else
			q->heap = 0;
		q->head = 0;
		return;
	}
	*out = q->v[q->head];
	q->head = (q->head + 1) % q->cap;
	q->n--;
}

uint32_t emu_pending(const struct emu *e)
{
	return e->q.n;
}

/* ---- the event loop side ---- */

static void process(struct emu *e, struct emu_pkt *pk);

static void schedule(struct emu *e)
{
	const struct emu_pkt *head = q_peek(&e->q);
	if (!e->ev || !head || e->sched == 1)
		return;
	uint64_t now = clock_us();
	if (head->due <= now) {
		/*
		 * A 0-timeout timer, not event_active(): an event activated
		 * from its own callback runs again before the loop looks at
		 * timers and sockets, which would starve the SM's timers.
		 */
		struct timeval zero = { 0, 0 };
		event_add(e->ev, &zero);
		e->sched = 1;
		return;
	}
	if (e->sched == 2 && e->timer_due <= head->due)
		return;
	uint64_t d = head->due - now;
	struct timeval tv = { (time_t)(d / 1000000), (suseconds_t)(d % 1000000) };
	event_add(e->ev, &tv);
	e->sched = 2;
	e->timer_due = head->due;
}

/*
 * One turn delivers at most max_batch packets, and stops once it took
 * EMU_BATCH_US: the clients' handlers run inside it (an SA GetTable may
 * cost milliseconds), and the loop's timers wait for its end, as they
 * wait for a turn of the daemon's pump (mad/umad.c, PUMP_BATCH_US).
 */
#define EMU_BATCH_US 5000

static void on_event(evutil_socket_t fd, short what, void *arg)
{
	struct emu *e = arg;
	(void)fd;
	(void)what;
	e->sched = 1;	/* pushes from inside need no rescheduling */
	uint64_t now = clock_us(), t0 = now;
	for (unsigned k = 0; k < e->max_batch; k++) {
		const struct emu_pkt *head = q_peek(&e->q);
		if (!head)
			break;
		if (head->due > now && (now = clock_us()) < head->due)
			break;
		struct emu_pkt pk;
		q_pop(&e->q, &pk);
		process(e, &pk);
		if ((now = clock_us()) - t0 >= EMU_BATCH_US)
			break;
	}
	e->sched = 0;
	schedule(e);
}

static int enqueue(struct emu *e, struct emu_pkt *pk)
{
	uint64_t lat = e->lat_fixed;
	if (e->lat_random)
		lat += rnd(e) % ((uint64_t)e->lat_random + 1);
	pk->due = clock_us() + lat;
	pk->seq = e->seq++;
	if (q_push(&e->q, pk) < 0) {
		emu_drop(e, DROP_OTHER);
		return -1;
	}
	schedule(e);
	return 0;
}

struct emu_client *emu_client_at(const struct emu *e, uint32_t pi)
{
	const struct emu_node *n = port_node(e, pi);
	if (is_switch(n))
		pi = n->first_port;
	struct emu_client *c = e->port_client ? e->port_client[pi] : NULL;
	return c && !c->closed ? c : NULL;
}

void emu_queue_deliver(struct emu *e, uint32_t pi, uint32_t slid,
		       uint32_t qpn, const uint8_t *mad, size_t len)
{
	if (emu_chance(e, e->loss)) {
		emu_drop(e, DROP_FAULT);
		return;
	}
	struct emu_pkt pk;
	pk.kind = PK_DELIVER;
	pk.port = pi;
	pk.lid = slid;
	pk.qpn = qpn;
	pk.len = (uint16_t)(len < MAD_SIZE ? len : MAD_SIZE);
	memcpy(pk.mad, mad, MAD_SIZE);
	enqueue(e, &pk);
}

static void process(struct emu *e, struct emu_pkt *pk)
{
	if (pk->kind == PK_SEND) {
		if (emu_chance(e, e->loss)) {
			emu_drop(e, DROP_FAULT);
			return;
		}
		emu_route_send(e, pk);
		return;
	}
	struct emu_client *c = emu_client_at(e, pk->port);
	if (!c) {
		emu_drop(e, DROP_OTHER);
		return;
	}
	struct mad_addr from;
	memset(&from, 0, sizeof(from));
	from.lid = pk->lid;
	from.qpn = pk->qpn;
	from.qkey = pk->qpn ? 0x80010000u : 0;
	e->cnt.delivered++;
	c->cb(c->arg, pk->mad, pk->len, &from, 0);
}

/* ---- clients ---- */

static int cl_send(void *ctx, const uint8_t *mad, size_t len,
		   const struct mad_addr *to)
{
	struct emu_client *c = ctx;
	struct emu *e = c->e;
	if (c->closed || len < 24 || len > MAD_SIZE)
		return -1;
	struct emu_pkt pk;
	memset(pk.mad + len, 0, MAD_SIZE - len);
	memcpy(pk.mad, mad, len);
	pk.kind = PK_SEND;
	pk.port = c->port;
	pk.lid = to->lid;
	pk.qpn = to->qpn;
	pk.len = (uint16_t)len;
	e->cnt.received++;
	return enqueue(e, &pk);
}

static void cl_close(void *ctx)
{
	struct emu_client *c = ctx;
	if (!c || c->closed)
		return;
	c->closed = 1;
	c->e->ports[c->port].capmask &= ~CAPM_IS_SM;
}

static void fill_facts(struct emu_client *c)
{
	const struct emu *e = c->e;
	const struct emu_port *p = &e->ports[c->port];
	const struct emu_node *n = &e->nodes[p->node];
	struct mad_transport *t = c->t;
	t->port_guid = is_switch(n) ? n->guid : p->guid;
	/* a VF known only by its vLID (PortInfo LID 0) sends from the vLID */
	t->lid = p->lid ? p->lid : emu_xlid_port_vlid(e, c->port);
	t->sm_lid = p->sm_lid;
	t->port_num = p->num;
	t->port_state = p->state;
	snprintf(t->ca_name, sizeof(t->ca_name), "emu:%.58s", n->desc);
}

int emu_transport_refresh(struct mad_transport *t)
{
	if (t->send != cl_send)
		return -1;
	fill_facts(t->ctx);
	return 0;
}

/* A port by GUID: a node GUID and its port number, or a CA port GUID. */
uint32_t emu_find_port(const struct emu *e, uint64_t guid, int port)
{
	uint32_t ni = guid_map_get(&e->node_map, guid);
	if (ni != FAB_NONE) {
		const struct emu_node *n = &e->nodes[ni];
		if (port < 0 || port > n->nports || (!is_switch(n) && !port))
			return EMU_NONE;
		return n->first_port + (uint32_t)port;
	}
	uint32_t pi = guid_map_get(&e->port_map, guid);
	if (pi == FAB_NONE || (port && port != e->ports[pi].num))
		return EMU_NONE;
	return pi;
}

static uint32_t attach_port(const struct emu *e, uint64_t guid)
{
	if (guid) {
		uint32_t ni = guid_map_get(&e->node_map, guid);
		if (ni != FAB_NONE && is_switch(&e->nodes[ni]))
			return e->nodes[ni].first_port;
		return emu_find_port(e, guid, 0);
	}
	for (uint32_t ni = 0; ni < e->n_nodes; ni++)
		if (!is_switch(&e->nodes[ni]))
			return e->nodes[ni].first_port + 1;
	return EMU_NONE;
}

int emu_attach(struct emu *e, struct event_base *base, uint64_t port_guid,
	       struct mad_transport *t, mad_recv_fn cb, void *arg, char *err,
	       size_t errlen)
{
	if (e->base && e->base != base) {
		snprintf(err, errlen, "every client of an emulator must use the same event base");
		return -1;
	}
	uint32_t pi = attach_port(e, port_guid);
	if (pi == EMU_NONE && port_guid) {
		snprintf(err, errlen, "no port with GUID 0x%016llx in the emulated fabric",
			 (unsigned long long)port_guid);
		return -1;
	}
	if (pi == EMU_NONE) {
		snprintf(err, errlen, "the emulated fabric has no CA to attach to");
		return -1;
	}
	if (emu_client_at(e, pi)) {
		snprintf(err, errlen, "port 0x%016llx already has a client",
			 (unsigned long long)e->ports[pi].guid);
		return -1;
	}
	if (e->n_clients == EMU_MAX_CLIENTS) {
		snprintf(err, errlen, "too many emulator clients");
		return -1;
	}
	if (!e->port_client && !(e->port_client = calloc(e->n_ports, sizeof(*e->port_client)))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (e->n_clients == e->cap_clients) {
		uint32_t nc = e->cap_clients ? e->cap_clients * 2 : 16;
		struct emu_client **ncl = realloc(e->clients, nc * sizeof(*ncl));
		if (!ncl) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		e->clients = ncl;
		e->cap_clients = nc;
	}
	if (!e->ev) {
		e->ev = event_new(base, -1, 0, on_event, e);
		if (!e->ev) {
			snprintf(err, errlen, "cannot create the emulator's event");
			return -1;
		}
		e->base = base;
	}
	struct emu_client *c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->e = e;
	c->t = t;
	c->port = pi;
	c->cb = cb;
	c->arg = arg;
	e->clients[e->n_clients++] = c;
	e->port_client[pi] = c;
	int was_sm = (e->ports[pi].capmask & CAPM_IS_SM) != 0;
	e->ports[pi].capmask |= CAPM_IS_SM;
	if (!was_sm)
		emu_trap144(e, pi);
	memset(t, 0, sizeof(*t));
	t->ctx = c;
	t->send = cl_send;
	t->close = cl_close;
	fill_facts(c);
	schedule(e);
	return 0;
}

int emu_set_issm(struct emu *e, uint64_t port_guid, int on)
{
	uint32_t pi = attach_port(e, port_guid);
	if (pi == EMU_NONE)
		return -1;
	if (on && !(e->ports[pi].capmask & CAPM_IS_SM)) {
		e->ports[pi].capmask |= CAPM_IS_SM;
		emu_trap144(e, pi);
	} else if (on)
		e->ports[pi].capmask |= CAPM_IS_SM;
	else
		e->ports[pi].capmask &= ~CAPM_IS_SM;
	return 0;
}

/* ---- faults ---- */

int emu_set_port_loss(struct emu *e, uint64_t guid, int port, double percent)
{
	uint32_t pi = emu_find_port(e, guid, port);
	if (pi == EMU_NONE)
		return -1;
	e->ports[pi].loss = pct_threshold(percent);
	if (e->ports[pi].loss)
		e->any_port_loss = 1;
	return 0;
}

int emu_set_pkey_nvram(struct emu *e, uint64_t guid, int port, uint16_t pkey0)
{
	uint32_t pi = emu_find_port(e, guid, port);
	if (pi == EMU_NONE || !e->ports[pi].pkey_cap)
		return -1;
	e->ports[pi].capmask |= CAPM_PKEY_NVRAM;
	e->pkeys[e->ports[pi].pkey_off] = pkey0;
	return 0;
}

int emu_set_dead(struct emu *e, uint64_t guid, int port, int dead)
{
	uint32_t ni = guid_map_get(&e->node_map, guid);
	if (ni != FAB_NONE && port == 0) {
		e->nodes[ni].dead = dead ? 1 : 0;
		return 0;
	}
	uint32_t pi = emu_find_port(e, guid, port);
	if (pi == EMU_NONE)
		return -1;
	if (dead)
		e->ports[pi].flags |= EP_DEAD;
	else
		e->ports[pi].flags &= (uint8_t)~EP_DEAD;
	return 0;
}

static int cable(struct emu *e, uint64_t guid, int port, int up)
{
	uint32_t pi = emu_find_port(e, guid, port);
	if (pi == EMU_NONE || !e->ports[pi].num || e->ports[pi].remote == EMU_NONE)
		return -1;
	struct emu_port *a = &e->ports[pi], *b = &e->ports[a->remote];
	if (up) {
		a->flags &= (uint8_t)~EP_UNPLUGGED;
		b->flags &= (uint8_t)~EP_UNPLUGGED;
		emu_port_try_up(e, pi);
	} else {
		a->flags |= EP_UNPLUGGED;
		b->flags |= EP_UNPLUGGED;
		emu_port_went_down(e, pi, PHYS_POLLING);
	}
	return 0;
}

int emu_link_down(struct emu *e, uint64_t guid, int port)
{
	return cable(e, guid, port, 0);
}

int emu_link_up(struct emu *e, uint64_t guid, int port)
{
	return cable(e, guid, port, 1);
}

/* ---- vendor attributes ---- */

int emu_register_attr(struct emu *e, uint16_t attr_id, emu_attr_fn fn,
		      void *ctx)
{
	for (uint32_t i = 0; i < e->n_vattrs; i++)
		if (e->vattrs[i].attr == attr_id) {
			e->vattrs[i].fn = fn;
			e->vattrs[i].ctx = ctx;
			return 0;
		}
	if (e->n_vattrs == EMU_MAX_VATTRS)
		return -1;
	e->vattrs[e->n_vattrs].attr = attr_id;
	e->vattrs[e->n_vattrs].fn = fn;
	e->vattrs[e->n_vattrs].ctx = ctx;
	e->n_vattrs++;
	return 0;
}

void emu_on_lft_set(struct emu *e, emu_lft_hook_fn fn, void *ctx)
{
	e->lft_hook = fn;
	e->lft_hook_ctx = ctx;
}

uint32_t emu_node_index(const struct emu *e, uint64_t guid)
{
	uint32_t ni = guid_map_get(&e->node_map, guid);
	return ni == FAB_NONE ? UINT32_MAX : ni;
}

/* ---- inspection ---- */

#define PORT_GETTER(name, expr)						\
	int name(const struct emu *e, uint64_t guid, int port)		\
	{								\
		uint32_t pi = emu_find_port(e, guid, port);			\
		if (pi == EMU_NONE)					\
			return -1;					\
		const struct emu_port *p = &e->ports[pi];		\
		return (int)(expr);					\
	}

PORT_GETTER(emu_port_state, p->state)
PORT_GETTER(emu_port_phys_state, p->phys)
PORT_GETTER(emu_port_lid, p->lid)
PORT_GETTER(emu_port_smlid, p->sm_lid)
PORT_GETTER(emu_port_lmc, p->lmc)
PORT_GETTER(emu_port_oper_vls, p->oper_vls)
PORT_GETTER(emu_port_neighbor_mtu, p->neighbor_mtu)
PORT_GETTER(emu_port_vl_high_limit, p->vl_high_limit)
PORT_GETTER(emu_port_hoq_life, p->hoq_life)

/* The M_Key state governing port guid/port (a switch's port 0's), NULL: no such port. */
static struct mkey_port *mkey_of(struct emu *e, uint64_t guid, int port)
{
	uint32_t pi = emu_find_port(e, guid, port);
	if (pi == EMU_NONE)
		return NULL;
	const struct emu_node *n = port_node(e, pi);
	return &e->ports[is_switch(n) ? n->first_port : pi].mk;
}

int emu_set_mkey(struct emu *e, uint64_t guid, int port, uint64_t key,
		 uint8_t protect, uint16_t lease_s)
{
	struct mkey_port *mk = mkey_of(e, guid, port);
	if (!mk || protect > MKEY_PROTECT_MAX)
		return -1;
	mkey_set(mk, key, protect, lease_s);
	return 0;
}

int emu_port_mkey(struct emu *e, uint64_t guid, int port, struct emu_mkey *m)
{
	struct mkey_port *mk = mkey_of(e, guid, port);
	if (!mk)
		return -1;
	uint64_t now = clock_us();
	mkey_expire(mk, now);
	m->key = mk->key;
	m->protect = mk->protect;
	m->lease_s = mk->lease_s;
	m->violations = mk->violations;
	m->lease_left_ms = mkey_lease_left_ms(mk, now);
	return 0;
}

int emu_port_pkey(const struct emu *e, uint64_t guid, int port, unsigned index)
{
	uint32_t pi = emu_find_port(e, guid, port);
	if (pi == EMU_NONE || index >= e->ports[pi].pkey_cap)
		return -1;
	return e->pkeys[e->ports[pi].pkey_off + index];
}

int emu_sl2vl(const struct emu *e, uint64_t guid, int in, int out,
	      uint8_t vl[16])
{
	uint32_t ni = guid_map_get(&e->node_map, guid);
	if (ni == FAB_NONE)
		return -1;
	const struct emu_node *n = &e->nodes[ni];
	uint32_t idx;
	if (in < 0 || out < 0 || in > n->nports || out > n->nports)
		return -1;
	if (n->sw != EMU_NONE)
		idx = (uint32_t)in * (n->nports + 1u) + (uint32_t)out;
	else if (in != out || in == 0)
		return -1;
	else
		idx = (uint32_t)in;
	for (unsigned sl = 0; sl < 16; sl++) {
		if (!n->sl2vl) {
			vl[sl] = (uint8_t)sl;	/* never set: identity, as ibsim */
			continue;
		}
		uint8_t b = n->sl2vl[idx * 8 + sl / 2];
		vl[sl] = sl % 2 ? b & 0x0f : b >> 4;	/* SL 2i: high nibble */
	}
	return 0;
}

int emu_vlarb(const struct emu *e, uint64_t guid, int port, int block,
	      uint8_t vl[32], uint8_t weight[32])
{
	uint32_t pi = emu_find_port(e, guid, port);
	if (pi == EMU_NONE || port == 0 || block < 1 || block > 4)
		return -1;
	const struct emu_port *p = &e->ports[pi];
	for (unsigned i = 0; i < 32; i++) {
		const uint8_t *d = e->vlarb ?
				   e->vlarb[pi] + (block - 1) * 64 + 2 * i : NULL;
		vl[i] = d ? d[0] & 0x0f : 0;		/* byte 0: VL in bits 3:0 */
		weight[i] = d ? d[1] : 0;		/* byte 1: weight */
	}
	return block <= 2 ? p->vlarb_low_cap : p->vlarb_high_cap;
}

static const struct emu_switch *sw_by_guid(const struct emu *e, uint64_t guid)
{
	uint32_t ni = guid_map_get(&e->node_map, guid);
	return ni == FAB_NONE ? NULL : node_sw(e, &e->nodes[ni]);
}

int emu_lft_entry(const struct emu *e, uint64_t sw_guid, uint32_t lid)
{
	const struct emu_switch *s = sw_by_guid(e, sw_guid);
	if (!s)
		return -1;
	return lid < s->lft_len ? s->lft[lid] : 0xff;
}

int emu_mft_entry(const struct emu *e, uint64_t sw_guid, uint32_t mlid,
		  uint64_t *ports)
{
	const struct emu_switch *s = sw_by_guid(e, sw_guid);
	*ports = 0;
	if (!s || mlid < FAB_MLID_BASE || mlid - FAB_MLID_BASE >= s->mft_cap)
		return -1;
	for (uint32_t q = 0; s->mft && q < s->mft_positions && q < 4; q++)
		*ports |= (uint64_t)s->mft[(mlid - FAB_MLID_BASE) * s->mft_positions + q] << (16 * q);
	return 0;
}

int emu_set_mft_top_cap(struct emu *e, uint64_t sw_guid)
{
	uint32_t pi = emu_find_port(e, sw_guid, 0);
	if (pi == EMU_NONE || !sw_by_guid(e, sw_guid))
		return -1;
	e->ports[pi].capmask |= CAPM_MCAST_FDB_TOP;
	return 0;
}

int emu_mft_top(const struct emu *e, uint64_t sw_guid)
{
	const struct emu_switch *s = sw_by_guid(e, sw_guid);
	return s ? s->mft_top : -1;
}

int emu_lft_top(const struct emu *e, uint64_t sw_guid)
{
	const struct emu_switch *s = sw_by_guid(e, sw_guid);
	return s ? s->lft_top : -1;
}

int emu_set_opt_sl2vl(struct emu *e, uint64_t sw_guid, int on)
{
	int n = 0;
	for (uint32_t i = 0; i < e->n_sws; i++) {
		struct emu_switch *s = &e->sws[i];
		if (sw_guid && e->nodes[s->node].guid != sw_guid)
			continue;
		s->opt_sl2vl = on ? 1 : 0;
		n++;
	}
	return n || !sw_guid ? 0 : -1;
}

int emu_port_state_change(const struct emu *e, uint64_t sw_guid)
{
	const struct emu_switch *s = sw_by_guid(e, sw_guid);
	return s ? s->psc : -1;
}

int emu_switch_lifetime(const struct emu *e, uint64_t sw_guid)
{
	const struct emu_switch *s = sw_by_guid(e, sw_guid);
	return s ? s->lifetime : -1;
}

/* ---- building ---- */

static void init_port(struct emu_port *p, const struct fab_port *fp,
		      const struct emu_node *n, uint32_t node, uint8_t num)
{
	memset(p, 0, sizeof(*p));
	p->node = node;
	p->num = num;
	p->guid = is_switch(n) ? fp->guid : (num ? fp->guid : 0);
	p->remote = EMU_NONE;
	p->link_down_def = PHYS_POLLING;
	uint8_t w = fp->width_active ? fp->width_active : 0x02;
	uint8_t sp = fp->speed_active ? fp->speed_active : 0x01;
	p->width_sup = p->width_en = p->width_act = w;
	p->speed_sup = p->speed_en = p->speed_act = sp & 0x0f;
	p->espeed_sup = p->espeed_en = p->espeed_act = sp >> 4;
	p->mtu_cap = fp->mtu_cap >= 1 && fp->mtu_cap <= 5 ? fp->mtu_cap : 5;
	p->vl_cap = fp->vl_cap >= 1 && fp->vl_cap <= 5 ? fp->vl_cap : 4;
	p->neighbor_mtu = p->mtu_cap;
	p->oper_vls = 1;
	p->hoq_life = 0x1f;
	p->vl_stall = 7;
	if (num) {
		p->vlarb_high_cap = 8;
		p->vlarb_low_cap = 8;
	}
	if (is_switch(n) && num == 0) {
		p->state = PORT_ACTIVE;
		p->phys = PHYS_UP;
		p->capmask = CAPM_TRAP | CAPM_SL_MAP | CAPM_SYS_GUID;
	} else if (num) {
		p->state = PORT_DOWN;
		p->phys = PHYS_POLLING;
		if (!is_switch(n))
			p->capmask = CAPM_TRAP | CAPM_SL_MAP | CAPM_SYS_GUID |
				     CAPM_CM | CAPM_CLIENT_REREG;
	}
	if (p->capmask && p->espeed_sup)
		p->capmask |= CAPM_EXT_SPEEDS;
}

static int build(struct emu *e, const struct fabric *f)
{
	uint32_t n_sw = 0, n_pkeys = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (f->nodes[i].type == FAB_SWITCH)
			n_sw++;
	e->nodes = calloc(f->n_nodes ? f->n_nodes : 1, sizeof(*e->nodes));
	e->ports = calloc(f->n_ports ? f->n_ports : 1, sizeof(*e->ports));
	e->sws = calloc(n_sw ? n_sw : 1, sizeof(*e->sws));
	if (!e->nodes || !e->ports || !e->sws ||
	    guid_map_init(&e->node_map, f->n_nodes * 2) < 0 ||
	    guid_map_init(&e->port_map, f->n_ports * 2) < 0)
		return -1;
	e->n_nodes = f->n_nodes;
	e->n_ports = f->n_ports;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *fn = &f->nodes[i];
		struct emu_node *n = &e->nodes[i];
		n->guid = fn->guid;
		n->sys_guid = fn->sys_guid ? fn->sys_guid : fn->guid;
		n->first_port = fn->first_port;
		n->vendor_id = fn->vendor_id;
		n->device_id = fn->device_id;
		n->revision = 1;
		n->pma_capmask = EMU_PMA_CAPMASK;
		n->type = fn->type;
		n->nports = fn->nports;
		n->sw = EMU_NONE;
		n->partition_cap = fn->partition_cap ? fn->partition_cap :
				   fn->type == FAB_SWITCH ? DEFAULT_SW_PKEYS :
				   DEFAULT_CA_PKEYS;
		memcpy(n->desc, fn->desc, strnlen(fn->desc, EMU_DESC_LEN));
		if (guid_map_put(&e->node_map, n->guid, i) < 0)
			return -1;
		if (fn->type == FAB_SWITCH) {
			struct emu_switch *s = &e->sws[e->n_sws];
			n->sw = e->n_sws++;
			s->node = i;
			s->lft_cap = fn->lft_cap && fn->lft_cap <= DEFAULT_LFT_CAP ?
				     (uint16_t)fn->lft_cap : DEFAULT_LFT_CAP;
			s->mft_cap = fn->mft_cap ? fn->mft_cap : DEFAULT_MFT_CAP;
			s->partition_enf_cap = fn->partition_enf_cap ?
					       fn->partition_enf_cap : DEFAULT_SW_PKEYS;
			s->lifetime = fn->lifetime ? fn->lifetime : DEFAULT_LIFETIME;
			s->enhanced_port0 = fn->enhanced_port0;
			s->mft_positions = (uint8_t)(n->nports / 16 + 1);
		}
		for (unsigned k = 0; k <= fn->nports; k++) {
			uint32_t pi = fn->first_port + k;
			struct emu_port *p = &e->ports[pi];
			init_port(p, &f->ports[pi], n, i, (uint8_t)k);
			if (k || fn->type == FAB_SWITCH) {
				p->pkey_cap = fn->type == FAB_SWITCH && k ?
					      e->sws[n->sw].partition_enf_cap :
					      n->partition_cap;
				p->pkey_off = n_pkeys;
				n_pkeys += p->pkey_cap;
			}
			if (k && fn->type != FAB_SWITCH && p->guid &&
			    guid_map_put(&e->port_map, p->guid, pi) < 0)
				return -1;
		}
	}
	e->pkeys = calloc(n_pkeys ? n_pkeys : 1, sizeof(*e->pkeys));
	if (!e->pkeys)
		return -1;
	for (uint32_t pi = 0; pi < e->n_ports; pi++) {
		struct emu_port *p = &e->ports[pi];
		if (p->pkey_cap)
			e->pkeys[p->pkey_off] = 0xffff;
		uint32_t r = f->ports[pi].remote;
		if (!p->num || r == FAB_NONE || r >= e->n_ports || !e->ports[r].num)
			continue;
		p->remote = r;
		p->state = PORT_INIT;
		p->phys = PHYS_UP;
	}
	return 0;
}

struct emu *emu_new(const struct fabric *topo, char *err, size_t errlen)
{
	struct emu *e = calloc(1, sizeof(*e));
	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e->max_batch = EMU_DEFAULT_BATCH;
	e->rng = 1;
	e->trap_tid = 1;
	if (build(e, topo) < 0) {
		snprintf(err, errlen, "out of memory building the emulated fabric");
		emu_free(e);
		return NULL;
	}
	return e;
}

void emu_free(struct emu *e)
{
	if (!e)
		return;
	if (e->ev)
		event_free(e->ev);
	for (uint32_t i = 0; i < e->n_clients; i++)
		free(e->clients[i]);
	free(e->clients);
	free(e->port_client);
	for (uint32_t i = 0; i < e->n_sws; i++) {
		free(e->sws[i].lft);
		free(e->sws[i].mft);
	}
	for (uint32_t i = 0; i < e->n_nodes; i++)
		free(e->nodes[i].sl2vl);
	emu_xlid_free(e);
	free(e->nodes);
	free(e->ports);
	free(e->sws);
	free(e->pkeys);
	free(e->vlarb);
	free(e->q.v);
	free(e->vmsg);
	guid_map_free(&e->node_map);
	guid_map_free(&e->port_map);
	free(e);
}
