/*
 * Extended LIDs (mad/xlid.h): the SM's codec (mad/xlid.c) and the
 * emulator's own (mad/emu/emu_xlid.c) read the golden vectors of ibsmd(8)
 * "EXTENDED LIDS" alike and as documented, both refuse the same corrupted
 * vectors, and on an emulated fabric a LID-routed MAD to a vLID reaches
 * its VF through secondary LFTs written with SMPs.  Run from the top
 * directory (it reads man/ibsmd.8).
 */
#include "emu_testlib.h"
#include "vswitch_testlib.h"

#include "mad/smp.h"
#include "mad/xlid.h"
#include "sm/discover/xlid_sm.h"

#define METHOD_GET 0x01
#define METHOD_SET 0x02

/* ---- the golden vectors, read from the manual ---- */

/* Vector name of man/ibsmd.8 (after '.\" golden name') into d; its length. */
static size_t golden(const char *name, uint8_t *d, size_t cap)
{
	FILE *fp = fopen("man/ibsmd.8", "r");
	char line[512], mark[96];
	size_t n = 0;
	int in = 0, found = 0;
	ck_assert_msg(fp != NULL, "man/ibsmd.8 (run from the top directory)");
	snprintf(mark, sizeof(mark), ".\\\" golden %s\n", name);
	while (fgets(line, sizeof(line), fp)) {
		if (!strcmp(line, mark)) {
			found = 1;
			continue;
		}
		if (!found)
			continue;
		if (!strncmp(line, ".Bd", 3)) {
			in = 1;
			continue;
		}
		if (!strncmp(line, ".Ed", 3))
			break;
		if (!in)
			continue;
		char *p = line, *end;
		for (unsigned long v; (v = strtoul(p, &end, 16)), end != p; p = end) {
			ck_assert_uint_lt(n, cap);
			ck_assert_uint_le(v, 0xff);
			d[n++] = (uint8_t)v;
		}
	}
	fclose(fp);
	ck_assert_msg(found && n, "no golden vector %s in man/ibsmd.8", name);
	return n;
}

/* Both decoders on one XLIDCap: the same verdict and, if good, the same fields. */
static int both_decode(const uint8_t *d, struct xlid_cap *c)
{
	struct emu_xcap x;
	char e1[160] = "", e2[160] = "";
	int a = xlid_cap_decode(d, c, e1, sizeof(e1));
	int b = emu_xlid_cap_decode(d, &x, e2, sizeof(e2));
	ck_assert_msg(a == b, "the SM's codec says %d (%s), the emulator's %d (%s)",
		      a, e1, b, e2);
	if (a < 0) {
		ck_assert_msg(e1[0] && e2[0], "a refusal without a reason");
		return -1;
	}
	ck_assert_int_eq(c->supported, x.supported);
	ck_assert_int_eq(c->enabled, x.enabled);
	ck_assert_uint_eq(c->lft_cap, x.lft_cap);
	ck_assert_uint_eq(c->lft_top, x.lft_top);
	ck_assert_uint_eq(c->default_port, x.default_port);
	ck_assert_uint_eq(c->port_vlid, x.port_vlid);
	return 0;
}

/* Both checks on one XLIDLFT block: the same verdict. */
static int both_check(uint32_t block, const uint8_t *d, unsigned nports,
		      uint32_t cap)
{
	char e1[160] = "", e2[160] = "";
	int a = xlid_lft_check(block, d, nports, cap, e1, sizeof(e1));
	int b = emu_xlid_lft_check(block, d, nports, cap, e2, sizeof(e2));
	ck_assert_msg(a == b, "block %u: the SM's codec says %d (%s), the emulator's %d (%s)",
		      block, a, e1, b, e2);
	if (a < 0)
		ck_assert_msg(e1[0] && e2[0], "a refusal without a reason");
	return a;
}

/* Re-seals a modified XLIDCap with a good CRC (both CRCs agree first). */
static void reseal(uint8_t *d)
{
	uint16_t c = xlid_crc16(d, 62);
	ck_assert_uint_eq(c, emu_xlid_crc(d, 62));
	d[62] = (uint8_t)(c >> 8);
	d[63] = (uint8_t)c;
}

