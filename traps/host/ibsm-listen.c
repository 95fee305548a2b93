/*
 * ibsm-listen: a host's end of the SM's notices.  Subscribes with SA
 * InformInfo to the chosen traps, prints one JSON object per Report it
 * receives (the SA client answers each with a ReportResp), runs --exec
 * per notice, and checks its subscription every --check-interval seconds:
 * a 0-hop PortInfo Get of its own port gives the SM LID (a new SM means
 * subscribe again), and an InformInfoRecord query asks the SM whether it
 * still holds the subscription (an SM that forgot it, e.g. restarted
 * without its state, gets it again).  See ibsm-listen(8).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/mad.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mad/sa.h"
#include "mad/smp.h"
#include "mad/umad.h"
#include "sm/base/log.h"
#include "traps/notice.h"
#include "traps/host/saclient.h"

#define MAX_TRAPS	32
#define MAX_VGUIDS	7	/* GUID1..7 of the port's GUIDInfo block 0 */
#define PROBE_TIMEOUT_MS 1000

struct listener {
	struct event_base *base;
	struct mad_transport t;
	struct saclient *sc;
	uint16_t traps[MAX_TRAPS];
	int n_traps;
	const char *exec;
	long count_max;		/* 0: no limit */
	long count;
	int exit_code;
	int quitting;
	unsigned check_ms;
	uint32_t sm_lid;	/* the SM we subscribed with */
	int subscribed;		/* answers to the last round of Sets */
	int sub_pending;
	int check_pending;
	uint64_t probe_tid;	/* 0: no PortInfo Get out */
	int last_rereg;		/* PortInfo:ClientReregister at the last probe */
	struct event *check_ev, *probe_ev, *timeout_ev, *sig_int, *sig_term,
		*sig_chld;
	unsigned children;
	/* --hypervisor: the alias GUIDs this host manages on its port */
	int hypervisor;
	uint64_t vguids[MAX_VGUIDS];
	unsigned n_vguids;
	int vguids_set;		/* the SM at sm_lid holds them */
	int vg_pending;
};

/* The usage text: on stdout and exit 0 for --help, else stderr and 2. */
static void usage_to(FILE *fp, int status)
{
	fprintf(fp,
		"usage: ibsm-listen [-d CA] [-p PORT] [--trap N[,N...]|all] [--count N]\n"
		"                   [--timeout SEC] [--exec CMD] [--check-interval SEC]\n"
		"                   [--hypervisor [--vguid GUID]...]\n"
		"       ibsm-listen -h | --help\n");
	exit(status);
}

static void usage(void)
{
	usage_to(stderr, 2);
}

