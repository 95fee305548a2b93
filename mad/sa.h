/*
 * Subnet administration (class 0x03, version 2) framing, IBA vol. 1
 * §15.2.1: bytes 0-23 the common MAD header, 24-35 the RMPP header,
 * 36-43 SM_Key, 44-45 AttributeOffset (record size in 8-byte words),
 * 46-47 reserved, 48-55 ComponentMask, 56-255 data (200 bytes).
 *
 * A GetTableResp carries n records spaced AttributeOffset*8 bytes apart
 * and is 56 + n * spacing bytes long (the last record padded); with RMPP
 * every segment repeats the 56-byte header and carries 200 bytes of the
 * records, the PayloadLength of the first segment is 20 * segments +
 * n * spacing (20 + n * spacing for one segment) and the last segment's
 * is 20 + its data bytes (mad/rmpp.h).  An empty table is the 56-byte
 * header alone.  infiniband-diags' saquery counts the records from the
 * received length.
 *
 * The SA's class-specific statuses live in bits 8-15 of the MAD status.
 */
#ifndef IBSMD_SA_MAD_H
#define IBSMD_SA_MAD_H

#include <stdint.h>
#include <string.h>

#include "mad/transport.h"

#define SA_CLASS		0x03
#define SA_CLASS_VERSION	2
#define SA_HDR_SIZE		56	/* common + RMPP + SA header */
#define SA_DATA_SIZE		200	/* MAD_SIZE - SA_HDR_SIZE */
#define SA_RMPP_PAYLOAD		220	/* RMPP data per segment: SA header 20 + 200 */

/* methods (vol. 1 Table 211) */
#define SA_METHOD_GET		0x01
#define SA_METHOD_SET		0x02
#define SA_METHOD_GET_RESP	0x81
#define SA_METHOD_REPORT	0x06
#define SA_METHOD_REPORT_RESP	0x86
#define SA_METHOD_GET_TABLE	0x12
#define SA_METHOD_GET_TABLE_RESP 0x92
#define SA_METHOD_GET_MULTI	0x14
#define SA_METHOD_GET_MULTI_RESP 0x94
#define SA_METHOD_DELETE	0x15
#define SA_METHOD_DELETE_RESP	0x95

/* attributes */
#define SA_ATTR_CLASS_PORT_INFO	0x0001
#define SA_ATTR_NOTICE		0x0002
#define SA_ATTR_INFORM_INFO	0x0003
#define SA_ATTR_NODE_REC	0x0011
#define SA_ATTR_PORTINFO_REC	0x0012
#define SA_ATTR_SL2VL_REC	0x0013
#define SA_ATTR_SWITCHINFO_REC	0x0014
#define SA_ATTR_LFT_REC		0x0015
#define SA_ATTR_MFT_REC		0x0017
#define SA_ATTR_SMINFO_REC	0x0018
#define SA_ATTR_LINK_REC	0x0020
#define SA_ATTR_GUIDINFO_REC	0x0030
#define SA_ATTR_SERVICE_REC	0x0031
#define SA_ATTR_PKEY_REC	0x0033
#define SA_ATTR_PATH_REC	0x0035
#define SA_ATTR_VLARB_REC	0x0036
#define SA_ATTR_MCMEMBER_REC	0x0038
#define SA_ATTR_MULTIPATH_REC	0x003a
#define SA_ATTR_INFORM_INFO_REC	0x00f3

/* record sizes in bytes (AttributeOffset = (size + 7) / 8) */
#define SA_SIZE_CLASS_PORT_INFO	72
#define SA_SIZE_NOTICE		80
#define SA_SIZE_INFORM_INFO	36
#define SA_SIZE_NODE_REC	108
#define SA_SIZE_PATH_REC	64
/* the other records' sizes: next to their codecs (checked against the spec) */

/* InformInfo (vol. 1 §13.4.8.3), byte offsets */
#define II_GID		0
#define II_LID_BEGIN	16	/* 0xffff: every LID */
#define II_LID_END	18
#define II_IS_GENERIC	22
#define II_SUBSCRIBE	23
#define II_TYPE		24
#define II_TRAP		26	/* TrapNumber or DeviceID */
#define II_QPN_RESP	28	/* QPN (24 bits), 3 reserved, RespTimeValue (5) */
#define II_PRODUCER	33	/* ProducerType or VendorID, 24 bits */
/* InformInfoRecord: SubscriberGID 16, Enum 2, reserved 6, then InformInfo */
#define IIR_INFORM	24

