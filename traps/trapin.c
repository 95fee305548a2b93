/*
 * Traps in (see trapin.h): the decision, the checks, the counters.
 */
#include "traps/trapin.h"

#include <infiniband/mad.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "mad/dispatch.h"
#include "mad/smp.h"
#include "sm/base/log.h"
#include "sm/base/nodemap.h"

/* ---- the decision ---- */

/* Notice: DataDetails at byte 10; traps 129-131 carry PORTNO at its byte 4 (IBA vol. 1 §14.2.5.1). */
#define NOTICE_DATA_OFFS	10
#define NOTICE_PORTNO_OFFS	4

/* Reads the trap fields of a Trap(Notice) SMP of MAD_SIZE bytes. */
static void trapin_parse(const uint8_t *mad, const struct mad_addr *from,
			 struct trapin_trap *t)
{
	void *d = (void *)(mad + SMP_DATA_OFFS);
	memset(t, 0, sizeof(*t));
	t->generic = (int)mad_get_field(d, 0, IB_NOTICE_IS_GENERIC_F);
	t->number = mad_get_field(d, 0, IB_NOTICE_TRAP_NUMBER_F);
	t->issuer_lid = mad_get_field(d, 0, IB_NOTICE_ISSUER_LID_F);
	t->directed = smp_class(mad) == IB_SMI_DIRECT_CLASS || from->lid == 0xffff;
	t->slid = from->lid;
	if (t->generic && t->number >= 129 && t->number <= 131)
		t->data_port = mad[SMP_DATA_OFFS + NOTICE_DATA_OFFS + NOTICE_PORTNO_OFFS];
}

static uint32_t port_of_lid(const struct fabric *f, uint32_t lid)
{
	if (!lid || !f->lid_port || lid > f->max_lid)
		return FAB_NONE;
	return f->lid_port[lid];
}

void trapin_decide(const struct fabric *f, const struct trapin_trap *t,
		   struct trapin_verdict *v)
{
	v->kind = TRAPIN_COUNT;
	v->port = FAB_NONE;
	v->why = "logged";
	if (!f) {
		/* no model: only the plain comparison */
		if (!t->directed && t->slid != t->issuer_lid) {
			v->kind = TRAPIN_SPOOFED;
			v->why = "its IssuerLID is not its source LID";
		} else if (t->generic && (t->number == 128 || t->number == 144)) {
			v->kind = TRAPIN_UNCHECKED;
			v->why = "no configured subnet to check it against";
		} else {
			v->why = "no configured subnet to check it against";
		}
		return;
	}
	uint32_t ip = port_of_lid(f, t->issuer_lid);
	if (!t->directed) {
		uint32_t sp = port_of_lid(f, t->slid);
		if (sp != ip || (ip == FAB_NONE && t->slid != t->issuer_lid)) {
			v->kind = TRAPIN_SPOOFED;
			v->why = "its IssuerLID is not the port it came from";
			return;
		}
	}
	v->port = ip;
	if (!t->generic) {
		v->why = "vendor trap";
		return;
	}
	switch (t->number) {
	case 128:
		if (ip == FAB_NONE || f->nodes[f->ports[ip].node].type != FAB_SWITCH) {
			v->kind = TRAPIN_UNKNOWN;
			v->why = ip == FAB_NONE ? "no port of the subnet has its IssuerLID" :
				 "only a switch reports a link state change";
			return;
		}
		v->kind = TRAPIN_CHECK_SWITCH;
		v->why = "checking the switch's PortStateChange";
		return;
	case 144:
		if (ip == FAB_NONE) {
			v->kind = TRAPIN_UNKNOWN;
			v->why = "no port of the subnet has its IssuerLID";
			return;
		}
		v->kind = TRAPIN_CHECK_PORT;
		v->why = "checking the port's CapabilityMask";
		return;
	case 129:
	case 130:
	case 131:
		v->why = "link integrity / buffer overrun / flow control watchdog";
		return;
	case 145:
		v->why = "SystemImageGUID changed";
		return;
	case 256:
		v->why = "bad M_Key";
		return;
	case 257:
		v->why = "bad P_Key";
		return;
	case 258:
		v->why = "bad Q_Key";
		return;
	case 259:
		v->why = "bad P_Key at a switch external port";
		return;
	default:
		return;
	}
}

