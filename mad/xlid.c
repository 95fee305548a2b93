/*
 * The SM's codec of the extended-LID extension defined in mad/xlid.h.
 * The emulator decodes the same bytes with its own code (mad/emu/emu_xlid.c),
 * never this file's: tests/unit/test_xlid.c runs both over the golden
 * vectors of ibsmd(8), so a misreading of the definition in either shows.
 */
#include "mad/xlid.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Byte offsets in XLIDCap (mad/xlid.h). */
#define CAP_VERSION	0
#define CAP_FLAGS	1
#define CAP_LFTCAP	4
#define CAP_LFTTOP	8
#define CAP_DEFPORT	12
#define CAP_PORTVLID	16
#define CAP_CRC		62
#define F_SUPPORTED	0x80
#define F_ENABLED	0x40

/* PathRecord byte 58 and the LRH bytes the extra bits live in. */
#define PR_XBYTE	58
#define PR_DLID		40
#define PR_SLID		42

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

uint16_t xlid_crc16(const uint8_t *d, size_t n)
{
	uint16_t crc = 0xFFFF;

	/* CRC-16/CCITT-FALSE, bit by bit: 62 bytes, no table worth having. */
	for (size_t i = 0; i < n; i++) {
		crc ^= (uint16_t)(d[i] << 8);
		for (int b = 0; b < 8; b++)
			crc = (crc & 0x8000) ? (uint16_t)(crc << 1 ^ 0x1021) :
			    (uint16_t)(crc << 1);
	}
	return crc;
}

void xlid_cap_encode(const struct xlid_cap *c, uint8_t *d)
{
	uint16_t crc;

	memset(d, 0, 64);
	d[CAP_VERSION] = XLID_VERSION;
	d[CAP_FLAGS] = (c->supported ? F_SUPPORTED : 0) |
	    (c->enabled ? F_ENABLED : 0);
	put32(d + CAP_LFTCAP, c->lft_cap);
	put32(d + CAP_LFTTOP, c->lft_top);
	d[CAP_DEFPORT] = c->default_port;
	put32(d + CAP_PORTVLID, c->port_vlid);
	crc = xlid_crc16(d, CAP_CRC);
	d[CAP_CRC] = (uint8_t)(crc >> 8);
	d[CAP_CRC + 1] = (uint8_t)crc;
}

/* Reserved bytes a..b inclusive must be 0. */
static int zero_range(const uint8_t *d, int a, int b)
{
	for (int i = a; i <= b; i++)
		if (d[i])
			return i;
	return -1;
}

int xlid_cap_decode(const uint8_t *d, struct xlid_cap *c, char *err,
		    size_t errlen)
{
	uint16_t crc = (uint16_t)(d[CAP_CRC] << 8 | d[CAP_CRC + 1]);
	uint32_t cap, top, vlid;
	int z;

	/*
	 * The CRC first: a flipped bit anywhere is named as what it is, not
	 * as whichever field it happened to land in.
	 */
	if (xlid_crc16(d, CAP_CRC) != crc)
		return fail(err, errlen, "XLIDCap: bad CRC 0x%04x (want 0x%04x)",
		    crc, xlid_crc16(d, CAP_CRC));
	if (d[CAP_VERSION] != XLID_VERSION)
		return fail(err, errlen, "XLIDCap: version %u, not %u",
		    d[CAP_VERSION], XLID_VERSION);
	if (d[CAP_FLAGS] & ~(F_SUPPORTED | F_ENABLED))
		return fail(err, errlen, "XLIDCap: reserved flag bits 0x%02x",
		    d[CAP_FLAGS] & ~(F_SUPPORTED | F_ENABLED));
	if ((z = zero_range(d, 2, 3)) >= 0 || (z = zero_range(d, 13, 15)) >= 0 ||
	    (z = zero_range(d, 20, 61)) >= 0)
		return fail(err, errlen, "XLIDCap: reserved byte %d is 0x%02x",
		    z, d[z]);
	cap = get32(d + CAP_LFTCAP);
	top = get32(d + CAP_LFTTOP);
	vlid = get32(d + CAP_PORTVLID);
	if (cap % 64 || cap > XLID_MAX_ENTRIES)
		return fail(err, errlen,
		    "XLIDCap: SecondaryLFTCap %u not a multiple of 64 up to %u",
		    cap, XLID_MAX_ENTRIES);
	if (top > cap)
		return fail(err, errlen,
		    "XLIDCap: SecondaryLFTTop %u above SecondaryLFTCap %u",
		    top, cap);
	if (vlid && !xlid_is_vlid(vlid))
		return fail(err, errlen, "XLIDCap: PortVLID 0x%x is not a vLID",
		    vlid);
	c->supported = !!(d[CAP_FLAGS] & F_SUPPORTED);
	c->enabled = !!(d[CAP_FLAGS] & F_ENABLED);
	c->lft_cap = cap;
	c->lft_top = top;
	c->default_port = d[CAP_DEFPORT];
	c->port_vlid = vlid;
	return 0;
}

