/*
 * ibsmd --import-opensm: opensm.conf, qos-policy.conf, guid2lid, the root
 * and CN GUID files and the node-name map (partitions.conf is
 * osm_parts.c's), written through libyaml's emitter so that every scalar
 * is quoted as YAML needs.  The mapping is ibsmd.yaml(5)'s COMING FROM
 * OPENSM section.
 */
#include "sm/import/osm_import.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "routing/engine.h"
#include "sm/base/fabric.h"
#include "sm/base/wfile.h"
#include "sm/import/osm_internal.h"
#include "sm/model/config.h"
#include "sm/model/lids.h"
#include "sm/model/state.h"

#define LINE_MAX_LEN 4096
#define MAX_OPTS 512		/* opensm.conf has about 150 */

/* The kinds of file the importer reads. */
enum osm_kind { K_CONF, K_PARTS, K_QOS, K_GUID2LID, K_ROOTS, K_CN, K_NODEMAP,
		K_KINDS };
static const char *const kind_names[K_KINDS] = {
	"opensm.conf", "partitions.conf", "qos-policy.conf", "guid2lid",
	"root GUID file", "CN GUID file", "node-name map",
};
/* OpenSM's names of them in a directory (its defaults, man opensm). */
static const char *const dir_names[K_KINDS] = {
	"opensm.conf", "partitions.conf", "qos-policy.conf", "guid2lid",
	"root_guid_file", "cn_guid_file", "ib-node-name-map",
};

/* ---- the output document ---- */

/* key: node v in mapping map; v, or 0 when out of memory. */
static int put_pair(struct osm_imp *m, int map, const char *key, int v)
{
	int k = yaml_document_add_scalar(&m->doc, NULL, (yaml_char_t *)key, -1,
					 YAML_PLAIN_SCALAR_STYLE);
	if (!k || !v || !yaml_document_append_mapping_pair(&m->doc, map, k, v))
		return 0;
	return v;
}

int osm_put(struct osm_imp *m, int map, const char *key, const char *val)
{
	return put_pair(m, map, key, yaml_document_add_scalar(&m->doc, NULL, (yaml_char_t *)val,
							       -1, YAML_ANY_SCALAR_STYLE));
}

int osm_put_seq(struct osm_imp *m, int map, const char *key)
{
	return put_pair(m, map, key, yaml_document_add_sequence(&m->doc, NULL,
								 YAML_ANY_SEQUENCE_STYLE));
}

static int osm_put_map(struct osm_imp *m, int map, const char *key)
{
	return put_pair(m, map, key, yaml_document_add_mapping(&m->doc, NULL,
								YAML_BLOCK_MAPPING_STYLE));
}

int osm_append(struct osm_imp *m, int seq, const char *val)
{
	int v = yaml_document_add_scalar(&m->doc, NULL, (yaml_char_t *)val, -1,
					 YAML_ANY_SCALAR_STYLE);
	return v && yaml_document_append_sequence_item(&m->doc, seq, v) ? v : 0;
}

int osm_section(struct osm_imp *m, const char *name)
{
	for (unsigned i = 0; i < m->n_sections; i++)
		if (!strcmp(m->sections[i].name, name))
			return m->sections[i].node;
	if (m->n_sections == OSM_MAX_SECTIONS)
		return 0;
	int node = osm_put_map(m, m->root, name);
	if (node) {
		m->sections[m->n_sections].name = name;
		m->sections[m->n_sections++].node = node;
	}
	return node;
}

void osm_warn(struct osm_imp *m, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (line > 0)
		fprintf(m->warn, "import: warning: %s:%d: ", file, line);
	else
		fprintf(m->warn, "import: warning: %s: ", file);
	vfprintf(m->warn, fmt, ap);
	fputc('\n', m->warn);
	va_end(ap);
	m->warnings++;
}

