#!/bin/bash
# LMC 1 and the engines OpenSM also has (ftree, updn, minhop), each on a
# fresh ibsim of a two-level and a three-level tree: ibsmd --once --verify
# (which judges every LID offset's balance), then OpenSM -R ENGINE -l 1;
# both read back with infiniband-diags and counted by link_loads.py over
# the base LIDs (what MPI uses).  ibsmd's routes per switch-to-switch
# link must be no worse than OpenSM's by more than 1: max at most
# OpenSM's + 1, min at least OpenSM's - 1 (OpenSM's ftree does not do
# LMC > 0 and falls back to minhop, whose three-level trees ibsmd's
# ftree beats).  The other offset is held to the same bound, and the
# routes to a port's two LIDs must share no link.
. "$(dirname "$0")/common.sh"
LOADS="$SIM_ROOT/tests/sim/link_loads.py"

# name | fabgen arguments
FABRICS=(
	"two-level|ftree2 --radix 8 --leaves 4 --spines 4 --hosts-per-leaf 4"
	"three-level|ftree3 --radix 4"
)
printf 'lmc: 1\n' >"$SIM_TMP/lmc1.yaml"

# field NAME LINE: max=/min= of the "up:"/"down:" lines of link_loads.py
field() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$2"; }

# loads PREFIX OFFSET: "max min" over every switch-to-switch link
loads() {
	local out
	out=$(python3 "$LOADS" "$1.topo" "$1.lfts" --offset "$2" | grep '^all:') ||
		fail "link_loads.py $1 (offset $2)"
	echo "$(field max "$out") $(field min "$out")"
}

for spec in "${FABRICS[@]}"; do
	IFS='|' read -r name args <<<"$spec"
	net="$SIM_TMP/$name.net"
	gen $args -o "$net"
	for e in ftree updn minhop; do
		sim_start "$net"
		ibsmd_once H-0 "$SIM_TMP/state-$name-$e" -c "$SIM_TMP/lmc1.yaml" -R "$e" --verify ||
			fail "$name -R $e: $(grep -E 'UNBALANCED|FAILED' "$SIM_TMP/once.out" "$SIM_TMP/once.err" | head -n 4)"
		grep -q "routing=$e " "$SIM_TMP/once.out" || fail "$name: not routed by $e"
		grep -q '^verify: OK: .*, 0 LID offsets unbalanced' "$SIM_TMP/once.out" ||
			fail "$name -R $e: no per-offset verdict: $(tail -n 1 "$SIM_TMP/once.out")"
		sim_dump "$SIM_TMP/i-$name-$e" || fail "diags"
		sim_stop
		sim_start "$net"
		mkdir -p "$SIM_TMP/osm-$name-$e"
		OSM_CACHE_DIR="$SIM_TMP/osm-$name-$e" OSM_TMP_DIR="$SIM_TMP/osm-$name-$e" \
			on_host H-0 opensm -o -R "$e" -l 1 -F /dev/null \
			-f "$SIM_TMP/osm-$name-$e/log" >/dev/null 2>&1 || fail "opensm -R $e -l 1"
		sim_dump "$SIM_TMP/o-$name-$e" || fail "diags"
		sim_stop
		read -r omax omin <<<"$(loads "$SIM_TMP/o-$name-$e" 0)"
		for k in 0 1; do
			read -r imax imin <<<"$(loads "$SIM_TMP/i-$name-$e" "$k")"
			[ "$imax" -le $((omax + 1)) ] && [ "$imin" -ge $((omin - 1)) ] ||
				fail "$name -R $e: LID offset $k: routes per link max $imax / min $imin, OpenSM's base LIDs $omax / $omin"
			[ "$k" = 0 ] && base="$imax/$imin"
		done
		shared=$(python3 "$LOADS" "$SIM_TMP/i-$name-$e.topo" "$SIM_TMP/i-$name-$e.lfts" --shared |
			sed -n 's/^shared: //p')
		case "$shared" in
		*" sharing=0 "*) ;;
		*) fail "$name -R $e: a port's two LIDs share links: $shared" ;;
		esac
		pass "$name -R $e -l 1: base LIDs max/min per link ibsmd $base, OpenSM $omax/$omin; offset 1 $imax/$imin; $shared"
	done
done
