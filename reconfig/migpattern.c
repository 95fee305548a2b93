/*
 * The vSwitch paper's migration patterns: see migpattern.h.
 */
#include "reconfig/migpattern.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/base/rng.h"

#define GROUPS 2		/* grouping: two tenants */
#define GROUP_DIVISOR 4		/* grouping: each group a quarter of the VMs */

static const char *const NAMES[] = {
	[MIGPAT_RANDOM] = "random", [MIGPAT_CONSOLIDATE] = "consolidate",
	[MIGPAT_GROUPING] = "grouping", [MIGPAT_TO_UNIFORM] = "to-uniform",
};

int migpat_parse(const char *s)
{
	for (int i = 0; i < (int)(sizeof(NAMES) / sizeof(NAMES[0])); i++)
		if (!strcmp(s, NAMES[i]))
			return i;
	return -1;
}

const char *migpat_name(int pattern)
{
	return pattern >= 0 && pattern < (int)(sizeof(NAMES) / sizeof(NAMES[0])) ?
	       NAMES[pattern] : "?";
}

int migpat_place_init(struct migpat_place *p, uint32_t n_hyp, uint32_t vfs,
		      uint32_t n_vm, int uniform, uint64_t seed)
{
	uint32_t n = n_hyp * vfs;
	memset(p, 0, sizeof(*p));
	if (!n_hyp || !vfs || n_vm > n)
		return -1;
	p->slot = malloc((size_t)n * sizeof(*p->slot));
	uint32_t *perm = malloc((size_t)n * sizeof(*perm));
	if (!p->slot || !perm) {
		free(perm);
		migpat_place_free(p);
		return -1;
	}
	p->n_hyp = n_hyp;
	p->vfs = vfs;
	p->n_vm = n_vm;
	for (uint32_t i = 0; i < n; i++) {
		p->slot[i] = MIGPAT_FREE;
		perm[i] = i;
	}
	uint64_t x = seed;
	for (uint32_t v = 0; v < n_vm; v++) {
		uint32_t s;
		if (uniform) {	/* round-robin over the hypervisors */
			s = (v % n_hyp) * vfs + v / n_hyp;
		} else {	/* partial Fisher-Yates */
			uint32_t j = v + rng_below(&x, n - v);
			s = perm[j];
			perm[j] = perm[v];
			perm[v] = s;
		}
		p->slot[s] = v;
	}
	free(perm);
	return 0;
}

void migpat_place_free(struct migpat_place *p)
{
	free(p->slot);
	memset(p, 0, sizeof(*p));
}

uint32_t migpat_load(const struct migpat_place *p, uint32_t h)
{
	uint32_t n = 0;
	for (uint32_t k = 0; k < p->vfs; k++)
		n += p->slot[h * p->vfs + k] != MIGPAT_FREE;
	return n;
}

void migpat_apply(struct migpat_place *p, const struct migpat_move *m)
{
	p->slot[m->to] = m->vm;
	p->slot[m->from] = MIGPAT_FREE;
}

/* The moves so far, and the placement they lead to. */
struct seq {
	struct migpat_place p;	/* a copy, moved along */
	struct migpat_move *mv;
	uint32_t n, cap;
};

static int seq_move(struct seq *s, uint32_t from, uint32_t to)
{
	if (s->n == s->cap) {
		uint32_t nc = s->cap ? s->cap * 2 : 64;
		struct migpat_move *m = realloc(s->mv, (size_t)nc * sizeof(*m));
		if (!m)
			return -1;
		s->mv = m;
		s->cap = nc;
	}
	s->mv[s->n] = (struct migpat_move){ s->p.slot[from], from, to };
	migpat_apply(&s->p, &s->mv[s->n++]);
	return 0;
}

/* The lowest free slot of hypervisor h, or MIGPAT_FREE. */
static uint32_t free_slot(const struct migpat_place *p, uint32_t h)
{
	for (uint32_t k = 0; k < p->vfs; k++)
		if (p->slot[h * p->vfs + k] == MIGPAT_FREE)
			return h * p->vfs + k;
	return MIGPAT_FREE;
}

