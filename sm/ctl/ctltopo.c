/*
 * ibsmctl topology (see ctltopo.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "reconfig/migrate.h"
#include "sm/ctl/control.h"
#include "sm/ctl/ctltopo.h"
#include "sm/daemon.h"
#include "sm/perfmgr.h"
#include "sm/render/dot.h"
#include "sm/render/svg.h"
#include "sm/base/log.h"
#include "sm/base/nodemap.h"
#include "sm/base/topo.h"
#include "sm/base/worker.h"

static const char *const port_state[] = {
	"NoChange", "Down", "Init", "Armed", "Active",
};

static json_t *guid_str(uint64_t g)
{
	char s[20];
	snprintf(s, sizeof(s), "0x%016" PRIx64, g);
	return json_string(s);
}

static json_t *node_json(const struct fabric *f, uint32_t n, const uint32_t *ranks)
{
	const struct fab_node *nd = &f->nodes[n];
	json_t *o = json_object();

	json_object_set_new(o, "guid", guid_str(nd->guid));
	json_object_set_new(o, "desc", json_string(fabric_node_name(f, n)));
	if (nd->type == FAB_SWITCH) {
		json_object_set_new(o, "lid", json_integer(fabric_portp(f, n, 0)->lid));
		json_object_set_new(o, "ports", json_integer(nd->nports));
		json_object_set_new(o, "rank", ranks[n] == FAB_NONE ? json_null() :
				    json_integer(ranks[n]));
	} else {
		json_t *lids = json_array();
		for (unsigned k = 1; k <= nd->nports; k++)
			if (fabric_portp(f, n, k)->lid)
				json_array_append_new(lids, json_integer(fabric_portp(f, n, k)->lid));
		json_object_set_new(o, "lids", lids);
	}
	return o;
}

static json_t *end_json(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi];
	return json_pack("{s:o,s:s,s:i}", "guid", guid_str(f->nodes[p->node].guid),
			 "desc", fabric_node_name(f, p->node), "port", p->num);
}

/*
 * The JSON document of f and its routes t (t may be NULL): "switches",
 * "hosts", "links" (each end's GUID, description and port, state,
 * "failed", routes each way), counts.  NULL on ENOMEM.
 */
static json_t *lost_end_json(const struct lost_link *l, int e)
{
	return json_pack("{s:o,s:s,s:i}", "guid", guid_str(l->guid[e]),
			 "desc", l->name[e], "port", l->port[e]);
}

/* A link's "state": failed, degraded or active (ibsmctl(8)). */
static const char *link_state(const struct fabric *f, uint32_t pi, int failed)
{
	if (failed)
		return "failed";
	if (fabric_port_degraded(f, pi) || fabric_port_degraded(f, f->ports[pi].remote))
		return "degraded";
	return "active";
}

static json_t *rate_json(uint8_t w, uint8_t s)
{
	return json_pack("{s:s,s:s}", "width", topo_width_str(w), "speed", topo_speed_str(s));
}

/* The rate a degraded link could run at: the better of its ends' maxima. */
static json_t *could_json(const struct fabric *f, uint32_t pi)
{
	const struct fab_port *p = &f->ports[pi], *r = &f->ports[p->remote];
	const struct fab_port *d = fabric_port_degraded(f, pi) ? p : r;
	return rate_json(d->width_max, d->speed_max);
}

