/*
 * partitions.conf -> partitions, default_partition and multicast (the
 * Default line's flags), as ibsmd.yaml(5)'s "Translating OpenSM's
 * partitions.conf" says.  OpenSM's grammar (its doc/partition-config.txt):
 *   NAME=PKEY[,FLAG...] : MEMBER[=full|limited|both], ...  ;
 * with '#' comments, MEMBER a port GUID or a keyword, and
 * "mgid=GID[,FLAG...]" groups, each ending at its line's end.  What is
 * read is kept until qos-policy.conf may have given SLs, then emitted.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sm/base/wfile.h"
#include "sm/import/osm_internal.h"

#define PARTS_MAX_BYTES (4 << 20)
#define DEFAULT_PKEY 0x7fff
#define NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
#define NAME_LEN 64	/* CFG_NAME_LEN */

struct osm_mgroup {
	char mgid[INET6_ADDRSTRLEN];
	int mtu, rate, sl, qkey;	/* 0 / -1: not given */
};

struct osm_part {
	char name[NAME_LEN];
	unsigned pkey;			/* 15 bits */
	int ipoib, sl, mtu, rate, qkey;	/* -1 / 0: not given */
	int line;
	char **members;			/* "0xGUID=full", "ALL=limited" */
	unsigned n_members;
	struct osm_mgroup *mgroups;
	unsigned n_mgroups;
};

struct osm_parts {
	struct osm_part *p;		/* p[0]: the Default line's */
	unsigned n;
	int default_seen, default_full;
	const char *path;
};

static const char *const keywords[] = { "ALL", "ALL_CAS", "ALL_SWITCHES",
	"ALL_ROUTERS", "SELF", NULL };

static char *trim(char *s)
{
	s += strspn(s, " \t\r\n");
	size_t n = strlen(s);
	while (n && strchr(" \t\r\n", s[n - 1]))
		s[--n] = '\0';
	return s;
}

static int num(const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;
	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end || *v > max ? -1 : 0;
}

static struct osm_part *part_of(struct osm_parts *ps, unsigned pkey)
{
	for (unsigned i = 0; i < ps->n; i++)
		if (ps->p[i].pkey == pkey)
			return &ps->p[i];
	return NULL;
}

static struct osm_part *part_new(struct osm_imp *m, const char *path, int line,
				 const char *name, unsigned pkey)
{
	struct osm_parts *ps = m->parts;
	struct osm_part *np = realloc(ps->p, (ps->n + 1) * sizeof(*np));
	if (!np) {
		osm_fail(m, path, 0, "out of memory");
		return NULL;
	}
	ps->p = np;
	struct osm_part *p = &np[ps->n++];
	memset(p, 0, sizeof(*p));
	p->pkey = pkey;
	p->sl = p->qkey = -1;
	p->line = line;
	/* ibsmd's names: A-Z a-z 0-9 _ . -, unique, not "default" */
	snprintf(p->name, sizeof(p->name), "%s", name);
	for (char *c = p->name; *c; c++)
		if (!strchr(NAME_CHARS, *c))
			*c = '_';
	int clash = !p->name[0] || !strcmp(p->name, "default");
	for (unsigned i = 0; !clash && i + 1 < ps->n; i++)
		clash = !strcmp(np[i].name, p->name);
	if (clash)
		snprintf(p->name, sizeof(p->name), "pkey_0x%04x", pkey);
	if (strcmp(p->name, name))
		osm_warn(m, path, line, "partition '%s' is named '%s' (ibsmd's "
			 "names are unique, of A-Z a-z 0-9 _ . -)", name, p->name);
	return p;
}

static int add_member(struct osm_imp *m, const char *path, struct osm_part *p,
		      const char *s)
{
	char **nm = realloc(p->members, (p->n_members + 1) * sizeof(*nm));
	if (!nm || !(nm[p->n_members] = strdup(s))) {
		if (nm)
			p->members = nm;
		return osm_fail(m, path, 0, "out of memory");
	}
	p->members = nm;
	p->n_members++;
	return 0;
}

/* One flag of a partition or a group: mtu=, rate=, sl=, Q_Key= */
static int group_flag(const char *k, const char *v, int *mtu, int *rate,
		      int *sl, int *qkey)
{
	unsigned long long x;
	if (!strcasecmp(k, "mtu") && !num(v, 5, &x) && x >= 1)
		*mtu = (int)x;
	else if (!strcasecmp(k, "rate") && !num(v, 24, &x) && x >= 2)
		*rate = (int)x;
	else if (!strcasecmp(k, "sl") && !num(v, 15, &x))
		*sl = (int)x;
	else if (!strcasecmp(k, "Q_Key") && !num(v, 0x7fffffff, &x))
		*qkey = (int)x;
	else
		return -1;
	return 0;
}

