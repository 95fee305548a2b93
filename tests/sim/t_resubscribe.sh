#!/bin/bash
# Subscriptions outlive the SM: two ibsm-listen on ibsim hosts stay
# subscribed, without being restarted, across
#   1. an ibsmd restart with its state directory (the SM remembers them),
#   2. an ibsmd restart with an empty state directory (the SM forgot them:
#      the listeners' check finds no InformInfoRecord and subscribes again),
#   3. a handover to a second ibsmd of higher priority with its own state
#      (the listeners see a new SM LID in their PortInfo and subscribe again),
# each within one check period (1 s here), shown by a trap 65/64 reaching
# both listeners from the SM that runs the subnet.
. "$(dirname "$0")/common.sh"

CHECK_S=1
sim_start "$SIM_ROOT/etc/demo.net"
policy() { printf 'sm: {priority: %s, poll_ms: 500, poll_retries: 2}\nsweep: {interval_s: 1}\n' "$2" >"$SIM_TMP/$1.yaml"; }
declare -A PID
start_sm() {	# start_sm NAME HOST PRIORITY STATEDIR
	policy "$1" "$3"
	on_host_bg "$2" "$IBSMD" -S "$4" -s "$SIM_TMP/$1.sock" -c "$SIM_TMP/$1.yaml" \
		--log-level info >>"$SIM_TMP/$1.log" 2>&1
	PID[$1]=$SIM_LAST_PID
}
stop_sm() { kill -TERM "${PID[$1]}" 2>/dev/null; wait_pid "${PID[$1]}" 5 || fail "$1 did not stop"; }
ups() { grep -c '^subnet up:' "$SIM_TMP/$1.log" 2>/dev/null || true; }
more_ups() { [ "$(ups "$1")" -gt "$2" ]; }
count() { grep -c "\"trap\":$2" "$SIM_TMP/$1.out" 2>/dev/null || true; }
more_than() { [ "$(count "$1" "$2")" -gt "$3" ]; }
# subs_at NAME: subscriptions NAME's log shows for the listeners' LIDs since line $2
subscribed_at() { tail -n +"$2" "$SIM_TMP/$1.log" | grep -c 'subscribed fe80.* to trap 65'; }
both_subscribed() { [ "$(subscribed_at "$1" "$2")" -ge 2 ]; }
sm_lid() { "$IBSMCTL" -s "$SIM_TMP/$1.sock" --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["sm_lid"])'; }

# notice_round WHAT TRAP CMD: CMD makes both listeners print one more TRAP
notice_round() {
	local what=$1 trap=$2 cmd=$3 n1 n5
	n1=$(count H-1 "$trap"); n5=$(count H-5 "$trap")
	sim_cmd "$cmd" >/dev/null
	wait_until 15 more_than H-1 "$trap" "$n1" && wait_until 15 more_than H-5 "$trap" "$n5" ||
		fail "$what: no trap $trap at both listeners after $cmd"
}

start_sm a H-0 5 "$SIM_TMP/a.state"
wait_until 30 more_ups a 0 || fail "a: no subnet up"
for h in H-1 H-5; do
	on_host_bg "$h" "$LISTEN" --trap 64,65 --check-interval "$CHECK_S" >"$SIM_TMP/$h.out" 2>"$SIM_TMP/$h.err"
done
wait_until 20 both_subscribed a 1 || fail "the listeners did not subscribe: $(tail -n 2 "$SIM_TMP/H-1.err")"
notice_round "first SM" 65 'Unlink "H-7"[1]'
pass "listeners subscribed to a; Unlink H-7 -> trap 65 at both"

# 1. restart, same state directory
stop_sm a
line=$(($(wc -l <"$SIM_TMP/a.log") + 1))
n=$(ups a)
start_sm a H-0 5 "$SIM_TMP/a.state"
wait_until 30 more_ups a "$n" || fail "a (restarted): no subnet up"
grep -q 'event subscriptions loaded' "$SIM_TMP/a.log" || fail "a did not load its subscriptions"
notice_round "restart, same state" 64 'ReLink "H-7"[1]'
pass "restart with its state: the subscriptions were loaded; ReLink H-7 -> trap 64 at both"

# 2. restart, empty state directory: the listeners subscribe again
stop_sm a
line=$(($(wc -l <"$SIM_TMP/a.log") + 1))
n=$(ups a)
start_sm a H-0 5 "$SIM_TMP/a.fresh"
wait_until 30 more_ups a "$n" || fail "a (fresh): no subnet up"
t0=$(date +%s%N)
wait_until $((CHECK_S * 3 + 5)) both_subscribed a "$line" || fail "the listeners did not subscribe again to a fresh SM"
ms=$((($(date +%s%N) - t0) / 1000000))
notice_round "restart, empty state" 65 'Unlink "H-7"[1]'
pass "restart with no state: both listeners subscribed again ${ms} ms after subnet up (check period ${CHECK_S} s); Unlink -> 65 at both"

# 3. handover to a second SM of higher priority
start_sm b H-10 9 "$SIM_TMP/b.state"
wait_until 30 more_ups b 0 || fail "b: no subnet up: $(tail -n 3 "$SIM_TMP/b.log")"
wait_until 10 both_subscribed b 1 || fail "the listeners did not subscribe with b"
notice_round "after the handover" 64 'ReLink "H-7"[1]'
lid_b=$(sm_lid b)
tail -n 1 "$SIM_TMP/H-1.out" | grep -q "\"issuer_lid\":$lid_b" || fail "the last notice is not from b (LID $lid_b): $(tail -n 1 "$SIM_TMP/H-1.out")"
pass "handover to b: both listeners subscribed with b; ReLink H-7 -> trap 64 from b (LID $lid_b)"
stop_sm b
stop_sm a
