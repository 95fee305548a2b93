#!/bin/bash
# By hand: all-to-all routes per switch-to-switch link, ibsmd's engine
# against OpenSM's of the same name (ENGINE, default ftree), each on a
# fresh ibsim of the same fabric, in one run; both read back with
# infiniband-diags and counted by tests/sim/link_loads.py.
#   tests/sim/balance.sh ftree3 --radix 24
#   ENGINE=dfsssp tests/sim/balance.sh torus --dims 4,4,4
SIM_TEST=balance
. "$(dirname "$0")/common.sh"
gen "$@" -o "$SIM_TMP/f.net"
sim_start "$SIM_TMP/f.net"
ENGINE=${ENGINE:-ftree}
ibsmd_once H-0 "$SIM_TMP/state" -R "$ENGINE" || fail "ibsmd: $(tail -n 2 "$SIM_TMP/once.err")"
sim_dump "$SIM_TMP/ibsmd" || fail "diags"
sim_stop
sim_start "$SIM_TMP/f.net"
mkdir -p "$SIM_TMP/osm"
OSM_CACHE_DIR="$SIM_TMP/osm" OSM_TMP_DIR="$SIM_TMP/osm" on_host H-0 opensm -o -R "$ENGINE" \
	-F /dev/null -f "$SIM_TMP/osm/log" >/dev/null 2>&1 || fail "opensm"
sim_dump "$SIM_TMP/osm" || fail "diags"
sim_stop
for sm in ibsmd osm; do
	echo "$sm: $(python3 "$SIM_ROOT/tests/sim/link_loads.py" "$SIM_TMP/$sm.topo" "$SIM_TMP/$sm.lfts" | tr '\n' ' ')"
done
