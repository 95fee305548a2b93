/*
 * The subnet administrator: SA requests (class 0x03) on QP1, answered
 * from a view of the subnet that a sweep in progress does not tear.
 *
 * sa_server.c is the core: header and method checks, the SM_Key, the component
 * mask, Get (exactly one record) / GetTable (all, RMPP when longer than
 * one MAD) / Set / Delete semantics, statuses.  Each record family is a
 * row of one table (struct sa_family, sm/sa/sa_families.c, given to
 * sa_init): the attribute, the methods it
 * serves, its record size, and a function that appends the records that
 * match the request.  One file per family: sa_node.c (NodeRecord,
 * PortInfoRecord, SwitchInfoRecord, LinkRecord, LFTRecord,
 * GUIDInfoRecord), sa_path.c (PathRecord), sa_inform.c (InformInfo,
 * InformInfoRecord), sa_mcmember.c (MCMemberRecord), sa_tables.c
 * (PKeyTableRecord, SLtoVLMappingTableRecord, VLArbitrationTableRecord,
 * MulticastForwardingTableRecord), sa_sminfo.c (SMInfoRecord),
 * ClassPortInfo in sa_server.c.
 */
#ifndef IBSMD_SA_H
#define IBSMD_SA_H

#include <stddef.h>
#include <stdint.h>

#include "mad/sa.h"
#include "mad/smp.h"
#include "mad/transport.h"
#include "routing/engine.h"
#include "sm/base/fabric.h"
#include "sm/model/part_resolve.h"

struct sm;
struct sa;
struct lanes;

/*
 * A VM of the registry (sm/model/vm.h) as the SA answers for it: its vGUID
 * (the interface ID of its GID, GUIDInfo index 1 of its VF port) and the
 * end port of the VF it runs on in the view's model, which holds the
 * VM's LID.
 */
struct sa_vm {
	uint64_t vguid;
	uint32_t port;
};

/*
 * What the SA answers from: a model and its routes, published together
 * when a configuration is complete (sa_publish) and kept alive until the
 * next one replaces it.  Never the discovery of a sweep in progress.
 */
struct sa_view {
	const struct fabric *f;		/* LIDs assigned */
	const struct lft_tables *lft;	/* the routes of f */
	uint64_t subnet_prefix;
	uint32_t sm_lid;
	uint64_t gen;			/* bumped on every publish */
	/* computed once at publish, not per request (PathRecord Gets) */
	uint32_t n_endports;		/* end ports with a LID */
	uint8_t ltv;			/* the switches' largest LifeTimeValue,
					 * sm.subnet_timeout when none reported */
	/* PortInfo and SwitchInfo as the sweep read them, per port and per
	 * node index (NULL when the model came without them): the fields
	 * the model does not hold come from there */
	const uint8_t (*pi_raw)[SMP_DATA_SIZE];
	const uint8_t (*si_raw)[SMP_DATA_SIZE];
	/* the VMs present in f at publish (their VF port there holds their
	 * LID), sorted by port: sa_vm_of_port(), sa_vm_of_guid() */
	const struct sa_vm *vms;
	uint32_t n_vms;
	/*
	 * The shared-LID VMs (sm/model/vm.h), port = their hypervisor's PF:
	 * sa_vm_of_guid() finds them (svm_by_guid: vGUID -> slot),
	 * sa_vm_of_port() not.  svms are slots (a free one has port
	 * FAB_NONE); a PF port pi's VMs, in the order they came, are the
	 * slots from svm_head[pi] along svm_next to FAB_NONE.  A shared-LID
	 * create, move or drop changes them at once (sa_shared_vm_set/drop),
	 * without a publish.
	 */
	const struct sa_vm *svms;
	const uint32_t *svm_next, *svm_head;
	const struct guid_map *svm_by_guid;
	uint32_t n_svms;		/* live */
	/*
	 * The policy's partitions resolved against f at publish
	 * (sm/model/part_resolve.h); NULL when that failed (no memory): every port then
	 * shares the default partition with every other, as when the policy
	 * names no partitions.
	 */
	const struct part_model *parts;
	/* the end ports by port GUID (fabric_endport_map()), NULL when that
	   failed (no memory): sa_port_of_guid() scans then */
	const struct guid_map *port_by_guid;
	/*
	 * What the SM wrote to or read from each device (sm/write/devcache.h,
	 * by node GUID, live), NULL when none: the P_Key, SL-to-VL, VL
	 * arbitration and multicast forwarding tables the SA answers
	 * (sa_tables.c).  A table it holds nothing of is answered all zero,
	 * as OpenSM answers one it never set.
	 */
	const struct devcache *cache;
	/* dFtree's lanes (sm/model/lanes.h, live): the path answers' SL
	   towards a hot-spot; NULL: the routing's SL */
	const struct lanes *lanes;
};

