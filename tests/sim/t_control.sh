#!/bin/bash
# The control socket under ibsim: mode 0660 and the group control.group
# names (an unknown group: exit 78 with file:line:column, at -n and at
# start); 128 idle clients do not lock out `ibsmctl status`; 20 clients
# hammering it (valid requests, random bytes, requests cut off by a
# disconnect, clients that never read) while heavy sweeps run: every sweep
# completes without a MAD timeout, the daemon stays up, its RSS after HAMMER_REQUESTS (10,000)
# answered requests is within 5% of its RSS after 1,000
# (tests/sim/ctlhammer.py; about 7 s in all).  CONTROL_IDLE_WAIT=1 also
# waits out the 10 s idle timeout: all 128 idle clients are dropped.
. "$(dirname "$0")/common.sh"

HAMMER_REQUESTS=${HAMMER_REQUESTS:-10000}
HAMMER="$SIM_ROOT/tests/sim/ctlhammer.py"
net="$SIM_TMP/ft.net"
gen ftree2 --radix 24 --leaves 12 --spines 6 --hosts-per-leaf 9 -o "$net"
sock="$SIM_TMP/run/ibsmd.sock"
log="$SIM_TMP/daemon.log"
ctl() { "$IBSMCTL" -s "$sock" "$@"; }

# control.group: a group that does not exist is refused where it is written
printf 'sweep: {interval_s: 5}\ncontrol:\n  group: no-such-group-ibsmd\n' >"$SIM_TMP/bad.yaml"
out=$("$IBSMD" -n -c "$SIM_TMP/bad.yaml" 2>&1); rc=$?
[ "$rc" -eq 78 ] && grep -q "bad.yaml:3:10: control.group: no group 'no-such-group-ibsmd'" <<<"$out" ||
	fail "ibsmd -n with an unknown group: exit $rc ($out)"
out=$("$IBSMD" --emulate "$SIM_ROOT/etc/demo.net" -c "$SIM_TMP/bad.yaml" -s "$SIM_TMP/x.sock" \
	-S "$SIM_TMP/xstate" 2>&1); rc=$?
[ "$rc" -eq 78 ] && grep -q "bad.yaml:3:10: control.group" <<<"$out" && [ ! -e "$SIM_TMP/x.sock" ] ||
	fail "ibsmd started with an unknown group: exit $rc ($out)"
pass "an unknown control.group: exit 78 at -n and at start, named at file:line:column"

group=$(getent group daemon | cut -d: -f1)
[ -n "$group" ] || fail "no group 'daemon' on this machine"
printf 'control:\n  group: %s\n' "$group" >"$SIM_TMP/policy.yaml"
sim_start "$net"
on_host_bg H-0 "$IBSMD" -c "$SIM_TMP/policy.yaml" -S "$SIM_TMP/state" -s "$sock" >"$log" 2>&1
daemon=$SIM_LAST_PID
wait_up 20 "$log" "from the daemon"
[ "$(stat -c '%a %G' "$sock")" = "660 $group" ] ||
	fail "control socket: $(stat -c '%a %U:%G' "$sock"), not 660 and group $group"
pass "the control socket is mode 0660, group $group (control.group)"

# 128 idle clients: the table is full, status still answers at once
mkfifo "$SIM_TMP/idle.in"
python3 "$HAMMER" idle "$sock" 128 <"$SIM_TMP/idle.in" >"$SIM_TMP/idle.out" 2>&1 &
idle=$!
bg_register "$idle"
exec {hold}>"$SIM_TMP/idle.in"
wait_until 10 grep -q '^open 128$' "$SIM_TMP/idle.out" || fail "128 idle clients: $(cat "$SIM_TMP/idle.out")"
t0=$(date +%s%N)
out=$(timeout 5 "$IBSMCTL" -s "$sock" status 2>&1) || fail "ibsmctl status with 128 idle clients: $out"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
grep -q '^state: MASTER' <<<"$out" || fail "ibsmctl status: $(head -n 3 <<<"$out")"
[ "$ms" -lt 3000 ] || fail "ibsmctl status took $ms ms with 128 idle clients"
pass "128 idle clients: ibsmctl status answered in $ms ms"
if [ -n "${CONTROL_IDLE_WAIT:-}" ]; then	# the 10 s idle timeout itself
	sleep 11
	exec {hold}>&-
	wait "$idle"
	[ "$(cat "$SIM_TMP/idle.out")" = $'open 128\nclosed 128' ] ||
		fail "idle clients after 11 s: $(cat "$SIM_TMP/idle.out")"
	pass "after 11 s all 128 idle clients were dropped"
