#!/bin/bash
# By hand (no ibsim): pFTree against pFTree-Wt on the 2-level XGFTs of the
# pFTree paper's Table 3 (32..1024 nodes, XGFT(2; m1,m2; 1,w2) = fabgen
# xgft --m m1,m2 --w 1,w2), the paper's Section 7.1 setting: a victim
# partition of a quarter of the hosts, spread evenly over the leaves (m1/4
# a leaf, drawn at random within each leaf, seeded), every other host in
# one interfering partition (both def-isolation); for every R from 1 to
# m1/4, R receivers drawn on each leaf among the victim's hosts
# (`--receivers random:R,victim --seed S`) and `ibsmd --offline --verify`
# run three times: -R pftree with --receiver-weight 1 (pFTree: the routing
# unweighted) and 100 (pFTree-Wt: receivers 100, the others 1), and -R
# ftree (partition-oblivious, weights ignored) as a reference.
# One Markdown row a size and routing: over the runs (R x seeds) the
# total contention down and up and the contended links (mean, max), the
# interference ((flow, link) occurrences, and flows interfered) and the
# victim's exposure (routes crossing a link where its flows meet another
# route; contention.h), means.
# Exit 1 unless pFTree-Wt's down contention is 0 in every run.
#   tests/sim/pftree_wt_table.sh [NODES [SEEDS]]
#   defaults "32 48 64 128 192 256 512 768 1024" "1 2 3"
# RAW=FILE: one line a run ("nodes seed R routing down links up links
# interference interfered exposure", routing ftree, pFTree or pFTree-Wt)
# appended to FILE.
SIM_TEST=pftree_wt_table
. "$(dirname "$0")/common.sh"

sizes=${1:-32 48 64 128 192 256 512 768 1024}
seeds=${2:-1 2 3}

# policy M1 M2 SEED: victim (m1/4 hosts a leaf) and noise, YAML on stdout
policy() {
	python3 - "$@" <<'PY'
import random, sys
m1, m2, seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(seed)
victim = set()
for leaf in range(m2):
    victim.update(rnd.sample(range(leaf * m1, (leaf + 1) * m1), m1 // 4))
def names(hosts):
    return ", ".join('"H-%d"' % h for h in sorted(hosts))
print("partitions:")
print("  - {name: victim, pkey: 0x0001, members: [%s]}" % names(victim))
print("  - {name: noise, pkey: 0x0002, members: [%s]}" %
      names(h for h in range(m1 * m2) if h not in victim))
PY
}

# the routings: "NAME ENGINE WEIGHT"
routings="ftree ftree 1
pFTree pftree 1
pFTree-Wt pftree 100"

# run NET YAML R SEED ENGINE WEIGHT: "DOWN DLINKS UP ULINKS INTERF FLOWS
# EXPOSURE" or "failed"
run() {
	local out
	out=$("$IBSMD" --offline "$1" -c "$2" -R "$5" --verify \
		--receivers "random:$3,victim" --seed "$4" --receiver-weight "$6" 2>&1)
	sed -nE 's/^verify: contention: up ([0-9]+) on ([0-9]+) of [0-9]+ links \(max [0-9]+\), down ([0-9]+) on ([0-9]+) of .*/\3 \4 \1 \2/p' <<<"$out" |
		tr '\n' ' '
	sed -nE 's/^verify: interference: ([0-9]+) \(flow, link\) occurrences on [0-9]+ shared links; ([0-9]+) of .*/\1 \2/p' <<<"$out" |
		tr '\n' ' '
	sed -nE 's/^verify: exposure: partition victim: ([0-9]+) routes .*/\1/p' <<<"$out" |
		grep . || echo failed
}

bad=0
echo "| nodes | XGFT | routing | runs | down contention mean / max | down contended links mean / max | up contention mean | up contended links mean | interference (flow, link) mean | flows interfered mean | victim exposure mean |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for n in $sizes; do
	read -r m1 m2 w2 < <(table3 "$n") || fail "no Table 3 row of $n nodes"
	net="$SIM_TMP/x$n.net"
	gen xgft --m "$m1,$m2" --w "1,$w2" -o "$net"
	rows="$SIM_TMP/rows$n"
	: >"$rows"
	for s in $seeds; do
		yaml="$SIM_TMP/v$n.$s.yaml"
		policy "$m1" "$m2" "$s" >"$yaml" || fail "policy $n $s"
		for ((r = 1; r <= m1 / 4; r++)); do
			while read -r name engine w; do
				res=$(run "$net" "$yaml" "$r" "$s" "$engine" "$w")
				[ "$res" != failed ] && [ "$(wc -w <<<"$res")" -eq 7 ] ||
					fail "$n nodes, seed $s, R $r, $name: no figures"
				echo "$n $s $r $name $res" >>"$rows"
			done <<<"$routings"
		done
	done
	[ -z "${RAW:-}" ] || cat "$rows" >>"$RAW"
	while read -r name engine w; do
		awk -v n="$n" -v x="(2; $m1,$m2; 1,$w2)" -v name="$name" '
			$4 == name { k++; d += $5; if ($5 > dm) dm = $5; dl += $6; if ($6 > dlm) dlm = $6
				  u += $7; ul += $8; i += $9; fl += $10; e += $11 }
			END { printf "| %s | %s | %s | %d | %.2f / %d | %.2f / %d | %.2f | %.2f | %.1f | %.1f | %.1f |\n",
				n, x, name, k, d / k, dm, dl / k, dlm, u / k, ul / k, i / k, fl / k, e / k }' "$rows"
	done <<<"$routings"
	awk '$4 == "pFTree-Wt" && $5 != 0 { exit 1 }' "$rows" || {
		echo "$n nodes: pFTree-Wt's down contention is not 0 in every run" >&2
		bad=1
	}
done
exit $bad
