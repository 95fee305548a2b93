/*
 * The fabric emulator (mad/emu/emu.c) driven directly with hand-built MADs.
 * The MADs are encoded and decoded here, from the spec's byte offsets,
 * with neither the SM's codec (mad/smp.c) nor the emulator's.
 *
 * Fabric: H1 (the SM's port) - S1 - S2 - H3, H2 on S1 port 2 and S2 port 2.
 */
#include <check.h>
#include <event2/event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/emu/emu.h"
#include "sm/base/fabric.h"
#include "sm/base/topo.h"

static const char NET[] =
	"switchguid=0x2c90000000001\n"
	"Switch\t4 \"S1\"\n"
	"[1]\t\"H1\"[1]\n"
	"[2]\t\"H2\"[1]\n"
	"[3]\t\"S2\"[3]\n"
	"\n"
	"switchguid=0x2c90000000002\n"
	"Switch\t4 \"S2\"\n"
	"[1]\t\"H3\"[1]\n"
	"[2]\t\"H2\"[2]\n"
	"[3]\t\"S1\"[3]\n"
	"\n"
	"caguid=0x2c90000000100\n"
	"Hca\t1 \"H1\"\n"
	"[1]\t\"S1\"[1]\n"
	"\n"
	"caguid=0x2c90000000200\n"
	"Hca\t2 \"H2\"\n"
	"[1]\t\"S1\"[2]\n"
	"[2]\t\"S2\"[2]\n"
	"\n"
	"caguid=0x2c90000000300\n"
	"Hca\t1 \"H3\"\n"
	"[1]\t\"S2\"[1]\n";

#define S1 0x2c90000000001ULL
#define S2 0x2c90000000002ULL
#define H1 0x2c90000000100ULL
#define H2 0x2c90000000200ULL
#define H3 0x2c90000000300ULL

/* Directed routes from H1 (path[1..hops]). */
static const uint8_t P_H1[] = { 0 };
static const uint8_t P_S1[] = { 0, 1 };
static const uint8_t P_S2[] = { 0, 1, 3 };
static const uint8_t P_H2[] = { 0, 1, 2 };
static const uint8_t P_H3[] = { 0, 1, 3, 1 };
#define HOPS(p) ((int)sizeof(p) - 1)

/* ---- our own MAD codec (spec 13.4.3, 14.2.1, 14.2.5) ---- */

static void w16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static void w32(uint8_t *p, uint32_t v)
{
	w16(p, v >> 16);
	w16(p + 2, v & 0xffff);
}
static void w64(uint8_t *p, uint64_t v)
{
	w32(p, (uint32_t)(v >> 32));
	w32(p + 4, (uint32_t)v);
}
static unsigned r16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}
static uint32_t r32(const uint8_t *p)
{
	return (uint32_t)r16(p) << 16 | r16(p + 2);
}
static uint64_t r64(const uint8_t *p)
{
	return (uint64_t)r32(p) << 32 | r32(p + 4);
}

enum { GET = 1, SET = 2, TRAP = 5, TRAP_REPRESS = 7, GETRESP = 0x81 };
enum { A_NOTICE = 2, A_NODEDESC = 0x10, A_NODEINFO = 0x11, A_SWINFO = 0x12,
       A_PORTINFO = 0x15, A_PKEY = 0x16, A_SL2VL = 0x17, A_VLARB = 0x18,
       A_LFT = 0x19, A_SMINFO = 0x20 };

static void mk_dr(uint8_t *m, int method, unsigned attr, uint32_t mod,
		  const uint8_t *path, int hops, uint64_t tid)
{
	memset(m, 0, MAD_SIZE);
	m[0] = 1;		/* BaseVersion */
	m[1] = 0x81;		/* directed-route SMP */
	m[2] = 1;		/* ClassVersion */
	m[3] = (uint8_t)method;
	m[7] = (uint8_t)hops;	/* HopCount; HopPointer 0 */
	w64(m + 8, tid);
	w16(m + 16, attr);
	w32(m + 20, mod);
	w16(m + 32, 0xffff);	/* DrSLID */
	w16(m + 34, 0xffff);	/* DrDLID */
	for (int i = 1; i <= hops; i++)
		m[128 + i] = path[i];
}

static void mk_lid(uint8_t *m, int method, unsigned attr, uint32_t mod,
		   uint64_t tid)
{
	memset(m, 0, MAD_SIZE);
	m[0] = 1;
	m[1] = 0x01;		/* LID-routed SMP */
	m[2] = 1;
	m[3] = (uint8_t)method;
	w64(m + 8, tid);
	w16(m + 16, attr);
	w32(m + 20, mod);
}

static unsigned dr_status(const uint8_t *m)
{
	return r16(m + 4) & 0x7fff;
}
static int dr_dbit(const uint8_t *m)
{
	return r16(m + 4) >> 15;
}

/* PortInfo (Table 155) fields the tests touch */
#define PI_LID(d) r16((d) + 16)
#define PI_STATE(d) ((d)[32] & 0x0f)
#define PI_PHYS(d) ((d)[33] >> 4)
#define PI_NMTU(d) ((d)[36] >> 4)
#define PI_VLCAP(d) ((d)[37] >> 4)
#define PI_MTUCAP(d) ((d)[41] & 0x0f)
#define PI_OPVLS(d) ((d)[43] >> 4)

/* Clears what a Set would change unless asked (as an SM must). */
static void pi_prepare_set(uint8_t *d)
{
	d[32] &= 0xf0;		/* PortState: no change */
	d[33] = 0;		/* PortPhysicalState, LinkDownDefaultState */
	d[29] = 0;		/* LinkWidthEnabled */
	d[35] &= 0xf0;		/* LinkSpeedEnabled */
	d[51] &= 0x7f;		/* ClientReregister */
}

/* ---- the harness: an emulator, an event base, a client on H1 ---- */

#define MAX_RX 1024

struct h {
	struct fabric f;
	struct emu *e;
	struct event_base *base;
	struct mad_transport t;
	int n_rx;
	uint8_t rx[MAX_RX][MAD_SIZE];
	struct mad_addr from[MAX_RX];
	uint64_t tid;
};

static void on_rx(void *arg, const uint8_t *mad, size_t len,
		  const struct mad_addr *from, int status)
{
	struct h *h = arg;
	ck_assert_int_eq(status, 0);
	ck_assert_uint_eq(len, MAD_SIZE);
	ck_assert_int_lt(h->n_rx, MAX_RX);
	memcpy(h->rx[h->n_rx], mad, MAD_SIZE);
	h->from[h->n_rx] = *from;
	h->n_rx++;
}

