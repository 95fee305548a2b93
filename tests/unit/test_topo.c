/*
 * Topology parser (ibsim net files, ibnetdiscover output) and the two dump
 * writers.  The ibnetdiscover and dump_fts -n texts below were captured
 * from the real tools run against ibsim on the net file NET_SMALL.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sm/render/dump.h"
#include "sm/base/topo.h"

/* Two switches, a single-port CA, a dual-port CA on both switches,
 * parallel inter-switch links, a 12x link (w=12 on both ends). */
static const char NET_SMALL[] =
	"# small test fabric\n"
	"switchguid=0x2c90000000001\n"
	"Switch\t4 \"S1\"\n"
	"[1]\t\"H1\"[1]\n"
	"[2]\t\"H2\"[1]\n"
	"[3]\t\"S2\"[3]\n"
	"[4]\t\"S2\"[4]\n"
	"\n"
	"switchguid=0x2c90000000002\n"
	"Switch\t4 \"S2\"\n"
	"[1]\t\"H2\"[2]\tw=12\n"
	"[3]\t\"S1\"[3]\n"
	"[4]\t\"S1\"[4]\n"
	"\n"
	"caguid=0x2c90000000100\n"
	"Hca\t1 \"H1\"\n"
	"[1]\t\"S1\"[1]\n"
	"\n"
	"caguid=0x2c90000000200\n"
	"Hca\t2 \"H2\"\n"
	"[1]\t\"S1\"[2]\n"
	"[2]\t\"S2\"[1]\tw=12\n";

/* `ibnetdiscover` on ibsim running NET_SMALL, after OpenSM brought it up. */
static const char IBND_SMALL[] =
	"#\n"
	"# Topology file: generated on Sun Nov 22 02:17:29 2026\n"
	"#\n"
	"# Initiated from node 0002c90000000100 port 0002c90000000101\n"
	"\n"
	"vendid=0x0\n"
	"devid=0x0\n"
	"sysimgguid=0x2c90000000002\n"
	"switchguid=0x2c90000000002(2c90000000002)\n"
	"Switch\t4 \"S-0002c90000000002\"\t\t# \"S2\" base port 0 lid 4 lmc 0\n"
	"[1]\t\"H-0002c90000000200\"[2](2c90000000202) \t\t# \"H2\" lid 5 12xSDR\n"
	"[3]\t\"S-0002c90000000001\"[3]\t\t# \"S1\" lid 2 4xSDR\n"
	"[4]\t\"S-0002c90000000001\"[4]\t\t# \"S1\" lid 2 4xSDR\n"
	"\n"
	"vendid=0x0\n"
	"devid=0x0\n"
	"sysimgguid=0x2c90000000001\n"
	"switchguid=0x2c90000000001(2c90000000001)\n"
	"Switch\t4 \"S-0002c90000000001\"\t\t# \"S1\" base port 0 lid 2 lmc 0\n"
	"[1]\t\"H-0002c90000000100\"[1](2c90000000101) \t\t# \"H1\" lid 1 4xSDR\n"
	"[2]\t\"H-0002c90000000200\"[1](2c90000000201) \t\t# \"H2\" lid 3 4xSDR\n"
	"[3]\t\"S-0002c90000000002\"[3]\t\t# \"S2\" lid 4 4xSDR\n"
	"[4]\t\"S-0002c90000000002\"[4]\t\t# \"S2\" lid 4 4xSDR\n"
	"\n"
	"vendid=0x0\n"
	"devid=0x0\n"
	"sysimgguid=0x2c90000000200\n"
	"caguid=0x2c90000000200\n"
	"Ca\t2 \"H-0002c90000000200\"\t\t# \"H2\"\n"
	"[1](2c90000000201) \t\"S-0002c90000000001\"[2]\t\t# lid 3 lmc 0 \"S1\" lid 2 4xSDR\n"
	"[2](2c90000000202) \t\"S-0002c90000000002\"[1]\t\t# lid 5 lmc 0 \"S2\" lid 4 12xSDR\n"
	"\n"
	"vendid=0x0\n"
	"devid=0x0\n"
	"sysimgguid=0x2c90000000100\n"
	"caguid=0x2c90000000100\n"
	"Ca\t1 \"H-0002c90000000100\"\t\t# \"H1\"\n"
	"[1](2c90000000101) \t\"S-0002c90000000001\"[1]\t\t# lid 1 lmc 0 \"S1\" lid 2 4xSDR\n";

