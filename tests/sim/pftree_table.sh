#!/bin/bash
# By hand (no ibsim): partition isolation, pftree against ftree, on the
# 2-level XGFTs of the pFTree paper's Table 3 (Section 6.3.3: 32..1024
# nodes, XGFT(2; m1,m2; 1,w2) = fabgen ftree2 --leaves m2 --spines w2
# --hosts-per-leaf m1).  For each size, partition count and seed, every
# host joins one of K partitions drawn at random (seeded; each non-empty;
# def-isolation, best-effort; PHY=1: partition 1 is phy-isolation), and
# `ibsmd --offline F -c P --verify -R ENGINE` runs with ftree and pftree.
# One Markdown row each: the links shared between tenant partitions, the
# max/min routes per switch-to-switch link over all CA-to-CA pairs (the
# route verifier's balance figure) and over the pairs sharing a partition
# (pverify's), then the issue's Done-when verdict: pftree shares fewer
# links (or both none) and its all-pairs max routes per link is within
# 10% of ftree's ("ok"; a partition-pairs max beyond 10% is noted in
# parentheses: pftree gathers a partition's destinations on the same
# up-links by design).  Exit 1 if a row misses the verdict.
#   tests/sim/pftree_table.sh [NODES [PARTS [SEEDS]]]
#   defaults "32 48 64 128 192 256 512 768 1024" "2 4 8" "1 2 3"
SIM_TEST=pftree_table
. "$(dirname "$0")/common.sh"

sizes=${1:-32 48 64 128 192 256 512 768 1024}
parts=${2:-2 4 8}
seeds=${3:-1 2 3}

# policy HOSTS K SEED: the partitions, YAML, on stdout
policy() {
	python3 - "$@" "${PHY:-}" <<'PY'
import random, sys
n, k, seed, phy = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rnd = random.Random(seed * 1000 + k)
while True:
    of = [rnd.randrange(k) for _ in range(n)]
    if len(set(of)) == k:
        break
print("routing: {isolation_mode: best-effort}")
print("partitions:")
for p in range(k):
    pol = "phy-isolation" if phy and p == 0 else "def-isolation"
    mem = ", ".join('"H-%d"' % h for h in range(n) if of[h] == p)
    print("  - {name: p%d, pkey: 0x%04x, policy: %s, members: [%s]}" % (p + 1, p + 1, pol, mem))
PY
}

# run NET YAML ENGINE: "SHARED MAX MIN AMAX AMIN" (partition pairs, then
# all CA pairs: the route verifier's "all" line), or "failed"
run() {
	local out a
	out=$("$IBSMD" --offline "$1" -c "$2" --verify -R "$3" 2>&1)
	a=$(sed -nE 's/^  all +[0-9]+ links: max ([0-9]+), min ([0-9]+),.*/\1 \2/p' <<<"$out")
	sed -nE 's/^verify: partitions: [0-9]+ tenants, shared links ([0-9]+) \(of [0-9]+\), max routes\/link ([0-9]+), min ([0-9]+)$/\1 \2 \3/p' <<<"$out" |
		grep . | sed "s/\$/ $a/" || echo failed
}

# within A B: A <= 1.1 B
within() { [ $(($1 * 10)) -le $(($2 * 11)) ]; }

bad=0
echo "| nodes | XGFT | partitions | seed | shared links ftree | pftree | routes/link, all pairs, max/min ftree | pftree | routes/link, partition pairs, max/min ftree | pftree | verdict |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for n in $sizes; do
	read -r m1 m2 w2 < <(table3 "$n") || fail "no Table 3 row of $n nodes"
	net="$SIM_TMP/x$n.net"
	gen ftree2 --radix $((m1 + w2)) --leaves "$m2" --spines "$w2" --hosts-per-leaf "$m1" -o "$net"
	for k in $parts; do
		for s in $seeds; do
			yaml="$SIM_TMP/p$n.$k.$s.yaml"
			policy "$n" "$k" "$s" >"$yaml" || fail "policy $n $k $s"
			read -r fs fmax fmin famax famin <<<"$(run "$net" "$yaml" ftree)"
			read -r ps pmax pmin pamax pamin <<<"$(run "$net" "$yaml" pftree)"
			if [ "$fs" = failed ] || [ "$ps" = failed ] || [ -z "$pamax" ]; then
				verdict="no figures (ftree $fs, pftree $ps)"
				bad=1
			else
				verdict=
				[ "$ps" -lt "$fs" ] || { [ "$fs" -eq 0 ] && [ "$ps" -eq 0 ]; } ||
					verdict="shares more;"
				within "$pamax" "$famax" || verdict="$verdict all-pairs max +$(( (pamax - famax) * 100 / famax ))%;"
				if [ -n "$verdict" ]; then bad=1; else verdict=ok; fi
				within "$pmax" "$fmax" || verdict="$verdict (partition-pairs max +$(( (pmax - fmax) * 100 / (fmax ? fmax : 1) ))%)"
			fi
			echo "| $n | (2; $m1,$m2; 1,$w2) | $k | $s | $fs | ${ps:-} | ${famax:-}/${famin:-} | ${pamax:-}/${pamin:-} | $fmax/$fmin | ${pmax:-}/${pmin:-} | $verdict |"
		done
	done
done
exit $bad
