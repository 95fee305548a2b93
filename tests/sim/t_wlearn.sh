#!/bin/bash
# pFTree-Wt weight learning under ibsim (sm/weights.c; ibsmd(8) WEIGHT
# LEARNING): ibsim's own PMAs answer ibsmd's PortCountersExtended Gets;
# PortRcvData is moved from the console (PerformanceSet).  A host whose
# counter jumps by 16 MB in a period is learned at weight 100 and the
# routes are recomputed; the periods after it (management traffic only)
# change nothing; a counter reset leaves that port unmeasured for a period;
# another heavy receiver later takes the top weight.  Period 1 s, ~10 s.
. "$(dirname "$0")/common.sh"

net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 2 --spines 2 --hosts-per-leaf 4 -o "$net"
pol="$SIM_TMP/policy.yaml"
log="$SIM_TMP/daemon.log"
cat >"$pol" <<'YAML'
routing:
  weight_learning: {period_s: 1, min: 1, max: 100}
YAML
"$IBSMD" -n -c "$pol" >/dev/null || fail "t_wlearn: the policy is refused"
learned() { grep -c 'weights learned over .*rerouting' "$log"; }
more_learned_than() { [ "$(learned)" -gt "$1" ]; }
counter() { sim_cmd "PerformanceSet \"$1\"[1] PortCountersExtended.PortRcvData=$2" >/dev/null; }

sim_start "$net"
on_host_bg H-0 "$IBSMD" -c "$pol" -S "$SIM_TMP/state" -s "$SIM_TMP/sock" --log-level info >"$log" 2>&1
sm=$SIM_LAST_PID
wait_up 20 "$log"
wait_until 5 grep -q 'too little to learn from' "$log" ||
	fail "no idle period seen: $(grep -i weight "$log" | tail -n 3)"
[ "$(learned)" -eq 0 ] || fail "weights learned from management traffic: $(grep 'weights learned' "$log")"
pass "idle periods learn nothing: $(grep -m1 'too little' "$log" | sed 's/.*weights: //')"

n=$(sweeps)
counter H-3 4000000
wait_until 4 more_learned_than 0 || fail "nothing learned after H-3's jump: $(grep -i weight "$log" | tail -n 3)"
line=$(grep 'weights learned over' "$log" | tail -n 1)
grep -q '8 ports measured, 0 not; max 100 at H-3 port 1' <<<"$line" || fail "learned: $line"
wait_until 3 eval '[ "$(sweeps)" -gt "$n" ]' || fail "no reroute after learning: $(tail -n 3 "$log")"
pass "H-3 learned at 100 from ibsim's PMA, routes recomputed: ${line#*notice]: }"

sleep 2.2
[ "$(learned)" -eq 1 ] || fail "weights changed again without traffic: $(grep 'weights learned' "$log" | tail -n 2)"
pass "the periods after it keep the weights (no reroute churn)"

counter H-3 0
wait_until 3 grep -q 'the 7 ports measured' "$log" || fail "H-3's reset counter was measured: $(grep -i 'weights' "$log" | tail -n 3)"
pass "a counter reset: that port is not measured for a period"

counter H-6 8000000
wait_until 4 more_learned_than 1 || fail "nothing learned after H-6's jump: $(grep -i weight "$log" | tail -n 3)"
line=$(grep 'weights learned over' "$log" | tail -n 1)
grep -q '8 ports measured, 0 not; max 100 at H-6 port 1' <<<"$line" || fail "learned: $line"
pass "H-6 now the heaviest: ${line#*notice]: }"

# a restart keeps them: STATE_DIR/weights, read back while learning is on
kill "$sm"; wait "$sm" 2>/dev/null
wf="$SIM_TMP/state/weights"
grep -q '^# end: 8 ports$' "$wf" && [ "$(grep -c ' 100$' "$wf")" = 1 ] ||
	fail "the weights file: $(cat "$wf" 2>&1 | head -n 12)"
log2="$SIM_TMP/daemon2.log"
on_host_bg H-0 "$IBSMD" -c "$pol" -S "$SIM_TMP/state" -s "$SIM_TMP/sock" --log-level info >"$log2" 2>&1
wait_up 20 "$log2" "after the restart"
grep -q '8 learned weights loaded from' "$log2" || fail "not loaded at the restart: $(grep -i weight "$log2" | head -n 3)"
pass "a restart routes with the weights learned before: $(grep -m1 'learned weights loaded' "$log2" | sed 's/.*notice]: //')"
