/*
 * The fabric baseline (sm/perf/baseline.h): one fabric in the three
 * formats it is read in, saving it, the differences a sweep reports
 * against it, malformed files refused with file:line, and ibsmctl's text
 * of a health reply (sm/ibsmctl/ctlrender.h).
 *
 * The fixtures in tests/unit/data/baseline/ are one fabric (fabgen.py
 * ftree2 --radix 4 --leaves 2 --spines 2 --hosts-per-leaf 2: 4 switches,
 * 4 hosts, 8 cables) as an ibsim net file, as `ibnetdiscover` printed it
 * from H-1 under ibsim, and as OpenSM 3.3.23 wrote opensm-subnet.lst
 * running as the SM on H-0 of that ibsim (README there says how).  The
 * unit tests run from the top of the tree.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "sm/base/nodemap.h"
#include "sm/ibsmctl/ctlrender.h"
#include "sm/perf/baseline.h"
#include "sm/perf/osmlst.h"

#define FIXTURES "tests/unit/data/baseline/"
#define FIX_NET FIXTURES "fabric.net"
#define FIX_IBND FIXTURES "ibnetdiscover.out"
#define FIX_OSM FIXTURES "opensm-subnet.lst"

/* fabgen's GUIDs: switch N 0x0002c901000000NN, host N 0x0002c90200000000 + 4N */
#define SW(n) (0x0002c90100000000ull + (n))
#define HOST(n) (0x0002c90200000000ull + 4 * (n))
enum { L0S0, L0S1, L1S0, L1S1 };

