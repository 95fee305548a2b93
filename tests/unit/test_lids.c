/*
 * LID assignment (sm/model/lids.c) on fabrics built from ibsim net-file text.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/base/fabric.h"
#include "sm/model/lids.h"
#include "sm/base/topo.h"

/*
 * End ports, in port-GUID order:
 *   0x50 (S2 port 0), 0x100 (S1 port 0), 0x1001 (H2/1), 0x1002 (H2/2,
 *   not cabled), 0x2001 (H1/1), 0x3001 (H3/1)
 */
static const char NET_A[] =
	"switchguid=0x100\n"
	"Switch\t4 \"S1\"\n"
	"[1]\t\"H1\"[1]\n"
	"[2]\t\"H2\"[1]\n"
	"[3]\t\"S2\"[3]\n"
	"\n"
	"switchguid=0x50\n"
	"Switch\t4 \"S2\"\n"
	"[1]\t\"H3\"[1]\n"
	"[3]\t\"S1\"[3]\n"
	"\n"
	"caguid=0x2000\n"
	"Hca\t1 \"H1\"\n"
	"[1]\t\"S1\"[1]\n"
	"\n"
	"caguid=0x1000\n"
	"Hca\t2 \"H2\"\n"
	"[1]\t\"S1\"[2]\n"
	"\n"
	"caguid=0x3000\n"
	"Hca\t1 \"H3\"\n"
	"[1]\t\"S2\"[1]\n";

/* The same fabric, records in another order. */
static const char NET_A_SHUFFLED[] =
	"caguid=0x3000\n"
	"Hca\t1 \"H3\"\n"
	"[1]\t\"S2\"[1]\n"
	"\n"
	"caguid=0x1000\n"
	"Hca\t2 \"H2\"\n"
	"[1]\t\"S1\"[2]\n"
	"\n"
	"switchguid=0x50\n"
	"Switch\t4 \"S2\"\n"
	"[3]\t\"S1\"[3]\n"
	"[1]\t\"H3\"[1]\n"
	"\n"
	"caguid=0x2000\n"
	"Hca\t1 \"H1\"\n"
	"[1]\t\"S1\"[1]\n"
	"\n"
	"switchguid=0x100\n"
	"Switch\t4 \"S1\"\n"
	"[3]\t\"S2\"[3]\n"
	"[2]\t\"H2\"[1]\n"
	"[1]\t\"H1\"[1]\n";

/* NET_A plus a host H4 (port GUID 0x501) on S2. */
static const char NET_A_PLUS[] =
	"switchguid=0x100\n"
	"Switch\t4 \"S1\"\n"
	"[1]\t\"H1\"[1]\n"
	"[2]\t\"H2\"[1]\n"
	"[3]\t\"S2\"[3]\n"
	"\n"
	"switchguid=0x50\n"
	"Switch\t4 \"S2\"\n"
	"[1]\t\"H3\"[1]\n"
	"[2]\t\"H4\"[1]\n"
	"[3]\t\"S1\"[3]\n"
	"\n"
	"caguid=0x2000\n"
	"Hca\t1 \"H1\"\n"
	"[1]\t\"S1\"[1]\n"
	"\n"
	"caguid=0x1000\n"
	"Hca\t2 \"H2\"\n"
	"[1]\t\"S1\"[2]\n"
	"\n"
	"caguid=0x3000\n"
	"Hca\t1 \"H3\"\n"
	"[1]\t\"S2\"[1]\n"
	"\n"
	"caguid=0x500\n"
	"Hca\t1 \"H4\"\n"
	"[1]\t\"S2\"[2]\n";

static const uint64_t GUIDS_A[] = { 0x50, 0x100, 0x1001, 0x1002, 0x2001,
				    0x3001 };
#define N_A ((int)(sizeof(GUIDS_A) / sizeof(GUIDS_A[0])))

static void load(struct fabric *f, const char *text)
{
	char err[256] = "";
	fabric_init(f);
	if (topo_parse_string(f, text, "test.net", err, sizeof(err)) != 0)
		ck_abort_msg("parse: %s", err);
}

static uint32_t endport(const struct fabric *f, uint64_t guid)
{
	for (uint32_t i = 0; i < f->n_ports; i++)
		if (fabric_is_endport(f, i) && f->ports[i].guid == guid)
			return i;
	ck_abort_msg("no end port with GUID 0x%llx", (unsigned long long)guid);
	return FAB_NONE;
}

static uint32_t lid_of(const struct fabric *f, uint64_t guid)
{
	return f->ports[endport(f, guid)].lid;
}

