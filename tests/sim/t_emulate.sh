#!/bin/bash
# The same fabric brought up under ibsim and under --emulate: the same LIDs
# and the same LFTs; ibsim's side read with infiniband-diags, the emulated
# side from ibsmd's --dump-topology/--dump-lfts; the emulator reports no
# spec violation (ibsmd exits non-zero if it did).
. "$(dirname "$0")/common.sh"
LFTS="$SIM_ROOT/tests/sim/lft_entries.py"

net="$SIM_TMP/rnd.net"
gen random --switches 12 --radix 8 --hosts 20 --seed 9 -o "$net"

sim_start "$net"
ibsmd_once H-0 "$SIM_TMP/state-sim" || fail "ibsim bring-up: $(tail -n 3 "$SIM_TMP/once.err")"
check_up "$SIM_TMP/sim"
sim_stop
python3 "$SIM_LIDS" "$SIM_TMP/sim.topo" >"$SIM_TMP/sim.lids"
python3 "$LFTS" "$SIM_TMP/sim.lfts" >"$SIM_TMP/sim.entries"

"$IBSMD" --emulate "$net" --once -S "$SIM_TMP/state-emu" \
	--dump-topology "$SIM_TMP/emu.topo" --dump-lfts "$SIM_TMP/emu.lfts" \
	>"$SIM_TMP/emu.out" 2>"$SIM_TMP/emu.err" || {
	tail -n 5 "$SIM_TMP/emu.err" >&2
	fail "emulated bring-up failed"
}
grep -q '^subnet up:.* unresponsive=0 ' "$SIM_TMP/emu.out" || fail "emulated: $(cat "$SIM_TMP/emu.out")"
python3 "$SIM_CHECK" --topo "$SIM_TMP/emu.topo" --lfts "$SIM_TMP/emu.lfts" >"$SIM_TMP/emu.check" 2>&1 ||
	fail "emulated tables do not check: $(tail -n 3 "$SIM_TMP/emu.check")"
python3 "$SIM_LIDS" "$SIM_TMP/emu.topo" >"$SIM_TMP/emu.lids"
python3 "$LFTS" "$SIM_TMP/emu.lfts" >"$SIM_TMP/emu.entries"

[ -s "$SIM_TMP/sim.entries" ] || fail "no LFT entries read from ibsim"
cmp -s "$SIM_TMP/sim.lids" "$SIM_TMP/emu.lids" ||
	fail "LIDs differ: $(diff "$SIM_TMP/sim.lids" "$SIM_TMP/emu.lids" | head -n 4 | tr '\n' ' ')"
cmp -s "$SIM_TMP/sim.entries" "$SIM_TMP/emu.entries" ||
	fail "LFTs differ: $(diff "$SIM_TMP/sim.entries" "$SIM_TMP/emu.entries" | head -n 4 | tr '\n' ' ')"
pass "ibsim and emulator: the same $(wc -l <"$SIM_TMP/sim.lids") LIDs and the same $(wc -l <"$SIM_TMP/sim.entries") LFT entries"