START_TEST(crc_check_value)
{
	/* the catalogue check value of CRC-16/CCITT-FALSE */
	const uint8_t s[] = "123456789";
	ck_assert_uint_eq(xlid_crc16(s, 9), 0x29B1);
	ck_assert_uint_eq(emu_xlid_crc(s, 9), 0x29B1);
}
END_TEST

/* Decodes golden XLIDCap name with both codecs; both encoders give its bytes back. */
static void golden_cap(const char *name, struct xlid_cap *c)
{
	uint8_t d[64], re[64];
	struct emu_xcap x;

	ck_assert_uint_eq(golden(name, d, sizeof(d)), 64);
	ck_assert_int_eq(both_decode(d, c), 0);
	xlid_cap_encode(c, re);
	ck_assert_mem_eq(re, d, 64);
	ck_assert_int_eq(emu_xlid_cap_decode(d, &x, NULL, 0), 0);
	emu_xlid_cap_encode(&x, re);
	ck_assert_mem_eq(re, d, 64);
}

START_TEST(golden_caps)
{
	struct xlid_cap c;

	/* a switch of 1024 entries, Enabled, Top 128, DefaultPort 1 */
	golden_cap("xcap-switch", &c);
	ck_assert(c.supported && c.enabled);
	ck_assert_uint_eq(c.lft_cap, 1024);
	ck_assert_uint_eq(c.lft_top, 128);
	ck_assert_uint_eq(c.default_port, 1);
	ck_assert_uint_eq(c.port_vlid, 0);

	/* port 1 of a CA, Enabled, PortVLID 0x10005 */
	golden_cap("xcap-ca", &c);
	ck_assert(c.supported && c.enabled);
	ck_assert_uint_eq(c.lft_cap, 0);
	ck_assert_uint_eq(c.lft_top, 0);
	ck_assert_uint_eq(c.default_port, 0xff);
	ck_assert_uint_eq(c.port_vlid, 0x10005);
	ck_assert(xlid_is_vlid(c.port_vlid));
}
END_TEST

START_TEST(golden_lft)
{
	uint8_t d[64];

	ck_assert_uint_eq(golden("xlft-block2", d, sizeof(d)), 64);
	/* block 2 of an 8-port switch of 1024 entries: good for both */
	ck_assert_int_eq(both_check(2, d, 8, 1024), 0);
	for (int i = 0; i < 8; i++)
		ck_assert_uint_eq(d[i], (unsigned)i + 1);
	ck_assert_uint_eq(d[8], 0);
	for (int i = 9; i < 64; i++)
		ck_assert_uint_eq(d[i], 0xff);
	/* the same block on a switch of 128 entries (blocks 0, 1): refused */
	ck_assert_int_eq(both_check(2, d, 8, 128), -1);
	/* on a 7-port switch, port 8 is out of range */
	ck_assert_int_eq(both_check(2, d, 7, 1024), -1);
}
END_TEST

/* Both getters of a header (LRH or PathRecord) read DLID dlid and SLID slid. */
static void both_lids(void (*sm)(const uint8_t *, uint32_t *, uint32_t *),
		      void (*em)(const uint8_t *, uint32_t *, uint32_t *),
		      const uint8_t *b, uint32_t dlid, uint32_t slid)
{
	uint32_t d1, s1, d2, s2;
	sm(b, &d1, &s1);
	em(b, &d2, &s2);
	ck_assert_uint_eq(d1, d2);
	ck_assert_uint_eq(s1, s2);
	ck_assert_uint_eq(d1, dlid);
	ck_assert_uint_eq(s1, slid);
}

