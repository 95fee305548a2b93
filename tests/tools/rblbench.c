/*
 * rblbench: the local rebalance (reconfig/rblocal.h) against a full
 * vswitch-ftree routing, offline, on one fabric.
 *
 *     rblbench FILE LEAF_A LEAF_B [MOVES]
 *
 * Loads the net file (vSwitches: the nodes whose description starts
 * with "V-", as fabgen.py --vfs names them), gives LIDs to every
 * vSwitch, PF and VFs 0 and 1, puts a VM on VF 0 of every hypervisor
 * and routes the fabric with vswitch-ftree (timed: the full reroute).
 * Then MOVES (default 8) VMs of the hypervisors under LEAF_B move to VF
 * 1 of those under LEAF_A, and the smallest sub-tree holding both
 * leaves is routed again (timed: the local rebalance, as the daemon
 * computes it).  Prints both times, the sub-tree and what changed, and
 * how many of the entries it set differ from a fresh vswitch-ftree
 * routing of the whole fabric on the new placement.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconfig/rblocal.h"
#include "routing/engines.h"
#include "routing/engines/ftree.h"
#include "sm/base/clock.h"
#include "sm/base/topo.h"
#include "sm/model/lids.h"

static uint32_t find(const struct fabric *f, const char *desc)
{
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (!strcmp(f->nodes[i].desc, desc))
			return i;
	fprintf(stderr, "rblbench: no node %s\n", desc);
	exit(2);
}

/* The vSwitches cabled to leaf, into vs[] (at most max); their count. */
static unsigned hyps(const struct fabric *f, uint32_t leaf, uint32_t *vs, unsigned max)
{
	unsigned n = 0;
	for (unsigned p = 1; p <= f->nodes[leaf].nports && n < max; p++) {
		uint32_t r = fabric_portp(f, leaf, p)->remote;
		if (r != FAB_NONE && fabric_is_vswitch(f, f->ports[r].node))
			vs[n++] = f->ports[r].node;
	}
	return n;
}

/* The leaf switch a LID's end port hangs from (through its vSwitch), FAB_NONE. */
static uint32_t leaf_of(const struct fabric *f, uint32_t lid)
{
	uint32_t pi = f->lid_port[lid];
	if (pi == FAB_NONE)
		return FAB_NONE;
	uint32_t n = f->ports[pi].node;
	if (f->nodes[n].type != FAB_SWITCH) {
		uint32_t rem = f->ports[pi].remote;
		if (rem == FAB_NONE)
			return FAB_NONE;
		n = f->ports[rem].node;
	}
	if (fabric_is_vswitch(f, n))
		return fabric_vswitch_leaf(f, n);
	return FAB_NONE;	/* a physical switch's own LID */
}

/*
 * The entries the local rebalance may set (the sub-tree's switches below
 * its tops, for the LIDs hanging below it) against a fresh vswitch-ftree
 * routing of the whole fabric on the same placement: how many differ.
 */
static int compare_fresh(const struct fabric *f, const struct lft_tables *t,
			 const uint32_t *leaves, const struct rblocal_subtree *s)
{
	char err[256] = "";
	struct rblocal_subtree s2;
	struct lft_tables fr = { 0 };
	struct route_opts o = { 0 };
	uint8_t *member = calloc(t->n_sw + 1, 1);
	uint32_t *rank = malloc((t->n_sw + 1) * sizeof(*rank));
	if (!member || !rank || lft_tables_alloc(&fr, f) < 0 ||
	    rblocal_subtree(f, t, leaves, 2, &s2, member, err, sizeof(err)) < 0 ||
	    ftree_levels(f, t, rank, err, sizeof(err)) < 0 ||
	    vswitch_ftree_route(f, &o, &fr, err, sizeof(err)) < 0) {
		fprintf(stderr, "rblbench: fresh: %s\n", err);
		return -1;
	}
	uint64_t n = 0, differ = 0;
	for (uint32_t lid = 1; lid <= t->max_lid; lid++) {
		uint32_t lf = leaf_of(f, lid);
		if (lf == FAB_NONE || !member[t->row_of_node[lf]])
			continue;
		for (uint32_t row = 0; row < t->n_sw; row++) {
			if (!member[row] || rank[row] == s->level)
				continue;
			n++;
			differ += lft_row(t, row)[lid] != lft_row(&fr, row)[lid];
		}
	}
	printf("rblbench: against a fresh vswitch-ftree of the whole fabric: %llu of the %llu entries the local rebalance sets differ\n",
	       (unsigned long long)differ, (unsigned long long)n);
	lft_tables_free(&fr);
	free(member);
	free(rank);
	return 0;
}