/* `dump_fts -n` on the same fabric (OpenSM minhop routes). */
static const char FTS_SMALL[] =
	"Unicast lids [0x0-0x5] of switch DR path slid 0; dlid 0; 0,1,3 guid 0x0002c90000000002 (S2):\n"
	"  Lid  Out   Destination\n"
	"       Port     Info \n"
	"0x0001 003 \n"
	"0x0002 003 \n"
	"0x0003 004 \n"
	"0x0004 000 \n"
	"0x0005 001 \n"
	"5 valid lids dumped \n"
	"Unicast lids [0x0-0x5] of switch DR path slid 0; dlid 0; 0,1 guid 0x0002c90000000001 (S1):\n"
	"  Lid  Out   Destination\n"
	"       Port     Info \n"
	"0x0001 001 \n"
	"0x0002 000 \n"
	"0x0003 002 \n"
	"0x0004 004 \n"
	"0x0005 003 \n"
	"5 valid lids dumped \n";

static char err[512];

static void parse_ok(struct fabric *f, const char *text)
{
	fabric_init(f);
	int rc = topo_parse_string(f, text, "t.net", err, sizeof(err));
	ck_assert_msg(rc == 0, "parse failed: %s", err);
}

static uint32_t node_by_desc(const struct fabric *f, const char *desc)
{
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (!strcmp(f->nodes[i].desc, desc))
			return i;
	ck_abort_msg("no node \"%s\"", desc);
	return FAB_NONE;
}

static const struct fab_port *port_of(const struct fabric *f,
				      const char *desc, unsigned num)
{
	return fabric_portp(f, node_by_desc(f, desc), num);
}

/* The peer of desc[num] as "desc[num]", or "-" when uncabled. */
static const char *peer_of(const struct fabric *f, const char *desc,
			   unsigned num)
{
	static char buf[96];
	const struct fab_port *p = port_of(f, desc, num);

	if (p->remote == FAB_NONE)
		return "-";
	const struct fab_port *r = &f->ports[p->remote];
	ck_assert_uint_eq(f->ports[p->remote].remote,
			  (uint32_t)(p - f->ports));
	snprintf(buf, sizeof(buf), "%s[%u]", f->nodes[r->node].desc, r->num);
	return buf;
}

START_TEST(t_net_file)
{
	struct fabric f;
	uint32_t sw, ca, ports;

	parse_ok(&f, NET_SMALL);
	fabric_counts(&f, &sw, &ca, &ports);
	ck_assert_uint_eq(sw, 2);
	ck_assert_uint_eq(ca, 2);
	ck_assert_uint_eq(ports, 5 + 5 + 1 + 2);

	uint32_t s1 = node_by_desc(&f, "S1"), h2 = node_by_desc(&f, "H2");
	ck_assert_uint_eq(f.nodes[s1].type, FAB_SWITCH);
	ck_assert_uint_eq(f.nodes[s1].nports, 4);
	ck_assert_uint_eq(f.nodes[s1].guid, 0x2c90000000001ULL);
	ck_assert_uint_eq(f.nodes[s1].sys_guid, 0x2c90000000001ULL);
	ck_assert_uint_eq(fabric_find_node(&f, 0x2c90000000001ULL), s1);
	ck_assert_uint_eq(f.nodes[h2].type, FAB_CA);
	ck_assert_uint_eq(f.nodes[h2].guid, 0x2c90000000200ULL);
	ck_assert_uint_eq(node_by_desc(&f, "S2"),
			  fabric_find_node(&f, 0x2c90000000002ULL));
	ck_assert_uint_eq(node_by_desc(&f, "H1"),
			  fabric_find_node(&f, 0x2c90000000100ULL));

	/* port GUIDs: switch ports share the node GUID, CA port N = +N */
	for (unsigned i = 0; i <= 4; i++)
		ck_assert_uint_eq(port_of(&f, "S1", i)->guid,
				  0x2c90000000001ULL);
	ck_assert_uint_eq(port_of(&f, "H2", 1)->guid, 0x2c90000000201ULL);
	ck_assert_uint_eq(port_of(&f, "H2", 2)->guid, 0x2c90000000202ULL);
	ck_assert_uint_eq(port_of(&f, "H1", 1)->guid, 0x2c90000000101ULL);

	/* links, parallel ones included, both directions */
	ck_assert_str_eq(peer_of(&f, "S1", 1), "H1[1]");
	ck_assert_str_eq(peer_of(&f, "S1", 2), "H2[1]");
	ck_assert_str_eq(peer_of(&f, "S1", 3), "S2[3]");
	ck_assert_str_eq(peer_of(&f, "S1", 4), "S2[4]");
	ck_assert_str_eq(peer_of(&f, "S2", 1), "H2[2]");
	ck_assert_str_eq(peer_of(&f, "S2", 2), "-");
	ck_assert_str_eq(peer_of(&f, "H2", 2), "S2[1]");

	/* states as ibsim starts them */
	const struct fab_port *p = port_of(&f, "S1", 1);
	ck_assert(p->flags & FPORT_PRESENT);
	ck_assert_uint_eq(p->state, PORT_INIT);
	ck_assert_uint_eq(p->phys_state, PHYS_LINKUP);
	p = port_of(&f, "S2", 2);
	ck_assert(p->flags & FPORT_PRESENT);
	ck_assert_uint_eq(p->state, PORT_DOWN);
	ck_assert_uint_eq(p->phys_state, 2);
	p = port_of(&f, "S2", 0);
	ck_assert(p->flags & FPORT_PRESENT);
	ck_assert_uint_eq(p->state, PORT_ACTIVE);
	ck_assert(!(port_of(&f, "H2", 0)->flags & FPORT_PRESENT));
	ck_assert(fabric_is_endport(&f, fabric_port(&f, s1, 0)));
	ck_assert(!fabric_is_endport(&f, fabric_port(&f, s1, 1)));

	/* width/speed, caps */
	p = port_of(&f, "S1", 3);
	ck_assert_uint_eq(p->width_active, TOPO_WIDTH_4X);
	ck_assert_uint_eq(p->speed_active, TOPO_SPEED_SDR);
	ck_assert_uint_eq(p->mtu_cap, 5);
	ck_assert_uint_eq(p->vl_cap, 4);
	ck_assert_uint_eq(port_of(&f, "S2", 1)->width_active, TOPO_WIDTH_12X);
	ck_assert_uint_eq(port_of(&f, "H2", 2)->width_active, TOPO_WIDTH_12X);
	ck_assert_uint_eq(port_of(&f, "H1", 1)->lid, 0);

	/* ibsim attaches a client to the first node without SIM_HOST */
	ck_assert_uint_eq(f.sm_node, s1);
	ck_assert_uint_eq(f.sm_port, 0);
	fabric_free(&f);
}
END_TEST

