/*
 * congestion.mode dftree's two lanes (sm/model/lanes.h) on the in-process
 * emulator, read back from the emulated devices (mad/emu/emu.c), never
 * from the SM's memory: the SL-to-VL tables of every CA port and switch
 * (input, output) pair, the VL arbitration tables, OperationalVLs, a
 * second heavy sweep that writes none of them, a link that cannot run
 * the slow lane; and the SL of the SA's PathRecord and MultiPathRecord
 * answers towards a hot-spot, asked by a host's SA client.  The tree of
 * emu_testlib.h: 4 leaves (L0..L3, GUIDs 0x100..0x103) of 3 hosts
 * (H0..H11, CA GUID 0x1000 + 4h), 2 spines, every port VLCap 4 (VL0-7).
 */
#include <check.h>
#include <jansson.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mad/emu/emu.h"
#include "mad/sa.h"
#include "sm/daemon.h"
#include "sm/heavy.h"
#include "sm/model/lanes.h"
#include "sm/base/log.h"
#include "sm/base/topo.h"
#include "sm/ctl/control.h"
#include "traps/host/saclient.h"

#include "emu_testlib.h"

struct run {
	EMU_RUN;
};

/* dftree with fast_sl, slow_sl; tweak: changes the devices first (NULL: none). */
static void setup(struct run *r, int fast, int slow, void (*tweak)(struct fabric *))
{
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "lanesemu",
		     .tweak = tweak, .seed = 11 });
	r->sm = emu_sm_new(r->state, 20);
	r->sm->cfg.cong_mode = CONG_DFTREE;
	r->sm->cfg.cong_fast_sl = fast;
	r->sm->cfg.cong_slow_sl = slow;
	emu_sm_start(r->sm, r->base, r->e);
}

static int linked(const struct fabric *f, uint32_t ni, int p)
{
	return fabric_portp(f, ni, (unsigned)p)->remote != FAB_NONE;
}

/* SL fast and every SL but slow on VL one_vl, SL slow on VL slow_vl. */
static void assert_table(const struct run *r, const struct fab_node *nd, int in,
			 int out, unsigned slow, unsigned one_vl, unsigned slow_vl)
{
	uint8_t vl[16];
	ck_assert_int_eq(emu_sl2vl(r->e, nd->guid, in, out, vl), 0);
	for (unsigned sl = 0; sl < 16; sl++) {
		unsigned want = sl == slow ? slow_vl : one_vl;
		ck_assert_msg(vl[sl] == want, "%s (%d, %d): SL %u on VL %u, want %u",
			      nd->desc, in, out, sl, vl[sl], want);
	}
}

/* VLArb low block: VL0..nvl-1 weight 64 each, nothing else; high: empty. */
static void assert_vlarb(const struct run *r, const struct fab_node *nd, int p,
			 unsigned nvl)
{
	uint8_t vl[32], w[32];
	ck_assert_int_eq(emu_vlarb(r->e, nd->guid, p, 1, vl, w), 8);
	for (unsigned i = 0; i < 32; i++)
		ck_assert_msg(vl[i] == (i < nvl ? i : 0) && w[i] == (i < nvl ? 64 : 0),
			      "%s[%d] low entry %u: VL %u weight %u", nd->desc, p, i,
			      vl[i], w[i]);
	ck_assert_int_eq(emu_vlarb(r->e, nd->guid, p, 3, vl, w), 8);
	for (unsigned i = 0; i < 32; i++)
		ck_assert_uint_eq(w[i], 0);
}

/* Every written table of the fabric: the lanes, but on ports of narrow nodes. */
static void assert_fabric(const struct run *r, unsigned fast, unsigned slow,
			  unsigned nvl)
{
	const struct fabric *f = &r->topo;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		for (int in = 0; in <= nd->nports; in++) {
			if (in && !linked(f, i, in))
				continue;
			if (nd->type != FAB_SWITCH) {
				if (in) {
					assert_table(r, nd, in, in, slow, fast, slow);
					assert_vlarb(r, nd, in, nvl);
					/* OperationalVLs 4 (VL0-7): both lanes run */
					ck_assert_int_eq(emu_port_oper_vls(r->e, nd->guid, in), 4);
				}
				continue;
			}
			for (int out = 0; out <= nd->nports; out++)
				if (out != in && (!out || linked(f, i, out)))
					assert_table(r, nd, in, out, slow, fast, slow);
			if (in) {
				assert_vlarb(r, nd, in, nvl);
				ck_assert_int_eq(emu_port_oper_vls(r->e, nd->guid, in), 4);
			}
		}
	}
}

