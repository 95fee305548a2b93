#!/bin/bash
# VOQsw in C against VOQsw in Python, beyond what ibsim can carry: on the
# paper's irregular fabrics (fabgen irregular: 8, 16, 32, 64 eight-port
# switches, 4 hosts each, 4-regular switch graph; seeds 1-3), `ibsmd
# --offline -R updn` with `qos: {mode: voqsw, sls: N, max_vls: 8}` dumps
# its topology and LFTs (ibnetdiscover and dump_fts formats); qos_check.py
# computes VOQsw from those dumps alone, and ibsmd's lines must carry its
# figures: x of x_max tuples, paths covered, SLs used (sls 8 and 4), and
# the SLs full VOQ needs.  No ibsim.  By default seeds 1-3 at 8 and 16
# switches, seed 1 at 32 and 64 (the Python is the slow part: make check
# stays short); T_VOQSW_ALL=1: all 12 fabrics (about 15 s more).
. "$(dirname "$0")/common.sh"
QOSCHECK="$SIM_ROOT/tests/sim/qos_check.py"

# one N SEED SLS: ibsmd's "qos: voqsw:" lines hold qos_check.py's parts
one() {
	local f="$SIM_TMP/i.$1.$2" want part line
	printf 'qos: {mode: voqsw, sls: %d, max_vls: 8}\n' "$3" >"$f.yaml"
	"$IBSMD" --offline "$f.net" -R updn -c "$f.yaml" --dump-lfts "$f.lfts" \
		--dump-topology "$f.topo" >"$f.$3.out" 2>&1 || fail "ibsmd --offline $f.net: $(tail -n 3 "$f.$3.out")"
	want=$(python3 "$QOSCHECK" voqsw-report --topo "$f.topo" --voqsw "$f.lfts" \
		--sls "$3" --max-vls 8 ${FULL:+--full}) || fail "qos_check.py voqsw-report $f"
	line=$(grep 'qos: voqsw:' "$f.$3.out" | tr '\n' ' ')
	while IFS= read -r part; do
		[[ $line == *"$part"* ]] || fail "$1 switches, seed $2, sls $3: ibsmd says '$line', qos_check.py '$want'"
	done < <(tr '|' '\n' <<<"$want")
	sed -n 's/.*qos: voqsw: \([0-9]* of [0-9]* tuples\).*\(SLs used [0-9]*\).*/\1 \2/p' "$f.$3.out" | head -n 1
}

rows=0
for n in 8 16 32 64; do
	seeds="1 2 3"
	[ -z "${T_VOQSW_ALL:-}" ] && [ "$n" -gt 16 ] && seeds=1
	for seed in $seeds; do
		gen irregular --switches "$n" --seed "$seed" -o "$SIM_TMP/i.$n.$seed.net"
		a=$(FULL=1 one "$n" "$seed" 8) || exit 1
		b=$(one "$n" "$seed" 4) || exit 1
		full=$(sed -n 's/.*full VOQ needs \([0-9]*\) SLs.*/\1/p' "$SIM_TMP/i.$n.$seed.8.out")
		note "$n switches, seed $seed: full VOQ $full SLs; sls 8: $a; sls 4: $b"
		rows=$((rows + 1))
	done
done
pass "ibsmd's VOQsw figures equal qos_check.py's on $rows irregular fabrics (8-64 switches, updn; sls 8 and 4, full VOQ)"
