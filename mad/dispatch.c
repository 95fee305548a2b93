#include "mad/dispatch.h"

#include <infiniband/mad.h>
#include <stdlib.h>
#include <string.h>

#include "sm/base/fabric.h"
#include "sm/base/log.h"

/* What the receive path knows of one management class. */
struct mad_class {
	uint32_t n;			/* registrations */
	uint8_t version;		/* their class version */
	uint32_t methods[256 / 32];	/* methods with a registration */
};

struct mad_entry {
	uint32_t key;			/* class << 24 | method << 16 | attr */
	mad_handler_fn fn;		/* NULL: free slot */
	void *ctx;
};

struct mad_dispatch {
	struct mad_transport *t;
	mad_answer_fn answer;
	void *answer_arg;
	mad_rmpp_fn rmpp;
	void *rmpp_arg;
	struct mad_class classes[256];
	struct mad_entry *tab;		/* open addressing, linear probing */
	uint32_t mask;			/* table size - 1 */
	uint32_t n;
	struct mad_dispatch_stats st;
};

#define TAB_MIN 64

static uint32_t key_of(uint8_t cls, uint8_t method, uint16_t attr)
{
	return (uint32_t)cls << 24 | (uint32_t)method << 16 | attr;
}

static uint32_t hash_of(uint32_t key)
{
	return (key * 0x9e3779b1u) ^ (key >> 16);
}

static struct mad_entry *lookup(const struct mad_dispatch *d, uint32_t key)
{
	for (uint32_t i = hash_of(key) & d->mask;; i = (i + 1) & d->mask) {
		struct mad_entry *e = &d->tab[i];
		if (!e->fn)
			return NULL;
		if (e->key == key)
			return e;
	}
}

static void put(struct mad_entry *tab, uint32_t mask, const struct mad_entry *in)
{
	uint32_t i = hash_of(in->key) & mask;
	while (tab[i].fn)
		i = (i + 1) & mask;
	tab[i] = *in;
}

/* Rebuilds the table with room for want entries, leaving out skip. */
static int rebuild(struct mad_dispatch *d, uint32_t want, const struct mad_entry *skip)
{
	uint32_t size = TAB_MIN;
	while (size < 2 * want)
		size <<= 1;
	struct mad_entry *tab = calloc(size, sizeof(*tab));
	if (!tab)
		return -1;
	for (uint32_t i = 0; d->tab && i <= d->mask; i++)
		if (d->tab[i].fn && &d->tab[i] != skip)
			put(tab, size - 1, &d->tab[i]);
	free(d->tab);
	d->tab = tab;
	d->mask = size - 1;
	return 0;
}

struct mad_dispatch *mad_dispatch_new(struct mad_transport *t)
{
	struct mad_dispatch *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->t = t;
	if (rebuild(d, 0, NULL) < 0) {
		free(d);
		return NULL;
	}
	return d;
}

void mad_dispatch_free(struct mad_dispatch *d)
{
	if (!d)
		return;
	free(d->tab);
	free(d);
}

void mad_dispatch_set_answers(struct mad_dispatch *d, mad_answer_fn fn,
			      void *arg)
{
	d->answer = fn;
	d->answer_arg = arg;
}

void mad_dispatch_set_rmpp(struct mad_dispatch *d, mad_rmpp_fn fn, void *arg)
{
	d->rmpp = fn;
	d->rmpp_arg = arg;
}

static void set_method(struct mad_class *c, uint8_t method, int on)
{
	uint32_t bit = 1u << (method % 32);
	if (on)
		c->methods[method / 32] |= bit;
	else
		c->methods[method / 32] &= ~bit;
}

static int has_method(const struct mad_class *c, uint8_t method)
{
	return (c->methods[method / 32] >> (method % 32)) & 1;
}

