/*
 * Unit tests for sm/model/part_resolve.c: the policy's partitions resolved against
 * a small hand-built fabric.  One leaf switch S0 (port 7 to a second
 * switch S1) with five CAs: H-0 (two ports), H-1, H-2, H-3 and SM-0, whose
 * port says IsSM.  The policy is filled in struct config directly (the
 * parser has its own tests); the unmatched-member warnings are read back
 * from stderr.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sm/model/config.h"
#include "sm/base/fabric.h"
#include "sm/base/log.h"
#include "sm/model/part_resolve.h"

#define G_H0	0x1000ULL	/* node GUIDs; port n's GUID is + n */
#define G_H1	0x1100ULL
#define G_H2	0x1200ULL
#define G_H3	0x1300ULL
#define G_SM	0x1400ULL

struct fab {
	struct fabric f;
	uint32_t s0, s1;
	uint32_t h0p1, h0p2, h1, h2, h3, sm;	/* end ports */
};

static uint32_t add_node(struct fabric *f, uint8_t type, uint8_t nports,
			 uint64_t guid, const char *desc)
{
	uint32_t n = fabric_add_node(f, type, nports, guid);
	ck_assert_uint_ne(n, FAB_NONE);
	snprintf(f->nodes[n].desc, sizeof(f->nodes[n].desc), "%s", desc);
	for (unsigned i = 0; i <= nports; i++) {
		struct fab_port *p = fabric_portp(f, n, i);
		if (type == FAB_SWITCH || i > 0)
			p->flags |= FPORT_PRESENT;
		p->guid = type == FAB_SWITCH ? guid : (i ? guid + i : 0);
	}
	return n;
}

/* A CA of nports ports, port i linked to S0 port first + i - 1. */
static uint32_t add_ca(struct fab *b, const char *desc, uint64_t guid,
		       uint8_t nports, unsigned first)
{
	uint32_t n = add_node(&b->f, FAB_CA, nports, guid, desc);
	for (unsigned i = 1; i <= nports; i++)
		fabric_link(&b->f, fabric_port(&b->f, n, i),
			    fabric_port(&b->f, b->s0, first + i - 1));
	return fabric_port(&b->f, n, 1);
}

static void build(struct fab *b)
{
	memset(b, 0, sizeof(*b));
	fabric_init(&b->f);
	b->s0 = add_node(&b->f, FAB_SWITCH, 8, 0x100, "L0-S0");
	b->s1 = add_node(&b->f, FAB_SWITCH, 8, 0x200, "L1-S0");
	fabric_link(&b->f, fabric_port(&b->f, b->s0, 7),
		    fabric_port(&b->f, b->s1, 1));
	b->h0p1 = add_ca(b, "H-0", G_H0, 2, 1);
	b->h0p2 = b->h0p1 + 1;
	b->h1 = add_ca(b, "H-1", G_H1, 1, 3);
	b->h2 = add_ca(b, "H-2", G_H2, 1, 4);
	b->h3 = add_ca(b, "H-3", G_H3, 1, 5);
	b->sm = add_ca(b, "SM-0", G_SM, 1, 6);
	b->f.ports[b->sm].flags |= FPORT_ISSM;
	b->f.sm_node = b->f.ports[b->sm].node;	/* our own port */
	b->f.sm_port = b->f.ports[b->sm].num;
}

static int add_part(struct config *c, const char *name, uint16_t pkey,
		    int policy)
{
	struct cfg_partition *p = &c->parts[c->n_parts];
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->pkey = pkey;
	p->policy = policy;
	p->sl = -1;
	p->first = c->n_members;
	return c->n_parts++;
}

/* A member of the last partition added. */
static void add_member(struct config *c, const char *node, uint64_t guid,
		       int port, int full)
{
	struct cfg_member *m = &c->members[c->n_members++];
	snprintf(m->node, sizeof(m->node), "%s", node);
	m->guid = guid;
	m->port = port;
	m->full = full;
	c->parts[c->n_parts - 1].n++;
}

