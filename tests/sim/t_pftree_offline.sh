#!/bin/bash
# Partition isolation offline (no ibsim; about a second): on the 32- and
# 128-node XGFTs of the pFTree paper's Table 3, `ibsmd --offline
# --verify` prints the links shared between tenant partitions
# (routing/verify/pverify.c).  With three tenants dealt round-robin (host h in
# t<h mod 3>) pftree shares fewer links than ftree; a phy-isolation
# victim of 25% of the hosts spread evenly over the leaves (the paper's
# setting) shares none under pftree.  On a 2-spine tree two phy
# partitions spanning every leaf beside a third tenant cannot be isolated:
# strict exits non-zero naming the first, best-effort exits 0 and warns.
# Two vlane-isolation partitions there get VLs 1 and 2 (and those SLs)
# and share no link on them; with one data VL strict refuses.
. "$(dirname "$0")/common.sh"

# members N EXPR: the hosts H-h, h < N, for which the awk EXPR holds
members() {
	awk -v n="$1" "BEGIN { for (h = 0; h < n; h++) if ($2) printf \"%s\\\"H-%d\\\"\", s++ ? \", \" : \"\", h }"
}

# verify NET YAML ENGINE: ibsmd's output in $SIM_TMP/out, its status
verify() {
	"$IBSMD" --offline "$1" -c "$2" --verify -R "$3" >"$SIM_TMP/out" 2>&1
}

# shared: the links shared between tenants, from the last verify
shared() {
	sed -nE 's/^verify: partitions: [0-9]+ tenants, shared links ([0-9]+) .*/\1/p' "$SIM_TMP/out"
}

for spec in "8 4 4" "16 8 8"; do
	read -r m1 m2 w2 <<<"$spec"
	n=$((m1 * m2))
	net="$SIM_TMP/x$n.net"
	gen ftree2 --radix $((m1 + w2)) --leaves "$m2" --spines "$w2" --hosts-per-leaf "$m1" -o "$net"
	{
		echo "partitions:"
		for p in 0 1 2; do
			echo "  - {name: t$p, pkey: $((p + 1)), members: [$(members "$n" "h % 3 == $p")]}"
		done
	} >"$SIM_TMP/rr$n.yaml"
	verify "$net" "$SIM_TMP/rr$n.yaml" ftree || fail "$n nodes, ftree: $(tail -n 3 "$SIM_TMP/out")"
	f=$(shared)
	verify "$net" "$SIM_TMP/rr$n.yaml" pftree || fail "$n nodes, pftree: $(tail -n 3 "$SIM_TMP/out")"
	p=$(shared)
	[ -n "$f" ] && [ -n "$p" ] || fail "$n nodes: no partition line: $(head -n 5 "$SIM_TMP/out")"
	[ "$p" -lt "$f" ] || fail "$n nodes, 3 tenants round-robin: pftree shares $p links, ftree $f"
	note "$n nodes, 3 tenants round-robin: shared links ftree $f, pftree $p"

	victim="(h % $m1) < $((m1 / 4))"	# the first quarter of each leaf
	cat >"$SIM_TMP/v$n.yaml" <<-YAML
	routing: {isolation_mode: strict}
	partitions:
	  - {name: victim, pkey: 1, policy: phy-isolation, members: [$(members "$n" "$victim")]}
	  - {name: noise, pkey: 2, members: [$(members "$n" "!($victim)")]}
	YAML
	verify "$net" "$SIM_TMP/v$n.yaml" pftree || fail "$n nodes, even phy victim, strict: $(tail -n 4 "$SIM_TMP/out")"
	grep -q '^verify: partition victim (phy-isolation): shares 0 links' "$SIM_TMP/out" ||
		fail "$n nodes: the evenly spread phy victim shares links: $(grep 'partition victim' "$SIM_TMP/out")"
	note "$n nodes: the evenly spread phy victim ($((n / 4)) hosts) shares no link"
done

