/*
 * Rogue SMs: ports that answer SMInfo as an SM with an SM_Key not ours
 * (IBA vol. 1 §14.4.1: SMs of different keys cannot talk, so neither can
 * yield to the other).  The SM is never obeyed -- no STANDBY behind it,
 * no HANDOVER to it (sm_elect) -- and, under the policy's `sm.rogue:
 * isolate`, the switch port that faces it is disabled (PortInfo
 * PortPhysicalState = Disabled), so that it cannot rewrite the fabric
 * either.  A disabled port stays so until an administrator enables it
 * (ibportstate LID PORT enable); ibsmd never enables a port itself.
 * What is seen is kept for `ibsmctl status` and the metrics.
 */
#ifndef IBSMD_ROGUE_H
#define IBSMD_ROGUE_H

#include <stdint.h>

#include "mad/smp.h"
#include "sm/base/fabric.h"

struct txn_engine;
struct json_t;

enum rogue_mode { ROGUE_ISOLATE, ROGUE_REPORT };

struct rogues;

struct rogues *rogues_new(void);
void rogues_free(struct rogues *rg);
/*
 * The SM on end port `port` of f answered SMInfo s with a key not ours:
 * remembered and, in ROGUE_ISOLATE, the switch port facing it disabled
 * through txn (at most once per ROGUE_RETRY_MS per rogue).  Returns 1
 * when this SM was not known as a rogue before.
 */
int rogues_seen(struct rogues *rg, struct txn_engine *txn, const struct fabric *f,
		uint32_t port, const struct smp_sminfo *s, enum rogue_mode mode);
/* How many rogue SMs were seen, and how many of them were cut off. */
uint32_t rogues_count(const struct rogues *rg);
uint64_t rogues_isolations(const struct rogues *rg);
/* Into ibsmctl status's object o: "rogue_sms": [...] (nothing when none). */
void rogues_to_ctl(const struct rogues *rg, struct json_t *o);

#endif