/* ---- counting and the log ---- */

static void count_number(struct trapin_stats *s, const struct trapin_trap *t)
{
	s->received++;
	if (!t->generic) {
		s->vendor++;
		return;
	}
	for (uint32_t i = 0; i < s->n_numbers; i++)
		if (s->number[i] == t->number) {
			s->by_number[i]++;
			return;
		}
	if (s->n_numbers < TRAPIN_NUMBERS) {
		s->number[s->n_numbers] = (uint16_t)t->number;
		s->by_number[s->n_numbers++] = 1;
		return;
	}
	s->other_numbers++;
}

/*
 * The log line of a trap: one limiter for every trap (sm/base/log.h), a storm
 * of any mix gives a few lines and then one count.
 */
static struct log_rl trap_rl = { .burst = TRAPIN_LOG_BURST,
				 .interval_ms = TRAPIN_LOG_WINDOW_MS };

/*
 * One more trap from guid's port in a bounded table of n_max ports: 0, or
 * -1 when the table is full (the caller counts it with the rest).
 */
static int count_in(struct trapin_port_err *tab, uint32_t *n, uint32_t n_max,
		    uint64_t guid, uint8_t port)
{
	for (uint32_t i = 0; i < *n; i++)
		if (tab[i].guid == guid && tab[i].port == port) {
			tab[i].count++;
			return 0;
		}
	if (*n == n_max)
		return -1;
	tab[(*n)++] = (struct trapin_port_err){ guid, port, 1 };
	return 0;
}

/* Traps 129-131 by the erring port (trapin_stats.port_err). */
static void count_port_err(struct trapin_stats *s, const struct fabric *f,
			   const struct trapin_trap *tr, const struct trapin_verdict *v)
{
	if (!tr->generic || tr->number < 129 || tr->number > 131)
		return;
	if (!f || v->port == FAB_NONE ||
	    count_in(s->port_err, &s->n_port_err, TRAPIN_PORT_ERR_PORTS,
		     f->nodes[f->ports[v->port].node].guid, tr->data_port) < 0)
		s->port_err_other++;
}

/* ' ("NAME" port N)': the issuer's node and the port the trap is about. */
static void where(const struct fabric *f, const struct trapin_trap *tr,
		  const struct trapin_verdict *v, char *buf, size_t len)
{
	buf[0] = '\0';
	if (!f || v->port == FAB_NONE || v->kind == TRAPIN_SPOOFED)
		return;
	const struct fab_port *p = &f->ports[v->port];
	const char *name = fabric_node_name(f, p->node);
	unsigned port = tr->generic && tr->number >= 129 && tr->number <= 131 ?
			tr->data_port : p->num;
	if (name[0])
		snprintf(buf, len, " (\"%s\" port %u)", name, port);
	else
		snprintf(buf, len, " (0x%016llx port %u)",
			 (unsigned long long)f->nodes[p->node].guid, port);
}

static void log_trap(struct trapin *t, const struct fabric *f,
		     const struct trapin_trap *tr, const struct trapin_verdict *v)
{
	int shown;
	char at[FAB_DESC_LEN + 48];
	if (log_get_level() < LOG_NOTICE)
		return;
	where(f, tr, v, at, sizeof(at));
	if (tr->generic)
		shown = log_rl_msg(&trap_rl, LOG_NOTICE,
				   "trap %u from LID %u%s (source LID %u%s): %s",
				   tr->number, tr->issuer_lid, at, tr->slid,
				   tr->directed ? ", directed route" : "", v->why);
	else
		shown = log_rl_msg(&trap_rl, LOG_NOTICE,
				   "vendor trap 0x%04x from LID %u (source LID %u)",
				   tr->number, tr->issuer_lid, tr->slid);
	if (!shown)
		t->st.log_suppressed++;
}

