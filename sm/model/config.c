/*
 * The fabric policy: a YAML file of nested mappings (ibsmd.yaml(5)),
 * read with libyaml's event API.  The schema is a set of static key
 * tables; each key names its type, its range and where it lives in
 * struct config.  The first error stops the parse and is reported as
 * "FILE:LINE:COL: message", LINE and COL 1-based.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "routing/engine.h"
#include "traps/repath.h"
#include "sm/model/config.h"
#include "sm/base/nodemap.h"
#include "sm/model/osmfile.h"
#include "sm/model/part_resolve.h"
#include "sm/model/mcgroups.h"
#include "sm/base/log.h"
#include "sm/base/wfile.h"

#define TAG_STR "tag:yaml.org,2002:str"
#define TAG_INT "tag:yaml.org,2002:int"

enum key_type {
	K_MAP,		/* nested mapping: sub */
	K_INT,		/* int in min..max */
	K_U64,		/* uint64_t, min..UINT64_MAX */
	K_STR,		/* char[len], not empty */
	K_ENUM,		/* int, one of names[] */
	K_LOGLEVEL,	/* int, log_level_parse() */
	K_LIST,		/* a scalar or a sequence of scalars into char[][] */
	K_VLARB,	/* "VL:weight,..." into struct cfg_vlarb */
	K_GROUP,	/* a group name of the group database: char[len],
			 * its gid into long long at count_off */
	K_SEQ,		/* a sequence of items into an array of structs */
	K_FUNC,		/* a value read by set() */
};

struct parse;

struct key {
	const char *name;
	enum key_type type;
	size_t off;			/* value (or list array) in struct config */
	long long min, max;		/* K_INT; K_U64 uses min only */
	size_t len;			/* K_STR, K_LIST: bytes per string */
	const struct key *sub;		/* K_MAP */
	const char *const *names;	/* K_ENUM: NULL-terminated, index = value */
	size_t count_off;		/* K_LIST: int count in struct config */
	int max_items;			/* K_LIST */
	int is_engine;			/* K_LIST: names must be known engines */
	/* K_MAP: run before and after the nested keys are parsed
	   (reset: also K_SEQ, before its items) */
	void (*reset)(struct config *);
	int (*check)(const struct config *, char *, size_t);
	/*
	 * K_SEQ: each item is one element (len bytes) of the array at off
	 * in struct config, appended after the int count at count_off
	 * (max_items in all, "what" in messages): a mapping of the keys sub
	 * (their off inside the element), or a scalar read by item_scalar
	 * (NULL: refused).  item_begin fills an element's defaults;
	 * item_end checks element i as check does a map.
	 */
	int (*item_scalar)(struct parse *, const char *key, void *elem);
	void (*item_begin)(struct config *, void *elem);
	int (*item_end)(struct config *, uint32_t i, char *, size_t);
	const char *what;
	int (*set)(struct parse *, const struct key *, const char *key); /* K_FUNC */
};

#define CFG(f)		offsetof(struct config, f)
/* Keys of struct config; the T* forms are keys of an element struct t. */
#define TINT(t, n, f, lo, hi) { .name = n, .type = K_INT, \
				.off = offsetof(struct t, f), .min = lo, .max = hi }
#define TU64(t, n, f, lo) { .name = n, .type = K_U64, \
			    .off = offsetof(struct t, f), .min = lo }
#define TSTR(t, n, f)	{ .name = n, .type = K_STR, .off = offsetof(struct t, f), \
			  .len = sizeof(((struct t *)0)->f) }
#define TENUM(t, n, f, v) { .name = n, .type = K_ENUM, \
			    .off = offsetof(struct t, f), .names = v }
#define INT(n, f, lo, hi) TINT(config, n, f, lo, hi)
#define U64(n, f, lo)	TU64(config, n, f, lo)
#define STR(n, f)	TSTR(config, n, f)
#define ENUM(n, f, v)	TENUM(config, n, f, v)
#define FUNC(n, fn)	{ .name = n, .type = K_FUNC, .set = fn }
#define MAP(n, t)	{ .name = n, .type = K_MAP, .sub = t }
#define MAP_CHECKED(n, t, r, c) { .name = n, .type = K_MAP, .sub = t, \
				  .reset = r, .check = c }
#define LIST(n, f, cnt, eng) { .name = n, .type = K_LIST, .off = CFG(f), \
	.len = sizeof(((struct config *)0)->f[0]), .count_off = CFG(cnt), \
	.max_items = sizeof(((struct config *)0)->f) / \
		     sizeof(((struct config *)0)->f[0]), .is_engine = eng }
/* pool: an array of struct config, cnt its count */
#define SEQ(n, pool, cnt, t, w, r, sc, b, e) { .name = n, .type = K_SEQ, \
	.off = CFG(pool), .len = sizeof(((struct config *)0)->pool[0]), \
	.count_off = CFG(cnt), .max_items = sizeof(((struct config *)0)->pool) / \
	sizeof(((struct config *)0)->pool[0]), .sub = t, .what = w, .reset = r, \
	.item_scalar = sc, .item_begin = b, .item_end = e }
#define VLARB(n, f)	{ .name = n, .type = K_VLARB, .off = CFG(f) }
#define GROUP(n, f, g)	{ .name = n, .type = K_GROUP, .off = CFG(f), \
			  .len = sizeof(((struct config *)0)->f), .count_off = CFG(g) }
#define END		{ .name = NULL }

/* Enum fields are stored through an int pointer. */
_Static_assert(sizeof(enum tristate) == sizeof(int), "enum size");

/* Indexed by the enum values of config.h. */
static const char *const tristates[] = { "auto", "on", "off", NULL };
/* A YAML boolean, stored as 0 / 1 */
static const char *const booleans[] = { "false", "true", NULL };

/* port: replaces the whole local port selection, {ca, num} or {guid}. */
static void port_reset(struct config *c)
{
	memset(c->port_ca, 0, sizeof(c->port_ca));
	c->port_num = 0;
	c->port_guid = 0;
}

static int port_check(const struct config *c, char *msg, size_t len)
{
	if (c->port_guid != 0 && (c->port_ca[0] != '\0' || c->port_num != 0)) {
		snprintf(msg, len, "give either ca/num or guid, not both");
		return -1;
	}
	return 0;
}

static const struct key port_keys[] = {
	STR("ca", port_ca),
	INT("num", port_num, 1, 254),
	U64("guid", port_guid, 1),
	END
};
/* sm.rogue, indexed by enum rogue_mode (sm/rogue.h) */
static const char *const rogue_modes[] = { "isolate", "report", NULL };
static const struct key sm_keys[] = {
	INT("priority", sm_priority, 0, 15),
	INT("subnet_timeout", subnet_timeout, 0, 31),
	INT("poll_ms", sminfo_poll_ms, 100, 600000),
	INT("poll_retries", sminfo_poll_retries, 1, 100),
	U64("sm_key", sm_key, 0),
	ENUM("rogue", sm_rogue, rogue_modes),
	END
};
static const struct key sweep_keys[] = {
	INT("interval_s", sweep_interval_s, 0, 3600),
	INT("scrub_blocks", sweep_scrub_blocks, 0, 65536),
	END
};
static const struct key mad_keys[] = {
	INT("timeout_ms", mad_timeout_ms, 1, 60000),
	INT("retries", mad_retries, 0, 20),
	INT("window", mad_window, 1, 4096),
	INT("window_per_node", mad_window_per_node, 1, 256),
	ENUM("one_cpu", mad_one_cpu, tristates),
	END
};
/* routing.isolation_mode, indexed by config.isolation_strict */
static const char *const isolation_modes[] = { "best-effort", "strict", NULL };
/* routing.jobs, indexed by enum routing_jobs_mode */
static const char *const jobs_modes[] = { "off", "least-max-load", NULL };
/* partitions[].members[].membership and default_partition.membership,
   indexed by cfg_member.full and config.default_full */
static const char *const memberships[] = { "limited", "full", NULL };
#define PART_NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" \
			"0123456789_.-"

static int set_pkey(struct parse *p, const struct key *k, const char *key);
static int set_policy(struct parse *p, const struct key *k, const char *key);
static int member_scalar(struct parse *p, const char *key, void *elem);
static int set_mgid(struct parse *p, const struct key *k, const char *key);
static int set_jobs_mode(struct parse *p, const struct key *k, const char *key);
static int set_dor_dims(struct parse *p, const struct key *k, const char *key);

/* A member or a weight names its ports by node description or by GUID. */
static int spec_check(const char *node, uint64_t guid, char *msg, size_t len)
{
	if (node[0] && guid) {
		snprintf(msg, len, "give either node or guid, not both");
		return -1;
	}
	if (!node[0] && !guid) {
		snprintf(msg, len, "node or guid is missing");
		return -1;
	}
	return 0;
}

static void member_begin(struct config *c, void *elem)
{
	((struct cfg_member *)elem)->full = 1;
}

static int member_end(struct config *c, uint32_t i, char *msg, size_t len)
{
	if (c->members[i].kind != MEMBER_SPEC)
		return 0;
	return spec_check(c->members[i].node, c->members[i].guid, msg, len);
}

static const struct key member_keys[] = {
	TSTR(cfg_member, "node", node),
	TU64(cfg_member, "guid", guid, 1),
	TINT(cfg_member, "port", port, 1, 254),
	TENUM(cfg_member, "membership", full, memberships),
	END
};

/* partitions: replaces the list, members and groups and all */
static void parts_reset(struct config *c)
{
	c->n_parts = 0;
	c->n_members = 0;
	c->n_mgroups = 0;
}

/* partitions[].mgroups, default_partition.mgroups (config.h) */
static void mgroup_begin(struct config *c, void *elem)
{
	struct cfg_mgroup *g = elem;
	g->sl = -1;
	g->qkey = -1;
}

static int mgroup_end(const struct cfg_mgroup *g, char *msg, size_t len)
{
	if (g->mgid[0] == 0xff)
		return 0;
	snprintf(msg, len, "mgid is missing");
	return -1;
}

static int part_mgroup_end(struct config *c, uint32_t i, char *msg, size_t len)
{
	return mgroup_end(&c->mgroups[i], msg, len);
}

static int def_mgroup_end(struct config *c, uint32_t i, char *msg, size_t len)
{
	return mgroup_end(&c->def_mgroups[i], msg, len);
}

static void def_mgroups_reset(struct config *c)
{
	c->n_def_mgroups = 0;
}

static const struct key mgroup_keys[] = {
	{ .name = "mgid", .type = K_FUNC, .set = set_mgid,
	  .off = offsetof(struct cfg_mgroup, mgid) },
	TINT(cfg_mgroup, "mtu", mtu, 1, 5),
	TINT(cfg_mgroup, "rate", rate, 2, 24),
	TINT(cfg_mgroup, "sl", sl, 0, 15),
	TINT(cfg_mgroup, "qkey", qkey, 0, 0x7fffffff),
	END
};

static void part_begin(struct config *c, void *elem)
{
	struct cfg_partition *cp = elem;
	cp->sl = -1;
	cp->qkey = -1;
	cp->first = c->n_members;
	cp->mg_first = c->n_mgroups;
}

