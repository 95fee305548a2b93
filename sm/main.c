/* ibsmd: options, modes (--once, daemon, --offline), signals. */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sodium.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mad/emu/emu.h"
#include "reconfig/migpattern.h"
#include "routing/verify/receivers.h"
#include "routing/verify/verify.h"
#include "sm/ctl/control.h"
#include "sm/base/log.h"
#include "sm/write/migcount.h"
#include "sm/base/nodemap.h"
#include "sm/sdnotify.h"
#include "sm/base/topo.h"
#include "sm/reload.h"
#include "sm/oneshot.h"
#include "sm/offline.h"
#include "sm/daemon.h"
#include "sm/model/mkeys.h"
#include "sm/import/osm_import.h"

#define DEFAULT_CONFIG "/etc/ibsmd/ibsmd.yaml"
/* --instance NAME (ibsmd@.service): the policy CONFIG_DIR/NAME.yaml if it
 * exists (else DEFAULT_CONFIG), the state STATE_ROOT/NAME (the unit's
 * StateDirectory=ibsmd/%i), the socket SOCKET_DIR/NAME.sock (its
 * RuntimeDirectory=ibsmd). */
#define CONFIG_DIR "/etc/ibsmd"
#define STATE_ROOT "/var/lib/ibsmd"
#define SOCKET_DIR "/run/ibsmd"
/* an RDMA device name (mlx5_0, ibp1s0, hfi1_0): no '/' into the paths */
#define CA_NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
#define HEX_DIGITS "0123456789abcdefABCDEF"
#define GUID_DIGITS_MAX 16
#define PORT_NUM_MAX 254
#define EXIT_CONFIG 78
/* --receiver-weight: the pFTree paper's receivers weigh 100, the others 1
 * (Section 7.1); at most routing.weights' largest weight */
#define RECEIVER_WEIGHT_DEFAULT 100
#define RECEIVER_WEIGHT_MAX 1000000

struct options {
	const char *config;
	const char *ca;
	int port;
	uint64_t guid;
	int once;
	int check;		/* -n: check the policy and exit */
	const char *routing;
	const char *state_dir;
	const char *socket;
	const char *offline;
	const char *emulate;
	int verify;
	const char *pattern;	/* --pattern: hotspot:DEST[,N] or FILE; with --jobs a job pattern */
	const char *jobs;	/* --jobs TRACE */
	uint32_t first, cpus_per_node;	/* --first N, --cpus-per-node C */
	uint64_t seed;		/* --seed S */
	int seed_set;
	const char *receivers;	/* --receivers FILE|random:R[,PARTITION] */
	uint32_t receiver_weight;	/* --receiver-weight W (0: not given) */
	int mig_pattern;		/* --migrate-pattern (enum migpat), -1 */
	uint32_t population;		/* --population PCT (0: not given) */
	int initial;			/* --initial: 0 random, 1 uniform, -1 */
	const char *dump_lfts;
	const char *dump_topology;
	const char *dot;	/* --dot FILE */
	const char *dump_sls;	/* --dump-sls FILE */
	int log_level;
	const char *log_file;	/* -f FILE */
	const char *mig_src, *mig_dst;	/* --migrate SRC DST */
	int scheme, method;
	const char **import_paths;	/* --import-opensm PATH... */
	int n_import;
	const char *import_to;		/* --import-to DIR */
	const char *instance;		/* --instance NAME */
	char inst_ca[CFG_NAME_LEN];	/* its CA, for CA:PORT */
	char inst_config[4096], inst_state[256], inst_socket[128];
};

/* The engine table (routing/engine.c), one line per engine. */
static void usage_engines(FILE *fp)
{
	const struct routing_engine *e;

	fprintf(fp, "routing engines (-R, routing.engine; default");
	for (size_t i = 0; (e = routing_engine_default(i)) != NULL; i++)
		fprintf(fp, "%s%s", i ? "," : " ", e->name);
	fprintf(fp, "):\n");
	int w = 0;
	for (size_t i = 0; (e = routing_engine_at(i)) != NULL; i++)
		if ((int)strlen(e->name) > w)
			w = (int)strlen(e->name);
	for (size_t i = 0; (e = routing_engine_at(i)) != NULL; i++)
		fprintf(fp, "  %-*s %s; %s; %s\n", w, e->name, e->summary,
			e->topologies,
			e->deadlock_free ? "deadlock-free" : "not deadlock-free");
}

