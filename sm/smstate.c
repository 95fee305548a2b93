/*
 * The SM state machine and the SM-to-SM protocol (see smstate.h).
 *
 * The table below is the whole state machine: a (state, event) pair that
 * is not in it is illegal.  The table alone sets the state: on a
 * transition the SM enters the table's next state, then the action does
 * the transition's work in it, told the state it came from.  What the
 * spec leaves open is decided as OpenSM does it (osm_sm_state_mgr.c) where
 * the two must work together: a master that finds a higher SM hands over
 * to it; a master that finds a lower master waits for that one's
 * HANDOVER; a SM that sends ACKNOWLEDGE says STANDBY in it, because it is
 * still one.
 * OpenSM never sends ACKNOWLEDGE, so a master handing over also polls its
 * successor and takes "it is MASTER now" as the acknowledgement.
 */
#include "sm/smstate.h"

#include <infiniband/mad.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/txn.h"
#include "sm/daemon.h"
#include "sm/ctl/control.h"
#include "sm/discover/mkcut.h"
#include "sm/discover/nbrlearn.h"
#include "sm/base/log.h"
#include "sm/base/clock.h"
#include "sm/hookevents.h"
#include "sm/recv.h"
#include "sm/rogue.h"
#include "sm/sdnotify.h"
#include "sm/smkey.h"
#include "sm/sweeper.h"

#include <time.h>

#define KEY_CHECKS_MAX		8	/* SMInfo Gets held for a key check at once */
#define KEY_UNPROVEN_KEEP	16	/* senders that failed one, remembered ... */
#define KEY_UNPROVEN_MS		10000	/* ... and answered SM_Key 0 at once for this long */

struct key_check;

/*
 * The election's own state: what others read (st), the SMs polled and
 * asked, the timers.  One per SM, made by smstate_init().
 */
struct election {
	struct election_status st;
	const struct smstate_hooks *hooks;	/* the sweep's side */
	struct event *poll_timer;	/* STANDBY: polling the master */
	struct event *ho_timer;		/* MASTER handing over: the ACK's wait */
	struct remote_sm *sms;		/* the heavy sweep's SMInfo answers */
	uint32_t n_sms, sms_pending;
	struct remote_sm *light_sms;	/* the light sweep's */
	uint32_t cap_light_sms;
	uint8_t master_path[FAB_MAX_HOPS + 1];
	int poll_failures;
	int poll_sent, poll_answered;
	struct sm_ev ho_to;
	int ho_tries;
	uint64_t *silent_sms;		/* IsSM ports that never answered SMInfo */
	uint32_t cap_silent;
	struct smkey_peers peers;	/* SMs that showed us our SM_Key */
	struct rogues *rogues;		/* SMs of another key */
	struct key_check *checks;	/* SMInfo Gets held while the sender is asked */
	uint32_t n_checks;
	struct unproven {		/* senders that did not prove the key, lately */
		uint32_t lid;
		int hops;
		uint8_t path[FAB_MAX_HOPS + 1];
		uint64_t at_ms;
	} unproven[KEY_UNPROVEN_KEEP];
	uint32_t next_unproven;
	/*
	 * M_Key (sm/discover/mkcut.h): the last discovery cut short, and
	 * since when (wall-clock seconds; 0: not waiting -- we follow a
	 * master, or no cut) the SM waits for the leases of what refused it;
	 * a MASTER whose SMInfo Get reached us (our own port refusing, it is
	 * the only sign of a master we get) and when.
	 */
	struct mkcut cut;
	uint64_t cut_since;
	struct sm_ev asked_by;
	uint64_t asked_at_ms;
	struct nbr_learn *learn;	/* the map read from the master's SA */
	uint32_t learn_lid;
};

#define HANDOVER_WAIT_MS 1000	/* for ACKNOWLEDGE, before polling the successor */
#define HANDOVER_TRIES   3	/* HANDOVER sent this often before giving up */

typedef void (*sm_action)(struct sm *, const struct sm_ev *, int from);

static void act_configure(struct sm *, const struct sm_ev *, int);
static void act_follow(struct sm *, const struct sm_ev *, int);
static void act_hand_over(struct sm *, const struct sm_ev *, int);
static void act_wait(struct sm *, const struct sm_ev *, int);
static void act_rediscover(struct sm *, const struct sm_ev *, int);
static void act_take_over(struct sm *, const struct sm_ev *, int);
static void act_ack(struct sm *, const struct sm_ev *, int);
static void act_ack_and_sweep(struct sm *, const struct sm_ev *, int);
static void act_handed_over(struct sm *, const struct sm_ev *, int);
static void act_keep_subnet(struct sm *, const struct sm_ev *, int);
static void act_disable(struct sm *, const struct sm_ev *, int);
static void act_nothing(struct sm *, const struct sm_ev *, int);

static const struct transition {
	uint8_t state;
	uint8_t event;
	uint8_t next;
	sm_action act;
} fsm[] = {
	{ SMS_DISCOVERING, SME_ELECT_MASTER,    SMS_MASTER,      act_configure },
	{ SMS_DISCOVERING, SME_ELECT_STANDBY,   SMS_STANDBY,     act_follow },
	{ SMS_DISCOVERING, SME_RCV_HANDOVER,    SMS_DISCOVERING, act_ack },
	{ SMS_STANDBY,     SME_ELECT_MASTER,    SMS_MASTER,      act_configure },
	{ SMS_STANDBY,     SME_ELECT_STANDBY,   SMS_STANDBY,     act_follow },
	{ SMS_STANDBY,     SME_POLL_LOST,       SMS_DISCOVERING, act_rediscover },
	{ SMS_STANDBY,     SME_RCV_DISCOVER,    SMS_DISCOVERING, act_rediscover },
	{ SMS_STANDBY,     SME_RCV_HANDOVER,    SMS_MASTER,      act_take_over },
	{ SMS_STANDBY,     SME_RCV_DISABLE,     SMS_NOTACTIVE,   act_disable },
	{ SMS_STANDBY,     SME_RCV_ACKNOWLEDGE, SMS_STANDBY,     act_nothing },
	{ SMS_NOTACTIVE,   SME_RCV_STANDBY,     SMS_STANDBY,     act_follow },
	{ SMS_MASTER,      SME_ELECT_MASTER,    SMS_MASTER,      act_configure },
	{ SMS_MASTER,      SME_ELECT_STANDBY,   SMS_STANDBY,     act_follow },
	{ SMS_MASTER,      SME_ELECT_HANDOVER,  SMS_MASTER,      act_hand_over },
	{ SMS_MASTER,      SME_ELECT_WAIT,      SMS_MASTER,      act_wait },
	{ SMS_MASTER,      SME_POLL_LOST,       SMS_MASTER,      act_rediscover },
	{ SMS_MASTER,      SME_RCV_HANDOVER,    SMS_MASTER,      act_ack_and_sweep },
	{ SMS_MASTER,      SME_RCV_ACKNOWLEDGE, SMS_STANDBY,     act_handed_over },
	{ SMS_MASTER,      SME_HANDOVER_DONE,   SMS_STANDBY,     act_handed_over },
	{ SMS_MASTER,      SME_HANDOVER_FAILED, SMS_MASTER,      act_keep_subnet },
	{ SMS_MASTER,      SME_RCV_DISCOVER,    SMS_DISCOVERING, act_rediscover },
};

static const char *const event_names[SME_COUNT] = {
	[SME_ELECT_MASTER] = "elected master",
	[SME_ELECT_STANDBY] = "found a master or a higher SM",
	[SME_ELECT_HANDOVER] = "found a higher SM",
	[SME_ELECT_WAIT] = "found a lower master",
	[SME_POLL_LOST] = "polled SM lost",
	[SME_RCV_HANDOVER] = "HANDOVER",
	[SME_RCV_ACKNOWLEDGE] = "ACKNOWLEDGE",
	[SME_RCV_DISABLE] = "DISABLE",
	[SME_RCV_STANDBY] = "STANDBY",
	[SME_RCV_DISCOVER] = "DISCOVER",
	[SME_HANDOVER_DONE] = "successor is master",
	[SME_HANDOVER_FAILED] = "handover failed",
};

static const char *sm_event_name(int ev)
{
	return ev >= 0 && ev < SME_COUNT && event_names[ev] ? event_names[ev] : "?";
}

static const struct transition *find_transition(int st, int ev)
{
	for (size_t i = 0; i < sizeof(fsm) / sizeof(fsm[0]); i++)
		if (fsm[i].state == st && fsm[i].event == ev)
			return &fsm[i];
	return NULL;
}

int sm_event_legal(int st, int ev)
{
	return find_transition(st, ev) != NULL;
}

/* The master as we see it: ourselves, the SM we follow, or 0 (none known). */
static uint64_t master_seen(const struct sm *sm)
{
	if (sm->state == SMS_MASTER)
		return sm->tr.port_guid;
	return sm->state == SMS_STANDBY ? sm->el->st.master_guid : 0;
}