static int n_endports(const struct fabric *f)
{
	int n = 0;
	for (uint32_t i = 0; i < f->n_ports; i++)
		n += fabric_is_endport(f, i);
	return n;
}

/* lid_port[] maps exactly every LID of every range to its port. */
static void check_index(const struct fabric *f)
{
	uint32_t max = 0;
	uint32_t covered = 0;
	for (uint32_t i = 0; i < f->n_ports; i++) {
		if (!fabric_is_endport(f, i) || !f->ports[i].lid)
			continue;
		/* a base switch port 0 has one LID whatever the subnet's LMC */
		uint32_t span = 1u << fabric_port_lmc(f, i);
		uint32_t lid = f->ports[i].lid;
		ck_assert_uint_eq(lid % span, 0);
		ck_assert_uint_le(lid + span - 1, LID_UCAST_MAX);
		for (uint32_t k = 0; k < span; k++)
			ck_assert_uint_eq(f->lid_port[lid + k], i);
		covered += span;
		if (lid + span - 1 > max)
			max = lid + span - 1;
	}
	ck_assert_uint_eq(f->max_lid, max);
	uint32_t mapped = 0;
	for (uint32_t l = 0; l <= f->max_lid; l++)
		mapped += f->lid_port[l] != FAB_NONE;
	ck_assert_uint_eq(mapped, covered);	/* so no overlaps either */
	ck_assert_uint_eq(f->lid_port[0], FAB_NONE);
}

START_TEST(t_fresh_packed_in_guid_order)
{
	struct fabric f;
	struct lid_report rep;
	load(&f, NET_A);
	ck_assert_int_eq(n_endports(&f), N_A);
	ck_assert_int_eq(lids_assign(&f, NULL, 0, &rep), 0);
	for (int i = 0; i < N_A; i++)
		ck_assert_uint_eq(lid_of(&f, GUIDS_A[i]), (uint32_t)i + 1);
	/* a switch's LID is on its port 0, none on the other ports */
	uint32_t s1 = fabric_find_node(&f, 0x100);
	ck_assert_uint_ne(s1, FAB_NONE);
	ck_assert_uint_eq(fabric_portp(&f, s1, 0)->lid, 2);
	for (unsigned p = 1; p <= f.nodes[s1].nports; p++)
		ck_assert_uint_eq(fabric_portp(&f, s1, p)->lid, 0);
	ck_assert_uint_eq(rep.assigned, N_A);
	ck_assert_uint_eq(rep.kept_persisted, 0);
	ck_assert_uint_eq(rep.kept_existing, 0);
	ck_assert_uint_eq(rep.conflicts, 0);
	ck_assert_uint_eq(rep.exhausted, 0);
	ck_assert_uint_eq(f.max_lid, N_A);
	ck_assert_uint_eq(f.lmc, 0);
	check_index(&f);
	fabric_free(&f);
}
END_TEST

START_TEST(t_independent_of_node_order)
{
	struct fabric a, b;
	struct lid_report rep;
	load(&a, NET_A);
	load(&b, NET_A_SHUFFLED);
	ck_assert_uint_ne(a.nodes[0].guid, b.nodes[0].guid);	/* really shuffled */
	ck_assert_int_eq(lids_assign(&a, NULL, 0, &rep), 0);
	ck_assert_int_eq(lids_assign(&b, NULL, 0, &rep), 0);
	for (int i = 0; i < N_A; i++)
		ck_assert_uint_eq(lid_of(&a, GUIDS_A[i]), lid_of(&b, GUIDS_A[i]));
	fabric_free(&a);
	fabric_free(&b);
}
END_TEST

START_TEST(t_persisted_honoured_absent_reserved)
{
	struct fabric f;
	struct guid_map m = { 0 };
	struct lid_report rep;
	load(&f, NET_A);
	ck_assert_int_eq(guid_map_put(&m, 0x2001, 3), 0);
	ck_assert_int_eq(guid_map_put(&m, 0xdead0001, 1), 0);	/* absent */
	ck_assert_int_eq(guid_map_put(&m, 0xdead0002, 5), 0);	/* absent */
	ck_assert_int_eq(lids_assign(&f, &m, 0, &rep), 0);
	ck_assert_uint_eq(lid_of(&f, 0x2001), 3);
	ck_assert_uint_eq(lid_of(&f, 0x50), 2);
	ck_assert_uint_eq(lid_of(&f, 0x100), 4);
	ck_assert_uint_eq(lid_of(&f, 0x1001), 6);
	ck_assert_uint_eq(lid_of(&f, 0x1002), 7);
	ck_assert_uint_eq(lid_of(&f, 0x3001), 8);
	ck_assert_uint_eq(f.lid_port[1], FAB_NONE);
	ck_assert_uint_eq(f.lid_port[5], FAB_NONE);
	ck_assert_uint_eq(rep.kept_persisted, 1);
	ck_assert_uint_eq(rep.assigned, N_A - 1);
	ck_assert_uint_eq(rep.conflicts, 0);
	check_index(&f);
	fabric_free(&f);
	guid_map_free(&m);
}
END_TEST