static void usage(FILE *fp)
{
	char names[128];

	routing_engine_names(names, sizeof(names), ", ");
	fprintf(fp,
"usage: ibsmd [options]\n"
"  -c, --config FILE      YAML fabric policy (default " DEFAULT_CONFIG " if it exists)\n"
"  -d, --ca NAME          local CA to bind\n"
"  -p, --port NUM         local port number on that CA\n"
"  -g, --guid GUID        local port to bind, by port GUID\n"
"  -o, --once             bring the subnet up once, print the summary line, exit\n"
"  -n, --check            check the policy (-c, else the default) and exit: 0 or 78\n"
"  -R, --routing ENGINE   routing engine(s), overrides the policy (%s)\n"
"  -S, --state-dir DIR    persistent state (default /var/lib/ibsmd)\n"
"  -s, --socket PATH      control socket (default " CONTROL_DEFAULT_SOCKET ")\n"
"  -i, --instance NAME    one SM per local port (ibsmd@.service): NAME is the port\n"
"                         GUID (0x...) or CA:PORT (mlx5_0:1); the policy\n"
"                         " CONFIG_DIR "/NAME.yaml if it exists, state " STATE_ROOT "/NAME,\n"
"                         socket " SOCKET_DIR "/NAME.sock (-c, -S, -s still override)\n"
"      --offline TOPO     no fabric: read a topology file, assign LIDs, route, exit\n"
"      --emulate TOPO     run against an in-process emulated fabric built from TOPO\n"
"      --verify           with --once/--offline/--emulate: check the routes; exit 1 on an error\n"
"      --pattern P        with --offline --verify: HOL exposure of hotspot:DEST[,N] or\n"
"                         of a file of \"SRC DST [hot]\" flows\n"
"      --jobs TRACE       with --offline (routed by dmodk): replay an SWF job trace,\n"
"                         D-mod-K against the job routing; prints swml:, job: and\n"
"                         jobs: lines (PJML, SWML)\n"
"      --pattern P        with --jobs: each job's pattern: ring, 2dnn, 3dnn (default),\n"
"                         random:K, alltoall or dynamic (one of ring, 2dnn, 3dnn,\n"
"                         random:4 per job)\n"
"      --first N          with --jobs: the first N jobs the filter keeps (default all)\n"
"      --cpus-per-node C  with --jobs: a job needs ceil(processors / C) nodes (default 1)\n"
"      --seed S           with --jobs: the random patterns' and dynamic's seed; with\n"
"                         --receivers random: the draw's; with --migrate-pattern:\n"
"                         the placement's, pattern's and bisections' (default 1)\n"
"      --receivers FILE|random:R[,PARTITION]\n"
"                         with --offline --verify: receiver contention (up, down)\n"
"                         and inter-partition interference; the receivers (one CA\n"
"                         a line, or R drawn per leaf switch) weigh W, others 1\n"
"      --receiver-weight W  with --receivers: their weight, 1..1000000 (default 100;\n"
"                         1: the routing unweighted, plain pftree)\n"
"      --migrate SRC DST  with --offline: plan moving a VM from CA SRC to DST (node\n"
"                         description, port GUID or LID), print the migration: line\n"
"      --scheme S         with --migrate: dynamic (default) or prepopulated\n"
"      --method M         with --migrate: ftreeminrc (default), itrc or full\n"
"      --migrate-pattern P  with --offline: the vSwitch paper's Fig. 8 study, pattern\n"
"                         random, consolidate, grouping or to-uniform: switches\n"
"                         written by ItRC and FTreeMinRC per migration, bisection\n"
"                         quality against a fresh routing every 10%%\n"
"      --population PCT   with --migrate-pattern: VMs on PCT%% of the VFs (1..100)\n"
"      --initial I        with --migrate-pattern: random (default) or uniform\n"
"      --dump-lfts FILE   write every switch's LFT (dump_fts -n format)\n"
"      --dump-topology FILE  write the fabric as ibnetdiscover output, with LIDs\n"
"      --dot FILE         with --offline: the fabric as Graphviz DOT, links coloured by\n"
"                         routes per link, failed links dashed red\n"
"      --dump-sls FILE    with --offline: the PathRecord SL of every pair of end\n"
"                         ports, \"SRC-GUID DST-GUID SL\" lines\n"
"      --log-level LEVEL  error, warn, notice (default), info, debug\n"
"  -f, --log-file FILE    the log lines to FILE (appended) instead of stderr;\n"
"                         opened again on SIGUSR1 and SIGHUP (logrotate)\n"
"      --import-opensm PATH... --import-to DIR\n"
"                         translate OpenSM's opensm.conf, partitions.conf,\n"
"                         qos-policy.conf, guid2lid, root/cn GUID files, node-name\n"
"                         map (or a directory of them) into DIR/ibsmd.yaml and\n"
"                         DIR/guid2lid; exit 0, or 1 with the reason\n"
"  -h, --help             this text\n"
"  -V, --version          the version\n", names);
	usage_engines(fp);
}

enum { OPT_OFFLINE = 256, OPT_EMULATE, OPT_VERIFY, OPT_PATTERN, OPT_DUMP_LFTS,
       OPT_DUMP_TOPO, OPT_LOG_LEVEL, OPT_MIGRATE, OPT_SCHEME, OPT_METHOD,
       OPT_DOT, OPT_IMPORT, OPT_IMPORT_TO, OPT_JOBS, OPT_FIRST, OPT_CPUS,
       OPT_SEED, OPT_DUMP_SLS, OPT_RECEIVERS, OPT_RECEIVER_WEIGHT,
       OPT_MIG_PATTERN, OPT_POPULATION, OPT_INITIAL };

/*
 * --first, --cpus-per-node, --seed or --receiver-weight (option c) into o;
 * 0, or -1 said why.
 */
static int parse_jobs_number(struct options *o, int c, const char *arg)
{
	const char *opt = c == OPT_FIRST ? "--first" :
			  c == OPT_CPUS ? "--cpus-per-node" :
			  c == OPT_RECEIVER_WEIGHT ? "--receiver-weight" : "--seed";
	unsigned long long min = c == OPT_SEED ? 0 : 1;
	unsigned long long max = c == OPT_SEED ? UINT64_MAX :
				 c == OPT_RECEIVER_WEIGHT ? RECEIVER_WEIGHT_MAX :
				 UINT32_MAX, v;
	char *end;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || *end || end == arg || arg[0] == '-' || v < min || v > max) {
		fprintf(stderr, "ibsmd: bad %s '%s' (%llu..%llu)\n", opt, arg,
			min, max);
		return -1;
	}
	if (c == OPT_FIRST)
		o->first = (uint32_t)v;
	else if (c == OPT_CPUS)
		o->cpus_per_node = (uint32_t)v;
	else if (c == OPT_RECEIVER_WEIGHT)
		o->receiver_weight = (uint32_t)v;
	else
		o->seed = v, o->seed_set = 1;
	return 0;
}