/* One caguid= base for several records: ibsim's sequence, base + nports + 1. */
START_TEST(t_guid_sequence)
{
	static const char net[] =
		"switchguid=0x100\n"
		"Switch 8 \"A\"\n[1] \"X\"[1]\n\n"
		"Switch 8 \"B\"\n[1] \"Y\"[2]\n\n"
		"caguid=0x5000\n"
		"Ca 2 \"X\"\n[1] \"A\"[1]\n\n"
		"Hca 2 \"Y\"\n[2] \"B\"[1]\n\n"
		"caguid+0x10\n"
		"Ca 1 \"Z\"\n";
	struct fabric f;

	parse_ok(&f, net);
	ck_assert_uint_eq(f.nodes[node_by_desc(&f, "A")].guid, 0x100);
	ck_assert_uint_eq(f.nodes[node_by_desc(&f, "B")].guid, 0x101);
	ck_assert_uint_eq(f.nodes[node_by_desc(&f, "X")].guid, 0x5000);
	ck_assert_uint_eq(f.nodes[node_by_desc(&f, "Y")].guid, 0x5003);
	ck_assert_uint_eq(port_of(&f, "Y", 2)->guid, 0x5005);
	ck_assert_uint_eq(f.nodes[node_by_desc(&f, "Z")].guid, 0x5010);
	ck_assert_str_eq(peer_of(&f, "B", 1), "Y[2]");
	ck_assert_str_eq(peer_of(&f, "Z", 1), "-");
	fabric_free(&f);
}
END_TEST

/* Records of NET_SMALL without guid lines, in two different orders. */
static const char *const REC_NOGUID[] = {
	"Switch\t4 \"S1\"\n[1]\t\"H1\"[1]\n[2]\t\"H2\"[1]\n"
	"[3]\t\"S2\"[3]\n[4]\t\"S2\"[4]\n",
	"Switch\t4 \"S2\"\n[1]\t\"H2\"[2]\n[3]\t\"S1\"[3]\n[4]\t\"S1\"[4]\n",
	"Hca\t1 \"H1\"\n[1]\t\"S1\"[1]\n",
	"Hca\t2 \"H2\"\n[1]\t\"S1\"[2]\n[2]\t\"S2\"[1]\n",
};

static char *join(const int *order, int n)
{
	size_t len = 1;
	for (int i = 0; i < n; i++)
		len += strlen(REC_NOGUID[order[i]]) + 1;
	char *s = calloc(1, len);
	ck_assert_ptr_nonnull(s);
	for (int i = 0; i < n; i++) {
		strcat(s, REC_NOGUID[order[i]]);
		strcat(s, "\n");
	}
	return s;
}