START_TEST(t_persisted_beats_existing)
{
	struct fabric f;
	struct guid_map m = { 0 };
	struct lid_report rep;
	load(&f, NET_A);
	ck_assert_int_eq(guid_map_put(&m, 0x3001, 2), 0);
	f.ports[endport(&f, 0x50)].hw_lid = 2;	/* wants the same LID */
	ck_assert_int_eq(lids_assign(&f, &m, 0, &rep), 0);
	ck_assert_uint_eq(lid_of(&f, 0x3001), 2);
	ck_assert_uint_eq(lid_of(&f, 0x50), 1);
	ck_assert_uint_eq(rep.kept_persisted, 1);
	ck_assert_uint_eq(rep.kept_existing, 0);
	ck_assert_uint_eq(rep.conflicts, 1);
	check_index(&f);
	fabric_free(&f);
	guid_map_free(&m);
}
END_TEST

START_TEST(t_existing_kept)
{
	struct fabric f;
	struct lid_report rep;
	load(&f, NET_A);
	f.ports[endport(&f, 0x3001)].hw_lid = 2;
	f.ports[endport(&f, 0x100)].hw_lid = 40;
	ck_assert_int_eq(lids_assign(&f, NULL, 0, &rep), 0);
	ck_assert_uint_eq(lid_of(&f, 0x3001), 2);
	ck_assert_uint_eq(lid_of(&f, 0x100), 40);
	ck_assert_uint_eq(lid_of(&f, 0x50), 1);
	ck_assert_uint_eq(lid_of(&f, 0x1001), 3);
	ck_assert_uint_eq(lid_of(&f, 0x1002), 4);
	ck_assert_uint_eq(lid_of(&f, 0x2001), 5);
	ck_assert_uint_eq(rep.kept_existing, 2);
	ck_assert_uint_eq(rep.assigned, N_A - 2);
	ck_assert_uint_eq(f.max_lid, 40);
	check_index(&f);

	/* a second pass with the LIDs now on the ports changes nothing */
	uint32_t before[N_A];
	for (int i = 0; i < N_A; i++) {
		before[i] = lid_of(&f, GUIDS_A[i]);
		f.ports[endport(&f, GUIDS_A[i])].hw_lid = before[i];
	}
	ck_assert_int_eq(lids_assign(&f, NULL, 0, &rep), 0);
	for (int i = 0; i < N_A; i++)
		ck_assert_uint_eq(lid_of(&f, GUIDS_A[i]), before[i]);
	ck_assert_uint_eq(rep.kept_existing, N_A);
	ck_assert_uint_eq(rep.assigned, 0);
	fabric_free(&f);
}
END_TEST

START_TEST(t_existing_out_of_range_ignored)
{
	struct fabric f;
	struct lid_report rep;
	load(&f, NET_A);
	f.ports[endport(&f, 0x2001)].hw_lid = 0xc000;	/* multicast range */
	ck_assert_int_eq(lids_assign(&f, NULL, 0, &rep), 0);
	ck_assert_uint_eq(lid_of(&f, 0x2001), 5);
	ck_assert_uint_eq(rep.conflicts, 1);
	check_index(&f);
	fabric_free(&f);
}
END_TEST

START_TEST(t_duplicate_existing)
{
	struct fabric f;
	struct lid_report rep;
	load(&f, NET_A);
	/* two ports claim LID 5; listed high GUID first in ports[] order too */
	f.ports[endport(&f, 0x3001)].hw_lid = 5;
	f.ports[endport(&f, 0x1001)].hw_lid = 5;
	ck_assert_int_eq(lids_assign(&f, NULL, 0, &rep), 0);
	ck_assert_uint_eq(lid_of(&f, 0x1001), 5);
	ck_assert_uint_eq(lid_of(&f, 0x3001), 6);
	ck_assert_uint_eq(lid_of(&f, 0x50), 1);
	ck_assert_uint_eq(lid_of(&f, 0x100), 2);
	ck_assert_uint_eq(lid_of(&f, 0x1002), 3);
	ck_assert_uint_eq(lid_of(&f, 0x2001), 4);
	ck_assert_uint_eq(rep.kept_existing, 1);
	ck_assert_uint_eq(rep.conflicts, 1);
	check_index(&f);
	fabric_free(&f);
}
END_TEST

