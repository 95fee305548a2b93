/*
 * Was a discovery cut short by M_Key?  At M_KeyProtectBits 2 and 3 a
 * device drops a Get that carries another key than its own, without an
 * answer (IBA vol. 1 14.2.4.1), so an SM that cannot name the key of a
 * port sees it exactly as it sees a dead device.  What tells the two
 * apart here is evidence the SM holds:
 *
 *   MKCUT_OWN_PORT: its own port answered nothing (the NodeInfo at hop 0,
 *     or its PortInfo).  There is no link to lose an SMP on between the
 *     SM and its own port's SMA: the port holds an M_Key this SM does not
 *     (its secret differs, or it has none).
 *   MKCUT_KEYED: its own port answered and holds a non-zero M_Key at
 *     ProtectBits 2 or 3, or at 0 after its lease ran out (the key stays:
 *     14.2.4.2) -- an SM keyed this fabric so that Gets need the key --
 *     and at least one NodeInfo across a port in LinkUp went unanswered
 *     while it carried M_Key 0: the SM could not name the port beyond
 *     (the neighbour map, sm/model/neighbors.h, does not hold it) or it
 *     keys nothing itself (or the discovery did not send it: sweep.h,
 *     spare_keyless).  A device the map names is asked with its own
 *     key: its silence is a dead device's and cuts nothing short.
 *
 * Pure: the discovery, the map and the SM's port GUID in, the verdict out.
 */
#ifndef IBSMD_MKCUT_H
#define IBSMD_MKCUT_H

#include <stdint.h>

#include "sm/discover/sweep.h"
#include "sm/model/neighbors.h"

enum mkcut_reason {
	MKCUT_NONE,
	MKCUT_OWN_PORT,
	MKCUT_KEYED,
};

struct mkcut {
	enum mkcut_reason reason;
	uint32_t nodes;		/* nodes the discovery reached */
	uint32_t refused;	/* NodeInfo Gets with M_Key 0 dropped, or not sent */
	uint32_t held;		/* of them, not sent (sweep.h: spared) */
	uint8_t own_protect;	/* the own port's M_KeyProtectBits (MKCUT_KEYED) */
	uint32_t own_lid;	/* the own port's LID and MasterSMLID as read */
	uint32_t own_sm_lid;
};

/*
 * Judges d (compacted or not; d->failed: the local NodeInfo went
 * unanswered).  keyed: the SM stamps keys (security.m_key on); without,
 * every SMP carried 0.  Returns c->reason.
 */
enum mkcut_reason mkcut_judge(const struct discovery *d, const struct nbr_map *m,
			      uint64_t local_guid, int keyed, struct mkcut *c);
/* "own_port", "keyed", "" */
const char *mkcut_reason_name(enum mkcut_reason r);

#endif