static void load(struct fabric *f, const char *path, enum baseline_format want)
{
	char err[512];
	enum baseline_format fmt = 0;

	fabric_init(f);
	ck_assert_msg(baseline_load(f, path, &fmt, err, sizeof(err)) == 0,
		      "%s: %s", path, err);
	ck_assert_int_eq(fmt, want);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The fabric as sorted text: a line per node (GUID, type, ports,
 * description) and per cabled port (its GUID, its node and number, the
 * peer's node and number), so that two loads can be compared whole.
 */
static char *canon(const struct fabric *f)
{
	char **lines = calloc((size_t)f->n_nodes + f->n_ports, sizeof(*lines));
	size_t n = 0, len = 0;
	char *out = NULL;
	FILE *fp = open_memstream(&out, &len);

	for (uint32_t ni = 0; ni < f->n_nodes; ni++) {
		const struct fab_node *nd = &f->nodes[ni];
		char l[160];
		snprintf(l, sizeof(l), "node %016" PRIx64 " t%u p%u %s",
			 nd->guid, nd->type, nd->nports, nd->desc);
		lines[n++] = strdup(l);
	}
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct fab_port *p = &f->ports[pi];
		if (p->remote == FAB_NONE)
			continue;
		const struct fab_port *r = &f->ports[p->remote];
		char l[160];
		snprintf(l, sizeof(l), "port %016" PRIx64 " %016" PRIx64
			 "[%u] -> %016" PRIx64 "[%u]", p->guid,
			 f->nodes[p->node].guid, p->num, f->nodes[r->node].guid, r->num);
		lines[n++] = strdup(l);
	}
	qsort(lines, n, sizeof(*lines), cmp_str);
	for (size_t i = 0; i < n; i++) {
		fprintf(fp, "%s\n", lines[i]);
		free(lines[i]);
	}
	free(lines);
	fclose(fp);
	return out;
}

static void assert_same(const struct fabric *a, const struct fabric *b)
{
	struct baseline_diff d;
	char *ca = canon(a), *cb = canon(b);

	ck_assert_str_eq(ca, cb);
	free(ca);
	free(cb);
	ck_assert_int_eq(baseline_diff(a, b, &d), 0);
	ck_assert_msg(baseline_diff_empty(&d), "%u missing, %u extra, %u moved",
		      d.missing.n, d.extra.n, d.moved.n);
	baseline_diff_free(&d);
}

/* The fixtures: one fabric in three files, its node and cable counts. */
static const struct fixture {
	const char *net, *ibnd, *osm;
	uint32_t nodes, links;
} fixtures[] = {
	{ FIX_NET, FIX_IBND, FIX_OSM, 8, 8 },
	/* dual-port hosts on two leaves, two parallel cables leaf-spine */
	{ FIXTURES "dual.net", FIXTURES "dual-ibnetdiscover.out",
	  FIXTURES "dual-opensm-subnet.lst", 14, 23 },
};

START_TEST(t_formats_agree)
{
	const struct fixture *x = &fixtures[_i];
	struct fabric net, ibnd, osm;
	uint32_t nodes, links;

	load(&net, x->net, BASELINE_TOPOLOGY);
	load(&ibnd, x->ibnd, BASELINE_TOPOLOGY);
	load(&osm, x->osm, BASELINE_OPENSM);
	baseline_counts(&osm, &nodes, &links);
	ck_assert_uint_eq(nodes, x->nodes);
	ck_assert_uint_eq(links, x->links);
	assert_same(&net, &ibnd);
	assert_same(&net, &osm);
	assert_same(&ibnd, &osm);
	/* OpenSM's line: the SM's port (H-0's port 1 in both), LIDs, link state */
	uint32_t h0 = fabric_find_node(&osm, HOST(0));
	ck_assert_uint_eq(osm.sm_node, h0);
	ck_assert_uint_eq(osm.sm_port, 1);
	ck_assert_uint_eq(fabric_portp(&osm, h0, 1)->lid, 1);
	if (_i == 0)
		ck_assert_uint_eq(fabric_portp(&osm, fabric_find_node(&osm, SW(L1S1)), 0)->lid, 5);
	ck_assert_uint_eq(fabric_portp(&osm, h0, 1)->state, PORT_ACTIVE);
	ck_assert_uint_eq(fabric_portp(&osm, h0, 1)->width_active, 0x02);
	fabric_free(&net);
	fabric_free(&ibnd);
	fabric_free(&osm);
}
END_TEST

START_TEST(t_save_roundtrip)
{
	struct fabric osm, back;
	char dir[] = "/tmp/test_baseline.XXXXXX", path[256], err[512];
	uint32_t nodes, links;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state/baseline", dir);
	load(&osm, FIX_OSM, BASELINE_OPENSM);
	ck_assert_msg(baseline_save(&osm, path, err, sizeof(err)) == 0, "%s", err);
	load(&back, path, BASELINE_TOPOLOGY);
	assert_same(&osm, &back);
	baseline_counts(&back, &nodes, &links);
	ck_assert_uint_eq(nodes, 8);
	ck_assert_uint_eq(links, 8);
	/* ibnetdiscover's format, and nothing left beside it */
	FILE *fp = fopen(path, "r");
	char line[128];
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), fp));
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), fp));
	ck_assert_str_eq(line, "# Topology file: generated by ibsmd\n");
	fclose(fp);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "test \"$(ls %s/state)\" = baseline", dir);
	ck_assert_int_eq(system(cmd), 0);
	/* a directory in the way: refused, the old file kept */
	char bad[300];
	snprintf(bad, sizeof(bad), "%s/state/baseline/x", dir);
	ck_assert_int_eq(baseline_save(&osm, bad, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "baseline"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	fabric_free(&osm);
	fabric_free(&back);
}
END_TEST

/* ---- the differences ---- */

static uint32_t port_of(const struct fabric *f, uint64_t guid, unsigned num)
{
	uint32_t ni = fabric_find_node(f, guid);
	ck_assert_uint_ne(ni, FAB_NONE);
	return fabric_port(f, ni, num);
}

static void unplug(struct fabric *f, uint64_t guid, unsigned num)
{
	uint32_t pi = port_of(f, guid, num), r = f->ports[pi].remote;
	ck_assert_uint_ne(r, FAB_NONE);
	f->ports[pi].remote = FAB_NONE;
	f->ports[r].remote = FAB_NONE;
}

static void plug(struct fabric *f, uint64_t ga, unsigned pa, uint64_t gb, unsigned pb)
{
	fabric_link(f, port_of(f, ga, pa), port_of(f, gb, pb));
}

static void assert_end(const struct baseline_end *e, uint64_t guid, unsigned port)
{
	ck_assert_msg(e->guid == guid && e->port == port,
		      "end %016" PRIx64 "[%u], want %016" PRIx64 "[%u]",
		      e->guid, e->port, guid, port);
}

static void diff_of(const struct fabric *base, const struct fabric *cur,
		    struct baseline_diff *d, uint32_t missing, uint32_t extra,
		    uint32_t moved)
{
	ck_assert_int_eq(baseline_diff(base, cur, d), 0);
	ck_assert_uint_eq(d->missing.n, missing);
	ck_assert_uint_eq(d->extra.n, extra);
	ck_assert_uint_eq(d->moved.n, moved);
}

/* The net fixture as base, a copy of it as cur. */
static void pair(struct fabric *base, struct fabric *cur)
{
	load(base, FIX_NET, BASELINE_TOPOLOGY);
	fabric_init(cur);
	ck_assert_int_eq(fabric_clone(cur, base), 0);
}

START_TEST(t_removed_cable_missing)
{
	struct fabric base, cur;
	struct baseline_diff d;

	pair(&base, &cur);
	unplug(&cur, SW(L1S0), 1);
	diff_of(&base, &cur, &d, 1, 0, 0);
	ck_assert_uint_eq(d.missing.v[0].kind, BASELINE_LINK);
	/* base's order: L0-S0 comes before L1-S0 */
	assert_end(&d.missing.v[0].a, SW(L0S0), 3);
	assert_end(&d.missing.v[0].b, SW(L1S0), 1);
	ck_assert_str_eq(d.missing.v[0].a.name, "L0-S0");
	ck_assert_uint_eq(d.missing.v[0].b.type, FAB_SWITCH);
	baseline_diff_free(&d);
	/* the other way round it is extra */
	diff_of(&cur, &base, &d, 0, 1, 0);
	assert_end(&d.extra.v[0].a, SW(L0S0), 3);
	assert_end(&d.extra.v[0].b, SW(L1S0), 1);
	baseline_diff_free(&d);
	fabric_free(&base);
	fabric_free(&cur);
}
END_TEST

/* The file as last read: read again when it changes, refused, gone. */
START_TEST(t_watch)
{
	struct fabric base, cur;
	struct baseline_watch w;
	char dir[] = "/tmp/test_baseline.XXXXXX", path[256], err[512];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/baseline", dir);
	pair(&base, &cur);
	baseline_watch_init(&w);
	json_t *j = baseline_watch_json(&w, path, &cur);	/* no file yet */
	ck_assert(json_is_null(j));
	json_decref(j);
	ck_assert_int_eq(baseline_save(&base, path, err, sizeof(err)), 0);
	unplug(&cur, SW(L1S0), 1);
	j = baseline_watch_json(&w, path, &cur);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "missing")), 1);
	json_decref(j);
	/* saved again from the fabric now: read again, nothing missing */
	ck_assert_int_eq(baseline_save(&cur, path, err, sizeof(err)), 0);
	j = baseline_watch_json(&w, path, &cur);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "missing")), 0);
	json_decref(j);
	/* broken: the error, file:line */
	FILE *fp = fopen(path, "w");
	fputs("Switch 8 \"x\"\n[99] \"y\"[1]\n", fp);
	fclose(fp);
	j = baseline_watch_json(&w, path, &cur);
	const char *e = json_string_value(json_object_get(j, "error"));
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(strstr(e, "baseline:"));
	json_decref(j);
	/* gone: none */
	ck_assert_int_eq(unlink(path), 0);
	j = baseline_watch_json(&w, path, &cur);
	ck_assert(json_is_null(j));
	json_decref(j);
	baseline_watch_free(&w);
	fabric_free(&base);
	fabric_free(&cur);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(t_added_cable_extra)
{
	struct fabric base, cur;
	struct baseline_diff d;

	pair(&base, &cur);
	plug(&cur, SW(L1S1), 4, SW(L1S0), 3);	/* two free ports */
	diff_of(&base, &cur, &d, 0, 1, 0);
	ck_assert_uint_eq(d.extra.v[0].kind, BASELINE_LINK);
	assert_end(&d.extra.v[0].a, SW(L1S0), 3);
	assert_end(&d.extra.v[0].b, SW(L1S1), 4);
	baseline_diff_free(&d);
	fabric_free(&base);
	fabric_free(&cur);
}
END_TEST

