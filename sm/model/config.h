/*
 * The fabric policy (YAML, see ibsmd.yaml(5)).  config_load() fills a
 * struct config from a file; every error names file:line:column.  What
 * ibsmd.yaml(5) documents as not implemented yet (vlane-isolation with
 * qos.mode vftree or voqsw) is refused with "not implemented yet".
 */
#ifndef IBSMD_CONFIG_H
#define IBSMD_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "mad/pma.h"

#define CFG_MAX_ENGINES 16
#define CFG_MAX_ROOTS   64
#define CFG_DOR_DIMS    3	/* routing.dor.dimensions: dor's (routing/engine.h) */
#define CFG_DOR_SIZE    255	/* a dimension's switches: more than a fabric has */
#define CFG_NAME_LEN    64
/*
 * metrics.max_connections at most: etc/ibsmd.service.in's LimitNOFILE
 * is sized for it (with the control socket's clients and the daemon's
 * own descriptors, sm/ctl/metrics_out.c).
 */
#define CFG_MAX_HTTP_CONNS 1024
#define CFG_MAX_PM_WINDOW 1024	/* GMPs in flight: far past any PMA's pace */
#define CFG_PM_DEFAULT UINT64_MAX	/* a threshold the policy leaves out */
/* perfmgr.metrics: which per-port series /metrics carries */
enum cfg_pm_metrics { CFG_PM_METRICS_ERRORS, CFG_PM_METRICS_ALL, CFG_PM_METRICS_NONE };

enum tristate { TRI_AUTO, TRI_ON, TRI_OFF };

/* qos.mode */
enum qos_mode { QOS_NONE, QOS_VFTREE, QOS_VOQSW };
/* congestion.mode (sm/model/lanes.h) */
enum congestion_mode { CONG_OFF, CONG_DFTREE };

/*
 * qos.vlarb_low / qos.vlarb_high: a VLArbitrationTable as "VL:weight"
 * entries (OpenSM's qos_vlarb_low / qos_vlarb_high), at most one block
 * of 32 entries, VL 0..14, weight 0..255 (units of 64 bytes).
 */
#define CFG_VLARB_MAX 32
struct cfg_vlarb {
	int given;			/* 0: the default (ibsmd.yaml(5)) */
	int n;				/* entries */
	uint8_t vl[CFG_VLARB_MAX], weight[CFG_VLARB_MAX];
};
/* qos.sls when not given: the SLs VOQsw may use (SL 0..7) */
#define QOS_VOQSW_SLS 8

/*
 * partitions: (sm/model/part_resolve.h).  Members and weights live in
 * flat pools (the config is copied by value); a partition's members are
 * members[first .. first + n), in the order of the file.  Defaults: no
 * partitions, every end port a full member of the default partition,
 * isolation best-effort, no weights (each 1), learning off, its range
 * 1..100.  The parser refuses a P_Key outside 0x0001..0x7ffe or given
 * twice, a name given twice, sl with vlane-isolation.
 */
#define CFG_MAX_PARTS		128
#define CFG_MAX_PART_MEMBERS	2048
#define CFG_MAX_WEIGHTS		1024
#define CFG_MAX_WEIGHT		1000000	/* a weight, given or learned */
/*
 * A member named by OpenSM's partitions.conf keywords (osm_prtn_config.c):
 * every end port, the channel adapters', the switches' port 0, the
 * routers', the subnet manager's own port.
 */