/* Port pi's P_Key table must be exactly the n keys given. */
static void want_pkeys(const struct part_model *m, const struct fabric *f,
		       uint32_t pi, unsigned n, ...)
{
	uint16_t got[16];
	va_list ap;
	unsigned k = part_pkeys(m, f, pi, got, 16);

	ck_assert_msg(k == n, "port %u: %u P_Keys, want %u", pi, k, n);
	va_start(ap, n);
	for (unsigned i = 0; i < n; i++) {
		unsigned want = va_arg(ap, unsigned);
		ck_assert_msg(got[i] == want, "port %u entry %u: 0x%04x, want "
			      "0x%04x", pi, i, got[i], want);
	}
	va_end(ap);
}

/*
 * The tenants used below:
 *   tenantA 0x0001 def:   H-0 port 1 (node pattern + port), H-1 by port
 *                         GUID, SM-0 limited
 *   tenantB 0x0002 phy:   H-1 limited by node GUID, "H-[23]" limited,
 *                         H-3 full by port GUID (limited and full: full)
 *   tenantC 0x0003 vlane: "H-0" limited (both ports), two members that
 *                         match nothing
 */
static void tenants(struct config *c)
{
	config_defaults(c);
	c->default_full = 0;	/* default_partition.membership: limited */
	add_part(c, "tenantA", 0x0001, PART_DEF);
	add_member(c, "H-0", 0, 1, 1);
	add_member(c, "", G_H1 + 1, 0, 1);
	add_member(c, "SM-*", 0, 0, 0);
	add_part(c, "tenantB", 0x0002, PART_PHY);
	add_member(c, "", G_H1, 0, 0);
	add_member(c, "H-[23]", 0, 0, 0);
	add_member(c, "", G_H3 + 1, 0, 1);
	add_part(c, "tenantC", 0x0003, PART_VLANE);
	add_member(c, "H-0", 0, 0, 0);
	add_member(c, "nomatch-*", 0, 0, 1);
	add_member(c, "", 0xdead, 0, 1);
	add_member(c, "H-1", 0, 2, 1);	/* H-1 has one port */
}

/* The fabric resolved with tenants(), no weights learned, no warnings. */
static void setup(struct fab *b, struct config *c, struct part_model *m)
{
	build(b);
	tenants(c);
	ck_assert_int_eq(part_resolve(c, &b->f, NULL, 0, m), 0);
}

static void teardown(struct fab *b, struct part_model *m)
{
	part_model_free(m);
	fabric_free(&b->f);
}

/*
 * With tenants, a host port that only says IsSM stays a limited member
 * of the default partition (any host's root can say so); an SM that
 * showed our SM_Key (FPORT_SMPEER) is full: it may become master.
 */
START_TEST(test_issm_claim_not_full)
{
	struct fab b;
	struct config c;
	struct part_model m;

	build(&b);
	tenants(&c);
	b.f.ports[b.h2].flags |= FPORT_ISSM;
	b.f.ports[b.h3].flags |= FPORT_ISSM | FPORT_SMPEER;
	ck_assert_int_eq(part_resolve(&c, &b.f, NULL, 0, &m), 0);
	want_pkeys(&m, &b.f, b.h2, 2, 0x7fff, 0x0002);
	want_pkeys(&m, &b.f, b.h3, 2, 0xffff, 0x8002);
	want_pkeys(&m, &b.f, b.sm, 2, 0xffff, 0x0001);
	teardown(&b, &m);
}
END_TEST

