/*
 * The route verifier's report as text (see verify.h): verify_print().
 */
#include <stdio.h>

#include "routing/verify/contention.h"
#include "routing/verify/hol.h"
#include "routing/verify/pverify.h"
#include "routing/verify/verify.h"
#include "sm/base/clock.h"

static const char *fail_text(uint8_t kind)
{
	switch (kind) {
	case VERIFY_DROP: return "dropped";
	case VERIFY_HOLE: return "sent into a hole";
	case VERIFY_LOOP: return "caught in a loop";
	}
	return "?";
}

static void print_load(FILE *fp, const char *what, const char *unit,
		       const struct verify_load *l)
{
	if (!l->links)
		return;
	fprintf(fp, "  %-8s %6u %s: max %llu, min %llu, mean %.1f routes\n",
		what, l->links, unit, (unsigned long long)l->max,
		(unsigned long long)l->min, (double)l->total / l->links);
}

/* "VLs 0,1,2,3" */
static void print_vls(FILE *fp, uint16_t mask)
{
	const char *sep = " ";
	fprintf(fp, "VL%s", mask & (mask - 1) ? "s" : "");
	for (unsigned vl = 0; vl < VERIFY_VLS; vl++) {
		if (mask & (1u << vl)) {
			fprintf(fp, "%s%u", sep, vl);
			sep = ",";
		}
	}
	if (!mask)
		fprintf(fp, " none");
}

/* Routes per (link, VL), the VL check (t had SL-to-VL tables). */
static void print_qos(const struct verify_report *r, FILE *fp)
{
	fprintf(fp, "  routes per (switch-to-switch link, VL), ");
	print_vls(fp, r->vls_used);
	fprintf(fp, " in use:\n");
	print_load(fp, "(link,VL)", "channels", &r->vl_all);
	for (unsigned vl = 0; vl < VERIFY_VLS; vl++) {
		char what[16];
		snprintf(what, sizeof(what), "VL%u", vl);
		if (r->vls_used & (1u << vl))
			print_load(fp, what, "links", &r->per_vl[vl]);
	}
	if (!r->vl_bad) {
		fprintf(fp, "  VLs: every route on data VLs its links run, none on VL 15\n");
		return;
	}
	const struct verify_vl_example *e = &r->vl_ex;
	fprintf(fp, "  VLs: %llu pairs on VL 15 or a VL their link lacks, e.g. \"%s\" port %u (0x%016llx) -> LID %u, SL %u: VL %u out of \"%s\" (0x%016llx) port %u, a link of %u data VLs\n",
		(unsigned long long)r->vl_bad, e->src_desc, e->src_port,
		(unsigned long long)e->src_guid, e->lid, e->sl, e->vl,
		e->at_desc, (unsigned long long)e->at_guid, e->at_port,
		e->link_vls);
}

/* "all max 24, min 0" for one class of links, nothing when it has none. */
static void print_class(FILE *fp, const char **sep, const char *what,
			const struct verify_load *l, uint32_t per)
{
	if (!l->links)
		return;
	if (per > 1)
		fprintf(fp, "%s%s max %.1f, min %.1f", *sep, what,
			(double)l->max / per, (double)l->min / per);
	else
		fprintf(fp, "%s%s max %llu, min %llu", *sep, what,
			(unsigned long long)l->max, (unsigned long long)l->min);
	*sep = "; ";
}