/* "mgid=GID" and its flags on one line: one group per scope= given */
static int add_mgroup(struct osm_imp *m, const char *path, int line,
		      struct osm_part *p, char **items, int n)
{
	struct osm_mgroup g = { .sl = -1, .qkey = -1 };
	unsigned char gid[16];
	int scopes[16], n_scopes = 0;
	char *mgid = trim(items[0]) + 5;
	if (inet_pton(AF_INET6, trim(mgid), gid) != 1 || gid[0] != 0xff)
		return osm_fail(m, path, line, "'%s' is not a multicast GID", mgid);
	for (int i = 1; i < n; i++) {
		char *eq = strchr(items[i], '=');
		if (!eq)
			return osm_fail(m, path, line, "'%s': a group's flags are "
					"NAME=VALUE", items[i]);
		*eq = '\0';
		char *k = trim(items[i]), *v = trim(eq + 1);
		unsigned long long x;
		if (!strcasecmp(k, "scope") && !num(v, 15, &x)) {
			if (n_scopes < 16)
				scopes[n_scopes++] = (int)x;
		} else if ((!strcasecmp(k, "TClass") || !strcasecmp(k, "FlowLabel")) &&
			   !num(v, 0xfffff, &x)) {
			if (x)
				osm_warn(m, path, line, "%s=%s: no counterpart in "
					 "ibsmd (0)", k, v);
		} else if (group_flag(k, v, &g.mtu, &g.rate, &g.sl, &g.qkey) < 0) {
			return osm_fail(m, path, line, "'%s=%s' is not a group flag "
					"(rate=, mtu=, sl=, Q_Key=, scope=, TClass=, "
					"FlowLabel=) with a value ibsmd takes", k, v);
		}
	}
	if (!n_scopes)
		scopes[n_scopes++] = 2;	/* OpenSM's: link-local */
	for (int s = 0; s < n_scopes; s++) {
		struct osm_mgroup *ng = realloc(p->mgroups, (p->n_mgroups + 1) * sizeof(*ng));
		if (!ng)
			return osm_fail(m, path, 0, "out of memory");
		p->mgroups = ng;
		gid[1] = (unsigned char)((gid[1] & 0xf0) | scopes[s]);
		inet_ntop(AF_INET6, gid, g.mgid, sizeof(g.mgid));
		ng[p->n_mgroups++] = g;
	}
	return 0;
}

/* A port specifier and its membership ("=full", "=limited", "=both"). */
static int add_port(struct osm_imp *m, const char *path, int line,
		    struct osm_part *p, char *item, int defmember_full)
{
	char *eq = strchr(item, '='), out[96];
	int full = defmember_full;
	const char *spec;
	if (eq) {
		*eq = '\0';
		char *mem = trim(eq + 1);
		if (!strcasecmp(mem, "full") || !strcasecmp(mem, "both"))
			full = 1;
		else if (!strcasecmp(mem, "limited"))
			full = 0;
		else {
			full = 0;
			osm_warn(m, path, line, "'%s=%s': OpenSM reads an unknown "
				 "membership as limited; imported so", trim(item), mem);
		}
	}
	spec = trim(item);
	unsigned long long guid;
	const char *kw = NULL;
	for (int k = 0; keywords[k]; k++)
		if (!strcmp(spec, keywords[k]))
			kw = keywords[k];
	for (int k = 0; !kw && *spec && keywords[k]; k++)	/* OpenSM's prefixes */
		if (!strncmp(spec, keywords[k], strlen(spec))) {
			int unique = 1;
			for (int j = 0; keywords[j]; j++)
				unique &= j == k || strncmp(spec, keywords[j], strlen(spec));
			if (unique || !strcmp(keywords[k], "ALL"))
				kw = keywords[k];
		}
	if (kw)
		snprintf(out, sizeof(out), "%s=%s", kw, full ? "full" : "limited");
	else if (!num(spec, ~0ULL, &guid) && guid)
		snprintf(out, sizeof(out), "0x%016llx=%s", guid,
			 full ? "full" : "limited");
	else
		return osm_fail(m, path, line, "'%s' is not a port GUID or one of "
				"ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF", spec);
	if (p->pkey == DEFAULT_PKEY) {
		/* default_partition.membership; SELF and switches are full anyway */
		if (kw && (!strcmp(kw, "ALL") || !strcmp(kw, "ALL_CAS"))) {
			if (full)
				m->parts->default_full = 1;
		} else if (!(kw && full && (!strcmp(kw, "SELF") ||
					    !strcmp(kw, "ALL_SWITCHES")))) {
			osm_warn(m, path, line, "Default partition member '%s': no "
				 "counterpart in ibsmd (default_partition.membership "
				 "is for all end ports)", out);
		}
		return 0;
	}
	return add_member(m, path, p, out);
}

