/*
 * emuflow: traffic on the in-process emulator (mad/emu/emu_flow.c, the
 * model of mad/emu/flowmodel.h) after the daemon's code configured the
 * fabric, and each flow's throughput over time.
 *
 *     emuflow [-p POLICY] [-s] TOPOLOGY SCENARIO
 *
 * TOPOLOGY is an ibnetdiscover-style file (sm/base/topo.h); POLICY an
 * ibsmd.yaml(5) file the SM runs with (e.g. qos.mode: vftree with
 * qos.max_vls: 2 for two data VLs, SL i on VL i).  SCENARIO is JSON:
 *
 *   { "step": 1, "end": 30,                 seconds (step: default 1)
 *     "sinks": { "H5": 12.9 },              Gb/s a host takes in (default:
 *                                           its link's rate)
 *     "flows": [ { "name": "2-3", "from": "H2", "to": "H3",
 *                  "gbps": 12.9, "sl": 0,   (sl: default 0)
 *                  "start": 0, "stop": 30 } ],   (default: 0, end)
 *     "moves": [ { "at": 14, "from": "H1", "to": "H5", "sl": 1 } ],
 *     "cuts": [ { "at": 13, "switch": "A", "port": 5 } ] }
 *
 * A cut pulls the cable of a switch port (named by the switch's node
 * description) at its time; the SM, told by trap 128, routes around it
 * before the step's rates.  Hosts are named by their node description.  A move does at its time
 * what a host does on a repath or unpath notice (ibsmd(8) NOTICES): every
 * flow of that host to that destination's LID goes to the SL named.
 * With "dftree": true the SM runs its dFtree loop (ibsmd(8) HOT-SPOT
 * SLOW LANES: congestion.mode dftree, fast SL 0, slow SL 1, interval 1 s,
 * the policy's threshold and utilisation) against the counters the
 * traffic makes, and every host that sends a flow is subscribed to the
 * notices: each lane order it receives (a 68 or 69 with NPATH_LANE) moves
 * its running flows to that DLID onto the order's SL (the host agent's
 * Algorithm 2).  Emulated time then follows the loop's clock: the
 * scenario takes its "end" seconds of wall clock.  "moves" with
 * "dftree" is refused (the SM is the one moving flows).
 *
 * Prints one row per step: the time and each flow's rate during that step
 * in Gb/s ("-": not running or not routed); with -s, the time and the sum
 * of the rates instead.  Exit 0; 2 for a bad topology,
 * policy or scenario; 1 when the SM does not come up.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mad/emu/emu.h"
#include "sm/daemon.h"
#include "sm/model/config.h"
#include "traps/host/saclient.h"
#include "traps/notice.h"
#include "emusm.h"

#define GBPS (1e9 / 8)	/* bytes/s in a Gb/s */
#define MAX_STEPS 1000000
#define TICK_MS 10		/* emulated time follows the loop's clock this often */
#define DFTREE_FAST_SL 0
#define DFTREE_SLOW_SL 1
#define DFTREE_INTERVAL_S 1
#define SUBSCRIBE_MS 5000
#define CUT_TRAP_MS 300		/* a cut's trap 128 reaching the SM */

struct flow {
	const char *name;
	uint64_t src;
	uint32_t dlid;
	double bps, start, stop;
	int sl, id;
};

struct move {
	double at;
	uint64_t src;
	uint32_t dlid;
	int sl, done;
};

struct cut {
	double at;
	uint64_t guid;
	int port, done;
};

/* A sending host subscribed to the SA's notices, its agent moving flows. */
struct agent {
	struct mad_transport tr;
	struct saclient *c;
	struct emu_traffic *t;
	uint64_t guid;
	int answered, status, orders, moved;
};

static void usage(void)
{
	fprintf(stderr, "usage: emuflow [-p POLICY] [-s] TOPOLOGY SCENARIO\n");
	exit(2);
}

/* The port GUID of the CA described name, 0 if none. */
static uint64_t host_guid(const struct fabric *f, const char *name)
{
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (f->nodes[i].type == FAB_CA && !strcmp(f->nodes[i].desc, name))
			return f->ports[fabric_port(f, i, 1)].guid;
	return 0;
}