START_TEST(t_lmc_ranges)
{
	struct fabric f;
	struct lid_report rep;
	load(&f, NET_A);
	ck_assert_int_eq(lids_assign(&f, NULL, 2, &rep), 0);
	ck_assert_uint_eq(f.lmc, 2);
	/* base switch port 0 has LMC 0: one LID; CA ports get aligned ranges of 4 */
	ck_assert_uint_eq(lid_of(&f, 0x50), 1);
	ck_assert_uint_eq(lid_of(&f, 0x100), 2);
	ck_assert_uint_eq(lid_of(&f, 0x1001), 4);
	ck_assert_uint_eq(lid_of(&f, 0x1002), 8);
	ck_assert_uint_eq(lid_of(&f, 0x2001), 12);
	ck_assert_uint_eq(lid_of(&f, 0x3001), 16);
	ck_assert_uint_eq(f.max_lid, 19);
	for (uint32_t k = 0; k < 4; k++)
		ck_assert_uint_eq(f.lid_port[12 + k], endport(&f, 0x2001));
	ck_assert_uint_eq(f.lid_port[3], FAB_NONE);
	check_index(&f);
	fabric_free(&f);
}
END_TEST

START_TEST(t_lmc_misaligned_persisted)
{
	struct fabric f;
	struct guid_map m = { 0 };
	struct lid_report rep;
	load(&f, NET_A);
	ck_assert_int_eq(guid_map_put(&m, 0x1001, 6), 0);	/* not a multiple of 4 */
	ck_assert_int_eq(guid_map_put(&m, 0x2001, 12), 0);	/* aligned */
	ck_assert_int_eq(guid_map_put(&m, 0x3001, 13), 0);	/* inside 0x2001's range */
	f.ports[endport(&f, 0x1002)].hw_lid = 2;		/* misaligned too */
	ck_assert_int_eq(lids_assign(&f, &m, 2, &rep), 0);
	ck_assert_uint_eq(lid_of(&f, 0x2001), 12);
	ck_assert_uint_ne(lid_of(&f, 0x1001), 6);
	ck_assert_uint_ne(lid_of(&f, 0x3001), 13);
	ck_assert_uint_ne(lid_of(&f, 0x1002), 2);
	ck_assert_uint_eq(rep.kept_persisted, 1);
	ck_assert_uint_eq(rep.conflicts, 3);
	ck_assert_uint_eq(rep.assigned, N_A - 1);
	/* packed around the honoured range; switches take single LIDs */
	ck_assert_uint_eq(lid_of(&f, 0x50), 1);
	ck_assert_uint_eq(lid_of(&f, 0x100), 2);
	ck_assert_uint_eq(lid_of(&f, 0x1001), 4);
	ck_assert_uint_eq(lid_of(&f, 0x1002), 8);
	ck_assert_uint_eq(lid_of(&f, 0x3001), 16);
	check_index(&f);
	fabric_free(&f);
	guid_map_free(&m);
}
END_TEST

/* Absent GUID of a reservation in the filled-space tests. */
#define ABSENT(lid) (0xfe00000000ULL + (lid))

/*
 * Absent ports reserve every unicast LID but two, in an old file (no
 * times): all equally old, so the lowest GUIDs give theirs back first --
 * here the highest LIDs, so that neither LID order nor map order passes.
 */
START_TEST(t_reclaim_ties_by_guid)
{
	struct fabric f;
	struct guid_map m = { 0 };
	struct lid_report rep;
	load(&f, NET_A);
	for (uint32_t lid = 1; lid <= LID_UCAST_MAX; lid++)
		if (lid != 3 && lid != 0x8000)
			ck_assert_int_eq(guid_map_put(&m, ABSENT(LID_UCAST_MAX - lid),
						      lid), 0);
	ck_assert_int_eq(lids_assign(&f, &m, 0, &rep), 0);
	ck_assert_uint_eq(rep.assigned, N_A);
	ck_assert_uint_eq(rep.reclaimed, N_A - 2);
	ck_assert_uint_eq(rep.exhausted, 0);
	/* the free LIDs first, then the reclaimed ones */
	ck_assert_uint_eq(lid_of(&f, 0x50), 3);
	ck_assert_uint_eq(lid_of(&f, 0x100), 0x8000);
	for (int i = 2; i < N_A; i++)
		ck_assert_uint_eq(lid_of(&f, GUIDS_A[i]),
				  LID_UCAST_MAX - (uint32_t)(i - 2));
	check_index(&f);

	/* recording drops exactly the reclaimed reservations */
	ck_assert_int_eq(lids_record_at(&f, &m, 1000), 0);
	for (uint32_t k = 0; k < N_A - 2; k++)
		ck_assert_uint_eq(guid_map_get(&m, ABSENT(k)), FAB_NONE);
	ck_assert_uint_eq(guid_map_get(&m, ABSENT(N_A - 2)), LID_UCAST_MAX - (N_A - 2));
	ck_assert_uint_eq(m.used, LID_UCAST_MAX - 2 - (N_A - 2) + N_A);
	fabric_free(&f);
	guid_map_free(&m);
}
END_TEST