/* --migrate-pattern, --population or --initial (option c) into o; 0, or -1 said why. */
static int parse_mig_pattern(struct options *o, int c, const char *arg)
{
	char *end;
	unsigned long v;
	if (c == OPT_MIG_PATTERN) {
		if ((o->mig_pattern = migpat_parse(arg)) < 0) {
			fprintf(stderr, "ibsmd: bad --migrate-pattern '%s' (random, consolidate, grouping, to-uniform)\n",
				arg);
			return -1;
		}
	} else if (c == OPT_INITIAL) {
		o->initial = !strcmp(arg, "uniform") ? 1 : !strcmp(arg, "random") ? 0 : -1;
		if (o->initial < 0) {
			fprintf(stderr, "ibsmd: bad --initial '%s' (random, uniform)\n", arg);
			return -1;
		}
	} else {
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || *end || end == arg || arg[0] == '-' || v < 1 ||
		    v > MIGPAT_POPULATION_MAX) {
			fprintf(stderr, "ibsmd: bad --population '%s' (1..%u, percent of the VFs)\n",
				arg, MIGPAT_POPULATION_MAX);
			return -1;
		}
		o->population = (uint32_t)v;
	}
	return 0;
}

/* The --migrate-pattern options' combinations; 0, or -1 said why. */
static int check_pattern_options(struct options *o)
{
	if ((o->population || o->initial >= 0) && o->mig_pattern < 0) {
		fprintf(stderr, "ibsmd: --population and --initial go with --migrate-pattern\n");
		return -1;
	}
	if (o->mig_pattern < 0)
		return 0;
	if (!o->offline) {
		fprintf(stderr, "ibsmd: --migrate-pattern needs --offline\n");
		return -1;
	}
	if (!o->population) {
		fprintf(stderr, "ibsmd: --migrate-pattern needs --population PCT\n");
		return -1;
	}
	if (o->mig_src || o->jobs || o->receivers) {
		fprintf(stderr, "ibsmd: --migrate-pattern does not combine with --migrate, --jobs or --receivers\n");
		return -1;
	}
	return 0;
}

/* The --jobs options' combinations; 0, or -1 said why. */
static int check_jobs_options(struct options *o)
{
	if (o->jobs && !o->offline) {
		fprintf(stderr, "ibsmd: --jobs needs --offline\n");
		return -1;
	}
	if ((o->first || o->cpus_per_node) && !o->jobs) {
		fprintf(stderr, "ibsmd: --first and --cpus-per-node go with --jobs\n");
		return -1;
	}
	if (o->seed_set && !o->jobs && !o->receivers && o->mig_pattern < 0) {
		fprintf(stderr, "ibsmd: --seed goes with --jobs, --receivers random:R or --migrate-pattern\n");
		return -1;
	}
	if (!o->seed_set)
		o->seed = 1;
	if (o->jobs && o->pattern && o->verify) {
		fprintf(stderr, "ibsmd: --pattern with --jobs is the jobs' pattern: not with --verify\n");
		return -1;
	}
	return 0;
}

/* --receivers and --receiver-weight: their combinations and syntax; 0, or -1 said why. */
static int check_receivers_options(struct options *o)
{
	char err[256], part[PART_NAME_LEN];
	uint32_t per_leaf;
	if (o->receiver_weight && !o->receivers) {
		fprintf(stderr, "ibsmd: --receiver-weight goes with --receivers\n");
		return -1;
	}
	if (!o->receiver_weight)
		o->receiver_weight = RECEIVER_WEIGHT_DEFAULT;
	if (!o->receivers)
		return 0;
	if (!o->verify) {
		fprintf(stderr, "ibsmd: --receivers goes with --verify\n");
		return -1;
	}
	if (!o->offline) {
		fprintf(stderr, "ibsmd: --receivers with --once or --emulate: not implemented yet (--offline)\n");
		return -1;
	}
	int random = receivers_spec(o->receivers, &per_leaf, part, sizeof(part),
				    err, sizeof(err));
	if (random < 0) {
		fprintf(stderr, "ibsmd: bad --receivers %s\n", err);
		return -1;
	}
	if (o->seed_set && !random) {
		fprintf(stderr, "ibsmd: --seed goes with --receivers random:R, not a file\n");
		return -1;
	}
	return 0;
}

/* --instance NAME's port: 0x and 1 to 16 hex digits (not 0), or CA:PORT
 * with PORT 1..254; 0, or -1 (not a port). */