static struct h *h_new_attached(uint64_t port_guid)
{
	char err[256];
	struct h *h = calloc(1, sizeof(*h));
	ck_assert_ptr_nonnull(h);
	fabric_init(&h->f);
	ck_assert_msg(topo_parse_string(&h->f, NET, "net", err, sizeof(err)) == 0,
		      "%s", err);
	h->e = emu_new(&h->f, err, sizeof(err));
	ck_assert_msg(h->e != NULL, "%s", err);
	h->base = event_base_new();
	ck_assert_ptr_nonnull(h->base);
	ck_assert_msg(emu_attach(h->e, h->base, port_guid, &h->t, on_rx, h, err,
				 sizeof(err)) == 0, "%s", err);
	h->tid = 0x100;
	return h;
}

static struct h *h_new(void)
{
	return h_new_attached(0);
}

static void h_free(struct h *h)
{
	h->t.close(h->t.ctx);
	emu_free(h->e);
	event_base_free(h->base);
	fabric_free(&h->f);
	free(h);
}

/* Runs the loop until nothing is in flight (no latency set). */
static void h_run(struct h *h)
{
	for (int i = 0; i < 10000 && emu_pending(h->e); i++)
		event_base_loop(h->base, EVLOOP_NONBLOCK);
	ck_assert_uint_eq(emu_pending(h->e), 0);
}

static int h_find(const struct h *h, uint64_t tid)
{
	for (int i = 0; i < h->n_rx; i++)
		if (r64(h->rx[i] + 8) == tid && (h->rx[i][3] & 0x80))
			return i;
	return -1;
}

static uint64_t h_send(struct h *h, uint8_t *m, uint32_t dlid)
{
	struct mad_addr to = { .lid = dlid };
	ck_assert_int_eq(h->t.send(h->t.ctx, m, MAD_SIZE, &to), 0);
	return r64(m + 8);
}

/* A DR request; data (64 bytes) may be NULL.  Returns the TID. */
static uint64_t h_dr(struct h *h, int method, unsigned attr, uint32_t mod,
		     const uint8_t *path, int hops, const uint8_t *data)
{
	uint8_t m[MAD_SIZE];
	mk_dr(m, method, attr, mod, path, hops, ++h->tid);
	if (data)
		memcpy(m + 64, data, 64);
	return h_send(h, m, 0xffff);
}

/* A DR request answered: returns the answer (asserts it came). */
static const uint8_t *h_dr_answer(struct h *h, int method, unsigned attr,
				  uint32_t mod, const uint8_t *path, int hops,
				  const uint8_t *data)
{
	uint64_t tid = h_dr(h, method, attr, mod, path, hops, data);
	h_run(h);
	int i = h_find(h, tid);
	ck_assert_msg(i >= 0, "no answer to attribute 0x%x at hop %d", attr, hops);
	return h->rx[i];
}

static int h_dr_lost(struct h *h, int method, unsigned attr, uint32_t mod,
		     const uint8_t *path, int hops, const uint8_t *data)
{
	uint64_t tid = h_dr(h, method, attr, mod, path, hops, data);
	h_run(h);
	return h_find(h, tid) < 0;
}

/* Reads PortInfo, changes it with fn, writes it; returns the Set's status. */
static unsigned h_pi_set(struct h *h, const uint8_t *path, int hops, int port,
			 int lid, int smlid, int state, uint8_t *out)
{
	uint8_t d[64];
	memcpy(d, h_dr_answer(h, GET, A_PORTINFO, (uint32_t)port, path, hops, NULL) + 64, 64);
	pi_prepare_set(d);
	if (lid >= 0)
		w16(d + 16, (unsigned)lid);
	if (smlid >= 0)
		w16(d + 18, (unsigned)smlid);
	d[32] = (uint8_t)((d[32] & 0xf0) | state);
	const uint8_t *a = h_dr_answer(h, SET, A_PORTINFO, (uint32_t)port, path, hops, d);
	if (out)
		memcpy(out, a + 64, 64);
	return dr_status(a);
}

static unsigned h_lft_set(struct h *h, const uint8_t *path, int hops,
			  const uint8_t *entries, int n)
{
	uint8_t d[64];
	memset(d, 0xff, sizeof(d));
	memcpy(d, entries, (size_t)n);
	return dr_status(h_dr_answer(h, SET, A_LFT, 0, path, hops, d));
}

static unsigned h_top_set(struct h *h, const uint8_t *path, int hops, unsigned top)
{
	uint8_t d[64];
	memcpy(d, h_dr_answer(h, GET, A_SWINFO, 0, path, hops, NULL) + 64, 64);
	w16(d + 6, top);		/* LinearFDBTop */
	d[11] |= 0x04;			/* PortStateChange: write 1 to clear */
	return dr_status(h_dr_answer(h, SET, A_SWINFO, 0, path, hops, d));
}

/*
 * LIDs H1=1 S1=2 S2=3 H2=4 (port 1) H3=5, SM LID 1, LFTs for all of them;
 * with activate, every link on the H1-S1-S2-H3 line and H2 port 1 Active.
 */
static void bring_up(struct h *h, unsigned top, int activate)
{
	ck_assert_uint_eq(h_pi_set(h, P_H1, 0, 1, 1, 1, 0, NULL), 0);
	ck_assert_uint_eq(h_pi_set(h, P_S1, 1, 0, 2, 1, 0, NULL), 0);
	ck_assert_uint_eq(h_pi_set(h, P_S2, 2, 0, 3, 1, 0, NULL), 0);
	ck_assert_uint_eq(h_pi_set(h, P_H2, 2, 1, 4, 1, 0, NULL), 0);
	ck_assert_uint_eq(h_pi_set(h, P_H3, 3, 1, 5, 1, 0, NULL), 0);
	static const uint8_t lft1[] = { 0xff, 1, 0, 3, 2, 3 };
	static const uint8_t lft2[] = { 0xff, 3, 3, 0, 3, 1 };
	ck_assert_uint_eq(h_lft_set(h, P_S1, 1, lft1, 6), 0);
	ck_assert_uint_eq(h_lft_set(h, P_S2, 2, lft2, 6), 0);
	ck_assert_uint_eq(h_top_set(h, P_S1, 1, top), 0);
	ck_assert_uint_eq(h_top_set(h, P_S2, 2, top), 0);
	if (!activate)
		return;
	static const struct { const uint8_t *path; int hops, port; } links[] = {
		{ P_H1, 0, 1 }, { P_S1, 1, 1 }, { P_S1, 1, 2 }, { P_S1, 1, 3 },
		{ P_S2, 2, 3 }, { P_S2, 2, 1 }, { P_H2, 2, 1 }, { P_H3, 3, 1 },
	};
	for (int st = 3; st <= 4; st++)
		for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
			ck_assert_uint_eq(h_pi_set(h, links[i].path, links[i].hops,
						   links[i].port, -1, -1, st, NULL), 0);
}

/* A LID-routed SMP Get; returns the answer's index or -1. */
static int h_lid_get(struct h *h, unsigned attr, uint32_t mod, uint32_t dlid)
{
	uint8_t m[MAD_SIZE];
	mk_lid(m, GET, attr, mod, ++h->tid);
	uint64_t tid = h_send(h, m, dlid);
	h_run(h);
	return h_find(h, tid);
}