/* The VM on end port pi of the view, or NULL. */
const struct sa_vm *sa_vm_of_port(const struct sa_view *v, uint32_t pi);
/* The VM whose vGUID is guid (dedicated or shared-LID), or NULL. */
const struct sa_vm *sa_vm_of_guid(const struct sa_view *v, uint64_t guid);

/*
 * Partitions (IBA 10.9, OpenSM's osm_physp_share_pkey): do ports a and b
 * of the view share a partition, one of them at least a full member?  A
 * port with itself does; a switch's external port has the table of the
 * end port it faces (part_pkeys()), and one facing a switch none, which
 * shares with everyone (OpenSM: an empty table is not checked).
 */
int sa_share(const struct sa_view *v, uint32_t a, uint32_t b);

/*
 * The port whose GID has interface ID guid: an end port, or the VF port
 * of the VM with that vGUID; FAB_NONE.  hint: a port tried first (the
 * requester's, usually), or FAB_NONE.
 */
uint32_t sa_port_of_guid(const struct sa_view *v, uint64_t guid, uint32_t hint);
/* Does port pi hold P_Key pkey (either membership) in its table? */
int sa_port_holds(const struct sa_view *v, uint32_t pi, uint16_t pkey);

/*
 * The partition the paths from port src to port dst are in, as a
 * PathRecord without a P_Key asked for answers (sa_path.c): its index,
 * or PART_NONE when they share none; *pkey the record's P_Key (0xffff
 * when m is NULL), *sl its SL (given as the routing's, replaced by the
 * partition's own).  m and t of one fabric; the repath notices' records
 * use it too.
 */
uint16_t sa_path_part(const struct part_model *m, const struct lft_tables *t,
		      uint32_t src, uint32_t dst, uint16_t *pkey, uint8_t *sl);

/*
 * The SMs the SA answers SMInfoRecords for, into out (at most max): this
 * SM first (its port GUID, priority, state, ActCount now), then every
 * other SM whose SMInfo the election last read (sm/smstate.h).  Returns
 * how many.  SM_Key is never given (0).
 */
struct sa_query;
uint32_t sa_sminfos(const struct sa_query *q, struct smp_sminfo *out, uint32_t max);

/* One request being answered. */
struct sa_query {
	struct sa *sa;
	struct sm *sm;
	const struct sa_view *view;
	struct notifier *notify;	/* subscriptions (traps/notify.h), or NULL */
	uint64_t sa_key;		/* sa.sa_key: 0 for none (sa_trusted) */
	const uint8_t *mad;		/* the request, len bytes (>= 56) */
	size_t len;
	const struct mad_addr *from;
	uint8_t method;
	uint16_t attr;
	uint32_t attr_mod;
	uint64_t comp_mask;
	const uint8_t *rec;		/* the request's record: mad + 56 */
	size_t rec_len;			/* len - 56 */
	/* the answer, appended by sa_answer_add(): */
	uint8_t *recs;
	size_t n_recs, cap_recs, rec_size;
	size_t max_bytes;		/* the most it may hold (0: no bound) */
	int too_long;			/* sa_answer_add() refused a record for it */
};

