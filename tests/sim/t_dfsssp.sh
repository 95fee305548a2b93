#!/bin/bash
# dfsssp under ibsim, judged with infiniband-diags and against OpenSM's
# dfsssp on a fresh ibsim of the same fabric, on a ring of 6 switches (a
# 1-D torus: its shortest paths close a cycle on one VL) and a 4x4 torus:
#  - the daemon routes with dfsssp: every CA reaches every LID, no loop
#    (check_fabric.py over ibnetdiscover and dump_fts);
#  - saquery -p from every host's LID to every LID: the SLs; smpquery
#    sl2vl on every switch and CA port: SL i -> VL i for the VLs used
#    (qos_check.py sl2vl); cdg_check.py --sls --sl2vl finds no cycle in the
#    channel-dependency graph over (link, VL), from ibnetdiscover,
#    dump_fts, those SLs and tables alone, and one on VL0 without them;
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

. "$SIM_ROOT/tests/sim/vlroute_lib.sh"

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
	sl2vl_dump "$SIM_TMP/$name"
	vl_cdg "$SIM_TMP/$name" || fail "$name: $(cat "$SIM_TMP/$name.cdg")"
	python3 "$CDG" --topo "$SIM_TMP/$name.topo" --lfts "$SIM_TMP/$name.lfts" >/dev/null &&
		fail "$name: no cycle on one VL: the test fabric needs none of dfsssp's layers"
	same_sls "$SIM_TMP/$name" "$SIM_TMP/$name.off-sls" ||
		fail "$name: the daemon's PathRecord SLs are not the offline run's"
	# every switch (in, out) pair and CA port: SL i -> VL i below the VLs used
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
