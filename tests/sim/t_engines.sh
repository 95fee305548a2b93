#!/bin/bash
# Every routing engine on every test fabric the README's table says it applies
# to, under ibsim: every CA reaches every LID with no loop (check_fabric.py) and
# no channel-dependency cycle for updn/ftree/dmodk (cdg_check.py), both from
# infiniband-diags output; twice --offline gives identical tables; an engine
# that does not apply is refused with a reason.
. "$(dirname "$0")/common.sh"
CDG="$SIM_ROOT/tests/sim/cdg_check.py"
LFTS="$SIM_ROOT/tests/sim/lft_entries.py"

# name | fabgen arguments | engines that apply | engines that must refuse
FABRICS=(
	"ftree2-parallel|ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 2 --parallel 2|minhop updn ftree dmodk|"
	"ftree3|ftree3 --radix 8|minhop updn ftree dmodk|"
	"kary-3-3|kary --k 3 --n 3|minhop updn ftree dmodk|"
	"kary-3-3-parallel|kary --k 3 --n 3 --parallel 2|minhop updn ftree dmodk|"
	"mesh-3x2|mesh --x 3 --y 2|minhop updn|ftree dmodk"
	"random-16|random --switches 16 --radix 8 --hosts 24 --seed 5|minhop updn|dmodk"
)

for spec in "${FABRICS[@]}"; do
	IFS='|' read -r name args good bad <<<"$spec"
	net="$SIM_TMP/$name.net"
	gen $args -o "$net"
	sim_start "$net"
	for e in $good; do
		ibsmd_once H-0 "$SIM_TMP/state-$name-$e" -R "$e" ||
			fail "$name -R $e: $(tail -n 2 "$SIM_TMP/once.err")"
		grep -q "routing=$e " "$SIM_TMP/once.out" || fail "$name: not routed by $e: $(cat "$SIM_TMP/once.out")"
		check_up "$SIM_TMP/$name-$e"
		if [ "$e" = minhop ]; then
			cdg=$(python3 "$CDG" --topo "$SIM_TMP/$name-$e.topo" --lfts "$SIM_TMP/$name-$e.lfts")
		else
			cdg=$(python3 "$CDG" --topo "$SIM_TMP/$name-$e.topo" --lfts "$SIM_TMP/$name-$e.lfts") ||
				fail "$name -R $e: $cdg"
		fi
		"$IBSMD" --offline "$net" -R "$e" --dump-lfts "$SIM_TMP/a.lfts" >/dev/null 2>&1 &&
		"$IBSMD" --offline "$net" -R "$e" --dump-lfts "$SIM_TMP/b.lfts" >/dev/null 2>&1 ||
			fail "$name -R $e --offline failed"
		cmp -s <(python3 "$LFTS" "$SIM_TMP/a.lfts") <(python3 "$LFTS" "$SIM_TMP/b.lfts") ||
			fail "$name -R $e: two --offline runs differ"
		pass "$name -R $e: $(tail -n 1 "$SIM_TMP/$name-$e.check" | cut -d: -f2-3); ${cdg#cdg_check: }"
	done
	for e in $bad; do
		"$IBSMD" --offline "$net" -R "$e" >/dev/null 2>"$SIM_TMP/refuse.err" &&
			fail "$name: $e should refuse this fabric"
		grep -q "routing: $e failed: " "$SIM_TMP/refuse.err" || fail "$name -R $e: no reason given: $(cat "$SIM_TMP/refuse.err")"
		pass "$name: $e refuses: $(grep -o "$e failed: .*" "$SIM_TMP/refuse.err" | head -n 1 | cut -c1-90)"
	done
	sim_stop
done