/* Runs event ev; returns -1 (and changes nothing) when it is illegal. */
static int fsm_run(struct sm *sm, enum sm_event ev, const struct sm_ev *arg)
{
	const struct transition *t = find_transition(sm->state, ev);
	if (!t) {
		log_warn("SM state machine: %s is not legal in state %s; ignored",
			 sm_event_name(ev), sm_state_name(sm->state));
		return -1;
	}
	int from = sm->state;
	uint64_t was = master_seen(sm);
	if (t->next != from) {
		log_notice("SM state %s -> %s (%s)", sm_state_name(from),
			   sm_state_name(t->next), sm_event_name(ev));
		sm->state = t->next;
	}
	t->act(sm, arg, from);
	if (sm->state != from || master_seen(sm) != was)
		hookev_master_changed(sm->hook, sm->state, master_seen(sm));
	return 0;
}

/* ---- the election ---- */

/* Does SM a (priority, guid) outrank b?  Higher priority, then lower GUID. */
static int sm_outranks(int pa, uint64_t ga, int pb, uint64_t gb)
{
	return pa != pb ? pa > pb : ga < gb;
}

static int ranks_above(const struct remote_sm *a, const struct remote_sm *b)
{
	return sm_outranks(a->info.priority, a->info.guid, b->info.priority,
			   b->info.guid);
}

enum sm_verdict sm_elect(int my_state, int my_priority, uint64_t my_guid, int keyed,
			 const struct remote_sm *r, uint32_t n, uint32_t *who)
{
	uint32_t master = UINT32_MAX, foreign = UINT32_MAX, higher = UINT32_MAX;
	for (uint32_t i = 0; i < n; i++) {
		const struct remote_sm *x = &r[i];
		if (!x->answered || x->info.state == SMS_NOTACTIVE ||
		    x->info.guid == my_guid)
			continue;
		if (!x->key_ok) {
			/*
			 * A keyed SM obeys no SM of another key (a rogue,
			 * sm/rogue.h); one with no key (SM_Key 0) has nothing to
			 * tell a rogue by and follows its master, as OpenSM
			 * does with sm_key 0.
			 */
			if (!keyed && x->info.state == SMS_MASTER &&
			    (foreign == UINT32_MAX || ranks_above(x, &r[foreign])))
				foreign = i;
			continue;
		}
		if (x->info.state == SMS_MASTER &&
		    (master == UINT32_MAX || ranks_above(x, &r[master])))
			master = i;
		/*
		 * A master hands over only to a STANDBY (or a master): one
		 * still DISCOVERING goes STANDBY behind us first, and the next
		 * light sweep finds it there.
		 */
		if (my_state == SMS_MASTER && x->info.state == SMS_DISCOVERING)
			continue;
		if (sm_outranks(x->info.priority, x->info.guid, my_priority, my_guid) &&
		    (higher == UINT32_MAX || ranks_above(x, &r[higher])))
			higher = i;
	}
	if (foreign != UINT32_MAX) {
		*who = foreign;
		return SMV_STANDBY;
	}
	if (my_state == SMS_MASTER) {
		if (higher != UINT32_MAX) {
			*who = higher;
			return SMV_HANDOVER;
		}
		if (master != UINT32_MAX) {
			*who = master;
			return SMV_WAIT;
		}
		return SMV_MASTER;
	}
	if (master != UINT32_MAX) {
		*who = master;
		return SMV_STANDBY;
	}
	if (higher != UINT32_MAX) {
		*who = higher;
		return SMV_STANDBY;
	}
	return SMV_MASTER;
}

/* ---- sending SMInfo ---- */

uint32_t smstate_act_count(const struct sm *sm)
{
	/* every SMP the SM sends is management activity (OpenSM: qp0 MADs sent) */
	return sm->txn ? (uint32_t)txn_get_stats(sm->txn)->all.sent : 0;
}

uint32_t election_known_sms(const struct sm *sm, struct smp_sminfo *out, uint32_t max)
{
	uint32_t n = 0;
	for (uint32_t i = 0; sm->el && i < sm->el->n_sms && n < max; i++)
		if (sm->el->sms[i].answered)
			out[n++] = sm->el->sms[i].info;
	return n;
}

static void my_sminfo(const struct sm *sm, int state, uint64_t key,
		      struct smp_sminfo *s)
{
	memset(s, 0, sizeof(*s));
	s->guid = sm->tr.port_guid;
	s->sm_key = key;
	s->priority = (uint8_t)sm->cfg.sm_priority;
	s->state = (uint8_t)state;
	s->act_count = smstate_act_count(sm);
}

/* An SMInfo request to an SM: directed route when known, else by LID. */
static int send_sminfo(struct sm *sm, int method, uint32_t mod, int as_state,
		       const struct sm_ev *to, txn_done_fn done, void *arg)
{
	uint8_t mad[MAD_SIZE];
	struct mad_addr a;
	if (to->hops >= 0) {
		smp_init_dr(mad, method, IB_ATTR_SMINFO, mod, to->path, to->hops);
		smp_dr_address(&a);
	} else if (to->lid) {
		smp_init_lid(mad, method, IB_ATTR_SMINFO, mod);
		memset(&a, 0, sizeof(a));
		a.lid = to->lid;
	} else {
		return -1;
	}
	/*
	 * A Set carries the key, which its receiver checks; a Get only the
	 * proof that we hold it (smkey.h): a Get goes to any port claiming
	 * IsSM, and the answer tells whether that one holds the key too.
	 */
	uint64_t key = sm->cfg.sm_key;
	if (method == IB_MAD_METHOD_GET)
		key = key ? smkey_proof(key, sm->tr.port_guid, to->guid) : 0;
	struct smp_sminfo me;
	my_sminfo(sm, as_state, key, &me);
	smp_encode_sminfo(smp_data(mad), &me);
	return txn_submit(sm->txn, mad, sizeof(mad), &a, TXN_NO_DEST, done, arg);
}

static void ev_from_port(struct sm_ev *ev, const struct fabric *f, uint32_t port,
			 const struct smp_sminfo *info)
{
	memset(ev, 0, sizeof(*ev));
	ev->guid = info->guid;
	ev->priority = info->priority;
	ev->lid = f->ports[port].hw_lid;
	ev->hops = discovery_port_path(f, port, ev->path);
}

/* ---- STANDBY: polling the master ---- */

static void on_poll_answer(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct sm *sm = arg;
	if (status == TXN_CANCELLED || (sm->state != SMS_STANDBY && !sm->el->st.waiting_handover))
		return;
	if (status != TXN_OK || len < SMP_DATA_OFFS + SMP_DATA_SIZE || smp_status(resp))
		return;	/* counted when the next poll is due */
	struct smp_sminfo info;
	smp_decode_sminfo(resp + SMP_DATA_OFFS, &info);
	if (info.guid != sm->el->st.master_guid) {
		log_notice("the port of SM 0x%016llx now answers as 0x%016llx; sweeping",
			   (unsigned long long)sm->el->st.master_guid,
			   (unsigned long long)info.guid);
		struct sm_ev ev = { .why = "polled port changed hands" };
		fsm_run(sm, SME_POLL_LOST, &ev);
		return;
	}
	sm->el->poll_answered = 1;
	sm->el->st.master_act_count = info.act_count;
	if (info.state == SMS_MASTER || (info.state == SMS_DISCOVERING && !sm->el->st.waiting_handover)) {
		sm->el->poll_failures = 0;
		return;
	}
	log_notice("the SM 0x%016llx we poll is now %s; sweeping to elect",
		   (unsigned long long)sm->el->st.master_guid, sm_state_name(info.state));
	struct sm_ev ev = { .why = "polled SM left MASTER" };
	fsm_run(sm, SME_POLL_LOST, &ev);
}

/*
 * A poll goes out every poll_ms whatever became of the last one, and a
 * poll that had no answer when the next is due counts as a failure: the
 * master is declared lost within (poll_retries + 1) * poll_ms of dying.
 */
static void on_poll_timer(evutil_socket_t fd, short what, void *arg)
{
	struct sm *sm = arg;
	(void)fd;
	(void)what;
	if (sm->state != SMS_STANDBY && !sm->el->st.waiting_handover)
		return;
	if (sm->el->poll_sent && !sm->el->poll_answered &&
	    ++sm->el->poll_failures >= sm->cfg.sminfo_poll_retries) {
		log_notice("the SM 0x%016llx did not answer %d polls; sweeping to elect a new master",
			   (unsigned long long)sm->el->st.master_guid, sm->el->poll_failures);
		struct sm_ev ev = { .why = "master SM lost" };
		fsm_run(sm, SME_POLL_LOST, &ev);
		return;
	}
	struct sm_ev to = { .guid = sm->el->st.master_guid, .lid = sm->el->st.master_lid,
			    .hops = sm->el->st.master_hops };
	memcpy(to.path, sm->el->master_path, sizeof(to.path));
	/* a poll that could not even be sent is a poll with no answer */
	if (send_sminfo(sm, IB_MAD_METHOD_GET, 0, sm->state, &to, on_poll_answer, sm) < 0)
		log_warn("cannot poll SM 0x%016llx: no route to it",
			 (unsigned long long)sm->el->st.master_guid);
	sm->el->poll_sent = 1;
	sm->el->poll_answered = 0;
	timer_in_ms(sm->el->poll_timer, (uint64_t)sm->cfg.sminfo_poll_ms);
}

