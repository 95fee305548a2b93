/*
 * ibsmctl: sends one command to a running ibsmd over its control socket
 * and prints the reply, as text or (--json) as the JSON document.
 */
#include "sm/ibsmctl/ctlclient.h"
#include "sm/ibsmctl/ctlrender.h"
#include "sm/ibsmctl/ctlstatus.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* IBSMD_VERSION: the top-level VERSION file, passed by the Makefile (-D) */
#define IBSMCTL_VERSION	"ibsmctl " IBSMD_VERSION
#define REPLY_TIMEOUT_MS	30000
#define JOB_WAIT_DEFAULT_S	60	/* job start --wait without --timeout */
#define JOB_WAIT_SLACK_MS	5000	/* the daemon's answer after its timeout */
/* a pattern file's text travels in one request line (CONTROL_MAX_LINE) */
#define JOB_PATTERN_FILE_MAX	(CONTROL_MAX_LINE - 4096)

static void usage(FILE *fp)
{
	fputs("usage: ibsmctl [-s SOCKET] [--json] COMMAND [args...]\n"
	    "  -s, --socket PATH  control socket (default $IBSMD_SOCKET, else "
	    CONTROL_DEFAULT_SOCKET ")\n"
	    "  -j, --json         print the reply as one JSON document\n"
	    "  -h, --help / -V, --version\n"
	    "commands:\n"
	    "  status [--verbose]     a screenful: state, errors until they clear, the last\n"
	    "                         heavy sweep, counts; --verbose: every counter\n"
	    "  topology [--dot|--svg] switches, hosts, links, routes per link (--dot: Graphviz,\n"
	    "                         --svg: drawn by the daemon)\n"
	    "  forget LINK            stop listing a failed link: NAME[PORT] of an end, or\n"
	    "                         NAME[PORT]--NAME[PORT] (NAME: as topology prints it, or 0xGUID)\n"
	    "  sweep [--heavy]        request a sweep\n"
	    "  reroute                recompute and push routes\n"
	    "  reload [--force]       re-read the policy (same as SIGHUP); --force: even\n"
	    "                         an empty one, or one dropping the SM_Key or partitions\n"
	    "  subscribers            SA event subscriptions\n"
	    "  vm list                the VMs: name, LID, vGUID, hypervisor, VF\n"
	    "  vm create NAME --hypervisor H [--vf N] [--guid G] [--weight W] [--shared-lid]\n"
	    "  vm destroy NAME\n"
	    "  vm migrate NAME --to H [--vf N] [--prepare | --commit]\n"
	    "                         H: a vSwitch or its PF, node description or GUID\n"
	    "  lids                   GUID -> LID (and vLID) table\n"
	    "  partitions             partitions (P_Key, policy, SL, full/limited members)\n"
	    "                         and P_Key violations (traps 257) by port\n"
	    "  routes SWITCH          one switch's LFT (GUID, LID or node description)\n"
	    "  verify                 read the LFTs back from the switches and check them\n"
	    "  groups                 multicast groups: MGID, MLID, P_Key, Q_Key, MTU, rate,\n"
	    "                         SL; members (port GUID, LID, JoinState)\n"
	    "  metrics                the Prometheus text exposition format\n"
	    "  perfmgr [sweep]        the performance manager; sweep: read every port's\n"
	    "                         counters now (ports read, GMPs, ms)\n"
	    "  hotspots               dFtree's end-point hot-spots and their contributors\n"
	    "  job start ID --nodes HOSTLIST [--pattern ring|2dnn|3dnn|random:K|alltoall|FILE]\n"
	    "            [--wait [--timeout S]]\n"
	    "                         route a job's pattern (routing.jobs); HOSTLIST as Slurm's\n"
	    "                         (H-[0-3,7]); --wait: \"ready\" once every LFT Set is answered\n"
	    "  job end ID             its entries back to the base routes, its load released\n"
	    "  job list               the live jobs\n"
	    "  job loads [ID]         each job's largest link load; with ID its links\n"
	    "  health [--save-baseline [FILE]]\n"
	    "                         unhealthy, flapping, degraded and hot ports, worst\n"
	    "                         first, and the differences from the fabric baseline;\n"
	    "                         --save-baseline: save the fabric now as the baseline\n"
	    "                         (in FILE too; default STATE_DIR/baseline)\n", fp);
}