/* The highest occupied slot of hypervisor h, or MIGPAT_FREE. */
static uint32_t last_vm(const struct migpat_place *p, uint32_t h)
{
	for (uint32_t k = p->vfs; k-- > 0;)
		if (p->slot[h * p->vfs + k] != MIGPAT_FREE)
			return h * p->vfs + k;
	return MIGPAT_FREE;
}

static int plan_random(struct seq *s, uint64_t seed, char *err, size_t errlen)
{
	struct migpat_place *p = &s->p;
	uint32_t n = p->n_hyp * p->vfs;
	uint32_t *cand = malloc((size_t)n * sizeof(*cand));
	uint64_t x = seed;
	if (!cand)
		return -1;
	for (uint32_t i = 0; i < 2 * p->n_hyp; i++) {
		uint32_t nf = 0, nv = 0;
		for (uint32_t j = 0; j < n; j++)
			if (p->slot[j] == MIGPAT_FREE)
				cand[nf++] = j;
		if (!nf) {
			snprintf(err, errlen, "random: no free VF to migrate to");
			free(cand);
			return -1;
		}
		uint32_t to = cand[rng_below(&x, nf)];
		for (uint32_t j = 0; j < n; j++)
			if (p->slot[j] != MIGPAT_FREE && j / p->vfs != to / p->vfs)
				cand[nv++] = j;
		if (!nv) {
			snprintf(err, errlen, "random: no VM on another hypervisor than the free VF's");
			free(cand);
			return -1;
		}
		if (seq_move(s, cand[rng_below(&x, nv)], to) < 0) {
			free(cand);
			return -1;
		}
	}
	free(cand);
	return 0;
}

/* Moves VMs until no hypervisor holds more than quota[h]. */
static int plan_quota(struct seq *s, const uint32_t *quota)
{
	struct migpat_place *p = &s->p;
	for (;;) {
		uint32_t src = MIGPAT_FREE, dst = MIGPAT_FREE;
		for (uint32_t h = p->n_hyp; h-- > 0 && src == MIGPAT_FREE;)
			if (migpat_load(p, h) > quota[h])
				src = h;
		for (uint32_t h = 0; h < p->n_hyp && dst == MIGPAT_FREE; h++)
			if (migpat_load(p, h) < quota[h])
				dst = h;
		if (src == MIGPAT_FREE || dst == MIGPAT_FREE)
			return 0;
		if (seq_move(s, last_vm(p, src), free_slot(p, dst)) < 0)
			return -1;
	}
}

static int plan_consolidate(struct seq *s)
{
	struct migpat_place *p = &s->p;
	uint32_t *quota = calloc(p->n_hyp, sizeof(*quota));
	if (!quota)
		return -1;
	for (uint32_t h = 0, left = p->n_vm; h < p->n_hyp && left; h++) {
		quota[h] = left < p->vfs ? left : p->vfs;
		left -= quota[h];
	}
	int rc = plan_quota(s, quota);
	free(quota);
	return rc;
}

static int plan_to_uniform(struct seq *s)
{
	struct migpat_place *p = &s->p;
	for (;;) {
		uint32_t hi = 0, lo = 0;
		for (uint32_t h = 1; h < p->n_hyp; h++) {
			if (migpat_load(p, h) > migpat_load(p, hi))
				hi = h;
			if (migpat_load(p, h) < migpat_load(p, lo))
				lo = h;
		}
		if (migpat_load(p, hi) < migpat_load(p, lo) + 2)
			return 0;
		if (seq_move(s, last_vm(p, hi), free_slot(p, lo)) < 0)
			return -1;
	}
}

/* grouping: which block (0, 1) hypervisor h is in, or GROUPS when none. */
static uint32_t block_of(uint32_t h, uint32_t first, uint32_t len)
{
	return h < first || h >= first + GROUPS * len ? GROUPS : (h - first) / len;
}

/* The lowest free slot in block b (GROUPS: outside both), or MIGPAT_FREE. */
static uint32_t block_free(const struct migpat_place *p, uint32_t b,
			   uint32_t first, uint32_t len)
{
	for (uint32_t h = 0; h < p->n_hyp; h++) {
		uint32_t sl = block_of(h, first, len) == b ? free_slot(p, h) : MIGPAT_FREE;
		if (sl != MIGPAT_FREE)
			return sl;
	}
	return MIGPAT_FREE;
}