int mad_dispatch_register(struct mad_dispatch *d, uint8_t mgmt_class,
			  uint8_t class_version, uint8_t method, uint16_t attr,
			  mad_handler_fn fn, void *ctx)
{
	struct mad_class *c = &d->classes[mgmt_class];
	uint32_t key = key_of(mgmt_class, method, attr);
	if (!fn || (method & MAD_METHOD_RESPONSE) || lookup(d, key) ||
	    (c->n && c->version != class_version))
		return -1;
	if (2 * (d->n + 1) > d->mask + 1 && rebuild(d, d->n + 1, NULL) < 0)
		return -1;
	struct mad_entry e = { .key = key, .fn = fn, .ctx = ctx };
	put(d->tab, d->mask, &e);
	d->n++;
	c->n++;
	c->version = class_version;
	set_method(c, method, 1);
	return 0;
}

int mad_dispatch_unregister(struct mad_dispatch *d, uint8_t mgmt_class,
			    uint8_t method, uint16_t attr)
{
	struct mad_entry *e = lookup(d, key_of(mgmt_class, method, attr));
	if (!e || rebuild(d, d->n - 1, e) < 0)
		return -1;
	d->n--;
	struct mad_class *c = &d->classes[mgmt_class];
	c->n--;
	/* is the method still served for another attribute? */
	set_method(c, method, 0);
	for (uint32_t i = 0; i <= d->mask; i++)
		if (d->tab[i].fn && d->tab[i].key >> 16 == key_of(mgmt_class, method, 0) >> 16)
			set_method(c, method, 1);
	return 0;
}

const struct mad_dispatch_stats *
mad_dispatch_get_stats(const struct mad_dispatch *d)
{
	return &d->st;
}

const char *mad_drop_name(int reason)
{
	static const char *const names[MAD_DROP_N] = {
		[MAD_DROP_TRUNCATED] = "truncated",
		[MAD_DROP_OVERSIZED] = "oversized",
		[MAD_DROP_BOUNCED] = "bounced",
		[MAD_DROP_UNMATCHED] = "unmatched_response",
		[MAD_DROP_TRAP_REPRESS] = "trap_repress",
		[MAD_DROP_NO_RESPONSE] = "no_response_due",
		[MAD_DROP_REFUSED] = "refused",
		[MAD_DROP_NO_ADDRESS] = "no_return_address",
		[MAD_DROP_SEND_FAILED] = "send_failed",
	};
	return reason >= 0 && reason < MAD_DROP_N ? names[reason] : "?";
}

const char *mad_unsup_name(int kind)
{
	static const char *const names[MAD_UNSUP_N] = {
		[MAD_UNSUP_BASE_VERSION] = "bad_base_version",
		[MAD_UNSUP_CLASS] = "unsupported_class",
		[MAD_UNSUP_CLASS_VERSION] = "bad_class_version",
		[MAD_UNSUP_METHOD] = "unsupported_method",
		[MAD_UNSUP_ATTR] = "unsupported_attribute",
	};
	return kind >= 0 && kind < MAD_UNSUP_N ? names[kind] : "?";
}

/* ---- responses ---- */

static int has_rmpp_header(uint8_t cls)
{
	return cls == IB_SA_CLASS ||
	       (cls >= IB_VENDOR_RANGE2_START_CLASS && cls <= IB_VENDOR_RANGE2_END_CLASS);
}

size_t mad_class_min_len(uint8_t mgmt_class)
{
	if (mgmt_class == IB_SMI_CLASS || mgmt_class == IB_SMI_DIRECT_CLASS)
		return MAD_SIZE;
	if (mgmt_class == IB_SA_CLASS)
		return IB_SA_DATA_OFFS;
	if (has_rmpp_header(mgmt_class))
		return IB_VENDOR_RANGE2_DATA_OFFS;	/* RMPP header and OUI */
	return MAD_HDR_SIZE;
}

