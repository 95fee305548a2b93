/*
 * The neighbour map learned from the master's SA (sm/model/neighbors.h,
 * nbr_from_link_records): a GetTable of every NodeRecord, then of every
 * LinkRecord, sent by LID to the master through an SA client of its own
 * (traps/host/saclient.h) on the SM's transport.  SA GMPs are not M_Key
 * checked (IBA vol. 1 14.2.4: the M_Key guards SMPs), so a standby that
 * holds the secret but no map -- its Gets past its own link carry key 0
 * and are dropped at ProtectBits 2 and 3 -- learns there which port GUID
 * lies across every link, and derives every key from it.
 *
 * No struct sm: the owner (sm/smstate.c) gives the loop, the transport,
 * the map and the master's LID, and routes the SA's answers here.
 */
#ifndef IBSMD_NBRLEARN_H
#define IBSMD_NBRLEARN_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "mad/transport.h"
#include "sm/model/neighbors.h"

struct nbr_learn;

/* rc 0: links link ends changed m (0: it held them all); rc < 0: the
 * reason in why (no answer, an error status, out of memory). */
typedef void (*nbr_learn_done_fn)(void *arg, int rc, int links, const char *why);

/* Starts; NULL on ENOMEM or when the first query cannot be sent. */
struct nbr_learn *nbr_learn_start(struct event_base *base, const struct mad_transport *t,
				  uint32_t master_lid, uint64_t sa_key, struct nbr_map *m,
				  nbr_learn_done_fn done, void *arg);
/* An SA answer to us while it runs: 1 if taken (none once done was
 * called; the owner frees it outside that call). */
int nbr_learn_input(struct nbr_learn *l, const uint8_t *mad, size_t len,
		    const struct mad_addr *from, int status);
void nbr_learn_free(struct nbr_learn *l);

#endif
