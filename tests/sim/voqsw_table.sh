#!/bin/bash
# By hand (no ibsim; a few seconds): VOQsw's coverage on the paper's
# fabrics (the VOQsw paper's Table 1): random irregular networks of 8-port
# switches, 4 hosts each, a 4-regular switch graph (fabgen.py irregular),
# up*/down* routing, 8 VLs.  For each size and seed, ibsmd --offline with
# qos.mode voqsw and 8, then 4 SLs; prints one Markdown row each: the
# tuples (x_max), the SLs full VOQ needs (the paper: 12, 40, 108, 257),
# and what 8 and 4 SLs cover: tuples x/x_max, their share of the path
# weight, and the paths all of whose tuples are considered.
#   tests/sim/voqsw_table.sh [SIZES [SEEDS]]   (default "8 16 32 64" "1 2 3")
SIM_TEST=voqsw_table
. "$(dirname "$0")/common.sh"

sizes=${1:-8 16 32 64}
seeds=${2:-1 2 3}

# run NET SLS: the two qos lines of ibsmd --offline, on stdout
run() {
	printf 'qos: {mode: voqsw, sls: %d}\n' "$2" >"$SIM_TMP/p$2.yaml"
	"$IBSMD" --offline "$1" -R updn -c "$SIM_TMP/p$2.yaml" 2>"$SIM_TMP/err" |
		grep '^qos: voqsw: ' || fail "ibsmd --offline $1: $(tail -n 2 "$SIM_TMP/err")"
}

# cover LINE: "x/xmax (t%) / w% / c%" from "qos: voqsw: X of Y tuples, weight W%, paths covered C of P (C%), ..."
cover() {
	sed -E 's/^qos: voqsw: ([0-9]+) of ([0-9]+) tuples, weight ([0-9.]+)%, paths covered [0-9]+ of [0-9]+ \(([0-9.]+)%\).*/\1 \2 \3 \4/' <<<"$1" |
		awk '{ printf "%d/%d (%.1f%%) / %s%% / %s%%", $1, $2, $2 ? 100 * $1 / $2 : 100, $3, $4 }'
}

echo "| switches | hosts | seed | tuples | SLs for full VOQ | 8 SLs: tuples / weight / paths | 4 SLs: tuples / weight / paths |"
echo "|---|---|---|---|---|---|---|"
for n in $sizes; do
	for s in $seeds; do
		net="$SIM_TMP/irr-$n-$s.net"
		python3 "$SIM_ROOT/tests/gen/fabgen.py" irregular --switches "$n" --seed "$s" -o "$net" 2>/dev/null ||
			fail "fabgen irregular --switches $n --seed $s"
		out8=$(run "$net" 8) || exit 1
		out4=$(run "$net" 4) || exit 1
		line8=$(grep -v 'full VOQ' <<<"$out8")
		full=$(sed -nE 's/^qos: voqsw: full VOQ needs ([0-9]+) SLs$/\1/p' <<<"$out8")
		tuples=$(sed -E 's/^qos: voqsw: [0-9]+ of ([0-9]+) tuples.*/\1/' <<<"$line8")
		[ -n "$full" ] && [ -n "$tuples" ] || fail "unexpected output: $out8"
		echo "| $n | $((4 * n)) | $s | $tuples | $full | $(cover "$line8") | $(cover "$(grep -v 'full VOQ' <<<"$out4")") |"
	done
done
