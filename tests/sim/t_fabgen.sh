#!/bin/bash
# The generators of the fabrics that are not trees (tests/gen/fabgen.py:
# mesh --dims, torus, dragonfly, hyperx, rrg, --fail-links), judged by
# reading the net files they write back (netshape.py): every switch's
# neighbours are the ones its family defines, on the ports the docstring
# names; a Dragonfly with a*h+1 groups has one global cable per pair of
# groups; a random regular graph is simple, connected and regular, and
# the same seed gives the same file; --fail-links removes exactly N
# switch-to-switch cables and keeps the switches connected.  No ibsim.
. "$(dirname "$0")/common.sh"
shape() { python3 "$SIM_ROOT/tests/sim/netshape.py" "$@"; }

gen torus --dims 4,4,4 --hosts 2 -o "$SIM_TMP/torus.net"
shape torus "$SIM_TMP/torus.net" 4,4,4 || fail "torus 4x4x4"
gen torus --dims 2,3 -o "$SIM_TMP/torus23.net"
shape torus "$SIM_TMP/torus23.net" 2,3 || fail "torus 2x3 (a ring of 2 has one cable)"
gen mesh --dims 8,8 -o "$SIM_TMP/mesh.net"
shape mesh "$SIM_TMP/mesh.net" 8,8 || fail "mesh 8x8"
gen mesh --x 8 --y 8 -o "$SIM_TMP/mesh-xy.net"
diff <(grep -v '^#' "$SIM_TMP/mesh.net") <(grep -v '^#' "$SIM_TMP/mesh-xy.net") >/dev/null ||
	fail "mesh --dims 8,8 differs from mesh --x 8 --y 8"
gen mesh --dims 3,3,3 -o "$SIM_TMP/mesh3.net"
shape mesh "$SIM_TMP/mesh3.net" 3,3,3 || fail "mesh 3x3x3"
pass "torus 4x4x4 and 2x3, mesh 8x8 (the same file as --x 8 --y 8) and 3x3x3: each switch's +d/-d ports reach its lattice neighbours, tori wrap"

gen dragonfly --a 4 --p 2 --h 2 -o "$SIM_TMP/df.net"
shape dragonfly "$SIM_TMP/df.net" 4,2,2,9 || fail "dragonfly a=4 p=2 h=2"
gen dragonfly --a 4 --p 1 --h 2 --groups 5 -o "$SIM_TMP/df5.net"
shape dragonfly "$SIM_TMP/df5.net" 4,1,2,5 || fail "dragonfly of 5 groups"
pass "dragonfly a=4 h=2: 9 groups, all-to-all inside each, one global cable per pair of groups; 5 groups: no cable to a group not built"

gen hyperx --dims 3,4,2 -o "$SIM_TMP/hx.net"
shape hyperx "$SIM_TMP/hx.net" 3,4,2 || fail "hyperx 3x4x2"
pass "hyperx 3x4x2: each switch cabled to every switch one coordinate away"

for seed in 1 2 3; do
	gen rrg --switches 64 --degree 8 --hosts 1 --seed "$seed" -o "$SIM_TMP/rrg$seed.net"
	shape rrg "$SIM_TMP/rrg$seed.net" 64,8 || fail "rrg seed $seed"
done
gen rrg --switches 64 --degree 8 --hosts 1 --seed 2 -o "$SIM_TMP/rrg2b.net"
body() { grep -v '^#' "$1"; }	# the title line names the output file
cmp -s <(body "$SIM_TMP/rrg2.net") <(body "$SIM_TMP/rrg2b.net") || fail "rrg: seed 2 twice gave two fabrics"
! cmp -s <(body "$SIM_TMP/rrg1.net") <(body "$SIM_TMP/rrg2.net") || fail "rrg: seeds 1 and 2 gave one fabric"
pass "rrg 64 switches of degree 8, seeds 1-3: simple, connected, 8-regular; a seed gives one fabric"

for f in "torus --dims 4,4,4" "rrg --switches 64 --degree 8 --seed 1" "dragonfly --a 4 --p 2 --h 2"; do
	python3 "$SIM_FABGEN" $f --fail-links 3 --fail-seed 5 -o "$SIM_TMP/fail.net" 2>"$SIM_TMP/fail.err" ||
		fail "$f --fail-links 3: $(cat "$SIM_TMP/fail.err")"
	python3 "$SIM_FABGEN" $f -o "$SIM_TMP/whole.net" 2>/dev/null
	shape failed "$SIM_TMP/whole.net" "$SIM_TMP/fail.net" 3 || fail "$f --fail-links 3"
	grep -q 'failed=.*,.*,' "$SIM_TMP/fail.err" || fail "$f: the summary does not name 3 cables: $(cat "$SIM_TMP/fail.err")"
done
python3 "$SIM_FABGEN" mesh --dims 4 --fail-links 1 -o "$SIM_TMP/line.net" 2>"$SIM_TMP/line.err" &&
	fail "a line of 4 lost a cable and stayed connected?"
grep -q "no cable left whose loss keeps" "$SIM_TMP/line.err" || fail "line: $(cat "$SIM_TMP/line.err")"
pass "--fail-links 3 on a torus, an rrg and a Dragonfly: 3 switch cables fewer, nothing else changed, still connected, named; refused on a line"