/* ---- tests ---- */

START_TEST(t_dr_nodeinfo)
{
	struct h *h = h_new();
	ck_assert_uint_eq(h->t.port_guid, H1 + 1);
	ck_assert_int_eq(h->t.port_num, 1);
	ck_assert_int_eq(h->t.port_state, 2);

	/* hop 0: our own CA */
	const uint8_t *a = h_dr_answer(h, GET, A_NODEINFO, 0, P_H1, 0, NULL);
	ck_assert_int_eq(a[3], GETRESP);
	ck_assert_int_eq(dr_dbit(a), 1);
	ck_assert_uint_eq(dr_status(a), 0);
	ck_assert_int_eq(a[6], 0);			/* hop pointer back to 0 */
	ck_assert_int_eq(a[64 + 2], 1);			/* NodeType CA */
	ck_assert_int_eq(a[64 + 3], 1);			/* NumPorts */
	ck_assert_uint_eq(r64(a + 64 + 12), H1);	/* NodeGUID */
	ck_assert_uint_eq(r64(a + 64 + 20), H1 + 1);	/* PortGUID */
	ck_assert_int_eq(a[64 + 36], 1);		/* LocalPortNum */

	/* hop 1: S1, entered by its port 1 */
	a = h_dr_answer(h, GET, A_NODEINFO, 0, P_S1, 1, NULL);
	ck_assert_int_eq(a[64 + 2], 2);
	ck_assert_int_eq(a[64 + 3], 4);
	ck_assert_uint_eq(r64(a + 64 + 12), S1);
	ck_assert_uint_eq(r64(a + 64 + 20), S1);	/* port 0's GUID */
	ck_assert_int_eq(a[64 + 36], 1);
	ck_assert_int_eq(a[192 + 1], 1);		/* return path */
	ck_assert_int_eq(a[6], 0);

	/* hop 2: S2 by its port 3, and H2 by its port 1 */
	a = h_dr_answer(h, GET, A_NODEINFO, 0, P_S2, 2, NULL);
	ck_assert_uint_eq(r64(a + 64 + 12), S2);
	ck_assert_int_eq(a[64 + 36], 3);
	ck_assert_int_eq(a[192 + 1], 1);
	ck_assert_int_eq(a[192 + 2], 3);
	a = h_dr_answer(h, GET, A_NODEINFO, 0, P_H2, 2, NULL);
	ck_assert_uint_eq(r64(a + 64 + 12), H2);
	ck_assert_uint_eq(r64(a + 64 + 20), H2 + 1);
	ck_assert_int_eq(a[64 + 36], 1);
	ck_assert_uint_eq(r16(a + 64 + 28), 64);	/* PartitionCap */

	/* H2 again, by its port 2 through S2 */
	static const uint8_t p_h2b[] = { 0, 1, 3, 2 };
	a = h_dr_answer(h, GET, A_NODEINFO, 0, p_h2b, 3, NULL);
	ck_assert_uint_eq(r64(a + 64 + 20), H2 + 2);
	ck_assert_int_eq(a[64 + 36], 2);

	a = h_dr_answer(h, GET, A_NODEDESC, 0, P_S2, 2, NULL);
	ck_assert_str_eq((const char *)a + 64, "S2");
	ck_assert_uint_eq(emu_violations(h->e), 0);

	/* through a CA: no SMI forwards it, and only a broken SM asks */
	static const uint8_t p_via_ca[] = { 0, 1, 2, 2 };
	ck_assert(h_dr_lost(h, GET, A_NODEINFO, 0, p_via_ca, 3, NULL));
	ck_assert_uint_eq(emu_violations(h->e), 1);
	/* to a port that has no cable: lost, not a violation */
	static const uint8_t p_nowhere[] = { 0, 1, 4 };
	ck_assert(h_dr_lost(h, GET, A_NODEINFO, 0, p_nowhere, 2, NULL));
	ck_assert_uint_eq(emu_violations(h->e), 1);
	/* unknown attribute: answered with "method/attribute not supported" */
	a = h_dr_answer(h, GET, 0xff42, 0, P_S1, 1, NULL);
	ck_assert_uint_eq(dr_status(a), 0x0c);
	h_free(h);
}
END_TEST

START_TEST(t_dr_from_wrong_port)
{
	/* an SM on H2 port 1 cannot send a DR SMP out of port 2 (C14-9:1) */
	struct h *h = h_new_attached(H2 + 1);
	static const uint8_t p[] = { 0, 2 };
	ck_assert(h_dr_lost(h, GET, A_NODEINFO, 0, p, 1, NULL));
	ck_assert_uint_eq(emu_violations(h->e), 1);
	ck_assert_ptr_nonnull(strstr(emu_violation(h->e, 0), "C14-9:1"));
	static const uint8_t q[] = { 0, 1 };
	const uint8_t *a = h_dr_answer(h, GET, A_NODEINFO, 0, q, 1, NULL);
	ck_assert_uint_eq(r64(a + 64 + 12), S1);
	ck_assert_int_eq(a[64 + 36], 2);
	h_free(h);
}
END_TEST

