/*
 * The record families the SA serves: one row each, its attribute, the
 * methods it takes, its record size, whether it answers within the
 * requester's partitions, its handler (sm/sa/sa_*.c).  Given to sa_init()
 * by the daemon, so that the server calls no family but through it.
 */
#include "sm/sa/sa_server.h"

const struct sa_family sa_families[] = {
	{ SA_ATTR_CLASS_PORT_INFO, SA_M_GET, SA_SIZE_CLASS_PORT_INFO, 0,
	  sa_class_port_info, "ClassPortInfo" },
	{ SA_ATTR_NODE_REC, SA_M_GET | SA_M_GET_TABLE, SA_SIZE_NODE_REC, 1,
	  sa_node_records, "NodeRecord" },
	{ SA_ATTR_PORTINFO_REC, SA_M_GET | SA_M_GET_TABLE, 68, 1,
	  sa_portinfo_records, "PortInfoRecord" },
	{ SA_ATTR_SWITCHINFO_REC, SA_M_GET | SA_M_GET_TABLE, 24, 1,
	  sa_switchinfo_records, "SwitchInfoRecord" },
	{ SA_ATTR_LINK_REC, SA_M_GET | SA_M_GET_TABLE, 8, 1,
	  sa_link_records, "LinkRecord" },
	{ SA_ATTR_LFT_REC, SA_M_GET | SA_M_GET_TABLE, 72, 1,
	  sa_lft_records, "LFTRecord" },
	{ SA_ATTR_GUIDINFO_REC, SA_M_GET | SA_M_GET_TABLE | SA_M_SET | SA_M_DELETE, 72, 1,
	  sa_guidinfo_records, "GUIDInfoRecord" },
	{ SA_ATTR_PATH_REC, SA_M_GET | SA_M_GET_TABLE, SA_SIZE_PATH_REC, 1,
	  sa_path_records, "PathRecord" },
	{ SA_ATTR_MULTIPATH_REC, SA_M_GET_MULTI, SA_SIZE_PATH_REC, 1,
	  sa_multipath_records, "MultiPathRecord" },
	{ SA_ATTR_INFORM_INFO, SA_M_SET, SA_SIZE_INFORM_INFO, 0,
	  sa_inform_info, "InformInfo" },
	{ SA_ATTR_INFORM_INFO_REC, SA_M_GET | SA_M_GET_TABLE, 64, 1,
	  sa_inform_records, "InformInfoRecord" },
	{ SA_ATTR_PKEY_REC, SA_M_GET | SA_M_GET_TABLE, 72, 1,
	  sa_pkey_records, "PKeyTableRecord" },
	{ SA_ATTR_SL2VL_REC, SA_M_GET | SA_M_GET_TABLE, 16, 1,
	  sa_sl2vl_records, "SLtoVLMappingTableRecord" },
	{ SA_ATTR_VLARB_REC, SA_M_GET | SA_M_GET_TABLE, 72, 1,
	  sa_vlarb_records, "VLArbitrationTableRecord" },
	{ SA_ATTR_MFT_REC, SA_M_GET | SA_M_GET_TABLE, 72, 1,
	  sa_mft_records, "MulticastForwardingTableRecord" },
	{ SA_ATTR_SMINFO_REC, SA_M_GET | SA_M_GET_TABLE, 25, 1,
	  sa_sminfo_records, "SMInfoRecord" },
	{ SA_ATTR_MCMEMBER_REC, SA_M_GET | SA_M_GET_TABLE | SA_M_SET | SA_M_DELETE, 52, 1,
	  sa_mcmember_records, "MCMemberRecord" },
	{ SA_ATTR_SERVICE_REC, SA_M_GET | SA_M_GET_TABLE | SA_M_SET | SA_M_DELETE, 176, 1,
	  sa_service_records, "ServiceRecord" },
};

const size_t sa_n_families = sizeof(sa_families) / sizeof(sa_families[0]);