int xlid_lft_check(uint32_t block, const uint8_t *d, unsigned nports,
		   uint32_t cap, char *err, size_t errlen)
{
	if (block >= XLID_BLOCKS)
		return fail(err, errlen, "XLIDLFT: block %u above %u", block,
		    XLID_BLOCKS - 1);
	if (block >= cap / 64)
		return fail(err, errlen,
		    "XLIDLFT: block %u at or above SecondaryLFTCap %u / 64",
		    block, cap);
	for (int i = 0; i < 64; i++)
		if (d[i] != 0xFF && d[i] > nports)
			return fail(err, errlen,
			    "XLIDLFT: block %u entry %d: port %u of %u",
			    block, i, d[i], nports);
	return 0;
}

/*
 * The LRH: DLID[15:0] in bytes 2-3, DLID[17:16] in byte 1 bits 3:2;
 * SLID[15:0] in bytes 6-7, SLID[17:16] in byte 4 bits 7:6.  Set writes
 * the whole LID (low and high parts) and leaves every other bit alone.
 */
void xlid_lrh_set(uint8_t *lrh, uint32_t dlid, uint32_t slid)
{
	lrh[1] = (uint8_t)((lrh[1] & ~0x0C) | ((dlid >> 16) & 3) << 2);
	lrh[2] = (uint8_t)(dlid >> 8);
	lrh[3] = (uint8_t)dlid;
	lrh[4] = (uint8_t)((lrh[4] & ~0xC0) | ((slid >> 16) & 3) << 6);
	lrh[6] = (uint8_t)(slid >> 8);
	lrh[7] = (uint8_t)slid;
}

void xlid_lrh_get(const uint8_t *lrh, uint32_t *dlid, uint32_t *slid)
{
	*dlid = (uint32_t)(lrh[1] >> 2 & 3) << 16 | (uint32_t)lrh[2] << 8 |
	    lrh[3];
	*slid = (uint32_t)(lrh[4] >> 6 & 3) << 16 | (uint32_t)lrh[6] << 8 |
	    lrh[7];
}

/*
 * The PathRecord: DLID[15:0] at 40, SLID[15:0] at 42, byte 58 bits 7:6
 * DLID[17:16] and 5:4 SLID[17:16]; its other bits are reserved and set
 * to 0 here.
 */
void xlid_pr_set(uint8_t *pr, uint32_t dlid, uint32_t slid)
{
	pr[PR_DLID] = (uint8_t)(dlid >> 8);
	pr[PR_DLID + 1] = (uint8_t)dlid;
	pr[PR_SLID] = (uint8_t)(slid >> 8);
	pr[PR_SLID + 1] = (uint8_t)slid;
	pr[PR_XBYTE] = (uint8_t)(((dlid >> 16) & 3) << 6 |
	    ((slid >> 16) & 3) << 4);
}

void xlid_pr_get(const uint8_t *pr, uint32_t *dlid, uint32_t *slid)
{
	*dlid = (uint32_t)(pr[PR_XBYTE] >> 6 & 3) << 16 |
	    (uint32_t)pr[PR_DLID] << 8 | pr[PR_DLID + 1];
	*slid = (uint32_t)(pr[PR_XBYTE] >> 4 & 3) << 16 |
	    (uint32_t)pr[PR_SLID] << 8 | pr[PR_SLID + 1];
}