START_TEST(golden_lrh_pathrecord)
{
	uint8_t lrh[8], pr[64], re[64];

	ck_assert_uint_eq(golden("lrh", lrh, sizeof(lrh)), 8);
	both_lids(xlid_lrh_get, emu_xlid_lrh_get, lrh, 0x2ABCD, 0x10001);
	ck_assert_uint_eq(lrh[1] >> 4, 3);		/* SL untouched */
	ck_assert_uint_eq(lrh[1] & 3, 2);		/* LNH untouched */
	ck_assert_uint_eq((lrh[4] & 7) << 8 | lrh[5], 0x44);	/* PktLen */
	/* the SM's setter writes exactly those bits back */
	memcpy(re, lrh, 8);
	re[1] &= 0xf3;
	re[2] = re[3] = re[6] = re[7] = 0;
	re[4] &= 0x3f;
	xlid_lrh_set(re, 0x2ABCD, 0x10001);
	ck_assert_mem_eq(re, lrh, 8);

	ck_assert_uint_eq(golden("pathrecord", pr, sizeof(pr)), 64);
	both_lids(xlid_pr_get, emu_xlid_pr_get, pr, 0x10005, 0x30001);
	memcpy(re, pr, 64);
	memset(re + 40, 0, 4);
	re[58] = 0;
	xlid_pr_set(re, 0x10005, 0x30001);
	ck_assert_mem_eq(re, pr, 64);
	/* a pLID path leaves byte 58 at 0: today's record */
	xlid_pr_set(re, 0x21, 0x5);
	ck_assert_uint_eq(re[58], 0);
}
END_TEST