/* (a): the same two nodes, other ports: L0-S0[3]--L1-S0[1] to L0-S0[3]--L1-S0[4] */
START_TEST(t_moved_same_nodes)
{
	struct fabric base, cur;
	struct baseline_diff d;

	pair(&base, &cur);
	unplug(&cur, SW(L1S0), 1);
	plug(&cur, SW(L1S0), 4, SW(L0S0), 3);
	diff_of(&base, &cur, &d, 0, 0, 1);
	const struct baseline_item *m = &d.moved.v[0];
	assert_end(&m->a, SW(L0S0), 3);
	assert_end(&m->b, SW(L1S0), 4);
	assert_end(&m->was_a, SW(L0S0), 3);
	assert_end(&m->was_b, SW(L1S0), 1);
	baseline_diff_free(&d);
	fabric_free(&base);
	fabric_free(&cur);
}
END_TEST

/* (b): H-3's cable replugged from L0-S1[2] to the spine L1-S1[3] */
START_TEST(t_moved_other_neighbour)
{
	struct fabric base, cur;
	struct baseline_diff d;

	pair(&base, &cur);
	unplug(&cur, HOST(3), 1);
	plug(&cur, HOST(3), 1, SW(L1S1), 3);
	diff_of(&base, &cur, &d, 0, 0, 1);
	const struct baseline_item *m = &d.moved.v[0];
	/* a and was_a: the end that stayed, H-3[1] (base has it second) */
	assert_end(&m->a, HOST(3), 1);
	assert_end(&m->b, SW(L1S1), 3);
	assert_end(&m->was_a, HOST(3), 1);
	assert_end(&m->was_b, SW(L0S1), 2);
	ck_assert_str_eq(m->was_b.name, "L0-S1");
	baseline_diff_free(&d);
	/* the same move and a pulled cable: one each */
	unplug(&cur, SW(L1S1), 1);
	diff_of(&base, &cur, &d, 1, 0, 1);
	assert_end(&d.missing.v[0].a, SW(L0S0), 4);
	baseline_diff_free(&d);
	fabric_free(&base);
	fabric_free(&cur);
}
END_TEST

