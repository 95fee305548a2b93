/*
 * P_Key tables from the partitions (sm/write/plan_sweep.c), read back from the
 * emulated devices: hosts limited in the default partition with their
 * tenants' entries, the SM's port and the switches full, an enforcing
 * leaf port holding its host's table with PartitionEnforcement set; a
 * membership change writes only the blocks that differ; a table past a
 * port's capacity is cut with enforcement off; a port that leaves
 * partitions has its extra block cleared; a trap 257 is counted by port.
 *
 * The tree of emu_testlib.h: leaves L0..L3 (GUID 0x100 + l), hosts H0..H11
 * (0x1000 + 4h) on leaf h / 3 port h % 3 + 1, the SM on H0.
 */
#include <check.h>
#include <infiniband/mad.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/emu/emu.h"
#include "mad/smp.h"
#include "sm/daemon.h"
#include "sm/apply.h"
#include "sm/base/log.h"
#include "sm/ctl/metrics.h"
#include "sm/ctl/partition_ctl.h"

#include "emu_testlib.h"

#define HOST(h) (0x1000u + 4u * (h))
#define LEAF(l) (0x100u + (l))

struct run {
	EMU_RUN;
};

/* Partition pkey named name with hosts hs[0..n-1] (limited where lim[i]). */
static void add_part(struct config *c, const char *name, uint16_t pkey,
		     const int *hs, const int *lim, int n)
{
	struct cfg_partition *p = &c->parts[c->n_parts++];
	c->default_full = 0;	/* tenants apart: hosts limited in the default */
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->pkey = pkey;
	p->sl = -1;
	p->first = c->n_members;
	p->n = (uint32_t)n;
	for (int i = 0; i < n; i++) {
		struct cfg_member *m = &c->members[c->n_members++];
		memset(m, 0, sizeof(*m));
		snprintf(m->node, sizeof(m->node), "H%d", hs[i]);
		m->full = !(lim && lim[i]);
	}
}

/* tenantA: H1, H4 full, H7 limited; tenantB: H2, H5. */
static void two_tenants(struct config *c)
{
	static const int a[] = { 1, 4, 7 }, alim[] = { 0, 0, 1 }, b[] = { 2, 5 };
	c->n_parts = 0;
	c->n_members = 0;
	add_part(c, "tenantA", 0x0001, a, alim, 3);
	add_part(c, "tenantB", 0x0002, b, NULL, 2);
}

/* The SM made and initialized, not started: the test sets its policy first. */
static void setup(struct run *r, int once)
{
	char err[256] = "";
	emu_run_open(&r->run, &(struct emu_world_opts){ .name = "pkeys", .seed = 7 });
	r->sm = emu_sm_new(r->state, 20);
	if (once)
		emu_sm_once(r->sm, &r->os);
	ck_assert_msg(sm_init(r->sm, r->base, err, sizeof(err)) == 0, "%s", err);
}

static void start(struct run *r)
{
	char err[256] = "";
	ck_assert_msg(sm_start_emulated(r->sm, r->e, err, sizeof(err)) == 0, "%s", err);
}

/* Entries 0..n-1 of a port's P_Key table, as the emulated device holds it. */
static void assert_pkeys(const struct run *r, uint64_t guid, int port,
			 const int *want, int n)
{
	for (int i = 0; i < n; i++)
		ck_assert_msg(emu_port_pkey(r->e, guid, port, (unsigned)i) == want[i],
			      "0x%llx[%d] P_Key[%d] 0x%04x, want 0x%04x",
			      (unsigned long long)guid, port, i,
			      emu_port_pkey(r->e, guid, port, (unsigned)i), want[i]);
}

/* The partitions change as a reload would change them: a heavy sweep. */
static void change(struct run *r, void (*edit)(struct config *))
{
	struct config *old = malloc(sizeof(*old));
	char what[64];
	ck_assert_ptr_nonnull(old);
	*old = r->sm->cfg;
	edit(&r->sm->cfg);
	ck_assert_int_eq(part_config_changed(old, &r->sm->cfg, what, sizeof(what)), 1);
	ck_assert_str_eq(what, "partitions");
	free(old);
	r->sm->sub.route_gen++;
	sweeper_request_heavy(r->sm, "partitions changed");
}

/* PartitionEnforcementInbound the sweep plans for node guid's port. */
static int planned_enforcement(const struct run *r, uint64_t guid, int port)
{
	const struct fabric *f = &r->sm->sub.model->f;
	struct program_params pp;
	struct plan pl;
	int got = -1;
	sm_program_params(r->sm, 0, &pp);
	plan_init(&pl);
	ck_assert_int_eq(plan_sweep_ports(&pl, 0, r->sm->sub.model, r->sm->sub.cache, &pp), 0);
	for (uint32_t i = 0; i < pl.waves[0].n; i++) {
		const struct plan_op *o = &pl.waves[0].ops[i];
		if (o->kind == PLAN_PORTINFO && f->nodes[o->node].guid == guid &&
		    o->port == port) {
			const uint8_t *d = pl.waves[0].data[o->data];
			got = (int)(smp_pi_get(d, IB_PORT_PART_EN_INB_F) << 1 |
				    smp_pi_get(d, IB_PORT_PART_EN_OUTB_F));
		}
	}
	plan_free(&pl);
	return got;
}

