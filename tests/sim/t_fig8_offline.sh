#!/bin/bash
# The vSwitch paper's Fig. 8 study, offline (no ibsim; a second or two):
# `ibsmd --offline --migrate-pattern random --population 25` with
# vswitch-ftree on the smallest fabric of the paper's Table 4, the
# 4-ary-2-full XGFT(2;8,4;4,1) of 32 hypervisors with 4 VFs each
# (12 physical switches).  Every migration writes no more switches than
# the worst case allows: ItRC at most the 12, FTreeMinRC at most what it
# marks, and it marks 1 (same leaf) or 6 (two leaves and the 4 roots:
# Table 4's 6/12), which some migration reaches; the summary agrees
# with the lines (2 x 32 migrations, the means, the maxima); a quality
# line at 0% and every 10% (11), none with an unrouted flow, the first
# with the three tables equal.  Refused with exit 2: an unknown
# pattern, a population out of 1..100, --population alone, the pattern
# without --population or --offline, a topology without vSwitches.
. "$(dirname "$0")/common.sh"

# the judges' field reader: v("key") of a "what: key=value ..." line
AWK_V='function v(k,   i) { for (i = 2; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }'

net="$SIM_TMP/x.net"
gen xgft --m 4,8 --w 1,4 --vfs 4 -o "$net"
pol="$SIM_TMP/p.yaml"
printf 'virtualization:\n  lid_scheme: dynamic\n  vswitches: ["V-*"]\nrouting:\n  engine: vswitch-ftree\n' >"$pol"
out="$SIM_TMP/r.out"
"$IBSMD" -c "$pol" -S "$SIM_TMP" --offline "$net" --migrate-pattern random \
	--population 25 --seed 1 >"$out" 2>"$SIM_TMP/r.err" ||
	fail "exit $?: $(tail -n 3 "$SIM_TMP/r.err")"
awk "$AWK_V"'
	/^migration: / { n++; it = v("itrc") + 0; ft = v("ftreeminrc") + 0; mk = v("marked") + 0
		if (it > 12 || ft > mk || (mk != 1 && mk != 6) || v("fallback") != "") { print "bad: " $0; bad = 1 }
		si += it; sf += ft; if (it > mi) mi = it; if (ft > mf) mf = ft; if (mk > mm) mm = mk }
	/^quality: / { q++; if (v("unrouted") != "0") { print "unrouted: " $0; bad = 1 }
		if (q == 1 && (v("ratio") != "1.0000" || v("ftreeminrc") != v("fresh") || v("itrc") != v("fresh"))) { print "first: " $0; bad = 1 } }
	/^migpattern: / { s = $0; sm = v("migrations"); smi = v("itrc_max"); smf = v("ftreeminrc_max")
		sim = v("itrc_mean"); sfm = v("ftreeminrc_mean"); smm = v("marked_max"); sw = v("switches") }
	END {
		if (bad) exit 1
		if (n != 64 || sm != 64 || q != 11 || sw != 12) { print "counts: n=" n " q=" q " " s; exit 1 }
		if (mm != 6 || smm != 6 || mf != smf || mi != smi || mf > 6 || mi > 12) { print "maxima: " mf " " mi " " mm " " s; exit 1 }
		if (sprintf("%.2f", si / n) != sim || sprintf("%.2f", sf / n) != sfm || sf >= si) { print "means: " si / n " " sf / n " " s; exit 1 }
	}' "$out" >"$SIM_TMP/judge" || fail "$(head -n 3 "$SIM_TMP/judge")"
pass "random 25% on 4-ary-2-full: 64 migrations, ItRC <= 12, FTreeMinRC <= marked <= 6 (6 reached), summary and 11 quality lines agree"

# virtualization.rebalance on FTreeMinRC's tables: a consolidation from a
# random placement (half the VFs) on 4-ary-3-full decays FTreeMinRC's
# bisection quality below a fresh routing's; after_migrations 16
# reroutes every 16 moves (8 times), each writing some physical switches,
# the summary counting them, and the quality stays within 1% of fresh,
# ending equal to it.
net3="$SIM_TMP/x3.net"
gen xgft --m 4,4,8 --w 1,4,4 --vfs 4 -o "$net3"
# study NAME PATTERN REBALANCE: --migrate-pattern PATTERN (half the VFs,
# seed 1) on net3 under vswitch-ftree with virtualization.rebalance's
# REBALANCE lines; its lines in $SIM_TMP/NAME.out
study() {
	printf 'virtualization:\n  lid_scheme: dynamic\n  vswitches: ["V-*"]\n  rebalance:\n%srouting:\n  engine: vswitch-ftree\n' \
		"$3" >"$SIM_TMP/$1.yaml"
	"$IBSMD" -c "$SIM_TMP/$1.yaml" -S "$SIM_TMP" --offline "$net3" --migrate-pattern "$2" \
		--population 50 --seed 1 >"$SIM_TMP/$1.out" 2>"$SIM_TMP/$1.err" ||
		fail "$1: exit $?: $(tail -n 3 "$SIM_TMP/$1.err")"
}
for rb in 0 16; do
	study "rb$rb" consolidate "    after_migrations: $rb