/* ---- trap 256: an M_Key violation (IBA vol. 1 14.2.4.1) ---- */

static struct log_rl mkey_rl = { .burst = TRAPIN_MKEY_LOG_BURST,
				 .interval_ms = TRAPIN_MKEY_LOG_WINDOW_MS };

/* The methods an M_Key check tells apart (mad/mkey.h), else the number. */
static const char *method_name(uint8_t m, char *buf, size_t len)
{
	switch (m) {
	case MKEY_METHOD_GET:
		return "Get";
	case MKEY_METHOD_SET:
		return "Set";
	case MKEY_METHOD_TRAP_REPRESS:
		return "TrapRepress";
	default:
		snprintf(buf, len, "method 0x%02x", m);
		return buf;
	}
}

/*
 * A trap 256 from port pi of the model: decoded, counted by the port,
 * named in the log (the port, then the SMP that carried the wrong key),
 * told to the hook.
 */
static void mkey_violation(struct trapin *t, const struct fabric *f, uint32_t pi,
			   const uint8_t *mad)
{
	struct trapin_stats *s = &t->st;
	struct mkey_trap256 d;
	char err[128];
	const struct fab_port *p = &f->ports[pi];
	const char *name = fabric_node_name(f, p->node);
	uint64_t guid = f->nodes[p->node].guid;
	if (mkey_trap256_get(mad + SMP_DATA_OFFS + NOTICE_DATA_OFFS,
			     MKEY_TRAP_DETAILS_LEN, &d, err, sizeof(err)) < 0) {
		s->mkey_undecoded++;
		if (!log_rl_msg(&mkey_rl, LOG_WARN, "M_Key violation at 0x%016llx port %u "
				"(\"%s\"): %s", (unsigned long long)guid, p->num, name, err))
			s->log_suppressed++;
		return;
	}
	s->mkey_violations++;
	if (count_in(s->mkey_viol, &s->n_mkey_viol, TRAPIN_MKEY_PORTS, guid, p->num) < 0)
		s->mkey_viol_other++;
	char dr[80] = "", mb[16];
	if (d.dr_notice)
		snprintf(dr, sizeof(dr), ", directed route DRSLID %u, %u hops%s",
			 d.dr_slid, d.dr_hop_count, d.dr_truncated ? " (path truncated)" : "");
	if (!log_rl_msg(&mkey_rl, LOG_WARN, "M_Key violation at \"%s\" (0x%016llx) "
			"port %u: %s of attribute 0x%04x modifier 0x%x with M_Key "
			"0x%016llx, LID %u%s", name, (unsigned long long)guid, p->num,
			method_name(d.method, mb, sizeof(mb)), d.attr_id, d.attr_mod,
			(unsigned long long)d.mkey, d.lid, dr))
		s->log_suppressed++;
	if (t->h.mkey_violation)
		t->h.mkey_violation(t->h.arg, pi, &d);
}

/* ---- checks: one Get to the device that claims a change ---- */

static int sweep_state(struct trapin *t)
{
	return t->h.sweep_state ? t->h.sweep_state(t->h.arg) : TRAPIN_IDLE;
}

static void check_send(struct trapin_check *c);