static int pending(void *arg)
{
	struct listener *l = arg;
	return saclient_inflight(l->sc) > 0 || l->probe_tid != 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void gid_str(const uint8_t gid[16], char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, gid, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

/* ---- notices ---- */

static void env_u(const char *name, unsigned long v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%lu", v);
	setenv(name, buf, 1);
}

/* The notice as JSON; the same fields go to --exec's environment. */
static json_t *notice_json(const struct notice *n)
{
	json_t *o = json_object();
	char g[64];
	json_object_set_new(o, "trap", json_integer(n->trap));
	json_object_set_new(o, "generic", json_boolean(n->generic));
	json_object_set_new(o, "type", json_integer(n->type));
	json_object_set_new(o, n->generic ? "producer_type" : "vendor_id",
			    json_integer(n->producer));
	json_object_set_new(o, "issuer_lid", json_integer(n->issuer_lid));
	gid_str(n->issuer_gid, g, sizeof(g));
	json_object_set_new(o, "issuer_gid", json_string(g));
	json_object_set_new(o, "time", json_real(now_s()));
	if (!n->generic)
		return o;
	if (n->trap >= TRAP_GID_IN_SERVICE && n->trap <= TRAP_MC_DELETED) {
		uint8_t gid[16];
		notice_get_gid(n, gid);
		gid_str(gid, g, sizeof(g));
		json_object_set_new(o, "gid", json_string(g));
	} else if (n->trap == TRAP_UNPATH || n->trap == TRAP_REPATH) {
		struct notice_path p;
		struct notice_lane ln;
		notice_get_path(n, &p);
		json_object_set_new(o, "wildcard",
				    json_boolean(p.flags & NPATH_WILDCARD));
		if (notice_get_lane(n, &ln) == 0) {
			/* move the QPs towards dlid's LIDs to sl: no path fields */
			json_object_set_new(o, "lane", json_true());
			json_object_set_new(o, "slid", json_integer(ln.slid));
			json_object_set_new(o, "dlid", json_integer(ln.dlid));
			json_object_set_new(o, "lmc", json_integer(ln.lmc));
			json_object_set_new(o, "sl", json_integer(ln.sl));
			return o;
		}
		if (!(p.flags & NPATH_WILDCARD)) {
			json_object_set_new(o, "slid", json_integer(p.slid));
			json_object_set_new(o, "dlid", json_integer(p.dlid));
			json_object_set_new(o, "sl", json_integer(p.sl));
			json_object_set_new(o, "mtu", json_integer(p.mtu));
			json_object_set_new(o, "rate", json_integer(p.rate));
			json_object_set_new(o, "pkey", json_integer(p.pkey));
			json_object_set_new(o, "packet_life",
					    json_integer(p.packet_life));
			json_object_set_new(o, "reversible",
				json_boolean(p.flags & NPATH_REVERSIBLE));
		}
		if ((p.flags & NPATH_VGUID) && (p.flags & NPATH_GIDS)) {
			/* a shared-LID VM's new mapping: its vGUID, its LID */
			char vg[24];
			uint64_t x = 0;
			for (int i = 8; i < 16; i++)
				x = x << 8 | p.dgid[i];
			snprintf(vg, sizeof(vg), "0x%016llx", (unsigned long long)x);
			json_object_set_new(o, "vguid", json_string(vg));
			json_object_set_new(o, "lid", json_integer(p.dlid));
		}
		if (p.flags & NPATH_GIDS) {
			gid_str(p.sgid, g, sizeof(g));
			json_object_set_new(o, "sgid", json_string(g));
			gid_str(p.dgid, g, sizeof(g));
			json_object_set_new(o, "dgid", json_string(g));
		}
	}
	return o;
}

/* In the child: every field of the JSON object as IBSM_<KEY>. */
static void export_env(json_t *o, const struct notice *n)
{
	const char *key;
	json_t *v;
	json_object_foreach(o, key, v) {
		char name[64], val[64];
		size_t i;
		snprintf(name, sizeof(name), "IBSM_%s", key);
		for (i = 5; name[i]; i++)
			if (name[i] >= 'a' && name[i] <= 'z')
				name[i] = (char)(name[i] - 'a' + 'A');
		if (json_is_integer(v))
			snprintf(val, sizeof(val), "%lld",
				 (long long)json_integer_value(v));
		else if (json_is_real(v))
			snprintf(val, sizeof(val), "%.3f", json_real_value(v));
		else if (json_is_boolean(v))
			snprintf(val, sizeof(val), "%d", json_is_true(v));
		else if (json_is_string(v))
			snprintf(val, sizeof(val), "%s", json_string_value(v));
		else
			continue;
		setenv(name, val, 1);
	}
	/* IBSM_LID: the LID the notice is about (DLID of a path, else the issuer) */
	json_t *dlid = json_object_get(o, "dlid");
	env_u("IBSM_LID", dlid ? (unsigned long)json_integer_value(dlid)
			       : n->issuer_lid);
}

static void run_exec(struct listener *l, json_t *o, const struct notice *n)
{
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "ibsm-listen: --exec: fork: %s\n", strerror(errno));
		return;
	}
	if (pid == 0) {
		export_env(o, n);
		execl("/bin/sh", "sh", "-c", l->exec, (char *)NULL);
		_exit(127);
	}
	l->children++;
}

