/*
 * The neighbour map (sm/model/neighbors.c) on a small fabric: H0 - L0 -
 * S0 - L1 - H1, H2 on L0 too.
 *   from_fabric: every link, both ends; a second pass changes nothing.
 *   dr_target: the port a directed route reaches -- the SM's own at hop
 *     0, a switch's port 0, a CA's port the path enters -- along the
 *     fabric; the same along the map alone (a fabric that knows only the
 *     SM's node: a restart's first queries); 0 past what either knows or
 *     for a port number the node lacks.
 *   save_load: the file read back gives the same answers; a bad line is
 *     refused with FILE:LINE; an absent file is an empty map.
 *   from_sa: the map made from the SA's NodeRecords and LinkRecords (a
 *     standby's, read from its master) walks as the fabric's.
 *   walk: beyond L0 port 4 (S0 refusing), the map alone leads to S0, L1
 *     and H1, breadth first, with their directed routes and the port each
 *     reaches; L0 and H0 (known) are not visited nor walked through, a
 *     CA is not walked through, and a second walk from the same place
 *     visits nothing again.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sm/base/fabric.h"
#include "sm/base/topo.h"
#include "sm/model/neighbors.h"

#define H0 0x1000ull
#define H1 0x1004ull
#define H2 0x1008ull
#define L0 0x100ull
#define L1 0x101ull
#define S0 0x200ull

static const char *net =
	"switchguid=0x100\nSwitch\t4 \"L0\"\n[1]\t\"H0\"[1]\n[2]\t\"H2\"[1]\n[4]\t\"S0\"[1]\n\n"
	"switchguid=0x101\nSwitch\t4 \"L1\"\n[1]\t\"H1\"[1]\n[4]\t\"S0\"[2]\n\n"
	"switchguid=0x200\nSwitch\t4 \"S0\"\n[1]\t\"L0\"[4]\n[2]\t\"L1\"[4]\n\n"
	"caguid=0x1000\nHca\t1 \"H0\"\n[1](1001)\t\"L0\"[1]\n\n"
	"caguid=0x1004\nHca\t1 \"H1\"\n[1](1005)\t\"L1\"[1]\n\n"
	"caguid=0x1008\nHca\t1 \"H2\"\n[1](1009)\t\"L0\"[2]\n\n";

static struct fabric f;

static void setup(void)
{
	char err[256] = "";
	fabric_init(&f);
	ck_assert_msg(topo_parse_string(&f, net, "t.net", err, sizeof(err)) == 0, "%s", err);
	f.sm_node = fabric_find_node(&f, H0);
	ck_assert_uint_ne(f.sm_node, FAB_NONE);
	f.sm_port = 1;
}

static void teardown(void)
{
	fabric_free(&f);
}

static uint64_t port_guid(uint64_t node, int port)
{
	uint32_t n = fabric_find_node(&f, node);
	ck_assert_uint_ne(n, FAB_NONE);
	return f.ports[fabric_port(&f, n, (unsigned)port)].guid;
}

/* The answers every walk must give over this fabric. */
static void check_walks(const struct fabric *g, const struct nbr_map *m)
{
	static const uint8_t p_l0[] = { 0, 1 }, p_s0[] = { 0, 1, 4 },
		p_l1[] = { 0, 1, 4, 2 }, p_h1[] = { 0, 1, 4, 2, 1 },
		p_h2[] = { 0, 1, 2 }, p_back[] = { 0, 1, 1 },
		p_none[] = { 0, 1, 3 }, p_bad[] = { 0, 1, 9 };
	uint64_t local = port_guid(H0, 1);
	ck_assert_uint_eq(nbr_dr_target(g, m, local, p_l0, 0), local);
	ck_assert_uint_eq(nbr_dr_target(g, m, local, p_l0, 1), port_guid(L0, 0));
	ck_assert_uint_eq(nbr_dr_target(g, m, local, p_s0, 2), port_guid(S0, 0));
	ck_assert_uint_eq(nbr_dr_target(g, m, local, p_l1, 3), port_guid(L1, 0));
	ck_assert_uint_eq(nbr_dr_target(g, m, local, p_h1, 4), port_guid(H1, 1));
	ck_assert_uint_eq(nbr_dr_target(g, m, local, p_h2, 2), port_guid(H2, 1));
	ck_assert_uint_eq(nbr_dr_target(g, m, local, p_back, 2), local);
	ck_assert_uint_eq(nbr_dr_target(g, m, local, p_none, 2), 0);	/* no cable */
	ck_assert_uint_eq(nbr_dr_target(g, m, local, p_bad, 2), 0);	/* no port 9 */
	ck_assert_uint_ne(port_guid(H1, 1), 0);
	ck_assert_uint_ne(port_guid(H1, 1), H1);	/* a CA: its port's GUID */
}