static void start_polling(struct sm *sm, const struct sm_ev *m)
{
	sm->el->st.master_guid = m->guid;
	sm->el->st.master_priority = m->priority;
	sm->el->st.master_lid = m->lid;
	sm->el->st.master_hops = m->hops;
	memcpy(sm->el->master_path, m->path, sizeof(sm->el->master_path));
	sm->el->poll_failures = 0;
	sm->el->poll_sent = 0;
	sm->el->poll_answered = 0;
	timer_in_ms(sm->el->poll_timer, (uint64_t)sm->cfg.sminfo_poll_ms);
}

/* ---- actions ---- */

static void act_nothing(struct sm *sm, const struct sm_ev *ev, int from)
{
}

static void act_configure(struct sm *sm, const struct sm_ev *ev, int from)
{
	if (from != SMS_MASTER) {
		/* after following another SM: a takeover, named as one */
		if (sm->el->st.master_guid && sm->el->st.master_guid != sm->tr.port_guid)
			log_notice("entering MASTER state (priority %d): takeover from SM 0x%016llx (priority %d, LID %u), in charge until now",
				   sm->cfg.sm_priority, (unsigned long long)sm->el->st.master_guid,
				   sm->el->st.master_priority, sm->el->st.master_lid);
		else
			log_notice("entering MASTER state (priority %d)", sm->cfg.sm_priority);
		sm->el->st.master_guid = 0;
		/* a subnet another SM configured: take its tables as they are */
		sm->sweep.adopt_tables = 1;
	}
	event_del(sm->el->poll_timer);
	sm->el->st.waiting_handover = 0;
	sm->el->hooks->configure(sm);
}

static void act_follow(struct sm *sm, const struct sm_ev *m, int from)
{
	int first = from != SMS_STANDBY || sm->el->st.master_guid != m->guid;
	event_del(sm->el->ho_timer);
	sm->el->st.waiting_handover = 0;
	sm->el->hooks->abandon(sm);
	if (first)
		log_notice("entering STANDBY: SM 0x%016llx (priority %d, LID %u) is in charge%s%s",
			   (unsigned long long)m->guid, m->priority, m->lid,
			   m->why ? ": " : "", m->why ? m->why : "");
	sdn_state(&sm->notified_ready, "STANDBY", sm->sweep.heavy_sweeps, &sm->sweep.last);
	if (sm->watch && sm->watch->standby && sm->watch->standby(sm, m, sm->watch->arg))
		return;
	start_polling(sm, m);
}

static void act_rediscover(struct sm *sm, const struct sm_ev *ev, int from)
{
	event_del(sm->el->poll_timer);
	sm->el->st.waiting_handover = 0;
	sweeper_request_heavy(sm, ev && ev->why ? ev->why : "rediscover");
}

static void act_disable(struct sm *sm, const struct sm_ev *ev, int from)
{
	(void)ev;
	event_del(sm->el->poll_timer);
	log_notice("DISABLE from SM 0x%016llx: NOTACTIVE until told STANDBY",
		   (unsigned long long)ev->guid);
	sdn_state(&sm->notified_ready, "NOTACTIVE", sm->sweep.heavy_sweeps, &sm->sweep.last);
}

/* ---- HANDOVER, sent ---- */

static void send_handover(struct sm *sm);

static void on_successor_answer(void *arg, int status, const uint8_t *resp,
				size_t len)
{
	struct sm *sm = arg;
	if (status == TXN_CANCELLED || !sm->el->st.ho_guid || sm->state != SMS_MASTER)
		return;
	if (status == TXN_OK && len >= SMP_DATA_OFFS + SMP_DATA_SIZE && !smp_status(resp)) {
		struct smp_sminfo info;
		smp_decode_sminfo(resp + SMP_DATA_OFFS, &info);
		if (info.guid == sm->el->st.ho_guid && info.state == SMS_MASTER) {
			log_notice("SM 0x%016llx is MASTER without an ACKNOWLEDGE: handover done",
				   (unsigned long long)info.guid);
			struct sm_ev ev = sm->el->ho_to;
			fsm_run(sm, SME_HANDOVER_DONE, &ev);
			return;
		}
	}
	send_handover(sm);	/* the HANDOVER or its answer was lost: again */
}

static void on_ho_timer(evutil_socket_t fd, short what, void *arg)
{
	struct sm *sm = arg;
	(void)fd;
	(void)what;
	if (!sm->el->st.ho_guid || sm->state != SMS_MASTER)
		return;
	/* no ACKNOWLEDGE: is the successor master anyway (OpenSM sends none)? */
	if (send_sminfo(sm, IB_MAD_METHOD_GET, 0, SMS_MASTER, &sm->el->ho_to,
			on_successor_answer, sm) < 0)
		send_handover(sm);
}

static void on_handover_answer(void *arg, int status, const uint8_t *resp,
			       size_t len)
{
	struct sm *sm = arg;
	if (status == TXN_CANCELLED || !sm->el->st.ho_guid || sm->state != SMS_MASTER)
		return;
	if (status == TXN_OK && len >= SMP_DATA_OFFS && smp_status(resp)) {
		log_warn("SM 0x%016llx refused HANDOVER (status 0x%04x)",
			 (unsigned long long)sm->el->st.ho_guid, smp_status(resp));
		struct sm_ev ev = sm->el->ho_to;
		fsm_run(sm, SME_HANDOVER_FAILED, &ev);
		return;
	}
	/* answered or not: wait for the ACKNOWLEDGE, then look */
	timer_in_ms(sm->el->ho_timer, HANDOVER_WAIT_MS);
}

static void send_handover(struct sm *sm)
{
	if (sm->el->ho_tries >= HANDOVER_TRIES) {
		log_warn("SM 0x%016llx did not take the subnet after %d HANDOVERs; keeping it",
			 (unsigned long long)sm->el->st.ho_guid, sm->el->ho_tries);
		struct sm_ev ev = sm->el->ho_to;
		fsm_run(sm, SME_HANDOVER_FAILED, &ev);
		return;
	}
	sm->el->ho_tries++;
	sm->el->st.smc.handovers_sent++;
	log_notice("HANDOVER to SM 0x%016llx (priority %d)%s",
		   (unsigned long long)sm->el->st.ho_guid, sm->el->ho_to.priority,
		   sm->el->ho_tries > 1 ? ", again" : "");
	if (send_sminfo(sm, IB_MAD_METHOD_SET, SMA_HANDOVER, SMS_MASTER, &sm->el->ho_to,
			on_handover_answer, sm) < 0)
		timer_in_ms(sm->el->ho_timer, HANDOVER_WAIT_MS);
}

static void act_hand_over(struct sm *sm, const struct sm_ev *to, int from)
{
	sm->el->hooks->abandon(sm);
	sm->sw.activity = SM_HANDOVER_WAIT;	/* no sweep until the successor answers */
	sm->el->st.ho_guid = to->guid;
	sm->el->ho_to = *to;
	sm->el->ho_to.why = "handed over";
	sm->el->ho_tries = 0;
	send_handover(sm);
}

static void act_handed_over(struct sm *sm, const struct sm_ev *ev, int from)
{
	struct sm_ev m = sm->el->ho_to;
	(void)ev;
	sm->el->st.smc.handovers_done++;
	sm->el->st.ho_guid = 0;
	sm->el->st.ho_failed_guid = 0;
	event_del(sm->el->ho_timer);
	sm->sw.activity = SM_IDLE;
	act_follow(sm, &m, from);
}

static void act_keep_subnet(struct sm *sm, const struct sm_ev *ev, int from)
{
	sm->el->st.ho_failed_guid = ev->guid;
	sm->el->st.ho_guid = 0;
	event_del(sm->el->ho_timer);
	sm->sw.activity = SM_IDLE;
	sweeper_request_heavy(sm, "handover failed: configuring the subnet ourselves");
}

/* ---- MASTER waiting for a lower master's HANDOVER (C14-60.2.1) ---- */

static void act_wait(struct sm *sm, const struct sm_ev *m, int from)
{
	if (!sm->el->st.waiting_handover || sm->el->st.master_guid != m->guid)
		log_notice("SM 0x%016llx (priority %d) is also MASTER and ranks below us: waiting for its HANDOVER",
			   (unsigned long long)m->guid, m->priority);
	sm->el->hooks->abandon(sm);
	sm->el->st.waiting_handover = 1;
	start_polling(sm, m);
}

/* ---- HANDOVER, received ---- */

static void on_ack_answer(void *arg, int status, const uint8_t *resp, size_t len)
{
	(void)arg;
	(void)resp;
	(void)len;
	if (status != TXN_OK && status != TXN_CANCELLED)
		log_warn("ACKNOWLEDGE got no answer; the old master will see us MASTER when it polls");
}