/* rate=, mtu=, sl=, scope=, Q_Key=, TClass=, FlowLabel= */
static int is_group_flag(const char *it)
{
	static const char *const flags[] = { "rate", "mtu", "sl", "scope",
		"Q_Key", "TClass", "FlowLabel", NULL };
	size_t n = strcspn(it, " \t=");
	for (int k = 0; flags[k]; k++)
		if (n == strlen(flags[k]) && !strncasecmp(it, flags[k], n))
			return it[n + strspn(it + n, " \t")] == '=';
	return 0;
}

/* Splits s at sep into at most max items; their number, -1 when more. */
static int split(char *s, int sep, char **items, int max)
{
	int n = 0;
	char *c = s;
	for (;;) {
		if (n == max)
			return -1;
		items[n++] = c;
		c = strchr(c, sep);
		if (!c)
			return n;
		*c++ = '\0';
	}
}

#define MAX_ITEMS 4096

/* One "HEADER : BODY" statement; line is where it begins. */
static int statement(struct osm_imp *m, const char *path, int line, char *st,
		     char **items)
{
	char *colon = strchr(st, ':');
	if (!colon)
		return osm_fail(m, path, line, "expected NAME=PKEY[,FLAG...] : "
				"MEMBERS ;");
	*colon = '\0';
	char *body = colon + 1;
	int n = split(st, ',', items, MAX_ITEMS);
	if (n < 0)
		return osm_fail(m, path, line, "more than %d flags", MAX_ITEMS);
	char *first = items[0], *eq = strchr(first, '=');
	if (!eq)
		return osm_fail(m, path, line, "'%s': the P_Key is missing "
				"(OpenSM generates one; ibsmd needs it: NAME=PKEY)",
				trim(first));
	*eq = '\0';
	unsigned long long pk;
	char *name = trim(first);
	if (num(trim(eq + 1), 0xffff, &pk) || !(pk & 0x7fff))
		return osm_fail(m, path, line, "'%s' is not a P_Key", trim(eq + 1));
	unsigned pkey = (unsigned)pk & 0x7fff;
	struct osm_part *p = part_of(m->parts, pkey);
	if (!p && !(p = part_new(m, path, line, name, pkey)))
		return -1;
	if (pkey == DEFAULT_PKEY) {
		m->parts->default_seen = 1;
		if (p->ipoib < 1)
			p->ipoib = 0;	/* no ipoib flag: no broadcast group */
	}
	int defmember_full = 0;
	for (int i = 1; i < n; i++) {
		char *f = trim(items[i]), *v = strchr(f, '=');
		if (v)
			*v++ = '\0';
		if (!strcmp(f, "ipoib") && !v) {
			p->ipoib = 1;
		} else if (!strcmp(f, "indx0") && !v) {
			osm_warn(m, path, line, "indx0: no counterpart in ibsmd (the "
				 "default partition is at index 0, tenants follow)");
		} else if (!strcmp(f, "defmember") && v) {
			v = trim(v);
			defmember_full = !strcasecmp(v, "full") || !strcasecmp(v, "both");
			if (!defmember_full && strcasecmp(v, "limited"))
				return osm_fail(m, path, line, "defmember=%s: full, "
						"limited or both", v);
		} else if (v && (!strcasecmp(f, "scope") || !strcasecmp(f, "TClass") ||
				 !strcasecmp(f, "FlowLabel"))) {
			osm_warn(m, path, line, "%s=%s: no counterpart in ibsmd (the "
				 "broadcast groups are link-local, TClass and "
				 "FlowLabel 0)", f, trim(v));
		} else if (!v || group_flag(f, trim(v), &p->mtu, &p->rate, &p->sl,
					    &p->qkey) < 0) {
			return osm_fail(m, path, line, "'%s%s%s' is not a partition "
					"flag (ipoib, indx0, defmember=, mtu=, rate=, "
					"sl=, Q_Key=, scope=, TClass=, FlowLabel=) with a "
					"value ibsmd takes", f, v ? "=" : "", v ? v : "");
		}
	}
	/* the body, line by line: a group runs to its line's end */
	int bl = line;
	for (char *ln = body, *next; ln; ln = next, bl++) {
		next = strchr(ln, '\n');
		if (next)
			*next++ = '\0';
		int k = split(ln, ',', items, MAX_ITEMS);
		if (k < 0)
			return osm_fail(m, path, bl, "more than %d members on one "
					"line", MAX_ITEMS);
		int g = -1;	/* the group's first item */
		for (int i = 0; i <= k; i++) {
			char *it = i < k ? trim(items[i]) : NULL;
			int ends = !it || !is_group_flag(it);
			if (g >= 0 && ends) {
				if (add_mgroup(m, path, bl, p, items + g, i - g) < 0)
					return -1;
				g = -1;
			}
			if (!it || !*it)
				continue;
			if (!strncmp(it, "mgid=", 5))
				g = i;
			else if (g < 0 && add_port(m, path, bl, p, it, defmember_full) < 0)
				return -1;
		}
	}
	return 0;
}