enum cfg_member_kind {
	MEMBER_SPEC,			/* node or guid below */
	MEMBER_ALL,
	MEMBER_ALL_CAS,
	MEMBER_ALL_SWITCHES,
	MEMBER_ALL_ROUTERS,
	MEMBER_SELF,
};
struct cfg_member {
	int kind;			/* enum cfg_member_kind */
	char node[CFG_NAME_LEN];	/* node-description pattern (fnmatch);
					   "" when guid is given */
	uint64_t guid;			/* a port GUID or a node GUID; 0: none */
	int port;			/* 0: every end port of the node */
	int full;			/* membership: full (default) / limited */
};
/*
 * A multicast group the SM makes for a partition (partitions[].mgroups,
 * default_partition.mgroups: partitions.conf's mgid= lines), kept when
 * empty as the IPoIB broadcast groups (sm/mcast/ipoib.c).  Checked once
 * the file is read: a multicast MGID, given once in the file; an IPoIB
 * MGID's P_Key bits 0 (the partition's are put in) or the partition's.
 */
#define CFG_MAX_MGROUPS		256	/* in all partitions */
#define CFG_MAX_DEF_MGROUPS	32	/* of the default partition */
struct cfg_mgroup {
	uint8_t mgid[16];		/* required */
	int mtu, rate;			/* IBA codes; 0: multicast.mtu / .rate */
	int sl;				/* -1: the partition's, else multicast.sl */
	int qkey;			/* -1: multicast.qkey for an IPoIB MGID
					   (ff1S:401b, ff1S:601b), else 0 */
};
struct cfg_partition {
	char name[CFG_NAME_LEN];
	uint16_t pkey;			/* 15 bits */
	int policy;			/* enum part_policy (sm/model/part_resolve.h) */
	int sl;				/* 0..15, -1: not given */
	int ipoib;			/* 1: its IPoIB broadcast group
					   (sm/mcast/ipoib.c); default 0 */
	int mtu, rate;			/* the group's (IBA codes); 0: as
					   multicast.mtu / .rate */
	int qkey;			/* the group's Q_Key; -1: multicast.qkey */
	uint32_t first, n;		/* its members in config.members */
	uint32_t mg_first, mg_n;	/* its groups in config.mgroups */
};
struct cfg_weight {			/* routing.weights: pFTree-Wt */
	char node[CFG_NAME_LEN];	/* pattern, "" when guid is given */
	uint64_t guid;
	uint32_t weight;		/* 1..1000000 */
};

/* routing.jobs: job-aware routing over the base routes (sm/jobs.h) */
enum routing_jobs_mode {
	JOBS_OFF,
	JOBS_LEAST_MAX_LOAD,	/* each job's flows by least maximum load */
};

