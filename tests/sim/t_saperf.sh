#!/bin/bash
# t_saperf.sh: the SA load tool (build/saperf, traps/host/saclient.c on a umad
# port) against OpenSM's SA on ibsim: single-record PathRecord Gets with
# several in flight, by count and by time, every one answered with the
# record asked for.  Prints OpenSM's rate (the bench's reference).
. "$(dirname "$0")/common.sh"
command -v opensm >/dev/null || fail "opensm is not installed (make deps)"
SAPERF="$SIM_ROOT/build/saperf"
[ -x "$SAPERF" ] || fail "build/saperf is missing: run make"

net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 3 -o "$net"
opensm -c "$SIM_TMP/opensm.conf" >/dev/null 2>&1 || fail "opensm -c"
sim_start "$net"
mkdir -p "$SIM_TMP/osm.d"
OSM_CACHE_DIR="$SIM_TMP/osm.d" OSM_TMP_DIR="$SIM_TMP/osm.d" \
	on_host_bg H-9 opensm -F "$SIM_TMP/opensm.conf" -f "$SIM_TMP/osm.log" \
	>"$SIM_TMP/osm.out" 2>&1
wait_until 30 grep -qs 'Entering MASTER state' "$SIM_TMP/osm.out" ||
	fail "OpenSM is not master: $(tail -n 3 "$SIM_TMP/osm.out")"
# the SA answers once the subnet is up: a PathRecord from H-3 to H-9
wait_until 30 on_host H-3 saquery -p >/dev/null 2>&1 || fail "OpenSM's SA does not answer"

field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" <<<"$2"; }

out=$(on_host H-3 "$SAPERF" -k 16 -n 2000 2>"$SIM_TMP/saperf.err") ||
	fail "saperf -n 2000: $out $(tail -n 3 "$SIM_TMP/saperf.err")"
[ "$(field queries "$out")" = 2000 ] && [ "$(field ok "$out")" = 2000 ] ||
	fail "saperf -n 2000: $out"
note "OpenSM: $out"

out=$(on_host H-3 "$SAPERF" -k 4 -t 1 2>"$SIM_TMP/saperf.err") ||
	fail "saperf -t 1: $out $(tail -n 3 "$SIM_TMP/saperf.err")"
secs=$(field seconds "$out")
python3 -c "import sys; sys.exit(0 if 1.0 <= $secs < 5 else 1)" || fail "saperf -t 1 ran $secs s: $out"
[ "$(field ok "$out")" = "$(field queries "$out")" ] || fail "saperf -t 1: $out"

# bad usage is refused
on_host H-3 "$SAPERF" -k 0 -n 1 >/dev/null 2>&1
[ $? -eq 2 ] || fail "saperf -k 0 was not refused"
pass "saperf: 2000 PathRecord Gets from H-3 answered by OpenSM, by count and by time"