/* The CA port and LID of host name; -1 said. */
static int host(const struct emusm *x, const char *name, uint64_t *guid,
		uint32_t *lid)
{
	*guid = name ? host_guid(&x->topo, name) : 0;
	int l = *guid ? emu_port_lid(x->e, *guid, 0) : -1;
	if (l <= 0) {
		fprintf(stderr, "emuflow: no host \"%s\" with a LID\n",
			name ? name : "(none)");
		return -1;
	}
	*lid = (uint32_t)l;
	return 0;
}

static double num(const json_t *o, const char *k, double dflt)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : dflt;
}

static int read_flows(const struct emusm *x, const json_t *arr, double end,
		      struct flow *fl)
{
	size_t i;
	const json_t *o;
	json_array_foreach(arr, i, o) {
		struct flow *f = &fl[i];
		f->name = json_string_value(json_object_get(o, "name"));
		uint64_t dst;
		if (!f->name || host(x, json_string_value(json_object_get(o, "from")),
				     &f->src, &f->dlid) < 0 ||
		    host(x, json_string_value(json_object_get(o, "to")), &dst,
			 &f->dlid) < 0)
			return -1;
		f->bps = num(o, "gbps", -1) * GBPS;
		f->sl = (int)num(o, "sl", 0);
		f->start = num(o, "start", 0);
		f->stop = num(o, "stop", end);
		f->id = -1;
		if (f->bps < 0 || f->sl < 0 || f->sl > 15 || f->stop < f->start) {
			fprintf(stderr, "emuflow: flow %s: gbps >= 0, sl 0-15, "
				"start <= stop\n", f->name);
			return -1;
		}
	}
	return 0;
}

static int read_moves(const struct emusm *x, const json_t *arr, struct move *mv)
{
	size_t i;
	const json_t *o;
	json_array_foreach(arr, i, o) {
		uint64_t dst;
		mv[i].at = num(o, "at", -1);
		mv[i].sl = (int)num(o, "sl", -1);
		if (host(x, json_string_value(json_object_get(o, "from")), &mv[i].src,
			 &mv[i].dlid) < 0 ||
		    host(x, json_string_value(json_object_get(o, "to")), &dst,
			 &mv[i].dlid) < 0)
			return -1;
		if (mv[i].at < 0 || mv[i].sl < 0 || mv[i].sl > 15) {
			fprintf(stderr, "emuflow: move %zu: at >= 0, sl 0-15\n", i);
			return -1;
		}
	}
	return 0;
}

static int read_cuts(const struct emusm *x, const json_t *arr, struct cut *ct)
{
	size_t i;
	const json_t *o;
	json_array_foreach(arr, i, o) {
		const char *sw = json_string_value(json_object_get(o, "switch"));
		const struct fabric *f = &x->topo;
		ct[i].at = num(o, "at", -1);
		ct[i].port = (int)num(o, "port", -1);
		for (uint32_t n = 0; sw && n < f->n_nodes && !ct[i].guid; n++)
			if (f->nodes[n].type == FAB_SWITCH && !strcmp(f->nodes[n].desc, sw))
				ct[i].guid = f->nodes[n].guid;
		if (!ct[i].guid || ct[i].at < 0 || ct[i].port < 1) {
			fprintf(stderr, "emuflow: cut %zu: a switch, port >= 1, at >= 0\n", i);
			return -1;
		}
	}
	return 0;
}

static int never(void *arg)
{
	(void)arg;
	return 0;
}

/* The cuts due at time now made; how many, -1 (no such port or cable). */
static int do_cuts(struct emusm *x, struct cut *ct, size_t nc, double now)
{
	int n = 0;
	for (size_t i = 0; i < nc; i++)
		if (!ct[i].done && now >= ct[i].at) {
			ct[i].done = 1;
			if (emu_link_down(x->e, ct[i].guid, ct[i].port) < 0) {
				fprintf(stderr, "emuflow: cut %zu: no cable there\n", i);
				return -1;
			}
			n++;
		}
	return n;
}

static int read_sinks(const struct emusm *x, struct emu_traffic *t,
		      const json_t *obj)
{
	const char *name;
	const json_t *v;
	json_object_foreach((json_t *)obj, name, v) {
		uint64_t g;
		uint32_t lid;
		if (host(x, name, &g, &lid) < 0 || !json_is_number(v) ||
		    emu_flow_set_sink(t, g, json_number_value(v) * GBPS) < 0) {
			fprintf(stderr, "emuflow: sink %s: a host and Gb/s >= 0\n", name);
			return -1;
		}
	}
	return 0;
}