static int plan_grouping(struct seq *s, uint64_t seed, char *err, size_t errlen)
{
	struct migpat_place *p = &s->p;
	uint32_t n = p->n_hyp * p->vfs;
	uint32_t g = p->n_vm / GROUP_DIVISOR ? p->n_vm / GROUP_DIVISOR : 1;
	uint32_t len = (g + p->vfs - 1) / p->vfs;
	uint64_t x = seed;
	if (p->n_vm < GROUPS || GROUPS * len > p->n_hyp) {
		snprintf(err, errlen, "grouping: %u VMs, two groups of %u on %u hypervisors each do not fit %u",
			 p->n_vm, g, len, p->n_hyp);
		return -1;
	}
	uint8_t *grp = malloc(p->n_vm);	/* per VM: its group, GROUPS: none */
	uint32_t *perm = malloc((size_t)p->n_vm * sizeof(*perm));
	if (!grp || !perm) {
		free(grp);
		free(perm);
		return -1;
	}
	for (uint32_t v = 0; v < p->n_vm; v++) {
		grp[v] = GROUPS;
		perm[v] = v;
	}
	for (uint32_t i = 0; i < GROUPS * g; i++) {	/* partial Fisher-Yates */
		uint32_t j = i + rng_below(&x, p->n_vm - i), v = perm[j];
		perm[j] = perm[i];
		perm[i] = v;
		grp[v] = (uint8_t)(i / g);
	}
	free(perm);
	uint32_t first = rng_below(&x, p->n_hyp - GROUPS * len + 1);
	int rc = 0;
	/* 1: every VM in a block not of its group leaves it */
	for (uint32_t sl = 0; sl < n && !rc; sl++) {
		uint32_t v = p->slot[sl], b = block_of(sl / p->vfs, first, len);
		if (v == MIGPAT_FREE || b == GROUPS || grp[v] == b)
			continue;
		uint32_t to = grp[v] < GROUPS ? block_free(p, grp[v], first, len) :
			      MIGPAT_FREE;
		if (to == MIGPAT_FREE)
			to = block_free(p, GROUPS, first, len);
		if (to == MIGPAT_FREE) {
			snprintf(err, errlen, "grouping: no free VF outside the groups' hypervisors");
			rc = 1;
		} else {
			rc = seq_move(s, sl, to);
		}
	}
	/* 2: each group's VMs into its block */
	for (uint32_t b = 0; b < GROUPS && !rc; b++)
		for (uint32_t sl = 0; sl < n && !rc; sl++) {
			uint32_t v = p->slot[sl];
			if (v == MIGPAT_FREE || grp[v] != b ||
			    block_of(sl / p->vfs, first, len) == b)
				continue;
			rc = seq_move(s, sl, block_free(p, b, first, len));
		}
	free(grp);
	return rc ? -1 : 0;
}

int migpat_plan(int pattern, const struct migpat_place *p, uint64_t seed,
		struct migpat_move **mv, uint32_t *n, char *err, size_t errlen)
{
	struct seq s = { .p = *p };
	size_t bytes = (size_t)p->n_hyp * p->vfs * sizeof(*p->slot);
	*mv = NULL;
	*n = 0;
	snprintf(err, errlen, "out of memory");
	s.p.slot = malloc(bytes);
	if (!s.p.slot)
		return -1;
	memcpy(s.p.slot, p->slot, bytes);
	int rc = pattern == MIGPAT_RANDOM ? plan_random(&s, seed, err, errlen) :
		 pattern == MIGPAT_CONSOLIDATE ? plan_consolidate(&s) :
		 pattern == MIGPAT_GROUPING ? plan_grouping(&s, seed, err, errlen) :
		 pattern == MIGPAT_TO_UNIFORM ? plan_to_uniform(&s) : -1;
	free(s.p.slot);
	if (rc < 0) {
		free(s.mv);
		return -1;
	}
	*mv = s.mv;
	*n = s.n;
	return 0;
}
