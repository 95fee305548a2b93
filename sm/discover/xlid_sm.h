/*
 * Extended LIDs, the SM's side (mad/xlid.h; ARCHITECTURE "Extended
 * LIDs"): which devices can, which mode the subnet runs in, and which
 * ports get a vLID.
 *
 * Detection.  At a heavy sweep, after the vSwitches are marked and before
 * the LIDs, an XLIDCap Get goes to every switch and to every CA port
 * behind a vSwitch whose answer is not known yet (a node seen by the last
 * sweep keeps what it said); unless the mode is legacy already, to every
 * plain CA too (port 1), for the SA only: it tells a vLID to a requester
 * that said it can, and the mode never waits on a plain host.  Status 0x0c (unsupported attribute), any
 * other error, a timeout or an answer that does not decode: not capable.
 *
 * Mode (virtualization.extended_lids), decided at the first configuration
 * and kept: off -- legacy, nothing asked; auto -- extended when every
 * device asked can, else legacy with a log line naming the first few that
 * cannot (and how many); without a vSwitch in the fabric auto asks nothing
 * (no VM to give a vLID); on -- extended, or refused (exit 1, the reason
 * logged) when a device cannot.  A device that joins later without the
 * capability is reported (log, the sweep summary) and the VMs behind it
 * stay on pLIDs (legacy), nothing dropped.
 */
#ifndef IBSMD_XLID_SM_H
#define IBSMD_XLID_SM_H

#include <stddef.h>
#include <stdint.h>

#include "mad/txn.h"
#include "sm/model/config.h"
#include "sm/base/fabric.h"

struct xprobe;
typedef void (*xprobe_fn)(void *arg, struct xprobe *x);

struct xprobe_stats {
	uint32_t asked;		/* XLIDCap Gets sent */
	uint32_t known;		/* nodes whose answer the last model had */
	uint32_t capable, lacking;	/* nodes asked or known, by answer */
};

/* Whether the mode needs the devices asked (see above). */
int xlid_probe_wanted(const struct fabric *f, enum tristate mode);
/*
 * Asks every device of f that matters and has no answer (prev, the last
 * model, may be NULL); records fab_node.xlid and xlid_cap; done() runs on
 * the loop when every answer is in, never from inside the call: when
 * nothing was to be asked (or every Get failed to go), xprobe_finished()
 * says so at once and done() never runs.  hosts: plain CAs (not behind a
 * vSwitch) are asked too, for the SA alone -- a capable one may be told
 * a VM's vLID -- never counted in the stats nor for the mode; the caller
 * asks it while the mode is, or may become, extended.  NULL on ENOMEM.
 */
struct xprobe *xprobe_start(struct txn_engine *txn, struct fabric *f,
			    const struct fabric *prev, int hosts,
			    xprobe_fn done, void *arg);
int xprobe_finished(const struct xprobe *x);
const struct xprobe_stats *xprobe_stats(const struct xprobe *x);
/*
 * Frees x once nothing is due (after txn_cancel_all(), at once); the
 * sweep that started it may be gone, its fabric with it.
 */
void xprobe_abandon(struct xprobe *x);
void xprobe_free(struct xprobe *x);

/*
 * Decides or keeps the mode.  *decided: -1 not yet (the first
 * configuration), else 0 legacy / 1 extended, updated.  Sets
 * f->xlid_mode.  Returns 0, or -1 (mode on and a device lacks it) with
 * the reason in why.  Devices lacking the capability, named (first few +
 * count), go to lacking (may be empty).
 */
int xlid_decide(struct fabric *f, enum tristate mode, int *decided,
		char *lacking, size_t lackinglen, uint32_t *n_lacking,
		char *why, size_t whylen);
/* A CA port that may take a vLID: a VF of a capable vSwitch, itself capable. */
int xlid_port_ok(const struct fabric *f, uint32_t pi);
/*
 * In extended mode, around lids_assign(): xlid_lids_prepare() marks the
 * VF ports that are to carry a vLID (those that would get a LID and are
 * capable, unless persisted holds a pLID for them: nothing assigned
 * changes) so that lids_assign() gives them no pLID; xlid_lids_finish()
 * gives each its persisted vLID, else the lowest free one, rebuilds the
 * LID index and frees mark.  prepare returns NULL on ENOMEM; finish 0 or
 * -1 (ENOMEM); *given counts the vLIDs, *exhausted the ports left
 * without one.
 */
uint8_t *xlid_lids_prepare(struct fabric *f, const struct guid_map *persisted);
int xlid_lids_finish(struct fabric *f, const struct guid_map *persisted,
		     uint8_t *mark, uint32_t *given, uint32_t *exhausted);
/* The lowest vLID neither f nor an absent port in persisted holds; 0: none. */
uint32_t xlid_alloc_vlid(const struct fabric *f, const struct guid_map *persisted);

#endif