/* The net fixture without H-3 (its record and L0-S1's port line to it). */
static char *net_without_h3(void)
{
	FILE *fp = fopen(FIX_NET, "r");
	char line[256], *out = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&out, &len);
	int skip = 0;

	ck_assert_ptr_nonnull(fp);
	while (fgets(line, sizeof(line), fp)) {
		if (!strcmp(line, "caguid=0x0002c9020000000c\n"))
			skip = 3;	/* the guid, header and port lines */
		if (strstr(line, "\"H-3\"[1]"))
			continue;
		if (skip > 0) {
			skip--;
			continue;
		}
		fputs(line, o);
	}
	fclose(fp);
	fclose(o);
	return out;
}

START_TEST(t_missing_node)
{
	struct fabric base, cur;
	struct baseline_diff d;
	char err[512], *text = net_without_h3();

	load(&base, FIX_NET, BASELINE_TOPOLOGY);
	fabric_init(&cur);
	ck_assert_msg(baseline_parse_string(&cur, text, "cur", NULL, err,
					    sizeof(err)) == 0, "%s", err);
	free(text);
	ck_assert_uint_eq(cur.n_nodes, 7);
	diff_of(&base, &cur, &d, 2, 0, 0);
	ck_assert_uint_eq(d.missing.v[0].kind, BASELINE_NODE);
	ck_assert_uint_eq(d.missing.v[0].a.guid, HOST(3));
	ck_assert_uint_eq(d.missing.v[0].a.type, FAB_CA);
	ck_assert_str_eq(d.missing.v[0].a.name, "H-3");
	ck_assert_uint_eq(d.missing.v[1].kind, BASELINE_LINK);
	assert_end(&d.missing.v[1].a, HOST(3), 1);
	assert_end(&d.missing.v[1].b, SW(L0S1), 2);
	baseline_diff_free(&d);
	/* a new node: extra, with its cable */
	diff_of(&cur, &base, &d, 0, 2, 0);
	ck_assert_uint_eq(d.extra.v[0].kind, BASELINE_NODE);
	ck_assert_uint_eq(d.extra.v[0].a.guid, HOST(3));
	ck_assert_uint_eq(d.extra.v[1].kind, BASELINE_LINK);
	baseline_diff_free(&d);
	/* a node replaced (H-3's cable now to a new node): not a move */
	unplug(&base, HOST(3), 1);
	diff_of(&base, &cur, &d, 1, 0, 0);
	ck_assert_uint_eq(d.missing.v[0].kind, BASELINE_NODE);
	baseline_diff_free(&d);
	fabric_free(&base);
	fabric_free(&cur);
}
END_TEST