/* Every link as "guid[port]-guid[port]", sorted, one per line. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *link_set(const struct fabric *f)
{
	char **v = calloc(f->n_ports + 1, sizeof(*v));
	size_t n = 0, len = 1;

	ck_assert_ptr_nonnull(v);
	for (uint32_t i = 0; i < f->n_ports; i++) {
		const struct fab_port *p = &f->ports[i], *r;
		if (p->remote == FAB_NONE)
			continue;
		r = &f->ports[p->remote];
		v[n] = malloc(64);
		ck_assert_ptr_nonnull(v[n]);
		snprintf(v[n], 64, "%016" PRIx64 "[%u]-%016" PRIx64 "[%u]",
			 f->nodes[p->node].guid, p->num,
			 f->nodes[r->node].guid, r->num);
		len += strlen(v[n]) + 1;
		n++;
	}
	qsort(v, n, sizeof(*v), cmp_str);
	char *s = calloc(1, len);
	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < n; i++) {
		strcat(s, v[i]);
		strcat(s, "\n");
		free(v[i]);
	}
	free(v);
	return s;
}

START_TEST(t_order_independent)
{
	static const int o1[] = { 0, 1, 2, 3 }, o2[] = { 3, 1, 2, 0 };
	char *t1 = join(o1, 4), *t2 = join(o2, 4);
	struct fabric a, b;
	static const char *const names[] = { "S1", "S2", "H1", "H2" };

	parse_ok(&a, t1);
	parse_ok(&b, t2);
	ck_assert_uint_eq(a.n_nodes, 4);
	ck_assert_uint_eq(b.n_nodes, 4);
	for (int i = 0; i < 4; i++) {
		uint64_t g = a.nodes[node_by_desc(&a, names[i])].guid;
		ck_assert_uint_ne(g, 0);
		ck_assert_uint_eq(g, b.nodes[node_by_desc(&b, names[i])].guid);
		ck_assert_uint_eq(port_of(&a, names[i], 1)->guid,
				  port_of(&b, names[i], 1)->guid);
	}
	ck_assert_uint_ne(a.nodes[node_by_desc(&a, "S1")].guid,
			  a.nodes[node_by_desc(&a, "S2")].guid);
	char *l1 = link_set(&a), *l2 = link_set(&b);
	ck_assert_str_eq(l1, l2);
	ck_assert_uint_eq(strlen(l1) > 0, 1);
	free(l1);
	free(l2);

	/* With an explicit guid line per record, too (the generator's way). */
	fabric_free(&a);
	fabric_free(&b);
	parse_ok(&a, NET_SMALL);
	parse_ok(&b,
		 "caguid=0x2c90000000200\n"
		 "Hca\t2 \"H2\"\n[2]\t\"S2\"[1]\tw=12\n[1]\t\"S1\"[2]\n\n"
		 "switchguid=0x2c90000000002\n"
		 "Switch\t4 \"S2\"\n[4]\t\"S1\"[4]\n[3]\t\"S1\"[3]\n"
		 "[1]\t\"H2\"[2]\tw=12\n\n"
		 "caguid=0x2c90000000100\n"
		 "Hca\t1 \"H1\"\n[1]\t\"S1\"[1]\n\n"
		 "switchguid=0x2c90000000001\n"
		 "Switch\t4 \"S1\"\n[3]\t\"S2\"[3]\n[1]\t\"H1\"[1]\n"
		 "[2]\t\"H2\"[1]\n[4]\t\"S2\"[4]\n");
	l1 = link_set(&a);
	l2 = link_set(&b);
	ck_assert_str_eq(l1, l2);
	free(l1);
	free(l2);
	fabric_free(&a);
	fabric_free(&b);
	free(t1);
	free(t2);
}
END_TEST

