#!/bin/bash
# OpenSM as the other SM (sm/smstate.c), with OpenSM's default configuration
# (`opensm -c` output: sm_key 0x1, 10 s sweeps), judged with sminfo from a
# host, OpenSM's log and infiniband-diags dumps:
#  (a) ibsmd (sm_key 0x1, priority 5) runs the subnet, OpenSM starts at
#      priority 10: ibsmd hands over (OpenSM never sends ACKNOWLEDGE: ibsmd
#      polls it and goes STANDBY once it answers MASTER), sends no Set from
#      then on, and takes the subnet back within (poll_retries + 1) x
#      poll_ms + 1 s when OpenSM is stopped;
#  (b) OpenSM at priority 1 behind ibsmd at 5: OpenSM stays STANDBY;
#  (c) keys differ (ibsmd 0, OpenSM 0x1): ibsmd says "SM_Key mismatch" at
#      warning level and in `ibsmctl --json status`, and one MASTER remains;
#  (d) OpenSM at 5 runs the subnet, ibsmd at 10 joins: OpenSM hands over,
#      ibsmd ACKNOWLEDGEs and keeps OpenSM's LIDs and forwarding tables.
#
# Not met on ibsim, in (a): OpenSM, handed the subnet, never configures it.
# An OpenSM that goes STANDBY behind a master sends that master a trap 144
# (osm_state_mgr.c, "notify master SM about us", and again on its polls).
# ibsim drops every TrapRepress ("lid N got trap repress - dropping",
# sim_mad.c) and umad2sim never times a MAD out, so the trap stays
# outstanding in OpenSM for ever, and every later sweep of OpenSM waits for
# its outstanding MADs first (wait_for_pending_transactions): after the
# HANDOVER, OpenSM is MASTER (its log, SMInfo at its port) but its first
# master sweep never ends, the hosts' SM LID stays ibsmd's, and `sminfo`
# from a host keeps asking ibsmd, which answers STANDBY.  ibsmd's side --
# HANDOVER, STANDBY once OpenSM answers MASTER, no Set, no fight, taking
# the subnet back when OpenSM stops -- is asserted; OpenSM's own sweep is
# not.  Two OpenSMs meet the same wall whenever the newcomer goes STANDBY
# first (it does not when the old master hands over while it is still
# DISCOVERING, as OpenSM does, see DEVELOPERS.md).
. "$(dirname "$0")/common.sh"
[ -e "$SIM_MADDROP" ] || fail "build/libmaddrop.so is missing: run make"
command -v opensm >/dev/null || fail "opensm is not installed (make deps)"

POLL_MS=500
POLL_RETRIES=2
net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 3 -o "$net"
opensm -c "$SIM_TMP/opensm.conf" >/dev/null 2>&1 || fail "opensm -c"
grep -q '^sm_key 0x0000000000000001$' "$SIM_TMP/opensm.conf" ||
	fail "OpenSM's default sm_key is not 0x1: $(grep '^sm_key' "$SIM_TMP/opensm.conf")"

I=H-2	# ibsmd
O=H-9	# OpenSM
sock="$SIM_TMP/ibsmd.sock"
ctl() { "$IBSMCTL" -s "$sock" "$@"; }
state_is() { ctl status 2>/dev/null | grep -q "^state: $1\$"; }
sets() { sed -n 's/^set //p' "$SIM_TMP/$1.count" 2>/dev/null; }
logs() { tail -n 4 "$SIM_TMP/$1.log"; }

# start_ibsmd NAME PRIORITY [sm key]: ibsmd on $I, log $SIM_TMP/NAME.log,
# MAD counts $SIM_TMP/NAME.count
IBSMD_PID=
start_ibsmd() {
	printf 'sm: {priority: %s, poll_ms: %s, poll_retries: %s, sm_key: %s}\nsweep: {interval_s: 1}\n' \
		"$2" "$POLL_MS" "$POLL_RETRIES" "${3:-0x1}" >"$SIM_TMP/$1.yaml"
	MADDROP_COUNT="$SIM_TMP/$1.count" MADDROP_INTERVAL_MS=100 \
		SIM_EXTRA_PRELOAD="$SIM_MADDROP" \
		on_host_bg "$I" "$IBSMD" -S "$SIM_TMP/state" -s "$sock" \
		-c "$SIM_TMP/$1.yaml" --log-level info >"$SIM_TMP/$1.log" 2>&1
	IBSMD_PID=$SIM_LAST_PID
	wait_until 20 grep -q '^subnet up:' "$SIM_TMP/$1.log" || fail "$1: no subnet up: $(logs "$1")"
	wait_until 5 sminfo_master "$I" || fail "sminfo does not name ibsmd: $(on_host H-5 sminfo 2>&1)"
}
# start_opensm NAME PRIORITY [sm key]: OpenSM on $O with the default
# configuration, log $SIM_TMP/NAME.log
OSM_PID=
start_opensm() {
	local conf="$SIM_TMP/opensm.conf"
	if [ -n "${3:-}" ]; then
		conf="$SIM_TMP/$1.conf"
		sed "s/^sm_key .*/sm_key $3/" "$SIM_TMP/opensm.conf" >"$conf"
	fi
	mkdir -p "$SIM_TMP/$1.d"
	OSM_CACHE_DIR="$SIM_TMP/$1.d" OSM_TMP_DIR="$SIM_TMP/$1.d" \
		on_host_bg "$O" opensm -F "$conf" -p "$2" -f "$SIM_TMP/$1.log" \
		>"$SIM_TMP/$1.out" 2>&1
	OSM_PID=$SIM_LAST_PID
}
# sminfo_at HOST: sminfo from H-5 asked at HOST's LID (its SMInfo itself)
sminfo_at() { on_host H-5 sminfo "${LID[$1]}" 2>&1; }
declare -A LID
lids_from() {	# lids_from PREFIX: LID[host] from an ibnetdiscover dump
	local g l h
	while read -r g l; do
		for h in "$I" "$O"; do
			[ "$(printf '0x%016x' "$g")" = "$(host_guid "$h")" ] && LID[$h]=$l
		done
	done < <(python3 "$SIM_LIDS" "$1.topo")
	[ -n "${LID[$I]:-}" ] && [ -n "${LID[$O]:-}" ] || fail "no LIDs for $I and $O in $1.topo"
}
stop() {
	kill -TERM "$1" 2>/dev/null
	wait_pid "$1" 10 || fail "pid $1 did not stop on SIGTERM"
}