static void check_done(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct trapin_check *c = arg;
	struct trapin *t = c->owner;
	c->in_flight = 0;
	if (status == TXN_CANCELLED) {
		c->kind = 0;
		return;
	}
	if (sweep_state(t) != TRAPIN_IDLE) {
		/* a heavy sweep asked for or started after the trap covers it */
		t->st.coalesced++;
		c->kind = 0;
		return;
	}
	const struct fabric *f = t->h.model ? t->h.model(t->h.arg) : NULL;
	uint32_t node = f ? fabric_find_node(f, c->guid) : FAB_NONE;
	char why[160];
	const char *change = NULL;
	if (status != TXN_OK || len < SMP_DATA_OFFS + SMP_DATA_SIZE || smp_status(resp)) {
		change = "no longer answers";
	} else if (c->kind == TRAPIN_CHECK_SWITCH) {
		struct smp_switchinfo si;
		smp_decode_switchinfo(resp + SMP_DATA_OFFS, &si);
		if (si.port_state_change)
			change = "PortStateChange is set";
	} else if (node != FAB_NONE && c->port <= f->nodes[node].nports) {
		uint32_t cap = mad_get_field((void *)(resp + SMP_DATA_OFFS), 0,
					     IB_PORT_CAPMASK_F);
		if (cap != fabric_portp(f, node, c->port)->capmask)
			change = "its CapabilityMask changed";
	}
	if (change && f) {
		snprintf(why, sizeof(why), "trap %u from LID %u: 0x%016llx %s",
			 c->number, c->issuer_lid, (unsigned long long)c->guid, change);
		/* the sweep's own "heavy sweep: WHY" line says it at notice */
		log_info("%s: heavy sweep", why);
		t->st.sweeps++;
		int was_switch = c->kind == TRAPIN_CHECK_SWITCH;
		c->kind = 0;
		if (was_switch && t->h.switch_changed)
			t->h.switch_changed(t->h.arg, c->guid);
		if (t->h.heavy)
			t->h.heavy(t->h.arg, why);
		return;
	}
	t->st.unchanged++;
	if (c->again && f && node != FAB_NONE) {
		c->again = 0;
		check_send(c);
		return;
	}
	c->kind = 0;
}

static void check_send(struct trapin_check *c)
{
	struct trapin *t = c->owner;
	const struct fabric *f = t->h.model ? t->h.model(t->h.arg) : NULL;
	uint32_t node = f ? fabric_find_node(f, c->guid) : FAB_NONE;
	if (node == FAB_NONE) {
		c->kind = 0;	/* gone from the model: a sweep saw it go */
		return;
	}
	const struct fab_node *n = &f->nodes[node];
	uint8_t mad[MAD_SIZE];
	struct mad_addr to;
	if (c->kind == TRAPIN_CHECK_SWITCH)
		smp_init_dr(mad, IB_MAD_METHOD_GET, IB_ATTR_SWITCH_INFO, 0,
			    n->dr_path, n->dr_len);
	else
		smp_init_dr(mad, IB_MAD_METHOD_GET, IB_ATTR_PORT_INFO, c->port,
			    n->dr_path, n->dr_len);
	smp_dr_address(&to);
	t->st.checks++;
	if (txn_submit(t->txn, mad, sizeof(mad), &to, node, check_done, c) < 0) {
		c->kind = 0;
		t->st.check_overflow++;
		return;
	}
	c->in_flight = 1;
}

static struct trapin_check *find(struct trapin_check *v, uint32_t n,
				 uint64_t guid, uint8_t port, uint8_t kind)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i].kind == kind && v[i].guid == guid && v[i].port == port)
			return &v[i];
	return NULL;
}

static struct trapin_check *free_slot(struct trapin *t)
{
	for (uint32_t i = 0; i < TRAPIN_CHECKS; i++)
		if (!t->checks[i].kind)
			return &t->checks[i];
	return NULL;
}