START_TEST(t_ibnetdiscover)
{
	struct fabric f;

	parse_ok(&f, IBND_SMALL);
	ck_assert_uint_eq(f.n_nodes, 4);
	uint32_t s2 = node_by_desc(&f, "S2"), h1 = node_by_desc(&f, "H1");
	ck_assert_uint_eq(f.nodes[s2].guid, 0x2c90000000002ULL);
	ck_assert_uint_eq(f.nodes[s2].type, FAB_SWITCH);
	ck_assert_uint_eq(f.nodes[node_by_desc(&f, "H2")].type, FAB_CA);
	ck_assert_uint_eq(f.nodes[node_by_desc(&f, "H2")].sys_guid,
			  0x2c90000000200ULL);
	/* LIDs: switch base port 0 from the header, CA ports from the lines */
	ck_assert_uint_eq(port_of(&f, "S2", 0)->lid, 4);
	ck_assert_uint_eq(port_of(&f, "S2", 0)->hw_lid, 4);
	ck_assert_uint_eq(port_of(&f, "S1", 0)->lid, 2);
	ck_assert_uint_eq(port_of(&f, "S1", 1)->lid, 0);
	ck_assert_uint_eq(port_of(&f, "H1", 1)->lid, 1);
	ck_assert_uint_eq(port_of(&f, "H2", 1)->lid, 3);
	ck_assert_uint_eq(port_of(&f, "H2", 2)->lid, 5);
	ck_assert_uint_eq(port_of(&f, "H2", 2)->hw_lid, 5);
	ck_assert_uint_eq(port_of(&f, "H2", 2)->guid, 0x2c90000000202ULL);
	ck_assert_uint_eq(port_of(&f, "H2", 2)->width_active, TOPO_WIDTH_12X);
	ck_assert_uint_eq(port_of(&f, "S2", 1)->width_active, TOPO_WIDTH_12X);
	ck_assert_uint_eq(port_of(&f, "S1", 4)->width_active, TOPO_WIDTH_4X);
	ck_assert_str_eq(peer_of(&f, "S1", 2), "H2[1]");
	ck_assert_str_eq(peer_of(&f, "S2", 4), "S1[4]");
	ck_assert_str_eq(peer_of(&f, "H2", 2), "S2[1]");
	/* the discovering port */
	ck_assert_uint_eq(f.sm_node, h1);
	ck_assert_uint_eq(f.sm_port, 1);
	ck_assert_int_eq(fabric_index_lids(&f), 0);
	ck_assert_uint_eq(f.max_lid, 5);
	ck_assert_uint_eq(f.lid_port[5], fabric_port(&f, node_by_desc(&f, "H2"), 2));

	/* same links and GUIDs as the net file it was discovered from */
	struct fabric n;
	parse_ok(&n, NET_SMALL);
	char *l1 = link_set(&f), *l2 = link_set(&n);
	ck_assert_str_eq(l1, l2);
	free(l1);
	free(l2);
	fabric_free(&n);
	fabric_free(&f);
}
END_TEST

START_TEST(t_speed_hints)
{
	static const char net[] =
		"speed=7\n"
		"Switch 4 \"A\"\n"
		"[1] \"B\"[1]\t\t# \"B\" lid 3 4xQDR\n"
		"[2] \"B\"[2] s=2\n"
		"[3] \"B\"[3]\t\t# \"B\" lid 3 4xFDR s=4 w=2 v=3\n"
		"[4] \"C\"[1] w=3\n"
		"\n"
		"Switch 4 \"B\"\n"
		"[1] \"A\"[1]\n"
		"[2] \"A\"[2]\n"
		"[3] \"A\"[3]\t\t# \"A\" lid 1 4xFDR\n"
		"\n"
		"width=1\n"
		"Ca 1 \"C\"\t# host c\n";
	struct fabric f;

	parse_ok(&f, net);
	ck_assert_uint_eq(port_of(&f, "A", 1)->speed_active, TOPO_SPEED_QDR);
	ck_assert_uint_eq(port_of(&f, "B", 1)->speed_active, TOPO_SPEED_QDR);
	ck_assert_uint_eq(port_of(&f, "A", 2)->speed_active, TOPO_SPEED_DDR);
	ck_assert_uint_eq(port_of(&f, "A", 3)->speed_active, TOPO_SPEED_FDR);
	ck_assert_uint_eq(port_of(&f, "A", 3)->vl_cap, 3);
	ck_assert_uint_eq(port_of(&f, "B", 3)->vl_cap, 4);
	/* one-sided listing: the line describes the link */
	ck_assert_str_eq(peer_of(&f, "host c", 1), "A[4]");
	ck_assert_uint_eq(port_of(&f, "host c", 1)->width_active,
			  TOPO_WIDTH_4X);
	ck_assert_uint_eq(port_of(&f, "A", 4)->speed_active, TOPO_SPEED_QDR);
	/* unquoted description after '#' */
	node_by_desc(&f, "host c");
	ck_assert_str_eq(topo_speed_str(TOPO_SPEED_EDR), "EDR");
	ck_assert_str_eq(topo_width_str(TOPO_WIDTH_12X), "12x");
	fabric_free(&f);
}
END_TEST