static void finish(struct listener *l, int code);

static void on_report(void *arg, const uint8_t *raw, const struct mad_addr *from)
{
	struct listener *l = arg;
	struct notice n;
	if (l->quitting)
		return;
	notice_decode(raw, &n);
	json_t *o = notice_json(&n);
	char *s = json_dumps(o, JSON_COMPACT);
	if (s) {
		printf("%s\n", s);
		fflush(stdout);
		free(s);
	}
	if (l->exec)
		run_exec(l, o, &n);
	json_decref(o);
	if (l->count_max && ++l->count >= l->count_max)
		finish(l, 0);
}

/* ---- subscribing and checking ---- */

static void on_vguids(void *arg, int status, const uint8_t *recs, size_t n,
		      size_t stride, const uint8_t *hdr)
{
	struct listener *l = arg;
	(void)recs;
	(void)n;
	(void)stride;
	(void)hdr;
	if (l->quitting)
		return;
	l->vg_pending = 0;
	if (status) {
		log_warn("GUIDInfoRecord Set of %u vGUIDs refused (status 0x%x): trying again at the next check",
			 l->n_vguids, status);
		return;
	}
	l->vguids_set = 1;
	log_notice("%u vGUIDs set on this port (SA GUIDInfoRecord)", l->n_vguids);
}

/*
 * --hypervisor --vguid: the alias GUIDs go to the SM with a GUIDInfoRecord
 * Set on this port, once subscribed (so the mapping changes that follow
 * are heard), again for a new SM.
 */
static void set_vguids(struct listener *l)
{
	if (!l->hypervisor || !l->n_vguids || l->vguids_set || l->vg_pending)
		return;
	if (saclient_alias_guids(l->sc, 0, l->vguids, l->n_vguids, on_vguids, l) == 0)
		l->vg_pending = 1;
}

static void on_subscribed(void *arg, int status, const uint8_t *recs,
			  size_t n, size_t stride, const uint8_t *hdr)
{
	struct listener *l = arg;
	if (l->quitting)
		return;
	l->sub_pending--;
	if (status == 0)
		l->subscribed++;
	else
		log_warn("subscription refused or lost (status %d): trying again in %u ms",
			 status, l->check_ms);
	if (!l->sub_pending && l->subscribed == l->n_traps) {
		log_notice("subscribed with the SM at LID %u", l->sm_lid);
		set_vguids(l);
	}
}

static void subscribe_all(struct listener *l, const char *why)
{
	if (l->sub_pending)
		return;
	log_notice("subscribing (%s)", why);
	l->sm_lid = l->t.sm_lid;
	l->vguids_set = 0;	/* a new or forgetful SM: the vGUIDs again */
	l->subscribed = 0;
	for (int i = 0; i < l->n_traps; i++) {
		struct saclient_inform ii;
		saclient_inform_default(&ii, l->traps[i]);
		if (saclient_inform(l->sc, &ii, 1, on_subscribed, l) == 0)
			l->sub_pending++;
	}
}

#define IIR_TRAP_OFFS	(IIR_INFORM + II_TRAP)

/* Whether the records (our port's subscriptions) hold one for every trap. */
static int all_held(const struct listener *l, const uint8_t *recs, size_t n,
		    size_t stride)
{
	if (stride < IIR_TRAP_OFFS + 2)
		return 0;
	for (int i = 0; i < l->n_traps; i++) {
		size_t k;
		for (k = 0; k < n; k++)
			if (sa_get16(recs + k * stride + IIR_TRAP_OFFS) == l->traps[i])
				break;
		if (k == n)
			return 0;
	}
	return 1;
}