START_TEST(t_tables)
{
	struct run r;
	setup(&r, 1);
	two_tenants(&r.sm->cfg);
	start(&r);
	ck_assert_int_eq(event_base_dispatch(r.base), 0);
	ck_assert_int_eq(r.sm->exit_code, 0);
	static const int h1[] = { 0x7fff, 0x8001, 0 }, h7[] = { 0x7fff, 0x0001, 0 },
			 h5[] = { 0x7fff, 0x8002, 0 }, none[] = { 0x7fff, 0 },
			 full[] = { 0xffff, 0 };
	assert_pkeys(&r, HOST(1), 1, h1, 3);
	assert_pkeys(&r, HOST(7), 1, h7, 3);
	assert_pkeys(&r, HOST(5), 1, h5, 3);
	assert_pkeys(&r, HOST(3), 1, none, 2);	/* in no tenant */
	assert_pkeys(&r, HOST(0), 1, full, 2);	/* the SM's port */
	assert_pkeys(&r, LEAF(0), 0, full, 2);	/* a switch */
	/* the leaf ports facing H1 and H7 hold their tables, a spine link not */
	assert_pkeys(&r, LEAF(0), 2, h1, 3);
	assert_pkeys(&r, LEAF(2), 2, h7, 3);
	assert_pkeys(&r, LEAF(0), 7, full, 2);
	/* enforcement where a host is, both directions; none to a spine */
	ck_assert_int_eq(planned_enforcement(&r, LEAF(0), 2), 3);
	ck_assert_int_eq(planned_enforcement(&r, LEAF(0), 7), 0);
	/* 11 hosts (not the SM's) and their 11 leaf ports: one block each */
	ck_assert_uint_eq(r.sm->sweep.last.prog.pkey_sets, 22);
	emu_run_free(&r.run);
}
END_TEST

/*
 * A new master (a handover, a restart) reads what the devices hold first:
 * the hosts' P_Key tables and those of the enforcing leaf ports facing
 * them, so nothing is written again.
 */
/* Configures with policy, then takes over as a new master: no write. */
static void adopt_writes_nothing(void (*policy)(struct config *), uint32_t first_sets)
{
	struct run r;
	setup(&r, 0);
	policy(&r.sm->cfg);
	start(&r);
	emu_run_sweeps(&r.run, 1);
	ck_assert_uint_eq(r.sm->sweep.last.prog.pkey_sets, first_sets);
	r.sm->sweep.adopt_tables = 1;
	sweeper_request_heavy(r.sm, "as a new master");
	emu_run_sweeps(&r.run, 2);
	ck_assert_uint_eq(r.sm->sweep.last.prog.pkey_sets, 0);
	ck_assert_uint_eq(r.sm->sweep.last.prog.lft_blocks, 0);
	emu_run_free(&r.run);
}

START_TEST(t_adopt_writes_no_pkey)
{
	adopt_writes_nothing(two_tenants, 22);
}
END_TEST

/* H5 moves from tenantB to tenantA. */
static void move_h5(struct config *c)
{
	static const int a[] = { 1, 4, 7, 5 }, alim[] = { 0, 0, 1, 0 }, b[] = { 2 };
	c->n_parts = 0;
	c->n_members = 0;
	add_part(c, "tenantA", 0x0001, a, alim, 4);
	add_part(c, "tenantB", 0x0002, b, NULL, 1);
}