int osm_import_partitions(struct osm_imp *m, const char *path)
{
	char why[512];
	FILE *f = rfile_open(path, PARTS_MAX_BYTES, why, sizeof(why));
	if (!f) {
		snprintf(m->err, m->errlen, "%s", why);
		return -1;
	}
	char *text = malloc(PARTS_MAX_BYTES + 1);
	char **items = malloc(MAX_ITEMS * sizeof(*items));
	m->parts = calloc(1, sizeof(*m->parts));
	int rc = 0;
	if (!text || !items || !m->parts) {
		rc = osm_fail(m, path, 0, "out of memory");
		goto out;
	}
	m->parts->path = path;
	size_t len = fread(text, 1, PARTS_MAX_BYTES, f);
	text[len] = '\0';
	/* comments out, keeping the newlines (line numbers, groups' ends) */
	for (char *c = text; (c = strchr(c, '#')) != NULL; )
		while (*c && *c != '\n')
			*c++ = ' ';
	if (strlen(text) != len) {
		rc = osm_fail(m, path, 0, "a NUL byte: not a partitions.conf");
		goto out;
	}
	/* the Default line's entry first (it may come later, or not at all) */
	if (!part_new(m, path, 0, "Default", DEFAULT_PKEY)) {
		rc = -1;
		goto out;
	}
	int line = 1;
	for (char *st = text, *semi; !rc && *st; st = semi + 1) {
		semi = strchr(st, ';');
		int start = line;	/* the statement's first word */
		for (char *c = st; *c && strchr(" \t\r\n", *c); c++)
			if (*c == '\n')
				start++;
		for (char *c = st; *c && (!semi || c < semi); c++)
			if (*c == '\n')
				line++;
		if (!semi) {
			if (*trim(st))
				rc = osm_fail(m, path, start, "no ';' at the end of "
					      "the partition");
			break;
		}
		*semi = '\0';
		if (*trim(st))
			rc = statement(m, path, start, st, items);
	}
out:
	if (f)
		fclose(f);
	free(text);
	free(items);
	return rc;
}

int osm_partition_set_sl(struct osm_imp *m, unsigned pkey, int sl)
{
	struct osm_part *p = m->parts ? part_of(m->parts, pkey) : NULL;
	if (!p || pkey == DEFAULT_PKEY)
		return -1;
	p->sl = sl;
	return 0;
}

static int put_num(struct osm_imp *m, int map, const char *key, long long v,
		   int hex)
{
	char s[32];
	snprintf(s, sizeof(s), hex ? "0x%llx" : "%lld", v);
	return osm_put(m, map, key, s) ? 0 : -1;
}

static int emit_mgroups(struct osm_imp *m, int map, const struct osm_part *p)
{
	if (!p->n_mgroups)
		return 0;
	int seq = osm_put_seq(m, map, "mgroups");
	for (unsigned i = 0; seq && i < p->n_mgroups; i++) {
		const struct osm_mgroup *g = &p->mgroups[i];
		int gm = yaml_document_add_mapping(&m->doc, NULL, YAML_FLOW_MAPPING_STYLE);
		if (!gm || !yaml_document_append_sequence_item(&m->doc, seq, gm) ||
		    !osm_put(m, gm, "mgid", g->mgid) ||
		    (g->mtu && put_num(m, gm, "mtu", g->mtu, 0)) ||
		    (g->rate && put_num(m, gm, "rate", g->rate, 0)) ||
		    (g->sl >= 0 && put_num(m, gm, "sl", g->sl, 0)) ||
		    (g->qkey >= 0 && put_num(m, gm, "qkey", g->qkey, 1)))
			return -1;
	}
	return seq ? 0 : -1;
}

