#!/bin/bash
# Daemon mode (10 s light sweep): subnet up, sminfo from a host answered by
# ibsmd, an unchanged heavy sweep writes nothing, Unlink of a host's link
# re-sweeps within 2 s because of the trap and the other hosts stay routed,
# ReLink brings the host back within one light-sweep interval, so does a
# leaf-spine link, ibsmctl.
. "$(dirname "$0")/common.sh"

net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 3 -o "$net"
sock="$SIM_TMP/ibsmd.sock"
log="$SIM_TMP/daemon.log"
ctl() { "$IBSMCTL" -s "$sock" "$@"; }
last_summary() { grep '^subnet up:' "$log" | tail -n 1; }

sim_start "$net"
on_host_bg H-0 "$IBSMD" -S "$SIM_TMP/state" -s "$sock" >"$log" 2>&1
daemon=$SIM_LAST_PID
wait_up 20 "$log" "from the daemon"
hosts=$(last_summary | grep -o 'cas=[0-9]*')
ctl status | grep -q '^state: MASTER' || fail "ibsmctl status: $(ctl status 2>&1 | head -n 3)"
check_up "$SIM_TMP/up"
pass "daemon up ($hosts), MASTER, fabric checked with infiniband-diags"

smlid=$(ctl --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["sm_lid"])')
out=$(on_host H-5 sminfo 2>&1) || fail "sminfo from H-5: $out"
grep -q "sm lid $smlid .*SMINFO_MASTER" <<<"$out" || fail "sminfo (ibsmd's LID is $smlid): $out"
pass "sminfo from H-5 answered by ibsmd: $out"

# what ibsmd wrote, read back with smpquery: SM LID, GID prefix, LMC, P_Key 0xffff
pi=$(on_host H-4 smpquery -D portinfo 0 2>&1) || fail "smpquery portinfo: $pi"
grep -Eq "^SMLid:\.+$smlid$" <<<"$pi" || fail "H-4's SM LID is not $smlid: $(grep SMLid <<<"$pi")"
grep -Eq "^GidPrefix:\.+0xfe80000000000000$" <<<"$pi" || fail "GID prefix: $(grep GidPrefix <<<"$pi")"
grep -Eq "^LinkState:\.+Active$" <<<"$pi" || fail "link state: $(grep LinkState <<<"$pi")"
pk=$(on_host H-4 smpquery -D pkeys 0 2>&1) || fail "smpquery pkeys: $pk"
grep -q "0xffff" <<<"$pk" || fail "no default partition: $pk"
pass "H-4's PortInfo and P_Key table read back: SM LID $smlid, subnet prefix, Active, 0xffff"

n=$(sweeps)
ctl sweep --heavy >/dev/null || fail "ibsmctl sweep --heavy"
wait_until 10 more_sweeps_than "$n" || fail "no heavy sweep after ibsmctl sweep --heavy"
last_summary | grep -q 'lft_blocks=0 portinfo_sets=0' || fail "an unchanged heavy sweep wrote: $(last_summary)"
pass "unchanged heavy sweep sends only Gets: $(last_summary | grep -o 'mads_sent=[0-9]*')"

n=$(sweeps)
t0=$(date +%s%N)
sim_cmd 'Unlink "H-7"[1]' >/dev/null
wait_until 2 more_sweeps_than "$n" || fail "no heavy sweep within 2 s of Unlink: $(tail -n 3 "$log")"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
grep -q 'trap 128 from LID' "$log" || fail "the log does not name the trap"
last_summary | grep -q "cas=$(( ${hosts#cas=} - 1 ))" || fail "after Unlink: $(last_summary)"
check_up "$SIM_TMP/unlinked"
pass "Unlink: heavy sweep ${ms} ms later because of trap 128; remaining hosts routed"

n=$(sweeps)
sim_cmd 'ReLink "H-7"[1]' >/dev/null
wait_until 11 more_sweeps_than "$n" || fail "H-7 not back within one light-sweep interval"
last_summary | grep -q "$hosts" || fail "after ReLink: $(last_summary)"
check_up "$SIM_TMP/relinked"
pass "ReLink: H-7 back ($(last_summary | grep -o 'cas=[0-9]*')), fabric checked"

# a switch-to-switch link: both ends come back in Init; the end the sweep
# reaches second is inferred, not read, and must still end up Active
n=$(sweeps)
sim_cmd 'Unlink "L0-S2"[4]' >/dev/null
wait_until 3 more_sweeps_than "$n" || fail "no heavy sweep after Unlink of a switch link"
n=$(sweeps)
sim_cmd 'ReLink "L0-S2"[4]' >/dev/null
wait_until 11 more_sweeps_than "$n" || fail "the switch link not back within one light-sweep interval"
check_up "$SIM_TMP/swrelinked"
pass "ReLink of a leaf-spine link: every link Active again, fabric checked"

light() { [ "$(ctl --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["light_sweeps"])')" -ge 1 ]; }
wait_until 12 light || fail "no light sweep within the 10 s interval"
pass "light sweeps run every sweep.interval_s (10 s by default)"

ctl reroute >/dev/null || fail "ibsmctl reroute"
out=$(ctl nosuchcommand 2>&1) && fail "an unknown command was accepted"
grep -q "unknown command" <<<"$out" || fail "unknown command: $out"
printf 'this is not json\n' | timeout 5 python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(sys.stdin.buffer.read()); print(s.recv(4096).decode())' "$sock" 2>/dev/null | grep -q '"ok": *false' ||
	fail "garbage on the control socket got no error reply"
ctl status >/dev/null || fail "the daemon stopped answering after garbage"
pass "ibsmctl reroute; unknown command and garbage rejected, daemon still answers"

kill -TERM "$daemon"
wait_pid "$daemon" 5 || fail "the daemon did not stop on SIGTERM"
[ -e "$sock" ] && fail "the control socket was left behind"
pass "SIGTERM: stopped, socket removed"