static void send_ack(struct sm *sm, const struct sm_ev *to)
{
	sm->el->st.smc.acks_sent++;
	log_notice("ACKNOWLEDGE to SM 0x%016llx", (unsigned long long)to->guid);
	/* sent while still STANDBY: the spec's (and OpenSM's) legality rule */
	if (send_sminfo(sm, IB_MAD_METHOD_SET, SMA_ACKNOWLEDGE, SMS_STANDBY, to,
			on_ack_answer, sm) < 0)
		log_warn("cannot send ACKNOWLEDGE to SM 0x%016llx: no route to it",
			 (unsigned long long)to->guid);
}

static void act_ack(struct sm *sm, const struct sm_ev *ho, int from)
{
	send_ack(sm, ho);
}

static void act_take_over(struct sm *sm, const struct sm_ev *ho, int from)
{
	send_ack(sm, ho);
	event_del(sm->el->poll_timer);
	sm->sweep.adopt_tables = 1;
	log_notice("MASTER by HANDOVER from SM 0x%016llx",
		   (unsigned long long)ho->guid);
	sweeper_request_heavy(sm, "handover");
}

static void act_ack_and_sweep(struct sm *sm, const struct sm_ev *ho, int from)
{
	send_ack(sm, ho);
	event_del(sm->el->poll_timer);
	sm->el->st.waiting_handover = 0;
	sweeper_request_heavy(sm, "handover from a lower master");
}

/* ---- SMInfo requests to us ---- */

/* How to reach the sender of an SMInfo Set: the SM we poll, a port of the
 * model, its LID, or the reverse of the directed route it came by. */
static void locate_sender(struct sm *sm, const uint8_t *mad,
			  const struct mad_addr *from, const struct smp_sminfo *s,
			  struct sm_ev *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->guid = s->guid;
	ev->priority = s->priority;
	ev->hops = -1;
	if (s->guid == sm->el->st.master_guid && sm->el->st.master_hops >= 0 &&
	    (sm->state == SMS_STANDBY || sm->el->st.waiting_handover)) {
		ev->lid = sm->el->st.master_lid;
		ev->hops = sm->el->st.master_hops;
		memcpy(ev->path, sm->el->master_path, sizeof(ev->path));
		return;
	}
	if (sm->sub.model) {
		const struct fabric *f = &sm->sub.model->f;
		for (uint32_t i = 0; i < f->n_ports; i++)
			if ((f->ports[i].flags & FPORT_ISSM) && f->ports[i].guid == s->guid &&
			    fabric_is_endport(f, i)) {
				ev->lid = f->ports[i].hw_lid;
				ev->hops = discovery_port_path(f, i, ev->path);
				return;
			}
	}
	if (smp_class(mad) == IB_SMI_CLASS) {
		ev->lid = from->lid;
		return;
	}
	/* the return path holds the input port of every hop: reversed, the way back */
	ev->hops = smp_reverse_path(mad, ev->path);
}

static void reply_sminfo(struct sm *sm, const uint8_t *in, size_t len,
			 const struct mad_addr *from, int status, uint64_t key)
{
	uint8_t mad[MAD_SIZE];
	memset(mad, 0, sizeof(mad));
	memcpy(mad, in, len < sizeof(mad) ? len : sizeof(mad));
	struct smp_sminfo me;
	my_sminfo(sm, sm->state, key, &me);
	smp_encode_sminfo(smp_data(mad), &me);
	smp_make_response(mad, status);
	struct mad_addr to = *from;
	if (smp_class(mad) == IB_SMI_DIRECT_CLASS)
		to.lid = 0xffff;
	if (mad_transport_send(&sm->tr, mad, MAD_SIZE, &to) < 0)
		log_warn("cannot send an SMInfo response");
}

static void note_key_mismatch(struct sm *sm, uint64_t guid, uint64_t key,
			      const char *where)
{
	sm->el->st.smc.key_mismatches++;
	if (sm->el->st.key_mismatch_guid != guid || sm->el->st.key_mismatch_key != key)
		log_warn("SM_Key mismatch: SM 0x%016llx uses SM_Key 0x%016llx, ours is 0x%016llx (%s); %s",
			 (unsigned long long)guid, (unsigned long long)key,
			 (unsigned long long)sm->cfg.sm_key, where,
			 sm->cfg.sm_key ? "it is never obeyed" :
			 "with no key of ours (sm.sm_key 0) its master is followed, not fought");
	sm->el->st.key_mismatch_guid = guid;
	sm->el->st.key_mismatch_key = key;
	errors_set(&sm->errs, SM_ERR_SM_KEY,
		     "SM 0x%016llx uses SM_Key 0x%016llx, not ours (%s)",
		     (unsigned long long)guid, (unsigned long long)key, where);
}

/* ---- SMInfo Gets: who is told our SM_Key ---- */

/*
 * An SMInfo Get whose sender sent no proof of the key (smkey.h), held
 * while we ask the sender for its own SMInfo: the way back is the way its
 * Get came (the reversed return path, or its LID).
 */
struct key_check {
	struct sm *sm;
	uint8_t req[MAD_SIZE];
	size_t len;
	struct mad_addr from;
	struct sm_ev at;	/* where the sender is */
};

static int same_place(const struct unproven *u, const struct sm_ev *at)
{
	return u->hops == at->hops && u->lid == at->lid &&
	       (at->hops < 0 || !memcmp(u->path, at->path, (size_t)at->hops + 1));
}

static int recently_unproven(const struct sm *sm, const struct sm_ev *at)
{
	uint64_t now = clock_ms();
	for (uint32_t i = 0; i < KEY_UNPROVEN_KEEP; i++) {
		const struct unproven *u = &sm->el->unproven[i];
		if (u->at_ms && now - u->at_ms < KEY_UNPROVEN_MS && same_place(u, at))
			return 1;
	}
	return 0;
}

static void note_unproven(struct sm *sm, const struct sm_ev *at)
{
	struct unproven *u = &sm->el->unproven[sm->el->next_unproven++ % KEY_UNPROVEN_KEEP];
	u->lid = at->lid;
	u->hops = at->hops;
	memcpy(u->path, at->path, sizeof(u->path));
	u->at_ms = clock_ms();
}

static void rogue_answered(struct sm *sm, const struct fabric *f, uint32_t port,
			   const struct smp_sminfo *s);
static void note_asker(struct sm *sm, const uint8_t *mad, const struct mad_addr *from,
		       const struct smp_sminfo *other);

/* The end port of the model with this GUID, FAB_NONE if none. */
static uint32_t model_port(const struct sm *sm, uint64_t guid)
{
	if (!sm->sub.model)
		return FAB_NONE;
	const struct fabric *f = &sm->sub.model->f;
	for (uint32_t i = 0; i < f->n_ports; i++)
		if (f->ports[i].guid == guid && fabric_is_endport(f, i))
			return i;
	return FAB_NONE;
}

static void on_key_check(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct key_check *c = arg;
	struct sm *sm = c->sm;
	sm->el->n_checks--;
	if (status == TXN_CANCELLED) {
		free(c);
		return;
	}
	uint64_t key = 0;
	if (status == TXN_OK && len >= SMP_DATA_OFFS + SMP_DATA_SIZE && !smp_status(resp)) {
		struct smp_sminfo s;
		smp_decode_sminfo(resp + SMP_DATA_OFFS, &s);
		if (s.sm_key == sm->cfg.sm_key) {
			key = sm->cfg.sm_key;
			if (!smkey_peer_known(&sm->el->peers, s.guid))
				log_info("SM 0x%016llx holds our SM_Key: its SMInfo Gets are answered with it",
					 (unsigned long long)s.guid);
			smkey_peer_add(&sm->el->peers, s.guid);
		} else if (s.state != SMS_NOTACTIVE && s.guid) {
			note_key_mismatch(sm, s.guid, s.sm_key, "asking for our SMInfo");
			uint32_t p = model_port(sm, s.guid);
			if (p != FAB_NONE)
				rogue_answered(sm, &sm->sub.model->f, p, &s);
		}
	}
	if (!key)
		note_unproven(sm, &c->at);
	reply_sminfo(sm, c->req, c->len, &c->from, 0, key);
	free(c);
}

/*
 * A SubnGet(SMInfo): IBA vol. 1 §14.4.1 returns the SM_Key only to a
 * requester that is entitled to it.  An ibsmd proves it in its Get
 * (smkey_proof); another SM (OpenSM sends no SMInfo in its Get) is asked
 * for its own SMInfo first and told the key if its answer carries it; a
 * host's tool (sminfo, a raw client) gets 0.
 */
static void answer_get(struct sm *sm, const uint8_t *mad, size_t len,
		       const struct mad_addr *from, const struct smp_sminfo *other)
{
	uint64_t key = sm->cfg.sm_key;
	if (!key || (other->guid && other->guid != sm->tr.port_guid &&
		     other->sm_key == smkey_proof(key, other->guid, sm->tr.port_guid))) {
		if (key)
			smkey_peer_add(&sm->el->peers, other->guid);
		reply_sminfo(sm, mad, len, from, 0, key);
		return;
	}
	struct sm_ev at = { .guid = other->guid };
	at.hops = smp_reverse_path(mad, at.path);
	if (smp_class(mad) == IB_SMI_CLASS)
		at.lid = from->lid;
	/* nowhere to ask (our own port, or no way back), or asked lately */
	if ((at.hops <= 0 && !at.lid) || recently_unproven(sm, &at) ||
	    sm->el->n_checks >= KEY_CHECKS_MAX) {
		reply_sminfo(sm, mad, len, from, 0, 0);
		return;
	}
	struct key_check *c = calloc(1, sizeof(*c));
	if (!c) {
		reply_sminfo(sm, mad, len, from, 0, 0);
		return;
	}
	c->sm = sm;
	c->len = len < sizeof(c->req) ? len : sizeof(c->req);
	memcpy(c->req, mad, c->len);
	c->from = *from;
	c->at = at;
	sm->el->n_checks++;
	if (send_sminfo(sm, IB_MAD_METHOD_GET, 0, sm->state, &at, on_key_check, c) < 0) {
		sm->el->n_checks--;
		free(c);
		reply_sminfo(sm, mad, len, from, 0, 0);
	}
}

