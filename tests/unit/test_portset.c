/*
 * The ports the performance manager and dFtree read, as a set
 * (sm/perf/portset.h): the order by (node GUID, port number), lookup and
 * its misses, the previous round's history carried over by key (ports
 * added, gone, moved in the array) and empty sets, for elements of more
 * than one size.
 */
#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sm/perf/portset.h"

/* A small element: the key, history and where it came from. */
struct el {
	struct portset_key key;
	uint32_t hist;		/* carried */
	uint32_t tag;		/* the element's own, never carried */
};
PORTSET_ELEMENT(struct el);

/* A large one, of an odd size: the stride is the caller's. */
struct big {
	struct portset_key key;
	char name[61];
	uint8_t hist;
};
PORTSET_ELEMENT(struct big);

#define HI 0x8000000000000001ull	/* a GUID with the top bit set */

static void carry_el(void *now, const void *prev)
{
	struct el *x = now;
	const struct el *o = prev;
	x->hist = o->hist;
}

static void carry_big(void *now, const void *prev)
{
	struct big *x = now;
	const struct big *o = prev;
	x->hist = o->hist;
}

static struct el mk(uint64_t guid, uint8_t port, uint32_t hist, uint32_t tag)
{
	struct el e;
	memset(&e, 0, sizeof(e));
	e.key.guid = guid;
	e.key.port = port;
	e.hist = hist;
	e.tag = tag;
	return e;
}

START_TEST(sorts_by_guid_then_port)
{
	/* unsigned GUIDs (the top bit is not a sign), ports 1..255 */
	struct el a[] = {
		mk(HI, 1, 0, 0), mk(2, 255, 0, 1), mk(2, 1, 0, 2), mk(1, 7, 0, 3),
		mk(2, 128, 0, 4), mk(0x10, 3, 0, 5), mk(HI, 0, 0, 6),
	};
	const struct { uint64_t guid; uint8_t port; uint32_t tag; } want[] = {
		{ 1, 7, 3 }, { 2, 1, 2 }, { 2, 128, 4 }, { 2, 255, 1 },
		{ 0x10, 3, 5 }, { HI, 0, 6 }, { HI, 1, 0 },
	};
	uint32_t n = sizeof(a) / sizeof(a[0]);
	portset_sort(a, n, sizeof(a[0]));
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_uint_eq(a[i].key.guid, want[i].guid);
		ck_assert_uint_eq(a[i].key.port, want[i].port);
		ck_assert_uint_eq(a[i].tag, want[i].tag);	/* the element moved whole */
	}
}
END_TEST

START_TEST(sorts_large_elements)
{
	struct big b[3];
	memset(b, 0, sizeof(b));
	for (int i = 0; i < 3; i++) {
		b[i].key.guid = (uint64_t)(3 - i);
		b[i].key.port = 1;
		snprintf(b[i].name, sizeof(b[i].name), "node%d", 3 - i);
	}
	portset_sort(b, 3, sizeof(b[0]));
	for (int i = 0; i < 3; i++) {
		char want[16];
		snprintf(want, sizeof(want), "node%d", i + 1);
		ck_assert_uint_eq(b[i].key.guid, (uint64_t)(i + 1));
		ck_assert_str_eq(b[i].name, want);
	}
	struct big *hit = portset_find(b, 3, sizeof(b[0]), 2, 1);
	ck_assert_ptr_eq(hit, &b[1]);
}
END_TEST

START_TEST(finds_and_misses)
{
	struct el a[] = { mk(2, 1, 0, 0), mk(2, 3, 0, 1), mk(5, 2, 0, 2), mk(HI, 9, 0, 3) };
	uint32_t n = sizeof(a) / sizeof(a[0]);
	for (uint32_t i = 0; i < n; i++)
		ck_assert_ptr_eq(portset_find(a, n, sizeof(a[0]), a[i].key.guid, a[i].key.port),
				 &a[i]);
	ck_assert_ptr_null(portset_find(a, n, sizeof(a[0]), 1, 1));	/* below the first */
	ck_assert_ptr_null(portset_find(a, n, sizeof(a[0]), UINT64_MAX, 9));	/* past the last */
	ck_assert_ptr_null(portset_find(a, n, sizeof(a[0]), 2, 2));	/* its node, not that port */
	ck_assert_ptr_null(portset_find(a, n, sizeof(a[0]), 3, 1));	/* between two nodes */
	ck_assert_ptr_null(portset_find(a, n, sizeof(a[0]), 5, 0));
	ck_assert_ptr_null(portset_find(a, n, sizeof(a[0]), 9, 2));	/* another node's port */
}
END_TEST

