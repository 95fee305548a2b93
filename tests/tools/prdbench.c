/*
 * prdbench: the path-record distinguisher and the signalling modes on one
 * fabric, offline (no MADs).
 *
 *     prdbench FILE [-e ENGINE] [-c NODE_A:NODE_B] [-n SWITCH] [-f]
 *
 * Loads the net file, gives LIDs, routes (-e, default ftree), cuts one
 * switch-to-switch link (-c, by node descriptions; default the first
 * leaf's first uplink), routes again and repairs as the daemon does (-f:
 * a fresh routing kept whole, the worst case), and runs the
 * distinguisher from the old state to the new.  -n makes every link of
 * SWITCH 1x, before and after, so that pairs moved onto it change rate.
 * Prints the distinguisher's time, its state, and for each mode the
 * notices and Reports of one round with every host subscribed, next to
 * the thesis's model (Paper II, equations 3-6: msg_gmp = 256 bytes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "reconfig/repair.h"
#include "routing/engine.h"
#include "sm/model/lids.h"
#include "sm/base/topo.h"
#include "traps/prd.h"
#include "traps/repath.h"

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static uint32_t find(const struct fabric *f, const char *desc)
{
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (!strcmp(f->nodes[i].desc, desc))
			return i;
	fprintf(stderr, "prdbench: no node %s\n", desc);
	exit(2);
}

static int routes(const struct routing_engine *e, const struct fabric *f,
		  struct lft_tables *t)
{
	char err[256] = "";
	struct route_opts o = { 0 };
	if (lft_tables_alloc(t, f) < 0 || e->route(f, &o, t, err, sizeof(err)) < 0) {
		fprintf(stderr, "prdbench: %s: %s\n", e->name, err);
		return -1;
	}
	return 0;
}

static void narrow(struct fabric *f, uint32_t sw)
{
	for (unsigned p = 1; p <= f->nodes[sw].nports; p++) {
		struct fab_port *a = fabric_portp(f, sw, p);
		a->width_active = TOPO_WIDTH_1X;
		if (a->remote != FAB_NONE)
			f->ports[a->remote].width_active = TOPO_WIDTH_1X;
	}
}

/* The first port of a switch with a CA on it that leads to a switch. */
static void default_cut(const struct fabric *f, uint32_t *pa)
{
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct fab_node *x = &f->nodes[n];
		int leaf = 0;
		uint32_t up = FAB_NONE;
		if (x->type != FAB_SWITCH)
			continue;
		for (unsigned p = 1; p <= x->nports; p++) {
			uint32_t r = fabric_portp(f, n, p)->remote;
			if (r == FAB_NONE)
				continue;
			if (f->nodes[f->ports[r].node].type == FAB_SWITCH) {
				if (up == FAB_NONE)
					up = fabric_port(f, n, p);
			} else {
				leaf = 1;
			}
		}
		if (leaf && up != FAB_NONE) {
			*pa = up;
			return;
		}
	}
	fprintf(stderr, "prdbench: no leaf uplink to cut\n");
	exit(2);
}

static uint64_t subs;	/* hosts subscribed: every CA port */

static int all_publish(void *ctx, const struct notice *nt, uint32_t src)
{
	return (int)subs;
}

static int one_publish(void *ctx, uint32_t lid, const struct notice *nt,
		       uint32_t src)
{
	return 1;
}

