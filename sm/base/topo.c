/*
 * Topology-file parser (ibsim net files and ibnetdiscover output); see
 * topo.h for the accepted language.  Pass 1 reads lines into records and
 * port lines, pass 2 builds the fabric and checks the links, so a link may
 * name a node defined further down.
 */
#include "sm/base/topo.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOPO_LFT_CAP     0xc000
#define TOPO_MFT_CAP     1024
#define TOPO_MTU_4096    5
#define TOPO_VLCAP_8     4
#define TOPO_PHYS_POLLING 2

/* Internal speed masks: one bit per generation (ibsim s= uses bits 0-2). */
#define SPD_SDR 0x01
#define SPD_DDR 0x02
#define SPD_QDR 0x04
#define SPD_FDR 0x08
#define SPD_EDR 0x10
#define SPD_HDR 0x20
#define SPD_NDR 0x40

enum { GT_SW, GT_CA, GT_RT, GT_N };

struct trec {			/* a node record */
	const char *id;
	char desc[FAB_DESC_LEN + 1];
	unsigned line;
	uint8_t type;
	uint8_t nports;
	uint8_t enhanced;
	uint8_t lmc;
	uint8_t def_width, def_speed;
	uint32_t lid;
	uint64_t guid, sys_guid, port_guid;	/* port_guid: switches, 0 = guid */
	uint32_t vendor_id;
	uint16_t device_id;
	uint32_t node;
};

struct tport {			/* a port line */
	uint32_t rec;
	const char *rid;
	unsigned line;
	uint8_t num, rnum;
	uint8_t width, speed;	/* enabled masks */
	uint8_t vl_cap;		/* 0: default */
	uint8_t lmc;
	uint8_t has_lid;
	uint32_t lid;
	uint64_t guid;		/* 0: default */
};

struct parser {
	const char *name;
	char *err;
	size_t errlen;
	unsigned line;
	struct trec *recs;
	uint32_t n_recs, cap_recs;
	struct tport *tps;
	uint32_t n_tps, cap_tps;
	uint32_t *slots;	/* id hash -> record index + 1, 0 empty */
	uint32_t n_slots;
	struct guid_map guids;	/* node GUID -> record index */
	int cur;		/* record taking port lines, -1 none */
	int guid_set[GT_N], guid_fresh[GT_N];
	uint64_t guid_abs[GT_N], guid_next[GT_N];
	int have_sysguid, have_swport;
	uint64_t sysguid, swport;
	uint32_t vendor_id;
	uint16_t device_id;
	uint8_t def_width, def_speed;
	uint8_t max_lmc;
	uint64_t from_node, from_port;
};