static void on_subs(void *arg, int status, const uint8_t *recs, size_t n,
		    size_t stride, const uint8_t *hdr)
{
	struct listener *l = arg;
	l->check_pending = 0;
	if (status == -ETIMEDOUT)
		return;		/* no SM answering: the next check tries again */
	if ((status == 0 && !all_held(l, recs, n, stride)) ||
	    status == SA_STS_NO_RECORDS)
		subscribe_all(l, "the SM does not hold our subscription");
}

/* rereg: the ClientReregister bit read, -1 when nothing was read */
static void probe_done(struct listener *l, uint32_t sm_lid, int rereg)
{
	l->probe_tid = 0;
	evtimer_del(l->probe_ev);
	if (sm_lid && sm_lid != l->t.sm_lid) {
		log_notice("the SM moved from LID %u to LID %u", l->t.sm_lid,
			   sm_lid);
		l->t.sm_lid = sm_lid;
	}
	if (!l->t.sm_lid)
		return;
	if (l->t.sm_lid != l->sm_lid || l->subscribed < l->n_traps) {
		subscribe_all(l, l->sm_lid ? "a new SM" : "start");
		return;
	}
	/* The spec has the bit read as 0; ibsim keeps what was set: an edge */
	if (rereg > 0 && !l->last_rereg) {
		l->last_rereg = rereg;
		subscribe_all(l, "ClientReregister");
		return;
	}
	if (rereg >= 0)
		l->last_rereg = rereg;
	if (!l->check_pending && !l->sub_pending &&
	    saclient_subscriptions(l->sc, on_subs, l) == 0)
		l->check_pending = 1;
}

static void on_probe_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct listener *l = arg;
	l->probe_tid = 0;
	probe_done(l, 0, -1);	/* keep the SM LID we know */
}

/* A 0-hop PortInfo Get of our own port: its MasterSMLID. */
static void probe(struct listener *l)
{
	uint8_t mad[MAD_SIZE];
	uint8_t path[2] = { 0, 0 };
	struct mad_addr to = { .lid = 0xffff, .qpn = 0 };
	if (l->probe_tid)
		return;
	smp_init_dr(mad, IB_MAD_METHOD_GET, IB_ATTR_PORT_INFO,
		    (uint32_t)l->t.port_num, path, 0);
	l->probe_tid = ((uint64_t)rand() << 8 | 0x5a) & 0xffffffffu;
	if (!l->probe_tid)
		l->probe_tid = 0x5a;
	mad_set_field64(mad, 0, IB_MAD_TRID_F, l->probe_tid);
	if (mad_transport_send(&l->t, mad, MAD_SIZE, &to) < 0) {
		probe_done(l, 0, -1);
		return;
	}
	struct timeval tv = { PROBE_TIMEOUT_MS / 1000,
			      (PROBE_TIMEOUT_MS % 1000) * 1000 };
	evtimer_add(l->probe_ev, &tv);
}

static void on_check(evutil_socket_t fd, short what, void *arg)
{
	struct listener *l = arg;
	if (l->quitting)
		return;
	probe(l);
	if (!l->sub_pending && l->subscribed == l->n_traps)
		set_vguids(l);	/* one refused before: again */
}

/* Our probe's answer, or anything else for the SA client. */
static void on_mad(void *arg, const uint8_t *mad, size_t len,
		   const struct mad_addr *from, int status)
{
	struct listener *l = arg;
	if (len >= MAD_SIZE && mad[1] == IB_SMI_DIRECT_CLASS &&
	    mad[3] == IB_MAD_METHOD_GET_RESPONSE && l->probe_tid &&
	    (mad_get_field64((void *)mad, 0, IB_MAD_TRID_F) & 0xffffffffu) ==
		    l->probe_tid) {
		const uint8_t *pi = mad + SMP_DATA_OFFS;
		uint32_t sm_lid = status ? 0 :
			mad_get_field((void *)pi, 0, IB_PORT_SMLID_F);
		int rereg = status ? 0 :
			(int)mad_get_field((void *)pi, 0, IB_PORT_CLIENT_REREG_F);
		probe_done(l, sm_lid, rereg);
		return;
	}
	saclient_recv(l->sc, mad, len, from, status);
}