/* A notice for a: a lane order moves its flows to the DLID (Algorithm 2). */
static void agent_report(void *arg, const uint8_t *raw, const struct mad_addr *from)
{
	struct agent *a = arg;
	struct notice nt;
	struct notice_path p;
	(void)from;
	notice_decode(raw, &nt);
	if (nt.trap != TRAP_REPATH && nt.trap != TRAP_UNPATH)
		return;
	notice_get_path(&nt, &p);
	if (!(p.flags & NPATH_LANE))
		return;
	a->orders++;
	int n = emu_flow_move(a->t, a->guid, p.dlid, p.sl);
	a->moved += n > 0 ? n : 0;
}

static void agent_answered(void *arg, int status, const uint8_t *recs, size_t n,
			   size_t stride, const uint8_t *hdr)
{
	struct agent *a = arg;
	(void)recs;
	(void)n;
	(void)stride;
	(void)hdr;
	a->answered = 1;
	a->status = status;
}

static int agent_done(void *arg)
{
	return ((const struct agent *)arg)->answered;
}

/* Host guid's agent attached and subscribed to every notice.  0, or -1 (said). */
static int agent_start(struct emusm *x, struct emu_traffic *t, struct agent *a,
		       uint64_t guid)
{
	char err[256] = "";
	struct saclient_inform ii;
	a->guid = guid;
	a->t = t;
	a->c = saclient_new(x->base, &a->tr, NULL);
	if (!a->c)
		return -1;
	saclient_set_report(a->c, agent_report, a);
	if (emu_attach(x->e, x->base, guid, &a->tr, saclient_recv, a->c, err,
		       sizeof(err)) < 0 || emu_set_issm(x->e, guid, 0) < 0) {
		fprintf(stderr, "emuflow: host agent: %s\n", err);
		saclient_free(a->c);
		a->c = NULL;
		return -1;
	}
	saclient_inform_default(&ii, SACLIENT_ALL);
	if (saclient_inform(a->c, &ii, 1, agent_answered, a) < 0 ||
	    !saload_run_until(x->base, agent_done, a, SUBSCRIBE_MS) || a->status) {
		fprintf(stderr, "emuflow: host %016llx: no subscription (status %d)\n",
			(unsigned long long)guid, a->status);
		return -1;
	}
	return 0;
}

static void agent_stop(struct agent *a)
{
	if (!a->c)
		return;
	saclient_free(a->c);
	a->c = NULL;
	a->tr.close(a->tr.ctx);
}

/* Every flow's sending host an agent (one each); how many, -1 (said). */
static int agents_start(struct emusm *x, struct emu_traffic *t,
			const struct flow *fl, size_t nf, struct agent *ag)
{
	size_t n = 0;
	int said = 0;
	for (size_t i = 0; i < nf; i++) {
		size_t j = 0;
		while (j < n && ag[j].guid != fl[i].src)
			j++;
		if (j < n)
			continue;
		if (fl[i].src == x->sm->cfg.port_guid) {
			if (!said++)
				fprintf(stderr, "emuflow: flow %s and the rest from the "
					"SM's port: no agent moves them\n", fl[i].name);
			continue;
		}
		if (agent_start(x, t, &ag[n], fl[i].src) < 0) {
			agent_stop(&ag[n]);
			return -1;
		}
		n++;
	}
	return (int)n;
}

/* Flows started or stopped at time now. */
static int start_stop(struct emu_traffic *t, struct flow *fl, size_t nf, double now)
{
	for (size_t i = 0; i < nf; i++) {
		struct flow *f = &fl[i];
		if (f->id < 0 && now >= f->start && now < f->stop &&
		    (f->id = emu_flow_add(t, f->src, f->dlid, f->bps,
					  (uint8_t)f->sl)) < 0)
			return -1;
		if (f->id >= 0 && now >= f->stop)
			emu_flow_stop(t, f->id);
	}
	return 0;
}