static const char *socket_path(const char *opt)
{
	const char *env = getenv("IBSMD_SOCKET");

	if (opt != NULL)
		return opt;
	if (env != NULL && env[0] != '\0')
		return env;
	return CONTROL_DEFAULT_SOCKET;
}

/*
 * A failure: the reason on stderr and, with --json, {"error": reason} on
 * stdout.  Returns the exit status, 1.
 */
static int print_error(const char *why, int as_json)
{
	fprintf(stderr, "ibsmctl: %s\n", why);
	if (as_json) {
		json_t *doc = json_pack("{s:s}", "error", why);
		if (doc == NULL || json_dumpf(doc, stdout, JSON_INDENT(2)) != 0)
			fputs("{\"error\": \"(not UTF-8)\"}", stdout);
		putchar('\n');
		json_decref(doc);
		fflush(stdout);
	}
	return 1;
}

/*
 * A command line usage error: exit 2, or with --json (anywhere on the
 * line) the error document and exit 1, as every --json failure.
 */
static int usage_error(const char *why, int as_json)
{
	if (as_json)
		return print_error(why, 1);
	fprintf(stderr, "ibsmctl: %s\n", why);
	usage(stderr);
	return 2;
}

static int wants_json(int argc, char *argv[])
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j"))
			return 1;
	return 0;
}

/* ---- the command line into a typed request (sm/base/ctlproto.h) ---- */

enum opt_kind { OPT_FLAG, OPT_STRING, OPT_INT };

struct cmd_opt {
	const char *opt;	/* on the command line */
	const char *field;	/* in the request */
	enum opt_kind kind;
};

static const struct cmd_opt sweep_opts[] = {
	{ "--heavy", "heavy", OPT_FLAG }, { NULL, NULL, 0 } };
static const struct cmd_opt reload_opts[] = {
	{ "--force", "force", OPT_FLAG }, { NULL, NULL, 0 } };
static const struct cmd_opt topology_opts[] = {
	{ "--dot", "dot", OPT_FLAG }, { "--svg", "svg", OPT_FLAG }, { NULL, NULL, 0 } };
static const struct cmd_opt vm_create_opts[] = {
	{ "--hypervisor", "hypervisor", OPT_STRING }, { "--vf", "vf", OPT_INT },
	{ "--guid", "guid", OPT_STRING }, { "--weight", "weight", OPT_INT },
	{ "--shared-lid", "shared_lid", OPT_FLAG }, { NULL, NULL, 0 } };
static const struct cmd_opt vm_migrate_opts[] = {
	{ "--to", "to", OPT_STRING }, { "--vf", "vf", OPT_INT },
	{ "--prepare", "prepare", OPT_FLAG }, { "--commit", "commit", OPT_FLAG },
	{ NULL, NULL, 0 } };
static const struct cmd_opt no_opts[] = { { NULL, NULL, 0 } };

/*
 * The commands with arguments; any other takes none.  A command the
 * daemon does not know is sent as it is, and the daemon says so.
 */
static const struct cmd_spec {
	const char *name;
	const struct cmd_opt *opts;
	const char *only;	/* for "unknown argument": what it takes */
} specs[] = {
	{ "sweep", sweep_opts, "only --heavy" },
	{ "topology", topology_opts, "only --dot or --svg" },
	{ "reload", reload_opts, "only --force" },
};

/* Options from argv[from..argc) into req by opts; -1 with msg. */
static int parse_opts(json_t *req, const char *what, const struct cmd_opt *opts,
		      const char *only, char **argv, int from, int argc,
		      char *msg, size_t len)
{
	for (int i = from; i < argc; i++) {
		const struct cmd_opt *o = opts;
		while (o->opt && strcmp(o->opt, argv[i]))
			o++;
		if (!o->opt) {
			if (only)
				snprintf(msg, len, "%s: unknown argument '%s' (%s)", what,
				    argv[i], only);
			else
				snprintf(msg, len, "%s: unknown argument '%s'", what,
				    argv[i]);
			return -1;
		}
		if (o->kind == OPT_FLAG) {
			json_object_set_new(req, o->field, json_true());
			continue;
		}
		if (i + 1 >= argc) {
			snprintf(msg, len, "%s: %s wants a value", what, o->opt);
			return -1;
		}
		const char *v = argv[++i];
		if (o->kind == OPT_STRING) {
			if (json_object_set_new(req, o->field, json_string(v)) < 0) {
				snprintf(msg, len, "%s: %s: not UTF-8", what, o->opt);
				return -1;
			}
			continue;
		}
		char *end;
		long long n = strtoll(v, &end, 10);
		if (!*v || *end) {
			snprintf(msg, len, "%s: %s wants a number", what, o->opt);
			return -1;
		}
		json_object_set_new(req, o->field, json_integer(n));
	}
	return 0;
}