static int perr(struct parser *p, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int perr(struct parser *p, unsigned line, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (!p->errlen)
		return -1;
	if (line)
		n = snprintf(p->err, p->errlen, "%s:%u: ", p->name, line);
	else
		n = snprintf(p->err, p->errlen, "%s: ", p->name);
	if (n < 0 || (size_t)n >= p->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - n, fmt, ap);
	va_end(ap);
	return -1;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* ---- id -> record table ---- */

static int slots_grow(struct parser *p)
{
	uint32_t n = p->n_slots ? p->n_slots * 2 : 256;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -1;
	for (uint32_t r = 0; r < p->n_recs; r++) {
		uint32_t i = (uint32_t)hash_str(p->recs[r].id) & (n - 1);
		while (s[i])
			i = (i + 1) & (n - 1);
		s[i] = r + 1;
	}
	free(p->slots);
	p->slots = s;
	p->n_slots = n;
	return 0;
}

static uint32_t rec_find(const struct parser *p, const char *id)
{
	if (!p->n_slots)
		return FAB_NONE;
	uint32_t mask = p->n_slots - 1;
	for (uint32_t i = (uint32_t)hash_str(id) & mask; p->slots[i];
	     i = (i + 1) & mask)
		if (!strcmp(p->recs[p->slots[i] - 1].id, id))
			return p->slots[i] - 1;
	return FAB_NONE;
}

/* Appends a record; the caller has checked that the id is new. */
static struct trec *rec_add(struct parser *p)
{
	if (p->n_recs == p->cap_recs) {
		uint32_t c = p->cap_recs ? p->cap_recs * 2 : 64;
		struct trec *r = realloc(p->recs, c * sizeof(*r));
		if (!r)
			return NULL;
		p->recs = r;
		p->cap_recs = c;
	}
	if ((p->n_recs + 1) * 2 > p->n_slots && slots_grow(p) < 0)
		return NULL;
	struct trec *r = &p->recs[p->n_recs];
	memset(r, 0, sizeof(*r));
	return r;
}

static void rec_index(struct parser *p, uint32_t r)
{
	uint32_t mask = p->n_slots - 1;
	uint32_t i = (uint32_t)hash_str(p->recs[r].id) & mask;

	while (p->slots[i])
		i = (i + 1) & mask;
	p->slots[i] = r + 1;
}

static struct tport *tport_add(struct parser *p)
{
	if (p->n_tps == p->cap_tps) {
		uint32_t c = p->cap_tps ? p->cap_tps * 2 : 256;
		struct tport *t = realloc(p->tps, c * sizeof(*t));
		if (!t)
			return NULL;
		p->tps = t;
		p->cap_tps = c;
	}
	struct tport *t = &p->tps[p->n_tps++];
	memset(t, 0, sizeof(*t));
	return t;
}

/* ---- lexical helpers ---- */

static char *skip_ws(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Reads a "quoted" string at s (after blanks); NUL-terminates it in place. */
static char *take_quoted(char **sp)
{
	char *s = skip_ws(*sp), *e;

	if (*s != '"' || !(e = strchr(s + 1, '"')))
		return NULL;
	*e = '\0';
	*sp = e + 1;
	return s + 1;
}

static int take_uint(char **sp, int base, unsigned long *v)
{
	char *s = skip_ws(*sp), *e;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoul(s, &e, base);
	if (errno)
		return -1;
	*sp = e;
	return 0;
}

static int take_u64(char **sp, int base, uint64_t *v)
{
	char *s = skip_ws(*sp), *e;

	if (!isxdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &e, base);
	if (errno || e == s)
		return -1;
	*sp = e;
	return 0;
}

/* "(hex)" at s, as ibnetdiscover prints port GUIDs; 1 if taken. */
static int take_paren_guid(char **sp, uint64_t *g)
{
	char *s = skip_ws(*sp);

	if (*s != '(')
		return 0;
	s++;
	if (take_u64(&s, 16, g) < 0 || *s != ')')
		return -1;
	*sp = s + 1;
	return 1;
}

/* "[ext N]" of ibnetdiscover -g, ignored. */
static void skip_ext(char **sp)
{
	char *s = skip_ws(*sp), *e;

	if (!strncmp(s, "[ext", 4) && (e = strchr(s, ']')))
		*sp = e + 1;
}

/* "[N]" at s. */
static int take_portnum(char **sp, unsigned long *n)
{
	char *s = skip_ws(*sp);

	if (*s != '[')
		return -1;
	s++;
	if (take_uint(&s, 10, n) < 0 || *s != ']')
		return -1;
	*sp = s + 1;
	return 0;
}

static void copy_desc(char *dst, const char *src, size_t n)
{
	size_t i;

	for (i = 0; i < FAB_DESC_LEN && i < n && src[i]; i++)
		dst[i] = src[i];
	dst[i] = '\0';
}

/* Next blank-separated token of *sp, NUL-terminated in place, or NULL. */
static char *next_token(char **sp)
{
	char *s = skip_ws(*sp), *e;

	if (!*s)
		return NULL;
	for (e = s; *e && *e != ' ' && *e != '\t'; e++)
		;
	if (*e)
		*e++ = '\0';
	*sp = e;
	return s;
}

/* ---- width and speed ---- */

static uint8_t width_bit(unsigned long w)
{
	switch (w) {
	case 1:
		return TOPO_WIDTH_1X;
	case 2:
		return TOPO_WIDTH_2X;
	case 4:
		return TOPO_WIDTH_4X;
	case 8:
		return TOPO_WIDTH_8X;
	case 12:
		return TOPO_WIDTH_12X;
	}
	return 0;
}

static const struct {
	const char *name;
	uint8_t mask;
	uint8_t active;
} speeds[] = {
	{ "SDR", SPD_SDR, TOPO_SPEED_SDR },
	{ "DDR", SPD_DDR, TOPO_SPEED_DDR },
	{ "QDR", SPD_QDR, TOPO_SPEED_QDR },
	{ "FDR10", SPD_QDR, TOPO_SPEED_QDR },
	{ "FDR", SPD_FDR, TOPO_SPEED_FDR },
	{ "EDR", SPD_EDR, TOPO_SPEED_EDR },
	{ "HDR", SPD_HDR, TOPO_SPEED_HDR },
	{ "NDR", SPD_NDR, TOPO_SPEED_NDR },
};

/* "4xQDR": 1 and the masks when tok is such a hint, else 0. */
static int parse_hint(const char *tok, uint8_t *w, uint8_t *s)
{
	char *e;
	unsigned long n;

	if (!isdigit((unsigned char)*tok))
		return 0;
	n = strtoul(tok, &e, 10);
	if (*e != 'x' && *e != 'X')
		return 0;
	for (size_t i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
		if (!strcmp(e + 1, speeds[i].name) && width_bit(n)) {
			*w = width_bit(n);
			*s = speeds[i].mask;
			return 1;
		}
	return 0;
}

static uint8_t width_active(uint8_t mask)
{
	static const uint8_t order[] = { TOPO_WIDTH_12X, TOPO_WIDTH_8X,
		TOPO_WIDTH_4X, TOPO_WIDTH_2X, TOPO_WIDTH_1X };

	for (size_t i = 0; i < sizeof(order); i++)
		if (mask & order[i])
			return order[i];
	return 0;
}

static uint8_t speed_active(uint8_t mask)
{
	uint8_t best = 0;

	for (size_t i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
		if ((mask & speeds[i].mask) && strcmp(speeds[i].name, "FDR10"))
			best = speeds[i].active;
	return best;
}

const char *topo_speed_str(unsigned speed)
{
	for (size_t i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
		if (speeds[i].active == speed && strcmp(speeds[i].name, "FDR10"))
			return speeds[i].name;
	return "?";
}

const char *topo_width_str(unsigned width)
{
	switch (width) {
	case TOPO_WIDTH_1X:
		return "1x";
	case TOPO_WIDTH_2X:
		return "2x";
	case TOPO_WIDTH_4X:
		return "4x";
	case TOPO_WIDTH_8X:
		return "8x";
	case TOPO_WIDTH_12X:
		return "12x";
	}
	return "?";
}

/*
 * Port options and hints on a port line (anywhere, comment included):
 * w=MASK s=MASK v=VLCAP and "4xQDR".  A hint wins over w=/s=.
 */
struct popts {
	uint8_t w, s, hw, hs, v;
};

static int parse_popt(struct parser *p, const char *tok, struct popts *o)
{
	char *e;
	unsigned long v;

	if (parse_hint(tok, &o->hw, &o->hs))
		return 0;
	if ((tok[0] != 'w' && tok[0] != 's' && tok[0] != 'v') || tok[1] != '=')
		return 0;
	errno = 0;
	v = strtoul(tok + 2, &e, 0);
	if (errno || *e || e == tok + 2)
		return perr(p, p->line, "bad port option '%s'", tok);
	if (tok[0] == 'w') {
		if (v < 1 || v > 31)
			return perr(p, p->line, "bad link width mask %lu", v);
		o->w = (uint8_t)v;
	} else if (tok[0] == 's') {
		if (v < 1 || v > 0x7f)
			return perr(p, p->line, "bad link speed mask %lu", v);
		o->s = (uint8_t)v;
	} else {
		if (v < 1 || v > 15)
			return perr(p, p->line, "bad VL capability %lu", v);
		o->v = (uint8_t)v;
	}
	return 0;
}

/* ---- line parsers ---- */

static int guid_type(const char *word)
{
	if (!strcmp(word, "switchguid"))
		return GT_SW;
	if (!strcmp(word, "caguid") || !strcmp(word, "hcaguids") ||
	    !strcmp(word, "hcaguid"))
		return GT_CA;
	if (!strcmp(word, "rtguid"))
		return GT_RT;
	return -1;
}

/* switchguid=0x...(portguid) / caguid+0x10 */
static int parse_guid_line(struct parser *p, char *s, int gt)
{
	uint64_t v, pg;
	int rel;

	s = skip_ws(s);
	if (*s != '=' && *s != '+')
		return perr(p, p->line, "missing '=' in GUID line");
	rel = *s == '+';
	s++;
	if (take_u64(&s, 0, &v) < 0)
		return perr(p, p->line, "bad GUID value");
	if (rel) {
		p->guid_next[gt] = p->guid_abs[gt] + v;
	} else {
		p->guid_abs[gt] = v;
		p->guid_next[gt] = v;
	}
	p->guid_set[gt] = 1;
	p->guid_fresh[gt] = 1;
	int r = take_paren_guid(&s, &pg);
	if (r < 0)
		return perr(p, p->line, "bad port GUID in parentheses");
	if (r > 0 && gt == GT_SW) {
		p->swport = pg;
		p->have_swport = 1;
	}
	return 0;
}

static int parse_value_line(struct parser *p, char *s, const char *word)
{
	uint64_t v;

	s = skip_ws(s);
	if (*s != '=')
		return perr(p, p->line, "missing '=' after %s", word);
	s++;
	if (take_u64(&s, 0, &v) < 0)
		return perr(p, p->line, "bad value for %s", word);
	if (!strcmp(word, "sysimgguid")) {
		p->sysguid = v;
		p->have_sysguid = 1;
	} else if (!strcmp(word, "vendid")) {
		if (v > 0xffffff)
			return perr(p, p->line, "vendid out of range");
		p->vendor_id = (uint32_t)v;
	} else if (!strcmp(word, "devid")) {
		if (v > 0xffff)
			return perr(p, p->line, "devid out of range");
		p->device_id = (uint16_t)v;
	} else if (!strcmp(word, "width")) {
		if (v < 1 || v > 31)
			return perr(p, p->line, "bad link width mask");
		p->def_width = (uint8_t)v;
	} else if (!strcmp(word, "speed")) {
		if (v < 1 || v > 0x7f)
			return perr(p, p->line, "bad link speed mask");
		p->def_speed = (uint8_t)v;
	}
	return 0;
}

/* An ibnetdiscover id "S-0002c90000000001": its GUID, else 0. */
static uint64_t id_guid(const char *id)
{
	uint64_t g = 0;

	if (!strchr("SHR", id[0]) || id[1] != '-' || strlen(id) != 18)
		return 0;
	for (int i = 2; i < 18; i++) {
		if (!isxdigit((unsigned char)id[i]))
			return 0;
		g = g << 4 | (uint64_t)(isdigit((unsigned char)id[i]) ?
		    id[i] - '0' : (tolower((unsigned char)id[i]) - 'a' + 10));
	}
	return g;
}

/*
 * A guid line right before the record, else the GUID in an ibnetdiscover
 * id, else ibsim's sequence from an earlier guid line, else a hash.
 */
static uint64_t assign_guid(struct parser *p, int gt, const struct trec *r)
{
	uint64_t g = id_guid(r->id);
	int fresh = p->guid_fresh[gt];

	p->guid_fresh[gt] = 0;
	if (p->guid_set[gt] && (fresh || !g)) {
		g = p->guid_next[gt];
		p->guid_next[gt] += r->type == FAB_SWITCH ? 1 : r->nports + 1u;
		return g;
	}
	if (g)
		return g;
	/* Low byte 0 leaves room for CA port GUIDs guid + N. */
	g = (hash_str(r->id) & 0x00ffffffffffffULL) << 8;
	return g ? g : 0x100;
}

static int is_desc_keyword(const char *s)
{
	return !strncmp(s, "lid ", 4) || !strncmp(s, "lmc ", 4) ||
	       !strncmp(s, "base port", 9) || !strncmp(s, "enhanced port", 13);
}

/*
 * Header comment: "# "desc" base port 0 lid 4 lmc 0", or an unquoted
 * description ended by one of those keywords.  Returns the text after it.
 */
static char *parse_header_desc(struct trec *r, char *c)
{
	char *q, *e = NULL;
	static const char *const stops[] = { " enhanced port ", " base port ",
		" lid ", " lmc " };

	c = skip_ws(c);
	if (*c == '"' && (q = strchr(c + 1, '"'))) {
		copy_desc(r->desc, c + 1, (size_t)(q - c - 1));
		return q + 1;
	}
	if (!*c || is_desc_keyword(c))
		return c;
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++) {
		char *x = strstr(c, stops[i]);
		if (x && (!e || x < e))
			e = x;
	}
	if (!e)
		e = c + strlen(c);
	q = e;
	while (q > c && (q[-1] == ' ' || q[-1] == '\t'))
		q--;
	copy_desc(r->desc, c, (size_t)(q - c));
	return e;
}

static int parse_header_tail(struct parser *p, struct trec *r, char *s)
{
	char *tok;
	unsigned long v;

	while ((tok = next_token(&s))) {
		if (!strcmp(tok, "enhanced")) {
			r->enhanced = 1;
		} else if (!strcmp(tok, "lid") || !strcmp(tok, "lmc")) {
			int is_lid = tok[1] == 'i';
			if (take_uint(&s, 0, &v) < 0 ||
			    (is_lid && v > 0xffff) || (!is_lid && v > 7))
				return perr(p, p->line, "bad %s value", tok);
			if (is_lid)
				r->lid = (uint32_t)v;
			else
				r->lmc = (uint8_t)v;
		}
	}
	return 0;
}

static int parse_header(struct parser *p, char *s, uint8_t type, int gt)
{
	unsigned long np;
	char *id, *c;
	uint32_t other;
	struct trec *r;

	if (take_uint(&s, 10, &np) < 0 || np < 1 || np > 255)
		return perr(p, p->line, "bad port count (1-255)");
	if (!(id = take_quoted(&s)) || !*id)
		return perr(p, p->line, "missing \"node id\" in node header");
	if ((other = rec_find(p, id)) != FAB_NONE)
		return perr(p, p->line, "duplicate node \"%s\" (first at line %u)",
			    id, p->recs[other].line);
	if (!(r = rec_add(p)))
		return perr(p, p->line, "out of memory");
	r->id = id;
	r->line = p->line;
	r->type = type;
	r->nports = (uint8_t)np;
	r->def_width = p->def_width;
	r->def_speed = p->def_speed;
	r->vendor_id = p->vendor_id;
	r->device_id = p->device_id;
	if ((c = strchr(s, '#'))) {
		c = parse_header_desc(r, c + 1);
		if (type == FAB_SWITCH && parse_header_tail(p, r, c) < 0)
			return -1;
	}
	if (!r->desc[0])
		copy_desc(r->desc, id, strlen(id));
	r->guid = assign_guid(p, gt, r);
	if (!r->guid)
		return perr(p, p->line, "node \"%s\" has GUID 0", id);
	r->sys_guid = p->have_sysguid ? p->sysguid : r->guid;
	if (type == FAB_SWITCH && p->have_swport)
		r->port_guid = p->swport;
	p->have_sysguid = p->have_swport = 0;
	if ((other = guid_map_get(&p->guids, r->guid)) != FAB_NONE)
		return perr(p, p->line, "node \"%s\" has GUID 0x%016" PRIx64
			    ", like \"%s\" (line %u)", id, r->guid,
			    p->recs[other].id, p->recs[other].line);
	if (guid_map_put(&p->guids, r->guid, p->n_recs) < 0)
		return perr(p, p->line, "out of memory");
	if (r->lmc > p->max_lmc)
		p->max_lmc = r->lmc;
	rec_index(p, p->n_recs);
	p->cur = (int)p->n_recs++;
	return 0;
}

/*
 * Comment of a port line.  Before the first quoted string: this port's
 * "lid N lmc M" (CA lines of ibnetdiscover); the quoted string is the
 * peer's description; after it the peer's LID (ignored).  Options and
 * hints count anywhere.
 */
static int parse_port_comment(struct parser *p, struct tport *t, char *c,
			      struct popts *o)
{
	char *tok, *q;
	unsigned long v;
	int local = 1;

	for (;;) {
		c = skip_ws(c);
		if (*c == '"') {
			if (!(q = strchr(c + 1, '"')))
				break;
			c = q + 1;
			local = 0;
			continue;
		}
		if (!(tok = next_token(&c)))
			break;
		if (!strcmp(tok, "lid") || !strcmp(tok, "lmc")) {
			int is_lid = tok[1] == 'i';
			if (take_uint(&c, 0, &v) < 0)
				return perr(p, p->line, "bad %s value", tok);
			if (!local)
				continue;
			if ((is_lid && v > 0xffff) || (!is_lid && v > 7))
				return perr(p, p->line, "bad %s value", tok);
			if (is_lid) {
				t->lid = (uint32_t)v;
				t->has_lid = 1;
			} else {
				t->lmc = (uint8_t)v;
			}
		} else if (parse_popt(p, tok, o) < 0) {
			return -1;
		}
	}
	return 0;
}

/* [1](portguid)  "peer-id"[3](peer portguid)  w=12   # comment */
static int parse_port(struct parser *p, char *s)
{
	struct trec *r = &p->recs[p->cur];
	struct popts o = { 0, 0, 0, 0, 0 };
	unsigned long num, rnum = 1;
	uint64_t pg = 0, rg;
	struct tport *t;
	char *rid, *c, *tok;
	int g;

	if (take_portnum(&s, &num) < 0)
		return perr(p, p->line, "bad port line");
	if (num == 0 || num > r->nports)
		return perr(p, p->line, "port %lu out of range: \"%s\" has "
			    "ports 1-%u", num, r->id, r->nports);
	skip_ext(&s);
	if ((g = take_paren_guid(&s, &pg)) < 0)
		return perr(p, p->line, "bad port GUID in parentheses");
	if (!(rid = take_quoted(&s)) || !*rid)
		return perr(p, p->line, "missing \"peer id\" in port line");
	c = skip_ws(s);
	if (*c == '[' && strncmp(c, "[ext", 4) && take_portnum(&s, &rnum) < 0)
		return perr(p, p->line, "bad peer port number");
	if (rnum == 0 || rnum > 255)
		return perr(p, p->line, "peer port %lu out of range", rnum);
	skip_ext(&s);
	if (take_paren_guid(&s, &rg) < 0)
		return perr(p, p->line, "bad peer port GUID in parentheses");
	if (!(t = tport_add(p)))
		return perr(p, p->line, "out of memory");
	t->rec = (uint32_t)p->cur;
	t->rid = rid;
	t->line = p->line;
	t->num = (uint8_t)num;
	t->rnum = (uint8_t)rnum;
	if (g > 0 && r->type != FAB_SWITCH)
		t->guid = pg;
	if ((c = strchr(s, '#')))
		*c++ = '\0';
	while ((tok = next_token(&s)))
		if (parse_popt(p, tok, &o) < 0)
			return -1;
	if (c && parse_port_comment(p, t, c, &o) < 0)
		return -1;
	if (r->type == FAB_SWITCH)
		t->has_lid = 0;	/* lids on switch lines are the peer's */
	t->width = o.hw ? o.hw : o.w ? o.w : r->def_width;
	t->speed = o.hs ? o.hs : o.s ? o.s : r->def_speed;
	t->vl_cap = o.v;
	if (t->lmc > p->max_lmc)
		p->max_lmc = t->lmc;
	return 0;
}

static void parse_comment(struct parser *p, const char *s)
{
	uint64_t n, pt;

	if (sscanf(s, "# Initiated from node %" SCNx64 " port %" SCNx64,
		   &n, &pt) == 2) {
		p->from_node = n;
		p->from_port = pt;
	}
}

static int parse_line(struct parser *p, char *s)
{
	char word[24];
	size_t n = 0;
	int gt;

	s = skip_ws(s);
	if (!*s) {
		p->cur = -1;
		return 0;
	}
	if (*s == '#') {
		parse_comment(p, s);
		return 0;
	}
	if (*s == '[') {
		if (p->cur < 0)
			return perr(p, p->line, "port line outside a node record");
		return parse_port(p, s);
	}
	if (*s == '@')
		return perr(p, p->line, "port aliases are not supported");
	p->cur = -1;
	while ((isalpha((unsigned char)s[n]) || s[n] == '_') &&
	       n < sizeof(word) - 1) {
		word[n] = s[n];
		n++;
	}
	word[n] = '\0';
	s += n;
	if (!strcmp(word, "Switch"))
		return parse_header(p, s, FAB_SWITCH, GT_SW);
	if (!strcmp(word, "Ca") || !strcmp(word, "Hca"))
		return parse_header(p, s, FAB_CA, GT_CA);
	if (!strcmp(word, "Rt") || !strcmp(word, "Router"))
		return parse_header(p, s, FAB_ROUTER, GT_RT);
	if ((gt = guid_type(word)) >= 0)
		return parse_guid_line(p, s, gt);
	if (!strcmp(word, "sysimgguid") || !strcmp(word, "vendid") ||
	    !strcmp(word, "devid") || !strcmp(word, "width") ||
	    !strcmp(word, "speed"))
		return parse_value_line(p, s, word);
	if (!strcmp(word, "include"))
		return perr(p, p->line, "'include' is not supported");
	return 0;		/* other ibsim directives (do, module, ...) */
}

static int parse_text(struct parser *p, char *buf)
{
	char *s = buf, *e;

	for (p->line = 1; s; p->line++, s = e) {
		if ((e = strchr(s, '\n')))
			*e++ = '\0';
		size_t n = strlen(s);
		if (n && s[n - 1] == '\r')
			s[n - 1] = '\0';
		if (parse_line(p, s) < 0)
			return -1;
		if (!e || !*e)
			break;
	}
	if (!p->n_recs)
		return perr(p, 0, "no node records");
	return 0;
}

/* ---- pass 2: build ---- */

static void init_port(struct fab_port *fp, const struct trec *r)
{
	fp->flags = FPORT_PRESENT;
	fp->state = PORT_DOWN;
	fp->phys_state = TOPO_PHYS_POLLING;
	fp->width_active = width_active(r->def_width);
	fp->speed_active = speed_active(r->def_speed);
	fp->mtu_cap = TOPO_MTU_4096;
	fp->vl_cap = TOPO_VLCAP_8;
}

static int build_node(struct parser *p, struct fabric *f, struct trec *r)
{
	uint32_t ni = fabric_add_node(f, r->type, r->nports, r->guid);

	if (ni == FAB_NONE)
		return perr(p, r->line, "out of memory");
	r->node = ni;
	struct fab_node *n = &f->nodes[ni];
	n->sys_guid = r->sys_guid;
	n->vendor_id = r->vendor_id;
	n->device_id = r->device_id;
	memcpy(n->desc, r->desc, sizeof(n->desc));
	for (unsigned i = r->type == FAB_SWITCH ? 0 : 1; i <= r->nports; i++) {
		struct fab_port *fp = fabric_portp(f, ni, i);
		init_port(fp, r);
		if (r->type == FAB_SWITCH)
			fp->guid = r->port_guid ? r->port_guid : r->guid;
		else
			fp->guid = r->guid + i;
	}
	if (r->type == FAB_SWITCH) {
		struct fab_port *p0 = fabric_portp(f, ni, 0);
		n->lft_cap = TOPO_LFT_CAP;
		n->mft_cap = TOPO_MFT_CAP;
		n->enhanced_port0 = r->enhanced;
		p0->state = PORT_ACTIVE;
		p0->phys_state = PHYS_LINKUP;
		p0->lid = p0->hw_lid = r->lid;
		p0->lmc = r->lmc;
	}
	return 0;
}

struct claims {
	uint32_t *peer;		/* port index -> port it names, FAB_NONE */
	uint32_t *tp;		/* port index -> tport naming it from there */
};

/* Records what each port line names; checks peers exist and ports once. */
static int claim_ports(struct parser *p, struct fabric *f, struct claims *c)
{
	for (uint32_t i = 0; i < p->n_tps; i++) {
		struct tport *t = &p->tps[i];
		struct trec *r = &p->recs[t->rec];
		uint32_t ro = rec_find(p, t->rid);
		if (ro == FAB_NONE)
			return perr(p, t->line, "unknown node \"%s\"", t->rid);
		struct trec *rr = &p->recs[ro];
		if (t->rnum > rr->nports)
			return perr(p, t->line, "port %u out of range: \"%s\" "
				    "has ports 1-%u", t->rnum, rr->id,
				    rr->nports);
		uint32_t pa = fabric_port(f, r->node, t->num);
		uint32_t pb = fabric_port(f, rr->node, t->rnum);
		if (pa == pb)
			return perr(p, t->line, "port %u linked to itself",
				    t->num);
		if (c->peer[pa] != FAB_NONE)
			return perr(p, t->line, "port %u of \"%s\" listed twice "
				    "(also line %u)", t->num, r->id,
				    p->tps[c->tp[pa]].line);
		c->peer[pa] = pb;
		c->tp[pa] = i;
		struct fab_port *fp = &f->ports[pa];
		if (t->guid)
			fp->guid = t->guid;
		if (t->vl_cap)
			fp->vl_cap = t->vl_cap;
		if (t->has_lid) {
			fp->lid = fp->hw_lid = t->lid;
			fp->lmc = t->lmc;
		}
	}
	return 0;
}

static const char *port_id(const struct parser *p, const struct fabric *f,
			   uint32_t pi, char *buf, size_t len)
{
	const struct fab_port *fp = &f->ports[pi];

	for (uint32_t r = 0; r < p->n_recs; r++)
		if (p->recs[r].node == fp->node) {
			snprintf(buf, len, "\"%s\"[%u]", p->recs[r].id,
				 fp->num);
			return buf;
		}
	return "?";
}

static int link_one(struct parser *p, struct fabric *f, struct claims *c,
		    uint32_t ti)
{
	struct tport *t = &p->tps[ti];
	uint32_t pa = fabric_port(f, p->recs[t->rec].node, t->num);
	uint32_t pb = c->peer[pa];
	char a[96], b[96], x[96];

	if (f->ports[pa].remote == pb)
		return 0;	/* done from the other end */
	if (c->peer[pb] != FAB_NONE && c->peer[pb] != pa)
		return perr(p, t->line, "%s -> %s, but %s -> %s at line %u",
			    port_id(p, f, pa, a, sizeof(a)),
			    port_id(p, f, pb, b, sizeof(b)), b,
			    port_id(p, f, c->peer[pb], x, sizeof(x)),
			    p->tps[c->tp[pb]].line);
	if (f->ports[pb].remote != FAB_NONE)
		return perr(p, t->line, "%s -> %s, but %s is already linked "
			    "to %s", port_id(p, f, pa, a, sizeof(a)),
			    port_id(p, f, pb, b, sizeof(b)), b,
			    port_id(p, f, f->ports[pb].remote, x, sizeof(x)));
	const struct tport *u = c->peer[pb] == pa ? &p->tps[c->tp[pb]] : t;
	uint8_t w = width_active(t->width & u->width);
	uint8_t s = speed_active(t->speed & u->speed);
	if (!w || !s)
		return perr(p, u->line, "no common link %s between %s and %s",
			    w ? "speed" : "width",
			    port_id(p, f, pa, a, sizeof(a)),
			    port_id(p, f, pb, b, sizeof(b)));
	fabric_link(f, pa, pb);
	uint32_t ends[2] = { pa, pb };
	for (int i = 0; i < 2; i++) {
		struct fab_port *fp = &f->ports[ends[i]];
		fp->state = PORT_INIT;
		fp->phys_state = PHYS_LINKUP;
		fp->width_active = w;
		fp->speed_active = s;
	}
	return 0;
}

static void set_sm_port(const struct parser *p, struct fabric *f)
{
	uint32_t ni = FAB_NONE;

	if (p->from_node)
		ni = fabric_find_node(f, p->from_node);
	if (ni == FAB_NONE)
		ni = p->recs[0].node;
	f->sm_node = ni;
	f->sm_port = f->nodes[ni].type == FAB_SWITCH ? 0 : 1;
	for (unsigned i = 1; f->nodes[ni].type != FAB_SWITCH &&
	     i <= f->nodes[ni].nports; i++)
		if (fabric_portp(f, ni, i)->guid == p->from_port)
			f->sm_port = (uint8_t)i;
}

static int build(struct parser *p, struct fabric *f)
{
	struct claims c = { NULL, NULL };
	int rc = -1;

	for (uint32_t r = 0; r < p->n_recs; r++)
		if (build_node(p, f, &p->recs[r]) < 0)
			return -1;
	c.peer = malloc((size_t)f->n_ports * sizeof(*c.peer));
	c.tp = malloc((size_t)f->n_ports * sizeof(*c.tp));
	if (!c.peer || !c.tp) {
		perr(p, 0, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < f->n_ports; i++)
		c.peer[i] = c.tp[i] = FAB_NONE;
	if (claim_ports(p, f, &c) < 0)
		goto out;
	for (uint32_t i = 0; i < p->n_tps; i++)
		if (link_one(p, f, &c, i) < 0)
			goto out;
	set_sm_port(p, f);
	f->lmc = p->max_lmc;
	rc = 0;
out:
	free(c.peer);
	free(c.tp);
	return rc;
}

int topo_parse_string(struct fabric *f, const char *text, const char *name,
		      char *err, size_t errlen)
{
	struct parser p;
	struct fabric nf;
	char *buf;
	int rc = -1;

	memset(&p, 0, sizeof(p));
	p.name = name ? name : "<topology>";
	p.err = err;
	p.errlen = errlen;
	p.cur = -1;
	p.def_width = TOPO_WIDTH_4X;
	p.def_speed = SPD_SDR;
	if (errlen)
		err[0] = '\0';
	fabric_init(&nf);
	if (!(buf = strdup(text)))
		return perr(&p, 0, "out of memory");
	if (parse_text(&p, buf) == 0 && build(&p, &nf) == 0) {
		fabric_free(f);
		*f = nf;
		rc = 0;
	} else {
		fabric_free(&nf);
	}
	free(buf);
	free(p.recs);
	free(p.tps);
	free(p.slots);
	guid_map_free(&p.guids);
	return rc;
}

int topo_load(struct fabric *f, const char *path, char *err, size_t errlen)
{
	FILE *fp = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int rc;

	if (!fp) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (cap - len < 4096) {
			size_t nc = cap ? cap * 2 : 65536;
			char *nb = realloc(buf, nc);
			if (!nb) {
				snprintf(err, errlen, "%s: out of memory", path);
				free(buf);
				fclose(fp);
				return -1;
			}
			buf = nb;
			cap = nc;
		}
		size_t n = fread(buf + len, 1, cap - len - 1, fp);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(fp)) {
		snprintf(err, errlen, "%s: read error", path);
		free(buf);
		fclose(fp);
		return -1;
	}
	fclose(fp);
	buf[len] = '\0';
	if (memchr(buf, '\0', len)) {
		snprintf(err, errlen, "%s: not a text file", path);
		free(buf);
		return -1;
	}
	rc = topo_parse_string(f, buf, path, err, errlen);
	free(buf);
	return rc;
}