/*
 * An SM of another key answered (its SMInfo, port `port` of f): a rogue,
 * never obeyed; cut off unless the policy says report (sm/rogue.h).  Its
 * SMInfo Sets are refused already (handle_sminfo).  One that is
 * NOTACTIVE does nothing and is only counted.
 */
static void rogue_answered(struct sm *sm, const struct fabric *f, uint32_t port,
			   const struct smp_sminfo *s)
{
	smkey_peer_forget(&sm->el->peers, s->guid);
	/* with no key of ours there are no rogues (sm_elect) */
	if (!sm->cfg.sm_key || s->state == SMS_NOTACTIVE || s->guid == sm->tr.port_guid)
		return;
	/* only a master cuts ports off: a STANDBY leaves it to the master */
	enum rogue_mode mode = sm->state == SMS_MASTER || sm->state == SMS_DISCOVERING ?
			       (enum rogue_mode)sm->cfg.sm_rogue : ROGUE_REPORT;
	if (rogues_seen(sm->el->rogues, sm->txn, f, port, s, mode)) {
		char why[160];
		snprintf(why, sizeof(why), "SMInfo %s, priority %d, SM_Key 0x%016llx not ours (sm.rogue: %s)",
			 sm_state_name(s->state), s->priority,
			 (unsigned long long)s->sm_key,
			 mode == ROGUE_ISOLATE ? "isolate" : "report");
		hookev_rogue_sm(sm->hook, s->guid, why);
	}
}

static int set_event(uint32_t mod)
{
	switch (mod) {
	case SMA_HANDOVER: return SME_RCV_HANDOVER;
	case SMA_ACKNOWLEDGE: return SME_RCV_ACKNOWLEDGE;
	case SMA_DISABLE: return SME_RCV_DISABLE;
	case SMA_STANDBY: return SME_RCV_STANDBY;
	case SMA_DISCOVER: return SME_RCV_DISCOVER;
	}
	return -1;
}

static void handle_sminfo(struct sm *sm, const uint8_t *mad, size_t len,
			  const struct mad_addr *from)
{
	if (len < SMP_DATA_OFFS + SMP_DATA_SIZE)
		return;
	int method = smp_method(mad);
	struct smp_sminfo other;
	smp_decode_sminfo(mad + SMP_DATA_OFFS, &other);
	/* an SM that speaks to us is no silent port (ibsmd's Gets carry its SMInfo) */
	if (other.guid)
		smstate_forget_silent(sm, other.guid);
	if (method == IB_MAD_METHOD_GET) {
		answer_get(sm, mad, len, from, &other);
		note_asker(sm, mad, from, &other);
		return;
	}
	if (method != IB_MAD_METHOD_SET)
		return;	/* the receive path answers other methods */
	uint32_t mod = smp_attr_mod(mad);
	int ev = set_event(mod);
	sm->el->st.smc.sets_received++;
	if (other.sm_key != sm->cfg.sm_key) {
		note_key_mismatch(sm, other.guid, other.sm_key, "in an SMInfo Set");
		reply_sminfo(sm, mad, len, from, IB_MAD_STS_INV_ATTR_VALUE, 0);
		return;
	}
	/* who may send what (C14-38.1): ACKNOWLEDGE a standby, the rest a master */
	int sender_ok = ev == SME_RCV_ACKNOWLEDGE ? other.state == SMS_STANDBY :
			other.state == SMS_MASTER;
	if (ev == SME_RCV_ACKNOWLEDGE && sm->state == SMS_MASTER &&
	    (!sm->el->st.ho_guid || other.guid != sm->el->st.ho_guid))
		sender_ok = 0;	/* an ACKNOWLEDGE of nothing we sent */
	if (ev < 0 || !sender_ok || !sm_event_legal(sm->state, ev)) {
		log_warn("SMInfo Set (modifier %u) from SM 0x%016llx in state %s refused in state %s",
			 mod, (unsigned long long)other.guid,
			 sm_state_name(other.state), sm_state_name(sm->state));
		sm->el->st.smc.sets_refused++;
		reply_sminfo(sm, mad, len, from, IB_MAD_STS_INV_ATTR_VALUE, sm->cfg.sm_key);
		return;
	}
	log_notice("SMInfo Set %s from SM 0x%016llx (priority %d)",
		   sm_event_name(ev), (unsigned long long)other.guid, other.priority);
	if (ev == SME_RCV_HANDOVER)
		sm->el->st.smc.handovers_received++;
	if (ev == SME_RCV_ACKNOWLEDGE)
		sm->el->st.smc.acks_received++;
	/* the answer first, in the state we were in when it came */
	reply_sminfo(sm, mad, len, from, 0, sm->cfg.sm_key);
	struct sm_ev e;
	locate_sender(sm, mad, from, &other, &e);
	fsm_run(sm, (enum sm_event)ev, &e);
}

/* ---- the heavy sweep's SMInfo queries and the election ---- */

/*
 * IsSM ports that never answered SMInfo (a host tool run with IsSM set,
 * like ibsm-listen under ibsim): probed once, by a heavy sweep, then
 * left out of every election and sweep -- or each heavy sweep would wait
 * out their timeouts -- until they change: their port leaves the subnet
 * (a sweep no longer finds it IsSM), they send trap 144, or an SMInfo
 * comes from them.
 */
static int is_silent(const struct sm *sm, uint64_t guid)
{
	for (uint32_t i = 0; i < sm->el->st.n_silent; i++)
		if (sm->el->silent_sms[i] == guid)
			return 1;
	return 0;
}

static void mark_silent(struct sm *sm, uint64_t guid)
{
	if (is_silent(sm, guid))
		return;
	if (sm->el->st.n_silent == sm->el->cap_silent) {
		uint32_t cap = sm->el->cap_silent ? 2 * sm->el->cap_silent : 8;
		uint64_t *p = realloc(sm->el->silent_sms, cap * sizeof(*p));
		if (!p)
			return;	/* asked again next time: slower, not wrong */
		sm->el->silent_sms = p;
		sm->el->cap_silent = cap;
	}
	sm->el->silent_sms[sm->el->st.n_silent++] = guid;
	log_notice("IsSM port 0x%016llx does not answer SMInfo: not asked again until it changes",
		   (unsigned long long)guid);
}

void smstate_forget_silent(struct sm *sm, uint64_t guid)
{
	for (uint32_t i = 0; i < sm->el->st.n_silent; i++)
		if (sm->el->silent_sms[i] == guid) {
			sm->el->silent_sms[i] = sm->el->silent_sms[--sm->el->st.n_silent];
			log_info("IsSM port 0x%016llx changed: its SMInfo is asked again",
				 (unsigned long long)guid);
			return;
		}
}

/* Forgets the silent ports f no longer holds as IsSM end ports. */
static void prune_silent(struct sm *sm, const struct fabric *f)
{
	for (uint32_t i = 0; i < sm->el->st.n_silent;) {
		int there = 0;
		for (uint32_t p = 0; p < f->n_ports && !there; p++)
			there = f->ports[p].guid == sm->el->silent_sms[i] &&
				(f->ports[p].flags & FPORT_ISSM) && fabric_is_endport(f, p);
		if (there)
			i++;
		else
			smstate_forget_silent(sm, sm->el->silent_sms[i]);
	}
}


/* ---- M_Key: a discovery cut short (sm/discover/mkcut.h) ---- */

#define CUT_RETRY_DEFAULT_S	10	/* sweep.interval_s's default, when light sweeps are off */
#define ASKED_KEEP_MS		60000	/* a master's SMInfo Get stands for it this long */
#define CUT_OUTLIVED_RETRIES	2	/* sweeps past a lease before the silent count as dead */

static void iso_time(uint64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!gmtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "%llu", (unsigned long long)t);
}

static void cut_message(const struct sm *sm, char *buf, size_t len)
{
	const struct mkcut *c = &sm->el->cut;
	if (c->reason == MKCUT_OWN_PORT)
		snprintf(buf, len, "our own port 0x%016llx answers none of our SMPs: it holds an "
			 "M_Key this SM cannot derive (its security.m_key secret is missing "
			 "or not the one that keyed the fabric)",
			 (unsigned long long)sm->tr.port_guid);
	else
		snprintf(buf, len, "%u NodeInfo Get%s past the %u node%s reached went unanswered "
			 "with M_Key 0 (the neighbour map does not name what is there) while "
			 "our port holds an M_Key at ProtectBits %u: the fabric beyond is keyed",
			 c->refused, c->refused == 1 ? "" : "s", c->nodes,
			 c->nodes == 1 ? "" : "s", c->own_protect);
}