/* No partitions: every end port a full member of the default, alone. */
START_TEST(test_no_partitions)
{
	struct fab b;
	struct config c;
	struct part_model m;

	build(&b);
	config_defaults(&c);
	ck_assert_int_eq(part_resolve(&c, &b.f, NULL, 0, &m), 0);
	ck_assert_uint_eq(m.n_parts, 1);
	ck_assert_str_eq(m.parts[0].name, "default");
	ck_assert_uint_eq(m.parts[0].pkey, PART_DEFAULT_PKEY);
	ck_assert_int_eq(m.tenants, 0);
	ck_assert_int_eq(m.weighted, 0);
	for (uint32_t pi = 0; pi < b.f.n_ports; pi++) {
		ck_assert_uint_eq(m.route_part[pi], PART_NONE);
		ck_assert_uint_eq(m.weight[pi], 1);
		if (fabric_is_endport(&b.f, pi))
			want_pkeys(&m, &b.f, pi, 1, 0xffff);
	}
	/* end ports all share the default; so does an enforcing switch port */
	ck_assert_uint_eq(part_shared(&m, b.h2, b.h3, PART_NONE), 0);
	ck_assert_uint_eq(part_shared(&m, b.h0p2, b.h1, 0x7fff), 0);
	ck_assert_uint_eq(part_shared(&m, b.h0p2, b.h1, 0x0001), PART_NONE);
	want_pkeys(&m, &b.f, fabric_port(&b.f, b.s0, 4), 1, 0xffff);
	teardown(&b, &m);
}
END_TEST

/*
 * With tenants: hosts limited (0x7fff) at index 0, switches and the SM's
 * port full; tenant entries in policy order with bit 15 for full members.
 */
START_TEST(test_tenant_tables)
{
	struct fab b;
	struct config c;
	struct part_model m;

	setup(&b, &c, &m);
	ck_assert_uint_eq(m.n_parts, 4);
	ck_assert_int_eq(m.tenants, 3);
	ck_assert_str_eq(m.parts[2].name, "tenantB");
	ck_assert_uint_eq(m.parts[3].policy, PART_VLANE);
	ck_assert_uint_eq(m.parts[1].ports, 3);	/* H-0 p1, H-1, SM-0 */
	ck_assert_uint_eq(m.parts[2].ports, 3);	/* H-1, H-2, H-3 */
	ck_assert_uint_eq(m.parts[3].ports, 2);	/* H-0 p1, p2 */

	want_pkeys(&m, &b.f, b.h0p1, 3, 0x7fff, 0x8001, 0x0003);
	want_pkeys(&m, &b.f, b.h0p2, 2, 0x7fff, 0x0003);	/* port 1 only in A */
	want_pkeys(&m, &b.f, b.h1, 3, 0x7fff, 0x8001, 0x0002);
	want_pkeys(&m, &b.f, b.h2, 2, 0x7fff, 0x0002);
	want_pkeys(&m, &b.f, b.h3, 2, 0x7fff, 0x8002);	/* limited + full */
	want_pkeys(&m, &b.f, b.sm, 2, 0xffff, 0x0001);	/* our own port: full default */
	want_pkeys(&m, &b.f, fabric_port(&b.f, b.s0, 0), 1, 0xffff);
	want_pkeys(&m, &b.f, fabric_port(&b.f, b.s1, 0), 1, 0xffff);
	/* a switch's external port holds its end port's table */
	want_pkeys(&m, &b.f, fabric_port(&b.f, b.s0, 1), 3, 0x7fff, 0x8001,
		   0x0003);
	want_pkeys(&m, &b.f, fabric_port(&b.f, b.s0, 3), 3, 0x7fff, 0x8001,
		   0x0002);
	want_pkeys(&m, &b.f, fabric_port(&b.f, b.s0, 6), 2, 0xffff, 0x0001);
	/* none between switches, on an unlinked port, on a CA's port 0 */
	want_pkeys(&m, &b.f, fabric_port(&b.f, b.s0, 7), 0);
	want_pkeys(&m, &b.f, fabric_port(&b.f, b.s0, 8), 0);
	want_pkeys(&m, &b.f, b.f.n_ports, 0);
	want_pkeys(&m, &b.f, b.h1 - 1, 0);
	/* a port added after the resolve is in no partition */
	uint32_t late = add_node(&b.f, FAB_CA, 1, 0x1500, "H-9");
	fabric_link(&b.f, fabric_port(&b.f, late, 1),
		    fabric_port(&b.f, b.s0, 8));
	want_pkeys(&m, &b.f, fabric_port(&b.f, late, 1), 0);
	want_pkeys(&m, &b.f, fabric_port(&b.f, b.s0, 8), 0);
	ck_assert_uint_eq(part_shared(&m, fabric_port(&b.f, late, 1), b.sm,
				      PART_NONE), PART_NONE);
	/* max cuts the table, default first */
	uint16_t one[1];
	ck_assert_uint_eq(part_pkeys(&m, &b.f, b.h1, one, 1), 1);
	ck_assert_uint_eq(one[0], 0x7fff);

	/* routing partition: the highest policy, then the first */
	ck_assert_uint_eq(m.route_part[b.h0p1], 3);	/* vlane over def */
	ck_assert_uint_eq(m.route_part[b.h0p2], 3);
	ck_assert_uint_eq(m.route_part[b.h1], 2);	/* phy over def */
	ck_assert_uint_eq(m.route_part[b.h2], 2);
	ck_assert_uint_eq(m.route_part[b.h3], 2);
	ck_assert_uint_eq(m.route_part[b.sm], 1);
	ck_assert_uint_eq(m.route_part[fabric_port(&b.f, b.s0, 0)], PART_NONE);
	ck_assert_uint_eq(m.route_part[fabric_port(&b.f, b.s0, 1)], PART_NONE);

	ck_assert_uint_eq(part_by_pkey(&m, 0x0002), 2);
	ck_assert_uint_eq(part_by_pkey(&m, 0x8002), 2);
	ck_assert_uint_eq(part_by_pkey(&m, 0x7fff), 0);
	ck_assert_uint_eq(part_by_pkey(&m, 0xffff), 0);
	ck_assert_uint_eq(part_by_pkey(&m, 0x0004), PART_NONE);
	teardown(&b, &m);
}
END_TEST