/* A fabric that knows only the SM's node (H0), as a restart's first query. */
static void only_sm(struct fabric *g)
{
	fabric_init(g);
	uint32_t n = fabric_add_node(g, FAB_CA, 1, H0);
	ck_assert_uint_ne(n, FAB_NONE);
	g->ports[fabric_port(g, n, 1)].guid = port_guid(H0, 1);
	g->sm_node = n;
	g->sm_port = 1;
}

START_TEST(from_fabric)
{
	struct nbr_map m = { 0 };
	ck_assert_int_eq(nbr_from_fabric(&m, &f), 5);	/* links */
	ck_assert_uint_eq(m.n, 5 * 2);	/* their ends */
	ck_assert_int_eq(nbr_from_fabric(&m, &f), 0);
	nbr_free(&m);
}
END_TEST

START_TEST(dr_target)
{
	struct nbr_map empty = { 0 }, m = { 0 };
	check_walks(&f, &empty);		/* the fabric alone */
	ck_assert_int_gt(nbr_from_fabric(&m, &f), 0);
	struct fabric g;
	only_sm(&g);
	check_walks(&g, &m);			/* the map alone, past H0 */
	static const uint8_t p_l0[] = { 0, 1 };
	ck_assert_uint_eq(nbr_dr_target(&g, &empty, 1, p_l0, 1), 0);	/* neither knows */
	ck_assert_uint_eq(nbr_dr_target(NULL, &m, 1, p_l0, 1), 0);
	fabric_free(&g);
	nbr_free(&m);
}
END_TEST