/*
 * The space is full of reservations with last-seen times: the oldest go
 * first, whatever their GUID or LID (an entry without a time, from an old
 * file, is the oldest of all); the next oldest is kept, and so is the age
 * of every reservation left.
 */
START_TEST(t_reclaim_oldest_first)
{
	static const uint32_t oldest[N_A] = { 40000, 7, 300, 49000, 12, 5000 };
	struct fabric f;
	struct guid_map m = { 0 };
	struct lid_report rep;
	load(&f, NET_A);
	for (uint32_t lid = 1; lid <= LID_UCAST_MAX; lid++) {
		ck_assert_int_eq(guid_map_put(&m, ABSENT(lid), lid), 0);
		ck_assert_int_eq(guid_map_set_aux(&m, ABSENT(lid), 2000000000), 0);
	}
	for (uint32_t k = 1; k < N_A; k++)	/* oldest[0] keeps no time */
		ck_assert_int_eq(guid_map_set_aux(&m, ABSENT(oldest[k]), 100 + k), 0);
	ck_assert_int_eq(guid_map_set_aux(&m, ABSENT(oldest[0]), 0), 0);
	ck_assert_int_eq(guid_map_set_aux(&m, ABSENT(13), 100 + N_A), 0);
	ck_assert_int_eq(lids_assign(&f, &m, 0, &rep), 0);
	ck_assert_uint_eq(rep.reclaimed, N_A);
	ck_assert_uint_eq(rep.exhausted, 0);
	ck_assert_uint_eq(rep.assigned, N_A);
	for (int i = 0; i < N_A; i++)	/* ports in GUID order, oldest first */
		ck_assert_uint_eq(lid_of(&f, GUIDS_A[i]), oldest[i]);
	check_index(&f);

	ck_assert_int_eq(lids_record_at(&f, &m, 3000000000u), 0);
	ck_assert_uint_eq(m.used, LID_UCAST_MAX);
	for (int i = 0; i < N_A; i++) {
		ck_assert_uint_eq(guid_map_get(&m, ABSENT(oldest[i])), FAB_NONE);
		ck_assert_uint_eq(guid_map_get(&m, GUIDS_A[i]), oldest[i]);
		ck_assert_uint_eq(guid_map_get_aux(&m, GUIDS_A[i]), 3000000000u);
	}
	ck_assert_uint_eq(guid_map_get(&m, ABSENT(13)), 13);
	ck_assert_uint_eq(guid_map_get_aux(&m, ABSENT(13)), 100 + N_A);
	ck_assert_uint_eq(guid_map_get_aux(&m, ABSENT(1)), 2000000000);

	/* the next sweep, from the recorded map, changes nothing */
	ck_assert_int_eq(lids_assign(&f, &m, 0, &rep), 0);
	ck_assert_uint_eq(rep.kept_persisted, N_A);
	ck_assert_uint_eq(rep.reclaimed, 0);
	for (int i = 0; i < N_A; i++)
		ck_assert_uint_eq(lid_of(&f, GUIDS_A[i]), oldest[i]);
	fabric_free(&f);
	guid_map_free(&m);
}
END_TEST

/*
 * Five switches and a host: with LMC 2 switch port 0 has one LID and the
 * CA port four.  LIDs 1-3 cannot hold an aligned range of 4, so they stay
 * free for the first three switches.
 */
static const char NET_B[] =
	"switchguid=0x10\n"
	"Switch\t4 \"S1\"\n"
	"[1]\t\"H1\"[1]\n"
	"[2]\t\"S2\"[2]\n"
	"\n"
	"switchguid=0x20\n"
	"Switch\t4 \"S2\"\n"
	"[2]\t\"S1\"[2]\n"
	"[3]\t\"S3\"[3]\n"
	"\n"
	"switchguid=0x30\n"
	"Switch\t4 \"S3\"\n"
	"[3]\t\"S2\"[3]\n"
	"[4]\t\"S4\"[4]\n"
	"\n"
	"switchguid=0x40\n"
	"Switch\t4 \"S4\"\n"
	"[4]\t\"S3\"[4]\n"
	"[1]\t\"S5\"[1]\n"
	"\n"
	"switchguid=0x50\n"
	"Switch\t4 \"S5\"\n"
	"[1]\t\"S4\"[1]\n"
	"\n"
	"caguid=0x1000\n"
	"Hca\t1 \"H1\"\n"
	"[1]\t\"S1\"[1]\n";