static json_t *topology_json(const struct fabric *f,
			     const struct lft_tables *t, int expect_active,
			     const struct lost_link *lost, uint32_t n_lost)
{
	uint32_t *ranks = malloc((size_t)(f->n_nodes ? f->n_nodes : 1) * sizeof(*ranks));
	if (!ranks || dot_switch_ranks(f, ranks) < 0) {
		free(ranks);
		return NULL;
	}
	uint64_t *load = t && t->n_sw && t->row_of_node ? dot_link_loads(f, t, NULL) : NULL;
	uint64_t busiest = 0;
	json_t *sws = json_array(), *hosts = json_array(), *links = json_array();
	uint32_t failed = 0, degraded = 0;

	for (uint32_t n = 0; n < f->n_nodes; n++)
		json_array_append_new(f->nodes[n].type == FAB_SWITCH ? sws : hosts,
				      node_json(f, n, ranks));
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (p->remote == FAB_NONE || p->remote < pi || !(p->flags & FPORT_PRESENT))
			continue;
		const struct fab_port *r = &f->ports[p->remote];
		int bad = dot_link_failed(f, pi, expect_active);
		uint8_t st = p->state < r->state ? p->state : r->state;
		const char *state = link_state(f, pi, bad);
		failed += bad;
		json_t *l = json_pack("{s:o,s:o,s:s,s:s,s:b,s:o}", "a", end_json(f, pi),
				      "b", end_json(f, p->remote), "state", state, "port_state",
				      st <= PORT_ACTIVE ? port_state[st] : "?", "failed", bad,
				      "rate", rate_json(p->width_active, p->speed_active));
		if (!strcmp(state, "degraded")) {
			degraded++;
			json_object_set_new(l, "could_be", could_json(f, pi));
		}
		if (load && f->nodes[p->node].type == FAB_SWITCH &&
		    f->nodes[r->node].type == FAB_SWITCH) {
			json_object_set_new(l, "routes_ab", json_integer((json_int_t)load[pi]));
			json_object_set_new(l, "routes_ba", json_integer((json_int_t)load[p->remote]));
			if (load[pi] > busiest)
				busiest = load[pi];
			if (load[p->remote] > busiest)
				busiest = load[p->remote];
		}
		json_array_append_new(links, l);
	}
	for (uint32_t i = 0; i < n_lost; i++, failed++)
		json_array_append_new(links, json_pack("{s:o,s:o,s:s,s:b,s:o}",
			"a", lost_end_json(&lost[i], 0), "b", lost_end_json(&lost[i], 1),
			"state", "failed", "failed", 1, "since", control_time_json(lost[i].since)));
	json_t *o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:o}",
			      "n_switches", (json_int_t)json_array_size(sws),
			      "n_hosts", (json_int_t)json_array_size(hosts),
			      "n_links", (json_int_t)json_array_size(links),
			      "failed_links", (json_int_t)failed,
			      "degraded_links", (json_int_t)degraded,
			      "switches", sws, "hosts", hosts, "links", links);
	if (o && load)
		json_object_set_new(o, "busiest_link_routes", json_integer((json_int_t)busiest));
	free(load);
	free(ranks);
	return o;
}

/* What a topology reply is rendered from. */
struct topo_in {
	const struct fabric *f;
	const struct lft_tables *t;	/* NULL: no routes per link */
	const struct lost_link *lost;	/* the failed links the model lacks */
	uint32_t n_lost;
	const uint8_t *hot;		/* per port of f: hot, or NULL (dot.h) */
	const char *left_out;		/* why no routes per link, or NULL */
	uint64_t as_of;			/* a standby's: when it configured f, else 0 */
	int as_dot, as_svg;
};

/* The lost links whose two nodes are in f, as DOT draws them (malloc'd). */
static struct dot_lost *dot_lost_of(const struct topo_in *in, uint32_t *n)
{
	struct dot_lost *d = malloc((in->n_lost ? in->n_lost : 1) * sizeof(*d));
	*n = 0;
	if (!d)
		return NULL;
	for (uint32_t i = 0; i < in->n_lost; i++) {
		uint32_t a = fabric_find_node(in->f, in->lost[i].guid[0]);
		uint32_t b = fabric_find_node(in->f, in->lost[i].guid[1]);
		if (a == FAB_NONE || b == FAB_NONE)
			continue;
		d[*n] = (struct dot_lost){ { a, b }, { in->lost[i].port[0], in->lost[i].port[1] } };
		(*n)++;
	}
	return d;
}

/*
 * The DOT text of f (or with as_svg its SVG, sm/render/svg.h) in a JSON
 * reply {"format": "dot" or "svg", "text": ...}.
 */