/* ---- ending ---- */

static void on_unsubscribed(void *arg, int status, const uint8_t *recs,
			    size_t n, size_t stride, const uint8_t *hdr)
{
	struct listener *l = arg;
	if (--l->sub_pending <= 0)
		event_base_loopexit(l->base, NULL);
}

/* Unsubscribes (politely, bounded by the client's timeout) and stops. */
static void finish(struct listener *l, int code)
{
	if (l->quitting)
		return;
	l->quitting = 1;
	l->exit_code = code;
	evtimer_del(l->check_ev);
	l->sub_pending = 0;
	if (l->hypervisor && l->n_vguids && l->vguids_set && l->t.sm_lid &&
	    saclient_alias_guids(l->sc, 1, l->vguids, l->n_vguids,
				 on_unsubscribed, l) == 0)
		l->sub_pending++;	/* the VMs leave with their hypervisor */
	if (l->subscribed && l->t.sm_lid)
		for (int i = 0; i < l->n_traps; i++) {
			struct saclient_inform ii;
			saclient_inform_default(&ii, l->traps[i]);
			if (saclient_inform(l->sc, &ii, 0, on_unsubscribed, l) == 0)
				l->sub_pending++;
		}
	if (!l->sub_pending)
		event_base_loopexit(l->base, NULL);
	else {
		struct timeval tv = { 1, 0 };	/* at most: then go anyway */
		event_base_loopexit(l->base, &tv);
	}
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
	finish(arg, 1);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct listener *l = arg;
	if (sig == SIGCHLD) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			if (l->children)
				l->children--;
		return;
	}
	finish(l, 1);
}

