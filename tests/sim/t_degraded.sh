#!/bin/bash
# A degraded fat tree (one leaf-to-spine link removed before the SM runs):
# ftree still routes every pair, with no loop and no dependency cycle,
# checked from infiniband-diags output.
. "$(dirname "$0")/common.sh"
gen ftree3 --radix 8 -o "$SIM_TMP/f.net"
sim_start "$SIM_TMP/f.net"
leaf=$(awk '/^Switch/ { gsub(/"/, "", $3); sw = $3 } /^\[[0-9]+\]\t"L1/ { sub(/\].*/, "", $1); sub(/\[/, "", $1); print sw, $1; exit }' "$SIM_TMP/f.net")
sim_cmd "Unlink \"${leaf% *}\"[${leaf#* }]" >/dev/null
ibsmd_once H-0 "$SIM_TMP/state" -R ftree || fail "ftree on the degraded tree: $(tail -n 2 "$SIM_TMP/once.err")"
grep -q 'routing=ftree ' "$SIM_TMP/once.out" || fail "not routed by ftree: $(cat "$SIM_TMP/once.out")"
check_up "$SIM_TMP/deg"
cdg=$(python3 "$SIM_ROOT/tests/sim/cdg_check.py" --topo "$SIM_TMP/deg.topo" --lfts "$SIM_TMP/deg.lfts") || fail "$cdg"
pass "link ${leaf% *}[${leaf#* }] removed: $(tail -n 1 "$SIM_TMP/deg.check" | cut -d: -f2-3); ${cdg#cdg_check: }"
