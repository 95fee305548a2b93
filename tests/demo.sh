#!/bin/bash
# make demo: a private ibsim on etc/demo.net, the ibsmd daemon on host H-0
# until the subnet is up, then what it did; everything started is stopped.
SIM_TEST=demo
. "$(dirname "$0")/sim/common.sh"

echo "== starting ibsim on etc/demo.net (6 switches, 12 hosts)"
sim_start "$SIM_ROOT/etc/demo.net"
sock="$SIM_TMP/ibsmd.sock"
echo "== starting ibsmd on H-0"
on_host_bg H-0 "$IBSMD" -S "$SIM_TMP/state" -s "$sock" >"$SIM_TMP/ibsmd.log" 2>&1
wait_until 30 grep -q '^subnet up:' "$SIM_TMP/ibsmd.log" || {
	cat "$SIM_TMP/ibsmd.log" >&2
	fail "the subnet did not come up"
}
echo
echo "== ibsmd's log"
cat "$SIM_TMP/ibsmd.log"
echo
echo "== ibsmctl status"
"$IBSMCTL" -s "$sock" status
echo
echo "== the first LFT dump_fts lists, read back from the switches by H-3"
on_host H-3 dump_fts -n 2>/dev/null | awk '/^Unicast lids/ { n++ } n == 1' | sed -n '1,10p'
echo
echo "== sminfo from H-5 (answered by ibsmd)"
on_host H-5 sminfo
echo
echo "== an SA query: saquery -p from H-3 to H-10 (PathRecord, answered by ibsmd)"
lid3=$(on_host H-3 smpquery portinfo -D 0 1 2>/dev/null | sed -n 's/^Lid:\.*//p')
lid10=$(on_host H-10 smpquery portinfo -D 0 1 2>/dev/null | sed -n 's/^Lid:\.*//p')
on_host H-3 saquery -p --src-to-dst "${lid3}:${lid10}" 2>&1 | sed -n '1,20p'
echo
echo "== a notice: ibsm-listen on H-5 subscribes; H-7's cable is pulled and put back"
on_host_bg H-5 "$LISTEN" --trap 64,65 --count 2 --timeout 20 >"$SIM_TMP/listen.out" 2>"$SIM_TMP/listen.err"
listener=$SIM_LAST_PID
wait_until 10 grep -q 'subscribed with the SM' "$SIM_TMP/listen.err" || fail "ibsm-listen did not subscribe"
sim_cmd 'Unlink "H-7"[1]' >/dev/null
wait_until 10 grep -q '"trap":65' "$SIM_TMP/listen.out" || fail "no trap 65"
sim_cmd 'ReLink "H-7"[1]' >/dev/null
wait_pid "$listener" 20 || fail "ibsm-listen did not see its two notices"
cat "$SIM_TMP/listen.out"
echo
echo "== infiniband-diags check of the whole fabric"
check_up "$SIM_TMP/demo"
tail -n 1 "$SIM_TMP/demo.check"
echo
echo "== stopping ibsmd and ibsim"
