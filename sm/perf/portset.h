/*
 * A set of ports taken from the fabric model, sorted by (node GUID, port
 * number), and carried from one reading of the model to the next by that
 * key: the performance manager's targets (sm/perfmgr.c) and dFtree's
 * reads (sm/dftree.c).  Each owner decides which ports it wants and what
 * an element holds; the key, the order, the lookup and the carry-over
 * are this file's.
 *
 * An element is the owner's struct with a struct portset_key as its first
 * member (PORTSET_ELEMENT checks it); an array of n of them, size bytes
 * each.  Keys are unique in a set (a node GUID is the model's key, a port
 * number one of its node's), so the order is the key's alone.
 */
#ifndef IBSMD_PORTSET_H
#define IBSMD_PORTSET_H

#include <stddef.h>
#include <stdint.h>

struct portset_key {
	uint64_t guid;		/* node GUID */
	uint8_t port;		/* port number */
};

/* In the owner's file, after its element's struct: the key comes first. */
#define PORTSET_ELEMENT(type) \
	_Static_assert(offsetof(type, key) == 0, \
		       #type ": struct portset_key first (sm/perf/portset.h)")

/* Sorts el[0..n) by (node GUID, port number). */
void portset_sort(void *el, uint32_t n, size_t size);

/* The element of the sorted el[0..n) with that key, or NULL (n may be 0). */
void *portset_find(const void *el, uint32_t n, size_t size, uint64_t guid,
		   uint8_t port);

/*
 * What an element of the new set takes from the previous set's element
 * with the same key: the owner's history.
 */
typedef void portset_carry_fn(void *now, const void *prev);

/*
 * For every element of the sorted el[0..n) whose key the sorted
 * prev[0..n_prev) holds, carry(element, previous element); an element
 * with a new key keeps what it has, a previous one whose key is gone is
 * not visited (the owner frees prev after).
 */
void portset_carry(void *el, uint32_t n, const void *prev, uint32_t n_prev,
		   size_t size, portset_carry_fn *carry);

#endif