/* Both members, at least one full (IBA 10.9.3); tenants before default. */
START_TEST(test_shared)
{
	struct fab b;
	struct config c;
	struct part_model m;

	setup(&b, &c, &m);
	/* limited <-> limited: in B and in the default, yet nothing */
	ck_assert_uint_eq(part_shared(&m, b.h1, b.h2, PART_NONE), PART_NONE);
	ck_assert_uint_eq(part_shared(&m, b.h0p2, b.h0p1, PART_NONE), PART_NONE);
	/* full <-> limited, both ways */
	ck_assert_uint_eq(part_shared(&m, b.h2, b.h3, PART_NONE), 2);
	ck_assert_uint_eq(part_shared(&m, b.h3, b.h2, PART_NONE), 2);
	ck_assert_uint_eq(part_shared(&m, b.h1, b.h3, PART_NONE), 2);
	/* full <-> full in A */
	ck_assert_uint_eq(part_shared(&m, b.h0p1, b.h1, PART_NONE), 1);
	/* not in one partition at all */
	ck_assert_uint_eq(part_shared(&m, b.h0p1, b.h2, PART_NONE), PART_NONE);
	/* the SM's port shares the default with everyone ... */
	ck_assert_uint_eq(part_shared(&m, b.h2, b.sm, PART_NONE), 0);
	/* ... but a tenant it shares comes first, whichever side asks */
	ck_assert_uint_eq(part_shared(&m, b.sm, b.h0p1, PART_NONE), 1);
	ck_assert_uint_eq(part_shared(&m, b.h0p1, b.sm, PART_NONE), 1);
	/* a wanted P_Key: only that one (bit 15 ignored) */
	ck_assert_uint_eq(part_shared(&m, b.h0p1, b.sm, 0x7fff), 0);
	ck_assert_uint_eq(part_shared(&m, b.h0p1, b.sm, 0x8001), 1);
	ck_assert_uint_eq(part_shared(&m, b.h0p1, b.h1, 0x0002), PART_NONE);
	ck_assert_uint_eq(part_shared(&m, b.h0p1, b.h1, 0x7fff), PART_NONE);
	ck_assert_uint_eq(part_shared(&m, b.h0p1, b.h1, 0x0009), PART_NONE);
	/* switch port 0 is a full default member */
	ck_assert_uint_eq(part_shared(&m, fabric_port(&b.f, b.s1, 0), b.h2,
				      PART_NONE), 0);
	/* ports out of the model */
	ck_assert_uint_eq(part_shared(&m, b.h1, b.f.n_ports, PART_NONE),
			  PART_NONE);
	teardown(&b, &m);
}
END_TEST

