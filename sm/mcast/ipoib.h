/*
 * The IPoIB broadcast groups: for the default partition
 * (multicast.default_ipoib) and each partition with `ipoib: true`, the
 * group ff12:401b:PKEY::ffff:ffff (PKEY with the full bit) with the
 * policy's MTU, rate, SL and Q_Key (OpenSM's defaults: 2048, 10 Gb/s,
 * SL 0, 0x0B1B), PacketLifeTime sm.subnet_timeout, link-local scope.
 * They are well_known: kept when empty.  So are the partitions' own
 * groups (default_partition.mgroups, partitions[].mgroups: OpenSM's
 * mgid= lines) with their partition's P_Key.
 */
#ifndef IBSMD_MCAST_IPOIB_H
#define IBSMD_MCAST_IPOIB_H

struct sm;

/*
 * Makes the database's broadcast groups those the policy (sm->cfg) asks
 * for: missing ones are created; one a host created first becomes the
 * SM's; an empty one whose parameters changed is made again (one with
 * members keeps its own, logged); one the policy no longer asks for is
 * the hosts' again (deleted when no full member is left).  notify: send
 * the group notices and ask for trees (0 at start, before any sweep).
 */
void mcast_ipoib_sync(struct sm *sm, int notify);

#endif
