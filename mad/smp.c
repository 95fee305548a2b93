#include "mad/smp.h"

#include <infiniband/mad.h>
#include <string.h>

void smp_init_dr(uint8_t *mad, int method, uint16_t attr, uint32_t mod,
		 const uint8_t *path, int hops)
{
	ib_rpc_t rpc;
	ib_dr_path_t dr;

	memset(mad, 0, MAD_SIZE);
	memset(&rpc, 0, sizeof(rpc));
	memset(&dr, 0, sizeof(dr));
	rpc.mgtclass = IB_SMI_DIRECT_CLASS;
	rpc.method = method;
	rpc.attr.id = attr;
	rpc.attr.mod = mod;
	rpc.dataoffs = SMP_DATA_OFFS;
	rpc.datasz = SMP_DATA_SIZE;
	rpc.trid = 1;	/* the transaction table sets the real one */
	dr.cnt = hops;
	dr.drslid = 0xffff;
	dr.drdlid = 0xffff;
	for (int i = 1; i <= hops && i < IB_SUBNET_PATH_HOPS_MAX; i++)
		dr.p[i] = path[i];
	mad_encode(mad, &rpc, &dr, NULL);
}

void smp_init_lid(uint8_t *mad, int method, uint16_t attr, uint32_t mod)
{
	ib_rpc_t rpc;

	memset(mad, 0, MAD_SIZE);
	memset(&rpc, 0, sizeof(rpc));
	rpc.mgtclass = IB_SMI_CLASS;
	rpc.method = method;
	rpc.attr.id = attr;
	rpc.attr.mod = mod;
	rpc.dataoffs = SMP_DATA_OFFS;
	rpc.datasz = SMP_DATA_SIZE;
	rpc.trid = 1;
	mad_encode(mad, &rpc, NULL, NULL);
}

void smp_make_response(uint8_t *mad, int status)
{
	mad_set_field(mad, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_GET_RESPONSE & 0x7f);
	mad_set_field(mad, 0, IB_MAD_RESPONSE_F, 1);
	if (smp_class(mad) == IB_SMI_DIRECT_CLASS) {
		/* The responder turns the packet around: D bit set. */
		mad_set_field(mad, 0, IB_DRSMP_DIRECTION_F, 1);
		mad_set_field(mad, 0, IB_DRSMP_STATUS_F, (uint32_t)status);
	} else {
		mad_set_field(mad, 0, IB_MAD_STATUS_F, (uint32_t)status);
	}
}

int smp_status(const uint8_t *mad)
{
	if (smp_class(mad) == IB_SMI_DIRECT_CLASS)
		return (int)mad_get_field((void *)mad, 0, IB_DRSMP_STATUS_F);
	return (int)mad_get_field((void *)mad, 0, IB_MAD_STATUS_F);
}

int smp_method(const uint8_t *mad)
{
	return mad[3];
}

int smp_class(const uint8_t *mad)
{
	return mad[1];
}

uint16_t smp_attr(const uint8_t *mad)
{
	return (uint16_t)mad_get_field((void *)mad, 0, IB_MAD_ATTRID_F);
}

uint32_t smp_attr_mod(const uint8_t *mad)
{
	return mad_get_field((void *)mad, 0, IB_MAD_ATTRMOD_F);
}

void smp_dr_address(struct mad_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->lid = 0xffff;
}

void smp_decode_nodeinfo(const uint8_t *data, struct smp_nodeinfo *ni)
{
	void *d = (void *)data;
	ni->type = (uint8_t)mad_get_field(d, 0, IB_NODE_TYPE_F);
	ni->nports = (uint8_t)mad_get_field(d, 0, IB_NODE_NPORTS_F);
	ni->sys_guid = mad_get_field64(d, 0, IB_NODE_SYSTEM_GUID_F);
	ni->node_guid = mad_get_field64(d, 0, IB_NODE_GUID_F);
	ni->port_guid = mad_get_field64(d, 0, IB_NODE_PORT_GUID_F);
	ni->partition_cap = (uint16_t)mad_get_field(d, 0, IB_NODE_PARTITION_CAP_F);
	ni->device_id = (uint16_t)mad_get_field(d, 0, IB_NODE_DEVID_F);
	ni->revision = mad_get_field(d, 0, IB_NODE_REVISION_F);
	ni->local_port = (uint8_t)mad_get_field(d, 0, IB_NODE_LOCAL_PORT_F);
	ni->vendor_id = mad_get_field(d, 0, IB_NODE_VENDORID_F);
}