/*
 * LMC 2: reservations are whole aligned ranges of 4.  Switch 0x40 takes
 * back the oldest range and leaves three LIDs of it for switch 0x50; the
 * CA port needs a whole range and takes back the next oldest.
 */
START_TEST(t_reclaim_lmc_ranges)
{
	struct fabric f;
	struct guid_map m = { 0 };
	struct lid_report rep;
	load(&f, NET_B);
	for (uint32_t lid = 4; lid <= LID_UCAST_MAX; lid += 4) {
		ck_assert_int_eq(guid_map_put(&m, ABSENT(lid), lid), 0);
		ck_assert_int_eq(guid_map_set_aux(&m, ABSENT(lid), 5000), 0);
	}
	ck_assert_int_eq(guid_map_set_aux(&m, ABSENT(0x100), 10), 0);
	ck_assert_int_eq(guid_map_set_aux(&m, ABSENT(0x40), 20), 0);
	ck_assert_int_eq(lids_assign(&f, &m, 2, &rep), 0);
	ck_assert_uint_eq(lid_of(&f, 0x10), 1);
	ck_assert_uint_eq(lid_of(&f, 0x20), 2);
	ck_assert_uint_eq(lid_of(&f, 0x30), 3);
	ck_assert_uint_eq(lid_of(&f, 0x40), 0x100);
	ck_assert_uint_eq(lid_of(&f, 0x50), 0x101);
	ck_assert_uint_eq(lid_of(&f, 0x1001), 0x40);
	ck_assert_uint_eq(rep.reclaimed, 2);
	ck_assert_uint_eq(rep.exhausted, 0);
	for (uint32_t k = 0; k < 4; k++)
		ck_assert_uint_eq(f.lid_port[0x40 + k], endport(&f, 0x1001));
	ck_assert_uint_eq(f.max_lid, 0x101);	/* 0x102-0x103: spare, unused */
	check_index(&f);

	ck_assert_int_eq(lids_record_at(&f, &m, 6000), 0);
	ck_assert_uint_eq(guid_map_get(&m, ABSENT(0x100)), FAB_NONE);
	ck_assert_uint_eq(guid_map_get(&m, ABSENT(0x40)), FAB_NONE);
	ck_assert_uint_eq(guid_map_get(&m, ABSENT(0x44)), 0x44);
	fabric_free(&f);
	guid_map_free(&m);
}
END_TEST

/* A present port's persisted LID beats an absent GUID's claim on it. */
START_TEST(t_present_beats_absent)
{
	struct fabric f;
	struct guid_map m = { 0 };
	struct lid_report rep;
	load(&f, NET_A);
	ck_assert_int_eq(guid_map_put(&m, 0x3001, 5), 0);
	ck_assert_int_eq(guid_map_put(&m, 0x10, 5), 0);	/* absent, lower GUID */
	ck_assert_int_eq(lids_assign(&f, &m, 0, &rep), 0);
	ck_assert_uint_eq(lid_of(&f, 0x3001), 5);
	ck_assert_uint_eq(rep.kept_persisted, 1);
	ck_assert_uint_eq(rep.conflicts, 0);
	check_index(&f);
	ck_assert_int_eq(lids_record_at(&f, &m, 1), 0);
	ck_assert_uint_eq(guid_map_get(&m, 0x10), FAB_NONE);
	ck_assert_uint_eq(m.used, N_A);
	fabric_free(&f);
	guid_map_free(&m);
}
END_TEST

/*
 * More present ports than the space holds: 12 switches of 36 hosts with
 * LMC 7, 128 LIDs a CA port.  The switches take LIDs 1-12, CA ports the
 * ranges at 128, 256, ... 49024: 383 of the 432.  The three reservations
 * go first, and the rest are reported, at LID 0.
 */
