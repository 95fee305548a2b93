/*
 * ibsmd --offline: the SM's work on a topology file with no fabric -- LIDs,
 * routes, QoS and partitions as a heavy sweep would make them, the summary
 * line, and the what-if options on the result: --dump-lfts,
 * --dump-topology, --dot, --verify, --pattern (head-of-line exposure),
 * --migrate (a VM's or a port's move, counted against an emulated fabric),
 * --jobs (a job trace replayed, sm/offjobs.h), --receivers (receiver
 * contention and inter-partition interference, routing/verify/contention.h),
 * --migrate-pattern (a pattern of VM migrations, sm/offmig.h).
 */
#include "sm/offline.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/qos/pvl.h"
#include "routing/qos/voqsw.h"
#include "routing/verify/contention.h"
#include "routing/verify/hol.h"
#include "routing/verify/receivers.h"
#include "routing/verify/verify.h"
#include "sm/base/clock.h"
#include "sm/base/log.h"
#include "sm/base/topo.h"
#include "sm/daemon.h"
#include "sm/heavy.h"
#include "sm/offjobs.h"
#include "sm/offmig.h"
#include "sm/model/vswitch.h"
#include "sm/render/dot.h"
#include "sm/render/dump.h"
#include "sm/route.h"
#include "sm/write/migcount.h"
#include "sm/model/vm.h"
#include "sm/model/qos.h"
#include "sm/model/lids.h"
#include "reconfig/migrate.h"

static int write_file(const char *path, int (*fn)(FILE *, const void *, const void *),
		      const void *a, const void *b)
{
	FILE *fp = fopen(path, "w");
	if (!fp) {
		fprintf(stderr, "ibsmd: %s: %s\n", path, strerror(errno));
		return -1;
	}
	int rc = fn(fp, a, b);
	if (fclose(fp) != 0 || rc < 0) {
		fprintf(stderr, "ibsmd: cannot write %s\n", path);
		return -1;
	}
	return 0;
}

static int w_topo(FILE *fp, const void *a, const void *b)
{
	(void)b;
	return dump_topology(a, fp);
}

static int w_lfts(FILE *fp, const void *a, const void *b)
{
	return dump_lfts(a, b, fp);
}

/*
 * --dump-sls: "SRC DST SL", one line for every CA port's base LID as the
 * source and every end port's base LID as the destination, by port GUID
 * (the LIDs of another run may differ): the PathRecord SL the daemon
 * would answer (lft_sl()).  Quadratic in the ports: for test fabrics.
 */
static int w_sls(FILE *fp, const void *a, const void *b)
{
	const struct fabric *f = a;
	const struct lft_tables *t = b;
	for (uint32_t s = 1; s <= f->max_lid; s++) {
		uint32_t sp = f->lid_port[s];
		if (sp == FAB_NONE || f->ports[sp].lid != s ||
		    f->nodes[f->ports[sp].node].type == FAB_SWITCH)
			continue;
		for (uint32_t d = 1; d <= f->max_lid; d++) {
			uint32_t dp = f->lid_port[d];
			if (d == s || dp == FAB_NONE || f->ports[dp].lid != d)
				continue;
			fprintf(fp, "0x%016llx 0x%016llx %u\n",
				(unsigned long long)f->ports[sp].guid,
				(unsigned long long)f->ports[dp].guid, lft_sl(t, s, d));
		}
	}
	return ferror(fp) ? -1 : 0;
}

static int w_dot(FILE *fp, const void *a, const void *b)
{
	const struct dot_opts o = {
		.fold_hosts = DOT_FOLD_HOSTS,
		.title = "ibsmd --offline: the routes it would program",
	};
	return dot_write(fp, a, b, &o, NULL);
}