void smp_decode_switchinfo(const uint8_t *data, struct smp_switchinfo *si)
{
	void *d = (void *)data;
	si->lft_cap = mad_get_field(d, 0, IB_SW_LINEAR_FDB_CAP_F);
	si->lft_top = mad_get_field(d, 0, IB_SW_LINEAR_FDB_TOP_F);
	si->mft_cap = (uint16_t)mad_get_field(d, 0, IB_SW_MCAST_FDB_CAP_F);
	si->mft_top = (uint16_t)mad_get_field(d, 0, IB_SW_MCAST_FDB_TOP_F);
	si->partition_enf_cap =
		(uint16_t)mad_get_field(d, 0, IB_SW_PARTITION_ENFORCE_CAP_F);
	si->lifetime = (uint8_t)mad_get_field(d, 0, IB_SW_LIFE_TIME_F);
	si->port_state_change = (uint8_t)mad_get_field(d, 0, IB_SW_STATE_CHANGE_F);
	si->enhanced_port0 = (uint8_t)mad_get_field(d, 0, IB_SW_ENHANCED_PORT0_F);
}

void smp_decode_sminfo(const uint8_t *data, struct smp_sminfo *sm)
{
	void *d = (void *)data;
	sm->guid = mad_get_field64(d, 0, IB_SMINFO_GUID_F);
	sm->sm_key = mad_get_field64(d, 0, IB_SMINFO_KEY_F);
	sm->act_count = mad_get_field(d, 0, IB_SMINFO_ACT_F);
	sm->priority = (uint8_t)mad_get_field(d, 0, IB_SMINFO_PRIO_F);
	sm->state = (uint8_t)mad_get_field(d, 0, IB_SMINFO_STATE_F);
}

void smp_encode_sminfo(uint8_t *data, const struct smp_sminfo *sm)
{
	memset(data, 0, SMP_DATA_SIZE);
	mad_set_field64(data, 0, IB_SMINFO_GUID_F, sm->guid);
	mad_set_field64(data, 0, IB_SMINFO_KEY_F, sm->sm_key);
	mad_set_field(data, 0, IB_SMINFO_ACT_F, sm->act_count);
	mad_set_field(data, 0, IB_SMINFO_PRIO_F, sm->priority);
	mad_set_field(data, 0, IB_SMINFO_STATE_F, sm->state);
}

void smp_decode_nodedesc(const uint8_t *data, char *out)
{
	memcpy(out, data, 64);
	out[64] = '\0';
	size_t n = strlen(out);
	while (n && (out[n - 1] == ' ' || out[n - 1] == '\n'))
		out[--n] = '\0';
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] > 0x7e)
			out[i] = '?';
}

uint32_t smp_pi_get(const uint8_t *data, int field)
{
	return mad_get_field((void *)data, 0, (enum MAD_FIELDS)field);
}

uint64_t smp_pi_get64(const uint8_t *data, int field)
{
	return mad_get_field64((void *)data, 0, (enum MAD_FIELDS)field);
}

void smp_pi_set(uint8_t *data, int field, uint32_t v)
{
	mad_set_field(data, 0, (enum MAD_FIELDS)field, v);
}

void smp_pi_set64(uint8_t *data, int field, uint64_t v)
{
	mad_set_field64(data, 0, (enum MAD_FIELDS)field, v);
}

void smp_pi_prepare_set(uint8_t *data)
{
	/* 0 means "no change" for these */
	mad_set_field(data, 0, IB_PORT_STATE_F, 0);
	mad_set_field(data, 0, IB_PORT_PHYS_STATE_F, 0);
	mad_set_field(data, 0, IB_PORT_LINK_DOWN_DEF_F, 0);
	mad_set_field(data, 0, IB_PORT_LINK_WIDTH_ENABLED_F, 0);
	mad_set_field(data, 0, IB_PORT_LINK_SPEED_ENABLED_F, 0);
	mad_set_field(data, 0, IB_PORT_CLIENT_REREG_F, 0);
}

int smp_reverse_path(const uint8_t *mad, uint8_t *path)
{
	if (smp_class(mad) != IB_SMI_DIRECT_CLASS)
		return -1;
	int n = (int)mad_get_field((void *)mad, 0, IB_DRSMP_HOPCNT_F);
	if (n < 0 || n >= IB_SUBNET_PATH_HOPS_MAX)
		return -1;
	uint8_t rp[IB_SUBNET_PATH_HOPS_MAX];
	mad_get_array((void *)mad, 0, IB_DRSMP_RPATH_F, rp);
	path[0] = 0;
	for (int i = 1; i <= n; i++)
		path[i] = rp[n - i + 1];
	return n;
}

const char *sm_state_name(int state)
{
	switch (state) {
	case SMS_NOTACTIVE: return "NOTACTIVE";
	case SMS_DISCOVERING: return "DISCOVERING";
	case SMS_STANDBY: return "STANDBY";
	case SMS_MASTER: return "MASTER";
	}
	return "?";
}