uint64_t election_cut_retry_ms(const struct sm *sm)
{
	if (!sm->el || sm->el->cut.reason == MKCUT_NONE)
		return 0;
	int s = sm->cfg.sweep_interval_s > 0 ? sm->cfg.sweep_interval_s : CUT_RETRY_DEFAULT_S;
	return (uint64_t)s * 1000;
}

/*
 * A cut is fresh when none was being waited out, its reason changed, or
 * the discovery reached more nodes than the last time: a new frontier
 * whose ports' lease timers our refused SMPs have just started (14.2.4.2).
 */
static void note_cut(struct sm *sm, const struct mkcut *c)
{
	struct election *el = sm->el;
	int fresh = !el->cut_since || el->cut.reason != c->reason || c->nodes > el->cut.nodes;
	el->cut = *c;
	if (c->held == c->refused && c->reason == MKCUT_KEYED) {
		el->cut_since = 0;	/* nothing refused us: no lease runs yet */
		return;
	}
	if (!fresh)
		return;
	el->cut_since = (uint64_t)time(NULL);
	char msg[320], end[32];
	cut_message(sm, msg, sizeof(msg));
	iso_time(el->cut_since + (uint64_t)sm->cfg.mkey_lease_s, end, sizeof(end));
	/* a master keeps what it reached; what lies beyond waits for its lease */
	const char *what = sm->state == SMS_MASTER ? "what lies beyond stays out of the subnet" :
			   "not taking the subnet";
	if (sm->cfg.mkey_lease_s)
		log_warn("M_Key: %s; %s; waiting for their lease (security.m_key.lease_s %d s: "
			 "about %s, one lease a hop), sweeping again every %llu s", msg, what,
			 sm->cfg.mkey_lease_s, end,
			 (unsigned long long)(election_cut_retry_ms(sm) / 1000));
	else
		log_warn("M_Key: %s; %s; with security.m_key.lease_s 0 no lease is waited "
			 "out: give this SM the secret and the neighbour map", msg, what);
}

static void clear_cut(struct sm *sm)
{
	if (sm->el->cut.reason != MKCUT_NONE)
		log_notice("M_Key: discovery no longer cut short (%u nodes reached)",
			   sm->sweep.disc ? sm->sweep.disc->f.n_nodes : 0);
	memset(&sm->el->cut, 0, sizeof(sm->el->cut));
	sm->el->cut_since = 0;
}

/* Judges the discovery just made (sm->sweep.disc). */
static enum mkcut_reason judge_cut(struct sm *sm)
{
	struct mkcut c;
	if (mkcut_judge(sm->sweep.disc, &sm->sub.nbrs, sm->tr.port_guid,
			sm->sub.mk.protect != 0, &c) == MKCUT_NONE) {
		clear_cut(sm);
		return MKCUT_NONE;
	}
	note_cut(sm, &c);
	return c.reason;
}

/*
 * A cut that outlived a lease (and two retries) on the same frontier: what
 * still does not answer is dead, not keyed -- our refused SMPs started
 * the keyed ports' timers.  With lease 0 keyed ports never expire.
 */
static int cut_outlived(const struct sm *sm)
{
	const struct election *el = sm->el;
	uint64_t now = (uint64_t)time(NULL);
	return el->cut.reason == MKCUT_KEYED && sm->cfg.mkey_lease_s > 0 && el->cut_since &&
	       now >= el->cut_since + (uint64_t)sm->cfg.mkey_lease_s +
			      CUT_OUTLIVED_RETRIES * election_cut_retry_ms(sm) / 1000;
}

static void on_learned(void *arg, int rc, int links, const char *why)
{
	struct sm *sm = arg;
	if (rc < 0) {
		log_warn("M_Key: the neighbour map could not be read from the SA of LID %u: %s; "
			 "a take-over waits for the leases", sm->el->learn_lid, why);
		return;
	}
	char err[512];
	if (links && sm->cfg.state_dir[0] &&
	    nbr_save(&sm->sub.nbrs, sm->cfg.state_dir, err, sizeof(err)) < 0)
		log_warn("neighbour map not saved: %s", err);
	log_notice("M_Key: neighbour map read from the SA of LID %u (%d link ends new): "
		   "every port past our link has a key now; a take-over waits for no lease",
		   sm->el->learn_lid, links);
	if (sm->el->cut.reason == MKCUT_KEYED)
		memset(&sm->el->cut, 0, sizeof(sm->el->cut));	/* the map names it all */
}

/*
 * With the secret, what a keyed fabric hides from us past our link is
 * only which port GUID lies where: the master's SA tells it (nbrlearn.h).
 */
static void learn_map(struct sm *sm, uint32_t master_lid)
{
	struct election *el = sm->el;
	if (!sm->sub.mk.protect || !master_lid || !sm->base)
		return;
	nbr_learn_free(el->learn);
	el->learn_lid = master_lid;
	el->learn = nbr_learn_start(sm->base, &sm->tr, master_lid, sm->cfg.sm_key,
				    &sm->sub.nbrs, on_learned, sm);
	if (!el->learn)
		log_warn("M_Key: cannot ask the SA of LID %u for the neighbour map", master_lid);
}

int election_sa_input(struct sm *sm, const uint8_t *mad, size_t len,
		      const struct mad_addr *from, int status)
{
	return sm->el && sm->el->learn && sm->state != SMS_MASTER &&
	       nbr_learn_input(sm->el->learn, mad, len, from, status);
}

/* Follows a MASTER that cut us short but spoke to us; 1 if it did. */
static int follow_cut(struct sm *sm, struct sm_ev *m)
{
	if (sm->state == SMS_MASTER)
		return 0;
	sm->el->cut_since = 0;	/* the master keeps the leases from running out */
	m->why = sm->el->cut.reason == MKCUT_OWN_PORT ?
		 "our own port refuses our SMPs (M_Key): we cannot manage the subnet" :
		 "the fabric past our link is keyed and the neighbour map does not name it (M_Key)";
	fsm_run(sm, SME_ELECT_STANDBY, m);
	return 1;
}

static int follow_asker(struct sm *sm)
{
	struct election *el = sm->el;
	if (!el->asked_at_ms || clock_ms() - el->asked_at_ms > ASKED_KEEP_MS)
		return 0;
	struct sm_ev m = el->asked_by;
	el->asked_at_ms = 0;
	return follow_cut(sm, &m);
}

/*
 * An SMInfo Get from a MASTER (that holds our SM_Key, if we have one).
 * With our own port refusing us it is the one sign of a master we get:
 * followed at once when we are only waiting for the next try, else at
 * the end of the sweep under way (smstate_own_port_refused).
 */
static void note_asker(struct sm *sm, const uint8_t *mad, const struct mad_addr *from,
		       const struct smp_sminfo *other)
{
	uint64_t key = sm->cfg.sm_key;
	if (other->state != SMS_MASTER || !other->guid || other->guid == sm->tr.port_guid ||
	    (key && other->sm_key != smkey_proof(key, other->guid, sm->tr.port_guid)))
		return;
	struct election *el = sm->el;
	memset(&el->asked_by, 0, sizeof(el->asked_by));
	el->asked_by.guid = other->guid;
	el->asked_by.priority = other->priority;
	el->asked_by.hops = -1;
	if (smp_class(mad) == IB_SMI_CLASS)
		el->asked_by.lid = from->lid;
	else
		el->asked_by.hops = smp_reverse_path(mad, el->asked_by.path);
	el->asked_at_ms = clock_ms();
	if (sm->state == SMS_DISCOVERING && sm->sw.activity == SM_IDLE &&
	    el->cut.reason == MKCUT_OWN_PORT) {
		sweeper_cancel_heavy(sm);	/* the retry: the master is polled instead */
		follow_asker(sm);
	}
}

int smstate_spare_keyless(const struct sm *sm)
{
	/* the first try only: a later one must reach the ports to start their leases */
	return sm->el && sm->state != SMS_MASTER && sm->sub.mk.protect &&
	       sm->el->cut.reason == MKCUT_NONE;
}

int smstate_own_port_refused(struct sm *sm)
{
	judge_cut(sm);
	return follow_asker(sm);
}

/* The discovery was cut short and found no master: ends the sweep, tries again later. */
static void hold_cut(struct sm *sm)
{
	sm->el->hooks->abandon(sm);
	if (sm->watch && sm->watch->failed && sm->watch->failed(sm, sm->watch->arg))
		return;
	sweeper_retry_after(sm, election_cut_retry_ms(sm));
}

