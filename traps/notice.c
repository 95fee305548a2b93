/*
 * The Notice codec (see notice.h for the layout, 68/69 included).
 */
#include "traps/notice.h"

#include <string.h>

#include "mad/sa.h"

void notice_encode(const struct notice *n, uint8_t out[NOTICE_SIZE])
{
	memset(out, 0, NOTICE_SIZE);
	out[0] = (uint8_t)((n->generic ? 0x80 : 0) | (n->type & 0x7f));
	out[1] = (uint8_t)(n->producer >> 16);
	out[2] = (uint8_t)(n->producer >> 8);
	out[3] = (uint8_t)n->producer;
	sa_put16(out + 4, n->trap);
	sa_put16(out + 6, n->issuer_lid);
	sa_put16(out + 8, (uint16_t)((n->toggle ? 0x8000 : 0) |
				  (n->count & 0x7fff)));
	memcpy(out + 10, n->data, NOTICE_DATA_SIZE);
	memcpy(out + 64, n->issuer_gid, 16);
}

void notice_decode(const uint8_t in[NOTICE_SIZE], struct notice *n)
{
	n->generic = in[0] >> 7;
	n->type = in[0] & 0x7f;
	n->producer = (uint32_t)in[1] << 16 | (uint32_t)in[2] << 8 | in[3];
	n->trap = sa_get16(in + 4);
	n->issuer_lid = sa_get16(in + 6);
	n->toggle = in[8] >> 7;
	n->count = sa_get16(in + 8) & 0x7fff;
	memcpy(n->data, in + 10, NOTICE_DATA_SIZE);
	memcpy(n->issuer_gid, in + 64, 16);
}

void notice_init_sm(struct notice *n, uint16_t trap, uint16_t sm_lid,
		    const uint8_t sm_gid[16])
{
	memset(n, 0, sizeof(*n));
	n->generic = 1;
	n->type = NOTICE_TYPE_SM;
	n->producer = NOTICE_PRODUCER_CM;
	n->trap = trap;
	n->issuer_lid = sm_lid;
	if (sm_gid)
		memcpy(n->issuer_gid, sm_gid, 16);
}

/* 64-67: 6 reserved bytes, then the GID */
void notice_set_gid(struct notice *n, const uint8_t gid[16])
{
	memset(n->data, 0, NOTICE_DATA_SIZE);
	memcpy(n->data + 6, gid, 16);
}

void notice_get_gid(const struct notice *n, uint8_t gid[16])
{
	memcpy(gid, n->data + 6, 16);
}

void notice_set_path(struct notice *n, const struct notice_path *p)
{
	uint8_t *d = n->data;
	memset(d, 0, NOTICE_DATA_SIZE);
	d[0] = p->flags & (NPATH_FLAGS & ~NPATH_LANE);	/* a lane: notice_lane() */
	d[1] = p->sl & 0x0f;
	d[2] = p->mtu & 0x3f;
	d[3] = p->rate & 0x3f;
	sa_put16(d + 4, p->pkey);
	d[6] = p->packet_life & 0x3f;
	sa_put32(d + 8, p->slid);
	sa_put32(d + 12, p->dlid);
	if (p->flags & NPATH_GIDS) {
		memcpy(d + 16, p->sgid, 16);
		memcpy(d + 32, p->dgid, 16);
	}
}

void notice_get_path(const struct notice *n, struct notice_path *p)
{
	const uint8_t *d = n->data;
	memset(p, 0, sizeof(*p));
	p->flags = d[0] & NPATH_FLAGS;
	p->sl = d[1] & 0x0f;
	p->mtu = d[2] & 0x3f;
	p->rate = d[3] & 0x3f;
	p->pkey = sa_get16(d + 4);
	p->packet_life = d[6] & 0x3f;
	p->slid = sa_get32(d + 8);
	p->dlid = sa_get32(d + 12);
	if (p->flags & NPATH_GIDS) {
		memcpy(p->sgid, d + 16, 16);
		memcpy(p->dgid, d + 32, 16);
	}
}

void notice_lane(struct notice *n, uint16_t trap, uint16_t sm_lid,
		 const uint8_t sm_gid[16], const struct notice_lane *l)
{
	uint8_t *d = n->data;
	notice_init_sm(n, trap, sm_lid, sm_gid);
	d[0] = NPATH_LANE;
	d[1] = l->sl & 0x0f;
	d[7] = l->lmc & NLANE_LMC_MAX;
	sa_put32(d + 8, l->slid);
	sa_put32(d + 12, l->dlid);
}

int notice_get_lane(const struct notice *n, struct notice_lane *l)
{
	const uint8_t *d = n->data;
	if (!n->generic || (n->trap != TRAP_UNPATH && n->trap != TRAP_REPATH) ||
	    (d[0] & NPATH_FLAGS) != NPATH_LANE)
		return -1;
	l->sl = d[1] & 0x0f;
	l->lmc = d[7] & NLANE_LMC_MAX;
	l->slid = sa_get32(d + 8);
	l->dlid = sa_get32(d + 12);
	return 0;
}