else
	exec {hold}>&-
	wait "$idle"
	[ "$(sed -n 's/^closed //p' "$SIM_TMP/idle.out")" = 1 ] ||
		fail "not exactly one idle client made room: $(cat "$SIM_TMP/idle.out")"
	pass "one idle client was dropped for it, the others stayed"
fi

# sweep_ms of the heavy sweeps from the Nth 'subnet up' line on
sweep_ms() { grep '^subnet up:' "$log" | tail -n "+$1" | grep -o 'sweep_ms=[0-9]*' | cut -d= -f2 | sort -n | tr '\n' ' '; }
quiet_from=$(( $(sweeps) + 1 ))
for i in 1 2 3 4 5; do
	n=$(sweeps)
	ctl sweep --heavy >/dev/null || fail "ibsmctl sweep --heavy"
	wait_until 10 more_sweeps_than "$n" || fail "no heavy sweep after ibsmctl sweep --heavy"
done
quiet=$(sweep_ms "$quiet_from")

# 20 clients hammering while heavy sweeps run.  Measured in the steady
# state: the performance manager's first sweep (a second after the first
# configuration) allocates its per-port record once; let it happen first.
pm_sweeps() { ctl --json status | python3 -c 'import json, sys; print(json.load(sys.stdin)["perfmgr"]["sweeps"])'; }
wait_until 10 eval '[ "$(pm_sweeps)" -ge 1 ]' || fail "no performance manager sweep"
busy_from=$(( $(sweeps) + 1 ))
HAMMER_TRACE=${HAMMER_TRACE:-} python3 "$HAMMER" hammer "$sock" "$daemon" --first 1000 --requests "$HAMMER_REQUESTS" \
	>"$SIM_TMP/hammer.json" 2>"$SIM_TMP/hammer.err" &
hammer=$!
bg_register "$hammer"
heavy=0
while kill -0 "$hammer" 2>/dev/null; do
	n=$(sweeps)
	out=$(ctl sweep --heavy 2>&1) || fail "ibsmctl sweep --heavy under the hammer: $out"
	wait_until 10 more_sweeps_than "$n" || fail "a heavy sweep did not complete under the hammer: $(tail -n 3 "$log")"
	heavy=$((heavy + 1))
	sleep "${SWEEP_PAUSE:-0}"
done
wait "$hammer"; rc=$?
figures=$(cat "$SIM_TMP/hammer.json")
[ "$rc" -eq 0 ] || fail "hammer: exit $rc: $figures $(tail -n 3 "$SIM_TMP/hammer.err")"
[ "$heavy" -ge 1 ] || fail "no heavy sweep ran during the hammer"
lost=$(grep '^subnet up:' "$log" | tail -n "+$busy_from" | grep -vc 'mad_timeouts=0 mad_retries=0')
[ "$lost" -eq 0 ] || fail "$lost heavy sweeps under the hammer had MAD timeouts: $(grep -o 'mad_timeouts=[1-9][0-9]*' "$log" | head -n 3)"
kill -0 "$daemon" 2>/dev/null || fail "the daemon died: $(tail -n 5 "$log")"
ctl status | grep -q '^state: MASTER' || fail "ibsmctl status after the hammer: $(ctl status 2>&1 | head -n 3)"
check_up "$SIM_TMP/after"
pass "hammer: $heavy heavy sweeps completed during it, no MAD timeout (sweep_ms sorted: $(sweep_ms "$busy_from"); 5 before it: $quiet), daemon up, fabric checked; $figures"
