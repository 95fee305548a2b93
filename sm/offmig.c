/*
 * ibsmd --offline --migrate-pattern: see offmig.h.
 */
#include "sm/offmig.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconfig/migrate.h"
#include "reconfig/rblocal.h"
#include "reconfig/rebalance.h"
#include "routing/engines/ftree.h"
#include "routing/verify/bisect.h"
#include "sm/base/clock.h"
#include "sm/route.h"
#include "sm/write/migcount.h"

#define PCT 100

int offmig_place(struct fabric *f, struct offmig *s)
{
	uint32_t n_hyp = 0, vfs = UINT32_MAX;
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (fabric_is_vswitch(f, n) && fabric_vswitch_nvf(f, n)) {
			n_hyp++;
			if (fabric_vswitch_nvf(f, n) < vfs)
				vfs = fabric_vswitch_nvf(f, n);
		}
	if (!n_hyp) {
		fprintf(stderr, "ibsmd: --migrate-pattern: the topology has no vSwitch with VFs"
			" (virtualization.vswitches names them)\n");
		return 2;
	}
	uint64_t n_vm = (uint64_t)n_hyp * vfs * s->population / PCT;
	if (!n_vm) {
		fprintf(stderr, "ibsmd: --population %u: no VM on %u VFs\n",
			s->population, n_hyp * vfs);
		return 2;
	}
	s->hyp = malloc(n_hyp * sizeof(*s->hyp));
	s->vf_pi = malloc((size_t)n_hyp * vfs * sizeof(*s->vf_pi));
	if (!s->hyp || !s->vf_pi ||
	    migpat_place_init(&s->place, n_hyp, vfs, (uint32_t)n_vm, s->uniform,
			      s->seed) < 0) {
		fprintf(stderr, "ibsmd: out of memory\n");
		return 1;
	}
	for (uint32_t n = 0, h = 0; n < f->n_nodes; n++) {
		if (!fabric_is_vswitch(f, n) || !fabric_vswitch_nvf(f, n))
			continue;
		s->hyp[h] = n;
		for (unsigned k = 0; k < fabric_vswitch_nvf(f, n); k++) {
			uint32_t pi = fabric_vswitch_vf(f, n, k, NULL);
			int vm = k < vfs && s->place.slot[h * vfs + k] != MIGPAT_FREE;
			if (k < vfs)
				s->vf_pi[h * vfs + k] = pi;
			f->ports[pi].vm_weight = (uint16_t)vm;
			if (vm)
				f->ports[pi].flags &= (uint8_t)~FPORT_NOLID;
			else
				f->ports[pi].flags |= FPORT_NOLID;
		}
		h++;
	}
	return 0;
}

void offmig_free(struct offmig *s)
{
	migpat_place_free(&s->place);
	free(s->hyp);
	free(s->vf_pi);
	s->hyp = s->vf_pi = NULL;
}

/* Per method: switches written per migration. */
struct tally {
	uint64_t sum;
	uint32_t max, n_max;	/* the largest, and how many reached it */
};

static void tally_add(struct tally *k, uint32_t v)
{
	k->sum += v;
	if (v > k->max) {
		k->max = v;
		k->n_max = 0;
	}
	k->n_max += v == k->max;
}

/* The study's state. */
struct study {
	const struct config *cfg;
	struct fabric *f;
	const struct part_model *parts;
	struct lft_tables *tf;	/* FTreeMinRC's */
	struct lft_tables ti;	/* ItRC's */
	struct offmig *s;
	uint32_t *ep;		/* the VMs' VF ports */
	double q[3];		/* the last snapshot: ftreeminrc, itrc, fresh */
	/* virtualization.rebalance on FTreeMinRC's tables */
	struct rebalance_policy pol;
	struct rebalance_state rs;
	uint32_t rebalances, rb_local, rb_switches;
};