static long rss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
	const char *eng = "ftree", *cut = NULL, *slow = NULL;
	int fresh = 0, c;
	while ((c = getopt(argc, argv, "e:c:n:f")) != -1) {
		switch (c) {
		case 'e': eng = optarg; break;
		case 'c': cut = optarg; break;
		case 'n': slow = optarg; break;
		case 'f': fresh = 1; break;
		default:
			fprintf(stderr, "usage: prdbench FILE [-e ENGINE] [-c A:B] [-n SWITCH] [-f]\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: prdbench FILE [-e ENGINE] [-c A:B] [-n SWITCH] [-f]\n");
		return 2;
	}
	const struct routing_engine *e = routing_engine_find(eng);
	char err[256];
	struct fabric of, nf;
	struct lft_tables ot, nt;
	struct lid_report rep;
	fabric_init(&of);
	if (!e || topo_load(&of, argv[optind], err, sizeof(err)) < 0) {
		fprintf(stderr, "prdbench: %s\n", e ? err : "no such engine");
		return 2;
	}
	if (lids_assign(&of, NULL, 0, &rep) < 0)
		return 2;
	/* the ports as a configured subnet has them */
	for (uint32_t i = 0; i < of.n_ports; i++)
		if (of.ports[i].remote != FAB_NONE)
			of.ports[i].state = PORT_ACTIVE;
	if (slow)
		narrow(&of, find(&of, slow));
	if (fabric_clone(&nf, &of) < 0)
		return 2;
	uint32_t pa;
	if (cut) {
		char a[128];
		snprintf(a, sizeof(a), "%s", cut);
		char *b = strchr(a, ':');
		if (!b)
			return 2;
		*b++ = '\0';
		uint32_t na = find(&nf, a), nb = find(&nf, b);
		pa = FAB_NONE;
		for (unsigned p = 1; p <= nf.nodes[na].nports && pa == FAB_NONE; p++) {
			uint32_t r = fabric_portp(&nf, na, p)->remote;
			if (r != FAB_NONE && nf.ports[r].node == nb)
				pa = fabric_port(&nf, na, p);
		}
		if (pa == FAB_NONE) {
			fprintf(stderr, "prdbench: %s is not cabled to %s\n", a, b);
			return 2;
		}
	} else {
		default_cut(&nf, &pa);
	}
	uint32_t pb = nf.ports[pa].remote;
	printf("cut: %s[%u] - %s[%u]\n", nf.nodes[nf.ports[pa].node].desc,
	       nf.ports[pa].num, nf.nodes[nf.ports[pb].node].desc,
	       nf.ports[pb].num);
	for (int k = 0; k < 2; k++) {
		struct fab_port *x = &nf.ports[k ? pb : pa];
		x->remote = FAB_NONE;
		x->state = PORT_DOWN;
		x->phys_state = 2;	/* Polling */
	}
	uint64_t t0 = now_us();
	if (routes(e, &of, &ot) < 0)
		return 1;
	uint64_t t1 = now_us();
	if (routes(e, &nf, &nt) < 0)
		return 1;
	struct repair_stats rs = { 0 };
	if (!fresh && repair_routes(&of, &ot, &nf, &nt, &rs) < 0)
		return 1;
	uint64_t t2 = now_us();

	uint32_t sw, ca, ports;
	fabric_counts(&nf, &sw, &ca, &ports);
	subs = 0;
	for (uint32_t i = 0; i < nf.n_ports; i++)
		if (fabric_is_endport(&nf, i) &&
		    nf.nodes[nf.ports[i].node].type != FAB_SWITCH && nf.ports[i].lid)
			subs++;
	printf("fabric: %u switches, %llu hosts, max LID %u; %s %llu ms, %s %llu ms (%llu entries moved)\n",
	       sw, (unsigned long long)subs, nf.max_lid, e->name,
	       (unsigned long long)(t1 - t0) / 1000,
	       fresh ? "fresh" : "reroute+repair",
	       (unsigned long long)(t2 - t1) / 1000,
	       (unsigned long long)rs.moved);

	struct prd_params pp = { .pkey = 0xffff, .ltv = 18,
				 .max_changes = 1000000 };
	struct prd *p = prd_new();
	struct prd_change *ch;
	size_t n;
	struct prd_stats st;
	long rss0 = rss_kb();
	uint64_t c0 = now_us();
	if (!p || prd_commit(p, &of, &ot, &pp) < 0)
		return 1;
	uint64_t c1 = now_us();
	if (prd_diff(p, &nf, &nt, &pp, &ch, &n, &st) < 0)
		return 1;
	printf("prd: %llu us (commit of the state %llu us); state %.1f MB; columns %u, dirty %u; leaves compared %u; pairs resolved %llu; repath %llu, unpath %llu; peak RSS +%ld kB\n",
	       (unsigned long long)st.us, (unsigned long long)(c1 - c0),
	       st.state_bytes / 1e6, st.columns, st.dirty_columns,
	       st.leaves_compared, (unsigned long long)st.pairs_resolved,
	       (unsigned long long)st.repath, (unsigned long long)st.unpath,
	       rss_kb() - rss0);

	/* the rounds; the model counts GMPs of 256 bytes (eqs. 3-6) */
	double nh = (double)subs, m = (double)(st.repath + st.unpath);
	double hyb = (4 * nh + nh * nh / 4) * 256;
	printf("pairs changed m = %.0f, hosts n = %.0f\n", m, nh);
	printf("%-16s %10s %10s %12s | %14s %14s\n", "mode", "notices", "reports",
	       "bytes", "model notices", "model bytes");
	for (int mode = 0; repath_mode_names[mode]; mode++) {
		struct repath_params rp = { .mode = (enum repath_mode)mode,
					    .sm_lid = 1, .pkey = pp.pkey,
					    .ltv = pp.ltv };
		struct repath_out o = { NULL, all_publish, one_publish };
		struct repath_stats rst;
		repath_round(&rp, &nf, &nt, ch, n, &st, &o, &rst);
		double mm, mb;
		switch (mode) {
		case REPATH_WILDCARD:	/* eq. 5: two traps a fault, each a handshake */
			mm = 2 * nh;
			mb = 2 * hyb;
			break;
		case REPATH_ONLY:	/* eq. 6: one trap a change */
			mm = m;
			mb = m * 256;
			break;
		case REPATH_HYBRID:	/* eq. 4, when something changed */
			mm = m ? nh : 0;
			mb = m ? hyb : 0;
			break;
		default:		/* not in the thesis */
			mm = mb = 0;
			break;
		}
		printf("%-16s %10u %10llu %12llu | %14.0f %14.0f\n",
		       repath_mode_names[mode], rst.notices,
		       (unsigned long long)rst.reports,
		       (unsigned long long)rst.reports * 256, mm, mb);
	}
	free(ch);
	prd_free(p);
	lft_tables_free(&ot);
	lft_tables_free(&nt);
	fabric_free(&of);
	fabric_free(&nf);
	return 0;
}