/* vm OP [NAME] [options]: the daemon checks the name and what OP takes. */
static int parse_vm(json_t *req, char **argv, int argc, char *msg, size_t len)
{
	if (argc == 0)
		return 0;	/* the daemon answers with the usage */
	json_object_set_new(req, "op", json_string(argv[0]));
	if (!strcmp(argv[0], "list")) {
		if (argc > 1) {
			snprintf(msg, len, "vm list takes no arguments");
			return -1;
		}
		return 0;
	}
	const struct cmd_opt *opts = !strcmp(argv[0], "create") ? vm_create_opts :
	    !strcmp(argv[0], "migrate") ? vm_migrate_opts :
	    !strcmp(argv[0], "destroy") ? no_opts : NULL;
	if (!opts)
		return 0;	/* not an operation: the daemon refuses it */
	if (argc == 1)
		return 0;	/* no name: the daemon says what it wants */
	json_object_set_new(req, "name", json_string(argv[1]));
	char what[32];
	snprintf(what, sizeof(what), "vm %s", argv[0]);
	return parse_opts(req, what, opts, NULL, argv, 2, argc, msg, len);
}

static const char *const job_patterns[] = { "ring", "2dnn", "3dnn", "alltoall", NULL };

/*
 * --pattern P: a pattern's name is sent as "pattern"; anything else is a
 * file of flows ("SRC DST" rank lines) read here and sent as "text"
 * (the daemon does not read the client's files).
 */
static int job_pattern_opt(json_t *req, const char *p, char *msg, size_t len)
{
	int named = !strncmp(p, "random:", 7);
	for (int i = 0; !named && job_patterns[i]; i++)
		named = !strcmp(p, job_patterns[i]);
	if (named) {
		json_object_set_new(req, "pattern", json_string(p));
		return 0;
	}
	FILE *fp = fopen(p, "r");
	if (!fp) {
		snprintf(msg, len, "job start: --pattern %s: not ring, 2dnn, 3dnn, "
		    "random:K or alltoall, and not a file: %s", p, strerror(errno));
		return -1;
	}
	char *text = malloc(JOB_PATTERN_FILE_MAX + 1);
	size_t n = text ? fread(text, 1, JOB_PATTERN_FILE_MAX + 1, fp) : 0;
	int bad = !text || ferror(fp) || n > JOB_PATTERN_FILE_MAX;
	fclose(fp);
	if (bad) {
		snprintf(msg, len, "job start: --pattern %s: %s", p, !text ?
		    "out of memory" : n > JOB_PATTERN_FILE_MAX ?
		    "longer than a request may carry (60 KiB)" : "cannot be read");
		free(text);
		return -1;
	}
	text[n] = '\0';
	json_t *s = json_string(text);
	free(text);
	if (!s) {
		snprintf(msg, len, "job start: --pattern %s: not UTF-8 text", p);
		return -1;
	}
	json_object_set_new(req, "text", s);
	return 0;
}

static const struct cmd_opt job_start_opts[] = {
	{ "--nodes", "nodes", OPT_STRING }, { "--pattern", "pattern", OPT_STRING },
	{ "--wait", "wait", OPT_FLAG }, { "--timeout", "timeout", OPT_INT },
	{ NULL, NULL, 0 } };