/* Policy weights (first match), learned ones (by port GUID) override. */
START_TEST(test_weights)
{
	struct fab b;
	struct config c;
	struct part_model m;
	uint64_t lg[] = { G_H0 + 1, G_H2 + 1, 0x9999 };
	uint32_t lwt[] = { 5, 1000, 77 };
	struct part_weights lw = { 3, lg, lwt };
	static const struct { const char *node; uint64_t guid; uint32_t w; } pw[] = {
		{ "H-[01]", 0, 50 },
		{ "H-1", 0, 7 },		/* H-1 took 50 already */
		{ "", G_H3 + 1, 9 },		/* a port GUID */
		{ "", G_H2, 3 },		/* a node GUID */
	};

	build(&b);
	tenants(&c);
	for (size_t i = 0; i < sizeof(pw) / sizeof(pw[0]); i++) {
		struct cfg_weight *w = &c.weights[c.n_weights++];
		snprintf(w->node, sizeof(w->node), "%s", pw[i].node);
		w->guid = pw[i].guid;
		w->weight = pw[i].w;
	}
	ck_assert_int_eq(part_resolve(&c, &b.f, NULL, 0, &m), 0);
	ck_assert_int_eq(m.weighted, 1);
	ck_assert_uint_eq(m.weight[b.h0p1], 50);
	ck_assert_uint_eq(m.weight[b.h0p2], 50);
	ck_assert_uint_eq(m.weight[b.h1], 50);
	ck_assert_uint_eq(m.weight[b.h2], 3);
	ck_assert_uint_eq(m.weight[b.h3], 9);
	ck_assert_uint_eq(m.weight[b.sm], 1);
	ck_assert_uint_eq(m.weight[fabric_port(&b.f, b.s0, 0)], 1);
	part_model_free(&m);

	ck_assert_int_eq(part_resolve(&c, &b.f, &lw, 0, &m), 0);
	ck_assert_uint_eq(m.weight[b.h0p1], 5);	/* learned over 50 */
	ck_assert_uint_eq(m.weight[b.h0p2], 50);	/* learned for port 1 only */
	ck_assert_uint_eq(m.weight[b.h2], 1000);
	ck_assert_uint_eq(m.weight[b.h3], 9);
	part_model_free(&m);

	/* learned weights alone make the model weighted */
	c.n_weights = 0;
	ck_assert_int_eq(part_resolve(&c, &b.f, &lw, 0, &m), 0);
	ck_assert_int_eq(m.weighted, 1);
	ck_assert_uint_eq(m.weight[b.h1], 1);
	ck_assert_uint_eq(m.weight[b.h2], 1000);
	teardown(&b, &m);
}
END_TEST

static char err_path[64];
static int saved_fd = -1;

static void capture(void)
{
	fflush(stderr);
	snprintf(err_path, sizeof(err_path), "/tmp/test_partition.XXXXXX");
	int fd = mkstemp(err_path);
	ck_assert_int_ge(fd, 0);
	saved_fd = dup(2);
	dup2(fd, 2);
	close(fd);
}