static int emit_default(struct osm_imp *m, struct osm_part *d)
{
	int dp = osm_section(m, "default_partition");
	/* written always: OpenSM reads a file without a Default line as
	   ALL=limited, SELF=full */
	if (!dp || !osm_put(m, dp, "membership",
			    m->parts->default_full ? "full" : "limited"))
		return -1;
	if (m->parts->default_seen &&
	    !osm_put(m, dp, "ipoib", d->ipoib > 0 ? "true" : "false"))
		return -1;
	if (emit_mgroups(m, dp, d) < 0)
		return -1;
	if (d->sl >= 0 && m->qos_off) {
		osm_warn(m, m->parts->path, d->line, "Default partition: sl=%d "
			 "left out: OpenSM uses SL 0 without qos TRUE", d->sl);
		d->sl = -1;
	}
	if (d->mtu || d->rate || d->sl >= 0 || d->qkey >= 0) {
		int mc = osm_section(m, "multicast");
		if (!mc || (d->mtu && put_num(m, mc, "mtu", d->mtu, 0)) ||
		    (d->rate && put_num(m, mc, "rate", d->rate, 0)) ||
		    (d->sl >= 0 && put_num(m, mc, "sl", d->sl, 0)) ||
		    (d->qkey >= 0 && put_num(m, mc, "qkey", d->qkey, 1)))
			return -1;
	}
	return 0;
}

int osm_partitions_emit(struct osm_imp *m)
{
	struct osm_parts *ps = m->parts;
	int seq = 0, rc = emit_default(m, &ps->p[0]);
	for (unsigned i = 1; !rc && i < ps->n; i++) {
		const struct osm_part *p = &ps->p[i];
		int pm;
		if (!seq && !(seq = osm_put_seq(m, m->root, "partitions")))
			break;
		if (!(pm = yaml_document_add_mapping(&m->doc, NULL,
						     YAML_BLOCK_MAPPING_STYLE)) ||
		    !yaml_document_append_sequence_item(&m->doc, seq, pm) ||
		    !osm_put(m, pm, "name", p->name) ||
		    put_num(m, pm, "pkey", p->pkey, 1)) {
			rc = -1;
			break;
		}
		if (p->ipoib > 0 && !osm_put(m, pm, "ipoib", "true"))
			rc = -1;
		if (!rc && p->ipoib <= 0 && (p->mtu || p->rate || p->qkey >= 0))
			osm_warn(m, ps->path, p->line, "partition %s: mtu=, "
				 "rate=, Q_Key= without ipoib: no broadcast group to "
				 "give them to (left out)", p->name);
		if (!rc && p->ipoib > 0 &&
		    ((p->mtu && put_num(m, pm, "mtu", p->mtu, 0)) ||
		     (p->rate && put_num(m, pm, "rate", p->rate, 0)) ||
		     (p->qkey >= 0 && put_num(m, pm, "qkey", p->qkey, 1))))
			rc = -1;
		if (!rc && p->sl >= 0 && m->qos_off)
			osm_warn(m, ps->path, p->line, "partition %s: sl=%d left out: "
				 "OpenSM uses SL 0 without qos TRUE", p->name, p->sl);
		else if (!rc && p->sl >= 0 && put_num(m, pm, "sl", p->sl, 0))
			rc = -1;
		int ms = rc ? 0 : osm_put_seq(m, pm, "members");
		if (!rc && !ms)
			rc = -1;
		for (unsigned k = 0; !rc && k < p->n_members; k++)
			if (!osm_append(m, ms, p->members[k]))
				rc = -1;
		if (!rc)
			rc = emit_mgroups(m, pm, p);
	}
	if (rc)
		snprintf(m->err, m->errlen, "out of memory");
	osm_partitions_free(m);
	return rc;
}

void osm_partitions_free(struct osm_imp *m)
{
	struct osm_parts *ps = m->parts;
	if (!ps)
		return;
	for (unsigned i = 0; i < ps->n; i++) {
		for (unsigned k = 0; k < ps->p[i].n_members; k++)
			free(ps->p[i].members[k]);
		free(ps->p[i].members);
		free(ps->p[i].mgroups);
	}
	free(ps->p);
	free(ps);
	m->parts = NULL;
}