/* ibnetdiscover -g decorations and CRLF line ends. */
START_TEST(t_grouped)
{
	static const char net[] =
		"\r\nChassis 1 (guid 0x5)\r\n"
		"# Spine Nodes\r\n"
		"switchguid=0x10(10)\t# ISR9024 Spine 1 Chip 1\r\n"
		"Switch\t4 \"S-0000000000000010\"\t\t# \"spine\" enhanced port 0 lid 9 lmc 1\r\n"
		"[1][ext 7]\t\"S-0000000000000020\"[2][ext 3]\t\t# \"leaf\" lid 4 4xDDR\r\n"
		"\r\n"
		"Switch\t4 \"S-0000000000000020\"\t\t# \"leaf\" base port 0 lid 4 lmc 0\r\n"
		"[2][ext 3]\t\"S-0000000000000010\"[1][ext 7]\t\t# \"spine\" lid 9 4xDDR\r\n";
	struct fabric f;

	parse_ok(&f, net);
	ck_assert_uint_eq(f.n_nodes, 2);
	ck_assert_uint_eq(f.nodes[node_by_desc(&f, "spine")].guid, 0x10);
	/* no guid line for the second switch: the GUID of its id */
	ck_assert_uint_eq(f.nodes[node_by_desc(&f, "leaf")].guid, 0x20);
	ck_assert_uint_eq(f.nodes[node_by_desc(&f, "spine")].enhanced_port0, 1);
	ck_assert_uint_eq(port_of(&f, "spine", 0)->lid, 9);
	ck_assert_uint_eq(port_of(&f, "spine", 0)->lmc, 1);
	ck_assert_uint_eq(f.lmc, 1);
	ck_assert_str_eq(peer_of(&f, "spine", 1), "leaf[2]");
	ck_assert_uint_eq(port_of(&f, "leaf", 2)->speed_active, TOPO_SPEED_DDR);
	fabric_free(&f);
}
END_TEST

static const struct {
	const char *text;
	const char *msg;	/* expected in err */
} bad[] = {
	{ "Switch 4 \"A\"\n[1] \"B\"[2]\n\nSwitch 4 \"B\"\n[2] \"C\"[1]\n\n"
	  "Switch 4 \"C\"\n[1] \"B\"[2]\n",
	  "t.net:2: \"A\"[1] -> \"B\"[2], but \"B\"[2] -> \"C\"[1] at line 5" },
	{ "Switch 4 \"A\"\n\nCa 1 \"B\"\n\n# again\nHca 2 \"A\"\n",
	  "t.net:6: duplicate node \"A\" (first at line 1)" },
	{ "Switch 4 \"A\"\n[1] \"A\"[2]\n[3] \"Q\"[1]\n",
	  "t.net:3: unknown node \"Q\"" },
	{ "Switch 4 \"A\"\n[5] \"B\"[1]\n\nCa 1 \"B\"\n",
	  "t.net:2: port 5 out of range" },
	{ "Switch 4 \"A\"\n[1] \"B\"[2]\n\nCa 1 \"B\"\n",
	  "t.net:2: port 2 out of range: \"B\" has ports 1-1" },
	{ "Switch 4 \"A\"\n[1] \"B\"[1]\n\n[2] \"B\"[1]\nCa 1 \"B\"\n",
	  "t.net:4: port line outside a node record" },
	{ "Switch 0 \"A\"\n", "t.net:1: bad port count" },
	{ "Switch 4\n", "t.net:1: missing \"node id\"" },
	{ "Switch 4 \"A\"\n[1] \"A\"[1]\n", "t.net:2: port 1 linked to itself" },
	{ "Switch 4 \"A\"\n[1] \"A\"[2]\n[1] \"A\"[3]\n",
	  "t.net:3: port 1 of \"A\" listed twice (also line 2)" },
	{ "Switch 4 \"A\"\n[1] \"B\"[1] w=8\n\nCa 1 \"B\"\n[1] \"A\"[1] w=2\n",
	  "t.net:5: no common link width" },
	{ "switchguid=0x10\nSwitch 4 \"A\"\n\nswitchguid=0x10\nSwitch 4 \"B\"\n",
	  "t.net:5: node \"B\" has GUID 0x0000000000000010, like \"A\" (line 2)" },
	{ "Switch 4 \"A\"\n[1] \"B\"[1]\n[2] \"C\"[1]\n\nCa 1 \"B\"\n\nCa 1 \"C\"\n"
	  "[1] \"A\"[1]\n",
	  "t.net:3: \"A\"[2] -> \"C\"[1], but \"C\"[1] -> \"A\"[1] at line 8" },
	{ "Switch 4 \"A\"\n[1] \"B\"[1] w=99\n", "t.net:2: bad link width mask" },
	{ "# nothing\n\n", "t.net: no node records" },
	{ "include \"other\"\n", "t.net:1: 'include' is not supported" },
};

START_TEST(t_errors)
{
	struct fabric f;

	fabric_init(&f);
	int rc = topo_parse_string(&f, bad[_i].text, "t.net", err,
				   sizeof(err));
	ck_assert_int_eq(rc, -1);
	ck_assert_msg(strstr(err, bad[_i].msg) != NULL,
		      "case %d: got \"%s\", want \"%s\"", _i, err, bad[_i].msg);
	ck_assert_uint_eq(f.n_nodes, 0);
	fabric_free(&f);
}
END_TEST