/* Checks the claim now, or once the sweep in progress is over. */
static void check_claim(struct trapin *t, const struct fabric *f,
			const struct trapin_trap *tr, const struct trapin_verdict *v)
{
	const struct fab_port *p = &f->ports[v->port];
	uint64_t guid = f->nodes[p->node].guid;
	uint8_t port = v->kind == TRAPIN_CHECK_PORT ? p->num : 0;
	uint8_t kind = (uint8_t)v->kind;
	int st = sweep_state(t);
	if (st == TRAPIN_PENDING) {
		t->st.coalesced++;
		return;
	}
	struct trapin_check *c = find(t->checks, TRAPIN_CHECKS, guid, port, kind);
	if (c) {	/* one in flight: once more when it is answered */
		c->again = 1;
		t->st.coalesced++;
		return;
	}
	if (st == TRAPIN_RUNNING) {
		if (find(t->deferred, t->n_deferred, guid, port, kind)) {
			t->st.coalesced++;
			return;
		}
		if (t->n_deferred == TRAPIN_DEFERRED) {
			t->st.check_overflow++;
			return;
		}
		c = &t->deferred[t->n_deferred++];
	} else {
		c = free_slot(t);
		if (!c) {
			t->st.check_overflow++;
			return;
		}
	}
	memset(c, 0, sizeof(*c));
	c->owner = t;
	c->guid = guid;
	c->port = port;
	c->kind = kind;
	c->number = tr->number;
	c->issuer_lid = tr->issuer_lid;
	if (st == TRAPIN_IDLE)
		check_send(c);
}

void trapin_idle(struct trapin *t)
{
	int st = sweep_state(t);
	if (st == TRAPIN_RUNNING || !t->n_deferred)
		return;
	uint32_t n = t->n_deferred;
	t->n_deferred = 0;
	if (st == TRAPIN_PENDING) {	/* the next sweep covers them */
		t->st.coalesced += n;
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct trapin_check *d = &t->deferred[i];
		if (find(t->checks, TRAPIN_CHECKS, d->guid, d->port, d->kind)) {
			t->st.coalesced++;
			continue;
		}
		struct trapin_check *c = free_slot(t);
		if (!c) {
			t->st.check_overflow++;
			continue;
		}
		*c = *d;
		check_send(c);
	}
}

/* ---- a trap ---- */

/* TrapRepress: the same MAD, method 0x07, back the way it came. */
static void repress(struct trapin *t, const uint8_t *in, const struct trapin_trap *tr,
		    const struct mad_addr *from)
{
	uint8_t mad[MAD_SIZE];
	memcpy(mad, in, MAD_SIZE);
	mad_set_field(mad, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_TRAP_REPRESS);
	/*
	 * The issuer checks a TrapRepress's M_Key as a Set's (IBA vol. 1
	 * 14.2.4.1).  The trap carries the port's own M_Key: the repress
	 * carries the key the SM holds, never the trap's echoed -- that would
	 * pass the check and stop the port's lease timer (14.2.4.2), so an SM
	 * that cannot name the port's key would keep it from ever expiring.
	 * A keyed port whose key the SM does not hold is not answered: a
	 * repress with another key is a violation, and its trap 256 would
	 * come back at once; the port sends its trap again in its own time.
	 */
	uint64_t key = t->h.repress_key ? t->h.repress_key(t->h.arg, tr->issuer_lid) : 0;
	struct mkey_trap256 d;
	char err[128];
	if (tr->generic && tr->number == MKEY_TRAP &&
	    mkey_trap256_get(in + SMP_DATA_OFFS + NOTICE_DATA_OFFS, MKEY_TRAP_DETAILS_LEN,
			     &d, err, sizeof(err)) == 0 && d.mkey == key &&
	    (key || d.method == MKEY_METHOD_TRAP_REPRESS)) {
		t->st.mkey_unrepressed++;	/* it would refuse this key again */
		return;
	}
	if (!key && mad_get_field64(mad, 0, IB_MAD_MKEY_F)) {
		t->st.repress_withheld++;
		return;
	}
	mad_set_field64(mad, 0, IB_MAD_MKEY_F, key);
	struct mad_addr to = *from;
	if (smp_class(in) == IB_SMI_DIRECT_CLASS) {
		to.lid = 0xffff;	/* back along the return path */
		mad_set_field(mad, 0, IB_DRSMP_DIRECTION_F, 1);
	} else if (!to.lid) {
		to.lid = tr->issuer_lid;
	}
	if (mad_transport_send(t->tr, mad, MAD_SIZE, &to) < 0)
		t->st.repress_failed++;
	else
		t->st.represses++;
}