static int part_end(struct config *c, uint32_t i, char *msg, size_t len)
{
	struct cfg_partition *cp = &c->parts[i];

	cp->n = c->n_members - cp->first;
	cp->mg_n = c->n_mgroups - cp->mg_first;
	if (!cp->name[0])
		snprintf(msg, len, "name is missing");
	else if (cp->name[strspn(cp->name, PART_NAME_CHARS)] != '\0')
		snprintf(msg, len, "name: '%s' has characters other than "
			 "A-Z a-z 0-9 _ . -", cp->name);
	else if (!strcmp(cp->name, "default"))
		snprintf(msg, len, "name: 'default' is the built-in default "
			 "partition's (P_Key 0x7fff)");
	else if (!cp->pkey)
		snprintf(msg, len, "pkey is missing");
	else if (cp->sl >= 0 && cp->policy == PART_VLANE)
		snprintf(msg, len, "sl: not with policy vlane-isolation (the "
			 "routing assigns its SL)");
	else if (!cp->ipoib && (cp->mtu || cp->rate || cp->qkey >= 0))
		snprintf(msg, len, "%s: only with ipoib: true (the broadcast "
			 "group's)", cp->mtu ? "mtu" : cp->rate ? "rate" : "qkey");
	else
		msg[0] = '\0';
	for (uint32_t j = 0; !msg[0] && j < i; j++) {
		if (!strcmp(c->parts[j].name, cp->name))
			snprintf(msg, len, "name: '%s' is also partitions[%u]'s",
				 cp->name, j);
		else if (c->parts[j].pkey == cp->pkey)
			snprintf(msg, len, "pkey: partitions '%s' and '%s' both "
				 "have P_Key 0x%04x", c->parts[j].name,
				 cp->name, cp->pkey);
	}
	return msg[0] ? -1 : 0;
}

static const struct key part_keys[] = {
	TSTR(cfg_partition, "name", name),
	{ .name = "pkey", .type = K_FUNC, .set = set_pkey,
	  .off = offsetof(struct cfg_partition, pkey) },
	{ .name = "policy", .type = K_FUNC, .set = set_policy,
	  .off = offsetof(struct cfg_partition, policy),
	  .names = part_policy_names },
	TINT(cfg_partition, "sl", sl, 0, 15),
	SEQ("members", members, n_members, member_keys,
	    "members (all partitions together)", NULL, member_scalar,
	    member_begin, member_end),
	TENUM(cfg_partition, "ipoib", ipoib, booleans),
	TINT(cfg_partition, "mtu", mtu, 1, 5),
	TINT(cfg_partition, "rate", rate, 2, 24),
	TINT(cfg_partition, "qkey", qkey, 0, 0x7fffffff),
	SEQ("mgroups", mgroups, n_mgroups, mgroup_keys,
	    "mgroups (all partitions together)", NULL, NULL, mgroup_begin,
	    part_mgroup_end),
	END
};

static void weights_reset(struct config *c)
{
	c->n_weights = 0;
}

static int weight_end(struct config *c, uint32_t i, char *msg, size_t len)
{
	if (spec_check(c->weights[i].node, c->weights[i].guid, msg, len))
		return -1;
	if (!c->weights[i].weight) {
		snprintf(msg, len, "weight is missing");
		return -1;
	}
	return 0;
}

static const struct key weight_keys[] = {
	TSTR(cfg_weight, "node", node),
	TU64(cfg_weight, "guid", guid, 1),
	TINT(cfg_weight, "weight", weight, 1, CFG_MAX_WEIGHT),
	END
};

static int wlearn_check(const struct config *c, char *msg, size_t len)
{
	if (c->wlearn_min >= c->wlearn_max) {
		snprintf(msg, len, "min: %u must be below max %u",
			 c->wlearn_min, c->wlearn_max);
		return -1;
	}
	return 0;
}

static const struct key wlearn_keys[] = {
	INT("period_s", wlearn_period_s, 0, 86400),
	INT("min", wlearn_min, 1, CFG_MAX_WEIGHT),
	INT("max", wlearn_max, 1, CFG_MAX_WEIGHT),
	END
};
/* routing.dor: the grid of the dor engine, for any engine list (as roots) */
static const struct key dor_keys[] = {
	{ .name = "dimensions", .type = K_FUNC, .set = set_dor_dims, .off = CFG(dor_size),
	  .count_off = CFG(dor_ndims), .max_items = CFG_DOR_DIMS, .min = 1,
	  .max = CFG_DOR_SIZE },
	ENUM("dateline", dor_dateline, booleans),
	END
};
static const struct key routing_keys[] = {
	LIST("engine", engines, n_engines, 1),
	LIST("roots", roots, n_roots, 0),
	ENUM("isolation_mode", isolation_strict, isolation_modes),
	{ .name = "jobs", .type = K_FUNC, .set = set_jobs_mode, .off = CFG(routing_jobs),
	  .names = jobs_modes },
	SEQ("weights", weights, n_weights, weight_keys, "weights",
	    weights_reset, NULL, NULL, weight_end),
	MAP_CHECKED("weight_learning", wlearn_keys, NULL, wlearn_check),
	MAP("dor", dor_keys),
	END
};
/* Indexed by enum qos_mode. */
static const char *const qos_modes[] = { "none", "vftree", "voqsw", NULL };

/* qos.sls is VOQsw's budget: given with another mode it would do nothing. */
static int qos_check(const struct config *c, char *msg, size_t len)
{
	if (c->qos_sls && c->qos_mode != QOS_VOQSW) {
		snprintf(msg, len, "sls: only with mode voqsw");
		return -1;
	}
	return 0;
}

static const struct key qos_keys[] = {
	ENUM("mode", qos_mode, qos_modes),
	INT("max_vls", qos_max_vls, 1, 15),
	VLARB("vlarb_low", qos_vlarb_low),
	VLARB("vlarb_high", qos_vlarb_high),
	INT("vlarb_high_limit", qos_vlarb_high_limit, 0, 255),
	INT("sls", qos_sls, 1, QOS_SLS),
	END
};
static int set_cong_mode(struct parse *p, const struct key *k, const char *key);
static int set_utilisation(struct parse *p, const struct key *k, const char *key);
/* Indexed by enum congestion_mode. */
static const char *const cong_modes[] = { "off", "dftree", NULL };

/* congestion: the two lanes must differ (the slow lane is a VL of its own). */
static int cong_check(const struct config *c, char *msg, size_t len)
{
	if (c->cong_fast_sl == c->cong_slow_sl) {
		snprintf(msg, len, "fast_sl and slow_sl are both %d: the slow lane "
			 "needs an SL and VL of its own", c->cong_fast_sl);
		return -1;
	}
	return 0;
}

/*
 * Defaults: 100,000 PortXmitWait ticks a second and utilisation 0.5 are
 * dFtree's (a port stalled a tenth of the time or more); interval 2 s
 * reads the CA-facing ports often enough to catch a hot-spot within a
 * few seconds.  SL 14 at most: SL 15 is VL15's, never a data lane.
 */
static const struct key cong_keys[] = {
	{ .name = "mode", .type = K_FUNC, .set = set_cong_mode,
	  .off = CFG(cong_mode), .names = cong_modes },
	INT("fast_sl", cong_fast_sl, 0, 14),
	INT("slow_sl", cong_slow_sl, 0, 14),
	U64("threshold", cong_threshold, 1),
	{ .name = "utilisation", .type = K_FUNC, .set = set_utilisation,
	  .off = CFG(cong_utilisation) },
	INT("interval_s", cong_interval_s, 1, 3600),
	END
};
static int set_exec(struct parse *p, const struct key *k, const char *key);
/*
 * events.exec_timeout_s: a page or a ticket takes seconds, 10 leaves a
 * slow network room; events.exec_max: 4 programs at once keep a burst
 * (a leaf switch and its hosts lost) moving without a fork storm.
 */
static const struct key events_keys[] = {
	ENUM("signalling", events_signalling, repath_mode_names),
	INT("max_report_failures", events_max_report_failures, 1, 100),
	{ .name = "exec", .type = K_FUNC, .set = set_exec, .off = CFG(events_exec),
	  .len = sizeof(((struct config *)0)->events_exec) },
	INT("exec_timeout_s", events_exec_timeout_s, 1, 3600),
	INT("exec_max", events_exec_max, 1, 64),
	END
};
static const char *const lid_schemes[] = { "dynamic", "prepopulated", NULL };
static int set_rebalance_drop(struct parse *p, const struct key *k, const char *key);
/*
 * virtualization.rebalance (reconfig/rebalance.h): when a full reroute
 * follows VM moves.  Every trigger 0 (default): never; a fabric whose
 * VMs do not move never meets one.  1,000,000 moves and a week bound
 * what a counter or a timer usefully waits.
 */
static const struct key rebalance_keys[] = {
	INT("after_migrations", rb_after_migrations, 0, 1000000),
	{ .name = "balance_drop", .type = K_FUNC, .set = set_rebalance_drop,
	  .off = CFG(rb_balance_drop) },
	INT("interval_s", rb_interval_s, 0, 604800),
	ENUM("local", rb_local, booleans),
	END
};

static const struct key virt_keys[] = {
	ENUM("lid_scheme", lid_scheme, lid_schemes),
	ENUM("extended_lids", extended_lids, tristates),
	LIST("vswitches", vswitches, n_vswitches, 0),
	INT("max_vms", vm_max, 1, 1000000),
	INT("max_vms_per_hypervisor", vm_max_per_hyp, 1, 100000),
	MAP("rebalance", rebalance_keys),
	END
};
static const struct key control_keys[] = {
	GROUP("group", control_group, control_gid),
	END
};
static const struct key metrics_keys[] = {
	STR("listen", metrics_listen),
	STR("textfile_dir", metrics_textfile_dir),
	INT("max_connections", metrics_max_conns, 1, CFG_MAX_HTTP_CONNS),
	END
};

int config_parse_listen(const char *s, char *host, size_t hostlen,
			 uint16_t *port, char *err, size_t errlen)
{
	const char *colon, *h = s;
	size_t n;

	if (s[0] == '[') {		/* [IPv6]:PORT */
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':') {
			snprintf(err, errlen, "'%s': want [ADDR]:PORT", s);
			return -1;
		}
		h = s + 1;
		n = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || strchr(s, ':') != colon) {
			snprintf(err, errlen, "'%s': want ADDR:PORT ([ADDR]:PORT for IPv6)", s);
			return -1;
		}
		n = (size_t)(colon - s);
	}
	char *end;
	errno = 0;
	unsigned long p = strtoul(colon + 1, &end, 10);
	if (n == 0 || n >= hostlen || colon[1] < '0' || colon[1] > '9' || *end ||
	    errno || p < 1 || p > 65535) {
		snprintf(err, errlen, "'%s': want ADDR:PORT, PORT 1..65535", s);
		return -1;
	}
	memcpy(host, h, n);
	host[n] = '\0';
	*port = (uint16_t)p;
	return 0;
}