uint8_t mad_response_method(uint8_t method)
{
	switch (method) {
	case IB_MAD_METHOD_GET:
	case IB_MAD_METHOD_SET:
		return IB_MAD_METHOD_GET_RESPONSE;
	case IB_MAD_METHOD_SEND:
	case IB_MAD_METHOD_TRAP:
	case IB_MAD_METHOD_TRAP_REPRESS:
		return 0;
	}
	if (method & MAD_METHOD_RESPONSE)
		return 0;
	/* Report, GetTable, GetTraceTable, GetMulti, Delete, and the
	 * methods nobody defined: the method with the R bit */
	return method | MAD_METHOD_RESPONSE;
}

void mad_make_response(uint8_t *mad, int status)
{
	uint8_t m = mad_response_method(mad[3]);
	if (!m)
		m = mad[3] | MAD_METHOD_RESPONSE;
	mad_set_field(mad, 0, IB_MAD_METHOD_F, m & ~MAD_METHOD_RESPONSE);
	mad_set_field(mad, 0, IB_MAD_RESPONSE_F, 1);
	if (mad[1] == IB_SMI_DIRECT_CLASS) {
		/* the responder turns the packet around: D bit set */
		mad_set_field(mad, 0, IB_DRSMP_DIRECTION_F, 1);
		mad_set_field(mad, 0, IB_DRSMP_STATUS_F, (uint32_t)status);
	} else {
		mad_set_field(mad, 0, IB_MAD_STATUS_F, (uint32_t)status);
	}
	if (has_rmpp_header(mad[1]))
		memset(mad + MAD_HDR_SIZE, 0, MAD_RMPP_HDR_END - MAD_HDR_SIZE);
}

static int unicast_lid(uint32_t lid)
{
	return lid >= 1 && lid < FAB_MLID_BASE;
}

int mad_send_response(struct mad_transport *t, const uint8_t *resp,
		const struct mad_addr *from)
{
	return mad_send_response_len(t, resp, MAD_SIZE, from);
}

int mad_send_response_len(struct mad_transport *t, const uint8_t *resp,
			  size_t len, const struct mad_addr *from)
{
	struct mad_addr to;
	memset(&to, 0, sizeof(to));
	if (resp[1] == IB_SMI_DIRECT_CLASS) {
		to.lid = 0xffff;	/* back along the return path */
	} else {
		if (!unicast_lid(from->lid))
			return -1;
		to.lid = from->lid;
		to.qpn = from->qpn;
		to.qkey = from->qpn ? IB_DEFAULT_QP1_QKEY : 0;
		to.pkey_index = from->pkey_index;
		to.sl = from->sl;
	}
	return mad_transport_send(t, resp, len, &to);
}

static void drop(struct mad_dispatch *d, int reason, const uint8_t *mad,
		 size_t len, const struct mad_addr *from)
{
	d->st.dropped[reason]++;
	if (log_get_level() >= LOG_DEBUG)
		log_debug("recv: dropped (%s): %zu bytes, class 0x%02x method 0x%02x attr 0x%04x from LID %u",
			  mad_drop_name(reason), len, len > 1 ? mad[1] : 0,
			  len > 3 ? mad[3] : 0,
			  len >= MAD_HDR_SIZE ? (unsigned)mad_get_field((void *)mad, 0, IB_MAD_ATTRID_F) : 0,
			  from->lid);
}

/* Sends the request back as its response with status; 0 or -1 (counted). */
static int reply_status(struct mad_dispatch *d, const uint8_t *mad, size_t len,
			const struct mad_addr *from, int status)
{
	uint8_t buf[MAD_SIZE];
	if (!mad_response_method(mad[3])) {
		drop(d, mad[3] == IB_MAD_METHOD_TRAP_REPRESS ? MAD_DROP_TRAP_REPRESS :
		     MAD_DROP_NO_RESPONSE, mad, len, from);
		return -1;
	}
	if (mad[1] != IB_SMI_DIRECT_CLASS && !unicast_lid(from->lid)) {
		drop(d, MAD_DROP_NO_ADDRESS, mad, len, from);
		return -1;
	}
	memcpy(buf, mad, len);
	memset(buf + len, 0, MAD_SIZE - len);
	mad_make_response(buf, status);
	if (mad_send_response(d->t, buf, from) < 0) {
		drop(d, MAD_DROP_SEND_FAILED, mad, len, from);
		return -1;
	}
	return 0;
}

