#!/bin/bash
# dfsssp under ibsim, judged with infiniband-diags and against OpenSM's
# dfsssp on a fresh ibsim of the same fabric, on a ring of 6 switches (a
# 1-D torus: its shortest paths close a cycle on one VL) and a 4x4 torus:
#  - the daemon routes with dfsssp: every CA reaches every LID, no loop
#    (check_fabric.py over ibnetdiscover and dump_fts);
#  - saquery -p from every host's LID to every LID: the SLs; cdg_check.py
#    --sls finds no cycle in the channel-dependency graph over (link, VL),
#    from ibnetdiscover, dump_fts and those SLs alone, and one on VL0
#    without them; smpquery sl2vl on every switch and CA port: SL i -> VL
#    i for the VLs used (qos_check.py sl2vl);
#  - the SLs equal the offline run's (--offline -R dfsssp --dump-sls,
#    matched by port GUID) and the VLs used its `vls: used=N`;
#  - OpenSM -R dfsssp on a fresh ibsim: ibsmd uses no more VLs than
#    OpenSM's "Virtual Lanes needed", and its busiest link carries at most
#    5% more CA-to-CA routes (link_loads.py over both SMs' dumps).
. "$(dirname "$0")/common.sh"
command -v opensm >/dev/null || fail "opensm is not installed (make deps)"
command -v saquery >/dev/null || fail "saquery is not installed (make deps)"
CDG="$SIM_ROOT/tests/sim/cdg_check.py"
LOADS="$SIM_ROOT/tests/sim/link_loads.py"

# sl_of S D: "S D SL", the SL of saquery -p from LID S to LID D (at H-0)
sl_of() {
	local sl
	sl=$(on_host H-0 saquery -p --slid "$1" --dlid "$2" 2>&1 |
		sed -n 's/^\s*sl\.\+\(0x[0-9a-fA-F]*\)$/\1/p' | head -n 1)
	[ -n "$sl" ] && echo "$1 $2 $((sl))"
}

# sls PREFIX CAS: PREFIX.sls, "SLID DLID SL" for every CA base LID (the
# ports whose GUIDs are the first column of CAS) to every other LID, four
# saquery at a time
sls() {
	local s d
	python3 "$SIM_LIDS" "$1.topo" >"$1.lids" || fail "lids_of.py $1.topo"
	awk 'NR == FNR { ca[$1] = 1; next } ($1 in ca) { print $2 }' \
		"$2" "$1.lids" | while read -r s; do
		awk '{ print $2 }' "$1.lids" | while read -r d; do
			[ "$s" = "$d" ] || echo "$s $d"
		done
	done | (
		k=0
		while read -r s d; do
			sl_of "$s" "$d" >"$1.sl.$k" &
			k=$((k + 1)); [ $((k % 4)) -ne 0 ] || wait
		done
		wait
	)
	cat "$1".sl.* >"$1.sls"
}