/*
 * The HTTP listener's address, given as http.listen or as its older name
 * metrics.listen (whichever map comes second sees both): an address HTTP
 * can bind (sm/ctl/metrics_out.c), the same in both when both are given.
 */
static int listen_check(const char *mine, const char *other, const char *other_key,
			char *msg, size_t len)
{
	char host[128];
	uint16_t port;

	if (!mine[0])
		return 0;
	if (other[0] && strcmp(mine, other) != 0) {
		snprintf(msg, len, "listen: '%s' but %s is '%s' (one listener: give one of them)",
			 mine, other_key, other);
		return -1;
	}
	return config_parse_listen(mine, host, sizeof(host), &port, msg, len);
}

static int metrics_check(const struct config *c, char *msg, size_t len)
{
	return listen_check(c->metrics_listen, c->http_listen, "http.listen", msg, len);
}

static const struct key http_keys[] = {
	STR("listen", http_listen),
	END
};

static int http_check(const struct config *c, char *msg, size_t len)
{
	return listen_check(c->http_listen, c->metrics_listen, "metrics.listen", msg, len);
}
/* perfmgr: the performance manager (sm/perfmgr.h) */
static const char *const pm_metrics_names[] = { "errors", "all", "none", NULL };
#define PM_THRESHOLD(n, c) { .name = n, .type = K_U64, \
				.off = offsetof(struct config, pm_threshold[c]) }
static const struct key pm_threshold_keys[] = {
	PM_THRESHOLD("SymbolErrorCounter", PMC_SYMBOL_ERR),
	PM_THRESHOLD("LinkErrorRecoveryCounter", PMC_LINK_ERR_RECOVERY),
	PM_THRESHOLD("LinkDownedCounter", PMC_LINK_DOWNED),
	PM_THRESHOLD("PortRcvErrors", PMC_RCV_ERR),
	PM_THRESHOLD("PortRcvRemotePhysicalErrors", PMC_RCV_REMOTE_PHYS_ERR),
	PM_THRESHOLD("PortRcvSwitchRelayErrors", PMC_RCV_SWITCH_RELAY_ERR),
	PM_THRESHOLD("PortXmitDiscards", PMC_XMIT_DISCARDS),
	PM_THRESHOLD("PortXmitConstraintErrors", PMC_XMIT_CONSTRAINT_ERR),
	PM_THRESHOLD("PortRcvConstraintErrors", PMC_RCV_CONSTRAINT_ERR),
	PM_THRESHOLD("LocalLinkIntegrityErrors", PMC_LOCAL_LINK_INTEGRITY_ERR),
	PM_THRESHOLD("ExcessiveBufferOverrunErrors", PMC_EXCESSIVE_BUF_OVERRUN_ERR),
	PM_THRESHOLD("VL15Dropped", PMC_VL15_DROPPED),
	PM_THRESHOLD("PortXmitWait", PMC_XMIT_WAIT),
	END
};
static const struct key perfmgr_keys[] = {
	INT("interval_s", pm_interval_s, 0, 86400),
	INT("window", pm_window, 1, CFG_MAX_PM_WINDOW),
	ENUM("metrics", pm_metrics, pm_metrics_names),
	MAP("thresholds", pm_threshold_keys),
	END
};
/* default_partition: P_Key 0x7fff (sm/model/part_resolve.c) */
static const struct key default_partition_keys[] = {
	ENUM("membership", default_full, memberships),
	ENUM("ipoib", mc_default_ipoib, booleans),
	SEQ("mgroups", def_mgroups, n_def_mgroups, mgroup_keys,
	    "default_partition.mgroups", def_mgroups_reset, NULL, mgroup_begin,
	    def_mgroup_end),
	END
};
/* multicast: the IPoIB broadcast groups (sm/mcast/ipoib.c) */
static const struct key multicast_keys[] = {
	ENUM("default_ipoib", mc_default_ipoib, booleans),
	INT("mtu", mc_mtu, 1, 5),
	INT("rate", mc_rate, 2, 24),
	INT("sl", mc_sl, 0, 15),
	INT("qkey", mc_qkey, 0, 0x7fffffff),
	INT("max_groups_per_port", mc_max_groups_per_port, 1, 16383),
	END
};
/* sa: answers in flight (sm/sa/sa_budget.h) */
#define SA_BYTES_MIN	65536	/* the least that bounds anything but one MAD */
static const struct key sa_keys[] = {
	INT("max_answers_per_requester", sa_max_answers_per_requester, 1, 256),
	U64("max_answer_bytes_per_requester", sa_max_answer_bytes_per_requester,
	    SA_BYTES_MIN),
	U64("max_answer_bytes", sa_max_answer_bytes, SA_BYTES_MIN),
	INT("max_services", sa_max_services, 1, 1048576),
	INT("max_services_per_port", sa_max_services_per_port, 1, 1048576),
	U64("sa_key", sa_key, 0),
	END
};

static int sa_check(const struct config *c, char *msg, size_t len)
{
	if (c->sa_max_answer_bytes_per_requester > c->sa_max_answer_bytes) {
		snprintf(msg, len, "max_answer_bytes_per_requester (%llu) is more than max_answer_bytes (%llu)",
			 (unsigned long long)c->sa_max_answer_bytes_per_requester,
			 (unsigned long long)c->sa_max_answer_bytes);
		return -1;
	}
	if (c->sa_max_services_per_port > c->sa_max_services) {
		snprintf(msg, len, "max_services_per_port (%d) is more than max_services (%d)",
			 c->sa_max_services_per_port, c->sa_max_services);
		return -1;
	}
	return 0;
}
/*
 * security.m_key: protect_level is M_KeyProtectBits (0: no M_Key, as
 * before); lease_s, M_KeyLeasePeriod: 60 s lets an SM that lost the key
 * (a replaced secret) take the ports back within a minute, long beyond
 * a failover's few seconds.
 */
static const struct key mkey_keys[] = {
	INT("protect_level", mkey_protect, 0, 3),
	INT("lease_s", mkey_lease_s, 0, 65535),
	STR("secret_file", mkey_secret_file),
	END
};

static int mkey_check(const struct config *c, char *msg, size_t len)
{
	if (c->mkey_secret_file[0] && c->mkey_secret_file[0] != '/') {
		snprintf(msg, len, "secret_file: '%s' is not an absolute path",
			 c->mkey_secret_file);
		return -1;
	}
	return 0;
}

static const struct key security_keys[] = {
	MAP_CHECKED("m_key", mkey_keys, NULL, mkey_check),
	END
};
static const struct key ports_keys[] = {
	INT("hoq_life", hoq_life, 0, 31),
	INT("leaf_hoq_life", leaf_hoq_life, 0, 31),
	INT("switch_lifetime", switch_lifetime, 0, 31),
	INT("vl_stall_count", vl_stall_count, 0, 7),
	INT("max_op_vls", max_op_vls, 1, 5),
	END
};
static const struct key top_keys[] = {
	MAP_CHECKED("port", port_keys, port_reset, port_check),
	U64("subnet_prefix", subnet_prefix, 0),
	MAP("sm", sm_keys),
	STR("state_dir", state_dir),
	{ .name = "log_level", .type = K_LOGLEVEL, .off = CFG(log_level) },
	MAP("sweep", sweep_keys),
	MAP("mad", mad_keys),
	INT("lmc", lmc, 0, 7),
	MAP("routing", routing_keys),
	MAP_CHECKED("qos", qos_keys, NULL, qos_check),
	MAP_CHECKED("congestion", cong_keys, NULL, cong_check),
	MAP("events", events_keys),
	MAP_CHECKED("virtualization", virt_keys, NULL, NULL),
	MAP("ports", ports_keys),
	MAP("control", control_keys),
	MAP_CHECKED("metrics", metrics_keys, NULL, metrics_check),
	MAP("perfmgr", perfmgr_keys),
	MAP_CHECKED("http", http_keys, NULL, http_check),
	STR("node_name_map", node_name_map),
	SEQ("partitions", parts, n_parts, part_keys, "partitions",
	    parts_reset, NULL, part_begin, part_end),
	MAP("default_partition", default_partition_keys),
	MAP("multicast", multicast_keys),
	MAP_CHECKED("sa", sa_keys, NULL, sa_check),
	MAP("security", security_keys),
	END
};

#define MAX_KEYS_PER_MAP 32
#define KEY_PATH_LEN 160

struct parse {
	yaml_parser_t parser;
	yaml_event_t ev;		/* the current event */
	int have_ev;
	int depth;			/* mappings and sequences open */
	unsigned events;		/* read in this pass */
	const char *path;
	struct config *c;
	char *base;			/* what keys are read into: c, or an
					   element of a K_SEQ pool */
	char *err;
	size_t errlen;
	/* qos.vlarb_low [0], vlarb_high [1] in this file: where each entry is */
	struct {
		int seen;
		yaml_mark_t value, at[CFG_VLARB_MAX];
	} vlarb[2];
	yaml_mark_t policy_at[CFG_MAX_PARTS];	/* partitions[i].policy */
	yaml_mark_t cong_at;			/* congestion.mode */
	yaml_mark_t jobs_at;			/* routing.jobs */
	yaml_mark_t engine_at;			/* routing.engine */
	/* partitions[].mgroups[i].mgid, default_partition.mgroups[i].mgid */
	yaml_mark_t mgid_at[CFG_MAX_MGROUPS], def_mgid_at[CFG_MAX_DEF_MGROUPS];
};

static void set_str(char *dst, size_t len, const char *s)
{
	memset(dst, 0, len);
	memcpy(dst, s, strlen(s));
}

/* A key's value: off bytes into what is being filled (p->base). */
static void *field(const struct parse *p, size_t off)
{
	return p->base + off;
}

static void seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* "FILE:LINE:COL: " + message, mark 0-based as libyaml keeps it. */
static int fail_at(struct parse *p, yaml_mark_t mark, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_at(struct parse *p, yaml_mark_t mark, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *s = msg; *s != '\0'; s++)	/* keys and values are echoed */
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
	seterr(p->err, p->errlen, "%s:%zu:%zu: %s", p->path, mark.line + 1,
	       mark.column + 1, msg);
	return -1;
}

/* The reader reports a byte offset only: turn it into line and column. */
static yaml_mark_t offset_mark(const char *path, size_t offset)
{
	yaml_mark_t m = { .index = offset, .line = 0, .column = 0 };
	FILE *f;
	int ch;

	char why[256];
	if ((f = rfile_open(path, CFG_MAX_BYTES, why, sizeof(why))) == NULL)
		return m;
	for (size_t i = 0; i < offset && (ch = getc(f)) != EOF; i++) {
		if (ch == '\n') {
			m.line++;
			m.column = 0;
		} else if ((ch & 0xc0) != 0x80) {
			m.column++;	/* count characters, not UTF-8 bytes */
		}
	}
	fclose(f);
	return m;
}

