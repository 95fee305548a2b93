/*
 * The SM state machine (IBA vol. 1 §14.4): NOTACTIVE, DISCOVERING, STANDBY,
 * MASTER, the events that move between them, and the SM-to-SM protocol
 * that produces those events -- SMInfo Get and Set, the election after a
 * heavy sweep, a STANDBY polling its master, a MASTER re-reading the
 * SMInfo of the other SMs on each light sweep, and HANDOVER/ACKNOWLEDGE.
 *
 * Every state change goes through one table (smstate.c): an event a state
 * does not list is illegal, logged, and answered with an error status when
 * it came in an SMInfo Set.  The election is a pure function of the SMs
 * that answered (sm_elect), so that its rules can be tested alone.
 */
#ifndef IBSMD_SMSTATE_H
#define IBSMD_SMSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "mad/smp.h"
#include "mad/transport.h"
#include "sm/base/fabric.h"

struct sm;

enum sm_event {
	SME_ELECT_MASTER,	/* the sweep found nobody above us */
	SME_ELECT_STANDBY,	/* a master, or a higher SM about to be one */
	SME_ELECT_HANDOVER,	/* we are master and a higher SM showed up */
	SME_ELECT_WAIT,		/* we are master and a lower master must yield */
	SME_POLL_LOST,		/* the SM we poll stopped answering or left MASTER */
	SME_RCV_HANDOVER,	/* SMInfo Set(HANDOVER) from a master */
	SME_RCV_ACKNOWLEDGE,	/* SMInfo Set(ACKNOWLEDGE) from the SM we handed to */
	SME_RCV_DISABLE,	/* SMInfo Set(DISABLE) */
	SME_RCV_STANDBY,	/* SMInfo Set(STANDBY) */
	SME_RCV_DISCOVER,	/* SMInfo Set(DISCOVER) */
	SME_HANDOVER_DONE,	/* the SM we handed to is master (no ACK came) */
	SME_HANDOVER_FAILED,	/* it never took the subnet: keep it */
	SME_COUNT
};

/* What the election decided, and about whom. */
enum sm_verdict {
	SMV_MASTER,
	SMV_STANDBY,
	SMV_HANDOVER,
	SMV_WAIT,
};

/* What an event carries: the SM it is about and how to reach it. */
struct sm_ev {
	uint64_t guid;
	int priority;
	uint32_t lid;		/* its LID, 0 if unknown */
	int hops;		/* directed route to it, -1 if unknown */
	uint8_t path[FAB_MAX_HOPS + 1];
	const char *why;
};

/* Another SM as its SMInfo answered (port: index in the sweep's fabric). */
struct remote_sm {
	struct sm *owner;
	uint32_t port;
	struct smp_sminfo info;
	uint8_t answered;
	uint8_t key_ok;		/* its SM_Key is ours */
	uint8_t light;		/* asked by a light sweep */
};


/*
 * The election (pure): my_state is DISCOVERING, STANDBY or MASTER.  A
 * master with our key is followed; a higher SM with our key is
 * followed (or, by a master, handed over to once it is STANDBY); a master keeps the subnet
 * and waits for a lower master with our key to hand over.  keyed: we
 * hold an SM_Key (not 0).  Then an SM whose SM_Key differs is a rogue
 * (sm/rogue.h) and counts for nothing, whatever its state and priority;
 * without one, a master of another key is followed rather than fought.
 * *who is the index of the SM the verdict is about.
 */
enum sm_verdict sm_elect(int my_state, int my_priority, uint64_t my_guid, int keyed,
			 const struct remote_sm *r, uint32_t n, uint32_t *who);

/* Is event ev legal in state st (the table's answer)? */
int sm_event_legal(int st, int ev);

/* ---- the daemon's side (sm/smstate.c on struct sm) ---- */

/* After discovery: asks every other IsSM port for its SMInfo, then elects. */
void smstate_discovered(struct sm *sm);
/* A light sweep's share: SMInfo of the IsSM ports of the model; returns how
 * many queries were queued (each ends in smstate_light_answer's count). */