/* A failed parse leaves the previous fabric in place. */
START_TEST(t_error_keeps_fabric)
{
	struct fabric f;

	parse_ok(&f, NET_SMALL);
	ck_assert_int_eq(topo_parse_string(&f, "Switch 4 \"A\"\n[9] \"A\"[1]\n",
					   "x", err, sizeof(err)), -1);
	ck_assert_uint_eq(f.n_nodes, 4);
	ck_assert_uint_eq(fabric_find_node(&f, 0x2c90000000001ULL),
			  node_by_desc(&f, "S1"));
	fabric_free(&f);
}
END_TEST

static void assert_same_fabric(const struct fabric *a, const struct fabric *b)
{
	ck_assert_uint_eq(a->n_nodes, b->n_nodes);
	ck_assert_uint_eq(a->n_ports, b->n_ports);
	ck_assert_uint_eq(a->lmc, b->lmc);
	for (uint32_t i = 0; i < a->n_nodes; i++) {
		const struct fab_node *x = &a->nodes[i];
		uint32_t j = fabric_find_node(b, x->guid);
		ck_assert_msg(j != FAB_NONE, "node %s lost", x->desc);
		const struct fab_node *y = &b->nodes[j];
		ck_assert_str_eq(x->desc, y->desc);
		ck_assert_uint_eq(x->type, y->type);
		ck_assert_uint_eq(x->nports, y->nports);
		ck_assert_uint_eq(x->sys_guid, y->sys_guid);
		ck_assert_uint_eq(x->vendor_id, y->vendor_id);
		ck_assert_uint_eq(x->device_id, y->device_id);
		for (unsigned k = 0; k <= x->nports; k++) {
			const struct fab_port *p = fabric_portp(a, i, k);
			const struct fab_port *q = fabric_portp(b, j, k);
			ck_assert_uint_eq(p->flags, q->flags);
			ck_assert_uint_eq(p->guid, q->guid);
			ck_assert_uint_eq(p->lid, q->lid);
			ck_assert_uint_eq(p->lmc, q->lmc);
			ck_assert_uint_eq(p->state, q->state);
			ck_assert_uint_eq(p->phys_state, q->phys_state);
			ck_assert_uint_eq(p->width_active, q->width_active);
			ck_assert_uint_eq(p->speed_active, q->speed_active);
			ck_assert_uint_eq(p->mtu_cap, q->mtu_cap);
			ck_assert_uint_eq(p->vl_cap, q->vl_cap);
			ck_assert_uint_eq(p->remote == FAB_NONE,
					  q->remote == FAB_NONE);
			if (p->remote == FAB_NONE)
				continue;
			const struct fab_port *pr = &a->ports[p->remote];
			const struct fab_port *qr = &b->ports[q->remote];
			ck_assert_uint_eq(a->nodes[pr->node].guid,
					  b->nodes[qr->node].guid);
			ck_assert_uint_eq(pr->num, qr->num);
		}
	}
	ck_assert_uint_eq(a->nodes[a->sm_node].guid, b->nodes[b->sm_node].guid);
	ck_assert_uint_eq(a->sm_port, b->sm_port);
}

static char *dump_to_string(const struct fabric *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(dump_topology(f, m), 0);
	fclose(m);
	return buf;
}

START_TEST(t_roundtrip)
{
	struct fabric a, b;
	uint32_t lid = 1;

	parse_ok(&a, NET_SMALL);
	/* LIDs as an SM would give them, LMC 1 */
	a.lmc = 1;
	for (uint32_t i = 0; i < a.n_ports; i++)
		if (fabric_is_endport(&a, i)) {
			a.ports[i].lid = lid;
			a.ports[i].hw_lid = lid;
			if (a.nodes[a.ports[i].node].type != FAB_SWITCH)
				a.ports[i].lmc = 1;
			lid += 2;
		}
	a.nodes[node_by_desc(&a, "H1")].vendor_id = 0x2c9;
	a.nodes[node_by_desc(&a, "H1")].device_id = 0x1003;
	a.nodes[node_by_desc(&a, "S2")].sys_guid = 0x77;
	strcpy(a.nodes[node_by_desc(&a, "H2")].desc, "h2 HCA-1 # mlx4_0");
	fabric_portp(&a, node_by_desc(&a, "S1"), 3)->speed_active =
		TOPO_SPEED_EDR;
	fabric_portp(&a, node_by_desc(&a, "S2"), 3)->speed_active =
		TOPO_SPEED_EDR;

	char *text = dump_to_string(&a);
	ck_assert_ptr_nonnull(strstr(text, "\"h2 HCA-1 # mlx4_0\""));
	ck_assert_ptr_nonnull(strstr(text, "4xEDR"));
	ck_assert_ptr_nonnull(strstr(text, "vendid=0x2c9\ndevid=0x1003\n"));
	fabric_init(&b);
	ck_assert_msg(topo_parse_string(&b, text, "dump", err, sizeof(err)) == 0,
		      "%s\n%s", err, text);
	assert_same_fabric(&a, &b);

	/* and the dump of the re-read fabric is the same text */
	char *again = dump_to_string(&b);
	ck_assert_str_eq(text, again);
	free(text);
	free(again);
	fabric_free(&a);
	fabric_free(&b);
}
END_TEST

