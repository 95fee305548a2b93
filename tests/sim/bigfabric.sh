#!/bin/bash
# By hand (too slow for make check): bring up a big fabric under ibsim with
# `ibsmd --once` and check it with infiniband-diags.
#   tests/sim/bigfabric.sh ftree2 --radix 36               # 324 hosts, 36 switches
#   tests/sim/bigfabric.sh ftree3 --radix 24               # 3456 hosts, 720 switches
#   BIG_ENGINE=updn tests/sim/bigfabric.sh ...            # -R updn, plus a CDG cycle check
SIM_TEST=bigfabric
. "$(dirname "$0")/common.sh"
[ $# -gt 0 ] || fail "usage: bigfabric.sh FABGEN-ARGS..."
gen "$@" -o "$SIM_TMP/big.net"
sim_start "$SIM_TMP/big.net"
t0=$(date +%s%N)
ibsmd_once H-0 "$SIM_TMP/state" ${BIG_ENGINE:+-R "$BIG_ENGINE"} || fail "ibsmd --once: $(tail -n 3 "$SIM_TMP/once.err")"
wall=$(( ($(date +%s%N) - t0) / 1000000 ))
cat "$SIM_TMP/once.out"
[ "$(summary unresponsive)" = 0 ] || fail "unresponsive=$(summary unresponsive)"
t1=$(date +%s)
check_up "$SIM_TMP/big"
cdg=$(python3 "$SIM_ROOT/tests/sim/cdg_check.py" --topo "$SIM_TMP/big.topo" --lfts "$SIM_TMP/big.lfts")
cdg_rc=$?
[ "$cdg_rc" -eq 0 ] || [ "${BIG_ENGINE:-}" = minhop ] || fail "$cdg"
pass "$* ${BIG_ENGINE:+(-R $BIG_ENGINE)}: ibsmd --once ${wall} ms wall; $(tail -n 1 "$SIM_TMP/big.check"); $cdg (diags+checks $(( $(date +%s) - t1 )) s)"