/* Routes per link by LID offset and their balance (LMC > 0). */
static void print_offsets(const struct verify_report *r, FILE *fp)
{
	static const char *const cls[] = { "all", "up", "down" };
	const char *sep = " ";
	fprintf(fp, "  routes per switch-to-switch link and LID offset (%u LIDs per CA port):\n",
		r->n_offsets);
	for (uint32_t k = 0; k < r->n_offsets && k < VERIFY_OFFSETS; k++) {
		const struct verify_offset *o = &r->off[k];
		sep = " ";
		fprintf(fp, "    offset %u:", k);
		print_class(fp, &sep, "all", &o->all, 1);
		print_class(fp, &sep, "up", &o->up, 1);
		print_class(fp, &sep, "down", &o->down, 1);
		if (o->unbalanced) {
			fprintf(fp, ": UNBALANCED (");
			for (unsigned c = 0, n = 0; c < 3; c++)
				if (o->unbalanced & (1u << c))
					fprintf(fp, "%s%s", n++ ? ", " : "", cls[c]);
			fprintf(fp, ")");
		}
		fprintf(fp, "\n");
	}
	sep = " ";
	fprintf(fp, "    offsets together, per offset:");
	print_class(fp, &sep, "all", &r->sum_all, r->n_offsets);
	print_class(fp, &sep, "up", &r->sum_up, r->n_offsets);
	print_class(fp, &sep, "down", &r->sum_down, r->n_offsets);
	fprintf(fp, "\n");
	if (r->offsets_unbalanced)
		fprintf(fp, "  LID offsets: %u of %u spread over the links less evenly than the offsets together (error: each offset must be balanced on its own)\n",
			r->offsets_unbalanced, r->n_offsets);
	else
		fprintf(fp, "  LID offsets: each spread over the links as the offsets together\n");
}

int verify_print(const struct verify_report *r, FILE *fp)
{
	fprintf(fp, "route verification: %u switches, %u CA ports, %u LIDs",
		r->switches, r->sources, r->lids);
	if (r->unattached_lids)
		fprintf(fp, " (%u more on ports no switch reaches)", r->unattached_lids);
	fprintf(fp, ", %llu pairs\n", (unsigned long long)r->pairs);
	if (!r->unreachable)
		fprintf(fp, "  reachability: every CA port reaches every LID, no loops\n");
	else
		fprintf(fp, "  reachability: %llu pairs undelivered: %llu dropped, %llu into a hole, %llu in a loop\n",
			(unsigned long long)r->unreachable,
			(unsigned long long)r->drops,
			(unsigned long long)r->holes,
			(unsigned long long)r->loops);
	for (uint32_t i = 0; i < r->n_examples; i++) {
		const struct verify_example *e = &r->ex[i];
		fprintf(fp, "    \"%s\" port %u (0x%016llx) -> LID %u: %s at \"%s\" (0x%016llx), entry %u\n",
			e->src_desc, e->src_port, (unsigned long long)e->src_guid,
			e->lid, fail_text(e->kind), e->at_desc,
			(unsigned long long)e->at_guid, e->at_port);
	}
	fprintf(fp, "  hops: max %u; %llu pairs longer than the shortest path",
		r->max_hops, (unsigned long long)r->nonminimal);
	if (r->nonminimal)
		fprintf(fp, " (by up to %u)", r->max_excess);
	fprintf(fp, "\n");
	fprintf(fp, "  routes per switch-to-switch link over %llu CA-to-CA pairs (max rank %u):\n",
		(unsigned long long)r->ca_pairs, r->max_rank);
	print_load(fp, "all", "links", &r->all);
	print_load(fp, "up", "links", &r->up);
	print_load(fp, "down", "links", &r->down);
	print_load(fp, "lateral", "links", &r->lateral);
	if (r->n_offsets > 1)
		print_offsets(r, fp);
	if (r->qos) {
		print_qos(r, fp);
		fprintf(fp, "  channel dependencies over (link, VL), VLs 0-%u: %u channels in use, %llu dependencies, ",
			r->n_vls - 1, r->cdg_nodes, (unsigned long long)r->cdg_edges);
	} else {
		fprintf(fp, "  channel dependencies (VL0): %u links, %llu dependencies, ",
			r->cdg_nodes, (unsigned long long)r->cdg_edges);
	}
	if (!r->cycle) {
		fprintf(fp, "no cycle\n");
	} else {
		fprintf(fp, "a cycle of %u links (%s):", r->cycle_len,
			r->deadlock_free_required ?
			"error: the engine promises deadlock freedom" :
			"warning: the engine does not promise deadlock freedom");
		for (uint32_t i = 0; i < r->cycle_len && i < VERIFY_CYCLE_SHOW; i++) {
			fprintf(fp, " 0x%016llx/%u", (unsigned long long)r->cycle_guid[i],
				r->cycle_port[i]);
			if (r->qos)
				fprintf(fp, "/VL%u", r->cycle_vl[i]);
		}
		fprintf(fp, "%s\n", r->cycle_len > VERIFY_CYCLE_SHOW ? " ..." : "");
	}
	/* the data VLs CA-to-CA routes take (VL0 alone without SL-to-VL tables) */
	fprintf(fp, "vls: used=%d\n", r->qos ? __builtin_popcount(r->vls_used) : 1);
	fprintf(fp, "verify: %s: %u error%s, %u warning%s: %llu undelivered, %llu in loops, %s",
		r->errors ? "FAILED" : "OK", r->errors, r->errors == 1 ? "" : "s",
		r->warnings, r->warnings == 1 ? "" : "s",
		(unsigned long long)r->unreachable, (unsigned long long)r->loops,
		r->cycle ? "dependency cycle" : "no dependency cycle");
	if (r->qos)
		fprintf(fp, ", %llu on a VL the link lacks", (unsigned long long)r->vl_bad);
	if (r->n_offsets > 1)
		fprintf(fp, ", %u LID offset%s unbalanced", r->offsets_unbalanced,
			r->offsets_unbalanced == 1 ? "" : "s");
	if (r->elapsed_ms)
		fprintf(fp, " (%llu ms)", (unsigned long long)r->elapsed_ms);
	fprintf(fp, "\n");
	return ferror(fp) ? -1 : 0;
}