struct config {
	/* port: {ca: NAME, num: N} or {guid: 0x...} */
	char port_ca[CFG_NAME_LEN];
	int port_num;			/* 0 = not given */
	uint64_t port_guid;		/* 0 = not given */
	uint64_t subnet_prefix;		/* default 0xfe80000000000000 */
	int sm_priority;		/* 0..15, default 0 */
	int sm_rogue;			/* sm.rogue: enum rogue_mode (sm/rogue.h),
					 * default isolate (0) */
	char state_dir[256];		/* default /var/lib/ibsmd */
	int log_level;			/* enum log_level (sm/base/log.h), default notice */
	char node_name_map[256];	/* a node_name_map file (sm/base/nodemap.h); "": none */
	int sweep_interval_s;		/* 0..3600, default 10; 0 = no light sweep */
	int sweep_scrub_blocks;		/* sweep.scrub_blocks 0..65536, default 128:
					   blocks a light sweep reads back
					   (sm/write/scrub.h); 0 = none */
	int mad_timeout_ms;		/* 1..60000, default 200 */
	/* not a policy key: the tests' switch to the writer before the LFT
	 * order (sm/write/plan_lft.h; a VM's writes: migrate_one_wave()),
	 * to show what it prevents; 0 */
	int lft_unordered;
	int mad_retries;		/* 0..20, default 3 */
	int mad_window;			/* 1..4096, default 256 */
	int mad_window_per_node;	/* 1..256, default 64 */
	enum tristate mad_one_cpu;	/* mad.one_cpu: auto = under umad2sim */
	int lmc;			/* 0..7, default 0 */
	int n_engines;			/* routing.engine: a name or a list */
	char engines[CFG_MAX_ENGINES][CFG_NAME_LEN];	/* default: the table's */
	int n_roots;			/* routing.roots */
	char roots[CFG_MAX_ROOTS][CFG_NAME_LEN];
	/* routing.dor: the grid of the dor engine (struct dor_opts) */
	int dor_ndims;			/* dimensions given; 0 (default): inferred */
	int dor_size[CFG_DOR_DIMS];	/* each 1..CFG_DOR_SIZE */
	int dor_dateline;		/* dateline: 1 (default), 0: rings as lines */
	/* SM-side port parameters (defaults as OpenSM's) */
	int subnet_timeout;		/* sm.subnet_timeout 0..31, default 18 */
	int hoq_life;			/* ports.hoq_life 0..31, default 18 */
	int leaf_hoq_life;		/* ports.leaf_hoq_life 0..31, default 16 */
	int switch_lifetime;		/* ports.switch_lifetime 0..31, default 18 */
	int vl_stall_count;		/* ports.vl_stall_count 0..7, default 7 */
	int max_op_vls;			/* ports.max_op_vls 1..5, default 5 */
	int sminfo_poll_ms;		/* sm.poll_ms 100..600000, default 10000 */
	int sminfo_poll_retries;	/* sm.poll_retries 1..100, default 4 */
	int events_max_report_failures;	/* events.max_report_failures 1..100,
					   default 4: unanswered Reports before
					   a subscription is dropped */
	uint64_t sm_key;		/* sm.sm_key, default 0: the SM_Key sent
					   in SMInfo and compared with other
					   SMs' (OpenSM's default config: 0x1) */
	int events_signalling;		/* enum repath_mode (traps/repath.h),
					   default hybrid */
	/* the event hook (sm/ctl/evhook.h) */
	char events_exec[256];		/* events.exec: an absolute path to an
					   executable, "" (default): none */
	int events_exec_timeout_s;	/* events.exec_timeout_s 1..3600, default 10 */
	int events_exec_max;		/* events.exec_max 1..64, default 4 */
	/* virtualization (the vSwitch paper; sm/model/vswitch.c, vm.c) */
	int lid_scheme;			/* enum mig_scheme (reconfig/migrate.h):
					   0 dynamic (default), 1 prepopulated */
	enum tristate extended_lids;	/* auto (default): 18-bit vLIDs when
					   every device can (sm/discover/xlid_sm.c) */
	int n_vswitches;		/* virtualization.vswitches */
	char vswitches[CFG_MAX_ROOTS][CFG_NAME_LEN];	/* patterns or GUIDs */
	int vm_max;			/* virtualization.max_vms 1..1000000,
					   default 65536 (sm/model/vm.h) */
	int vm_max_per_hyp;		/* virtualization.max_vms_per_hypervisor
					   1..100000, default 512 */
	/* virtualization.rebalance (reconfig/rebalance.h); 0: off, the default */
	int rb_after_migrations;	/* .after_migrations 0..1000000 */
	double rb_balance_drop;		/* .balance_drop [0, 1) */
	int rb_interval_s;		/* .interval_s 0..604800 */
	int rb_local;			/* .local: 1 the sub-tree the moves touched (reconfig/rblocal.h) */
	/* qos (sm/model/qos.h) */
	int qos_mode;			/* enum qos_mode, default none */
	int qos_max_vls;		/* qos.max_vls 1..15; 0 (default): as many
					   data VLs as the links run */
	struct cfg_vlarb qos_vlarb_low;	/* default: weight 64 on each data VL
					   a port sends on */
	struct cfg_vlarb qos_vlarb_high;	/* default: empty */
	int qos_vlarb_high_limit;	/* qos.vlarb_high_limit 0..255 (PortInfo
					   VLHighLimit); -1 (default): as the
					   port holds it */
	int qos_sls;			/* qos.sls 1..16, voqsw only; 0: not
					   given (QOS_VOQSW_SLS) */
	/* congestion (sm/model/lanes.h): dFtree's two lanes, with qos.mode
	   none; defaults ibsmd.yaml(5) */
	int cong_mode;			/* enum congestion_mode, default off */
	int cong_fast_sl;		/* congestion.fast_sl 0..14, default 0 */
	int cong_slow_sl;		/* congestion.slow_sl 0..14, default 1 */
	uint64_t cong_threshold;	/* congestion.threshold: PortXmitWait
					   ticks per second, default 100000 */
	double cong_utilisation;	/* congestion.utilisation (0, 1],
					   default 0.5 */
	int cong_interval_s;		/* congestion.interval_s 1..3600,
					   default 2 */
	/* metrics (sm/ctl/metrics.h); "" (default): off */
	char metrics_listen[128];	/* the HTTP listener "ADDR:PORT":
					   http.listen, or its alias
					   metrics.listen */
	char http_listen[128];		/* http.listen as given; config_load
					   copies it into metrics_listen */
	char metrics_textfile_dir[256];	/* metrics.textfile_dir */
	int metrics_max_conns;		/* metrics.max_connections 1..
					   CFG_MAX_HTTP_CONNS, default 64 */
	/* control (the control socket, sm/ctl/control.h) */
	char control_group[CFG_NAME_LEN];	/* control.group: the control
					   socket's group; "" (default): the
					   daemon's */
	long long control_gid;		/* its gid, -1 when not given */
	/* partitions (sm/model/part_resolve.h) */
	int n_parts;
	struct cfg_partition parts[CFG_MAX_PARTS];
	uint32_t n_members;
	struct cfg_member members[CFG_MAX_PART_MEMBERS];
	uint32_t n_mgroups;		/* partitions[].mgroups, all together */
	struct cfg_mgroup mgroups[CFG_MAX_MGROUPS];
	uint32_t n_def_mgroups;		/* default_partition.mgroups */
	struct cfg_mgroup def_mgroups[CFG_MAX_DEF_MGROUPS];
	int default_full;		/* default_partition.membership: end
					   ports full (1, default, as OpenSM's
					   shipped partitions.conf) or limited
					   (0) members of P_Key 0x7fff once a
					   tenant partition is given */
	int routing_jobs;		/* routing.jobs: enum routing_jobs_mode,
					   default off (sm/jobs.h) */
	int isolation_strict;		/* routing.isolation_mode: strict (1) or
					   best-effort (0, default) */
	uint32_t n_weights;
	struct cfg_weight weights[CFG_MAX_WEIGHTS];
	/* routing.weight_learning: pFTree-Wt weights from PMA counters
	   (sm/weights.c); period 0 (default): off */
	int wlearn_period_s;		/* 0..86400 */
	uint32_t wlearn_min, wlearn_max;	/* Eq. 1's [a, b], default 1..100;
					   1 <= min < max <= 1000000 */
	/* perfmgr (sm/perfmgr.h): every port's PMA counters, every interval */
	int pm_interval_s;		/* perfmgr.interval_s 0..86400, default
					   60; 0: off */
	int pm_window;			/* perfmgr.window: GMPs in flight 1..
					   CFG_MAX_PM_WINDOW, default 64 */
	int pm_metrics;			/* perfmgr.metrics: enum cfg_pm_metrics */
	/* perfmgr.thresholds: per counter (enum pma_counter), per hour;
	   CFG_PM_DEFAULT: the default (sm/perf/pmcalc.h) */
	uint64_t pm_threshold[PMC_N];
	/* multicast (sm/mcast/ipoib.h): the IPoIB broadcast groups' parameters,
	   OpenSM's defaults (osm_prtn.c) */
	int mc_default_ipoib;		/* default_partition.ipoib (alias
					   multicast.default_ipoib): the default
					   partition's group, default 1 */
	int mc_mtu;			/* multicast.mtu 1..5, default 4 (2048) */
	int mc_rate;			/* multicast.rate 2..24, default 3 (10 Gb/s) */
	int mc_sl;			/* multicast.sl 0..15, default 0 */
	int mc_qkey;			/* multicast.qkey 0..0x7fffffff, default 0x0b1b */
	/* not a key: how many values the file gave keys (config_load); 0
	   for a file that sets nothing, which a reload refuses unless forced */
	int keys_set;
	int mc_max_groups_per_port;	/* multicast.max_groups_per_port
					   1..16383: groups one port may have
					   created and not deleted, default 512
					   (sm/sa/sa_mcmember.c) */
	/* sa: the SA's answers in flight (sm/sa/sa_budget.h) */
	int sa_max_answers_per_requester;	/* sa.max_answers_per_requester
					   1..256, default 64 */
	uint64_t sa_max_answer_bytes_per_requester;	/* default 64 MiB */
	uint64_t sa_max_answer_bytes;	/* sa.max_answer_bytes, default 512 MiB */
	/* sa: registered ServiceRecords (sm/sa/sa_service.c) */
	int sa_max_services;		/* sa.max_services 1..1048576, default 16384 */
	int sa_max_services_per_port;	/* sa.max_services_per_port, default 32 */
	uint64_t sa_key;		/* sa.sa_key, default 0: the SM_Key field of
					   the SA header (IBA vol. 1 §15.2.1.1) that
					   makes a request trusted; 0 trusts none
					   (sm/sa/sa_server.h, sa_trusted) */
	/* security.m_key (sm/model/mkeys.h; IBA vol. 1 14.2.4) */
	int mkey_protect;		/* protect_level 0..3, default 0: off */
	int mkey_lease_s;		/* lease_s 0..65535, default 60 */
	char mkey_secret_file[256];	/* secret_file; "": STATE_DIR/mkey.secret */
};

