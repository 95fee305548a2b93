#!/bin/bash
# Bring-up with --once on several fabrics, checked with infiniband-diags only:
# every cabled port Active with a LID, every CA port reaches every LID, no loop.
. "$(dirname "$0")/common.sh"

bringup() {
	local name=$1 net=$2
	sim_start "$net"
	ibsmd_once H-0 "$SIM_TMP/state-$name" || {
		cat "$SIM_TMP/once.err" >&2
		fail "$name: ibsmd --once exited non-zero"
	}
	[ "$(summary unresponsive)" = 0 ] || fail "$name: unresponsive=$(summary unresponsive)"
	check_up "$SIM_TMP/$name"
	pass "$name: $(grep '^subnet up' "$SIM_TMP/once.out" | cut -c1-80)...; $(tail -n 1 "$SIM_TMP/$name.check")"
}

gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 3 --parallel 2 -o "$SIM_TMP/par.net"
bringup parallel "$SIM_TMP/par.net"
sim_stop

gen random --switches 16 --radix 8 --hosts 24 --seed 4 -o "$SIM_TMP/rnd.net"
bringup irregular "$SIM_TMP/rnd.net"
sim_stop

gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 2 --dual-port 2 -o "$SIM_TMP/dual.net"
bringup dual-port "$SIM_TMP/dual.net"
sim_stop

# binding: by CA name and port, and a GUID that is not there
sim_start "$SIM_ROOT/etc/demo.net"
ibsmd_once H-0 "$SIM_TMP/state-bind" -d ibsim0 -p 1 || fail "-d ibsim0 -p 1: $(tail -n 2 "$SIM_TMP/once.err")"
ibsmd_once H-0 "$SIM_TMP/state-bind" -g 0x1234 && fail "-g with an absent GUID succeeded"
grep -q "no local port with GUID 0x0000000000001234" "$SIM_TMP/once.err" || fail "-g: $(cat "$SIM_TMP/once.err")"
# a CA that is not there: named, with the ones that are
ibsmd_once H-0 "$SIM_TMP/state-bind" -d mlx5_9 && fail "-d with an absent CA succeeded"
grep -q "no InfiniBand device 'mlx5_9'; the devices are: .*ibsim0" "$SIM_TMP/once.err" ||
	fail "-d mlx5_9: $(cat "$SIM_TMP/once.err")"
pass "binds by CA name and port; an absent port GUID or CA is a clear error ($(grep -o "no InfiniBand.*" "$SIM_TMP/once.err"))"
sim_stop
