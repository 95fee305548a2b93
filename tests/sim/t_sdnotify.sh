#!/bin/bash
# systemd's side of ibsmd (emulated fabric, no ibsim; a few seconds), with
# a stand-in NOTIFY_SOCKET: READY=1 exactly once, after the first heavy
# sweep, with a STATUS= line naming MASTER and the sweep's counts;
# WATCHDOG=1 every half WATCHDOG_USEC, none without it; `ibsmctl reload`
# (the unit's ExecReload) exits 1 on a broken policy, naming file:line,
# and the old policy keeps running; STOPPING=1 at SIGTERM.
. "$(dirname "$0")/common.sh"

recv_log="$SIM_TMP/notify.log"
python3 "$SIM_ROOT/tests/sim/notify_recv.py" "$SIM_TMP/notify.sock" "$recv_log" &
bg_register $!
wait_until 5 test -S "$SIM_TMP/notify.sock" || fail "notify_recv.py did not bind"

policy="$SIM_TMP/policy.yaml"
printf 'routing:\n  engine: minhop\n' >"$policy"
sock="$SIM_TMP/ctl.sock"
ctl() { "$IBSMCTL" -s "$sock" "$@"; }
NOTIFY_SOCKET="$SIM_TMP/notify.sock" WATCHDOG_USEC=200000 \
	"$IBSMD" --emulate "$SIM_ROOT/etc/demo.net" -c "$policy" -s "$sock" -S "$SIM_TMP/state" \
	>"$SIM_TMP/daemon.out" 2>"$SIM_TMP/daemon.err" &
daemon=$!
bg_register "$daemon"
up() { grep -q '^subnet up:' "$SIM_TMP/daemon.out"; }
wait_until 20 up || fail "the emulated daemon did not come up: $(tail -n 3 "$SIM_TMP/daemon.err")"
ready() { grep -q '^READY=1$' "$recv_log"; }
wait_until 5 ready || fail "no READY=1: $(cat "$recv_log")"
# READY=1 and the STATUS of the first heavy sweep come in one message
msg=$(awk '/^READY=1$/ { found = 1 } found { print } found && /^--$/ { exit }' "$recv_log")
grep -Eq '^STATUS=MASTER: heavy sweep 1 at [0-9-]+ [0-9:]+ in [0-9]+ ms, 6 switches, 12 CAs, 18 LIDs, routing minhop$' <<<"$msg" ||
	fail "READY=1 without the first sweep's STATUS: $msg"
pass "READY=1 after the first heavy sweep: $(grep '^STATUS=' <<<"$msg")"

sleep 1
n=$(grep -c '^WATCHDOG=1$' "$recv_log")
[ "$n" -ge 5 ] || fail "WATCHDOG=1 $n times in about 1 s with WATCHDOG_USEC=200000 (every 100 ms expected)"
pass "WATCHDOG=1 every WATCHDOG_USEC/2: $n messages in about 1 s"

# a broken policy: reload refused with file:line, exit 1; the old one stays
printf 'routing:\n  engine: minhop\nsweep:\n  interval_s: nope\n' >"$policy"
out=$(ctl reload 2>&1); rc=$?
[ "$rc" -eq 1 ] && grep -q "policy.yaml:4:" <<<"$out" || fail "ibsmctl reload of a broken policy: exit $rc ($out)"
out=$(ctl --json reload 2>/dev/null); rc=$?
[ "$rc" -eq 1 ] && python3 -c 'import json, sys; assert "policy.yaml:4:" in json.loads(sys.argv[1])["error"]' "$out" ||
	fail "ibsmctl --json reload of a broken policy: exit $rc ($out)"
n=$(grep -c '^subnet up:' "$SIM_TMP/daemon.out")
ctl sweep --heavy >/dev/null || fail "ibsmctl sweep --heavy"
more() { [ "$(grep -c '^subnet up:' "$SIM_TMP/daemon.out")" -gt "$n" ]; }
wait_until 10 more || fail "no heavy sweep after the refused reload"
grep '^subnet up:' "$SIM_TMP/daemon.out" | tail -n 1 | grep -q ' routing=minhop ' ||
	fail "after a refused reload: $(grep '^subnet up:' "$SIM_TMP/daemon.out" | tail -n 1)"
printf 'routing:\n  engine: updn\n' >"$policy"
ctl reload >/dev/null || fail "ibsmctl reload of a good policy: $(ctl reload 2>&1)"
pass "ibsmctl reload (ExecReload): a broken policy exits 1 naming policy.yaml:4, minhop keeps routing; a good one is taken"

status_msgs=$(grep -c '^STATUS=MASTER' "$recv_log")
[ "$status_msgs" -ge 2 ] || fail "one STATUS= line per heavy sweep expected: $status_msgs"
[ "$(grep -c '^READY=1$' "$recv_log")" -eq 1 ] || fail "READY=1 more than once: $(grep -c '^READY=1$' "$recv_log")"
kill -TERM "$daemon"
wait_pid "$daemon" 5 || fail "ibsmd did not stop on SIGTERM"
wait_until 2 grep -q '^STOPPING=1$' "$recv_log" || fail "no STOPPING=1 at SIGTERM"
pass "STATUS= at every heavy sweep ($status_msgs), READY=1 once, STOPPING=1 at SIGTERM"

# without WATCHDOG_USEC: no WATCHDOG=1
: >"$recv_log"
NOTIFY_SOCKET="$SIM_TMP/notify.sock" "$IBSMD" --emulate "$SIM_ROOT/etc/demo.net" -s "$sock" \
	-S "$SIM_TMP/state" >"$SIM_TMP/daemon2.out" 2>&1 &
daemon=$!
bg_register "$daemon"
wait_until 20 ready || fail "no READY=1 from the second daemon"
sleep 0.5
kill -TERM "$daemon"
wait_pid "$daemon" 5 || fail "the second ibsmd did not stop"
! grep -q '^WATCHDOG=1$' "$recv_log" || fail "WATCHDOG=1 sent without WatchdogSec"
pass "no WATCHDOG=1 when systemd asks for none"