static int syntax_error(struct parse *p)
{
	yaml_parser_t *y = &p->parser;
	yaml_mark_t mark = y->problem_mark;
	const char *problem = y->problem ? y->problem : "unknown error";

	switch (y->error) {
	case YAML_MEMORY_ERROR:
		return fail_at(p, mark, "out of memory");
	case YAML_READER_ERROR:
		return fail_at(p, offset_mark(p->path, y->problem_offset),
			       "%s", problem);
	default:
		if (y->context != NULL)
			return fail_at(p, mark, "syntax error: %s %s",
				       problem, y->context);
		return fail_at(p, mark, "syntax error: %s", problem);
	}
}

/* Advances to the next event; fails on a YAML syntax error. */
static int next_event(struct parse *p)
{
	if (p->have_ev) {
		yaml_event_delete(&p->ev);
		p->have_ev = 0;
	}
	if (!yaml_parser_parse(&p->parser, &p->ev))
		return syntax_error(p);
	p->have_ev = 1;
	if (++p->events > CFG_MAX_EVENTS)
		return fail_at(p, p->ev.start_mark, "more than %d YAML events"
			       " (keys, values, mappings, sequences)", CFG_MAX_EVENTS);
	switch (p->ev.type) {
	case YAML_MAPPING_START_EVENT:
	case YAML_SEQUENCE_START_EVENT:
		/* before libyaml goes deeper: its cost grows with the square */
		if (++p->depth > CFG_MAX_DEPTH)
			return fail_at(p, p->ev.start_mark,
				       "nested deeper than %d levels", CFG_MAX_DEPTH);
		break;
	case YAML_MAPPING_END_EVENT:
	case YAML_SEQUENCE_END_EVENT:
		p->depth--;
		break;
	default:
		break;
	}
	return 0;
}

/* Advances to the next event; fails on a syntax error or an alias. */
static int next(struct parse *p)
{
	if (next_event(p) == -1)
		return -1;
	if (p->ev.type == YAML_ALIAS_EVENT)
		return fail_at(p, p->ev.start_mark,
			       "aliases (*%s) are not supported",
			       (const char *)p->ev.data.alias.anchor);
	return 0;
}

static const char *scalar(const struct parse *p)
{
	return (const char *)p->ev.data.scalar.value;
}

static const char *scalar_tag(const struct parse *p)
{
	return (const char *)p->ev.data.scalar.tag;
}