/* ---- the JSON, with names from the node-name map ---- */

START_TEST(t_json)
{
	struct fabric base, cur;
	struct baseline_diff d;
	char map[] = "/tmp/test_baseline_map.XXXXXX", err[256];
	int fd = mkstemp(map);

	ck_assert_int_ge(fd, 0);
	dprintf(fd, "0x%016llx \"rack1-node3\"\n", HOST(3));
	close(fd);
	ck_assert_msg(nodemap_use_file(map, err, sizeof(err)) == 0, "%s", err);
	unlink(map);
	pair(&base, &cur);
	unplug(&cur, HOST(3), 1);
	plug(&cur, HOST(3), 1, SW(L1S1), 3);
	unplug(&cur, SW(L1S0), 2);
	plug(&cur, SW(L1S1), 4, SW(L1S0), 3);
	ck_assert_int_eq(baseline_diff(&base, &cur, &d), 0);
	json_t *j = baseline_diff_json(&d, 0);
	char *s = json_dumps(j, JSON_COMPACT);
	ck_assert_str_eq(s,
		"{\"missing\":[{\"kind\":\"link\","
		"\"a\":{\"guid\":\"0x0002c90100000001\",\"node\":\"L0-S1\",\"port\":3},"
		"\"b\":{\"guid\":\"0x0002c90100000002\",\"node\":\"L1-S0\",\"port\":2}}],"
		"\"extra\":[{\"kind\":\"link\","
		"\"a\":{\"guid\":\"0x0002c90100000002\",\"node\":\"L1-S0\",\"port\":3},"
		"\"b\":{\"guid\":\"0x0002c90100000003\",\"node\":\"L1-S1\",\"port\":4}}],"
		"\"moved\":[{\"kind\":\"link\","
		"\"a\":{\"guid\":\"0x0002c9020000000c\",\"node\":\"rack1-node3\",\"port\":1},"
		"\"b\":{\"guid\":\"0x0002c90100000003\",\"node\":\"L1-S1\",\"port\":3},"
		"\"was\":{\"a\":{\"guid\":\"0x0002c9020000000c\",\"node\":\"rack1-node3\",\"port\":1},"
		"\"b\":{\"guid\":\"0x0002c90100000001\",\"node\":\"L0-S1\",\"port\":2}}}]}");
	free(s);
	json_decref(j);
	baseline_diff_free(&d);
	/* a node, and a list cut short */
	fabric_free(&cur);
	fabric_init(&cur);
	ck_assert_int_eq(baseline_diff(&base, &cur, &d), 0);
	ck_assert_uint_eq(d.missing.n, 16);
	j = baseline_diff_json(&d, 1);
	s = json_dumps(j, JSON_COMPACT);
	ck_assert_str_eq(s,
		"{\"missing\":[{\"kind\":\"node\",\"guid\":\"0x0002c90200000000\","
		"\"node\":\"H-0\",\"type\":\"ca\"}],\"extra\":[],\"moved\":[],"
		"\"omitted\":{\"missing\":15}}");
	free(s);
	json_decref(j);
	baseline_diff_free(&d);
	nodemap_use(NULL);
	fabric_free(&base);
	fabric_free(&cur);
}
END_TEST