static json_t *topology_dot(const struct topo_in *in, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	char title[96] = "ibsmd: the subnet of the last heavy sweep";
	struct dot_opts o = {
		.fold_hosts = DOT_FOLD_HOSTS,
		.expect_active = 1,
		.title = title,
		.hot = in->hot,
	};
	if (in->as_of) {
		json_t *when = control_time_json(in->as_of);
		snprintf(title, sizeof(title), "ibsmd: the subnet as of %s, as master",
			 json_string_value(when) ? json_string_value(when) : "?");
		json_decref(when);
	}
	struct dot_lost *lost = dot_lost_of(in, &o.n_lost);
	o.lost = lost;
	if (lost && in->as_svg) {
		buf = svg_render(in->f, in->t, &o, NULL, &len, err, errlen);
		free(lost);
		json_t *reply = buf ? json_pack("{s:s,s:s%}", "format", "svg", "text", buf, len) : NULL;
		if (buf && !reply)
			snprintf(err, errlen, "out of memory");
		free(buf);
		return reply;
	}
	FILE *fp = lost ? open_memstream(&buf, &len) : NULL;
	if (!fp) {
		free(lost);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	int rc = dot_write(fp, in->f, in->t, &o, NULL);
	free(lost);
	if (fclose(fp) != 0 || rc < 0) {
		free(buf);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	json_t *reply = json_pack("{s:s,s:s}", "format", "dot", "text", buf);
	free(buf);
	return reply;
}

/*
 * The routes per link take time on a large fabric (0.85 s on 3,456
 * hosts: every CA pair's route followed), so under the daemon the
 * rendering runs on a worker thread over copies of the model and tables,
 * names resolved into the copy (the node-name map is the loop's), and
 * the reply is deferred (control_defer) until it is done.
 */
struct topo_job {
	struct sm *sm;
	uint64_t id;		/* the deferred reply */
	struct topo_in in;	/* over the copies below */
	struct fabric f;
	struct lft_tables t;
	struct lost_link *lost;
	uint8_t *hot;
	json_t *res;
	/* the status page's picture (ctl_topology_draw), not a reply */
	topo_drawn_cb drawn;
	void *drawn_arg;
	char err[128];
	struct worker w;	/* topo_thread, then on_topo_done */
	struct topo_job *next;	/* sm->topo_jobs */
};

static json_t *render(const struct topo_in *in, char *err, size_t errlen)
{
	if (in->as_dot || in->as_svg)
		return topology_dot(in, err, errlen);
	json_t *o = topology_json(in->f, in->t, 1, in->lost, in->n_lost);
	if (!o)
		snprintf(err, errlen, "out of memory");
	else if (in->left_out)
		json_object_set_new(o, "routes_left_out", json_string(in->left_out));
	if (o && in->as_of)
		json_object_set_new(o, "as_of", control_time_json(in->as_of));
	return o;
}

static void topo_thread(void *arg)
{
	struct topo_job *j = arg;
	nodemap_thread_bypass();	/* the copy carries the names */
	j->res = render(&j->in, j->err, sizeof(j->err));
}

static void job_free(struct topo_job *j)
{
	struct topo_job **pp = &j->sm->topo_jobs;
	while (*pp && *pp != j)
		pp = &(*pp)->next;
	if (*pp)
		*pp = j->next;
	worker_free(&j->w);
	fabric_free(&j->f);
	lft_tables_free(&j->t);
	free(j->lost);
	free(j->hot);
	json_decref(j->res);
	free(j);
}

static void on_topo_done(void *arg)
{
	struct topo_job *j = arg;
	if (j->drawn) {
		const char *text = json_string_value(json_object_get(j->res, "text"));
		char *svg = text ? strdup(text) : NULL;
		j->drawn(j->drawn_arg, svg, svg ? strlen(svg) : 0,
			 svg ? NULL : j->res ? "out of memory" : j->err);
	} else if (j->sm->ctl) {
		control_reply(j->sm->ctl, j->id, j->res, j->res ? NULL : j->err);
		j->res = NULL;	/* control_reply took it */
	}
	job_free(j);
}

void ctl_topology_cancel_all(struct sm *sm)
{
	while (sm->topo_jobs) {
		struct topo_job *j = sm->topo_jobs;
		worker_join(&j->w);
		job_free(j);
	}
}

/* Starts the worker; NULL (and err) when it cannot: the caller renders here. */
static struct topo_job *topo_start(struct sm *sm, const struct topo_in *in)
{
	struct topo_job *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->sm = sm;
	worker_init(&j->w);
	j->in = *in;
	fabric_init(&j->f);
	const struct fabric *f = in->f;
	j->lost = malloc((in->n_lost ? in->n_lost : 1) * sizeof(*j->lost));
	if (in->hot && !(j->hot = malloc(f->n_ports ? f->n_ports : 1)))
		goto fail;
	if (in->hot)
		memcpy(j->hot, in->hot, f->n_ports);
	if (!j->lost || fabric_clone(&j->f, f) < 0 ||
	    (in->t && migrate_tables_copy(&j->t, in->t, f, in->t->max_lid) < 0))
		goto fail;
	if (in->n_lost)
		memcpy(j->lost, in->lost, in->n_lost * sizeof(*j->lost));
	j->in.f = &j->f;
	j->in.t = in->t ? &j->t : NULL;
	j->in.lost = j->lost;
	j->in.hot = j->hot;
	for (uint32_t n = 0; n < j->f.n_nodes; n++)
		snprintf(j->f.nodes[n].desc, sizeof(j->f.nodes[n].desc), "%s",
			 fabric_node_name(f, n));
	if (worker_start(&j->w, sm->base, topo_thread, on_topo_done, j) < 0)
		goto fail;
	j->next = sm->topo_jobs;
	sm->topo_jobs = j;
	return j;
fail:
	job_free(j);
	return NULL;
}

/*
 * What the SM's subnet is rendered from; -1 with err before the first
 * configuring sweep.  settled: the caller knows the tables are the
 * model's (a heavy sweep's end, before the sweeper is told).
 */
static int topo_in_of(struct sm *sm, int settled, struct topo_in *in, char *err,
		      size_t errlen)
{
	if (!sm->sub.model) {
		snprintf(err, errlen, "no subnet configured yet (state %s)",
			 sm_state_name(sm->state));
		return -1;
	}
	/*
	 * In a heavy sweep the model can be ahead of the tables (being
	 * adopted or routed for it): no routes per link until it is done.
	 */
	int in_sweep = !settled && sm->sw.activity == SM_HEAVY_SWEEP;
	const struct lft_tables *t = sm->sub.lft.n_sw && !in_sweep ? &sm->sub.lft : NULL;
	*in = (struct topo_in){
		.f = &sm->sub.model->f, .t = t,
		.lost = sm->sub.links.lost, .n_lost = sm->sub.links.n_lost,
		.left_out = t ? NULL : in_sweep ? "a heavy sweep is running" : "no routes",
		.as_of = sm->state == SMS_MASTER ? 0 : sm->sub.configured_at,
	};
	/* the performance manager's hot ports (freed by topo_in_done) */
	const struct fabric *f = &sm->sub.model->f;
	uint8_t *hot = malloc(f->n_ports ? f->n_ports : 1);
	if (hot && perfmgr_hot_ports(sm, f, hot))
		in->hot = hot;
	else
		free(hot);
	return 0;
}

static void topo_in_done(struct topo_in *in)
{
	free((uint8_t *)in->hot);
	in->hot = NULL;
}

int ctl_topology_draw(struct sm *sm, int settled, topo_drawn_cb drawn, void *arg,
		      char *err, size_t errlen)
{
	struct topo_in in;
	if (topo_in_of(sm, settled, &in, err, errlen) < 0)
		return -1;
	in.as_svg = 1;
	struct topo_job *j = sm->base ? topo_start(sm, &in) : NULL;
	topo_in_done(&in);
	if (!j) {
		snprintf(err, errlen, "cannot start a worker");
		return -1;
	}
	j->drawn = drawn;
	j->drawn_arg = arg;
	return 0;
}

json_t *ctl_topology(struct sm *sm, const json_t *req, char *err, size_t errlen)
{
	struct topo_in in;
	if (topo_in_of(sm, 0, &in, err, errlen) < 0)
		return NULL;
	in.as_dot = json_is_true(json_object_get(req, "dot"));
	in.as_svg = json_is_true(json_object_get(req, "svg"));
	if (in.as_dot && in.as_svg) {
		topo_in_done(&in);
		snprintf(err, errlen, "topology: --dot or --svg, not both");
		return NULL;
	}
	if (sm->ctl && sm->base) {
		struct topo_job *j = topo_start(sm, &in);
		topo_in_done(&in);
		if (j) {
			j->id = control_defer(sm->ctl);
			if (j->id)
				return NULL;	/* the worker answers */
			/* not in a handler: nobody to answer later */
			worker_join(&j->w);
			json_t *res = j->res;
			j->res = NULL;
			if (!res)
				snprintf(err, errlen, "%s", j->err);
			job_free(j);
			return res;
		}
	}
	json_t *res = render(&in, err, errlen);
	topo_in_done(&in);
	return res;
}