START_TEST(t_port_states)
{
	struct h *h = h_new();
	uint8_t d[64];
	const uint8_t *a = h_dr_answer(h, GET, A_PORTINFO, 1, P_S1, 1, NULL);
	ck_assert_int_eq(PI_STATE(a + 64), 2);		/* Init */
	ck_assert_int_eq(PI_PHYS(a + 64), 5);		/* LinkUp */
	ck_assert_int_eq(a[64 + 28], 1);		/* LocalPortNum */
	a = h_dr_answer(h, GET, A_PORTINFO, 4, P_S1, 1, NULL);
	ck_assert_int_eq(PI_STATE(a + 64), 1);		/* no cable: Down */
	ck_assert_int_eq(PI_PHYS(a + 64), 2);		/* Polling */
	ck_assert_uint_eq(r32(a + 64 + 20), 0);		/* external port: no CapabilityMask */
	a = h_dr_answer(h, GET, A_PORTINFO, 0, P_H1, 0, NULL);
	ck_assert_uint_eq(r32(a + 64 + 20) & 0x0a, 0x0a);	/* IsSM, IsTrapSupported */
	ck_assert_int_eq(a[64 + 28], 1);
	ck_assert_int_eq(a[64 + 31], 2);		/* LinkWidthActive 4x */
	ck_assert_int_eq(a[64 + 35] >> 4, 1);		/* LinkSpeedActive SDR */

	/* Init -> Armed */
	ck_assert_uint_eq(h_pi_set(h, P_S1, 1, 1, -1, -1, 3, d), 0);
	ck_assert_int_eq(PI_STATE(d), 3);
	ck_assert_int_eq(emu_port_state(h->e, S1, 1), 3);
	/* Armed -> Active while the neighbour (H1) is still Init: refused */
	ck_assert_uint_eq(h_pi_set(h, P_S1, 1, 1, -1, -1, 4, NULL), 0x1c);
	ck_assert_uint_eq(emu_violations(h->e), 1);
	ck_assert_int_eq(emu_port_state(h->e, S1, 1), 3);
	/* arm H1, then both go Active */
	ck_assert_uint_eq(h_pi_set(h, P_H1, 0, 1, -1, -1, 3, NULL), 0);
	ck_assert_uint_eq(h_pi_set(h, P_S1, 1, 1, -1, -1, 4, d), 0);
	ck_assert_int_eq(PI_STATE(d), 4);
	ck_assert_uint_eq(h_pi_set(h, P_H1, 0, 1, -1, -1, 4, NULL), 0);
	ck_assert_int_eq(emu_port_state(h->e, H1, 1), 4);
	ck_assert_uint_eq(emu_violations(h->e), 1);
	/* Active again (a retry whose answer was lost): refused, no violation */
	ck_assert_uint_eq(h_pi_set(h, P_H1, 0, 1, -1, -1, 4, NULL), 0x1c);
	ck_assert_uint_eq(emu_violations(h->e), 1);
	/* Init -> Active: refused and logged */
	ck_assert_uint_eq(h_pi_set(h, P_S1, 1, 2, -1, -1, 4, NULL), 0x1c);
	ck_assert_uint_eq(emu_violations(h->e), 2);
	ck_assert_ptr_nonnull(strstr(emu_violation(h->e, 1), "Init -> Active"));
	ck_assert_int_eq(emu_port_state(h->e, S1, 2), 2);
	/* Active -> Armed: refused and logged */
	ck_assert_uint_eq(h_pi_set(h, P_S1, 1, 1, -1, -1, 3, NULL), 0x1c);
	ck_assert_uint_eq(emu_violations(h->e), 3);
	/* Down on a port bounces its link: both ends come back Init */
	ck_assert_uint_eq(h_pi_set(h, P_S1, 1, 3, -1, -1, 1, d), 0);
	ck_assert_int_eq(PI_STATE(d), 2);
	ck_assert_int_eq(emu_port_state(h->e, S2, 3), 2);
	ck_assert_int_eq(emu_port_state_change(h->e, S1), 1);
	ck_assert_int_eq(emu_port_state_change(h->e, S2), 1);
	ck_assert_uint_eq(h_top_set(h, P_S1, 1, 0), 0);	/* clears PortStateChange */
	ck_assert_int_eq(emu_port_state_change(h->e, S1), 0);
	/* a CA takes PortInfo Set only for the port it came in by */
	ck_assert_uint_eq(h_pi_set(h, P_H2, 2, 2, 9, 1, 0, NULL), 0x1c);
	ck_assert_uint_eq(emu_violations(h->e), 4);
	ck_assert_int_eq(emu_port_lid(h->e, H2, 2), 0);
	ck_assert_uint_eq(h_pi_set(h, P_H2, 2, 0, 9, 1, 0, d), 0);	/* 0: arrival port */
	ck_assert_int_eq(PI_LID(d), 9);
	ck_assert_uint_eq(r16(d + 18), 1);		/* MasterSMLID */
	ck_assert_int_eq(d[28], 1);
	ck_assert_int_eq(emu_port_lid(h->e, H2, 1), 9);
	ck_assert_int_eq(emu_port_smlid(h->e, H2 + 1, 0), 1);
	ck_assert_uint_eq(emu_violations(h->e), 4);
	h_free(h);
}
END_TEST

START_TEST(t_impossible_values)
{
	struct h *h = h_new();
	uint8_t d[64];
	memcpy(d, h_dr_answer(h, GET, A_PORTINFO, 1, P_S1, 1, NULL) + 64, 64);
	ck_assert_int_eq(PI_VLCAP(d), 4);
	ck_assert_int_eq(PI_MTUCAP(d), 5);
	int opvls = PI_OPVLS(d);
	pi_prepare_set(d);
	d[43] = (uint8_t)((d[43] & 0x0f) | 5 << 4);	/* OperationalVLs VL0-14 > VLCap */
	const uint8_t *a = h_dr_answer(h, SET, A_PORTINFO, 1, P_S1, 1, d);
	ck_assert_uint_eq(dr_status(a), 0x1c);
	ck_assert_int_eq(PI_OPVLS(a + 64), opvls);
	ck_assert_int_eq(emu_port_oper_vls(h->e, S1, 1), opvls);
	ck_assert_uint_eq(emu_violations(h->e), 1);
	ck_assert_ptr_nonnull(strstr(emu_violation(h->e, 0), "OperationalVLs"));

	d[43] = (uint8_t)((d[43] & 0x0f) | 3 << 4);	/* fine: VL0-3 */
	d[36] = (uint8_t)((d[36] & 0x0f) | 6 << 4);	/* NeighborMTU above MTUCap */
	ck_assert_uint_eq(dr_status(h_dr_answer(h, SET, A_PORTINFO, 1, P_S1, 1, d)), 0x1c);
	ck_assert_uint_eq(emu_violations(h->e), 2);
	d[36] = (uint8_t)((d[36] & 0x0f) | 4 << 4);
	a = h_dr_answer(h, SET, A_PORTINFO, 1, P_S1, 1, d);
	ck_assert_uint_eq(dr_status(a), 0);
	ck_assert_int_eq(PI_OPVLS(a + 64), 3);
	ck_assert_int_eq(PI_NMTU(a + 64), 4);
	ck_assert_int_eq(emu_port_neighbor_mtu(h->e, S1, 1), 4);

	/* LIDs: multicast range refused; 0 is only fine while never set */
	ck_assert_uint_eq(h_pi_set(h, P_H1, 0, 1, 0xc001, 1, 0, NULL), 0x1c);
	ck_assert_uint_eq(emu_violations(h->e), 3);
	ck_assert_uint_eq(h_pi_set(h, P_H1, 0, 1, 0, 0, 0, NULL), 0);
	ck_assert_uint_eq(h_pi_set(h, P_H1, 0, 1, 7, 1, 0, NULL), 0);
	ck_assert_uint_eq(h_pi_set(h, P_H1, 0, 1, 0, 1, 0, NULL), 0x1c);
	ck_assert_uint_eq(emu_violations(h->e), 4);
	ck_assert_int_eq(emu_port_lid(h->e, H1, 1), 7);
	/* switch external ports ignore LID */
	ck_assert_uint_eq(h_pi_set(h, P_S1, 1, 2, 0xc001, -1, 0, d), 0);
	ck_assert_int_eq(PI_LID(d), 0);

	/* SwitchInfo: LinearFDBTop must stay below LinearFDBCap */
	a = h_dr_answer(h, GET, A_SWINFO, 0, P_S1, 1, NULL);
	ck_assert_uint_eq(r16(a + 64), 49152);		/* LinearFDBCap */
	ck_assert_uint_eq(r16(a + 64 + 6), 0);		/* LinearFDBTop */
	ck_assert_uint_eq(h_top_set(h, P_S1, 1, 49152), 0x1c);
	ck_assert_uint_eq(emu_violations(h->e), 5);
	ck_assert_uint_eq(h_top_set(h, P_S1, 1, 49151), 0);
	ck_assert_int_eq(emu_lft_top(h->e, S1), 49151);
	a = h_dr_answer(h, GET, A_SWINFO, 0, P_S1, 1, NULL);
	ck_assert_uint_eq(r16(a + 64 + 6), 49151);
	ck_assert_uint_eq(r16(a + 64 + 4), 1024);	/* MulticastFDBCap */
	ck_assert_int_eq(a[64 + 11] >> 3, 18);		/* LifeTimeValue */
	ck_assert_int_eq((a[64 + 11] >> 2) & 1, 0);	/* PortStateChange */

	/* LFT blocks: beyond the cap refused, entries read back */
	uint8_t blk[64];
	memset(blk, 0xff, sizeof(blk));
	ck_assert_uint_eq(dr_status(h_dr_answer(h, SET, A_LFT, 768, P_S1, 1, blk)), 0x1c);
	ck_assert_uint_eq(emu_violations(h->e), 6);
	blk[5] = 3;
	ck_assert_uint_eq(dr_status(h_dr_answer(h, SET, A_LFT, 767, P_S1, 1, blk)), 0);
	ck_assert_int_eq(emu_lft_entry(h->e, S1, 767 * 64 + 5), 3);
	ck_assert_int_eq(emu_lft_entry(h->e, S1, 5), 0xff);
	a = h_dr_answer(h, GET, A_LFT, 767, P_S1, 1, NULL);
	ck_assert_int_eq(a[64 + 5], 3);
	ck_assert_int_eq(a[64 + 6], 0xff);
	blk[6] = 9;					/* S1 has 4 ports */
	ck_assert_uint_eq(dr_status(h_dr_answer(h, SET, A_LFT, 1, P_S1, 1, blk)), 0x1c);
	ck_assert_uint_eq(emu_violations(h->e), 7);
	h_free(h);
}
END_TEST

