#!/bin/sh
# ibsm-lanes.sh: a sample host agent for ibsmd's hot-spot lane orders,
# installed as /etc/ibsmd/ibsm-lanes.sh.example.  Run it as
#
#     IBSM_LANES_HOOK=/path/to/hook \
#         ibsm-listen --trap 68,69 --exec /etc/ibsmd/ibsm-lanes.sh.example
#
# The contract (ibsm-listen(8), "Lane orders"; the bytes in ibsmd(8),
# NOTICES): ibsm-listen runs this once per notice with the notice in IBSM_*.
# A lane order (IBSM_LANE=1) tells the port at LID IBSM_SLID to give every
# QP whose destination LID is one of IBSM_DLID .. IBSM_DLID + 2^IBSM_LMC - 1
# the SL IBSM_SL: the slow SL in a repath (IBSM_TRAP=69: that port is a
# hot-spot this one feeds), the fast SL in an unpath (68: it no longer is).
# QPs towards other LIDs keep their SL.  Any other notice is not for this
# agent: it exits 0 and says nothing.
#
# No command moves a QP.  Only the process that owns a QP can change its
# SL: ibv_modify_qp on its own handle, in Ready To Send, an alternate path
# with the new SL (IBV_QP_ALT_PATH) and then IBV_QP_PATH_MIG_STATE set to
# IBV_MIG_MIGRATED -- automatic path migration used as a swap (a UD
# sender: address handles with the new SL).  rdma(8) shows QPs, their
# owners and path migration state ("rdma resource show qp -d") but changes
# none, and the ibv_* utilities make QPs of their own.  So the move is the
# site's: an executable named by IBSM_LANES_HOOK
# (one that reaches the QPs' owners: an MPI library's control channel, a
# daemon the applications link to, a kernel module) is run as
#
#     HOOK DLID LMC SL
#
# with the notice's environment, and its exit status is this script's.
# Without a hook the move that is due is only logged (exit 0): the host
# keeps working on the SL it has.  Messages go to standard error, since
# standard output is ibsm-listen's (the JSON lines).

[ "${IBSM_LANE:-0}" = 1 ] || exit 0
case "${IBSM_TRAP:-}" in
68) why="unpath: back to the fast lane" ;;
69) why="repath: towards a hot-spot, to the slow lane" ;;
*) exit 0 ;;
esac

# the notice's numbers, as ibsm-listen gives them (decimal)
for v in "${IBSM_SLID:-}" "${IBSM_DLID:-}" "${IBSM_LMC:-}" "${IBSM_SL:-}"; do
	case "$v" in
	'' | *[!0-9]*)
		echo "ibsm-lanes: not a lane order: SLID '${IBSM_SLID:-}' DLID '${IBSM_DLID:-}' LMC '${IBSM_LMC:-}' SL '${IBSM_SL:-}'" >&2
		exit 2
		;;
	esac
done
last=$((IBSM_DLID + (1 << IBSM_LMC) - 1))
move="port LID $IBSM_SLID: QPs towards LIDs $IBSM_DLID-$last to SL $IBSM_SL ($why)"

if [ -z "${IBSM_LANES_HOOK:-}" ]; then
	echo "ibsm-lanes: $move; no IBSM_LANES_HOOK, not moved" >&2
	exit 0
fi
if [ ! -x "$IBSM_LANES_HOOK" ]; then
	echo "ibsm-lanes: $move; IBSM_LANES_HOOK '$IBSM_LANES_HOOK' is not executable" >&2
	exit 126
fi
"$IBSM_LANES_HOOK" "$IBSM_DLID" "$IBSM_LMC" "$IBSM_SL"
rc=$?
[ "$rc" -eq 0 ] || echo "ibsm-lanes: $move; $IBSM_LANES_HOOK exited $rc" >&2
exit "$rc"