/*
 * Whether the heavy sweep writes SL-to-VL and VL arbitration tables: a
 * QoS mode, or congestion.mode dftree's two lanes (sm/model/qos.h).
 */
static inline int config_qos_tables(const struct config *c)
{
	return c->qos_mode != QOS_NONE || c->cong_mode == CONG_DFTREE;
}

/*
 * An engine of c's list sets its own SLs (dfsssp's VL layers) and c has
 * what would set them too: a qos.mode, congestion.mode dftree, a
 * partition's vlane-isolation or sl.  1 with why in msg, else 0.  The
 * policy's parse refuses it; so does -R (sm/main.c).
 */
int config_engine_sls_conflict(const struct config *c, char *msg, size_t len);

/* Fills c with the built-in defaults. */
void config_defaults(struct config *c);
/* Bounds on a policy file: a reload runs in the event loop. */
#define CFG_MAX_BYTES	(1024 * 1024)
#define CFG_MAX_DEPTH	64	/* mappings and sequences inside each other */
#define CFG_MAX_EVENTS	100000	/* libyaml's events: parse time bound */

/*
 * Parses path over the defaults already in c.  Returns 0, or -1 with a
 * message "FILE:LINE:COL: what is wrong (key 'a.b')" in err.  Only a
 * regular file of at most CFG_MAX_BYTES is read.
 */
int config_load(struct config *c, const char *path, char *err, size_t errlen);
/*
 * 1 when a and b route differently (routing.engine, routing.roots,
 * routing.dor): a reload routes from scratch.  0 otherwise.
 */
int config_routing_differs(const struct config *a, const struct config *b);
/* Validates/parses a routing engine list "a,b,c" (the -R option). */
int config_set_engines(struct config *c, const char *list, char *err,
		       size_t errlen);

/*
 * "ADDR:PORT" or "[ADDR6]:PORT" (PORT 1..65535) into host and port;
 * 0, or -1 with the reason in err: metrics.listen, checked at load and
 * bound by the metrics server (sm/ctl/metrics_out.c).
 */
int config_parse_listen(const char *s, char *host, size_t hostlen,
			uint16_t *port, char *err, size_t errlen);

#endif