/* ---- malformed files: refused with file:line ---- */

#define OSM_SW(pn) "{ SW Ports:04 SystemGUID:0000000000000001 NodeGUID:0000000000000001 " \
	"PortGUID:0000000000000001 VenID:000000 DevID:0000 Rev:000000A1 {sw one} LID:0001 PN:" pn " }"
#define OSM_CA(pn) "{ CA Ports:02 SystemGUID:0000000000000010 NodeGUID:0000000000000010 " \
	"PortGUID:0000000000000011 VenID:00000000 DevID:0000 Rev:000000A1 {ca} LID:0002 PN:" pn " }"
#define OSM_TAIL " PHY=4x LOG=ACT SPD=2.5\n"

static const struct bad {
	const char *text, *want;
} bad[] = {
	{ "\n" OSM_SW("01") " " OSM_CA("01") OSM_TAIL
	  "{ XX Ports:01 }" OSM_TAIL, "bad:3: unknown node type \"XX\"" },
	{ OSM_SW("05") " " OSM_CA("01") OSM_TAIL, "bad:1: PN:5: node 0x0000000000000001 has ports 1 to 4" },
	{ OSM_SW("01") " " OSM_CA("01") " PHY=3x LOG=ACT SPD=2.5\n", "bad:1: PHY=: unknown value \"3x\"" },
	{ OSM_SW("01") " " OSM_CA("01") OSM_TAIL OSM_SW("02") " " OSM_CA("01") OSM_TAIL,
	  "bad:2: port 0x0000000000000010[1] is cabled to 0x0000000000000001[1] on an earlier line" },
	{ OSM_SW("01") OSM_TAIL, "bad:1: expected '{' at \"PHY=4x LOG=ACT SPD=2\"" },
	{ OSM_SW("01") " " OSM_CA("01") OSM_TAIL
	  "{ SW Ports:08 SystemGUID:0000000000000001 NodeGUID:0000000000000001 "
	  "PortGUID:0000000000000001 VenID:000000 DevID:0000 Rev:000000A1 {sw one} LID:0001 PN:02 } "
	  OSM_CA("02") OSM_TAIL,
	  "bad:2: node 0x0000000000000001 is given another type or port count" },
	{ "{ SW Ports:04 SystemGUID:zz", "bad:1: SystemGUID:: not a hexadecimal number" },
	{ OSM_SW("01") " " OSM_CA("01") " PHY=4x LOG=ACT SPD=2.5 junk\n",
	  "bad:1: unexpected \"junk\" at the end of the line" },
	/* the other formats: topo.c's own messages, also file:line */
	{ "Switch 4 \"S\"\n[9] \"X\"[1]\n", "bad:2: " },
};

START_TEST(t_malformed)
{
	struct fabric f;
	char err[512];

	load(&f, FIX_NET, BASELINE_TOPOLOGY);
	ck_assert_int_eq(baseline_parse_string(&f, bad[_i].text, "bad", NULL,
					       err, sizeof(err)), -1);
	ck_assert_msg(strncmp(err, bad[_i].want, strlen(bad[_i].want)) == 0,
		      "got \"%s\", want \"%s\"", err, bad[_i].want);
	ck_assert_uint_eq(f.n_nodes, 8);	/* left as it was */
	fabric_free(&f);
}
END_TEST