sim_start "$net"

# ---- (a) OpenSM at a higher priority, started second ----
start_ibsmd a 5
check_up "$SIM_TMP/up"
lids_from "$SIM_TMP/up"
start_opensm osm-a 10
wait_until 20 state_is STANDBY || fail "ibsmd did not hand over to OpenSM: $(logs a)"
grep -q "HANDOVER to SM $(host_guid "$O")" "$SIM_TMP/a.log" || fail "no HANDOVER in ibsmd's log: $(logs a)"
grep -q "SM $(host_guid "$O") is MASTER without an ACKNOWLEDGE: handover done" "$SIM_TMP/a.log" ||
	fail "ibsmd's log does not say how the handover ended: $(logs a)"
grep -q 'Entering MASTER state' "$SIM_TMP/osm-a.log" || fail "OpenSM's log: $(grep Entering "$SIM_TMP/osm-a.log")"
n=$(sets a)
[ -n "$n" ] || fail "no MAD counts from ibsmd"
sleep 3
state_is STANDBY || fail "ibsmd left STANDBY: $(logs a)"
sminfo_at "$O" | grep -q 'priority 10 state 3 SMINFO_MASTER' || fail "OpenSM's SMInfo: $(sminfo_at "$O")"
sminfo_at "$I" | grep -q 'priority 5 state 2 SMINFO_STANDBY' || fail "ibsmd's SMInfo: $(sminfo_at "$I")"
[ "$(sets a)" = "$n" ] || fail "ibsmd sent $(( $(sets a) - n )) Sets as STANDBY"
[ "$(grep -c 'HANDOVER to SM' "$SIM_TMP/a.log")" = 1 ] || fail "more than one HANDOVER: $(grep 'HANDOVER' "$SIM_TMP/a.log")"
pass "(a) OpenSM at 10 after ibsmd at 5: one HANDOVER, OpenSM MASTER ($(sminfo_at "$O")), ibsmd STANDBY ($(sminfo_at "$I")), no Set in 3 s"

limit=$(( (POLL_RETRIES + 1) * POLL_MS + 1000 ))
stop "$OSM_PID"
t0=$(date +%s%N)
wait_until 10 state_is MASTER || fail "ibsmd did not take the subnet back: $(logs a)"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
wait_until 5 sminfo_master "$I" || fail "sminfo does not name ibsmd: $(on_host H-5 sminfo 2>&1)"
[ "$ms" -le "$limit" ] || fail "ibsmd took $ms ms to take the subnet back (limit $limit)"
wait_until 5 grep -q 'heavy sweep done' <(sed -n '/SM state STANDBY\|entering MASTER/,$p' "$SIM_TMP/a.log") ||
	fail "no sweep after taking the subnet back"
check_up "$SIM_TMP/back"
pass "(a) OpenSM stopped: ibsmd MASTER after $ms ms (limit $limit), $(on_host H-5 sminfo 2>&1), fabric checked"
stop "$IBSMD_PID"

# ---- (b) OpenSM at a lower priority stays STANDBY ----
start_ibsmd b 5
start_opensm osm-b 1
wait_until 20 grep -qs 'Entering STANDBY state' "$SIM_TMP/osm-b.log" ||
	fail "OpenSM is not STANDBY: $(grep Entering "$SIM_TMP/osm-b.log")"