START_TEST(t_move_writes_one_table)
{
	struct run r;
	setup(&r, 0);
	two_tenants(&r.sm->cfg);
	start(&r);
	emu_run_sweeps(&r.run, 1);
	change(&r, move_h5);
	emu_run_sweeps(&r.run, 2);
	static const int h5[] = { 0x7fff, 0x8001, 0 };
	assert_pkeys(&r, HOST(5), 1, h5, 3);
	assert_pkeys(&r, LEAF(1), 3, h5, 3);
	/* H5's block and its leaf port's, no LFT block (ftree ignores tenants) */
	ck_assert_uint_eq(r.sm->sweep.last.prog.pkey_sets, 2);
	ck_assert_uint_eq(r.sm->sweep.last.prog.lft_blocks, 0);

	/* a trap 257 from H5: counted by its port */
	uint8_t m[MAD_SIZE];
	uint32_t lid = (uint32_t)emu_port_lid(r.e, HOST(5), 1);
	smp_init_lid(m, IB_MAD_METHOD_TRAP, MAD_ATTR_NOTICE, 0);
	uint8_t *d = smp_data(m);
	mad_set_field(d, 0, IB_NOTICE_IS_GENERIC_F, 1);
	mad_set_field(d, 0, IB_NOTICE_TYPE_F, 2);
	mad_set_field(d, 0, IB_NOTICE_TRAP_NUMBER_F, 257);
	mad_set_field(d, 0, IB_NOTICE_ISSUER_LID_F, lid);
	struct mad_addr from = { .lid = (uint16_t)lid };
	trapin_handle(&r.sm->traps, m, &from, 0);
	trapin_handle(&r.sm->traps, m, &from, 0);
	from.lid = (uint16_t)emu_port_lid(r.e, HOST(6), 1);	/* spoofed */
	trapin_handle(&r.sm->traps, m, &from, 0);
	ck_assert_uint_eq(r.sm->pkey_viol.n, 1);
	ck_assert_uint_eq(r.sm->pkey_viol.v[0].guid, HOST(5) + 1);	/* its port GUID */
	ck_assert_uint_eq(r.sm->pkey_viol.v[0].port, 1);
	ck_assert_uint_eq(r.sm->pkey_viol.v[0].count, 2);
	char err[128] = "";
	json_t *j = ctl_partitions(r.sm, NULL, err, sizeof(err));
	ck_assert_msg(j != NULL, "%s", err);
	json_t *pa = json_array_get(json_object_get(j, "partitions"), 1);
	ck_assert_str_eq(json_string_value(json_object_get(pa, "pkey")), "0x0001");
	ck_assert_int_eq(json_integer_value(json_object_get(pa, "full")), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(pa, "limited")), 1);
	json_t *v = json_array_get(json_object_get(j, "violations"), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(v, "count")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(v, "lid")), lid);
	json_decref(j);
	char *text = metrics_render(r.sm, 0, NULL);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(strstr(text, "ibsmd_pkey_violations_total{port_guid=\"0x0000000000001015\",port=\"1\"} 2\n"),
		      "%s", text);
	free(text);
	emu_run_free(&r.run);
}
END_TEST

/* H6 in 33 tenants 0x0010..0x0030: 34 entries, two blocks. */
static void many(struct config *c)
{
	static const int h6[] = { 6 };
	c->n_parts = 0;
	c->n_members = 0;
	for (int i = 0; i < 33; i++) {
		char name[16];
		snprintf(name, sizeof(name), "t%d", i);
		add_part(c, name, (uint16_t)(0x10 + i), h6, NULL, 1);
	}
}

static void one(struct config *c)
{
	static const int h6[] = { 6 };
	c->n_parts = 0;
	c->n_members = 0;
	add_part(c, "t0", 0x10, h6, NULL, 1);
}

START_TEST(t_cap_and_clear)
{
	struct run r;
	setup(&r, 0);
	many(&r.sm->cfg);
	start(&r);
	emu_run_sweeps(&r.run, 1);
	/* H6 (room for 64): all 34; its leaf port (32, SwitchInfo): cut, no enforcement */
	ck_assert_int_eq(emu_port_pkey(r.e, HOST(6), 1, 0), 0x7fff);
	ck_assert_int_eq(emu_port_pkey(r.e, HOST(6), 1, 33), 0x8030);
	ck_assert_int_eq(emu_port_pkey(r.e, LEAF(2), 1, 31), 0x802e);
	ck_assert_int_eq(emu_port_pkey(r.e, LEAF(2), 1, 32), -1);
	ck_assert_int_eq(planned_enforcement(&r, LEAF(2), 1), 0);
	ck_assert_int_eq(planned_enforcement(&r, LEAF(2), 2), 3);	/* H7: 0x7fff */
	change(&r, one);
	emu_run_sweeps(&r.run, 2);
	static const int h6[] = { 0x7fff, 0x8010, 0 };
	assert_pkeys(&r, HOST(6), 1, h6, 3);
	ck_assert_int_eq(emu_port_pkey(r.e, HOST(6), 1, 33), 0);	/* cleared */
	assert_pkeys(&r, LEAF(2), 1, h6, 3);
	/* H6's two blocks, its leaf port's one */
	ck_assert_uint_eq(r.sm->sweep.last.prog.pkey_sets, 3);
	ck_assert_int_eq(planned_enforcement(&r, LEAF(2), 1), 3);
	emu_run_free(&r.run);
}
END_TEST

/*
 * The same with a table of two blocks (H6 in 34 partitions): a new
 * master reads every block the policy fills, not block 0 alone.
 */
START_TEST(t_adopt_two_blocks)
{
	/* every host's table and its leaf port's, H6's two blocks: 23 */
	adopt_writes_nothing(many, 23);
}
END_TEST

static Suite *pkeys_suite(void)
{
	Suite *s = suite_create("pkeys_on_emulator");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_tables);
	tcase_add_test(tc, t_adopt_writes_no_pkey);
	tcase_add_test(tc, t_adopt_two_blocks);
	tcase_add_test(tc, t_move_writes_one_table);
	tcase_add_test(tc, t_cap_and_clear);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(pkeys_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