/* The SL2VL pairs written: every CA port, every switch (in, out) pair of linked ports and 0. */
static uint64_t expected_sl2vl(const struct fabric *f)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		unsigned k = 0;
		for (int p = 1; p <= nd->nports; p++)
			k += (unsigned)linked(f, i, p);
		n += nd->type == FAB_SWITCH ? (uint64_t)(k + 1) * k : k;
	}
	return n;
}

/*
 * fast_sl 0, slow_sl 1: SL 1 on VL 1, every other SL on VL 0, on every CA
 * port and switch pair; VLArb low VL0 and VL1 at weight 64 each;
 * OperationalVLs 4 everywhere; a second heavy sweep with nothing changed
 * writes no SL2VL or VLArb table.  No SL per pair: the routing's SL is 0.
 */
START_TEST(t_two_lanes_written_once)
{
	struct run r;
	setup(&r, 0, 1, NULL);
	emu_run_sweeps(&r.run, 1);
	assert_fabric(&r, 0, 1, 2);
	struct emu_counters c;
	emu_get_counters(r.e, &c);
	ck_assert_uint_eq(c.sl2vl_sets, expected_sl2vl(&r.topo));
	/* 12 hosts + 4 leaves x 5 linked + 2 spines x 4: two blocks each */
	ck_assert_uint_eq(c.vlarb_sets, 2 * (12 + 4 * 5 + 2 * 4));
	ck_assert_uint_eq(r.sm->sub.lanes.ports_refused, 0);
	ck_assert_int_eq(r.sm->sub.lanes.on, 1);

	sweeper_request_heavy(r.sm, "test");
	emu_run_sweeps(&r.run, 2);
	struct emu_counters c2;
	emu_get_counters(r.e, &c2);
	ck_assert_uint_eq(c2.sl2vl_sets, c.sl2vl_sets);
	ck_assert_uint_eq(c2.vlarb_sets, c.vlarb_sets);
	ck_assert_uint_eq(r.sm->sweep.last.prog.sl2vl_sets, 0);
	ck_assert_uint_eq(r.sm->sweep.last.prog.vlarb_sets, 0);
	ck_assert_uint_eq(emu_violations(r.e), 0);
	emu_run_free(&r.run);
}
END_TEST

/*
 * fast_sl 2, slow_sl 5: SL 5 on VL 5, SL 2 and every other on VL 2; the
 * arbitration serves VL0-5 at equal weight (the data VLs the port sends
 * on, as the default of qos.vlarb_low).
 */
START_TEST(t_two_lanes_other_sls)
{
	struct run r;
	setup(&r, 2, 5, NULL);
	emu_run_sweeps(&r.run, 1);
	assert_fabric(&r, 2, 5, 6);
	ck_assert_uint_eq(emu_violations(r.e), 0);
	emu_run_free(&r.run);
}
END_TEST

/* Host H5 (0x1014) and its leaf port L1[3] run VL0 only (VLCap 1). */
static void narrow_h5(struct fabric *f)
{
	uint32_t pi = fabric_port(f, fabric_find_node(f, 0x1014), 1);
	f->ports[pi].vl_cap = 1;
	f->ports[f->ports[pi].remote].vl_cap = 1;
}

/*
 * A link that cannot run the slow lane: its two ports carry every SL on
 * the fast VL (VL 0) and weigh VL 0 alone; the other ports keep both
 * lanes; the two are counted in ibsmctl status's "lanes".
 */