START_TEST(t_tables)
{
	struct h *h = h_new();
	uint8_t d[64];
	/* P_KeyTable: a CA's (arrival port), and a switch port's (mod = port << 16) */
	const uint8_t *a = h_dr_answer(h, GET, A_PKEY, 0, P_H2, 2, NULL);
	ck_assert_uint_eq(r16(a + 64), 0xffff);
	memset(d, 0, sizeof(d));
	w16(d, 0xffff);
	w16(d + 2, 0x8001);
	ck_assert_uint_eq(dr_status(h_dr_answer(h, SET, A_PKEY, 0, P_H2, 2, d)), 0);
	ck_assert_int_eq(emu_port_pkey(h->e, H2, 1, 1), 0x8001);
	ck_assert_int_eq(emu_port_pkey(h->e, H2, 2, 1), 0);
	w16(d + 2, 0x7fff);
	ck_assert_uint_eq(dr_status(h_dr_answer(h, SET, A_PKEY, 3u << 16, P_S1, 1, d)), 0);
	ck_assert_int_eq(emu_port_pkey(h->e, S1, 3, 1), 0x7fff);
	ck_assert_int_eq(emu_port_pkey(h->e, S1, 0, 1), 0);
	ck_assert_uint_eq(dr_status(h_dr_answer(h, SET, A_PKEY, 5u << 16, P_S1, 1, d)), 0x1c);
	ck_assert_uint_eq(dr_status(h_dr_answer(h, SET, A_PKEY, 2, P_H2, 2, d)), 0x1c);
	ck_assert_uint_eq(emu_violations(h->e), 2);

	/* SL2VL per (in, out) on a switch */
	memset(d, 0, sizeof(d));
	d[0] = 0x12;
	d[7] = 0x7e;
	ck_assert_uint_eq(dr_status(h_dr_answer(h, SET, A_SL2VL, 1 << 8 | 3, P_S1, 1, d)), 0);
	a = h_dr_answer(h, GET, A_SL2VL, 1 << 8 | 3, P_S1, 1, NULL);
	ck_assert_int_eq(a[64], 0x12);
	ck_assert_int_eq(a[64 + 7], 0x7e);
	/* a pair never set holds the identity SL i -> VL i, as under ibsim */
	a = h_dr_answer(h, GET, A_SL2VL, 3 << 8 | 1, P_S1, 1, NULL);
	ck_assert_int_eq(a[64], 0x01);
	ck_assert_int_eq(a[64 + 7], 0xef);
	ck_assert_uint_eq(dr_status(h_dr_answer(h, GET, A_SL2VL, 5 << 8 | 1, P_S1, 1, NULL)), 0x1c);

	/* VLArb: caps of 8 entries, so only blocks 1 and 3 exist */
	memset(d, 0, sizeof(d));
	d[0] = 0x01;
	d[1] = 0x40;
	ck_assert_uint_eq(dr_status(h_dr_answer(h, SET, A_VLARB, 1u << 16 | 2, P_S1, 1, d)), 0);
	a = h_dr_answer(h, GET, A_VLARB, 1u << 16 | 2, P_S1, 1, NULL);
	ck_assert_int_eq(a[64 + 1], 0x40);
	ck_assert_uint_eq(dr_status(h_dr_answer(h, SET, A_VLARB, 2u << 16 | 2, P_S1, 1, d)), 0x1c);
	ck_assert_uint_eq(emu_violations(h->e), 3);
	h_free(h);
}
END_TEST