static int run_migrate(struct fabric *f, struct lft_tables *t,
		       const struct offline_opts *o)
{
	char err[256];
	struct migration m;
	struct mig_count k;

	uint32_t src = endport_find(f, o->mig_src, err, sizeof(err));
	uint32_t dst = src == FAB_NONE ? FAB_NONE :
		       endport_find(f, o->mig_dst, err, sizeof(err));
	if (dst == FAB_NONE) {
		fprintf(stderr, "ibsmd: --migrate: %s\n", err);
		return 1;
	}
	/* VFs behind vSwitches the policy names: the vSwitch-aware plan */
	int vf_s = -1, vf_d = -1;
	int vm = fabric_vswitch_of(f, src, &vf_s) != FAB_NONE && vf_s >= 0 &&
		 fabric_vswitch_of(f, dst, &vf_d) != FAB_NONE && vf_d >= 0;
	if ((vm ? migrate_plan_vm : migrate_plan)(f, t, src, dst, o->scheme,
						  o->method, NULL, &m, err,
						  sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: --migrate: %s\n", err);
		return 1;
	}
	if (m.fallback)
		log_notice("ftreeminrc: %s: itrc instead", m.note);
	if (migcount_run(f, t, &m, &k, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: --migrate: %s\n", err);
		migration_free(&m);
		return 1;
	}
	k.lft_blocks -= k.vswitch_blocks;	/* the physical ones, as planned */
	if (k.lft_blocks != m.lft_blocks || k.switches != m.switches_written ||
	    k.vswitch_blocks != m.vswitch_blocks)
		log_warn("counting transport: %u blocks to %u switches (%u to vSwitches),"
			 " planned %u to %u (%u)", k.lft_blocks, k.switches,
			 k.vswitch_blocks, m.lft_blocks, m.switches_written,
			 m.vswitch_blocks);
	printf("migration: method=%s scheme=%s switches_marked=%u switches_written=%u"
	       " lft_blocks=%u other_smps=%u plan_us=%" PRIu64 " mark_us=%" PRIu64
	       " levels_us=%" PRIu64 " run_us=%" PRIu64 " waves=%u vm_lid=%u"
	       " dst_lid=%u entries=%u%s",
	       mig_method_name(m.method), mig_scheme_name(m.scheme),
	       m.switches_marked, k.switches, k.lft_blocks, k.other_smps,
	       m.plan_us, m.mark_us, m.levels_us, k.run_us, k.waves, m.vm_lid,
	       m.dst_lid, m.entries_changed,
	       m.fallback ? " fallback=itrc" : "");
	if (vm)
		printf(" vswitch_blocks=%u vswitches_written=%u", k.vswitch_blocks,
		       m.vswitches_written);
	printf("\n");
	migration_free(&m);
	return 0;
}

/*
 * --offline: the vSwitches the policy names, and the VMs of the registry
 * in the state directory (read, never written) with their LIDs in m.
 * Under the dynamic scheme idle VFs get no LID; --migrate's SRC, when it
 * is a VF, carries a VM (it has a LID to move).  0, or -1 (said why).
 */
static int offline_vms(struct fabric *f, const struct config *cfg,
		       const struct offline_opts *o, struct guid_map *m)
{
	char err[1024];
	struct vswitch_report vr;
	struct vm_registry vms;
	vswitch_mark(f, cfg, &vr);
	if (guid_map_init(m, 64) < 0) {
		fprintf(stderr, "ibsmd: out of memory\n");
		return -1;
	}
	if (vm_registry_load(&vms, cfg->state_dir, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: %s\n", err);
		return -1;
	}
	vm_apply(&vms, f, cfg->lid_scheme);
	int rc = vm_registry_lids(&vms, m);
	vm_registry_free(&vms);
	if (rc < 0) {
		fprintf(stderr, "ibsmd: out of memory\n");
		return -1;
	}
	for (uint32_t pi = 0; o->mig_src && pi < f->n_ports; pi++) {
		struct fab_port *p = &f->ports[pi];
		int vf;
		if (!(p->flags & FPORT_NOLID) ||
		    fabric_vswitch_of(f, pi, &vf) == FAB_NONE || vf < 0)
			continue;
		if (!strcmp(f->nodes[p->node].desc, o->mig_src) ||
		    (!strncmp(o->mig_src, "0x", 2) &&
		     strtoull(o->mig_src, NULL, 16) == p->guid)) {
			p->flags &= (uint8_t)~FPORT_NOLID;
			if (!p->vm_weight)
				p->vm_weight = 1;
		}
	}
	return 0;
}

/* A file's whole text, NUL-terminated; NULL with errno. */
static char *read_text(const char *path)
{
	FILE *fp = fopen(path, "r");
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	if (!fp || !buf) {
		if (fp)
			fclose(fp);
		free(buf);
		return NULL;
	}
	for (;;) {
		len += fread(buf + len, 1, cap - len - 1, fp);
		if (len < cap - 1)
			break;
		char *nb = realloc(buf, cap *= 2);
		if (!nb) {
			free(buf);
			fclose(fp);
			return NULL;
		}
		buf = nb;
	}
	int bad = ferror(fp);
	fclose(fp);
	if (bad) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

/*
 * --verify --pattern: the HOL exposure of the pattern's victims
 * (routing/verify/hol.h); 2 when the pattern cannot be read or names no CA.
 */
static int run_hol(const struct fabric *f, const struct lft_tables *t,
		   const char *spec)
{
	char err[1024];
	struct hol_pattern p;
	struct hol_report r;
	int rc;
	if (!strncmp(spec, "hotspot:", 8)) {
		rc = hol_hotspot(f, spec + 8, &p, err, sizeof(err));
	} else {
		char *text = read_text(spec);
		if (!text) {
			fprintf(stderr, "ibsmd: --pattern %s: %s\n", spec, strerror(errno));
			return 2;
		}
		rc = hol_parse(f, text, spec, &p, err, sizeof(err));
		free(text);
	}
	if (rc < 0) {
		fprintf(stderr, "ibsmd: --pattern: %s\n", err);
		return 2;
	}
	rc = hol_expose(f, t, &p, &r);
	hol_pattern_free(&p);
	if (rc < 0) {
		fprintf(stderr, "ibsmd: --pattern: out of memory\n");
		return 1;
	}
	hol_print(&r, spec, stdout);
	fflush(stdout);
	return 0;
}

/* --receivers: the receivers chosen, for the contention section. */
struct rcv_run {
	const struct fabric *f;
	const struct lft_tables *t;
	const struct part_model *m;
	uint8_t *recv;		/* per port */
	char what[512];
};

/*
 * The receivers of o->receivers into r->recv (allocated), r->what naming
 * them; 0, or 2 when the file cannot be read or names no CA port.
 */
static int rcv_select(struct rcv_run *r, const struct offline_opts *o)
{
	char err[1024], part[PART_NAME_LEN];
	uint32_t per_leaf;
	int n;
	r->recv = calloc((size_t)r->f->n_ports + 1, 1);
	if (!r->recv) {
		fprintf(stderr, "ibsmd: out of memory\n");
		return 1;
	}
	int random = receivers_spec(o->receivers, &per_leaf, part, sizeof(part),
				    err, sizeof(err));
	if (random > 0) {
		n = receivers_random(r->f, r->m, per_leaf, part, o->seed, r->recv,
				     err, sizeof(err));
		snprintf(r->what, sizeof(r->what), "%s (seed %llu), weight %u",
			 o->receivers, (unsigned long long)o->seed,
			 o->receiver_weight);
	} else {
		char *text = read_text(o->receivers);
		if (!text) {
			fprintf(stderr, "ibsmd: --receivers %s: %s\n", o->receivers,
				strerror(errno));
			return 2;
		}
		n = receivers_parse(r->f, text, o->receivers, r->recv, err,
				    sizeof(err));
		free(text);
		snprintf(r->what, sizeof(r->what), "%s, weight %u", o->receivers,
			 o->receiver_weight);
	}
	if (n < 0) {
		fprintf(stderr, "ibsmd: --receivers: %s\n", err);
		return 2;
	}
	return 0;
}

/*
 * The paper's setting for pFTree-Wt (Section 7.1): the receivers weigh
 * o->receiver_weight, every other end port 1, in place of the policy's
 * and learned weights; m resolved again with them.  0, or 1 (said why).
 */
static int rcv_weights(const struct config *cfg, const struct fabric *f,
		       const uint8_t *recv, uint32_t weight,
		       struct part_model *m)
{
	struct part_weights w = { 0 };
	struct { uint64_t guid; uint32_t weight; } *v;
	v = malloc(((size_t)f->n_ports + 1) * sizeof(*v));
	w.guid = malloc(((size_t)f->n_ports + 1) * sizeof(*w.guid));
	w.weight = malloc(((size_t)f->n_ports + 1) * sizeof(*w.weight));
	int rc = 1;
	if (!v || !w.guid || !w.weight)
		goto out;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (!fabric_is_endport(f, pi) || f->nodes[p->node].type == FAB_SWITCH)
			continue;
		v[w.n].guid = p->guid ? p->guid : f->nodes[p->node].guid;
		v[w.n++].weight = recv[pi] ? weight : 1;
	}
	/* sorted by GUID (insertion: the CA ports of a test fabric) */
	for (uint32_t i = 0; i < w.n; i++) {
		uint32_t j = i;
		while (j > 0 && w.guid[j - 1] > v[i].guid) {
			w.guid[j] = w.guid[j - 1];
			w.weight[j] = w.weight[j - 1];
			j--;
		}
		w.guid[j] = v[i].guid;
		w.weight[j] = v[i].weight;
	}
	part_model_free(m);
	rc = part_resolve(cfg, f, &w, 0, m) < 0;
out:
	if (rc)
		fprintf(stderr, "ibsmd: out of memory\n");
	free(v);
	free(w.guid);
	free(w.weight);
	return rc;
}

/* verify_tables()'s extra section: the contention of the receivers. */
static int rcv_section(void *arg, FILE *fp)
{
	struct rcv_run *r = arg;
	struct contention_report cr;
	if (contention_measure(r->f, r->t, r->m, r->recv, &cr) < 0)
		return -1;
	contention_print(&cr, r->m, r->what, fp);
	contention_free(&cr);
	return 0;
}

/* --jobs: the trace's text to the replay's driver. */
static int run_jobs(const struct fabric *f, const struct lft_tables *t,
		    const char *engine, const struct offline_opts *o)
{
	char *text = read_text(o->jobs);
	if (!text) {
		fprintf(stderr, "ibsmd: --jobs %s: %s\n", o->jobs, strerror(errno));
		return 1;
	}
	const struct offjobs_opts jo = {
		.trace = o->jobs, .text = text, .pattern = o->pattern,
		.first = o->first, .cpus_per_node = o->cpus_per_node,
		.seed = o->seed,
	};
	int rc = offjobs_run(f, t, engine, &jo);
	free(text);
	return rc;
}

/*
 * The SLs and SL-to-VL tables the daemon would write; the QoS line on
 * stdout, and under voqsw the SLs full VOQ would need (stages 1-4 with
 * no SL limit, the paper's Table 1).
 */
static int offline_qos(const struct config *cfg, const struct fabric *f,
		       const struct part_model *parts, struct lft_tables *t)
{
	char line[256];
	struct qos_report qr;
	if (qos_apply(cfg, f, parts, t, &qr) < 0) {
		if (qr.fail[0])
			fprintf(stderr, "ibsmd: partitions: %s\n", qr.fail);
		return -1;
	}
	qos_describe(&qr, line, sizeof(line));
	printf("%s\n", line);
	for (uint32_t p = 1; t->part_sl && p < t->n_part_sl; p++)
		printf("qos: partition %s: SL %u\n", parts->parts[p].name,
		       t->part_sl[p]);
	if (cfg->qos_mode == QOS_VOQSW) {
		struct voqsw_report vr;
		unsigned sls;
		if (voqsw_full_sls(f, t, &sls, &vr) < 0)
			printf("qos: voqsw: full VOQ needs more than %u SLs (or out of memory)\n",
			       VOQSW_MAX_SLS);
		else
			printf("qos: voqsw: full VOQ needs %u SLs\n", sls);
	}
	return 0;
}

int offline_run(const struct config *cfg, const struct offline_opts *o)
{
	char err[1024];
	struct fabric f;
	struct lft_tables t = { 0 };
	struct sweep_summary s = { 0 };
	struct guid_map vm_lids = { 0 };
	struct part_model parts = { 0 };
	struct rcv_run rcv = { 0 };
	struct offmig mig = { .pattern = o->mig_pattern,
			      .population = o->population,
			      .uniform = o->initial_uniform, .seed = o->seed };
	uint64_t t0 = clock_ms();
	fabric_init(&f);
	if (topo_load(&f, o->topo, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: %s\n", err);
		fabric_free(&f);
		return 1;
	}
	int rc = 1;
	if (offline_vms(&f, cfg, o, &vm_lids) < 0)
		goto out;
	if (o->mig_pattern >= 0 && (rc = offmig_place(&f, &mig)) != 0)
		goto out;
	rc = 1;
	if (lids_assign(&f, &vm_lids, (uint8_t)cfg->lmc, &s.lids_rep) < 0) {
		fprintf(stderr, "ibsmd: out of memory\n");
		goto out;
	}
	if (s.lids_rep.exhausted)
		log_err("LID space exhausted: %u ports have no LID", s.lids_rep.exhausted);
	if (s.lids_rep.vf_shared)
		log_warn("LID space exhausted: %u VF ports left without a LID are shared-LID slots (a VM created on one shares its hypervisor's PF LID); LIDs already given are kept",
			 s.lids_rep.vf_shared);
	if (part_resolve(cfg, &f, NULL, 1, &parts) < 0) {
		fprintf(stderr, "ibsmd: out of memory\n");
		goto out;
	}
	rcv.f = &f;
	rcv.t = &t;
	rcv.m = &parts;
	if (o->receivers && ((rc = rcv_select(&rcv, o)) != 0 ||
			     (rc = rcv_weights(cfg, &f, rcv.recv,
					       o->receiver_weight, &parts)) != 0))
		goto out;
	rc = 1;
	if (sm_route(cfg, NULL, &f, &parts, &t, &s.routing, &s.route_ms) < 0)
		goto out;
	if ((config_qos_tables(cfg) || pvl_needed(&parts)) &&
	    offline_qos(cfg, &f, &parts, &t) < 0)
		goto out;
	fabric_counts(&f, &s.switches, &s.cas, &s.ports);
	s.max_lid = f.max_lid;
	for (uint32_t l = 1; l <= f.max_lid; l++)
		if (f.lid_port[l] != FAB_NONE)
			s.lids++;
	s.sweep_ms = clock_ms() - t0;
	if (o->dump_topology && write_file(o->dump_topology, w_topo, &f, NULL) < 0)
		goto out;
	if (o->dump_lfts && write_file(o->dump_lfts, w_lfts, &f, &t) < 0)
		goto out;
	if (o->dot && write_file(o->dot, w_dot, &f, &t) < 0)
		goto out;
	if (o->dump_sls && write_file(o->dump_sls, w_sls, &f, &t) < 0)
		goto out;
	sm_print_summary(&s, "offline");
	rc = o->verify ? verify_tables(stdout, &f, &t, &parts, s.routing,
				       "the computed LFTs", cfg->max_op_vls,
				       o->receivers ? rcv_section : NULL, &rcv) : 0;
	if (rc < 0) {
		fprintf(stderr, "ibsmd: verify: out of memory\n");
		rc = 1;
	}
	if (o->pattern && !o->jobs) {
		int hrc = run_hol(&f, &t, o->pattern);
		if (hrc)
			rc = hrc;
	}
	if (rc == 0 && o->mig_src)
		rc = run_migrate(&f, &t, o);
	if (rc == 0 && o->jobs)
		rc = run_jobs(&f, &t, s.routing, o);
	if (rc == 0 && o->mig_pattern >= 0)
		rc = offmig_run(cfg, &f, &parts, &t, &mig);
out:
	offmig_free(&mig);
	free(rcv.recv);
	guid_map_free(&vm_lids);
	part_model_free(&parts);
	lft_tables_free(&t);
	fabric_free(&f);
	return rc;
}