START_TEST(t_exhausted_by_present)
{
	enum { SW = 12, HOSTS = 36 };
	size_t cap = 1 << 20, len = 0;
	char *net = malloc(cap);
	ck_assert_ptr_nonnull(net);
	for (int s = 0; s < SW; s++) {
		len += (size_t)snprintf(net + len, cap - len,
					"switchguid=0x%x\nSwitch\t%d \"S%d\"\n",
					0x100 + s, HOSTS, s);
		for (int h = 0; h < HOSTS; h++)
			len += (size_t)snprintf(net + len, cap - len,
						"[%d]\t\"H%d-%d\"[1]\n", h + 1, s, h);
		len += (size_t)snprintf(net + len, cap - len, "\n");
	}
	for (int s = 0; s < SW; s++)
		for (int h = 0; h < HOSTS; h++)
			len += (size_t)snprintf(net + len, cap - len,
						"caguid=0x%x\nHca\t1 \"H%d-%d\"\n[1]\t\"S%d\"[%d]\n\n",
						0x10000 + s * 0x100 + h * 2, s, h, s, h + 1);
	ck_assert_uint_lt(len, cap);
	struct fabric f;
	struct guid_map m = { 0 };
	struct lid_report rep;
	load(&f, net);
	free(net);
	ck_assert_int_eq(n_endports(&f), SW + SW * HOSTS);
	ck_assert_int_eq(guid_map_put(&m, 0xdead0001, 0x4000), 0);
	ck_assert_int_eq(guid_map_put(&m, 0xdead0002, 0x8000), 0);
	ck_assert_int_eq(guid_map_put(&m, 0xdead0003, 0xbf80), 0);
	ck_assert_int_eq(lids_assign(&f, &m, 7, &rep), 0);
	ck_assert_uint_eq(rep.reclaimed, 3);
	ck_assert_uint_eq(rep.assigned, SW + 383);
	ck_assert_uint_eq(rep.exhausted, SW * HOSTS - 383);
	uint32_t without = 0;
	for (uint32_t i = 0; i < f.n_ports; i++)
		without += fabric_is_endport(&f, i) && !f.ports[i].lid;
	ck_assert_uint_eq(without, rep.exhausted);
	ck_assert_uint_eq(f.max_lid, LID_UCAST_MAX);
	check_index(&f);
	fabric_free(&f);
	guid_map_free(&m);
}
END_TEST

/* Deleting from the open-addressed map keeps every other key reachable. */
START_TEST(t_guid_map_del)
{
	struct guid_map m = { 0 };
	for (uint64_t k = 1; k <= 3000; k++) {
		ck_assert_int_eq(guid_map_put(&m, k * 0x9e3779b1ULL, (uint32_t)k), 0);
		ck_assert_int_eq(guid_map_set_aux(&m, k * 0x9e3779b1ULL,
						  (uint32_t)k + 7), 0);
	}
	for (uint64_t k = 1; k <= 3000; k += 3)
		guid_map_del(&m, k * 0x9e3779b1ULL);
	guid_map_del(&m, 0x1234);	/* not there: nothing happens */
	ck_assert_uint_eq(m.used, 2000);
	for (uint64_t k = 1; k <= 3000; k++) {
		uint32_t want = (k - 1) % 3 ? (uint32_t)k : FAB_NONE;
		ck_assert_uint_eq(guid_map_get(&m, k * 0x9e3779b1ULL), want);
		ck_assert_uint_eq(guid_map_get_aux(&m, k * 0x9e3779b1ULL),
				  (k - 1) % 3 ? (uint32_t)k + 7 : 0);
	}
	/* a key put back after its delete starts without a second value */
	ck_assert_int_eq(guid_map_put(&m, 0x9e3779b1ULL, 1), 0);
	ck_assert_uint_eq(guid_map_get_aux(&m, 0x9e3779b1ULL), 0);
	ck_assert_int_eq(guid_map_set_aux(&m, 0x4321, 1), -1);
	guid_map_free(&m);
}
END_TEST

START_TEST(t_record_then_grow)
{
	struct fabric f, g;
	struct guid_map m = { 0 };
	struct lid_report rep;
	load(&f, NET_A);
	ck_assert_int_eq(guid_map_put(&m, 0xdead0001, 99), 0);
	ck_assert_int_eq(lids_assign(&f, &m, 0, &rep), 0);
	ck_assert_int_eq(lids_record(&f, &m), 0);
	ck_assert_uint_eq(m.used, N_A + 1);
	ck_assert_uint_eq(guid_map_get(&m, 0xdead0001), 99);
	for (int i = 0; i < N_A; i++)
		ck_assert_uint_eq(guid_map_get(&m, GUIDS_A[i]),
				  lid_of(&f, GUIDS_A[i]));

	/* a new host with a low GUID does not move anybody */
	load(&g, NET_A_PLUS);
	ck_assert_int_eq(lids_assign(&g, &m, 0, &rep), 0);
	for (int i = 0; i < N_A; i++)
		ck_assert_uint_eq(lid_of(&g, GUIDS_A[i]), lid_of(&f, GUIDS_A[i]));
	ck_assert_uint_eq(lid_of(&g, 0x501), N_A + 1);
	ck_assert_uint_eq(rep.kept_persisted, N_A);
	ck_assert_uint_eq(rep.assigned, 1);
	fabric_free(&f);
	fabric_free(&g);
	guid_map_free(&m);
}
END_TEST

