/*
 * SMInfoRecord (IBA vol. 1 §15.2.5.3): the SMs of the subnet, this one
 * first, then each other SM as the election last read its SMInfo
 * (sa_sminfos()).  Layout: LID, reserved(16), SMInfo (GUID, SM_Key,
 * ActCount, Priority(4), SMState(4)): 25 bytes (stride 32, as OpenSM's).
 * The LID is the one the view gives the SM's port; an SM whose port is
 * not in the view, or that the requester shares no partition with, is
 * left out.  SM_Key is always 0: the key is never told (C15-0.1.5; OpenSM
 * gives 0 too).
 */
#include <string.h>

#include "mad/sa.h"
#include "mad/smp.h"
#include "sm/sa/sa_server.h"

#define SMIR_SIZE	25
#define SMIR_MAX_SMS	64	/* SMs one answer lists */

static const struct sa_field smir_fields[] = {
	{ 0, 16 }, { 16, 16 },			/* LID, reserved */
	{ 32, 64 }, { 96, 64 }, { 160, 32 },	/* GUID, SM_Key, ActCount */
	{ 192, 4 }, { 196, 4 },			/* Priority, SMState */
};
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The end port of port GUID g in the view, or FAB_NONE. */
static uint32_t port_of_guid(const struct fabric *f, uint64_t g)
{
	for (uint32_t pi = 0; pi < f->n_ports; pi++)
		if (fabric_is_endport(f, pi) && f->ports[pi].lid &&
		    (f->ports[pi].guid ? f->ports[pi].guid : f->nodes[f->ports[pi].node].guid) == g)
			return pi;
	return FAB_NONE;
}

int sa_sminfo_records(struct sa_query *q)
{
	const struct fabric *f = q->view->f;
	struct smp_sminfo sms[SMIR_MAX_SMS];
	uint32_t rq = sa_requester(q);
	int st = sa_mask_check(q, N(smir_fields));
	uint32_t n = st ? 0 : sa_sminfos(q, sms, SMIR_MAX_SMS);
	for (uint32_t i = 0; i < n && !st && !sa_enough(q); i++) {
		uint32_t pi = port_of_guid(f, sms[i].guid);
		if (pi == FAB_NONE || !sa_lid_ok(q, f, pi) || !sa_share(q->view, rq, pi))
			continue;
		uint8_t r[SMIR_SIZE], smi[SMP_DATA_SIZE];
		memset(r, 0, sizeof(r));
		sa_put16(r, (uint16_t)f->ports[pi].lid);
		sms[i].sm_key = 0;
		smp_encode_sminfo(smi, &sms[i]);
		memcpy(r + 4, smi, SMIR_SIZE - 4);
		if (sa_match_rest(q, r, smir_fields, N(smir_fields)) && sa_answer_add(q, r) < 0)
			st = SA_STS_NO_RESOURCES;
	}
	return st;
}