START_TEST(empty_sets)
{
	struct el one = mk(4, 1, 7, 0);
	portset_sort(NULL, 0, sizeof(one));
	ck_assert_ptr_null(portset_find(NULL, 0, sizeof(one), 4, 1));
	ck_assert_ptr_null(portset_find(&one, 0, sizeof(one), 4, 1));	/* n, not the array */
	/* no previous set: nothing carried */
	struct el now = mk(4, 1, 0, 0);
	portset_carry(&now, 1, NULL, 0, sizeof(now), carry_el);
	ck_assert_uint_eq(now.hist, 0);
	/* no new set: the previous is not touched, nothing called */
	portset_carry(NULL, 0, &one, 1, sizeof(one), carry_el);
	ck_assert_uint_eq(one.hist, 7);
}
END_TEST

START_TEST(carries_by_key)
{
	/* the last round: four ports with history */
	struct el prev[] = {
		mk(1, 1, 11, 0), mk(1, 2, 12, 0), mk(2, 1, 21, 0), mk(3, 3, 33, 0),
	};
	/*
	 * Now: (1,1) gone, (1,2) and (2,1) stay but stand one place earlier
	 * and later, (3,3) gone though its node has (3,4), new (0,1), (2,2)
	 * and (4,1); given in the model's order, not sorted.
	 */
	struct el now[] = {
		mk(4, 1, 0, 1), mk(2, 1, 0, 2), mk(3, 4, 0, 3), mk(0, 1, 0, 4),
		mk(1, 2, 0, 5), mk(2, 2, 0, 6),
	};
	uint32_t n = sizeof(now) / sizeof(now[0]);
	portset_sort(now, n, sizeof(now[0]));
	portset_carry(now, n, prev, 4, sizeof(prev[0]), carry_el);
	const struct { uint64_t guid; uint8_t port; uint32_t hist, tag; } want[] = {
		{ 0, 1, 0, 4 }, { 1, 2, 12, 5 }, { 2, 1, 21, 2 },
		{ 2, 2, 0, 6 }, { 3, 4, 0, 3 }, { 4, 1, 0, 1 },
	};
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_uint_eq(now[i].key.guid, want[i].guid);
		ck_assert_uint_eq(now[i].key.port, want[i].port);
		ck_assert_uint_eq(now[i].hist, want[i].hist);
		ck_assert_uint_eq(now[i].tag, want[i].tag);	/* its own kept */
	}
	/* the previous set is read, not written */
	ck_assert_uint_eq(prev[0].hist, 11);
	ck_assert_uint_eq(prev[3].hist, 33);
	/* gone ports are not found in the new set */
	ck_assert_ptr_null(portset_find(now, n, sizeof(now[0]), 1, 1));
	ck_assert_ptr_null(portset_find(now, n, sizeof(now[0]), 3, 3));
}
END_TEST

START_TEST(carries_large_elements)
{
	struct big prev[2], now[3];
	memset(prev, 0, sizeof(prev));
	memset(now, 0, sizeof(now));
	prev[0].key = (struct portset_key){ .guid = 7, .port = 1 };
	prev[0].hist = 70;
	prev[1].key = (struct portset_key){ .guid = 9, .port = 1 };
	prev[1].hist = 90;
	now[0].key = (struct portset_key){ .guid = 9, .port = 1 };
	now[1].key = (struct portset_key){ .guid = 8, .port = 1 };
	now[2].key = (struct portset_key){ .guid = 7, .port = 1 };
	portset_sort(now, 3, sizeof(now[0]));
	portset_carry(now, 3, prev, 2, sizeof(prev[0]), carry_big);
	ck_assert_uint_eq(now[0].hist, 70);
	ck_assert_uint_eq(now[1].hist, 0);
	ck_assert_uint_eq(now[2].hist, 90);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("portset");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, sorts_by_guid_then_port);
	tcase_add_test(tc, sorts_large_elements);
	tcase_add_test(tc, finds_and_misses);
	tcase_add_test(tc, empty_sets);
	tcase_add_test(tc, carries_by_key);
	tcase_add_test(tc, carries_large_elements);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
