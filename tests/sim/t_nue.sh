#!/bin/bash
# nue under ibsim, judged with infiniband-diags and beside OpenSM's nue
# (nue_max_num_vls 1, its default) on a fresh ibsim of the same fabric, a
# 4x4 torus and a random 8-regular graph of 32 switches:
#  - ibsmd --once -R nue: every CA reaches every LID, no loop
#    (check_fabric.py), and no cycle in the channel-dependency graph on one
#    VL (cdg_check.py over ibnetdiscover and dump_fts), where the same
#    fabric's shortest paths (minhop) have one;
#  - OpenSM -o -R nue: ibsmd's busiest link carries at most 5% more
#    CA-to-CA routes (link_loads.py over both SMs' dumps); whether OpenSM's
#    tables have a cycle on one VL is printed, not judged.
. "$(dirname "$0")/common.sh"
command -v opensm >/dev/null || fail "opensm is not installed (make deps)"
CDG="$SIM_ROOT/tests/sim/cdg_check.py"
LOADS="$SIM_ROOT/tests/sim/link_loads.py"
max_of() { python3 "$LOADS" "$1.topo" "$1.lfts" | sed -n 's/^all: .*max=\([0-9]*\).*/\1/p'; }

for spec in "torus44|torus --dims 4,4" "rrg30|rrg --switches 30 --degree 8 --seed 4"; do
	name=${spec%%|*}
	net="$SIM_TMP/$name.net"
	gen ${spec#*|} -o "$net"
	"$IBSMD" --offline "$net" -R minhop --dump-lfts "$SIM_TMP/$name.mh.lfts" \
		--dump-topology "$SIM_TMP/$name.mh.topo" >/dev/null 2>&1 || fail "$name: minhop offline"
	python3 "$CDG" --topo "$SIM_TMP/$name.mh.topo" --lfts "$SIM_TMP/$name.mh.lfts" >/dev/null &&
		fail "$name: minhop's shortest paths have no cycle: the test needs a fabric where they do"
	sim_start "$net"
	ibsmd_once H-0 "$SIM_TMP/state-$name" -R nue || fail "$name: $(tail -n 2 "$SIM_TMP/once.err")"
	grep -q 'routing=nue ' "$SIM_TMP/once.out" || fail "$name: $(cat "$SIM_TMP/once.out")"
	check_up "$SIM_TMP/$name"
	python3 "$CDG" --topo "$SIM_TMP/$name.topo" --lfts "$SIM_TMP/$name.lfts" >"$SIM_TMP/$name.cdg" 2>&1 ||
		fail "$name: $(cat "$SIM_TMP/$name.cdg")"
	sim_stop
	sim_start "$net"
	mkdir -p "$SIM_TMP/osm-$name"
	OSM_CACHE_DIR="$SIM_TMP/osm-$name" OSM_TMP_DIR="$SIM_TMP/osm-$name" on_host H-0 \
		opensm -o -R nue -F /dev/null -f "$SIM_TMP/osm-$name/log" >/dev/null 2>&1 ||
		fail "$name: opensm -o -R nue"
	sim_dump "$SIM_TMP/osm-$name/d" || fail "$name: diags after OpenSM"
	sim_stop
	mine=$(max_of "$SIM_TMP/$name") theirs=$(max_of "$SIM_TMP/osm-$name/d")
	[ -n "$mine" ] && [ -n "$theirs" ] || fail "$name: link_loads.py: '$mine' '$theirs'"
	[ $((mine * 100)) -le $((theirs * 105)) ] || fail "$name: busiest link: ibsmd $mine routes, OpenSM $theirs"
	osm_cdg=$(python3 "$CDG" --topo "$SIM_TMP/osm-$name/d.topo" --lfts "$SIM_TMP/osm-$name/d.lfts" 2>&1 | cut -d: -f2 | cut -c1-40)
	pass "$name: nue on one VL: every CA reaches every LID, $(cut -d: -f2- "$SIM_TMP/$name.cdg" | sed 's/^ //') (minhop's has one); busiest link $mine CA-to-CA routes, OpenSM's nue $theirs (its tables on one VL:$osm_cdg)"
done