uint32_t smstate_light_queries(struct sm *sm);
/* An IsSM port that never answered SMInfo changed: ask it again. */
void smstate_forget_silent(struct sm *sm, uint64_t port_guid);
/*
 * What the election asks of the sweep (sm/heavy.c, sm/light.c): given
 * at init by sm/daemon.c, so that the state machine calls into no module
 * above it.
 */
struct smstate_hooks {
	/* MASTER: LIDs, routes, writes on the discovery just made */
	void (*configure)(struct sm *sm);
	/* drop the discovery in progress: the sweep ends unconfigured */
	void (*abandon)(struct sm *sm);
	/* a light sweep's SMInfo answer: why a heavy sweep is needed, or NULL */
	void (*light_answer)(struct sm *sm, const char *why);
};
/*
 * The election's state as others may read it (ibsmctl status, metrics,
 * tests); only sm/smstate.c changes it.
 */
/* SM-to-SM protocol counters, shown by ibsmctl status. */
struct sm_counters {
	uint64_t handovers_sent, handovers_done, handovers_received;
	uint64_t acks_sent, acks_received;
	uint64_t sets_received, sets_refused;
	uint64_t key_mismatches;
};

struct election_status {
	/* STANDBY, or a MASTER waiting for a lower master's HANDOVER: the SM polled */
	uint64_t master_guid;
	uint32_t master_lid;
	int master_priority;
	int master_hops;
	uint32_t master_act_count;
	int waiting_handover;
	/* MASTER handing over to ho_guid (0: not) */
	uint64_t ho_guid;
	uint64_t ho_failed_guid;	/* refused or never took over: keep the subnet */
	uint64_t key_mismatch_guid, key_mismatch_key;	/* the last mismatch seen */
	uint32_t n_silent;		/* IsSM ports that never answered SMInfo */
	struct sm_counters smc;
};
const struct election_status *election_status(const struct sm *sm);
/* The IsSM ports that never answered SMInfo, by port GUID (n_silent of them). */
const uint64_t *election_silent(const struct sm *sm);
/* The rogue SMs seen (sm/rogue.h), NULL before smstate_init(). */
struct rogues;
const struct rogues *election_rogues(const struct sm *sm);
/*
 * Into ibsmctl status's object o: the master followed (STANDBY), the
 * HANDOVER awaited or sent, the last SM_Key mismatch, the protocol's counts.
 */
struct json_t;
void election_to_ctl(const struct sm *sm, struct json_t *o);
/* M_Key: the discovery cut short (sm/discover/mkcut.h), as m_key.unmanageable in o. */
void election_mkey_to_ctl(const struct sm *sm, struct json_t *o);
/*
 * M_Key: the heavy sweep's own port did not answer (sm->sweep.disc):
 * judged, noted and logged; 1 when a MASTER that asked us is followed
 * instead (the sweep is over, the discovery freed).
 */
int smstate_own_port_refused(struct sm *sm);
/*
 * The receive path's first stop: an SA answer to the election's own
 * queries (the neighbour map read from the master's SA while not
 * master, sm/discover/nbrlearn.h).  1 if taken.
 */
int election_sa_input(struct sm *sm, const uint8_t *mad, size_t len,
		      const struct mad_addr *from, int status);
/*
 * Whether the heavy sweep starting spares M_Key-0 NodeInfo Gets into a
 * fabric another SM keyed (sm/discover/sweep.h): a SM not master that
 * is not yet waiting out a cut (it may find the master beyond by its
 * port's MasterSMLID, and learn the map, without a violation).
 */
int smstate_spare_keyless(const struct sm *sm);
/* The retry of a sweep cut short by M_Key: the sweep interval (ms); 0: none. */
uint64_t election_cut_retry_ms(const struct sm *sm);

/* Timers and teardown. */
int smstate_init(struct sm *sm, const struct smstate_hooks *h);
void smstate_free(struct sm *sm);
/*
 * The other SMs whose SMInfo the last discovery read (at most max into
 * out), as they answered: the SA's SMInfoRecords.  Returns how many.
 */
uint32_t election_known_sms(const struct sm *sm, struct smp_sminfo *out, uint32_t max);
/* ActCount as SMInfo carries it: advances with every MAD the SM sends. */
uint32_t smstate_act_count(const struct sm *sm);

#endif