START_TEST(corrupted_caps)
{
	static const char *const names[] = { "xcap-switch", "xcap-ca" };
	uint8_t g[64], d[64];
	struct xlid_cap c;

	for (int v = 0; v < 2; v++) {
		golden(names[v], g, sizeof(g));
		/* every single flipped bit, CRC included */
		for (int bit = 0; bit < 64 * 8; bit++) {
			memcpy(d, g, 64);
			d[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			ck_assert_msg(both_decode(d, &c) == -1, "%s: bit %d flipped, accepted",
				      names[v], bit);
		}
		/* a bad version, with a good CRC */
		static const uint8_t vers[] = { 0, 2, 0x81, 0xff };
		for (size_t i = 0; i < sizeof(vers); i++) {
			memcpy(d, g, 64);
			d[0] = vers[i];
			reseal(d);
			ck_assert_int_eq(both_decode(d, &c), -1);
		}
		/* reserved flag bits and reserved bytes, with a good CRC */
		for (int b = 0; b < 6; b++) {
			memcpy(d, g, 64);
			d[1] |= (uint8_t)(1u << b);
			reseal(d);
			ck_assert_int_eq(both_decode(d, &c), -1);
		}
		static const int rsv[] = { 2, 3, 13, 14, 15, 20, 40, 61 };
		for (size_t i = 0; i < sizeof(rsv) / sizeof(rsv[0]); i++) {
			memcpy(d, g, 64);
			d[rsv[i]] = 0x01;
			reseal(d);
			ck_assert_msg(both_decode(d, &c) == -1, "%s: reserved byte %d accepted",
				      names[v], rsv[i]);
		}
	}
	/* field values out of range, each with a good CRC */
	struct xlid_cap bad[] = {
		{ 1, 1, 1000, 0, 1, 0 },		/* capacity not a multiple of 64 */
		{ 1, 1, 196672, 0, 1, 0 },		/* capacity above 196608 */
		{ 1, 1, 1024, 1088, 1, 0 },		/* Top above the capacity */
		{ 1, 1, 0, 0, 0xff, 0x5 },		/* PortVLID a pLID */
		{ 1, 1, 0, 0, 0xff, 0x40000 },	/* PortVLID above 0x3FFFF */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		xlid_cap_encode(&bad[i], d);
		ck_assert_msg(both_decode(d, &c) == -1, "bad XLIDCap %zu accepted", i);
	}
	/* the edges that are good */
	struct xlid_cap good[] = {
		{ 1, 0, 196608, 196608, 0xff, 0 },
		{ 0, 0, 0, 0, 0, 0x3FFFF },
		{ 1, 1, 64, 64, 36, 0x10000 },
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		xlid_cap_encode(&good[i], d);
		ck_assert_msg(both_decode(d, &c) == 0, "good XLIDCap %zu refused", i);
	}
}
END_TEST

START_TEST(corrupted_lft)
{
	uint8_t g[64], d[64];

	golden("xlft-block2", g, sizeof(g));
	/* bad block numbers: past the last, past the capacity */
	ck_assert_int_eq(both_check(3071, g, 8, 196608), 0);
	ck_assert_int_eq(both_check(3072, g, 8, 196608), -1);
	ck_assert_int_eq(both_check(0xffffffffu, g, 8, 196608), -1);
	ck_assert_int_eq(both_check(15, g, 8, 1024), 0);
	ck_assert_int_eq(both_check(16, g, 8, 1024), -1);
	ck_assert_int_eq(both_check(0, g, 8, 0), -1);
	/* a port out of range, anywhere in the block */
	for (int i = 0; i < 64; i++) {
		memcpy(d, g, 64);
		d[i] = 9;
		ck_assert_int_eq(both_check(2, d, 8, 1024), -1);
		d[i] = 0xfe;
		ck_assert_int_eq(both_check(2, d, 8, 1024), -1);
		d[i] = 0xff;
		ck_assert_int_eq(both_check(2, d, 8, 1024), 0);
	}
}
END_TEST

/* ---- the emulated fabric ---- */

/* What a raw client received last. */
struct rec {
	int got;
	uint8_t mad[MAD_SIZE];
	size_t len;
	struct mad_addr from;
};

static void rec_cb(void *arg, const uint8_t *mad, size_t len,
		   const struct mad_addr *from, int status)
{
	struct rec *r = arg;
	(void)status;
	r->got = 1;
	r->len = len;
	memcpy(r->mad, mad, len < MAD_SIZE ? len : MAD_SIZE);
	r->from = *from;
}

struct xnet {
	struct fabric topo;
	struct emu *e;
	struct event_base *base;
	char state[64];
	struct mad_transport t;	/* a client on H0, where the SM was */
	struct rec r;
};

static void xnet_up(struct xnet *x)
{
	char err[256] = "";
	memset(x, 0, sizeof(*x));
	emu_world_open(&x->topo, &x->e, &x->base, x->state, sizeof(x->state),
		       &(struct emu_world_opts){ .name = "xlid", .text = hv_text(),
						 .seed = 3 });
	struct oneshot os;
	struct sm *sm = emu_sm_new(x->state, 20);
	emu_sm_once(sm, &os);
	sm->cfg.n_vswitches = 1;
	snprintf(sm->cfg.vswitches[0], sizeof(sm->cfg.vswitches[0]), "V-*");
	emu_sm_start(sm, x->base, x->e);
	ck_assert_int_eq(event_base_dispatch(x->base), 0);
	ck_assert_int_eq(sm->exit_code, 0);
	sm_shutdown(sm);
	free(sm);
	ck_assert_uint_eq(emu_violations(x->e), 0);
	ck_assert_msg(emu_attach(x->e, x->base, 0x1001, &x->t, rec_cb, &x->r, err,
				 sizeof(err)) == 0, "%s", err);
	ck_assert_uint_gt(x->t.lid, 0);
}

static void xnet_down(struct xnet *x)
{
	x->t.close(x->t.ctx);
	emu_world_free(x->e, x->base, &x->topo, x->state);
}

/*
 * Sends mad from the H0 client (DR when path, else LID-routed to lid) and
 * waits for the answer: its status, or -1 when none came (lost).
 */
static int xsend(struct xnet *x, uint8_t *mad, uint32_t lid)
{
	struct mad_addr to = { .lid = lid };
	if (mad[1] == 0x81)
		smp_dr_address(&to);
	x->r.got = 0;
	ck_assert_int_eq(mad_transport_send(&x->t, mad, MAD_SIZE, &to), 0);
	if (!emu_run_until(x->base, &x->r.got, 300))
		return -1;
	memcpy(mad, x->r.mad, MAD_SIZE);
	return smp_status(mad);
}

static int smp_lid(struct xnet *x, int method, uint16_t attr, uint32_t mod,
		   uint32_t lid, uint8_t *data)
{
	uint8_t mad[MAD_SIZE];
	smp_init_lid(mad, method, attr, mod);
	memcpy(smp_data(mad), data, 64);
	int st = xsend(x, mad, lid);
	if (st >= 0)
		memcpy(data, smp_data(mad), 64);
	return st;
}

static int smp_dr(struct xnet *x, int method, uint16_t attr, uint32_t mod,
		  const uint8_t *path, int hops, uint8_t *data)
{
	uint8_t mad[MAD_SIZE];
	smp_init_dr(mad, method, attr, mod, path, hops);
	memcpy(smp_data(mad), data, 64);
	int st = xsend(x, mad, 0xffff);
	if (st >= 0)
		memcpy(data, smp_data(mad), 64);
	return st;
}

/* PortInfo of port `port` at the end of path: Get, state to want, Set. */
static void port_to(struct xnet *x, const uint8_t *path, int hops, int port,
		    unsigned want)
{
	uint8_t d[64] = { 0 };
	ck_assert_int_eq(smp_dr(x, METHOD_GET, 0x15, (uint32_t)port, path, hops, d), 0);
	d[32] = (uint8_t)((d[32] & 0xf0) | want);	/* PortState */
	d[33] &= 0x0f;					/* PortPhysicalState: no change */
	if (!(d[36] >> 4))				/* NeighborMTU */
		d[36] = (uint8_t)((d[41] & 0x0f) << 4 | (d[36] & 0x0f));
	ck_assert_int_eq(smp_dr(x, METHOD_SET, 0x15, (uint32_t)port, path, hops, d), 0);
	ck_assert_uint_eq(d[32] & 0x0f, want);
}

/* XLIDCap Get (LID-routed), decoded by the SM's codec. */
static void cap_get(struct xnet *x, uint32_t lid, uint32_t mod, struct xlid_cap *c)
{
	uint8_t d[64] = { 0 };
	char err[160];
	ck_assert_int_eq(smp_lid(x, METHOD_GET, XLID_ATTR_CAP, mod, lid, d), 0);
	ck_assert_msg(xlid_cap_decode(d, c, err, sizeof(err)) == 0, "%s", err);
}

static int violations_with(const struct emu *e, uint32_t from, const char *what)
{
	int n = 0;
	for (uint32_t i = from; i < emu_violations(e); i++)
		if (strstr(emu_violation(e, i), what))
			n++;
	return n;
}

/* A GMP (class 0x0A, vendor) from one raw client to lid, QP 1. */
static void gmp_to(struct mad_transport *t, uint32_t lid, uint64_t tid)
{
	uint8_t mad[MAD_SIZE] = { 1, 0x0a, 1, 0x01 };
	struct mad_addr to = { .lid = lid, .qpn = 1, .qkey = 0x80010000u };
	for (int i = 0; i < 8; i++)
		mad[8 + i] = (uint8_t)(tid >> (56 - 8 * i));
	ck_assert_int_eq(mad_transport_send(t, mad, MAD_SIZE, &to), 0);
}

START_TEST(vlid_reaches_vf)
{
	struct xnet x;
	xnet_up(&x);
	const struct fabric *f = &x.topo;
	struct emu *e = x.e;
	/* VF F-1-2-3 of hypervisor V-1-2 (leaf L1 port 3), PF P-1-2 */
	const uint32_t vlid = 0x10043;		/* block 1, entry 3 */
	uint32_t vf = hv_find(f, "F-1-2-3"), vsw = hv_find(f, "V-1-2");
	uint32_t pf = hv_find(f, "P-1-2");
	uint64_t vf_port = f->ports[fabric_port(f, vf, 1)].guid;
	uint32_t pf_lid = (uint32_t)emu_port_lid(e, f->nodes[pf].guid, 1);
	uint8_t d[64], mad[MAD_SIZE];
	struct xlid_cap c;
	uint32_t v0;

	ck_assert_uint_gt(pf_lid, 0);
	ck_assert_int_eq(emu_port_lid(e, f->nodes[vf].guid, 1), 0);	/* an idle VF */

	/* Nothing capable yet: XLIDCap and XLIDLFT are unknown attributes (0x0c). */
	uint32_t l1_lid = (uint32_t)emu_port_lid(e, f->nodes[hv_find(f, "L1")].guid, 0);
	memset(d, 0, sizeof(d));
	ck_assert_int_eq(smp_lid(&x, METHOD_GET, XLID_ATTR_CAP, 0, l1_lid, d), 0x0c);
	ck_assert_int_eq(smp_lid(&x, METHOD_GET, XLID_ATTR_LFT, 0, l1_lid, d), 0x0c);
	ck_assert_int_eq(smp_lid(&x, METHOD_GET, XLID_ATTR_CAP, 1, pf_lid, d), 0x0c);
	/* and a vLID is lost at the first switch */
	v0 = emu_violations(e);
	smp_init_lid(mad, METHOD_GET, 0x11, 0);
	ck_assert_int_eq(xsend(&x, mad, vlid), -1);
	ck_assert_int_eq(violations_with(e, v0, "without the extension"), 1);

	ck_assert_int_eq(emu_xlid_all(e, 1024), 0);

	/* The VF's link: Armed, then Active, with PortInfo LID 0 (directed route). */
	static const uint8_t to_vsw[] = { 0, 1, 7, 2, 3 };	/* H0 L0 S0 L1 V-1-2 */
	static const uint8_t to_vf[] = { 0, 1, 7, 2, 3, 6 };
	ck_assert_int_eq(emu_port_state(e, f->nodes[vsw].guid, 6), PORT_INIT);
	port_to(&x, to_vsw, 4, 6, PORT_ARMED);
	port_to(&x, to_vf, 5, 1, PORT_ARMED);
	port_to(&x, to_vsw, 4, 6, PORT_ACTIVE);
	port_to(&x, to_vf, 5, 1, PORT_ACTIVE);
	ck_assert_int_eq(emu_port_state(e, vf_port, 0), PORT_ACTIVE);
	ck_assert_int_eq(emu_port_lid(e, vf_port, 0), 0);

	/* The VF's PortVLID, by the SM's encoder over directed route. */
	memset(d, 0, sizeof(d));
	ck_assert_int_eq(smp_dr(&x, METHOD_GET, XLID_ATTR_CAP, 1, to_vf, 5, d), 0);
	ck_assert_int_eq(xlid_cap_decode(d, &c, NULL, 0), 0);
	ck_assert(c.supported && !c.enabled && c.port_vlid == 0);
	c.enabled = 1;
	c.port_vlid = vlid;
	xlid_cap_encode(&c, d);
	ck_assert_int_eq(smp_dr(&x, METHOD_SET, XLID_ATTR_CAP, 1, to_vf, 5, d), 0);
	ck_assert_int_eq(xlid_cap_decode(d, &c, NULL, 0), 0);
	ck_assert_uint_eq(c.port_vlid, vlid);

	/* Capable but not Enabled switches still drop it. */
	v0 = emu_violations(e);
	smp_init_lid(mad, METHOD_GET, 0x11, 0);
	ck_assert_int_eq(xsend(&x, mad, vlid), -1);
	ck_assert_int_eq(violations_with(e, v0, "not Enabled"), 1);

	/*
	 * The secondary tables, as the SM would fill them: every physical
	 * switch copies its primary entry of the PF's pLID; the VF's vSwitch
	 * sends it to the VF's port; every vSwitch defaults to its uplink.
	 */
	uint8_t blk[64];
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct fab_node *nd = &f->nodes[n];
		if (nd->type != FAB_SWITCH)
			continue;
		uint32_t lid = (uint32_t)emu_port_lid(e, nd->guid, 0);
		int vs = !strncmp(nd->desc, "V-", 2);
		cap_get(&x, lid, 0, &c);
		ck_assert_uint_eq(c.lft_cap, 1024);
		c.enabled = 1;
		c.lft_top = vs && n != vsw ? 0 : 128;
		c.default_port = vs ? 1 : 0xff;
		xlid_cap_encode(&c, d);
		ck_assert_int_eq(smp_lid(&x, METHOD_SET, XLID_ATTR_CAP, 0, lid, d), 0);
		if (vs && n != vsw)
			continue;
		memset(blk, 0xff, sizeof(blk));
		blk[vlid % 64] = n == vsw ? 6 :
			(uint8_t)emu_lft_entry(e, nd->guid, pf_lid);
		ck_assert_int_eq(xlid_lft_check((vlid - XLID_VBASE) / 64, blk, nd->nports,
						c.lft_cap, NULL, 0), 0);
		memcpy(d, blk, 64);
		ck_assert_int_eq(smp_lid(&x, METHOD_SET, XLID_ATTR_LFT,
					 (vlid - XLID_VBASE) / 64, lid, d), 0);
		/* Get reads back what was stored */
		memset(d, 0, sizeof(d));
		ck_assert_int_eq(smp_lid(&x, METHOD_GET, XLID_ATTR_LFT,
					 (vlid - XLID_VBASE) / 64, lid, d), 0);
		ck_assert_mem_eq(d, blk, 64);
	}
	ck_assert_int_eq(emu_xlid_entry(e, f->nodes[vsw].guid, vlid), 6);
	ck_assert_int_eq(emu_xlid_blocks(e, f->nodes[vsw].guid), 1);
	ck_assert_int_eq(emu_xlid_blocks(e, f->nodes[hv_find(f, "S0")].guid), 1);
	ck_assert_int_eq(emu_xlid_blocks(e, f->nodes[hv_find(f, "V-0-0")].guid), 0);

	/* A LID-routed SMP to the vLID reaches the VF, which answers from it. */
	v0 = emu_violations(e);
	smp_init_lid(mad, METHOD_GET, 0x11, 0);
	ck_assert_int_eq(xsend(&x, mad, vlid), 0);
	ck_assert_uint_eq(x.r.from.lid, vlid);
	struct smp_nodeinfo ni;
	smp_decode_nodeinfo(smp_data(mad), &ni);
	ck_assert_uint_eq(ni.port_guid, vf_port);
	ck_assert_uint_eq(emu_violations(e), v0);

	/* A client on the VF sends from its vLID and is reached at it (GMPs). */
	struct mad_transport vt;
	struct rec vr = { 0 };
	char err[256] = "";
	ck_assert_msg(emu_attach(e, x.base, vf_port, &vt, rec_cb, &vr, err,
				 sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(vt.lid, vlid);
	gmp_to(&x.t, vlid, 0x77);
	ck_assert(emu_run_until(x.base, &vr.got, 300));
	ck_assert_uint_eq(vr.from.lid, x.t.lid);
	ck_assert_uint_eq(vr.mad[15], 0x77);
	x.r.got = 0;
	gmp_to(&vt, x.t.lid, 0x78);
	ck_assert(emu_run_until(x.base, &x.r.got, 300));
	ck_assert_uint_eq(x.r.from.lid, vlid);
	ck_assert_uint_eq(x.r.mad[15], 0x78);
	vt.close(vt.ctx);

	/* Another vLID has no entry: its first switch's DefaultPort drops it. */
	smp_init_lid(mad, METHOD_GET, 0x11, 0);
	ck_assert_int_eq(xsend(&x, mad, vlid + 1), -1);
	ck_assert_int_eq(violations_with(e, v0, "secondary LFT entry"), 1);

	/* Bad Sets are refused (0x1c) and logged; XLIDLFT on a CA is unknown. */
	v0 = emu_violations(e);
	uint32_t s0_lid = (uint32_t)emu_port_lid(e, f->nodes[hv_find(f, "S0")].guid, 0);
	cap_get(&x, s0_lid, 0, &c);
	xlid_cap_encode(&c, d);
	d[63] ^= 1;				/* CRC */
	ck_assert_int_eq(smp_lid(&x, METHOD_SET, XLID_ATTR_CAP, 0, s0_lid, d), 0x1c);
	c.default_port = 9;			/* an 8-port switch */
	xlid_cap_encode(&c, d);
	ck_assert_int_eq(smp_lid(&x, METHOD_SET, XLID_ATTR_CAP, 0, s0_lid, d), 0x1c);
	memset(d, 0xff, 64);
	d[5] = 9;
	ck_assert_int_eq(smp_lid(&x, METHOD_SET, XLID_ATTR_LFT, 1, s0_lid, d), 0x1c);
	memset(d, 0xff, 64);
	ck_assert_int_eq(smp_lid(&x, METHOD_SET, XLID_ATTR_LFT, 16, s0_lid, d), 0x1c);
	ck_assert_int_eq(violations_with(e, v0, "XLID"), 4);
	memset(d, 0, 64);
	ck_assert_int_eq(smp_lid(&x, METHOD_GET, XLID_ATTR_LFT, 0, pf_lid, d), 0x0c);
	/* S0 kept its block through the refused Sets */
	ck_assert_int_eq(emu_xlid_entry(e, f->nodes[hv_find(f, "S0")].guid, vlid),
			 emu_lft_entry(e, f->nodes[hv_find(f, "S0")].guid, pf_lid));

	/* A block set to all 0xff is forgotten: storage follows what is in use. */
	memset(d, 0xff, 64);
	ck_assert_int_eq(smp_lid(&x, METHOD_SET, XLID_ATTR_LFT, 1, s0_lid, d), 0);
	ck_assert_int_eq(emu_xlid_blocks(e, f->nodes[hv_find(f, "S0")].guid), 0);

	/* A device whose extension is taken away answers 0x0c again. */
	ck_assert_int_eq(emu_xlid_set(e, f->nodes[hv_find(f, "S0")].guid, EMU_XLID_OFF), 0);
	ck_assert_int_eq(smp_lid(&x, METHOD_GET, XLID_ATTR_CAP, 0, s0_lid, d), 0x0c);
	ck_assert_int_eq(emu_xlid_set(e, 0xdead0000, 1024), -1);
	ck_assert_int_eq(emu_xlid_set(e, f->nodes[hv_find(f, "S0")].guid, 100), -1);
	xnet_down(&x);
}
END_TEST

/*
 * The mode on a fabric without vSwitches: auto asks nothing, so no
 * device is said to lack the extension (no "legacy 16-bit mode: N
 * devices lack the extension" line); on asks, and the devices that did
 * not say yes lack it.
 */
START_TEST(nothing_asked_nothing_lacking)
{
	struct fabric f;
	char lacking[256] = "x", why[256];
	uint32_t k = 99;
	int decided = -1;
	fabric_init(&f);
	uint32_t sw = fabric_add_node(&f, FAB_SWITCH, 4, 0x100);
	uint32_t ca = fabric_add_node(&f, FAB_CA, 1, 0x200);
	fabric_link(&f, fabric_port(&f, sw, 1), fabric_port(&f, ca, 1));
	ck_assert_int_eq(xlid_probe_wanted(&f, TRI_AUTO), 0);
	ck_assert_int_eq(xlid_decide(&f, TRI_AUTO, &decided, lacking, sizeof(lacking), &k,
				     why, sizeof(why)), 0);
	ck_assert_uint_eq(k, 0);
	ck_assert_str_eq(lacking, "");
	ck_assert_int_eq(decided, 0);
	ck_assert_int_eq(f.xlid_mode, 0);
	decided = -1;
	ck_assert_int_eq(xlid_decide(&f, TRI_ON, &decided, lacking, sizeof(lacking), &k,
				     why, sizeof(why)), -1);
	ck_assert_uint_eq(k, 1);
	fabric_free(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("xlid");
	TCase *tc = tcase_create("codec");
	tcase_add_test(tc, crc_check_value);
	tcase_add_test(tc, golden_caps);
	tcase_add_test(tc, golden_lft);
	tcase_add_test(tc, golden_lrh_pathrecord);
	tcase_add_test(tc, corrupted_caps);
	tcase_add_test(tc, corrupted_lft);
	tcase_add_test(tc, nothing_asked_nothing_lacking);
	suite_add_tcase(s, tc);
	TCase *te = tcase_create("emu");
	tcase_set_timeout(te, 30);
	tcase_add_test(te, vlid_reaches_vf);
	suite_add_tcase(s, te);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
