#!/bin/bash
# Route repair after a lost link (reconfig/repair.c), in the daemon on a
# 3-level fat tree routed by ftree: when a leaf-to-spine link goes, ibsmd
# keeps every entry whose old route did not cross it -- judged from
# infiniband-diags dumps before and after by repair_check.py, not from
# ibsmd's log -- writes only the blocks holding a changed entry, leaves no
# unrouted pair (check_fabric.py) and no dependency cycle (cdg_check.py);
# `ibsmctl reroute` then routes from scratch and rewrites more.
. "$(dirname "$0")/common.sh"
CDG="$SIM_ROOT/tests/sim/cdg_check.py"
REPAIR="$SIM_ROOT/tests/sim/repair_check.py"

net="$SIM_TMP/ft3.net"
gen ftree3 --radix 8 -o "$net"
sock="$SIM_TMP/ibsmd.sock"
log="$SIM_TMP/daemon.log"
ctl() { "$IBSMCTL" -s "$sock" "$@"; }
last() { grep '^subnet up:' "$log" | tail -n 1 | tr ' ' '\n' | sed -n "s/^$1=//p"; }

sim_start "$net"
on_host_bg H-0 "$IBSMD" -R ftree -S "$SIM_TMP/state" -s "$sock" --log-level info >"$log" 2>&1
daemon=$SIM_LAST_PID
wait_up 30 "$log"
check_up "$SIM_TMP/before"
total=$(last lft_blocks)
pass "up: $(last switches) switches, $total LFT blocks written, fabric checked"

# the first leaf's first link to a switch
leaf=$(awk '/^Switch/ { gsub(/"/, "", $3); sw = $3 } /^\[[0-9]+\]\t"L[1-9]/ { sub(/\].*/, "", $1); sub(/\[/, "", $1); print sw, $1; exit }' "$net")
[ -n "$leaf" ] || fail "no leaf-to-switch link in $net"
link="\"${leaf% *}\"[${leaf#* }]"
n=$(sweeps)
sim_cmd "Unlink $link" >/dev/null
wait_until 10 more_sweeps_than "$n" || fail "no sweep after Unlink $link: $(tail -n 3 "$log")"
grep -q 'routes repaired' "$log" || fail "no repair: $(grep -E 'routing|routes' "$log" | tail -n 3)"
repaired=$(last lft_blocks)
check_up "$SIM_TMP/after"
out=$(python3 "$REPAIR" --topo-before "$SIM_TMP/before.topo" --lfts-before "$SIM_TMP/before.lfts" \
	--topo-after "$SIM_TMP/after.topo" --lfts-after "$SIM_TMP/after.lfts") || fail "$out"
cdg=$(python3 "$CDG" --topo "$SIM_TMP/after.topo" --lfts "$SIM_TMP/after.lfts") || fail "after the repair: $cdg"
blocks=$(sed -n 's/.*LFT blocks changed: \([0-9]*\).*/\1/p' <<<"$out")
[ "$repaired" -le "$blocks" ] || fail "ibsmd wrote $repaired LFT blocks, $blocks changed"
pass "Unlink $link: $repaired LFT blocks written of $total; $out"
pass "after the repair: ${cdg#cdg_check: }"

n=$(sweeps)
ctl reroute >/dev/null || fail "ibsmctl reroute"
wait_until 10 more_sweeps_than "$n" || fail "no sweep after ibsmctl reroute"
rerouted=$(last lft_blocks)
check_up "$SIM_TMP/rerouted"
[ "$rerouted" -gt "$repaired" ] ||
	fail "a reroute from scratch wrote $rerouted blocks, the repair $repaired"
pass "ibsmctl reroute routes from scratch: $rerouted LFT blocks (the repair: $repaired), fabric checked"

kill -TERM "$daemon"
wait_pid "$daemon" 5 || fail "the daemon did not stop on SIGTERM"