/* One step at time now: flows started or stopped, moves done, time passed. */
static int step(struct emu_traffic *t, struct flow *fl, size_t nf,
		struct move *mv, size_t nm, double now, double dt)
{
	if (start_stop(t, fl, nf, now) < 0)
		return -1;
	for (size_t i = 0; i < nm; i++)
		if (!mv[i].done && now >= mv[i].at) {
			emu_flow_move(t, mv[i].src, mv[i].dlid, (uint8_t)mv[i].sl);
			mv[i].done = 1;
		}
	return emu_flow_advance(t, dt);
}

static void print_row(FILE *out, const struct emu_traffic *t, const struct flow *fl,
		      size_t nf, double now, int sum_only)
{
	double sum = 0;
	fprintf(out, "%8.2f", now);
	for (size_t i = 0; i < nf; i++) {
		double r = fl[i].id >= 0 ? emu_flow_rate(t, fl[i].id) : -1;
		sum += r > 0 ? r : 0;
		if (sum_only)
			continue;
		if (r < 0)
			fprintf(out, " %8s", "-");
		else
			fprintf(out, " %8.2f", r / (GBPS));
	}
	if (sum_only)
		fprintf(out, " %12.4f", sum / (GBPS));
	fprintf(out, "\n");
}

/* The dFtree run: each step's flows, then dt of the loop's wall clock. */
static int run_dftree(FILE *out, struct emusm *x, struct emu_traffic *t, struct flow *fl,
		      size_t nf, struct cut *ct, size_t nc, double dt, double end,
		      int sum_only)
{
	struct agent *ag = calloc(nf + 1, sizeof(*ag));
	int n = ag ? agents_start(x, t, fl, nf, ag) : -1, rc = n < 0;
	if (!rc && emu_traffic_run(t, x->base, TICK_MS) < 0)
		rc = 1;
	double t0 = saload_now();
	for (long k = 0; !rc && k * dt < end; k++) {
		if (start_stop(t, fl, nf, k * dt) < 0 ||
		    do_cuts(x, ct, nc, k * dt) < 0) {
			rc = 1;
			break;
		}
		double left = t0 + (double)(k + 1) * dt - saload_now();
		if (left > 0)
			saload_run_until(x->base, never, NULL, left * 1000.0);
		print_row(out, t, fl, nf, k * dt, sum_only);
		fflush(out);
	}
	emu_traffic_run(t, x->base, 0);
	int orders = 0, moved = 0;
	for (int i = 0; i < n; i++) {
		orders += ag[i].orders;
		moved += ag[i].moved;
		agent_stop(&ag[i]);
	}
	fprintf(stderr, "emuflow: dftree: %d lane orders to %d hosts, %d flow moves\n",
		orders, n > 0 ? n : 0, moved);
	free(ag);
	return rc;
}

static int run(FILE *out, struct emusm *x, const json_t *sc, int sum_only)
{
	double dt = num(sc, "step", 1), end = num(sc, "end", -1);
	const json_t *flows = json_object_get(sc, "flows"),
		     *moves = json_object_get(sc, "moves");
	int dftree = json_is_true(json_object_get(sc, "dftree"));
	if (dftree && moves) {
		fprintf(stderr, "emuflow: \"moves\" with \"dftree\": the SM "
			"moves the flows, not the scenario\n");
		return 2;
	}
	if (!(dt > 0) || !(end >= 0) || end / dt > MAX_STEPS ||
	    !json_is_array(flows) || (moves && !json_is_array(moves))) {
		fprintf(stderr, "emuflow: the scenario needs step > 0, end >= 0 "
			"(%d steps at most), a flows array\n", MAX_STEPS);
		return 2;
	}
	const json_t *cuts = json_object_get(sc, "cuts");
	size_t nf = json_array_size(flows), nm = json_array_size(moves),
	       nc = json_array_size(cuts);
	struct flow *fl = calloc(nf + 1, sizeof(*fl));
	struct move *mv = calloc(nm + 1, sizeof(*mv));
	struct cut *ct = calloc(nc + 1, sizeof(*ct));
	struct emu_traffic *t = emu_traffic_new(x->e);
	int rc = 2;
	if (!fl || !mv || !ct || !t) {
		rc = 1;
		goto done;
	}
	if (read_flows(x, flows, end, fl) < 0 || read_moves(x, moves, mv) < 0 ||
	    read_cuts(x, cuts, ct) < 0 ||
	    read_sinks(x, t, json_object_get(sc, "sinks")) < 0)
		goto done;
	fprintf(out, "%8s", "t_s");
	for (size_t i = 0; i < nf && !sum_only; i++)
		fprintf(out, " %8.8s", fl[i].name);
	if (sum_only)
		fprintf(out, " %12s\n", "sum_gbps");
	else
		fprintf(out, "   (Gb/s)\n");
	if (dftree) {
		rc = run_dftree(out, x, t, fl, nf, ct, nc, dt, end, sum_only);
		goto done;
	}
	rc = 0;
	for (long k = 0; k * dt < end; k++) {
		int cut = do_cuts(x, ct, nc, k * dt);
		if (cut > 0 && (saload_run_until(x->base, never, NULL, CUT_TRAP_MS),
				!emusm_run_idle(x, 60000)))
			fprintf(stderr, "emuflow: the SM did not settle after a cut\n");
		if (cut < 0 || step(t, fl, nf, mv, nm, k * dt, dt) < 0) {
			rc = 1;
			break;
		}
		print_row(out, t, fl, nf, k * dt, sum_only);
	}
done:
	emu_traffic_free(t);
	free(fl);
	free(mv);
	free(ct);
	return rc;
}

