/*
 * OpenSM's opensm-subnet.lst read into the fabric model (osmlst.h).
 */
#include "sm/perf/osmlst.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/base/topo.h"

/* PortInfo:PortPhysicalState LinkUp, Polling (IBA 14.2.5.6, Table 155). */
#define OSM_PHYS_POLLING 2

struct lst {
	const char *name;
	char *err;
	size_t errlen;
	unsigned line;
	uint32_t sm_node;
	uint8_t sm_port;
};

/* One end of a line: "{ TYPE Ports:.. ... PN:.. }". */
struct lst_end {
	uint8_t type;
	int sm;
	unsigned long nports, vendor, device, rev, lid, port;
	uint64_t sys_guid, node_guid, port_guid;
	char desc[FAB_DESC_LEN + 1];
};

static int lerr(struct lst *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int lerr(struct lst *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!l->errlen)
		return -1;
	n = snprintf(l->err, l->errlen, "%s:%u: ", l->name, l->line);
	if (n < 0 || (size_t)n >= l->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(l->err + n, l->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static char *skip_ws(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* "KEY:HEX" at *sp; the value, at most max, in *v. */
static int take_hex(struct lst *l, char **sp, const char *key, uint64_t max,
		    uint64_t *v)
{
	char *s = skip_ws(*sp), *end;
	size_t kl = strlen(key);

	if (strncmp(s, key, kl) != 0)
		return lerr(l, "expected %s at \"%.20s\"", key, s);
	s += kl;
	if (!isxdigit((unsigned char)*s))
		return lerr(l, "%s: not a hexadecimal number", key);
	errno = 0;
	unsigned long long n = strtoull(s, &end, 16);
	if (errno || n > max || (*end != ' ' && *end != '\t' && *end != '}'))
		return lerr(l, "%s: bad value \"%.*s\"", key,
			    (int)strcspn(s, " \t}"), s);
	*v = n;
	*sp = end;
	return 0;
}

static int take_ul(struct lst *l, char **sp, const char *key, uint64_t max,
		   unsigned long *v)
{
	uint64_t n;

	if (take_hex(l, sp, key, max, &n) < 0)
		return -1;
	*v = (unsigned long)n;
	return 0;
}

static int take_type(struct lst *l, char **sp, struct lst_end *e)
{
	static const struct { const char *word; uint8_t type; } types[] = {
		{ "SW", FAB_SWITCH }, { "CA", FAB_CA }, { "Rt", FAB_ROUTER },
	};
	char *s = skip_ws(*sp);
	size_t n = strcspn(s, " \t-");

	e->type = 0;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (n == strlen(types[i].word) && !strncmp(s, types[i].word, n))
			e->type = types[i].type;
	if (!e->type)
		return lerr(l, "unknown node type \"%.*s\"", (int)n, s);
	s += n;
	e->sm = !strncmp(s, "-SM", 3);
	if (e->sm)
		s += 3;
	*sp = s;
	return 0;
}

/* "{description}": up to the "} LID:" that follows it. */
static int take_desc(struct lst *l, char **sp, struct lst_end *e)
{
	char *s = skip_ws(*sp), *close;

	if (*s != '{' || !(close = strstr(s + 1, "} LID:")))
		return lerr(l, "expected {description} then LID:");
	size_t n = (size_t)(close - (s + 1));
	if (n > FAB_DESC_LEN)
		n = FAB_DESC_LEN;
	memcpy(e->desc, s + 1, n);
	e->desc[n] = '\0';
	*sp = close + 1;
	return 0;
}

static int parse_end(struct lst *l, char **sp, struct lst_end *e)
{
	char *s = skip_ws(*sp);

	memset(e, 0, sizeof(*e));
	if (*s != '{')
		return lerr(l, "expected '{' at \"%.20s\"", s);
	s++;
	if (take_type(l, &s, e) < 0 ||
	    take_ul(l, &s, "Ports:", 0xFE, &e->nports) < 0 ||
	    take_hex(l, &s, "SystemGUID:", UINT64_MAX, &e->sys_guid) < 0 ||
	    take_hex(l, &s, "NodeGUID:", UINT64_MAX, &e->node_guid) < 0 ||
	    take_hex(l, &s, "PortGUID:", UINT64_MAX, &e->port_guid) < 0 ||
	    take_ul(l, &s, "VenID:", 0xFFFFFFFF, &e->vendor) < 0 ||
	    take_ul(l, &s, "DevID:", 0xFFFFFFFF, &e->device) < 0 ||
	    take_ul(l, &s, "Rev:", 0xFFFFFFFF, &e->rev) < 0 ||
	    take_desc(l, &s, e) < 0 ||
	    take_ul(l, &s, "LID:", 0xFFFF, &e->lid) < 0 ||
	    take_ul(l, &s, "PN:", 0xFE, &e->port) < 0)
		return -1;
	s = skip_ws(s);
	if (*s != '}')
		return lerr(l, "expected '}' after PN:");
	if (!e->node_guid)
		return lerr(l, "NodeGUID 0");
	if (e->port < 1 || e->port > e->nports)
		return lerr(l, "PN:%lx: node 0x%016" PRIx64 " has ports 1 to %lu",
			    e->port, e->node_guid, e->nports);
	*sp = s + 1;
	return 0;
}

struct word_val { const char *word; uint8_t val; };

/* "KEY=WORD" at *sp, WORD one of words[] ("??": 0). */
static int take_word(struct lst *l, char **sp, const char *key,
		     const struct word_val *words, size_t n, uint8_t *v)
{
	char *s = skip_ws(*sp);
	size_t kl = strlen(key);

	if (strncmp(s, key, kl) != 0)
		return lerr(l, "expected %s at \"%.20s\"", key, s);
	s += kl;
	size_t wl = strcspn(s, " \t\r\n");
	for (size_t i = 0; i < n; i++)
		if (wl == strlen(words[i].word) && !strncmp(s, words[i].word, wl)) {
			*v = words[i].val;
			*sp = s + wl;
			return 0;
		}
	return lerr(l, "%s: unknown value \"%.*s\"", key, (int)wl, s);
}

struct lst_link {
	uint8_t width, state, speed;
};

static int parse_trailer(struct lst *l, char *s, struct lst_link *k)
{
	static const struct word_val widths[] = {
		{ "1x", TOPO_WIDTH_1X }, { "2x", TOPO_WIDTH_2X },
		{ "4x", TOPO_WIDTH_4X }, { "8x", TOPO_WIDTH_8X },
		{ "12x", TOPO_WIDTH_12X }, { "??", 0 },
	};
	static const struct word_val states[] = {
		{ "ACT", PORT_ACTIVE }, { "ARM", PORT_ARMED },
		{ "INI", PORT_INIT }, { "DWN", PORT_DOWN },
	};
	/* Gb/s per lane as OpenSM prints them; FDR10 taken as QDR's. */
	static const struct word_val speeds[] = {
		{ "2.5", TOPO_SPEED_SDR }, { "5", TOPO_SPEED_DDR },
		{ "10", TOPO_SPEED_QDR }, { "FDR10", TOPO_SPEED_QDR },
		{ "14", TOPO_SPEED_FDR }, { "25", TOPO_SPEED_EDR },
		{ "50", TOPO_SPEED_HDR }, { "??", 0 },
	};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
	if (take_word(l, &s, "PHY=", widths, N_OF(widths), &k->width) < 0 ||
	    take_word(l, &s, "LOG=", states, N_OF(states), &k->state) < 0 ||
	    take_word(l, &s, "SPD=", speeds, N_OF(speeds), &k->speed) < 0)
		return -1;
#undef N_OF
	s = skip_ws(s);
	if (*s && *s != '\r')
		return lerr(l, "unexpected \"%.20s\" at the end of the line", s);
	return 0;
}

static void init_ports(struct fabric *f, uint32_t ni, const struct lst_end *e)
{
	struct fab_node *n = &f->nodes[ni];

	n->sys_guid = e->sys_guid;
	n->vendor_id = (uint32_t)e->vendor;
	n->device_id = (uint16_t)e->device;
	n->revision = (uint32_t)e->rev;
	memcpy(n->desc, e->desc, sizeof(n->desc));
	for (unsigned i = e->type == FAB_SWITCH ? 0 : 1; i <= e->nports; i++) {
		struct fab_port *p = fabric_portp(f, ni, i);
		p->flags = FPORT_PRESENT;
		p->state = PORT_DOWN;
		p->phys_state = OSM_PHYS_POLLING;
	}
	if (e->type == FAB_SWITCH) {
		struct fab_port *p0 = fabric_portp(f, ni, 0);
		p0->state = PORT_ACTIVE;
		p0->phys_state = PHYS_LINKUP;
		for (unsigned i = 0; i <= e->nports; i++)
			fabric_portp(f, ni, i)->guid = e->port_guid;
		p0->lid = p0->hw_lid = (uint32_t)e->lid;
	}
}

/* The node of an end, added the first time; checked against it later. */
static uint32_t end_node(struct lst *l, struct fabric *f, const struct lst_end *e)
{
	uint32_t ni = fabric_find_node(f, e->node_guid);

	if (ni == FAB_NONE) {
		ni = fabric_add_node(f, e->type, (uint8_t)e->nports, e->node_guid);
		if (ni == FAB_NONE) {
			lerr(l, "out of memory");
			return FAB_NONE;
		}
		init_ports(f, ni, e);
	} else if (f->nodes[ni].type != e->type || f->nodes[ni].nports != e->nports) {
		lerr(l, "node 0x%016" PRIx64 " is given another type or port "
		     "count than on an earlier line", e->node_guid);
		return FAB_NONE;
	}
	if (e->sm && l->sm_node == FAB_NONE) {
		l->sm_node = ni;
		l->sm_port = e->type == FAB_SWITCH ? 0 : (uint8_t)e->port;
	}
	struct fab_port *p = fabric_portp(f, ni, (unsigned)e->port);
	if (e->type != FAB_SWITCH) {
		if (p->guid && p->guid != e->port_guid) {
			lerr(l, "port 0x%016" PRIx64 "[%lu] is given two PortGUIDs",
			     e->node_guid, e->port);
			return FAB_NONE;
		}
		p->guid = e->port_guid;
		p->lid = p->hw_lid = (uint32_t)e->lid;
	}
	return ni;
}

static int cable(struct lst *l, struct fabric *f, const struct lst_end *e,
		 uint32_t pa, uint32_t pb, const struct lst_link *k)
{
	struct fab_port *a = &f->ports[pa];

	if (pa == pb)
		return lerr(l, "port 0x%016" PRIx64 "[%lu] cabled to itself",
			    e->node_guid, e->port);
	if (a->remote != FAB_NONE && a->remote != pb) {
		const struct fab_port *r = &f->ports[a->remote];
		return lerr(l, "port 0x%016" PRIx64 "[%lu] is cabled to "
			    "0x%016" PRIx64 "[%u] on an earlier line",
			    e->node_guid, e->port, f->nodes[r->node].guid, r->num);
	}
	a->state = k->state;
	a->phys_state = PHYS_LINKUP;
	a->width_active = k->width;
	a->speed_active = k->speed;
	return 0;
}

static int parse_line(struct lst *l, struct fabric *f, char *s)
{
	struct lst_end e[2];
	struct lst_link k;
	uint32_t ni[2], pi[2];

	if (parse_end(l, &s, &e[0]) < 0 || parse_end(l, &s, &e[1]) < 0 ||
	    parse_trailer(l, s, &k) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		if ((ni[i] = end_node(l, f, &e[i])) == FAB_NONE)
			return -1;
		pi[i] = fabric_port(f, ni[i], (unsigned)e[i].port);
	}
	if (cable(l, f, &e[0], pi[0], pi[1], &k) < 0 ||
	    cable(l, f, &e[1], pi[1], pi[0], &k) < 0)
		return -1;
	fabric_link(f, pi[0], pi[1]);
	return 0;
}

int osmlst_detect(const char *text)
{
	while (*text && isspace((unsigned char)*text))
		text++;
	return *text == '{';
}

int osmlst_parse_string(struct fabric *f, const char *text, const char *name,
			char *err, size_t errlen)
{
	struct lst l = { name ? name : "<opensm-subnet.lst>", err, errlen, 0,
			 FAB_NONE, 0 };
	struct fabric nf;
	char *buf = strdup(text), *s, *nl;
	unsigned lines = 0;
	int rc = 0;

	if (errlen)
		err[0] = '\0';
	if (!buf)
		return lerr(&l, "out of memory");
	fabric_init(&nf);
	for (s = buf; rc == 0 && s && *s; s = nl) {
		nl = strchr(s, '\n');
		if (nl)
			*nl++ = '\0';
		l.line++;
		if (*skip_ws(s) == '\0' || *skip_ws(s) == '\r')
			continue;
		rc = parse_line(&l, &nf, s);
		lines++;
	}
	if (rc == 0 && lines == 0) {
		l.line = 1;
		rc = lerr(&l, "no cabled port: not an OpenSM topology dump");
	}
	free(buf);
	if (rc < 0) {
		fabric_free(&nf);
		return -1;
	}
	nf.sm_node = l.sm_node != FAB_NONE ? l.sm_node : 0;
	nf.sm_port = l.sm_node != FAB_NONE ? l.sm_port :
		     nf.nodes[0].type == FAB_SWITCH ? 0 : 1;
	fabric_free(f);
	*f = nf;
	return 0;
}