START_TEST(t_lid_routing)
{
	struct h *h = h_new();
	bring_up(h, 2, 0);
	ck_assert_uint_eq(emu_violations(h->e), 0);
	ck_assert_int_eq(emu_lft_entry(h->e, S1, 3), 3);

	/* LFTs set but no port Active: lost, and an SM bug */
	ck_assert_int_lt(h_lid_get(h, A_NODEINFO, 0, 3), 0);
	ck_assert_uint_eq(emu_violations(h->e), 1);
	ck_assert_ptr_nonnull(strstr(emu_violation(h->e, 0), "not Active"));

	static const struct { const uint8_t *path; int hops, port; } links[] = {
		{ P_H1, 0, 1 }, { P_S1, 1, 1 }, { P_S1, 1, 3 }, { P_S2, 2, 3 },
	};
	for (int st = 3; st <= 4; st++)
		for (size_t i = 0; i < 4; i++)
			ck_assert_uint_eq(h_pi_set(h, links[i].path, links[i].hops,
						   links[i].port, -1, -1, st, NULL), 0);
	/* every hop Active, but LID 3 is above S1's LinearFDBTop (2) */
	ck_assert_int_lt(h_lid_get(h, A_NODEINFO, 0, 3), 0);
	ck_assert_uint_eq(emu_violations(h->e), 2);
	ck_assert_ptr_nonnull(strstr(emu_violation(h->e, 1), "LinearFDBTop"));
	/* LID 2 (S1 itself) is fine */
	int i = h_lid_get(h, A_NODEINFO, 0, 2);
	ck_assert_int_ge(i, 0);
	ck_assert_uint_eq(r64(h->rx[i] + 64 + 12), S1);
	ck_assert_uint_eq(h->from[i].lid, 2);
	ck_assert_uint_eq(r16(h->rx[i] + 4), 0);	/* status, no D bit */

	ck_assert_uint_eq(h_top_set(h, P_S1, 1, 5), 0);
	ck_assert_uint_eq(h_top_set(h, P_S2, 2, 5), 0);
	i = h_lid_get(h, A_NODEINFO, 0, 3);
	ck_assert_int_ge(i, 0);
	ck_assert_int_eq(h->rx[i][3], GETRESP);
	ck_assert_uint_eq(r64(h->rx[i] + 64 + 12), S2);
	ck_assert_int_eq(h->rx[i][64 + 36], 3);		/* entered S2 by port 3 */
	ck_assert_uint_eq(h->from[i].lid, 3);
	i = h_lid_get(h, A_PORTINFO, 1, 3);
	ck_assert_int_ge(i, 0);
	ck_assert_int_eq(PI_STATE(h->rx[i] + 64), 2);

	/* H3 is behind S2 port 1, still Init: lost */
	ck_assert_int_lt(h_lid_get(h, A_NODEINFO, 0, 5), 0);
	ck_assert_uint_eq(emu_violations(h->e), 3);
	/* a LID nobody routes: S1's entry for 6 is 0xff */
	ck_assert_int_lt(h_lid_get(h, A_NODEINFO, 0, 6), 0);
	ck_assert_uint_eq(emu_violations(h->e), 4);
	/* a loop: S1 sends 5 to S2, S2 back to S1 */
	static const uint8_t loop2[] = { 0xff, 3, 3, 0, 3, 3 };
	ck_assert_uint_eq(h_lft_set(h, P_S2, 2, loop2, 6), 0);
	ck_assert_int_lt(h_lid_get(h, A_NODEINFO, 0, 5), 0);
	ck_assert_uint_eq(emu_violations(h->e), 5);
	ck_assert_ptr_nonnull(strstr(emu_violation(h->e, 4), "loop"));
	struct emu_counters c;
	emu_get_counters(h->e, &c);
	ck_assert_uint_eq(c.dropped_route, 5);
	ck_assert_uint_eq(c.dropped_fault, 0);
	h_free(h);
}
END_TEST

START_TEST(t_port_loss)
{
	struct h *h = h_new();
	ck_assert_int_eq(emu_set_port_loss(h->e, S1, 1, 100), 0);
	for (int k = 0; k < 20; k++) {
		ck_assert(h_dr_lost(h, GET, A_NODEINFO, 0, P_S1, 1, NULL));
		ck_assert(h_dr_lost(h, GET, A_NODEINFO, 0, P_S2, 2, NULL));
	}
	/* hop 0 does not cross the link */
	h_dr_answer(h, GET, A_NODEINFO, 0, P_H1, 0, NULL);
	struct emu_counters c;
	emu_get_counters(h->e, &c);
	ck_assert_uint_eq(c.dropped_fault, 40);
	ck_assert_uint_eq(c.received, 41);
	ck_assert_uint_eq(c.answered, 1);
	ck_assert_uint_eq(emu_violations(h->e), 0);
	/* the answers' way back: loss at H1's own port */
	ck_assert_int_eq(emu_set_port_loss(h->e, S1, 1, 0), 0);
	ck_assert_int_eq(emu_set_port_loss(h->e, H1 + 1, 0, 100), 0);
	ck_assert(h_dr_lost(h, GET, A_NODEINFO, 0, P_S1, 1, NULL));
	emu_get_counters(h->e, &c);
	ck_assert_uint_eq(c.answered, 2);
	ck_assert_uint_eq(c.dropped_fault, 41);
	ck_assert_int_eq(emu_set_port_loss(h->e, H1 + 1, 0, 0), 0);
	h_dr_answer(h, GET, A_NODEINFO, 0, P_S1, 1, NULL);
	h_free(h);
}
END_TEST

/* Sends n DR NodeInfo Gets to S2 and records which came back. */
static void lossy_run(uint64_t seed, double pct, int n, uint8_t *got)
{
	struct h *h = h_new();
	emu_set_seed(h->e, seed);
	emu_set_loss(h->e, pct);
	uint64_t first = h->tid + 1;
	for (int k = 0; k < n; k++)
		h_dr(h, GET, A_NODEINFO, 0, P_S2, 2, NULL);
	h_run(h);
	for (int k = 0; k < n; k++)
		got[k] = h_find(h, first + (uint64_t)k) >= 0;
	h_free(h);
}

START_TEST(t_seeded_loss)
{
	enum { N = 300 };
	uint8_t a[N], b[N], c[N];
	lossy_run(42, 30, N, a);
	lossy_run(42, 30, N, b);
	lossy_run(43, 30, N, c);
	ck_assert_mem_eq(a, b, N);
	ck_assert(memcmp(a, c, N) != 0);
	int ok = 0;
	for (int k = 0; k < N; k++)
		ok += a[k];
	/* two packets each at 30%: about half come back */
	ck_assert_int_gt(ok, N * 35 / 100);
	ck_assert_int_lt(ok, N * 65 / 100);
}
END_TEST

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

START_TEST(t_latency)
{
	struct h *h = h_new();
	emu_set_latency(h->e, 30000, 0);
	uint64_t t0 = mono_ms();
	uint64_t tid = h_dr(h, GET, A_NODEINFO, 0, P_S1, 1, NULL);
	for (int k = 0; k < 50; k++)
		event_base_loop(h->base, EVLOOP_NONBLOCK);
	ck_assert_int_lt(h_find(h, tid), 0);
	ck_assert_uint_eq(emu_pending(h->e), 1);
	while (h_find(h, tid) < 0 && mono_ms() - t0 < 5000)
		event_base_loop(h->base, EVLOOP_ONCE);
	ck_assert_int_ge(h_find(h, tid), 0);
	ck_assert_uint_ge(mono_ms() - t0, 60);	/* two packets of 30 ms */

	/* random latency reorders, and loses nothing */
	emu_set_latency(h->e, 0, 20000);
	enum { N = 40 };
	uint64_t first = h->tid + 1;
	for (int k = 0; k < N; k++)
		h_dr(h, GET, A_NODEINFO, 0, P_S2, 2, NULL);
	int before = h->n_rx;
	t0 = mono_ms();
	while (h->n_rx < before + N && mono_ms() - t0 < 5000)
		event_base_loop(h->base, EVLOOP_ONCE);
	ck_assert_int_eq(h->n_rx, before + N);
	int inversions = 0;
	for (int k = before + 1; k < h->n_rx; k++)
		inversions += r64(h->rx[k] + 8) < r64(h->rx[k - 1] + 8);
	ck_assert_int_gt(inversions, 0);
	for (int k = 0; k < N; k++)
		ck_assert_int_ge(h_find(h, first + (uint64_t)k), 0);
	h_free(h);
}
END_TEST