/* Whether a flow of scenario sc is sent by host name. */
static int sends(const json_t *sc, const char *name)
{
	size_t i;
	const json_t *o;
	json_array_foreach(json_object_get(sc, "flows"), i, o) {
		const char *from = json_string_value(json_object_get(o, "from"));
		if (from && !strcmp(from, name))
			return 1;
	}
	return 0;
}

/*
 * The dFtree loop's policy (run_dftree); the rest is the policy's.  The
 * SM sits on the last host that sends no flow (a sending host's port
 * takes its agent), or on the last host when every one sends: that host's
 * flows then have no agent and are never moved (said on stderr).
 */
static void dftree_policy(const struct fabric *f, const json_t *sc, struct config *c)
{
	int free_host = 0;
	for (uint32_t i = f->n_nodes; i-- > 0;)
		if (f->nodes[i].type == FAB_CA && (!c->port_guid || !free_host)) {
			free_host = !sends(sc, f->nodes[i].desc);
			if (!c->port_guid || free_host)
				c->port_guid = f->ports[fabric_port(f, i, 1)].guid;
		}
	c->cong_mode = CONG_DFTREE;
	c->cong_fast_sl = DFTREE_FAST_SL;
	c->cong_slow_sl = DFTREE_SLOW_SL;
	c->cong_interval_s = DFTREE_INTERVAL_S;
	c->pm_interval_s = 0;
}

int main(int argc, char **argv)
{
	const char *policy = NULL;
	char err[512];
	int c, sum_only = 0;
	while ((c = getopt(argc, argv, "p:s")) != -1) {
		if (c == 'p')
			policy = optarg;
		else if (c == 's')
			sum_only = 1;
		else
			usage();
	}
	if (optind != argc - 2)
		usage();
	json_error_t jerr;
	json_t *sc = json_load_file(argv[optind + 1], 0, &jerr);
	if (!json_is_object(sc)) {
		fprintf(stderr, "emuflow: %s:%d:%d: %s\n", argv[optind + 1], jerr.line,
			jerr.column, sc ? "not an object" : jerr.text);
		return 2;
	}
	struct emusm x;
	int rc = emusm_open(&x, "emuflow", argv[optind]);
	if (!rc && policy && config_load(&x.sm->cfg, policy, err, sizeof(err)) < 0) {
		fprintf(stderr, "emuflow: %s\n", err);
		rc = 2;
	}
	if (!rc && json_is_true(json_object_get(sc, "dftree")))
		dftree_policy(&x.topo, sc, &x.sm->cfg);
	if (!rc && (emusm_start(&x) < 0 || !emusm_run_idle(&x, 600000))) {
		fprintf(stderr, "emuflow: the SM did not come up\n");
		rc = 1;
	}
	/* the rows to the tool's stdout, the daemon's lines (a cut's sweep)
	 * still to /dev/null */
	int fd = rc ? -1 : dup(x.saved_out);
	FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!rc && !out)
		rc = 1;
	if (!rc)
		rc = run(out, &x, sc, sum_only);
	if (out)
		fclose(out);
	json_decref(sc);
	if (emusm_close(&x) < 0 && !rc)
		rc = 1;
	return rc;
}