void trapin_handle(struct trapin *t, const uint8_t *mad,
		   const struct mad_addr *from, uint64_t now_ms)
{
	struct trapin_trap tr;
	struct trapin_verdict v;
	trapin_parse(mad, from, &tr);
	count_number(&t->st, &tr);
	repress(t, mad, &tr, from);
	const struct fabric *f = t->h.model ? t->h.model(t->h.arg) : NULL;
	trapin_decide(f, &tr, &v);
	switch (v.kind) {
	case TRAPIN_SPOOFED:
		t->st.spoofed++;
		break;
	case TRAPIN_UNKNOWN:
		t->st.unknown_issuer++;
		break;
	case TRAPIN_CHECK_PORT:
		if (t->h.port_changed)
			t->h.port_changed(t->h.arg, f->ports[v.port].guid);
		/* fall through */
	case TRAPIN_CHECK_SWITCH:
		check_claim(t, f, &tr, &v);
		break;
	case TRAPIN_UNCHECKED:
		if (t->h.unchecked && t->h.sweep_state &&
		    t->h.sweep_state(t->h.arg) == TRAPIN_RUNNING)
			t->h.unchecked(t->h.arg);
		break;
	case TRAPIN_COUNT:
		if (tr.generic && tr.number == 257 && v.port != FAB_NONE &&
		    t->h.pkey_violation)
			t->h.pkey_violation(t->h.arg, v.port);
		if (tr.generic && tr.number == MKEY_TRAP && v.port != FAB_NONE)
			mkey_violation(t, f, v.port, mad);
		break;
	}
	count_port_err(&t->st, f, &tr, &v);
	log_trap(t, f, &tr, &v);
}

void trapin_init(struct trapin *t, struct txn_engine *txn,
		 struct mad_transport *tr, const struct trapin_hooks *h)
{
	memset(t, 0, sizeof(*t));
	t->txn = txn;
	t->tr = tr;
	t->h = *h;
}

void *trapin_json(const struct trapin *t)
{
	const struct trapin_stats *s = &t->st;
	json_t *by = json_object();
	for (uint32_t i = 0; i < s->n_numbers; i++) {
		char k[8];
		snprintf(k, sizeof(k), "%u", s->number[i]);
		json_object_set_new(by, k, json_integer((json_int_t)s->by_number[i]));
	}
	if (s->other_numbers)
		json_object_set_new(by, "other", json_integer((json_int_t)s->other_numbers));
	if (s->vendor)
		json_object_set_new(by, "vendor", json_integer((json_int_t)s->vendor));
	return json_pack("{s:I,s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		"received", (json_int_t)s->received, "by_number", by,
		"spoofed", (json_int_t)s->spoofed,
		"unknown_issuer", (json_int_t)s->unknown_issuer,
		"checks", (json_int_t)s->checks,
		"unchanged", (json_int_t)s->unchanged,
		"coalesced", (json_int_t)s->coalesced,
		"check_overflow", (json_int_t)s->check_overflow,
		"heavy_sweeps", (json_int_t)s->sweeps,
		"represses", (json_int_t)s->represses,
		"repress_failed", (json_int_t)s->repress_failed,
		"repress_withheld", (json_int_t)s->repress_withheld,
		"mkey_unrepressed", (json_int_t)s->mkey_unrepressed,
		"log_suppressed", (json_int_t)s->log_suppressed,
		"mkey_undecoded", (json_int_t)s->mkey_undecoded);
}