/* The answer of the SM our port's MasterSMLID names. */
static void on_smlid_answer(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct sm *sm = arg;
	if (status == TXN_CANCELLED || !sm->sweep.disc || sm->state == SMS_MASTER)
		return;
	if (status == TXN_OK && len >= SMP_DATA_OFFS + SMP_DATA_SIZE && !smp_status(resp)) {
		struct smp_sminfo info;
		smp_decode_sminfo(resp + SMP_DATA_OFFS, &info);
		if (info.state == SMS_MASTER && info.guid && info.guid != sm->tr.port_guid &&
		    (!sm->cfg.sm_key || info.sm_key == sm->cfg.sm_key)) {
			struct sm_ev m = { .guid = info.guid, .priority = info.priority,
					   .lid = sm->el->cut.own_sm_lid, .hops = -1 };
			follow_cut(sm, &m);
			learn_map(sm, m.lid);
			return;
		}
	}
	hold_cut(sm);
}

/*
 * The election found no master but the discovery was cut short by
 * M_Key: the SM does not make itself master of what it reached.  Its
 * port's MasterSMLID (read with its own key) may name the master beyond
 * the cut: SMInfo goes to the SM, not the SMA, and is not M_Key-checked,
 * so it is asked by LID.  1 when held (or asking).
 */
static int held_by_cut(struct sm *sm)
{
	struct election *el = sm->el;
	if (sm->state == SMS_MASTER || el->cut.reason != MKCUT_KEYED)
		return 0;
	if (cut_outlived(sm)) {
		log_notice("M_Key: %u NodeInfo Gets still unanswered a lease after the first: "
			   "taken as dead devices", el->cut.refused);
		return 0;
	}
	uint32_t smlid = el->cut.own_sm_lid;
	struct sm_ev to = { .lid = smlid, .hops = -1 };
	if (smlid && smlid != el->cut.own_lid && smlid < FAB_MLID_BASE &&
	    send_sminfo(sm, IB_MAD_METHOD_GET, 0, sm->state, &to, on_smlid_answer, sm) == 0)
		return 1;
	hold_cut(sm);
	return 1;
}

static void elect(struct sm *sm)
{
	uint32_t who = 0;
	/* an SM that refused the subnet is passed over while it is there */
	int refuser_seen = 0, key_mismatch = 0;
	for (uint32_t i = 0; i < sm->el->n_sms; i++) {
		if (sm->el->sms[i].answered && sm->el->sms[i].info.guid == sm->el->st.ho_failed_guid)
			refuser_seen = 1;
		if (sm->el->sms[i].answered && !sm->el->sms[i].key_ok)
			key_mismatch = 1;
	}
	if (!key_mismatch)	/* every SM of this sweep shares our key */
		errors_clear(&sm->errs, SM_ERR_SM_KEY);
	/* the SMs that may become master stay full members of the default partition */
	for (uint32_t i = 0; i < sm->el->n_sms; i++)
		if (sm->el->sms[i].answered && sm->el->sms[i].key_ok &&
		    sm->el->sms[i].port < sm->sweep.disc->f.n_ports)
			sm->sweep.disc->f.ports[sm->el->sms[i].port].flags |= FPORT_SMPEER;
	if (!refuser_seen)
		sm->el->st.ho_failed_guid = 0;
	enum sm_verdict v = sm_elect(sm->state, sm->cfg.sm_priority, sm->tr.port_guid,
				     sm->cfg.sm_key != 0, sm->el->sms, sm->el->n_sms, &who);
	struct sm_ev ev;
	memset(&ev, 0, sizeof(ev));
	if (v != SMV_MASTER)
		ev_from_port(&ev, &sm->sweep.disc->f, sm->el->sms[who].port, &sm->el->sms[who].info);
	if (v == SMV_HANDOVER && ev.guid == sm->el->st.ho_failed_guid) {
		log_notice("SM 0x%016llx outranks us but did not take the subnet; keeping it",
			   (unsigned long long)ev.guid);
		v = SMV_MASTER;
	}
	static const int event_of[] = {
		[SMV_MASTER] = SME_ELECT_MASTER,
		[SMV_STANDBY] = SME_ELECT_STANDBY,
		[SMV_HANDOVER] = SME_ELECT_HANDOVER,
		[SMV_WAIT] = SME_ELECT_WAIT,
	};
	if (v == SMV_STANDBY && !sm->el->sms[who].key_ok)
		ev.why = "we hold no SM_Key (sm.sm_key 0), so we follow it";
	if (v == SMV_MASTER && held_by_cut(sm))
		return;
	/* a master beyond a cut: it keeps the leases running; its SA has the map */
	int learn = v == SMV_STANDBY && sm->el->cut.reason == MKCUT_KEYED;
	if (learn)
		sm->el->cut_since = 0;
	if (v == SMV_STANDBY)	/* the links it saw, for the day it takes over keyed ports */
		subnet_save_neighbors_of(&sm->sub, &sm->sweep.disc->f, sm->cfg.state_dir);
	if (fsm_run(sm, (enum sm_event)event_of[v], &ev) < 0)
		sm->el->hooks->abandon(sm);	/* e.g. NOTACTIVE: nothing to do */
	else if (learn && sm->state == SMS_STANDBY)
		learn_map(sm, ev.lid);
}

static void on_sminfo_answer(void *arg, int status, const uint8_t *resp,
			     size_t len)
{
	struct remote_sm *r = arg;
	struct sm *sm = r->owner;
	if (status == TXN_CANCELLED)
		return;
	if (status == TXN_OK && len >= SMP_DATA_OFFS + SMP_DATA_SIZE && !smp_status(resp)) {
		smp_decode_sminfo(resp + SMP_DATA_OFFS, &r->info);
		r->answered = 1;
		r->key_ok = r->info.sm_key == sm->cfg.sm_key;
		if (r->key_ok) {
			smkey_peer_add(&sm->el->peers, r->info.guid);
		} else {
			note_key_mismatch(sm, r->info.guid, r->info.sm_key, "in its SMInfo");
			if (sm->sweep.disc)
				rogue_answered(sm, &sm->sweep.disc->f, r->port, &r->info);
		}
		log_info("SM 0x%016llx: %s, priority %d, ActCount %u",
			 (unsigned long long)r->info.guid,
			 sm_state_name(r->info.state), r->info.priority,
			 r->info.act_count);
	} else if (sm->sweep.disc) {
		log_info("IsSM port 0x%016llx does not answer SMInfo; not an SM",
			 (unsigned long long)sm->sweep.disc->f.ports[r->port].guid);
		if (status == TXN_TIMEOUT)
			mark_silent(sm, sm->sweep.disc->f.ports[r->port].guid);
	}
	if (--sm->el->sms_pending == 0)
		elect(sm);
}

static void free_sms(struct sm *sm)
{
	free(sm->el->sms);
	sm->el->sms = NULL;
	sm->el->n_sms = sm->el->sms_pending = 0;
}

/* The other IsSM end ports of f (not ours). */
static uint32_t count_sm_ports(const struct sm *sm, const struct fabric *f)
{
	uint32_t own = f->sm_node == FAB_NONE ? FAB_NONE :
		       fabric_port(f, f->sm_node, f->sm_port);
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->n_ports; i++)
		if ((f->ports[i].flags & FPORT_ISSM) && i != own && fabric_is_endport(f, i) &&
		    !is_silent(sm, f->ports[i].guid))
			n++;
	return n;
}

/* Queues an SMInfo Get to every other IsSM port; returns how many went. */
static uint32_t query_sms(struct sm *sm, const struct fabric *f,
			  struct remote_sm *v, uint32_t n, int light,
			  txn_done_fn done)
{
	uint32_t own = f->sm_node == FAB_NONE ? FAB_NONE :
		       fabric_port(f, f->sm_node, f->sm_port);
	uint32_t k = 0, sent = 0;
	for (uint32_t i = 0; i < f->n_ports && k < n; i++) {
		if (!(f->ports[i].flags & FPORT_ISSM) || i == own || !fabric_is_endport(f, i) ||
		    is_silent(sm, f->ports[i].guid))
			continue;
		struct remote_sm *r = &v[k++];
		memset(r, 0, sizeof(*r));
		r->owner = sm;
		r->port = i;
		r->light = (uint8_t)light;
		struct smp_sminfo none = { .guid = f->ports[i].guid };
		struct sm_ev to;
		ev_from_port(&to, f, i, &none);
		if (to.hops < 0)
			continue;
		if (send_sminfo(sm, IB_MAD_METHOD_GET, 0, sm->state, &to, done, r) == 0)
			sent++;
	}
	return sent;
}

void smstate_discovered(struct sm *sm)
{
	const struct fabric *f = &sm->sweep.disc->f;
	judge_cut(sm);
	prune_silent(sm, f);
	uint32_t n = count_sm_ports(sm, f);
	free_sms(sm);
	if (n && !(sm->el->sms = calloc(n, sizeof(*sm->el->sms))))
		n = 0;	/* out of memory: as if alone, and logged */
	sm->el->n_sms = n;
	sm->el->sms_pending = 1;	/* held until every query is queued */
	sm->el->sms_pending += query_sms(sm, f, sm->el->sms, n, 0, on_sminfo_answer);
	if (--sm->el->sms_pending == 0)
		elect(sm);
}

/* ---- the light sweep's share ---- */