/* ibnetdiscover output re-dumped: identical but for the header comment. */
START_TEST(t_dump_matches_ibnetdiscover)
{
	struct fabric f;

	parse_ok(&f, IBND_SMALL);
	char *text = dump_to_string(&f);
	const char *body_want = strstr(IBND_SMALL, "\nvendid=");
	const char *body_got = strstr(text, "\nvendid=");
	ck_assert_ptr_nonnull(body_got);
	ck_assert_str_eq(body_got, body_want);
	ck_assert_ptr_nonnull(strstr(text, "# Initiated from node "
				     "0002c90000000100 port 0002c90000000101\n"));
	free(text);
	fabric_free(&f);
}
END_TEST

START_TEST(t_dump_lfts)
{
	struct fabric f;
	/* rows: S2 then S1, as the fabric holds them */
	static uint8_t lfts[2][6] = {
		{ LFT_DROP, 3, 3, 4, 0, 1 },
		{ LFT_DROP, 1, 0, 2, 4, 3 },
	};
	uint32_t sw_node[2], row_of_node[4];
	struct lft_tables t;

	parse_ok(&f, IBND_SMALL);
	uint32_t s1 = node_by_desc(&f, "S1"), s2 = node_by_desc(&f, "S2");
	ck_assert_uint_lt(s2, s1);
	for (int i = 0; i < 4; i++)
		row_of_node[i] = FAB_NONE;
	sw_node[0] = s2;
	sw_node[1] = s1;
	row_of_node[s2] = 0;
	row_of_node[s1] = 1;
	t.n_sw = 2;
	t.max_lid = 5;
	t.sw_node = sw_node;
	t.row_of_node = row_of_node;
	t.port = &lfts[0][0];
	/* directed routes from H1 port 1 */
	f.nodes[s1].dr_len = 1;
	f.nodes[s1].dr_path[1] = 1;
	f.nodes[s2].dr_len = 2;
	f.nodes[s2].dr_path[1] = 1;
	f.nodes[s2].dr_path[2] = 3;

	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(dump_lfts(&f, &t, m), 0);
	fclose(m);
	ck_assert_str_eq(buf, FTS_SMALL);
	free(buf);

	/* a dropped LID and a port beyond the switch are left out */
	lfts[1][3] = LFT_DROP;
	lfts[1][4] = 9;
	f.nodes[s1].dr_len = 0;
	buf = NULL;
	m = open_memstream(&buf, &len);
	ck_assert_int_eq(dump_lfts(&f, &t, m), 0);
	fclose(m);
	ck_assert_ptr_nonnull(strstr(buf, "of switch Lid 2 guid "
				     "0x0002c90000000001 (S1):\n"));
	ck_assert_ptr_nonnull(strstr(buf, "0x0002 000 \n0x0005 003 \n"
				     "3 valid lids dumped \n"));
	free(buf);
	fabric_free(&f);
}
END_TEST

START_TEST(t_load_file)
{
	char path[] = "/tmp/test_topo_XXXXXX";
	int fd = mkstemp(path);
	struct fabric f;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, NET_SMALL, strlen(NET_SMALL)),
			 (ssize_t)strlen(NET_SMALL));
	close(fd);
	fabric_init(&f);
	ck_assert_msg(topo_load(&f, path, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(f.n_nodes, 4);
	unlink(path);
	ck_assert_int_eq(topo_load(&f, path, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_ptr_nonnull(strstr(err, "No such file"));
	ck_assert_uint_eq(f.n_nodes, 4);
	fabric_free(&f);
}
END_TEST

static Suite *topo_suite(void)
{
	Suite *s = suite_create("topo");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, t_net_file);
	tcase_add_test(tc, t_guid_sequence);
	tcase_add_test(tc, t_order_independent);
	tcase_add_test(tc, t_ibnetdiscover);
	tcase_add_test(tc, t_speed_hints);
	tcase_add_test(tc, t_grouped);
	tcase_add_loop_test(tc, t_errors, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, t_error_keeps_fabric);
	tcase_add_test(tc, t_roundtrip);
	tcase_add_test(tc, t_dump_matches_ibnetdiscover);
	tcase_add_test(tc, t_dump_lfts);
	tcase_add_test(tc, t_load_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(topo_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