static int instance_port(struct options *o, const char *name)
{
	const char *colon = strchr(name, ':');
	char *end;
	if (!colon) {
		size_t n = strncmp(name, "0x", 2) ? 0 : strspn(name + 2, HEX_DIGITS);
		if (n < 1 || n > GUID_DIGITS_MAX || name[2 + n])
			return -1;
		o->guid = strtoull(name + 2, NULL, 16);
		return o->guid ? 0 : -1;
	}
	size_t ca_len = (size_t)(colon - name);
	if (ca_len < 1 || ca_len >= sizeof(o->inst_ca) || strspn(name, CA_NAME_CHARS) != ca_len ||
	    colon[1] < '1' || colon[1] > '9')
		return -1;
	errno = 0;
	long port = strtol(colon + 1, &end, 10);
	if (errno || *end || port > PORT_NUM_MAX)
		return -1;
	snprintf(o->inst_ca, sizeof(o->inst_ca), "%.*s", (int)ca_len, name);
	o->ca = o->inst_ca;
	o->port = (int)port;
	return 0;
}

/* --instance NAME: the port, and the policy, state directory and socket
 * that -c, -S and -s did not name; 0, or -1 said why. */
static int apply_instance(struct options *o)
{
	const char *name = o->instance;
	if (o->ca || o->port || o->guid) {
		fprintf(stderr, "ibsmd: --instance names the port: no -d, -p or -g with it\n");
		return -1;
	}
	if (instance_port(o, name) < 0) {
		fprintf(stderr, "ibsmd: bad --instance '%s': a port GUID (0x0002c903000a0b0c) "
			"or CA:PORT (mlx5_0:1)\n", name);
		return -1;
	}
	if (!o->config) {
		snprintf(o->inst_config, sizeof(o->inst_config), CONFIG_DIR "/%s.yaml", name);
		if (access(o->inst_config, F_OK) == 0)
			o->config = o->inst_config;
	}
	if (!o->state_dir) {
		snprintf(o->inst_state, sizeof(o->inst_state), STATE_ROOT "/%s", name);
		o->state_dir = o->inst_state;
	}
	if (!o->socket) {	/* fits: a CA name is shorter than CFG_NAME_LEN */
		snprintf(o->inst_socket, sizeof(o->inst_socket), SOCKET_DIR "/%s.sock", name);
		o->socket = o->inst_socket;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "ca", required_argument, NULL, 'd' },
		{ "port", required_argument, NULL, 'p' },
		{ "guid", required_argument, NULL, 'g' },
		{ "once", no_argument, NULL, 'o' },
		{ "check", no_argument, NULL, 'n' },
		{ "routing", required_argument, NULL, 'R' },
		{ "state-dir", required_argument, NULL, 'S' },
		{ "socket", required_argument, NULL, 's' },
		{ "instance", required_argument, NULL, 'i' },
		{ "offline", required_argument, NULL, OPT_OFFLINE },
		{ "emulate", required_argument, NULL, OPT_EMULATE },
		{ "verify", no_argument, NULL, OPT_VERIFY },
		{ "pattern", required_argument, NULL, OPT_PATTERN },
		{ "dump-lfts", required_argument, NULL, OPT_DUMP_LFTS },
		{ "dump-topology", required_argument, NULL, OPT_DUMP_TOPO },
		{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
		{ "log-file", required_argument, NULL, 'f' },
		{ "dot", required_argument, NULL, OPT_DOT },
		{ "dump-sls", required_argument, NULL, OPT_DUMP_SLS },
		{ "migrate", required_argument, NULL, OPT_MIGRATE },
		{ "scheme", required_argument, NULL, OPT_SCHEME },
		{ "method", required_argument, NULL, OPT_METHOD },
		{ "import-opensm", required_argument, NULL, OPT_IMPORT },
		{ "import-to", required_argument, NULL, OPT_IMPORT_TO },
		{ "jobs", required_argument, NULL, OPT_JOBS },
		{ "first", required_argument, NULL, OPT_FIRST },
		{ "cpus-per-node", required_argument, NULL, OPT_CPUS },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "receivers", required_argument, NULL, OPT_RECEIVERS },
		{ "receiver-weight", required_argument, NULL, OPT_RECEIVER_WEIGHT },
		{ "migrate-pattern", required_argument, NULL, OPT_MIG_PATTERN },
		{ "population", required_argument, NULL, OPT_POPULATION },
		{ "initial", required_argument, NULL, OPT_INITIAL },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		/* documented (ibsmd(8)), not built: refused */
		{ NULL, 0, NULL, 0 },
	};
	int c;
	char *end;
	memset(o, 0, sizeof(*o));
	o->log_level = -1;
	o->scheme = o->method = -1;
	o->mig_pattern = o->initial = -1;
	while ((c = getopt_long(argc, argv, "c:d:p:g:onR:S:s:i:f:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': o->config = optarg; break;
		case 'd': o->ca = optarg; break;
		case 'p':
			errno = 0;
			o->port = (int)strtol(optarg, &end, 10);
			if (errno || *end || o->port < 1 || o->port > 254) {
				fprintf(stderr, "ibsmd: bad port number '%s'\n", optarg);
				return -1;
			}
			break;
		case 'g':
			errno = 0;
			o->guid = strtoull(optarg, &end, 16);
			if (errno || *end || !o->guid) {
				fprintf(stderr, "ibsmd: bad GUID '%s'\n", optarg);
				return -1;
			}
			break;
		case 'o': o->once = 1; break;
		case 'n': o->check = 1; break;
		case 'R': o->routing = optarg; break;
		case 'S': o->state_dir = optarg; break;
		case 's': o->socket = optarg; break;
		case 'f': o->log_file = optarg; break;
		case 'i': o->instance = optarg; break;
		case OPT_OFFLINE: o->offline = optarg; break;
		case OPT_EMULATE: o->emulate = optarg; break;
		case OPT_VERIFY: o->verify = 1; break;
		case OPT_PATTERN: o->pattern = optarg; break;
		case OPT_DUMP_LFTS: o->dump_lfts = optarg; break;
		case OPT_DUMP_TOPO: o->dump_topology = optarg; break;
		case OPT_DOT: o->dot = optarg; break;
		case OPT_DUMP_SLS: o->dump_sls = optarg; break;
		case OPT_IMPORT:
			if (!o->import_paths)
				o->import_paths = calloc((size_t)argc, sizeof(char *));
			if (!o->import_paths) {
				fprintf(stderr, "ibsmd: out of memory\n");
				return -1;
			}
			o->import_paths[o->n_import++] = optarg;
			break;
		case OPT_IMPORT_TO: o->import_to = optarg; break;
		case OPT_JOBS: o->jobs = optarg; break;
		case OPT_RECEIVERS: o->receivers = optarg; break;
		case OPT_FIRST:
		case OPT_CPUS:
		case OPT_SEED:
		case OPT_RECEIVER_WEIGHT:
			if (parse_jobs_number(o, c, optarg) < 0)
				return -1;
			break;
		case OPT_LOG_LEVEL:
			o->log_level = log_level_parse(optarg);
			if (o->log_level < 0) {
				fprintf(stderr, "ibsmd: bad log level '%s' (error, warn, notice, info, debug)\n",
					optarg);
				return -1;
			}
			break;
		case OPT_MIGRATE:
			/* two arguments: SRC is optarg, DST the next word */
			if (optind >= argc || argv[optind][0] == '-') {
				fprintf(stderr, "ibsmd: --migrate needs SRC and DST\n");
				return -1;
			}
			o->mig_src = optarg;
			o->mig_dst = argv[optind++];
			break;
		case OPT_SCHEME:
			if ((o->scheme = mig_scheme_parse(optarg)) < 0) {
				fprintf(stderr, "ibsmd: bad scheme '%s' (prepopulated, dynamic)\n",
					optarg);
				return -1;
			}
			break;
		case OPT_METHOD:
			if ((o->method = mig_method_parse(optarg)) < 0) {
				fprintf(stderr, "ibsmd: bad method '%s' (ftreeminrc, itrc, full)\n",
					optarg);
				return -1;
			}
			break;
		case OPT_MIG_PATTERN:
		case OPT_POPULATION:
		case OPT_INITIAL:
			if (parse_mig_pattern(o, c, optarg) < 0)
				return -1;
			break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf("ibsmd %s\n", IBSMD_VERSION); exit(0);
		default: usage(stderr); return -1;
		}
	}
	/* --import-opensm A B C: the words after the first are PATHs too */
	while (o->import_paths && optind < argc)
		o->import_paths[o->n_import++] = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "ibsmd: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (o->instance && apply_instance(o) < 0)
		return -1;
	if (!o->import_paths != !o->import_to) {
		fprintf(stderr, "ibsmd: --import-opensm PATH... and --import-to DIR go together\n");
		return -1;
	}
	if (o->offline && o->once) {
		fprintf(stderr, "ibsmd: --offline and --once do not combine\n");
		return -1;
	}
	if (o->emulate && o->offline) {
		fprintf(stderr, "ibsmd: --emulate and --offline do not combine\n");
		return -1;
	}
	if (o->mig_src && !o->offline) {
		fprintf(stderr, "ibsmd: --migrate needs --offline (live migration: ibsmctl vm migrate)\n");
		return -1;
	}
	if ((o->scheme >= 0 || o->method >= 0) && !o->mig_src) {
		fprintf(stderr, "ibsmd: --scheme and --method go with --migrate\n");
		return -1;
	}
	if (o->scheme < 0)
		o->scheme = MIG_DYNAMIC;
	if (o->method < 0)
		o->method = MIG_FTREEMINRC;
	if (o->verify && !o->once && !o->offline && !o->emulate) {
		fprintf(stderr, "ibsmd: --verify needs --once, --offline or --emulate\n");
		return -1;
	}
	if (o->dot && !o->offline) {
		fprintf(stderr, "ibsmd: --dot needs --offline (a running daemon: ibsmctl topology --dot)\n");
		return -1;
	}
	if (o->dump_sls && !o->offline) {
		fprintf(stderr, "ibsmd: --dump-sls needs --offline (a running daemon answers PathRecords)\n");
		return -1;
	}
	if (check_pattern_options(o) < 0 || check_jobs_options(o) < 0)
		return -1;
	if (o->pattern && !o->verify && !o->jobs) {
		fprintf(stderr, "ibsmd: --pattern goes with --verify or --jobs\n");
		return -1;
	}
	if (o->pattern && !o->offline) {
		fprintf(stderr, "ibsmd: --pattern with --once or --emulate: not implemented yet (--offline)\n");
		return -1;
	}
	return check_receivers_options(o);
}