START_TEST(t_link_down_trap)
{
	struct h *h = h_new();
	/* no LIDs yet: the switch has nowhere to send its trap */
	ck_assert_int_eq(emu_link_down(h->e, S2, 2), 0);
	h_run(h);
	ck_assert_int_eq(h->n_rx, 0);
	ck_assert_int_eq(emu_port_state(h->e, S2, 2), 1);
	ck_assert_int_eq(emu_port_state(h->e, H2, 2), 1);
	ck_assert_int_eq(emu_port_phys_state(h->e, H2, 2), 2);
	ck_assert_int_eq(emu_port_state_change(h->e, S2), 1);
	ck_assert_int_eq(emu_link_up(h->e, S2, 2), 0);
	ck_assert_int_eq(emu_port_state(h->e, H2 + 2, 0), 2);

	bring_up(h, 5, 1);
	ck_assert_uint_eq(emu_violations(h->e), 0);
	ck_assert_int_eq(emu_port_state(h->e, H3, 1), 4);
	int n0 = h->n_rx;
	ck_assert_int_eq(emu_link_down(h->e, H3 + 1, 0), 0);
	ck_assert_int_eq(h->n_rx, n0);			/* never inside the call */
	h_run(h);
	ck_assert_int_eq(h->n_rx, n0 + 1);
	const uint8_t *m = h->rx[n0];
	ck_assert_int_eq(m[1], 0x01);
	ck_assert_int_eq(m[3], TRAP);
	ck_assert_uint_eq(r16(m + 16), A_NOTICE);
	ck_assert_int_eq(m[64] >> 7, 1);		/* IsGeneric */
	ck_assert_uint_eq(r16(m + 64 + 4), 128);	/* TrapNumber */
	ck_assert_uint_eq(r16(m + 64 + 6), 3);		/* IssuerLID: S2 */
	ck_assert_uint_eq(r16(m + 64 + 10), 3);		/* LIDADDR */
	ck_assert_uint_eq(h->from[n0].lid, 3);
	ck_assert_int_eq(emu_port_state(h->e, H3, 1), 1);
	ck_assert_int_eq(emu_port_state(h->e, S2, 1), 1);
	ck_assert_int_eq(emu_port_state_change(h->e, S2), 1);
	ck_assert_int_eq(emu_port_state_change(h->e, S1), 0);

	/* TrapRepress back to the switch, LID-routed */
	uint8_t rep[MAD_SIZE];
	memcpy(rep, m, MAD_SIZE);
	rep[3] = TRAP_REPRESS;
	h_send(h, rep, 3);
	h_run(h);
	struct emu_counters c;
	emu_get_counters(h->e, &c);
	ck_assert_uint_eq(c.trap_represses, 1);
	ck_assert_uint_eq(c.traps_sent, 1);		/* none before the LIDs */

	/* plugged back: Init at both ends, another trap */
	ck_assert_int_eq(emu_link_up(h->e, S2, 1), 0);
	h_run(h);
	ck_assert_int_eq(h->n_rx, n0 + 2);
	ck_assert_int_eq(h->rx[n0 + 1][3], TRAP);
	ck_assert_int_eq(emu_port_state(h->e, H3, 1), 2);
	ck_assert_int_eq(emu_port_phys_state(h->e, H3, 1), 5);
	ck_assert_uint_eq(emu_violations(h->e), 0);
	ck_assert_int_eq(emu_link_down(h->e, S1, 4), -1);	/* no cable */
	h_free(h);
}
END_TEST

START_TEST(t_dead)
{
	struct h *h = h_new();
	ck_assert_int_eq(emu_set_dead(h->e, S2, 0, 1), 0);
	ck_assert(h_dr_lost(h, GET, A_NODEINFO, 0, P_S2, 2, NULL));
	ck_assert(h_dr_lost(h, GET, A_NODEINFO, 0, P_H3, 3, NULL));	/* nor through it */
	h_dr_answer(h, GET, A_NODEINFO, 0, P_S1, 1, NULL);
	h_dr_answer(h, GET, A_NODEINFO, 0, P_H2, 2, NULL);
	ck_assert_int_eq(emu_set_dead(h->e, S2, 0, 0), 0);
	h_dr_answer(h, GET, A_NODEINFO, 0, P_S2, 2, NULL);
	/* one port of a CA */
	ck_assert_int_eq(emu_set_dead(h->e, H2 + 1, 0, 1), 0);
	ck_assert(h_dr_lost(h, GET, A_NODEINFO, 0, P_H2, 2, NULL));
	static const uint8_t p_h2b[] = { 0, 1, 3, 2 };
	h_dr_answer(h, GET, A_NODEINFO, 0, p_h2b, 3, NULL);
	ck_assert_uint_eq(emu_violations(h->e), 0);
	ck_assert_int_eq(emu_set_dead(h->e, 0x1234, 0, 1), -1);
	h_free(h);
}
END_TEST

struct vcall {
	int calls;
	uint32_t node;
	uint8_t in_port, method;
	uint32_t mod;
	uint8_t stored[64];
};

static int vendor_attr(void *ctx, struct emu *e, struct emu_smp *s)
{
	struct vcall *v = ctx;
	(void)e;
	v->calls++;
	v->node = s->node;
	v->in_port = s->in_port;
	v->method = s->method;
	v->mod = s->attr_mod;
	if (s->attr_mod > 1)
		return 0x1c;
	if (s->method == SET)
		memcpy(v->stored, s->data, 64);
	memcpy(s->data, v->stored, 64);
	return 0;
}

START_TEST(t_vendor_attr)
{
	struct h *h = h_new();
	struct vcall v;
	memset(&v, 0, sizeof(v));
	ck_assert_int_eq(emu_register_attr(h->e, 0xff90, vendor_attr, &v), 0);
	uint8_t d[64];
	memset(d, 0xab, sizeof(d));
	const uint8_t *a = h_dr_answer(h, SET, 0xff90, 1, P_S2, 2, d);
	ck_assert_uint_eq(dr_status(a), 0);
	ck_assert_int_eq(v.calls, 1);
	ck_assert_uint_eq(v.node, emu_node_index(h->e, S2));
	ck_assert_int_eq(v.in_port, 3);
	ck_assert_int_eq(v.method, SET);
	ck_assert_uint_eq(v.mod, 1);
	a = h_dr_answer(h, GET, 0xff90, 0, P_S2, 2, NULL);
	ck_assert_int_eq(a[64 + 63], 0xab);
	ck_assert_uint_eq(dr_status(h_dr_answer(h, GET, 0xff90, 7, P_S1, 1, NULL)), 0x1c);
	ck_assert_int_eq(v.calls, 3);
	ck_assert_uint_eq(dr_status(h_dr_answer(h, GET, 0xff91, 0, P_S1, 1, NULL)), 0x0c);
	/* LID-routed too */
	bring_up(h, 5, 1);
	uint8_t m[MAD_SIZE];
	mk_lid(m, GET, 0xff90, 0, ++h->tid);
	uint64_t tid = h_send(h, m, 5);
	h_run(h);
	int i = h_find(h, tid);
	ck_assert_int_ge(i, 0);
	ck_assert_int_eq(v.calls, 4);
	ck_assert_uint_eq(v.node, emu_node_index(h->e, H3));
	ck_assert_int_eq(v.in_port, 1);
	ck_assert_uint_eq(h->from[i].lid, 5);
	h_free(h);
}
END_TEST