START_TEST(t_bad_files)
{
	struct fabric f;
	char err[512], path[] = "/tmp/test_baseline_bad.XXXXXX";
	int fd = mkstemp(path);

	fabric_init(&f);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "{ SW\0", 5), 5);
	close(fd);
	ck_assert_int_eq(baseline_load(&f, path, NULL, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_ptr_nonnull(strstr(err, "not a text file"));
	unlink(path);
	ck_assert_int_eq(baseline_load(&f, path, NULL, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_int_eq(baseline_load(&f, "/dev/zero", NULL, err, sizeof(err)), -1);
	/* a file with nothing but blank lines after an OpenSM-looking start */
	ck_assert_int_eq(baseline_parse_string(&f, "  \n{\n", "x", NULL, err,
					       sizeof(err)), -1);
	ck_assert_str_eq(err, "x:2: unknown node type \"\"");
	/* the OpenSM reader given nothing at all */
	ck_assert_int_eq(osmlst_parse_string(&f, "\n\n", "e", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "e:1: no cabled port: not an OpenSM topology dump");
	fabric_free(&f);
}
END_TEST

/* Every strict prefix of a good line (a file cut short) is refused at line 1. */
START_TEST(t_cut_short)
{
	FILE *fp = fopen(FIX_OSM, "r");
	char line[1024], err[512], *cut;
	struct fabric f;

	ck_assert_ptr_nonnull(fp);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), fp));
	fclose(fp);
	line[strcspn(line, "\n")] = '\0';
	fabric_init(&f);
	ck_assert_int_eq(osmlst_parse_string(&f, line, "t", err, sizeof(err)), 0);
	ck_assert_uint_eq(f.n_nodes, 2);
	for (size_t k = 1; k < strlen(line); k++) {
		ck_assert_ptr_nonnull(cut = strndup(line, k));
		ck_assert_msg(osmlst_parse_string(&f, cut, "t", err, sizeof(err)) == -1,
			      "accepted \"%s\"", cut);
		ck_assert_msg(strncmp(err, "t:1: ", 5) == 0, "%s", err);
		free(cut);
	}
	fabric_free(&f);
}
END_TEST

/* ---- ibsmctl's text of a health reply ---- */

static char *render(const char *reply_json)
{
	char *out = NULL;
	size_t len = 0;
	json_error_t je;
	json_t *r = json_loads(reply_json, 0, &je);
	ck_assert_msg(r != NULL, "%s", je.text);
	FILE *fp = open_memstream(&out, &len);
	control_print_text(fp, r);
	fclose(fp);
	json_decref(r);
	return out;
}

#define END(g, n, p) "{\"guid\":\"" g "\",\"node\":\"" n "\",\"port\":" #p "}"

START_TEST(t_render_health)
{
	char *s = render("{\"ok\":true,"
		"\"unhealthy\":[{\"guid\":\"0x0002c90100000000\",\"node\":\"L0-S0\",\"port\":3,"
		"\"counters\":{\"SymbolErrorCounter\":12,\"PortRcvErrors\":2},"
		"\"reasons\":[\"SymbolErrorCounter 12/h over 10/h\",\"symbol errors on one side\"]}],"
		"\"flapping\":[{\"guid\":\"0x0002c90200000001\",\"node\":\"H-0\",\"port\":1,"
		"\"counters\":{\"LinkDownedCounter\":5},\"reasons\":[\"LinkDowned +5 in 3 sweeps\"]}],"
		"\"degraded\":[{\"guid\":\"0x0002c90100000001\",\"node\":\"L0-S1\",\"port\":4,"
		"\"width\":\"1x\",\"enabled_width\":\"4x\",\"reasons\":[\"1x below 4x\"]}],"
		"\"hot\":[],"
		"\"baseline\":{\"missing\":[{\"kind\":\"node\",\"guid\":\"0x0002c9020000000c\","
		"\"node\":\"H-3\",\"type\":\"ca\"},{\"kind\":\"link\",\"a\":"
		END("0x0002c9020000000c", "H-3", 1) ",\"b\":" END("0x0002c90100000001", "L0-S1", 2) "}],"
		"\"extra\":[],\"moved\":[{\"kind\":\"link\",\"a\":" END("0x2", "A", 1) ",\"b\":"
		END("0x3", "C", 7) ",\"was\":{\"a\":" END("0x2", "A", 1) ",\"b\":" END("0x4", "B", 2) "}}],"
		"\"omitted\":{\"extra\":3}}}");
	ck_assert_str_eq(s,
		"unhealthy \"L0-S0\"[3] (0x0002c90100000000): SymbolErrorCounter=12 "
		"PortRcvErrors=2; SymbolErrorCounter 12/h over 10/h, symbol errors on one side\n"
		"flapping  \"H-0\"[1] (0x0002c90200000001): LinkDownedCounter=5; "
		"LinkDowned +5 in 3 sweeps\n"
		"degraded  \"L0-S1\"[4] (0x0002c90100000001): width=1x enabled_width=4x; "
		"1x below 4x\n"
		"missing   node \"H-3\" (0x0002c9020000000c) ca\n"
		"missing   link \"H-3\"[1] (0x0002c9020000000c) -- \"L0-S1\"[2] (0x0002c90100000001)\n"
		"extra     and 3 more\n"
		"moved     link \"A\"[1] (0x2) -- \"C\"[7] (0x3), was \"A\"[1] (0x2) -- \"B\"[2] (0x4)\n");
	free(s);
	s = render("{\"ok\":true,\"unhealthy\":[],\"flapping\":[],\"degraded\":[],\"hot\":[],"
		   "\"baseline\":{\"missing\":[],\"extra\":[],\"moved\":[]}}");
	ck_assert_str_eq(s, "healthy\n");
	free(s);
	s = render("{\"ok\":true,\"unhealthy\":[],\"flapping\":[],\"degraded\":[],\"hot\":[],"
		   "\"baseline\":null}");
	ck_assert_str_eq(s, "healthy\nbaseline: none saved (ibsmctl health --save-baseline)\n");
	free(s);
	s = render("{\"ok\":true,\"unhealthy\":[],\"baseline\":{\"error\":\"/var/lib/ibsmd/baseline:3: bad\"}}");
	ck_assert_str_eq(s, "healthy\nbaseline: /var/lib/ibsmd/baseline:3: bad\n");
	free(s);
	s = render("{\"ok\":true,\"baseline\":{\"saved\":\"/var/lib/ibsmd/baseline\","
		   "\"nodes\":8,\"links\":8}}");
	ck_assert_str_eq(s, "baseline saved to /var/lib/ibsmd/baseline: 8 nodes, 8 links\n");
	free(s);
}
END_TEST

/* The JSON baseline_diff_json makes, rendered: the two ends agree. */
START_TEST(t_render_diff)
{
	struct fabric base, cur;
	struct baseline_diff d;

	pair(&base, &cur);
	unplug(&cur, SW(L1S0), 1);
	ck_assert_int_eq(baseline_diff(&base, &cur, &d), 0);
	json_t *r = json_pack("{s:b,s:[],s:o}", "ok", 1, "unhealthy", "baseline",
			      baseline_diff_json(&d, 0));
	char *js = json_dumps(r, 0), *s = render(js);
	ck_assert_str_eq(s, "missing   link \"L0-S0\"[3] (0x0002c90100000000) -- "
			 "\"L1-S0\"[1] (0x0002c90100000002)\n");
	free(s);
	free(js);
	json_decref(r);
	baseline_diff_free(&d);
	fabric_free(&base);
	fabric_free(&cur);
}
END_TEST

static Suite *baseline_suite(void)
{
	Suite *s = suite_create("baseline");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, t_formats_agree, 0,
			    (int)(sizeof(fixtures) / sizeof(fixtures[0])));
	tcase_add_test(tc, t_save_roundtrip);
	tcase_add_test(tc, t_removed_cable_missing);
	tcase_add_test(tc, t_added_cable_extra);
	tcase_add_test(tc, t_watch);
	tcase_add_test(tc, t_moved_same_nodes);
	tcase_add_test(tc, t_moved_other_neighbour);
	tcase_add_test(tc, t_missing_node);
	tcase_add_test(tc, t_json);
	tcase_add_loop_test(tc, t_malformed, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, t_bad_files);
	tcase_add_test(tc, t_cut_short);
	tcase_add_test(tc, t_render_health);
	tcase_add_test(tc, t_render_diff);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(baseline_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
