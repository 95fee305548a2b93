/* Proofs of the SM_Key and the SMs that gave one (see smkey.h). */
#include "sm/smkey.h"

#include <sodium.h>
#include <stdlib.h>

/*
 * libsodium's crypto_shorthash (SipHash-2-4) gives exactly the 64 bits
 * the SMInfo SM_Key field holds, keyed by 128 bits: the SM_Key and a
 * constant naming this use, so that the proof is no value the key gives
 * for anything else.
 */
static const uint8_t proof_domain[8] = { 'S', 'M', 'I', 'n', 'f', 'o', 'K', '1' };

static void put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

uint64_t smkey_proof(uint64_t key, uint64_t from_guid, uint64_t to_guid)
{
	uint8_t k[crypto_shorthash_KEYBYTES];
	uint8_t in[16], out[crypto_shorthash_BYTES];
	put_be64(k, key);
	for (unsigned i = 0; i < sizeof(proof_domain); i++)
		k[8 + i] = proof_domain[i];
	put_be64(in, from_guid);
	put_be64(in + 8, to_guid);
	if (sodium_init() < 0)
		return 1;	/* no proof can be made: no peer can check one */
	crypto_shorthash(out, in, sizeof(in), k);
	uint64_t v = 0;
	for (unsigned i = 0; i < sizeof(out); i++)
		v = v << 8 | out[i];
	return v ? v : 1;	/* 0 is "no key" on the wire */
}

int smkey_peer_known(const struct smkey_peers *p, uint64_t guid)
{
	for (uint32_t i = 0; i < p->n; i++)
		if (p->guid[i] == guid)
			return 1;
	return 0;
}

int smkey_peer_add(struct smkey_peers *p, uint64_t guid)
{
	if (!guid || smkey_peer_known(p, guid))
		return 0;
	if (p->n == p->cap) {
		uint32_t cap = p->cap ? 2 * p->cap : 4;
		uint64_t *g = realloc(p->guid, cap * sizeof(*g));
		if (!g)
			return -1;
		p->guid = g;
		p->cap = cap;
	}
	p->guid[p->n++] = guid;
	return 0;
}

void smkey_peer_forget(struct smkey_peers *p, uint64_t guid)
{
	for (uint32_t i = 0; i < p->n; i++)
		if (p->guid[i] == guid) {
			p->guid[i] = p->guid[--p->n];
			return;
		}
}

void smkey_peers_free(struct smkey_peers *p)
{
	free(p->guid);
	p->guid = NULL;
	p->n = p->cap = 0;
}