static double share(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

int hol_print(const struct hol_report *r, const char *pattern, FILE *fp)
{
	fprintf(fp, "hol: pattern=%s flows=%llu hot=%llu victims=%llu exposed=%llu (%.1f%%); VLs ignored: exposed=%llu (%.1f%%)",
		pattern, (unsigned long long)r->flows, (unsigned long long)r->hot,
		(unsigned long long)r->victims, (unsigned long long)r->exposed,
		share(r->exposed, r->victims),
		(unsigned long long)r->exposed_novl,
		share(r->exposed_novl, r->victims));
	if (r->undelivered)
		fprintf(fp, "; %llu undelivered", (unsigned long long)r->undelivered);
	fprintf(fp, "\n");
	return ferror(fp) ? -1 : 0;
}

/* ---- receivers (contention.h) ---- */

static void print_dir(FILE *fp, const char *what,
		      const struct contention_dir *d)
{
	fprintf(fp, "%s %llu on %u of %u links (max %u)", what,
		(unsigned long long)d->total, d->contended, d->links, d->max);
}

void contention_print(const struct contention_report *r,
		      const struct part_model *m, const char *what, FILE *fp)
{
	fprintf(fp, "verify: receivers: %s: %u receivers, %llu flows",
		what, r->receivers, (unsigned long long)r->flows);
	if (r->undelivered)
		fprintf(fp, ", %llu undelivered", (unsigned long long)r->undelivered);
	fprintf(fp, "\nverify: contention: ");
	print_dir(fp, "up", &r->up);
	print_dir(fp, ", down", &r->down);
	if (r->lateral)
		fprintf(fp, "; %u links between switches of one rank not counted",
			r->lateral);
	fprintf(fp, "\nverify: interference: %llu (flow, link) occurrences on %u shared links; %llu of %llu flows share a link with another partition's\n",
		(unsigned long long)r->interference, r->shared_links,
		(unsigned long long)r->interfered, (unsigned long long)r->flows);
	for (uint32_t p = 1; p < r->n_parts && m && p < m->n_parts; p++)
		fprintf(fp, "verify: exposure: partition %s: %llu routes cross a link where its flows meet another route\n",
			m->parts[p].name, (unsigned long long)r->exposed[p]);
}

/* ---- partitions (pverify.h) ---- */

static void print_part(const struct pverify_report *r,
		       const struct part_model *m, uint32_t p, FILE *fp)
{
	const struct part *pt = &m->parts[p];
	const struct pverify_part *pp = &r->part[p];
	fprintf(fp, "verify: partition %s (%s): ", pt->name,
		part_policy_names[pt->policy]);
	if (pt->policy == PART_VLANE) {
		fprintf(fp, "VL ");
		for (unsigned vl = 0, sep = 0; vl < 16; vl++)
			if (pp->vls & (1u << vl))
				fprintf(fp, "%s%u", sep++ ? "," : "", vl);
		if (!pp->vls)
			fprintf(fp, "%u", pp->sl);	/* uses no link */
		fprintf(fp, ", shares %u links on its VL (%u in all)",
			pp->vl_shared, pp->shared);
	} else {
		fprintf(fp, "shares %u links", pp->shared);
	}
	fprintf(fp, " of the %u it uses", pp->links);
	if (pp->violated)
		fprintf(fp, ": VIOLATED (%s)",
			r->strict ? "strict: error" : "best-effort: warning");
	fprintf(fp, "\n");
}

/*
 * The partition section of --verify:
 *   verify: partitions: N tenants, shared links S (of L), max routes/link X, min Y
 *   verify: partition NAME (POLICY): shares K links[, VL v, shares K links on its VL]
 *   verify: partition NAME ...: VIOLATED (strict: error | best-effort: warning)
 *   verify: partitions: FAILED: strict isolation not met by NAME[, NAME...]
 * 0, or -1 on a write error.
 */
static int pverify_print(const struct pverify_report *r,
			 const struct part_model *m, FILE *fp)
{
	fprintf(fp, "verify: partitions: %u tenants, shared links %u (of %u), max routes/link %llu, min %llu\n",
		r->tenants, r->shared_links, r->links,
		(unsigned long long)r->max_routes,
		(unsigned long long)r->min_routes);
	for (uint32_t p = 1; p < r->n_parts && p < m->n_parts; p++)
		print_part(r, m, p, fp);
	if (r->undelivered)
		fprintf(fp, "verify: partitions: %llu of %llu partition pairs undelivered\n",
			(unsigned long long)r->undelivered,
			(unsigned long long)r->pairs);
	if (r->errors) {
		fprintf(fp, "verify: partitions: FAILED: strict isolation not met by");
		for (uint32_t p = 1, n = 0; p < r->n_parts && p < m->n_parts; p++)
			if (r->part[p].violated)
				fprintf(fp, "%s %s", n++ ? "," : "", m->parts[p].name);
		fprintf(fp, "\n");
	}
	return ferror(fp) ? -1 : 0;
}

int pverify_section(const struct fabric *f, const struct lft_tables *t,
		    const struct part_model *m, struct verify_report *vr,
		    FILE *fp)
{
	struct pverify_report r;
	if (!m || m->n_parts < 2)
		return 0;
	if (pverify(f, t, m, &r) < 0)
		return -1;
	pverify_print(&r, m, fp);
	vr->errors += r.errors;
	if (!r.strict)
		vr->warnings += r.violations;
	pverify_free(&r);
	return 0;
}

int verify_tables(FILE *fp, const struct fabric *f, const struct lft_tables *t,
		  const struct part_model *parts, const char *engine,
		  const char *what, int max_op_vls,
		  int (*extra)(void *arg, FILE *fp), void *arg)
{
	struct verify_opts vo = {
		.deadlock_free_required = verify_engine_deadlock_free(engine),
		.max_op_vls = max_op_vls,
	};
	struct verify_report r;
	uint64_t t0 = clock_ms();
	if (route_verify(f, t, &vo, &r) < 0)
		return -1;
	r.elapsed_ms = clock_ms() - t0;
	fprintf(fp, "checking %s (engine %s)\n", what, engine ? engine : "?");
	if (pverify_section(f, t, parts, &r, fp) < 0)
		return -1;
	int bad = extra ? extra(arg, fp) : 0;
	if (bad < 0)
		return -1;
	r.errors += (uint32_t)bad;	/* the last line says FAILED */
	verify_print(&r, fp);
	fflush(fp);
	return r.errors ? 1 : 0;
}