START_TEST(t_narrow_link_one_lane)
{
	struct run r;
	setup(&r, 0, 1, narrow_h5);
	emu_run_sweeps(&r.run, 1);
	const struct fabric *f = &r.topo;
	const struct fab_node *h5 = &f->nodes[fabric_find_node(f, 0x1014)];
	const struct fab_node *l1 = &f->nodes[fabric_find_node(f, 0x101)];
	assert_table(&r, h5, 1, 1, 1, 0, 0);
	assert_vlarb(&r, h5, 1, 1);
	ck_assert_int_eq(emu_port_oper_vls(r.e, h5->guid, 1), 1);
	for (int in = 0; in <= 8; in++)
		if (in != 3 && (!in || linked(f, fabric_find_node(f, 0x101), in)))
			assert_table(&r, l1, in, 3, 1, 0, 0);
	assert_vlarb(&r, l1, 3, 1);
	/* the leaf's other ports and another host: both lanes */
	assert_table(&r, l1, 3, 7, 1, 0, 1);
	assert_table(&r, l1, 1, 2, 1, 0, 1);
	assert_vlarb(&r, l1, 7, 2);
	const struct fab_node *h0 = &f->nodes[fabric_find_node(f, 0x1000)];
	assert_table(&r, h0, 1, 1, 1, 0, 1);
	ck_assert_uint_eq(r.sm->sub.lanes.ports_refused, 2);
	json_t *o = json_object();
	last_sweep_to_ctl(r.sm, o);
	json_t *l = json_object_get(o, "lanes");
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(json_integer_value(json_object_get(l, "ports_one_lane")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(l, "slow_sl")), 1);
	json_decref(o);
	ck_assert_uint_eq(emu_violations(r.e), 0);
	emu_run_free(&r.run);
}
END_TEST

/* L1 answers the SL-to-VL table of its pair (7, 3) with SL 1 on VL 0 (reads only). */
static int sl2vl_one_wrong(void *ctx, struct emu *e, struct emu_smp *s)
{
	if (s->method != 0x01)
		return 0x1c;	/* no Set while the test reads */
	int in = s->in_port, out = s->in_port;	/* a CA: the port it came in on */
	if (s->node_type == 2) {
		in = (int)(s->attr_mod >> 8 & 0xff);
		out = (int)(s->attr_mod & 0xff);
	}
	uint8_t vl[16];
	if (emu_sl2vl(e, s->node_guid, in, out, vl) < 0)
		return 0x1c;
	if (s->node_guid == 0x101 && in == 7 && out == 3)
		vl[1] = 0;
	for (int i = 0; i < 8; i++)
		s->data[i] = (uint8_t)(vl[2 * i] << 4 | vl[2 * i + 1]);
	return 0;
}

/*
 * ibsmctl verify reads the lanes back: every SL-to-VL table the sweep
 * wrote (4 leaves x 6 x 5 and 2 spines x 5 x 4 pairs, port 0 and the
 * linked ports, and 12 CA ports) and every VL
 * arbitration table (12 hosts + 4 leaves x 5 + 2 spines x 4), all as
 * the SM has them: OK.  A switch pair that answers SL 1 on VL 0: FAILED,
 * named.
 */
START_TEST(t_verify_reads_lanes)
{
	struct run r;
	char path[128], err[256] = "";
	setup(&r, 0, 1, NULL);
	emu_run_sweeps(&r.run, 1);
	snprintf(path, sizeof(path), "%s/ctl.sock", r.state);
	r.sm->ctl = control_open(r.base, path, sm_control, r.sm, err, sizeof(err));
	ck_assert_msg(r.sm->ctl != NULL, "%s", err);
	json_t *rep = emu_ctl_request(&r.run, path, "{\"cmd\":\"verify\"}\n", 0);
	const char *text = json_string_value(json_object_get(rep, "text"));
	ck_assert_msg(text && strstr(text, "qos: 172 SL-to-VL tables read, 0 differ from the SM's; "
				     "40 VL arbitration tables read, 0 leave a VL in use unserved"),
		      "%s", text ? text : "no text");
	ck_assert_str_eq(json_string_value(json_object_get(rep, "result")), "OK");
	json_decref(rep);

	ck_assert_int_eq(emu_register_attr(r.e, 0x0017, sl2vl_one_wrong, NULL), 0);
	rep = emu_ctl_request(&r.run, path, "{\"cmd\":\"verify\"}\n", 0);
	text = json_string_value(json_object_get(rep, "text"));
	ck_assert_str_eq(json_string_value(json_object_get(rep, "result")), "FAILED");
	ck_assert_msg(strstr(text, "qos: \"L1\" (7, 3): SL-to-VL table differs from the SM's"),
		      "%s", text);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(rep, "qos"),
							    "sl2vl_wrong")), 1);
	json_decref(rep);
	control_close(r.sm->ctl);
	r.sm->ctl = NULL;
	emu_run_free(&r.run);
}
END_TEST