sleep 3
state_is MASTER || fail "ibsmd left MASTER: $(logs b)"
sminfo_master "$I" || fail "sminfo does not name ibsmd: $(on_host H-5 sminfo 2>&1)"
sminfo_at "$O" | grep -q 'priority 1 state 2 SMINFO_STANDBY' || fail "OpenSM's SMInfo: $(sminfo_at "$O")"
grep -q 'Entering MASTER state' "$SIM_TMP/osm-b.log" && fail "OpenSM went MASTER: $(grep Entering "$SIM_TMP/osm-b.log")"
grep -q 'HANDOVER' "$SIM_TMP/b.log" && fail "ibsmd handed over: $(grep HANDOVER "$SIM_TMP/b.log")"
check_up "$SIM_TMP/b"
pass "(b) OpenSM at 1 behind ibsmd at 5: OpenSM STANDBY ($(sminfo_at "$O")), $(on_host H-5 sminfo 2>&1), fabric checked"
stop "$OSM_PID"
stop "$IBSMD_PID"

# ---- (c) SM_Key mismatch: said, shown, not fought ----
start_ibsmd c 5 0x0
start_opensm osm-c 1 0x0000000000000001
wait_until 20 grep -q 'SM_Key mismatch' "$SIM_TMP/c.log" || fail "no SM_Key mismatch in ibsmd's log: $(logs c)"
grep -q '\[warn\]: SM_Key mismatch: SM '"$(host_guid "$O")"' uses SM_Key 0x0000000000000001' "$SIM_TMP/c.log" ||
	fail "the mismatch is not a warning naming OpenSM: $(grep 'SM_Key mismatch' "$SIM_TMP/c.log" | head -n 2)"
ctl --json status | python3 -c '
import json, sys
d = json.load(sys.stdin)
m = d.get("sm_key_mismatch")
e = d["last_error"] or {}
sys.exit(0 if m and m["sm_guid"] == sys.argv[1] and m["their_key"] == "0x0000000000000001" and
         e.get("kind") == "sm_key" and sys.argv[1] in e["message"] else 1)' "$(host_guid "$O")" ||
	fail "ibsmctl --json status: no sm_key_mismatch: $(ctl --json status | head -c 600)"
masters() {	# how many of the two answer MASTER in their SMInfo
	{ sminfo_at "$I"; sminfo_at "$O"; } | grep -c 'SMINFO_MASTER'
}
one_master() { [ "$(masters)" = 1 ]; }
wait_until 20 one_master || fail "not one master: $(sminfo_at "$I") / $(sminfo_at "$O")"
state_is STANDBY || fail "ibsmd is not STANDBY behind OpenSM: $(logs c)"
n=$(sets c)
sleep 3
[ "$(masters)" = 1 ] || fail "not one master after 3 s: $(sminfo_at "$I") / $(sminfo_at "$O")"
[ "$(sets c)" = "$n" ] || fail "ibsmd sent $(( $(sets c) - n )) Sets behind a master of another key"
check_up "$SIM_TMP/c"
pass "(c) keys 0 and 0x1: ibsmd warns \"$(grep -o 'SM_Key mismatch: SM [^(]*' "$SIM_TMP/c.log" | head -n 1)\", ibsmctl shows sm_key_mismatch and last_error sm_key; one MASTER: ibsmd $(ctl status | sed -n 's/^state: //p') with no Set, OpenSM $(sminfo_at "$O" | grep -o 'SMINFO_[A-Z]*'), fabric checked"
stop "$OSM_PID"
stop "$IBSMD_PID"

# ---- (d) the other way: OpenSM (5) runs the subnet, ibsmd (10) joins ----
# OpenSM hands over and ibsmd ACKNOWLEDGEs; ibsmd reads OpenSM's tables in
# place and keeps them: no LID and no forwarding entry changes.
start_opensm osm-d 5
wait_until 30 sminfo_master "$O" || fail "OpenSM is not master: $(on_host H-5 sminfo 2>&1)"
lids_tables "$SIM_TMP/osm-d"
start_ibsmd d 10
state_is MASTER || fail "ibsmd is not MASTER: $(logs d)"
grep -q "SMInfo Set HANDOVER from SM $(host_guid "$O")" "$SIM_TMP/d.log" || fail "no HANDOVER from OpenSM: $(logs d)"
grep -q "ACKNOWLEDGE to SM $(host_guid "$O")" "$SIM_TMP/d.log" || fail "no ACKNOWLEDGE to OpenSM: $(logs d)"
wait_until 10 grep -q 'Entering STANDBY state' "$SIM_TMP/osm-d.log" ||
	fail "OpenSM is not STANDBY: $(grep Entering "$SIM_TMP/osm-d.log")"
sleep 2
state_is MASTER && sminfo_master "$I" || fail "ibsmd did not stay master: $(logs d)"
lids_tables "$SIM_TMP/ibsmd-d"
same_as "$SIM_TMP/osm-d" "$SIM_TMP/ibsmd-d" "OpenSM -> ibsmd"
pass "(d) OpenSM at 5, then ibsmd at 10: HANDOVER from OpenSM, ACKNOWLEDGE, $(on_host H-5 sminfo 2>&1); OpenSM's LIDs and LFTs kept (ibnetdiscover, dump_fts)"