/* What went to stderr since capture(), malloc'd; stderr restored. */
static char *captured(void)
{
	static char buf[8192];
	fflush(stderr);
	dup2(saved_fd, 2);
	close(saved_fd);
	FILE *fp = fopen(err_path, "r");
	ck_assert_ptr_nonnull(fp);
	size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	unlink(err_path);
	return strdup(buf);
}

/* A member that matches no port: a warning when asked, naming it. */
START_TEST(test_unmatched_warning)
{
	struct fab b;
	struct config c;
	struct part_model m;
	char *out;

	build(&b);
	tenants(&c);
	log_set_level(LOG_INFO);
	capture();
	ck_assert_int_eq(part_resolve(&c, &b.f, NULL, 1, &m), 0);
	out = captured();
	part_model_free(&m);
	ck_assert_msg(strstr(out, "partition tenantC: member 'nomatch-*' "
			     "matches no port"), "%s", out);
	ck_assert_msg(strstr(out, "partition tenantC: member "
			     "0x000000000000dead matches no port"), "%s", out);
	ck_assert_msg(strstr(out, "partition tenantC: member 'H-1' port 2 "
			     "matches no port"), "%s", out);
	ck_assert_msg(!strstr(out, "tenantA") && !strstr(out, "tenantB"),
		      "%s", out);
	free(out);

	capture();
	ck_assert_int_eq(part_resolve(&c, &b.f, NULL, 0, &m), 0);
	out = captured();
	ck_assert_str_eq(out, "");
	free(out);
	teardown(&b, &m);
}
END_TEST

/*
 * default_partition.membership: full (the default, as OpenSM's shipped
 * Default=0x7fff, ipoib : ALL=full;): with the tenants, every end port
 * holds 0xFFFF, so two hosts in no common tenant share the default;
 * limited: they share nothing.
 */
START_TEST(test_default_full)
{
	struct fab b;
	struct config c;
	struct part_model m;

	build(&b);
	tenants(&c);
	c.default_full = 1;
	ck_assert_int_eq(part_resolve(&c, &b.f, NULL, 0, &m), 0);
	want_pkeys(&m, &b.f, b.h2, 2, 0xffff, 0x0002);
	want_pkeys(&m, &b.f, b.h0p2, 2, 0xffff, 0x0003);
	want_pkeys(&m, &b.f, b.sm, 2, 0xffff, 0x0001);
	/* H-0 port 2 (C) and H-2 (B): no tenant in common, the default */
	ck_assert_uint_eq(part_shared(&m, b.h0p2, b.h2, PART_NONE), 0);
	ck_assert_uint_eq(part_shared(&m, b.h0p2, b.h2, 0xffff), 0);
	/* a tenant they share still comes first */
	ck_assert_uint_eq(part_shared(&m, b.h2, b.h3, PART_NONE), 2);
	part_model_free(&m);

	c.default_full = 0;
	ck_assert_int_eq(part_resolve(&c, &b.f, NULL, 0, &m), 0);
	want_pkeys(&m, &b.f, b.h2, 2, 0x7fff, 0x0002);
	ck_assert_uint_eq(part_shared(&m, b.h0p2, b.h2, PART_NONE), PART_NONE);
	/* the SM's own port stays full either way */
	want_pkeys(&m, &b.f, b.sm, 2, 0xffff, 0x0001);
	teardown(&b, &m);
}
END_TEST

/* A keyword member of the last partition added. */
static void add_keyword(struct config *c, int kind, int full)
{
	add_member(c, "", 0, 0, full);
	c->members[c->n_members - 1].kind = kind;
}

/*
 * OpenSM's keywords: ALL_CAS limited, SELF full (the SM's port: full
 * over ALL_CAS's limited), ALL_SWITCHES full (port 0), ALL_ROUTERS (a
 * router's port) limited; ALL full in a second partition.  A keyword
 * that matches nothing (ALL_ROUTERS without a router) is no warning.
 */