struct sm2 {
	struct mad_transport t;
	int n;
	uint8_t last[MAD_SIZE];
	struct mad_addr from;
};

/* A second SM on H3 answering SMInfo as an SM does. */
static void sm2_rx(void *arg, const uint8_t *mad, size_t len,
		   const struct mad_addr *from, int status)
{
	struct sm2 *s = arg;
	(void)len;
	(void)status;
	s->n++;
	memcpy(s->last, mad, MAD_SIZE);
	s->from = *from;
	if (r16(mad + 16) != A_SMINFO || mad[3] != GET)
		return;
	uint8_t m[MAD_SIZE];
	memcpy(m, mad, MAD_SIZE);
	m[3] = GETRESP;
	if (m[1] == 0x81)
		w16(m + 4, 0x8000);		/* D bit, status 0 */
	memset(m + 64, 0, 64);
	w64(m + 64, H3 + 1);			/* GUID */
	m[64 + 20] = 5 << 4 | 2;		/* priority 5, STANDBY */
	struct mad_addr to = *from;
	ck_assert_int_eq(s->t.send(s->t.ctx, m, MAD_SIZE, &to), 0);
}

START_TEST(t_sminfo)
{
	struct h *h = h_new();
	char err[256];
	struct sm2 s;
	memset(&s, 0, sizeof(s));
	ck_assert_msg(emu_attach(h->e, h->base, H3 + 1, &s.t, sm2_rx, &s, err,
				 sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(emu_attach(h->e, h->base, H3 + 1, &s.t, sm2_rx, &s, err,
				    sizeof(err)), -1);
	const uint8_t *a = h_dr_answer(h, GET, A_SMINFO, 0, P_H3, 3, NULL);
	ck_assert_int_eq(s.n, 1);
	ck_assert_int_eq(s.last[6], 4);		/* it arrived with hop pointer 4 */
	ck_assert_int_eq(s.last[192 + 3], 1);
	ck_assert_uint_eq(r64(a + 64), H3 + 1);
	ck_assert_int_eq(a[64 + 20] & 0x0f, 2);
	ck_assert_int_eq(a[6], 0);
	/* no SM on H2: SMInfo is lost */
	ck_assert(h_dr_lost(h, GET, A_SMINFO, 0, P_H2, 2, NULL));
	/* once closed, H3 is no SM either */
	s.t.close(s.t.ctx);
	ck_assert(h_dr_lost(h, GET, A_SMINFO, 0, P_H3, 3, NULL));
	ck_assert_int_eq(s.n, 1);
	ck_assert_uint_eq(emu_violations(h->e), 0);
	h_free(h);
}
END_TEST

START_TEST(t_client_facts_and_checks)
{
	struct h *h = h_new();
	bring_up(h, 5, 1);
	ck_assert_int_eq(emu_transport_refresh(&h->t), 0);
	ck_assert_uint_eq(h->t.lid, 1);
	ck_assert_uint_eq(h->t.sm_lid, 1);
	ck_assert_int_eq(h->t.port_state, 4);
	/* bad MADs from the client: recorded */
	uint8_t m[MAD_SIZE];
	mk_dr(m, GET, A_NODEINFO, 0, P_S1, 1, ++h->tid);
	m[0] = 2;
	h_send(h, m, 0xffff);
	mk_dr(m, GET, A_NODEINFO, 0, P_S1, 1, ++h->tid);
	w16(m + 34, 7);				/* DrDLID not permissive */
	h_send(h, m, 0xffff);
	mk_lid(m, GET, A_NODEINFO, 0, ++h->tid);
	h_send(h, m, 0xc001);			/* multicast DLID */
	h_run(h);
	ck_assert_uint_eq(emu_violations(h->e), 3);
	struct mad_addr to = { .lid = 0xffff };
	ck_assert_int_eq(h->t.send(h->t.ctx, m, 10, &to), -1);
	struct emu_counters c;
	emu_get_counters(h->e, &c);
	ck_assert_uint_eq(c.dropped_other, 3);
	ck_assert_uint_eq(c.delivered, (uint64_t)h->n_rx);
	h_free(h);
}
END_TEST

/* Runs one loop iteration at a time until nothing is in flight; returns how many. */
static int turns(struct h *h)
{
	int n = 0;
	while (emu_pending(h->e) && n < 100000) {
		event_base_loop(h->base, EVLOOP_ONCE);
		n++;
	}
	return n;
}

/* Many MADs, small batches: the loop turns between them, nothing is lost. */
START_TEST(t_batches)
{
	enum { N = 500 };
	struct h *h = h_new();
	for (int k = 0; k < N; k++)
		h_dr(h, GET, A_NODEINFO, 0, P_H3, 3, NULL);
	int big = turns(h);
	ck_assert_int_eq(h->n_rx, N);
	ck_assert_int_le(big, 3);
	emu_set_max_batch(h->e, 7);
	for (int k = 0; k < N; k++)
		h_dr(h, GET, A_NODEINFO, 0, P_H3, 3, NULL);
	int small = turns(h);
	ck_assert_int_eq(h->n_rx, 2 * N);
	ck_assert_int_ge(small, 2 * N / 7);
	h_free(h);
}
END_TEST

static Suite *emu_suite(void)
{
	Suite *s = suite_create("emu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, t_dr_nodeinfo);
	tcase_add_test(tc, t_dr_from_wrong_port);
	tcase_add_test(tc, t_port_states);
	tcase_add_test(tc, t_impossible_values);
	tcase_add_test(tc, t_tables);
	tcase_add_test(tc, t_lid_routing);
	tcase_add_test(tc, t_port_loss);
	tcase_add_test(tc, t_seeded_loss);
	tcase_add_test(tc, t_latency);
	tcase_add_test(tc, t_link_down_trap);
	tcase_add_test(tc, t_dead);
	tcase_add_test(tc, t_vendor_attr);
	tcase_add_test(tc, t_sminfo);
	tcase_add_test(tc, t_client_facts_and_checks);
	tcase_add_test(tc, t_batches);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(emu_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