# Two phy tenants on every leaf and a third: 3 partitions, 2 spines.
net="$SIM_TMP/x16.net"
gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 4 -o "$net"
# tenants POLICY: blue (h % 4 == 0) and red (1) with POLICY, rest the others
tenants() {
	echo "partitions:"
	echo "  - {name: blue, pkey: 1, policy: $1, members: [$(members 16 "h % 4 == 0")]}"
	echo "  - {name: red, pkey: 2, policy: $1, members: [$(members 16 "h % 4 == 1")]}"
	echo "  - {name: rest, pkey: 3, members: [$(members 16 "h % 4 >= 2")]}"
}
for mode in strict best-effort; do
	{ echo "routing: {isolation_mode: $mode}"; tenants phy-isolation; } >"$SIM_TMP/u-$mode.yaml"
done
if verify "$net" "$SIM_TMP/u-strict.yaml" pftree; then
	fail "strict, unsatisfiable phy-isolation: ibsmd exited 0: $(tail -n 3 "$SIM_TMP/out")"
fi
grep -q 'partition blue.*phy-isolation' "$SIM_TMP/out" ||
	fail "strict failure does not name partition blue: $(tail -n 3 "$SIM_TMP/out")"
note "strict: exits non-zero: $(grep -m 1 'partition blue' "$SIM_TMP/out" | sed 's/.*\]: //')"
verify "$net" "$SIM_TMP/u-best-effort.yaml" pftree ||
	fail "best-effort, unsatisfiable phy-isolation: ibsmd failed: $(tail -n 3 "$SIM_TMP/out")"
grep -q '\[warn\].*partition blue.*phy-isolation' "$SIM_TMP/out" ||
	fail "best-effort: no warning naming partition blue: $(head -n 3 "$SIM_TMP/out")"
grep -q '^verify: partition blue (phy-isolation): .*VIOLATED (best-effort: warning)' "$SIM_TMP/out" ||
	fail "best-effort: the verifier does not report blue violated: $(grep 'partition blue' "$SIM_TMP/out")"
grep -q '^verify: OK: 0 errors, 2 warnings' "$SIM_TMP/out" ||
	fail "best-effort: the verify line: $(grep '^verify: [OF]' "$SIM_TMP/out")"
note "best-effort: exits 0, warns, the verifier reports blue and red violated"

# vlane-isolation (routing/qos/pvl.c): under ftree blue and red share every
# link with rest; each gets a VL of its own (1, 2 in policy order) and
# that SL, and shares no link on it.  With one data VL strict refuses.
for vls in 4 1; do
	{
		echo "ports: {max_op_vls: $((vls == 1 ? 1 : 3))}"
		echo "routing: {isolation_mode: strict}"
		tenants vlane-isolation
	} >"$SIM_TMP/vl$vls.yaml"
done
verify "$net" "$SIM_TMP/vl4.yaml" ftree || fail "vlane, 4 data VLs: $(tail -n 3 "$SIM_TMP/out")"
for want in 'qos: partition blue: SL 1' 'qos: partition red: SL 2' 'qos: partition rest: SL 0' \
	    'verify: partition blue (vlane-isolation): VL 1, shares 0 links on its VL (8 in all)' \
	    'verify: partition red (vlane-isolation): VL 2, shares 0 links on its VL (8 in all)'; do
	grep -qF "$want" "$SIM_TMP/out" || fail "vlane: no line '$want': $(grep -E 'partition|qos' "$SIM_TMP/out")"
done
note "vlane: blue on VL 1, red on VL 2 (their SLs), sharing 8 links each but none on their VL"
if verify "$net" "$SIM_TMP/vl1.yaml" ftree; then
	fail "vlane, strict, one data VL: ibsmd exited 0"
fi
grep -q 'partition blue (vlane-isolation) shares links and no data VL is left of 1' "$SIM_TMP/out" ||
	fail "vlane, strict, one data VL: no message naming blue: $(tail -n 3 "$SIM_TMP/out")"
pass "pftree shares fewer links than ftree; an even phy victim shares none; strict refuses an impossible phy partition, best-effort warns; vlane partitions get VLs and SLs of their own"