"
done
awk "$AWK_V"'
	FNR == 1 { f++ }
	/^quality: / { r = v("ratio") + 0; last[f] = r; if (!seen[f]++ || r < lo[f]) lo[f] = r }
	/^rebalance: / { n[f]++; sw = v("switches") + 0; s[f] += sw; if (sw < 1 || sw > 80) { print "switches: " $0; bad = 1 } }
	/^migpattern: / { rb[f] = v("rebalances"); rs[f] = v("rebalance_switches") }
	END {
		if (bad) exit 1
		if (rb[1] != "0" || n[1] || last[1] >= 0.99) { print "without: " rb[1] " " n[1] " " last[1]; exit 1 }
		if (rb[2] != 8 || n[2] != 8 || rs[2] != s[2]) { print "counts: " rb[2] " " n[2] " " rs[2] " " s[2]; exit 1 }
		if (lo[2] < 0.99 || last[2] != 1) { print "quality: " lo[2] " " last[2]; exit 1 }
		printf "without %.4f at the end; with 8 reroutes (%d switches) at least %.4f, at the end %.4f\n", last[1], s[2], lo[2], last[2]
	}' "$SIM_TMP/rb0.out" "$SIM_TMP/rb16.out" >"$SIM_TMP/judge" || fail "rebalance: $(head -n 3 "$SIM_TMP/judge")"
pass "virtualization.rebalance after a consolidation on 4-ary-3-full: $(cat "$SIM_TMP/judge")"

# virtualization.rebalance.local on the same fabric: the grouping pattern
# (half the VFs), a rebalance after every move to another leaf.  Where
# the leaves the move touched share a pod, only that level-1 sub-tree is
# routed again and it writes no switch but its leaves (at most its
# leaf count), fewer than any whole-fabric rebalance; the others take the
# whole fabric, as local: false does every time.  In all, the local run
# writes fewer switches, to the same bisection quality (within 1%).
for loc in false true; do
	study "loc$loc" grouping "    after_migrations: 1
    local: $loc
"
done
awk "$AWK_V"'
	FNR == 1 { f++ }
	/^quality: / { r = v("ratio") + 0; last[f] = r; if (!seen[f]++ || r < lo[f]) lo[f] = r }
	/^rebalance: / { sc = v("scope"); sw = v("switches") + 0; n[f, sc]++
		if (sc == "local") { if (v("level") != 1 || sw < 1 || sw > v("leaves") + 0) { print "local: " $0; bad = 1 }
			if (sw > ml) ml = sw }
		else if (sw < mw[f] || !mw[f]) mw[f] = sw }
	/^migpattern: / { rb[f] = v("rebalances"); rl[f] = v("rebalances_local"); rs[f] = v("rebalance_switches") }
	END {
		if (bad) exit 1
		if (n[1, "local"] || rl[1] != "0" || n[1, "full"] != rb[1]) { print "without: " rb[1] " " rl[1]; exit 1 }
		if (!n[2, "local"] || rl[2] != n[2, "local"] || n[2, "local"] + n[2, "whole"] != rb[2] || rb[2] != rb[1]) {
			print "counts: " rb[2] " " rl[2] " " n[2, "local"]; exit 1 }
		if (ml >= mw[2] || rs[2] + 0 >= rs[1] + 0) { print "switches: " ml " " mw[2] " " rs[2] " " rs[1]; exit 1 }
		if (lo[2] < lo[1] - 0.01 || last[2] < 0.99) { print "quality: " lo[2] " " lo[1] " " last[2]; exit 1 }
		printf "%d of %d rebalances local (at most %d switches each, a whole one at least %d), %d switches in all against %d; quality at least %.4f (full %.4f)\n",
			n[2, "local"], rb[2], ml, mw[2], rs[2], rs[1], lo[2], lo[1]
	}' "$SIM_TMP/locfalse.out" "$SIM_TMP/loctrue.out" >"$SIM_TMP/judge" || fail "local: $(head -n 3 "$SIM_TMP/judge")"
pass "virtualization.rebalance.local, grouping on 4-ary-3-full: $(cat "$SIM_TMP/judge")"

refuse() {	# WANT ARGS...: exit 2 and WANT on stderr
	local want="$1"; shift
	"$IBSMD" "$@" >"$SIM_TMP/o" 2>&1
	local rc=$?
	[ "$rc" -eq 2 ] && grep -q -- "$want" "$SIM_TMP/o" ||
		fail "$*: exit $rc: $(tail -n 2 "$SIM_TMP/o")"
}
base=(-c "$pol" -S "$SIM_TMP" --offline "$net")
refuse "bad --migrate-pattern 'shuffle'" "${base[@]}" --migrate-pattern shuffle --population 25
refuse "bad --population '0'" "${base[@]}" --migrate-pattern random --population 0
refuse "bad --population '101'" "${base[@]}" --migrate-pattern random --population 101
refuse "go with --migrate-pattern" "${base[@]}" --population 25
refuse "needs --population" "${base[@]}" --migrate-pattern consolidate
refuse "needs --offline" --migrate-pattern grouping --population 25
refuse "no vSwitch" -S "$SIM_TMP" --offline "$net" --migrate-pattern to-uniform --population 25
pass "refused with exit 2: an unknown pattern, population 0 and 101, --population alone, no --population, no --offline, no vSwitch"