int osm_fail(struct osm_imp *m, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int n = line > 0 ? snprintf(m->err, m->errlen, "%s:%d: ", file, line)
			 : snprintf(m->err, m->errlen, "%s: ", file);
	if (n < 0 || (size_t)n >= m->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(m->err + n, m->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- reading ---- */

/* The line without its comment and the white space around it. */
static char *strip(char *s)
{
	char *hash = strchr(s, '#');
	if (hash)
		*hash = '\0';
	s += strspn(s, " \t\r\n");
	size_t n = strlen(s);
	while (n && strchr(" \t\r\n", s[n - 1]))
		s[--n] = '\0';
	return s;
}

/* A whole number in C syntax (0x hex, decimal); 0 or -1. */
static int parse_num(const char *s, unsigned long long *v)
{
	char *end;
	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -1 : 0;
}

static FILE *open_input(struct osm_imp *m, const char *path)
{
	char why[512];
	FILE *f = rfile_open(path, 0, why, sizeof(why));
	if (!f)
		snprintf(m->err, m->errlen, "%s", why);
	return f;
}

/* ---- guid2lid: OpenSM's "0xGUID 0xMINLID 0xMAXLID" ---- */

static int import_guid2lid(struct osm_imp *m, const char *path,
			   struct guid_map *lids)
{
	FILE *f = open_input(m, path);
	if (!f)
		return -1;
	char buf[LINE_MAX_LEN];
	int line = 0, rc = 0;
	while (!rc && fgets(buf, sizeof(buf), f)) {
		line++;
		char *s = strip(buf), *fld[4];
		int n = 0;
		if (!*s)
			continue;
		for (char *save, *t = strtok_r(s, " \t", &save); t && n < 4;
		     t = strtok_r(NULL, " \t", &save))
			fld[n++] = t;
		unsigned long long guid, lo, hi;
		if (n != 3 || parse_num(fld[0], &guid) || parse_num(fld[1], &lo) ||
		    parse_num(fld[2], &hi)) {
			rc = osm_fail(m, path, line, "expected OpenSM's \"0xGUID "
				      "0xLID 0xLID\" (port GUID, first and last LID)");
		} else if (!guid || !lo || lo > hi || hi > LID_UCAST_MAX) {
			rc = osm_fail(m, path, line, "LIDs 0x%llx..0x%llx of GUID "
				      "0x%016llx are not a unicast range (1..0x%x)",
				      lo, hi, guid, LID_UCAST_MAX);
		} else if (guid_map_get(lids, guid) != FAB_NONE) {
			rc = osm_fail(m, path, line, "GUID 0x%016llx is listed "
				      "twice", guid);
		} else if (guid_map_put(lids, guid, (uint32_t)lo) < 0 ||
			   guid_map_set_aux(lids, guid, 0) < 0) {
			rc = osm_fail(m, path, 0, "out of memory");
		}
	}
	fclose(f);
	return rc;
}

/* ---- root GUID file -> routing.roots ---- */

static int import_roots(struct osm_imp *m, const char *path)
{
	FILE *f = open_input(m, path);
	if (!f)
		return -1;
	char buf[LINE_MAX_LEN], val[32];
	int line = 0, rc = 0, n = 0, seq = 0;
	while (!rc && fgets(buf, sizeof(buf), f)) {
		line++;
		char *s = strip(buf);
		unsigned long long guid;
		if (!*s)
			continue;
		if (parse_num(s, &guid) || !guid) {
			rc = osm_fail(m, path, line, "expected a switch's node GUID");
			break;
		}
		if (++n > CFG_MAX_ROOTS) {
			rc = osm_fail(m, path, line, "more than %d roots "
				      "(routing.roots holds %d)", CFG_MAX_ROOTS,
				      CFG_MAX_ROOTS);
			break;
		}
		if (!seq && !(seq = osm_put_seq(m, osm_section(m, "routing"), "roots")))
			rc = osm_fail(m, path, 0, "out of memory");
		snprintf(val, sizeof(val), "0x%016llx", guid);
		if (!rc && !osm_append(m, seq, val))
			rc = osm_fail(m, path, 0, "out of memory");
	}
	fclose(f);
	return rc;
}

/* ---- opensm.conf ---- */

enum vkind { V_INT, V_KEY, V_GUID, V_ENGINES, V_QOS, V_QOS_INT, V_QOS_VLARB,
	     V_FILE, V_SKIP };

/* OpenSM's option -> ibsmd's key (ibsmd.yaml(5), COMING FROM OPENSM) */
static const struct opt_map {
	const char *osm;
	const char *section;	/* NULL: top level */
	const char *key;
	enum vkind kind;
	long long min, max;	/* V_INT, V_QOS_INT: ibsmd's range; V_FILE: the kind */
} opt_maps[] = {
	{ "guid", "port", "guid", V_GUID, 0, 0 },
	{ "sm_priority", "sm", "priority", V_INT, 0, 15 },
	{ "sm_key", "sm", "sm_key", V_KEY, 0, 0 },
	{ "sa_key", "sa", "sa_key", V_KEY, 0, 0 },
	{ "subnet_prefix", NULL, "subnet_prefix", V_KEY, 0, 0 },
	{ "lmc", NULL, "lmc", V_INT, 0, 7 },
	{ "sweep_interval", "sweep", "interval_s", V_INT, 0, 3600 },
	{ "transaction_timeout", "mad", "timeout_ms", V_INT, 1, 60000 },
	{ "transaction_retries", "mad", "retries", V_INT, 0, 20 },
	{ "max_wire_smps", "mad", "window", V_INT, 1, 4096 },
	{ "subnet_timeout", "sm", "subnet_timeout", V_INT, 0, 31 },
	{ "sminfo_polling_timeout", "sm", "poll_ms", V_INT, 100, 600000 },
	{ "polling_retry_number", "sm", "poll_retries", V_INT, 1, 100 },
	{ "routing_engine", "routing", "engine", V_ENGINES, 0, 0 },
	{ "head_of_queue_lifetime", "ports", "hoq_life", V_INT, 0, 31 },
	{ "leaf_head_of_queue_lifetime", "ports", "leaf_hoq_life", V_INT, 0, 31 },
	{ "packet_life_time", "ports", "switch_lifetime", V_INT, 0, 31 },
	{ "vl_stall_count", "ports", "vl_stall_count", V_INT, 0, 7 },
	{ "max_op_vls", "ports", "max_op_vls", V_INT, 1, 5 },
	{ "qos", "qos", "mode", V_QOS, 0, 0 },
	{ "qos_max_vls", "qos", "max_vls", V_QOS_INT, 1, 15 },
	{ "qos_high_limit", "qos", "vlarb_high_limit", V_QOS_INT, 0, 255 },
	{ "qos_vlarb_high", "qos", "vlarb_high", V_QOS_VLARB, 0, 0 },
	{ "qos_vlarb_low", "qos", "vlarb_low", V_QOS_VLARB, 0, 0 },
	{ "partition_config_file", NULL, NULL, V_FILE, K_PARTS, 0 },
	{ "qos_policy_file", NULL, NULL, V_FILE, K_QOS, 0 },
	{ "root_guid_file", NULL, NULL, V_FILE, K_ROOTS, 0 },
	{ "cn_guid_file", NULL, NULL, V_FILE, K_CN, 0 },
	{ "node_name_map_name", NULL, NULL, V_FILE, K_NODEMAP, 0 },
	/* ibsmd has them, always on (ibsmd.yaml(5)): nothing is lost */
	{ "honor_guid2lid_file", NULL, NULL, V_SKIP, 0, 0 },
	{ "sweep_on_trap", NULL, NULL, V_SKIP, 0, 0 },
	{ "fsync_high_avail_files", NULL, NULL, V_SKIP, 0, 0 },
	{ "keep_pkey_indexes", NULL, NULL, V_SKIP, 0, 0 },
	{ NULL, NULL, NULL, 0, 0, 0 },
};

/* What a few options without a counterpart become instead. */
static const struct {
	const char *osm, *why;
} no_counterpart[] = {
	{ "reassign_lids", "ibsmd keeps guid2lid; to hand out new LIDs, remove "
	  "STATE_DIR/guid2lid before starting" },
	{ "log_file", "the log goes to standard error (the journal under systemd)" },
	{ "log_flags", "log_level (error, warn, notice, info, debug)" },
	{ "daemon", "ibsmd stays in the foreground; its systemd unit runs it" },
	{ "m_key", "ibsmd derives each port's M_Key from a secret: set security.m_key "
	  "(protect_level, lease_s) by hand" },
	{ "leaf_vl_stall_count", "ports.vl_stall_count applies to every port" },
	{ NULL, NULL },
};

/* An option set to nothing, off or zero(s): no counterpart needed. */
static int is_unset(const char *v)
{
	if (!*v || !strcmp(v, "(null)") || !strcasecmp(v, "FALSE") ||
	    !strcasecmp(v, "off"))
		return 1;
	for (; *v; v++) {
		if (v[0] == '0' && (v[1] == 'x' || v[1] == 'X'))
			v++;
		else if (!strchr("0 \t:,", *v))
			return 0;
	}
	return 1;
}

/*
 * Options that do something only when a switch is on: with it off they
 * are silent (nothing is lost).  The switch is an option that is not
 * unset, or an engine in routing_engine.
 */
static const struct {
	const char *prefix, *option, *engine;
} gated[] = {
	{ "qos_", "qos", NULL },
	{ "perfmgr_", "perfmgr", NULL },
	{ "cc_", "congestion_control", NULL },
	{ "console_", "console", NULL },
	{ "torus_", NULL, "torus-2QoS" },
	{ "nue_", NULL, "nue" },
	{ "lash_", NULL, "lash" },
	{ NULL, NULL, NULL },
};

struct conf_opt {
	char key[64], val[LINE_MAX_LEN / 2];
	int line;
};

struct inputs {
	const char *path[K_KINDS];	/* given on the command line */
	char found[K_KINDS][PATH_MAX];	/* named by opensm.conf or a directory */
};

static int put_int(struct osm_imp *m, const struct opt_map *o, const char *file,
		   const struct conf_opt *c, int hex)
{
	unsigned long long v;
	char val[32];
	if (parse_num(c->val, &v))
		return osm_fail(m, file, c->line, "%s: '%s' is not a number",
				c->key, c->val);
	if (!hex && ((long long)v < o->min || (long long)v > o->max || v > LLONG_MAX))
		return osm_fail(m, file, c->line, "%s %s: ibsmd's %s%s%s takes "
				"%lld..%lld", c->key, c->val, o->section ? o->section : "",
				o->section ? "." : "", o->key, o->min, o->max);
	snprintf(val, sizeof(val), hex ? "0x%016llx" : "%llu", v);
	int map = o->section ? osm_section(m, o->section) : m->root;
	if (!map || !osm_put(m, map, o->key, val))
		return osm_fail(m, file, 0, "out of memory");
	return 0;
}

/* routing_engine: OpenSM's list, the engines ibsmd also has */
static int put_engines(struct osm_imp *m, const char *file, const struct conf_opt *c)
{
	char list[sizeof(c->val)], *save;
	int seq = 0;
	snprintf(list, sizeof(list), "%s", c->val);
	for (char *t = strtok_r(list, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
		if (!routing_engine_find(t)) {
			osm_warn(m, file, c->line, "routing_engine: %s has no "
				 "counterpart in ibsmd (left out of routing.engine)", t);
			continue;
		}
		if (!seq && !(seq = osm_put_seq(m, osm_section(m, "routing"), "engine")))
			return osm_fail(m, file, 0, "out of memory");
		if (!osm_append(m, seq, t))
			return osm_fail(m, file, 0, "out of memory");
	}
	return 0;
}

static int read_conf(struct osm_imp *m, const char *path, struct conf_opt *opts,
		     int *n)
{
	FILE *f = open_input(m, path);
	if (!f)
		return -1;
	char buf[LINE_MAX_LEN];
	int line = 0, rc = 0;
	*n = 0;
	while (!rc && fgets(buf, sizeof(buf), f)) {
		line++;
		char *s = strip(buf);
		if (!*s)
			continue;
		size_t kl = strcspn(s, " \t");
		char *v = s + kl + strspn(s + kl, " \t");
		if (kl >= sizeof(opts[0].key) || strspn(s, "abcdefghijklmnopqrstuvwxyz"
							"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != kl) {
			rc = osm_fail(m, path, line, "expected OpenSM's \"option "
				      "value\"");
		} else if (strlen(v) >= sizeof(opts[0].val)) {
			rc = osm_fail(m, path, line, "value too long");
		} else if (*n == MAX_OPTS) {
			rc = osm_fail(m, path, line, "more than %d options", MAX_OPTS);
		} else {
			struct conf_opt *o = &opts[(*n)++];
			memcpy(o->key, s, kl);
			o->key[kl] = '\0';
			snprintf(o->val, sizeof(o->val), "%s", v);
			o->line = line;
		}
	}
	fclose(f);
	return rc;
}

static const struct conf_opt *find_opt(const struct conf_opt *opts, int n,
				       const char *key)
{
	const struct conf_opt *last = NULL;	/* OpenSM keeps the last */
	for (int i = 0; i < n; i++)
		if (!strcmp(opts[i].key, key))
			last = &opts[i];
	return last;
}

static int import_conf(struct osm_imp *m, const char *path, struct inputs *in)
{
	struct conf_opt *opts = calloc(MAX_OPTS, sizeof(*opts));
	int n = 0, rc;
	if (!opts)
		return osm_fail(m, path, 0, "out of memory");
	rc = read_conf(m, path, opts, &n);
	const struct conf_opt *q = find_opt(opts, n, "qos");
	const struct conf_opt *eng = find_opt(opts, n, "routing_engine");
	int qos = q && !strcasecmp(q->val, "TRUE");
	m->qos_off = !qos;
	for (int i = 0; !rc && i < n; i++) {
		const struct conf_opt *c = &opts[i];
		const struct opt_map *o = opt_maps;
		if (find_opt(opts, n, c->key) != c)
			continue;	/* a later line sets it again */
		while (o->osm && strcmp(o->osm, c->key))
			o++;
		if (!o->osm) {
			int off = is_unset(c->val);
			for (int g = 0; !off && gated[g].prefix; g++) {
				const struct conf_opt *sw = gated[g].option ?
					find_opt(opts, n, gated[g].option) : NULL;
				if (strncmp(c->key, gated[g].prefix, strlen(gated[g].prefix)))
					continue;
				off = gated[g].option ? !sw || is_unset(sw->val)
						      : !eng || !strstr(eng->val, gated[g].engine);
			}
			if (off)
				continue;	/* off, or its feature off: nothing lost */
			const char *why = "no counterpart in ibsmd";
			for (int k = 0; no_counterpart[k].osm; k++)
				if (!strcmp(no_counterpart[k].osm, c->key))
					why = no_counterpart[k].why;
			osm_warn(m, path, c->line, "%s %s: %s", c->key, c->val, why);
			continue;
		}
		switch (o->kind) {
		case V_INT:
			rc = put_int(m, o, path, c, 0);
			break;
		case V_KEY:
			rc = put_int(m, o, path, c, 1);
			break;
		case V_GUID:
			if (!is_unset(c->val))
				rc = put_int(m, o, path, c, 1);
			break;
		case V_ENGINES:
			if (!is_unset(c->val))
				rc = put_engines(m, path, c);
			break;
		case V_QOS:
			if (qos && !osm_put(m, osm_section(m, "qos"), "mode", "vftree"))
				rc = osm_fail(m, path, 0, "out of memory");
			break;
		case V_QOS_INT:
			if (qos)
				rc = put_int(m, o, path, c, 0);
			break;
		case V_QOS_VLARB:
			if (qos && !is_unset(c->val) &&
			    !osm_put(m, osm_section(m, "qos"), o->key, c->val))
				rc = osm_fail(m, path, 0, "out of memory");
			break;
		case V_FILE:
			if (is_unset(c->val) || in->path[o->min] || in->found[o->min][0])
				break;	/* none, or given on the command line */
			if (o->min == K_QOS && !qos)
				break;	/* OpenSM reads it only with qos TRUE */
			if (access(c->val, R_OK) == 0)
				snprintf(in->found[o->min], PATH_MAX, "%s", c->val);
			else if (o->min == K_ROOTS)	/* the others: OpenSM goes on without */
				osm_warn(m, path, c->line, "%s %s: cannot be read (%s); "
					 "not imported: give it as a PATH",
					 c->key, c->val, strerror(errno));
			break;
		case V_SKIP:
			break;
		}
	}
	free(opts);
	return rc;
}

/* ---- qos-policy.conf ---- */

/*
 * The qos-ulps section's "pkey P : SL" lines (also "any, pkey P : SL")
 * become partitions[].sl of the partition with that P_Key; every other
 * item (port groups, QoS levels, match rules, other ULPs, the default SL)
 * has no counterpart: one warning each.
 */
static int import_qos(struct osm_imp *m, const char *path)
{
	static const char *const blocks[] = { "port-group", "qos-level",
		"qos-match-rule", "vlarb-scope", "sl2vl-scope", NULL };
	FILE *f = open_input(m, path);
	if (!f)
		return -1;
	char buf[LINE_MAX_LEN];
	int line = 0, rc = 0, in_ulps = 0;
	while (!rc && fgets(buf, sizeof(buf), f)) {
		line++;
		char *s = strip(buf);
		if (!*s)
			continue;
		if (!strcmp(s, "qos-ulps")) {
			in_ulps = 1;
			continue;
		}
		if (!strcmp(s, "end-qos-ulps")) {
			in_ulps = 0;
			continue;
		}
		if (!in_ulps) {
			for (int k = 0; blocks[k]; k++)
				if (!strcmp(s, blocks[k]))
					osm_warn(m, path, line, "%s: no counterpart "
						 "in ibsmd (its QoS is qos.mode, "
						 "ibsmd.yaml(5))", s);
			continue;
		}
		char *colon = strrchr(s, ':');
		unsigned long long pkey, sl;
		char *p = s;
		if (!strncmp(p, "any", 3) && strchr(" \t,", p[3]))
			p += 3 + strspn(p + 3, " \t,");
		if (colon && !strncmp(p, "pkey", 4) && strchr(" \t", p[4])) {
			*colon = '\0';
			char *pk = strip(p + 4), *sv = strip(colon + 1);
			if (parse_num(pk, &pkey) || parse_num(sv, &sl) || sl > 15) {
				osm_warn(m, path, line, "qos-ulps: '%s' is not one "
					 "P_Key and an SL 0..15: not imported", s);
			} else if (osm_partition_set_sl(m, (unsigned)pkey & 0x7fff,
							(int)sl) < 0) {
				osm_warn(m, path, line, "qos-ulps: no partition has "
					 "P_Key 0x%04llx: SL %llu not imported",
					 pkey & 0x7fff, sl);
			}
			continue;
		}
		osm_warn(m, path, line, "qos-ulps: '%s': no counterpart in ibsmd "
			 "(only \"pkey P : SL\" maps, to partitions[].sl)", s);
	}
	fclose(f);
	return rc;
}

/* ---- the node-name map: referenced, not copied ---- */

static int import_nodemap(struct osm_imp *m, const char *path)
{
	char abs[PATH_MAX];
	if (!realpath(path, abs))
		return osm_fail(m, path, 0, "%s", strerror(errno));
	if (!osm_put(m, m->root, "node_name_map", abs))
		return osm_fail(m, path, 0, "out of memory");
	return 0;
}

/* ---- which file is which ---- */

static int name_has(const char *path, const char *word)
{
	const char *base = strrchr(path, '/');
	return strstr(base ? base + 1 : path, word) != NULL;
}

/* By OpenSM's file names, else by the first line that says something. */
static enum osm_kind kind_of(const char *path)
{
	if (name_has(path, "guid2lid"))
		return K_GUID2LID;
	if (name_has(path, "partition"))
		return K_PARTS;
	if (name_has(path, "qos"))
		return K_QOS;
	if (name_has(path, "node-name") || name_has(path, "node_name"))
		return K_NODEMAP;
	if (name_has(path, "root"))
		return K_ROOTS;
	if (name_has(path, "cn_") || name_has(path, "cn-"))
		return K_CN;
	if (name_has(path, "opensm"))
		return K_CONF;
	FILE *f = fopen(path, "r");
	char buf[LINE_MAX_LEN];
	enum osm_kind k = K_CONF;
	while (f && fgets(buf, sizeof(buf), f)) {
		char *s = strip(buf);
		if (!*s)
			continue;
		int fields = 0;
		for (char *save, *t = strtok_r(s, " \t", &save); t;
		     t = strtok_r(NULL, " \t", &save))
			fields++;
		if (strchr(buf, ':') || strchr(buf, '='))
			k = K_PARTS;
		else if (!strncmp(s, "0x", 2))
			k = fields == 1 ? K_ROOTS : fields == 3 ? K_GUID2LID : K_NODEMAP;
		break;
	}
	if (f)
		fclose(f);
	return k;
}

static int sort_inputs(struct osm_imp *m, const char *const *paths, int n,
		       struct inputs *in)
{
	for (int i = 0; i < n; i++) {
		struct stat st;
		if (stat(paths[i], &st) < 0)
			return osm_fail(m, paths[i], 0, "%s", strerror(errno));
		if (S_ISDIR(st.st_mode)) {
			int any = 0;
			for (int k = 0; k < K_KINDS; k++) {
				char p[PATH_MAX];
				snprintf(p, sizeof(p), "%s/%s", paths[i], dir_names[k]);
				if (access(p, R_OK) || in->path[k] || in->found[k][0])
					continue;
				snprintf(in->found[k], PATH_MAX, "%s", p);
				any = 1;
			}
			if (!any)
				return osm_fail(m, paths[i], 0, "holds none of OpenSM's "
						"files (opensm.conf, partitions.conf, "
						"qos-policy.conf, guid2lid, ...)");
			continue;
		}
		enum osm_kind k = kind_of(paths[i]);
		if (in->path[k])
			return osm_fail(m, paths[i], 0, "a second %s (the first: %s)",
					kind_names[k], in->path[k]);
		in->path[k] = paths[i];
	}
	return 0;
}

static const char *input(const struct inputs *in, enum osm_kind k)
{
	return in->path[k] ? in->path[k] : in->found[k][0] ? in->found[k] : NULL;
}

/* ---- writing ---- */

static int write_policy(struct osm_imp *m, const char *path)
{
	struct wfile w;
	yaml_emitter_t e;
	int ok;
	if (wfile_open(&w, path, m->err, m->errlen) < 0) {
		yaml_document_delete(&m->doc);
		return -1;
	}
	fprintf(w.fp, "# ibsmd policy imported from OpenSM's files by "
		"ibsmd --import-opensm (ibsmd.yaml(5))\n");
	if (!yaml_emitter_initialize(&e)) {
		yaml_document_delete(&m->doc);
		wfile_abort(&w);
		return osm_fail(m, path, 0, "out of memory");
	}
	yaml_emitter_set_output_file(&e, w.fp);
	yaml_emitter_set_unicode(&e, 1);
	ok = yaml_emitter_open(&e) && yaml_emitter_dump(&e, &m->doc) &&
	     yaml_emitter_close(&e);	/* dump deletes the document */
	yaml_emitter_delete(&e);
	if (!ok) {
		wfile_abort(&w);
		return osm_fail(m, path, 0, "YAML emitter: %s",
				e.problem ? e.problem : "error");
	}
	return wfile_commit(&w, m->err, m->errlen);
}

int osm_import(const char *const *paths, int n, const char *dir, FILE *warn,
	       char *err, size_t errlen)
{
	struct osm_imp m = { .warn = warn, .err = err, .errlen = errlen };
	struct inputs *in = calloc(1, sizeof(*in));
	struct guid_map lids;
	char path[PATH_MAX];
	int rc = -1;

	err[0] = '\0';
	if (!in || guid_map_init(&lids, 1024) < 0) {
		free(in);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (!yaml_document_initialize(&m.doc, NULL, NULL, NULL, 1, 1) ||
	    !(m.root = yaml_document_add_mapping(&m.doc, NULL,
						 YAML_BLOCK_MAPPING_STYLE))) {
		snprintf(err, errlen, "out of memory");
		goto out_nodoc;
	}
	if (sort_inputs(&m, paths, n, in) < 0)
		goto out;
	/* opensm.conf first: it may name the other files */
	if (input(in, K_CONF) && import_conf(&m, input(in, K_CONF), in) < 0)
		goto out;
	if (input(in, K_PARTS) && osm_import_partitions(&m, input(in, K_PARTS)) < 0)
		goto out;
	if (input(in, K_QOS) && import_qos(&m, input(in, K_QOS)) < 0)
		goto out;
	if (input(in, K_ROOTS) && import_roots(&m, input(in, K_ROOTS)) < 0)
		goto out;
	if (input(in, K_CN))
		osm_warn(&m, input(in, K_CN), 0, "CN GUID file: no counterpart in "
			 "ibsmd (ftree takes every CA as a compute node)");
	if (input(in, K_NODEMAP) && import_nodemap(&m, input(in, K_NODEMAP)) < 0)
		goto out;
	if (input(in, K_GUID2LID) && import_guid2lid(&m, input(in, K_GUID2LID), &lids) < 0)
		goto out;
	if (m.parts && osm_partitions_emit(&m) < 0)
		goto out;
	snprintf(path, sizeof(path), "%s/ibsmd.yaml", dir);
	rc = write_policy(&m, path);	/* the document is gone after this */
	if (rc == 0 && input(in, K_GUID2LID))
		rc = state_save_guid2lid(dir, &lids, err, errlen);
	if (rc == 0) {
		/* what `ibsmd -n` does with it */
		struct config *cfg = malloc(sizeof(*cfg));
		char why[1024];
		if (!cfg) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
		} else {
			config_defaults(cfg);
			if (config_load(cfg, path, why, sizeof(why)) < 0) {
				snprintf(err, errlen, "the written policy is refused "
					 "(ibsmd -n): %s", why);
				rc = -1;
				/* nothing half-written is left to start from */
				unlink(path);
				snprintf(path, sizeof(path), "%s/guid2lid", dir);
				if (input(in, K_GUID2LID))
					unlink(path);
			}
			free(cfg);
		}
	}
	goto out_nodoc;
out:
	yaml_document_delete(&m.doc);
out_nodoc:
	osm_partitions_free(&m);
	guid_map_free(&lids);
	free(in);
	return rc;
}