START_TEST(save_load)
{
	char dir[] = "/tmp/test_neighbors.XXXXXX", path[64], err[512] = "";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	struct nbr_map m = { 0 }, back = { 0 };
	ck_assert_int_eq(nbr_load(&back, dir, err, sizeof(err)), 0);	/* absent */
	ck_assert_uint_eq(back.n, 0);
	ck_assert_int_gt(nbr_from_fabric(&m, &f), 0);
	ck_assert_msg(nbr_save(&m, dir, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(nbr_load(&back, dir, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(back.n, m.n);
	struct fabric g;
	only_sm(&g);
	check_walks(&g, &back);
	fabric_free(&g);
	nbr_free(&back);

	snprintf(path, sizeof(path), "%s/%s", dir, NBR_FILE);
	FILE *fp = fopen(path, "a");
	ck_assert_ptr_nonnull(fp);
	fputs("0x0000000000000100 5 0x100\n", fp);
	fclose(fp);
	ck_assert_int_eq(nbr_load(&back, dir, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, path) && strstr(err, ":7:"), "%s", err);
	nbr_free(&back);
	nbr_free(&m);
	unlink(path);
	rmdir(dir);
}
END_TEST

static void put_be(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/* The end port whose LID stands for port pi: a switch's port 0, else pi. */
static uint32_t lid_port(uint32_t pi)
{
	const struct fab_node *n = &f.nodes[f.ports[pi].node];
	return n->type == FAB_SWITCH ? n->first_port : pi;
}

/*
 * The SA's NodeRecords (IBA vol. 1 15.2.5.2: LID, reserved, NodeInfo with
 * NodeGUID at its byte 12 and PortGUID at 20) and LinkRecords
 * (15.2.5.13: FromLID, FromPort, ToPort, ToLID) of this fabric, LIDs
 * given in node order, plus a LinkRecord to a LID no NodeRecord names:
 * the map they make walks as the fabric's.
 */
START_TEST(from_sa)
{
	enum { NR = 108, LR = 8 };
	uint8_t nodes[16][NR], links[16][LR];
	size_t nn = 0, nl = 0;
	memset(nodes, 0, sizeof(nodes));
	memset(links, 0, sizeof(links));
	for (uint32_t n = 0; n < f.n_nodes; n++) {
		const struct fab_node *nd = &f.nodes[n];
		uint32_t first = nd->type == FAB_SWITCH ? 0 : 1;
		for (uint32_t p = first; p <= (nd->type == FAB_SWITCH ? 0 : nd->nports); p++) {
			uint32_t pi = fabric_port(&f, n, p);
			f.ports[pi].lid = (uint32_t)nn + 1;
			put_be(nodes[nn], f.ports[pi].lid, 2);
			nodes[nn][6] = nd->type;
			put_be(nodes[nn] + 16, nd->guid, 8);
			put_be(nodes[nn] + 24, f.ports[pi].guid, 8);
			nn++;
		}
	}
	for (uint32_t pi = 0; pi < f.n_ports; pi++) {
		uint32_t r = f.ports[pi].remote;
		if (r == FAB_NONE)
			continue;
		put_be(links[nl], f.ports[lid_port(pi)].lid, 2);
		links[nl][2] = f.ports[pi].num;
		links[nl][3] = f.ports[r].num;
		put_be(links[nl] + 4, f.ports[lid_port(r)].lid, 2);
		nl++;
	}
	put_be(links[nl], 1, 2);
	links[nl][2] = 3;
	links[nl][3] = 1;
	put_be(links[nl] + 4, 99, 2);		/* no NodeRecord: skipped */
	nl++;
	struct nbr_lid t[16];
	size_t nt = nbr_lids_from_records(&nodes[0][0], nn, NR, t);
	ck_assert_uint_eq(nt, 6);
	struct nbr_map m = { 0 };
	ck_assert_int_eq(nbr_from_link_records(&m, t, nt, &links[0][0], nl, LR), 5);
	ck_assert_uint_eq(m.n, 5 * 2);
	struct fabric g;
	only_sm(&g);
	check_walks(&g, &m);
	fabric_free(&g);
	/* the fabric's own map is the same: nothing changes */
	ck_assert_int_eq(nbr_from_fabric(&m, &f), 0);
	nbr_free(&m);
}
END_TEST

struct visits {
	int n;
	uint64_t port[8];
	int hops[8];
	uint8_t path[8][FAB_MAX_HOPS + 1];
};

static int known(void *arg, uint64_t node_guid)
{
	return node_guid == H0 || node_guid == L0;
}

static void visited(void *arg, const uint8_t *path, int hops, uint64_t port)
{
	struct visits *v = arg;
	ck_assert_int_lt(v->n, 8);
	v->port[v->n] = port;
	v->hops[v->n] = hops;
	memcpy(v->path[v->n], path, (size_t)hops + 1);
	v->n++;
}

START_TEST(walk)
{
	struct nbr_map m = { 0 };
	ck_assert_int_gt(nbr_from_fabric(&m, &f), 0);
	struct nbr_walk *w = nbr_walk_new(&m);
	ck_assert_ptr_nonnull(w);
	struct visits v = { 0 };
	const uint8_t at_l0[] = { 0, 1 };	/* H0 -> L0 */
	ck_assert_int_eq(nbr_walk_from(w, at_l0, 1, L0, 4, known, visited, &v), 0);
	ck_assert_int_eq(v.n, 3);
	const uint64_t want[] = { port_guid(S0, 0), port_guid(L1, 0), port_guid(H1, 1) };
	const uint8_t p2[] = { 0, 1, 4, 2, 1 };
	for (int i = 0; i < 3; i++) {
		ck_assert_uint_eq(v.port[i], want[i]);
		ck_assert_int_eq(v.hops[i], 2 + i);
		ck_assert_mem_eq(v.path[i], p2, (size_t)v.hops[i] + 1);
		/* the route reaches that port in the fabric too */
		ck_assert_uint_eq(nbr_dr_target(&f, &m, port_guid(H0, 1), v.path[i], v.hops[i]),
				  want[i]);
	}
	v.n = 0;
	ck_assert_int_eq(nbr_walk_from(w, at_l0, 1, L0, 4, known, visited, &v), 0);
	ck_assert_int_eq(v.n, 0);
	nbr_walk_free(w);
	nbr_free(&m);
}
END_TEST

static Suite *neighbors_suite(void)
{
	Suite *s = suite_create("neighbors");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, from_fabric);
	tcase_add_test(tc, dr_target);
	tcase_add_test(tc, save_load);
	tcase_add_test(tc, from_sa);
	tcase_add_test(tc, walk);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(neighbors_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