/* The bisection quality of the three tables now; 0, or 1 said why. */
static int snapshot(struct study *y, uint32_t done, uint32_t total)
{
	const struct migpat_place *p = &y->s->place;
	struct lft_tables fresh = { 0 };
	struct bisect_result r[3];
	const char *used;
	uint64_t ms;
	uint32_t n = 0;
	for (uint32_t sl = 0; sl < p->n_hyp * p->vfs; sl++)
		if (p->slot[sl] != MIGPAT_FREE)
			y->ep[n++] = y->s->vf_pi[sl];
	if (n < 2)
		return 0;	/* a single VM: no pair to bisect */
	if (sm_route(y->cfg, NULL, y->f, y->parts, &fresh, &used, &ms) < 0) {
		fprintf(stderr, "ibsmd: --migrate-pattern: no engine routes the placement\n");
		return 1;
	}
	const struct lft_tables *tabs[3] = { y->tf, &y->ti, &fresh };
	for (int i = 0; i < 3; i++)
		if (bisect_quality(y->f, tabs[i], y->ep, n, OFFMIG_BISECT_RUNS,
				   y->s->seed, &r[i]) < 0) {
			lft_tables_free(&fresh);
			fprintf(stderr, "ibsmd: out of memory\n");
			return 1;
		}
	lft_tables_free(&fresh);
	for (int i = 0; i < 3; i++)
		y->q[i] = r[i].quality;
	/*
	 * Where a rebalancing policy would look: FTreeMinRC's quality against
	 * the fresh routing's (ratio).
	 */
	printf("quality: migrations=%u/%u pct=%u ftreeminrc=%.4f itrc=%.4f fresh=%.4f"
	       " ratio=%.4f unrouted=%" PRIu64 " runs=%u flows=%u engine=%s\n",
	       done, total, total ? (unsigned)((uint64_t)done * PCT / total) : PCT,
	       r[0].quality, r[1].quality, r[2].quality,
	       r[2].quality > 0 ? r[0].quality / r[2].quality : 0,
	       r[0].unrouted + r[1].unrouted + r[2].unrouted, r[0].runs,
	       r[0].flows, used);
	return 0;
}

/* A VM's LID moved from VF port from to VF port to, in the model. */
static int move_lid(struct fabric *f, uint32_t from, uint32_t to)
{
	f->ports[to].lid = f->ports[from].lid;
	f->ports[to].vm_weight = f->ports[from].vm_weight;
	f->ports[to].flags &= (uint8_t)~FPORT_NOLID;
	f->ports[from].lid = 0;
	f->ports[from].vm_weight = 0;
	f->ports[from].flags |= FPORT_NOLID;
	return fabric_index_lids(f);
}

/*
 * The physical switches m's writes reach through the counting transport
 * (as --migrate counts them), into *n; it must be the plan's count.
 * 0, or 1 said why.
 */
static int counted(struct fabric *f, const struct lft_tables *t,
		   const struct migration *m, uint32_t *n)
{
	char err[256];
	struct mig_count k;
	if (migcount_run(f, t, m, &k, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: --migrate-pattern: %s: %s\n",
			mig_method_name(m->method), err);
		return 1;
	}
	if (k.switches != m->switches_written) {
		fprintf(stderr, "ibsmd: --migrate-pattern: %s: %u switches written, %u planned\n",
			mig_method_name(m->method), k.switches, m->switches_written);
		return 1;
	}
	*n = k.switches;
	return 0;
}