/* job OP [ID] [options]: the daemon checks the ID and the rest. */
static int parse_job(json_t *req, char **argv, int argc, char *msg, size_t len)
{
	if (argc == 0)
		return 0;	/* the daemon answers with the usage */
	json_object_set_new(req, "op", json_string(argv[0]));
	int takes_id = !strcmp(argv[0], "start") || !strcmp(argv[0], "end") ||
	    !strcmp(argv[0], "loads");
	if (argc == 1 || !takes_id) {
		if (argc > 1) {
			snprintf(msg, len, "job %s takes no arguments", argv[0]);
			return -1;
		}
		return 0;
	}
	json_object_set_new(req, "id", json_string(argv[1]));
	if (strcmp(argv[0], "start")) {
		if (argc > 2) {
			snprintf(msg, len, "job %s takes one ID", argv[0]);
			return -1;
		}
		return 0;
	}
	if (parse_opts(req, "job start", job_start_opts, NULL, argv, 2, argc, msg,
	    len) < 0)
		return -1;
	const char *pat = json_string_value(json_object_get(req, "pattern"));
	if (pat) {
		char *p = strdup(pat);
		json_object_del(req, "pattern");
		int rc = p ? job_pattern_opt(req, p, msg, len) : -1;
		free(p);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* How long to wait for the reply: job start --wait waits for the writes. */
static int reply_timeout_ms(const json_t *req)
{
	if (!json_is_true(json_object_get(req, "wait")))
		return REPLY_TIMEOUT_MS;
	const json_t *t = json_object_get(req, "timeout");
	json_int_t s = t ? json_integer_value(t) : JOB_WAIT_DEFAULT_S;
	if (s < 1 || s > 3600)
		return REPLY_TIMEOUT_MS;	/* the daemon refuses it at once */
	return (int)s * 1000 + JOB_WAIT_SLACK_MS;
}

/*
 * health [--save-baseline [FILE]]: "save_baseline" is FILE made absolute
 * (the daemon's working directory is not ours), or true for the daemon's
 * default, STATE_DIR/baseline.
 */
static int parse_health(json_t *req, char **argv, int argc, char *msg,
			size_t len)
{
	static const char usage_health[] = "usage: health [--save-baseline [FILE]]";

	if (argc == 0)
		return 0;
	if (strcmp(argv[0], "--save-baseline") != 0 || argc > 2) {
		snprintf(msg, len, "%s", usage_health);
		return -1;
	}
	if (argc == 1) {
		json_object_set_new(req, "save_baseline", json_true());
		return 0;
	}
	const char *file = argv[1];
	char cwd[PATH_MAX], path[2 * PATH_MAX];
	if (file[0] == '\0' || file[0] == '-') {
		snprintf(msg, len, "%s", usage_health);
		return -1;
	}
	if (file[0] == '/') {
		snprintf(path, sizeof(path), "%s", file);
	} else if (getcwd(cwd, sizeof(cwd)) == NULL) {
		snprintf(msg, len, "health: cannot make %s absolute: %s", file,
		    strerror(errno));
		return -1;
	} else {
		snprintf(path, sizeof(path), "%s/%s", cwd, file);
	}
	if (json_object_set_new(req, "save_baseline", json_string(path)) < 0) {
		snprintf(msg, len, "health: %s: not UTF-8", file);
		return -1;
	}
	return 0;
}

/*
 * The request for COMMAND ARGS...: {"cmd": COMMAND, its fields}.  NULL
 * with msg for arguments the command does not take.
 */
static json_t *build_request(const char *cmd, char **argv, int argc,
			     char *msg, size_t len)
{
	json_t *req = json_pack("{s:s}", "cmd", cmd);
	int rc = 0;
	if (req == NULL) {
		snprintf(msg, len, "command '%s': not UTF-8 (or out of memory)", cmd);
		return NULL;
	}
	const struct cmd_spec *s = NULL;
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		if (!strcmp(specs[i].name, cmd))
			s = &specs[i];
	if (s) {
		rc = parse_opts(req, cmd, s->opts, s->only, argv, 0, argc, msg, len);
	} else if (!strcmp(cmd, "vm")) {
		rc = parse_vm(req, argv, argc, msg, len);
	} else if (!strcmp(cmd, "job")) {
		rc = parse_job(req, argv, argc, msg, len);
	} else if (!strcmp(cmd, "health")) {
		rc = parse_health(req, argv, argc, msg, len);
	} else if (!strcmp(cmd, "routes")) {
		if (argc > 1) {
			snprintf(msg, len, "usage: routes SWITCH (its GUID, LID or node description)");
			rc = -1;
		} else if (argc == 1) {
			json_object_set_new(req, "switch", json_string(argv[0]));
		}
	} else if (!strcmp(cmd, "perfmgr")) {
		if (argc > 1) {
			snprintf(msg, len, "usage: perfmgr [sweep]");
			rc = -1;
		} else if (argc == 1) {
			json_object_set_new(req, "op", json_string(argv[0]));
		}
	} else if (!strcmp(cmd, "forget")) {
		if (argc != 1) {
			snprintf(msg, len, "usage: forget LINK (NAME[PORT] or NAME[PORT]--NAME[PORT], as topology names it)");
			rc = -1;
		} else {
			json_object_set_new(req, "link", json_string(argv[0]));
		}
	} else if (argc > 0) {
		snprintf(msg, len, "%s takes no arguments", cmd);
		rc = -1;
	}
	if (rc < 0) {
		json_decref(req);
		return NULL;
	}
	return req;
}

/*
 * Prints a successful reply; returns the exit status: 0, or 1 when it
 * reports a failed check (verify's "result": "FAILED").
 */
static int print_reply(const json_t *reply, int as_json, int summary)
{
	if (as_json) {
		if (json_dumpf(reply, stdout, JSON_INDENT(2)) == 0)
			putchar('\n');
	} else if (summary) {
		status_print_summary(stdout, reply);
	} else {
		control_print_text(stdout, reply);
	}
	if (fflush(stdout) == EOF || ferror(stdout)) {
		perror("ibsmctl: stdout");
		return 1;
	}
	const char *result = json_string_value(json_object_get(reply, "result"));
	return result && !strcmp(result, "FAILED") ? 1 : 0;
}

int main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "socket",	required_argument,	NULL, 's' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "help",	no_argument,		NULL, 'h' },
		{ "version",	no_argument,		NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *sock = NULL;
	int as_json = wants_json(argc, argv), ch;
	char msg[256];

	opterr = 0;	/* usage_error() says it, as JSON with --json */
	/* '+': options end at COMMAND; what follows belongs to it. */
	while ((ch = getopt_long(argc, argv, "+:s:jhV", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			sock = optarg;
			break;
		case 'j':
			as_json = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			puts(IBSMCTL_VERSION);
			return 0;
		case ':':
			snprintf(msg, sizeof(msg), "option '%s' wants a value",
			    argv[optind - 1]);
			return usage_error(msg, as_json);
		default:
			if (optopt)
				snprintf(msg, sizeof(msg), "bad option '-%c'", optopt);
			else
				snprintf(msg, sizeof(msg), "bad option '%s'",
				    argv[optind - 1]);
			return usage_error(msg, as_json);
		}
	}
	if (optind >= argc)
		return usage_error("no command given", as_json);
	const char *cmd = argv[optind];
	char **args = calloc((size_t)argc, sizeof(*args));
	int nargs = 0, verbose = 0;
	if (args == NULL) {
		perror("ibsmctl");
		return 1;
	}
	/* "--json" after the command is taken as the option, too. */
	for (int i = optind + 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			as_json = 1;
		/* how to print it, the client's own: not sent */
		else if (!strcmp(cmd, "status") && !strcmp(argv[i], "--verbose"))
			verbose = 1;
		else
			args[nargs++] = argv[i];
	}
	/* what the command does not take is said as the daemon would: exit 1 */
	json_t *req = build_request(cmd, args, nargs, msg, sizeof(msg));
	free(args);
	if (req == NULL)
		return print_error(msg, as_json);

	char err[1024];
	const char *path = socket_path(sock);
	json_t *reply = control_call(path, req, reply_timeout_ms(req), err, sizeof(err));
	json_decref(req);
	if (reply == NULL)
		return print_error(err, as_json);
	int status;
	if (json_is_false(json_object_get(reply, "ok"))) {
		const char *why = json_string_value(json_object_get(reply,
		    "error"));
		status = print_error(why != NULL ? why :
		    "command rejected by ibsmd", as_json);
	} else {
		status = print_reply(reply, as_json, !strcmp(cmd, "status") && !verbose);
	}
	json_decref(reply);
	return status;
}