/* The policy file: -c, else the default one if it exists, else NULL. */
static const char *config_path(const struct options *o)
{
	if (o->config)
		return o->config;
	return access(DEFAULT_CONFIG, F_OK) == 0 ? DEFAULT_CONFIG : NULL;
}

static int load_config(struct config *cfg, const struct options *o)
{
	char err[1024];
	config_defaults(cfg);
	const char *path = config_path(o);
	if (path && config_load(cfg, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: %s\n", err);
		return -1;
	}
	if (o->routing && config_set_engines(cfg, o->routing, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: -R: %s\n", err);
		return -2;
	}
	if (o->routing && config_engine_sls_conflict(cfg, err, sizeof(err))) {
		fprintf(stderr, "ibsmd: -R %s: %s\n", o->routing, err);
		return -1;
	}
	if (o->state_dir)
		snprintf(cfg->state_dir, sizeof(cfg->state_dir), "%s", o->state_dir);
	if (o->ca) {
		snprintf(cfg->port_ca, sizeof(cfg->port_ca), "%s", o->ca);
		cfg->port_guid = 0;
	}
	if (o->port) {
		cfg->port_num = o->port;
		cfg->port_guid = 0;
	}
	if (o->guid) {
		cfg->port_guid = o->guid;
		cfg->port_ca[0] = '\0';
		cfg->port_num = 0;
	}
	return 0;
}

/* ---- --verify ---- */

/*
 * --emulate --verify: the fabric of the topology file with the LIDs, port
 * states and LFTs the emulated devices hold now, not the SM's memory.  A
 * port that is not Active forwards nothing: its link counts as down.
 */
static int verify_emulated(const char *topo, const struct emu *emu,
			   const char *engine)
{
	char err[1024];
	struct fabric f;
	struct lft_tables t = { 0 };
	int rc = 1;
	fabric_init(&f);
	if (topo_load(&f, topo, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: %s\n", err);
		goto out;
	}
	f.lmc = 0;
	for (uint32_t i = 0; i < f.n_ports; i++) {
		struct fab_port *p = &f.ports[i];
		uint64_t guid = f.nodes[p->node].guid;
		p->lid = 0;
		if (emu_port_state(emu, guid, p->num) != PORT_ACTIVE)
			p->phys_state = 0;
		if (!fabric_is_endport(&f, i))
			continue;
		int lid = emu_port_lid(emu, guid, p->num);
		int lmc = emu_port_lmc(emu, guid, p->num);
		p->lid = lid > 0 ? (uint32_t)lid : 0;
		if (lmc > f.lmc && f.nodes[p->node].type != FAB_SWITCH)
			f.lmc = (uint8_t)lmc;
	}
	if (fabric_index_lids(&f) < 0 || lft_tables_alloc(&t, &f) < 0) {
		fprintf(stderr, "ibsmd: verify: out of memory\n");
		goto out;
	}
	for (uint32_t r = 0; r < t.n_sw; r++) {
		uint64_t guid = f.nodes[t.sw_node[r]].guid;
		int top = emu_lft_top(emu, guid);
		for (uint32_t lid = 1; lid <= t.max_lid && (int)lid <= top; lid++) {
			int e = emu_lft_entry(emu, guid, lid);
			lft_row(&t, r)[lid] = e < 0 ? LFT_DROP : (uint8_t)e;
		}
	}
	rc = verify_tables(stdout, &f, &t, NULL, engine, "the emulated switches' LFTs",
			   0, NULL, NULL);
	if (rc < 0) {
		fprintf(stderr, "ibsmd: verify: out of memory\n");
		rc = 1;
	}
out:
	lft_tables_free(&t);
	fabric_free(&f);
	return rc;
}

/*
 * -f's file opened again by its name: logrotate moved it (SIGUSR1; SIGHUP
 * too, as OpenSM does).  One that cannot be opened: the old one stays.
 */
static void reopen_log(const char *sig)
{
	char err[1024];
	if (log_reopen_file(err, sizeof(err)) < 0)
		log_err("%s: %s: still writing to the file opened before", sig, err);
}

static void on_sigusr1(evutil_socket_t sig, short what, void *arg)
{
	reopen_log("SIGUSR1");
}

static void on_sighup(evutil_socket_t sig, short what, void *arg)
{
	struct sm *sm = arg;
	char err[1024];
	reopen_log("SIGHUP");
	if (sm_reload(sm, 0, err, sizeof(err)) < 0)
		log_err("SIGHUP: policy not reloaded: %s", err);
	sweeper_request_heavy(sm, "SIGHUP");
}

/*
 * SIGINT and SIGTERM.  The loop may be blocked when one comes: opening the
 * umad device under umad2sim waits for ibsim's answer, and so does closing
 * the issm device at the end; umad2sim's exit handler joins a receiver
 * thread that may never return.  So the handler (any thread) writes the
 * signal number to two pipes: the loop stops when it reads the first, and
 * the stop guard, a thread blocked on the second, ends the process
 * STOP_GUARD_MS later if it is still there.  The guard is also started
 * when the loop ends on its own (--once).  Safe: every state file is
 * written in the loop and replaced atomically (synced, renamed) when it
 * changes, so an end at any moment leaves the old file or the new one,
 * never a part (a temporary file is removed at the next start); the
 * kernel releases the umad fds and IsSM at exit.  The watcher thread is
 * detached and never joined.
 */
#define STOP_GUARD_MS 600

static int stop_pipe[2] = { -1, -1 };	/* handler -> loop */
static int guard_pipe[2] = { -1, -1 };	/* handler or main -> guard */
static int stop_rc;			/* the guard's exit status */

static void on_stop_signal(int sig)
{
	int e = errno;
	unsigned char b = (unsigned char)sig;
	/* a full pipe (EAGAIN) already holds a byte: nothing to do */
	ssize_t r = write(stop_pipe[1], &b, 1);
	if (guard_pipe[1] >= 0)
		r = write(guard_pipe[1], &b, 1);
	(void)r;
	errno = e;
}

static void *stop_guard(void *arg)
{
	(void)arg;
	unsigned char b;
	while (read(guard_pipe[0], &b, 1) < 0 && errno == EINTR)
		;
	struct timespec ts = { STOP_GUARD_MS / 1000, (STOP_GUARD_MS % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	log_warn("shutdown: not done %d ms after it began (the umad device or ibsim"
		 " does not answer); the state files are complete: exiting without waiting",
		 STOP_GUARD_MS);
	_exit(__atomic_load_n(&stop_rc, __ATOMIC_ACQUIRE));
}

/* The loop ended on its own: the guard counts from now, exit status rc. */
static void stop_guard_arm(int rc)
{
	unsigned char b = 0;
	__atomic_store_n(&stop_rc, rc, __ATOMIC_RELEASE);
	if (guard_pipe[1] >= 0 && write(guard_pipe[1], &b, 1) < 0)
		return;	/* full: a signal started it already */
}

static int open_pipe(int p[2])
{
	if (pipe(p) < 0 || fcntl(p[0], F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(p[1], F_SETFD, FD_CLOEXEC) < 0)
		return -1;
	return fcntl(p[1], F_SETFL, O_NONBLOCK);
}

/* The pipes, the handler and (with guard) the guard thread; 0 or -1. */
static int stop_signals_init(int guard)
{
	pthread_t t;
	if (open_pipe(stop_pipe) < 0 || fcntl(stop_pipe[0], F_SETFL, O_NONBLOCK) < 0)
		return -1;
	if (guard && (open_pipe(guard_pipe) < 0 ||
		      pthread_create(&t, NULL, stop_guard, NULL) != 0))
		return -1;
	if (guard)
		pthread_detach(t);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0)
		return -1;
	return 0;
}

static void on_stop_pipe(evutil_socket_t fd, short what, void *arg)
{
	struct sm *sm = arg;
	unsigned char b;
	if (read(fd, &b, 1) != 1 || sm->stopping)
		return;
	log_notice("signal %d: stopping", (int)b);
	sdn_stopping();
	sm->stopping = 1;
	event_base_loopbreak(sm->base);
}

/*
 * The run's exit status once the loop is over: what sm_stop() said (a
 * fatal stop: SM_EXIT_FAILURE or SM_EXIT_RESOURCES, so that systemd's
 * Restart=on-failure starts the daemon again; --once: its outcome), 0
 * for a stop by SIGINT or SIGTERM, and SM_EXIT_FAILURE for a loop that
 * ended by itself (nothing left to wait for, or an error of the loop's
 * own): a daemon never ends so on purpose.
 */
static int exit_status(const struct sm *sm, int looped)
{
	if (sm->exit_code)
		return sm->exit_code;
	if (sm->stopping)
		return 0;
	log_err("the event loop ended by itself (%s)", looped < 0 ?
		"an error of the loop" : "nothing left to wait for");
	return SM_EXIT_FAILURE;
}

static int run_fabric(struct config *cfg, const struct options *o)
{
	char err[1024];
	struct sm *sm = calloc(1, sizeof(*sm));
	struct event_base *base = event_base_new();
	struct event *sigs[3] = { NULL };
	struct event *watchdog = NULL;	/* WATCHDOG=1 (sdnotify.h) */
	struct emu *emu = NULL;
	struct oneshot os = { 0 };
	int rc = 1;
	if (!sm || !base) {
		fprintf(stderr, "ibsmd: out of memory\n");
		goto out;
	}
	sm->cfg = *cfg;
	if (config_path(o))
		snprintf(sm->config_path, sizeof(sm->config_path), "%s", config_path(o));
	sm->log_level_override = o->log_level;
	sm->routing_override = o->routing;
	if (o->once || o->dump_lfts || o->dump_topology) {
		os.once = o->once;
		os.verify = o->verify;
		os.dump_lfts = o->dump_lfts;
		os.dump_topology = o->dump_topology;
		oneshot_watch(sm, &os);
	}
	if (sm_init(sm, base, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: %s\n", err);
		goto out;
	}
	if (!o->once) {
		sm->socket_path = o->socket ? o->socket : CONTROL_DEFAULT_SOCKET;
		sm->ctl = control_open(base, sm->socket_path, sm_control, sm, err, sizeof(err));
		if (!sm->ctl ||
		    control_set_group(sm->ctl, cfg->control_gid, err, sizeof(err)) < 0) {
			fprintf(stderr, "ibsmd: control socket: %s\n", err);
			goto out;
		}
	}
	/* before the transport opens: umad2sim may block there */
	if (stop_signals_init(!o->emulate) < 0) {
		fprintf(stderr, "ibsmd: signals: %s\n", strerror(errno));
		goto out;
	}
	sigs[0] = event_new(base, stop_pipe[0], EV_READ | EV_PERSIST, on_stop_pipe, sm);
	sigs[1] = evsignal_new(base, SIGHUP, on_sighup, sm);
	sigs[2] = evsignal_new(base, SIGUSR1, on_sigusr1, sm);
	for (int i = 0; i < 3; i++)
		if (sigs[i])
			event_add(sigs[i], NULL);
	signal(SIGPIPE, SIG_IGN);
	if (!o->once && sdn_watchdog_start(base, &watchdog) < 0) {
		fprintf(stderr, "ibsmd: out of memory\n");
		goto out;
	}
	if (o->emulate) {
		struct fabric topo;
		fabric_init(&topo);
		if (topo_load(&topo, o->emulate, err, sizeof(err)) < 0) {
			fprintf(stderr, "ibsmd: %s\n", err);
			goto out;
		}
		emu = emu_new(&topo, err, sizeof(err));
		fabric_free(&topo);
		if (!emu || sm_start_emulated(sm, emu, err, sizeof(err)) < 0) {
			fprintf(stderr, "ibsmd: emulator: %s\n", err);
			goto out;
		}
	} else if (sm_start(sm, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: %s\n", err);
		goto out;
	}
	int looped = event_base_dispatch(base);
	rc = exit_status(sm, looped);
	if (o->verify && emu && verify_emulated(o->emulate, emu, sm->sub.engine) != 0)
		rc = 1;
out:
	if (sm) {
		if (sm->ctl)
			control_close(sm->ctl);
		sm->ctl = NULL;	/* a VM command ended by the shutdown answers nobody */
		stop_guard_arm(rc);
		sm_shutdown(sm);
	}
	if (emu) {
		uint32_t nv = emu_violations(emu);
		for (uint32_t i = 0; i < nv && i < 20; i++)
			log_err("emulator: spec violation: %s", emu_violation(emu, i));
		if (nv) {
			log_err("emulator: %u spec violations by the SM", nv);
			if (rc == 0)
				rc = 1;
		}
		emu_free(emu);
	}
	if (watchdog)
		event_free(watchdog);
	for (int i = 0; i < 3; i++)
		if (sigs[i])
			event_free(sigs[i]);
	if (base)
		event_base_free(base);
	free(sm);
	return rc;
}

/* --import-opensm: the translation (sm/import/), no fabric. */
static int import_opensm(struct options *o)
{
	char err[1024];
	int rc = osm_import(o->import_paths, o->n_import, o->import_to, stderr,
			    err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "ibsmd: import: %s\n", err);
	else
		printf("imported: %s/ibsmd.yaml (start ibsmd with -c %s/ibsmd.yaml -S %s)\n",
		       o->import_to, o->import_to, o->import_to);
	free(o->import_paths);
	return rc < 0 ? 1 : 0;
}

/*
 * security.m_key's secret file, when a level needs it: readable and well
 * formed, or absent (the start makes it); -1 after saying why.
 */
static int mkey_secret_ok(const struct config *cfg)
{
	char err[1024], path[4096];
	uint8_t secret[MKEYS_SECRET_LEN];
	if (!cfg->mkey_protect)
		return 0;
	int rc = mkeys_secret_load(mkeys_secret_path(cfg, path, sizeof(path)), 0,
				   secret, err, sizeof(err));
	sodium_memzero(secret, sizeof(secret));
	if (rc < 0) {
		fprintf(stderr, "ibsmd: security.m_key: %s\n", err);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	struct config cfg;
	if (parse_args(argc, argv, &o) < 0)
		return 2;
	/*
	 * logrotate's SIGUSR1 may come while a restart loads the policy, before
	 * the loop's handler (on_sigusr1) is in place: not the end of the
	 * daemon.  The handler replaces this; exec'd programs get the default.
	 */
	signal(SIGUSR1, SIG_IGN);
	if (o.import_paths)
		return import_opensm(&o);
	log_take_libevent();
	int r = load_config(&cfg, &o);
	if (r == -1)	/* an OpenSM file is named so by config_load (sm/model/osmfile.h) */
		return EXIT_CONFIG;
	if (r == -2)
		return 2;
	/* the M_Key secret a fabric run uses: a bad one is bad configuration */
	if (!o.offline && mkey_secret_ok(&cfg) < 0)
		return EXIT_CONFIG;
	if (o.check) {
		/* as OpenBSD daemons' -n: the policy and the files it names */
		if (o.instance && o.guid)
			printf("instance %s: port GUID 0x%016" PRIx64 ", state %s, socket %s\n",
			       o.instance, o.guid, o.state_dir, o.socket);
		else if (o.instance)
			printf("instance %s: CA %s port %d, state %s, socket %s\n",
			       o.instance, o.ca, o.port, o.state_dir, o.socket);
		if (config_path(&o))
			printf("%s: policy OK\n", config_path(&o));
		else
			printf("no policy file (%s does not exist): the built-in defaults\n",
			       DEFAULT_CONFIG);
		return 0;
	}
	log_set_level(o.log_level >= 0 ? o.log_level : cfg.log_level);
	char err[1024];
	/* as an unusable -S or -s: said on stderr, exit 1 */
	if (o.log_file && log_open_file(o.log_file, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: %s\n", err);
		return 1;
	}
	if (nodemap_use_file(cfg.node_name_map, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: %s\n", err);
		return EXIT_CONFIG;
	}
	if (o.offline) {
		const struct offline_opts off = {
			.topo = o.offline, .dump_lfts = o.dump_lfts,
			.dump_topology = o.dump_topology, .dot = o.dot,
			.dump_sls = o.dump_sls,
			.verify = o.verify, .pattern = o.pattern,
			.mig_src = o.mig_src, .mig_dst = o.mig_dst,
			.scheme = o.scheme, .method = o.method,
			.jobs = o.jobs, .first = o.first,
			.cpus_per_node = o.cpus_per_node, .seed = o.seed,
			.receivers = o.receivers,
			.receiver_weight = o.receiver_weight,
			.mig_pattern = o.mig_pattern, .population = o.population,
			.initial_uniform = o.initial == 1,
		};
		return offline_run(&cfg, &off);
	}
	return run_fabric(&cfg, &o);
}