int main(int argc, char **argv)
{
	char err[256] = "";
	struct fabric f;
	struct lft_tables t = { 0 };
	struct route_opts o = { 0 };
	struct lid_report rep;
	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: rblbench FILE LEAF_A LEAF_B [MOVES]\n");
		return 2;
	}
	unsigned moves = argc == 5 ? (unsigned)atoi(argv[4]) : 8;
	fabric_init(&f);
	if (topo_load(&f, argv[1], err, sizeof(err)) < 0) {
		fprintf(stderr, "rblbench: %s\n", err);
		return 1;
	}
	for (uint32_t i = 0; i < f.n_nodes; i++)
		if (!strncmp(f.nodes[i].desc, "V-", 2))
			f.nodes[i].flags |= FNODE_VSWITCH;
	for (uint32_t i = 0; i < f.n_nodes; i++) {
		if (!fabric_is_vswitch(&f, i))
			continue;
		for (unsigned k = 0; k < fabric_vswitch_nvf(&f, i); k++) {
			uint32_t pi = fabric_vswitch_vf(&f, i, k, NULL);
			if (k > 1)
				f.ports[pi].flags |= FPORT_NOLID;
			f.ports[pi].vm_weight = k == 0;
		}
	}
	if (lids_assign(&f, NULL, 0, &rep) < 0 || lft_tables_alloc(&t, &f) < 0) {
		fprintf(stderr, "rblbench: out of memory or LIDs\n");
		return 1;
	}
	uint64_t t0 = clock_us();
	if (vswitch_ftree_route(&f, &o, &t, err, sizeof(err)) < 0) {
		fprintf(stderr, "rblbench: vswitch-ftree: %s\n", err);
		return 1;
	}
	uint64_t full = clock_us() - t0;
	uint32_t leaves[2] = { find(&f, argv[2]), find(&f, argv[3]) };
	uint32_t va[64], vb[64];
	unsigned na = hyps(&f, leaves[0], va, 64), nb = hyps(&f, leaves[1], vb, 64);
	unsigned done = 0;
	for (unsigned i = 0; i < moves && i < na && i < nb; i++, done++) {
		f.ports[fabric_vswitch_vf(&f, vb[i], 0, NULL)].vm_weight = 0;
		f.ports[fabric_vswitch_vf(&f, va[i], 1, NULL)].vm_weight = 1;
	}
	struct rblocal_result r;
	char desc[256];
	if (rblocal_route(&f, &t, leaves, 2, &r, err, sizeof(err)) < 0) {
		fprintf(stderr, "rblbench: local: %s\n", err);
		return 1;
	}
	rblocal_describe(&f, &r.st, desc, sizeof(desc));
	printf("rblbench: nodes=%u lids=%u full_vswitch_ftree_us=%llu moves=%u\n",
	       f.n_nodes, f.max_lid, (unsigned long long)full, done);
	printf("rblbench: local %s%s: %u LIDs, %u switches and %llu entries changed, %llu us\n",
	       desc, r.st.whole ? " (the whole fabric: nothing done)" : "", r.lids,
	       r.switches_changed, (unsigned long long)r.entries_changed,
	       (unsigned long long)r.route_us);
	if (!r.st.whole && compare_fresh(&f, &t, leaves, &r.st) < 0)
		return 1;
	lft_tables_free(&t);
	fabric_free(&f);
	return 0;
}