/* ---- the SA's path answers ---- */

struct host {
	struct mad_transport t;
	struct saclient *c;
	uint64_t guid;
};

/* An SA client on host h's port (IsSM cleared: the SM sweeps it in). */
static void host_attach(struct run *r, struct host *h, int host)
{
	char err[256] = "";
	struct saclient_params p = { .timeout_ms = 1000, .retries = 3 };
	memset(h, 0, sizeof(*h));
	h->guid = emu_host_guid(host);
	h->c = saclient_new(r->base, &h->t, &p);
	ck_assert_ptr_nonnull(h->c);
	ck_assert_msg(emu_attach(r->e, r->base, h->guid, &h->t, saclient_recv, h->c,
				 err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(emu_set_issm(r->e, h->guid, 0), 0);
	emu_sm_run(r->base, r->sm, 200, 0);
	emu_sm_run(r->base, r->sm, 60000, 1);
	ck_assert_int_eq(emu_transport_refresh(&h->t), 0);
	ck_assert_uint_gt(h->t.sm_lid, 0);
}

static void host_detach(struct host *h)
{
	saclient_free(h->c);
	h->t.close(h->t.ctx);
}

/* The SL of the one record of a query (Get or GetMulti) from h. */
static unsigned ask_sl(struct run *r, struct host *h, uint8_t method, uint16_t attr,
		       uint64_t mask, const uint8_t *rec, size_t len)
{
	struct emu_sa_answer a = { 0 };
	int rc = saclient_query(h->c, method, attr, 0, mask, rec, len,
				emu_sa_answered, &a);
	ck_assert_msg(rc == 0, "query: %s", strerror(errno));
	for (int i = 0; i < 500 && !a.done; i++)
		emu_sm_run(r->base, r->sm, 10, 0);
	ck_assert_int_eq(a.done, 1);
	ck_assert_int_eq(a.status, 0);
	ck_assert_uint_eq(a.n, 1);
	return a.rec[53] & 0xf;		/* QoSClass:12, SL:4 at byte 52 */
}

#define PR_DLID_BIT	(1ull << 4)
#define PR_SLID_BIT	(1ull << 5)
#define MPR_SGIDCOUNT	(1ull << 19)
#define MPR_DGIDCOUNT	(1ull << 20)

/* A PathRecord Get from h to LID dlid: its SL. */
static unsigned pr_sl(struct run *r, struct host *h, int slid, int dlid)
{
	uint8_t rec[SA_SIZE_PATH_REC] = { 0 };
	sa_put16(rec + 40, (uint16_t)dlid);
	sa_put16(rec + 42, (uint16_t)slid);
	return ask_sl(r, h, SA_METHOD_GET, SA_ATTR_PATH_REC, PR_DLID_BIT | PR_SLID_BIT,
		      rec, sizeof(rec));
}

/* A MultiPathRecord GetMulti from h's port to host dst's port GID: its SL. */
static unsigned mpr_sl(struct run *r, struct host *h, int dst)
{
	uint8_t rec[SA_DATA_SIZE] = { 0 };
	rec[15] = 1;	/* SGIDCount */
	rec[16] = 1;	/* DGIDCount */
	sa_put64(rec + 24, 0xfe80000000000000ull);
	sa_put64(rec + 32, h->guid);
	sa_put64(rec + 40, 0xfe80000000000000ull);
	sa_put64(rec + 48, emu_host_guid(dst));
	return ask_sl(r, h, SA_METHOD_GET_MULTI, SA_ATTR_MULTIPATH_REC,
		      MPR_SGIDCOUNT | MPR_DGIDCOUNT, rec, 56);
}

/*
 * fast_sl 2, slow_sl 3: PathRecords and MultiPathRecords from H1 answer
 * SL 2 towards H5 and H7; once H5's LID is a hot-spot (lanes_set_hot, as
 * the dFtree loop marks it) those towards H5 answer SL 3, towards H7
 * still 2; cleared, SL 2 again.
 */
START_TEST(t_path_sl_follows_hot_spot)
{
	struct run r;
	setup(&r, 2, 3, NULL);
	emu_run_sweeps(&r.run, 1);
	struct host h;
	host_attach(&r, &h, 1);
	int h1 = emu_port_lid(r.e, emu_host_guid(1) - 1, 1);
	int h5 = emu_port_lid(r.e, emu_host_guid(5) - 1, 1);
	int h7 = emu_port_lid(r.e, emu_host_guid(7) - 1, 1);
	ck_assert_int_gt(h5, 0);
	ck_assert_uint_eq(pr_sl(&r, &h, h1, h5), 2);
	ck_assert_uint_eq(mpr_sl(&r, &h, 5), 2);
	ck_assert_uint_eq(pr_sl(&r, &h, h1, h7), 2);

	ck_assert_int_eq(lanes_set_hot(&r.sm->sub.lanes, (uint32_t)h5, 1), 1);
	ck_assert_int_eq(lanes_set_hot(&r.sm->sub.lanes, (uint32_t)h5, 1), 0);
	ck_assert_uint_eq(pr_sl(&r, &h, h1, h5), 3);
	ck_assert_uint_eq(mpr_sl(&r, &h, 5), 3);
	ck_assert_uint_eq(pr_sl(&r, &h, h1, h7), 2);
	ck_assert_uint_eq(mpr_sl(&r, &h, 7), 2);

	ck_assert_int_eq(lanes_set_hot(&r.sm->sub.lanes, (uint32_t)h5, 0), 1);
	ck_assert_uint_eq(pr_sl(&r, &h, h1, h5), 2);
	ck_assert_uint_eq(mpr_sl(&r, &h, 5), 2);
	host_detach(&h);
	emu_run_free(&r.run);
}
END_TEST

/* The hot-spot set: sorted, each LID once, set and cleared in any order. */
START_TEST(t_hot_set)
{
	struct lanes l = { 0 };
	struct config c;
	config_defaults(&c);
	c.cong_mode = CONG_DFTREE;
	lanes_configure(&l, &c);
	static const uint32_t lids[] = { 40, 7, 300, 7, 12, 40, 1, 49151 };
	for (size_t i = 0; i < sizeof(lids) / sizeof(lids[0]); i++)
		lanes_set_hot(&l, lids[i], 1);
	ck_assert_uint_eq(l.n_hot, 6);
	for (uint32_t i = 1; i < l.n_hot; i++)
		ck_assert_uint_lt(l.hot[i - 1], l.hot[i]);
	ck_assert(lanes_is_hot(&l, 12) && !lanes_is_hot(&l, 13));
	ck_assert_uint_eq(lanes_path_sl(&l, 12, 12, 0), 1);
	ck_assert_uint_eq(lanes_path_sl(&l, 13, 12, 0), 1);	/* its port's base LID */
	ck_assert_uint_eq(lanes_path_sl(&l, 13, 13, 9), 0);
	ck_assert_int_eq(lanes_set_hot(&l, 300, 0), 1);
	ck_assert_int_eq(lanes_set_hot(&l, 300, 0), 0);
	ck_assert_int_eq(lanes_set_hot(&l, 1, 0), 1);
	ck_assert_uint_eq(l.n_hot, 4);
	ck_assert(!lanes_is_hot(&l, 1) && lanes_is_hot(&l, 49151));
	/* off: the routing's SL, and the set forgotten */
	c.cong_mode = CONG_OFF;
	lanes_configure(&l, &c);
	ck_assert_uint_eq(lanes_path_sl(&l, 12, 12, 9), 9);
	ck_assert_uint_eq(l.n_hot, 0);
	lanes_free(&l);
}
END_TEST

static Suite *lanes_suite(void)
{
	Suite *s = suite_create("lanes_emu");
	TCase *tc = tcase_create("lanes_emu");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_hot_set);
	tcase_add_test(tc, t_two_lanes_written_once);
	tcase_add_test(tc, t_two_lanes_other_sls);
	tcase_add_test(tc, t_narrow_link_one_lane);
	tcase_add_test(tc, t_verify_reads_lanes);
	tcase_add_test(tc, t_path_sl_follows_hot_spot);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(lanes_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