/*
 * Appends one record of the family's size to the answer.  Returns 0, or
 * -1 (no memory, or more than max_bytes: the core answers
 * SA_STS_NO_RESOURCES; the family stops).  A Get stops early: the core
 * needs only to know there is more than one.
 */
int sa_answer_add(struct sa_query *q, const void *rec);

/*
 * The port the request came from (its SLID in the view), or FAB_NONE.
 * The record families answer within its partitions (sa_share()); a
 * request from a LID no port holds is not answered when the policy has
 * tenant partitions, as OpenSM ("Cannot find requester physical port").
 */
uint32_t sa_requester(const struct sa_query *q);

/*
 * The request named what (a port's GID or LID, a LID range, a group)
 * outside the requester's partitions, and is answered as if it named
 * nothing that exists: counted (sa_stats.outside) and logged,
 * rate-limited.
 */
void sa_outside(struct sa_query *q, const char *what);

/*
 * A trusted request: the SM_Key field of its SA header (IBA vol. 1
 * §15.2.1.1; IBA 1.2.1 keeps it apart from the SM's own SM_Key, and
 * OpenSM calls it sa_key) is sa.sa_key, and sa.sa_key is set.  With
 * sa.sa_key 0 no request is trusted: a key other than 0 never reaches
 * the families (the core drops it, C15-0.1.5).  What trust opens is in
 * ibsmd(8), "Trusted requests".
 */
int sa_trusted(const struct sa_query *q);

/*
 * A request only a trusted requester may make (P_KeyTableRecords, IBA
 * C15-0.1.18; InformInfo subscriptions to the security traps 256-259,
 * C15-0.2-1.16) came without sa.sa_key: counted (sa_stats.untrusted)
 * and logged, rate-limited; returns REQ_INVALID for the caller to answer.
 */
int sa_untrusted(struct sa_query *q);

#define SA_M_GET	0x01
#define SA_M_GET_TABLE	0x02
#define SA_M_SET	0x04
#define SA_M_DELETE	0x08
#define SA_M_GET_MULTI	0x10

/*
 * A record family.  fn appends the matching records and returns 0, or a
 * MAD/SA status for the whole request (a bad component mask, an invalid
 * GID, ...).  The core turns 0 records into NO_RECORDS for a Get, >1 into
 * TOO_MANY_RECORDS.
 */
struct sa_family {
	uint16_t attr;
	uint8_t methods;		/* SA_M_* */
	uint16_t rec_size;		/* bytes of one record */
	uint8_t by_requester;		/* answered within the requester's
					   partitions (sa_requester()) */
	int (*fn)(struct sa_query *q);
	const char *name;
};

/*
 * The component mask (IBA vol. 1 §15.2.4): bit i selects the i-th field
 * of the record, fields of an embedded attribute (NodeInfo, PortInfo,
 * SwitchInfo) one bit each.  A family describes its fields by bit offset
 * and width in the record as it is on the wire; sa_mask_check() refuses
 * a mask that selects a bit past the last field (REQ_INVALID), and
 * sa_match() tells whether a built record equals the request's template
 * in every selected field.
 */
struct sa_field {
	uint16_t off;		/* bit offset in the record */
	uint16_t bits;		/* width in bits */
};
int sa_mask_check(const struct sa_query *q, unsigned n_fields);
int sa_match(const struct sa_query *q, const uint8_t *rec,
	     const struct sa_field *fields, unsigned n_fields);
/*
 * The request names a LID in field 0 (16 bits at byte 0): does port pi's
 * LMC range hold it (1; also when field 0 is not selected)?  And does
 * rec match the template in every selected field but that LID?
 */
int sa_lid_ok(const struct sa_query *q, const struct fabric *f, uint32_t pi);
int sa_match_rest(const struct sa_query *q, const uint8_t *rec,
		  const struct sa_field *fields, unsigned n);
/* A Get already has more than one record: no need to look further. */
static inline int sa_enough(const struct sa_query *q)
{
	return q->method == SA_METHOD_GET && q->n_recs > 1;
}