/* One migration planned on both tables; 0, or 1 said why. */
static int migrate_one(struct study *y, const struct migpat_move *mv,
		       const uint32_t *rank, uint32_t i, struct tally k[2],
		       uint32_t *marked_max)
{
	char err[256];
	struct migration mf, mi;
	uint32_t from = y->s->vf_pi[mv->from], to = y->s->vf_pi[mv->to];
	if (migrate_plan_vm(y->f, y->tf, from, to, MIG_DYNAMIC, MIG_FTREEMINRC,
			    rank, &mf, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: --migrate-pattern: ftreeminrc: %s\n", err);
		return 1;
	}
	if (migrate_plan_vm(y->f, &y->ti, from, to, MIG_DYNAMIC, MIG_ITRC, rank,
			    &mi, err, sizeof(err)) < 0) {
		migration_free(&mf);
		fprintf(stderr, "ibsmd: --migrate-pattern: itrc: %s\n", err);
		return 1;
	}
	uint32_t wi = 0, wf = 0;
	if (counted(y->f, &y->ti, &mi, &wi) || counted(y->f, y->tf, &mf, &wf)) {
		migration_free(&mf);
		migration_free(&mi);
		return 1;
	}
	printf("migration: n=%u vm_lid=%u from=%s to=%s itrc=%u ftreeminrc=%u marked=%u%s\n",
	       i + 1, mf.vm_lid,
	       y->f->nodes[y->s->hyp[mv->from / y->s->place.vfs]].desc,
	       y->f->nodes[y->s->hyp[mv->to / y->s->place.vfs]].desc,
	       wi, wf, mf.switches_marked, mf.fallback ? " fallback=itrc" : "");
	tally_add(&k[0], wi);
	tally_add(&k[1], wf);
	if (mf.switches_marked > *marked_max)
		*marked_max = mf.switches_marked;
	migration_free(&mf);
	migration_free(&mi);
	migpat_apply(&y->s->place, mv);
	if (move_lid(y->f, from, to) < 0) {
		fprintf(stderr, "ibsmd: out of memory\n");
		return 1;
	}
	return 0;
}

/* The physical switches, and their blocks, whose tables differ between a and b. */
static void tables_diff(const struct fabric *f, const struct lft_tables *a,
			const struct lft_tables *b, uint32_t *sw, uint32_t *blocks)
{
	uint32_t n_lid = a->max_lid + 1;
	*sw = *blocks = 0;
	for (uint32_t r = 0; r < a->n_sw; r++) {
		uint32_t changed = 0;
		if (fabric_is_vswitch(f, a->sw_node[r]))
			continue;	/* physical switches, as the migrations count them */
		for (uint32_t lo = 0; lo < n_lid; lo += FAB_LFT_BLOCK) {
			uint32_t k = n_lid - lo < FAB_LFT_BLOCK ? n_lid - lo : FAB_LFT_BLOCK;
			changed += memcmp(lft_row(a, r) + lo, lft_row(b, r) + lo, k) != 0;
		}
		*sw += changed != 0;
		*blocks += changed;
	}
}

/*
 * virtualization.rebalance.local, as the daemon applies it: the smallest
 * sub-tree holding the leaves the moves touched routed again into out (a
 * copy of FTreeMinRC's tables).  1 done, 0 the whole fabric is to be
 * routed (scope says why), -1 out of memory.
 */
static int rebalance_local(struct study *y, struct lft_tables *out,
			   struct rblocal_result *res, const char **scope)
{
	char err[256];
	const struct rebalance_state *rs = &y->rs;
	*scope = "whole";
	if (rs->touch_lost || !rs->n_touched)
		return 0;
	uint32_t *leaves = malloc(rs->n_touched * sizeof(*leaves));
	if (!leaves || migrate_tables_copy(out, y->tf, y->f, y->tf->max_lid) < 0) {
		free(leaves);
		return -1;
	}
	for (uint32_t i = 0; i < rs->n_touched; i++)
		leaves[i] = fabric_find_node(y->f, rs->touched[i]);
	int rc = rblocal_route(y->f, out, leaves, rs->n_touched, res, err, sizeof(err));
	free(leaves);
	if (rc == 0 && !res->st.whole) {
		*scope = "local";
		return 1;
	}
	if (rc < 0)
		fprintf(stderr, "ibsmd: --migrate-pattern: local rebalance: %s; the whole fabric\n",
			err);
	lft_tables_free(out);
	return 0;
}

/*
 * virtualization.rebalance, as the daemon applies it after a VM move
 * (sm/vm/vmops.c), on FTreeMinRC's tables: when due, they are routed
 * afresh (or, local, the sub-tree the moves touched) and the switches
 * whose tables differ counted as the reroute's writes.  0, or 1 said why.
 */
static int rebalance_step(struct study *y, uint32_t from, uint32_t to, uint32_t n)
{
	int permille = -1;
	if (y->pol.balance_drop > 0) {
		struct rebalance_quality q;
		char err[256];
		if (rebalance_quality(y->f, y->tf, &q, err, sizeof(err)) < 0) {
			fprintf(stderr, "ibsmd: --migrate-pattern: the balance: %s\n", err);
			return 1;
		}
		permille = q.permille;
	}
	uint32_t a = fabric_vswitch_of(y->f, from, NULL), b = fabric_vswitch_of(y->f, to, NULL);
	int moved = a == FAB_NONE || b == FAB_NONE ||
		    fabric_vswitch_leaf(y->f, a) != fabric_vswitch_leaf(y->f, b);
	if (moved && a != FAB_NONE && b != FAB_NONE &&
	    (rebalance_touch(&y->rs, y->f->nodes[fabric_vswitch_leaf(y->f, a)].guid) < 0 ||
	     rebalance_touch(&y->rs, y->f->nodes[fabric_vswitch_leaf(y->f, b)].guid) < 0))
		y->rs.touch_lost = 1;
	int why = rebalance_after_vm(&y->pol, &y->rs, moved, permille);
	if (!why)
		return 0;
	struct lft_tables fresh = { 0 };
	struct rblocal_result res = { 0 };
	const char *used, *scope = "full";
	uint64_t ms, us;
	int local = y->pol.local ? rebalance_local(y, &fresh, &res, &scope) : 0;
	if (local < 0) {
		fprintf(stderr, "ibsmd: out of memory\n");
		return 1;
	}
	if (local) {
		us = res.route_us;
	} else {
		us = clock_us();
		if (sm_route(y->cfg, NULL, y->f, y->parts, &fresh, &used, &ms) < 0) {
			fprintf(stderr, "ibsmd: --migrate-pattern: no engine routes the placement\n");
			return 1;
		}
		us = clock_us() - us;
	}
	uint32_t sw, blocks;
	tables_diff(y->f, &fresh, y->tf, &sw, &blocks);
	printf("rebalance: n=%u reason=%s moves=%u balance_permille=%d scope=%s",
	       n, rebalance_reason_name(why), y->rs.migrations, permille, scope);
	if (local)
		printf(" level=%u leaves=%u subtree_switches=%u",
		       res.st.level, res.st.leaves, res.st.switches);
	printf(" switches=%u blocks=%u route_us=%" PRIu64 "\n", sw, blocks, us);
	lft_tables_free(y->tf);
	*y->tf = fresh;
	rebalance_rerouted(&y->rs, why, 0);
	y->rebalances++;
	y->rb_local += local;
	y->rb_switches += sw;
	return 0;
}

int offmig_run(const struct config *cfg, struct fabric *f,
	       const struct part_model *parts, struct lft_tables *t,
	       struct offmig *s)
{
	char err[256];
	struct migpat_move *mv = NULL;
	uint32_t n_mv = 0, marked_max = 0, phys = 0;
	struct tally k[2] = { { 0 } };	/* itrc, ftreeminrc */
	struct study y = { .cfg = cfg, .f = f, .parts = parts, .tf = t, .s = s };
	uint32_t *rank = malloc(((size_t)t->n_sw + 1) * sizeof(*rank));
	int rc = 1;

	y.ep = malloc(((size_t)s->place.n_vm + 1) * sizeof(*y.ep));
	if (!rank || !y.ep || migrate_tables_copy(&y.ti, t, f, t->max_lid) < 0) {
		fprintf(stderr, "ibsmd: out of memory\n");
		goto out;
	}
	if (ftree_levels(f, t, rank, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: --migrate-pattern: not a fat tree FTreeMinRC can mark: %s\n",
			err);
		rc = 2;
		goto out;
	}
	if (migpat_plan(s->pattern, &s->place, s->seed, &mv, &n_mv, err,
			sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: --migrate-pattern: %s\n", err);
		rc = 2;
		goto out;
	}
	for (uint32_t r = 0; r < t->n_sw; r++)
		phys += !fabric_is_vswitch(f, t->sw_node[r]);
	y.pol.after_migrations = (uint32_t)cfg->rb_after_migrations;
	y.pol.balance_drop = cfg->rb_balance_drop;
	y.pol.local = cfg->rb_local;
	rebalance_init(&y.rs, 0);
	if (cfg->rb_interval_s)
		fprintf(stderr, "ibsmd: --migrate-pattern: virtualization.rebalance.interval_s:"
			" no time passes between the moves offline; that trigger is not looked at\n");
	if (snapshot(&y, 0, n_mv))
		goto out;
	for (uint32_t i = 0, snap = 1; i < n_mv; i++) {
		uint32_t from = s->vf_pi[mv[i].from], to = s->vf_pi[mv[i].to];
		if (migrate_one(&y, &mv[i], rank, i, k, &marked_max) ||
		    rebalance_step(&y, from, to, i + 1))
			goto out;
		/* every tenth of the migrations, and after the last */
		if ((uint64_t)(i + 1) * OFFMIG_SNAPSHOTS >= (uint64_t)snap * n_mv) {
			if (snapshot(&y, i + 1, n_mv))
				goto out;
			while ((uint64_t)(i + 1) * OFFMIG_SNAPSHOTS >= (uint64_t)snap * n_mv)
				snap++;
		}
	}
	printf("migpattern: pattern=%s initial=%s population=%u seed=%" PRIu64
	       " hypervisors=%u vfs=%u vms=%u switches=%u migrations=%u"
	       " itrc_mean=%.2f itrc_max=%u ftreeminrc_mean=%.2f ftreeminrc_max=%u"
	       " ftreeminrc_at_max=%u marked_max=%u quality_ftreeminrc=%.4f"
	       " quality_itrc=%.4f quality_fresh=%.4f rebalances=%u rebalances_local=%u"
	       " rebalance_switches=%u\n",
	       migpat_name(s->pattern), s->uniform ? "uniform" : "random",
	       s->population, s->seed, s->place.n_hyp, s->place.vfs,
	       s->place.n_vm, phys, n_mv,
	       n_mv ? (double)k[0].sum / n_mv : 0, k[0].max,
	       n_mv ? (double)k[1].sum / n_mv : 0, k[1].max, k[1].n_max,
	       marked_max, y.q[0], y.q[1], y.q[2], y.rebalances, y.rb_local,
	       y.rb_switches);
	rc = 0;
out:
	free(mv);
	free(rank);
	free(y.ep);
	lft_tables_free(&y.ti);
	rebalance_free(&y.rs);
	return rc;
}