static int parse_traps(struct listener *l, const char *s)
{
	if (!strcmp(s, "all")) {
		l->traps[0] = SACLIENT_ALL;
		l->n_traps = 1;
		return 0;
	}
	l->n_traps = 0;
	while (*s) {
		char *end;
		unsigned long v = strtoul(s, &end, 0);
		if (end == s || v > 0xfffe || l->n_traps == MAX_TRAPS)
			return -1;
		l->traps[l->n_traps++] = (uint16_t)v;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return l->n_traps ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ca", required_argument, NULL, 'd' },
		{ "port", required_argument, NULL, 'p' },
		{ "trap", required_argument, NULL, 't' },
		{ "count", required_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "exec", required_argument, NULL, 'e' },
		{ "check-interval", required_argument, NULL, 'i' },
		{ "hypervisor", no_argument, NULL, 'H' },
		{ "vguid", required_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct listener l;
	struct umad_port_sel sel = { .issm = UMAD_ISSM_SIM_ONLY };
	double timeout = 0, check = 2;
	char err[256];
	int c, traps_given = 0;

	memset(&l, 0, sizeof(l));
	l.traps[0] = SACLIENT_ALL;
	l.n_traps = 1;
	while ((c = getopt_long(argc, argv, "d:p:h", opts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'h': usage_to(stdout, 0); break;
		case 'd': sel.ca = optarg; break;
		case 'p':
			sel.port = (int)strtol(optarg, &end, 0);
			if (*end || sel.port < 1 || sel.port > 254)
				usage();
			break;
		case 't':
			traps_given = 1;
			if (parse_traps(&l, optarg) < 0) {
				fprintf(stderr, "ibsm-listen: bad trap list '%s'\n", optarg);
				return 2;
			}
			break;
		case 'c':
			l.count_max = strtol(optarg, &end, 0);
			if (*end || l.count_max < 1)
				usage();
			break;
		case 'T':
			timeout = strtod(optarg, &end);
			if (*end || !(timeout > 0))
				usage();
			break;
		case 'e': l.exec = optarg; break;
		case 'i':
			check = strtod(optarg, &end);
			if (*end || !(check >= 0.1))
				usage();
			break;
		case 'H':
			l.hypervisor = 1;
			break;
		case 'V': {
			unsigned long long g;
			if (strncmp(optarg, "0x", 2) ||
			    (g = strtoull(optarg + 2, &end, 16), *end) || !g) {
				fprintf(stderr, "ibsm-listen: --vguid wants a non-zero 0x GUID, not '%s'\n",
					optarg);
				return 2;
			}
			if (l.n_vguids == MAX_VGUIDS) {
				fprintf(stderr, "ibsm-listen: at most %d --vguid (GUIDInfo block 0)\n",
					MAX_VGUIDS);
				return 2;
			}
			l.vguids[l.n_vguids++] = g;
			break;
		}
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (l.n_vguids && !l.hypervisor) {
		fprintf(stderr, "ibsm-listen: --vguid needs --hypervisor\n");
		return 2;
	}
	if (l.hypervisor && !traps_given) {
		l.traps[0] = 69;	/* a hypervisor registers for repath notices */
		l.n_traps = 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	log_set_ident("ibsm-listen");
	log_set_level(LOG_NOTICE);
	srand((unsigned)(time(NULL) ^ getpid()));
	l.check_ms = (unsigned)(check * 1000);
	l.base = event_base_new();
	l.sc = l.base ? saclient_new(l.base, &l.t, NULL) : NULL;
	if (!l.sc) {
		fprintf(stderr, "ibsm-listen: out of memory\n");
		return 1;
	}
	if (umad_transport_open(&l.t, l.base, &sel, on_mad, &l, err,
				sizeof(err)) < 0) {
		fprintf(stderr, "ibsm-listen: %s\n", err);
		return 1;
	}
	umad_transport_set_pending(&l.t, pending, &l);
	saclient_set_report(l.sc, on_report, &l);
	l.check_ev = event_new(l.base, -1, EV_PERSIST, on_check, &l);
	l.probe_ev = evtimer_new(l.base, on_probe_timeout, &l);
	l.timeout_ev = evtimer_new(l.base, on_timeout, &l);
	l.sig_int = evsignal_new(l.base, SIGINT, on_signal, &l);
	l.sig_term = evsignal_new(l.base, SIGTERM, on_signal, &l);
	l.sig_chld = evsignal_new(l.base, SIGCHLD, on_signal, &l);
	struct timeval ctv = { l.check_ms / 1000, (l.check_ms % 1000) * 1000 };
	event_add(l.check_ev, &ctv);
	evsignal_add(l.sig_int, NULL);
	evsignal_add(l.sig_term, NULL);
	evsignal_add(l.sig_chld, NULL);
	if (timeout > 0) {
		struct timeval ttv = { (time_t)timeout,
				       (suseconds_t)((timeout - (time_t)timeout) * 1e6) };
		evtimer_add(l.timeout_ev, &ttv);
	}
	if (l.t.sm_lid)
		subscribe_all(&l, "start");
	probe(&l);
	event_base_dispatch(l.base);
	while (l.children && waitpid(-1, NULL, 0) > 0)
		l.children--;
	event_free(l.check_ev);
	event_free(l.probe_ev);
	event_free(l.timeout_ev);
	event_free(l.sig_int);
	event_free(l.sig_term);
	event_free(l.sig_chld);
	saclient_free(l.sc);
	l.t.close(l.t.ctx);
	event_base_free(l.base);
	/*
	 * Not exit(): umad2sim's exit handler holds its global mutex while it
	 * joins its receiver thread, which waits for that mutex whenever a MAD
	 * comes in meanwhile (a Report, a bounced unsubscribe): the process
	 * hangs.  Nothing of ours needs an exit handler; the kernel closes
	 * the umad fds.
	 */
	fflush(stdout);
	fflush(stderr);
	_exit(l.exit_code);
}
