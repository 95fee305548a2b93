#!/bin/bash
# With OpenSM already master at a higher priority, ibsmd stays STANDBY and
# writes nothing: every MAD it sends is counted by tests/shims/maddrop.c in
# front of libumad2sim.so, and none is a Set.
. "$(dirname "$0")/common.sh"
[ -e "$SIM_MADDROP" ] || fail "build/libmaddrop.so is missing: run make"
command -v opensm >/dev/null || fail "opensm is not installed (make deps)"

net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 3 -o "$net"
sock="$SIM_TMP/ibsmd.sock"
mkdir -p "$SIM_TMP/osm"

sim_start "$net"
OSM_CACHE_DIR="$SIM_TMP/osm" OSM_TMP_DIR="$SIM_TMP/osm" \
	on_host_bg H-1 opensm -p 10 -s 2 -F /dev/null -f "$SIM_TMP/osm/opensm.log" \
	>"$SIM_TMP/osm/out" 2>&1
osm=$SIM_LAST_PID
osm_master() { on_host H-5 sminfo 2>/dev/null | grep -q 'priority 10 state 3 SMINFO_MASTER'; }
wait_until 30 osm_master || fail "OpenSM did not become master: $(on_host H-5 sminfo 2>&1)"
check_up "$SIM_TMP/osm-up"
pass "OpenSM is master at priority 10: $(on_host H-5 sminfo 2>&1)"

# --once: reports the master, exits 1, sends no Set
MADDROP_COUNT="$SIM_TMP/once.count" SIM_EXTRA_PRELOAD="$SIM_MADDROP" \
	ibsmd_once H-0 "$SIM_TMP/state" && fail "ibsmd --once succeeded behind a master"
grep -q '^standby: master_guid=.* master_priority=10' "$SIM_TMP/once.out" ||
	fail "--once: no standby line: $(cat "$SIM_TMP/once.out" "$SIM_TMP/once.err" | tail -n 3)"
grep -q '^set 0$' "$SIM_TMP/once.count" || fail "--once sent Sets: $(grep -E '^(total|set) ' "$SIM_TMP/once.count")"
pass "--once: $(cat "$SIM_TMP/once.out"), $(grep '^total' "$SIM_TMP/once.count"), set 0"

# daemon: STANDBY, polling the master twice a second, hands off the fabric
printf 'sm: {priority: 0, poll_ms: 500}\n' >"$SIM_TMP/fast-poll.yaml"
MADDROP_COUNT="$SIM_TMP/daemon.count" SIM_EXTRA_PRELOAD="$SIM_MADDROP" \
	on_host_bg H-0 "$IBSMD" -S "$SIM_TMP/state" -s "$sock" -c "$SIM_TMP/fast-poll.yaml" \
	>"$SIM_TMP/daemon.log" 2>&1
daemon=$SIM_LAST_PID
standby() { "$IBSMCTL" -s "$sock" status 2>/dev/null | grep -q '^state: STANDBY'; }
wait_until 20 standby || fail "ibsmd is not STANDBY: $(tail -n 3 "$SIM_TMP/daemon.log")"
sleep 3
standby || fail "ibsmd left STANDBY: $(tail -n 3 "$SIM_TMP/daemon.log")"
polls=$("$IBSMCTL" -s "$sock" --json status | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(a["sent"] for a in d["mads"]["per_attribute"] if a["attribute"] == "SMInfo"))')
[ "$polls" -ge 4 ] || fail "ibsmd sent only $polls SMInfo requests in STANDBY"
"$IBSMCTL" -s "$sock" sweep >/dev/null 2>&1 && fail "a light sweep was accepted in STANDBY"
kill -TERM "$daemon"
wait_pid "$daemon" 5 || fail "ibsmd did not stop"
grep -q '^set 0$' "$SIM_TMP/daemon.count" ||
	fail "STANDBY daemon sent Sets: $(grep -E '^(total|set) ' "$SIM_TMP/daemon.count")"
grep -q '^set [1-9]' "$SIM_TMP/daemon.count" && fail "counter contradicts itself"
on_host H-5 sminfo 2>/dev/null | grep -q 'priority 10 state 3 SMINFO_MASTER' ||
	fail "OpenSM is no longer master"
check_up "$SIM_TMP/after"
pass "daemon stayed STANDBY ($polls SMInfo polls), $(grep '^total' "$SIM_TMP/daemon.count"), set 0; OpenSM still master"

# the master goes away: a standby takes over once its polls fail
on_host_bg H-0 "$IBSMD" -S "$SIM_TMP/state" -s "$sock" -c "$SIM_TMP/fast-poll.yaml" \
	>"$SIM_TMP/takeover.log" 2>&1
wait_until 20 standby || fail "second ibsmd is not STANDBY: $(tail -n 3 "$SIM_TMP/takeover.log")"
kill -TERM "$osm" || fail "cannot stop OpenSM"
master() { "$IBSMCTL" -s "$sock" status 2>/dev/null | grep -q '^state: MASTER'; }
wait_until 20 master || fail "ibsmd did not take over: $(tail -n 3 "$SIM_TMP/takeover.log")"
wait_until 10 grep -q '^subnet up:' "$SIM_TMP/takeover.log" || fail "no subnet up after the takeover"
grep -q 'did not answer .* polls' "$SIM_TMP/takeover.log" || fail "the log does not say why it took over"
grep -q '\[notice\]: entering MASTER state (priority [0-9]*): takeover from SM 0x' "$SIM_TMP/takeover.log" ||
	fail "no notice naming the takeover: $(grep -m1 'entering MASTER' "$SIM_TMP/takeover.log")"
check_up "$SIM_TMP/takeover"
pass "OpenSM stopped: ibsmd took over ($(grep -o 'did not answer [0-9]* polls' "$SIM_TMP/takeover.log")) and the fabric checks"