static void on_light_sminfo(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct remote_sm *r = arg;
	struct sm *sm = r->owner;
	if (status == TXN_CANCELLED)
		return;
	const char *why = NULL;
	char buf[160];
	if (status == TXN_OK && len >= SMP_DATA_OFFS + SMP_DATA_SIZE && !smp_status(resp)) {
		struct smp_sminfo s;
		smp_decode_sminfo(resp + SMP_DATA_OFFS, &s);
		int key_ok = s.sm_key == sm->cfg.sm_key;
		if (!key_ok) {
			note_key_mismatch(sm, s.guid, s.sm_key, "in its SMInfo");
			rogue_answered(sm, &sm->sub.model->f, r->port, &s);
		}
		if ((key_ok || !sm->cfg.sm_key) && s.state == SMS_MASTER &&
		    s.guid != sm->tr.port_guid) {
			snprintf(buf, sizeof(buf), "SM 0x%016llx is also MASTER",
				 (unsigned long long)s.guid);
			why = buf;
		} else if (key_ok && s.state == SMS_STANDBY && s.guid != sm->el->st.ho_failed_guid &&
			   sm_outranks(s.priority, s.guid, sm->cfg.sm_priority,
				       sm->tr.port_guid)) {
			snprintf(buf, sizeof(buf), "SM 0x%016llx (%s, priority %d) outranks us",
				 (unsigned long long)s.guid, sm_state_name(s.state),
				 s.priority);
			why = buf;
		}
	}
	sm->el->hooks->light_answer(sm, why);
}

struct silent_probe {
	struct sm *sm;
	uint64_t guid;
};

static void on_silent_probe(void *arg, int status, const uint8_t *resp, size_t len)
{
	struct silent_probe *p = arg;
	struct sm *sm = p->sm;
	uint64_t guid = p->guid;
	free(p);
	if (status != TXN_OK || len < SMP_DATA_OFFS + SMP_DATA_SIZE || smp_status(resp) ||
	    !is_silent(sm, guid))
		return;
	smstate_forget_silent(sm, guid);
	char why[96];
	snprintf(why, sizeof(why), "IsSM port 0x%016llx answers SMInfo now",
		 (unsigned long long)guid);
	sweeper_request_heavy(sm, why);
}

/*
 * The silent ports are asked too, but nothing waits for them: an SM that
 * was frozen when a heavy sweep asked (SIGSTOP, an overloaded host) is
 * found again by its answer, which asks for a heavy sweep.
 */
static void probe_silent(struct sm *sm, const struct fabric *f)
{
	uint32_t own = f->sm_node == FAB_NONE ? FAB_NONE :
		       fabric_port(f, f->sm_node, f->sm_port);
	for (uint32_t i = 0; i < f->n_ports; i++) {
		if (!(f->ports[i].flags & FPORT_ISSM) || i == own || !fabric_is_endport(f, i) ||
		    !is_silent(sm, f->ports[i].guid))
			continue;
		struct silent_probe *p = malloc(sizeof(*p));
		if (!p)
			return;
		p->sm = sm;
		p->guid = f->ports[i].guid;
		struct smp_sminfo none = { .guid = f->ports[i].guid };
		struct sm_ev to;
		ev_from_port(&to, f, i, &none);
		if (send_sminfo(sm, IB_MAD_METHOD_GET, 0, sm->state, &to, on_silent_probe, p) < 0)
			free(p);
	}
}

uint32_t smstate_light_queries(struct sm *sm)
{
	const struct fabric *f = &sm->sub.model->f;
	if (sm->el->st.n_silent)
		probe_silent(sm, f);
	uint32_t n = count_sm_ports(sm, f);
	if (n > sm->el->cap_light_sms) {
		void *p = realloc(sm->el->light_sms, (size_t)n * sizeof(*sm->el->light_sms));
		if (!p)
			return 0;
		sm->el->light_sms = p;
		sm->el->cap_light_sms = n;
	}
	return query_sms(sm, f, sm->el->light_sms, n, 1, on_light_sminfo);
}

/* ---- set-up ---- */

int smstate_init(struct sm *sm, const struct smstate_hooks *h)
{
	sm->el = calloc(1, sizeof(*sm->el));
	if (!sm->el)
		return -1;
	sm->el->hooks = h;
	sm->state = SMS_DISCOVERING;	/* IBA 14.4.1: an SM starts discovering */
	sm->el->poll_timer = evtimer_new(sm->base, on_poll_timer, sm);
	sm->el->ho_timer = evtimer_new(sm->base, on_ho_timer, sm);
	sm->el->rogues = rogues_new();
	return sm->el->poll_timer && sm->el->ho_timer && sm->el->rogues ? 0 : -1;
}

void smstate_free(struct sm *sm)
{
	if (!sm->el)
		return;
	free_sms(sm);
	free(sm->el->silent_sms);
	sm->el->silent_sms = NULL;
	sm->el->st.n_silent = sm->el->cap_silent = 0;
	free(sm->el->light_sms);
	sm->el->light_sms = NULL;
	sm->el->cap_light_sms = 0;
	if (sm->el->poll_timer)
		event_free(sm->el->poll_timer);
	if (sm->el->ho_timer)
		event_free(sm->el->ho_timer);
	smkey_peers_free(&sm->el->peers);
	rogues_free(sm->el->rogues);
	nbr_learn_free(sm->el->learn);
	free(sm->el);
	sm->el = NULL;
}

/* The receive path's handlers (sm/recv.c registers them). */
int sm_recv_sminfo(void *ctx, const uint8_t *mad, size_t len,
		   const struct mad_addr *from)
{
	handle_sminfo(ctx, mad, len, from);
	return MAD_DONE;
}

const struct election_status *election_status(const struct sm *sm)
{
	static const struct election_status none;	/* before smstate_init() */
	return sm->el ? &sm->el->st : &none;
}

const struct rogues *election_rogues(const struct sm *sm)
{
	return sm->el ? sm->el->rogues : NULL;
}

const uint64_t *election_silent(const struct sm *sm)
{
	return sm->el ? sm->el->silent_sms : NULL;
}

void election_to_ctl(const struct sm *sm, json_t *o)
{
	const struct election_status *st = election_status(sm);
	char g[24];
	if (sm->state == SMS_STANDBY) {
		snprintf(g, sizeof(g), "0x%016llx", (unsigned long long)st->master_guid);
		json_object_set_new(o, "master_guid", json_string(g));
		json_object_set_new(o, "master_lid", json_integer(st->master_lid));
		json_object_set_new(o, "master_priority", json_integer(st->master_priority));
		json_object_set_new(o, "master_act_count", json_integer(st->master_act_count));
	}
	if (st->waiting_handover) {
		snprintf(g, sizeof(g), "0x%016llx", (unsigned long long)st->master_guid);
		json_object_set_new(o, "waiting_for_handover_from", json_string(g));
	}
	if (st->ho_guid) {
		snprintf(g, sizeof(g), "0x%016llx", (unsigned long long)st->ho_guid);
		json_object_set_new(o, "handing_over_to", json_string(g));
	}
	if (st->smc.key_mismatches) {
		char k[24];
		snprintf(g, sizeof(g), "0x%016llx", (unsigned long long)st->key_mismatch_guid);
		snprintf(k, sizeof(k), "0x%016llx", (unsigned long long)st->key_mismatch_key);
		json_object_set_new(o, "sm_key_mismatch", json_pack("{s:s,s:s,s:I}",
			"sm_guid", g, "their_key", k,
			"count", (json_int_t)st->smc.key_mismatches));
	}
	if (sm->el)
		rogues_to_ctl(sm->el->rogues, o);
	json_object_set_new(o, "sm_protocol", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		"handovers_sent", (json_int_t)st->smc.handovers_sent,
		"handovers_done", (json_int_t)st->smc.handovers_done,
		"handovers_received", (json_int_t)st->smc.handovers_received,
		"acks_sent", (json_int_t)st->smc.acks_sent,
		"acks_received", (json_int_t)st->smc.acks_received,
		"sminfo_sets_received", (json_int_t)st->smc.sets_received,
		"sminfo_sets_refused", (json_int_t)st->smc.sets_refused));
}

void election_mkey_to_ctl(const struct sm *sm, json_t *o)
{
	const struct election *el = sm->el;
	if (!el || el->cut.reason == MKCUT_NONE)
		return;
	char msg[320];
	cut_message(sm, msg, sizeof(msg));
	json_t *u = json_pack("{s:s,s:s,s:i,s:i,s:b,s:i}",
		"reason", mkcut_reason_name(el->cut.reason), "message", msg,
		"nodes_reached", (int)el->cut.nodes, "refused", (int)el->cut.refused,
		"waiting", el->cut_since != 0, "lease_s", sm->cfg.mkey_lease_s);
	if (el->cut_since) {
		json_object_set_new(u, "since_time", json_integer((json_int_t)el->cut_since));
		json_object_set_new(u, "since_date", control_time_json(el->cut_since));
		if (sm->cfg.mkey_lease_s) {
			uint64_t end = el->cut_since + (uint64_t)sm->cfg.mkey_lease_s;
			json_object_set_new(u, "expected_end_time", json_integer((json_int_t)end));
			json_object_set_new(u, "expected_end_date", control_time_json(end));
		}
	}
	json_object_set_new(o, "unmanageable", u);
}
