/*
 * The IBA's management-key rules (vol. 1, 14.2.4 Management Key), pure:
 * no clock (times are arguments, monotonic microseconds), no I/O.  The
 * emulated SMAs (mad/emu/emu_sma.c) enforce them with these functions; an
 * SM reads and writes PortInfo's M_Key fields and decodes trap 256 with
 * the codecs below.
 *
 * The M_Key check (14.2.4.1): an SMP passes when the port's M_Key is 0 or
 * equals the SMP's M_Key (MAD header bytes 24-31).  For a switch, port 0's
 * M_Key governs the whole switch's SMA; a CA or router port checks its own.
 *
 * What a failed check does depends on M_KeyProtectBits (14.2.4.1):
 *
 *   level  Get                              Set, TrapRepress
 *   0      answered, PortInfo:M_Key shown   discarded (no response)
 *   1      answered, PortInfo:M_Key reads 0 discarded
 *   2      discarded                        discarded
 *   3      discarded (as 2)                 discarded
 *
 * Every discarded SMP is an M_Key violation: M_KeyViolations counts it
 * (16 bits, stopping at 0xFFFF), the port sends trap 256 (Bad M_Key) to
 * its MasterSMLID, and the lease timer starts if it is not running and
 * M_KeyLeasePeriod is not 0.  A Get answered at levels 0 and 1 is no
 * violation.  A Get, Set or TrapRepress that passes the check stops the
 * timer (and a later failure starts it afresh from the whole period).
 * When the timer reaches 0, M_KeyProtectBits become 0 (14.2.4.2): the key
 * stays, Gets answer again and show it, so that an SM that lost the key
 * can read it back.  M_KeyLeasePeriod 0: the timer never runs.
 */
#ifndef IBSMD_MKEY_H
#define IBSMD_MKEY_H

#include <stddef.h>
#include <stdint.h>

#define MKEY_PROTECT_MAX	3
#define MKEY_VIOLATIONS_MAX	0xffffu
#define MKEY_TRAP		256	/* Bad M_Key */
#define MKEY_NOTICE_TYPE	2	/* trap 256 is a security notice */
#define MKEY_DR_PATH_MAX	30	/* hops of the return path trap 256 carries */

/* MAD methods the check tells apart (IBA 13.4.5) */
#define MKEY_METHOD_GET		0x01
#define MKEY_METHOD_SET		0x02
#define MKEY_METHOD_TRAP_REPRESS 0x07

/* A port's M_Key state, as its SMA keeps it. */
struct mkey_port {
	uint64_t key;		/* M_Key; 0: no protection at all */
	uint64_t lease_end_us;	/* when the lease timer expires; 0: stopped */
	uint16_t lease_s;	/* M_KeyLeasePeriod (seconds); 0: never expires */
	uint16_t violations;	/* M_KeyViolations */
	uint8_t protect;	/* M_KeyProtectBits, 0..3 */
};

enum mkey_verdict {
	MKEY_PASS,		/* process and answer the SMP */
	MKEY_PASS_HIDE,		/* process and answer; PortInfo:M_Key reads 0 */
	MKEY_DROP,		/* a violation: no answer, trap 256 due */
};

/* The M_Key check: port_key 0, or the SMP's key equal to it. */
int mkey_check(uint64_t port_key, uint64_t smp_key);
/*
 * What ProtectBits protect allow for method (MKEY_METHOD_*; anything else
 * is not checked: MKEY_PASS) when the check gave key_ok (the table above).
 */
enum mkey_verdict mkey_verdict(uint8_t protect, int key_ok, uint8_t method);
/* At now_us an expired lease clears ProtectBits (and stops the timer). */
void mkey_expire(struct mkey_port *p, uint64_t now_us);
/*
 * An SMP carrying smp_key with method arrives at p at now_us: expires the
 * lease, checks the key, stops the timer on a pass, and on MKEY_DROP
 * counts the violation and starts the timer.  The caller discards a
 * dropped SMP and sends trap 256 (mkey_trap256 fields from the SMP).
 */
enum mkey_verdict mkey_receive(struct mkey_port *p, uint64_t smp_key,
			       uint8_t method, uint64_t now_us);
/* Milliseconds left on p's lease timer at now_us (rounded up); 0: stopped or expired. */
uint64_t mkey_lease_left_ms(const struct mkey_port *p, uint64_t now_us);
/*
 * A new M_Key, ProtectBits and lease period from a PortInfo Set that
 * passed the check: a running timer is stopped (the Set passed), counted
 * violations stay.
 */
void mkey_set(struct mkey_port *p, uint64_t key, uint8_t protect, uint16_t lease_s);

/*
 * PortInfo's M_Key fields (IBA 14.2.5.6, PortInfo): M_Key bytes 0-7,
 * M_KeyLeasePeriod bytes 26-27, M_KeyProtectBits byte 34 bits 7-6,
 * M_KeyViolations bytes 44-45.  pi: the 64-byte attribute.
 */
struct mkey_pi {
	uint64_t key;
	uint16_t lease_s;
	uint16_t violations;
	uint8_t protect;
};
#define MKEY_PI_LEN 64
void mkey_pi_get(const uint8_t *pi, struct mkey_pi *m);
/* Writes the four fields into pi, leaving every other bit as it was. */
void mkey_pi_put(uint8_t *pi, const struct mkey_pi *m);

/*
 * Trap 256's DataDetails (54 bytes; the Notice's bytes 10-63, see
 * traps/notice.h): 0-1 reserved, 2-3 LIDADDR (the port that saw the bad
 * key), 4-5 DRSLID, 6 Method, 7 reserved, 8-9 AttributeID, 10-13
 * AttributeModifier, 14-21 M_Key (the one the SMP carried), 22 reserved,
 * 23 DRNotice (bit 7: a directed-route SMP), DRPathTruncated (bit 6: its
 * return path did not fit), DRHopCount (bits 5-0), 24-53
 * DRNoticeReturnPath.  The DR fields are 0 for a LID-routed SMP.
 */
#define MKEY_TRAP_DETAILS_LEN 54
struct mkey_trap256 {
	uint16_t lid;
	uint16_t dr_slid;
	uint8_t method;
	uint16_t attr_id;
	uint32_t attr_mod;
	uint64_t mkey;
	uint8_t dr_notice, dr_truncated, dr_hop_count;
	uint8_t dr_return_path[MKEY_DR_PATH_MAX];
};
/* Decodes len bytes of DataDetails; 0, or -1 with the reason in err. */
int mkey_trap256_get(const uint8_t *details, size_t len, struct mkey_trap256 *t,
		     char *err, size_t errlen);

#endif