/* The families (one file each); rows of the table sa_families. */
extern const struct sa_family sa_families[];
extern const size_t sa_n_families;
int sa_class_port_info(struct sa_query *q);	/* sa_server.c */
int sa_node_records(struct sa_query *q);	/* sa_node.c */
int sa_portinfo_records(struct sa_query *q);
int sa_switchinfo_records(struct sa_query *q);
int sa_link_records(struct sa_query *q);
int sa_lft_records(struct sa_query *q);
int sa_guidinfo_records(struct sa_query *q);
int sa_path_records(struct sa_query *q);	/* sa_path.c */
int sa_multipath_records(struct sa_query *q);
int sa_inform_info(struct sa_query *q);		/* sa_inform.c */
int sa_inform_records(struct sa_query *q);
int sa_mcmember_records(struct sa_query *q);	/* sa_mcmember.c */
int sa_service_records(struct sa_query *q);	/* sa_service.c */

/* The registered ServiceRecords (sm/sa/svcdb.h), the SA's. */
struct svc_db;
struct svc_db *sa_services(struct sa *sa);
/* The policy's bounds on them: sa.max_services, sa.max_services_per_port. */
void sa_service_bounds(const struct sa_query *q, uint32_t *total, uint32_t *per_port);
int sa_pkey_records(struct sa_query *q);	/* sa_tables.c */
int sa_sl2vl_records(struct sa_query *q);
int sa_vlarb_records(struct sa_query *q);
int sa_mft_records(struct sa_query *q);
int sa_sminfo_records(struct sa_query *q);	/* sa_sminfo.c */

/*
 * Members whose port is no longer in the view (neither an end port nor
 * a VM's vGUID) leave every group; groups left without a full member
 * go (sa_mcmember.c).  The daemon calls it after sa_publish().
 */
void sa_mcast_prune(struct sm *sm);

/* Counters, for ibsmctl and the tests. */
struct sa_stats {
	uint64_t requests, answered, records, errors, rmpp_sent;
	uint64_t dropped_not_master, dropped_key /* SM_Key not 0 nor sa.sa_key */, dropped_short, dropped_rmpp;
	uint64_t send_failed;
	uint64_t dropped_requester;	/* from no port, with partitions */
	uint64_t outside;		/* named a port or group outside the
					   requester's partitions (sa_outside()) */
	uint64_t untrusted;		/* refused for want of sa.sa_key
					   (sa_untrusted()) */
	uint64_t refused_budget;	/* GetTables refused for the answers in
					   flight (sm/sa/sa_budget.h) */
	uint64_t refused_too_long;	/* of those: longer than a requester
					   may hold (ERR_NO_RESOURCES) */
};
const struct sa_stats *sa_get_stats(const struct sm *sm);
/* The answers in flight (sm/sa/sa_budget.h); NULL before sa_init. */
struct sa_budget_stats;
const struct sa_budget_stats *sa_get_budget_stats(const struct sm *sm);
/* Into ibsmctl status's object o: "sa", its counters (nothing before sa_init). */
struct json_t;
void sa_to_ctl(const struct sm *sm, struct json_t *o);
/* The view answered from (NULL before the first publish). */
const struct sa_view *sa_get_view(const struct sm *sm);

/* Serves the n families (sa_families: every one) on the receive path. */
int sa_init(struct sm *sm, const struct sa_family *families, size_t n);
void sa_free(struct sm *sm);
/* A configuration is complete: answer from this model and these routes. */
void sa_publish(struct sm *sm, const struct fabric *f,
		const struct lft_tables *lft);
/*
 * A shared-LID VM of the registry was created or moved (its vGUID is now
 * on the PF of vSwitch hyp_guid), or went (drop): the view answers so
 * from now on, in O(VMs on that PF) -- a publish copies the whole model.
 * Nothing before the first publish.
 */
void sa_shared_vm_set(struct sm *sm, uint64_t vguid, uint64_t hyp_guid);
void sa_shared_vm_drop(struct sm *sm, uint64_t vguid);

#endif