/* Idle VFs (FPORT_NOLID): no LID, not counted, their old entry not honoured. */
START_TEST(t_nolid_ports)
{
	struct fabric f;
	struct guid_map m;
	struct lid_report rep;
	load(&f, NET_A);
	guid_map_init(&m, 16);
	guid_map_put(&m, 0x3001, 2);	/* H3's old LID */
	f.ports[endport(&f, 0x3001)].flags |= FPORT_NOLID;
	f.ports[endport(&f, 0x3001)].hw_lid = 5;	/* and what it holds */
	ck_assert_int_eq(lids_assign(&f, &m, 0, &rep), 0);
	ck_assert_uint_eq(lid_of(&f, 0x3001), 0);
	ck_assert_uint_eq(rep.exhausted, 0);
	ck_assert_uint_eq(rep.assigned + rep.kept_persisted + rep.kept_existing,
			  N_A - 1);
	/* LID 2 was not reserved for it: the others packed from 1 */
	for (int i = 0; i < N_A; i++)
		if (GUIDS_A[i] != 0x3001)
			ck_assert_uint_le(lid_of(&f, GUIDS_A[i]), N_A - 1);
	ck_assert_int_eq(lids_record(&f, &m), 0);
	/* its stale entry's LID went to another port: dropped */
	ck_assert_uint_eq(guid_map_get(&m, 0x3001), FAB_NONE);
	fabric_free(&f);
	guid_map_free(&m);
}
END_TEST

/* A VM's LID: the lowest free in the model, not an absent port's. */
START_TEST(t_alloc_vm)
{
	struct fabric f;
	struct guid_map m;
	struct lid_report rep;
	load(&f, NET_A);
	guid_map_init(&m, 16);
	guid_map_put(&m, 0x2001, 1);
	guid_map_put(&m, 0x1001, 3);
	guid_map_put(&m, 0x9999, 4);	/* absent: LID 4 stays reserved */
	uint32_t vf = endport(&f, 0x3001);
	f.ports[vf].flags |= FPORT_NOLID;
	ck_assert_int_eq(lids_assign(&f, &m, 0, &rep), 0);
	/* 1: H1, 3: H2/1, 2 and 5..: the switches and H2/2 */
	ck_assert_uint_eq(lid_of(&f, 0x2001), 1);
	ck_assert_uint_eq(lid_of(&f, 0x1001), 3);
	uint32_t used[0x10] = { 0 };
	for (uint32_t i = 0; i < f.n_ports; i++)
		if (f.ports[i].lid < 0x10)
			used[f.ports[i].lid] = 1;
	uint32_t expect = 1;
	while (used[expect] || expect == 4)
		expect++;
	ck_assert_uint_eq(lids_alloc_vm(&f, &m, vf), expect);
	ck_assert_uint_ne(expect, 4);
	/* the idle VF's own stale entry does not hold a LID back */
	guid_map_put(&m, 0x3001, expect);
	ck_assert_uint_eq(lids_alloc_vm(&f, &m, vf), expect);
	/* nothing was recorded */
	ck_assert_uint_eq(lid_of(&f, 0x3001), 0);
	fabric_free(&f);
	guid_map_free(&m);
}
END_TEST

static Suite *lids_suite(void)
{
	Suite *s = suite_create("lids");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, t_fresh_packed_in_guid_order);
	tcase_add_test(tc, t_independent_of_node_order);
	tcase_add_test(tc, t_persisted_honoured_absent_reserved);
	tcase_add_test(tc, t_persisted_beats_existing);
	tcase_add_test(tc, t_existing_kept);
	tcase_add_test(tc, t_existing_out_of_range_ignored);
	tcase_add_test(tc, t_duplicate_existing);
	tcase_add_test(tc, t_lmc_ranges);
	tcase_add_test(tc, t_lmc_misaligned_persisted);
	tcase_add_test(tc, t_reclaim_ties_by_guid);
	tcase_add_test(tc, t_reclaim_oldest_first);
	tcase_add_test(tc, t_reclaim_lmc_ranges);
	tcase_add_test(tc, t_present_beats_absent);
	tcase_add_test(tc, t_exhausted_by_present);
	tcase_add_test(tc, t_guid_map_del);
	tcase_add_test(tc, t_record_then_grow);
	tcase_add_test(tc, t_nolid_ports);
	tcase_add_test(tc, t_alloc_vm);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(lids_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