for spec in "ring|torus --dims 6" "torus44|torus --dims 4,4"; do
	name=${spec%%|*}
	net="$SIM_TMP/$name.net"
	gen ${spec#*|} -o "$net"
	# offline: the VLs it uses, the SL of every pair
	"$IBSMD" --offline "$net" -R dfsssp --verify --dump-sls "$SIM_TMP/$name.off-sls" \
		>"$SIM_TMP/$name.off" 2>&1 || fail "$name: offline: $(tail -n 3 "$SIM_TMP/$name.off")"
	vls=$(sed -n 's/^vls: used=//p' "$SIM_TMP/$name.off")
	[ "$vls" -ge 2 ] || fail "$name: offline uses $vls VLs; its cycles need 2"

	sim_start "$net"
	sock="$SIM_TMP/$name.sock"
	on_host_bg H-0 "$IBSMD" -R dfsssp -S "$SIM_TMP/state-$name" -s "$sock" \
		--log-level info >"$SIM_TMP/$name.log" 2>&1
	pid=$SIM_LAST_PID
	wait_up 30 "$SIM_TMP/$name.log"
	grep -q 'routing=dfsssp ' "$SIM_TMP/$name.log" || fail "$name: $(grep '^subnet up' "$SIM_TMP/$name.log")"
	check_up "$SIM_TMP/$name"
	sls "$SIM_TMP/$name" "$SIM_TMP/$name.off-sls"
	python3 "$CDG" --topo "$SIM_TMP/$name.topo" --lfts "$SIM_TMP/$name.lfts" \
		--sls "$SIM_TMP/$name.sls" >"$SIM_TMP/$name.cdg" 2>&1 ||
		fail "$name: $(cat "$SIM_TMP/$name.cdg")"
	python3 "$CDG" --topo "$SIM_TMP/$name.topo" --lfts "$SIM_TMP/$name.lfts" >/dev/null &&
		fail "$name: no cycle on one VL: the test fabric needs none of dfsssp's layers"
	# the daemon's SLs are the offline run's (by port GUID)
	python3 - "$SIM_TMP/$name.lids" "$SIM_TMP/$name.sls" "$SIM_TMP/$name.off-sls" <<'PY' ||
import sys
guid = {}
for line in open(sys.argv[1]):
    g, lid = line.split()[:2]
    guid[int(lid)] = int(g, 16)
got = {}
for line in open(sys.argv[2]):
    s, d, sl = map(int, line.split())
    got[(guid[s], guid[d])] = sl
off = {}
for line in open(sys.argv[3]):
    s, d, sl = line.split()
    off[(int(s, 16), int(d, 16))] = int(sl)
bad = [k for k in got if off.get(k) != got[k]]
if bad or not got:
    print("%d of %d pairs differ, e.g. %s: daemon %s, offline %s" % (
        len(bad), len(got), bad[:1], [got[k] for k in bad[:1]], [off.get(k) for k in bad[:1]]))
    sys.exit(1)
PY
		fail "$name: the daemon's PathRecord SLs are not the offline run's"
	# every switch (in, out) pair and CA port: SL i -> VL i below the VLs used
	mkdir -p "$SIM_TMP/$name.sl2vl"
	sed -n 's/^Switch\s\+\([0-9]\+\)\s.*\blid \([0-9]\+\) .*/\2 \1/p' "$SIM_TMP/$name.topo" |
		while read -r lid n; do
			for out in $(seq 0 "$n"); do
				on_host H-0 smpquery sl2vl "$lid" "$out" 2>&1
			done >"$SIM_TMP/$name.sl2vl/sl2vl.$lid"
		done
	grep '^0x' "$SIM_TMP/$name.lids" | while read -r _ lid; do
		grep -q "^Switch.*\blid $lid " "$SIM_TMP/$name.topo" ||
			on_host H-0 smpquery sl2vl "$lid" >"$SIM_TMP/$name.sl2vl/sl2vl.$lid" 2>&1
	done
	python3 "$SIM_ROOT/tests/sim/qos_check.py" sl2vl --topo "$SIM_TMP/$name.topo" \
		--dir "$SIM_TMP/$name.sl2vl" --max-vls "$vls" --pairs linked >"$SIM_TMP/$name.sl2vl.check" 2>&1 ||
		fail "$name: SL2VL tables: $(tail -n 3 "$SIM_TMP/$name.sl2vl.check")"
	kill "$pid"
	wait_pid "$pid" 10 || fail "$name: ibsmd did not stop"
	sim_stop
	pass "$name: dfsssp on $vls VLs: every CA reaches every LID; $(cut -d: -f2- "$SIM_TMP/$name.cdg" | sed 's/^ //'); one VL would cycle; the PathRecord SLs are the offline run's; every SL2VL table SL i -> VL i"

	# OpenSM's dfsssp on a fresh ibsim of the same fabric
	sim_start "$net"
	mkdir -p "$SIM_TMP/osm-$name"
	OSM_CACHE_DIR="$SIM_TMP/osm-$name" OSM_TMP_DIR="$SIM_TMP/osm-$name" on_host H-0 \
		opensm -o -R dfsssp -F /dev/null -D 0x03 -f "$SIM_TMP/osm-$name/log" >/dev/null 2>&1 ||
		fail "$name: opensm -o -R dfsssp"
	sim_dump "$SIM_TMP/osm-$name/d" || fail "$name: diags after OpenSM"
	sim_stop
	osm_vls=$(sed -n 's/.*Virtual Lanes needed: \([0-9]*\).*/\1/p' "$SIM_TMP/osm-$name/log" | tail -n 1)
	[ -n "$osm_vls" ] || fail "$name: OpenSM's log names no VLs needed: $(grep -m3 'ERR' "$SIM_TMP/osm-$name/log")"
	[ "$vls" -le "$osm_vls" ] || fail "$name: ibsmd uses $vls VLs, OpenSM needs $osm_vls"
	mine=$(python3 "$LOADS" "$SIM_TMP/$name.topo" "$SIM_TMP/$name.lfts" | sed -n 's/^all: .*max=\([0-9]*\).*/\1/p')
	theirs=$(python3 "$LOADS" "$SIM_TMP/osm-$name/d.topo" "$SIM_TMP/osm-$name/d.lfts" | sed -n 's/^all: .*max=\([0-9]*\).*/\1/p')
	[ -n "$mine" ] && [ -n "$theirs" ] || fail "$name: link_loads.py: '$mine' '$theirs'"
	[ $((mine * 100)) -le $((theirs * 105)) ] ||
		fail "$name: busiest link: ibsmd $mine routes, OpenSM $theirs"
	pass "$name: beside OpenSM's dfsssp: VLs $vls (OpenSM needs $osm_vls), busiest link $mine CA-to-CA routes (OpenSM $theirs)"
done

# LMC: each offset balanced on its own (LMC 2; the verifier's per-offset
# check) and a port's LIDs on different ways where they can be (LMC 1:
# link_loads.py --shared over the dumps; offsets on equal weights of their
# own would take the same ways everywhere)
gen torus --dims 4,4 -o "$SIM_TMP/lmc.net"
for lmc in 1 2; do
	printf 'lmc: %s\n' "$lmc" >"$SIM_TMP/lmc.yaml"
	"$IBSMD" -c "$SIM_TMP/lmc.yaml" --offline "$SIM_TMP/lmc.net" -R dfsssp --verify \
		--dump-lfts "$SIM_TMP/lmc$lmc.lfts" --dump-topology "$SIM_TMP/lmc$lmc.topo" \
		>"$SIM_TMP/lmc$lmc.out" 2>&1 ||
		fail "LMC $lmc: $(grep -E '^verify|UNBALANCED' "$SIM_TMP/lmc$lmc.out")"
	grep -q ' 0 LID offsets unbalanced' "$SIM_TMP/lmc$lmc.out" ||
		fail "LMC $lmc: $(tail -n 1 "$SIM_TMP/lmc$lmc.out")"
done
shared=$(python3 "$LOADS" "$SIM_TMP/lmc1.topo" "$SIM_TMP/lmc1.lfts" --shared | sed -n 's/^shared: //p')
pairs=$(sed -n 's/.*pairs=\([0-9]*\).*/\1/p' <<<"$shared") sharing=$(sed -n 's/.*sharing=\([0-9]*\).*/\1/p' <<<"$shared")
[ -n "$pairs" ] && [ "$sharing" -lt "$pairs" ] || fail "LMC 1: every pair's two LIDs share a link: $shared"
pass "LMC 1 and 2 on the 4x4 torus: the verifier finds every offset balanced on its own; with LMC 1 the two LIDs of $((pairs - sharing)) of $pairs pairs share no link"