START_TEST(test_keywords)
{
	struct fab b;
	struct config c;
	struct part_model m;
	char *out;

	build(&b);
	config_defaults(&c);
	c.default_full = 0;
	add_part(&c, "kw", 0x0005, PART_DEF);
	add_keyword(&c, MEMBER_ALL_CAS, 0);
	add_keyword(&c, MEMBER_SELF, 1);
	add_keyword(&c, MEMBER_ALL_SWITCHES, 1);
	add_keyword(&c, MEMBER_ALL_ROUTERS, 0);
	log_set_level(LOG_INFO);
	capture();
	ck_assert_int_eq(part_resolve(&c, &b.f, NULL, 1, &m), 0);
	out = captured();
	ck_assert_str_eq(out, "");
	free(out);
	want_pkeys(&m, &b.f, b.h1, 2, 0x7fff, 0x0005);
	want_pkeys(&m, &b.f, b.h0p2, 2, 0x7fff, 0x0005);
	want_pkeys(&m, &b.f, b.sm, 2, 0xffff, 0x8005);
	want_pkeys(&m, &b.f, fabric_port(&b.f, b.s1, 0), 2, 0xffff, 0x8005);
	ck_assert_uint_eq(m.parts[1].ports, 8);	/* 6 CA ports, 2 switches */
	part_model_free(&m);

	/* a router, then ALL: every end port full in "all" */
	uint32_t r = add_node(&b.f, FAB_ROUTER, 1, 0x1500, "R-0");
	fabric_link(&b.f, fabric_port(&b.f, r, 1), fabric_port(&b.f, b.s0, 8));
	uint32_t rp = fabric_port(&b.f, r, 1);
	add_part(&c, "all", 0x0006, PART_DEF);
	add_keyword(&c, MEMBER_ALL, 1);
	ck_assert_int_eq(part_resolve(&c, &b.f, NULL, 0, &m), 0);
	want_pkeys(&m, &b.f, rp, 3, 0x7fff, 0x0005, 0x8006);
	want_pkeys(&m, &b.f, b.h3, 3, 0x7fff, 0x0005, 0x8006);
	want_pkeys(&m, &b.f, fabric_port(&b.f, b.s0, 0), 3, 0xffff, 0x8005, 0x8006);
	ck_assert_uint_eq(m.parts[2].ports, 9);
	/* limited in kw, full in all: all */
	ck_assert_uint_eq(part_shared(&m, b.h1, b.h2, PART_NONE), 2);
	teardown(&b, &m);
}
END_TEST

/* A port that did not answer is in no partition, the default included. */
START_TEST(test_absent_port)
{
	struct fab b;
	struct config c;
	struct part_model m;

	build(&b);
	tenants(&c);
	b.f.ports[b.h3].flags &= (uint8_t)~FPORT_PRESENT;
	ck_assert_int_eq(part_resolve(&c, &b.f, NULL, 0, &m), 0);
	want_pkeys(&m, &b.f, b.h3, 0);
	ck_assert_uint_eq(m.route_part[b.h3], PART_NONE);
	ck_assert_uint_eq(m.parts[2].ports, 2);
	/* H-2 now shares B with no full member */
	ck_assert_uint_eq(part_shared(&m, b.h2, b.h1, PART_NONE), PART_NONE);
	teardown(&b, &m);
}
END_TEST

static Suite *partition_suite(void)
{
	Suite *s = suite_create("partition");
	TCase *tc = tcase_create("partition");

	tcase_add_test(tc, test_no_partitions);
	tcase_add_test(tc, test_tenant_tables);
	tcase_add_test(tc, test_issm_claim_not_full);
	tcase_add_test(tc, test_shared);
	tcase_add_test(tc, test_weights);
	tcase_add_test(tc, test_unmatched_warning);
	tcase_add_test(tc, test_absent_port);
	tcase_add_test(tc, test_default_full);
	tcase_add_test(tc, test_keywords);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(partition_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
