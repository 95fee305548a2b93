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
echo "== ibsmctl status (excerpt)"
"$IBSMCTL" -s "$sock" status | sed -n '1,7p'
echo
echo "== the first LFT dump_fts lists, read back from the switches by H-3"
on_host H-3 dump_fts -n 2>/dev/null | awk '/^Unicast lids/ { n++ } n == 1' | sed -n '1,10p'
echo
echo "== sminfo from H-5 (answered by ibsmd)"
on_host H-5 sminfo
echo
echo "== infiniband-diags check of the whole fabric"
check_up "$SIM_TMP/demo"
tail -n 1 "$SIM_TMP/demo.check"
echo
echo "== stopping ibsmd and ibsim"