static void unsupported(struct mad_dispatch *d, int kind, const uint8_t *mad,
			size_t len, const struct mad_addr *from)
{
	static const int status[MAD_UNSUP_N] = {
		[MAD_UNSUP_BASE_VERSION] = IB_MAD_STS_BAD_BASE_VER_OR_CLASS,
		[MAD_UNSUP_CLASS] = IB_MAD_STS_BAD_BASE_VER_OR_CLASS,
		[MAD_UNSUP_CLASS_VERSION] = IB_MAD_STS_BAD_BASE_VER_OR_CLASS,
		[MAD_UNSUP_METHOD] = IB_MAD_STS_METHOD_NOT_SUPPORTED,
		[MAD_UNSUP_ATTR] = IB_MAD_STS_METHOD_ATTR_NOT_SUPPORTED,
	};
	if (reply_status(d, mad, len, from, status[kind]) == 0) {
		d->st.unsupported[kind]++;
		if (log_get_level() >= LOG_DEBUG)
			log_debug("recv: %s: class 0x%02x version %u method 0x%02x attr 0x%04x from LID %u",
				  mad_unsup_name(kind), mad[1], mad[2], mad[3],
				  (unsigned)mad_get_field((void *)mad, 0, IB_MAD_ATTRID_F),
				  from->lid);
	}
}

void mad_dispatch_input(struct mad_dispatch *d, const uint8_t *mad,
			size_t len, const struct mad_addr *from, int status)
{
	d->st.received++;
	if (len < MAD_HDR_SIZE) {
		drop(d, MAD_DROP_TRUNCATED, mad, len, from);
		return;
	}
	if (len > MAD_SIZE) {
		drop(d, MAD_DROP_OVERSIZED, mad, len, from);
		return;
	}
	uint8_t cls = mad[1], method = mad[3];
	if (len < mad_class_min_len(cls)) {
		drop(d, MAD_DROP_TRUNCATED, mad, len, from);
		return;
	}
	/* RMPP: segments, and ACKs that carry a request's method */
	if (cls == IB_SA_CLASS && !status && d->rmpp && (mad[26] & 0x01) &&
	    d->rmpp(d->rmpp_arg, mad, len, from)) {
		d->st.rmpp++;
		return;
	}
	/* an answer to us, or our own request the transport bounced */
	if (status || (method & MAD_METHOD_RESPONSE)) {
		if (d->answer && d->answer(d->answer_arg, mad, len, from, status)) {
			d->st.answers++;
			return;
		}
		drop(d, status ? MAD_DROP_BOUNCED : MAD_DROP_UNMATCHED, mad, len, from);
		return;
	}
	if (mad[0] != MAD_BASE_VERSION) {
		unsupported(d, MAD_UNSUP_BASE_VERSION, mad, len, from);
		return;
	}
	const struct mad_class *c = &d->classes[cls];
	if (!c->n) {
		unsupported(d, MAD_UNSUP_CLASS, mad, len, from);
		return;
	}
	if (mad[2] != c->version) {
		unsupported(d, MAD_UNSUP_CLASS_VERSION, mad, len, from);
		return;
	}
	uint16_t attr = (uint16_t)(mad[16] << 8 | mad[17]);
	const struct mad_entry *e = lookup(d, key_of(cls, method, attr));
	if (e) {
		d->st.handled++;
		int r = e->fn(e->ctx, mad, len, from);
		if (r == MAD_DROP)
			drop(d, MAD_DROP_REFUSED, mad, len, from);
		else if (r >= 0 && reply_status(d, mad, len, from, r) == 0)
			d->st.status_replies++;
		return;
	}
	unsupported(d, has_method(c, method) ? MAD_UNSUP_ATTR : MAD_UNSUP_METHOD,
		    mad, len, from);
}
