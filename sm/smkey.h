/*
 * Who may read our SM_Key (IBA vol. 1 §14.4.1, SMInfo): a SubnGet(SMInfo)
 * is answered with SM_Key 0 unless the requester proved that it holds the
 * key already.  Two ways to prove it:
 *
 *  - an ibsmd's SMInfo Get carries, in the SM_Key field of its own SMInfo,
 *    smkey_proof(key, its port GUID, the GUID of the port asked): a keyed
 *    hash that shows the key without giving it away, bound to the two
 *    ports so that a host that receives one (a port claiming IsSM is sent
 *    the master's Gets) cannot use it anywhere else;
 *  - an SM that sends no proof (OpenSM's Gets carry no SMInfo) is asked
 *    for its own SMInfo before it is answered: if its answer carries our
 *    key, it holds the key (smkey_peers remembers it by port GUID).
 *
 * Pure: no loop, no daemon.
 */
#ifndef IBSMD_SMKEY_H
#define IBSMD_SMKEY_H

#include <stdint.h>

/* The proof that the SM on port from knows key, for the port to (never 0). */
uint64_t smkey_proof(uint64_t key, uint64_t from_guid, uint64_t to_guid);

/* Port GUIDs of the SMs that showed us our key. */
struct smkey_peers {
	uint64_t *guid;
	uint32_t n, cap;
};

int smkey_peer_known(const struct smkey_peers *p, uint64_t guid);
/* Returns 0, or -1 when out of memory (the SM is asked again next time). */
int smkey_peer_add(struct smkey_peers *p, uint64_t guid);
void smkey_peer_forget(struct smkey_peers *p, uint64_t guid);
void smkey_peers_free(struct smkey_peers *p);

#endif