/* MAD status (vol. 1 §13.4.7, §15.2.1.2); SA codes are status << 8 */
#define MAD_STS_BUSY			0x0001
#define MAD_STS_BAD_VERSION		0x0004
#define MAD_STS_METHOD_UNSUPPORTED	0x0008
#define MAD_STS_METHOD_ATTR_UNSUPPORTED	0x000c
#define MAD_STS_INVALID_FIELD		0x001c
#define SA_STS_NO_RESOURCES		0x0100
#define SA_STS_REQ_INVALID		0x0200
#define SA_STS_NO_RECORDS		0x0300
#define SA_STS_TOO_MANY_RECORDS		0x0400
#define SA_STS_INVALID_GID		0x0500
#define SA_STS_INSUFFICIENT_COMPONENTS	0x0600
#define SA_STS_DENIED			0x0700

/* RMPP header (bytes 24-35) */
#define RMPP_VERSION		1
#define RMPP_TYPE_DATA		1
#define RMPP_TYPE_ACK		2
#define RMPP_TYPE_STOP		3
#define RMPP_TYPE_ABORT		4
#define RMPP_FLAG_ACTIVE	0x01
#define RMPP_FLAG_FIRST		0x02
#define RMPP_FLAG_LAST		0x04

static inline uint16_t sa_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}
static inline uint32_t sa_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t sa_get64(const uint8_t *p)
{
	return (uint64_t)sa_get32(p) << 32 | sa_get32(p + 4);
}
static inline void sa_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static inline void sa_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}
static inline void sa_put64(uint8_t *p, uint64_t v)
{
	sa_put32(p, (uint32_t)(v >> 32));
	sa_put32(p + 4, (uint32_t)v);
}

/* The header fields of a MAD of an RMPP class. */
static inline uint8_t mad_method(const uint8_t *m) { return m[3]; }
static inline uint16_t mad_status(const uint8_t *m) { return sa_get16(m + 4); }
static inline uint64_t mad_tid(const uint8_t *m) { return sa_get64(m + 8); }
static inline uint16_t mad_attr_id(const uint8_t *m) { return sa_get16(m + 16); }
static inline uint32_t mad_attr_mod(const uint8_t *m) { return sa_get32(m + 20); }
static inline uint8_t rmpp_type(const uint8_t *m) { return m[25]; }
static inline uint8_t rmpp_flags(const uint8_t *m) { return m[26] & 0x07; }
static inline uint8_t rmpp_resp_time(const uint8_t *m) { return m[26] >> 3; }
static inline uint8_t rmpp_status(const uint8_t *m) { return m[27]; }
static inline uint32_t rmpp_seg(const uint8_t *m) { return sa_get32(m + 28); }
/* PayloadLength of a DATA segment, NewWindowLast of an ACK */
static inline uint32_t rmpp_len(const uint8_t *m) { return sa_get32(m + 32); }
static inline uint64_t sa_sm_key(const uint8_t *m) { return sa_get64(m + 36); }
static inline uint16_t sa_attr_offset(const uint8_t *m) { return sa_get16(m + 44); }
static inline uint64_t sa_comp_mask(const uint8_t *m) { return sa_get64(m + 48); }
static inline const uint8_t *sa_data(const uint8_t *m) { return m + SA_HDR_SIZE; }

/*
 * A request of class 0x03: base version 1, class version 2, the method,
 * a TID, the attribute, the component mask; data (len bytes, at most
 * SA_DATA_SIZE) copied to byte 56.  mad is MAD_SIZE bytes.
 */
static inline void sa_init_request(uint8_t *mad, uint8_t method, uint64_t tid,
				   uint16_t attr, uint32_t mod,
				   uint64_t comp_mask, const void *data,
				   size_t len)
{
	memset(mad, 0, MAD_SIZE);
	mad[0] = 1;
	mad[1] = SA_CLASS;
	mad[2] = SA_CLASS_VERSION;
	mad[3] = method;
	sa_put64(mad + 8, tid);
	sa_put16(mad + 16, attr);
	sa_put32(mad + 20, mod);
	sa_put64(mad + 48, comp_mask);
	if (data && len)
		memcpy(mad + SA_HDR_SIZE, data,
		       len > SA_DATA_SIZE ? SA_DATA_SIZE : len);
}

#endif