/* A plain, untagged ~, null or empty scalar: YAML's null. */
static int is_null(const struct parse *p)
{
	const char *s = scalar(p);

	if (p->ev.type != YAML_SCALAR_EVENT || scalar_tag(p) != NULL ||
	    p->ev.data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	return !strcmp(s, "") || !strcmp(s, "~") || !strcmp(s, "null") ||
	    !strcmp(s, "Null") || !strcmp(s, "NULL");
}

static const char *event_kind(const struct parse *p)
{
	switch (p->ev.type) {
	case YAML_MAPPING_START_EVENT:
		return "a mapping";
	case YAML_SEQUENCE_START_EVENT:
		return "a sequence";
	case YAML_SCALAR_EVENT:
		return is_null(p) ? "nothing" : "a scalar";
	default:
		return "something else";
	}
}

/* The current event must be a scalar usable as text. */
static int want_string(struct parse *p, const char *key, const char *what)
{
	const char *tag;

	if (p->ev.type != YAML_SCALAR_EVENT || is_null(p))
		return fail_at(p, p->ev.start_mark, "%s: expected %s, got %s",
			       key, what, event_kind(p));
	tag = scalar_tag(p);
	if (tag != NULL && strcmp(tag, TAG_STR))
		return fail_at(p, p->ev.start_mark,
			       "%s: expected %s, got a value tagged %s",
			       key, what, tag);
	return 0;
}

/*
 * Parses decimal or 0x hex digits with an optional leading '-'.
 * Returns 0, -1 when s is no integer, -2 when it does not fit 64 bits.
 */
static int parse_integer(const char *s, int *neg, uint64_t *v)
{
	unsigned base = 10;
	int ndigits = 0;

	*neg = 0;
	*v = 0;
	if (*s == '-') {
		*neg = 1;
		s++;
	}
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (; *s != '\0'; s++, ndigits++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return -1;
		if (*v > (UINT64_MAX - d) / base) {
			/* keep scanning: "99999999999999999999x" is junk */
			while (*++s != '\0')
				if (!((*s >= '0' && *s <= '9') || (base == 16 &&
				    ((*s >= 'a' && *s <= 'f') ||
				     (*s >= 'A' && *s <= 'F')))))
					return -1;
			return -2;
		}
		*v = *v * base + d;
	}
	return ndigits > 0 ? 0 : -1;
}

/* The current event must be a plain (or !!int) integer scalar. */
static int want_integer(struct parse *p, const char *key, int *neg,
			uint64_t *v, int *overflow)
{
	const char *tag;
	int rc;

	*overflow = 0;
	if (p->ev.type != YAML_SCALAR_EVENT || is_null(p))
		return fail_at(p, p->ev.start_mark,
			       "%s: expected an integer, got %s",
			       key, event_kind(p));
	tag = scalar_tag(p);
	if (tag != NULL ? strcmp(tag, TAG_INT) != 0 :
	    p->ev.data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return fail_at(p, p->ev.start_mark,
			       "%s: expected an integer, got the string '%s'",
			       key, scalar(p));
	rc = parse_integer(scalar(p), neg, v);
	if (rc == -1)
		return fail_at(p, p->ev.start_mark,
			       "%s: expected an integer, got '%s'",
			       key, scalar(p));
	*overflow = rc == -2;
	return 0;
}

static int set_int(struct parse *p, const struct key *k, const char *key)
{
	long long val = 0;
	uint64_t v;
	int neg, overflow;

	if (want_integer(p, key, &neg, &v, &overflow) == -1)
		return -1;
	if (!overflow && v <= (uint64_t)LLONG_MAX)
		val = neg ? -(long long)v : (long long)v;
	if (overflow || v > (uint64_t)LLONG_MAX || val < k->min ||
	    val > k->max)
		return fail_at(p, p->ev.start_mark,
			       "%s: %s is out of range %lld..%lld",
			       key, scalar(p), k->min, k->max);
	*(int *)field(p, k->off) = (int)val;
	return 0;
}

static int set_u64(struct parse *p, const struct key *k, const char *key)
{
	uint64_t v;
	int neg, overflow;

	if (want_integer(p, key, &neg, &v, &overflow) == -1)
		return -1;
	if (overflow || (neg && v != 0) || v < (uint64_t)k->min)
		return fail_at(p, p->ev.start_mark,
			       "%s: %s is out of range 0x%llx..0x%llx",
			       key, scalar(p), (unsigned long long)k->min,
			       (unsigned long long)UINT64_MAX);
	*(uint64_t *)field(p, k->off) = v;
	return 0;
}

static int set_string(struct parse *p, const struct key *k, const char *key)
{
	const char *s;

	if (want_string(p, key, "a string") == -1)
		return -1;
	s = scalar(p);
	if (*s == '\0')
		return fail_at(p, p->ev.start_mark, "%s: must not be empty",
			       key);
	if (strlen(s) >= k->len)
		return fail_at(p, p->ev.start_mark,
			       "%s: '%s' is too long (at most %zu characters)",
			       key, s, k->len - 1);
	set_str(field(p, k->off), k->len, s);
	return 0;
}

static int set_enum(struct parse *p, const struct key *k, const char *key)
{
	char choices[128] = "";
	const char *s;

	if (want_string(p, key, "a name") == -1)
		return -1;
	s = scalar(p);
	for (int i = 0; k->names[i] != NULL; i++) {
		if (!strcmp(s, k->names[i])) {
			*(int *)field(p, k->off) = i;
			return 0;
		}
		strncat(choices, i ? ", " : "", sizeof(choices) -
			strlen(choices) - 1);
		strncat(choices, k->names[i], sizeof(choices) -
			strlen(choices) - 1);
	}
	return fail_at(p, p->ev.start_mark, "%s: '%s' is not one of %s",
		       key, s, choices);
}

/*
 * partitions[].pkey: the 15-bit P_Key of a tenant, 0x0001..0x7ffe; the
 * SM sets bit 15 for full members, and 0x7fff is the default partition.
 */
static int set_pkey(struct parse *p, const struct key *k, const char *key)
{
	uint64_t v;
	int neg, overflow;

	if (want_integer(p, key, &neg, &v, &overflow) == -1)
		return -1;
	if (!overflow && !neg && (v & 0x7fff) == 0x7fff && v <= 0xffff)
		return fail_at(p, p->ev.start_mark, "%s: 0x%04llx is the "
			       "default partition: it is built in",
			       key, (unsigned long long)v);
	if (!overflow && !neg && v > 0x7fff && v <= 0xffff && (v & 0x7fff))
		return fail_at(p, p->ev.start_mark, "%s: 0x%04llx has the "
			       "membership bit 15 set: give 0x%04llx (members "
			       "say full or limited)", key,
			       (unsigned long long)v,
			       (unsigned long long)(v & 0x7fff));
	if (overflow || (neg && v) || v == 0 || v > 0x7ffe)
		return fail_at(p, p->ev.start_mark, "%s: %s is out of range "
			       "0x0001..0x7ffe", key, scalar(p));
	*(uint16_t *)field(p, k->off) = (uint16_t)v;
	return 0;
}

/*
 * mgroups[].mgid: a multicast GID written as IPv6 (ff12:401b::16); its
 * place is kept for mgroup_check().
 */
static int set_mgid(struct parse *p, const struct key *k, const char *key)
{
	uint8_t *mgid = field(p, k->off);
	struct config *c = p->c;

	if (want_string(p, key, "a multicast GID such as \"ff12:401b::16\"") == -1)
		return -1;
	if (inet_pton(AF_INET6, scalar(p), mgid) != 1)
		return fail_at(p, p->ev.start_mark, "%s: '%s' is not a GID "
			       "(IPv6 notation, such as ff12:401b::16)", key,
			       scalar(p));
	if (mgid[0] != 0xff)
		return fail_at(p, p->ev.start_mark, "%s: '%s' is not a "
			       "multicast GID (ff..)", key, scalar(p));
	if (p->base == (char *)&c->mgroups[c->n_mgroups])
		p->mgid_at[c->n_mgroups] = p->ev.start_mark;
	else
		p->def_mgid_at[c->n_def_mgroups] = p->ev.start_mark;
	return 0;
}

/* partitions[].policy: its place is kept for part_qos_check(). */
static int set_policy(struct parse *p, const struct key *k, const char *key)
{
	if (set_enum(p, k, key) == -1)
		return -1;
	p->policy_at[p->c->n_parts] = p->ev.start_mark;
	return 0;
}

/* congestion.mode: its place is kept for cong_combine_check(). */
static int set_cong_mode(struct parse *p, const struct key *k, const char *key)
{
	if (set_enum(p, k, key) == -1)
		return -1;
	p->cong_at = p->ev.start_mark;
	return 0;
}

/* routing.jobs: its place is kept for jobs_combine_check(). */
static int set_jobs_mode(struct parse *p, const struct key *k, const char *key)
{
	if (set_enum(p, k, key) == -1)
		return -1;
	p->jobs_at = p->ev.start_mark;
	return 0;
}

/*
 * routing.dor.dimensions: a sequence of 1 to max_items sizes, each an
 * integer min..max (a scalar would be one dimension: refused, as a
 * likely slip for a list).
 */
static int set_dor_dims(struct parse *p, const struct key *k, const char *key)
{
	int *size = field(p, k->off), *count = field(p, k->count_off), n = 0;
	char ikey[KEY_PATH_LEN + 8];
	yaml_mark_t start = p->ev.start_mark;
	if (p->ev.type != YAML_SEQUENCE_START_EVENT)
		return fail_at(p, start, "%s: expected a sequence of 1 to %d sizes, got %s",
			       key, k->max_items, event_kind(p));
	for (;;) {
		if (next(p) == -1)
			return -1;
		if (p->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		if (n == k->max_items)
			return fail_at(p, p->ev.start_mark, "%s: more than %d dimensions",
				       key, k->max_items);
		snprintf(ikey, sizeof(ikey), "%s[%d]", key, n);
		struct key item = *k;
		item.off = k->off + (size_t)n * sizeof(*size);
		if (set_int(p, &item, ikey) == -1)
			return -1;
		n++;
	}
	if (n == 0)
		return fail_at(p, start, "%s: expected a sequence of 1 to %d sizes, got an "
			       "empty one", key, k->max_items);
	for (int i = n; i < k->max_items; i++)
		size[i] = 0;
	*count = n;
	return 0;
}

/* congestion.utilisation: a number in (0, 1], the bound of Algorithm 1. */
static int set_utilisation(struct parse *p, const struct key *k, const char *key)
{
	char *end;
	if (want_string(p, key, "a number in (0, 1]") == -1)
		return -1;
	errno = 0;
	double v = strtod(scalar(p), &end);
	if (end == scalar(p) || *end || errno || !(v > 0 && v <= 1))
		return fail_at(p, p->ev.start_mark, "%s: '%s' is not a number "
			       "in (0, 1] (a fraction of the link's bandwidth)",
			       key, scalar(p));
	*(double *)field(p, k->off) = v;
	return 0;
}

/*
 * virtualization.rebalance.balance_drop: a fraction in [0, 1), how far
 * the balance may fall below a fresh vswitch-ftree's; 0: not watched.
 */
static int set_rebalance_drop(struct parse *p, const struct key *k, const char *key)
{
	char *end;
	if (want_string(p, key, "a number in [0, 1)") == -1)
		return -1;
	errno = 0;
	double v = strtod(scalar(p), &end);
	if (end == scalar(p) || *end || errno || !(v >= 0 && v < 1))
		return fail_at(p, p->ev.start_mark, "%s: '%s' is not a number "
			       "in [0, 1) (a fraction of a fresh vswitch-ftree's "
			       "balance; 0: not watched)", key, scalar(p));
	*(double *)field(p, k->off) = v;
	return 0;
}

/* OpenSM's partitions.conf keywords (osm_prtn_config.c), by enum cfg_member_kind */
static const char *const member_keywords[] = {
	[MEMBER_ALL] = "ALL", [MEMBER_ALL_CAS] = "ALL_CAS",
	[MEMBER_ALL_SWITCHES] = "ALL_SWITCHES",
	[MEMBER_ALL_ROUTERS] = "ALL_ROUTERS", [MEMBER_SELF] = "SELF",
};
#define MEMBER_KEYWORDS "ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF"

/*
 * A scalar that looks like a keyword: capitals and '_' only, beginning
 * with ALL or SELF or holding a '_'.  One that is none of the keywords
 * is a misspelling (a node-description pattern so written would match
 * nothing OpenSM's admin meant; the mapping form {node: ...} names it).
 */
static int keyword_like(const char *s, size_t n)
{
	size_t caps = 0;
	while (caps < n && ((s[caps] >= 'A' && s[caps] <= 'Z') || s[caps] == '_'))
		caps++;
	return n && caps == n && (!strncmp(s, "ALL", 3) || !strncmp(s, "SELF", 4) ||
				  memchr(s, '_', n));
}

/*
 * partitions[].members[]: a scalar item is a keyword of OpenSM's
 * (ALL, ALL_CAS, ...), a GUID (0x + hex: a port or node GUID) or else a
 * node-description pattern, full unless it ends in OpenSM's =limited;
 * =both is full, as OpenSM makes it without allow_both_pkeys.
 */
static int member_scalar(struct parse *p, const char *key, void *elem)
{
	static const char *const suffixes[] = { "=limited", "=full", "=both" };
	struct cfg_member *m = elem;
	char s[CFG_NAME_LEN + 16];
	uint64_t v;
	int neg, rc;

	if (want_string(p, key, "a node-description pattern, a GUID, a "
			"keyword or a mapping") == -1)
		return -1;
	if (strlen(scalar(p)) >= sizeof(s))
		return fail_at(p, p->ev.start_mark,
			       "%s: '%s' is too long (at most %zu characters)",
			       key, scalar(p), sizeof(m->node) - 1);
	snprintf(s, sizeof(s), "%s", scalar(p));
	char *eq = strrchr(s, '=');
	if (eq) {
		size_t k = 0;
		while (k < 3 && strcmp(eq, suffixes[k]))
			k++;
		if (k == 3)
			return fail_at(p, p->ev.start_mark, "%s: '%s': the "
				       "membership after '=' is one of full, "
				       "limited, both (a pattern with '=' is "
				       "written {node: ...})", key, s);
		m->full = k != 0;
		*eq = '\0';
	}
	for (int k = MEMBER_ALL; k <= MEMBER_SELF; k++)
		if (!strcmp(s, member_keywords[k])) {
			m->kind = k;
			return 0;
		}
	if (keyword_like(s, strlen(s)))
		return fail_at(p, p->ev.start_mark, "%s: '%s' is not a "
			       "keyword (" MEMBER_KEYWORDS "); a node "
			       "description so written is {node: '%s'}",
			       key, s, s);
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		rc = parse_integer(s, &neg, &v);
		if (rc == -1 || (rc == 0 && v == 0))
			return fail_at(p, p->ev.start_mark, "%s: '%s' is not "
				       "a GUID", key, s);
		if (rc == -2)
			return fail_at(p, p->ev.start_mark, "%s: GUID %s does "
				       "not fit 64 bits", key, s);
		m->guid = v;
		return 0;
	}
	if (*s == '\0')
		return fail_at(p, p->ev.start_mark, "%s: must not be empty",
			       key);
	if (strlen(s) >= sizeof(m->node))
		return fail_at(p, p->ev.start_mark,
			       "%s: '%s' is too long (at most %zu characters)",
			       key, s, sizeof(m->node) - 1);
	set_str(m->node, sizeof(m->node), s);
	return 0;
}

static int set_loglevel(struct parse *p, const struct key *k, const char *key)
{
	int level;

	if (want_string(p, key, "a log level") == -1)
		return -1;
	if ((level = log_level_parse(scalar(p))) < 0)
		return fail_at(p, p->ev.start_mark, "%s: '%s' is not one of "
			       "error, warn, notice, info, debug",
			       key, scalar(p));
	*(int *)field(p, k->off) = level;
	return 0;
}

/* Appends the current scalar to a list key; *n counts the items so far. */
static int list_item(struct parse *p, const struct key *k, const char *key,
		     int *n)
{
	char *items = field(p, k->off);
	const char *s;

	if (want_string(p, key, k->is_engine ? "an engine name" : "a string")
	    == -1)
		return -1;
	s = scalar(p);
	if (*s == '\0')
		return fail_at(p, p->ev.start_mark,
			       "%s: empty names are not allowed", key);
	if (strlen(s) >= k->len)
		return fail_at(p, p->ev.start_mark,
			       "%s: '%s' is too long (at most %zu characters)",
			       key, s, k->len - 1);
	if (*n >= k->max_items)
		return fail_at(p, p->ev.start_mark,
			       "%s: more than %d entries", key, k->max_items);
	if (k->is_engine) {
		char known[128];

		if (routing_engine_find(s) == NULL) {
			routing_engine_names(known, sizeof(known), " ");
			return fail_at(p, p->ev.start_mark,
				       "%s: unknown routing engine '%s' "
				       "(known: %s)", key, s, known);
		}
		for (int i = 0; i < *n; i++)
			if (!strcmp(items + (size_t)i * k->len, s))
				return fail_at(p, p->ev.start_mark,
					       "%s: engine '%s' is listed "
					       "twice", key, s);
	}
	set_str(items + (size_t)*n * k->len, k->len, s);
	(*n)++;
	return 0;
}

/*
 * A list key: one scalar, a sequence of scalars, or (but not for the
 * engine) nothing, which empties the list.
 */
static int set_list(struct parse *p, const struct key *k, const char *key)
{
	int *count = field(p, k->count_off);
	yaml_mark_t start = p->ev.start_mark;
	int n = 0;

	memset(field(p, k->off), 0, (size_t)k->max_items * k->len);
	*count = 0;
	if (p->ev.type == YAML_SCALAR_EVENT && is_null(p) && !k->is_engine)
		return 0;
	if (k->is_engine)
		p->engine_at = start;	/* for engine_sls_check() */
	if (p->ev.type == YAML_SCALAR_EVENT) {
		if (list_item(p, k, key, &n) == -1)
			return -1;
		*count = n;
		return 0;
	}
	if (p->ev.type != YAML_SEQUENCE_START_EVENT)
		return fail_at(p, start, "%s: expected a name or a sequence of "
			       "names, got %s", key, event_kind(p));
	for (;;) {
		if (next(p) == -1)
			return -1;
		if (p->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		if (list_item(p, k, key, &n) == -1)
			return -1;
	}
	if (n == 0 && k->is_engine)
		return fail_at(p, start, "%s: the engine list is empty", key);
	*count = n;
	return 0;
}

/*
 * Where byte off of the current scalar is: its own column when the
 * scalar is on one line (plain or quoted, no escapes), else the scalar's.
 */
static yaml_mark_t scalar_mark(const struct parse *p, size_t off)
{
	yaml_mark_t m = p->ev.start_mark;
	const yaml_mark_t *end = &p->ev.end_mark;
	size_t len = p->ev.data.scalar.length;
	size_t quotes = p->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? 0 :
			p->ev.data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
			p->ev.data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE ? 1 :
			SIZE_MAX;
	if (quotes != SIZE_MAX && end->line == m.line &&
	    end->column - m.column == len + 2 * quotes) {
		m.column += quotes + off;
		m.index += quotes + off;
	}
	return m;
}

/* One "VL:weight" entry of s (n bytes) into entry i of v. */
static int vlarb_entry(struct parse *p, const char *key, const char *s,
		       size_t n, size_t off, struct cfg_vlarb *v, int i)
{
	char buf[32], *colon, *end;
	long vl, w;

	if (n == 0 || n >= sizeof(buf))
		return fail_at(p, scalar_mark(p, off), "%s: entry %d: expected "
			       "VL:weight, got '%.*s'", key, i + 1, (int)n, s);
	memcpy(buf, s, n);
	buf[n] = '\0';
	colon = strchr(buf, ':');
	if (colon == NULL || colon == buf || colon[1] == '\0')
		return fail_at(p, scalar_mark(p, off), "%s: entry %d: expected "
			       "VL:weight, got '%s'", key, i + 1, buf);
	*colon = '\0';
	errno = 0;
	vl = strtol(buf, &end, 10);
	if (*end != '\0' || buf[0] == '-' || buf[0] == '+' || errno)
		return fail_at(p, scalar_mark(p, off), "%s: entry %d: VL '%s' "
			       "is not a number", key, i + 1, buf);
	if (vl > 14)
		return fail_at(p, scalar_mark(p, off), "%s: entry %d: VL %ld is "
			       "out of range 0..14 (VL 15 is management)",
			       key, i + 1, vl);
	w = strtol(colon + 1, &end, 10);
	if (*end != '\0' || colon[1] == '-' || colon[1] == '+' || errno)
		return fail_at(p, scalar_mark(p, off + (size_t)(colon + 1 - buf)),
			       "%s: entry %d: weight '%s' is not a number",
			       key, i + 1, colon + 1);
	if (w > 255)
		return fail_at(p, scalar_mark(p, off + (size_t)(colon + 1 - buf)),
			       "%s: entry %d: weight %ld is out of range 0..255",
			       key, i + 1, w);
	v->vl[i] = (uint8_t)vl;
	v->weight[i] = (uint8_t)w;
	return 0;
}

/*
 * control.group: a name the group database knows now (getgrnam: files,
 * LDAP, ...); the gid is what the daemon chowns the socket to.
 */
static int set_group(struct parse *p, const struct key *k, const char *key)
{
	char buf[4096];
	struct group gr, *res = NULL;
	int e;

	if (set_string(p, k, key) == -1)
		return -1;
	e = getgrnam_r(scalar(p), &gr, buf, sizeof(buf), &res);
	if (res == NULL)
		return fail_at(p, p->ev.start_mark, "%s: no group '%s'%s%s",
			       key, scalar(p), e ? ": " : "",
			       e ? strerror(e) : "");
	*(long long *)field(p, k->count_off) = (long long)gr.gr_gid;
	return 0;
}

/*
 * events.exec: the program the event hook runs (sm/ctl/evhook.h), without
 * a shell, so a path: absolute (the daemon's working directory is no
 * part of the policy) and executable now.
 */
static int set_exec(struct parse *p, const struct key *k, const char *key)
{
	if (set_string(p, k, key) == -1)
		return -1;
	const char *s = scalar(p);
	if (s[0] != '/')
		return fail_at(p, p->ev.start_mark, "%s: '%s' is not an absolute "
			       "path (the program is run without a shell)", key, s);
	struct stat st;
	if (access(s, X_OK) != 0)
		return fail_at(p, p->ev.start_mark, "%s: '%s' is not executable: %s",
			       key, s, strerror(errno));
	if (stat(s, &st) != 0 || !S_ISREG(st.st_mode))
		return fail_at(p, p->ev.start_mark, "%s: '%s' is not a file",
			       key, s);
	return 0;
}

/*
 * qos.vlarb_low / vlarb_high: "VL:weight" entries separated by commas
 * (blanks around them allowed), as OpenSM's qos_vlarb_low/high; an empty
 * string is an empty table.  Each entry's place is kept for the check
 * against qos.max_vls once the whole file is read (vlarb_check).
 */
static int set_vlarb(struct parse *p, const struct key *k, const char *key)
{
	struct cfg_vlarb *v = field(p, k->off), t;
	int which = k->off == CFG(qos_vlarb_high);
	const char *s;
	size_t i = 0;

	if (want_string(p, key, "a string of VL:weight entries") == -1)
		return -1;
	s = scalar(p);
	memset(&t, 0, sizeof(t));
	t.given = 1;
	for (;;) {
		while (s[i] == ' ' || s[i] == '\t')
			i++;
		if (s[i] == '\0' && t.n == 0)
			break;	/* "": an empty table */
		size_t e = i + strcspn(s + i, ","), n = e - i;
		while (n > 0 && (s[i + n - 1] == ' ' || s[i + n - 1] == '\t'))
			n--;
		if (t.n == CFG_VLARB_MAX)
			return fail_at(p, scalar_mark(p, i), "%s: more than %d "
				       "entries (one VLArbitrationTable block)",
				       key, CFG_VLARB_MAX);
		if (vlarb_entry(p, key, s + i, n, i, &t, t.n) == -1)
			return -1;
		p->vlarb[which].at[t.n++] = scalar_mark(p, i);
		if (s[e] == '\0')
			break;
		i = e + 1;
	}
	p->vlarb[which].seen = 1;
	p->vlarb[which].value = p->ev.start_mark;
	*v = t;
	return 0;
}

/*
 * Once the file is read (the keys may come in any order): an entry for
 * a VL at or above qos.max_vls is an error -- no SL can reach that VL
 * under this file, so the weight the operator meant for it would go
 * nowhere.  A fabric that runs fewer VLs than the file allows is told
 * at the sweep (sm/write/plan_sweep.c): the same file must serve smaller
 * hardware.  A low table given with every weight 0 and no high entry
 * of weight above 0 sends nothing: an error too.
 */
static int vlarb_check(struct parse *p)
{
	static const char *const names[2] = { "qos.vlarb_low", "qos.vlarb_high" };
	const struct cfg_vlarb *v[2] = { &p->c->qos_vlarb_low, &p->c->qos_vlarb_high };
	unsigned weight = 0;

	for (int t = 0; t < 2; t++) {
		for (int i = 0; i < v[t]->n; i++) {
			weight += v[t]->weight[i];
			if (p->vlarb[t].seen && p->c->qos_max_vls &&
			    v[t]->vl[i] >= p->c->qos_max_vls)
				return fail_at(p, p->vlarb[t].at[i],
					       "%s: entry %d: VL %u is at or above "
					       "qos.max_vls %d (VLs 0..%d)",
					       names[t], i + 1, v[t]->vl[i],
					       p->c->qos_max_vls,
					       p->c->qos_max_vls - 1);
		}
	}
	if (p->vlarb[0].seen && weight == 0) {
		return fail_at(p, p->vlarb[0].value, "qos.vlarb_low: every weight is 0 and no "
			       "high-priority entry weighs more: no data VL "
			       "would ever be sent");
	}
	return 0;
}
/*
 * Once the file is read: a vlane-isolation partition gets its SL and
 * the SL-to-VL tables from the routing's VL assignment, which qos.mode
 * vftree and voqsw would overwrite with their own.
 */
static int part_qos_check(struct parse *p)
{
	const struct config *c = p->c;

	if (c->qos_mode == QOS_NONE)
		return 0;
	for (int i = 0; i < c->n_parts; i++)
		if (c->parts[i].policy == PART_VLANE)
			return fail_at(p, p->policy_at[i], "partitions[%d].policy:"
				       " vlane-isolation with qos.mode %s: not "
				       "implemented yet (the VL assignment owns "
				       "the SL-to-VL tables)", i,
				       c->qos_mode == QOS_VFTREE ? "vftree" :
				       "voqsw");
	return 0;
}
/*
 * Once the file is read: congestion.mode dftree programs the SL-to-VL
 * tables (two lanes, both VLs within what ports.max_op_vls lets a port
 * run) and gives the PathRecord SL (fast_sl, slow_sl towards a
 * hot-spot); what else would do either cannot combine with it: qos.mode
 * vftree or voqsw, a vlane-isolation partition, a partition's own sl.
 */
static int cong_combine_check(struct parse *p)
{
	const struct config *c = p->c;
	if (c->cong_mode != CONG_DFTREE)
		return 0;
	/* OperationalVLs encoding e runs VL0 .. 2^(e-1)-1, all 15 data VLs at 5 */
	int hi = c->cong_fast_sl > c->cong_slow_sl ? c->cong_fast_sl : c->cong_slow_sl;
	int vls = c->max_op_vls >= 5 ? 15 : 1 << (c->max_op_vls - 1);
	if (hi >= vls)
		return fail_at(p, p->cong_at, "congestion.mode: dftree with %s %d: "
			       "ports.max_op_vls %d lets ports run VL0-%d only",
			       hi == c->cong_slow_sl ? "slow_sl" : "fast_sl", hi,
			       c->max_op_vls, vls - 1);
	if (c->qos_mode != QOS_NONE)
		return fail_at(p, p->cong_at, "congestion.mode: dftree with qos.mode %s: "
			       "both program the SL-to-VL tables and the PathRecord SL "
			       "(dftree needs qos.mode none)",
			       c->qos_mode == QOS_VFTREE ? "vftree" : "voqsw");
	for (int i = 0; i < c->n_parts; i++) {
		if (c->parts[i].policy == PART_VLANE)
			return fail_at(p, p->cong_at, "congestion.mode: dftree with "
				       "partitions[%d] '%s' policy vlane-isolation: both "
				       "program the SL-to-VL tables and the PathRecord SL",
				       i, c->parts[i].name);
		if (c->parts[i].sl >= 0)
			return fail_at(p, p->cong_at, "congestion.mode: dftree with "
				       "partitions[%d] '%s' sl %d: the partition's SL would "
				       "replace dftree's in its PathRecords",
				       i, c->parts[i].name, c->parts[i].sl);
	}
	return 0;
}
int config_engine_sls_conflict(const struct config *c, char *msg, size_t len)
{
	const char *eng = NULL;
	for (int i = 0; i < c->n_engines && !eng; i++) {
		const struct routing_engine *e = routing_engine_find(c->engines[i]);
		if (e && e->own_sls)
			eng = e->name;
	}
	if (!eng)
		return 0;
	if (c->qos_mode != QOS_NONE) {
		snprintf(msg, len, "routing engine %s with qos.mode %s: both set the "
			 "SLs and the SL-to-VL tables (%s's own SLs need qos.mode none)",
			 eng, c->qos_mode == QOS_VFTREE ? "vftree" : "voqsw", eng);
		return 1;
	}
	if (c->cong_mode == CONG_DFTREE) {
		snprintf(msg, len, "routing engine %s with congestion.mode dftree: both "
			 "set the SLs and the SL-to-VL tables", eng);
		return 1;
	}
	for (int i = 0; i < c->n_parts; i++)
		if (c->parts[i].policy == PART_VLANE || c->parts[i].sl >= 0) {
			snprintf(msg, len, "routing engine %s with partitions[%d] '%s' %s: "
				 "the partition's SL would replace the layer %s gives "
				 "its paths", eng, i, c->parts[i].name,
				 c->parts[i].policy == PART_VLANE ?
				 "policy vlane-isolation" : "sl", eng);
			return 1;
		}
	return 0;
}

/* Once the file is read: config_engine_sls_conflict(). */
static int engine_sls_check(struct parse *p)
{
	char msg[256];
	if (!config_engine_sls_conflict(p->c, msg, sizeof(msg)))
		return 0;
	return fail_at(p, p->engine_at, "routing.engine: %s", msg);
}

/*
 * Once the file is read: routing.jobs least-max-load routes jobs over
 * D-mod-K's tables of an XGFT (sm/jobs.h), the only base shown to work;
 * an engine list could leave the fabric to another engine.
 */
static int jobs_combine_check(struct parse *p)
{
	const struct config *c = p->c;
	if (c->routing_jobs == JOBS_OFF)
		return 0;
	if (c->n_engines != 1 || strcmp(c->engines[0], "dmodk"))
		return fail_at(p, p->jobs_at, "routing.jobs: least-max-load needs "
			       "routing.engine dmodk alone (its base routes; other "
			       "bases are refused until shown to work)");
	return 0;
}

/*
 * Once the file is read (a partition's P_Key may follow its groups): an
 * IPoIB group's P_Key bits, 0 (the partition's are put in, as OpenSM
 * does) or the partition's; no MGID twice, nor one of the broadcast
 * groups the policy asks for.
 */
static int mgroup_check(struct parse *p)
{
	struct config *c = p->c;
	uint32_t n = c->n_def_mgroups + c->n_mgroups;
	struct {
		uint8_t *mgid;
		uint16_t pkey;		/* the partition's, full bit set */
		int ipoib;		/* its broadcast group is made */
		yaml_mark_t at;
		int part;		/* -1: default_partition's */
		uint32_t i;		/* in its partition's mgroups */
	} g[CFG_MAX_DEF_MGROUPS + CFG_MAX_MGROUPS];
	uint32_t k = 0;

	for (uint32_t i = 0; i < c->n_def_mgroups; i++, k++)
		g[k] = (__typeof__(g[0])){ c->def_mgroups[i].mgid, 0xffff,
					   c->mc_default_ipoib, p->def_mgid_at[i], -1, i };
	for (int i = 0; i < c->n_parts; i++)
		for (uint32_t j = 0; j < c->parts[i].mg_n; j++, k++) {
			uint32_t m = c->parts[i].mg_first + j;
			g[k] = (__typeof__(g[0])){ c->mgroups[m].mgid,
				(uint16_t)(c->parts[i].pkey | 0x8000),
				c->parts[i].ipoib, p->mgid_at[m], i, j };
		}
	for (k = 0; k < n; k++) {
		uint8_t *m = g[k].mgid, bc[16];
		char s[INET6_ADDRSTRLEN], key[64];
		if (g[k].part < 0)
			snprintf(key, sizeof(key), "default_partition.mgroups[%u].mgid", g[k].i);
		else
			snprintf(key, sizeof(key), "partitions[%d].mgroups[%u].mgid",
				 g[k].part, g[k].i);
		uint16_t bits = (uint16_t)(m[4] << 8 | m[5]);
		if (mc_is_ipoib_mgid(m) && !bits) {
			m[4] = (uint8_t)(g[k].pkey >> 8);
			m[5] = (uint8_t)g[k].pkey;
		} else if (mc_is_ipoib_mgid(m) && (bits | 0x8000) != g[k].pkey)
			return fail_at(p, g[k].at, "%s: the P_Key bits 0x%04x "
				       "are not the partition's 0x%04x (give 0 "
				       "to have them put in)", key, bits, g[k].pkey);
		inet_ntop(AF_INET6, m, s, sizeof(s));
		for (uint32_t j = 0; j < k; j++)
			if (!memcmp(g[j].mgid, m, 16))
				return fail_at(p, g[k].at, "%s: %s is given "
					       "twice", key, s);
		mc_ipoib_mgid(g[k].pkey, bc);
		if (g[k].ipoib && !memcmp(bc, m, 16))
			return fail_at(p, g[k].at, "%s: %s is the "
				       "partition's IPoIB broadcast group (ipoib)", key, s);
	}
	return 0;
}

/* Where (1-based) each key of a table was first seen; line 0 = not yet. */
struct seen {
	size_t line[MAX_KEYS_PER_MAP];
	size_t column[MAX_KEYS_PER_MAP];
};

static int parse_mapping(struct parse *p, const struct key *table,
			 const char *prefix, struct seen *seen);

/*
 * A check's message "NAME: ..." naming a key of the map that was given
 * is reported at that key as "MAP.NAME: ..."; other messages at the map.
 */
static int check_failed(struct parse *p, const struct key *k, const char *key,
			yaml_mark_t keymark, const struct seen *seen,
			const char *msg)
{
	size_t len = strcspn(msg, ":");
	for (size_t i = 0; msg[len] == ':' && i < MAX_KEYS_PER_MAP &&
	     k->sub[i].name != NULL; i++) {
		if (strlen(k->sub[i].name) != len ||
		    strncmp(k->sub[i].name, msg, len) || seen->line[i] == 0)
			continue;
		yaml_mark_t m = { .line = seen->line[i] - 1,
				  .column = seen->column[i] - 1 };
		return fail_at(p, m, "%s.%s", key, msg);
	}
	return fail_at(p, keymark, "%s: %s", key, msg);
}

/* A nested mapping; "sweep:" with nothing after it sets nothing. */
static int set_map(struct parse *p, const struct key *k, const char *key,
		   yaml_mark_t keymark)
{
	char msg[256];
	struct seen seen;

	if (p->ev.type != YAML_MAPPING_START_EVENT && !is_null(p))
		return fail_at(p, p->ev.start_mark,
			       "%s: expected a mapping, got %s",
			       key, event_kind(p));
	if (k->reset != NULL)
		k->reset(p->c);
	memset(&seen, 0, sizeof(seen));
	if (p->ev.type == YAML_MAPPING_START_EVENT &&
	    parse_mapping(p, k->sub, key, &seen) == -1)
		return -1;
	if (k->check != NULL && k->check(p->c, msg, sizeof(msg)) == -1)
		return check_failed(p, k, key, keymark, &seen, msg);
	return 0;
}

/*
 * A K_SEQ key: nothing (an empty list) or a sequence of items, each
 * appended to k's pool and checked by item_end; its keys are named
 * "KEY[i].NAME", i counting from 0 in this sequence.
 */
static int set_seq(struct parse *p, const struct key *k, const char *key)
{
	int *count = (int *)((char *)p->c + k->count_off);
	char *base = p->base;
	char ikey[KEY_PATH_LEN + 16], msg[256];

	if (k->reset != NULL)
		k->reset(p->c);
	if (is_null(p))
		return 0;
	if (p->ev.type != YAML_SEQUENCE_START_EVENT)
		return fail_at(p, p->ev.start_mark, "%s: expected a sequence, "
			       "got %s", key, event_kind(p));
	for (int i = 0;; i++) {
		struct seen seen;
		yaml_mark_t at;
		int rc;

		if (next(p) == -1)
			return -1;
		if (p->ev.type == YAML_SEQUENCE_END_EVENT)
			return 0;
		at = p->ev.start_mark;
		if (*count >= k->max_items)
			return fail_at(p, at, "%s: more than %d %s", key,
				       k->max_items, k->what);
		snprintf(ikey, sizeof(ikey), "%s[%d]", key, i);
		char *elem = (char *)p->c + k->off + (size_t)*count * k->len;
		memset(elem, 0, k->len);
		if (k->item_begin != NULL)
			k->item_begin(p->c, elem);
		memset(&seen, 0, sizeof(seen));
		if (p->ev.type == YAML_MAPPING_START_EVENT) {
			p->base = elem;
			rc = parse_mapping(p, k->sub, ikey, &seen);
			p->base = base;
		} else if (p->ev.type == YAML_SCALAR_EVENT &&
			   k->item_scalar != NULL) {
			rc = k->item_scalar(p, ikey, elem);
		} else {
			rc = fail_at(p, at, "%s: expected a mapping%s, got %s",
				     ikey, k->item_scalar ? " or a scalar" : "",
				     event_kind(p));
		}
		if (rc == -1)
			return -1;
		if (k->item_end != NULL &&
		    k->item_end(p->c, (uint32_t)*count, msg, sizeof(msg)) == -1)
			return check_failed(p, k, ikey, at, &seen, msg);
		(*count)++;
	}
}

/* The current event is the value of key k (full dotted name key). */
static int parse_value(struct parse *p, const struct key *k, const char *key,
		       yaml_mark_t keymark)
{
	if (k->type != K_MAP)
		p->c->keys_set++;	/* a section alone sets nothing */
	switch (k->type) {
	case K_MAP:
		return set_map(p, k, key, keymark);
	case K_INT:
		return set_int(p, k, key);
	case K_U64:
		return set_u64(p, k, key);
	case K_STR:
		return set_string(p, k, key);
	case K_ENUM:
		return set_enum(p, k, key);
	case K_LOGLEVEL:
		return set_loglevel(p, k, key);
	case K_LIST:
		return set_list(p, k, key);
	case K_VLARB:
		return set_vlarb(p, k, key);
	case K_GROUP:
		return set_group(p, k, key);
	case K_SEQ:
		return set_seq(p, k, key);
	case K_FUNC:
		return k->set(p, k, key);
	}
	return fail_at(p, p->ev.start_mark, "%s: internal error", key);
}

/*
 * Called with the MAPPING-START event current; ends on MAPPING-END.
 * seen (zeroed by the caller) gets where each key of table was.
 */
static int parse_mapping(struct parse *p, const struct key *table,
			 const char *prefix, struct seen *seen)
{
	char key[KEY_PATH_LEN];
	yaml_mark_t keymark;

	for (;;) {
		const struct key *k;
		size_t i;

		if (next(p) == -1)
			return -1;
		if (p->ev.type == YAML_MAPPING_END_EVENT)
			return 0;
		if (p->ev.type != YAML_SCALAR_EVENT || is_null(p))
			return fail_at(p, p->ev.start_mark,
				       "%s%skeys must be names, not %s",
				       prefix, *prefix ? ": " : "",
				       event_kind(p));
		snprintf(key, sizeof(key), "%s%s%s", prefix,
			 *prefix ? "." : "", scalar(p));
		for (i = 0, k = table; k->name != NULL; i++, k++)
			if (!strcmp(k->name, scalar(p)))
				break;
		if (k->name == NULL)
			return fail_at(p, p->ev.start_mark,
				       "unknown key '%s'", key);
		if (i >= MAX_KEYS_PER_MAP)
			return fail_at(p, p->ev.start_mark,
				       "%s: internal error: table too big", key);
		if (seen->line[i] != 0)
			return fail_at(p, p->ev.start_mark,
				       "duplicate key '%s' (first at line %zu, "
				       "column %zu)", key, seen->line[i],
				       seen->column[i]);
		keymark = p->ev.start_mark;
		seen->line[i] = keymark.line + 1;
		seen->column[i] = keymark.column + 1;
		if (next(p) == -1 || parse_value(p, k, key, keymark) == -1)
			return -1;
	}
}

/* Pass 1: the whole file is well-formed YAML. */
static int check_syntax(struct parse *p)
{
	do {
		if (next_event(p) == -1)
			return -1;
	} while (p->ev.type != YAML_STREAM_END_EVENT);
	return 0;
}

/* Pass 2: nothing, or one document holding a mapping (or nothing). */
static int parse_stream(struct parse *p)
{
	if (next(p) == -1)
		return -1;
	if (p->ev.type != YAML_STREAM_START_EVENT)
		return fail_at(p, p->ev.start_mark, "expected a YAML stream");
	if (next(p) == -1)
		return -1;
	if (p->ev.type == YAML_STREAM_END_EVENT)
		return 0;			/* empty file: all defaults */
	if (next(p) == -1)			/* past DOCUMENT-START */
		return -1;
	if (p->ev.type == YAML_MAPPING_START_EVENT) {
		struct seen seen;
		memset(&seen, 0, sizeof(seen));
		if (parse_mapping(p, top_keys, "", &seen) == -1)
			return -1;
	} else if (!is_null(p)) {
		return fail_at(p, p->ev.start_mark,
			       "the policy must be a mapping of keys, not %s",
			       event_kind(p));
	}
	if (next(p) == -1)			/* DOCUMENT-END */
		return -1;
	if (next(p) == -1)
		return -1;
	if (p->ev.type != YAML_STREAM_END_EVENT)
		return fail_at(p, p->ev.start_mark,
			       "only one YAML document is allowed");
	return 0;
}

void config_defaults(struct config *c)
{
	const struct routing_engine *e;

	memset(c, 0, sizeof(*c));
	c->port_num = 0;
	c->port_guid = 0;
	c->subnet_prefix = 0xfe80000000000000ULL;
	c->sm_priority = 0;
	set_str(c->state_dir, sizeof(c->state_dir), "/var/lib/ibsmd");
	c->log_level = LOG_NOTICE;
	c->sweep_interval_s = 10;
	c->sweep_scrub_blocks = 128;	/* a 648-host tree's 1,944 blocks in 16 light sweeps */
	c->mad_timeout_ms = 200;
	c->mad_retries = 3;
	c->mad_window = 256;
	c->mad_window_per_node = 16;
	c->mad_one_cpu = TRI_AUTO;
	c->events_max_report_failures = 4;
	c->lmc = 0;
	for (c->n_engines = 0; c->n_engines < CFG_MAX_ENGINES &&
	    (e = routing_engine_default((size_t)c->n_engines)) != NULL;
	    c->n_engines++)
		set_str(c->engines[c->n_engines], sizeof(c->engines[0]),
			e->name);
	c->n_roots = 0;
	c->dor_ndims = 0;	/* dor infers its grid from the cables */
	c->dor_dateline = 1;	/* tori on 2 VLs, as every IB switch offers */
	c->subnet_timeout = 18;
	c->hoq_life = 18;
	c->leaf_hoq_life = 16;
	c->switch_lifetime = 18;
	c->vl_stall_count = 7;
	c->max_op_vls = 5;
	c->sminfo_poll_ms = 10000;
	c->sminfo_poll_retries = 4;
	c->events_signalling = REPATH_HYBRID;
	c->events_exec_timeout_s = 10;
	c->events_exec_max = 4;
	c->control_gid = -1;
	/* a few Prometheus servers scrape over one connection each */
	c->metrics_max_conns = 64;
	c->sm_key = 0;
	c->sa_key = 0;		/* no trusted SA requester (ibsmd(8)) */
	c->mkey_protect = 0;	/* no M_Key (mkey_keys) */
	c->mkey_lease_s = 60;
	c->lid_scheme = 0;		/* dynamic */
	c->extended_lids = TRI_AUTO;	/* legacy unless every device can */
	c->n_vswitches = 0;
	c->vm_max = 65536;		/* far beyond a fabric's VMs (ibsmd.yaml(5)) */
	c->vm_max_per_hyp = 512;	/* 255 VFs and a PF's alias GUIDs */
	c->rb_after_migrations = 0;	/* rebalance: off (ibsmd.yaml(5)) */
	c->rb_balance_drop = 0;
	c->rb_interval_s = 0;
	c->rb_local = 0;	/* the whole fabric, as the paper re-routes */
	c->qos_mode = QOS_NONE;
	c->qos_max_vls = 0;	/* what the links run */
	c->qos_vlarb_high_limit = -1;	/* as the port holds it */
	c->qos_sls = 0;		/* not given: QOS_VOQSW_SLS */
	c->cong_mode = CONG_OFF;
	c->cong_fast_sl = 0;
	c->cong_slow_sl = 1;
	c->cong_threshold = 100000;	/* dFtree's (cong_keys) */
	c->cong_utilisation = 0.5;
	c->cong_interval_s = 2;
	c->n_parts = 0;
	/* every end port a full default member, with tenants too: OpenSM's
	   shipped partitions.conf (Default=0x7fff, ipoib : ALL=full;) */
	c->default_full = 0;
	c->isolation_strict = 0;	/* best-effort */
	c->mc_default_ipoib = 1;	/* OpenSM's defaults (osm_prtn.c) */
	c->mc_mtu = 4;			/* 2048 */
	c->mc_rate = 3;			/* 10 Gb/s */
	c->mc_sl = 0;
	c->mc_qkey = 0x0b1b;
	c->mc_max_groups_per_port = 512;	/* half a 1,024-MLID MFT */
	c->n_weights = 0;	/* every weight 1 */
	/* every port's counters once a minute: a 20,000-port fabric is
	   40,000 GMPs a minute, 64 at a time (a fraction of a second of
	   the PMAs' time); OpenSM's perfmgr sweeps every 180 s when on */
	c->pm_interval_s = 60;
	c->pm_window = 64;
	c->pm_metrics = CFG_PM_METRICS_ERRORS;
	for (int i = 0; i < PMC_N; i++)
		c->pm_threshold[i] = CFG_PM_DEFAULT;
	c->wlearn_period_s = 0;	/* no weight learning */
	c->wlearn_min = 1;
	c->wlearn_max = 100;
	/* far above what any fabric's hosts hold while they ACK (ibsmd.yaml(5)) */
	c->sa_max_answers_per_requester = 64;
	c->sa_max_answer_bytes_per_requester = 64ULL << 20;
	c->sa_max_answer_bytes = 512ULL << 20;
	c->sa_max_services = 16384;
	c->sa_max_services_per_port = 32;
}

/* Runs one pass over the file f with a fresh parser. */
static int run_pass(struct parse *p, FILE *f, int (*pass)(struct parse *))
{
	int rc;

	rewind(f);
	p->depth = 0;
	p->events = 0;
	if (!yaml_parser_initialize(&p->parser)) {
		seterr(p->err, p->errlen, "%s: out of memory", p->path);
		return -1;
	}
	yaml_parser_set_input_file(&p->parser, f);
	rc = pass(p);
	if (p->have_ev) {
		yaml_event_delete(&p->ev);
		p->have_ev = 0;
	}
	yaml_parser_delete(&p->parser);
	return rc;
}

/*
 * Syntax errors are reported first, wherever they are: a stray
 * indentation can turn the lines before it into a different value.
 */
int config_load(struct config *c, const char *path, char *err, size_t errlen)
{
	struct parse p;
	FILE *f;
	int rc;

	/* a FIFO or a device would block the loop (reload): regular files only */
	if ((f = rfile_open(path, CFG_MAX_BYTES, err, errlen)) == NULL)
		return -1;
	memset(&p, 0, sizeof(p));
	p.path = path;
	p.c = c;
	p.base = (char *)c;
	p.err = err;
	p.errlen = errlen;
	rc = run_pass(&p, f, check_syntax);
	if (rc == 0)
		rc = run_pass(&p, f, parse_stream);
	if (rc == 0)
		rc = vlarb_check(&p);
	if (rc == 0)
		rc = part_qos_check(&p);
	if (rc == 0)
		rc = cong_combine_check(&p);
	if (rc == 0)
		rc = mgroup_check(&p);
	if (rc == 0)
		rc = jobs_combine_check(&p);
	if (rc == 0)
		rc = engine_sls_check(&p);
	if (rc == 0 && c->http_listen[0])	/* the same when both given: http_check */
		set_str(c->metrics_listen, sizeof(c->metrics_listen), c->http_listen);
	const char *osm = rc < 0 ? osmfile_kind(f) : NULL;
	fclose(f);
	if (osm) {
		size_t n = strlen(err);
		snprintf(err + n, errlen > n ? errlen - n : 0,
			 " (this looks like OpenSM's %s, not an ibsmd policy: ibsmd.yaml(5) is YAML; "
			 "convert it with ibsmd --import-opensm %s --import-to DIR)", osm, path);
	}
	if (rc == 0 && c->node_name_map[0]) {
		/* read here too so that a broken map refuses the policy (-n, reload) */
		char why[768];
		struct node_name_map *m = nodemap_load(c->node_name_map, why, sizeof(why));
		if (!m) {
			seterr(err, errlen, "%s: node_name_map: %s", path, why);
			return -1;
		}
		nodemap_free(m);
	}
	return rc;
}

int config_routing_differs(const struct config *a, const struct config *b)
{
	return a->n_engines != b->n_engines || a->n_roots != b->n_roots ||
	       memcmp(a->engines, b->engines, sizeof(a->engines)) ||
	       memcmp(a->roots, b->roots, sizeof(a->roots)) || a->dor_ndims != b->dor_ndims ||
	       memcmp(a->dor_size, b->dor_size, sizeof(a->dor_size)) ||
	       a->dor_dateline != b->dor_dateline;
}

int config_set_engines(struct config *c, const char *list, char *err,
		       size_t errlen)
{
	char names[CFG_MAX_ENGINES][CFG_NAME_LEN];
	char known[128];
	const char *s = list, *end;
	int n = 0;

	memset(names, 0, sizeof(names));
	for (;;) {
		size_t len;

		while (*s == ' ' || *s == '\t')
			s++;
		end = s + strcspn(s, ",");
		len = (size_t)(end - s);
		while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
			len--;
		if (len == 0) {
			seterr(err, errlen, "empty routing engine name in '%s'",
			       list);
			return -1;
		}
		if (len >= CFG_NAME_LEN) {
			seterr(err, errlen, "routing engine name too long in "
			       "'%s'", list);
			return -1;
		}
		if (n >= CFG_MAX_ENGINES) {
			seterr(err, errlen, "more than %d routing engines in "
			       "'%s'", CFG_MAX_ENGINES, list);
			return -1;
		}
		memcpy(names[n], s, len);
		if (routing_engine_find(names[n]) == NULL) {
			routing_engine_names(known, sizeof(known), " ");
			seterr(err, errlen, "unknown routing engine '%s' "
			       "(known: %s)", names[n], known);
			return -1;
		}
		for (int i = 0; i < n; i++) {
			if (!strcmp(names[i], names[n])) {
				seterr(err, errlen, "routing engine '%s' is "
				       "listed twice", names[n]);
				return -1;
			}
		}
		n++;
		if (*end == '\0')
			break;
		s = end + 1;
	}
	memcpy(c->engines, names, sizeof(c->engines));
	c->n_engines = n;
	return 0;
}
